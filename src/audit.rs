//! The audit log: one JSON object per line for every decision, allow or deny.
//!
//! Each record is built in memory and appended with a single `write` on a file opened
//! with `O_APPEND`, so records from concurrent gates never interleave. Only a regular
//! file is written, reached without following a link at its name or its directory's
//! and opened without waiting, so nothing put at the path can hang gate or send the
//! records elsewhere. A log that cannot be written is reported by the caller: a
//! warning, or a refusal when the configuration says the log is required.
//!
//! The same record can also go to the system log ([`journal`]): the record is built
//! once, as a JSON object ([`object`], pure), and each destination encodes it its way.

pub mod journal;

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};

use nix::errno::Errno;
use nix::fcntl::{AtFlags, FcntlArg, OFlag, fcntl, openat};
use nix::sys::stat::{Mode, fstatat};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::config::AuditLog;

/// One decision, as it is recorded.
#[derive(Debug, Clone)]
pub struct Record<'a> {
    pub call_id: &'a str,
    pub session_id: &'a str,
    pub level: &'a str,
    /// What kind of request: `command`, `script`, `program` or `session`.
    pub kind: &'a str,
    /// The command text judged; `None` for a shell session.
    pub command: Option<&'a str>,
    /// `allow` or `deny`.
    pub decision: &'a str,
    /// rule / remembered / socket / tty / level / deny-rule / timeout / no-approver / error
    pub decided_by: &'a str,
    pub rule: Option<&'a str>,
    pub rule_origin: Option<String>,
    pub message: Option<&'a str>,
    /// What the sandbox enforced, for runs at `safe`.
    pub sandbox: Option<Value>,
    /// The agent's wrapper `command` was found in (its template's name), if any.
    pub wrapper: Option<&'a str>,
    /// The agent whose wrapper `command` looks like although gate judged it whole (a
    /// version gate does not know, or files that did not check out), if any.
    pub looks_like: Option<&'a str>,
    /// For a `script` request: the SHA-256 of the script's content when gate judged it
    /// ([`script_sha256`]), or `Some(None)` when it could not be read. `None` for every
    /// other kind.
    pub script_sha256: Option<Option<&'a str>>,
}

type Var<'a> = &'a dyn Fn(&str) -> Option<std::ffi::OsString>;

/// The most of a command's text a record keeps. A longer one (an agent's wrapper that
/// gate did not recognise, a start-up script: Codex's ran to 40 KB) is cut there, marked
/// with `…`, and its full length recorded as `command_bytes`: the record stays one
/// small line, and a recognised wrapper is recorded as its inner command anyway.
pub const MAX_COMMAND_BYTES: usize = 2048;

/// The largest script whose content gate hashes for the record: read once, in pieces,
/// so the cost is bounded by this (a few milliseconds with the CPU's SHA instructions,
/// tens without). A script is a few kilobytes; a larger file gets no hash.
pub const MAX_SCRIPT_BYTES: u64 = 16 << 20;

/// gate's own state directory, where the default log goes: `$XDG_STATE_HOME/gate`, or
/// `~/.local/state/gate` when `XDG_STATE_HOME` is unset or not absolute. With it, the
/// directory it must be made in, which gate never makes: `XDG_STATE_HOME` or `HOME`.
fn state_dir(var: Var<'_>) -> Option<(PathBuf, PathBuf)> {
    let state = crate::xdg::state_home(var)?;
    let base = match crate::xdg::home(var) {
        Some(home) if state == home.join(".local/state") => home,
        _ => state.clone(),
    };
    Some((state.join("gate"), base))
}

/// The path records go to, or `None` when the log is off.
pub fn resolve_path(log: &AuditLog, var: Var<'_>) -> Result<Option<PathBuf>, String> {
    match log {
        AuditLog::Off => Ok(None),
        AuditLog::Path(p) => Ok(Some(p.clone())),
        AuditLog::Default => match state_dir(var) {
            Some((dir, _)) => Ok(Some(dir.join("audit.jsonl"))),
            None => Err(
                "neither XDG_STATE_HOME nor HOME is set, so the default audit log has no place"
                    .into(),
            ),
        },
    }
}

/// The process a record is about: gate's own, or (for the broker's record of a
/// requester that went away) another's.
#[derive(Debug, Clone)]
pub struct Context {
    pub pid: u64,
    pub uid: u32,
    pub cwd: Option<String>,
    /// The machine's host name, so that records collected from many machines say where
    /// each was written.
    pub host: Option<String>,
}

impl Context {
    /// This process's.
    pub fn own() -> Context {
        let cwd = std::env::current_dir()
            .map(|p| p.to_string_lossy().into_owned())
            .ok();
        Context::of(u64::from(std::process::id()), cwd)
    }

    /// Another process's, `pid` in `cwd`, on this machine and as this user.
    pub fn of(pid: u64, cwd: Option<String>) -> Context {
        Context {
            pid,
            uid: nix::unistd::getuid().as_raw(),
            cwd,
            host: host_name(),
        }
    }
}

/// The host name (`gethostname`), or `None` when it cannot be read.
pub fn host_name() -> Option<String> {
    nix::unistd::gethostname()
        .ok()
        .map(|h| h.to_string_lossy().into_owned())
}

/// The record as one line of JSON, newline included.
pub fn encode(record: &Record<'_>, now: SystemTime) -> Vec<u8> {
    line(&object(record, now, &Context::own()))
}

/// The record of a decision made in another process, `pid` in `cwd` (the broker's
/// record of a requester that went away without one of its own).
pub fn encode_for(record: &Record<'_>, now: SystemTime, pid: u64, cwd: Option<&str>) -> Vec<u8> {
    line(&object(
        record,
        now,
        &Context::of(pid, cwd.map(str::to_owned)),
    ))
}

/// A record's JSON object as one line, newline included.
pub fn line(object: &Map<String, Value>) -> Vec<u8> {
    let mut line = serde_json::to_vec(object).expect("a JSON map always encodes");
    line.push(b'\n');
    line
}

/// The record as a JSON object: every field docs/audit.md lists, keys in alphabetical
/// order. Pure: what it says about the process comes from `context`.
pub fn object(record: &Record<'_>, now: SystemTime, context: &Context) -> Map<String, Value> {
    let (command, command_bytes) = match record.command {
        Some(command) if command.len() > MAX_COMMAND_BYTES => {
            let mut end = MAX_COMMAND_BYTES;
            while !command.is_char_boundary(end) {
                end -= 1;
            }
            (
                json!(format!("{}…", &command[..end])),
                Some(json!(command.len())),
            )
        }
        command => (json!(command), None),
    };
    let always = [
        ("time", json!(rfc3339(now))),
        ("call_id", json!(record.call_id)),
        ("session_id", json!(record.session_id)),
        ("pid", json!(context.pid)),
        ("uid", json!(context.uid)),
        ("host", json!(context.host)),
        ("cwd", json!(context.cwd)),
        ("level", json!(record.level)),
        ("kind", json!(record.kind)),
        // The hash of the whole text, so that a record whose text is cut still names
        // exactly one command.
        (
            "command_sha256",
            json!(record.command.map(|c| sha256_hex(c.as_bytes()))),
        ),
        ("command", command),
        ("decision", json!(record.decision)),
        ("decided_by", json!(record.decided_by)),
        ("rule", json!(record.rule)),
        ("rule_origin", json!(record.rule_origin)),
        ("message", json!(record.message)),
        ("sandbox", record.sandbox.clone().unwrap_or(Value::Null)),
    ];
    // Present only when there is something to say.
    let sometimes = [
        ("script_sha256", record.script_sha256.map(|s| json!(s))),
        ("command_bytes", command_bytes),
        ("wrapper", record.wrapper.map(|t| json!(t))),
        ("looks_like_wrapper", record.looks_like.map(|a| json!(a))),
    ];
    let sometimes = sometimes
        .into_iter()
        .filter_map(|(key, value)| Some((key, value?)));
    always
        .into_iter()
        .chain(sometimes)
        .map(|(key, value)| (key.to_owned(), value))
        .collect()
}

/// SHA-256 of `bytes`, in lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(digest: &[u8]) -> String {
    use std::fmt::Write as _;
    digest.iter().fold(String::with_capacity(64), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

/// SHA-256 of the content of the script at `path` (relative to the working directory,
/// where the shell will look for it first), or `None` when it is not a regular file
/// (a FIFO, a device), cannot be read, or is larger than [`MAX_SCRIPT_BYTES`]. A link
/// is followed, as the shell follows it. What is there is looked at before it is
/// opened, and opened without waiting, so nothing at the path can make gate hang (a
/// FIFO would wait for a writer) or act on being opened (a device); the file is read
/// once, in pieces, and hashed as it is read.
pub fn script_sha256(path: &Path) -> Option<String> {
    use std::io::Read;
    let regular_and_small =
        |meta: &std::fs::Metadata| meta.is_file() && meta.len() <= MAX_SCRIPT_BYTES;
    if !regular_and_small(&std::fs::metadata(path).ok()?) {
        return None;
    }
    let mut file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .ok()?;
    if !regular_and_small(&file.metadata().ok()?) {
        return None;
    }
    let mut hasher = Sha256::new();
    let mut buf = [0u8; 16 * 1024];
    let mut total: u64 = 0;
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return None,
        };
        total += n as u64;
        // It grew while being read.
        if total > MAX_SCRIPT_BYTES {
            return None;
        }
        hasher.update(&buf[..n]);
    }
    Some(hex(&hasher.finalize()))
}

/// Open the log for appending, creating the file (0600).
///
/// Only a regular file is written: the last component of the path is never followed
/// as a link, and anything else found there (a FIFO, a device, a socket, a directory)
/// is an error rather than something to wait on or write to; see [`open_regular`]. The
/// directories above it are taken as they are, links included.
///
/// Missing directories (0700) are made only for a log in gate's own state directory
/// (see [`state_dir`]; the default log, or the same place named explicitly), and only
/// below an existing `XDG_STATE_HOME` or `HOME`. A log anywhere else must be put in a
/// directory that exists: a mistyped path must not leave directories behind, at the
/// root of the file system or anywhere.
pub fn open(path: &Path, var: Var<'_>) -> io::Result<File> {
    let open = || open_regular(path);
    match open() {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) else {
                return Err(e);
            };
            match state_dir(var) {
                Some((own, base)) if own == dir => {
                    if !base.is_dir() {
                        return Err(io::Error::new(
                            io::ErrorKind::NotFound,
                            format!(
                                "{} does not exist, and gate makes its state directory {} \
                                 only inside an existing one",
                                base.display(),
                                dir.display()
                            ),
                        ));
                    }
                    DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
                    open()
                }
                _ if dir.is_dir() => Err(e),
                _ => Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!(
                        "its directory {} does not exist (gate makes no directory but its \
                         own state directory); create it or choose another path",
                        dir.display()
                    ),
                )),
            }
        }
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => match restore_mode(path) {
            Ok(Some(file)) => Ok(file),
            Ok(None) => Err(e),
            Err(why) => Err(io::Error::new(e.kind(), format!("{e}; {why}"))),
        },
        other => other,
    }
}

/// Open `path` for appending if it is a regular file, or create it (0600) if nothing is
/// there.
///
/// A FIFO at the path would make a plain `open` wait for a reader forever, in every
/// later gate of the user; a link would send the records wherever it points; a device
/// may act on being opened. So the log's directory is opened first without following a
/// link at its own name ([`open_dir`]); in it, what is at the log's name is looked at
/// without following or opening it, and opened only when it is a regular file (or
/// absent). The open itself follows no link (`O_NOFOLLOW`) and does not wait
/// (`O_NONBLOCK`), and what it opened is checked again, for a name swapped in between.
/// The descriptor is close-on-exec, so the command never inherits it.
fn open_regular(path: &Path) -> io::Result<File> {
    let (dir, name) = open_dir(path)?;
    match fstatat(&dir, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(stat) => only_regular(stat.st_mode)?,
        Err(Errno::ENOENT) => {}
        Err(e) => return Err(e.into()),
    }
    let flags = OFlag::O_WRONLY
        | OFlag::O_APPEND
        | OFlag::O_CREAT
        | OFlag::O_NOFOLLOW
        | OFlag::O_NONBLOCK
        | OFlag::O_NOCTTY
        | OFlag::O_CLOEXEC;
    let fd = openat(&dir, name, flags, Mode::from_bits_truncate(0o600)).map_err(|e| match e {
        // A link put there since the look above.
        Errno::ELOOP => not_regular("a symbolic link"),
        // A FIFO put there since, with no reader.
        Errno::ENXIO => not_regular("a FIFO (named pipe)"),
        e => e.into(),
    })?;
    let file = File::from(fd);
    only_regular(file.metadata()?.mode())?;
    // Writes block again, as on any regular file (where O_NONBLOCK changes nothing
    // today, but a record must never be cut short by it).
    fcntl(&file, FcntlArg::F_SETFL(OFlag::O_APPEND))?;
    Ok(file)
}

/// The directory of the log at `path`, opened (`O_PATH`) without following a link at
/// its own name, and the log's name in it. The directories above it are followed: a
/// home or state directory reached through a link is common. The log's own directory
/// is not, so that a command that may write the directory above it (at `safe`, when
/// that is in `/tmp`) cannot swap it for a link that sends the records elsewhere.
fn open_dir(path: &Path) -> io::Result<(OwnedFd, &std::ffi::OsStr)> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"))?;
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let fd = nix::fcntl::open(dir, flags, Mode::empty()).map_err(|e| {
        // O_PATH with O_NOFOLLOW reaches the link itself, which is no directory.
        let link = e == Errno::ENOTDIR
            && std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink());
        if link {
            io::Error::other(format!(
                "its directory {} is a symbolic link, and gate follows none at the log's \
                 own directory; name the directory it points to instead",
                dir.display()
            ))
        } else {
            e.into()
        }
    })?;
    Ok((fd, name))
}

/// `Ok` for the mode of a regular file; otherwise the error that says what is there.
fn only_regular(mode: u32) -> io::Result<()> {
    let what = match mode & libc::S_IFMT {
        libc::S_IFREG => return Ok(()),
        libc::S_IFLNK => "a symbolic link",
        libc::S_IFDIR => "a directory",
        libc::S_IFIFO => "a FIFO (named pipe)",
        libc::S_IFCHR => "a character device",
        libc::S_IFBLK => "a block device",
        libc::S_IFSOCK => "a socket",
        _ => "not a regular file",
    };
    Err(not_regular(what))
}

fn not_regular(what: &str) -> io::Error {
    io::Error::other(format!(
        "it is {what}; gate writes records only to a regular file, and follows no link \
         there; remove it or choose another path (`off` for no log)"
    ))
}

/// The log is this user's own file but its owner may not write it: a command took the
/// write bit away (`chmod 000`, which Landlock does not mediate), so that later runs
/// would go unrecorded. Put the mode back to 0600, say so, and open it again. The file
/// is pinned first (`O_PATH | O_NOFOLLOW`, then checked on the descriptor), so a link
/// swapped in meanwhile is never followed. `Ok(None)` when it is not such a file.
fn restore_mode(path: &Path) -> Result<Option<File>, String> {
    let (dir, name) = open_dir(path).map_err(|e| format!("cannot look at it: {e}"))?;
    let pinned = openat(
        &dir,
        name,
        OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map(File::from)
    .map_err(|e| format!("cannot look at it: {e}"))?;
    let meta = pinned
        .metadata()
        .map_err(|e| format!("cannot look at it: {e}"))?;
    let ours = meta.uid() == nix::unistd::geteuid().as_raw();
    if !meta.file_type().is_file() || !ours || meta.mode() & 0o200 != 0 {
        return Ok(None);
    }
    // chmod through the descriptor's /proc name reaches the pinned file itself.
    let by_fd = PathBuf::from(format!("/proc/self/fd/{}", pinned.as_raw_fd()));
    std::fs::set_permissions(&by_fd, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| format!("cannot restore its mode: {e}"))?;
    crate::output::say(&format!(
        "gate: warning: the audit log {} had mode {:04o}, so nothing could be recorded in \
         it (a command may have changed it); gate set it back to 0600",
        path.display(),
        meta.mode() & 0o7777
    ));
    OpenOptions::new()
        .append(true)
        .open(&by_fd)
        .map(Some)
        .map_err(|e| format!("cannot open it after restoring its mode: {e}"))
}

/// Append one record to `path` (open, one write, close).
pub fn append(path: &Path, var: Var<'_>, line: &[u8]) -> io::Result<()> {
    write(&mut open(path, var)?, line)
}

/// Append one record with a single `write`, so that records from concurrent gates never
/// interleave.
pub fn write(file: &mut File, line: &[u8]) -> io::Result<()> {
    let written = file.write(line)?;
    if written != line.len() {
        return Err(io::Error::new(
            io::ErrorKind::WriteZero,
            format!("only {written} of {} bytes were written", line.len()),
        ));
    }
    Ok(())
}

/// UTC time as RFC 3339 with milliseconds: `2026-11-29T21:29:22.123Z`.
pub fn rfc3339(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(i64::try_from(days).unwrap_or(0));
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        since.subsec_millis()
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian (year, month, day), after Howard
/// Hinnant's `civil_from_days`.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = u32::try_from(doy - (153 * mp + 2) / 5 + 1).unwrap_or(1);
    let month = u32::try_from(if mp < 10 { mp + 3 } else { mp - 9 }).unwrap_or(1);
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A refusal of `echo a\nb` by a deny rule from `--deny`.
    fn example() -> Record<'static> {
        Record {
            call_id: "c1",
            session_id: "s1",
            level: "ask",
            kind: "command",
            command: Some("echo a\nb"),
            decision: "deny",
            decided_by: "deny-rule",
            rule: Some("echo"),
            rule_origin: Some("--deny".into()),
            message: None,
            sandbox: None,
            wrapper: None,
            looks_like: None,
            script_sha256: None,
        }
    }

    #[test]
    fn a_long_command_is_cut_and_its_length_kept() {
        let long = format!("{}é", "x".repeat(MAX_COMMAND_BYTES - 1));
        for (command, cut) in [(long.as_str(), true), ("ls", false)] {
            let record = Record {
                call_id: "c",
                session_id: "s",
                command: Some(command),
                decided_by: "rule",
                rule: None,
                rule_origin: None,
                ..example()
            };
            let line = encode(&record, UNIX_EPOCH);
            let v: Value = serde_json::from_slice(&line).unwrap();
            assert_eq!(v["command_sha256"], sha256_hex(command.as_bytes()));
            if cut {
                assert!(line.len() < MAX_COMMAND_BYTES + 1024);
                assert_eq!(v["command_bytes"], command.len());
                let kept = v["command"].as_str().unwrap();
                assert_eq!(kept, format!("{}…", "x".repeat(MAX_COMMAND_BYTES - 1)));
            } else {
                assert_eq!(v["command"], "ls");
                assert!(v.get("command_bytes").is_none());
            }
        }
    }

    #[test]
    fn time_is_formatted_in_utc() {
        let t = UNIX_EPOCH + Duration::from_millis(1_796_031_362_123);
        assert_eq!(rfc3339(t), "2026-11-30T09:36:02.123Z");
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(rfc3339(leap), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn the_default_path_follows_xdg_then_home() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| std::ffi::OsString::from(v))
            }
        };
        assert_eq!(
            resolve_path(
                &AuditLog::Default,
                &env(&[("XDG_STATE_HOME", "/s"), ("HOME", "/h")])
            ),
            Ok(Some(PathBuf::from("/s/gate/audit.jsonl")))
        );
        assert_eq!(
            resolve_path(
                &AuditLog::Default,
                &env(&[("XDG_STATE_HOME", "rel"), ("HOME", "/h")])
            ),
            Ok(Some(PathBuf::from("/h/.local/state/gate/audit.jsonl")))
        );
        assert!(resolve_path(&AuditLog::Default, &env(&[])).is_err());
        assert_eq!(resolve_path(&AuditLog::Off, &env(&[])), Ok(None));
    }

    #[test]
    fn a_record_is_one_line_of_json_with_every_field() {
        let record = example();
        let line = encode(&record, UNIX_EPOCH);
        assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
        assert_eq!(*line.last().unwrap(), b'\n');
        let v: Value = serde_json::from_slice(&line).unwrap();
        for key in [
            "time",
            "call_id",
            "session_id",
            "pid",
            "uid",
            "host",
            "cwd",
            "level",
            "kind",
            "command",
            "decision",
            "decided_by",
            "rule",
            "rule_origin",
            "message",
            "sandbox",
        ] {
            assert!(v.get(key).is_some(), "missing {key}");
        }
        assert_eq!(v["command"], "echo a\nb");
        assert_eq!(v["pid"], std::process::id());
    }

    fn vars(pairs: Vec<(&'static str, PathBuf)>) -> impl Fn(&str) -> Option<std::ffi::OsString> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.clone().into_os_string())
        }
    }

    #[test]
    fn append_creates_the_private_state_directory_and_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let state = vars(vec![("XDG_STATE_HOME", dir.path().join("state"))]);
        std::fs::create_dir(dir.path().join("state")).unwrap();
        let path = resolve_path(&AuditLog::Default, &state).unwrap().unwrap();
        append(&path, &state, b"{}\n").unwrap();
        append(&path, &state, b"{}\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"{}\n{}\n");
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(&dir.path().join("state/gate")), 0o700);
        // Without XDG_STATE_HOME, the chain below HOME.
        let home = vars(vec![("HOME", dir.path().to_owned())]);
        let path = resolve_path(&AuditLog::Default, &home).unwrap().unwrap();
        append(&path, &home, b"{}\n").unwrap();
        assert_eq!(mode(&dir.path().join(".local/state/gate")), 0o700);
    }

    #[test]
    fn no_directory_is_made_for_a_log_elsewhere() {
        let dir = tempfile::tempdir().unwrap();
        let env = vars(vec![("HOME", dir.path().to_owned())]);
        let elsewhere = dir.path().join("logs/a/audit.jsonl");
        let e = append(&elsewhere, &env, b"{}\n").unwrap_err().to_string();
        assert!(
            e.starts_with(&format!(
                "its directory {} does not exist",
                dir.path().join("logs/a").display()
            )),
            "{e}"
        );
        assert!(!dir.path().join("logs").exists());
        // A directory that exists takes the file.
        std::fs::create_dir_all(dir.path().join("logs/a")).unwrap();
        append(&elsewhere, &env, b"{}\n").unwrap();
    }

    #[test]
    fn only_a_regular_file_reached_without_a_link_is_opened() {
        let dir = tempfile::tempdir().unwrap();
        let env = vars(vec![("HOME", dir.path().to_owned())]);
        let at = |name: &str| dir.path().join(name);
        nix::unistd::mkfifo(&at("fifo"), nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        std::fs::write(at("file"), "").unwrap();
        std::os::unix::fs::symlink(at("file"), at("link")).unwrap();
        std::fs::create_dir(at("dir")).unwrap();
        std::os::unix::fs::symlink(dir.path(), at("linked-dir")).unwrap();
        for (path, what) in [
            (at("fifo"), "it is a FIFO"),
            (at("link"), "it is a symbolic link"),
            (at("dir"), "it is a directory"),
            (PathBuf::from("/dev/null"), "it is a character device"),
            (
                at("linked-dir/file"),
                "is a symbolic link, and gate follows none",
            ),
        ] {
            let e = append(&path, &env, b"{}\n").unwrap_err().to_string();
            assert!(e.contains(what), "{}: {e}", path.display());
        }
        assert_eq!(std::fs::read(at("file")).unwrap(), b"");
        append(&at("file"), &env, b"{}\n").unwrap();
        assert_eq!(std::fs::read(at("file")).unwrap(), b"{}\n");
    }

    #[test]
    fn sha256_gives_the_fips_180_2_examples() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            sha256_hex(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn a_script_is_hashed_only_when_it_is_a_regular_file_of_bounded_size() {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str| dir.path().join(name);
        std::fs::write(at("s.sh"), b"abc").unwrap();
        std::os::unix::fs::symlink(at("s.sh"), at("link.sh")).unwrap();
        for path in [at("s.sh"), at("link.sh")] {
            assert_eq!(script_sha256(&path).as_deref(), Some(&*sha256_hex(b"abc")));
        }
        // Streamed in pieces: the same as hashing the whole at once.
        let big: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(at("big.sh"), &big).unwrap();
        assert_eq!(script_sha256(&at("big.sh")), Some(sha256_hex(&big)));
        // Nothing to wait on or read without end: a FIFO, a device, a directory; and
        // a file over the bound (sparse: nothing is read to find out).
        nix::unistd::mkfifo(&at("fifo"), nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let huge = File::create(at("huge.sh")).unwrap();
        huge.set_len(MAX_SCRIPT_BYTES + 1).unwrap();
        for path in [
            at("fifo"),
            PathBuf::from("/dev/zero"),
            dir.path().to_owned(),
            at("huge.sh"),
            at("missing.sh"),
        ] {
            assert_eq!(script_sha256(&path), None, "{}", path.display());
        }
    }

    #[test]
    fn the_state_directory_is_made_only_inside_an_existing_base() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing-state");
        let env = vars(vec![("XDG_STATE_HOME", missing.clone())]);
        let path = resolve_path(&AuditLog::Default, &env).unwrap().unwrap();
        let e = append(&path, &env, b"{}\n").unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("{} does not exist", missing.display())),
            "{e}"
        );
        assert!(!missing.exists());
    }
}
