//! cargo-fuzz target `allow_rules`: the properties are in `fuzz/checks/allow_rules.rs`, which
//! `tests/fuzz_regressions.rs` also runs on every saved input.

#![no_main]

#[path = "../checks/allow_rules.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check(data));
