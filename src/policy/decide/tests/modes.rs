//! The decision with the read-only preset, compound mode and `readonly` allow rules on.

use super::*;

#[test]
fn the_read_only_preset_is_off_by_default_and_allows_only_reads_when_on() {
    let p = policy(Level::Ask, &[], &[]);
    assert!(is_unallowed(&decide_text(&p, "ls -la")));
    let p = with(p, false, true);
    assert_eq!(
        decide_text(&p, "ls -la"),
        Decision::Allow(Allowed::ReadOnly { entry: "ls" })
    );
    assert!(is_unallowed(&decide_text(&p, "sed -i s/a/b/ f")));
    assert!(is_unallowed(&decide_text(&p, "./ls")));
    assert!(is_unallowed(&decide_text(&p, "ls; rm -rf x")));
    // A deny rule still wins.
    let p = with(policy(Level::Ask, &[], &["cat"]), false, true);
    assert!(matches!(decide_text(&p, "cat f"), Decision::Deny(_)));
}

#[test]
fn compound_mode_allows_only_when_every_part_is_allowed() {
    let p = policy(Level::Ask, &["git status", "cargo test"], &[]);
    let cmd = "git status && cargo test --quiet";
    assert!(is_unallowed(&decide_text(&p, cmd)), "off by default");
    let p = with(p, true, false);
    match decide_text(&p, cmd) {
        Decision::Allow(Allowed::Compound { parts }) => {
            let texts: Vec<&str> = parts.iter().map(|(t, _)| &**t).collect();
            assert_eq!(texts, ["git status", "cargo test --quiet"]);
        }
        other => panic!("{other:?}"),
    }
    for cmd in [
        "git status && rm -rf x",
        "git status; cargo test > out",
        "git status && $(cargo test)",
        "git status & cargo test",
        "(git status) && cargo test",
        "X=1 git status && cargo test",
        "git status &&",
    ] {
        assert!(is_unallowed(&decide_text(&p, cmd)), "{cmd}");
    }
}

#[test]
fn compound_parts_may_be_allowed_by_the_preset_or_a_remembered_approval() {
    let p = with(policy(Level::Ask, &["git status"], &[]), true, true);
    assert!(matches!(
        decide_text(&p, "git status | head -5"),
        Decision::Allow(Allowed::Compound { .. })
    ));
    let p = with(policy(Level::Ask, &["git status"], &[]), true, false);
    let mut r = Remembered::new();
    r.remember_command("make test");
    let c = CommandText::new("git status && make test");
    assert!(matches!(
        decide(&p, &r, Request::Command(&c), &Files::nothing_there()),
        Decision::Allow(Allowed::Compound { .. })
    ));
    // A deny rule in any part refuses the whole.
    let p = with(policy(Level::Ask, &["git status"], &["rm"]), true, true);
    assert!(matches!(
        decide_text(&p, "git status && rm x"),
        Decision::Deny(_)
    ));
}

#[test]
fn readonly_rules_keep_a_read_only_rule_to_read_only_commands() {
    let allow = [
        "git diff",
        "find",
        "sed -n",
        "rg",
        "cargo test",
        "git commit",
    ];
    let p = narrowed(&allow);
    let plain = policy(Level::Ask, &allow, &[]);
    for allowed in [
        "git diff",
        "git diff --stat HEAD~1",
        "find . -name '*.rs'",
        "sed -n 1,5p README.md",
        "rg -n parser src",
        // Rules that are not read-only commands are untouched.
        "cargo test --release",
        "git commit -m wip",
    ] {
        assert!(
            matches!(
                decide_text(&p, allowed),
                Decision::Allow(Allowed::Rule { .. })
            ),
            "{allowed}"
        );
    }
    for asked in [
        "git diff --output=PWNED",
        "git diff --ext-diff",
        "find . -delete",
        "find . -fprint out",
        "sed -n '1e touch PWNED' f",
        "sed -n 'w out' f",
        "rg --pre sh x",
    ] {
        assert!(is_unallowed(&decide_text(&p, asked)), "{asked}");
        // Without the setting the seeds' prefix rule allows each of them.
        assert!(
            matches!(decide_text(&plain, asked), Decision::Allow(_)),
            "{asked}"
        );
    }
    for rule in [
        "git diff",
        "git log -p",
        "find",
        "sed -n",
        "grep -r",
        "rg",
        "cat",
    ] {
        assert!(is_read_only_rule(rule), "{rule}");
    }
    for rule in [
        "git",
        "sed -i",
        "sed",
        "find -delete",
        "cargo test",
        "rm",
        "./sed -n",
    ] {
        assert!(!is_read_only_rule(rule), "{rule}");
    }
    // A broader rule that is not read-only still allows what it covers.
    let p = narrowed(&["git diff", "git"]);
    assert!(matches!(
        decide_text(&p, "git diff --output=x"),
        Decision::Allow(Allowed::Rule { rule, .. }) if &*rule == "git"
    ));
    // In compound mode every part is held to the same.
    let p = with(narrowed(&["git diff", "ls"]), true, false);
    assert!(is_unallowed(&decide_text(&p, "ls && git diff --output=x")));
    assert!(matches!(
        decide_text(&p, "ls && git diff --stat"),
        Decision::Allow(Allowed::Compound { .. })
    ));
}

proptest::proptest! {
    /// With readonly_rules, a read-only rule allows only read-only commands.
    #[test]
    fn a_read_only_rule_allows_only_read_only_commands(
        program in proptest::sample::select(vec![
            "git diff", "git log", "git grep", "find", "sed -n", "rg", "grep", "sort",
        ]),
        args in proptest::collection::vec(
            proptest::sample::select(vec![
                "-n", "--output=x", "-O", "less", "-exec", "rm", "{}", "+", "-delete",
                "--pre", "sh", "1e", "'1e touch x'", "w", "-o", "out", "--ext-diff",
                "-c", "core.pager=sh", "--textconv", "src", "*.rs", "-fprint", "-i",
            ]),
            0..5,
        ),
    ) {
        let text = std::iter::once(program).chain(args).collect::<Vec<_>>().join(" ");
        let p = narrowed(&[program]);
        if let Decision::Allow(Allowed::Rule { rule, .. }) = decide_text(&p, &text) {
            proptest::prop_assert!(
                !is_read_only_rule(&rule)
                    || crate::policy::readonly::read_only(&text, &Files::nothing_there())
                        .is_some(),
                "{text} allowed by the read-only rule {rule}"
            );
        }
    }
}

proptest::proptest! {
    /// Compound allow implies every part is allowed on its own.
    #[test]
    fn a_compound_allow_means_each_part_alone_is_allowed(
        parts in proptest::collection::vec(
            proptest::sample::select(vec![
                "git status", "ls -l", "cargo test", "rm -rf x", "echo hi", "make",
                "cat f", "sed -n 1p f", "curl x",
            ]),
            1..5,
        ),
        ops in proptest::collection::vec(
            proptest::sample::select(vec![" && ", " || ", "; ", " | "]),
            4,
        ),
    ) {
        let mut text = String::from(parts[0]);
        for (i, part) in parts.iter().enumerate().skip(1) {
            text.push_str(ops[i - 1]);
            text.push_str(part);
        }
        let p = with(policy(Level::Ask, &["git status", "cargo test", "echo"], &[]), true, true);
        if let Decision::Allow(Allowed::Compound { parts: allowed }) = decide_text(&p, &text) {
            for (part, _) in &allowed {
                let alone = decide_text(&with(p.clone(), false, true), part);
                proptest::prop_assert!(matches!(alone, Decision::Allow(_)), "{part} in {text}");
            }
        }
    }
}
