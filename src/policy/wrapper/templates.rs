//! The agents' wrappers as data: each template gate recognises, release by release
//! ([`TEMPLATES`]), and each agent's marks, for saying what a text that matches no template
//! looks like ([`FAMILIES`]).
//!
//! Data only: [`super::unwrap`] matches the templates; a new agent release is a change here
//! (and, for a new kind of hole, in [`super::holes`]).

use super::{Piece, Quoting, Redirect, Template};

const CLAUDE_TAIL: Piece = Piece::Lit(" && pwd -P >| ");
const CLAUDE_STDIN_21: Piece = Piece::EvalStdin(&[Redirect::DevNull, Redirect::Inherited]);
const CLAUDE_STDIN_10: Piece = Piece::EvalStdin(&[Redirect::EscapedDevNull, Redirect::Inherited]);
/// Gemini CLI's `shopt` line (0.13 and later), before every wrapper of its.
macro_rules! gemini_guard {
    () => {
        "shopt -u promptvars nullglob extglob nocaseglob dotglob; "
    };
}
/// Gemini CLI 0.44 ignored SIGHUP first (reverted in 0.45).
const GEMINI_HUP_GUARD: Piece = Piece::Optional("trap '' HUP; ");
const GEMINI_TAIL: [Piece; 3] = [
    Piece::Lit(" }; __code=$?; pgrep -g 0 >"),
    Piece::GeminiPgrepFile,
    Piece::Lit(" 2>&1; exit $__code;"),
];

/// Claude Code 2.1's frame around its setup statements ([`Piece::ClaudeSetup`]).
const CLAUDE_21: &[Piece] = &[
    Piece::Lit("source "),
    Piece::ClaudeSnapshot,
    Piece::Lit(" 2>/dev/null || true && "),
    Piece::ClaudeSetup,
    Piece::Lit("eval "),
    Piece::EvalWord(Quoting::Claude),
    CLAUDE_STDIN_21,
    CLAUDE_TAIL,
    Piece::ClaudeCwdFile,
];

/// Every wrapper gate recognises. A new agent version is a fixture in
/// `tests/fixtures/agents/` and a line here.
pub static TEMPLATES: &[Template] = &[
    Template {
        agent: "claude-code",
        name: "claude-code/2.1",
        versions: "2.1.x (seen 2026-03 to 2026-12; captured: 2.1.197, 2.1.332), bash and zsh: \
                   the setup between the snapshot and `eval` is any run of statements of \
                   the setup vocabulary ([`Piece::ClaudeSetup`])",
        argv: "SHELL -c TEXT",
        pieces: CLAUDE_21,
    },
    Template {
        agent: "claude-code",
        name: "claude-code/2.0-extglob",
        versions: "2.0.x (seen 2025-12)",
        argv: "SHELL -c -l TEXT",
        pieces: &[
            Piece::Lit("source "),
            Piece::ClaudeSnapshot,
            Piece::Lit(
                " && { shopt -u extglob || setopt NO_EXTENDED_GLOB; } 2>/dev/null || true && eval ",
            ),
            Piece::EvalWord(Quoting::ShellQuoteNpm),
            CLAUDE_STDIN_10,
            CLAUDE_TAIL,
            Piece::ClaudeCwdFile,
        ],
    },
    Template {
        agent: "claude-code",
        name: "claude-code/1.0",
        versions: "1.0.x to 2.0.x (seen 2025-08 to 2025-12)",
        argv: "SHELL -c -l TEXT",
        pieces: &[
            Piece::Lit("source "),
            Piece::ClaudeSnapshot,
            Piece::Lit(" && eval "),
            Piece::EvalWord(Quoting::ShellQuoteNpm),
            CLAUDE_STDIN_10,
            CLAUDE_TAIL,
            Piece::ClaudeCwdFile,
        ],
    },
    Template {
        agent: "gemini-cli",
        name: "gemini-cli/subshell-trap",
        versions: "0.44 and later (captured: 0.44.0, with `trap '' HUP; ` first; 0.61.0)",
        argv: "bash -c TEXT (bash from PATH)",
        pieces: &[
            GEMINI_HUP_GUARD,
            Piece::Lit(concat!(gemini_guard!(), "_bgpids_file=")),
            Piece::GeminiTempFile("bgpids.tmp"),
            Piece::Lit("\n(\n  trap 'jobs -p > \"$_bgpids_file\"' EXIT\n"),
            Piece::GeminiLines,
            Piece::Lit("\n)\n__code=$?\nexit $__code"),
        ],
    },
    Template {
        agent: "gemini-cli",
        name: "gemini-cli/user-shell",
        versions: "0.40 and later: the user's own `!command` (captured: 0.61.0)",
        argv: "bash -c TEXT (bash from PATH, on node-pty)",
        pieces: &[
            GEMINI_HUP_GUARD,
            Piece::Lit(concat!(gemini_guard!(), "{\n")),
            Piece::GeminiLines,
            Piece::Lit("\n}\n__code=$?; pwd > "),
            Piece::GeminiTempFile("pwd.tmp"),
            Piece::Lit("; exit $__code"),
        ],
    },
    Template {
        agent: "gemini-cli",
        name: "gemini-cli/subshell-pgrep-dir",
        versions: "0.40 to 0.43 (captured: 0.40.0)",
        argv: "bash -c TEXT (bash from PATH)",
        pieces: &[
            Piece::Lit(concat!(gemini_guard!(), "(\n")),
            Piece::GeminiLines,
            Piece::Lit("\n)\n__code=$?; pgrep -g 0 >"),
            Piece::GeminiTempFile("pgrep.tmp"),
            Piece::Lit(" 2>&1; exit $__code;"),
        ],
    },
    Template {
        agent: "gemini-cli",
        name: "gemini-cli/subshell-pgrep",
        versions: "0.37 to 0.39 (captured: 0.37.2)",
        argv: "bash -c TEXT (bash from PATH)",
        pieces: &[
            Piece::Lit(concat!(gemini_guard!(), "(\n")),
            Piece::GeminiLines,
            Piece::Lit("\n); __code=$?; pgrep -g 0 >"),
            Piece::GeminiPgrepFile,
            Piece::Lit(" 2>&1; exit $__code;"),
        ],
    },
    Template {
        agent: "gemini-cli",
        name: "gemini-cli/shopt-guard",
        versions: "0.13 to 0.36 (seen 2026-01 to 2026-03)",
        argv: "bash -c TEXT (bash from PATH)",
        pieces: &[
            Piece::Lit(concat!(gemini_guard!(), "{ ")),
            Piece::GeminiGroup,
            GEMINI_TAIL[0],
            GEMINI_TAIL[1],
            GEMINI_TAIL[2],
        ],
    },
    Template {
        agent: "gemini-cli",
        name: "gemini-cli/plain",
        versions: "0.1.x to 0.12 (2025, before the shopt guard)",
        argv: "bash -c TEXT (bash from PATH)",
        pieces: &[
            Piece::Lit("{ "),
            Piece::GeminiGroup,
            GEMINI_TAIL[0],
            GEMINI_TAIL[1],
            GEMINI_TAIL[2],
        ],
    },
    Template {
        agent: "codex",
        name: "codex/snapshot",
        versions: "codex-rs with `shell_snapshot` on, no env overrides (2026; from source)",
        argv: "SHELL -c TEXT (SHELL from passwd)",
        pieces: &[
            Piece::Lit("if . '"),
            Piece::CodexSnapshot,
            Piece::Lit("' >/dev/null 2>&1; then :; fi\n\nexec '"),
            Piece::CodexShell,
            Piece::Lit("' -c "),
            Piece::CodexScript,
        ],
    },
    Template {
        agent: "codex",
        name: "codex/snapshot-env",
        versions: "0.171.0 (npm, captured 2026-12): the environment saved and restored around the snapshot",
        argv: "SHELL -c TEXT (SHELL from passwd)",
        pieces: &[
            Piece::CodexEnvSave,
            Piece::Lit("\n\nif . '"),
            Piece::CodexSnapshot,
            Piece::Lit("' >/dev/null 2>&1; then :; fi\n\n"),
            Piece::CodexEnvRestore,
            Piece::CodexPathPrepend,
            Piece::Lit("\n\nexec '"),
            Piece::CodexShell,
            Piece::Lit("' -c "),
            Piece::CodexScript,
        ],
    },
];
/// An agent whose wrappers gate knows, and what its wrappers have in common whatever the
/// version: text that has one of the marks looks like that agent's wrapper.
#[derive(Debug)]
pub struct Family {
    /// As in [`Template::agent`].
    pub agent: &'static str,
    /// The agent's name, for people: `Gemini CLI`.
    pub name: &'static str,
    /// Fixed text found in every wrapper of the agent's that gate has seen, and not in
    /// commands people type.
    pub marks: &'static [&'static str],
}

/// The agents [`resembles`] knows, one entry each.
pub static FAMILIES: &[Family] = &[
    Family {
        agent: "claude-code",
        name: "Claude Code",
        marks: &["/.claude/shell-snapshots/snapshot-", " && pwd -P >| "],
    },
    Family {
        agent: "gemini-cli",
        name: "Gemini CLI",
        marks: &[
            "__code=$?",
            "_bgpids_file=",
            "shopt -u promptvars nullglob extglob nocaseglob dotglob;",
        ],
    },
    Family {
        agent: "codex",
        name: "Codex CLI",
        marks: &["/.codex/shell_snapshots/", "__CODEX_SNAPSHOT_OVERRIDE"],
    },
];

/// Which known agent's wrapper `command` looks like, by its marks alone: for a text that
/// [`unwrap`](super::unwrap) does not recognise, so that gate can say why nothing in it is allowed (a
/// version of the agent gate does not know, most likely). A guess, used only in what gate
/// says, never in what it decides.
pub fn resembles(command: &str) -> Option<&'static Family> {
    FAMILIES
        .iter()
        .find(|f| f.marks.iter().any(|mark| command.contains(mark)))
}

/// The family of `agent` (as in [`Template::agent`]).
pub fn family(agent: &str) -> Option<&'static Family> {
    FAMILIES.iter().find(|f| f.agent == agent)
}
