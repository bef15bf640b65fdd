//! Paths made canonical while the spec is built, with a memo of what was already
//! resolved and of listings of the directories most names are looked up in, so that
//! most of the defaults (which do not exist) cost no system call each.

use std::path::{Path, PathBuf};

use super::{ROOT_HOME, existing};

use super::super::listing::{Listed, Listing};
use super::super::paths::same;

/// Where `path`, which does not exist, would be made: its nearest existing ancestor
/// made canonical, and the missing rest. `None` when the rest is not plain names (a
/// `..` in a path that does not exist cannot be resolved) or nothing exists above it.
/// `memo`: ancestors already made canonical (most such paths are in `HOME`).
pub(super) fn not_yet(path: &Path, memo: &mut Resolved) -> Option<PathBuf> {
    let mut rest = Vec::new();
    let mut at = path;
    loop {
        let name = at.file_name()?;
        if !matches!(
            at.components().next_back(),
            Some(std::path::Component::Normal(_))
        ) {
            return None;
        }
        rest.push(name);
        let parent = at.parent()?;
        if let Some(mut out) = canonical_dir(parent, memo) {
            out.extend(rest.iter().rev());
            return Some(out);
        }
        at = parent;
    }
}

/// What the spec has learnt of the filesystem while building: directories by the name
/// given and their canonical form (`None`: it does not exist), and listings of the
/// directories that hold many of the names looked up (`HOME`, root's home).
#[derive(Default)]
pub(super) struct Resolved {
    pub(super) dirs: Vec<(PathBuf, Option<PathBuf>)>,
    pub(super) listings: Vec<Listing>,
}

/// What `lstat` would say of a path, as far as the spec needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Seen {
    Missing,
    Link,
    Plain { is_dir: bool },
}

/// What `path` (as given) is, from a listing in `memo` when one can tell, else from
/// `lstat`. A path that cannot be looked at counts as missing, as before.
pub(super) fn look(path: &Path, memo: &Resolved) -> Seen {
    if let Some(listed) = memo.listings.iter().find_map(|l| l.lookup(path)) {
        return match listed {
            Listed::Missing => Seen::Missing,
            Listed::Entry { is_dir } => Seen::Plain { is_dir },
        };
    }
    match std::fs::symlink_metadata(path) {
        Err(_) => Seen::Missing,
        Ok(meta) if meta.file_type().is_symlink() => Seen::Link,
        Ok(meta) => Seen::Plain {
            is_dir: meta.is_dir(),
        },
    }
}

/// `path` (as given) made canonical, or `None` when it does not exist, remembered in
/// `memo`. A path that is no symbolic link is its directory made canonical (remembered
/// too) and its name: one `lstat` per directory not seen before, where resolving it
/// whole would read every component of it as a link again (`realpath`), for each path.
pub(super) fn canonical_dir(path: &Path, memo: &mut Resolved) -> Option<PathBuf> {
    if let Some((_, known)) = memo.dirs.iter().find(|(p, _)| same(p, path)) {
        return known.clone();
    }
    let found = match (path.parent(), path.components().next_back()) {
        (None, Some(std::path::Component::RootDir)) => Some(PathBuf::from("/")),
        (Some(parent), Some(std::path::Component::Normal(name))) => match look(path, memo) {
            Seen::Missing => None,
            Seen::Link => path.canonicalize().ok(),
            Seen::Plain { .. } => canonical_dir(parent, memo).map(|dir| dir.join(name)),
        },
        // `..` at the end, or a relative path: resolved whole.
        _ => existing(path),
    };
    memo.dirs.push((path.to_path_buf(), found.clone()));
    found
}

/// As [`canonical_set`], and the paths that do not exist, as given. A path that is no
/// symbolic link is its directory made canonical and its name: `parents` remembers each
/// directory made canonical (most paths share `HOME` or `/etc`), which saves resolving
/// every component of every path again.
/// Also what each canonical path is (true: a directory), where that is known without
/// another look-up (not through a symbolic link).
pub(super) fn canonical_split(paths: &[PathBuf], parents: &mut Resolved) -> Split {
    let mut out: Vec<PathBuf> = Vec::with_capacity(paths.len());
    let mut missing = Vec::new();
    let mut kinds = Vec::new();
    for path in paths {
        let seen = look(path, parents);
        let canonical = match (seen, path.parent(), path.file_name()) {
            (Seen::Missing, _, _) => {
                missing.push(path.clone());
                continue;
            }
            (Seen::Plain { .. }, Some(parent), Some(name)) => {
                canonical_dir(parent, parents).map(|d| d.join(name))
            }
            _ => path.canonicalize().ok(),
        };
        let Some(canonical) = canonical else {
            continue;
        };
        if !out.iter().any(|p| same(p, &canonical)) {
            if let Seen::Plain { is_dir } = seen {
                kinds.push((canonical.clone(), is_dir));
            }
            out.push(canonical);
        }
    }
    (out, missing, kinds)
}

/// What [`canonical_split`] found: the canonical paths, those that do not exist (as
/// given), and what each of the first is (true: a directory) where that is known.
pub(super) type Split = (Vec<PathBuf>, Vec<PathBuf>, Vec<(PathBuf, bool)>);

/// Canonical, existing, without duplicates, in the given order.
pub(super) fn canonical_set(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::with_capacity(paths.len());
    for path in paths.iter().filter_map(|p| existing(p)) {
        if !out.iter().any(|p| same(p, &path)) {
            out.push(path);
        }
    }
    out
}

impl Resolved {
    pub(super) fn new() -> Resolved {
        Resolved::default()
    }
}

/// A memo that starts with listings of the home directories: some thirty of the names
/// looked up are in HOME (and, as root, in /root), most of them missing, and one listing
/// answers for all (see `Listing`).
pub(super) fn listed_homes(home: &Path, is_root: bool) -> Resolved {
    let mut resolved = Resolved::new();
    resolved.listings.extend(Listing::of(home));
    if is_root && home != Path::new(ROOT_HOME) {
        resolved.listings.extend(Listing::of(Path::new(ROOT_HOME)));
    }
    resolved
}
