//! Gemini CLI's policy files (`[[rule]]` tables in `*.toml` under its policy
//! directories) read as gate rules. Pure: the files' text in, [`Entry`]s out.
//!
//! Only rules for the shell tool (`toolName = "run_shell_command"`, or `"*"`) are about
//! commands; the rest are dropped as such. Of those:
//!
//! - `commandPrefix = "git"`: Gemini CLI (0.61, `buildArgsPatterns`) matches the command
//!   text starting with `git` followed by white space, a double quote or the end. gate's
//!   rule `git` matches the word `git` as the shell reads it. As an allow that is a
//!   subset (narrowed: Gemini also allowed `git"k"`, which runs `gitk`, and releases
//!   before March 2026 allowed `gitk` itself). As a deny or ask it misses exactly that
//!   quote spelling of a longer program name, so the import stops there unless the
//!   person accepts gate's whole-word reading (`--whole-words`), and the table says so.
//! - `commandRegex`, `argsPattern`: an allow is dropped (gate asks for those commands at
//!   level `ask`); a deny or ask stops the import (no rule of gate's is provably broader).
//! - no command condition: every command; an allow is dropped (that is level `full`), a
//!   deny or ask stops the import.
//! - conditions gate has no counterpart for (`modes`, `interactive`, `subagent`,
//!   `toolAnnotations`, keys gate does not know): an allow that holds only under them is
//!   dropped (one that holds in Gemini's default interactive mode is kept); a deny or
//!   ask loses them and so refuses more (broadened).
//!
//! Priorities and tiers: Gemini CLI lets the highest-priority matching rule decide, so a
//! higher allow can override a lower deny. gate always lets a deny (then an ask) win over
//! an allow, so importing both can only refuse or ask more than Gemini did, never allow
//! more: the order needs no translation, and nothing Gemini denied becomes allowed.

use std::path::{Path, PathBuf};

use toml::de::{DeTable, DeValue};

use super::{Entry, GateRule, ImportError, Outcome, RuleKind, Scope, Source};

/// The shell tool's name in Gemini CLI.
const SHELL_TOOL: &str = "run_shell_command";

/// How the person asked Gemini's prefixes to be read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// Accept gate's whole-word reading of a deny or ask rule's `commandPrefix`.
    pub whole_words: bool,
}

/// Read Gemini CLI policy files: (path, scope, text) each.
pub fn read(files: &[(PathBuf, Scope, String)]) -> Result<Vec<Entry>, ImportError> {
    read_with(files, Options::default())
}

/// [`read`], with the person's choices.
pub fn read_with(
    files: &[(PathBuf, Scope, String)],
    options: Options,
) -> Result<Vec<Entry>, ImportError> {
    let mut entries = Vec::new();
    for (path, scope, text) in files {
        read_file(path, *scope, text, options, &mut entries)?;
    }
    Ok(entries)
}

fn read_file(
    path: &Path,
    scope: Scope,
    text: &str,
    options: Options,
    entries: &mut Vec<Entry>,
) -> Result<(), ImportError> {
    let lines = crate::config::Lines::new(text);
    let error = |line: Option<u32>, why: String| ImportError {
        path: path.to_owned(),
        line,
        why,
    };
    let table = DeTable::parse(text).map_err(|e| {
        let line = e.span().map(|s| lines.line_of(s.start));
        error(
            line,
            format!(
                "not a policy file as Gemini CLI reads it: {}",
                e.message().lines().next().unwrap_or("invalid TOML").trim()
            ),
        )
    })?;
    let Some(rules) = table.get_ref().get("rule") else {
        return Ok(());
    };
    let Some(rules) = rules.get_ref().as_array() else {
        return Err(error(
            Some(lines.line_of(rules.span().start)),
            "`rule` is not an array of tables ([[rule]])".into(),
        ));
    };
    for item in rules.iter() {
        let line = lines.line_of(item.span().start);
        let Some(rule) = item.get_ref().as_table() else {
            return Err(error(Some(line), "a `rule` that is not a table".into()));
        };
        // The rule as written, on one line: each key with its value's own text.
        let mut keys: Vec<_> = rule.iter().collect();
        keys.sort_by_key(|(k, _)| k.span().start);
        let source_text = keys
            .into_iter()
            .map(|(k, v)| {
                let value = text.get(v.span()).unwrap_or("…").replace('\n', " ");
                format!("{} = {value}", k.get_ref())
            })
            .collect::<Vec<_>>()
            .join("; ");
        let source = Source {
            path: path.to_owned(),
            line,
            text: source_text,
        };
        let read = read_rule(rule, options).map_err(|why| error(Some(line), why))?;
        for (said, outcome) in read {
            entries.push(Entry {
                source: source.clone(),
                scope,
                said,
                outcome,
            });
        }
    }
    Ok(())
}

/// The strings of a value that is a string or an array of strings.
fn strings(value: &DeValue<'_>, key: &str) -> Result<Vec<String>, String> {
    if let Some(s) = value.as_str() {
        return Ok(vec![s.to_owned()]);
    }
    let Some(list) = value.as_array() else {
        return Err(format!(
            "`{key}` is neither a string nor an array of strings"
        ));
    };
    list.iter()
        .map(|v| {
            v.get_ref()
                .as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("`{key}` holds something other than a string"))
        })
        .collect()
}

/// What one `[[rule]]` says and becomes: one entry per command prefix, else one.
fn read_rule(rule: &DeTable<'_>, options: Options) -> Result<Vec<(RuleKind, Outcome)>, String> {
    let get = |key: &str| rule.get(key).map(|v| v.get_ref());
    let said = match get("decision").and_then(DeValue::as_str) {
        Some("allow") => RuleKind::Allow,
        Some("deny") => RuleKind::Deny,
        Some("ask_user") => RuleKind::Ask,
        Some(other) => {
            return Err(format!(
                "`decision = \"{}\"` is not allow, deny or ask_user",
                other.escape_debug()
            ));
        }
        None => return Err("the rule has no `decision` (Gemini CLI requires one)".into()),
    };
    if get("priority").and_then(DeValue::as_integer).is_none() {
        return Err("the rule has no integer `priority` (Gemini CLI requires one)".into());
    }
    let tools = match get("toolName") {
        Some(v) => strings(v, "toolName")?,
        None => return Err("the rule has no `toolName` (Gemini CLI requires one)".into()),
    };
    let one = |outcome| Ok(vec![(said, outcome)]);
    let command_condition = get("commandPrefix").is_some() || get("commandRegex").is_some();
    if command_condition
        && said == RuleKind::Allow
        && (get("toolName").and_then(DeValue::as_str) != Some(SHELL_TOOL)
            || get("argsPattern").is_some()
            || (get("commandPrefix").is_some() && get("commandRegex").is_some()))
    {
        // Gemini CLI reports such a rule as invalid; whether it then applies it is not
        // something to bet an allow on.
        return one(Outcome::Dropped {
            why: "commandPrefix or commandRegex needs toolName = \"run_shell_command\" \
                  alone and no other command condition; Gemini CLI reports this rule as \
                  invalid"
                .into(),
        });
    }
    if get("mcpName").is_some() || !tools.iter().any(|t| t == SHELL_TOOL || t == "*") {
        return one(Outcome::Dropped {
            why: format!("not a shell rule (the tool {})", tools.join(", ")),
        });
    }

    // Conditions gate has no counterpart for.
    let mut only_when = Vec::new();
    for (key, value) in rule.iter() {
        let key: &str = key.get_ref();
        let value = value.get_ref();
        match key {
            "toolName" | "decision" | "priority" | "commandPrefix" | "commandRegex"
            | "argsPattern" | "mcpName" | "denyMessage" | "deny_message" | "allowRedirection"
            | "allow_redirection" => {}
            "modes" => {
                let modes = strings(value, key)?;
                // An allow that holds in the default mode is kept; any mode list limits
                // a deny or ask, so gate's always-on rule is broader.
                let in_default = modes.iter().any(|m| m == "default");
                if !modes.is_empty() && (!in_default || said != RuleKind::Allow) {
                    only_when.push(format!("only in the modes {}", modes.join(", ")));
                }
            }
            "interactive" => match value.as_bool() {
                Some(false) => only_when.push("only in non-interactive sessions".into()),
                Some(true) if said != RuleKind::Allow => {
                    only_when.push("only in interactive sessions".into());
                }
                Some(true) => {}
                None => return Err("`interactive` is not true or false".into()),
            },
            "subagent" => only_when.push("only for one subagent".into()),
            "toolAnnotations" => only_when.push("only for some tool annotations".into()),
            other => only_when.push(format!("under `{other}`, which gate does not know")),
        }
    }
    if said == RuleKind::Allow && !only_when.is_empty() {
        return one(Outcome::Dropped {
            why: format!("it allows {}", only_when.join("; ")),
        });
    }
    let broadened_by_conditions = (!only_when.is_empty()).then(|| {
        format!(
            "Gemini CLI applied it {}; gate applies it always",
            only_when.join("; ")
        )
    });

    if get("commandRegex").is_some() || get("argsPattern").is_some() {
        return match said {
            RuleKind::Allow => one(Outcome::Dropped {
                why: "a regular expression: gate's rules are word prefixes; gate asks for \
                      these commands at level ask"
                    .into(),
            }),
            _ => Err(
                "a regular expression (commandRegex or argsPattern) in a deny or ask \
                      rule: no gate rule is provably broader short of refusing every \
                      command; rewrite it with commandPrefix"
                    .into(),
            ),
        };
    }
    let Some(prefixes) = get("commandPrefix") else {
        return match said {
            RuleKind::Allow => one(Outcome::Dropped {
                why: "it allows every command: that is gate's level `full`, not a rule".into(),
            }),
            _ => Err(
                "a deny or ask rule for every shell command: gate says that with its level \
                 (`deny`), not a rule; set it yourself if you mean it"
                    .into(),
            ),
        };
    };
    let prefixes = strings(prefixes, "commandPrefix")?;
    let mut out = Vec::new();
    for prefix in prefixes {
        out.push((
            said,
            prefix_outcome(&prefix, said, options, broadened_by_conditions.as_deref())?,
        ));
    }
    Ok(out)
}

fn prefix_outcome(
    prefix: &str,
    said: RuleKind,
    options: Options,
    broadened: Option<&str>,
) -> Result<Outcome, String> {
    let words = crate::policy::trim_blanks(prefix);
    let valid = crate::policy::Alone::new(said, words).map(|_| ());
    let rule = GateRule::new(said, words, false);
    let edge = prefix != words || prefix.is_empty();
    if said == RuleKind::Allow {
        if edge {
            return Ok(Outcome::Dropped {
                why: "a prefix with white space at an end: Gemini CLI releases read it \
                      differently, so no gate rule is surely a subset"
                    .into(),
            });
        }
        if let Err(e) = valid {
            return Ok(Outcome::Dropped {
                why: format!("gate cannot take `{}` as a rule: {e}", words.escape_debug()),
            });
        }
        return Ok(Outcome::Narrowed {
            rule,
            why: format!(
                "`{0}` as a whole word only: Gemini CLI also allowed text where `{0}` runs on \
                 into a quote (`{0}\"x\"`, another program), older releases any longer word",
                words.escape_debug()
            ),
        });
    }
    if let Err(e) = valid {
        return Err(format!(
            "gate cannot take `{}` as a rule: {e}",
            words.escape_debug()
        ));
    }
    if !options.whole_words {
        return Err(format!(
            "Gemini CLI refuses the text `{0}` followed by a space, a quote or the end, so \
             also `{0}\"x\"` (which the shell runs as the program `{0}x`); gate's rule \
             `{0}` reads words as the shell does and would not refuse that spelling. Run \
             the import with --whole-words to accept gate's reading",
            words.escape_debug()
        ));
    }
    let quote = format!(
        "read as whole words (--whole-words): `{}\"x\"` is not refused",
        words.escape_debug()
    );
    Ok(Outcome::Broadened {
        rule,
        why: match broadened {
            Some(why) => format!("{why}; {quote}"),
            None => format!(
                "gate refuses `{}` in any spelling of its options and inside other commands; {quote}",
                words.escape_debug()
            ),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_text(text: &str, whole_words: bool) -> Result<Vec<Entry>, ImportError> {
        read_with(
            &[(
                PathBuf::from("/h/.gemini/policies/p.toml"),
                Scope::User,
                text.into(),
            )],
            Options { whole_words },
        )
    }

    fn rule(kind: RuleKind, text: &str) -> GateRule {
        GateRule::new(kind, text, false)
    }

    #[test]
    fn a_string_prefix_allow_is_narrowed_to_the_whole_word() {
        let entries = read_text(
            "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"git\"\n\
             decision = \"allow\"\npriority = 100\n",
            false,
        )
        .unwrap();
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].source.line, 1);
        assert!(matches!(
            &entries[0].outcome,
            Outcome::Narrowed { rule: r, .. } if *r == rule(RuleKind::Allow, "git")
        ));
    }

    #[test]
    fn a_deny_prefix_stops_the_import_unless_whole_words_are_accepted() {
        let text = "\n[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = [\"git push\", \"rm -rf\"]\n\
                    decision = \"deny\"\npriority = 10\n";
        let e = read_text(text, false).unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.why.contains("--whole-words"), "{e}");
        let entries = read_text(text, true).unwrap();
        let rules: Vec<_> = entries
            .iter()
            .map(|e| match &e.outcome {
                Outcome::Broadened { rule, .. } => rule.clone(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            rules,
            [
                rule(RuleKind::Deny, "git push"),
                rule(RuleKind::Deny, "rm -rf")
            ]
        );
    }

    #[test]
    fn regexes_drop_an_allow_and_stop_a_deny() {
        let allow = "[[rule]]\ntoolName = \"run_shell_command\"\ncommandRegex = \"git (status|diff)\"\n\
                     decision = \"allow\"\npriority = 1\n";
        assert!(matches!(
            read_text(allow, true).unwrap()[0].outcome,
            Outcome::Dropped { .. }
        ));
        let deny = allow.replace("\"allow\"", "\"deny\"");
        assert!(read_text(&deny, true).is_err());
        let ask = allow.replace("\"allow\"", "\"ask_user\"");
        assert!(read_text(&ask, true).is_err());
    }

    #[test]
    fn other_tools_are_dropped_and_every_command_is_not_a_rule() {
        let other = "[[rule]]\ntoolName = [\"write_file\", \"replace\"]\ndecision = \"deny\"\npriority = 1\n";
        match &read_text(other, false).unwrap()[0].outcome {
            Outcome::Dropped { why } => assert!(why.contains("not a shell rule")),
            o => panic!("{o:?}"),
        }
        let all = "[[rule]]\ntoolName = \"run_shell_command\"\ndecision = \"deny\"\npriority = 1\n";
        assert!(read_text(all, true).is_err());
        let all = all.replace("\"deny\"", "\"allow\"");
        assert!(matches!(
            read_text(&all, true).unwrap()[0].outcome,
            Outcome::Dropped { .. }
        ));
    }

    #[test]
    fn conditions_drop_an_allow_outside_the_default_mode_and_broaden_a_deny() {
        let yolo = "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"make\"\n\
                    decision = \"allow\"\npriority = 1\nmodes = [\"yolo\"]\n";
        assert!(matches!(
            read_text(yolo, false).unwrap()[0].outcome,
            Outcome::Dropped { .. }
        ));
        let default = yolo.replace("[\"yolo\"]", "[\"default\", \"yolo\"]");
        assert!(matches!(
            read_text(&default, false).unwrap()[0].outcome,
            Outcome::Narrowed { .. }
        ));
        let deny = yolo.replace("\"allow\"", "\"deny\"");
        match &read_text(&deny, true).unwrap()[0].outcome {
            Outcome::Broadened { rule: r, why } => {
                assert_eq!(*r, rule(RuleKind::Deny, "make"));
                assert!(why.contains("only in the modes yolo"), "{why}");
            }
            o => panic!("{o:?}"),
        }
    }

    #[test]
    fn an_allow_gemini_cli_reports_as_invalid_is_dropped() {
        for text in [
            "[[rule]]\ntoolName = \"*\"\ncommandPrefix = \"ls\"\ndecision = \"allow\"\npriority = 1\n",
            "[[rule]]\ntoolName = [\"run_shell_command\"]\ncommandPrefix = \"ls\"\ndecision = \"allow\"\npriority = 1\n",
            "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"ls\"\ncommandRegex = \"ls\"\ndecision = \"allow\"\npriority = 1\n",
        ] {
            match &read_text(text, false).unwrap()[0].outcome {
                Outcome::Dropped { why } => assert!(why.contains("invalid"), "{why}"),
                o => panic!("{text}: {o:?}"),
            }
        }
    }

    #[test]
    fn a_file_gemini_cli_would_refuse_stops_the_import() {
        for text in [
            "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"ls\"\npriority = 1\n",
            "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"ls\"\ndecision = \"allow\"\n",
            "[[rule]]\ntoolName = \"run_shell_command\"\ndecision = \"maybe\"\npriority = 1\n",
            "[[rule]\n",
        ] {
            assert!(read_text(text, true).is_err(), "{text}");
        }
    }
}
