//! Claude Code's permission rules (`permissions.allow`, `.ask`, `.deny` in its settings
//! files) read as gate rules. Pure: the files' text in, [`Entry`]s out.
//!
//! A rule is `Tool` or `Tool(specifier)`. Only `Bash` rules are about the shell; the
//! rest (Read, Edit, WebFetch, MCP tools) are dropped as such. A `Bash` specifier is read
//! the way Claude Code documents it:
//!
//! | specifier              | Claude Code matches                         | gate rule                 |
//! |------------------------|---------------------------------------------|---------------------------|
//! | `npm run test:*`       | `npm run test`, or it and more words        | `npm run test`            |
//! | `npm run test *`       | the same (one trailing ` *` is optional)    | `npm run test`            |
//! | `git status`           | exactly `git status`                        | `git status`, exact       |
//! | `ls*`                  | anything starting `ls` (`lsof` too)         | allow: `ls`, narrowed     |
//! | `git * main`, `* -h`   | a `*` anywhere else                         | allow: dropped            |
//! | none, empty, `*`       | every command                               | allow: dropped            |
//!
//! A deny or ask rule is never dropped: an exact one becomes gate's prefix rule (broader:
//! more arguments are refused too); one gate cannot express at all (a `*` that is not a
//! trailing word wildcard, a specifier gate does not understand, every command) stops the
//! import with its file and line. Claude Code applies deny, then ask, then allow, whatever
//! file a rule is in; so does gate, so the order needs nothing more.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Entry, GateRule, ImportError, Outcome, RuleKind, Scope, Source};

/// The lists Claude Code reads under `permissions`, with the gate kind each one says.
const LISTS: [(&str, RuleKind); 3] = [
    ("allow", RuleKind::Allow),
    ("ask", RuleKind::Ask),
    ("deny", RuleKind::Deny),
];

/// Read Claude Code settings files: (path, scope, text) each.
pub fn read(files: &[(PathBuf, Scope, String)]) -> Result<Vec<Entry>, ImportError> {
    let mut entries = Vec::new();
    for (path, scope, text) in files {
        read_file(path, *scope, text, &mut entries)?;
    }
    // Managed settings may say that only their own permission rules count
    // (`allowManagedPermissionRulesOnly`): Claude Code then ignores every other file's
    // rules, so their allow rules are not imported (their deny and ask rules still are:
    // they only tighten).
    let managed_only = files.iter().any(|(_, scope, text)| {
        *scope == Scope::Managed
            && serde_json::from_str::<Value>(text)
                .is_ok_and(|v| v.get("allowManagedPermissionRulesOnly") == Some(&Value::Bool(true)))
    });
    if managed_only {
        for entry in &mut entries {
            if entry.scope != Scope::Managed
                && entry.said == RuleKind::Allow
                && !matches!(entry.outcome, Outcome::Dropped { .. })
            {
                entry.outcome = Outcome::Dropped {
                    why: "the managed settings say allowManagedPermissionRulesOnly, so Claude \
                          Code ignores this rule"
                        .into(),
                };
            }
        }
    }
    Ok(entries)
}

fn read_file(
    path: &Path,
    scope: Scope,
    text: &str,
    entries: &mut Vec<Entry>,
) -> Result<(), ImportError> {
    let error = |line: Option<u32>, why: String| ImportError {
        path: path.to_owned(),
        line,
        why,
    };
    let value: Value = serde_json::from_str(text).map_err(|e| {
        error(
            u32::try_from(e.line()).ok().filter(|l| *l > 0),
            format!("not a JSON settings file as Claude Code reads it: {e}"),
        )
    })?;
    let Some(top) = value.as_object() else {
        return Err(error(None, "the settings are not a JSON object".into()));
    };
    let Some(permissions) = top.get("permissions") else {
        return Ok(());
    };
    let Some(permissions) = permissions.as_object() else {
        return Err(error(None, "`permissions` is not an object".into()));
    };
    let lines = rule_lines(text);
    for (list, said) in LISTS {
        let Some(items) = permissions.get(list) else {
            continue;
        };
        let Some(items) = items.as_array() else {
            return Err(error(None, format!("`permissions.{list}` is not an array")));
        };
        for (index, item) in items.iter().enumerate() {
            let line = lines
                .iter()
                .find(|(l, i, _)| *l == list && *i == index)
                .map(|(_, _, line)| *line);
            let Some(rule) = item.as_str() else {
                return Err(error(
                    line,
                    format!("`permissions.{list}` holds something other than a string"),
                ));
            };
            let source = Source {
                path: path.to_owned(),
                line: line.unwrap_or(0),
                text: rule.to_owned(),
            };
            entries.push(entry(rule, said, scope, source)?);
        }
    }
    Ok(())
}

/// What one rule becomes.
fn entry(rule: &str, said: RuleKind, scope: Scope, source: Source) -> Result<Entry, ImportError> {
    let outcome = outcome(rule, said).map_err(|why| ImportError {
        path: source.path.clone(),
        line: Some(source.line),
        why: format!("`{}`: {why}", rule.escape_debug()),
    })?;
    Ok(Entry {
        source,
        scope,
        said,
        outcome,
    })
}

/// How Claude Code reads a `Bash` specifier.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Pattern<'a> {
    /// Every command.
    All,
    /// The words, alone or followed by a space and more.
    Words(&'a str),
    /// Exactly this command.
    Exact(&'a str),
    /// Anything that starts with this text, a longer word too.
    Text(&'a str),
    /// A `*` elsewhere: not a prefix.
    Wild,
    /// `name:value`, the parameter form, which gate does not read.
    Parameter(&'a str),
}

fn pattern(spec: &str) -> Pattern<'_> {
    if spec.trim().is_empty() || spec.trim() == "*" {
        return Pattern::All;
    }
    if let Some(prefix) = spec.strip_suffix(":*") {
        return if prefix.contains('*') {
            Pattern::Wild
        } else if prefix.trim().is_empty() {
            Pattern::All
        } else {
            Pattern::Words(prefix)
        };
    }
    if let Some((name, _)) = spec.split_once(':') {
        if !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Pattern::Parameter(name);
        }
    }
    match spec.matches('*').count() {
        0 => Pattern::Exact(spec),
        1 if spec.ends_with(" *") => Pattern::Words(spec[..spec.len() - 2].trim_end()),
        1 if spec.ends_with('*') => Pattern::Text(&spec[..spec.len() - 1]),
        _ => Pattern::Wild,
    }
}

/// The tool and specifier of a rule: `Bash(git status)` → (`Bash`, `Some("git status")`).
fn split_rule(rule: &str) -> Option<(&str, Option<&str>)> {
    match rule.split_once('(') {
        None => Some((rule.trim(), None)),
        Some((tool, rest)) => rest.strip_suffix(')').map(|spec| (tool.trim(), Some(spec))),
    }
}

/// The rule's words, valid as a gate rule of `kind`; `Err` with gate's reason.
fn valid(kind: RuleKind, text: &str) -> Result<(), String> {
    crate::policy::Alone::new(kind, crate::policy::trim_blanks(text))
        .map(|_| ())
        .map_err(|e| format!("gate cannot take `{}` as a rule: {e}", text.escape_debug()))
}

fn outcome(rule: &str, said: RuleKind) -> Result<Outcome, String> {
    let Some((tool, spec)) = split_rule(rule) else {
        return match said {
            RuleKind::Allow => Ok(Outcome::Dropped {
                why: "not a rule Claude Code can read (no closing parenthesis)".into(),
            }),
            _ => Err("not a rule gate can read: no closing parenthesis".into()),
        };
    };
    if tool != "Bash" {
        return Ok(Outcome::Dropped {
            why: format!("not a shell rule (the {tool} tool)"),
        });
    }
    let pattern = pattern(spec.unwrap_or(""));
    if said == RuleKind::Allow {
        return Ok(allow_outcome(&pattern));
    }
    let kind = said;
    match pattern {
        Pattern::Words(words) => {
            valid(kind, words)?;
            Ok(Outcome::Imported(GateRule::new(kind, words, false)))
        }
        Pattern::Exact(command) => {
            valid(kind, command)?;
            Ok(Outcome::Broadened {
                rule: GateRule::new(kind, command, false),
                why: format!(
                    "Claude Code matched `{}` alone; gate's rule also matches it with more \
                     arguments",
                    command.escape_debug()
                ),
            })
        }
        Pattern::All => Err(match kind {
            RuleKind::Deny => "it refuses every command; gate says that with `level = \"deny\"`, \
                               not with a rule, so set that yourself if you mean it"
                .into(),
            _ => "it asks before every command, ahead of any allow rule; gate cannot say that \
                  with a rule (its level `ask` still runs allowed commands), so import nothing \
                  or remove this rule first"
                .into(),
        }),
        Pattern::Text(text) => Err(format!(
            "`{}*` also matches commands where `{}` goes on as a longer word, which no \
             gate rule covers; write it as `{}:*` (whole words) if that is what you mean",
            text.escape_debug(),
            text.escape_debug(),
            text.escape_debug()
        )),
        Pattern::Wild => Err(
            "a `*` that is not a trailing word wildcard: gate's rules are word prefixes and \
             cannot refuse exactly these commands, and a broader rule would refuse far more; \
             rewrite it as a prefix (`git push:*`) or write the gate rule you want yourself"
                .into(),
        ),
        Pattern::Parameter(name) => Err(format!(
            "the parameter form `{name}:…` is not one gate reads"
        )),
    }
}

fn allow_outcome(pattern: &Pattern<'_>) -> Outcome {
    let dropped = |why: String| Outcome::Dropped { why };
    let checked = |text: &str, exact: bool, narrowed: Option<String>| {
        if let Err(why) = valid(RuleKind::Allow, text) {
            return dropped(why);
        }
        let rule = GateRule::new(RuleKind::Allow, text, exact);
        match narrowed {
            None => Outcome::Imported(rule),
            Some(why) => Outcome::Narrowed { rule, why },
        }
    };
    match *pattern {
        Pattern::All => {
            dropped("it allows every command: that is gate's level `full`, not a rule".into())
        }
        Pattern::Words(words) => checked(words, false, None),
        Pattern::Exact(command) => checked(command, true, None),
        Pattern::Text(text) if text.ends_with([' ', '\t']) || text.trim().is_empty() => {
            dropped("a prefix gate cannot read as words".into())
        }
        Pattern::Text(text) => checked(
            text,
            false,
            Some(format!(
                "commands where `{}` goes on as a longer word are no longer allowed",
                text.escape_debug()
            )),
        ),
        Pattern::Wild => dropped(
            "a `*` inside the pattern: every word prefix of it would also allow commands it \
             did not; gate asks for them instead"
                .into(),
        ),
        Pattern::Parameter(name) => dropped(format!(
            "the parameter form `{name}:…` is not one gate reads"
        )),
    }
}

/// The 1-based line of each string in `permissions.allow`, `.ask` and `.deny`: (list,
/// index, line). serde_json keeps no positions, so the text (already known to be valid
/// JSON) is walked once more, token by token.
fn rule_lines(text: &str) -> Vec<(&'static str, usize, u32)> {
    #[derive(Clone)]
    enum Frame {
        Object { key: Option<String> },
        Array { index: usize },
    }
    let mut found = Vec::new();
    let mut stack: Vec<(Frame, Option<String>)> = Vec::new();
    let mut line = 1u32;
    let mut chars = text.chars().peekable();
    let mut expect_key = false;
    // The key under which the container on top of the stack was opened.
    let path_is = |stack: &[(Frame, Option<String>)], list: &str| {
        stack.len() == 3
            && stack[1].1.as_deref() == Some("permissions")
            && stack[2].1.as_deref() == Some(list)
            && matches!(stack[0].0, Frame::Object { .. })
            && matches!(stack[1].0, Frame::Object { .. })
    };
    while let Some(c) = chars.next() {
        match c {
            '\n' => line += 1,
            '{' | '[' => {
                let under = match stack.last() {
                    Some((Frame::Object { key }, _)) => key.clone(),
                    _ => None,
                };
                let frame = if c == '{' {
                    expect_key = true;
                    Frame::Object { key: None }
                } else {
                    Frame::Array { index: 0 }
                };
                stack.push((frame, under));
            }
            '}' | ']' => {
                stack.pop();
                expect_key = false;
            }
            ',' => match stack.last_mut() {
                Some((Frame::Array { index }, _)) => *index += 1,
                Some((Frame::Object { key }, _)) => {
                    *key = None;
                    expect_key = true;
                }
                None => {}
            },
            '"' => {
                let start = line;
                let mut s = String::new();
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => {
                            if let Some(e) = chars.next() {
                                s.push(e);
                            }
                        }
                        '\n' => {
                            line += 1;
                            s.push(c);
                        }
                        _ => s.push(c),
                    }
                }
                match stack.last_mut() {
                    Some((Frame::Object { key }, _)) if expect_key => {
                        *key = Some(s);
                        expect_key = false;
                    }
                    Some((Frame::Array { index }, _)) => {
                        let index = *index;
                        for (list, _) in LISTS {
                            if path_is(&stack, list) {
                                found.push((list, index, start));
                            }
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(rule: &str, said: RuleKind) -> Result<Outcome, String> {
        outcome(rule, said)
    }

    fn rule(text: &str, kind: RuleKind, exact: bool) -> GateRule {
        GateRule::new(kind, text, exact)
    }

    #[test]
    fn a_word_prefix_is_imported_as_it_is() {
        use RuleKind::*;
        for spec in ["Bash(npm run test:*)", "Bash(npm run test *)"] {
            assert_eq!(
                one(spec, Allow),
                Ok(Outcome::Imported(rule("npm run test", Allow, false))),
                "{spec}"
            );
            assert_eq!(
                one(spec, Deny),
                Ok(Outcome::Imported(rule("npm run test", Deny, false))),
                "{spec}"
            );
        }
    }

    #[test]
    fn an_exact_allow_stays_exact_and_an_exact_deny_becomes_a_prefix() {
        use RuleKind::*;
        assert_eq!(
            one("Bash(git status)", Allow),
            Ok(Outcome::Imported(rule("git status", Allow, true)))
        );
        assert!(matches!(
            one("Bash(git push)", Ask),
            Ok(Outcome::Broadened { rule: r, .. }) if r == rule("git push", Ask, false)
        ));
    }

    /// `spec` is dropped as an allow rule and stops the import as a deny or ask rule.
    #[track_caller]
    fn dropped_as_allow_stops_otherwise(spec: &str) {
        use RuleKind::*;
        assert!(
            matches!(one(spec, Allow), Ok(Outcome::Dropped { .. })),
            "{spec}"
        );
        assert!(one(spec, Deny).is_err(), "{spec}");
        assert!(one(spec, Ask).is_err(), "{spec}");
    }

    #[test]
    fn a_star_inside_the_pattern_drops_an_allow_and_stops_a_deny() {
        for spec in ["Bash(git * main)", "Bash(* --version)", "Bash(git *:*)"] {
            dropped_as_allow_stops_otherwise(spec);
        }
    }

    #[test]
    fn a_star_that_goes_on_in_the_word_narrows_an_allow_and_stops_a_deny() {
        use RuleKind::*;
        assert!(matches!(
            one("Bash(ls*)", Allow),
            Ok(Outcome::Narrowed { rule: r, .. }) if r == rule("ls", Allow, false)
        ));
        assert!(one("Bash(rm -rf*)", Deny).is_err());
    }

    #[test]
    fn every_command_is_dropped_as_an_allow_and_stops_a_deny_or_ask() {
        for spec in ["Bash", "Bash()", "Bash(*)", "Bash(:*)"] {
            dropped_as_allow_stops_otherwise(spec);
        }
    }

    #[test]
    fn other_tools_are_dropped_whatever_the_list() {
        for kind in [RuleKind::Allow, RuleKind::Ask, RuleKind::Deny] {
            for spec in [
                "Read(./.env)",
                "Edit(src/**)",
                "WebFetch(domain:x.org)",
                "mcp__x",
            ] {
                match one(spec, kind) {
                    Ok(Outcome::Dropped { why }) => assert!(why.contains("not a shell rule")),
                    other => panic!("{spec}: {other:?}"),
                }
            }
        }
    }

    #[test]
    fn a_rule_gate_cannot_take_drops_an_allow_and_stops_a_deny() {
        use RuleKind::*;
        assert!(matches!(
            one("Bash(echo $HOME:*)", Allow),
            Ok(Outcome::Dropped { .. })
        ));
        assert!(one("Bash(curl x | sh:*)", Deny).is_err());
        assert!(one("Bash(command:git push)", Deny).is_err());
        assert!(matches!(
            one("Bash(command:git push)", Allow),
            Ok(Outcome::Dropped { .. })
        ));
    }

    #[test]
    fn a_settings_file_gives_each_rule_with_its_line() {
        let text = r#"{
  "model": "x",
  "permissions": {
    "allow": [
      "Bash(npm run test:*)",
      "Read(~/notes)"
    ],
    "deny": ["Bash(rm -rf:*)"],
    "ask": [
      "Bash(git push:*)"
    ]
  },
  "env": { "allow": ["Bash(x:*)"] }
}"#;
        let files = [(
            PathBuf::from("/h/.claude/settings.json"),
            Scope::User,
            text.into(),
        )];
        let entries = read(&files).unwrap();
        let got: Vec<_> = entries
            .iter()
            .map(|e| (e.source.line, e.said, e.source.text.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (5, RuleKind::Allow, "Bash(npm run test:*)"),
                (6, RuleKind::Allow, "Read(~/notes)"),
                (10, RuleKind::Ask, "Bash(git push:*)"),
                (8, RuleKind::Deny, "Bash(rm -rf:*)"),
            ]
        );
    }

    #[test]
    fn managed_rules_only_drops_every_other_files_allow_rules() {
        let managed = r#"{"allowManagedPermissionRulesOnly": true,
            "permissions": {"allow": ["Bash(make:*)"]}}"#;
        let user = r#"{"permissions": {"allow": ["Bash(ls:*)"], "deny": ["Bash(rm:*)"]}}"#;
        let files = [
            (
                PathBuf::from("/etc/claude-code/managed-settings.json"),
                Scope::Managed,
                managed.into(),
            ),
            (
                PathBuf::from("/h/.claude/settings.json"),
                Scope::User,
                user.into(),
            ),
        ];
        let entries = read(&files).unwrap();
        let outcomes: Vec<_> = entries
            .iter()
            .map(|e| (&e.source.text[..], &e.outcome))
            .collect();
        assert!(matches!(
            outcomes[0],
            ("Bash(make:*)", Outcome::Imported(_))
        ));
        assert!(
            matches!(outcomes[1], ("Bash(ls:*)", Outcome::Dropped { why }) if why.contains("allowManagedPermissionRulesOnly"))
        );
        assert!(matches!(outcomes[2], ("Bash(rm:*)", Outcome::Imported(_))));
    }

    #[test]
    fn a_file_claude_code_could_not_read_stops_the_import_with_its_line() {
        let files = [(
            PathBuf::from("s.json"),
            Scope::User,
            "{\n \"permissions\": {\n \"allow\": [\"Bash(ls)\",]\n}}".into(),
        )];
        let e = read(&files).unwrap_err();
        assert_eq!(e.line, Some(3), "{e}");
        let files = [(
            PathBuf::from("s.json"),
            Scope::User,
            r#"{"permissions": {"deny": "Bash(rm:*)"}}"#.into(),
        )];
        assert!(read(&files).unwrap_err().why.contains("not an array"));
    }

    #[test]
    fn a_deny_gate_cannot_express_names_its_file_and_line() {
        let files = [(
            PathBuf::from("/h/.claude/settings.json"),
            Scope::User,
            "{\"permissions\": {\n\"deny\": [\n\"Bash(git * main)\"]}}".into(),
        )];
        let e = read(&files).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("/h/.claude/settings.json:3: `Bash(git * main)`: "),
            "{e}"
        );
    }
}
