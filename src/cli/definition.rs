//! The clap definition built from the tables: gate's `--help`, each subcommand's, the
//! completion scripts, and what parses a subcommand's arguments. Never built on the hot
//! path (see [`super`]).

use std::ffi::{OsStr, OsString};

use clap::builder::{PossibleValue, TypedValueParser, ValueParser};
use clap::{Arg, ArgAction, Command, ValueHint};

use super::{COMPLETION_SHELLS, GATE_OPTIONS, OptionSpec, SUBCOMMANDS, SubcommandSpec, VERSION};
use crate::policy::Level;

impl SubcommandSpec {
    /// Its clap definition, for its help, the completions and parsing.
    pub(super) fn definition(&self) -> Command {
        let own = self.own.iter().map(arg);
        let shared = self
            .gate_options()
            .map(|spec| arg(spec).help_heading("gate's options"));
        let mut command = Command::new(self.name)
            .about(self.about)
            // A flag given twice is the flag (as before the subcommand); an option of one
            // value given twice is still an error, found by the tables.
            .args_override_self(true)
            .override_usage(self.usage)
            .disable_help_flag(true)
            .arg(help_flag())
            .args(own)
            .args(shared);
        if let Some(text) = self.after_help {
            command = command.after_help(text);
        }
        match self.name {
            "check" => command
                .arg(command_arg(
                    "The command text to judge, as an agent would pass it to -c",
                ))
                .arg(program_arg(
                    "A program and its arguments, judged as their shell-quoted join",
                )),
            "approve" | "deny" => command.arg(operand(
                "id",
                "ID",
                "The request's id as gate pending shows it, or its call_id (pending --json)",
            )),
            "ask" => command.arg(operand(
                "question",
                "QUESTION",
                "The question, as one argument",
            )),
            "trust" => command.arg(
                operand(
                    "file",
                    "FILE",
                    "The project file (.gate.toml); by default the one in force here",
                )
                .required(false)
                .value_hint(ValueHint::FilePath),
            ),
            "import" => command
                .arg(
                    operand("agent", "AGENT", "The agent whose rules to read")
                        .value_parser(unchecked(crate::import::apply::Agent::NAMES.to_vec())),
                )
                .arg(
                    Arg::new("files")
                        .value_name("FILE")
                        .num_args(0..)
                        .value_parser(unchecked(Vec::new()))
                        .value_hint(ValueHint::FilePath)
                        .help("The agent's files to read instead of its own places"),
                ),
            "completions" => command.arg(
                operand(
                    "shell",
                    "SHELL",
                    "The shell to complete gate's arguments in",
                )
                .value_parser(COMPLETION_SHELLS),
            ),
            _ => command,
        }
    }
}

/// A value clap takes as it is: gate checks it later, with the same message whichever
/// way it was given (option, environment, file). `offered` are the values the completion
/// scripts offer.
#[derive(Debug, Clone)]
struct Unchecked {
    offered: Vec<&'static str>,
}

impl TypedValueParser for Unchecked {
    type Value = OsString;

    fn parse_ref(
        &self,
        _command: &Command,
        _arg: Option<&Arg>,
        value: &OsStr,
    ) -> Result<OsString, clap::Error> {
        Ok(value.to_owned())
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        if self.offered.is_empty() {
            return None;
        }
        Some(Box::new(self.offered.iter().map(PossibleValue::new)))
    }
}

fn unchecked(offered: Vec<&'static str>) -> ValueParser {
    ValueParser::new(Unchecked { offered })
}

fn arg(spec: &OptionSpec) -> Arg {
    let long = spec.name.trim_start_matches('-');
    let arg = Arg::new(long).long(long).help(spec.help);
    let Some(value) = spec.value else {
        return arg.action(ArgAction::SetTrue);
    };
    let arg = arg
        .value_name(value)
        .action(ArgAction::Append)
        .value_parser(unchecked(Vec::new()));
    // What a value is, for the completion scripts; the help text already says it.
    match (spec.name, value) {
        (_, "LEVEL") => arg
            .value_parser(unchecked(Level::ALL.map(Level::as_str).to_vec()))
            .hide_possible_values(true),
        ("--shell", _) => arg.value_hint(ValueHint::ExecutablePath),
        (_, "FILE" | "PATH|off") => arg.value_hint(ValueHint::FilePath),
        (_, "PATH") => arg.value_hint(ValueHint::AnyPath),
        _ => arg,
    }
}

/// A subcommand's one operand (ID, QUESTION, SHELL).
fn operand(id: &'static str, value_name: &'static str, help: &'static str) -> Arg {
    Arg::new(id)
        .value_name(value_name)
        .required(true)
        .value_parser(unchecked(Vec::new()))
        .help(help)
}

fn command_arg(help: &'static str) -> Arg {
    Arg::new("command")
        .short('c')
        .value_name("COMMAND")
        .value_hint(ValueHint::CommandString)
        .help(help)
}

fn program_arg(help: &'static str) -> Arg {
    Arg::new("program")
        .value_name("PROGRAM")
        .num_args(1..)
        .last(true)
        .value_hint(ValueHint::CommandWithArguments)
        .help(help)
}

fn help_flag() -> Arg {
    Arg::new("help")
        .long("help")
        .action(ArgAction::Help)
        .help("Print this help")
}

const USAGE: &str = "\
gate [OPTIONS] [SHELL-OPTIONS] -c COMMAND [NAME [ARGS...]]
       gate [OPTIONS] -- PROGRAM [ARGS...]
       gate [OPTIONS] [SHELL-OPTIONS] [SCRIPT [ARGS...]]
       gate [OPTIONS] SUBCOMMAND [ARGS...]   (gate SUBCOMMAND --help: its own usage)
       bash|sh|zsh ... (gate installed as a shim under a shell's name)";

const ABOUT: &str = "\
The policy gate between an AI agent and a shell. gate judges each command against a permission \
level and allow/deny rules, then execs the real shell or program (gate disappears) or refuses.";

const AFTER_HELP: &str = "\
Levels:
  deny   nothing runs and nothing is asked
  ask    commands an allow rule matches run; anything else needs an approver, and
         unanswered means refused (the default)
  safe   every command runs unasked inside a Landlock + seccomp sandbox: it reads all but
         your secrets (~/.ssh, ~/.aws, ...), writes only the working directory and the
         temporary directories, has no network, and drops root's capabilities. If the
         kernel cannot enforce that, gate refuses (125) rather than run unsandboxed
  full   everything runs

Allow rules: a command matches RULE when, trimmed, it equals RULE or starts with RULE and
a space. A command containing any of ; & | < > $ ` ( ) { } \\ or a newline matches no
allow rule. Deny rules apply at every level and are looked for in every part of the
command (after ;, &&, |, inside $(...), behind VAR=value, env, nohup, timeout, sudo...).

gate's options are long only: every short option (-c, -l, -e, -o OPT, even -h for bash's
hashall) and bash's long ones (--login, ...) pass to the real shell unchanged. A value
that starts with `-` is written --option=VALUE (--allow=-x). A subcommand's own usage
and options: gate SUBCOMMAND --help, or gate help SUBCOMMAND. To run a script named like
a subcommand (or a near miss, such as chek): gate ./NAME.

Environment:
  GATE_LEVEL, GATE_SHELL, GATE_CONFIG, GATE_AUDIT_LOG, GATE_SESSION, GATE_SOCKET,
  GATE_TIMEOUT: as the options of the same name. GATE_AUDIT_JOURNAL: audit.journal (off,
  on, auto, syslog). GATE_LOG: diagnostics filter (e.g. debug).

Files:
  /etc/gate/config.toml               system configuration (lock = true: others may only tighten)
  ~/.config/gate/config.toml          user configuration ($XDG_CONFIG_HOME/gate/config.toml)
  ~/.local/state/gate/audit.jsonl     audit log ($XDG_STATE_HOME/gate/audit.jsonl)

Exit status: the command's own when it runs; 126 refused by policy; 125 gate's own error
(bad option or configuration, a sandbox the kernel cannot enforce, real shell missing);
127 program not found. gate check: 0 it would run, 1 it needs an approver, 2 it would not
run. gate doctor: 0 the safe level can be fully enforced here, 1 it cannot.";

/// The whole command line interface, for help, man pages and completions.
pub fn command() -> Command {
    Command::new("gate")
        .version(VERSION)
        .about(ABOUT)
        .override_usage(USAGE)
        .disable_help_subcommand(true)
        // Every short option is the shell's (`-h` is bash's hashall): gate's own
        // --help and --version are long only.
        .disable_help_flag(true)
        .disable_version_flag(true)
        .arg(help_flag())
        .arg(
            Arg::new("version")
                .long("version")
                .action(ArgAction::Version)
                .help("Print gate's version"),
        )
        .args(GATE_OPTIONS.iter().map(arg))
        .arg(command_arg(
            "Judge COMMAND, then run it with the real shell (-c COMMAND NAME ARGS...)",
        ))
        .arg(program_arg(
            "Judge the program and its arguments, then exec it directly, without a shell",
        ))
        .after_help(AFTER_HELP)
        .subcommands(SUBCOMMANDS.iter().map(SubcommandSpec::definition))
}

/// `gate --help`.
pub(crate) fn help_text() -> String {
    command().render_help().to_string()
}
