//! Dropping every capability, so that root inside the sandbox is an ordinary user: no
//! mount, no module loading, no hostname, no reboot, no reading what its uid does not own.
//!
//! Order matters: the bounding set (which caps an exec may grant, even to uid 0) can only
//! be lowered while CAP_SETPCAP is held, so it goes first, with securebits that stop uid 0
//! from regaining anything at exec; then the ambient set; then effective, permitted and
//! inheritable, all at once. The result is read back and checked.

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
    SandboxError(format!(
        "cannot set up the sandbox (dropping capabilities: {step}): {e}; nothing was run"
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

/// Whether the bounding set holds none of the capabilities below `known`, asked one
/// by one: `PR_CAPBSET_READ` changes nothing and costs a fraction of a drop, and all of
/// them cost less than one read of `/proc/self/status`.
fn bounding_set_empty(known: u32) -> Result<bool, SandboxError> {
    for cap in 0..known {
        match prctl(libc::PR_CAPBSET_READ, libc::c_ulong::from(cap)) {
            0 => {}
            1 => return Ok(false),
            _ => return Err(error("reading the bounding set", last_errno())),
        }
    }
    Ok(true)
}

/// Whether this process holds any capability, for the audit record.
pub fn held() -> Result<bool, SandboxError> {
    let now = capget()?;
    Ok(now
        .iter()
        .any(|d| d.effective | d.permitted | d.inheritable != 0))
}

/// Drop every capability this process has, and make sure exec cannot bring any back.
pub fn drop_all() -> Result<(), SandboxError> {
    let before = capget()?;
    let has_setpcap = before[0].effective & (1 << CAP_SETPCAP) != 0;
    // How many capabilities the kernel knows, found while dropping them.
    let mut known: u32 = 64;
    if has_setpcap {
        let bits = SECBIT_NOROOT
            | SECBIT_NOROOT_LOCKED
            | SECBIT_NO_CAP_AMBIENT_RAISE
            | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
        if prctl(libc::PR_SET_SECUREBITS, bits) != 0 {
            return Err(error("securebits", last_errno()));
        }
        // Every capability this kernel knows, lowest first, until it answers that
        // there is no such capability: cheaper than reading the set first (a read of
        // /proc/self/status costs some twenty drops).
        for cap in 0..64 {
            if prctl(libc::PR_CAPBSET_DROP, libc::c_ulong::from(cap)) != 0 {
                if cap > 0 && last_errno().raw_os_error() == Some(libc::EINVAL) {
                    known = cap;
                    break;
                }
                return Err(error(
                    &format!("bounding set, capability {cap}"),
                    last_errno(),
                ));
            }
        }
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

    // Check, never assume.
    if capget()? != empty {
        return Err(error("check", "capabilities remain after dropping them"));
    }
    if has_setpcap && !bounding_set_empty(known)? {
        return Err(error("check", "capabilities remain in the bounding set"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bounding_set_is_read_one_capability_at_a_time() {
        // A test process has CAP_CHOWN (0) in its bounding set.
        assert!(!bounding_set_empty(1).unwrap());
        assert!(bounding_set_empty(0).unwrap());
    }
}
