//! `gate doctor`: what this machine and this configuration give gate. It prints one line
//! per topic and exits 0 when the safe level can be fully enforced here, 1 otherwise.
//! It prepares the sandbox exactly as a run would (every path opened, the filter built)
//! but never enforces it and never runs anything.

use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::os::unix::net::UnixStream;
use std::path::Path;

use crate::config::{self, Environment, Settings};
use crate::invocation::{Invocation, SHIM_NAMES};
use crate::sandbox::{self, Feature, Kernel};

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

/// Run the checks and print the report; returns the exit status.
pub fn run(inv: &Invocation) -> i32 {
    let mut report = String::new();
    let mut ok = true;
    let mut line = |topic: &str, text: &str| {
        let _ = writeln!(report, "{topic:<12}{text}");
    };

    line("gate", crate::cli::VERSION);
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    line(
        "kernel",
        &format!("Linux {} ({})", release.trim(), std::env::consts::ARCH),
    );

    let kernel = sandbox::probe();
    line("landlock", &describe_landlock(&kernel));
    line(
        "seccomp",
        if kernel.seccomp {
            "available"
        } else {
            "not available"
        },
    );
    let root = nix::unistd::geteuid().is_root();
    line(
        "user",
        &if root {
            "root (uid 0): the safe level drops every capability and also hides /etc/shadow"
                .to_owned()
        } else {
            format!("uid {}", nix::unistd::geteuid())
        },
    );

    let env = Environment { var: &var };
    let settings = match config::load(&inv.gate, &env) {
        Ok(settings) => Some(settings),
        Err(e) => {
            ok = false;
            line("config", &format!("ERROR: {e}"));
            None
        }
    };
    if let Some(settings) = &settings {
        describe_config(settings, &mut line);
    }

    line("shims", &describe_shims());

    match &settings {
        Some(settings) => {
            let (safe_ok, text) = safe_level(settings, &kernel, root);
            ok &= safe_ok;
            line("safe level", &text);
        }
        None => line("safe level", "unknown: the configuration does not load"),
    }
    if Path::new(".git").exists() {
        line(
            "workspace",
            "has .git: at the safe level .git/hooks and .git/config stay writable, and they \
             run later outside the sandbox (see docs/sandbox.md)",
        );
    }

    let code = crate::output::print_out(&report);
    if code != 0 {
        return code;
    }
    if ok { 0 } else { 1 }
}

fn describe_landlock(kernel: &Kernel) -> String {
    if kernel.landlock_abi == 0 {
        return "not available (not built into this kernel, or disabled at boot)".to_owned();
    }
    let features: Vec<&str> = LANDLOCK_FEATURES
        .iter()
        .filter(|(abi, _)| *abi <= kernel.landlock_abi)
        .map(|(_, name)| *name)
        .collect();
    format!("ABI {}: {}", kernel.landlock_abi, features.join(", "))
}

fn describe_config(settings: &Settings, line: &mut impl FnMut(&str, &str)) {
    let system = Path::new(config::SYSTEM_CONFIG);
    let system_state = if settings.locked_by.is_some() {
        "present, locks the configuration (lock = true)"
    } else if settings.files.iter().any(|f| f == system) {
        "present, not locked"
    } else if system.exists() {
        "present, ignored (--no-config)"
    } else {
        "absent"
    };
    line("system", &format!("{} ({system_state})", system.display()));
    let others: Vec<String> = settings
        .files
        .iter()
        .filter(|f| f.as_path() != system)
        .map(|f| f.display().to_string())
        .collect();
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
        &format!(
            "{} allow, {} deny",
            settings.policy.allow.len(),
            settings.policy.deny.len()
        ),
    );
    let socket = crate::approval::socket_path(settings, &var);
    let shown = socket.display();
    let on_socket = match UnixStream::connect(&socket) {
        Ok(_) => format!("{shown} is listening and is asked first"),
        Err(e) if settings.socket.is_some() => {
            format!("{shown} (configured) does not answer: {e}")
        }
        Err(_) => format!("no broker at {shown} (start one with `gate serve`)"),
    };
    let approver = if settings.tty {
        format!("{on_socket}; then the terminal, when gate runs in one")
    } else {
        format!("{on_socket}; the terminal is off (approval.tty = false)")
    };
    line("approver", &approver);
}

fn describe_shims() -> String {
    let path = var("PATH");
    SHIM_NAMES
        .iter()
        .map(
            |name| match crate::exec::shim_shell(name, OsStr::new("gate"), path.as_deref()) {
                Ok(real) => format!("{name} -> {}", real.display()),
                Err(_) => format!("{name} -> (none)"),
            },
        )
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether the safe level can be fully enforced here, and why not.
fn safe_level(settings: &Settings, kernel: &Kernel, root: bool) -> (bool, String) {
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(e) => return (false, format!("cannot tell: no working directory ({e})")),
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
        Err(e) => return (false, format!("cannot run here: {e}")),
    };
    let missing = sandbox::missing(&sandbox::required(&spec), kernel);
    if !missing.is_empty() {
        let names: Vec<&str> = missing.iter().map(|f| Feature::describe(*f)).collect();
        return (
            false,
            format!(
                "cannot be fully enforced: this kernel lacks {}{}",
                names.join(", "),
                if spec.best_effort {
                    " (best_effort is set: commands run with a warning)"
                } else {
                    " (commands are refused with status 125)"
                }
            ),
        );
    }
    let strict = sandbox::Spec {
        best_effort: false,
        ..spec
    };
    match sandbox::Sandbox::prepare(&strict) {
        Ok(_) => (
            true,
            format!(
                "can be fully enforced (network {}; {} hidden path(s) here, {} writable root(s))",
                match strict.network {
                    sandbox::Network::Off => "off".to_owned(),
                    sandbox::Network::On => "on".to_owned(),
                    sandbox::Network::Tcp {
                        ref connect,
                        ref bind,
                    } => format!("TCP only: connect {connect:?}, bind {bind:?}"),
                },
                strict.deny_read.len(),
                strict.write.len()
            ),
        ),
        Err(e) => (false, format!("cannot be set up: {e}")),
    }
}
