//! What the preset must never show the model: the places where secrets are kept
//! ([`SECRET_LOCATIONS`], of which the sandbox hides [`DEFAULT_HIDDEN_SECRETS`] by
//! default) and the environment variables `printenv` may show ([`SHOWN_VARIABLES`]).
//!
//! Pure: it matches words against names and reads no file.

use super::words::Word;
use super::{Entry, NotReadOnly};

/// The secrets every home may hold, as path components below the home directory: the
/// sandbox hides each of these by default at `safe` (its `deny_read` defaults, which
/// `crate::sandbox::spec` should take from here; a test keeps the two lists together),
/// and the preset refuses a command that names one. Package-registry and vault tokens
/// are files in directories that also hold ordinary settings (`~/.cargo`), so the file
/// alone is named.
pub const DEFAULT_HIDDEN_SECRETS: [&str; 16] = [
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
    ".config/gh",
    ".password-store",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials.toml",
    ".cargo/credentials",
    ".vault-token",
];

/// The agents' own credential files, below the home directory.
const AGENT_CREDENTIALS: [&str; 5] = [
    // Claude Code: its login (Linux) and the key it stores when you approve one.
    ".claude/.credentials.json",
    ".claude.json",
    ".codex/auth.json",
    ".gemini/oauth_creds.json",
    ".qwen/oauth_creds.json",
];

/// Where secrets are kept, as path components below a home directory:
/// [`DEFAULT_HIDDEN_SECRETS`], then the agents' own credential files. A command whose
/// words name one of these is not read-only: what it prints goes to the model.
pub(crate) const SECRET_LOCATIONS: &[&str] =
    &joined::<21>(&DEFAULT_HIDDEN_SECRETS, &AGENT_CREDENTIALS);

/// `first` then `second`, as one array of `N` names (a compile error unless `N` is the sum
/// of their lengths).
const fn joined<const N: usize>(
    first: &[&'static str],
    second: &[&'static str],
) -> [&'static str; N] {
    assert!(first.len() + second.len() == N);
    let mut out = [""; N];
    let mut at = 0;
    while at < N {
        out[at] = if at < first.len() {
            first[at]
        } else {
            second[at - first.len()]
        };
        at += 1;
    }
    out
}

/// The secret location `word` names, if any: one of [`SECRET_LOCATIONS`] as consecutive
/// components anywhere in it (`~/.ssh/id_rsa`, `/home/me/.aws`, `--file=.netrc`,
/// `HEAD:.npmrc`). In an
/// unquoted pattern, a component matches when the pattern could match the name
/// (`~/.s*/id_rsa`).
pub(super) fn names_secret(word: &Word) -> Option<&'static str> {
    let components: Vec<&str> = word
        .text
        .split(['/', '=', ':'])
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    SECRET_LOCATIONS.iter().copied().find(|secret| {
        let wanted: Vec<&str> = secret.split('/').collect();
        components.windows(wanted.len()).any(|window| {
            window
                .iter()
                .zip(&wanted)
                .all(|(have, want)| have == want || (word.expands && pattern_may_match(have, want)))
        })
    })
}

/// Whether the shell pattern `pattern` (`*`, `?`, `[…]`, and the zsh characters treated
/// as "anything") could match `name`. Over-approximates: a bracket matches any one
/// character, `^` and `~` match anything.
pub(super) fn pattern_may_match(pattern: &str, name: &str) -> bool {
    fn go(p: &[char], n: &[char]) -> bool {
        match p.split_first() {
            None => n.is_empty(),
            Some(('*' | '^' | '~' | '#', rest)) => (0..=n.len()).any(|k| go(rest, &n[k..])),
            Some(('?', rest)) => !n.is_empty() && go(rest, &n[1..]),
            Some(('[', rest)) => {
                let close = rest.iter().skip(1).position(|&c| c == ']').map(|at| at + 1);
                match close {
                    Some(at) => !n.is_empty() && go(&rest[at + 1..], &n[1..]),
                    None => n.first() == Some(&'[') && go(rest, &n[1..]),
                }
            }
            Some((c, rest)) => n.first() == Some(c) && go(rest, &n[1..]),
        }
    }
    // A leading `.` is matched only by a literal one (bash without `dotglob`, zsh
    // without `GLOB_DOTS`; gate starts the shell without the user's start-up files).
    if name.starts_with('.') && !pattern.starts_with('.') {
        return false;
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    go(&p, &n)
}

/// Environment variables that hold no secret by convention: `printenv` may show these.
pub(super) const SHOWN_VARIABLES: &[&str] = &[
    "HOME",
    "PATH",
    "USER",
    "LOGNAME",
    "SHELL",
    "PWD",
    "OLDPWD",
    "LANG",
    "LANGUAGE",
    "TERM",
    "TZ",
    "TMPDIR",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "HOSTNAME",
    "SHLVL",
    "COLUMNS",
    "LINES",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_CACHE_HOME",
    "XDG_RUNTIME_DIR",
];

fn is_shown_variable(name: &str) -> bool {
    SHOWN_VARIABLES.contains(&name)
        || name
            .strip_prefix("LC_")
            .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_uppercase()))
}

/// `printenv [-0|--null] NAME...`, every NAME one of [`SHOWN_VARIABLES`].
pub(super) fn check_printenv(entry: &'static Entry, args: &[Word]) -> Result<(), NotReadOnly> {
    let mut names = 0;
    let mut operands = false;
    for word in args {
        let text = word.text.as_str();
        if !operands && text == "--" {
            operands = true;
        } else if !operands && matches!(text, "-0" | "--null") {
        } else if !operands && text.starts_with('-') {
            return Err(entry.refuse(format!("`printenv`: `{text}` is not an option it knows")));
        } else if is_shown_variable(text) {
            names += 1;
        } else {
            return Err(entry.refuse(format!(
                "`printenv {text}`: only variables that hold no secret by convention are \
                 shown unasked (`HOME`, `PATH`, `USER`, ...); `{text}` is not one of them"
            )));
        }
    }
    if names == 0 {
        return Err(entry.refuse(
            "`printenv` without a name prints the whole environment, where agents keep their \
             API keys"
                .to_owned(),
        ));
    }
    Ok(())
}
