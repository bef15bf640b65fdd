//! Relaying a byte stream from one TCP socket to another through a pipe with splice(2),
//! so that the bytes of a download never pass through the proxy's memory: the kernel
//! moves page references from the receiving socket to the pipe and from the pipe to the
//! sending one. A plain read/write copy on loopback ran at about 40 % of a direct
//! download on the measuring machine; see docs/performance.md.
//!
//! The only unsafe code of the proxy is here: three system calls on descriptors this
//! module owns or borrows for the length of the call.

use std::io;
use std::net::TcpStream;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// How much one splice call asks for; also the pipe size asked for.
const CHUNK: usize = 1 << 20;

/// A pipe, both ends owned.
struct Pipe {
    read: OwnedFd,
    write: OwnedFd,
}

impl Pipe {
    fn new() -> io::Result<Pipe> {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: `fds` is a valid, writable array of two ints, which is what pipe2
        // writes; the flags are valid.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: pipe2 succeeded, so both descriptors are open and owned by nobody
        // else; each is wrapped once.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        // A larger pipe means fewer calls per download. The kernel caps the size
        // (fs.pipe-max-size) for unprivileged users: a refusal leaves the default.
        // SAFETY: F_SETPIPE_SZ on a pipe descriptor we own, with an int argument.
        let _ = unsafe { libc::fcntl(write.as_raw_fd(), libc::F_SETPIPE_SZ, CHUNK as libc::c_int) };
        Ok(Pipe { read, write })
    }
}

/// One splice(2) call of up to `len` bytes, retried on EINTR.
fn splice(from: libc::c_int, to: libc::c_int, len: usize) -> io::Result<usize> {
    loop {
        // SAFETY: both descriptors are open for the length of the call (borrowed from a
        // TcpStream or owned by a Pipe); null offsets are what splice takes for sockets
        // and pipes; no memory of ours is passed.
        let n = unsafe {
            libc::splice(
                from,
                std::ptr::null_mut(),
                to,
                std::ptr::null_mut(),
                len,
                libc::SPLICE_F_MOVE,
            )
        };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// What a relay did.
#[derive(Debug, PartialEq, Eq)]
pub enum Relayed {
    /// `from` ended (or `limit` bytes went across).
    Done(u64),
    /// splice(2) is not available for these descriptors: nothing was moved, copy
    /// another way.
    Unsupported,
}

/// Moves bytes from `from` to `to` until `from` ends, or `limit` bytes when given.
/// Fails with `UnexpectedEof` when `from` ends before `limit`.
pub fn relay(from: &TcpStream, to: &TcpStream, limit: Option<u64>) -> io::Result<Relayed> {
    let pipe = Pipe::new()?;
    let (src, dst) = (from.as_raw_fd(), to.as_raw_fd());
    let mut moved: u64 = 0;
    loop {
        let want = match limit {
            Some(l) if moved >= l => return Ok(Relayed::Done(moved)),
            Some(l) => CHUNK.min(usize::try_from(l - moved).unwrap_or(CHUNK)),
            None => CHUNK,
        };
        let got = match splice(src, pipe.write.as_raw_fd(), want) {
            Ok(n) => n,
            Err(e) if moved == 0 && e.raw_os_error() == Some(libc::EINVAL) => {
                return Ok(Relayed::Unsupported);
            }
            Err(e) => return Err(e),
        };
        if got == 0 {
            return match limit {
                Some(l) if moved < l => Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the body ended early",
                )),
                _ => Ok(Relayed::Done(moved)),
            };
        }
        let mut pending = got;
        while pending > 0 {
            let n = splice(pipe.read.as_raw_fd(), dst, pending)?;
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::WriteZero,
                    "the peer stopped reading",
                ));
            }
            pending -= n;
        }
        moved += got as u64;
    }
}

#[cfg(test)]
mod tests;
