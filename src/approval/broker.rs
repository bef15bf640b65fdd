//! The broker, `gate serve`. (Being written.)

use std::path::Path;

use crate::config::Settings;

pub fn serve(_socket: &Path, _settings: &Settings) -> i32 {
    crate::run::say("gate: serve: not built yet");
    crate::run::GATE_ERROR
}
