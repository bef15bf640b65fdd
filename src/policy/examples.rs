//! Rule self-tests: commands a rule must match and must not match, written beside the
//! rule in a configuration file and checked when the configuration loads. A rule that
//! does not do what its author wrote it for stops everything (gate's own failure, 125)
//! before any command is judged by it.
//!
//! Each example is matched by the rule alone, as its kind matches: an allow rule as a
//! prefix (a runner's refused options included, [`super::runners`]), a deny or ask rule
//! through the shell text ([`super::deny`]). Settings that narrow allow rules further
//! (`readonly_rules`) are not applied: the example is about the rule.

use super::deny::DenyRules;
use super::rules::{AllowRules, RuleError};
use super::{CommandText, Origin};

/// Which list a rule is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleKind {
    Allow,
    /// An allow rule that matches only the command equal to it.
    AllowExact,
    Deny,
    Ask,
}

/// What an example says of its rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// The rule must match it (`match`).
    Match,
    /// The rule must not match it (`not_match`).
    NotMatch,
}

impl Expect {
    /// The configuration key that says it.
    pub fn key(self) -> &'static str {
        match self {
            Expect::Match => "match",
            Expect::NotMatch => "not_match",
        }
    }
}

/// One rule alone, as a set of its kind, to match its examples against.
pub struct Alone {
    kind: RuleKind,
    allow: AllowRules,
    deny: DenyRules,
}

impl Alone {
    /// The rule `rule` of `kind`, validated as its kind validates it.
    pub fn new(kind: RuleKind, rule: &str) -> Result<Alone, RuleError> {
        let mut alone = Alone {
            kind,
            allow: AllowRules::new(),
            deny: DenyRules::new(),
        };
        match kind {
            RuleKind::Allow => alone.allow.add(rule, Origin::BuiltIn)?,
            RuleKind::AllowExact => alone.allow.add_exact(rule, Origin::BuiltIn)?,
            RuleKind::Deny | RuleKind::Ask => alone.deny.add(rule, Origin::BuiltIn)?,
        }
        Ok(alone)
    }

    /// Whether the rule matches `command` as a rule of its kind does.
    pub fn matches(&self, command: &str) -> bool {
        match self.kind {
            RuleKind::Allow | RuleKind::AllowExact => self
                .allow
                .find_where(command, |r| super::runners::check(r, command).is_ok())
                .is_some(),
            // A text too complex to read is refused (or asked about) as such: the rule
            // stops it.
            RuleKind::Deny | RuleKind::Ask => self.deny.find(&CommandText::new(command)).is_some(),
        }
    }

    /// Check one example: `Err` with the sentence that names the rule and the example
    /// when the rule does not do what the example says.
    pub fn check(&self, rule: &str, example: &str, expect: Expect) -> Result<(), String> {
        match (expect, self.matches(example)) {
            (Expect::Match, true) | (Expect::NotMatch, false) => Ok(()),
            (Expect::Match, false) => Err(format!(
                "the rule `{}` does not match its example `{}`, which `match` says it must",
                rule.escape_debug(),
                example.escape_debug()
            )),
            (Expect::NotMatch, true) => Err(format!(
                "the rule `{}` matches its example `{}`, which `not_match` says it must not",
                rule.escape_debug(),
                example.escape_debug()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_example_is_matched_as_the_rules_kind_matches() {
        use RuleKind::*;
        let m = |kind, rule, command| Alone::new(kind, rule).unwrap().matches(command);
        // Allow rules: a plain prefix, never through shell syntax, not past a runner's
        // refused option.
        assert!(m(Allow, "git status", "git status -s"));
        assert!(!m(Allow, "git status", "git status; rm x"));
        assert!(!m(Allow, "git status", "git -C x status"));
        assert!(!m(Allow, "make", "make SHELL=./x"));
        // Deny and ask rules: through the text, in any spelling of their options.
        for kind in [Deny, Ask] {
            assert!(m(kind, "git push --force", "git -C x push -f origin"));
            assert!(m(kind, "git push", "true && sh -c 'git push'"));
            assert!(!m(kind, "git push --force", "git push origin"));
        }
    }

    fn check(kind: RuleKind, rule: &str, example: &str, expect: Expect) -> Result<(), String> {
        Alone::new(kind, rule).unwrap().check(rule, example, expect)
    }

    #[test]
    fn a_mismatch_names_the_rule_the_example_and_what_was_expected() {
        assert_eq!(
            check(
                RuleKind::Deny,
                "git push --force",
                "git push -f",
                Expect::Match
            ),
            Ok(())
        );
        assert_eq!(
            check(RuleKind::Allow, "git", "gitk", Expect::Match),
            Err(
                "the rule `git` does not match its example `gitk`, which `match` says it must"
                    .into()
            )
        );
        assert_eq!(
            check(
                RuleKind::Ask,
                "git push",
                "git push origin",
                Expect::NotMatch
            ),
            Err(
                "the rule `git push` matches its example `git push origin`, which `not_match` \
                 says it must not"
                    .into()
            )
        );
    }
}
