//! The agent- and version-specific holes of the templates: the shapes of snapshot paths,
//! cwd and pgrep files, Gemini CLI's temporary files and command body, and Codex's saved
//! and restored variables.
//!
//! Each accepts only its own narrow shape and returns how much it took; none decides.

pub(super) const CLAUDE_SNAPSHOT_DIR: &str = "/.claude/shell-snapshots/";
pub(super) const CODEX_SNAPSHOT_DIR: &str = "/.codex/shell_snapshots/";
pub(super) fn is_path_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'/')
}

/// The home directory part of `path`, which is `HOME` + `dir` + a file name: one or more
/// components of `[A-Za-z0-9._-]`, none `.` or `..`.
pub(super) fn home_of<'a>(path: &'a str, dir: &str) -> Option<&'a str> {
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
pub(super) fn claude_snapshot_len(path: &str) -> Option<usize> {
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
const CLAUDE_CWD_LEN: usize = "/tmp/claude-0000-cwd".len();
pub(super) const GEMINI_PGREP_LEN: usize = "/tmp/shell_pgrep_000000000000.tmp".len();

fn is_lower_hex(s: &str) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

pub(super) fn claude_cwd_len(rest: &str) -> Option<usize> {
    let id = rest.strip_prefix("/tmp/claude-")?.get(..4)?;
    let ok = is_lower_hex(id) && rest.get(16..CLAUDE_CWD_LEN) == Some("-cwd");
    ok.then_some(CLAUDE_CWD_LEN)
}

pub(super) fn gemini_pgrep_len(rest: &str) -> Option<usize> {
    let id = rest.strip_prefix("/tmp/shell_pgrep_")?.get(..12)?;
    let ok = is_lower_hex(id) && rest.get(29..GEMINI_PGREP_LEN) == Some(".tmp");
    ok.then_some(GEMINI_PGREP_LEN)
}

/// Which of Codex's snapshot files `path` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CodexSnapshot {
    /// `<uuid>.sh` or `<uuid>.<digits>.sh`: the snapshot the wrapper sources.
    Final,
    /// `<uuid>.tmp-<digits>`: the file Codex writes and checks before renaming it.
    Temporary,
}

/// `/HOME/.codex/shell_snapshots/` and a Codex snapshot file name (uuid lowercase).
pub(super) fn codex_snapshot_name(path: &str) -> Option<CodexSnapshot> {
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
pub(super) struct CodexEnv<'a> {
    pub(super) overrides: Vec<&'a str>,
    pub(super) proxies: Vec<&'a str>,
}

pub(super) const CODEX_OVERRIDE: &str = "__CODEX_SNAPSHOT_OVERRIDE";
pub(super) const CODEX_PROXY_OVERRIDE: &str = "__CODEX_SNAPSHOT_PROXY_OVERRIDE";
pub(super) const CODEX_PROXY_ENV_SET: &str =
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

/// [`Piece::CodexEnvSave`](super::Piece::CodexEnvSave): the names, and the length up to the end of the last line
/// (its newline not included).
pub(super) fn codex_env_save(rest: &str) -> Option<(CodexEnv<'_>, usize)> {
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

/// [`Piece::CodexEnvRestore`](super::Piece::CodexEnvRestore): the restores of the overrides, then the proxy variables'
/// inside one `if … fi`, lines joined by newlines.
pub(super) fn codex_env_restore(env: &CodexEnv<'_>) -> String {
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

/// [`Piece::CodexPathPrepend`](super::Piece::CodexPathPrepend), when present: the directory and the length.
pub(super) fn codex_path_prepend(rest: &str) -> Option<(&str, usize)> {
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
pub(super) fn gemini_inner(body: &str) -> Option<&str> {
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
pub(super) fn gemini_lines_inner(body: &str) -> Option<&str> {
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
pub(super) fn gemini_temp_dir<'a>(path: &'a str, name: &str) -> Option<&'a str> {
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
