//! The read-only preset as data: its entries (each program, or `git` and a subcommand, with
//! why it only reads and what is refused) and the option lists their checks read.
//!
//! Data only: the checks that read these lists are in the sibling modules, and a change
//! here is a change to what the preset allows (`docs/readonly.md` lists it).

use super::files::{Reading, Walk};
use super::{Arg, Check, Entry, GitSub, Globs, Operands, Options, Style};

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

const FOLLOWS: &str = "follows the file and never ends by itself";

pub(super) static TAIL: Options = Options {
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

pub(super) static SORT: Options = Options {
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

pub(super) static UNIQ: Options = Options {
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

pub(super) const SETS_CLOCK: &str = "sets the system clock";

pub(super) static DATE: Options = Options {
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

pub(super) static FILE: Options = Options {
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

pub(super) static TREE: Options = Options {
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

pub(super) static RG: Options = Options {
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

pub(super) static SED: Options = Options {
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

pub(super) const FIND_REFUSED: [(&str, &str); 9] = [
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
pub(super) const GIT_GLOBAL: [&str; 10] = [
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

pub(super) const GIT_GLOBAL_REFUSED: [(&str, &str); 8] = [
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
pub(super) const GIT_SUB_REFUSED: [(&str, &str); 5] = [
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
pub(super) const GIT_SUB_EXACT: [&str; 1] = ["text"];

pub(super) static GIT_BRANCH: Options = Options {
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
