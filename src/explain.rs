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
pub(crate) struct Explanation {
    /// rule / remembered / level / deny-rule / ask-rule / none
    pub(crate) decided_by: &'static str,
    pub(crate) rule: Option<String>,
    pub(crate) rule_origin: Option<String>,
    /// The simple command a deny or ask rule caught.
    pub(crate) matched: Option<String>,
    pub(crate) reason: String,
}

/// The longest command shown in a message, in characters.
const SHOWN_CHARS: usize = 200;

/// A command as a message shows it: on one line, control characters escaped, long
/// commands cut.
pub(crate) fn display(text: &str) -> String {
    one_line(text, SHOWN_CHARS)
}

/// `text` as one line of a message: control characters escaped, cut after `max_chars`
/// characters (with `…`).
pub(crate) fn one_line(text: &str, max_chars: usize) -> String {
    let mut shown = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == max_chars {
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
pub(crate) fn explain(decision: &Decision, policy: &Policy) -> Explanation {
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
pub(crate) struct Alternative {
    /// The settings turned on, by their configuration keys: `compound`, `readonly`, or
    /// both.
    pub(crate) settings: Vec<&'static str>,
    /// Why the command would then be allowed.
    pub(crate) reason: String,
}

/// For `decision`, made under `policy` for `request`, when it needs an approver because
/// nothing allows it: which of the settings that are off there, `compound` and
/// `readonly`, would have allowed it, each alone or (when neither alone does) both
/// together. Each is [`crate::policy::decide`] again with the setting turned on;
/// nothing else changes.
pub(crate) fn alternatives(
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
pub(crate) fn subject(command: Option<&CommandText>) -> String {
    match command {
        Some(c) => format!("`{}`", display(c.as_str())),
        None => "an interactive shell".to_owned(),
    }
}

/// The one line a refused caller reads on stderr: what, why, and what to do instead.
pub(crate) fn refusal_line(what: &str, reason: &str, advice: &str) -> String {
    format!("gate: refused {what}: {reason}; nothing was run. {advice}")
}

/// The line for a run gate could not set up (the sandbox, the supervisor, the mark):
/// what went wrong, that nothing was run, and what to do where there is advice. The
/// layers that fail say only what went wrong ([`crate::sandbox::SandboxError`],
/// [`crate::supervisor::SupervisorError`], [`crate::sandbox::MarkError`]); these words
/// are added here, once.
pub(crate) fn not_run(cause: &dyn std::fmt::Display, advice: Option<&str>) -> String {
    match advice {
        Some(advice) => format!("{cause}; nothing was run. {advice}"),
        None => format!("{cause}; nothing was run"),
    }
}

/// [`not_run`] for the sandbox's errors, with their advice.
pub(crate) fn sandbox_not_run(e: &crate::sandbox::SandboxError) -> String {
    not_run(e, e.advice())
}

/// Advice for a refusal by policy.
pub(crate) fn advice(decision: &Decision, command: Option<&CommandText>) -> &'static str {
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
mod tests;
