//! Codex's `requirements.toml`, the administrator's file: its command rules are the
//! `[rules]` table's `prefix_rules`, each `{ pattern = [{ token = "…" } or
//! { any_of = ["…", …] }, …], decision = "prompt" | "prompt-user" | "forbidden",
//! justification = "…" }`. Codex refuses `allow` there (an administrator's rule can
//! only make Codex stricter) and a rule without a decision; so does this reader.
//!
//! The file's other keys (sandbox modes, approval policies, …) are not command rules
//! and are left alone, except one that changes which rules are in force: `ignore_rules`
//! set to true anywhere in the file, which [`ignores_rules`] reports.

use toml::de::{DeTable, DeValue};

use super::{CodexRule, Decision, Lines, Pattern};

/// A mistake in the file, with its 1-based line when known.
pub struct Mistake {
    pub line: Option<u32>,
    pub why: String,
}

fn at(line: u32, why: impl Into<String>) -> Mistake {
    Mistake {
        line: Some(line),
        why: why.into(),
    }
}

type Spanned<T> = toml::Spanned<T>;

/// The command rules of one `requirements.toml`.
pub fn rules(text: &str) -> Result<Vec<CodexRule>, Mistake> {
    let lines = Lines::new(text);
    let table = DeTable::parse(text).map_err(|e| Mistake {
        line: e.span().map(|s| lines.line_of(s.start)),
        why: format!(
            "malformed TOML: {}",
            e.message().lines().next().unwrap_or("").trim()
        ),
    })?;
    let Some(section) = table.get_ref().get("rules") else {
        return Ok(Vec::new());
    };
    let line = |v: &Spanned<DeValue<'_>>| lines.line_of(v.span().start);
    let section_table = section
        .get_ref()
        .as_table()
        .ok_or_else(|| at(line(section), "`rules` must be a table"))?;
    let mut out = Vec::new();
    for (key, value) in section_table {
        let name: &str = key.get_ref();
        if name != "prefix_rules" {
            return Err(at(
                line(value),
                format!(
                    "`rules.{name}` is not a key this import understands (only `prefix_rules`)"
                ),
            ));
        }
        let items = value.get_ref().as_array().ok_or_else(|| {
            at(
                line(value),
                "`rules.prefix_rules` must be an array of tables",
            )
        })?;
        if items.is_empty() {
            return Err(at(
                line(value),
                "`rules.prefix_rules` is empty, which Codex refuses",
            ));
        }
        for item in items {
            out.push(rule(item, line(item))?);
        }
    }
    Ok(out)
}

fn rule(item: &Spanned<DeValue<'_>>, line: u32) -> Result<CodexRule, Mistake> {
    let table = item
        .get_ref()
        .as_table()
        .ok_or_else(|| at(line, "each of `rules.prefix_rules` must be a table"))?;
    let mut pattern = None;
    let mut decision = None;
    let mut reviewer = None;
    let mut canonical = false;
    let mut shown = Vec::new();
    for (key, value) in table {
        let name: &str = key.get_ref();
        let v = value.get_ref();
        let string = |what: &str| {
            v.as_str()
                .map(str::to_owned)
                .ok_or_else(|| at(line, format!("`{what}` must be a string")))
        };
        match name {
            "pattern" => {
                let (p, text) = tokens(v, line)?;
                shown.push(format!("pattern = [{text}]"));
                pattern = Some(p);
            }
            "decision" => {
                let d = string("decision")?;
                shown.push(format!("decision = \"{d}\""));
                decision = Some(match d.as_str() {
                    "prompt" | "prompt-user" => Decision::Prompt,
                    "forbidden" => Decision::Forbidden,
                    "allow" => {
                        return Err(at(
                            line,
                            "decision \"allow\" in requirements.toml, which Codex refuses \
                             (an administrator's rules only make it stricter)",
                        ));
                    }
                    other => {
                        return Err(at(
                            line,
                            format!(
                                "decision \"{other}\" is not one Codex knows (prompt, \
                                 prompt-user, forbidden)"
                            ),
                        ));
                    }
                });
            }
            "justification" => {
                if string("justification")?.trim().is_empty() {
                    return Err(at(line, "an empty justification, which Codex refuses"));
                }
            }
            "reviewer" => reviewer = Some(string("reviewer")?),
            "canonical_matching" => {
                canonical = v
                    .as_bool()
                    .ok_or_else(|| at(line, "`canonical_matching` must be true or false"))?;
                if canonical {
                    shown.push("canonical_matching = true".to_owned());
                }
            }
            other => {
                return Err(at(
                    line,
                    format!(
                        "the key `{other}` in a prefix rule is not one this import understands \
                         (pattern, decision, justification, canonical_matching, reviewer)"
                    ),
                ));
            }
        }
    }
    let pattern = pattern.ok_or_else(|| at(line, "a prefix rule without `pattern`"))?;
    let decision = decision.ok_or_else(|| {
        at(
            line,
            "a prefix rule without `decision`, which Codex refuses in requirements.toml",
        )
    })?;
    if reviewer.is_some() && decision != Decision::Prompt {
        return Err(at(
            line,
            "a `reviewer` on a rule whose decision is not a prompt, which Codex refuses",
        ));
    }
    Ok(CodexRule {
        line,
        text: format!("{{ {} }}", shown.join(", ")),
        pattern,
        decision,
        defaulted: false,
        matches: Vec::new(),
        not_matches: Vec::new(),
        canonical,
    })
}

/// A pattern's tokens, and the pattern as it was written (for the table).
fn tokens(value: &DeValue<'_>, line: u32) -> Result<(Pattern, String), Mistake> {
    let items = value
        .as_array()
        .ok_or_else(|| at(line, "`pattern` must be an array of tables"))?;
    if items.is_empty() {
        return Err(at(line, "an empty `pattern`, which Codex refuses"));
    }
    let mut pattern = Vec::new();
    let mut shown = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let bad = |why: &str| at(line, format!("pattern token {}: {why}", i + 1));
        let table = item
            .get_ref()
            .as_table()
            .ok_or_else(|| bad("must be a table with `token` or `any_of`"))?;
        let mut token = None;
        let mut any_of = None;
        for (key, v) in table {
            match &**key.get_ref() {
                "token" => {
                    token = Some(
                        v.get_ref()
                            .as_str()
                            .ok_or_else(|| bad("`token` must be a string"))?
                            .to_owned(),
                    );
                }
                "any_of" => {
                    let list = v
                        .get_ref()
                        .as_array()
                        .ok_or_else(|| bad("`any_of` must be an array of strings"))?;
                    let mut alts = Vec::new();
                    for alt in list {
                        alts.push(
                            alt.get_ref()
                                .as_str()
                                .ok_or_else(|| bad("`any_of` must be an array of strings"))?
                                .to_owned(),
                        );
                    }
                    any_of = Some(alts);
                }
                other => {
                    return Err(bad(&format!(
                        "the key `{other}` is not `token` or `any_of`"
                    )));
                }
            }
        }
        let alts = match (token, any_of) {
            (Some(t), None) => {
                shown.push(format!("{{ token = {:?} }}", t));
                vec![t]
            }
            (None, Some(alts)) => {
                shown.push(format!("{{ any_of = {:?} }}", alts));
                alts
            }
            _ => return Err(bad("needs exactly one of `token` and `any_of`")),
        };
        if alts.is_empty() {
            return Err(bad("an empty `any_of`, which Codex refuses"));
        }
        if alts.iter().any(|a| a.trim().is_empty()) {
            return Err(bad("an empty token, which Codex refuses"));
        }
        pattern.push(alts);
    }
    Ok((pattern, shown.join(", ")))
}

/// Whether the file sets `ignore_rules = true` (at any depth): Codex then leaves the
/// person's and the projects' `.rules` files out, so none of their allow rules may be
/// imported. An unreadable file says nothing here; [`rules`] reports it.
pub fn ignores_rules(text: &str) -> bool {
    fn walk(table: &DeTable<'_>) -> bool {
        table.iter().any(|(k, v)| {
            (&**k.get_ref() == "ignore_rules" && v.get_ref().as_bool() == Some(true))
                || value(v.get_ref())
        })
    }
    fn value(v: &DeValue<'_>) -> bool {
        match v {
            DeValue::Table(t) => walk(t),
            DeValue::Array(a) => a.iter().any(|i| value(i.get_ref())),
            _ => false,
        }
    }
    DeTable::parse(text).is_ok_and(|t| walk(t.get_ref()))
}
