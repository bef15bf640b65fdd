//! The read-only preset as data: its entries, each program or `git` and a subcommand, with
//! why it only reads, what is refused, and which check its arguments pass (the option
//! lists those checks read are in [`super::option_lists`]).
//!
//! Data only: the checks are in the sibling modules, and a change here is a change to
//! what the preset allows (`docs/readonly.md` lists it).

use super::files::{Reading, Walk};
use super::option_lists::{DATE, FILE, RG, SORT, TAIL, TREE, UNIQ};
use super::{Check, Entry, GitSub, Globs};

pub(super) const NOTHING: &str = "nothing: no option of it writes, deletes or runs anything";

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

pub(super) static ENTRIES: &[Entry] = &[
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
