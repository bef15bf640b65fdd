//! The user's directories, worked out from HOME and the XDG base directory variables in
//! this one place. A value that is unset, empty or relative counts as unset, as the XDG
//! base directory specification says of relative paths.

use std::ffi::OsString;
use std::path::PathBuf;

/// How gate reads an environment variable (the process's, or a test's table).
pub type Var<'a> = &'a dyn Fn(&str) -> Option<OsString>;

fn absolute(var: Var<'_>, name: &str) -> Option<PathBuf> {
    var(name).map(PathBuf::from).filter(|p| p.is_absolute())
}

/// `$HOME`.
pub fn home(var: Var<'_>) -> Option<PathBuf> {
    absolute(var, "HOME")
}

/// `$XDG_CONFIG_HOME`, else `~/.config`.
pub fn config_home(var: Var<'_>) -> Option<PathBuf> {
    absolute(var, "XDG_CONFIG_HOME").or_else(|| home(var).map(|h| h.join(".config")))
}

/// `$XDG_STATE_HOME`, else `~/.local/state`.
pub fn state_home(var: Var<'_>) -> Option<PathBuf> {
    absolute(var, "XDG_STATE_HOME").or_else(|| home(var).map(|h| h.join(".local/state")))
}

/// `$XDG_RUNTIME_DIR`; without it, `base/UID` (`/run/user/UID` on a system, another
/// base in tests) when that is this user's private directory: a directory (not a link)
/// owned by this user, with no permission for anyone else, as pam_systemd makes it.
/// Anything else is no runtime directory. The specification leaves the fallback to
/// programs; gate needs one because some agents remove `XDG_RUNTIME_DIR` from their
/// commands' environment (Gemini CLI under GitHub Actions), and a gate there must still
/// find the broker the user started with it.
pub fn runtime_dir_in(var: Var<'_>, base: &std::path::Path) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    if let Some(dir) = absolute(var, "XDG_RUNTIME_DIR") {
        return Some(dir);
    }
    let uid = nix::unistd::geteuid().as_raw();
    let dir = base.join(uid.to_string());
    let meta = std::fs::symlink_metadata(&dir).ok()?;
    let private = meta.file_type().is_dir() && meta.uid() == uid && meta.mode() & 0o077 == 0;
    private.then_some(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn with(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<OsString> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn the_xdg_variables_win_over_home() {
        let var = with(&[
            ("HOME", "/h"),
            ("XDG_CONFIG_HOME", "/c"),
            ("XDG_STATE_HOME", "/s"),
            ("XDG_RUNTIME_DIR", "/r"),
        ]);
        assert_eq!(config_home(&var), Some(PathBuf::from("/c")));
        assert_eq!(state_home(&var), Some(PathBuf::from("/s")));
        assert_eq!(
            runtime_dir_in(&var, Path::new("/run/user")),
            Some(PathBuf::from("/r"))
        );
        assert_eq!(home(&var), Some(PathBuf::from("/h")));
    }

    #[test]
    fn without_them_home_gives_the_defaults() {
        let var = with(&[("HOME", "/h")]);
        assert_eq!(config_home(&var), Some(PathBuf::from("/h/.config")));
        assert_eq!(state_home(&var), Some(PathBuf::from("/h/.local/state")));
        assert_eq!(runtime_dir_in(&var, Path::new("/nonexistent")), None);
    }

    #[test]
    fn without_xdg_runtime_dir_the_users_own_run_user_directory_is_used() {
        use std::os::unix::fs::PermissionsExt;
        let base = tempfile::tempdir().unwrap();
        let uid = nix::unistd::geteuid().as_raw();
        let mine = base.path().join(uid.to_string());
        let var = with(&[("HOME", "/h")]);
        assert_eq!(runtime_dir_in(&var, base.path()), None, "missing");
        std::fs::create_dir(&mine).unwrap();
        std::fs::set_permissions(&mine, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(runtime_dir_in(&var, base.path()), Some(mine.clone()));
        let set = with(&[("XDG_RUNTIME_DIR", "/r")]);
        assert_eq!(runtime_dir_in(&set, base.path()), Some(PathBuf::from("/r")));
        std::fs::set_permissions(&mine, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(runtime_dir_in(&var, base.path()), None, "open to others");
        std::fs::remove_dir(&mine).unwrap();
        let elsewhere = base.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &mine).unwrap();
        assert_eq!(runtime_dir_in(&var, base.path()), None, "a link");
    }

    #[test]
    fn empty_and_relative_values_count_as_unset() {
        let var = with(&[
            ("HOME", "/h"),
            ("XDG_CONFIG_HOME", ""),
            ("XDG_STATE_HOME", "state"),
            ("XDG_RUNTIME_DIR", "run"),
        ]);
        assert_eq!(config_home(&var), Some(PathBuf::from("/h/.config")));
        assert_eq!(state_home(&var), Some(PathBuf::from("/h/.local/state")));
        assert_eq!(runtime_dir_in(&var, Path::new("/nonexistent")), None);
        let var = with(&[("HOME", "h"), ("XDG_STATE_HOME", "")]);
        assert_eq!(home(&var), None);
        assert_eq!(state_home(&var), None);
        assert_eq!(config_home(&var), None);
    }
}
