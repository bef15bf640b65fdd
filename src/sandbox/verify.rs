//! Checking that Landlock acts once it is in force.
//!
//! `landlock_restrict_self` answering 0 does not prove that anything is restricted: a
//! kernel bug, or a seccomp filter of a parent (a container runtime's, say) that answers
//! the call with "errno 0", makes it report success without acting, and the command would
//! run with no file rules at all. So right after restricting, gate tries two things the
//! ruleset must refuse and that change nothing either way:
//! - **files**: open `/proc/self/comm` for writing, without writing. The process owns
//!   that file and may write it by its mode (checked, with `faccessat`, when the sandbox
//!   is prepared; Landlock does not mediate `faccessat`), and it lies outside every
//!   writable root, so only Landlock can refuse, with `EACCES`. Where it cannot tell (a
//!   read-only or missing /proc), a file gate hides or protects that the process may
//!   write by its mode takes its place;
//! - **scopes** (Landlock ABI 6): connect to an abstract Unix socket that gate bound
//!   before restricting. Abstract names have no permissions, so only the scope can
//!   refuse, with `EPERM`.
//!
//! Either one answered otherwise and the command does not run (exit 125). The check is
//! made before the seccomp filter is loaded, which would refuse `socket()` itself. Where
//! no Unix socket can be made at all (a gate started inside the sandbox), the scope has
//! nothing to stop and is not tried. Inside another sandbox, the file probe shows that
//! some Landlock layer refuses, not that this one does: a command that fakes the inner
//! gate's call gains nothing over the sandbox it is already in.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{AT_FDCWD, AtFlags, OFlag};
use nix::sys::socket::{
    AddressFamily, SockFlag, SockType, UnixAddr, bind, connect, getsockname, socket,
};
use nix::sys::stat::Mode;
use nix::unistd::AccessFlags;

use super::{Feature, Kernel, SandboxError, Spec};

/// A file the process may write by its mode and Landlock must not let it open for
/// writing.
const FILE: &str = "/proc/self/comm";

fn cannot_check(why: impl std::fmt::Display) -> SandboxError {
    SandboxError::NotActing(format!("cannot check that Landlock acts: {why}"))
}

/// How the file probe opens its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    /// For writing: a file the rules keep read-only.
    Write,
    /// For reading: a file the rules hide.
    Read,
}

/// The paths the file probe chooses from (see [`target`]).
#[derive(Debug, Clone)]
struct Files {
    write: Vec<PathBuf>,
    deny_write: Vec<PathBuf>,
    deny_read: Vec<PathBuf>,
}

/// What the check needs, made before anything is restricted.
#[derive(Debug)]
pub(crate) struct Check {
    /// What the file probe chooses from, when Landlock's file rules are in force (ABI 1
    /// or later). The choice is made once restricted, with the credentials the command
    /// gets: root still holds `CAP_DAC_OVERRIDE` while preparing, which would make any
    /// file look writable by its mode.
    files: Option<Files>,
    /// An abstract socket bound outside the sandbox, and its address (ABI 6 or later).
    scope: Option<(OwnedFd, UnixAddr)>,
}

impl Check {
    /// Get ready to check the sandbox `spec` on `kernel`: note the paths the file probe
    /// chooses from, and bind the socket for the scope probe. `walked`: the hidden paths
    /// Landlock's rules keep out (none when they are covered by mounts instead, which
    /// then prove nothing about Landlock).
    pub(crate) fn prepare(
        spec: &Spec,
        kernel: &Kernel,
        walked: &[PathBuf],
    ) -> Result<Check, SandboxError> {
        let files = (kernel.landlock_abi >= Feature::Filesystem.abi()).then(|| Files {
            write: spec.write.clone(),
            deny_write: spec.deny_write.clone(),
            deny_read: walked.to_vec(),
        });
        let scope = if kernel.landlock_abi >= Feature::Scopes.abi() {
            match bound_socket() {
                Ok(bound) => Some(bound),
                // Inside a sandbox that refuses Unix sockets (a gate started by a
                // command at `safe`), the command cannot make one either: nothing can
                // reach an abstract socket, so there is nothing for the scope to stop.
                Err(Errno::EPERM | Errno::EACCES) if !any_unix_socket() => None,
                Err(e) => {
                    return Err(cannot_check(format!(
                        "binding an abstract Unix socket: {}",
                        std::io::Error::from(e)
                    )));
                }
            }
        } else {
            None
        };
        Ok(Check { files, scope })
    }

    /// Try both probes in this process, now restricted (and without capabilities).
    pub(crate) fn run(self) -> Result<(), SandboxError> {
        if let Some(files) = &self.files {
            let (file, access) = target(files)?;
            file_refused(&file, access, open(&file, access))?;
        }
        if let Some((socket, address)) = self.scope {
            let answer = reach(&address);
            drop(socket);
            scope_refused(answer)?;
        }
        Ok(())
    }
}

/// The file to try: [`FILE`] for writing; where that cannot tell (a writable root above
/// it, a read-only or missing /proc, a process that does not own its /proc files) a
/// regular file gate protects or hides that the process may write by its mode; else
/// (everything read-only, as in a container) one it hides that the process may read by
/// its mode, for reading. The ruleset must refuse each of those wherever it is; a
/// refused open leaves nothing behind, and one let through is closed unused.
fn target(spec: &Files) -> Result<(PathBuf, Access), SandboxError> {
    // /proc/self is /proc/PID for the whole process.
    let own = PathBuf::from(format!("/proc/{}/comm", std::process::id()));
    let why_not = match writable_above(&spec.write, &own) {
        Some(root) => format!("the writable root {} holds {FILE}", root.display()),
        None => match allowed_by_mode(Path::new(FILE), Access::Write) {
            Ok(()) => return Ok((PathBuf::from(FILE), Access::Write)),
            Err(e) => format!("{FILE} is not writable by its owner here ({e})"),
        },
    };
    let usable = |access| {
        move |path: &&PathBuf| {
            std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file())
                && allowed_by_mode(path, access).is_ok()
        }
    };
    let writable = spec
        .deny_write
        .iter()
        .chain(&spec.deny_read)
        .find(usable(Access::Write));
    if let Some(path) = writable {
        return Ok((path.clone(), Access::Write));
    }
    if let Some(path) = spec.deny_read.iter().find(usable(Access::Read)) {
        return Ok((path.clone(), Access::Read));
    }
    Err(cannot_check(format!(
        "{why_not}, and no file it protects or hides can be written or read by its mode; \
         mount a proc filesystem read-write at /proc, and do not make /proc writable"
    )))
}

/// Whether the mode bits (and, for writing, a read-only mount) let this process open
/// `path` so: `faccessat`, which Landlock does not mediate.
fn allowed_by_mode(path: &Path, access: Access) -> Result<(), std::io::Error> {
    let mode = match access {
        Access::Write => AccessFlags::W_OK,
        Access::Read => AccessFlags::R_OK,
    };
    nix::unistd::faccessat(AT_FDCWD, path, mode, AtFlags::AT_EACCESS).map_err(std::io::Error::from)
}

/// The writable root of `write` that holds `path`, if any.
fn writable_above<'a>(write: &'a [PathBuf], path: &Path) -> Option<&'a PathBuf> {
    write.iter().find(|w| path.starts_with(w))
}

/// A datagram socket bound to a name the kernel picks (autobind: an abstract name).
fn bound_socket() -> nix::Result<(OwnedFd, UnixAddr)> {
    let fd = datagram_socket()?;
    bind(fd.as_raw_fd(), &UnixAddr::new_unnamed())?;
    let address: UnixAddr = getsockname(fd.as_raw_fd())?;
    if address.as_abstract().is_none() {
        return Err(Errno::EINVAL);
    }
    Ok((fd, address))
}

/// Whether this process can make any Unix socket that could reach an abstract name: a
/// socket of any type, or a datagram pair (whose ends can send to a name).
fn any_unix_socket() -> bool {
    let kinds = [SockType::Datagram, SockType::Stream, SockType::SeqPacket];
    kinds
        .into_iter()
        .any(|kind| socket(AddressFamily::Unix, kind, SockFlag::SOCK_CLOEXEC, None).is_ok())
        || nix::sys::socket::socketpair(
            AddressFamily::Unix,
            SockType::Datagram,
            None,
            SockFlag::SOCK_CLOEXEC,
        )
        .is_ok()
}

/// Open `file`, without truncating, following no link at its end, and without waiting
/// (should it have become a FIFO meanwhile). Nothing is read or written.
fn open(file: &Path, access: Access) -> nix::Result<OwnedFd> {
    let how = match access {
        Access::Write => OFlag::O_WRONLY,
        Access::Read => OFlag::O_RDONLY,
    };
    nix::fcntl::open(
        file,
        how | OFlag::O_CLOEXEC | OFlag::O_NOCTTY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK,
        Mode::empty(),
    )
}

/// Connect a new datagram socket to `address`; nothing is sent.
fn reach(address: &UnixAddr) -> nix::Result<()> {
    let fd = datagram_socket()?;
    connect(fd.as_raw_fd(), address)
}

/// A new Unix datagram socket, unbound.
fn datagram_socket() -> nix::Result<OwnedFd> {
    socket(
        AddressFamily::Unix,
        SockType::Datagram,
        SockFlag::SOCK_CLOEXEC,
        None,
    )
}

fn does_not_act(what: &str, answer: String) -> SandboxError {
    SandboxError::NotActing(format!(
        "Landlock was enforced but does not act ({what} answered {answer})"
    ))
}

/// Whether the answer to opening `file` for writing shows the file rules in force.
fn file_refused<T>(
    file: &Path,
    access: Access,
    answer: nix::Result<T>,
) -> Result<(), SandboxError> {
    let what = match access {
        Access::Write => format!(
            "opening {}, which the rules keep read-only, for writing",
            file.display()
        ),
        Access::Read => format!(
            "opening {}, which the rules hide, for reading",
            file.display()
        ),
    };
    match answer {
        Err(Errno::EACCES) => Ok(()),
        Ok(_) => Err(does_not_act(&what, "success".into())),
        Err(e) => Err(does_not_act(&what, std::io::Error::from(e).to_string())),
    }
}

/// Whether the answer to reaching the socket bound outside shows the scope in force.
fn scope_refused(answer: nix::Result<()>) -> Result<(), SandboxError> {
    let what = "connecting to an abstract Unix socket bound outside the sandbox";
    match answer {
        Err(Errno::EPERM) => Ok(()),
        Ok(()) => Err(does_not_act(what, "success".into())),
        Err(e) => Err(does_not_act(what, std::io::Error::from(e).to_string())),
    }
}

#[cfg(test)]
mod tests;
