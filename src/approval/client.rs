//! The requester's side of the socket: connect to the approver, check that it is this
//! user's and not a process a command gate ran started, send one request line, and wait
//! for the one answer line.

use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use nix::sys::socket::{getsockopt, sockopt};

use super::protocol::{Answer, Ask, Decision, MAX_LINE};
use super::wire::{Got, LineReader};
use crate::config::ApproverUser;

/// How long an approver may take before the requester says that it waits: long enough
/// for a broker to answer a remembered command, short beside a person's answer.
pub const NOTICE_AFTER: std::time::Duration = std::time::Duration::from_millis(300);

/// Why no request went out over the socket.
#[derive(Debug, PartialEq, Eq)]
pub enum NotConnected {
    /// Nothing is there, or nothing listens: the next channel may be tried.
    Absent(String),
    /// Something is there that must not be trusted with the request: a denial.
    Untrusted(String),
    /// The listener did not take the connection before the deadline.
    Timeout,
    /// A signal arrived while connecting.
    Interrupted,
}

/// A connection to an approver that passed the checks.
pub struct Connection {
    reader: LineReader<UnixStream>,
}

/// The approver's reply, or why there is none.
#[derive(Debug, PartialEq, Eq)]
pub enum Reply {
    Decision(Decision),
    Answer(Answer),
    Timeout,
    Interrupted,
    /// The approver broke the protocol or went away: a denial, with the cause.
    Fault(String),
}

/// Connect to `path`, giving up at `deadline` or when `interrupt` becomes readable.
/// The socket must belong to this user and be closed to others, and the process
/// listening on it must run as this user, without no_new_privs (not started by a command
/// gate ran). With `approver` (`approval.approver`), the socket and the listener must be
/// that user's instead: no process of this user's, however started, is trusted then.
pub fn connect(
    path: &Path,
    approver: Option<&ApproverUser>,
    deadline: Instant,
    interrupt: Option<BorrowedFd<'_>>,
) -> Result<Connection, NotConnected> {
    let shown = path.display();
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(NotConnected::Absent(format!("no socket at {shown}")));
        }
        Err(e) => {
            return Err(NotConnected::Untrusted(format!(
                "cannot inspect {shown}: {e}"
            )));
        }
    };
    if !meta.file_type().is_socket() {
        return Err(NotConnected::Untrusted(format!("{shown} is not a socket")));
    }
    let own = nix::unistd::geteuid().as_raw();
    let (uid, whose) = match approver {
        None => (own, format!("this user (uid {own})")),
        Some(user) => {
            let uid = user.uid().map_err(NotConnected::Untrusted)?;
            (uid, format!("the approver user {user} (uid {uid})"))
        }
    };
    if meta.uid() != uid {
        return Err(NotConnected::Untrusted(format!(
            "the socket {shown} belongs to uid {}, not to {whose}",
            meta.uid()
        )));
    }
    // A broker's requests socket, which `approval.approver` points at, is open to every
    // user; who listens on it decides below.
    if approver.is_none() && meta.mode() & 0o077 != 0 {
        return Err(NotConnected::Untrusted(format!(
            "the socket {shown} is open to other users (mode {:04o})",
            meta.mode() & 0o7777
        )));
    }
    let stream = connect_by_deadline(path, deadline, interrupt)?;
    let peer = getsockopt(&stream, sockopt::PeerCredentials).map_err(|e| {
        NotConnected::Untrusted(format!("cannot identify the approver on {shown}: {e}"))
    })?;
    if peer.uid() != uid {
        return Err(NotConnected::Untrusted(format!(
            "the approver on {shown} runs as uid {}, not as {whose}",
            peer.uid()
        )));
    }
    check_listener(&stream, path)?;
    Ok(Connection {
        reader: LineReader::new(stream),
    })
}

/// The listener must not carry the mark of a command gate ran: a fake broker bound while
/// the real one is down, or a model's approver behind a socket setting, would answer for
/// the model ([`super::peer`]).
fn check_listener(stream: &UnixStream, path: &Path) -> Result<(), NotConnected> {
    let shown = path.display();
    match super::peer::identify(stream.as_fd()) {
        Ok(super::peer::Peer::Unmarked { .. }) => Ok(()),
        Ok(super::peer::Peer::Marked { pid }) => Err(NotConnected::Untrusted(format!(
            "the approver on {shown} (pid {pid}) runs with no_new_privs (a command gate ran, \
             or a sandbox, started it); it cannot be trusted to answer"
        ))),
        Err(why) => Err(NotConnected::Untrusted(format!(
            "the approver on {shown} cannot be checked: {why}"
        ))),
    }
}

/// A non-blocking connect, retried while the listener's queue is full (a Unix socket
/// says EAGAIN then, and there is nothing to poll for), so that neither a listener that
/// never accepts nor a signal can hold gate past its deadline.
fn connect_by_deadline(
    path: &Path,
    deadline: Instant,
    interrupt: Option<BorrowedFd<'_>>,
) -> Result<UnixStream, NotConnected> {
    use nix::errno::Errno;
    use nix::sys::socket::{AddressFamily, SockFlag, SockType, UnixAddr, connect, socket};
    use std::os::fd::AsRawFd;

    let shown = path.display();
    let cannot = |e: Errno| NotConnected::Absent(format!("cannot connect to {shown}: {e}"));
    let addr = UnixAddr::new(path).map_err(cannot)?;
    let fd = socket(
        AddressFamily::Unix,
        SockType::Stream,
        SockFlag::SOCK_NONBLOCK | SockFlag::SOCK_CLOEXEC,
        None,
    )
    .map_err(cannot)?;
    loop {
        match connect(fd.as_raw_fd(), &addr) {
            Ok(()) => break,
            Err(Errno::EINTR) => continue,
            Err(Errno::EAGAIN) => {
                // The queue is full: wait a little, watching the interrupt.
                let pause = Instant::now() + std::time::Duration::from_millis(5);
                let until = pause.min(deadline);
                let waited = match interrupt {
                    Some(i) => super::wire::wait_readable(i, Some(until), None),
                    None => {
                        std::thread::sleep(until.saturating_duration_since(Instant::now()));
                        Ok(super::wire::Waited::Timeout)
                    }
                };
                match waited {
                    Ok(super::wire::Waited::Ready) => return Err(NotConnected::Interrupted),
                    Ok(_) if Instant::now() >= deadline => return Err(NotConnected::Timeout),
                    Ok(_) => continue,
                    Err(e) => return Err(NotConnected::Absent(format!("cannot wait: {e}"))),
                }
            }
            Err(Errno::ECONNREFUSED) => {
                return Err(NotConnected::Absent(format!(
                    "nothing is listening on {shown}"
                )));
            }
            Err(e) => return Err(cannot(e)),
        }
    }
    let stream = UnixStream::from(fd);
    stream
        .set_nonblocking(false)
        .map_err(|e| NotConnected::Absent(format!("cannot connect to {shown}: {e}")))?;
    Ok(stream)
}

impl Connection {
    /// Send `ask` and wait for the first answer until `deadline`, or until `interrupt`
    /// is readable. Later lines are never read: the first answer is the one that counts.
    /// When no answer has come [`NOTICE_AFTER`] after sending, `waiting` is called once
    /// (an approver that answers at once, as the broker does for a remembered command,
    /// is not waited for).
    pub fn ask(
        mut self,
        ask: &Ask,
        deadline: Instant,
        interrupt: Option<BorrowedFd<'_>>,
        waiting: &mut dyn FnMut(),
    ) -> Reply {
        let line = ask.encode();
        if line.len() > MAX_LINE {
            return Reply::Fault(format!(
                "the request is longer than the protocol's {MAX_LINE} bytes (the command is too long to ask about)"
            ));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Reply::Timeout;
        }
        let stream = self.reader.get_mut();
        if let Err(e) = stream
            .set_write_timeout(Some(left))
            .and_then(|()| stream.write_all(&line))
        {
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => Reply::Timeout,
                _ => Reply::Fault(format!("cannot send the request: {e}")),
            };
        }
        // The person gets the whole timeout from the moment the request is there to be
        // seen: what connecting took (long, on a busy machine) is not taken from it. The
        // broker counts from the request's arrival too, so both agree on a timeout.
        let sent = Instant::now();
        let deadline = deadline.max(sent + Duration::from_secs(ask.timeout_seconds()));
        let soon = (sent + NOTICE_AFTER).min(deadline);
        let mut got = self.reader.read_line(Some(soon), interrupt);
        if matches!(got, Ok(Got::Timeout)) && soon < deadline {
            waiting();
            got = self.reader.read_line(Some(deadline), interrupt);
        }
        match got {
            Ok(Got::Line(line)) => {
                let decoded = match ask {
                    Ask::Approval(_) => Decision::decode(&line, ask.call_id()).map(Reply::Decision),
                    Ask::Question(_) => Answer::decode(&line, ask.call_id()).map(Reply::Answer),
                };
                decoded.unwrap_or_else(|e| Reply::Fault(format!("protocol error: {e}")))
            }
            Ok(Got::Eof) => {
                Reply::Fault("the approver closed the connection without answering".into())
            }
            Ok(Got::TooLong) => Reply::Fault(format!(
                "protocol error: the approver sent a line longer than {MAX_LINE} bytes"
            )),
            Ok(Got::Timeout) => Reply::Timeout,
            Ok(Got::Interrupted) => Reply::Interrupted,
            Err(e) => Reply::Fault(format!("cannot read the answer: {e}")),
        }
    }
}
