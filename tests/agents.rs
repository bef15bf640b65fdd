//! Agents' wrappers, black-box: Claude Code's start-up call answered by gate, its
//! wrapped commands judged by the agent's own command inside, and any doubt about the
//! wrapper's files judged whole (which no allow rule matches).

use crate::common;

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

/// Claude Code 2.1.332's setup (bash), between the snapshot and `eval`.
const SETUP_2_1_332: &str = "\\builtin shopt -u extglob 2>/dev/null || true && { \\builtin unalias -- 'which'; \\builtin unset -f -- 'which'; } >/dev/null 2>&1 || true && { \\builtin unalias -- 'unsetenv'; \\builtin unset -f -- 'unsetenv'; } >/dev/null 2>&1 || true";

/// Claude Code 2.1's wrapper (bash) around `inner`, quoted as Claude quotes it.
fn wrapped(env: &TestEnv, inner: &str, cwd_file: &str) -> String {
    wrapped_with(env, SETUP_2_1_332, inner, cwd_file)
}

/// The same with another `setup`.
fn wrapped_with(env: &TestEnv, setup: &str, inner: &str, cwd_file: &str) -> String {
    format!(
        "source {} 2>/dev/null || true && {setup} && eval '{}' < /dev/null && pwd -P >| {cwd_file}",
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

/// A forged setup that smuggles a command between the snapshot and `eval`, around an
/// allowed inner command: judged whole, refused, nothing run. The control: the genuine
/// setup runs the allowed command, and the forgery at `full` runs the smuggled one.
#[test]
fn a_setup_that_smuggles_a_command_makes_the_wrapper_count_for_nothing() {
    let env = TestEnv::new();
    env.gate()
        .args(NO_CONFIG)
        .args(["-c", "-l", &startup_script(&env)])
        .run()
        .assert_code(0);
    let cwd = cwd_file(&env);
    let _ = fs::remove_file(&cwd);
    let smuggled = env.file("SMUGGLED");
    let forged_setup = format!(
        "{{ \\builtin unalias -- 'which'; touch {}; }} >/dev/null 2>&1 || true",
        smuggled.display()
    );
    let forged = wrapped_with(&env, &forged_setup, "echo hello", &cwd);
    let out = env
        .gate()
        .args(NO_CONFIG)
        .args(["--allow", "echo hello"])
        .args(["-c", &forged])
        .run();
    assert_absent(&smuggled, &out);
    out.assert_refused().assert_stderr_contains(
        "it looks like Claude Code's wrapper, a version gate does not know",
    );
    assert!(!std::path::Path::new(&cwd).exists());
    // Control: the genuine setup around the same command runs it.
    let out = env
        .gate()
        .args(NO_CONFIG)
        .args(["--allow", "echo hello"])
        .args(["-c", &wrapped(&env, "echo hello", &cwd)])
        .run();
    out.assert_code(0);
    assert_eq!(out.stdout(), "hello\n");
    let _ = fs::remove_file(&cwd);
    // Control: at full the forgery does run what it smuggled.
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
        .args(["-c", &forged])
        .run()
        .assert_code(0);
    assert!(
        smuggled.exists(),
        "the control did not run the smuggled command"
    );
    let _ = fs::remove_file(&cwd);
}

/// A setup of bash's builtins (a bare `shopt`, as Claude Code 2.1.197 sent it) run by
/// zsh, where `shopt` is whatever program of that name comes first on PATH: judged
/// whole, refused, nothing run. The controls: the same wrapper under bash runs the
/// allowed command, and under zsh at `full` the planted `shopt` runs.
#[test]
fn a_setup_whose_words_are_not_builtins_of_the_shell_counts_for_nothing() {
    let zsh = require_program("zsh");
    let env = TestEnv::new();
    env.gate()
        .args(NO_CONFIG)
        .args(["-c", "-l", &startup_script(&env)])
        .run()
        .assert_code(0);
    let cwd = cwd_file(&env);
    let _ = fs::remove_file(&cwd);
    let bin = env.root.join("bin");
    fs::create_dir(&bin).unwrap();
    let planted = env.file("PLANTED");
    fs::write(
        bin.join("shopt"),
        format!("#!/bin/sh\ntouch {}\n", planted.display()),
    )
    .unwrap();
    fs::set_permissions(bin.join("shopt"), fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let text = wrapped_with(
        &env,
        "shopt -u extglob 2>/dev/null || true",
        "echo hello",
        &cwd,
    );
    let run = |shell: &str, level: &str| {
        env.gate()
            .env("PATH", &path)
            .args(["--no-config", "--audit-log", "off", "--no-tty"])
            .args(["--level", level, "--shell", shell, "--allow", "echo hello"])
            .args(["-c", &text])
            .run()
    };
    let out = run(zsh.to_str().unwrap(), "ask");
    assert_absent(&planted, &out);
    out.assert_refused()
        .assert_stderr_contains("builtins of bash");
    // Control: bash, where `shopt` is its own.
    let out = run("/bin/bash", "ask");
    out.assert_code(0);
    assert_eq!(out.stdout(), "hello\n");
    assert!(!planted.exists(), "bash ran the planted shopt");
    let _ = fs::remove_file(&cwd);
    // Control: zsh at full runs the planted program.
    run(zsh.to_str().unwrap(), "full").assert_code(0);
    assert!(planted.exists(), "zsh did not run the planted shopt");
    let _ = fs::remove_file(&cwd);
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

// Gemini CLI (0.44 and later): a temporary directory of its own per call.

/// Gemini CLI 0.61's wrapper around `inner`, its temporary directory `dir`.
fn gemini_wrapped(dir: &std::path::Path, inner: &str) -> String {
    format!(
        "shopt -u promptvars nullglob extglob nocaseglob dotglob; _bgpids_file={}/bgpids.tmp\n(\n  trap 'jobs -p > \"$_bgpids_file\"' EXIT\n{inner}\n)\n__code=$?\nexit $__code",
        dir.display()
    )
}

/// A directory as Gemini CLI's `mkdtemp` makes it: private, in the test's TMPDIR.
fn gemini_dir(env: &TestEnv) -> std::path::PathBuf {
    let dir = env.root.join("gemini-shell-Ab12Cd");
    fs::create_dir(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
    dir
}

fn gemini_gate(env: &TestEnv, text: &str) -> Outcome {
    env.gate()
        .env("TMPDIR", &env.root)
        .args(NO_CONFIG)
        .args(["--allow", "touch gemini-ran"])
        .args(["-c", text])
        .run()
}

#[test]
fn a_gemini_wrapper_in_a_private_temporary_directory_is_judged_by_its_command() {
    let env = TestEnv::new();
    let dir = gemini_dir(&env);
    gemini_gate(&env, &gemini_wrapped(&dir, "touch gemini-ran")).assert_code(0);
    assert!(env.file("gemini-ran").exists());
    // The EXIT trap wrote the background pids file, as Gemini CLI expects.
    assert!(dir.join("bgpids.tmp").is_file());
}

#[test]
fn a_gemini_temporary_directory_that_is_not_private_makes_the_wrapper_count_for_nothing() {
    let env = TestEnv::new();
    let private = gemini_dir(&env);
    type Make<'a> = Box<dyn Fn() -> std::path::PathBuf + 'a>;
    let cases: Vec<(&str, Make<'_>)> = vec![
        (
            "is open to other users",
            Box::new(|| {
                let dir = env.root.join("gemini-shell-Open00");
                fs::create_dir(&dir).unwrap();
                fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
                dir
            }),
        ),
        (
            "is not a directory",
            Box::new(|| {
                let link = env.root.join("gemini-shell-Link00");
                std::os::unix::fs::symlink(&private, &link).unwrap();
                link
            }),
        ),
        (
            "No such file",
            Box::new(|| env.root.join("gemini-shell-Gone00")),
        ),
        (
            "is not in the temporary directory",
            Box::new(|| {
                let dir = env.work.join("gemini-shell-Away00");
                fs::create_dir(&dir).unwrap();
                fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
                dir
            }),
        ),
        (
            "is not a regular file",
            Box::new(|| {
                let dir = env.root.join("gemini-shell-File00");
                fs::create_dir(&dir).unwrap();
                fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
                std::os::unix::fs::symlink(env.file("victim"), dir.join("bgpids.tmp")).unwrap();
                dir
            }),
        ),
    ];
    fs::write(env.file("victim"), "keep me\n").unwrap();
    for (why, make) in cases {
        let dir = make();
        let out = gemini_gate(&env, &gemini_wrapped(&dir, "touch gemini-ran"));
        out.assert_refused();
        out.assert_stderr_contains("it is Gemini CLI's wrapper (gemini-cli/subshell-trap), but");
        out.assert_stderr_contains(why);
        assert_absent(&env.file("gemini-ran"), &out);
    }
    assert_eq!(fs::read_to_string(env.file("victim")).unwrap(), "keep me\n");
}

/// A text shaped like Gemini CLI's wrapper that no template matches (a version gate does
/// not know): the refusal, `gate check` and the audit record say so.
#[test]
fn an_unknown_version_of_a_known_wrapper_is_named_in_the_refusal_check_and_audit() {
    let env = TestEnv::new();
    let dir = gemini_dir(&env);
    let text = gemini_wrapped(&dir, "touch gemini-ran").replace("jobs -p", "jobs -pr");
    let note = "it looks like Gemini CLI's wrapper, a version gate does not know, so gate judges the whole text";
    let out = gemini_gate(&env, &text);
    out.assert_refused();
    out.assert_stderr_contains(note);
    assert_absent(&env.file("gemini-ran"), &out);

    let check = env
        .gate()
        .args(NO_CONFIG)
        .args(["check", "--allow", "touch gemini-ran", "-c", &text])
        .run();
    check.assert_stdout_contains(note);
    let json = env
        .gate()
        .args(NO_CONFIG)
        .args(["check", "--json", "-c", &text])
        .run();
    let v: serde_json::Value = serde_json::from_str(&json.stdout()).unwrap();
    assert_eq!(v["looks_like_wrapper"], "gemini-cli", "{v}");
    assert_eq!(v["wrapper"], serde_json::Value::Null, "{v}");

    let log = env.root.join("audit.jsonl");
    env.gate()
        .env("TMPDIR", &env.root)
        .args(["--no-config", "--no-tty", "--shell", "/bin/bash"])
        .args(["--audit-log", log.to_str().unwrap()])
        .args(["-c", &text])
        .run()
        .assert_refused();
    let record = audit_records(&log).pop().unwrap();
    assert_eq!(record["looks_like_wrapper"], "gemini-cli", "{record}");
    assert!(
        record["message"].as_str().unwrap().contains(note),
        "{record}"
    );
    // A plain command resembles nothing.
    let plain = env
        .gate()
        .args(NO_CONFIG)
        .args(["check", "--json", "-c", "touch x; ls"])
        .run();
    let v: serde_json::Value = serde_json::from_str(&plain.stdout()).unwrap();
    assert_eq!(v["looks_like_wrapper"], serde_json::Value::Null, "{v}");
}

/// An agent's start-up call judged whole (at `full`, where gate does not answer it) is
/// not said to be a wrapper of an unknown version, though its text has the agent's marks.
#[test]
fn a_start_up_call_judged_whole_is_not_called_an_unknown_wrapper() {
    let env = TestEnv::new();
    let script = startup_script(&env);
    assert!(script.contains("/.claude/shell-snapshots/snapshot-"));
    let out = env
        .gate()
        .args([
            "--no-config",
            "--audit-log",
            "off",
            "--no-tty",
            "--level",
            "full",
        ])
        .args(["check", "--deny", "touch", "-c", "-l", &script])
        .run();
    assert!(!out.stdout().contains("looks like"), "{}", out.report());
    // The same text as a plain -c command is a look-alike.
    let out = env
        .gate()
        .args([
            "--no-config",
            "--audit-log",
            "off",
            "--no-tty",
            "--level",
            "full",
        ])
        .args(["check", "--deny", "touch", "-c", &script])
        .run();
    out.assert_stdout_contains("it looks like Claude Code's wrapper");
}

#[test]
fn an_ask_rule_asks_about_a_part_of_an_agents_wrapped_compound_command_at_full() {
    let env = TestEnv::new();
    env.gate()
        .args(NO_CONFIG)
        .args(["-c", "-l", &startup_script(&env)])
        .run()
        .assert_code(0);
    let cwd = cwd_file(&env);
    let f = env.file("F");
    let full = [
        "--no-config",
        "--audit-log",
        "off",
        "--no-tty",
        "--level",
        "full",
        "--shell",
        "/bin/bash",
    ];
    let command = wrapped(&env, "true && touch F", &cwd);
    env.gate()
        .args(full)
        .args(["-c", &command])
        .run()
        .assert_code(0);
    assert!(
        f.exists(),
        "control: without the ask rule the wrapped command ran"
    );
    fs::remove_file(&f).unwrap();
    let out = env
        .gate()
        .args(full)
        .args(["--ask", "touch", "-c", &command])
        .run();
    assert_absent(&f, &out);
    out.assert_refused()
        .assert_stderr_contains("the ask rule `touch` (from --ask) matches `touch F`")
        .assert_stderr_contains("no approver");
    let _ = fs::remove_file(&cwd);
}

/// At `full`, an ask rule must not stop the agents from starting: their start-up scripts
/// hold computed programs, which every ask rule matches. Claude Code's is answered by gate
/// (as with a deny rule); Codex's capture runs, as level full runs it.
#[test]
fn at_full_an_ask_rule_leaves_the_agents_start_up_calls_alone() {
    let env = TestEnv::new();
    let full = [
        "--no-config",
        "--audit-log",
        "off",
        "--no-tty",
        "--level",
        "full",
        "--shell",
        "/bin/bash",
        "--ask",
        "git push",
    ];
    let out = env
        .gate()
        .args(full)
        .args(["-c", "-l", &startup_script(&env)])
        .run();
    out.assert_code(0);
    assert!(!env.file("startup-ran").exists(), "{}", out.report());
    assert!(
        fs::read_to_string(snapshot(&env))
            .unwrap()
            .starts_with("# Snapshot file\n")
    );

    let fixture: serde_json::Value = serde_json::from_str(
        &fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/agents/codex-0.171-snapshot-capture.argv"),
        )
        .unwrap(),
    )
    .unwrap();
    let args: Vec<&str> = fixture["argv"].as_array().unwrap()[1..]
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let out = env.gate().args(full).args(&args).run();
    out.assert_code(0);
    assert!(
        out.stdout().contains("# Snapshot file"),
        "the capture ran\n{}",
        out.report()
    );
}
