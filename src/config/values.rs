//! The values every layer shares, checked the same way whichever layer gives them: a
//! level, a port, a timeout, a session id, a path given as text, the approver user,
//! the kernel features `sandbox.require` names, and a rule added to its list; and the
//! small readers the settings table builds its entries from (a file's value or a
//! variable's text, checked, into a layer).

use std::ffi::OsStr;
use std::fmt;
use std::path::PathBuf;

use toml::de::DeValue;

use super::{
    ConfigError, FileCx, Layer, MAX_TIMEOUT, Spanned, expect_array, expect_int, expect_str,
};
use crate::policy::{Level, Origin, RuleError};

pub(super) fn parse_level(text: &str) -> Result<Level, String> {
    Level::parse(text).ok_or_else(|| {
        format!(
            "`{}` is not a level; use deny, ask, safe or full",
            text.escape_debug()
        )
    })
}

pub(super) fn check_port(port: i64) -> Result<u16, String> {
    u16::try_from(port)
        .ok()
        .filter(|p| *p != 0)
        .ok_or_else(|| format!("`{port}` is not a TCP port (1 to 65535)"))
}

pub(super) fn check_timeout(seconds: i64) -> Result<u32, String> {
    u32::try_from(seconds)
        .ok()
        .filter(|s| (1..=MAX_TIMEOUT).contains(s))
        .ok_or_else(|| {
            format!("the timeout must be between 1 and {MAX_TIMEOUT} seconds, not {seconds}")
        })
}

/// Validate a rule and add it to its layer's set (`exact`: an allow or unsandboxed
/// rule that matches only the command equal to it); the caller names the location.
pub(super) fn add_rule(
    layer: &mut Layer,
    key: &str,
    rule: &str,
    origin: &Origin,
    exact: bool,
) -> Result<(), RuleError> {
    match key {
        "deny" => layer.deny.add_with(rule, origin),
        "ask" => layer.ask.add_with(rule, origin),
        "unsandboxed" => layer.unsandboxed.add_with(rule, origin, exact),
        _ => layer.allow.add_with(rule, origin, exact),
    }
}

/// A session id names files and appears in messages: short and plain.
pub(crate) fn check_session(id: &str) -> Result<(), String> {
    if crate::approval::protocol::is_plain_id(id) {
        Ok(())
    } else {
        Err(format!(
            "`{}` is not a session id: use 1 to 128 letters, digits or ._:@+-",
            id.escape_debug()
        ))
    }
}

pub(super) fn utf8<'a>(
    value: &'a OsStr,
    origin: &Origin,
    key: &str,
) -> Result<&'a str, ConfigError> {
    value
        .to_str()
        .ok_or_else(|| ConfigError::at(origin, key, "the value is not valid UTF-8"))
}

pub(super) fn non_empty_path(
    value: &OsStr,
    origin: &Origin,
    key: &str,
) -> Result<PathBuf, ConfigError> {
    if value.is_empty() {
        return Err(ConfigError::at(origin, key, "the path is empty"));
    }
    Ok(PathBuf::from(value))
}

/// A path that must not depend on the directory a command happens to run in.
pub(super) fn absolute_path(
    value: &OsStr,
    origin: &Origin,
    key: &str,
) -> Result<PathBuf, ConfigError> {
    let path = non_empty_path(value, origin, key)?;
    if !path.is_absolute() {
        return Err(ConfigError::at(
            origin,
            key,
            format!(
                "`{}` must be an absolute path (a relative one would follow each command's \
                 working directory)",
                path.display()
            ),
        ));
    }
    Ok(path)
}

/// `approval.approver`: the user whose process must be listening on the approval socket,
/// named in a configuration file by name or uid. Resolved only when a request is about
/// to go out (`ApproverUser::uid`), so a name the system does not know refuses the
/// request rather than the configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApproverUser {
    Name(String),
    Uid(u32),
}

impl ApproverUser {
    /// A user name as `useradd` accepts one, or a uid in digits.
    pub(crate) fn parse(text: &str) -> Result<ApproverUser, String> {
        if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
            return text
                .parse()
                .map(ApproverUser::Uid)
                .map_err(|_| format!("{text} is not a uid"));
        }
        let valid = !text.is_empty()
            && text.len() <= 32
            && !text.starts_with('-')
            && text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'$'));
        if valid {
            Ok(ApproverUser::Name(text.to_owned()))
        } else {
            Err(format!(
                "`{}` is not a user name or a uid",
                text.escape_debug()
            ))
        }
    }

    /// The uid, looking a name up in the system's user database.
    pub(crate) fn uid(&self) -> Result<u32, String> {
        match self {
            ApproverUser::Uid(uid) => Ok(*uid),
            ApproverUser::Name(name) => match nix::unistd::User::from_name(name) {
                Ok(Some(user)) => Ok(user.uid.as_raw()),
                Ok(None) => Err(format!(
                    "approval.approver names the user {name}, whom this system does not know"
                )),
                Err(e) => Err(format!(
                    "cannot look up the user {name} (approval.approver): {e}"
                )),
            },
        }
    }
}

impl fmt::Display for ApproverUser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApproverUser::Name(name) => f.write_str(name),
            ApproverUser::Uid(uid) => write!(f, "uid {uid}"),
        }
    }
}

/// The graded features one entry of `sandbox.require` names: one by its key, or `all`.
pub(super) fn required_features(text: &str) -> Result<Vec<crate::sandbox::Feature>, String> {
    use crate::sandbox::{Feature, GRADED};
    if text == "all" {
        return Ok(GRADED.to_vec());
    }
    Feature::from_key(text).map(|f| vec![f]).ok_or_else(|| {
        format!(
            "`{}` is not a kernel feature gate can require; the features are {}, or `all`",
            text.escape_debug(),
            GRADED
                .iter()
                .filter_map(|f| f.key())
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

// ---------------------------------------------------------------------------------------
// Reading a value into a layer, from a file or as text.

/// Set a layer's value.
pub(super) fn set<T>(
    slot: &mut Option<(T, Origin)>,
    value: T,
    origin: Origin,
) -> Result<(), ConfigError> {
    *slot = Some((value, origin));
    Ok(())
}

/// Add an entry to a layer's list.
pub(super) fn push<T>(
    list: &mut Vec<(T, Origin)>,
    value: T,
    origin: Origin,
) -> Result<(), ConfigError> {
    list.push((value, origin));
    Ok(())
}

/// A file's string checked by `check`, whose error names the value's place.
pub(super) fn file_checked<T>(
    cx: &FileCx<'_>,
    key: &'static str,
    value: &Spanned<DeValue<'_>>,
    origin: &Origin,
    check: fn(&str) -> Result<T, String>,
) -> Result<T, ConfigError> {
    check(expect_str(cx, key, value)?).map_err(|e| ConfigError::at(origin, key, e))
}

/// A variable's or an option's text checked by `check`.
pub(super) fn text_checked<T>(
    key: &'static str,
    value: &OsStr,
    origin: &Origin,
    check: fn(&str) -> Result<T, String>,
) -> Result<T, ConfigError> {
    check(utf8(value, origin, key)?).map_err(|e| ConfigError::at(origin, key, e))
}

/// Each entry of a file's list, read by `read` and added to the layer's list.
pub(super) fn file_list<T>(
    cx: &FileCx<'_>,
    key: &'static str,
    value: &Spanned<DeValue<'_>>,
    read: impl Fn(&Spanned<DeValue<'_>>, &Origin) -> Result<T, ConfigError>,
    list: &mut Vec<(T, Origin)>,
) -> Result<(), ConfigError> {
    for item in expect_array(cx, key, value)? {
        let origin = cx.origin(item.span());
        let entry = read(item, &origin)?;
        list.push((entry, origin));
    }
    Ok(())
}

/// A port in a file: an integer.
pub(super) fn file_port(
    cx: &FileCx<'_>,
    key: &'static str,
    item: &Spanned<DeValue<'_>>,
    origin: &Origin,
) -> Result<u16, ConfigError> {
    check_port(expect_int(cx, key, item)?).map_err(|e| ConfigError::at(origin, key, e))
}

/// A port as text: digits.
pub(super) fn text_port(
    key: &'static str,
    value: &OsStr,
    origin: &Origin,
) -> Result<u16, ConfigError> {
    let text = utf8(value, origin, key)?;
    text.trim()
        .parse::<i64>()
        .map_err(|_| format!("`{}` is not a TCP port (1 to 65535)", text.escape_debug()))
        .and_then(check_port)
        .map_err(|e| ConfigError::at(origin, key, e))
}
