//! Rules written as patterns, which gate would compare as plain words and so never
//! match: a shell glob (`touch *`), or an agent's own permission syntax pasted in
//! (`Bash(npm run test:*)`, `rm -rf:*`). [`super::validate_rule`] refuses them when the
//! configuration is loaded, and names the rule as gate writes it when there is one.
//!
//! A glob character inside quotes is literal to a shell and to gate alike (`echo '*'`),
//! and a `[` with no `]` after it in its word is no glob either (the test program `[`),
//! so both stay valid.

use super::rules::{RuleError, trim_blanks, validate_rule};
use crate::shells::Quoting;
use crate::shells::words::read_word;

/// The names agents give their shell tool in permission rules written `TOOL(COMMAND)`,
/// and the agent, for the message.
const SHELL_TOOLS: [(&str, &str); 3] = [
    ("Bash", "Claude Code"),
    ("run_shell_command", "Gemini CLI"),
    ("ShellTool", "Gemini CLI"),
];

/// The error for a rule of the shape `TOOL(COMMAND)` with a known shell tool, or `None`
/// for any other rule. `raw` is the rule as written.
pub(super) fn agent_rule(raw: &str) -> Option<RuleError> {
    let rule = trim_blanks(raw);
    let (tool, rest) = rule.split_once('(')?;
    let inner = rest.strip_suffix(')')?;
    let (_, agent) = SHELL_TOOLS.iter().find(|(name, _)| *name == tool)?;
    // Claude Code's "followed by any arguments", in its old (`:*`) and new (` *`)
    // spelling: what a gate rule means by itself.
    let inner = trim_blanks(inner);
    let command = inner
        .strip_suffix(":*")
        .or_else(|| inner.strip_suffix(" *"))
        .unwrap_or(inner);
    Some(RuleError::AgentRule {
        agent,
        written: validate_rule(command).map(str::to_owned).map_err(Box::new),
    })
}

/// Refuse a rule (already free of shell characters, trimmed) that holds a glob
/// character outside quotes. A trailing `:*` is named as Claude Code's, with the rule
/// without it when that is a valid rule.
pub(super) fn check(rule: &str) -> Result<(), RuleError> {
    let Some(glob) = first_glob_char(rule) else {
        return Ok(());
    };
    if let Some(command) = rule.strip_suffix(":*") {
        if let Ok(written) = validate_rule(command) {
            return Err(RuleError::ColonStar {
                written: written.to_owned(),
            });
        }
    }
    Err(RuleError::Glob(glob))
}

/// The first character of `rule` that a shell would read as a glob: `*` or `?`
/// outside quotes, or `[` outside quotes with a `]` after it in the same word. The
/// words are the shell's word reader's ([`crate::shells::words`]). A quote without its
/// closing one quotes nothing (so the rule is refused rather than let through): from
/// the word it opens in, the text is read as written.
fn first_glob_char(rule: &str) -> Option<char> {
    let bytes = rule.as_bytes();
    // An unquoted glob character is one written in the rule: without any, no word needs
    // reading (most rules; a policy's are all checked before every command).
    if !bytes.iter().any(|b| matches!(b, b'*' | b'?' | b'[')) {
        return None;
    }
    let mut at = 0;
    loop {
        while matches!(bytes.get(at), Some(b' ' | b'\t')) {
            at += 1;
        }
        if at == bytes.len() {
            return None;
        }
        let (word, stop) = read_word(rule, at, Quoting::BASH);
        if stop.is_some() || word.end == at {
            return glob_in(rule[at..].chars().map(|c| (c, false)));
        }
        if let Some(c) = glob_in(word.value.chars().zip(word.quoted.iter().copied())) {
            return Some(c);
        }
        at = word.end;
    }
}

/// The first glob character among one word's characters (each with whether it was
/// quoted); a blank ends a word's `[`.
fn glob_in(chars: impl Iterator<Item = (char, bool)>) -> Option<char> {
    // An unquoted `[` seen in the current word.
    let mut bracket = false;
    for (c, quoted) in chars {
        match c {
            _ if quoted => {}
            '*' | '?' => return Some(c),
            '[' => bracket = true,
            ']' if bracket => return Some('['),
            ' ' | '\t' => bracket = false,
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(raw: &str) -> Result<String, RuleError> {
        validate_rule(raw).map(str::to_owned)
    }

    #[test]
    fn claude_code_rules_are_refused_with_the_rule_gate_writes() {
        for (raw, gate) in [
            ("Bash(npm run test:*)", "npm run test"),
            ("Bash(git diff *)", "git diff"),
            ("Bash(git status)", "git status"),
            ("  Bash( ls -la:* ) ", "ls -la"),
            ("run_shell_command(git log)", "git log"),
            ("ShellTool(ls -l)", "ls -l"),
        ] {
            match written(raw) {
                Err(RuleError::AgentRule { written: Ok(w), .. }) => assert_eq!(w, gate, "{raw}"),
                other => panic!("{raw}: {other:?}"),
            }
        }
    }

    #[test]
    fn an_agent_rule_without_a_gate_equivalent_says_why() {
        for (raw, why) in [
            ("Bash(*)", RuleError::Glob('*')),
            ("Bash(git * main)", RuleError::Glob('*')),
            ("Bash(ls | head)", RuleError::ShellChar('|')),
            ("Bash()", RuleError::Blank),
            ("Bash(:*)", RuleError::Blank),
        ] {
            assert_eq!(
                written(raw),
                Err(RuleError::AgentRule {
                    agent: "Claude Code",
                    written: Err(Box::new(why))
                }),
                "{raw}"
            );
        }
    }

    #[test]
    fn other_parentheses_are_still_shell_characters() {
        for raw in ["Read(./.env)", "bash(ls)", "Bash (ls)", "Bash(ls) x"] {
            assert_eq!(written(raw), Err(RuleError::ShellChar('(')), "{raw}");
        }
    }

    #[test]
    fn a_trailing_colon_star_is_refused_with_the_rule_without_it() {
        for (raw, gate) in [
            ("rm -rf:*", "rm -rf"),
            ("npm run test:*", "npm run test"),
            (" git push:* ", "git push"),
        ] {
            assert_eq!(
                written(raw),
                Err(RuleError::ColonStar {
                    written: gate.into()
                }),
                "{raw}"
            );
        }
        // Nothing valid before it: a glob like any other.
        assert_eq!(written(":*"), Err(RuleError::Glob('*')));
        assert_eq!(written("git * main:*"), Err(RuleError::Glob('*')));
    }

    #[test]
    fn globs_outside_quotes_are_refused() {
        for (raw, c) in [
            ("touch *", '*'),
            ("rm *.o", '*'),
            ("ls ?", '?'),
            ("curl https://x.example/?q=1", '?'),
            ("rm [ab]", '['),
            ("rm x[0-9].log", '['),
            ("echo 'a' *", '*'),
            ("echo 'a *", '*'),
        ] {
            assert_eq!(written(raw), Err(RuleError::Glob(c)), "{raw}");
        }
    }

    #[test]
    fn literal_glob_characters_stay_valid() {
        for raw in [
            "echo '*'",
            "grep -e \"a?b\"",
            "echo 'x[0]'",
            "[",
            "[ -f",
            "[ -d build ]",
            "[[ -n",
            "echo ]",
            "echo [ x ]",
            "npm run test:unit",
        ] {
            assert_eq!(written(raw).as_deref(), Ok(raw), "{raw}");
        }
    }

    #[test]
    fn every_message_names_the_gate_rule_or_says_there_is_none() {
        let text = |raw: &str| validate_rule(raw).unwrap_err().to_string();
        let m = text("Bash(npm run test:*)");
        assert!(
            m.contains("Claude Code") && m.ends_with("write `npm run test`"),
            "{m}"
        );
        let m = text("rm -rf:*");
        assert!(m.contains("`:*`") && m.ends_with("write `rm -rf`"), "{m}");
        let m = text("touch *");
        assert!(
            m.contains("glob character '*'") && m.contains("cannot be"),
            "{m}"
        );
        let m = text("Bash(git * main)");
        assert!(
            m.contains("Claude Code") && m.contains("glob character '*'"),
            "{m}"
        );
    }
}
