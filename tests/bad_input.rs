//! Bad input gets a clear error at once: one `gate: …` line and status 125 (126 for a
//! refusal), never a hang and never a blow-up. Configuration files that are not regular
//! files or are far too large, log filters that name no level, audit logs whose
//! directory does not exist, shells that are directories or missing, and a stderr that
//! nobody reads.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::*;

/// Long enough for a busy machine, short enough that a hang fails the test soon.
const PROMPT: Duration = Duration::from_secs(10);

/// The cap on a configuration file's size.
const CAP: usize = 1024 * 1024;

/// Exactly one line on stderr, and it is gate's.
#[track_caller]
fn assert_one_gate_line(out: &Outcome) {
    let stderr = out.stderr();
    assert!(
        stderr.starts_with("gate: ") && stderr.ends_with('\n') && stderr.matches('\n').count() == 1,
        "expected exactly one `gate: ` line on stderr\n{}",
        out.report()
    );
}

fn fifo(env: &TestEnv, name: &str) -> PathBuf {
    let path = env.root.join(name);
    nix::unistd::mkfifo(&path, nix::sys::stat::Mode::from_bits_truncate(0o644))
        .unwrap_or_else(|e| panic!("cannot make the FIFO {}: {e}", path.display()));
    path
}

/// `touch F` at level full, with the configuration file chosen by `choose`: the file is
/// refused at once, F is not made, and the one line names `named`.
#[track_caller]
fn refused_file(env: &TestEnv, choose: impl FnOnce(Gate) -> Gate, named: &Path, what: &str) {
    let gate = env
        .gate()
        .deadline(PROMPT)
        .args(["--audit-log", "off", "--level", "full"]);
    let out = choose(gate).args(["-c", "touch F"]).run();
    assert_absent(&env.file("F"), &out);
    out.assert_gate_error()
        .assert_stderr_contains(&format!("gate: {}: ", named.display()))
        .assert_stderr_contains(what)
        .assert_stderr_contains("nothing was run")
        .assert_stdout("");
    assert_one_gate_line(&out);
}

#[test]
fn a_configuration_file_that_is_a_fifo_is_refused_at_once() {
    let env = TestEnv::new();
    env.assert_side_effects_are_visible(User::Current);
    let pipe = fifo(&env, "config.fifo");
    let what = "is a FIFO (named pipe), not a regular file";
    refused_file(&env, |g| g.arg("--config").arg(&pipe), &pipe, what);
    refused_file(&env, |g| g.env("GATE_CONFIG", &pipe), &pipe, what);
    // The default user file, which may be absent, may not be a FIFO either.
    let user_file = env.user_config_file();
    std::fs::create_dir_all(user_file.parent().unwrap()).unwrap();
    nix::unistd::mkfifo(&user_file, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
    refused_file(&env, |g| g, &user_file, what);
}

#[test]
fn a_device_as_configuration_file_is_refused_at_once() {
    let env = TestEnv::new();
    let zero = Path::new("/dev/zero");
    let what = "is a character device, not a regular file";
    refused_file(&env, |g| g.arg("--config").arg(zero), zero, what);
    refused_file(&env, |g| g.env("GATE_CONFIG", zero), zero, what);
}

#[test]
fn the_null_device_names_an_empty_configuration_file() {
    // The usual way to say "no file here" keeps working: /dev/null reads as empty.
    let env = TestEnv::new();
    for way in ["--config", "GATE_CONFIG"] {
        let gate = env.gate().deadline(PROMPT);
        let gate = if way == "--config" {
            gate.args(["--config", "/dev/null"])
        } else {
            gate.env("GATE_CONFIG", "/dev/null")
        };
        gate.args(["--audit-log", "off", "--level", "full", "-c", "echo ran"])
            .run()
            .assert_code(0)
            .assert_stdout("ran\n")
            .assert_stderr_empty();
    }
}

#[test]
fn a_socket_as_configuration_file_is_refused() {
    let env = TestEnv::new();
    let socket = env.root.join("config.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    refused_file(
        &env,
        |g| g.arg("--config").arg(&socket),
        &socket,
        "is a socket, not a regular file",
    );
}

#[test]
fn a_directory_as_configuration_file_says_so() {
    let env = TestEnv::new();
    let dir = env.root.join("a-directory");
    std::fs::create_dir(&dir).unwrap();
    let what = "is a directory, not a regular file";
    refused_file(&env, |g| g.arg("--config").arg(&dir), &dir, what);
    let user_file = env.user_config_file();
    std::fs::create_dir_all(&user_file).unwrap();
    refused_file(&env, |g| g, &user_file, what);
}

/// A valid configuration file of exactly `len` bytes: `level = "full"` and comments.
fn config_of_size(len: usize) -> Vec<u8> {
    let mut text = b"level = \"full\"\n".to_vec();
    let line = format!("# {}\n", "x".repeat(77));
    while text.len() + line.len() <= len {
        text.extend_from_slice(line.as_bytes());
    }
    match len - text.len() {
        0 => {}
        1 => text.push(b'\n'),
        _ => {
            text.push(b'#');
            text.resize(len - 1, b'x');
            text.push(b'\n');
        }
    }
    assert_eq!(text.len(), len);
    text
}

#[test]
fn a_configuration_file_over_a_mebibyte_is_refused() {
    let env = TestEnv::new();
    let at_cap = env.write("at-cap.toml", config_of_size(CAP));
    let over = env.write("over-cap.toml", config_of_size(CAP + 1));
    // Control: a file of exactly the cap is read.
    env.gate()
        .arg("--config")
        .arg(&at_cap)
        .args(["--audit-log", "off", "-c", "echo ran"])
        .run()
        .assert_code(0)
        .assert_stdout("ran\n");
    refused_file(
        &env,
        |g| g.arg("--config").arg(&over),
        &over,
        "is larger than 1 MiB (1048577 bytes)",
    );
}

#[test]
fn gate_log_filters_that_name_no_level_are_errors() {
    let env = TestEnv::new();
    for filter in [
        "degub",
        "info,degub",
        "gate=degub",
        "gate=",
        "=debug",
        "debug,",
        "gate debug",
    ] {
        let out = env
            .gate()
            .deadline(PROMPT)
            .env("GATE_LOG", filter)
            .args(["--no-config", "--audit-log", "off", "--level", "full"])
            .args(["-c", "touch F"])
            .run();
        assert_absent(&env.file("F"), &out);
        out.assert_gate_error()
            .assert_stderr_contains(&format!("gate: GATE_LOG: `{filter}` is not a log filter"))
            .assert_stderr_contains("nothing was run");
        assert_one_gate_line(&out);
    }
    // Controls: levels, and targets with levels.
    for filter in ["debug", "OFF", "gate=trace", "warn,gate::run=debug"] {
        env.gate()
            .env("GATE_LOG", filter)
            .args(["--no-config", "--audit-log", "off", "--level", "full"])
            .args(["-c", "echo ran"])
            .run()
            .assert_code(0)
            .assert_stdout("ran\n");
    }
}

/// A directory at the root of the file system that must not come to exist; removed again
/// if it does.
struct AtRoot(PathBuf);

impl AtRoot {
    fn new() -> AtRoot {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        AtRoot(PathBuf::from(format!(
            "/gate-test-nonexistent-{}-{nanos}",
            std::process::id()
        )))
    }

    fn log(&self) -> PathBuf {
        self.0.join("dir/a.jsonl")
    }

    #[track_caller]
    fn assert_absent(&self, out: &Outcome) {
        if self.0.exists() {
            let _ = std::fs::remove_dir_all(&self.0);
            panic!(
                "gate created {} for the audit log\n{}",
                self.0.display(),
                out.report()
            );
        }
    }
}

impl Drop for AtRoot {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn an_audit_log_in_a_missing_directory_creates_no_directories() {
    let env = TestEnv::new();
    let root = AtRoot::new();
    let log = root.log();
    let config = env.write(
        "log.toml",
        format!("[audit]\nlog = \"{}\"\n", log.display()),
    );
    let no_config = || env.gate().arg("--no-config");
    for gate in [
        no_config().env("GATE_AUDIT_LOG", &log),
        no_config().arg("--audit-log").arg(&log),
        env.gate().arg("--config").arg(&config),
    ] {
        let out = gate
            .deadline(PROMPT)
            .args(["--level", "full", "-c", "echo ran"])
            .run();
        root.assert_absent(&out);
        // Not required: the command runs after one warning.
        out.assert_code(0)
            .assert_stdout("ran\n")
            .assert_stderr_contains(&format!(
                "gate: warning: cannot write the audit log {}: its directory {} does not exist",
                log.display(),
                log.parent().unwrap().display()
            ));
        assert_one_gate_line(&out);
    }
}

#[test]
fn a_required_audit_log_in_a_missing_directory_runs_nothing() {
    let env = TestEnv::new();
    env.assert_side_effects_are_visible(User::Current);
    let root = AtRoot::new();
    let config = env.write(
        "required.toml",
        format!(
            "level = \"full\"\n[audit]\nrequired = true\nlog = \"{}\"\n",
            root.log().display()
        ),
    );
    let out = env
        .gate()
        .deadline(PROMPT)
        .arg("--config")
        .arg(&config)
        .args(["-c", "touch F"])
        .run();
    root.assert_absent(&out);
    assert_absent(&env.file("F"), &out);
    out.assert_gate_error()
        .assert_stderr_contains("does not exist")
        .assert_stderr_contains("audit.required")
        .assert_stderr_contains("nothing was run");
    assert_one_gate_line(&out);
}

#[test]
fn the_audit_log_in_gates_own_state_directory_gets_its_directories() {
    // Control: the default log's directory, and the same place named explicitly (as the
    // packaged configuration's commented-out line does), are made when missing.
    let env = TestEnv::new();
    env.gate()
        .env_remove("XDG_STATE_HOME")
        .args(["--no-config", "--level", "full", "--audit-log"])
        .arg(env.home.join(".local/state/gate/audit.jsonl"))
        .args(["-c", "true"])
        .run()
        .assert_code(0)
        .assert_stderr_empty();
    assert!(env.home.join(".local/state/gate/audit.jsonl").is_file());
}

#[test]
fn a_shell_that_is_a_directory_says_so() {
    let env = TestEnv::new();
    env.assert_side_effects_are_visible(User::Current);
    let dir = env.root.join("not-a-shell");
    std::fs::create_dir(&dir).unwrap();
    let config = env.write(
        "shell.toml",
        format!("level = \"full\"\nshell = \"{}\"\n", dir.display()),
    );
    for (origin, gate) in [
        (
            "--shell".to_owned(),
            env.gate()
                .args(["--no-config", "--level", "full", "--shell"])
                .arg(&dir),
        ),
        (
            "GATE_SHELL".to_owned(),
            env.gate()
                .env("GATE_SHELL", &dir)
                .args(["--no-config", "--level", "full"]),
        ),
        (
            format!("{}:2", config.display()),
            env.gate().arg("--config").arg(&config),
        ),
    ] {
        let out = gate
            .deadline(PROMPT)
            .args(["--audit-log", "off", "-c", "touch F"])
            .run();
        assert_absent(&env.file("F"), &out);
        out.assert_gate_error();
        assert_eq!(
            out.stderr(),
            format!(
                "gate: the shell `{}` (from {origin}) is a directory, not a program; nothing was run\n",
                dir.display()
            ),
            "{}",
            out.report()
        );
    }
}

#[test]
fn a_missing_shell_names_where_it_was_set() {
    let env = TestEnv::new();
    let missing = "/nonexistent/shell";
    let config = env.write(
        "shell.toml",
        format!("level = \"full\"\n\nshell = \"{missing}\"\n"),
    );
    for (origin, gate) in [
        (
            "--shell".to_owned(),
            env.gate()
                .args(["--no-config", "--level", "full", "--shell", missing]),
        ),
        (
            "GATE_SHELL".to_owned(),
            env.gate()
                .env("GATE_SHELL", missing)
                .args(["--no-config", "--level", "full"]),
        ),
        (
            format!("{}:3", config.display()),
            env.gate().arg("--config").arg(&config),
        ),
    ] {
        let out = gate
            .deadline(PROMPT)
            .args(["--audit-log", "off", "-c", "touch F"])
            .run();
        assert_absent(&env.file("F"), &out);
        out.assert_gate_error();
        assert_eq!(
            out.stderr(),
            format!(
                "gate: the shell `{missing}` (from {origin}) does not exist; set --shell, \
                 GATE_SHELL or `shell` to a real shell; nothing was run\n"
            ),
            "{}",
            out.report()
        );
    }
}

#[test]
fn a_refusal_written_to_a_stderr_nobody_reads_still_exits_126() {
    let env = TestEnv::new();
    env.assert_side_effects_are_visible(User::Current);
    let out = env
        .gate()
        .deadline(PROMPT)
        .stderr_unread()
        .args(["--no-config", "--audit-log", "off", "--level", "deny"])
        .args(["-c", "touch F"])
        .run();
    assert_absent(&env.file("F"), &out);
    assert_eq!(
        out.signal(),
        None,
        "gate died of a signal\n{}",
        out.report()
    );
    out.assert_code(REFUSED);
}

#[test]
fn gates_own_error_written_to_a_stderr_nobody_reads_still_exits_125() {
    let env = TestEnv::new();
    let pipe = fifo(&env, "config.fifo");
    for gate in [
        env.gate().args(["--no-config", "--level", "yolo"]),
        env.gate().arg("--config").arg(&pipe),
        env.gate().env("GATE_LOG", "degub").arg("--no-config"),
    ] {
        let out = gate
            .deadline(PROMPT)
            .stderr_unread()
            .args(["--audit-log", "off", "-c", "touch F"])
            .run();
        assert_absent(&env.file("F"), &out);
        assert_eq!(
            out.signal(),
            None,
            "gate died of a signal\n{}",
            out.report()
        );
        out.assert_code(GATE_ERROR);
    }
}

/// The SigIgn, SigBlk, SigPnd and ShdPnd lines of /proc/self/status.
fn signal_lines(status: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(status)
        .lines()
        .filter(|l| {
            ["SigIgn:", "SigBlk:", "SigPnd:", "ShdPnd:"]
                .iter()
                .any(|p| l.starts_with(p))
        })
        .map(str::to_owned)
        .collect()
}

#[test]
fn after_a_warning_to_a_stderr_nobody_reads_the_command_runs_with_the_callers_signals() {
    // The warning (an unwritable audit log) meets a broken pipe. gate must neither die
    // of SIGPIPE nor hand the command a changed signal mask, disposition or a pending
    // SIGPIPE.
    let env = TestEnv::new();
    let regular = env.write("a-file", "");
    let direct = Command::new(require_program("cat"))
        .arg("/proc/self/status")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let expected = signal_lines(&direct.stdout);
    assert_eq!(expected.len(), 4, "no signal lines in /proc/self/status");
    let out = env
        .gate()
        .deadline(PROMPT)
        .stderr_unread()
        .args(["--no-config", "--level", "full", "--audit-log"])
        .arg(regular.join("audit.jsonl"))
        .args(["--", "cat", "/proc/self/status"])
        .run();
    assert_eq!(
        out.signal(),
        None,
        "gate died of a signal\n{}",
        out.report()
    );
    out.assert_code(0);
    assert_eq!(signal_lines(&out.stdout), expected, "{}", out.report());
}

#[test]
fn a_report_written_to_a_stdout_nobody_reads_exits_125_not_by_sigpipe() {
    // `gate --help | true`, `gate completions bash | head -c0`: the reader is gone before
    // gate writes.
    for args in [
        &["--help"][..],
        &["completions", "bash"],
        &["check", "-c", "true"],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let status = Command::new(env!("CARGO_BIN_EXE_gate"))
            .args(args)
            .env("XDG_RUNTIME_DIR", "/nonexistent")
            .stdin(Stdio::null())
            .stdout(writer)
            .stderr(Stdio::null())
            .status()
            .unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), None, "gate {args:?} died of a signal");
        assert_eq!(status.code(), Some(GATE_ERROR), "gate {args:?}: {status:?}");
    }
}
