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
//! there ([`cli::parse_subcommand`]).
//!
//! Shell arguments are passed to the real shell unchanged and in order; gate only takes
//! out its own options.

#![forbid(unsafe_code)]

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;

use crate::cli::{self, GATE_OPTIONS, OptionSpec, Parsed, SubcommandSpec};
use crate::config::Arg;
// Shell options are read as bash and dash read theirs: bash's long options pass through
// to the real shell, and those that take a value take the next argument.
use crate::shells::{BASH_LONG_OPTIONS as SHELL_LONG_OPTIONS, BASH_LONG_WITH_VALUE};

/// How gate was called.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Personality {
    Gate,
    /// Called as a shell of this name (argv0's file name, without a login `-`).
    Shim {
        name: String,
    },
}

/// gate's own options as given on the command line, not yet validated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GateArgs {
    pub level: Option<OsString>,
    pub allow: Vec<OsString>,
    pub deny: Vec<OsString>,
    pub ask: Vec<OsString>,
    pub unsandboxed: Vec<OsString>,
    pub shell: Option<OsString>,
    pub config: Option<OsString>,
    pub no_config: bool,
    /// `gate check`/`gate doctor --system-file FILE`: a candidate system file, loaded
    /// instead of the installed one (never taken by a run).
    pub system_file: Option<OsString>,
    /// `--system-drop-ins DIR`: a candidate drop-in directory, likewise.
    pub system_drop_ins: Option<OsString>,
    pub audit_log: Option<OsString>,
    pub timeout: Option<OsString>,
    pub session: Option<OsString>,
    pub socket: Option<OsString>,
    pub no_tty: bool,
    pub compound: bool,
    pub readonly: bool,
    pub readonly_rules: bool,
    pub write: Vec<OsString>,
    pub deny_read: Vec<OsString>,
    pub net: bool,
    pub net_connect: Vec<OsString>,
    pub net_bind: Vec<OsString>,
    pub allow_domain: Vec<OsString>,
    pub deny_domain: Vec<OsString>,
    pub resolve: Vec<OsString>,
    pub best_effort: bool,
    pub unix_sockets: bool,
    /// `--help` / `--version` in gate's option section.
    pub help: bool,
    pub version: bool,
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
pub fn personality(argv0: &OsStr) -> Personality {
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
pub fn parse(
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

/// The action of a subcommand clap parsed, from its own options (each occurrence, by
/// name) and its operand.
fn subcommand_action(
    name: &str,
    own: &[(&'static str, Option<OsString>)],
    operand: Option<OsString>,
    files: Vec<OsString>,
) -> Result<Action, UsageError> {
    let text = |v: OsString, what: &str| -> Result<String, UsageError> {
        v.into_string()
            .map_err(|_| usage(format!("{name}: the {what} is not valid UTF-8")))
    };
    let flag = |option: &str| own.iter().any(|(n, _)| *n == option);
    let single = |option: &str| -> Result<Option<String>, UsageError> {
        let mut values = own.iter().filter(|(n, _)| *n == option);
        let found = values.next().and_then(|(_, v)| v.clone());
        if values.next().is_some() {
            return Err(usage(format!("{name}: {option} was given twice")));
        }
        found.map(|v| text(v, option)).transpose()
    };
    let given = operand.clone();
    // clap has checked that the operand is there when the definition requires it.
    let operand = |what: &str| -> Result<String, UsageError> {
        match operand.clone() {
            Some(value) => text(value, what),
            None => Err(usage(format!("{name}: the {what} is missing"))),
        }
    };
    Ok(match name {
        "doctor" => Action::Doctor {
            json: flag("--json"),
        },
        "rules" => Action::Rules {
            json: flag("--json"),
        },
        "serve" => {
            let mut values = own.iter().filter(|(n, _)| *n == "--requests-socket");
            let requests_socket = values.next().and_then(|(_, v)| v.clone()).map(Into::into);
            if values.next().is_some() {
                return Err(usage("serve: --requests-socket was given twice"));
            }
            Action::Serve { requests_socket }
        }
        "watch" => Action::Watch,
        "import" => Action::Import(crate::import::apply::ImportArgs {
            agent: operand("agent")?,
            files: files.into_iter().map(std::path::PathBuf::from).collect(),
            project: flag("--project"),
            write: flag("--save"),
            print: flag("--print"),
            whole_words: flag("--whole-words"),
        }),
        "pending" => Action::Pending {
            json: flag("--json"),
        },
        "completions" => Action::Completions {
            shell: operand("shell name")?,
        },
        "approve" => Action::Approve {
            remember_rule: single("--remember-rule")?,
            remember: flag("--remember"),
            always_rule: single("--always-rule")?,
            always: flag("--always"),
            id: operand("request id")?,
        },
        "deny" => Action::Refuse {
            message: single("--message")?,
            id: operand("request id")?,
        },
        "trust" => {
            use crate::project::command::TrustAction;
            let action = match (flag("--revoke"), flag("--list")) {
                (false, false) => TrustAction::Trust,
                (true, false) => TrustAction::Revoke,
                (false, true) if given.is_none() => TrustAction::List,
                (false, true) => return Err(usage("trust: --list takes no FILE")),
                (true, true) => {
                    return Err(usage("trust: --revoke and --list cannot be used together"));
                }
            };
            Action::Trust {
                action,
                file: given,
            }
        }
        "ask" => {
            let question = operand("question")?;
            if question.trim().is_empty() {
                return Err(usage("ask: the question is blank"));
            }
            let options = own
                .iter()
                .filter(|(n, _)| *n == "--option")
                .filter_map(|(_, v)| v.clone())
                .map(|v| text(v, "option"))
                .collect::<Result<Vec<_>, _>>()?;
            Action::Ask {
                question,
                options,
                multiple: flag("--multiple"),
            }
        }
        other => unreachable!("no subcommand {other}"),
    })
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

impl GateArgs {
    /// Record one of gate's options: `value` is `None` for a flag. A flag given a
    /// value, an option without one, and a one-value option given twice are errors.
    /// Where each option's value waits is the settings table's to say
    /// ([`crate::config::SETTINGS`]), but for the options that choose the files.
    pub fn set(&mut self, spec: &OptionSpec, value: Option<OsString>) -> Result<(), UsageError> {
        let name = spec.name;
        let arg = match crate::config::by_flag(name) {
            Some(setting) => setting.flag.map(|(_, arg)| arg),
            None => Self::file_option(name),
        };
        let Some(arg) = arg else {
            unreachable!("option {name} has no handler")
        };
        let Some(value) = value else {
            let Arg::Flag(_, flag) = arg else {
                let value_name = spec.value.unwrap_or("VALUE");
                return Err(usage(format!("{name} needs a value ({value_name})")));
            };
            *flag(self) = true;
            return Ok(());
        };
        if spec.value.is_none() {
            return Err(usage(format!("{name} takes no value")));
        }
        match arg {
            Arg::One(_, slot) => {
                let slot = slot(self);
                if slot.is_some() {
                    return Err(usage(format!("{name} was given twice")));
                }
                *slot = Some(value);
            }
            Arg::Many(_, list) => list(self).push(value),
            Arg::Flag(..) => unreachable!("{name} takes no value"),
        }
        Ok(())
    }

    /// Where the value of an option that chooses the configuration files waits: these
    /// are not settings.
    fn file_option(name: &str) -> Option<Arg> {
        Some(match name {
            "--config" => Arg::One(|a| &a.config, |a| &mut a.config),
            "--no-config" => Arg::Flag(|a| a.no_config, |a| &mut a.no_config),
            "--system-file" => Arg::One(|a| &a.system_file, |a| &mut a.system_file),
            "--system-drop-ins" => Arg::One(|a| &a.system_drop_ins, |a| &mut a.system_drop_ins),
            _ => return None,
        })
    }
}

/// Present when parsing for gate's own personality: where gate's options go.
struct GateMode<'a> {
    gate: &'a mut GateArgs,
    check_json: Option<&'a mut bool>,
    /// The subcommand whose options these are (`gate check`), for the messages.
    subcommand: Option<&'static SubcommandSpec>,
}

/// Parse shell-style arguments, taking out gate's options when `gate_mode` is given.
fn parse_shell_args(
    args: Vec<OsString>,
    mut gate_mode: Option<GateMode<'_>>,
) -> Result<Target, UsageError> {
    let mut shell_args: Vec<OsString> = Vec::with_capacity(args.len());
    let mut command_flag = false;
    let mut stdin_flag = false;
    let mut args = args.into_iter().peekable();

    // The option section: shell options and, in gate mode, gate's options.
    while let Some(arg) = args.peek() {
        let bytes = arg.as_bytes();
        if bytes == b"--" {
            if gate_mode.is_some() && !command_flag {
                args.next();
                let argv: Vec<OsString> = args.collect();
                if argv.is_empty() {
                    return Err(usage("`--` must be followed by a PROGRAM to run"));
                }
                if let Some(first) = shell_args.first() {
                    return Err(usage(format!(
                        "the shell option {} cannot be combined with `-- PROGRAM`, which runs \
                         the program without a shell",
                        first.to_string_lossy()
                    )));
                }
                return Ok(Target::Program { argv });
            }
            shell_args.push(args.next().expect("peeked"));
            break;
        }
        if bytes == b"-" {
            // Like `--` for a shell: the end of the options.
            shell_args.push(args.next().expect("peeked"));
            break;
        }
        if bytes.starts_with(b"--") {
            let arg = args.next().expect("peeked");
            if let Some(mode) = gate_mode.as_mut() {
                take_gate_long_option(arg, &mut args, mode, &mut shell_args)?;
            } else {
                let takes_value = BASH_LONG_WITH_VALUE
                    .iter()
                    .any(|o| o.as_bytes() == arg.as_bytes());
                shell_args.push(arg);
                if takes_value {
                    if let Some(value) = args.next() {
                        shell_args.push(value);
                    }
                }
            }
            continue;
        }
        if bytes.len() >= 2 && (bytes[0] == b'-' || bytes[0] == b'+') {
            let arg = args.next().expect("peeked");
            let mut values = 0;
            for &letter in &arg.as_bytes()[1..] {
                match letter {
                    // bash and dash both take `+c` like `-c`. bash also takes `+s` like
                    // `-s` (dash does not); reading stdin is the stricter of the two.
                    b'c' => command_flag = true,
                    b's' => stdin_flag = true,
                    b'o' | b'O' => values += 1,
                    _ => {}
                }
            }
            shell_args.push(arg);
            for _ in 0..values {
                if let Some(value) = args.next() {
                    shell_args.push(value);
                }
            }
            continue;
        }
        break;
    }

    // The operands: everything else, unchanged.
    let operands: Vec<OsString> = args.collect();
    if gate_mode
        .as_ref()
        .is_some_and(|m| m.gate.help || m.gate.version)
    {
        // Help wins over whatever else is wrong with the arguments.
        let operands_at = shell_args.len();
        return Ok(Target::Shell {
            args: shell_args,
            work: ShellWork::Session,
            operands_at,
        });
    }
    let work = if command_flag {
        match operands.first() {
            Some(command) => ShellWork::Command(command.clone()),
            None => return Err(usage("-c needs a COMMAND argument")),
        }
    } else if operands.is_empty()
        && !stdin_flag
        && gate_mode.is_none()
        && shell_args.len() == 1
        && (shell_args[0] == "--version" || shell_args[0] == "--help")
    {
        ShellWork::Info
    } else if stdin_flag || operands.is_empty() {
        ShellWork::Session
    } else {
        ShellWork::Script(operands.clone())
    };
    let operands_at = shell_args.len();
    shell_args.extend(operands);
    Ok(Target::Shell {
        args: shell_args,
        work,
        operands_at,
    })
}

fn take_gate_long_option(
    arg: OsString,
    rest: &mut std::iter::Peekable<std::vec::IntoIter<OsString>>,
    mode: &mut GateMode<'_>,
    shell_args: &mut Vec<OsString>,
) -> Result<(), UsageError> {
    let bytes = arg.as_bytes();
    let (name, inline) = match bytes.iter().position(|&b| b == b'=') {
        Some(eq) => (
            &bytes[..eq],
            Some(OsStr::from_bytes(&bytes[eq + 1..]).to_owned()),
        ),
        None => (bytes, None),
    };
    let name_str = String::from_utf8_lossy(name).into_owned();

    if let Some(spec) = GATE_OPTIONS.iter().find(|o| o.name.as_bytes() == name) {
        let value = match (spec.value, inline) {
            (Some(value_name), None) => {
                let value = rest
                    .next()
                    .ok_or_else(|| usage(format!("{name_str} needs a value ({value_name})")))?;
                if let Some(message) = cli::option_as_value(spec, &value) {
                    return Err(usage(message));
                }
                Some(value)
            }
            (_, inline) => inline,
        };
        return mode.gate.set(spec, value);
    }
    if inline.is_none() && (name == b"--help" || name == b"--version") {
        if name == b"--help" {
            mode.gate.help = true;
        } else {
            mode.gate.version = true;
        }
        return Ok(());
    }
    if let Some(json) = mode.check_json.as_deref_mut() {
        if name == b"--json" && inline.is_none() {
            *json = true;
            return Ok(());
        }
    }
    // `gate check`'s candidate system layer (a run takes no such option).
    if let Some(spec) = mode.subcommand.and_then(|sub| {
        sub.own
            .iter()
            .find(|o| cli::is_candidate_option(o) && o.name.as_bytes() == name)
    }) {
        let value = match inline {
            Some(value) => value,
            None => rest.next().ok_or_else(|| {
                usage(format!(
                    "{name_str} needs a value ({})",
                    spec.value.unwrap_or("VALUE")
                ))
            })?,
        };
        return mode.gate.set(spec, Some(value));
    }
    if inline.is_none() && SHELL_LONG_OPTIONS.iter().any(|o| o.as_bytes() == name) {
        shell_args.push(arg);
        return Ok(());
    }
    if inline.is_none() && BASH_LONG_WITH_VALUE.iter().any(|o| o.as_bytes() == name) {
        shell_args.push(arg);
        if let Some(value) = rest.next() {
            shell_args.push(value);
        }
        return Ok(());
    }
    if let Some(sub) = mode.subcommand {
        return Err(usage(format!(
            "{}: unknown option {name_str}; {}; see gate {} --help",
            sub.name,
            sub.options_summary(),
            sub.name
        )));
    }
    Err(usage(format!(
        "unknown option {name_str}; gate's options are {}; see gate --help",
        GATE_OPTIONS
            .iter()
            .map(|o| o.name)
            .collect::<Vec<_>>()
            .join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    fn parse_strs(list: &[&str]) -> Result<Invocation, UsageError> {
        parse(os(list), &|_| false)
    }

    fn run_target(list: &[&str]) -> Target {
        match parse_strs(list).unwrap().action {
            Action::Run(t) => t,
            other => panic!("not a run: {other:?}"),
        }
    }

    /// The target for `args`; the operands start at the command, or at the script.
    fn shell(args: &[&str], work: ShellWork) -> Target {
        let operands_at = match &work {
            ShellWork::Command(c) => args.iter().position(|a| OsStr::new(a) == c).unwrap(),
            ShellWork::Script(operands) => args.len() - operands.len(),
            ShellWork::Session | ShellWork::Info => args.len(),
        };
        Target::Shell {
            args: os(args),
            work,
            operands_at,
        }
    }

    fn cmd(text: &str) -> ShellWork {
        ShellWork::Command(text.into())
    }

    #[test]
    fn argv0_picks_the_personality() {
        assert_eq!(personality(OsStr::new("gate")), Personality::Gate);
        assert_eq!(personality(OsStr::new("/usr/bin/gate")), Personality::Gate);
        assert_eq!(personality(OsStr::new("gate-dev")), Personality::Gate);
        assert_eq!(
            personality(OsStr::new("/usr/lib/gate/bin/bash")),
            Personality::Shim {
                name: "bash".into()
            }
        );
        assert_eq!(
            personality(OsStr::new("-bash")),
            Personality::Shim {
                name: "bash".into()
            }
        );
        assert_eq!(
            personality(OsStr::new("sh")),
            Personality::Shim { name: "sh".into() }
        );
        assert_eq!(personality(OsStr::new("bash5")), Personality::Gate);
        assert_eq!(personality(OsStr::from_bytes(b"\xff")), Personality::Gate);
    }

    #[test]
    fn dash_c_forms_all_find_the_command() {
        for form in [
            &["gate", "-c", "ls -l"][..],
            &["gate", "-lc", "ls -l"],
            &["gate", "-l", "-c", "ls -l"],
            &["gate", "-c", "-l", "ls -l"],
            &["gate", "--login", "-c", "ls -l"],
            &["gate", "-e", "-c", "ls -l"],
            &["gate", "-o", "pipefail", "-c", "ls -l"],
            &["gate", "-eo", "pipefail", "-c", "ls -l"],
            &["gate", "+O", "extglob", "-c", "ls -l"],
            &["gate", "+c", "ls -l"],
            &["gate", "+ec", "ls -l"],
            &["gate", "-i", "-c", "ls -l"],
            &["gate", "-c", "--", "ls -l"],
            &["gate", "--norc", "--noprofile", "-c", "ls -l"],
            &["gate", "--rcfile", "x", "-c", "ls -l"],
        ] {
            let t = run_target(form);
            let Target::Shell { args, work, .. } = t else {
                panic!()
            };
            assert_eq!(work, cmd("ls -l"), "{form:?}");
            assert_eq!(
                args,
                os(&form[1..]),
                "shell args are passed unchanged: {form:?}"
            );
        }
    }

    #[test]
    fn the_operands_start_after_the_option_section() {
        for (form, at) in [
            (&["gate", "-c", "ls", "-l"][..], 1),
            (&["gate", "-o", "-c", "-lc", "ls"], 3),
            (&["gate", "--rcfile", "-l", "-c", "ls"], 3),
            (&["gate", "-c", "--", "ls", "--"], 2),
            (&["bash", "-", "-x"], 1),
            (&["bash", "-e", "build.sh", "-c"], 1),
            (&["bash", "-l"], 1),
        ] {
            let Target::Shell { operands_at, .. } = run_target(form) else {
                panic!()
            };
            assert_eq!(operands_at, at, "{form:?}");
        }
    }

    #[test]
    fn positional_arguments_follow_the_command_unchanged() {
        assert_eq!(
            run_target(&["gate", "-c", "echo $0 $1", "name", "--level", "-c"]),
            shell(
                &["-c", "echo $0 $1", "name", "--level", "-c"],
                cmd("echo $0 $1")
            )
        );
    }

    #[test]
    fn gate_options_are_taken_out_of_the_shell_args() {
        let inv = parse_strs(&[
            "gate",
            "--level",
            "full",
            "-l",
            "--allow=ls",
            "--allow",
            "git status",
            "-c",
            "ls",
        ])
        .unwrap();
        assert_eq!(inv.gate.level, Some("full".into()));
        assert_eq!(inv.gate.allow, os(&["ls", "git status"]));
        assert_eq!(
            inv.action,
            Action::Run(shell(&["-l", "-c", "ls"], cmd("ls")))
        );
    }

    #[test]
    fn every_gate_option_is_parsed() {
        let inv = parse_strs(&[
            "gate",
            "--level=ask",
            "--allow",
            "a",
            "--deny",
            "b",
            "--shell",
            "/bin/bash",
            "--config",
            "/c",
            "--audit-log",
            "off",
            "--timeout",
            "5",
            "--session",
            "s1",
            "--socket",
            "/s",
            "--no-tty",
            "-c",
            "x",
        ])
        .unwrap();
        let g = inv.gate;
        assert_eq!(g.level, Some("ask".into()));
        assert_eq!(g.allow, os(&["a"]));
        assert_eq!(g.deny, os(&["b"]));
        assert_eq!(g.shell, Some("/bin/bash".into()));
        assert_eq!(g.config, Some("/c".into()));
        assert_eq!(g.audit_log, Some("off".into()));
        assert_eq!(g.timeout, Some("5".into()));
        assert_eq!(g.session, Some("s1".into()));
        assert_eq!(g.socket, Some("/s".into()));
        assert!(g.no_tty);
        assert!(!g.no_config);
        assert!(
            parse_strs(&["gate", "--no-config", "-c", "x"])
                .unwrap()
                .gate
                .no_config
        );
    }

    #[test]
    fn gate_options_after_the_command_belong_to_the_command() {
        let inv = parse_strs(&["gate", "-c", "ls", "--level", "full"]).unwrap();
        assert_eq!(inv.gate.level, None);
    }

    #[test]
    fn a_missing_or_repeated_value_is_an_error() {
        assert!(parse_strs(&["gate", "--level"]).is_err());
        assert!(parse_strs(&["gate", "--level", "ask", "--level", "full", "-c", "x"]).is_err());
        assert!(parse_strs(&["gate", "--no-tty=1", "-c", "x"]).is_err());
        assert!(parse_strs(&["gate", "-c"]).is_err());
        assert!(parse_strs(&["gate", "--"]).is_err());
    }

    #[test]
    fn unknown_long_options_are_refused_in_gate_mode() {
        let err = parse_strs(&["gate", "--levle", "full", "-c", "x"]).unwrap_err();
        assert!(err.0.contains("--levle"), "{err}");
        assert!(err.0.contains("--level"), "{err}");
    }

    #[test]
    fn double_dash_runs_a_program_directly() {
        assert_eq!(
            run_target(&["gate", "--level", "full", "--", "ls", "-l", "--level"]),
            Target::Program {
                argv: os(&["ls", "-l", "--level"])
            }
        );
    }

    #[test]
    fn shell_options_cannot_precede_a_direct_program() {
        assert!(parse_strs(&["gate", "-l", "--", "ls"]).is_err());
    }

    #[test]
    fn no_command_is_a_session() {
        for form in [
            &["gate"][..],
            &["gate", "-l"],
            &["gate", "-i"],
            &["gate", "--login"],
            &["gate", "-s"],
            &["gate", "-s", "arg1", "arg2"],
        ] {
            let Target::Shell { args, work, .. } = run_target(form) else {
                panic!()
            };
            assert_eq!(work, ShellWork::Session, "{form:?}");
            assert_eq!(args, os(&form[1..]));
        }
    }

    #[test]
    fn an_operand_without_dash_c_is_a_script() {
        assert_eq!(
            run_target(&["gate", "-e", "build.sh", "a", "-c"]),
            shell(
                &["-e", "build.sh", "a", "-c"],
                ShellWork::Script(os(&["build.sh", "a", "-c"]))
            )
        );
        assert_eq!(
            run_target(&["gate", "-", "-x"]),
            shell(&["-", "-x"], ShellWork::Script(os(&["-x"])))
        );
    }

    #[test]
    fn shims_parse_like_a_shell_and_know_no_gate_options() {
        let inv = parse_strs(&["bash", "--level", "full", "-c", "x"]).unwrap();
        assert_eq!(inv.gate, GateArgs::default());
        assert_eq!(
            inv.action,
            Action::Run(shell(
                &["--level", "full", "-c", "x"],
                ShellWork::Script(os(&["full", "-c", "x"]))
            ))
        );
        // `--` in a shim ends the options; it does not mean "run a program".
        assert_eq!(
            run_target(&["bash", "-c", "--", "ls"]),
            shell(&["-c", "--", "ls"], cmd("ls"))
        );
        assert_eq!(
            run_target(&["sh", "--", "script.sh"]),
            shell(&["--", "script.sh"], ShellWork::Script(os(&["script.sh"])))
        );
        assert_eq!(
            parse_strs(&["bash", "check", "-c", "x"]).unwrap().action,
            Action::Run(shell(
                &["check", "-c", "x"],
                ShellWork::Script(os(&["check", "-c", "x"]))
            ))
        );
        assert_eq!(
            run_target(&["bash", "--version"]),
            shell(&["--version"], ShellWork::Info)
        );
        assert_eq!(
            run_target(&["/usr/lib/gate/bin/zsh", "--help"]),
            shell(&["--help"], ShellWork::Info)
        );
        // Anything more is a session or a command, judged as usual.
        assert_eq!(
            run_target(&["bash", "--version", "-i"]),
            shell(&["--version", "-i"], ShellWork::Session)
        );
        assert_eq!(
            run_target(&["bash", "--version", "x"]),
            shell(&["--version", "x"], ShellWork::Script(os(&["x"])))
        );
    }

    #[test]
    fn check_takes_gate_options_and_json() {
        let inv = parse_strs(&["gate", "check", "--json", "--allow", "ls", "-c", "ls -l"]).unwrap();
        assert_eq!(inv.gate.allow, os(&["ls"]));
        assert_eq!(
            inv.action,
            Action::Check {
                target: shell(&["-c", "ls -l"], cmd("ls -l")),
                json: true
            }
        );
        let inv = parse_strs(&["gate", "check", "--", "git", "status"]).unwrap();
        assert_eq!(
            inv.action,
            Action::Check {
                target: Target::Program {
                    argv: os(&["git", "status"])
                },
                json: false
            }
        );
        let inv = parse_strs(&[
            "gate",
            "--no-config",
            "--level=full",
            "--allow",
            "ls",
            "check",
            "-c",
            "ls",
        ])
        .unwrap();
        assert!(inv.gate.no_config);
        assert_eq!(inv.gate.allow, os(&["ls"]));
        assert!(matches!(inv.action, Action::Check { .. }));
        // After a shell option, `check` is a script name as it would be for a shell.
        assert!(matches!(
            parse_strs(&["gate", "-e", "check"]).unwrap().action,
            Action::Run(_)
        ));
        assert!(parse_strs(&["gate", "check"]).is_err());
        assert_eq!(
            parse_strs(&["gate", "doctor"]).unwrap().action,
            Action::Doctor { json: false }
        );
        assert_eq!(
            parse_strs(&["gate", "doctor", "--json"]).unwrap().action,
            Action::Doctor { json: true }
        );
        let inv = parse_strs(&["gate", "--no-config", "doctor", "--net"]).unwrap();
        assert_eq!(inv.action, Action::Doctor { json: false });
        assert!(inv.gate.net && inv.gate.no_config);
        assert!(parse_strs(&["gate", "doctor", "-c", "ls"]).is_err());
        assert!(parse_strs(&["gate", "check", "script.sh"]).is_err());
        assert!(parse_strs(&["gate", "--json", "-c", "x"]).is_err());
    }

    #[test]
    fn rules_is_a_subcommand_and_a_script_of_that_name_runs_as_dot_slash_rules() {
        assert_eq!(
            parse_strs(&["gate", "rules"]).unwrap().action,
            Action::Rules { json: false }
        );
        let inv = parse_strs(&[
            "gate",
            "--no-config",
            "rules",
            "--json",
            "--ask",
            "git push",
        ])
        .unwrap();
        assert_eq!(inv.action, Action::Rules { json: true });
        assert!(inv.gate.no_config);
        assert_eq!(inv.gate.ask, os(&["git push"]));
        assert!(parse_strs(&["gate", "rules", "-c", "ls"]).is_err());
        // A candidate system layer, as for doctor.
        let inv = parse_strs(&["gate", "rules", "--system-file", "cand.toml"]).unwrap();
        assert_eq!(inv.action, Action::Rules { json: false });
        assert_eq!(inv.gate.system_file, Some("cand.toml".into()));
        assert!(parse_strs(&["gate", "rules", "extra"]).is_err());
        // As for a shell: `./rules`, after a shell option, or under a shell's name.
        for argv in [
            &["gate", "./rules"][..],
            &["gate", "-e", "rules"],
            &["bash", "rules"],
        ] {
            assert!(
                matches!(
                    parse_strs(argv).unwrap().action,
                    Action::Run(Target::Shell {
                        work: ShellWork::Script(_),
                        ..
                    })
                ),
                "{argv:?}"
            );
        }
    }

    #[test]
    fn help_and_version() {
        let help = Action::Help { subcommand: None };
        assert_eq!(parse_strs(&["gate", "--help"]).unwrap().action, help);
        assert_eq!(parse_strs(&["gate", "help"]).unwrap().action, help);
        assert_eq!(
            parse_strs(&["gate", "--version"]).unwrap().action,
            Action::Version
        );
        assert_eq!(parse_strs(&["gate", "--help", "-c"]).unwrap().action, help);
        // After the command they are the command's.
        assert!(matches!(
            parse_strs(&["gate", "-c", "x", "--help"]).unwrap().action,
            Action::Run(_)
        ));
        assert!(matches!(
            parse_strs(&["gate", "--", "ls", "--help"]).unwrap().action,
            Action::Run(_)
        ));
    }

    #[test]
    fn each_subcommand_has_its_own_help() {
        for (argv, name) in [
            (&["gate", "check", "--help"][..], "check"),
            (&["gate", "check", "--help", "-c", "x"], "check"),
            (&["gate", "--no-config", "approve", "--help"], "approve"),
            (&["gate", "deny", "1", "--help"], "deny"),
            (&["gate", "doctor", "--help"], "doctor"),
            (&["gate", "completions", "--help"], "completions"),
            (&["gate", "help", "pending"], "pending"),
            (&["gate", "--no-config", "help", "ask"], "ask"),
        ] {
            assert_eq!(
                parse_strs(argv).unwrap().action,
                Action::Help {
                    subcommand: Some(name)
                },
                "{argv:?}"
            );
        }
        assert!(parse_strs(&["gate", "help", "chek"]).is_err());
        assert!(parse_strs(&["gate", "help", "check", "deny"]).is_err());
    }

    #[test]
    fn subcommands_take_gates_options_before_their_name_and_theirs_after() {
        let inv = parse_strs(&[
            "gate",
            "--level=full",
            "--net",
            "approve",
            "7",
            "--remember",
        ])
        .unwrap();
        assert_eq!(inv.gate.level, Some("full".into()));
        assert!(inv.gate.net);
        assert_eq!(
            inv.action,
            Action::Approve {
                id: "7".into(),
                remember: true,
                remember_rule: None,
                always: false,
                always_rule: None,
            }
        );
        let inv = parse_strs(&["gate", "deny", "7", "--socket", "/s", "--message=-x"]).unwrap();
        assert_eq!(inv.gate.socket, Some("/s".into()));
        assert_eq!(
            inv.action,
            Action::Refuse {
                id: "7".into(),
                message: Some("-x".into())
            }
        );
        // After the name, only the options that apply.
        let err = parse_strs(&["gate", "approve", "7", "--level", "full"]).unwrap_err();
        assert!(err.0.contains("approve: unknown option --level"), "{err}");
        let err = parse_strs(&["gate", "deny", "1", "--remember"]).unwrap_err();
        assert!(err.0.contains("--message TEXT"), "{err}");
        let err = parse_strs(&["gate", "--socket=/a", "pending", "--socket", "/b"]).unwrap_err();
        assert!(err.0.contains("--socket was given twice"), "{err}");
        assert_eq!(
            parse_strs(&[
                "gate", "ask", "q?", "--option", "a", "--option", "b", "--level", "ask"
            ])
            .unwrap()
            .action,
            Action::Ask {
                question: "q?".into(),
                options: vec!["a".into(), "b".into()],
                multiple: false
            }
        );
        assert_eq!(
            parse_strs(&["gate", "completions", "zsh"]).unwrap().action,
            Action::Completions {
                shell: "zsh".into()
            }
        );
        assert!(parse_strs(&["gate", "serve", "x"]).is_err());
        assert!(parse_strs(&["gate", "ask", " "]).is_err());
    }

    #[test]
    fn a_mistyped_subcommand_is_an_error_unless_a_file_has_that_name() {
        let err = parse_strs(&["gate", "chek", "-c", "x"]).unwrap_err();
        assert!(err.0.contains("unknown subcommand `chek`"), "{err}");
        assert!(err.0.contains("`gate check`"), "{err}");
        assert!(err.0.contains("gate ./chek"), "{err}");
        assert!(parse_strs(&["gate", "--no-config", "init"]).is_err());
        // The option before the word is reported first.
        let err = parse_strs(&["gate", "--levle", "chek"]).unwrap_err();
        assert!(err.0.contains("--levle"), "{err}");
        // A file of that name is a script, as for a shell.
        let chek_exists = |name: &OsStr| name == "chek";
        assert_eq!(
            parse(os(&["gate", "chek", "a"]), &chek_exists)
                .unwrap()
                .action,
            Action::Run(shell(&["chek", "a"], ShellWork::Script(os(&["chek", "a"]))))
        );
        // Other words, paths and words after a shell option are scripts unasked.
        for argv in [
            &["gate", "build.sh"][..],
            &["gate", "./chek"],
            &["gate", "-e", "chek"],
            &["gate", "deploy"],
        ] {
            assert!(
                matches!(parse_strs(argv).unwrap().action, Action::Run(_)),
                "{argv:?}"
            );
        }
        // A shim knows no subcommands.
        assert!(matches!(
            parse_strs(&["bash", "chek"]).unwrap().action,
            Action::Run(_)
        ));
    }

    #[test]
    fn dash_h_alone_is_explained_and_with_more_goes_to_the_shell() {
        let err = parse_strs(&["gate", "-h"]).unwrap_err();
        assert!(err.0.contains("gate --help"), "{err}");
        assert!(parse_strs(&["gate", "--no-config", "-h"]).is_err());
        assert_eq!(
            run_target(&["gate", "-h", "-c", "ls"]),
            shell(&["-h", "-c", "ls"], cmd("ls"))
        );
        assert_eq!(
            run_target(&["gate", "-h", "-i"]),
            shell(&["-h", "-i"], ShellWork::Session)
        );
        assert_eq!(
            run_target(&["bash", "-h"]),
            shell(&["-h"], ShellWork::Session)
        );
    }

    #[test]
    fn a_value_that_looks_like_an_option_is_an_error() {
        for argv in [
            &["gate", "--allow", "-c", "echo hi"][..],
            &["gate", "--deny", "--level", "full", "-c", "x"],
            &["gate", "--shell", "-l", "-c", "x"],
            &["gate", "--timeout", "-5", "-c", "x"],
            &["gate", "--level", "-", "-c", "x"],
            &["gate", "check", "--allow", "-c", "x"],
            &["gate", "--allow", "-c", "check", "-c", "x"],
            &["gate", "--socket", "--no-config", "pending"],
        ] {
            let err = parse_strs(argv).unwrap_err();
            assert!(err.0.contains("looks like an option"), "{argv:?}: {err}");
            assert!(err.0.contains("write --"), "{argv:?}: {err}");
        }
        let inv = parse_strs(&["gate", "--allow=-c", "--deny=--x", "-c", "echo hi"]).unwrap();
        assert_eq!(inv.gate.allow, os(&["-c"]));
        assert_eq!(inv.gate.deny, os(&["--x"]));
        assert_eq!(
            inv.action,
            Action::Run(shell(&["-c", "echo hi"], cmd("echo hi")))
        );
    }

    #[test]
    fn non_utf8_arguments_do_not_panic() {
        let argv = vec![
            OsString::from("gate"),
            OsString::from("-c"),
            OsString::from_vec(vec![b'l', b's', 0xff]),
            OsString::from_vec(vec![0xfe]),
        ];
        let inv = parse(argv, &|_| false).unwrap();
        assert!(matches!(inv.action, Action::Run(_)));
        let argv = vec![
            OsString::from("gate"),
            OsString::from_vec(b"--\xff".to_vec()),
        ];
        assert!(parse(argv, &|_| false).is_err());
        let argv = vec![
            OsString::from("gate"),
            OsString::from("deny"),
            OsString::from_vec(b"\xff".to_vec()),
        ];
        assert!(parse(argv, &|_| false).is_err());
    }

    use std::os::unix::ffi::OsStringExt;

    #[test]
    fn only_check_and_doctor_take_a_candidate_system_layer() {
        let inv = parse_strs(&[
            "gate",
            "check",
            "--system-file",
            "cand.toml",
            "--system-drop-ins=cand.d",
            "-c",
            "ls",
        ])
        .unwrap();
        assert_eq!(inv.gate.system_file, Some("cand.toml".into()));
        assert_eq!(inv.gate.system_drop_ins, Some("cand.d".into()));
        assert!(matches!(inv.action, Action::Check { .. }));
        let inv = parse_strs(&["gate", "doctor", "--system-file=cand.toml"]).unwrap();
        assert_eq!(inv.gate.system_file, Some("cand.toml".into()));
        assert_eq!(inv.action, Action::Doctor { json: false });
        let twice = parse_strs(&["gate", "doctor", "--system-file", "a", "--system-file", "b"]);
        assert!(twice.is_err());
        let missing = parse_strs(&["gate", "check", "--system-file"]);
        assert!(missing.is_err());
        // After -c COMMAND it is an operand of the shell's, as for any option.
        let operand = parse_strs(&["gate", "check", "-c", "ls", "--system-file"]).unwrap();
        assert_eq!(operand.gate.system_file, None);
        // A run, before a subcommand or as a shim, never takes one.
        for argv in [
            &["gate", "--system-file", "x", "-c", "ls"][..],
            &["gate", "--system-file", "x", "check", "-c", "ls"],
            &["gate", "serve", "--system-file", "x"],
            &["gate", "watch", "--system-file", "x"],
        ] {
            assert!(parse_strs(argv).is_err(), "{argv:?}");
        }
        let shim = parse_strs(&["bash", "--system-file", "x", "-c", "ls"]).unwrap();
        assert_eq!(shim.gate.system_file, None);
    }
}
