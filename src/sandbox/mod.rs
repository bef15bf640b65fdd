//! The `safe` level's sandbox, applied in gate's own process just before `execve`, so the
//! command and everything it starts inherit it and gate leaves nothing behind.
//!
//! Four layers, each closing what the others cannot:
//! - **Landlock** (filesystem): read and execute everywhere except a deny-read list of
//!   secrets; write only under the workspace, the temporary directories and a few device
//!   files. Landlock only grants, so "everything except" is built by granting each
//!   sibling on the way down to a denied path ([`landlock`]); as root, the denied paths
//!   are covered by empty read-only mounts in a private mount namespace instead, and
//!   nothing is walked around them ([`mounts`]). TCP bind and connect are
//!   refused unless allowed by port (ABI 4), and signals and abstract Unix sockets are
//!   scoped to the sandbox (ABI 6).
//! - **seccomp** ([`seccomp`]): `socket()` for any family but `AF_UNIX` is refused, which
//!   Landlock cannot do for UDP, raw, packet or MPTCP sockets; plus terminal input
//!   injection (`TIOCSTI`, `TIOCLINUX`), io_uring (it can open sockets without
//!   `socket()`), the kernel keyring, datagram socketpairs, TCP Fast Open past the
//!   connect rule, `bind`/`listen` when nothing may serve, and, as root, opening up
//!   files with group or other write bits or ACLs.
//! - With a domain list, gate's **supervisor** ([`crate::supervisor`]) outside the
//!   sandbox answers every `connect()` (seccomp user notification): one to the proxy's
//!   own address gets a connection the supervisor made; any other goes on to Landlock,
//!   which refuses it. With deny rules, it answers every `execve` too.
//! - **no_new_privs**: setuid and file capabilities give nothing.
//! - **capabilities** ([`caps`]): all dropped (bounding, permitted, effective, inheritable,
//!   ambient), so root inside cannot mount, load modules, set the hostname or reboot.
//!
//! At the other levels a command gets no sandbox, but it is still marked ([`mark`]:
//! no_new_privs and a Landlock domain that restricts no file access), so that it cannot
//! answer approval requests or trace the processes around it; at `safe` the sandbox's
//! own no_new_privs and domain are that mark.
//!
//! Enforcement is checked, never assumed. If the kernel cannot enforce everything asked
//! for, [`Sandbox::prepare`] fails and names what is missing; `best_effort` turns that into
//! a warning instead. Preparing does everything that can fail on an ordinary machine
//! (probing, opening every path, building the filter) before anything is enforced, so the
//! audit record can be written in between and a refusal never happens half-way. (As
//! root, preparing already moves gate into the mount namespace that covers the hidden
//! paths: that only hides, and restricts nothing else.) Once enforced, each layer is
//! tried ([`verify`] for Landlock, the filter's own probe for seccomp): a layer that
//! reports success without acting runs nothing.

mod caps;
pub(crate) mod ending;
mod error;
mod landlock;
mod listing;
pub(crate) mod mark;
mod mounts;
mod paths;
mod probe;
mod seccomp;
pub(crate) use seccomp::OwnExec;
pub(crate) mod spec;
mod verify;

use std::path::PathBuf;

use serde_json::{Value, json};

pub(crate) use error::SandboxError;
pub(crate) use mark::{Mark, MarkError};
pub(crate) use probe::{Kernel, landlock_answer, probe, seccomp_answer, under_seccomp_filter};

/// What the network may do inside the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Network {
    /// No sockets but `AF_UNIX`.
    Off,
    /// TCP to these ports only (connect) and on these ports only (bind); no other
    /// sockets but `AF_UNIX`.
    Tcp { connect: Vec<u16>, bind: Vec<u16> },
    /// Unrestricted.
    On,
}

/// The host names a proxied command may reach, as the settings give them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Domains {
    pub(crate) allow: Vec<String>,
    pub(crate) deny: Vec<String>,
    /// The user's name-to-address mapping (`sandbox.resolve`, `--resolve`).
    pub(crate) resolve: Vec<String>,
}

/// Everything the sandbox is built from. Paths are canonical and exist.
#[derive(Debug, Clone)]
pub(crate) struct Spec {
    /// Read, write and execute.
    pub(crate) write: Vec<PathBuf>,
    /// Neither read nor write, wherever they are.
    pub(crate) deny_read: Vec<PathBuf>,
    /// What each of `deny_read` was seen to be while the spec was built (true: a
    /// directory). Covering needs to know; a path not listed here is looked at again.
    pub(crate) hidden_kinds: Vec<(PathBuf, bool)>,
    /// Readable, never writable, even inside a writable directory (gate's own
    /// configuration and audit log, shell start-up files).
    pub(crate) deny_write: Vec<PathBuf>,
    /// Paths that would be protected but sit in a temporary directory, which must stay
    /// fully writable (reported, not enforced).
    pub(crate) unprotected: Vec<PathBuf>,
    /// The terminals gate was handed (on its standard descriptors, and its controlling
    /// terminal), read, written and ioctl'd: of all of /dev/pts, only these.
    pub(crate) terminals: Vec<PathBuf>,
    pub(crate) network: Network,
    /// Network by domain: TCP goes through the proxy, which lets these names through
    /// (`network` is then `Tcp`, with the ports the user allows directly, often none).
    pub(crate) proxy: Option<Domains>,
    /// Allow `socket(AF_UNIX)`: connections to any Unix socket reachable by path.
    pub(crate) unix_sockets: bool,
    /// Run with what the kernel can enforce, warning about the rest.
    pub(crate) best_effort: bool,
    /// Graded features the kernel must have itself (`sandbox.require`): without one,
    /// nothing runs, whatever gate could do instead.
    pub(crate) require: Vec<Feature>,
    /// Why the hidden paths cannot be walked around: one of them is inside /tmp or
    /// /dev/shm, which must stay creatable. Only covering them (as root) can hide them
    /// then; when they are left to Landlock, nothing runs.
    pub(crate) unwalkable: Option<SandboxError>,
}

/// A Landlock feature gate needs, by the ABI version that brought it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    /// Filesystem access control (ABI 1).
    Filesystem,
    /// Control of linking and renaming across directories (ABI 2).
    Refer,
    /// Control of truncation (ABI 3).
    Truncate,
    /// TCP bind and connect rules (ABI 4).
    TcpRules,
    /// Control of device ioctls (ABI 5).
    DeviceIoctl,
    /// Scoping of signals and abstract Unix sockets (ABI 6).
    Scopes,
    /// The seccomp filter.
    Seccomp,
    /// seccomp user notification with descriptor installation (ADDFD, Linux 5.9), for
    /// network by domain.
    UserNotify,
}

impl Feature {
    /// The Landlock ABI that brought it (0 for seccomp).
    pub(crate) fn abi(self) -> i32 {
        match self {
            Feature::Filesystem => 1,
            Feature::Refer => 2,
            Feature::Truncate => 3,
            Feature::TcpRules => 4,
            Feature::DeviceIoctl => 5,
            Feature::Scopes => 6,
            Feature::Seccomp | Feature::UserNotify => 0,
        }
    }

    /// Whether the sandbox's core promises rest on it: secrets unreadable and no writes
    /// outside (Landlock's filesystem rules), the network as configured (seccomp, TCP
    /// port rules, the supervisor of a domain list). Without one nothing runs, unless
    /// best effort is asked for. The others are graded ([`GRADED`]).
    pub(crate) fn is_core(self) -> bool {
        !GRADED.contains(&self)
    }

    /// The name `sandbox.require` gives a graded feature.
    pub(crate) fn key(self) -> Option<&'static str> {
        match self {
            Feature::Refer => Some("refer"),
            Feature::Truncate => Some("truncate"),
            Feature::TcpRules => Some("tcp_rules"),
            Feature::DeviceIoctl => Some("device_ioctl"),
            Feature::Scopes => Some("scopes"),
            _ => None,
        }
    }

    /// The graded feature `sandbox.require` names `key`.
    pub(crate) fn from_key(key: &str) -> Option<Feature> {
        GRADED.into_iter().find(|f| f.key() == Some(key))
    }

    /// What gate does on a kernel without this graded feature, and what stays open
    /// then (docs/sandbox.md's kernel table says the same). `unix_sockets`: whether
    /// the command may make Unix sockets.
    pub(crate) fn without(self, unix_sockets: bool) -> (&'static str, &'static str) {
        match self {
            Feature::Refer => (
                "Landlock refuses every link and rename from one directory to another \
                 (EXDEV: `mv` copies and deletes instead, `ln` fails)",
                "nothing stays open",
            ),
            Feature::Truncate => (
                "seccomp refuses truncate(2) by path and every open with O_TRUNC that is not \
                 for writing, which Landlock checks",
                "nothing stays open",
            ),
            Feature::TcpRules => (
                "gate's supervisor decides every connect() and bind() itself, from a copy of \
                 the address, and performs the allowed ones on a copy of the socket \
                 (seccomp user notification); the others fail with EACCES",
                "nothing stays open",
            ),
            Feature::DeviceIoctl => (
                "seccomp refuses opens with access mode 3 (neither read nor write, which \
                 Landlock does not check), so no device file in /dev but the granted ones \
                 can be opened",
                "a device file outside /dev that the command may read takes any ioctl",
            ),
            Feature::Scopes if unix_sockets => (
                "seccomp refuses kill(-1), a signal to every process the user may signal",
                "the command can signal your other processes (the agent, an editor) one by \
                 one, and reach abstract Unix sockets bound outside (an X server's)",
            ),
            Feature::Scopes => (
                "Unix sockets are off, so no abstract socket can be reached, and seccomp \
                 refuses kill(-1), a signal to every process the user may signal",
                "the command can signal your other processes (the agent, an editor) one by one",
            ),
            _ => ("nothing", "it is part of the core: nothing runs without it"),
        }
    }

    pub(crate) fn describe(self) -> &'static str {
        match self {
            Feature::Filesystem => "Landlock filesystem rules (ABI 1)",
            Feature::Refer => "Landlock link and rename control (ABI 2)",
            Feature::Truncate => "Landlock truncate control (ABI 3)",
            Feature::TcpRules => "Landlock TCP port rules (ABI 4)",
            Feature::DeviceIoctl => "Landlock device ioctl control (ABI 5)",
            Feature::Scopes => "Landlock signal and abstract socket scoping (ABI 6)",
            Feature::Seccomp => "seccomp filters",
            Feature::UserNotify => {
                "seccomp user notification with descriptor passing (Linux 5.9), for network by domain"
            }
        }
    }
}

/// The features whose absence gate makes up for, or names: the core holds without them.
/// TCP rules only where the supervisor can decide instead ([`supervisor_decides_tcp`]);
/// elsewhere their absence leaves the network open, and they are part of the core.
pub(crate) const GRADED: [Feature; 5] = [
    Feature::Refer,
    Feature::Truncate,
    Feature::TcpRules,
    Feature::DeviceIoctl,
    Feature::Scopes,
];

/// The features a spec needs. TCP rules only matter when some ports are allowed: with
/// the network off, seccomp refuses every network socket by itself.
pub(crate) fn required(spec: &Spec) -> Vec<Feature> {
    let mut features = vec![
        Feature::Filesystem,
        Feature::Refer,
        Feature::Truncate,
        Feature::DeviceIoctl,
        Feature::Scopes,
        Feature::Seccomp,
    ];
    if matches!(spec.network, Network::Tcp { .. }) {
        features.push(Feature::TcpRules);
    }
    if spec.proxy.is_some() || seccomp::listen_notified(&spec.network, spec.unix_sockets) {
        features.push(Feature::UserNotify);
    }
    features.sort_by_key(|f| f.abi());
    features
}

/// The features a kernel lacks, of those required.
pub(crate) fn missing(required: &[Feature], kernel: &Kernel) -> Vec<Feature> {
    required
        .iter()
        .copied()
        .filter(|f| match f {
            Feature::Seccomp => !kernel.seccomp,
            Feature::UserNotify => !(kernel.seccomp && kernel.user_notify),
            f => kernel.landlock_abi < f.abi(),
        })
        .collect()
}

/// How the sandbox stands on a kernel: what it lacks, split by what that means.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Grade {
    /// Graded features the kernel lacks: gate does what [`Feature::without`] says
    /// instead, and names what stays open.
    pub(crate) residual: Vec<Feature>,
    /// Core features the kernel lacks (best effort only): not enforced at all.
    pub(crate) not_enforced: Vec<Feature>,
}

impl Grade {
    /// The residual, for the audit record and `gate check --json`.
    pub(crate) fn residual_json(&self, unix_sockets: bool) -> Value {
        Value::Array(
            self.residual
                .iter()
                .map(|f| {
                    let (instead, open) = f.without(unix_sockets);
                    json!({
                        "feature": f.key(),
                        "lacks": f.describe(),
                        "instead": instead,
                        "open": open,
                    })
                })
                .collect(),
        )
    }

    /// One sentence per missing graded feature, for `gate doctor` and `gate check`.
    pub(crate) fn residual_lines(&self, unix_sockets: bool) -> Vec<String> {
        self.residual
            .iter()
            .map(|f| {
                let (instead, open) = f.without(unix_sockets);
                format!("without {}: {instead}; {open}", f.describe())
            })
            .collect()
    }
}

/// Decide, before anything is built, whether `spec` may run on `kernel` and how: the
/// core (secrets unreadable, no writes outside the writable roots, the network as
/// configured) must hold, or best effort be asked for; a graded feature the kernel
/// lacks is made up for ([`Feature::without`]) unless `sandbox.require` names it.
/// Pure: the caller probes the kernel.
pub(crate) fn grade(spec: &Spec, kernel: &Kernel) -> Result<Grade, SandboxError> {
    let missing = missing(&required(spec), kernel);
    if let Some(lacking) = proxy_lacks(spec, kernel, &missing) {
        // No best effort here: without the supervisor the proxy is out of reach, and
        // without Landlock's TCP rules or the supervisor deciding in their place every
        // address would be open.
        let with_unix = if spec.unix_sockets && lacking == [Feature::TcpRules] {
            " with Unix sockets allowed (--unix-sockets)"
        } else {
            ""
        };
        return Err(SandboxError::Kernel {
            cause: format!(
                "a domain list (--allow-domain, sandbox.allow_domains){with_unix} needs {}, \
                 which this kernel cannot do",
                names(&lacking)
            ),
            advice: "Run `gate doctor` for details, or use --net-connect PORT instead".to_owned(),
        });
    }
    let required_here: Vec<Feature> = missing
        .iter()
        .copied()
        .filter(|f| spec.require.contains(f))
        .collect();
    if !required_here.is_empty() {
        // What the configuration requires is never best effort either: that is what
        // requiring it means.
        return Err(SandboxError::Kernel {
            cause: format!(
                "the safe level needs {}, which this kernel (Landlock ABI {}) lacks and \
                 sandbox.require asks for",
                names(&required_here),
                kernel.landlock_abi
            ),
            advice: "Run `gate doctor` for what gate does without it, or use a newer kernel"
                .to_owned(),
        });
    }
    let decides = supervisor_decides_tcp(spec, kernel);
    let (core, residual): (Vec<Feature>, Vec<Feature>) = missing
        .into_iter()
        .partition(|&f| f.is_core() || (f == Feature::TcpRules && !decides));
    if !core.is_empty() && !spec.best_effort {
        return Err(SandboxError::Kernel {
            cause: format!(
                "the safe level needs {}, which this kernel (Landlock ABI {}) cannot enforce",
                names(&core),
                kernel.landlock_abi
            ),
            advice: "Run `gate doctor` for details, or pass --best-effort to run with what it \
                     can enforce"
                .to_owned(),
        });
    }
    Ok(Grade {
        residual,
        not_enforced: core,
    })
}

/// Features by their descriptions, for one line.
pub(crate) fn names(features: &[Feature]) -> String {
    features
        .iter()
        .map(|f| f.describe())
        .collect::<Vec<_>>()
        .join(", ")
}

/// What network by domain cannot do without, of what the kernel lacks: the supervisor,
/// and the Landlock TCP rules that refuse every connection it lets through to the
/// kernel, unless the supervisor decides every connection in their place
/// ([`supervisor_decides_tcp`]). `None` when nothing is lacking (or no domain list is
/// asked for). Never best effort.
pub(crate) fn proxy_lacks(
    spec: &Spec,
    kernel: &Kernel,
    missing: &[Feature],
) -> Option<Vec<Feature>> {
    spec.proxy.as_ref()?;
    let decides = supervisor_decides_tcp(spec, kernel);
    let lacking: Vec<Feature> = missing
        .iter()
        .copied()
        .filter(|&f| match f {
            Feature::UserNotify | Feature::Seccomp => true,
            Feature::TcpRules => !decides,
            _ => false,
        })
        .collect();
    (!lacking.is_empty()).then_some(lacking)
}

/// Whether gate's supervisor decides the command's TCP `connect()` and `bind()` calls
/// in place of Landlock's TCP rules, which this kernel lacks (before ABI 4): only
/// ports or a domain list need them, and only with seccomp user notification can the
/// supervisor take the calls. Not with Unix sockets allowed: the supervisor takes a
/// copy of the socket to see what it is, and another thread of the command could put
/// a TCP socket at that descriptor's number before the kernel ran the call, so the
/// supervisor would have to perform Unix connections too, from outside the command's
/// view of the file system. Pure.
pub(crate) fn supervisor_decides_tcp(spec: &Spec, kernel: &Kernel) -> bool {
    matches!(spec.network, Network::Tcp { .. })
        && kernel.landlock_abi < Feature::TcpRules.abi()
        && kernel.seccomp
        && kernel.user_notify
        && !spec.unix_sockets
}

/// Drop every capability of this process (for gate's supervisor, which reads what a
/// command without capabilities sends).
pub(crate) fn drop_capabilities() -> Result<(), SandboxError> {
    caps::drop_all()
}

/// The filter of a command that runs outside the sandbox with deny rules: only its
/// `execve` and `execveat` calls go to the supervisor (x32 calls are refused and other
/// architectures killed, as in the sandbox's filter). Loaded right before exec, after
/// the mark's no_new_privs; the listener comes back. With `own`, gate's own exec (by
/// its pointers, [`OwnExec`]) goes on without the supervisor.
pub(crate) fn exec_filter(own: Option<OwnExec>) -> Result<ExecFilter, SandboxError> {
    seccomp::Filter::exec_only(own).map(ExecFilter)
}

/// The filter of a command outside the sandbox with deny rules, compiled
/// ([`exec_filter`]): compiled before gate forks its supervisor, so that gate writes to
/// few pages between that fork and its exec (each one the fork makes it copy), and
/// loaded after the mark.
pub(crate) struct ExecFilter(seccomp::Filter);

impl ExecFilter {
    /// Load it into this process; the listener comes back.
    pub(crate) fn load(self) -> Result<std::os::fd::OwnedFd, SandboxError> {
        match self.0.load()? {
            Some(listener) => Ok(listener),
            None => Err(SandboxError::Supervisor(
                "the seccomp filter gave no listener for the supervisor".to_owned(),
            )),
        }
    }
}

/// Which calls of the command the sandbox's filter hands to gate's supervisor.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Notified {
    /// `connect()`, for network by domain, or because the supervisor decides TCP.
    pub(crate) connect: bool,
    /// The supervisor decides every TCP `connect()` and `bind()` in place of Landlock's
    /// TCP rules ([`supervisor_decides_tcp`]): `bind()` goes to it too.
    pub(crate) tcp: bool,
    /// `listen()`, with ports or domains where the command may serve
    /// ([`seccomp::listen_notified`]).
    pub(crate) listen: bool,
    /// `execve` and `execveat`, for deny rules at exec.
    pub(crate) exec: bool,
}

impl Notified {
    /// What the filter of `spec` hands to the supervisor on `kernel`; `exec`: deny rules
    /// are checked at exec.
    pub(crate) fn of(spec: &Spec, kernel: &Kernel, exec: bool) -> Notified {
        let tcp = supervisor_decides_tcp(spec, kernel);
        Notified {
            connect: spec.proxy.is_some() || tcp,
            tcp,
            listen: seccomp::listen_notified(&spec.network, spec.unix_sockets),
            exec,
        }
    }

    /// Whether the filter hands any call to the supervisor.
    pub(crate) fn any(&self) -> bool {
        self.connect || self.listen || self.exec
    }
}

/// How the hidden paths are kept from the command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Hiding {
    /// Covered by empty read-only mounts in a private mount namespace of this process
    /// ([`mounts`]); Landlock does not walk around them.
    Mounts,
    /// Walked around by Landlock ([`landlock`]); why mounts were not used.
    Landlock(String),
}

impl Hiding {
    /// Cover the hidden paths when this process may mount (root), else leave them to
    /// Landlock. A failure half-way is no failure: the walk hides everything by itself,
    /// and the mounts already made only hide more.
    fn choose(spec: &Spec, root: bool) -> Hiding {
        if !root {
            return Hiding::Landlock("not root".to_owned());
        }
        if spec.deny_read.is_empty() {
            return Hiding::Landlock("nothing to hide".to_owned());
        }
        match mounts::cover(&spec.deny_read, &spec.hidden_kinds) {
            Ok(()) => Hiding::Mounts,
            Err(why) => {
                tracing::debug!(%why, "hidden paths left to Landlock");
                Hiding::Landlock(why)
            }
        }
    }

    /// For the audit record and `gate doctor`: `mounts` or `landlock`.
    pub(crate) fn by(&self) -> &'static str {
        match self {
            Hiding::Mounts => "mounts",
            Hiding::Landlock(_) => "landlock",
        }
    }
}

/// A sandbox ready to enforce: every path opened, the filter built.
pub(crate) struct Sandbox {
    ruleset: landlock::Prepared,
    /// The probes that show Landlock acts once restricted.
    check: verify::Check,
    filter: seccomp::Filter,
    summary: Value,
    /// What of the core is not enforced (best effort only), for one warning line.
    pub(crate) not_enforced: Vec<Feature>,
    /// Whether the filter hands calls to gate's supervisor (and so gives a listener).
    notifies: bool,
}

/// Proof that the sandbox is in force in this process. Only [`Sandbox::enforce`] makes
/// one, and exec at the `safe` level needs it.
#[derive(Debug)]
pub(crate) struct Enforced {
    /// The listener of the filter's notifications, for gate's supervisor.
    pub(crate) listener: Option<std::os::fd::OwnedFd>,
    /// Descriptors the rules were made from, left for exec to close.
    _kept: Vec<std::os::fd::OwnedFd>,
}

impl Sandbox {
    /// Check that this kernel can enforce `spec` (or that best effort was asked for),
    /// before anything is started or built.
    pub(crate) fn admit(spec: &Spec) -> Result<Kernel, SandboxError> {
        let kernel = probe();
        grade(spec, &kernel)?;
        Ok(kernel)
    }

    /// Build everything, enforcing nothing yet, on a kernel [`Sandbox::admit`] admitted.
    /// gate's supervisor, when there is one, is started before this (gate is small then,
    /// and the supervisor inherits none of the walk's descriptors).
    pub(crate) fn prepare(
        spec: &Spec,
        kernel: Kernel,
        notified: Notified,
    ) -> Result<Sandbox, SandboxError> {
        let grade = grade(spec, &kernel)?;
        if grade.residual.contains(&Feature::TcpRules) != notified.tcp
            || (notified.tcp && !notified.connect)
            || notified.listen != seccomp::listen_notified(&spec.network, spec.unix_sockets)
        {
            // The supervisor must decide exactly when Landlock cannot.
            return Err(SandboxError::Supervisor(
                "gate's supervisor was not set up to decide TCP connections in place of \
                 Landlock's TCP rules"
                    .to_owned(),
            ));
        }
        let root = nix::unistd::geteuid().is_root();
        let hiding = Hiding::choose(spec, root);
        let walked: &[PathBuf] = match hiding {
            Hiding::Mounts => &[],
            Hiding::Landlock(_) => &spec.deny_read,
        };
        if let (Hiding::Landlock(_), Some(why)) = (&hiding, &spec.unwalkable) {
            return Err(why.clone());
        }
        let ruleset = landlock::prepare(spec, &kernel, walked)?;
        let check = verify::Check::prepare(spec, &kernel, walked)?;
        let policy = seccomp::Policy {
            network: &spec.network,
            unix_sockets: spec.unix_sockets,
            root,
            proxied: notified.connect,
            tcp_decided: notified.tcp,
            exec_checked: notified.exec,
            instead: seccomp::Instead::of(&grade.residual),
        };
        let filter = seccomp::Filter::build(&policy, kernel.seccomp)?;
        let mut network = match &spec.network {
            Network::Off => json!("off"),
            Network::On => json!("on"),
            Network::Tcp { connect, bind } => json!({"tcp_connect": connect, "tcp_bind": bind}),
        };
        if let Some(domains) = &spec.proxy {
            network["proxied"] = json!({
                "allow_domains": domains.allow,
                "deny_domains": domains.deny,
            });
        }
        let summary = json!({
            "landlock_abi": kernel.landlock_abi,
            "write": spec.write.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
            "deny_read": spec.deny_read.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
            "deny_write": spec.deny_write.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
            "unprotected": spec.unprotected.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
            "network": network,
            "unix_sockets": spec.unix_sockets,
            "scopes": kernel.landlock_abi >= Feature::Scopes.abi(),
            "seccomp": kernel.seccomp,
            "capabilities": if caps::held()? { "dropped" } else { "none held" },
            "no_new_privs": true,
            "not_enforced": grade.not_enforced.iter().map(|f| f.describe()).collect::<Vec<_>>(),
            "residual": grade.residual_json(spec.unix_sockets),
            "hidden_by": hiding.by(),
            "mounts_not_used": match &hiding {
                Hiding::Mounts => None,
                Hiding::Landlock(why) => Some(why),
            },
        });
        Ok(Sandbox {
            ruleset,
            check,
            filter,
            summary,
            not_enforced: grade.not_enforced,
            notifies: notified.any(),
        })
    }

    /// What the sandbox will enforce, for the audit record.
    pub(crate) fn summary(&self) -> &Value {
        &self.summary
    }

    /// Whether the filter hands calls to gate's supervisor, so that enforcing it gives a
    /// listener.
    pub(crate) fn notifies(&self) -> bool {
        self.notifies
    }

    /// Add what the run does about the processes its command leaves behind
    /// ([`ending`]) to the record: `left_behind`.
    pub(crate) fn left_behind(&mut self, plan: &ending::Plan) {
        self.summary["left_behind"] = plan.summary();
    }

    /// Enforce it on this process: drop capabilities, restrict with Landlock (which sets
    /// no_new_privs) and try that it acts ([`verify`]), then load the seccomp filter and
    /// try that too. After an error here the process must not exec: it is partly
    /// restricted and should exit.
    pub(crate) fn enforce(self) -> Result<Enforced, SandboxError> {
        caps::drop_all()?;
        let kept = self.ruleset.restrict()?;
        self.check.run()?;
        let listener = self.filter.load()?;
        Ok(Enforced {
            listener,
            _kept: kept,
        })
    }
}

#[cfg(test)]
mod tests;
