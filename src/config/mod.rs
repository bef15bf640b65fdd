//! Configuration: the layers, the system lock, and validation with exact locations.
//!
//! Layers, each overriding the one before: built-in defaults → the system file
//! (`/etc/gate/config.toml`) → the user file (`$XDG_CONFIG_HOME/gate/config.toml`, or
//! `~/.config/gate/config.toml`; `GATE_CONFIG` / `--config` name another file instead) →
//! `GATE_*` environment variables → command-line options. Rules accumulate over the
//! layers; every other key is replaced by a later layer.
//!
//! When the system file says `lock = true`, later layers may only make the policy
//! stricter; anything else is an error that names the layer and key, and nothing runs.
//! Every error names its source (file and line, variable or option) and key.
//!
//! Parsing and merging are pure (text in, [`Settings`] out). [`load`] is the only part
//! that reads files and the environment.

#![forbid(unsafe_code)]

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use toml::de::{DeTable, DeValue};

mod lists;
mod load;
mod merge;
mod table;
mod values;

#[cfg(test)]
use load::read_optional;
pub use load::{
    Environment, MAX_CONFIG_BYTES, file_layers, is_drop_in, load, load_from, read_config_file,
};
use merge::Merging;
#[cfg(test)]
use merge::stricter_level;
pub use merge::{Loosening, grants, merge, under_lock};
pub use values::{ApproverUser, check_session};
use values::{
    absolute_path, add_rule, check_port, check_timeout, non_empty_path, parse_level,
    required_features, utf8,
};

pub use table::{Arg, SETTINGS, Setting, by_flag, env_layer, flag_layer};

use crate::invocation::GateArgs;
use crate::policy::{AllowRules, AskRules, DenyRules, Level, Origin, Policy};

/// The system configuration file. Packagers may move it at build time.
pub const SYSTEM_CONFIG: &str = match option_env!("GATE_SYSTEM_CONFIG") {
    Some(path) => path,
    None => "/etc/gate/config.toml",
};

/// The system layer's drop-in directory, `config.d` beside the system file (so a
/// packager who moves the one moves the other): `/etc/gate/config.d`.
pub fn system_drop_ins() -> PathBuf {
    Path::new(SYSTEM_CONFIG).with_file_name("config.d")
}

/// The user layer's drop-in directory under a configuration home (`$XDG_CONFIG_HOME`):
/// `gate/config.d`, read after the user file, where `gate import` writes.
pub fn user_drop_ins(config_home: &Path) -> PathBuf {
    config_home.join("gate/config.d")
}

/// The default level: `ask`. Nothing runs that no rule allows and nobody approved, so a
/// fresh install is safe even before anyone configures it, and unlike `deny` it still
/// runs the commands a user has allowed; unlike `safe` it needs no kernel support.
pub const DEFAULT_LEVEL: Level = Level::Ask;
/// The default real shell for `-c`: POSIX sh, like `sh -c`.
pub const DEFAULT_SHELL: &str = "/bin/sh";
/// Seconds to wait for an approver: below the two minutes agents give a tool call, so the
/// model hears "denied" rather than its own timeout.
pub const DEFAULT_TIMEOUT: u32 = 60;
pub const MAX_TIMEOUT: u32 = 86_400;

/// Where audit records go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuditLog {
    /// `$XDG_STATE_HOME/gate/audit.jsonl`, or `~/.local/state/gate/audit.jsonl`.
    Default,
    Off,
    Path(PathBuf),
}

/// Whether audit records also go to the system log (docs/audit.md#the-system-journal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditJournal {
    Off,
    /// journald's native socket; a record it does not take is a record not written.
    On,
    /// journald if its socket is there, else syslog's `/dev/log` if that is there, else
    /// nothing.
    Auto,
    /// syslog's `/dev/log`; a record it does not take is a record not written.
    Syslog,
}

impl AuditJournal {
    pub const VALUES: &[(&str, AuditJournal)] = &[
        ("off", AuditJournal::Off),
        ("on", AuditJournal::On),
        ("auto", AuditJournal::Auto),
        ("syslog", AuditJournal::Syslog),
    ];

    fn parse(text: &str) -> Result<AuditJournal, String> {
        Self::VALUES
            .iter()
            .find(|(name, _)| *name == text)
            .map(|(_, value)| *value)
            .ok_or_else(|| {
                format!(
                    "`{}` is not one of \"off\", \"on\", \"auto\", \"syslog\"",
                    text.escape_debug()
                )
            })
    }

    pub fn as_str(self) -> &'static str {
        Self::VALUES
            .iter()
            .find(|(_, value)| *value == self)
            .map_or("off", |(name, _)| name)
    }
}

/// Everything gate needs to decide and run, merged from all layers.
#[derive(Debug, Clone)]
pub struct Settings {
    pub policy: Policy,
    pub shell: Option<(PathBuf, Origin)>,
    pub audit_log: AuditLog,
    pub audit_journal: AuditJournal,
    pub audit_required: bool,
    pub socket: Option<PathBuf>,
    /// `approval.approver`: the user the approver on the socket must run as, when it is
    /// not this user (a separate approver user; see docs/approvals.md).
    pub approver: Option<ApproverUser>,
    pub tty: bool,
    pub timeout: u32,
    pub session: Option<String>,
    pub sandbox: SandboxSettings,
    /// The system file or drop-in that locks the configuration, if one does.
    pub locked_by: Option<Arc<Path>>,
    /// The always-allow file this configuration reads lasting approvals from, when it
    /// would take new ones there: beside the default user file, and `None` when the user
    /// file is another (`--config`, `GATE_CONFIG`), none is read (`--no-config`) or a
    /// lock forbids adding allow rules.
    pub always_file: Option<PathBuf>,
    /// Configuration files that were read, in order.
    pub files: Vec<PathBuf>,
    /// Where the system layer was looked for: the installed places, or the candidates
    /// `gate check`/`gate doctor` were given.
    pub system: SystemPlaces,
    /// Where the policy's switches were set, for `gate rules` (decisions never read it).
    pub switch_origins: SwitchOrigins,
    /// The project file in force and whether it is trusted (its layer is merged; this
    /// is for `gate rules` and `gate doctor`). Not in `files`: those the sandbox
    /// protects, and a protected file in the workspace would stop the command creating
    /// files beside it.
    pub project: Option<crate::project::ProjectFile>,
}

/// Where the system layer comes from: its file and its drop-in directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SystemPlaces {
    pub file: PathBuf,
    pub drop_ins: PathBuf,
    /// The file is a candidate (`--system-file`), not the installed one.
    pub candidate_file: bool,
    /// The drop-in directory is a candidate (`--system-drop-ins`).
    pub candidate_drop_ins: bool,
}

impl SystemPlaces {
    /// The installed system file and drop-in directory.
    pub fn installed() -> Self {
        SystemPlaces {
            file: PathBuf::from(SYSTEM_CONFIG),
            drop_ins: system_drop_ins(),
            candidate_file: false,
            candidate_drop_ins: false,
        }
    }

    /// The installed places, or the candidates `args` names instead.
    pub fn of(args: &GateArgs) -> Self {
        let mut places = SystemPlaces::installed();
        if let Some(file) = &args.system_file {
            places.file = PathBuf::from(file);
            places.candidate_file = true;
        }
        if let Some(dir) = &args.system_drop_ins {
            places.drop_ins = PathBuf::from(dir);
            places.candidate_drop_ins = true;
        }
        places
    }
}

/// Where each of the policy's on/off settings was last set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchOrigins {
    pub compound: Origin,
    pub readonly: Origin,
    pub readonly_rules: Origin,
}

impl Default for SwitchOrigins {
    fn default() -> Self {
        SwitchOrigins {
            compound: Origin::BuiltIn,
            readonly: Origin::BuiltIn,
            readonly_rules: Origin::BuiltIn,
        }
    }
}

/// The `safe` level's sandbox, as configured (the defaults are added when it is built).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxSettings {
    /// More writable paths. From options they may be relative to the working directory.
    pub write: Vec<PathBuf>,
    /// More paths to hide.
    pub deny_read: Vec<PathBuf>,
    /// Allow all network access.
    pub network: bool,
    /// Allow TCP connections to these ports only.
    pub net_connect: Vec<u16>,
    /// Allow binding these TCP ports only.
    pub net_bind: Vec<u16>,
    /// Reach these domains through gate's proxy (patterns, see [`crate::netproxy`]).
    pub allow_domains: Vec<String>,
    /// Never reach these domains through the proxy, whatever `allow_domains` says.
    pub deny_domains: Vec<String>,
    /// Names the proxy resolves to the user's own addresses (`NAME=ADDRESS`), which
    /// may then be private or loopback ones.
    pub resolve: Vec<String>,
    /// Run even when the kernel cannot enforce everything.
    pub best_effort: bool,
    /// Allow Unix sockets (any reachable by path: D-Bus, Docker, ssh-agent).
    pub unix_sockets: bool,
    /// Graded kernel features that must be the kernel's own: without one, nothing
    /// runs (see [`crate::sandbox::grade`]).
    pub require: Vec<crate::sandbox::Feature>,
}

/// A configuration problem: gate's own failure, exit 125, nothing runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(String);

impl ConfigError {
    /// An error whose text says all: where, what, and what to do.
    pub fn new(text: impl Into<String>) -> Self {
        ConfigError(text.into())
    }

    fn at(origin: &Origin, key: &str, problem: impl fmt::Display) -> Self {
        match origin {
            Origin::File { .. } | Origin::Imported { .. } | Origin::Always { .. } => {
                ConfigError(format!("{origin}: key `{key}`: {problem}"))
            }
            _ => ConfigError(format!("{origin}: {problem}")),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

/// One layer's settings, each with where it came from.
#[derive(Debug, Clone, Default)]
pub struct Layer {
    pub level: Option<(Level, Origin)>,
    pub shell: Option<(PathBuf, Origin)>,
    pub allow: AllowRules,
    pub deny: DenyRules,
    pub ask: AskRules,
    pub unsandboxed: AllowRules,
    pub lock: Option<(bool, Origin)>,
    pub compound: Option<(bool, Origin)>,
    pub readonly: Option<(bool, Origin)>,
    pub readonly_rules: Option<(bool, Origin)>,
    pub audit_log: Option<(AuditLog, Origin)>,
    pub audit_journal: Option<(AuditJournal, Origin)>,
    pub audit_required: Option<(bool, Origin)>,
    pub socket: Option<(PathBuf, Origin)>,
    pub approver: Option<(ApproverUser, Origin)>,
    pub tty: Option<(bool, Origin)>,
    pub timeout: Option<(u32, Origin)>,
    pub session: Option<(String, Origin)>,
    pub write: Vec<(PathBuf, Origin)>,
    pub deny_read: Vec<(PathBuf, Origin)>,
    pub network: Option<(bool, Origin)>,
    pub net_connect: Vec<(u16, Origin)>,
    pub net_bind: Vec<(u16, Origin)>,
    pub allow_domains: Vec<(String, Origin)>,
    pub deny_domains: Vec<(String, Origin)>,
    pub resolve: Vec<(String, Origin)>,
    pub best_effort: Option<(bool, Origin)>,
    pub unix_sockets: Option<(bool, Origin)>,
    pub require: Vec<(crate::sandbox::Feature, Origin)>,
    /// A project file nobody trusted: like a layer under a lock, it may only tighten.
    pub untrusted: Option<Untrusted>,
}

/// Why a project file's layer may only tighten, for the message that refuses what it
/// would loosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Untrusted {
    pub file: Arc<Path>,
    /// How it stands, as words after "the project file": "is not trusted", "changed
    /// since it was trusted on …".
    pub why: String,
}

// ---------------------------------------------------------------------------------------
// Files.

/// Which file a layer comes from: only the system layer (the system file and its
/// drop-ins) may lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    System,
    User,
    /// A project's `.gate.toml` (see [`crate::project`]).
    Project,
    /// The always-allow file beside the user file ([`ALWAYS_FILE`]): lasting approvals,
    /// `allow` rules only.
    Always,
}

/// The always-allow file's name, beside the user file (`~/.config/gate/always.toml`):
/// the lasting allow rules a person adds with `gate approve --always` or in `gate
/// watch`, which the broker writes (docs/approvals.md#always-allow).
pub const ALWAYS_FILE: &str = "always.toml";

/// Byte offsets of line starts, to turn TOML spans into 1-based line numbers (in gate's
/// files, and in the agents' files `gate import` reads).
pub struct Lines(Vec<usize>);

impl Lines {
    pub fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Lines(starts)
    }

    /// The 1-based line of the byte at `offset`.
    pub fn line_of(&self, offset: usize) -> u32 {
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
pub fn toml_string(text: &str) -> String {
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

struct FileCx<'a> {
    path: Arc<Path>,
    text: &'a str,
    /// Where each line starts, found when first needed (the quick reader counts lines
    /// as it goes, and never needs them).
    lines: std::cell::OnceCell<Lines>,
    home: Option<&'a Path>,
    kind: FileKind,
}

impl<'a> FileCx<'a> {
    fn new(path: &Path, text: &'a str, kind: FileKind, home: Option<&'a Path>) -> Self {
        FileCx {
            path: Arc::from(path),
            text,
            lines: std::cell::OnceCell::new(),
            home,
            kind,
        }
    }

    fn lines(&self) -> &Lines {
        self.lines.get_or_init(|| Lines::new(self.text))
    }

    /// The 1-based line of the byte at `offset`.
    fn line_of(&self, offset: usize) -> u32 {
        self.lines().line_of(offset)
    }

    fn origin(&self, span: std::ops::Range<usize>) -> Origin {
        self.origin_at(self.line_of(span.start))
    }

    fn origin_at(&self, line: u32) -> Origin {
        let path = self.path.clone();
        match self.kind {
            FileKind::Always => Origin::Always { path, line },
            FileKind::System | FileKind::User | FileKind::Project => Origin::File { path, line },
        }
    }
}

type Spanned<T> = toml::Spanned<T>;

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
fn parse_toml(cx: &FileCx<'_>, text: &str) -> Result<Layer, ConfigError> {
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

fn unknown_key(
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
const TABLES: [(&str, &[&str]); 3] = [
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

fn type_error(
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

fn expect_str<'v>(
    cx: &FileCx<'_>,
    key: &str,
    value: &'v Spanned<DeValue<'_>>,
) -> Result<&'v str, ConfigError> {
    value
        .get_ref()
        .as_str()
        .ok_or_else(|| type_error(cx, key, value, "a string"))
}

/// An example of a rule's (`match` or `not_match`), with where it was written.
type Example<'v> = (&'v str, std::ops::Range<usize>, crate::policy::Expect);

/// One entry of `allow`, `deny` or `ask`, as written.
struct RuleItem<'v> {
    rule: &'v str,
    /// The line of the rule.
    line: u32,
    examples: Vec<Example<'v>>,
    /// An allow rule that matches only the command equal to it (`exact = true`).
    exact: bool,
    /// Where `gate import` found the rule it wrote (`from = "FILE:LINE"`).
    from: Option<&'v str>,
}

/// Whether a list's rules may be exact: allow rules only (and unsandboxed ones, which are
/// matched as allow rules are).
fn may_be_exact(key: &str) -> bool {
    matches!(key, "allow" | "unsandboxed")
}

/// Whether `from` is one plain line (`FILE:LINE`), not blank.
fn is_plain_from(text: &str) -> bool {
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
fn rule_item<'v>(
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
fn take_rule(
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
    let item_origin = match from {
        None => cx.origin_at(line),
        Some(_) if cx.kind == FileKind::Always => {
            return Err(ConfigError::at(
                &cx.origin_at(line),
                name,
                "the always-allow file holds approvals, not imported rules \
                 (`from`); import into config.toml",
            ));
        }
        Some(from) => {
            let Origin::File { path, line } = cx.origin_at(line) else {
                unreachable!("a file's origin is a file")
            };
            Origin::Imported {
                path,
                line,
                from: from.into(),
            }
        }
    };
    let added = if exact && name == "unsandboxed" {
        layer.unsandboxed.add_exact(rule, item_origin.clone())
    } else if exact {
        layer.allow.add_exact(rule, item_origin.clone())
    } else {
        add_rule(layer, name, rule, item_origin.clone())
    };
    added.map_err(|e| {
        ConfigError::at(
            &item_origin,
            name,
            format!("`{}`: {e}", rule.escape_debug()),
        )
    })?;
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

fn expect_bool(
    cx: &FileCx<'_>,
    key: &str,
    value: &Spanned<DeValue<'_>>,
) -> Result<bool, ConfigError> {
    value
        .get_ref()
        .as_bool()
        .ok_or_else(|| type_error(cx, key, value, "true or false"))
}

fn expect_int(
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

fn expect_array<'v, 'i>(
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

fn expect_table<'v, 'i>(
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
fn expect_path(
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

#[cfg(test)]
mod tests;
