//! `gate watch`: an interactive approver on this terminal. (Being written.)

use std::path::Path;

use crate::config::Settings;

pub fn run(_socket: &Path, _settings: &Settings) -> i32 {
    crate::run::say("gate: watch: not built yet");
    crate::run::GATE_ERROR
}
