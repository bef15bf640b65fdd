//! Claude Code's setup statements between its snapshot and `eval` ([`Piece::ClaudeSetup`](super::Piece::ClaudeSetup)):
//! a small vocabulary of statements that only turn pattern options off or remove an alias or
//! a function, read with their literal arguments.
//!
//! It accepts nothing outside the vocabulary; a release that adds anything else is judged
//! whole.

/// The statements [`Piece::ClaudeSetup`](super::Piece::ClaudeSetup) accepts, in brief (the parser below,
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
///   on `PATH` ([`Bookkeeping::shells`](super::Bookkeeping::shells), which the run path compares with its shell).
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

/// The shells whose builtins a setup's words are ([`Bookkeeping::shells`](super::Bookkeeping::shells)).
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

/// [`Piece::ClaudeSetup`](super::Piece::ClaudeSetup): the length of the run of setup statements at the start of
/// `rest`, each with its ` && `, and the shells it can run in. It stops before `eval `;
/// any statement outside the vocabulary, or a setup that needs both bash and zsh, makes
/// the whole text no wrapper.
pub(super) fn claude_setup(rest: &str) -> Option<(usize, &'static [&'static str])> {
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
