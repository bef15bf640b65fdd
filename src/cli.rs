//! gate's help, as a clap command built from the same option table the parser uses, so
//! `--help` (and later the man page and completions) cannot drift from what is parsed.
//! The hot path never builds it: argv is parsed by [`crate::invocation`].

use clap::builder::PossibleValuesParser;
use clap::{Arg, ArgAction, Command, ValueHint};

use crate::invocation::{
    APPROVE_OPTIONS, ASK_OPTIONS, CHECK_OPTIONS, DENY_OPTIONS, DOCTOR_OPTIONS, GATE_OPTIONS,
    OptionSpec, PENDING_OPTIONS,
};
use crate::policy::Level;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

const USAGE: &str = "\
gate [OPTIONS] [SHELL-OPTIONS] -c COMMAND [NAME [ARGS...]]
       gate [OPTIONS] -- PROGRAM [ARGS...]
       gate [OPTIONS] [SHELL-OPTIONS] [SCRIPT [ARGS...]]
       gate check [OPTIONS] [--json] (-c COMMAND | -- PROGRAM [ARGS...])
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

Shell options (-c, -l, -i, -e, -o OPT, --login, ...) pass to the real shell unchanged.

Environment:
  GATE_LEVEL, GATE_SHELL, GATE_CONFIG, GATE_AUDIT_LOG, GATE_SESSION, GATE_SOCKET,
  GATE_TIMEOUT: as the options of the same name. GATE_LOG: diagnostics filter (e.g. debug).

Files:
  /etc/gate/config.toml               system configuration (lock = true: others may only tighten)
  ~/.config/gate/config.toml          user configuration ($XDG_CONFIG_HOME/gate/config.toml)
  ~/.local/state/gate/audit.jsonl     audit log ($XDG_STATE_HOME/gate/audit.jsonl)

Exit status: the command's own when it runs; 126 refused by policy; 125 gate's own error
(bad option or configuration, a sandbox the kernel cannot enforce, real shell missing);
127 program not found. gate check: 0 it would run, 1 it needs an approver, 2 it would not
run. gate doctor: 0 the safe level can be fully enforced here, 1 it cannot.";

fn arg(spec: &OptionSpec) -> Arg {
    let long = spec.name.trim_start_matches('-');
    let arg = Arg::new(long).long(long).help(spec.help);
    let Some(value) = spec.value else {
        return arg.action(ArgAction::SetTrue);
    };
    let arg = arg.value_name(value).action(ArgAction::Append);
    // What a value is, for the completion scripts; the help text already says it.
    match (spec.name, value) {
        (_, "LEVEL") => arg
            .value_parser(PossibleValuesParser::new(Level::ALL.map(Level::as_str)))
            .hide_possible_values(true),
        ("--shell", _) => arg.value_hint(ValueHint::ExecutablePath),
        (_, "FILE" | "PATH|off") => arg.value_hint(ValueHint::FilePath),
        (_, "PATH") => arg.value_hint(ValueHint::AnyPath),
        _ => arg,
    }
}

/// gate's own options that matter to a subcommand, by name, from [`GATE_OPTIONS`] (the
/// subcommands parse all of them; only these change what they do).
fn gate_options(names: &[&str]) -> Vec<Arg> {
    names
        .iter()
        .map(|name| {
            let spec = GATE_OPTIONS
                .iter()
                .find(|o| o.name == *name)
                .unwrap_or_else(|| panic!("{name} is not one of gate's options"));
            arg(spec)
        })
        .collect()
}

/// The options that choose the configuration and the broker's socket: all an approver
/// tool reads.
const BROKER_OPTIONS: &[&str] = &["--config", "--no-config", "--socket"];

/// The shells `gate completions` writes a script for.
pub const COMPLETION_SHELLS: [&str; 3] = ["bash", "zsh", "fish"];

/// A subcommand with gate's conventions: long `--help` only, and its options.
fn subcommand(name: &'static str, about: &'static str, usage: &'static str) -> Command {
    Command::new(name)
        .about(about)
        .override_usage(usage)
        .disable_help_flag(true)
        .arg(help_flag())
}

/// The approval subcommands and `gate completions`.
fn tool_subcommands() -> Vec<Command> {
    let own = |table: &[OptionSpec]| table.iter().map(arg).collect::<Vec<_>>();
    vec![
        subcommand(
            "serve",
            "Run the approval broker: hold the requests of gates at level ask until an approver answers",
            "gate serve [--socket PATH]",
        )
        .args(gate_options(BROKER_OPTIONS)),
        subcommand(
            "pending",
            "List the requests waiting in the broker: id, command, directory, session, age",
            "gate pending [--json]",
        )
        .args(own(PENDING_OPTIONS))
        .args(gate_options(BROKER_OPTIONS)),
        subcommand(
            "approve",
            "Approve a waiting request; prints answered, already settled or not found (exit 0, 3, 4)",
            "gate approve ID [--remember] [--remember-rule RULE]",
        )
        .arg(
            Arg::new("id")
                .value_name("ID")
                .required(true)
                .help("The request's id, as gate pending shows it"),
        )
        .args(own(APPROVE_OPTIONS))
        .args(gate_options(BROKER_OPTIONS)),
        subcommand(
            "deny",
            "Deny a waiting request; prints answered, already settled or not found (exit 0, 3, 4)",
            "gate deny ID [--message TEXT]",
        )
        .arg(
            Arg::new("id")
                .value_name("ID")
                .required(true)
                .help("The request's id, as gate pending shows it"),
        )
        .args(own(DENY_OPTIONS))
        .args(gate_options(BROKER_OPTIONS)),
        subcommand(
            "watch",
            "Approve on this terminal: prompt for each request as it reaches the broker",
            "gate watch",
        )
        .args(gate_options(BROKER_OPTIONS)),
        subcommand(
            "ask",
            "Ask the user a question through the approver; print the answer (exit 0) or exit 1",
            "gate ask QUESTION [--option TEXT]... [--multiple]",
        )
        .arg(
            Arg::new("question")
                .value_name("QUESTION")
                .required(true)
                .help("The question, as one argument"),
        )
        .args(own(ASK_OPTIONS))
        .args(gate_options(&[
            "--config",
            "--no-config",
            "--socket",
            "--no-tty",
            "--timeout",
            "--session",
        ])),
        subcommand(
            "completions",
            "Print the completion script for SHELL (bash, zsh or fish) on standard output",
            "gate completions SHELL",
        )
        .arg(
            Arg::new("shell")
                .value_name("SHELL")
                .required(true)
                .value_parser(COMPLETION_SHELLS)
                .help("The shell to complete gate's arguments in"),
        ),
    ]
}

fn help_flag() -> Arg {
    Arg::new("help")
        .long("help")
        .action(ArgAction::Help)
        .help("Print this help")
}

/// The whole command line interface, for help, man pages and completions.
pub fn command() -> Command {
    let check = Command::new("check")
        .about("Print the decision for a command and why, without running anything")
        .disable_help_flag(true)
        .arg(help_flag())
        .override_usage("gate check [OPTIONS] [--json] (-c COMMAND | -- PROGRAM [ARGS...])")
        .args(GATE_OPTIONS.iter().chain(CHECK_OPTIONS).map(arg))
        .arg(
            Arg::new("command")
                .short('c')
                .value_name("COMMAND")
                .value_hint(ValueHint::CommandString)
                .help("The command text to judge, as an agent would pass it to -c"),
        )
        .arg(
            Arg::new("program")
                .value_name("PROGRAM")
                .num_args(1..)
                .last(true)
                .value_hint(ValueHint::CommandWithArguments)
                .help("A program and its arguments, judged as their shell-quoted join"),
        );
    let doctor = Command::new("doctor")
        .about("Report what this machine can enforce; exit 0 when safe can be fully enforced")
        .disable_help_flag(true)
        .arg(help_flag())
        .args(GATE_OPTIONS.iter().chain(DOCTOR_OPTIONS).map(arg));
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
        .arg(
            Arg::new("command")
                .short('c')
                .value_name("COMMAND")
                .value_hint(ValueHint::CommandString)
                .help("Judge COMMAND, then run it with the real shell (-c COMMAND NAME ARGS...)"),
        )
        .arg(
            Arg::new("program")
                .value_name("PROGRAM")
                .num_args(1..)
                .last(true)
                .value_hint(ValueHint::CommandWithArguments)
                .help(
                    "Judge the program and its arguments, then exec it directly, without a shell",
                ),
        )
        .after_help(AFTER_HELP)
        .subcommand(check)
        .subcommand(doctor)
        .subcommands(tool_subcommands())
}

pub fn help_text() -> String {
    command().render_help().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_definition_is_consistent() {
        command().debug_assert();
    }

    #[test]
    fn help_lists_every_option() {
        let help = help_text();
        for spec in GATE_OPTIONS {
            assert!(
                help.contains(spec.name),
                "{} is missing from --help",
                spec.name
            );
        }
        assert!(
            !help.contains("-h,") && !help.contains("-V,"),
            "short help flags: {help}"
        );
        for level in ["deny", "ask", "safe", "full"] {
            assert!(help.contains(level));
        }
        assert!(help.contains("check"));
    }
}
