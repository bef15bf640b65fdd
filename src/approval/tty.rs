//! The terminal prompt. (Being written: this skeleton only fixes the API.)

use std::os::fd::BorrowedFd;
use std::time::Instant;

use super::protocol::{ApprovalRequest, QuestionRequest};

pub struct Tty {
    _private: (),
}

pub enum TtyVerdict {
    Once,
    Session,
    Deny { reason: Option<String> },
    Timeout,
    Interrupted,
    Failed(String),
}

pub enum TtyAnswer {
    Text(String),
    Declined,
    Timeout,
    Interrupted,
    Failed(String),
}

impl Tty {
    pub fn open() -> Result<Tty, String> {
        Err("the terminal prompt is not built yet".into())
    }

    pub fn approve(
        &mut self,
        _request: &ApprovalRequest,
        _deadline: Instant,
        _interrupt: Option<BorrowedFd<'_>>,
    ) -> TtyVerdict {
        TtyVerdict::Failed("not built yet".into())
    }

    pub fn question(
        &mut self,
        _question: &QuestionRequest,
        _deadline: Instant,
        _interrupt: Option<BorrowedFd<'_>>,
    ) -> TtyAnswer {
        TtyAnswer::Failed("not built yet".into())
    }
}
