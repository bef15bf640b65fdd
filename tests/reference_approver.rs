//! The reference approver, `examples/approver.py`, against the real gate: it approves
//! commands by prefix with gate's own matching rule, denies the rest with a message the
//! model sees, cannot be talked past with shell syntax, remembers in its own memory when asked, declines
//! questions, and serves many gates at once.

use crate::common;

use std::ffi::OsStr;
use std::fs;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use common::*;

/// The prefixes every approver here is started with.
const PREFIXES: [&str; 2] = ["touch approved", "echo hello"];

/// A python3 that `user` can run: the first on PATH or in the usual places that starts.
/// (A python3 under root's home, from pyenv for example, is out of reach of uid 65534.)
fn python3_for(user: User) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs = std::env::split_paths(&path)
        .chain(["/usr/local/bin", "/usr/bin", "/bin"].map(PathBuf::from));
    for dir in dirs {
        let candidate = dir.join("python3");
        let starts = candidate.is_file()
            && command_as(user, &candidate)
                .args(["-c", ""])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
        if starts {
            return candidate;
        }
    }
    panic!("these tests need a python3 that {user:?} can run; none found on PATH or in /usr/bin");
}

/// The reference approver, running as `user` on a socket in a private directory.
struct PyApprover {
    child: Child,
    socket: PathBuf,
    /// Every line it wrote to stderr so far.
    log: Arc<Mutex<Vec<String>>>,
    lines: Receiver<String>,
}

impl PyApprover {
    fn start(env: &TestEnv, user: User, extra: &[&str]) -> PyApprover {
        // A copy the user can read: the checkout need not be readable by uid 65534.
        let script = env.write(
            "approver.py",
            fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/approver.py"))
                .expect("examples/approver.py exists"),
        );
        let dir = env.root.join("approver");
        fs::create_dir(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
        let uid = uid_of(user);
        if uid != effective_uid() {
            std::os::unix::fs::chown(&dir, Some(uid), Some(uid)).unwrap();
        }
        let socket = dir.join("approver.sock");
        let mut command = command_as(user, python3_for(user));
        command.arg(&script).arg("--socket").arg(&socket);
        for prefix in PREFIXES {
            command.args(["--allow-prefix", prefix]);
        }
        command
            .args(extra)
            .current_dir(&env.root)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("python3 starts");
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, lines) = mpsc::channel();
        {
            let log = log.clone();
            thread::spawn(move || {
                for line in stderr.lines() {
                    let Ok(line) = line else { break };
                    log.lock().unwrap().push(line.clone());
                    let _ = tx.send(line);
                }
            });
        }
        let approver = PyApprover {
            child,
            socket,
            log,
            lines,
        };
        approver.wait_for_line(&format!(
            "approver: listening on {}",
            approver.socket.display()
        ));
        approver
    }

    /// Wait until the approver logs a line that starts with `start`.
    #[track_caller]
    fn wait_for_line(&self, start: &str) -> String {
        let end = Instant::now() + Duration::from_secs(20);
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.starts_with(start) => return line,
                Ok(_) => {}
                Err(_) => panic!(
                    "the approver did not log {start:?} within 20 s; its log: {:#?}",
                    self.log.lock().unwrap()
                ),
            }
        }
    }

    /// The log lines that start with `start`, once there are `want` of them (or the
    /// tests' deadline has passed): the approver's stderr is read by a thread, which
    /// may not have read the last line yet when gate has exited.
    fn logged(&self, start: &str, want: usize) -> usize {
        let end = std::time::Instant::now() + common::DEADLINE;
        loop {
            let count = self
                .log
                .lock()
                .unwrap()
                .iter()
                .filter(|l| l.starts_with(start))
                .count();
            if count >= want || std::time::Instant::now() >= end {
                return count;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}

impl Drop for PyApprover {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// gate as `user`, in a session of its own (no terminal), through the approver.
fn gate(env: &TestEnv, user: User, approver: &PyApprover) -> Gate {
    gate_logging_to(env, user, approver, OsStr::new("off"))
}

/// The same, with the audit log at `audit`.
fn gate_logging_to(env: &TestEnv, user: User, approver: &PyApprover, audit: &OsStr) -> Gate {
    env.gate()
        .user(user)
        .program(require_program("setsid"))
        .arg("--wait")
        .arg(gate_binary_for(user))
        .args(["--no-config", "--no-tty", "--audit-log"])
        .arg(audit)
        .arg("--socket")
        .arg(&approver.socket)
}

for_each_user! {
    fn a_command_with_an_allowed_prefix_is_approved(user) {
        let env = TestEnv::new();
        env.assert_side_effects_are_visible(user);
        let approver = PyApprover::start(&env, user, &[]);
        gate(&env, user, &approver).args(["-c", "touch approved"]).run().assert_code(0);
        assert!(env.file("approved").exists());
        // The prefix followed by a space and arguments; blanks around the command.
        gate(&env, user, &approver)
            .args(["-c", "  echo hello world\t"])
            .run()
            .assert_code(0)
            .assert_stdout("hello world\n");
        assert_eq!(approver.logged("approver: approved", 2), 2);
    }

    fn any_other_command_is_denied_with_a_message_for_the_model(user) {
        let env = TestEnv::new();
        env.assert_side_effects_are_visible(user);
        let approver = PyApprover::start(&env, user, &[]);
        for command in ["touch denied", "touch approvedx", "echo  hello", "/usr/bin/touch approved"] {
            let out = gate(&env, user, &approver).args(["-c", command]).run();
            out.assert_refused()
                .assert_stderr_contains("is not on this approver's list")
                .assert_stderr_contains("allows only `touch approved`, `echo hello`");
            assert!(!env.file("denied").exists() && !env.file("approved").exists(), "{}", out.report());
            assert!(!env.file("approvedx").exists(), "{}", out.report());
        }
    }
}

#[test]
fn shell_syntax_after_an_allowed_prefix_is_denied() {
    let env = TestEnv::new();
    let approver = PyApprover::start(&env, User::Current, &[]);
    for command in [
        "touch approved; touch pwned",
        "touch approved && touch pwned",
        "touch approved || touch pwned",
        "touch approved | touch pwned",
        "touch approved & touch pwned",
        "touch approved $(touch pwned)",
        "touch approved `touch pwned`",
        "touch approved > pwned",
        "touch approved < pwned",
        "touch approved\ntouch pwned",
        "touch approved\r\ntouch pwned",
        "touch approved {pwned,x}",
        "touch approved \\; touch pwned",
    ] {
        let out = gate(&env, User::Current, &approver)
            .args(["-c", command])
            .run();
        out.assert_refused()
            .assert_stderr_contains("contains shell syntax");
        assert!(
            !env.file("approved").exists() && !env.file("pwned").exists(),
            "{}",
            out.report()
        );
    }
}

/// gate keeps no remembered approvals for a host's approver: with `--remember` the
/// approver keeps them itself and answers the same command from its memory.
#[test]
fn with_remember_a_second_identical_command_is_answered_from_the_approvers_memory() {
    let env = TestEnv::new();
    let approver = PyApprover::start(&env, User::Current, &["--remember"]);
    let audit = env.root.join("audit.jsonl");
    let run = |command: &str| {
        gate_logging_to(&env, User::Current, &approver, audit.as_os_str())
            .env("GATE_SESSION", "reference")
            .args(["-c", command])
            .run()
    };
    run("echo hello").assert_code(0).assert_stdout("hello\n");
    run("echo hello").assert_code(0).assert_stdout("hello\n");
    assert_eq!(
        approver.logged("approver: approved", 1),
        1,
        "looked at twice"
    );
    assert_eq!(approver.logged("approver: remembered", 1), 1);
    let records = audit_records(&audit);
    let decided_by: Vec<&str> = records
        .iter()
        .map(|r| r["decided_by"].as_str().unwrap())
        .collect();
    assert_eq!(decided_by, ["socket", "remembered"]);
}

#[test]
fn a_question_is_declined() {
    let env = TestEnv::new();
    let approver = PyApprover::start(&env, User::Current, &[]);
    let out = env
        .gate()
        .program(require_program("setsid"))
        .arg("--wait")
        .arg(GATE)
        .args(["ask", "Which branch should I use?", "--option", "main"])
        .args(["--option", "dev", "--no-config", "--no-tty", "--socket"])
        .arg(&approver.socket)
        .run();
    assert!(
        !out.stderr().contains("not built yet"),
        "`gate ask` is not built yet, so the reference approver's answer to a question \
         cannot be checked\n{}",
        out.report()
    );
    out.assert_code(1)
        .assert_stderr_contains("the question was declined")
        .assert_stderr_contains("this approver answers no questions");
    assert_eq!(out.stdout(), "");
    approver.wait_for_line("approver: declined the question \"Which branch should I use?\"");
}

#[test]
fn many_gates_at_once_are_each_answered() {
    const N: usize = 40;
    let env = TestEnv::new();
    let approver = PyApprover::start(&env, User::Current, &[]);
    let gates: Vec<_> = (0..N)
        .map(|i| {
            let command = if i % 2 == 0 {
                format!("echo hello {i}")
            } else {
                format!("echo goodbye {i}")
            };
            gate(&env, User::Current, &approver)
                .args(["-c", &command])
                .deadline(Duration::from_secs(60))
                .spawn()
        })
        .collect();
    for (i, gate) in gates.into_iter().enumerate() {
        let out = gate.wait();
        if i % 2 == 0 {
            out.assert_code(0).assert_stdout(&format!("hello {i}\n"));
        } else {
            out.assert_refused()
                .assert_stderr_contains(&format!("`echo goodbye {i}` is not on"));
        }
    }
}

#[test]
fn a_prefix_with_shell_syntax_or_a_blank_one_is_refused_at_start() {
    let env = TestEnv::new();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/approver.py");
    let dir = env.root.join("approver");
    for prefix in ["make test; rm -rf ~", "  ", "make $(id)"] {
        let out = Command::new(python3_for(User::Current))
            .arg(&script)
            .arg("--socket")
            .arg(dir.join("a.sock"))
            .args(["--allow-prefix", prefix])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("--allow-prefix"),
            "{out:?}"
        );
        assert!(!dir.join("a.sock").exists());
    }
}

#[test]
fn the_approver_will_not_listen_in_a_directory_open_to_others() {
    let env = TestEnv::new();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/approver.py");
    let open = env.root.join("open");
    fs::create_dir(&open).unwrap();
    fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
    let out = Command::new(python3_for(User::Current))
        .arg(&script)
        .arg("--socket")
        .arg(open.join("a.sock"))
        .args(["--allow-prefix", "make test"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("is open to other users"),
        "{out:?}"
    );
    assert!(!open.join("a.sock").exists());
}
