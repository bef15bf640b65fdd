//! The high stage: settings loaded, request judged ([`crate::judge`], which `gate check`
//! shares), decision acted on. Every path ends in an exec or an exit status; see
//! [`crate::main`] for the status policy.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::time::SystemTime;

use crate::audit;
use crate::config::{AuditJournal, DEFAULT_SHELL, Settings};
use crate::exec::{self, Permit, PermitError, Plan, PlanKind};
use crate::explain::{self, Explanation};
use crate::invocation::{self, Action, Invocation, Personality, Target};
use crate::judge::{Decided, Judged, Judgement, Purpose, join, judge};
use crate::output::{REFUSED, fail, print_out as print, say};
use crate::policy::{Allowed, CommandText, Decision};
use crate::sandbox;
use crate::session;
use crate::settings::{load_settings, protected_files, sandbox_settings};

fn var(name: &str) -> Option<OsString> {
    std::env::var_os(name)
}

/// Run one invocation to its exit status (or exec, never returning).
pub fn run(argv: Vec<OsString>) -> i32 {
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

/// Why a record could not be written, in words a user can act on. A read-only file
/// system is what an agent's own sandbox looks like from inside (Codex's `read-only` and
/// `workspace-write` modes mount everything else read-only).
fn audit_error(path: &std::path::Path, err: &std::io::Error) -> String {
    let mut line = format!("cannot write the audit log {}: {err}", path.display());
    if err.raw_os_error() == Some(libc::EROFS) {
        let dir = path.parent().unwrap_or(path);
        line.push_str(&format!(
            " (gate runs inside a sandbox that makes it read-only, such as the agent's own: \
             let that sandbox write {}, for Codex `sandbox_workspace_write.writable_roots`, \
             or set audit.required = true to refuse instead of running unrecorded)",
            dir.display()
        ));
    }
    line
}

/// The audit trail for one call; the session and call ids are made only when a record
/// is written.
struct Trail<'a> {
    settings: &'a Settings,
    judged: &'a Judged,
    /// One id for every record of this call (an allow, then an exec failure).
    call_id: std::cell::OnceCell<String>,
    /// The log, opened by the first record and kept open: after the sandbox is in force
    /// the file can no longer be opened, but a record can still be written to it.
    file: std::cell::RefCell<Option<(PathBuf, std::fs::File)>>,
    /// The system log (`audit.journal`), connected by the first record and kept, for the
    /// same reason.
    system: std::cell::RefCell<Option<audit::journal::SystemLog>>,
    /// What the sandbox enforces, once it is prepared.
    sandbox: std::cell::RefCell<Option<serde_json::Value>>,
}

impl<'a> Trail<'a> {
    /// `system`: the system log, when it was opened (and primed) already.
    fn new(
        settings: &'a Settings,
        judged: &'a Judged,
        system: Option<audit::journal::SystemLog>,
    ) -> Trail<'a> {
        Trail {
            settings,
            judged,
            call_id: std::cell::OnceCell::new(),
            file: std::cell::RefCell::new(None),
            system: std::cell::RefCell::new(system),
            sandbox: std::cell::RefCell::new(None),
        }
    }
}

/// With `audit.journal` on, the system log opened at once and primed
/// ([`audit::journal::SystemLog::prime`]), so that journald reads who gate is while gate
/// decides, rather than gate waiting for it before the exec. `None` when it is off, or
/// cannot be opened: the record opens it again then, and reports why it cannot.
fn system_log_primed(settings: &Settings) -> Option<audit::journal::SystemLog> {
    if settings.audit_journal == AuditJournal::Off {
        return None;
    }
    let log = audit::journal::open(settings.audit_journal)
        .ok()
        .flatten()?;
    log.prime();
    Some(log)
}

impl Trail<'_> {
    /// Append the record to the log and send it to the system log, each where it is
    /// configured. `Err` carries the line to print when either cannot be written;
    /// whether that blocks the run is the caller's choice, by `settings.audit_required`.
    fn record(&self, decision: &str, e: &Explanation, message: Option<&str>) -> Result<(), String> {
        let mut errors = Vec::new();
        let mut file = self.file.borrow_mut();
        if file.is_none() {
            match audit::resolve_path(&self.settings.audit_log, &var) {
                Ok(Some(path)) => match audit::open(&path, &var) {
                    Ok(opened) => *file = Some((path, opened)),
                    Err(err) => errors.push(audit_error(&path, &err)),
                },
                Ok(None) => {}
                Err(why) => errors.push(format!("cannot write the audit log: {why}")),
            }
        }
        let mut system = self.system.borrow_mut();
        if system.is_none() {
            match audit::journal::open(self.settings.audit_journal) {
                Ok(log) => *system = log,
                Err(err) => errors.push(err.to_string()),
            }
        }
        if file.is_none() && system.is_none() {
            return if errors.is_empty() {
                Ok(())
            } else {
                Err(errors.join("; "))
            };
        }
        let session_id = session::session_id(self.settings.session.as_deref());
        let call_id = self.call_id()?;
        let record = audit::Record {
            call_id,
            session_id: &session_id,
            level: self.settings.policy.level.as_str(),
            kind: self.judged.kind,
            command: self.judged.text.as_ref().map(CommandText::as_str),
            decision,
            decided_by: e.decided_by,
            rule: e.rule.as_deref(),
            rule_origin: e.rule_origin.clone(),
            message: Some(message.unwrap_or(&e.reason)),
            sandbox: self.sandbox.borrow().clone(),
            wrapper: self.judged.wrapper.as_ref().map(|(_, t)| *t),
            looks_like: self.judged.looks_like.as_ref().map(|(agent, _)| *agent),
            script_sha256: self.judged.script_sha256.as_ref().map(Option::as_deref),
        };
        let context = audit::Context::own();
        let object = audit::object(&record, SystemTime::now(), &context);
        let line = audit::line(&object);
        if let Some((path, file)) = file.as_mut() {
            if let Err(err) = audit::write(file, &line) {
                errors.push(audit_error(path, &err));
            }
        }
        if let Some(log) = system.as_ref() {
            if let Err(err) = log.send(&object, &line, context.pid) {
                errors.push(err.to_string());
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("; "))
        }
    }

    /// Where gate's supervisor records (the exec check's refusals, the domain proxy's
    /// connections): the log this call's records went to (a second descriptor of it),
    /// with the same ids. `None` when the log is off or was never opened.
    fn supervisor_audit(&self) -> Result<Option<crate::supervisor::Audit>, String> {
        let file = self.file.borrow();
        let (Some((path, file)), Some(call_id)) = (file.as_ref(), self.call_id.get()) else {
            return Ok(None);
        };
        let file = file.try_clone().map_err(|err| audit_error(path, &err))?;
        Ok(Some(crate::supervisor::Audit {
            file,
            call_id: call_id.clone(),
            session_id: session::session_id(self.settings.session.as_deref()),
            level: self.settings.policy.level.as_str(),
        }))
    }

    /// This call's id, made on first use.
    fn call_id(&self) -> Result<&str, String> {
        if let Some(id) = self.call_id.get() {
            return Ok(id);
        }
        let id = session::call_id()?;
        Ok(self.call_id.get_or_init(|| id).as_str())
    }

    /// After the allow record: a second record with the same call id says that nothing
    /// ran after all, and why.
    fn did_not_run(&self, explanation: &Explanation, message: &str) {
        let e = Explanation {
            decided_by: "error",
            ..explanation.clone()
        };
        if let Err(line) = self.record("error", &e, Some(message)) {
            say(&format!("gate: warning: {line}"));
        }
    }

    /// Like [`Trail::did_not_run`], after a record that could not be written
    /// everywhere: the failure is what gate reports, so no warning is added.
    fn not_run_after_all(&self, explanation: &Explanation, message: &str) {
        let e = Explanation {
            decided_by: "error",
            ..explanation.clone()
        };
        let _ = self.record("error", &e, Some(message));
    }

    /// Record a refusal. The refusal stands either way; a log that cannot be written is
    /// reported.
    fn refused(&self, e: &Explanation, message: &str) {
        if let Err(line) = self.record("deny", e, Some(message)) {
            say(&format!("gate: warning: {line}"));
        }
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

/// Ask an approver, then run on an approve or refuse.
fn ask_then_run(
    inv: &Invocation,
    target: &Target,
    trail: &Trail<'_>,
    asked: &crate::policy::Asked,
    explanation: Explanation,
) -> i32 {
    use crate::approval::protocol::{ApprovalRequest, Ask, Decision as Answer};
    use crate::approval::{self, By, Outcome};

    let settings = trail.settings;
    let judged = trail.judged;
    let subject = explain::subject(judged.text.as_ref());
    // Finding the session reads /proc: only now that someone is asked, never on the path
    // of a command that runs unasked.
    let session_id = session::session_id(settings.session.as_deref());
    let channels = approval::Channels::of(settings, &var);
    // Remembering takes effect only where the approver keeps it: gate's broker, in its
    // memory. gate itself stores nothing, so for a host program's socket and for the
    // terminal an approval counts once. Text that is not exact is never remembered, and
    // what an ask rule matched is asked every time: the broker neither keeps nor
    // answers from memory a request that does not support remembering.
    let exact_text = judged.text.as_ref().is_some_and(|t| t.is_exact());
    let leaves_sandbox = matches!(asked, crate::policy::Asked::Unsandboxed { .. });
    // What a rule made gate ask is asked every time, and the record keeps the rule.
    let by_rule = leaves_sandbox || matches!(asked, crate::policy::Asked::Rule(_));
    let remember_supported =
        exact_text && !by_rule && approval::paths::is_brokers(&channels.socket);
    // Only gate's own approvers (the broker's `gate watch` and `gate approve`, the
    // terminal) say that a yes lets the command out of the sandbox; a host program's
    // approver would show the command alone. With nothing at the socket's path, only the
    // terminal can be asked.
    if leaves_sandbox
        && std::fs::symlink_metadata(&channels.socket).is_ok()
        && !approval::paths::is_brokers(&channels.socket)
    {
        let reason = format!(
            "{}, and the approver socket {} is not gate's broker, which alone tells the \
             person that a yes runs the command outside the sandbox",
            explanation.reason,
            channels.socket.display()
        );
        let e = Explanation {
            decided_by: "error",
            ..explanation.clone()
        };
        trail.refused(&e, &reason);
        say(&explain::refusal_line(
            &subject,
            &reason,
            "Run it inside the sandbox (drop the unsandboxed rule), or approve through `gate serve`.",
        ));
        return REFUSED;
    }
    let command = match (&judged.text, target) {
        (Some(text), _) => text.as_str().to_owned(),
        (None, Target::Shell { args, .. }) => {
            let mut words = vec![inv.argv0.to_string_lossy().into_owned()];
            words.extend(args.iter().map(|a| a.to_string_lossy().into_owned()));
            format!("(a shell session: {})", shell_words::join(words))
        }
        (None, Target::Program { .. }) => unreachable!("a program always has a command text"),
    };
    let work_dir = std::env::current_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    let call_id = match trail.call_id() {
        Ok(id) => id.to_owned(),
        Err(why) => return fail(format!("{why}; nothing was run")),
    };
    let request = ApprovalRequest {
        call_id,
        session_id,
        kind: judged.kind.to_owned(),
        command,
        work_dir,
        level: settings.policy.level.as_str().to_owned(),
        timeout_seconds: u64::from(settings.timeout),
        remember_supported,
        // Where this gate reads lasting approvals, when it would take one (the broker
        // writes its own file only when it is this one): a request that could be
        // remembered, and a configuration that reads the file and is not locked.
        always_file: settings
            .always_file
            .as_deref()
            .and_then(std::path::Path::to_str)
            .filter(|_| remember_supported)
            .map(str::to_owned),
        pid: u64::from(std::process::id()),
        leaves_sandbox,
    };
    let deadline =
        std::time::Instant::now() + std::time::Duration::from_secs(u64::from(settings.timeout));
    let outcome = approval::seek(&Ask::Approval(request), &channels, deadline);
    tracing::debug!(?outcome, "asked");
    let refuse = |by: By, reason: String, message: Option<String>, advice: &str| {
        let e = Explanation {
            decided_by: by.as_str(),
            ..explanation.clone()
        };
        trail.refused(&e, message.as_deref().unwrap_or(&reason));
        say(&explain::refusal_line(&subject, &reason, advice));
        REFUSED
    };
    match outcome {
        Outcome::Decided {
            decision:
                Answer::Approve {
                    remember,
                    remember_rule,
                    always: _,
                    kept,
                    source,
                },
            by,
        } => {
            if (remember || remember_rule.is_some()) && !kept {
                tracing::debug!(
                    "the approver asked gate to remember; gate keeps nothing: approved once"
                );
            }
            let channel = match (by, source.as_deref()) {
                (By::Socket, Some("remembered")) => "remembered",
                // A waiting copy of a command the person just always allowed.
                (By::Socket, Some(crate::approval::broker::ALWAYS_SOURCE)) => "always-allow",
                (By::Socket, _) => "socket",
                _ => "tty",
            };
            // At `safe` an approved command still runs inside the sandbox, unless the
            // question was whether it may leave it.
            let allowed = crate::policy::Allowed::Approved {
                channel,
                source: source.map(Into::into),
                sandboxed: settings.policy.level == crate::policy::Level::Safe && !leaves_sandbox,
            };
            let mut e = explain::explain(&Decision::Allow(allowed.clone()), &settings.policy);
            // The record keeps the rule that made gate ask.
            if by_rule {
                e.rule = explanation.rule.clone();
                e.rule_origin = explanation.rule_origin.clone();
                e.matched = explanation.matched.clone();
            }
            run_allowed(inv, target, trail, &allowed, e)
        }
        Outcome::Decided {
            decision: Answer::Deny { message, .. },
            by,
        } => {
            let who = match by {
                By::Tty => "denied on the terminal",
                _ => "the approver denied it",
            };
            let message = message
                .as_deref()
                .map(str::trim)
                .filter(|m| !m.is_empty())
                .map(approval_message);
            let reason = match &message {
                Some(m) => format!("{who}: \"{m}\""),
                None => who.to_owned(),
            };
            let advice = if message.is_some() {
                "Do not run it another way; follow the approver's message."
            } else {
                "Do not run it another way; ask the user what to do instead."
            };
            refuse(by, reason, message, advice)
        }
        Outcome::Answered { .. } => refuse(
            By::Error,
            "the approver answered a question that was not asked".into(),
            None,
            "Tell the user the approver is misbehaving.",
        ),
        Outcome::Unanswered { by, cause } => {
            let reason = match by {
                By::NoApprover => format!("{}, and {cause}", explanation.reason),
                _ => cause,
            };
            let advice = match by {
                By::NoApprover => approval::NO_APPROVER_ADVICE,
                By::Timeout => "Unanswered means denied: ask the user before trying again.",
                By::Interrupted => "Do not retry it unless the user asks.",
                _ => "Tell the user the approver failed; do not run the command another way.",
            };
            refuse(by, reason, None, advice)
        }
    }
}

/// An approver's message as the model reads it: one line, control characters escaped,
/// at most 1,000 characters.
fn approval_message(text: &str) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == 1000 {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
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
        if let Err(why) = crate::agents::agent_workspace(&cwd, &var) {
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
                Ok(userns) => (None, Some(Deferred::Start(execs, userns))),
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
            Err(e) => return refuse(e.to_string()),
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
                permit.checked_at_exec(execs, audit, userns)
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
                .map_err(|e| e.to_string())
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
                            .map_err(|e| e.to_string()),
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

/// gate's supervisor: started with the sandbox, or, outside it, to start right before
/// exec.
enum Deferred {
    Started(crate::supervisor::Supervisor),
    /// With whether the command must run in a user namespace of its own, for the
    /// supervisor to read its memory ([`crate::supervisor::Reading`]).
    Start(crate::supervisor::Execs, bool),
}

/// Whether the supervisor for deny rules at exec, outside the sandbox, could read what
/// the command runs (Yama); checked before the allow record.
fn exec_checks_readable() -> Result<bool, String> {
    use crate::supervisor::Reading;
    let root = nix::unistd::geteuid().is_root();
    match crate::supervisor::readable(root) {
        Ok(Reading::Direct) => Ok(false),
        Ok(Reading::OwnUserNamespace) => match sandbox::ending::plan(root) {
            sandbox::ending::Plan::Namespace => Ok(true),
            sandbox::ending::Plan::NotEnded(why) => Err(format!(
                "{}; nothing was run",
                crate::supervisor::unreadable_without_namespace(&why)
            )),
        },
        Err(why) => Err(format!("{why}; nothing was run")),
    }
}

/// Build and prepare the sandbox for a run in the current directory, with gate's
/// supervisor when the run needs one (network by domain, deny rules at exec, ending what
/// the command leaves behind).
fn prepare_sandbox(
    settings: &Settings,
    execs: Option<crate::supervisor::Execs>,
) -> Result<Prepared, sandbox::SandboxError> {
    let cwd = std::env::current_dir().map_err(|e| {
        sandbox::SandboxError(format!(
            "cannot find the working directory ({e}); nothing was run"
        ))
    })?;
    crate::agents::agent_workspace(&cwd, &var).map_err(sandbox::SandboxError)?;
    let is_root = nix::unistd::geteuid().is_root();
    let spec = sandbox::spec::build(
        &sandbox_settings(settings),
        &cwd,
        &var,
        is_root,
        &protected_files(settings),
    )?;
    tracing::debug!(?spec, "sandbox");
    let kernel = sandbox::Sandbox::admit(&spec)?;
    let notified = sandbox::Notified::of(&spec, &kernel, execs.is_some());
    // Before Landlock ABI 4, the supervisor decides TCP by the same ports.
    let tcp = match (&spec.network, notified.tcp) {
        (sandbox::Network::Tcp { connect, bind }, true) => Some(crate::supervisor::Ports {
            connect: connect.clone(),
            bind: bind.clone(),
        }),
        _ => None,
    };
    // What the command leaves behind is ended by the supervisor, in a user namespace of
    // the command's own where one can be made (decided now, made last).
    let mut ending = sandbox::ending::plan(is_root);
    let ends = ending == sandbox::ending::Plan::Namespace;
    // The supervisor is started first: gate is small then (the fork copies little, and
    // the intermediate process is long gone when gate reaps it before exec), and it
    // inherits none of the walk's descriptors, nor the command's user namespace.
    let mut needs_userns = false;
    let checks_execs = execs.is_some();
    let unreadable = move |why: &str| {
        if checks_execs {
            crate::supervisor::unreadable_without_namespace(why)
        } else {
            crate::supervisor::tcp_unreadable_without_namespace(why)
        }
    };
    let supervisor = if notified.any() || ends {
        let error = |e: String| sandbox::SandboxError(e);
        // Under Yama's ptrace_scope 1 or 2, the command's own user namespace is what
        // lets the supervisor read its memory (and copy its sockets).
        if execs.is_some() || tcp.is_some() {
            let reading = crate::supervisor::readable(false)
                .map_err(|why| error(format!("{why}; nothing was run")))?;
            if reading == crate::supervisor::Reading::OwnUserNamespace {
                if let sandbox::ending::Plan::NotEnded(why) = &ending {
                    return Err(error(format!("{}; nothing was run", unreadable(why))));
                }
                needs_userns = true;
            }
        }
        let proxy = match &spec.proxy {
            None => None,
            Some(domains) => {
                let policy = crate::netproxy::Policy::new(&domains.allow, &domains.deny)
                    .and_then(|p| p.with_resolve(&domains.resolve))
                    .map_err(|e| error(format!("{e}; nothing was run")))?;
                Some(crate::supervisor::Bound::bind(policy).map_err(|e| error(e.to_string()))?)
            }
        };
        Some(
            crate::supervisor::Supervisor::start(crate::supervisor::Duties {
                execs,
                proxy,
                tcp,
                drop_capabilities: true,
            })
            .map_err(|e| error(e.to_string()))?,
        )
    } else {
        None
    };
    let mut sandbox = sandbox::Sandbox::prepare(&spec, kernel, notified)?;
    let userns = if ends {
        match sandbox::ending::enter()? {
            Ok(userns) => Some(userns),
            Err(why) if needs_userns => {
                return Err(sandbox::SandboxError(format!(
                    "{}; nothing was run",
                    unreadable(&why)
                )));
            }
            Err(why) => {
                ending = sandbox::ending::Plan::NotEnded(why);
                None
            }
        }
    } else {
        None
    };
    sandbox.left_behind(&ending);
    Ok(Prepared {
        sandbox,
        supervisor,
        userns,
    })
}

/// The sandbox, prepared, with gate's supervisor when the run has one, and the
/// command's user namespace when what it leaves behind is ended.
struct Prepared {
    sandbox: sandbox::Sandbox,
    supervisor: Option<crate::supervisor::Supervisor>,
    userns: Option<std::os::fd::OwnedFd>,
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
