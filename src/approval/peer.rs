//! Whether a process may take part in approving: the process at the other end of a
//! socket, or this process itself, must not carry the mark every command gate runs
//! carries ([`crate::sandbox::mark`]: no_new_privs, which a process can never drop and
//! every child inherits).
//!
//! - A requester checks the listener before it sends a request ([`super::client`]): a
//!   listener with no_new_privs was started by a command gate ran (a fake broker bound
//!   while the real one is down, a model's approver behind a socket setting) or by
//!   some other sandbox, and its answer is not a person's.
//! - The broker checks an approver tool when it says hello ([`super::broker`]), and an
//!   approver tool checks the broker before it sends the token ([`super::admin`]).
//! - The approver tools and `gate serve` refuse to start with no_new_privs themselves.
//!
//! The peer is the process that called `connect` (or, for a listener, `listen`), named
//! by `SO_PEERCRED`. Its pid is pinned with `SO_PEERPIDFD` (Linux 6.5 and later): after
//! `/proc/PID/status` is read, the pidfd must show the process still alive, so the
//! status read was that process's and not a later one's with a reused pid. Older
//! kernels check the pid alone (see docs/security.md).

use std::os::fd::{AsFd, BorrowedFd};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::socket::{getsockopt, sockopt};

use crate::output::{GATE_ERROR, say};
use crate::sandbox::mark;

/// The process at the other end of a socket, as far as approving goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    /// It runs without no_new_privs.
    Unmarked { pid: i32 },
    /// It runs with no_new_privs: a command gate ran (or a descendant of one), or a
    /// process some other sandbox started.
    Marked { pid: i32 },
}

/// Look at the process at the other end of the connected Unix socket `socket`. An
/// `Err` says why it cannot be told; callers treat that as untrusted.
pub fn identify(socket: BorrowedFd<'_>) -> Result<Peer, String> {
    let creds = getsockopt(&socket, sockopt::PeerCredentials)
        .map_err(|e| format!("cannot identify its process: {e}"))?;
    let pid = creds.pid();
    if pid <= 0 {
        return Err("its process is in another pid namespace, so it cannot be checked".into());
    }
    let pinned = match getsockopt(&socket, sockopt::PeerPidfd) {
        Ok(pidfd) => Some(pidfd),
        // Linux before 6.5: the pid alone.
        Err(Errno::ENOPROTOOPT) => None,
        Err(e) => {
            return Err(format!(
                "cannot pin its process (pid {pid}): {e}; it may have exited"
            ));
        }
    };
    let path = format!("/proc/{pid}/status");
    let status = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let marked = mark::no_new_privs_in_status(&status).ok_or_else(|| {
        format!(
            "{path} does not show NoNewPrivs (Linux 4.10 and later do), so it cannot be checked"
        )
    })?;
    if let Some(pidfd) = &pinned {
        if exited(pidfd.as_fd())? {
            return Err(format!(
                "its process (pid {pid}) exited while it was being checked"
            ));
        }
    }
    Ok(if marked {
        Peer::Marked { pid }
    } else {
        Peer::Unmarked { pid }
    })
}

/// Whether the process a pidfd refers to has exited: its pidfd is readable then.
fn exited(pidfd: BorrowedFd<'_>) -> Result<bool, String> {
    let mut fds = [PollFd::new(pidfd, PollFlags::POLLIN)];
    loop {
        match poll(&mut fds, PollTimeout::ZERO) {
            Ok(_) => {
                let revents = fds[0].revents().unwrap_or(PollFlags::empty());
                return Ok(!revents.is_empty());
            }
            Err(Errno::EINTR) => continue,
            Err(e) => return Err(format!("cannot tell whether its process is alive: {e}")),
        }
    }
}

/// For `gate approve`, `deny`, `pending`, `watch` and `serve` (`tool`): `Some(125)`, with
/// the reason on stderr, when this process carries the mark.
pub fn refuse_if_marked(tool: &str) -> Option<i32> {
    if !mark::this_process_marked() {
        return None;
    }
    say(&format!("gate: {tool}: {}", marked_self(tool)));
    Some(GATE_ERROR)
}

/// Why a tool with no_new_privs does not run.
fn marked_self(tool: &str) -> &'static str {
    if tool == "serve" {
        "this process runs with no_new_privs — it descends from a command gate ran (or \
         another sandbox), so requesters would not trust a broker started here; run it in a \
         terminal of your own"
    } else {
        "this process runs with no_new_privs — it descends from a command gate ran (or \
         another sandbox) and cannot answer requests; run it in a terminal of your own"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixStream;

    #[test]
    fn a_peer_in_this_unmarked_process_is_unmarked_and_named_by_its_pid() {
        let (a, _b) = UnixStream::pair().unwrap();
        assert_eq!(
            identify(a.as_fd()),
            Ok(Peer::Unmarked {
                pid: std::process::id() as i32
            })
        );
    }

    #[test]
    fn a_peer_is_pinned_by_its_pidfd_and_refused_once_it_has_exited() {
        // A child process connects, is identified, and exits: then its pid proves nothing
        // (it could be reused), and the check says so.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let mut child = std::process::Command::new("python3")
            .args([
                "-c",
                "import socket, sys\n\
                 s = socket.socket(socket.AF_UNIX)\n\
                 s.connect(sys.argv[1])\n\
                 sys.stdin.read()",
            ])
            .arg(&path)
            .stdin(std::process::Stdio::piped())
            .spawn()
            .expect("these tests need python3");
        let (stream, _) = listener.accept().unwrap();
        let pid = child.id() as i32;
        assert_eq!(identify(stream.as_fd()), Ok(Peer::Unmarked { pid }));
        let pidfd = getsockopt(&stream, sockopt::PeerPidfd)
            .expect("this machine's kernel (6.5 or later) has SO_PEERPIDFD");
        assert_eq!(exited(pidfd.as_fd()), Ok(false));
        drop(child.stdin.take());
        child.wait().unwrap();
        assert_eq!(exited(pidfd.as_fd()), Ok(true));
        let err = identify(stream.as_fd()).unwrap_err();
        assert!(err.contains(&pid.to_string()), "{err}");
    }
}
