//! `gate check`: the decision and why, in words or JSON, with exit 0 (allow), 1 (ask) or
//! 2 (deny), and never running anything.

#[macro_use]
mod common;

use serde_json::Value;

use common::*;

fn check(env: &TestEnv, args: &[&str]) -> Outcome {
    env.gate()
        .args(["check", "--no-config", "--audit-log", "off"])
        .args(args)
        .run()
}

fn check_json(env: &TestEnv, args: &[&str]) -> (Value, Outcome) {
    let env_args: Vec<&str> = ["--json"].iter().chain(args).copied().collect();
    let out = check(env, &env_args);
    let value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("gate check --json is not JSON ({e})\n{}", out.report()));
    (value, out)
}

#[test]
fn check_prints_an_allow_decision_with_the_rule_and_its_origin() {
    let env = TestEnv::new();
    let out = check(&env, &["--allow", "echo hello", "-c", "echo hello world"]);
    out.assert_code(0)
        .assert_stderr_empty()
        .assert_stdout_contains("command:  echo hello world\n")
        .assert_stdout_contains("decision: allow\n")
        .assert_stdout_contains("the allow rule `echo hello` (from --allow)")
        .assert_stdout_contains("gate would run it");
}

#[test]
fn check_names_a_rule_from_a_file_by_file_and_line() {
    let env = TestEnv::new();
    let config = env.write("c.toml", "allow = [\n  \"echo a\",\n  \"echo hello\",\n]\n");
    let out = env
        .gate()
        .arg("check")
        .arg("--config")
        .arg(&config)
        .args(["-c", "echo hello"])
        .run();
    out.assert_code(0).assert_stdout_contains(&format!(
        "the allow rule `echo hello` (from {}:3)",
        config.display()
    ));
}

#[test]
fn check_json_has_the_decision_and_why() {
    let env = TestEnv::new();
    let (v, out) = check_json(&env, &["--allow", "echo hello", "-c", "echo hello world"]);
    out.assert_code(0);
    assert_eq!(v["decision"], "allow", "{v}");
    assert_eq!(v["decided_by"], "rule", "{v}");
    assert_eq!(v["rule"], "echo hello", "{v}");
    assert_eq!(v["rule_origin"], "--allow", "{v}");
    assert_eq!(v["outcome"], "run", "{v}");
    assert_eq!(v["command"], "echo hello world", "{v}");
    assert!(
        v["reason"]
            .as_str()
            .is_some_and(|r| r.contains("echo hello")),
        "{v}"
    );
    assert_eq!(out.stdout().lines().count(), 1, "one JSON object, one line");
}

#[test]
fn check_json_for_an_unmatched_command_says_it_would_ask() {
    let env = TestEnv::new();
    let (v, out) = check_json(&env, &["--allow", "echo hello", "-c", "touch F"]);
    out.assert_code(1);
    assert_eq!(v["decision"], "ask", "{v}");
    assert_eq!(v["outcome"], "ask", "{v}");
    assert_eq!(v["rule"], Value::Null, "{v}");
    assert!(
        v["reason"]
            .as_str()
            .is_some_and(|r| r.contains("no allow rule matches it")),
        "{v}"
    );
}

#[test]
fn check_json_for_a_deny_rule_names_the_rule_and_what_it_caught() {
    let env = TestEnv::new();
    let (v, out) = check_json(
        &env,
        &["--level", "full", "--deny", "touch", "-c", "true; touch F"],
    );
    out.assert_code(2);
    assert_eq!(v["decision"], "deny", "{v}");
    assert_eq!(v["decided_by"], "deny-rule", "{v}");
    assert_eq!(v["rule"], "touch", "{v}");
    assert_eq!(v["rule_origin"], "--deny", "{v}");
    assert_eq!(v["matched"], "touch F", "{v}");
    assert_eq!(v["outcome"], "refuse", "{v}");
}

/// At the safe level gate runs every command in the sandbox, so check says it would run
/// it (exit 0), not that it cannot (the behaviour before the sandbox existed).
#[test]
fn check_at_safe_level_says_gate_would_run_it() {
    let env = TestEnv::new();
    let (v, out) = check_json(&env, &["--level", "safe", "-c", "touch F"]);
    out.assert_stderr_empty();
    assert_eq!(v["decision"], "allow", "{v}");
    assert_eq!(v["outcome"], "run", "{v}\n{}", out.report());
    out.assert_code(0);
    let out = check(&env, &["--level", "safe", "-c", "touch F"]);
    out.assert_code(0)
        .assert_stdout_contains("gate would run it");
    assert!(
        !out.stdout().contains("does not have"),
        "check should not say the sandbox is missing\n{}",
        out.report()
    );
    assert_absent(&env.file("F"), &out);
}

#[test]
fn check_exit_status_is_0_for_allow_1_for_ask_2_for_deny() {
    let env = TestEnv::new();
    for (args, code, decision) in [
        (&["--level", "full", "-c", "true"][..], 0, "allow"),
        (&["--allow", "true", "-c", "true"], 0, "allow"),
        (&["-c", "true"], 1, "ask"),
        (&["--level", "ask", "--", "true"], 1, "ask"),
        (&["--level", "deny", "-c", "true"], 2, "deny"),
        (
            &["--level", "full", "--deny", "true", "--", "true"],
            2,
            "deny",
        ),
    ] {
        check(&env, args)
            .assert_code(code)
            .assert_stdout_contains(&format!("decision: {decision}\n"));
    }
}

#[test]
fn check_judges_a_program_as_its_shell_quoted_arguments() {
    let env = TestEnv::new();
    let (v, out) = check_json(&env, &["--allow", "echo", "--", "echo", "a b", "c;d"]);
    out.assert_code(1);
    assert_eq!(v["command"], "echo 'a b' 'c;d'", "{v}");
    assert_eq!(v["kind"], "program", "{v}");
}

#[test]
fn check_without_a_command_is_an_error() {
    let env = TestEnv::new();
    check(&env, &[]).assert_gate_error();
    check(&env, &["--level", "full"]).assert_gate_error();
}

#[test]
fn check_with_a_config_error_is_an_error() {
    let env = TestEnv::new();
    let config = env.write("bad.toml", "levle = \"full\"\n");
    env.gate()
        .arg("check")
        .arg("--config")
        .arg(&config)
        .args(["-c", "true"])
        .run()
        .assert_gate_error()
        .assert_stderr_contains("levle");
}

for_each_user! {
    fn check_runs_nothing(user) {
        let env = TestEnv::new();
        env.assert_side_effects_are_visible(user);
        for args in [
            &["--level", "full", "-c", "touch F"][..],
            &["--level", "full", "--", "touch", "F"],
            &["--allow", "touch", "-c", "touch F"],
            &["--level", "full", "--json", "-c", "touch F"],
        ] {
            let out = env
                .gate()
                .user(user)
                .args(["check", "--no-config", "--audit-log", "off"])
                .args(args)
                .run();
            out.assert_code(0);
            assert_absent(&env.file("F"), &out);
        }
    }
}

#[test]
fn check_writes_no_audit_record() {
    // docs/audit.md: `gate check` writes nothing, because it runs nothing.
    let env = TestEnv::new();
    for level in ["full", "deny", "ask"] {
        env.gate()
            .args(["check", "--no-config", "--level", level, "-c", "true"])
            .run();
    }
    let left: Vec<_> = std::fs::read_dir(&env.state).unwrap().collect();
    assert!(left.is_empty(), "gate check wrote {left:?}");
    // Control: a run with the same settings does write where this test looked.
    env.gate()
        .args(["--no-config", "--level", "full", "-c", "true"])
        .run()
        .assert_code(0);
    assert!(env.default_audit_log().exists(), "a run wrote no audit log");
}

/// An agent's start-up call is reported as gate answers it at `ask` and `safe`, and
/// checking it writes nothing: no snapshot file appears. At `full` it is an ordinary
/// command.
#[test]
fn check_reports_an_agents_start_up_call_without_answering_it() {
    let env = TestEnv::new();
    let snapshot = env
        .home
        .join(".claude/shell-snapshots/snapshot-bash-1788557415117-j0hu0n.sh");
    let script = format!(
        "SNAPSHOT_FILE={}\necho \"# Snapshot file\" >| \"$SNAPSHOT_FILE\"\n",
        snapshot.display()
    );
    let (value, out) = check_json(&env, &["--level", "ask", "-c", "-l", &script]);
    out.assert_code(0);
    assert_eq!(value["decision"], "allow", "{value}");
    assert_eq!(value["decided_by"], "agent-startup", "{value}");
    assert_eq!(value["kind"], "agent-startup", "{value}");
    assert!(!snapshot.exists(), "gate check wrote the snapshot");
    let out = check(
        &env,
        &["--level", "safe", "-lc", "echo '# Snapshot file'\n"],
    );
    out.assert_code(0)
        .assert_stdout_contains("decision: allow\n")
        .assert_stdout_contains("codex/snapshot-capture: gate prints an empty snapshot")
        .assert_stdout_contains("gate would answer it itself and run nothing");
    assert!(
        !out.stdout().contains("# Written by gate"),
        "{}",
        out.report()
    );
    let (value, out) = check_json(&env, &["--level", "full", "-c", "-l", &script]);
    out.assert_code(0);
    assert_eq!(value["decided_by"], "level", "{value}");
}
