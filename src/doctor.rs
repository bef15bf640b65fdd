//! `gate doctor`: what this machine and this configuration give gate. It prints one line
//! per topic (or, with `--json`, the same facts as one JSON object) and exits 0 when the
//! safe level can be fully enforced here, 1 otherwise.
//! It prepares the sandbox exactly as a run would (every path opened, the filter built)
//! but never enforces it and never runs anything.

use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::approval::reach::{Reach, SocketState, TtyState};
use crate::config::{self, Environment, Settings};
use crate::invocation::Invocation;
use crate::sandbox::{self, Feature, Kernel, Mark, mark};

/// Landlock's features by ABI version, in words.
const LANDLOCK_FEATURES: [(i32, &str); 7] = [
    (1, "filesystem rules"),
    (2, "link and rename control"),
    (3, "truncate control"),
    (4, "TCP port rules"),
    (5, "device ioctl control"),
    (6, "signal and abstract socket scoping"),
    (7, "audit logging control"),
];

fn var(name: &str) -> Option<OsString> {
    std::env::var_os(name)
}

/// What the doctor found: every topic, as facts, printed as lines or as one JSON object.
struct Report {
    release: String,
    kernel: Kernel,
    /// Why Landlock and seccomp are missing, when they are.
    absent: Absent,
    root: bool,
    uid: u32,
    settings: Result<Settings, String>,
    /// The project file a run here would read (`Ok(None)`: none, or --no-config).
    project: Result<Option<crate::project::ProjectFile>, String>,
    /// Who a run would ask (only when the configuration loads).
    reach: Option<Reach>,
    /// Each shim name and the real shell it resolves to.
    shims: Vec<(&'static str, Option<String>)>,
    /// Whether the safe level can be enforced here, and the sentences saying so.
    safe: Option<Safe>,
    git_workspace: bool,
    /// How the commands gate runs are marked on this kernel.
    marking: Marking,
    /// Whether network by domain can be enforced here, and the sentence saying so.
    domains: (bool, String),
    /// Whether a run at `safe` ends what its command leaves behind, the sentence, and
    /// whether commands at `safe` can run at all (a namespace that cannot be mapped
    /// refuses them).
    left_behind: (bool, String, bool),
}

/// What marks the commands gate runs, and what that means here (see
/// [`crate::sandbox::mark`]).
struct Marking {
    mark: Mark,
    /// Yama's `ptrace_scope`, when Yama is there.
    ptrace_scope: Option<u8>,
    /// This process runs with no_new_privs itself: the approver tools refuse to run here.
    here: bool,
}

impl Marking {
    fn gather(kernel: &Kernel) -> Marking {
        Marking {
            mark: Mark::for_abi(kernel.landlock_abi),
            ptrace_scope: mark::ptrace_scope(),
            here: mark::this_process_marked(),
        }
    }

    /// Whether commands are kept from tracing the broker and the person's processes: by
    /// their Landlock domain, or by Yama (scope 1 and up: only descendants, or none).
    fn ptrace_stopped(&self) -> bool {
        self.mark.has_domain() || self.ptrace_scope.is_some_and(|s| s >= 1)
    }

    fn commands(&self, kernel: &Kernel) -> String {
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

    fn this_process(&self) -> &'static str {
        if self.here {
            "runs with no_new_privs (inside a command gate ran, or another sandbox): gate \
             approve, deny, pending, watch and serve refuse to run here, and a broker would \
             refuse approvers from here"
        } else {
            "runs without no_new_privs: approver tools work here"
        }
    }
}

impl Report {
    fn gather(inv: &Invocation) -> Report {
        let kernel = sandbox::probe();
        let root = nix::unistd::geteuid().is_root();
        let env = Environment { var: &var };
        let settings = config::load(&inv.gate, &env).map_err(|e| e.to_string());
        let project = if inv.gate.no_config {
            Ok(None)
        } else {
            crate::project::in_force(&var, env.home().as_deref())
        };
        let reach = settings
            .as_ref()
            .ok()
            .map(|s| crate::approval::reach::look(&crate::approval::Channels::of(s, &var)));
        let safe = settings.as_ref().ok().map(|s| safe_level(s, &kernel, root));
        Report {
            release: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .unwrap_or_default()
                .trim()
                .to_owned(),
            kernel,
            absent: Absent::gather(),
            root,
            uid: nix::unistd::geteuid().as_raw(),
            settings,
            project,
            reach,
            shims: shims(),
            safe,
            git_workspace: Path::new(".git").exists(),
            marking: Marking::gather(&kernel),
            domains: domains(
                &kernel,
                root,
                mark::ptrace_scope(),
                crate::sandbox::ending::plan(root) == crate::sandbox::ending::Plan::Namespace,
            ),
            left_behind: left_behind(root),
        }
    }

    /// The safe level can be fully enforced, and the configuration loads.
    fn ok(&self) -> bool {
        self.settings.is_ok()
            && self.safe.as_ref().is_some_and(|safe| safe.runs)
            && self.left_behind.2
    }

    fn text(&self) -> String {
        let mut report = String::new();
        let mut line = |topic: &str, text: &str| {
            let _ = writeln!(report, "{topic:<12}{text}");
        };
        line("gate", crate::cli::VERSION);
        line(
            "kernel",
            &format!("Linux {} ({})", self.release, std::env::consts::ARCH),
        );
        line("landlock", &self.describe_landlock());
        line("seccomp", &self.describe_seccomp());
        line(
            "user",
            &if self.root {
                "root (uid 0): the safe level drops every capability and also hides root's own \
                 secrets (/etc/shadow, ssh host keys, ...)"
                    .to_owned()
            } else {
                format!("uid {}", self.uid)
            },
        );
        line("commands", &self.marking.commands(&self.kernel));
        line("process", self.marking.this_process());
        match &self.settings {
            Ok(settings) => {
                let (path, state) = system_file(settings);
                let candidate = if settings.system.candidate_file {
                    "candidate, "
                } else {
                    ""
                };
                line(
                    "system",
                    &format!("{} ({candidate}{})", path.display(), state.words()),
                );
                line("drop-ins", &describe_drop_ins(settings));
                let others = user_files(settings);
                line(
                    "config",
                    &if others.is_empty() {
                        "no user configuration file read".to_owned()
                    } else {
                        others.join(", ")
                    },
                );
                line(
                    "level",
                    &format!(
                        "{} (from {})",
                        settings.policy.level, settings.policy.level_origin
                    ),
                );
                line(
                    "rules",
                    &match settings.policy.ask.len() {
                        0 => format!(
                            "{} allow, {} deny",
                            settings.policy.allow.len(),
                            settings.policy.deny.len()
                        ),
                        ask => format!(
                            "{} allow, {} deny, {ask} ask",
                            settings.policy.allow.len(),
                            settings.policy.deny.len()
                        ),
                    },
                );
                if let Some(reach) = &self.reach {
                    line("approver", &describe_approver(reach));
                }
            }
            Err(e) => line("config", &format!("ERROR: {e}")),
        }
        line("project", &self.describe_project());
        line(
            "shims",
            &self
                .shims
                .iter()
                .map(|(name, real)| format!("{name} -> {}", real.as_deref().unwrap_or("(none)")))
                .collect::<Vec<_>>()
                .join(", "),
        );
        match &self.safe {
            Some(safe) => {
                line("safe level", &safe.text);
                for residual in &safe.residual {
                    line("residual", residual);
                }
            }
            None => line("safe level", "unknown: the configuration does not load"),
        }
        line("domains", &self.domains.1);
        line("left behind", &self.left_behind.1);
        if self.git_workspace {
            line(
                "workspace",
                "has .git: at the safe level .git/hooks and .git/config stay writable, and they \
                 run later outside the sandbox (see docs/sandbox.md)",
            );
        }
        report
    }

    /// The project file in force here and its trust, in a line.
    fn describe_project(&self) -> String {
        match &self.project {
            Ok(Some(p)) => format!("{}, {}", p.path.display(), p.trust.describe()),
            Ok(None) => format!(
                "none (no {} from here up to the repository's root, or --no-config)",
                crate::project::FILE_NAME
            ),
            Err(e) => format!("ERROR: {e}"),
        }
    }

    /// The same facts as [`Report::text`], in fields (documented in gate(1)).
    fn json(&self) -> serde_json::Value {
        use serde_json::json;
        let settings = self.settings.as_ref().ok();
        let config = match &self.settings {
            Ok(settings) => {
                let (path, state) = system_file(settings);
                json!({
                    "error": null,
                    "system": {
                        "path": path.display().to_string(),
                        "state": state.word(),
                        "candidate": settings.system.candidate_file,
                    },
                    "drop_ins": {
                        "dir": settings.system.drop_ins.display().to_string(),
                        "files": drop_ins(settings)
                            .iter()
                            .map(|f| f.display().to_string())
                            .collect::<Vec<_>>(),
                        "candidate": settings.system.candidate_drop_ins,
                    },
                    "files": user_files(settings),
                    "locked_by": settings.locked_by.as_ref().map(|p| p.display().to_string()),
                })
            }
            Err(e) => json!({
                "error": e,
                "system": null,
                "drop_ins": null,
                "files": [],
                "locked_by": null,
            }),
        };
        let approver = self.reach.as_ref().map(|r| {
            let mut facts = r.to_json();
            facts.insert("text".into(), json!(describe_approver(r)));
            facts
        });
        let shims: serde_json::Map<String, serde_json::Value> = self
            .shims
            .iter()
            .map(|(name, real)| ((*name).to_owned(), json!(real)))
            .collect();
        json!({
            "ok": self.ok(),
            "version": crate::cli::VERSION,
            "kernel": {"release": self.release, "arch": std::env::consts::ARCH},
            "landlock": {
                "abi": self.kernel.landlock_abi,
                "features": landlock_features(&self.kernel),
                "text": self.describe_landlock(),
            },
            "seccomp": self.kernel.seccomp,
            "seccomp_text": self.describe_seccomp(),
            "under_seccomp_filter": self.absent.filtered,
            "marking": {
                "commands": self.marking.mark.word(),
                "ptrace_stopped": self.marking.ptrace_stopped(),
                "ptrace_scope": self.marking.ptrace_scope,
                "this_process_marked": self.marking.here,
                "text": self.marking.commands(&self.kernel),
                "this_process": self.marking.this_process(),
            },
            "uid": self.uid,
            "root": self.root,
            "config": config,
            "project": match &self.project {
                Ok(Some(p)) => json!({
                    "file": p.path.display().to_string(),
                    "sha256": p.sha256,
                    "trust": p.trust.key(),
                    "text": self.describe_project(),
                    "error": null,
                }),
                Ok(None) => serde_json::Value::Null,
                Err(e) => json!({"error": e}),
            },
            "level": settings.map(|s| s.policy.level.as_str()),
            "level_origin": settings.map(|s| s.policy.level_origin.to_string()),
            "rules": settings.map(|s| json!({
                "allow": s.policy.allow.len(),
                "deny": s.policy.deny.len(),
                "ask": s.policy.ask.len(),
            })),
            "approver": approver,
            "shims": shims,
            "safe_level": self.safe.as_ref().map(|safe| json!({
                "enforceable": safe.runs,
                "text": safe.text,
                "residual": safe.residual_json,
            })),
            "git_workspace": self.git_workspace,
            "domains": {"enforceable": self.domains.0, "text": self.domains.1},
            "left_behind": {"ended": self.left_behind.0, "text": self.left_behind.1},
        })
    }
}

/// Run the checks and print the report (`json`: as one JSON object); returns the exit
/// status.
pub fn run(inv: &Invocation, json: bool) -> i32 {
    let report = Report::gather(inv);
    let text = if json {
        format!("{}\n", report.json())
    } else {
        report.text()
    };
    let code = crate::output::print_out(&text);
    if code != 0 {
        return code;
    }
    // Checking a candidate system layer, like `visudo -c -f`: the answer is whether it
    // loads, and the error (file:line) goes to stderr too, for scripts that keep only it.
    if inv.gate.system_file.is_some() || inv.gate.system_drop_ins.is_some() {
        return match &report.settings {
            Ok(_) => 0,
            Err(e) => {
                crate::output::say(&format!("gate: {e}"));
                1
            }
        };
    }
    if report.ok() { 0 } else { 1 }
}

fn landlock_features(kernel: &Kernel) -> Vec<&'static str> {
    LANDLOCK_FEATURES
        .iter()
        .filter(|(abi, _)| *abi <= kernel.landlock_abi)
        .map(|(_, name)| *name)
        .collect()
}

impl Report {
    fn describe_landlock(&self) -> String {
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

    fn describe_seccomp(&self) -> String {
        match self.absent.seccomp {
            Ok(()) => "available".to_owned(),
            Err(errno) => seccomp_absent(errno, self.absent.filtered),
        }
    }
}

/// What `gate doctor` needs to tell a container from a kernel: the errno of each
/// missing layer, whether a seccomp filter surrounds this process, and which security
/// modules the kernel runs (the `lsm=` boot parameter, the active list where securityfs
/// is mounted).
struct Absent {
    landlock: Result<i32, i32>,
    seccomp: Result<(), i32>,
    filtered: bool,
    lsm_param: Option<String>,
    active: Option<String>,
}

impl Absent {
    fn gather() -> Absent {
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
const LANDLOCK_CALLS: &str = "landlock_create_ruleset, landlock_add_rule and \
                              landlock_restrict_self";

/// Why Landlock is missing and what to change, from the errno of its version query,
/// whether a seccomp filter surrounds this process, the `lsm=` boot parameter and the
/// kernel's active security modules (when known). Pure, for the table test below.
fn landlock_absent(
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
fn seccomp_absent(errno: i32, filtered: bool) -> String {
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

/// What the system configuration file is to these settings.
#[derive(Clone, Copy)]
enum SystemState {
    Locked,
    Present,
    Ignored,
    Absent,
}

impl SystemState {
    fn word(self) -> &'static str {
        match self {
            SystemState::Locked => "locked",
            SystemState::Present => "present",
            SystemState::Ignored => "ignored",
            SystemState::Absent => "absent",
        }
    }

    fn words(self) -> &'static str {
        match self {
            SystemState::Locked => "present, locks the configuration (lock = true)",
            SystemState::Present => "present, not locked",
            SystemState::Ignored => "present, ignored (--no-config)",
            SystemState::Absent => "absent",
        }
    }
}

fn system_file(settings: &Settings) -> (&Path, SystemState) {
    let system = settings.system.file.as_path();
    let state = if settings.locked_by.as_deref() == Some(system) {
        SystemState::Locked
    } else if settings.files.iter().any(|f| f == system) {
        SystemState::Present
    } else if system.exists() {
        SystemState::Ignored
    } else {
        SystemState::Absent
    };
    (system, state)
}

/// The drop-ins read, in order.
fn drop_ins(settings: &Settings) -> Vec<&Path> {
    let dir = settings.system.drop_ins.as_path();
    settings
        .files
        .iter()
        .map(PathBuf::as_path)
        .filter(|f| f.parent() == Some(dir))
        .collect()
}

/// The drop-ins, in a line: which were read, and which locks.
fn describe_drop_ins(settings: &Settings) -> String {
    let dir = settings.system.drop_ins.display();
    let candidate = if settings.system.candidate_drop_ins {
        "candidate "
    } else {
        ""
    };
    let read = drop_ins(settings);
    if read.is_empty() {
        return format!("none read from the {candidate}directory {dir}");
    }
    let names: Vec<String> = read
        .iter()
        .map(|f| {
            let name = f.file_name().unwrap_or_default().to_string_lossy();
            if settings.locked_by.as_deref() == Some(*f) {
                format!("{name} (locks the configuration)")
            } else {
                name.into_owned()
            }
        })
        .collect();
    format!("{} from the {candidate}directory {dir}", names.join(", "))
}

/// The configuration files read besides the system layer.
fn user_files(settings: &Settings) -> Vec<String> {
    let system = settings.system.file.as_path();
    let drop_ins = drop_ins(settings);
    settings
        .files
        .iter()
        .filter(|f| f.as_path() != system && !drop_ins.contains(&f.as_path()))
        .map(|f| f.display().to_string())
        .collect()
}

/// Who a run would ask, in a line: the socket first (with the requester's own trust
/// checks), then the terminal.
fn describe_approver(reach: &Reach) -> String {
    let shown = reach.socket.display();
    let on_socket = match &reach.socket_state {
        SocketState::Listening => format!("{shown} is listening and is asked first"),
        SocketState::Busy => {
            format!("{shown} is listening (slow to take connections) and is asked first")
        }
        SocketState::Absent(why) if reach.socket_configured => {
            format!("{shown} (configured) does not answer: {why}")
        }
        SocketState::Absent(_) => format!("no broker at {shown} (start one with `gate serve`)"),
        SocketState::Untrusted(why) => {
            format!("{shown} cannot be trusted ({why}): commands that need an approver are refused")
        }
    };
    let terminal = match &reach.tty {
        TtyState::Off => "the terminal is off (approval.tty = false)".to_owned(),
        TtyState::Available => "then the terminal (this one can be prompted)".to_owned(),
        TtyState::Unavailable(why) => {
            format!("then the terminal, when gate runs in one (not here: {why})")
        }
    };
    format!("{on_socket}; {terminal}")
}

/// Each shim name and the real shell it resolves to on PATH.
fn shims() -> Vec<(&'static str, Option<String>)> {
    let path = var("PATH");
    crate::shells::shim_names()
        .map(|name| {
            let real = crate::exec::shim_shell(name, OsStr::new("gate"), path.as_deref())
                .ok()
                .map(|p| p.display().to_string());
            (name, real)
        })
        .collect()
}

/// Whether the safe level runs here, in a sentence, and what this kernel lacks that gate
/// makes up for.
struct Safe {
    /// Commands at `safe` run, with the core of the sandbox enforced.
    runs: bool,
    text: String,
    /// One sentence per graded feature the kernel lacks.
    residual: Vec<String>,
    residual_json: serde_json::Value,
}

impl Safe {
    fn no(text: String) -> Safe {
        Safe {
            runs: false,
            text,
            residual: Vec::new(),
            residual_json: serde_json::json!([]),
        }
    }
}

/// Whether the safe level can be enforced here, and why not.
fn safe_level(settings: &Settings, kernel: &Kernel, root: bool) -> Safe {
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(e) => return Safe::no(format!("cannot tell: no working directory ({e})")),
    };
    let protect = crate::settings::protected_files(settings);
    let spec = match sandbox::spec::build(
        &crate::settings::sandbox_settings(settings),
        &cwd,
        &var,
        root,
        &protect,
    ) {
        Ok(spec) => spec,
        Err(e) => return Safe::no(format!("cannot run here: {e}")),
    };
    let grade = match sandbox::grade(&spec, kernel) {
        Ok(grade) => grade,
        Err(e) => return Safe::no(format!("cannot be enforced: {e}")),
    };
    if !grade.not_enforced.is_empty() {
        // Best effort: the command runs, with a warning, and the core does not hold.
        let names: Vec<&str> = grade.not_enforced.iter().map(|f| f.describe()).collect();
        return Safe::no(format!(
            "cannot be fully enforced: this kernel lacks {} (best_effort is set: commands run \
             with a warning)",
            names.join(", ")
        ));
    }
    let strict = sandbox::Spec {
        best_effort: false,
        ..spec
    };
    match sandbox::Sandbox::admit(&strict).and_then(|kernel| {
        let notified = sandbox::Notified::of(&strict, &kernel, false);
        sandbox::Sandbox::prepare(&strict, kernel, notified)
    }) {
        Ok(prepared) => Safe {
            runs: true,
            text: format!(
                "{} (network {}; {} hidden path(s) here, {} writable root(s); {})",
                if grade.residual.is_empty() {
                    "can be fully enforced".to_owned()
                } else {
                    format!(
                        "can be enforced, graded: the core holds, and this kernel lacks {} \
                         Landlock feature(s) beyond it, made up for as the residual lines say",
                        grade.residual.len()
                    )
                },
                match (&strict.network, &strict.proxy) {
                    (_, Some(domains)) => format!(
                        "by domain through the proxy: {} allowed, {} denied",
                        domains.allow.len(),
                        domains.deny.len()
                    ),
                    (sandbox::Network::Off, None) => "off".to_owned(),
                    (sandbox::Network::On, None) => "on".to_owned(),
                    (sandbox::Network::Tcp { connect, bind }, None) => {
                        format!("TCP only: connect {connect:?}, bind {bind:?}")
                    }
                },
                strict.deny_read.len(),
                strict.write.len(),
                hiding(prepared.summary())
            ),
            residual: grade.residual_lines(strict.unix_sockets),
            residual_json: grade.residual_json(strict.unix_sockets),
        },
        Err(e) => Safe::no(format!("cannot be set up: {e}")),
    }
}

/// Whether a command at `safe` has what it leaves behind ended here: a user namespace of
/// its own, tried in a throwaway child ([`sandbox::ending`]).
fn left_behind(root: bool) -> (bool, String, bool) {
    match sandbox::ending::probe(root) {
        Ok(sandbox::ending::Plan::Namespace) => (
            true,
            "ended at the safe level: the command runs in a user namespace of its own, and \
             gate's supervisor kills every process left in it when the command ends"
                .to_owned(),
            true,
        ),
        Ok(sandbox::ending::Plan::NotEnded(why)) => (
            false,
            format!(
                "NOT ended at the safe level: {why}; processes the command starts (setsid, \
                 nohup, double-forked daemons) can outlive it, keep its terminal and write \
                 the workspace (see docs/sandbox.md)"
            ),
            true,
        ),
        Err(why) => (
            false,
            format!("cannot be set up: {why}; commands at the safe level are refused (125)"),
            false,
        ),
    }
}

/// Whether a domain list (`--allow-domain`, `sandbox.allow_domains`) can be enforced on
/// this kernel: Landlock's TCP rules refuse the command's own connections (before ABI 4
/// the supervisor decides each one in their place), and a supervisor answers its
/// `connect()` calls (seccomp user notification with ADDFD,
/// tried in a throwaway child). Under Yama the supervisor may not read the addresses.
/// `namespace`: the command would run in a user namespace of its own (its supervisor
/// then reads its memory under Yama 1 and 2).
fn domains(
    kernel: &Kernel,
    root: bool,
    ptrace_scope: Option<u8>,
    namespace: bool,
) -> (bool, String) {
    let tcp = kernel.landlock_abi >= Feature::TcpRules.abi();
    let supervisor = if kernel.seccomp && kernel.user_notify {
        crate::supervisor::kernel_supports()
    } else {
        Err("seccomp has no user notification".to_owned())
    };
    if kernel.landlock_abi < Feature::Filesystem.abi() {
        return (
            false,
            format!(
                "network by domain (--allow-domain) cannot be enforced: it runs inside the \
                 sandbox, which needs {} (commands with a domain list are refused with \
                 status 125)",
                Feature::Filesystem.describe()
            ),
        );
    }
    let (ok, mut text) = match (tcp, supervisor) {
        (true, Ok(())) => (
            true,
            "network by domain (--allow-domain) can be enforced: Landlock TCP rules and a \
             seccomp supervisor (user notification with ADDFD)"
                .to_owned(),
        ),
        (false, Ok(())) => (
            true,
            format!(
                "network by domain (--allow-domain) can be enforced: without {}, gate's \
                 supervisor decides every connect() and bind() itself (seccomp user \
                 notification with ADDFD); not with --unix-sockets, which is refused here \
                 beside a domain list or ports",
                Feature::TcpRules.describe()
            ),
        ),
        (_, Err(why)) => {
            let mut lacks = Vec::new();
            if !tcp {
                lacks.push(Feature::TcpRules.describe().to_owned());
            }
            lacks.push(format!("a seccomp supervisor ({why})"));
            (
                false,
                format!(
                    "network by domain (--allow-domain) cannot be enforced: this kernel lacks \
                     {} (commands with a domain list are refused with status 125)",
                    lacks.join(" and ")
                ),
            )
        }
    };
    if ok && unreadable(root, ptrace_scope, namespace) {
        text.push_str(&format!(
            "; Yama's ptrace_scope is {}, so the supervisor cannot read where a connect() \
             goes: every IPv4 or IPv6 connect goes to the proxy (--net-connect ports too)",
            ptrace_scope.unwrap_or(0)
        ));
    }
    (ok, text)
}

/// Whether Yama keeps the supervisor (not an ancestor of the command) from reading the
/// command's memory: scope 1 and 2 unless it holds CAP_SYS_PTRACE (root) or owns the
/// command's user namespace (`namespace`: one can be made here), 3 always.
fn unreadable(root: bool, ptrace_scope: Option<u8>, namespace: bool) -> bool {
    match ptrace_scope {
        None | Some(0) => false,
        Some(3..) => true,
        Some(_) => !root && !namespace,
    }
}

/// How the hidden paths are hidden, from the sandbox's summary.
fn hiding(summary: &serde_json::Value) -> String {
    match (
        summary["hidden_by"].as_str(),
        summary["mounts_not_used"].as_str(),
    ) {
        (Some("mounts"), _) => {
            "hidden paths covered by mounts in a private mount namespace".to_owned()
        }
        (_, Some(why)) => format!("hidden paths walked around by Landlock, no mounts: {why}"),
        _ => "hidden paths walked around by Landlock".to_owned(),
    }
}

#[cfg(test)]
mod tests;
