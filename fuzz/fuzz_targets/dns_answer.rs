//! cargo-fuzz target `dns_answer`: the properties are in `fuzz/checks/dns_answer.rs`, which
//! `tests/fuzz_regressions.rs` also runs on every saved input.

#![no_main]

#[path = "../checks/dns_answer.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check(data));
