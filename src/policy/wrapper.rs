//! Agents' wrappers: the exact text some agents put around the model's command before
//! they hand it to `SHELL -c`, and the model's own command taken back out of it.
//!
//! Claude Code never sends the model's command as is. It sends
//! `source <snapshot> 2>/dev/null || true && <setup> && eval '<command>' < /dev/null && pwd -P >| /tmp/claude-XXXX-cwd`;
//! Gemini CLI (0.44 and later) sends `shopt -u …; _bgpids_file=/tmp/gemini-shell-XXXXXX/bgpids.tmp`,
//! a subshell with an EXIT trap around `<command>` on lines of its own, and `exit $__code`.
//! No allow rule can match such text (it is full of `&&`, `<`, `>`, `;`), so without this
//! module gate would ask about every command those agents run.
//!
//! [`unwrap`] recognises a wrapper only when the whole text matches one of the
//! [`TEMPLATES`] by its shape: the literal pieces exactly (a few of them present in some
//! versions only, [`Piece::Optional`]), each hole only in its own narrow character class
//! (a snapshot path of the agent's own shape, a cwd file `/tmp/claude-<4 hex>-cwd`, a
//! per-call directory `TMP/gemini-shell-XXXXXX`, the command word in exactly the agent's
//! quoting). Anything
//! else — an extra `;`, a second `eval`, trailing text, a different redirection, a path of
//! another shape — is not a wrapper, and gate then judges the whole text as plain text,
//! which matches no allow rule. The command returned is the one the shell will run, with
//! the agent's quoting undone exactly as the shell undoes it, so a forged wrapper whose
//! inner command is allowed runs exactly what the agent's real wrapper would have run.
//!
//! One hole is not a fixed text: Claude Code's setup between its snapshot and `eval`,
//! which changes from release to release (2.1.332 spelled `shopt` as `\builtin shopt`
//! and added an `unalias` of `which`). [`Piece::ClaudeSetup`] accepts any run of
//! statements from a small vocabulary of harmless forms with literal arguments
//! ([`SETUP_VOCABULARY`]): each turns a pattern option off or removes an alias or a
//! function, runs nothing else, expands nothing, and leaves no quote open, so the shell
//! reads the text after it (the `eval` word) exactly as gate does. A release that only
//! rearranges such statements needs no change here; one that adds anything else is judged
//! whole until it is looked at.
//!
//! What the bookkeeping around the command does (sourcing a snapshot file, writing a cwd
//! file, running `pgrep`) is fixed by the template, but the files it names are not: the
//! run path must check them before it trusts a match ([`Bookkeeping`], and
//! `tests/fixtures/agents/README.md` for the analysis). Sourcing a file is running it.
//!
//! A text that matches no template but has a known agent's marks ([`resembles`]) is still
//! judged whole; gate only says which agent's wrapper it looks like, so that a user whose
//! agent changed its wrapper knows why nothing is allowed.
//!
//! Pure: no files, no environment. The templates, their sources and the captured argv
//! they were checked against are in `tests/fixtures/agents/`.

use std::borrow::Cow;

/// An agent's wrapper, recognised, and the agent's own command inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unwrapped<'a> {
    /// The agent (`claude-code`, `gemini-cli`, `codex`).
    pub agent: &'static str,
    /// The template that matched ([`Template::name`]).
    pub template: &'static str,
    /// The agent's own command, unquoted exactly as the shell will see it: the string
    /// `eval` evaluates (Claude Code), the text inside the `{ …; }` group (Gemini CLI),
    /// the `-c` script of the shell that is exec'd (Codex). The 1.0 and 2.0 Claude Code
    /// templates write `\< /dev/null`, so their `eval` evaluates `inner < /dev/null`;
    /// they are recognised only when that changes nothing but stdin
    /// ([`appending_stdin_is_neutral`]).
    pub inner: Cow<'a, str>,
    /// What the wrapper does besides running `inner`, for the run path to check.
    pub bookkeeping: Bookkeeping<'a>,
}

/// The files and programs a recognised wrapper touches besides the inner command. Each is
/// exactly as written in the text (already checked against its template's shape), so the
/// run path can compare it with what it knows (`$HOME`, the file's owner and mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bookkeeping<'a> {
    /// A file the wrapper sources (`source`/`.`) before the inner command: Claude Code's
    /// or Codex's shell snapshot. Sourcing runs whatever the file holds.
    pub sources: Option<&'a str>,
    /// The home directory that [`Bookkeeping::sources`] is under, as written
    /// (`/home/alice` for `/home/alice/.claude/shell-snapshots/…`).
    pub sources_home: Option<&'a str>,
    /// A file the wrapper writes after the inner command (Claude Code's cwd file, Gemini
    /// CLI's pgrep file). It is truncated and written through symlinks.
    pub writes: Option<&'a str>,
    /// The agent's own temporary directory that [`Bookkeeping::writes`] is in (Gemini CLI
    /// 0.40 and later: `mkdtemp` of `TMPDIR/gemini-shell-`), for the run path to check
    /// that it is a private directory of this user's in the temporary directory.
    pub temp_dir: Option<&'a str>,
    /// The shell the wrapper execs to run the inner command (Codex). `None`: the inner
    /// command runs in the shell gate starts.
    pub exec_shell: Option<&'a str>,
    /// A directory the wrapper puts first on `PATH` before the inner command (Codex
    /// 0.171's bundled tools, `…/codex-path`). A program there shadows every program of
    /// the same name, so the run path must know the directory.
    pub path_prepend: Option<&'a str>,
    /// Where the inner command's standard input comes from.
    pub stdin: Stdin,
    /// The shells in which every word of the setup ([`Piece::ClaudeSetup`]) and of the
    /// frame around it (`source`) is a builtin: a bare `shopt` is bash's only, a bare
    /// `setopt` zsh's only. In another shell such a word is a program found on `PATH`,
    /// so the run path must not trust the wrapper unless it runs one of these shells.
    /// `None`: the template makes no such demand.
    pub shells: Option<&'static [&'static str]>,
}

/// Where the inner command's standard input comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stdin {
    /// `/dev/null`, redirected by the wrapper.
    DevNull,
    /// Whatever the shell itself got (the agent's pipe).
    Inherited,
}

/// One agent's wrapper, as data: the literal pieces and the holes between them.
#[derive(Debug)]
pub struct Template {
    pub agent: &'static str,
    /// `agent/shape`, unique.
    pub name: &'static str,
    /// The versions the shape was seen in, and where (see the fixtures README).
    pub versions: &'static str,
    /// How the agent starts its shell with this text.
    pub argv: &'static str,
    pub pieces: &'static [Piece],
}

/// A piece of a template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece {
    /// Exactly these bytes.
    Lit(&'static str),
    /// Claude Code's shell snapshot, unquoted:
    /// `/HOME/.claude/shell-snapshots/snapshot-(bash|zsh)-[0-9]{13}-[a-z0-9]{1,6}.sh`,
    /// where HOME is one or more `/`-separated components of `[A-Za-z0-9._-]`, none of
    /// them `.` or `..`.
    ClaudeSnapshot,
    /// Claude Code's cwd file: `/tmp/claude-[0-9a-f]{4}-cwd`.
    ClaudeCwdFile,
    /// Claude Code 2.1's setup: zero or more statements, each followed by ` && `, made
    /// only of the harmless forms of [`SETUP_VOCABULARY`] with literal arguments (its
    /// parser, `claude_setup`, is the definition). Whatever the agent's next release
    /// adds, reorders or spells with `\builtin ` there is recognised as long as it stays inside the vocabulary;
    /// anything else (another command, an expansion, a quote that is not a plain name,
    /// a redirection to a file) is not a setup, and the text is judged whole.
    ClaudeSetup,
    /// The argument of `eval`, one shell word in the given quoting. Its value is the
    /// inner command.
    EvalWord(Quoting),
    /// What follows the `eval` word: one of these spellings.
    EvalStdin(&'static [Redirect]),
    /// Gemini CLI's `{ … }` group body: the inner command as raw shell text, followed by
    /// `;` unless it ends with `&`. It must not start or end with white space (Gemini CLI
    /// trims the command). Only fixed-length pieces may follow it.
    GeminiGroup,
    /// Gemini CLI's pgrep file: `/tmp/shell_pgrep_[0-9a-f]{12}.tmp`.
    GeminiPgrepFile,
    /// Gemini CLI 0.37 and later: the command on lines of its own, as raw shell text,
    /// trimmed (it must not start or end with white space), with a space added after a
    /// final `\` (Gemini CLI adds one so that the backslash cannot join the next line).
    /// What follows it is matched from the end of the text: only [`Piece::Lit`],
    /// [`Piece::GeminiPgrepFile`] and [`Piece::GeminiTempFile`] may follow it.
    GeminiLines,
    /// A file in Gemini CLI's temporary directory of one call (0.40 and later):
    /// `DIR/gemini-shell-[A-Za-z0-9]{6}/NAME`, DIR an absolute path of plain components
    /// (its temporary directory), written bare (shell-quote leaves such paths unquoted).
    GeminiTempFile(&'static str),
    /// Literal text some versions of the agent write here and others do not (Gemini CLI
    /// 0.44's `trap '' HUP; `).
    Optional(&'static str),
    /// Codex's shell snapshot, the inside of a single-quoted word:
    /// `/HOME/.codex/shell_snapshots/<uuid>[.<digits>].sh`.
    CodexSnapshot,
    /// The shell Codex execs, the inside of a single-quoted word: see
    /// [`is_exec_shell_path`].
    CodexShell,
    /// The script Codex passes to that shell: a word in [`Quoting::SingleQuoted`].
    CodexScript,
    /// Codex 0.171's save of the environment before it sources the snapshot: for each
    /// variable NAME, in order, `PREFIX_SET_<i>="${NAME+x}"` and `PREFIX_<i>="${NAME-}"`,
    /// first with the prefix `__CODEX_SNAPSHOT_OVERRIDE`, then `__CODEX_SNAPSHOT_PROXY_OVERRIDE`,
    /// then the line `__CODEX_SNAPSHOT_PROXY_ENV_SET="${CODEX_NETWORK_PROXY_ACTIVE+x}"`.
    /// NAME is a shell identifier that does not start with `__CODEX_`.
    CodexEnvSave,
    /// The restore that follows the snapshot: exactly the text Codex 0.171 writes for
    /// the names [`Piece::CodexEnvSave`] found (see [`codex_env_restore`]). With a snapshot
    /// that sets nothing it gives every variable back the value it had.
    CodexEnvRestore,
    /// Nothing, or a newline and Codex 0.171's
    /// `if [ -n "${PATH:-}" ]; then export PATH='DIR':"$PATH"; else export PATH='DIR'; fi`,
    /// DIR an absolute path of plain components named `codex-path`.
    CodexPathPrepend,
}

/// How an agent quotes the command word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quoting {
    /// Claude Code 2.1: a bare word of `[A-Za-z0-9_./:@%+,=-]` that starts with
    /// `[A-Za-z0-9_./]`, or [`Quoting::SingleQuoted`].
    Claude,
    /// `'…'` with every `'` of the value written as `'"'"'`: `'a'"'"'b'` is `a'b`.
    SingleQuoted,
    /// npm `shell-quote`'s `quote()` (Claude Code 1.0 and 2.0): one of `'…'` (no `'`
    /// inside, taken verbatim), `"…"` (only `\"`, `\\`, `\$`, `` \` `` escapes; no
    /// unescaped `$` or `` ` ``, no `!`, no control characters), or a bare word of
    /// `[A-Za-z0-9_%+./:-]` and non-ASCII characters where `\X` stands for the ASCII
    /// punctuation X.
    ShellQuoteNpm,
}

/// How the wrapper spells the inner command's standard input after the `eval` word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Redirect {
    /// ` < /dev/null`: `eval`'s own stdin.
    DevNull,
    /// ` \< /dev/null`: `<` and `/dev/null` become two more words of `eval`, so the
    /// evaluated string is the command followed by ` < /dev/null`. Accepted only when
    /// appending that cannot change what the command runs ([`appending_stdin_is_neutral`]).
    EscapedDevNull,
    /// Nothing: the command keeps the shell's stdin (heredocs, explicit `<`).
    Inherited,
}

impl Redirect {
    fn spelling(self) -> &'static str {
        match self {
            Redirect::DevNull => " < /dev/null",
            Redirect::EscapedDevNull => " \\< /dev/null",
            Redirect::Inherited => "",
        }
    }
}

/// Whether `path` can be the shell Codex execs to run the inner command: an absolute
/// path of plain components whose file name is `bash`, `zsh` or `sh`. Which file that is
/// (a system shell, or gate's own shim) is for the run path to check.
pub fn is_exec_shell_path(path: &str) -> bool {
    let Some(rest) = path.strip_prefix('/') else {
        return false;
    };
    let components_ok = rest
        .split('/')
        .all(|c| !c.is_empty() && c != "." && c != ".." && c.bytes().all(is_path_byte));
    let name = &path[path.rfind('/').map_or(0, |at| at + 1)..];
    components_ok && crate::shells::AGENT_SHELLS.contains(&name)
}

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

/// Recognise an agent's wrapper around the `-c` text. `None` unless the text matches a
/// template exactly; the caller then judges the whole text as it is.
pub fn unwrap(command: &str) -> Option<Unwrapped<'_>> {
    // No argv carries a NUL; a text that does is not one an agent sent.
    if command.as_bytes().contains(&0) {
        return None;
    }
    TEMPLATES.iter().find_map(|t| match_template(t, command))
}

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
/// [`unwrap`] does not recognise, so that gate can say why nothing in it is allowed (a
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

/// What gate does instead of running an agent's start-up call. Every answer runs
/// nothing; those that leave a snapshot leave one that holds exactly [`SNAPSHOT_STUB`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartupAnswer<'a> {
    /// Write the stub to this file, which must not exist yet (Claude Code: its script
    /// writes the snapshot file itself).
    WriteStub(&'a str),
    /// Print the stub on standard output (Codex: it keeps what the script prints from
    /// the `# Snapshot file` line on, and writes that to the snapshot file itself).
    PrintStub,
    /// Exit 0 if this file holds exactly the stub (Codex's check that its snapshot
    /// sources cleanly). If it holds anything else the call is not answered: it is
    /// judged like any other command.
    CheckStub(&'a str),
    /// Exit 0 and print nothing (Claude Code's probe of the environment its shell
    /// gets, `SHELL -c env`: it keeps only the names, and takes no output as "unknown").
    /// The environment is not printed, because the same call from the model would show
    /// it every secret there, Claude Code's own `ANTHROPIC_API_KEY` included.
    Nothing,
}

/// What an agent's start-up call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StartupCall<'a> {
    pub agent: &'static str,
    /// `agent/what`.
    pub kind: &'static str,
    pub answer: StartupAnswer<'a>,
    /// The home directory the snapshot file is under, as written (`None` when gate
    /// only prints).
    pub home: Option<&'a str>,
}

impl<'a> StartupCall<'a> {
    /// The snapshot file the call writes or checks, if it names one.
    pub fn snapshot(&self) -> Option<&'a str> {
        match self.answer {
            StartupAnswer::WriteStub(path) | StartupAnswer::CheckStub(path) => Some(path),
            StartupAnswer::PrintStub | StartupAnswer::Nothing => None,
        }
    }
}

/// Recognise an agent's own start-up call from the shell's arguments (everything after
/// argv0, as the shim receives them):
///
/// - Claude Code's snapshot creation, `-c -l SCRIPT`, where SCRIPT starts with
///   `SNAPSHOT_FILE=<snapshot path>` and a newline and writes `# Snapshot file` to it;
/// - Claude Code's probe of its shell's environment, exactly `-c env` (2.1.19x: it
///   keeps the variables' names);
/// - Codex's snapshot capture, `-lc SCRIPT`, where SCRIPT prints a line
///   `echo '# Snapshot file'` (bash, sh) or `print '# Snapshot file'` (zsh) and Codex keeps
///   the output from there on;
/// - Codex's check of the file it wrote, `-c 'set -e; . "<snapshot path>"'`.
///
/// The scripts themselves cannot be checked: they source the user's start-up files and
/// differ between versions and machines, so anything could be in them. Recognising one
/// says only "this is shaped like the call"; running it would run whatever it holds. So
/// gate answers the call itself ([`StartupAnswer`]) and runs nothing: a forged call gets
/// an empty snapshot and nothing more.
pub fn startup<'a>(args: &[&'a str]) -> Option<StartupCall<'a>> {
    if args.iter().any(|a| a.as_bytes().contains(&0)) {
        return None;
    }
    match args {
        ["-c", "-l", script] => claude_startup(script),
        ["-c", "env"] => Some(StartupCall {
            agent: "claude-code",
            kind: "claude-code/env-probe",
            answer: StartupAnswer::Nothing,
            home: None,
        }),
        ["-lc", script] => codex_capture(script),
        ["-c", script] => codex_check(script),
        _ => None,
    }
}

fn claude_startup(script: &str) -> Option<StartupCall<'_>> {
    let rest = script.strip_prefix("SNAPSHOT_FILE=")?;
    let line_end = rest.find('\n')?;
    let first = &rest[..line_end];
    // `quote()` leaves a plain path bare and single-quotes one with other characters.
    let path = match first.strip_prefix('\'') {
        Some(quoted) => quoted.strip_suffix('\'')?,
        None => first,
    };
    if path.len() != claude_snapshot_len(path)? {
        return None;
    }
    if !rest[line_end..].contains(SNAPSHOT_CREATE_MARK) {
        return None;
    }
    Some(StartupCall {
        agent: "claude-code",
        kind: "claude-code/snapshot-create",
        answer: StartupAnswer::WriteStub(path),
        home: Some(home_of(path, CLAUDE_SNAPSHOT_DIR)?),
    })
}

fn codex_capture(script: &str) -> Option<StartupCall<'static>> {
    let marks = ["echo '# Snapshot file'", "print '# Snapshot file'"];
    script
        .lines()
        .any(|line| marks.contains(&line))
        .then_some(StartupCall {
            agent: "codex",
            kind: "codex/snapshot-capture",
            answer: StartupAnswer::PrintStub,
            home: None,
        })
}

fn codex_check(script: &str) -> Option<StartupCall<'_>> {
    let path = script.strip_prefix("set -e; . \"")?.strip_suffix('"')?;
    codex_snapshot_name(path)?;
    Some(StartupCall {
        agent: "codex",
        kind: "codex/snapshot-check",
        answer: StartupAnswer::CheckStub(path),
        home: Some(home_of(path, CODEX_SNAPSHOT_DIR)?),
    })
}

/// Whether `args` (everything after argv0) is an agent's own start-up call, which must
/// be decided without a prompt; the name of the call if so. See [`startup`].
pub fn startup_call(argv: &[&str]) -> Option<&'static str> {
    startup(argv).map(|s| s.kind)
}

/// The line Claude Code's snapshot script writes first to the snapshot file.
const SNAPSHOT_CREATE_MARK: &str = "echo \"# Snapshot file\" >| \"$SNAPSHOT_FILE\"";

/// What gate leaves as an agent's shell snapshot when it answers the agent's start-up
/// call itself: comments only, so sourcing it does nothing in bash, zsh or sh. It starts
/// with the line both Claude Code and Codex look for.
pub const SNAPSHOT_STUB: &str = "# Snapshot file\n# Written by gate, which answers an agent's shell-snapshot call without running it.\n";

/// Whether a snapshot file's content is exactly gate's stub, so that sourcing it is known
/// to do nothing.
pub fn is_snapshot_stub(content: &[u8]) -> bool {
    content == SNAPSHOT_STUB.as_bytes()
}

/// What gate prints for Codex's capture (0.17x): the stub as the capture's first section,
/// then the sections Codex expects after it, each ended by a NUL: no aliases, no exported
/// variables, and the end. Codex refuses a capture without them ("invalid shell snapshot
/// capture") and then runs without a snapshot.
pub const CODEX_CAPTURE_STUB: &str = "# Snapshot file\n# Written by gate, which answers an agent's shell-snapshot call without running it.\n\0\0\0";

/// The snapshot file Codex 0.171 writes from [`CODEX_CAPTURE_STUB`]: the first section,
/// then its header of the (empty) exports. Comments only.
pub const CODEX_SNAPSHOT_STUB: &str = "# Snapshot file\n# Written by gate, which answers an agent's shell-snapshot call without running it.\n# exports (native declarations)\n";

/// Whether a Codex snapshot file holds exactly what Codex makes of gate's answer to its
/// capture (or, as older releases wrote it, the stub itself), so that sourcing it does
/// nothing.
pub fn is_codex_snapshot_stub(content: &[u8]) -> bool {
    content == CODEX_SNAPSHOT_STUB.as_bytes() || is_snapshot_stub(content)
}

const CLAUDE_SNAPSHOT_DIR: &str = "/.claude/shell-snapshots/";
const CODEX_SNAPSHOT_DIR: &str = "/.codex/shell_snapshots/";

fn match_template<'a>(template: &'static Template, text: &'a str) -> Option<Unwrapped<'a>> {
    let mut pos = 0;
    let mut inner: Option<Value<'a>> = None;
    // Shapes that take more than a scan are checked once every literal has matched.
    let mut claude_snapshot: Option<&'a str> = None;
    let mut bookkeeping = Bookkeeping {
        sources: None,
        sources_home: None,
        writes: None,
        temp_dir: None,
        exec_shell: None,
        path_prepend: None,
        stdin: Stdin::Inherited,
        shells: None,
    };
    let mut appended_stdin = false;
    let mut codex_env: Option<CodexEnv<'a>> = None;
    for (i, piece) in template.pieces.iter().enumerate() {
        let rest = &text[pos..];
        let used = match *piece {
            Piece::Lit(lit) => rest.starts_with(lit).then_some(lit.len())?,
            Piece::Optional(lit) => {
                if rest.starts_with(lit) {
                    lit.len()
                } else {
                    0
                }
            }
            Piece::ClaudeSnapshot => {
                let end = rest
                    .bytes()
                    .position(|b| !is_path_byte(b))
                    .unwrap_or(rest.len());
                claude_snapshot = Some(&rest[..end]);
                end
            }
            Piece::ClaudeSetup => {
                let (len, shells) = claude_setup(rest)?;
                bookkeeping.shells = Some(shells);
                len
            }
            Piece::ClaudeCwdFile => {
                let len = claude_cwd_len(rest)?;
                bookkeeping.writes = Some(&rest[..len]);
                len
            }
            Piece::EvalWord(quoting) => {
                let (value, len) = decode_word(rest, quoting)?;
                inner = Some(value);
                len
            }
            Piece::EvalStdin(forms) => {
                // The spellings start differently (` <`, ` \<`, nothing), and the piece
                // after this one starts with ` &&`, so at most one can lead to a match.
                let form = forms
                    .iter()
                    .copied()
                    .find(|f| !f.spelling().is_empty() && rest.starts_with(f.spelling()))
                    .or_else(|| {
                        forms
                            .contains(&Redirect::Inherited)
                            .then_some(Redirect::Inherited)
                    })?;
                match form {
                    Redirect::DevNull => bookkeeping.stdin = Stdin::DevNull,
                    Redirect::EscapedDevNull => {
                        bookkeeping.stdin = Stdin::DevNull;
                        appended_stdin = true;
                    }
                    Redirect::Inherited => bookkeeping.stdin = Stdin::Inherited,
                }
                form.spelling().len()
            }
            Piece::GeminiGroup | Piece::GeminiLines => {
                // The raw command ends where the pieces after it, matched from the end
                // of the text, begin; nothing is left for the loop to match.
                let end = match_from_end(&template.pieces[i + 1..], rest, &mut bookkeeping)?;
                let body = &rest[..end];
                let raw = if *piece == Piece::GeminiGroup {
                    gemini_inner(body)?
                } else {
                    gemini_lines_inner(body)?
                };
                inner = Some(Value::Borrowed(raw));
                pos = text.len();
                break;
            }
            Piece::GeminiPgrepFile => {
                let len = gemini_pgrep_len(rest)?;
                bookkeeping.writes = Some(&rest[..len]);
                len
            }
            Piece::GeminiTempFile(name) => {
                let end = rest
                    .bytes()
                    .position(|b| !is_path_byte(b))
                    .unwrap_or(rest.len());
                let path = &rest[..end];
                bookkeeping.temp_dir = Some(gemini_temp_dir(path, name)?);
                bookkeeping.writes = Some(path);
                end
            }
            Piece::CodexSnapshot => {
                let end = rest.find('\'')?;
                let path = &rest[..end];
                if codex_snapshot_name(path) != Some(CodexSnapshot::Final) {
                    return None;
                }
                bookkeeping.sources = Some(path);
                bookkeeping.sources_home = Some(home_of(path, CODEX_SNAPSHOT_DIR)?);
                end
            }
            Piece::CodexShell => {
                let end = rest.find('\'')?;
                let shell = &rest[..end];
                if !is_exec_shell_path(shell) {
                    return None;
                }
                bookkeeping.exec_shell = Some(shell);
                end
            }
            Piece::CodexScript => {
                let (value, len) = decode_single_quoted(rest)?;
                inner = Some(value);
                len
            }
            Piece::CodexEnvSave => {
                let (env, len) = codex_env_save(rest)?;
                codex_env = Some(env);
                len
            }
            Piece::CodexEnvRestore => {
                let expected = codex_env_restore(codex_env.as_ref()?);
                rest.starts_with(&expected).then_some(expected.len())?
            }
            Piece::CodexPathPrepend => match codex_path_prepend(rest) {
                Some((dir, len)) => {
                    bookkeeping.path_prepend = Some(dir);
                    len
                }
                None => 0,
            },
        };
        pos += used;
    }
    if pos != text.len() {
        return None;
    }
    if let Some(path) = claude_snapshot {
        if claude_snapshot_len(path)? != path.len() {
            return None;
        }
        bookkeeping.sources = Some(path);
        bookkeeping.sources_home = Some(home_of(path, CLAUDE_SNAPSHOT_DIR)?);
    }
    let inner = inner?.into_cow()?;
    if inner.is_empty() || (appended_stdin && !appending_stdin_is_neutral(&inner)) {
        return None;
    }
    Some(Unwrapped {
        agent: template.agent,
        template: template.name,
        inner,
        bookkeeping,
    })
}

/// Match `pieces` against the end of `rest`, last piece first: the offset where the
/// first of them begins. Only pieces whose extent can be found from their right end may
/// follow a raw command: literals, Gemini CLI's pgrep file (fixed length) and its
/// temporary file (a run of path characters, which the literal before it must not end
/// with).
fn match_from_end<'a>(
    pieces: &[Piece],
    rest: &'a str,
    bookkeeping: &mut Bookkeeping<'a>,
) -> Option<usize> {
    let mut end = rest.len();
    for piece in pieces.iter().rev() {
        let before = &rest[..end];
        let start = match *piece {
            Piece::Lit(lit) => before.strip_suffix(lit).map(str::len)?,
            Piece::GeminiPgrepFile => {
                let start = end.checked_sub(GEMINI_PGREP_LEN)?;
                let file = before.get(start..)?;
                if gemini_pgrep_len(file)? != file.len() {
                    return None;
                }
                bookkeeping.writes = Some(file);
                start
            }
            Piece::GeminiTempFile(name) => {
                let start = before
                    .bytes()
                    .rposition(|b| !is_path_byte(b))
                    .map_or(0, |at| at + 1);
                let path = &before[start..];
                bookkeeping.temp_dir = Some(gemini_temp_dir(path, name)?);
                bookkeeping.writes = Some(path);
                start
            }
            _ => return None,
        };
        end = start;
    }
    Some(end)
}

/// Whether `piece` can be matched from its right end ([`match_from_end`]).
#[cfg(test)]
fn matches_from_end(piece: Piece) -> bool {
    matches!(
        piece,
        Piece::Lit(_) | Piece::GeminiPgrepFile | Piece::GeminiTempFile(_)
    )
}

fn is_path_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'/')
}

/// The home directory part of `path`, which is `HOME` + `dir` + a file name: one or more
/// components of `[A-Za-z0-9._-]`, none `.` or `..`.
fn home_of<'a>(path: &'a str, dir: &str) -> Option<&'a str> {
    let at = path.rfind(dir)?;
    let (home, file) = (&path[..at], &path[at + dir.len()..]);
    if file.contains('/') || !home.starts_with('/') {
        return None;
    }
    let components_ok = home[1..].split('/').all(|c| {
        !c.is_empty() && c != "." && c != ".." && c.bytes().all(|b| is_path_byte(b) && b != b'/')
    });
    components_ok.then_some(home)
}

/// `path.len()` if `path` is a Claude Code snapshot path, else `None`.
fn claude_snapshot_len(path: &str) -> Option<usize> {
    home_of(path, CLAUDE_SNAPSHOT_DIR)?;
    let name = &path[path.rfind('/')? + 1..];
    let rest = name.strip_prefix("snapshot-")?;
    let rest = rest
        .strip_prefix("bash-")
        .or_else(|| rest.strip_prefix("zsh-"))?;
    let (stamp, rest) = rest.split_at_checked(13)?;
    let id = rest.strip_prefix('-')?.strip_suffix(".sh")?;
    let stamp_ok = stamp.bytes().all(|b| b.is_ascii_digit());
    let id_ok = (1..=6).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase());
    (stamp_ok && id_ok).then_some(path.len())
}

/// The statements [`Piece::ClaudeSetup`] accepts, in brief (the parser below,
/// `claude_setup`, is the definition). Each changes only the shell's own state,
/// towards the defaults gate judges commands under, and runs nothing else:
///
/// - `shopt -u OPT…` (bash): OPT one of [`SETUP_BASH_OPTIONS`], each off by default in
///   `bash -c`, and only ever narrowing what a pattern matches;
/// - `setopt OPT…` (zsh): OPT one of [`SETUP_ZSH_OPTIONS`], the same for zsh;
/// - `unalias -- NAME` and `unset -f -- NAME`: remove an alias or a function, so that a
///   name means the builtin or the program gate judged; NAME a plain name
///   (`[A-Za-z0-9_][A-Za-z0-9_.-]*`), bare or in single quotes;
/// - each builtin written as it is or as `\builtin NAME`;
/// - one of them alone, or a group `{ A; B; }` / `{ A || B; }` of them;
/// - followed by nothing, ` 2>/dev/null` or ` >/dev/null 2>&1`, then ` || true`;
/// - at most [`SETUP_MAX_STATEMENTS`] of them, and not a bare `shopt` (bash's) and a bare
///   `setopt` (zsh's) in one setup: in the other shell the word would be a program found
///   on `PATH` ([`Bookkeeping::shells`], which the run path compares with its shell).
pub const SETUP_VOCABULARY: &str = "shopt -u OPT…, setopt OPT…, unalias -- NAME, unset -f -- NAME (each also as \\builtin …), alone or in { …; } with ; or ||, then nothing, 2>/dev/null or >/dev/null 2>&1, then || true";

/// Bash options a setup statement may turn off: off by default in `bash -c`, so that
/// turning them off leaves the shell as gate judges it; each only changes what patterns
/// match. (Turning off an option that is on by default, `extquote` say, would change how
/// the command gate judged is read: never in the vocabulary.)
pub const SETUP_BASH_OPTIONS: &[&str] = &[
    "extglob",
    "nullglob",
    "failglob",
    "dotglob",
    "nocaseglob",
    "nocasematch",
    "globstar",
];

/// Zsh options a setup statement may set, exactly as Claude Code spells them: each turns
/// off a kind of pattern matching or expansion, most of them off by default already
/// (`EQUALS`, the `=cmd` expansion, is on: turning it off makes zsh read a word as bash
/// does). (`NO_CASE_GLOB` would widen matching: not in the list.)
pub const SETUP_ZSH_OPTIONS: &[&str] = &[
    "NO_EXTENDED_GLOB",
    "NO_BARE_GLOB_QUAL",
    "NO_BRACE_CCL",
    "NO_MAGIC_EQUAL_SUBST",
    "NO_RC_QUOTES",
    "NO_EQUALS",
    "NO_KSH_GLOB",
    "NO_GLOB_DOTS",
    "NO_NULL_GLOB",
];

/// At most this many setup statements: boilerplate, not a program.
pub const SETUP_MAX_STATEMENTS: usize = 16;

/// The shells whose builtins a setup's words are ([`Bookkeeping::shells`]).
const BASH_OR_ZSH: &[&str] = &["bash", "zsh"];
const BASH_ONLY: &[&str] = &["bash"];
const ZSH_ONLY: &[&str] = &["zsh"];

/// Which shell's builtins a setup's words are, statement by statement.
#[derive(Debug, Default, Clone, Copy)]
struct SetupShells {
    /// A bare `shopt`: bash only.
    bash: bool,
    /// A bare `setopt`: zsh only.
    zsh: bool,
}

/// [`Piece::ClaudeSetup`]: the length of the run of setup statements at the start of
/// `rest`, each with its ` && `, and the shells it can run in. It stops before `eval `;
/// any statement outside the vocabulary, or a setup that needs both bash and zsh, makes
/// the whole text no wrapper.
fn claude_setup(rest: &str) -> Option<(usize, &'static [&'static str])> {
    let mut pos = 0;
    let mut needs = SetupShells::default();
    for _ in 0..=SETUP_MAX_STATEMENTS {
        if rest[pos..].starts_with("eval ") {
            return match (needs.bash, needs.zsh) {
                (false, false) => Some((pos, BASH_OR_ZSH)),
                (true, false) => Some((pos, BASH_ONLY)),
                (false, true) => Some((pos, ZSH_ONLY)),
                (true, true) => None,
            };
        }
        pos += setup_statement_len(&rest[pos..], &mut needs)?;
    }
    None
}

/// One statement with its ` || true && `.
fn setup_statement_len(rest: &str, needs: &mut SetupShells) -> Option<usize> {
    let mut pos = setup_core_len(rest, needs)?;
    for redirect in [" >/dev/null 2>&1", " 2>/dev/null"] {
        if rest[pos..].starts_with(redirect) {
            pos += redirect.len();
            break;
        }
    }
    let tail = " || true && ";
    rest[pos..].starts_with(tail).then_some(pos + tail.len())
}

/// A simple statement, or a `{ …; }` group of them joined by `; ` or ` || `.
fn setup_core_len(rest: &str, needs: &mut SetupShells) -> Option<usize> {
    if !rest.starts_with("{ ") {
        return setup_simple_len(rest, needs);
    }
    let mut pos = "{ ".len();
    loop {
        pos += setup_simple_len(&rest[pos..], needs)?;
        let after = &rest[pos..];
        if after.starts_with("; }") {
            return Some(pos + "; }".len());
        }
        pos += ["; ", " || "]
            .into_iter()
            .find(|j| after.starts_with(j))?
            .len();
    }
}

/// `shopt -u OPT…`, `setopt OPT…`, `unalias -- NAME` or `unset -f -- NAME`, each also
/// as `\builtin …`. A bare `shopt` or `setopt` ties the setup to its shell: in the
/// other one it is a program found on `PATH` (`\builtin shopt` there only fails).
fn setup_simple_len(rest: &str, needs: &mut SetupShells) -> Option<usize> {
    let (prefix, command) = match rest.strip_prefix("\\builtin ") {
        Some(after) => ("\\builtin ".len(), after),
        None => (0, rest),
    };
    let bare = prefix == 0;
    let len = if let Some(after) = command.strip_prefix("shopt -u") {
        needs.bash |= bare;
        "shopt -u".len() + option_words_len(after, SETUP_BASH_OPTIONS)?
    } else if let Some(after) = command.strip_prefix("setopt") {
        needs.zsh |= bare;
        "setopt".len() + option_words_len(after, SETUP_ZSH_OPTIONS)?
    } else if let Some(after) = command.strip_prefix("unalias -- ") {
        "unalias -- ".len() + setup_name_len(after)?
    } else if let Some(after) = command.strip_prefix("unset -f -- ") {
        "unset -f -- ".len() + setup_name_len(after)?
    } else {
        return None;
    };
    Some(prefix + len)
}

/// One or more ` OPT`, each a whole word of `options`.
fn option_words_len(rest: &str, options: &[&str]) -> Option<usize> {
    let mut pos = 0;
    while let Some(after) = rest[pos..].strip_prefix(' ') {
        let end = after
            .bytes()
            .position(|b| !(b.is_ascii_alphanumeric() || b == b'_'))
            .unwrap_or(after.len());
        if !options.contains(&&after[..end]) {
            break;
        }
        pos += 1 + end;
    }
    (pos > 0).then_some(pos)
}

/// A plain name, bare or in single quotes: `[A-Za-z0-9_][A-Za-z0-9_.-]*`.
fn setup_name_len(rest: &str) -> Option<usize> {
    let quoted = rest.starts_with('\'');
    let inner = if quoted { &rest[1..] } else { rest };
    let end = inner
        .bytes()
        .position(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')))
        .unwrap_or(inner.len());
    let first_ok = inner
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_');
    if !first_ok {
        return None;
    }
    if quoted {
        inner[end..].starts_with('\'').then_some(end + 2)
    } else {
        Some(end)
    }
}

const CLAUDE_CWD_LEN: usize = "/tmp/claude-0000-cwd".len();
const GEMINI_PGREP_LEN: usize = "/tmp/shell_pgrep_000000000000.tmp".len();

fn is_lower_hex(s: &str) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn claude_cwd_len(rest: &str) -> Option<usize> {
    let id = rest.strip_prefix("/tmp/claude-")?.get(..4)?;
    let ok = is_lower_hex(id) && rest.get(16..CLAUDE_CWD_LEN) == Some("-cwd");
    ok.then_some(CLAUDE_CWD_LEN)
}

fn gemini_pgrep_len(rest: &str) -> Option<usize> {
    let id = rest.strip_prefix("/tmp/shell_pgrep_")?.get(..12)?;
    let ok = is_lower_hex(id) && rest.get(29..GEMINI_PGREP_LEN) == Some(".tmp");
    ok.then_some(GEMINI_PGREP_LEN)
}

/// Which of Codex's snapshot files `path` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CodexSnapshot {
    /// `<uuid>.sh` or `<uuid>.<digits>.sh`: the snapshot the wrapper sources.
    Final,
    /// `<uuid>.tmp-<digits>`: the file Codex writes and checks before renaming it.
    Temporary,
}

/// `/HOME/.codex/shell_snapshots/` and a Codex snapshot file name (uuid lowercase).
fn codex_snapshot_name(path: &str) -> Option<CodexSnapshot> {
    home_of(path, CODEX_SNAPSHOT_DIR)?;
    let name = &path[path.rfind('/')? + 1..];
    let (uuid, kind, digits) = if let Some(stem) = name.strip_suffix(".sh") {
        match stem.split_once('.') {
            Some((uuid, nonce)) => (uuid, CodexSnapshot::Final, Some(nonce)),
            None => (stem, CodexSnapshot::Final, None),
        }
    } else {
        let (uuid, nonce) = name.split_once(".tmp-")?;
        (uuid, CodexSnapshot::Temporary, Some(nonce))
    };
    let groups: Vec<&str> = uuid.split('-').collect();
    let uuid_ok = groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && is_lower_hex(g));
    let digits_ok =
        digits.is_none_or(|n| (1..=20).contains(&n.len()) && n.bytes().all(|b| b.is_ascii_digit()));
    (uuid_ok && digits_ok).then_some(kind)
}

/// The variables Codex 0.171 saves before it sources its snapshot and restores after.
#[derive(Debug)]
struct CodexEnv<'a> {
    overrides: Vec<&'a str>,
    proxies: Vec<&'a str>,
}

const CODEX_OVERRIDE: &str = "__CODEX_SNAPSHOT_OVERRIDE";
const CODEX_PROXY_OVERRIDE: &str = "__CODEX_SNAPSHOT_PROXY_OVERRIDE";
const CODEX_PROXY_ENV_SET: &str =
    "__CODEX_SNAPSHOT_PROXY_ENV_SET=\"${CODEX_NETWORK_PROXY_ACTIVE+x}\"";
const CODEX_PROXY_IF: &str = "if [ -n \"$__CODEX_SNAPSHOT_PROXY_ENV_SET\" ] || [ -n \"${CODEX_NETWORK_PROXY_ACTIVE+x}\" ]; then";

/// A name Codex saves: a shell identifier, and not one of its own temporaries.
fn is_codex_env_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    let first_ok = bytes
        .next()
        .is_some_and(|b| b == b'_' || b.is_ascii_alphabetic());
    first_ok
        && bytes.all(|b| b == b'_' || b.is_ascii_alphanumeric())
        && !name.starts_with("__CODEX_")
}

/// One saved pair at the start of `rest`: `PREFIX_SET_<i>="${NAME+x}"\nPREFIX_<i>="${NAME-}"\n`.
/// The name and the length, newline included.
fn codex_saved_pair<'a>(rest: &'a str, prefix: &str, index: usize) -> Option<(&'a str, usize)> {
    let head = format!("{prefix}_SET_{index}=\"${{");
    let after = rest.strip_prefix(head.as_str())?;
    let name = &after[..after.find("+x}\"\n")?];
    if !is_codex_env_name(name) {
        return None;
    }
    let pair = format!("{head}{name}+x}}\"\n{prefix}_{index}=\"${{{name}-}}\"\n");
    rest.starts_with(pair.as_str())
        .then_some((name, pair.len()))
}

/// [`Piece::CodexEnvSave`]: the names, and the length up to the end of the last line
/// (its newline not included).
fn codex_env_save(rest: &str) -> Option<(CodexEnv<'_>, usize)> {
    let mut pos = 0;
    let mut groups: [Vec<&str>; 2] = [Vec::new(), Vec::new()];
    for (group, prefix) in groups
        .iter_mut()
        .zip([CODEX_OVERRIDE, CODEX_PROXY_OVERRIDE])
    {
        while let Some((name, len)) = codex_saved_pair(&rest[pos..], prefix, group.len()) {
            group.push(name);
            pos += len;
        }
    }
    if !rest[pos..].starts_with(CODEX_PROXY_ENV_SET) {
        return None;
    }
    let [overrides, proxies] = groups;
    Some((
        CodexEnv { overrides, proxies },
        pos + CODEX_PROXY_ENV_SET.len(),
    ))
}

/// The restore of one saved variable, as Codex 0.171 writes it.
fn codex_restore_one(prefix: &str, index: usize, name: &str) -> String {
    let (set, value) = (format!("{prefix}_SET_{index}"), format!("{prefix}_{index}"));
    format!(
        "if [ -n \"${{{set}}}\" ]; then\n  if [ -z \"${{{name}+x}}\" ] || [ \"${{{name}-}}\" != \"${{{value}}}\" ]; then export {name}=\"${{{value}}}\"; else export {name}; fi\nelse builtin unset {name} 2>/dev/null || command unset {name}; fi\nbuiltin unset {set} {value} 2>/dev/null || command unset {set} {value}"
    )
}

/// [`Piece::CodexEnvRestore`]: the restores of the overrides, then the proxy variables'
/// inside one `if … fi`, lines joined by newlines.
fn codex_env_restore(env: &CodexEnv<'_>) -> String {
    let mut blocks: Vec<String> = env
        .overrides
        .iter()
        .enumerate()
        .map(|(i, name)| codex_restore_one(CODEX_OVERRIDE, i, name))
        .collect();
    let mut proxy = vec![CODEX_PROXY_IF.to_owned()];
    proxy.extend(
        env.proxies
            .iter()
            .enumerate()
            .map(|(i, name)| codex_restore_one(CODEX_PROXY_OVERRIDE, i, name)),
    );
    proxy.push("fi".to_owned());
    blocks.push(proxy.join("\n"));
    blocks.join("\n")
}

/// [`Piece::CodexPathPrepend`], when present: the directory and the length.
fn codex_path_prepend(rest: &str) -> Option<(&str, usize)> {
    let after = rest.strip_prefix("\nif [ -n \"${PATH:-}\" ]; then export PATH='")?;
    let dir = &after[..after.find('\'')?];
    let plain = dir.strip_prefix('/').is_some_and(|d| {
        d.split('/').all(|c| {
            !c.is_empty()
                && c != "."
                && c != ".."
                && c.bytes()
                    .all(|b| is_path_byte(b) || matches!(b, b'@' | b'+'))
        })
    });
    if !plain || !dir.ends_with("/codex-path") {
        return None;
    }
    let line = format!(
        "\nif [ -n \"${{PATH:-}}\" ]; then export PATH='{dir}':\"$PATH\"; else export PATH='{dir}'; fi"
    );
    rest.starts_with(line.as_str()).then_some((dir, line.len()))
}

/// Gemini CLI's group body is the trimmed command followed by `;`, or the command alone
/// when it ends with `&`. The inner command, or `None` if Gemini CLI cannot have written
/// this body.
fn gemini_inner(body: &str) -> Option<&str> {
    let inner = match body.strip_suffix(';') {
        Some(inner) if !inner.ends_with('&') => inner,
        Some(_) => return None,
        None if body.ends_with('&') => body,
        None => return None,
    };
    // JavaScript's trim(): white space, line terminators and U+FEFF.
    let trimmed_by_js = |c: char| c.is_whitespace() || c == '\u{feff}';
    let first = inner.chars().next()?;
    let last = inner.chars().next_back()?;
    (!trimmed_by_js(first) && !trimmed_by_js(last)).then_some(inner)
}

/// Gemini CLI 0.37 and later put the trimmed command on lines of its own, with a space
/// after a final backslash. The inner command (the body as it is: the space is part of
/// what the shell runs), or `None` if Gemini CLI cannot have written this body.
fn gemini_lines_inner(body: &str) -> Option<&str> {
    let trimmed_by_js = |c: char| c.is_whitespace() || c == '\u{feff}';
    let first = body.chars().next()?;
    let command = match body.strip_suffix(' ') {
        Some(command) if command.ends_with('\\') => command,
        Some(_) => return None,
        None if body.ends_with('\\') => return None,
        None => body,
    };
    let last = command.chars().next_back()?;
    (!trimmed_by_js(first) && !trimmed_by_js(last)).then_some(body)
}

/// The directory part of Gemini CLI's temporary file `path`, which must be
/// `DIR/gemini-shell-XXXXXX/NAME`: DIR absolute, of plain components, XXXXXX six letters
/// or digits (`mkdtemp`). Which directory that is, and whose, is the run path's to check.
fn gemini_temp_dir<'a>(path: &'a str, name: &str) -> Option<&'a str> {
    let dir = path.strip_suffix(name)?.strip_suffix('/')?;
    let (base, leaf) = dir.rsplit_once('/')?;
    let suffix = leaf.strip_prefix("gemini-shell-")?;
    let suffix_ok = suffix.len() == 6 && suffix.bytes().all(|b| b.is_ascii_alphanumeric());
    let base_ok = base.starts_with('/')
        && base[1..]
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != ".." && c.bytes().all(is_path_byte));
    (suffix_ok && base_ok).then_some(dir)
}

/// Decode one word at the start of `rest` in the given quoting: its value and how many
/// bytes it takes. The word must be followed by a space or the end (checked by the next
/// piece).
fn decode_word(rest: &str, quoting: Quoting) -> Option<(Value<'_>, usize)> {
    match quoting {
        Quoting::SingleQuoted => decode_single_quoted(rest),
        Quoting::Claude => {
            if rest.starts_with('\'') {
                return decode_single_quoted(rest);
            }
            let end = rest
                .bytes()
                .position(|b| !is_claude_bare_byte(b))
                .unwrap_or(rest.len());
            let first = *rest.as_bytes().first()?;
            let first_ok = first.is_ascii_alphanumeric() || matches!(first, b'_' | b'.' | b'/');
            (end > 0 && first_ok).then(|| (Value::Borrowed(&rest[..end]), end))
        }
        Quoting::ShellQuoteNpm => match rest.as_bytes().first()? {
            b'\'' => {
                let close = rest[1..].find('\'')? + 1;
                Some((Value::Borrowed(&rest[1..close]), close + 1))
            }
            b'"' => decode_npm_double(rest),
            _ => decode_npm_bare(rest),
        },
    }
}

fn is_claude_bare_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"_./:@%+,=-".contains(&b)
}

/// A word whose shape a template accepted, decoded only once the whole template has
/// matched.
enum Value<'a> {
    /// The value itself: a bare word, or the inside of quotes with nothing to undo.
    Borrowed(&'a str),
    /// The word as written, with quotes or escapes the shell's word reader undoes
    /// ([`crate::shells::words`]), as bash does.
    Quoted(&'a str),
}

impl<'a> Value<'a> {
    /// The value; `None` (nothing is unwrapped) if the shell's reader does not read the
    /// word as the one word the template's shape says it is.
    fn into_cow(self) -> Option<Cow<'a, str>> {
        match self {
            Value::Borrowed(s) => Some(Cow::Borrowed(s)),
            Value::Quoted(s) => {
                crate::shells::words::one_word(s, crate::shells::Quoting::BASH).map(Cow::Owned)
            }
        }
    }
}

/// `'seg'` followed by any number of `"'"'seg'`: the segments joined by `'`.
fn decode_single_quoted(rest: &str) -> Option<(Value<'_>, usize)> {
    const AFTER_CLOSE: &str = "\"'\"'";
    if !rest.starts_with('\'') {
        return None;
    }
    let mut open = 0;
    loop {
        let close = open + 1 + rest[open + 1..].find('\'')?;
        // After the closing quote: `"'"` and the next segment's opening quote?
        if rest.as_bytes()[close + 1..].starts_with(AFTER_CLOSE.as_bytes()) {
            open = close + AFTER_CLOSE.len();
            continue;
        }
        let value = if open == 0 {
            Value::Borrowed(&rest[1..close])
        } else {
            Value::Quoted(&rest[..close + 1])
        };
        return Some((value, close + 1));
    }
}

/// npm shell-quote's double-quoted form.
fn decode_npm_double(rest: &str) -> Option<(Value<'_>, usize)> {
    let bytes = rest.as_bytes();
    let mut i = 1;
    loop {
        match *bytes.get(i)? {
            b'"' => return Some((Value::Quoted(&rest[..i + 1]), i + 1)),
            b'\\' => {
                let escaped = *bytes.get(i + 1)?;
                if !matches!(escaped, b'"' | b'\\' | b'$' | b'`') {
                    return None;
                }
                i += 2;
            }
            b'$' | b'`' | b'!' => return None,
            b if b < 0x20 || b == 0x7f => return None,
            _ => i += 1,
        }
    }
}

/// npm shell-quote's bare form: safe characters, and `\X` for ASCII punctuation X.
fn decode_npm_bare(rest: &str) -> Option<(Value<'_>, usize)> {
    let bytes = rest.as_bytes();
    let mut i = 0;
    let mut escaped_any = false;
    while let Some(&b) = bytes.get(i) {
        if b.is_ascii_alphanumeric() || b"_%+./:-".contains(&b) || b >= 0x80 {
            i += 1;
        } else if b == b'\\' {
            let escaped = *bytes.get(i + 1)?;
            if !escaped.is_ascii_punctuation() {
                return None;
            }
            escaped_any = true;
            i += 2;
        } else {
            break;
        }
    }
    if i == 0 {
        return None;
    }
    if !escaped_any {
        return Some((Value::Borrowed(&rest[..i]), i));
    }
    Some((Value::Quoted(&rest[..i]), i))
}

/// Whether `command < /dev/null` runs what `command` runs, with only stdin changed: every
/// quote closed, and no backslash, comment, substitution or control character that
/// could make the appended words part of something else. (An appended redirection after
/// a trailing operator is a shell syntax error, which runs nothing.)
pub fn appending_stdin_is_neutral(command: &str) -> bool {
    #[derive(PartialEq)]
    enum State {
        Plain,
        Single,
        Double,
    }
    let mut state = State::Plain;
    for c in command.chars() {
        if c.is_control() {
            return false;
        }
        state = match (state, c) {
            (State::Plain, '\'') => State::Single,
            (State::Plain, '"') => State::Double,
            (State::Plain, '\\' | '#' | '$' | '`' | '(' | ')') => return false,
            (State::Single, '\'') => State::Plain,
            (State::Double, '"') => State::Plain,
            (State::Double, '\\' | '$' | '`') => return false,
            (state, _) => state,
        };
    }
    state == State::Plain
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const SNAP: &str = "/home/alice/.claude/shell-snapshots/snapshot-bash-1788557415117-j0hu0n.sh";
    const ZSNAP: &str = "/home/alice/.claude/shell-snapshots/snapshot-zsh-1788557415117-j0hu0n.sh";
    const CWD: &str = "/tmp/claude-f8eb-cwd";
    const PGREP: &str = "/tmp/shell_pgrep_5a63468e1d38.tmp";
    const CODEX_SNAP: &str = "/home/alice/.codex/shell_snapshots/0199a213-81c0-7800-8aa1-bbab2a035a53.1760000000000000000.sh";

    /// Claude Code 2.1's own single-quoting (`singleQuoteWrap`).
    fn claude_quote(command: &str) -> String {
        format!("'{}'", command.replace('\'', "'\"'\"'"))
    }

    fn claude_2_1(setup: &str, word: &str, stdin: &str) -> String {
        format!(
            "source {SNAP} 2>/dev/null || true && {setup} && eval {word}{stdin} && pwd -P >| {CWD}"
        )
    }

    const BASH_UNALIAS: &str = "shopt -u extglob 2>/dev/null || true && { \\builtin unalias -- 'unsetenv'; \\builtin unset -f -- 'unsetenv'; } >/dev/null 2>&1 || true";

    /// Claude Code 2.1.332's setup (zsh): four more options, all off by default but
    /// `EQUALS`.
    const ZSH_2_1_332: &str = "\\builtin setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL NO_BRACE_CCL NO_MAGIC_EQUAL_SUBST NO_RC_QUOTES NO_EQUALS 2>/dev/null || true && { \\builtin unalias -- 'which'; \\builtin unset -f -- 'which'; } >/dev/null 2>&1 || true && { \\builtin unalias -- 'unsetenv'; \\builtin unset -f -- 'unsetenv'; } >/dev/null 2>&1 || true";

    /// Claude Code 2.1.332's setup (bash): `\builtin shopt`, and `which` unaliased too.
    const BASH_2_1_332: &str = "\\builtin shopt -u extglob 2>/dev/null || true && { \\builtin unalias -- 'which'; \\builtin unset -f -- 'which'; } >/dev/null 2>&1 || true && { \\builtin unalias -- 'unsetenv'; \\builtin unset -f -- 'unsetenv'; } >/dev/null 2>&1 || true";

    /// Forged setups; `MARK` stands for a file the smuggled command would create.
    const SMUGGLED_SETUPS: &[&str] = &[
        // Another command, anywhere in the vocabulary's shapes.
        "{ \\builtin unalias -- 'which'; touch MARK; } >/dev/null 2>&1 || true",
        "{ \\builtin unalias -- 'which'; \\builtin unset -f -- 'which'; touch MARK; } || true",
        "shopt -u extglob 2>/dev/null || touch MARK && \\builtin shopt -u extglob || true",
        "shopt -u extglob; touch MARK || true",
        "shopt -u extglob 2>/dev/null || true; touch MARK || true",
        "touch MARK 2>/dev/null || true",
        "\\builtin touch MARK || true",
        "\\builtin eval 'touch MARK' || true",
        "builtin eval touch MARK || true",
        "\\builtin shopt -u extglob\ntouch MARK || true",
        "{ \\builtin unalias -- 'which' & touch MARK; } || true",
        "{ \\builtin unalias -- 'which' | touch MARK; } || true",
        "{ \\builtin unalias -- 'which' && touch MARK; } || true",
        // Expansions in a name or an option: the shell would run them.
        "\\builtin unalias -- $(touch MARK) || true",
        "\\builtin unalias -- `touch MARK` || true",
        "\\builtin unset -f -- \"$(touch MARK)\" || true",
        "\\builtin unalias -- 'a'$(touch MARK) || true",
        "\\builtin shopt -u $(touch MARK) || true",
        "\\builtin shopt -u extglob$(touch MARK) || true",
        "\\builtin unalias -- ${X:=$(touch MARK)} || true",
        // A quote left open, or closed elsewhere.
        "\\builtin unalias -- 'which || true && touch MARK && \\builtin unalias -- ' || true",
        // Redirections to files: they write (or create MARK).
        "\\builtin shopt -u extglob >MARK || true",
        "\\builtin shopt -u extglob 2>MARK || true",
        "{ \\builtin unalias -- 'which'; } >/dev/null 2>MARK || true",
        // Options that change how the command gate judged is read or matched.
        "shopt -s extglob || true",
        "shopt -u extquote || true",
        "shopt -s expand_aliases || true",
        "setopt NO_CASE_GLOB || true",
        "setopt EXTENDED_GLOB || true",
        "set -o noglob || true",
        // Functions and aliases defined, not removed.
        "alias ls='touch MARK' || true",
        "{ ls() { touch MARK; }; } || true",
        "unset -v -- PATH || true",
        "unset -- PATH || true",
        // Not `|| true`.
        "shopt -u extglob || touch MARK",
        "shopt -u extglob && touch MARK || true",
    ];

    fn claude_latest(command: &str) -> String {
        claude_2_1(BASH_2_1_332, &claude_quote(command), " < /dev/null")
    }

    fn gemini(command: &str) -> String {
        let mut body = command.to_owned();
        if !body.ends_with('&') {
            body.push(';');
        }
        format!(
            "shopt -u promptvars nullglob extglob nocaseglob dotglob; {{ {body} }}; __code=$?; pgrep -g 0 >{PGREP} 2>&1; exit $__code;"
        )
    }

    const GEMINI_DIR: &str = "/tmp/gemini-shell-dERLen";
    const GUARD: &str = "shopt -u promptvars nullglob extglob nocaseglob dotglob; ";

    /// Gemini CLI's own trimming: JavaScript's `trim()`, and a space after a final `\\`.
    fn gemini_trim(command: &str) -> String {
        let mut body = command
            .trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
            .to_owned();
        if body.ends_with('\\') {
            body.push(' ');
        }
        body
    }

    /// Gemini CLI 0.44 and later (`hup`: 0.44's `trap '' HUP; ` first).
    fn gemini_trap(command: &str, dir: &str, hup: bool) -> String {
        let hup = if hup { "trap '' HUP; " } else { "" };
        format!(
            "{hup}{GUARD}_bgpids_file={dir}/bgpids.tmp\n(\n  trap 'jobs -p > \"$_bgpids_file\"' EXIT\n{}\n)\n__code=$?\nexit $__code",
            gemini_trim(command)
        )
    }

    /// Gemini CLI 0.40 to 0.43.
    fn gemini_pgrep_dir(command: &str, dir: &str) -> String {
        format!(
            "{GUARD}(\n{}\n)\n__code=$?; pgrep -g 0 >{dir}/pgrep.tmp 2>&1; exit $__code;",
            gemini_trim(command)
        )
    }

    /// Gemini CLI 0.37 to 0.39.
    fn gemini_pgrep_037(command: &str) -> String {
        format!(
            "{GUARD}(\n{}\n); __code=$?; pgrep -g 0 >{PGREP} 2>&1; exit $__code;",
            gemini_trim(command)
        )
    }

    /// The user's own `!command` in Gemini CLI 0.40 and later.
    fn gemini_user(command: &str, dir: &str) -> String {
        format!(
            "{GUARD}{{\n{}\n}}\n__code=$?; pwd > {dir}/pwd.tmp; exit $__code",
            gemini_trim(command)
        )
    }

    fn codex(shell: &str, script: &str) -> String {
        codex_with_snapshot(CODEX_SNAP, shell, script)
    }

    fn codex_with_snapshot(snapshot: &str, shell: &str, script: &str) -> String {
        format!(
            "if . '{snapshot}' >/dev/null 2>&1; then :; fi\n\nexec '{shell}' -c {}",
            claude_quote(script)
        )
    }

    /// npm shell-quote 1.8's `quote([s])`, for the 1.0/2.0 templates.
    fn npm_quote(s: &str) -> String {
        if s.is_empty() {
            return "''".into();
        }
        let has = |set: &str| {
            s.chars()
                .any(|c| set.contains(c) || (set.contains(' ') && c.is_whitespace()))
        };
        if has("\" \\") && !s.contains('\'') {
            return format!("'{s}'");
        }
        if has("\"' ") {
            let mut out = String::from("\"");
            for c in s.chars() {
                if "\"\\$`!".contains(c) {
                    out.push('\\');
                }
                out.push(c);
            }
            out.push('"');
            return out;
        }
        let mut out = String::new();
        for c in s.chars() {
            if "#!\"$&'()*,:;<=>?@[\\]^`{|}".contains(c) {
                out.push('\\');
            }
            out.push(c);
        }
        out
    }

    fn inner(text: &str) -> Option<String> {
        unwrap(text).map(|u| u.inner.into_owned())
    }

    #[test]
    fn the_latest_claude_wrapper_gives_back_the_command() {
        let text = claude_latest("git status");
        let u = unwrap(&text).unwrap();
        assert_eq!(u.agent, "claude-code");
        assert_eq!(u.template, "claude-code/2.1");
        assert_eq!(u.inner, "git status");
        assert_eq!(u.bookkeeping.sources, Some(SNAP));
        assert_eq!(u.bookkeeping.sources_home, Some("/home/alice"));
        assert_eq!(u.bookkeeping.writes, Some(CWD));
        assert_eq!(u.bookkeeping.stdin, Stdin::DevNull);
        assert_eq!(u.bookkeeping.exec_shell, None);
    }

    #[test]
    fn single_quotes_in_the_command_are_undone() {
        let command = "echo 'it'\\''s done' && printf '%s' \"$HOME\"";
        assert_eq!(inner(&claude_latest(command)).as_deref(), Some(command));
        assert!(matches!(
            unwrap(&claude_latest("it's")).unwrap().inner,
            Cow::Owned(_)
        ));
        assert!(matches!(
            unwrap(&claude_latest("ls -la")).unwrap().inner,
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn a_bare_simple_word_is_claudes_quoting_of_a_simple_command() {
        let text = claude_2_1(BASH_UNALIAS, "pwd", " < /dev/null");
        assert_eq!(inner(&text).as_deref(), Some("pwd"));
        let text = claude_2_1(BASH_UNALIAS, "cargo-test", " < /dev/null");
        assert_eq!(inner(&text).as_deref(), Some("cargo-test"));
        // Words the outer shell would expand are not Claude Code's bare words.
        for word in ["~/x", "=ls", "-x", "a*", "a?", "$x", "a\\b", "#x", "a[b]"] {
            assert_eq!(
                inner(&claude_2_1(BASH_UNALIAS, word, " < /dev/null")),
                None,
                "{word}"
            );
        }
    }

    #[test]
    fn every_claude_2_1_setup_is_recognised_with_and_without_the_stdin_redirect() {
        for setup in [
            BASH_2_1_332,
            ZSH_2_1_332,
            BASH_UNALIAS,
            "setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL 2>/dev/null || true && { \\builtin unalias -- 'unsetenv'; \\builtin unset -f -- 'unsetenv'; } >/dev/null 2>&1 || true",
            "shopt -u extglob 2>/dev/null || true",
            "setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL 2>/dev/null || true",
            "setopt NO_EXTENDED_GLOB 2>/dev/null || true",
        ] {
            for (stdin, expect) in [(" < /dev/null", Stdin::DevNull), ("", Stdin::Inherited)] {
                let text = claude_2_1(setup, &claude_quote("cat <<'EOF'\nx\nEOF"), stdin);
                let u = unwrap(&text).unwrap_or_else(|| panic!("{text}"));
                assert_eq!(u.template, "claude-code/2.1");
                assert_eq!(u.inner, "cat <<'EOF'\nx\nEOF");
                assert_eq!(u.bookkeeping.stdin, expect);
            }
        }
    }

    /// Setups Claude Code has not sent (yet), made only of the vocabulary: recognised,
    /// and the inner command is the same.
    #[test]
    fn any_setup_made_of_the_vocabulary_is_recognised() {
        for setup in [
            "\\builtin setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL 2>/dev/null || true",
            "{ \\builtin unalias -- 'grep'; \\builtin unset -f -- 'grep'; } >/dev/null 2>&1 || true && \\builtin shopt -u extglob 2>/dev/null || true",
            "{ \\builtin shopt -u extglob || \\builtin setopt NO_EXTENDED_GLOB; } >/dev/null 2>&1 || true",
            "shopt -u extglob nullglob dotglob failglob nocaseglob nocasematch globstar || true",
            "unalias -- rg || true && unset -f -- rg || true",
            "{ \\builtin unalias -- 'x.y-z'; } 2>/dev/null || true",
        ] {
            let text = claude_2_1(setup, &claude_quote("ls"), " < /dev/null");
            let u = unwrap(&text).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(
                (u.template, &*u.inner),
                ("claude-code/2.1", "ls"),
                "{setup}"
            );
        }
        // Which shell the setup's words are builtins of, for the run path to compare with
        // the shell it runs: a bare `shopt` is bash's, a bare `setopt` zsh's.
        let shells = |setup: &str| {
            unwrap(&claude_2_1(setup, "'ls'", " < /dev/null")).and_then(|u| u.bookkeeping.shells)
        };
        assert_eq!(shells(BASH_2_1_332), Some(&["bash", "zsh"][..]));
        assert_eq!(shells(BASH_UNALIAS), Some(&["bash"][..]));
        assert_eq!(
            shells("setopt NO_EXTENDED_GLOB 2>/dev/null || true"),
            Some(&["zsh"][..])
        );
        // Both bare: one of them would be a program found on PATH whichever shell runs it.
        assert_eq!(
            shells("{ shopt -u extglob || setopt NO_EXTENDED_GLOB; } >/dev/null 2>&1 || true"),
            None
        );
        assert_eq!(
            shells("shopt -u extglob || true && setopt NO_EXTENDED_GLOB || true"),
            None
        );
        // Other templates make no such demand.
        assert_eq!(unwrap(&gemini("ls")).unwrap().bookkeeping.shells, None);
        // No setup at all: the frame alone.
        let bare = format!(
            "source {SNAP} 2>/dev/null || true && eval 'ls' < /dev/null && pwd -P >| {CWD}"
        );
        assert_eq!(inner(&bare).as_deref(), Some("ls"));
        // Boilerplate, not a program: a bounded number of statements.
        let many = vec!["shopt -u extglob || true"; SETUP_MAX_STATEMENTS + 1].join(" && ");
        assert_eq!(inner(&claude_2_1(&many, "'ls'", " < /dev/null")), None);
        let enough = vec!["shopt -u extglob || true"; SETUP_MAX_STATEMENTS].join(" && ");
        assert!(inner(&claude_2_1(&enough, "'ls'", " < /dev/null")).is_some());
    }

    /// Setup-shaped text that runs something besides the vocabulary, or changes how the
    /// shell reads the command gate judged: never a wrapper, so it is judged whole (and
    /// matches no allow rule). `tests/agent_fixtures.rs` runs such texts in bash, where
    /// the smuggled part does run.
    #[test]
    fn setup_shaped_text_that_smuggles_a_command_is_not_a_wrapper() {
        // The control: the same text with a statement of the vocabulary is a wrapper.
        let control = claude_2_1(
            "shopt -u extglob || true",
            &claude_quote("ls"),
            " < /dev/null",
        );
        assert_eq!(inner(&control).as_deref(), Some("ls"));
        for setup in SMUGGLED_SETUPS {
            let text = claude_2_1(setup, &claude_quote("ls"), " < /dev/null");
            assert_eq!(inner(&text), None, "{setup}");
            // Claude Code's mark is still there: gate says it looks like its wrapper.
            assert_eq!(resembles(&text).map(|f| f.agent), Some("claude-code"));
        }
    }

    #[test]
    fn the_old_claude_forms_are_recognised() {
        let text = format!("source {SNAP} && eval date \\< /dev/null && pwd -P >| {CWD}");
        let u = unwrap(&text).unwrap();
        assert_eq!((u.template, &*u.inner), ("claude-code/1.0", "date"));
        assert_eq!(u.bookkeeping.stdin, Stdin::DevNull);
        let text = format!(
            "source {ZSNAP} && {{ shopt -u extglob || setopt NO_EXTENDED_GLOB; }} 2>/dev/null || true && eval 'python x.py \"a b\"' \\< /dev/null && pwd -P >| {CWD}"
        );
        let u = unwrap(&text).unwrap();
        assert_eq!(
            (u.template, &*u.inner),
            ("claude-code/2.0-extglob", "python x.py \"a b\"")
        );
        // The pipe form of 1.0: the redirect is inside the command, nothing after it.
        let text =
            format!("source {SNAP} && eval 'ps aux < /dev/null | grep x' && pwd -P >| {CWD}");
        let u = unwrap(&text).unwrap();
        assert_eq!(&*u.inner, "ps aux < /dev/null | grep x");
        assert_eq!(u.bookkeeping.stdin, Stdin::Inherited);
    }

    #[test]
    fn the_old_forms_only_accept_commands_that_the_appended_redirect_leaves_alone() {
        for command in [
            "ls #x",
            "echo 'a",
            "echo \"a",
            "echo a\\",
            "echo $(id)",
            "a\nb",
        ] {
            let text = format!(
                "source {SNAP} && eval {} \\< /dev/null && pwd -P >| {CWD}",
                npm_quote(command)
            );
            assert_eq!(inner(&text), None, "{command:?}");
        }
        for command in ["ls -la", "echo \"a b\" 'c'", "a | b", "x=1 y"] {
            let text = format!(
                "source {SNAP} && eval {} \\< /dev/null && pwd -P >| {CWD}",
                npm_quote(command)
            );
            assert_eq!(inner(&text).as_deref(), Some(command), "{text}");
        }
    }

    #[test]
    fn gemini_cli_groups_are_recognised() {
        let text = gemini("ps aux | grep x");
        let u = unwrap(&text).unwrap();
        assert_eq!(
            (u.agent, u.template),
            ("gemini-cli", "gemini-cli/shopt-guard")
        );
        assert_eq!(u.inner, "ps aux | grep x");
        assert_eq!(u.bookkeeping.writes, Some(PGREP));
        assert_eq!(u.bookkeeping.sources, None);
        assert_eq!(
            inner(&gemini("npm run dev &")).as_deref(),
            Some("npm run dev &")
        );
        let plain = format!("{{ ls; }}; __code=$?; pgrep -g 0 >{PGREP} 2>&1; exit $__code;");
        assert_eq!(unwrap(&plain).unwrap().template, "gemini-cli/plain");
        // Gemini CLI trims the command and adds `;` unless it ends with `&`.
        for body in [" ls;", "ls ;", "ls", "ls &;", ";", "\u{a0}ls;", "ls\n;"] {
            let text = format!("{{ {body} }}; __code=$?; pgrep -g 0 >{PGREP} 2>&1; exit $__code;");
            assert_eq!(inner(&text), None, "{body:?}");
        }
    }

    #[test]
    fn every_gemini_cli_family_since_0_37_is_recognised() {
        let command = "cat <<'EOF'\nline one\nEOF";
        let cases = [
            (
                gemini_trap(command, GEMINI_DIR, false),
                "gemini-cli/subshell-trap",
                "bgpids.tmp",
            ),
            (
                gemini_trap(command, GEMINI_DIR, true),
                "gemini-cli/subshell-trap",
                "bgpids.tmp",
            ),
            (
                gemini_user(command, GEMINI_DIR),
                "gemini-cli/user-shell",
                "pwd.tmp",
            ),
            (
                gemini_pgrep_dir(command, GEMINI_DIR),
                "gemini-cli/subshell-pgrep-dir",
                "pgrep.tmp",
            ),
        ];
        for (text, template, file) in cases {
            let u = unwrap(&text).unwrap_or_else(|| panic!("{text:?}"));
            assert_eq!(
                (u.agent, u.template, &*u.inner),
                ("gemini-cli", template, command)
            );
            assert_eq!(u.bookkeeping.temp_dir, Some(GEMINI_DIR));
            assert_eq!(u.bookkeeping.writes, Some(&*format!("{GEMINI_DIR}/{file}")));
            assert_eq!(u.bookkeeping.sources, None);
        }
        let old = gemini_pgrep_037(command);
        let u = unwrap(&old).unwrap();
        assert_eq!(
            (u.template, &*u.inner),
            ("gemini-cli/subshell-pgrep", command)
        );
        assert_eq!(
            (u.bookkeeping.writes, u.bookkeeping.temp_dir),
            (Some(PGREP), None)
        );
        // Another temporary directory (TMPDIR) is a shape the run path checks.
        let elsewhere = gemini_trap("ls", "/var/tmp/x/gemini-shell-Ab3dE9", false);
        let u = unwrap(&elsewhere).unwrap();
        assert_eq!(
            u.bookkeeping.temp_dir,
            Some("/var/tmp/x/gemini-shell-Ab3dE9")
        );
        // A final backslash gets a space from Gemini CLI, and the shell runs it.
        assert_eq!(
            inner(&gemini_trap("echo a \\", GEMINI_DIR, false)).as_deref(),
            Some("echo a \\ ")
        );
        assert_eq!(
            inner(&gemini_trap("ls # note", GEMINI_DIR, false)).as_deref(),
            Some("ls # note")
        );
    }

    #[test]
    fn gemini_cli_lines_must_be_what_gemini_cli_writes() {
        let build = |body: &str| {
            format!(
                "{GUARD}_bgpids_file={GEMINI_DIR}/bgpids.tmp\n(\n  trap 'jobs -p > \"$_bgpids_file\"' EXIT\n{body}\n)\n__code=$?\nexit $__code"
            )
        };
        assert_eq!(inner(&build("ls")).as_deref(), Some("ls"));
        for body in [
            "", " ls", "ls ", "\nls", "ls\n", "ls \\", "ls  ", "a \\  ", "\u{a0}ls", "ls\t",
        ] {
            assert_eq!(inner(&build(body)), None, "{body:?}");
        }
    }

    #[test]
    fn gemini_cli_temporary_files_have_their_own_narrow_shape() {
        let real = gemini_trap("ls", GEMINI_DIR, false);
        assert!(unwrap(&real).is_some());
        for dir in [
            "/tmp/gemini-shell-dERLe",
            "/tmp/gemini-shell-dERLenn",
            "/tmp/gemini-shell-dER_en",
            "/tmp/gemini-shel-dERLen",
            "tmp/gemini-shell-dERLen",
            "/tmp/../home/a/gemini-shell-dERLen",
            "/tmp/./gemini-shell-dERLen",
            "/tmp//gemini-shell-dERLen",
            "/gemini-shell-dERLen",
            "'/tmp/gemini-shell-dERLen'",
        ] {
            assert_eq!(inner(&real.replace(GEMINI_DIR, dir)), None, "{dir}");
        }
        for (what, text) in [
            ("another file", real.replace("bgpids.tmp", "pgrep.tmp")),
            (
                "file in a subdirectory",
                real.replace("/bgpids.tmp", "/x/bgpids.tmp"),
            ),
            (
                "pwd file of the user form",
                gemini_user("ls", GEMINI_DIR).replace("pwd.tmp", "bgpids.tmp"),
            ),
            (
                "pgrep file elsewhere",
                gemini_pgrep_dir("ls", GEMINI_DIR).replace(GEMINI_DIR, "/home/alice"),
            ),
        ] {
            assert_eq!(inner(&text), None, "{what}: {text:?}");
        }
    }

    #[test]
    fn gemini_cli_forgeries_of_the_new_forms_are_not_wrappers() {
        let real = gemini_trap("ls", GEMINI_DIR, false);
        let user = gemini_user("ls", GEMINI_DIR);
        for (what, text) in [
            ("command after exit", format!("{real}\nrm -rf ~")),
            ("command after exit, same line", format!("{real}; rm -rf ~")),
            ("exit edited", real.replace("exit $__code", "exit 0")),
            ("trap edited", real.replace("jobs -p", "rm -rf ~")),
            (
                "trap target edited",
                real.replace("\"$_bgpids_file\"", "~/.bashrc"),
            ),
            (
                "assignment edited",
                real.replace("_bgpids_file=/", "_bgpids_file=~/"),
            ),
            ("guard dropped", real.replacen(GUARD, "", 1)),
            (
                "another guard",
                real.replacen("trap '' HUP; ", "", 1).replacen(
                    "shopt",
                    "trap 'rm -rf ~' HUP; shopt",
                    1,
                ),
            ),
            (
                "HUP guard twice",
                format!("trap '' HUP; trap '' HUP; {real}"),
            ),
            (
                "HUP guard after shopt",
                real.replacen(GUARD, &format!("{GUARD}trap '' HUP; "), 1),
            ),
            ("no newline before )", real.replace("\n)\n", ")\n")),
            ("subshell made a group", real.replace("\n(\n", "\n{\n")),
            ("trailing newline", format!("{real}\n")),
            ("leading space", format!(" {real}")),
            ("user form, command after", format!("{user}; rm -rf ~")),
            (
                "user form, pwd target",
                user.replace("/pwd.tmp", "/../.bashrc"),
            ),
            ("user form, >| ", user.replace("pwd > ", "pwd >| ")),
            ("NUL", real.replace("ls", "l\0s")),
        ] {
            assert_eq!(inner(&text), None, "{what}: {text:?}");
        }
    }

    #[test]
    fn an_unknown_version_of_a_known_agent_resembles_it() {
        let gemini_next = gemini_trap("ls", GEMINI_DIR, false).replace("jobs -p", "jobs -pr");
        let claude_next = claude_latest("ls").replace("|| true && eval", "|| true && builtin eval");
        let codex_next = codex("/bin/bash", "ls").replace("then :; fi", "then true; fi");
        let cases = [
            (gemini_next.as_str(), Some("gemini-cli")),
            (
                "{ ls; }; __code=$?; pgrep -g 0 >/var/folders/x/T/shell_pgrep_bd6447d8f648.tmp 2>&1; exit $__code;",
                Some("gemini-cli"),
            ),
            (claude_next.as_str(), Some("claude-code")),
            (codex_next.as_str(), Some("codex")),
            ("ls -la", None),
            ("git status && cargo test", None),
        ];
        for (text, agent) in cases {
            assert_eq!(unwrap(text), None, "{text:?}");
            assert_eq!(resembles(text).map(|f| f.agent), agent, "{text:?}");
        }
        for t in TEMPLATES {
            assert!(family(t.agent).is_some(), "{}", t.name);
        }
        // Every recognised wrapper also resembles its own agent.
        for text in [
            gemini_trap("ls", GEMINI_DIR, true),
            claude_latest("ls"),
            codex("/bin/sh", "ls"),
            gemini_user("ls", GEMINI_DIR),
        ] {
            let u = unwrap(&text).unwrap();
            assert_eq!(resembles(&text).map(|f| f.agent), Some(u.agent), "{text:?}");
        }
    }

    #[test]
    fn codex_snapshot_wrappers_are_recognised() {
        let text = codex("/bin/bash", "echo 'hello'");
        let u = unwrap(&text).unwrap();
        assert_eq!((u.agent, u.template), ("codex", "codex/snapshot"));
        assert_eq!(u.inner, "echo 'hello'");
        assert_eq!(u.bookkeeping.exec_shell, Some("/bin/bash"));
        assert_eq!(u.bookkeeping.sources, Some(CODEX_SNAP));
        assert_eq!(u.bookkeeping.sources_home, Some("/home/alice"));
        // Another program, trailing arguments, or overrides around the source: no.
        assert_eq!(inner(&codex("/tmp/evil", "ls")), None);
        // Any shell path of plain components names a candidate; the run path checks
        // which file it is (a system shell, or gate itself).
        for shell in [
            "/usr/lib/gate/bin/bash",
            "/home/a/.local/lib/gate/bin/zsh",
            "/bin/sh",
        ] {
            assert_eq!(inner(&codex(shell, "ls")).as_deref(), Some("ls"), "{shell}");
        }
        for shell in [
            "bash",
            "/bin/../tmp/bash",
            "/tmp//bash",
            "/bin/bash ",
            "/bin/dash",
            "/bin/bashx",
        ] {
            assert_eq!(inner(&codex(shell, "ls")), None, "{shell}");
        }
        assert_eq!(inner(&format!("{} 'arg0'", codex("/bin/bash", "ls"))), None);
        assert_eq!(inner(&format!("X=1\n\n{}", codex("/bin/bash", "ls"))), None);
    }

    /// Edits of a real wrapper that must not be recognised. Each is judged as plain text.
    #[test]
    fn near_misses_are_not_wrappers() {
        let real = claude_latest("ls");
        assert!(unwrap(&real).is_some());
        let cases: Vec<(&str, String)> = vec![
            ("edited operator", real.replace("&& eval", "; eval")),
            ("|| for &&", real.replace(" && pwd", " || pwd")),
            ("doubled eval", real.replace("eval 'ls'", "eval eval 'ls'")),
            ("second eval word", real.replace("eval 'ls'", "eval 'ls' 'rm -rf ~'")),
            ("injected ; rm", real.replace("|| true && eval", "|| true; rm -rf ~; eval")),
            ("command after pwd", format!("{real}; rm -rf ~")),
            ("command after pwd, &&", format!("{real} && rm -rf ~")),
            ("quote break", real.replace("eval 'ls'", "eval 'ls'; rm -rf ~; ''")),
            ("substitution beside the word", real.replace("eval 'ls'", "eval \"$(rm -rf ~)\"'ls'")),
            ("newline before pwd", real.replace(" && pwd", "\n&& pwd")),
            ("newline at the end", format!("{real}\n")),
            ("NUL", real.replace("'ls'", "'l\0s'")),
            ("wrong snapshot dir", real.replace("/.claude/shell-snapshots/", "/.claude/snapshots/")),
            ("snapshot in /tmp", real.replace(SNAP, "/tmp/.claude/shell-snapshots/../x.sh")),
            ("dotdot in home", real.replace("/home/alice/", "/home/../alice/")),
            ("dot in home", real.replace("/home/alice/", "/home/./alice/")),
            ("empty component", real.replace("/home/alice/", "/home//alice/")),
            ("snapshot name", real.replace("snapshot-bash-", "snapshot-fish-")),
            ("short stamp", real.replace("1788557415117", "178855741511")),
            ("uppercase id", real.replace("j0hu0n", "J0HU0N")),
            ("quoted snapshot", real.replace(SNAP, &format!("'{SNAP}'"))),
            ("uppercase hex", real.replace("f8eb", "F8EB")),
            ("cwd elsewhere", real.replace("/tmp/claude-f8eb-cwd", "/home/alice/.bashrc")),
            ("cwd with dotdot", real.replace("/tmp/claude-f8eb-cwd", "/tmp/claude-f8eb-cwd/..")),
            ("> for >|", real.replace(">|", ">")),
            ("different redirect", real.replace("< /dev/null", "< /etc/passwd")),
            ("stderr dropped", real.replace(" 2>/dev/null || true && \\builtin shopt", " || true && \\builtin shopt")),
            ("trailing space", format!("{real} ")),
            ("leading space", format!(" {real}")),
            ("double space", real.replace("eval 'ls'", "eval  'ls'")),
            ("tab", real.replace("eval 'ls'", "eval\t'ls'")),
            ("empty command", claude_latest("")),
            ("unterminated quote", real.replace("'ls'", "'ls")),
            ("unquoted word", real.replace("'ls'", "ls;rm")),
            ("quoted then bare", real.replace("'ls'", "'ls'x")),
            ("double-quoted word", real.replace("'ls'", "\"ls\"")),
            ("escaped redirect in 2.1", real.replace(" < /dev/null", " \\< /dev/null")),
            ("gemini tail on claude", real.replace(" && pwd -P >| /tmp/claude-f8eb-cwd", " }; __code=$?; pgrep -g 0 >/tmp/shell_pgrep_5a63468e1d38.tmp 2>&1; exit $__code;")),
        ];
        for (what, text) in cases {
            assert_eq!(inner(&text), None, "{what}: {text:?}");
        }
    }

    #[test]
    fn a_properly_quoted_quote_break_is_a_command_with_shell_characters() {
        // The model's command itself tries to break out; Claude Code quotes it, and the
        // unwrapped command is exactly that text, which matches no allow rule.
        let model = "a'\"'\"'; rm -rf ~; '\"'\"'";
        let text = claude_latest(model);
        let u = unwrap(&text).unwrap();
        assert_eq!(u.inner, model);
        assert!(crate::policy::first_shell_char(&u.inner).is_some());
    }

    #[test]
    fn gemini_near_misses_are_not_wrappers() {
        let real = gemini("ls");
        assert!(unwrap(&real).is_some());
        for (what, text) in [
            ("trailing command", format!("{real} rm -rf ~")),
            (
                "pgrep file elsewhere",
                real.replace(PGREP, "/home/alice/.bashrc"),
            ),
            (
                "pgrep hex case",
                real.replace("5a63468e1d38", "5A63468E1D38"),
            ),
            ("exit edited", real.replace("exit $__code;", "exit 0;")),
            ("guard edited", real.replace("dotglob;", "dotglob &&")),
            ("trailing newline", format!("{real}\n")),
        ] {
            assert_eq!(inner(&text), None, "{what}: {text:?}");
        }
    }

    #[test]
    fn every_template_can_be_matched_and_has_a_fixed_tail_after_a_raw_group() {
        for t in TEMPLATES {
            // A literal first, or Codex's save, whose lines all start `__CODEX_SNAPSHOT_`.
            assert!(
                matches!(
                    t.pieces.first(),
                    Some(Piece::Lit(_) | Piece::CodexEnvSave | Piece::Optional(_))
                ),
                "{}",
                t.name
            );
            for (i, p) in t.pieces.iter().enumerate() {
                if matches!(p, Piece::GeminiGroup | Piece::GeminiLines) {
                    let after = &t.pieces[i + 1..];
                    assert!(after.iter().all(|p| matches_from_end(*p)), "{}", t.name);
                    // A temporary file is found from its end as a run of path
                    // characters: the literal before it must end with another.
                    for pair in after.windows(2) {
                        if let [Piece::Lit(lit), Piece::GeminiTempFile(_)] = pair {
                            assert!(!is_path_byte(*lit.as_bytes().last().unwrap()), "{}", t.name);
                        }
                    }
                }
            }
            assert!(family(t.agent).is_some(), "{}", t.name);
        }
        let mut names: Vec<_> = TEMPLATES.iter().map(|t| t.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TEMPLATES.len());
    }

    #[test]
    fn claudes_snapshot_creation_is_its_startup_call() {
        let script = format!(
            "SNAPSHOT_FILE={SNAP}\n      source \"/home/alice/.bashrc\" < /dev/null\n\n      # First, create/clear the snapshot file\n      echo \"# Snapshot file\" >| \"$SNAPSHOT_FILE\"\n"
        );
        let call = startup(&["-c", "-l", &script]).unwrap();
        assert_eq!(call.kind, "claude-code/snapshot-create");
        assert_eq!(call.answer, StartupAnswer::WriteStub(SNAP));
        assert_eq!(call.snapshot(), Some(SNAP));
        assert_eq!(call.home, Some("/home/alice"));
        assert_eq!(
            startup_call(&["-c", "-l", &script]),
            Some("claude-code/snapshot-create")
        );
        let quoted = script.replacen(SNAP, &format!("'{SNAP}'"), 1);
        assert_eq!(
            startup(&["-c", "-l", &quoted]).unwrap().snapshot(),
            Some(SNAP)
        );
        for args in [
            vec!["-c", script.as_str()],
            vec!["-lc", script.as_str()],
            vec!["-c", "-l", script.as_str(), "x"],
            vec!["-l", "-c", script.as_str()],
        ] {
            assert_eq!(startup_call(&args), None, "{args:?}");
        }
        for bad in [
            script.replacen(SNAP, "/home/alice/.bashrc", 1),
            script.replacen(SNAP, &format!("{SNAP};rm -rf ~"), 1),
            script.replace("echo \"# Snapshot file\"", "echo \"# snapshot\""),
            format!(" {script}"),
        ] {
            assert_eq!(startup_call(&["-c", "-l", &bad]), None, "{bad:?}");
        }
        assert!(is_snapshot_stub(SNAPSHOT_STUB.as_bytes()));
        assert!(!is_snapshot_stub(b"# Snapshot file\nrm -rf ~\n"));
    }

    #[test]
    fn claudes_environment_probe_is_its_startup_call_and_prints_nothing() {
        let call = startup(&["-c", "env"]).unwrap();
        assert_eq!(
            (call.agent, call.kind, call.answer, call.home),
            (
                "claude-code",
                "claude-code/env-probe",
                StartupAnswer::Nothing,
                None
            )
        );
        assert_eq!(call.snapshot(), None);
        for args in [
            &["-c", "env "][..],
            &["-c", " env"],
            &["-c", "env -i"],
            &["-c", "env; rm -rf ~"],
            &["-c", "printenv"],
            &["-lc", "env"],
            &["-c", "-l", "env"],
            &["-l", "-c", "env"],
            &["-c", "env", "x"],
            &["-c", "env\n"],
        ] {
            assert_eq!(startup_call(args), None, "{args:?}");
        }
    }

    #[test]
    fn codex_snapshot_capture_and_check_are_its_startup_calls() {
        let bash = "if [ -z \"$BASH_ENV\" ] && [ -r \"$HOME/.bashrc\" ]; then\n  . \"$HOME/.bashrc\"\nfi\necho '# Snapshot file'\ndeclare -f\n";
        let zsh = "setopt x\nprint '# Snapshot file'\nfunctions\n";
        for script in [bash, zsh] {
            let call = startup(&["-lc", script]).unwrap();
            assert_eq!(call.kind, "codex/snapshot-capture");
            assert_eq!(call.answer, StartupAnswer::PrintStub);
            assert_eq!(call.snapshot(), None);
            for args in [
                vec!["-c", script],
                vec!["-l", "-c", script],
                vec!["-lc", script, "x"],
            ] {
                assert_ne!(
                    startup_call(&args),
                    Some("codex/snapshot-capture"),
                    "{args:?}"
                );
            }
        }
        // The mark must be a line of its own.
        for bad in [
            "echo '# Snapshot file' && rm -rf ~",
            "x; echo '# Snapshot file'",
            "ls",
        ] {
            assert_eq!(startup_call(&["-lc", bad]), None, "{bad:?}");
        }
        let tmp = "/home/alice/.codex/shell_snapshots/0199a213-81c0-7800-8aa1-bbab2a035a53.tmp-1760000000000000000";
        for path in [tmp, CODEX_SNAP] {
            let script = format!("set -e; . \"{path}\"");
            let call = startup(&["-c", &script]).unwrap();
            assert_eq!(call.kind, "codex/snapshot-check");
            assert_eq!(call.answer, StartupAnswer::CheckStub(path));
            assert_eq!(call.home, Some("/home/alice"));
        }
        for bad in [
            format!("set -e; . \"{tmp}\"; rm -rf ~"),
            format!("set -e; . \"{tmp}\" x"),
            format!("set -e; . '{tmp}'"),
            "set -e; . \"/home/alice/.bashrc\"".to_owned(),
            format!("set -e; . \"{}\"", tmp.replace("tmp-", "tmp-x")),
            format!("set -e; . \"{}\"", tmp.replace("0199a213", "0199A213")),
            format!(
                "set -e; . \"{}\"",
                tmp.replace("/home/alice", "/home/../etc")
            ),
        ] {
            assert_eq!(startup_call(&["-c", &bad]), None, "{bad:?}");
        }
        // The temporary name is never a snapshot the wrapper may source.
        assert_eq!(inner(&codex_with_snapshot(tmp, "/bin/bash", "ls")), None);
    }

    const CODEX_PATH_DIR: &str =
        "/usr/lib/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/codex-path";

    /// Codex 0.171's wrapper with its environment save and restore, built the way the
    /// captured one is laid out (fixture codex-0.171-snapshot-env-echo).
    fn codex_env(
        overrides: &[&str],
        proxies: &[&str],
        path_dir: Option<&str>,
        script: &str,
    ) -> String {
        let save = |prefix: &str, names: &[&str]| -> Vec<String> {
            names
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    format!("{prefix}_SET_{i}=\"${{{n}+x}}\"\n{prefix}_{i}=\"${{{n}-}}\"")
                })
                .collect()
        };
        let mut captures = save(CODEX_OVERRIDE, overrides);
        captures.extend(save(CODEX_PROXY_OVERRIDE, proxies));
        captures.push(CODEX_PROXY_ENV_SET.to_owned());
        let env = CodexEnv {
            overrides: overrides.to_vec(),
            proxies: proxies.to_vec(),
        };
        let path = path_dir
            .map(|d| format!("\nif [ -n \"${{PATH:-}}\" ]; then export PATH='{d}':\"$PATH\"; else export PATH='{d}'; fi"))
            .unwrap_or_default();
        format!(
            "{}\n\nif . '{CODEX_SNAP}' >/dev/null 2>&1; then :; fi\n\n{}{path}\n\nexec '/usr/lib/gate/bin/bash' -c {}",
            captures.join("\n"),
            codex_env_restore(&env),
            claude_quote(script)
        )
    }

    #[test]
    fn codex_0_171_wrapper_with_its_environment_restore_is_recognised() {
        let names = ["CODEX_THREAD_ID", "CODEX_VERSION"];
        let proxies = ["HTTPS_PROXY", "http_proxy"];
        for dir in [Some(CODEX_PATH_DIR), None] {
            let text = codex_env(&names, &proxies, dir, "echo 'hi'");
            let u = unwrap(&text).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(u.template, "codex/snapshot-env");
            assert_eq!(u.inner, "echo 'hi'");
            assert_eq!(u.bookkeeping.sources, Some(CODEX_SNAP));
            assert_eq!(u.bookkeeping.sources_home, Some("/home/alice"));
            assert_eq!(u.bookkeeping.exec_shell, Some("/usr/lib/gate/bin/bash"));
            assert_eq!(u.bookkeeping.path_prepend, dir);
        }
        assert!(unwrap(&codex_env(&[], &[], None, "ls")).is_some());
    }

    #[test]
    fn codex_0_171_wrapper_edited_anywhere_is_judged_whole() {
        let good = codex_env(
            &["CODEX_THREAD_ID"],
            &["HTTPS_PROXY"],
            Some(CODEX_PATH_DIR),
            "ls",
        );
        assert!(unwrap(&good).is_some());
        let edits: Vec<String> = vec![
            // A restore that sets something else than what was saved.
            good.replacen(
                "export CODEX_THREAD_ID=\"${__CODEX_SNAPSHOT_OVERRIDE_0}\"",
                "export CODEX_THREAD_ID=\"evil\"",
                1,
            ),
            good.replacen(
                "else export HTTPS_PROXY; fi",
                "else export HTTPS_PROXY; fi; rm -rf ~",
                1,
            ),
            // A saved name Codex cannot have written, or one of its own temporaries.
            codex_env(&["A-B"], &[], None, "ls"),
            codex_env(&["__CODEX_SNAPSHOT_PROXY_ENV_SET"], &[], None, "ls"),
            codex_env(&["1X"], &[], None, "ls"),
            // Out of order, or a name saved twice under one index.
            good.replacen("_SET_0=", "_SET_1=", 1),
            // A PATH directory that is not Codex's, or not plain.
            good.replace(CODEX_PATH_DIR, "/home/alice/bin"),
            good.replace(CODEX_PATH_DIR, "/home/alice/../x/codex-path"),
            good.replace(CODEX_PATH_DIR, "codex-path"),
            good.replacen(":\"$PATH\"", ":\"$PATH\":/x", 1),
            // No proxy line, extra lines, trailing arguments.
            good.replacen(CODEX_PROXY_ENV_SET, "", 1),
            good.replacen("\n\nif . '", "\nX=1\n\nif . '", 1),
            format!("{good} 'arg'"),
            format!("{good}\n"),
            good.replace(
                CODEX_SNAP,
                &CODEX_SNAP.replace(".1760000000000000000.sh", ".tmp-1"),
            ),
        ];
        for text in &edits {
            assert_ne!(&good, text, "an edit that changed nothing");
            assert_eq!(unwrap(text).map(|u| u.template), None, "{text}");
        }
    }

    #[test]
    fn codex_lookalikes_are_named_but_never_unwrapped() {
        let good = codex_env(&["CODEX_THREAD_ID"], &[], None, "ls");
        let newer = good.replacen("then :; fi", "then true; fi", 1);
        assert!(unwrap(&newer).is_none());
        assert_eq!(resembles(&newer).map(|f| f.name), Some("Codex CLI"));
        let old = codex("/bin/bash", "ls").replace("exec '", "exec  '");
        assert_eq!(resembles(&old).map(|f| f.name), Some("Codex CLI"));
        for other in [
            "ls",
            "if . '/etc/profile'; then :; fi",
            "echo __CODEX_SNAPSHOT_",
        ] {
            assert_eq!(resembles(other).map(|f| f.name), None, "{other}");
        }
    }

    #[test]
    fn codex_capture_answer_has_the_sections_codex_wants_and_its_rewrite_is_known() {
        let sections: Vec<&str> = CODEX_CAPTURE_STUB.split('\0').collect();
        assert_eq!(sections, [SNAPSHOT_STUB, "", "", ""]);
        assert!(CODEX_SNAPSHOT_STUB.starts_with(SNAPSHOT_STUB));
        assert!(CODEX_SNAPSHOT_STUB.lines().all(|l| l.starts_with('#')));
        assert!(is_codex_snapshot_stub(CODEX_SNAPSHOT_STUB.as_bytes()));
        assert!(is_codex_snapshot_stub(SNAPSHOT_STUB.as_bytes()));
        assert!(!is_snapshot_stub(CODEX_SNAPSHOT_STUB.as_bytes()));
        for edited in [
            format!("{CODEX_SNAPSHOT_STUB}declare -x PATH=\"/evil\"\n"),
            CODEX_SNAPSHOT_STUB.replace('\n', "\r\n"),
            CODEX_CAPTURE_STUB.to_owned(),
        ] {
            assert!(!is_codex_snapshot_stub(edited.as_bytes()), "{edited:?}");
        }
    }

    #[test]
    fn neutral_appending_is_judged_by_quoting_state() {
        for ok in ["ls", "a | b", "echo 'a # b' \"c\"", "a && b;", "x=1"] {
            assert!(appending_stdin_is_neutral(ok), "{ok}");
        }
        for bad in [
            "ls #", "'a", "\"a", "a\\", "a $(b)", "`a`", "\"$x\"", "a\tb", "(a)",
        ] {
            assert!(!appending_stdin_is_neutral(bad), "{bad}");
        }
    }

    fn arb_command() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<String>(),
            "[ -~\n\t']{0,40}",
            "[a-z' ]{0,20}",
            prop::collection::vec(
                prop_oneof![
                    Just("'".to_owned()),
                    Just("\"'\"'".to_owned()),
                    "[a-z ]{0,3}"
                ],
                0..8
            )
            .prop_map(|parts| parts.concat()),
        ]
        .prop_filter("no NUL, not empty", |s| !s.is_empty() && !s.contains('\0'))
    }

    /// Every text made from `text` by replacing or deleting one byte outside `from..to`,
    /// or inserting one byte anywhere but inside or at the edges of `from..to` (an
    /// insertion there would edit the agent's word itself).
    fn mutations(text: &str, from: usize, to: usize) -> Vec<String> {
        const BYTES: [u8; 13] = [
            b' ', b';', b'\'', b'"', b'\\', b'x', b'0', b'\n', b'&', b'/', b'<', b'-', b'.',
        ];
        let mut out = Vec::new();
        let bytes = text.as_bytes();
        for at in 0..=bytes.len() {
            if at < from || at > to {
                for b in BYTES {
                    let mut v = bytes.to_vec();
                    v.insert(at, b);
                    out.extend(String::from_utf8(v).ok());
                }
            }
            if at == bytes.len() || (from..to).contains(&at) || !bytes[at].is_ascii() {
                continue;
            }
            for b in BYTES {
                let mut v = bytes.to_vec();
                v[at] = b;
                out.extend(String::from_utf8(v).ok());
            }
            let mut v = bytes.to_vec();
            v.remove(at);
            out.extend(String::from_utf8(v).ok());
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn claude_round_trips_any_command(command in arb_command()) {
            prop_assert_eq!(inner(&claude_latest(&command)), Some(command.clone()));
            let old = claude_2_1("shopt -u extglob 2>/dev/null || true", &claude_quote(&command), "");
            prop_assert_eq!(inner(&old), Some(command.clone()));
        }

        #[test]
        fn gemini_round_trips_any_trimmed_command(command in arb_command()) {
            let trimmed = command.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
            prop_assume!(!trimmed.is_empty());
            prop_assert_eq!(inner(&gemini(trimmed)), Some(trimmed.to_owned()));
        }

        #[test]
        fn the_new_gemini_forms_round_trip_any_command(command in arb_command()) {
            let body = gemini_trim(&command);
            prop_assume!(!body.is_empty());
            for text in [
                gemini_trap(&command, GEMINI_DIR, false),
                gemini_trap(&command, GEMINI_DIR, true),
                gemini_user(&command, GEMINI_DIR),
                gemini_pgrep_dir(&command, GEMINI_DIR),
                gemini_pgrep_037(&command),
            ] {
                prop_assert_eq!(inner(&text), Some(body.clone()), "{:?}", text);
            }
        }

        #[test]
        fn codex_round_trips_any_command(command in arb_command()) {
            prop_assert_eq!(inner(&codex("/bin/zsh", &command)), Some(command.clone()));
        }

        #[test]
        fn the_old_form_round_trips_every_neutral_command(command in "[ -~]{1,30}") {
            let text = format!("source {SNAP} && eval {} \\< /dev/null && pwd -P >| {CWD}", npm_quote(&command));
            let got = inner(&text);
            // Whatever is recognised is exact; a neutral command is recognised unless it
            // has `!` (refused in double quotes) or a bare `~` (the shell would expand it).
            prop_assert!(got.is_none() || got.as_deref() == Some(command.as_str()));
            let bare_tilde = command.contains('~') && !npm_quote(&command).starts_with(['\'', '"']);
            if appending_stdin_is_neutral(&command) && !command.contains('!') && !bare_tilde {
                prop_assert_eq!(got, Some(command.clone()));
            }
        }

        #[test]
        fn unwrap_never_panics_on_any_text(text in any::<String>()) {
            if let Some(u) = unwrap(&text) {
                prop_assert!(!u.inner.is_empty());
            }
        }

    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        #[test]
        fn a_one_byte_edit_of_the_fixed_parts_changes_nothing_or_is_refused(command in "[a-z '|;&]{1,12}") {
            let trimmed = command.trim();
            let body = if trimmed.ends_with('&') { trimmed.to_owned() } else { format!("{trimmed};") };
            let texts = [
                (claude_latest(&command), "&& eval ", claude_quote(&command)),
                (gemini(trimmed), "{ ", body),
                (gemini_trap(trimmed, GEMINI_DIR, false), "EXIT\n", gemini_trim(trimmed)),
                (gemini_user(trimmed, GEMINI_DIR), "{\n", gemini_trim(trimmed)),
                (gemini_pgrep_dir(trimmed, GEMINI_DIR), "(\n", gemini_trim(trimmed)),
                (codex("/bin/bash", &command), "' -c ", claude_quote(&command)),
            ];
            for (text, before, word) in texts {
                let Some(original) = unwrap(&text) else { continue };
                // The agent's word starts right after the first `before`.
                let from = text.find(before).unwrap() + before.len();
                prop_assert!(text[from..].starts_with(word.as_str()));
                for edited in mutations(&text, from, from + word.len()) {
                    if let Some(u) = unwrap(&edited) {
                        prop_assert_eq!(&u.inner, &original.inner, "{:?}", edited);
                    }
                }
            }
        }
    }
}
