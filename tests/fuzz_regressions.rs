//! The fuzz targets' properties, run by `cargo test` on saved inputs.
//!
//! Each fuzz target in `fuzz/` (cargo-fuzz, not run in CI: too slow) checks its properties
//! in `fuzz/checks/TARGET.rs`. This file includes the same modules, so an input runs
//! through exactly the same code here. Two kinds of inputs:
//!
//! - every file in `fuzz/seeds/TARGET/` (the starting corpus, minimised after each
//!   fuzzing campaign), so the properties hold on inputs that cover the code;
//! - one test per input a fuzzer found failing, named after what it found, below
//!   `// Found by fuzzing`. See `fuzz/README.md`.

use std::fs;
use std::path::Path;

#[path = "../fuzz/checks/allow_rules.rs"]
mod allow_rules;
#[path = "../fuzz/checks/compound.rs"]
mod compound;
#[path = "../fuzz/checks/deny_oracle.rs"]
mod deny_oracle;
#[path = "../fuzz/checks/deny_rules.rs"]
mod deny_rules;
#[path = "../fuzz/checks/dns_answer.rs"]
mod dns_answer;
#[path = "../fuzz/checks/domain_pattern.rs"]
mod domain_pattern;
#[path = "../fuzz/checks/http_head.rs"]
mod http_head;
#[path = "../fuzz/checks/protocol.rs"]
mod protocol;
#[path = "../fuzz/checks/socks.rs"]
mod socks;
#[path = "../fuzz/checks/wrapper.rs"]
mod wrapper;

/// Run `check` on every saved input of `target`, naming the file of a failure.
fn every_seed(target: &str, check: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/seeds")
        .join(target);
    let mut entries: Vec<_> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    assert!(!entries.is_empty(), "{} holds no seed", dir.display());
    for path in entries {
        let data = fs::read(&path).unwrap();
        let outcome = std::panic::catch_unwind(|| check(&data));
        assert!(
            outcome.is_ok(),
            "{} fails the {target} properties (its bytes: {:?})",
            path.display(),
            String::from_utf8_lossy(&data)
        );
    }
}

#[test]
fn the_allow_rule_seeds_agree_with_the_model() {
    every_seed("allow_rules", allow_rules::check);
}

/// Runs the shells in the oracle's sandbox: needs root, as CI runs it.
#[test]
#[ignore = "root tier: cargo test --lib --test all -- --ignored, as root"]
fn the_deny_oracle_seeds_have_no_miss() {
    every_seed("deny_oracle", deny_oracle::check);
}

#[test]
fn the_deny_rule_seeds_hold() {
    every_seed("deny_rules", deny_rules::check);
}

#[test]
fn the_protocol_seeds_round_trip() {
    every_seed("protocol", protocol::check);
}

#[test]
fn the_compound_seeds_split_into_exact_parts() {
    every_seed("compound", compound::check);
}

#[test]
fn the_wrapper_seeds_unwrap_to_their_own_words() {
    every_seed("wrapper", wrapper::check);
}

// The parsers of network by domain: every byte they read, the command chose (or, for
// DNS answers, whoever can answer the proxy's questions).

#[test]
fn the_http_head_seeds_go_upstream_as_one_request() {
    every_seed("http_head", http_head::check);
}

#[test]
fn the_socks_seeds_are_read_whole_or_not_at_all() {
    every_seed("socks", socks::check);
}

#[test]
fn the_dns_answer_seeds_give_only_addresses_their_records_hold() {
    every_seed("dns_answer", dns_answer::check);
}

#[test]
fn the_domain_pattern_seeds_read_back_as_themselves() {
    every_seed("domain_pattern", domain_pattern::check);
}

// Found by fuzzing.
