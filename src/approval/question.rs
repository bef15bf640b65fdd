//! `gate ask`: a question for the person, through the same channels as approvals.
//! (Being written.)

use crate::invocation::Invocation;

pub fn run(_inv: &Invocation, _question: &str, _options: &[String], _multiple: bool) -> i32 {
    crate::run::say("gate: ask: not built yet");
    crate::run::GATE_ERROR
}
