//! The requester's face of the terminal prompt: [`Tty::approve`] and [`Tty::question`],
//! which a gate at `ask` (and `gate ask`) calls when no broker answers, and how each
//! ends. It shows the request and drives a prompt through the [`Tty`]; it must not
//! change the terminal's settings other than through [`Tty`]'s own steps, and it never
//! offers to remember an approval (only the broker remembers).

use std::os::fd::BorrowedFd;
use std::time::Instant;

use super::prompts::{ApprovalPrompt, Choice, QuestionPrompt, Reply};
use super::{Step, Tty};
use crate::approval::protocol::{ApprovalRequest, QuestionRequest};

/// What the person decided about a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TtyVerdict {
    /// `y`: run it this once. (Nothing more: gate keeps no remembered approvals, so the
    /// terminal prompt never offers `a`.)
    Once,
    /// `n` (with the reason typed after it, if any), or Enter alone.
    Deny { reason: Option<String> },
    /// The deadline passed before a key was pressed.
    Timeout,
    /// The interrupt descriptor became readable, or the person pressed Ctrl-C.
    Interrupted,
    /// The terminal failed (closed, hung up, no longer ours); the cause.
    Failed(String),
}

/// What the person answered to a question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TtyAnswer {
    /// The chosen option(s), joined with ", ", or the text typed. Never blank.
    Text(String),
    /// Enter on an empty line.
    Declined,
    Timeout,
    /// The interrupt descriptor became readable, or the person pressed Ctrl-C.
    Interrupted,
    Failed(String),
}

impl Tty {
    /// Ask whether `request` may run: one key, `y` / `n` (then an optional reason) /
    /// Enter, until `deadline`, or until `interrupt` becomes readable. Remembering is
    /// never offered here, whatever the request says: only the broker remembers, and
    /// an answer on the terminal does not reach it.
    pub fn approve(
        &mut self,
        request: &ApprovalRequest,
        deadline: Instant,
        interrupt: Option<BorrowedFd<'_>>,
    ) -> TtyVerdict {
        self.in_raw(TtyVerdict::Failed, |tty| {
            tty.approve_in_raw(request, deadline, interrupt)
        })
    }

    fn approve_in_raw(
        &mut self,
        request: &ApprovalRequest,
        deadline: Instant,
        interrupt: Option<BorrowedFd<'_>>,
    ) -> TtyVerdict {
        let title = "gate: may this command run?";
        let request = &ApprovalRequest {
            remember_supported: false,
            ..request.clone()
        };
        if let Err(e) = self.show_approval(title, request, "interrupt (deny)") {
            return TtyVerdict::Failed(e);
        }
        if let Err(e) = self.flush_input() {
            return TtyVerdict::Failed(e);
        }
        let mut prompt = ApprovalPrompt::new(false);
        let wake: Vec<BorrowedFd<'_>> = interrupt.into_iter().collect();
        let verdict = match self.drive(&mut prompt, Some(deadline), &wake) {
            Step::Done(Choice::Once) => TtyVerdict::Once,
            // Not offered, so never chosen; should it happen, nothing runs.
            Step::Done(Choice::Session | Choice::Always) => {
                TtyVerdict::Failed("the prompt took an answer it did not offer".into())
            }
            Step::Done(Choice::Deny(reason)) => TtyVerdict::Deny { reason },
            Step::Done(Choice::Cancelled) | Step::Woken(_) => TtyVerdict::Interrupted,
            // The person said no and was typing why: still no, without the reason.
            Step::Timeout if prompt.denying() => TtyVerdict::Deny { reason: None },
            Step::Timeout => TtyVerdict::Timeout,
            Step::Failed(e) => TtyVerdict::Failed(e),
        };
        let said = match &verdict {
            TtyVerdict::Once => "gate: approved once",
            TtyVerdict::Deny { reason: Some(_) } => "gate: denied, with the reason given",
            TtyVerdict::Deny { reason: None } => "gate: denied",
            TtyVerdict::Timeout => "gate: no answer in time: denied",
            TtyVerdict::Interrupted => "gate: interrupted: denied",
            TtyVerdict::Failed(_) => "gate: the terminal failed: denied",
        };
        let _ = self.say(said);
        verdict
    }

    /// Ask the agent's question: a line, which picks numbered options or is the answer
    /// itself; an empty line declines.
    pub fn question(
        &mut self,
        question: &QuestionRequest,
        deadline: Instant,
        interrupt: Option<BorrowedFd<'_>>,
    ) -> TtyAnswer {
        self.in_raw(TtyAnswer::Failed, |tty| {
            tty.question_in_raw(question, deadline, interrupt)
        })
    }

    fn question_in_raw(
        &mut self,
        question: &QuestionRequest,
        deadline: Instant,
        interrupt: Option<BorrowedFd<'_>>,
    ) -> TtyAnswer {
        let title = "gate: the agent asks";
        if let Err(e) = self.show_question(title, question, "interrupt (decline)") {
            return TtyAnswer::Failed(e);
        }
        if let Err(e) = self.flush_input() {
            return TtyAnswer::Failed(e);
        }
        let mut prompt = QuestionPrompt::new(question);
        let wake: Vec<BorrowedFd<'_>> = interrupt.into_iter().collect();
        let answer = match self.drive(&mut prompt, Some(deadline), &wake) {
            Step::Done(Reply::Text(text)) => TtyAnswer::Text(text),
            Step::Done(Reply::Declined) => TtyAnswer::Declined,
            Step::Done(Reply::Cancelled) | Step::Woken(_) => TtyAnswer::Interrupted,
            Step::Timeout => TtyAnswer::Timeout,
            Step::Failed(e) => TtyAnswer::Failed(e),
        };
        let said = match &answer {
            TtyAnswer::Text(_) => "gate: answered",
            TtyAnswer::Declined => "gate: declined",
            TtyAnswer::Timeout => "gate: no answer in time: declined",
            TtyAnswer::Interrupted => "gate: interrupted: declined",
            TtyAnswer::Failed(_) => "gate: the terminal failed: declined",
        };
        let _ = self.say(said);
        answer
    }

    /// Run `prompt` with the terminal in raw mode (entered here unless it already was),
    /// and leave raw mode again if it was entered here; `failed` wraps the reason when
    /// raw mode cannot be entered.
    fn in_raw<T>(&mut self, failed: fn(String) -> T, prompt: impl FnOnce(&mut Tty) -> T) -> T {
        let entered = match self.begin() {
            Ok(entered) => entered,
            Err(e) => return failed(e),
        };
        let out = prompt(self);
        self.end(entered);
        out
    }
}
