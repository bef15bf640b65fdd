//! The preset's view of a command's words: each word as the shell's word reader
//! ([`crate::shells::words`]) reads it, with what the shell may still do to it (patterns, a
//! leading `~`, a comment).
//!
//! It reads and marks words; it decides nothing about a program.

use crate::shells::Quoting;
use crate::shells::words::Unread;

/// One word of the command, after quote removal, and what the shell may do to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::policy) struct Word {
    pub(in crate::policy) text: String,
    /// It contains an unquoted pattern character, so the shell may replace it by other
    /// words, several or none.
    pub(in crate::policy) expands: bool,
    /// It contains an unquoted pattern character other than a leading `~`: the shell
    /// replaces it with file names.
    pub(in crate::policy) glob: bool,
    /// It starts with an unquoted `~`, which the shell replaces with a home directory.
    pub(in crate::policy) tilde: bool,
    /// What it expands to may start with `-`.
    pub(super) option_like: bool,
    /// It starts with an unquoted `#`: the shell reads the rest as a comment.
    pub(super) comment: bool,
}

/// Pattern characters: the POSIX ones, and `^` and `~` (and `#` inside a word) for zsh
/// with `EXTENDED_GLOB`. A leading `~` is tilde expansion in every shell.
pub(super) fn is_pattern_char(c: char) -> bool {
    matches!(c, '*' | '?' | '[' | '^' | '~')
}

/// The words of `text`, read by the shell's word reader ([`crate::shells::words`]),
/// with what the shell may do to each. The text has no backslash, `$` or backquote (the
/// caller refused those), so quoting is only `'…'` and `"…"`. Words in a comment are
/// kept, marked: if a shell did not read the comment as one, they would be arguments.
/// `None` when a quote is not closed, or when the reader stops at anything else.
pub(in crate::policy) fn split_words(text: &str) -> Option<Vec<Word>> {
    let mut words = Vec::new();
    let mut in_comment = false;
    let bytes = text.as_bytes();
    let mut at = 0;
    loop {
        while matches!(bytes.get(at), Some(b' ' | b'\t' | b'\n')) {
            at += 1;
        }
        if at == bytes.len() {
            break;
        }
        let comment = bytes[at] == b'#' && !in_comment;
        in_comment |= comment;
        let (read, stop) = crate::shells::words::read_word(text, at, Quoting::BASH);
        match stop {
            None if read.end > at => {}
            // In a comment, an open quote is harmless: a shell that reads the comment
            // ignores it, and one that does not fails.
            Some(Unread::OpenQuote) if in_comment => {
                words.push(word(text, read, comment));
                break;
            }
            _ => return None,
        }
        at = read.end;
        words.push(word(text, read, comment));
    }
    Some(words)
}

/// The preset's view of one word the reader read.
fn word(text: &str, read: crate::shells::words::Word, comment: bool) -> Word {
    let mut word = Word {
        text: String::new(),
        expands: false,
        glob: false,
        tilde: false,
        option_like: false,
        comment,
    };
    // Where the first pattern character is, in the value.
    let mut first_pattern: Option<usize> = None;
    for (k, (c, &quoted)) in read.value.chars().zip(&read.quoted).enumerate() {
        // The first character of the word as written, unquoted (not after `''`).
        let at_source_start = k == 0 && !quoted && text[read.start..].starts_with(c);
        let pattern =
            !quoted && (is_pattern_char(c) || (c == '#' && !at_source_start && !word.comment));
        if pattern {
            word.expands = true;
            first_pattern.get_or_insert(word.text.len());
            if c == '~' && at_source_start {
                word.tilde = true;
            } else {
                word.glob = true;
            }
        }
        word.text.push(c);
    }
    // Every name a pattern becomes starts with the text before it: `src/*.rs` stays an
    // operand, and `--glob=*.rs` stays the option `--glob` with a value. A word that
    // starts with the pattern, or with `-` and no `--name=` before the pattern,
    // could become any option.
    word.option_like = match first_pattern {
        None => false,
        Some(0) => true,
        Some(at) => {
            let before = &word.text[..at];
            before.starts_with('-') && !(before.starts_with("--") && before.contains('='))
        }
    };
    word
}

/// `NAME=…` with a valid shell variable name.
pub(super) fn is_assignment(word: &str) -> bool {
    let Some((name, _)) = word.split_once('=') else {
        return false;
    };
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}
