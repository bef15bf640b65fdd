//! The approver tools: `gate pending`, `gate approve`, `gate deny`, and the client that
//! `gate watch` uses. (Being written.)

use std::path::Path;

pub fn pending(_socket: &Path, _json: bool) -> i32 {
    crate::run::say("gate: pending: not built yet");
    crate::run::GATE_ERROR
}

pub fn approve(_socket: &Path, _id: &str, _remember: bool, _rule: Option<&str>) -> i32 {
    crate::run::say("gate: approve: not built yet");
    crate::run::GATE_ERROR
}

pub fn deny(_socket: &Path, _id: &str, _message: Option<&str>) -> i32 {
    crate::run::say("gate: deny: not built yet");
    crate::run::GATE_ERROR
}
