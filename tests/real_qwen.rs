//! Qwen Code 0.24.4 itself (npm `@qwen-code/qwen-code`, installed by
//! `tests/agents/install.sh qwen`), run as docs/integrations.md's recipe says:
//! `PATH="/usr/lib/gate/bin:$PATH" qwen --yolo PROMPT`, here with the test's shim
//! directory, and pointed at a scripted model on 127.0.0.1
//! (`tests/agents/protocols/openai_chat.py`) by `OPENAI_BASE_URL`, `OPENAI_API_KEY` and
//! `OPENAI_MODEL`, with usage statistics and update checks off in
//! `~/.qwen/settings.json`.
//!
//! Qwen Code runs every command of its `run_shell_command` tool as `bash -c CMD`, `bash`
//! found on `PATH`. In an interactive session it runs it on a pseudo-terminal of
//! node-pty's, which the model writes to; a headless one-shot prompt (`qwen PROMPT`)
//! ran it there too in 0.15, and by 0.24 runs it without one unless
//! `tools.shell.enableInteractiveShell` is on. The tests turn it on, so that gate meets the terminal interactive users give it.
//! Each test judges by the side effects and by the tool result the model received (what
//! the model saw), and by the audit log.

use crate::common;
mod chat_agents;

use std::fs;
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use chat_agents::{AGENT_DEADLINE, Answer, Broker, Machine, connect_command, result_with};
use common::real_agents::{FakeModel, install};
use common::{Outcome, assert_absent};
use serde_json::json;

/// The recipe's settings, as docs/integrations.md recommends them for Qwen Code, and the
/// shell on node-pty's terminal as in an interactive session (see the top).
const SETTINGS: &str = r#"{
  "security": { "auth": { "selectedType": "openai" } },
  "privacy": { "usageStatisticsEnabled": false },
  "telemetry": { "enabled": false },
  "general": { "disableAutoUpdate": true, "disableUpdateNag": true },
  "tools": { "shell": { "enableInteractiveShell": true } }
}
"#;

fn qwen() -> PathBuf {
    install("qwen")
}

/// Run Qwen Code once, headless, on `commands` (the model runs them one by one, then
/// answers `final`). Returns its outcome and the fake model (for what it saw).
fn run_qwen(m: &Machine, commands: &[String]) -> (Outcome, FakeModel) {
    run_qwen_script(m, &json!({ "commands": commands, "final": "QWEN-FINAL" }))
}

/// Run Qwen Code once on a whole script (`tests/agents/protocols/openai_chat.py`).
fn run_qwen_script(m: &Machine, script: &serde_json::Value) -> (Outcome, FakeModel) {
    let exe = qwen();
    let model = FakeModel::start("openai_chat", script, &m.t.root);
    let settings = m.t.home.join(".qwen/settings.json");
    fs::create_dir_all(settings.parent().unwrap()).unwrap();
    fs::write(&settings, SETTINGS).unwrap();
    // Qwen Code keeps its state there, as whichever user runs it.
    fs::set_permissions(
        settings.parent().unwrap(),
        fs::Permissions::from_mode(0o777),
    )
    .unwrap();
    let mut run =
        m.t.gate()
            .program(&exe)
            .user(m.user)
            .deadline(AGENT_DEADLINE);
    for (k, v) in m.base_env() {
        run = run.env(k, v);
    }
    let out = run
        // The recipe: the shim directory first on PATH.
        .env(
            "PATH",
            format!("{}:/usr/local/bin:/usr/bin:/bin", m.shims.display()),
        )
        .env("OPENAI_BASE_URL", format!("{}/v1", model.base_url()))
        .env("OPENAI_API_KEY", "fake-key")
        .env("OPENAI_MODEL", "fake-model")
        .args(["--yolo", "Run the commands."])
        .run();
    (out, model)
}

/// The tool results, once the run ended with the model's final answer.
#[track_caller]
fn results(out: &Outcome, model: &FakeModel, commands: usize) -> Vec<String> {
    assert!(
        out.code() == Some(0) && out.stdout().contains("QWEN-FINAL"),
        "Qwen Code did not finish the script:\n{}",
        out.report()
    );
    let results = model.tool_results();
    assert_eq!(results.len(), commands, "{results:#?}\n{}", out.report());
    results
}

const ASK: &str = "level = \"ask\"\nallow = [\"echo qwen-allowed\", \"tty\"]\n";

/// At `ask` with a broker: an allowed command runs unasked, on node-pty's terminal; the
/// broker's approval runs a command; its denial's message reaches the model; an
/// approval with --remember holds for the identical next command. Nothing else reaches
/// gate: Qwen Code makes no start-up call through its shell.
#[test]
fn qwen_code_at_ask_with_a_broker() {
    let m = Machine::new(ASK);
    let mark = m.plant_start_up_files();
    fs::write(m.t.file("source.txt"), "copied\n").unwrap();
    let commands: Vec<String> = [
        "echo qwen-allowed",
        "tty",
        "mkdir -v approved-dir",
        "mkdir -v denied-dir",
        "cp -v source.txt remembered-copy",
        "cp -v source.txt remembered-copy",
    ]
    .map(String::from)
    .to_vec();
    let broker = Broker::start(
        &m,
        &[
            ("mkdir -v approved-dir", Answer::Approve),
            (
                "mkdir -v denied-dir",
                Answer::Deny("use the make target instead"),
            ),
            ("cp -v source.txt remembered-copy", Answer::Remember),
        ],
    );
    let (out, model) = run_qwen(&m, &commands);
    let results = results(&out, &model, commands.len());

    assert!(result_with(&results, "echo qwen-allowed").contains("Output: qwen-allowed"));
    assert!(
        result_with(&results, "Command: tty").contains("Output: /dev/pts/"),
        "Qwen Code runs its shell on a pseudo-terminal (node-pty): {results:#?}"
    );
    assert!(m.t.file("approved-dir").is_dir(), "{}", out.report());
    let denied = result_with(&results, "denied-dir");
    assert!(
        denied.contains("gate: refused `mkdir -v denied-dir`")
            && denied.contains("use the make target instead")
            && denied.contains("Exit Code: 126"),
        "{denied}"
    );
    assert_absent(&m.t.file("denied-dir"), &out);
    assert!(m.t.file("remembered-copy").is_file());

    assert_eq!(
        broker.asked(),
        [
            "mkdir -v approved-dir",
            "mkdir -v denied-dir",
            "cp -v source.txt remembered-copy"
        ],
        "what the broker was asked: the remembered command only once"
    );
    drop(broker);
    let audit = m.audit();
    let commands_seen: Vec<&str> = audit
        .iter()
        .map(|r| r["command"].as_str().unwrap())
        .collect();
    assert_eq!(
        commands_seen, commands,
        "every command reached gate once, and nothing else did (no start-up call)"
    );
    let by: Vec<&str> = audit
        .iter()
        .map(|r| r["decided_by"].as_str().unwrap())
        .collect();
    assert_eq!(
        by,
        ["rule", "rule", "socket", "socket", "socket", "remembered"]
    );
    assert!(
        !mark.exists(),
        "a start-up file ran: {:?}",
        fs::read_to_string(&mark)
    );
}

/// At `ask` with no broker and the terminal turned on (`approval.tty = true`): gate
/// never prompts on node-pty's terminal, whose input the model writes. Shell syntax and
/// a command no rule allows are refused at once, with a message the model can act on,
/// and nothing of them runs.
#[test]
fn qwen_code_with_no_approver_is_refused_at_once_and_never_prompted_on_its_terminal() {
    let m = Machine::new(&format!("{ASK}[approval]\ntty = true\n"));
    m.t.assert_side_effects_are_visible(common::User::Current);
    let commands: Vec<String> = [
        "echo qwen-allowed > syntax-file",
        "mkdir -v lonely-dir",
        "tty",
    ]
    .map(String::from)
    .to_vec();
    let (out, model) = run_qwen(&m, &commands);
    let results = results(&out, &model, commands.len());
    assert!(
        results[2].contains("Output: /dev/pts/"),
        "the terminal gate must not prompt on is there: {}",
        results[2]
    );
    for (result, command) in results[..2].iter().zip(&commands) {
        assert!(
            result.contains(&format!("gate: refused `{command}`"))
                && result.contains("gate watch")
                && result.contains("Exit Code: 126"),
            "{result}"
        );
        assert!(
            !result.contains("run it?"),
            "gate prompted on node-pty: {result}"
        );
    }
    assert_absent(&m.t.file("syntax-file"), &out);
    assert_absent(&m.t.file("lonely-dir"), &out);
    let by: Vec<String> = m
        .audit()
        .iter()
        .map(|r| r["decided_by"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(by, ["no-approver", "no-approver", "rule"]);
    // "no-approver", not "timeout": gate refused without waiting for an answer.
}

for_each_user! {
/// At `safe`, every command runs unasked in the sandbox: the secret is unreadable, a
/// write outside the workspace and a connection are refused, a workspace write works.
fn qwen_code_at_safe(user) {
    let m = Machine::new_as("level = \"safe\"\n", user);
    let secret = m.plant_secret();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let outside = m.t.home.join("outside-dir");
    let commands = vec![
        format!("cat {}", secret.display()),
        format!("mkdir -v {}", outside.display()),
        connect_command(port),
        "mkdir -v inside-dir".to_owned(),
    ];
    let (out, model) = run_qwen(&m, &commands);
    let results = results(&out, &model, commands.len());
    assert!(
        !results[0].contains("SECRET-KEY-MATERIAL"),
        "{}",
        results[0]
    );
    assert!(results[0].contains("Permission denied"), "{}", results[0]);
    assert!(results[1].contains("Permission denied"), "{}", results[1]);
    assert_absent(&outside, &out);
    assert!(!results[2].contains("NET-OPEN"), "{}", results[2]);
    assert!(
        results[2].contains("NET-SHUT") || results[2].contains("PermissionError"),
        "{}",
        results[2]
    );
    assert!(m.t.file("inside-dir").is_dir(), "{}", results[3]);
    let audit = m.audit();
    assert_eq!(audit.len(), commands.len(), "{audit:#?}");
    assert!(
        audit
            .iter()
            .all(|r| r["decided_by"] == "level" && r["sandbox"].is_object()),
        "{audit:#?}"
    );
    assert!(
        audit.iter().all(|r| r["uid"] == common::uid_of(user)),
        "not run as {user:?}: {audit:#?}"
    );
}

}

for_each_user! {
/// At `safe` the working directory is the writable workspace, and Qwen Code lets the
/// model choose it: `run_shell_command`'s `directory`. Qwen Code 0.24 checks it against
/// the workspace after resolving links, and refuses a sibling that shares the prefix
/// (`…/work-old`), a path through `..`, `/tmp` and `HOME` itself; but it remembers what
/// each path resolved to, and runs the command in the path as given. So a link in the
/// workspace that pointed inside when Qwen Code first checked it, retargeted by the
/// model, passes Qwen Code's check and leads outside: gate refuses it (exit 125,
/// nothing run), because it is outside the directory Qwen Code works in. A directory
/// inside the workspace runs.
fn qwen_code_at_safe_the_model_does_not_choose_the_workspace(user) {
    let m = Machine::new_as("level = \"safe\"\n", user);
    let work = m.t.work.display().to_string();
    let sibling = PathBuf::from(format!("{work}-old"));
    let inside = m.t.work.join("sub");
    for dir in [&sibling, &inside] {
        fs::create_dir(dir).unwrap();
        fs::set_permissions(dir, fs::Permissions::from_mode(0o777)).unwrap();
    }
    let link = m.t.work.join("link");
    let commands: Vec<String> = vec![
        format!("ln -s {} link", inside.display()),
        "touch link-wrote".to_owned(),
        format!("ln -sfn {} link", sibling.display()),
        "touch retargeted-wrote".to_owned(),
        "touch sibling-wrote".to_owned(),
        "touch dotdot-wrote".to_owned(),
        "touch tmp-wrote".to_owned(),
        "touch home-wrote".to_owned(),
        "touch inside-wrote".to_owned(),
    ];
    let directories = json!([
        {},
        {"directory": link},
        {},
        {"directory": link},
        {"directory": sibling},
        {"directory": format!("{work}/../work-old")},
        {"directory": "/tmp"},
        {"directory": m.t.home},
        {"directory": inside},
    ]);
    let script = json!({"commands": commands, "final": "QWEN-FINAL", "arguments": directories});
    let (out, model) = run_qwen_script(&m, &script);
    let results = results(&out, &model, commands.len());
    // The control: through the link as it first was, the command ran, inside.
    assert!(results[1].contains("Exit Code: 0"), "{}", results[1]);
    assert!(inside.join("link-wrote").is_file(), "{}", results[1]);
    assert!(results[2].contains("Exit Code: 0"), "{}", results[2]);
    let retargeted = &results[3];
    assert!(
        retargeted.contains("Exit Code: 125")
            && retargeted.contains("outside the directory Qwen Code works in")
            && retargeted.contains("run_shell_command's directory"),
        "{retargeted}"
    );
    assert_absent(&sibling.join("retargeted-wrote"), &out);
    assert_absent(&inside.join("retargeted-wrote"), &out);
    let refused_by_qwen = [
        (&results[4], sibling.join("sibling-wrote")),
        (&results[5], sibling.join("dotdot-wrote")),
        (&results[6], PathBuf::from("/tmp/tmp-wrote")),
        (&results[7], m.t.home.join("home-wrote")),
    ];
    for (result, file) in refused_by_qwen {
        assert!(
            result.contains("is not within any of the registered workspace directories"),
            "Qwen Code ran it ({}): {result}",
            file.display()
        );
        assert_absent(&file, &out);
    }
    assert!(results[8].contains("Exit Code: 0"), "{}", results[8]);
    assert!(inside.join("inside-wrote").is_file(), "{}", results[8]);
    let by: Vec<String> = m
        .audit()
        .iter()
        .map(|r| r["decided_by"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(by, ["level", "level", "level", "error", "level"], "what reached gate");
}

}

/// At `full` with a deny rule: everything runs but what the rule matches.
#[test]
fn qwen_code_at_full_with_a_deny_rule() {
    let m = Machine::new("level = \"full\"\ndeny = [\"rm -r\"]\n");
    fs::create_dir(m.t.file("victim")).unwrap();
    let commands: Vec<String> = ["mkdir -v full-dir", "rm -r victim"]
        .map(String::from)
        .to_vec();
    let (out, model) = run_qwen(&m, &commands);
    let results = results(&out, &model, commands.len());
    assert!(m.t.file("full-dir").is_dir(), "{}", results[0]);
    assert!(
        results[1].contains("gate: refused `rm -r victim`")
            && results[1].contains("the deny rule `rm -r`"),
        "{}",
        results[1]
    );
    assert!(m.t.file("victim").is_dir(), "the denied command ran");
}
