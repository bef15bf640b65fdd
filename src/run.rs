//! The high stage: settings loaded, request judged ([`crate::judge`], which `gate check`
//! shares), decision acted on. Every path ends in an exec or an exit status; see
//! [`crate::main`] for the status policy.
//!
//! Its parts: the records of a call (`run/trail.rs`), asking an approver
//! (`run/ask.rs`), and preparing the sandbox and the supervisor before exec
//! (`run/prepare.rs`), which is also the edge where their errors become the line that
//! says nothing was run.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

use crate::audit;
use crate::config::{DEFAULT_SHELL, Settings};
use crate::exec::{self, Permit, PermitError, Plan, PlanKind};
use crate::explain::{self, Explanation};
use crate::invocation::{self, Action, Invocation, Personality, Target};
use crate::judge::{Decided, Judged, Judgement, Purpose, join, judge};
use crate::output::{REFUSED, fail, print_out as print, say};
use crate::policy::{Allowed, Decision};
use crate::settings::load_settings;

mod ask;
mod prepare;
mod trail;

use ask::ask_then_run;
use prepare::{Deferred, Prepared, exec_checks_readable, prepare_sandbox};
use trail::{Trail, system_log_primed};

fn var(name: &str) -> Option<OsString> {
    std::env::var_os(name)
}

/// Run one invocation to its exit status (or exec, never returning).
pub(crate) fn run(argv: Vec<OsString>) -> i32 {
    // Whether a word that looks like a mistyped subcommand names a script here.
    let exists = |name: &OsStr| std::fs::symlink_metadata(name).is_ok();
    let inv = match invocation::parse(argv, &exists) {
        Ok(inv) => inv,
        Err(e) => return fail(format!("{e}; nothing was run")),
    };
    let log_filter = var("GATE_LOG");
    let log_filter = match log_filter.as_deref().map(OsStr::to_str) {
        None => None,
        Some(Some(filter)) => Some(filter),
        Some(None) => return fail("GATE_LOG: the value is not valid UTF-8; nothing was run"),
    };
    if let Err(e) = crate::diag::init(log_filter) {
        return fail(format!("{e}; nothing was run"));
    }
    match &inv.action {
        Action::Help { subcommand } => print(&match subcommand.and_then(crate::cli::subcommand) {
            Some(sub) => sub.help(),
            None => crate::cli::help_text(),
        }),
        Action::Version => print(&format!("gate {}\n", crate::cli::VERSION)),
        Action::Check { target, json } => crate::check::check(&inv, target, *json),
        Action::Doctor { json } => crate::doctor::run(&inv, *json),
        Action::Rules { json } => crate::rules_report::run(&inv, *json),
        Action::Import(args) => crate::import::apply::run(&inv, args),
        Action::Completions { shell } => crate::completions::run(shell),
        Action::Trust { action, file } => {
            crate::project::command::run(&inv, *action, file.as_deref())
        }
        Action::Serve { requests_socket } => with_socket(&inv, |settings, socket| {
            crate::approval::broker::serve(socket, requests_socket.as_deref(), settings)
        }),
        Action::Pending { json } => with_socket(&inv, |_, socket| {
            crate::approval::admin::pending(socket, *json)
        }),
        Action::Approve {
            id,
            remember,
            remember_rule,
            always,
            always_rule,
        } => with_socket(&inv, |_, socket| {
            let keep = crate::approval::admin::Keep {
                remember: *remember,
                remember_rule: remember_rule.as_deref(),
                always: *always,
                always_rule: always_rule.as_deref(),
            };
            crate::approval::admin::approve(socket, id, keep)
        }),
        Action::Refuse { id, message } => with_socket(&inv, |_, socket| {
            crate::approval::admin::deny(socket, id, message.as_deref())
        }),
        Action::Watch => with_socket(&inv, |settings, socket| {
            crate::approval::watch::run(socket, settings)
        }),
        Action::Ask {
            question,
            options,
            multiple,
        } => crate::approval::question::run(&inv, question, options, *multiple),
        Action::Run(target) => run_target(&inv, target),
    }
}

/// Run an approval tool with the settings and the broker's socket (configured, or the
/// default path).
fn with_socket(inv: &Invocation, tool: impl FnOnce(&Settings, &std::path::Path) -> i32) -> i32 {
    let settings = match load_settings(inv) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let socket = tools_socket(inv, &settings);
    tool(&settings, &socket)
}

/// The socket `gate serve` and the approver tools use. For the approver user that
/// `approval.approver` names, `approval.socket` from a file is where the other users'
/// gates ask (the broker's requests socket), not the broker's own socket: theirs is the
/// default one, unless `--socket` or `GATE_SOCKET` names another.
fn tools_socket(inv: &Invocation, settings: &Settings) -> std::path::PathBuf {
    let own = nix::unistd::geteuid().as_raw();
    let named = inv.gate.socket.is_some() || var("GATE_SOCKET").is_some_and(|v| !v.is_empty());
    match settings.approver.as_ref().map(|a| a.uid()) {
        Some(Ok(uid)) if uid == own && !named => crate::approval::paths::default_socket(&var),
        _ => crate::approval::socket_path(settings, &var),
    }
}

fn run_target(inv: &Invocation, target: &Target) -> i32 {
    let settings = match load_settings(inv) {
        Ok(s) => s,
        Err(code) => return code,
    };
    // Primed before the judgement, so that journald reads who gate is while gate decides.
    let mut system_log = system_log_primed(&settings);
    let Decided {
        judged,
        decision,
        explanation,
        ..
    } = match judge(inv, target, &settings, Purpose::Run) {
        Judgement::Startup {
            call,
            judged,
            explanation,
        } => return answer_startup(&call, &settings, &judged, explanation, system_log),
        Judgement::Decided(decided) => decided,
    };
    if let Decision::Deny(crate::policy::Denied::Rule(_))
    | Decision::Ask(crate::policy::Asked::Rule(_)) = &decision
    {
        if let Some(code) = startup_checked_at_exec(inv, target, &settings, &mut system_log) {
            return code;
        }
    }
    tracing::debug!(?decision, reason = %explanation.reason, "decided");
    let trail = Trail::new(&settings, &judged, system_log);
    let subject = explain::subject(judged.text.as_ref());

    match &decision {
        Decision::Allow(allowed) => run_allowed(inv, target, &trail, allowed, explanation),
        Decision::Ask(asked) => ask_then_run(inv, target, &trail, asked, explanation),
        Decision::Deny(_) => {
            let line = explain::refusal_line(
                &subject,
                &explanation.reason,
                explain::advice(&decision, judged.text.as_ref()),
            );
            trail.refused(&explanation, &explanation.reason);
            say(&line);
            REFUSED
        }
    }
}

/// An agent's start-up call (Claude Code's snapshot creation and environment probe,
/// Codex's snapshot capture and check; see [`crate::policy::wrapper::startup`]): where
/// the judgement finds one that gate answers ([`Judgement::Startup`]), gate answers it
/// itself with an empty snapshot and runs nothing, so the agent starts at once without a
/// prompt and later wrappers source a file gate knows. (The scripts source the user's
/// start-up files and hold text of the moment, so they cannot be checked; a forged one
/// gets an empty snapshot, nothing more.)
fn answer_startup(
    call: &crate::policy::wrapper::StartupCall<'_>,
    settings: &Settings,
    judged: &Judged,
    e: Explanation,
    system_log: Option<audit::journal::SystemLog>,
) -> i32 {
    let trail = Trail::new(settings, judged, system_log);
    match crate::agents::answer_startup(call) {
        Ok(()) => {
            if let Err(line) = trail.record("allow", &e, None) {
                say(&format!("gate: warning: {line}"));
            }
            0
        }
        Err(why) => {
            trail.refused(
                &Explanation {
                    decided_by: "error",
                    ..e
                },
                &why,
            );
            fail(format!("{why}; nothing was run"))
        }
    }
}

/// An agent's start-up call at `full` that the deny or ask rules refuse or ask about as
/// text, and that gate does not answer itself (Codex's snapshot capture): its script
/// sources the user's start-up files, which the text stage cannot read (every rule
/// matches it), so it runs, and with deny rules each program it starts is judged at exec
/// instead. (Ask rules read the text only: what the start-up files run is not asked
/// about, as a script's programs are not.)
fn startup_checked_at_exec(
    inv: &Invocation,
    target: &Target,
    settings: &Settings,
    system_log: &mut Option<audit::journal::SystemLog>,
) -> Option<i32> {
    let policy = &settings.policy;
    if policy.level != crate::policy::Level::Full
        || (policy.deny.is_empty() && policy.ask.is_empty())
    {
        return None;
    }
    let Target::Shell { args, .. } = target else {
        return None;
    };
    let call = crate::agents::startup(args, &var)?;
    let judged = Judged {
        kind: "agent-startup",
        text: Some(join(args)),
        wrapper: None,
        execs_gate: false,
        looks_like: None,
        script_sha256: None,
    };
    let explanation = Explanation {
        decided_by: "agent-startup",
        rule: None,
        rule_origin: None,
        matched: None,
        reason: if policy.deny.is_empty() {
            format!(
                "{}: level \"full\" runs it; its script reads the user's start-up files, \
                 which the ask rules cannot check as text (they read the text only)",
                call.kind
            )
        } else {
            format!(
                "{}: level \"full\" runs it; its script reads the user's start-up files, \
                 which the deny rules cannot check as text, so every program it starts is \
                 checked at exec",
                call.kind
            )
        },
    };
    let trail = Trail::new(settings, &judged, system_log.take());
    Some(run_allowed(
        inv,
        target,
        &trail,
        &Allowed::Level,
        explanation,
    ))
}

/// Run an allowed target: plan it, prepare the sandbox at `safe`, write the allow
/// record, and exec (returning only if that fails).
fn run_allowed(
    inv: &Invocation,
    target: &Target,
    trail: &Trail<'_>,
    allowed: &crate::policy::Allowed,
    explanation: Explanation,
) -> i32 {
    let settings = trail.settings;
    let plan = match plan(inv, target, settings) {
        Ok(plan) => plan,
        Err(message) => {
            let e = Explanation {
                decided_by: "error",
                ..explanation
            };
            trail.refused(&e, &message);
            return fail(format!("{message}; nothing was run"));
        }
    };
    // Codex's wrapper at `safe` runs no sandbox here: the gate it execs sets one up,
    // around the working directory, from inside this one's mark, where it can no longer
    // see which directory Codex works in. So the check is made here.
    if trail.judged.execs_gate && settings.policy.level == crate::policy::Level::Safe {
        let cwd = std::env::current_dir().unwrap_or_default();
        if let Err(why) = crate::agents::agent_workspace(&cwd, &var).map_err(|e| e.line()) {
            let e = Explanation {
                decided_by: "error",
                ..explanation
            };
            trail.refused(&e, &why);
            return fail(why);
        }
    }
    // With deny rules, every exec of the command is checked by gate's supervisor. An
    // agent's wrapper that runs gate again leaves that to the gate it runs.
    let refuse = |message: String| {
        let e = Explanation {
            decided_by: "error",
            ..explanation.clone()
        };
        trail.refused(&e, &message);
        fail(message)
    };
    let deny = &settings.policy.deny;
    let execs = if deny.is_empty() || matches!(allowed, Allowed::Delegated) {
        None
    } else {
        // A gate inside a command of another gate whose supervisor checks these rules
        // already leaves it to that one: a process can have one supervisor only.
        match crate::supervisor::outer_checks(deny) {
            crate::supervisor::Outer::None => {
                Some(crate::supervisor::Execs::new(deny.clone(), var("PATH")))
            }
            crate::supervisor::Outer::Covers => {
                tracing::debug!("another gate's supervisor checks these deny rules at exec");
                None
            }
            crate::supervisor::Outer::Lacks => {
                return refuse(
                    "this gate runs inside a command of another gate, whose supervisor checks \
                     every exec but not all of this gate's deny rules, and a process can have \
                     one supervisor only; nothing was run. Give the outer gate the same deny \
                     rules"
                        .to_owned(),
                );
            }
        }
    };
    // Everything that can fail is prepared before the allow record: at `safe` the
    // sandbox (and the record carries what it will enforce), with deny rules the
    // supervisor.
    let (sandbox, supervisor) = match Permit::for_allowed(allowed) {
        // Outside the sandbox the supervisor is started at the last moment, right
        // before exec (see `exec::exec`): gate then writes to few pages after the fork,
        // each of which the fork would have made it copy.
        Ok(_) => match execs {
            None => (None, None),
            Some(execs) => match exec_checks_readable() {
                Ok(userns) => (None, Some(Deferred::Start(Box::new(execs), userns))),
                Err(message) => return refuse(message),
            },
        },
        Err(PermitError::NeedsSandbox) => match prepare_sandbox(settings, execs) {
            Ok(Prepared {
                sandbox,
                supervisor,
                userns,
            }) => {
                *trail.sandbox.borrow_mut() = Some(sandbox.summary().clone());
                (Some((sandbox, userns)), supervisor.map(Deferred::Started))
            }
            Err(line) => return refuse(line),
        },
    };
    if let Err(line) = trail.record("allow", &explanation, None) {
        if settings.audit_required {
            // Where the record did go (the file, or the journal), it must not read as a
            // command that ran.
            trail.not_run_after_all(&explanation, &line);
            return fail(format!(
                "{line}; the configuration requires the audit log (audit.required), so nothing was run"
            ));
        }
        say(&format!("gate: warning: {line}"));
    }
    // The supervisor records what it refuses, and the proxy each connection, in this
    // run's log (ending what the command leaves behind records nothing).
    let records = match &sandbox {
        Some((sandbox, _)) => sandbox.notifies(),
        None => true,
    };
    let audit = match supervisor
        .as_ref()
        .filter(|_| records)
        .map(|_| trail.supervisor_audit())
    {
        None | Some(Ok(None)) => None,
        Some(Ok(Some(audit))) => Some(audit),
        Some(Err(line)) if settings.audit_required => {
            trail.did_not_run(&explanation, &line);
            return fail(format!(
                "{line}; the configuration requires the audit log (audit.required), so \
                 nothing was run"
            ));
        }
        Some(Err(line)) => {
            say(&format!("gate: warning: {line}"));
            None
        }
    };
    let permit = match sandbox {
        None => match (Permit::for_allowed(allowed), supervisor) {
            (Ok(permit), None) => permit,
            (Ok(permit), Some(Deferred::Start(execs, userns))) => {
                permit.checked_at_exec(*execs, audit, userns)
            }
            (Ok(_), Some(Deferred::Started(_))) => unreachable!("started only with the sandbox"),
            (Err(PermitError::NeedsSandbox), _) => unreachable!("prepared above"),
        },
        Some((sandbox, userns)) => {
            if !sandbox.not_enforced.is_empty() {
                say(&format!(
                    "gate: warning: --best-effort: the sandbox does not enforce {}",
                    sandbox
                        .not_enforced
                        .iter()
                        .map(|f| f.describe())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            let supervisor = match supervisor {
                Some(Deferred::Started(supervisor)) => Some(supervisor),
                Some(Deferred::Start(..)) => unreachable!("started with the sandbox"),
                None => None,
            };
            let proxy = supervisor.as_ref().and_then(|s| s.proxy());
            let notified = sandbox.notifies();
            let enforced = sandbox
                .enforce()
                .map_err(|e| explain::sandbox_not_run(&e))
                .and_then(
                    |mut enforced| match (supervisor, enforced.listener.take()) {
                        (None, _) => Ok(enforced),
                        (Some(_), None) if notified => Err("the seccomp filter gave no \
                                                            listener for gate's supervisor; \
                                                            nothing was run"
                            .to_owned()),
                        (Some(supervisor), listener) => supervisor
                            .hand_over(listener, audit, userns)
                            .map(|()| enforced)
                            .map_err(|e| explain::not_run(&e, None)),
                    },
                );
            match enforced {
                Ok(enforced) => Permit::inside(enforced, proxy),
                Err(message) => {
                    trail.did_not_run(&explanation, &message);
                    return fail(message);
                }
            }
        }
    };
    let err = exec::exec(plan, permit);
    let message = err.to_string();
    // A refusal at exec has its own record (decided_by "exec").
    if err.refused.is_none() {
        trail.did_not_run(&explanation, &message);
    }
    say(&format!("gate: {message}"));
    err.exit_status()
}

/// What exactly to exec for an allowed target.
fn plan(inv: &Invocation, target: &Target, settings: &Settings) -> Result<Plan, String> {
    match target {
        Target::Program { argv } => Ok(Plan {
            program: argv[0].clone(),
            argv: argv.clone(),
            kind: PlanKind::Program,
            unset: &[],
        }),
        Target::Shell {
            args,
            work,
            operands_at,
        } => {
            let (shell, argv0) = match &inv.personality {
                Personality::Shim { name } => {
                    let path_var = var("PATH");
                    let shell = exec::shim_shell(name, &inv.argv0, path_var.as_deref())
                        .map_err(|e| e.to_string())?;
                    (shell, inv.argv0.clone())
                }
                Personality::Gate => {
                    let default = (PathBuf::from(DEFAULT_SHELL), crate::policy::Origin::BuiltIn);
                    let (configured, origin) = settings.shell.as_ref().unwrap_or(&default);
                    let shell =
                        exec::configured_shell(configured, origin).map_err(|e| e.to_string())?;
                    let argv0 = exec::shell_argv0(&shell, &inv.argv0);
                    (shell, argv0)
                }
            };
            exec::shell_plan(shell, &argv0, args, *operands_at, work)
        }
    }
}
