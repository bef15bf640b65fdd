//! The settings table: each setting declared once, with everything gate does with it —
//! its key in a configuration file, its environment variable, its command-line option
//! and where that option's value waits in [`GateArgs`], how each of those is read into a
//! [`Layer`], what a lock lets a later layer do with it ([`Lock`]), and how a later
//! layer's value joins the settings ([`Merging`]). The file reader, the environment and
//! option layers and the merge all walk [`SETTINGS`]; tests hold the key lists, gate's
//! options, `--help`, `gate rules` and both manual pages to it.
//!
//! What this table must not hold: an option's help (in [`crate::cli::GATE_OPTIONS`],
//! which orders `--help`) and the lock rules in words for `gate rules`
//! ([`super::under_lock`]). Both are checked against it.
//!
//! The table is a `static`: walking it costs no allocation, so loading the
//! configuration, which runs before every command, does no more work than a `match`.
//!
//! A new setting is a field of [`Layer`] and of [`super::Settings`], an entry here (and
//! a field of [`GateArgs`] when it has an option), its option's help in
//! [`crate::cli::GATE_OPTIONS`], its key in the key lists ([`super::TOP_KEYS`], …), its
//! lock rule in words in [`super::under_lock`], and its entries in gate(1) and
//! gate.toml(5); the tests in `table/tests.rs` name whichever is missing.

use std::ffi::{OsStr, OsString};

use super::{
    ApproverUser, AuditJournal, AuditLog, ConfigError, FileCx, FileKind, Layer, Merging,
    SYSTEM_CONFIG, Spanned, absolute_path, check_session, check_timeout, expect_array, expect_bool,
    expect_int, expect_path, file_checked, file_list, file_port, file_rules, non_empty_path,
    parse_level, push, required_features, set, system_drop_ins, text_checked, text_port, text_rule,
    utf8,
};
use crate::invocation::GateArgs;
use crate::netproxy::{check_pattern, check_resolve};
use crate::policy::Origin;
use toml::de::DeValue;

/// One setting and everything gate does with it.
pub(crate) struct Setting {
    /// Its key in a configuration file, dotted (`approval.timeout`); for a setting no
    /// file may hold (`session`), its name.
    pub key: &'static str,
    /// The environment variable that sets it.
    pub env: Option<&'static str>,
    /// The command-line option that sets it, and where the option's value waits in
    /// [`GateArgs`] until the configuration is loaded.
    pub flag: Option<(&'static str, Arg)>,
    /// How a configuration file's value is read into a layer; `None`: no file may set it.
    file: Option<FileRead>,
    /// How a value given as text (by its variable or its option) is read into a layer.
    text: Text,
    /// What a layer after a lock (or an untrusted project file's) may do with it.
    pub lock: Lock,
    /// How a later layer's value joins the settings, under [`Setting::lock`].
    pub(super) merge: fn(&mut Merging, &mut Layer, &'static Setting),
}

/// What a lock (or an untrusted project file) lets a later layer do with a setting, and
/// the words that say what stays when it tries more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lock {
    /// Anything: it only tightens (deny rules, hidden paths) or is no policy (the
    /// session).
    Free,
    /// A switch that widens what runs: it may be turned off, not on.
    OnlyOff(&'static str),
    /// A switch that narrows what runs: it may be turned on, not off.
    OnlyOn(&'static str),
    /// Only the locking layers choose it.
    Unchanged(&'static str),
    /// A list no later layer may add to.
    NoneAdded(&'static str),
    /// A rule of its own, written in its merge (the level, the timeout, the lock).
    Own(&'static str),
}

impl Lock {
    /// What stays, in the message that refuses a loosening.
    pub(super) fn words(self) -> &'static str {
        match self {
            Lock::Free => "",
            Lock::OnlyOff(w)
            | Lock::OnlyOn(w)
            | Lock::Unchanged(w)
            | Lock::NoneAdded(w)
            | Lock::Own(w) => w,
        }
    }
}

/// Where an option's value waits in [`GateArgs`].
#[derive(Clone, Copy)]
pub(crate) enum Arg {
    /// An option given at most once.
    One(
        fn(&GateArgs) -> &Option<OsString>,
        fn(&mut GateArgs) -> &mut Option<OsString>,
    ),
    /// An option that may be repeated.
    Many(
        fn(&GateArgs) -> &Vec<OsString>,
        fn(&mut GateArgs) -> &mut Vec<OsString>,
    ),
    /// A flag, which takes no value.
    Flag(fn(&GateArgs) -> bool, fn(&mut GateArgs) -> &mut bool),
}

/// Reads one value of a configuration file: the file, the dotted key, the value, where
/// it is.
type FileRead = fn(
    &FileCx<'_>,
    &'static str,
    &Spanned<DeValue<'_>>,
    Origin,
    &mut Layer,
) -> Result<(), ConfigError>;

/// How a variable's or an option's text is read.
#[derive(Clone, Copy)]
enum Text {
    /// Neither a variable nor an option sets it.
    None,
    /// A value, checked as the setting's type says: the key, the text, where it is.
    Value(fn(&'static str, &OsStr, Origin, &mut Layer) -> Result<(), ConfigError>),
    /// A flag that sets a switch to this value (`--net`: on, `--no-tty`: off).
    Switch(bool, fn(&mut Layer) -> &mut Option<(bool, Origin)>),
}

macro_rules! one {
    ($field:ident) => {
        Arg::One(|a| &a.$field, |a| &mut a.$field)
    };
}
macro_rules! many {
    ($field:ident) => {
        Arg::Many(|a| &a.$field, |a| &mut a.$field)
    };
}
macro_rules! flag {
    ($field:ident) => {
        Arg::Flag(|a| a.$field, |a| &mut a.$field)
    };
}

/// Every setting, in the order a layer is merged (so a layer that loosens two settings
/// under a lock is refused for the first of them here).
pub(crate) static SETTINGS: &[Setting] = &[
    Setting {
        key: "level",
        env: Some("GATE_LEVEL"),
        flag: Some(("--level", one!(level))),
        file: Some(|cx, key, v, o, l| {
            set(&mut l.level, file_checked(cx, key, v, &o, parse_level)?, o)
        }),
        text: Text::Value(|key, v, o, l| {
            set(&mut l.level, text_checked(key, v, &o, parse_level)?, o)
        }),
        lock: Lock::Own("the level stays"),
        merge: Merging::level,
    },
    Setting {
        key: "shell",
        env: Some("GATE_SHELL"),
        flag: Some(("--shell", one!(shell))),
        file: Some(|cx, key, v, o, l| set(&mut l.shell, expect_path(cx, key, v)?, o)),
        text: Text::Value(|key, v, o, l| set(&mut l.shell, absolute_path(v, &o, key)?, o)),
        lock: Lock::Unchanged("the shell cannot be changed"),
        merge: |m, l, me| {
            if let Some((path, origin)) = l.shell.take() {
                if m.locked && m.s.shell.as_ref().map(|(p, _)| p) != Some(&path) {
                    m.refuse(&origin, me.key, me.lock.words());
                }
                m.s.shell = Some((path, origin));
            }
        },
    },
    Setting {
        key: "allow",
        env: None,
        flag: Some(("--allow", many!(allow))),
        file: Some(file_rules),
        text: Text::Value(text_rule),
        lock: Lock::NoneAdded("no allow rules can be added"),
        merge: |m, l, me| {
            m.rules_none_added(me, &l.allow);
            m.s.policy.allow.extend(std::mem::take(&mut l.allow));
        },
    },
    Setting {
        key: "unsandboxed",
        env: None,
        flag: Some(("--unsandboxed", many!(unsandboxed))),
        file: Some(file_rules),
        text: Text::Value(text_rule),
        // Each lets a command leave the locked sandbox (with a person's yes).
        lock: Lock::NoneAdded("no unsandboxed rules can be added"),
        merge: |m, l, me| {
            m.rules_none_added(me, &l.unsandboxed);
            m.s.policy
                .unsandboxed
                .extend(std::mem::take(&mut l.unsandboxed));
        },
    },
    Setting {
        key: "deny",
        env: None,
        flag: Some(("--deny", many!(deny))),
        file: Some(file_rules),
        text: Text::Value(text_rule),
        lock: Lock::Free,
        merge: |m, l, _| m.s.policy.deny.extend(std::mem::take(&mut l.deny)),
    },
    Setting {
        key: "ask",
        env: None,
        flag: Some(("--ask", many!(ask))),
        file: Some(file_rules),
        text: Text::Value(text_rule),
        // Ask rules only tighten: under a lock any layer may add them, and no layer can
        // take away one an earlier layer set (rules accumulate).
        lock: Lock::Free,
        merge: |m, l, _| m.s.policy.ask.extend(std::mem::take(&mut l.ask)),
    },
    Setting {
        key: "compound",
        env: None,
        flag: Some(("--compound", flag!(compound))),
        file: Some(|cx, key, v, o, l| set(&mut l.compound, expect_bool(cx, key, v)?, o)),
        text: Text::Switch(true, |l| &mut l.compound),
        lock: Lock::OnlyOff("compound commands stay off"),
        merge: |m, l, me| {
            if let Some(o) = m.switch(me, l.compound.take(), |s| &mut s.policy.compound) {
                m.s.switch_origins.compound = o;
            }
        },
    },
    Setting {
        key: "readonly",
        env: None,
        flag: Some(("--readonly", flag!(readonly))),
        file: Some(|cx, key, v, o, l| set(&mut l.readonly, expect_bool(cx, key, v)?, o)),
        text: Text::Switch(true, |l| &mut l.readonly),
        lock: Lock::OnlyOff("the read-only preset stays off"),
        merge: |m, l, me| {
            if let Some(o) = m.switch(me, l.readonly.take(), |s| &mut s.policy.readonly) {
                m.s.switch_origins.readonly = o;
            }
        },
    },
    Setting {
        key: "readonly_rules",
        env: None,
        flag: Some(("--readonly-rules", flag!(readonly_rules))),
        file: Some(|cx, key, v, o, l| set(&mut l.readonly_rules, expect_bool(cx, key, v)?, o)),
        text: Text::Switch(true, |l| &mut l.readonly_rules),
        // This one narrows what runs unasked.
        lock: Lock::OnlyOn("read-only rules stay limited to read-only commands"),
        merge: |m, l, me| {
            let set = l.readonly_rules.take();
            if let Some(o) = m.switch(me, set, |s| &mut s.policy.readonly_rules) {
                m.s.switch_origins.readonly_rules = o;
            }
        },
    },
    Setting {
        key: "audit.log",
        env: Some("GATE_AUDIT_LOG"),
        flag: Some(("--audit-log", one!(audit_log))),
        file: Some(|cx, key, v, o, l| {
            let log = if v.get_ref().as_str() == Some("off") {
                AuditLog::Off
            } else {
                AuditLog::Path(expect_path(cx, key, v)?)
            };
            set(&mut l.audit_log, log, o)
        }),
        text: Text::Value(|key, v, o, l| {
            let log = if v == "off" {
                AuditLog::Off
            } else {
                AuditLog::Path(absolute_path(v, &o, key)?)
            };
            set(&mut l.audit_log, log, o)
        }),
        // Under a lock the audit log goes where the locking file says, or to the default
        // place when it says nothing: a user file (which the model can write) must not
        // send it to /dev/null or to a file it then rewrites.
        lock: Lock::Unchanged("the audit log cannot be turned off or moved"),
        merge: |m, l, me| {
            if let Some(o) = m.value(me, l.audit_log.take(), |s| &mut s.audit_log) {
                m.audit_log_origin = o;
            }
        },
    },
    Setting {
        key: "audit.journal",
        env: Some("GATE_AUDIT_JOURNAL"),
        flag: None,
        file: Some(|cx, key, v, o, l| {
            set(
                &mut l.audit_journal,
                file_checked(cx, key, v, &o, AuditJournal::parse)?,
                o,
            )
        }),
        text: Text::Value(|key, v, o, l| {
            set(
                &mut l.audit_journal,
                text_checked(key, v, &o, AuditJournal::parse)?,
                o,
            )
        }),
        // Likewise the system log: under a lock, where records go is the locking file's
        // choice alone.
        lock: Lock::Unchanged("audit.journal stays"),
        merge: |m, l, me| {
            if let Some((journal, origin)) = l.audit_journal.take() {
                if m.locked && journal != m.s.audit_journal {
                    let was = m.s.audit_journal.as_str();
                    m.refuse(&origin, me.key, format!("{} \"{was}\"", me.lock.words()));
                }
                m.s.audit_journal = journal;
            }
        },
    },
    Setting {
        key: "audit.required",
        env: None,
        flag: None,
        file: Some(|cx, key, v, o, l| set(&mut l.audit_required, expect_bool(cx, key, v)?, o)),
        text: Text::None,
        lock: Lock::OnlyOn("the audit log stays required"),
        merge: |m, l, me| {
            if let Some(o) = m.switch(me, l.audit_required.take(), |s| &mut s.audit_required) {
                m.audit_required_origin = o;
            }
        },
    },
    Setting {
        key: "approval.socket",
        env: Some("GATE_SOCKET"),
        flag: Some(("--socket", one!(socket))),
        file: Some(|cx, key, v, o, l| set(&mut l.socket, expect_path(cx, key, v)?, o)),
        text: Text::Value(|key, v, o, l| set(&mut l.socket, absolute_path(v, &o, key)?, o)),
        // Likewise the approver: under a lock, only the locking file chooses who is asked
        // (its socket, or the broker's default one).
        lock: Lock::Unchanged("the approver socket cannot be changed"),
        merge: |m, l, me| {
            let set = l.socket.take().map(|(path, o)| (Some(path), o));
            m.value(me, set, |s| &mut s.socket);
        },
    },
    Setting {
        key: "approval.approver",
        env: None,
        flag: None,
        file: Some(|cx, key, v, o, l| {
            let user = match v.get_ref().as_integer() {
                Some(_) => {
                    let uid = expect_int(cx, key, v)?;
                    ApproverUser::Uid(
                        u32::try_from(uid)
                            .map_err(|_| ConfigError::at(&o, key, format!("{uid} is not a uid")))?,
                    )
                }
                None => file_checked(cx, key, v, &o, ApproverUser::parse)?,
            };
            set(&mut l.approver, user, o)
        }),
        text: Text::None,
        // Whose answers count is the lock's to say, as the socket is.
        lock: Lock::Unchanged("the approver user cannot be changed"),
        merge: |m, l, me| {
            let set = l.approver.take().map(|(user, o)| (Some(user), o));
            m.value(me, set, |s| &mut s.approver);
        },
    },
    Setting {
        key: "approval.tty",
        env: None,
        flag: Some(("--no-tty", flag!(no_tty))),
        file: Some(|cx, key, v, o, l| set(&mut l.tty, expect_bool(cx, key, v)?, o)),
        text: Text::Switch(false, |l| &mut l.tty),
        lock: Lock::OnlyOff("asking on the terminal stays off"),
        merge: |m, l, me| {
            m.switch(me, l.tty.take(), |s| &mut s.tty);
        },
    },
    Setting {
        key: "approval.timeout",
        env: Some("GATE_TIMEOUT"),
        flag: Some(("--timeout", one!(timeout))),
        file: Some(|cx, key, v, o, l| {
            let seconds =
                check_timeout(expect_int(cx, key, v)?).map_err(|e| ConfigError::at(&o, key, e))?;
            set(&mut l.timeout, seconds, o)
        }),
        text: Text::Value(|key, v, o, l| {
            let text = utf8(v, &o, key)?;
            let seconds: i64 = text.trim().parse().map_err(|_| {
                let what = format!("`{}` is not a number of seconds", text.escape_debug());
                ConfigError::at(&o, key, what)
            })?;
            let seconds = check_timeout(seconds).map_err(|e| ConfigError::at(&o, key, e))?;
            set(&mut l.timeout, seconds, o)
        }),
        lock: Lock::Own("the approval timeout can only be shortened"),
        merge: |m, l, me| {
            if let Some((timeout, origin)) = l.timeout.take() {
                if m.locked && timeout > m.s.timeout {
                    let what = format!("{} (it is {} s)", me.lock.words(), m.s.timeout);
                    m.refuse(&origin, me.key, what);
                }
                m.s.timeout = timeout;
            }
        },
    },
    Setting {
        key: "session",
        env: Some("GATE_SESSION"),
        flag: Some(("--session", one!(session))),
        file: None,
        text: Text::Value(|key, v, o, l| {
            let id = text_checked(key, v, &o, |id| check_session(id).map(|()| id.to_owned()))?;
            set(&mut l.session, id, o)
        }),
        lock: Lock::Free,
        merge: |m, l, _| {
            if let Some((session, _)) = l.session.take() {
                m.s.session = Some(session);
            }
        },
    },
    Setting {
        key: "sandbox.write",
        env: None,
        flag: Some(("--write", many!(write))),
        file: Some(|cx, key, v, _, l| {
            file_list(
                cx,
                key,
                v,
                |item, _| expect_path(cx, key, item),
                &mut l.write,
            )
        }),
        // From an option, relative to the working directory.
        text: Text::Value(|key, v, o, l| push(&mut l.write, non_empty_path(v, &o, key)?, o)),
        lock: Lock::NoneAdded("no writable paths can be added"),
        merge: |m, l, me| m.list(me, std::mem::take(&mut l.write), |s| &mut s.sandbox.write),
    },
    Setting {
        key: "sandbox.deny_read",
        env: None,
        flag: Some(("--deny-read", many!(deny_read))),
        file: Some(|cx, key, v, _, l| {
            file_list(
                cx,
                key,
                v,
                |item, _| expect_path(cx, key, item),
                &mut l.deny_read,
            )
        }),
        text: Text::Value(|key, v, o, l| push(&mut l.deny_read, non_empty_path(v, &o, key)?, o)),
        lock: Lock::Free,
        merge: |m, l, me| {
            m.list(me, std::mem::take(&mut l.deny_read), |s| {
                &mut s.sandbox.deny_read
            });
        },
    },
    Setting {
        key: "sandbox.net_connect",
        env: None,
        flag: Some(("--net-connect", many!(net_connect))),
        file: Some(|cx, key, v, _, l| {
            file_list(
                cx,
                key,
                v,
                |item, o| file_port(cx, key, item, o),
                &mut l.net_connect,
            )
        }),
        text: Text::Value(|key, v, o, l| push(&mut l.net_connect, text_port(key, v, &o)?, o)),
        lock: Lock::NoneAdded("no network ports can be allowed"),
        merge: |m, l, me| {
            m.list(me, std::mem::take(&mut l.net_connect), |s| {
                &mut s.sandbox.net_connect
            });
        },
    },
    Setting {
        key: "sandbox.net_bind",
        env: None,
        flag: Some(("--net-bind", many!(net_bind))),
        file: Some(|cx, key, v, _, l| {
            file_list(
                cx,
                key,
                v,
                |item, o| file_port(cx, key, item, o),
                &mut l.net_bind,
            )
        }),
        text: Text::Value(|key, v, o, l| push(&mut l.net_bind, text_port(key, v, &o)?, o)),
        lock: Lock::NoneAdded("no network ports can be allowed"),
        merge: |m, l, me| {
            m.list(me, std::mem::take(&mut l.net_bind), |s| {
                &mut s.sandbox.net_bind
            });
        },
    },
    Setting {
        key: "sandbox.allow_domains",
        env: None,
        flag: Some(("--allow-domain", many!(allow_domain))),
        file: Some(|cx, key, v, _, l| {
            file_list(
                cx,
                key,
                v,
                |item, o| file_checked(cx, key, item, o, check_pattern),
                &mut l.allow_domains,
            )
        }),
        text: Text::Value(|key, v, o, l| {
            push(
                &mut l.allow_domains,
                text_checked(key, v, &o, check_pattern)?,
                o,
            )
        }),
        lock: Lock::NoneAdded("no domains can be allowed"),
        merge: |m, l, me| {
            let domains = std::mem::take(&mut l.allow_domains);
            m.list(me, domains, |s| &mut s.sandbox.allow_domains);
        },
    },
    Setting {
        key: "sandbox.deny_domains",
        env: None,
        flag: Some(("--deny-domain", many!(deny_domain))),
        file: Some(|cx, key, v, _, l| {
            file_list(
                cx,
                key,
                v,
                |item, o| file_checked(cx, key, item, o, check_pattern),
                &mut l.deny_domains,
            )
        }),
        text: Text::Value(|key, v, o, l| {
            push(
                &mut l.deny_domains,
                text_checked(key, v, &o, check_pattern)?,
                o,
            )
        }),
        lock: Lock::Free,
        merge: |m, l, me| {
            let domains = std::mem::take(&mut l.deny_domains);
            m.list(me, domains, |s| &mut s.sandbox.deny_domains);
        },
    },
    Setting {
        key: "sandbox.resolve",
        env: None,
        flag: Some(("--resolve", many!(resolve))),
        file: Some(|cx, key, v, _, l| {
            file_list(
                cx,
                key,
                v,
                |item, o| file_checked(cx, key, item, o, check_resolve),
                &mut l.resolve,
            )
        }),
        text: Text::Value(|key, v, o, l| {
            push(&mut l.resolve, text_checked(key, v, &o, check_resolve)?, o)
        }),
        lock: Lock::NoneAdded("no name can be mapped to an address of your choosing"),
        merge: |m, l, me| {
            m.list(me, std::mem::take(&mut l.resolve), |s| {
                &mut s.sandbox.resolve
            })
        },
    },
    Setting {
        key: "sandbox.require",
        env: None,
        flag: None,
        file: Some(|cx, key, v, _, l| {
            for item in expect_array(cx, key, v)? {
                let origin = cx.origin(item.span());
                let features = file_checked(cx, key, item, &origin, required_features)?;
                l.require
                    .extend(features.into_iter().map(|f| (f, origin.clone())));
            }
            Ok(())
        }),
        text: Text::None,
        // Requirements only add up: under a lock, a later layer can require more, never
        // less.
        lock: Lock::Free,
        merge: |m, l, _| {
            for (feature, _) in std::mem::take(&mut l.require) {
                if !m.s.sandbox.require.contains(&feature) {
                    m.s.sandbox.require.push(feature);
                }
            }
        },
    },
    Setting {
        key: "sandbox.network",
        env: None,
        flag: Some(("--net", flag!(net))),
        file: Some(|cx, key, v, o, l| set(&mut l.network, expect_bool(cx, key, v)?, o)),
        text: Text::Switch(true, |l| &mut l.network),
        lock: Lock::OnlyOff("the network stays off"),
        merge: |m, l, me| {
            if let Some(o) = m.switch(me, l.network.take(), |s| &mut s.sandbox.network) {
                m.network_origin = o;
            }
        },
    },
    Setting {
        key: "sandbox.best_effort",
        env: None,
        flag: Some(("--best-effort", flag!(best_effort))),
        file: Some(|cx, key, v, o, l| set(&mut l.best_effort, expect_bool(cx, key, v)?, o)),
        text: Text::Switch(true, |l| &mut l.best_effort),
        lock: Lock::OnlyOff("the sandbox must be fully enforced (no best effort)"),
        merge: |m, l, me| {
            m.switch(me, l.best_effort.take(), |s| &mut s.sandbox.best_effort);
        },
    },
    Setting {
        key: "sandbox.unix_sockets",
        env: None,
        flag: Some(("--unix-sockets", flag!(unix_sockets))),
        file: Some(|cx, key, v, o, l| set(&mut l.unix_sockets, expect_bool(cx, key, v)?, o)),
        text: Text::Switch(true, |l| &mut l.unix_sockets),
        lock: Lock::OnlyOff("Unix sockets stay off"),
        merge: |m, l, me| {
            m.switch(me, l.unix_sockets.take(), |s| &mut s.sandbox.unix_sockets);
        },
    },
    // Last: a lock holds against the layers after the one that sets it.
    Setting {
        key: "lock",
        env: None,
        flag: None,
        file: Some(|cx, key, v, o, l| {
            let lock = expect_bool(cx, key, v)?;
            if cx.kind == FileKind::Project {
                return Err(ConfigError::at(
                    &o,
                    key,
                    "a project file cannot lock the configuration; only the system file \
                     can (a repository must not decide what the person may change)",
                ));
            }
            if cx.kind != FileKind::System {
                return Err(ConfigError::at(
                    &o,
                    key,
                    format!(
                        "only the system file {SYSTEM_CONFIG} and its drop-ins in {} can \
                         lock the configuration",
                        system_drop_ins().display()
                    ),
                ));
            }
            set(&mut l.lock, lock, o)
        }),
        text: Text::None,
        // A lock holds against everything after it, a later drop-in too.
        lock: Lock::Own("no later file can unlock it"),
        merge: |m, l, me| {
            if let Some((lock, origin)) = l.lock.take() {
                if m.locked && !lock {
                    m.refuse(&origin, me.key, me.lock.words());
                }
                if lock && !m.system_lock {
                    let Origin::File { path, .. } = origin else {
                        unreachable!("only files carry `lock`")
                    };
                    m.s.locked_by = Some(path);
                }
            }
        },
    },
];

/// The setting a configuration file's key names: `table` is the table it is in
/// (`approval`), or `None` at the top.
fn by_file_key(table: Option<&str>, name: &str) -> Option<&'static Setting> {
    // No allocation and no splitting: this runs for every key of every file, before
    // every command.
    SETTINGS.iter().find(|s| {
        let key = s.key;
        let named = match table {
            None => key == name && !name.contains('.'),
            Some(table) => {
                key.len() == table.len() + 1 + name.len()
                    && key.starts_with(table)
                    && key.as_bytes()[table.len()] == b'.'
                    && key.ends_with(name)
            }
        };
        named && s.file.is_some()
    })
}

/// The setting `--name` sets.
pub(crate) fn by_flag(name: &str) -> Option<&'static Setting> {
    SETTINGS
        .iter()
        .find(|s| s.flag.is_some_and(|(flag, _)| flag == name))
}

/// Read one key of a configuration file into `layer`: `Ok(false)` when no setting has
/// that key (the caller names the keys there are).
pub(super) fn read_file_key(
    cx: &FileCx<'_>,
    table: Option<&str>,
    name: &str,
    value: &Spanned<DeValue<'_>>,
    layer: &mut Layer,
) -> Result<bool, ConfigError> {
    let Some(setting) = by_file_key(table, name) else {
        return Ok(false);
    };
    let read = setting.file.expect("found among the file's settings");
    read(cx, setting.key, value, cx.origin(value.span()), layer)?;
    Ok(true)
}

/// The environment layer. Empty variables count as unset.
pub(crate) fn env_layer(env: &dyn Fn(&str) -> Option<OsString>) -> Result<Layer, ConfigError> {
    let mut layer = Layer::default();
    for setting in SETTINGS {
        let (Some(name), Text::Value(read)) = (setting.env, setting.text) else {
            continue;
        };
        if let Some(value) = env(name).filter(|v| !v.is_empty()) {
            read(setting.key, &value, Origin::Env(name), &mut layer)?;
        }
    }
    Ok(layer)
}

/// The command-line layer.
pub(crate) fn flag_layer(args: &GateArgs) -> Result<Layer, ConfigError> {
    let mut layer = Layer::default();
    for setting in SETTINGS {
        let Some((name, arg)) = setting.flag else {
            continue;
        };
        let origin = || Origin::Flag(name);
        match (arg, setting.text) {
            (Arg::One(get, _), Text::Value(read)) => {
                if let Some(value) = get(args) {
                    read(setting.key, value, origin(), &mut layer)?;
                }
            }
            (Arg::Many(get, _), Text::Value(read)) => {
                for value in get(args) {
                    read(setting.key, value, origin(), &mut layer)?;
                }
            }
            (Arg::Flag(get, _), Text::Switch(on, slot)) => {
                if get(args) {
                    *slot(&mut layer) = Some((on, origin()));
                }
            }
            _ => unreachable!("{name}: its option and its reader disagree"),
        }
    }
    Ok(layer)
}

#[cfg(test)]
mod tests;
