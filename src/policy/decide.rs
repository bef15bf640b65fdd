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
) -> Result<(&'p str, &'p Origin), Unmatched> {
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
pub fn is_read_only_rule(rule: &str) -> bool {
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
mod tests {
    use super::*;
    use crate::policy::AskMatch;

    fn policy(level: Level, allow: &[&str], deny: &[&str]) -> Policy {
        let mut p = Policy::at(level, Origin::BuiltIn);
        for r in allow {
            p.allow.add(r, Origin::Flag("--allow")).unwrap();
        }
        for r in deny {
            p.deny.add(r, Origin::Flag("--deny")).unwrap();
        }
        p
    }

    fn decide_text(p: &Policy, text: &str) -> Decision {
        decide(
            p,
            &Remembered::new(),
            Request::Command(&CommandText::new(text)),
            &Files::nothing_there(),
        )
    }

    fn is_unallowed(d: &Decision) -> bool {
        matches!(d, Decision::Ask(Asked::Unallowed(_)))
    }

    fn decide_wrapped(p: &Policy, outer: &str, inner: &str, execs_gate: bool) -> Decision {
        decide(
            p,
            &Remembered::new(),
            Request::Wrapped {
                outer: &CommandText::new(outer),
                inner: &CommandText::new(inner),
                execs_gate,
            },
            &Files::nothing_there(),
        )
    }

    /// The reason an ask at level `ask` carries: what was missing, as the decision
    /// found it, so that nothing has to look again to say why.
    fn unallowed(p: &Policy, remembered: &Remembered, request: Request<'_>) -> Unallowed {
        match decide(p, remembered, request, &Files::nothing_there()) {
            Decision::Ask(Asked::Unallowed(why)) => why,
            other => panic!("{request:?}: {other:?}"),
        }
    }

    fn unallowed_text(p: &Policy, text: &str) -> Unallowed {
        unallowed(
            p,
            &Remembered::new(),
            Request::Command(&CommandText::new(text)),
        )
    }

    fn simple(rules: Unmatched) -> Unallowed {
        Unallowed::Simple {
            rules,
            preset: None,
        }
    }

    #[test]
    fn an_ask_because_nothing_allows_it_says_what_was_missing() {
        let none = Remembered::new();
        let p = policy(Level::Ask, &[], &[]);
        assert_eq!(unallowed_text(&p, "ls"), simple(Unmatched::NoRules));
        assert_eq!(unallowed(&p, &none, Request::Session), Unallowed::NoCommand);
        let p = policy(Level::Ask, &["git status"], &[]);
        assert_eq!(unallowed_text(&p, "git push"), simple(Unmatched::NoMatch));
        assert_eq!(
            unallowed(
                &p,
                &none,
                Request::Command(&CommandText::from_bytes(b"git status \xff"))
            ),
            Unallowed::Inexact
        );
        // The first character no allow rule matches, with compound mode off.
        assert_eq!(
            unallowed_text(&p, "git status | head; ls"),
            Unallowed::Char('|')
        );
        assert_eq!(
            unallowed_text(&p, "git status\u{7}"),
            Unallowed::Char('\u{7}')
        );
        // The agent's own command inside a wrapper is what was matched.
        let outer = "source snap && eval 'git push' && pwd -P >| /tmp/claude-0000-cwd";
        assert_eq!(
            unallowed(
                &p,
                &none,
                Request::Wrapped {
                    outer: &CommandText::new(outer),
                    inner: &CommandText::new("git push"),
                    execs_gate: false,
                }
            ),
            simple(Unmatched::NoMatch)
        );
    }

    #[test]
    fn an_ask_in_compound_mode_names_the_part_that_is_not_allowed() {
        let p = with(policy(Level::Ask, &["git status", "ls"], &[]), true, false);
        assert_eq!(
            unallowed_text(&p, "git status && rm -rf x; ls"),
            Unallowed::Part(Some("rm -rf x".into()))
        );
        // The first such part, as the parts run.
        assert_eq!(
            unallowed_text(&p, "ls | wc -l && touch x"),
            Unallowed::Part(Some("wc -l".into()))
        );
        for text in ["git status > out", "(ls) && ls", "ls & ls"] {
            assert_eq!(unallowed_text(&p, text), Unallowed::NotSplit, "{text}");
        }
        // A simple command is a simple command in compound mode too.
        assert_eq!(unallowed_text(&p, "git push"), simple(Unmatched::NoMatch));
        // A part a remembered approval allows is not the one named.
        let mut r = Remembered::new();
        r.remember_command("make");
        assert_eq!(
            unallowed(
                &p,
                &r,
                Request::Command(&CommandText::new("make && ls && make install"))
            ),
            Unallowed::Part(Some("make install".into()))
        );
    }

    #[test]
    fn an_ask_names_the_allow_rule_that_was_passed_over_and_why() {
        // A runner's rule, and an argument that loads other code: the longest rule that
        // matches is the one named.
        let p = policy(Level::Ask, &["make", "make test"], &[]);
        match unallowed_text(&p, "make test SHELL=./x") {
            Unallowed::Simple {
                rules: Unmatched::Runner { rule, refusal },
                preset: None,
            } => {
                assert_eq!(&*rule, "make test");
                assert_eq!(refusal.runner, "make");
                assert_eq!(refusal.word, "SHELL=./x");
            }
            other => panic!("{other:?}"),
        }
        // A read-only rule, and a command that does not only read.
        match unallowed_text(&narrowed(&["git diff"]), "git diff --output=x") {
            Unallowed::Simple {
                rules: Unmatched::ReadOnlyRule { rule, refusal },
                preset: None,
            } => {
                assert_eq!(&*rule, "git diff");
                assert_eq!(refusal.entry(), Some("git diff"));
                assert!(refusal.reason().contains("--output"), "{refusal}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_ask_with_the_preset_on_says_why_the_preset_did_not_allow_it() {
        let p = with(policy(Level::Ask, &["git status"], &[]), false, true);
        match unallowed_text(&p, "sort -o out f") {
            Unallowed::Simple {
                rules: Unmatched::NoMatch,
                preset: Some(refusal),
            } => {
                assert_eq!(refusal.entry(), Some("sort"));
                assert!(refusal.reason().contains("`-o`"), "{refusal}");
            }
            other => panic!("{other:?}"),
        }
        // Shell syntax is the reason, not the preset.
        assert_eq!(unallowed_text(&p, "ls; rm x"), Unallowed::Char(';'));
    }

    #[test]
    fn every_other_decision_names_what_made_it() {
        let none = Remembered::new();
        let files = Files::nothing_there();
        let text = |t: &str| CommandText::new(t);
        let decided =
            |p: &Policy, r: &Remembered, t: &str| decide(p, r, Request::Command(&text(t)), &files);
        let rule = |rule: &str, origin| Allowed::Rule {
            rule: rule.into(),
            origin,
        };
        // Allowed: by the level, the sandbox, a rule and its origin, the preset's entry,
        // compound mode part by part, a remembered command or prefix, a gate run again,
        // a shell asked only for its version.
        let full = policy(Level::Full, &[], &[]);
        assert_eq!(
            decided(&full, &none, "rm x"),
            Decision::Allow(Allowed::Level)
        );
        let safe = policy(Level::Safe, &[], &[]);
        assert_eq!(
            decided(&safe, &none, "rm x"),
            Decision::Allow(Allowed::Sandboxed)
        );
        let mut p = with(policy(Level::Ask, &["git status"], &[]), true, true);
        p.allow
            .add("cargo test", Origin::Env("GATE_ALLOW"))
            .unwrap();
        assert_eq!(
            decided(&p, &none, "cargo test -q"),
            Decision::Allow(rule("cargo test", Origin::Env("GATE_ALLOW")))
        );
        assert_eq!(
            decided(&p, &none, "head -5 f"),
            Decision::Allow(Allowed::ReadOnly { entry: "head" })
        );
        assert_eq!(
            decided(&p, &none, "git status && wc -l f"),
            Decision::Allow(Allowed::Compound {
                parts: vec![
                    (
                        "git status".into(),
                        rule("git status", Origin::Flag("--allow"))
                    ),
                    ("wc -l f".into(), Allowed::ReadOnly { entry: "wc" }),
                ]
            })
        );
        let mut r = Remembered::new();
        r.remember_command("make deploy");
        r.remember_prefix("npm run").unwrap();
        assert_eq!(
            decided(&p, &r, "make deploy"),
            Decision::Allow(Allowed::RememberedCommand)
        );
        assert_eq!(
            decided(&p, &r, "npm run build"),
            Decision::Allow(Allowed::RememberedRule {
                rule: "npm run".into()
            })
        );
        assert_eq!(
            decide(&p, &none, Request::Info, &files),
            Decision::Allow(Allowed::Info)
        );
        let outer = "exec '/usr/lib/gate/bin/bash' -c 'rm x'";
        assert_eq!(
            decide(
                &p,
                &none,
                Request::Wrapped {
                    outer: &text(outer),
                    inner: &text("rm x"),
                    execs_gate: true
                },
                &files
            ),
            Decision::Allow(Allowed::Delegated)
        );
        // Asked: by an ask rule (what it caught), an unsandboxed rule, text too complex
        // to read, a session that cannot be read.
        let mut p = asking(Level::Safe, &[], &[], &["git push"]);
        p.unsandboxed
            .add("make deploy", Origin::Flag("--unsandboxed"))
            .unwrap();
        assert_eq!(
            decided(&p, &none, "ls && git push -f"),
            Decision::Ask(Asked::Rule(AskMatch::Rule {
                rule: "git push".into(),
                origin: Origin::Flag("--ask"),
                found: "git push -f".into(),
            }))
        );
        assert_eq!(
            decided(&p, &none, "make deploy now"),
            Decision::Ask(Asked::Unsandboxed {
                rule: "make deploy".into(),
                origin: Origin::Flag("--unsandboxed"),
            })
        );
        assert_eq!(
            decided(&p, &none, &format!("{}true", "eval ".repeat(20))),
            Decision::Ask(Asked::Rule(AskMatch::TooComplex))
        );
        assert_eq!(
            decide(&p, &none, Request::Session, &files),
            Decision::Ask(Asked::Rule(AskMatch::Unreadable))
        );
        // Denied: by the level, or by a rule (what it caught).
        let p = policy(Level::Ask, &["rm"], &["rm -rf"]);
        assert_eq!(
            decided(&p, &none, "ls; rm -rf /"),
            Decision::Deny(Denied::Rule(DenyMatch::Rule {
                rule: "rm -rf".into(),
                origin: Origin::Flag("--deny"),
                found: "rm -rf /".into(),
            }))
        );
        let p = policy(Level::Deny, &["rm"], &[]);
        assert_eq!(decided(&p, &none, "rm x"), Decision::Deny(Denied::Level));
    }

    #[test]
    fn a_wrapper_is_judged_by_its_inner_command_and_denied_by_either() {
        let outer = "source snap && eval 'ls -l' && pwd -P >| /tmp/claude-0000-cwd";
        let p = policy(Level::Ask, &["ls"], &["pwd", "rm"]);
        // The wrapper's own `pwd` would match the deny rule `pwd`: deny rules see both.
        assert!(matches!(
            decide_wrapped(&p, outer, "ls -l", false),
            Decision::Deny(Denied::Rule(_))
        ));
        let p = policy(Level::Ask, &["ls"], &["rm"]);
        assert!(matches!(
            decide_wrapped(&p, outer, "ls -l", false),
            Decision::Allow(Allowed::Rule { .. })
        ));
        assert!(is_unallowed(&decide_wrapped(&p, outer, "cat x", false)));
        assert!(matches!(
            decide_wrapped(&p, outer, "rm x", false),
            Decision::Deny(Denied::Rule(_))
        ));
    }

    #[test]
    fn a_wrapper_that_runs_gate_again_is_left_to_that_gate_but_never_past_a_deny() {
        let outer =
            "if . 'snap' >/dev/null 2>&1; then :; fi\n\nexec '/usr/lib/gate/bin/bash' -c 'cat x'";
        for level in [Level::Ask, Level::Safe, Level::Full] {
            let p = policy(level, &[], &["rm"]);
            assert_eq!(
                decide_wrapped(&p, outer, "cat x", true),
                Decision::Allow(Allowed::Delegated),
                "{level}"
            );
            assert!(matches!(
                decide_wrapped(&p, outer, "rm -rf x", true),
                Decision::Deny(Denied::Rule(_))
            ));
        }
        let p = policy(Level::Deny, &["cat"], &[]);
        assert_eq!(
            decide_wrapped(&p, outer, "cat x", true),
            Decision::Deny(Denied::Level)
        );
    }

    #[test]
    fn level_deny_refuses_everything_even_allowed_commands() {
        let p = policy(Level::Deny, &["ls"], &[]);
        assert_eq!(decide_text(&p, "ls"), Decision::Deny(Denied::Level));
        assert_eq!(
            decide(
                &p,
                &Remembered::new(),
                Request::Session,
                &Files::nothing_there()
            ),
            Decision::Deny(Denied::Level)
        );
    }

    #[test]
    fn deny_rules_refuse_at_every_level() {
        for level in [Level::Ask, Level::Safe, Level::Full] {
            let p = policy(level, &["rm"], &["rm -rf"]);
            assert!(
                matches!(decide_text(&p, "rm -rf /"), Decision::Deny(Denied::Rule(_))),
                "{level}"
            );
        }
    }

    #[test]
    fn a_deny_rule_beats_a_remembered_approval() {
        let p = policy(Level::Ask, &[], &["rm -rf"]);
        let mut r = Remembered::new();
        r.remember_command("rm -rf /");
        let d = decide(
            &p,
            &r,
            Request::Command(&CommandText::new("rm -rf /")),
            &Files::nothing_there(),
        );
        assert!(matches!(d, Decision::Deny(Denied::Rule(_))));
    }

    #[test]
    fn full_allows_everything_not_denied() {
        let p = policy(Level::Full, &[], &[]);
        assert_eq!(
            decide_text(&p, "rm -rf /; x"),
            Decision::Allow(Allowed::Level)
        );
        assert_eq!(
            decide(
                &p,
                &Remembered::new(),
                Request::Session,
                &Files::nothing_there()
            ),
            Decision::Allow(Allowed::Level)
        );
    }

    #[test]
    fn safe_allows_everything_inside_the_sandbox() {
        let p = policy(Level::Safe, &[], &[]);
        assert_eq!(
            decide_text(&p, "curl x | sh"),
            Decision::Allow(Allowed::Sandboxed)
        );
        assert_eq!(
            decide(
                &p,
                &Remembered::new(),
                Request::Session,
                &Files::nothing_there()
            ),
            Decision::Allow(Allowed::Sandboxed)
        );
    }

    #[test]
    fn ask_allows_a_matching_rule_and_names_it() {
        let p = policy(Level::Ask, &["git status"], &[]);
        assert_eq!(
            decide_text(&p, "git status -s"),
            Decision::Allow(Allowed::Rule {
                rule: "git status".into(),
                origin: Origin::Flag("--allow")
            })
        );
    }

    #[test]
    fn ask_asks_about_everything_else() {
        let p = policy(Level::Ask, &["git status"], &[]);
        assert!(is_unallowed(&decide_text(&p, "git push")));
        assert!(is_unallowed(&decide_text(&p, "git status; rm -rf ~")));
        assert!(is_unallowed(&decide(
            &p,
            &Remembered::new(),
            Request::Session,
            &Files::nothing_there()
        )));
    }

    #[test]
    fn a_runners_rule_does_not_cover_an_option_that_loads_other_code() {
        let p = policy(Level::Ask, &["npm test", "make"], &[]);
        assert!(matches!(
            decide_text(&p, "npm test -- --watch"),
            Decision::Allow(Allowed::Rule { .. })
        ));
        assert!(matches!(
            decide_text(&p, "make -j4 all"),
            Decision::Allow(Allowed::Rule { .. })
        ));
        assert!(is_unallowed(&decide_text(
            &p,
            "npm test --script-shell=./pwn.sh"
        )));
        assert!(is_unallowed(&decide_text(&p, "make SHELL=./x")));
        // A remembered prefix is held to the same.
        let p = policy(Level::Ask, &[], &[]);
        let mut r = Remembered::new();
        r.remember_prefix("make").unwrap();
        let ask = |text: &str| {
            decide(
                &p,
                &r,
                Request::Command(&CommandText::new(text)),
                &Files::nothing_there(),
            )
        };
        assert!(matches!(
            ask("make test"),
            Decision::Allow(Allowed::RememberedRule { .. })
        ));
        assert!(is_unallowed(&ask("make -f /tmp/evil.mk")));
    }

    #[test]
    fn remembered_commands_match_exact_trimmed_text_only() {
        let p = policy(Level::Ask, &[], &[]);
        let mut r = Remembered::new();
        r.remember_command("  npm test ; echo done ");
        let ask = |text: &str| {
            decide(
                &p,
                &r,
                Request::Command(&CommandText::new(text)),
                &Files::nothing_there(),
            )
        };
        assert_eq!(
            ask("npm test ; echo done"),
            Decision::Allow(Allowed::RememberedCommand)
        );
        assert!(is_unallowed(&ask("npm test ; echo done; rm x")));
        assert!(is_unallowed(&ask("npm test")));
    }

    #[test]
    fn remembered_prefixes_follow_the_allow_rule_semantics() {
        let p = policy(Level::Ask, &[], &[]);
        let mut r = Remembered::new();
        r.remember_prefix("npm test").unwrap();
        assert!(r.remember_prefix("npm test; ls").is_err());
        let ask = |text: &str| {
            decide(
                &p,
                &r,
                Request::Command(&CommandText::new(text)),
                &Files::nothing_there(),
            )
        };
        assert_eq!(
            ask("npm test -- --watch"),
            Decision::Allow(Allowed::RememberedRule {
                rule: "npm test".into()
            })
        );
        assert!(is_unallowed(&ask("npm test && rm x")));
    }

    #[test]
    fn inexact_text_never_matches_an_allow_rule_or_a_memory() {
        let p = policy(Level::Ask, &["ls"], &[]);
        let mut r = Remembered::new();
        r.remember_command("ls \u{fffd}");
        let text = CommandText::from_bytes(b"ls \xff");
        assert!(!text.is_exact());
        assert!(is_unallowed(&decide(
            &p,
            &r,
            Request::Command(&text),
            &Files::nothing_there()
        )));
    }

    #[test]
    fn every_level_and_request_kind_has_a_decision() {
        // Exhaustive over the small input space: level × allowed/denied/neither × kind.
        for level in Level::ALL {
            let p = policy(level, &["ok"], &["bad"]);
            for (text, expect_at_ask) in [("ok 1", "allow"), ("bad 1", "deny"), ("other", "ask")] {
                let d = decide_text(&p, text);
                let expected = match (level, text) {
                    (Level::Deny, _) => "deny",
                    (_, "bad 1") => "deny",
                    (Level::Full | Level::Safe, _) => "allow",
                    (Level::Ask, _) => expect_at_ask,
                };
                assert_eq!(d.kind(), expected, "{level} {text}");
            }
        }
    }

    fn asking(level: Level, allow: &[&str], deny: &[&str], ask: &[&str]) -> Policy {
        let mut p = policy(level, allow, deny);
        for r in ask {
            p.ask.add(r, Origin::Flag("--ask")).unwrap();
        }
        p
    }

    fn ask_rule(d: &Decision) -> Option<(&str, &str)> {
        match d {
            Decision::Ask(Asked::Rule(AskMatch::Rule { rule, found, .. })) => Some((rule, found)),
            _ => None,
        }
    }

    #[test]
    fn an_unsandboxed_rule_asks_at_safe_only_and_a_deny_rule_still_wins() {
        let mut p = policy(Level::Safe, &[], &["git push --force"]);
        p.unsandboxed
            .add("git push", Origin::Flag("--unsandboxed"))
            .unwrap();
        p.ask.add("git", Origin::Flag("--ask")).unwrap();
        let asked = |d: Decision| match d {
            Decision::Ask(Asked::Unsandboxed { rule, .. }) => Some(rule.to_string()),
            _ => None,
        };
        // Matched, it asks whether it may leave, and that question covers the ask rule.
        assert_eq!(
            asked(decide_text(&p, "git push origin main")).as_deref(),
            Some("git push")
        );
        // A deny rule wins.
        assert!(matches!(
            decide_text(&p, "git push --force origin"),
            Decision::Deny(_)
        ));
        // Matched as strictly as an allow rule: no shell syntax, only at the start.
        for text in [
            "git push; rm -rf ~",
            "true && git push",
            "git pushx",
            "sh -c 'git push'",
        ] {
            assert_eq!(asked(decide_text(&p, text)), None, "{text}");
        }
        // Not exact text (invalid UTF-8) never leaves.
        let inexact = CommandText::inexact("git push origin \u{fffd}");
        assert!(!matches!(
            decide(
                &p,
                &Remembered::new(),
                Request::Command(&inexact),
                &Files::nothing_there()
            ),
            Decision::Ask(Asked::Unsandboxed { .. })
        ));
        // At the other levels the rule changes nothing.
        for level in [Level::Full, Level::Ask] {
            p.level = level;
            assert_eq!(asked(decide_text(&p, "git push origin")), None, "{level}");
        }
        p.level = Level::Deny;
        assert!(matches!(decide_text(&p, "git push"), Decision::Deny(_)));
        // Without an ask rule, what it does not match runs inside the sandbox.
        let mut p = policy(Level::Safe, &[], &[]);
        p.unsandboxed
            .add_exact("make deploy", Origin::BuiltIn)
            .unwrap();
        assert!(asked(decide_text(&p, "make deploy")).is_some());
        assert_eq!(
            decide_text(&p, "make deploy --force"),
            Decision::Allow(Allowed::Sandboxed)
        );
    }

    #[test]
    fn an_ask_rule_asks_at_every_level_that_runs_commands() {
        for level in [Level::Ask, Level::Safe, Level::Full] {
            let p = asking(level, &[], &[], &["git push"]);
            let d = decide_text(&p, "git push origin main");
            assert_eq!(
                ask_rule(&d),
                Some(("git push", "git push origin main")),
                "{level}: {d:?}"
            );
            // What no ask rule matches is decided as before.
            let d = decide_text(&p, "git status");
            let expected = match level {
                Level::Ask => Decision::Ask(Asked::Unallowed(Unallowed::Simple {
                    rules: Unmatched::NoRules,
                    preset: None,
                })),
                Level::Safe => Decision::Allow(Allowed::Sandboxed),
                _ => Decision::Allow(Allowed::Level),
            };
            assert_eq!(d, expected, "{level}");
        }
        // Level deny runs nothing and asks nothing.
        let p = asking(Level::Deny, &[], &[], &["git push"]);
        assert_eq!(decide_text(&p, "git push"), Decision::Deny(Denied::Level));
    }

    #[test]
    fn an_ask_rule_comes_before_an_allow_rule_and_after_a_deny_rule() {
        let p = asking(Level::Ask, &["git"], &["git push --force"], &["git push"]);
        assert_eq!(
            ask_rule(&decide_text(&p, "git push")),
            Some(("git push", "git push"))
        );
        assert!(matches!(
            decide_text(&p, "git status"),
            Decision::Allow(Allowed::Rule { .. })
        ));
        for level in [Level::Ask, Level::Safe, Level::Full] {
            let p = asking(level, &["git"], &["git push --force"], &["git push"]);
            assert!(
                matches!(
                    decide_text(&p, "git push --force"),
                    Decision::Deny(Denied::Rule(_))
                ),
                "{level}"
            );
        }
    }

    #[test]
    fn nothing_that_allows_unasked_stands_in_for_an_ask_rule() {
        // The read-only preset, compound mode and remembered approvals all give way.
        let mut p = asking(
            Level::Ask,
            &["git status", "cat"],
            &[],
            &["cat", "git push"],
        );
        p.readonly = true;
        p.compound = true;
        assert!(ask_rule(&decide_text(&p, "cat README")).is_some());
        assert_eq!(
            ask_rule(&decide_text(&p, "git status && git push")),
            Some(("git push", "git push"))
        );
        let mut r = Remembered::new();
        r.remember_command("git push");
        r.remember_prefix("git").unwrap();
        let d = decide(
            &p,
            &r,
            Request::Command(&CommandText::new("git push")),
            &Files::nothing_there(),
        );
        assert!(ask_rule(&d).is_some(), "{d:?}");
    }

    #[test]
    fn an_ask_rule_looks_at_an_agents_wrapper_and_its_command_but_leaves_a_gate_it_execs_to_ask() {
        let outer = "source snap && eval 'git push' && pwd -P >| /tmp/claude-0000-cwd";
        let p = asking(Level::Full, &[], &[], &["git push"]);
        assert!(ask_rule(&decide_wrapped(&p, outer, "git push", false)).is_some());
        let p = asking(Level::Full, &[], &[], &["pwd"]);
        assert!(ask_rule(&decide_wrapped(&p, outer, "ls", false)).is_some());
        let outer = "if . 'snap' >/dev/null 2>&1; then :; fi\n\nexec '/usr/lib/gate/bin/bash' -c 'git push'";
        let p = asking(Level::Full, &[], &[], &["git push"]);
        assert_eq!(
            decide_wrapped(&p, outer, "git push", true),
            Decision::Allow(Allowed::Delegated)
        );
    }

    #[test]
    fn a_shell_session_is_asked_about_at_full_and_safe_only_when_there_are_ask_rules() {
        let session =
            |p: &Policy, request| decide(p, &Remembered::new(), request, &Files::nothing_there());
        for level in [Level::Safe, Level::Full] {
            let p = asking(level, &[], &[], &["git push"]);
            assert_eq!(
                session(&p, Request::Session),
                Decision::Ask(Asked::Rule(AskMatch::Unreadable)),
                "{level}"
            );
            // `--version` runs nothing.
            assert!(matches!(session(&p, Request::Info), Decision::Allow(_)));
            let p = asking(level, &[], &[], &[]);
            assert!(
                matches!(session(&p, Request::Session), Decision::Allow(_)),
                "{level}"
            );
        }
        let p = asking(Level::Ask, &[], &[], &["git push"]);
        assert!(is_unallowed(&session(&p, Request::Session)));
    }

    #[test]
    fn text_that_is_too_complex_to_read_is_asked_about() {
        let p = asking(Level::Full, &[], &[], &["git push"]);
        let deep = format!("{}true", "eval ".repeat(20));
        assert_eq!(
            decide_text(&p, &deep),
            Decision::Ask(Asked::Rule(AskMatch::TooComplex))
        );
    }

    proptest::proptest! {
        /// Deny beats ask beats everything else: the order holds for any mix of rules.
        #[test]
        fn deny_then_ask_then_the_rest(
            level in proptest::sample::select(Level::ALL.to_vec()),
            allow in proptest::collection::vec(proptest::sample::select(vec!["git", "git push", "ls", "cat"]), 0..3),
            deny in proptest::collection::vec(proptest::sample::select(vec!["git push --force", "rm", "cat -n"]), 0..2),
            ask in proptest::collection::vec(proptest::sample::select(vec!["git push", "cat", "rm -rf"]), 0..3),
            text in proptest::sample::select(vec![
                "git push", "git push --force", "git status", "ls -l", "cat -n f", "cat f",
                "rm -rf x", "rm x", "ls && git push", "sh -c 'cat f'",
            ]),
        ) {
            let p = asking(level, &allow, &deny, &ask);
            let d = decide_text(&p, text);
            let c = CommandText::new(text);
            if level == Level::Deny {
                proptest::prop_assert_eq!(d, Decision::Deny(Denied::Level));
            } else if p.deny.find(&c).is_some() {
                proptest::prop_assert!(matches!(d, Decision::Deny(Denied::Rule(_))), "{:?}", d);
            } else if p.ask.find(&c).is_some() {
                proptest::prop_assert!(matches!(d, Decision::Ask(Asked::Rule(_))), "{:?}", d);
            } else {
                let without = asking(level, &allow, &deny, &[]);
                proptest::prop_assert_eq!(d, decide_text(&without, text));
            }
        }
    }

    fn with(p: Policy, compound: bool, readonly: bool) -> Policy {
        Policy {
            compound,
            readonly,
            ..p
        }
    }

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

    fn narrowed(allow: &[&str]) -> Policy {
        Policy {
            readonly_rules: true,
            ..policy(Level::Ask, allow, &[])
        }
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
                        || super::super::readonly::read_only(&text, &Files::nothing_there())
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
}
