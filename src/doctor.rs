//! `gate doctor`: what this machine and this configuration give gate. It prints one line
//! per topic (or, with `--json`, the same facts as one JSON object) and exits 0 when the
//! safe level can be fully enforced here, 1 otherwise.
//! It prepares the sandbox exactly as a run would (every path opened, the filter built)
//! but never enforces it and never runs anything.
//!
//! This file gathers the facts and prints them; the words for the kernel are
//! `doctor/kernel.rs`, for the files read and the approver `doctor/files.rs`, and for the
//! safe level `doctor/safe.rs`.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::Path;

use crate::approval::reach::Reach;
use crate::config::{self, Environment, Settings};
use crate::invocation::Invocation;
use crate::sandbox::{self, Kernel, mark};

mod files;
mod kernel;
mod safe;

use files::{describe_approver, describe_drop_ins, drop_ins, shims, system_file, user_files};
use kernel::{Absent, Marking, landlock_features};
use safe::{Safe, domains, left_behind, safe_level};

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
pub(crate) fn run(inv: &Invocation, json: bool) -> i32 {
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

#[cfg(test)]
mod tests;
