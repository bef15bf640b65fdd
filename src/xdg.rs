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

/// `$XDG_RUNTIME_DIR` (it has no fallback: the specification leaves that to programs).
pub fn runtime_dir(var: Var<'_>) -> Option<PathBuf> {
    absolute(var, "XDG_RUNTIME_DIR")
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(runtime_dir(&var), Some(PathBuf::from("/r")));
        assert_eq!(home(&var), Some(PathBuf::from("/h")));
    }

    #[test]
    fn without_them_home_gives_the_defaults() {
        let var = with(&[("HOME", "/h")]);
        assert_eq!(config_home(&var), Some(PathBuf::from("/h/.config")));
        assert_eq!(state_home(&var), Some(PathBuf::from("/h/.local/state")));
        assert_eq!(runtime_dir(&var), None);
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
        assert_eq!(runtime_dir(&var), None);
        let var = with(&[("HOME", "h"), ("XDG_STATE_HOME", "")]);
        assert_eq!(home(&var), None);
        assert_eq!(state_home(&var), None);
        assert_eq!(config_home(&var), None);
    }
}
