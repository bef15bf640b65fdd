//! The settings a run or a subcommand works with: loaded from the files, the
//! environment and the options, and what the sandbox derives from them.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::audit;
use crate::config::{self, Environment, Settings};
use crate::invocation::Invocation;
use crate::output::fail;
use crate::sandbox;

fn var(name: &str) -> Option<OsString> {
    std::env::var_os(name)
}

/// The settings for `inv`, or (having said why on stderr) gate's failure status.
pub fn load_settings(inv: &Invocation) -> Result<Settings, i32> {
    let env = Environment { var: &var };
    let settings =
        config::load(&inv.gate, &env).map_err(|e| fail(format!("{e}; nothing was run")))?;
    tracing::debug!(
        files = ?settings.files,
        level = %settings.policy.level,
        allow_rules = settings.policy.allow.len(),
        deny_rules = settings.policy.deny.len(),
        locked_by = ?settings.locked_by,
        "configuration loaded"
    );
    Ok(settings)
}

/// Files the command must not rewrite from inside the sandbox, wherever they are: the
/// configuration files gate read and its audit log.
pub fn protected_files(settings: &Settings) -> Vec<PathBuf> {
    let mut files = settings.files.clone();
    if let Ok(Some(log)) = audit::resolve_path(&settings.audit_log, &var) {
        files.push(log);
    }
    files
}

/// The sandbox settings for a run: the configured ones, and, when an approval socket is
/// configured, its broker token hidden too (unless it is in /tmp, which must stay
/// writable; the default socket's directory is hidden by the sandbox spec itself).
pub fn sandbox_settings(settings: &Settings) -> std::borrow::Cow<'_, config::SandboxSettings> {
    match &settings.socket {
        Some(socket) => {
            let token = crate::approval::paths::token_path(socket);
            if sandbox::spec::in_temporary(&token) {
                return std::borrow::Cow::Borrowed(&settings.sandbox);
            }
            let mut s = settings.sandbox.clone();
            s.deny_read.push(token);
            std::borrow::Cow::Owned(s)
        }
        None => std::borrow::Cow::Borrowed(&settings.sandbox),
    }
}
