//! Dropping every capability, so that root inside the sandbox is an ordinary user: no
//! mount, no module loading, no hostname, no reboot, no reading what its uid does not own.
//!
//! Order matters: securebits go first, while CAP_SETPCAP is held (uid 0 gains nothing at
//! exec, ambient capabilities cannot be raised, both locked); then the ambient set; then
//! effective, permitted and inheritable, all at once. The result is read back and
//! checked. The bounding set is left as it is: it only bounds what an exec may grant,
//! and with an empty permitted set, `NOROOT` locked and no_new_privs (set here, before
//! the check) no exec grants anything. Emptying it would cost a new set of credentials
//! per capability (41 system calls, about a tenth of gate's work at `safe` as root) for
//! no right the command could otherwise get back.

use super::SandboxError;

const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
const CAP_SETPCAP: u32 = 8;

// securebits (linux/securebits.h).
const SECBIT_NOROOT: libc::c_ulong = 1 << 0;
const SECBIT_NOROOT_LOCKED: libc::c_ulong = 1 << 1;
const SECBIT_NO_CAP_AMBIENT_RAISE: libc::c_ulong = 1 << 6;
const SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED: libc::c_ulong = 1 << 7;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

fn error(step: &str, e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Setup(format!(
        "cannot set up the sandbox (dropping capabilities: {step}): {e}"
    ))
}

fn last_errno() -> std::io::Error {
    std::io::Error::last_os_error()
}

fn capget() -> Result<[CapData; 2], SandboxError> {
    let mut header = CapHeader {
        version: LINUX_CAPABILITY_VERSION_3,
        pid: 0,
    };
    let mut data = [CapData::default(); 2];
    // SAFETY: capget writes two CapData structs (the layout of the kernel's
    // __user_cap_data_struct for version 3) into `data`, which has room for exactly two,
    // and reads the header we own.
    let rc = unsafe { libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) };
    if rc != 0 {
        return Err(error("capget", last_errno()));
    }
    Ok(data)
}

fn prctl(option: libc::c_int, arg: libc::c_ulong) -> libc::c_int {
    // SAFETY: the prctl options used here (securebits, bounding set, ambient set) take
    // integer arguments only and touch no memory of ours.
    unsafe {
        libc::prctl(
            option,
            arg,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        )
    }
}

/// Whether this process holds any capability, for the audit record.
pub(crate) fn held() -> Result<bool, SandboxError> {
    let now = capget()?;
    Ok(now
        .iter()
        .any(|d| d.effective | d.permitted | d.inheritable != 0))
}

/// The securebits that keep uid 0 from regaining capabilities at exec, locked.
const SECUREBITS: libc::c_ulong = SECBIT_NOROOT
    | SECBIT_NOROOT_LOCKED
    | SECBIT_NO_CAP_AMBIENT_RAISE
    | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;

/// Drop every capability this process has, and make sure exec cannot bring any back
/// (no_new_privs is set too).
pub(crate) fn drop_all() -> Result<(), SandboxError> {
    let before = capget()?;
    let has_setpcap = before[0].effective & (1 << CAP_SETPCAP) != 0;
    if has_setpcap && prctl(libc::PR_SET_SECUREBITS, SECUREBITS) != 0 {
        return Err(error("securebits", last_errno()));
    }
    // SAFETY: PR_CAP_AMBIENT_CLEAR_ALL takes integer arguments only.
    let rc = unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        )
    };
    if rc != 0 && last_errno().raw_os_error() != Some(libc::EINVAL) {
        return Err(error("ambient set", last_errno()));
    }
    let header = CapHeader {
        version: LINUX_CAPABILITY_VERSION_3,
        pid: 0,
    };
    let empty = [CapData::default(); 2];
    // SAFETY: capset reads the header and two CapData structs, all ours and alive for the
    // call.
    let rc = unsafe { libc::syscall(libc::SYS_capset, &header, empty.as_ptr()) };
    if rc != 0 {
        return Err(error("capset", last_errno()));
    }

    // No exec from here on may grant what was dropped (file capabilities, setuid): the
    // bounding set is left as it was, so this is what stops them. The command's Landlock
    // step sets it too; the supervisor, which never execs, gets it here all the same.
    if prctl(libc::PR_SET_NO_NEW_PRIVS, 1) != 0 {
        return Err(error("no_new_privs", last_errno()));
    }

    // Check, never assume.
    if capget()? != empty {
        return Err(error("check", "capabilities remain after dropping them"));
    }
    if has_setpcap {
        let bits = prctl(libc::PR_GET_SECUREBITS, 0);
        if bits < 0 || (bits as libc::c_ulong) & SECUREBITS != SECUREBITS {
            return Err(error("check", "the securebits did not hold"));
        }
    }
    if prctl(libc::PR_GET_NO_NEW_PRIVS, 0) != 1 {
        return Err(error("check", "no_new_privs did not hold"));
    }
    Ok(())
}
