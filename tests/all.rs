//! The default tier, `cargo test`: every integration test that needs neither the
//! network nor a real agent, a Debian archive or a virtual machine, in one binary that
//! compiles `common` once. CONTRIBUTING.md's tier table says what each tier needs.
//!
//! The tests that need root are here too, marked `#[ignore = "root tier…"]` (or written
//! with `for_each_user_as_root!`): plain `cargo test` lists them as ignored and
//! `cargo test --lib --test all -- --ignored` runs them, as root. Each calls
//! `common::needs_root`, which fails the test when it runs outside that tier.
//!
//! Each file in `tests/` is a module here under its own name, so `cargo test --test all
//! sandbox::` runs what `tests/sandbox.rs` holds. `tiers::` checks that every file is in
//! exactly one tier.

#[macro_use]
mod common;

#[path = "agent_fixtures.rs"]
mod agent_fixtures;
#[path = "agents.rs"]
mod agents;
#[path = "always_allow.rs"]
mod always_allow;
#[path = "approval.rs"]
mod approval;
#[path = "approver_reach.rs"]
mod approver_reach;
#[path = "ask_rules.rs"]
mod ask_rules;
#[path = "audit.rs"]
mod audit;
#[path = "bad_input.rs"]
mod bad_input;
#[path = "broker.rs"]
mod broker;
#[path = "check.rs"]
mod check;
#[path = "ci.rs"]
mod ci;
#[path = "cli.rs"]
mod cli;
#[path = "config.rs"]
mod config;
#[path = "corpus.rs"]
mod corpus;
#[path = "deny_oracle.rs"]
mod deny_oracle;
#[path = "docs.rs"]
mod docs;
#[path = "doctor.rs"]
mod doctor;
#[path = "domain_attacks.rs"]
mod domain_attacks;
#[path = "domain_options.rs"]
mod domain_options;
#[path = "domains.rs"]
mod domains;
#[path = "exec_deny.rs"]
mod exec_deny;
#[path = "exec_fidelity.rs"]
mod exec_fidelity;
#[path = "fuzz_regressions.rs"]
mod fuzz_regressions;
#[path = "import.rs"]
mod import;
#[path = "integrations.rs"]
mod integrations;
#[path = "invocation.rs"]
mod invocation;
#[path = "journal.rs"]
mod journal;
#[path = "left_behind.rs"]
mod left_behind;
#[path = "netproxy.rs"]
mod netproxy;
#[path = "netsuper.rs"]
mod netsuper;
#[path = "policy.rs"]
mod policy;
#[path = "project_policy.rs"]
mod project_policy;
#[path = "randomness.rs"]
mod randomness;
#[path = "rc_files.rs"]
mod rc_files;
#[path = "reference_approver.rs"]
mod reference_approver;
#[path = "remote_approval.rs"]
mod remote_approval;
#[path = "rule_examples.rs"]
mod rule_examples;
#[path = "sandbox.rs"]
mod sandbox;
#[path = "sandbox_root.rs"]
mod sandbox_root;
#[path = "system_config.rs"]
mod system_config;
#[path = "terminal_trust.rs"]
mod terminal_trust;
#[path = "tiers.rs"]
mod tiers;
#[path = "tty_prompt.rs"]
mod tty_prompt;
#[path = "watch.rs"]
mod watch;
