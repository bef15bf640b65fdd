//! Aider 0.86.2 itself (PyPI `aider-chat`, installed by `tests/agents/install.sh aider`),
//! run as docs/integrations.md's recipe says, pointed at a scripted model on 127.0.0.1
//! (`tests/agents/protocols/openai_chat.py`) with `--openai-api-base`, `--model
//! openai/fake-model` and a model metadata file (so that it fetches no price list), with
//! analytics, update checks and git off.
//!
//! Aider has no tool calls: the model proposes a command in a ```bash block, Aider asks
//! "Run shell command?", runs it, asks "Add command output to the chat?", and sends
//! `Output from CMD` with the output in the next request (aider/coders/base_coder.py,
//! `handle_shell_commands`). How it runs the command depends on its stdin
//! (aider/run_cmd.py):
//!
//! - on a terminal: `pexpect.spawn($SHELL, ["-i", "-c", CMD])`, on a pseudo-terminal of
//!   its own. These tests drive Aider on a tmux terminal, answer its questions there as a
//!   person would, and judge by the side effects, the audit log and what the model got.
//! - without one (`aider --message` in a script, CI): `subprocess.Popen(CMD, shell=True)`,
//!   which is `/bin/sh -c CMD` by its absolute path, whatever `SHELL` says. gate never
//!   sees those commands; the recipe confines the whole of Aider at `safe` instead.

use crate::common;
mod chat_agents;

use std::collections::BTreeMap;
use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use chat_agents::{AGENT_DEADLINE, Answer, Broker, Machine, connect_command, result_with};
use common::real_agents::{FakeModel, install};
use common::tmux::Term;
use common::{GATE, Outcome, assert_absent};
use serde_json::json;

const FINAL: &str = "AIDER-FINAL";

fn aider() -> PathBuf {
    install("aider")
}

/// The model's metadata, so that Aider does not fetch litellm's price list.
fn metadata(m: &Machine) -> PathBuf {
    m.t.write(
        "model-metadata.json",
        json!({"openai/fake-model": {
            "max_input_tokens": 100000, "max_output_tokens": 4096,
            "input_cost_per_token": 0, "output_cost_per_token": 0,
            "litellm_provider": "openai", "mode": "chat"
        }})
        .to_string(),
    )
}

/// Aider's options for the fake model, with analytics, update checks and git off.
/// `--edit-format diff` is the format Aider picks for the models it knows; with the
/// `whole` format it gives an unknown model, it reads no ```bash block as a command.
fn aider_args(m: &Machine, model: &FakeModel) -> Vec<String> {
    [
        "--openai-api-base",
        &format!("{}/v1", model.base_url()),
        "--openai-api-key",
        "fake-key",
        "--model",
        "openai/fake-model",
        "--model-metadata-file",
        &metadata(m).display().to_string(),
        "--edit-format",
        "diff",
        "--no-git",
        "--no-auto-commits",
        "--analytics-disable",
        "--no-check-update",
        "--no-show-release-notes",
        "--no-show-model-warnings",
    ]
    .map(String::from)
    .to_vec()
}

fn script(commands: &[String]) -> serde_json::Value {
    json!({ "commands": commands, "final": FINAL })
}

fn shell_quote(words: &[String]) -> String {
    words
        .iter()
        .map(|w| shell_words::quote(w).into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Run Aider on a terminal (a tmux window) as the recipe says, `SHELL` the `bash` shim,
/// answer yes to each of its questions and send "go on" after each command, until the
/// model's final answer; then `/exit`. Returns the screen.
/// One Aider on a terminal at a time: Aider's capture of a command's terminal ends
/// early when the machine is busy (two of them at once on two cores, besides the
/// commands), cutting the error lines the tests read.
static ON_A_TERMINAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn on_a_terminal(m: &Machine, model: &FakeModel) -> String {
    let _one_at_a_time = ON_A_TERMINAL.lock().unwrap_or_else(|e| e.into_inner());
    let exe = aider();
    let mut env: Vec<String> = m
        .base_env()
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    // The recipe.
    env.push(format!("SHELL={}", m.bash_shim().display()));
    let mut line = vec!["env".to_owned(), "-i".to_owned()];
    line.extend(env);
    line.push(exe.display().to_string());
    line.extend(aider_args(m, model));
    // A plain prompt and plain output: what the test reads off the screen.
    line.extend(["--no-pretty".to_owned(), "--no-fancy-input".to_owned()]);
    let driver = m.t.write(
        "run-aider.sh",
        format!(
            "cd {}\n{}\necho \"AIDER-EXIT $?\"\nsleep 600\n",
            shell_words::quote(&m.t.work.display().to_string()),
            shell_quote(&line)
        ),
    );
    let term = Term::start_as(&m.t, &driver, m.user);
    let end = Instant::now() + AGENT_DEADLINE;
    // Counted on the whole screen: what has been answered so far.
    let (mut typed, mut runs, mut adds) = (0, 0, 0);
    loop {
        let now = term.screen();
        assert!(
            Instant::now() < end,
            "Aider did not finish in {AGENT_DEADLINE:?}; the screen:\n{now}"
        );
        assert!(!now.contains("AIDER-EXIT"), "Aider ended early:\n{now}");
        if now.matches("Run shell command?").count() > runs {
            runs += 1;
            term.type_text("y");
            term.keys(&["Enter"]);
        } else if now.matches("Add command output to the chat?").count() > adds {
            adds += 1;
            term.type_text("y");
            term.keys(&["Enter"]);
        } else if now.matches("diff> ").count() > typed {
            // Aider waits for the next message. After a command whose output pexpect
            // lost (Aider's `interact()` stops when it sees the shell gone before it
            // read what the shell wrote: a few percent of fast commands, with or
            // without gate), there was no output to add, and the model, which saw no
            // result, asks for the same command again.
            typed += 1;
            let message = if typed == 1 {
                "Run the commands."
            } else if now.contains(FINAL) {
                "/exit"
            } else {
                "go on"
            };
            term.type_text(message);
            term.keys(&["Enter"]);
            if message == "/exit" {
                return term.wait_text("AIDER-EXIT 0");
            }
        }
        thread::sleep(Duration::from_millis(100));
    }
}

/// The audit records by command, in order, and each command's `decided_by` values.
fn decisions(m: &Machine) -> BTreeMap<String, Vec<String>> {
    let mut by = BTreeMap::<String, Vec<String>>::new();
    for record in m.audit() {
        by.entry(record["command"].as_str().unwrap().to_owned())
            .or_default()
            .push(record["decided_by"].as_str().unwrap().to_owned());
    }
    by
}

/// Each command reached gate, nothing else did, and every record of a command has the
/// decision `expect` gives for it (a command pexpect lost the output of runs again).
#[track_caller]
fn assert_decisions(m: &Machine, expect: &[(&str, &str)]) {
    let by = decisions(m);
    let commands: Vec<&str> = by.keys().map(String::as_str).collect();
    let mut wanted: Vec<&str> = expect.iter().map(|(c, _)| *c).collect();
    wanted.sort();
    wanted.dedup();
    assert_eq!(commands, wanted, "what reached gate: {by:#?}");
    for (command, decided_by) in expect {
        assert!(
            by[*command].iter().all(|d| d == decided_by),
            "{command}: {by:#?}"
        );
    }
}

/// The tool results of a run on a terminal, one per command.
#[track_caller]
fn results(model: &FakeModel, commands: usize, screen: &str) -> Vec<String> {
    let results = model.tool_results();
    assert_eq!(
        results.len(),
        commands,
        "{results:#?}\nthe screen:\n{screen}"
    );
    results
}

const ASK: &str = "level = \"ask\"\nallow = [\"echo aider-allowed\", \"tty\"]\n";

/// On a terminal at `ask` with a broker: an allowed command runs unasked, on Aider's
/// pseudo-terminal, in an interactive shell (`$-` has `i`) that read no start-up file;
/// the broker's approval runs a command, its denial's message reaches the model, and an
/// approval with --remember holds for the identical next command. Nothing else reaches
/// gate: Aider makes no start-up call through `$SHELL`.
#[test]
fn aider_on_a_terminal_at_ask_with_a_broker() {
    let m = Machine::new(&format!("{ASK}[approval]\ntty = true\n"));
    let mark = m.plant_start_up_files();
    fs::write(m.t.file("source.txt"), "copied\n").unwrap();
    let commands: Vec<String> = [
        "echo aider-allowed",
        "tty",
        "echo flags=$-",
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
            ("echo flags=$-", Answer::Approve),
            ("mkdir -v approved-dir", Answer::Approve),
            (
                "mkdir -v denied-dir",
                Answer::Deny("use the make target instead"),
            ),
            ("cp -v source.txt remembered-copy", Answer::Remember),
        ],
    );
    let model = FakeModel::start("openai_chat", &script(&commands), &m.t.root);
    let screen = on_a_terminal(&m, &model);
    let results = results(&model, commands.len(), &screen);

    assert!(results[0].contains("\naider-allowed"), "{results:#?}");
    assert!(
        results[1].contains("/dev/pts/"),
        "the command runs on Aider's pseudo-terminal: {results:#?}"
    );
    let flags = results[2]
        .lines()
        .find(|l| l.starts_with("flags="))
        .unwrap_or_default();
    assert!(
        flags.contains('i'),
        "Aider's `-i` reaches the real shell: {results:#?}"
    );
    assert!(m.t.file("approved-dir").is_dir(), "{screen}");
    let denied = result_with(&results, "denied-dir");
    assert!(
        denied.contains("gate: refused `mkdir -v denied-dir`")
            && denied.contains("use the make target instead"),
        "{denied}"
    );
    assert!(!m.t.file("denied-dir").exists(), "the denied command ran");
    assert!(m.t.file("remembered-copy").is_file());
    let asked = broker.asked();
    let mut first_asks = asked.clone();
    first_asks.dedup();
    assert_eq!(
        first_asks,
        [
            "echo flags=$-",
            "mkdir -v approved-dir",
            "mkdir -v denied-dir",
            "cp -v source.txt remembered-copy"
        ],
        "what the broker was asked"
    );
    let remembered = "cp -v source.txt remembered-copy";
    assert_eq!(
        asked.iter().filter(|c| *c == remembered).count(),
        1,
        "the remembered command was asked about again: {asked:?}"
    );
    drop(broker);
    let by = decisions(&m);
    assert_eq!(by[remembered][0], "socket", "{by:#?}");
    assert!(
        by[remembered].len() >= 2 && by[remembered][1..].iter().all(|d| d == "remembered"),
        "{by:#?}"
    );
    let others: Vec<(&str, &str)> = commands
        .iter()
        .filter(|c| *c != remembered)
        .map(|c| {
            let by = if c == "echo aider-allowed" || c == "tty" {
                "rule"
            } else {
                "socket"
            };
            (c.as_str(), by)
        })
        .collect();
    let mut all = others.clone();
    all.push((remembered, "remembered-or-socket"));
    let names: Vec<&str> = by.keys().map(String::as_str).collect();
    let mut wanted: Vec<&str> = all.iter().map(|(c, _)| *c).collect();
    wanted.sort();
    assert_eq!(
        names, wanted,
        "what reached gate (no start-up call): {by:#?}"
    );
    for (command, decided_by) in others {
        assert!(
            by[command].iter().all(|d| d == decided_by),
            "{command}: {by:#?}"
        );
    }
    assert!(
        !mark.exists(),
        "a start-up file ran: {:?}",
        fs::read_to_string(&mark)
    );
}

/// On a terminal at `ask` with no broker and `approval.tty = true`: gate never prompts
/// on Aider's pseudo-terminal (what is typed there reaches the command through Aider,
/// and its output goes to the model). Shell syntax and a command no rule allows are
/// refused at once, with a message the model can act on, and nothing of them runs.
#[test]
fn aider_on_a_terminal_with_no_approver_is_refused_at_once_and_never_prompted() {
    let m = Machine::new(&format!("{ASK}[approval]\ntty = true\n"));
    m.t.assert_side_effects_are_visible(common::User::Current);
    let commands: Vec<String> = ["echo aider-allowed > syntax-file", "mkdir -v lonely-dir"]
        .map(String::from)
        .to_vec();
    let model = FakeModel::start("openai_chat", &script(&commands), &m.t.root);
    let screen = on_a_terminal(&m, &model);
    let results = results(&model, commands.len(), &screen);
    for (result, command) in results.iter().zip(&commands) {
        assert!(
            result.contains(&format!("gate: refused `{command}`")) && result.contains("gate watch"),
            "{result}"
        );
    }
    assert!(
        !screen.contains("run it?"),
        "gate prompted on Aider's terminal:\n{screen}"
    );
    assert!(!m.t.file("syntax-file").exists());
    assert!(!m.t.file("lonely-dir").exists());
    assert_decisions(
        &m,
        &[(&commands[0], "no-approver"), (&commands[1], "no-approver")],
    );
    // "no-approver", not "timeout": gate refused without waiting for an answer.
}

for_each_user! {
/// On a terminal at `safe`: each command runs unasked in the sandbox.
fn aider_on_a_terminal_at_safe(user) {
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
    let model = FakeModel::start("openai_chat", &script(&commands), &m.t.root);
    let screen = on_a_terminal(&m, &model);
    let results = results(&model, commands.len(), &screen);
    assert!(
        !results[0].contains("SECRET-KEY-MATERIAL"),
        "{}",
        results[0]
    );
    // The refusal is the program's own error line. coreutils writes it in pieces
    // (`mkdir: `, then the rest), and under load Aider's capture of the command's
    // terminal has ended after the first piece (seen twice in full runs of the suite
    // on this 2-core machine, never alone): the piece that names the program is
    // enough to show the command failed; what it could not do is checked on the file
    // system below and by the secret's absence above.
    // (Trimmed: the capture may end right after the colon, its space cut with the rest.)
    for (result, program) in [(&results[0], "cat: "), (&results[1], "mkdir: ")] {
        assert!(
            result.contains("Permission denied") || result.contains(program.trim_end()),
            "{result}"
        );
    }
    assert!(!outside.exists(), "the sandbox let it write outside");
    assert!(!results[2].contains("NET-OPEN"), "{}", results[2]);
    assert!(
        results[2].contains("NET-SHUT") || results[2].contains("PermissionError"),
        "{}",
        results[2]
    );
    assert!(m.t.file("inside-dir").is_dir(), "{}", results[3]);
    let expect: Vec<(&str, &str)> = commands.iter().map(|c| (c.as_str(), "level")).collect();
    assert_decisions(&m, &expect);
    let audit = m.audit();
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

/// On a terminal at `full` with a deny rule.
#[test]
fn aider_on_a_terminal_at_full_with_a_deny_rule() {
    let m = Machine::new("level = \"full\"\ndeny = [\"rm -r\"]\n");
    fs::create_dir(m.t.file("victim")).unwrap();
    let commands: Vec<String> = ["mkdir -v full-dir", "rm -r victim"]
        .map(String::from)
        .to_vec();
    let model = FakeModel::start("openai_chat", &script(&commands), &m.t.root);
    let screen = on_a_terminal(&m, &model);
    let results = results(&model, commands.len(), &screen);
    assert!(m.t.file("full-dir").is_dir(), "{}", results[0]);
    assert!(
        results[1].contains("gate: refused `rm -r victim`")
            && results[1].contains("the deny rule `rm -r`"),
        "{}",
        results[1]
    );
    assert!(m.t.file("victim").is_dir(), "the denied command ran");
}

// ---------------------------------------------------------------------------------------
// Without a terminal.

/// `aider --message` with stdin not a terminal, as a script or CI runs it, `args`
/// before Aider's own; `SHELL` as given.
fn without_a_terminal(
    m: &Machine,
    model: &FakeModel,
    before: &[String],
    shell: Option<&Path>,
    extra: &[&str],
) -> Outcome {
    let exe = aider();
    let (program, mut args): (PathBuf, Vec<String>) = match before.split_first() {
        Some((first, rest)) => (PathBuf::from(first), rest.to_vec()),
        None => (exe.clone(), Vec::new()),
    };
    if !before.is_empty() {
        args.push(exe.display().to_string());
    }
    args.extend(aider_args(m, model));
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    args.extend(["--message".to_owned(), "Run the commands.".to_owned()]);
    let mut run = m.t.gate().program(program).deadline(AGENT_DEADLINE);
    for (k, v) in m.base_env() {
        run = run.env(k, v);
    }
    if let Some(shell) = shell {
        run = run.env("SHELL", shell);
    }
    run.args(args).run()
}

/// Without a terminal Aider runs its commands with `/bin/sh -c`, not `$SHELL`: the
/// recipe's first line says so. Pinned here so that the day Aider changes, this fails
/// and the recipe is revisited. And with `--yes-always` it runs none of the commands it
/// suggests (it answers "no" to "Run shell command?", which needs an explicit yes).
#[test]
fn aider_without_a_terminal_runs_bin_sh_whatever_shell_says() {
    let m = Machine::new("level = \"deny\"\n");
    let commands = vec!["mkdir -v made-by-bin-sh".to_owned()];
    let model = FakeModel::start("openai_chat", &script(&commands), &m.t.root);
    let out = without_a_terminal(&m, &model, &[], Some(&m.bash_shim()), &[]);
    out.assert_code(0);
    assert!(
        m.t.file("made-by-bin-sh").is_dir(),
        "Aider no longer runs /bin/sh without a terminal: revisit the recipe\n{}",
        out.report()
    );
    assert_eq!(
        m.audited_commands(),
        Vec::<String>::new(),
        "gate was not asked"
    );
    fs::remove_dir(m.t.file("made-by-bin-sh")).unwrap();

    let model = FakeModel::start("openai_chat", &script(&commands), &m.t.root);
    let out = without_a_terminal(&m, &model, &[], Some(&m.bash_shim()), &["--yes-always"]);
    out.assert_code(0);
    assert!(
        out.stdout().contains("mkdir -v made-by-bin-sh"),
        "the model's command was not proposed:\n{}",
        out.report()
    );
    assert_absent(&m.t.file("made-by-bin-sh"), &out);
}

/// Without a terminal, the recipe runs the whole of Aider inside gate's sandbox:
/// `RES_OPTIONS=use-vc gate --level safe --net-connect 443 --net-connect 53 -- aider …`,
/// here with the fake model's port for 443, and no 53 (127.0.0.1 needs no name
/// server). Then the `/bin/sh` it starts is
/// confined too: the model's command cannot read the secret or write outside the
/// workspace, and the workspace write works.
#[test]
fn aider_without_a_terminal_is_confined_whole_at_safe() {
    let m = Machine::new("level = \"ask\"\n");
    let secret = m.plant_secret();
    let outside = m.t.home.join("outside-dir");
    let commands = vec![format!(
        "mkdir -v inside-dir; mkdir -v {}; cat {}",
        outside.display(),
        secret.display()
    )];
    let model = FakeModel::start("openai_chat", &script(&commands), &m.t.root);
    let recipe = [
        GATE.to_owned(),
        "--level".to_owned(),
        "safe".to_owned(),
        "--net-connect".to_owned(),
        model.port.to_string(),
        "--".to_owned(),
    ];
    let out = without_a_terminal(&m, &model, &recipe, None, &[]);
    out.assert_code(0);
    let stdout = out.stdout();
    assert!(
        m.t.file("inside-dir").is_dir(),
        "the command did not run:\n{}",
        out.report()
    );
    assert_absent(&outside, &out);
    assert!(!stdout.contains("SECRET-KEY-MATERIAL"), "{stdout}");
    assert!(stdout.contains("Permission denied"), "{stdout}");
    let audit = m.audit();
    assert_eq!(audit.len(), 1, "one record, for Aider itself: {audit:#?}");
    assert!(audit[0]["sandbox"].is_object(), "{audit:#?}");
}
