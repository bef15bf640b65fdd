//! A run at `ask`: the request to an approver (the broker or a person's terminal) and
//! what its answer does: an approval goes on to [`super::run_allowed`], anything else is
//! a refusal. Whom to ask and whether an approver can be trusted is
//! [`crate::approval`]'s; this module only acts on the outcome.

use crate::explain::{self, Explanation};
use crate::invocation::{Invocation, Target};
use crate::output::{REFUSED, fail, say};
use crate::policy::Decision;
use crate::session;

use super::trail::Trail;
use super::{run_allowed, var};

/// Ask an approver, then run on an approve or refuse.
pub(super) fn ask_then_run(
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
pub(super) fn approval_message(text: &str) -> String {
    explain::one_line(text, 1000)
}
