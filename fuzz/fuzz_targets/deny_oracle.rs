//! cargo-fuzz target `deny_oracle`: the properties are in `fuzz/checks/deny_oracle.rs`,
//! which `tests/fuzz_regressions.rs` also runs on every saved input.

#![no_main]

#[path = "../checks/deny_oracle.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check(data));
