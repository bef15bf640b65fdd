//! The deny rules against the real shells: the differential oracle of
//! `tests/oracle/mod.rs`, driven by the fuzzer's bytes.
//!
//! Input: bytes, read as the choices of the oracle's shell-text grammar (each byte picks
//! one alternative; when they run out, the first). The text runs under bash, dash and
//! zsh in the oracle's sandbox, under strace.
//!
//! 1. `DenyRules::find` never panics (libFuzzer also reports a hang).
//! 2. No miss: when a shell executed a program that a deny rule matches (the rule
//!    semantics written independently in the oracle), `find` refused the text.
//!
//! Needs root (mount namespaces), strace and the three shells, as the oracle test does.
//! Slow (tens of executions a second): coverage guides the grammar's choices toward
//! scanner paths the seeded generator rarely takes.

use gate::policy::{CommandText, DenyRules, Origin};

#[path = "../../tests/oracle/mod.rs"]
mod oracle;

fn rules() -> DenyRules {
    let mut rules = DenyRules::new();
    for rule in oracle::DENY_RULES {
        rules.add(rule, Origin::Flag("--deny")).unwrap();
    }
    rules
}

pub fn check(data: &[u8]) {
    // One per input, so its mount point is removed again (a static one outlives
    // every fork-mode child).
    let sandbox = oracle::Sandbox::new();
    let text = oracle::Generator::new(&mut oracle::Bytes(data)).text();
    let refused = rules().find(&CommandText::new(text.clone())).is_some();
    let words: Vec<Vec<String>> = oracle::DENY_RULES
        .iter()
        .map(|r| oracle::rule_words(r))
        .collect();
    for (shell, run) in sandbox.run(&text, oracle::SHELLS) {
        for exec in &run.execs {
            if let Some(rule) = words.iter().find(|w| oracle::rule_matches(w, exec)) {
                assert!(
                    refused,
                    "miss: {text:?} under {shell} ran {} (deny rule `{}`), and the deny rules let it through",
                    exec.shown(),
                    rule.join(" ")
                );
            }
        }
    }
}
