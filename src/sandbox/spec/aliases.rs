//! The other names a file has through other mounts of the same filesystem (a bind
//! mount, a second mount of a disk), so that what is hidden is hidden under every name;
//! and where else a proc filesystem is mounted. Reads the kernel's mount table (or asks
//! `listmount` whether any filesystem is mounted twice); decides nothing.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::read_proc;

/// Where proc file systems are mounted, other than /proc: each holds the processes'
/// environments and memory too.
pub(crate) fn other_proc_mounts() -> Vec<PathBuf> {
    let Some(text) = read_proc("/proc/self/mountinfo") else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|line| {
            // The fields after " - " start with the file system's type.
            let (mount, fs) = line.split_once(" - ")?;
            let point = unescape(mount.split(' ').nth(4)?);
            (fs.split(' ').next() == Some("proc") && point != Path::new("/proc")).then_some(point)
        })
        .collect()
}

/// Whether no filesystem is mounted twice in this mount namespace, so that no file has a
/// second name through another mount: asked of the kernel with `listmount` and one
/// `statmount` per mount for its device (Linux 6.8), which costs a fraction of
/// `/proc/self/mountinfo`, whose text the kernel writes out path by path. False when
/// it cannot tell (an older kernel, a refusal): then the mount table is read.
pub(super) fn each_filesystem_mounted_once() -> bool {
    mount_devices().is_some_and(|mut devices| {
        let count = devices.len();
        devices.sort_unstable();
        devices.dedup();
        devices.len() == count
    })
}

/// `listmount` and `statmount` (linux/mount.h), the same numbers on these architectures.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(super) const SYS_STATMOUNT: libc::c_long = 457;

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(super) const SYS_LISTMOUNT: libc::c_long = 458;

/// `struct mnt_id_req`, its first published size (MNT_ID_REQ_SIZE_VER0).
#[repr(C)]
pub(super) struct MntIdReq {
    size: u32,
    spare: u32,
    mnt_id: u64,
    param: u64,
}

/// `LSMT_ROOT`: list from the root mount of the namespace.
pub(super) const LSMT_ROOT: u64 = u64::MAX;

/// `STATMOUNT_SB_BASIC`: the superblock's device, magic and flags.
pub(super) const STATMOUNT_SB_BASIC: u64 = 1;

/// The device (major, minor) of every mount in this mount namespace, or `None` when the
/// kernel cannot say.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(super) fn mount_devices() -> Option<Vec<(u32, u32)>> {
    let mut ids: Vec<u64> = Vec::new();
    let mut chunk = [0u64; 256];
    let mut after = 0u64;
    loop {
        let req = MntIdReq {
            size: std::mem::size_of::<MntIdReq>() as u32,
            spare: 0,
            mnt_id: LSMT_ROOT,
            param: after,
        };
        // SAFETY: `req` is a valid mnt_id_req of the size it states; `chunk` has room
        // for the number of ids passed; both live for the whole call.
        let n = unsafe {
            libc::syscall(
                SYS_LISTMOUNT,
                &req as *const MntIdReq,
                chunk.as_mut_ptr(),
                chunk.len(),
                0u32,
            )
        };
        let n = usize::try_from(n).ok()?;
        ids.extend_from_slice(&chunk[..n.min(chunk.len())]);
        if n < chunk.len() {
            break;
        }
        after = chunk[chunk.len() - 1];
    }
    // `struct statmount` is 512 bytes before its strings; none are asked for.
    let mut buf = [0u64; 64];
    let mut devices = Vec::with_capacity(ids.len());
    for id in ids {
        let req = MntIdReq {
            size: std::mem::size_of::<MntIdReq>() as u32,
            spare: 0,
            mnt_id: id,
            param: STATMOUNT_SB_BASIC,
        };
        // SAFETY: `req` is a valid mnt_id_req of the size it states, and `buf` is
        // writable for the size passed; both live for the whole call.
        let rc = unsafe {
            libc::syscall(
                SYS_STATMOUNT,
                &req as *const MntIdReq,
                buf.as_mut_ptr(),
                std::mem::size_of_val(&buf),
                0u32,
            )
        };
        // The mask (bytes 8 to 15) says what was written; the device is bytes 16 to 23.
        if rc != 0 || buf[1] & STATMOUNT_SB_BASIC == 0 {
            return None;
        }
        devices.push(((buf[2] & 0xffff_ffff) as u32, (buf[2] >> 32) as u32));
    }
    Some(devices)
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub(super) fn mount_devices() -> Option<Vec<(u32, u32)>> {
    None
}

/// One line of /proc/self/mountinfo: the filesystem, the directory of it mounted, and
/// where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Mount {
    pub(super) device: String,
    pub(super) root: PathBuf,
    pub(super) point: PathBuf,
}

pub(super) fn parse_mountinfo(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split(' ');
            let device = fields.nth(2)?.to_owned();
            let root = unescape(fields.next()?);
            let point = unescape(fields.next()?);
            Some(Mount {
                device,
                root,
                point,
            })
        })
        .collect()
}

/// A mountinfo path: space, tab, newline and backslash are written as `\ooo`.
pub(super) fn unescape(field: &str) -> PathBuf {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| bytes[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match octal {
            Some(d) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    PathBuf::from(OsStr::from_bytes(&out))
}

/// The names `path` (canonical) also has in other mounts of its filesystem.
pub(super) fn alias_candidates(mounts: &[Mount], path: &Path) -> Vec<PathBuf> {
    // The mount `path` is in: the deepest mount point above it, the last one mounted
    // when several are stacked.
    let Some(home) = mounts
        .iter()
        .filter(|m| path.starts_with(&m.point))
        .max_by_key(|m| m.point.components().count())
    else {
        return Vec::new();
    };
    let Ok(below) = path.strip_prefix(&home.point) else {
        return Vec::new();
    };
    let within = home.root.join(below);
    mounts
        .iter()
        .filter(|m| m.device == home.device && m.point != home.point)
        .filter_map(|m| {
            let rest = within.strip_prefix(&m.root).ok()?;
            Some(if rest.as_os_str().is_empty() {
                m.point.clone()
            } else {
                m.point.join(rest)
            })
        })
        .filter(|alias| alias != path)
        .collect()
}

/// The other names of `paths` that really are the same file now (a mount over a
/// candidate, or a different tree at that name, is no alias).
pub(super) fn aliases(mounts: &[Mount], paths: &[PathBuf]) -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let mut out = Vec::new();
    for path in paths {
        let candidates = alias_candidates(mounts, path);
        if candidates.is_empty() {
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            continue;
        };
        for alias in candidates {
            if std::fs::symlink_metadata(&alias)
                .is_ok_and(|m| m.dev() == meta.dev() && m.ino() == meta.ino())
            {
                out.push(alias);
            }
        }
    }
    out
}
