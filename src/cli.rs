//! gate's help, as a clap command built from the same option table the parser uses, so
//! `--help` (and later the man page and completions) cannot drift from what is parsed.
//! The hot path never builds it: argv is parsed by [`crate::invocation`].

use clap::{Arg, ArgAction, Command};

use crate::invocation::{CHECK_OPTIONS, GATE_OPTIONS, OptionSpec};

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

Subcommands:
  check   print the decision for a command and why, without running it
  doctor  what this machine can enforce; exit 0 when safe can be fully enforced

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
    match spec.value {
        Some(value) => arg.value_name(value).action(ArgAction::Append),
        None => arg.action(ArgAction::SetTrue),
    }
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
                .help("The command text to judge, as an agent would pass it to -c"),
        )
        .arg(
            Arg::new("program")
                .value_name("PROGRAM")
                .num_args(1..)
                .last(true)
                .help("A program and its arguments, judged as their shell-quoted join"),
        );
    let doctor = Command::new("doctor")
        .about("Report what this machine can enforce; exit 0 when safe can be fully enforced")
        .disable_help_flag(true)
        .arg(help_flag())
        .args(GATE_OPTIONS.iter().map(arg));
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
                .help("Judge COMMAND, then run it with the real shell (-c COMMAND NAME ARGS...)"),
        )
        .arg(
            Arg::new("program")
                .value_name("PROGRAM")
                .num_args(1..)
                .last(true)
                .help(
                    "Judge the program and its arguments, then exec it directly, without a shell",
                ),
        )
        .after_help(AFTER_HELP)
        .subcommand(check)
        .subcommand(doctor)
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
