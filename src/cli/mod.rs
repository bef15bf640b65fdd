//! gate's command line as data: the option tables, the subcommands, and the clap
//! definition built from them, which renders `--help` (gate's and each subcommand's),
//! the completion scripts and the man page's checks, and parses the subcommands.
//!
//! Nothing here runs on the hot path: `gate -c COMMAND`, `gate -- PROGRAM` and the shims
//! are parsed by hand in [`crate::invocation`], from the same tables, without building a
//! clap [`Command`]. Only a subcommand's own arguments go through clap
//! ([`parse_subcommand`]); `gate check` keeps the hand parser too, because it takes the
//! shell's grammar (see [`SubcommandSpec::parsed_by_clap`]).

#![forbid(unsafe_code)]

use std::ffi::{OsStr, OsString};

use clap::builder::{PossibleValue, TypedValueParser, ValueParser};
use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Arg, ArgAction, ArgMatches, Command, ValueHint};

use crate::policy::Level;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// gate's own options. All long, so every short option stays the shell's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionSpec {
    pub name: &'static str,
    pub value: Option<&'static str>,
    pub help: &'static str,
}

pub const GATE_OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "--level",
        value: Some("LEVEL"),
        help: "Permission level: deny, ask, safe or full [env: GATE_LEVEL] [default: ask]",
    },
    OptionSpec {
        name: "--allow",
        value: Some("RULE"),
        help: "Allow commands that are RULE or start with RULE and a space (repeatable)",
    },
    OptionSpec {
        name: "--deny",
        value: Some("RULE"),
        help: "Refuse commands that start with RULE, at every level: in the text, and each program when it runs (repeatable)",
    },
    OptionSpec {
        name: "--ask",
        value: Some("RULE"),
        help: "Ask a person before commands that start with RULE, at every level that runs commands, even when an allow rule matches; read in the text as deny rules are (repeatable)",
    },
    OptionSpec {
        name: "--unsandboxed",
        value: Some("RULE"),
        help: "safe: commands that are RULE or start with RULE and a space may run outside the sandbox, each time a person approves (repeatable)",
    },
    OptionSpec {
        name: "--shell",
        value: Some("PATH"),
        help: "The real shell that runs -c commands [env: GATE_SHELL] [default: /bin/sh]",
    },
    OptionSpec {
        name: "--config",
        value: Some("FILE"),
        help: "Read FILE instead of the user configuration file [env: GATE_CONFIG]",
    },
    OptionSpec {
        name: "--no-config",
        value: None,
        help: "Read no configuration file (refused when the system file is locked)",
    },
    OptionSpec {
        name: "--audit-log",
        value: Some("PATH|off"),
        help: "Append one JSON line per decision to PATH, or turn the log off [env: GATE_AUDIT_LOG]",
    },
    OptionSpec {
        name: "--timeout",
        value: Some("SECONDS"),
        help: "How long to wait for an approver; unanswered means denied [env: GATE_TIMEOUT] [default: 60]",
    },
    OptionSpec {
        name: "--session",
        value: Some("ID"),
        help: "Session that remembered approvals belong to [env: GATE_SESSION]",
    },
    OptionSpec {
        name: "--socket",
        value: Some("PATH"),
        help: "Approver socket [env: GATE_SOCKET]",
    },
    OptionSpec {
        name: "--no-tty",
        value: None,
        help: "Never ask on the terminal",
    },
    OptionSpec {
        name: "--compound",
        value: None,
        help: "ask: also allow `a && b`, `a || b`, `a; b` and `a | b` when every part is allowed on its own (off by default)",
    },
    OptionSpec {
        name: "--readonly",
        value: None,
        help: "ask: also allow commands of the read-only preset (ls, cat, grep, git status, ... with argument checks) without asking",
    },
    OptionSpec {
        name: "--readonly-rules",
        value: None,
        help: "ask: an allow rule that is itself a read-only command (git diff, find, sed -n) allows only commands that pass the read-only checks too",
    },
    OptionSpec {
        name: "--write",
        value: Some("PATH"),
        help: "safe: also allow writing under PATH (repeatable; the workspace, /tmp, $TMPDIR and /dev/shm always are)",
    },
    OptionSpec {
        name: "--deny-read",
        value: Some("PATH"),
        help: "safe: also hide PATH from the command (repeatable; added to ~/.ssh, ~/.aws and the other defaults)",
    },
    OptionSpec {
        name: "--net",
        value: None,
        help: "safe: allow the network (it is off by default)",
    },
    OptionSpec {
        name: "--net-connect",
        value: Some("PORT"),
        help: "safe: allow TCP connections to PORT only (repeatable)",
    },
    OptionSpec {
        name: "--net-bind",
        value: Some("PORT"),
        help: "safe: allow binding TCP PORT only (repeatable)",
    },
    OptionSpec {
        name: "--allow-domain",
        value: Some("DOMAIN"),
        help: "safe: allow connections through gate's proxy to DOMAIN (`host` on port 443, `*.host` for its subdomains, `host:PORT`, `host:*`, or a preset: @npm, @pypi, @crates, @go, @github; repeatable); nothing else is reached",
    },
    OptionSpec {
        name: "--deny-domain",
        value: Some("DOMAIN"),
        help: "safe: refuse DOMAIN through the proxy even where --allow-domain would allow it (repeatable)",
    },
    OptionSpec {
        name: "--resolve",
        value: Some("NAME=ADDRESS"),
        help: "safe: the proxy resolves NAME to ADDRESS, which may be a private or loopback one (repeatable)",
    },
    OptionSpec {
        name: "--unix-sockets",
        value: None,
        help: "safe: allow Unix sockets, which can reach D-Bus, Docker or ssh-agent outside the sandbox (off by default)",
    },
    OptionSpec {
        name: "--best-effort",
        value: None,
        help: "safe: run even if the kernel cannot enforce every part of the sandbox, with a warning naming what is not",
    },
];

/// Options of the approver tools and `gate ask`.
pub const SERVE_OPTIONS: &[OptionSpec] = &[OptionSpec {
    name: "--requests-socket",
    value: Some("PATH"),
    help: "Also take requests (never answers) on PATH, open to every user: for an approver who is another user, or on another machine (docs/approvals.md)",
}];

pub const PENDING_OPTIONS: &[OptionSpec] = &[OptionSpec {
    name: "--json",
    value: None,
    help: "Print the open requests as one JSON array",
}];

pub const APPROVE_OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "--remember",
        value: None,
        help: "Also approve the same command, in any directory, for the rest of its session",
    },
    OptionSpec {
        name: "--remember-rule",
        value: Some("RULE"),
        help: "Also allow later commands matching the allow rule RULE for the rest of the session (requests already waiting are still asked)",
    },
    OptionSpec {
        name: "--always",
        value: None,
        help: "Always allow this exact command from now on, in any session: the broker adds it to your always-allow file (~/.config/gate/always.toml) as an exact allow rule",
    },
    OptionSpec {
        name: "--always-rule",
        value: Some("RULE"),
        help: "Always allow commands starting with RULE from now on (a prefix allow rule that must match this command), added to your always-allow file",
    },
];

pub const DENY_OPTIONS: &[OptionSpec] = &[OptionSpec {
    name: "--message",
    value: Some("TEXT"),
    help: "Why, or what to do instead: the agent's model reads it",
}];

pub const ASK_OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "--option",
        value: Some("TEXT"),
        help: "A choice to offer (repeatable); the answer may still be free text",
    },
    OptionSpec {
        name: "--multiple",
        value: None,
        help: "More than one option may be chosen",
    },
];

/// `--system-file FILE`: a candidate system file, for `gate check` and `gate doctor`.
const SYSTEM_FILE: OptionSpec = OptionSpec {
    name: "--system-file",
    value: Some("FILE"),
    help: "Load FILE as the system file (with its lock) instead of /etc/gate/config.toml, to check it before installing it",
};

/// `--system-drop-ins DIR`: a candidate drop-in directory, likewise.
const SYSTEM_DROP_INS: OptionSpec = OptionSpec {
    name: "--system-drop-ins",
    value: Some("DIR"),
    help: "Load the *.toml files in DIR as the system drop-ins instead of /etc/gate/config.d, to check them before installing them",
};

/// Whether `spec` names a candidate system layer (taken by check, doctor and rules only).
pub fn is_candidate_option(spec: &OptionSpec) -> bool {
    spec.name == SYSTEM_FILE.name || spec.name == SYSTEM_DROP_INS.name
}

/// Options that only `gate doctor` takes.
pub const DOCTOR_OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "--json",
        value: None,
        help: "Print the report as one JSON object",
    },
    SYSTEM_FILE,
    SYSTEM_DROP_INS,
];

/// Options that only `gate rules` takes.
pub const RULES_OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "--json",
        value: None,
        help: "Print the rules and the lock as one JSON object",
    },
    SYSTEM_FILE,
    SYSTEM_DROP_INS,
];

/// Options that only `gate trust` takes.
pub const TRUST_OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "--revoke",
        value: None,
        help: "Remove the trust record of FILE (or of the project file in force here)",
    },
    OptionSpec {
        name: "--list",
        value: None,
        help: "List the trusted project files, and whether each is unchanged since",
    },
];

/// Options that only `gate import` takes.
pub const IMPORT_OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "--save",
        value: None,
        help: "Write the imported rules to gate's import file for the agent (without it, nothing is written)",
    },
    OptionSpec {
        name: "--print",
        value: None,
        help: "Print the files an import writes on stdout (the table goes to stderr)",
    },
    OptionSpec {
        name: "--project",
        value: None,
        help: "Import the allow rules of this directory's project files too (their deny and ask rules always are)",
    },
    OptionSpec {
        name: "--whole-words",
        value: None,
        help: "Gemini CLI: accept gate's whole-word reading of a deny or ask rule's commandPrefix",
    },
    OptionSpec {
        name: "--system-drop-ins",
        value: Some("DIR"),
        help: "Write administrators' rules to DIR instead of /etc/gate/config.d (as root), and load it to check them",
    },
];

/// Options that only `gate check` takes.
pub const CHECK_OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "--json",
        value: None,
        help: "Print the decision as one JSON object",
    },
    SYSTEM_FILE,
    SYSTEM_DROP_INS,
];

/// The options that choose the configuration and the broker's socket: all an approver
/// tool reads.
const BROKER_OPTIONS: &[&str] = &["--config", "--no-config", "--socket"];

/// Which of gate's options a subcommand takes after its name.
#[derive(Debug, Clone, Copy)]
enum Shared {
    /// All of them: the subcommand judges or reports as a run would.
    All,
    /// These, which change what it does.
    Only(&'static [&'static str]),
}

/// A subcommand: its name, its own options, and the options of gate's it shares.
#[derive(Debug)]
pub struct SubcommandSpec {
    pub name: &'static str,
    about: &'static str,
    usage: &'static str,
    /// Its own options (beyond `--help`).
    pub own: &'static [OptionSpec],
    shared: Shared,
    after_help: Option<&'static str>,
}

/// The subcommands, in the order `--help` lists them.
pub const SUBCOMMANDS: &[SubcommandSpec] = &[
    SubcommandSpec {
        name: "check",
        about: "Print the decision for a command and why, without running anything",
        usage: "gate check [OPTIONS] [SHELL-OPTIONS] [--json] [--system-file FILE] [--system-drop-ins DIR] (-c COMMAND [NAME [ARGS...]] | -- PROGRAM [ARGS...])",
        own: CHECK_OPTIONS,
        shared: Shared::All,
        after_help: Some(
            "\
The command is read as a run reads it: shell options (-l, -e, -o OPT, --login, ...)
may come before -c, and gate's options may also come before `check`.

Exit status: 0 gate would run it, 1 it needs an approver, 2 gate would not run it
(refused, or a sandbox that cannot be set up here), 125 a usage or configuration error.",
        ),
    },
    SubcommandSpec {
        name: "doctor",
        about: "Report what this machine can enforce; exit 0 when safe can be fully enforced",
        usage: "gate doctor [OPTIONS] [--json] [--system-file FILE] [--system-drop-ins DIR]",
        own: DOCTOR_OPTIONS,
        shared: Shared::All,
        after_help: Some(
            "\
gate's options (and the configuration) say which settings to report on, as a run with
them would use them.

Exit status: 0 the sandbox of level safe can be fully enforced here, 1 it cannot or
the configuration does not load, 125 a usage error. With --system-file or
--system-drop-ins (a policy checked before it is installed): 0 the configuration loads,
1 it does not, and the error, with its file and line, is also printed on stderr.",
        ),
    },
    SubcommandSpec {
        name: "rules",
        about: "List the rules in force, each with where it came from, and what the lock lets later layers change",
        usage: "gate rules [OPTIONS] [--json] [--system-file FILE] [--system-drop-ins DIR]",
        own: RULES_OPTIONS,
        shared: Shared::All,
        after_help: Some(
            "\
gate's options (and the configuration) say which rules are in force, as a run with
them would use them: `gate rules --ask 'git push'` lists that rule too, from --ask.
Approvals remembered for a session live in the broker and are not listed; lasting
ones (gate approve --always) are rules of the always-allow file, listed with it.

Exit status: 0 listed, 125 the configuration does not load (the error is printed).",
        ),
    },
    SubcommandSpec {
        name: "trust",
        about: "Trust a project's .gate.toml, so that it may loosen as well as tighten; say what that grants",
        usage: "gate trust [--config FILE] [FILE] | gate trust --revoke [FILE] | gate trust --list",
        own: TRUST_OPTIONS,
        shared: Shared::Only(&["--config"]),
        after_help: Some(
            "\
FILE is a .gate.toml; without it, the one in force in this directory (the nearest from
here up to the repository's root). The record keeps the file's path and the SHA-256 of
its bytes, in $XDG_STATE_HOME/gate/trusted (~/.local/state/gate/trusted): any change to
the file makes it untrusted again. A command gate ran cannot trust a file.

Exit status: 0 done, 125 an error (nothing was recorded).",
        ),
    },
    SubcommandSpec {
        name: "import",
        about: "Read the rules an agent already has (Claude Code, Codex CLI, Gemini CLI) and write them as gate rules, never widening",
        usage: "gate import AGENT [FILE...] [--save] [--print] [--project] [--whole-words] [--system-drop-ins DIR]",
        own: IMPORT_OPTIONS,
        shared: Shared::Only(&["--config"]),
        after_help: Some(
            "\
Without FILE, the agent's own files are read where the agent reads them; named files are
read as the person's own. The table says what became of each rule (imported, narrowed,
broadened, asked, dropped) and why, with its file and line. Nothing is written without
--save; then gate replaces its own file for the agent, $XDG_CONFIG_HOME/gate/config.d/
import-AGENT.toml (administrators' rules: /etc/gate/config.d/import-AGENT.toml, as root),
and never edits a file you wrote. See docs/import.md.

Exit status: 0 imported (or a dry run), 125 a rule gate cannot import without letting
through what the agent refused, a file the agent could not read, or a usage error.",
        ),
    },
    SubcommandSpec {
        name: "serve",
        about: "Run the approval broker: hold the requests of gates at level ask until an approver answers",
        usage: "gate serve [--socket PATH] [--requests-socket PATH]",
        own: SERVE_OPTIONS,
        shared: Shared::Only(BROKER_OPTIONS),
        after_help: None,
    },
    SubcommandSpec {
        name: "pending",
        about: "List the requests waiting in the broker: id, command, directory, session, age",
        usage: "gate pending [--json]",
        own: PENDING_OPTIONS,
        shared: Shared::Only(BROKER_OPTIONS),
        after_help: None,
    },
    SubcommandSpec {
        name: "approve",
        about: "Approve a waiting request; prints answered, already settled or not found (exit 0, 3, 4)",
        usage: "gate approve ID [--remember] [--remember-rule RULE] [--always | --always-rule RULE]",
        own: APPROVE_OPTIONS,
        shared: Shared::Only(BROKER_OPTIONS),
        after_help: None,
    },
    SubcommandSpec {
        name: "deny",
        about: "Deny a waiting request; prints answered, already settled or not found (exit 0, 3, 4)",
        usage: "gate deny ID [--message TEXT]",
        own: DENY_OPTIONS,
        shared: Shared::Only(BROKER_OPTIONS),
        after_help: None,
    },
    SubcommandSpec {
        name: "watch",
        about: "Approve on this terminal: prompt for each request as it reaches the broker",
        usage: "gate watch",
        own: &[],
        shared: Shared::Only(BROKER_OPTIONS),
        after_help: None,
    },
    SubcommandSpec {
        name: "ask",
        about: "Ask the user a question through the approver; print the answer (exit 0) or exit 1",
        usage: "gate ask QUESTION [--option TEXT]... [--multiple]",
        own: ASK_OPTIONS,
        shared: Shared::Only(&[
            "--level",
            "--config",
            "--no-config",
            "--socket",
            "--no-tty",
            "--timeout",
            "--session",
        ]),
        after_help: Some("At level deny nothing is asked (exit 1)."),
    },
    SubcommandSpec {
        name: "completions",
        about: "Print the completion script for SHELL (bash, zsh or fish) on standard output",
        usage: "gate completions SHELL",
        own: &[],
        shared: Shared::Only(&[]),
        after_help: None,
    },
];

/// The shells `gate completions` writes a script for.
pub const COMPLETION_SHELLS: [&str; 3] = ["bash", "zsh", "fish"];

/// The subcommand called `word`.
pub fn subcommand(word: &str) -> Option<&'static SubcommandSpec> {
    SUBCOMMANDS.iter().find(|s| s.name == word)
}

impl SubcommandSpec {
    /// Whether its arguments are parsed by clap. `gate check` takes a command as a run
    /// does, in the shell's grammar, which clap cannot express: `-c` is a flag whose
    /// COMMAND is the first operand after all the options (`-c -l CMD`, `-lc CMD`),
    /// `-o`/`+O` take a value per letter in a cluster (`-eo pipefail`), `+c` means `-c`,
    /// unknown short options and bash's long ones pass to the shell in order, and gate's
    /// long options may sit between them. So check is parsed by the hand parser in
    /// [`crate::invocation`], from the same tables; its clap definition renders its help.
    pub fn parsed_by_clap(&self) -> bool {
        self.name != "check"
    }

    /// gate's options it takes after its name.
    pub fn gate_options(&self) -> impl Iterator<Item = &'static OptionSpec> + use<> {
        let shared = self.shared;
        GATE_OPTIONS.iter().filter(move |o| match shared {
            Shared::All => true,
            Shared::Only(names) => names.contains(&o.name),
        })
    }

    /// Its own option or one of gate's it takes, by name (`--message`).
    fn option(&self, name: &str) -> Option<&'static OptionSpec> {
        self.own
            .iter()
            .find(|o| o.name == name)
            .or_else(|| self.gate_options().find(|o| o.name == name))
    }

    /// Its clap definition, for its help, the completions and parsing.
    fn definition(&self) -> Command {
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

    /// Its help, as `gate NAME --help` prints it.
    pub fn help(&self) -> String {
        self.definition().render_help().to_string()
    }

    /// What it takes, for an error message: `deny's options are --message TEXT, and
    /// gate's --config FILE, --no-config, --socket PATH`.
    pub fn options_summary(&self) -> String {
        let show = |o: &OptionSpec| match o.value {
            Some(value) => format!("{} {value}", o.name),
            None => o.name.to_owned(),
        };
        let own: Vec<String> = self.own.iter().map(show).collect();
        let shared = match self.shared {
            Shared::All => "all of gate's options".to_owned(),
            Shared::Only(_) => {
                let list: Vec<String> = self.gate_options().map(show).collect();
                format!("gate's {}", list.join(", "))
            }
        };
        let name = self.name;
        match (own.is_empty(), self.gate_options().next().is_none()) {
            (true, true) => format!("{name} takes no options"),
            (true, false) => format!("{name} takes {shared}"),
            (false, true) => format!("{name}'s options are {}", own.join(", ")),
            (false, false) => format!("{name}'s options are {}, and {shared}", own.join(", ")),
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
pub fn help_text() -> String {
    command().render_help().to_string()
}

// ---------------------------------------------------------------------------------------
// Parsing a subcommand's arguments

/// A subcommand's arguments, as clap matched them against its definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// `--help`: print the subcommand's help.
    Help,
    Args(SubcommandArgs),
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubcommandArgs {
    /// Each option given, its own and gate's, with its value (none for a flag), in the
    /// order of the definition and, for one option, in the order given.
    pub options: Vec<(&'static OptionSpec, Option<OsString>)>,
    /// The operand of `approve`, `deny`, `ask`, `completions`, `trust` and `import`.
    pub operand: Option<OsString>,
    /// The files after `import`'s agent.
    pub files: Vec<OsString>,
}

/// Parse the arguments after a subcommand's name (not `gate check`'s: see
/// [`SubcommandSpec::parsed_by_clap`]). An error is one line without the `gate: `.
pub fn parse_subcommand(sub: &SubcommandSpec, args: Vec<OsString>) -> Result<Parsed, String> {
    debug_assert!(sub.parsed_by_clap(), "{} is parsed by hand", sub.name);
    refuse_option_as_value(sub, &args)?;
    let matches = match sub
        .definition()
        .no_binary_name(true)
        .try_get_matches_from(args)
    {
        Ok(matches) => matches,
        Err(e) if e.kind() == ErrorKind::DisplayHelp => return Ok(Parsed::Help),
        Err(e) => return Err(describe(sub, &e)),
    };
    Ok(Parsed::Args(collect(sub, &matches)))
}

/// What clap matched, by the tables.
fn collect(sub: &SubcommandSpec, matches: &ArgMatches) -> SubcommandArgs {
    let mut parsed = SubcommandArgs::default();
    for spec in sub.own.iter().chain(sub.gate_options()) {
        let id = spec.name.trim_start_matches('-');
        match spec.value {
            None => {
                if matches.get_flag(id) {
                    parsed.options.push((spec, None));
                }
            }
            Some(_) => {
                for value in matches.get_raw(id).into_iter().flatten() {
                    parsed.options.push((spec, Some(value.to_owned())));
                }
            }
        }
    }
    parsed.files = matches
        .try_get_raw("files")
        .ok()
        .flatten()
        .into_iter()
        .flatten()
        .map(OsStr::to_owned)
        .collect();
    parsed.operand = ["id", "question", "shell", "file", "agent"]
        .iter()
        .find_map(|id| matches.try_get_raw(id).ok().flatten())
        .and_then(|mut values| values.next())
        .map(OsStr::to_owned);
    parsed
}

/// `--allow -c`: an option that takes a value, followed by something that looks like an
/// option. Most likely the value was forgotten, so it is an error rather than a rule
/// `-c`; a value that really starts with `-` is written `--allow=-c`. `None` when the
/// value is fine.
pub fn option_as_value(spec: &OptionSpec, value: &OsStr) -> Option<String> {
    let text = value.to_string_lossy();
    if !text.starts_with('-') {
        return None;
    }
    let value_name = spec.value.unwrap_or("VALUE");
    let joined = format!("{}={}", spec.name, shell_words::quote(&text));
    Some(format!(
        "{} needs a value ({value_name}), but {text} after it looks like an option; if \
         the {value_name} really starts with `-`, write {joined}",
        spec.name
    ))
}

/// [`option_as_value`] for each of a subcommand's options given with its value as the
/// next argument, before a `--`.
fn refuse_option_as_value(sub: &SubcommandSpec, args: &[OsString]) -> Result<(), String> {
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if arg == "--" {
            break;
        }
        let Some(spec) = arg
            .to_str()
            .and_then(|name| sub.option(name))
            .filter(|spec| spec.value.is_some())
        else {
            continue;
        };
        if let Some(value) = args.next() {
            if let Some(message) = option_as_value(spec, value) {
                return Err(format!("{}: {message}", sub.name));
            }
        }
    }
    Ok(())
}

/// A clap error as one line, naming what the subcommand takes instead.
fn describe(sub: &SubcommandSpec, e: &clap::Error) -> String {
    let name = sub.name;
    let context = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(list)) => list.first().cloned(),
        _ => None,
    };
    let valid = || match e.get(ContextKind::ValidValue) {
        Some(ContextValue::Strings(list)) => list.join(", "),
        _ => String::new(),
    };
    let see = format!("see gate {name} --help");
    let invalid_arg = context(ContextKind::InvalidArg).unwrap_or_default();
    // `--message <TEXT>` or `<ID>`: the option or operand, as the tables name it.
    let what = invalid_arg
        .split_whitespace()
        .next()
        .unwrap_or("")
        .trim_matches(['<', '>'])
        .to_owned();
    match e.kind() {
        ErrorKind::UnknownArgument if invalid_arg.starts_with('-') => format!(
            "{name}: unknown option {invalid_arg}; {}; {see}",
            sub.options_summary()
        ),
        ErrorKind::UnknownArgument => format!(
            "{name}: unexpected argument {}; usage: {}",
            shell_words::quote(&invalid_arg),
            sub.usage
        ),
        ErrorKind::MissingRequiredArgument => {
            format!("{name}: {what} is missing; usage: {}", sub.usage)
        }
        ErrorKind::InvalidValue => match context(ContextKind::InvalidValue) {
            Some(value) if !value.is_empty() => format!(
                "{name}: {what} cannot be {}; choose one of {}",
                shell_words::quote(&value),
                valid()
            ),
            _ => {
                let value_name = sub.option(&what).and_then(|o| o.value).unwrap_or("VALUE");
                format!("{name}: {what} needs a value ({value_name})")
            }
        },
        ErrorKind::ArgumentConflict => format!("{name}: {what} was given twice"),
        ErrorKind::InvalidUtf8 => format!("{name}: an argument is not valid UTF-8; {see}"),
        _ => {
            // Whatever else clap finds: its first line, without its `error: `.
            let rendered = e.render().to_string();
            let first = rendered.lines().next().unwrap_or("").trim();
            let first = first.strip_prefix("error: ").unwrap_or(first);
            format!("{name}: {first}; {see}")
        }
    }
}

// ---------------------------------------------------------------------------------------
// Mistyped subcommands

/// Words that other tools take as subcommands, and what gate has instead.
const OTHER_WORDS: &[(&str, &str)] = &[
    ("init", "gate doctor"),
    ("setup", "gate doctor"),
    ("install", "gate doctor"),
    ("status", "gate doctor"),
    ("config", "gate doctor"),
    ("info", "gate doctor"),
    ("version", "gate --version"),
    ("run", "gate -c COMMAND"),
    ("exec", "gate -- PROGRAM"),
    ("list", "gate pending"),
    ("explain", "gate check"),
    ("reject", "gate deny"),
    ("daemon", "gate serve"),
    ("start", "gate serve"),
    ("complete", "gate completions"),
];

/// What gate would have been asked for, if `word` (standing where a subcommand's name
/// goes) is a mistyped subcommand — close to a subcommand's name, or a word other tools
/// use — rather than a script name: `gate check` for `chek`. Only plain words count
/// (letters, digits, `-`, `_`): `build.sh` or `./chek` is a script.
pub fn meant_subcommand(word: &str) -> Option<String> {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !plain || word.starts_with('-') {
        return None;
    }
    let lower = word.to_ascii_lowercase();
    if let Some((_, instead)) = OTHER_WORDS.iter().find(|(w, _)| *w == lower) {
        return Some((*instead).to_owned());
    }
    let names = SUBCOMMANDS.iter().map(|s| s.name).chain(["help"]);
    names
        .filter_map(|name| {
            let distance = edit_distance(&lower, name);
            // One edit for the short names (ask, deny, check, trust), two for the
            // others; or the start of a name (`comp`, `appr`). (Two edits from a
            // five-letter name reach common script names: `test` is two from `trust`.)
            let close = distance <= if name.len() <= 5 { 1 } else { 2 };
            let start = lower.len() >= 3 && name.starts_with(&lower);
            (close || start).then_some((distance, name))
        })
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, name)| format!("gate {name}"))
}

/// The optimal string alignment distance: insertions, deletions, substitutions and
/// swaps of two neighbours, each one edit.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // rows[i][j]: the distance between a[..i] and b[..j].
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    fn parse(name: &str, args: &[&str]) -> Result<Parsed, String> {
        parse_subcommand(subcommand(name).unwrap(), os(args))
    }

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

    #[test]
    fn each_subcommand_help_shows_its_usage_and_options_and_not_gates() {
        for sub in SUBCOMMANDS {
            let help = sub.help();
            assert!(help.contains(sub.usage), "{}: {help}", sub.name);
            for option in sub.own.iter().chain(sub.gate_options()) {
                assert!(help.contains(option.name), "{}: {}", sub.name, option.name);
            }
            assert!(!help.contains("Levels:"), "{}: {help}", sub.name);
        }
        assert!(!subcommand("approve").unwrap().help().contains("--level"));
    }

    #[test]
    fn the_options_a_subcommand_shares_are_gates() {
        for sub in SUBCOMMANDS {
            if let Shared::Only(names) = sub.shared {
                let found: Vec<&str> = sub.gate_options().map(|o| o.name).collect();
                assert_eq!(found.len(), names.len(), "{}: {names:?}", sub.name);
            }
            for own in sub.own {
                assert!(
                    !GATE_OPTIONS.iter().any(|o| o.name == own.name),
                    "{}: {} is one of gate's options",
                    sub.name,
                    own.name
                );
            }
        }
    }

    #[test]
    fn an_unknown_option_names_the_subcommands_own() {
        let err = parse("deny", &["1", "--remember"]).unwrap_err();
        assert!(err.starts_with("deny: unknown option --remember;"), "{err}");
        for option in ["--message TEXT", "--socket PATH", "see gate deny --help"] {
            assert!(err.contains(option), "{err}");
        }
        assert!(!err.contains("--level"), "{err}");
    }

    #[test]
    fn options_operands_and_help_are_matched_by_the_tables() {
        let Parsed::Args(args) = parse(
            "approve",
            &[
                "--remember",
                "7",
                "--socket=/s",
                "--remember-rule",
                "npm test",
            ],
        )
        .unwrap() else {
            panic!()
        };
        let names: Vec<(&str, Option<&str>)> = args
            .options
            .iter()
            .map(|(s, v)| (s.name, v.as_deref().and_then(OsStr::to_str)))
            .collect();
        assert_eq!(
            names,
            [
                ("--remember", None),
                ("--remember-rule", Some("npm test")),
                ("--socket", Some("/s")),
            ]
        );
        assert_eq!(args.operand, Some("7".into()));
        assert_eq!(parse("approve", &["--help"]), Ok(Parsed::Help));
        assert_eq!(parse("approve", &["7", "--help"]), Ok(Parsed::Help));
    }

    #[test]
    fn errors_are_one_line_that_says_what_to_do() {
        for (name, args, needle) in [
            ("approve", &[][..], "ID is missing; usage: gate approve ID"),
            (
                "deny",
                &["1", "2"],
                "unexpected argument 2; usage: gate deny ID",
            ),
            (
                "deny",
                &["1", "--message"],
                "--message needs a value (TEXT)",
            ),
            (
                "completions",
                &["powershell"],
                "choose one of bash, zsh, fish",
            ),
            (
                "watch",
                &["-x"],
                "watch: unknown option -x; watch takes gate's --config FILE",
            ),
            (
                "completions",
                &["--socket", "/s"],
                "completions takes no options",
            ),
        ] {
            let err = parse(name, args).unwrap_err();
            assert!(err.contains(needle), "{name} {args:?}: {err}");
            assert!(!err.contains('\n'), "{err:?}");
        }
    }

    #[test]
    fn a_value_that_looks_like_an_option_is_refused_unless_joined_with_equals() {
        let err = parse("deny", &["1", "--message", "-x"]).unwrap_err();
        assert!(err.contains("write --message=-x"), "{err}");
        let err = parse("ask", &["q?", "--option", "--multiple"]).unwrap_err();
        assert!(err.contains("write --option=--multiple"), "{err}");
        let err = parse("ask", &["q?", "--option", "-a b"]).unwrap_err();
        assert!(err.contains("write --option='-a b'"), "{err}");
        let Parsed::Args(args) = parse("deny", &["1", "--message=-x"]).unwrap() else {
            panic!()
        };
        assert_eq!(args.options[0].1, Some("-x".into()));
        // After `--`, everything is an operand.
        assert!(parse("ask", &["--", "--option"]).is_ok());
    }

    #[test]
    fn mistyped_subcommands_are_recognised_and_scripts_are_not() {
        for (word, meant) in [
            ("chek", "gate check"),
            ("chekk", "gate check"),
            ("Check", "gate check"),
            ("aprove", "gate approve"),
            ("appr", "gate approve"),
            ("pendign", "gate pending"),
            ("aks", "gate ask"),
            ("completion", "gate completions"),
            ("halp", "gate help"),
            ("init", "gate doctor"),
            ("version", "gate --version"),
        ] {
            assert_eq!(meant_subcommand(word).as_deref(), Some(meant), "{word}");
        }
        for word in [
            "build.sh",
            "./chek",
            "chek.sh",
            "deploy",
            "make",
            "test",
            "dev",
            "-c",
            "",
            "my script",
        ] {
            assert_eq!(meant_subcommand(word), None, "{word}");
        }
    }

    #[test]
    fn edit_distance_counts_single_edits() {
        assert_eq!(edit_distance("check", "check"), 0);
        assert_eq!(edit_distance("chek", "check"), 1);
        assert_eq!(edit_distance("chekc", "check"), 1);
        assert_eq!(edit_distance("", "ask"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
