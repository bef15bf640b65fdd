//! From argv to an [`Invocation`]: which personality gate runs as, gate's own options,
//! and what the caller wants run. This is the low stage of argument handling: it only
//! looks at the arguments, never at files or the environment (the one question it has
//! about a file, for a word that looks like a mistyped subcommand, its caller answers).
//!
//! Two personalities:
//! - **gate** (argv0 is `gate` or anything that is not a shell name): gate's long options,
//!   subcommands (`gate check`), `gate -- PROGRAM ARGS…`, and every shell-style form
//!   (`-c`, `-lc`, `-l -c`, `--login`, …) so that gate can be `$SHELL`.
//! - **shim** (argv0 is `bash`, `sh`, `zsh`…, a link to gate): pure shell parsing. gate's
//!   own options are not recognised; everything goes to the real shell of that name.
//!
//! The shell-style forms, the shims and `gate check` are parsed here by hand, from the
//! option tables in [`crate::cli`]: that is the hot path, and it never builds a clap
//! command. The other subcommands' arguments are parsed by clap from their definitions
//! there (`cli::parse_subcommand`).
//!
//! Shell arguments are passed to the real shell unchanged and in order; gate only takes
//! out its own options.
//!
//! This file tells the forms apart (a subcommand, `gate help`, the shell-compatible
//! forms) and holds what they make; `shell.rs` reads the shell-compatible forms,
//! `gate_args.rs` keeps gate's options as given, `subcommands.rs` turns a subcommand's
//! parsed arguments into its [`Action`].

#![forbid(unsafe_code)]

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;

use crate::cli::{self, GATE_OPTIONS, Parsed, SubcommandSpec};

mod gate_args;
mod shell;
mod subcommands;

pub use gate_args::GateArgs;
use shell::{GateMode, parse_shell_args, take_gate_long_option};
use subcommands::subcommand_action;

/// How gate was called.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Personality {
    Gate,
    /// Called as a shell of this name (argv0's file name, without a login `-`).
    Shim {
        name: String,
    },
}

/// What a shell invocation asks the shell to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShellWork {
    /// `-c COMMAND [NAME [ARGS…]]`.
    Command(OsString),
    /// `SCRIPT [ARGS…]`: a file the shell reads.
    Script(Vec<OsString>),
    /// No command: an interactive or login shell, or commands read from standard input.
    Session,
    /// Only `--version` or only `--help` (a shim asked what shell it is): the shell
    /// prints and exits without reading any command.
    Info,
}

/// What is to be run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Run the real shell with `args` (everything after argv0 except gate's own options,
    /// in order and unchanged).
    Shell {
        args: Vec<OsString>,
        work: ShellWork,
        /// Where the operands start in `args`: before it the option section (with its
        /// `--` or `-` when there is one), from it the command or script and its
        /// arguments.
        operands_at: usize,
    },
    /// `gate -- PROGRAM ARGS…`: exec the program directly, no shell.
    Program { argv: Vec<OsString> },
}

/// The action an invocation asks of gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Run(Target),
    Check {
        target: Target,
        json: bool,
    },
    /// `gate doctor [--json]`: what this machine can enforce.
    Doctor {
        json: bool,
    },
    /// `gate rules [--json]`: the rules in force and what the lock allows.
    Rules {
        json: bool,
    },
    /// `gate trust [--revoke | --list] [FILE]`: the person's word on a project file.
    Trust {
        action: crate::project::command::TrustAction,
        file: Option<OsString>,
    },
    /// `gate serve [--requests-socket PATH]`: the approval broker.
    Serve {
        requests_socket: Option<std::path::PathBuf>,
    },
    /// `gate pending [--json]`.
    Pending {
        json: bool,
    },
    /// `gate approve ID [--remember] [--remember-rule RULE] [--always | --always-rule
    /// RULE]`.
    Approve {
        id: String,
        remember: bool,
        remember_rule: Option<String>,
        always: bool,
        always_rule: Option<String>,
    },
    /// `gate deny ID [--message TEXT]`.
    Refuse {
        id: String,
        message: Option<String>,
    },
    /// `gate watch`: approve on this terminal as requests arrive.
    Watch,
    /// `gate import AGENT [FILE...]`: an agent's rules as gate rules.
    Import(crate::import::apply::ImportArgs),
    /// `gate completions SHELL`: print a completion script.
    Completions {
        shell: String,
    },
    /// `gate ask QUESTION [--option TEXT]... [--multiple]`.
    Ask {
        question: String,
        options: Vec<String>,
        multiple: bool,
    },
    /// `--help`: gate's, or a subcommand's (`gate approve --help`, `gate help approve`).
    Help {
        subcommand: Option<&'static str>,
    },
    Version,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    pub argv0: OsString,
    pub personality: Personality,
    pub gate: GateArgs,
    pub action: Action,
}

/// A usage error: gate's own failure (exit 125), with a message for the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

fn usage(message: impl Into<String>) -> UsageError {
    UsageError(message.into())
}

/// The personality for an argv0.
pub(crate) fn personality(argv0: &OsStr) -> Personality {
    let bytes = argv0.as_bytes();
    let file = bytes.rsplit(|&b| b == b'/').next().unwrap_or(bytes);
    let file = file.strip_prefix(b"-").unwrap_or(file);
    match std::str::from_utf8(file) {
        Ok(name) if crate::shells::is_shim_name(name) => Personality::Shim {
            name: name.to_owned(),
        },
        _ => Personality::Gate,
    }
}

/// Parse a whole argv (argv0 first). `exists` says whether a file of that name exists
/// in the working directory: a word that looks like a mistyped subcommand is a script
/// only when it does (see [`cli::meant_subcommand`]).
pub(crate) fn parse(
    argv: Vec<OsString>,
    exists: &dyn Fn(&OsStr) -> bool,
) -> Result<Invocation, UsageError> {
    let mut argv = argv.into_iter();
    let argv0 = argv.next().unwrap_or_else(|| OsString::from("gate"));
    let args: Vec<OsString> = argv.collect();
    let personality = personality(&argv0);
    let mut gate = GateArgs::default();
    let action = match personality {
        Personality::Shim { .. } => Action::Run(parse_shell_args(args, None)?),
        Personality::Gate => parse_gate(args, &mut gate, exists)?,
    };
    Ok(Invocation {
        argv0,
        personality,
        gate,
        action,
    })
}

/// gate's own personality: a subcommand, `gate help`, or the shell-compatible forms.
fn parse_gate(
    args: Vec<OsString>,
    gate: &mut GateArgs,
    exists: &dyn Fn(&OsStr) -> bool,
) -> Result<Action, UsageError> {
    let Some(at) = subcommand_at(&args) else {
        return parse_run(args, gate);
    };
    let word = args[at].to_str().unwrap_or("");
    if let Some(sub) = cli::subcommand(word) {
        return if sub.parsed_by_clap() {
            parse_subcommand(sub, args, at, gate)
        } else {
            parse_check(sub, args, at, gate)
        };
    }
    if word == "help" {
        return parse_help(args, at, gate);
    }
    match cli::meant_subcommand(word) {
        Some(meant) if !exists(&args[at]) => {
            // What is wrong before the word is said first.
            parse_gate_options(args[..at].to_vec(), gate)?;
            Err(usage(format!(
                "unknown subcommand `{word}`: did you mean `{meant}`? (gate help lists the \
                 subcommands; to run a script named {word}, write gate ./{word})"
            )))
        }
        _ => parse_run(args, gate),
    }
}

fn subcommand_names() -> String {
    cli::SUBCOMMANDS
        .iter()
        .map(|s| s.name)
        .chain(["help"])
        .collect::<Vec<_>>()
        .join(", ")
}

/// The shell-compatible forms: `-c COMMAND`, `-- PROGRAM`, a script, a session. The hot
/// path: no clap, only the tables.
fn parse_run(args: Vec<OsString>, gate: &mut GateArgs) -> Result<Action, UsageError> {
    let target = parse_shell_args(
        args,
        Some(GateMode {
            gate,
            check_json: None,
            subcommand: None,
        }),
    )?;
    if gate.help {
        return Ok(Action::Help { subcommand: None });
    }
    if gate.version {
        return Ok(Action::Version);
    }
    if let Target::Shell {
        args,
        work: ShellWork::Session,
        ..
    } = &target
    {
        // `gate -h` alone is someone looking for help, not a shell with hashall.
        if args.len() == 1 && args[0] == "-h" {
            return Err(usage(
                "-h is not gate's help: gate's own options are long (gate --help), and every \
                 short option is the shell's (-h alone would start an interactive shell with \
                 bash's hashall)",
            ));
        }
    }
    Ok(Action::Run(target))
}

/// `gate [OPTIONS] check ...`, by the hand parser: it takes a command as a run does (see
/// [`SubcommandSpec::parsed_by_clap`]).
fn parse_check(
    sub: &'static SubcommandSpec,
    mut args: Vec<OsString>,
    at: usize,
    gate: &mut GateArgs,
) -> Result<Action, UsageError> {
    let mut json = false;
    args.remove(at);
    let target = parse_shell_args(
        args,
        Some(GateMode {
            gate,
            check_json: Some(&mut json),
            subcommand: Some(sub),
        }),
    )?;
    if gate.help {
        return Ok(Action::Help {
            subcommand: Some(sub.name),
        });
    }
    if gate.version {
        return Ok(Action::Version);
    }
    match target {
        Target::Shell {
            work: ShellWork::Command(_),
            ..
        }
        | Target::Program { .. } => Ok(Action::Check { target, json }),
        _ => Err(usage(
            "check needs a command: gate check -c COMMAND, or gate check -- PROGRAM [ARGS...]; \
             see gate check --help",
        )),
    }
}

/// gate's long options before a subcommand's name: all of them are taken, for every
/// subcommand (an alias such as `gate --no-config` works with each).
fn parse_gate_options(args: Vec<OsString>, gate: &mut GateArgs) -> Result<(), UsageError> {
    let mut rest = args.into_iter().peekable();
    let mut mode = GateMode {
        gate,
        check_json: None,
        subcommand: None,
    };
    let mut shell_args = Vec::new();
    while let Some(arg) = rest.next() {
        take_gate_long_option(arg, &mut rest, &mut mode, &mut shell_args)?;
    }
    debug_assert!(
        shell_args.is_empty(),
        "subcommand_at lets only gate's options by"
    );
    Ok(())
}

/// Parse gate's options before the word at `at` (a subcommand's name) into `gate`, and
/// return the arguments after it.
fn gate_options_then_rest(
    mut args: Vec<OsString>,
    at: usize,
    gate: &mut GateArgs,
) -> Result<Vec<OsString>, UsageError> {
    let rest = args.split_off(at + 1);
    args.truncate(at);
    parse_gate_options(args, gate)?;
    Ok(rest)
}

/// `gate [OPTIONS] NAME ARGS...` for a subcommand clap parses.
fn parse_subcommand(
    sub: &'static SubcommandSpec,
    args: Vec<OsString>,
    at: usize,
    gate: &mut GateArgs,
) -> Result<Action, UsageError> {
    let rest = gate_options_then_rest(args, at, gate)?;
    let parsed = match cli::parse_subcommand(sub, rest).map_err(usage)? {
        Parsed::Help => {
            return Ok(Action::Help {
                subcommand: Some(sub.name),
            });
        }
        Parsed::Args(parsed) => parsed,
    };
    let mut own = Vec::new();
    for (spec, value) in parsed.options {
        if GATE_OPTIONS.iter().any(|o| o.name == spec.name) || cli::is_candidate_option(spec) {
            gate.set(spec, value)?;
        } else {
            own.push((spec.name, value));
        }
    }
    subcommand_action(sub.name, &own, parsed.operand, parsed.files)
}

/// `gate help [SUBCOMMAND]`.
fn parse_help(args: Vec<OsString>, at: usize, gate: &mut GateArgs) -> Result<Action, UsageError> {
    let rest = gate_options_then_rest(args, at, gate)?;
    match rest.as_slice() {
        [] => Ok(Action::Help { subcommand: None }),
        [word] => match word.to_str().and_then(cli::subcommand) {
            Some(sub) => Ok(Action::Help {
                subcommand: Some(sub.name),
            }),
            None => Err(usage(format!(
                "help: there is no subcommand {}; gate's subcommands are {}",
                shell_words::quote(&word.to_string_lossy()),
                subcommand_names()
            ))),
        },
        _ => Err(usage(
            "help takes at most one subcommand name: gate help [SUBCOMMAND]",
        )),
    }
}

/// Where a subcommand name would stand: the first argument after gate's own long
/// options (`gate --no-config check …`). Any other option first means there is none,
/// so `gate -l check` still runs a script called `check`; so does an option whose value
/// is missing or looks like an option (`gate --allow -c …`), which the shell-compatible
/// parser then reports.
fn subcommand_at(args: &[OsString]) -> Option<usize> {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let bytes = arg.as_bytes();
        if !bytes.starts_with(b"--") || bytes.len() == 2 {
            return (!bytes.starts_with(b"-")).then_some(i);
        }
        let (name, inline) = match bytes.iter().position(|&b| b == b'=') {
            Some(eq) => (&bytes[..eq], true),
            None => (bytes, false),
        };
        let spec = GATE_OPTIONS.iter().find(|o| o.name.as_bytes() == name)?;
        if spec.value.is_some() && !inline {
            if args
                .get(i + 1)
                .is_none_or(|value| value.as_bytes().starts_with(b"-"))
            {
                return None;
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests;
