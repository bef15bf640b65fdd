//! One file read into a layer: keys, types, values, rules and their examples, and the file, line and key every error names.

use super::*;

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
        layer.allow.find("cargo test").unwrap().1,
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
fn line_numbers_are_exact_for_many_rules() {
    let mut text = String::from("allow = [\n");
    for i in 0..1000 {
        text.push_str(&format!("  \"cmd{i}\",\n"));
    }
    text.push_str("]\n");
    let l = file(&text).unwrap();
    assert_eq!(
        l.allow.find("cmd999").unwrap().1,
        Origin::File {
            path: Arc::from(Path::new("/etc/gate/config.toml")),
            line: 1001
        }
    );
}
