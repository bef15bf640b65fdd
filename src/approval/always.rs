//! The always-allow file, `always.toml` beside the user file
//! (`~/.config/gate/always.toml`): lasting approvals a person chose with `gate approve
//! --always` / `--always-rule` or in `gate watch`, written here by the broker, which runs
//! as that person. gate reads the file as part of the user's configuration
//! ([`crate::config`]), so a rule in it has exactly the trust of one written by hand in
//! config.toml, and, like config.toml, it is a file the agent's commands can write at
//! `ask` and `full` (docs/security.md#lasting-approvals).
//!
//! Adding a rule: lock the directory, read the file and check that it loads, append one
//! `[[allow]]` table, check that the result loads and holds the new rule, write it under
//! a temporary name, sync it, and rename it into place. Two approvals at once both land
//! (the second waits for the lock, then reads the file the first wrote); a reader sees
//! the old file or the new one, never a part.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

use crate::config::{FileKind, Layer, MAX_CONFIG_BYTES, parse_file};

/// How long an addition waits for another one to finish.
const LOCK_WITHIN: Duration = Duration::from_secs(5);

/// What adding a rule came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Added {
    /// The line of the rule in the file.
    pub line: u32,
    /// The file already allowed it: nothing was written.
    pub already: bool,
}

/// Why a rule was not added. In every case the file is as it was: nothing was added.
#[derive(Debug)]
pub enum AddError {
    /// The file or its directory cannot be used as it is (no such directory can be
    /// made, a link, not a plain file, too large, a read that failed): the cause.
    Unusable(String),
    /// The file as it is does not load: why.
    Broken(String),
    /// With the rule added the file would not load (why), or would not hold the rule
    /// as written (`None`).
    WouldBreak(Option<String>),
    /// Another addition held the lock for all of `waited`.
    Busy { dir: PathBuf, waited: Duration },
    /// Writing the new file failed.
    Write { path: PathBuf, error: io::Error },
}

impl std::fmt::Display for AddError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AddError::Unusable(why) => f.write_str(why),
            AddError::Broken(why) => write!(f, "{why}; fix or remove it first (nothing was added)"),
            AddError::WouldBreak(Some(why)) => write!(
                f,
                "the file would not load with the rule added ({why}); nothing was added"
            ),
            AddError::WouldBreak(None) => {
                f.write_str("the file would not hold the rule as written; nothing was added")
            }
            AddError::Busy { dir, waited } => write!(
                f,
                "another process has held the lock on {} for {} s; nothing was added",
                dir.display(),
                waited.as_secs()
            ),
            AddError::Write { path, error } => {
                write!(
                    f,
                    "cannot write {}: {error}; nothing was added",
                    path.display()
                )
            }
        }
    }
}

impl std::error::Error for AddError {}

/// Add the allow rule `rule` (exact, or a prefix) to the always-allow file at `path`,
/// with `note` as its comment. `rule` must already be a valid allow rule; the file is
/// checked before and after, and is never left broken or half written.
pub fn add(path: &Path, rule: &str, exact: bool, note: &str) -> Result<Added, AddError> {
    let shown = path.display();
    let dir = path
        .parent()
        .ok_or_else(|| AddError::Unusable(format!("{shown} cannot be a file's path")))?;
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| AddError::Unusable(format!("cannot create {}: {e}", dir.display())))?;
    let dir_file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC)
        .open(dir)
        .map_err(|e| AddError::Unusable(format!("cannot open {}: {e}", dir.display())))?;
    let locked = lock(dir_file, dir)?;

    let old = read(path).map_err(AddError::Unusable)?;
    let old_layer = load(path, &old).map_err(AddError::Broken)?;
    if let Some(line) = allowed_already(&old_layer, rule, exact) {
        return Ok(Added {
            line,
            already: true,
        });
    }
    let mut text = old;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    if !text.is_empty() {
        text.push('\n');
    }
    let line = u32::try_from(text.lines().count() + 3).unwrap_or(u32::MAX);
    text.push_str(&entry(rule, exact, note));
    // The new text must load, and hold the new rule where it was put: whatever a rule
    // or a note contains, it stays one rule in one table.
    let new_layer = load(path, &text).map_err(|e| AddError::WouldBreak(Some(e)))?;
    if allowed_already(&new_layer, rule, exact) != Some(line)
        || new_layer.allow.len() != old_layer.allow.len() + 1
    {
        return Err(AddError::WouldBreak(None));
    }
    crate::replace::replace(path, text.as_bytes(), 0o600).map_err(|error| AddError::Write {
        path: path.to_path_buf(),
        error,
    })?;
    let _ = locked.sync_all();
    Ok(Added {
        line,
        already: false,
    })
}

/// The `[[allow]]` table for one rule, with its note as a comment above it.
pub fn entry(rule: &str, exact: bool, note: &str) -> String {
    // A comment ends at a newline, so the note is kept on its line.
    let note: String = note
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    let mut out = format!(
        "# {note}\n[[allow]]\nrule = {}\n",
        crate::config::toml_string(rule)
    );
    if exact {
        out.push_str("exact = true\n");
    }
    out
}

/// The line of the rule in `layer` that already allows what `rule` would: for an exact
/// rule, any rule matching its text; for a prefix, a prefix rule that is it or shorter.
fn allowed_already(layer: &Layer, rule: &str, exact: bool) -> Option<u32> {
    let (found, origin) = layer.allow.find(rule)?;
    if !exact && layer.allow.is_exact(found) {
        return None;
    }
    match origin {
        crate::policy::Origin::Always { line, .. } => Some(line),
        _ => None,
    }
}

fn load(path: &Path, text: &str) -> Result<Layer, String> {
    parse_file(path, text, FileKind::Always, None).map_err(|e| e.to_string())
}

/// Take the directory's lock, waiting a while for another addition to finish.
fn lock(dir_file: File, dir: &Path) -> Result<Flock<File>, AddError> {
    let deadline = Instant::now() + LOCK_WITHIN;
    let mut file = dir_file;
    loop {
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(locked) => return Ok(locked),
            Err((back, Errno::EWOULDBLOCK)) if Instant::now() < deadline => {
                file = back;
                std::thread::sleep(Duration::from_millis(10));
            }
            Err((_, Errno::EWOULDBLOCK)) => {
                return Err(AddError::Busy {
                    dir: dir.to_path_buf(),
                    waited: LOCK_WITHIN,
                });
            }
            Err((_, e)) => {
                return Err(AddError::Unusable(format!(
                    "cannot lock {}: {e}",
                    dir.display()
                )));
            }
        }
    }
}

/// The file's text; empty when there is none yet. Only a plain file is read and
/// replaced: a link would be replaced by a file, so it is refused.
fn read(path: &Path) -> Result<String, String> {
    let shown = path.display();
    // Not through a link, and the file opened is the file looked at.
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(String::new()),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(format!(
                "{shown} is a symbolic link, not a plain file; gate replaces the file whole \
                 to add a rule, so add this one by hand"
            ));
        }
        Err(e) => return Err(format!("cannot open {shown}: {e}")),
    };
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot inspect {shown}: {e}"))?;
    if !meta.file_type().is_file() {
        return Err(format!(
            "{shown} is not a plain file; the always-allow file must be one (nothing was \
             added)"
        ));
    }
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(format!(
            "{shown} is larger than {MAX_CONFIG_BYTES} bytes, the most a configuration file may hold"
        ));
    }
    let mut text = String::new();
    file.take(MAX_CONFIG_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_is_one_table_whatever_the_rule_and_note_hold() {
        let text = entry(
            "echo \"a b\"\tc",
            true,
            "approved\n[[allow]]\nrule = \"rm\"",
        );
        let layer = load(Path::new("/h/.config/gate/always.toml"), &text).unwrap();
        assert_eq!(layer.allow.len(), 1);
        assert!(layer.allow.is_exact("echo \"a b\"\tc"));
        assert!(layer.allow.find("rm").is_none());
    }

    #[test]
    fn a_prefix_entry_is_not_exact() {
        let text = entry("npm test", false, "n");
        let layer = load(Path::new("/a/always.toml"), &text).unwrap();
        assert!(layer.allow.find("npm test --watch").is_some());
        assert!(!layer.allow.is_exact("npm test"));
    }

    #[test]
    fn rules_are_added_once_and_the_file_stays_loadable() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gate").join("always.toml");
        let first = add(&path, "git status", true, "one").unwrap();
        assert_eq!(
            first,
            Added {
                line: 3,
                already: false
            }
        );
        let again = add(&path, "git status", true, "two").unwrap();
        assert_eq!(
            again,
            Added {
                line: 3,
                already: true
            }
        );
        let prefix = add(&path, "npm test", false, "three").unwrap();
        assert!(!prefix.already);
        // An exact rule the prefix covers is there already.
        assert!(
            add(&path, "npm test --watch", true, "four")
                .unwrap()
                .already
        );
        // The exact rule does not cover its prefix.
        assert!(!add(&path, "git status -s", false, "five").unwrap().already);
        let text = fs::read_to_string(&path).unwrap();
        let layer = load(&path, &text).unwrap();
        assert_eq!(layer.allow.len(), 3, "{text}");
        let line = text.lines().nth(prefix.line as usize - 1).unwrap();
        assert_eq!(line, "rule = \"npm test\"", "{text}");
    }

    #[test]
    fn a_broken_file_or_a_link_is_not_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("always.toml");
        fs::write(&path, "allow = [\n").unwrap();
        let e = add(&path, "ls", true, "n").unwrap_err();
        assert!(matches!(e, AddError::Broken(_)), "{e:?}");
        let e = e.to_string();
        assert!(
            e.contains("malformed TOML") && e.contains("nothing was added"),
            "{e}"
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), "allow = [\n");
        fs::write(&path, "level = \"full\"\n").unwrap();
        let e = add(&path, "ls", true, "n").unwrap_err().to_string();
        assert!(e.contains("holds only `allow` rules"), "{e}");
        let link = dir.path().join("link.toml");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        let e = add(&link, "ls", true, "n").unwrap_err();
        assert!(matches!(e, AddError::Unusable(_)), "{e:?}");
        let e = e.to_string();
        assert!(e.contains("is a symbolic link"), "{e}");
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        let fifo = dir.path().join("fifo.toml");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let e = add(&fifo, "ls", true, "n").unwrap_err().to_string();
        assert!(e.contains("not a plain file"), "{e}");
    }

    #[test]
    fn add_errors_read_as_they_did_when_they_were_strings() {
        let cases = [
            (
                AddError::Broken("x.toml: line 1: bad".into()),
                "x.toml: line 1: bad; fix or remove it first (nothing was added)",
            ),
            (
                AddError::WouldBreak(Some("bad".into())),
                "the file would not load with the rule added (bad); nothing was added",
            ),
            (
                AddError::WouldBreak(None),
                "the file would not hold the rule as written; nothing was added",
            ),
            (
                AddError::Busy {
                    dir: "/h/gate".into(),
                    waited: LOCK_WITHIN,
                },
                "another process has held the lock on /h/gate for 5 s; nothing was added",
            ),
            (
                AddError::Write {
                    path: "/h/gate/always.toml".into(),
                    error: io::Error::from_raw_os_error(libc::ENOSPC),
                },
                "cannot write /h/gate/always.toml: No space left on device (os error 28); \
                 nothing was added",
            ),
        ];
        for (error, said) in cases {
            assert_eq!(error.to_string(), said);
        }
    }
}
