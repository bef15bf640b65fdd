use super::*;
use std::ffi::{OsStr, OsString};

fn file(text: &str) -> Result<Layer, ConfigError> {
    parse_file(
        Path::new("/etc/gate/config.toml"),
        text,
        FileKind::System,
        Some(Path::new("/home/u")),
    )
}

fn user_file(text: &str) -> Result<Layer, ConfigError> {
    parse_file(
        Path::new("/home/u/.config/gate/config.toml"),
        text,
        FileKind::User,
        Some(Path::new("/home/u")),
    )
}

fn err(r: Result<Layer, ConfigError>) -> String {
    r.unwrap_err().to_string()
}

#[test]
fn a_full_file_parses() {
    let layer = file(
        r#"
level = "ask"
shell = "/bin/bash"
allow = ["git status", "cargo test"]
deny = ["git push --force"]
lock = true
[approval]
socket = "~/gate.sock"
tty = false
timeout = 30
[audit]
log = "~/audit.jsonl"
required = true
"#,
    )
    .unwrap();
    assert_eq!(layer.level.unwrap().0, Level::Ask);
    assert_eq!(layer.shell.unwrap().0, PathBuf::from("/bin/bash"));
    assert_eq!(layer.allow.len(), 2);
    assert_eq!(
        *layer.allow.find("cargo test").unwrap().1,
        Origin::File {
            path: Arc::from(Path::new("/etc/gate/config.toml")),
            line: 4
        }
    );
    assert_eq!(layer.deny.iter().next().unwrap().0, "git push --force");
    assert!(layer.lock.unwrap().0);
    assert_eq!(layer.socket.unwrap().0, PathBuf::from("/home/u/gate.sock"));
    assert!(!layer.tty.unwrap().0);
    assert_eq!(layer.timeout.unwrap().0, 30);
    assert_eq!(
        layer.audit_log.unwrap().0,
        AuditLog::Path("/home/u/audit.jsonl".into())
    );
    assert!(layer.audit_required.unwrap().0);
}

#[test]
fn dotted_keys_are_the_same_keys() {
    let layer = file("approval.timeout = 5\naudit.log = \"off\"\n").unwrap();
    assert_eq!(layer.timeout.unwrap().0, 5);
    assert_eq!(layer.audit_log.unwrap().0, AuditLog::Off);
}

#[test]
fn unknown_keys_name_file_line_and_key() {
    let e = err(file("level = \"ask\"\n\nlevle = \"full\"\n"));
    assert!(
        e.starts_with("/etc/gate/config.toml:3: key `levle`: unknown key"),
        "{e}"
    );
    let e = err(file("[approval]\ntty = true\nsockt = \"/x\"\n"));
    assert!(
        e.starts_with("/etc/gate/config.toml:3: key `approval.sockt`: unknown key"),
        "{e}"
    );
    let e = err(file("[sandbx]\nnetwork = true\n"));
    assert!(e.contains("key `sandbx`: unknown key"), "{e}");
    let e = err(file("[sandbox]\nnet = true\n"));
    assert!(e.contains(":2: key `sandbox.net`: unknown key"), "{e}");
}

#[test]
fn wrong_types_name_file_line_and_key() {
    let e = err(file("\nlevel = 3\n"));
    assert_eq!(
        e,
        "/etc/gate/config.toml:2: key `level`: expected a string, found integer"
    );
    let e = err(file("allow = \"ls\"\n"));
    assert!(
        e.contains(":1: key `allow`: expected an array of strings, found string"),
        "{e}"
    );
    let e = err(file("allow = [\n  \"ls\",\n  3,\n]\n"));
    assert!(
            e.contains(":3: key `allow`: expected a string, or a table with `rule`, `match` and `not_match`, found integer"),
            "{e}"
        );
    let e = err(file("[approval]\ntty = \"yes\"\n"));
    assert!(
        e.contains(":2: key `approval.tty`: expected true or false, found string"),
        "{e}"
    );
    let e = err(file("approval = 1\n"));
    assert!(e.contains(":1: key `approval`: expected a table"), "{e}");
}

#[test]
fn bad_values_name_file_line_and_key() {
    let e = err(file("level = \"yolo\"\n"));
    assert!(e.contains(":1: key `level`: `yolo` is not a level"), "{e}");
    let e = err(file("[approval]\ntimeout = 0\n"));
    assert!(
        e.contains(":2: key `approval.timeout`: the timeout must be between"),
        "{e}"
    );
    let e = err(file("[approval]\ntimeout = 99999999999999999999\n"));
    assert!(e.contains("approval.timeout"), "{e}");
    let e = err(file("shell = \"bash\"\n"));
    assert!(
        e.contains(":1: key `shell`: `bash` must be an absolute path"),
        "{e}"
    );
}

#[test]
fn bad_rules_name_file_line_and_key() {
    let e = err(file(
        "allow = [\n  \"git status\",\n  \"git status; ls\",\n]\n",
    ));
    assert!(e.starts_with("/etc/gate/config.toml:3: key `allow`: `git status; ls`: a rule cannot contain the shell character ';'"), "{e}");
    let e = err(file("deny = [\"  \"]\n"));
    assert!(
        e.contains(":1: key `deny`: `  `: a rule cannot be blank"),
        "{e}"
    );
    let e = err(file("deny = [\"FOO=1\"]\n"));
    assert!(
        e.contains(":1: key `deny`: `FOO=1`: a deny or ask rule must name a program"),
        "{e}"
    );
}

#[test]
fn malformed_toml_names_file_and_line() {
    let e = err(file("level = \"ask\"\nallow = [\"ls\"\n"));
    assert!(e.starts_with("/etc/gate/config.toml:"), "{e}");
    assert!(e.contains("malformed TOML"), "{e}");
    let e = err(file("level = \"ask\"\nlevel = \"full\"\n"));
    assert!(e.contains(":2:") && e.contains("malformed TOML"), "{e}");
    let e = err(file("shell = /bin/sh\n"));
    assert!(e.contains(":1: key `shell`: malformed TOML"), "{e}");
    assert!(!e.contains('\n'));
}

#[test]
fn the_always_file_holds_only_allow_rules_and_a_lock_refuses_them() {
    let always = |text: &str| {
        parse_file(
            Path::new("/home/u/.config/gate/always.toml"),
            text,
            FileKind::Always,
            Some(Path::new("/home/u")),
        )
    };
    let layer = always("# one\n[[allow]]\nrule = \"git status\"\nexact = true\n").unwrap();
    let (_, origin) = layer.allow.find("git status").unwrap();
    assert_eq!(
        origin.to_string(),
        "/home/u/.config/gate/always.toml:3 (always allow)"
    );
    assert!(layer.allow.find("git status -s").is_none());
    for text in [
        "level = \"full\"\n",
        "deny = [\"rm\"]\n",
        "[approval]\ntty = true\n",
        "lock = false\n",
    ] {
        let e = err(always(text));
        assert!(e.contains("holds only `allow` rules"), "{text}: {e}");
    }
    let e = err(always("allow = [{ rule = \"ls\", from = \"x:1\" }]\n"));
    assert!(e.contains("holds approvals, not imported rules"), "{e}");
    let e = merge(vec![locked_system(), layer], vec![])
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(
            "/home/u/.config/gate/always.toml:3 (always allow): key `allow`: \
                 /etc/gate/config.toml locks the configuration (lock = true), so no allow \
                 rules can be added"
        ),
        "{e}"
    );
}

#[test]
fn only_the_system_file_may_lock() {
    let e = err(user_file("lock = true\n"));
    assert!(e.contains("key `lock`: only the system file"), "{e}");
}

fn layer_with(f: impl FnOnce(&mut Layer)) -> Layer {
    let mut l = Layer::default();
    f(&mut l);
    l
}

fn flag(name: &'static str) -> Origin {
    Origin::Flag(name)
}

fn locked_system() -> Layer {
    file("lock = true\nlevel = \"safe\"\nallow = [\"ls\"]\n[approval]\ntimeout = 30\ntty = false\n")
        .unwrap()
}

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
fn domain_keys_parse_into_normal_form_and_bad_ones_say_why() {
    let layer = file(
            "[sandbox]\nallow_domains = [\"Registry.Test.\", \"@npm\", \"*.example.net:*\"]\ndeny_domains = [\"evil.example.net\"]\nresolve = [\"registry.test = 127.0.0.1\"]\n",
        )
        .unwrap();
    let texts = |l: &[(String, Origin)]| l.iter().map(|(t, _)| t.clone()).collect::<Vec<_>>();
    assert_eq!(
        texts(&layer.allow_domains),
        ["registry.test", "@npm", "*.example.net:*"]
    );
    assert_eq!(texts(&layer.deny_domains), ["evil.example.net"]);
    assert_eq!(texts(&layer.resolve), ["registry.test=127.0.0.1"]);
    let e = err(file("[sandbox]\nallow_domains = [\"@nope\"]\n"));
    assert!(
        e.contains("key `sandbox.allow_domains`: `@nope` is not a preset (the presets are @npm"),
        "{e}"
    );
    let e = err(file("[sandbox]\ndeny_domains = [\"a.*.b\"]\n"));
    assert!(e.contains("key `sandbox.deny_domains`: `a.*.b`"), "{e}");
    let e = err(file("[sandbox]\nresolve = [\"registry.test\"]\n"));
    assert!(
        e.contains("key `sandbox.resolve`: `registry.test` is not NAME=ADDRESS"),
        "{e}"
    );
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
fn sandbox_keys_parse_and_validate() {
    let layer = file(
            "[sandbox]\nwrite = [\"/srv\"]\ndeny_read = [\"~/.secret\"]\nnet_connect = [443]\nnet_bind = [8080]\nbest_effort = true\nunix_sockets = true\n",
        )
        .unwrap();
    assert_eq!(layer.write[0].0, PathBuf::from("/srv"));
    assert_eq!(layer.deny_read[0].0, PathBuf::from("/home/u/.secret"));
    assert_eq!(layer.net_connect[0].0, 443);
    assert_eq!(layer.net_bind[0].0, 8080);
    assert!(layer.best_effort.as_ref().unwrap().0);
    let e = err(file("[sandbox]\nnet_connect = [0]\n"));
    assert!(
        e.contains(":2: key `sandbox.net_connect`: `0` is not a TCP port"),
        "{e}"
    );
    let e = err(file("[sandbox]\nnet_bind = [70000]\n"));
    assert!(e.contains("`70000` is not a TCP port"), "{e}");
    let e = err(file("[sandbox]\nwrite = [\"relative\"]\n"));
    assert!(
        e.contains("key `sandbox.write`: `relative` must be an absolute path"),
        "{e}"
    );
    let both = file("[sandbox]\nnetwork = true\nnet_connect = [443]\n").unwrap();
    let e = merge(vec![both], vec![]).unwrap_err().to_string();
    assert!(e.contains("key `sandbox.network`"), "{e}");
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
fn ask_rules_are_read_from_a_file_and_options_with_their_origins() {
    let layer = user_file("ask = [\"git push\",\n  \"npm publish\"]\n").unwrap();
    let rules: Vec<_> = layer
        .ask
        .iter()
        .map(|(r, o)| (r.to_owned(), o.to_string()))
        .collect();
    assert_eq!(
        rules,
        [
            (
                "git push".to_owned(),
                "/home/u/.config/gate/config.toml:1".to_owned()
            ),
            (
                "npm publish".to_owned(),
                "/home/u/.config/gate/config.toml:2".to_owned()
            ),
        ]
    );
    let e = err(user_file("ask = [\"git push; ls\"]\n"));
    assert!(
        e.contains(":1: key `ask`: `git push; ls`: a rule cannot contain"),
        "{e}"
    );
    let e = err(user_file("ask = [\"Bash(git push:*)\"]\n"));
    assert!(e.contains("key `ask`"), "{e}");
    let e = err(user_file("ask = \"git push\"\n"));
    assert!(e.contains("key `ask`"), "{e}");
}

#[test]
fn a_rule_may_carry_examples_it_must_and_must_not_match() {
    let layer = user_file(
            r#"
deny = [
  "rm -rf",
  { rule = "git push --force", match = ["git push -f origin", "git -C x push --force"], not_match = ["git push origin"] },
]
ask = [{ rule = "npm publish", match = ["cd pkg && npm publish --tag next"] }]
allow = [{ rule = "git status", not_match = ["git status; rm x", "gitk"] }, "ls"]
"#,
        )
        .unwrap();
    let rules: Vec<_> = layer.deny.iter().map(|(r, o)| (r, o.to_string())).collect();
    assert_eq!(
        rules,
        [
            ("rm -rf", "/home/u/.config/gate/config.toml:3".to_owned()),
            (
                "git push --force",
                "/home/u/.config/gate/config.toml:4".to_owned()
            ),
        ]
    );
    assert_eq!(layer.ask.len(), 1);
    assert_eq!(layer.allow.len(), 2);
}

#[test]
fn an_allow_rule_may_be_exact_and_carry_where_an_import_found_it() {
    let layer = user_file(
        r#"
allow = [
  { rule = "git status", exact = true, not_match = ["git status -s"], match = ["git status"] },
  { rule = "npm test", from = "/home/u/.claude/settings.json:4" },
  { rule = "ls", exact = false },
]
deny = [{ rule = "rm -rf", from = "/home/u/.codex/rules/default.rules:2" }]
"#,
    )
    .unwrap();
    assert!(layer.allow.is_exact("git status"));
    assert!(layer.allow.find("git status").is_some());
    assert!(layer.allow.find("git status -s").is_none());
    assert!(!layer.allow.is_exact("ls"));
    assert!(layer.allow.find("ls -la").is_some());
    assert_eq!(
        layer.allow.find("npm test --watch").unwrap().1.to_string(),
        "/home/u/.config/gate/config.toml:4 (imported from /home/u/.claude/settings.json:4)"
    );
    let (_, origin) = layer.deny.iter().next().unwrap();
    assert!(
        matches!(origin, Origin::Imported { line: 7, .. }),
        "{origin:?}"
    );
}

#[test]
fn only_an_allow_rule_can_be_exact_and_from_is_one_plain_line() {
    for key in ["deny", "ask"] {
        let e = err(user_file(&format!(
            "{key} = [{{ rule = \"git push\", exact = true }}]\n"
        )));
        assert!(
            e.contains(&format!(
                ":1: key `{key}.exact`: only an allow rule can be exact"
            )),
            "{e}"
        );
    }
    // `exact = false` is what a rule is anyway.
    assert!(user_file("deny = [{ rule = \"rm\", exact = false }]\n").is_ok());
    let e = err(user_file("allow = [{ rule = \"ls\", exact = \"yes\" }]\n"));
    assert!(e.contains("key `allow.exact`: expected"), "{e}");
    for from in ["\"\"", "\"  \"", "\"a\\nb\""] {
        let e = err(user_file(&format!(
            "allow = [{{ rule = \"ls\", from = {from} }}]\n"
        )));
        assert!(e.contains("key `allow.from`: `from` names where"), "{e}");
    }
    // An exact rule's examples are matched as an exact rule matches.
    let e = err(user_file(
        "allow = [{ rule = \"git status\", exact = true, match = [\"git status -s\"] }]\n",
    ));
    assert!(
        e.contains("does not match its example `git status -s`"),
        "{e}"
    );
}

#[test]
fn an_example_the_rule_gets_wrong_stops_everything_naming_the_rule_and_the_example() {
    let e = err(user_file(
        "deny = [\n  { rule = \"git push --force\",\n    match = [\"git push origin\"] },\n]\n",
    ));
    assert_eq!(
        e,
        "/home/u/.config/gate/config.toml:3: key `deny.match`: the rule `git push --force` \
             does not match its example `git push origin`, which `match` says it must"
    );
    let e = err(user_file(
        "allow = [{ rule = \"git\", not_match = [\"git push\"] }]\n",
    ));
    assert!(
        e.contains(
            ":1: key `allow.not_match`: the rule `git` matches its example `git push`, \
                 which `not_match` says it must not"
        ),
        "{e}"
    );
    let e = err(user_file(
        "ask = [{ rule = \"git push\", match = [\"git pull\"] }]\n",
    ));
    assert!(e.contains("key `ask.match`: the rule `git push`"), "{e}");
    // The rule itself is checked first, with its own line.
    let e = err(user_file(
        "deny = [{ rule = \"rm; x\", match = [\"rm\"] }]\n",
    ));
    assert!(
        e.contains(":1: key `deny`: `rm; x`: a rule cannot contain"),
        "{e}"
    );
}

#[test]
fn a_rule_table_has_only_rule_match_and_not_match() {
    let e = err(user_file("deny = [{ match = [\"rm x\"] }]\n"));
    assert!(
        e.contains(":1: key `deny`: a table here needs `rule`"),
        "{e}"
    );
    let e = err(user_file(
        "deny = [{ rule = \"rm\", matches = [\"rm x\"] }]\n",
    ));
    assert!(
        e.contains(
            "key `deny.matches`: unknown key; the keys here are `rule`, `match`, `not_match`"
        ),
        "{e}"
    );
    let e = err(user_file("deny = [{ rule = \"rm\", match = \"rm x\" }]\n"));
    assert!(
        e.contains("key `deny.match`: expected an array of strings"),
        "{e}"
    );
    let e = err(user_file("deny = [1]\n"));
    assert!(
        e.contains("expected a string, or a table with `rule`, `match` and `not_match`"),
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
fn drop_ins_are_toml_files_that_are_not_hidden() {
    for name in ["10-ci.toml", "ci.toml", "a b.toml"] {
        assert!(is_drop_in(OsStr::new(name)), "{name}");
    }
    for name in [
        "10-ci.toml~",
        "10-ci.toml.dpkg-old",
        "10-ci.toml.dpkg-dist",
        "10-ci.toml.dpkg-new",
        ".10-ci.toml.swp",
        ".10-ci.toml",
        ".toml",
        "10-ci.conf",
        "README",
    ] {
        assert!(!is_drop_in(OsStr::new(name)), "{name}");
    }
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

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
    let pairs: Vec<(String, String)> = pairs
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    move |name| {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| OsString::from(v))
    }
}

#[test]
fn environment_variables_are_parsed_and_named_in_errors() {
    let env = env_of(&[
        ("GATE_LEVEL", "full"),
        ("GATE_TIMEOUT", "7"),
        ("GATE_SESSION", "abc-1"),
        ("GATE_AUDIT_LOG", "off"),
    ]);
    let l = env_layer(&env).unwrap();
    assert_eq!(l.level.unwrap(), (Level::Full, Origin::Env("GATE_LEVEL")));
    assert_eq!(l.timeout.unwrap().0, 7);
    assert_eq!(l.session.unwrap().0, "abc-1");
    assert_eq!(l.audit_log.unwrap().0, AuditLog::Off);
    for (var, value, expect) in [
        ("GATE_LEVEL", "FULL", "GATE_LEVEL: `FULL` is not a level"),
        (
            "GATE_TIMEOUT",
            "soon",
            "GATE_TIMEOUT: `soon` is not a number",
        ),
        (
            "GATE_TIMEOUT",
            "0",
            "GATE_TIMEOUT: the timeout must be between",
        ),
        (
            "GATE_SESSION",
            "a b",
            "GATE_SESSION: `a b` is not a session id",
        ),
        (
            "GATE_SHELL",
            "bash",
            "GATE_SHELL: `bash` must be an absolute path",
        ),
        (
            "GATE_AUDIT_LOG",
            "log.jsonl",
            "GATE_AUDIT_LOG: `log.jsonl` must be an absolute path",
        ),
        (
            "GATE_SOCKET",
            "s.sock",
            "GATE_SOCKET: `s.sock` must be an absolute path",
        ),
    ] {
        let e = env_layer(&env_of(&[(var, value)])).unwrap_err().to_string();
        assert!(e.starts_with(expect), "{e}");
    }
    // Empty means unset.
    assert!(
        env_layer(&env_of(&[("GATE_LEVEL", "")]))
            .unwrap()
            .level
            .is_none()
    );
}

#[test]
fn flags_are_parsed_and_named_in_errors() {
    let args = GateArgs {
        level: Some("deny".into()),
        allow: vec!["ls".into()],
        no_tty: true,
        ..GateArgs::default()
    };
    let l = flag_layer(&args).unwrap();
    assert_eq!(l.level.unwrap(), (Level::Deny, flag("--level")));
    assert_eq!(
        l.allow.iter().collect::<Vec<_>>(),
        vec![("ls", &flag("--allow"))]
    );
    assert!(!l.tty.unwrap().0);
    let bad = GateArgs {
        allow: vec!["ls | sh".into()],
        ..GateArgs::default()
    };
    let e = flag_layer(&bad).unwrap_err().to_string();
    assert!(
        e.starts_with("--allow: `ls | sh`: a rule cannot contain the shell character '|'"),
        "{e}"
    );
    let bad = GateArgs {
        timeout: Some("-3".into()),
        ..GateArgs::default()
    };
    assert!(
        flag_layer(&bad)
            .unwrap_err()
            .to_string()
            .starts_with("--timeout: ")
    );
}

#[test]
fn only_regular_files_are_read_and_nothing_waits() {
    let dir = tempfile::tempdir().unwrap();
    let err = |path: &Path| read_optional(path).unwrap_err().to_string();
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    assert_eq!(
        err(&fifo),
        format!(
            "{}: is a FIFO (named pipe), not a regular file",
            fifo.display()
        )
    );
    assert_eq!(
        err(dir.path()),
        format!(
            "{}: is a directory, not a regular file",
            dir.path().display()
        )
    );
    assert_eq!(
        err(Path::new("/dev/zero")),
        "/dev/zero: is a character device, not a regular file"
    );
    // The null device is the usual way to name an empty file.
    assert_eq!(
        read_optional(Path::new("/dev/null")),
        Ok(Some(String::new()))
    );
    assert_eq!(read_optional(&dir.path().join("absent")), Ok(None));
    let through_a_file = dir.path().join("fifo/x.toml");
    assert!(err(&through_a_file).contains("cannot read it"));
}

#[test]
fn a_file_is_read_up_to_a_mebibyte_and_no_further() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.toml");
    let cap = usize::try_from(MAX_CONFIG_BYTES).unwrap();
    std::fs::write(&path, "#".repeat(cap)).unwrap();
    assert_eq!(read_optional(&path).unwrap().unwrap().len(), cap);
    std::fs::write(&path, "#".repeat(cap + 1)).unwrap();
    assert_eq!(
        read_optional(&path).unwrap_err().to_string(),
        format!(
            "{}: is larger than 1 MiB (1048577 bytes), too large for a configuration file",
            path.display()
        )
    );
}

#[test]
fn line_numbers_are_exact_for_many_rules() {
    let mut text = String::from("allow = [\n");
    for i in 0..1000 {
        text.push_str(&format!("  \"cmd{i}\",\n"));
    }
    text.push_str("]\n");
    let l = file(&text).unwrap();
    assert_eq!(
        *l.allow.find("cmd999").unwrap().1,
        Origin::File {
            path: Arc::from(Path::new("/etc/gate/config.toml")),
            line: 1001
        }
    );
}

fn project_file(text: &str, trusted: bool) -> Layer {
    let mut layer = parse_file(
        Path::new("/src/repo/.gate.toml"),
        text,
        FileKind::Project,
        Some(Path::new("/home/u")),
    )
    .unwrap();
    if !trusted {
        layer.untrusted = Some(Untrusted {
            file: Arc::from(Path::new("/src/repo/.gate.toml")),
            why: "is not trusted".into(),
        });
    }
    layer
}

#[test]
fn a_project_file_cannot_lock() {
    let e = parse_file(
        Path::new("/src/repo/.gate.toml"),
        "lock = true\n",
        FileKind::Project,
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("/src/repo/.gate.toml:1: key `lock`: a project file cannot lock"),
        "{e}"
    );
}

#[test]
fn an_untrusted_project_file_may_tighten() {
    let user = user_file("level = \"full\"\nallow = [\"git status\"]\n").unwrap();
    let project = project_file(
        "level = \"ask\"\ndeny = [\"git push\"]\nask = [\"npm publish\"]\n\
             readonly_rules = true\n[sandbox]\ndeny_read = [\"~/secrets\"]\n\
             [approval]\ntimeout = 10\n",
        false,
    );
    let s = merge(vec![user, project], vec![]).unwrap();
    assert_eq!(s.policy.level, Level::Ask);
    assert_eq!(s.policy.deny.len(), 1);
    assert_eq!(s.policy.ask.len(), 1);
    assert_eq!(s.policy.allow.len(), 1, "the user's own rule stays");
    assert!(s.policy.readonly_rules);
    assert_eq!(s.timeout, 10);
    assert_eq!(s.sandbox.deny_read, vec![PathBuf::from("/home/u/secrets")]);
}

#[test]
fn an_untrusted_project_file_that_loosens_is_refused_naming_file_key_and_gate_trust() {
    for (text, key) in [
        ("allow = [\"git push\"]\n", "allow"),
        (
            "allow = [{ rule = \"git status\", exact = true }]\n",
            "allow",
        ),
        ("unsandboxed = [\"git push\"]\n", "unsandboxed"),
        ("level = \"full\"\n", "level"),
        ("level = \"safe\"\n", "level"),
        ("shell = \"/tmp/evil\"\n", "shell"),
        ("readonly = true\n", "readonly"),
        ("compound = true\n", "compound"),
        ("[audit]\nlog = \"off\"\n", "audit.log"),
        ("[audit]\njournal = \"on\"\n", "audit.journal"),
        ("[approval]\nsocket = \"/tmp/s\"\n", "approval.socket"),
        ("[approval]\ntty = true\n", "approval.tty"),
        ("[approval]\ntimeout = 600\n", "approval.timeout"),
        ("[sandbox]\nwrite = [\"/\"]\n", "sandbox.write"),
        ("[sandbox]\nnetwork = true\n", "sandbox.network"),
        (
            "[sandbox]\nallow_domains = [\"example.com\"]\n",
            "sandbox.allow_domains",
        ),
        ("[sandbox]\nunix_sockets = true\n", "sandbox.unix_sockets"),
        ("[sandbox]\nbest_effort = true\n", "sandbox.best_effort"),
    ] {
        let e = merge(vec![project_file(text, false)], vec![])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("/src/repo/.gate.toml:")
                && e.contains(&format!(
                    "key `{key}`: the project file is not trusted, so "
                )),
            "{text}: {e}"
        );
        assert!(
            e.ends_with(
                "; a person who trusts it can run `gate trust /src/repo/.gate.toml` in a \
                     terminal of their own"
            ),
            "{e}"
        );
        assert!(!e.contains('\n'));
        // Trusted, it loads.
        merge(vec![project_file(text, true)], vec![]).unwrap();
    }
}

#[test]
fn from_full_an_untrusted_project_may_choose_any_stricter_level() {
    for level in ["ask", "safe", "deny"] {
        let user = user_file("level = \"full\"\n").unwrap();
        let project = project_file(&format!("level = \"{level}\"\n"), false);
        let s = merge(vec![user, project], vec![]).unwrap();
        assert_eq!(s.policy.level.as_str(), level);
    }
    let user = user_file("level = \"safe\"\n").unwrap();
    let e = merge(vec![user, project_file("level = \"ask\"\n", false)], vec![])
        .unwrap_err()
        .to_string();
    assert!(e.contains("the level stays `safe` (only `deny`"), "{e}");
    assert!(stricter_level(Level::Ask, Level::Deny));
    assert!(!stricter_level(Level::Ask, Level::Safe));
    assert!(!stricter_level(Level::Deny, Level::Ask));
}

#[test]
fn a_system_lock_holds_against_a_trusted_project_file_and_is_what_the_message_names() {
    for trusted in [true, false] {
        let e = merge(
            vec![
                locked_system(),
                project_file("allow = [\"git push\"]\n", trusted),
            ],
            vec![],
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains(
                "key `allow`: /etc/gate/config.toml locks the configuration (lock = true), \
                     so no allow rules can be added (`git push`)"
            ),
            "{e}"
        );
    }
}

#[test]
fn grants_lists_every_loosening_of_the_project_file() {
    let user = user_file("level = \"ask\"\n").unwrap();
    let project = project_file(
        "allow = [\"b\", \"a\"]\nlevel = \"full\"\ndeny = [\"rm\"]\n[sandbox]\nnetwork = true\n",
        true,
    );
    let untrusted = Untrusted {
        file: Arc::from(Path::new("/src/repo/.gate.toml")),
        why: "is not trusted".into(),
    };
    let (grants, still) = grants(vec![user, project], untrusted.clone()).unwrap();
    let keys: Vec<_> = grants.iter().map(|l| l.key.as_str()).collect();
    assert_eq!(keys, ["level", "allow", "allow", "sandbox.network"]);
    assert_eq!(
        grants[1].to_string(),
        "/src/repo/.gate.toml:1: key `allow`: no allow rules can be added (`a`)"
    );
    assert!(still.is_none());
    let only_tightens = project_file("deny = [\"rm\"]\n", true);
    let (grants, still) = super::grants(vec![only_tightens], untrusted.clone()).unwrap();
    assert!(grants.is_empty() && still.is_none());
    let (_, still) = super::grants(
        vec![locked_system(), project_file("allow = [\"x\"]\n", true)],
        untrusted,
    )
    .unwrap();
    assert!(
        still
            .unwrap()
            .to_string()
            .contains("locks the configuration")
    );
}
