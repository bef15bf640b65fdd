//! Network by domain: the supervisor, a process outside the sandbox that lives as long
//! as the command and answers each of its `connect()` calls (seccomp user notification).
//!
//! gate binds the proxy ([`crate::netproxy::Proxy::bind`]) and opens a pidfd of its own
//! pid, then forks the supervisor, twice (gate, a short-lived intermediate, the
//! supervisor), before the sandbox applies, so the supervisor is never the command's
//! child: gate reaps the intermediate, execs the command as before, and the command keeps
//! gate's pid, exit status and signals. gate never waits for the supervisor (on a busy
//! machine, waiting for a new process to be scheduled costs more than the rest). The
//! supervisor takes over the proxy and the pidfd, starts a session of its own, puts
//! /dev/null on the standard descriptors it inherited and closes every other descriptor
//! gate had before it made the supervisor's own, so it holds no terminal, pipe or job of
//! the caller's: `gate … | cat` ends when the command ends. It exits as soon as the pidfd
//! is readable, that is when the command (gate's pid after exec) has ended, however it
//! ended. Processes the command left behind then lose the network: the listener is
//! closed with the supervisor, and the kernel fails every `connect()` they make (ENOSYS).
//! A supervisor that fails after the fork (it cannot start the proxy's thread) exits at
//! once, with the same effect.
//!
//! It runs the proxy on a
//! thread, and the notification loop on its main thread. For each `connect()`:
//! - it reads the address from the caller's memory (`process_vm_readv`), then checks the
//!   notification is still live (`SECCOMP_IOCTL_NOTIF_ID_VALID`);
//! - if it is the proxy's own address (127.0.0.1, `::1` or `::ffff:127.0.0.1`, on the
//!   proxy's port), it makes a socket of its own, registers that socket's local address
//!   with the proxy (which admits only registered peers), connects it to the proxy,
//!   copies `O_NONBLOCK` from the caller's descriptor (its fdinfo), installs it over the
//!   caller's descriptor (`SECCOMP_IOCTL_NOTIF_ADDFD` with `SECCOMP_ADDFD_FLAG_SETFD`)
//!   and answers 0: the caller holds a connection to the proxy that the supervisor made;
//! - anything else goes on into the kernel (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`), where
//!   Landlock refuses every TCP connect (no port is allowed but the user's
//!   `--net-connect` ones) and Unix sockets follow the sandbox's own rules.
//!
//! No address the command writes is trusted: a CONTINUE is decided by the kernel, as if
//! there were no supervisor, and a redirect connects to the proxy whatever the memory
//! holds by then. So a race on the address gains nothing, and the memory read only
//! decides which of two safe answers is given. When reading is not permitted (Yama's
//! `ptrace_scope` 1 or more, for a process the supervisor is not an ancestor of: see
//! docs/sandbox.md), an address of the size of an IPv4 or IPv6 one goes to the proxy
//! and any other to the kernel; a bad address goes to the kernel (EFAULT).

use std::io::{self, Read};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::socket::{
    AddressFamily, ControlMessage, ControlMessageOwned, MsgFlags, SockFlag, SockType, SockaddrIn,
    recvmsg, sendmsg, socketpair,
};
use nix::unistd::{ForkResult, Pid, fork};

use super::SandboxError;
use crate::netproxy;

fn error(e: impl std::fmt::Display) -> SandboxError {
    SandboxError(format!(
        "cannot set up network by domain (the supervisor): {e}; nothing was run"
    ))
}

/// The supervisor, forked; its proxy listens (gate bound it).
#[derive(Debug)]
pub struct Supervisor {
    /// gate's end of the channel, for the listener.
    channel: OwnedFd,
    /// The intermediate process, reaped when this is dropped (after the hand-over).
    intermediate: Option<Pid>,
    /// Where the proxy listens.
    proxy: SocketAddr,
}

/// The proxy, bound in gate while the sandbox is prepared (so a failure refuses the
/// command before anything is recorded or enforced), for the supervisor to take over.
pub struct Bound {
    proxy: netproxy::Proxy,
    addr: SocketAddrV4,
    /// The descriptors the proxy opened: the supervisor keeps them.
    own: Vec<RawFd>,
}

impl Bound {
    pub fn bind(policy: netproxy::Policy) -> Result<Bound, SandboxError> {
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

impl Drop for Supervisor {
    /// The intermediate exits at once: reap it, whatever became of the supervisor.
    fn drop(&mut self) {
        if let Some(child) = self.intermediate.take() {
            reap(child);
        }
    }
}

impl Supervisor {
    /// Fork the supervisor, which takes over the proxy; gate does not wait for it.
    /// Call before anything is enforced (the supervisor must not inherit the sandbox),
    /// and early: the intermediate process must have exited by the time gate reaps it
    /// before exec.
    pub fn start(bound: Bound) -> Result<Supervisor, SandboxError> {
        let Bound { proxy, addr, own } = bound;
        // gate's pid is the command's after exec: its end is the supervisor's.
        let pidfd =
            pidfd_open(nix::unistd::getpid()).map_err(|e| error(format!("pidfd_open: {e}")))?;
        let (ours, theirs) = socketpair(
            AddressFamily::Unix,
            SockType::SeqPacket,
            None,
            SockFlag::SOCK_CLOEXEC,
        )
        .map_err(|e| error(format!("socketpair: {e}")))?;
        // What the supervisor closes: everything open now but the proxy's, the pidfd
        // and its end of the channel (gate's end too).
        let keep = [pidfd.as_raw_fd(), theirs.as_raw_fd()];
        let close: Vec<RawFd> = open_fds()
            .into_iter()
            .filter(|fd| !own.contains(fd) && !keep.contains(fd))
            .collect();
        // SAFETY: gate is single-threaded (it starts no threads, and `Proxy::bind` starts
        // none), so the child may run ordinary code after fork; the intermediate only
        // forks again and exits.
        match unsafe { fork() }.map_err(|e| error(format!("fork: {e}")))? {
            ForkResult::Child => {
                // Closed with the rest (`close` lists it).
                std::mem::forget(ours);
                // SAFETY: as above; this process has one thread.
                if let Ok(ForkResult::Child) = unsafe { fork() } {
                    supervise(theirs, pidfd, proxy, addr, &close)
                }
                // SAFETY: _exit ends the intermediate at once, running none of the
                // parent's exit handlers or destructors twice.
                unsafe { libc::_exit(0) }
            }
            ForkResult::Parent { child } => {
                drop((theirs, pidfd, proxy));
                Ok(Supervisor {
                    channel: ours,
                    intermediate: Some(child),
                    proxy: SocketAddr::V4(addr),
                })
            }
        }
    }

    /// Where the proxy listens.
    pub fn proxy(&self) -> SocketAddr {
        self.proxy
    }

    /// Check that the kernel can install descriptors through `listener` (ADDFD, Linux
    /// 5.9), then hand it to the supervisor and close gate's copies: after this the
    /// command's `connect()` calls wait for the supervisor.
    /// The intermediate process is reaped on the way (it has long exited: it only
    /// forks), so the command never inherits it as a child.
    ///
    /// With `audit`, the run's audit log goes along (its descriptor, and the ids in the
    /// message): the proxy writes one record to it per connection.
    pub fn hand_over(
        self,
        listener: OwnedFd,
        audit: Option<netproxy::Audit>,
    ) -> Result<(), SandboxError> {
        addfd_works(listener.as_fd()).map_err(error)?;
        let mut fds = vec![listener.as_raw_fd()];
        let mut message = b"L".to_vec();
        if let Some(audit) = &audit {
            fds.push(audit.file.as_raw_fd());
            message = format!("A\0{}\0{}", audit.call_id, audit.session_id).into_bytes();
        }
        let cmsg = [ControlMessage::ScmRights(&fds)];
        let iov = [io::IoSlice::new(&message)];
        sendmsg::<()>(
            self.channel.as_raw_fd(),
            &iov,
            &cmsg,
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

/// The supervisor's life: never returns. `inherited`: the descriptors to close.
fn supervise(
    channel: OwnedFd,
    pidfd: OwnedFd,
    proxy: netproxy::Proxy,
    addr: SocketAddrV4,
    inherited: &[RawFd],
) -> ! {
    if detach(inherited).is_err() {
        // gate's hand-over then finds the channel closed.
        exit()
    }
    // The supervisor parses what the command sends (requests, and DNS answers it may
    // have arranged): as root it does so without a capability, as an ordinary user (it
    // needs none: its sockets bind ephemeral ports, and the command it reads is of the
    // same user, with no capabilities either).
    if super::caps::drop_all().is_err() {
        exit()
    }
    let admission = proxy.admit();
    // The proxy serves from the hand-over on (it brings the audit log): no connection
    // reaches it before, since only this process's answers to the command make them.
    let Some((listener, audit)) = receive_listener(&channel, &pidfd) else {
        exit()
    };
    drop(channel);
    if std::thread::Builder::new()
        .name("proxy".to_owned())
        .spawn(move || proxy.serve(audit))
        .is_err()
    {
        // The listener dies with this process: the command's connect() calls fail
        // (ENOSYS).
        exit()
    }
    let supervisor = Answers {
        proxy: addr,
        admission,
    };
    loop {
        let mut fds = [
            PollFd::new(pidfd.as_fd(), PollFlags::POLLIN),
            PollFd::new(listener.as_fd(), PollFlags::POLLIN),
        ];
        match poll(&mut fds, PollTimeout::NONE) {
            Err(Errno::EINTR) => continue,
            Err(_) => exit(),
            Ok(_) => {}
        }
        let ended = fds[0].revents().is_none_or(|r| !r.is_empty());
        let listener_state = fds[1].revents().unwrap_or(PollFlags::POLLERR);
        if ended || listener_state.intersects(PollFlags::POLLHUP | PollFlags::POLLERR) {
            // The command has ended (or nothing runs under the filter any more).
            exit()
        }
        if listener_state.contains(PollFlags::POLLIN) {
            supervisor.answer_one(listener.as_fd());
        }
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

/// The listener from gate, with the audit log when the run has one, or `None` when
/// gate ended (or closed the channel) first.
fn receive_listener(
    channel: &OwnedFd,
    pidfd: &OwnedFd,
) -> Option<(OwnedFd, Option<netproxy::Audit>)> {
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
        if fds[0].revents().is_none_or(|r| !r.is_empty()) {
            return None;
        }
        break;
    }
    let mut message = [0u8; 512];
    let mut iov = [io::IoSliceMut::new(&mut message)];
    let mut space = nix::cmsg_space!([RawFd; 2]);
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
    let listener = fds.next()?;
    let ids = &message[..len];
    let audit = match ids.first() {
        Some(b'L') => None,
        Some(b'A') => {
            let mut parts = ids[1..].split(|&b| b == 0).skip(1);
            let call_id = String::from_utf8(parts.next()?.to_vec()).ok()?;
            let session_id = String::from_utf8(parts.next()?.to_vec()).ok()?;
            Some(netproxy::Audit {
                file: std::fs::File::from(fds.next()?),
                call_id,
                session_id,
            })
        }
        _ => return None,
    };
    Some((listener, audit))
}

/// What the supervisor answers with.
struct Answers {
    proxy: SocketAddrV4,
    admission: netproxy::Admit,
}

/// The answer to one `connect()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// The proxy's address: the supervisor's own connection takes the descriptor's place.
    Proxy,
    /// Anything else: the kernel decides (Landlock refuses TCP).
    Kernel,
}

/// Decide from the address the caller passed (or why its memory could not be read) and
/// the length it gave.
fn verdict(address: &Result<Vec<u8>, Errno>, len: u64, proxy_port: u16) -> Verdict {
    let bytes = match address {
        Ok(bytes) => bytes,
        // Not permitted (Yama): by the size alone. Either answer is safe (see the
        // module's notes).
        Err(Errno::EPERM | Errno::EACCES) if len == 16 || len == 28 => return Verdict::Proxy,
        // A bad address, or anything else: the kernel says what it says (EFAULT).
        Err(_) => return Verdict::Kernel,
    };
    if bytes.len() < 8 {
        return Verdict::Kernel;
    }
    let family = u16::from_ne_bytes([bytes[0], bytes[1]]);
    let port = u16::from_be_bytes([bytes[2], bytes[3]]);
    if port != proxy_port {
        return Verdict::Kernel;
    }
    let ours = match i32::from(family) {
        libc::AF_INET if bytes.len() >= 16 => {
            Ipv4Addr::new(bytes[4], bytes[5], bytes[6], bytes[7]) == Ipv4Addr::LOCALHOST
        }
        libc::AF_INET6 if bytes.len() >= 24 => {
            let octets: [u8; 16] = bytes[8..24].try_into().expect("16 bytes");
            let ip = Ipv6Addr::from(octets);
            ip == Ipv6Addr::LOCALHOST || ip.to_ipv4_mapped() == Some(Ipv4Addr::LOCALHOST)
        }
        _ => false,
    };
    if ours {
        Verdict::Proxy
    } else {
        Verdict::Kernel
    }
}

/// The `flags:` of an fdinfo file (octal), the descriptor's open flags.
fn fdinfo_flags(text: &str) -> Option<i32> {
    text.lines()
        .find_map(|l| l.strip_prefix("flags:"))
        .and_then(|v| i32::from_str_radix(v.trim(), 8).ok())
}

impl Answers {
    /// Receive one notification and answer it. Errors are the caller's: a notification
    /// that cannot be answered is failed (or gone with its process).
    fn answer_one(&self, listener: BorrowedFd<'_>) {
        // SAFETY: seccomp_notif is plain data; the kernel wants it zeroed.
        let mut req: libc::seccomp_notif = unsafe { std::mem::zeroed() };
        // SAFETY: the kernel writes one seccomp_notif into `req`, alive for the call.
        let rc = unsafe {
            libc::ioctl(
                listener.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_RECV,
                &mut req as *mut libc::seccomp_notif,
            )
        };
        if rc != 0 {
            // ENOENT: the caller went away before its call could be received.
            return;
        }
        if i64::from(req.data.nr) != libc::SYS_connect {
            respond(listener, req.id, Answer::Continue);
            return;
        }
        let len = req.data.args[2];
        let address = read_memory(req.pid, req.data.args[1], len.min(128) as usize);
        if !id_valid(listener, req.id) {
            return;
        }
        let answer = match verdict(&address, len, self.proxy.port()) {
            Verdict::Kernel => Answer::Continue,
            Verdict::Proxy => match self.redirect(listener, &req) {
                Ok(()) => Answer::Success,
                Err(e) => Answer::Fail(e),
            },
        };
        respond(listener, req.id, answer);
    }

    /// Put a connection of the supervisor's own to the proxy in place of the caller's
    /// descriptor.
    fn redirect(&self, listener: BorrowedFd<'_>, req: &libc::seccomp_notif) -> Result<(), Errno> {
        let fd = req.data.args[0] as u32 as i32;
        if fd < 0 {
            return Err(Errno::EBADF);
        }
        // The caller's O_NONBLOCK and O_CLOEXEC, from its fdinfo. A process that made
        // itself non-dumpable (PR_SET_DUMPABLE 0, as ssh-agent does) hides its fdinfo from
        // a supervisor without CAP_SYS_PTRACE: it gets a blocking socket, inherited
        // across exec, rather than no connection at all. No such descriptor: EBADF.
        let mut text = String::new();
        let flags = match std::fs::File::open(format!("/proc/{}/fdinfo/{fd}", req.pid))
            .and_then(|mut f| f.read_to_string(&mut text))
        {
            Ok(_) => fdinfo_flags(&text).ok_or(Errno::EBADF)?,
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => 0,
            Err(_) => return Err(Errno::EBADF),
        };
        let sock = nix::sys::socket::socket(
            AddressFamily::Inet,
            SockType::Stream,
            SockFlag::SOCK_CLOEXEC,
            None,
        )?;
        let any = SockaddrIn::new(127, 0, 0, 1, 0);
        nix::sys::socket::bind(sock.as_raw_fd(), &any)?;
        let local: SockaddrIn = nix::sys::socket::getsockname(sock.as_raw_fd())?;
        self.admission
            .register(SocketAddr::V4(SocketAddrV4::new(local.ip(), local.port())));
        nix::sys::socket::connect(sock.as_raw_fd(), &SockaddrIn::from(self.proxy))?;
        if flags & libc::O_NONBLOCK != 0 {
            nix::fcntl::fcntl(
                sock.as_fd(),
                nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK),
            )?;
        }
        let addfd = libc::seccomp_notif_addfd {
            id: req.id,
            flags: libc::SECCOMP_ADDFD_FLAG_SETFD as u32,
            srcfd: sock.as_raw_fd() as u32,
            newfd: fd as u32,
            newfd_flags: (flags & libc::O_CLOEXEC) as u32,
        };
        // SAFETY: the kernel reads the struct, alive for the call, and installs a copy
        // of `sock` in the caller at `fd` (replacing what was there).
        let rc = unsafe {
            libc::ioctl(
                listener.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_ADDFD,
                &addfd as *const libc::seccomp_notif_addfd,
            )
        };
        if rc < 0 {
            return Err(Errno::last());
        }
        Ok(())
    }
}

/// How a notified call ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    /// It returns 0.
    Success,
    /// It fails with this error.
    Fail(Errno),
    /// It runs in the kernel as if not notified.
    Continue,
}

fn respond(listener: BorrowedFd<'_>, id: u64, answer: Answer) {
    let (error, flags) = match answer {
        Answer::Success => (0, 0),
        Answer::Fail(e) => (-(e as i32), 0),
        Answer::Continue => (0, libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32),
    };
    let resp = libc::seccomp_notif_resp {
        id,
        val: 0,
        error,
        flags,
    };
    // SAFETY: the kernel reads the struct, alive for the call. An error (the caller is
    // gone) needs no answer.
    unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_SEND,
            &resp as *const libc::seccomp_notif_resp,
        );
    }
}

fn id_valid(listener: BorrowedFd<'_>, id: u64) -> bool {
    // SAFETY: the kernel reads one u64, alive for the call.
    let rc = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_ID_VALID,
            &id as *const u64,
        )
    };
    rc == 0
}

/// Up to `len` bytes at `address` in process `pid`, or why they cannot be read (EFAULT:
/// the address is bad; EPERM: reading is not permitted; ESRCH: the process is gone).
fn read_memory(pid: u32, address: u64, len: usize) -> Result<Vec<u8>, Errno> {
    let mut buf = vec![0u8; len];
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: len,
    };
    let remote = libc::iovec {
        iov_base: address as *mut libc::c_void,
        iov_len: len,
    };
    // SAFETY: the kernel writes at most `len` bytes into `buf` (alive, `len` long) and
    // reads only the other process's memory; `remote` is never dereferenced here.
    let n = unsafe { libc::process_vm_readv(pid as libc::pid_t, &local, 1, &remote, 1, 0) };
    if n < 0 {
        return Err(Errno::last());
    }
    buf.truncate(n as usize);
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(ip: [u8; 4], port: u16) -> Vec<u8> {
        let mut b = vec![0u8; 16];
        b[..2].copy_from_slice(&(libc::AF_INET as u16).to_ne_bytes());
        b[2..4].copy_from_slice(&port.to_be_bytes());
        b[4..8].copy_from_slice(&ip);
        b
    }

    fn v6(ip: Ipv6Addr, port: u16) -> Vec<u8> {
        let mut b = vec![0u8; 28];
        b[..2].copy_from_slice(&(libc::AF_INET6 as u16).to_ne_bytes());
        b[2..4].copy_from_slice(&port.to_be_bytes());
        b[8..24].copy_from_slice(&ip.octets());
        b
    }

    #[test]
    fn only_the_proxys_own_address_goes_to_the_proxy() {
        let p = 4000;
        let proxy = |b: Vec<u8>| {
            let len = b.len() as u64;
            verdict(&Ok(b), len, p)
        };
        assert_eq!(proxy(v4([127, 0, 0, 1], p)), Verdict::Proxy);
        assert_eq!(proxy(v6(Ipv6Addr::LOCALHOST, p)), Verdict::Proxy);
        assert_eq!(
            proxy(v6(Ipv4Addr::LOCALHOST.to_ipv6_mapped(), p)),
            Verdict::Proxy
        );
        // Another address on the proxy's port, another port, another family.
        assert_eq!(proxy(v4([127, 0, 0, 2], p)), Verdict::Kernel);
        assert_eq!(proxy(v4([10, 0, 0, 1], p)), Verdict::Kernel);
        assert_eq!(proxy(v4([127, 0, 0, 1], p + 1)), Verdict::Kernel);
        assert_eq!(
            proxy(v6("2001:db8::1".parse().unwrap(), p)),
            Verdict::Kernel
        );
        assert_eq!(
            proxy(v6(Ipv4Addr::new(127, 0, 0, 2).to_ipv6_mapped(), p)),
            Verdict::Kernel
        );
        let mut unix = v4([127, 0, 0, 1], p);
        unix[..2].copy_from_slice(&(libc::AF_UNIX as u16).to_ne_bytes());
        assert_eq!(proxy(unix), Verdict::Kernel);
        // Too short for its family.
        assert_eq!(proxy(v4([127, 0, 0, 1], p)[..8].to_vec()), Verdict::Kernel);
        assert_eq!(
            proxy(v6(Ipv6Addr::LOCALHOST, p)[..20].to_vec()),
            Verdict::Kernel
        );
    }

    #[test]
    fn an_address_it_may_not_read_is_judged_by_its_size() {
        assert_eq!(verdict(&Err(Errno::EPERM), 16, 1), Verdict::Proxy);
        assert_eq!(verdict(&Err(Errno::EPERM), 28, 1), Verdict::Proxy);
        assert_eq!(verdict(&Err(Errno::EPERM), 110, 1), Verdict::Kernel);
        assert_eq!(verdict(&Err(Errno::EPERM), 0, 1), Verdict::Kernel);
        // A bad address is the kernel's to refuse (EFAULT), whatever its size.
        assert_eq!(verdict(&Err(Errno::EFAULT), 16, 1), Verdict::Kernel);
        assert_eq!(verdict(&Err(Errno::ESRCH), 16, 1), Verdict::Kernel);
    }

    #[test]
    fn fdinfo_flags_are_octal() {
        let text = "pos:\t0\nflags:\t02004002\nmnt_id:\t9\nino:\t1234\n";
        let flags = fdinfo_flags(text).unwrap();
        assert_ne!(flags & libc::O_NONBLOCK, 0);
        assert_ne!(flags & libc::O_CLOEXEC, 0);
        assert_eq!(
            fdinfo_flags("pos:\t0\nflags:\t02\n").unwrap() & libc::O_NONBLOCK,
            0
        );
        assert_eq!(fdinfo_flags("pos:\t0\n"), None);
    }

    #[test]
    fn the_open_descriptors_are_listed_without_the_listings_own() {
        let fds = open_fds();
        assert!(fds.contains(&0) || fds.contains(&1) || fds.contains(&2));
        let file = std::fs::File::open("/dev/null").unwrap();
        let fd = file.as_raw_fd();
        assert!(open_fds().contains(&fd));
    }

    #[test]
    fn descriptors_are_closed_by_runs() {
        assert_eq!(
            ranges([3, 4, 5, 9, 11, 12].into_iter()),
            vec![(3, 5), (9, 9), (11, 12)]
        );
        assert_eq!(ranges(std::iter::empty()), vec![]);
    }

    #[test]
    fn this_kernel_can_supervise() {
        // Linux 6.18 on the development and CI machines: user notification and ADDFD.
        kernel_supports().unwrap();
    }
}
