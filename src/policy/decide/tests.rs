use super::*;
use crate::policy::AskMatch;

mod ask_rules;
mod modes;

fn policy(level: Level, allow: &[&str], deny: &[&str]) -> Policy {
    let mut p = Policy::at(level, Origin::BuiltIn);
    for r in allow {
        p.allow.add(r, Origin::Flag("--allow")).unwrap();
    }
    for r in deny {
        p.deny.add(r, Origin::Flag("--deny")).unwrap();
    }
    p
}

fn decide_text(p: &Policy, text: &str) -> Decision {
    decide_request(p, Request::Command(&CommandText::new(text)))
}

/// `text` decided with what `remembered` holds, and nothing on disk.
fn decide_remembered(p: &Policy, remembered: &Remembered, text: &str) -> Decision {
    decide(
        p,
        remembered,
        Request::Command(&CommandText::new(text)),
        &Files::nothing_there(),
    )
}

/// `request` decided with nothing remembered and nothing on disk.
fn decide_request(p: &Policy, request: Request<'_>) -> Decision {
    decide(p, &Remembered::new(), request, &Files::nothing_there())
}

fn is_unallowed(d: &Decision) -> bool {
    matches!(d, Decision::Ask(Asked::Unallowed(_)))
}

fn decide_wrapped(p: &Policy, outer: &str, inner: &str, execs_gate: bool) -> Decision {
    decide(
        p,
        &Remembered::new(),
        Request::Wrapped {
            outer: &CommandText::new(outer),
            inner: &CommandText::new(inner),
            execs_gate,
        },
        &Files::nothing_there(),
    )
}

/// The reason an ask at level `ask` carries: what was missing, as the decision
/// found it, so that nothing has to look again to say why.
fn unallowed(p: &Policy, remembered: &Remembered, request: Request<'_>) -> Unallowed {
    match decide(p, remembered, request, &Files::nothing_there()) {
        Decision::Ask(Asked::Unallowed(why)) => why,
        other => panic!("{request:?}: {other:?}"),
    }
}

fn unallowed_text(p: &Policy, text: &str) -> Unallowed {
    unallowed(
        p,
        &Remembered::new(),
        Request::Command(&CommandText::new(text)),
    )
}

fn simple(rules: Unmatched) -> Unallowed {
    Unallowed::Simple {
        rules,
        preset: None,
    }
}

fn with(p: Policy, compound: bool, readonly: bool) -> Policy {
    Policy {
        compound,
        readonly,
        ..p
    }
}

fn narrowed(allow: &[&str]) -> Policy {
    Policy {
        readonly_rules: true,
        ..policy(Level::Ask, allow, &[])
    }
}

fn asking(level: Level, allow: &[&str], deny: &[&str], ask: &[&str]) -> Policy {
    let mut p = policy(level, allow, deny);
    for r in ask {
        p.ask.add(r, Origin::Flag("--ask")).unwrap();
    }
    p
}

#[test]
fn an_ask_because_nothing_allows_it_says_what_was_missing() {
    let none = Remembered::new();
    let p = policy(Level::Ask, &[], &[]);
    assert_eq!(unallowed_text(&p, "ls"), simple(Unmatched::NoRules));
    assert_eq!(unallowed(&p, &none, Request::Session), Unallowed::NoCommand);
    let p = policy(Level::Ask, &["git status"], &[]);
    assert_eq!(unallowed_text(&p, "git push"), simple(Unmatched::NoMatch));
    assert_eq!(
        unallowed(
            &p,
            &none,
            Request::Command(&CommandText::from_bytes(b"git status \xff"))
        ),
        Unallowed::Inexact
    );
    // The first character no allow rule matches, with compound mode off.
    assert_eq!(
        unallowed_text(&p, "git status | head; ls"),
        Unallowed::Char('|')
    );
    assert_eq!(
        unallowed_text(&p, "git status\u{7}"),
        Unallowed::Char('\u{7}')
    );
    // The agent's own command inside a wrapper is what was matched.
    let outer = "source snap && eval 'git push' && pwd -P >| /tmp/claude-0000-cwd";
    assert_eq!(
        unallowed(
            &p,
            &none,
            Request::Wrapped {
                outer: &CommandText::new(outer),
                inner: &CommandText::new("git push"),
                execs_gate: false,
            }
        ),
        simple(Unmatched::NoMatch)
    );
}

#[test]
fn an_ask_in_compound_mode_names_the_part_that_is_not_allowed() {
    let p = with(policy(Level::Ask, &["git status", "ls"], &[]), true, false);
    assert_eq!(
        unallowed_text(&p, "git status && rm -rf x; ls"),
        Unallowed::Part(Some("rm -rf x".into()))
    );
    // The first such part, as the parts run.
    assert_eq!(
        unallowed_text(&p, "ls | wc -l && touch x"),
        Unallowed::Part(Some("wc -l".into()))
    );
    for text in ["git status > out", "(ls) && ls", "ls & ls"] {
        assert_eq!(unallowed_text(&p, text), Unallowed::NotSplit, "{text}");
    }
    // A simple command is a simple command in compound mode too.
    assert_eq!(unallowed_text(&p, "git push"), simple(Unmatched::NoMatch));
    // A part a remembered approval allows is not the one named.
    let mut r = Remembered::new();
    r.remember_command("make");
    assert_eq!(
        unallowed(
            &p,
            &r,
            Request::Command(&CommandText::new("make && ls && make install"))
        ),
        Unallowed::Part(Some("make install".into()))
    );
}

#[test]
fn an_ask_names_the_allow_rule_that_was_passed_over_and_why() {
    // A runner's rule, and an argument that loads other code: the longest rule that
    // matches is the one named.
    let p = policy(Level::Ask, &["make", "make test"], &[]);
    match unallowed_text(&p, "make test SHELL=./x") {
        Unallowed::Simple {
            rules: Unmatched::Runner { rule, refusal },
            preset: None,
        } => {
            assert_eq!(&*rule, "make test");
            assert_eq!(refusal.runner, "make");
            assert_eq!(refusal.word, "SHELL=./x");
        }
        other => panic!("{other:?}"),
    }
    // A read-only rule, and a command that does not only read.
    match unallowed_text(&narrowed(&["git diff"]), "git diff --output=x") {
        Unallowed::Simple {
            rules: Unmatched::ReadOnlyRule { rule, refusal },
            preset: None,
        } => {
            assert_eq!(&*rule, "git diff");
            assert_eq!(refusal.entry(), Some("git diff"));
            assert!(refusal.reason().contains("--output"), "{refusal}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_ask_with_the_preset_on_says_why_the_preset_did_not_allow_it() {
    let p = with(policy(Level::Ask, &["git status"], &[]), false, true);
    match unallowed_text(&p, "sort -o out f") {
        Unallowed::Simple {
            rules: Unmatched::NoMatch,
            preset: Some(refusal),
        } => {
            assert_eq!(refusal.entry(), Some("sort"));
            assert!(refusal.reason().contains("`-o`"), "{refusal}");
        }
        other => panic!("{other:?}"),
    }
    // Shell syntax is the reason, not the preset.
    assert_eq!(unallowed_text(&p, "ls; rm x"), Unallowed::Char(';'));
}

#[test]
fn every_other_decision_names_what_made_it() {
    let none = Remembered::new();
    let files = Files::nothing_there();
    let text = |t: &str| CommandText::new(t);
    let decided =
        |p: &Policy, r: &Remembered, t: &str| decide(p, r, Request::Command(&text(t)), &files);
    let rule = |rule: &str, origin| Allowed::Rule {
        rule: rule.into(),
        origin,
    };
    // Allowed: by the level, the sandbox, a rule and its origin, the preset's entry,
    // compound mode part by part, a remembered command or prefix, a gate run again,
    // a shell asked only for its version.
    let full = policy(Level::Full, &[], &[]);
    assert_eq!(
        decided(&full, &none, "rm x"),
        Decision::Allow(Allowed::Level)
    );
    let safe = policy(Level::Safe, &[], &[]);
    assert_eq!(
        decided(&safe, &none, "rm x"),
        Decision::Allow(Allowed::Sandboxed)
    );
    let mut p = with(policy(Level::Ask, &["git status"], &[]), true, true);
    p.allow
        .add("cargo test", Origin::Env("GATE_ALLOW"))
        .unwrap();
    assert_eq!(
        decided(&p, &none, "cargo test -q"),
        Decision::Allow(rule("cargo test", Origin::Env("GATE_ALLOW")))
    );
    assert_eq!(
        decided(&p, &none, "head -5 f"),
        Decision::Allow(Allowed::ReadOnly { entry: "head" })
    );
    assert_eq!(
        decided(&p, &none, "git status && wc -l f"),
        Decision::Allow(Allowed::Compound {
            parts: vec![
                (
                    "git status".into(),
                    rule("git status", Origin::Flag("--allow"))
                ),
                ("wc -l f".into(), Allowed::ReadOnly { entry: "wc" }),
            ]
        })
    );
    let mut r = Remembered::new();
    r.remember_command("make deploy");
    r.remember_prefix("npm run").unwrap();
    assert_eq!(
        decided(&p, &r, "make deploy"),
        Decision::Allow(Allowed::RememberedCommand)
    );
    assert_eq!(
        decided(&p, &r, "npm run build"),
        Decision::Allow(Allowed::RememberedRule {
            rule: "npm run".into()
        })
    );
    assert_eq!(
        decide(&p, &none, Request::Info, &files),
        Decision::Allow(Allowed::Info)
    );
    let outer = "exec '/usr/lib/gate/bin/bash' -c 'rm x'";
    assert_eq!(
        decide(
            &p,
            &none,
            Request::Wrapped {
                outer: &text(outer),
                inner: &text("rm x"),
                execs_gate: true
            },
            &files
        ),
        Decision::Allow(Allowed::Delegated)
    );
    // Asked: by an ask rule (what it caught), an unsandboxed rule, text too complex
    // to read, a session that cannot be read.
    let mut p = asking(Level::Safe, &[], &[], &["git push"]);
    p.unsandboxed
        .add("make deploy", Origin::Flag("--unsandboxed"))
        .unwrap();
    assert_eq!(
        decided(&p, &none, "ls && git push -f"),
        Decision::Ask(Asked::Rule(AskMatch::Rule {
            rule: "git push".into(),
            origin: Origin::Flag("--ask"),
            found: "git push -f".into(),
        }))
    );
    assert_eq!(
        decided(&p, &none, "make deploy now"),
        Decision::Ask(Asked::Unsandboxed {
            rule: "make deploy".into(),
            origin: Origin::Flag("--unsandboxed"),
        })
    );
    assert_eq!(
        decided(&p, &none, &format!("{}true", "eval ".repeat(20))),
        Decision::Ask(Asked::Rule(AskMatch::TooComplex))
    );
    assert_eq!(
        decide(&p, &none, Request::Session, &files),
        Decision::Ask(Asked::Rule(AskMatch::Unreadable))
    );
    // Denied: by the level, or by a rule (what it caught).
    let p = policy(Level::Ask, &["rm"], &["rm -rf"]);
    assert_eq!(
        decided(&p, &none, "ls; rm -rf /"),
        Decision::Deny(Denied::Rule(DenyMatch::Rule {
            rule: "rm -rf".into(),
            origin: Origin::Flag("--deny"),
            found: "rm -rf /".into(),
        }))
    );
    let p = policy(Level::Deny, &["rm"], &[]);
    assert_eq!(decided(&p, &none, "rm x"), Decision::Deny(Denied::Level));
}

#[test]
fn a_wrapper_is_judged_by_its_inner_command_and_denied_by_either() {
    let outer = "source snap && eval 'ls -l' && pwd -P >| /tmp/claude-0000-cwd";
    let p = policy(Level::Ask, &["ls"], &["pwd", "rm"]);
    // The wrapper's own `pwd` would match the deny rule `pwd`: deny rules see both.
    assert!(matches!(
        decide_wrapped(&p, outer, "ls -l", false),
        Decision::Deny(Denied::Rule(_))
    ));
    let p = policy(Level::Ask, &["ls"], &["rm"]);
    assert!(matches!(
        decide_wrapped(&p, outer, "ls -l", false),
        Decision::Allow(Allowed::Rule { .. })
    ));
    assert!(is_unallowed(&decide_wrapped(&p, outer, "cat x", false)));
    assert!(matches!(
        decide_wrapped(&p, outer, "rm x", false),
        Decision::Deny(Denied::Rule(_))
    ));
}

#[test]
fn a_wrapper_that_runs_gate_again_is_left_to_that_gate_but_never_past_a_deny() {
    let outer =
        "if . 'snap' >/dev/null 2>&1; then :; fi\n\nexec '/usr/lib/gate/bin/bash' -c 'cat x'";
    for level in [Level::Ask, Level::Safe, Level::Full] {
        let p = policy(level, &[], &["rm"]);
        assert_eq!(
            decide_wrapped(&p, outer, "cat x", true),
            Decision::Allow(Allowed::Delegated),
            "{level}"
        );
        assert!(matches!(
            decide_wrapped(&p, outer, "rm -rf x", true),
            Decision::Deny(Denied::Rule(_))
        ));
    }
    let p = policy(Level::Deny, &["cat"], &[]);
    assert_eq!(
        decide_wrapped(&p, outer, "cat x", true),
        Decision::Deny(Denied::Level)
    );
}

#[test]
fn level_deny_refuses_everything_even_allowed_commands() {
    let p = policy(Level::Deny, &["ls"], &[]);
    assert_eq!(decide_text(&p, "ls"), Decision::Deny(Denied::Level));
    assert_eq!(
        decide_request(&p, Request::Session),
        Decision::Deny(Denied::Level)
    );
}

#[test]
fn deny_rules_refuse_at_every_level() {
    for level in [Level::Ask, Level::Safe, Level::Full] {
        let p = policy(level, &["rm"], &["rm -rf"]);
        assert!(
            matches!(decide_text(&p, "rm -rf /"), Decision::Deny(Denied::Rule(_))),
            "{level}"
        );
    }
}

#[test]
fn a_deny_rule_beats_a_remembered_approval() {
    let p = policy(Level::Ask, &[], &["rm -rf"]);
    let mut r = Remembered::new();
    r.remember_command("rm -rf /");
    let d = decide(
        &p,
        &r,
        Request::Command(&CommandText::new("rm -rf /")),
        &Files::nothing_there(),
    );
    assert!(matches!(d, Decision::Deny(Denied::Rule(_))));
}

#[test]
fn full_allows_everything_not_denied_and_safe_allows_it_inside_the_sandbox() {
    for (level, text, allowed) in [
        (Level::Full, "rm -rf /; x", Allowed::Level),
        (Level::Safe, "curl x | sh", Allowed::Sandboxed),
    ] {
        let p = policy(level, &[], &[]);
        let want = Decision::Allow(allowed);
        assert_eq!(decide_text(&p, text), want, "{level}");
        assert_eq!(decide_request(&p, Request::Session), want, "{level}");
    }
}

#[test]
fn ask_allows_a_matching_rule_and_names_it() {
    let p = policy(Level::Ask, &["git status"], &[]);
    assert_eq!(
        decide_text(&p, "git status -s"),
        Decision::Allow(Allowed::Rule {
            rule: "git status".into(),
            origin: Origin::Flag("--allow")
        })
    );
}

#[test]
fn ask_asks_about_everything_else() {
    let p = policy(Level::Ask, &["git status"], &[]);
    assert!(is_unallowed(&decide_text(&p, "git push")));
    assert!(is_unallowed(&decide_text(&p, "git status; rm -rf ~")));
    assert!(is_unallowed(&decide_request(&p, Request::Session)));
}

#[test]
fn a_runners_rule_does_not_cover_an_option_that_loads_other_code() {
    let p = policy(Level::Ask, &["npm test", "make"], &[]);
    assert!(matches!(
        decide_text(&p, "npm test -- --watch"),
        Decision::Allow(Allowed::Rule { .. })
    ));
    assert!(matches!(
        decide_text(&p, "make -j4 all"),
        Decision::Allow(Allowed::Rule { .. })
    ));
    assert!(is_unallowed(&decide_text(
        &p,
        "npm test --script-shell=./pwn.sh"
    )));
    assert!(is_unallowed(&decide_text(&p, "make SHELL=./x")));
    // A remembered prefix is held to the same.
    let p = policy(Level::Ask, &[], &[]);
    let mut r = Remembered::new();
    r.remember_prefix("make").unwrap();
    let ask = |text: &str| decide_remembered(&p, &r, text);
    assert!(matches!(
        ask("make test"),
        Decision::Allow(Allowed::RememberedRule { .. })
    ));
    assert!(is_unallowed(&ask("make -f /tmp/evil.mk")));
}

#[test]
fn remembered_commands_match_exact_trimmed_text_only() {
    let p = policy(Level::Ask, &[], &[]);
    let mut r = Remembered::new();
    r.remember_command("  npm test ; echo done ");
    let ask = |text: &str| decide_remembered(&p, &r, text);
    assert_eq!(
        ask("npm test ; echo done"),
        Decision::Allow(Allowed::RememberedCommand)
    );
    assert!(is_unallowed(&ask("npm test ; echo done; rm x")));
    assert!(is_unallowed(&ask("npm test")));
}

#[test]
fn remembered_prefixes_follow_the_allow_rule_semantics() {
    let p = policy(Level::Ask, &[], &[]);
    let mut r = Remembered::new();
    r.remember_prefix("npm test").unwrap();
    assert!(r.remember_prefix("npm test; ls").is_err());
    let ask = |text: &str| decide_remembered(&p, &r, text);
    assert_eq!(
        ask("npm test -- --watch"),
        Decision::Allow(Allowed::RememberedRule {
            rule: "npm test".into()
        })
    );
    assert!(is_unallowed(&ask("npm test && rm x")));
}

#[test]
fn inexact_text_never_matches_an_allow_rule_or_a_memory() {
    let p = policy(Level::Ask, &["ls"], &[]);
    let mut r = Remembered::new();
    r.remember_command("ls \u{fffd}");
    let text = CommandText::from_bytes(b"ls \xff");
    assert!(!text.is_exact());
    assert!(is_unallowed(&decide(
        &p,
        &r,
        Request::Command(&text),
        &Files::nothing_there()
    )));
}

#[test]
fn every_level_and_request_kind_has_a_decision() {
    // Exhaustive over the small input space: level × allowed/denied/neither × kind.
    for level in Level::ALL {
        let p = policy(level, &["ok"], &["bad"]);
        for (text, expect_at_ask) in [("ok 1", "allow"), ("bad 1", "deny"), ("other", "ask")] {
            let d = decide_text(&p, text);
            let expected = match (level, text) {
                (Level::Deny, _) => "deny",
                (_, "bad 1") => "deny",
                (Level::Full | Level::Safe, _) => "allow",
                (Level::Ask, _) => expect_at_ask,
            };
            assert_eq!(d.kind(), expected, "{level} {text}");
        }
    }
}
