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

use std::collections::BTreeSet;
use std::fmt;

use super::{describe_char, first_unmatchable_char};
use crate::shells::Quoting;
use crate::shells::words::Unread;

pub mod files;

pub use files::{Files, Found, Kind, Place, Protected, Query, View};
use files::{Reading, Walk};

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
pub fn check_in(command: &str, view: &View<'_>) -> Result<&'static Entry, NotReadOnly> {
    let (entry, words, start) = structure(command)?;
    files::check(entry, &words[start..], view)?;
    Ok(entry)
}

/// Whether the words of `command` pass its entry's checks, whatever they name on disk:
/// whether an allow rule is itself a read-only command.
pub fn reads_only_as_written(command: &str) -> bool {
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
    /// Only variables from [`SHOWN_VARIABLES`], named.
    Printenv,
    /// Options from a list, operands by a rule.
    Options(&'static Options),
    /// `-n`, options from [`SED`], and print-only scripts.
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

// ---------------------------------------------------------------------------------------
// The table

const NOTHING: &str = "nothing: no option of it writes, deletes or runs anything";

const GIT_REFUSED: &str = "the global options other than `--no-pager`/`-P`, \
    `--no-optional-locks`, `--no-lazy-fetch`, `--no-replace-objects`, `--no-advice` and the \
    `--*-pathspecs` switches (so `-c`, `--config-env`, `-C`, `--git-dir`, `--work-tree`, \
    `-p`/`--paginate`, `--exec-path`); after the subcommand, `--output` (writes a file), \
    `--ext-diff` and `--textconv` (run programs named in the configuration), \
    `--show-signature` (runs gpg), and any abbreviation of those four";

macro_rules! any {
    ($reading:expr, $name:literal, $reason:literal) => {
        Entry {
            name: $name,
            reason: $reason,
            refused: NOTHING,
            globs: Globs::Allowed,
            reading: $reading,
            check: Check::Any,
        }
    };
}

const GREP_REFUSED: &str = "`-R`/`--dereference-recursive` (follows every link under \
    a directory, which gate has not looked at) and `-D`/`--devices` (reads devices it meets \
    while recursing)";

macro_rules! grep {
    ($name:literal, $reason:literal) => {
        Entry {
            name: $name,
            reason: $reason,
            refused: GREP_REFUSED,
            globs: Globs::NotAsOption,
            reading: Reading::CONTENTS.walking(Walk::Grep),
            check: Check::Grep,
        }
    };
}

/// The checksum programs: with `-c`, they read file names from a file and print them.
const SUMS: Reading = Reading::NAMES.listing(&["-c", "--check"], "");

macro_rules! git {
    ($name:literal, $reason:literal) => {
        git!($name, $reason, Reading::REPOSITORY)
    };
    ($name:literal, $reason:literal, $reading:expr) => {
        Entry {
            name: $name,
            reason: $reason,
            refused: GIT_REFUSED,
            globs: Globs::NotAsOption,
            reading: $reading,
            check: Check::Git(GitSub::Plain),
        }
    };
}

static ENTRIES: &[Entry] = &[
    any!(
        Reading::NAMES,
        "ls",
        "Lists directories and file metadata; no option of GNU ls changes a file."
    ),
    any!(Reading::CONTENTS, "cat", "Copies files to standard output."),
    any!(
        Reading::CONTENTS,
        "head",
        "Prints the first lines or bytes of files."
    ),
    Entry {
        name: "tail",
        reason: "Prints the last lines or bytes of files.",
        refused: "following: `-f`, `-F`, `--follow`, `--retry`, `--pid`, `-s`/`--sleep-interval`, \
                  `--max-unchanged-stats`, and operands that start with `+` (the obsolete \
                  `tail +5f` follows too). A follow never ends by itself, so a person decides.",
        globs: Globs::NotAsOption,
        reading: Reading::CONTENTS,
        check: Check::Options(&TAIL),
    },
    any!(
        Reading::NAMES.listing(&["--files0-from"], ""),
        "wc",
        "Counts lines, words and bytes."
    ),
    any!(Reading::NOTHING, "pwd", "Prints the working directory."),
    any!(
        Reading::NOTHING,
        "echo",
        "Prints its arguments; it opens no file."
    ),
    grep!(
        "grep",
        "Searches files for a pattern; GNU grep has no option that writes a file or starts \
         a program."
    ),
    grep!("egrep", "`grep -E` under its old name."),
    grep!("fgrep", "`grep -F` under its old name."),
    Entry {
        name: "rg",
        reason: "ripgrep searches files for a pattern.",
        refused: "`--pre` and `--pre-glob` (run a preprocessor program on files), \
                  `-z`/`--search-zip` (runs decompression programs such as gzip and xz), \
                  `--hostname-bin` (runs a program to find the host name), and every \
                  option that is not in ripgrep 14's list.",
        globs: Globs::NotAsOption,
        reading: Reading::CONTENTS.walking(Walk::Always),
        check: Check::Options(&RG),
    },
    Entry {
        name: "find",
        reason: "Lists the files that match an expression.",
        refused: "`-exec`, `-execdir`, `-ok`, `-okdir` (run programs), `-delete`, and \
                  `-fprint`, `-fprint0`, `-fprintf`, `-fls` (write files), wherever they \
                  appear, even where they would be the value of another primary.",
        globs: Globs::NotAsOption,
        reading: Reading::NAMES.listing(&["-files0-from"], ""),
        check: Check::Find,
    },
    Entry {
        name: "sed",
        reason: "With `-n` and a script that only prints, sed prints selected lines and \
                 changes nothing.",
        refused: "everything but `-n` (or `--quiet`, `--silent`) with scripts that are one \
                  command each: an optional address (line numbers, `first~step`, `/regex/`, \
                  `addr,+N`) and `p`, `=`, `l`, `q`, `Q`, or `s` with only the flags `g`, \
                  `p`, `i`, `I`, `m`, `M` or a number. So `-i`/`--in-place`, \
                  `-f`/`--file` (a script gate cannot see), the commands `e`, `w`, `W`, `r`, \
                  `R` and all others, and the `s` flags `e` and `w`.",
        globs: Globs::NotAsOption,
        reading: Reading::CONTENTS,
        check: Check::Sed,
    },
    git!(
        "git status",
        "Shows the state of the working tree (it may refresh the index's file times, \
         git's own bookkeeping)."
    ),
    git!("git log", "Shows commits."),
    git!(
        "git diff",
        "Shows changes.",
        // Outside the repository, or with `--no-index`, it compares directories.
        Reading::REPOSITORY.walking(Walk::GivenDirectories)
    ),
    git!(
        "git show",
        "Shows objects: commits, trees, files at a revision."
    ),
    Entry {
        name: "git branch",
        reason: "Lists branches.",
        refused: "every option that is not about listing (`-d`, `-D`, `-m`, `-M`, `-c`, \
                  `-C`, `-f`, `-u`, `--set-upstream-to`, `--edit-description`, …) and any \
                  operand unless `-l`/`--list` is given, since `git branch NAME` creates a \
                  branch; and the global options refused for every git entry.",
        globs: Globs::Never,
        reading: Reading::REPOSITORY,
        check: Check::Git(GitSub::Branch),
    },
    git!(
        "git rev-parse",
        "Prints object names, paths and repository facts."
    ),
    git!(
        "git ls-files",
        "Lists the files in the index and working tree."
    ),
    git!("git blame", "Shows who last changed each line of a file."),
    Entry {
        name: "git grep",
        reason: "Searches the tracked files (or a revision) for a pattern.",
        refused: "`-O`/`--open-files-in-pager` (runs the pager, or the program given, on \
                  the files found), also inside a cluster of short options (`-iO`); and the \
                  options refused for every git entry.",
        globs: Globs::NotAsOption,
        reading: Reading::REPOSITORY.walking(Walk::GitGrep),
        check: Check::Git(GitSub::Grep),
    },
    any!(
        Reading::NOTHING,
        "which",
        "Prints where a program is found on PATH."
    ),
    any!(
        Reading::NOTHING,
        "type",
        "A shell builtin that says what a name is: alias, function, builtin or file."
    ),
    Entry {
        name: "file",
        reason: "Guesses the type of files from their contents.",
        refused: "`-C`/`--compile` (writes a compiled magic file), `-z`, `-Z`, \
                  `--uncompress`, `--uncompress-noreport` (run decompression programs), \
                  `-p`/`--preserve-date` (sets the files' access times back), \
                  `-S`/`--no-sandbox` (turns off file's own sandbox).",
        globs: Globs::NotAsOption,
        reading: Reading::NAMES.listing(&["-f", "--files-from", "-m", "--magic-file"], "efFmP"),
        check: Check::Options(&FILE),
    },
    any!(Reading::NAMES, "stat", "Prints file metadata."),
    any!(
        Reading::NAMES.listing(&["--files0-from"], "BdtX"),
        "du",
        "Sums the disk usage of files and directories."
    ),
    any!(
        Reading::NAMES,
        "df",
        "Prints the free space of file systems."
    ),
    Entry {
        name: "tree",
        reason: "Lists a directory tree.",
        refused: "`-o` (writes the listing to a file), `-R` (reruns tree, writing \
                  `00Tree.html` files), and every option not in tree 2.1's list.",
        globs: Globs::NotAsOption,
        reading: Reading::NAMES.listing(&["--fromfile", "--infofile"], ""),
        check: Check::Options(&TREE),
    },
    Entry {
        name: "sort",
        reason: "Sorts lines and prints them (large inputs use temporary files, which it \
                 removes).",
        refused: "`-o`/`--output` (writes a file, possibly one of its inputs), \
                  `--compress-program` (runs a program on its temporary files).",
        globs: Globs::NotAsOption,
        reading: Reading::CONTENTS,
        check: Check::Options(&SORT),
    },
    Entry {
        name: "uniq",
        reason: "Prints lines without adjacent repeats.",
        refused: "a second operand, which is the file uniq writes to.",
        globs: Globs::Never,
        reading: Reading::CONTENTS,
        check: Check::Options(&UNIQ),
    },
    any!(
        Reading::CONTENTS,
        "cut",
        "Prints selected fields or characters of each line."
    ),
    any!(
        Reading::NOTHING,
        "tr",
        "Translates characters from standard input to standard output."
    ),
    any!(
        Reading::CONTENTS.walking(Walk::NoDirectories),
        "diff",
        "Compares files. (`-l`/`--paginate` passes the output through /usr/bin/pr, a \
         formatter that only reads and prints.)"
    ),
    any!(Reading::CONTENTS, "cmp", "Compares files byte by byte."),
    Entry {
        name: "date",
        reason: "Prints the date and time.",
        refused: "`-s`/`--set`, and an operand that does not start with `+` (`date \
                  MMDDhhmm` sets the clock); at most one operand.",
        globs: Globs::Never,
        reading: Reading::CONTENTS,
        check: Check::Options(&DATE),
    },
    any!(Reading::NOTHING, "uname", "Prints system information."),
    any!(Reading::NOTHING, "id", "Prints user and group ids."),
    any!(Reading::NOTHING, "whoami", "Prints the user name."),
    Entry {
        name: "printenv",
        reason: "Prints the named variables; it runs nothing.",
        refused: "printing the whole environment (no name given), where agents keep their \
                  API keys (Claude Code passes `ANTHROPIC_API_KEY` to its commands), and any \
                  variable not in the short list of ones that hold no secret by convention \
                  (`HOME`, `PATH`, `USER`, `SHELL`, `PWD`, `LANG`, `LC_*`, `TERM`, `TMPDIR`, \
                  the `XDG_*` directories...).",
        globs: Globs::Never,
        reading: Reading::NOTHING,
        check: Check::Printenv,
    },
    Entry {
        name: "jq",
        reason: "Filters JSON; the jq language can read files but has no way to write one \
                 or run a program.",
        refused: "the builtin `env` (the environment; `$ENV` holds a shell character), \
                  `import`, `include` and `modulemeta` (modules from files), \
                  `-f`/`--from-file` (a program gate cannot see), options jq 1.6 does not \
                  have, and any program at all while `~/.jq` exists (jq reads it into \
                  every program).",
        globs: Globs::NotAsOption,
        reading: Reading::CONTENTS,
        check: Check::Jq,
    },
    any!(
        Reading::NOTHING,
        "basename",
        "Prints a name without its directory."
    ),
    any!(
        Reading::NOTHING,
        "dirname",
        "Prints the directory part of a name."
    ),
    any!(
        Reading::NAMES,
        "realpath",
        "Prints resolved absolute file names."
    ),
    any!(
        Reading::NAMES,
        "readlink",
        "Prints where symbolic links point."
    ),
    any!(Reading::CONTENTS, "tac", "Prints files last line first."),
    any!(Reading::CONTENTS, "nl", "Prints files with line numbers."),
    any!(
        SUMS,
        "md5sum",
        "Prints or checks MD5 checksums (`-c` reads a checksum file)."
    ),
    any!(SUMS, "sha1sum", "Prints or checks SHA-1 checksums."),
    any!(SUMS, "sha256sum", "Prints or checks SHA-256 checksums."),
    any!(SUMS, "sha512sum", "Prints or checks SHA-512 checksums."),
];

const FOLLOWS: &str = "follows the file and never ends by itself";

static TAIL: Options = Options {
    style: Style::Getopt,
    flags: "qvz0123456789",
    values: "cn",
    optional: "",
    long: &[
        ("bytes", Arg::Required),
        ("lines", Arg::Required),
        ("quiet", Arg::No),
        ("silent", Arg::No),
        ("verbose", Arg::No),
        ("zero-terminated", Arg::No),
        ("help", Arg::No),
        ("version", Arg::No),
    ],
    refused_short: &[
        ('f', FOLLOWS),
        ('F', FOLLOWS),
        ('s', "sets the interval of a follow"),
    ],
    refused_long: &[
        ("follow", FOLLOWS),
        ("retry", "keeps trying to open a file, as part of a follow"),
        ("pid", "belongs to a follow"),
        ("sleep-interval", "belongs to a follow"),
        ("max-unchanged-stats", "belongs to a follow"),
    ],
    operands: Operands::NoPlus,
};

const WRITES_OUTPUT: &str = "writes the result to a file";

static SORT: Options = Options {
    style: Style::Getopt,
    flags: "bcCdfghiMmnRrsuVz",
    values: "kStT",
    optional: "",
    long: &[
        ("ignore-leading-blanks", Arg::No),
        ("dictionary-order", Arg::No),
        ("ignore-case", Arg::No),
        ("general-numeric-sort", Arg::No),
        ("ignore-nonprinting", Arg::No),
        ("month-sort", Arg::No),
        ("human-numeric-sort", Arg::No),
        ("numeric-sort", Arg::No),
        ("random-sort", Arg::No),
        ("random-source", Arg::Required),
        ("reverse", Arg::No),
        ("sort", Arg::Required),
        ("version-sort", Arg::No),
        ("batch-size", Arg::Required),
        ("check", Arg::Optional),
        ("debug", Arg::No),
        ("key", Arg::Required),
        ("merge", Arg::No),
        ("stable", Arg::No),
        ("buffer-size", Arg::Required),
        ("field-separator", Arg::Required),
        ("temporary-directory", Arg::Required),
        ("parallel", Arg::Required),
        ("unique", Arg::No),
        ("zero-terminated", Arg::No),
        ("help", Arg::No),
        ("version", Arg::No),
    ],
    refused_short: &[('o', WRITES_OUTPUT)],
    refused_long: &[
        ("output", WRITES_OUTPUT),
        (
            "files0-from",
            "reads the names of the files to sort from a file, which gate cannot see",
        ),
        (
            "compress-program",
            "runs a program to compress temporary files",
        ),
    ],
    operands: Operands::Any,
};

static UNIQ: Options = Options {
    style: Style::Getopt,
    flags: "cdDiuz0123456789",
    values: "fsw",
    optional: "",
    long: &[
        ("count", Arg::No),
        ("repeated", Arg::No),
        ("all-repeated", Arg::Optional),
        ("skip-fields", Arg::Required),
        ("group", Arg::Optional),
        ("ignore-case", Arg::No),
        ("skip-chars", Arg::Required),
        ("unique", Arg::No),
        ("zero-terminated", Arg::No),
        ("check-chars", Arg::Required),
        ("help", Arg::No),
        ("version", Arg::No),
    ],
    refused_short: &[],
    refused_long: &[],
    operands: Operands::AtMostOne,
};

const SETS_CLOCK: &str = "sets the system clock";

static DATE: Options = Options {
    style: Style::Getopt,
    flags: "Ru",
    values: "dfr",
    optional: "I",
    long: &[
        ("date", Arg::Required),
        ("debug", Arg::No),
        ("file", Arg::Required),
        ("iso-8601", Arg::Optional),
        ("reference", Arg::Required),
        ("resolution", Arg::No),
        ("rfc-email", Arg::No),
        ("rfc-3339", Arg::Required),
        ("utc", Arg::No),
        ("universal", Arg::No),
        ("help", Arg::No),
        ("version", Arg::No),
    ],
    refused_short: &[('s', SETS_CLOCK)],
    refused_long: &[("set", SETS_CLOCK)],
    operands: Operands::DateFormat,
};

const DECOMPRESSES: &str = "runs decompression programs";

static FILE: Options = Options {
    style: Style::Getopt,
    flags: "bcdEhiklLnNrsv0",
    values: "efFmP",
    optional: "",
    long: &[
        ("help", Arg::No),
        ("version", Arg::No),
        ("magic-file", Arg::Required),
        ("brief", Arg::No),
        ("checking-printout", Arg::No),
        ("exclude", Arg::Required),
        ("exclude-quiet", Arg::Required),
        ("files-from", Arg::Required),
        ("separator", Arg::Required),
        ("mime", Arg::No),
        ("apple", Arg::No),
        ("extension", Arg::No),
        ("mime-type", Arg::No),
        ("mime-encoding", Arg::No),
        ("keep-going", Arg::No),
        ("list", Arg::No),
        ("dereference", Arg::No),
        ("no-dereference", Arg::No),
        ("no-buffer", Arg::No),
        ("no-pad", Arg::No),
        ("print0", Arg::No),
        ("parameter", Arg::Required),
        ("raw", Arg::No),
        ("special-files", Arg::No),
        ("debug", Arg::No),
    ],
    refused_short: &[
        ('C', "writes a compiled magic file"),
        ('z', DECOMPRESSES),
        ('Z', DECOMPRESSES),
        ('p', "sets the access times of the files back"),
        ('S', "turns off file's own sandbox"),
    ],
    refused_long: &[
        ("compile", "writes a compiled magic file"),
        ("uncompress", DECOMPRESSES),
        ("uncompress-noreport", DECOMPRESSES),
        ("preserve-date", "sets the access times of the files back"),
        ("no-sandbox", "turns off file's own sandbox"),
    ],
    operands: Operands::Any,
};

static TREE: Options = Options {
    style: Style::NextWords,
    flags: "acdfghilnpqrstuvxACDFJQNSUX",
    values: "LPIHT",
    optional: "",
    long: &[
        ("gitignore", Arg::No),
        ("gitfile", Arg::Required),
        ("ignore-case", Arg::No),
        ("matchdirs", Arg::No),
        ("metafirst", Arg::No),
        ("prune", Arg::No),
        ("infofile", Arg::Required),
        ("noreport", Arg::No),
        ("charset", Arg::Required),
        ("filelimit", Arg::Required),
        ("si", Arg::No),
        ("du", Arg::No),
        ("timefmt", Arg::Required),
        ("inodes", Arg::No),
        ("device", Arg::No),
        ("dirsfirst", Arg::No),
        ("filesfirst", Arg::No),
        ("sort", Arg::Required),
        ("nolinks", Arg::No),
        ("hintro", Arg::Required),
        ("houtro", Arg::Required),
        ("fromfile", Arg::No),
        ("fflinks", Arg::No),
        ("version", Arg::No),
        ("help", Arg::No),
    ],
    refused_short: &[
        ('o', "writes the listing to a file"),
        ('R', "reruns tree and writes 00Tree.html files"),
    ],
    refused_long: &[(
        "info",
        "prints comments from the `.info` files it finds, through links gate has not looked \
         at",
    )],
    operands: Operands::Any,
};

const FOLLOWS_LINKS: &str =
    "follows every link under the directories it searches, which gate has not looked at";

const PREPROCESSOR: &str = "runs a preprocessor program on the files searched";

static RG: Options = Options {
    style: Style::Getopt,
    flags: "abcFhHiIlnNopPqsSuUvVwx0.",
    values: "ABCdeEfgjmMrtT",
    optional: "",
    long: &[
        ("after-context", Arg::Required),
        ("auto-hybrid-regex", Arg::No),
        ("before-context", Arg::Required),
        ("binary", Arg::No),
        ("block-buffered", Arg::No),
        ("byte-offset", Arg::No),
        ("case-sensitive", Arg::No),
        ("color", Arg::Required),
        ("colors", Arg::Required),
        ("column", Arg::No),
        ("context", Arg::Required),
        ("context-separator", Arg::Required),
        ("count", Arg::No),
        ("count-matches", Arg::No),
        ("crlf", Arg::No),
        ("debug", Arg::No),
        ("dfa-size-limit", Arg::Required),
        ("encoding", Arg::Required),
        ("engine", Arg::Required),
        ("field-context-separator", Arg::Required),
        ("field-match-separator", Arg::Required),
        ("file", Arg::Required),
        ("files", Arg::No),
        ("files-with-matches", Arg::No),
        ("files-without-match", Arg::No),
        ("fixed-strings", Arg::No),
        ("generate", Arg::Required),
        ("glob", Arg::Required),
        ("glob-case-insensitive", Arg::No),
        ("heading", Arg::No),
        ("help", Arg::No),
        ("hidden", Arg::No),
        ("hyperlink-format", Arg::Required),
        ("iglob", Arg::Required),
        ("ignore", Arg::No),
        ("ignore-case", Arg::No),
        ("ignore-dot", Arg::No),
        ("ignore-exclude", Arg::No),
        ("ignore-file", Arg::Required),
        ("ignore-file-case-insensitive", Arg::No),
        ("ignore-files", Arg::No),
        ("ignore-global", Arg::No),
        ("ignore-messages", Arg::No),
        ("ignore-parent", Arg::No),
        ("ignore-vcs", Arg::No),
        ("include-zero", Arg::No),
        ("invert-match", Arg::No),
        ("json", Arg::No),
        ("line-buffered", Arg::No),
        ("line-number", Arg::No),
        ("line-regexp", Arg::No),
        ("max-columns", Arg::Required),
        ("max-columns-preview", Arg::No),
        ("max-count", Arg::Required),
        ("max-depth", Arg::Required),
        ("maxdepth", Arg::Required),
        ("max-filesize", Arg::Required),
        ("messages", Arg::No),
        ("mmap", Arg::No),
        ("multiline", Arg::No),
        ("multiline-dotall", Arg::No),
        ("no-auto-hybrid-regex", Arg::No),
        ("no-binary", Arg::No),
        ("no-block-buffered", Arg::No),
        ("no-byte-offset", Arg::No),
        ("no-column", Arg::No),
        ("no-config", Arg::No),
        ("no-context-separator", Arg::No),
        ("no-crlf", Arg::No),
        ("no-encoding", Arg::No),
        ("no-filename", Arg::No),
        ("no-fixed-strings", Arg::No),
        ("no-follow", Arg::No),
        ("no-glob-case-insensitive", Arg::No),
        ("no-heading", Arg::No),
        ("no-hidden", Arg::No),
        ("no-ignore", Arg::No),
        ("no-ignore-dot", Arg::No),
        ("no-ignore-exclude", Arg::No),
        ("no-ignore-file-case-insensitive", Arg::No),
        ("no-ignore-files", Arg::No),
        ("no-ignore-global", Arg::No),
        ("no-ignore-messages", Arg::No),
        ("no-ignore-parent", Arg::No),
        ("no-ignore-vcs", Arg::No),
        ("no-include-zero", Arg::No),
        ("no-invert-match", Arg::No),
        ("no-json", Arg::No),
        ("no-line-buffered", Arg::No),
        ("no-line-number", Arg::No),
        ("no-max-columns-preview", Arg::No),
        ("no-messages", Arg::No),
        ("no-mmap", Arg::No),
        ("no-multiline", Arg::No),
        ("no-multiline-dotall", Arg::No),
        ("no-one-file-system", Arg::No),
        ("no-pcre2", Arg::No),
        ("no-pcre2-unicode", Arg::No),
        ("no-pre", Arg::No),
        ("no-require-git", Arg::No),
        ("no-search-zip", Arg::No),
        ("no-sort-files", Arg::No),
        ("no-stats", Arg::No),
        ("no-text", Arg::No),
        ("no-trim", Arg::No),
        ("no-unicode", Arg::No),
        ("null", Arg::No),
        ("null-data", Arg::No),
        ("one-file-system", Arg::No),
        ("only-matching", Arg::No),
        ("passthrough", Arg::No),
        ("passthru", Arg::No),
        ("path-separator", Arg::Required),
        ("pcre2", Arg::No),
        ("pcre2-unicode", Arg::No),
        ("pcre2-version", Arg::No),
        ("pretty", Arg::No),
        ("quiet", Arg::No),
        ("regex-size-limit", Arg::Required),
        ("regexp", Arg::Required),
        ("replace", Arg::Required),
        ("require-git", Arg::No),
        ("smart-case", Arg::No),
        ("sort", Arg::Required),
        ("sort-files", Arg::No),
        ("sortr", Arg::Required),
        ("stats", Arg::No),
        ("stop-on-nonmatch", Arg::No),
        ("text", Arg::No),
        ("threads", Arg::Required),
        ("trace", Arg::No),
        ("trim", Arg::No),
        ("type", Arg::Required),
        ("type-add", Arg::Required),
        ("type-clear", Arg::Required),
        ("type-list", Arg::No),
        ("type-not", Arg::Required),
        ("unicode", Arg::No),
        ("unrestricted", Arg::No),
        ("version", Arg::No),
        ("vimgrep", Arg::No),
        ("with-filename", Arg::No),
        ("word-regexp", Arg::No),
    ],
    refused_short: &[('z', DECOMPRESSES), ('L', FOLLOWS_LINKS)],
    refused_long: &[
        ("follow", FOLLOWS_LINKS),
        ("pre", PREPROCESSOR),
        ("pre-glob", "chooses the files for the `--pre` preprocessor"),
        ("search-zip", DECOMPRESSES),
        ("hostname-bin", "runs a program to find the host name"),
    ],
    operands: Operands::Any,
};

static SED: Options = Options {
    style: Style::Getopt,
    flags: "bnrsuzE",
    values: "el",
    optional: "",
    long: &[
        ("binary", Arg::No),
        ("debug", Arg::No),
        ("expression", Arg::Required),
        ("follow-symlinks", Arg::No),
        ("line-length", Arg::Required),
        ("null-data", Arg::No),
        ("posix", Arg::No),
        ("quiet", Arg::No),
        ("regexp-extended", Arg::No),
        ("sandbox", Arg::No),
        ("separate", Arg::No),
        ("silent", Arg::No),
        ("unbuffered", Arg::No),
        ("zero-terminated", Arg::No),
        ("help", Arg::No),
        ("version", Arg::No),
    ],
    refused_short: &[
        ('i', "edits the files in place"),
        ('f', "reads the script from a file, which gate cannot see"),
    ],
    refused_long: &[
        ("in-place", "edits the files in place"),
        (
            "file",
            "reads the script from a file, which gate cannot see",
        ),
    ],
    operands: Operands::Any,
};

const FIND_REFUSED: [(&str, &str); 9] = [
    ("-exec", "runs a program"),
    ("-execdir", "runs a program"),
    ("-ok", "runs a program"),
    ("-okdir", "runs a program"),
    ("-delete", "deletes files"),
    ("-fprint", "writes a file"),
    ("-fprint0", "writes a file"),
    ("-fprintf", "writes a file"),
    ("-fls", "writes a file"),
];

/// git's global options (before the subcommand) that the preset allows. git compares
/// them whole: it takes no abbreviation here.
const GIT_GLOBAL: [&str; 10] = [
    "--no-pager",
    "-P",
    "--no-optional-locks",
    "--no-lazy-fetch",
    "--no-replace-objects",
    "--no-advice",
    "--literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
];

const GIT_CONFIG: &str = "sets configuration, and configuration names programs git runs \
    (`core.pager`, `core.fsmonitor`, `diff.external`, aliases)";
const GIT_REPO: &str = "makes git use another repository, and git trusts that \
    repository's configuration, which can name programs to run";

const GIT_GLOBAL_REFUSED: [(&str, &str); 8] = [
    ("-c", GIT_CONFIG),
    ("--config-env", GIT_CONFIG),
    ("-C", GIT_REPO),
    ("--git-dir", GIT_REPO),
    ("--work-tree", GIT_REPO),
    ("-p", "starts the pager, a program from the configuration"),
    (
        "--paginate",
        "starts the pager, a program from the configuration",
    ),
    (
        "--exec-path",
        "changes where git finds the programs it runs",
    ),
];

/// Options refused after the subcommand, with any abbreviation (`--out`), since git
/// accepts unique abbreviations for many subcommands.
const GIT_SUB_REFUSED: [(&str, &str); 5] = [
    ("output", "writes the output to a file"),
    (
        "open-files-in-pager",
        "runs the pager, or the program given, on the files found",
    ),
    (
        "ext-diff",
        "runs the external diff program named in the configuration",
    ),
    (
        "textconv",
        "runs the text conversion programs named in the configuration",
    ),
    (
        "show-signature",
        "runs gpg (`gpg.program`) to check signatures",
    ),
];

/// Options spelled out in full that are also abbreviations of a refused one: git takes
/// an exact name first.
const GIT_SUB_EXACT: [&str; 1] = ["text"];

static GIT_BRANCH: Options = Options {
    style: Style::Getopt,
    flags: "alqirv",
    values: "",
    optional: "",
    long: &[
        ("all", Arg::No),
        ("remotes", Arg::No),
        ("list", Arg::No),
        ("verbose", Arg::No),
        ("quiet", Arg::No),
        ("ignore-case", Arg::No),
        ("show-current", Arg::No),
        ("omit-empty", Arg::No),
        ("color", Arg::Optional),
        ("no-color", Arg::No),
        ("column", Arg::Optional),
        ("no-column", Arg::No),
        ("abbrev", Arg::Optional),
        ("no-abbrev", Arg::No),
        ("contains", Arg::NextIfAny),
        ("no-contains", Arg::NextIfAny),
        ("merged", Arg::NextIfAny),
        ("no-merged", Arg::NextIfAny),
        ("points-at", Arg::Required),
        ("sort", Arg::Required),
        ("format", Arg::Required),
    ],
    refused_short: &[
        ('d', "deletes a branch"),
        ('D', "deletes a branch"),
        ('m', "renames a branch"),
        ('M', "renames a branch"),
        ('c', "copies a branch"),
        ('C', "copies a branch"),
        ('f', "forces a change"),
        ('u', "sets the upstream"),
        ('t', "sets up tracking"),
    ],
    refused_long: &[
        ("delete", "deletes a branch"),
        ("move", "renames a branch"),
        ("copy", "copies a branch"),
        ("force", "forces a change"),
        ("set-upstream-to", "sets the upstream"),
        ("unset-upstream", "removes the upstream"),
        ("track", "sets up tracking"),
        ("edit-description", "starts an editor"),
        ("create-reflog", "creates a reflog"),
    ],
    operands: Operands::WithList,
};

// ---------------------------------------------------------------------------------------
// Words

/// One word of the command, after quote removal, and what the shell may do to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Word {
    pub(super) text: String,
    /// It contains an unquoted pattern character, so the shell may replace it by other
    /// words, several or none.
    pub(super) expands: bool,
    /// It contains an unquoted pattern character other than a leading `~`: the shell
    /// replaces it with file names.
    pub(super) glob: bool,
    /// It starts with an unquoted `~`, which the shell replaces with a home directory.
    pub(super) tilde: bool,
    /// What it expands to may start with `-`.
    option_like: bool,
    /// It starts with an unquoted `#`: the shell reads the rest as a comment.
    comment: bool,
}

/// Pattern characters: the POSIX ones, and `^` and `~` (and `#` inside a word) for zsh
/// with `EXTENDED_GLOB`. A leading `~` is tilde expansion in every shell.
fn is_pattern_char(c: char) -> bool {
    matches!(c, '*' | '?' | '[' | '^' | '~')
}

/// The words of `text`, read by the shell's word reader ([`crate::shells::words`]),
/// with what the shell may do to each. The text has no backslash, `$` or backquote (the
/// caller refused those), so quoting is only `'…'` and `"…"`. Words in a comment are
/// kept, marked: if a shell did not read the comment as one, they would be arguments.
/// `None` when a quote is not closed, or when the reader stops at anything else.
pub(super) fn split_words(text: &str) -> Option<Vec<Word>> {
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
fn is_assignment(word: &str) -> bool {
    let Some((name, _)) = word.split_once('=') else {
        return false;
    };
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

// ---------------------------------------------------------------------------------------
// Secrets

/// Where secrets are kept, as path components below a home directory: the sandbox's
/// `deny_read` defaults (`crate::sandbox::spec::DEFAULT_DENY_READ`; a test keeps the two
/// lists together) and the agents' own credential files. A command whose words name one
/// of these is not read-only: what it prints goes to the model.
pub const SECRET_LOCATIONS: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
    ".config/gh",
    ".password-store",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials.toml",
    ".cargo/credentials",
    ".vault-token",
    // Claude Code: its login (Linux) and the key it stores when you approve one.
    ".claude/.credentials.json",
    ".claude.json",
    ".codex/auth.json",
    ".gemini/oauth_creds.json",
    ".qwen/oauth_creds.json",
];

/// The secret location `word` names, if any: one of [`SECRET_LOCATIONS`] as consecutive
/// components anywhere in it (`~/.ssh/id_rsa`, `/home/me/.aws`, `--file=.netrc`,
/// `HEAD:.npmrc`). In an
/// unquoted pattern, a component matches when the pattern could match the name
/// (`~/.s*/id_rsa`).
fn names_secret(word: &Word) -> Option<&'static str> {
    let components: Vec<&str> = word
        .text
        .split(['/', '=', ':'])
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    SECRET_LOCATIONS.iter().copied().find(|secret| {
        let wanted: Vec<&str> = secret.split('/').collect();
        components.windows(wanted.len()).any(|window| {
            window
                .iter()
                .zip(&wanted)
                .all(|(have, want)| have == want || (word.expands && pattern_may_match(have, want)))
        })
    })
}

/// Whether the shell pattern `pattern` (`*`, `?`, `[…]`, and the zsh characters treated
/// as "anything") could match `name`. Over-approximates: a bracket matches any one
/// character, `^` and `~` match anything.
fn pattern_may_match(pattern: &str, name: &str) -> bool {
    fn go(p: &[char], n: &[char]) -> bool {
        match p.split_first() {
            None => n.is_empty(),
            Some(('*' | '^' | '~' | '#', rest)) => (0..=n.len()).any(|k| go(rest, &n[k..])),
            Some(('?', rest)) => !n.is_empty() && go(rest, &n[1..]),
            Some(('[', rest)) => {
                let close = rest.iter().skip(1).position(|&c| c == ']').map(|at| at + 1);
                match close {
                    Some(at) => !n.is_empty() && go(&rest[at + 1..], &n[1..]),
                    None => n.first() == Some(&'[') && go(rest, &n[1..]),
                }
            }
            Some((c, rest)) => n.first() == Some(c) && go(rest, &n[1..]),
        }
    }
    // A leading `.` is matched only by a literal one (bash without `dotglob`, zsh
    // without `GLOB_DOTS`; gate starts the shell without the user's start-up files).
    if name.starts_with('.') && !pattern.starts_with('.') {
        return false;
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    go(&p, &n)
}

/// Environment variables that hold no secret by convention: `printenv` may show these.
pub const SHOWN_VARIABLES: &[&str] = &[
    "HOME",
    "PATH",
    "USER",
    "LOGNAME",
    "SHELL",
    "PWD",
    "OLDPWD",
    "LANG",
    "LANGUAGE",
    "TERM",
    "TZ",
    "TMPDIR",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "HOSTNAME",
    "SHLVL",
    "COLUMNS",
    "LINES",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_CACHE_HOME",
    "XDG_RUNTIME_DIR",
];

fn is_shown_variable(name: &str) -> bool {
    SHOWN_VARIABLES.contains(&name)
        || name
            .strip_prefix("LC_")
            .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_uppercase()))
}

/// `printenv [-0|--null] NAME...`, every NAME one of [`SHOWN_VARIABLES`].
fn check_printenv(entry: &'static Entry, args: &[Word]) -> Result<(), NotReadOnly> {
    let mut names = 0;
    let mut operands = false;
    for word in args {
        let text = word.text.as_str();
        if !operands && text == "--" {
            operands = true;
        } else if !operands && matches!(text, "-0" | "--null") {
        } else if !operands && text.starts_with('-') {
            return Err(entry.refuse(format!("`printenv`: `{text}` is not an option it knows")));
        } else if is_shown_variable(text) {
            names += 1;
        } else {
            return Err(entry.refuse(format!(
                "`printenv {text}`: only variables that hold no secret by convention are \
                 shown unasked (`HOME`, `PATH`, `USER`, ...); `{text}` is not one of them"
            )));
        }
    }
    if names == 0 {
        return Err(entry.refuse(
            "`printenv` without a name prints the whole environment, where agents keep their \
             API keys"
                .to_owned(),
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Options

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Opt {
    Short(char),
    Long(&'static str),
}

#[derive(Debug, Default)]
struct Parsed<'w> {
    opts: Vec<(Opt, Option<&'w str>)>,
    /// Indexes of the operands in the argument words.
    operands: Vec<usize>,
}

impl Parsed<'_> {
    fn has(&self, short: char, long: &'static str) -> bool {
        self.opts
            .iter()
            .any(|(o, _)| *o == Opt::Short(short) || *o == Opt::Long(long))
    }
}

fn glob_as_option(entry: &Entry, word: &Word) -> NotReadOnly {
    entry.refuse(format!(
        "`{}`: the unquoted pattern `{}` could expand to a file name that starts with `-` \
         and then act as an option",
        entry.name, word.text
    ))
}

fn glob_moves_words(entry: &Entry, word: &Word) -> NotReadOnly {
    entry.refuse(format!(
        "`{}`: the unquoted pattern `{}` could expand to several words or none, which \
         changes what the words after it mean",
        entry.name, word.text
    ))
}

/// The next word as an option's value.
fn take_value<'w>(
    entry: &Entry,
    args: &'w [Word],
    next: &mut usize,
    option: &str,
) -> Result<&'w str, NotReadOnly> {
    let Some(word) = args.get(*next) else {
        return Err(entry.refuse(format!(
            "`{}`: the option `{option}` lacks its value",
            entry.name
        )));
    };
    *next += 1;
    if word.expands {
        return Err(glob_moves_words(entry, word));
    }
    Ok(&word.text)
}

fn refused_long(entry: &Entry, spec: &Options, name: &str) -> NotReadOnly {
    for (refused, why) in spec.refused_long {
        if *refused == name {
            return entry.refuse(format!("`{}`: the option `--{name}` {why}", entry.name));
        }
        if !name.is_empty() && refused.starts_with(name) {
            return entry.refuse(format!(
                "`{}`: `--{name}` abbreviates `--{refused}`, which {why}",
                entry.name
            ));
        }
    }
    entry.refuse(format!(
        "`{}`: the option `--{name}` is not one the preset knows (long options must be \
         spelled out in full)",
        entry.name
    ))
}

fn refused_short(entry: &Entry, spec: &Options, c: char) -> Option<NotReadOnly> {
    spec.refused_short
        .iter()
        .find(|(r, _)| *r == c)
        .map(|(_, why)| entry.refuse(format!("`{}`: the option `-{c}` {why}", entry.name)))
}

/// Parse the arguments by `spec`: every option must be known and not refused, and the
/// entry's rule for patterns and operands must hold.
fn parse_options<'w>(
    entry: &Entry,
    spec: &Options,
    args: &'w [Word],
) -> Result<Parsed<'w>, NotReadOnly> {
    let mut parsed = Parsed::default();
    let mut next = 0;
    let mut options_ended = false;
    while next < args.len() {
        let index = next;
        let word = &args[index];
        next += 1;
        if entry.globs == Globs::Never && word.expands {
            return Err(glob_moves_words(entry, word));
        }
        if !options_ended && word.option_like {
            return Err(glob_as_option(entry, word));
        }
        let text = word.text.as_str();
        if options_ended || text == "-" || !text.starts_with('-') {
            parsed.operands.push(index);
            continue;
        }
        if text == "--" {
            options_ended = true;
            continue;
        }
        if let Some(long) = text.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (long, None),
            };
            let Some(&(name, arg)) = spec.long.iter().find(|(n, _)| *n == name) else {
                return Err(refused_long(entry, spec, name));
            };
            let value = match (arg, attached) {
                (Arg::No, Some(_)) => {
                    return Err(entry.refuse(format!(
                        "`{}`: the option `--{name}` takes no value",
                        entry.name
                    )));
                }
                (Arg::No, None) => None,
                (_, Some(value)) => Some(value),
                (Arg::Optional, None) => None,
                (Arg::Required, None) => Some(take_value(entry, args, &mut next, text)?),
                (Arg::NextIfAny, None) if next < args.len() => {
                    Some(take_value(entry, args, &mut next, text)?)
                }
                (Arg::NextIfAny, None) => None,
            };
            parsed.opts.push((Opt::Long(name), value));
            continue;
        }
        let cluster = &text[1..];
        let mut pending = 0;
        for (at, c) in cluster.char_indices() {
            if let Some(refusal) = refused_short(entry, spec, c) {
                return Err(refusal);
            }
            if spec.flags.contains(c) {
                parsed.opts.push((Opt::Short(c), None));
                continue;
            }
            let rest = &cluster[at + c.len_utf8()..];
            if spec.values.contains(c) {
                if spec.style == Style::NextWords {
                    pending += 1;
                    parsed.opts.push((Opt::Short(c), None));
                    continue;
                }
                let value = if rest.is_empty() {
                    take_value(entry, args, &mut next, &format!("-{c}"))?
                } else {
                    rest
                };
                parsed.opts.push((Opt::Short(c), Some(value)));
                break;
            }
            if spec.optional.contains(c) {
                parsed
                    .opts
                    .push((Opt::Short(c), Some(rest).filter(|r| !r.is_empty())));
                break;
            }
            return Err(entry.refuse(format!(
                "`{}`: the option `-{c}` is not one the preset knows",
                entry.name
            )));
        }
        for _ in 0..pending {
            take_value(entry, args, &mut next, text)?;
        }
    }
    check_operands(entry, spec, &parsed, args)?;
    Ok(parsed)
}

fn check_operands(
    entry: &Entry,
    spec: &Options,
    parsed: &Parsed<'_>,
    args: &[Word],
) -> Result<(), NotReadOnly> {
    let operands = || parsed.operands.iter().map(|&i| args[i].text.as_str());
    match spec.operands {
        Operands::Any => Ok(()),
        Operands::AtMostOne if parsed.operands.len() > 1 => Err(entry.refuse(format!(
            "`{}`: a second operand names the file it writes to",
            entry.name
        ))),
        Operands::AtMostOne => Ok(()),
        Operands::DateFormat => {
            if parsed.operands.len() > 1 {
                return Err(entry.refuse(format!(
                    "`{}` takes at most one operand, a `+FORMAT`",
                    entry.name
                )));
            }
            match operands().find(|op| !op.starts_with('+')) {
                Some(op) => Err(entry.refuse(format!(
                    "`{}`: the operand `{op}` does not start with `+`, so it {SETS_CLOCK}",
                    entry.name
                ))),
                None => Ok(()),
            }
        }
        Operands::NoPlus => match operands().find(|op| op.starts_with('+')) {
            Some(op) => Err(entry.refuse(format!(
                "`{}`: the operand `{op}` can be read as the obsolete `+N` option, which \
                 can follow a file forever",
                entry.name
            ))),
            None => Ok(()),
        },
        Operands::WithList => match operands().next() {
            Some(op) if !parsed.has('l', "list") => Err(entry.refuse(format!(
                "`{}`: without `--list`, the operand `{op}` is the name of a branch to create",
                entry.name
            ))),
            _ => Ok(()),
        },
    }
}

// ---------------------------------------------------------------------------------------
// sed

fn check_sed(entry: &Entry, args: &[Word]) -> Result<(), NotReadOnly> {
    let parsed = parse_options(entry, &SED, args)?;
    let quiet = parsed
        .opts
        .iter()
        .any(|(o, _)| matches!(o, Opt::Short('n') | Opt::Long("quiet" | "silent")));
    if !quiet {
        return Err(entry.refuse(
            "`sed` without `-n` is not in the preset; write `sed -n` and print commands \
             (`sed -n '5,10p' FILE`)"
                .to_owned(),
        ));
    }
    let mut scripts: Vec<&str> = parsed
        .opts
        .iter()
        .filter(|(o, _)| matches!(o, Opt::Short('e') | Opt::Long("expression")))
        .filter_map(|(_, v)| *v)
        .collect();
    if scripts.is_empty() {
        // The script is the first operand. A pattern in it, or before it, could change
        // which word that is.
        let Some(&at) = parsed.operands.first() else {
            return Err(entry.refuse("`sed` without a script".to_owned()));
        };
        if let Some(word) = args[..=at].iter().find(|w| w.expands) {
            return Err(glob_moves_words(entry, word));
        }
        scripts.push(&args[at].text);
    }
    for script in scripts {
        if let Err(why) = sed_script(script) {
            return Err(entry.refuse(format!("`sed`: the script `{script}` {why}")));
        }
    }
    Ok(())
}

/// A cursor over a sed script.
struct Script<'a> {
    rest: &'a str,
}

impl Script<'_> {
    fn peek(&self) -> Option<char> {
        self.rest.chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.rest = &self.rest[c.len_utf8()..];
        Some(c)
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.bump();
        }
    }

    fn digits(&mut self) -> bool {
        let mut any = false;
        while matches!(self.peek(), Some('0'..='9')) {
            self.bump();
            any = true;
        }
        any
    }

    /// Everything up to `delimiter`, which is consumed. No escapes exist here: the
    /// command text has no backslash.
    fn until(&mut self, delimiter: char) -> Result<(), &'static str> {
        loop {
            match self.bump() {
                None => return Err("has an unterminated regular expression"),
                Some(c) if c == delimiter => return Ok(()),
                Some(_) => {}
            }
        }
    }

    /// `/regex/` and its `I`/`M` flags.
    fn regex_address(&mut self) -> Result<(), &'static str> {
        self.until('/')?;
        while matches!(self.peek(), Some('I' | 'M')) {
            self.bump();
        }
        Ok(())
    }
}

/// Whether `script` is one print-only sed command: `[address[,address]][!]command`, the
/// command one of `p = l q Q`, or `s` with harmless flags.
fn sed_script(script: &str) -> Result<(), &'static str> {
    let mut s = Script { rest: script };
    s.blanks();
    if s.eat('/') {
        s.regex_address()?;
    } else if s.digits() && s.eat('~') && !s.digits() {
        return Err("has a `first~step` address without a step");
    }
    s.blanks();
    if s.eat(',') {
        s.blanks();
        if s.eat('/') {
            s.regex_address()?;
        } else {
            if !s.eat('+') {
                s.eat('~');
            }
            if !s.digits() {
                return Err("has an address range without an end");
            }
        }
        s.blanks();
    }
    if s.eat('!') {
        s.blanks();
    }
    match s.bump() {
        Some('p' | '=') => {}
        Some('l' | 'q' | 'Q') => {
            s.blanks();
            s.digits();
        }
        Some('s') => {
            let Some(delimiter) = s.bump().filter(|c| c.is_ascii_punctuation()) else {
                return Err("has an `s` command with an unusual delimiter");
            };
            s.until(delimiter)?;
            s.until(delimiter)?;
            while let Some(flag) = s.peek() {
                match flag {
                    'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9' => {
                        s.bump();
                    }
                    'e' => return Err("has the `s` flag `e`, which runs the line as a command"),
                    'w' => return Err("has the `s` flag `w`, which writes a file"),
                    _ => break,
                }
            }
        }
        Some('e') => return Err("has the command `e`, which runs a command"),
        Some('w' | 'W') => return Err("has a `w` command, which writes a file"),
        Some('r' | 'R') => return Err("has an `r` command, which reads a file gate cannot see"),
        Some(_) => return Err("has a command that is not one of `p = l q Q s`"),
        None => return Err("has no command"),
    }
    s.blanks();
    if s.peek().is_some() {
        return Err("has more after its command");
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// find

fn check_find(entry: &Entry, args: &[Word]) -> Result<(), NotReadOnly> {
    for word in args {
        if let Some((primary, why)) = FIND_REFUSED.iter().find(|(p, _)| *p == word.text) {
            return Err(entry.refuse(format!("`find`: `{primary}` {why}")));
        }
        if word.option_like {
            return Err(glob_as_option(entry, word));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// grep

/// grep's short options that take a value: a cluster ends at one (`-e PATTERN`,
/// `-f FILE`, `-A NUM`).
const GREP_VALUES: &str = "ABCDdefm";

/// grep's long options that are refused; any prefix of them too, as getopt reads one.
const GREP_REFUSED_LONG: [(&str, &str); 2] = [
    (
        "dereference-recursive",
        "follows every link under the directories it searches, which gate has not looked at",
    ),
    ("devices", "reads the devices it meets while recursing"),
];

fn check_grep(entry: &Entry, args: &[Word]) -> Result<(), NotReadOnly> {
    for word in args {
        let text = word.text.as_str();
        if text == "--" {
            break;
        }
        if let Some(long) = text.strip_prefix("--") {
            let name = long.split_once('=').map_or(long, |(n, _)| n);
            if let Some((refused, why)) = GREP_REFUSED_LONG
                .iter()
                .find(|(r, _)| !name.is_empty() && r.starts_with(name))
            {
                return Err(entry.refuse(if *refused == name {
                    format!("`{}`: the option `--{name}` {why}", entry.name)
                } else {
                    format!(
                        "`{}`: `--{name}` abbreviates `--{refused}`, which {why}",
                        entry.name
                    )
                }));
            }
            continue;
        }
        let Some(cluster) = text.strip_prefix('-') else {
            continue;
        };
        for c in cluster.chars() {
            let why = match c {
                'R' => GREP_REFUSED_LONG[0].1,
                'D' => GREP_REFUSED_LONG[1].1,
                _ if GREP_VALUES.contains(c) => break,
                _ => continue,
            };
            return Err(entry.refuse(format!("`{}`: the option `-{c}` {why}", entry.name)));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// jq

/// jq 1.6's options without a value.
const JQ_FLAGS: &str = "nrjascCMSeRhV";
const JQ_LONG: [&str; 21] = [
    "--tab",
    "--seq",
    "--stream",
    "--stream-errors",
    "--unbuffered",
    "--slurp",
    "--raw-input",
    "--null-input",
    "--compact-output",
    "--color-output",
    "--monochrome-output",
    "--ascii-output",
    "--sort-keys",
    "--raw-output",
    "--join-output",
    "--exit-status",
    "--help",
    "--version",
    "--build-configuration",
    "--args",
    "--jsonargs",
];
/// jq's options with one value, and with two (a name and a value or file).
const JQ_ONE: [&str; 2] = ["--indent", "--library-path"];
const JQ_TWO: [&str; 4] = ["--arg", "--argjson", "--slurpfile", "--rawfile"];

/// Names a jq filter may not use: the environment, and modules read from files.
const JQ_REFUSED: [(&str, &str); 7] = [
    ("env", "the environment, where agents keep their API keys"),
    ("import", "a module from a file"),
    ("include", "a module from a file"),
    ("modulemeta", "a module's metadata, from a file"),
    ("get_search_list", "where modules are looked for"),
    ("get_prog_origin", "where the program is"),
    ("get_jq_origin", "where jq is"),
];

fn check_jq(entry: &Entry, args: &[Word]) -> Result<(), NotReadOnly> {
    let mut filter = None;
    let mut positional = false;
    let mut at = 0;
    while let Some(word) = args.get(at) {
        at += 1;
        let text = word.text.as_str();
        if positional || text == "-" || !text.starts_with('-') {
            filter.get_or_insert(text);
            continue;
        }
        if text == "--" {
            positional = true;
            continue;
        }
        if text.starts_with("--") {
            if JQ_LONG.contains(&text) {
                continue;
            }
            if JQ_ONE.contains(&text) {
                at += 1;
                continue;
            }
            if JQ_TWO.contains(&text) {
                at += 2;
                continue;
            }
            return Err(entry.refuse(if text == "--from-file" {
                "`jq`: `--from-file` reads the program from a file, which gate cannot see"
                    .to_owned()
            } else {
                format!("`jq`: the option `{text}` is not one the preset knows")
            }));
        }
        for (i, c) in text.char_indices().skip(1) {
            match c {
                _ if JQ_FLAGS.contains(c) => {}
                'L' => {
                    if i + 1 == text.len() {
                        at += 1;
                    }
                    break;
                }
                'f' => {
                    return Err(entry.refuse(
                        "`jq`: `-f` reads the program from a file, which gate cannot see"
                            .to_owned(),
                    ));
                }
                _ => {
                    return Err(entry.refuse(format!(
                        "`jq`: the option `-{c}` is not one the preset knows"
                    )));
                }
            }
        }
    }
    match filter.map(jq_filter) {
        Some(Err((name, what))) => Err(entry.refuse(format!(
            "`jq`: the filter uses `{name}`, which reads {what}"
        ))),
        _ => Ok(()),
    }
}

/// The first refused name a jq filter calls, if any. A name right after one `.` is a
/// field (`.env`), a name inside `"…"` is text, and `#` starts a comment; the command
/// has no backslash, so strings hold no escapes or interpolation.
fn jq_filter(filter: &str) -> Result<(), (&'static str, &'static str)> {
    let chars: Vec<char> = filter.chars().collect();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        match c {
            '"' => {
                i += 1;
                while chars.get(i).is_some_and(|&q| q != '"') {
                    i += 1;
                }
                i += 1;
            }
            '#' => {
                while chars.get(i).is_some_and(|&n| n != '\n') {
                    i += 1;
                }
            }
            _ if c.is_ascii_alphabetic() || c == '_' => {
                let start = i;
                while chars
                    .get(i)
                    .is_some_and(|&n| n.is_ascii_alphanumeric() || n == '_')
                {
                    i += 1;
                }
                let name: String = chars[start..i].iter().collect();
                let field =
                    start >= 1 && chars[start - 1] == '.' && (start < 2 || chars[start - 2] != '.');
                if !field {
                    if let Some(refused) = JQ_REFUSED.iter().find(|(r, _)| *r == name) {
                        return Err(*refused);
                    }
                }
            }
            _ => i += 1,
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// git

/// The git entry, and where the words after its subcommand start in `args`.
fn check_git(args: &[Word]) -> Result<(&'static Entry, usize), NotReadOnly> {
    let mut at = 0;
    while let Some(word) = args.get(at).filter(|w| w.text.starts_with('-')) {
        let text = word.text.as_str();
        if word.expands {
            return Err(NotReadOnly::plain(format!(
                "`git`: the unquoted pattern `{text}` could expand to any global option"
            )));
        }
        if !GIT_GLOBAL.contains(&text) {
            let name = text.split_once('=').map_or(text, |(n, _)| n);
            let why = GIT_GLOBAL_REFUSED.iter().find(|(o, _)| *o == name).map_or(
                "is not one of the global options the preset allows",
                |(_, w)| w,
            );
            return Err(NotReadOnly::plain(format!(
                "`git`: the global option `{text}` {why}"
            )));
        }
        at += 1;
    }
    let Some(sub) = args.get(at) else {
        return Err(NotReadOnly::plain(
            "`git` without a subcommand is not in the preset".to_owned(),
        ));
    };
    let entry = ENTRIES
        .iter()
        .find(|e| {
            matches!(e.check, Check::Git(_)) && e.name.strip_prefix("git ") == Some(&sub.text)
        })
        .filter(|_| !sub.expands)
        .ok_or_else(|| {
            NotReadOnly::plain(format!("`git {}` is not in the read-only preset", sub.text))
        })?;
    let rest = &args[at + 1..];
    match entry.check {
        Check::Git(GitSub::Branch) => parse_options(entry, &GIT_BRANCH, rest).map(drop),
        Check::Git(GitSub::Grep) => {
            check_git_words(entry, rest).and_then(|()| check_git_grep_short(entry, rest))
        }
        _ => check_git_words(entry, rest),
    }
    .map(|()| (entry, at + 1))
}

/// `git grep`'s short options: `-O` in a cluster, unless a letter before it takes the
/// rest of the word as its value (`-e`, `-f`, `-A`, `-B`, `-C`, `-m`). A word that is the
/// value of the option before it is checked too, so `-e -O` is asked about.
fn check_git_grep_short(entry: &Entry, rest: &[Word]) -> Result<(), NotReadOnly> {
    for word in rest {
        let Some(cluster) = word.text.strip_prefix('-') else {
            continue;
        };
        if cluster.starts_with('-') {
            continue;
        }
        for c in cluster.chars() {
            if c == 'O' {
                return Err(entry.refuse(format!(
                    "`git grep`: `-O` in `{}` runs the pager, or the program given, on \
                     the files found",
                    word.text
                )));
            }
            if "efABCm".contains(c) {
                break;
            }
        }
    }
    Ok(())
}

/// Every word after the subcommand: no refused option or abbreviation of one, wherever
/// it is (even as another option's value or after `--`), and no pattern that could
/// become an option.
fn check_git_words(entry: &Entry, rest: &[Word]) -> Result<(), NotReadOnly> {
    for word in rest {
        if word.option_like {
            return Err(glob_as_option(entry, word));
        }
        let Some(long) = word.text.strip_prefix("--") else {
            continue;
        };
        let name = long.split_once('=').map_or(long, |(n, _)| n);
        if name.is_empty() || GIT_SUB_EXACT.contains(&name) {
            continue;
        }
        if let Some((refused, why)) = GIT_SUB_REFUSED.iter().find(|(r, _)| r.starts_with(name)) {
            return Err(entry.refuse(if *refused == name {
                format!("`{}`: the option `--{name}` {why}", entry.name)
            } else {
                format!(
                    "`{}`: `--{name}` abbreviates `--{refused}`, which {why}",
                    entry.name
                )
            }));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
