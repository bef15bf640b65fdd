//! `gate check`: the decision and why, in words or JSON, with exit 0 (allow), 1 (ask) or
//! 2 (deny), and never running anything.

use crate::common;

use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::Value;

use common::*;

/// A running `gate serve` on the environment's default socket, stopped when dropped.
struct Serving {
    running: Option<Running>,
    socket: PathBuf,
}

impl Serving {
    fn start(env: &TestEnv) -> Serving {
        let running = env
            .gate()
            .args(["--no-config", "serve"])
            .deadline(Duration::from_secs(120))
            .spawn();
        let socket = env.runtime.join("gate/broker.sock");
        let deadline = Instant::now() + Duration::from_secs(20);
        while !std::fs::symlink_metadata(&socket).is_ok_and(|m| m.file_type().is_socket()) {
            assert!(
                Instant::now() < deadline,
                "the broker made no socket in time"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        Serving {
            running: Some(running),
            socket,
        }
    }

    /// Stop it (SIGTERM) and return what it logged.
    fn stop(mut self) -> Outcome {
        let running = self.running.take().unwrap();
        let pid = nix::unistd::Pid::from_raw(running.pid as i32);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
        running.wait()
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        if let Some(running) = &self.running {
            let pid = nix::unistd::Pid::from_raw(running.pid as i32);
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
        }
    }
}

/// `gate check ARGS` with the terminal turned on (`approval.tty = true`), run as a person
/// runs it: util-linux `script` holds a pty (a terminal server's shape: it has no
/// terminal of its own), and a shell with job control starts gate there as a
/// foreground job. What it printed.
fn check_on_a_terminal(env: &TestEnv, args: &[&str]) -> String {
    let config = env.write("tty-on.toml", "[approval]\ntty = true\n");
    let mut line = vec![
        GATE.to_owned(),
        "check".into(),
        "--config".into(),
        config.display().to_string(),
        "--audit-log".into(),
        "off".into(),
    ];
    line.extend(args.iter().map(|a| a.to_string()));
    let line = format!("set -m; {}; echo \"status $?\"", shell_words::join(&line));
    let shell = format!(
        "{} --norc --noprofile -c {}",
        bash().display(),
        shell_words::quote(&line)
    );
    // In a session of its own, so that `script` has no terminal even when the tests run
    // on one.
    let out = env
        .gate()
        .program(require_program("setsid"))
        .arg("--wait")
        .arg(require_program("script"))
        .args(["-qec", &shell, "/dev/null"])
        .run();
    out.assert_code(0);
    out.stdout().replace('\r', "")
}

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
    let broker = Serving::start(&env);
    let (v, out) = check_json(&env, &["--allow", "echo hello", "-c", "touch F"]);
    out.assert_code(1);
    assert_eq!(v["decision"], "ask", "{v}");
    assert_eq!(v["outcome"], "ask", "{v}");
    assert_eq!(v["approval"]["asks"], "socket", "{v}");
    drop(broker);
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

/// 0: it would run; 1: it would wait for an approver; 2: it would not run, because policy
/// refuses it or because nobody can be asked now.
#[test]
fn check_exit_status_is_0_for_allow_1_for_ask_2_for_deny_or_nobody_to_ask() {
    let env = TestEnv::new();
    let cases = [
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
    ];
    let broker = Serving::start(&env);
    for (args, code, decision) in cases {
        check(&env, args)
            .assert_code(code)
            .assert_stdout_contains(&format!("decision: {decision}\n"));
    }
    broker.stop().assert_code(0);
    // Without the broker (and without a terminal) nobody can be asked: a run would
    // refuse, so check exits 2; the others are as before.
    for (args, code, decision) in cases {
        let code = if code == 1 { 2 } else { code };
        check(&env, args)
            .assert_code(code)
            .assert_stdout_contains(&format!("decision: {decision}\n"));
    }
}

/// With no broker and no terminal, a run would refuse at once: check says so (exit 2),
/// in the run's own words in the JSON, and what to set up.
#[test]
fn check_says_a_command_would_be_refused_now_when_nobody_can_be_asked() {
    let env = TestEnv::new();
    let out = check(&env, &["--no-tty", "-c", "touch F"]);
    out.assert_code(2)
        .assert_stdout_contains("decision: ask\n")
        .assert_stdout_contains(
            "outcome:  gate would refuse it now (exit 126): nobody can be asked: no broker is \
             listening on the default socket, and the terminal is turned off (--no-tty / \
             approval.tty = false)\n",
        )
        .assert_stdout_contains("advice:   To approve commands, run `gate serve`");
    assert!(!out.stdout().contains("would ask"), "{}", out.report());

    let (v, out) = check_json(&env, &["--no-tty", "-c", "touch F"]);
    out.assert_code(2);
    assert_eq!(v["decision"], "ask", "{v}");
    assert_eq!(v["outcome"], "refuse", "{v}");
    let a = &v["approval"];
    assert_eq!(a["asks"], Value::Null, "{v}");
    assert_eq!(a["socket_state"], "absent", "{v}");
    assert_eq!(a["socket_configured"], false, "{v}");
    let socket = env.runtime.join("gate/broker.sock");
    assert_eq!(a["socket"], socket.to_str().unwrap(), "{v}");
    assert_eq!(a["tty"], "off", "{v}");
    // The refusal is what the run itself says.
    let refusal = a["refusal"].as_str().expect("a refusal");
    let run = env
        .gate()
        .args([
            "--no-config",
            "--audit-log",
            "off",
            "--no-tty",
            "-c",
            "touch F",
        ])
        .run();
    run.assert_refused().assert_stderr_contains(refusal);
    assert_absent(&env.file("F"), &run);

    // Without --no-tty the terminal is off as well: that is the default.
    let (v, out) = check_json(&env, &["-c", "touch F"]);
    out.assert_code(2);
    assert_eq!(v["approval"]["tty"], "off", "{v}");
    // Turned on, this gate has no terminal to ask either.
    let config = env.write("tty-on.toml", "[approval]\ntty = true\n");
    let out = env
        .gate()
        .args(["check", "--json", "--config"])
        .arg(&config)
        .args(["--audit-log", "off", "-c", "touch F"])
        .run();
    out.assert_code(2);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["approval"]["tty"], "unavailable", "{v}");
    assert!(v["approval"]["tty_note"].is_string(), "{v}");

    // A configured socket that is not there is named, as a run names it.
    let missing = env.root.join("nowhere.sock");
    let out = check(
        &env,
        &[
            "--no-tty",
            "--socket",
            missing.to_str().unwrap(),
            "-c",
            "touch F",
        ],
    );
    out.assert_code(2).assert_stdout_contains(&format!(
        "nobody can be asked: no socket at {}, and",
        missing.display()
    ));
    // Decisions that ask nobody carry no approval object.
    let (v, _) = check_json(&env, &["--level", "full", "-c", "touch F"]);
    assert_eq!(v["approval"], Value::Null, "{v}");
}

/// A broker on the default socket would be asked: check says so (exit 1), and the
/// broker hears no request from check.
#[test]
fn check_says_it_would_ask_the_broker_that_listens_and_asks_it_nothing() {
    let env = TestEnv::new();
    let broker = Serving::start(&env);
    let out = check(&env, &["--no-tty", "-c", "touch F"]);
    out.assert_code(1).assert_stdout_contains(&format!(
        "outcome:  gate would ask the approver on {} and run it only if approved",
        broker.socket.display()
    ));
    assert!(!out.stdout().contains("advice:"), "{}", out.report());
    let (v, out) = check_json(&env, &["--no-tty", "-c", "touch F"]);
    out.assert_code(1);
    assert_eq!(v["outcome"], "ask", "{v}");
    assert_eq!(v["approval"]["asks"], "socket", "{v}");
    assert_eq!(v["approval"]["socket_state"], "listening", "{v}");
    assert_eq!(v["approval"]["refusal"], Value::Null, "{v}");
    env.gate()
        .args(["--no-config", "pending"])
        .run()
        .assert_code(0)
        .assert_stdout("no requests are waiting\n");
    let log = broker.stop();
    log.assert_code(0);
    assert!(!log.stderr().contains("request 1"), "{}", log.report());
    assert!(!log.stderr().contains("closed"), "{}", log.report());
}

/// A socket that fails the requester's trust checks refuses the run without the
/// terminal being tried: check says it would be refused (exit 2). Control: the same
/// listener made private is asked.
#[test]
fn check_says_a_socket_that_cannot_be_trusted_refuses_the_command() {
    let env = TestEnv::new();
    let dir = env.root.join("approver");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let path = dir.join("approver.sock");
    let _listener = UnixListener::bind(&path).unwrap();
    let socket = path.to_str().unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
    let out = check(&env, &["--socket", socket, "-c", "touch F"]);
    out.assert_code(2).assert_stdout_contains(&format!(
        "outcome:  gate would refuse it now (exit 126): the approval socket cannot be trusted: \
         the socket {socket} is open to other users (mode 0666)"
    ));
    let (v, _) = check_json(&env, &["--socket", socket, "-c", "touch F"]);
    assert_eq!(v["approval"]["socket_state"], "untrusted", "{v}");
    assert_eq!(v["approval"]["socket_configured"], true, "{v}");

    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    check(&env, &["--socket", socket, "-c", "touch F"])
        .assert_code(1)
        .assert_stdout_contains(&format!("gate would ask the approver on {socket} and"));
}

/// On a person's terminal, turned on (and with no broker), gate would ask there: check
/// says so and exits 1. Control: the same with --no-tty would be refused.
#[test]
fn check_says_it_would_ask_on_the_terminal_when_there_is_one() {
    let env = TestEnv::new();
    let shown = check_on_a_terminal(&env, &["-c", "touch F"]);
    assert!(
        shown.contains("outcome:  gate would ask on the terminal and run it only if approved"),
        "{shown}"
    );
    assert!(shown.contains("status 1\n"), "{shown}");
    let shown = check_on_a_terminal(&env, &["--no-tty", "-c", "touch F"]);
    assert!(
        shown.contains("gate would refuse it now (exit 126)"),
        "{shown}"
    );
    assert!(shown.contains("status 2\n"), "{shown}");
    assert!(!env.file("F").exists(), "gate check ran the command");
}

/// When compound mode or the read-only preset, turned off, would have allowed a command
/// that needs an approver, check says so; otherwise it says nothing of them.
#[test]
fn check_says_when_compound_or_readonly_would_allow_it() {
    let env = TestEnv::new();
    let rules = ["--no-tty", "--allow", "git status", "--allow", "ls"];
    let with = |extra: &[&str]| {
        let mut args: Vec<&str> = rules.to_vec();
        args.extend(extra);
        check(&env, &args)
    };
    let compound = "hint:     with --compound (compound = true) it would be allowed: compound mode: \
                    each of its 2 commands is allowed on its own";
    with(&["-c", "git status && ls"])
        .assert_code(2)
        .assert_stdout_contains(compound);
    // Controls: turned on, it is allowed and there is no hint; a part no rule allows
    // gets no hint.
    let on = with(&["--compound", "-c", "git status && ls"]);
    on.assert_code(0);
    assert!(!on.stdout().contains("hint:"), "{}", on.report());
    let not = with(&["-c", "git status && rm x"]);
    not.assert_code(2);
    assert!(!not.stdout().contains("hint:"), "{}", not.report());

    with(&["-c", "cat notes.txt"])
        .assert_code(2)
        .assert_stdout_contains(
            "hint:     with --readonly (readonly = true) it would be allowed: it only reads: \
             the read-only preset allows `cat` as written",
        );
    let on = with(&["--readonly", "-c", "cat notes.txt"]);
    on.assert_code(0);
    assert!(!on.stdout().contains("hint:"), "{}", on.report());
    let not = with(&["-c", "rm notes.txt"]);
    assert!(!not.stdout().contains("hint:"), "{}", not.report());

    // Neither alone, both together.
    with(&["-c", "cat notes.txt | head"])
        .assert_code(2)
        .assert_stdout_contains(
            "hint:     with --compound and --readonly (compound = true, readonly = true) it \
             would be allowed",
        );
    let (v, _) = check_json(
        &env,
        &["--no-tty", "--allow", "ls", "-c", "ls && cat notes.txt"],
    );
    assert_eq!(
        v["would_allow_with"],
        serde_json::json!([{"settings": ["compound", "readonly"], "reason": v["would_allow_with"][0]["reason"]}]),
        "{v}"
    );
    assert!(
        v["would_allow_with"][0]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("`ls` matches the allow rule `ls`")),
        "{v}"
    );
    let (v, _) = check_json(&env, &["--no-tty", "-c", "rm x"]);
    assert_eq!(v["would_allow_with"], serde_json::json!([]), "{v}");
    // A deny rule is not something a setting gets past.
    let (v, _) = check_json(&env, &["--deny", "cat", "-c", "cat x"]);
    assert_eq!(v["would_allow_with"], serde_json::json!([]), "{v}");
}

#[test]
fn check_judges_a_program_as_its_shell_quoted_arguments() {
    let env = TestEnv::new();
    let (v, out) = check_json(&env, &["--allow", "echo", "--", "echo", "a b", "c;d"]);
    // It needs an approver, and nobody can be asked here.
    out.assert_code(2);
    assert_eq!(v["decision"], "ask", "{v}");
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
