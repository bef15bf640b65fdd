//! A conservative reading of shell text into the simple commands it could run, for deny
//! rules.
//!
//! Allow rules never need this: a command with any shell character matches no allow
//! rule. Deny rules are the opposite case: they must still catch a denied command that is
//! hidden behind shell syntax (`x; rm -rf /`, `$(rm -rf /)`, `FOO=1 rm -rf /`,
//! `env nohup timeout 5 rm -rf /`, `bash -c 'rm -rf /'`). So this module over-approximates:
//! every piece of text that a shell might run as a command comes out as one
//! [`SimpleCommand`], with quotes removed, assignments and redirections dropped, and each
//! known wrapper peeled off in turn. A word whose value is only known when the shell runs
//! (`$VAR`, `$(…)`) is marked dynamic, and a deny rule treats it as matching anything.
//!
//! It is not a shell parser and does not try to be: it never fails, never panics, and when
//! it cannot tell it errs towards finding more commands. Deny rules are a safety net;
//! the `safe` level's sandbox is the boundary.
//!
//! This module holds the walk (each command found, then what it hides: nested shell
//! text, `find -exec` tails, the command under a wrapper, zsh's `=cmd`) and its budget.
//! Beside it: the reader of shell text (`lexer`, with `braces` and `glob`), the commands
//! hidden in other commands' words (`nested`), the peeling of a wrapper's options
//! (`wrappers`) and the wrappers themselves as data (`wrapper_table`).

use crate::shells::{self, ANY_SHELL, Quoting};

mod braces;
mod glob;
mod lexer;
mod nested;
mod wrapper_table;
mod wrappers;
pub use glob::glob_matches;
use lexer::lex_in;
use nested::{exec_like_tails, nested_shell_text};
use wrappers::{Unwrapped, strip_wrapper};

/// One word of a simple command, after quote removal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub text: String,
    /// Part of the word comes from an expansion or substitution (`$X`, `${X}`, `$(…)`,
    /// `` `…` ``), so its real value is unknown until the shell runs.
    pub dynamic: bool,
    /// The word for messages when it is not [`Word::text`]: a computed word, with each
    /// expansion or substitution as it was written (`$G`, `${1+"$@"}`, `$(…)` with its
    /// text), so that it is never shown as nothing. See [`Word::shown`].
    pub source: Option<String>,
    /// The word holds unquoted glob characters (`r[m]`, `/usr/bin/r?`, `*`): the shell
    /// replaces it with the names of the files it matches, so it stands for any words
    /// that match this pattern (quoted characters escaped with `\`). See
    /// [`glob_matches`].
    pub pattern: Option<String>,
}

impl AsRef<str> for Word {
    fn as_ref(&self) -> &str {
        &self.text
    }
}

impl Word {
    /// The word as a message shows it.
    pub fn shown(&self) -> &str {
        self.source.as_deref().unwrap_or(&self.text)
    }

    fn computed(text: String, source: String) -> Word {
        Word {
            text,
            dynamic: true,
            source: Some(source),
            pattern: None,
        }
    }
}

/// The words of one simple command.
pub type SimpleCommand = Vec<Word>;

/// How deep `bash -c '…'`, `eval …` and `env -S …` strings are followed.
const MAX_NESTED_SHELLS: usize = 8;
/// How deep text inside text (a backtick substitution inside another, a here-document
/// read as a script) is read.
const MAX_NESTED_TEXT: usize = 32;
/// The most words one word's brace expansion may produce.
const MAX_BRACE_WORDS: usize = 1 << 16;
/// The most characters brace expansion may produce and here-documents, substitutions
/// and nested shell strings may make the lexer read again, over the whole text. Far
/// above any real command (one argument is at most 128 KiB on Linux); past it the text
/// is reported, not ground through.
const MAX_WORK_CHARS: usize = 1 << 23;
/// The most ways one wrapper's options may be read (an abbreviated or unknown long
/// option is read both with and without a value).
const MAX_WRAPPER_READINGS: usize = 64;

/// The most words all candidates together may hold. Real commands stay far below; a
/// text past it is reported rather than ground through (wrappers make the work
/// quadratic in the number of words).
const MAX_CANDIDATE_WORDS: usize = 1 << 20;

/// The text is too large or too deeply wrapped to be read in bounded time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TooComplex;

/// Every simple command that `text` could run, each in every form a deny rule should see:
/// as written (after assignments), and again after each wrapper (`env`, `nohup`, `sudo`…)
/// is removed.
pub(crate) fn candidate_commands(text: &str) -> Result<Vec<SimpleCommand>, TooComplex> {
    let mut all = Vec::new();
    for_each_candidate(text, |command| all.push(command.to_vec()))?;
    Ok(all)
}

/// [`candidate_commands`] without collecting them: `visit` sees each candidate, in the
/// same order, as it is found. When the text turns out too complex, the commands
/// visited so far are only part of it, and the answer is `Err`.
///
/// Where shells read the same text differently ([`Quoting`]: dash has no `$'…'` or
/// `$"…"` strings, so its quote can end where bash's does not, and reads `&>` as `&`
/// then `>`; busybox sh and zsh have `$'…'` but no `$"…"`), every reading counts. The
/// text is read as bash reads it, then again in each reading that reads a form in it
/// differently, and the commands of every reading are candidates. gate's own `-c`
/// string may go to any shell, so it takes every reading ([`ANY_SHELL`]); a string
/// handed to a shell by name (`dash -c …`) takes that shell's readings
/// ([`shells::Dialect::readings`]), whatever reading found it.
pub(crate) fn for_each_candidate(
    text: &str,
    mut visit: impl FnMut(&[Word]),
) -> Result<(), TooComplex> {
    let mut out = Candidates {
        visit: &mut visit,
        words: 0,
        budget: Budget::default(),
    };
    collect_readings(text, ANY_SHELL, 0, &mut out)
}

struct Candidates<'v> {
    visit: &'v mut dyn FnMut(&[Word]),
    words: usize,
    budget: Budget,
}

impl Candidates<'_> {
    fn push(&mut self, command: &[Word]) -> Result<(), TooComplex> {
        self.words += command.len();
        if self.words > MAX_CANDIDATE_WORDS {
            return Err(TooComplex);
        }
        (self.visit)(command);
        Ok(())
    }
}

/// The work the lexer may still do for one text, shared by everything it reads again.
#[derive(Debug)]
struct Budget {
    work: usize,
    exceeded: bool,
    /// The reading the lexer takes now (see [`for_each_candidate`]).
    quoting: Quoting,
    /// Character buffers for [`lex_in`] to reuse.
    spare_chars: Vec<Vec<char>>,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            work: 0,
            exceeded: false,
            quoting: Quoting::BASH,
            spare_chars: Vec::new(),
        }
    }
}

impl Budget {
    /// Spend `n` characters of work; false (and the text is too complex) past the bound.
    fn spend(&mut self, n: usize) -> bool {
        self.work = self.work.saturating_add(n);
        if self.work > MAX_WORK_CHARS {
            self.exceeded = true;
        }
        !self.exceeded
    }
}

/// Read `text` in the first of `readings`, then in each other one that reads a form in
/// it differently ([`Quoting::differs_in`]).
fn collect_readings(
    text: &str,
    readings: &[Quoting],
    depth: usize,
    out: &mut Candidates,
) -> Result<(), TooComplex> {
    let outer = out.budget.quoting;
    let mut read = Ok(());
    for (n, &reading) in readings.iter().enumerate() {
        if n > 0 && !reading.differs_in(readings[0], text) {
            continue;
        }
        out.budget.quoting = reading;
        read = collect(text, depth, out);
        if read.is_err() {
            break;
        }
    }
    out.budget.quoting = outer;
    read
}

fn collect(text: &str, depth: usize, out: &mut Candidates) -> Result<(), TooComplex> {
    let commands = lex_in(text, &mut out.budget, 0);
    if out.budget.exceeded {
        return Err(TooComplex);
    }
    for command in commands {
        expand_candidates(command, depth, out)?;
    }
    Ok(())
}

fn expand_candidates(
    words: SimpleCommand,
    depth: usize,
    out: &mut Candidates,
) -> Result<(), TooComplex> {
    // A work list, not recursion: a wrapper read two ways gives two forms to follow.
    // Most forms are a tail of one they came from, so a form is a word list (`words`
    // for the first, `made[i - 1]` for the ones `env -S` made) and where in it the
    // form starts. A command that is no wrapper allocates neither list.
    let mut made: Vec<SimpleCommand> = Vec::new();
    let mut pending: Vec<(usize, usize)> = Vec::new();
    let mut next = Some((0usize, 0usize));
    while let Some((form, start)) = next.take().or_else(|| pending.pop()) {
        let list = if form == 0 { &words } else { &made[form - 1] };
        let start = start + prefix_len(&list[start..]);
        let words = &list[start..];
        if words.is_empty() {
            continue;
        }
        out.push(words)?;
        // zsh (its EQUALS option, on by default) runs `=rm x` as the `rm` it finds on
        // PATH; to bash and dash it is a program called `=rm`, which a rule for `rm`
        // does not name. Read it both ways.
        let as_zsh = zsh_equals(&words[0]).map(|named| {
            let mut form = words.to_vec();
            form[0] = named;
            form
        });
        let nested = nested_shell_text(words)?;
        let tails = exec_like_tails(words);
        if depth >= MAX_NESTED_SHELLS && (!nested.is_empty() || !tails.is_empty()) {
            // Deeper than any real command goes: refuse to guess rather than let it by.
            return Err(TooComplex);
        }
        for text in nested {
            if text.dynamic {
                // A command string computed at run time (`eval "$CMD"`) could be
                // anything.
                out.push(&[Word::computed(String::new(), text.shown.clone())])?;
            }
            if !out.budget.spend(text.text.len()) {
                return Err(TooComplex);
            }
            match text.readings {
                // `eval`: read again by the same shell, in the same reading.
                None => collect(&text.text, depth + 1, out)?,
                // fish ends a single quote where bash does not (`'a\'' ; rm x #'`),
                // dash a `$'…'` string where bash does not: each reading counts.
                Some(readings) => collect_readings(&text.text, readings, depth + 1, out)?,
            }
        }
        for tail in tails {
            expand_candidates(tail, depth + 1, out)?;
        }
        for rest in strip_wrapper(words)? {
            match rest {
                Unwrapped::Tail(at) => pending.push((form, start + at)),
                Unwrapped::New(words) => {
                    made.push(words);
                    pending.push((made.len(), 0));
                }
            }
        }
        if let Some(form) = as_zsh {
            made.push(form);
            pending.push((made.len(), 0));
        }
    }
    Ok(())
}

/// How many words stand before a command: assignments and reserved words.
/// The command word `=NAME` as zsh expands it where a command name goes: `NAME`.
fn zsh_equals(word: &Word) -> Option<Word> {
    let name = word.text.strip_prefix('=')?;
    if name.is_empty() || word.dynamic || word.pattern.is_some() {
        return None;
    }
    Some(Word {
        text: name.to_owned(),
        dynamic: false,
        source: Some(word.shown().to_owned()),
        pattern: None,
    })
}

fn prefix_len(words: &[Word]) -> usize {
    words
        .iter()
        .take_while(|w| {
            is_assignment(w) || (!w.dynamic && shells::PREFIX_WORDS.contains(&w.text.as_str()))
        })
        .count()
}

/// `NAME=value`, `NAME+=value`, `NAME[SUBSCRIPT]=value` (bash runs the command after
/// an array element assignment too, with an error message).
fn is_assignment(word: &Word) -> bool {
    let text = word.text.as_str();
    if !text.contains('=') {
        return false;
    }
    let name_len = text
        .char_indices()
        .take_while(|&(i, c)| c == '_' || c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit()))
        .count();
    if name_len == 0 {
        return false;
    }
    let mut rest = &text[name_len..];
    if let Some(subscript) = rest.strip_prefix('[') {
        // The subscript runs to its matching `]`; it may hold `=` (`a[x=1]=2`).
        let mut level = 1usize;
        let mut end = None;
        for (i, c) in subscript.char_indices() {
            match c {
                '[' => level += 1,
                ']' => {
                    level -= 1;
                    if level == 0 {
                        end = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(end) = end else {
            return false;
        };
        rest = &subscript[end + 1..];
    }
    rest.starts_with('=') || rest.starts_with("+=")
}

/// The program name as a deny rule compares it: the last path component.
pub(crate) fn program_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

#[cfg(test)]
mod tests;
