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
pub mod execs;
mod listens;
mod notify;

use std::io;
use std::net::{SocketAddr, SocketAddrV4};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::socket::{
    AddressFamily, ControlMessage, ControlMessageOwned, MsgFlags, SockFlag, SockType, recvmsg,
    sendmsg, socketpair,
};
use nix::unistd::{ForkResult, Pid, fork};

use crate::netproxy;
pub use connect::Ports;
pub use execs::Execs;

/// Why the supervisor could not be set up: the command must not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SupervisorError(pub String);

impl std::fmt::Display for SupervisorError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SupervisorError {}

fn error(e: impl std::fmt::Display) -> SupervisorError {
    SupervisorError(format!(
        "cannot start gate's supervisor: {e}; nothing was run"
    ))
}

/// What the supervisor is for.
pub struct Duties {
    /// Deny rules at exec.
    pub execs: Option<Execs>,
    /// Network by domain: the proxy, bound.
    pub proxy: Option<Bound>,
    /// The kernel has no Landlock TCP rules: the supervisor decides every `connect()`
    /// and `bind()` of the command by these ports (and the proxy's address).
    pub tcp: Option<Ports>,
    /// The command will run without capabilities (the `safe` level), so the supervisor
    /// needs none to read its memory and drops its own. Otherwise (root at `full`), it
    /// keeps them: a process may read another's memory only holding every capability
    /// that one holds.
    pub drop_capabilities: bool,
}

/// The supervisor, forked; it waits for the listener.
#[derive(Debug)]
pub struct Supervisor {
    /// gate's end of the channel, for the listener.
    channel: OwnedFd,
    /// The intermediate process, reaped when this is dropped (after the hand-over).
    intermediate: Option<Pid>,
    /// Where the proxy listens, with network by domain.
    proxy: Option<SocketAddr>,
}

/// The proxy, bound in gate while the sandbox is prepared (so a failure refuses the
/// command before anything is recorded or enforced), for the supervisor to take over.
pub struct Bound {
    proxy: netproxy::Proxy,
    addr: SocketAddrV4,
    /// The descriptors the proxy opened: the supervisor keeps them.
    own: Vec<RawFd>,
}

/// A failure to bind the proxy, worded for network by domain.
fn proxy_error(e: impl std::fmt::Display) -> SupervisorError {
    SupervisorError(format!(
        "cannot set up network by domain (the supervisor): {e}; nothing was run"
    ))
}

impl Bound {
    pub fn bind(policy: netproxy::Policy) -> Result<Bound, SupervisorError> {
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

/// Where the supervisor records: the run's audit log (a descriptor of its own) and the
/// run's ids.
#[derive(Debug)]
pub struct Audit {
    pub file: std::fs::File,
    pub call_id: String,
    pub session_id: String,
    pub level: &'static str,
}

impl Drop for Supervisor {
    /// The intermediate exits at once: reap it, whatever became of the supervisor.
    fn drop(&mut self) {
        if let Some(child) = self.intermediate.take() {
            reap(child);
        }
    }
}

/// How the supervisor may read the memory of the command's processes here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// By the classic rules: the same user, and no capability the supervisor lacks (no
    /// Yama, Yama's `ptrace_scope` 0, or root's CAP_SYS_PTRACE kept at 1 and 2).
    Direct,
    /// Only as the owner of a user namespace the command runs in: Yama's `ptrace_scope`
    /// 1 and 2 let a process read another's memory when it is an ancestor, or holds
    /// CAP_SYS_PTRACE over the other's user namespace, which the owner of a namespace
    /// does from the namespace's parent, with no capability of its own.
    OwnUserNamespace,
}

/// How the supervisor may read the memory of the command's processes here, or why it
/// may not at all (Yama's `ptrace_scope` 3). `keeps_capabilities`: the supervisor keeps
/// root's capabilities.
pub fn readable(keeps_capabilities: bool) -> Result<Reading, String> {
    let scope = match std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope") {
        Ok(text) => text.trim().parse::<u8>().unwrap_or(3),
        // No Yama in this kernel: the classic rules only.
        Err(_) => return Ok(Reading::Direct),
    };
    match scope {
        0 => Ok(Reading::Direct),
        1 | 2 if keeps_capabilities => Ok(Reading::Direct),
        1 | 2 => Ok(Reading::OwnUserNamespace),
        scope => Err(format!(
            "Yama's ptrace_scope is {scope} on this machine, which forbids every process to \
             read another's memory, so gate's supervisor could not read what the command's \
             processes ask to run and deny rules could not be checked at exec; set \
             kernel.yama.ptrace_scope to 2 or less (sysctl), or run without deny rules"
        )),
    }
}

/// Why deny rules cannot be checked at exec under Yama's `ptrace_scope` 1 or 2 when the
/// command cannot run in a user namespace of its own (`why`).
pub fn unreadable_without_namespace(why: &str) -> String {
    unreadable_for(
        why,
        "deny rules could not be checked at exec",
        "run without deny rules",
    )
}

/// Why the supervisor cannot decide TCP in place of Landlock's TCP rules (a kernel
/// before Landlock ABI 4) under Yama's `ptrace_scope` 1 or 2 when the command cannot
/// run in a user namespace of its own (`why`).
pub fn tcp_unreadable_without_namespace(why: &str) -> String {
    unreadable_for(
        why,
        "TCP connections could not be decided in place of Landlock's TCP rules, which \
         this kernel lacks",
        "run without ports and domains (--net-connect, --net-bind, --allow-domain)",
    )
}

fn unreadable_for(why: &str, so: &str, or: &str) -> String {
    format!(
        "Yama's ptrace_scope forbids gate's supervisor to read the memory of processes it \
         did not start, unless they run in a user namespace it owns, and none can be made \
         here ({why}), so {so}; set kernel.yama.ptrace_scope to 0 (sysctl), allow user \
         namespaces, or {or}"
    )
}

/// What checks this process's execs already, asked before gate starts a supervisor of
/// its own ([`outer_checks`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outer {
    /// No gate supervisor checks this process's execs.
    None,
    /// Another gate's supervisor does, with every one of these deny rules among its
    /// own: a gate inside a command of another (an agent's wrapper that runs gate
    /// again) leaves the exec check to it.
    Covers,
    /// Another gate's supervisor does, without some of these rules: only one
    /// supervisor can answer a process's calls, so they cannot be checked at exec.
    Lacks,
}

/// Ask whether a gate supervisor above this process already checks its execs against
/// `rules`: an `execve` of `/` (which the kernel refuses with EACCES, running nothing,
/// when no supervisor takes it) whose argv is the probe's mark and the rules' texts.
/// A gate supervisor answers EALREADY when every rule is one of its own, EOPNOTSUPP
/// when not. Some other supervisor (a container runtime's) answers neither, and then
/// gate's own filter cannot be loaded (EBUSY) and the command is refused.
pub fn outer_checks(rules: &crate::policy::DenyRules) -> Outer {
    let mut words = vec![std::ffi::CString::new(execs::PROBE).expect("no NUL")];
    for (rule, _) in rules.iter() {
        match std::ffi::CString::new(rule) {
            Ok(word) => words.push(word),
            Err(_) => return Outer::Lacks,
        }
    }
    let mut argv: Vec<*const libc::c_char> = words.iter().map(|w| w.as_ptr()).collect();
    argv.push(std::ptr::null());
    let envp: [*const libc::c_char; 1] = [std::ptr::null()];
    // SAFETY: the path, argv and envp are NUL-terminated strings and arrays alive for
    // the call; `/` is a directory, which the kernel never executes (EACCES).
    let rc = unsafe { libc::execve(c"/".as_ptr(), argv.as_ptr(), envp.as_ptr()) };
    match (rc, Errno::last()) {
        (-1, Errno::EALREADY) => Outer::Covers,
        (-1, Errno::EOPNOTSUPP) => Outer::Lacks,
        _ => Outer::None,
    }
}

impl Supervisor {
    /// Fork the supervisor, which takes over the proxy; gate does not wait for it. Call
    /// before anything is enforced (the supervisor must not inherit the sandbox, the
    /// mark or the filter), and early: the intermediate process must have exited by the
    /// time gate reaps it before exec.
    pub fn start(duties: Duties) -> Result<Supervisor, SupervisorError> {
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
    pub fn proxy(&self) -> Option<SocketAddr> {
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
    pub fn hand_over(
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
            fds.push(audit.file.as_raw_fd());
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

/// Whether `SECCOMP_IOCTL_NOTIF_ADDFD` exists: asked to install a valid descriptor for
/// a notification that does not exist (id 0; no call of this process waits), a kernel
/// that has it answers ENOENT; before Linux 5.9 the request is unknown (EINVAL).
fn addfd_works(listener: BorrowedFd<'_>) -> Result<(), String> {
    match addfd_probe(listener) {
        Errno::ENOENT => Ok(()),
        e => Err(format!(
            "this kernel cannot install descriptors for a supervisor (seccomp ADDFD, \
             Linux 5.9): {e}"
        )),
    }
}

/// The error of the ADDFD probe (no allocation: it also runs in a forked child).
fn addfd_probe(listener: BorrowedFd<'_>) -> Errno {
    let addfd = libc::seccomp_notif_addfd {
        id: 0,
        flags: libc::SECCOMP_ADDFD_FLAG_SETFD as u32,
        srcfd: listener.as_raw_fd() as u32,
        newfd: 0,
        newfd_flags: 0,
    };
    // SAFETY: the kernel reads the struct, alive for the call; with no notification of
    // that id it installs nothing.
    let rc = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_ADDFD,
            &addfd as *const libc::seccomp_notif_addfd,
        )
    };
    if rc < 0 {
        Errno::last()
    } else {
        Errno::UnknownErrno
    }
}

/// Whether this kernel can run a supervisor at all: a throwaway child loads a filter
/// with a listener and tries ADDFD on it. For `gate doctor` (a fork and a filter).
pub fn kernel_supports() -> Result<(), String> {
    // SAFETY: gate is single-threaded; the child only makes system calls and exits.
    match unsafe { fork() }.map_err(|e| format!("fork: {e}"))? {
        ForkResult::Child => {
            // The trial's answer: ENOENT from the ADDFD probe is success.
            let code = match trial_listener() {
                Err(Errno::ENOENT) => 0,
                Err(Errno::EBUSY) => 3,
                Err(Errno::EINVAL) => 4,
                _ => 5,
            };
            // SAFETY: ends the child at once.
            unsafe { libc::_exit(code) }
        }
        ForkResult::Parent { child } => loop {
            match nix::sys::wait::waitpid(child, None) {
                Err(Errno::EINTR) => continue,
                Ok(nix::sys::wait::WaitStatus::Exited(_, 0)) => return Ok(()),
                Ok(nix::sys::wait::WaitStatus::Exited(_, 3)) => {
                    return Err("this process already runs under another seccomp \
                                supervisor (EBUSY)"
                        .to_owned());
                }
                Ok(nix::sys::wait::WaitStatus::Exited(_, 4)) => {
                    return Err("seccomp cannot install descriptors (ADDFD, Linux 5.9)".to_owned());
                }
                other => return Err(format!("the trial filter failed ({other:?})")),
            }
        },
    }
}

/// In a throwaway child: a filter that notifies nothing real (only a call number no
/// architecture has) with a listener, and the ADDFD probe on it.
fn trial_listener() -> Result<(), Errno> {
    // SAFETY: PR_SET_NO_NEW_PRIVS takes no pointers.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err(Errno::last());
    }
    let program = [
        libc::sock_filter {
            code: 0x20,
            jt: 0,
            jf: 0,
            k: 0,
        },
        libc::sock_filter {
            code: 0x15,
            jt: 0,
            jf: 1,
            k: 0x3fff_ffff,
        },
        libc::sock_filter {
            code: 0x06,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_USER_NOTIF,
        },
        libc::sock_filter {
            code: 0x06,
            jt: 0,
            jf: 0,
            k: 0x7fff_0000,
        },
    ];
    let prog = libc::sock_fprog {
        len: program.len() as libc::c_ushort,
        filter: program.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: the kernel copies the four instructions, alive for the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER as libc::c_uint,
            &prog as *const libc::sock_fprog,
        )
    };
    if rc < 0 {
        return Err(Errno::last());
    }
    // SAFETY: a successful load with NEW_LISTENER returns a new descriptor.
    let listener = unsafe { OwnedFd::from_raw_fd(rc as RawFd) };
    Err(addfd_probe(listener.as_fd()))
}

// ---------------------------------------------------------------------------------------
// The supervisor process.

/// What the supervisor process carries from gate.
struct Work {
    execs: Option<Execs>,
    proxy: Option<Bound>,
    tcp: Option<Ports>,
    drop_capabilities: bool,
}

/// The supervisor's life: never returns. `inherited`: the descriptors to close.
fn supervise(channel: OwnedFd, pidfd: OwnedFd, work: Work, inherited: &[RawFd]) -> ! {
    if detach(inherited).is_err() {
        // gate's hand-over then finds the channel closed.
        exit()
    }
    // No process of the user may trace it or write its memory (without CAP_SYS_PTRACE).
    // SAFETY: PR_SET_DUMPABLE takes integer arguments only.
    if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) } != 0 {
        exit()
    }
    // The supervisor parses what the command sends (requests, DNS answers it may have
    // arranged, argv): without a capability when the command has none.
    if work.drop_capabilities && crate::sandbox::drop_capabilities().is_err() {
        exit()
    }
    let Work {
        execs, proxy, tcp, ..
    } = work;
    let admission = proxy.as_ref().map(|b| b.proxy.admit());
    // The proxy serves from the hand-over on (it brings the audit log): no connection
    // reaches it before, since only this process's answers to the command make them.
    let Some(HandedOver {
        listener,
        audit,
        userns,
    }) = receive_listener(&channel, &pidfd)
    else {
        exit()
    };
    drop(channel);
    if let Some(listener) = &listener {
        notify::wake_up_synchronously(listener.as_fd());
    }
    let mut record = None;
    let mut connects = None;
    if let Some(audit) = &audit {
        if execs.is_some() {
            record = audit.file.try_clone().ok().map(|file| execs::Record {
                file,
                call_id: audit.call_id.clone(),
                session_id: audit.session_id.clone(),
                level: audit.level.clone(),
            });
        }
    }
    let mut proxied = None;
    if let (Some(bound), Some(admission)) = (proxy, admission) {
        let proxy_audit = audit.map(|a| netproxy::Audit {
            file: a.file,
            call_id: a.call_id,
            session_id: a.session_id,
        });
        let Bound { proxy, addr, .. } = bound;
        if std::thread::Builder::new()
            .name("proxy".to_owned())
            .spawn(move || proxy.serve(proxy_audit))
            .is_err()
        {
            // The listener dies with this process: the command's notified calls fail
            // (ENOSYS).
            exit()
        }
        proxied = Some(connect::Proxied { addr, admission });
    }
    if proxied.is_some() || tcp.is_some() {
        connects = Some(connect::Connects {
            proxy: proxied,
            decides: tcp,
            closed: false,
            in_flight: Default::default(),
        });
    }
    let mut watching_command = connects.is_some() || userns.is_some();
    loop {
        let mut fds = Vec::with_capacity(2);
        if let Some(listener) = &listener {
            fds.push(PollFd::new(listener.as_fd(), PollFlags::POLLIN));
        }
        if watching_command {
            fds.push(PollFd::new(pidfd.as_fd(), PollFlags::POLLIN));
        }
        if fds.is_empty() {
            exit()
        }
        match poll(&mut fds, PollTimeout::NONE) {
            Err(Errno::EINTR) => continue,
            Err(_) => exit(),
            Ok(_) => {}
        }
        let listener_state = listener
            .as_ref()
            .map(|_| fds[0].revents().unwrap_or(PollFlags::POLLERR));
        let ended = watching_command
            && fds
                .last()
                .and_then(|fd| fd.revents())
                .is_none_or(|r| !r.is_empty());
        if ended {
            // The command has ended: what it left behind is killed (at `safe`), and
            // loses the proxy; with no exec duty, the supervisor has nothing left to do.
            if let Some(userns) = &userns {
                ending::end(userns.as_fd());
            }
            if execs.is_none() || listener.is_none() {
                exit()
            }
            if let Some(c) = connects.as_mut() {
                c.closed = true;
            }
            watching_command = false;
        }
        let (Some(listener), Some(state)) = (&listener, listener_state) else {
            continue;
        };
        if state.contains(PollFlags::POLLIN) {
            answer_one(
                listener.as_fd(),
                execs.as_ref(),
                connects.as_ref(),
                record.as_mut(),
            );
        } else if state.intersects(PollFlags::POLLHUP | PollFlags::POLLERR) {
            // Nothing runs under the filter any more.
            if watching_command {
                // Nor does the command; what it left behind ends with it.
                if let Some(userns) = &userns {
                    ending::end(userns.as_fd());
                }
            }
            exit()
        }
    }
}

/// Receive one notification and answer it by its duty. A call no duty asked for (there
/// is none: the filter notifies only these) goes on into the kernel.
fn answer_one(
    listener: BorrowedFd<'_>,
    execs: Option<&Execs>,
    connects: Option<&connect::Connects>,
    record: Option<&mut execs::Record>,
) {
    let Some(req) = notify::receive(listener) else {
        // ENOENT: the caller went away before its call could be received.
        return;
    };
    let nr = i64::from(req.data.nr);
    match (nr, execs, connects) {
        (libc::SYS_execve | libc::SYS_execveat, Some(execs), _) => {
            execs.answer(listener, &req, record)
        }
        (libc::SYS_connect, _, Some(connects)) => connects.answer(listener, &req),
        (libc::SYS_bind, _, Some(connects)) => connects.answer_bind(listener, &req),
        // Notified only where the supervisor decides TCP: never let through unchecked.
        (libc::SYS_bind, _, None) => {
            notify::respond(listener, req.id, notify::Answer::Fail(Errno::EACCES))
        }
        // Never let through: the supervisor listens itself, or refuses.
        (libc::SYS_listen, _, _) => listens::answer(listener, &req),
        _ => notify::respond(listener, req.id, notify::Answer::Continue),
    }
}

fn exit() -> ! {
    // SAFETY: ends the supervisor at once; it shares nothing that needs flushing.
    unsafe { libc::_exit(0) }
}

/// A session of its own, /dev/null on the standard descriptors it inherited, every
/// other descriptor it inherited closed (`inherited`, listed by gate before it made the
/// supervisor's own); SIGPIPE ignored (a client that goes away must not end the proxy).
fn detach(inherited: &[RawFd]) -> Result<(), Errno> {
    nix::unistd::setsid()?;
    let null = nix::fcntl::open(
        "/dev/null",
        nix::fcntl::OFlag::O_RDWR | nix::fcntl::OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::empty(),
    )?;
    for &fd in inherited.iter().filter(|&&fd| fd <= 2) {
        // SAFETY: dup2 onto a standard descriptor this process inherited.
        if unsafe { libc::dup2(null.as_raw_fd(), fd) } < 0 {
            return Err(Errno::last());
        }
    }
    drop(null);
    for (first, last) in ranges(inherited.iter().copied().filter(|&fd| fd > 2)) {
        // SAFETY: closing inherited descriptors nothing in this process uses: the
        // supervisor's own (pidfd, proxy, channel) are not in the list, and /dev/null,
        // opened after it was taken, is closed already.
        if unsafe { libc::close_range(first as u32, last as u32, 0) } != 0 {
            return Err(Errno::last());
        }
    }
    // SAFETY: setting a signal's disposition to ignore.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    let _ = nix::sys::signal::SigSet::all().thread_unblock();
    Ok(())
}

/// Runs of consecutive numbers, as (first, last), from ascending `fds`.
fn ranges(fds: impl Iterator<Item = RawFd>) -> Vec<(RawFd, RawFd)> {
    let mut out: Vec<(RawFd, RawFd)> = Vec::new();
    for fd in fds {
        match out.last_mut() {
            Some((_, last)) if *last + 1 == fd => *last = fd,
            _ => out.push((fd, fd)),
        }
    }
    out
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

/// What the hand-over brings: the audit log and its ids.
struct Received {
    file: std::fs::File,
    call_id: String,
    session_id: String,
    level: String,
}

/// What gate handed over: the listener (when the command's filter notifies), the audit
/// log when the run has one, the command's user namespace when what it leaves behind is
/// ended.
struct HandedOver {
    listener: Option<OwnedFd>,
    audit: Option<Received>,
    userns: Option<OwnedFd>,
}

/// What gate hands over, or `None` when gate ended (or closed the channel) first.
fn receive_listener(channel: &OwnedFd, pidfd: &OwnedFd) -> Option<HandedOver> {
    loop {
        let mut fds = [
            PollFd::new(pidfd.as_fd(), PollFlags::POLLIN),
            PollFd::new(channel.as_fd(), PollFlags::POLLIN),
        ];
        match poll(&mut fds, PollTimeout::NONE) {
            Err(Errno::EINTR) => continue,
            Err(_) => return None,
            Ok(_) => {}
        }
        if fds[1]
            .revents()
            .is_some_and(|r| r.contains(PollFlags::POLLIN))
        {
            break;
        }
        if fds[0].revents().is_none_or(|r| !r.is_empty()) {
            return None;
        }
        if fds[1].revents().is_none_or(|r| !r.is_empty()) {
            return None;
        }
    }
    let mut message = [0u8; 512];
    let mut iov = [io::IoSliceMut::new(&mut message)];
    let mut space = nix::cmsg_space!([RawFd; 3]);
    let msg = recvmsg::<()>(
        channel.as_raw_fd(),
        &mut iov,
        Some(&mut space),
        MsgFlags::MSG_CMSG_CLOEXEC,
    )
    .ok()?;
    let len = msg.bytes;
    let mut received = Vec::new();
    for cmsg in msg.cmsgs().ok()? {
        if let ControlMessageOwned::ScmRights(fds) = cmsg {
            // SAFETY: SCM_RIGHTS installed these descriptors in this process, each new.
            received.extend(
                fds.into_iter()
                    .map(|fd| unsafe { OwnedFd::from_raw_fd(fd) }),
            );
        }
    }
    let mut fds = received.into_iter();
    let ids = &message[..len];
    let [has_listener, has_audit, has_userns] = *ids.first_chunk::<3>()?;
    let listener = match has_listener {
        b'L' => Some(fds.next()?),
        b'-' => None,
        _ => return None,
    };
    let audit = match has_audit {
        b'-' => None,
        b'A' => {
            let mut parts = ids[3..].split(|&b| b == 0).skip(1);
            let mut text = || String::from_utf8(parts.next()?.to_vec()).ok();
            let call_id = text()?;
            let session_id = text()?;
            let level = text()?;
            Some(Received {
                file: std::fs::File::from(fds.next()?),
                call_id,
                session_id,
                level,
            })
        }
        _ => return None,
    };
    let userns = match has_userns {
        b'U' => Some(fds.next()?),
        b'-' => None,
        _ => return None,
    };
    Some(HandedOver {
        listener,
        audit,
        userns,
    })
}

#[cfg(test)]
mod tests;
