//! Only a person's process can answer (issue 12): every command gate runs, at every
//! level, carries no_new_privs and a Landlock domain (src/sandbox/mark.rs), and the
//! approval machinery refuses a process that carries them (src/approval/peer.rs).
//!
//! Black-box, the real binary as broker, requester, approver tool and command, as the
//! current user and as uid 65534. Each attack is one the model can make — an allowed
//! script at `ask`, a command at `full`, a sandboxed one at `safe` with the runtime
//! directory inside and outside /tmp, a listener left running on the broker's socket —
//! and each has its control: the same thing done by the test itself, outside gate,
//! works, so it is the mark that stops it.

use crate::common;

use std::fs;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use common::*;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::Value;

/// How long any one wait may take before the test fails.
const WAIT: Duration = Duration::from_secs(30);

// ---------------------------------------------------------------------------------------
// Helpers.

/// gate as `user`, with `runtime` as its XDG_RUNTIME_DIR.
fn gate_in(env: &TestEnv, user: User, runtime: &Path) -> Gate {
    env.gate().user(user).env("XDG_RUNTIME_DIR", runtime)
}

/// Wait until `ready` holds a pid (written by the fake listener once it listens).
fn wait_ready(ready: &Path) -> i32 {
    let end = Instant::now() + WAIT;
    loop {
        if let Some(pid) = fs::read_to_string(ready)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            return pid;
        }
        assert!(
            Instant::now() < end,
            "nothing wrote {} in time",
            ready.display()
        );
        thread::sleep(Duration::from_millis(5));
    }
}

/// Whether process `pid` is gone or a zombie.
fn ended(pid: i32) -> bool {
    let end = Instant::now() + WAIT;
    loop {
        let state = fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s.rsplit(')').next().map(|r| r.trim().to_owned()));
        match state {
            None => return true,
            Some(rest) if rest.starts_with('Z') => return true,
            Some(_) if Instant::now() >= end => return false,
            Some(_) => thread::sleep(Duration::from_millis(5)),
        }
    }
}

/// The NoNewPrivs field of a process.
fn no_new_privs(pid: i32) -> String {
    fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("NoNewPrivs:").map(|v| v.trim().to_owned()))
        .expect("a NoNewPrivs line")
}

/// SIGKILL a process (a listener left in the background) when dropped.
struct Killed(i32);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = kill(Pid::from_raw(self.0), Signal::SIGKILL);
    }
}

/// A running `gate serve` on the default socket of a fresh runtime directory (or, with
/// no runtime directory, of the state directory), killed if the test ends without
/// stopping it.
struct Broker {
    running: Option<Running>,
    socket: PathBuf,
    /// XDG_RUNTIME_DIR; `None`: unset.
    runtime: Option<PathBuf>,
    user: User,
}

/// Where the broker keeps its socket.
#[derive(Clone, Copy)]
enum BrokerDir {
    /// `$XDG_RUNTIME_DIR/gate/`.
    Runtime,
    /// `$XDG_STATE_HOME/gate/run/`, with XDG_RUNTIME_DIR unset.
    State,
}

impl Broker {
    fn start(env: &TestEnv, user: User) -> Broker {
        Broker::start_in(env, user, Some(runtime_dir(env, user)))
    }

    /// Start it with `runtime` as XDG_RUNTIME_DIR (`None`: unset).
    fn start_in(env: &TestEnv, user: User, runtime: Option<PathBuf>) -> Broker {
        let socket = match &runtime {
            Some(dir) => dir.join("gate/broker.sock"),
            None => env.state.join("gate/run/broker.sock"),
        };
        let mut broker = Broker {
            running: None,
            socket,
            runtime,
            user,
        };
        let running = broker
            .gate(env)
            .arg("serve")
            .deadline(Duration::from_secs(300))
            .spawn();
        broker.running = Some(running);
        let end = Instant::now() + WAIT;
        while !fs::symlink_metadata(&broker.socket).is_ok_and(|m| m.file_type().is_socket()) {
            if Instant::now() > end {
                let _ = kill(broker.pid(), Signal::SIGKILL);
                let out = broker.running.take().unwrap().wait();
                panic!("the broker did not start\n{}", out.report());
            }
            thread::sleep(Duration::from_millis(5));
        }
        broker
    }

    fn pid(&self) -> Pid {
        Pid::from_raw(self.running.as_ref().unwrap().pid as i32)
    }

    fn gate(&self, env: &TestEnv) -> Gate {
        match &self.runtime {
            Some(dir) => gate_in(env, self.user, dir),
            None => env.gate().user(self.user).env_remove("XDG_RUNTIME_DIR"),
        }
    }

    /// The open requests, as the test itself sees them with `gate pending --json`.
    fn pending(&self, env: &TestEnv) -> Vec<Value> {
        let out = self.gate(env).args(["pending", "--json"]).run();
        out.assert_code(0);
        serde_json::from_str(&out.stdout()).unwrap()
    }

    /// Wait until a request for `command` is open; its id.
    fn wait_pending(&self, env: &TestEnv, command: &str) -> String {
        let end = Instant::now() + WAIT;
        loop {
            let pending = self.pending(env);
            if let Some(item) = pending.iter().find(|i| i["command"] == command) {
                return item["id"].as_str().unwrap().to_owned();
            }
            assert!(
                Instant::now() < end,
                "no request for {command:?}: {pending:?}"
            );
            thread::sleep(Duration::from_millis(10));
        }
    }

    fn stop(mut self) -> Outcome {
        kill(self.pid(), Signal::SIGTERM).unwrap();
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

/// A gate at level `ask`, started by the test, that has to ask about `command`.
fn asking(gate: Gate, command: &str) -> Gate {
    gate.args([
        "--no-config",
        "--level",
        "ask",
        "--no-tty",
        "--timeout",
        "60",
    ])
    .args(["-c", command])
    .deadline(Duration::from_secs(90))
}

/// An approver tool written by hand: it reads the token beside the socket if it can,
/// says hello, and approves request `ID`, printing each reply.
const RAW_APPROVER: &str = r#"
import json, socket, sys
path, ident = sys.argv[1], sys.argv[2]
try:
    token = open(path + ".token").read().strip()
except OSError as e:
    print("raw: no token:", e.strerror)
    token = "0" * 64
try:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
except OSError as e:
    print("raw: cannot connect:", e.strerror)
    sys.exit(0)
f = s.makefile("rw")
def send(message):
    try:
        f.write(json.dumps(message) + "\n")
        f.flush()
    except OSError as e:
        print("raw: cannot send:", e.strerror)
def receive():
    try:
        return f.readline().strip()
    except OSError as e:
        return "(" + e.strerror + ")"
send({"type": "hello", "version": 1, "role": "approver", "token": token})
print("raw hello:", receive())
send({"type": "decide", "id": ident, "decision": "approve", "source": "raw"})
print("raw decide:", receive())
"#;

/// What a model's command tries against a waiting request: gate's own approver tools,
/// then the hand-written one. `$1` request id, `$2` socket, `$3` gate, `$4` python3,
/// `$5` the raw approver.
const ATTACK: &str = r#"exec 2>&1
"$3" approve "$1"; echo "approve: $?"
"$3" pending; echo "pending: $?"
"$3" deny "$1"; echo "deny: $?"
"$4" "$5" "$2" "$1"; echo "raw: $?"
"#;

/// The attack's command line: `sh ATTACK ID SOCKET GATE PYTHON RAW`, words an allow rule
/// `sh` matches.
fn attack_words(env: &TestEnv, broker: &Broker, id: &str) -> Vec<String> {
    let attack = env.write("attack.sh", ATTACK);
    let raw = env.write("raw-approver.py", RAW_APPROVER);
    [
        "sh".into(),
        attack.display().to_string(),
        id.to_owned(),
        broker.socket.display().to_string(),
        gate_binary_for(broker.user).display().to_string(),
        python3().display().to_string(),
        raw.display().to_string(),
    ]
    .to_vec()
}

/// Start a request the test makes, let a command gate runs with `level_args` try to
/// list, approve and deny it, and check that nothing happened; then the same script run
/// by the test approves it (the control).
fn the_command_cannot_answer_its_own_request(
    env: TestEnv,
    user: User,
    dir: BrokerDir,
    level_args: &[&str],
) {
    let broker = match dir {
        BrokerDir::Runtime => Broker::start(&env, user),
        BrokerDir::State => Broker::start_in(&env, user, None),
    };
    let approved = env.file("approved");
    let requester = asking(broker.gate(&env), "touch approved").spawn();
    let id = broker.wait_pending(&env, "touch approved");
    let words = attack_words(&env, &broker, &id);

    let out = broker
        .gate(&env)
        .args(["--no-config", "--audit-log", "off"])
        .args(level_args)
        .args(["-c", &shell_words::join(&words)])
        .run();
    out.assert_code(0);
    let said = out.stdout();
    for tool in ["approve", "pending", "deny"] {
        assert!(
            said.contains(&format!(
                "gate: {tool}: this process runs with no_new_privs — it descends from a \
                 command gate ran (or another sandbox) and cannot answer requests"
            )) && said.contains(&format!("{tool}: 125")),
            "gate {tool} should refuse to run inside the command\n{}",
            out.report()
        );
    }
    assert!(
        !said.contains("welcome") && !said.contains("answered"),
        "the hand-written approver got in\n{}",
        out.report()
    );
    let pending = broker.pending(&env);
    assert!(
        pending.iter().any(|i| i["id"] == id.as_str()),
        "the request was settled by the command: {pending:?}\n{}",
        out.report()
    );
    assert!(!approved.exists(), "{}", out.report());

    // Control: the same script, run by the test as the same user, approves (and its
    // hand-written approver is welcomed, then told the request is settled).
    let control = broker
        .gate(&env)
        .program(require_program("sh"))
        .args(&words[1..])
        .run();
    control.assert_code(0);
    assert!(
        control.stdout().contains("answered\napprove: 0")
            && control.stdout().contains("\"welcome\""),
        "control: {}",
        control.report()
    );
    requester.wait().assert_code(0);
    assert!(approved.exists(), "control: the approved command ran");
    broker.stop().assert_code(0);
}

// ---------------------------------------------------------------------------------------
// A command cannot answer requests: at ask, at full, at safe.

for_each_user! {
    /// An allowed command at `ask` (a script, as an allowed `make` runs a Makefile) that
    /// runs `gate approve`, `gate pending`, `gate deny` and a hand-written approver with
    /// the token it can read: every tool refuses to start, the broker refuses the
    /// hand-written one, the request stays open.
    fn an_allowed_command_at_ask_cannot_answer_its_own_request(user) {
        the_command_cannot_answer_its_own_request(
            TestEnv::new(),
            user,
            BrokerDir::Runtime,
            &["--level", "ask", "--allow", "sh"],
        );
    }

    /// The same at `full`.
    fn a_command_at_full_cannot_answer_its_own_request(user) {
        the_command_cannot_answer_its_own_request(
            TestEnv::new(),
            user,
            BrokerDir::Runtime,
            &["--level", "full"],
        );
    }

    /// At `safe`, with the runtime directory under /tmp (where the sandbox cannot hide
    /// the broker's token) and Unix sockets allowed: the case that approved before.
    fn a_sandboxed_command_cannot_answer_with_the_runtime_dir_in_tmp_and_unix_sockets(user) {
        let env = TestEnv::new();
        assert!(env.root.starts_with("/tmp"), "{}", env.root.display());
        the_command_cannot_answer_its_own_request(
            env,
            user,
            BrokerDir::Runtime,
            &["--level", "safe", "--unix-sockets"],
        );
    }

    /// At `safe`, runtime directory under /tmp, Unix sockets refused (the default).
    fn a_sandboxed_command_cannot_answer_with_the_runtime_dir_in_tmp(user) {
        let env = TestEnv::new();
        assert!(env.root.starts_with("/tmp"), "{}", env.root.display());
        the_command_cannot_answer_its_own_request(
            env,
            user,
            BrokerDir::Runtime,
            &["--level", "safe"],
        );
    }

    /// At `safe`, runtime directory outside /tmp (hidden by the sandbox), Unix sockets
    /// allowed.
    fn a_sandboxed_command_cannot_answer_with_the_runtime_dir_outside_tmp_and_unix_sockets(user) {
        the_command_cannot_answer_its_own_request(
            TestEnv::new_in("/var/tmp"),
            user,
            BrokerDir::Runtime,
            &["--level", "safe", "--unix-sockets"],
        );
    }

    /// At `safe`, runtime directory outside /tmp, Unix sockets refused.
    fn a_sandboxed_command_cannot_answer_with_the_runtime_dir_outside_tmp(user) {
        the_command_cannot_answer_its_own_request(
            TestEnv::new_in("/var/tmp"),
            user,
            BrokerDir::Runtime,
            &["--level", "safe"],
        );
    }

    /// At `safe`, with no runtime directory and the state directory under /tmp (the
    /// broker is then in `$XDG_STATE_HOME/gate/run`, which the sandbox cannot hide
    /// there), Unix sockets allowed.
    fn a_sandboxed_command_cannot_answer_with_the_state_dir_in_tmp_and_unix_sockets(user) {
        let env = TestEnv::new();
        assert!(env.state.starts_with("/tmp"), "{}", env.state.display());
        the_command_cannot_answer_its_own_request(
            env,
            user,
            BrokerDir::State,
            &["--level", "safe", "--unix-sockets"],
        );
    }

    /// The broker itself refuses an approver with no_new_privs, whatever token it sends:
    /// here the hand-written approver, with the right token, run by a command at `full`.
    /// (The attack above shows its output; this checks the broker's reply word for word.)
    fn the_broker_refuses_an_approver_with_no_new_privs_even_with_the_token(user) {
        let env = TestEnv::new();
        let broker = Broker::start(&env, user);
        let requester = asking(broker.gate(&env), "touch approved").spawn();
        let id = broker.wait_pending(&env, "touch approved");
        let raw = env.write("raw-approver.py", RAW_APPROVER);
        let run = |gate: Gate| {
            gate.arg(&raw)
                .arg(&broker.socket)
                .arg(&id)
                .run()
        };
        let out = run(broker
            .gate(&env)
            .args(["--no-config", "--audit-log", "off", "--level", "full", "--"])
            .arg(python3()));
        out.assert_code(0);
        let hello = out
            .stdout()
            .lines()
            .find_map(|l| l.strip_prefix("raw hello: ").map(str::to_owned))
            .unwrap_or_else(|| panic!("{}", out.report()));
        let reply: Value = serde_json::from_str(&hello).unwrap();
        assert_eq!(reply["type"], "error", "{}", out.report());
        let message = reply["message"].as_str().unwrap();
        assert!(
            message.starts_with("this approver (pid ")
                && message.ends_with(
                    "runs with no_new_privs: it descends from a command gate ran (or another \
                     sandbox) and cannot answer requests; answer from a terminal of your own"
                ),
            "{message}"
        );
        assert!(!env.file("approved").exists());
        // Control: the same approver, run by the test, is welcomed and approves.
        let control = run(broker.gate(&env).program(python3()));
        assert!(
            control.stdout().contains("\"welcome\"") && control.stdout().contains("answered"),
            "{}",
            control.report()
        );
        requester.wait().assert_code(0);
        assert!(env.file("approved").exists());
        broker.stop().assert_code(0);
    }

    /// A gate inside a command still asks the broker (Codex's wrapper runs gate inside
    /// the command gate ran): requests from a marked process are accepted, and the
    /// person's approval runs it.
    fn a_gate_inside_a_command_still_asks_the_broker(user) {
        let env = TestEnv::new();
        let broker = Broker::start(&env, user);
        let nested = broker
            .gate(&env)
            .args(["--no-config", "--audit-log", "off", "--level", "full", "--"])
            .arg(gate_binary_for(user))
            .args(["--no-config", "--level", "ask", "--no-tty", "--timeout", "60"])
            .args(["-c", "touch nested"])
            .deadline(Duration::from_secs(90))
            .spawn();
        let id = broker.wait_pending(&env, "touch nested");
        broker
            .gate(&env)
            .args(["approve", &id])
            .run()
            .assert_code(0)
            .assert_stdout("answered\n");
        nested.wait().assert_code(0);
        assert!(env.file("nested").exists());
        broker.stop().assert_code(0);
    }
}

// ---------------------------------------------------------------------------------------
// A command cannot stand in for the broker.

/// A listener that answers "approve" to every request: what a model would leave on the
/// broker's socket while the real broker is down. `$1` socket, `$2` file to write its
/// pid to once it listens.
const FAKE_BROKER: &str = r#"
import json, os, socket, sys, threading
path, ready = sys.argv[1], sys.argv[2]
os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
try:
    os.unlink(path)
except FileNotFoundError:
    pass
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
os.chmod(path, 0o600)
s.listen(16)
with open(ready + ".tmp", "w") as f:
    f.write(str(os.getpid()))
os.rename(ready + ".tmp", ready)
def serve(c):
    f = c.makefile("rw")
    try:
        call = json.loads(f.readline()).get("call_id", "")
    except ValueError:
        return
    f.write(json.dumps({"type": "decision", "call_id": call, "decision": "approve"}) + "\n")
    f.flush()
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
"#;

/// Start the fake broker on `socket` from a command gate runs at `full`, in the
/// background (`setsid`, so it outlives the command, as a model's would); its pid.
fn fake_broker_from_a_command(gate: Gate, env: &TestEnv, socket: &Path, name: &str) -> i32 {
    let fake = env.write("fake-broker.py", FAKE_BROKER);
    let ready = env.file(name);
    let words = [
        "setsid".to_owned(),
        python3().display().to_string(),
        fake.display().to_string(),
        socket.display().to_string(),
        ready.display().to_string(),
    ];
    let launch = format!("{} </dev/null >/dev/null 2>&1 &", shell_words::join(&words));
    gate.args([
        "--no-config",
        "--audit-log",
        "off",
        "--level",
        "full",
        "-c",
        &launch,
    ])
    .run()
    .assert_code(0);
    wait_ready(&ready)
}

/// The same fake broker, started by the test itself; kept running until dropped.
fn fake_broker_from_the_test(gate: Gate, env: &TestEnv, socket: &Path, name: &str) -> Running {
    let fake = env.write("fake-broker.py", FAKE_BROKER);
    let ready = env.file(name);
    let running = gate
        .program(python3())
        .arg(&fake)
        .arg(socket)
        .arg(&ready)
        .deadline(Duration::from_secs(120))
        .spawn();
    wait_ready(&ready);
    running
}

for_each_user! {
    /// With the broker down, a command at `full` leaves a listener on the broker's socket
    /// that approves everything: the next gate that asks refuses it and runs nothing, and
    /// `gate pending` does not hand it the token. Control: the same listener started by
    /// the test is asked, and its approval runs the command.
    fn a_fake_broker_started_by_a_command_is_not_trusted(user) {
        let env = TestEnv::new();
        let runtime = runtime_dir(&env, user);
        let socket = runtime.join("gate/broker.sock");
        let pid = fake_broker_from_a_command(gate_in(&env, user, &runtime), &env, &socket, "fake-1");
        let fake = Killed(pid);
        assert_eq!(no_new_privs(pid), "1", "the command's listener carries the mark");

        let out = asking(gate_in(&env, user, &runtime), "touch approved").run();
        out.assert_refused()
            .assert_stderr_contains("the approval socket cannot be trusted")
            .assert_stderr_contains(&format!(
                "the approver on {} (pid {pid}) runs with no_new_privs (a command gate ran, \
                 or a sandbox, started it); it cannot be trusted to answer; nothing was run",
                socket.display()
            ));
        assert_absent(&env.file("approved"), &out);
        let out = gate_in(&env, user, &runtime).args(["pending"]).run();
        out.assert_gate_error()
            .assert_stderr_contains("runs with no_new_privs")
            .assert_stderr_contains("not sending it the token");
        drop(fake);
        assert!(ended(pid));

        // Control.
        let listener =
            fake_broker_from_the_test(gate_in(&env, user, &runtime), &env, &socket, "fake-2");
        asking(gate_in(&env, user, &runtime), "touch approved")
            .run()
            .assert_code(0);
        assert!(env.file("approved").exists(), "control: the approved command ran");
        let _ = kill(Pid::from_raw(listener.pid as i32), Signal::SIGKILL);
        listener.wait();
    }

    /// `gate serve` run by a command refuses to start, so no broker a command starts
    /// stands on the socket; the control starts one outside gate.
    fn gate_serve_refuses_to_start_inside_a_command(user) {
        let env = TestEnv::new();
        let runtime = runtime_dir(&env, user);
        let out = gate_in(&env, user, &runtime)
            .args(["--no-config", "--audit-log", "off", "--level", "full", "--"])
            .arg(gate_binary_for(user))
            .arg("serve")
            .run();
        out.assert_gate_error().assert_stderr_contains(
            "gate: serve: this process runs with no_new_privs — it descends from a command \
             gate ran (or another sandbox), so requesters would not trust a broker started \
             here; run it in a terminal of your own",
        );
        assert!(!runtime.join("gate/broker.sock").exists(), "{}", out.report());
        // Control (and `Broker::start` checks the socket appears).
        let broker = Broker::start_in(&env, user, Some(runtime));
        broker.stop().assert_code(0);
    }
}

/// A scratch `/etc` with a locked system file, bind-mounted over `/etc` in a private
/// mount namespace for one gate (`unshare --mount`, which needs root: the tests run as
/// root). gate then runs as `user`, through `setpriv`.
struct LockedEtc {
    root: tempfile::TempDir,
}

impl LockedEtc {
    fn new(config: &str) -> LockedEtc {
        let root = tempfile::tempdir_in("/var/tmp").unwrap();
        let etc = root.path().join("etc");
        fs::create_dir_all(etc.join("gate")).unwrap();
        for file in ["ld.so.cache", "passwd", "group", "nsswitch.conf"] {
            let from = Path::new("/etc").join(file);
            if from.exists() {
                fs::copy(&from, etc.join(file)).unwrap();
            }
        }
        fs::write(etc.join("gate/config.toml"), config).unwrap();
        fs::set_permissions(root.path(), fs::Permissions::from_mode(0o755)).unwrap();
        LockedEtc { root }
    }

    /// `gate ARGS` as `user` under the scratch `/etc`, with `env` as its environment.
    fn gate(&self, env: &TestEnv, user: User, args: &[&str]) -> std::process::Output {
        needs_root("this test bind-mounts a scratch /etc, which needs root (`unshare --mount`)");
        let uid = uid_of(user);
        let mut command = Command::new(require_program("unshare"));
        command
            .args(["--mount", "--", "sh", "-c"])
            .arg("mount --bind \"$1\" /etc && shift && exec \"$@\"")
            .arg("sh")
            .arg(self.root.path().join("etc"))
            .arg(require_program("setpriv"))
            .args([format!("--reuid={uid}"), format!("--regid={uid}")])
            .args(["--clear-groups", "--"])
            .arg(gate_binary_for(user))
            .args(args)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", &env.home)
            .env("XDG_CONFIG_HOME", &env.config)
            .env("XDG_STATE_HOME", &env.state)
            .current_dir(&env.work)
            .stdin(std::process::Stdio::null());
        let out = command.output().expect("unshare (util-linux) runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains("unshare:") && !stderr.contains("mount:"),
            "could not set up a private /etc: {stderr}"
        );
        out
    }
}

for_each_user! {
    /// A locked system file pins `approval.socket`; with nothing listening there, a
    /// command at `full` leaves a listener on that very path. The pin does not make it
    /// trusted: the next gate that asks refuses it. Control: the same listener started
    /// by the test is asked, and its approval runs the command.
    fn a_fake_listener_on_a_socket_pinned_by_a_locked_system_file_is_not_trusted(user) needs root because "it bind-mounts a scratch /etc" {
        let env = TestEnv::new_in("/var/tmp");
        let runtime = runtime_dir(&env, user);
        let socket = runtime.join("approver/gate.sock");
        let etc = LockedEtc::new(&format!(
            "lock = true\nlevel = \"ask\"\n[approval]\nsocket = \"{}\"\ntty = false\n",
            socket.display()
        ));
        let ask = ["-c", "touch approved"];
        let pid = fake_broker_from_a_command(gate_in(&env, user, &runtime), &env, &socket, "fake-1");
        let fake = Killed(pid);
        let out = etc.gate(&env, user, &ask);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(REFUSED), "{stderr}");
        assert!(
            stderr.contains(&format!(
                "the approver on {} (pid {pid}) runs with no_new_privs",
                socket.display()
            )),
            "{stderr}"
        );
        assert!(!env.file("approved").exists(), "{stderr}");
        drop(fake);
        assert!(ended(pid));

        // Control.
        let listener =
            fake_broker_from_the_test(gate_in(&env, user, &runtime), &env, &socket, "fake-2");
        let out = etc.gate(&env, user, &ask);
        let _ = kill(Pid::from_raw(listener.pid as i32), Signal::SIGKILL);
        listener.wait();
        assert_eq!(
            out.status.code(),
            Some(0),
            "control: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(env.file("approved").exists(), "control: the approved command ran");
    }
}

// ---------------------------------------------------------------------------------------
// A command cannot reach into the broker.

/// Four ways into another process, each printing `NAME ok` or `NAME errno=N`: open its
/// memory, read it with process_vm_readv, take a descriptor with pidfd_getfd, attach
/// with PTRACE_SEIZE (undone when this process exits).
const INTRUDER: &str = r#"
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
pid = int(sys.argv[1])
def report(name, ok):
    print(name, "ok" if ok else "errno=%d" % ctypes.get_errno(), flush=True)
try:
    os.close(os.open("/proc/%d/mem" % pid, os.O_RDONLY))
    print("mem ok")
except OSError as e:
    print("mem errno=%d" % e.errno)
try:
    address = int(open("/proc/%d/maps" % pid).readline().split("-")[0], 16)
except OSError:
    address = 0x1000
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
buf = ctypes.create_string_buffer(8)
local, remote = iovec(ctypes.addressof(buf), 8), iovec(address, 8)
report("vm_readv", libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0) == 8)
pidfd = libc.syscall(434, pid, 0)
report("getfd", pidfd >= 0 and libc.syscall(438, pidfd, 0, 0) >= 0)
report("seize", libc.ptrace(0x4206, pid, 0, 0) == 0)
"#;

for_each_user! {
    /// A command at `full` cannot read the broker's memory, take its descriptors or
    /// attach to it; the test itself, as the same user, can (the control).
    fn a_command_cannot_trace_or_read_the_broker(user) {
        let env = TestEnv::new();
        let broker = Broker::start(&env, user);
        let pid = broker.pid().to_string();
        let intruder = env.write("intruder.py", INTRUDER);
        let out = broker
            .gate(&env)
            .args(["--no-config", "--audit-log", "off", "--level", "full", "--"])
            .arg(python3())
            .arg(&intruder)
            .arg(&pid)
            .run();
        out.assert_code(0);
        let eperm = format!("errno={}", libc::EPERM);
        let eacces = format!("errno={}", libc::EACCES);
        for (name, errno) in [("mem", &eacces), ("vm_readv", &eperm), ("getfd", &eperm), ("seize", &eperm)] {
            assert!(
                out.stdout().lines().any(|l| l == format!("{name} {errno}")),
                "{name} should fail with {errno}\n{}",
                out.report()
            );
        }
        // Control.
        let control = broker.gate(&env).program(python3()).arg(&intruder).arg(&pid).run();
        assert_eq!(
            control.stdout(),
            "mem ok\nvm_readv ok\ngetfd ok\nseize ok\n",
            "control: the test, as the same user, reaches the broker (with Yama's \
             ptrace_scope above 0 an unprivileged control cannot: this machine must have 0)\n{}",
            control.report()
        );
        broker.stop().assert_code(0);
    }
}

// ---------------------------------------------------------------------------------------
// What the mark leaves alone, and what it costs.

/// Files written, renamed and linked across directories (with os.rename and os.link,
/// which fail rather than copy), a TCP connection to 127.0.0.1, and a signal to a process
/// an earlier command started. `$1` port, `$2` pid.
const ORDINARY_WORK: &str = r#"
import os, socket, sys, tempfile
port, pid = int(sys.argv[1]), int(sys.argv[2])
for d in ("a", "b"):
    os.makedirs(d, exist_ok=True)
open("a/file", "w").write("x")
os.rename("a/file", "b/file")
os.link("b/file", "a/link")
os.makedirs("a/dir/inner")
os.rename("a/dir", "b/dir")
with tempfile.NamedTemporaryFile(dir="/tmp") as t:
    t.write(b"x")
    os.rename(t.name, t.name + ".moved")
    os.rename(t.name + ".moved", t.name)
c = socket.create_connection(("127.0.0.1", port))
c.sendall(b"hi")
c.close()
os.kill(pid, 15)
print("all done")
"#;

for_each_user! {
    /// Under the mark, at `ask` (an allowed command) and at `full`: the work agents do
    /// still works.
    fn ordinary_work_still_works_under_the_mark(user) {
        for level in [&["--level", "ask", "--allow", "python3"][..], &["--level", "full"]] {
            let env = TestEnv::new();
            let work = env.write("work.py", ORDINARY_WORK);
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let port = listener.local_addr().unwrap().port().to_string();
            // An earlier command leaves a server running.
            let started = env
                .gate()
                .user(user)
                .args(["--no-config", "--audit-log", "off", "--level", "full", "-c"])
                .arg("setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $!")
                .run();
            started.assert_code(0);
            let server: i32 = started.stdout().trim().parse().unwrap();
            let _server = Killed(server);
            let command = format!("python3 {} {port} {server}", work.display());
            let out = env
                .gate()
                .user(user)
                .env("PATH", python3().parent().unwrap())
                .args(["--no-config", "--audit-log", "off"])
                .args(level)
                .args(["-c", &command])
                .run();
            out.assert_code(0).assert_stdout("all done\n");
            assert!(env.work.join("b/file").exists() && env.work.join("a/link").exists());
            assert!(env.work.join("b/dir/inner").is_dir());
            let (mut stream, _) = listener.accept().unwrap();
            let mut got = String::new();
            std::io::Read::read_to_string(&mut stream, &mut got).unwrap();
            assert_eq!(got, "hi");
            assert!(ended(server), "the earlier command's server was not stopped");
        }
    }

    /// On this kernel (Landlock ABI 6 and later) the mark's domain handles no file right,
    /// so a command may change mounts in its own namespaces (what bubblewrap and rootless
    /// containers do); on ABI 2 to 5 the domain would refuse it (docs/security.md). The
    /// control mounts outside gate.
    fn a_command_can_mount_in_its_own_namespace(user) {
        let env = TestEnv::new();
        let mnt = env.work.join("mnt");
        fs::create_dir(&mnt).unwrap();
        let words = [
            "unshare".to_owned(),
            "-r".to_owned(),
            "-m".to_owned(),
            "sh".to_owned(),
            "-c".to_owned(),
            format!("mount -t tmpfs none {} && echo mounted", mnt.display()),
        ];
        let control = env
            .gate()
            .user(user)
            .program(require_program("unshare"))
            .args(&words[1..])
            .run();
        control.assert_code(0).assert_stdout("mounted\n");
        let out = env
            .gate()
            .user(user)
            .args(["--no-config", "--audit-log", "off", "--level", "full", "-c"])
            .arg(shell_words::join(&words))
            .run();
        out.assert_code(0).assert_stdout("mounted\n");
    }

    /// The mark scopes abstract Unix sockets: a command cannot connect to one that a
    /// process outside its domain bound (an X server, an abstract D-Bus: deputies that
    /// could type into the person's terminal or start programs). The control connects
    /// the same client from outside gate.
    fn a_command_cannot_reach_an_abstract_socket_bound_outside(user) {
        let env = TestEnv::new();
        let name = format!("gate-test-abstract-{}-{user:?}", std::process::id());
        use std::os::linux::net::SocketAddrExt;
        let address = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let listener = std::os::unix::net::UnixListener::bind_addr(&address).unwrap();
        listener.set_nonblocking(true).unwrap();
        let client = format!(
            "import socket,sys\ns=socket.socket(socket.AF_UNIX)\n\
             try:\n s.connect('\\0{name}'); print('connected')\n\
             except OSError as e:\n print('refused', e.errno)\n"
        );
        let python = common::python3();
        let control = env
            .gate()
            .user(user)
            .program(python)
            .args(["-c", &client])
            .run();
        control.assert_code(0).assert_stdout("connected\n");
        let out = env
            .gate()
            .user(user)
            .args(["--no-config", "--audit-log", "off", "--level", "full", "--"])
            .arg(python)
            .args(["-c", &client])
            .run();
        out.assert_code(0).assert_stdout(&format!("refused {}\n", libc::EPERM));
    }

    /// A gate nested deeper than the 16 Landlock domains the kernel allows refuses (125)
    /// instead of running its command unmarked; 16 deep still runs (the control).
    fn a_gate_nested_beyond_landlocks_limit_refuses(user) {
        let env = TestEnv::new();
        let gate = gate_binary_for(user).display().to_string();
        let nest = |depth: usize, file: &str| {
            let mut args: Vec<String> = Vec::new();
            for _ in 1..depth {
                args.extend(
                    [&gate, "--no-config", "--audit-log", "off", "--level", "full", "--"]
                        .map(str::to_owned),
                );
            }
            env.gate()
                .user(user)
                .args(["--no-config", "--audit-log", "off", "--level", "full", "--"])
                .args(&args)
                .args(["touch", file])
                .run()
        };
        nest(16, "sixteen").assert_code(0);
        assert!(env.file("sixteen").exists(), "control: 16 deep runs");
        let out = nest(17, "seventeen");
        out.assert_gate_error().assert_stderr_contains(
            "gate: cannot mark the command: Landlock nests at most 16 domains, and this gate \
             runs inside 16 already",
        );
        assert_absent(&env.file("seventeen"), &out);
    }
}

/// A setuid-root program gains nothing in a command gate runs, at `full` and at `ask`
/// (so neither `sudo` with a cached timestamp nor `crontab` and `at` run anything for
/// it outside gate); run by the test itself it does (the control). Only root can make a
/// setuid-root file.
#[test]
#[ignore = "root tier: cargo test --lib --test all -- --ignored, as root"]
fn a_setuid_program_gains_nothing_at_any_level() {
    needs_root("this test makes a setuid-root program, which needs root");
    let env = TestEnv::new_in("/var/tmp");
    let copy = env.work.join("id-setuid");
    fs::copy(require_program("id"), &copy).unwrap();
    fs::set_permissions(&copy, fs::Permissions::from_mode(0o4755)).unwrap();
    let id = copy.display().to_string();
    for level in [
        &["--level", "full"][..],
        &["--level", "ask", "--allow", id.as_str()],
    ] {
        env.gate()
            .user(User::Unprivileged)
            .args(["--no-config", "--audit-log", "off"])
            .args(level)
            .args(["--", id.as_str(), "-u"])
            .run()
            .assert_code(0)
            .assert_stdout(&format!("{NOBODY}\n"));
    }
    env.gate()
        .user(User::Unprivileged)
        .program(&copy)
        .arg("-u")
        .run()
        .assert_code(0)
        .assert_stdout("0\n");
}
