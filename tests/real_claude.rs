//! Claude Code itself (the pinned npm release, `tests/agents/install.sh claude`), run
//! the way docs/integrations.md says: `CLAUDE_CODE_SHELL` set to a `bash` shim of gate,
//! the policy in the user configuration file, the broker answered from outside the
//! agent. A scripted fake model (`tests/agents/protocols/anthropic.py`) on 127.0.0.1
//! plays the model: it asks for Bash tool calls, one command each, and the tests judge by
//! side effects and by the tool results it received back, which are what a model sees.
//!
//! Claude Code runs non-interactively (`claude -p`), with its Bash tool allowed by its own
//! settings (`permissions.allow = ["Bash"]` in `~/.claude/settings.json`, not
//! `--dangerously-skip-permissions`, which it refuses as root), its network extras off,
//! and a dummy `ANTHROPIC_API_KEY` that the tests look for in everything the model got.
//! Each run has a deadline after which its process group is killed and the test fails
//! with the agent's output. HOME is under /var/tmp, not /tmp: the sandbox hides secrets
//! in HOME, and /tmp must stay writable (see `TestEnv::new_in`).

use crate::common;

use std::fs;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use common::real_agents::{FakeModel, install};
use common::*;
use serde_json::{Value, json};

/// The dummy key Claude Code gets; it must never reach the model.
const KEY: &str = "sk-ant-api03-gatetest-DUMMY-KEY-4f1c9e2b7a";

/// How long one Claude Code session may take. A healthy one takes a few seconds.
const CLAUDE_DEADLINE: Duration = Duration::from_secs(300);

/// How long a request may take to reach the broker.
const WAIT: Duration = Duration::from_secs(30);

/// One test's machine: a home, a workspace, a runtime directory, the shim and the
/// settings, for one user.
struct Setup {
    t: TestEnv,
    user: User,
    shim: PathBuf,
    runtime: PathBuf,
    claude: PathBuf,
}

impl Setup {
    /// Claude Code's files and gate's `config` (the user configuration file), for `user`.
    fn new(user: User, config: &str) -> Setup {
        let claude = install("claude");
        let t = TestEnv::new_in("/var/tmp");
        t.write_user_config(config);
        let shim = shim_dir_for(&t, &["bash"], user).join("bash");
        let runtime = runtime_dir(&t, user);
        // Claude Code's own settings: its Bash tool may run without asking (gate asks).
        let settings = t.home.join(".claude/settings.json");
        fs::create_dir_all(settings.parent().unwrap()).unwrap();
        fs::write(&settings, r#"{"permissions": {"allow": ["Bash"]}}"#).unwrap();
        let uid = uid_of(user);
        for dir in [&t.home, &t.config, &t.state, &t.work] {
            chown_tree(dir, uid);
        }
        Setup {
            t,
            user,
            shim,
            runtime,
            claude,
        }
    }

    /// The environment Claude Code starts with, as the recipe gives it, and gate's
    /// environment, since Claude Code passes its own on.
    fn env(&self, model: &FakeModel) -> Vec<(String, String)> {
        let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into());
        [
            ("PATH", path),
            ("HOME", self.t.home.display().to_string()),
            ("XDG_CONFIG_HOME", self.t.config.display().to_string()),
            ("XDG_STATE_HOME", self.t.state.display().to_string()),
            ("XDG_RUNTIME_DIR", self.runtime.display().to_string()),
            ("LC_ALL", "C".into()),
            ("TERM", "dumb".into()),
            ("CLAUDE_CODE_SHELL", self.shim.display().to_string()),
            ("ANTHROPIC_BASE_URL", model.base_url()),
            ("ANTHROPIC_API_KEY", KEY.into()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
            ("DISABLE_AUTOUPDATER", "1".into()),
            ("DISABLE_TELEMETRY", "1".into()),
            ("DISABLE_ERROR_REPORTING", "1".into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
    }

    /// A fake model that runs `commands` and then says it is done.
    fn model(&self, commands: &[&str]) -> FakeModel {
        FakeModel::start(
            "anthropic",
            &json!({"commands": commands, "final": "scripted session done"}),
            &self.t.root,
        )
    }

    /// Start `claude -p` against `model`.
    fn start(&self, model: &FakeModel) -> Session {
        let mut command = command_as(self.user, &self.claude);
        command
            .args(["-p", "Run the scripted commands."])
            .env_clear()
            .envs(self.env(model))
            .current_dir(&self.t.work)
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("cannot start claude");
        let stdout = reader(child.stdout.take().unwrap());
        let stderr = reader(child.stderr.take().unwrap());
        Session {
            child: Some(child),
            stdout,
            stderr,
            started: Instant::now(),
        }
    }

    /// Run a whole session against `model`; it must end well (Claude Code's status 0).
    #[track_caller]
    fn run(&self, model: &FakeModel) -> Finished {
        let done = self.start(model).wait();
        assert_eq!(
            done.status,
            Some(0),
            "claude failed\n{}",
            done.report(model)
        );
        done
    }

    /// `gate ARGS` as this user, with the agent's environment (for the broker's tools).
    fn gate(&self, args: &[&str]) -> Outcome {
        self.t
            .gate()
            .user(self.user)
            .env("XDG_RUNTIME_DIR", &self.runtime)
            .args(args)
            .run()
    }

    /// `gate serve` on the default socket, started outside the agent.
    fn broker(&self) -> Broker<'_> {
        let running = self
            .t
            .gate()
            .user(self.user)
            .env("XDG_RUNTIME_DIR", &self.runtime)
            .arg("serve")
            .deadline(Duration::from_secs(600))
            .spawn();
        let socket = self.runtime.join("gate/broker.sock");
        let end = Instant::now() + WAIT;
        while !socket.exists() {
            assert!(Instant::now() < end, "gate serve made no socket");
            thread::sleep(Duration::from_millis(10));
        }
        Broker {
            s: self,
            running: Some(running),
        }
    }

    fn audit(&self) -> Vec<Value> {
        audit_records(&self.t.default_audit_log())
    }
}

fn chown_tree(path: &Path, uid: u32) {
    std::os::unix::fs::lchown(path, Some(uid), Some(uid)).unwrap();
    if path.is_dir() && !path.is_symlink() {
        for entry in fs::read_dir(path).unwrap() {
            chown_tree(&entry.unwrap().path(), uid);
        }
    }
}

fn reader(mut stream: impl Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stream.read_to_end(&mut buf);
        let _ = tx.send(String::from_utf8_lossy(&buf).into_owned());
    });
    rx
}

/// A running Claude Code session.
struct Session {
    child: Option<Child>,
    stdout: Receiver<String>,
    stderr: Receiver<String>,
    started: Instant,
}

impl Session {
    fn has_ended(&mut self) -> bool {
        self.child
            .as_mut()
            .is_none_or(|c| c.try_wait().ok().flatten().is_some())
    }

    /// Wait for the end, within the deadline; past it the process group is killed and
    /// the test fails with what Claude Code printed.
    #[track_caller]
    fn wait(mut self) -> Finished {
        let mut child = self.child.take().unwrap();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if self.started.elapsed() > CLAUDE_DEADLINE {
                kill_group(child.id());
                let _ = child.wait();
                panic!(
                    "claude did not finish within {CLAUDE_DEADLINE:?}; killed it\nstdout: {}\nstderr: {}",
                    self.stdout
                        .recv_timeout(Duration::from_secs(2))
                        .unwrap_or_default(),
                    self.stderr
                        .recv_timeout(Duration::from_secs(2))
                        .unwrap_or_default()
                );
            }
            thread::sleep(Duration::from_millis(20));
        };
        let elapsed = self.started.elapsed();
        // Whatever Claude Code left running must not keep the test waiting.
        kill_group(child.id());
        let collect =
            |rx: &Receiver<String>| rx.recv_timeout(Duration::from_secs(10)).unwrap_or_default();
        Finished {
            status: status.code(),
            stdout: collect(&self.stdout),
            stderr: collect(&self.stderr),
            elapsed,
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            kill_group(child.id());
            let _ = child.wait();
        }
    }
}

fn kill_group(pid: u32) {
    // SAFETY: kill(2) on the process group this test made for the agent (process_group(0)).
    unsafe {
        libc::kill(-(pid as i32), libc::SIGKILL);
    }
}

struct Finished {
    status: Option<i32>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

impl Finished {
    fn report(&self, model: &FakeModel) -> String {
        format!(
            "status {:?} after {:?}\nstdout: {}\nstderr: {}\ntool results: {:#?}",
            self.status,
            self.elapsed,
            self.stdout,
            self.stderr,
            model.tool_results()
        )
    }
}

/// `gate serve`, answered with `gate approve` and `gate deny` from outside the agent.
struct Broker<'a> {
    s: &'a Setup,
    running: Option<Running>,
}

impl Broker<'_> {
    fn pending(&self) -> Vec<Value> {
        let out = self.s.gate(&["pending", "--json"]);
        out.assert_code(0);
        serde_json::from_str(&out.stdout()).unwrap()
    }

    /// Wait until a request for exactly `command` is open; its id.
    #[track_caller]
    fn wait_for(&self, command: &str, session: &mut Session) -> String {
        let end = Instant::now() + WAIT;
        loop {
            let pending = self.pending();
            if let Some(item) = pending.iter().find(|i| i["command"] == command) {
                return item["id"].as_str().unwrap().to_owned();
            }
            assert!(
                !session.has_ended(),
                "claude ended before {command:?} reached the broker; pending: {pending:?}"
            );
            assert!(
                Instant::now() < end,
                "{command:?} never reached the broker; pending: {pending:?}"
            );
            thread::sleep(Duration::from_millis(20));
        }
    }

    fn answer(&self, args: &[&str]) {
        let out = self.s.gate(args);
        out.assert_code(0).assert_stdout("answered\n");
    }
}

impl Drop for Broker<'_> {
    fn drop(&mut self) {
        if let Some(running) = self.running.take() {
            // SAFETY: kill(2) on the broker this test started.
            unsafe {
                libc::kill(running.pid as i32, libc::SIGTERM);
            }
            if !thread::panicking() {
                running.wait().assert_code(0);
            }
        }
    }
}

/// The recipe's settings (docs/integrations.md, "What every recipe has in common"),
/// with this test's allow rule.
const RECIPE: &str = r#"level = "ask"
readonly = true
allow = ["echo hello"]
deny = ["git push --force"]
shell = "/bin/bash"

[approval]
tty = false
"#;

#[track_caller]
fn assert_no_key(results: &[String]) {
    for r in results {
        assert!(!r.contains(KEY), "the model read the API key: {r:?}");
    }
}

/// The start-up calls Claude Code makes (2.1.197 to 2.1.332), as gate records its answers.
const STARTUP_KINDS: [&str; 2] = ["claude-code/env-probe", "claude-code/snapshot-create"];

/// The start-up calls gate answered, sorted by kind (Claude Code makes them at once).
fn startup_kinds(records: &[Value]) -> Vec<String> {
    let mut kinds: Vec<String> = records
        .iter()
        .filter(|r| r["decided_by"] == "agent-startup")
        .map(|r| {
            let command = r["command"].as_str().unwrap_or("");
            let kind = command.trim_start_matches('(').split([':', ')']).next();
            kind.unwrap_or("").to_owned()
        })
        .collect();
    kinds.sort();
    kinds
}

fn records_for<'a>(records: &'a [Value], command: &str) -> Vec<&'a Value> {
    records.iter().filter(|r| r["command"] == command).collect()
}

// ---------------------------------------------------------------------------------------

/// An allowed command runs unasked, inside Claude Code's wrapper: gate judged the
/// model's own command (the audit names the wrapper), and the model saw its output.
/// Shell syntax is refused with nothing run, and with no approver the refusal comes at
/// once, saying how to get one.
#[test]
fn allowed_runs_unasked_and_the_rest_is_refused_at_once_without_an_approver() {
    let s = Setup::new(User::Current, RECIPE);
    let model = s.model(&[
        "echo hello",
        "echo hello; touch syntax-ran",
        "touch unasked-ran",
    ]);
    let done = s.run(&model);
    let results = model.tool_results();
    assert_eq!(results.len(), 3, "{}", done.report(&model));
    assert_eq!(results[0].trim(), "hello", "{}", done.report(&model));
    for (result, command) in results[1..]
        .iter()
        .zip(["echo hello; touch syntax-ran", "touch unasked-ran"])
    {
        assert!(
            result.contains(&format!("gate: refused `{command}`")) && result.contains("gate watch"),
            "the model should read gate's refusal and how to get an approver: {result:?}"
        );
        assert!(result.contains("126"), "{result:?}");
    }
    assert!(!s.t.file("syntax-ran").exists() && !s.t.file("unasked-ran").exists());
    let records = s.audit();
    // "no-approver", not "timeout": gate refused without waiting for an answer.
    for command in ["echo hello; touch syntax-ran", "touch unasked-ran"] {
        let refused = records_for(&records, command);
        assert!(
            refused.len() == 1 && refused[0]["decided_by"] == "no-approver",
            "{command}: {records:#?}"
        );
    }
    let hello = records_for(&records, "echo hello");
    assert_eq!(hello.len(), 1, "{records:#?}");
    assert_eq!(hello[0]["decided_by"], "rule");
    assert!(
        hello[0]["wrapper"]
            .as_str()
            .is_some_and(|w| w.starts_with("claude-code/")),
        "gate judged the model's command inside Claude Code's wrapper: {:#?}",
        hello[0]
    );
    assert_no_key(&results);
}

/// Claude Code's start-up calls: the spawn-environment probe (`SHELL -c env`, on
/// Claude's own stdio, not detached) and the snapshot (`SHELL -c -l SCRIPT`). gate
/// answers both itself, so with a broker running nothing waits in it, and the probe's
/// answer holds no secret.
#[test]
fn start_up_calls_are_answered_without_asking_and_without_the_key() {
    let config = RECIPE.replace("readonly = true", "readonly = false");
    let s = Setup::new(User::Current, &config);
    let broker = s.broker();
    let model = s.model(&["echo hello"]);
    let done = s.run(&model);
    assert_eq!(
        model.tool_results(),
        ["hello\n".trim_end()],
        "{}",
        done.report(&model)
    );
    // The probe is fire-and-forget in Claude Code: give a pending request time to show.
    thread::sleep(Duration::from_millis(500));
    assert_eq!(
        broker.pending(),
        Vec::<Value>::new(),
        "a start-up call waits in the broker"
    );
    let records = s.audit();
    assert_eq!(startup_kinds(&records), STARTUP_KINDS, "{records:#?}");
    assert!(
        records.iter().all(|r| r["decision"] == "allow"),
        "every call of this session was allowed: {records:#?}"
    );

    // The probe's answer, as the model could forge it: nothing of the environment.
    let out =
        s.t.gate()
            .program(&s.shim)
            .arg0(&s.shim)
            .env("ANTHROPIC_API_KEY", KEY)
            .args(["-c", "env"])
            .run();
    out.assert_code(0);
    assert!(!out.stdout().contains(KEY), "{}", out.report());
    assert!(!out.stdout().contains("HOME="), "{}", out.report());
}

/// Item 4 of issue 14: with the recipe's `readonly = true`, commands that print the
/// environment (which holds Claude Code's ANTHROPIC_API_KEY) or a secret-bearing file
/// are not read-only; harmless variables are still shown unasked.
#[test]
fn the_read_only_preset_shows_neither_the_environment_nor_secret_files() {
    let s = Setup::new(User::Current, RECIPE);
    fs::create_dir_all(s.t.home.join(".ssh")).unwrap();
    fs::write(s.t.home.join(".ssh/id_ed25519"), format!("PRIVATE {KEY}\n")).unwrap();
    let leaks = [
        "env",
        "printenv",
        "printenv ANTHROPIC_API_KEY",
        "cat ~/.ssh/id_ed25519",
        "grep -r PRIVATE .ssh",
    ];
    let mut commands: Vec<&str> = leaks.to_vec();
    commands.push("printenv HOME");
    // `grep -r PRIVATE .ssh` reads the home's .ssh from the home directory.
    let model = s.model(&commands);
    let done = s.run(&model);
    let results = model.tool_results();
    assert_eq!(results.len(), commands.len(), "{}", done.report(&model));
    assert_no_key(&results);
    for (command, result) in leaks.iter().zip(&results) {
        assert!(
            result.contains(&format!("gate: refused `{command}`")),
            "{command}: {result:?}"
        );
    }
    assert_eq!(
        results.last().unwrap().trim(),
        s.t.home.display().to_string()
    );
}

/// The broker: a command no rule allows waits for it; an approval runs it, a denial's
/// message reaches the model, and `--remember` holds for the identical next command.
#[test]
fn the_broker_approves_denies_and_remembers() {
    let s = Setup::new(User::Current, RECIPE);
    let broker = s.broker();
    let model = s.model(&[
        "touch approved",
        "touch denied",
        "touch remembered",
        "rm remembered",
        "touch remembered",
    ]);
    let mut session = s.start(&model);
    let id = broker.wait_for("touch approved", &mut session);
    assert!(!s.t.file("approved").exists());
    broker.answer(&["approve", &id]);
    let id = broker.wait_for("touch denied", &mut session);
    broker.answer(&["deny", &id, "--message", "write under build/ instead"]);
    let id = broker.wait_for("touch remembered", &mut session);
    broker.answer(&["approve", &id, "--remember"]);
    let id = broker.wait_for("rm remembered", &mut session);
    broker.answer(&["approve", &id]);
    let done = session.wait();
    assert_eq!(done.status, Some(0), "{}", done.report(&model));
    let results = model.tool_results();
    assert_eq!(results.len(), 5, "{}", done.report(&model));
    assert!(s.t.file("approved").exists());
    assert!(!s.t.file("denied").exists());
    assert!(
        results[1].contains("write under build/ instead") && results[1].contains("gate: refused"),
        "the denial's message reaches the model: {:?}",
        results[1]
    );
    assert!(s.t.file("remembered").exists(), "{}", done.report(&model));
    let records = s.audit();
    let remembered = records_for(&records, "touch remembered");
    assert_eq!(remembered.len(), 2, "{records:#?}");
    assert_eq!(
        (&remembered[1]["decision"], &remembered[1]["decided_by"]),
        (&Value::from("allow"), &Value::from("remembered")),
        "the broker answered from its memory: {records:#?}"
    );
    assert_eq!(broker.pending(), Vec::<Value>::new());
}

/// Level `full` with a deny rule: Claude Code's start-up script is not refused (gate
/// answers it and recognises its own snapshot later, so the deny rule is checked
/// against the model's own commands), an ordinary command runs, and a denied one is
/// refused with a reason that shows what matched, also when its program is computed.
#[test]
fn full_with_deny_rules_runs_the_start_up_and_refuses_only_what_is_denied() {
    let s = Setup::new(
        User::Current,
        "level = \"full\"\ndeny = [\"git push --force\"]\n",
    );
    let model = s.model(&[
        "echo ran > full-ran && echo ok",
        "git push --force origin main",
        "G=git; $G push --force origin main",
    ]);
    let done = s.run(&model);
    let results = model.tool_results();
    assert_eq!(results.len(), 3, "{}", done.report(&model));
    assert_eq!(results[0].trim(), "ok");
    assert!(s.t.file("full-ran").exists());
    assert!(
        results[1].contains("the deny rule `git push --force`")
            && results[1].contains("matches `git push --force origin main`"),
        "{:?}",
        results[1]
    );
    assert!(
        results[2].contains("the deny rule `git push --force`")
            && results[2].contains("$G push --force origin main"),
        "{:?}",
        results[2]
    );
    let records = s.audit();
    for r in &records {
        let message = r["message"].as_str().unwrap_or("");
        assert!(
            !message.contains("`… …`") && !message.contains("``"),
            "an empty match: {r:#}"
        );
    }
    let refused: Vec<_> = records.iter().filter(|r| r["decision"] == "deny").collect();
    assert_eq!(
        refused.len(),
        2,
        "only the model's two denied commands: {records:#?}"
    );
    // At full gate answers the snapshot call (so that it can recognise its own stub
    // later) but lets the environment probe run: `env` runs at full anyway.
    assert_eq!(
        startup_kinds(&records),
        ["claude-code/snapshot-create"],
        "{records:#?}"
    );
    let probe = records_for(&records, "env");
    assert!(
        probe.len() == 1 && probe[0]["decision"] == "allow",
        "the probe ran as an ordinary command: {records:#?}"
    );
    let full_ran = records_for(&records, "echo ran > full-ran && echo ok");
    assert_eq!(
        full_ran.len(),
        1,
        "the model's command was judged alone: {records:#?}"
    );
}

for_each_user! {
    /// Level `safe` through Claude Code: a secret in HOME is unreadable, writing outside
    /// the workspace and the network are refused, writing the workspace works.
    fn at_level_safe_the_sandbox_holds(user) {
        // The recipe's [sandbox] lines for Claude Code (docs/integrations.md).
        let s = Setup::new(
            user,
            "level = \"safe\"\n[sandbox]\ndeny_read = [\"~/.claude/.credentials.json\", \"~/.claude.json\"]\n",
        );
        fs::write(s.t.home.join(".claude/.credentials.json"), "OAUTH-TOKEN\n").unwrap();
        chown_tree(&s.t.home.join(".claude"), uid_of(user));
        fs::create_dir_all(s.t.home.join(".ssh")).unwrap();
        fs::write(s.t.home.join(".ssh/id_ed25519"), "PRIVATE-KEY-MATERIAL\n").unwrap();
        chown_tree(&s.t.home.join(".ssh"), uid_of(user));
        let outside = s.t.root.join("outside");
        fs::create_dir(&outside).unwrap();
        fs::set_permissions(&outside, fs::Permissions::from_mode(0o777)).unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let outside_file = outside.join("escaped");
        let read = "cat ~/.ssh/id_ed25519; echo status=$?".to_owned();
        let write_out = format!("touch {}; echo status=$?", outside_file.display());
        let net = format!("echo x > /dev/tcp/127.0.0.1/{port}; echo status=$?");
        let login = "cat ~/.claude/.credentials.json; echo status=$?";
        let model = s.model(&[&read, &write_out, &net, "touch inside && echo wrote", login]);
        let done = s.run(&model);
        let results = model.tool_results();
        assert_eq!(results.len(), 5, "{}", done.report(&model));
        assert!(!results[4].contains("OAUTH-TOKEN") && results[4].contains("status=1"), "{:?}", results[4]);
        assert!(!results[0].contains("PRIVATE-KEY-MATERIAL") && results[0].contains("status=1"), "{:?}", results[0]);
        assert!(results[1].contains("status=1"), "{:?}", results[1]);
        assert!(!outside_file.exists());
        assert!(results[2].contains("status=1"), "{:?}", results[2]);
        listener.set_nonblocking(true).unwrap();
        assert!(listener.accept().is_err(), "a connection reached the listener");
        assert_eq!(results[3].trim(), "wrote", "{}", done.report(&model));
        assert!(s.t.file("inside").exists());
        assert_eq!(
            fs::metadata(s.t.file("inside")).map(|m| std::os::unix::fs::MetadataExt::uid(&m)).unwrap(),
            uid_of(user)
        );
    }
}

/// The control for every test here: the same session through plain bash (no gate)
/// runs everything, so a refusal above is gate's.
/// The rules a person had in Claude Code, imported with `gate import claude --save` (as
/// that person), are what gate applies to Claude Code at level ask once Claude Code hands
/// every Bash call to gate: the imported allow rule and the imported exact rule run
/// unasked, the imported deny rule refuses by itself (not for want of an approver), and a
/// command no imported rule allows waits for an approver (none here: refused at once).
fn an_imported_claude_policy_decides_as_the_rules_said(user: User) {
    let s = Setup::new(
        user,
        "level = \"ask\"\nshell = \"/bin/bash\"\n\n[approval]\ntty = false\n",
    );
    let settings = s.t.home.join(".claude/settings.json");
    let before = r#"{
  "permissions": {
    "allow": ["Bash(echo imported:*)", "Bash(pwd)", "Bash(git * main)"],
    "deny": ["Bash(touch denied:*)"]
  }
}"#;
    fs::write(&settings, before).unwrap();
    let out = s.gate(&["import", "claude", "--save"]);
    out.assert_code(0);
    assert!(
        out.stdout()
            .contains("4 rules found: 3 imported, 0 narrowed, 0 broadened, 0 asked, 1 dropped"),
        "{}",
        out.report()
    );
    // The recipe: Claude Code's own settings hand every Bash call to gate.
    fs::write(&settings, r#"{"permissions": {"allow": ["Bash"]}}"#).unwrap();
    chown_tree(&s.t.home, uid_of(user));
    let model = s.model(&[
        "echo imported hello",
        "pwd",
        "touch denied proof-ran",
        "touch other-ran",
    ]);
    let done = s.run(&model);
    let results = model.tool_results();
    assert_eq!(results.len(), 4, "{}", done.report(&model));
    assert_eq!(
        results[0].trim(),
        "imported hello",
        "{}",
        done.report(&model)
    );
    assert_eq!(
        Path::new(results[1].trim()),
        s.t.work.as_path(),
        "{}",
        done.report(&model)
    );
    assert!(
        results[2].contains("the deny rule `touch denied`") && results[2].contains("126"),
        "{:?}",
        results[2]
    );
    for file in ["denied", "proof-ran", "other-ran"] {
        assert!(!s.t.file(file).exists(), "{file} was made");
    }
    let records = s.audit();
    let decided = |command: &str| {
        let found = records_for(&records, command);
        assert_eq!(found.len(), 1, "{command}: {records:#?}");
        found[0]["decided_by"].as_str().unwrap_or("").to_owned()
    };
    assert_eq!(decided("echo imported hello"), "rule");
    assert_eq!(decided("pwd"), "rule");
    assert_eq!(decided("touch denied proof-ran"), "deny-rule");
    assert_eq!(decided("touch other-ran"), "no-approver");
    assert_no_key(&results);
}

#[test]
fn an_imported_claude_policy_decides_as_the_rules_said_for_the_user() {
    an_imported_claude_policy_decides_as_the_rules_said(User::Current);
}

#[test]
fn an_imported_claude_policy_decides_as_the_rules_said_for_an_unprivileged_user() {
    an_imported_claude_policy_decides_as_the_rules_said(User::Unprivileged);
}

#[test]
fn control_without_gate_everything_runs_and_the_key_is_readable() {
    let s = Setup::new(User::Current, RECIPE);
    let model = s.model(&["touch plain-ran", "printenv ANTHROPIC_API_KEY"]);
    let mut command = Command::new(&s.claude);
    command
        .args(["-p", "Run the scripted commands."])
        .env_clear()
        .envs(s.env(&model))
        .env("CLAUDE_CODE_SHELL", bash())
        .current_dir(&s.t.work)
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let session = Session {
        stdout: reader(child.stdout.take().unwrap()),
        stderr: reader(child.stderr.take().unwrap()),
        child: Some(child),
        started: Instant::now(),
    };
    let done = session.wait();
    assert_eq!(done.status, Some(0), "{}", done.report(&model));
    assert!(s.t.file("plain-ran").exists());
    assert_eq!(model.tool_results().get(1).map(|r| r.trim()), Some(KEY));
}
