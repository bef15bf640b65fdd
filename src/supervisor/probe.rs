//! What the supervisor can count on before one is started: whether this kernel can run
//! one at all (a listener and ADDFD, tried in a throwaway child, for `gate doctor` and
//! the start), and whether a gate supervisor above this process already checks its
//! execs ([`outer_checks`]). It starts no supervisor and answers no call.

use std::os::fd::{AsFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

use nix::errno::Errno;
use nix::unistd::{ForkResult, fork};

use super::{execs, notify};

/// What checks this process's execs already, asked before gate starts a supervisor of
/// its own ([`outer_checks`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outer {
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
pub(crate) fn outer_checks(rules: &crate::policy::DenyRules) -> Outer {
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

/// Whether `SECCOMP_IOCTL_NOTIF_ADDFD` exists: asked to install a valid descriptor for
/// a notification that does not exist (id 0; no call of this process waits), a kernel
/// that has it answers ENOENT; before Linux 5.9 the request is unknown (EINVAL).
pub(super) fn addfd_works(listener: BorrowedFd<'_>) -> Result<(), String> {
    match addfd_probe(listener) {
        Errno::ENOENT => Ok(()),
        e => Err(format!(
            "this kernel cannot install descriptors for a supervisor (seccomp ADDFD, \
             Linux 5.9): {e}"
        )),
    }
}

/// The error of the ADDFD probe (no allocation: it also runs in a forked child).
pub(super) fn addfd_probe(listener: BorrowedFd<'_>) -> Errno {
    // No call of this process waits, so no notification has id 0: nothing is installed.
    match notify::addfd(listener, 0, listener, 0, 0) {
        Err(e) => e,
        Ok(()) => Errno::UnknownErrno,
    }
}

/// Whether this kernel can run a supervisor at all: a throwaway child loads a filter
/// with a listener and tries ADDFD on it. For `gate doctor` (a fork and a filter).
pub(crate) fn kernel_supports() -> Result<(), String> {
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
pub(super) fn trial_listener() -> Result<(), Errno> {
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
