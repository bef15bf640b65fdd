//! The connect duty: each `connect()` of the command either gets a connection to the
//! proxy that the supervisor made (network by domain), or goes on into the kernel, where
//! Landlock's TCP rules decide; on a kernel without those rules (before Landlock ABI 4),
//! the supervisor decides every `connect()` and `bind()` itself ([`Connects::decides`], by [`Ports`]).
//! See the module notes of [`super`] for why no address the command writes is trusted.
//!
//! **Deciding in place of Landlock.** The supervisor never lets such a call go on into
//! the kernel (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`): the kernel would read the address
//! again, and the descriptor number again, after the supervisor had looked, and another
//! thread of the command could change either in between (an allowed port for a
//! forbidden one; a Unix socket for a TCP one, by `dup2`). It copies the address once,
//! decides from the copy (the port, as Landlock's rules do), takes a copy of the
//! caller's socket (`pidfd_getfd`: the same socket, not a number) and, when the call is
//! allowed, performs it itself on that socket with the copied address. The caller's
//! call then returns what the supervisor's did. A blocking connect runs on a thread of
//! its own, so one slow peer never holds up the command's other calls.

use std::io::{self, Read};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use nix::errno::Errno;
use nix::sys::socket::{AddressFamily, SockFlag, SockType, SockaddrIn};

use super::notify::{self, Answer, first_descriptor, id_valid, read_memory, respond};
use crate::netproxy;

/// The proxy of network by domain, as the connect duty needs it.
pub(super) struct Proxied {
    pub(super) addr: SocketAddrV4,
    /// The proxy's list of the peers it admits.
    pub(super) admission: netproxy::Admit,
}

/// The ports the command may connect to and bind, when the supervisor decides them in
/// place of Landlock's TCP rules.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Ports {
    pub(crate) connect: Vec<u16>,
    pub(crate) bind: Vec<u16>,
}

/// The connect duty.
pub(super) struct Connects {
    pub(super) proxy: Option<Proxied>,
    /// The kernel has no TCP rules: the supervisor decides every `connect()` and
    /// `bind()` by these ports.
    pub(super) decides: Option<Ports>,
    /// The command has ended: the proxy no longer serves what it left behind.
    pub(super) closed: bool,
    /// Blocking connects being performed on threads of their own.
    pub(super) in_flight: Arc<AtomicUsize>,
}

/// How many blocking connects may be under way at once; more fail with EAGAIN.
const MAX_IN_FLIGHT: usize = 64;

/// The largest address the kernel takes (`struct sockaddr_storage`).
const MAX_ADDRESS: u64 = 128;

/// The answer to one `connect()` or `bind()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// The proxy's address: the supervisor's own connection takes the descriptor's place.
    Proxy,
    /// Anything else, where Landlock's TCP rules decide: the kernel does.
    Kernel,
    /// Allowed, where the supervisor decides: it performs the call on a copy of the
    /// caller's socket, with the address it copied.
    Perform,
    /// Refused, where the supervisor decides.
    Refuse(Errno),
}

/// The family and port of an address, when it is one of the internet's, whole.
fn inet_port(bytes: &[u8]) -> Option<(i32, u16)> {
    let family = i32::from(u16::from_ne_bytes([*bytes.first()?, *bytes.get(1)?]));
    let whole = match family {
        libc::AF_INET => bytes.len() >= 16,
        libc::AF_INET6 => bytes.len() >= 24,
        _ => false,
    };
    whole.then(|| (family, u16::from_be_bytes([bytes[2], bytes[3]])))
}

/// Whether `bytes` is the proxy's address (127.0.0.1, ::1 or ::ffff:127.0.0.1 at its
/// port).
fn is_proxy(bytes: &[u8], proxy_port: u16) -> bool {
    match inet_port(bytes) {
        Some((libc::AF_INET, port)) if port == proxy_port => {
            Ipv4Addr::new(bytes[4], bytes[5], bytes[6], bytes[7]) == Ipv4Addr::LOCALHOST
        }
        Some((libc::AF_INET6, port)) if port == proxy_port => {
            let octets: [u8; 16] = bytes[8..24].try_into().expect("16 bytes");
            let ip = Ipv6Addr::from(octets);
            ip == Ipv6Addr::LOCALHOST || ip.to_ipv4_mapped() == Some(Ipv4Addr::LOCALHOST)
        }
        _ => false,
    }
}

/// What the address the caller passed (or why its memory could not be read) and the
/// length it gave come to, for `connect()`. `proxy_port`: with network by domain.
/// `decides`: the ports the command may connect to, where the supervisor decides in
/// place of Landlock. Pure.
fn verdict(
    address: &Result<Vec<u8>, Errno>,
    len: u64,
    proxy_port: Option<u16>,
    decides: Option<&[u16]>,
) -> Verdict {
    let otherwise = |e: Errno| match decides {
        Some(_) => Verdict::Refuse(e),
        None => Verdict::Kernel,
    };
    let bytes = match address {
        Ok(bytes) => bytes,
        // Not permitted (Yama): by the size alone. Either answer is safe (see the
        // module's notes).
        Err(Errno::EPERM | Errno::EACCES) if (len == 16 || len == 28) && proxy_port.is_some() => {
            return Verdict::Proxy;
        }
        // A bad address: the kernel says what it says (EFAULT).
        Err(Errno::EFAULT) => return otherwise(Errno::EFAULT),
        Err(_) => return otherwise(Errno::EACCES),
    };
    if let Some(port) = proxy_port {
        if is_proxy(bytes, port) {
            return Verdict::Proxy;
        }
    }
    let Some(ports) = decides else {
        return Verdict::Kernel;
    };
    if len > MAX_ADDRESS {
        return Verdict::Refuse(Errno::EINVAL);
    }
    if (bytes.len() as u64) < len {
        // The address runs into memory the caller does not have.
        return Verdict::Refuse(Errno::EFAULT);
    }
    if bytes.len() >= 2 && i32::from(u16::from_ne_bytes([bytes[0], bytes[1]])) == libc::AF_UNSPEC {
        // Dissolves the socket's association: reaches nothing.
        return Verdict::Perform;
    }
    match inet_port(bytes) {
        Some((_, port)) if ports.contains(&port) => Verdict::Perform,
        // What Landlock answers for a port it does not allow.
        Some(_) => Verdict::Refuse(Errno::EACCES),
        // Too short for its family, or no family of the internet (a Unix socket cannot
        // be made here: see `sandbox::supervisor_decides_tcp`).
        None if bytes.len() < 2 => Verdict::Refuse(Errno::EINVAL),
        None => Verdict::Refuse(Errno::EACCES),
    }
}

/// The same for `bind()`, where the supervisor decides: a port the command may bind.
/// Pure.
fn bind_verdict(address: &Result<Vec<u8>, Errno>, len: u64, ports: &[u16]) -> Verdict {
    let bytes = match address {
        Ok(bytes) => bytes,
        Err(Errno::EFAULT) => return Verdict::Refuse(Errno::EFAULT),
        Err(_) => return Verdict::Refuse(Errno::EACCES),
    };
    if len > MAX_ADDRESS {
        return Verdict::Refuse(Errno::EINVAL);
    }
    if (bytes.len() as u64) < len {
        return Verdict::Refuse(Errno::EFAULT);
    }
    match inet_port(bytes) {
        Some((_, port)) if ports.contains(&port) => Verdict::Perform,
        None if bytes.len() < 2 => Verdict::Refuse(Errno::EINVAL),
        // Another port; AF_UNSPEC (which an IPv4 socket takes as "any address"); a
        // family of no TCP socket.
        _ => Verdict::Refuse(Errno::EACCES),
    }
}

/// The `flags:` of an fdinfo file (octal), the descriptor's open flags.
fn fdinfo_flags(text: &str) -> Option<i32> {
    text.lines()
        .find_map(|l| l.strip_prefix("flags:"))
        .and_then(|v| i32::from_str_radix(v.trim(), 8).ok())
}

impl Connects {
    /// Answer one notified `connect()`.
    pub(super) fn answer(&self, listener: BorrowedFd<'_>, req: &libc::seccomp_notif) {
        let len = req.data.args[2];
        let address = read_memory(req.pid, req.data.args[1], len.min(MAX_ADDRESS) as usize);
        if !id_valid(listener, req.id) {
            return;
        }
        let proxy_port = self.proxy.as_ref().map(|p| p.addr.port());
        let decides = self.decides.as_ref().map(|p| p.connect.as_slice());
        let answer = match verdict(&address, len, proxy_port, decides) {
            Verdict::Kernel => Answer::Continue,
            Verdict::Refuse(e) => Answer::Fail(e),
            // What the command left behind loses the network with it.
            Verdict::Proxy if self.closed => Answer::Fail(Errno::ECONNREFUSED),
            Verdict::Proxy => match self.redirect(listener, req) {
                Ok(()) => Answer::Success,
                Err(e) => Answer::Fail(e),
            },
            Verdict::Perform => {
                let bytes = address.unwrap_or_default();
                match self.connect_copy(listener, req, bytes) {
                    Ok(Some(answer)) => answer,
                    // Answered from a thread of its own.
                    Ok(None) => return,
                    Err(e) => Answer::Fail(e),
                }
            }
        };
        respond(listener, req.id, answer);
    }

    /// Answer one notified `bind()` (only where the supervisor decides).
    pub(super) fn answer_bind(&self, listener: BorrowedFd<'_>, req: &libc::seccomp_notif) {
        let len = req.data.args[2];
        let address = read_memory(req.pid, req.data.args[1], len.min(MAX_ADDRESS) as usize);
        if !id_valid(listener, req.id) {
            return;
        }
        let answer = match &self.decides {
            // Not asked for: the filter notifies bind() only where the supervisor decides.
            None => Answer::Fail(Errno::EACCES),
            Some(ports) => match bind_verdict(&address, len, &ports.bind) {
                Verdict::Perform => {
                    let bytes = address.unwrap_or_default();
                    match inet_copy(listener, req).and_then(|socket| {
                        // SAFETY: bind reads `bytes.len()` bytes at `bytes`, alive for
                        // the call; the descriptor is ours.
                        let rc = unsafe {
                            libc::bind(
                                socket.as_raw_fd(),
                                bytes.as_ptr().cast(),
                                bytes.len() as libc::socklen_t,
                            )
                        };
                        if rc == 0 { Ok(()) } else { Err(Errno::last()) }
                    }) {
                        Ok(()) => Answer::Success,
                        Err(e) => Answer::Fail(e),
                    }
                }
                Verdict::Refuse(e) => Answer::Fail(e),
                Verdict::Proxy | Verdict::Kernel => Answer::Fail(Errno::EACCES),
            },
        };
        respond(listener, req.id, answer);
    }

    /// Connect the caller's socket (a copy of it) to `bytes`. A socket in non-blocking
    /// mode (the mode belongs to the socket, so the copy has the caller's) is connected
    /// here, and the answer comes back; a blocking one on a thread of its own, which
    /// answers (`None`).
    fn connect_copy(
        &self,
        listener: BorrowedFd<'_>,
        req: &libc::seccomp_notif,
        bytes: Vec<u8>,
    ) -> Result<Option<Answer>, Errno> {
        let socket = inet_copy(listener, req)?;
        let flags = nix::fcntl::fcntl(socket.as_fd(), nix::fcntl::FcntlArg::F_GETFL)?;
        if flags & libc::O_NONBLOCK != 0 {
            return Ok(Some(connect_on(&socket, &bytes)));
        }
        if self.in_flight.fetch_add(1, Ordering::SeqCst) >= MAX_IN_FLIGHT {
            self.in_flight.fetch_sub(1, Ordering::SeqCst);
            return Err(Errno::EAGAIN);
        }
        let listener = listener.try_clone_to_owned().map_err(|_| Errno::EAGAIN)?;
        let in_flight = Arc::clone(&self.in_flight);
        let id = req.id;
        let spawned = std::thread::Builder::new()
            .name("connect".to_owned())
            .spawn(move || {
                let answer = connect_on(&socket, &bytes);
                respond(listener.as_fd(), id, answer);
                in_flight.fetch_sub(1, Ordering::SeqCst);
            });
        match spawned {
            Ok(_) => Ok(None),
            Err(_) => {
                self.in_flight.fetch_sub(1, Ordering::SeqCst);
                Err(Errno::EAGAIN)
            }
        }
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
        let proxy = self.proxy.as_ref().ok_or(Errno::ECONNREFUSED)?;
        proxy
            .admission
            .register(SocketAddr::V4(SocketAddrV4::new(local.ip(), local.port())));
        nix::sys::socket::connect(sock.as_raw_fd(), &SockaddrIn::from(proxy.addr))?;
        if flags & libc::O_NONBLOCK != 0 {
            nix::fcntl::fcntl(
                sock.as_fd(),
                nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK),
            )?;
        }
        notify::addfd(listener, req.id, sock.as_fd(), fd, flags & libc::O_CLOEXEC)
    }
}

/// A copy of the socket the caller names (its first argument), when it is an IPv4 or
/// IPv6 one: the only sockets the supervisor performs calls on. Refused, not let
/// through, when the copy cannot be had.
fn inet_copy(listener: BorrowedFd<'_>, req: &libc::seccomp_notif) -> Result<OwnedFd, Errno> {
    let socket = first_descriptor(listener, req, Errno::EACCES)?;
    match super::listens::family(&socket) {
        Ok(libc::AF_INET | libc::AF_INET6) => Ok(socket),
        Ok(_) => Err(Errno::EACCES),
        Err(e) => Err(e),
    }
}

/// `connect()` `socket` to the address `bytes`; the answer for the caller.
fn connect_on(socket: &OwnedFd, bytes: &[u8]) -> Answer {
    // SAFETY: connect reads `bytes.len()` bytes at `bytes`, alive for the call; the
    // descriptor is ours.
    let rc = unsafe {
        libc::connect(
            socket.as_raw_fd(),
            bytes.as_ptr().cast(),
            bytes.len() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Answer::Success
    } else {
        Answer::Fail(Errno::last())
    }
}

#[cfg(test)]
mod tests;
