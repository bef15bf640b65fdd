//! The audit trail of one run: the records of its decision (and of a run that did not
//! happen after all), written to the log file and the system log where each is
//! configured, and the log handed on to gate's supervisor. It decides nothing and
//! prints only the warning for a record that could not be written.

use std::path::PathBuf;
use std::time::SystemTime;

use crate::audit;
use crate::config::{AuditJournal, Settings};
use crate::explain::Explanation;
use crate::judge::Judged;
use crate::output::say;
use crate::policy::CommandText;
use crate::session;

use super::var;

/// Why a record could not be written, in words a user can act on. A read-only file
/// system is what an agent's own sandbox looks like from inside (Codex's `read-only` and
/// `workspace-write` modes mount everything else read-only).
pub(super) fn audit_error(path: &std::path::Path, err: &std::io::Error) -> String {
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
pub(super) struct Trail<'a> {
    pub(super) settings: &'a Settings,
    pub(super) judged: &'a Judged,
    /// One id for every record of this call (an allow, then an exec failure).
    pub(super) call_id: std::cell::OnceCell<String>,
    /// The log, opened by the first record and kept open: after the sandbox is in force
    /// the file can no longer be opened, but a record can still be written to it.
    pub(super) file: std::cell::RefCell<Option<(PathBuf, std::fs::File)>>,
    /// The system log (`audit.journal`), connected by the first record and kept, for the
    /// same reason.
    pub(super) system: std::cell::RefCell<Option<audit::journal::SystemLog>>,
    /// What the sandbox enforces, once it is prepared.
    pub(super) sandbox: std::cell::RefCell<Option<serde_json::Value>>,
}

impl<'a> Trail<'a> {
    /// `system`: the system log, when it was opened (and primed) already.
    pub(super) fn new(
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
pub(super) fn system_log_primed(settings: &Settings) -> Option<audit::journal::SystemLog> {
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
    pub(super) fn record(
        &self,
        decision: &str,
        e: &Explanation,
        message: Option<&str>,
    ) -> Result<(), String> {
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
    pub(super) fn supervisor_audit(&self) -> Result<Option<crate::supervisor::Audit>, String> {
        let file = self.file.borrow();
        let system = self.system.borrow();
        let Some(call_id) = self.call_id.get() else {
            return Ok(None);
        };
        if file.is_none() && system.is_none() {
            return Ok(None);
        }
        let file = match file.as_ref() {
            Some((path, file)) => Some(file.try_clone().map_err(|err| audit_error(path, &err))?),
            None => None,
        };
        let journal = match system.as_ref() {
            Some(log) => Some(log.try_clone().map_err(|err| {
                crate::audit::journal::SendError {
                    path: log.path().to_owned(),
                    error: err,
                }
                .to_string()
            })?),
            None => None,
        };
        Ok(Some(crate::supervisor::Audit {
            file,
            journal,
            call_id: call_id.clone(),
            session_id: session::session_id(self.settings.session.as_deref()),
            level: self.settings.policy.level.as_str(),
        }))
    }

    /// This call's id, made on first use.
    pub(super) fn call_id(&self) -> Result<&str, String> {
        if let Some(id) = self.call_id.get() {
            return Ok(id);
        }
        let id = session::call_id()?;
        Ok(self.call_id.get_or_init(|| id).as_str())
    }

    /// After the allow record: a second record with the same call id says that nothing
    /// ran after all, and why.
    pub(super) fn did_not_run(&self, explanation: &Explanation, message: &str) {
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
    pub(super) fn not_run_after_all(&self, explanation: &Explanation, message: &str) {
        let e = Explanation {
            decided_by: "error",
            ..explanation.clone()
        };
        let _ = self.record("error", &e, Some(message));
    }

    /// Record a refusal. The refusal stands either way; a log that cannot be written is
    /// reported.
    pub(super) fn refused(&self, e: &Explanation, message: &str) {
        if let Err(line) = self.record("deny", e, Some(message)) {
            say(&format!("gate: warning: {line}"));
        }
    }
}
