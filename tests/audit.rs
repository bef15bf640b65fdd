//! The audit log: one JSON line per decision, allow or deny, with the fields a reviewer
//! needs; off when asked; never in the way of a command unless it is required.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use common::*;

const FIELDS: &[&str] = &[
    "time",
    "call_id",
    "session_id",
    "pid",
    "uid",
    "host",
    "cwd",
    "level",
    "kind",
    "command",
    "decision",
    "decided_by",
    "rule",
    "rule_origin",
    "message",
    "sandbox",
];

/// The only record in the log at `path`, after checking every field is there.
#[track_caller]
fn only_record(path: &Path) -> Value {
    let records = audit_records(path);
    assert_eq!(records.len(), 1, "expected one record: {records:#?}");
    let record = records.into_iter().next().unwrap();
    for field in FIELDS {
        assert!(
            record.get(field).is_some(),
            "the record has no `{field}`: {record}"
        );
    }
    record
}

/// `2026-11-29T21:29:22.123Z`
fn is_rfc3339_utc_millis(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 24
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b'T',
            13 | 16 => *c == b':',
            19 => *c == b'.',
            23 => *c == b'Z',
            _ => c.is_ascii_digit(),
        })
}

#[test]
fn an_allowed_command_appends_one_complete_record() {
    let env = TestEnv::new();
    let out = env
        .gate()
        .env("GATE_SESSION", "session-1")
        .args([
            "--no-config",
            "--allow",
            "echo hello",
            "-c",
            "echo hello there",
        ])
        .run();
    out.assert_code(0)
        .assert_stdout("hello there\n")
        .assert_stderr_empty();
    let r = only_record(&env.default_audit_log());
    assert!(is_rfc3339_utc_millis(r["time"].as_str().unwrap()), "{r}");
    let call_id = r["call_id"].as_str().unwrap();
    assert!(!call_id.is_empty(), "{r}");
    assert_eq!(r["session_id"], "session-1");
    assert_eq!(r["pid"], out.pid);
    assert_eq!(r["uid"], effective_uid());
    let host = nix::unistd::gethostname().unwrap();
    assert_eq!(r["host"], host.to_str().unwrap());
    assert_eq!(r["cwd"], env.work.display().to_string());
    assert_eq!(r["level"], "ask");
    assert_eq!(r["kind"], "command");
    assert_eq!(r["command"], "echo hello there");
    assert_eq!(r["decision"], "allow");
    assert_eq!(r["decided_by"], "rule");
    assert_eq!(r["rule"], "echo hello");
    assert_eq!(r["rule_origin"], "--allow");
}

#[test]
fn a_command_refused_by_a_deny_rule_appends_one_record_naming_the_rule() {
    let env = TestEnv::new();
    let out = env
        .gate()
        .args(["--no-config", "--level", "full", "--deny", "touch"])
        .args(["-c", "true; touch F"])
        .run();
    assert_absent(&env.file("F"), &out);
    out.assert_refused();
    let r = only_record(&env.default_audit_log());
    assert_eq!(r["decision"], "deny");
    assert_eq!(r["decided_by"], "deny-rule");
    assert_eq!(r["rule"], "touch");
    assert_eq!(r["rule_origin"], "--deny");
    assert_eq!(r["level"], "full");
    assert_eq!(r["command"], "true; touch F");
    assert_eq!(r["pid"], out.pid);
}

/// The one record a run with these arguments leaves.
fn record_of(args: &[&str]) -> (Value, Outcome) {
    let env = TestEnv::new();
    let out = env.gate().arg("--no-config").args(args).run();
    (only_record(&env.default_audit_log()), out)
}

#[test]
fn each_decision_records_what_decided_it() {
    let cases: &[(&[&str], &str, &str, &str)] = &[
        (&["--level", "full", "-c", "true"], "allow", "level", "full"),
        (&["--level", "deny", "-c", "true"], "deny", "level", "deny"),
        (&["--allow", "true", "-c", "true"], "allow", "rule", "ask"),
        (&["-c", "true"], "deny", "no-approver", "ask"),
        (
            &["--level", "full", "--deny", "true", "-c", "true"],
            "deny",
            "deny-rule",
            "full",
        ),
        (&["--level", "safe", "-c", "true"], "allow", "level", "safe"),
    ];
    for (args, decision, decided_by, level) in cases {
        let (r, out) = record_of(args);
        assert_eq!(
            (
                r["decision"].as_str(),
                r["decided_by"].as_str(),
                r["level"].as_str()
            ),
            (Some(*decision), Some(*decided_by), Some(*level)),
            "for {args:?}: {r}\n{}",
            out.report()
        );
    }
}

#[test]
fn each_kind_of_request_is_recorded_as_such() {
    let (r, _) = record_of(&["--level", "full", "--", "echo", "a b"]);
    assert_eq!(
        (r["kind"].as_str(), r["command"].as_str()),
        (Some("program"), Some("echo 'a b'"))
    );
    let (r, _) = record_of(&["--level", "deny"]);
    assert_eq!(
        (r["kind"].as_str(), r["command"].as_str()),
        (Some("session"), None)
    );
    let (r, _) = record_of(&["--level", "deny", "/no/such/script.sh", "x"]);
    assert_eq!(
        (r["kind"].as_str(), r["command"].as_str()),
        (Some("script"), Some("/no/such/script.sh x"))
    );
}

#[test]
fn audit_log_off_writes_nothing() {
    let env = TestEnv::new();
    for level in ["full", "deny"] {
        env.gate()
            .args([
                "--no-config",
                "--audit-log",
                "off",
                "--level",
                level,
                "-c",
                "true",
            ])
            .run();
    }
    env.gate()
        .env("GATE_AUDIT_LOG", "off")
        .args(["--no-config", "--level", "full", "-c", "true"])
        .run()
        .assert_code(0);
    let left: Vec<_> = std::fs::read_dir(&env.state).unwrap().collect();
    assert!(left.is_empty(), "the state directory has {left:?}");
    let in_home: Vec<_> = std::fs::read_dir(&env.home).unwrap().collect();
    assert!(in_home.is_empty(), "the home directory has {in_home:?}");
    // Control: the same run without `off` does write where this test looked.
    env.gate()
        .args(["--no-config", "--level", "full", "-c", "true"])
        .run()
        .assert_code(0);
    only_record(&env.default_audit_log());
}

#[test]
fn the_audit_log_option_and_variable_choose_the_file() {
    let env = TestEnv::new();
    let logs = env.root.join("logs");
    std::fs::create_dir(&logs).unwrap();
    let by_option = logs.join("by-option.jsonl");
    let by_variable = logs.join("by-variable.jsonl");
    env.gate()
        .args(["--no-config", "--level", "full", "--audit-log"])
        .arg(&by_option)
        .args(["-c", "true"])
        .run()
        .assert_code(0);
    env.gate()
        .env("GATE_AUDIT_LOG", &by_variable)
        .args(["--no-config", "--level", "full", "-c", "true"])
        .run()
        .assert_code(0);
    only_record(&by_option);
    only_record(&by_variable);
    assert!(!env.default_audit_log().exists());
}

#[test]
fn the_default_log_falls_back_to_home_without_xdg_state_home() {
    let env = TestEnv::new();
    env.gate()
        .env_remove("XDG_STATE_HOME")
        .args(["--no-config", "--level", "full", "-c", "true"])
        .run()
        .assert_code(0);
    only_record(&env.home.join(".local/state/gate/audit.jsonl"));
}

#[test]
fn the_log_file_and_its_directory_are_private() {
    let env = TestEnv::new();
    env.gate()
        .args(["--no-config", "--level", "full", "-c", "true"])
        .run()
        .assert_code(0);
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let log = env.default_audit_log();
    assert_eq!(mode(&log), 0o600);
    assert_eq!(mode(log.parent().unwrap()), 0o700);
}

#[test]
fn records_are_appended_not_overwritten() {
    let env = TestEnv::new();
    for text in ["echo one", "echo two", "echo three"] {
        env.gate()
            .args(["--no-config", "--level", "full", "-c", text])
            .run()
            .assert_code(0);
    }
    let commands: Vec<_> = audit_records(&env.default_audit_log())
        .iter()
        .map(|r| r["command"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(commands, ["echo one", "echo two", "echo three"]);
}

#[test]
fn gate_session_shows_up_as_the_session_id() {
    let env = TestEnv::new();
    env.gate()
        .env("GATE_SESSION", "agent-7.run:2@x+y")
        .args(["--no-config", "--level", "full", "-c", "true"])
        .run()
        .assert_code(0);
    env.gate()
        .env("GATE_SESSION", "from-variable")
        .args([
            "--no-config",
            "--level",
            "deny",
            "--session",
            "from-option",
            "-c",
            "true",
        ])
        .run()
        .assert_refused();
    let ids: Vec<_> = audit_records(&env.default_audit_log())
        .iter()
        .map(|r| r["session_id"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(ids, ["agent-7.run:2@x+y", "from-option"]);
}

#[test]
fn without_a_session_the_session_id_names_the_parent_process() {
    let env = TestEnv::new();
    for _ in 0..2 {
        env.gate()
            .args(["--no-config", "--level", "full", "-c", "true"])
            .run()
            .assert_code(0);
    }
    let records = audit_records(&env.default_audit_log());
    let prefix = format!("ppid-{}-", std::process::id());
    let ids: Vec<&str> = records
        .iter()
        .map(|r| r["session_id"].as_str().unwrap_or_default())
        .collect();
    assert!(
        ids[0].starts_with(&prefix),
        "{ids:?} should start with {prefix}"
    );
    assert_eq!(ids[0], ids[1], "one parent, one session");
    assert_ne!(records[0]["call_id"], records[1]["call_id"]);
}

#[test]
fn the_pid_in_an_allow_record_is_the_pid_of_the_command() {
    let env = TestEnv::new();
    let out = env
        .gate()
        .args(["--no-config", "--level", "full", "-c", "echo $$"])
        .run();
    out.assert_code(0);
    let r = only_record(&env.default_audit_log());
    assert_eq!(
        r["pid"].to_string(),
        out.stdout().trim(),
        "{r}\n{}",
        out.report()
    );
}

#[test]
fn an_unwritable_audit_log_warns_but_the_command_runs() {
    let env = TestEnv::new();
    let regular = env.write("a-file", "");
    let out = env
        .gate()
        .args(["--no-config", "--level", "full", "--audit-log"])
        .arg(regular.join("audit.jsonl"))
        .args(["-c", "echo ran"])
        .run();
    out.assert_code(0)
        .assert_stdout("ran\n")
        .assert_stderr_contains("gate: warning: cannot write the audit log");
}

#[test]
fn a_refusal_with_an_unwritable_audit_log_is_still_a_refusal() {
    let env = TestEnv::new();
    let regular = env.write("a-file", "");
    let out = env
        .gate()
        .args(["--no-config", "--level", "deny", "--audit-log"])
        .arg(regular.join("audit.jsonl"))
        .args(["-c", "touch F"])
        .run();
    assert_absent(&env.file("F"), &out);
    out.assert_code(REFUSED)
        .assert_stderr_contains("gate: refused")
        .assert_stderr_contains("cannot write the audit log");
}

for_each_user! {
    fn a_required_audit_log_that_cannot_be_written_runs_nothing(user) {
        let env = TestEnv::new();
        env.assert_side_effects_are_visible(user);
        let regular = env.write("a-file", "");
        let config = env.write(
            "required.toml",
            format!(
                "level = \"full\"\n[audit]\nrequired = true\nlog = \"{}\"\n",
                regular.join("audit.jsonl").display()
            ),
        );
        let out = env
            .gate()
            .user(user)
            .arg("--config")
            .arg(&config)
            .args(["-c", "touch F"])
            .run();
        assert_absent(&env.file("F"), &out);
        out.assert_gate_error()
            .assert_stderr_contains("audit.required")
            .assert_stderr_contains("nothing was run");
    }

    fn the_uid_in_a_record_is_the_callers(user) {
        let env = TestEnv::new();
        let out = env
            .gate()
            .user(user)
            .args(["--no-config", "--level", "full", "-c", "true"])
            .run();
        out.assert_code(0);
        let r = only_record(&env.default_audit_log());
        assert_eq!(r["uid"], uid_of(user), "{r}");
    }
}

#[test]
fn a_required_audit_log_that_can_be_written_lets_the_command_run() {
    let env = TestEnv::new();
    let log = env.root.join("required.jsonl");
    let config = env.write(
        "required.toml",
        format!(
            "level = \"full\"\n[audit]\nrequired = true\nlog = \"{}\"\n",
            log.display()
        ),
    );
    env.gate()
        .arg("--config")
        .arg(&config)
        .args(["-c", "echo ran"])
        .run()
        .assert_code(0)
        .assert_stdout("ran\n");
    only_record(&log);
}

#[test]
fn concurrent_gates_each_append_one_well_formed_line() {
    let env = TestEnv::new();
    let log = env.root.join("concurrent.jsonl");
    let running: Vec<Running> = (0..20)
        .map(|i| {
            let level = if i % 2 == 0 { "full" } else { "deny" };
            env.gate()
                .args(["--no-config", "--level", level, "--audit-log"])
                .arg(&log)
                .args(["-c", &format!("echo call-{i}")])
                .spawn()
        })
        .collect();
    for run in running {
        run.wait();
    }
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.ends_with('\n'), "the log ends mid-line");
    let records = audit_records(&log);
    assert_eq!(records.len(), 20, "{text}");
    let mut commands: Vec<String> = records
        .iter()
        .map(|r| {
            for field in FIELDS {
                assert!(r.get(field).is_some(), "no `{field}` in {r}");
            }
            r["command"].as_str().unwrap().to_owned()
        })
        .collect();
    commands.sort();
    let mut expected: Vec<String> = (0..20).map(|i| format!("echo call-{i}")).collect();
    expected.sort();
    assert_eq!(commands, expected);
    let mut call_ids: Vec<_> = records.iter().map(|r| r["call_id"].to_string()).collect();
    call_ids.sort();
    call_ids.dedup();
    assert_eq!(call_ids.len(), 20, "call ids must be unique");
}

#[test]
fn a_record_is_one_line_with_its_keys_in_alphabetical_order() {
    // docs/audit.md: every record has every field, keys in alphabetical order.
    let env = TestEnv::new();
    env.gate()
        .args(["--no-config", "--level", "full", "-c", "true"])
        .run()
        .assert_code(0);
    let text = std::fs::read_to_string(env.default_audit_log()).unwrap();
    assert_eq!(text.matches('\n').count(), 1, "{text}");
    let mut sorted: Vec<&str> = FIELDS.to_vec();
    sorted.sort_unstable();
    let positions: Vec<usize> = sorted
        .iter()
        .map(|key| {
            text.find(&format!("\"{key}\":"))
                .unwrap_or_else(|| panic!("no `{key}` in {text}"))
        })
        .collect();
    assert!(
        positions.windows(2).all(|w| w[0] < w[1]),
        "keys are not in alphabetical order: {text}"
    );
    let r = only_record(&env.default_audit_log());
    assert_eq!(r["sandbox"], Value::Null);
    assert!(
        r["message"].as_str().is_some_and(|m| m.contains("full")),
        "{r}"
    );
}

#[test]
fn usage_and_configuration_errors_write_no_record() {
    let env = TestEnv::new();
    let bad = env.write("bad.toml", "levle = 1\n");
    env.gate()
        .arg("--config")
        .arg(&bad)
        .args(["-c", "true"])
        .run()
        .assert_gate_error();
    env.gate()
        .args(["--no-config", "--levle", "full", "-c", "true"])
        .run()
        .assert_gate_error();
    env.gate()
        .args(["--no-config", "--timeout", "0", "-c", "true"])
        .run()
        .assert_gate_error();
    let left: Vec<_> = std::fs::read_dir(&env.state).unwrap().collect();
    assert!(left.is_empty(), "an error wrote {left:?}");
}

#[test]
fn without_home_or_xdg_state_home_the_command_still_runs_with_a_warning() {
    let env = TestEnv::new();
    env.gate()
        .env_remove("HOME")
        .env_remove("XDG_STATE_HOME")
        .args(["--no-config", "--level", "full", "-c", "echo ran"])
        .run()
        .assert_code(0)
        .assert_stdout("ran\n")
        .assert_stderr_contains("gate: warning: cannot write the audit log");
}

/// Landlock does not mediate chmod, so a command at `safe` can take the write bit off the
/// (read-only to it) audit log, and every later run would go unrecorded. The next gate,
/// as the log's owner, puts the mode back, says so, and records. Run as the unprivileged
/// user: root writes the file whatever its mode.
#[test]
fn a_log_whose_write_bit_a_command_took_away_is_restored_and_recorded_next_time() {
    let env = TestEnv::new_in("/var/tmp");
    let user = User::Unprivileged;
    let log = env.default_audit_log();
    // The attack, at safe: it works (the control that the sandbox does not stop it).
    let out = env
        .gate()
        .user(user)
        .args([
            "--no-config",
            "--level",
            "safe",
            "-c",
            "chmod 000 \"$1\" && stat -c %a \"$1\"",
        ])
        .arg("sh")
        .arg(&log)
        .run();
    out.assert_code(0).assert_stdout("0\n");
    let out = env
        .gate()
        .user(user)
        .args(["--no-config", "--level", "full", "-c", "echo next"])
        .run();
    out.assert_code(0)
        .assert_stdout("next\n")
        .assert_stderr_contains("had mode 0000")
        .assert_stderr_contains("set it back to 0600");
    let mode = std::fs::metadata(&log).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o600);
    let last = audit_records(&log).pop().unwrap();
    assert_eq!(last["command"], "echo next", "{last}");
}

// ---------------------------------------------------------------------------------------
// Something other than a regular file at the log's path. Before the fix gate opened the
// path with a plain open(2): a FIFO there made every later gate of the user wait in
// open() for a reader that never came (as root, checked once by hand: `timeout 3` ended
// it with 124; as uid 65534 the same with a FIFO it owns), a link was followed (the
// record went to the file it points to, with no warning), and /dev/null swallowed every
// record without a word. Now each is a warning, or status 125 when the log is required,
// and every run ends at once.

/// What stands at the log's path instead of a regular file.
#[derive(Debug, Clone, Copy)]
enum NotALog {
    Fifo,
    LinkToAFile,
    Directory,
    /// `/dev/null`, named as the log.
    CharDevice,
    /// gate's state directory is a link to another directory.
    LinkedDirectory,
}

const NOT_A_LOG: [NotALog; 5] = [
    NotALog::Fifo,
    NotALog::LinkToAFile,
    NotALog::Directory,
    NotALog::CharDevice,
    NotALog::LinkedDirectory,
];

/// Long enough for a busy machine, far shorter than a hang.
const PROMPTLY: std::time::Duration = std::time::Duration::from_secs(5);

/// Put `what` at the log's path for `user`. Returns the `--audit-log` option's value (the
/// default log's path when `None`), what the warning says, and a file that must stay
/// untouched (where a followed link would have put the record).
fn plant(env: &TestEnv, user: User, what: NotALog) -> (Option<PathBuf>, &'static str, PathBuf) {
    let uid = uid_of(user);
    let own = |path: &Path| std::os::unix::fs::chown(path, Some(uid), Some(uid)).unwrap();
    let state_dir = env.state.join("gate");
    let elsewhere = env.root.join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    own(&elsewhere);
    let untouched = elsewhere.join("audit.jsonl");
    if !matches!(what, NotALog::LinkedDirectory) {
        std::fs::create_dir(&state_dir).unwrap();
        own(&state_dir);
    }
    let log = env.default_audit_log();
    let said = match what {
        NotALog::Fifo => {
            let status = std::process::Command::new(require_program("mkfifo"))
                .arg(&log)
                .status()
                .unwrap();
            assert!(status.success(), "mkfifo failed");
            own(&log);
            "it is a FIFO (named pipe)"
        }
        NotALog::LinkToAFile => {
            std::fs::write(&untouched, "").unwrap();
            own(&untouched);
            std::os::unix::fs::symlink(&untouched, &log).unwrap();
            "it is a symbolic link"
        }
        NotALog::Directory => {
            std::fs::create_dir(&log).unwrap();
            own(&log);
            "it is a directory"
        }
        NotALog::CharDevice => {
            return (
                Some(PathBuf::from("/dev/null")),
                "it is a character device",
                untouched,
            );
        }
        NotALog::LinkedDirectory => {
            std::os::unix::fs::symlink(&elsewhere, &state_dir).unwrap();
            "is a symbolic link, and gate follows none at the log's own directory"
        }
    };
    (None, said, untouched)
}

fn gate_with_log(env: &TestEnv, user: User, log: &Option<PathBuf>) -> Gate {
    let gate = env.gate().user(user).deadline(PROMPTLY);
    match log {
        Some(path) => gate.arg("--audit-log").arg(path),
        None => gate,
    }
}

for_each_user! {
    fn a_log_path_that_is_not_a_regular_file_is_not_written_and_the_command_runs(user) {
        for what in NOT_A_LOG {
            let env = TestEnv::new();
            let (log, said, untouched) = plant(&env, user, what);
            let out = gate_with_log(&env, user, &log)
                .args(["--no-config", "--level", "full", "-c", "echo ran"])
                .run();
            out.assert_code(0)
                .assert_stdout("ran\n")
                .assert_stderr_contains("gate: warning: cannot write the audit log")
                .assert_stderr_contains(said);
            assert!(
                std::fs::read(&untouched).unwrap_or_default().is_empty(),
                "{what:?}: a record went through the link"
            );
            // A refusal stays one, as promptly.
            let out = gate_with_log(&env, user, &log)
                .args(["--no-config", "--level", "deny", "-c", "touch F"])
                .run();
            assert_absent(&env.file("F"), &out);
            out.assert_code(REFUSED)
                .assert_stderr_contains("gate: refused")
                .assert_stderr_contains(said);
        }
    }

    fn a_required_log_whose_path_is_not_a_regular_file_runs_nothing(user) {
        for what in NOT_A_LOG {
            let env = TestEnv::new();
            let (log, said, untouched) = plant(&env, user, what);
            let config = env.write("required.toml", "level = \"full\"\n[audit]\nrequired = true\n");
            let out = gate_with_log(&env, user, &log)
                .arg("--config")
                .arg(&config)
                .args(["-c", "touch F"])
                .run();
            assert_absent(&env.file("F"), &out);
            out.assert_gate_error()
                .assert_stderr_contains(said)
                .assert_stderr_contains("the configuration requires the audit log");
            assert!(
                std::fs::read(&untouched).unwrap_or_default().is_empty(),
                "{what:?}: a record went through the link"
            );
        }
    }
}

/// The control for the tests above: a regular file at the same place, made the same way,
/// is written.
#[test]
fn a_regular_log_file_made_by_its_user_is_written() {
    for user in [User::Current, User::Unprivileged] {
        let env = TestEnv::new();
        let state_dir = env.state.join("gate");
        std::fs::create_dir(&state_dir).unwrap();
        std::os::unix::fs::chown(&state_dir, Some(uid_of(user)), Some(uid_of(user))).unwrap();
        gate_with_log(&env, user, &None)
            .args(["--no-config", "--level", "full", "-c", "echo ran"])
            .run()
            .assert_code(0)
            .assert_stderr_empty();
        assert_eq!(only_record(&env.default_audit_log())["command"], "echo ran");
    }
}

for_each_user! {
    /// With `XDG_STATE_HOME` in /tmp, gate's state directory stays writable at `safe`
    /// (docs/sandbox.md: protection stops at /tmp). Before the fix a command there could
    /// put a link to ~/.bashrc in place of the log, and the next gate, outside any
    /// sandbox, appended its record to ~/.bashrc: JSON whose `command` the model wrote,
    /// and in which a `$(...)` runs when a shell reads the file (checked once by hand).
    fn a_command_at_safe_cannot_send_the_next_records_through_a_link(user) {
        let env = TestEnv::new_in("/var/tmp");
        let tmp = tempfile::Builder::new()
            .prefix("gate-test-state-")
            .tempdir_in("/tmp")
            .unwrap();
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let bashrc = env.home.join(".bashrc");
        std::fs::write(&bashrc, "# rc\n").unwrap();
        let uid = uid_of(user);
        std::os::unix::fs::chown(&bashrc, Some(uid), Some(uid)).unwrap();
        let gate = || env.gate().user(user).env("XDG_STATE_HOME", tmp.path());
        // The attack, at safe: the sandbox lets it (the control: the link is in place).
        gate()
            .args(["--no-config", "--level", "safe", "-c"])
            .arg("rm \"$XDG_STATE_HOME/gate/audit.jsonl\" && ln -s \"$HOME/.bashrc\" \"$XDG_STATE_HOME/gate/audit.jsonl\"")
            .run()
            .assert_code(0);
        let log = tmp.path().join("gate/audit.jsonl");
        assert!(std::fs::symlink_metadata(&log).unwrap().file_type().is_symlink());
        // The next gate runs its command, says why it records nothing, and leaves
        // ~/.bashrc alone.
        gate()
            .args(["--no-config", "--level", "full", "-c", "true \"$(echo x)\""])
            .run()
            .assert_code(0)
            .assert_stderr_contains("it is a symbolic link");
        assert_eq!(std::fs::read_to_string(&bashrc).unwrap(), "# rc\n");
    }
}

// ---------------------------------------------------------------------------------------
// Hashes. A command's text is cut at 2 KB in the record, and a script run by path was
// recorded by its name only; before these fields the build wrote neither hash, so these
// tests fail on it at the first look-up of the field.

/// SHA-256 of `bytes` by `sha256sum`: an implementation other than gate's.
fn sha256sum(bytes: &[u8]) -> String {
    let mut child = std::process::Command::new(require_program("sha256sum"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "sha256sum failed");
    String::from_utf8(out.stdout).unwrap()[..64].to_owned()
}

#[test]
fn a_long_command_is_cut_in_the_record_but_its_sha256_covers_the_whole_text() {
    let env = TestEnv::new();
    let long = format!(": {}", "0123456789abcdef".repeat(320));
    assert!(long.len() > 5000);
    for command in [long.as_str(), "echo short"] {
        let log = env.root.join("hash.jsonl");
        let _ = std::fs::remove_file(&log);
        env.gate()
            .args(["--no-config", "--level", "full", "--audit-log"])
            .arg(&log)
            .args(["-c", command])
            .run()
            .assert_code(0);
        let r = only_record(&log);
        assert_eq!(r["command_sha256"], sha256sum(command.as_bytes()), "{r}");
        if command.len() > 2048 {
            assert_eq!(r["command_bytes"], command.len(), "{r}");
            assert!(r["command"].as_str().unwrap().len() < 2100, "{r}");
        }
        assert!(r.get("script_sha256").is_none(), "{r}");
    }
}

#[test]
fn a_script_run_by_path_is_recorded_with_the_sha256_of_its_content_when_judged() {
    let env = TestEnv::new();
    // The script changes itself when it runs: the record keeps what gate judged.
    let content = "echo ran\necho '# changed' >> \"$0\"\n";
    let log = env.root.join("script.jsonl");
    let run = |gate: Gate| {
        std::fs::write(env.file("job.sh"), content).unwrap();
        let _ = std::fs::remove_file(&log);
        gate.run().assert_code(0).assert_stdout("ran\n");
        assert_ne!(
            std::fs::read_to_string(env.file("job.sh")).unwrap(),
            content
        );
        only_record(&log)
    };
    // `gate job.sh`, and a `bash` shim given the script.
    let direct = run(env
        .gate()
        .args(["--no-config", "--level", "full", "--audit-log"])
        .arg(&log)
        .arg("job.sh"));
    let shims = shim_dir(&env, &["bash"]);
    let real_path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
    let mut path = vec![shims.clone()];
    path.extend(std::env::split_paths(&real_path));
    let shim = run(env
        .gate()
        .program(shims.join("bash"))
        .arg0("bash")
        .env("PATH", std::env::join_paths(path).unwrap())
        .env("GATE_CONFIG", env.write("empty.toml", ""))
        .env("GATE_LEVEL", "full")
        .env("GATE_AUDIT_LOG", &log)
        .arg("job.sh"));
    for r in [direct, shim] {
        assert_eq!(r["kind"], "script", "{r}");
        assert_eq!(r["script_sha256"], sha256sum(content.as_bytes()), "{r}");
        assert_eq!(r["command_sha256"], sha256sum(b"job.sh"), "{r}");
    }
    // A script that is not there has no content to hash.
    let _ = std::fs::remove_file(&log);
    env.gate()
        .args(["--no-config", "--level", "full", "--audit-log"])
        .arg(&log)
        .arg("missing.sh")
        .run();
    let r = only_record(&log);
    assert!(r["script_sha256"].is_null(), "{r}");
}
