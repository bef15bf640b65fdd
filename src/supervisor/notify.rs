//! The seccomp user-notification calls the supervisor makes on its listener: receive a
//! notified call, check it is still waiting, answer it, and read the caller's memory or
//! take a copy of one of its descriptors.

use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

use nix::errno::Errno;

/// How a notified call ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Answer {
    /// It returns 0.
    Success,
    /// It fails with this error.
    Fail(Errno),
    /// It runs in the kernel as if not notified.
    Continue,
}

/// `SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP` (linux/seccomp.h, Linux 6.6; not in the libc
/// crate yet).
const SYNC_WAKE_UP: u64 = 1;

/// Ask the kernel to hand each notification to the supervisor on the caller's CPU and
/// back (the caller waits anyway): one wake-up instead of two through the scheduler,
/// which on a busy machine is most of a notified call's cost. Older kernels refuse the
/// request (EINVAL), and the calls are answered as before.
pub(super) fn wake_up_synchronously(listener: BorrowedFd<'_>) {
    // SAFETY: the request takes its flags by value; no memory is passed.
    unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_SET_FLAGS,
            SYNC_WAKE_UP,
        )
    };
}

/// The next notified call, or `None` when it went away before it could be received
/// (ENOENT) or the listener failed.
pub(super) fn receive(listener: BorrowedFd<'_>) -> Option<libc::seccomp_notif> {
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
    (rc == 0).then_some(req)
}

pub(super) fn respond(listener: BorrowedFd<'_>, id: u64, answer: Answer) {
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

/// Whether the call `id` still waits (its process did not die, and the pid the
/// notification names is still that process: check after reading its memory).
pub(super) fn id_valid(listener: BorrowedFd<'_>, id: u64) -> bool {
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
pub(super) fn read_memory(pid: u32, address: u64, len: usize) -> Result<Vec<u8>, Errno> {
    let mut buf = vec![0u8; len];
    let n = read_into(pid, address, &mut buf)?;
    buf.truncate(n);
    Ok(buf)
}

/// Fill as much of `buf` as can be read at `address` in process `pid`.
pub(super) fn read_into(pid: u32, address: u64, buf: &mut [u8]) -> Result<usize, Errno> {
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let remote = libc::iovec {
        iov_base: address as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: the kernel writes at most `buf.len()` bytes into `buf` (alive, that long)
    // and reads only the other process's memory; `remote` is never dereferenced here.
    let n = unsafe { libc::process_vm_readv(pid as libc::pid_t, &local, 1, &remote, 1, 0) };
    if n < 0 {
        return Err(Errno::last());
    }
    Ok(n as usize)
}

/// Fill `a` from `at_a` and then `b` from `at_b` in process `pid`, in one call: the
/// bytes read in all, which stop where the first unreadable byte is (so `b` was read
/// whole only when the count is both lengths).
pub(super) fn read_two(
    pid: u32,
    at_a: u64,
    a: &mut [u8],
    at_b: u64,
    b: &mut [u8],
) -> Result<usize, Errno> {
    let local = [
        libc::iovec {
            iov_base: a.as_mut_ptr().cast(),
            iov_len: a.len(),
        },
        libc::iovec {
            iov_base: b.as_mut_ptr().cast(),
            iov_len: b.len(),
        },
    ];
    let remote = [
        libc::iovec {
            iov_base: at_a as *mut libc::c_void,
            iov_len: a.len(),
        },
        libc::iovec {
            iov_base: at_b as *mut libc::c_void,
            iov_len: b.len(),
        },
    ];
    // SAFETY: the kernel writes at most `a.len()` bytes into `a` and `b.len()` into
    // `b` (both alive, that long) and reads only the other process's memory.
    let n = unsafe {
        libc::process_vm_readv(pid as libc::pid_t, local.as_ptr(), 2, remote.as_ptr(), 2, 0)
    };
    if n < 0 {
        return Err(Errno::last());
    }
    Ok(n as usize)
}

/// `PIDFD_THREAD` (linux/pidfd.h, Linux 6.9): a pidfd for one thread, not only a
/// thread-group leader. The same value as `O_EXCL`.
const PIDFD_THREAD: libc::c_long = libc::O_EXCL as libc::c_long;

/// A pidfd for the thread `tid` a notification names: of that thread (Linux 6.9), or
/// before that kernel, of its process (the thread group), whose descriptors the thread
/// shares unless it unshared them (then the copy taken is of the process's descriptor
/// of that number, a socket the supervisor still checks itself). Check that the call
/// still waits ([`id_valid`]) after opening it: then the pidfd is the caller's, not a
/// process's that took a reused number.
pub(super) fn pidfd_of(tid: u32) -> Result<OwnedFd, Errno> {
    let open = |pid: u32, flags: libc::c_long| {
        // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor.
        let rc = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, flags) };
        if rc < 0 {
            Err(Errno::last())
        } else {
            // SAFETY: a new descriptor that nothing else owns.
            Ok(unsafe { OwnedFd::from_raw_fd(rc as i32) })
        }
    };
    match open(tid, PIDFD_THREAD) {
        // Before Linux 6.9: no thread pidfds, and only a leader has one of its own.
        Err(Errno::EINVAL) => match open(tid, 0) {
            Err(Errno::EINVAL) => open(thread_group(tid).ok_or(Errno::ESRCH)?, 0),
            other => other,
        },
        other => other,
    }
}

/// The process (thread group) of thread `tid`, from /proc.
fn thread_group(tid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    tgid_of(&status)
}

/// The `Tgid:` of a /proc status file.
fn tgid_of(status: &str) -> Option<u32> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse().ok())
}

/// A copy of the descriptor the notified call names in its first argument (a socket, for
/// `connect`, `bind` and `listen`), taken from the caller, for the supervisor to act on
/// itself. `refused`: the error the call gets when the copy cannot be had (Yama, a
/// caller gone): refused, never let through. A number that is no descriptor: EBADF.
pub(super) fn first_descriptor(
    listener: BorrowedFd<'_>,
    req: &libc::seccomp_notif,
    refused: Errno,
) -> Result<OwnedFd, Errno> {
    let fd = req.data.args[0] as u32 as i32;
    if fd < 0 {
        return Err(Errno::EBADF);
    }
    let pidfd = pidfd_of(req.pid).map_err(|_| refused)?;
    if !id_valid(listener, req.id) {
        return Err(Errno::ESRCH);
    }
    match descriptor_from(&pidfd, fd) {
        Ok(copy) => Ok(copy),
        Err(Errno::EBADF) => Err(Errno::EBADF),
        Err(_) => Err(refused),
    }
}

/// A copy of descriptor `fd` of the process or thread behind `pidfd` (pidfd_getfd,
/// Linux 5.6): the same open file. The kernel allows it as it allows reading the
/// process's memory (ptrace's rule; Yama's `ptrace_scope` 1 and up forbid it here).
pub(super) fn descriptor_from(pidfd: &OwnedFd, fd: i32) -> Result<OwnedFd, Errno> {
    // SAFETY: pidfd_getfd takes descriptors and flags and returns a new descriptor.
    let copy = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) };
    if copy < 0 {
        return Err(Errno::last());
    }
    // SAFETY: as above, new and ours.
    Ok(unsafe { OwnedFd::from_raw_fd(copy as i32) })
}

/// Install a copy of `src` in the caller of notification `id`, as its descriptor
/// `newfd` (replacing what was there), with `newfd_flags` (`O_CLOEXEC` or none):
/// `SECCOMP_IOCTL_NOTIF_ADDFD`, Linux 5.9. It allocates nothing, so a forked child may
/// call it too.
pub(super) fn addfd(
    listener: BorrowedFd<'_>,
    id: u64,
    src: BorrowedFd<'_>,
    newfd: i32,
    newfd_flags: i32,
) -> Result<(), Errno> {
    let addfd = libc::seccomp_notif_addfd {
        id,
        flags: libc::SECCOMP_ADDFD_FLAG_SETFD as u32,
        srcfd: src.as_raw_fd() as u32,
        newfd: newfd as u32,
        newfd_flags: newfd_flags as u32,
    };
    // SAFETY: the kernel reads the struct, alive for the call, and installs a copy of
    // `src` in the caller of `id` (with no notification of that id, nothing).
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

#[cfg(test)]
mod tests;
