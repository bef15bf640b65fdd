//! The plain-word reader: one word of shell text, its quotes removed as the shell removes
//! them, with which characters were quoted. It reads what every shell agrees on within a
//! word (single and double quotes, backslashes, `$'…'` and `$"…"` where the reading has
//! them: [`Quoting`]) and stops where a word ends (an unquoted blank or metacharacter) or
//! where its value is known only when the shell runs (`$NAME`, `$(…)`, `` `…` ``).
//!
//! The read-only preset, compound mode and the agents' wrappers read their words with
//! it; the deny-rule scanner ([`crate::policy::scan`]), which must also read what this
//! reader stops at, reads quotes with the same functions ([`super::quoting`]). The
//! differential tests in `tests/deny_oracle.rs` compare it with bash, dash and busybox
//! sh.

use super::quoting::{self, Quoting, escapes_in_double_quotes, is_blank, is_metachar};

/// One word, after quote removal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// Where the word is written: `text[start..end]`.
    pub start: usize,
    pub end: usize,
    /// The word's value, quotes removed.
    pub value: String,
    /// For each character of [`Word::value`], whether it was quoted (by a quote or a
    /// backslash): a quoted `*` is no pattern, a quoted `#` starts no comment.
    pub quoted: Vec<bool>,
}

/// Why the reader stopped inside a word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unread {
    /// A quote is not closed by the end of the text.
    OpenQuote,
    /// An expansion or a substitution starts at this byte (`$NAME`, `${…}`, `$(…)`,
    /// `` `…` ``): the word's value is known only when the shell runs.
    Expansion(usize),
}

/// Read the word that starts at byte `start` of `text` (not a blank): the word, and why
/// the reader stopped inside it, if it did (then the word holds what was read before).
/// Without a stop, the word ends at an unquoted blank, metacharacter
/// ([`quoting::is_metachar`]) or the end of the text.
pub fn read_word(text: &str, start: usize, quoting: Quoting) -> (Word, Option<Unread>) {
    let mut value = String::new();
    let mut quoted = Vec::new();
    let (end, stop) = read(text, start, quoting, &mut |c, q| {
        value.push(c);
        quoted.push(q);
    });
    let word = Word {
        start,
        end,
        value,
        quoted,
    };
    (word, stop)
}

/// Where the word that starts at byte `start` ends, as [`read_word`] reads it, without
/// building its value.
pub fn word_end(text: &str, start: usize, quoting: Quoting) -> Result<usize, Unread> {
    match read(text, start, quoting, &mut |_, _| {}) {
        (end, None) => Ok(end),
        (_, Some(stop)) => Err(stop),
    }
}

/// The value of `text` when it is exactly one word: `None` when it holds more than one,
/// none, or anything the reader stops at.
pub fn one_word(text: &str, quoting: Quoting) -> Option<String> {
    let mut value = String::with_capacity(text.len());
    let (end, stop) = read(text, 0, quoting, &mut |c, _| value.push(c));
    (stop.is_none() && end == text.len() && !text.is_empty()).then_some(value)
}

/// Whether a `$` followed by `next` starts an expansion (a name, a special parameter,
/// `${`, `$(`); any other `$` is an ordinary character.
pub fn starts_expansion(next: Option<char>) -> bool {
    matches!(next, Some(c) if c == '_' || c.is_ascii_alphanumeric() || "{(@*#?-$!".contains(c))
}

fn read(
    text: &str,
    start: usize,
    quoting: Quoting,
    push: &mut impl FnMut(char, bool),
) -> (usize, Option<Unread>) {
    let next_char = |i: usize| text.get(i..).and_then(|rest| rest.chars().next());
    let mut i = start;
    let mut in_double = false;
    while let Some(c) = next_char(i) {
        let after = i + c.len_utf8();
        if in_double {
            match c {
                '"' => in_double = false,
                '\\' => match next_char(after) {
                    Some(n) if escapes_in_double_quotes(n) => {
                        if n != '\n' {
                            push(n, true);
                        }
                        i = after + n.len_utf8();
                        continue;
                    }
                    _ => push('\\', true),
                },
                '$' if starts_expansion(next_char(after)) => {
                    return (i, Some(Unread::Expansion(i)));
                }
                '`' => return (i, Some(Unread::Expansion(i))),
                _ => push(c, true),
            }
            i = after;
            continue;
        }
        match c {
            c if is_blank(c) || is_metachar(c) => return (i, None),
            '\'' => {
                let Some(end) = single_quote_end(text, after, quoting, push) else {
                    return (text.len(), Some(Unread::OpenQuote));
                };
                i = end + 1;
                continue;
            }
            '"' => in_double = true,
            '\\' => match next_char(after) {
                // A line continuation: both go.
                Some('\n') => {
                    i = after + 1;
                    continue;
                }
                Some(n) => {
                    push(n, true);
                    i = after + n.len_utf8();
                    continue;
                }
                // A backslash at the very end stays itself.
                None => push('\\', true),
            },
            '$' => match next_char(after) {
                Some('\'') if quoting.ansi_c => {
                    let chars: Vec<char> = text[after + 1..].chars().collect();
                    let (decoded, close) = quoting::ansi_c_string(&chars, 0);
                    if close >= chars.len() {
                        return (text.len(), Some(Unread::OpenQuote));
                    }
                    for d in decoded.chars() {
                        push(d, true);
                    }
                    let body: usize = chars[..close].iter().map(|c| c.len_utf8()).sum();
                    i = after + 1 + body + 1;
                    continue;
                }
                Some('"') if quoting.locale => {
                    in_double = true;
                    i = after + 1;
                    continue;
                }
                n if starts_expansion(n) => return (i, Some(Unread::Expansion(i))),
                _ => push('$', false),
            },
            '`' => return (i, Some(Unread::Expansion(i))),
            _ => push(c, false),
        }
        i = after;
    }
    if in_double {
        return (text.len(), Some(Unread::OpenQuote));
    }
    (i, None)
}

/// The byte of the quote that closes a single-quoted string whose body starts at byte
/// `body`, its characters pushed as quoted; `None` when it is not closed.
fn single_quote_end(
    text: &str,
    body: usize,
    quoting: Quoting,
    push: &mut impl FnMut(char, bool),
) -> Option<usize> {
    let rest = &text[body..];
    if !quoting.single_escapes {
        let close = rest.find('\'');
        for c in rest[..close.unwrap_or(rest.len())].chars() {
            push(c, true);
        }
        return close.map(|at| body + at);
    }
    let chars: Vec<char> = rest.chars().collect();
    let close = quoting::single_quoted(&chars, 0, quoting, |c| push(c, true));
    (close < chars.len()).then(|| body + chars[..close].iter().map(|c| c.len_utf8()).sum::<usize>())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(text: &str, quoting: Quoting) -> Option<String> {
        one_word(text, quoting)
    }

    #[test]
    fn quotes_and_backslashes_are_removed_as_the_shell_removes_them() {
        for (text, want) in [
            ("plain", "plain"),
            ("'a b'", "a b"),
            ("\"a b\"", "a b"),
            ("a'b'\"c\"d", "abcd"),
            ("'a'\"'\"'b'", "a'b"),
            ("a\\ b", "a b"),
            ("\"a\\\"b\\\\c\\d\"", "a\"b\\c\\d"),
            ("\"a\\$b\"", "a$b"),
            ("a\\\nb", "ab"),
            ("\"a\\\nb\"", "ab"),
            ("$'\\x72m'", "rm"),
            ("$\"x\"", "x"),
            ("a$", "a$"),
            ("\"a$\"", "a$"),
            ("''", ""),
            ("é'ü'", "éü"),
            ("a\\", "a\\"),
        ] {
            assert_eq!(
                value(text, Quoting::BASH).as_deref(),
                Some(want),
                "{text:?}"
            );
        }
    }

    #[test]
    fn dash_reads_dollar_quotes_as_a_dollar_and_a_quote() {
        assert_eq!(
            value("$'\\x72m'", Quoting::DASH).as_deref(),
            Some("$\\x72m")
        );
        assert_eq!(value("$\"x\"", Quoting::DASH).as_deref(), Some("$x"));
        assert_eq!(value("$\"x\"", Quoting::BUSYBOX).as_deref(), Some("$x"));
        assert_eq!(value("$'\\x72m'", Quoting::BUSYBOX).as_deref(), Some("rm"));
    }

    #[test]
    fn a_word_ends_at_a_blank_or_a_metacharacter_outside_quotes() {
        for (text, end) in [
            ("ab cd", 2),
            ("ab\tcd", 2),
            ("ab;cd", 2),
            ("ab&&cd", 2),
            ("ab|cd", 2),
            ("ab>f", 2),
            ("ab(", 2),
            ("ab\ncd", 2),
            ("'a b';", 5),
            ("\"a;b\" c", 5),
            ("a\\ b c", 4),
        ] {
            assert_eq!(word_end(text, 0, Quoting::BASH), Ok(end), "{text:?}");
        }
    }

    #[test]
    fn the_reader_stops_at_an_open_quote_and_at_an_expansion() {
        assert_eq!(word_end("'ab", 0, Quoting::BASH), Err(Unread::OpenQuote));
        assert_eq!(word_end("\"ab", 0, Quoting::BASH), Err(Unread::OpenQuote));
        assert_eq!(word_end("$'ab", 0, Quoting::BASH), Err(Unread::OpenQuote));
        assert_eq!(word_end("a$X", 0, Quoting::BASH), Err(Unread::Expansion(1)));
        assert_eq!(
            word_end("\"a${X}\"", 0, Quoting::BASH),
            Err(Unread::Expansion(2))
        );
        assert_eq!(
            word_end("a`x`", 0, Quoting::BASH),
            Err(Unread::Expansion(1))
        );
        assert_eq!(
            word_end("$(x)", 0, Quoting::BASH),
            Err(Unread::Expansion(0))
        );
        let (word, stop) = read_word("ab'cd", 0, Quoting::BASH);
        assert_eq!(
            (word.value.as_str(), stop),
            ("abcd", Some(Unread::OpenQuote))
        );
    }

    #[test]
    fn each_character_says_whether_it_was_quoted() {
        let (word, _) = read_word("a'*'\\?[", 0, Quoting::BASH);
        assert_eq!(word.value, "a*?[");
        assert_eq!(word.quoted, [false, true, true, false]);
    }

    #[test]
    fn fish_single_quotes_have_escapes() {
        assert_eq!(value("'a\\'b'", Quoting::FISH).as_deref(), Some("a'b"));
        assert_eq!(word_end("'a\\'b' c", 0, Quoting::FISH), Ok(6));
        assert_eq!(
            word_end("'a\\'b' c", 0, Quoting::BASH),
            Err(Unread::OpenQuote)
        );
        assert_eq!(value("'a\\'", Quoting::BASH).as_deref(), Some("a\\"));
    }
}
