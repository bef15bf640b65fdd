//! The Landlock ruleset: filesystem, TCP and scopes.
//!
//! Landlock only grants. To make everything readable *except* a denied path, gate walks
//! from `/` down the denied path's ancestors and grants each sibling on the way
//! separately; the ancestors themselves get only the right to list their entries. The
//! same walk keeps write grants away from denied and write-protected paths inside a
//! writable directory. As root, where [`super::mounts`] covered the denied paths, they
//! are not walked around (the walk still leaves out `/dev` and the write-protected paths).
//!
//! Consequences, documented in docs/sandbox.md: an entry created in an ancestor directory
//! after the sandbox starts is not readable; the names of the entries in a denied
//! directory can be listed (their contents cannot be read); a file cannot be created
//! directly in a writable directory that contains a protected path; symbolic links are
//! never granted themselves (access through one is decided at its target).

use std::ffi::{CStr, CString, OsStr};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use nix::fcntl::{AtFlags, OFlag};
use nix::sys::stat::Mode;

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, NetPort, Ruleset,
    RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetStatus, Scope,
};

use super::listing::for_each_entry;
use super::paths::{same, under};
use super::{Feature, Kernel, Network, SandboxError, Spec};

/// The ABI whose rights gate asks for: everything up to scoping.
const TARGET: ABI = ABI::V6;

/// Device files a shell and a terminal need, read, written and (for terminals) ioctl'd,
/// by name in /dev and whether each is a directory. Of /dev/pts, only the multiplexer
/// (where /dev/ptmx may point) and the terminals gate was handed ([`Spec::terminals`]);
/// the directory itself can be listed.
const DEVICES: [(&str, bool); 8] = [
    ("null", false),
    ("zero", false),
    ("full", false),
    ("random", false),
    ("urandom", false),
    ("tty", false),
    ("ptmx", false),
    ("pts/ptmx", false),
];

fn read_access() -> BitFlags<AccessFs> {
    AccessFs::ReadFile | AccessFs::ReadDir | AccessFs::Execute
}

/// Everything that changes the tree, except creating device nodes.
fn write_access() -> BitFlags<AccessFs> {
    AccessFs::WriteFile
        | AccessFs::RemoveDir
        | AccessFs::RemoveFile
        | AccessFs::MakeDir
        | AccessFs::MakeReg
        | AccessFs::MakeSock
        | AccessFs::MakeFifo
        | AccessFs::MakeSym
        | AccessFs::Refer
        | AccessFs::Truncate
}

fn device_access() -> BitFlags<AccessFs> {
    AccessFs::ReadFile
        | AccessFs::WriteFile
        | AccessFs::Truncate
        | AccessFs::IoctlDev
        | AccessFs::ReadDir
}

fn error(context: &str, e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Setup(format!("cannot set up the sandbox ({context}): {e}"))
}

/// A created ruleset with every rule added, not yet enforced.
pub(crate) struct Prepared {
    created: RulesetCreated,
    /// Every feature the kernel has was requested as a hard requirement.
    strict: bool,
    /// Descriptors of granted entries: handed on to be closed by exec.
    kept: Vec<OwnedFd>,
}

/// Build the ruleset for `spec`. `hidden`: the paths to walk around, those of
/// `spec.deny_read` that are not covered by mounts already ([`super::mounts`]).
pub(crate) fn prepare(
    spec: &Spec,
    kernel: &Kernel,
    hidden: &[PathBuf],
) -> Result<Prepared, SandboxError> {
    // Where the kernel has Landlock, ask for exactly the rights of its ABI (up to
    // gate's target) as hard requirements, so that a mismatch is an error, never a
    // silent downgrade; what an older ABI lacks was graded before ([`super::grade`]),
    // and the seccomp filter makes up for it. Only without Landlock at all (best
    // effort) is the ruleset left to the crate's best effort, which then enforces
    // nothing.
    let strict = kernel.landlock_abi >= Feature::Filesystem.abi();
    let (level, abi) = if strict {
        (
            CompatLevel::HardRequirement,
            ABI::from(kernel.landlock_abi.min(Feature::Scopes.abi())),
        )
    } else {
        (CompatLevel::BestEffort, TARGET)
    };
    let mut ruleset = Ruleset::default().set_compatibility(level);
    let fs_access = AccessFs::from_all(abi);
    ruleset = ruleset
        .handle_access(fs_access)
        .map_err(|e| error("filesystem rights", e))?;
    // TCP rules from ABI 4: below it, a spec with ports was refused (or runs with best
    // effort), and with the network off seccomp refuses every TCP socket anyway.
    let tcp_handled = spec.network != Network::On && kernel.landlock_abi >= Feature::TcpRules.abi();
    if tcp_handled {
        ruleset = ruleset
            .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
            .map_err(|e| error("TCP rights", e))?;
    }
    if kernel.landlock_abi >= Feature::Scopes.abi() {
        ruleset = ruleset
            .scope(Scope::Signal | Scope::AbstractUnixSocket)
            .map_err(|e| error("scopes", e))?;
    }
    let mut created = ruleset
        .create()
        .map_err(|e| error("creating the ruleset", e))?;

    // A second descriptor of the same ruleset, for the many sibling rules of the walk
    // (see `Grants::add_known`).
    let raw: Option<OwnedFd> = created
        .try_clone()
        .map_err(|e| error("duplicating the ruleset", e))?
        .into();
    let mut grants = Grants {
        raw,
        handled: fs_access & AccessFs::from_all(ABI::from(kernel.landlock_abi)),
        file_rights: AccessFs::from_file(TARGET),
        kept: Vec::new(),
    };

    // Read and execute everywhere, but for denied paths and the device files (granted
    // one by one below: a raw disk is a device file).
    let mut not_readable = hidden.to_vec();
    not_readable.push(PathBuf::from("/dev"));
    grants.grant(Path::new("/"), read_access(), &not_readable, true)?;

    // Write (and read) under the writable roots, but never to a denied or protected path.
    let mut not_writable = hidden.to_vec();
    not_writable.extend(spec.deny_write.iter().cloned());
    for root in &spec.write {
        grants.grant(root, read_access() | write_access(), &not_writable, false)?;
    }

    let dev_hidden = spec
        .deny_read
        .iter()
        .any(|d| Path::new("/dev").starts_with(d));
    let dev = nix::fcntl::open(
        "/dev",
        OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    );
    if let Err(e) = &dev {
        tracing::debug!(%e, "/dev not granted: cannot open");
    }
    if let (false, Ok(dev)) = (dev_hidden, &dev) {
        for (name, is_dir) in DEVICES {
            let hidden = spec
                .deny_read
                .iter()
                .any(|d| Path::new("/dev").join(name).starts_with(d));
            let name = CString::new(name).expect("device names have no NUL");
            if !hidden {
                grants.add_known(dev.as_fd(), &name, device_access(), is_dir);
            }
        }
        if !spec
            .deny_read
            .iter()
            .any(|d| Path::new("/dev/pts").starts_with(d))
        {
            grants.add(Path::new("/dev/pts"), AccessFs::ReadDir.into(), Some(true))?;
        }
        for terminal in &spec.terminals {
            if !spec.deny_read.iter().any(|d| terminal.starts_with(d)) {
                grants.add(terminal, device_access(), Some(false))?;
            }
        }
    }
    // /dev itself can be listed (its descriptor, kept, carries the rule).
    if let Ok(dev) = dev {
        grants.add_fd(dev, AccessFs::ReadDir.into(), true, &"/dev");
    }

    let kept = std::mem::take(&mut grants.kept);
    drop(grants);

    if tcp_handled {
        if let Network::Tcp { connect, bind } = &spec.network {
            for &port in connect {
                (&mut created)
                    .add_rule(NetPort::new(port, AccessNet::ConnectTcp))
                    .map_err(|e| error(&format!("TCP connect port {port}"), e))?;
            }
            for &port in bind {
                (&mut created)
                    .add_rule(NetPort::new(port, AccessNet::BindTcp))
                    .map_err(|e| error(&format!("TCP bind port {port}"), e))?;
            }
        }
    }
    Ok(Prepared {
        created,
        strict,
        kept,
    })
}

struct Grants {
    /// The ruleset's descriptor (none when Landlock is unavailable, best effort).
    raw: Option<OwnedFd>,
    /// The filesystem rights the kernel handles (all of them unless best effort on an
    /// older kernel).
    handled: BitFlags<AccessFs>,
    file_rights: BitFlags<AccessFs>,
    /// Descriptors of granted entries, closed by exec.
    kept: Vec<OwnedFd>,
}

/// How many descriptors of granted entries are kept open until exec (beyond this they
/// are closed at once), well below the usual limit of 1,024.
const MAX_KEPT_FDS: usize = 512;

/// `struct landlock_path_beneath_attr` (linux/landlock.h), packed as the kernel expects.
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

const LANDLOCK_RULE_PATH_BENEATH: libc::c_int = 1;

impl Grants {
    /// Add a rule for an opened `O_PATH` descriptor with one system call, keeping the
    /// descriptor until exec (it is close-on-exec), up to a bound. gate adds rules
    /// itself rather than through the crate, which would `fstat` every descriptor:
    /// the walk grants dozens of entries whose types are known from the listing. The
    /// rights are masked to what the kernel handles (they are a subset of what the
    /// crate checked when the ruleset was created). A rule that cannot be added (the
    /// entry changed meanwhile) is not granted: the safe side.
    fn add_fd(
        &mut self,
        fd: OwnedFd,
        access: BitFlags<AccessFs>,
        is_dir: bool,
        what: &dyn std::fmt::Debug,
    ) {
        let Some(ruleset) = &self.raw else {
            return;
        };
        let mut access = access & self.handled;
        if !is_dir {
            access &= self.file_rights;
        }
        if access.is_empty() {
            return;
        }
        let attr = PathBeneathAttr {
            allowed_access: access.bits(),
            parent_fd: fd.as_raw_fd(),
        };
        // SAFETY: `attr` is a valid, initialised landlock_path_beneath_attr that lives
        // for the whole call; both descriptors are open and owned by us; the kernel only
        // reads the struct.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_landlock_add_rule,
                ruleset.as_raw_fd(),
                LANDLOCK_RULE_PATH_BENEATH,
                &attr as *const PathBeneathAttr,
                0u32,
            )
        };
        if rc != 0 {
            tracing::debug!(?what, err = %std::io::Error::last_os_error(), "not granted");
        }
        if self.kept.len() < MAX_KEPT_FDS {
            self.kept.push(fd);
        }
    }

    /// Grant `access` beneath the entry `name` of the directory `dir`, whose type is
    /// known from the listing. Symbolic links are never followed.
    fn add_known(
        &mut self,
        dir: BorrowedFd<'_>,
        name: &CStr,
        access: BitFlags<AccessFs>,
        is_dir: bool,
    ) {
        let flags = OFlag::O_PATH | OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW;
        match nix::fcntl::openat(dir, name, flags, Mode::empty()) {
            Ok(fd) => self.add_fd(fd, access, is_dir, &name),
            Err(e) => tracing::debug!(?name, %e, "not granted: cannot open"),
        }
    }

    /// Grant `access` beneath `path` (canonical). Rights that only apply to
    /// directories are left out for anything else. `is_dir`: already known, or found
    /// out by trying to open it as a directory.
    fn add(
        &mut self,
        path: &Path,
        access: BitFlags<AccessFs>,
        is_dir: Option<bool>,
    ) -> Result<(), SandboxError> {
        let as_dir = OFlag::O_PATH | OFlag::O_CLOEXEC | OFlag::O_DIRECTORY;
        let as_file = OFlag::O_PATH | OFlag::O_CLOEXEC;
        let opened = match is_dir {
            Some(true) => nix::fcntl::open(path, as_dir, Mode::empty()).map(|fd| (fd, true)),
            Some(false) => nix::fcntl::open(path, as_file, Mode::empty()).map(|fd| (fd, false)),
            None => match nix::fcntl::open(path, as_dir, Mode::empty()) {
                Err(nix::errno::Errno::ENOTDIR) => {
                    nix::fcntl::open(path, as_file, Mode::empty()).map(|fd| (fd, false))
                }
                other => other.map(|fd| (fd, true)),
            },
        };
        match opened {
            Ok((fd, is_dir)) => self.add_fd(fd, access, is_dir, &path),
            // It vanished, or cannot be opened: not granting is the safe side.
            Err(e) => tracing::debug!(?path, %e, "not granted: cannot open"),
        }
        Ok(())
    }

    /// Grant `access` beneath `root`, except beneath the `excluded` paths. When an
    /// excluded path is inside `root`, grant each entry of `root` on its own instead,
    /// recursing towards the excluded path. `list_ancestors`: let the directories on
    /// the way be listed.
    fn grant(
        &mut self,
        root: &Path,
        access: BitFlags<AccessFs>,
        excluded: &[PathBuf],
        list_ancestors: bool,
    ) -> Result<(), SandboxError> {
        self.grant_typed(root, None, access, excluded, list_ancestors)
    }

    fn grant_typed(
        &mut self,
        root: &Path,
        is_dir: Option<bool>,
        access: BitFlags<AccessFs>,
        excluded: &[PathBuf],
        list_ancestors: bool,
    ) -> Result<(), SandboxError> {
        let inside: Vec<PathBuf> = excluded
            .iter()
            .filter(|e| under(e, root))
            .cloned()
            .collect();
        if inside.is_empty() {
            return self.add(root, access, is_dir);
        }
        if inside.iter().any(|e| same(e, root)) {
            return Ok(());
        }
        // One descriptor lists the directory, opens its entries and carries its own
        // rule: fewer system calls than an `O_PATH` one for the rule and a `DIR` stream
        // (whose `fdopendir` adds an `fstat` and two `fcntl`s) for the listing.
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        let dir = match nix::fcntl::open(root, flags, Mode::empty()) {
            Ok(dir) => dir,
            Err(e) => {
                tracing::debug!(?root, %e, "not granted: cannot list");
                if list_ancestors {
                    self.add(root, AccessFs::ReadDir.into(), Some(true))?;
                }
                return Ok(());
            }
        };
        let mut towards: Vec<(PathBuf, bool)> = Vec::new();
        let listed = for_each_entry(dir.as_fd(), |name, kind| {
            if name.to_bytes() == b"." || name.to_bytes() == b".." {
                return true;
            }
            let is_dir = match kind {
                // Symbolic links are not granted: access through one is decided where
                // it points, and granting it would open the target (maybe a denied path).
                libc::DT_LNK => return true,
                libc::DT_UNKNOWN => {
                    match nix::sys::stat::fstatat(dir.as_fd(), name, AtFlags::AT_SYMLINK_NOFOLLOW) {
                        Ok(st) if st.st_mode & libc::S_IFMT == libc::S_IFLNK => return true,
                        Ok(st) => st.st_mode & libc::S_IFMT == libc::S_IFDIR,
                        Err(_) => return true,
                    }
                }
                kind => kind == libc::DT_DIR,
            };
            let path = root.join(OsStr::from_bytes(name.to_bytes()));
            if inside.iter().any(|e| under(e, &path)) {
                towards.push((path, is_dir));
            } else {
                self.add_known(dir.as_fd(), name, access, is_dir);
            }
            true
        });
        if let Err(e) = listed {
            // What was granted before the error stays granted: each is a sibling the
            // walk would grant anyway. The rest is not, the safe side.
            tracing::debug!(?root, %e, "not granted: the listing failed");
        }
        if list_ancestors {
            self.add_fd(dir, AccessFs::ReadDir.into(), true, &root);
        }
        for (path, is_dir) in towards {
            self.grant_typed(&path, Some(is_dir), access, &inside, list_ancestors)?;
        }
        Ok(())
    }
}

impl Prepared {
    /// Enforce the ruleset on this process (setting no_new_privs) and check that the
    /// kernel enforces it as asked.
    pub(crate) fn restrict(self) -> Result<Vec<OwnedFd>, SandboxError> {
        let status = self
            .created
            .restrict_self()
            .map_err(|e| error("restricting", e))?;
        if !status.no_new_privs {
            return Err(error("restricting", "no_new_privs was not set"));
        }
        match status.ruleset {
            RulesetStatus::FullyEnforced => Ok(self.kept),
            // Best effort: what is missing was found and reported before anything ran.
            _ if !self.strict => Ok(self.kept),
            other => Err(error(
                "restricting",
                format!("Landlock reports the ruleset as {other:?}"),
            )),
        }
    }
}

#[cfg(test)]
mod tests;
