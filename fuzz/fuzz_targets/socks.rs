//! cargo-fuzz target `socks`: the properties are in `fuzz/checks/socks.rs`, which
//! `tests/fuzz_regressions.rs` also runs on every saved input.

#![no_main]

#[path = "../checks/socks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check(data));
