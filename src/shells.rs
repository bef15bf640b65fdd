//! Shell facts, in one place: which programs are shells, which language each one's
//! text is, how each reads its own options (which take a value, which hand it a command
//! string), which start-up files it reads, which names gate answers to as a shim, the
//! reserved words; the shell's characters and how each shell reads its quotes
//! ([`quoting`]); and the one reader of a shell word ([`words`]).
//!
//! Every reader takes them from here: the deny-rule scanner ([`crate::policy::scan`],
//! for `bash -c '…'` inside a command, and for how each shell's quotes read), gate's
//! own argument parser ([`crate::invocation`]), the clean start
//! ([`crate::exec::start_files`]), the shim lookups ([`crate::exec`],
//! [`crate::doctor`]), the agents' wrapper check ([`crate::policy::wrapper`]), the
//! read-only preset, compound mode, the allow rules' checks and `gate import`'s
//! writer of words. The option tables were measured against the shells
//! themselves on Debian 12 (bash 5.2, dash 0.5.12, zsh 5.9, fish 3.6, ksh93u+m 1.0.4,
//! mksh 59c, yash 2.52, posh 0.14.1, busybox 1.35).
//!
//! Lookups are static tables: no allocation, a handful of string comparisons.

#![forbid(unsafe_code)]

pub mod quoting;
pub mod words;

pub use quoting::{ANY_SHELL, Quoting, SHELL_CHARS};

/// The language of a shell's command text, as far as gate's scanner tells them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// POSIX sh as dash reads it: no `$'…'`, `&>` is `&` then `>`.
    Posix,
    /// bash (also `rbash`, and bash as `sh`).
    Bash,
    /// zsh: bash's quoting, plus its own expansions (`=cmd`, glob qualifiers).
    Zsh,
    /// The Korn shells (ksh93, mksh, pdksh and its descendants): bash's quoting.
    Ksh,
    /// fish: `\'` and `\\` are escapes inside single quotes; `(…)` substitutes.
    Fish,
    /// A shell whose language gate does not read (csh, tcsh, rc, PowerShell, nushell
    /// …): every argument word is read as a command text, the best guess there is.
    Opaque,
}

impl Dialect {
    /// The readings of a text this shell runs ([`Quoting`]): bash's first, for every
    /// shell (the reading gate has always taken), then each other one this dialect may
    /// read it with, which a reader takes where the text holds a form it reads
    /// differently ([`Quoting::differs_in`]). A POSIX `sh` may be dash, busybox or bash
    /// (Fedora's), and the Korn shells and the languages gate does not read are not
    /// measured, so they take every reading.
    pub fn readings(self) -> &'static [Quoting] {
        match self {
            Dialect::Bash => &[Quoting::BASH],
            Dialect::Zsh => &[Quoting::BASH, Quoting::BUSYBOX],
            Dialect::Fish => &[Quoting::BASH, Quoting::FISH],
            Dialect::Posix | Dialect::Ksh | Dialect::Opaque => ANY_SHELL,
        }
    }
}

/// A shell's start-up files: which it reads and how to start it without them (see
/// [`crate::exec::start_files`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// bash, also as `sh` or `rbash`: `--norc`, not a login shell.
    Bash,
    /// zsh: `-f`, not a login shell (zsh as `sh` reads `~/.profile` despite `-f`).
    Zsh,
    /// dash, ash, busybox, and a `sh` that is none of the others: not a login shell
    /// (an interactive one then reads only `$ENV`).
    Posix,
    /// fish: `--no-config` (login or not, it then reads nothing of the user's).
    Fish,
    /// Any other shell (ksh, mksh, yash …), whose start-up files gate has not measured:
    /// not a login shell, and never an interactive one (ksh and mksh read `~/.kshrc` or
    /// `~/.mkshrc` then, without `$ENV`).
    Other,
}

/// How a shell is handed a command string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandString {
    /// `-c` (alone or in a cluster, `-lc`; `+c` too) makes the first operand after the
    /// options the command string: `bash -c -e -- 'CMD' NAME ARGS…`.
    FirstOperand,
    /// Each of these options' values is a command string, run in turn: fish's
    /// `-c CMD`, `-C CMD`, `--command=CMD`, `--init-command=CMD`.
    OptionValue,
    /// Every word may be one ([`Dialect::Opaque`]).
    AnyWord,
}

/// How a shell reads its option section.
#[derive(Debug)]
pub struct Options {
    pub command: CommandString,
    /// The letters that make a command string: `c` (fish also `C`).
    pub command_letters: &'static [u8],
    /// The other letters whose option takes a value (bash `-o NAME`, `-O NAME`).
    pub value_letters: &'static [u8],
    /// A value letter's value may be the rest of its cluster (`zsh -oerrexit`, getopt's
    /// rule). Otherwise (bash, dash) the value is always the next word, and the letters
    /// after it in the cluster are options of their own (`bash -co errexit CMD`).
    pub attached_values: bool,
    /// Long options that take a value, `--name VALUE` or `--name=VALUE`.
    pub long_with_value: &'static [&'static str],
    /// Long options whose value is a command string ([`CommandString::OptionValue`]).
    pub long_command_values: &'static [&'static str],
    /// Long options that act as `-c` ([`CommandString::FirstOperand`]).
    pub long_command_flags: &'static [&'static str],
    /// Names of `-o NAME` that act as `-c` (yash's `-o cmdline`).
    pub set_o_command: &'static [&'static str],
    /// A long option (and a `-o` name) may be abbreviated to a unique prefix (getopt_long,
    /// yash); otherwise only the whole name counts (bash).
    pub long_prefixes: bool,
}

/// bash's long options, as gate's own parser passes them through (exact names only).
pub const BASH_LONG_OPTIONS: &[&str] = &[
    "--debug",
    "--debugger",
    "--dump-po-strings",
    "--dump-strings",
    "--help",
    "--login",
    "--noediting",
    "--noprofile",
    "--norc",
    "--posix",
    "--pretty-print",
    "--protected",
    "--restricted",
    "--verbose",
    "--version",
    "--wordexp",
];

/// bash's long options that take the next word as their value (bash matches its long
/// options exactly, never by prefix).
pub const BASH_LONG_WITH_VALUE: &[&str] = &["--rcfile", "--init-file"];

/// bash: `-o NAME` and `-O NAME` take the next word, whatever follows in the cluster.
pub static BASH: Options = Options {
    command: CommandString::FirstOperand,
    command_letters: b"c",
    value_letters: b"oO",
    attached_values: false,
    long_with_value: BASH_LONG_WITH_VALUE,
    long_command_values: &[],
    long_command_flags: &[],
    set_o_command: &[],
    long_prefixes: false,
};

/// dash and busybox sh: `-o NAME` takes the next word (`-oNAME` is an error).
pub static POSIX: Options = Options {
    command: CommandString::FirstOperand,
    command_letters: b"c",
    value_letters: b"o",
    ..NO_OPTIONS
};

/// zsh: `-o NAME` or `-oNAME` (`-O` is an option letter without a value); long options
/// are option names (`--shwordsplit`), and `--emulate NAME` takes one.
pub static ZSH: Options = Options {
    command: CommandString::FirstOperand,
    command_letters: b"c",
    value_letters: b"o",
    attached_values: true,
    long_with_value: &["--emulate"],
    long_command_values: &[],
    long_command_flags: &[],
    set_o_command: &[],
    long_prefixes: false,
};

/// ksh93, posh: `-o NAME` or `-oNAME`.
pub static KSH: Options = Options {
    command: CommandString::FirstOperand,
    command_letters: b"c",
    value_letters: b"o",
    attached_values: true,
    ..NO_OPTIONS
};

/// mksh, lksh: also `-T TTY`.
pub static MKSH: Options = Options {
    value_letters: b"oT",
    ..KSH
};

/// yash: getopt_long with abbreviations; `--cmdline` and `-o cmdline` are `-c`.
pub static YASH: Options = Options {
    command: CommandString::FirstOperand,
    command_letters: b"c",
    value_letters: b"o",
    attached_values: true,
    long_with_value: &["--profile", "--rcfile"],
    long_command_values: &[],
    long_command_flags: &["--cmdline"],
    set_o_command: &["cmdline"],
    long_prefixes: true,
};

/// fish: getopt_long (`+hPilNnvc:C:p:d:f:D:o:`); every `-c`/`-C` value runs.
pub static FISH: Options = Options {
    command: CommandString::OptionValue,
    command_letters: b"cC",
    value_letters: b"pdfDo",
    attached_values: true,
    long_with_value: &[
        "--debug",
        "--debug-output",
        "--debug-stack-frames",
        "--features",
        "--profile",
        "--profile-startup",
    ],
    long_command_values: &["--command", "--init-command"],
    long_command_flags: &[],
    set_o_command: &[],
    long_prefixes: true,
};

/// No options at all: what [`OPAQUE`] and [`MULTI_CALL`] differ from only in where the
/// command string is.
const NO_OPTIONS: Options = Options {
    command: CommandString::AnyWord,
    command_letters: b"",
    value_letters: b"",
    attached_values: false,
    long_with_value: &[],
    long_command_values: &[],
    long_command_flags: &[],
    set_o_command: &[],
    long_prefixes: false,
};

/// A shell gate cannot read: every word counts.
pub static OPAQUE: Options = Options {
    command: CommandString::AnyWord,
    ..NO_OPTIONS
};

/// A multi-call program whose applets gate's scanner reads as a wrapper (`busybox sh
/// -c …` is `sh -c …`): it hands no command string itself.
pub static MULTI_CALL: Options = Options {
    command: CommandString::FirstOperand,
    ..NO_OPTIONS
};

/// One shell.
#[derive(Debug)]
pub struct Shell {
    /// The program's name (the file name, without a version suffix: see [`named`]).
    pub name: &'static str,
    pub dialect: Dialect,
    pub options: &'static Options,
    pub family: Family,
    /// gate acts as this shell when it is called by this name (a shim).
    pub shim: bool,
}

const fn shell(
    name: &'static str,
    dialect: Dialect,
    options: &'static Options,
    family: Family,
    shim: bool,
) -> Shell {
    Shell {
        name,
        dialect,
        options,
        family,
        shim,
    }
}

/// Every shell gate knows, shims first in the order `gate doctor` lists them.
pub static SHELLS: &[Shell] = &[
    shell("sh", Dialect::Posix, &POSIX, Family::Posix, true),
    shell("bash", Dialect::Bash, &BASH, Family::Bash, true),
    shell("dash", Dialect::Posix, &POSIX, Family::Posix, true),
    shell("zsh", Dialect::Zsh, &ZSH, Family::Zsh, true),
    shell("ksh", Dialect::Ksh, &KSH, Family::Other, true),
    shell("mksh", Dialect::Ksh, &MKSH, Family::Other, true),
    shell("ash", Dialect::Posix, &POSIX, Family::Posix, true),
    shell("yash", Dialect::Posix, &YASH, Family::Other, true),
    shell("fish", Dialect::Fish, &FISH, Family::Fish, true),
    // Restricted shells: the same program under another name.
    shell("rbash", Dialect::Bash, &BASH, Family::Bash, false),
    shell("rzsh", Dialect::Zsh, &ZSH, Family::Zsh, false),
    shell("mksh-static", Dialect::Ksh, &MKSH, Family::Other, false),
    shell("lksh", Dialect::Ksh, &MKSH, Family::Other, false),
    shell("pdksh", Dialect::Ksh, &KSH, Family::Other, false),
    shell("oksh", Dialect::Ksh, &KSH, Family::Other, false),
    shell("loksh", Dialect::Ksh, &KSH, Family::Other, false),
    shell("posh", Dialect::Posix, &KSH, Family::Other, false),
    shell("hush", Dialect::Posix, &POSIX, Family::Other, false),
    shell("busybox", Dialect::Posix, &MULTI_CALL, Family::Posix, false),
    // Languages gate does not read.
    shell("csh", Dialect::Opaque, &OPAQUE, Family::Other, false),
    shell("tcsh", Dialect::Opaque, &OPAQUE, Family::Other, false),
    shell("rc", Dialect::Opaque, &OPAQUE, Family::Other, false),
    shell("es", Dialect::Opaque, &OPAQUE, Family::Other, false),
    shell("elvish", Dialect::Opaque, &OPAQUE, Family::Other, false),
    shell("nu", Dialect::Opaque, &OPAQUE, Family::Other, false),
    shell("xonsh", Dialect::Opaque, &OPAQUE, Family::Other, false),
    shell("pwsh", Dialect::Opaque, &OPAQUE, Family::Other, false),
    shell("ysh", Dialect::Opaque, &OPAQUE, Family::Other, false),
    shell("osh", Dialect::Bash, &BASH, Family::Other, false),
];

/// The shell a program called `name` (a file name, no directory) is: its name as
/// written, or with a version suffix of digits, `.` and `-` (`bash5.2`, `zsh-5.9`,
/// `ksh93`). `None` for any other program.
pub fn named(name: &str) -> Option<&'static Shell> {
    // No name in the table ends in a digit, `.` or `-`, so this is the name as written
    // when it is in the table (and empty for a name of digits alone: no shell).
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
    SHELLS.iter().find(|s| s.name == base)
}

/// [`named`] for bytes (an `OsStr`'s): not UTF-8 is no shell.
pub fn named_bytes(name: &[u8]) -> Option<&'static Shell> {
    std::str::from_utf8(name).ok().and_then(named)
}

/// The names gate answers to as a shell shim (`sh`, `bash` …), in table order.
pub fn shim_names() -> impl Iterator<Item = &'static str> {
    SHELLS.iter().filter(|s| s.shim).map(|s| s.name)
}

/// Whether gate answers to `name` as a shell shim.
pub fn is_shim_name(name: &str) -> bool {
    SHELLS.iter().any(|s| s.shim && s.name == name)
}

/// The shells agents run their commands through (their `SHELL`, and what Codex's
/// wrapper execs): gate's shims for them mark a shim directory on `PATH`.
pub const AGENT_SHELLS: [&str; 3] = ["bash", "sh", "zsh"];

/// Words that bash or zsh reads as syntax, not as a program, where a command name goes.
/// A part that starts with one of them is not a simple command, so compound mode
/// ([`crate::policy::compound`]) refuses it. (Its scan refuses the characters `{` and
/// `}` anywhere; they are listed too so that this list does not depend on that.)
pub const RESERVED_WORDS: [&str; 26] = [
    "!",
    "[[",
    "]]",
    "{",
    "}",
    "case",
    "coproc",
    "do",
    "done",
    "elif",
    "else",
    "end",
    "esac",
    "fi",
    "for",
    "foreach",
    "function",
    "if",
    "in",
    "nocorrect",
    "repeat",
    "select",
    "then",
    "time",
    "until",
    "while",
];

/// Reserved words after which a command may follow in the same simple command's place
/// (`if rm …; then rm …; fi`, `while …; do rm …; done`, `! rm …`), so the deny-rule
/// scanner reads the words after them as a command. fish's `and`, `or` and `not` run
/// the command after them too (`true; and rm x`); to bash they are program names that
/// do not exist, so reading them so costs nothing there.
pub const PREFIX_WORDS: [&str; 12] = [
    "!", "if", "then", "elif", "else", "while", "until", "do", "coproc", "and", "or", "not",
];

/// A command string among a shell's arguments: `args[word][from..]` (`from` is past
/// the option for fish's `-cCMD` and `--command=CMD`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    pub word: usize,
    pub from: usize,
}

/// Where a shell's arguments (after its name) hold a command string, as that shell
/// reads its options, in order. Words read as something other than options before the
/// command string (`NAME`, a script's arguments) are not in it.
///
/// A word computed at run time cannot be placed: `computed(i)` says which are. Where
/// the command string goes, a computed word is one (`bash -c "$CMD"`); in the option
/// section, every word after it may be one (`bash $OPT 'rm x'` may be
/// `bash -c 'rm x'`).
pub fn command_strings<T: AsRef<str>>(
    options: &Options,
    args: &[T],
    computed: impl Fn(usize) -> bool,
) -> Vec<Found> {
    let whole = |word| Found { word, from: 0 };
    let mut found = Vec::new();
    if options.command == CommandString::AnyWord {
        found.extend((0..args.len()).map(whole));
        return found;
    }
    let mut command_flag = false;
    let mut i = 0;
    while i < args.len() {
        if computed(i) {
            if command_flag && options.command == CommandString::FirstOperand {
                break;
            }
            found.extend((i + 1..args.len()).map(whole));
            return found;
        }
        let t = args[i].as_ref();
        if t == "--" || t == "-" {
            i += 1;
            break;
        }
        let is_option = (t.starts_with('-') || t.starts_with('+')) && t.len() > 1;
        if !is_option {
            break;
        }
        if let Some(long) = t.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let is = |table: &[&str]| long_matches(options, table, name);
            if is(options.long_command_values) {
                if inline.is_some() {
                    found.push(Found {
                        word: i,
                        from: 2 + name.len() + 1,
                    });
                } else {
                    i += 1;
                    if i < args.len() {
                        found.push(whole(i));
                    }
                }
            } else if is(options.long_command_flags) {
                command_flag = true;
            } else if is(options.long_with_value) && inline.is_none() {
                i += 1;
            }
            i += 1;
            continue;
        }
        // A cluster of letters: `-lc`, `-co NAME`, `-oNAME` (getopt), `+o NAME`.
        let letters = &t.as_bytes()[1..];
        let mut next_values = 0usize;
        for (at, &letter) in letters.iter().enumerate() {
            let attached = at + 2 < t.len();
            let command = options.command_letters.contains(&letter);
            if command && options.command == CommandString::OptionValue {
                // fish: the value is the rest of the cluster, or the next word.
                if attached {
                    found.push(Found {
                        word: i,
                        from: at + 2,
                    });
                } else {
                    next_values += 1;
                    if i + next_values < args.len() {
                        found.push(whole(i + next_values));
                    }
                }
                break;
            }
            command_flag |= command;
            if options.value_letters.contains(&letter) {
                if options.attached_values && attached {
                    command_flag |= letter == b'o' && set_o_command(options, &t[at + 2..]);
                    break;
                }
                next_values += 1;
                if letter == b'o' {
                    if let Some(name) = args.get(i + next_values) {
                        command_flag |= set_o_command(options, name.as_ref());
                    }
                }
                if options.attached_values {
                    break;
                }
            }
        }
        i += 1 + next_values;
    }
    if command_flag && options.command == CommandString::FirstOperand && i < args.len() {
        found.push(whole(i));
    }
    found
}

fn long_matches(options: &Options, table: &[&str], name: &str) -> bool {
    table.iter().any(|full| {
        let full = full.trim_start_matches("--");
        full == name || (options.long_prefixes && !name.is_empty() && full.starts_with(name))
    })
}

fn set_o_command(options: &Options, name: &str) -> bool {
    options.set_o_command.iter().any(|full| {
        *full == name || (options.long_prefixes && !name.is_empty() && full.starts_with(name))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(shell: &str, args: &[&str]) -> Vec<String> {
        let shell = named(shell).expect("a shell");
        command_strings(shell.options, args, |_| false)
            .into_iter()
            .map(|f| args[f.word][f.from..].to_owned())
            .collect()
    }

    #[test]
    fn every_name_appears_once_and_has_no_version_suffix() {
        for (i, a) in SHELLS.iter().enumerate() {
            assert!(
                !a.name
                    .ends_with(|c: char| c.is_ascii_digit() || c == '.' || c == '-'),
                "{}",
                a.name
            );
            assert!(
                SHELLS[i + 1..].iter().all(|b| b.name != a.name),
                "{} twice",
                a.name
            );
        }
    }

    #[test]
    fn a_version_suffix_names_the_same_shell() {
        for (name, shell) in [
            ("bash5.2", "bash"),
            ("bash-5.2", "bash"),
            ("zsh-5.9", "zsh"),
            ("ksh93", "ksh"),
            ("rbash", "rbash"),
            ("mksh-static", "mksh-static"),
            ("sh", "sh"),
        ] {
            assert_eq!(named(name).map(|s| s.name), Some(shell), "{name}");
        }
        for name in ["", "5.2", "bashful", "shx", "fishy", "ssh", "python3", "-"] {
            assert!(named(name).is_none(), "{name}");
        }
    }

    #[test]
    fn the_shims_are_the_shells_gate_has_always_answered_to() {
        assert_eq!(
            shim_names().collect::<Vec<_>>(),
            [
                "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "fish"
            ]
        );
        assert!(is_shim_name("bash") && !is_shim_name("rbash") && !is_shim_name("bash5"));
        for name in AGENT_SHELLS {
            assert!(is_shim_name(name), "{name}");
        }
    }

    #[test]
    fn the_command_string_is_the_first_operand_after_the_options() {
        let rows: &[(&str, &[&str], &[&str])] = &[
            ("bash", &["-c", "CMD", "name", "arg"], &["CMD"]),
            ("bash", &["-lc", "CMD"], &["CMD"]),
            ("bash", &["+c", "CMD"], &["CMD"]),
            ("bash", &["-c", "-e", "--", "CMD"], &["CMD"]),
            ("bash", &["-c", "-", "CMD"], &["CMD"]),
            ("bash", &["-c", "-o", "errexit", "CMD"], &["CMD"]),
            ("bash", &["-co", "errexit", "CMD"], &["CMD"]),
            (
                "bash",
                &["-oO", "errexit", "extglob", "-c", "CMD"],
                &["CMD"],
            ),
            ("bash", &["--rcfile", "F", "-c", "CMD"], &["CMD"]),
            ("bash", &["--norc", "script", "-c"], &[]),
            ("bash", &["script.sh"], &[]),
            ("rbash", &["-c", "CMD"], &["CMD"]),
            ("dash", &["-ec", "CMD"], &["CMD"]),
            ("zsh", &["-O", "-c", "CMD"], &["CMD"]),
            ("zsh", &["-oerrexit", "-c", "CMD"], &["CMD"]),
            ("zsh", &["-co", "errexit", "CMD"], &["CMD"]),
            ("zsh", &["--emulate", "sh", "-c", "CMD"], &["CMD"]),
            ("ksh93", &["-oerrexit", "-c", "CMD"], &["CMD"]),
            ("mksh", &["-T", "/dev/tty1", "-c", "CMD"], &["CMD"]),
            ("yash", &["-o", "cmdline", "CMD"], &["CMD"]),
            ("yash", &["-ocmd", "CMD"], &["CMD"]),
            ("yash", &["--cmdl", "CMD"], &["CMD"]),
            ("yash", &["--rcfile", "F", "-c", "CMD"], &["CMD"]),
            ("yash", &["--rcfile=F", "-c", "CMD"], &["CMD"]),
            ("posh", &["-oerrexit", "-c", "CMD"], &["CMD"]),
        ];
        for (shell, args, want) in rows {
            assert_eq!(strings(shell, args), *want, "{shell} {args:?}");
        }
    }

    #[test]
    fn every_fish_command_option_value_runs() {
        let rows: &[(&[&str], &[&str])] = &[
            (&["-c", "A", "x"], &["A"]),
            (&["-cA"], &["A"]),
            (&["-C", "I", "-c", "A"], &["I", "A"]),
            (&["-c", "A", "-c", "B"], &["A", "B"]),
            (&["--command=A"], &["A"]),
            (&["--comm=A", "-CB"], &["A", "B"]),
            (&["--comm", "A"], &["A"]),
            (&["--init", "I", "-c", "A"], &["I", "A"]),
            (&["-d", "c", "-c", "A"], &["A"]),
            (&["-Ccd", "A"], &["cd"]),
            (&["-N", "script.fish", "-c", "A"], &[]),
        ];
        for (args, want) in rows {
            assert_eq!(strings("fish", args), *want, "{args:?}");
        }
    }

    #[test]
    fn a_computed_word_in_the_options_may_be_the_command_flag() {
        let words = |args: &[&str]| {
            command_strings(&BASH, args, |i| args[i].starts_with('$'))
                .into_iter()
                .map(|f| f.word)
                .collect::<Vec<_>>()
        };
        assert_eq!(words(&["-e", "$OPT", "CMD", "x"]), [2, 3]);
        assert_eq!(words(&["-c", "$CMD", "x"]), [1]);
        assert_eq!(words(&["$SCRIPT"]), [0usize; 0]);
    }

    #[test]
    fn an_opaque_shell_has_every_word_read() {
        assert_eq!(strings("tcsh", &["-f", "-c", "CMD"]), ["-f", "-c", "CMD"]);
        assert!(strings("busybox", &["sh", "-c", "CMD"]).is_empty());
    }
}
