//! Compound mode (opt-in): `a && b`, `a || b`, `a; b` and `a | b` run unasked when every
//! simple command in them is allowed on its own.
//!
//! [`split`] is the whole interface: it returns the simple commands of a command that
//! is nothing but plain simple commands joined by those four operators, each as the exact
//! source text the caller then judges as if it had come alone (allow rules with the
//! usual strict matching, the read-only preset, remembered approvals), and `None` for
//! anything else, so that the caller asks.
//!
//! Three checks must all pass, and any of them can refuse:
//!
//! 1. **gate's own scan** (`scan`), with the shell's word reader
//!    ([`crate::shells::words`]). It reads a deliberately tiny language: words made
//!    of characters that are not shell characters (quotes allowed, and `~`, globs, `=`,
//!    `#` inside a word), separated by spaces and tabs, joined by exactly one of the four
//!    operators. It refuses every other shell character wherever it is (`$`, `` ` ``,
//!    `(`, `)`, `{`, `}`, `<`, `>`, `\`, newline, control characters), a lone or doubled
//!    operator (`&`, `&&&`, `;;`, `|&`, `| |`), an empty part, a comment (`#` starting a
//!    word), an open quote, a reserved word (or `!`, `[[`, `time`, `coproc`) where a
//!    command name goes, and a `NAME=value` prefix. Without `\`, `$` and `` ` ``, both
//!    kinds of quote simply run to the next quote of the same kind, so the scan is exact
//!    for this language.
//! 2. **each part on its own**: it contains no shell character at all, not even inside
//!    quotes ([`first_unmatchable_char`], the allow rules' own check), and the text
//!    around and between the parts is blanks and exactly one operator each. So
//!    `echo 'a && b'` is refused here and asked about, as in strict mode.
//! 3. **a real shell parser**, the `brush-parser` crate in bash mode, reads the command's
//!    grammar skeleton (see `parser_agrees`) and must find exactly the scan's simple
//!    commands, command words and operators, and nothing else: no assignment prefix,
//!    redirection, negation, `time`, background `&`, compound command, function or
//!    `[[ ]]`. The tests check that the parser, given the whole text, reads every split
//!    the same way.
//!
//! A reader that sees something differently from bash can therefore only make gate ask
//! more often, never run more.
//!
//! Newline is not a separator here, on purpose: bash reads a `-c` string line by line,
//! so `alias`, `shopt -s expand_aliases` or `shopt -s extglob` on one line change how the
//! next line is *parsed*; on one line, the whole line is parsed before any of it runs.
//!
//! [`first_unmatchable_char`]: super::first_unmatchable_char

use brush_parser::ast;

use super::first_unmatchable_char;

/// One of the four operators compound mode accepts between simple commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operator {
    /// `&&`: run the next command if this one succeeded.
    And,
    /// `||`: run the next command if this one failed.
    Or,
    /// `;`: run the next command afterwards.
    Sequence,
    /// `|`: run both, this one's output into the next one's input.
    Pipe,
}

impl Operator {
    /// Every operator, in no particular order.
    pub const ALL: [Operator; 4] = [
        Operator::And,
        Operator::Or,
        Operator::Sequence,
        Operator::Pipe,
    ];

    /// The operator as written.
    pub fn as_str(self) -> &'static str {
        match self {
            Operator::And => "&&",
            Operator::Or => "||",
            Operator::Sequence => ";",
            Operator::Pipe => "|",
        }
    }
}

pub use crate::shells::RESERVED_WORDS;

/// The simple commands of `command`, when it is nothing but simple commands of plain
/// words joined by `&&`, `||`, `;` and `|`; `None` for anything else.
///
/// Each part is a slice of `command`: the exact source text of one simple command,
/// without the spaces and tabs around it, to be judged as if it had come alone (allow
/// rules with their usual matching, the read-only preset, remembered approvals). A
/// command without any operator is one part. The parts are in source order.
///
/// `None` means "ask": substitution, redirection, subshells, `{ }`, background `&`,
/// `|&`, `VAR=value` prefixes, heredocs, brace or arithmetic expansion, `$VAR`, escapes,
/// `!`, comments, reserved words (`if`, `while`, `for`, `case`, `function`, `time`,
/// `coproc`, `[[`…), newlines and other control characters, an empty part (`a;;b`,
/// `a && `), a doubled or unknown operator (`a &&& b`, `a | | b`), a shell character
/// inside quotes (`echo 'a && b'`), more than [`MAX_PARTS`] simple commands, and
/// anything the shell parser rejects or reads differently from gate's own scan.
///
/// Quotes, globs (`*`, `?`, `[…]`), `~` and a `#` inside a word are accepted, because
/// each part is then judged exactly as the same text would be on its own, and they mean
/// the same thing there.
pub fn split(command: &str) -> Option<Vec<&str>> {
    let scanned = scan(command)?;
    for part in &scanned.parts {
        if first_unmatchable_char(part.text).is_some() {
            return None;
        }
    }
    if !operators_are_exact(command, &scanned) {
        return None;
    }
    if !parser_agrees(&scanned) {
        return None;
    }
    Some(scanned.parts.into_iter().map(|p| p.text).collect())
}

/// The most simple commands a compound command may hold; one with more asks. Real
/// commands chain far fewer, and the bound keeps the parser's work, about 1 µs a part,
/// within what compound mode may add to a decision (docs/compound.md).
pub const MAX_PARTS: usize = 16;

/// A command read by gate's own scan: its simple commands, and the operator after each
/// but the last.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Scanned<'a> {
    parts: Vec<Part<'a>>,
    operators: Vec<Operator>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Part<'a> {
    /// The part's source text, trimmed of spaces and tabs.
    text: &'a str,
    /// Where `text` starts in the command.
    start: usize,
    /// Its first word, the command name, as written (quotes kept).
    name: &'a str,
}

impl Part<'_> {
    fn end(&self) -> usize {
        self.start + self.text.len()
    }
}

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

fn is_operator_byte(b: u8) -> bool {
    matches!(b, b';' | b'&' | b'|')
}

/// Bytes the scan refuses wherever they are, quoted or not: every ASCII character that
/// keeps a command from matching an allow rule (the shell characters, and control
/// characters other than tab), except the operators' own `;`, `&` and `|`.
const REFUSED_BYTE: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x80 {
        table[b] = (b < 0x20 && b != b'\t' as usize) || b == 0x7f;
        b += 1;
    }
    let mut i = 0;
    while i < super::SHELL_CHARS.len() {
        table[super::SHELL_CHARS[i] as usize] = true;
        i += 1;
    }
    table[b';' as usize] = false;
    table[b'&' as usize] = false;
    table[b'|' as usize] = false;
    table
};

/// `command` holds a byte of [`REFUSED_BYTE`] or a C1 control character (U+0080 to
/// U+009F, the only control characters outside ASCII, written `C2 80` to `C2 9F`).
fn has_refused_char(command: &str) -> bool {
    let bytes = command.as_bytes();
    bytes.iter().enumerate().any(|(i, &b)| {
        REFUSED_BYTE[usize::from(b)] || (b == 0xc2 && matches!(bytes.get(i + 1), Some(0x80..=0x9f)))
    })
}

/// Where the word that starts at byte `i` ends, as the shell's word reader reads it
/// ([`crate::shells::words`]): at the first blank or operator character outside quotes.
/// `None` for an open quote (or anything else the reader stops at, which the scan has
/// refused before).
fn word_end(command: &str, i: usize) -> Option<usize> {
    crate::shells::words::word_end(command, i, crate::shells::Quoting::BASH).ok()
}

/// gate's own reading of `command` in the tiny language compound mode accepts. Exact for
/// that language: with no `\`, `$` or `` ` `` anywhere, single and double quotes both
/// simply run to the next quote of the same kind.
fn scan(command: &str) -> Option<Scanned<'_>> {
    if has_refused_char(command) {
        return None;
    }
    let bytes = command.as_bytes();
    let len = bytes.len();
    let mut parts = Vec::new();
    let mut operators = Vec::new();
    let mut i = 0;
    loop {
        // One part: words separated by blanks, up to an operator or the end.
        let mut name = None;
        let mut part_start = i;
        let mut part_end = i;
        loop {
            while i < len && is_blank(bytes[i]) {
                i += 1;
            }
            if i == len || is_operator_byte(bytes[i]) {
                break;
            }
            if bytes[i] == b'#' {
                // A comment: the rest of the line is not a command. Refused rather than
                // dropped, so that nothing after it is judged as if it ran.
                return None;
            }
            let start = i;
            i = word_end(command, i)?;
            if name.is_none() {
                // Both ends are next to ASCII bytes (or the ends), so they are char
                // boundaries.
                name = Some(&command[start..i]);
                part_start = start;
            }
            part_end = i;
        }
        let name = name?; // None: an empty part, as in `a;;b`, `&& a` or `a &&`
        if RESERVED_WORDS.contains(&name) || name.contains('=') || parts.len() == MAX_PARTS {
            return None;
        }
        parts.push(Part {
            text: &command[part_start..part_end],
            start: part_start,
            name,
        });
        if i == len {
            break;
        }
        let rest = &bytes[i..];
        let operator = if rest.starts_with(b"&&") {
            Operator::And
        } else if rest.starts_with(b"||") {
            Operator::Or
        } else if rest[0] == b';' {
            Operator::Sequence
        } else if rest[0] == b'|' {
            Operator::Pipe
        } else {
            return None; // `&` alone: run in the background
        };
        i += operator.as_str().len();
        operators.push(operator);
    }
    Some(Scanned { parts, operators })
}

/// The text around and between the parts is blanks and exactly one operator each: the
/// scan's result checked again from the outside, on the source text itself.
fn operators_are_exact(command: &str, scanned: &Scanned<'_>) -> bool {
    let blank = |text: &str| text.bytes().all(is_blank);
    let (Some(first), Some(last)) = (scanned.parts.first(), scanned.parts.last()) else {
        return false;
    };
    if scanned.operators.len() + 1 != scanned.parts.len()
        || !blank(&command[..first.start])
        || !blank(&command[last.end()..])
    {
        return false;
    }
    scanned
        .parts
        .windows(2)
        .zip(&scanned.operators)
        .all(|(pair, op)| {
            let between = &command[pair[0].end()..pair[1].start];
            super::trim_blanks(between) == op.as_str()
        })
}

/// The shell parser's reading of the command's grammar skeleton agrees with the scan:
/// as many simple commands, each with the same command word, joined by the same
/// operators, and nothing else.
///
/// The skeleton is the command word of each part, verbatim, joined by the operators:
/// `git status -s && cargo test 'a b'` is read as `git && cargo`. In the text this
/// function ever sees (no shell character in any part, no comment, quotes closed), that
/// is everything bash's grammar depends on: which word stands where a command name
/// goes (a reserved word, `!`, `time`, an assignment change the grammar there), and the
/// operators between. The arguments after the command word are words of that command
/// whatever they hold. Reading only the skeleton keeps the parser's cost to a few tokens
/// per part: on the whole text, `brush-parser` takes about 0.1 µs a byte, which is more
/// than compound mode may add to a decision for a 1 KB command (docs/compound.md). The
/// tests check that the parser, given the whole text, agrees with every split.
fn parser_agrees(scanned: &Scanned<'_>) -> bool {
    let mut skeleton = String::with_capacity(scanned.parts.len() * 16);
    for (i, part) in scanned.parts.iter().enumerate() {
        if i > 0 {
            skeleton.push(' ');
            skeleton.push_str(scanned.operators[i - 1].as_str());
            skeleton.push(' ');
        }
        skeleton.push_str(part.name);
    }
    let Some(parsed) = parse(&skeleton) else {
        return false;
    };
    parsed.len() == scanned.parts.len()
        && parsed
            .iter()
            .zip(&scanned.parts)
            .enumerate()
            .all(|(i, (p, s))| {
                p.operator_before == i.checked_sub(1).map(|j| scanned.operators[j])
                    && p.words.len() == 1
                    && p.words[0] == s.name
            })
}

/// One simple command as the shell parser read it.
#[derive(Debug)]
struct ParsedCommand {
    /// The operator that joins it to the command before; `None` for the first.
    operator_before: Option<Operator>,
    /// Its words as written.
    words: Vec<String>,
}

/// The simple commands of `command` as bash would read it, via `brush-parser`; `None`
/// when it is not only simple commands of plain words joined by the four operators.
fn parse(command: &str) -> Option<Vec<ParsedCommand>> {
    let options = brush_parser::ParserOptions::default();
    let source = brush_parser::SourceInfo {
        source: String::new(),
    };
    let program = brush_parser::Parser::new(command.as_bytes(), &options, &source)
        .parse_program()
        .ok()?;
    let mut out = Vec::new();
    for complete in &program.complete_commands {
        for ast::CompoundListItem(and_or, separator) in &complete.0 {
            if matches!(separator, ast::SeparatorOperator::Async) {
                return None;
            }
            let first_operator = if out.is_empty() {
                None
            } else {
                Some(Operator::Sequence)
            };
            pipeline(&and_or.first, first_operator, &mut out)?;
            for next in &and_or.additional {
                match next {
                    ast::AndOr::And(p) => pipeline(p, Some(Operator::And), &mut out)?,
                    ast::AndOr::Or(p) => pipeline(p, Some(Operator::Or), &mut out)?,
                }
            }
        }
    }
    Some(out)
}

fn pipeline(
    pipeline: &ast::Pipeline,
    operator_before: Option<Operator>,
    out: &mut Vec<ParsedCommand>,
) -> Option<()> {
    if pipeline.bang || pipeline.timed.is_some() {
        return None;
    }
    for (i, command) in pipeline.seq.iter().enumerate() {
        let ast::Command::Simple(simple) = command else {
            return None;
        };
        if simple.prefix.is_some() {
            return None;
        }
        let mut words = vec![simple.word_or_name.as_ref()?.value.clone()];
        for item in simple.suffix.iter().flat_map(|s| &s.0) {
            match item {
                ast::CommandPrefixOrSuffixItem::Word(word)
                // `make CC=gcc`: an argument that looks like an assignment is still only
                // an argument of this command.
                | ast::CommandPrefixOrSuffixItem::AssignmentWord(_, word) => {
                    words.push(word.value.clone());
                }
                ast::CommandPrefixOrSuffixItem::IoRedirect(_)
                | ast::CommandPrefixOrSuffixItem::ProcessSubstitution(..) => return None,
            }
        }
        out.push(ParsedCommand {
            operator_before: if i == 0 {
                operator_before
            } else {
                Some(Operator::Pipe)
            },
            words,
        });
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{AllowRules, Origin, SHELL_CHARS};
    use proptest::prelude::*;

    /// The shell parser, given the whole text (not the skeleton), reads exactly the
    /// scan's simple commands, words and operators: brush-parser's tokens are the
    /// shell's word reader's words ([`crate::shells::words`]), which the scan reads
    /// with. The proptests below run it on generated compositions and soups.
    fn full_parse_agrees(command: &str) -> bool {
        let (Some(scanned), Some(parsed)) = (scan(command), parse(command)) else {
            return false;
        };
        parsed.len() == scanned.parts.len()
            && parsed
                .iter()
                .zip(&scanned.parts)
                .enumerate()
                .all(|(i, (p, s))| {
                    p.operator_before == i.checked_sub(1).map(|j| scanned.operators[j])
                        && p.words == words(s.text)
                })
    }

    /// The words of a part, as written.
    fn words(part: &str) -> Vec<&str> {
        let bytes = part.as_bytes();
        let mut words = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            if is_blank(bytes[i]) {
                i += 1;
                continue;
            }
            let end = word_end(part, i).unwrap();
            words.push(&part[i..end]);
            i = end;
        }
        words
    }

    /// Compositions compound mode accepts, and the parts it returns.
    const ACCEPTED: &[(&str, &[&str])] = &[
        ("a && b", &["a", "b"]),
        ("a || b", &["a", "b"]),
        ("a; b", &["a", "b"]),
        ("a | b", &["a", "b"]),
        ("a&&b||c;d|e", &["a", "b", "c", "d", "e"]),
        ("a;b;c", &["a", "b", "c"]),
        ("ls -la && git status -s", &["ls -la", "git status -s"]),
        (
            "git diff | grep -n TODO | head",
            &["git diff", "grep -n TODO", "head"],
        ),
        (
            "cargo build && cargo test -- --nocapture",
            &["cargo build", "cargo test -- --nocapture"],
        ),
        ("a || b && c | d ; e", &["a", "b", "c", "d", "e"]),
        // Blanks around parts and operators are not part of either.
        ("  a  &&  b  ", &["a", "b"]),
        ("a\t&&\tb", &["a", "b"]),
        ("  git status  ", &["git status"]),
        // A tab inside a part is kept: only a space continues an allow rule.
        ("ls\tfoo", &["ls\tfoo"]),
        ("ls\tfoo && b", &["ls\tfoo", "b"]),
        // One simple command is one part.
        ("ls", &["ls"]),
        // Quotes are kept, as written.
        ("echo 'a b' && ls", &["echo 'a b'", "ls"]),
        ("echo \"a b\" | wc -l", &["echo \"a b\"", "wc -l"]),
        ("a 'b'\"c\"d && e", &["a 'b'\"c\"d", "e"]),
        ("echo \"it's\" && ls", &["echo \"it's\"", "ls"]),
        ("echo '' \"\" && ls", &["echo '' \"\"", "ls"]),
        // Globs, `~` and `#` inside a word mean what they mean in strict mode.
        (
            "ls ~user && ls *.rs src/[ab]?.rs",
            &["ls ~user", "ls *.rs src/[ab]?.rs"],
        ),
        ("a#x && b", &["a#x", "b"]),
        // An argument that looks like an assignment is an argument.
        ("make CC=gcc && ./a.out", &["make CC=gcc", "./a.out"]),
        // Reserved words and `!` are only syntax where a command name goes.
        ("echo if then fi; ls", &["echo if then fi", "ls"]),
        ("a ! b", &["a ! b"]),
        ("echo [[ ]]", &["echo [[ ]]"]),
        // A quoted reserved word is a command name (and needs a rule that says so).
        ("'if' x", &["'if' x"]),
        ("echo é && ls ü", &["echo é", "ls ü"]),
        // To a shell a no-break space is part of a word, so it stays in the part, where
        // it keeps the rule `ls` from matching.
        ("ls\u{a0}&& b", &["ls\u{a0}", "b"]),
    ];

    #[test]
    fn accepted_compositions_split_into_their_simple_commands() {
        for (command, expected) in ACCEPTED {
            assert_eq!(split(command).as_deref(), Some(*expected), "{command:?}");
        }
    }

    #[test]
    fn the_parser_reading_the_whole_text_agrees_with_every_accepted_split() {
        for (command, _) in ACCEPTED {
            assert!(full_parse_agrees(command), "{command:?}");
        }
    }

    /// Constructs compound mode refuses, so that an approver is asked.
    const REFUSED: &[(&str, &str)] = &[
        ("a $(b)", "command substitution"),
        ("a `b`", "command substitution"),
        ("a && echo $(id)", "command substitution"),
        ("cat <(a)", "process substitution"),
        ("a $X", "a variable"),
        ("a ${X}", "a variable"),
        ("echo $((1))", "arithmetic expansion"),
        ("(( 1 ))", "an arithmetic command"),
        ("a > f", "redirection"),
        ("a >> f", "redirection"),
        ("a < f", "redirection"),
        ("a 2>&1", "redirection"),
        ("a &> f", "redirection"),
        ("a <<EOF\nx\nEOF", "a heredoc"),
        ("a <<< x", "a here-string"),
        ("(a)", "a subshell"),
        ("a && (b)", "a subshell"),
        ("{ a; }", "a group"),
        ("echo {a,b}", "brace expansion"),
        ("a & b", "background"),
        ("a &", "background"),
        ("a |& b", "a pipe with standard error"),
        ("a=1 b", "an assignment prefix"),
        ("FOO=bar ls && pwd", "an assignment prefix"),
        ("a && FOO=bar ls", "an assignment prefix"),
        ("a[0]=x b", "an assignment prefix"),
        ("a+=1 b", "an assignment prefix"),
        ("a=1", "an assignment"),
        ("! a", "negation"),
        ("a && ! b", "negation"),
        ("# x", "a comment"),
        ("a # x && b", "a comment"),
        ("a && b # c", "a comment"),
        ("a && #b", "a comment"),
        ("if true; then a; fi", "a reserved word"),
        ("while a; do b; done", "a reserved word"),
        ("until a; do b; done", "a reserved word"),
        ("for x in a; do b; done", "a reserved word"),
        ("case x in x) a;; esac", "a reserved word"),
        ("function f { a; }", "a function"),
        ("f() { a; }", "a function"),
        ("select x in a; do b; done", "a reserved word"),
        ("time a", "time"),
        ("time -p a && b", "time"),
        ("a && time b", "time"),
        ("coproc a", "coproc"),
        ("a; coproc b", "coproc"),
        ("[[ -f x ]]", "a conditional command"),
        ("a && [[ -f x ]]", "a conditional command"),
        ("a; then b", "a reserved word"),
        ("a | done", "a reserved word"),
        ("repeat 3 a", "a zsh reserved word"),
        ("a &&& b", "a doubled operator"),
        ("a ||| b", "a doubled operator"),
        ("a | | b", "a doubled operator"),
        ("a & & b", "a doubled operator"),
        ("a;;b", "an empty command"),
        ("a ;& b", "a case terminator"),
        ("a ;;& b", "a case terminator"),
        ("a && ", "an empty command"),
        ("&& a", "an empty command"),
        ("| a", "an empty command"),
        ("a;", "an empty command"),
        (";", "an empty command"),
        ("", "nothing"),
        ("   ", "nothing"),
        ("echo 'a", "an open quote"),
        ("echo \"a && b", "an open quote"),
        ("echo 'a && b'", "a shell character in quotes"),
        ("echo \"a;b\"", "a shell character in quotes"),
        ("echo 'a|b' && ls", "a shell character in quotes"),
        ("a'&&'b", "a shell character in quotes"),
        ("echo a\\;b", "an escape"),
        ("a \\&& b", "an escape"),
        ("a\\\nb", "a line continuation"),
        ("a\nb", "a newline"),
        ("a &&\nb", "a newline"),
        ("a && b\n", "a newline"),
        ("a\r\nb", "CRLF"),
        ("a && b\r", "a carriage return"),
        ("a\0b", "NUL"),
        ("a && b\0", "NUL"),
        ("a\x1bb", "a control character"),
        ("a\x7fb && c", "a control character"),
        ("a\u{85}b && c", "a control character"),
    ];

    #[test]
    fn refused_constructs_fall_back_to_asking() {
        for (command, what) in REFUSED {
            assert_eq!(split(command), None, "{what}: {command:?}");
        }
    }

    #[test]
    fn a_quoted_operator_is_one_part_with_its_quotes_and_still_refused() {
        // Both readers see one simple command with the quotes kept, not two...
        for command in ["echo 'a && b'", "echo \"a;b\""] {
            let scanned = scan(command).unwrap();
            assert_eq!(scanned.parts.len(), 1);
            assert_eq!(scanned.parts[0].text, command);
            assert!(full_parse_agrees(command), "{command:?}");
        }
        assert_eq!(
            words(scan("echo 'a && b'").unwrap().parts[0].text),
            ["echo", "'a && b'"]
        );
        // ...but that command holds a shell character, so no allow rule could match it
        // in strict mode, and compound mode does not change that.
        assert_eq!(split("echo 'a && b'"), None);
        assert_eq!(split("echo \"a;b\" && ls"), None);
    }

    /// Grammar errors: gate's scan and the shell parser each refuse them on their own.
    #[test]
    fn both_readers_refuse_a_grammar_error() {
        for command in [
            "a &&& b",
            "a && ",
            "&& a",
            "a;;b",
            "a | | b",
            "a; then b",
            "echo 'a",
            "| a",
        ] {
            assert_eq!(scan(command), None, "scan: {command:?}");
            assert!(parse(command).is_none(), "parser: {command:?}");
        }
    }

    /// More than simple commands: each reader refuses them on its own.
    #[test]
    fn both_readers_refuse_more_than_simple_commands() {
        for command in [
            "a & b",
            "a |& b",
            "! a",
            "time a",
            "a=1 b",
            "(a)",
            "[[ -f x ]]",
            "if a; then b; fi",
            "a > f",
            "a 2>&1",
            "cat <(a)",
            "f() { a; }",
            "{ a; }",
            "while a; do b; done",
        ] {
            assert!(split(command).is_none(), "{command:?}");
            assert!(
                scan(command).is_none()
                    || scan(command)
                        .unwrap()
                        .parts
                        .iter()
                        .any(|p| first_unmatchable_char(p.text).is_some()),
                "scan: {command:?}"
            );
            assert!(parse(command).is_none(), "parser: {command:?}");
        }
    }

    #[test]
    fn coproc_is_caught_by_the_scan_though_this_parser_reads_a_simple_command() {
        // brush-parser 0.2 does not know `coproc`, which runs its command in the
        // background: the reason gate keeps its own list of reserved words.
        assert!(parse("coproc a").is_some());
        assert_eq!(scan("coproc a"), None);
        assert_eq!(split("coproc a"), None);
    }

    #[test]
    fn bash_reads_every_accepted_row_and_rejects_the_grammar_errors() {
        let bash = std::path::Path::new("/bin/bash");
        if !bash.exists() {
            return;
        }
        let syntax_ok = |command: &str| {
            std::process::Command::new(bash)
                .args(["-n", "-c", command])
                .stderr(std::process::Stdio::null())
                .status()
                .unwrap()
                .success()
        };
        for (command, _) in ACCEPTED {
            assert!(syntax_ok(command), "{command:?}");
        }
        for command in ["a &&& b", "a && ", "&& a", "a;;b", "a | | b", "a; then b"] {
            assert!(!syntax_ok(command), "{command:?}");
        }
    }

    #[test]
    fn every_reserved_word_is_refused_where_a_command_name_goes() {
        for word in RESERVED_WORDS {
            for command in [
                format!("{word} x"),
                format!("a && {word}"),
                format!("a | {word} b"),
            ] {
                assert_eq!(split(&command), None, "{command:?}");
            }
            // As an argument it is a plain word.
            let command = format!("echo {word} && ls");
            if first_unmatchable_char(word).is_none() {
                assert_eq!(
                    split(&command),
                    Some(vec![&command[..command.len() - 6], "ls"])
                );
            }
        }
    }

    #[test]
    fn a_compound_command_holds_at_most_max_parts_simple_commands() {
        let chain = |n: usize| vec!["ls -l"; n].join(" && ");
        assert_eq!(split(&chain(MAX_PARTS)).map(|p| p.len()), Some(MAX_PARTS));
        assert_eq!(split(&chain(MAX_PARTS + 1)), None);
        assert_eq!(split(&chain(1000)), None);
    }

    #[test]
    fn operators_have_their_text() {
        for op in Operator::ALL {
            let command = format!("a {} b", op.as_str());
            assert_eq!(scan(&command).unwrap().operators, [op]);
        }
    }

    // Strategies for the properties.

    fn command_word() -> impl Strategy<Value = String> {
        "[a-z][a-z0-9_.-]{0,6}".prop_filter("a reserved word is not a command name", |w| {
            !RESERVED_WORDS.contains(&w.as_str())
        })
    }

    fn argument() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-zA-Z0-9_./~*?=:,+%@^-]{1,8}",
            "'[a-z0-9 #=~*]{0,6}'",
            "\"[a-z0-9 #=~*']{0,6}\"",
            "[a-z]{1,3}'[a-z ]{0,3}'[a-z]{0,2}",
            "[a-z][a-z#!]{0,4}",
        ]
    }

    fn blanks() -> impl Strategy<Value = &'static str> {
        proptest::sample::select(vec!["", " ", "  ", "\t", " \t "])
    }

    fn separator() -> impl Strategy<Value = &'static str> {
        proptest::sample::select(vec![" ", "  ", "\t", " \t"])
    }

    /// One simple command of plain words, as text.
    fn simple_command() -> impl Strategy<Value = String> {
        (
            command_word(),
            proptest::collection::vec((separator(), argument()), 0..4),
        )
            .prop_map(|(name, args)| {
                let mut text = name;
                for (sep, arg) in args {
                    text.push_str(sep);
                    text.push_str(&arg);
                }
                text
            })
    }

    fn operator() -> impl Strategy<Value = Operator> {
        proptest::sample::select(Operator::ALL.to_vec())
    }

    /// Simple commands, and the command that joins them with random operators and
    /// blanks.
    fn composition() -> impl Strategy<Value = (Vec<String>, String)> {
        (
            blanks(),
            simple_command(),
            proptest::collection::vec((blanks(), operator(), blanks(), simple_command()), 0..8),
            blanks(),
        )
            .prop_map(|(lead, first, rest, trail)| {
                let mut parts = vec![first.clone()];
                let mut text = format!("{lead}{first}");
                for (before, op, after, command) in rest {
                    text.push_str(before);
                    text.push_str(op.as_str());
                    text.push_str(after);
                    text.push_str(&command);
                    parts.push(command);
                }
                text.push_str(trail);
                (parts, text)
            })
    }

    fn refused_char() -> impl Strategy<Value = char> {
        let mut chars: Vec<char> = SHELL_CHARS
            .into_iter()
            .filter(|c| !matches!(c, ';' | '&' | '|'))
            .collect();
        chars.extend(['\r', '\0', '\x1b', '\x7f', '\u{85}', '\u{9b}']);
        proptest::sample::select(chars)
    }

    /// Text made of pieces that matter to the scan: words, blanks, operators and their
    /// characters, quotes, `#`, `=`, `!` and reserved words, weighted so that a fair
    /// share of it splits.
    fn shell_soup() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            6 => proptest::sample::select(vec!["a", "b", "ls", "x1", "é"]),
            4 => proptest::sample::select(vec![" ", "\t"]),
            3 => proptest::sample::select(vec![" && ", " || ", "; ", " | "]),
            2 => proptest::sample::select(vec![";", "&", "|", "&&", "||"]),
            2 => proptest::sample::select(vec![
                "'", "\"", "' '", "\"a b\"", "#", "=", "!", "if", "time", "[[", "x=1", "~",
            ]),
        ];
        proptest::collection::vec(piece, 0..16).prop_map(|pieces| pieces.concat())
    }

    /// Whatever `split` returns is sound: each part is non-empty, trimmed, free of every
    /// shell character, found in order in the command, and read by the shell parser
    /// from the whole text exactly as the scan read it.
    fn check_sound(command: &str) -> Result<(), TestCaseError> {
        let Some(parts) = split(command) else {
            return Ok(());
        };
        let mut from = 0;
        for part in &parts {
            prop_assert!(!part.is_empty());
            prop_assert_eq!(*part, crate::policy::trim_blanks(part));
            prop_assert!(first_unmatchable_char(part).is_none());
            let at = command[from..].find(part);
            prop_assert!(at.is_some(), "{:?} not in order in {:?}", part, command);
            from += at.unwrap() + part.len();
        }
        prop_assert!(
            full_parse_agrees(command),
            "the parser disagrees on {:?}",
            command
        );
        Ok(())
    }

    /// The parts that are valid rules as allow rules. A part with a glob outside quotes
    /// is none (see `patterns`): it is left out, so that part is asked whether alone or
    /// in the composition, and the property holds the same.
    fn rules(list: &[String]) -> AllowRules {
        let mut rules = AllowRules::new();
        for rule in list {
            if crate::policy::validate_rule(rule).is_ok() {
                rules.add(rule, Origin::Flag("--allow")).unwrap();
            }
        }
        rules
    }

    proptest! {
        #[test]
        fn a_composition_of_simple_commands_splits_into_exactly_them(
            (parts, command) in composition(),
        ) {
            prop_assert_eq!(split(&command), Some(parts.iter().map(String::as_str).collect()));
            prop_assert!(full_parse_agrees(&command), "{:?}", command);
        }

        /// The caller allows a compound command when every part matches an allow rule;
        /// that is exactly when every simple command in it is allowed on its own.
        #[test]
        fn compound_allow_means_every_part_is_allowed_on_its_own(
            (parts, command) in composition(),
            allowed in proptest::collection::vec(any::<bool>(), 8),
            by_prefix in any::<bool>(),
        ) {
            let rule_list: Vec<String> = parts
                .iter()
                .zip(&allowed)
                .filter(|(_, allowed)| **allowed)
                .map(|(part, _)| {
                    if by_prefix {
                        part.split([' ', '\t']).next().unwrap().to_owned()
                    } else {
                        part.clone()
                    }
                })
                .collect();
            let rules = rules(&rule_list);
            let each_alone = parts.iter().all(|part| rules.find(part).is_some());
            let compound = split(&command)
                .is_some_and(|split| split.iter().all(|part| rules.find(part).is_some()));
            prop_assert_eq!(compound, each_alone, "{:?} with rules {:?}", command, rule_list);
            // And strict mode never allows a composition of two or more.
            if parts.len() > 1 {
                prop_assert!(rules.find(&command).is_none());
            }
        }

        #[test]
        fn any_other_shell_character_means_asking(
            before in "[ -~]{0,20}",
            c in refused_char(),
            after in "[ -~]{0,20}",
        ) {
            let command = format!("{before}{c}{after}");
            prop_assert_eq!(split(&command), None);
        }

        #[test]
        fn a_shell_character_inside_any_composition_means_asking(
            (_, command) in composition(),
            at in any::<proptest::sample::Index>(),
            c in refused_char(),
        ) {
            let mut chars: Vec<char> = command.chars().collect();
            chars.insert(at.index(chars.len() + 1), c);
            let command: String = chars.into_iter().collect();
            prop_assert_eq!(split(&command), None);
        }

        #[test]
        fn parts_joined_again_split_into_the_same_parts(
            (_, command) in composition(),
            ops in proptest::collection::vec(operator(), 8),
        ) {
            let parts = split(&command).unwrap();
            let mut joined = parts[0].to_owned();
            for (part, op) in parts[1..].iter().zip(&ops) {
                joined.push_str(&format!(" {} {part}", op.as_str()));
            }
            prop_assert_eq!(split(&joined), Some(parts));
        }

    }

    proptest! {
        // Cheap cases, and most of them are refused: run more of them.
        #![proptest_config(ProptestConfig::with_cases(1024))]

        #[test]
        fn whatever_is_split_is_sound(command in shell_soup()) {
            check_sound(&command)?;
        }

        #[test]
        fn whatever_is_split_is_sound_for_any_text(command in "\\PC{0,40}") {
            check_sound(&command)?;
        }
    }
}
