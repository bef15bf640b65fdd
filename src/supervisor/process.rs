//! The supervisor process's side: from the fork to its exit. It detaches from what it
//! inherited, takes the listener, the audit log and the command's user namespace over
//! the channel, then answers every notified call by its duty until the command has
//! ended. Nothing here runs in gate itself; starting it is [`super::Supervisor`]'s.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::socket::{ControlMessageOwned, MsgFlags, recvmsg};

use crate::netproxy;

use super::connect::{self, Ports};
use super::execs::{self, Execs};
use super::{Bound, ending, listens, notify};

/// What the supervisor process carries from gate.
pub(super) struct Work {
    pub(super) execs: Option<Execs>,
    pub(super) proxy: Option<Bound>,
    pub(super) tcp: Option<Ports>,
    pub(super) drop_capabilities: bool,
}

/// The supervisor's life: never returns. `inherited`: the descriptors to close.
pub(super) fn supervise(channel: OwnedFd, pidfd: OwnedFd, work: Work, inherited: &[RawFd]) -> ! {
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
    let mut audit = audit;
    if let Some(audit) = &mut audit {
        if execs.is_some() {
            record = Some(execs::Record {
                file: audit.file.as_ref().and_then(|f| f.try_clone().ok()),
                // The system log records refused execs only (not the proxy's
                // connections), so the handle goes to them.
                journal: audit.journal.take(),
                call_id: audit.call_id.clone(),
                session_id: audit.session_id.clone(),
                level: audit.level.clone(),
            });
        }
    }
    let mut proxied = None;
    if let (Some(bound), Some(admission)) = (proxy, admission) {
        let proxy_audit = audit.and_then(|a| {
            Some(netproxy::Audit {
                file: a.file?,
                call_id: a.call_id,
                session_id: a.session_id,
            })
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
pub(super) fn answer_one(
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

pub(super) fn exit() -> ! {
    // SAFETY: ends the supervisor at once; it shares nothing that needs flushing.
    unsafe { libc::_exit(0) }
}

/// A session of its own, /dev/null on the standard descriptors it inherited, every
/// other descriptor it inherited closed (`inherited`, listed by gate before it made the
/// supervisor's own); SIGPIPE ignored (a client that goes away must not end the proxy).
pub(super) fn detach(inherited: &[RawFd]) -> Result<(), Errno> {
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
pub(super) fn ranges(fds: impl Iterator<Item = RawFd>) -> Vec<(RawFd, RawFd)> {
    let mut out: Vec<(RawFd, RawFd)> = Vec::new();
    for fd in fds {
        match out.last_mut() {
            Some((_, last)) if *last + 1 == fd => *last = fd,
            _ => out.push((fd, fd)),
        }
    }
    out
}

/// What the hand-over brings: the audit log and its ids.
pub(super) struct Received {
    file: Option<std::fs::File>,
    journal: Option<crate::audit::journal::SystemLog>,
    call_id: String,
    session_id: String,
    level: String,
}

/// What gate handed over: the listener (when the command's filter notifies), the audit
/// log when the run has one, the command's user namespace when what it leaves behind is
/// ended.
pub(super) struct HandedOver {
    listener: Option<OwnedFd>,
    audit: Option<Received>,
    userns: Option<OwnedFd>,
}

/// What gate hands over, or `None` when gate ended (or closed the channel) first.
pub(super) fn receive_listener(channel: &OwnedFd, pidfd: &OwnedFd) -> Option<HandedOver> {
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
    let mut space = nix::cmsg_space!([RawFd; 4]);
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
            let mut parts = ids[3..].split(|&b| b == 0);
            // Which logs come (their descriptors in this order), then the ids.
            let file = match parts.next()? {
                [b'F', _] => Some(std::fs::File::from(fds.next()?)),
                [b'-', _] => None,
                _ => return None,
            };
            use crate::audit::journal::{Kind, SystemLog};
            let journal = match ids.get(4)? {
                b'J' => Some(SystemLog::handed_over(fds.next()?, Kind::Journal)),
                b'S' => Some(SystemLog::handed_over(fds.next()?, Kind::Syslog)),
                b'-' => None,
                _ => return None,
            };
            let mut text = || String::from_utf8(parts.next()?.to_vec()).ok();
            let call_id = text()?;
            let session_id = text()?;
            let level = text()?;
            Some(Received {
                file,
                journal,
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
