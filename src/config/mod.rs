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
//! Parsing and merging are pure (text in, [`Settings`] out). [`load()`] is the only part
//! that reads files and the environment.
//!
//! This file holds the types the layers make ([`Layer`], [`Settings`], the errors);
//! each concern has its own file:
//! - `table.rs`: `SETTINGS`, each setting declared once (file key, variable, option,
//!   readers, merge and lock rule), and the variable and option layers it drives;
//! - `file.rs`: one file's text into a layer (the TOML reader, line numbers, key lists);
//!   `rules.rs`: its rule lists; `lists.rs`: the quick reader of files that hold only
//!   rule lists;
//! - `values.rs`: the values every layer checks the same way;
//! - `merge.rs`: the layers into [`Settings`] under a lock, and the lock in words;
//! - `load.rs`: finding and reading the files, the only I/O.

#![forbid(unsafe_code)]

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod file;
mod lists;
mod load;
mod merge;
mod rules;
mod table;
mod values;

pub(crate) use file::{ALWAYS_FILE, toml_string};
pub use file::{APPROVAL_KEYS, AUDIT_KEYS, FileKind, Lines, SANDBOX_KEYS, TOP_KEYS, parse_file};
use file::{
    FileCx, Spanned, expect_array, expect_bool, expect_int, expect_path, expect_str, type_error,
    unknown_key,
};
#[cfg(test)]
use file::{TABLES, parse_toml};
#[cfg(test)]
use load::is_drop_in;
#[cfg(test)]
use load::read_optional;
pub use load::{Environment, load};
pub(crate) use load::{MAX_CONFIG_BYTES, file_layers, read_config_file};
use merge::Merging;
#[cfg(test)]
use merge::stricter_level;
pub use merge::{Loosening, merge};
pub(crate) use merge::{grants, under_lock};
use rules::{RuleItem, file_rules, is_plain_from, may_be_exact, take_rule, text_rule};
pub use values::ApproverUser;
pub(crate) use values::check_session;
use values::{
    absolute_path, add_rule, check_timeout, file_checked, file_list, file_port, non_empty_path,
    parse_level, push, required_features, set, text_checked, text_port, utf8,
};

pub(crate) use table::{Arg, Lock, SETTINGS, Setting, by_flag};
pub(crate) use table::{env_layer, flag_layer};

use crate::invocation::GateArgs;
use crate::policy::{AllowRules, AskRules, DenyRules, Level, Origin, Policy};

/// The system configuration file. Packagers may move it at build time.
pub(crate) const SYSTEM_CONFIG: &str = match option_env!("GATE_SYSTEM_CONFIG") {
    Some(path) => path,
    None => "/etc/gate/config.toml",
};

/// The system layer's drop-in directory, `config.d` beside the system file (so a
/// packager who moves the one moves the other): `/etc/gate/config.d`.
pub(crate) fn system_drop_ins() -> PathBuf {
    Path::new(SYSTEM_CONFIG).with_file_name("config.d")
}

/// The user layer's drop-in directory under a configuration home (`$XDG_CONFIG_HOME`):
/// `gate/config.d`, read after the user file, where `gate import` writes.
pub(crate) fn user_drop_ins(config_home: &Path) -> PathBuf {
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
pub(crate) const MAX_TIMEOUT: u32 = 86_400;

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
    pub(crate) const VALUES: &[(&str, AuditJournal)] = &[
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

    pub(crate) fn as_str(self) -> &'static str {
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
    pub(crate) fn installed() -> Self {
        SystemPlaces {
            file: PathBuf::from(SYSTEM_CONFIG),
            drop_ins: system_drop_ins(),
            candidate_file: false,
            candidate_drop_ins: false,
        }
    }

    /// The installed places, or the candidates `args` names instead.
    pub(crate) fn of(args: &GateArgs) -> Self {
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
    pub(crate) fn new(text: impl Into<String>) -> Self {
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

#[cfg(test)]
mod tests;
