//! From settings to a [`Spec`]: the defaults, the workspace, and every path made
//! canonical. Paths that do not exist are left out: hiding or protecting nothing costs
//! nothing, and not granting write is the safe side.
//!
//! The built-in lists are data in [`defaults`]; paths are made canonical with a memo
//! ([`canonical`]), given their other names through other mounts ([`mod@aliases`]), and the
//! terminals gate was handed are found by [`terminals`].

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::paths::{same, under};
use super::{Domains, Network, SandboxError, Spec};
use crate::config::SandboxSettings;

mod aliases;
mod canonical;
mod defaults;
mod terminals;

pub(crate) use aliases::other_proc_mounts;
use aliases::{aliases, each_filesystem_mounted_once, parse_mountinfo};
use canonical::{canonical_set, canonical_split, listed_homes, not_yet};
pub(crate) use defaults::{
    DEFAULT_DENY_READ, DEFAULT_DENY_WRITE, ROOT_DENY_READ, ROOT_HOME, ROOT_SCANNED,
};
use terminals::handed_terminals;

/// The paths [`ROOT_DENY_READ`] and [`ROOT_SCANNED`] name, as given (they are made
/// canonical with the rest).
fn root_secrets() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = ROOT_DENY_READ.iter().map(PathBuf::from).collect();
    for dir in ROOT_SCANNED {
        out.extend(root_only_entries(Path::new(dir)));
    }
    out
}

/// The entries of `dir` that uid 0 owns and others may not read (symbolic links
/// aside: the entry itself counts, never where it points).
fn root_only_entries(dir: &Path) -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|entry| {
            entry.metadata().is_ok_and(|meta| {
                meta.uid() == 0 && meta.mode() & 0o004 == 0 && !meta.file_type().is_symlink()
            })
        })
        .map(|entry| entry.path())
        .collect()
}

/// This place or configuration cannot be sandboxed as asked, and what to do about it.
fn place(cause: impl Into<String>, advice: Option<&str>) -> SandboxError {
    SandboxError::Place {
        cause: cause.into(),
        advice: advice.map(str::to_owned),
    }
}

/// The canonical form of `path`, or `None` when it does not exist. Most default paths
/// do not exist, and one `lstat` says so more cheaply than resolving each component.
fn existing(path: &Path) -> Option<PathBuf> {
    std::fs::symlink_metadata(path).ok()?;
    path.canonicalize().ok()
}

fn absolute_var(env: &dyn Fn(&str) -> Option<OsString>, name: &str) -> Option<PathBuf> {
    env(name).map(PathBuf::from).filter(|p| p.is_absolute())
}

/// What the safe level hides from reading, as given: the secrets in the home directory,
/// the broker's directory, the configured `deny_read`, and root's secrets as root.
fn deny_read_wanted(
    settings: &SandboxSettings,
    cwd: &Path,
    env: &dyn Fn(&str) -> Option<OsString>,
    is_root: bool,
    home: &Path,
) -> Vec<PathBuf> {
    let mut deny_read: Vec<PathBuf> = DEFAULT_DENY_READ
        .iter()
        .map(|p| home.join(p))
        // The broker's socket and token: a command that could reach them could approve
        // its own requests. (Not when the directory is the last-resort one in /tmp: see
        // `approval::paths::private_dir`.)
        .chain(Some(crate::approval::paths::private_dir(env)).filter(|d| !in_temporary(d)))
        .chain(settings.deny_read.iter().map(|p| cwd.join(p)))
        .collect();
    if is_root {
        // uid 0 owns these, so without capabilities it can still read them; and root's
        // own home holds root's keys whatever HOME says.
        deny_read.extend(root_secrets());
        if home != Path::new(ROOT_HOME) {
            deny_read.extend(
                DEFAULT_DENY_READ
                    .iter()
                    .map(|p| Path::new(ROOT_HOME).join(p)),
            );
        }
    }
    deny_read
}

/// What the safe level hides from reading for a command in `cwd`, as [`build`] finds
/// it: canonical, existing, and with the other names mounts give the same files. The
/// read-only preset refuses to read the same places (`crate::files`). `None` when
/// `HOME` is not set (or not absolute), so the secrets in it cannot be found.
pub(crate) fn hidden(
    settings: &SandboxSettings,
    cwd: &Path,
    env: &dyn Fn(&str) -> Option<OsString>,
    is_root: bool,
) -> Option<Vec<PathBuf>> {
    let home = crate::xdg::home(env)?;
    let wanted = deny_read_wanted(settings, cwd, env, is_root, &home);
    let (mut hidden, _, _) = canonical_split(&wanted, &mut listed_homes(&home, is_root));
    if !hidden.is_empty() && !each_filesystem_mounted_once() {
        let mounts = read_proc("/proc/self/mountinfo")
            .map(|text| parse_mountinfo(&text))
            .unwrap_or_default();
        let more = aliases(&mounts, &hidden);
        extend_new(&mut hidden, more);
    }
    Some(hidden)
}

/// Build the spec for a run in `cwd`. `protect`: more files to keep read-only, such as
/// the configuration files gate read and its audit log, wherever they are.
pub(crate) fn build(
    settings: &SandboxSettings,
    cwd: &Path,
    env: &dyn Fn(&str) -> Option<OsString>,
    is_root: bool,
    protect: &[PathBuf],
) -> Result<Spec, SandboxError> {
    let home = crate::xdg::home(env).ok_or_else(|| {
        place(
            "HOME is not set (or not absolute), so the safe level cannot find the secrets it \
             hides (~/.ssh, ~/.aws, ...)",
            Some("Set HOME"),
        )
    })?;
    let workspace =
        existing(cwd).ok_or_else(|| place("the working directory no longer exists", None))?;
    if workspace == Path::new("/") {
        return Err(place(
            "the safe level makes the working directory writable, and it is /",
            Some("Run the command from a project directory"),
        ));
    }

    let deny_read_wanted = deny_read_wanted(settings, cwd, env, is_root, &home);
    let mut resolved_parents = listed_homes(&home, is_root);
    let (mut deny_read, missing_read, hidden_kinds) =
        canonical_split(&deny_read_wanted, &mut resolved_parents);
    if let Some(secret) = deny_read.iter().find(|d| under(&workspace, d)) {
        return Err(place(
            format!(
                "the working directory is inside {}, which the safe level hides",
                secret.display()
            ),
            None,
        ));
    }

    let config_home = crate::xdg::config_home(env).unwrap_or_else(|| home.join(".config"));
    let state_home = crate::xdg::state_home(env).unwrap_or_else(|| home.join(".local/state"));
    let deny_write_wanted: Vec<PathBuf> = DEFAULT_DENY_WRITE
        .iter()
        .map(|p| home.join(p))
        .chain([
            config_home.join("gate"),
            state_home.join("gate"),
            PathBuf::from(crate::config::SYSTEM_CONFIG),
        ])
        .chain(protect.iter().map(|p| cwd.join(p)))
        .collect();
    let (mut deny_write, missing_write, _) =
        canonical_split(&deny_write_wanted, &mut resolved_parents);

    // A second mount of the same tree (a bind mount of HOME elsewhere) is another way to
    // the same files: hide and protect them by every name.
    if (!deny_read.is_empty() || !deny_write.is_empty()) && !each_filesystem_mounted_once() {
        let mounts = read_proc("/proc/self/mountinfo")
            .map(|text| parse_mountinfo(&text))
            .unwrap_or_default();
        let read_aliases = aliases(&mounts, &deny_read);
        let write_aliases = aliases(&mounts, &deny_write);
        extend_new(&mut deny_read, read_aliases);
        extend_new(&mut deny_write, write_aliases);
    }

    // /tmp and /dev/shm must stay fully writable (compilers, package managers and shells
    // create files there), and a protected path inside one would take away the right to
    // create files directly in it. So protection stops at their door; the paths left
    // unprotected are reported. $TMPDIR is writable too, but as an ordinary root: it is
    // only an environment variable, and pointing it at $HOME must not unprotect ~/.bashrc.
    let temporary = canonical_set(&[PathBuf::from("/tmp"), PathBuf::from("/dev/shm")]);
    // Walking around a hidden path inside one would take that right away; covering it
    // (as root) does not, so whether this refuses is decided once the way is chosen.
    let unwalkable = hidden_in_temporary(&deny_read, &temporary)
        .map(|(hidden, temp)| hidden_there(hidden, temp, &home));
    let (unprotected, deny_write): (Vec<PathBuf>, Vec<PathBuf>) = deny_write
        .into_iter()
        .partition(|p| temporary.iter().any(|t| under(p, t)));

    // The workspace and the temporary directories are canonical already; only the rest
    // is resolved (each path costs a system call per component).
    let mut write = vec![workspace];
    extend_new(&mut write, temporary);
    let more: Vec<PathBuf> = absolute_var(env, "TMPDIR")
        .into_iter()
        .chain(settings.write.iter().map(|p| cwd.join(p)))
        .collect();
    extend_new(&mut write, canonical_set(&more));
    if write.iter().any(|w| w == Path::new("/")) {
        return Err(place(
            "a writable path of the safe level ($TMPDIR or --write / sandbox.write) is /, which \
             would make everything writable",
            None,
        ));
    }

    // A hidden or protected path that does not exist yet could be made by the command
    // in a writable root (~/.config/gate/config.toml with TMPDIR=$HOME, a first run's
    // audit log, ~/.ssh/authorized_keys). Where it would be, it is kept from being
    // made: the walk then grants the entries of its nearest existing directory one by
    // one, and that directory no right to create entries in it.
    let mut deny_write = deny_write;
    for path in missing_read.iter().chain(&missing_write) {
        let Some(future) = not_yet(path, &mut resolved_parents) else {
            continue;
        };
        if write.iter().any(|w| under(&future, w))
            && !temporary_roots(&write).any(|t| under(&future, t))
            && !deny_write.iter().any(|d| same(d, &future))
        {
            deny_write.push(future);
        }
    }

    // A domain list: TCP through the proxy only, with the user's own ports beside it
    // (Landlock handles TCP even when no port is allowed).
    let proxy = (!settings.allow_domains.is_empty() && !settings.network).then(|| Domains {
        allow: settings.allow_domains.clone(),
        deny: settings.deny_domains.clone(),
        resolve: settings.resolve.clone(),
    });
    let network = if settings.network {
        Network::On
    } else if settings.net_connect.is_empty() && settings.net_bind.is_empty() && proxy.is_none() {
        Network::Off
    } else {
        Network::Tcp {
            connect: settings.net_connect.clone(),
            bind: settings.net_bind.clone(),
        }
    };
    Ok(Spec {
        write,
        deny_read,
        hidden_kinds,
        deny_write,
        unprotected,
        terminals: handed_terminals(),
        network,
        proxy,
        unix_sockets: settings.unix_sockets,
        best_effort: settings.best_effort,
        require: settings.require.clone(),
        unwalkable,
    })
}

/// A file of /proc, read in one go: it reports no size, so a plain read would first ask
/// for it and then grow its buffer from 32 bytes, a system call per step.
fn read_proc(path: &str) -> Option<String> {
    use std::io::Read;
    let file = std::fs::File::open(path).ok()?;
    let mut bytes = Vec::with_capacity(16 * 1024);
    // Through `take`, which has no size probe.
    file.take(u64::MAX).read_to_end(&mut bytes).ok()?;
    String::from_utf8(bytes).ok()
}

fn extend_new(list: &mut Vec<PathBuf>, more: Vec<PathBuf>) {
    for path in more {
        if !list.iter().any(|p| same(p, &path)) {
            list.push(path);
        }
    }
}

/// A hidden path inside /tmp or /dev/shm (not one of them itself), and which. Hiding it
/// would walk that directory and take away the right to create files directly in it
/// (see [`super::landlock`]), and a hidden secret must stay hidden: the two cannot both
/// hold with Landlock, so such a layout is refused.
fn hidden_in_temporary<'a>(
    deny_read: &'a [PathBuf],
    temporary: &'a [PathBuf],
) -> Option<(&'a Path, &'a Path)> {
    deny_read.iter().find_map(|hidden| {
        temporary
            .iter()
            .find(|t| under(hidden, t) && !same(hidden, t))
            .map(|t| (hidden.as_path(), t.as_path()))
    })
}

fn hidden_there(hidden: &Path, temp: &Path, home: &Path) -> SandboxError {
    let home = existing(home).unwrap_or_else(|| home.to_path_buf());
    let advice = if hidden.starts_with(&home) {
        format!(
            "Set HOME to a directory outside {temp} (such as one in /var/tmp)",
            temp = temp.display()
        )
    } else {
        format!(
            "Move it out of {temp}, or do not hide it (--deny-read, sandbox.deny_read)",
            temp = temp.display()
        )
    };
    SandboxError::Place {
        cause: format!(
            "the safe level hides {hidden}, which is in {temp}, and hiding it there would \
             take away the right to create files directly in {temp}",
            hidden = hidden.display(),
            temp = temp.display()
        ),
        advice: Some(advice),
    }
}

/// The writable roots that are /tmp or /dev/shm (canonical), where protection stops.
fn temporary_roots(write: &[PathBuf]) -> impl Iterator<Item = &PathBuf> {
    write
        .iter()
        .filter(|w| *w == Path::new("/tmp") || *w == Path::new("/dev/shm"))
}

/// Whether `path` is in /tmp or /dev/shm, which must stay fully writable at `safe`.
pub(crate) fn in_temporary(path: &Path) -> bool {
    path.starts_with("/tmp") || path.starts_with("/dev/shm")
}

#[cfg(test)]
mod tests;
