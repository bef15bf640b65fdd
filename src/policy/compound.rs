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
    parse(&skeleton).is_some_and(|parsed| {
        reads_as_scanned(&parsed, scanned, |p, s| {
            p.words.len() == 1 && p.words[0] == s.name
        })
    })
}

/// Whether the parser read the scan's simple commands, in order, joined by the same
/// operators, with each command's words as `same_words` compares them.
fn reads_as_scanned(
    parsed: &[ParsedCommand],
    scanned: &Scanned<'_>,
    same_words: impl Fn(&ParsedCommand, &Part<'_>) -> bool,
) -> bool {
    parsed.len() == scanned.parts.len()
        && parsed
            .iter()
            .zip(&scanned.parts)
            .enumerate()
            .all(|(i, (p, s))| {
                p.operator_before == i.checked_sub(1).map(|j| scanned.operators[j])
                    && same_words(p, s)
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
mod tests;
