//! Gemini CLI itself (0.61.0 from npm, `tests/agents/install.sh gemini`) through gate, as
//! docs/integrations.md's recipe says: the shim directory first on the `PATH` Gemini CLI
//! starts with, Gemini's own settings in `~/.gemini/settings.json`, `gemini -p … --yolo`.
//! A scripted fake model (`tests/agents/protocols/gemini.py`) asks for the commands; the
//! tests judge by side effects and by the tool results the model got back.

use crate::common;

use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use common::real_agents::{FakeModel, install};
use common::tmux::Term;
use common::*;
use serde_json::{Value, json};

/// One agent run, start-up to the final answer: seconds on this machine.
const AGENT_DEADLINE: Duration = Duration::from_secs(300);

/// Gemini CLI's own settings from docs/integrations.md: no usage statistics, telemetry
/// or update checks (nothing phones home), an API key as the way in.
const GEMINI_SETTINGS: &str = r#"{
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
  "security": {"auth": {"selectedType": "gemini-api-key"}}
}"#;

struct Agent {
    env: TestEnv,
    shims: PathBuf,
    gemini: PathBuf,
}

impl Agent {
    /// A home outside /tmp (Gemini CLI makes its per-call directories in /tmp) with
    /// gate's configuration `config` in its default place and Gemini CLI's settings.
    fn new(config: &str) -> Agent {
        let env = TestEnv::new_in("/var/tmp");
        let gemini = install("gemini");
        let config_file = env.home.join(".config/gate/config.toml");
        fs::create_dir_all(config_file.parent().unwrap()).unwrap();
        fs::write(&config_file, config).unwrap();
        let settings = env.home.join(".gemini/settings.json");
        fs::create_dir_all(settings.parent().unwrap()).unwrap();
        fs::write(&settings, GEMINI_SETTINGS).unwrap();
        // Only `bash`: the recipe's directory of one link.
        let shims = shim_dir(&env, &["bash"]);
        Agent { env, shims, gemini }
    }

    fn audit(&self) -> Vec<Value> {
        let log = self.env.home.join(".local/state/gate/audit.jsonl");
        if log.exists() {
            audit_records(&log)
        } else {
            Vec::new()
        }
    }

    /// `PATH="SHIMS:$PATH" gemini -p … --yolo`, the recipe, against `model`.
    fn command(&self, model: &FakeModel) -> Gate {
        self.launched(model, &[])
    }

    /// The same, started through `launcher` (a program and its arguments, which then
    /// runs Gemini CLI's path and arguments).
    fn launched(&self, model: &FakeModel, launcher: &[OsString]) -> Gate {
        let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into());
        let gate = match launcher.split_first() {
            None => self.env.gate().program(&self.gemini),
            Some((program, rest)) => self
                .env
                .gate()
                .program(program)
                .args(rest)
                .arg(&self.gemini),
        };
        gate.args(["-p", "Run the commands you are given.", "--yolo"])
            .env("PATH", format!("{}:{path}", self.shims.display()))
            // gate's configuration is found from HOME, as a user's would be.
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_STATE_HOME")
            .env("GEMINI_API_KEY", "dummy-key")
            .env("GOOGLE_GEMINI_BASE_URL", model.base_url())
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
            .env("TERM", "dumb")
            .deadline(AGENT_DEADLINE)
    }

    fn model(&self, commands: &[&str]) -> FakeModel {
        FakeModel::start(
            "gemini",
            &json!({"commands": commands, "final": "all done"}),
            &self.env.root,
        )
    }

    /// Run Gemini CLI to its end on `commands`; the tool results the model saw.
    #[track_caller]
    fn run(&self, commands: &[&str]) -> (Outcome, Vec<String>) {
        let model = self.model(commands);
        let out = self.command(&model).run();
        out.assert_code(0);
        let results = model.tool_results();
        assert_eq!(
            results.len(),
            commands.len(),
            "the model got {} tool results for {} commands: {results:?}\n{}",
            results.len(),
            commands.len(),
            out.report()
        );
        (out, results)
    }
}

/// `gate serve` on the test's runtime directory, stopped when dropped.
struct Broker<'a> {
    env: &'a TestEnv,
    runtime: PathBuf,
    running: Option<Running>,
}

impl<'a> Broker<'a> {
    fn start(env: &'a TestEnv, runtime: &Path) -> Broker<'a> {
        let running = env
            .gate()
            .env("XDG_RUNTIME_DIR", runtime)
            .args(["--no-config", "serve"])
            .deadline(AGENT_DEADLINE * 3)
            .spawn();
        let socket = runtime.join("gate/broker.sock");
        let end = Instant::now() + DEADLINE;
        while !socket.exists() {
            assert!(Instant::now() < end, "gate serve made no socket");
            thread::sleep(Duration::from_millis(10));
        }
        Broker {
            env,
            runtime: runtime.to_owned(),
            running: Some(running),
        }
    }

    fn tool(&self, args: &[&str]) -> Outcome {
        self.env
            .gate()
            .env("XDG_RUNTIME_DIR", &self.runtime)
            .arg("--no-config")
            .args(args)
            .run()
    }

    fn pending(&self) -> Vec<Value> {
        let out = self.tool(&["pending", "--json"]);
        out.assert_code(0);
        serde_json::from_str(&out.stdout()).unwrap()
    }

    /// The id of the request for exactly `command`, once it is pending.
    #[track_caller]
    fn wait_for(&self, command: &str, agent: &Running) -> String {
        let end = Instant::now() + AGENT_DEADLINE;
        loop {
            let pending = self.pending();
            if let Some(item) = pending.iter().find(|i| i["command"] == command) {
                return item["id"].as_str().unwrap().to_owned();
            }
            let alive = Path::new(&format!("/proc/{}", agent.pid)).exists();
            assert!(
                Instant::now() < end && alive,
                "no request for {command:?} (agent alive: {alive}); pending: {pending:?}"
            );
            thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Broker<'_> {
    fn drop(&mut self) {
        if let Some(running) = self.running.take() {
            let _ = std::process::Command::new(require_program("kill"))
                .arg(running.pid.to_string())
                .status();
            let _ = running.wait();
        }
    }
}

fn private_runtime(env: &TestEnv) -> PathBuf {
    runtime_dir(env, User::Current)
}

#[track_caller]
fn assert_not_refused(result: &str) {
    assert!(!result.contains("gate:"), "gate refused it: {result}");
}

// ---------------------------------------------------------------------------------------

/// The hole of issue 14: gate knew none of Gemini CLI's wrappers since 0.37, so no
/// allow rule ever matched. An allowed command runs unasked, judged by itself.
#[test]
fn an_allowed_command_runs_unasked() {
    let a = Agent::new("allow = [\"touch allowed-ran\"]\n");
    let (_, results) = a.run(&["touch allowed-ran"]);
    assert_not_refused(&results[0]);
    assert!(a.env.file("allowed-ran").exists(), "{results:?}");
    let records = a.audit();
    let last = records.last().expect("an audit record");
    assert_eq!(last["command"], "touch allowed-ran");
    assert_eq!(last["wrapper"], "gemini-cli/subshell-trap");
    assert_eq!(last["decision"], "allow");
}

/// Shell syntax in the model's command never matches an allow rule: nothing of it runs,
/// and the model reads why.
#[test]
fn shell_syntax_is_refused_with_nothing_run() {
    let a = Agent::new("allow = [\"touch\"]\n");
    let (_, results) = a.run(&["touch syntax-a; touch syntax-b"]);
    assert!(
        results[0].contains("gate: refused `touch syntax-a; touch syntax-b`"),
        "{results:?}"
    );
    assert!(!a.env.file("syntax-a").exists() && !a.env.file("syntax-b").exists());
}

/// No approver: refused at once, the model told what to do (and by the command it sent,
/// not Gemini CLI's wrapper).
#[test]
fn without_an_approver_the_refusal_is_fast_and_names_the_command() {
    let a = Agent::new("");
    let (_, results) = a.run(&["touch unapproved"]);
    assert!(
        results[0].contains("gate: refused `touch unapproved`")
            && results[0].contains("gate watch"),
        "{results:?}"
    );
    assert!(!a.env.file("unapproved").exists());
    // "no-approver", not "timeout": gate refused without waiting for an answer.
    let records = a.audit();
    assert!(
        records
            .iter()
            .any(|r| r["command"] == "touch unapproved" && r["decided_by"] == "no-approver"),
        "{records:#?}"
    );
}

/// The broker is asked about the model's own command: a denial's message reaches the
/// model, an approval runs, and `--remember` holds for the identical next command,
/// although every call has a new temporary directory.
#[test]
fn the_broker_denies_approves_and_remembers_the_agents_own_command() {
    let a = Agent::new("");
    let runtime = private_runtime(&a.env);
    let broker = Broker::start(&a.env, &runtime);
    let model = a.model(&[
        "touch denied-file",
        "touch approved-file",
        "touch remembered-file",
        "touch remembered-file",
    ]);
    let agent = a.command(&model).env("XDG_RUNTIME_DIR", &runtime).spawn();
    let id = broker.wait_for("touch denied-file", &agent);
    broker
        .tool(&["deny", &id, "--message", "use the build script instead"])
        .assert_code(0);
    let id = broker.wait_for("touch approved-file", &agent);
    broker.tool(&["approve", &id]).assert_code(0);
    let id = broker.wait_for("touch remembered-file", &agent);
    broker.tool(&["approve", &id, "--remember"]).assert_code(0);
    let out = agent.wait();
    out.assert_code(0);
    let results = model.tool_results();
    assert_eq!(results.len(), 4, "{results:?}\n{}", out.report());
    assert!(
        results[0].contains("use the build script instead"),
        "{results:?}"
    );
    assert!(!a.env.file("denied-file").exists());
    assert!(a.env.file("approved-file").exists(), "{results:?}");
    for r in &results[1..] {
        assert_not_refused(r);
    }
    let remembered: Vec<_> = a
        .audit()
        .into_iter()
        .filter(|r| r["command"] == "touch remembered-file")
        .map(|r| r["decided_by"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(remembered, ["socket", "remembered"], "{remembered:?}");
}

/// At `safe` every command runs in the sandbox: a secret unreadable, a write outside the
/// workspace and the network refused, the workspace writable.
#[test]
fn at_safe_the_commands_run_in_the_sandbox() {
    let a = Agent::new("level = \"safe\"\n");
    fs::create_dir_all(a.env.home.join(".ssh")).unwrap();
    fs::write(a.env.home.join(".ssh/id_test"), "SECRET-KEY-TEXT\n").unwrap();
    let outside = a.env.root.join("outside-write");
    let model_port_probe =
        "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", 9))' 2>&1 | tail -1";
    let (_, results) = a.run(&[
        "cat ~/.ssh/id_test",
        &format!("touch {}", outside.display()),
        model_port_probe,
        "touch inside-write",
    ]);
    assert!(!results[0].contains("SECRET-KEY-TEXT"), "{results:?}");
    assert!(!outside.exists(), "{results:?}");
    assert!(
        results[2].contains("PermissionError") || results[2].contains("not permitted"),
        "{results:?}"
    );
    assert!(a.env.file("inside-write").exists(), "{results:?}");
}

/// At `full` everything runs but what a deny rule names.
#[test]
fn at_full_deny_rules_still_refuse() {
    let a = Agent::new("level = \"full\"\ndeny = [\"rm -rf\"]\n");
    fs::write(a.env.file("victim"), "x").unwrap();
    let (_, results) = a.run(&["rm -rf victim", "touch full-ran"]);
    assert!(
        results[0].contains("gate: refused `rm -rf victim`: the deny rule `rm -rf`"),
        "{results:?}"
    );
    assert!(a.env.file("victim").exists());
    assert!(a.env.file("full-ran").exists(), "{results:?}");
}

/// The person's Gemini CLI policy, imported with `gate import gemini --save
/// --whole-words` and then taken out of Gemini CLI's way: the imported allow runs
/// unasked, the imported deny refuses by itself, and a command no rule allows is refused
/// at once without an approver.
#[test]
fn an_imported_gemini_policy_decides_as_its_rules_said() {
    let a = Agent::new("level = \"ask\"\n\n[approval]\ntty = false\n");
    let policy = a.env.home.join(".gemini/policies/mine.toml");
    fs::create_dir_all(policy.parent().unwrap()).unwrap();
    fs::write(
        &policy,
        "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"touch imported\"\n\
         decision = \"allow\"\npriority = 100\n\n[[rule]]\ntoolName = \"run_shell_command\"\n\
         commandPrefix = \"touch refused\"\ndecision = \"deny\"\npriority = 200\n",
    )
    .unwrap();
    let out = a
        .env
        .gate()
        .env_remove("XDG_CONFIG_HOME")
        .args(["import", "gemini", "--save", "--whole-words"])
        .run();
    out.assert_code(0);
    assert!(
        out.stdout()
            .contains("2 rules found: 0 imported, 1 narrowed, 1 broadened, 0 asked, 0 dropped"),
        "{}",
        out.report()
    );
    assert!(
        a.env
            .home
            .join(".config/gate/config.d/import-gemini.toml")
            .exists()
    );
    // gate decides now, not Gemini CLI's own policy.
    fs::remove_file(&policy).unwrap();
    let (_, results) = a.run(&["touch imported ran-a", "touch refused ran-b", "touch ran-c"]);
    assert_not_refused(&results[0]);
    assert!(a.env.file("ran-a").exists(), "{results:?}");
    assert!(
        results[1].contains("gate: refused `touch refused ran-b`: the deny rule `touch refused`"),
        "{results:?}"
    );
    assert!(
        results[2].contains("gate: refused `touch ran-c`"),
        "{results:?}"
    );
    for file in ["refused", "ran-b", "ran-c"] {
        assert!(!a.env.file(file).exists(), "{file} was made");
    }
    let records = a.audit();
    let decided = |command: &str| {
        records
            .iter()
            .filter(|r| r["command"] == command)
            .map(|r| r["decided_by"].as_str().unwrap_or("").to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(decided("touch imported ran-a"), ["rule"]);
    assert_eq!(decided("touch refused ran-b"), ["deny-rule"]);
    assert_eq!(decided("touch ran-c"), ["no-approver"]);
}

/// Gemini CLI starts no shell of its own: nothing reaches gate before the model's first
/// command (so there is no start-up call to answer), and a run without commands leaves
/// no record.
#[test]
fn gemini_cli_makes_no_start_up_call() {
    let a = Agent::new("");
    let model = a.model(&[]);
    let out = a.command(&model).run();
    out.assert_code(0);
    assert!(out.stdout().contains("all done"), "{}", out.report());
    assert_eq!(a.audit(), Vec::<Value>::new());
    let paths: Vec<String> = model
        .requests()
        .iter()
        .map(|r| r["path"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        paths.iter().all(|p| p.starts_with("/v1beta/models/")),
        "{paths:?}"
    );
}

/// Under GitHub Actions (`GITHUB_SHA` set) Gemini CLI strips `GATE_*`, `XDG_*` and
/// everything else but a short list from its shell's environment. gate still finds its
/// configuration (from HOME) and the broker (`/run/user/UID`, the runtime directory
/// `XDG_RUNTIME_DIR` named). The machine's `/run/user/UID` is made in a mount namespace
/// of the agent's own, bound to the test's private runtime directory.
#[test]
fn under_github_actions_gate_still_finds_its_settings_and_the_broker() {
    assert!(
        running_as_root(),
        "this test mounts /run/user in a namespace of its own, which needs root"
    );
    let a = Agent::new("allow = [\"touch ci-allowed\"]\n");
    let runtime = private_runtime(&a.env);
    let broker = Broker::start(&a.env, &runtime);
    let model = a.model(&["touch ci-allowed", "touch ci-approved"]);
    let namespace = "r=$1; shift; mount -t tmpfs -o mode=0755 tmpfs /run/user && \
                     mkdir -m 0700 /run/user/$(id -u) && mount --bind \"$r\" /run/user/$(id -u) && exec \"$@\"";
    let launcher: Vec<OsString> = vec![
        require_program("unshare").into(),
        "--mount".into(),
        "--propagation".into(),
        "private".into(),
        "--".into(),
        "sh".into(),
        "-c".into(),
        namespace.into(),
        "sh".into(),
        runtime.clone().into(),
    ];
    let agent = a
        .launched(&model, &launcher)
        .env("GITHUB_SHA", "0123456789abcdef")
        .env("XDG_RUNTIME_DIR", &runtime)
        .spawn();
    let id = broker.wait_for("touch ci-approved", &agent);
    broker.tool(&["approve", &id]).assert_code(0);
    let out = agent.wait();
    out.assert_code(0);
    let results = model.tool_results();
    assert_eq!(results.len(), 2, "{results:?}\n{}", out.report());
    assert!(a.env.file("ci-allowed").exists(), "{results:?}");
    assert!(a.env.file("ci-approved").exists(), "{results:?}");
}

/// Under GitHub Actions `GATE_*` reach gate only when Gemini CLI's
/// `security.environmentVariableRedaction.allowed` lists them (docs/integrations.md).
#[test]
fn under_github_actions_gate_variables_pass_only_when_gemini_is_told_to_keep_them() {
    let a = Agent::new("");
    let elsewhere = a
        .env
        .write("ci-gate.toml", "allow = [\"touch via-gate-config\"]\n");
    let settings = a.env.home.join(".gemini/settings.json");
    for keep in [false, true] {
        let mut value: Value = serde_json::from_str(GEMINI_SETTINGS).unwrap();
        if keep {
            value["security"]["environmentVariableRedaction"] = json!({"allowed": ["GATE_CONFIG"]});
        }
        fs::write(&settings, value.to_string()).unwrap();
        let model = a.model(&["touch via-gate-config"]);
        let out = a
            .command(&model)
            .env("GITHUB_SHA", "0123456789abcdef")
            .env("GATE_CONFIG", &elsewhere)
            .run();
        out.assert_code(0);
        let results = model.tool_results();
        assert_eq!(results.len(), 1, "{results:?}\n{}", out.report());
        assert_eq!(
            a.env.file("via-gate-config").exists(),
            keep,
            "keep {keep}: {results:?}"
        );
        if !keep {
            assert!(results[0].contains("gate: refused"), "{results:?}");
        }
    }
}

/// The user's own `!command` in Gemini CLI's interactive shell mode comes through the
/// shim too, in a wrapper of its own (`{ … }` and a `pwd` file); an allowed one runs.
#[test]
fn the_users_own_bang_command_is_judged_by_itself() {
    let a = Agent::new("allow = [\"touch bang-ran\"]\n");
    let model = a.model(&[]);
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into());
    let script = a.env.write(
        "interactive.sh",
        format!(
            "cd '{}' && exec env -i HOME='{}' PATH='{}:{path}' GEMINI_API_KEY=dummy-key \
             GOOGLE_GEMINI_BASE_URL='{}' GEMINI_CLI_TRUST_WORKSPACE=true TERM=xterm-256color \
             '{}'\n",
            a.env.work.display(),
            a.env.home.display(),
            a.shims.display(),
            model.base_url(),
            a.gemini.display()
        ),
    );
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    let term = Term::start(&a.env, &script);
    term.wait_for("Gemini CLI's prompt", |s| s.contains("Type your message"));
    term.type_text("!");
    term.wait_for("shell mode", |s| s.contains("shell mode"));
    term.type_text("touch bang-ran");
    term.wait_text("! touch bang-ran");
    // Keys that arrive with the text are taken as a paste, Enter included.
    thread::sleep(Duration::from_millis(500));
    term.keys(&["Enter"]);
    let end = Instant::now() + AGENT_DEADLINE;
    while !a.env.file("bang-ran").exists() {
        assert!(
            Instant::now() < end,
            "the user's !command did not run; the screen:\n{}",
            term.screen()
        );
        thread::sleep(Duration::from_millis(50));
    }
    let records = a.audit();
    let last = records.last().expect("an audit record");
    assert_eq!(last["command"], "touch bang-ran");
    assert_eq!(last["wrapper"], "gemini-cli/user-shell");
    // Gemini CLI removes its per-call directory once it shows the result.
    term.wait_for("the command's result", |s| {
        s.contains("Shell Command touch bang-ran")
    });
    term.keys(&["Escape"]);
    thread::sleep(Duration::from_millis(500));
}
