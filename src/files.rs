//! What a read-only command's words name on disk: the I/O half of the read-only preset's
//! file checks ([`crate::policy::readonly::files`] is the pure half, and says why).
//!
//! For each name the policy asks about, every symbolic link is followed, one component
//! at a time, from the working directory (or the home directory for `~`), and the place
//! it leads to is described: canonical path, kind, number of names, and whether it is on
//! a proc file system. A link inside a process's directory in /proc (`/proc/PID/root`,
//! `/proc/PID/fd/N`) is not followed: it leads into that process's view of the files,
//! which need not be this one. Beside the answers go the protected places: what the
//! safe level's sandbox hides from reading (the same list, found the same way:
//! [`crate::sandbox::spec::hidden`]), the agents' credential files, gate's own files,
//! and other mounts of proc.
//!
//! The files can change between this look and the command's own: another process
//! running at the same time, or an earlier part of the same command line, can replace a
//! name with a link (docs/readonly.md, "Known limits").

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Component, Path, PathBuf};

use crate::config::Settings;
use crate::policy::readonly::{self, Files, Found, Kind, Place, Protected, Query};

/// At most this many names are looked at for one request; a command that would need
/// more is judged with the rest unknown (and so not read-only).
pub const MAX_QUERIES: usize = 512;

/// Symbolic links followed for one name before it counts as a loop (as the kernel's).
const MAX_LINKS: usize = 40;

fn var(name: &str) -> Option<OsString> {
    std::env::var_os(name)
}

/// The facts the read-only preset needs to judge `text` under `settings`; with
/// `compound`, those of each of its parts too.
pub fn look(settings: &Settings, text: &str, compound: bool) -> Files {
    let queries = readonly::file_queries(text, compound);
    if queries.is_empty() {
        return Files::default();
    }
    let cwd = std::env::current_dir()
        .ok()
        .and_then(|dir| dir.canonicalize().ok());
    let answers: Vec<(Query, Found)> = queries
        .into_iter()
        .take(MAX_QUERIES)
        .map(|query| {
            let found = resolve(&query, cwd.as_deref(), &var);
            (query, found)
        })
        .collect();
    let walks_possible = answers
        .iter()
        .any(|(_, found)| matches!(found, Found::At(place) if place.kind == Kind::Directory));
    let protected = match protected_places(settings, cwd.as_deref(), walks_possible) {
        Some(protected) => protected,
        None => {
            // Without HOME the secrets in it cannot be found: nothing named counts as
            // looked at.
            let mut files = Files::default();
            for (query, _) in answers {
                files.insert(
                    query,
                    Found::Unknown(
                        "HOME is not set (or not absolute), so gate cannot find the secrets it \
                         protects"
                            .to_owned(),
                    ),
                );
            }
            return files;
        }
    };
    let mut files = Files::new(protected);
    for (query, found) in answers {
        files.insert(query, found);
    }
    files
}

/// The places the preset does not read, canonical; `None` without a home directory.
fn protected_places(
    settings: &Settings,
    cwd: Option<&Path>,
    walks_possible: bool,
) -> Option<Vec<Protected>> {
    let is_root = nix::unistd::geteuid().is_root();
    let sandbox = crate::settings::sandbox_settings(settings);
    let cwd = cwd.map_or_else(|| PathBuf::from("/"), Path::to_path_buf);
    let home = crate::xdg::home(&var)?;
    let mut out = Vec::new();
    let mut add = |path: PathBuf, what: &str| {
        if let Ok(path) = path.canonicalize() {
            if !out.iter().any(|p: &Protected| p.path == path) {
                out.push(Protected {
                    path,
                    what: what.to_owned(),
                });
            }
        }
    };
    for path in crate::sandbox::spec::hidden(&sandbox, &cwd, &var, is_root)? {
        add(
            path,
            "which the safe level's sandbox hides (its deny_read list)",
        );
    }
    for secret in readonly::SECRET_LOCATIONS {
        add(
            home.join(secret),
            "where an agent or a tool keeps credentials",
        );
    }
    let config_home = crate::xdg::config_home(&var).unwrap_or_else(|| home.join(".config"));
    let state_home = crate::xdg::state_home(&var).unwrap_or_else(|| home.join(".local/state"));
    let socket = crate::approval::socket_path(settings, &var);
    let gates = crate::settings::protected_files(settings)
        .into_iter()
        .chain([
            config_home.join("gate"),
            state_home.join("gate"),
            PathBuf::from(crate::config::SYSTEM_CONFIG),
            crate::config::system_drop_ins(),
            crate::approval::paths::private_dir(&var),
            crate::approval::paths::token_path(&socket),
        ]);
    for path in gates {
        add(
            path,
            "one of gate's own files (its configuration, audit log or approvals)",
        );
    }
    if walks_possible {
        for mount in crate::sandbox::spec::other_proc_mounts() {
            add(
                mount,
                "a proc file system, which holds the processes' environments and memory",
            );
        }
    }
    Some(out)
}

/// Where `query` leads, from `cwd` (canonical; `None` when it cannot be told).
pub fn resolve(query: &Query, cwd: Option<&Path>, var: &dyn Fn(&str) -> Option<OsString>) -> Found {
    let full = match query {
        Query::Path(text) if text.starts_with('/') => PathBuf::from(text),
        Query::Path(text) => match cwd {
            Some(cwd) => cwd.join(text),
            None => {
                return Found::Unknown("the working directory cannot be resolved".to_owned());
            }
        },
        Query::Home(text) => match home_of(text, var) {
            Ok(full) => full,
            Err(why) => return Found::Unknown(why),
        },
    };
    walk(&full)
}

/// `~`, `~/rest`, `~user/rest` as the shell expands them.
fn home_of(text: &str, var: &dyn Fn(&str) -> Option<OsString>) -> Result<PathBuf, String> {
    let body = text.strip_prefix('~').unwrap_or(text);
    let (user, rest) = body.split_once('/').unwrap_or((body, ""));
    let home = if user.is_empty() {
        match var("HOME").filter(|h| !h.is_empty()) {
            Some(home) => PathBuf::from(home),
            None => nix::unistd::User::from_uid(nix::unistd::getuid())
                .ok()
                .flatten()
                .map(|u| u.dir)
                .ok_or_else(|| "HOME is not set and the user has no home".to_owned())?,
        }
    } else if user == "+" || user == "-" {
        return Err(format!("`~{user}` names a directory the shell keeps"));
    } else {
        nix::unistd::User::from_name(user)
            .ok()
            .flatten()
            .map(|u| u.dir)
            .ok_or_else(|| format!("there is no user `{user}` here"))?
    };
    if !home.is_absolute() {
        return Err(format!(
            "the home directory {} is not absolute",
            home.display()
        ));
    }
    Ok(home.join(rest))
}

/// Follow `full` (absolute) one component at a time.
fn walk(full: &Path) -> Found {
    let mut done = PathBuf::from("/");
    let mut todo: VecDeque<OsString> = names(full);
    let mut links = 0;
    while let Some(name) = todo.pop_front() {
        if name == ".." {
            done.pop();
            continue;
        }
        let next = done.join(&name);
        let meta = match std::fs::symlink_metadata(&next) {
            Ok(meta) => meta,
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound
                    || e.raw_os_error() == Some(libc::ENOTDIR) =>
            {
                return Found::Missing;
            }
            Err(e) => return Found::Unknown(format!("{}: {e}", next.display())),
        };
        if meta.file_type().is_symlink() {
            if in_process_directory(&done) {
                return Found::Unknown(format!(
                    "{} is a link in a process's directory in /proc, which leads into that \
                     process's view of the files",
                    next.display()
                ));
            }
            links += 1;
            if links > MAX_LINKS {
                return Found::Unknown(format!("{} leads through too many links", full.display()));
            }
            let target = match std::fs::read_link(&next) {
                Ok(target) => target,
                Err(e) => return Found::Unknown(format!("{}: {e}", next.display())),
            };
            if target.is_absolute() {
                done = PathBuf::from("/");
            }
            for name in names(&target).into_iter().rev() {
                todo.push_front(name);
            }
            continue;
        }
        if !todo.is_empty() && !meta.is_dir() {
            // Opening it would fail with ENOTDIR.
            return Found::Missing;
        }
        done = next;
    }
    let meta = match std::fs::symlink_metadata(&done) {
        Ok(meta) => meta,
        Err(e) => return Found::Unknown(format!("{}: {e}", done.display())),
    };
    let file_type = meta.file_type();
    let kind = if file_type.is_dir() {
        Kind::Directory
    } else if file_type.is_char_device() {
        Kind::CharDevice
    } else if file_type.is_block_device() {
        Kind::BlockDevice
    } else if file_type.is_fifo() {
        Kind::Fifo
    } else if file_type.is_socket() {
        Kind::Socket
    } else {
        Kind::File
    };
    Found::At(Place {
        on_proc: on_proc(&done),
        path: done,
        kind,
        links: meta.nlink(),
    })
}

/// The names of a path's components, `..` kept, `.` and the root left out.
fn names(path: &Path) -> VecDeque<OsString> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
        })
        .collect()
}

fn on_proc(path: &Path) -> bool {
    nix::sys::statfs::statfs(path)
        .is_ok_and(|fs| fs.filesystem_type() == nix::sys::statfs::PROC_SUPER_MAGIC)
}

/// Whether `dir` (canonical) is a process's directory in a proc file system, or inside
/// one: a component of it is a number.
fn in_process_directory(dir: &Path) -> bool {
    let numbered = dir
        .components()
        .any(|c| matches!(c, Component::Normal(name) if is_number(name)));
    numbered && on_proc(dir)
}

fn is_number(name: &OsStr) -> bool {
    !name.is_empty() && name.as_encoded_bytes().iter().all(u8::is_ascii_digit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_home(home: &Path) -> impl Fn(&str) -> Option<OsString> + '_ {
        move |name| (name == "HOME").then(|| home.as_os_str().to_owned())
    }

    #[test]
    fn a_link_is_followed_to_where_it_leads_and_a_missing_name_is_missing() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("secret")).unwrap();
        std::fs::write(root.join("secret/key"), "k").unwrap();
        std::os::unix::fs::symlink(root.join("secret/key"), root.join("link")).unwrap();
        std::os::unix::fs::symlink("secret/../secret", root.join("rel")).unwrap();
        let var = env_home(&root);
        let at = |text: &str| match resolve(&Query::Path(text.to_owned()), Some(&root), &var) {
            Found::At(place) => Some(place),
            _ => None,
        };
        let link = at("link").unwrap();
        assert_eq!(link.path, root.join("secret/key"));
        assert_eq!(link.kind, Kind::File);
        assert_eq!(at("rel/key").unwrap().path, root.join("secret/key"));
        assert_eq!(at("./rel/../link").unwrap().path, root.join("secret/key"));
        assert_eq!(at(".").unwrap().kind, Kind::Directory);
        assert_eq!(
            resolve(&Query::Path("nothing/here".to_owned()), Some(&root), &var),
            Found::Missing
        );
        assert_eq!(
            resolve(&Query::Path("link/below".to_owned()), Some(&root), &var),
            Found::Missing
        );
        match resolve(&Query::Home("~/link".to_owned()), None, &var) {
            Found::At(place) => assert_eq!(place.path, root.join("secret/key")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_loop_of_links_is_unknown() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::os::unix::fs::symlink("b", root.join("a")).unwrap();
        std::os::unix::fs::symlink("a", root.join("b")).unwrap();
        let var = env_home(&root);
        assert!(matches!(
            resolve(&Query::Path("a".to_owned()), Some(&root), &var),
            Found::Unknown(_)
        ));
    }

    #[test]
    fn proc_self_is_followed_but_a_link_inside_a_process_directory_is_not() {
        let var = |_: &str| None;
        match resolve(&Query::Path("/proc/self/environ".to_owned()), None, &var) {
            Found::At(place) => {
                assert!(place.on_proc);
                assert_eq!(
                    place.path,
                    PathBuf::from(format!("/proc/{}/environ", std::process::id()))
                );
            }
            other => panic!("{other:?}"),
        }
        for text in [
            "/proc/self/root/etc/hostname",
            "/proc/self/cwd",
            "/dev/stdin",
        ] {
            assert!(
                matches!(
                    resolve(&Query::Path(text.to_owned()), None, &var),
                    Found::Unknown(_)
                ),
                "{text}"
            );
        }
    }
}
