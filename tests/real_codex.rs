//! The real Codex CLI (0.171.0 from npm, `tests/agents/install.sh codex`) through gate,
//! driven by a scripted model (`tests/agents/protocols/openai_responses.py`), set up as
//! docs/integrations.md's Codex recipe says: the bash shim as the login shell of the
//! account Codex runs as, the shim directory first on `PATH`, Codex's own sandbox off
//! and its approvals off (gate decides), gate's settings in the user file.
//!
//! The login shell comes from the passwd database, which a test must not change; each
//! run gets a private mount namespace in which `/etc/passwd` is a copy whose entry for
//! the account names the shim (what `chsh -s` would write). That needs root, which the
//! tests have here and in CI; without it they fail and say so.
//!
//! Judged by side effects in the test's directories and by the tool results the fake
//! model received (what the model saw).

use crate::common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::thread;
use std::time::{Duration, Instant};

use common::real_agents::{FakeModel, install};
use common::*;
use serde_json::{Value, json};

/// How long one Codex session may take (it takes two to five seconds here).
const SESSION: Duration = Duration::from_secs(90);

/// The Codex settings of the recipe, plus the fake provider. No update check, no
/// analytics, no plugin sync: nothing leaves 127.0.0.1.
fn codex_config(base_url: &str) -> String {
    format!(
        r#"model = "gpt-test"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = "{base_url}/v1"
wire_api = "responses"
env_key = "FAKE_MODEL_KEY"

[analytics]
enabled = false

[features]
plugins = false
remote_plugin = false
plugin_discovery_prefetch = false
"#
    )
}

struct Codex {
    t: TestEnv,
    user: User,
    exe: PathBuf,
    shims: PathBuf,
    passwd: PathBuf,
    codex_home: PathBuf,
}

impl Codex {
    /// A machine for one test: gate's user settings `gate_config`, Codex installed.
    fn new(user: User, gate_config: &str) -> Codex {
        assert!(
            running_as_root(),
            "these tests give the agent's account the shim as its login shell in a private \
             mount namespace, which needs root"
        );
        let exe = install("codex");
        // Outside /tmp: a hidden path inside /tmp would change what the sandbox allows.
        let t = TestEnv::new_in("/var/tmp");
        let shims = shim_dir_for(&t, &["bash", "sh"], user);
        let uid = uid_of(user).to_string();
        let passwd: String = fs::read_to_string("/etc/passwd")
            .unwrap()
            .lines()
            .map(|line| {
                let mut fields: Vec<&str> = line.split(':').collect();
                if fields.len() == 7 && fields[2] == uid {
                    fields[6] = "";
                    format!("{}{}\n", fields.join(":"), shims.join("bash").display())
                } else {
                    format!("{line}\n")
                }
            })
            .collect();
        let passwd_path = t.write("passwd", passwd);
        let codex_home = t.home.join(".codex");
        fs::create_dir(&codex_home).unwrap();
        fs::set_permissions(&codex_home, fs::Permissions::from_mode(0o700)).unwrap();
        let id = uid_of(user);
        std::os::unix::fs::chown(&codex_home, Some(id), Some(id)).unwrap();
        t.write_user_config(gate_config);
        Codex {
            t,
            user,
            exe,
            shims,
            passwd: passwd_path,
            codex_home,
        }
    }

    /// `codex exec` with the model's `script`, as the recipe runs it.
    fn start(&self, script: &Value) -> (Running, FakeModel) {
        let config = self.codex_home.join("config.toml");
        self.start_with(script, |text| fs::write(&config, text).unwrap())
    }

    /// The same, with Codex's settings written by `write_config` (given the recipe's).
    fn start_with(
        &self,
        script: &Value,
        write_config: impl FnOnce(String),
    ) -> (Running, FakeModel) {
        let model = FakeModel::start("openai_responses", script, &self.t.root);
        let config = self.codex_home.join("config.toml");
        write_config(codex_config(&model.base_url()));
        let id = uid_of(self.user);
        std::os::unix::fs::chown(&config, Some(id), Some(id)).unwrap();
        let mut inner = vec![];
        if self.user == User::Unprivileged {
            inner.extend([
                "setpriv".to_owned(),
                format!("--reuid={NOBODY}"),
                format!("--regid={NOBODY}"),
                "--clear-groups".to_owned(),
                "--".to_owned(),
            ]);
        }
        inner.push(self.exe.display().to_string());
        let path = format!("{}:/usr/local/bin:/usr/bin:/bin", self.shims.display());
        let running = self
            .t
            .gate()
            .program(require_program("unshare"))
            .args(["--mount", "--propagation", "private", "--", "/bin/sh", "-c"])
            .arg("mount --bind \"$1\" /etc/passwd && shift && exec \"$@\"")
            .arg("sh")
            .arg(&self.passwd)
            .args(&inner)
            .args(["exec", "--skip-git-repo-check", "Run the commands."])
            .env("PATH", path)
            .env("SHELL", self.shims.join("bash"))
            .env("CODEX_HOME", &self.codex_home)
            .env("FAKE_MODEL_KEY", "dummy")
            .env("LC_ALL", "C.UTF-8")
            .deadline(SESSION)
            .spawn();
        (running, model)
    }

    /// A whole session: the outcome, and what the model saw of each command.
    fn run(&self, script: &Value) -> (Outcome, Vec<String>) {
        let (running, model) = self.start(script);
        let out = running.wait();
        let results = model.tool_results();
        (out, results)
    }

    fn run_with(
        &self,
        script: &Value,
        write_config: impl FnOnce(String),
    ) -> (Outcome, Vec<String>) {
        let (running, model) = self.start_with(script, write_config);
        let out = running.wait();
        let results = model.tool_results();
        (out, results)
    }

    fn audit(&self) -> Vec<Value> {
        audit_records(&self.t.default_audit_log())
    }

    fn commands_in_audit(&self) -> Vec<(String, String, Option<String>)> {
        self.audit()
            .iter()
            .map(|r| {
                (
                    r["command"].as_str().unwrap_or_default().to_owned(),
                    r["decided_by"].as_str().unwrap_or_default().to_owned(),
                    r["wrapper"].as_str().map(str::to_owned),
                )
            })
            .collect()
    }
}

/// The model's script: each command once, then a final answer.
fn script(commands: &[&str]) -> Value {
    json!({"commands": commands, "final": "done"})
}

/// `commands` with extra exec_command arguments, one object per command.
fn script_with(commands: &[&str], arguments: Value) -> Value {
    json!({"commands": commands, "final": "done", "arguments": arguments})
}

#[track_caller]
fn session_ok(out: &Outcome, results: &[String], count: usize) {
    assert_eq!(out.code(), Some(0), "codex failed:\n{}", out.report());
    assert_eq!(
        results.len(),
        count,
        "the model saw {} results, not {count}: {results:?}\n{}",
        results.len(),
        out.report()
    );
}

/// What the model saw of a command: Codex's header, then the output.
fn exit_code(result: &str) -> Option<i32> {
    let line = result
        .lines()
        .find(|l| l.starts_with("Process exited with code "))?;
    line.rsplit(' ').next()?.parse().ok()
}

const ASK: &str = r#"level = "ask"
allow = ["echo", "touch allowed-ran", "printenv PATH", "sleep"]
shell = "/bin/bash"
"#;

/// An allowed command runs unasked, wrapped the way Codex 0.171 wraps it once it has a
/// snapshot: gate answered the capture and the check (nothing of them ran: the
/// `~/.bashrc` they source did not), Codex accepted the answer and rewrote it, and the
/// command came in Codex's wrapper, recognised (template `codex/snapshot-env`), judged
/// once by the gate the wrapper execs.
#[test]
fn codex_allowed_commands_run_unasked_inside_its_snapshot_wrapper() {
    let c = Codex::new(User::Current, ASK);
    fs::write(c.t.home.join(".bashrc"), "touch \"$HOME/bashrc-ran\"\n").unwrap();
    let (out, results) = c.run(&script(&["echo first", "touch allowed-ran", "echo third"]));
    session_ok(&out, &results, 3);
    for r in &results {
        assert_eq!(exit_code(r), Some(0), "{results:?}");
    }
    assert!(results[0].contains("first") && results[2].contains("third"));
    assert!(c.t.file("allowed-ran").exists());
    assert!(!c.t.home.join("bashrc-ran").exists(), "the capture ran");
    let audit = c.commands_in_audit();
    let startup: Vec<String> = c
        .audit()
        .iter()
        .filter(|r| r["kind"] == "agent-startup")
        .map(|r| {
            r["command"]
                .as_str()
                .unwrap()
                .split(':')
                .next()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        startup,
        ["(codex/snapshot-capture)", "(codex/snapshot-check"],
        "{audit:?}"
    );
    // The commands after the snapshot is made come wrapped, and are recognised.
    let wrapped: Vec<_> = audit
        .iter()
        .filter(|(_, by, w)| by == "delegated" && w.as_deref() == Some("codex/snapshot-env"))
        .map(|(command, _, _)| command.as_str())
        .collect();
    assert!(wrapped.contains(&"echo third"), "{audit:?}");
    for record in c.audit() {
        let line = serde_json::to_string(&record).unwrap();
        assert!(line.len() < 2048, "a long audit record: {line}");
    }
}

/// A snapshot the model edited after gate answered: the next wrapped command sources
/// it, so gate judges the whole wrapper, which no rule allows, and nothing of it runs.
#[test]
fn codex_a_snapshot_the_model_edited_is_not_trusted() {
    let c = Codex::new(User::Current, ASK);
    let planted = c.t.home.join("planted-ran");
    // The model's own file tools could edit it; the test does, during the second
    // command (an allowed `sleep`).
    let (running, model) = c.start(&script(&["echo one", "sleep 3", "echo three"]));
    // Wait until the first command has run, then edit the snapshot.
    let end = Instant::now() + SESSION;
    loop {
        let snapshots: Vec<PathBuf> = fs::read_dir(c.codex_home.join("shell_snapshots"))
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        // Once the `sleep` has started (its wrapper sourced the file before that):
        // editing earlier would race gate's check against the shell's `.` (see the
        // recipe's known limits).
        let sleeping = c.t.default_audit_log().exists()
            && c.commands_in_audit()
                .iter()
                .any(|(command, by, _)| command == "sleep 3" && by == "rule");
        if sleeping
            && snapshots
                .iter()
                .any(|p| p.extension().is_some_and(|e| e == "sh"))
        {
            thread::sleep(Duration::from_millis(300));
            for p in snapshots
                .iter()
                .filter(|p| p.extension().is_some_and(|e| e == "sh"))
            {
                let mut text = fs::read_to_string(p).unwrap();
                text.push_str(&format!("touch {}\n", planted.display()));
                fs::write(p, text).unwrap();
            }
            break;
        }
        assert!(Instant::now() < end, "no snapshot and first result in time");
        thread::sleep(Duration::from_millis(20));
    }
    let out = running.wait();
    let results = model.tool_results();
    session_ok(&out, &results, 3);
    assert_eq!(exit_code(&results[2]), Some(126), "{results:?}");
    assert!(results[2].contains("gate: refused"), "{results:?}");
    assert!(
        results[2].contains("it is Codex CLI's wrapper (codex/snapshot-env), but the snapshot"),
        "{results:?}"
    );
    assert!(
        !planted.exists(),
        "the edited snapshot was sourced: {results:?}\n{:#?}",
        c.commands_in_audit()
    );
}

// ---------------------------------------------------------------------------------------
// Approvals: a real `gate serve`, answered with `gate pending/approve/deny`.

struct Broker<'a> {
    c: &'a Codex,
    running: Option<Running>,
}

impl<'a> Broker<'a> {
    fn start(c: &'a Codex) -> Broker<'a> {
        let running = c.t.gate().arg("serve").deadline(SESSION * 2).spawn();
        let socket = c.t.runtime.join("gate/broker.sock");
        let end = Instant::now() + DEADLINE;
        while !socket.exists() {
            assert!(Instant::now() < end, "gate serve did not start");
            thread::sleep(Duration::from_millis(10));
        }
        Broker {
            c,
            running: Some(running),
        }
    }

    fn pending(&self) -> Vec<Value> {
        let out = self.c.t.gate().args(["pending", "--json"]).run();
        out.assert_code(0);
        serde_json::from_str(&out.stdout()).unwrap()
    }

    /// The request for `command`, once it waits.
    #[track_caller]
    fn wait_for(&self, command: &str) -> Value {
        let end = Instant::now() + SESSION;
        loop {
            if let Some(item) = self.pending().into_iter().find(|i| i["command"] == command) {
                return item;
            }
            assert!(Instant::now() < end, "no request for {command:?} arrived");
            thread::sleep(Duration::from_millis(20));
        }
    }

    fn answer(&self, args: &[&str]) {
        self.c.t.gate().args(args).run().assert_code(0);
    }
}

impl Drop for Broker<'_> {
    fn drop(&mut self) {
        if let Some(running) = self.running.take() {
            // SAFETY: kill(2) on the broker this test started.
            unsafe { libc::kill(running.pid as i32, libc::SIGTERM) };
            let _ = running.wait();
        }
    }
}

/// Shell syntax is refused at once with nothing run, and the model reads why.
#[test]
fn codex_shell_syntax_is_refused_with_nothing_run() {
    let c = Codex::new(User::Current, ASK);
    let (out, results) = c.run(&script(&["echo a; touch syntax-ran", "echo fine"]));
    session_ok(&out, &results, 2);
    assert_eq!(exit_code(&results[0]), Some(126), "{results:?}");
    assert!(results[0].contains("gate: refused `echo a; touch syntax-ran`"));
    assert!(results[0].contains("shell character ';'"), "{results:?}");
    assert!(!c.t.file("syntax-ran").exists());
    assert_eq!(exit_code(&results[1]), Some(0));
}

/// No approver: the refusal comes at once (not after gate's timeout), and says how to
/// get one.
#[test]
fn codex_without_an_approver_refuses_at_once() {
    let c = Codex::new(User::Current, ASK);
    let (out, results) = c.run(&script(&["touch needs-approval"]));
    session_ok(&out, &results, 1);
    assert_eq!(exit_code(&results[0]), Some(126));
    // "no-approver", not "timeout": gate refused without waiting for an answer.
    let records = c.audit();
    assert!(
        records
            .iter()
            .any(|r| r["command"] == "touch needs-approval" && r["decided_by"] == "no-approver"),
        "{records:#?}"
    );
    assert!(results[0].contains("gate serve"), "{results:?}");
    assert!(!c.t.file("needs-approval").exists());
}

/// With the broker: a denial's message reaches the model, an approval runs, and
/// `--remember` holds for the identical next command of the session.
#[test]
fn codex_with_the_broker_denied_approved_and_remembered() {
    let c = Codex::new(User::Current, ASK);
    let broker = Broker::start(&c);
    let (running, model) = c.start(&script(&[
        "touch denied-ran",
        "touch approved-ran",
        "touch remembered-ran",
        "rm remembered-ran",
        "touch remembered-ran",
    ]));
    let denied = broker.wait_for("touch denied-ran");
    broker.answer(&[
        "deny",
        denied["id"].as_str().unwrap(),
        "--message",
        "use make clean instead",
    ]);
    let approved = broker.wait_for("touch approved-ran");
    broker.answer(&["approve", approved["id"].as_str().unwrap()]);
    let remembered = broker.wait_for("touch remembered-ran");
    broker.answer(&["approve", remembered["id"].as_str().unwrap(), "--remember"]);
    let rm = broker.wait_for("rm remembered-ran");
    broker.answer(&["approve", rm["id"].as_str().unwrap()]);
    let out = running.wait();
    let results = model.tool_results();
    session_ok(&out, &results, 5);
    assert_eq!(exit_code(&results[0]), Some(126), "{results:?}");
    assert!(results[0].contains("use make clean instead"), "{results:?}");
    assert!(!c.t.file("denied-ran").exists());
    assert!(c.t.file("approved-ran").exists());
    // The second `touch remembered-ran` was not asked: it ran after the `rm`.
    assert!(c.t.file("remembered-ran").exists(), "{results:?}");
    for r in &results[1..] {
        assert_eq!(exit_code(r), Some(0), "{results:?}");
    }
    let asked: Vec<String> = c
        .audit()
        .iter()
        .filter(|r| r["command"] == "touch remembered-ran")
        .map(|r| r["decided_by"].as_str().unwrap().to_owned())
        .collect();
    assert!(asked.contains(&"remembered".to_owned()), "{asked:?}");
}

/// Level `full` with a deny rule: everything else runs, the denied command does not,
/// and the model reads which rule matched.
#[test]
fn codex_at_full_with_a_deny_rule() {
    let c = Codex::new(
        User::Current,
        "level = \"full\"\ndeny = [\"git push\"]\nshell = \"/bin/bash\"\n",
    );
    let (out, results) = c.run(&script(&[
        "touch full-ran && echo ok",
        "git push origin main",
    ]));
    session_ok(&out, &results, 2);
    assert_eq!(exit_code(&results[0]), Some(0), "{results:?}");
    assert!(c.t.file("full-ran").exists());
    assert_eq!(exit_code(&results[1]), Some(126), "{results:?}");
    assert!(
        results[1].contains("the deny rule `git push`"),
        "{results:?}"
    );
}

/// A person's own Codex rules, as `gate::import::codex` imports them: an allow rule
/// without a decision (Codex's default), a prompt and a forbidden rule over it.
const CODEX_RULES: &str = r#"prefix_rule(pattern = ["touch"])
prefix_rule(pattern = ["touch", "imported-asked"], decision = "prompt")
prefix_rule(pattern = ["touch", ["imported-denied", "also-denied"]], decision = "forbidden")
"#;

/// The gate configuration made of the imported rules, at level `ask`.
fn imported_codex_config() -> String {
    use gate::import::{Outcome, RuleKind, Scope};
    let entries = gate::import::codex::read(&[(
        PathBuf::from("/home/me/.codex/rules/default.rules"),
        Scope::User,
        CODEX_RULES.to_owned(),
    )])
    .unwrap();
    let mut config = String::from("level = \"ask\"\nshell = \"/bin/bash\"\n");
    for (kind, key) in [
        (RuleKind::Allow, "allow"),
        (RuleKind::Ask, "ask"),
        (RuleKind::Deny, "deny"),
    ] {
        let rules: Vec<String> = entries
            .iter()
            .filter_map(|e| match &e.outcome {
                Outcome::Imported(r)
                | Outcome::Narrowed { rule: r, .. }
                | Outcome::Broadened { rule: r, .. }
                | Outcome::Asked { rule: r, .. }
                    if r.kind == kind =>
                {
                    Some(format!(
                        "{{ rule = {}, from = {} }}",
                        serde_json::to_string(&r.text).unwrap(),
                        serde_json::to_string(&e.source.to_string()).unwrap()
                    ))
                }
                _ => None,
            })
            .collect();
        config.push_str(&format!("{key} = [{}]\n", rules.join(", ")));
    }
    config
}

for_each_user! {
    /// Codex with the person's Codex rules imported into gate (and Codex's own rules
    /// off, as the recipe says): what they allowed runs unasked, what they forbade is
    /// refused with the rule's origin, and what they prompted for is asked about even
    /// though an allow rule matches it too (Codex's order: forbidden, prompt, allow).
    fn codex_with_its_own_rules_imported(user) {
        let c = Codex::new(user, &imported_codex_config());
        let (out, results) = c.run(&script(&[
            "touch imported-allowed",
            "touch imported-denied",
            "touch imported-asked",
            "touch also-denied x",
        ]));
        session_ok(&out, &results, 4);
        assert_eq!(exit_code(&results[0]), Some(0), "{results:?}");
        assert!(c.t.file("imported-allowed").exists());
        for (i, name) in [(1, "imported-denied"), (2, "imported-asked"), (3, "also-denied")] {
            assert_eq!(exit_code(&results[i]), Some(126), "{results:?}");
            assert!(!c.t.file(name).exists(), "{name} ran: {results:?}");
        }
        assert!(
            results[1].contains("the deny rule `touch imported-denied`"),
            "{results:?}"
        );
        let decided: Vec<(String, String)> = c
            .commands_in_audit()
            .into_iter()
            .filter(|(command, _, _)| command.starts_with("touch "))
            .map(|(command, by, _)| (command, by))
            .collect();
        for (command, by) in [
            ("touch imported-allowed", "rule"),
            ("touch imported-denied", "deny-rule"),
            ("touch imported-asked", "no-approver"),
            ("touch also-denied x", "deny-rule"),
        ] {
            assert!(
                decided.contains(&(command.to_owned(), by.to_owned())),
                "{command}: {decided:?}"
            );
        }
    }
}

/// Codex keeps its own rules beside gate's (docs/import-codex.md, "After the import"):
/// with the recipe's `approval_policy = "never"`, a command its own `prompt` or
/// `forbidden` rule matches is refused by Codex and never reaches gate, which is why the
/// imported rules are best left to gate alone.
#[test]
fn codex_its_own_prompt_and_forbidden_rules_refuse_before_gate() {
    let c = Codex::new(
        User::Current,
        "level = \"ask\"\nallow = [\"touch\"]\nshell = \"/bin/bash\"\n",
    );
    let rules = c.codex_home.join("rules");
    fs::create_dir(&rules).unwrap();
    fs::write(
        rules.join("default.rules"),
        "prefix_rule(pattern=[\"touch\", \"codex-prompted\"], decision=\"prompt\")\n\
         prefix_rule(pattern=[\"touch\", \"codex-forbidden\"], decision=\"forbidden\")\n",
    )
    .unwrap();
    let (out, results) = c.run(&script(&[
        "touch codex-prompted",
        "touch codex-forbidden",
        "touch gate-allowed",
    ]));
    session_ok(&out, &results, 3);
    assert!(
        results[0].contains("approval required by policy, but AskForApproval is set to Never"),
        "{results:?}"
    );
    assert!(
        results[1].contains("policy forbids commands starting with `touch codex-forbidden`"),
        "{results:?}"
    );
    assert!(c.t.file("gate-allowed").exists(), "{results:?}");
    for name in ["codex-prompted", "codex-forbidden"] {
        assert!(!c.t.file(name).exists(), "{name} ran: {results:?}");
    }
    // Refused by Codex: gate never saw them.
    let commands: Vec<String> = c
        .commands_in_audit()
        .into_iter()
        .map(|(c, _, _)| c)
        .collect();
    assert!(
        commands.contains(&"touch gate-allowed".to_owned()),
        "{commands:?}"
    );
    for command in ["touch codex-prompted", "touch codex-forbidden"] {
        assert!(
            !commands.iter().any(|c| c.contains(command)),
            "{command}: {commands:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Level safe, and what the model can choose in exec_command's arguments.

const SAFE: &str = "level = \"safe\"\nshell = \"/bin/bash\"\n";

/// The network probe: prints `net-errno N` (111 is a refused connection, what the
/// network without a sandbox gives; the sandbox refuses the socket itself).
const NET_PROBE: &str = "python3 -c 'import socket\ntry:\n  socket.create_connection((\"127.0.0.1\", 1))\nexcept OSError as e:\n  print(\"net-errno\", e.errno)'";

for_each_user! {
    /// Level `safe`: commands run unasked in the sandbox. The workspace is writable,
    /// a secret is not readable, `HOME` is not writable, the network is off, and a
    /// `workdir` the model points at `~/.codex` does not make Codex's settings writable.
    fn codex_at_level_safe(user) {
        let c = Codex::new(user, SAFE);
        let ssh = c.t.home.join(".ssh");
        fs::create_dir(&ssh).unwrap();
        fs::write(ssh.join("id_test"), "SECRET-KEY\n").unwrap();
        let id = uid_of(user);
        for p in [&ssh, &ssh.join("id_test")] {
            std::os::unix::fs::chown(p, Some(id), Some(id)).unwrap();
        }
        let config = c.codex_home.join("config.toml");
        let outside = c.t.home.join("outside-write");
        let elsewhere = c.t.root.join("elsewhere");
        fs::create_dir(&elsewhere).unwrap();
        fs::set_permissions(&elsewhere, fs::Permissions::from_mode(0o777)).unwrap();
        let commands = [
            "touch safe-inside && echo wrote".to_owned(),
            format!("cat {}", ssh.join("id_test").display()),
            format!("touch {}", outside.display()),
            NET_PROBE.to_owned(),
            "echo 'sandbox_mode = \"danger-full-access\"' >> config.toml; echo rc=$?".to_owned(),
            "touch elsewhere-ran".to_owned(),
        ];
        let refs: Vec<&str> = commands.iter().map(String::as_str).collect();
        let workdirs = json!([{}, {}, {}, {}, {"workdir": c.codex_home}, {"workdir": elsewhere}]);
        let (out, results) = c.run(&script_with(&refs, workdirs));
        session_ok(&out, &results, 6);
        let config_after = fs::read_to_string(&config).unwrap();
        assert!(c.t.file("safe-inside").exists(), "{results:?}");
        assert!(results[0].contains("wrote"), "{results:?}");
        assert!(!results[1].contains("SECRET-KEY"), "{results:?}");
        assert_ne!(exit_code(&results[1]), Some(0), "{results:?}");
        assert!(!outside.exists(), "{results:?}");
        assert!(results[3].contains("net-errno"), "{results:?}");
        assert!(!results[3].contains("net-errno 111"), "the network was open: {results:?}");
        assert!(
            !config_after.contains("danger-full-access\"\n\""),
            "the model edited Codex's settings through workdir: {results:?}"
        );
        // The model's workdir is not the workspace: neither Codex's settings nor any
        // other directory becomes writable by naming it.
        for r in &results[4..] {
            assert_eq!(exit_code(r), Some(125), "{results:?}");
            assert!(r.contains("outside the directory Codex works in"), "{results:?}");
        }
        assert!(!elsewhere.join("elsewhere-ran").exists(), "{results:?}");
        // Every command went through gate, in the sandbox.
        let audit = c.audit();
        let sandboxed = audit
            .iter()
            .filter(|r| r["decided_by"] == "level" && !r["sandbox"].is_null())
            .count();
        assert!(sandboxed >= 4, "{audit:#?}");
    }
}

/// `exec_command`'s `shell`: the model may name any program. `sh` and `bash` are found
/// on `PATH` (the shims, first there by the recipe); any other name makes Codex run
/// `/bin/sh`, which its snapshot wrapper execs, so gate judges the command all the
/// same. With `login: false` as well there is no wrapper: Codex runs `/bin/sh -c CMD`
/// itself, past gate. That is the hole the recipe names in its first line.
#[test]
fn codex_a_shell_the_model_names_still_meets_gate_but_not_with_login_false() {
    let c = Codex::new(User::Current, ASK);
    let commands = [
        "echo warm-up",
        "touch via-sh",
        "touch via-python",
        "touch via-bash",
        "touch past-gate",
    ];
    let arguments = json!([
        {},
        {"shell": "sh"},
        {"shell": "/usr/bin/python3"},
        {"shell": "/bin/bash"},
        {"shell": "/usr/bin/python3", "login": false},
    ]);
    let (out, results) = c.run(&script_with(&commands, arguments));
    session_ok(&out, &results, 5);
    for (i, name) in [(1, "via-sh"), (2, "via-python"), (3, "via-bash")] {
        assert_eq!(exit_code(&results[i]), Some(126), "{name}: {results:?}");
        assert!(results[i].contains("gate: refused"), "{results:?}");
        assert!(!c.t.file(name).exists(), "{name} ran");
    }
    // The limit, as it stands: nothing of it reached gate. If this starts failing,
    // Codex changed, and the recipe's first line must change with it.
    assert_eq!(exit_code(&results[4]), Some(0), "{results:?}");
    assert!(c.t.file("past-gate").exists());
    assert!(
        !c.commands_in_audit()
            .iter()
            .any(|(command, _, _)| command == "touch past-gate"),
        "gate saw it after all: update the recipe"
    );
}

/// `apply_patch` is Codex's own file tool: it writes outside gate, here a
/// `~/.bash_profile` that would run before every command of a login shell. gate starts
/// no login shell and reads no start-up file (`bash --norc`), so the next allowed
/// commands do not run it, and they still get Codex's `PATH` (its bundled tools first).
#[test]
fn codex_apply_patch_plants_a_profile_that_no_command_runs() {
    let c = Codex::new(User::Current, ASK);
    let ran = c.t.home.join("profile-ran");
    let profile = c.t.home.join(".bash_profile");
    let patch = format!(
        "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: {}\n+touch {}\n*** End Patch\nEOF\n",
        profile.display(),
        ran.display()
    );
    let (out, results) = c.run(&script(&[&patch, "echo after", "printenv PATH"]));
    session_ok(&out, &results, 3);
    assert!(profile.exists(), "apply_patch did not write: {results:?}");
    assert!(results[1].contains("after"), "{results:?}");
    assert!(!ran.exists(), "the planted ~/.bash_profile ran");
    let path = results[2].lines().last().unwrap_or_default().to_owned();
    // Codex's bundled tools first; gate took its own shim directory out (so that a
    // `bash` the command starts is the real one).
    assert!(path.contains("/codex-path:"), "{path}");
    assert!(!path.contains(&c.shims.display().to_string()), "{path}");
    assert!(path.ends_with(":/usr/local/bin:/usr/bin:/bin"), "{path}");
}

// ---------------------------------------------------------------------------------------
// Codex's own sandbox, and the audit log.

/// Codex with its own sandbox on (`workspace-write`): gate runs inside it, and its log
/// is outside the writable roots. With the log's directory added to Codex's writable
/// roots, gate records as usual; a command that slips past gate (`login: false` and a
/// shell gate does not know) is still held by Codex's sandbox. With Codex's read-only
/// sandbox and nothing added, gate says why it cannot record, and with
/// `audit.required = true` it refuses instead of running unrecorded.
#[test]
fn codex_inside_its_own_sandbox_gate_still_records() {
    let c = Codex::new(User::Current, ASK);
    let state = c.t.state.join("gate");
    fs::create_dir_all(&state).unwrap();
    let config = c.codex_home.join("config.toml");
    let with_root = |mode: &'static str, root: bool| {
        let (config, state) = (config.clone(), state.clone());
        move |text: String| {
            let mut text = text.replace(
                "sandbox_mode = \"danger-full-access\"",
                &format!("sandbox_mode = \"{mode}\""),
            );
            if root {
                text.push_str(&format!(
                    "\n[sandbox_workspace_write]\nwritable_roots = [\"{}\"]\n",
                    state.display()
                ));
            }
            fs::write(&config, text).unwrap();
        }
    };
    // workspace-write, the log's directory a writable root.
    let outside = c.t.home.join("outside-bypass");
    let commands = ["echo recorded", &format!("touch {}", outside.display())];
    let arguments = json!([{}, {"shell": "/usr/bin/python3", "login": false}]);
    let (out, results) = c.run_with(
        &script_with(&commands, arguments),
        with_root("workspace-write", true),
    );
    session_ok(&out, &results, 2);
    assert!(results[0].contains("recorded"), "{results:?}");
    assert!(
        !results[0].contains("cannot write the audit log"),
        "{results:?}"
    );
    assert!(
        c.commands_in_audit()
            .iter()
            .any(|(command, by, _)| command == "echo recorded" && by == "rule"),
        "{:?}",
        c.commands_in_audit()
    );
    assert!(
        !outside.exists(),
        "Codex's sandbox did not hold: {results:?}"
    );

    // read-only, nothing added: one clear line, and the command runs unrecorded.
    let (out, results) = c.run_with(&script(&["echo unrecorded"]), with_root("read-only", false));
    session_ok(&out, &results, 1);
    assert!(results[0].contains("unrecorded"), "{results:?}");
    assert!(
        results[0].contains("gate runs inside a sandbox that makes it read-only"),
        "{results:?}"
    );
    assert!(
        results[0].contains("sandbox_workspace_write.writable_roots"),
        "{results:?}"
    );

    // audit.required: refused, nothing run.
    fs::write(
        c.t.user_config_file(),
        format!("{ASK}\n[audit]\nrequired = true\n"),
    )
    .unwrap();
    let (out, results) = c.run_with(
        &script(&["touch allowed-ran"]),
        with_root("read-only", false),
    );
    session_ok(&out, &results, 1);
    assert_ne!(exit_code(&results[0]), Some(0), "{results:?}");
    assert!(
        results[0].contains("gate runs inside a sandbox"),
        "{results:?}"
    );
    assert!(!c.t.file("allowed-ran").exists());
}

/// Codex kills the process group of a command it gives up on. A gate killed while it
/// waits for the broker writes nothing; the broker then records the request itself
/// (`decided_by` `requester-gone`), so the log has a line for every command asked.
#[test]
fn codex_a_requester_killed_while_waiting_still_leaves_a_record() {
    let c = Codex::new(User::Current, ASK);
    let broker = Broker::start(&c);
    let (running, model) = c.start(&script(&["touch killed-ran", "echo after"]));
    let request = broker.wait_for("touch killed-ran");
    let pid = request["pid"]
        .as_u64()
        .unwrap_or_else(|| panic!("{request}")) as i32;
    let call_id = request["call_id"].as_str().unwrap().to_owned();
    // SAFETY: getpgid and kill on the gate process this test's Codex started.
    unsafe {
        let group = libc::getpgid(pid);
        assert!(group > 0);
        libc::kill(-group, libc::SIGKILL);
    }
    let out = running.wait();
    let results = model.tool_results();
    session_ok(&out, &results, 2);
    assert!(!c.t.file("killed-ran").exists());
    let end = Instant::now() + Duration::from_secs(20);
    let record = loop {
        let found = c
            .audit()
            .into_iter()
            .find(|r| r["call_id"] == call_id.as_str());
        if let Some(r) = found {
            break r;
        }
        assert!(
            Instant::now() < end,
            "no record for the killed request: {:#?}",
            c.audit()
        );
        thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(record["decided_by"], "requester-gone", "{record}");
    assert_eq!(record["decision"], "deny");
    assert_eq!(record["command"], "touch killed-ran");
    assert_eq!(record["pid"], pid);
    drop(broker);
}

/// At level `full` gate runs Codex's capture script and its wrapper as they are (the
/// snapshot then holds what the script printed, so the wrapper is judged whole). The
/// records stay small all the same: a text longer than the audit keeps is cut, with
/// its length, and the gate the wrapper execs records the command itself.
#[test]
fn codex_at_full_audit_records_stay_small() {
    let c = Codex::new(User::Current, "level = \"full\"\nshell = \"/bin/bash\"\n");
    let (out, results) = c.run(&script(&["echo one", "echo two"]));
    session_ok(&out, &results, 2);
    let log = fs::read_to_string(c.t.default_audit_log()).unwrap();
    for line in log.lines() {
        assert!(
            line.len() <= 4096,
            "a record of {} bytes: {}…",
            line.len(),
            &line[..200]
        );
    }
    let audit = c.audit();
    let cut: Vec<&Value> = audit
        .iter()
        .filter(|r| !r["command_bytes"].is_null())
        .collect();
    assert!(!cut.is_empty(), "Codex's wrapper was not cut: {audit:#?}");
    for r in cut {
        assert!(r["command_bytes"].as_u64().unwrap() > 30_000, "{r}");
    }
    assert!(
        c.commands_in_audit()
            .iter()
            .any(|(command, _, _)| command == "echo two"),
        "{:?}",
        c.commands_in_audit()
    );
}

/// Inside Codex's own sandbox a command cannot reach the broker's socket: a command
/// that needs an approver is refused at once, and the broker never hears of it (the
/// recipe says so; allow rules still work there).
#[test]
fn codex_inside_its_own_sandbox_the_broker_is_out_of_reach() {
    let c = Codex::new(User::Current, ASK);
    let state = c.t.state.join("gate");
    fs::create_dir_all(&state).unwrap();
    let config = c.codex_home.join("config.toml");
    let broker = Broker::start(&c);
    let (running, model) = c.start_with(
        &script(&["touch asked-in-sandbox", "echo allowed"]),
        |text| {
            let text = text.replace("danger-full-access", "workspace-write")
                + &format!(
                    "\n[sandbox_workspace_write]\nwritable_roots = [\"{}\"]\n",
                    state.display()
                );
            fs::write(&config, text).unwrap();
        },
    );
    let out = running.wait();
    let results = model.tool_results();
    session_ok(&out, &results, 2);
    assert_eq!(exit_code(&results[0]), Some(126), "{results:?}");
    assert!(results[0].contains("no approver to ask"), "{results:?}");
    assert!(!c.t.file("asked-in-sandbox").exists());
    assert!(broker.pending().is_empty());
    assert!(results[1].contains("allowed"), "{results:?}");
}
