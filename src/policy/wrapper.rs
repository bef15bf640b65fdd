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
//!
//! This module is the matcher: the shape of a template, [`unwrap`], and the decoders of the
//! agents' quoting. What is agent- or version-specific lives beside it: the templates and
//! families (`templates`, data), the narrow holes each agent's wrapper has (`holes`),
//! Claude Code's setup vocabulary (`setup`), and the start-up calls gate answers itself
//! (`startup_calls`).

use std::borrow::Cow;

mod holes;
mod setup;
mod startup_calls;
mod templates;

use holes::{
    CLAUDE_SNAPSHOT_DIR, CODEX_SNAPSHOT_DIR, CodexEnv, CodexSnapshot, GEMINI_PGREP_LEN,
    claude_cwd_len, claude_snapshot_len, codex_env_restore, codex_env_save, codex_path_prepend,
    codex_snapshot_name, gemini_inner, gemini_lines_inner, gemini_pgrep_len, gemini_temp_dir,
    home_of, is_path_byte,
};
use setup::claude_setup;
pub use setup::{SETUP_BASH_OPTIONS, SETUP_MAX_STATEMENTS, SETUP_VOCABULARY, SETUP_ZSH_OPTIONS};
pub use startup_calls::{
    CODEX_CAPTURE_STUB, CODEX_SNAPSHOT_STUB, SNAPSHOT_STUB, StartupAnswer, StartupCall, startup,
    startup_call,
};
pub(crate) use startup_calls::{is_codex_snapshot_stub, is_snapshot_stub};
pub use templates::{FAMILIES, Family, TEMPLATES, family, resembles};

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

/// Recognise an agent's wrapper around the `-c` text. `None` unless the text matches a
/// template exactly; the caller then judges the whole text as it is.
pub fn unwrap(command: &str) -> Option<Unwrapped<'_>> {
    // No argv carries a NUL; a text that does is not one an agent sent.
    if command.as_bytes().contains(&0) {
        return None;
    }
    TEMPLATES.iter().find_map(|t| match_template(t, command))
}

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
