use super::convert::written_text;
use super::*;
use crate::import::{Expect, GateRule};
use crate::policy::Alone;

fn file(name: &str, scope: Scope, text: &str) -> (PathBuf, Scope, String) {
    (PathBuf::from(name), scope, text.to_owned())
}

fn user(text: &str) -> Vec<Entry> {
    read(&[file(
        "/home/u/.codex/rules/default.rules",
        Scope::User,
        text,
    )])
    .unwrap()
}

fn fails(text: &str) -> ImportError {
    read(&[file(
        "/home/u/.codex/rules/default.rules",
        Scope::User,
        text,
    )])
    .unwrap_err()
}

/// Each entry as (line, said, outcome in a word, gate rule text or why).
fn summary(entries: &[Entry]) -> Vec<(u32, RuleKind, &'static str, String)> {
    entries
        .iter()
        .map(|e| {
            let (word, what) = match &e.outcome {
                Outcome::Imported(r) => ("imported", r.text.clone()),
                Outcome::Narrowed { rule, .. } => ("narrowed", rule.text.clone()),
                Outcome::Broadened { rule, .. } => ("broadened", rule.text.clone()),
                Outcome::Asked { rule, .. } => ("asked", rule.text.clone()),
                Outcome::Dropped { why } => ("dropped", why.clone()),
            };
            (e.source.line, e.said, word, what)
        })
        .collect()
}

fn rule(entry: &Entry) -> &GateRule {
    match &entry.outcome {
        Outcome::Imported(r)
        | Outcome::Narrowed { rule: r, .. }
        | Outcome::Broadened { rule: r, .. }
        | Outcome::Asked { rule: r, .. } => r,
        Outcome::Dropped { why } => panic!("dropped: {why}"),
    }
}

const DEFAULT_RULES: &str = r#"# ~/.codex/rules/default.rules, as a person keeps it.

# Appended by the TUI when "always allow" was chosen: no decision.
prefix_rule(pattern=["cargo", "test"])

prefix_rule(
    pattern = ["git", ["push", "fetch"]],
    decision = "prompt",
    justification = "talks to the remote",
    match = [["git", "push", "origin", "main"], "git fetch --all"],
    not_match = ["git status"],
)

prefix_rule(pattern = ["rm", ["-rf", "-fr"]], decision = "forbidden")
prefix_rule(pattern = ["git", "commit", "-m", "wip: save"], decision = "allow")
prefix_rule(pattern = ["echo", "$HOME"], decision = "allow")
prefix_rule(pattern = ["curl", "-H", "Authorization: $TOKEN"], decision = "forbidden")
host_executable(name = "git", paths = ["/usr/bin/git", "~/.local/bin/git"])
network_rule(host = "example.com", protocol = "https", decision = "deny")
"#;

#[test]
fn a_realistic_rules_file_is_imported_narrowed_broadened_and_dropped_as_gate_can() {
    let entries = user(DEFAULT_RULES);
    let s = summary(&entries);
    use RuleKind::*;
    assert_eq!(s[0], (4, Allow, "imported", "cargo test".into()));
    // The file ties `git` to two paths (host_executable); gate asks about git at any.
    assert_eq!(s[1], (6, Ask, "broadened", "git push".into()));
    assert_eq!(s[2], (6, Ask, "broadened", "git fetch".into()));
    match &entries[1].outcome {
        Outcome::Broadened { why, .. } => assert_eq!(
            why,
            "gate asks about `git` at any path; Codex only by its name and at the paths its \
             host_executable lists (/usr/bin/git, ~/.local/bin/git)"
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(s[3], (14, Deny, "imported", "rm -rf".into()));
    assert_eq!(s[4], (14, Deny, "imported", "rm -fr".into()));
    assert_eq!(
        s[5],
        (15, Allow, "narrowed", "git commit -m 'wip: save'".into())
    );
    assert_eq!(s[6].2, "dropped");
    assert!(
        s[6].3.contains("'$HOME'") && s[6].3.contains("'$'"),
        "{}",
        s[6].3
    );
    assert_eq!(s[7], (17, Deny, "broadened", "curl -H".into()));
    assert_eq!((s[8].0, s[8].1, s[8].2), (19, Deny, "dropped"));
    assert!(s[8].3.contains("example.com"), "{}", s[8].3);
    assert_eq!(s.len(), 9);
}

#[test]
fn a_host_executable_in_another_file_still_counts() {
    let entries = read(&[
        file(
            "/etc/codex/rules/paths.rules",
            Scope::Managed,
            "host_executable(name=\"rm\", paths=[])\n",
        ),
        file(
            "/home/u/.codex/rules/default.rules",
            Scope::User,
            "prefix_rule(pattern=[\"rm\", \"-rf\"], decision=\"forbidden\")\nprefix_rule(pattern=[\"ls\"], decision=\"forbidden\")\n",
        ),
    ])
    .unwrap();
    let s = summary(&entries);
    assert_eq!(s[0], (1, RuleKind::Deny, "broadened", "rm -rf".into()));
    assert_eq!(s[1], (2, RuleKind::Deny, "imported", "ls".into()));
    match &entries[0].outcome {
        Outcome::Broadened { why, .. } => assert!(why.ends_with("lists (none)"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_rule_without_a_decision_is_an_allow_and_the_table_says_so() {
    let entries = user("prefix_rule(pattern=[\"cargo\", \"test\"])\n");
    assert_eq!(entries[0].said, RuleKind::Allow);
    assert_eq!(
        entries[0].source.text,
        "prefix_rule(pattern=[\"cargo\", \"test\"])  # no decision: Codex's default is allow"
    );
    let written = user("prefix_rule(pattern=[\"cargo\"], decision=\"prompt\")\n");
    assert_eq!(
        written[0].source.text,
        "prefix_rule(pattern=[\"cargo\"], decision=\"prompt\")"
    );
}

#[test]
fn positional_arguments_are_pattern_then_decision() {
    let s = summary(&user("prefix_rule([\"git\", \"push\"], \"forbidden\")\n"));
    assert_eq!(s, vec![(1, RuleKind::Deny, "imported", "git push".into())]);
    let e = fails("prefix_rule([\"git\"], \"allow\", [\"git\"])\n");
    assert!(e.why.contains("positional"), "{}", e.why);
}

#[test]
fn examples_travel_with_the_rule_that_matches_them() {
    let entries = user(DEFAULT_RULES);
    assert_eq!(
        rule(&entries[1]).examples,
        vec![
            ("git push origin main".into(), Expect::Match),
            ("git status".into(), Expect::NotMatch)
        ]
    );
    assert_eq!(
        rule(&entries[2]).examples,
        vec![
            ("git fetch --all".into(), Expect::Match),
            ("git status".into(), Expect::NotMatch)
        ]
    );
    // Words with spaces are spelled as the rule spells them.
    let e = user(
        "prefix_rule(pattern=[\"git\", \"commit\", \"-m\", \"a b\"], match=['git commit -m \"a b\" -q'])\n",
    );
    assert_eq!(rule(&e[0]).text, "git commit -m 'a b'");
    assert_eq!(
        rule(&e[0]).examples,
        vec![("git commit -m 'a b' -q".into(), Expect::Match)]
    );
}

#[test]
fn a_not_match_example_gate_matches_fails_the_import_naming_it() {
    // Codex compares argv position by position, so `git -C repo push` is not `git push`
    // to it; gate's deny reads options anywhere and refuses it.
    let text = "\n\nprefix_rule(\n    pattern=[\"git\", \"push\"],\n    decision=\"forbidden\",\n    not_match=[\"git -C repo push\"],\n)\n";
    let e = fails(text);
    assert_eq!(e.line, Some(3));
    assert!(
        e.why.contains("`not_match` example `git -C repo push`") && e.why.contains("`git push`"),
        "{}",
        e.why
    );
    // An allow rule's not_match example that gate's prefix rule would allow.
    let e = fails("prefix_rule(pattern=[\"git\"], not_match=[\"git status\"])\n");
    assert!(e.why.contains("`git status`"), "{}", e.why);
}

#[test]
fn a_match_example_gate_misses_fails_the_import() {
    // Codex resolves the program's path to its name; gate's allow rule does not.
    let e = fails("prefix_rule(pattern=[\"git\", \"status\"], match=[\"/usr/bin/git status\"])\n");
    assert!(
        e.why.contains("`match` example `/usr/bin/git status`"),
        "{}",
        e.why
    );
    // The same example on a deny rule: gate's deny matches the program at any path.
    let s = summary(&user(
        "prefix_rule(pattern=[\"git\", \"push\"], decision=\"forbidden\", match=[\"/usr/bin/git push\"])\n",
    ));
    assert_eq!(s[0].2, "imported");
}

#[test]
fn unsupported_starlark_fails_the_import_with_file_and_line() {
    let e = fails(
        "prefix_rule(pattern=[\"ls\"])\n\nPUSH = [\"git\", \"push\"]\nprefix_rule(pattern=PUSH)\n",
    );
    assert_eq!(e.line, Some(3));
    assert_eq!(e.path, PathBuf::from("/home/u/.codex/rules/default.rules"));
    assert_eq!(
        e.why,
        "not understood: the assignment to `PUSH` (variables are not taken); gate reads the \
         file without running it"
    );
    assert!(
        e.to_string()
            .starts_with("/home/u/.codex/rules/default.rules:3: ")
    );
    let e = fails("load(\"//x.star\", \"rule\")\n");
    assert!(e.why.contains("`load`"), "{}", e.why);
    let e = fails("prefix_rule(pattern=[\"ls\"])\nsome_rule(pattern=[\"x\"])\n");
    assert_eq!(e.line, Some(2));
    assert!(e.why.contains("`some_rule(...)`"), "{}", e.why);
}

#[test]
fn what_codex_refuses_fails_the_import_too() {
    for (text, needle) in [
        ("prefix_rule(pattern=[])\n", "empty pattern"),
        (
            "prefix_rule(pattern=[\"x\", []])\n",
            "empty list of alternatives",
        ),
        (
            "prefix_rule(pattern=[\"x\"], decision=\"deny\")\n",
            "decision \"deny\"",
        ),
        (
            "prefix_rule(pattern=[\"x\"], decision=None)\n",
            "must be a string",
        ),
        (
            "prefix_rule(pattern=[\"x\"], justification=\" \")\n",
            "empty justification",
        ),
        (
            "prefix_rule(pattern=[\"x\"], reviewer=\"user\")\n",
            "no argument `reviewer`",
        ),
        ("prefix_rule(decision=\"allow\")\n", "without `pattern`"),
        (
            "prefix_rule(pattern=[\"x\"], match=[\"\"])\n",
            "empty example",
        ),
        (
            "prefix_rule(pattern=[\"x\"], match=[\"'x\"])\n",
            "not valid shell words",
        ),
        (
            "host_executable(name=\"bin/git\", paths=[])\n",
            "bare program name",
        ),
    ] {
        let e = fails(text);
        assert!(e.why.contains(needle), "{text}: {}", e.why);
    }
}

#[test]
fn alternatives_past_the_cap_fail_the_import() {
    let eight = "[\"a\", \"b\", \"c\", \"d\", \"e\", \"f\", \"g\", \"h\"]";
    assert_eq!(
        user(&format!("prefix_rule(pattern=[\"x\", {eight}, {eight}])\n")).len(),
        64
    );
    let e = fails(&format!(
        "prefix_rule(pattern=[\"x\", {eight}, {eight}, [\"1\", \"2\"]])\n"
    ));
    assert!(e.why.contains("more than 64"), "{}", e.why);
}

#[test]
fn any_capitalisation_narrows_an_allow_and_cannot_be_a_deny() {
    let entries = user("prefix_rule(pattern=[\"git\", \"status\"], canonical_matching=True)\n");
    match &entries[0].outcome {
        Outcome::Narrowed { rule, why } => {
            assert_eq!(rule.text, "git status");
            assert!(why.contains("capitalisation"), "{why}");
        }
        other => panic!("{other:?}"),
    }
    let e = fails(
        "prefix_rule(pattern=[\"git\", \"push\"], decision=\"prompt\", canonical_matching=True)\n",
    );
    assert!(
        e.why.contains("cannot be imported without narrowing") && e.why.contains("capitalisation"),
        "{}",
        e.why
    );
    // Codex also matches other Unicode compositions: a word beyond ASCII is cut off a
    // deny rule, which is broadened to the words before it.
    let s = summary(&user(
        "prefix_rule(pattern=[\"7\", \"caf\\u00e9\"], decision=\"forbidden\", canonical_matching=True)\n",
    ));
    assert_eq!(s, vec![(1, RuleKind::Deny, "broadened", "7".into())]);
    // No letters in a word: nothing to narrow there.
    let s = summary(&user(
        "prefix_rule(pattern=[\"7\"], canonical_matching=False)\n",
    ));
    assert_eq!(s[0].2, "imported");
}

#[test]
fn a_deny_gate_cannot_write_at_all_fails_the_import() {
    let e = fails("prefix_rule(pattern=[\"$EDITOR\", \"x\"], decision=\"forbidden\")\n");
    assert!(e.why.contains("'$'"), "{}", e.why);
}

#[test]
fn quoted_words_in_deny_rules_match_every_spelling() {
    let entries = user(
        "prefix_rule(pattern=[\"git\", \"commit\", \"-m\", \"it's done\"], decision=\"forbidden\")\n",
    );
    let r = rule(&entries[0]);
    assert_eq!(r.text, "git commit -m \"it's done\"");
    assert!(matches!(entries[0].outcome, Outcome::Imported(_)));
    let alone = Alone::new(RuleKind::Deny, &r.text).unwrap();
    assert!(alone.matches("git commit -m 'it'\\''s done'"));
    assert!(alone.matches("git commit -m it\\'s\\ done"));
}

const REQUIREMENTS: &str = r#"# /etc/codex/requirements.toml
allowed_approval_policies = ["on-request"]

[rules]
prefix_rules = [
  { pattern = [{ token = "rm" }, { any_of = ["-rf", "-fr"] }], decision = "forbidden", justification = "use trash" },
  { pattern = [{ token = "git" }, { token = "push" }], decision = "prompt-user" },
]
"#;

#[test]
fn requirements_rules_are_the_administrators_whatever_scope_is_given() {
    let entries = read(&[file(
        "/etc/codex/requirements.toml",
        Scope::User,
        REQUIREMENTS,
    )])
    .unwrap();
    let s = summary(&entries);
    assert_eq!(
        s,
        vec![
            (6, RuleKind::Deny, "imported", "rm -rf".into()),
            (6, RuleKind::Deny, "imported", "rm -fr".into()),
            (7, RuleKind::Ask, "imported", "git push".into()),
        ]
    );
    assert!(entries.iter().all(|e| e.scope == Scope::Managed));
}

#[test]
fn requirements_refuse_what_codex_refuses() {
    for (text, line, needle) in [
        (
            "[rules]\nprefix_rules = [{ pattern = [{ token = \"ls\" }], decision = \"allow\" }]\n",
            2,
            "decision \"allow\"",
        ),
        (
            "[rules]\nprefix_rules = [\n  { pattern = [{ token = \"ls\" }] },\n]\n",
            3,
            "without `decision`",
        ),
        ("[rules]\nprefix_rules = []\n", 2, "empty"),
        (
            "[rules]\nprefix_rules = [{ pattern = [{ token = \"ls\", any_of = [\"x\"] }], decision = \"prompt\" }]\n",
            2,
            "exactly one of",
        ),
        (
            "[rules]\nprefix_rules = [{ pattern = [{ token = \"ls\" }], decision = \"forbidden\", match = [\"ls\"] }]\n",
            2,
            "`match`",
        ),
        ("[rules]\nnetwork = 1\n", 2, "`rules.network`"),
        ("[rules\n", 1, "malformed TOML"),
    ] {
        let e = read(&[file("/etc/codex/requirements.toml", Scope::Managed, text)]).unwrap_err();
        assert_eq!(e.line, Some(line), "{text}: {e}");
        assert!(e.why.contains(needle), "{text}: {}", e.why);
    }
}

#[test]
fn ignore_rules_in_requirements_drops_the_persons_allow_rules_only() {
    let files = [
        file(
            "/etc/codex/requirements.toml",
            Scope::Managed,
            "ignore_rules = true\n[rules]\nprefix_rules = [{ pattern = [{ token = \"rm\" }], decision = \"forbidden\" }]\n",
        ),
        file(
            "/home/u/.codex/rules/default.rules",
            Scope::User,
            "prefix_rule(pattern=[\"ls\"])\nprefix_rule(pattern=[\"git\", \"push\"], decision=\"forbidden\")\n",
        ),
    ];
    let s = summary(&read(&files).unwrap());
    assert_eq!(s[0], (3, RuleKind::Deny, "imported", "rm".into()));
    assert_eq!((s[1].1, s[1].2), (RuleKind::Allow, "dropped"));
    assert!(s[1].3.contains("ignore_rules"), "{}", s[1].3);
    assert_eq!(s[2], (2, RuleKind::Deny, "imported", "git push".into()));
}

#[test]
fn every_imported_deny_and_ask_matches_the_commands_codex_matched() {
    let entries = user(DEFAULT_RULES);
    // Commands Codex's forbidden and prompt rules above match, more words after them.
    for (kind, command) in [
        (RuleKind::Ask, "git push origin main"),
        (RuleKind::Ask, "git fetch --all"),
        (RuleKind::Deny, "rm -rf /"),
        (RuleKind::Deny, "rm -fr ."),
        (
            RuleKind::Deny,
            "curl -H 'Authorization: $TOKEN' https://x.example",
        ),
    ] {
        let caught = entries.iter().any(|e| {
            e.said == kind
                && written_text(&e.outcome)
                    .is_some_and(|t| Alone::new(kind, t).unwrap().matches(command))
        });
        assert!(caught, "{command}");
    }
}

/// Words of the kinds Codex rules hold: plain, options, and words with spaces, quotes,
/// globs, shell characters, capitals and letters beyond ASCII.
fn any_word() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    prop_oneof![
        "[a-z]{1,5}",
        "-[a-zA-Z]{1,3}",
        "--[a-z]{2,5}(=[a-z0-9]{1,3})?",
        "[a-zA-Z0-9 '\"$*?~#=;|&!()\\[\\]{}<>`\\\\._:/éÄ\t-]{0,5}",
    ]
}

fn starlark_list(words: &[String]) -> String {
    Value::List(words.iter().map(|w| Value::Str(w.clone())).collect()).to_string()
}

proptest::proptest! {
    /// An imported allow rule matches only commands whose words start with the words
    /// Codex's rule matched: whatever the words, their quoting never lets gate allow
    /// a command Codex did not.
    #[test]
    fn an_imported_allow_rule_matches_only_what_codex_matched(
        argv in proptest::collection::vec(any_word(), 1..4),
        suffix in proptest::collection::vec(any_word(), 0..3),
        noise in "[ -~]{0,10}",
    ) {
        let text = format!("prefix_rule(pattern={})\n", starlark_list(&argv));
        let Ok(entries) = read(&[file("/r/default.rules", Scope::User, &text)]) else {
            return Ok(());
        };
        for entry in &entries {
            let Some(rule) = written_text(&entry.outcome) else { continue };
            let alone = Alone::new(RuleKind::Allow, rule).unwrap();
            let mut all = argv.clone();
            all.extend(suffix.iter().cloned());
            for command in [
                words::command(&all),
                format!("{rule} {noise}"),
                format!("{rule}{noise}"),
                format!("{} {noise}", words::command(&argv)),
            ] {
                // A text the shell cannot read (an unclosed quote) runs nothing.
                if alone.matches(&command) && let Ok(split) = shell_words::split(&command) {
                    proptest::prop_assert!(
                        split.len() >= argv.len() && split[..argv.len()] == argv[..],
                        "rule {rule:?} matches {command:?}, read as {split:?}, not starting with {argv:?}"
                    );
                }
            }
        }
    }

    /// An imported deny or ask rule matches every command Codex's rule matched (its
    /// words, then any others), or the import fails: never narrower.
    #[test]
    fn an_imported_deny_or_ask_rule_matches_all_that_codex_matched(
        argv in proptest::collection::vec(any_word(), 1..4),
        suffix in proptest::collection::vec(any_word(), 0..3),
        deny in proptest::bool::ANY,
    ) {
        let decision = if deny { "forbidden" } else { "prompt" };
        let text = format!("prefix_rule(pattern={}, decision=\"{decision}\")\n", starlark_list(&argv));
        let Ok(entries) = read(&[file("/r/default.rules", Scope::User, &text)]) else {
            return Ok(());
        };
        proptest::prop_assert_eq!(entries.len(), 1);
        let kind = entries[0].said;
        let rule = written_text(&entries[0].outcome).expect("a deny or ask rule is never dropped");
        let mut all = argv.clone();
        all.extend(suffix.iter().cloned());
        let command = words::command(&all);
        proptest::prop_assert!(
            Alone::new(kind, rule).unwrap().matches(&command),
            "{kind:?} rule {rule:?} misses {command:?}"
        );
    }

    /// A string shown in Starlark's spelling reads back as the same string.
    #[test]
    fn a_shown_string_reads_back_the_same(s in "\\PC{0,12}|[\\x00-\\x1f\"'\\\\]{0,6}") {
        let shown = Value::Str(s.clone()).to_string();
        let calls = starlark::parse(&format!("f({shown})\n")).unwrap();
        proptest::prop_assert_eq!(&calls[0].args[0].value, &Value::Str(s));
    }
}

proptest::proptest! {
    /// The line Codex's TUI appends when a person chooses "always allow" (each word
    /// JSON-quoted) reads back as the same words, whatever they hold.
    #[test]
    fn a_line_codex_appends_reads_back_as_its_words(
        argv in proptest::collection::vec("\\PC{0,6}|[\\x00-\\x1f\"\\\\]{0,3}", 1..4),
    ) {
        let quoted: Vec<String> = argv.iter().map(|w| serde_json::to_string(w).unwrap()).collect();
        let line = format!("prefix_rule(pattern=[{}], decision=\"allow\")\n", quoted.join(", "));
        let calls = starlark::parse(&line).unwrap();
        let rule = prefix_rule(&calls[0]).unwrap();
        let words: Vec<String> = rule.pattern.into_iter().flatten().collect();
        proptest::prop_assert_eq!(words, argv);
    }
}
