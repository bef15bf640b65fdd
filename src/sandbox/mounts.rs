//! Hiding by covering, for root: the hidden paths are mounted over in a private mount
//! namespace, so Landlock need not walk around them.
//!
//! Landlock only grants, so hiding one file means granting each of its siblings on its
//! own ([`super::landlock`]): for root's secrets in `/etc`, about 140 rules a command.
//! Root holds `CAP_SYS_ADMIN` until gate drops its capabilities, so gate can do it the
//! other way round. In its own process (no fork: the pid, exit status and signals stay
//! the command's) it:
//!
//! 1. moves into a new mount namespace (`unshare(CLONE_NEWNS)`), a copy of the one it
//!    was in;
//! 2. makes every mount in it a slave (`MS_REC | MS_SLAVE`): mounts the host makes later
//!    still appear inside, and nothing done inside reaches the host;
//! 3. makes one small tmpfs, detached (never mounted anywhere), holding an empty file and
//!    an empty directory, both mode 0 and owned by root, and makes that mount read-only,
//!    `nosuid`, `nodev` and `noexec`;
//! 4. puts a copy of the empty file over each hidden file, and of the empty directory
//!    over each hidden directory, and checks that each path now leads to the tmpfs;
//! 5. mounts the tmpfs itself over the first hidden directory, on top of its cover, so
//!    that closing it unmounts nothing (an unmount waits for an RCU grace period);
//!    it goes with the namespace when the command ends.
//!
//! Inside, a hidden path is then an empty file or directory that uid 0 without
//! capabilities can neither read, list, change nor (the mount being read-only) `chmod`;
//! what lies beneath has no name left in the namespace. The command cannot undo it:
//! after this, gate drops every capability, and Landlock refuses every mount, unmount
//! and move of a mount to a sandboxed process, in any namespace. A new user namespace
//! gives it no way round either: the mounts it would copy are locked together, and the
//! kernel refuses to clone a tree without the mounts on top of it.
//!
//! Any step that fails (a container without `CAP_SYS_ADMIN`, a seccomp profile that
//! refuses these calls) leaves the hiding to Landlock, which needs nothing of this: the
//! mounts made so far only hide more. The caller says which way it went.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

// linux/mount.h (the new mount API, Linux 5.2; mount_setattr, 5.12).
const FSOPEN_CLOEXEC: libc::c_uint = 1;
const FSCONFIG_SET_STRING: libc::c_uint = 1;
const FSCONFIG_CMD_CREATE: libc::c_uint = 6;
const FSMOUNT_CLOEXEC: libc::c_uint = 1;
const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;
const MOUNT_ATTR_NODEV: u64 = 0x4;
const MOUNT_ATTR_NOEXEC: u64 = 0x8;
const OPEN_TREE_CLONE: libc::c_uint = 1;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;

/// `struct mount_attr` (linux/mount.h).
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// Names in the tmpfs.
const EMPTY_FILE: &str = "file";
const EMPTY_DIR: &str = "dir";

fn cstring(text: &str) -> CString {
    CString::new(text).expect("no NUL in gate's own strings")
}

fn failed(step: &str) -> String {
    format!("{step}: {}", std::io::Error::last_os_error())
}

/// A descriptor a system call returned, owned; or why not.
fn owned(rc: libc::c_long, step: &str) -> Result<OwnedFd, String> {
    if rc < 0 {
        return Err(failed(step));
    }
    let fd = RawFd::try_from(rc).map_err(|_| format!("{step}: descriptor out of range"))?;
    // SAFETY: the kernel just returned `fd` as a new descriptor of this process, and
    // nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn check(rc: libc::c_long, step: &str) -> Result<(), String> {
    if rc != 0 {
        return Err(failed(step));
    }
    Ok(())
}

/// Cover each of `paths` (canonical, existing) in a new mount namespace of this process,
/// or say why not. Only for a process that may mount (root); see the module doc.
pub(crate) fn cover(paths: &[impl AsRef<Path>], kinds: &[(PathBuf, bool)]) -> Result<(), String> {
    let namespace = || {
        nix::sys::stat::stat("/proc/self/ns/mnt")
            .map(|st| (st.st_dev, st.st_ino))
            .map_err(|e| format!("cannot tell the mount namespace (/proc/self/ns/mnt: {e})"))
    };
    let before = namespace()?;
    // SAFETY: unshare takes a flag word and touches no memory of ours.
    if unsafe { libc::unshare(libc::CLONE_NEWNS) } != 0 {
        return Err(failed("unshare(CLONE_NEWNS)"));
    }
    // A layer that answers unshare with success without acting would have the covers
    // made in the caller's namespace, the host's: /etc/shadow empty for everyone.
    if namespace()? == before {
        return Err("unshare(CLONE_NEWNS) answered success but made no mount namespace".to_owned());
    }
    let root = cstring("/");
    // SAFETY: `root` is a valid C string for the whole call; null source, type and data
    // are allowed for a propagation change.
    let rc = unsafe {
        libc::mount(
            std::ptr::null(),
            root.as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_SLAVE,
            std::ptr::null(),
        )
    };
    if rc != 0 {
        return Err(failed("making the mounts slaves"));
    }
    let empty = empty_tmpfs()?;
    let tmpfs_dev = nix::sys::stat::fstat(&empty)
        .map_err(|e| format!("fstat of the tmpfs: {e}"))?
        .st_dev;
    let mut a_directory = None;
    for path in paths {
        let path = path.as_ref();
        let known = kinds
            .iter()
            .find(|(p, _)| p.as_os_str() == path.as_os_str())
            .map(|&(_, is_dir)| is_dir);
        if cover_one(&empty, path, known)? && a_directory.is_none() {
            a_directory = Some(path);
        }
        // Check, never assume: the name now leads to the tmpfs.
        let now = std::fs::symlink_metadata(path)
            .map_err(|e| format!("{} after covering it: {e}", path.display()))?;
        if now.dev() != tmpfs_dev {
            return Err(format!("{} is still not covered", path.display()));
        }
    }
    // The tmpfs itself is still detached, and closing its last descriptor would unmount
    // it, which makes the kernel wait for an RCU grace period (about 0.15 ms) before
    // the command starts. Attached, it is taken down with the namespace when the
    // command ends, with the rest. Its root is a directory of mode 0 too (what it holds
    // cannot be listed), so it goes over the cover of a hidden directory.
    if let Some(dir) = a_directory {
        attach(&empty, dir)?;
    }
    Ok(())
}

/// Mount the detached tree `mount` on `path`, on top of what is there.
fn attach(mount: &OwnedFd, path: &Path) -> Result<(), String> {
    let what = format!("covering {}", path.display());
    let target = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| format!("{}: a NUL in the path", path.display()))?;
    let here = cstring("");
    // SAFETY: both strings are valid C strings for the call; the descriptor is open.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            mount.as_raw_fd(),
            here.as_ptr(),
            libc::AT_FDCWD,
            target.as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH,
        )
    };
    check(rc, &what)
}

/// A detached, read-only tmpfs holding an empty file and an empty directory, mode 0.
fn empty_tmpfs() -> Result<OwnedFd, String> {
    let tmpfs = cstring("tmpfs");
    // SAFETY: `tmpfs` is a valid C string for the call; the flags are plain integers.
    let fs = owned(
        unsafe { libc::syscall(libc::SYS_fsopen, tmpfs.as_ptr(), FSOPEN_CLOEXEC) },
        "fsopen(tmpfs)",
    )?;
    // Its root directory too is mode 0 (tmpfs makes it 1777 by default). Its size does
    // not matter: it is read-only once the two entries are made.
    let (key, value) = (cstring("mode"), cstring("0"));
    // SAFETY: both strings are valid C strings for the call; aux 0 is what
    // FSCONFIG_SET_STRING takes.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_fsconfig,
            fs.as_raw_fd(),
            FSCONFIG_SET_STRING,
            key.as_ptr(),
            value.as_ptr(),
            0,
        )
    };
    check(rc, "fsconfig(tmpfs, mode=0)")?;
    // SAFETY: FSCONFIG_CMD_CREATE takes no key, value or aux.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_fsconfig,
            fs.as_raw_fd(),
            FSCONFIG_CMD_CREATE,
            std::ptr::null::<libc::c_char>(),
            std::ptr::null::<libc::c_void>(),
            0,
        )
    };
    check(rc, "creating the tmpfs")?;
    // SAFETY: fsmount takes the descriptor and two flag words.
    let mnt = owned(
        unsafe {
            libc::syscall(
                libc::SYS_fsmount,
                fs.as_raw_fd(),
                FSMOUNT_CLOEXEC,
                MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
            )
        },
        "fsmount(tmpfs)",
    )?;
    let (file, dir) = (cstring(EMPTY_FILE), cstring(EMPTY_DIR));
    // SAFETY: `dir` is a valid C string for the call.
    if unsafe { libc::mkdirat(mnt.as_raw_fd(), dir.as_ptr(), 0) } != 0 {
        return Err(failed("the empty directory"));
    }
    let flags = libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC;
    // SAFETY: `file` is a valid C string for the call; mode 0 is passed as the
    // variadic mode argument O_CREAT needs.
    let made = unsafe { libc::openat(mnt.as_raw_fd(), file.as_ptr(), flags, 0 as libc::c_uint) };
    drop(owned(made.into(), "the empty file")?);
    let attr = MountAttr {
        attr_set: MOUNT_ATTR_RDONLY,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    let here = cstring("");
    // SAFETY: `here` and `attr` live for the whole call; the size passed is the size of
    // the struct the kernel reads.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            mnt.as_raw_fd(),
            here.as_ptr(),
            libc::AT_EMPTY_PATH,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    check(rc, "making the tmpfs read-only")?;
    Ok(mnt)
}

/// Mount a copy of the empty file or directory over `path`; whether it is a directory.
/// `known`: whether it is a directory, when the spec saw it.
fn cover_one(empty: &OwnedFd, path: &Path, known: Option<bool>) -> Result<bool, String> {
    let is_dir = match known {
        Some(is_dir) => is_dir,
        None => std::fs::symlink_metadata(path)
            .map_err(|e| format!("{}: {e}", path.display()))?
            .is_dir(),
    };
    let source = cstring(if is_dir { EMPTY_DIR } else { EMPTY_FILE });
    let what = format!("covering {}", path.display());
    // SAFETY: `source` is a valid C string for the call; the flags are plain integers.
    let tree = owned(
        unsafe {
            libc::syscall(
                libc::SYS_open_tree,
                empty.as_raw_fd(),
                source.as_ptr(),
                OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint,
            )
        },
        &what,
    )?;
    attach(&tree, path)?;
    // Left open for exec to close (close-on-exec): closing an attached mount's descriptor
    // does nothing but cost a system call.
    let _ = std::os::fd::IntoRawFd::into_raw_fd(tree);
    Ok(is_dir)
}
