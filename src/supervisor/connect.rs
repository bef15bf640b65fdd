//! The connect duty (network by domain): each `connect()` of the command either gets a
//! connection to the proxy that the supervisor made, or goes on into the kernel.
//! See the module notes of [`super`] for why no address the command writes is trusted.

use std::io::{self, Read};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};

use nix::errno::Errno;
use nix::sys::socket::{AddressFamily, SockFlag, SockType, SockaddrIn};

use super::notify::{Answer, id_valid, read_memory, respond};
use crate::netproxy;

/// The connect duty: the proxy's address, and the proxy's list of the peers it admits.
pub(super) struct Connects {
    pub(super) proxy: SocketAddrV4,
    pub(super) admission: netproxy::Admit,
    /// The command has ended: the proxy no longer serves what it left behind.
    pub(super) closed: bool,
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

impl Connects {
    /// Answer one notified `connect()`.
    pub(super) fn answer(&self, listener: BorrowedFd<'_>, req: &libc::seccomp_notif) {
        let len = req.data.args[2];
        let address = read_memory(req.pid, req.data.args[1], len.min(128) as usize);
        if !id_valid(listener, req.id) {
            return;
        }
        let answer = match verdict(&address, len, self.proxy.port()) {
            Verdict::Kernel => Answer::Continue,
            // What the command left behind loses the network with it.
            Verdict::Proxy if self.closed => Answer::Fail(Errno::ECONNREFUSED),
            Verdict::Proxy => match self.redirect(listener, req) {
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
}
