//! The tables of gate's command line: its own options, each subcommand's options and
//! the subcommands with their usage and help. Data only; [`super`] and the clap
//! definition ([`super::definition`]) read them.

use super::{OptionSpec, Shared, SubcommandSpec};

pub(crate) const GATE_OPTIONS: &[OptionSpec] = &[
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
pub(crate) const SERVE_OPTIONS: &[OptionSpec] = &[OptionSpec {
    name: "--requests-socket",
    value: Some("PATH"),
    help: "Also take requests (never answers) on PATH, open to every user: for an approver who is another user, or on another machine (docs/approvals.md)",
}];

pub(crate) const PENDING_OPTIONS: &[OptionSpec] = &[OptionSpec {
    name: "--json",
    value: None,
    help: "Print the open requests as one JSON array",
}];

pub(crate) const APPROVE_OPTIONS: &[OptionSpec] = &[
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

pub(crate) const DENY_OPTIONS: &[OptionSpec] = &[OptionSpec {
    name: "--message",
    value: Some("TEXT"),
    help: "Why, or what to do instead: the agent's model reads it",
}];

pub(crate) const ASK_OPTIONS: &[OptionSpec] = &[
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
pub(crate) fn is_candidate_option(spec: &OptionSpec) -> bool {
    spec.name == SYSTEM_FILE.name || spec.name == SYSTEM_DROP_INS.name
}

/// Options that only `gate doctor` takes.
pub(crate) const DOCTOR_OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "--json",
        value: None,
        help: "Print the report as one JSON object",
    },
    SYSTEM_FILE,
    SYSTEM_DROP_INS,
];

/// Options that only `gate rules` takes.
pub(crate) const RULES_OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "--json",
        value: None,
        help: "Print the rules and the lock as one JSON object",
    },
    SYSTEM_FILE,
    SYSTEM_DROP_INS,
];

/// Options that only `gate trust` takes.
pub(crate) const TRUST_OPTIONS: &[OptionSpec] = &[
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
pub(crate) const IMPORT_OPTIONS: &[OptionSpec] = &[
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
pub(crate) const CHECK_OPTIONS: &[OptionSpec] = &[
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

/// The subcommands, in the order `--help` lists them.
pub(crate) const SUBCOMMANDS: &[SubcommandSpec] = &[
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
pub(crate) const COMPLETION_SHELLS: [&str; 3] = ["bash", "zsh", "fish"];
