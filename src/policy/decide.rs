//! The decision function and the values it returns.

use std::collections::HashSet;

use super::ask::{AskMatch, AskRules};
use super::deny::{DenyMatch, DenyRules};
use super::readonly::{Files, NotReadOnly, View};
use super::rules::AllowRules;
use super::runners::Refusal;
use super::{CommandText, Level, Origin};

/// The policy a decision is made under: a level and the three rule sets.
#[derive(Debug, Clone)]
pub struct Policy {
    pub level: Level,
    pub level_origin: Origin,
    pub allow: AllowRules,
    pub deny: DenyRules,
    /// Commands that need a person's answer at every level that runs commands.
    pub ask: AskRules,
    /// At `safe`, commands that may run outside the sandbox, each time a person says so
    /// (the sandbox-first mode). Matched as strictly as allow rules.
    pub unsandboxed: AllowRules,
    /// Allow `a && b`, `a || b`, `a; b`, `a | b` when every part is allowed on its own.
    pub compound: bool,
    /// Allow the read-only preset's commands without asking.
    pub readonly: bool,
    /// An allow rule that is itself a read-only command (the preset allows its text:
    /// `git diff`, `find`, `sed -n`) allows only commands that pass the preset's checks
    /// too (`git diff --output=x` is asked about).
    pub readonly_rules: bool,
}

impl Policy {
    /// A policy at `level` with no rules and every switch off.
    pub fn at(level: Level, level_origin: Origin) -> Policy {
        Policy {
            level,
            level_origin,
            allow: AllowRules::new(),
            deny: DenyRules::new(),
            ask: AskRules::new(),
            unsandboxed: AllowRules::new(),
            compound: false,
            readonly: false,
            readonly_rules: false,
        }
    }
}

/// What an approver allowed earlier in the session: exact commands (trimmed text) and
/// command prefixes (validated like allow rules).
#[derive(Debug, Clone, Default)]
pub struct Remembered {
    commands: HashSet<Box<str>>,
    prefixes: AllowRules,
}

impl Remembered {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn remember_command(&mut self, command: &str) {
        self.commands.insert(super::trim_blanks(command).into());
    }

    pub fn remember_prefix(&mut self, rule: &str) -> Result<(), super::RuleError> {
        self.prefixes.add(rule, Origin::Approver)
    }

    pub fn allows(&self, command: &CommandText) -> Option<Allowed> {
        if !command.is_exact() {
            return None;
        }
        self.allows_text(command.as_str())
    }

    /// Like [`Remembered::allows`], for text known to be exact. A remembered prefix
    /// matches like an allow rule, a runner's refused options included
    /// ([`super::runners`]).
    pub fn allows_text(&self, command: &str) -> Option<Allowed> {
        if self.commands.contains(super::trim_blanks(command)) {
            return Some(Allowed::RememberedCommand);
        }
        self.prefixes
            .find_where(command, |rule| super::runners::check(rule, command).is_ok())
            .map(|(rule, _)| Allowed::RememberedRule { rule: rule.into() })
    }
}

/// What is to be decided.
#[derive(Debug, Clone, Copy)]
pub enum Request<'a> {
    /// One command text: `-c COMMAND`, a script and its arguments, or a program's argv
    /// joined with shell quoting.
    Command(&'a CommandText),
    /// A shell with no command to judge: interactive, a login shell, or commands read
    /// from standard input.
    Session,
    /// A shell asked only for its version or help: it runs nothing.
    Info,
    /// An agent's wrapper (recognised, its files checked) around the agent's own
    /// command: deny rules look at both, the rest of the decision at `inner`.
    Wrapped {
        outer: &'a CommandText,
        inner: &'a CommandText,
        /// The wrapper runs `inner` through gate again (Codex execs one of gate's shims),
        /// under the same settings: that gate judges it, so this one lets the wrapper
        /// run.
        execs_gate: bool,
    },
}

/// Why a request may run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Allowed {
    /// The level runs everything (`full`).
    Level,
    /// The level runs everything inside the sandbox (`safe`).
    Sandboxed,
    /// A shell asked only `--version` or `--help`, which runs no command.
    Info,
    /// An agent's wrapper that runs its command through gate again, which judges it
    /// there ([`Request::Wrapped`] with `execs_gate`).
    Delegated,
    /// The read-only preset's entry of this name allowed it.
    ReadOnly { entry: &'static str },
    /// Compound mode: each simple command (its text) was allowed on its own.
    Compound { parts: Vec<(Box<str>, Allowed)> },
    /// An allow rule matched.
    Rule { rule: Box<str>, origin: Origin },
    /// The same command was approved with "remember" earlier in the session.
    RememberedCommand,
    /// An approver allowed this prefix for the session.
    RememberedRule { rule: Box<str> },
    /// An approver said yes to this request. [`decide`] never returns it: the run path
    /// does, after asking.
    Approved {
        /// `socket` or `tty`.
        channel: &'static str,
        /// Who, as the approver named itself.
        source: Option<Box<str>>,
        /// At `safe` what a person approves still runs inside the sandbox: they said
        /// yes to this command, not to leaving the sandbox (`docs/rules.md`).
        sandboxed: bool,
    },
}

/// Why a request may not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Denied {
    /// The level is `deny`.
    Level,
    /// A deny rule matched.
    Rule(DenyMatch),
}

/// Why a request needs a person's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asked {
    /// Level `ask`, and nothing allows it: no allow rule, preset, compound mode or
    /// remembered approval. Why not is in [`Unallowed`].
    Unallowed(Unallowed),
    /// The ask rules want a person's answer, at any level that runs commands, and a
    /// remembered approval does not stand in for it.
    Rule(AskMatch),
    /// At `safe`, an unsandboxed rule matched: the command runs outside the sandbox if a
    /// person says yes, and the question says so. Nothing remembered stands in for it.
    Unsandboxed { rule: Box<str>, origin: Origin },
}

/// Why nothing allows a request at level `ask`, as the decision found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unallowed {
    /// A shell with no command to match: interactive, a login shell, or commands read
    /// from standard input.
    NoCommand,
    /// The text is not exactly what will run (it was not valid UTF-8).
    Inexact,
    /// With compound mode off, the text holds this character, which no allow rule ever
    /// matches: shell syntax, or another character such as a control character.
    Char(char),
    /// Compound mode is on, and it cannot take the text apart into simple commands.
    NotSplit,
    /// Compound mode is on and took the text apart: the first part not allowed on its
    /// own, or `None` when each is but the text is only one simple command.
    Part(Option<Box<str>>),
    /// One simple command: why the allow rules did not allow it, and, with the
    /// read-only preset on, why the preset did not either.
    Simple {
        rules: Unmatched,
        preset: Option<Box<NotReadOnly>>,
    },
}

/// Why no allow rule allows one simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unmatched {
    /// There are no allow rules.
    NoRules,
    /// No allow rule matches its text.
    NoMatch,
    /// The longest allow rule that matches its text is a test or build runner's, and a
    /// word after the rule loads or runs other code ([`super::runners`]).
    Runner {
        rule: Box<str>,
        refusal: Box<Refusal>,
    },
    /// With [`Policy::readonly_rules`]: the longest allow rule that matches its text is
    /// a read-only command, and the text does not only read.
    ReadOnlyRule {
        rule: Box<str>,
        refusal: Box<NotReadOnly>,
    },
}

/// The outcome of [`decide`]. It must be acted on: dropping it would mean neither
/// running nor refusing.
#[must_use]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Allow(Allowed),
    /// Nothing denies it, and a person must say: why is in [`Asked`].
    Ask(Asked),
    Deny(Denied),
}

impl Decision {
    pub fn kind(&self) -> &'static str {
        match self {
            Decision::Allow(_) => "allow",
            Decision::Ask(_) => "ask",
            Decision::Deny(_) => "deny",
        }
    }
}

/// Decide one request.
///
/// 1. Level `deny` refuses everything; a matching deny rule refuses at every level.
/// 2. A matching ask rule asks at every other level, whatever allows the command. A
///    shell session (no command text) is asked about at `full` and `safe` too when
///    there are ask rules: what it will run cannot be read.
/// 3. `full` allows; `safe` allows inside the sandbox, but asks about a command an
///    unsandboxed rule matches (a yes runs it outside; checked before the ask rules,
///    whose question it covers).
/// 4. `ask` allows what an allow rule or a remembered approval covers, and asks about
///    the rest. A shell session always needs asking at `ask`.
///
/// `files`: what the command's words name on disk, for the read-only preset and
/// read-only rules (the edge looks, `crate::files`; with none, a read-only command that
/// names a file is asked about).
pub fn decide(
    policy: &Policy,
    remembered: &Remembered,
    request: Request<'_>,
    files: &Files,
) -> Decision {
    if policy.level == Level::Deny {
        return Decision::Deny(Denied::Level);
    }
    let (Request::Command(command) | Request::Wrapped { inner: command, .. }) = request else {
        return decide_without_text(policy, request);
    };
    if let Request::Wrapped { outer, .. } = request {
        if let Some(found) = policy.deny.find(outer) {
            return Decision::Deny(Denied::Rule(found));
        }
    }
    if let Some(found) = policy.deny.find(command) {
        return Decision::Deny(Denied::Rule(found));
    }
    if let Request::Wrapped {
        execs_gate: true, ..
    } = request
    {
        // The gate it execs asks, under the same settings.
        return Decision::Allow(Allowed::Delegated);
    }
    // Before the ask rules: a question about leaving the sandbox covers what an ask rule
    // would ask too, and one question is asked, not two.
    if policy.level == Level::Safe && command.is_exact() {
        let text = command.as_str();
        if let Some((rule, origin)) = policy
            .unsandboxed
            .find_where(text, |rule| super::runners::check(rule, text).is_ok())
        {
            return Decision::Ask(Asked::Unsandboxed {
                rule: rule.into(),
                origin: origin.clone(),
            });
        }
    }
    if let Request::Wrapped { outer, .. } = request {
        if let Some(found) = policy.ask.find(outer) {
            return Decision::Ask(Asked::Rule(found));
        }
    }
    if let Some(found) = policy.ask.find(command) {
        return Decision::Ask(Asked::Rule(found));
    }
    match policy.level {
        Level::Deny => unreachable!("handled above"),
        Level::Full => Decision::Allow(Allowed::Level),
        Level::Safe => Decision::Allow(Allowed::Sandboxed),
        // A text that is not exactly what the caller sent (invalid UTF-8) matches
        // nothing.
        Level::Ask if !command.is_exact() => Decision::Ask(Asked::Unallowed(Unallowed::Inexact)),
        Level::Ask => decide_at_ask(policy, remembered, command.as_str(), files),
    }
}

/// [`decide`] at level `ask` for exact text that no deny or ask rule matched: what allows
/// it on its own or, in compound mode, part by part; otherwise why nothing does.
fn decide_at_ask(policy: &Policy, remembered: &Remembered, text: &str, files: &Files) -> Decision {
    let (rules, preset) = match alone(policy, remembered, text, &View::here(files)) {
        Ok(allowed) => return Decision::Allow(allowed),
        Err(missed) => missed,
    };
    let unmatchable = super::first_unmatchable_char(text);
    let parts = if policy.compound {
        super::compound::split(text)
    } else {
        None
    };
    let Some(parts) = parts else {
        return Decision::Ask(Asked::Unallowed(match unmatchable {
            None => Unallowed::Simple { rules, preset },
            Some(_) if policy.compound => Unallowed::NotSplit,
            Some(ch) => Unallowed::Char(ch),
        }));
    };
    let mut allowed = Vec::with_capacity(parts.len());
    // After `cd` (or `export HOME=…`) the names of later parts no longer mean what the
    // edge resolved.
    let mut moved = false;
    for part in &parts {
        let view = if moved {
            View::moved(files)
        } else {
            View::here(files)
        };
        match alone(policy, remembered, part, &view) {
            Ok(a) => allowed.push((Box::from(*part), a)),
            Err(_) => {
                return Decision::Ask(Asked::Unallowed(match unmatchable {
                    None => Unallowed::Simple { rules, preset },
                    Some(_) => Unallowed::Part(Some((*part).into())),
                }));
            }
        }
        moved |= super::readonly::files::moves(part);
    }
    if parts.len() > 1 {
        return Decision::Allow(Allowed::Compound { parts: allowed });
    }
    Decision::Ask(Asked::Unallowed(match unmatchable {
        None => Unallowed::Simple { rules, preset },
        Some(_) => Unallowed::Part(None),
    }))
}

/// [`decide`] for a session or an `--version` probe: no text to match.
fn decide_without_text(policy: &Policy, request: Request<'_>) -> Decision {
    if matches!(request, Request::Session)
        && !policy.ask.is_empty()
        && matches!(policy.level, Level::Full | Level::Safe)
    {
        return Decision::Ask(Asked::Rule(AskMatch::Unreadable));
    }
    match policy.level {
        Level::Deny => unreachable!("handled above"),
        Level::Full => Decision::Allow(Allowed::Level),
        Level::Safe => Decision::Allow(Allowed::Sandboxed),
        Level::Ask => match request {
            Request::Session => Decision::Ask(Asked::Unallowed(Unallowed::NoCommand)),
            Request::Info => Decision::Allow(Allowed::Info),
            Request::Command(_) | Request::Wrapped { .. } => {
                unreachable!("decided by decide()")
            }
        },
    }
}

/// The allow rule that allows `text`: the longest that matches it, passing over a rule
/// for a test or build runner when a word after it loads or runs other code
/// ([`super::runners`]), and, with [`Policy::readonly_rules`], a read-only rule when
/// `text` itself is not read-only. `Err` says why none does: the first rule passed over,
/// or that none matches.
fn find_rule<'p>(
    policy: &'p Policy,
    text: &str,
    view: &View<'_>,
) -> Result<(&'p str, Origin), Unmatched> {
    let mut text_reads_only: Option<Result<(), NotReadOnly>> = None;
    let mut passed_over = None;
    let found = policy.allow.find_where(text, |rule| {
        let refused = match super::runners::check(rule, text) {
            Err(refusal) => Some(Unmatched::Runner {
                rule: rule.into(),
                refusal: Box::new(refusal),
            }),
            Ok(()) if policy.readonly_rules && is_read_only_rule(rule) => match text_reads_only
                .get_or_insert_with(|| super::readonly::check_in(text, view).map(drop))
            {
                Ok(()) => None,
                Err(refusal) => Some(Unmatched::ReadOnlyRule {
                    rule: rule.into(),
                    refusal: Box::new(refusal.clone()),
                }),
            },
            Ok(()) => None,
        };
        match refused {
            None => true,
            Some(why) => {
                passed_over.get_or_insert(why);
                false
            }
        }
    });
    found.ok_or_else(|| match passed_over {
        Some(why) => why,
        None if policy.allow.is_empty() => Unmatched::NoRules,
        None => Unmatched::NoMatch,
    })
}

/// Whether an allow rule is a read-only command, by itself (`git diff`, `find`) or with
/// one more operand (`sed -n`, `grep -r`, which need a script or a pattern): its words,
/// or its words and ` p`, pass the read-only preset's checks.
pub(crate) fn is_read_only_rule(rule: &str) -> bool {
    super::readonly::reads_only_as_written(rule)
        || super::readonly::reads_only_as_written(&format!("{rule} p"))
}

/// What allows one simple command's text on its own at `ask`: an allow rule, the
/// read-only preset (when on), or a remembered approval. `Err` says why the allow rules
/// and the preset did not.
fn alone(
    policy: &Policy,
    remembered: &Remembered,
    text: &str,
    view: &View<'_>,
) -> Result<Allowed, (Unmatched, Option<Box<NotReadOnly>>)> {
    let rules = match find_rule(policy, text, view) {
        Ok((rule, origin)) => {
            return Ok(Allowed::Rule {
                rule: rule.into(),
                origin: origin.clone(),
            });
        }
        Err(why) => why,
    };
    let preset = if policy.readonly {
        match super::readonly::check_in(text, view) {
            Ok(entry) => return Ok(Allowed::ReadOnly { entry: entry.name }),
            Err(why) => Some(Box::new(why)),
        }
    } else {
        None
    };
    remembered.allows_text(text).ok_or((rules, preset))
}

#[cfg(test)]
mod tests;
