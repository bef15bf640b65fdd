//! Asking: the approval channels (a socket, the terminal), the broker that holds
//! requests for people (`gate serve`), the approver tools, and remembered approvals.
//!
//! A gate at `ask` that meets a command no rule allows tries, in order: the socket (if
//! one is configured, or the broker is listening at its default path), the terminal
//! (`/dev/tty`, unless turned off), and then nobody, which is an immediate denial.
//! Whatever goes wrong on the way is a denial with the cause on stderr.

pub mod admin;
pub mod broker;
pub mod paths;
pub mod protocol;
pub mod question;
pub mod signals;
pub mod tty;
pub mod watch;
pub mod wire;

use std::ffi::OsString;
use std::path::PathBuf;

use crate::config::Settings;

/// The socket approvals go to: the configured one, else the broker's default path.
pub fn socket_path(settings: &Settings, var: &dyn Fn(&str) -> Option<OsString>) -> PathBuf {
    match &settings.socket {
        Some(path) => path.clone(),
        None => paths::default_socket(var),
    }
}
