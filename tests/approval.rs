//! Approvals over a socket, end to end with the real binary. gate at level `ask` sends a
//! command that no rule allows to an approver this test controls, and runs it only on an
//! explicit approve. Every fault — a protocol error, an approver that is silent, closes
//! or cannot be trusted, a timeout, a signal — ends the same way: nothing ran, exit 126,
//! one stderr line that starts `gate: ` and names the cause, and an audit record that
//! says who decided, under the call id the approver was sent.
//!
//! No gate started here can reach a terminal: each runs in a session of its own
//! (`setsid`), so `/dev/tty` cannot be opened, and with `--no-tty` as well. Each test has
//! its own `XDG_RUNTIME_DIR` (where the broker's socket would be), audit log and approver.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use serde_json::{Value, json};

use common::*;

/// The protocol's longest line, newline included.
const MAX_LINE: usize = 64 * 1024;

/// The session every gate here runs in unless a test says otherwise.
const SESSION: &str = "approval-test-session";

/// How long a test waits for something an approver or a gate should do at once.
const PATIENCE: Duration = Duration::from_secs(20);

// ---------------------------------------------------------------------------------------
// The world one test runs in.

/// The isolated tree, a private runtime directory and an audit log, for gates running as
/// one user.
struct World {
    env: TestEnv,
    /// XDG_RUNTIME_DIR: 0700, owned by the user gate runs as.
    runtime: PathBuf,
    /// The audit log every gate of this world appends to.
    audit: PathBuf,
    user: User,
}

impl World {
    fn new() -> World {
        World::as_user(User::Current)
    }

    fn as_user(user: User) -> World {
        let env = TestEnv::new();
        // TestEnv makes it open to all; here it is private, as a real one is.
        let runtime = env.runtime.clone();
        make_private_dir(&runtime, uid_of(user));
        let logs = env.root.join("logs");
        fs::create_dir(&logs).unwrap();
        fs::set_permissions(&logs, fs::Permissions::from_mode(0o777)).unwrap();
        World {
            audit: logs.join("audit.jsonl"),
            env,
            runtime,
            user,
        }
    }

    /// A gate at the default level (`ask`), with no configuration file, no terminal, the
    /// world's audit log, runtime directory and session, working in the work directory.
    fn gate(&self) -> Run {
        let mut env = BTreeMap::new();
        let path = std::env::var_os("PATH")
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| OsString::from("/usr/local/bin:/usr/bin:/bin"));
        let vars: [(&str, &OsStr); 7] = [
            ("PATH", &path),
            ("HOME", self.env.home.as_os_str()),
            ("XDG_STATE_HOME", self.env.state.as_os_str()),
            ("XDG_CONFIG_HOME", self.env.config.as_os_str()),
            ("XDG_RUNTIME_DIR", self.runtime.as_os_str()),
            ("LC_ALL", OsStr::new("C")),
            ("GATE_SESSION", OsStr::new(SESSION)),
        ];
        for (k, v) in vars {
            env.insert(OsString::from(k), v.to_owned());
        }
        Run {
            args: ["--no-config", "--no-tty", "--audit-log"]
                .map(OsString::from)
                .into_iter()
                .chain([self.audit.clone().into_os_string()])
                .collect(),
            env,
            cwd: self.env.work.clone(),
            user: self.user,
            deadline: DEADLINE,
            under_a_shell: false,
        }
    }

    fn file(&self, name: &str) -> PathBuf {
        self.env.file(name)
    }

    /// The audit records with this call id.
    #[track_caller]
    fn records_of(&self, call_id: &str) -> Vec<Value> {
        audit_records(&self.audit)
            .into_iter()
            .filter(|r| r["call_id"] == call_id)
            .collect()
    }

    /// The one audit record of this call, which must say `decision` by `decided_by`.
    #[track_caller]
    fn assert_recorded(&self, call_id: &str, decision: &str, decided_by: &str) -> Value {
        let records = self.records_of(call_id);
        assert_eq!(
            records.len(),
            1,
            "expected one audit record for call {call_id}, found {records:#?}"
        );
        let record = records.into_iter().next().unwrap();
        assert_eq!(record["decision"], decision, "{record}");
        assert_eq!(record["decided_by"], decided_by, "{record}");
        record
    }

    /// The last audit record (for gates whose call id no approver saw).
    #[track_caller]
    fn last_record(&self) -> Value {
        audit_records(&self.audit)
            .pop()
            .expect("the audit log is empty")
    }
}

/// Create `dir` (and its parents) with mode 0700, owned by `uid`.
fn make_private_dir(dir: &Path, uid: u32) {
    fs::create_dir_all(dir).unwrap();
    fs::set_permissions(dir, fs::Permissions::from_mode(0o700)).unwrap();
    give(dir, uid);
}

/// Hand a file to `uid` (and the group of the same number) when that is another user.
fn give(path: &Path, uid: u32) {
    if uid != effective_uid() {
        std::os::unix::fs::chown(path, Some(uid), Some(uid))
            .unwrap_or_else(|e| panic!("cannot chown {} to {uid}: {e}", path.display()));
    }
}

fn set_mode(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

// ---------------------------------------------------------------------------------------
// Running gate without a terminal.

/// A gate invocation being built.
#[derive(Clone)]
struct Run {
    args: Vec<OsString>,
    env: BTreeMap<OsString, OsString>,
    cwd: PathBuf,
    user: User,
    deadline: Duration,
    /// Start gate from `sh` instead of from the test, so that its parent (and with it
    /// the derived session) differs.
    under_a_shell: bool,
}

impl Run {
    fn arg(mut self, arg: impl AsRef<OsStr>) -> Run {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    fn args<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(mut self, args: I) -> Run {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Judge and run `command` with the shell (`-c`).
    fn c(self, command: impl AsRef<OsStr>) -> Run {
        self.arg("-c").arg(command)
    }

    fn socket(self, path: &Path) -> Run {
        self.arg("--socket").arg(path)
    }

    fn timeout(self, seconds: u32) -> Run {
        self.arg("--timeout").arg(seconds.to_string())
    }

    fn env(mut self, key: &str, value: impl AsRef<OsStr>) -> Run {
        self.env.insert(key.into(), value.as_ref().to_owned());
        self
    }

    fn env_remove(mut self, key: &str) -> Run {
        self.env.remove(OsStr::new(key));
        self
    }

    fn cwd(mut self, dir: &Path) -> Run {
        self.cwd = dir.to_owned();
        self
    }

    /// Replace the default flags (`--no-config`, `--no-tty`, the audit log) with these.
    fn without_default_flags(mut self) -> Run {
        self.args.drain(..4);
        self
    }

    fn deadline(mut self, deadline: Duration) -> Run {
        self.deadline = deadline;
        self
    }

    fn under_a_shell(mut self) -> Run {
        assert_eq!(self.user, User::Current);
        self.under_a_shell = true;
        self
    }

    fn describe(&self) -> String {
        let mut text = format!(
            "GATE_SESSION={:?} ",
            self.env.get(OsStr::new("GATE_SESSION"))
        );
        if self.user == User::Unprivileged && running_as_root() {
            text.push_str("[as uid 65534] ");
        }
        text.push_str("gate");
        for arg in &self.args {
            text.push_str(&format!(" {arg:?}"));
        }
        text
    }

    /// Start gate in a new session, with no controlling terminal.
    fn spawn(self) -> Proc {
        let description = self.describe();
        let gate = gate_binary_for(self.user);
        let mut command = if self.under_a_shell {
            // `; exit $?` keeps sh from exec'ing gate: sh stays gate's parent.
            let mut c = Command::new(require_program("sh"));
            c.args(["-c", "\"$0\" \"$@\"; exit $?"]).arg(&gate);
            c
        } else {
            command_as(self.user, &gate)
        };
        command
            .args(&self.args)
            .env_clear()
            .envs(&self.env)
            .current_dir(&self.cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // SAFETY: between fork and exec the child only calls setsid(2), which is
        // async-signal-safe, allocates nothing and touches no state of the parent.
        unsafe {
            command.pre_exec(|| {
                nix::unistd::setsid()
                    .map(drop)
                    .map_err(|e| io::Error::from_raw_os_error(e as i32))
            });
        }
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {description}: {e}"));
        let stdout = collect(child.stdout.take().unwrap());
        let stderr = collect(child.stderr.take().unwrap());
        Proc {
            pid: child.id(),
            child,
            stdout,
            stderr,
            started: Instant::now(),
            deadline: self.deadline,
            description,
            reaped: false,
        }
    }

    #[track_caller]
    fn run(self) -> Outcome {
        self.spawn().wait()
    }
}

fn collect(mut stream: impl Read + Send + 'static) -> Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stream.read_to_end(&mut buf);
        let _ = tx.send(buf);
    });
    rx
}

/// A started gate. Dropped unfinished (a failed test), its process group is killed.
struct Proc {
    child: Child,
    pid: u32,
    stdout: Receiver<Vec<u8>>,
    stderr: Receiver<Vec<u8>>,
    started: Instant,
    deadline: Duration,
    description: String,
    reaped: bool,
}

impl Proc {
    fn signal(&self, signal: Signal) {
        kill(Pid::from_raw(self.pid as i32), signal)
            .unwrap_or_else(|e| panic!("cannot send {signal} to gate: {e}"));
    }

    /// Wait for the end and the output, within the deadline.
    #[track_caller]
    fn wait(mut self) -> Outcome {
        let end = self.started + self.deadline;
        let mut pause = Duration::from_micros(200);
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("waitpid") {
                break status;
            }
            if Instant::now() >= end {
                self.kill_group();
                let stderr = self
                    .stderr
                    .recv_timeout(Duration::from_secs(1))
                    .unwrap_or_default();
                panic!(
                    "{} did not finish within {:?}; killed it. stderr: {}",
                    self.description,
                    self.deadline,
                    String::from_utf8_lossy(&stderr)
                );
            }
            thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(10));
        };
        self.reaped = true;
        let elapsed = self.started.elapsed();
        let left = end.saturating_duration_since(Instant::now()) + Duration::from_secs(1);
        let stdout = self.stdout.recv_timeout(left).expect("stdout stays open");
        let stderr = self.stderr.recv_timeout(left).expect("stderr stays open");
        Outcome {
            status,
            stdout,
            stderr,
            pid: self.pid,
            elapsed,
            description: self.description.clone(),
        }
    }

    fn kill_group(&mut self) {
        // setsid made gate the leader of a process group of its own.
        let _ = killpg(Pid::from_raw(self.pid as i32), Signal::SIGKILL);
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.reaped = true;
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if !self.reaped {
            self.kill_group();
        }
    }
}

// ---------------------------------------------------------------------------------------
// The approver the tests control.

/// One request line an approver read.
#[derive(Clone, Debug)]
struct Request {
    /// The line without its newline.
    raw: Vec<u8>,
    /// The line parsed (null if it was not JSON).
    json: Value,
}

impl Request {
    fn call_id(&self) -> &str {
        self.json["call_id"].as_str().unwrap_or("")
    }

    fn command(&self) -> &str {
        self.json["command"].as_str().unwrap_or("")
    }

    /// A decision line for this request: `type` and `call_id`, then `fields`.
    fn answer(&self, fields: Value) -> Act {
        let mut obj = json!({"type": "decision", "call_id": self.call_id()});
        for (k, v) in fields.as_object().expect("fields are an object") {
            obj[k] = v.clone();
        }
        Act::Send(line(&obj))
    }

    fn approve(&self) -> Act {
        self.answer(json!({"decision": "approve"}))
    }

    fn deny(&self, message: &str) -> Act {
        self.answer(json!({"decision": "deny", "message": message}))
    }
}

/// What the approver does once it has read a request.
enum Act {
    /// Write these bytes, then close the connection.
    Send(Vec<u8>),
    /// Never answer: keep the connection until gate closes it.
    Hang,
}

/// One JSON value as a protocol line.
fn line(value: &Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(value).unwrap();
    bytes.push(b'\n');
    bytes
}

type Script = dyn Fn(&Request) -> Act + Send + Sync;

enum Mode {
    /// Read a request line and act as the script says.
    Script(Arc<Script>),
    /// Accept and close at once, reading nothing.
    CloseAtOnce,
}

#[derive(Default)]
struct Seen {
    requests: Mutex<Vec<Request>>,
    arrived: Condvar,
    /// Connections accepted.
    connections: AtomicUsize,
    /// Connections that closed without sending a byte.
    empty: AtomicUsize,
    stop: AtomicBool,
}

/// A listener on a 0600 socket in a 0700 directory, serving each connection on a thread
/// of its own.
struct Approver {
    path: PathBuf,
    dir: PathBuf,
    _tmp: Option<tempfile::TempDir>,
    seen: Arc<Seen>,
    accepter: Option<JoinHandle<()>>,
}

impl Approver {
    /// An approver in a private directory of its own that answers as `script` says.
    fn start(script: impl Fn(&Request) -> Act + Send + Sync + 'static) -> Approver {
        Approver::in_private_dir(Mode::Script(Arc::new(script)))
    }

    fn closing_at_once() -> Approver {
        Approver::in_private_dir(Mode::CloseAtOnce)
    }

    fn in_private_dir(mode: Mode) -> Approver {
        let tmp = tempfile::Builder::new()
            .prefix("gate-approver-")
            .tempdir()
            .unwrap();
        set_mode(tmp.path(), 0o700);
        let mut approver = Approver::at(&tmp.path().join("approver.sock"), mode);
        approver._tmp = Some(tmp);
        approver
    }

    /// An approver listening at `path`, whose directory must exist.
    fn at(path: &Path, mode: Mode) -> Approver {
        let listener = UnixListener::bind(path)
            .unwrap_or_else(|e| panic!("cannot listen on {}: {e}", path.display()));
        set_mode(path, 0o600);
        listener.set_nonblocking(true).unwrap();
        let seen = Arc::new(Seen::default());
        let accepter = {
            let seen = seen.clone();
            thread::spawn(move || accept_loop(listener, mode, seen))
        };
        Approver {
            path: path.to_owned(),
            dir: path.parent().unwrap().to_owned(),
            _tmp: None,
            seen,
            accepter: Some(accepter),
        }
    }

    /// Hand the directory and the socket to `uid`.
    fn give_to(&self, uid: u32) {
        give(&self.dir, uid);
        give(&self.path, uid);
    }

    fn requests(&self) -> Vec<Request> {
        self.seen.requests.lock().unwrap().clone()
    }

    fn count(&self) -> usize {
        self.seen.requests.lock().unwrap().len()
    }

    fn connections(&self) -> usize {
        self.seen.connections.load(Ordering::SeqCst)
    }

    /// Wait until `n` requests have arrived; they are returned in arrival order.
    #[track_caller]
    fn wait_for_requests(&self, n: usize) -> Vec<Request> {
        let end = Instant::now() + PATIENCE;
        let mut requests = self.seen.requests.lock().unwrap();
        while requests.len() < n {
            let left = end.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "the approver received {} requests, not {n}, within {PATIENCE:?}",
                requests.len()
            );
            requests = self.seen.arrived.wait_timeout(requests, left).unwrap().0;
        }
        requests.clone()
    }

    /// The one request this approver received, which must be a well-formed JSON line.
    #[track_caller]
    fn only_request(&self) -> Request {
        let requests = self.requests();
        assert_eq!(
            requests.len(),
            1,
            "expected exactly one request, got {requests:#?}"
        );
        let request = requests.into_iter().next().unwrap();
        assert!(
            request.json.is_object(),
            "the request is not a JSON object: {:?}",
            String::from_utf8_lossy(&request.raw)
        );
        request
    }

    /// Wait until a connection closed without a byte sent on it.
    #[track_caller]
    fn wait_for_an_empty_connection(&self) {
        let end = Instant::now() + PATIENCE;
        while self.seen.empty.load(Ordering::SeqCst) == 0 {
            assert!(
                Instant::now() < end,
                "no connection came and went within {PATIENCE:?} ({} accepted)",
                self.connections()
            );
            thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Approver {
    fn drop(&mut self) {
        self.seen.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.accepter.take() {
            let _ = t.join();
        }
        if self._tmp.is_none() {
            let _ = fs::remove_file(&self.path);
        }
    }
}

fn accept_loop(listener: UnixListener, mode: Mode, seen: Arc<Seen>) {
    while !seen.stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, _)) => {
                seen.connections.fetch_add(1, Ordering::SeqCst);
                match &mode {
                    Mode::CloseAtOnce => drop(stream),
                    Mode::Script(script) => {
                        let script = script.clone();
                        let seen = seen.clone();
                        thread::spawn(move || serve(stream, &*script, &seen));
                    }
                }
            }
            // Nothing to accept (the listener does not block, so that it can stop).
            Err(_) => thread::sleep(Duration::from_millis(2)),
        }
    }
}

fn serve(stream: UnixStream, script: &Script, seen: &Seen) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(60)));
    let mut raw = Vec::new();
    let _ = BufReader::new(&stream)
        .take(MAX_LINE as u64 + 1)
        .read_until(b'\n', &mut raw);
    if raw.is_empty() {
        seen.empty.fetch_add(1, Ordering::SeqCst);
        return;
    }
    assert_eq!(raw.pop(), Some(b'\n'), "the request line has no newline");
    let request = Request {
        json: serde_json::from_slice(&raw).unwrap_or(Value::Null),
        raw,
    };
    seen.requests.lock().unwrap().push(request.clone());
    seen.arrived.notify_all();
    match script(&request) {
        Act::Send(bytes) => {
            let _ = (&stream).write_all(&bytes);
        }
        Act::Hang => {
            let _ = (&stream).read_to_end(&mut Vec::new());
        }
    }
}

// ---------------------------------------------------------------------------------------
// Assertions shared by the scenarios.

/// Refused: exit 126, one stderr line starting `gate: refused`, `ran` absent.
#[track_caller]
fn assert_nothing_ran(out: &Outcome, side_effect: &Path) {
    out.assert_refused();
    assert_absent(side_effect, out);
}

/// The approver answers `touch ran` as `script` says; that answer is a fault. Checks that
/// nothing ran, the status, the one stderr line naming the approver and `cause`, and the
/// audit record (decided by `error`, under the call id the approver received).
#[track_caller]
fn assert_fault(script: impl Fn(&Request) -> Act + Send + Sync + 'static, cause: &str) -> Outcome {
    let w = World::new();
    let a = Approver::start(script);
    let out = w.gate().socket(&a.path).c("touch ran").run();
    assert_nothing_ran(&out, &w.file("ran"));
    out.assert_stderr_contains(&format!("the approver on {} failed", a.path.display()))
        .assert_stderr_contains(cause);
    let request = a.only_request();
    w.assert_recorded(request.call_id(), "deny", "error");
    out
}

// ---------------------------------------------------------------------------------------
// Approve and deny.

#[test]
fn an_approved_command_runs_and_its_exit_status_passes_through() {
    let w = World::new();
    let a = Approver::start(|r| r.approve());
    let out = w
        .gate()
        .socket(&a.path)
        .c("touch ran; echo out; exit 7")
        .run();
    out.assert_code(7)
        .assert_stdout("out\n")
        .assert_stderr_empty();
    assert!(w.file("ran").exists(), "{}", out.report());
    let request = a.only_request();
    let record = w.assert_recorded(request.call_id(), "allow", "socket");
    assert_eq!(record["command"], "touch ran; echo out; exit 7");
    assert_eq!(record["pid"], out.pid);
}

#[test]
fn an_approved_command_starts_with_no_signal_blocked() {
    // gate blocks SIGINT, SIGTERM, SIGHUP and SIGQUIT while it waits; the command must
    // not inherit that mask.
    let w = World::new();
    let a = Approver::start(|r| r.approve());
    let out = w
        .gate()
        .socket(&a.path)
        .c("grep SigBlk /proc/self/status")
        .run();
    out.assert_code(0)
        .assert_stdout("SigBlk:\t0000000000000000\n");
}

#[test]
fn a_program_run_without_a_shell_is_asked_about_as_its_words() {
    let w = World::new();
    let a = Approver::start(|r| r.approve());
    let out = w
        .gate()
        .socket(&a.path)
        .args(["--", "touch", "ran", "with space"])
        .run();
    out.assert_code(0);
    assert!(w.file("ran").exists() && w.file("with space").exists());
    let request = a.only_request();
    assert_eq!(request.json["kind"], "program");
    assert_eq!(request.json["command"], "touch ran 'with space'");
}

#[test]
fn a_denial_refuses_and_its_message_reaches_the_model() {
    let w = World::new();
    let a = Approver::start(|r| r.deny("use `make clean` instead"));
    let out = w.gate().socket(&a.path).c("touch ran").run();
    assert_nothing_ran(&out, &w.file("ran"));
    out.assert_stderr_contains(
        "gate: refused `touch ran`: the approver denied it: \"use `make clean` instead\"",
    );
    assert_eq!(out.stdout(), "");
    let request = a.only_request();
    let record = w.assert_recorded(request.call_id(), "deny", "socket");
    assert_eq!(record["message"], "use `make clean` instead");
}

#[test]
fn a_denial_without_a_message_still_says_who_refused() {
    let w = World::new();
    let a = Approver::start(|r| r.answer(json!({"decision": "deny"})));
    let out = w.gate().socket(&a.path).c("touch ran").run();
    assert_nothing_ran(&out, &w.file("ran"));
    out.assert_stderr_contains("the approver denied it");
    w.assert_recorded(a.only_request().call_id(), "deny", "socket");
}

#[test]
fn a_denial_message_is_one_escaped_line_of_bounded_length() {
    let w = World::new();
    let long = format!("first\nsecond\r\u{1b}[31mred {}", "x".repeat(5000));
    let a = Approver::start(move |r| r.deny(&long));
    let out = w.gate().socket(&a.path).c("touch ran").run();
    assert_nothing_ran(&out, &w.file("ran"));
    out.assert_stderr_contains(r"first\nsecond\r\u{1b}[31mred xxx");
    assert!(
        !out.stderr.contains(&0x1b) && !out.stderr.contains(&b'\r'),
        "raw control characters reached stderr\n{}",
        out.report()
    );
    assert!(
        out.stderr().chars().count() < 1600,
        "a 5,000-character message should be cut short\n{}",
        out.report()
    );
}

// ---------------------------------------------------------------------------------------
// The request.

#[test]
fn the_request_carries_every_field_the_protocol_names() {
    let w = World::new();
    let a = Approver::start(|r| r.deny("no"));
    let dir = w.env.work.join("a sub dir");
    fs::create_dir(&dir).unwrap();
    let command = "  touch ran \t";
    let out = w
        .gate()
        .socket(&a.path)
        .cwd(&dir)
        .env("GATE_TIMEOUT", "17")
        .c(command)
        .run();
    assert_nothing_ran(&out, &dir.join("ran"));
    let request = a.only_request();
    assert!(
        !request.raw.contains(&b'\n'),
        "one line: {:?}",
        String::from_utf8_lossy(&request.raw)
    );
    let r = &request.json;
    let keys: BTreeSet<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
    let expected: BTreeSet<&str> = [
        "type",
        "version",
        "call_id",
        "session_id",
        "command",
        "kind",
        "work_dir",
        "level",
        "timeout_seconds",
        "remember_supported",
        "pid",
    ]
    .into();
    assert_eq!(keys, expected, "{r}");
    assert_eq!(r["type"], "approval_request");
    assert_eq!(r["version"], 1);
    let call_id = r["call_id"].as_str().unwrap();
    assert!(
        call_id.len() == 16 && call_id.bytes().all(|b| b.is_ascii_hexdigit()),
        "{r}"
    );
    assert_eq!(r["session_id"], SESSION);
    assert_eq!(r["command"], command, "sent exactly as given, untrimmed");
    assert_eq!(r["kind"], "command");
    assert_eq!(
        r["work_dir"],
        fs::canonicalize(&dir).unwrap().to_str().unwrap()
    );
    assert_eq!(r["level"], "ask");
    assert_eq!(r["timeout_seconds"], 17);
    // Not gate's broker: gate itself keeps no remembered approvals.
    assert_eq!(r["remember_supported"], false);
    assert_eq!(r["pid"], out.pid, "gate's own pid");
    w.assert_recorded(call_id, "deny", "socket");
}

#[test]
fn the_timeout_in_the_request_is_the_configured_one() {
    for (flag, expected) in [(None, 60), (Some(5), 5)] {
        let w = World::new();
        let a = Approver::start(|r| r.deny("no"));
        let mut run = w.gate().socket(&a.path);
        if let Some(seconds) = flag {
            run = run.timeout(seconds);
        }
        run.c("touch ran").run().assert_refused();
        assert_eq!(a.only_request().json["timeout_seconds"], expected);
    }
}

#[test]
fn a_command_with_control_characters_is_sent_exactly_and_shown_escaped() {
    let w = World::new();
    let a = Approver::start(|r| r.deny("no"));
    let command = "touch ran\n# \u{1b}[31mred\r\tend";
    let out = w.gate().socket(&a.path).c(command).run();
    assert_nothing_ran(&out, &w.file("ran"));
    assert_eq!(a.only_request().json["command"], command);
    out.assert_stderr_contains(r"`touch ran\n# \u{1b}[31mred\r\tend`");
    assert!(
        !out.stderr.contains(&0x1b) && !out.stderr.contains(&b'\r'),
        "{}",
        out.report()
    );
}

#[test]
fn a_command_that_is_not_utf8_is_sent_replaced_and_run_exactly() {
    let w = World::new();
    let a = Approver::start(|r| r.approve());
    let command = OsStr::from_bytes(b"touch ran-\xff");
    let out = w.gate().socket(&a.path).c(command).run();
    out.assert_code(0);
    assert!(w.env.work.join(OsStr::from_bytes(b"ran-\xff")).exists());
    let request = a.only_request();
    assert_eq!(request.json["command"], "touch ran-\u{fffd}");
    assert_eq!(request.json["remember_supported"], false);
}

#[test]
fn a_command_too_long_to_ask_about_is_refused_without_sending_it() {
    let w = World::new();
    let a = Approver::start(|r| r.approve());
    let command = format!("touch ran # {}", "x".repeat(MAX_LINE));
    let out = w.gate().socket(&a.path).c(&command).run();
    assert_nothing_ran(&out, &w.file("ran"));
    out.assert_stderr_contains("longer than the protocol's 65536 bytes");
    a.wait_for_an_empty_connection();
    assert_eq!(a.count(), 0, "the request went out");
    assert_eq!(w.last_record()["decided_by"], "error");
}

// ---------------------------------------------------------------------------------------
// Remember: gate keeps no remembered approvals; only the broker does, in its memory
// (tests/broker.rs).

#[test]
fn a_host_approver_is_told_that_gate_remembers_nothing() {
    let w = World::new();
    let a = Approver::start(|r| {
        r.answer(json!({"decision": "approve", "remember": true, "remember_rule": "touch"}))
    });
    let run = |command: &str| w.gate().socket(&a.path).c(command).run();
    run("touch once").assert_code(0);
    let first = a.only_request();
    assert_eq!(
        first.json["remember_supported"], false,
        "an approver that is not gate's broker is told that nothing is remembered: {}",
        first.json
    );
    // Approved once, though the approver asked to remember: the same command and one
    // the rule would cover are asked about again.
    fs::remove_file(w.file("once")).unwrap();
    run("touch once").assert_code(0);
    run("touch twice").assert_code(0);
    assert!(w.file("once").exists() && w.file("twice").exists());
    let requests = a.wait_for_requests(3);
    assert_eq!(a.count(), 3, "a run was answered without the approver");
    for r in &requests {
        w.assert_recorded(r.call_id(), "allow", "socket");
    }
}

#[test]
fn a_session_without_gate_session_is_the_parent_process() {
    let w = World::new();
    let a = Approver::start(|r| r.approve());
    let run = || w.gate().env_remove("GATE_SESSION").socket(&a.path);
    run().c("touch ran").run().assert_code(0);
    run().c("touch ran").run().assert_code(0);
    run().under_a_shell().c("touch ran").run().assert_code(0);
    let sessions: Vec<String> = a
        .wait_for_requests(3)
        .iter()
        .map(|r| r.json["session_id"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        sessions[0].starts_with(&format!("ppid-{}-", std::process::id())),
        "the session is the parent's pid and start time: {sessions:?}"
    );
    assert_eq!(
        sessions[0], sessions[1],
        "the same parent is the same session"
    );
    // Another parent (a shell between): another session.
    assert!(
        sessions[2].starts_with("ppid-") && sessions[2] != sessions[0],
        "{sessions:?}"
    );
}

#[test]
fn an_invalid_remember_rule_is_a_protocol_error() {
    for rule in [
        "touch ran; id",
        "  ",
        "",
        "touch $(id)",
        "touch ran\nid",
        "touch\rran",
    ] {
        assert_fault(
            move |r| r.answer(json!({"decision": "approve", "remember_rule": rule})),
            "remember_rule is not a valid allow rule",
        );
    }
    assert_fault(
        |r| r.answer(json!({"decision": "approve", "remember_rule": 5})),
        "`remember_rule` must be a string",
    );
}

#[test]
fn a_remembered_denial_is_a_protocol_error() {
    assert_fault(
        |r| r.answer(json!({"decision": "deny", "remember": true})),
        "a deny cannot be remembered",
    );
    assert_fault(
        |r| r.answer(json!({"decision": "deny", "remember_rule": "touch"})),
        "a deny cannot be remembered",
    );
}

// ---------------------------------------------------------------------------------------
// Protocol faults: each is a denial with the cause on stderr.

#[test]
fn a_decision_for_another_call_is_refused() {
    assert_fault(
        |r| {
            let other = format!("{}0", r.call_id());
            Act::Send(line(
                &json!({"type": "decision", "call_id": other, "decision": "approve"}),
            ))
        },
        "protocol error: the decision is for call",
    );
    assert_fault(
        |_| Act::Send(line(&json!({"type": "decision", "decision": "approve"}))),
        "protocol error: the message has no `call_id`",
    );
}

#[test]
fn a_message_of_the_wrong_type_is_refused() {
    for ty in ["approval", "answer", "Decision", ""] {
        assert_fault(
            move |r| {
                Act::Send(line(
                    &json!({"type": ty, "call_id": r.call_id(), "decision": "approve"}),
                ))
            },
            "protocol error: expected a message of type `decision`",
        );
    }
    assert_fault(
        |r| {
            Act::Send(line(
                &json!({"call_id": r.call_id(), "decision": "approve"}),
            ))
        },
        "protocol error: the message has no `type`",
    );
}

#[test]
fn another_protocol_version_is_refused() {
    for version in [json!(2), json!(0), json!("1"), json!(1.5)] {
        assert_fault(
            move |r| r.answer(json!({"decision": "approve", "version": version})),
            "protocol error: unsupported protocol version",
        );
    }
    // Version 1, said or unsaid, is the one gate speaks.
    let w = World::new();
    let a = Approver::start(|r| r.answer(json!({"decision": "approve", "version": 1})));
    w.gate().socket(&a.path).c("touch ran").run().assert_code(0);
}

#[test]
fn only_the_exact_strings_approve_and_deny_are_answers() {
    for answer in [
        "yes", "Approve", "APPROVE", "approve ", "approved", "allow", "ok", "",
    ] {
        assert_fault(
            move |r| r.answer(json!({"decision": answer})),
            "protocol error: decision must be exactly \"approve\" or \"deny\"",
        );
    }
    for answer in [
        json!(true),
        json!(1),
        json!(null),
        json!(["approve"]),
        json!({"approve": true}),
    ] {
        assert_fault(
            move |r| r.answer(json!({"decision": answer})),
            "protocol error: decision must be the string",
        );
    }
    assert_fault(
        |r| r.answer(json!({})),
        "protocol error: the message has no `decision`",
    );
}

#[test]
fn remember_must_be_a_boolean() {
    for value in [json!("true"), json!(1), json!(null), json!("yes")] {
        assert_fault(
            move |r| r.answer(json!({"decision": "approve", "remember": value})),
            "protocol error: `remember` must be true or false",
        );
    }
}

#[test]
fn a_message_that_is_not_a_string_is_refused() {
    assert_fault(
        |r| r.answer(json!({"decision": "deny", "message": 5})),
        "protocol error: `message` must be a string",
    );
}

#[test]
fn a_line_over_64_kib_is_refused() {
    // One byte over the limit, newline included: a well-formed approve padded with an
    // unknown member.
    assert_fault(
        |r| Act::Send(padded_approve(r, MAX_LINE + 1)),
        "protocol error: the approver sent a line longer than 65536 bytes",
    );
    // Far over, without a newline.
    assert_fault(
        |_| Act::Send(vec![b'x'; 3 * MAX_LINE]),
        "longer than 65536 bytes",
    );
}

#[test]
fn a_line_of_exactly_64_kib_is_an_answer_and_unknown_members_are_ignored() {
    let w = World::new();
    let a = Approver::start(|r| Act::Send(padded_approve(r, MAX_LINE)));
    w.gate().socket(&a.path).c("touch ran").run().assert_code(0);
    assert!(w.file("ran").exists());
}

/// An approve for `r`, `len` bytes long with its newline, padded in an unknown member.
fn padded_approve(r: &Request, len: usize) -> Vec<u8> {
    let text = |pad: &str| {
        format!(
            "{{\"type\":\"decision\",\"call_id\":\"{}\",\"decision\":\"approve\",\"pad\":\"{pad}\"}}\n",
            r.call_id()
        )
    };
    let fill = len - text("").len();
    let bytes = text(&"p".repeat(fill)).into_bytes();
    assert_eq!(bytes.len(), len);
    bytes
}

#[test]
fn a_line_that_is_not_json_is_refused() {
    for bad in [
        &b"approve\n"[..],
        b"\n",
        b"{\"type\":\"decision\",\n",
        b"[\"decision\"]\n",
        b"\"approve\"\n",
    ] {
        assert_fault(
            move |_| Act::Send(bad.to_vec()),
            "protocol error: the line is not",
        );
    }
}

#[test]
fn a_line_that_is_not_utf8_is_refused() {
    assert_fault(
        |r| {
            let mut bytes = format!(
                "{{\"type\":\"decision\",\"call_id\":\"{}\",\"decision\":\"approve\",\"note\":\"",
                r.call_id()
            )
            .into_bytes();
            bytes.extend_from_slice(b"\xff\xfe\"}\n");
            Act::Send(bytes)
        },
        "protocol error: the line is not valid UTF-8",
    );
}

#[test]
fn duplicate_members_are_a_protocol_error() {
    // An approver that builds its JSON by pasting text (a deny with the model's words as
    // its message) could be made to send `"decision":"deny",…,"decision":"approve"`.
    // gate must not pick one of the two: a doubt is a denial.
    assert_fault(
        |r| {
            Act::Send(
                format!(
                    "{{\"type\":\"decision\",\"call_id\":\"{}\",\"decision\":\"deny\",\"message\":\"\",\"decision\":\"approve\"}}\n",
                    r.call_id()
                )
                .into_bytes(),
            )
        },
        "protocol error",
    );
}

#[test]
fn an_approver_that_closes_without_answering_is_refused() {
    // Reads the request, then closes.
    assert_fault(
        |_| Act::Send(Vec::new()),
        "the approver closed the connection without answering",
    );
    // A whole approve but no newline: a line is not finished until its newline.
    assert_fault(
        |r| {
            let Act::Send(mut bytes) = r.approve() else {
                unreachable!()
            };
            bytes.pop();
            Act::Send(bytes)
        },
        "the approver closed the connection without answering",
    );
}

#[test]
fn an_approver_that_closes_at_once_is_refused() {
    // Accepts and closes before reading: gate either cannot send the request or reads
    // the end of the connection. Either way nothing runs.
    for _ in 0..5 {
        let w = World::new();
        let a = Approver::closing_at_once();
        let out = w.gate().socket(&a.path).c("touch ran").run();
        assert_nothing_ran(&out, &w.file("ran"));
        out.assert_stderr_contains(&format!("the approver on {} failed", a.path.display()));
        assert!(
            out.stderr().contains("closed the connection")
                || out.stderr().contains("cannot send the request"),
            "{}",
            out.report()
        );
        assert_eq!(w.last_record()["decided_by"], "error");
    }
}

#[test]
fn the_first_answer_counts() {
    // Both answers in one write: gate acts on the first line and reads no further.
    let twice = |first: &str, second: &str, r: &Request| {
        let mut bytes =
            line(&json!({"type": "decision", "call_id": r.call_id(), "decision": first}));
        bytes.extend(line(
            &json!({"type": "decision", "call_id": r.call_id(), "decision": second}),
        ));
        Act::Send(bytes)
    };
    let w = World::new();
    let a = Approver::start(move |r| twice("approve", "deny", r));
    w.gate().socket(&a.path).c("touch ran").run().assert_code(0);
    assert!(w.file("ran").exists());
    w.assert_recorded(a.only_request().call_id(), "allow", "socket");

    let w = World::new();
    let a = Approver::start(move |r| twice("deny", "approve", r));
    let out = w.gate().socket(&a.path).c("touch ran").run();
    assert_nothing_ran(&out, &w.file("ran"));
    out.assert_stderr_contains("the approver denied it");
    w.assert_recorded(a.only_request().call_id(), "deny", "socket");

    // A broken first line is not rescued by a good second one.
    let w = World::new();
    let a = Approver::start(|r| {
        let mut bytes = b"not json\n".to_vec();
        let Act::Send(good) = r.approve() else {
            unreachable!()
        };
        bytes.extend(good);
        Act::Send(bytes)
    });
    let out = w.gate().socket(&a.path).c("touch ran").run();
    assert_nothing_ran(&out, &w.file("ran"));
    out.assert_stderr_contains("protocol error");
}

// ---------------------------------------------------------------------------------------
// The line that says a request waits.

#[test]
fn a_request_that_waits_says_so_in_one_stderr_line() {
    let w = World::new();
    let a = Approver::start(|r| {
        std::thread::sleep(Duration::from_millis(1200));
        r.approve()
    });
    let out = w.gate().socket(&a.path).c("echo ran").run();
    out.assert_code(0).assert_stdout("ran\n");
    // A host program's approver (no broker's token beside its socket): gate's own
    // tools cannot answer it, so the line names the approver instead.
    assert_eq!(
        out.stderr(),
        format!(
            "gate: waiting up to 60 s for a person to approve this command through the \
             approver on {}\n",
            a.path.display()
        )
    );
    // Denied after the wait: the line, then the refusal.
    let a = Approver::start(|r| {
        std::thread::sleep(Duration::from_millis(1200));
        r.deny("not now")
    });
    let out = w.gate().socket(&a.path).timeout(30).c("touch ran").run();
    assert_nothing_ran(&out, &w.file("ran"));
    let lines: Vec<String> = out.stderr().lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), 2, "{}", out.report());
    assert!(lines[0].starts_with("gate: waiting up to 30 s for a person"));
    assert!(lines[1].contains("the approver denied it: \"not now\""));
}

#[test]
fn nothing_says_it_waits_when_nobody_is_waited_for() {
    let w = World::new();
    // Answered at once, as the broker answers a remembered command.
    let a = Approver::start(|r| r.approve());
    let out = w.gate().socket(&a.path).c("echo ran").run();
    out.assert_code(0)
        .assert_stdout("ran\n")
        .assert_stderr_empty();
    assert_eq!(a.requests().len(), 1);
    // An allow rule, or a deny rule: nobody is asked, and nothing says it waits.
    let a = Approver::start(|_| Act::Hang);
    let out = w
        .gate()
        .socket(&a.path)
        .args(["--allow", "echo"])
        .c("echo ran")
        .run();
    out.assert_code(0)
        .assert_stdout("ran\n")
        .assert_stderr_empty();
    let out = w
        .gate()
        .socket(&a.path)
        .args(["--deny", "touch"])
        .c("touch ran")
        .run();
    assert_nothing_ran(&out, &w.file("ran"));
    assert!(!out.stderr().contains("waiting"), "{}", out.report());
    assert!(a.requests().is_empty());
    // Nobody to ask: an immediate denial, not a wait.
    let out = w
        .gate()
        .socket(&w.file("no-broker.sock"))
        .c("touch ran")
        .run();
    assert_nothing_ran(&out, &w.file("ran"));
    assert!(!out.stderr().contains("waiting"), "{}", out.report());
}

// ---------------------------------------------------------------------------------------
// Timeouts and signals.

#[test]
fn an_approver_that_never_answers_times_out_as_a_denial() {
    let w = World::new();
    let a = Approver::start(|_| Act::Hang);
    let out = w.gate().socket(&a.path).timeout(1).c("touch ran").run();
    assert_nothing_ran(&out, &w.file("ran"));
    out.assert_stderr_contains(&format!(
        "the approver on {} did not answer within 1 s",
        a.path.display()
    ));
    assert!(
        out.elapsed >= Duration::from_millis(950),
        "gate gave up before the timeout: {:?}",
        out.elapsed
    );
    assert!(
        out.elapsed < Duration::from_secs(15),
        "a 1 s timeout took {:?}",
        out.elapsed
    );
    w.assert_recorded(a.only_request().call_id(), "deny", "timeout");
}

#[test]
fn gate_timeout_in_the_environment_is_honoured() {
    let w = World::new();
    let a = Approver::start(|_| Act::Hang);
    let out = w
        .gate()
        .socket(&a.path)
        .env("GATE_TIMEOUT", "1")
        .c("touch ran")
        .run();
    assert_nothing_ran(&out, &w.file("ran"));
    out.assert_stderr_contains("did not answer within 1 s");
    assert!(out.elapsed < Duration::from_secs(15), "{:?}", out.elapsed);
    assert_eq!(a.only_request().json["timeout_seconds"], 1);
}

#[test]
fn a_signal_while_waiting_is_a_denial() {
    for signal in [
        Signal::SIGTERM,
        Signal::SIGINT,
        Signal::SIGHUP,
        Signal::SIGQUIT,
    ] {
        let w = World::new();
        let a = Approver::start(|_| Act::Hang);
        let gate = w.gate().socket(&a.path).timeout(120).c("touch ran").spawn();
        let request = a.wait_for_requests(1).remove(0);
        let sent = Instant::now();
        gate.signal(signal);
        let out = gate.wait();
        assert_nothing_ran(&out, &w.file("ran"));
        out.assert_stderr_contains(&format!("interrupted by {signal}"));
        assert!(
            sent.elapsed() < Duration::from_secs(10),
            "gate took {:?} to give up after {signal} (the timeout was 120 s)",
            sent.elapsed()
        );
        w.assert_recorded(request.call_id(), "deny", "interrupted");
    }
}

/// A listener whose queue of connections is full and that never accepts: an approver
/// that hangs before it even takes the connection. gate's `connect` would wait for room
/// in the queue.
struct FullQueue {
    _dir: tempfile::TempDir,
    path: PathBuf,
    _listener: std::os::fd::OwnedFd,
    _queued: Vec<std::os::fd::OwnedFd>,
}

impl FullQueue {
    fn new() -> FullQueue {
        use nix::sys::socket::{
            AddressFamily, Backlog, SockFlag, SockType, UnixAddr, bind, connect, listen, socket,
        };
        use std::os::fd::AsRawFd;
        let dir = tempfile::Builder::new()
            .prefix("gate-approver-")
            .tempdir()
            .unwrap();
        set_mode(dir.path(), 0o700);
        let path = dir.path().join("full.sock");
        let addr = UnixAddr::new(&path).unwrap();
        let stream = || {
            socket(
                AddressFamily::Unix,
                SockType::Stream,
                SockFlag::SOCK_CLOEXEC | SockFlag::SOCK_NONBLOCK,
                None,
            )
            .unwrap()
        };
        let listener = stream();
        bind(listener.as_raw_fd(), &addr).unwrap();
        set_mode(&path, 0o600);
        listen(&listener, Backlog::new(0).unwrap()).unwrap();
        // Queue connections until the kernel says there is no more room.
        let mut queued = Vec::new();
        loop {
            let client = stream();
            match connect(client.as_raw_fd(), &addr) {
                Ok(()) => queued.push(client),
                Err(nix::errno::Errno::EAGAIN) => break,
                Err(e) => panic!("cannot fill the listener's queue: {e}"),
            }
            assert!(queued.len() < 64, "the listener's queue never filled");
        }
        FullQueue {
            _dir: dir,
            path,
            _listener: listener,
            _queued: queued,
        }
    }
}

/// Whether gate (`pid`) has blocked SIGTERM: it does so while it waits for an answer.
fn blocks_sigterm(pid: u32) -> bool {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigBlk:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (libc::SIGTERM - 1)) != 0)
}

#[test]
fn an_approver_that_never_accepts_cannot_hold_gate_past_its_timeout() {
    let w = World::new();
    let full = FullQueue::new();
    let out = w
        .gate()
        .socket(&full.path)
        .timeout(1)
        .deadline(Duration::from_secs(10))
        .c("touch ran")
        .run();
    assert_nothing_ran(&out, &w.file("ran"));
    out.assert_stderr_contains("did not answer within 1 s");
    assert_eq!(w.last_record()["decided_by"], "timeout");
}

#[test]
fn a_signal_ends_the_wait_for_an_approver_that_never_accepts() {
    let w = World::new();
    let full = FullQueue::new();
    let gate = w
        .gate()
        .socket(&full.path)
        .timeout(120)
        .deadline(Duration::from_secs(15))
        .c("touch ran")
        .spawn();
    let end = Instant::now() + PATIENCE;
    while !blocks_sigterm(gate.pid) {
        assert!(Instant::now() < end, "gate never started waiting");
        thread::sleep(Duration::from_millis(5));
    }
    let sent = Instant::now();
    gate.signal(Signal::SIGTERM);
    let out = gate.wait();
    assert_nothing_ran(&out, &w.file("ran"));
    out.assert_stderr_contains("interrupted by SIGTERM");
    assert!(
        sent.elapsed() < Duration::from_secs(10),
        "{:?}",
        sent.elapsed()
    );
    assert_eq!(w.last_record()["decided_by"], "interrupted");
}

// ---------------------------------------------------------------------------------------
// Finding the socket.

#[test]
fn the_socket_comes_from_the_flag_the_environment_or_the_configuration() {
    let w = World::new();
    let a = Approver::start(|r| r.approve());
    // GATE_SOCKET
    w.gate()
        .env("GATE_SOCKET", &a.path)
        .c("touch one")
        .run()
        .assert_code(0);
    assert_eq!(a.count(), 1);
    // approval.socket in the configuration file
    let config = w.env.write(
        "config.toml",
        format!("[approval]\nsocket = {:?}\n", a.path.to_str().unwrap()),
    );
    w.gate()
        .without_default_flags()
        .arg("--config")
        .arg(&config)
        .args(["--no-tty", "--audit-log", "off"])
        .c("touch two")
        .run()
        .assert_code(0);
    assert_eq!(a.count(), 2);
    // --socket wins over GATE_SOCKET.
    let other = Approver::start(|r| r.deny("the wrong approver"));
    w.gate()
        .env("GATE_SOCKET", &other.path)
        .socket(&a.path)
        .c("touch three")
        .run()
        .assert_code(0);
    assert_eq!((a.count(), other.count()), (3, 0));
    assert!(["one", "two", "three"].iter().all(|f| w.file(f).exists()));
}

#[test]
fn the_brokers_default_socket_is_used_when_none_is_configured() {
    let w = World::new();
    let dir = w.runtime.join("gate");
    make_private_dir(&dir, effective_uid());
    let a = Approver::at(
        &dir.join("broker.sock"),
        Mode::Script(Arc::new(|r: &Request| r.approve())),
    );
    let out = w.gate().c("touch ran").run();
    out.assert_code(0);
    assert!(w.file("ran").exists());
    w.assert_recorded(a.only_request().call_id(), "allow", "socket");
}

#[test]
fn with_no_socket_and_no_terminal_nobody_can_approve() {
    let w = World::new();
    let out = w.gate().c("touch ran").run();
    assert_nothing_ran(&out, &w.file("ran"));
    out.assert_stderr_contains("there is no approver to ask");
    assert_eq!(w.last_record()["decided_by"], "no-approver");
    // Without --no-tty as well: in a session of its own gate has no terminal to open.
    let out = w
        .gate()
        .without_default_flags()
        .args(["--no-config", "--audit-log"])
        .arg(&w.audit)
        .c("touch ran")
        .run();
    assert_nothing_ran(&out, &w.file("ran"));
    out.assert_stderr_contains("there is no approver to ask");
    assert_eq!(w.last_record()["decided_by"], "no-approver");
}

#[test]
fn a_stale_default_socket_means_nobody_is_listening() {
    let w = World::new();
    let dir = w.runtime.join("gate");
    make_private_dir(&dir, effective_uid());
    drop(UnixListener::bind(dir.join("broker.sock")).unwrap());
    set_mode(&dir.join("broker.sock"), 0o600);
    let out = w.gate().c("touch ran").run();
    assert_nothing_ran(&out, &w.file("ran"));
    out.assert_stderr_contains("there is no approver to ask");
    assert_eq!(w.last_record()["decided_by"], "no-approver");
}

#[test]
fn a_configured_socket_that_is_missing_is_named_in_the_refusal() {
    let w = World::new();
    let missing = w.env.root.join("no-such.sock");
    let out = w.gate().socket(&missing).c("touch ran").run();
    assert_nothing_ran(&out, &w.file("ran"));
    out.assert_stderr_contains("there is no approver to ask")
        .assert_stderr_contains(&format!("no socket at {}", missing.display()));
    assert_eq!(w.last_record()["decided_by"], "no-approver");
}

#[test]
fn a_configured_socket_that_nobody_listens_on_is_named_in_the_refusal() {
    let w = World::new();
    let stale = w.env.root.join("stale.sock");
    drop(UnixListener::bind(&stale).unwrap());
    set_mode(&stale, 0o600);
    let out = w.gate().socket(&stale).c("touch ran").run();
    assert_nothing_ran(&out, &w.file("ran"));
    out.assert_stderr_contains(&format!("nothing is listening on {}", stale.display()));
    assert_eq!(w.last_record()["decided_by"], "no-approver");
}

#[test]
fn a_path_that_is_not_a_socket_is_not_trusted() {
    let w = World::new();
    let file = w.env.root.join("plain-file");
    fs::write(&file, "").unwrap();
    set_mode(&file, 0o600);
    let out = w.gate().socket(&file).c("touch ran").run();
    assert_nothing_ran(&out, &w.file("ran"));
    out.assert_stderr_contains("the approval socket cannot be trusted")
        .assert_stderr_contains("is not a socket");
    assert_eq!(w.last_record()["decided_by"], "error");

    // A symbolic link to a good socket is not the socket: nothing is sent through it.
    let a = Approver::start(|r| r.approve());
    let link = w.env.root.join("link.sock");
    std::os::unix::fs::symlink(&a.path, &link).unwrap();
    let out = w.gate().socket(&link).c("touch ran").run();
    assert_nothing_ran(&out, &w.file("ran"));
    out.assert_stderr_contains("is not a socket");
    assert_eq!(a.connections(), 0, "gate connected through the link");
}

for_each_user! {
    /// A socket that others may write to could be anyone's: gate sends it nothing.
    fn a_socket_open_to_other_users_is_not_trusted(user) {
        for mode in [0o666, 0o660, 0o602] {
            let w = World::as_user(user);
            w.env.assert_side_effects_are_visible(user);
            let a = Approver::start(|r| r.approve());
            a.give_to(uid_of(user));
            set_mode(&a.path, mode);
            let out = w.gate().socket(&a.path).c("touch ran").run();
            assert_nothing_ran(&out, &w.file("ran"));
            out.assert_stderr_contains("the approval socket cannot be trusted")
                .assert_stderr_contains(&format!("is open to other users (mode {mode:04o})"));
            assert_eq!(a.connections(), 0, "gate connected to an untrusted socket");
            assert_eq!(w.last_record()["decided_by"], "error");
        }
    }

    /// A socket file of another user: gate sends it nothing (root could connect anyway).
    fn a_socket_of_another_user_is_not_trusted(user) needs root because "it makes a socket of another user" {
        let me = uid_of(user);
        let other = if me == 0 { NOBODY } else { 0 };
        let w = World::as_user(user);
        w.env.assert_side_effects_are_visible(user);
        let a = Approver::start(|r| r.approve());
        // The directory is the gate user's, so that gate can look; the socket is not.
        give(&a.dir, me);
        std::os::unix::fs::chown(&a.path, Some(other), Some(other)).unwrap();
        let out = w.gate().socket(&a.path).c("touch ran").run();
        assert_nothing_ran(&out, &w.file("ran"));
        out.assert_stderr_contains("the approval socket cannot be trusted")
            .assert_stderr_contains(&format!(
                "belongs to uid {other}, not to this user (uid {me})"
            ));
        assert_eq!(a.connections(), 0, "gate connected to another user's socket");
        assert_eq!(w.last_record()["decided_by"], "error");
    }

    /// The socket file is the user's, but the process listening runs as someone else
    /// (SO_PEERCRED): gate hangs up without sending the request.
    fn an_approver_running_as_another_user_is_not_trusted(user) needs root because "it runs an approver as another user" {
        let w = World::as_user(user);
        w.env.assert_side_effects_are_visible(user);
        match user {
            User::Unprivileged => {
                // This test (root) listens; the socket and its directory are 65534's.
                let a = Approver::start(|r| r.approve());
                a.give_to(NOBODY);
                let out = w.gate().socket(&a.path).c("touch ran").run();
                assert_nothing_ran(&out, &w.file("ran"));
                out.assert_stderr_contains("the approval socket cannot be trusted")
                    .assert_stderr_contains(&format!(
                        "runs as uid 0, not as this user (uid {NOBODY})"
                    ));
                a.wait_for_an_empty_connection();
                assert_eq!(a.count(), 0, "gate sent its request to another user");
                assert_eq!(w.last_record()["decided_by"], "error");
            }
            User::Current => {
                // uid 65534 listens; the socket file is handed to root afterwards.
                let dir = w.env.root.join("nobody");
                make_private_dir(&dir, NOBODY);
                let path = dir.join("approver.sock");
                let mut listener = ForeignListener::start(&path);
                std::os::unix::fs::chown(&path, Some(0), Some(0)).unwrap();
                let out = w.gate().socket(&path).c("touch ran").run();
                assert_nothing_ran(&out, &w.file("ran"));
                out.assert_stderr_contains("the approval socket cannot be trusted")
                    .assert_stderr_contains(&format!(
                        "runs as uid {NOBODY}, not as this user (uid 0)"
                    ));
                assert_eq!(
                    listener.received(),
                    0,
                    "gate sent bytes to an approver of another user"
                );
                assert_eq!(w.last_record()["decided_by"], "error");
            }
        }
    }
}

/// A listener running as uid 65534 (Python, through setpriv): it accepts one
/// connection and reports how many bytes arrived on it.
struct ForeignListener {
    child: Child,
    lines: BufReader<std::process::ChildStdout>,
}

const FOREIGN_LISTENER: &str = r#"
import os, socket, sys
path = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
os.chmod(path, 0o600)
s.listen(1)
print("ready", flush=True)
s.settimeout(20)
c, _ = s.accept()
c.settimeout(20)
total = 0
while True:
    chunk = c.recv(65536)
    if not chunk:
        break
    total += len(chunk)
print(total, flush=True)
"#;

impl ForeignListener {
    fn start(path: &Path) -> ForeignListener {
        let mut child = command_as(User::Unprivileged, python3_for(User::Unprivileged))
            .args(["-c", FOREIGN_LISTENER])
            .arg(path)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 starts");
        let mut lines = BufReader::new(child.stdout.take().unwrap());
        let mut ready = String::new();
        lines.read_line(&mut ready).unwrap();
        assert_eq!(ready, "ready\n", "the uid 65534 listener did not start");
        ForeignListener { child, lines }
    }

    /// The number of bytes the one connection carried (waits for it to close).
    fn received(&mut self) -> usize {
        let mut text = String::new();
        self.lines.read_line(&mut text).unwrap();
        text.trim()
            .parse()
            .unwrap_or_else(|_| panic!("the listener said {text:?}"))
    }
}

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

impl Drop for ForeignListener {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---------------------------------------------------------------------------------------
// Many at once.

#[test]
fn two_hundred_gates_at_once_each_get_their_own_decision() {
    const N: usize = 200;
    let w = World::new();
    // The approver holds every answer until all N requests wait at once, then approves
    // the even-numbered commands and denies the odd ones.
    let waiting = Arc::new((Mutex::new(0usize), Condvar::new()));
    let most = Arc::new(AtomicUsize::new(0));
    let a = {
        let waiting = waiting.clone();
        let most = most.clone();
        Approver::start(move |r| {
            let n: usize = r
                .command()
                .strip_prefix("echo out-")
                .and_then(|n| n.parse().ok())
                .unwrap_or(usize::MAX);
            let (count, changed) = &*waiting;
            let mut count = count.lock().unwrap();
            *count += 1;
            most.fetch_max(*count, Ordering::SeqCst);
            changed.notify_all();
            let end = Instant::now() + Duration::from_secs(100);
            while *count < N {
                let left = end.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                count = changed.wait_timeout(count, left).unwrap().0;
            }
            drop(count);
            if n % 2 == 0 {
                r.approve()
            } else {
                r.deny(&format!("odd number {n}"))
            }
        })
    };
    let gates: Vec<Proc> = (0..N)
        .map(|i| {
            w.gate()
                .socket(&a.path)
                .timeout(150)
                .deadline(Duration::from_secs(170))
                .c(format!("echo out-{i}"))
                .spawn()
        })
        .collect();
    for (i, gate) in gates.into_iter().enumerate() {
        let out = gate.wait();
        if i % 2 == 0 {
            out.assert_code(0).assert_stdout(&format!("out-{i}\n"));
            // At most the one line saying that it waited (the last ones did not wait).
            assert_eq!(out.stderr_after_waiting(), "", "{}", out.report());
        } else {
            out.assert_refused().assert_stderr_contains(&format!(
                "`echo out-{i}`: the approver denied it: \"odd number {i}\""
            ));
            assert_eq!(out.stdout(), "");
        }
    }
    assert_eq!(
        most.load(Ordering::SeqCst),
        N,
        "not all requests were pending at once"
    );
    let requests = a.requests();
    assert_eq!(requests.len(), N, "one request per gate");
    let asked: BTreeMap<String, String> = requests
        .iter()
        .map(|r| (r.call_id().to_owned(), r.command().to_owned()))
        .collect();
    assert_eq!(asked.len(), N, "call ids are unique");

    let text = fs::read_to_string(&w.audit).unwrap();
    assert!(text.ends_with('\n'));
    let records = audit_records(&w.audit);
    assert_eq!(records.len(), N, "one audit line per gate");
    let mut recorded = BTreeSet::new();
    for r in &records {
        let call_id = r["call_id"].as_str().unwrap();
        let command = asked
            .get(call_id)
            .unwrap_or_else(|| panic!("an audit record of a call nobody asked about: {r}"));
        assert_eq!(r["command"], command.as_str(), "{r}");
        let n: usize = command.strip_prefix("echo out-").unwrap().parse().unwrap();
        let expected = if n % 2 == 0 { "allow" } else { "deny" };
        assert_eq!(r["decision"], expected, "{r}");
        assert_eq!(r["decided_by"], "socket", "{r}");
        recorded.insert(call_id.to_owned());
    }
    assert_eq!(recorded.len(), N, "each call recorded once");
}
