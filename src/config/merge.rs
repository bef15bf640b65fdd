//! Merging: the layers, in order, into one [`Settings`], each setting as the settings
//! table says ([`super::SETTINGS`]), under the system's lock or an untrusted project
//! file's limits; and the lock's rules in words for `gate rules` ([`under_lock`]).
//! Pure: no files, no environment.

use std::fmt;
use std::path::PathBuf;

use super::{
    AuditJournal, AuditLog, ConfigError, DEFAULT_LEVEL, DEFAULT_TIMEOUT, Layer, Lock, SETTINGS,
    SandboxSettings, Setting, Settings, SwitchOrigins, SystemPlaces, Untrusted,
};
use crate::policy::{AllowRules, Level, Origin, Policy};

/// Merge layers in order (system file first). When the first layer locks, every later
/// layer may only tighten; so may an untrusted project file's layer
/// ([`Layer::untrusted`]).
pub fn merge(layers: Vec<Layer>, files: Vec<PathBuf>) -> Result<Settings, ConfigError> {
    merge_checked(layers, files, Refusals::First).map(|(s, _)| s)
}

/// One thing a layer under a lock, or an untrusted project file's, would loosen: where
/// it is set, the key, and what the lock keeps instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loosening {
    pub origin: Origin,
    pub key: String,
    pub what: String,
}

impl fmt::Display for Loosening {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: key `{}`: {}", self.origin, self.key, self.what)
    }
}

/// What the last of `layers` (a project file's) would have refused were it untrusted,
/// each loosening with its file, line and key; and, when the layers do not load even
/// with it trusted, why (a lock that holds against it). For `gate trust`, which says
/// what trust grants.
pub(crate) fn grants(
    mut layers: Vec<Layer>,
    untrusted: Untrusted,
) -> Result<(Vec<Loosening>, Option<ConfigError>), ConfigError> {
    let trusted = merge(layers.clone(), Vec::new()).err();
    if let Some(last) = layers.last_mut() {
        last.untrusted = Some(untrusted);
    }
    match merge_checked(layers, Vec::new(), Refusals::All) {
        Ok((_, refused)) => Ok((refused, trusted)),
        Err(e) => Err(e),
    }
}

/// Whether [`merge_checked`] stops at the first loosening a lock or an untrusted file
/// refuses, or collects them all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusals {
    First,
    All,
}

/// Under an untrusted project file (and no lock), the levels a layer may choose instead
/// of `from`: stricter ones only. `full` runs everything unasked and unsandboxed, so
/// `ask` and `safe` are both stricter; neither of those two is stricter than the other
/// (`safe` runs unasked what `ask` would ask about), so from them only `deny` is.
pub(super) fn stricter_level(from: Level, to: Level) -> bool {
    to == from || to == Level::Deny || (from == Level::Full && to != Level::Full)
}

fn merge_checked(
    layers: Vec<Layer>,
    files: Vec<PathBuf>,
    mode: Refusals,
) -> Result<(Settings, Vec<Loosening>), ConfigError> {
    let mut all_refused = Vec::new();
    let mut m = Merging::new(Settings {
        policy: Policy::at(DEFAULT_LEVEL, Origin::BuiltIn),
        shell: None,
        audit_log: AuditLog::Default,
        audit_journal: AuditJournal::Off,
        audit_required: false,
        socket: None,
        approver: None,
        // Off: an agent's commands often run on a terminal the agent made, where the
        // model would answer. A person who runs gate by hand turns it on.
        tty: false,
        timeout: DEFAULT_TIMEOUT,
        session: None,
        sandbox: SandboxSettings::default(),
        locked_by: None,
        always_file: None,
        files,
        system: SystemPlaces::installed(),
        switch_origins: SwitchOrigins::default(),
        project: None,
    });
    for mut layer in layers {
        // A lock holds against every later layer, an untrusted project file too (and
        // then the lock is what the message names: trusting the file would not help).
        let system_lock = m.s.locked_by.is_some();
        let untrusted = if system_lock {
            None
        } else {
            layer.untrusted.take()
        };
        m.system_lock = system_lock;
        m.locked = system_lock || untrusted.is_some();
        let locked_by = m.s.locked_by.clone();
        m.layer(&mut layer);
        if !m.refused.is_empty() {
            match mode {
                Refusals::First => {
                    let first = m.refused.swap_remove(0);
                    return Err(match (&locked_by, &untrusted) {
                        (None, Some(u)) => ConfigError::at(
                            &first.origin,
                            &first.key,
                            format!(
                                "the project file {}, so {}; a person who trusts it can run \
                                 `gate trust {}` in a terminal of their own",
                                u.why,
                                first.what,
                                u.file.display()
                            ),
                        ),
                        _ => ConfigError::at(
                            &first.origin,
                            &first.key,
                            format!(
                                "{} locks the configuration (lock = true), so {}",
                                locked_by
                                    .as_ref()
                                    .map(|p| p.display().to_string())
                                    .unwrap_or_default(),
                                first.what
                            ),
                        ),
                    });
                }
                Refusals::All => all_refused.append(&mut m.refused),
            }
        }
    }
    let Merging {
        s,
        network_origin,
        audit_log_origin,
        audit_required_origin,
        ..
    } = m;
    if s.sandbox.network && !(s.sandbox.net_connect.is_empty() && s.sandbox.net_bind.is_empty()) {
        return Err(ConfigError::at(
            &network_origin,
            "sandbox.network",
            "the network is allowed entirely, so TCP port lists make no sense; drop one or \
             the other",
        ));
    }
    if s.sandbox.network && !s.sandbox.allow_domains.is_empty() {
        return Err(ConfigError::at(
            &network_origin,
            "sandbox.network",
            "the network is allowed entirely, so a domain list makes no sense; drop one or \
             the other",
        ));
    }
    if s.audit_required && s.audit_log == AuditLog::Off && s.audit_journal == AuditJournal::Off {
        return Err(ConfigError::at(
            &audit_log_origin,
            "audit.log",
            format!(
                "the audit log is turned off, but {audit_required_origin} requires it \
                 (audit.required = true); remove one of the two"
            ),
        ));
    }
    Ok((s, all_refused))
}

/// What a layer after the locking file may still do, key by key, given the settings the
/// layers made: [`merge`]'s lock rules in words, for `gate rules`. Empty when nothing
/// locks. (Kept beside `merge`: a change to one is a change to the other, and a test
/// holds each sentence to what `merge` does.)
pub(crate) fn under_lock(s: &Settings) -> Vec<(&'static str, String)> {
    if s.locked_by.is_none() {
        return Vec::new();
    }
    let only_off = |on: bool, key: &str| {
        if on {
            "may be turned off, not back on (it is on)".to_owned()
        } else {
            format!("stays off: no later layer may turn {key} on")
        }
    };
    let shell = match &s.shell {
        Some((path, _)) => format!("stays {}", path.display()),
        None => "stays the default (/bin/sh): no later layer may set one".to_owned(),
    };
    let socket = match &s.socket {
        Some(path) => format!("stays {}", path.display()),
        None => "stays the broker's default socket: no later layer may name another".to_owned(),
    };
    let audit_log = match &s.audit_log {
        AuditLog::Default => {
            "stays the default place: no later layer may move it or turn it off".to_owned()
        }
        AuditLog::Off => "stays off".to_owned(),
        AuditLog::Path(p) => format!(
            "stays {}: no later layer may move it or turn it off",
            p.display()
        ),
    };
    vec![
        (
            "level",
            if s.policy.level == Level::Deny {
                "stays `deny`".to_owned()
            } else {
                format!("stays `{}`, or becomes `deny`", s.policy.level)
            },
        ),
        ("shell", shell),
        ("allow", "no rule may be added".to_owned()),
        ("unsandboxed", "no rule may be added".to_owned()),
        (
            "deny",
            "rules may be added; none can be taken away".to_owned(),
        ),
        (
            "ask",
            "rules may be added; none can be taken away".to_owned(),
        ),
        ("compound", only_off(s.policy.compound, "compound")),
        ("readonly", only_off(s.policy.readonly, "readonly")),
        (
            "readonly_rules",
            if s.policy.readonly_rules {
                "stays on".to_owned()
            } else {
                "may be turned on (it is off)".to_owned()
            },
        ),
        ("approval.socket", socket),
        (
            "approval.approver",
            match &s.approver {
                Some(user) => format!("stays {user}"),
                None => "stays unset (the approver runs as gate's own user): no later layer \
                         may name one"
                    .to_owned(),
            },
        ),
        (
            "approval.tty",
            if s.tty {
                "may be turned off (it is on)".to_owned()
            } else {
                "stays off".to_owned()
            },
        ),
        (
            "approval.timeout",
            format!("may be shortened, not lengthened (it is {} s)", s.timeout),
        ),
        ("audit.log", audit_log),
        (
            "audit.journal",
            format!(
                "stays \"{}\": no later layer may change where records go",
                s.audit_journal.as_str()
            ),
        ),
        (
            "audit.required",
            if s.audit_required {
                "stays true".to_owned()
            } else {
                "may be turned on".to_owned()
            },
        ),
        (
            "sandbox.write, sandbox.net_connect, sandbox.net_bind, sandbox.allow_domains, sandbox.resolve",
            "no entry may be added".to_owned(),
        ),
        (
            "sandbox.deny_read, sandbox.deny_domains, sandbox.require",
            "entries may be added".to_owned(),
        ),
        (
            "sandbox.network",
            only_off(s.sandbox.network, "the network"),
        ),
        (
            "sandbox.unix_sockets",
            only_off(s.sandbox.unix_sockets, "Unix sockets"),
        ),
        (
            "sandbox.best_effort",
            only_off(s.sandbox.best_effort, "best effort"),
        ),
        (
            "--no-config",
            "refused: the locking file cannot be skipped".to_owned(),
        ),
    ]
}

// ---------------------------------------------------------------------------------------
// One layer, one setting at a time.

/// The settings as the layers so far made them, and what the layer being merged may do.
pub(super) struct Merging {
    pub s: Settings,
    /// The layer may only tighten: the system layer locked, or the layer is an untrusted
    /// project file's.
    pub locked: bool,
    /// The system layer locked.
    pub system_lock: bool,
    /// What the layer would loosen, in the order of [`SETTINGS`].
    pub refused: Vec<Loosening>,
    /// Where the values the last checks name were set.
    pub network_origin: Origin,
    pub audit_log_origin: Origin,
    pub audit_required_origin: Origin,
}

impl Merging {
    pub(super) fn new(s: Settings) -> Self {
        Merging {
            s,
            locked: false,
            system_lock: false,
            refused: Vec::new(),
            network_origin: Origin::BuiltIn,
            audit_log_origin: Origin::BuiltIn,
            audit_required_origin: Origin::BuiltIn,
        }
    }

    /// Merge `layer`, setting by setting.
    pub(super) fn layer(&mut self, layer: &mut Layer) {
        for setting in SETTINGS {
            (setting.merge)(self, layer, setting);
        }
    }

    pub(super) fn refuse(&mut self, origin: &Origin, key: &str, what: impl Into<String>) {
        self.refused.push(Loosening {
            origin: origin.clone(),
            key: key.to_owned(),
            what: what.into(),
        });
    }

    /// The level: under the system's lock it stays or becomes `deny`; under an untrusted
    /// project file it may only become stricter ([`stricter_level`]).
    pub(super) fn level(&mut self, layer: &mut Layer, me: &Setting) {
        let Some((level, origin)) = layer.level.take() else {
            return;
        };
        let was = self.s.policy.level;
        let allowed = if self.system_lock {
            level == was || level == Level::Deny
        } else {
            stricter_level(was, level)
        };
        if self.locked && !allowed {
            let instead = if !self.system_lock && was == Level::Full {
                "only `deny`, `ask` or `safe` may be chosen instead"
            } else {
                "only `deny` may be chosen instead"
            };
            let what = format!("{} `{was}` ({instead})", me.lock.words());
            self.refuse(&origin, me.key, what);
        }
        self.s.policy.level = level;
        self.s.policy.level_origin = origin;
    }

    /// A switch, under its lock rule: one that widens what runs may be turned off, not
    /// on ([`Lock::OnlyOff`]); one that narrows it, on, not off ([`Lock::OnlyOn`]).
    /// Returns where it was set.
    pub(super) fn switch(
        &mut self,
        me: &Setting,
        set: Option<(bool, Origin)>,
        slot: fn(&mut Settings) -> &mut bool,
    ) -> Option<Origin> {
        let (on, origin) = set?;
        let was = *slot(&mut self.s);
        let loosens = match me.lock {
            Lock::OnlyOff(_) => on && !was,
            Lock::OnlyOn(_) => !on && was,
            Lock::Unchanged(_) => on != was,
            Lock::Free => false,
            Lock::NoneAdded(_) | Lock::Own(_) => unreachable!("{}: not a switch's lock", me.key),
        };
        if self.locked && loosens {
            self.refuse(&origin, me.key, me.lock.words());
        }
        *slot(&mut self.s) = on;
        Some(origin)
    }

    /// A value only the locking layers choose ([`Lock::Unchanged`]), or anyone
    /// ([`Lock::Free`]). Returns where it was set.
    pub(super) fn value<T: PartialEq>(
        &mut self,
        me: &Setting,
        set: Option<(T, Origin)>,
        slot: fn(&mut Settings) -> &mut T,
    ) -> Option<Origin> {
        let (value, origin) = set?;
        let loosens = match me.lock {
            Lock::Unchanged(_) => *slot(&mut self.s) != value,
            Lock::Free => false,
            _ => unreachable!("{}: not a value's lock", me.key),
        };
        if self.locked && loosens {
            self.refuse(&origin, me.key, me.lock.words());
        }
        *slot(&mut self.s) = value;
        Some(origin)
    }

    /// A list's entries added: under a lock each is refused ([`Lock::NoneAdded`]), or
    /// may be added ([`Lock::Free`]).
    pub(super) fn list<T>(
        &mut self,
        me: &Setting,
        list: Vec<(T, Origin)>,
        slot: fn(&mut Settings) -> &mut Vec<T>,
    ) {
        match me.lock {
            Lock::NoneAdded(what) if self.locked => {
                for (_, origin) in &list {
                    self.refuse(origin, me.key, what);
                }
            }
            Lock::NoneAdded(_) | Lock::Free => {}
            _ => unreachable!("{}: not a list's lock", me.key),
        }
        slot(&mut self.s).extend(list.into_iter().map(|(entry, _)| entry));
    }

    /// Rules a lock lets no later layer add, each refused with its text, in the order of
    /// their text (so the first one is the same one every time).
    pub(super) fn rules_none_added(&mut self, me: &Setting, rules: &AllowRules) {
        if !self.locked {
            return;
        }
        let mut added: Vec<_> = rules.iter().collect();
        added.sort_by_key(|(rule, _)| *rule);
        for (rule, origin) in added {
            let what = format!("{} (`{rule}`)", me.lock.words());
            self.refuse(&origin, me.key, what);
        }
    }
}
