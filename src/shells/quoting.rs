//! The shell's characters and quotes: which characters are syntax, and how each shell
//! reads the quoting forms where shells differ. Every reader of shell text takes them
//! from here: the deny-rule scanner ([`crate::policy::scan`]), the plain-word reader
//! ([`super::words`], behind the read-only preset, compound mode and the agents'
//! wrappers) and the allow rules' character check ([`crate::policy::first_shell_char`]).
//!
//! The differences were measured with `printf '<%s>\n' …` against bash 5.2, dash 0.5.12,
//! busybox 1.35 sh and zsh 5.9 (the differential tests in `tests/deny_oracle.rs` run them
//! again): `$'…'` is an ANSI-C string in bash, zsh and busybox sh, but `$` then a quote
//! in dash; `$"…"` is a translated string (`"…"`) in bash only, `$` then a quote in the
//! others; `&>` redirects both streams in bash, zsh and busybox sh, and is `&` then `>`
//! in dash.

/// Characters that make a command more than one plain program invocation: separators,
/// pipes, redirections, substitutions, grouping, escapes and the newline. A command with
/// one of them never matches an allow rule.
pub const SHELL_CHARS: [char; 13] = [
    ';', '&', '|', '<', '>', '$', '`', '(', ')', '{', '}', '\\', '\n',
];

/// The blanks a shell skips between words (a newline ends a command instead).
pub fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// The unquoted characters that end a word and are syntax themselves: operators,
/// redirections, subshells and the newline.
pub fn is_metachar(c: char) -> bool {
    matches!(c, ';' | '&' | '|' | '<' | '>' | '(' | ')' | '\n')
}

/// The characters that make an unquoted word a glob pattern in every shell.
pub const GLOB_CHARS: [char; 3] = ['*', '?', '['];

/// Inside double quotes, whether a backslash before `next` is removed (it quotes `$`,
/// `` ` ``, `"`, `\` and a newline; before anything else it is an ordinary character).
pub fn escapes_in_double_quotes(next: char) -> bool {
    matches!(next, '$' | '`' | '"' | '\\' | '\n')
}

/// How one shell reads the quoting forms where shells differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quoting {
    /// `$'…'` is an ANSI-C string with backslash escapes (bash, zsh, busybox sh); to
    /// dash it is a plain `$`, then an ordinary single quote.
    pub ansi_c: bool,
    /// `$"…"` is a translated string, read as `"…"` (bash); to dash, zsh and busybox sh
    /// it is a plain `$`, then a double quote.
    pub locale: bool,
    /// `&>` redirects both streams (bash, zsh, busybox sh); to dash it is `&` (the
    /// command before runs in the background), then a `>` redirection.
    pub amp_redirect: bool,
    /// `\'` and `\\` are escapes inside single quotes (fish).
    pub single_escapes: bool,
}

impl Quoting {
    /// bash (also as `sh` or `rbash`).
    pub const BASH: Quoting = Quoting {
        ansi_c: true,
        locale: true,
        amp_redirect: true,
        single_escapes: false,
    };
    /// dash: none of bash's additions.
    pub const DASH: Quoting = Quoting {
        ansi_c: false,
        locale: false,
        amp_redirect: false,
        single_escapes: false,
    };
    /// busybox sh (ash) and zsh: `$'…'` and `&>`, but no `$"…"`.
    pub const BUSYBOX: Quoting = Quoting {
        ansi_c: true,
        locale: false,
        amp_redirect: true,
        single_escapes: false,
    };
    /// fish's single quotes, otherwise read as bash reads (fish's other syntax is not
    /// bash's either, but reading it as bash finds its commands).
    pub const FISH: Quoting = Quoting {
        single_escapes: true,
        ..Quoting::BASH
    };

    /// Whether `text` holds a form that this reading and `other` read differently, so
    /// that reading it both ways can find something more.
    pub fn differs_in(self, other: Quoting, text: &str) -> bool {
        (self.ansi_c != other.ansi_c && text.contains("$'"))
            || (self.locale != other.locale && text.contains("$\""))
            || (self.amp_redirect != other.amp_redirect && text.contains("&>"))
            || (self.single_escapes != other.single_escapes && text.contains('\\'))
    }
}

/// Every reading a text handed to a shell gate cannot name needs (gate's own `-c`
/// string, whose real shell may be bash or dash; `su -c`, `watch`, `flock -c`): bash's
/// first, then the others, taken where the text holds a form they read differently.
pub const ANY_SHELL: &[Quoting] = &[Quoting::BASH, Quoting::DASH, Quoting::BUSYBOX];

/// The body of a single-quoted string that starts at `chars[start]` (after the opening
/// quote): each character, in turn, to `push`; returns the index of the closing quote
/// (or the end). With [`Quoting::single_escapes`], `\'` and `\\` stand for `'` and `\`.
pub fn single_quoted(
    chars: &[char],
    start: usize,
    quoting: Quoting,
    mut push: impl FnMut(char),
) -> usize {
    let mut j = start;
    while j < chars.len() && chars[j] != '\'' {
        if quoting.single_escapes
            && chars[j] == '\\'
            && matches!(chars.get(j + 1), Some('\'' | '\\'))
        {
            j += 1;
        }
        push(chars[j]);
        j += 1;
    }
    j
}

/// Decode the body of `$'…'` starting at `start` (after the opening quote); returns the
/// text and the index of the closing quote (or the end). Like bash, `\NNN` and `\xHH`
/// are bytes (an octal value past 255 keeps its low 8 bits: `\562` is `r`), and the
/// bytes are then read as UTF-8.
pub fn ansi_c_string(chars: &[char], start: usize) -> (String, usize) {
    let mut bytes: Vec<u8> = Vec::new();
    let push_char = |bytes: &mut Vec<u8>, c: char| {
        let mut buf = [0u8; 4];
        bytes.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    };
    let mut i = start;
    while i < chars.len() && chars[i] != '\'' {
        if chars[i] == '\\' && i + 1 < chars.len() {
            i += 1;
            let simple = match chars[i] {
                'n' => Some(b'\n'),
                't' => Some(b'\t'),
                'r' => Some(b'\r'),
                'a' => Some(0x07),
                'b' => Some(0x08),
                'e' | 'E' => Some(0x1b),
                'f' => Some(0x0c),
                'v' => Some(0x0b),
                _ => None,
            };
            if let Some(b) = simple {
                bytes.push(b);
                i += 1;
                continue;
            }
            match chars[i] {
                'x' => {
                    let (value, used) = digits(chars, i + 1, 2, 16);
                    match value {
                        Some(v) => bytes.push(v as u8),
                        None => bytes.extend_from_slice(b"\\x"),
                    }
                    i += 1 + used;
                }
                'u' | 'U' => {
                    let max = if chars[i] == 'u' { 4 } else { 8 };
                    let (value, used) = digits(chars, i + 1, max, 16);
                    match value.and_then(char::from_u32) {
                        Some(c) => push_char(&mut bytes, c),
                        None => push_char(&mut bytes, '\u{fffd}'),
                    }
                    i += 1 + used;
                }
                '0'..='7' => {
                    let (value, used) = digits(chars, i, 3, 8);
                    bytes.push((value.unwrap_or(0) & 0xff) as u8);
                    i += used;
                }
                'c' if i + 1 < chars.len() => {
                    // `\cX`: a control character.
                    bytes.push((chars[i + 1] as u32 & 0x1f) as u8);
                    i += 2;
                }
                other => {
                    push_char(&mut bytes, other);
                    i += 1;
                }
            }
            continue;
        }
        push_char(&mut bytes, chars[i]);
        i += 1;
    }
    (String::from_utf8_lossy(&bytes).into_owned(), i)
}

/// Up to `max` digits in `radix` from `chars[start]`: their value and how many.
fn digits(chars: &[char], start: usize, max: usize, radix: u32) -> (Option<u32>, usize) {
    let digits: String = chars[start.min(chars.len())..]
        .iter()
        .take(max)
        .take_while(|c| c.is_digit(radix))
        .collect();
    (u32::from_str_radix(&digits, radix).ok(), digits.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    #[test]
    fn an_ansi_c_string_decodes_as_bash_decodes_it() {
        for (body, want) in [
            ("\\x72m'", "rm"),
            ("\\162\\155'", "rm"),
            ("\\562m'", "rm"),
            ("\\u0072m'", "rm"),
            ("a\\'b'", "a'b"),
            ("\\cA'", "\u{1}"),
            ("\\xZ'", "\\xZ"),
        ] {
            let (text, end) = ansi_c_string(&chars(body), 0);
            assert_eq!(text, want, "{body}");
            assert_eq!(chars(body)[end], '\'', "{body}");
        }
    }

    #[test]
    fn only_fish_reads_escapes_inside_single_quotes() {
        let body = chars("a\\'b' rest");
        let mut bash = String::new();
        let end = single_quoted(&body, 0, Quoting::BASH, |c| bash.push(c));
        assert_eq!((bash.as_str(), end), ("a\\", 2));
        let mut fish = String::new();
        let end = single_quoted(&body, 0, Quoting::FISH, |c| fish.push(c));
        assert_eq!((fish.as_str(), end), ("a'b", 4));
    }

    #[test]
    fn a_second_reading_is_taken_only_where_the_text_differs_for_it() {
        let dash = Quoting::DASH;
        assert!(dash.differs_in(Quoting::BASH, "echo $'x'"));
        assert!(dash.differs_in(Quoting::BASH, "echo $\"x\""));
        assert!(dash.differs_in(Quoting::BASH, "ls &> f"));
        assert!(!dash.differs_in(Quoting::BASH, "echo '$x' \"y\" & > f"));
        assert!(Quoting::BUSYBOX.differs_in(Quoting::BASH, "echo $\"x\""));
        assert!(!Quoting::BUSYBOX.differs_in(Quoting::BASH, "echo $'x' &> f"));
        assert!(Quoting::FISH.differs_in(Quoting::BASH, "echo 'a\\'"));
    }
}
