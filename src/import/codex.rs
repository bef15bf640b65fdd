//! Codex CLI's own command rules, read as Codex reads them and turned into gate rules.
//!
//! Codex reads every `*.rules` file in the `rules` folder of each of its configuration
//! layers (`$CODEX_HOME`, by default `~/.codex`; a trusted project's `.codex`; the
//! system's) and the `[rules]` table of the administrator's `requirements.toml`. A rule
//! is `prefix_rule(pattern = [...], decision = ..., match = [...], not_match = [...])`:
//! the command's argv starts with the pattern's words (a word may be a list of
//! alternatives), and the strictest decision of all the rules that match wins
//! (`forbidden` over `prompt` over `allow`). A rule without `decision` allows.
//!
//! Each rule becomes gate rules of its kind (`convert.rs`: `allow` → allow, `prompt` →
//! ask, `forbidden` → deny), one for each choice of alternatives, with its words quoted as
//! a shell reads them (`words.rs`). Gate's deny and ask rules already win over its allow
//! rules, which is Codex's order. The rule's `match` and `not_match` examples are
//! checked here with gate's own matcher, and carried on the rules so that gate checks
//! them again whenever it loads them.
//!
//! The files are Starlark, a programming language; only its literal subset is read
//! (`starlark.rs`), never executed.

mod convert;
mod requirements;
mod starlark;
mod words;

use std::path::{Path, PathBuf};

use super::{Entry, ImportError, Outcome, RuleKind, Scope, Source};
use crate::config::Lines;
use starlark::{Arg, Call, Value};

/// The most gate rules one Codex rule may expand into (the product of its alternatives).
pub const MAX_EXPANSION: usize = 64;

/// A Codex decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decision {
    Allow,
    Prompt,
    Forbidden,
}

impl Decision {
    fn parse(text: &str) -> Option<Decision> {
        match text {
            "allow" => Some(Decision::Allow),
            "prompt" => Some(Decision::Prompt),
            "forbidden" => Some(Decision::Forbidden),
            _ => None,
        }
    }

    fn kind(self) -> RuleKind {
        match self {
            Decision::Allow => RuleKind::Allow,
            Decision::Prompt => RuleKind::Ask,
            Decision::Forbidden => RuleKind::Deny,
        }
    }
}

/// A pattern: for each position, the words that may stand there.
type Pattern = Vec<Vec<String>>;

/// One Codex prefix rule, from either kind of file.
#[derive(Debug, Clone)]
struct CodexRule {
    line: u32,
    /// The rule as the table shows it.
    text: String,
    pattern: Pattern,
    decision: Decision,
    /// `decision` was not written: Codex's default.
    defaulted: bool,
    matches: Vec<Vec<String>>,
    not_matches: Vec<Vec<String>>,
    /// `canonical_matching = True`: Codex compares the words in any capitalisation and
    /// Unicode composition.
    canonical: bool,
}

/// The administrator's file, on Linux.
pub const REQUIREMENTS: &str = "/etc/codex/requirements.toml";

/// The folders whose `*.rules` files Codex reads, each with who wrote them: the
/// system's, the person's (`codex_home`: `$CODEX_HOME`, by default `~/.codex`) and the
/// project's (`project`: the directory Codex works in; Codex reads it only when the
/// person trusts the project). Listing them, and reading [`REQUIREMENTS`], is the
/// caller's.
pub fn rule_folders(codex_home: &Path, project: &Path) -> [(PathBuf, Scope); 3] {
    [
        (PathBuf::from("/etc/codex/rules"), Scope::Managed),
        (codex_home.join("rules"), Scope::User),
        (project.join(".codex/rules"), Scope::Project),
    ]
}

/// Whether a file is a `requirements.toml` (read as TOML) rather than a `.rules` file.
fn is_requirements(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "toml")
}

/// Read Codex's rule files — `(path, scope, text)`, `.rules` files and
/// `requirements.toml` — into what each of their rules becomes in gate. Rules from a
/// `requirements.toml` are the administrator's ([`Scope::Managed`]) whatever scope the
/// caller gave. Any file that cannot be read exactly as Codex reads it, a rule whose
/// examples gate's matcher disagrees with, and a deny or ask rule gate cannot express
/// even more broadly fail the whole import.
pub fn read(files: &[(PathBuf, Scope, String)]) -> Result<Vec<Entry>, ImportError> {
    let error = |path: &Path, line: Option<u32>, why: String| ImportError {
        path: path.to_owned(),
        line,
        why,
    };
    // Every file is read first: a `host_executable` anywhere changes what a rule for
    // that program matches in Codex.
    let mut parsed = Vec::with_capacity(files.len());
    let mut hosts = convert::Hosts::new();
    for (path, scope, text) in files {
        if is_requirements(path) {
            let rules = requirements::rules(text).map_err(|m| error(path, m.line, m.why))?;
            parsed.push((path, Scope::Managed, Parsed::Requirements(rules)));
            continue;
        }
        let calls = starlark::parse(text).map_err(|e| {
            error(
                path,
                Some(e.line),
                format!(
                    "not understood: {}; gate reads the file without running it",
                    e.why
                ),
            )
        })?;
        for call in calls.iter().filter(|c| c.name == "host_executable") {
            let (name, paths) =
                host_executable(call).map_err(|why| error(path, Some(call.line), why))?;
            hosts.entry(name).or_default().extend(paths);
        }
        parsed.push((path, *scope, Parsed::Rules(calls)));
    }
    // Codex leaves the person's and the projects' files out when the administrator says
    // so: their allow rules are not in force, so they are not imported.
    let ignored = files
        .iter()
        .any(|(path, _, text)| is_requirements(path) && requirements::ignores_rules(text));
    let mut entries = Vec::new();
    for (path, scope, file) in parsed {
        let cx = convert::Context {
            drop_allows: ignored && scope != Scope::Managed,
            hosts: &hosts,
        };
        let calls = match file {
            Parsed::Requirements(rules) => {
                for rule in &rules {
                    entries.extend(convert::entries(rule, path, scope, &cx)?);
                }
                continue;
            }
            Parsed::Rules(calls) => calls,
        };
        for call in &calls {
            match call.name.as_str() {
                "prefix_rule" => {
                    let rule =
                        prefix_rule(call).map_err(|why| error(path, Some(call.line), why))?;
                    entries.extend(convert::entries(&rule, path, scope, &cx)?);
                }
                "network_rule" => {
                    entries.push(
                        network_rule(call, path, scope)
                            .map_err(|why| error(path, Some(call.line), why))?,
                    );
                }
                "host_executable" => {}
                other => {
                    return Err(error(
                        path,
                        Some(call.line),
                        format!(
                            "`{other}(...)` is not one of Codex's rule functions (prefix_rule, \
                             network_rule, host_executable)"
                        ),
                    ));
                }
            }
        }
    }
    Ok(entries)
}

/// A file, read.
enum Parsed {
    Requirements(Vec<CodexRule>),
    Rules(Vec<Call>),
}

/// A call's arguments by name: positional ones take the names in `positional`, in
/// order; a name outside `known`, a missing `required` one, or more positional ones
/// than `positional` has is an error.
fn arguments<'c>(
    call: &'c Call,
    positional: &[&'static str],
    known: &[&'static str],
    required: &[&'static str],
) -> Result<Vec<(&'c str, &'c Value)>, String> {
    let mut out: Vec<(&str, &Value)> = Vec::new();
    for (i, Arg { name, value }) in call.args.iter().enumerate() {
        let name: &str = match name {
            Some(n) => n,
            None => positional.get(i).copied().ok_or_else(|| {
                format!(
                    "{} positional arguments to {}(...) (write them as keywords: {})",
                    call.args.iter().filter(|a| a.name.is_none()).count(),
                    call.name,
                    known.join(", ")
                )
            })?,
        };
        if !known.contains(&name) {
            return Err(format!(
                "{}(...) has no argument `{name}` (it takes {})",
                call.name,
                known.join(", ")
            ));
        }
        if out.iter().any(|(n, _)| *n == name) {
            return Err(format!("the argument `{name}` is given twice"));
        }
        out.push((name, value));
    }
    for name in required {
        if !out.iter().any(|(n, _)| n == name) {
            return Err(format!("{}(...) without `{name}`", call.name));
        }
    }
    Ok(out)
}

fn string_arg<'v>(name: &str, value: &'v Value) -> Result<&'v str, String> {
    match value {
        Value::Str(s) => Ok(s),
        other => Err(format!(
            "`{name}` must be a string, not {}",
            other.type_name()
        )),
    }
}

fn justification(value: &Value) -> Result<(), String> {
    if string_arg("justification", value)?.trim().is_empty() {
        return Err("an empty justification, which Codex refuses".into());
    }
    Ok(())
}

/// A `prefix_rule(...)` call, checked as Codex checks it.
fn prefix_rule(call: &Call) -> Result<CodexRule, String> {
    let args = arguments(
        call,
        &["pattern", "decision"],
        &[
            "pattern",
            "decision",
            "match",
            "not_match",
            "justification",
            "canonical_matching",
        ],
        &["pattern"],
    )?;
    let mut rule = CodexRule {
        line: call.line,
        text: String::new(),
        pattern: Vec::new(),
        decision: Decision::Allow,
        defaulted: true,
        matches: Vec::new(),
        not_matches: Vec::new(),
        canonical: false,
    };
    let mut shown = Vec::new();
    for (name, value) in args {
        match name {
            "pattern" => {
                rule.pattern = pattern(value)?;
                shown.push(format!("pattern={value}"));
            }
            "decision" => {
                let text = string_arg(name, value)?;
                rule.decision = Decision::parse(text).ok_or_else(|| {
                    format!("decision \"{text}\" is not one Codex knows (allow, prompt, forbidden)")
                })?;
                rule.defaulted = false;
                shown.push(format!("decision={value}"));
            }
            "match" => rule.matches = examples(value)?,
            "not_match" => rule.not_matches = examples(value)?,
            "justification" => justification(value)?,
            "canonical_matching" => match value {
                Value::Bool(b) => {
                    rule.canonical = *b;
                    if *b {
                        shown.push("canonical_matching=True".into());
                    }
                }
                other => {
                    return Err(format!(
                        "`canonical_matching` must be True or False, not {}",
                        other.type_name()
                    ));
                }
            },
            _ => unreachable!("arguments() admits only the names listed"),
        }
    }
    rule.text = format!("prefix_rule({})", shown.join(", "));
    if rule.defaulted {
        rule.text
            .push_str("  # no decision: Codex's default is allow");
    }
    Ok(rule)
}

fn pattern(value: &Value) -> Result<Pattern, String> {
    let Value::List(items) = value else {
        return Err(format!(
            "`pattern` must be a list, not {}",
            value.type_name()
        ));
    };
    if items.is_empty() {
        return Err("an empty pattern, which Codex refuses".into());
    }
    items
        .iter()
        .map(|item| match item {
            Value::Str(s) => Ok(vec![s.clone()]),
            Value::List(alts) if alts.is_empty() => {
                Err("an empty list of alternatives in the pattern, which Codex refuses".into())
            }
            Value::List(alts) => alts
                .iter()
                .map(|a| match a {
                    Value::Str(s) => Ok(s.clone()),
                    other => Err(format!(
                        "an alternative in the pattern must be a string, not {}",
                        other.type_name()
                    )),
                })
                .collect(),
            other => Err(format!(
                "a pattern word must be a string or a list of strings, not {}",
                other.type_name()
            )),
        })
        .collect()
}

/// `match` or `not_match`: each example a list of words, or a string split into words
/// as a POSIX shell splits it (Codex uses `shlex`).
fn examples(value: &Value) -> Result<Vec<Vec<String>>, String> {
    let Value::List(items) = value else {
        return Err(format!(
            "examples must be a list, not {}",
            value.type_name()
        ));
    };
    items
        .iter()
        .map(|item| {
            let words = match item {
                Value::Str(s) => shell_words::split(s)
                    .map_err(|_| format!("the example \"{s}\" is not valid shell words"))?,
                Value::List(words) => words
                    .iter()
                    .map(|w| match w {
                        Value::Str(s) => Ok(s.clone()),
                        other => Err(format!(
                            "an example's words must be strings, not {}",
                            other.type_name()
                        )),
                    })
                    .collect::<Result<_, String>>()?,
                other => Err(format!(
                    "an example must be a string or a list of strings, not {}",
                    other.type_name()
                ))?,
            };
            if words.is_empty() {
                return Err("an empty example, which Codex refuses".into());
            }
            Ok(words)
        })
        .collect()
}

/// `network_rule(host, protocol, decision, justification)`: a rule for Codex's network
/// proxy, not for commands. gate has no per-host rule of that kind, so it is dropped,
/// saying what in gate comes nearest.
fn network_rule(call: &Call, path: &Path, scope: Scope) -> Result<Entry, String> {
    let args = arguments(
        call,
        &["host", "protocol", "decision", "justification"],
        &["host", "protocol", "decision", "justification"],
        &["host", "protocol", "decision"],
    )?;
    let mut said = RuleKind::Allow;
    let mut host = "";
    let mut shown = Vec::new();
    for (name, value) in args {
        match name {
            "justification" => justification(value)?,
            _ => {
                let text = string_arg(name, value)?;
                shown.push(format!("{name}={value}"));
                if name == "host" {
                    host = text;
                }
                if name == "protocol"
                    && !matches!(
                        text,
                        "http"
                            | "https"
                            | "https_connect"
                            | "http-connect"
                            | "socks5_tcp"
                            | "socks5_udp"
                    )
                {
                    return Err(format!(
                        "network_rule protocol \"{text}\" is not one Codex knows (http, https, \
                         socks5_tcp, socks5_udp)"
                    ));
                }
                if name == "decision" {
                    said = match text {
                        "allow" => RuleKind::Allow,
                        "prompt" => RuleKind::Ask,
                        "forbidden" | "deny" => RuleKind::Deny,
                        other => {
                            return Err(format!(
                                "network_rule decision \"{other}\" is not one Codex knows"
                            ));
                        }
                    };
                }
            }
        }
    }
    Ok(Entry {
        source: Source {
            path: path.to_owned(),
            line: call.line,
            text: format!("network_rule({})", shown.join(", ")),
        },
        scope,
        said,
        outcome: Outcome::Dropped {
            why: format!(
                "a rule for Codex's network proxy (host {host}), not for commands: gate has no \
                 per-host rule; the nearest are `[sandbox] allow_domains` and `deny_domains` \
                 (docs/configuration.md)"
            ),
        },
    })
}

/// `host_executable(name, paths)`: which absolute paths Codex lets stand for a program
/// named in a rule, and nothing else (without one, any path does). It makes no rule:
/// gate's deny and ask rules match the program at any path (which the table says, for
/// such a program), and its allow rules match the name as written.
fn host_executable(call: &Call) -> Result<(String, Vec<String>), String> {
    let args = arguments(
        call,
        &["name", "paths"],
        &["name", "paths"],
        &["name", "paths"],
    )?;
    let mut program = "";
    let mut listed: &[Value] = &[];
    for (name, value) in args {
        match (name, value) {
            ("name", Value::Str(n)) if !n.is_empty() && !n.contains('/') => program = n,
            ("name", _) => return Err("host_executable's name must be a bare program name".into()),
            ("paths", Value::List(paths)) => listed = paths,
            _ => return Err("host_executable's paths must be a list of strings".into()),
        }
    }
    let mut paths = Vec::new();
    for path in listed {
        let Value::Str(path) = path else {
            return Err("host_executable's paths must be a list of strings".into());
        };
        if !(path.starts_with('/') || path.starts_with("~/")) {
            return Err(format!(
                "host_executable path `{path}` is neither absolute nor under ~/, which Codex refuses"
            ));
        }
        if path.rsplit('/').next() != Some(program) {
            return Err(format!(
                "host_executable path `{path}` does not end in `{program}`, which Codex refuses"
            ));
        }
        paths.push(path.clone());
    }
    Ok((program.to_owned(), paths))
}

#[cfg(test)]
mod tests;
