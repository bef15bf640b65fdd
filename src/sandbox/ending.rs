//! Ending what the command leaves behind: at `safe`, gate moves itself (and so the
//! command, which keeps gate's pid) into a user namespace of its own just before the
//! sandbox is enforced. A process cannot leave a user namespace, except into one it makes
//! inside, so every process the command starts, however detached (`setsid`, a double
//! fork, `nohup … &`), stays in it or beneath it, and nothing outside is in it. gate's
//! supervisor, outside, gets a descriptor of the namespace and, once the command has
//! ended, kills every process it finds there (`crate::supervisor`'s `ending`).
//!
//! The namespace maps the user's uid and gid to themselves, so the command's ids and
//! every permission check stay what they were (the kernel checks the real ids); other
//! ids (other users' and root's files and processes, supplementary groups) show as the
//! overflow id 65534 inside. The map is written from inside, where one id is all the
//! kernel allows, root included. Capabilities the namespace gives are dropped with the
//! rest before exec.
//!
//! Where no such namespace can be made (user namespaces off, AppArmor's restriction, a
//! sandbox around gate that keeps /proc read-only), nothing is ended and the record and
//! `gate doctor` say why ([`Plan::NotEnded`]). Once the namespace is made, a map that
//! cannot be written is an error: the command does not run.

use std::io::Write;
use std::os::fd::OwnedFd;

use serde_json::{Value, json};

use super::SandboxError;

/// Whether what the command leaves behind can be ended here, decided before gate's
/// supervisor is started (cheap checks: no namespace is made yet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Plan {
    /// A user namespace of the command's own, ended by the supervisor.
    Namespace,
    /// Not ended, and why: the residual, recorded and shown by `gate doctor`.
    NotEnded(String),
}

impl Plan {
    /// For the audit record's `sandbox` object.
    pub(crate) fn summary(&self) -> Value {
        match self {
            Plan::Namespace => json!({"ended": true, "by": "user_namespace"}),
            Plan::NotEnded(why) => json!({"ended": false, "why": why}),
        }
    }
}

/// AppArmor's switch (Ubuntu 23.10 and later) that gives an unprivileged process's new
/// user namespace no capabilities, so its map cannot be written.
const APPARMOR_RESTRICTION: &str = "/proc/sys/kernel/apparmor_restrict_unprivileged_userns";

/// Decide, without making anything, whether a user namespace can be made and mapped.
pub(crate) fn plan(root: bool) -> Plan {
    if !root && std::fs::read_to_string(APPARMOR_RESTRICTION).is_ok_and(|v| v.trim() == "1") {
        return Plan::NotEnded(
            "unprivileged user namespaces are restricted by AppArmor here \
             (kernel.apparmor_restrict_unprivileged_userns = 1)"
                .to_owned(),
        );
    }
    // Landlock decides on the path, so what answers now answers after unshare too. A gate
    // inside another gate's sandbox lands here: the outer gate ends what is left behind
    // when its own command ends.
    if let Err(e) = std::fs::OpenOptions::new()
        .write(true)
        .open("/proc/self/uid_map")
    {
        return Plan::NotEnded(format!(
            "/proc/self/uid_map cannot be opened for writing here ({e}): gate runs inside \
             another sandbox, and only that sandbox's end ends what the command leaves behind"
        ));
    }
    Plan::Namespace
}

fn error(step: &str, e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Setup(format!(
        "cannot set up the user namespace that ends what the command leaves behind \
         ({step}: {e})"
    ))
}

/// Move this process into a new user namespace mapping its ids to themselves, and
/// return a descriptor of it for the supervisor. `Ok(None)`: the kernel refuses new user
/// namespaces here (nothing changed; the residual, with the reason). Call last before
/// enforcing: gate must be single-threaded, and as root after the mounts that cover the
/// hidden paths.
pub(crate) fn enter() -> Result<Result<OwnedFd, String>, SandboxError> {
    let uid = nix::unistd::geteuid().as_raw();
    let gid = nix::unistd::getegid().as_raw();
    let before = (
        nix::unistd::getuid().as_raw(),
        nix::unistd::getgid().as_raw(),
    );
    // SAFETY: unshare takes flags only; gate is single-threaded, as CLONE_NEWUSER needs.
    if unsafe { libc::unshare(libc::CLONE_NEWUSER) } != 0 {
        let e = std::io::Error::last_os_error();
        return Ok(Err(format!(
            "the kernel refuses a new user namespace here (unshare: {e})"
        )));
    }
    let write = |file: &str, text: &str| -> Result<(), SandboxError> {
        std::fs::OpenOptions::new()
            .write(true)
            .open(file)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .map_err(|e| error(&format!("writing {file}"), e))
    };
    // One id each, written from inside: a wider map needs a writer with CAP_SETUID in
    // the parent namespace, which this process no longer is (root included). A map of
    // the group written so needs setgroups refused first.
    write("/proc/self/setgroups", "deny\n")?;
    write("/proc/self/uid_map", &format!("{uid} {uid} 1\n"))?;
    write("/proc/self/gid_map", &format!("{gid} {gid} 1\n"))?;
    let after = (
        nix::unistd::getuid().as_raw(),
        nix::unistd::getgid().as_raw(),
    );
    let effective = (
        nix::unistd::geteuid().as_raw(),
        nix::unistd::getegid().as_raw(),
    );
    if after != before || effective != (uid, gid) {
        return Err(error(
            "check",
            format!(
                "the ids changed (uid {} gid {} before, {} {} after)",
                before.0, before.1, after.0, after.1
            ),
        ));
    }
    let ns =
        std::fs::File::open("/proc/self/ns/user").map_err(|e| error("/proc/self/ns/user", e))?;
    Ok(Ok(OwnedFd::from(ns)))
}

/// For `gate doctor`: whether a run would end what its command leaves behind, tried in a
/// throwaway child (a fork, a namespace, its maps). `Err`: a run would make the namespace
/// and fail to map it, so commands at `safe` would not run.
pub(crate) fn probe(root: bool) -> Result<Plan, String> {
    let plan = plan(root);
    if plan != Plan::Namespace {
        return Ok(plan);
    }
    // SAFETY: gate is single-threaded; the child makes system calls and exits.
    match unsafe { nix::unistd::fork() } {
        Err(e) => Err(format!("cannot try it (fork: {e})")),
        Ok(nix::unistd::ForkResult::Child) => {
            let code = match enter() {
                Ok(Ok(_)) => 0,
                Ok(Err(_)) => 3,
                Err(_) => 4,
            };
            // SAFETY: ends the child at once.
            unsafe { libc::_exit(code) }
        }
        Ok(nix::unistd::ForkResult::Parent { child }) => loop {
            use nix::sys::wait::{WaitStatus, waitpid};
            match waitpid(child, None) {
                Err(nix::errno::Errno::EINTR) => continue,
                Ok(WaitStatus::Exited(_, 0)) => return Ok(Plan::Namespace),
                Ok(WaitStatus::Exited(_, 3)) => {
                    return Ok(Plan::NotEnded(
                        "the kernel refuses a new user namespace here".to_owned(),
                    ));
                }
                other => {
                    return Err(format!(
                        "a user namespace can be made here but its map cannot be written \
                         ({other:?})"
                    ));
                }
            }
        },
    }
}
