//! Agents' wrappers, black-box: Claude Code's start-up call answered by gate, its
//! wrapped commands judged by the agent's own command inside, and any doubt about the
//! wrapper's files judged whole (which no allow rule matches).

mod common;

use std::fs;
use std::os::unix::fs::PermissionsExt;

use common::*;

/// Claude Code runs bash (its wrapper uses `source` and `shopt`).
const NO_CONFIG: [&str; 8] = [
    "--no-config",
    "--audit-log",
    "off",
    "--no-tty",
    "--level",
    "ask",
    "--shell",
    "/bin/bash",
];

fn snapshot(env: &TestEnv) -> String {
    format!(
        "{}/.claude/shell-snapshots/snapshot-bash-1779911576803-aniwq6.sh",
        env.home.display()
    )
}

/// Claude Code 2.1's wrapper (bash) around `inner`, quoted as Claude quotes it.
fn wrapped(env: &TestEnv, inner: &str, cwd_file: &str) -> String {
    format!(
        "source {} 2>/dev/null || true && shopt -u extglob 2>/dev/null || true && eval '{}' < /dev/null && pwd -P >| {cwd_file}",
        snapshot(env),
        inner.replace('\'', "'\"'\"'")
    )
}

fn startup_script(env: &TestEnv) -> String {
    format!(
        "SNAPSHOT_FILE={}\n      source \"{}/.bashrc\" < /dev/null\n\n      # First, create/clear the snapshot file\n      echo \"# Snapshot file\" >| \"$SNAPSHOT_FILE\"\n      touch {}/startup-ran\n",
        snapshot(env),
        env.home.display(),
        env.work.display()
    )
}

fn cwd_file(env: &TestEnv) -> String {
    // The template takes /tmp/claude-XXXX-cwd only; make the name unique per test.
    let n = env
        .work
        .to_string_lossy()
        .bytes()
        .fold(0u16, |a, b| a.wrapping_mul(31).wrapping_add(b.into()));
    format!("/tmp/claude-{n:04x}-cwd")
}

#[test]
fn claude_codes_start_up_call_is_answered_without_running_it() {
    let env = TestEnv::new();
    let out = env
        .gate()
        .args(NO_CONFIG)
        .args(["-c", "-l", &startup_script(&env)])
        .run();
    out.assert_code(0);
    assert!(
        !env.file("startup-ran").exists(),
        "the script ran\n{}",
        out.report()
    );
    let written = fs::read_to_string(snapshot(&env)).unwrap();
    assert!(written.starts_with("# Snapshot file\n"), "{written}");
    assert!(
        written.lines().all(|l| l.starts_with('#')),
        "the stub is comments only: {written}"
    );
    // At full, the call runs for real (gate answers only where it would ask or sandbox).
    fs::remove_file(snapshot(&env)).unwrap();
    env.gate()
        .args([
            "--no-config",
            "--audit-log",
            "off",
            "--level",
            "full",
            "--shell",
            "/bin/bash",
        ])
        .args(["-c", "-l", &startup_script(&env)])
        .run()
        .assert_code(0);
    assert!(env.file("startup-ran").exists());
}

#[test]
fn a_wrapped_command_is_judged_by_the_agents_own_command() {
    let env = TestEnv::new();
    env.gate()
        .args(NO_CONFIG)
        .args(["-c", "-l", &startup_script(&env)])
        .run()
        .assert_code(0);
    let cwd = cwd_file(&env);
    let _ = fs::remove_file(&cwd);
    let out = env
        .gate()
        .args(NO_CONFIG)
        .args(["--allow", "echo hello"])
        .args(["-c", &wrapped(&env, "echo hello", &cwd)])
        .run();
    out.assert_code(0);
    assert_eq!(out.stdout(), "hello\n");
    assert_eq!(
        fs::read_to_string(&cwd).unwrap().trim_end(),
        env.work.canonicalize().unwrap().to_str().unwrap(),
        "the wrapper's bookkeeping ran"
    );
    let _ = fs::remove_file(&cwd);
    // The agent's own command must be allowed: a different one is refused, whole.
    let f = env.file("F");
    let out = env
        .gate()
        .args(NO_CONFIG)
        .args(["--allow", "echo hello"])
        .args(["-c", &wrapped(&env, "echo hello; touch F", &cwd)])
        .run();
    assert_absent(&f, &out);
    out.assert_refused()
        .assert_stderr_contains("echo hello; touch F")
        .assert_stderr_contains("claude-code");
    assert!(!std::path::Path::new(&cwd).exists());
}

#[test]
fn a_snapshot_gate_did_not_write_makes_the_wrapper_count_for_nothing() {
    let env = TestEnv::new();
    let cwd = cwd_file(&env);
    let path = snapshot(&env);
    fs::create_dir_all(std::path::Path::new(&path).parent().unwrap()).unwrap();
    // The model wrote the snapshot with its own file tools.
    fs::write(&path, format!("touch {}/PWNED\n", env.work.display())).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
    let pwned = env.file("PWNED");
    let out = env
        .gate()
        .args(NO_CONFIG)
        .args(["--allow", "echo hello"])
        .args(["-c", &wrapped(&env, "echo hello", &cwd)])
        .run();
    assert_absent(&pwned, &out);
    out.assert_refused();
    // Control: the same text at full sources the file.
    env.gate()
        .args([
            "--no-config",
            "--audit-log",
            "off",
            "--level",
            "full",
            "--shell",
            "/bin/bash",
        ])
        .args(["-c", &wrapped(&env, "echo hello", &cwd)])
        .run()
        .assert_code(0);
    assert!(pwned.exists(), "the control did not source the snapshot");
    let _ = fs::remove_file(&cwd);
}

#[test]
fn a_cwd_file_that_is_a_link_makes_the_wrapper_count_for_nothing() {
    let env = TestEnv::new();
    env.gate()
        .args(NO_CONFIG)
        .args(["-c", "-l", &startup_script(&env)])
        .run()
        .assert_code(0);
    let cwd = cwd_file(&env);
    let _ = fs::remove_file(&cwd);
    let target = env.file("bashrc-like");
    fs::write(&target, "keep me\n").unwrap();
    std::os::unix::fs::symlink(&target, &cwd).unwrap();
    let out = env
        .gate()
        .args(NO_CONFIG)
        .args(["--allow", "echo hello"])
        .args(["-c", &wrapped(&env, "echo hello", &cwd)])
        .run();
    out.assert_refused();
    assert_eq!(fs::read_to_string(&target).unwrap(), "keep me\n");
    fs::remove_file(&cwd).unwrap();
}

#[test]
fn the_audit_log_names_the_wrapper_and_records_the_inner_command() {
    let env = TestEnv::new();
    env.gate()
        .args(NO_CONFIG)
        .args(["-c", "-l", &startup_script(&env)])
        .run()
        .assert_code(0);
    let log = env.root.join("audit.jsonl");
    let cwd = cwd_file(&env);
    let _ = fs::remove_file(&cwd);
    env.gate()
        .args([
            "--no-config",
            "--no-tty",
            "--level",
            "ask",
            "--shell",
            "/bin/bash",
        ])
        .args(["--audit-log", log.to_str().unwrap()])
        .args(["--allow", "echo hello"])
        .args(["-c", &wrapped(&env, "echo hello", &cwd)])
        .run()
        .assert_code(0);
    let _ = fs::remove_file(&cwd);
    let text = fs::read_to_string(&log).unwrap();
    let record: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(record["command"], "echo hello", "{record}");
    assert_eq!(record["decided_by"], "rule", "{record}");
    assert!(
        record["wrapper"]
            .as_str()
            .is_some_and(|w| w.starts_with("claude-code/")),
        "{record}"
    );
}
