//! Lasting approvals ("always allow"), black-box: the real broker writes the person's
//! always-allow file when `gate approve --always` or `--always-rule` asks it to, and the
//! real gate reads that file as part of the user's configuration, in any session, with
//! or without a broker.
//!
//! What is held: the next run of the same command is not asked (a new session, a
//! restarted broker, no broker); a longer one is (exact by default); a prefix only when
//! the person names it; a compound command is never split into a rule; approvals at
//! once from two brokers all land; a lock refuses the file and the approval; deny rules
//! still win; a command gate ran cannot add a rule through the broker, even holding its
//! token (control: the same client run by the test can), nor write the file at `safe`
//! (control: it can at `full`, which is the trust docs/security.md states). Each runs as
//! the current user and as uid 65534. Every wait has a deadline.

use crate::common;

use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use common::*;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::Value;

/// How long any one wait may take before the test fails.
const WAIT: Duration = Duration::from_secs(30);

/// A runtime directory of `user`'s named `name` under the test's root.
fn runtime(env: &TestEnv, user: User, name: &str) -> PathBuf {
    let uid = uid_of(user);
    let dir = env.root.join(format!("{name}-{uid}"));
    fs::create_dir(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
    std::os::unix::fs::chown(&dir, Some(uid), Some(uid)).unwrap();
    dir
}

/// A gate of `user`'s whose broker socket is the default one in `run`.
fn gate(env: &TestEnv, user: User, run: &Path) -> Gate {
    env.gate().user(user).env("XDG_RUNTIME_DIR", run)
}

/// A running `gate serve`, killed if the test ends without stopping it.
struct Broker {
    running: Option<Running>,
}

impl Broker {
    /// Start a broker on the default socket in `run`, through `within` (a wrapper, or
    /// nothing).
    fn start(env: &TestEnv, user: User, run: &Path, within: &[OsString]) -> Broker {
        Broker::start_with(env, user, run, within, &[])
    }

    /// [`Broker::start`] with options for `gate serve`.
    fn start_with(
        env: &TestEnv,
        user: User,
        run: &Path,
        within: &[OsString],
        args: &[&str],
    ) -> Broker {
        let socket = run.join("gate/broker.sock");
        let running = gate(env, user, run)
            .within(within)
            .arg("serve")
            .args(args)
            .deadline(Duration::from_secs(300))
            .spawn();
        let mut broker = Broker {
            running: Some(running),
        };
        let deadline = Instant::now() + WAIT;
        while fs::symlink_metadata(&socket).is_err() {
            if Instant::now() > deadline {
                let out = broker.stop();
                panic!("no broker socket in time\n{}", out.report());
            }
            thread::sleep(Duration::from_millis(5));
        }
        broker
    }

    fn stop(&mut self) -> Outcome {
        let running = self.running.take().unwrap();
        kill(Pid::from_raw(running.pid as i32), Signal::SIGTERM).unwrap();
        running.wait()
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        if let Some(running) = &self.running {
            let _ = kill(Pid::from_raw(running.pid as i32), Signal::SIGKILL);
        }
    }
}

/// A gate at level `ask` (the user file read, so the always-allow file too) that runs
/// `command`, asking the broker in `run` when it must.
fn asking(env: &TestEnv, user: User, run: &Path, session: &str, command: &str) -> Running {
    gate(env, user, run)
        .args(["--level", "ask", "--no-tty", "--timeout", "120"])
        .args(["--session", session, "-c", command])
        .deadline(Duration::from_secs(150))
        .spawn()
}

/// The same, run to its end, when nothing is expected to ask anyone: with no broker
/// in `run` anything asked is refused at once.
fn run_unasked(env: &TestEnv, user: User, run: &Path, session: &str, command: &str) -> Outcome {
    gate(env, user, run)
        .args(["--level", "ask", "--no-tty", "--timeout", "5"])
        .args(["--session", session, "-c", command])
        .run()
}

/// The broker's open requests, as `gate pending --json` lists them.
fn pending(env: &TestEnv, user: User, run: &Path) -> Vec<Value> {
    let out = gate(env, user, run).args(["pending", "--json"]).run();
    out.assert_code(0);
    serde_json::from_str(&out.stdout()).unwrap()
}

/// Wait until a request for `command` is open, and return its short id.
fn wait_pending(env: &TestEnv, user: User, run: &Path, command: &str) -> String {
    let deadline = Instant::now() + WAIT;
    loop {
        let list = pending(env, user, run);
        if let Some(found) = list.iter().find(|r| r["command"] == command) {
            return found["id"].as_str().unwrap().to_owned();
        }
        assert!(
            Instant::now() < deadline,
            "`{command}` not pending: {list:?}"
        );
        thread::sleep(Duration::from_millis(10));
    }
}

fn approve(env: &TestEnv, user: User, run: &Path, args: &[&str]) -> Outcome {
    gate(env, user, run).arg("approve").args(args).run()
}

fn always_file(env: &TestEnv) -> PathBuf {
    env.config.join("gate/always.toml")
}

fn last_record(env: &TestEnv) -> Value {
    audit_records(&env.default_audit_log()).pop().unwrap()
}

for_each_user! {
    /// The whole path: asked once, approved with --always; then the same command runs
    /// unasked in a new session, after the broker restarts, and with no broker at all,
    /// recorded as `always-allow`; a longer command is still asked.
    fn an_always_approval_lasts_across_sessions_and_broker_restarts(user) {
        let env = TestEnv::new();
        let run = runtime(&env, user, "run");
        let mut broker = Broker::start(&env, user, &run, &[]);
        let first = asking(&env, user, &run, "s1", "touch once");
        let id = wait_pending(&env, user, &run, "touch once");
        approve(&env, user, &run, &[&id, "--always"])
            .assert_code(0)
            .assert_stdout("answered\n");
        first.wait().assert_code(0);
        fs::remove_file(env.file("once")).unwrap();
        let text = fs::read_to_string(always_file(&env)).unwrap();
        assert!(
            text.contains("[[allow]]\nrule = \"touch once\"\nexact = true\n"),
            "{text}"
        );

        // gate rules lists it with its origin.
        let out = gate(&env, user, &run).args(["rules", "--json"]).run();
        out.assert_code(0);
        let rules: Value = serde_json::from_str(&out.stdout()).unwrap();
        let rule = rules["rules"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["rule"] == "touch once")
            .unwrap_or_else(|| panic!("{rules}"))
            .clone();
        assert_eq!(rule["origin"]["source"], "always-allow", "{rule}");
        assert_eq!(rule["origin"]["line"], 3, "{rule}");

        // A restarted broker, a new session: nobody is asked.
        broker.stop().assert_code(0);
        let mut broker = Broker::start(&env, user, &run, &[]);
        let again = run_unasked(&env, user, &run, "s2", "touch once");
        again.assert_code(0);
        assert!(env.file("once").exists(), "{}", again.report());
        let record = last_record(&env);
        assert_eq!(record["decided_by"], "always-allow", "{record}");
        assert!(
            record["rule_origin"]
                .as_str()
                .unwrap()
                .ends_with("gate/always.toml:3 (always allow)"),
            "{record}"
        );

        // Exact: a longer command is asked, and the person denies it.
        let longer = asking(&env, user, &run, "s2", "touch once more");
        let id = wait_pending(&env, user, &run, "touch once more");
        gate(&env, user, &run).args(["deny", &id]).run().assert_code(0);
        longer.wait().assert_refused();
        assert!(!env.file("more").exists());

        // No broker at all: the file is the user's configuration, read by gate itself.
        broker.stop().assert_code(0);
        fs::remove_file(env.file("once")).unwrap();
        run_unasked(&env, user, &run, "s3", "touch once").assert_code(0);
        assert!(env.file("once").exists());
        let out = run_unasked(&env, user, &run, "s3", "touch once more");
        out.assert_refused();
        assert!(!env.file("more").exists(), "{}", out.report());
    }

    /// A prefix is added only when the person names one, and it must cover the command
    /// approved; exact is the default.
    fn a_prefix_only_when_chosen(user) {
        let env = TestEnv::new();
        let run = runtime(&env, user, "run");
        let mut broker = Broker::start(&env, user, &run, &[]);

        let first = asking(&env, user, &run, "s1", "touch p1");
        let id = wait_pending(&env, user, &run, "touch p1");
        // A prefix that does not cover the command is refused; the request stays open.
        approve(&env, user, &run, &[&id, "--always-rule", "touch q"])
            .assert_gate_error()
            .assert_stderr_contains(
                "the rule `touch q` does not match the command `touch p1`",
            );
        assert!(!always_file(&env).exists());
        wait_pending(&env, user, &run, "touch p1");
        approve(&env, user, &run, &[&id, "--always-rule", "touch"]).assert_code(0);
        first.wait().assert_code(0);

        let second = asking(&env, user, &run, "s1", "mkdir -p d2");
        let id = wait_pending(&env, user, &run, "mkdir -p d2");
        approve(&env, user, &run, &[&id, "--always"]).assert_code(0);
        second.wait().assert_code(0);
        broker.stop().assert_code(0);

        // The prefix covers what follows it; the exact rule covers only itself.
        run_unasked(&env, user, &run, "s2", "touch p3").assert_code(0);
        assert!(env.file("p3").exists());
        run_unasked(&env, user, &run, "s2", "mkdir -p d2").assert_code(0);
        let out = run_unasked(&env, user, &run, "s2", "mkdir -p d2 d3");
        out.assert_refused();
        let out = run_unasked(&env, user, &run, "s2", "mkdir -p");
        out.assert_refused();
        let text = fs::read_to_string(always_file(&env)).unwrap();
        assert!(text.contains("rule = \"touch\"\n\n"), "{text}");
        assert!(text.contains("rule = \"mkdir -p d2\"\nexact = true\n"), "{text}");
    }

    /// `make && git push` approved always is the whole text or nothing: no allow rule
    /// matches shell syntax, so neither an exact rule nor a prefix is written, and the
    /// parts are never added one by one. The request stays open for another answer.
    fn a_compound_command_is_never_split(user) {
        let env = TestEnv::new();
        let run = runtime(&env, user, "run");
        let mut broker = Broker::start(&env, user, &run, &[]);
        let command = "touch c1 && touch c2";
        let asked = asking(&env, user, &run, "s1", command);
        let id = wait_pending(&env, user, &run, command);
        for args in [&["--always"][..], &["--always-rule", "touch c1"]] {
            let out = approve(&env, user, &run, &[&[id.as_str()][..], args].concat());
            out.assert_gate_error()
                .assert_stderr_contains("contains the shell character '&'")
                .assert_stderr_contains("gate never splits one into its parts");
            assert_eq!(out.stderr().lines().count(), 1, "{}", out.report());
        }
        assert!(!always_file(&env).exists());
        assert!(!env.file("c1").exists());
        // Still open: approved once, it runs, and nothing lasts.
        approve(&env, user, &run, &[&id]).assert_code(0);
        asked.wait().assert_code(0);
        broker.stop().assert_code(0);
        assert!(!always_file(&env).exists());
        fs::remove_file(env.file("c1")).unwrap();
        run_unasked(&env, user, &run, "s2", "touch c1").assert_refused();
        run_unasked(&env, user, &run, "s2", command).assert_refused();
        assert!(!env.file("c1").exists());
    }

    /// Two brokers (two sockets, one person) take lasting approvals at the same time,
    /// each writing the one file: every rule lands, and the file loads.
    fn concurrent_approvals_all_land(user) {
        const EACH: usize = 6;
        let env = TestEnv::new();
        let runs = [runtime(&env, user, "runa"), runtime(&env, user, "runb")];
        let _brokers: Vec<Broker> =
            runs.iter().map(|run| Broker::start(&env, user, run, &[])).collect();
        let mut waiting = Vec::new();
        let mut ids: Vec<Vec<String>> = vec![Vec::new(), Vec::new()];
        for (b, run) in runs.iter().enumerate() {
            for i in 0..EACH {
                let command = format!("touch f{b}x{i}");
                waiting.push(asking(&env, user, run, &format!("s{b}{i}"), &command));
                ids[b].push(wait_pending(&env, user, run, &command));
            }
        }
        let barrier = Arc::new(Barrier::new(2));
        let env = Arc::new(env);
        let threads: Vec<_> = runs
            .iter()
            .zip(ids)
            .map(|(run, ids)| {
                let (env, run, barrier) = (env.clone(), run.clone(), barrier.clone());
                thread::spawn(move || {
                    barrier.wait();
                    let approvers: Vec<Running> = ids
                        .iter()
                        .map(|id| {
                            gate(&env, user, &run).args(["approve", id, "--always"]).spawn()
                        })
                        .collect();
                    for a in approvers {
                        a.wait().assert_code(0);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        for w in waiting {
            w.wait().assert_code(0);
        }
        let text = fs::read_to_string(always_file(&env)).unwrap();
        let out = gate(&env, user, &runs[0]).args(["rules", "--json"]).run();
        out.assert_code(0);
        let rules: Value = serde_json::from_str(&out.stdout()).unwrap();
        let lasting = rules["rules"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["origin"]["source"] == "always-allow")
            .count();
        assert_eq!(lasting, 2 * EACH, "{text}");
        for b in 0..2 {
            for i in 0..EACH {
                assert!(text.contains(&format!("rule = \"touch f{b}x{i}\"\n")), "{text}");
            }
        }
    }

    /// The always-allow file is configuration: one that does not load, or that holds
    /// anything but allow rules, stops every run with status 125 naming its line, and
    /// nothing runs. Control: fixed, it allows.
    fn a_broken_always_file_stops_every_run(user) {
        let env = TestEnv::new();
        let run = runtime(&env, user, "run");
        fs::create_dir_all(env.config.join("gate")).unwrap();
        let file = always_file(&env);
        for (text, needle) in [
            ("[[allow]]\nrule = \n", ":2: key `rule`: malformed TOML"),
            (
                "level = \"full\"\n[[allow]]\nrule = \"touch broken\"\n",
                "holds only `allow` rules",
            ),
            ("[[allow]]\nrule = \"touch a; touch b\"\n", "shell character ';'"),
        ] {
            fs::write(&file, text).unwrap();
            let out = run_unasked(&env, user, &run, "s", "touch broken");
            out.assert_gate_error().assert_stderr_contains(needle);
            assert!(out.stderr().contains(&file.display().to_string()), "{}", out.report());
            assert!(!env.file("broken").exists());
        }
        fs::write(&file, "[[allow]]\nrule = \"touch broken\"\nexact = true\n").unwrap();
        run_unasked(&env, user, &run, "s", "touch broken").assert_code(0);
        assert!(env.file("broken").exists(), "control");
    }

    /// A lasting rule is written only where it reaches the gate that asked: not for a
    /// gate that reads another always-allow file (another XDG_CONFIG_HOME), nor for a
    /// request through the requests socket (another user's or machine's gate), even one
    /// that names the broker's own file. Each is refused in one line and stays open.
    fn always_is_refused_where_the_rule_would_not_reach_the_gate_that_asks(user) {
        let env = TestEnv::new();
        let run = runtime(&env, user, "run");
        let requests = run.join("requests.sock");
        let _broker = Broker::start_with(
            &env,
            user,
            &run,
            &[],
            &["--requests-socket", requests.to_str().unwrap()],
        );
        let elsewhere = env.root.join("other-config");
        fs::create_dir(&elsewhere).unwrap();
        fs::set_permissions(&elsewhere, fs::Permissions::from_mode(0o777)).unwrap();
        let asked = gate(&env, user, &run)
            .env("XDG_CONFIG_HOME", &elsewhere)
            .args(["--level", "ask", "--no-tty", "--timeout", "120"])
            .args(["--session", "s1", "-c", "touch elsewhere"])
            .deadline(Duration::from_secs(150))
            .spawn();
        let id = wait_pending(&env, user, &run, "touch elsewhere");
        let out = approve(&env, user, &run, &[&id, "--always"]);
        out.assert_gate_error().assert_stderr_contains(&format!(
            "the gate that asks reads lasting rules from {}/gate/always.toml, and this broker \
             keeps them in {}",
            elsewhere.display(),
            always_file(&env).display()
        ));
        assert_eq!(out.stderr().lines().count(), 1, "{}", out.report());
        gate(&env, user, &run).args(["deny", &id]).run().assert_code(0);
        asked.wait().assert_refused();

        // Through the requests socket, naming the broker's own file.
        let line = serde_json::json!({
            "type": "approval_request", "version": 1, "call_id": "via-requests",
            "session_id": "s2", "command": "touch via", "work_dir": "/", "level": "ask",
            "timeout_seconds": 60, "remember_supported": true, "pid": 1,
            "always_file": always_file(&env).to_str().unwrap(),
        });
        let mut requester = command_as(user, python3())
            .args(["-c", RAW_REQUESTER])
            .arg(&requests)
            .arg(line.to_string())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let id = wait_pending(&env, user, &run, "touch via");
        let listed = pending(&env, user, &run);
        assert_eq!(listed[0]["remember_supported"], false, "{listed:?}");
        approve(&env, user, &run, &[&id, "--always"])
            .assert_gate_error()
            .assert_stderr_contains("came through the requests socket");
        assert!(!always_file(&env).exists());
        approve(&env, user, &run, &[&id]).assert_code(0);
        let mut reply = String::new();
        std::io::Read::read_to_string(requester.stdout.as_mut().unwrap(), &mut reply).unwrap();
        requester.wait().unwrap();
        let reply: Value = serde_json::from_str(reply.trim()).unwrap();
        assert_eq!(reply["decision"], "approve", "{reply}");
        assert!(reply.get("always").is_none(), "{reply}");
    }

    /// A deny rule refuses what a lasting rule allows, at `ask` as always. Control:
    /// without the deny rule it runs.
    fn deny_rules_still_win(user) {
        let env = TestEnv::new();
        let run = runtime(&env, user, "run");
        let mut broker = Broker::start(&env, user, &run, &[]);
        let asked = asking(&env, user, &run, "s1", "touch victim");
        let id = wait_pending(&env, user, &run, "touch victim");
        approve(&env, user, &run, &[&id, "--always"]).assert_code(0);
        asked.wait().assert_code(0);
        broker.stop().assert_code(0);
        fs::remove_file(env.file("victim")).unwrap();

        let out = gate(&env, user, &run)
            .args(["--level", "ask", "--no-tty", "--deny", "touch", "-c", "touch victim"])
            .run();
        out.assert_refused().assert_stderr_contains("the deny rule `touch`");
        assert!(!env.file("victim").exists());
        assert_eq!(last_record(&env)["decided_by"], "deny-rule");
        run_unasked(&env, user, &run, "s2", "touch victim").assert_code(0);
        assert!(env.file("victim").exists(), "control");
    }

    /// The model plays the person: a command gate ran reads the broker's token (it is
    /// the user's file) and sends `decide` with `always` for its own request. The
    /// broker refuses it (the command carries no_new_privs), no rule is written and the
    /// request stays open. Control: the same client, started by the test, adds the rule.
    fn a_command_cannot_answer_its_own_request_with_always(user) {
        let env = TestEnv::new();
        let run = runtime(&env, user, "run");
        let _broker = Broker::start(&env, user, &run, &[]);
        let client = env.root.join("always-client.py");
        fs::write(&client, ALWAYS_CLIENT).unwrap();
        fs::set_permissions(&client, fs::Permissions::from_mode(0o755)).unwrap();
        let socket = run.join("gate/broker.sock");
        let asked = asking(&env, user, &run, "s1", "touch pwned");
        wait_pending(&env, user, &run, "touch pwned");

        let attack = gate(&env, user, &run)
            .args(["--level", "full", "--no-config", "--"])
            .arg(python3())
            .arg(&client)
            .arg(&socket)
            .run();
        attack.assert_code(0);
        assert!(
            attack.stdout().contains("no_new_privs"),
            "the broker refused the marked client: {}",
            attack.report()
        );
        assert!(!always_file(&env).exists(), "{}", attack.report());
        wait_pending(&env, user, &run, "touch pwned");
        assert!(!env.file("pwned").exists());

        // Control: unmarked, the very same client is an approver.
        let out = command_as(user, python3())
            .arg(&client)
            .arg(&socket)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("\"settle\": \"answered\""), "control: {stdout}");
        asked.wait().assert_code(0);
        assert!(env.file("pwned").exists(), "control");
        let text = fs::read_to_string(always_file(&env)).unwrap();
        assert!(text.contains("rule = \"touch pwned\""), "control: {text}");
    }

    /// At `safe` a command cannot write the always-allow file (nor make it). Control: at
    /// `full` the same command can, and the rule it planted is in force: the file has
    /// the trust of config.toml beside it, no more (docs/security.md).
    fn only_the_sandbox_keeps_a_command_from_planting_a_lasting_rule(user) {
        let env = TestEnv::new_in("/var/tmp");
        let run = runtime(&env, user, "run");
        let plant = "mkdir -p \"$XDG_CONFIG_HOME/gate\" && \
                     printf '[[allow]]\\nrule = \"touch planted\"\\n' \
                     >> \"$XDG_CONFIG_HOME/gate/always.toml\"";
        let out = gate(&env, user, &run)
            .args(["--level", "safe", "-c", plant])
            .run();
        assert_ne!(out.code(), Some(0), "{}", out.report());
        assert!(!always_file(&env).exists(), "{}", out.report());
        run_unasked(&env, user, &run, "s", "touch planted").assert_refused();
        assert!(!env.file("planted").exists());

        let out = gate(&env, user, &run)
            .args(["--level", "full", "-c", plant])
            .run();
        out.assert_code(0);
        run_unasked(&env, user, &run, "s", "touch planted").assert_code(0);
        assert!(env.file("planted").exists(), "control");
    }
}

/// An approver tool written by hand: reads the token beside the socket, says hello,
/// and approves the first open request with `always`. Prints each reply.
const ALWAYS_CLIENT: &str = r#"
import json, socket, sys
path = sys.argv[1]
token = open(path + ".token").read().strip()
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(path)
f = s.makefile("rwb")
def send(obj):
    f.write((json.dumps(obj) + "\n").encode()); f.flush()
def recv():
    line = f.readline()
    if not line:
        print("closed"); sys.exit(0)
    obj = json.loads(line); print(json.dumps(obj)); return obj
send({"type": "hello", "version": 1, "role": "approver", "token": token})
if recv().get("type") != "welcome":
    sys.exit(0)
send({"type": "list"})
count = recv()["count"]
items = [recv() for _ in range(count)]
send({"type": "decide", "id": items[0]["id"], "decision": "approve", "always": True})
recv()
"#;

/// A requester written by hand: sends one line to a socket, prints the answer line.
const RAW_REQUESTER: &str = r#"
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall((sys.argv[2] + "\n").encode())
print(s.makefile("rb").readline().decode().strip())
"#;

/// A scratch `/etc` whose gate/config.toml is `config`, bind-mounted over /etc for the
/// processes started through [`LockedEtc::within`] (root only: `unshare --mount`).
struct LockedEtc {
    root: tempfile::TempDir,
}

impl LockedEtc {
    fn new(config: &str) -> LockedEtc {
        needs_root("this test bind-mounts a scratch /etc, which needs root (`unshare --mount`)");
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

    fn within(&self) -> Vec<OsString> {
        [
            require_program("unshare").into_os_string(),
            "--mount".into(),
            "--".into(),
            require_program("sh").into_os_string(),
            "-c".into(),
            "mount --bind \"$1\" /etc && shift && exec \"$@\"".into(),
            "sh".into(),
            self.root.path().join("etc").into_os_string(),
        ]
        .into()
    }
}

for_each_user! {
    /// Under a locked system file, a lasting rule is refused three ways, each in one
    /// line: the always-allow file, if present, stops every run (125, naming it, as the
    /// user file's allow rules do); a locked broker refuses to add one; and a locked
    /// gate's request offers none, so an unlocked broker refuses too. Controls: the
    /// unlocked runs above.
    fn a_lock_refuses_lasting_rules(user) needs root because "it bind-mounts a scratch /etc" {
        let env = TestEnv::new_in("/var/tmp");
        let run = runtime(&env, user, "run");
        let etc = LockedEtc::new("lock = true\nlevel = \"ask\"\n[approval]\ntty = false\n");

        // A locked broker; the gate that asks is not locked.
        let mut broker = Broker::start(&env, user, &run, &etc.within());
        let asked = asking(&env, user, &run, "s1", "touch locked1");
        let id = wait_pending(&env, user, &run, "touch locked1");
        let out = approve(&env, user, &run, &[&id, "--always"]);
        out.assert_gate_error().assert_stderr_contains(
            "/etc/gate/config.toml locks the configuration (lock = true), so no allow rule \
             can be added",
        );
        assert_eq!(out.stderr().lines().count(), 1, "{}", out.report());
        assert!(!always_file(&env).exists());
        gate(&env, user, &run).args(["deny", &id]).run().assert_code(0);
        asked.wait().assert_refused();
        broker.stop().assert_code(0);

        // An unlocked broker; the gate that asks is locked.
        let mut broker = Broker::start(&env, user, &run, &[]);
        let asked = gate(&env, user, &run)
            .within(etc.within())
            .args(["--session", "s2", "-c", "touch locked2"])
            .deadline(Duration::from_secs(150))
            .spawn();
        let id = wait_pending(&env, user, &run, "touch locked2");
        let listed = pending(&env, user, &run);
        assert!(listed[0].get("always_file").is_none(), "{listed:?}");
        let out = approve(&env, user, &run, &[&id, "--always"]);
        out.assert_gate_error()
            .assert_stderr_contains("the gate that asks takes no lasting rules");
        assert!(!always_file(&env).exists());
        approve(&env, user, &run, &[&id]).assert_code(0);
        asked.wait().assert_code(0);
        broker.stop().assert_code(0);

        // The file, present under the lock, stops every run.
        fs::create_dir_all(env.config.join("gate")).unwrap();
        fs::write(always_file(&env), "[[allow]]\nrule = \"touch locked3\"\nexact = true\n")
            .unwrap();
        let out = gate(&env, user, &run)
            .within(etc.within())
            .args(["-c", "touch locked3"])
            .run();
        out.assert_gate_error().assert_stderr_contains(&format!(
            "{}:2 (always allow): key `allow`: /etc/gate/config.toml locks the configuration",
            always_file(&env).display()
        ));
        assert!(!env.file("locked3").exists());
    }
}
