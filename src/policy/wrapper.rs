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
mod tests;
