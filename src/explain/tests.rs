use super::*;
use crate::policy::Origin;

fn policy(level: Level, allow: &[&str], deny: &[&str]) -> Policy {
    let mut p = Policy::at(level, Origin::Flag("--level"));
    for r in allow {
        p.allow.add(r, Origin::Flag("--allow")).unwrap();
    }
    for r in deny {
        p.deny.add(r, Origin::Flag("--deny")).unwrap();
    }
    p
}

fn explain_text(p: &Policy, text: &str) -> Explanation {
    let c = CommandText::new(text);
    let d = decide(
        p,
        &Remembered::new(),
        Request::Command(&c),
        &Files::nothing_there(),
    );
    explain(&d, p)
}

#[test]
fn display_keeps_one_line_and_cuts_long_commands() {
    assert_eq!(display("a\nb\tc"), "a\\nb\\tc");
    let long = "x".repeat(500);
    assert_eq!(display(&long).chars().count(), SHOWN_CHARS + 1);
}

#[test]
fn an_ask_says_why_the_preset_and_a_read_only_rule_did_not_allow_it() {
    let mut p = policy(Level::Ask, &["git diff"], &[]);
    p.readonly = true;
    let e = explain_text(&p, "sort -o out f");
    assert_eq!(e.decided_by, "none");
    assert!(
        e.reason
            .contains("the read-only preset does not allow it (`sort`: the option `-o`"),
        "{}",
        e.reason
    );
    // Shell syntax is explained as such; the preset is not mentioned.
    assert!(!explain_text(&p, "ls; rm x").reason.contains("preset"));
    p.readonly = false;
    p.readonly_rules = true;
    let e = explain_text(&p, "git diff --output=x");
    assert!(
        e.reason
            .contains("the allow rule `git diff` is a read-only command")
            && e.reason.contains("--output"),
        "{}",
        e.reason
    );
}

#[test]
fn each_decision_names_what_made_it() {
    let p = policy(Level::Ask, &["git status"], &["rm -rf"]);
    let e = explain_text(&p, "git status -s");
    assert_eq!(e.decided_by, "rule");
    assert_eq!(e.rule.as_deref(), Some("git status"));
    assert_eq!(e.rule_origin.as_deref(), Some("--allow"));

    let e = explain_text(&p, "ls; rm -rf /");
    assert_eq!(e.decided_by, "deny-rule");
    assert_eq!(e.matched.as_deref(), Some("rm -rf /"));
    assert!(
        e.reason.contains("the deny rule `rm -rf` (from --deny)"),
        "{}",
        e.reason
    );

    let e = explain_text(&p, "git push");
    assert_eq!(e.decided_by, "none");
    assert!(
        e.reason.contains("no allow rule matches it"),
        "{}",
        e.reason
    );
    assert!(
        e.reason.contains("level \"ask\" (from --level)"),
        "{}",
        e.reason
    );

    let e = explain_text(&p, "git status | head");
    assert!(e.reason.contains("shell character '|'"), "{}", e.reason);

    let e = explain_text(&policy(Level::Deny, &[], &[]), "ls");
    assert_eq!(e.decided_by, "level");
    assert!(e.reason.contains("runs no commands"));
}

#[test]
fn an_ask_because_nothing_allows_it_is_worded_from_the_reason_it_carries() {
    let level = ", so level \"ask\" (from --level) needs an approver";
    let not_read_only = crate::policy::readonly::check("sort -o out f", &Files::nothing_there())
        .expect_err("sort -o writes");
    let refusal = crate::policy::runners::Refusal {
        runner: "make".into(),
        word: "SHELL=./x".into(),
        why: "sets the shell make runs".into(),
    };
    let simple = |rules| Unallowed::Simple {
        rules,
        preset: None,
    };
    for (why, said) in [
        (
            Unallowed::NoCommand,
            "a shell with no command to check cannot match an allow rule".to_owned(),
        ),
        (
            Unallowed::Inexact,
            "it is not valid UTF-8, so it cannot match an allow rule".into(),
        ),
        (
            Unallowed::Char('|'),
            "it contains the shell character '|', and a command with shell syntax never \
                 matches an allow rule"
                .into(),
        ),
        (
            Unallowed::Char('\u{7}'),
            format!(
                "it contains the {}, and such a command never matches an allow rule",
                describe_char('\u{7}')
            ),
        ),
        (
            Unallowed::NotSplit,
            "it has shell syntax that compound mode does not take apart (only simple \
                 commands joined by &&, ||, ; and | are)"
                .into(),
        ),
        (
            Unallowed::Part(Some("rm -rf x".into())),
            "compound mode: `rm -rf x` is not allowed on its own".into(),
        ),
        (
            Unallowed::Part(None),
            "compound mode: not every part is allowed on its own".into(),
        ),
        (
            simple(Unmatched::NoRules),
            "there are no allow rules".into(),
        ),
        (
            simple(Unmatched::NoMatch),
            "no allow rule matches it".into(),
        ),
        (
            simple(Unmatched::Runner {
                rule: "make".into(),
                refusal: Box::new(refusal),
            }),
            "the allow rule `make` trusts the project's own scripts and files, not an \
                 argument that loads or runs other code: `make`: `SHELL=./x` sets the shell \
                 make runs"
                .into(),
        ),
        (
            simple(Unmatched::ReadOnlyRule {
                rule: "sort".into(),
                refusal: Box::new(not_read_only.clone()),
            }),
            format!(
                "the allow rule `sort` is a read-only command, and with readonly_rules \
                     such a rule allows only commands that only read; this one does not \
                     ({not_read_only})"
            ),
        ),
        (
            Unallowed::Simple {
                rules: Unmatched::NoMatch,
                preset: Some(Box::new(not_read_only.clone())),
            },
            format!(
                "no allow rule matches it, and the read-only preset does not allow it \
                     ({not_read_only})"
            ),
        ),
    ] {
        let e = explain(
            &Decision::Ask(Asked::Unallowed(why.clone())),
            &policy(Level::Ask, &[], &[]),
        );
        assert_eq!(e.decided_by, "none", "{why:?}");
        assert_eq!((e.rule, e.rule_origin, e.matched), (None, None, None));
        assert_eq!(e.reason, format!("{said}{level}"), "{why:?}");
    }
}

#[test]
fn an_ask_rule_is_named_with_its_origin_and_what_it_caught() {
    let mut p = policy(Level::Full, &["git"], &[]);
    p.ask.add("git push", Origin::Flag("--ask")).unwrap();
    let e = explain_text(&p, "git status && git push origin");
    assert_eq!(e.decided_by, "ask-rule");
    assert_eq!(e.rule.as_deref(), Some("git push"));
    assert_eq!(e.rule_origin.as_deref(), Some("--ask"));
    assert_eq!(e.matched.as_deref(), Some("git push origin"));
    assert!(
        e.reason
            .starts_with("the ask rule `git push` (from --ask) matches `git push origin`"),
        "{}",
        e.reason
    );
    // No setting would allow it, so none is suggested.
    p.level = Level::Ask;
    assert!(alternatives_for(&p, "git push").is_empty());
}

fn alternatives_of(p: &Policy, text: &str) -> Vec<Alternative> {
    let c = CommandText::new(text);
    let request = Request::Command(&c);
    let files = Files::nothing_there();
    let decision = decide(p, &Remembered::new(), request, &files);
    alternatives(&decision, p, &Remembered::new(), request, &files)
}

fn alternatives_for(p: &Policy, text: &str) -> Vec<Vec<&'static str>> {
    alternatives_of(p, text)
        .into_iter()
        .map(|a| a.settings)
        .collect()
}

#[test]
fn alternatives_name_the_settings_that_would_allow_an_asked_command() {
    let p = policy(Level::Ask, &["git status", "ls"], &["rm"]);
    assert_eq!(alternatives_for(&p, "git status && ls"), [["compound"]]);
    assert_eq!(alternatives_for(&p, "cat f"), [["readonly"]]);
    assert_eq!(
        alternatives_for(&p, "ls && cat f"),
        [vec!["compound", "readonly"]]
    );
    // Nothing would allow these: no rule for a part, a write, a deny rule, or it is
    // allowed already.
    for text in ["git status && touch x", "touch x", "ls; rm x", "ls -l"] {
        assert!(alternatives_for(&p, text).is_empty(), "{text}");
    }
    // A setting already on is not suggested.
    let mut on = p.clone();
    on.compound = true;
    assert_eq!(alternatives_for(&on, "ls && cat f"), [["readonly"]]);
    on.readonly = true;
    assert!(alternatives_for(&on, "cat f | wc -l && touch x").is_empty());
    // The reason is the one the setting would give.
    let found = alternatives_of(&p, "cat f");
    assert_eq!(
        found[0].reason,
        "it only reads: the read-only preset allows `cat` as written"
    );
}

#[test]
fn refusals_are_one_line_starting_with_gate() {
    let line = refusal_line("`a\\nb`", "because", "Do this.");
    assert!(line.starts_with("gate: refused "));
    assert!(!line.contains('\n'));
}
