//! The system log: the same audit record, sent to journald's native socket (or to
//! syslog's `/dev/log`) besides the JSON Lines file.
//!
//! What goes out is built by pure functions from the record's JSON object
//! ([`native`], [`syslog`]); this module's edge is one datagram socket, connected when
//! the first record of a call is written (before a sandbox is applied, so a later
//! record of the same call still reaches it) and closed at exec. A record too large for
//! one datagram travels in a sealed memfd passed with `SCM_RIGHTS`, as journald's native
//! protocol provides. Which journal fields a collector can trust, and which it cannot,
//! is docs/audit.md's subject: the `GATE_` fields are written by gate, and by anything
//! else that sends the same bytes.

use std::io::{self, IoSlice, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, SealFlag, fcntl};
use nix::sys::memfd::{MFdFlags, memfd_create};
use nix::sys::socket::{
    AddressFamily, ControlMessage, MsgFlags, SockFlag, SockType, UnixAddr, connect, sendmsg,
    setsockopt, socket, sockopt,
};
use nix::sys::time::TimeVal;
use serde_json::{Map, Value};

use crate::config::AuditJournal;

/// journald's native protocol socket.
pub const JOURNAL_SOCKET: &str = "/run/systemd/journal/socket";
/// The traditional syslog socket (journald's own `dev-log` where journald runs).
pub const SYSLOG_SOCKET: &str = "/dev/log";
/// `SYSLOG_IDENTIFIER`, and the syslog tag.
pub const IDENTIFIER: &str = "gate";
/// `LOG_AUTHPRIV`: where sudo's records go too, a facility syslog daemons keep private
/// (`/var/log/auth.log`).
pub const FACILITY: u8 = 10;
/// How long a send may wait for a journald that does not read: then the record is not
/// written, rather than gate waiting without end.
pub const SEND_TIMEOUT: Duration = Duration::from_secs(2);
/// How long gate waits for the system log to take what it sent (see
/// [`SystemLog::settle`]): for journald, the priming datagrams before the record; for
/// syslog, the record. Past this the record still goes in; only what journald reads
/// about the sender may then describe the command instead of gate. Taking a datagram
/// takes journald tens of microseconds, but its first in a new journal file took more
/// than 20 ms here.
pub const SETTLE_MAX: Duration = Duration::from_millis(250);
/// How long a priming stays good for gate (see [`SystemLog::prime`]). journald uses
/// what it read about a pid without reading it again for 1 s (`REFRESH_USEC` in its
/// `journald-context.c`, the same from systemd 236 to today), counted from when it read
/// it, which is after gate sent the priming. A record sent within half of that leaves
/// journald the other half to get to it; a record sent later is primed again first.
pub const PRIME_FRESH: Duration = Duration::from_millis(500);
/// The priming datagram: one empty line, which journald's native protocol reads as the
/// end of an entry that has no field, so no entry is written. journald still reads the
/// sender's `/proc` files for it, as for any datagram that is not empty.
pub const PRIMING: &[u8] = b"\n";
/// The longest `MESSAGE`; the whole command is in `GATE_COMMAND`.
pub const MAX_SUMMARY_BYTES: usize = 256;

/// syslog severities.
const ERR: u8 = 3;
const NOTICE: u8 = 5;
const INFO: u8 = 6;

/// The severity of a decision: a command that ran is information, a refusal a notice, a
/// command that could not be started after it was allowed an error.
pub fn priority(decision: &str) -> u8 {
    match decision {
        "allow" => INFO,
        "deny" => NOTICE,
        _ => ERR,
    }
}

/// The journal field that carries the record's `key`: `GATE_` and the key in upper
/// case (`command_sha256` → `GATE_COMMAND_SHA256`). Every key of a record is lower-case
/// ASCII letters, digits and `_`, which is what a journal field name may hold.
pub fn field_name(key: &str) -> String {
    format!("GATE_{}", key.to_ascii_uppercase())
}

/// The one-line `MESSAGE`: `deny by deny-rule: git push --force origin main`. Control
/// characters in the command (a newline) are shown escaped, and it is cut to
/// [`MAX_SUMMARY_BYTES`] with `…`.
pub fn summary(record: &Map<String, Value>) -> String {
    let text = |key: &str| record.get(key).and_then(Value::as_str);
    let mut line = format!(
        "{} by {}: ",
        text("decision").unwrap_or("?"),
        text("decided_by").unwrap_or("?")
    );
    match text("command") {
        Some(command) => {
            for c in command.chars() {
                if c.is_control() {
                    line.extend(c.escape_default());
                } else {
                    line.push(c);
                }
            }
        }
        None => line.push_str("(a shell session)"),
    }
    if line.len() > MAX_SUMMARY_BYTES {
        let mut end = MAX_SUMMARY_BYTES;
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        line.truncate(end);
        line.push('…');
    }
    line
}

/// The record's fields as journald's native protocol takes them: `MESSAGE`, `PRIORITY`,
/// `SYSLOG_IDENTIFIER`, `SYSLOG_FACILITY`, then one `GATE_` field per key of the record
/// whose value is not null (a string as it is, a number or boolean in decimal, an
/// object or array as compact JSON).
pub fn fields(record: &Map<String, Value>) -> Vec<(String, Vec<u8>)> {
    let decision = record.get("decision").and_then(Value::as_str).unwrap_or("");
    let mut out = vec![
        ("MESSAGE".to_owned(), summary(record).into_bytes()),
        (
            "PRIORITY".to_owned(),
            priority(decision).to_string().into_bytes(),
        ),
        (
            "SYSLOG_IDENTIFIER".to_owned(),
            IDENTIFIER.as_bytes().to_vec(),
        ),
        (
            "SYSLOG_FACILITY".to_owned(),
            FACILITY.to_string().into_bytes(),
        ),
    ];
    for (key, value) in record {
        let bytes = match value {
            Value::Null => continue,
            Value::String(s) => s.clone().into_bytes(),
            Value::Bool(_) | Value::Number(_) => value.to_string().into_bytes(),
            Value::Array(_) | Value::Object(_) => {
                serde_json::to_vec(value).expect("a JSON value always encodes")
            }
        };
        out.push((field_name(key), bytes));
    }
    out
}

/// One native-protocol message: `NAME=value\n` for a value without a newline, otherwise
/// `NAME\n`, the value's length as a little-endian 64-bit number, the value and `\n`.
pub fn native(fields: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(fields.iter().map(|(k, v)| k.len() + v.len() + 10).sum());
    for (name, value) in fields {
        out.extend_from_slice(name.as_bytes());
        if value.contains(&b'\n') {
            out.push(b'\n');
            out.extend_from_slice(&(value.len() as u64).to_le_bytes());
        } else {
            out.push(b'=');
        }
        out.extend_from_slice(value);
        out.push(b'\n');
    }
    out
}

/// One syslog message (RFC 3164, as `syslog(3)` sends it to `/dev/log`, without a
/// timestamp: the receiver stamps it): `<PRI>gate[PID]: @cee:` and the JSON record. The
/// `@cee:` cookie is what rsyslog's `mmjsonparse` and syslog-ng's JSON parser look for.
pub fn syslog(decision: &str, pid: u64, json_line: &[u8]) -> Vec<u8> {
    let pri = u16::from(FACILITY) * 8 + u16::from(priority(decision));
    let mut out = format!("<{pri}>{IDENTIFIER}[{pid}]: @cee:").into_bytes();
    out.extend_from_slice(json_line.strip_suffix(b"\n").unwrap_or(json_line));
    out
}

/// Which system log a socket leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Journal,
    Syslog,
}

/// A datagram socket connected to the system log, close-on-exec.
#[derive(Debug)]
pub struct SystemLog {
    socket: OwnedFd,
    kind: Kind,
    path: PathBuf,
    /// When gate last sent the priming datagrams ([`SystemLog::prime`]).
    primed: std::cell::Cell<Option<std::time::Instant>>,
}

/// Why the system log could not be reached or written, with the socket's path.
#[derive(Debug)]
pub struct SendError {
    pub path: PathBuf,
    pub error: io::Error,
}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cannot write the audit record to the system log at {}: {}",
            self.path.display(),
            self.error
        )?;
        if matches!(
            self.error.raw_os_error(),
            Some(libc::ENOENT | libc::ECONNREFUSED)
        ) {
            let daemon = if self.path == Path::new(JOURNAL_SOCKET) {
                "systemd-journald"
            } else {
                "a syslog daemon (or journald)"
            };
            write!(
                f,
                " (nothing listens there: is {daemon} running? audit.journal = \"auto\" \
                 writes only where one is)"
            )?;
        }
        Ok(())
    }
}

/// The socket that `mode` asks for, connected; `Ok(None)` when it is `off`, or `auto`
/// and neither journald's socket nor `/dev/log` is there (nothing listens at either).
/// With `on` or `syslog`, a socket that is not there is an error.
pub fn open(mode: AuditJournal) -> Result<Option<SystemLog>, SendError> {
    let absent = |e: &SendError| {
        matches!(
            e.error.raw_os_error(),
            Some(libc::ENOENT | libc::ECONNREFUSED | libc::ENOTDIR)
        )
    };
    match mode {
        AuditJournal::Off => Ok(None),
        AuditJournal::On => connect_to(Path::new(JOURNAL_SOCKET), Kind::Journal).map(Some),
        AuditJournal::Syslog => connect_to(Path::new(SYSLOG_SOCKET), Kind::Syslog).map(Some),
        AuditJournal::Auto => match connect_to(Path::new(JOURNAL_SOCKET), Kind::Journal) {
            Err(e) if absent(&e) => match connect_to(Path::new(SYSLOG_SOCKET), Kind::Syslog) {
                Err(e) if absent(&e) => Ok(None),
                other => other.map(Some),
            },
            other => other.map(Some),
        },
    }
}

/// A datagram socket connected to `path`. Connected, so that a record written after
/// the sandbox is in force (where no socket can be made) still goes out.
pub fn connect_to(path: &Path, kind: Kind) -> Result<SystemLog, SendError> {
    let fail = |error: io::Error| SendError {
        path: path.to_owned(),
        error,
    };
    let socket = socket(
        AddressFamily::Unix,
        SockType::Datagram,
        SockFlag::SOCK_CLOEXEC,
        None,
    )
    .map_err(|e| fail(e.into()))?;
    let timeout = TimeVal::new(SEND_TIMEOUT.as_secs() as _, 0);
    setsockopt(&socket, sockopt::SendTimeout, &timeout).map_err(|e| fail(e.into()))?;
    let addr = UnixAddr::new(path).map_err(|e| fail(e.into()))?;
    connect(socket.as_raw_fd(), &addr).map_err(|e| {
        fail(match e {
            Errno::EPROTOTYPE => io::Error::other(
                "it is not a datagram socket (gate sends datagrams only, as journald and \
                 syslog daemons take them)",
            ),
            e => e.into(),
        })
    })?;
    Ok(SystemLog {
        socket,
        kind,
        path: path.to_owned(),
        primed: std::cell::Cell::new(None),
    })
}

impl SystemLog {
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// Another handle on the same connected socket, for gate's supervisor, which records
    /// the execs it refuses: not primed (journald has not read who holds it).
    pub fn try_clone(&self) -> io::Result<SystemLog> {
        Ok(SystemLog {
            socket: self.socket.try_clone()?,
            kind: self.kind,
            path: self.path.clone(),
            primed: std::cell::Cell::new(None),
        })
    }

    /// The path the socket was connected to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The socket, to hand over ([`SystemLog::handed_over`] on the other side).
    pub fn socket(&self) -> std::os::fd::BorrowedFd<'_> {
        use std::os::fd::AsFd;
        self.socket.as_fd()
    }

    /// A system log of `kind` on a socket another process connected and handed over
    /// (gate's, to its supervisor): named by the socket's usual path in messages.
    pub fn handed_over(socket: OwnedFd, kind: Kind) -> SystemLog {
        let path = match kind {
            Kind::Journal => JOURNAL_SOCKET,
            Kind::Syslog => SYSLOG_SOCKET,
        };
        SystemLog {
            socket,
            kind,
            path: PathBuf::from(path),
            primed: std::cell::Cell::new(None),
        }
    }

    /// Have journald read who gate is now, before the record: send [`PRIMING`] and an
    /// empty datagram. journald reads the sender's `/proc` files (`_EXE`, `_COMM`,
    /// `_CMDLINE`, ...) for the first, keeps them for that pid for a second, and ignores
    /// the second datagram, which it takes only once it is done with the first. Sent as
    /// soon as gate knows the journal is on, so journald does that work while gate
    /// decides; [`SystemLog::send`] then only checks that it is done. Nothing for
    /// syslog (a syslog daemon could log the line). A priming that cannot be sent is
    /// not an error here: the record's own send reports the socket's failure.
    pub fn prime(&self) {
        if self.kind != Kind::Journal {
            return;
        }
        // Taken before the send: journald cannot read gate any earlier than this.
        let sent = std::time::Instant::now();
        if self.send_datagram(PRIMING).is_ok() {
            self.primed.set(Some(sent));
            let _ = self.send_datagram(b"");
        }
    }

    /// Send one record, given as its JSON object (for journald) and its JSON line (for
    /// syslog); `pid` is the process the record is about.
    ///
    /// To journald, once it has taken the priming (sent again first if it is older than
    /// [`PRIME_FRESH`]): the record then carries what journald read about gate, even
    /// when journald gets to it after gate has exec'd the command, so gate does not wait
    /// for it. To syslog, gate waits until the receiver has taken the message.
    pub fn send(
        &self,
        record: &Map<String, Value>,
        line: &[u8],
        pid: u64,
    ) -> Result<(), SendError> {
        let fail = |error: io::Error| SendError {
            path: self.path.clone(),
            error,
        };
        match self.kind {
            Kind::Journal => {
                if self
                    .primed
                    .get()
                    .is_none_or(|sent| sent.elapsed() >= PRIME_FRESH)
                {
                    self.prime();
                }
                self.settle(SETTLE_MAX);
                self.send_native(&native(&fields(record))).map_err(fail)
            }
            Kind::Syslog => {
                let decision = record.get("decision").and_then(Value::as_str).unwrap_or("");
                self.send_datagram(&syslog(decision, pid, line))
                    .map_err(fail)?;
                // Where journald is the receiver, it reads the sender from /proc once it
                // has the message (no priming here: a syslog daemon may log it).
                self.settle(SETTLE_MAX);
                Ok(())
            }
        }
    }

    /// One native-protocol message: as a datagram, or, when it is too large for one, in
    /// a sealed memfd whose descriptor is the datagram's only content.
    pub fn send_native(&self, message: &[u8]) -> io::Result<()> {
        match self.send_datagram(message) {
            Err(e) if matches!(e.raw_os_error(), Some(libc::EMSGSIZE | libc::ENOBUFS)) => {
                self.send_memfd(message)
            }
            other => other,
        }
    }

    /// Wait (at most `max`) until the system log has taken every datagram sent on this
    /// socket. journald learns who sent a datagram from the kernel (`_PID`, `_UID`) and
    /// then reads the rest from `/proc/PID` (`_EXE`, `_COMM`, `_CMDLINE`) when it gets
    /// to it: were gate to exec the command first, those fields would describe the
    /// command, or nothing once gate had exited. `false` when `max` passed.
    pub fn settle(&self, max: Duration) -> bool {
        let start = std::time::Instant::now();
        loop {
            let mut queued: libc::c_int = 0;
            // SAFETY: TIOCOUTQ (SIOCOUTQ) writes one int, the bytes this socket has
            // sent that the receiver has not taken yet, to the pointer, which points to
            // a live c_int.
            let rc = unsafe { libc::ioctl(self.socket.as_raw_fd(), libc::TIOCOUTQ, &mut queued) };
            if rc != 0 || queued == 0 {
                return rc == 0;
            }
            let waited = start.elapsed();
            if waited >= max {
                return false;
            }
            // Let journald run, on this CPU if it must; past the first fraction of a
            // millisecond (a journald that is busy), sleep instead of spinning.
            if waited < Duration::from_micros(500) {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(200));
            }
        }
    }

    fn send_datagram(&self, message: &[u8]) -> io::Result<()> {
        loop {
            match nix::sys::socket::send(self.socket.as_raw_fd(), message, MsgFlags::MSG_NOSIGNAL) {
                Ok(n) if n == message.len() => return Ok(()),
                Ok(n) => {
                    return Err(io::Error::other(format!(
                        "only {n} of {} bytes were sent",
                        message.len()
                    )));
                }
                Err(Errno::EINTR) => continue,
                Err(Errno::EAGAIN) => {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!(
                            "it took nothing for {} s (a system log that does not read)",
                            SEND_TIMEOUT.as_secs()
                        ),
                    ));
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// The message in a memfd, sealed so that nobody can change it once it is sent
    /// (journald takes only a sealed one), passed with `SCM_RIGHTS`.
    fn send_memfd(&self, message: &[u8]) -> io::Result<()> {
        let memfd = memfd_create(
            c"gate-audit",
            MFdFlags::MFD_CLOEXEC | MFdFlags::MFD_ALLOW_SEALING,
        )?;
        let mut file = std::fs::File::from(memfd);
        file.write_all(message)?;
        fcntl(
            &file,
            FcntlArg::F_ADD_SEALS(
                SealFlag::F_SEAL_SHRINK
                    | SealFlag::F_SEAL_GROW
                    | SealFlag::F_SEAL_WRITE
                    | SealFlag::F_SEAL_SEAL,
            ),
        )?;
        let fds = [file.as_raw_fd()];
        let cmsg = [ControlMessage::ScmRights(&fds)];
        let iov: [IoSlice<'_>; 0] = [];
        loop {
            match sendmsg::<()>(
                self.socket.as_raw_fd(),
                &iov,
                &cmsg,
                MsgFlags::MSG_NOSIGNAL,
                None,
            ) {
                Ok(_) => return Ok(()),
                Err(Errno::EINTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record() -> Map<String, Value> {
        let Value::Object(map) = json!({
            "call_id": "c1",
            "command": "echo a\nb",
            "command_sha256": "ab",
            "decided_by": "deny-rule",
            "decision": "deny",
            "host": "runner-7",
            "message": null,
            "pid": 42,
            "sandbox": {"network": "off"},
        }) else {
            unreachable!()
        };
        map
    }

    #[test]
    fn every_key_but_a_null_one_becomes_a_gate_field() {
        let fields = fields(&record());
        let get = |name: &str| {
            fields
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| String::from_utf8(v.clone()).unwrap())
        };
        assert_eq!(get("GATE_CALL_ID").as_deref(), Some("c1"));
        assert_eq!(get("GATE_COMMAND").as_deref(), Some("echo a\nb"));
        assert_eq!(get("GATE_COMMAND_SHA256").as_deref(), Some("ab"));
        assert_eq!(get("GATE_HOST").as_deref(), Some("runner-7"));
        assert_eq!(get("GATE_PID").as_deref(), Some("42"));
        assert_eq!(get("GATE_SANDBOX").as_deref(), Some(r#"{"network":"off"}"#));
        assert_eq!(get("GATE_MESSAGE"), None);
        assert_eq!(get("PRIORITY").as_deref(), Some("5"));
        assert_eq!(get("SYSLOG_IDENTIFIER").as_deref(), Some("gate"));
        assert_eq!(
            get("MESSAGE").as_deref(),
            Some("deny by deny-rule: echo a\\nb")
        );
    }

    #[test]
    fn a_value_with_a_newline_is_sent_with_its_length() {
        let message = native(&[("A".into(), b"x".to_vec()), ("B".into(), b"1\n2".to_vec())]);
        let mut expected = b"A=x\nB\n".to_vec();
        expected.extend_from_slice(&3u64.to_le_bytes());
        expected.extend_from_slice(b"1\n2\n");
        assert_eq!(message, expected);
    }

    #[test]
    fn the_summary_is_one_bounded_line() {
        let mut r = record();
        r.insert(
            "command".into(),
            json!(format!("{}\n{}", "é".repeat(200), "x")),
        );
        let line = summary(&r);
        assert!(!line.contains('\n'));
        assert!(line.len() <= MAX_SUMMARY_BYTES + '…'.len_utf8(), "{line}");
        assert!(line.ends_with('…'));
        r.remove("command");
        assert_eq!(summary(&r), "deny by deny-rule: (a shell session)");
    }

    #[test]
    fn a_syslog_message_carries_the_json_record_after_the_cee_cookie() {
        assert_eq!(
            syslog("allow", 7, b"{\"a\":1}\n"),
            b"<86>gate[7]: @cee:{\"a\":1}".to_vec()
        );
        assert_eq!(syslog("deny", 7, b"{}")[..4], *b"<85>");
    }

    /// A receiving datagram socket bound in a temporary directory.
    fn receiver(dir: &Path, buf: usize) -> (std::os::unix::net::UnixDatagram, PathBuf) {
        let path = dir.join("sock");
        let rx = std::os::unix::net::UnixDatagram::bind(&path).unwrap();
        setsockopt(&rx, sockopt::RcvBuf, &buf).unwrap();
        (rx, path)
    }

    #[test]
    fn a_message_too_large_for_a_datagram_goes_in_a_sealed_memfd() {
        use std::io::Read;
        use std::os::fd::FromRawFd;
        let dir = tempfile::tempdir().unwrap();
        let (rx, path) = receiver(dir.path(), 4096);
        let log = connect_to(&path, Kind::Journal).unwrap();
        // Small: one datagram with the message.
        log.send_native(b"A=1\n").unwrap();
        let mut buf = [0u8; 64];
        assert_eq!(rx.recv(&mut buf).unwrap(), 4);
        // Larger than the socket can ever take at once (its send buffer is capped by
        // net.core.wmem_max): a descriptor instead.
        let big = vec![b'x'; 16 << 20];
        log.send_native(&big).unwrap();
        let mut space = nix::cmsg_space!([std::os::fd::RawFd; 1]);
        let mut data = [0u8; 16];
        let mut iov = [std::io::IoSliceMut::new(&mut data)];
        let msg = nix::sys::socket::recvmsg::<()>(
            rx.as_raw_fd(),
            &mut iov,
            Some(&mut space),
            MsgFlags::empty(),
        )
        .unwrap();
        assert_eq!(msg.bytes, 0, "the datagram itself is empty");
        let fd = msg
            .cmsgs()
            .unwrap()
            .find_map(|c| match c {
                nix::sys::socket::ControlMessageOwned::ScmRights(fds) => fds.first().copied(),
                _ => None,
            })
            .expect("a descriptor was passed");
        // SAFETY: the descriptor was just received with SCM_RIGHTS and is owned by no
        // one else in this process.
        let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
        let seals = fcntl(&file, FcntlArg::F_GET_SEALS).unwrap();
        let wanted = SealFlag::F_SEAL_SHRINK
            | SealFlag::F_SEAL_GROW
            | SealFlag::F_SEAL_WRITE
            | SealFlag::F_SEAL_SEAL;
        assert_eq!(SealFlag::from_bits_truncate(seals), wanted);
        // The file offset is the one gate wrote it with (journald maps the file, so it
        // does not matter there).
        use std::io::Seek;
        file.rewind().unwrap();
        let mut content = Vec::new();
        file.read_to_end(&mut content).unwrap();
        assert!(content == big, "the memfd holds the whole message");
    }

    #[test]
    fn settle_waits_until_the_receiver_has_taken_every_datagram() {
        let dir = tempfile::tempdir().unwrap();
        let (rx, path) = receiver(dir.path(), 65536);
        let log = connect_to(&path, Kind::Journal).unwrap();
        assert!(
            log.settle(Duration::ZERO),
            "nothing sent, nothing to wait for"
        );
        log.send_native(b"A=1\n").unwrap();
        let start = std::time::Instant::now();
        assert!(!log.settle(Duration::from_millis(20)), "nobody read it");
        assert!(start.elapsed() >= Duration::from_millis(20));
        let reader = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(5));
            let mut buf = [0u8; 16];
            rx.recv(&mut buf).unwrap()
        });
        assert!(log.settle(Duration::from_secs(5)));
        assert_eq!(reader.join().unwrap(), 4);
    }

    #[test]
    fn a_record_follows_the_priming_which_is_sent_again_only_when_stale() {
        let dir = tempfile::tempdir().unwrap();
        let (rx, path) = receiver(dir.path(), 65536);
        rx.set_nonblocking(true).unwrap();
        let drain = || {
            let mut got = Vec::new();
            let mut buf = vec![0u8; 65536];
            while let Ok(n) = rx.recv(&mut buf) {
                got.push(buf[..n].to_vec());
            }
            got
        };
        let log = connect_to(&path, Kind::Journal).unwrap();
        log.prime();
        assert_eq!(drain(), [PRIMING.to_vec(), Vec::new()]);
        let record = record();
        log.send(&record, b"", 42).unwrap();
        let sent = drain();
        assert_eq!(sent.len(), 1, "a fresh priming is not sent again");
        assert!(sent[0].starts_with(b"MESSAGE=deny by deny-rule"));
        // Stale (as after an approval): primed again before the record. Nobody reads
        // here, so gate gives up waiting for it after SETTLE_MAX and sends the record.
        log.primed
            .set(Some(std::time::Instant::now() - PRIME_FRESH));
        log.send(&record, b"", 42).unwrap();
        let sent = drain();
        assert_eq!(sent.len(), 3);
        assert_eq!(sent[..2], [PRIMING.to_vec(), Vec::new()]);
        // Syslog gets no priming: a syslog daemon could log it.
        let syslog = connect_to(&path, Kind::Syslog).unwrap();
        syslog.prime();
        assert!(drain().is_empty());
    }

    #[test]
    fn on_and_syslog_need_their_socket_auto_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("none");
        let e = connect_to(&missing, Kind::Journal).unwrap_err();
        assert_eq!(e.error.raw_os_error(), Some(libc::ENOENT), "{e}");
        assert!(e.to_string().contains(&missing.display().to_string()));
        // A stream socket is not what gate sends to.
        let stream = dir.path().join("stream");
        let _listener = std::os::unix::net::UnixListener::bind(&stream).unwrap();
        let e = connect_to(&stream, Kind::Syslog).unwrap_err();
        assert!(e.to_string().contains("not a datagram socket"), "{e}");
        assert!(open(AuditJournal::Off).unwrap().is_none());
    }
}
