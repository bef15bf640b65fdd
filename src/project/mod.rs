//! Per-project policy: a `.gate.toml` in the working directory or the nearest directory
//! above it, up to the repository's root. It is gate's configuration format (without
//! `lock`) and a layer of its own, after the user file and before the variables.
//!
//! A repository is written by whoever wrote it, and the model can write one too, so the
//! file may only tighten (as a layer under a lock may: [`crate::config::merge`]) until
//! the person trusts it with `gate trust`. Trust is a record outside every repository
//! ([`trust`]) that names the file's path and the SHA-256 of its bytes: one changed byte
//! and the file is untrusted again. The file is opened once, and the bytes that were
//! hashed are the bytes that are parsed, so it cannot change between the two.
//!
//! Looking for it costs two `lstat` calls a directory, from the working directory up to
//! the first one holding `.git` (or `/`); see docs/configuration.md#project-policy.

#![forbid(unsafe_code)]

pub mod command;
pub mod trust;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::{ConfigError, FileKind, Layer, Untrusted, parse_file, read_config_file};
use crate::xdg::Var;

pub use trust::{Store, Trust};

/// The project file's name.
pub const FILE_NAME: &str = ".gate.toml";

/// What marks a repository's root: the walk stops there.
const ROOT_MARK: &str = ".git";

/// The project file in force, for `gate rules` and `gate doctor` (decisions read only
/// its layer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectFile {
    pub path: PathBuf,
    pub sha256: String,
    pub trust: Trust,
}

/// A project file read and parsed, with its trust: the layer is held to tightening
/// unless the file is trusted.
#[derive(Debug)]
pub struct Loaded {
    pub file: ProjectFile,
    pub layer: Layer,
}

/// The nearest `.gate.toml` from `dir` up: in `dir`, then each parent, stopping after
/// the first directory that holds `.git` (a file, a directory or a link: submodules and
/// worktrees have a `.git` file) or at `/`. Any entry by that name counts, a link or a
/// FIFO too, so that the reader refuses what is not a regular file rather than the walk
/// passing over it to a file further up. An error other than "not there" is an error:
/// gate cannot tell whether a policy is there.
pub fn find(dir: &Path) -> Result<Option<PathBuf>, String> {
    let present = |path: &Path| match std::fs::symlink_metadata(path) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(format!(
            "cannot look for a project policy at {}: {e}",
            path.display()
        )),
    };
    for ancestor in dir.ancestors() {
        let candidate = ancestor.join(FILE_NAME);
        if present(&candidate)? {
            return Ok(Some(candidate));
        }
        if present(&ancestor.join(ROOT_MARK))? {
            return Ok(None);
        }
    }
    Ok(None)
}

/// Read a project file once: its text and the SHA-256 of exactly those bytes.
pub fn read(path: &Path) -> Result<(String, String), ConfigError> {
    let text = read_config_file(path)?.ok_or_else(|| {
        ConfigError::new(format!(
            "{}: cannot read it: it vanished or is a link to nothing",
            path.display()
        ))
    })?;
    let sha256 = crate::audit::sha256_hex(text.as_bytes());
    Ok((text, sha256))
}

/// The project layer for a run in `cwd`: found, read, parsed, and held to tightening
/// unless the trust store says this user trusts these exact bytes at this path.
pub fn load(cwd: &Path, var: Var<'_>, home: Option<&Path>) -> Result<Option<Loaded>, ConfigError> {
    let Some(path) = find(cwd).map_err(ConfigError::new)? else {
        return Ok(None);
    };
    let (text, sha256) = read(&path)?;
    let mut layer = parse_file(&path, &text, FileKind::Project, home)?;
    let trust = match Store::of(var) {
        Some(store) => store.lookup(&path, &sha256),
        None => Trust::NoStore,
    };
    if let Some(why) = trust.why() {
        layer.untrusted = Some(Untrusted {
            file: Arc::from(path.as_path()),
            why,
        });
    }
    Ok(Some(Loaded {
        file: ProjectFile {
            path,
            sha256,
            trust,
        },
        layer,
    }))
}

/// The project file a run here would read, and its trust: for `gate doctor`, which
/// reports it even when the configuration does not load (a parse error is an error).
pub fn in_force(var: Var<'_>, home: Option<&Path>) -> Result<Option<ProjectFile>, String> {
    let cwd = working_dir().map_err(|e| e.to_string())?;
    load(&cwd, var, home)
        .map(|loaded| loaded.map(|l| l.file))
        .map_err(|e| e.to_string())
}

/// The working directory as the kernel knows it (every link resolved), where the walk
/// starts.
pub fn working_dir() -> Result<PathBuf, ConfigError> {
    std::env::current_dir().map_err(|e| {
        ConfigError::new(format!(
            "cannot find the working directory (was it deleted?), so cannot look for a \
             project policy ({FILE_NAME}) that may apply: {e}; run it from a directory that \
             exists"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn the_nearest_file_from_the_working_directory_up_is_found() {
        let root = tempfile::tempdir().unwrap();
        let deep = root.path().join("a/b/c");
        fs::create_dir_all(&deep).unwrap();
        fs::write(root.path().join("a").join(FILE_NAME), "").unwrap();
        assert_eq!(
            find(&deep).unwrap(),
            Some(root.path().join("a").join(FILE_NAME))
        );
        fs::write(deep.join(FILE_NAME), "").unwrap();
        assert_eq!(find(&deep).unwrap(), Some(deep.join(FILE_NAME)));
    }

    #[test]
    fn the_walk_stops_at_the_first_directory_holding_git() {
        let root = tempfile::tempdir().unwrap();
        let repo = root.path().join("repo");
        let inner = repo.join("src");
        fs::create_dir_all(&inner).unwrap();
        fs::write(root.path().join(FILE_NAME), "").unwrap();
        assert_eq!(find(&inner).unwrap(), Some(root.path().join(FILE_NAME)));
        // A worktree's or a submodule's `.git` is a file: it marks the root as well.
        fs::write(repo.join(".git"), "gitdir: elsewhere\n").unwrap();
        assert_eq!(find(&inner).unwrap(), None);
        // The root's own file counts.
        fs::write(repo.join(FILE_NAME), "").unwrap();
        assert_eq!(find(&inner).unwrap(), Some(repo.join(FILE_NAME)));
    }

    #[test]
    fn a_link_or_a_fifo_by_that_name_is_found_so_that_the_reader_refuses_it() {
        let root = tempfile::tempdir().unwrap();
        fs::write(root.path().join("elsewhere.toml"), "").unwrap();
        let sub = root.path().join("sub");
        fs::create_dir(&sub).unwrap();
        std::os::unix::fs::symlink("nowhere", sub.join(FILE_NAME)).unwrap();
        assert_eq!(find(&sub).unwrap(), Some(sub.join(FILE_NAME)));
        let e = read(&sub.join(FILE_NAME)).unwrap_err().to_string();
        assert!(e.contains("link to nothing"), "{e}");
        fs::remove_file(sub.join(FILE_NAME)).unwrap();
        nix::unistd::mkfifo(&sub.join(FILE_NAME), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let e = read(&sub.join(FILE_NAME)).unwrap_err().to_string();
        assert!(
            e.contains("is a FIFO (named pipe), not a regular file"),
            "{e}"
        );
    }

    #[test]
    fn the_hash_is_of_the_bytes_parsed() {
        let root = tempfile::tempdir().unwrap();
        let path = root.path().join(FILE_NAME);
        fs::write(&path, "deny = [\"rm\"]\n").unwrap();
        let (text, sha) = read(&path).unwrap();
        assert_eq!(text, "deny = [\"rm\"]\n");
        assert_eq!(sha, crate::audit::sha256_hex(b"deny = [\"rm\"]\n"));
    }
}
