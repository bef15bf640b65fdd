//! The allow-rule matcher against a reference model of the seed semantics.
//!
//! Input: UTF-8 text; NUL bytes separate up to 16 rules from the command, which is the
//! last piece. For every rule, `allow_rule_matches` must give the model's answer; the
//! rules that `AllowRules::add` accepts must make `AllowRules::find` return a rule the
//! model says matches, and the longest such, or nothing when none does.

use gate::policy::{AllowRules, Origin, allow_rule_matches};

pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut pieces: Vec<&str> = text.split('\0').collect();
    let command = pieces.pop().unwrap_or_default();
    pieces.truncate(16);

    let mut rules = AllowRules::new();
    let mut added: Vec<&str> = Vec::new();
    for rule in &pieces {
        assert_eq!(
            allow_rule_matches(rule, command),
            model_matches(rule, command),
            "allow_rule_matches({rule:?}, {command:?}) disagrees with the model"
        );
        if rules.add(rule, Origin::Flag("--allow")).is_ok() {
            let stored = model_trim(rule);
            assert!(
                !unmatchable_text(stored) && !stored.trim().is_empty(),
                "AllowRules::add accepted {rule:?}, which can never match"
            );
            assert!(
                rules.contains(rule),
                "{rule:?} was added but is not contained"
            );
            added.push(stored);
        }
    }

    let matching: Vec<&str> = added
        .iter()
        .copied()
        .filter(|rule| model_matches(rule, command))
        .collect();
    match rules.find(command) {
        None => assert!(
            matching.is_empty(),
            "AllowRules::find({command:?}) found nothing, but {matching:?} match"
        ),
        Some((found, _)) => {
            assert!(
                matching.contains(&found),
                "AllowRules::find({command:?}) returned {found:?}, which does not match"
            );
            let longest = matching.iter().map(|r| r.len()).max().unwrap_or(0);
            assert_eq!(
                found.len(),
                longest,
                "AllowRules::find({command:?}) returned {found:?}, not the longest of {matching:?}"
            );
        }
    }
}

/// The characters that keep a command from matching (docs/rules.md, "Matching").
const SHELL_CHARS: &str = ";&|<>$`(){}\\\n";

fn unmatchable(c: char) -> bool {
    SHELL_CHARS.contains(c) || (c.is_control() && c != '\t')
}

fn unmatchable_text(text: &str) -> bool {
    text.chars().any(unmatchable)
}

/// Spaces and tabs, the blanks a shell skips, trimmed from both ends.
fn model_trim(text: &str) -> &str {
    text.trim_matches([' ', '\t'])
}

/// The seed semantics as docs/rules.md states them, written without gate's code: no
/// shell or control character (other than tab) anywhere in the untrimmed command or
/// rule; a rule that is blank (only white space of any kind) matches nothing; after
/// trimming spaces and tabs from both, the command equals the rule or starts with the
/// rule followed by a space.
fn model_matches(rule: &str, command: &str) -> bool {
    if unmatchable_text(command) || unmatchable_text(rule) {
        return false;
    }
    let rule = model_trim(rule);
    if rule.chars().all(char::is_whitespace) {
        return false;
    }
    let command = model_trim(command);
    command == rule
        || command
            .strip_prefix(rule)
            .is_some_and(|rest| rest.starts_with(' '))
}
