//! gate execs the command: once allowed, the process is the command's own. Its pid, exit
//! status, death by signal, standard streams, descriptors, signal dispositions,
//! environment and working directory are exactly what they would be without gate.

use crate::common;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;

const FULL: [&str; 5] = ["--no-config", "--audit-log", "off", "--level", "full"];

#[test]
fn exit_statuses_of_a_shell_command_pass_through_exactly() {
    let env = TestEnv::new();
    for code in [0, 1, 2, 7, 127, 255] {
        env.gate()
            .args(FULL)
            .args(["-c", &format!("exit {code}")])
            .run()
            .assert_code(code)
            .assert_stderr_empty();
    }
}

#[test]
fn exit_statuses_of_a_program_pass_through_exactly() {
    let env = TestEnv::new();
    for code in [0, 1, 2, 7, 127, 255] {
        env.gate()
            .args(FULL)
            .args(["--", "sh", "-c", &format!("exit {code}")])
            .run()
            .assert_code(code)
            .assert_stderr_empty();
    }
}

#[test]
fn a_missing_program_exits_127() {
    let env = TestEnv::new();
    env.gate()
        .args(FULL)
        .args(["--", "/nonexistent/program"])
        .run()
        .assert_code(127)
        .assert_stderr_contains("/nonexistent/program");
    env.gate()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .args(FULL)
        .args(["--", "no-such-program-for-gate-tests"])
        .run()
        .assert_code(127);
    // The shell's own "not found" is the shell's status.
    env.gate()
        .args(FULL)
        .args(["-c", "/nonexistent/program"])
        .run()
        .assert_code(127);
}

#[test]
fn a_missing_program_exits_127_even_when_path_has_a_directory_the_user_cannot_search() {
    // execvp reports EACCES when some PATH directory cannot be searched and the program
    // is nowhere; sh and bash still say 127 (not found). Only an unprivileged user can
    // meet such a directory, so this runs as one (uid 65534 when the tests run as root;
    // for a non-root user the directory's mode 000 does it).
    let env = TestEnv::new();
    let locked = env.root.join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let path = format!("{}:/usr/local/bin:/usr/bin:/bin", locked.display());
    let run = |args: &[&str]| {
        env.gate()
            .user(User::Unprivileged)
            .env("PATH", &path)
            .args(FULL)
            .args(args)
            .run()
    };
    // The shell's own verdict on the same PATH, for comparison.
    run(&["-c", "no-such-program-for-gate-tests"]).assert_code(127);
    let out = run(&["--", "no-such-program-for-gate-tests"]);
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    out.assert_code(127);
}

#[test]
fn a_program_that_cannot_be_executed_exits_125_not_the_refusal_status() {
    let env = TestEnv::new();
    let not_executable = env.write("data.txt", "just data\n");
    env.gate()
        .args(FULL)
        .arg("--")
        .arg(&not_executable)
        .run()
        .assert_gate_error();
}

#[test]
fn a_missing_configured_shell_exits_125_and_names_the_shell() {
    // gate's own failure (its configuration names no real shell), not the command's
    // "not found" (127) and never a refusal (126).
    let env = TestEnv::new();
    let out = env
        .gate()
        .args(FULL)
        .args(["--shell", "/nonexistent/shell", "-c", "touch F"])
        .run();
    assert_absent(&env.file("F"), &out);
    out.assert_gate_error()
        .assert_stderr_contains("/nonexistent/shell")
        .assert_stdout("");
}

#[test]
fn a_configured_shell_that_cannot_be_executed_exits_125() {
    let env = TestEnv::new();
    let not_executable = env.write("not-a-shell", "just data\n");
    env.gate()
        .args(FULL)
        .arg("--shell")
        .arg(&not_executable)
        .args(["-c", "echo hi"])
        .run()
        .assert_gate_error()
        .assert_stdout("");
}

/// The status `sh -c SCRIPT` ends with when run directly, for comparison.
fn direct_sh(script: &str) -> std::process::ExitStatus {
    Command::new(require_program("sh"))
        .args(["-c", script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap()
}

#[test]
fn a_command_killed_by_sigterm_dies_the_same_way_under_gate() {
    let env = TestEnv::new();
    let script = "kill -TERM $$";
    let direct = direct_sh(script);
    assert_eq!(direct.signal(), Some(15), "sh itself: {direct:?}");
    let out = env.gate().args(FULL).args(["-c", script]).run();
    assert_eq!(out.signal(), direct.signal(), "{}", out.report());
    assert_eq!(out.code(), None, "{}", out.report());
    let out = env.gate().args(FULL).args(["--", "sh", "-c", script]).run();
    assert_eq!(out.signal(), Some(15), "{}", out.report());
}

#[test]
fn a_command_killed_by_sigkill_dies_the_same_way_under_gate() {
    let env = TestEnv::new();
    let script = "kill -KILL $$";
    let direct = direct_sh(script);
    assert_eq!(direct.signal(), Some(9), "sh itself: {direct:?}");
    let out = env.gate().args(FULL).args(["-c", script]).run();
    assert_eq!(out.signal(), direct.signal(), "{}", out.report());
    let out = env.gate().args(FULL).args(["--", "sh", "-c", script]).run();
    assert_eq!(out.signal(), Some(9), "{}", out.report());
}

#[test]
fn a_mebibyte_of_binary_data_passes_through_a_program_unchanged() {
    let env = TestEnv::new();
    let data = pseudo_random_bytes(1 << 20, 0x9e37_79b9_7f4a_7c15);
    let out = env
        .gate()
        .args(FULL)
        .args(["--", "cat"])
        .stdin(data.clone())
        .run();
    out.assert_code(0).assert_stderr_empty();
    assert_eq!(out.stdout.len(), data.len());
    assert!(out.stdout == data, "the bytes came out changed");
}

#[test]
fn a_mebibyte_of_binary_data_passes_through_a_shell_command_unchanged() {
    let env = TestEnv::new();
    let data = pseudo_random_bytes(1 << 20, 42);
    let out = env
        .gate()
        .args(FULL)
        .args(["-c", "cat"])
        .stdin(data.clone())
        .run();
    out.assert_code(0).assert_stderr_empty();
    assert_eq!(out.stdout.len(), data.len());
    assert!(out.stdout == data, "the bytes came out changed");
}

#[test]
fn the_shell_command_has_the_pid_the_caller_spawned() {
    let env = TestEnv::new();
    let out = env.gate().args(FULL).args(["-c", "echo $$"]).run();
    out.assert_code(0);
    assert_eq!(out.stdout().trim(), out.pid.to_string(), "{}", out.report());
}

#[test]
fn a_program_has_the_pid_the_caller_spawned() {
    let env = TestEnv::new();
    let out = env
        .gate()
        .args(FULL)
        .args(["--", "sh", "-c", "echo $$"])
        .run();
    out.assert_code(0);
    assert_eq!(out.stdout().trim(), out.pid.to_string(), "{}", out.report());
}

#[test]
fn an_allowed_command_at_ask_has_the_pid_the_caller_spawned() {
    let env = TestEnv::new();
    let out = env
        .gate()
        .args(["--no-config", "--audit-log", "off"])
        .args([
            "--allow",
            "cat /proc/self/stat",
            "--",
            "cat",
            "/proc/self/stat",
        ])
        .run();
    out.assert_code(0);
    let pid = out
        .stdout()
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_owned();
    assert_eq!(pid, out.pid.to_string(), "{}", out.report());
}

#[test]
fn the_program_gets_exactly_the_environment_gate_was_given() {
    let env = TestEnv::new();
    let out = env
        .gate()
        .env("GATE_TEST_MARKER", "a value with spaces = and more")
        .env("EMPTY_ONE", "")
        // A program is not a shell: these stay (a shell command loses them, below).
        .env("BASH_ENV", "/nonexistent/bash-env")
        .env("ENV", "/nonexistent/env")
        .args(FULL)
        .args(["--", "env"])
        .run();
    out.assert_code(0);
    let got: BTreeMap<String, String> = out
        .stdout()
        .lines()
        .map(|l| {
            let (k, v) = l.split_once('=').expect("env prints NAME=VALUE");
            (k.to_owned(), v.to_owned())
        })
        .collect();
    let mut expected: BTreeMap<String, String> = BTreeMap::new();
    for (k, v) in [
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("HOME", env.home.display().to_string()),
        ("XDG_STATE_HOME", env.state.display().to_string()),
        ("XDG_CONFIG_HOME", env.config.display().to_string()),
        ("XDG_RUNTIME_DIR", env.runtime.display().to_string()),
        ("LC_ALL", "C".into()),
        ("GATE_TEST_MARKER", "a value with spaces = and more".into()),
        ("EMPTY_ONE", String::new()),
        ("BASH_ENV", "/nonexistent/bash-env".into()),
        ("ENV", "/nonexistent/env".into()),
    ] {
        expected.insert(k.into(), v);
    }
    if expected["PATH"].is_empty() {
        expected.insert("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into());
    }
    assert_eq!(got, expected, "{}", out.report());
}

#[test]
fn the_shell_command_sees_the_callers_variables() {
    let env = TestEnv::new();
    env.gate()
        .env("FOO", "bar baz")
        .args(FULL)
        .args(["-c", "printf '%s' \"$FOO\""])
        .run()
        .assert_code(0)
        .assert_stdout("bar baz");
}

#[test]
fn the_shell_command_runs_without_the_variables_that_name_start_up_files() {
    // BASH_ENV and ENV name a file the shell would source before the command (see
    // tests/rc_files.rs); the command and the shells it starts do not see them.
    let env = TestEnv::new();
    for shell in ["bash", "sh"] {
        env.gate()
            .env("FOO", "bar")
            .env("BASH_ENV", "/nonexistent/bash-env")
            .env("ENV", "/nonexistent/env")
            .args(FULL)
            .arg("--shell")
            .arg(require_program(shell))
            .args([
                "-c",
                "printf '%s|%s|%s' \"$FOO\" \"${BASH_ENV-unset}\" \"${ENV-unset}\"",
            ])
            .run()
            .assert_code(0)
            .assert_stdout("bar|unset|unset");
    }
}

#[test]
fn the_command_runs_in_the_callers_working_directory() {
    let env = TestEnv::new();
    let dir = env.root.join("some dir");
    std::fs::create_dir(&dir).unwrap();
    let expected = format!("{}\n", dir.display());
    env.gate()
        .current_dir(&dir)
        .args(FULL)
        .args(["-c", "pwd"])
        .run()
        .assert_code(0)
        .assert_stdout(&expected);
    env.gate()
        .current_dir(&dir)
        .args(FULL)
        .args(["--", "pwd"])
        .run()
        .assert_code(0)
        .assert_stdout(&expected);
}

#[test]
fn the_command_inherits_exactly_the_descriptors_gate_was_given() {
    // gate's own files (configuration, audit log) must not leak into the command.
    let env = TestEnv::new();
    let config = env.write("config.toml", "level = \"full\"\n");
    let direct = Command::new(require_program("ls"))
        .args(["-1", "/proc/self/fd"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let out = env
        .gate()
        .arg("--config")
        .arg(&config)
        .args(["--", "ls", "-1", "/proc/self/fd"])
        .run();
    out.assert_code(0);
    assert_eq!(
        out.stdout(),
        String::from_utf8_lossy(&direct.stdout),
        "descriptors differ from a direct run\n{}",
        out.report()
    );
    assert!(env.default_audit_log().exists(), "the audit log was on");
}

#[test]
fn signal_dispositions_and_mask_are_the_callers() {
    let env = TestEnv::new();
    let status_lines = |stdout: &[u8]| -> Vec<String> {
        String::from_utf8_lossy(stdout)
            .lines()
            .filter(|l| l.starts_with("SigIgn:") || l.starts_with("SigBlk:"))
            .map(str::to_owned)
            .collect()
    };
    let direct = Command::new(require_program("cat"))
        .arg("/proc/self/status")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let out = env
        .gate()
        .args(FULL)
        .args(["--", "cat", "/proc/self/status"])
        .run();
    out.assert_code(0);
    let expected = status_lines(&direct.stdout);
    assert_eq!(
        expected.len(),
        2,
        "no SigIgn/SigBlk lines in /proc/self/status"
    );
    assert_eq!(status_lines(&out.stdout), expected, "{}", out.report());
}

#[test]
fn sigpipe_keeps_its_default_so_yes_into_head_ends_promptly() {
    let env = TestEnv::new();
    let out = env
        .gate()
        .deadline(Duration::from_secs(10))
        .args(FULL)
        .args(["-c", "yes | head -1"])
        .run();
    out.assert_code(0)
        .assert_stdout("y\n")
        .assert_stderr_empty();
}

#[test]
fn sigpipe_kills_the_writer_of_a_closed_pipe_as_without_gate() {
    // With SIGPIPE at its default, `yes` dies of the signal (status 141 in bash); were it
    // ignored, `yes` would see EPIPE, complain and exit 1.
    let env = TestEnv::new();
    let bash = bash();
    let out = env
        .gate()
        .args(FULL)
        .arg("--shell")
        .arg(&bash)
        .args(["-c", "yes | head -1 >/dev/null; echo ${PIPESTATUS[0]}"])
        .run();
    out.assert_code(0)
        .assert_stdout("141\n")
        .assert_stderr_empty();
}

#[test]
fn a_closed_stdin_stays_closed_for_the_command() {
    // The audit log is on, so gate opens a file while fd 0 is free: it must not be
    // handed to the command as its standard input.
    let env = TestEnv::new();
    let probe = ["-c", "[ -e /proc/$$/fd/0 ] && echo open || echo closed"];
    let gate = || {
        env.gate()
            .args(["--no-config", "--level", "full"])
            .args(probe)
    };
    gate().run().assert_code(0).assert_stdout("open\n");
    let out = gate().close_fd(0).run();
    out.assert_code(0).assert_stdout("closed\n");
    assert!(env.default_audit_log().exists(), "the audit log was on");
}

#[test]
fn a_closed_stdout_stays_closed_for_the_command() {
    let env = TestEnv::new();
    let probe = [
        "-c",
        "[ -e /proc/$$/fd/1 ] && echo open >&2 || echo closed >&2",
    ];
    let gate = || env.gate().args(FULL).args(probe);
    let control = gate().run();
    assert_eq!(control.stderr(), "open\n", "{}", control.report());
    let out = gate().close_fd(1).run();
    out.assert_code(0);
    assert_eq!(out.stderr(), "closed\n", "{}", out.report());
}

#[test]
fn a_closed_stderr_stays_closed_for_the_command() {
    let env = TestEnv::new();
    let probe = ["-c", "[ -e /proc/$$/fd/2 ] && echo open || echo closed"];
    let gate = || env.gate().args(FULL).args(probe);
    gate().run().assert_code(0).assert_stdout("open\n");
    gate()
        .close_fd(2)
        .run()
        .assert_code(0)
        .assert_stdout("closed\n");
}

#[test]
fn a_refusal_with_stderr_closed_still_exits_126() {
    let env = TestEnv::new();
    let out = env
        .gate()
        .close_fd(2)
        .args(["--no-config", "--level", "ask", "-c", "touch F"])
        .run();
    out.assert_code(REFUSED);
    assert_absent(&env.file("F"), &out);
}
