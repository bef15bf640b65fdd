//! The mark every command gate runs carries, at every level: two kernel properties that
//! the command and everything it starts inherit and can never drop.
//!
//! - **no_new_privs** (`prctl(PR_SET_NO_NEW_PRIVS)`): setuid and file capabilities give
//!   nothing, so `sudo`, `su`, `crontab` and `at` cannot run anything as someone else or
//!   later, outside gate. It also shows: `NoNewPrivs: 1` in `/proc/PID/status`. The
//!   approver side reads that — the broker refuses approver tools that carry it, a
//!   requester refuses a listener that carries it, and the tools refuse to start with it
//!   ([`crate::approval::peer`]) — so a command cannot list, approve or deny requests,
//!   nor stand in for the broker, whatever it does with its environment or files.
//! - **a Landlock domain that restricts no file access**. What every domain brings is
//!   Landlock's ptrace rule: a process in a domain may trace, or read the memory of, only
//!   processes in the same domain or one nested in it. A command can no longer attach to,
//!   read `/proc/PID/mem` of, or take descriptors from (`pidfd_getfd`) the broker, the
//!   agent or the person's other processes. Signals are not scoped: agents start a server
//!   in one command and stop it in the next. Which domain depends on the kernel:
//!   - Landlock ABI 6 and later (Linux 6.12): a domain that handles no file right and
//!     only scopes abstract Unix sockets ([`Mark::Scoped`]). Files, renames and mounts
//!     are untouched (bubblewrap, `unshare -m`, rootless containers keep working); a
//!     command cannot connect to an abstract socket that a process outside its domain
//!     bound, which also closes deputies that listen there (an X server, whose clients
//!     can type into the person's terminal; an abstract D-Bus). X11 clients of a display
//!     outside gate fail with it, as they do inside the safe sandbox.
//!   - ABI 2 to 5: a domain that handles one file right, `REFER` (linking or renaming
//!     into another directory), and grants it beneath `/` ([`Mark::Domain`]). Landlock
//!     denies that right to every domain that handles file rights, so granting it takes
//!     nothing away; but such a domain refuses changes to the mount tree (`mount`,
//!     `umount`, `pivot_root`, also inside new namespaces), and a rename or link in a tree
//!     not beneath this `/` fails with `EXDEV`.
//!   - ABI 1 (Linux 5.13 to 5.18) or no Landlock: a domain would refuse every rename into
//!     another directory (`REFER` cannot be granted there), or there is none to make:
//!     the mark is no_new_privs alone, and `gate doctor` says that commands could trace
//!     processes of the user's (unless Yama's `ptrace_scope` is 1 or more).
//!
//! If no_new_privs cannot be set, or the domain cannot be made (Landlock nests at most 16
//! domains), nothing runs (status 125).
//!
//! At the `safe` level the sandbox is the mark: its own domain and no_new_privs, set in
//! the same order (no_new_privs, then the domain), so nothing is done twice.

use std::fmt;

use landlock::{
    AccessFs, CompatLevel, Compatible, PathBeneath, PathFd, RestrictSelfError, Ruleset,
    RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetError, RulesetStatus, Scope,
};

/// The Landlock ABI from which a domain can grant `REFER`, so that renames across
/// directories keep working inside it.
pub(crate) const DOMAIN_ABI: i32 = 2;

/// The Landlock ABI from which a domain can be made of a scope alone, handling no file
/// right (so it leaves mounts alone too).
pub(crate) const SCOPED_ABI: i32 = 6;

/// How many Landlock domains can be nested (the kernel's `LANDLOCK_MAX_NUM_LAYERS`).
pub(crate) const MAX_DOMAINS: u32 = 16;

/// What marks the commands gate runs on a kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mark {
    /// no_new_privs and a Landlock domain that only scopes abstract Unix sockets.
    Scoped,
    /// no_new_privs and a Landlock domain that handles and grants `REFER`.
    Domain,
    /// no_new_privs only: the kernel has no Landlock, or only ABI 1.
    NoNewPrivsOnly,
}

impl Mark {
    /// What a kernel with Landlock ABI `abi` (0: none) gives.
    pub(crate) fn for_abi(abi: i32) -> Mark {
        if abi >= SCOPED_ABI {
            Mark::Scoped
        } else if abi >= DOMAIN_ABI {
            Mark::Domain
        } else {
            Mark::NoNewPrivsOnly
        }
    }

    /// Whether the mark includes a Landlock domain (and so its ptrace rule).
    pub(crate) fn has_domain(self) -> bool {
        matches!(self, Mark::Scoped | Mark::Domain)
    }

    /// One word for JSON.
    pub(crate) fn word(self) -> &'static str {
        match self {
            Mark::Scoped => "no_new_privs+landlock-scope",
            Mark::Domain => "no_new_privs+landlock",
            Mark::NoNewPrivsOnly => "no_new_privs",
        }
    }
}

/// Why a command could not be marked: gate's own failure (125), and it must not run.
/// The words say what went wrong; the edge that prints it says that nothing was run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MarkError(pub String);

impl fmt::Display for MarkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for MarkError {}

/// Mark this process, which is about to exec a command. Returns what it got.
pub(crate) fn mark() -> Result<Mark, MarkError> {
    match Mark::for_abi(super::probe::landlock_abi()) {
        Mark::Scoped => domain(Mark::Scoped).map(|()| Mark::Scoped),
        Mark::Domain => domain(Mark::Domain).map(|()| Mark::Domain),
        Mark::NoNewPrivsOnly => set_no_new_privs().map(|()| Mark::NoNewPrivsOnly),
    }
}

/// no_new_privs, then the domain (the crate sets no_new_privs before restricting, as the
/// kernel requires of a process without `CAP_SYS_ADMIN`). Every step is a hard
/// requirement: the ABI was checked, so a mismatch is an error, never a silent downgrade.
fn domain(kind: Mark) -> Result<(), MarkError> {
    let cannot = |e: &dyn fmt::Display| {
        MarkError(format!(
            "cannot mark the command with its Landlock domain ({e})"
        ))
    };
    let ruleset = Ruleset::default().set_compatibility(CompatLevel::HardRequirement);
    let created: Result<RulesetCreated, RulesetError> = if kind == Mark::Scoped {
        ruleset
            .scope(Scope::AbstractUnixSocket)
            .and_then(|r| r.create())
    } else {
        let refer = AccessFs::Refer;
        let root = PathFd::new("/").map_err(|e| cannot(&e))?;
        ruleset
            .handle_access(refer)
            .and_then(|r| r.create())
            .and_then(|r| r.add_rule(PathBeneath::new(root, refer)))
    };
    let status =
        created
            .and_then(|r| r.restrict_self())
            .map_err(|e| match e {
                RulesetError::RestrictSelf(RestrictSelfError::RestrictSelfCall {
                    source, ..
                }) if source.raw_os_error() == Some(libc::E2BIG) => MarkError(format!(
                    "cannot mark the command: Landlock nests at most {MAX_DOMAINS} domains, and \
                     this gate runs inside {MAX_DOMAINS} already (gates inside commands gate \
                     ran, or other sandboxes)"
                )),
                RulesetError::RestrictSelf(RestrictSelfError::SetNoNewPrivsCall {
                    source, ..
                }) => nnp_error(&source),
                e => cannot(&e),
            })?;
    if !status.no_new_privs {
        return Err(nnp_error(&"the kernel did not set it"));
    }
    if status.ruleset != RulesetStatus::FullyEnforced {
        return Err(cannot(&format!(
            "Landlock reports the domain as {:?}",
            status.ruleset
        )));
    }
    Ok(())
}

fn set_no_new_privs() -> Result<(), MarkError> {
    // SAFETY: PR_SET_NO_NEW_PRIVS takes integer arguments only and touches no memory.
    let rc = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
    if rc != 0 {
        return Err(nnp_error(&std::io::Error::last_os_error()));
    }
    Ok(())
}

fn nnp_error(e: &dyn fmt::Display) -> MarkError {
    MarkError(format!("cannot set no_new_privs on the command ({e})"))
}

/// Whether this process runs with no_new_privs: it descends from a command gate ran (or
/// from another sandbox). `prctl(PR_GET_NO_NEW_PRIVS)`, no `/proc` needed.
pub(crate) fn this_process_marked() -> bool {
    // SAFETY: PR_GET_NO_NEW_PRIVS takes no pointer and only returns a value.
    unsafe { libc::prctl(libc::PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1 }
}

/// The `NoNewPrivs` field of a `/proc/PID/status` text: `None` when it has none (a
/// kernel older than 4.10 does not show it).
pub(crate) fn no_new_privs_in_status(status: &str) -> Option<bool> {
    status.lines().find_map(|line| {
        let value = line.strip_prefix("NoNewPrivs:")?.trim();
        match value {
            "0" => Some(false),
            "1" => Some(true),
            _ => None,
        }
    })
}

/// Yama's `ptrace_scope` (0: classic, 1: only descendants, 2: admin only, 3: none), or
/// `None` without Yama.
pub(crate) fn ptrace_scope() -> Option<u8> {
    std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope")
        .ok()?
        .trim()
        .parse()
        .ok()
}

#[cfg(test)]
mod tests;
