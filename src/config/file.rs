//! Reading one configuration file's text into a [`Layer`]: which file it is, line
//! numbers for every message, the TOML reader and the key lists a file is checked
//! against, and the typed readers of a value (`expect_*`) whose errors name the file,
//! line and key. What each key means is the settings table's ([`super::SETTINGS`]);
//! the rule lists are [`super::rules`]'. Pure: text in, a layer out.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use toml::de::{DeTable, DeValue};

use super::{ConfigError, Layer, lists, table};
use crate::policy::Origin;

/// Which file a layer comes from: only the system layer (the system file and its
/// drop-ins) may lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    System,
    User,
    /// A project's `.gate.toml` (see [`crate::project`]).
    Project,
    /// The always-allow file beside the user file (`ALWAYS_FILE`): lasting approvals,
    /// `allow` rules only.
    Always,
}

/// The always-allow file's name, beside the user file (`~/.config/gate/always.toml`):
/// the lasting allow rules a person adds with `gate approve --always` or in `gate
/// watch`, which the broker writes (docs/approvals.md#always-allow).
pub(crate) const ALWAYS_FILE: &str = "always.toml";

/// Byte offsets of line starts, to turn TOML spans into 1-based line numbers (in gate's
/// files, and in the agents' files `gate import` reads).
pub struct Lines(Vec<usize>);

impl Lines {
    pub(crate) fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Lines(starts)
    }

    /// The 1-based line of the byte at `offset`.
    pub(crate) fn line_of(&self, offset: usize) -> u32 {
        let line = match self.0.binary_search(&offset) {
            Ok(i) => i + 1,
            Err(i) => i,
        };
        u32::try_from(line).unwrap_or(u32::MAX)
    }
}

/// `text` as a TOML basic string, for the files gate writes (imported rules, lasting
/// approvals, trust records): quotes, backslashes, tabs and other control characters
/// escaped, so the file reads back as exactly `text`.
pub(crate) fn toml_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

pub(super) struct FileCx<'a> {
    pub(super) path: Arc<Path>,
    pub(super) text: &'a str,
    /// Where each line starts, found when first needed (the quick reader counts lines
    /// as it goes, and never needs them).
    pub(super) lines: std::cell::OnceCell<Lines>,
    pub(super) home: Option<&'a Path>,
    pub(super) kind: FileKind,
    /// The origin of the file's last rule, which the next one's is made from: most
    /// often only its lines change ([`FileCx::rule_origin`]).
    pub(super) last_origin: std::cell::RefCell<Option<Origin>>,
}

impl<'a> FileCx<'a> {
    pub(super) fn new(path: &Path, text: &'a str, kind: FileKind, home: Option<&'a Path>) -> Self {
        FileCx {
            path: Arc::from(path),
            text,
            lines: std::cell::OnceCell::new(),
            home,
            kind,
            last_origin: std::cell::RefCell::new(None),
        }
    }

    pub(super) fn lines(&self) -> &Lines {
        self.lines.get_or_init(|| Lines::new(self.text))
    }

    /// The 1-based line of the byte at `offset`.
    pub(super) fn line_of(&self, offset: usize) -> u32 {
        self.lines().line_of(offset)
    }

    pub(super) fn origin(&self, span: std::ops::Range<usize>) -> Origin {
        self.origin_at(self.line_of(span.start))
    }

    /// The origin of a rule on `line`, imported `from` where it says: the last rule's,
    /// with its lines changed when only they differ (an imported policy's hundreds of
    /// rules share a file and an imported-from file, and are read before every
    /// command). Held until the next rule's.
    pub(super) fn rule_origin(
        &self,
        line: u32,
        from: Option<&str>,
    ) -> std::cell::RefMut<'_, Origin> {
        let mut last = self.last_origin.borrow_mut();
        let relined = match (last.as_mut(), from) {
            (Some(Origin::File { line: at, .. } | Origin::Always { line: at, .. }), None) => {
                *at = line;
                true
            }
            (
                Some(Origin::Imported {
                    line: at,
                    from: was,
                    ..
                }),
                Some(from),
            ) => {
                let relined = was.relined(from);
                if relined {
                    *at = line;
                }
                relined
            }
            _ => false,
        };
        if !relined {
            *last = Some(match from {
                None => self.origin_at(line),
                Some(from) => Origin::Imported {
                    path: self.path.clone(),
                    line,
                    from: crate::policy::ImportedFrom::new(from, None),
                },
            });
        }
        std::cell::RefMut::map(last, |last| last.as_mut().expect("set above"))
    }

    pub(super) fn origin_at(&self, line: u32) -> Origin {
        let path = self.path.clone();
        match self.kind {
            FileKind::Always => Origin::Always { path, line },
            FileKind::System | FileKind::User | FileKind::Project => Origin::File { path, line },
        }
    }
}

pub(super) type Spanned<T> = toml::Spanned<T>;

/// Parse one configuration file's text.
pub fn parse_file(
    path: &Path,
    text: &str,
    kind: FileKind,
    home: Option<&Path>,
) -> Result<Layer, ConfigError> {
    let cx = FileCx::new(path, text, kind, home);
    match lists::read(&cx, text) {
        Some(layer) => Ok(layer),
        None => parse_toml(&cx, text),
    }
}

/// Read a file's text with the TOML parser: any file, and every message about one.
pub(super) fn parse_toml(cx: &FileCx<'_>, text: &str) -> Result<Layer, ConfigError> {
    let path = &cx.path;
    let table = DeTable::parse(text).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        let line = cx.line_of(span.start);
        let line_text = text
            .lines()
            .nth(line.saturating_sub(1) as usize)
            .unwrap_or("");
        let key = line_text
            .split_once('=')
            .map(|(k, _)| k.trim())
            .filter(|k| !k.is_empty() && !k.starts_with('#'));
        let what = e.message().lines().next().unwrap_or("invalid TOML").trim();
        ConfigError(match key {
            Some(key) => format!(
                "{}:{line}: key `{key}`: malformed TOML: {what}",
                path.display()
            ),
            None => format!("{}:{line}: malformed TOML: {what}", path.display()),
        })
    })?;
    let mut layer = Layer::default();
    walk_top(cx, table.get_ref(), &mut layer)?;
    Ok(layer)
}

pub const TOP_KEYS: &[&str] = &[
    "level",
    "shell",
    "allow",
    "deny",
    "ask",
    "unsandboxed",
    "compound",
    "readonly",
    "readonly_rules",
    "lock",
    "approval",
    "audit",
    "sandbox",
];
pub const SANDBOX_KEYS: &[&str] = &[
    "write",
    "deny_read",
    "network",
    "net_connect",
    "net_bind",
    "allow_domains",
    "deny_domains",
    "resolve",
    "best_effort",
    "unix_sockets",
    "require",
];
pub const APPROVAL_KEYS: &[&str] = &["socket", "approver", "tty", "timeout"];
pub const AUDIT_KEYS: &[&str] = &["log", "journal", "required"];

pub(super) fn unknown_key(
    cx: &FileCx<'_>,
    key: &Spanned<toml::de::DeString<'_>>,
    path: &str,
    known: &[&str],
) -> ConfigError {
    ConfigError::at(
        &cx.origin(key.span()),
        path,
        format!(
            "unknown key; the keys here are {}",
            known
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    )
}

/// The tables of a file, each with the keys it may hold.
pub(super) const TABLES: [(&str, &[&str]); 3] = [
    ("approval", APPROVAL_KEYS),
    ("audit", AUDIT_KEYS),
    ("sandbox", SANDBOX_KEYS),
];

fn walk_top(cx: &FileCx<'_>, table: &DeTable<'_>, layer: &mut Layer) -> Result<(), ConfigError> {
    for (key, value) in table {
        let name: &str = key.get_ref();
        if cx.kind == FileKind::Always && name != "allow" {
            return Err(ConfigError::at(
                &cx.origin(value.span()),
                name,
                "the always-allow file holds only `allow` rules (lasting approvals); put \
                 other settings in config.toml beside it",
            ));
        }
        match TABLES.iter().find(|(t, _)| *t == name) {
            Some((_, keys)) => {
                for (sub_key, sub_value) in expect_table(cx, name, value)? {
                    let sub: &str = sub_key.get_ref();
                    if !table::read_file_key(cx, Some(name), sub, sub_value, layer)? {
                        return Err(unknown_key(cx, sub_key, &format!("{name}.{sub}"), keys));
                    }
                }
            }
            None => {
                if !table::read_file_key(cx, None, name, value, layer)? {
                    return Err(unknown_key(cx, key, name, TOP_KEYS));
                }
            }
        }
    }
    Ok(())
}

pub(super) fn type_error(
    cx: &FileCx<'_>,
    key: &str,
    value: &Spanned<DeValue<'_>>,
    expected: &str,
) -> ConfigError {
    ConfigError::at(
        &cx.origin(value.span()),
        key,
        format!("expected {expected}, found {}", value.get_ref().type_str()),
    )
}

pub(super) fn expect_str<'v>(
    cx: &FileCx<'_>,
    key: &str,
    value: &'v Spanned<DeValue<'_>>,
) -> Result<&'v str, ConfigError> {
    value
        .get_ref()
        .as_str()
        .ok_or_else(|| type_error(cx, key, value, "a string"))
}

pub(super) fn expect_bool(
    cx: &FileCx<'_>,
    key: &str,
    value: &Spanned<DeValue<'_>>,
) -> Result<bool, ConfigError> {
    value
        .get_ref()
        .as_bool()
        .ok_or_else(|| type_error(cx, key, value, "true or false"))
}

pub(super) fn expect_int(
    cx: &FileCx<'_>,
    key: &str,
    value: &Spanned<DeValue<'_>>,
) -> Result<i64, ConfigError> {
    let int = value
        .get_ref()
        .as_integer()
        .ok_or_else(|| type_error(cx, key, value, "an integer"))?;
    let digits: String = int.as_str().chars().filter(|&c| c != '_').collect();
    let (negative, digits) = match digits.strip_prefix('-') {
        Some(rest) => (true, rest.to_owned()),
        None => (
            false,
            digits.strip_prefix('+').unwrap_or(&digits).to_owned(),
        ),
    };
    let digits = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0o"))
        .or_else(|| digits.strip_prefix("0b"))
        .unwrap_or(&digits);
    let magnitude = i64::from_str_radix(digits, int.radix()).map_err(|_| {
        ConfigError::at(&cx.origin(value.span()), key, "the integer is out of range")
    })?;
    Ok(if negative { -magnitude } else { magnitude })
}

pub(super) fn expect_array<'v, 'i>(
    cx: &FileCx<'_>,
    key: &str,
    value: &'v Spanned<DeValue<'i>>,
) -> Result<&'v [Spanned<DeValue<'i>>], ConfigError> {
    value
        .get_ref()
        .as_array()
        .map(|a| &a[..])
        .ok_or_else(|| type_error(cx, key, value, "an array of strings"))
}

pub(super) fn expect_table<'v, 'i>(
    cx: &FileCx<'_>,
    key: &str,
    value: &'v Spanned<DeValue<'i>>,
) -> Result<&'v DeTable<'i>, ConfigError> {
    value
        .get_ref()
        .as_table()
        .ok_or_else(|| type_error(cx, key, value, "a table"))
}

/// A path in a file: absolute, or `~/…` under the home directory.
pub(super) fn expect_path(
    cx: &FileCx<'_>,
    key: &str,
    value: &Spanned<DeValue<'_>>,
) -> Result<PathBuf, ConfigError> {
    let text = expect_str(cx, key, value)?;
    let origin = cx.origin(value.span());
    if let Some(rest) = text.strip_prefix("~/") {
        return match cx.home {
            Some(home) => Ok(home.join(rest)),
            None => Err(ConfigError::at(&origin, key, "`~` needs HOME to be set")),
        };
    }
    let path = PathBuf::from(text);
    if !path.is_absolute() {
        return Err(ConfigError::at(
            &origin,
            key,
            format!("`{text}` must be an absolute path or start with ~/"),
        ));
    }
    Ok(path)
}
