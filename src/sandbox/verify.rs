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
//!   writable root, so only Landlock can refuse, with `EACCES`;
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
    SandboxError(format!(
        "cannot check that Landlock acts: {why}; nothing was run"
    ))
}

/// What the check needs, made before anything is restricted.
#[derive(Debug)]
pub struct Check {
    /// Landlock's file rules are in force (ABI 1 or later).
    files: bool,
    /// An abstract socket bound outside the sandbox, and its address (ABI 6 or later).
    scope: Option<(OwnedFd, UnixAddr)>,
}

impl Check {
    /// Get ready to check the sandbox `spec` on `kernel`: see that the file probe is
    /// one only Landlock can refuse, and bind the socket for the scope probe.
    pub fn prepare(spec: &Spec, kernel: &Kernel) -> Result<Check, SandboxError> {
        let files = kernel.landlock_abi >= Feature::Filesystem.abi();
        if files {
            // /proc/self is /proc/PID for the whole process: a writable root above it
            // would let the open through by right.
            let own = PathBuf::from(format!("/proc/{}/comm", std::process::id()));
            if let Some(root) = writable_above(&spec.write, &own) {
                return Err(cannot_check(format!(
                    "the writable root {} holds {FILE}, the file gate tries to open; \
                     do not make /proc writable",
                    root.display()
                )));
            }
            nix::unistd::faccessat(AT_FDCWD, FILE, AccessFlags::W_OK, AtFlags::AT_EACCESS)
                .map_err(|e| {
                    cannot_check(format!(
                        "{FILE} is not writable by its owner here ({}); is /proc mounted?",
                        std::io::Error::from(e)
                    ))
                })?;
        }
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

    /// Try both probes in this process, now restricted.
    pub fn run(self) -> Result<(), SandboxError> {
        if self.files {
            file_refused(open_for_writing())?;
        }
        if let Some((socket, address)) = self.scope {
            let answer = reach(&address);
            drop(socket);
            scope_refused(answer)?;
        }
        Ok(())
    }
}

/// The writable root of `write` that holds `path`, if any.
fn writable_above<'a>(write: &'a [PathBuf], path: &Path) -> Option<&'a PathBuf> {
    write.iter().find(|w| path.starts_with(w))
}

/// A datagram socket bound to a name the kernel picks (autobind: an abstract name).
fn bound_socket() -> nix::Result<(OwnedFd, UnixAddr)> {
    let fd = socket(
        AddressFamily::Unix,
        SockType::Datagram,
        SockFlag::SOCK_CLOEXEC,
        None,
    )?;
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

fn open_for_writing() -> nix::Result<OwnedFd> {
    nix::fcntl::open(
        FILE,
        OFlag::O_WRONLY | OFlag::O_CLOEXEC | OFlag::O_NOCTTY,
        Mode::empty(),
    )
}

/// Connect a new datagram socket to `address`; nothing is sent.
fn reach(address: &UnixAddr) -> nix::Result<()> {
    let fd = socket(
        AddressFamily::Unix,
        SockType::Datagram,
        SockFlag::SOCK_CLOEXEC,
        None,
    )?;
    connect(fd.as_raw_fd(), address)
}

fn does_not_act(what: &str, answer: String) -> SandboxError {
    SandboxError(format!(
        "Landlock was enforced but does not act ({what} answered {answer}); nothing was run"
    ))
}

/// Whether the answer to opening [`FILE`] for writing shows the file rules in force.
fn file_refused<T>(answer: nix::Result<T>) -> Result<(), SandboxError> {
    match answer {
        Err(Errno::EACCES) => Ok(()),
        Ok(_) => Err(does_not_act(
            &format!("opening {FILE}, outside the writable roots, for writing"),
            "success".into(),
        )),
        Err(e) => Err(does_not_act(
            &format!("opening {FILE}, outside the writable roots, for writing"),
            std::io::Error::from(e).to_string(),
        )),
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
mod tests {
    use super::*;

    #[test]
    fn only_eacces_shows_the_file_rules_act() {
        assert!(file_refused::<()>(Err(Errno::EACCES)).is_ok());
        for answer in [Ok(()), Err(Errno::ENOENT), Err(Errno::EPERM)] {
            let e = file_refused(answer).unwrap_err();
            assert!(
                e.0.starts_with("Landlock was enforced but does not act"),
                "{e}"
            );
            assert!(e.0.contains("/proc/self/comm"), "{e}");
            assert!(e.0.ends_with("nothing was run"), "{e}");
        }
    }

    #[test]
    fn only_eperm_shows_the_scope_acts() {
        assert!(scope_refused(Err(Errno::EPERM)).is_ok());
        for answer in [Ok(()), Err(Errno::ECONNREFUSED), Err(Errno::EACCES)] {
            let e = scope_refused(answer).unwrap_err();
            assert!(e.0.contains("abstract Unix socket"), "{e}");
            assert!(e.0.ends_with("nothing was run"), "{e}");
        }
    }

    #[test]
    fn without_landlock_in_force_both_probes_get_through() {
        // This test process is not restricted: the probes must see that.
        let check = Check {
            files: true,
            scope: Some(bound_socket().unwrap()),
        };
        let e = check.run().unwrap_err();
        assert!(e.0.contains("/proc/self/comm"), "{e}");
        let check = Check {
            files: false,
            scope: Some(bound_socket().unwrap()),
        };
        let e = check.run().unwrap_err();
        assert!(e.0.contains("abstract Unix socket"), "{e}");
    }

    #[test]
    fn outside_a_sandbox_unix_sockets_can_be_made() {
        // So the scope probe is skipped only where they cannot.
        assert!(any_unix_socket());
    }

    #[test]
    fn a_writable_proc_leaves_nothing_to_check() {
        let own = Path::new("/proc/42/comm");
        let write = [PathBuf::from("/work"), PathBuf::from("/proc")];
        assert_eq!(writable_above(&write, own), Some(&write[1]));
        assert_eq!(writable_above(&write[..1], own), None);
        // A neighbour's name is no parent.
        assert_eq!(writable_above(&[PathBuf::from("/pro")], own), None);
    }
}
