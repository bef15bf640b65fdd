//! Configuration: the layers (file, environment, options), and errors that stop gate
//! before anything runs, each naming where the problem is.

use crate::common;

use common::*;

/// Run `touch F` at level full through a `--config` file holding `text`: the error must
/// stop everything, so F must not exist afterwards. Returns the run for more checks.
#[track_caller]
fn run_with_bad_config(env: &TestEnv, user: User, text: &str) -> (Outcome, String) {
    let path = env.write("bad.toml", text);
    let out = env
        .gate()
        .user(user)
        .arg("--config")
        .arg(&path)
        .args(["--audit-log", "off", "--level", "full", "-c", "touch F"])
        .run();
    assert_absent(&env.file("F"), &out);
    out.assert_gate_error()
        .assert_stderr_contains("nothing was run")
        .assert_stdout("");
    (out, path.display().to_string())
}

for_each_user! {
    fn a_config_error_runs_nothing(user) {
        let env = TestEnv::new();
        env.assert_side_effects_are_visible(user);
        for text in [
            "level = \"full\"\nlevle = \"full\"\n",
            "level = 3\n",
            "level = \"full\"\n[audit\n",
            "level = \"full\"\nallow = [\"touch F; rm -rf x\"]\n",
            "level = \"full\"\ndeny = [\"  \"]\n",
            "level = \"full\"\nlock = true\n",
            "level = \"bogus\"\n",
        ] {
            run_with_bad_config(&env, user, text);
        }
    }

    fn a_bad_rule_option_runs_nothing(user) {
        let env = TestEnv::new();
        env.assert_side_effects_are_visible(user);
        for rule in [&["--allow", "touch;"][..], &["--allow", " "], &["--deny", ""], &["--deny", "A=1"]] {
            let out = env
                .gate()
                .user(user)
                .args(["--no-config", "--audit-log", "off", "--level", "full"])
                .args(rule)
                .args(["-c", "touch F"])
                .run();
            assert_absent(&env.file("F"), &out);
            out.assert_gate_error().assert_stderr_contains(rule[0]);
        }
    }
}

#[test]
fn an_unknown_key_is_named_with_its_file_and_line() {
    let env = TestEnv::new();
    let (out, path) =
        run_with_bad_config(&env, User::Current, "level = \"full\"\n\nlevle = \"x\"\n");
    out.assert_stderr_contains(&format!("{path}:3: key `levle`: unknown key"));
}

#[test]
fn an_unknown_key_in_a_table_is_named_with_its_table() {
    let env = TestEnv::new();
    let (out, path) = run_with_bad_config(
        &env,
        User::Current,
        "[audit]\nrequired = false\nlgo = \"off\"\n",
    );
    out.assert_stderr_contains(&format!("{path}:3: key `audit.lgo`: unknown key"));
}

#[test]
fn a_wrong_type_is_named_with_its_file_line_and_key() {
    let env = TestEnv::new();
    let (out, path) = run_with_bad_config(&env, User::Current, "# comment\nlevel = 3\n");
    out.assert_stderr_contains(&format!(
        "{path}:2: key `level`: expected a string, found integer"
    ));
    let (out, path) = run_with_bad_config(
        &env,
        User::Current,
        "level = \"full\"\n[approval]\ntty = \"yes\"\n",
    );
    out.assert_stderr_contains(&format!(
        "{path}:3: key `approval.tty`: expected true or false"
    ));
}

#[test]
fn malformed_toml_is_named_with_its_file_and_line() {
    let env = TestEnv::new();
    let (out, path) = run_with_bad_config(&env, User::Current, "level = \"full\"\n[audit\n");
    out.assert_stderr_contains(&format!("{path}:2: malformed TOML"));
}

#[test]
fn a_rule_with_a_shell_character_is_named_with_its_file_line_and_key() {
    let env = TestEnv::new();
    let (out, path) = run_with_bad_config(
        &env,
        User::Current,
        "level = \"full\"\nallow = [\n  \"echo hello\",\n  \"echo hello; touch F\",\n]\n",
    );
    out.assert_stderr_contains(&format!(
        "{path}:4: key `allow`: `echo hello; touch F`: a rule cannot contain the shell character ';'"
    ));
}

#[test]
fn a_blank_rule_is_named_with_its_file_line_and_key() {
    let env = TestEnv::new();
    let (out, path) =
        run_with_bad_config(&env, User::Current, "level = \"full\"\ndeny = [\"\\t\"]\n");
    out.assert_stderr_contains(&format!(
        "{path}:2: key `deny`: `\\t`: a rule cannot be blank"
    ));
}

#[test]
fn a_user_file_cannot_lock_the_configuration() {
    let env = TestEnv::new();
    let (out, path) = run_with_bad_config(&env, User::Current, "lock = true\n");
    out.assert_stderr_contains(&format!("{path}:1: key `lock`"));
}

#[test]
fn a_required_audit_log_that_is_turned_off_is_a_configuration_error() {
    let env = TestEnv::new();
    let config = env.write(
        "off.toml",
        "level = \"full\"\n[audit]\nrequired = true\nlog = \"off\"\n",
    );
    let out = env
        .gate()
        .arg("--config")
        .arg(&config)
        .args(["-c", "touch F"])
        .run();
    assert_absent(&env.file("F"), &out);
    out.assert_gate_error()
        .assert_stderr_contains(&format!("{}:4: key `audit.log`", config.display()));
    // Turning a required log off by option is refused the same way.
    let required = env.write(
        "required.toml",
        "level = \"full\"\n[audit]\nrequired = true\n",
    );
    let out = env
        .gate()
        .arg("--config")
        .arg(&required)
        .args(["--audit-log", "off", "-c", "touch F"])
        .run();
    assert_absent(&env.file("F"), &out);
    out.assert_gate_error()
        .assert_stderr_contains("--audit-log");
}

#[test]
fn a_bad_level_in_gate_level_is_named() {
    let env = TestEnv::new();
    let out = env
        .gate()
        .env("GATE_LEVEL", "bogus")
        .args(["--no-config", "--audit-log", "off", "-c", "touch F"])
        .run();
    assert_absent(&env.file("F"), &out);
    out.assert_gate_error()
        .assert_stderr_contains("GATE_LEVEL")
        .assert_stderr_contains("bogus");
}

#[test]
fn bad_values_in_other_gate_variables_are_named() {
    let env = TestEnv::new();
    for (name, value) in [
        ("GATE_TIMEOUT", "soon"),
        ("GATE_TIMEOUT", "0"),
        ("GATE_SESSION", "has space"),
        ("GATE_SHELL", "bash"),
        ("GATE_AUDIT_LOG", "relative.jsonl"),
    ] {
        let out = env
            .gate()
            .env(name, value)
            .args([
                "--no-config",
                "--audit-log",
                "off",
                "--level",
                "full",
                "-c",
                "touch F",
            ])
            .run();
        assert_absent(&env.file("F"), &out);
        out.assert_gate_error().assert_stderr_contains(name);
    }
}

#[test]
fn an_empty_gate_variable_counts_as_unset() {
    let env = TestEnv::new();
    let gate = |command: &str| {
        env.gate()
            .env("GATE_LEVEL", "")
            .env("GATE_SESSION", "")
            .env("GATE_SHELL", "")
            .args(["--no-config", "--audit-log", "off", "--allow", "echo ok"])
            .args(["-c", command])
            .run()
    };
    // The default level, ask: the allowed command runs, another is refused.
    gate("echo ok").assert_code(0).assert_stdout("ok\n");
    gate("echo other")
        .assert_refused()
        .assert_stderr_contains("level \"ask\" (from the built-in default)");
}

#[test]
fn a_missing_config_file_named_by_option_is_an_error() {
    let env = TestEnv::new();
    let missing = env.root.join("missing.toml");
    let out = env
        .gate()
        .arg("--config")
        .arg(&missing)
        .args(["--level", "full", "--audit-log", "off", "-c", "touch F"])
        .run();
    assert_absent(&env.file("F"), &out);
    out.assert_gate_error()
        .assert_stderr_contains("--config")
        .assert_stderr_contains(&missing.display().to_string());
}

#[test]
fn a_missing_config_file_named_by_gate_config_is_an_error() {
    let env = TestEnv::new();
    let missing = env.root.join("missing.toml");
    let out = env
        .gate()
        .env("GATE_CONFIG", &missing)
        .args(["--level", "full", "--audit-log", "off", "-c", "touch F"])
        .run();
    assert_absent(&env.file("F"), &out);
    out.assert_gate_error()
        .assert_stderr_contains("GATE_CONFIG")
        .assert_stderr_contains(&missing.display().to_string());
}

#[test]
fn config_and_no_config_together_are_an_error() {
    let env = TestEnv::new();
    let config = env.write("c.toml", "level = \"full\"\n");
    env.gate()
        .arg("--config")
        .arg(&config)
        .args(["--no-config", "--audit-log", "off", "-c", "touch F"])
        .run()
        .assert_gate_error();
    assert!(!env.file("F").exists());
}

#[test]
fn a_config_file_that_is_not_utf8_is_an_error() {
    let env = TestEnv::new();
    let config = env.write("c.toml", b"level = \"full\"\n# \xff\n");
    let out = env
        .gate()
        .arg("--config")
        .arg(&config)
        .args(["--audit-log", "off", "-c", "touch F"])
        .run();
    assert_absent(&env.file("F"), &out);
    out.assert_gate_error()
        .assert_stderr_contains(&config.display().to_string());
}

// ---------------------------------------------------------------------------------------
// Layers.

#[test]
fn the_user_file_under_xdg_config_home_is_read() {
    let env = TestEnv::new();
    // Without the file: the default level refuses.
    let out = env
        .gate()
        .args(["--audit-log", "off", "-c", "touch F"])
        .run();
    assert_absent(&env.file("F"), &out);
    out.assert_refused();
    env.write_user_config("level = \"full\"\n");
    env.gate()
        .args(["--audit-log", "off", "-c", "touch F"])
        .run()
        .assert_code(0);
    assert!(
        env.file("F").exists(),
        "level = \"full\" from the user file was ignored"
    );
}

#[test]
fn the_user_file_under_home_is_read_when_xdg_config_home_is_unset() {
    let env = TestEnv::new();
    let path = env.home.join(".config/gate/config.toml");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "level = \"deny\"\n").unwrap();
    env.gate()
        .env_remove("XDG_CONFIG_HOME")
        .args(["--audit-log", "off", "--allow", "touch F", "-c", "touch F"])
        .run()
        .assert_refused()
        .assert_stderr_contains("level \"deny\"");
    std::fs::write(&path, "level = \"full\"\n").unwrap();
    env.gate()
        .env_remove("XDG_CONFIG_HOME")
        .args(["--audit-log", "off", "-c", "touch F"])
        .run()
        .assert_code(0);
    assert!(
        env.file("F").exists(),
        "~/.config/gate/config.toml was ignored"
    );
}

#[test]
fn no_config_ignores_the_user_file() {
    let env = TestEnv::new();
    env.write_user_config("level = \"full\"\n");
    let out = env
        .gate()
        .args(["--no-config", "--audit-log", "off", "-c", "touch F"])
        .run();
    assert_absent(&env.file("F"), &out);
    out.assert_refused();
}

#[test]
fn no_config_ignores_a_broken_user_file_and_gate_config() {
    let env = TestEnv::new();
    env.write_user_config("this is not toml\n");
    env.gate()
        .env("GATE_CONFIG", env.root.join("missing.toml"))
        .args([
            "--no-config",
            "--audit-log",
            "off",
            "--level",
            "full",
            "-c",
            "echo ok",
        ])
        .run()
        .assert_code(0)
        .assert_stdout("ok\n");
}

#[test]
fn gate_config_replaces_the_user_file() {
    let env = TestEnv::new();
    // The user file would allow it and deny nothing; the GATE_CONFIG file denies it.
    env.write_user_config("level = \"full\"\n");
    let other = env.write("other.toml", "level = \"deny\"\n");
    let out = env
        .gate()
        .env("GATE_CONFIG", &other)
        .args(["--audit-log", "off", "-c", "touch F"])
        .run();
    assert_absent(&env.file("F"), &out);
    out.assert_refused()
        .assert_stderr_contains("level \"deny\"");
    // And the other way round: the user file refuses, GATE_CONFIG runs.
    env.write_user_config("level = \"deny\"\n");
    let full = env.write("full.toml", "level = \"full\"\n");
    env.gate()
        .env("GATE_CONFIG", &full)
        .args(["--audit-log", "off", "-c", "touch F"])
        .run()
        .assert_code(0);
    assert!(env.file("F").exists());
}

#[test]
fn the_config_option_replaces_gate_config() {
    let env = TestEnv::new();
    let deny = env.write("deny.toml", "level = \"deny\"\n");
    let full = env.write("full.toml", "level = \"full\"\n");
    env.gate()
        .env("GATE_CONFIG", &deny)
        .arg("--config")
        .arg(&full)
        .args(["--audit-log", "off", "-c", "echo ran"])
        .run()
        .assert_code(0)
        .assert_stdout("ran\n");
    env.gate()
        .env("GATE_CONFIG", &full)
        .arg("--config")
        .arg(&deny)
        .args(["--audit-log", "off", "-c", "echo ran"])
        .run()
        .assert_refused();
}

/// The level `gate check --json` reports, with its origin, given these variables and
/// options.
fn level_and_origin(env: &TestEnv, vars: &[(&str, &str)], options: &[&str]) -> (String, String) {
    let mut gate = env.gate().arg("check");
    for (k, v) in vars {
        gate = gate.env(k, v);
    }
    let out = gate.args(options).args(["--json", "-c", "true"]).run();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("gate check --json is not JSON ({e})\n{}", out.report()));
    (
        v["level"].as_str().unwrap_or_default().to_owned(),
        v["level_origin"].as_str().unwrap_or_default().to_owned(),
    )
}

#[test]
fn an_option_beats_a_variable_which_beats_the_file() {
    let env = TestEnv::new();
    let file = env.write_user_config("level = \"deny\"\n");
    let from_file = format!("{}:1", file.display());

    assert_eq!(level_and_origin(&env, &[], &[]), ("deny".into(), from_file));
    assert_eq!(
        level_and_origin(&env, &[("GATE_LEVEL", "full")], &[]),
        ("full".into(), "GATE_LEVEL".into())
    );
    assert_eq!(
        level_and_origin(&env, &[("GATE_LEVEL", "full")], &["--level", "ask"]),
        ("ask".into(), "--level".into())
    );
}

#[test]
fn an_option_beats_a_variable_which_beats_the_file_when_running() {
    let env = TestEnv::new();
    env.write_user_config("level = \"deny\"\n");
    // The variable beats the file: it runs.
    env.gate()
        .env("GATE_LEVEL", "full")
        .args(["--audit-log", "off", "-c", "touch F"])
        .run()
        .assert_code(0);
    assert!(
        env.file("F").exists(),
        "GATE_LEVEL=full did not beat the file"
    );
    std::fs::remove_file(env.file("F")).unwrap();
    // The option beats the variable: refused.
    let out = env
        .gate()
        .env("GATE_LEVEL", "full")
        .args(["--level", "deny", "--audit-log", "off", "-c", "touch F"])
        .run();
    assert_absent(&env.file("F"), &out);
    out.assert_refused();
}

#[test]
fn allow_rules_from_every_layer_apply_together() {
    let env = TestEnv::new();
    env.write_user_config("allow = [\"echo from-file\"]\n");
    let gate = || {
        env.gate()
            .args(["--audit-log", "off", "--allow", "echo from-flag"])
    };
    gate()
        .args(["-c", "echo from-file x"])
        .run()
        .assert_code(0)
        .assert_stdout("from-file x\n");
    gate()
        .args(["-c", "echo from-flag y"])
        .run()
        .assert_code(0)
        .assert_stdout("from-flag y\n");
    gate().args(["-c", "echo other"]).run().assert_refused();
}

#[test]
fn deny_rules_from_the_file_apply_at_a_level_set_by_option() {
    let env = TestEnv::new();
    let config = env.write("c.toml", "deny = [\"touch\"]\n");
    let out = env
        .gate()
        .arg("--config")
        .arg(&config)
        .args([
            "--audit-log",
            "off",
            "--level",
            "full",
            "-c",
            "true; touch F",
        ])
        .run();
    assert_absent(&env.file("F"), &out);
    out.assert_refused()
        .assert_stderr_contains(&format!("(from {}:1)", config.display()));
}

#[test]
fn the_shell_from_the_file_runs_the_command() {
    let env = TestEnv::new();
    let bash = bash();
    let config = env.write(
        "c.toml",
        format!("level = \"full\"\nshell = \"{}\"\n", bash.display()),
    );
    env.gate()
        .arg("--config")
        .arg(&config)
        .args(["--audit-log", "off", "-c", "echo ${BASH_VERSION:+bash}"])
        .run()
        .assert_code(0)
        .assert_stdout("bash\n");
}

// ---------------------------------------------------------------------------------------
// Rules written as patterns (a glob, an agent's own syntax) are load errors, from every
// source. Without that, gate compared them as plain words, which no command carries, so
// they were accepted and never matched: `deny = ["rm -rf:*"]` let `rm -rf` run. Each
// case's control is the rule gate writes for it (or the rule without the glob), through
// the same source: it loads and matches, so the glob is all that stood in the way.

/// Where a rule is given.
#[derive(Debug, Clone, Copy)]
enum RuleSource {
    /// The user's configuration file.
    File,
    /// `--allow` / `--deny`.
    Flag,
    /// A file named by `GATE_CONFIG` (there are no variables for rules themselves).
    GateConfig,
}

/// One rule written as a pattern, the rule that works in its place, and a command the
/// working rule matches.
struct PatternCase {
    kind: &'static str,
    pattern: &'static str,
    /// The rule gate names in its message, if it has one.
    written: Option<&'static str>,
    control: &'static str,
    /// `touch F` or `rm -f F` (F made first): whether it ran shows in F.
    command: &'static str,
}

const PATTERN_CASES: [PatternCase; 7] = [
    PatternCase {
        kind: "deny",
        pattern: "rm -f:*",
        written: Some("rm -f"),
        control: "rm -f",
        command: "rm -f F",
    },
    PatternCase {
        kind: "deny",
        pattern: "touch *",
        written: None,
        control: "touch",
        command: "touch F",
    },
    PatternCase {
        kind: "deny",
        pattern: "touch [F]",
        written: None,
        control: "touch F",
        command: "touch F",
    },
    PatternCase {
        kind: "deny",
        pattern: "Bash(touch:*)",
        written: Some("touch"),
        control: "touch",
        command: "touch F",
    },
    PatternCase {
        kind: "allow",
        pattern: "touch:*",
        written: Some("touch"),
        control: "touch",
        command: "touch F",
    },
    PatternCase {
        kind: "allow",
        pattern: "touch ?",
        written: None,
        control: "touch",
        command: "touch F",
    },
    PatternCase {
        kind: "allow",
        pattern: "Bash(touch F *)",
        written: Some("touch F"),
        control: "touch F",
        command: "touch F",
    },
];

/// Run a case's command with `rule` from `source`: deny rules at level full, allow rules
/// at level ask with nobody to ask. Returns the run and whether the command ran.
fn run_with_rule(
    env: &TestEnv,
    user: User,
    source: RuleSource,
    case: &PatternCase,
    rule: &str,
) -> (Outcome, bool) {
    let removes = case.command.starts_with("rm");
    let f = env.file("F");
    let _ = std::fs::remove_file(&f);
    if removes {
        std::fs::write(&f, "").unwrap();
        std::fs::set_permissions(&f, std::os::unix::fs::PermissionsExt::from_mode(0o666)).unwrap();
    }
    let level = if case.kind == "deny" { "full" } else { "ask" };
    let toml = format!("{} = [{:?}]\n", case.kind, rule);
    let mut gate = env
        .gate()
        .user(user)
        .args(["--audit-log", "off", "--level", level]);
    match source {
        RuleSource::File => {
            env.write_user_config(&toml);
        }
        RuleSource::Flag => gate = gate.arg(format!("--{}", case.kind)).arg(rule),
        RuleSource::GateConfig => gate = gate.env("GATE_CONFIG", env.write("rules.toml", &toml)),
    }
    let out = gate.args(["-c", case.command]).run();
    let ran = f.exists() != removes;
    if matches!(source, RuleSource::File) {
        std::fs::remove_file(env.user_config_file()).unwrap();
    }
    (out, ran)
}

for_each_user! {
    fn a_rule_written_as_a_pattern_is_a_load_error_from_every_source(user) {
        let env = TestEnv::new();
        env.assert_side_effects_are_visible(user);
        for source in [RuleSource::File, RuleSource::Flag, RuleSource::GateConfig] {
            for case in &PATTERN_CASES {
                let what = format!("{source:?} {} {:?}", case.kind, case.pattern);
                let (out, ran) = run_with_rule(&env, user, source, case, case.pattern);
                assert!(!ran, "{what}: the command ran\n{}", out.report());
                out.assert_gate_error()
                    .assert_stderr_contains(&format!("`{}`: ", case.pattern))
                    .assert_stderr_contains("nothing was run");
                match case.written {
                    Some(rule) => out.assert_stderr_contains(&format!("write `{rule}`")),
                    None => out.assert_stderr_contains("a glob cannot be expressed"),
                };

                // Control: the rule gate writes loads from the same source and matches.
                let (out, ran) = run_with_rule(&env, user, source, case, case.control);
                if case.kind == "deny" {
                    assert!(!ran, "{what}: control: the command ran\n{}", out.report());
                    out.assert_refused()
                        .assert_stderr_contains(&format!("the deny rule `{}`", case.control));
                } else {
                    assert!(ran, "{what}: control: the command did not run\n{}", out.report());
                    out.assert_code(0);
                }
            }
        }
    }
}

#[test]
fn a_remembered_rule_written_as_a_pattern_is_refused_before_anything_is_approved() {
    let env = TestEnv::new();
    env.gate()
        .args([
            "approve",
            "0123456789abcdef",
            "--remember-rule",
            "npm run test:*",
        ])
        .run()
        .assert_gate_error()
        .assert_stderr_contains("--remember-rule: not a valid allow rule: ")
        .assert_stderr_contains("write `npm run test`")
        .assert_stderr_contains("nothing was approved");
}
