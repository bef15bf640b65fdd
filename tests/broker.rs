//! The broker `gate serve` and the approver tools `gate pending`, `gate approve` and
//! `gate deny`, black-box: the real binary as broker and as approver tool; as requester
//! either the real gate at level `ask` or a raw connection the test writes itself (to
//! see the exact lines the broker sends, and to misbehave on purpose).
//!
//! Every wait has a deadline and polls for the state it waits for (a request listed as
//! pending, a socket in place); nothing sleeps and hopes. The tests that cross users
//! (a broker of uid 65534, an approver of uid 65534) need root, and fail saying so
//! without it.

use crate::common;

use std::collections::HashMap;
use std::fs;
use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use common::*;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};

/// How long any one wait may take before the test fails.
const WAIT: Duration = Duration::from_secs(30);

// ---------------------------------------------------------------------------------------
// Helpers: a broker, raw requesters, raw approvers.

/// Wait until the broker lists `n` waiting requests, and return the list.
fn wait_listed(approver: &mut Approver, n: usize) -> Vec<Value> {
    let deadline = Instant::now() + WAIT;
    loop {
        let list = approver.list();
        if list.len() == n {
            return list;
        }
        assert!(Instant::now() < deadline, "{list:?}");
        thread::sleep(Duration::from_millis(5));
    }
}

/// The short id of the listed request whose call id is `call`.
fn listed_id(list: &[Value], call: &str) -> String {
    list.iter().find(|i| i["call_id"] == call).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// A running `gate serve`, killed if the test ends without stopping it.
struct Broker {
    running: Option<Running>,
    socket: PathBuf,
    /// XDG_RUNTIME_DIR of the broker and its gates; None: unset.
    runtime: Option<PathBuf>,
    user: User,
}

/// `gate` with `XDG_RUNTIME_DIR` set to `runtime`, or unset.
fn with_runtime(gate: Gate, runtime: Option<&Path>) -> Gate {
    match runtime {
        Some(dir) => gate.env("XDG_RUNTIME_DIR", dir),
        None => gate.env_remove("XDG_RUNTIME_DIR"),
    }
}

impl Broker {
    /// Start a broker as `user` on the default socket of a fresh runtime directory.
    fn start(env: &TestEnv, user: User) -> Broker {
        let runtime = runtime_dir(env, user);
        let socket = runtime.join("gate/broker.sock");
        Broker::start_with(env, user, runtime, socket, &[])
    }

    /// Start a broker as `user` without `XDG_RUNTIME_DIR`: its default socket is then in
    /// `$XDG_STATE_HOME/gate/run`.
    fn start_without_runtime_dir(env: &TestEnv, user: User) -> Broker {
        let socket = env.state.join("gate/run/broker.sock");
        Broker::spawn(env, user, None, socket, &[])
    }

    fn start_with(
        env: &TestEnv,
        user: User,
        runtime: PathBuf,
        socket: PathBuf,
        args: &[&str],
    ) -> Broker {
        Broker::spawn(env, user, Some(runtime), socket, args)
    }

    fn spawn(
        env: &TestEnv,
        user: User,
        runtime: Option<PathBuf>,
        socket: PathBuf,
        args: &[&str],
    ) -> Broker {
        let running = with_runtime(env.gate().user(user), runtime.as_deref())
            .arg("serve")
            .args(args)
            .deadline(Duration::from_secs(300))
            .spawn();
        let mut broker = Broker {
            running: Some(running),
            socket,
            runtime,
            user,
        };
        let deadline = Instant::now() + WAIT;
        while !fs::symlink_metadata(&broker.socket).is_ok_and(|m| m.file_type().is_socket()) {
            if Instant::now() > deadline {
                let out = broker.kill();
                panic!(
                    "the broker did not create {} in time\n{}",
                    broker.socket.display(),
                    out.report()
                );
            }
            thread::sleep(Duration::from_millis(5));
        }
        broker
    }

    fn pid(&self) -> Pid {
        Pid::from_raw(self.running.as_ref().unwrap().pid as i32)
    }

    /// A gate process with this broker's runtime directory, as the broker's user.
    fn gate(&self, env: &TestEnv) -> Gate {
        with_runtime(env.gate().user(self.user), self.runtime.as_deref())
    }

    /// A gate at level ask that has to ask this broker about `command`.
    fn asking(&self, env: &TestEnv, session: &str, command: &str) -> Running {
        self.gate(env)
            .args([
                "--level",
                "ask",
                "--no-config",
                "--no-tty",
                "--timeout",
                "120",
            ])
            .args(["--session", session, "-c", command])
            .deadline(Duration::from_secs(150))
            .spawn()
    }

    /// `gate approve`/`deny`/`pending` with these arguments.
    fn tool(&self, env: &TestEnv, args: &[&str]) -> Outcome {
        self.gate(env).args(args).run()
    }

    /// SIGTERM, then the broker's exit.
    fn stop(mut self) -> Outcome {
        kill(self.pid(), Signal::SIGTERM).unwrap();
        self.running.take().unwrap().wait()
    }

    fn kill(&mut self) -> Outcome {
        let _ = kill(self.pid(), Signal::SIGKILL);
        self.running.take().unwrap().wait()
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        if let Some(running) = &self.running {
            let _ = kill(Pid::from_raw(running.pid as i32), Signal::SIGKILL);
        }
    }
}

fn token_of(socket: &Path) -> String {
    let mut name = socket.as_os_str().to_owned();
    name.push(".token");
    fs::read_to_string(PathBuf::from(name))
        .unwrap()
        .trim_end()
        .to_owned()
}

fn connect(socket: &Path) -> UnixStream {
    let stream = UnixStream::connect(socket)
        .unwrap_or_else(|e| panic!("cannot connect to {}: {e}", socket.display()));
    stream.set_read_timeout(Some(WAIT)).unwrap();
    stream.set_write_timeout(Some(WAIT)).unwrap();
    stream
}

fn approval_line(call_id: &str, session: &str, command: &str, remember_supported: bool) -> String {
    json!({
        "type": "approval_request", "version": 1, "call_id": call_id, "session_id": session,
        "command": command, "work_dir": "/work", "level": "ask", "timeout_seconds": 60,
        "remember_supported": remember_supported, "pid": 4242,
    })
    .to_string()
        + "\n"
}

fn question_line(call_id: &str, question: &str, options: &[&str]) -> String {
    json!({
        "type": "question_request", "version": 1, "call_id": call_id, "session_id": "s",
        "question": question, "options": options, "allow_multiple": false,
        "timeout_seconds": 60, "pid": 4243,
    })
    .to_string()
        + "\n"
}

/// A requester connection the test drives itself.
struct Requester {
    stream: UnixStream,
}

impl Requester {
    fn send(socket: &Path, line: &str) -> Requester {
        let mut stream = connect(socket);
        // The broker may close a bad request before it is all written: what it sends
        // back (nothing) is what the tests look at.
        let _ = stream.write_all(line.as_bytes());
        Requester { stream }
    }

    fn approval(socket: &Path, call_id: &str, session: &str, command: &str) -> Requester {
        Requester::send(socket, &approval_line(call_id, session, command, true))
    }

    /// Everything the broker sends before it closes the connection, as lines.
    fn lines(mut self) -> Vec<String> {
        let mut bytes = Vec::new();
        match self.stream.read_to_end(&mut bytes) {
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::ConnectionReset => {}
            Err(e) => panic!(
                "the broker did not close the requester's connection: {e}; got {:?}",
                String::from_utf8_lossy(&bytes)
            ),
        }
        let text = String::from_utf8(bytes).unwrap();
        assert!(
            text.is_empty() || text.ends_with('\n'),
            "a partial line: {text:?}"
        );
        text.lines().map(str::to_owned).collect()
    }

    /// The one line the broker answers with, parsed.
    #[track_caller]
    fn only_reply(self) -> Value {
        let lines = self.lines();
        assert_eq!(lines.len(), 1, "exactly one answer line: {lines:?}");
        serde_json::from_str(&lines[0]).unwrap()
    }
}

/// An approver tool the test drives itself.
struct Approver {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
}

impl Approver {
    /// Connect and say hello with `token`; the reply is not checked.
    fn hello(socket: &Path, token: &str) -> (Approver, Option<Value>) {
        let stream = connect(socket);
        let mut approver = Approver {
            reader: BufReader::new(stream.try_clone().unwrap()),
            writer: stream,
        };
        approver.send(&json!({"type": "hello", "version": 1, "role": "approver", "token": token}));
        let reply = approver.recv();
        (approver, reply)
    }

    /// Connect with the right token, and require the welcome.
    fn connect(socket: &Path) -> Approver {
        let (approver, reply) = Approver::hello(socket, &token_of(socket));
        assert_eq!(reply, Some(json!({"type": "welcome", "version": 1})));
        approver
    }

    fn send(&mut self, message: &Value) {
        self.send_raw(format!("{message}\n").as_bytes());
    }

    /// Write; a connection the broker already closed is not an error here (the next
    /// `recv` says what the broker did).
    fn send_raw(&mut self, bytes: &[u8]) {
        match self.writer.write_all(bytes) {
            Ok(()) => {}
            Err(e) if matches!(e.kind(), ErrorKind::BrokenPipe | ErrorKind::ConnectionReset) => {}
            Err(e) => panic!("cannot write to the broker: {e}"),
        }
    }

    /// The next line, or None once the broker closed the connection.
    fn recv(&mut self) -> Option<Value> {
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(0) => None,
            Ok(_) => Some(serde_json::from_str(&line).unwrap()),
            Err(e) if e.kind() == ErrorKind::ConnectionReset => None,
            Err(e) => panic!("no line from the broker: {e}"),
        }
    }

    fn list(&mut self) -> Vec<Value> {
        self.send(&json!({"type": "list"}));
        let header = self.recv().expect("a pending header");
        assert_eq!(header["type"], "pending", "{header}");
        let count = header["count"].as_u64().unwrap();
        (0..count)
            .map(|_| {
                let item = self.recv().expect("a request line");
                assert_eq!(item["type"], "request", "{item}");
                item
            })
            .collect()
    }

    /// Send a decision for `id`, return the broker's reply.
    fn decide(&mut self, id: &str, decision: Value) -> Value {
        let mut message = decision;
        message["type"] = json!("decide");
        message["id"] = json!(id);
        self.send(&message);
        self.recv().expect("a reply to decide")
    }
}

/// Wait until requests whose commands (or questions) are `texts` are pending, and
/// return their ids by text.
fn wait_pending(socket: &Path, texts: &[&str]) -> HashMap<String, String> {
    let mut approver = Approver::connect(socket);
    let deadline = Instant::now() + WAIT;
    loop {
        let list = approver.list();
        let found: HashMap<String, String> = list
            .iter()
            .filter_map(|item| {
                let text = item
                    .get("command")
                    .or_else(|| item.get("question"))?
                    .as_str()?;
                Some((text.to_owned(), item["id"].as_str()?.to_owned()))
            })
            .collect();
        if texts.iter().all(|t| found.contains_key(*t)) {
            return found;
        }
        assert!(
            Instant::now() < deadline,
            "requests {texts:?} not pending in time; pending: {list:?}"
        );
        thread::sleep(Duration::from_millis(5));
    }
}

/// Wait until nothing is pending.
fn wait_none_pending(socket: &Path) {
    let mut approver = Approver::connect(socket);
    let deadline = Instant::now() + WAIT;
    loop {
        let list = approver.list();
        if list.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "requests still pending: {list:?}"
        );
        thread::sleep(Duration::from_millis(5));
    }
}

fn approve() -> Value {
    json!({"decision": "approve", "source": "test"})
}

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().mode() & 0o7777
}

// ---------------------------------------------------------------------------------------
// Start, files, stop.

#[test]
fn serve_makes_a_private_socket_and_token_and_removes_them_when_stopped() {
    let env = TestEnv::new();
    let broker = Broker::start(&env, User::Current);
    let socket = broker.socket.clone();
    let dir = socket.parent().unwrap().to_path_buf();
    let token = PathBuf::from(format!("{}.token", socket.display()));
    assert_eq!(mode(&dir), 0o700, "the socket's directory");
    assert_eq!(mode(&socket), 0o600, "the socket");
    assert_eq!(mode(&token), 0o600, "the token file");
    let text = token_of(&socket);
    assert_eq!(text.len(), 64, "{text:?}");
    assert!(text.bytes().all(|b| b.is_ascii_hexdigit()), "{text:?}");
    // Only what the broker made is there (and the lock); no temporary names left.
    let mut names: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["broker.sock", "broker.sock.lock", "broker.sock.token"]
    );

    let out = broker.stop();
    out.assert_code(0);
    assert!(
        out.stderr()
            .starts_with(&format!("gate serve: listening on {}", socket.display())),
        "{}",
        out.report()
    );
    assert!(!socket.exists(), "the socket is removed on exit");
    assert!(!token.exists(), "the token is removed on exit");
}

#[test]
fn a_new_token_each_start() {
    let env = TestEnv::new();
    let broker = Broker::start(&env, User::Current);
    let first = token_of(&broker.socket);
    let (runtime, socket) = (broker.runtime.clone().unwrap(), broker.socket.clone());
    broker.stop().assert_code(0);
    let broker = Broker::start_with(&env, User::Current, runtime, socket, &[]);
    assert_ne!(first, token_of(&broker.socket));
    broker.stop().assert_code(0);
}

#[test]
fn a_stale_socket_is_replaced() {
    let env = TestEnv::new();
    let runtime = runtime_dir(&env, User::Current);
    let dir = runtime.join("gate");
    fs::create_dir(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
    let socket = dir.join("broker.sock");
    drop(UnixListener::bind(&socket).unwrap());
    let stale = fs::symlink_metadata(&socket).unwrap().ino();
    let broker = Broker::start_with(&env, User::Current, runtime, socket.clone(), &[]);
    // Wait for the replacement (the stale file is a socket already).
    let deadline = Instant::now() + WAIT;
    while fs::symlink_metadata(&socket).map(|m| m.ino()).ok() == Some(stale) {
        assert!(
            Instant::now() < deadline,
            "the stale socket was not replaced"
        );
        thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(mode(&socket), 0o600);
    let mut approver = Approver::connect(&socket);
    assert!(approver.list().is_empty());
    let out = broker.stop();
    out.assert_code(0)
        .assert_stderr_contains("replacing the stale socket");
}

#[test]
fn a_live_broker_is_not_replaced() {
    let env = TestEnv::new();
    let broker = Broker::start(&env, User::Current);
    let before = fs::symlink_metadata(&broker.socket).unwrap().ino();
    let out = broker.tool(&env, &["serve"]);
    out.assert_gate_error()
        .assert_stderr_contains("a broker is already listening on");
    assert_eq!(fs::symlink_metadata(&broker.socket).unwrap().ino(), before);
    // The first broker still works.
    let r = Requester::approval(&broker.socket, "c1", "s", "true");
    let ids = wait_pending(&broker.socket, &["true"]);
    broker.tool(&env, &["approve", &ids["true"]]).assert_code(0);
    assert_eq!(r.only_reply()["decision"], "approve");
    broker.stop().assert_code(0);
}

#[test]
fn a_socket_someone_else_listens_on_is_not_replaced() {
    let env = TestEnv::new();
    let runtime = runtime_dir(&env, User::Current);
    let dir = runtime.join("gate");
    fs::create_dir(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
    let socket = dir.join("broker.sock");
    let listener = UnixListener::bind(&socket).unwrap();
    let out = env
        .gate()
        .env("XDG_RUNTIME_DIR", &runtime)
        .arg("serve")
        .run();
    out.assert_gate_error().assert_stderr_contains(&format!(
        "a broker is already listening on {}",
        socket.display()
    ));
    // Still the test's own listener there.
    let _client = UnixStream::connect(&socket).unwrap();
    listener.set_nonblocking(true).unwrap();
    let deadline = Instant::now() + WAIT;
    loop {
        match listener.accept() {
            Ok(_) => break,
            Err(e) if e.kind() == ErrorKind::WouldBlock && Instant::now() < deadline => {
                thread::sleep(Duration::from_millis(5))
            }
            Err(e) => panic!("the test's socket no longer takes connections: {e}"),
        }
    }
}

#[test]
#[ignore = "root tier: cargo test --lib --test all -- --ignored, as root"]
fn what_is_not_a_socket_or_not_ours_is_not_replaced() {
    needs_root(&format!(
        "this test needs root: it gives a stale socket to uid {NOBODY}"
    ));
    let env = TestEnv::new();
    let runtime = runtime_dir(&env, User::Current);
    let dir = runtime.join("gate");
    fs::create_dir(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
    let socket = dir.join("broker.sock");
    let serve = || {
        env.gate()
            .env("XDG_RUNTIME_DIR", &runtime)
            .arg("serve")
            .run()
    };

    fs::write(&socket, "precious").unwrap();
    serve()
        .assert_gate_error()
        .assert_stderr_contains("is not a socket");
    assert_eq!(fs::read_to_string(&socket).unwrap(), "precious");
    fs::remove_file(&socket).unwrap();

    drop(UnixListener::bind(&socket).unwrap());
    std::os::unix::fs::lchown(&socket, Some(NOBODY), Some(NOBODY)).unwrap();
    serve()
        .assert_gate_error()
        .assert_stderr_contains(&format!("belongs to uid {NOBODY}"));
    assert_eq!(fs::symlink_metadata(&socket).unwrap().uid(), NOBODY);
}

#[test]
fn the_socket_directory_must_be_private() {
    let env = TestEnv::new();
    let open = env.root.join("open");
    fs::create_dir(&open).unwrap();
    fs::set_permissions(&open, fs::Permissions::from_mode(0o755)).unwrap();
    let socket = open.join("b.sock");
    let out = env.gate().args(["serve", "--socket"]).arg(&socket).run();
    out.assert_gate_error()
        .assert_stderr_contains("must be private");
    assert!(!socket.exists());

    // A directory that does not exist yet is made private.
    let fresh = env.root.join("fresh");
    let socket = fresh.join("b.sock");
    let broker = Broker::start_with(
        &env,
        User::Current,
        env.root.clone(),
        socket.clone(),
        &["--socket", socket.to_str().unwrap()],
    );
    assert_eq!(mode(&fresh), 0o700);
    assert_eq!(mode(&socket), 0o600);
    broker.stop().assert_code(0);
}

// ---------------------------------------------------------------------------------------
// Approving and denying.

for_each_user! {
    /// The real gate asks the broker; `gate pending` shows it; `gate approve` runs it and
    /// `gate deny` refuses it with the message reaching the model.
    fn approve_deny_and_pending_end_to_end(user) {
        let env = TestEnv::new();
        env.assert_side_effects_are_visible(user);
        let broker = Broker::start(&env, user);
        broker.tool(&env, &["pending"]).assert_code(0).assert_stdout("no requests are waiting\n");

        let approved = broker.asking(&env, "s1", "touch approved");
        let denied = broker.asking(&env, "s1", "touch denied");
        // As the broker's user: a broker of another uid turns the test's own raw
        // connections away.
        let ids = wait_pending_as(&env, &broker, &["touch approved", "touch denied"]);

        let table = broker.tool(&env, &["pending"]);
        table.assert_code(0);
        let text = table.stdout();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lines[0].starts_with("ID") && lines[0].ends_with("COMMAND/QUESTION"), "{text}");
        for (command, id) in &ids {
            let row = lines.iter().find(|l| l.ends_with(command.as_str())).expect(command);
            assert!(row.starts_with(&format!("{id} ")), "{text}");
            assert!(row.contains(" s1 "), "{text}");
            assert!(row.contains(env.work.to_str().unwrap()), "{text}");
        }

        let json = broker.tool(&env, &["pending", "--json"]);
        json.assert_code(0);
        let items: Vec<Value> = serde_json::from_str(&json.stdout()).unwrap();
        assert_eq!(items.len(), 2);
        for item in &items {
            assert_eq!(item["kind"], "approval");
            assert_eq!(item["session_id"], "s1");
            assert_eq!(item["work_dir"], env.work.to_str().unwrap());
            assert_eq!(item["remember_supported"], true);
            assert_eq!(item["timeout_seconds"], 120);
            assert!(item["age_seconds"].is_u64() && item["pid"].is_u64(), "{item}");
        }

        broker
            .tool(&env, &["approve", &ids["touch approved"]])
            .assert_code(0)
            .assert_stdout("answered\n");
        broker
            .tool(&env, &["deny", &ids["touch denied"], "--message", "use make clean instead"])
            .assert_code(0)
            .assert_stdout("answered\n");

        let ran = approved.wait();
        ran.assert_code(0);
        assert!(env.file("approved").exists(), "{}", ran.report());
        let refused = denied.wait();
        refused.assert_refused().assert_stderr_contains("use make clean instead");
        assert_absent(&env.file("denied"), &refused);

        broker.tool(&env, &["pending"]).assert_code(0).assert_stdout("no requests are waiting\n");
        let out = broker.stop();
        out.assert_code(0);
        let log = out.stderr();
        assert!(log.contains("`touch approved`") && log.contains("approved by gate approve"), "{log}");
        assert!(log.contains("denied by gate deny: use make clean instead"), "{log}");
    }
}

#[test]
fn the_requester_gets_the_decision_the_approver_tool_sent() {
    let env = TestEnv::new();
    let broker = Broker::start(&env, User::Current);
    let a = Requester::approval(&broker.socket, "call-a", "s", "make a");
    let b = Requester::approval(&broker.socket, "call-b", "s", "make b");
    let ids = wait_pending(&broker.socket, &["make a", "make b"]);
    broker
        .tool(&env, &["approve", &ids["make a"]])
        .assert_code(0);
    broker
        .tool(
            &env,
            &["deny", &ids["make b"], "--message", "no \"b\"\n today"],
        )
        .assert_code(0);
    assert_eq!(
        a.only_reply(),
        json!({"type": "decision", "call_id": "call-a", "decision": "approve",
               "remember": false, "source": "gate approve"})
    );
    assert_eq!(
        b.only_reply(),
        json!({"type": "decision", "call_id": "call-b", "decision": "deny",
               "message": "no \"b\"\n today", "source": "gate deny"})
    );
    broker.stop().assert_code(0);
}

#[test]
fn answers_report_answered_already_settled_and_not_found() {
    let env = TestEnv::new();
    let broker = Broker::start(&env, User::Current);
    let r = Requester::approval(&broker.socket, "c1", "s", "make");
    let id = wait_pending(&broker.socket, &["make"])["make"].clone();
    assert_eq!(id, "1", "the first request's id");

    broker
        .tool(&env, &["approve", &id])
        .assert_code(0)
        .assert_stdout("answered\n");
    broker
        .tool(&env, &["approve", &id])
        .assert_code(3)
        .assert_stdout("already settled\n");
    broker
        .tool(&env, &["deny", &id])
        .assert_code(3)
        .assert_stdout("already settled\n");
    for unknown in ["2", "999", "0", "01", "+1", "x", "18446744073709551616"] {
        broker
            .tool(&env, &["approve", unknown])
            .assert_code(4)
            .assert_stdout("not found\n");
        broker
            .tool(&env, &["deny", unknown])
            .assert_code(4)
            .assert_stdout("not found\n");
    }
    // The requester got exactly the first answer.
    assert_eq!(r.only_reply()["decision"], "approve");
    broker.stop().assert_code(0);
}

/// The call ids of the waiting requests, by command, as `gate pending --json` prints them.
fn call_ids(env: &TestEnv, broker: &Broker) -> HashMap<String, String> {
    let out = broker.tool(env, &["pending", "--json"]);
    out.assert_code(0);
    let items: Vec<Value> = serde_json::from_str(&out.stdout()).unwrap();
    items
        .iter()
        .map(|item| {
            (
                item["command"].as_str().unwrap().to_owned(),
                item["call_id"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// `gate approve` and `gate deny` take the call id that `gate pending --json` prints
/// (and the protocol uses) as well as the short id.
#[test]
fn approve_and_deny_take_the_call_id_of_a_real_request() {
    let env = TestEnv::new();
    let broker = Broker::start(&env, User::Current);
    let approved = broker.asking(&env, "s1", "touch approved");
    let denied = broker.asking(&env, "s1", "touch denied");
    let ids = wait_pending(&broker.socket, &["touch approved", "touch denied"]);
    let calls = call_ids(&env, &broker);
    for command in ["touch approved", "touch denied"] {
        assert!(
            !calls[command].bytes().all(|b| b.is_ascii_digit()),
            "a call id that looks like a short id proves nothing: {calls:?}"
        );
        assert_ne!(calls[command], ids[command]);
    }
    broker
        .tool(&env, &["approve", &calls["touch approved"]])
        .assert_code(0)
        .assert_stdout("answered\n");
    broker
        .tool(
            &env,
            &["deny", &calls["touch denied"], "--message", "not this one"],
        )
        .assert_code(0)
        .assert_stdout("answered\n");
    let ran = approved.wait();
    ran.assert_code(0);
    assert!(env.file("approved").exists(), "{}", ran.report());
    let refused = denied.wait();
    refused
        .assert_refused()
        .assert_stderr_contains("not this one");
    assert_absent(&env.file("denied"), &refused);
    // Settled: by either id it is already settled now.
    for id in [&calls["touch approved"], &ids["touch approved"]] {
        broker
            .tool(&env, &["approve", id])
            .assert_code(3)
            .assert_stdout("already settled\n");
    }
    broker
        .tool(&env, &["deny", &calls["touch denied"]])
        .assert_code(3)
        .assert_stdout("already settled\n");
    broker.stop().assert_code(0);
}

/// A call id is matched exactly: a wrong one, a prefix, another case or a value no call
/// id can have is not found and approves nothing; an all-digit value is a short id.
#[test]
fn a_wrong_call_id_is_not_found_and_settles_nothing() {
    let env = TestEnv::new();
    let broker = Broker::start(&env, User::Current);
    let r = Requester::approval(&broker.socket, "call-7a", "s", "make a");
    let digits = Requester::approval(&broker.socket, "77", "s", "make b");
    let ids = wait_pending(&broker.socket, &["make a", "make b"]);
    assert_eq!(ids["make b"], "2", "{ids:?}");
    for wrong in [
        "call-7", "call-7a ", "CALL-7A", "call-7ab", "call 7a", "-", "77",
    ] {
        broker
            .tool(&env, &["approve", wrong])
            .assert_code(4)
            .assert_stdout("not found\n");
        broker
            .tool(&env, &["deny", wrong])
            .assert_code(4)
            .assert_stdout("not found\n");
    }
    // Both still wait.
    wait_pending(&broker.socket, &["make a", "make b"]);
    broker
        .tool(&env, &["deny", "call-7a", "--message", "no"])
        .assert_code(0)
        .assert_stdout("answered\n");
    broker
        .tool(&env, &["approve", "2"])
        .assert_code(0)
        .assert_stdout("answered\n");
    assert_eq!(r.only_reply()["decision"], "deny");
    assert_eq!(digits.only_reply()["decision"], "approve");
    broker.stop().assert_code(0);
}

#[test]
fn the_first_answer_wins() {
    let env = TestEnv::new();
    let broker = Broker::start(&env, User::Current);
    let mut one = Approver::connect(&broker.socket);
    let mut two = Approver::connect(&broker.socket);
    for round in 0..20 {
        let command = format!("race {round}");
        let r = Requester::approval(&broker.socket, &format!("c{round}"), "s", &command);
        let id = wait_pending(&broker.socket, &[&command])[&command].clone();
        // Both answers are on their way before either reply is read.
        let decide = |verdict: Value| {
            let mut m = verdict;
            m["type"] = json!("decide");
            m["id"] = json!(id);
            m
        };
        one.send(&decide(json!({"decision": "approve", "source": "one"})));
        two.send(&decide(
            json!({"decision": "deny", "message": "two", "source": "two"}),
        ));
        let first = one.recv().unwrap();
        let second = two.recv().unwrap();
        let settles = [first["settle"].clone(), second["settle"].clone()];
        let winner = match (&settles[0], &settles[1]) {
            (a, b) if a == "answered" && b == "already_settled" => "one",
            (a, b) if a == "already_settled" && b == "answered" => "two",
            _ => panic!("round {round}: one answer must win: {first} / {second}"),
        };
        let reply = r.only_reply();
        assert_eq!(reply["source"], winner, "round {round}: {reply}");
    }
    broker.stop().assert_code(0);
}

#[test]
fn remember_is_answered_by_the_broker_for_the_same_session_only() {
    let env = TestEnv::new();
    let broker = Broker::start(&env, User::Current);
    let first = Requester::approval(&broker.socket, "c1", "s1", "make test");
    let id = wait_pending(&broker.socket, &["make test"])["make test"].clone();
    broker
        .tool(&env, &["approve", &id, "--remember"])
        .assert_code(0);
    assert_eq!(
        first.only_reply(),
        json!({"type": "decision", "call_id": "c1", "decision": "approve", "remember": true,
               "kept": true, "source": "gate approve"})
    );

    // The same command (trimmed) in the same session: the broker answers at once.
    let again = Requester::approval(&broker.socket, "c2", "s1", "  make test ");
    assert_eq!(
        again.only_reply(),
        json!({"type": "decision", "call_id": "c2", "decision": "approve", "remember": false,
               "kept": true, "source": "remembered"})
    );
    // Another session, another command: asked.
    let other_session = Requester::approval(&broker.socket, "c3", "s2", "make test");
    let other_command = Requester::approval(&broker.socket, "c4", "s1", "make test -k x");
    let ids = wait_pending(&broker.socket, &["make test", "make test -k x"]);
    let mut approver = Approver::connect(&broker.socket);
    let pending = approver.list();
    assert_eq!(pending.len(), 2, "{pending:?}");
    assert_eq!(
        approver.decide(&ids["make test"], json!({"decision": "deny"}))["settle"],
        "answered"
    );
    assert_eq!(other_session.only_reply()["decision"], "deny");
    assert_eq!(
        approver.decide(&ids["make test -k x"], json!({"decision": "deny"}))["settle"],
        "answered"
    );
    assert_eq!(other_command.only_reply()["decision"], "deny");
    let out = broker.stop();
    out.assert_code(0)
        .assert_stderr_contains("session s1: `  make test ` approved from a remembered approval");
}

/// The requests socket (`--requests-socket`) never remembers: a request there says
/// which session it is, and other users (or other runners, through `ssh -R`) send them.
/// Control: the same two requests on the broker's own socket, the second answered from
/// memory.
#[test]
fn the_requests_socket_neither_remembers_nor_answers_from_memory() {
    let env = TestEnv::new();
    let runtime = runtime_dir(&env, User::Current);
    let socket = runtime.join("gate/broker.sock");
    let requests = runtime.join("requests.sock");
    let requests_arg = requests.to_str().unwrap().to_owned();
    let broker = Broker::start_with(
        &env,
        User::Current,
        runtime,
        socket,
        &["--requests-socket", &requests_arg],
    );
    // The broker opens the requests socket a moment after the one start_with waits for.
    let end = std::time::Instant::now() + common::DEADLINE;
    while !requests.exists() && std::time::Instant::now() < end {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(mode(&requests), 0o666);
    for (via, remembers) in [(&broker.socket, true), (&requests, false)] {
        let session = if remembers { "own" } else { "via-requests" };
        let (c1, c2) = (format!("{session}-1"), format!("{session}-2"));
        let first = Requester::approval(via, &c1, session, "make test");
        let id = wait_pending(&broker.socket, &["make test"])["make test"].clone();
        broker
            .tool(&env, &["approve", &id, "--remember"])
            .assert_code(0);
        assert_eq!(first.only_reply()["decision"], "approve");
        let again = Requester::approval(via, &c2, session, "make test");
        if remembers {
            assert_eq!(again.only_reply()["source"], "remembered");
        } else {
            // Asked again, and listed as not rememberable.
            let mut approver = Approver::connect(&broker.socket);
            let listed = wait_listed(&mut approver, 1);
            assert_eq!(listed[0]["remember_supported"], false, "{listed:?}");
            let id = listed_id(&listed, &c2);
            approver.decide(&id, json!({"decision": "deny"}));
            assert_eq!(again.only_reply()["decision"], "deny");
        }
    }
}

#[test]
fn a_remembered_rule_covers_its_prefix_for_the_session() {
    let env = TestEnv::new();
    let broker = Broker::start(&env, User::Current);
    let first = Requester::approval(&broker.socket, "c1", "s1", "npm test -- a");
    let id = wait_pending(&broker.socket, &["npm test -- a"])["npm test -- a"].clone();

    // An invalid rule is refused and the request stays open.
    broker
        .tool(
            &env,
            &["approve", &id, "--remember-rule", "npm test; rm -rf ~"],
        )
        .assert_gate_error()
        .assert_stderr_contains("not a valid allow rule");
    let mut approver = Approver::connect(&broker.socket);
    assert_eq!(approver.list().len(), 1);

    broker
        .tool(&env, &["approve", &id, "--remember-rule", " npm test "])
        .assert_code(0);
    let reply = first.only_reply();
    assert_eq!(reply["remember_rule"], "npm test", "{reply}");
    assert_eq!(reply["kept"], true, "{reply}");

    let covered = Requester::approval(&broker.socket, "c2", "s1", "npm test --watch");
    assert_eq!(covered.only_reply()["source"], "remembered");
    let exact = Requester::approval(&broker.socket, "c3", "s1", "npm test");
    assert_eq!(exact.only_reply()["source"], "remembered");
    // Not a prefix in words, shell syntax, another session: asked.
    let _a = Requester::approval(&broker.socket, "c4", "s1", "npm testx");
    let _b = Requester::approval(&broker.socket, "c5", "s1", "npm test; id");
    let _c = Requester::approval(&broker.socket, "c6", "s2", "npm test");
    wait_pending(&broker.socket, &["npm testx", "npm test; id", "npm test"]);
    assert_eq!(approver.list().len(), 3);
    broker.stop().assert_code(0);
}

#[test]
fn remembering_answers_the_sessions_other_waiting_requests() {
    let env = TestEnv::new();
    let broker = Broker::start(&env, User::Current);
    let one = Requester::approval(&broker.socket, "c1", "s1", "make build");
    let two = Requester::approval(&broker.socket, "c2", "s1", "make build");
    let elsewhere = Requester::approval(&broker.socket, "c3", "s2", "make build");
    let mut approver = Approver::connect(&broker.socket);
    let list = wait_listed(&mut approver, 3);
    let id_of = |call: &str| listed_id(&list, call);
    broker
        .tool(&env, &["approve", &id_of("c1"), "--remember"])
        .assert_code(0);
    assert_eq!(one.only_reply()["source"], "gate approve");
    assert_eq!(two.only_reply()["source"], "remembered");
    broker.tool(&env, &["approve", &id_of("c2")]).assert_code(3);
    let left = approver.list();
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0]["call_id"], "c3");
    drop(elsewhere);
    broker.stop().assert_code(0);
}

#[test]
fn a_remembered_rule_settles_only_waiting_copies_of_the_command_answered() {
    let env = TestEnv::new();
    let broker = Broker::start(&env, User::Current);
    let one = Requester::approval(&broker.socket, "c1", "s1", "make build");
    let copy = Requester::approval(&broker.socket, "c2", "s1", " make build");
    let covered = Requester::approval(&broker.socket, "c3", "s1", "make build -j2");
    let mut approver = Approver::connect(&broker.socket);
    let list = wait_listed(&mut approver, 3);
    let id_of = |call: &str| listed_id(&list, call);
    broker
        .tool(
            &env,
            &["approve", &id_of("c1"), "--remember-rule", "make build"],
        )
        .assert_code(0);
    assert_eq!(one.only_reply()["source"], "gate approve");
    // The same text the person saw: settled with it.
    assert_eq!(copy.only_reply()["source"], "remembered");
    // A command the new rule covers but the person did not see: still asked.
    let left = approver.list();
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0]["call_id"], "c3");
    // Arriving now, it would be answered from the rule.
    let later = Requester::approval(&broker.socket, "c4", "s1", "make build -j4");
    assert_eq!(later.only_reply()["source"], "remembered");
    assert_eq!(
        approver.decide(&id_of("c3"), json!({"decision": "deny"}))["settle"],
        "answered"
    );
    assert_eq!(covered.only_reply()["decision"], "deny");
    broker.stop().assert_code(0);
}

#[test]
fn remember_covers_a_command_with_shell_syntax_exactly() {
    let env = TestEnv::new();
    let broker = Broker::start(&env, User::Current);
    let first = Requester::approval(&broker.socket, "c1", "s1", "touch a; touch b");
    let id = wait_pending(&broker.socket, &["touch a; touch b"])["touch a; touch b"].clone();
    broker
        .tool(&env, &["approve", &id, "--remember"])
        .assert_code(0);
    assert_eq!(first.only_reply()["decision"], "approve");
    let again = Requester::approval(&broker.socket, "c2", "s1", "touch a; touch b");
    assert_eq!(again.only_reply()["source"], "remembered");
    // A longer command is asked about: remembering a command is not a prefix rule.
    let _longer = Requester::approval(&broker.socket, "c3", "s1", "touch a; touch b; touch c");
    wait_pending(&broker.socket, &["touch a; touch b; touch c"]);
    broker.stop().assert_code(0);
}

#[test]
fn a_request_that_cannot_be_remembered_is_approved_once() {
    let env = TestEnv::new();
    let broker = Broker::start(&env, User::Current);
    let line = approval_line("c1", "s1", "make odd", false);
    let first = Requester::send(&broker.socket, &line);
    let id = wait_pending(&broker.socket, &["make odd"])["make odd"].clone();
    broker
        .tool(&env, &["approve", &id, "--remember"])
        .assert_code(0);
    let reply = first.only_reply();
    assert_eq!(reply["decision"], "approve");
    assert_eq!(reply["remember"], false, "{reply}");
    assert!(reply.get("kept").is_none(), "{reply}");
    // Asked again, whether it can be remembered this time or not.
    let _again = Requester::send(&broker.socket, &approval_line("c2", "s1", "make odd", true));
    wait_pending(&broker.socket, &["make odd"]);
    broker.stop().assert_code(0);
}

#[test]
fn a_command_that_is_not_utf8_cannot_be_remembered() {
    use std::os::unix::ffi::OsStrExt;
    let env = TestEnv::new();
    let broker = Broker::start(&env, User::Current);
    let command = std::ffi::OsStr::from_bytes(b"touch ran-\xff");
    let ask = || {
        broker
            .gate(&env)
            .args([
                "--level",
                "ask",
                "--no-config",
                "--no-tty",
                "--timeout",
                "120",
            ])
            .args(["--session", "s1", "-c"])
            .arg(command)
            .spawn()
    };
    let first = ask();
    let id = wait_pending(&broker.socket, &["touch ran-\u{fffd}"])["touch ran-\u{fffd}"].clone();
    let mut approver = Approver::connect(&broker.socket);
    assert_eq!(approver.list()[0]["remember_supported"], false);
    broker
        .tool(&env, &["approve", &id, "--remember"])
        .assert_code(0);
    first.wait().assert_code(0);
    // Approved once: the same bytes are asked about again.
    let _again = ask();
    wait_pending(&broker.socket, &["touch ran-\u{fffd}"]);
    broker.stop().assert_code(0);
}

#[test]
fn remember_through_the_real_gate() {
    let env = TestEnv::new();
    let broker = Broker::start(&env, User::Current);
    let first = broker.asking(&env, "s1", "touch once");
    let id = wait_pending(&broker.socket, &["touch once"])["touch once"].clone();
    broker
        .tool(&env, &["approve", &id, "--remember"])
        .assert_code(0);
    first.wait().assert_code(0);
    fs::remove_file(env.file("once")).unwrap();
    // Nobody answers this time: the broker does, for the same text with blanks around
    // it, in another directory.
    let elsewhere = env.work.join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    fs::set_permissions(&elsewhere, fs::Permissions::from_mode(0o777)).unwrap();
    let again = broker
        .gate(&env)
        .args(["--level", "ask", "--no-config", "--no-tty"])
        .args(["--session", "s1", "-c", " \ttouch once  "])
        .current_dir(&elsewhere)
        .run();
    again.assert_code(0);
    assert!(elsewhere.join("once").exists(), "{}", again.report());
    let last = audit_records(&env.default_audit_log()).pop().unwrap();
    assert_eq!(last["decided_by"], "remembered", "{last}");
    // Another session is asked.
    let other = broker.asking(&env, "s2", "touch once");
    wait_pending(&broker.socket, &["touch once"]);
    let out = broker.stop();
    out.assert_code(0);
    other
        .wait()
        .assert_refused()
        .assert_stderr_contains("broker stopped");
}

/// Where gate once kept remembered approvals without a broker (`sessions/` in the
/// runtime directory, or in the state directory without one), a file as that code read
/// it: named after an FNV-1a hash of the session id, private to the user, in private
/// directories. A command can write all of that.
fn forge_session_file(sessions: &Path, session: &str, uid: u32) -> PathBuf {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in session.as_bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    let private = |dir: &Path| {
        fs::create_dir_all(dir).unwrap();
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::chown(dir, Some(uid), Some(uid)).unwrap();
    };
    private(sessions.parent().unwrap());
    private(sessions);
    let file = sessions.join(format!("session-{hash:016x}.json"));
    let body = json!({
        "version": 1, "session_id": session,
        "commands": ["touch PWNED"], "rules": ["sh"],
    });
    fs::write(&file, format!("{body}\n")).unwrap();
    fs::set_permissions(&file, fs::Permissions::from_mode(0o600)).unwrap();
    std::os::unix::fs::chown(&file, Some(uid), Some(uid)).unwrap();
    file
}

/// The forged commands: the one the file names, and one its rule `sh` covers.
const FORGED: [&str; 2] = ["touch PWNED", "sh -c 'touch PWNED-by-rule'"];

#[track_caller]
fn assert_forgery_ran_nothing(env: &TestEnv, out: &Outcome) {
    assert_absent(&env.file("PWNED"), out);
    assert_absent(&env.file("PWNED-by-rule"), out);
}

for_each_user! {
    /// No file makes a run `remembered`: a session file forged where the old file store
    /// kept them (runtime directory and state directory) approves nothing, whether a
    /// broker runs or not. Control: an approval remembered through the real broker is
    /// answered from the broker's memory the next time.
    fn a_forged_session_file_approves_nothing(user) {
        let env = TestEnv::new();
        env.assert_side_effects_are_visible(user);
        let uid = uid_of(user);
        let session = "forged-session";
        let runtime = runtime_dir(&env, user);
        forge_session_file(&runtime.join("gate/sessions"), session, uid);
        forge_session_file(&env.state.join("gate/sessions"), session, uid);
        let ask = |runtime: Option<&Path>, command: &str| {
            with_runtime(env.gate().user(user), runtime)
                .args(["--no-config", "--no-tty", "--level", "ask", "--timeout", "120"])
                .args(["--session", session, "-c", command])
                .deadline(Duration::from_secs(150))
        };

        // No broker, nobody to ask: refused, with and without a runtime directory.
        for dir in [Some(runtime.as_path()), None] {
            for command in FORGED {
                let out = ask(dir, command).run();
                out.assert_refused().assert_stderr_contains("there is no approver to ask");
                assert_forgery_ran_nothing(&env, &out);
            }
        }
        for record in audit_records(&env.default_audit_log()) {
            assert_eq!(record["decided_by"], "no-approver", "{record}");
        }

        // A broker: the forged commands are asked about, and wait for a person.
        for broker in [
            Broker::start_with(&env, user, runtime.clone(), runtime.join("gate/broker.sock"), &[]),
            Broker::start_without_runtime_dir(&env, user),
        ] {
            let waiting: Vec<Running> = FORGED
                .iter()
                .map(|c| ask(broker.runtime.as_deref(), c).spawn())
                .collect();
            wait_pending_as(&env, &broker, &FORGED);

            // Control: remembered through the broker, answered from its memory.
            let first = ask(broker.runtime.as_deref(), "touch remembered").spawn();
            let id = wait_pending_as(&env, &broker, &["touch remembered"])["touch remembered"].clone();
            broker.tool(&env, &["approve", &id, "--remember"]).assert_code(0);
            first.wait().assert_code(0);
            fs::remove_file(env.file("remembered")).unwrap();
            let again = ask(broker.runtime.as_deref(), "touch remembered").run();
            again.assert_code(0);
            assert!(env.file("remembered").exists(), "{}", again.report());
            let last = audit_records(&env.default_audit_log()).pop().unwrap();
            assert_eq!(last["decided_by"], "remembered", "{last}");

            let pending = wait_pending_as(&env, &broker, &FORGED);
            assert_eq!(pending.len(), 2, "{pending:?}");
            broker.stop().assert_code(0);
            for running in waiting {
                let out = running.wait();
                out.assert_refused().assert_stderr_contains("broker stopped");
                assert_forgery_ran_nothing(&env, &out);
            }
        }
        let remembered = audit_records(&env.default_audit_log())
            .into_iter()
            .filter(|r| r["decided_by"] == "remembered")
            .count();
        assert_eq!(remembered, 2, "only the control was remembered");
    }
}

for_each_user! {
    /// `--remember-rule` approves the request the person answered, and later requests
    /// the rule covers; a request already waiting, which the person did not look at
    /// when making the rule, stays waiting and is answered on its own.
    fn a_remembered_rule_leaves_waiting_requests_to_the_person(user) {
        let env = TestEnv::new();
        env.assert_side_effects_are_visible(user);
        // Targets, not `-f FILE`: an allowed `make` does not cover a makefile named on
        // the command line (it loads other code; see docs/rules.md).
        let makefile: String = ["a", "x", "y"]
            .iter()
            .map(|name| format!("{name}:\n\ttouch {name}-ran\n"))
            .collect();
        fs::write(env.file("Makefile"), makefile).unwrap();
        let broker = Broker::start(&env, user);
        let answered = broker.asking(&env, "s1", "make a");
        let queued = broker.asking(&env, "s1", "make x");
        let ids = wait_pending_as(&env, &broker, &["make a", "make x"]);
        broker
            .tool(&env, &["approve", &ids["make a"], "--remember-rule", "make"])
            .assert_code(0)
            .assert_stdout("answered\n");
        // Control: the request the person answered ran.
        let out = answered.wait();
        out.assert_code(0);
        assert!(env.file("a-ran").exists(), "{}", out.report());

        // The queued one is still waiting (the broker settles answers in order, so its
        // state is final once `gate approve` has its result), and nothing of it ran.
        let pending = broker.tool(&env, &["pending", "--json"]);
        let items: Vec<Value> = serde_json::from_str(&pending.stdout()).unwrap();
        let commands: Vec<&str> = items.iter().filter_map(|i| i["command"].as_str()).collect();
        assert_eq!(commands, ["make x"], "{items:?}");
        assert!(!env.file("x-ran").exists(), "the queued request ran");

        // A request after the answer is answered from the remembered rule.
        let later = broker.asking(&env, "s1", "make y").wait();
        later.assert_code(0);
        assert!(env.file("y-ran").exists(), "{}", later.report());
        let last = audit_records(&env.default_audit_log()).pop().unwrap();
        assert_eq!(last["decided_by"], "remembered", "{last}");

        // The queued one is the person's to answer: denied, it never runs.
        broker.tool(&env, &["deny", &ids["make x"]]).assert_code(0);
        let out = queued.wait();
        out.assert_refused();
        assert_absent(&env.file("x-ran"), &out);
        broker.stop().assert_code(0);
    }
}

// ---------------------------------------------------------------------------------------
// Requesters that go away, a broker that stops.

#[test]
fn a_requester_killed_while_waiting_settles_its_request() {
    let env = TestEnv::new();
    let broker = Broker::start(&env, User::Current);
    let mut watcher = Approver::connect(&broker.socket);
    watcher.send(&json!({"type": "watch"}));
    let waiting = broker.asking(&env, "s1", "touch never");
    let id = wait_pending(&broker.socket, &["touch never"])["touch never"].clone();
    let event = watcher.recv().unwrap();
    assert_eq!(event["type"], "request");
    assert_eq!(event["id"], id.as_str());

    kill(Pid::from_raw(waiting.pid as i32), Signal::SIGKILL).unwrap();
    let killed = waiting.wait();
    assert_eq!(killed.signal(), Some(9), "{}", killed.report());
    assert_eq!(
        watcher.recv().unwrap(),
        json!({"type": "settled", "id": id, "how": "requester_gone"})
    );
    broker
        .tool(&env, &["approve", &id])
        .assert_code(3)
        .assert_stdout("already settled\n");
    assert_absent(&env.file("never"), &killed);
    let out = broker.stop();
    out.assert_code(0)
        .assert_stderr_contains(&format!("request {id}: the requester went away after "));
    out.assert_stderr_contains("before its timeout (killed or interrupted); nothing was run");
    assert!(!out.stderr().contains("timed out"), "{}", out.report());
}

#[test]
fn a_request_nobody_answers_is_logged_as_timed_out() {
    let env = TestEnv::new();
    let broker = Broker::start(&env, User::Current);
    let out = broker
        .gate(&env)
        .args([
            "--level",
            "ask",
            "--no-config",
            "--no-tty",
            "--timeout",
            "2",
        ])
        .args(["--session", "s1", "-c", "touch never"])
        .deadline(Duration::from_secs(30))
        .run();
    out.assert_refused();
    out.assert_stderr_contains("did not answer within 2 s");
    assert_absent(&env.file("never"), &out);
    // It said that it waited, and how the broker's tools answer it.
    let call_id = audit_records(&env.default_audit_log())
        .pop()
        .expect("the requester's record")["call_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        out.stderr().starts_with(&format!(
            "gate: waiting up to 2 s for a person to approve this command: answer with \
             `gate watch`, or `gate approve {call_id}` / `gate deny {call_id}`\n"
        )),
        "{}",
        out.report()
    );
    let log = broker.stop();
    log.assert_code(0).assert_stderr_contains(
        "request 1: timed out: nobody answered within 2 s, so the requester denied it",
    );
    assert!(!log.stderr().contains("went away"), "{}", log.report());
}

#[test]
fn stopping_the_broker_denies_every_waiting_request() {
    let env = TestEnv::new();
    let broker = Broker::start(&env, User::Current);
    let gates: Vec<Running> = (0..3)
        .map(|i| broker.asking(&env, "s", &format!("touch stopped-{i}")))
        .collect();
    let raw = Requester::approval(&broker.socket, "raw-1", "s", "make raw");
    let question = Requester::send(&broker.socket, &question_line("q-1", "which?", &["a", "b"]));
    let mut watcher = Approver::connect(&broker.socket);
    watcher.send(&json!({"type": "watch"}));
    wait_pending(
        &broker.socket,
        &[
            "touch stopped-0",
            "touch stopped-1",
            "touch stopped-2",
            "make raw",
            "which?",
        ],
    );

    let out = broker.stop();
    out.assert_code(0)
        .assert_stderr_contains("stopping on SIGTERM: 5 open requests answered \"broker stopped\"");
    for (i, gate) in gates.into_iter().enumerate() {
        let refused = gate.wait();
        refused
            .assert_refused()
            .assert_stderr_contains("broker stopped");
        assert_absent(&env.file(&format!("stopped-{i}")), &refused);
    }
    assert_eq!(
        raw.only_reply(),
        json!({"type": "decision", "call_id": "raw-1", "decision": "deny",
               "message": "broker stopped", "source": "gate serve"})
    );
    assert_eq!(
        question.only_reply(),
        json!({"type": "answer", "call_id": "q-1", "declined": true, "message": "broker stopped"})
    );
    // The watcher heard of each request, then of each settling, then the end.
    let mut settled = 0;
    while let Some(event) = watcher.recv() {
        if event["type"] == "settled" {
            assert_eq!(event["how"], "broker_stopped", "{event}");
            settled += 1;
        }
    }
    assert_eq!(settled, 5);
}

#[test]
fn sigint_and_sighup_stop_the_broker_too() {
    for signal in [Signal::SIGINT, Signal::SIGHUP] {
        let env = TestEnv::new();
        let mut broker = Broker::start(&env, User::Current);
        let r = Requester::approval(&broker.socket, "c1", "s", "make");
        wait_pending(&broker.socket, &["make"]);
        kill(broker.pid(), signal).unwrap();
        assert_eq!(r.only_reply()["message"], "broker stopped");
        let out = broker.running.take().unwrap().wait();
        out.assert_code(0);
        assert!(!broker.socket.exists());
    }
}

// ---------------------------------------------------------------------------------------
// Requesters that break the protocol.

#[test]
fn a_bad_request_is_closed_unanswered() {
    let env = TestEnv::new();
    let broker = Broker::start(&env, User::Current);
    let good = approval_line("c1", "s", "make", true);
    for bad in [
        good.replace("\"version\":1", "\"version\":2"),
        good.replace(
            "\"remember_supported\":true",
            "\"remember_supported\":\"true\"",
        ),
        good.replace("\"call_id\":\"c1\"", "\"call_id\":\"c 1\""),
        "{\"type\":\"approval_request\"}\n".to_owned(),
        format!("{}\n", "x".repeat(70 * 1024)),
    ] {
        let r = Requester::send(&broker.socket, &bad);
        assert!(r.lines().is_empty(), "answered a bad request: {bad:.200}");
    }
    let mut approver = Approver::connect(&broker.socket);
    assert!(approver.list().is_empty());
    broker.stop().assert_code(0);
}

#[test]
fn a_duplicate_call_id_is_closed_and_the_first_stays_open() {
    let env = TestEnv::new();
    let broker = Broker::start(&env, User::Current);
    let first = Requester::approval(&broker.socket, "same", "s", "make one");
    let id = wait_pending(&broker.socket, &["make one"])["make one"].clone();
    let second = Requester::approval(&broker.socket, "same", "s", "make two");
    assert!(second.lines().is_empty());
    let mut approver = Approver::connect(&broker.socket);
    assert_eq!(approver.list().len(), 1);
    assert_eq!(approver.decide(&id, approve())["settle"], "answered");
    assert_eq!(first.only_reply()["call_id"], "same");
    broker.stop().assert_code(0);
}

#[test]
fn a_requester_that_talks_while_waiting_is_closed_and_settled() {
    let env = TestEnv::new();
    let broker = Broker::start(&env, User::Current);
    let mut r = Requester::approval(&broker.socket, "c1", "s", "make");
    let id = wait_pending(&broker.socket, &["make"])["make"].clone();
    r.stream
        .write_all(b"{\"type\":\"decision\",\"call_id\":\"c1\",\"decision\":\"approve\"}\n")
        .unwrap();
    assert!(r.lines().is_empty());
    wait_none_pending(&broker.socket);
    broker.tool(&env, &["approve", &id]).assert_code(3);
    // The same with both lines in one write.
    let both = approval_line("c2", "s", "make both", true)
        + "{\"type\":\"decision\",\"call_id\":\"c2\",\"decision\":\"approve\"}\n";
    assert!(Requester::send(&broker.socket, &both).lines().is_empty());
    wait_none_pending(&broker.socket);
    broker.tool(&env, &["approve", "2"]).assert_code(3);
    // Even a partial one.
    let partial = approval_line("c3", "s", "make partial", true) + "{";
    assert!(Requester::send(&broker.socket, &partial).lines().is_empty());
    wait_none_pending(&broker.socket);
    broker
        .stop()
        .assert_code(0)
        .assert_stderr_contains("protocol error");
}

// ---------------------------------------------------------------------------------------
// Approver tools: the token, the peer's uid, garbage.

#[test]
fn an_approver_with_the_wrong_token_is_refused() {
    let env = TestEnv::new();
    let broker = Broker::start(&env, User::Current);
    let r = Requester::approval(&broker.socket, "c1", "s", "make");
    let id = wait_pending(&broker.socket, &["make"])["make"].clone();
    let right = token_of(&broker.socket);
    let mut wrong = right.clone().into_bytes();
    wrong[63] = if wrong[63] == b'0' { b'1' } else { b'0' };
    let wrong = String::from_utf8(wrong).unwrap();
    for token in [wrong.as_str(), "", &right[..63], &format!("{right}0")] {
        let (mut approver, reply) = Approver::hello(&broker.socket, token);
        let reply = reply.expect("an error line");
        assert_eq!(reply["type"], "error", "{reply}");
        assert!(
            reply["message"].as_str().unwrap().contains("wrong token"),
            "{reply}"
        );
        assert_eq!(approver.recv(), None, "the connection is closed");
    }
    // Pipelining a decision behind a bad hello does not get it through either.
    let mut stream = connect(&broker.socket);
    stream
        .write_all(
            format!(
                "{}\n{}\n",
                json!({"type": "hello", "version": 1, "role": "approver", "token": wrong}),
                json!({"type": "decide", "id": id, "decision": "approve"})
            )
            .as_bytes(),
        )
        .unwrap();
    let mut text = String::new();
    let _ = stream.read_to_string(&mut text);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.contains("wrong token"), "{text}");
    // A decision without any hello neither.
    let mut stream = connect(&broker.socket);
    stream
        .write_all(
            format!(
                "{}\n",
                json!({"type": "decide", "id": id, "decision": "approve"})
            )
            .as_bytes(),
        )
        .unwrap();
    let mut text = String::new();
    let _ = stream.read_to_string(&mut text);
    assert!(text.contains("\"error\""), "{text}");

    // Still open, and answerable with the token.
    let mut approver = Approver::connect(&broker.socket);
    assert_eq!(approver.decide(&id, approve())["settle"], "answered");
    assert_eq!(r.only_reply()["decision"], "approve");
    broker
        .stop()
        .assert_code(0)
        .assert_stderr_contains("wrong token");
}

#[test]
#[ignore = "root tier: cargo test --lib --test all -- --ignored, as root"]
fn a_user_who_cannot_read_the_token_cannot_approve() {
    needs_root(&format!(
        "this test needs root: the approver runs as uid {NOBODY}"
    ));
    let env = TestEnv::new();
    let broker = Broker::start(&env, User::Current);
    let r = Requester::approval(&broker.socket, "c1", "s", "make");
    let id = wait_pending(&broker.socket, &["make"])["make"].clone();
    let socket = broker.socket.to_str().unwrap().to_owned();
    for args in [
        vec!["approve", id.as_str(), "--socket", &socket],
        vec!["pending", "--socket", &socket],
    ] {
        let out = env.gate().user(User::Unprivileged).args(&args).run();
        out.assert_gate_error()
            .assert_stderr_contains("only the broker's user");
    }
    let mut approver = Approver::connect(&broker.socket);
    assert_eq!(approver.list().len(), 1, "still waiting");
    assert_eq!(
        approver.decide(&id, json!({"decision": "deny"}))["settle"],
        "answered"
    );
    assert_eq!(r.only_reply()["decision"], "deny");
    broker.stop().assert_code(0);
}

#[test]
#[ignore = "root tier: cargo test --lib --test all -- --ignored, as root"]
fn a_connection_from_another_uid_is_closed_unanswered() {
    needs_root(&format!(
        "this test needs root: the broker runs as uid {NOBODY} and root connects to it"
    ));
    let env = TestEnv::new();
    let broker = Broker::start(&env, User::Unprivileged);
    assert_eq!(fs::symlink_metadata(&broker.socket).unwrap().uid(), NOBODY);
    // Control: the broker's own user can list and answer.
    broker
        .tool(&env, &["pending"])
        .assert_code(0)
        .assert_stdout("no requests are waiting\n");
    let waiting = broker.asking(&env, "s", "touch nobody-asked");
    let id = wait_pending_as(&env, &broker, &["touch nobody-asked"])["touch nobody-asked"].clone();

    // Root can read the token and reach the socket, and is still turned away.
    let token = token_of(&broker.socket);
    let (mut approver, reply) = Approver::hello(&broker.socket, &token);
    assert_eq!(reply, None, "no reply to another uid");
    assert_eq!(approver.recv(), None);
    let intruder = Requester::approval(&broker.socket, "c-root", "s", "touch root-asked");
    assert!(intruder.lines().is_empty());
    let mut stream = connect(&broker.socket);
    let _ = stream.write_all(
        format!(
            "{}\n{}\n",
            json!({"type": "hello", "version": 1, "role": "approver", "token": token}),
            json!({"type": "decide", "id": id, "decision": "approve"})
        )
        .as_bytes(),
    );
    let mut text = String::new();
    let _ = stream.read_to_string(&mut text);
    assert_eq!(text, "");
    // gate approve as root does not even try: the socket is not root's.
    env.gate()
        .args(["approve", &id, "--socket", broker.socket.to_str().unwrap()])
        .run()
        .assert_gate_error()
        .assert_stderr_contains(&format!("belongs to uid {NOBODY}"));

    // Still waiting; its own user denies it.
    broker
        .tool(&env, &["deny", &id, "--message", "not now"])
        .assert_code(0);
    waiting
        .wait()
        .assert_refused()
        .assert_stderr_contains("not now");
    let out = broker.stop();
    out.assert_code(0)
        .assert_stderr_contains("refused a connection from uid 0");
    assert!(!out.stderr().contains("root-asked"), "{}", out.report());
}

/// `wait_pending` through `gate pending --json` as the broker's user (root's raw
/// connections are refused by a broker of another uid).
fn wait_pending_as(env: &TestEnv, broker: &Broker, commands: &[&str]) -> HashMap<String, String> {
    let deadline = Instant::now() + WAIT;
    loop {
        let out = broker.tool(env, &["pending", "--json"]);
        out.assert_code(0);
        let items: Vec<Value> = serde_json::from_str(&out.stdout()).unwrap();
        let found: HashMap<String, String> = items
            .iter()
            .filter_map(|i| {
                Some((
                    i["command"].as_str()?.to_owned(),
                    i["id"].as_str()?.to_owned(),
                ))
            })
            .collect();
        if commands.iter().all(|c| found.contains_key(*c)) {
            return found;
        }
        assert!(
            Instant::now() < deadline,
            "{commands:?} not pending: {items:?}"
        );
        thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_sandboxed_command_cannot_approve() {
    let env = TestEnv::new_in("/var/tmp");
    let broker = Broker::start(&env, User::Current);
    let r = Requester::approval(&broker.socket, "c1", "s", "make");
    let id = wait_pending(&broker.socket, &["make"])["make"].clone();
    let inner = format!("{GATE} approve {id}");
    // Unix sockets allowed, so only the token stands in the way.
    let out = broker
        .gate(&env)
        .args([
            "--no-config",
            "--level",
            "safe",
            "--unix-sockets",
            "-c",
            &inner,
        ])
        .run();
    assert_ne!(out.code(), Some(0), "{}", out.report());
    out.assert_stderr_contains("runs with no_new_privs");
    let mut approver = Approver::connect(&broker.socket);
    assert_eq!(approver.list().len(), 1, "still waiting");
    // Control: the same tool run by the test, not by gate, approves. (Run by gate at any
    // level it is refused too: tests/approver_reach.rs.)
    broker
        .tool(&env, &["approve", &id])
        .assert_code(0)
        .assert_stdout("answered\n");
    assert_eq!(r.only_reply()["decision"], "approve");
    broker.stop().assert_code(0);
}

#[test]
fn garbage_from_an_approver_closes_its_connection() {
    let env = TestEnv::new();
    let broker = Broker::start(&env, User::Current);
    let r = Requester::approval(&broker.socket, "c1", "s", "make");
    let id = wait_pending(&broker.socket, &["make"])["make"].clone();
    let garbage: Vec<Vec<u8>> = vec![
        b"not json\n".to_vec(),
        b"{\"type\":\"frobnicate\"}\n".to_vec(),
        format!("{}\n", json!({"type": "decide", "id": id, "decision": "yes"})).into_bytes(),
        format!("{}\n", json!({"type": "decide", "id": id, "decision": true})).into_bytes(),
        format!("{}\n", json!({"type": "decide", "id": id, "decision": "approve", "remember": "true"})).into_bytes(),
        format!("{}\n", json!({"type": "decide", "id": id, "decision": "approve", "remember_rule": "a|b"})).into_bytes(),
        format!("{}\n", json!({"type": "decide", "id": id, "decision": "deny", "remember": true})).into_bytes(),
        format!("{}\n", json!({"type": "hello", "version": 1, "role": "approver", "token": token_of(&broker.socket)})).into_bytes(),
        b"\xff\xfe\n".to_vec(),
        vec![b'x'; 70 * 1024],
    ];
    for bytes in garbage {
        let mut approver = Approver::connect(&broker.socket);
        approver.send_raw(&bytes);
        let reply = approver.recv().expect("an error line");
        assert_eq!(reply["type"], "error", "{reply}");
        assert_eq!(
            approver.recv(),
            None,
            "closed after {:.80}",
            String::from_utf8_lossy(&bytes)
        );
    }
    let mut approver = Approver::connect(&broker.socket);
    assert_eq!(approver.list().len(), 1, "still waiting");
    assert_eq!(approver.decide(&id, approve())["settle"], "answered");
    assert_eq!(r.only_reply()["decision"], "approve");
    broker.stop().assert_code(0);
}

// ---------------------------------------------------------------------------------------
// Questions.

#[test]
fn questions_are_listed_answered_and_declined() {
    let env = TestEnv::new();
    let broker = Broker::start(&env, User::Current);
    let q1 = Requester::send(
        &broker.socket,
        &question_line("q1", "which colour?", &["red", "blue"]),
    );
    let q2 = Requester::send(&broker.socket, &question_line("q2", "why\u{1b}[2J?", &[]));
    let a = Requester::approval(&broker.socket, "a1", "s", "make");
    let ids = wait_pending(&broker.socket, &["which colour?", "why\u{1b}[2J?", "make"]);

    let table = broker.tool(&env, &["pending"]);
    table
        .assert_code(0)
        .assert_stdout_contains("question: which colour? [red | blue]")
        .assert_stdout_contains("question: why\\x1b[2J?");
    let json = broker.tool(&env, &["pending", "--json"]);
    let items: Vec<Value> = serde_json::from_str(&json.stdout()).unwrap();
    let item = items.iter().find(|i| i["call_id"] == "q1").unwrap();
    assert_eq!(item["kind"], "question");
    assert_eq!(item["options"], json!(["red", "blue"]));

    // A question is not approved with gate approve.
    broker
        .tool(&env, &["approve", &ids["which colour?"]])
        .assert_gate_error()
        .assert_stderr_contains("gate watch");
    let mut approver = Approver::connect(&broker.socket);
    // Nor answered with an approval's decide, nor an approval with an answer.
    let reply = approver.decide(&ids["which colour?"], approve());
    assert_eq!(reply["type"], "error", "{reply}");
    approver.send(&json!({"type": "answer", "id": ids["make"], "answer": "yes"}));
    assert_eq!(approver.recv().unwrap()["type"], "error");

    approver.send(&json!({"type": "answer", "id": ids["which colour?"], "answer": "blue"}));
    assert_eq!(
        approver.recv().unwrap(),
        json!({"type": "result", "id": ids["which colour?"], "settle": "answered"})
    );
    assert_eq!(
        q1.only_reply(),
        json!({"type": "answer", "call_id": "q1", "answer": "blue"})
    );
    // gate deny declines a question, with the message, named by its short id or by its
    // call id.
    let q3 = Requester::send(&broker.socket, &question_line("q3", "when?", &[]));
    let q3_id = wait_pending(&broker.socket, &["when?"])["when?"].clone();
    broker
        .tool(&env, &["deny", "q2", "--message", "ask later"])
        .assert_code(0);
    assert_eq!(
        q2.only_reply(),
        json!({"type": "answer", "call_id": "q2", "declined": true, "message": "ask later"})
    );
    broker.tool(&env, &["deny", &q3_id]).assert_code(0);
    assert_eq!(
        q3.only_reply(),
        json!({"type": "answer", "call_id": "q3", "declined": true})
    );
    broker.tool(&env, &["deny", &ids["make"]]).assert_code(0);
    assert_eq!(a.only_reply()["decision"], "deny");
    broker.stop().assert_code(0);
}

// ---------------------------------------------------------------------------------------
// Watching.

#[test]
fn a_watcher_sees_requests_arrive_and_settle() {
    let env = TestEnv::new();
    let broker = Broker::start(&env, User::Current);
    let early = Requester::approval(&broker.socket, "c1", "s", "make early");
    let early_id = wait_pending(&broker.socket, &["make early"])["make early"].clone();
    let mut watcher = Approver::connect(&broker.socket);
    watcher.send(&json!({"type": "watch"}));
    let event = watcher.recv().unwrap();
    assert_eq!(event["type"], "request");
    assert_eq!(event["id"], early_id.as_str());
    assert_eq!(event["command"], "make early");

    let late = Requester::approval(&broker.socket, "c2", "s", "make late");
    let event = watcher.recv().unwrap();
    assert_eq!(event["type"], "request");
    assert_eq!(event["command"], "make late");
    let late_id = event["id"].as_str().unwrap().to_owned();

    // The watcher answers one itself: the result, then the settled event.
    assert_eq!(
        watcher.decide(
            &early_id,
            json!({"decision": "approve", "source": "gate watch"})
        ),
        json!({"type": "result", "id": early_id, "settle": "answered"})
    );
    assert_eq!(
        watcher.recv().unwrap(),
        json!({"type": "settled", "id": early_id, "how": "approved", "by": "gate watch"})
    );
    assert_eq!(early.only_reply()["source"], "gate watch");
    // Someone else answers the other.
    broker.tool(&env, &["deny", &late_id]).assert_code(0);
    assert_eq!(
        watcher.recv().unwrap(),
        json!({"type": "settled", "id": late_id, "how": "denied", "by": "gate deny"})
    );
    assert_eq!(late.only_reply()["decision"], "deny");
    broker.stop().assert_code(0);
    assert_eq!(watcher.recv(), None, "closed when the broker stops");
}

// ---------------------------------------------------------------------------------------
// Many at once.

/// The command the n-th requester asks about, and the verdict the scripted approver
/// gives it: approve even n, deny odd n with a message naming n.
fn numbered(n: usize) -> String {
    format!("touch done-{n}")
}

fn number_of(command: &str) -> usize {
    command
        .strip_prefix("touch done-")
        .unwrap()
        .parse()
        .unwrap()
}

/// Answer `count` requests as they arrive, by their number; return how many answers
/// the broker reported as answered.
fn scripted_approver(socket: PathBuf, count: usize) -> thread::JoinHandle<usize> {
    thread::spawn(move || {
        let mut watcher = Approver::connect(&socket);
        watcher.send(&json!({"type": "watch"}));
        let mut asked = 0;
        let mut answered = 0;
        while answered < count {
            let event = watcher.recv().expect("the broker closed the watcher");
            match event["type"].as_str().unwrap() {
                "request" => {
                    asked += 1;
                    let n = number_of(event["command"].as_str().unwrap());
                    let verdict = if n % 2 == 0 {
                        json!({"decision": "approve", "source": "script"})
                    } else {
                        json!({"decision": "deny", "message": format!("odd {n}"), "source": "script"})
                    };
                    let mut message = verdict;
                    message["type"] = json!("decide");
                    message["id"] = event["id"].clone();
                    watcher.send(&message);
                }
                "result" => {
                    assert_eq!(event["settle"], "answered", "{event}");
                    answered += 1;
                }
                "settled" => {}
                other => panic!("unexpected {other}: {event}"),
            }
        }
        assert_eq!(asked, count);
        answered
    })
}

#[test]
fn two_hundred_raw_requesters_each_get_their_own_decision() {
    const N: usize = 200;
    let env = TestEnv::new();
    let broker = Broker::start(&env, User::Current);
    let approver = scripted_approver(broker.socket.clone(), N);
    let start = Arc::new(Barrier::new(N));
    let requesters: Vec<_> = (0..N)
        .map(|n| {
            let socket = broker.socket.clone();
            let start = Arc::clone(&start);
            thread::spawn(move || {
                start.wait();
                let call = format!("call-{n}");
                let r = Requester::approval(&socket, &call, &format!("s{}", n % 7), &numbered(n));
                let lines = r.lines();
                assert_eq!(lines.len(), 1, "requester {n}: {lines:?}");
                let reply: Value = serde_json::from_str(&lines[0]).unwrap();
                assert_eq!(reply["call_id"], call.as_str(), "requester {n}: {reply}");
                if n % 2 == 0 {
                    assert_eq!(reply["decision"], "approve", "requester {n}: {reply}");
                } else {
                    assert_eq!(reply["decision"], "deny", "requester {n}: {reply}");
                    assert_eq!(reply["message"], format!("odd {n}"), "requester {n}");
                }
            })
        })
        .collect();
    for (n, r) in requesters.into_iter().enumerate() {
        r.join().unwrap_or_else(|_| panic!("requester {n} failed"));
    }
    assert_eq!(approver.join().unwrap(), N);
    wait_none_pending(&broker.socket);
    broker.stop().assert_code(0);
}

#[test]
fn two_hundred_gates_through_one_broker() {
    const N: usize = 200;
    let env = TestEnv::new();
    let broker = Broker::start(&env, User::Current);
    let approver = scripted_approver(broker.socket.clone(), N);
    let gates: Vec<Running> = (0..N)
        .map(|n| broker.asking(&env, &format!("s{}", n % 7), &numbered(n)))
        .collect();
    assert_eq!(approver.join().unwrap(), N);
    for (n, gate) in gates.into_iter().enumerate() {
        let out = gate.wait();
        let file = env.file(&format!("done-{n}"));
        if n % 2 == 0 {
            out.assert_code(0);
            assert!(file.exists(), "gate {n} did not run\n{}", out.report());
        } else {
            out.assert_refused()
                .assert_stderr_contains(&format!("\"odd {n}\""));
            assert_absent(&file, &out);
        }
    }
    let audit = audit_records(&env.default_audit_log());
    assert_eq!(audit.len(), N, "one intact audit line per gate");
    broker.stop().assert_code(0);
}

// ---------------------------------------------------------------------------------------
// The client library `gate watch` uses.

#[test]
fn the_client_keeps_events_that_arrive_before_a_result() {
    use gate::approval::admin::{Client, WatchEvent};
    use gate::approval::protocol::{Ask, Decision, Settle};

    let env = TestEnv::new();
    let broker = Broker::start(&env, User::Current);
    let missing = env.root.join("nothing-here.sock");
    let e = Client::connect(&missing).err().expect("no broker there");
    assert!(e.contains("no broker is listening"), "{e}");

    let a = Requester::approval(&broker.socket, "ca", "s", "make a");
    let mut client = Client::connect(&broker.socket).unwrap();
    let listed = client.list().unwrap();
    assert_eq!(listed.len(), 1);
    match &listed[0].ask {
        Ask::Approval(r) => assert_eq!(r.command, "make a"),
        other => panic!("{other:?}"),
    }
    client.watch().unwrap();
    let soon = || Some(Instant::now() + WAIT);
    let first = match client.next_event(soon(), None).unwrap() {
        Some(WatchEvent::Request(p)) => p,
        other => panic!("{other:?}"),
    };
    assert_eq!(first.ask.call_id(), "ca");

    // Two more arrive and are announced before the client's next answer is read.
    let b = Requester::approval(&broker.socket, "cb", "s", "make b");
    let c = Requester::approval(&broker.socket, "cc", "s", "make c");
    wait_pending(&broker.socket, &["make b", "make c"]);
    let settle = client
        .decide(
            &first.id,
            Decision::Approve {
                remember: false,
                remember_rule: None,
                always: None,
                kept: false,
                source: Some("client test".into()),
            },
        )
        .unwrap();
    assert_eq!(settle, Settle::Answered);
    assert_eq!(a.only_reply()["source"], "client test");
    assert!(client.has_buffered_event());
    let mut calls = Vec::new();
    for _ in 0..2 {
        match client.next_event(soon(), None).unwrap() {
            Some(WatchEvent::Request(p)) => calls.push(p.ask.call_id().to_owned()),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(calls, ["cb", "cc"]);
    assert_eq!(
        client.next_event(soon(), None).unwrap(),
        Some(WatchEvent::Settled {
            id: first.id.clone(),
            how: "approved".into()
        })
    );
    // Nothing more: a short deadline passes.
    assert_eq!(
        client
            .next_event(Some(Instant::now() + Duration::from_millis(50)), None)
            .unwrap(),
        None
    );
    assert_eq!(
        client.decide(
            &first.id,
            Decision::Deny {
                message: None,
                source: None
            }
        ),
        Ok(Settle::AlreadySettled)
    );

    drop(broker.stop());
    let mut hows = Vec::new();
    loop {
        match client.next_event(soon(), None).unwrap() {
            Some(WatchEvent::Settled { how, .. }) => hows.push(how),
            Some(WatchEvent::Closed) => break,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(hows, ["broker_stopped", "broker_stopped"]);
    assert_eq!(b.only_reply()["message"], "broker stopped");
    assert_eq!(c.only_reply()["message"], "broker stopped");
}

// ---------------------------------------------------------------------------------------
// Limits.

/// With 100 descriptors the broker keeps 36 connections (100 less 64 for its own files
/// and slack): more are closed at once, unanswered, and a slot freed is used again.
#[test]
fn connections_beyond_what_the_broker_can_keep_are_closed() {
    let env = TestEnv::new();
    let runtime = runtime_dir(&env, User::Current);
    let socket = runtime.join("gate/broker.sock");
    let mut child = std::process::Command::new(require_program("prlimit"))
        .arg("--nofile=100:100")
        .arg(GATE)
        .arg("serve")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &env.home)
        .env("XDG_CONFIG_HOME", &env.config)
        .env("XDG_RUNTIME_DIR", &runtime)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut stderr = child.stderr.take().unwrap();
    let child = Kill(child);
    let deadline = Instant::now() + WAIT;
    while !socket.exists() {
        assert!(Instant::now() < deadline, "the broker did not start");
        thread::sleep(Duration::from_millis(5));
    }

    let mut approver = Approver::connect(&socket);
    let requesters: Vec<Requester> = (0..50)
        .map(|n| Requester::approval(&socket, &format!("c{n}"), "s", &format!("make {n}")))
        .collect();
    let deadline = Instant::now() + WAIT;
    let waiting = loop {
        let list = approver.list();
        if list.len() >= 35 {
            break list;
        }
        assert!(Instant::now() < deadline, "{} pending", list.len());
        thread::sleep(Duration::from_millis(5));
    };
    assert_eq!(waiting.len(), 35, "the approver holds the 36th connection");
    let kept: Vec<String> = waiting
        .iter()
        .map(|i| i["call_id"].as_str().unwrap().to_owned())
        .collect();
    let mut refused = 0;
    let mut held = Vec::new();
    for (n, r) in requesters.into_iter().enumerate() {
        if kept.contains(&format!("c{n}")) {
            held.push(r);
        } else {
            assert!(r.lines().is_empty(), "requester {n} was answered");
            refused += 1;
        }
    }
    assert_eq!(refused, 15);

    // One goes away; its slot takes a new request.
    drop(held.pop());
    let deadline = Instant::now() + WAIT;
    while approver.list().len() != 34 {
        assert!(Instant::now() < deadline, "the slot was not freed");
        thread::sleep(Duration::from_millis(5));
    }
    let _late = Requester::approval(&socket, "late", "s", "make late");
    while !approver.list().iter().any(|i| i["call_id"] == "late") {
        assert!(Instant::now() < deadline, "the late request was not taken");
        thread::sleep(Duration::from_millis(5));
    }

    kill(Pid::from_raw(child.0.id() as i32), Signal::SIGTERM).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    thread::spawn(move || {
        let mut log = String::new();
        let _ = stderr.read_to_string(&mut log);
        let _ = tx.send(log);
    });
    let log = rx
        .recv_timeout(WAIT)
        .expect("the broker did not exit after SIGTERM");
    assert!(
        log.contains("36 connections are open, the most this broker keeps"),
        "{log}"
    );
    assert!(
        log.contains("open requests answered \"broker stopped\""),
        "{log}"
    );
    drop(held);
}

/// Without a runtime directory the broker lives in `$XDG_STATE_HOME/gate/run`, which the
/// sandbox hides too (a directory in /tmp it could not hide without taking /tmp away).
#[test]
fn without_a_runtime_dir_a_sandboxed_command_still_cannot_approve() {
    let env = TestEnv::new_in("/var/tmp");
    let socket = env.state.join("gate/run/broker.sock");
    let mut running = Some(
        env.gate()
            .env_remove("XDG_RUNTIME_DIR")
            .arg("serve")
            .deadline(Duration::from_secs(300))
            .spawn(),
    );
    let deadline = Instant::now() + WAIT;
    while !fs::symlink_metadata(&socket).is_ok_and(|m| m.file_type().is_socket()) {
        if Instant::now() > deadline {
            let out = running.take().unwrap();
            let _ = kill(Pid::from_raw(out.pid as i32), Signal::SIGKILL);
            panic!(
                "no broker socket at {}\n{}",
                socket.display(),
                out.wait().report()
            );
        }
        thread::sleep(Duration::from_millis(5));
    }
    let pid = Pid::from_raw(running.as_ref().unwrap().pid as i32);
    let r = Requester::approval(&socket, "c1", "s", "make");
    let id = wait_pending(&socket, &["make"])["make"].clone();
    let inner = format!("{GATE} approve {id}");
    let out = env
        .gate()
        .env_remove("XDG_RUNTIME_DIR")
        .args([
            "--no-config",
            "--level",
            "safe",
            "--unix-sockets",
            "-c",
            &inner,
        ])
        .run();
    assert_ne!(out.code(), Some(0), "{}", out.report());
    out.assert_stderr_contains("runs with no_new_privs");
    // Control: the same tool run by the test, not by gate, approves.
    env.gate()
        .env_remove("XDG_RUNTIME_DIR")
        .args(["approve", &id])
        .run()
        .assert_code(0)
        .assert_stdout("answered\n");
    assert_eq!(r.only_reply()["decision"], "approve");
    kill(pid, Signal::SIGTERM).unwrap();
    running.take().unwrap().wait().assert_code(0);
}

// ---------------------------------------------------------------------------------------
// The sandbox-first mode: unsandboxed rules.

for_each_user! {
    /// At `safe`, a command an unsandboxed rule matches leaves the sandbox only when a
    /// person says yes through the broker, and what they see says so; a no (or no
    /// answer) runs nothing, not even inside the sandbox.
    fn an_unsandboxed_rule_leaves_the_sandbox_only_with_a_persons_yes(user) {
        let env = TestEnv::new_in("/var/tmp");
        env.assert_side_effects_are_visible(user);
        let broker = Broker::start(&env, user);
        // The home directory is outside what the sandbox lets a command write.
        let outside = env.home.join("G");
        let command = format!("touch {}", outside.display());
        let safe = |rule: &[&str]| {
            broker
                .gate(&env)
                .args(["--no-config", "--no-tty", "--audit-log", "off"])
                .args(["--level", "safe", "--timeout", "120"])
                .args(rule)
                .args(["-c", &command])
                .deadline(Duration::from_secs(150))
        };
        // Control: without the rule, it runs inside the sandbox, which stops the write.
        let out = safe(&[]).run();
        assert_absent(&outside, &out);
        assert_ne!(out.code(), Some(0), "{}", out.report());

        let rule = ["--unsandboxed", "touch"];
        let denied = safe(&rule).spawn();
        let ids = wait_pending_as(&env, &broker, &[&command]);
        let json = broker.tool(&env, &["pending", "--json"]);
        let items: Vec<Value> = serde_json::from_str(&json.stdout()).unwrap();
        assert_eq!(items[0]["leaves_sandbox"], true, "{items:?}");
        assert_eq!(items[0]["remember_supported"], false, "asked every time: {items:?}");
        assert_eq!(items[0]["level"], "safe", "{items:?}");
        broker.tool(&env, &["deny", &ids[&command]]).assert_code(0);
        let out = denied.wait();
        out.assert_refused().assert_stderr_contains("the approver denied it");
        assert_absent(&outside, &out);

        let approved = safe(&rule).spawn();
        let ids = wait_pending_as(&env, &broker, &[&command]);
        let table = broker.tool(&env, &["pending"]);
        assert!(
            table.stdout().contains(&format!("(outside the sandbox) {command}")),
            "{}",
            table.report()
        );
        // `--remember` cannot make it last: the next one is asked again.
        broker
            .tool(&env, &["approve", &ids[&command], "--remember"])
            .assert_code(0);
        let out = approved.wait();
        out.assert_code(0);
        assert!(outside.exists(), "approved, it ran outside\n{}", out.report());
        fs::remove_file(&outside).unwrap();
        let again = safe(&rule).spawn();
        let ids = wait_pending_as(&env, &broker, &[&command]);
        broker.tool(&env, &["deny", &ids[&command]]).assert_code(0);
        let out = again.wait();
        out.assert_refused();
        assert_absent(&outside, &out);
        broker.stop().assert_code(0);
    }
}
