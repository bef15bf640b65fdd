//! What the running kernel can enforce.

/// The sandboxing features of the running kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Kernel {
    /// The Landlock ABI version; 0 when Landlock is missing or disabled.
    pub(crate) landlock_abi: i32,
    /// seccomp filters can be loaded.
    pub(crate) seccomp: bool,
    /// seccomp can hand system calls to a supervisor (user notification, Linux 5.0).
    /// Whether it can also install descriptors (ADDFD, 5.9) is tried on the listener
    /// itself once the filter is loaded ([`crate::supervisor`]), and by `gate doctor`.
    pub(crate) user_notify: bool,
}

/// Ask the kernel.
pub(crate) fn probe() -> Kernel {
    Kernel {
        landlock_abi: landlock_abi(),
        seccomp: seccomp_available(),
        user_notify: user_notify_available(),
    }
}

/// `seccomp(SECCOMP_GET_ACTION_AVAIL)` for `SECCOMP_RET_USER_NOTIF`: 0 when the kernel
/// knows the action.
fn user_notify_available() -> bool {
    action_available(libc::SECCOMP_RET_USER_NOTIF) == 0
}

/// `seccomp(SECCOMP_GET_ACTION_AVAIL)` for `action`: 0 when the kernel knows it, or -1
/// with the errno set.
fn action_available(action: u32) -> libc::c_long {
    // SAFETY: the kernel reads one u32 from `action`, alive for the call.
    unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_GET_ACTION_AVAIL,
            0 as libc::c_uint,
            &action as *const u32,
        )
    }
}

/// `landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)` returns the ABI
/// version, or fails with ENOSYS (not built), EOPNOTSUPP (left out at boot), or what a
/// seccomp filter around this process answers instead (EPERM, or ENOSYS in a
/// container whose profile predates the call): the errno, for `gate doctor`.
pub(crate) fn landlock_answer() -> Result<i32, i32> {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute pointer and size 0, this call only reads its flags
    // argument and returns a number; it touches no memory of ours.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if abi < 0 {
        return Err(last_errno());
    }
    Ok(i32::try_from(abi).unwrap_or(0))
}

pub(super) fn landlock_abi() -> i32 {
    landlock_answer().unwrap_or(0).max(0)
}

fn last_errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Whether this process can load a seccomp filter: `prctl(PR_GET_SECCOMP)` fails with
/// EINVAL when the kernel has no seccomp, and `seccomp(SECCOMP_GET_ACTION_AVAIL)` for
/// `SECCOMP_RET_ERRNO` with EINVAL or ENOSYS when it has no filters (EINVAL is checked
/// again with an empty `SECCOMP_SET_MODE_FILTER`, since a kernel before 4.14 has filters
/// but not that operation), or with what a
/// seccomp filter around this process answers when it refuses the call (a container's
/// profile). The errno, for `gate doctor`.
pub(crate) fn seccomp_answer() -> Result<(), i32> {
    // SAFETY: PR_GET_SECCOMP takes no pointer arguments and only returns a value.
    let mode = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) };
    if mode < 0 {
        return Err(last_errno());
    }
    if action_available(libc::SECCOMP_RET_ERRNO) == 0 {
        return Ok(());
    }
    match last_errno() {
        // An operation this kernel does not know (before Linux 4.14), or a filter around
        // gate that says so: ask for a filter with no program instead, which a kernel
        // with filters answers EFAULT (it reads the program first) and installs nothing.
        libc::EINVAL => {
            // SAFETY: a null program pointer: the kernel fails the copy and installs
            // nothing; no memory of ours is read or written.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_seccomp,
                    libc::SECCOMP_SET_MODE_FILTER,
                    0 as libc::c_uint,
                    std::ptr::null::<libc::c_void>(),
                )
            };
            match (rc, last_errno()) {
                (-1, libc::EFAULT) => Ok(()),
                (_, errno) => Err(errno),
            }
        }
        errno => Err(errno),
    }
}

fn seccomp_available() -> bool {
    seccomp_answer().is_ok()
}

/// Whether this process runs under a seccomp filter (`Seccomp: 2` in
/// /proc/self/status), as in a container: a refused Landlock or seccomp call may be its
/// answer, not the kernel's.
pub(crate) fn under_seccomp_filter() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("Seccomp:"))
                .map(|mode| mode.trim() == "2")
        })
        .unwrap_or(false)
}

#[cfg(test)]
mod tests;
