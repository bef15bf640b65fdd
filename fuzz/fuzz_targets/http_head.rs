//! cargo-fuzz target `http_head`: the properties are in `fuzz/checks/http_head.rs`, which
//! `tests/fuzz_regressions.rs` also runs on every saved input.

#![no_main]

#[path = "../checks/http_head.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check(data));
