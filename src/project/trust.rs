//! Trust records: the project files this user trusts, each by its absolute path and the
//! SHA-256 of its bytes, one small file per project file in
//! `$XDG_STATE_HOME/gate/trusted/` (or `~/.local/state/gate/trusted/`), outside every
//! repository. A record's name is the SHA-256 of the path, so a run looks its file's up
//! with one `open`, however many projects are trusted.
//!
//! A record is used only when it is a regular file (not a link) of this user's that no
//! other user may write, and it names the same path; anything else counts as no trust,
//! with the reason. Records are written whole to a temporary file and renamed into
//! place, so a reader sees the old record or the new one, never half of one.

#![forbid(unsafe_code)]

use std::ffi::OsStr;
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use toml::de::DeTable;

use crate::audit::sha256_hex;
use crate::xdg::Var;

/// The most a record may hold; a real one is a few hundred bytes.
const MAX_RECORD_BYTES: u64 = 64 * 1024;

/// Whether this user trusts a project file's bytes at its path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trust {
    /// `gate trust` recorded these bytes at this path (when, in RFC 3339).
    Trusted { at: String },
    /// No record for this path.
    NotTrusted,
    /// A record for this path, of other bytes: the file changed since it was trusted.
    Changed { at: String },
    /// A record that cannot be used, and why.
    BadRecord { record: PathBuf, why: String },
    /// Neither XDG_STATE_HOME nor HOME is set, so there is no place for records.
    NoStore,
}

impl Trust {
    pub fn is_trusted(&self) -> bool {
        matches!(self, Trust::Trusted { .. })
    }

    /// Why the file is held to tightening, as words after "the project file"; `None`
    /// when it is trusted.
    pub fn why(&self) -> Option<String> {
        match self {
            Trust::Trusted { .. } => None,
            Trust::NotTrusted => Some("is not trusted".to_owned()),
            Trust::Changed { at } => Some(format!("changed since it was trusted (on {at})")),
            Trust::BadRecord { record, why } => Some(format!(
                "is not trusted (its trust record {} cannot be used: {why})",
                record.display()
            )),
            Trust::NoStore => Some(
                "is not trusted (no trust record can be found: neither XDG_STATE_HOME nor \
                 HOME is set)"
                    .to_owned(),
            ),
        }
    }

    /// One word for JSON: trusted, untrusted, changed, bad-record, no-store.
    pub fn key(&self) -> &'static str {
        match self {
            Trust::Trusted { .. } => "trusted",
            Trust::NotTrusted => "untrusted",
            Trust::Changed { .. } => "changed",
            Trust::BadRecord { .. } => "bad-record",
            Trust::NoStore => "no-store",
        }
    }

    /// How it stands, for `gate rules` and `gate doctor`.
    pub fn describe(&self) -> String {
        match self {
            Trust::Trusted { at } => format!("trusted (since {at}): it applies in full"),
            other => format!(
                "{}: only what tightens applies; anything it loosens is refused",
                other
                    .why()
                    .unwrap_or_default()
                    .trim_start_matches("is ")
                    .to_owned()
            ),
        }
    }
}

/// One trust record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub path: PathBuf,
    pub sha256: String,
    pub trusted_at: String,
}

/// The directory of trust records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Store {
    dir: PathBuf,
}

impl Store {
    /// The user's store: `$XDG_STATE_HOME/gate/trusted`, or `~/.local/state/gate/trusted`.
    pub fn of(var: Var<'_>) -> Option<Store> {
        crate::xdg::state_home(var).map(|state| Store {
            dir: state.join("gate/trusted"),
        })
    }

    /// A store in `dir` (for tests).
    #[cfg(test)]
    pub fn at(dir: impl Into<PathBuf>) -> Store {
        Store { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the record for the project file at `path` is (or would be).
    pub fn record_path(&self, path: &Path) -> PathBuf {
        self.dir.join(sha256_hex(path.as_os_str().as_bytes()))
    }

    /// Whether this user trusts `sha256` as the content of the file at `path`.
    pub fn lookup(&self, path: &Path, sha256: &str) -> Trust {
        let at = self.record_path(path);
        let bad = |why: String| Trust::BadRecord {
            record: at.clone(),
            why,
        };
        match read_record(&at) {
            Ok(None) => Trust::NotTrusted,
            Err(why) => bad(why),
            Ok(Some(record)) if record.path != path => {
                bad(format!("it names {}, not this file", record.path.display()))
            }
            Ok(Some(record)) if record.sha256 == sha256 => Trust::Trusted {
                at: record.trusted_at,
            },
            Ok(Some(record)) => Trust::Changed {
                at: record.trusted_at,
            },
        }
    }

    /// Record that this user trusts `sha256` as the content of the file at `path`
    /// (absolute, its directory canonical), replacing any earlier record for that path.
    pub fn record(&self, path: &Path, sha256: &str, now: SystemTime) -> io::Result<PathBuf> {
        let text = path.to_str().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "the path is not valid UTF-8, so it cannot be recorded",
            )
        })?;
        let record = format!(
            "# A project policy this user trusts, byte for byte; written by `gate trust`.\n\
             # Any change to the file makes it untrusted again. `gate trust --revoke PATH`\n\
             # removes this record.\n\
             path = {}\n\
             sha256 = \"{sha256}\"\n\
             trusted_at = \"{}\"\n",
            crate::config::toml_string(text),
            crate::audit::rfc3339(now)
        );
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)?;
        let target = self.record_path(path);
        crate::replace::replace(&target, record.as_bytes(), 0o600)?;
        Ok(target)
    }

    /// Remove the record for `path`: `Ok(false)` when there was none.
    pub fn revoke(&self, path: &Path) -> io::Result<bool> {
        match std::fs::remove_file(self.record_path(path)) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Every record, in the order of the paths they name; a record that cannot be used
    /// is listed by its own path with the reason.
    pub fn list(&self) -> io::Result<Vec<Result<Record, (PathBuf, String)>>> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut records = Vec::new();
        for entry in entries {
            let entry = entry?;
            let name = entry.file_name();
            if !is_record_name(&name) {
                continue;
            }
            let at = entry.path();
            records.push(match read_record(&at) {
                Ok(Some(record)) => Ok(record),
                Ok(None) => continue,
                Err(why) => Err((at, why)),
            });
        }
        records.sort_by(|a, b| {
            let key = |r: &Result<Record, (PathBuf, String)>| match r {
                Ok(record) => record.path.clone(),
                Err((at, _)) => at.clone(),
            };
            key(a).cmp(&key(b))
        });
        Ok(records)
    }
}

fn is_record_name(name: &OsStr) -> bool {
    let name = name.as_bytes();
    name.len() == 64
        && name
            .iter()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

/// Read the record at `at`: `Ok(None)` when there is none; `Err` says why one cannot be
/// used.
fn read_record(at: &Path) -> Result<Option<Record>, String> {
    // Not through a link, and never waiting on a FIFO.
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(at)
    {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err("it is a symbolic link".to_owned());
        }
        Err(e) => return Err(format!("cannot read it: {e}")),
    };
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot read it: {e}"))?;
    if !meta.file_type().is_file() {
        return Err("it is not a regular file".to_owned());
    }
    let uid = nix::unistd::geteuid().as_raw();
    if meta.uid() != uid {
        return Err(format!(
            "it belongs to uid {}, not to this user (uid {uid})",
            meta.uid()
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Err("other users may write it".to_owned());
    }
    let mut text = String::new();
    file.take(MAX_RECORD_BYTES)
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read it: {e}"))?;
    parse_record(&text).map(Some)
}

fn parse_record(text: &str) -> Result<Record, String> {
    let table =
        DeTable::parse(text).map_err(|e| format!("it is not a trust record: {}", e.message()))?;
    let table = table.get_ref();
    let field = |name: &str| -> Result<String, String> {
        table
            .get(name)
            .and_then(|v| v.get_ref().as_str())
            .map(str::to_owned)
            .ok_or_else(|| format!("it has no `{name}`"))
    };
    let path = PathBuf::from(field("path")?);
    let sha256 = field("sha256")?;
    if !path.is_absolute() {
        return Err("its `path` is not absolute".to_owned());
    }
    if !is_record_name(OsStr::new(&sha256)) {
        return Err("its `sha256` is not a SHA-256 in lower-case hex".to_owned());
    }
    Ok(Record {
        path,
        sha256,
        trusted_at: field("trusted_at")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use std::time::{Duration, UNIX_EPOCH};

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(dir.path().join("gate/trusted"));
        (dir, store)
    }

    const SHA: &str = "0000000000000000000000000000000000000000000000000000000000000001";
    const OTHER: &str = "0000000000000000000000000000000000000000000000000000000000000002";

    #[test]
    fn a_recorded_hash_is_trusted_and_any_other_is_a_change() {
        let (_dir, store) = store();
        let file = Path::new("/src/proj/.gate.toml");
        assert_eq!(store.lookup(file, SHA), Trust::NotTrusted);
        let at = store
            .record(file, SHA, UNIX_EPOCH + Duration::from_secs(86_400))
            .unwrap();
        assert_eq!(at, store.record_path(file));
        let mode = std::fs::metadata(&at).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(
            store.lookup(file, SHA),
            Trust::Trusted {
                at: "1970-01-02T00:00:00.000Z".into()
            }
        );
        assert!(matches!(store.lookup(file, OTHER), Trust::Changed { .. }));
        assert_eq!(
            store.lookup(Path::new("/src/other/.gate.toml"), SHA),
            Trust::NotTrusted
        );
        assert!(store.revoke(file).unwrap());
        assert!(!store.revoke(file).unwrap());
        assert_eq!(store.lookup(file, SHA), Trust::NotTrusted);
    }

    #[test]
    fn paths_with_quotes_and_newlines_round_trip() {
        let (_dir, store) = store();
        let file = Path::new("/src/a \"b\\\" \n c/.gate.toml");
        store.record(file, SHA, SystemTime::now()).unwrap();
        assert!(store.lookup(file, SHA).is_trusted());
        let listed = store.list().unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].as_ref().unwrap().path, file);
    }

    #[test]
    fn a_record_naming_another_path_or_open_to_others_is_not_trust() {
        let (_dir, store) = store();
        let file = Path::new("/src/proj/.gate.toml");
        let other = Path::new("/src/evil/.gate.toml");
        store.record(other, SHA, SystemTime::now()).unwrap();
        // The record of another path, copied to this path's name.
        std::fs::copy(store.record_path(other), store.record_path(file)).unwrap();
        let trust = store.lookup(file, SHA);
        assert!(
            matches!(&trust, Trust::BadRecord { why, .. } if why.contains("names /src/evil")),
            "{trust:?}"
        );
        let at = store.record_path(other);
        std::fs::set_permissions(&at, std::fs::Permissions::from_mode(0o622)).unwrap();
        let trust = store.lookup(other, SHA);
        assert!(
            matches!(&trust, Trust::BadRecord { why, .. } if why.contains("other users may write")),
            "{trust:?}"
        );
        std::fs::remove_file(&at).unwrap();
        std::os::unix::fs::symlink(store.record_path(file), &at).unwrap();
        let trust = store.lookup(other, SHA);
        assert!(
            matches!(&trust, Trust::BadRecord { why, .. } if why.contains("symbolic link")),
            "{trust:?}"
        );
    }

    #[test]
    fn a_malformed_record_is_not_trust() {
        let (_dir, store) = store();
        let file = Path::new("/p/.gate.toml");
        std::fs::create_dir_all(store.dir()).unwrap();
        for text in [
            "",
            "path = 1",
            "path = \"/p/.gate.toml\"\nsha256 = \"abc\"\ntrusted_at = \"x\"\n",
            "path = \"relative\"\n",
        ] {
            let at = store.record_path(file);
            std::fs::write(&at, text).unwrap();
            std::fs::set_permissions(&at, std::fs::Permissions::from_mode(0o600)).unwrap();
            assert!(
                matches!(store.lookup(file, SHA), Trust::BadRecord { .. }),
                "{text:?}"
            );
        }
    }

    #[test]
    fn no_temporary_file_is_left_behind() {
        let (_dir, store) = store();
        store
            .record(Path::new("/p/.gate.toml"), SHA, SystemTime::now())
            .unwrap();
        let names: Vec<_> = std::fs::read_dir(store.dir())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1);
        assert!(is_record_name(&names[0]));
    }
}
