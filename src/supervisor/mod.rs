//! The supervisor: one process outside the command, for the command's whole life, that
//! answers the system calls the command's seccomp filter hands it (user notification).
//! One design serves every feature that needs a process beside the command:
//! - **deny rules at exec** ([`execs`]): every `execve`/`execveat` of the command and of
//!   everything it starts, at every level that runs commands, whenever deny rules are
//!   set;
//! - **network by domain** ([`connect`]): every `connect()` at `safe` with a domain
//!   list, with the proxy ([`crate::netproxy`]) on a thread of its own; and
//!   ([`listens`]) every `listen()` when the command may serve (Unix sockets, or a
//!   port to bind), performed by the supervisor on a Unix socket or a bound TCP one;
//! - **TCP ports on kernels without Landlock's TCP rules** (before ABI 4, [`connect`]):
//!   every `connect()` and `bind()` at `safe` with ports or a domain list, decided by
//!   the supervisor and performed by it on a copy of the command's socket;
//!
//! Only one seccomp listener can exist in a process's chain of filters (the kernel says
//! EBUSY to a second), so one supervisor answers for every duty, from one listener.
//!
//! **Its life.** gate forks it, twice (gate, a short-lived intermediate, the supervisor),
//! before anything is enforced, so the supervisor is neither filtered nor sandboxed nor
//! marked, and never the command's child: gate reaps the intermediate, execs the command
//! as before, and the command keeps gate's pid, exit status and signals. gate never waits
//! for the supervisor. The supervisor starts a session of its own, puts /dev/null on the
//! standard descriptors it inherited and closes every other descriptor gate had, so it
//! holds no terminal, pipe or job of the caller's: `gate … | cat` ends when the command
//! ends. It makes itself non-dumpable (no process of the user can trace it or write its
//! memory without CAP_SYS_PTRACE) and, when the command runs without capabilities (the
//! `safe` level), drops its own. gate loads the filter right before its own exec and
//! hands the listener over; from then on the supervisor answers.
//!
//! **Its end.** With the proxy, the command's end (a pidfd of gate's pid, readable once
//! that process has ended) closes the proxy to what the command left behind: their
//! `connect()` to it is refused. The supervisor itself goes when no process is left
//! under the filter (the listener hangs up), so what the command left behind is still
//! checked at exec for as long as it runs.
//!
//! **Fail closed.** A supervisor that cannot be started refuses the command (125). One
//! that dies takes the listener with it, and the kernel then fails every notified call
//! (ENOSYS): no exec and no connect succeeds in the command's tree any more, never an
//! unfiltered one. One that is stopped leaves those calls waiting.
//!
//! **Reading the command's memory.** The supervisor reads paths, argv and addresses with
//! `process_vm_readv`, which the kernel allows like ptrace: the same user, and a command
//! with no capability the supervisor lacks. Yama's `ptrace_scope` 1 or more forbids it
//! for a process the supervisor is not an ancestor of; gate checks that before it runs
//! anything with deny rules ([`readable`]). After reading, the supervisor checks that the
//! call still waits (`SECCOMP_IOCTL_NOTIF_ID_VALID`), so a pid reused meanwhile is never
//! answered for.

mod connect;
mod ending;
pub(crate) mod execs;
mod listens;
mod notify;
mod probe;
mod process;
mod reading;

use probe::addfd_works;
use process::{Work, supervise};

use std::io;
use std::net::{SocketAddr, SocketAddrV4};
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};

use nix::errno::Errno;
use nix::sys::socket::{
    AddressFamily, ControlMessage, MsgFlags, SockFlag, SockType, sendmsg, socketpair,
};
use nix::unistd::{ForkResult, Pid, fork};

use crate::netproxy;
pub(crate) use connect::Ports;
pub(crate) use execs::Execs;
pub(crate) use probe::{Outer, kernel_supports, outer_checks};
pub(crate) use reading::{
    Reading, readable, tcp_unreadable_without_namespace, unreadable_without_namespace,
};

/// Why the supervisor could not be set up: the command must not run. Each kind carries
/// the error of the step that failed; what that means for the command (nothing was run)
/// is said by the edge that prints it ([`crate::explain::not_run`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SupervisorError {
    /// The supervisor could not be started, or the listener not handed over to it.
    Start(String),
    /// The proxy for network by domain could not be set up.
    Proxy(String),
}

impl std::fmt::Display for SupervisorError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SupervisorError::Start(e) => write!(f, "cannot start gate's supervisor: {e}"),
            SupervisorError::Proxy(e) => {
                write!(f, "cannot set up network by domain (the supervisor): {e}")
            }
        }
    }
}

impl std::error::Error for SupervisorError {}

fn error(e: impl std::fmt::Display) -> SupervisorError {
    SupervisorError::Start(e.to_string())
}

/// What the supervisor is for.
pub(crate) struct Duties {
    /// Deny rules at exec.
    pub(crate) execs: Option<Execs>,
    /// Network by domain: the proxy, bound.
    pub(crate) proxy: Option<Bound>,
    /// The kernel has no Landlock TCP rules: the supervisor decides every `connect()`
    /// and `bind()` of the command by these ports (and the proxy's address).
    pub(crate) tcp: Option<Ports>,
    /// The command will run without capabilities (the `safe` level), so the supervisor
    /// needs none to read its memory and drops its own. Otherwise (root at `full`), it
    /// keeps them: a process may read another's memory only holding every capability
    /// that one holds.
    pub(crate) drop_capabilities: bool,
}

/// The supervisor, forked; it waits for the listener.
#[derive(Debug)]
pub(crate) struct Supervisor {
    /// gate's end of the channel, for the listener.
    channel: OwnedFd,
    /// The intermediate process, reaped when this is dropped (after the hand-over).
    intermediate: Option<Pid>,
    /// Where the proxy listens, with network by domain.
    proxy: Option<SocketAddr>,
}

/// The proxy, bound in gate while the sandbox is prepared (so a failure refuses the
/// command before anything is recorded or enforced), for the supervisor to take over.
pub(crate) struct Bound {
    proxy: netproxy::Proxy,
    addr: SocketAddrV4,
    /// The descriptors the proxy opened: the supervisor keeps them.
    own: Vec<RawFd>,
}

/// A failure to bind the proxy, worded for network by domain.
fn proxy_error(e: impl std::fmt::Display) -> SupervisorError {
    SupervisorError::Proxy(e.to_string())
}

impl Bound {
    pub(crate) fn bind(policy: netproxy::Policy) -> Result<Bound, SupervisorError> {
        let error = proxy_error;
        let before = open_fds();
        let proxy = netproxy::Proxy::bind(policy)
            .map_err(|e| error(format!("cannot start the proxy: {e}")))?;
        let addr = match proxy.addr() {
            Ok(SocketAddr::V4(addr)) => addr,
            Ok(other) => {
                return Err(error(format!(
                    "the proxy listens on {other}, not on 127.0.0.1"
                )));
            }
            Err(e) => return Err(error(format!("cannot start the proxy: {e}"))),
        };
        let own = open_fds()
            .into_iter()
            .filter(|fd| !before.contains(fd))
            .collect();
        Ok(Bound { proxy, addr, own })
    }
}

/// Where the supervisor records: the run's audit log and system log (each a descriptor
/// of its own, where the run has one) and the run's ids.
#[derive(Debug)]
pub(crate) struct Audit {
    pub(crate) file: Option<std::fs::File>,
    pub(crate) journal: Option<crate::audit::journal::SystemLog>,
    pub(crate) call_id: String,
    pub(crate) session_id: String,
    pub(crate) level: &'static str,
}

impl Drop for Supervisor {
    /// The intermediate exits at once: reap it, whatever became of the supervisor.
    fn drop(&mut self) {
        if let Some(child) = self.intermediate.take() {
            reap(child);
        }
    }
}

impl Supervisor {
    /// Fork the supervisor, which takes over the proxy; gate does not wait for it. Call
    /// before anything is enforced (the supervisor must not inherit the sandbox, the
    /// mark or the filter), and early: the intermediate process must have exited by the
    /// time gate reaps it before exec.
    pub(crate) fn start(duties: Duties) -> Result<Supervisor, SupervisorError> {
        let Duties {
            mut execs,
            proxy,
            tcp,
            drop_capabilities,
        } = duties;
        // In gate: the supervisor inherits what was found, and is ready sooner.
        if let Some(execs) = execs.as_mut() {
            execs.learn();
        }
        // gate's pid is the command's after exec: its end is the proxy's.
        let pidfd =
            pidfd_open(nix::unistd::getpid()).map_err(|e| error(format!("pidfd_open: {e}")))?;
        let (ours, theirs) = socketpair(
            AddressFamily::Unix,
            SockType::SeqPacket,
            None,
            SockFlag::SOCK_CLOEXEC,
        )
        .map_err(|e| error(format!("socketpair: {e}")))?;
        let addr = proxy.as_ref().map(|b| SocketAddr::V4(b.addr));
        // SAFETY: gate is single-threaded (it starts no threads, and `Proxy::bind` starts
        // none), so the child may run ordinary code after fork; the intermediate only
        // forks again and exits.
        match unsafe { fork() }.map_err(|e| error(format!("fork: {e}")))? {
            ForkResult::Child => {
                // Closed with the rest (`close` lists it).
                std::mem::forget(ours);
                // SAFETY: as above; this process has one thread.
                if let Ok(ForkResult::Child) = unsafe { fork() } {
                    // What the supervisor closes (listed here, not in gate, whose time
                    // to exec this would be): everything gate had open but the proxy's,
                    // the pidfd and its end of the channel (gate's end too).
                    let keep = [pidfd.as_raw_fd(), theirs.as_raw_fd()];
                    let own: &[RawFd] = proxy.as_ref().map_or(&[], |b| &b.own);
                    let close: Vec<RawFd> = open_fds()
                        .into_iter()
                        .filter(|fd| !own.contains(fd) && !keep.contains(fd))
                        .collect();
                    supervise(
                        theirs,
                        pidfd,
                        Work {
                            execs,
                            proxy,
                            tcp,
                            drop_capabilities,
                        },
                        &close,
                    )
                }
                // SAFETY: _exit ends the intermediate at once, running none of the
                // parent's exit handlers or destructors twice.
                unsafe { libc::_exit(0) }
            }
            ForkResult::Parent { child } => {
                drop((theirs, pidfd, proxy, execs));
                Ok(Supervisor {
                    channel: ours,
                    intermediate: Some(child),
                    proxy: addr,
                })
            }
        }
    }

    /// Where the proxy listens, with network by domain.
    pub(crate) fn proxy(&self) -> Option<SocketAddr> {
        self.proxy
    }

    /// Check that the kernel can install descriptors through `listener` (ADDFD, Linux
    /// 5.9) when the proxy needs it, then hand the listener to the supervisor and close
    /// gate's copies: after this the command's notified calls wait for the supervisor.
    /// The intermediate process is reaped on the way (it has long exited: it only
    /// forks), so the command never inherits it as a child.
    ///
    /// With `audit`, the run's audit log goes along (its descriptor, and the ids in the
    /// message): the proxy writes one record to it per connection, the exec check one
    /// per refusal. With `userns`, the command's user namespace: once the command has
    /// ended, the supervisor kills every process left in it ([`ending`]).
    pub(crate) fn hand_over(
        self,
        listener: Option<OwnedFd>,
        audit: Option<Audit>,
        userns: Option<OwnedFd>,
    ) -> Result<(), SupervisorError> {
        if let (Some(listener), Some(_)) = (&listener, self.proxy) {
            addfd_works(listener.as_fd()).map_err(error)?;
        }
        // What comes, in the first three bytes; the descriptors in the same order.
        let mut message = vec![
            if listener.is_some() { b'L' } else { b'-' },
            if audit.is_some() { b'A' } else { b'-' },
            if userns.is_some() { b'U' } else { b'-' },
        ];
        let mut fds = Vec::new();
        fds.extend(listener.as_ref().map(|l| l.as_raw_fd()));
        if let Some(audit) = &audit {
            // Which of the two logs come, before the ids.
            use crate::audit::journal::Kind;
            message.push(if audit.file.is_some() { b'F' } else { b'-' });
            message.push(match audit.journal.as_ref().map(|j| j.kind()) {
                Some(Kind::Journal) => b'J',
                Some(Kind::Syslog) => b'S',
                None => b'-',
            });
            fds.extend(audit.file.as_ref().map(|f| f.as_raw_fd()));
            fds.extend(audit.journal.as_ref().map(|j| j.socket().as_raw_fd()));
            message.extend(
                format!("\0{}\0{}\0{}", audit.call_id, audit.session_id, audit.level).into_bytes(),
            );
        }
        fds.extend(userns.as_ref().map(|u| u.as_raw_fd()));
        let cmsg = [ControlMessage::ScmRights(&fds)];
        let iov = [io::IoSlice::new(&message)];
        sendmsg::<()>(
            self.channel.as_raw_fd(),
            &iov,
            if fds.is_empty() { &[] } else { &cmsg },
            MsgFlags::empty(),
            None,
        )
        .map_err(|e| error(format!("handing over the listener: {e}")))?;
        Ok(())
    }
}

/// Wait for the intermediate process (it exits at once). With SIGCHLD ignored, the
/// kernel reaps it itself and waitpid says ECHILD.
fn reap(child: Pid) {
    loop {
        match nix::sys::wait::waitpid(child, None) {
            Err(Errno::EINTR) => continue,
            _ => return,
        }
    }
}

/// The descriptors open in this process, ascending, but the listing's own: one
/// directory read however many there are (the walk may keep hundreds open).
fn open_fds() -> Vec<RawFd> {
    let dir = nix::dir::Dir::open(
        "/proc/self/fd",
        nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_DIRECTORY | nix::fcntl::OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::empty(),
    );
    let mut open: Vec<RawFd> = match dir {
        Ok(mut dir) => {
            let own = dir.as_raw_fd();
            dir.iter()
                .flatten()
                .filter_map(|e| e.file_name().to_str().ok()?.parse().ok())
                .filter(|&fd| fd != own)
                .collect()
        }
        // SAFETY: F_GETFD reads a descriptor's flags and touches no memory.
        Err(_) => (0..1024)
            .filter(|&fd| unsafe { libc::fcntl(fd, libc::F_GETFD) } >= 0)
            .collect(),
    };
    open.sort_unstable();
    open
}

fn pidfd_open(pid: Pid) -> Result<OwnedFd, Errno> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor.
    let rc = unsafe { libc::syscall(libc::SYS_pidfd_open, pid.as_raw(), 0) };
    if rc < 0 {
        return Err(Errno::last());
    }
    // SAFETY: a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(rc as RawFd) })
}

#[cfg(test)]
mod tests;
