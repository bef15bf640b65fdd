//! Approving from another machine, over SSH (issue 26, item 3), against a real `sshd`
//! (Debian's openssh-server) that each test starts on a loopback port with its own host
//! key, its own sshd_config, keys the test makes and `UsePAM no`.
//!
//! The model is played by a command gate runs at level `full` as the agent's user
//! (uid 65534 when the tests run as root): it carries gate's mark, and it has what a
//! model at `ask` or `full` has, a key that logs in as its own user (it can write that
//! user's authorized_keys). What it starts through `ssh` is forked by sshd and carries
//! no mark, so:
//!
//! - an approver of the agent's own user that logs in over SSH cannot be told from the
//!   model's own `ssh` (the first test shows the model approving its own request that
//!   way: the recipe docs/approvals.md does not offer);
//! - with `approval.approver` naming another user, neither the model's approver tools
//!   nor a broker it starts over SSH gets an answer in, while that user's `ssh` to the
//!   runner approves (root plays the approver user);
//! - with the broker on the person's machine and its requests socket forwarded to the
//!   runner with `ssh -R`, the runner's gates ask through the tunnel, and the model
//!   cannot approve through it even with the broker's token; forwarding the broker's own
//!   socket instead lets it (the control).
//!
//! sshd runs in a private mount namespace with a scratch /etc/passwd and /etc/shadow
//! (so that the agent's user, nobody, has a shell and a home in the test's tree) and a
//! fresh /run. As root it runs as root and logs in both users; as another user it runs
//! as that user in a user namespace of its own and logs in only that user. The tests
//! that need two users need root and say so. Anything that keeps sshd from starting
//! fails the test.

use crate::common;

use std::fs;
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::{FileTypeExt, PermissionsExt, chown};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use common::*;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::Value;

/// How long any one wait may take before the test fails.
const WAIT: Duration = Duration::from_secs(30);

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let end = Instant::now() + WAIT;
    while !done() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        thread::sleep(Duration::from_millis(20));
    }
}

fn write_mode(path: &Path, text: &str, mode: u32) {
    fs::write(path, text).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

/// The name of the user with `uid` in /etc/passwd.
fn user_name(uid: u32) -> String {
    fs::read_to_string("/etc/passwd")
        .unwrap()
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.len() >= 7 && f[2] == uid.to_string()).then(|| f[0].to_owned())
        })
        .unwrap_or_else(|| panic!("/etc/passwd has no user with uid {uid}"))
}

// ---------------------------------------------------------------------------------------
// sshd.

/// A key pair, the private half readable only by `owner`.
struct Key {
    private: PathBuf,
    public: String,
}

fn make_key(dir: &Path, name: &str, owner: u32) -> Key {
    let private = dir.join(name);
    let status = Command::new(require_program("ssh-keygen"))
        .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
        .arg(&private)
        .status()
        .expect("cannot run ssh-keygen (openssh-client)");
    assert!(status.success(), "ssh-keygen failed");
    chown(&private, Some(owner), None).unwrap();
    let public = fs::read_to_string(private.with_extension("pub")).unwrap();
    Key { private, public }
}

/// A user sshd logs in: a uid, a home in the test's tree, and the key that may log in.
struct Login {
    uid: u32,
    name: String,
    home: PathBuf,
}

/// An sshd on 127.0.0.1, killed when dropped.
struct Sshd {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Sshd {
    /// Start sshd for `logins`, each allowed in with the key given beside it.
    fn start(dir: &Path, logins: &[(&Login, &Key)]) -> Sshd {
        let sshd = require_program("sshd");
        let etc = dir.join("etc");
        fs::create_dir_all(etc.join("authorized")).unwrap();
        fs::set_permissions(dir, fs::Permissions::from_mode(0o755)).unwrap();
        fs::set_permissions(&etc, fs::Permissions::from_mode(0o755)).unwrap();
        fs::set_permissions(etc.join("authorized"), fs::Permissions::from_mode(0o755)).unwrap();
        let host_key = make_key(&etc, "host_key", nix::unistd::geteuid().as_raw());
        // /etc/passwd with a shell and a home for each login; a shadow entry that is
        // not locked (sshd refuses a locked account even for a key without PAM).
        let mut passwd = String::new();
        for line in fs::read_to_string("/etc/passwd").unwrap().lines() {
            let f: Vec<&str> = line.split(':').collect();
            match logins
                .iter()
                .find(|(l, _)| f.len() >= 7 && f[2] == l.uid.to_string())
            {
                Some((l, _)) => passwd.push_str(&format!(
                    "{}:x:{}:{}:{}:{}:/bin/sh\n",
                    f[0],
                    f[2],
                    f[3],
                    f[4],
                    l.home.display()
                )),
                None => passwd.push_str(&format!("{line}\n")),
            }
        }
        let mut shadow = String::new();
        for (l, key) in logins {
            shadow.push_str(&format!("{}:*:19000:0:99999:7:::\n", l.name));
            write_mode(&etc.join("authorized").join(&l.name), &key.public, 0o644);
        }
        write_mode(&etc.join("passwd"), &passwd, 0o644);
        write_mode(&etc.join("shadow"), &shadow, 0o644);
        let port = {
            let probe = TcpListener::bind("127.0.0.1:0").unwrap();
            probe.local_addr().unwrap().port()
        };
        let config = etc.join("sshd_config");
        write_mode(
            &config,
            &format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {host}\nPidFile none\n\
                 UsePAM no\nStrictModes no\nPermitRootLogin prohibit-password\n\
                 PubkeyAuthentication yes\nPasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\nAuthorizedKeysFile {auth}/%u\n\
                 AllowStreamLocalForwarding no\nLogLevel VERBOSE\n\
                 # docs/approvals.md, for the approver user\n\
                 Match User root\n    AllowStreamLocalForwarding remote\n\
                 \x20   StreamLocalBindMask 0111\n    StreamLocalBindUnlink yes\n",
                host = host_key.private.display(),
                auth = etc.join("authorized").display(),
            ),
            0o644,
        );
        let log = dir.join("sshd.log");
        let mut command = Command::new(require_program("unshare"));
        if !running_as_root() {
            // A user namespace of its own, where this user may mount; sshd then runs as
            // this user and logs in only this user.
            command.args(["--user", "--map-current-user", "--keep-caps"]);
        }
        command
            .args(["--mount", "--propagation", "private", "--", "sh", "-c"])
            .arg(
                "set -e; mount --bind \"$1\" /etc/passwd; mount --bind \"$2\" /etc/shadow; \
                 mount -t tmpfs -o mode=755 tmpfs /run; mkdir -m 755 /run/sshd; \
                 exec \"$3\" -D -e -f \"$4\"",
            )
            .arg("sh")
            .arg(etc.join("passwd"))
            .arg(etc.join("shadow"))
            .arg(&sshd)
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(fs::File::create(&log).unwrap())
            .stderr(fs::File::create(&log).unwrap().try_clone().unwrap());
        // Both streams into one file: reopen in append mode so neither overwrites.
        let out = fs::OpenOptions::new().append(true).open(&log).unwrap();
        command.stdout(out.try_clone().unwrap()).stderr(out);
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start sshd through unshare: {e}"));
        let end = Instant::now() + WAIT;
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                panic!(
                    "sshd did not start ({status}); these tests need Debian's openssh-server \
                     and, when not run as root, unprivileged user namespaces. Its log:\n{}",
                    fs::read_to_string(&log).unwrap_or_default()
                );
            }
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            if Instant::now() > end {
                let _ = child.kill();
                panic!(
                    "sshd did not listen on port {port} in time. Its log:\n{}",
                    fs::read_to_string(&log).unwrap_or_default()
                );
            }
            thread::sleep(Duration::from_millis(20));
        }
        Sshd { child, port, log }
    }

    /// The ssh command line (one shell string) that logs in as `login` with `key` and
    /// runs `remote` there; `extra` goes before the destination.
    fn ssh(&self, key: &Key, login: &Login, extra: &str, remote: &str) -> String {
        format!(
            "{ssh} -F /dev/null -p {port} -i {key} -o IdentitiesOnly=yes \
             -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes \
             -o LogLevel=ERROR {extra} {name}@127.0.0.1 {remote}",
            ssh = require_program("ssh").display(),
            port = self.port,
            key = key.private.display(),
            name = login.name,
        )
    }

    fn log(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---------------------------------------------------------------------------------------
// The people and the model.

/// The test's world: the agent's user (whom the model runs as), the approver user when
/// there can be one (root, when the tests run as root), keys, and sshd.
struct World {
    env: TestEnv,
    agent: Login,
    agent_key: Key,
    person: Option<(Login, Key)>,
    sshd: Sshd,
    /// gate as the agent's user can run it, and as sshd's sessions run it.
    agent_gate: PathBuf,
}

impl World {
    fn new(with_approver_user: bool) -> World {
        let env = TestEnv::new();
        let agent_uid = uid_of(User::Unprivileged);
        let keys = env.root.join("keys");
        fs::create_dir(&keys).unwrap();
        fs::set_permissions(&keys, fs::Permissions::from_mode(0o755)).unwrap();
        let home = |name: &str, uid: u32| {
            let dir = env.root.join(name);
            fs::create_dir(&dir).unwrap();
            fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
            chown(&dir, Some(uid), Some(uid)).unwrap();
            dir
        };
        let agent = Login {
            uid: agent_uid,
            name: user_name(agent_uid),
            home: home("agent-home", agent_uid),
        };
        let agent_key = make_key(&keys, "agent", agent_uid);
        let person = with_approver_user.then(|| {
            needs_root("this test needs two users (the agent's and the approver's): run it as root (CI does)");
            (
                Login {
                    uid: 0,
                    name: "root".into(),
                    home: home("person-home", 0),
                },
                make_key(&keys, "person", 0),
            )
        });
        let mut logins = vec![(&agent, &agent_key)];
        if let Some((l, k)) = &person {
            logins.push((l, k));
        }
        let sshd = Sshd::start(&env.root.join("sshd"), &logins);
        World {
            agent_gate: gate_binary_for(User::Unprivileged),
            env,
            agent,
            agent_key,
            person,
            sshd,
        }
    }

    /// A directory of `uid` with `mode`.
    fn dir(&self, name: &str, uid: u32, mode: u32) -> PathBuf {
        let dir = self.env.root.join(name);
        fs::create_dir(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(mode)).unwrap();
        chown(&dir, Some(uid), Some(uid)).unwrap();
        dir
    }

    /// A configuration file for the agent's gates.
    fn agent_config(&self, name: &str, socket: &Path, approver: Option<&str>) -> PathBuf {
        let path = self.env.root.join(name);
        let mut text = format!("[approval]\nsocket = \"{}\"\n", socket.display());
        if let Some(user) = approver {
            text.push_str(&format!("approver = \"{user}\"\n"));
        }
        write_mode(&path, &text, 0o644);
        path
    }

    /// The agent asking about `touch NAME`, in the background.
    fn agent_asks(&self, config: &Path, name: &str) -> Running {
        self.env
            .gate()
            .user(User::Unprivileged)
            .arg("--config")
            .arg(config)
            .args(["--level", "ask", "--no-tty", "--timeout", "40", "-c"])
            .arg(format!("touch {name}"))
            .deadline(Duration::from_secs(60))
            .spawn()
    }

    /// The model: `script` run by gate at level `full` as the agent's user, so it
    /// carries gate's mark, as every command the model runs does.
    fn model(&self, script: &str) -> Outcome {
        let out = self
            .env
            .gate()
            .user(User::Unprivileged)
            .args(["--no-config", "--level", "full", "-c", script])
            .deadline(Duration::from_secs(60))
            .run();
        eprintln!("the model ran: {script}\n{}", out.report());
        out
    }

    /// The model's own ssh to the runner, as the agent's user, running `remote` there.
    fn models_ssh(&self, remote: &str) -> String {
        self.sshd.ssh(&self.agent_key, &self.agent, "", remote)
    }

    fn ran(&self, name: &str) -> bool {
        self.env.file(name).exists()
    }
}

/// A process the model left running, sent SIGTERM when dropped.
struct Stopped(i32);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = kill(Pid::from_raw(self.0), Signal::SIGTERM);
    }
}

/// An `ssh -R` the test started, ended when dropped (also when the test fails).
struct Tunnel(Child);

impl Drop for Tunnel {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A broker run by the test (a person's terminal: no mark) as `user`, on `socket`, with
/// `requests` as its requests socket; killed when dropped.
struct Broker {
    running: Option<Running>,
    socket: PathBuf,
}

impl Broker {
    fn start(w: &World, user: User, socket: &Path, requests: Option<&Path>) -> Broker {
        let mut gate = w
            .env
            .gate()
            .user(user)
            .args(["serve", "--no-config", "--socket"])
            .arg(socket);
        if let Some(r) = requests {
            gate = gate.arg("--requests-socket").arg(r);
        }
        Broker::started(gate, socket, requests)
    }

    /// The broker of the approver user, as docs/approvals.md starts it: under the
    /// runner's configuration (whose approval.socket is the requests socket), on its
    /// default socket in `runtime`.
    fn start_for_others(w: &World, runtime: &Path, config: &Path, requests: &Path) -> Broker {
        let gate = w
            .env
            .gate()
            .env("XDG_RUNTIME_DIR", runtime)
            .arg("serve")
            .arg("--config")
            .arg(config)
            .arg("--requests-socket")
            .arg(requests);
        Broker::started(gate, &runtime.join("gate/broker.sock"), Some(requests))
    }

    fn started(gate: Gate, socket: &Path, requests: Option<&Path>) -> Broker {
        let running = gate.deadline(Duration::from_secs(300)).spawn();
        let mut broker = Broker {
            running: Some(running),
            socket: socket.to_owned(),
        };
        for path in [Some(socket), requests].into_iter().flatten() {
            let end = Instant::now() + WAIT;
            while !fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket()) {
                if Instant::now() > end {
                    let out = broker.stop();
                    panic!("the broker did not start\n{}", out.report());
                }
                thread::sleep(Duration::from_millis(10));
            }
        }
        broker
    }

    /// The id of the open request for `command`, as `gate pending --json` run by `gate`
    /// shows it.
    fn wait_pending(&self, gate: impl Fn() -> Gate, command: &str) -> String {
        let mut id = None;
        wait_for(&format!("a request for {command:?}"), || {
            let out = gate()
                .args(["pending", "--json", "--no-config", "--socket"])
                .arg(&self.socket)
                .run();
            out.assert_code(0);
            let list: Vec<Value> = serde_json::from_str(&out.stdout()).unwrap();
            id = list
                .iter()
                .find(|i| i["command"] == command)
                .map(|i| i["id"].as_str().unwrap().to_owned());
            id.is_some()
        });
        id.unwrap()
    }

    fn stop(&mut self) -> Outcome {
        let running = self.running.take().unwrap();
        let _ = kill(Pid::from_raw(running.pid as i32), Signal::SIGTERM);
        running.wait()
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        if self.running.is_some() {
            self.stop();
        }
    }
}

/// A raw approver client, as a model would write one: say hello on a socket with the
/// token in a file, and if welcome, approve a request. Prints each reply line.
const RAW_APPROVER: &str = r#"import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
f = s.makefile("rw")
token = open(sys.argv[2]).read().strip()
f.write(json.dumps({"type": "hello", "version": 1, "role": "approver", "token": token}) + "\n")
f.flush()
reply = f.readline()
print("reply:", reply.strip())
if json.loads(reply).get("type") == "welcome":
    f.write(json.dumps({"type": "decide", "id": sys.argv[3], "decision": "approve"}) + "\n")
    f.flush()
    print("reply:", f.readline().strip())
"#;

/// The shell command that runs [`RAW_APPROVER`] on `socket` with `token_file`.
fn raw_approver(w: &World, socket: &Path, token_file: &Path, id: &str) -> String {
    let script = w.env.root.join("raw_approver.py");
    if !script.exists() {
        write_mode(&script, RAW_APPROVER, 0o644);
    }
    format!(
        "{} {} {} {} {id}",
        python3().display(),
        script.display(),
        socket.display(),
        token_file.display()
    )
}

/// A copy of `file` the agent's user can read: the worst case, a token that leaked.
fn leak(w: &World, file: &Path, name: &str) -> PathBuf {
    let copy = w.env.root.join(name);
    fs::copy(file, &copy).unwrap();
    fs::set_permissions(&copy, fs::Permissions::from_mode(0o644)).unwrap();
    copy
}

fn token_of(socket: &Path) -> PathBuf {
    let mut name = socket.as_os_str().to_owned();
    name.push(".token");
    PathBuf::from(name)
}

// ---------------------------------------------------------------------------------------
// The tests.

/// The recipe that is not offered, `ssh runner gate watch` as the agent's own user: the
/// model's own ssh to the runner approves its own request. sshd forks the approver, so
/// it carries no mark, and nothing else tells it from the person's login. This is the
/// control for the next test.
#[test]
fn as_the_agents_own_user_the_models_ssh_approves_its_own_request() {
    let w = World::new(false);
    let run = w.dir("agent-run", w.agent.uid, 0o700);
    let socket = run.join("broker.sock");
    let broker = Broker::start(&w, User::Unprivileged, &socket, None);
    let config = w.agent_config("agent.toml", &socket, None);
    let asking = w.agent_asks(&config, "ran-own-user");
    let id = broker.wait_pending(
        || w.env.gate().user(User::Unprivileged),
        "touch ran-own-user",
    );

    // The model's approver tools refuse to start under gate's mark...
    let direct = w.model(&format!(
        "{} approve {id} --no-config --socket {}",
        w.agent_gate.display(),
        socket.display()
    ));
    direct
        .assert_code(GATE_ERROR)
        .assert_stderr_contains("runs with no_new_privs");
    // ...but through its own ssh to the same machine they run unmarked, and answer.
    let over_ssh = w.model(&w.models_ssh(&format!(
        "{} approve {id} --no-config --socket {}",
        w.agent_gate.display(),
        socket.display()
    )));
    over_ssh.assert_code(0).assert_stdout_contains("answered");
    let out = asking.wait();
    out.assert_code(0);
    assert!(w.ran("ran-own-user"), "{}\n{}", out.report(), w.sshd.log());
}

/// With `approval.approver` naming another user, the agent's gates trust no process of
/// their own user: a broker the model starts over ssh (unmarked, as sshd forked it)
/// gets no request. Control: the same stand-in, without the setting, answers for the
/// model. Runs as root and as another user (approver root is then simply absent).
#[test]
fn with_an_approver_user_a_broker_the_model_starts_over_ssh_is_not_asked() {
    let w = World::new(false);
    let spot = w.dir("model-spot", w.agent.uid, 0o700);
    for (round, approver) in [("open", None), ("pinned", Some("root"))] {
        let socket = spot.join(format!("{round}.sock"));
        let config = w.agent_config(&format!("{round}.toml"), &socket, approver);
        // The model's stand-in broker, started over ssh so that it carries no mark.
        let start = w.model(&w.models_ssh(&format!(
            "'nohup {gate} serve --no-config --socket {socket} >{log} 2>&1 </dev/null & echo $! >{pid}'",
            gate = w.agent_gate.display(),
            socket = socket.display(),
            log = spot.join(format!("{round}.log")).display(),
            pid = spot.join(format!("{round}.pid")).display(),
        )));
        start.assert_code(0);
        let pid_file = spot.join(format!("{round}.pid"));
        wait_for("the model's broker", || {
            fs::symlink_metadata(&socket).is_ok_and(|m| m.file_type().is_socket())
                && fs::read_to_string(&pid_file).is_ok_and(|t| t.ends_with('\n'))
        });
        // Stopped when this round ends, by the pid its ssh session wrote.
        let _stand_in = Stopped(
            fs::read_to_string(&pid_file)
                .unwrap()
                .trim()
                .parse()
                .unwrap(),
        );
        let name = format!("ran-{round}");
        let asking = w.agent_asks(&config, &name);
        if approver.is_none() {
            let stand_in = Broker {
                running: None,
                socket: socket.clone(),
            };
            let id = stand_in.wait_pending(
                || w.env.gate().user(User::Unprivileged),
                &format!("touch {name}"),
            );
            w.model(&w.models_ssh(&format!(
                "{} approve {id} --no-config --socket {}",
                w.agent_gate.display(),
                socket.display()
            )))
            .assert_code(0);
            let out = asking.wait();
            out.assert_code(0);
            assert!(
                w.ran(&name),
                "control: the stand-in answered\n{}",
                out.report()
            );
        } else {
            let out = asking.wait();
            out.assert_code(126)
                .assert_stderr_contains("the approval socket cannot be trusted")
                .assert_stderr_contains(&format!(
                    "belongs to uid {}, not to the approver user root (uid 0)",
                    w.agent.uid
                ));
            assert!(
                !w.ran(&name),
                "the model's broker was asked\n{}",
                out.report()
            );
        }
    }
}

/// The recipe offered for one runner: the broker runs as the approver user, takes the
/// agent's requests on its requests socket, and the person approves with `ssh
/// approver@runner gate approve` (`gate watch` the same way, with `-t`). The model's ssh
/// (as the agent's user) cannot answer: its approver tools cannot reach the broker's
/// own socket, and the requests socket refuses every hello, even with the right token.
#[test]
#[ignore = "root tier: cargo test --lib --test all -- --ignored, as root"]
fn an_approver_user_approves_over_ssh_and_the_models_ssh_cannot() {
    let w = World::new(true);
    let (person, person_key) = w.person.as_ref().unwrap();
    let runtime = w.dir("person-run", 0, 0o700);
    let public = w.dir("requests", 0, 0o755);
    let requests = public.join("requests.sock");
    // One configuration for everyone on the runner, as the system file would be.
    let config = w.agent_config("runner.toml", &requests, Some("root"));
    let broker = Broker::start_for_others(&w, &runtime, &config, &requests);
    let socket = broker.socket.clone();
    let person_gate = PathBuf::from(GATE);

    // Round 1: the model tries, over its own ssh, every way in; nothing answers.
    let asking = w.agent_asks(&config, "ran-attacked");
    let id = broker.wait_pending(|| w.env.gate(), "touch ran-attacked");
    let tools = w.model(&w.models_ssh(&format!(
        "'{gate} approve {id} --no-config --socket {requests}; echo status=$?; \
         {gate} approve {id} --no-config --socket {socket}; echo status=$?'",
        gate = w.agent_gate.display(),
        requests = requests.display(),
        socket = socket.display(),
    )));
    assert_eq!(
        tools.stdout().matches("status=125").count(),
        2,
        "{}",
        tools.report()
    );
    // The worst case: the broker's token leaked to the model.
    let token = leak(&w, &token_of(&socket), "leaked.token");
    let raw = w.model(&w.models_ssh(&raw_approver(&w, &requests, &token, &id)));
    raw.assert_stdout_contains("this socket takes requests only");
    assert!(!raw.stdout().contains("welcome"), "{}", raw.report());
    // Control: the same raw approver, run by the test as the approver user on the
    // broker's own socket, is welcome (it says hello and approves): the requests socket
    // is what stops the model.
    let control = Command::new("sh")
        .arg("-c")
        .arg(raw_approver(&w, &socket, &token, "no-such-request"))
        .output()
        .unwrap();
    let control_out = String::from_utf8_lossy(&control.stdout);
    assert!(
        control_out.contains("\"type\":\"welcome\""),
        "control: {control_out}"
    );
    // Still waiting: nothing the model did settled it. Deny it to end round 1.
    let still = w
        .env
        .gate()
        .args(["pending", "--json", "--no-config", "--socket"])
        .arg(&socket)
        .run();
    assert!(
        still.stdout().contains("touch ran-attacked"),
        "{}",
        still.report()
    );
    w.env
        .gate()
        .args(["deny", &id, "--no-config", "--socket"])
        .arg(&socket)
        .run()
        .assert_code(0);
    asking.wait().assert_code(126);
    assert!(!w.ran("ran-attacked"));

    // Round 2: the person, as the approver user over ssh, approves.
    let asking = w.agent_asks(&config, "ran-approved");
    let id = broker.wait_pending(|| w.env.gate(), "touch ran-approved");
    let ssh = w.sshd.ssh(
        person_key,
        person,
        "",
        &format!(
            "XDG_RUNTIME_DIR={} {} approve {id} --config {}",
            runtime.display(),
            person_gate.display(),
            config.display()
        ),
    );
    let out = Command::new("sh").arg("-c").arg(&ssh).output().unwrap();
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("answered"),
        "the person's ssh: {out:?}\n{}",
        w.sshd.log()
    );
    let asked = asking.wait();
    asked.assert_code(0);
    assert!(w.ran("ran-approved"), "{}", asked.report());

    // Round 3: the approver user's own gate, under the same configuration, asks
    // through the requests socket too.
    let own = w
        .env
        .gate()
        .arg("--config")
        .arg(&config)
        .args(["--level", "ask", "--no-tty", "-c", "touch ran-own"])
        .spawn();
    let id = broker.wait_pending(|| w.env.gate(), "touch ran-own");
    w.env
        .gate()
        .env("XDG_RUNTIME_DIR", &runtime)
        .args(["approve", &id, "--config"])
        .arg(&config)
        .run()
        .assert_code(0);
    own.wait().assert_code(0);
    assert!(w.ran("ran-own"));
}

/// The recipe offered for one queue: the broker on the person's machine, its requests
/// socket forwarded to the runner by the person's `ssh -R`; the runner's gates pin the
/// approver user (the one the person logs in as) and ask through the tunnel. The model
/// reaches the tunnel too, but the far end is the requests socket, which refuses every
/// hello. Control: forwarding the broker's own socket instead lets the model's raw
/// approver in with the token, because at the broker every connection through the
/// tunnel comes from the person's own, unmarked ssh client.
#[test]
#[ignore = "root tier: cargo test --lib --test all -- --ignored, as root"]
fn ssh_r_forwards_requests_only_and_the_model_cannot_answer_through_it() {
    let w = World::new(true);
    let (person, person_key) = w.person.as_ref().unwrap();
    let desk = w.dir("desk", 0, 0o700);
    let socket = desk.join("broker.sock");
    let requests = desk.join("requests.sock");
    let broker = Broker::start(&w, User::Current, &socket, Some(&requests));
    let runner = w.dir("runner-gate", 0, 0o755);
    let tunnel = runner.join("approve.sock");
    let wrong = runner.join("whole-broker.sock");
    let forward = |far: &Path, near: &Path| -> Tunnel {
        let line = w.sshd.ssh(
            person_key,
            person,
            &format!(
                "-N -o ExitOnForwardFailure=yes -R {}:{}",
                far.display(),
                near.display()
            ),
            "",
        );
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(format!("exec {line}"))
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        let end = Instant::now() + WAIT;
        while !fs::symlink_metadata(far).is_ok_and(|m| m.file_type().is_socket()) {
            if Instant::now() > end || child.try_wait().unwrap().is_some() {
                let _ = child.kill();
                let _ = child.wait();
                panic!("ssh -R did not forward {}\n{}", far.display(), w.sshd.log());
            }
            thread::sleep(Duration::from_millis(20));
        }
        Tunnel(child)
    };
    let _tunnels = [forward(&tunnel, &requests), forward(&wrong, &socket)];
    let config = w.agent_config("agent.toml", &tunnel, Some("root"));
    let token = leak(&w, &token_of(&socket), "leaked.token");

    // The agent asks through the tunnel; the model tries to answer through it.
    let asking = w.agent_asks(&config, "ran-tunnel");
    let id = broker.wait_pending(|| w.env.gate(), "touch ran-tunnel");
    let raw = w.model(&raw_approver(&w, &tunnel, &token, &id));
    raw.assert_stdout_contains("this socket takes requests only");
    assert!(!raw.stdout().contains("welcome"), "{}", raw.report());
    // The person answers at their own desk.
    w.env
        .gate()
        .args(["approve", &id, "--no-config", "--socket"])
        .arg(&socket)
        .run()
        .assert_code(0)
        .assert_stdout_contains("answered");
    let out = asking.wait();
    out.assert_code(0);
    assert!(w.ran("ran-tunnel"), "{}", out.report());

    // Control: the broker's own socket forwarded. The model's raw approver, marked as
    // it is, gets in and approves, because the broker sees the person's ssh client.
    let asking = w.agent_asks(&config, "ran-wrong-forward");
    let id = broker.wait_pending(|| w.env.gate(), "touch ran-wrong-forward");
    let raw = w.model(&raw_approver(&w, &wrong, &token, &id));
    raw.assert_stdout_contains("\"type\":\"welcome\"");
    let out = asking.wait();
    out.assert_code(0);
    assert!(
        w.ran("ran-wrong-forward"),
        "control: the model approved through the forwarded broker socket\n{}",
        out.report()
    );
}
