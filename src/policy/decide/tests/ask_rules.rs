//! Ask rules in the decision: at which levels they ask, their order against allow and deny
//! rules, and what cannot stand in for them.

use super::*;

fn ask_rule(d: &Decision) -> Option<(&str, &str)> {
    match d {
        Decision::Ask(Asked::Rule(AskMatch::Rule { rule, found, .. })) => Some((rule, found)),
        _ => None,
    }
}

#[test]
fn an_unsandboxed_rule_asks_at_safe_only_and_a_deny_rule_still_wins() {
    let mut p = policy(Level::Safe, &[], &["git push --force"]);
    p.unsandboxed
        .add("git push", Origin::Flag("--unsandboxed"))
        .unwrap();
    p.ask.add("git", Origin::Flag("--ask")).unwrap();
    let asked = |d: Decision| match d {
        Decision::Ask(Asked::Unsandboxed { rule, .. }) => Some(rule.to_string()),
        _ => None,
    };
    // Matched, it asks whether it may leave, and that question covers the ask rule.
    assert_eq!(
        asked(decide_text(&p, "git push origin main")).as_deref(),
        Some("git push")
    );
    // A deny rule wins.
    assert!(matches!(
        decide_text(&p, "git push --force origin"),
        Decision::Deny(_)
    ));
    // Matched as strictly as an allow rule: no shell syntax, only at the start.
    for text in [
        "git push; rm -rf ~",
        "true && git push",
        "git pushx",
        "sh -c 'git push'",
    ] {
        assert_eq!(asked(decide_text(&p, text)), None, "{text}");
    }
    // Not exact text (invalid UTF-8) never leaves.
    let inexact = CommandText::inexact("git push origin \u{fffd}");
    assert!(!matches!(
        decide(
            &p,
            &Remembered::new(),
            Request::Command(&inexact),
            &Files::nothing_there()
        ),
        Decision::Ask(Asked::Unsandboxed { .. })
    ));
    // At the other levels the rule changes nothing.
    for level in [Level::Full, Level::Ask] {
        p.level = level;
        assert_eq!(asked(decide_text(&p, "git push origin")), None, "{level}");
    }
    p.level = Level::Deny;
    assert!(matches!(decide_text(&p, "git push"), Decision::Deny(_)));
    // Without an ask rule, what it does not match runs inside the sandbox.
    let mut p = policy(Level::Safe, &[], &[]);
    p.unsandboxed
        .add_exact("make deploy", Origin::BuiltIn)
        .unwrap();
    assert!(asked(decide_text(&p, "make deploy")).is_some());
    assert_eq!(
        decide_text(&p, "make deploy --force"),
        Decision::Allow(Allowed::Sandboxed)
    );
}

#[test]
fn an_ask_rule_asks_at_every_level_that_runs_commands() {
    for level in [Level::Ask, Level::Safe, Level::Full] {
        let p = asking(level, &[], &[], &["git push"]);
        let d = decide_text(&p, "git push origin main");
        assert_eq!(
            ask_rule(&d),
            Some(("git push", "git push origin main")),
            "{level}: {d:?}"
        );
        // What no ask rule matches is decided as before.
        let d = decide_text(&p, "git status");
        let expected = match level {
            Level::Ask => Decision::Ask(Asked::Unallowed(Unallowed::Simple {
                rules: Unmatched::NoRules,
                preset: None,
            })),
            Level::Safe => Decision::Allow(Allowed::Sandboxed),
            _ => Decision::Allow(Allowed::Level),
        };
        assert_eq!(d, expected, "{level}");
    }
    // Level deny runs nothing and asks nothing.
    let p = asking(Level::Deny, &[], &[], &["git push"]);
    assert_eq!(decide_text(&p, "git push"), Decision::Deny(Denied::Level));
}

#[test]
fn an_ask_rule_comes_before_an_allow_rule_and_after_a_deny_rule() {
    let p = asking(Level::Ask, &["git"], &["git push --force"], &["git push"]);
    assert_eq!(
        ask_rule(&decide_text(&p, "git push")),
        Some(("git push", "git push"))
    );
    assert!(matches!(
        decide_text(&p, "git status"),
        Decision::Allow(Allowed::Rule { .. })
    ));
    for level in [Level::Ask, Level::Safe, Level::Full] {
        let p = asking(level, &["git"], &["git push --force"], &["git push"]);
        assert!(
            matches!(
                decide_text(&p, "git push --force"),
                Decision::Deny(Denied::Rule(_))
            ),
            "{level}"
        );
    }
}

#[test]
fn nothing_that_allows_unasked_stands_in_for_an_ask_rule() {
    // The read-only preset, compound mode and remembered approvals all give way.
    let mut p = asking(
        Level::Ask,
        &["git status", "cat"],
        &[],
        &["cat", "git push"],
    );
    p.readonly = true;
    p.compound = true;
    assert!(ask_rule(&decide_text(&p, "cat README")).is_some());
    assert_eq!(
        ask_rule(&decide_text(&p, "git status && git push")),
        Some(("git push", "git push"))
    );
    let mut r = Remembered::new();
    r.remember_command("git push");
    r.remember_prefix("git").unwrap();
    let d = decide(
        &p,
        &r,
        Request::Command(&CommandText::new("git push")),
        &Files::nothing_there(),
    );
    assert!(ask_rule(&d).is_some(), "{d:?}");
}

#[test]
fn an_ask_rule_looks_at_an_agents_wrapper_and_its_command_but_leaves_a_gate_it_execs_to_ask() {
    let outer = "source snap && eval 'git push' && pwd -P >| /tmp/claude-0000-cwd";
    let p = asking(Level::Full, &[], &[], &["git push"]);
    assert!(ask_rule(&decide_wrapped(&p, outer, "git push", false)).is_some());
    let p = asking(Level::Full, &[], &[], &["pwd"]);
    assert!(ask_rule(&decide_wrapped(&p, outer, "ls", false)).is_some());
    let outer =
        "if . 'snap' >/dev/null 2>&1; then :; fi\n\nexec '/usr/lib/gate/bin/bash' -c 'git push'";
    let p = asking(Level::Full, &[], &[], &["git push"]);
    assert_eq!(
        decide_wrapped(&p, outer, "git push", true),
        Decision::Allow(Allowed::Delegated)
    );
}

#[test]
fn a_shell_session_is_asked_about_at_full_and_safe_only_when_there_are_ask_rules() {
    for level in [Level::Safe, Level::Full] {
        let p = asking(level, &[], &[], &["git push"]);
        assert_eq!(
            decide_request(&p, Request::Session),
            Decision::Ask(Asked::Rule(AskMatch::Unreadable)),
            "{level}"
        );
        // `--version` runs nothing.
        assert!(matches!(
            decide_request(&p, Request::Info),
            Decision::Allow(_)
        ));
        let p = asking(level, &[], &[], &[]);
        assert!(
            matches!(decide_request(&p, Request::Session), Decision::Allow(_)),
            "{level}"
        );
    }
    let p = asking(Level::Ask, &[], &[], &["git push"]);
    assert!(is_unallowed(&decide_request(&p, Request::Session)));
}

#[test]
fn text_that_is_too_complex_to_read_is_asked_about() {
    let p = asking(Level::Full, &[], &[], &["git push"]);
    let deep = format!("{}true", "eval ".repeat(20));
    assert_eq!(
        decide_text(&p, &deep),
        Decision::Ask(Asked::Rule(AskMatch::TooComplex))
    );
}

proptest::proptest! {
    /// Deny beats ask beats everything else: the order holds for any mix of rules.
    #[test]
    fn deny_then_ask_then_the_rest(
        level in proptest::sample::select(Level::ALL.to_vec()),
        allow in proptest::collection::vec(proptest::sample::select(vec!["git", "git push", "ls", "cat"]), 0..3),
        deny in proptest::collection::vec(proptest::sample::select(vec!["git push --force", "rm", "cat -n"]), 0..2),
        ask in proptest::collection::vec(proptest::sample::select(vec!["git push", "cat", "rm -rf"]), 0..3),
        text in proptest::sample::select(vec![
            "git push", "git push --force", "git status", "ls -l", "cat -n f", "cat f",
            "rm -rf x", "rm x", "ls && git push", "sh -c 'cat f'",
        ]),
    ) {
        let p = asking(level, &allow, &deny, &ask);
        let d = decide_text(&p, text);
        let c = CommandText::new(text);
        if level == Level::Deny {
            proptest::prop_assert_eq!(d, Decision::Deny(Denied::Level));
        } else if p.deny.find(&c).is_some() {
            proptest::prop_assert!(matches!(d, Decision::Deny(Denied::Rule(_))), "{:?}", d);
        } else if p.ask.find(&c).is_some() {
            proptest::prop_assert!(matches!(d, Decision::Ask(Asked::Rule(_))), "{:?}", d);
        } else {
            let without = asking(level, &allow, &deny, &[]);
            proptest::prop_assert_eq!(d, decide_text(&without, text));
        }
    }
}
