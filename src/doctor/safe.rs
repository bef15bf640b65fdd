//! Whether the safe level can be enforced here and what it leaves to chance: the sandbox
//! prepared exactly as a run would (never enforced), the supervisor's reading of the
//! command's memory, network by domain, and what a command leaves behind.

use crate::config::Settings;
use crate::explain;
use crate::sandbox::{self, Feature, Kernel};

use super::var;

/// Whether the safe level runs here, in a sentence, and what this kernel lacks that gate
/// makes up for.
pub(super) struct Safe {
    /// Commands at `safe` run, with the core of the sandbox enforced.
    pub(super) runs: bool,
    pub(super) text: String,
    /// One sentence per graded feature the kernel lacks.
    pub(super) residual: Vec<String>,
    pub(super) residual_json: serde_json::Value,
}

impl Safe {
    pub(super) fn no(text: String) -> Safe {
        Safe {
            runs: false,
            text,
            residual: Vec::new(),
            residual_json: serde_json::json!([]),
        }
    }
}

/// Whether the safe level can be enforced here, and why not.
pub(super) fn safe_level(settings: &Settings, kernel: &Kernel, root: bool) -> Safe {
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
        Err(e) => return Safe::no(format!("cannot run here: {}", explain::sandbox_not_run(&e))),
    };
    let grade = match sandbox::grade(&spec, kernel) {
        Ok(grade) => grade,
        Err(e) => {
            return Safe::no(format!(
                "cannot be enforced: {}",
                explain::sandbox_not_run(&e)
            ));
        }
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
        Err(e) => Safe::no(format!(
            "cannot be set up: {}",
            explain::sandbox_not_run(&e)
        )),
    }
}

/// Whether a command at `safe` has what it leaves behind ended here: a user namespace of
/// its own, tried in a throwaway child ([`sandbox::ending`]).
pub(super) fn left_behind(root: bool) -> (bool, String, bool) {
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
pub(super) fn domains(
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
pub(super) fn unreadable(root: bool, ptrace_scope: Option<u8>, namespace: bool) -> bool {
    match ptrace_scope {
        None | Some(0) => false,
        Some(3..) => true,
        Some(_) => !root && !namespace,
    }
}

/// How the hidden paths are hidden, from the sandbox's summary.
pub(super) fn hiding(summary: &serde_json::Value) -> String {
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
