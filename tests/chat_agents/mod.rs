//! What the tests of the two agents that speak OpenAI chat completions (Qwen Code in
//! `tests/real_qwen.rs`, Aider in `tests/real_aider.rs`) share: a private home outside
//! /tmp with the recipe's gate settings, a real broker answered by a scripted approver,
//! and the audit log read back.

#![allow(dead_code)] // each of the two test binaries uses a part

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{GATE, TestEnv, User, audit_records, shim_dir_for};

/// How long one agent run may take, start to end, before its process group is killed
/// and the test fails with what it printed. A healthy run takes 5 to 20 seconds.
pub const AGENT_DEADLINE: Duration = Duration::from_secs(300);

/// One test's machine: the tree of [`TestEnv`] made in /var/tmp (a home outside /tmp, as
/// a person's is: the sandbox hides its secrets, and /tmp must stay writable), the shim
/// directory with `bash` linked to gate, and the user configuration file.
pub struct Machine {
    pub t: TestEnv,
    pub shims: PathBuf,
    /// Who runs the agent (and so gate).
    pub user: User,
}

impl Machine {
    pub fn new(config: &str) -> Machine {
        Machine::new_as(config, User::Current)
    }

    /// A machine whose agent runs as `user` (uid 65534 through `setpriv` when the
    /// tests run as root).
    pub fn new_as(config: &str, user: User) -> Machine {
        let t = TestEnv::new_in("/var/tmp");
        let shims = shim_dir_for(&t, &["bash"], user);
        t.write_user_config(config);
        Machine { t, shims, user }
    }

    /// The `bash` shim: `/usr/lib/gate/bin/bash` of the recipes.
    pub fn bash_shim(&self) -> PathBuf {
        self.shims.join("bash")
    }

    /// The environment a person's session gives the agent: the isolated one of
    /// [`TestEnv::gate`], as a map for a [`Command`].
    pub fn base_env(&self) -> BTreeMap<String, String> {
        let t = &self.t;
        let mut env = BTreeMap::new();
        let path = |p: &Path| p.display().to_string();
        env.insert("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into());
        env.insert("HOME".into(), path(&t.home));
        env.insert("XDG_STATE_HOME".into(), path(&t.state));
        env.insert("XDG_CONFIG_HOME".into(), path(&t.config));
        env.insert("XDG_RUNTIME_DIR".into(), path(&t.runtime));
        env.insert("LC_ALL".into(), "C.UTF-8".into());
        env.insert("TERM".into(), "xterm".into());
        env
    }

    /// The audit records gate wrote (none when it wrote no log at all).
    pub fn audit(&self) -> Vec<Value> {
        let log = self.t.default_audit_log();
        if log.exists() {
            audit_records(&log)
        } else {
            Vec::new()
        }
    }

    /// The commands of the audit records, in order.
    pub fn audited_commands(&self) -> Vec<String> {
        self.audit()
            .iter()
            .map(|r| r["command"].as_str().unwrap_or_default().to_owned())
            .collect()
    }

    /// A secret the sandbox must hide: `~/.ssh/id_ed25519`.
    pub fn plant_secret(&self) -> PathBuf {
        let ssh = self.t.home.join(".ssh");
        fs::create_dir_all(&ssh).unwrap();
        let key = ssh.join("id_ed25519");
        fs::write(&key, "SECRET-KEY-MATERIAL\n").unwrap();
        key
    }

    /// A `~/.bashrc` (and `~/.bash_profile`, `~/.profile`) that leaves a mark when any
    /// shell reads it: the file the model could have written.
    pub fn plant_start_up_files(&self) -> PathBuf {
        let mark = self.t.root.join("start-up-file-ran");
        for name in [".bashrc", ".bash_profile", ".profile"] {
            fs::write(
                self.t.home.join(name),
                format!("echo {name} >> {}\n", mark.display()),
            )
            .unwrap();
        }
        mark
    }
}

/// How the scripted approver answers one command.
#[derive(Debug, Clone)]
pub enum Answer {
    Approve,
    Remember,
    Deny(&'static str),
}

/// `gate serve` on the default socket of the machine, and an approver that answers the
/// requests it holds with `gate approve` / `gate deny` by their exact command text.
/// Stopped (the broker with SIGTERM) when dropped.
pub struct Broker {
    serve: Child,
    stop: Arc<AtomicBool>,
    answerer: Option<thread::JoinHandle<()>>,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Broker {
    pub fn start(m: &Machine, plan: &[(&str, Answer)]) -> Broker {
        let serve = Command::new(GATE)
            .arg("serve")
            .env_clear()
            .envs(m.base_env())
            .current_dir(&m.t.work)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("cannot start gate serve");
        let socket = m.t.runtime.join("gate/broker.sock");
        let end = Instant::now() + Duration::from_secs(20);
        while !socket.exists() {
            assert!(Instant::now() < end, "gate serve made no socket in 20 s");
            thread::sleep(Duration::from_millis(10));
        }
        let stop = Arc::new(AtomicBool::new(false));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let plan: Vec<(String, Answer)> = plan
            .iter()
            .map(|(c, a)| ((*c).to_owned(), a.clone()))
            .collect();
        // The approver runs as the broker's user with the machine's environment, but is
        // not a process the agent started.
        let machine_env = m.base_env();
        let work = m.t.work.clone();
        let answerer = {
            let (stop, seen) = (stop.clone(), seen.clone());
            thread::spawn(move || {
                let tool = |args: &[&str]| {
                    Command::new(GATE)
                        .args(args)
                        .env_clear()
                        .envs(&machine_env)
                        .current_dir(&work)
                        .stdin(Stdio::null())
                        .output()
                        .expect("cannot run gate")
                };
                while !stop.load(Ordering::Relaxed) {
                    let out = tool(&["pending", "--json"]);
                    let pending: Vec<Value> =
                        serde_json::from_slice(&out.stdout).unwrap_or_default();
                    for item in pending {
                        let (Some(id), Some(command)) =
                            (item["id"].as_str(), item["command"].as_str())
                        else {
                            continue;
                        };
                        seen.lock().unwrap().push(command.to_owned());
                        match plan.iter().find(|(c, _)| c == command).map(|(_, a)| a) {
                            Some(Answer::Approve) => tool(&["approve", id]),
                            Some(Answer::Remember) => tool(&["approve", id, "--remember"]),
                            Some(Answer::Deny(message)) => {
                                tool(&["deny", id, "--message", message])
                            }
                            None => tool(&["deny", id, "--message", "not in the test's plan"]),
                        };
                    }
                    thread::sleep(Duration::from_millis(50));
                }
            })
        };
        Broker {
            serve,
            stop,
            answerer: Some(answerer),
            seen,
        }
    }

    /// Every request the approver answered, in order (a command asked twice is here
    /// twice).
    pub fn asked(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(answerer) = self.answerer.take() {
            let _ = answerer.join();
        }
        // SAFETY: kill(2) on the broker this test started and has not reaped.
        unsafe {
            libc::kill(self.serve.id() as i32, libc::SIGTERM);
        }
        let _ = self.serve.wait();
    }
}

/// The one result that holds `needle`, or a failure that shows them all.
#[track_caller]
pub fn result_with<'a>(results: &'a [String], needle: &str) -> &'a str {
    results
        .iter()
        .find(|r| r.contains(needle))
        .unwrap_or_else(|| panic!("no tool result holds {needle:?}; the results: {results:#?}"))
}

/// A small Python program that tries to connect to 127.0.0.1:PORT and prints
/// `NET-OPEN` or `NET-SHUT` (built from pieces, so that neither word is in the command's
/// own text, which the agents echo back).
pub fn connect_command(port: u16) -> String {
    format!(
        "python3 -c 'import socket; s = socket.socket(); s.settimeout(5); print(\"NET-\" + (\"OPEN\" if s.connect_ex((\"127.0.0.1\", {port})) == 0 else \"SHUT\"))'"
    )
}
