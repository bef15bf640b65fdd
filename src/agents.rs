//! The run path's side of agents' wrappers (see [`crate::policy::wrapper`], which is
//! pure): whether the files a recognised wrapper touches can be trusted, and gate's own
//! answer to Claude Code's start-up call.
//!
//! A wrapper sources a snapshot file before the agent's command and writes a cwd file
//! after it. Sourcing runs whatever the file holds, and the model may have written it
//! with its own file tools; so a wrapper is only judged by its inner command when the
//! snapshot is exactly gate's stub (which gate writes when it answers the start-up
//! call), a regular file of this user's, under this user's home. Otherwise the whole
//! text is judged as it is, which no allow rule matches.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

use crate::policy::wrapper::{self, StartupCall, Unwrapped};

/// The shells a wrapper may exec (Codex's `exec 'SHELL' -c …`).
const KNOWN_SHELLS: &[&str] = &[
    "/bin/bash",
    "/usr/bin/bash",
    "/bin/zsh",
    "/usr/bin/zsh",
    "/bin/sh",
    "/usr/bin/sh",
    "/bin/dash",
    "/usr/bin/dash",
];

/// Whether the files `u` touches can be trusted; Err says why not (for diagnostics).
pub fn trusted(u: &Unwrapped<'_>, var: &dyn Fn(&str) -> Option<OsString>) -> Result<(), String> {
    let b = &u.bookkeeping;
    let home = var("HOME").filter(|h| Path::new(h).is_absolute());
    if let Some(snapshot) = b.sources {
        let home = home
            .as_ref()
            .ok_or("HOME is not set, so the snapshot's owner cannot be checked")?;
        if b.sources_home.map(Path::new) != Some(Path::new(home)) {
            return Err(format!("the snapshot {snapshot} is not under HOME"));
        }
        let meta = std::fs::symlink_metadata(snapshot)
            .map_err(|e| format!("the snapshot {snapshot}: {e}"))?;
        own_regular_file(&meta, snapshot)?;
        let mut content = Vec::new();
        std::fs::File::open(snapshot)
            .and_then(|f| f.take(4096).read_to_end(&mut content))
            .map_err(|e| format!("the snapshot {snapshot}: {e}"))?;
        if !wrapper::is_snapshot_stub(&content) {
            return Err(format!(
                "the snapshot {snapshot} is not gate's own (sourcing it would run what it holds)"
            ));
        }
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
    if let Some(shell) = b.exec_shell {
        if !KNOWN_SHELLS.contains(&shell) {
            return Err(format!(
                "the wrapper execs {shell}, which is not a known shell"
            ));
        }
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

/// Claude Code's start-up call, if `args` is one for this user's home.
pub fn startup<'a>(
    args: &'a [OsString],
    var: &dyn Fn(&str) -> Option<OsString>,
) -> Option<StartupCall<'a>> {
    let strs: Option<Vec<&str>> = args.iter().map(|a| a.to_str()).collect();
    let call = wrapper::startup(&strs?)?;
    let home = var("HOME")?;
    (Path::new(call.snapshot_home) == Path::new(&home)).then_some(call)
}

/// Answer the start-up call without running it: write gate's stub (comments only) to
/// the snapshot path, in a private directory, never through a link.
pub fn answer_startup(call: &StartupCall<'_>) -> Result<(), String> {
    let path = Path::new(call.snapshot);
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
    file.write_all(wrapper::CLAUDE_SNAPSHOT_STUB.as_bytes())
        .map_err(|e| format!("cannot write the snapshot {}: {e}", path.display()))
}
