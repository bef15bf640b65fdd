//! The run path's side of agents' wrappers (see [`crate::policy::wrapper`], which is
//! pure): whether the files a recognised wrapper touches can be trusted, gate's own
//! answer to Claude Code's start-up call, and, for the agents whose model chooses each
//! command's working directory, whether that directory is the agent's own.
//!
//! A wrapper sources a snapshot file before the agent's command and writes a cwd file
//! after it. Sourcing runs whatever the file holds, and the model may have written it
//! with its own file tools; so a wrapper is only judged by its inner command when the
//! snapshot is exactly gate's stub (which gate writes when it answers the start-up
//! call), a regular file of this user's, under this user's home. Otherwise the whole
//! text is judged as it is, which no allow rule matches. Files a wrapper writes must be
//! absent or this user's own regular files, and Gemini CLI's per-call temporary
//! directory a private one of this user's in the temporary directory.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::policy::wrapper::{self, StartupAnswer, StartupCall, Unwrapped};

/// The shells other than gate itself that a wrapper may exec (Codex's `exec 'SHELL' -c
/// …`): where distributions install bash, zsh and sh. Each must also be root's.
const SYSTEM_SHELLS: &[&str] = &[
    "/bin/bash",
    "/usr/bin/bash",
    "/usr/local/bin/bash",
    "/bin/zsh",
    "/usr/bin/zsh",
    "/usr/local/bin/zsh",
    "/bin/sh",
    "/usr/bin/sh",
];

/// What the checks found out about a wrapper whose files can be trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Trust {
    /// The wrapper execs gate itself (one of its shims) to run the inner command, so
    /// that gate judges the inner command: this one need not.
    pub(crate) execs_gate: bool,
}

/// Whether the files `u` touches can be trusted, and its words are the builtins they
/// are meant to be in `shell` (the kind of shell gate runs it with: `bash`, `zsh`);
/// Err says why not (for diagnostics).
pub(crate) fn trusted(
    u: &Unwrapped<'_>,
    shell: Option<&str>,
    var: &dyn Fn(&str) -> Option<OsString>,
) -> Result<Trust, String> {
    let b = &u.bookkeeping;
    if let Some(shells) = b.shells {
        if !shell.is_some_and(|k| shells.contains(&k)) {
            return Err(format!(
                "its setup is made of builtins of {}, and gate runs it with {}, where they \
                 would be programs found on PATH",
                shells.join(" and "),
                shell.unwrap_or("another shell")
            ));
        }
    }
    let home = crate::xdg::home(var);
    if let Some(snapshot) = b.sources {
        let home = home
            .as_ref()
            .ok_or("HOME is not set, so the snapshot's owner cannot be checked")?;
        if b.sources_home.map(Path::new) != Some(Path::new(home)) {
            return Err(format!("the snapshot {snapshot} is not under HOME"));
        }
        holds_stub(snapshot, u.agent)?;
    }
    if let Some(dir) = b.temp_dir {
        agents_temp_dir(dir, var)?;
    }
    if let Some(written) = b.writes {
        match std::fs::symlink_metadata(written) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("{written}: {e}")),
            Ok(meta) => {
                own_regular_file(&meta, written)?;
                if meta.nlink() != 1 {
                    return Err(format!("{written} has other links"));
                }
            }
        }
    }
    if let Some(dir) = b.path_prepend {
        path_entry_of_the_agent(dir, var)?;
    }
    let mut trust = Trust { execs_gate: false };
    if let Some(shell) = b.exec_shell {
        trust.execs_gate = exec_target(shell)?;
    }
    Ok(trust)
}

/// Whether `path` is a regular file of this user's, not writable by others, that holds
/// exactly gate's snapshot stub, as `agent` keeps it (so that sourcing it does nothing).
fn holds_stub(path: &str, agent: &str) -> Result<(), String> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| format!("the snapshot {path}: {e}"))?;
    own_regular_file(&meta, path)?;
    let mut content = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(4096).read_to_end(&mut content))
        .map_err(|e| format!("the snapshot {path}: {e}"))?;
    let stub = match agent {
        "codex" => wrapper::is_codex_snapshot_stub(&content),
        _ => wrapper::is_snapshot_stub(&content),
    };
    if !stub {
        return Err(format!(
            "the snapshot {path} is not gate's own (sourcing it would run what it holds)"
        ));
    }
    Ok(())
}

/// Check the shell a wrapper execs: `Ok(true)` if it is gate itself (a shim), `Ok(false)`
/// if it is a system shell of root's. The path and its directory must be root's or
/// this user's and writable by nobody else, so that only their owners can swap them.
fn exec_target(shell: &str) -> Result<bool, String> {
    let path = Path::new(shell);
    let dir = path.parent().ok_or("the shell path has no directory")?;
    for (p, meta) in [
        (dir, std::fs::metadata(dir)),
        (path, std::fs::symlink_metadata(path)),
    ] {
        let meta = meta.map_err(|e| format!("{}: {e}", p.display()))?;
        let uid = meta.uid();
        if uid != 0 && uid != nix::unistd::geteuid().as_raw() {
            return Err(format!("{} belongs to another user", p.display()));
        }
        if !meta.file_type().is_symlink() && meta.mode() & 0o022 != 0 {
            return Err(format!("{} is writable by others", p.display()));
        }
    }
    let target = std::fs::metadata(path).map_err(|e| format!("{shell}: {e}"))?;
    if !target.is_file() {
        return Err(format!("{shell} is not a program"));
    }
    let gate = std::fs::metadata("/proc/self/exe")
        .map_err(|e| format!("cannot tell which program gate is: {e}"))?;
    if (target.dev(), target.ino()) == (gate.dev(), gate.ino()) {
        return Ok(true);
    }
    if !SYSTEM_SHELLS.contains(&shell) {
        return Err(format!(
            "the wrapper execs {shell}, which is neither gate nor a system shell"
        ));
    }
    if target.uid() != 0 || target.mode() & 0o022 != 0 {
        return Err(format!("{shell} is not root's, or others can write it"));
    }
    Ok(false)
}

/// Check a directory a wrapper puts first on `PATH` (Codex's bundled tools): it must
/// already be on the `PATH` the agent gave gate, so that moving it to the front adds no
/// directory of the model's choosing, and be root's or this user's, writable by nobody
/// else.
fn path_entry_of_the_agent(
    dir: &str,
    var: &dyn Fn(&str) -> Option<OsString>,
) -> Result<(), String> {
    let path = var("PATH").unwrap_or_default();
    if !std::env::split_paths(&path).any(|entry| entry == Path::new(dir)) {
        return Err(format!(
            "the wrapper puts {dir} first on PATH, which is not on the agent's PATH"
        ));
    }
    let meta = std::fs::symlink_metadata(dir).map_err(|e| format!("{dir}: {e}"))?;
    let uid = meta.uid();
    if !meta.is_dir()
        || (uid != 0 && uid != nix::unistd::geteuid().as_raw())
        || meta.mode() & 0o022 != 0
    {
        return Err(format!(
            "{dir} is not a directory of root's or this user's that only its owner can write"
        ));
    }
    Ok(())
}

/// Gemini CLI's temporary directory of one call (`mkdtemp`): a directory (not a link) of
/// this user's with no permission for anyone else, right in the temporary directory
/// (`$TMPDIR`, or `/tmp`). The model can make such a directory too; what the wrapper
/// writes into it is then only a file in a private directory of the user's own.
fn agents_temp_dir(dir: &str, var: &dyn Fn(&str) -> Option<OsString>) -> Result<(), String> {
    let path = Path::new(dir);
    let parent = path
        .parent()
        .ok_or("the temporary directory has no parent")?;
    let tmpdir = var("TMPDIR")
        .map(std::path::PathBuf::from)
        .filter(|p| p.is_absolute());
    let in_tmp = parent == Path::new("/tmp")
        || tmpdir.is_some_and(|t| t.components().eq(parent.components()));
    if !in_tmp {
        return Err(format!("{dir} is not in the temporary directory"));
    }
    let meta = std::fs::symlink_metadata(path).map_err(|e| format!("{dir}: {e}"))?;
    if !meta.file_type().is_dir() {
        return Err(format!("{dir} is not a directory"));
    }
    if meta.uid() != nix::unistd::geteuid().as_raw() {
        return Err(format!("{dir} belongs to another user"));
    }
    if meta.mode() & 0o077 != 0 {
        return Err(format!("{dir} is open to other users"));
    }
    Ok(())
}

fn own_regular_file(meta: &std::fs::Metadata, path: &str) -> Result<(), String> {
    if !meta.file_type().is_file() {
        return Err(format!("{path} is not a regular file"));
    }
    if meta.uid() != nix::unistd::geteuid().as_raw() {
        return Err(format!("{path} belongs to another user"));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(format!("{path} is writable by others"));
    }
    Ok(())
}

/// An agent that lets the model choose the working directory of each command, and how
/// gate knows that it runs under it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ChoosesCwd {
    /// The agent's name, as messages give it.
    pub(crate) agent: &'static str,
    /// A variable the agent puts into the environment of every command it runs, after
    /// everything else, so that neither the model nor the environment the agent was
    /// started with can take it out.
    pub(crate) marker: &'static str,
    /// The tool argument through which the model chooses the directory.
    pub(crate) argument: &'static str,
}

/// The agents whose model chooses the working directory: Codex CLI sets
/// `CODEX_THREAD_ID` for each command it runs, Qwen Code `QWEN_CODE=1` (both on its
/// pseudo-terminal and without one).
pub(crate) const CHOOSES_CWD: &[ChoosesCwd] = &[
    ChoosesCwd {
        agent: "Codex",
        marker: "CODEX_THREAD_ID",
        argument: "exec_command's workdir",
    },
    ChoosesCwd {
        agent: "Qwen Code",
        marker: "QWEN_CODE",
        argument: "run_shell_command's directory",
    },
];

/// The agent of [`CHOOSES_CWD`] that gate runs under, by its marker in the environment.
pub(crate) fn cwd_chooser(var: &dyn Fn(&str) -> Option<OsString>) -> Option<&'static ChoosesCwd> {
    CHOOSES_CWD.iter().find(|a| var(a.marker).is_some())
}

/// Why a command may not run at `safe` under an agent whose model chooses the working
/// directory ([`agent_workspace`]). Says what is wrong; [`WorkspaceError::line`] adds
/// that nothing was run and what to do, at the edge that prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WorkspaceError {
    /// The directory the agent works in could not be found.
    Unknown {
        chooser: &'static ChoosesCwd,
        cause: String,
    },
    /// The working directory is outside the one the agent works in.
    Outside {
        chooser: &'static ChoosesCwd,
        cwd: PathBuf,
        agent_dir: PathBuf,
    },
}

impl std::fmt::Display for WorkspaceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WorkspaceError::Unknown { chooser, cause } => write!(
                f,
                "gate runs under {agent} ({marker} is set) and cannot tell which directory \
                 {agent} works in ({cause}), so the safe level has no workspace it can trust",
                agent = chooser.agent,
                marker = chooser.marker,
            ),
            WorkspaceError::Outside {
                chooser,
                cwd,
                agent_dir,
            } => write!(
                f,
                "{agent} runs this command in {cwd}, outside the directory {agent} works in \
                 ({dir}); the safe level makes the working directory writable, and the model \
                 chose this one ({argument})",
                agent = chooser.agent,
                cwd = cwd.display(),
                dir = agent_dir.display(),
                argument = chooser.argument,
            ),
        }
    }
}

impl WorkspaceError {
    /// What to do instead, where there is something.
    fn advice(&self) -> Option<String> {
        match self {
            WorkspaceError::Unknown { .. } => None,
            WorkspaceError::Outside { chooser, .. } => Some(format!(
                "Run it in the project, or start {agent} in the directory it may write",
                agent = chooser.agent
            )),
        }
    }

    /// The whole line: what is wrong, that nothing was run, and what to do.
    pub(crate) fn line(&self) -> String {
        crate::explain::not_run(self, self.advice().as_deref())
    }
}

/// At level `safe` the working directory is the writable workspace, and some agents let
/// the model choose the working directory of every command ([`CHOOSES_CWD`]), so the
/// model would choose what the sandbox lets it write. Under such an agent the working
/// directory must be the agent's own, the directory of the process that started gate,
/// or inside it. `Err` says why not; nothing may run then.
pub(crate) fn agent_workspace(
    cwd: &Path,
    var: &dyn Fn(&str) -> Option<OsString>,
) -> Result<(), WorkspaceError> {
    let Some(chooser) = cwd_chooser(var) else {
        return Ok(());
    };
    let parent = nix::unistd::getppid();
    let agent_dir = match std::fs::canonicalize(format!("/proc/{parent}/cwd")) {
        Ok(dir) => dir,
        // Marked (no_new_privs and the Landlock domain of a command gate ran, which hides
        // the processes outside it): this gate runs inside a command, at `safe` either a
        // sandboxed one, whose writes can only shrink, or Codex's wrapper, whose gate made
        // this check before it delegated (see `run`), or the agent's own sandbox.
        Err(_) if marked() => return Ok(()),
        Err(e) => {
            return Err(WorkspaceError::Unknown {
                chooser,
                cause: e.to_string(),
            });
        }
    };
    let cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    if cwd.starts_with(&agent_dir) {
        return Ok(());
    }
    Err(WorkspaceError::Outside {
        chooser,
        cwd,
        agent_dir,
    })
}

fn marked() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .is_ok_and(|status| status.lines().any(|l| l == "NoNewPrivs:\t1"))
}

/// An agent's start-up call that gate answers itself, if `args` is one for this user's
/// home. Codex's check of its snapshot is one only while the file holds gate's stub;
/// otherwise the call is judged like any command.
pub(crate) fn startup<'a>(
    args: &'a [OsString],
    var: &dyn Fn(&str) -> Option<OsString>,
) -> Option<StartupCall<'a>> {
    let strs: Option<Vec<&str>> = args.iter().map(|a| a.to_str()).collect();
    let call = wrapper::startup(&strs?)?;
    if let Some(home) = call.home {
        if Path::new(home) != crate::xdg::home(var)? {
            return None;
        }
    }
    if let StartupAnswer::CheckStub(path) = call.answer {
        if let Err(why) = holds_stub(path, call.agent) {
            tracing::debug!(%why, "an agent's snapshot check, judged whole");
            return None;
        }
    }
    Some(call)
}

/// Answer a start-up call without running it. Claude Code's: write gate's stub (comments
/// only) to the snapshot path, in a private directory, never through a link. Codex's
/// capture: the stub, on standard output. Codex's check: nothing to do (the file was
/// checked when the call was recognised). Claude Code's environment probe: nothing.
pub(crate) fn answer_startup(call: &StartupCall<'_>) -> Result<(), String> {
    match call.answer {
        StartupAnswer::WriteStub(path) => write_stub(Path::new(path)),
        StartupAnswer::PrintStub => {
            let mut out = std::io::stdout().lock();
            out.write_all(wrapper::CODEX_CAPTURE_STUB.as_bytes())
                .and_then(|()| out.flush())
                .map_err(|e| format!("cannot write the snapshot to standard output: {e}"))
        }
        StartupAnswer::CheckStub(_) | StartupAnswer::Nothing => Ok(()),
    }
}

fn write_stub(path: &Path) -> Result<(), String> {
    let dir = path.parent().ok_or("the snapshot path has no directory")?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let meta = std::fs::symlink_metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if !meta.is_dir() || meta.uid() != nix::unistd::geteuid().as_raw() {
        return Err(format!(
            "{} is not a directory of this user's",
            dir.display()
        ));
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| format!("cannot create the snapshot {}: {e}", path.display()))?;
    file.write_all(wrapper::SNAPSHOT_STUB.as_bytes())
        .map_err(|e| format!("cannot write the snapshot {}: {e}", path.display()))
}

#[cfg(test)]
mod tests;
