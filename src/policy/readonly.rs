//! The read-only preset: commands that only read, allowed without asking at level `ask`
//! when the preset is switched on (`--readonly`, `readonly = true`).
//!
//! The preset is a table of entries ([`entries`]). Each entry names one program, or `git`
//! and one subcommand, says why it only reads and what it refuses, and carries the checks
//! its arguments must pass. [`read_only`] applies them to one simple command.
//!
//! Everything fails closed: whatever the checks do not understand is "not read-only", and
//! then the approver is asked as usual. In order, a command is not read-only when:
//!
//! 1. it contains a character that keeps a command from matching an allow rule
//!    ([`first_unmatchable_char`]: separators, redirections, substitutions, a newline…);
//! 2. it does not split into words (the shell's word reader, [`crate::shells::words`]: an
//!    unclosed quote);
//! 3. its first word is a variable assignment (`GIT_PAGER=… git log`), names the program
//!    by a path (`./sed`, `/usr/bin/sed`, `bin/git`), contains a pattern character, or is
//!    not a name in the table;
//! 4. its arguments fail the entry's checks. Long options must be spelled out in full: an
//!    abbreviation that GNU programs would accept (`--out` for `--output`) is refused, and
//!    named as the option it abbreviates when that option is refused;
//! 5. a name its words give leads somewhere the preset does not read: a hidden secret, a
//!    process's environment in /proc, a device ([`files`], on facts the edge finds).
//!
//! **Unquoted patterns.** The shell replaces an unquoted word with `*`, `?`, `[` (and, in
//! zsh with `EXTENDED_GLOB`, `^`, `~` or `#`) by the file names that match it, after gate
//! has decided. File names are chosen by whoever can create files, so a pattern can turn
//! into any option: `sort *` in a directory with a file named `-ofoo` writes `foo`. A word
//! that starts with `~` becomes a directory name the same way. So, for every entry that
//! refuses anything, a word that could expand to something starting with `-` (it starts
//! with an unquoted pattern character or `~`, or it starts with `-` and contains one) is
//! refused; `src/*.rs` is fine, because every name it becomes starts with `src/`. A
//! pattern can also become several words, or none; where the number or position of words
//! decides what a word means, any pattern there is refused (see [`Globs`]). Entries that
//! refuse nothing (`ls`, `cat`, `wc`…) take patterns freely.
//!
//! Pure: no files, no environment. What names lead to comes in as facts ([`Files`]),
//! found at the edge (`crate::files`); what a repository's configuration says is not
//! known at all. `docs/readonly.md` lists these limits.
//!
//! This module holds the walk through those steps and the shapes of the table; the rest
//! lives beside it, one concern to a file: the table itself (`table`) and the option lists
//! its entries name (`option_lists`), both data only; the word reader's view of each word
//! (`words`); the secrets the preset never shows (`secrets`); the option reader the
//! option-list entries share (`getopt`); the checks of the programs whose arguments are
//! more than options (`checks`: sed, find, grep, jq, git); and what names lead to on disk
//! ([`files`]).

use std::collections::BTreeSet;
use std::fmt;

use super::{describe_char, first_unmatchable_char};

pub mod files;

use files::Reading;
pub(crate) use files::View;
pub use files::{Files, Found, Kind, Place, Protected, Query};

mod checks;
mod getopt;
mod option_lists;
mod secrets;
mod table;
mod words;
use checks::{check_find, check_git, check_grep, check_jq, check_sed};
use getopt::parse_options;
pub use secrets::DEFAULT_HIDDEN_SECRETS;
pub(crate) use secrets::SECRET_LOCATIONS;
use secrets::{check_printenv, names_secret};
use table::ENTRIES;
use words::is_assignment;
pub(super) use words::{Word, split_words};

/// Whether `command` (one simple command's text, as the agent sent it) only reads, given
/// what its words name on disk ([`files`]). `Some(entry)` names the preset entry that
/// allowed it (for messages and the audit log), such as `"sed"` or `"git log"`.
pub fn read_only(command: &str, files: &Files) -> Option<&'static str> {
    check(command, files).ok().map(|entry| entry.name)
}

/// The preset as data, for docs and `gate check` (name, reason and what is refused).
pub fn entries() -> &'static [Entry] {
    ENTRIES
}

/// Like [`read_only`], but says why a command is not read-only.
pub fn check(command: &str, files: &Files) -> Result<&'static Entry, NotReadOnly> {
    check_in(command, &View::here(files))
}

/// [`check`] for one part of a compound command, which sees the facts through `view`.
pub(crate) fn check_in(command: &str, view: &View<'_>) -> Result<&'static Entry, NotReadOnly> {
    let (entry, words, start) = structure(command)?;
    files::check(entry, &words[start..], view)?;
    Ok(entry)
}

/// Whether the words of `command` pass its entry's checks, whatever they name on disk:
/// whether an allow rule is itself a read-only command.
pub(crate) fn reads_only_as_written(command: &str) -> bool {
    structure(command).is_ok()
}

/// What the edge must resolve to judge `text` (with `compound`, each of its parts too):
/// see [`files`].
pub fn file_queries(text: &str, compound: bool) -> BTreeSet<Query> {
    let mut out = queries(text);
    if compound {
        for part in super::compound::split(text).unwrap_or_default() {
            out.extend(queries(part));
        }
    }
    out
}

fn queries(command: &str) -> BTreeSet<Query> {
    structure(command)
        .map(|(entry, words, start)| files::queries(entry, &words[start..]))
        .unwrap_or_default()
}

/// The checks on the words alone: the entry, the words, and where its arguments start
/// (after the program, or after git's subcommand).
fn structure(command: &str) -> Result<(&'static Entry, Vec<Word>, usize), NotReadOnly> {
    if let Some(c) = first_unmatchable_char(command) {
        return Err(NotReadOnly::plain(format!(
            "it contains the {}",
            describe_unmatchable(c)
        )));
    }
    let Some(words) = split_words(command) else {
        return Err(NotReadOnly::plain("its quotes are not closed".to_owned()));
    };
    let Some(first) = words.first() else {
        return Err(NotReadOnly::plain("it is empty".to_owned()));
    };
    if first.comment {
        return Err(NotReadOnly::plain("it is only a comment".to_owned()));
    }
    let program = first.text.as_str();
    if is_assignment(program) {
        return Err(NotReadOnly::plain(format!(
            "it starts with the variable assignment `{program}`, which can change what the \
             program does"
        )));
    }
    if program.contains('/') {
        return Err(NotReadOnly::plain(format!(
            "`{program}` names the program by a path; the preset counts only bare program \
             names, found on PATH"
        )));
    }
    if first.expands {
        return Err(NotReadOnly::plain(format!(
            "the program name `{program}` is an unquoted pattern"
        )));
    }
    let args = &words[1..];
    if let Some((word, secret)) = args
        .iter()
        .find_map(|w| names_secret(w).map(|secret| (w, secret)))
    {
        return Err(NotReadOnly::plain(format!(
            "`{}` names `{secret}`, where secrets are kept; what a command prints reaches the \
             model, so reading it is not read-only in the sense that matters",
            word.text
        )));
    }
    if program == "git" {
        let (entry, at) = check_git(args)?;
        return Ok((entry, words, 1 + at));
    }
    let Some(entry) = ENTRIES
        .iter()
        .find(|e| e.name == program && !matches!(e.check, Check::Git(_)))
    else {
        return Err(NotReadOnly::plain(format!(
            "`{program}` is not in the read-only preset"
        )));
    };
    match entry.check {
        Check::Any => Ok(()),
        Check::Printenv => check_printenv(entry, args),
        Check::Options(spec) => parse_options(entry, spec, args).map(drop),
        Check::Sed => check_sed(entry, args),
        Check::Find => check_find(entry, args),
        Check::Grep => check_grep(entry, args),
        Check::Jq => check_jq(entry, args),
        Check::Git(_) => Err(NotReadOnly::plain(format!(
            "`{program}` is not in the read-only preset"
        ))),
    }?;
    Ok((entry, words, 1))
}

/// Why a command is not read-only, in words, and the entry that refused it if one did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotReadOnly {
    entry: Option<&'static str>,
    reason: String,
}

impl NotReadOnly {
    fn plain(reason: String) -> Self {
        NotReadOnly {
            entry: None,
            reason,
        }
    }

    /// The entry whose checks refused the command; `None` when no entry was found.
    pub fn entry(&self) -> Option<&'static str> {
        self.entry
    }

    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for NotReadOnly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for NotReadOnly {}

fn describe_unmatchable(c: char) -> String {
    if super::SHELL_CHARS.contains(&c) {
        format!("shell character {}", describe_char(c))
    } else {
        describe_char(c)
    }
}

/// One program, or `git` and one subcommand, in the preset.
#[derive(Debug)]
pub struct Entry {
    /// The program as the agent types it (`sed`), or `git` and a subcommand (`git log`).
    pub name: &'static str,
    /// Why it only reads.
    pub reason: &'static str,
    /// What the preset refuses for it, in words.
    pub refused: &'static str,
    /// How unquoted patterns (`*`, `?`, `[`…) and a leading `~` are treated.
    pub globs: Globs,
    /// What it does with the files its words name ([`files`]).
    pub reading: Reading,
    check: Check,
}

impl Entry {
    /// The program word: `git` for the git entries, otherwise the name.
    pub fn program(&self) -> &'static str {
        self.name.split(' ').next().unwrap_or(self.name)
    }

    fn refuse(&self, reason: String) -> NotReadOnly {
        NotReadOnly {
            entry: Some(self.name),
            reason,
        }
    }
}

/// How an entry treats unquoted patterns (and words starting with `~`), which the shell
/// replaces with file names after gate has decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Globs {
    /// Anywhere: no option of the program writes or runs anything, so whatever a pattern
    /// becomes only changes what is read or printed.
    Allowed,
    /// Refused where it could become an option: when the word starts with a pattern
    /// character or `~`, or starts with `-` and contains a pattern character.
    NotAsOption,
    /// Refused anywhere: the number or position of the words decides what they mean (a
    /// second operand of `uniq` is its output file).
    Never,
}

impl Globs {
    pub fn describe(self) -> &'static str {
        match self {
            Globs::Allowed => "allowed anywhere",
            Globs::NotAsOption => {
                "refused where the names it becomes could start with `-` and act as an option"
            }
            Globs::Never => "refused anywhere, because they can change the number of words",
        }
    }
}

#[derive(Debug)]
enum Check {
    /// Any arguments.
    Any,
    /// Only variables from [`secrets::SHOWN_VARIABLES`], named.
    Printenv,
    /// Options from a list, operands by a rule.
    Options(&'static Options),
    /// `-n`, options from [`option_lists::SED`], and print-only scripts.
    Sed,
    /// No primary that runs, deletes or writes, wherever it is.
    Find,
    /// grep: no option that follows links or reads devices while recursing.
    Grep,
    /// jq: a filter that reads no environment and loads no module.
    Jq,
    /// A git subcommand.
    Git(GitSub),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GitSub {
    /// Any argument but the refused diff and log options.
    Plain,
    /// Only the listing options of `git branch`.
    Branch,
    /// As [`GitSub::Plain`], and no `-O` (`--open-files-in-pager`) in any short
    /// option cluster.
    Grep,
}

/// Whether a long option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arg {
    No,
    /// `--name=VALUE` or `--name VALUE`.
    Required,
    /// Only `--name=VALUE`; `--name` alone is fine.
    Optional,
    /// git's "last argument default": the next word is the value when there is one.
    NextIfAny,
}

/// How short options are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    /// getopt: in `-abc`, an option that takes a value takes the rest of the word, or the
    /// next word when it is last.
    Getopt,
    /// tree(1): each option in `-abc` that takes a value takes the next unused word, and
    /// the letters after it are still options (`tree -Lo 1 out` writes `out`).
    NextWords,
}

/// What the operands may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operands {
    Any,
    /// At most one: `uniq`'s second operand is the file it writes.
    AtMostOne,
    /// At most one, starting with `+`: `date`'s other operand sets the clock.
    DateFormat,
    /// None starting with `+`: `tail +5f` is the obsolete form of `tail -f`.
    NoPlus,
    /// Only with `-l`/`--list`: otherwise `git branch NAME` creates a branch.
    WithList,
}

#[derive(Debug)]
struct Options {
    style: Style,
    /// Short options without a value.
    flags: &'static str,
    /// Short options with a value.
    values: &'static str,
    /// Short options whose value, if any, is attached (`date -Iseconds`).
    optional: &'static str,
    /// Long options that are fine, by full name.
    long: &'static [(&'static str, Arg)],
    /// Refused short options and why.
    refused_short: &'static [(char, &'static str)],
    /// Refused long options and why.
    refused_long: &'static [(&'static str, &'static str)],
    operands: Operands,
}

#[cfg(test)]
mod tests;
