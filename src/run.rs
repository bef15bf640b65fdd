//! The high stage: settings loaded, request judged, decision acted on. Every path ends
//! in an exec or an exit status; see [`crate::main`] for the status policy.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::time::SystemTime;

use crate::audit;
use crate::config::{AuditJournal, AuditLog, DEFAULT_SHELL, Settings};
use crate::exec::{self, Permit, PermitError, Plan, PlanKind};
use crate::explain::{self, Explanation};
use crate::invocation::{self, Action, Invocation, Personality, ShellWork, Target};
use crate::output::{REFUSED, fail, print_out as print, say};
use crate::policy::readonly::Files;
use crate::policy::{Allowed, CommandText, Decision, Level, Remembered, Request, decide};
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
        Action::Check { target, json } => check(&inv, target, *json),
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

/// What gate judges for a target.
struct Judged {
    /// command / script / program / session
    kind: &'static str,
    text: Option<CommandText>,
    /// An agent's wrapper around `text`: the whole `-c` text, and the template's name.
    wrapper: Option<(CommandText, &'static str)>,
    /// The wrapper runs `text` through gate again, under the same settings.
    execs_gate: bool,
    /// Text that looks like an agent's wrapper but is judged whole: the agent, and why
    /// (said in the reason, by `gate check` and in the audit record, so that a user
    /// knows why nothing the agent runs is allowed).
    looks_like: Option<(&'static str, String)>,
    /// For a script: the SHA-256 of its content when it was judged (`Some(None)`: it
    /// could not be read), for the record; see [`Judged::hash_script`].
    script_sha256: Option<Option<String>>,
}

impl Judged {
    /// `same_settings`: this gate was given no options of its own, so a gate the wrapper
    /// runs (a shim, which takes none) decides under the same settings. `shell`: the kind
    /// of shell gate will run (`bash`, `zsh`), asked only of a wrapper that needs one.
    fn of(
        target: &Target,
        same_settings: bool,
        shell: &dyn Fn() -> Option<&'static str>,
    ) -> Judged {
        let plain = |kind, text| Judged {
            kind,
            text,
            wrapper: None,
            execs_gate: false,
            looks_like: None,
            script_sha256: None,
        };
        match target {
            Target::Shell { work, args, .. } => match work {
                ShellWork::Command(c) => {
                    let outer = CommandText::from_bytes(c.as_bytes());
                    // An agent's wrapper whose files check out is judged by the agent's
                    // own command inside it; the shell still runs the whole text.
                    let mut looks_like = None;
                    if outer.is_exact() {
                        if let Some(u) = crate::policy::wrapper::unwrap(outer.as_str()) {
                            let kind = u.bookkeeping.shells.and_then(|_| shell());
                            match crate::agents::trusted(&u, kind, &var) {
                                Ok(trust) => {
                                    let inner = CommandText::new(u.inner.into_owned());
                                    let template = u.template;
                                    return Judged {
                                        kind: "command",
                                        text: Some(inner),
                                        wrapper: Some((outer.clone(), template)),
                                        execs_gate: trust.execs_gate && same_settings,
                                        looks_like: None,
                                        script_sha256: None,
                                    };
                                }
                                Err(why) => {
                                    tracing::debug!(
                                        template = u.template,
                                        %why,
                                        "an agent's wrapper, judged whole"
                                    );
                                    let name = crate::policy::wrapper::family(u.agent)
                                        .map_or(u.agent, |f| f.name);
                                    looks_like = Some((
                                        u.agent,
                                        format!(
                                            "it is {name}'s wrapper ({}), but {why}, so gate judges the whole text",
                                            u.template
                                        ),
                                    ));
                                }
                            }
                        }
                    }
                    let looks_like = looks_like.or_else(|| look_alike(outer.as_str(), args));
                    Judged {
                        looks_like,
                        ..plain("command", Some(outer))
                    }
                }
                ShellWork::Script(operands) => plain("script", Some(join(operands))),
                ShellWork::Session => plain("session", None),
                ShellWork::Info => plain("info", None),
            },
            Target::Program { argv } => plain("program", Some(join(argv))),
        }
    }

    /// For a script run by path, hash its content now, as it is when judged: the record
    /// shows only its name (and that cut at 2 KB), and the file may change afterwards.
    fn hash_script(&mut self, target: &Target) {
        if let Target::Shell {
            work: ShellWork::Script(operands),
            ..
        } = target
        {
            let script = operands.first().map(std::path::Path::new);
            self.script_sha256 = Some(script.and_then(audit::script_sha256));
        }
    }

    /// Say in the reason what the wrapper did to the judgement: the inner command was
    /// judged, or the whole text, because it only looks like a wrapper.
    fn annotate(&self, explanation: &mut Explanation) {
        if let (Some((_, template)), false) = (&self.wrapper, self.execs_gate) {
            explanation.reason = format!(
                "{} (the agent's own command, inside the {template} wrapper)",
                explanation.reason
            );
        }
        if let Some((_, note)) = &self.looks_like {
            explanation.reason = format!("{} ({note})", explanation.reason);
        }
    }

    /// What the command's words name on disk, for the read-only preset and read-only
    /// rules: looked at only where they can allow it (level `ask`, and with `wanted`),
    /// since looking costs a system call or more per word. `every_part`: for each part
    /// of a compound command even when compound mode is off (`gate check` says what it
    /// would allow).
    fn files(&self, settings: &Settings, wanted: bool, every_part: bool) -> Files {
        let policy = &settings.policy;
        match &self.text {
            Some(text) if wanted && policy.level == Level::Ask && text.is_exact() => {
                crate::files::look(settings, text.as_str(), policy.compound || every_part)
            }
            _ => Files::default(),
        }
    }

    fn request(&self) -> Request<'_> {
        match &self.text {
            Some(inner) if self.wrapper.is_some() => Request::Wrapped {
                outer: &self.wrapper.as_ref().expect("checked").0,
                inner,
                execs_gate: self.execs_gate,
            },
            Some(text) => Request::Command(text),
            None if self.kind == "info" => Request::Info,
            None => Request::Session,
        }
    }
}

/// The kind of shell gate runs a `-c` text with, found as [`plan`] finds the shell:
/// `bash` or `zsh` (by the program's real name), or `None` for another shell or one
/// that cannot be found (then [`plan`] fails too).
fn shell_kind(inv: &Invocation, settings: &Settings) -> Option<&'static str> {
    use crate::exec::start_files::Family;
    let shell = match &inv.personality {
        Personality::Shim { name } => {
            exec::shim_shell(name, &inv.argv0, var("PATH").as_deref()).ok()?
        }
        Personality::Gate => settings
            .shell
            .as_ref()
            .map_or_else(|| PathBuf::from(DEFAULT_SHELL), |(path, _)| path.clone()),
    };
    match Family::of(&shell) {
        Family::Bash => Some("bash"),
        Family::Zsh => Some("zsh"),
        Family::Posix | Family::Fish | Family::Other => None,
    }
}

/// Which known agent's wrapper `text` (the `-c` text of `args`) looks like, though no
/// template matched, and the sentence that says so; `None` for an agent's start-up call
/// (judged whole where gate does not answer it), which is no wrapper of an unknown
/// version whatever its text holds.
fn look_alike(text: &str, args: &[OsString]) -> Option<(&'static str, String)> {
    let strs: Option<Vec<&str>> = args.iter().map(|a| a.to_str()).collect();
    if strs.is_some_and(|s| crate::policy::wrapper::startup(&s).is_some()) {
        return None;
    }
    let family = crate::policy::wrapper::resembles(text)?;
    Some((
        family.agent,
        format!(
            "it looks like {}'s wrapper, a version gate does not know, so gate judges the whole text",
            family.name
        ),
    ))
}

/// Arguments joined with shell quoting, as gate judges a program's argv.
fn join(args: &[OsString]) -> CommandText {
    let strs: Option<Vec<&str>> = args.iter().map(|a| a.to_str()).collect();
    match strs {
        Some(strs) => CommandText::new(shell_words::join(strs)),
        None => {
            let lossy: Vec<String> = args
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            CommandText::inexact(shell_words::join(lossy))
        }
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
    let mut system_log = system_log_primed(&settings);
    if let Some(code) = agent_startup(target, &settings, &mut system_log) {
        return code;
    }
    let mut judged = Judged::of(target, inv.gate == invocation::GateArgs::default(), &|| {
        shell_kind(inv, &settings)
    });
    if settings.audit_log != AuditLog::Off || settings.audit_journal != AuditJournal::Off {
        judged.hash_script(target);
    }
    // No remembered approvals here: gate keeps none that a command could write. The
    // broker answers from its memory when it is asked (see docs/security.md).
    let policy = &settings.policy;
    let files = judged.files(&settings, policy.readonly || policy.readonly_rules, false);
    let decision = decide(policy, &Remembered::new(), judged.request(), &files);
    if let Decision::Deny(crate::policy::Denied::Rule(_))
    | Decision::Ask(crate::policy::Asked::Rule(_)) = &decision
    {
        if let Some(code) = startup_checked_at_exec(inv, target, &settings, &mut system_log) {
            return code;
        }
    }
    let mut explanation = explain::explain(&decision, policy);
    judged.annotate(&mut explanation);
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
/// Codex's snapshot capture and check; see [`crate::policy::wrapper::startup`] and
/// [`answers_startup`]): at `ask` and `safe`, gate answers
/// it itself with an empty snapshot and runs nothing, so the agent starts at once without
/// a prompt and later wrappers source a file gate knows. (The scripts source the user's
/// start-up files and hold text of the moment, so they cannot be checked; a forged one
/// gets an empty snapshot, nothing more.)
fn agent_startup(
    target: &Target,
    settings: &Settings,
    system_log: &mut Option<audit::journal::SystemLog>,
) -> Option<i32> {
    let (call, judged, e) = recognise_startup(target, settings)?;
    let trail = Trail::new(settings, &judged, system_log.take());
    Some(match crate::agents::answer_startup(&call) {
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
    })
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

/// Whether gate answers `call` itself under `policy`: at `ask` and `safe` always. At
/// `full` Claude Code's calls run, unless a deny or ask rule is set: its snapshot script
/// cannot be checked against those rules (it holds the user's rc file and computed programs,
/// which every rule matches), and running it would leave a snapshot gate does not know,
/// so that every later wrapper would be judged whole. Answered, the snapshot is gate's
/// own, and the deny rules see each of the model's commands alone. At `deny` nothing is
/// answered: the call is refused like any command.
fn answers_startup(
    policy: &crate::policy::Policy,
    call: &crate::policy::wrapper::StartupCall<'_>,
) -> bool {
    // The environment probe is answered only where running it would wait for a person:
    // at `safe` and `full` `env` runs anyway (and so would `printenv`), so an empty answer
    // there would only lie to a program that asks honestly.
    if call.kind == "claude-code/env-probe" {
        return policy.level == crate::policy::Level::Ask;
    }
    match policy.level {
        crate::policy::Level::Ask | crate::policy::Level::Safe => true,
        crate::policy::Level::Full => {
            call.agent == "claude-code" && !(policy.deny.is_empty() && policy.ask.is_empty())
        }
        crate::policy::Level::Deny => false,
    }
}

/// The start-up call `target` is, at a level where gate answers it: the call, what is
/// recorded for it, and why.
fn recognise_startup<'t>(
    target: &'t Target,
    settings: &Settings,
) -> Option<(crate::policy::wrapper::StartupCall<'t>, Judged, Explanation)> {
    use crate::policy::wrapper::StartupAnswer;
    let Target::Shell { args, .. } = target else {
        return None;
    };
    let call = crate::agents::startup(args, &var)?;
    if !answers_startup(&settings.policy, &call) {
        return None;
    }
    let (text, reason) = match call.answer {
        StartupAnswer::WriteStub(path) => (
            format!("({}: {path})", call.kind),
            format!(
                "{}: gate writes an empty snapshot to {path} and runs nothing",
                call.kind
            ),
        ),
        StartupAnswer::PrintStub => (
            format!("({})", call.kind),
            format!(
                "{}: gate prints an empty snapshot and runs nothing",
                call.kind
            ),
        ),
        StartupAnswer::CheckStub(path) => (
            format!("({}: {path})", call.kind),
            format!(
                "{}: {path} is gate's empty snapshot; nothing is run",
                call.kind
            ),
        ),
        StartupAnswer::Nothing => (
            format!("({})", call.kind),
            format!(
                "{}: gate answers it with no output (the environment holds secrets) and runs nothing",
                call.kind
            ),
        ),
    };
    let judged = Judged {
        kind: "agent-startup",
        text: Some(CommandText::new(text)),
        wrapper: None,
        execs_gate: false,
        looks_like: None,
        script_sha256: None,
    };
    let e = Explanation {
        decided_by: "agent-startup",
        rule: None,
        rule_origin: None,
        matched: None,
        reason,
    };
    Some((call, judged, e))
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

/// What `gate check` says of a command it would run in the sandbox, with the network by
/// domain when a domain list is set.
fn sandboxed_run(settings: &Settings) -> String {
    let sandbox = sandbox_settings(settings);
    if sandbox.allow_domains.is_empty() || sandbox.network {
        return "gate would run it inside the sandbox".to_owned();
    }
    format!(
        "gate would run it inside the sandbox, with the network by domain through gate's \
         proxy ({} allowed, {} denied)",
        sandbox.allow_domains.len(),
        sandbox.deny_domains.len()
    )
}

/// For `gate check` (which never enforces the sandbox): why the sandbox could not be
/// set up here, or else what this kernel lacks and gate does instead (empty when it
/// lacks nothing), to follow [`sandboxed_run`]'s sentence.
fn sandbox_problem(settings: &Settings) -> Result<String, String> {
    let Ok(cwd) = std::env::current_dir() else {
        return Ok(String::new());
    };
    if let Err(why) = crate::agents::agent_workspace(&cwd, &var) {
        return Err(format!("gate would not run it (exit 125): {why}"));
    }
    let root = nix::unistd::geteuid().is_root();
    let spec = match sandbox::spec::build(
        &sandbox_settings(settings),
        &cwd,
        &var,
        root,
        &protected_files(settings),
    ) {
        Ok(spec) => spec,
        Err(e) => return Err(format!("gate would not run it (exit 125): {e}")),
    };
    let grade = match sandbox::grade(&spec, &sandbox::probe()) {
        Ok(grade) => grade,
        Err(e) => return Err(format!("gate would not run it (exit 125): {e}")),
    };
    // What this kernel lacks and gate makes up for, in the same sentences as `gate
    // doctor` (a run itself prints none of it: see docs/sandbox.md).
    Ok(grade
        .residual_lines(spec.unix_sockets)
        .iter()
        .map(|line| format!("; {line}"))
        .collect())
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

// ---------------------------------------------------------------------------------------
// gate check

/// What `gate check` found, beyond the decision and its explanation.
struct Verdict<'a> {
    /// allow / ask / deny
    decision: &'a str,
    /// run / ask / refuse / error
    outcome: &'a str,
    outcome_text: String,
    /// Who would be asked now, for a command that needs an approver.
    reach: Option<crate::approval::reach::Reach>,
    /// Settings that are off and would have allowed it.
    alternatives: Vec<explain::Alternative>,
    status: i32,
}

fn check(inv: &Invocation, target: &Target, json: bool) -> i32 {
    let settings = match load_settings(inv) {
        Ok(s) => s,
        Err(code) => return code,
    };
    if let Some((_, judged, e)) = recognise_startup(target, &settings) {
        let verdict = Verdict {
            decision: "allow",
            outcome: "run",
            outcome_text: "gate would answer it itself and run nothing".to_owned(),
            reach: None,
            alternatives: Vec::new(),
            status: 0,
        };
        return check_report(&settings, &judged, &e, &verdict, json);
    }
    let judged = Judged::of(target, inv.gate == invocation::GateArgs::default(), &|| {
        shell_kind(inv, &settings)
    });
    // gate keeps no remembered approvals: what the broker remembers it answers itself
    // when asked, so here such a command is one that would ask.
    let remembered = Remembered::new();
    // Looked at whether or not the preset is on: `gate check` says when it would allow
    // a command that waits for an approver.
    let files = judged.files(&settings, true, true);
    let decision = decide(&settings.policy, &remembered, judged.request(), &files);
    let mut e = explain::explain(&decision, &settings.policy);
    judged.annotate(&mut e);
    // Who would be asked now, looked at the way a run looks (and only when it would).
    let reach = match &decision {
        Decision::Ask(_) => Some(crate::approval::reach::look(
            &crate::approval::Channels::of(&settings, &var),
        )),
        _ => None,
    };
    let (outcome, outcome_text) = match &decision {
        Decision::Allow(crate::policy::Allowed::Sandboxed) => match sandbox_problem(&settings) {
            Err(problem) => ("error", problem),
            Ok(residual) => ("run", sandboxed_run(&settings) + &residual),
        },
        Decision::Allow(_) => ("run", "gate would run it".to_owned()),
        Decision::Ask(_) => {
            let (outcome, text) = ask_outcome(reach.as_ref().expect("looked at for an ask"));
            match settings.policy.level {
                // An unsandboxed rule's question: a yes runs it outside.
                crate::policy::Level::Safe
                    if outcome == "ask"
                        && matches!(
                            decision,
                            Decision::Ask(crate::policy::Asked::Unsandboxed { .. })
                        ) =>
                {
                    (outcome, format!("{text}, outside the sandbox if approved"))
                }
                // What is approved at `safe` runs inside the sandbox.
                crate::policy::Level::Safe if outcome == "ask" => {
                    match sandbox_problem(&settings) {
                        Err(problem) => ("error", problem),
                        Ok(residual) => (outcome, format!("{text}, inside the sandbox{residual}")),
                    }
                }
                _ => (outcome, text),
            }
        }
        Decision::Deny(_) => ("refuse", "gate would refuse it (exit 126)".to_owned()),
    };
    // The status says what would happen now: 0 it runs, 1 it waits for an approver, 2
    // it does not run (refused by policy, nobody to ask, or the sandbox cannot be set up).
    let status = match outcome {
        "run" => 0,
        "ask" => 1,
        _ => 2,
    };
    let verdict = Verdict {
        decision: decision.kind(),
        outcome,
        outcome_text,
        reach,
        alternatives: explain::alternatives(
            &decision,
            &settings.policy,
            &remembered,
            judged.request(),
            &files,
        ),
        status,
    };
    check_report(&settings, &judged, &e, &verdict, json)
}

/// What a run would do with a command that needs an approver, given who can be asked
/// now: the outcome word and its sentence.
fn ask_outcome(reach: &crate::approval::reach::Reach) -> (&'static str, String) {
    use crate::approval::reach::{SocketState, TTY_OFF, TtyState};
    let if_approved = "and run it only if approved (denied or unanswered: exit 126)";
    match (&reach.socket_state, &reach.tty) {
        (SocketState::Listening, _) => (
            "ask",
            format!(
                "gate would ask the approver on {} {if_approved}",
                reach.socket.display()
            ),
        ),
        (SocketState::Busy, _) => (
            "ask",
            format!(
                "gate would ask the approver on {}, which is slow to take connections, \
                 {if_approved}",
                reach.socket.display()
            ),
        ),
        (SocketState::Untrusted(why), _) => (
            "refuse",
            format!(
                "gate would refuse it now (exit 126): {}",
                crate::approval::reach::untrusted(why)
            ),
        ),
        (SocketState::Absent(_), TtyState::Available) => (
            "ask",
            format!("gate would ask on the terminal {if_approved}"),
        ),
        (SocketState::Absent(why), tty) => {
            // A configured socket is named, as a run names it. The default socket's path
            // differs from machine to machine; the JSON and `gate doctor` show it.
            let socket = if reach.socket_configured {
                why.clone()
            } else {
                "no broker is listening on the default socket".to_owned()
            };
            let terminal = match tty {
                TtyState::Off => TTY_OFF.to_owned(),
                TtyState::Unavailable(why) => format!("the terminal cannot be asked: {why}"),
                TtyState::Available => unreachable!("matched above"),
            };
            (
                "refuse",
                format!(
                    "gate would refuse it now (exit 126): nobody can be asked: {socket}, and \
                     {terminal}"
                ),
            )
        }
    }
}

/// A setting turned on, as its option and its configuration key.
fn setting_names(settings: &[&str]) -> (String, String) {
    let flags: Vec<String> = settings
        .iter()
        .map(|s| format!("--{}", s.replace('_', "-")))
        .collect();
    let keys: Vec<String> = settings.iter().map(|s| format!("{s} = true")).collect();
    (flags.join(" and "), keys.join(", "))
}

/// Print `gate check`'s report; the exit status is the verdict's unless stdout fails.
fn check_report(
    settings: &Settings,
    judged: &Judged,
    e: &Explanation,
    verdict: &Verdict<'_>,
    json: bool,
) -> i32 {
    use crate::approval::reach::SocketState;
    let command = judged.text.as_ref().map(CommandText::as_str).unwrap_or("");
    let locked = settings.locked_by.as_ref().map(|p| p.display().to_string());
    let text = if json {
        let approval = verdict.reach.as_ref().map(|r| {
            let mut facts = r.to_json();
            facts.insert("refusal".into(), serde_json::json!(r.refusal()));
            facts
        });
        let alternatives: Vec<serde_json::Value> = verdict
            .alternatives
            .iter()
            .map(|a| serde_json::json!({"settings": a.settings, "reason": a.reason}))
            .collect();
        let value = serde_json::json!({
            "command": command,
            "kind": judged.kind,
            "exact": judged.text.as_ref().is_none_or(CommandText::is_exact),
            "level": settings.policy.level.as_str(),
            "level_origin": settings.policy.level_origin.to_string(),
            "decision": verdict.decision,
            "decided_by": e.decided_by,
            "rule": e.rule,
            "rule_origin": e.rule_origin,
            "matched": e.matched,
            "reason": e.reason,
            "wrapper": judged.wrapper.as_ref().map(|(_, t)| *t),
            "looks_like_wrapper": judged.looks_like.as_ref().map(|(agent, _)| *agent),
            "outcome": verdict.outcome,
            "approval": approval,
            "would_allow_with": alternatives,
            "config_files": settings.files.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
            "locked_by": locked,
            "project": settings.project.as_ref().map(|p| serde_json::json!({
                "file": p.path.display().to_string(),
                "trust": p.trust.key(),
            })),
        });
        format!("{value}\n")
    } else {
        let mut t = String::new();
        t.push_str(&format!("command:  {}\n", explain::display(command)));
        t.push_str(&format!(
            "level:    {} (from {})\n",
            settings.policy.level, settings.policy.level_origin
        ));
        t.push_str(&format!("decision: {}\n", verdict.decision));
        t.push_str(&format!("reason:   {}\n", e.reason));
        t.push_str(&format!("outcome:  {}\n", verdict.outcome_text));
        if let Some(r) = &verdict.reach {
            if r.asks().is_none() && matches!(r.socket_state, SocketState::Absent(_)) {
                t.push_str(&format!(
                    "advice:   {}\n",
                    crate::approval::NO_APPROVER_ADVICE
                ));
            }
        }
        for a in &verdict.alternatives {
            let (flags, keys) = setting_names(&a.settings);
            let lock = match &locked {
                Some(file) => {
                    format!(" ({file} locks the configuration: only it can turn that on)")
                }
                None => String::new(),
            };
            t.push_str(&format!(
                "hint:     with {flags} ({keys}) it would be allowed{lock}: {}\n",
                a.reason
            ));
        }
        if let Some(lock) = &locked {
            t.push_str(&format!("locked:   by {lock}\n"));
        }
        if let Some(p) = &settings.project {
            t.push_str(&format!(
                "project:  {}, {}\n",
                p.path.display(),
                p.trust.describe()
            ));
        }
        t
    };
    match print(&text) {
        0 => verdict.status,
        code => code,
    }
}
