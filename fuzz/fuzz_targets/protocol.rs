//! cargo-fuzz target `protocol`: the properties are in `fuzz/checks/protocol.rs`, which
//! `tests/fuzz_regressions.rs` also runs on every saved input.

#![no_main]

#[path = "../checks/protocol.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check(data));
