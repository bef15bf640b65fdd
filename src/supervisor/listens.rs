//! The listen duty (network by domain, when the command may serve: with Unix sockets,
//! or a port it may bind): each `listen()` of the command is performed here, on a copy
//! of the caller's socket, when that socket is a Unix socket or a TCP socket already
//! bound; an unbound TCP socket is refused (`EPERM`).
//!
//! Why: `listen()` on a TCP socket that was never bound picks a free port on every
//! address, and Landlock, which checks `bind()`, never sees it. The filter sees only a
//! descriptor number, so it cannot tell that socket from a Unix one. Nor may the
//! supervisor look and then let the kernel run the call
//! (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`): another thread of the command could put a TCP
//! socket at that number in between. The supervisor listens itself, on the very socket
//! it looked at (`pidfd_getfd`); whatever the number holds by then, no socket it did
//! not check ever listens, and the kernel never runs the command's own call.

use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};

use nix::errno::Errno;
use nix::sys::socket::{SockaddrStorage, getsockname};

use super::notify::{Answer, first_descriptor, respond};

/// What may listen: a socket's family, and for TCP whether it is bound already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Socket {
    Unix,
    /// TCP, bound to a port (Landlock allowed the `bind()`).
    Bound,
    /// TCP never bound: `listen()` would pick a port nobody allowed.
    Unbound,
    Other,
}

/// Whether the supervisor listens on `socket` for the command (pure).
fn may_listen(socket: Socket) -> bool {
    matches!(socket, Socket::Unix | Socket::Bound)
}

/// What `socket` is.
fn kind(socket: &OwnedFd) -> Result<Socket, Errno> {
    Ok(match family(socket)? {
        libc::AF_UNIX => Socket::Unix,
        libc::AF_INET | libc::AF_INET6 => {
            let local: SockaddrStorage = getsockname(socket.as_raw_fd())?;
            let port = local
                .as_sockaddr_in()
                .map(|a| a.port())
                .or_else(|| local.as_sockaddr_in6().map(|a| a.port()));
            match port {
                Some(p) if p != 0 => Socket::Bound,
                _ => Socket::Unbound,
            }
        }
        _ => Socket::Other,
    })
}

/// The family of `socket` (`SO_DOMAIN`); ENOTSOCK for what is no socket.
pub(super) fn family(socket: &OwnedFd) -> Result<libc::c_int, Errno> {
    let mut family: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: the kernel writes one int into `family` and its size into `len`, both
    // alive for the call.
    let rc = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_DOMAIN,
            (&mut family as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(Errno::last());
    }
    Ok(family)
}

/// Answer one notified `listen(fd, backlog)`.
pub(super) fn answer(listener: BorrowedFd<'_>, req: &libc::seccomp_notif) {
    let answer = listen(listener, req).map_or_else(Answer::Fail, |()| Answer::Success);
    respond(listener, req.id, answer);
}

fn listen(listener: BorrowedFd<'_>, req: &libc::seccomp_notif) -> Result<(), Errno> {
    let backlog = req.data.args[1] as u32 as i32;
    let socket = first_descriptor(listener, req, Errno::EPERM)?;
    match kind(&socket) {
        Ok(k) if may_listen(k) => {}
        Ok(Socket::Other) => return Err(Errno::EOPNOTSUPP),
        Ok(_) => return Err(Errno::EPERM),
        Err(Errno::ENOTSOCK) => return Err(Errno::ENOTSOCK),
        Err(_) => return Err(Errno::EPERM),
    }
    // SAFETY: listen takes a descriptor (ours, open) and an integer.
    if unsafe { libc::listen(socket.as_raw_fd(), backlog) } != 0 {
        return Err(Errno::last());
    }
    Ok(())
}

#[cfg(test)]
mod tests;
