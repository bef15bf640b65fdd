//! Ask rules: commands that need a person's answer at every level that runs commands,
//! ahead of allow rules (a command that both an ask rule and an allow rule match is
//! asked about) and behind deny rules (a command that both a deny rule and an ask rule
//! match is refused).
//!
//! An ask rule is written and matched as a deny rule is ([`super::deny`]): a program,
//! then operands and options, found in every simple command the text could run (after
//! `;` and `|`, inside `$(…)`, behind `env`, `sudo` and the other wrappers, inside
//! `sh -c '…'` and `eval`), with the options in any order and spelling, and a word
//! computed at run time matching the rest of any rule. Only the text is read: ask rules
//! are not checked at exec, so a program that a script or a Makefile runs is not asked
//! about (`docs/rules.md` says so; deny rules are the ones the supervisor enforces).

use super::deny::{DenyMatch, DenyRules};
use super::rules::RuleError;
use super::{CommandText, Origin};

/// A validated set of ask rules.
#[derive(Debug, Clone, Default)]
pub struct AskRules {
    /// The same matcher as deny rules: an ask rule must see through shell syntax as far
    /// as a deny rule does, or the model could write its way around it.
    rules: DenyRules,
}

/// Why the ask rules want a person to answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AskMatch {
    /// A rule matched one of the simple commands.
    Rule {
        rule: Box<str>,
        origin: Origin,
        /// The simple command, as words joined by spaces, that the rule caught.
        found: String,
    },
    /// The text is too large or too deeply wrapped to read in bounded time, so it cannot
    /// be shown to be free of commands the ask rules name.
    TooComplex,
    /// A shell with no command text (interactive, or reading its commands from standard
    /// input): what it will run cannot be read, so it cannot be shown to be free of
    /// commands the ask rules name.
    Unreadable,
}

impl AskRules {
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a rule, validated as a deny rule is. A duplicate keeps its first origin.
    pub fn add(&mut self, raw: &str, origin: Origin) -> Result<(), RuleError> {
        self.rules.add(raw, origin)
    }

    /// [`AskRules::add`] with an origin the caller keeps.
    pub fn add_with(&mut self, raw: &str, origin: &Origin) -> Result<(), RuleError> {
        self.rules.add_with(raw, origin)
    }

    /// Add every rule of `other` (already validated).
    pub fn extend(&mut self, other: AskRules) {
        self.rules.extend(other.rules);
    }

    pub fn len(&self) -> usize {
        self.rules.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, Origin)> {
        self.rules.iter()
    }

    /// The first ask rule that catches any simple command in `command`.
    pub fn find(&self, command: &CommandText) -> Option<AskMatch> {
        self.rules.find(command).map(|found| match found {
            DenyMatch::Rule {
                rule,
                origin,
                found,
            } => AskMatch::Rule {
                rule,
                origin,
                found,
            },
            DenyMatch::TooComplex => AskMatch::TooComplex,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(rules: &[&str]) -> AskRules {
        let mut a = AskRules::new();
        for r in rules {
            a.add(r, Origin::Flag("--ask")).unwrap();
        }
        a
    }

    fn found(rules: &[&str], command: &str) -> Option<String> {
        match ask(rules).find(&CommandText::new(command)) {
            Some(AskMatch::Rule { found, .. }) => Some(found),
            Some(other) => Some(format!("{other:?}")),
            None => None,
        }
    }

    #[test]
    fn an_ask_rule_finds_its_command_wherever_a_deny_rule_would() {
        let rules = ["git push"];
        for command in [
            "git push",
            "git push origin main",
            "git status && git push",
            "echo $(git push)",
            "env GIT_TRACE=1 git push",
            "sudo -u me git push",
            "sh -c 'git push origin'",
            "bash -lc \"git push\"",
            "eval 'git push'",
            "g\"it\" p'ush'",
            "/usr/bin/git push",
            "git -C repo push",
            "X=1 git push",
            "timeout 5 nohup git push",
        ] {
            assert!(
                found(&rules, command).is_some(),
                "{command:?} was not caught"
            );
        }
        for command in ["git status", "git pull", "echo git push", "gitx push"] {
            assert_eq!(found(&rules, command), None, "{command:?}");
        }
    }

    #[test]
    fn an_ask_rule_is_validated_as_a_deny_rule() {
        let mut a = AskRules::new();
        assert!(a.add("  ", Origin::BuiltIn).is_err());
        assert!(a.add("git push; ls", Origin::BuiltIn).is_err());
        assert!(a.add("Bash(git push:*)", Origin::BuiltIn).is_err());
        assert!(a.add("FOO=1", Origin::BuiltIn).is_err());
        assert!(a.add("git push", Origin::BuiltIn).is_ok());
        // A duplicate keeps the first origin.
        a.add("git push", Origin::Flag("--ask")).unwrap();
        assert_eq!(a.len(), 1);
        assert_eq!(a.iter().next().unwrap().1, Origin::BuiltIn);
    }

    #[test]
    fn a_computed_program_could_be_any_ask_rule() {
        assert!(found(&["npm publish"], "$X publish").is_some());
        assert!(found(&["npm publish"], "\"$@\"").is_some());
    }
}
