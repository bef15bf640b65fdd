//! cargo-fuzz target `domain_pattern`: the properties are in `fuzz/checks/domain_pattern.rs`, which
//! `tests/fuzz_regressions.rs` also runs on every saved input.

#![no_main]

#[path = "../checks/domain_pattern.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check(data));
