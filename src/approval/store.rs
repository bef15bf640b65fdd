//! Remembered approvals when no broker keeps them: one small JSON file per session in
//! the private directory (see [`super::paths`]). Updated under an exclusive lock and
//! replaced atomically, so concurrent gates of one session never lose an approval or
//! read half a file. A file that is not ours, not private, or not readable as expected
//! counts as empty: a doubt costs a question, never an approval.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};
use serde_json::{Value, json};

use super::paths;
use crate::policy::Remembered;

/// The largest session file read; far more than any real session remembers.
const MAX_FILE: u64 = 4 * 1024 * 1024;

/// The remembered approvals of one session.
#[derive(Debug)]
pub struct SessionStore {
    session_id: String,
    file: PathBuf,
}

/// What a session file holds.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Entries {
    pub commands: Vec<String>,
    pub rules: Vec<String>,
}

impl Entries {
    /// As the decision function reads them. An entry that is no longer a valid rule is
    /// skipped.
    pub fn remembered(&self) -> Remembered {
        let mut r = Remembered::new();
        for c in &self.commands {
            r.remember_command(c);
        }
        for rule in &self.rules {
            let _ = r.remember_prefix(rule);
        }
        r
    }
}

impl SessionStore {
    /// The store for `session_id` in `dir` (see [`paths::sessions_dir`]), which is
    /// created private, with its parent, if it is missing. Err says why remembering is
    /// not possible here.
    pub fn open(dir: &Path, session_id: &str) -> Result<SessionStore, String> {
        paths::ensure_private_tree(dir)?;
        let file = dir.join(format!(
            "session-{:016x}.json",
            fnv1a(session_id.as_bytes())
        ));
        Ok(SessionStore {
            session_id: session_id.to_owned(),
            file,
        })
    }

    pub fn path(&self) -> &Path {
        &self.file
    }

    /// What the session remembers (empty when nothing, or on any doubt).
    pub fn load(&self) -> Entries {
        match self.read() {
            Ok(entries) => entries,
            Err(why) => {
                tracing::warn!(file = %self.file.display(), %why, "remembered approvals ignored");
                Entries::default()
            }
        }
    }

    fn read(&self) -> Result<Entries, String> {
        let mut file = match File::open(&self.file) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Entries::default()),
            Err(e) => return Err(e.to_string()),
        };
        paths::check_private(&self.file, false)?;
        let mut text = String::new();
        (&mut file)
            .take(MAX_FILE)
            .read_to_string(&mut text)
            .map_err(|e| e.to_string())?;
        let value: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        if value.get("version") != Some(&json!(1))
            || value.get("session_id").and_then(Value::as_str) != Some(&self.session_id)
        {
            return Err("the file belongs to another session or version".into());
        }
        let list = |key: &str| -> Vec<String> {
            value
                .get(key)
                .and_then(Value::as_array)
                .map(|items| {
                    items
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default()
        };
        Ok(Entries {
            commands: list("commands"),
            rules: list("rules"),
        })
    }

    /// Remember a command (trimmed) or a rule for the rest of the session.
    pub fn add(&self, command: Option<&str>, rule: Option<&str>) -> Result<(), String> {
        let lock_path = self.file.with_extension("lock");
        let lock_file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&lock_path)
            .map_err(|e| format!("cannot lock {}: {e}", lock_path.display()))?;
        let _lock = Flock::lock(lock_file, FlockArg::LockExclusive)
            .map_err(|(_, e)| format!("cannot lock {}: {e}", lock_path.display()))?;
        let mut entries = self.read().unwrap_or_default();
        if let Some(c) = command {
            let c = crate::policy::trim_blanks(c).to_owned();
            if !entries.commands.contains(&c) {
                entries.commands.push(c);
            }
        }
        if let Some(r) = rule {
            let r = crate::policy::trim_blanks(r).to_owned();
            if !entries.rules.contains(&r) {
                entries.rules.push(r);
            }
        }
        let body = json!({
            "version": 1,
            "session_id": self.session_id,
            "commands": entries.commands,
            "rules": entries.rules,
        });
        let mut bytes = serde_json::to_vec_pretty(&body).expect("JSON encodes");
        bytes.push(b'\n');
        let tmp = self
            .file
            .with_extension(format!("tmp.{}", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        let write = || -> std::io::Result<()> {
            let mut f = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .open(&tmp)?;
            f.write_all(&bytes)?;
            f.sync_all()?;
            std::fs::rename(&tmp, &self.file)
        };
        write().map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            format!("cannot save {}: {e}", self.file.display())
        })
    }
}

/// A stable 64-bit hash for file names (the session id itself is checked inside).
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::CommandText;

    #[test]
    fn remembered_commands_and_rules_survive_a_reload() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("gate/sessions");
        let s = SessionStore::open(&dir, "s1").unwrap();
        assert_eq!(s.load(), Entries::default());
        s.add(Some("  make test "), None).unwrap();
        s.add(None, Some("npm test")).unwrap();
        s.add(Some("make test"), None).unwrap();
        let e = SessionStore::open(&dir, "s1").unwrap().load();
        assert_eq!(e.commands, vec!["make test"]);
        assert_eq!(e.rules, vec!["npm test"]);
        let r = e.remembered();
        assert!(r.allows(&CommandText::new("make test")).is_some());
        assert!(r.allows(&CommandText::new("npm test --watch")).is_some());
        assert!(r.allows(&CommandText::new("make install")).is_none());
        // Another session sees nothing.
        assert_eq!(
            SessionStore::open(&dir, "s2").unwrap().load(),
            Entries::default()
        );
    }

    #[test]
    fn a_file_of_another_session_or_garbage_counts_as_empty() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("gate/sessions");
        let s = SessionStore::open(&dir, "s1").unwrap();
        s.add(Some("ls"), None).unwrap();
        let text = std::fs::read_to_string(s.path()).unwrap();
        std::fs::write(s.path(), text.replace("\"s1\"", "\"s9\"")).unwrap();
        assert_eq!(s.load(), Entries::default());
        std::fs::write(s.path(), "{not json").unwrap();
        assert_eq!(s.load(), Entries::default());
    }

    #[test]
    fn concurrent_adds_lose_nothing() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("gate/sessions");
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let dir = dir.clone();
                std::thread::spawn(move || {
                    let s = SessionStore::open(&dir, "s").unwrap();
                    for j in 0..10 {
                        // Each thread's tmp name is per process, so serialise by the
                        // lock as separate processes would: the lock covers the write.
                        s.add(Some(&format!("cmd {i} {j}")), None).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let e = SessionStore::open(&dir, "s").unwrap().load();
        assert_eq!(e.commands.len(), 80);
    }
}
