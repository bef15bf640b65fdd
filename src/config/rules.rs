//! A file's rule lists (`allow`, `deny`, `ask`, `unsandboxed`): each entry as written
//! (a string, or a table with its examples, `exact` and `from`), validated, placed in
//! its layer with its origin, and checked against its examples. Both readers of a file,
//! the TOML one and the quick one ([`super::lists`]), hand their entries here.

use std::ffi::OsStr;

use super::{
    ConfigError, FileCx, FileKind, Layer, Spanned, add_rule, expect_array, expect_bool, expect_str,
    type_error, unknown_key, utf8,
};
use crate::policy::Origin;
use toml::de::DeValue;

/// An example of a rule's (`match` or `not_match`), with where it was written.
pub(super) type Example<'v> = (&'v str, std::ops::Range<usize>, crate::policy::Expect);

/// One entry of `allow`, `deny` or `ask`, as written.
pub(super) struct RuleItem<'v> {
    pub(super) rule: &'v str,
    /// The line of the rule.
    pub(super) line: u32,
    pub(super) examples: Vec<Example<'v>>,
    /// An allow rule that matches only the command equal to it (`exact = true`).
    pub(super) exact: bool,
    /// Where `gate import` found the rule it wrote (`from = "FILE:LINE"`).
    pub(super) from: Option<&'v str>,
}

/// Whether a list's rules may be exact: allow rules only (and unsandboxed ones, which are
/// matched as allow rules are).
pub(super) fn may_be_exact(key: &str) -> bool {
    matches!(key, "allow" | "unsandboxed")
}

/// Whether `from` is one plain line (`FILE:LINE`), not blank.
pub(super) fn is_plain_from(text: &str) -> bool {
    if text.is_ascii() {
        // ASCII white space other than the space is a control character.
        let mut visible = false;
        for b in text.bytes() {
            if b.is_ascii_control() {
                return false;
            }
            visible |= b != b' ';
        }
        return visible;
    }
    !text.chars().any(char::is_control) && !text.trim().is_empty()
}

/// The keys a rule table may have.
const RULE_TABLE_KEYS: [&str; 5] = ["rule", "match", "not_match", "exact", "from"];

/// One entry of `allow`, `deny` or `ask`: a rule as a string, or a table with the rule
/// and its examples (`{ rule = "git push", match = [...], not_match = [...] }`), whether
/// it is exact (allow rules only) and where an import found it.
pub(super) fn rule_item<'v>(
    cx: &FileCx<'_>,
    key: &str,
    item: &'v Spanned<DeValue<'_>>,
) -> Result<RuleItem<'v>, ConfigError> {
    const EXPECTED: &str = "a string, or a table with `rule`, `match` and `not_match`";
    if let Some(rule) = item.get_ref().as_str() {
        return Ok(RuleItem {
            rule,
            line: cx.line_of(item.span().start),
            examples: Vec::new(),
            exact: false,
            from: None,
        });
    }
    let Some(table) = item.get_ref().as_table() else {
        return Err(type_error(cx, key, item, EXPECTED));
    };
    let mut rule = None;
    let mut examples = Vec::new();
    let mut exact = false;
    let mut from = None;
    for (k, v) in table {
        let sub: &str = k.get_ref();
        let path = format!("{key}.{sub}");
        let expect = match sub {
            "rule" => {
                rule = Some((expect_str(cx, &path, v)?, v.span()));
                continue;
            }
            "exact" => {
                exact = expect_bool(cx, &path, v)?;
                if exact && !may_be_exact(key) {
                    return Err(ConfigError::at(
                        &cx.origin(v.span()),
                        &path,
                        format!(
                            "only an allow rule can be exact; a {key} rule reads through the \
                             whole command text and holds for every spelling and every \
                             argument, and an exact one would let the rest through"
                        ),
                    ));
                }
                continue;
            }
            "from" => {
                let text = expect_str(cx, &path, v)?;
                if !is_plain_from(text) {
                    return Err(ConfigError::at(
                        &cx.origin(v.span()),
                        &path,
                        "`from` names where an import found the rule (FILE:LINE), on one \
                         line and not blank",
                    ));
                }
                from = Some(text);
                continue;
            }
            "match" => crate::policy::Expect::Match,
            "not_match" => crate::policy::Expect::NotMatch,
            _ => return Err(unknown_key(cx, k, &path, &RULE_TABLE_KEYS)),
        };
        let list = v
            .get_ref()
            .as_array()
            .ok_or_else(|| type_error(cx, &path, v, "an array of strings"))?;
        for example in list {
            examples.push((expect_str(cx, &path, example)?, example.span(), expect));
        }
    }
    match rule {
        Some((rule, span)) => Ok(RuleItem {
            rule,
            line: cx.line_of(span.start),
            examples,
            exact,
            from,
        }),
        None => Err(ConfigError::at(
            &cx.origin(item.span()),
            key,
            "a table here needs `rule`, the rule itself (and may have `match` and \
             `not_match`, its examples, `exact` and `from`)",
        )),
    }
}

/// Add one entry of a rule list (`allow`, `deny`, `ask`, `unsandboxed`) to the layer:
/// its origin (imported when it has `from`), the rule validated, its examples checked.
/// Both readers of a file come here, so a rule means the same whichever read it.
pub(super) fn take_rule(
    cx: &FileCx<'_>,
    layer: &mut Layer,
    name: &str,
    item: RuleItem<'_>,
) -> Result<(), ConfigError> {
    let RuleItem {
        rule,
        line,
        examples,
        exact,
        from,
    } = item;
    if from.is_some() && cx.kind == FileKind::Always {
        return Err(ConfigError::at(
            &cx.origin_at(line),
            name,
            "the always-allow file holds approvals, not imported rules \
             (`from`); import into config.toml",
        ));
    }
    let origin = cx.rule_origin(line, from);
    add_rule(layer, name, rule, &origin, exact)
        .map_err(|e| ConfigError::at(&origin, name, format!("`{}`: {e}", rule.escape_debug())))?;
    drop(origin);
    check_examples(cx, name, rule, exact, &examples)
}

/// Check a rule against the examples written beside it; a mismatch names the example's
/// line, the rule and the example.
fn check_examples(
    cx: &FileCx<'_>,
    key: &str,
    rule: &str,
    exact: bool,
    examples: &[Example<'_>],
) -> Result<(), ConfigError> {
    use crate::policy::RuleKind;
    let kind = match key {
        "deny" => RuleKind::Deny,
        "ask" => RuleKind::Ask,
        _ if exact => RuleKind::AllowExact,
        _ => RuleKind::Allow,
    };
    let Some((_, first, _)) = examples.first() else {
        return Ok(());
    };
    // The rule was added already, so it is valid.
    let alone = crate::policy::Alone::new(kind, rule)
        .map_err(|e| ConfigError::at(&cx.origin(first.clone()), key, e))?;
    for (example, span, expect) in examples {
        alone.check(rule, example, *expect).map_err(|why| {
            ConfigError::at(
                &cx.origin(span.clone()),
                &format!("{key}.{}", expect.key()),
                why,
            )
        })?;
    }
    Ok(())
}

/// A file's rule list (`allow`, `deny`, `ask`, `unsandboxed`).
pub(super) fn file_rules(
    cx: &FileCx<'_>,
    key: &'static str,
    value: &Spanned<DeValue<'_>>,
    _: Origin,
    layer: &mut Layer,
) -> Result<(), ConfigError> {
    let items = expect_array(cx, key, value)?;
    if key == "allow" {
        layer.allow.reserve(items.len());
    }
    for item in items {
        take_rule(cx, layer, key, rule_item(cx, key, item)?)?;
    }
    Ok(())
}

/// A rule given as an option (`--allow RULE`).
pub(super) fn text_rule(
    key: &'static str,
    value: &OsStr,
    origin: Origin,
    layer: &mut Layer,
) -> Result<(), ConfigError> {
    let rule = utf8(value, &origin, key)?;
    add_rule(layer, key, rule, &origin, false)
        .map_err(|e| ConfigError::at(&origin, key, format!("`{}`: {e}", rule.escape_debug())))
}
