//! What the kernel gives the safe level, in words: Landlock's ABI and features, why
//! Landlock or seccomp is missing (a container's profile, a boot parameter), and what
//! marks every command gate runs.

use crate::sandbox::{self, Kernel, Mark, mark};

use super::Report;

/// Landlock's features by ABI version, in words.
pub(super) const LANDLOCK_FEATURES: [(i32, &str); 7] = [
    (1, "filesystem rules"),
    (2, "link and rename control"),
    (3, "truncate control"),
    (4, "TCP port rules"),
    (5, "device ioctl control"),
    (6, "signal and abstract socket scoping"),
    (7, "audit logging control"),
];

/// What marks the commands gate runs, and what that means here (see
/// [`crate::sandbox::mark`]).
pub(super) struct Marking {
    pub(super) mark: Mark,
    /// Yama's `ptrace_scope`, when Yama is there.
    pub(super) ptrace_scope: Option<u8>,
    /// This process runs with no_new_privs itself: the approver tools refuse to run here.
    pub(super) here: bool,
}

impl Marking {
    pub(super) fn gather(kernel: &Kernel) -> Marking {
        Marking {
            mark: Mark::for_abi(kernel.landlock_abi),
            ptrace_scope: mark::ptrace_scope(),
            here: mark::this_process_marked(),
        }
    }

    /// Whether commands are kept from tracing the broker and the person's processes: by
    /// their Landlock domain, or by Yama (scope 1 and up: only descendants, or none).
    pub(super) fn ptrace_stopped(&self) -> bool {
        self.mark.has_domain() || self.ptrace_scope.is_some_and(|s| s >= 1)
    }

    pub(super) fn commands(&self, kernel: &Kernel) -> String {
        let yama = match self.ptrace_scope {
            Some(scope) => format!("Yama's ptrace_scope is {scope}"),
            None => "no Yama".to_owned(),
        };
        match self.mark {
            Mark::Scoped => format!(
                "every command gate runs gets no_new_privs and a Landlock domain that scopes \
                 abstract Unix sockets: it cannot answer requests, gain privileges through \
                 setuid programs, trace or read the memory of the broker, the agent or your \
                 other processes, or reach an abstract socket bound outside it, such as an X \
                 server's ({yama})"
            ),
            Mark::Domain => format!(
                "every command gate runs gets no_new_privs and a Landlock domain: it cannot \
                 answer requests, gain privileges through setuid programs, or trace or read \
                 the memory of the broker, the agent or your other processes ({yama}); on \
                 this kernel (Landlock ABI {}, below {}) that domain also refuses mounts, \
                 even in a command's own namespaces",
                kernel.landlock_abi,
                mark::SCOPED_ABI
            ),
            Mark::NoNewPrivsOnly if self.ptrace_stopped() => format!(
                "every command gate runs gets no_new_privs only (Landlock ABI {}; a domain needs \
                 ABI {}): it cannot answer requests or gain privileges through setuid programs, \
                 and {yama}, so it cannot trace the broker or your other processes either",
                kernel.landlock_abi,
                mark::DOMAIN_ABI
            ),
            Mark::NoNewPrivsOnly => format!(
                "every command gate runs gets no_new_privs only (Landlock ABI {}; a domain needs \
                 ABI {}): it cannot answer requests or gain privileges through setuid programs, \
                 but it could trace or read the memory of the broker and your other processes \
                 ({yama}; set kernel.yama.ptrace_scope = 1 to stop that)",
                kernel.landlock_abi,
                mark::DOMAIN_ABI
            ),
        }
    }

    pub(super) fn this_process(&self) -> &'static str {
        if self.here {
            "runs with no_new_privs (inside a command gate ran, or another sandbox): gate \
             approve, deny, pending, watch and serve refuse to run here, and a broker would \
             refuse approvers from here"
        } else {
            "runs without no_new_privs: approver tools work here"
        }
    }
}

pub(super) fn landlock_features(kernel: &Kernel) -> Vec<&'static str> {
    LANDLOCK_FEATURES
        .iter()
        .filter(|(abi, _)| *abi <= kernel.landlock_abi)
        .map(|(_, name)| *name)
        .collect()
}

/// What `gate doctor` needs to tell a container from a kernel: the errno of each
/// missing layer, whether a seccomp filter surrounds this process, and which security
/// modules the kernel runs (the `lsm=` boot parameter, the active list where securityfs
/// is mounted).
pub(super) struct Absent {
    pub(super) landlock: Result<i32, i32>,
    pub(super) seccomp: Result<(), i32>,
    pub(super) filtered: bool,
    pub(super) lsm_param: Option<String>,
    pub(super) active: Option<String>,
}

impl Absent {
    pub(super) fn gather() -> Absent {
        let cmdline = std::fs::read_to_string("/proc/cmdline").unwrap_or_default();
        Absent {
            landlock: sandbox::landlock_answer(),
            seccomp: sandbox::seccomp_answer(),
            filtered: sandbox::under_seccomp_filter(),
            lsm_param: cmdline
                .split_whitespace()
                .find_map(|arg| arg.strip_prefix("lsm="))
                .map(str::to_owned),
            active: std::fs::read_to_string("/sys/kernel/security/lsm")
                .ok()
                .map(|list| list.trim().to_owned()),
        }
    }
}

/// What the container's seccomp profile must allow for the safe level.
pub(super) const LANDLOCK_CALLS: &str = "landlock_create_ruleset, landlock_add_rule and \
                              landlock_restrict_self";

/// Why Landlock is missing and what to change, from the errno of its version query,
/// whether a seccomp filter surrounds this process, the `lsm=` boot parameter and the
/// kernel's active security modules (when known). Pure, for the table test below.
pub(super) fn landlock_absent(
    errno: i32,
    filtered: bool,
    lsm_param: Option<&str>,
    active: Option<&str>,
) -> String {
    let runs_landlock = active.map(|list| list.split(',').any(|m| m == "landlock"));
    let profile = format!(
        "allow {LANDLOCK_CALLS} in it (Docker and Podman: --security-opt \
         seccomp=PROFILE.json with them allowed, or a newer runtime whose default profile \
         has them), or run gate outside the container"
    );
    match errno {
        libc::EPERM if filtered => format!(
            "not available: refused (EPERM) by the seccomp filter this process runs under, as \
             a container's seccomp profile refuses it, not missing from the kernel; {profile}"
        ),
        libc::ENOSYS if filtered && runs_landlock == Some(true) => format!(
            "not available: refused (ENOSYS) by the seccomp filter this process runs under, \
             though the kernel runs Landlock (/sys/kernel/security/lsm lists it), as a \
             container's profile older than the call refuses it; {profile}"
        ),
        libc::ENOSYS if filtered => format!(
            "not available (ENOSYS): this kernel lacks Landlock, or the seccomp filter this \
             process runs under refuses it, as a container's profile older than the call does; \
             run `gate doctor` on the host: if Landlock is there, {profile}"
        ),
        libc::ENOSYS => "not built into this kernel (ENOSYS: Linux before 5.13, or built \
                         without CONFIG_SECURITY_LANDLOCK); use a kernel that has it"
            .to_owned(),
        libc::EOPNOTSUPP => {
            let chosen = match lsm_param {
                Some(list) => format!("the boot parameter lsm={list} leaves it out"),
                None => "the kernel's built-in list of security modules (CONFIG_LSM) leaves it \
                         out"
                .to_owned(),
            };
            let now = active
                .map(|list| format!(" (active now: {list})"))
                .unwrap_or_default();
            format!(
                "built into this kernel but turned off at boot (EOPNOTSUPP): {chosen}{now}; add \
                 landlock to the boot parameter lsm=, keeping the modules listed there (with \
                 GRUB: GRUB_CMDLINE_LINUX in /etc/default/grub, then update-grub), and reboot"
            )
        }
        e => format!(
            "not available: the version query answered {}{}",
            std::io::Error::from_raw_os_error(e),
            if filtered {
                format!(
                    ", maybe the seccomp filter this process runs under (a container's \
                     profile): {profile}"
                )
            } else {
                String::new()
            }
        ),
    }
}

/// Why seccomp filters cannot be loaded, and what to change.
pub(super) fn seccomp_absent(errno: i32, filtered: bool) -> String {
    match errno {
        libc::EPERM | libc::ENOSYS | libc::EACCES if filtered => format!(
            "not available: the seccomp() call is refused ({}) by the seccomp filter this \
             process runs under, as a container's profile may refuse it; allow seccomp() in \
             the profile (Docker and Podman: --security-opt seccomp=PROFILE.json), or run gate \
             outside the container",
            match errno {
                libc::EPERM => "EPERM",
                libc::ENOSYS => "ENOSYS",
                _ => "EACCES",
            }
        ),
        libc::EINVAL | libc::ENOSYS => {
            "not built into this kernel (CONFIG_SECCOMP_FILTER is off); use a kernel that has it"
                .to_owned()
        }
        e => format!(
            "not available: seccomp() answered {}",
            std::io::Error::from_raw_os_error(e)
        ),
    }
}

impl Report {
    pub(super) fn describe_landlock(&self) -> String {
        match self.absent.landlock {
            Err(errno) if self.kernel.landlock_abi == 0 => landlock_absent(
                errno,
                self.absent.filtered,
                self.absent.lsm_param.as_deref(),
                self.absent.active.as_deref(),
            ),
            _ => format!(
                "ABI {}: {}",
                self.kernel.landlock_abi,
                landlock_features(&self.kernel).join(", ")
            ),
        }
    }

    pub(super) fn describe_seccomp(&self) -> String {
        match self.absent.seccomp {
            Ok(()) => "available".to_owned(),
            Err(errno) => seccomp_absent(errno, self.absent.filtered),
        }
    }
}
