//! Words for decisions: the reason for a decision, and the one-line refusal a model
//! reads on stderr. Shared by the run path, the audit log and `gate check`, so all three
//! say the same thing.

#![forbid(unsafe_code)]

use crate::policy::readonly::Files;
use crate::policy::{
    Allowed, AskMatch, Asked, CommandText, Decision, Denied, DenyMatch, Level, Policy, Remembered,
    Request, SHELL_CHARS, Unallowed, Unmatched, decide, describe_char, first_unmatchable_char,
};

/// What a decision rests on, in fields (for JSON) and in a sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explanation {
    /// rule / remembered / level / deny-rule / ask-rule / none
    pub decided_by: &'static str,
    pub rule: Option<String>,
    pub rule_origin: Option<String>,
    /// The simple command a deny or ask rule caught.
    pub matched: Option<String>,
    pub reason: String,
}

/// The longest command shown in a message, in characters.
const SHOWN_CHARS: usize = 200;

/// A command as a message shows it: on one line, control characters escaped, long
/// commands cut.
pub fn display(text: &str) -> String {
    let mut shown = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == SHOWN_CHARS {
            shown.push('…');
            break;
        }
        if c.is_control() {
            shown.extend(c.escape_default());
        } else {
            shown.push(c);
        }
    }
    shown
}

/// Explain `decision`, reached under `policy`: the decision says why, and this puts it in
/// words (the policy gives the level and where it came from).
pub fn explain(decision: &Decision, policy: &Policy) -> Explanation {
    let level = policy.level;
    let level_origin = policy.level_origin.to_string();
    let plain = |decided_by, reason: String| Explanation {
        decided_by,
        rule: None,
        rule_origin: None,
        matched: None,
        reason,
    };
    match decision {
        Decision::Allow(Allowed::Level) => plain(
            "level",
            format!("level \"{level}\" (from {level_origin}) runs every command"),
        ),
        Decision::Allow(Allowed::Sandboxed) => plain(
            "level",
            format!(
                "level \"{level}\" (from {level_origin}) runs every command inside the sandbox"
            ),
        ),
        Decision::Allow(Allowed::Rule { rule, origin }) => Explanation {
            // A lasting approval is a rule like any other, and the record says it was one.
            decided_by: match origin {
                crate::policy::Origin::Always { .. } => "always-allow",
                _ => "rule",
            },
            rule: Some(rule.to_string()),
            rule_origin: Some(origin.to_string()),
            matched: None,
            reason: format!(
                "it matches the allow rule `{}` (from {origin})",
                display(rule)
            ),
        },
        Decision::Allow(Allowed::RememberedCommand) => plain(
            "remembered",
            "an approver allowed this same command for the rest of the session".into(),
        ),
        Decision::Allow(Allowed::RememberedRule { rule }) => Explanation {
            decided_by: "remembered",
            rule: Some(rule.to_string()),
            rule_origin: Some("approver".into()),
            matched: None,
            reason: format!(
                "an approver allowed commands starting with `{}` for the rest of the session",
                display(rule)
            ),
        },
        Decision::Allow(Allowed::ReadOnly { entry }) => Explanation {
            decided_by: "readonly",
            rule: Some((*entry).to_owned()),
            rule_origin: Some("the read-only preset".into()),
            matched: None,
            reason: format!("it only reads: the read-only preset allows `{entry}` as written"),
        },
        Decision::Allow(Allowed::Compound { parts }) => Explanation {
            decided_by: "compound",
            rule: None,
            rule_origin: None,
            matched: None,
            reason: format!(
                "compound mode: each of its {} commands is allowed on its own ({})",
                parts.len(),
                parts
                    .iter()
                    .map(|(text, why)| format!("`{}` {}", display(text), part_reason(why)))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        },
        Decision::Allow(Allowed::Delegated) => plain(
            "delegated",
            "the agent's wrapper runs its command through gate again, which judges it there".into(),
        ),
        Decision::Allow(Allowed::Info) => plain(
            "info",
            "the shell is only asked for its version or help, which runs no command".into(),
        ),
        Decision::Allow(Allowed::Approved {
            channel,
            source,
            sandboxed,
        }) => {
            let by = match (channel, source) {
                (&"tty", _) => "approved on the terminal".to_owned(),
                (_, Some(source)) => format!("approved by the approver ({})", display(source)),
                (_, None) => "approved by the approver on the socket".to_owned(),
            };
            plain(
                channel,
                if *sandboxed {
                    format!("{by}, to run inside the sandbox of level \"{level}\"")
                } else if policy.level == Level::Safe {
                    format!("{by}, to run outside the sandbox of level \"{level}\"")
                } else {
                    by
                },
            )
        }
        Decision::Ask(Asked::Rule(AskMatch::Rule {
            rule,
            origin,
            found,
        })) => Explanation {
            decided_by: "ask-rule",
            rule: Some(rule.to_string()),
            rule_origin: Some(origin.to_string()),
            matched: Some(found.clone()),
            reason: format!(
                "the ask rule `{}` (from {origin}) matches `{}`, and an ask rule needs a \
                 person's answer at every level, whatever allows the command",
                display(rule),
                display(found)
            ),
        },
        Decision::Ask(Asked::Unsandboxed { rule, origin }) => Explanation {
            decided_by: "unsandboxed-rule",
            rule: Some(rule.to_string()),
            rule_origin: Some(origin.to_string()),
            matched: None,
            reason: format!(
                "the unsandboxed rule `{}` (from {origin}) matches it: at level \"{level}\" \
                 it may run outside the sandbox, and only when a person says yes",
                display(rule)
            ),
        },
        Decision::Ask(Asked::Rule(AskMatch::TooComplex)) => plain(
            "ask-rule",
            "it is too large or too deeply nested to be checked against the ask rules, so a \
             person must answer"
                .into(),
        ),
        Decision::Ask(Asked::Rule(AskMatch::Unreadable)) => plain(
            "ask-rule",
            format!(
                "a shell with no command to check cannot be checked against the ask rules \
                 ({} set), so a person must answer even at level \"{level}\" (from \
                 {level_origin})",
                policy.ask.len()
            ),
        ),
        Decision::Ask(Asked::Unallowed(why)) => plain(
            "none",
            format!(
                "{}, so level \"{level}\" (from {level_origin}) needs an approver",
                unallowed(why)
            ),
        ),
        Decision::Deny(Denied::Level) => plain(
            "level",
            format!(
                "level \"{}\" (from {level_origin}) runs no commands",
                Level::Deny
            ),
        ),
        Decision::Deny(Denied::Rule(DenyMatch::Rule {
            rule,
            origin,
            found,
        })) => Explanation {
            decided_by: "deny-rule",
            rule: Some(rule.to_string()),
            rule_origin: Some(origin.to_string()),
            matched: Some(found.clone()),
            reason: format!(
                "the deny rule `{}` (from {origin}) matches `{}`",
                display(rule),
                display(found)
            ),
        },
        Decision::Deny(Denied::Rule(DenyMatch::TooComplex)) => plain(
            "deny-rule",
            "it is too large or too deeply nested to be checked against the deny rules".into(),
        ),
    }
}

/// A setting that is off and would have allowed a command that needs an approver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alternative {
    /// The settings turned on, by their configuration keys: `compound`, `readonly`, or
    /// both.
    pub settings: Vec<&'static str>,
    /// Why the command would then be allowed.
    pub reason: String,
}

/// For `decision`, made under `policy` for `request`, when it needs an approver because
/// nothing allows it: which of the settings that are off there, `compound` and
/// `readonly`, would have allowed it, each alone or (when neither alone does) both
/// together. Each is [`decide`](crate::policy::decide) again with the setting turned on;
/// nothing else changes.
pub fn alternatives(
    decision: &Decision,
    policy: &Policy,
    remembered: &Remembered,
    request: Request<'_>,
    files: &Files,
) -> Vec<Alternative> {
    // An ask rule asks whatever else is turned on.
    if !matches!(decision, Decision::Ask(Asked::Unallowed(_))) {
        return Vec::new();
    }
    let allowed_with = |compound: bool, readonly: bool| {
        let flipped = Policy {
            compound: policy.compound || compound,
            readonly: policy.readonly || readonly,
            ..policy.clone()
        };
        match decide(&flipped, remembered, request, files) {
            d @ Decision::Allow(_) => Some(explain(&d, &flipped).reason),
            _ => None,
        }
    };
    let mut found = Vec::new();
    if !policy.compound {
        if let Some(reason) = allowed_with(true, false) {
            found.push(Alternative {
                settings: vec!["compound"],
                reason,
            });
        }
    }
    if !policy.readonly {
        if let Some(reason) = allowed_with(false, true) {
            found.push(Alternative {
                settings: vec!["readonly"],
                reason,
            });
        }
    }
    if found.is_empty() && !policy.compound && !policy.readonly {
        if let Some(reason) = allowed_with(true, true) {
            found.push(Alternative {
                settings: vec!["compound", "readonly"],
                reason,
            });
        }
    }
    found
}

/// Why nothing allowed a command at level `ask`, as the decision found it.
fn unallowed(why: &Unallowed) -> String {
    match why {
        Unallowed::NoCommand => {
            "a shell with no command to check cannot match an allow rule".into()
        }
        Unallowed::Inexact => "it is not valid UTF-8, so it cannot match an allow rule".into(),
        Unallowed::Char(ch) if SHELL_CHARS.contains(ch) => format!(
            "it contains the shell character {}, and a command with shell syntax never \
             matches an allow rule",
            describe_char(*ch)
        ),
        Unallowed::Char(ch) => format!(
            "it contains the {}, and such a command never matches an allow rule",
            describe_char(*ch)
        ),
        Unallowed::NotSplit => "it has shell syntax that compound mode does not take apart \
                                (only simple commands joined by &&, ||, ; and | are)"
            .into(),
        Unallowed::Part(Some(part)) => format!(
            "compound mode: `{}` is not allowed on its own",
            display(part)
        ),
        Unallowed::Part(None) => "compound mode: not every part is allowed on its own".into(),
        Unallowed::Simple { rules, preset } => {
            let why = match rules {
                Unmatched::NoRules => "there are no allow rules".to_owned(),
                Unmatched::NoMatch => "no allow rule matches it".to_owned(),
                Unmatched::Runner { rule, refusal } => format!(
                    "the allow rule `{}` trusts the project's own scripts and files, not an \
                     argument that loads or runs other code: {refusal}",
                    display(rule)
                ),
                Unmatched::ReadOnlyRule { rule, refusal } => format!(
                    "the allow rule `{}` is a read-only command, and with readonly_rules such \
                     a rule allows only commands that only read; this one does not ({refusal})",
                    display(rule)
                ),
            };
            // With the preset on, say why it did not allow the command either.
            match preset {
                Some(e) => format!("{why}, and the read-only preset does not allow it ({e})"),
                None => why,
            }
        }
    }
}

/// Why one part of a compound command is allowed, in a few words.
fn part_reason(why: &Allowed) -> String {
    match why {
        Allowed::Rule { rule, origin } => {
            format!("matches the allow rule `{}` (from {origin})", display(rule))
        }
        Allowed::ReadOnly { entry } => format!("only reads (read-only preset: `{entry}`)"),
        Allowed::RememberedCommand => "was approved for the session".into(),
        Allowed::RememberedRule { rule } => {
            format!("matches `{}`, approved for the session", display(rule))
        }
        _ => "is allowed".into(),
    }
}

/// What a refusal names: the command, or the shell session.
pub fn subject(command: Option<&CommandText>) -> String {
    match command {
        Some(c) => format!("`{}`", display(c.as_str())),
        None => "an interactive shell".to_owned(),
    }
}

/// The one line a refused caller reads on stderr: what, why, and what to do instead.
pub fn refusal_line(what: &str, reason: &str, advice: &str) -> String {
    format!("gate: refused {what}: {reason}; nothing was run. {advice}")
}

/// Advice for a refusal by policy.
pub fn advice(decision: &Decision, command: Option<&CommandText>) -> &'static str {
    match decision {
        Decision::Deny(Denied::Level) => {
            "No command can run at this level; tell the user if one is needed."
        }
        Decision::Deny(Denied::Rule(DenyMatch::Rule { .. })) => {
            "Do not try to run it another way; tell the user if it is needed."
        }
        Decision::Deny(Denied::Rule(DenyMatch::TooComplex)) => "Split it into smaller commands.",
        _ => match command {
            None => "Pass the command to run with -c instead.",
            Some(c) if first_unmatchable_char(c.as_str()).is_some() => {
                "Run each part as its own command without shell syntax, use commands the allow \
                 rules permit (see `gate check`), or ask the user to allow this one."
            }
            Some(_) => {
                "Use commands the allow rules permit (see `gate check`), or ask the user to \
                 allow this one."
            }
        },
    }
}

#[cfg(test)]
mod tests {
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
        let not_read_only =
            crate::policy::readonly::check("sort -o out f", &Files::nothing_there())
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
}
