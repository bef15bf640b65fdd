//! The shared, pure part of an import: every rule a reader gave checked with gate's own
//! matcher, the promise checked (nothing a source refused or asked about becomes
//! allowed), the rules sorted into gate's layers, the file gate writes, and the table the
//! person reads. No files, environment or terminals here.

use std::fmt::Write as _;
use std::path::Path;

use super::{Entry, GateRule, ImportError, Outcome, RuleKind, Scope, Source};
use crate::policy::Alone;

/// Which of gate's layers an imported rule goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    /// The system layer's drop-in directory: an administrator's rules.
    System,
    /// The user layer's drop-in directory: the person's own rules.
    User,
}

/// A rule to write, with where its source was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    pub rule: GateRule,
    pub from: Source,
}

/// What an import would do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Every rule found, with what became of it (project allow rules the person did not
    /// accept are `Dropped` here, whatever the reader said).
    pub entries: Vec<Entry>,
    pub system: Vec<Planned>,
    pub user: Vec<Planned>,
}

impl Plan {
    /// For a user who cannot write the system layer: the administrator's deny and ask
    /// rules move to the user layer (they only tighten, which even a lock allows); their
    /// allow rules are taken out and returned, to be left to root. Also returns how many
    /// rules moved.
    pub fn without_the_system_layer(&mut self) -> (usize, Vec<Planned>) {
        let mut moved = 0;
        let mut allows = Vec::new();
        for planned in std::mem::take(&mut self.system) {
            if planned.rule.kind == RuleKind::Allow {
                allows.push(planned);
            } else if !self.user.iter().any(|p| p.rule == planned.rule) {
                self.user.push(planned);
                moved += 1;
            }
        }
        (moved, allows)
    }
}

/// The person's choices that change a plan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Choices {
    /// Import a project's allow rules too (`--project`).
    pub project: bool,
}

/// The kind gate's matcher checks a rule as.
fn matcher_kind(rule: &GateRule) -> RuleKind {
    match rule.kind {
        RuleKind::Allow if rule.exact => RuleKind::AllowExact,
        kind => kind,
    }
}

fn error(source: &Source, why: String) -> ImportError {
    ImportError {
        path: source.path.clone(),
        line: Some(source.line),
        why,
    }
}

/// The rule an outcome writes, if any.
pub fn written(outcome: &Outcome) -> Option<&GateRule> {
    match outcome {
        Outcome::Imported(rule)
        | Outcome::Narrowed { rule, .. }
        | Outcome::Broadened { rule, .. }
        | Outcome::Asked { rule, .. } => Some(rule),
        Outcome::Dropped { .. } => None,
    }
}

/// Check one entry against the promise and gate's matcher: the rule is valid as its
/// kind, its examples hold, and its kind never lets through what the source held back
/// (an allow stays an allow or becomes an ask; a deny stays a deny; an ask becomes an ask
/// or a deny; a deny or ask is never narrowed or dropped for the shell).
fn check(entry: &Entry) -> Result<(), ImportError> {
    let source = &entry.source;
    let fail = |why: String| Err(error(source, why));
    let consistent = match (&entry.outcome, entry.said) {
        (Outcome::Dropped { .. }, _) => true,
        (Outcome::Imported(r), said) => r.kind == said,
        (Outcome::Narrowed { rule, .. }, RuleKind::Allow) => rule.kind == RuleKind::Allow,
        (Outcome::Asked { rule, .. }, RuleKind::Allow) => rule.kind == RuleKind::Ask,
        (Outcome::Broadened { rule, .. }, RuleKind::Deny) => rule.kind == RuleKind::Deny,
        (Outcome::Broadened { rule, .. }, RuleKind::Ask) => {
            matches!(rule.kind, RuleKind::Ask | RuleKind::Deny)
        }
        _ => false,
    };
    if !consistent {
        return fail(format!(
            "the importer turned this {} rule into {}, which could let through what it held \
             back; nothing was written (a bug in gate: please report it)",
            said_word(entry.said),
            outcome_word(&entry.outcome)
        ));
    }
    let Some(rule) = written(&entry.outcome) else {
        return Ok(());
    };
    if rule.exact && rule.kind != RuleKind::Allow {
        return fail("only an allow rule can be exact".into());
    }
    let alone = match Alone::new(matcher_kind(rule), &rule.text) {
        Ok(alone) => alone,
        Err(e) => {
            return fail(format!(
                "gate cannot take `{}` as a rule: {e}",
                rule.text.escape_debug()
            ));
        }
    };
    for (example, expect) in &rule.examples {
        alone
            .check(&rule.text, example, *expect)
            .or_else(|why| fail(format!("gate's matcher disagrees with the source: {why}")))?;
    }
    Ok(())
}

/// The never-widening check, through gate's own decision: the whole imported policy
/// (every rule written, both layers), at each level that runs commands, must not allow
/// what a source's deny or ask rule matched: the rule's own words, with an argument,
/// and the examples the source gave it to match.
fn never_widens(entries: &[Entry]) -> Result<(), ImportError> {
    use crate::policy::{
        AllowRules, AskRules, CommandText, Decision, DenyRules, Level, Origin, Policy, Remembered,
        Request, decide, readonly::Files,
    };
    let mut allow = AllowRules::new();
    let mut deny = DenyRules::new();
    let mut ask = AskRules::new();
    for entry in entries {
        let Some(rule) = written(&entry.outcome) else {
            continue;
        };
        // Each rule was validated by `check`.
        let _ = match (rule.kind, rule.exact) {
            (RuleKind::Allow, true) => allow.add_exact(&rule.text, Origin::BuiltIn),
            (RuleKind::Allow | RuleKind::AllowExact, _) => allow.add(&rule.text, Origin::BuiltIn),
            (RuleKind::Deny, _) => deny.add(&rule.text, Origin::BuiltIn),
            (RuleKind::Ask, _) => ask.add(&rule.text, Origin::BuiltIn),
        };
    }
    let files = Files::new(Vec::new());
    for level in [Level::Ask, Level::Safe, Level::Full] {
        let policy = Policy {
            allow: allow.clone(),
            deny: deny.clone(),
            ask: ask.clone(),
            // The switches that let more through, on: the promise holds with them too.
            compound: true,
            readonly: true,
            ..Policy::at(level, Origin::BuiltIn)
        };
        for entry in entries {
            if entry.said == RuleKind::Allow {
                continue;
            }
            let Some(rule) = written(&entry.outcome) else {
                continue;
            };
            let probes = [rule.text.clone(), format!("{} x", rule.text)]
                .into_iter()
                .chain(
                    rule.examples
                        .iter()
                        .filter(|(_, e)| *e == super::Expect::Match)
                        .map(|(text, _)| text.clone()),
                );
            for probe in probes {
                let text = CommandText::new(probe.as_str());
                let decision = decide(&policy, &Remembered::new(), Request::Command(&text), &files);
                if matches!(decision, Decision::Allow(_)) {
                    return Err(error(
                        &entry.source,
                        format!(
                            "the imported rules would allow `{}` at level {level}, which this \
                             {} rule holds back; nothing was written (a bug in gate: please \
                             report it)",
                            probe.escape_debug(),
                            said_word(entry.said)
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Check every entry and sort the rules into layers.
pub fn plan(entries: Vec<Entry>, choices: Choices) -> Result<Plan, ImportError> {
    for entry in &entries {
        check(entry)?;
    }
    never_widens(&entries)?;
    let mut plan = Plan::default();
    for mut entry in entries {
        let project = matches!(entry.scope, Scope::Project | Scope::Local);
        if project
            && entry.said == RuleKind::Allow
            && !choices.project
            && written(&entry.outcome).is_some()
        {
            entry.outcome = Outcome::Dropped {
                why: "a project's allow rule: imported only with --project, since anyone \
                      who can commit to the repository wrote it"
                    .into(),
            };
        }
        if let Some(rule) = written(&entry.outcome) {
            let layer = match entry.scope {
                Scope::Managed => &mut plan.system,
                Scope::User | Scope::Project | Scope::Local => &mut plan.user,
            };
            let planned = Planned {
                rule: rule.clone(),
                from: entry.source.clone(),
            };
            if !layer.iter().any(|p| p.rule == planned.rule) {
                layer.push(planned);
            }
        }
        plan.entries.push(entry);
    }
    Ok(plan)
}

/// The configuration file for one layer's rules: a header saying what wrote it, then
/// `allow`, `ask` and `deny`, each rule a table with `from` (and `exact`). A source's
/// examples were checked by [`plan`] and are not written: every command loads this file,
/// and the examples would cost each one their check again.
pub fn toml(agent: &str, rules: &[Planned], sources: &[&Path]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Written by `gate import {agent}` from the rules below; the next import replaces \
         this file.\n# Put rules of your own in gate's configuration file, not here."
    );
    for path in sources {
        let _ = writeln!(out, "#   {}", path.display());
    }
    for (key, kind) in [
        ("allow", RuleKind::Allow),
        ("ask", RuleKind::Ask),
        ("deny", RuleKind::Deny),
    ] {
        let _ = writeln!(out, "{key} = [");
        for planned in rules.iter().filter(|p| p.rule.kind == kind) {
            let rule = &planned.rule;
            let _ = write!(
                out,
                "  {{ rule = {}",
                crate::config::toml_string(&rule.text)
            );
            if rule.exact {
                out.push_str(", exact = true");
            }
            let _ = writeln!(
                out,
                ", from = {} }},",
                crate::config::toml_string(&planned.from.to_string())
            );
        }
        out.push_str("]\n");
    }
    out
}

fn said_word(kind: RuleKind) -> &'static str {
    match kind {
        RuleKind::Allow | RuleKind::AllowExact => "allow",
        RuleKind::Deny => "deny",
        RuleKind::Ask => "ask",
    }
}

fn outcome_word(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Imported(_) => "imported",
        Outcome::Narrowed { .. } => "narrowed",
        Outcome::Broadened { .. } => "broadened",
        Outcome::Asked { .. } => "asked",
        Outcome::Dropped { .. } => "dropped",
    }
}

/// One line's text for a gate rule: `allow npm run test`, `allow git status (exact)`.
fn rule_words(rule: &GateRule) -> String {
    format!(
        "{} {}{}",
        said_word(rule.kind),
        rule.text,
        if rule.exact { " (exact)" } else { "" }
    )
}

/// The table: one block per rule found, with what became of it and why, then the counts.
pub fn table(plan: &Plan) -> String {
    let mut out = String::new();
    for entry in &plan.entries {
        let what = outcome_word(&entry.outcome);
        let scope = match entry.scope {
            Scope::Managed => " (managed)",
            Scope::User => "",
            Scope::Project => " (project)",
            Scope::Local => " (project, local)",
        };
        let _ = writeln!(
            out,
            "{what:<9}  {} {}{scope}\n           at {}",
            said_word(entry.said),
            entry.source.text,
            entry.source
        );
        match &entry.outcome {
            Outcome::Imported(rule) => {
                let _ = writeln!(out, "           as {}", rule_words(rule));
            }
            Outcome::Narrowed { rule, why }
            | Outcome::Broadened { rule, why }
            | Outcome::Asked { rule, why } => {
                let _ = writeln!(out, "           as {}: {why}", rule_words(rule));
            }
            Outcome::Dropped { why } => {
                let _ = writeln!(out, "           {why}");
            }
        }
    }
    let count = |word: &str| {
        plan.entries
            .iter()
            .filter(|e| outcome_word(&e.outcome) == word)
            .count()
    };
    let _ = writeln!(
        out,
        "{} rules found: {} imported, {} narrowed, {} broadened, {} asked, {} dropped",
        plan.entries.len(),
        count("imported"),
        count("narrowed"),
        count("broadened"),
        count("asked"),
        count("dropped")
    );
    out
}

#[cfg(test)]
mod tests {
    use super::super::Expect;
    use super::*;
    use std::path::PathBuf;

    fn source(line: u32) -> Source {
        Source {
            path: PathBuf::from("/h/s.json"),
            line,
            text: "x".into(),
        }
    }

    fn rule(kind: RuleKind, text: &str) -> GateRule {
        GateRule::new(kind, text, false)
    }

    fn entry(scope: Scope, said: RuleKind, outcome: Outcome) -> Entry {
        Entry {
            source: source(3),
            scope,
            said,
            outcome,
        }
    }

    #[test]
    fn a_deny_turned_into_an_allow_is_refused_as_a_bug() {
        for outcome in [
            Outcome::Imported(rule(RuleKind::Allow, "rm")),
            Outcome::Narrowed {
                rule: rule(RuleKind::Deny, "rm -rf"),
                why: String::new(),
            },
            Outcome::Broadened {
                rule: rule(RuleKind::Ask, "rm"),
                why: String::new(),
            },
        ] {
            let e = plan(
                vec![entry(Scope::User, RuleKind::Deny, outcome.clone())],
                Choices::default(),
            )
            .unwrap_err();
            assert!(e.why.contains("a bug in gate"), "{outcome:?}: {e}");
        }
        let ask_as_deny = Outcome::Broadened {
            rule: rule(RuleKind::Deny, "git push"),
            why: String::new(),
        };
        assert!(
            plan(
                vec![entry(Scope::User, RuleKind::Ask, ask_as_deny)],
                Choices::default()
            )
            .is_ok()
        );
    }

    #[test]
    fn the_whole_imported_policy_is_checked_through_gates_decision() {
        // An allow that the entry's own check would have caught, given to the decision
        // check alone: the rule's words would be allowed at level ask.
        let widened = entry(
            Scope::User,
            RuleKind::Deny,
            Outcome::Imported(rule(RuleKind::Allow, "rm -rf")),
        );
        let e = never_widens(&[widened]).unwrap_err();
        assert!(e.why.contains("would allow `rm -rf` at level ask"), "{e}");
        // An ask source kept as an ask beside an allow of the same words: asked, not
        // allowed, at every level.
        let entries = [
            entry(
                Scope::User,
                RuleKind::Allow,
                Outcome::Imported(rule(RuleKind::Allow, "git")),
            ),
            entry(
                Scope::User,
                RuleKind::Ask,
                Outcome::Imported(rule(RuleKind::Ask, "git push")),
            ),
        ];
        assert!(never_widens(&entries).is_ok());
    }

    #[test]
    fn an_example_gate_disagrees_with_fails_the_import() {
        let mut r = rule(RuleKind::Deny, "git push");
        r.examples = vec![("git push origin".into(), Expect::Match)];
        let ok = entry(Scope::User, RuleKind::Deny, Outcome::Imported(r.clone()));
        assert!(plan(vec![ok], Choices::default()).is_ok());
        r.examples = vec![("git pull".into(), Expect::Match)];
        let bad = entry(Scope::User, RuleKind::Deny, Outcome::Imported(r));
        let e = plan(vec![bad], Choices::default()).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("/h/s.json:3: gate's matcher disagrees"),
            "{e}"
        );
        let mut exact = rule(RuleKind::Allow, "git status");
        exact.exact = true;
        exact.examples = vec![("git status -s".into(), Expect::NotMatch)];
        let ok = entry(Scope::User, RuleKind::Allow, Outcome::Imported(exact));
        assert!(plan(vec![ok], Choices::default()).is_ok());
    }

    #[test]
    fn project_allow_rules_need_the_persons_word_and_managed_rules_go_to_the_system() {
        let allow = Outcome::Imported(rule(RuleKind::Allow, "make"));
        let deny = Outcome::Imported(rule(RuleKind::Deny, "rm"));
        let entries = vec![
            entry(Scope::Project, RuleKind::Allow, allow.clone()),
            entry(Scope::Local, RuleKind::Deny, deny.clone()),
            entry(Scope::Managed, RuleKind::Deny, deny.clone()),
        ];
        let p = plan(entries.clone(), Choices::default()).unwrap();
        assert!(matches!(p.entries[0].outcome, Outcome::Dropped { .. }));
        assert_eq!(p.user.len(), 1);
        assert_eq!(p.user[0].rule, rule(RuleKind::Deny, "rm"));
        assert_eq!(p.system.len(), 1);
        let p = plan(entries, Choices { project: true }).unwrap();
        assert_eq!(p.user.len(), 2);
    }

    #[test]
    fn without_root_the_administrators_denies_move_to_the_user_and_allows_wait() {
        let entries = vec![
            entry(
                Scope::Managed,
                RuleKind::Deny,
                Outcome::Imported(rule(RuleKind::Deny, "rm")),
            ),
            entry(
                Scope::Managed,
                RuleKind::Ask,
                Outcome::Imported(rule(RuleKind::Ask, "git push")),
            ),
            entry(
                Scope::Managed,
                RuleKind::Allow,
                Outcome::Imported(rule(RuleKind::Allow, "make")),
            ),
            entry(
                Scope::User,
                RuleKind::Deny,
                Outcome::Imported(rule(RuleKind::Deny, "rm")),
            ),
        ];
        let mut p = plan(entries, Choices::default()).unwrap();
        assert_eq!(p.system.len(), 3);
        let (moved, allows) = p.without_the_system_layer();
        assert_eq!(moved, 1, "`rm` was in the user layer already");
        assert!(p.system.is_empty());
        let user: Vec<_> = p.user.iter().map(|p| p.rule.text.as_str()).collect();
        assert_eq!(user, ["rm", "git push"]);
        assert_eq!(allows.len(), 1);
        assert_eq!(allows[0].rule, rule(RuleKind::Allow, "make"));
    }

    #[test]
    fn the_file_is_gates_own_format_with_where_each_rule_came_from() {
        let mut exact = rule(RuleKind::Allow, "git status");
        exact.exact = true;
        let rules = [
            Planned {
                rule: exact,
                from: source(4),
            },
            Planned {
                rule: rule(RuleKind::Deny, "say \"hi\""),
                from: source(9),
            },
        ];
        let text = toml("claude", &rules, &[Path::new("/h/s.json")]);
        assert!(text.contains(
            "allow = [\n  { rule = \"git status\", exact = true, from = \"/h/s.json:4\" },\n]"
        ));
        assert!(
            text.contains("deny = [\n  { rule = \"say \\\"hi\\\"\", from = \"/h/s.json:9\" },\n]")
        );
        crate::config::parse_file(
            Path::new("/x/import-claude.toml"),
            &text,
            crate::config::FileKind::User,
            None,
        )
        .unwrap();
    }
}
