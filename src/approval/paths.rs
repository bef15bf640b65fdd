//! Where the approval machinery keeps its files: the broker's socket and token, in one
//! directory private to the user: `$XDG_RUNTIME_DIR/gate/`, else
//! `$XDG_STATE_HOME/gate/run/`, else `/tmp/gate-UID/`. The safe-level sandbox hides that
//! directory from the command. No remembered approval is kept in a file, here or
//! anywhere: a command can write the user's files, so such a file could approve the
//! model's own commands. Only the broker remembers, in its memory.

use std::ffi::OsString;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::xdg;

/// The file name of the broker's socket in the private directory.
pub const SOCKET_NAME: &str = "broker.sock";

/// The private directory (not created here): `$XDG_RUNTIME_DIR/gate`; without a
/// runtime directory `$XDG_STATE_HOME/gate/run` (`~/.local/state/gate/run`); and only
/// when neither is known, `/tmp/gate-UID`. The safe level's sandbox hides this
/// directory, which it can do anywhere but inside /tmp (hiding a directory there would
/// take away the right to create files in /tmp itself), hence the state directory
/// before /tmp.
pub fn private_dir(var: &dyn Fn(&str) -> Option<OsString>) -> PathBuf {
    private_dir_in(var, Path::new("/run/user"))
}

/// [`private_dir`], with the runtime directory's fallback looked for in `run_base/UID`
/// ([`xdg::runtime_dir_in`]).
fn private_dir_in(var: &dyn Fn(&str) -> Option<OsString>, run_base: &Path) -> PathBuf {
    if let Some(runtime) = xdg::runtime_dir_in(var, run_base) {
        return runtime.join("gate");
    }
    if let Some(state) = xdg::state_home(var) {
        return state.join("gate/run");
    }
    PathBuf::from(format!("/tmp/gate-{}", nix::unistd::geteuid().as_raw()))
}

/// The broker's socket when none is configured.
pub fn default_socket(var: &dyn Fn(&str) -> Option<OsString>) -> PathBuf {
    private_dir(var).join(SOCKET_NAME)
}

/// The token file that authenticates approver tools to the broker on `socket`: the
/// socket's path with `.token` appended.
pub fn token_path(socket: &Path) -> PathBuf {
    let mut name = socket.as_os_str().to_owned();
    name.push(".token");
    PathBuf::from(name)
}

/// Whether `socket` is gate's broker rather than a host program's approver: the broker
/// keeps its token file beside its socket (a file of this user's, private). It decides
/// only whether a request offers remembering (the broker keeps remembered approvals in
/// its memory; gate keeps none for anyone else), never whether anything runs, so a
/// guess either way costs at most a question.
pub fn is_brokers(socket: &Path) -> bool {
    let token = token_path(socket);
    std::fs::symlink_metadata(&token).is_ok_and(|m| m.file_type().is_file())
        && check_private(&token, false).is_ok()
}

/// Make sure `dir` exists and is private: a real directory (not a link), owned by this
/// user, with no permission for anyone else. Creates it (0700) when it is missing, with
/// any missing ancestors (0700 too). Anything else is refused with a message that says
/// how to fix it.
pub fn ensure_private_dir(dir: &Path) -> Result<(), String> {
    if let Some(parent) = dir.parent() {
        if !parent.as_os_str().is_empty() && std::fs::symlink_metadata(parent).is_err() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
    }
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("cannot create {}: {e}", dir.display())),
    }
    check_private(dir, true)
}

/// Check that `path` is owned by this user and that group and others have no
/// permission on it; `dir` says whether it must be a directory.
pub fn check_private(path: &Path, dir: bool) -> Result<(), String> {
    let meta = std::fs::symlink_metadata(path)
        .map_err(|e| format!("cannot inspect {}: {e}", path.display()))?;
    if dir && !meta.file_type().is_dir() {
        return Err(format!("{} is not a directory", path.display()));
    }
    let uid = nix::unistd::geteuid().as_raw();
    if meta.uid() != uid {
        return Err(format!(
            "{} belongs to uid {}, not to this user (uid {uid}); someone else may be \
             listening there",
            path.display(),
            meta.uid()
        ));
    }
    let mode = meta.mode() & 0o7777;
    if mode & 0o077 != 0 {
        return Err(format!(
            "{} is open to other users (mode {mode:04o}); run chmod go= {}",
            path.display(),
            path.display()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_private_dir_follows_xdg_runtime_dir() {
        let var = |k: &str| (k == "XDG_RUNTIME_DIR").then(|| OsString::from("/run/user/7"));
        assert_eq!(private_dir(&var), PathBuf::from("/run/user/7/gate"));
        let private_dir =
            |var: &dyn Fn(&str) -> Option<OsString>| private_dir_in(var, Path::new("/nonexistent"));
        let relative = |k: &str| match k {
            "XDG_RUNTIME_DIR" => Some(OsString::from("run")),
            "HOME" => Some(OsString::from("/h")),
            _ => None,
        };
        assert_eq!(
            private_dir(&relative),
            PathBuf::from("/h/.local/state/gate/run")
        );
        let nothing = |_: &str| None;
        let uid = nix::unistd::geteuid().as_raw();
        assert_eq!(
            private_dir(&nothing),
            PathBuf::from(format!("/tmp/gate-{uid}"))
        );
    }

    #[test]
    fn token_is_beside_the_socket() {
        assert_eq!(
            token_path(Path::new("/r/gate/broker.sock")),
            PathBuf::from("/r/gate/broker.sock.token")
        );
    }

    #[test]
    fn a_socket_is_the_brokers_when_a_private_token_is_beside_it() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let socket = t.path().join("approver.sock");
        assert!(!is_brokers(&socket), "no token");
        let token = token_path(&socket);
        std::fs::write(&token, "t\n").unwrap();
        std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(is_brokers(&socket));
        std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(
            !is_brokers(&socket),
            "a token open to others is not the broker's"
        );
        std::fs::remove_file(&token).unwrap();
        std::fs::create_dir(&token).unwrap();
        assert!(!is_brokers(&socket), "a directory is no token");
    }

    #[test]
    fn a_private_dir_is_created_and_an_open_one_refused() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("gate");
        ensure_private_dir(&dir).unwrap();
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = ensure_private_dir(&dir).unwrap_err();
        assert!(e.contains("open to other users"), "{e}");
        let link = t.path().join("link");
        std::os::unix::fs::symlink(&dir, &link).unwrap();
        assert!(
            ensure_private_dir(&link)
                .unwrap_err()
                .contains("not a directory")
        );
    }
}
