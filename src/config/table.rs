//! The settings table: each setting declared once, with everything gate does with it —
//! its key in a configuration file, its environment variable, its command-line option
//! and where that option's value waits in [`GateArgs`], how each of those is read into a
//! [`Layer`], and how a later layer's value joins the settings under a lock
//! ([`Merging`]). The file reader, the environment and option layers and the merge all
//! walk [`SETTINGS`]; a test holds the key lists, gate's options and both manual pages
//! to it.
//!
//! What this table must not hold: an option's help (in [`crate::cli::GATE_OPTIONS`],
//! which orders `--help`) and the lock rules in words for `gate rules`
//! ([`super::under_lock`]). Both are checked against it.
//!
//! The table is a `static`: walking it costs no allocation, so loading the
//! configuration, which runs before every command, does no more work than a `match`.

use std::ffi::{OsStr, OsString};

use super::{
    ApproverUser, AuditJournal, AuditLog, ConfigError, FileCx, FileKind, Layer, Merging,
    SYSTEM_CONFIG, Spanned, absolute_path, add_rule, check_port, check_session, check_timeout,
    expect_array, expect_bool, expect_int, expect_path, expect_str, non_empty_path, parse_level,
    required_features, rule_item, system_drop_ins, take_rule, utf8,
};
use crate::invocation::GateArgs;
use crate::policy::Origin;
use toml::de::DeValue;

/// One setting and everything gate does with it.
pub struct Setting {
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
    /// How a later layer's value joins the settings: replaced or added to, and what a
    /// lock (or an untrusted project file) refuses.
    pub(super) merge: fn(&mut Merging, &mut Layer),
}

/// Where an option's value waits in [`GateArgs`].
#[derive(Clone, Copy)]
pub enum Arg {
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
    /// A value, checked as the setting's type says.
    Value(fn(&OsStr, Origin, &mut Layer) -> Result<(), ConfigError>),
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

/// A file's rule list (`allow`, `deny`, `ask`, `unsandboxed`).
fn file_rules(
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
fn text_rule(
    key: &'static str,
    value: &OsStr,
    origin: Origin,
    layer: &mut Layer,
) -> Result<(), ConfigError> {
    let rule = utf8(value, &origin, key)?;
    add_rule(layer, key, rule, origin.clone())
        .map_err(|e| ConfigError::at(&origin, key, format!("`{}`: {e}", rule.escape_debug())))
}

/// Each entry of a file's list, read by `read` and pushed onto the layer's list.
fn file_list<T>(
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

/// A string entry of a file's list checked by `check`, whose error is placed at the
/// entry.
fn checked_str<'c>(
    cx: &'c FileCx<'_>,
    key: &'static str,
    check: fn(&str) -> Result<String, String>,
) -> impl Fn(&Spanned<DeValue<'_>>, &Origin) -> Result<String, ConfigError> + 'c {
    move |item, origin| {
        let text = expect_str(cx, key, item)?;
        check(text).map_err(|e| ConfigError::at(origin, key, e))
    }
}

/// A port: in a file an integer, as text digits.
fn file_port<'c>(
    cx: &'c FileCx<'_>,
    key: &'static str,
) -> impl Fn(&Spanned<DeValue<'_>>, &Origin) -> Result<u16, ConfigError> + 'c {
    move |item, origin| {
        check_port(expect_int(cx, key, item)?).map_err(|e| ConfigError::at(origin, key, e))
    }
}

fn text_port(key: &'static str, value: &OsStr, origin: &Origin) -> Result<u16, ConfigError> {
    let text = utf8(value, origin, key)?;
    text.trim()
        .parse::<i64>()
        .map_err(|_| format!("`{}` is not a TCP port (1 to 65535)", text.escape_debug()))
        .and_then(check_port)
        .map_err(|e| ConfigError::at(origin, key, e))
}

fn text_checked(
    key: &'static str,
    value: &OsStr,
    origin: &Origin,
    check: fn(&str) -> Result<String, String>,
) -> Result<String, ConfigError> {
    check(utf8(value, origin, key)?).map_err(|e| ConfigError::at(origin, key, e))
}

/// Every setting, in the order a layer is merged (so a layer that loosens two settings
/// under a lock is refused for the first of them here).
pub static SETTINGS: &[Setting] = &[
    Setting {
        key: "level",
        env: Some("GATE_LEVEL"),
        flag: Some(("--level", one!(level))),
        file: Some(|cx, key, value, origin, layer| {
            let level = parse_level(expect_str(cx, key, value)?)
                .map_err(|e| ConfigError::at(&origin, key, e))?;
            layer.level = Some((level, origin));
            Ok(())
        }),
        text: Text::Value(|value, origin, layer| {
            let level = parse_level(utf8(value, &origin, "level")?)
                .map_err(|e| ConfigError::at(&origin, "level", e))?;
            layer.level = Some((level, origin));
            Ok(())
        }),
        merge: Merging::level,
    },
    Setting {
        key: "shell",
        env: Some("GATE_SHELL"),
        flag: Some(("--shell", one!(shell))),
        file: Some(|cx, key, value, origin, layer| {
            layer.shell = Some((expect_path(cx, key, value)?, origin));
            Ok(())
        }),
        text: Text::Value(|value, origin, layer| {
            layer.shell = Some((absolute_path(value, &origin, "shell")?, origin));
            Ok(())
        }),
        merge: |m, layer| {
            if let Some((path, origin)) = layer.shell.take() {
                if m.locked && m.s.shell.as_ref().map(|(p, _)| p) != Some(&path) {
                    m.refuse(&origin, "shell", "the shell cannot be changed");
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
        text: Text::Value(|value, origin, layer| text_rule("allow", value, origin, layer)),
        merge: |m, layer| {
            if m.locked {
                // Report the added rules in the order of their text, so the first one is
                // the same one every time.
                let mut added: Vec<_> = layer.allow.iter().collect();
                added.sort_by_key(|(rule, _)| *rule);
                for (rule, origin) in added {
                    m.refuse(
                        origin,
                        "allow",
                        format!("no allow rules can be added (`{rule}`)"),
                    );
                }
            }
            m.s.policy.allow.extend(std::mem::take(&mut layer.allow));
        },
    },
    Setting {
        key: "unsandboxed",
        env: None,
        flag: Some(("--unsandboxed", many!(unsandboxed))),
        file: Some(file_rules),
        text: Text::Value(|value, origin, layer| text_rule("unsandboxed", value, origin, layer)),
        merge: |m, layer| {
            if m.locked {
                // Each lets a command leave the locked sandbox (with a person's yes).
                let mut added: Vec<_> = layer.unsandboxed.iter().collect();
                added.sort_by_key(|(rule, _)| *rule);
                for (rule, origin) in added {
                    m.refuse(
                        origin,
                        "unsandboxed",
                        format!("no unsandboxed rules can be added (`{rule}`)"),
                    );
                }
            }
            m.s.policy
                .unsandboxed
                .extend(std::mem::take(&mut layer.unsandboxed));
        },
    },
    Setting {
        key: "deny",
        env: None,
        flag: Some(("--deny", many!(deny))),
        file: Some(file_rules),
        text: Text::Value(|value, origin, layer| text_rule("deny", value, origin, layer)),
        merge: |m, layer| m.s.policy.deny.extend(std::mem::take(&mut layer.deny)),
    },
    Setting {
        key: "ask",
        env: None,
        flag: Some(("--ask", many!(ask))),
        file: Some(file_rules),
        text: Text::Value(|value, origin, layer| text_rule("ask", value, origin, layer)),
        // Ask rules only tighten: under a lock any layer may add them, and no layer can
        // take away one an earlier layer set (rules accumulate).
        merge: |m, layer| m.s.policy.ask.extend(std::mem::take(&mut layer.ask)),
    },
    Setting {
        key: "compound",
        env: None,
        flag: Some(("--compound", flag!(compound))),
        file: Some(|cx, key, value, origin, layer| {
            layer.compound = Some((expect_bool(cx, key, value)?, origin));
            Ok(())
        }),
        text: Text::Switch(true, |layer| &mut layer.compound),
        // It widens what runs unasked, so under a lock it can be turned off, not on.
        merge: |m, layer| {
            let set = layer.compound.take();
            if let Some(origin) = m.only_off(set, "compound", "compound commands stay off", |s| {
                &mut s.policy.compound
            }) {
                m.s.switch_origins.compound = origin;
            }
        },
    },
    Setting {
        key: "readonly",
        env: None,
        flag: Some(("--readonly", flag!(readonly))),
        file: Some(|cx, key, value, origin, layer| {
            layer.readonly = Some((expect_bool(cx, key, value)?, origin));
            Ok(())
        }),
        text: Text::Switch(true, |layer| &mut layer.readonly),
        // Likewise.
        merge: |m, layer| {
            let set = layer.readonly.take();
            if let Some(origin) =
                m.only_off(set, "readonly", "the read-only preset stays off", |s| {
                    &mut s.policy.readonly
                })
            {
                m.s.switch_origins.readonly = origin;
            }
        },
    },
    Setting {
        key: "readonly_rules",
        env: None,
        flag: Some(("--readonly-rules", flag!(readonly_rules))),
        file: Some(|cx, key, value, origin, layer| {
            layer.readonly_rules = Some((expect_bool(cx, key, value)?, origin));
            Ok(())
        }),
        text: Text::Switch(true, |layer| &mut layer.readonly_rules),
        // This one narrows what runs unasked: under a lock it can be turned on, not off.
        merge: |m, layer| {
            let set = layer.readonly_rules.take();
            if let Some(origin) = m.only_on(
                set,
                "readonly_rules",
                "read-only rules stay limited to read-only commands",
                |s| &mut s.policy.readonly_rules,
            ) {
                m.s.switch_origins.readonly_rules = origin;
            }
        },
    },
    Setting {
        key: "audit.log",
        env: Some("GATE_AUDIT_LOG"),
        flag: Some(("--audit-log", one!(audit_log))),
        file: Some(|cx, key, value, origin, layer| {
            let log = if value.get_ref().as_str() == Some("off") {
                AuditLog::Off
            } else {
                AuditLog::Path(expect_path(cx, key, value)?)
            };
            layer.audit_log = Some((log, origin));
            Ok(())
        }),
        text: Text::Value(|value, origin, layer| {
            let log = if value == "off" {
                AuditLog::Off
            } else {
                AuditLog::Path(absolute_path(value, &origin, "audit.log")?)
            };
            layer.audit_log = Some((log, origin));
            Ok(())
        }),
        merge: |m, layer| {
            if let Some((log, origin)) = layer.audit_log.take() {
                // Under a lock the audit log goes where the locking file says, or to the
                // default place when it says nothing: a user file (which the model can
                // write) must not send it to /dev/null or to a file it then rewrites.
                if m.locked && log != m.s.audit_log {
                    m.refuse(
                        &origin,
                        "audit.log",
                        "the audit log cannot be turned off or moved",
                    );
                }
                m.s.audit_log = log;
                m.audit_log_origin = origin;
            }
        },
    },
    Setting {
        key: "audit.journal",
        env: Some("GATE_AUDIT_JOURNAL"),
        flag: None,
        file: Some(|cx, key, value, origin, layer| {
            let journal = AuditJournal::parse(expect_str(cx, key, value)?)
                .map_err(|e| ConfigError::at(&origin, key, e))?;
            layer.audit_journal = Some((journal, origin));
            Ok(())
        }),
        text: Text::Value(|value, origin, layer| {
            let journal = AuditJournal::parse(utf8(value, &origin, "audit.journal")?)
                .map_err(|e| ConfigError::at(&origin, "audit.journal", e))?;
            layer.audit_journal = Some((journal, origin));
            Ok(())
        }),
        merge: |m, layer| {
            if let Some((journal, origin)) = layer.audit_journal.take() {
                // Likewise the system log: under a lock, where records go is the locking
                // file's choice alone.
                if m.locked && journal != m.s.audit_journal {
                    let what = format!("audit.journal stays \"{}\"", m.s.audit_journal.as_str());
                    m.refuse(&origin, "audit.journal", what);
                }
                m.s.audit_journal = journal;
            }
        },
    },
    Setting {
        key: "audit.required",
        env: None,
        flag: None,
        file: Some(|cx, key, value, origin, layer| {
            layer.audit_required = Some((expect_bool(cx, key, value)?, origin));
            Ok(())
        }),
        text: Text::None,
        merge: |m, layer| {
            let set = layer.audit_required.take();
            if let Some(origin) =
                m.only_on(set, "audit.required", "the audit log stays required", |s| {
                    &mut s.audit_required
                })
            {
                m.audit_required_origin = origin;
            }
        },
    },
    Setting {
        key: "approval.socket",
        env: Some("GATE_SOCKET"),
        flag: Some(("--socket", one!(socket))),
        file: Some(|cx, key, value, origin, layer| {
            layer.socket = Some((expect_path(cx, key, value)?, origin));
            Ok(())
        }),
        text: Text::Value(|value, origin, layer| {
            layer.socket = Some((absolute_path(value, &origin, "approval.socket")?, origin));
            Ok(())
        }),
        // Likewise the approver: under a lock, only the locking file chooses who is asked
        // (its socket, or the broker's default one).
        merge: |m, layer| {
            let set = layer.socket.take();
            m.unchanged(
                set,
                "approval.socket",
                "the approver socket cannot be changed",
                |s| &mut s.socket,
            );
        },
    },
    Setting {
        key: "approval.approver",
        env: None,
        flag: None,
        file: Some(|cx, key, value, origin, layer| {
            let user = match value.get_ref().as_integer() {
                Some(_) => {
                    let uid = expect_int(cx, key, value)?;
                    ApproverUser::Uid(u32::try_from(uid).map_err(|_| {
                        ConfigError::at(&origin, key, format!("{uid} is not a uid"))
                    })?)
                }
                None => ApproverUser::parse(expect_str(cx, key, value)?)
                    .map_err(|e| ConfigError::at(&origin, key, e))?,
            };
            layer.approver = Some((user, origin));
            Ok(())
        }),
        text: Text::None,
        // Whose answers count is the lock's to say, as the socket is.
        merge: |m, layer| {
            let set = layer.approver.take();
            m.unchanged(
                set,
                "approval.approver",
                "the approver user cannot be changed",
                |s| &mut s.approver,
            );
        },
    },
    Setting {
        key: "approval.tty",
        env: None,
        flag: Some(("--no-tty", flag!(no_tty))),
        file: Some(|cx, key, value, origin, layer| {
            layer.tty = Some((expect_bool(cx, key, value)?, origin));
            Ok(())
        }),
        text: Text::Switch(false, |layer| &mut layer.tty),
        merge: |m, layer| {
            let set = layer.tty.take();
            m.only_off(
                set,
                "approval.tty",
                "asking on the terminal stays off",
                |s| &mut s.tty,
            );
        },
    },
    Setting {
        key: "approval.timeout",
        env: Some("GATE_TIMEOUT"),
        flag: Some(("--timeout", one!(timeout))),
        file: Some(|cx, key, value, origin, layer| {
            let seconds = check_timeout(expect_int(cx, key, value)?)
                .map_err(|e| ConfigError::at(&origin, key, e))?;
            layer.timeout = Some((seconds, origin));
            Ok(())
        }),
        text: Text::Value(|value, origin, layer| {
            let key = "approval.timeout";
            let text = utf8(value, &origin, key)?;
            let seconds: i64 = text.trim().parse().map_err(|_| {
                ConfigError::at(
                    &origin,
                    key,
                    format!("`{}` is not a number of seconds", text.escape_debug()),
                )
            })?;
            let seconds = check_timeout(seconds).map_err(|e| ConfigError::at(&origin, key, e))?;
            layer.timeout = Some((seconds, origin));
            Ok(())
        }),
        merge: |m, layer| {
            if let Some((timeout, origin)) = layer.timeout.take() {
                if m.locked && timeout > m.s.timeout {
                    let what = format!(
                        "the approval timeout can only be shortened (it is {} s)",
                        m.s.timeout
                    );
                    m.refuse(&origin, "approval.timeout", what);
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
        text: Text::Value(|value, origin, layer| {
            let id = utf8(value, &origin, "session")?;
            check_session(id).map_err(|e| ConfigError::at(&origin, "session", e))?;
            layer.session = Some((id.to_owned(), origin));
            Ok(())
        }),
        merge: |m, layer| {
            if let Some((session, _)) = layer.session.take() {
                m.s.session = Some(session);
            }
        },
    },
    Setting {
        key: "sandbox.write",
        env: None,
        flag: Some(("--write", many!(write))),
        file: Some(|cx, key, value, _, layer| {
            file_list(
                cx,
                key,
                value,
                |item, _| expect_path(cx, key, item),
                &mut layer.write,
            )
        }),
        text: Text::Value(|value, origin, layer| {
            layer
                .write
                .push((non_empty_path(value, &origin, "write")?, origin));
            Ok(())
        }),
        merge: |m, layer| {
            m.none_added(
                &layer.write,
                "sandbox.write",
                "no writable paths can be added",
            );
            let write = std::mem::take(&mut layer.write);
            m.s.sandbox.write.extend(write.into_iter().map(|(p, _)| p));
        },
    },
    Setting {
        key: "sandbox.deny_read",
        env: None,
        flag: Some(("--deny-read", many!(deny_read))),
        file: Some(|cx, key, value, _, layer| {
            file_list(
                cx,
                key,
                value,
                |item, _| expect_path(cx, key, item),
                &mut layer.deny_read,
            )
        }),
        text: Text::Value(|value, origin, layer| {
            layer
                .deny_read
                .push((non_empty_path(value, &origin, "deny-read")?, origin));
            Ok(())
        }),
        merge: |m, layer| {
            let deny_read = std::mem::take(&mut layer.deny_read);
            m.s.sandbox
                .deny_read
                .extend(deny_read.into_iter().map(|(p, _)| p));
        },
    },
    Setting {
        key: "sandbox.net_connect",
        env: None,
        flag: Some(("--net-connect", many!(net_connect))),
        file: Some(|cx, key, value, _, layer| {
            file_list(cx, key, value, file_port(cx, key), &mut layer.net_connect)
        }),
        text: Text::Value(|value, origin, layer| {
            layer
                .net_connect
                .push((text_port("net-connect", value, &origin)?, origin));
            Ok(())
        }),
        merge: |m, layer| {
            m.none_added(
                &layer.net_connect,
                "sandbox.net_connect",
                "no network ports can be allowed",
            );
            let ports = std::mem::take(&mut layer.net_connect);
            m.s.sandbox
                .net_connect
                .extend(ports.into_iter().map(|(p, _)| p));
        },
    },
    Setting {
        key: "sandbox.net_bind",
        env: None,
        flag: Some(("--net-bind", many!(net_bind))),
        file: Some(|cx, key, value, _, layer| {
            file_list(cx, key, value, file_port(cx, key), &mut layer.net_bind)
        }),
        text: Text::Value(|value, origin, layer| {
            layer
                .net_bind
                .push((text_port("net-bind", value, &origin)?, origin));
            Ok(())
        }),
        merge: |m, layer| {
            m.none_added(
                &layer.net_bind,
                "sandbox.net_bind",
                "no network ports can be allowed",
            );
            let ports = std::mem::take(&mut layer.net_bind);
            m.s.sandbox
                .net_bind
                .extend(ports.into_iter().map(|(p, _)| p));
        },
    },
    Setting {
        key: "sandbox.allow_domains",
        env: None,
        flag: Some(("--allow-domain", many!(allow_domain))),
        file: Some(|cx, key, value, _, layer| {
            let check = checked_str(cx, key, crate::netproxy::check_pattern);
            file_list(cx, key, value, check, &mut layer.allow_domains)
        }),
        text: Text::Value(|value, origin, layer| {
            let pattern = text_checked(
                "allow-domain",
                value,
                &origin,
                crate::netproxy::check_pattern,
            )?;
            layer.allow_domains.push((pattern, origin));
            Ok(())
        }),
        merge: |m, layer| {
            m.none_added(
                &layer.allow_domains,
                "sandbox.allow_domains",
                "no domains can be allowed",
            );
            let domains = std::mem::take(&mut layer.allow_domains);
            m.s.sandbox
                .allow_domains
                .extend(domains.into_iter().map(|(p, _)| p));
        },
    },
    Setting {
        key: "sandbox.deny_domains",
        env: None,
        flag: Some(("--deny-domain", many!(deny_domain))),
        file: Some(|cx, key, value, _, layer| {
            let check = checked_str(cx, key, crate::netproxy::check_pattern);
            file_list(cx, key, value, check, &mut layer.deny_domains)
        }),
        text: Text::Value(|value, origin, layer| {
            let pattern = text_checked(
                "deny-domain",
                value,
                &origin,
                crate::netproxy::check_pattern,
            )?;
            layer.deny_domains.push((pattern, origin));
            Ok(())
        }),
        merge: |m, layer| {
            let domains = std::mem::take(&mut layer.deny_domains);
            m.s.sandbox
                .deny_domains
                .extend(domains.into_iter().map(|(p, _)| p));
        },
    },
    Setting {
        key: "sandbox.resolve",
        env: None,
        flag: Some(("--resolve", many!(resolve))),
        file: Some(|cx, key, value, _, layer| {
            let check = checked_str(cx, key, crate::netproxy::check_resolve);
            file_list(cx, key, value, check, &mut layer.resolve)
        }),
        text: Text::Value(|value, origin, layer| {
            let entry = text_checked("resolve", value, &origin, crate::netproxy::check_resolve)?;
            layer.resolve.push((entry, origin));
            Ok(())
        }),
        merge: |m, layer| {
            let what = "no name can be mapped to an address of your choosing";
            m.none_added(&layer.resolve, "sandbox.resolve", what);
            let entries = std::mem::take(&mut layer.resolve);
            m.s.sandbox
                .resolve
                .extend(entries.into_iter().map(|(p, _)| p));
        },
    },
    Setting {
        key: "sandbox.require",
        env: None,
        flag: None,
        file: Some(|cx, key, value, _, layer| {
            for item in expect_array(cx, key, value)? {
                let origin = cx.origin(item.span());
                let text = expect_str(cx, key, item)?;
                let features =
                    required_features(text).map_err(|e| ConfigError::at(&origin, key, e))?;
                layer
                    .require
                    .extend(features.into_iter().map(|f| (f, origin.clone())));
            }
            Ok(())
        }),
        text: Text::None,
        // Requirements only add up: under a lock, a later layer can require more, never
        // less.
        merge: |m, layer| {
            for (feature, _) in std::mem::take(&mut layer.require) {
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
        file: Some(|cx, key, value, origin, layer| {
            layer.network = Some((expect_bool(cx, key, value)?, origin));
            Ok(())
        }),
        text: Text::Switch(true, |layer| &mut layer.network),
        merge: |m, layer| {
            let set = layer.network.take();
            if let Some(origin) = m.only_off(set, "sandbox.network", "the network stays off", |s| {
                &mut s.sandbox.network
            }) {
                m.network_origin = origin;
            }
        },
    },
    Setting {
        key: "sandbox.best_effort",
        env: None,
        flag: Some(("--best-effort", flag!(best_effort))),
        file: Some(|cx, key, value, origin, layer| {
            layer.best_effort = Some((expect_bool(cx, key, value)?, origin));
            Ok(())
        }),
        text: Text::Switch(true, |layer| &mut layer.best_effort),
        merge: |m, layer| {
            let set = layer.best_effort.take();
            let what = "the sandbox must be fully enforced (no best effort)";
            m.only_off(set, "sandbox.best_effort", what, |s| {
                &mut s.sandbox.best_effort
            });
        },
    },
    Setting {
        key: "sandbox.unix_sockets",
        env: None,
        flag: Some(("--unix-sockets", flag!(unix_sockets))),
        file: Some(|cx, key, value, origin, layer| {
            layer.unix_sockets = Some((expect_bool(cx, key, value)?, origin));
            Ok(())
        }),
        text: Text::Switch(true, |layer| &mut layer.unix_sockets),
        merge: |m, layer| {
            let set = layer.unix_sockets.take();
            m.only_off(set, "sandbox.unix_sockets", "Unix sockets stay off", |s| {
                &mut s.sandbox.unix_sockets
            });
        },
    },
    // Last: a lock holds against the layers after the one that sets it.
    Setting {
        key: "lock",
        env: None,
        flag: None,
        file: Some(|cx, key, value, origin, layer| {
            let lock = expect_bool(cx, key, value)?;
            if cx.kind == FileKind::Project {
                return Err(ConfigError::at(
                    &origin,
                    key,
                    "a project file cannot lock the configuration; only the system file \
                     can (a repository must not decide what the person may change)",
                ));
            }
            if cx.kind != FileKind::System {
                return Err(ConfigError::at(
                    &origin,
                    key,
                    format!(
                        "only the system file {SYSTEM_CONFIG} and its drop-ins in {} can \
                         lock the configuration",
                        system_drop_ins().display()
                    ),
                ));
            }
            layer.lock = Some((lock, origin));
            Ok(())
        }),
        text: Text::None,
        merge: |m, layer| {
            if let Some((lock, origin)) = layer.lock.take() {
                if m.locked && !lock {
                    // A lock holds against everything after it, a later drop-in too.
                    m.refuse(&origin, "lock", "no later file can unlock it");
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
    SETTINGS.iter().find(|s| {
        s.file.is_some()
            && match (table, s.key.split_once('.')) {
                (None, None) => s.key == name,
                (Some(table), Some((t, n))) => t == table && n == name,
                _ => false,
            }
    })
}

/// The setting `--name` sets.
pub fn by_flag(name: &str) -> Option<&'static Setting> {
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
pub fn env_layer(env: &dyn Fn(&str) -> Option<OsString>) -> Result<Layer, ConfigError> {
    let mut layer = Layer::default();
    for setting in SETTINGS {
        let (Some(name), Text::Value(read)) = (setting.env, setting.text) else {
            continue;
        };
        if let Some(value) = env(name).filter(|v| !v.is_empty()) {
            read(&value, Origin::Env(name), &mut layer)?;
        }
    }
    Ok(layer)
}

/// The command-line layer.
pub fn flag_layer(args: &GateArgs) -> Result<Layer, ConfigError> {
    let mut layer = Layer::default();
    for setting in SETTINGS {
        let Some((name, arg)) = setting.flag else {
            continue;
        };
        let origin = || Origin::Flag(name);
        match (arg, setting.text) {
            (Arg::One(get, _), Text::Value(read)) => {
                if let Some(value) = get(args) {
                    read(value, origin(), &mut layer)?;
                }
            }
            (Arg::Many(get, _), Text::Value(read)) => {
                for value in get(args) {
                    read(value, origin(), &mut layer)?;
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
