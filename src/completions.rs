//! `gate completions SHELL`. (Being written.)

pub fn run(_shell: &str) -> i32 {
    crate::run::say("gate: completions: not built yet");
    crate::run::GATE_ERROR
}
