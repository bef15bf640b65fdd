//! Merging the layers: later layers replace values and add rules, and a lock holds against every loosening.

use super::*;

#[test]
fn later_layers_replace_values_and_add_rules() {
    let s = merge(
        vec![
            file("level = \"deny\"\nallow = [\"ls\"]\ndeny = [\"rm\"]\n").unwrap(),
            layer_with(|l| {
                l.level = Some((Level::Full, flag("--level")));
                l.allow.add("git status", flag("--allow")).unwrap();
                l.deny.add("curl", flag("--deny")).unwrap();
            }),
        ],
        vec![],
    )
    .unwrap();
    assert_eq!(s.policy.level, Level::Full);
    assert_eq!(s.policy.level_origin, flag("--level"));
    assert_eq!(s.policy.allow.len(), 2);
    assert_eq!(s.policy.deny.len(), 2);
    assert!(s.locked_by.is_none());
}

#[test]
fn defaults_apply_without_layers() {
    let s = merge(vec![], vec![]).unwrap();
    assert_eq!(s.policy.level, Level::Ask);
    assert_eq!(s.policy.level_origin, Origin::BuiltIn);
    assert_eq!(s.timeout, DEFAULT_TIMEOUT);
    assert!(!s.tty, "the terminal is asked only when turned on");
    assert_eq!(s.audit_log, AuditLog::Default);
    assert!(!s.audit_required);
}

#[test]
fn a_lock_refuses_every_loosening() {
    let cases: Vec<(&str, Layer)> = vec![
        (
            "level",
            layer_with(|l| l.level = Some((Level::Full, flag("--level")))),
        ),
        (
            "level",
            layer_with(|l| l.level = Some((Level::Ask, flag("--level")))),
        ),
        (
            "unsandboxed",
            layer_with(|l| {
                l.unsandboxed
                    .add("git push", flag("--unsandboxed"))
                    .unwrap();
            }),
        ),
        (
            "allow",
            layer_with(|l| l.allow.add("git", flag("--allow")).unwrap()),
        ),
        (
            "shell",
            layer_with(|l| l.shell = Some(("/bin/bash".into(), flag("--shell")))),
        ),
        (
            "audit.log",
            layer_with(|l| l.audit_log = Some((AuditLog::Off, flag("--audit-log")))),
        ),
        (
            "approval.tty",
            layer_with(|l| l.tty = Some((true, Origin::Env("GATE_X")))),
        ),
        (
            "approval.timeout",
            layer_with(|l| l.timeout = Some((31, flag("--timeout")))),
        ),
        (
            "sandbox.write",
            layer_with(|l| l.write.push(("/srv".into(), flag("--write")))),
        ),
        (
            "sandbox.net_connect",
            layer_with(|l| l.net_connect.push((443, flag("--net-connect")))),
        ),
        (
            "sandbox.net_bind",
            layer_with(|l| l.net_bind.push((8080, flag("--net-bind")))),
        ),
        (
            "sandbox.network",
            layer_with(|l| l.network = Some((true, flag("--net")))),
        ),
        (
            "sandbox.allow_domains",
            layer_with(|l| {
                l.allow_domains
                    .push(("example.com".into(), flag("--allow-domain")))
            }),
        ),
        (
            "sandbox.resolve",
            layer_with(|l| {
                l.resolve
                    .push(("registry.test=127.0.0.1".into(), flag("--resolve")))
            }),
        ),
        (
            "sandbox.best_effort",
            layer_with(|l| l.best_effort = Some((true, flag("--best-effort")))),
        ),
        (
            "sandbox.unix_sockets",
            layer_with(|l| l.unix_sockets = Some((true, flag("--unix-sockets")))),
        ),
    ];
    for (key, layer) in cases {
        let e = merge(vec![locked_system(), layer], vec![])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/etc/gate/config.toml locks the configuration"),
            "{key}: {e}"
        );
    }
}

#[test]
fn under_a_lock_only_the_system_file_turns_the_terminal_on() {
    let user_on = || user_file("[approval]\ntty = true\n").unwrap();
    // A locked system file that says nothing about it keeps the default: off.
    let locked = file("lock = true\n").unwrap();
    let e = merge(vec![locked.clone(), user_on()], vec![])
        .unwrap_err()
        .to_string();
    assert!(e.contains("asking on the terminal stays off"), "{e}");
    assert!(!merge(vec![locked], vec![]).unwrap().tty);
    // A locked system file that turns it on: later layers may turn it off again.
    let on = || file("lock = true\n[approval]\ntty = true\n").unwrap();
    assert!(merge(vec![on(), user_on()], vec![]).unwrap().tty);
    let off = layer_with(|l| l.tty = Some((false, flag("--no-tty"))));
    assert!(!merge(vec![on(), off], vec![]).unwrap().tty);
    // Without a lock, the user file turns it on.
    assert!(merge(vec![user_on()], vec![]).unwrap().tty);
}

#[test]
fn under_a_lock_deny_domains_may_still_be_added() {
    let narrowing = layer_with(|l| {
        l.deny_domains
            .push(("evil.example".into(), Origin::Flag("--deny-domain")))
    });
    let s = merge(vec![locked_system(), narrowing], vec![]).unwrap();
    assert_eq!(s.sandbox.deny_domains, ["evil.example"]);
}

#[test]
fn sandbox_require_names_graded_features_and_only_adds_up_under_a_lock() {
    use crate::sandbox::Feature;
    let system = file("lock = true\n[sandbox]\nrequire = [\"scopes\"]\n").unwrap();
    let user = user_file("[sandbox]\nrequire = [\"truncate\", \"scopes\"]\n").unwrap();
    let s = merge(vec![system.clone(), user], vec![]).unwrap();
    assert_eq!(s.sandbox.require, vec![Feature::Scopes, Feature::Truncate]);
    // A later layer cannot take the system file's requirement away: lists only grow.
    let s = merge(
        vec![system, user_file("[sandbox]\nrequire = []\n").unwrap()],
        vec![],
    )
    .unwrap();
    assert_eq!(s.sandbox.require, vec![Feature::Scopes]);
    let all = file("[sandbox]\nrequire = [\"all\"]\n").unwrap();
    assert_eq!(all.require.len(), 5);
    let e = err(file("[sandbox]\nrequire = [\"filesystem\"]\n"));
    assert!(
        e.contains(
            ":2: key `sandbox.require`: `filesystem` is not a kernel feature gate can \
                 require; the features are `refer`, `truncate`, `tcp_rules`, `device_ioctl`, \
                 `scopes`, or `all`"
        ),
        "{e}"
    );
}

#[test]
fn under_a_lock_ask_rules_may_be_added_and_the_locked_ones_stay() {
    let system = || file("lock = true\nlevel = \"full\"\nask = [\"git push\"]\n").unwrap();
    // A user layer that sets `ask` again, empty or with other rules, adds to the
    // locked list; it has no way to take a rule out.
    let s = merge(
        vec![
            system(),
            user_file("ask = []\n").unwrap(),
            layer_with(|l| l.ask.add("npm publish", flag("--ask")).unwrap()),
        ],
        vec![],
    )
    .unwrap();
    let rules: Vec<_> = s.policy.ask.iter().map(|(r, _)| r).collect();
    assert_eq!(rules, ["git push", "npm publish"]);
    // The locked rule keeps its origin even when a later layer repeats it.
    let s = merge(
        vec![
            system(),
            layer_with(|l| l.ask.add("git push", flag("--ask")).unwrap()),
        ],
        vec![],
    )
    .unwrap();
    assert_eq!(
        s.policy.ask.iter().next().unwrap().1.to_string(),
        "/etc/gate/config.toml:3"
    );
}

#[test]
fn a_lock_allows_tightening() {
    let s = merge(
        vec![
            locked_system(),
            layer_with(|l| {
                l.level = Some((Level::Deny, flag("--level")));
                l.deny.add("rm", flag("--deny")).unwrap();
                l.timeout = Some((10, flag("--timeout")));
                l.tty = Some((false, flag("--no-tty")));
                l.audit_required = Some((true, flag("x")));
            }),
        ],
        vec![],
    )
    .unwrap();
    assert_eq!(s.policy.level, Level::Deny);
    assert!(s.audit_required);
    assert_eq!(s.timeout, 10);
    assert_eq!(s.policy.deny.len(), 1);
    assert!(s.locked_by.is_some());
    // Restating the locked level is not a change.
    merge(
        vec![
            locked_system(),
            layer_with(|l| l.level = Some((Level::Safe, flag("--level")))),
        ],
        vec![],
    )
    .unwrap();
}

#[test]
fn under_a_lock_that_names_no_audit_log_or_socket_later_layers_cannot_choose_them() {
    // The locking file says nothing of either: the default place stays, and a user
    // file (which the model can write) can neither send the log to /dev/null nor
    // point gate at an approver of its own.
    for layer in [
        layer_with(|l| {
            l.audit_log = Some((AuditLog::Path("/dev/null".into()), flag("--audit-log")))
        }),
        layer_with(|l| l.socket = Some(("/tmp/model.sock".into(), flag("--socket")))),
    ] {
        let e = merge(vec![locked_system(), layer], vec![]).unwrap_err();
        assert!(e.to_string().contains("cannot be"), "{e}");
    }
    // Without the lock, both are the user's choice.
    let open = file("level = \"ask\"\n").unwrap();
    let s = merge(
        vec![
            open,
            layer_with(|l| l.socket = Some(("/tmp/mine.sock".into(), flag("--socket")))),
        ],
        vec![],
    )
    .unwrap();
    assert_eq!(s.socket, Some("/tmp/mine.sock".into()));
}

#[test]
fn the_approver_user_is_a_name_or_a_uid_and_the_lock_keeps_it() {
    let named = file("[approval]\napprover = \"alice\"\n").unwrap();
    assert_eq!(
        named.approver.unwrap().0,
        ApproverUser::Name("alice".into())
    );
    let by_number = file("[approval]\napprover = 1001\n").unwrap();
    assert_eq!(by_number.approver.unwrap().0, ApproverUser::Uid(1001));
    let in_digits = file("[approval]\napprover = \"0\"\n").unwrap();
    assert_eq!(in_digits.approver.unwrap().0, ApproverUser::Uid(0));
    for bad in [
        "\"\"",
        "\"-x\"",
        "\"a b\"",
        "\"a/b\"",
        "-1",
        "4294967296",
        "true",
    ] {
        let e = file(&format!("[approval]\napprover = {bad}\n")).unwrap_err();
        assert!(e.to_string().contains("approval.approver"), "{bad}: {e}");
    }
    // Under a lock, a later file (which the model can write) can neither name
    // another approver user nor add one the locking file did not name.
    let sys =
        file("lock = true\n[approval]\nsocket = \"/run/gate/a.sock\"\napprover = \"alice\"\n")
            .unwrap();
    let other = user_file("[approval]\napprover = \"bob\"\n").unwrap();
    let e = merge(vec![sys.clone(), other], vec![]).unwrap_err();
    assert!(
        e.to_string()
            .contains("the approver user cannot be changed"),
        "{e}"
    );
    let same = user_file("[approval]\napprover = \"alice\"\n").unwrap();
    let s = merge(vec![sys, same], vec![]).unwrap();
    assert_eq!(s.approver, Some(ApproverUser::Name("alice".into())));
    let added = user_file("[approval]\napprover = \"bob\"\n").unwrap();
    assert!(merge(vec![locked_system(), added], vec![]).is_err());
    // Without a lock it is anyone's setting, as the socket is.
    let s = merge(
        vec![
            file("").unwrap(),
            user_file("[approval]\napprover = 7\n").unwrap(),
        ],
        vec![],
    )
    .unwrap();
    assert_eq!(s.approver, Some(ApproverUser::Uid(7)));
}

#[test]
fn a_locked_audit_path_cannot_move() {
    let sys =
        file("lock = true\n[audit]\nlog = \"/var/log/gate.jsonl\"\nrequired = true\n").unwrap();
    let moved =
        layer_with(|l| l.audit_log = Some((AuditLog::Path("/tmp/x".into()), flag("--audit-log"))));
    assert!(merge(vec![sys.clone(), moved], vec![]).is_err());
    let unrequired = layer_with(|l| l.audit_required = Some((false, flag("x"))));
    assert!(merge(vec![sys, unrequired], vec![]).is_err());
}

#[test]
fn a_required_audit_log_cannot_be_off() {
    let sys = file("[audit]\nrequired = true\n").unwrap();
    let off = layer_with(|l| l.audit_log = Some((AuditLog::Off, flag("--audit-log"))));
    let e = merge(vec![sys, off], vec![]).unwrap_err().to_string();
    assert!(
        e.starts_with(
            "--audit-log: the audit log is turned off, but /etc/gate/config.toml:2 requires it"
        ),
        "{e}"
    );
}

#[test]
fn a_later_system_layer_file_cannot_unlock() {
    let unlock = parse_file(
        Path::new("/etc/gate/config.d/90-x.toml"),
        "lock = false\n",
        FileKind::System,
        None,
    )
    .unwrap();
    let e = merge(vec![locked_system(), unlock.clone()], vec![])
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(
            "/etc/gate/config.d/90-x.toml:1: key `lock`: /etc/gate/config.toml locks the \
                 configuration (lock = true), so no later file can unlock it"
        ),
        "{e}"
    );
    // Control: before any lock, `lock = false` is simply the default.
    assert!(merge(vec![unlock], vec![]).unwrap().locked_by.is_none());
    // A second lock keeps the first file as the one that locked.
    let again = parse_file(
        Path::new("/etc/gate/config.d/90-x.toml"),
        "lock = true\n",
        FileKind::System,
        None,
    )
    .unwrap();
    let s = merge(vec![locked_system(), again], vec![]).unwrap();
    assert_eq!(
        s.locked_by.as_deref(),
        Some(Path::new("/etc/gate/config.toml"))
    );
}

#[test]
fn the_system_journal_is_chosen_by_name_and_fixed_under_a_lock() {
    for (text, value) in AuditJournal::VALUES {
        let layer = file(&format!("[audit]\njournal = \"{text}\"\n")).unwrap();
        assert_eq!(layer.audit_journal.unwrap().0, *value);
        let env = env_layer(&|n: &str| (n == "GATE_AUDIT_JOURNAL").then(|| (*text).into()));
        assert_eq!(env.unwrap().audit_journal.unwrap().0, *value);
    }
    let e = file("[audit]\njournal = \"yes\"\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("audit.journal") && e.contains("`yes` is not one of"),
        "{e}"
    );
    let e = file("[audit]\njournal = true\n").unwrap_err().to_string();
    assert!(e.contains("expected a string"), "{e}");
    assert_eq!(
        merge(vec![], vec![]).unwrap().audit_journal,
        AuditJournal::Off
    );
    // Under a lock: not off, not moved to syslog, not turned on when the system
    // file left it off.
    let sys = file("lock = true\n[audit]\njournal = \"on\"\n").unwrap();
    for other in [AuditJournal::Off, AuditJournal::Syslog, AuditJournal::Auto] {
        let later = layer_with(|l| l.audit_journal = Some((other, flag("GATE_AUDIT_JOURNAL"))));
        let e = merge(vec![sys.clone(), later], vec![])
            .unwrap_err()
            .to_string();
        assert!(e.contains("audit.journal stays \"on\""), "{e}");
    }
    let same = layer_with(|l| l.audit_journal = Some((AuditJournal::On, flag("x"))));
    assert_eq!(
        merge(vec![sys, same], vec![]).unwrap().audit_journal,
        AuditJournal::On
    );
    let silent = file("lock = true\n").unwrap();
    let on = layer_with(|l| l.audit_journal = Some((AuditJournal::On, flag("x"))));
    assert!(merge(vec![silent, on], vec![]).is_err());
    // Without a lock, a later layer chooses.
    let sys = file("[audit]\njournal = \"on\"\n").unwrap();
    let off = layer_with(|l| l.audit_journal = Some((AuditJournal::Off, flag("x"))));
    assert_eq!(
        merge(vec![sys, off], vec![]).unwrap().audit_journal,
        AuditJournal::Off
    );
}

#[test]
fn a_required_audit_may_go_to_the_journal_alone() {
    let sys = file("[audit]\nrequired = true\nlog = \"off\"\njournal = \"on\"\n").unwrap();
    let s = merge(vec![sys], vec![]).unwrap();
    assert!(s.audit_required && s.audit_log == AuditLog::Off);
    let sys = file("[audit]\nrequired = true\nlog = \"off\"\njournal = \"off\"\n").unwrap();
    assert!(merge(vec![sys], vec![]).is_err());
}

#[test]
fn an_unlocked_system_file_can_be_overridden() {
    let sys = file("level = \"deny\"\n").unwrap();
    let s = merge(
        vec![
            sys,
            layer_with(|l| l.level = Some((Level::Full, flag("--level")))),
        ],
        vec![],
    )
    .unwrap();
    assert_eq!(s.policy.level, Level::Full);
}
