//! `gate ask`: the agent asks the person a question, through the same channels as
//! approvals (the socket, then the terminal). The answer goes to stdout for the model;
//! a declined or unanswered question is exit status 1 with the reason on stderr.

use std::time::{Duration, Instant};

use super::protocol::{Answer, Ask, QuestionRequest};
use super::{Channels, Outcome, seek};
use crate::invocation::Invocation;
use crate::output::{GATE_ERROR, print_out, say};
use crate::policy::Level;
use crate::session;
use crate::settings::load_settings;

/// Exit status when the question was declined or not answered.
pub const NOT_ANSWERED: i32 = 1;

pub fn run(inv: &Invocation, question: &str, options: &[String], multiple: bool) -> i32 {
    let settings = match load_settings(inv) {
        Ok(s) => s,
        Err(code) => return code,
    };
    if settings.policy.level == Level::Deny {
        say(&format!(
            "gate: the question was not asked: level \"deny\" (from {}) asks nothing; \
             go on without an answer",
            settings.policy.level_origin
        ));
        return NOT_ANSWERED;
    }
    if options.iter().any(|o| o.trim().is_empty()) {
        say("gate: ask: an --option is blank; nothing was asked");
        return GATE_ERROR;
    }
    let call_id = match session::call_id() {
        Ok(id) => id,
        Err(why) => {
            say(&format!("gate: ask: {why}; nothing was asked"));
            return GATE_ERROR;
        }
    };
    let request = QuestionRequest {
        call_id,
        session_id: session::session_id(settings.session.as_deref()),
        question: question.to_owned(),
        options: options.to_vec(),
        allow_multiple: multiple,
        timeout_seconds: u64::from(settings.timeout),
        pid: u64::from(std::process::id()),
    };
    let deadline = Instant::now() + Duration::from_secs(u64::from(settings.timeout));
    let channels = Channels::of(&settings, &|name| std::env::var_os(name));
    match seek(&Ask::Question(request), &channels, deadline) {
        Outcome::Answered {
            answer: Answer::Text(text),
            ..
        } if !text.trim().is_empty() => {
            let mut out = text;
            if !out.ends_with('\n') {
                out.push('\n');
            }
            print_out(&out)
        }
        Outcome::Answered {
            answer: Answer::Text(_),
            ..
        } => {
            say("gate: the question was declined: the answer was blank");
            NOT_ANSWERED
        }
        Outcome::Answered {
            answer: Answer::Declined { message },
            ..
        } => {
            match message.as_deref().map(str::trim).filter(|m| !m.is_empty()) {
                Some(m) => say(&format!(
                    "gate: the question was declined: \"{}\"",
                    crate::explain::display(m)
                )),
                None => say(
                    "gate: the question was declined; go on without an answer or ask differently",
                ),
            }
            NOT_ANSWERED
        }
        Outcome::Unanswered { cause, by } => {
            let advice = match by {
                super::By::NoApprover => format!(" {}", super::NO_APPROVER_ADVICE),
                _ => String::new(),
            };
            say(&format!(
                "gate: the question was not answered: {cause}; unanswered means declined.{advice}"
            ));
            NOT_ANSWERED
        }
        Outcome::Decided { .. } => {
            say("gate: the approver sent a decision for a question; unanswered means declined");
            NOT_ANSWERED
        }
    }
}
