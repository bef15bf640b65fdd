//! Ask rules end to end: a command an ask rule matches waits for a person at every level
//! that runs commands, whatever allows it, and a deny rule still wins.
//!
//! Every "runs nothing" check looks for a side effect (the file F the command would
//! create) after a control run that shows the same command, as the same user, does
//! create F without the ask rule. With no approver (no socket, no terminal), a request
//! that must be asked is refused at once (126); the attack tests rely on that, and run as
//! the current user and as an unprivileged one. The tests with an approver run one in
//! this process, on a socket gate is pointed at.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::thread::{self, JoinHandle};

use serde_json::Value;

use common::*;

const NO_CONFIG: [&str; 4] = ["--no-config", "--audit-log", "off", "--no-tty"];

/// The levels that run commands, each with what makes `touch F` run there unasked.
fn levels_that_run(touch_allowed: bool) -> Vec<Vec<&'static str>> {
    let mut ask = vec!["--level", "ask", "--allow", "touch"];
    if !touch_allowed {
        ask.truncate(2);
    }
    vec![vec!["--level", "full"], vec!["--level", "safe"], ask]
}

/// Run `command` under `setting` twice: without the ask rule (it must create F: the
/// control) and with `--ask touch` (it must be refused for want of an approver, naming
/// the ask rule, with F never created). Returns what went wrong, if anything.
fn ask_rule_problem(
    env: &TestEnv,
    user: User,
    setting: &[&str],
    command: &[&str],
) -> Option<String> {
    let f = env.file("F");
    let _ = std::fs::remove_file(&f);
    let control = env
        .gate()
        .user(user)
        .args(NO_CONFIG)
        .args(setting)
        .args(command)
        .run();
    if !f.exists() {
        return Some(format!(
            "control: {command:?} under {setting:?} does not create F without the ask rule\n{}",
            control.report()
        ));
    }
    std::fs::remove_file(&f).unwrap();
    let out = env
        .gate()
        .user(user)
        .args(NO_CONFIG)
        .args(setting)
        .args(["--ask", "touch"])
        .args(command)
        .run();
    let stderr = out.stderr();
    if f.exists() {
        let _ = std::fs::remove_file(&f);
        return Some(format!(
            "{command:?} under {setting:?} ran touch F despite --ask touch\n{}",
            out.report()
        ));
    }
    let names_rule = stderr.contains("the ask rule `touch` (from --ask)")
        || stderr.contains("checked against the ask rules");
    if out.code() != Some(REFUSED)
        || !stderr.starts_with("gate: refused")
        || stderr.matches('\n').count() != 1
        || !names_rule
        || !stderr.contains("no approver")
    {
        return Some(format!(
            "{command:?} under {setting:?} was not refused for want of an approver, naming \
             the ask rule\n{}",
            out.report()
        ));
    }
    None
}

#[track_caller]
fn assert_all_asked(env: &TestEnv, user: User, settings: &[Vec<&str>], commands: &[Vec<String>]) {
    let mut problems = Vec::new();
    for setting in settings {
        for command in commands {
            let command: Vec<&str> = command.iter().map(String::as_str).collect();
            problems.extend(ask_rule_problem(env, user, setting, &command));
        }
    }
    assert!(
        problems.is_empty(),
        "{} cases got past `--ask touch`:\n\n{}",
        problems.len(),
        problems.join("\n\n")
    );
}

fn c(text: &str) -> Vec<String> {
    vec!["-c".to_owned(), text.to_owned()]
}

for_each_user! {
    fn an_ask_rule_asks_at_full_at_safe_and_at_ask_over_an_allow_rule(user) {
        // /var/tmp: the sandbox at `safe` hides the fake home's secrets, which must not
        // sit in /tmp (see TestEnv::new_in).
        let env = TestEnv::new_in("/var/tmp");
        env.assert_side_effects_are_visible(user);
        assert_all_asked(
            &env,
            user,
            &levels_that_run(true),
            &[
                c("touch F"),
                vec!["--".into(), "touch".into(), "F".into()],
            ],
        );
    }

    // The ways deny rules are attacked (tests/policy.rs, tests/deny_oracle.rs): quoting,
    // escapes, the environment, wrappers, nested shells, substitutions, compound
    // commands. Each is a control first: without the ask rule it creates F.
    fn the_ways_around_a_deny_rule_do_not_get_around_an_ask_rule(user) {
        let env = TestEnv::new();
        env.assert_side_effects_are_visible(user);
        let touch = require_program("touch");
        for program in ["bash", "dash", "env", "nohup", "timeout", "xargs", "nice"] {
            require_program(program);
        }
        let commands: Vec<Vec<String>> = [
            "true; touch F",
            "true && touch F",
            "false || touch F",
            "echo x | touch F",
            "echo $(touch F)",
            "echo `touch F`",
            "FOO=1 touch F",
            "\"touch\" F",
            "t'ouc'h F",
            "t\"o\"uch F",
            "\\touch F",
            "env touch F",
            "env -i PATH=/usr/bin:/bin touch F",
            "env -S 'touch F'",
            "nohup touch F >/dev/null 2>&1",
            "timeout 5 touch F",
            "nice -n 1 touch F",
            "command touch F",
            "exec touch F",
            "eval 'touch F'",
            "eval \"tou\"\"ch F\"",
            "sh -c 'touch F'",
            "bash -c 'touch F'",
            "bash -lc \"touch F\"",
            "dash -c 'sh -c \"touch F\"'",
            "echo F | xargs touch",
            "if true; then touch F; fi",
            "for i in 1; do touch F; done",
            "{ touch F; }",
            "(touch F)",
            "f() { touch F; }; f",
            "T=touch; $T F",
            "set -- touch F; \"$@\"",
        ]
        .iter()
        .map(|t| c(t))
        .chain([
            c(&format!("{} F", touch.display())),
            vec!["--".into(), "env".into(), "touch".into(), "F".into()],
            vec!["--".into(), "sh".into(), "-c".into(), "touch F".into()],
        ])
        .collect();
        assert_all_asked(&env, user, &[vec!["--level", "full"]], &commands);
        // bash's own quoting, under bash.
        let bash = require_program("bash").display().to_string();
        let bash_only: Vec<Vec<String>> = ["$'\\x74ouch' F", "$'t\\157uch' F", "touch F &>/dev/null"]
            .iter()
            .map(|t| c(t))
            .collect();
        assert_all_asked(&env, user, &[vec!["--level", "full", "--shell", &bash]], &bash_only);
    }

    // At `ask`, allow rules, compound mode and the read-only preset allow what they
    // cover unasked; a part an ask rule matches is asked about all the same.
    fn a_compound_command_with_a_part_an_ask_rule_matches_asks(user) {
        let env = TestEnv::new();
        env.assert_side_effects_are_visible(user);
        let settings = vec![vec![
            "--level", "ask", "--compound", "--readonly", "--allow", "true", "--allow", "touch",
        ]];
        assert_all_asked(
            &env,
            user,
            &settings,
            &[c("true && touch F"), c("true; touch F"), c("ls | touch F"), c("true || true; touch F")],
        );
    }

    fn a_deny_rule_beats_an_ask_rule(user) {
        let env = TestEnv::new();
        env.assert_side_effects_are_visible(user);
        let f = env.file("F");
        for setting in levels_that_run(true) {
            let out = env
                .gate()
                .user(user)
                .args(NO_CONFIG)
                .args(&setting)
                .args(["--ask", "touch", "--deny", "touch", "-c", "true; touch F"])
                .run();
            assert_absent(&f, &out);
            out.assert_refused()
                .assert_stderr_contains("the deny rule `touch` (from --deny) matches `touch F`")
                .assert_stderr_contains("Do not try to run it another way");
        }
    }

    // A shell with no command text (here, reading its commands from standard input)
    // cannot be checked against the ask rules: at `full` and `safe` it is asked about.
    fn a_shell_reading_its_commands_from_stdin_is_asked_about_when_there_are_ask_rules(user) {
        let env = TestEnv::new_in("/var/tmp");
        env.assert_side_effects_are_visible(user);
        let f = env.file("F");
        for level in ["full", "safe"] {
            env.gate()
                .user(user)
                .args(NO_CONFIG)
                .args(["--level", level])
                .stdin("touch F\n")
                .run()
                .assert_code(0);
            assert!(f.exists(), "control: at {level} the shell reads and runs `touch F`");
            std::fs::remove_file(&f).unwrap();
            let out = env
                .gate()
                .user(user)
                .args(NO_CONFIG)
                .args(["--level", level, "--ask", "git push"])
                .stdin("touch F\n")
                .run();
            assert_absent(&f, &out);
            out.assert_refused()
                .assert_stderr_contains("cannot be checked against the ask rules")
                .assert_stderr_contains("no approver");
        }
    }
}

#[test]
fn an_ask_rule_from_a_configuration_file_is_named_by_file_and_line() {
    let env = TestEnv::new();
    let config =
        env.write_user_config("level = \"full\"\nask = [\n  \"npm publish\",\n  \"touch\",\n]\n");
    let f = env.file("F");
    let out = env
        .gate()
        .args(["--audit-log", "off", "--no-tty", "-c", "touch F"])
        .run();
    assert_absent(&f, &out);
    out.assert_refused().assert_stderr_contains(&format!(
        "the ask rule `touch` (from {}:4) matches `touch F`",
        config.display()
    ));
}

#[test]
fn gate_check_shows_the_ask_rule_that_matched() {
    let env = TestEnv::new();
    let out = env
        .gate()
        .args(NO_CONFIG)
        .args([
            "check", "--level", "full", "--allow", "git", "--ask", "git push",
        ])
        .args(["-c", "git status && git push origin main"])
        .run();
    // Nobody could be asked here: a run would refuse it (status 2).
    out.assert_code(2)
        .assert_stdout_contains("decision: ask\n")
        .assert_stdout_contains(
            "reason:   the ask rule `git push` (from --ask) matches `git push origin main`",
        );
    let out = env
        .gate()
        .args(NO_CONFIG)
        .args(["check", "--json", "--level", "full", "--ask", "git push"])
        .args(["-c", "git status && git push origin main"])
        .run();
    let json: Value = serde_json::from_str(&out.stdout()).unwrap();
    assert_eq!(json["decision"], "ask", "{json}");
    assert_eq!(json["decided_by"], "ask-rule", "{json}");
    assert_eq!(json["rule"], "git push", "{json}");
    assert_eq!(json["rule_origin"], "--ask", "{json}");
    assert_eq!(json["matched"], "git push origin main", "{json}");
}

// With someone to ask, `gate check` at `safe` says the approved command runs inside the
// sandbox.
#[test]
fn gate_check_at_safe_says_an_approved_ask_runs_inside_the_sandbox() {
    let env = TestEnv::new_in("/var/tmp");
    let dir = env.root.join("approver");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let socket = dir.join("approver.sock");
    // Listening is enough: `gate check` asks nobody anything.
    let _listener = UnixListener::bind(&socket).unwrap();
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = env
        .gate()
        .args(NO_CONFIG)
        .arg("--socket")
        .arg(&socket)
        .args([
            "check", "--level", "safe", "--ask", "git push", "-c", "git push",
        ])
        .run();
    out.assert_code(1).assert_stdout_contains(&format!(
        "outcome:  gate would ask the approver on {} and run it only if approved (denied or \
         unanswered: exit 126), inside the sandbox",
        socket.display()
    ));
}

/// An approver on a socket in this process: it answers each request with `answer` and
/// hands back the requests it saw.
struct Approver {
    path: PathBuf,
    thread: JoinHandle<Vec<Value>>,
}

impl Approver {
    fn start(dir: &Path, requests: usize, answer: &'static str) -> Approver {
        // gate trusts only a private socket in a private directory.
        let dir = dir.join("approver");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        let path = dir.join("approver.sock");
        let listener = UnixListener::bind(&path).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let thread = thread::spawn(move || {
            let mut seen = Vec::new();
            for _ in 0..requests {
                let (stream, _) = listener.accept().unwrap();
                let mut line = String::new();
                BufReader::new(&stream).read_line(&mut line).unwrap();
                let request: Value = serde_json::from_str(&line).unwrap();
                let reply = serde_json::json!({
                    "type": "decision",
                    "call_id": request["call_id"],
                    "decision": answer,
                });
                (&stream)
                    .write_all(format!("{reply}\n").as_bytes())
                    .unwrap();
                seen.push(request);
            }
            seen
        });
        Approver { path, thread }
    }

    fn requests(self) -> Vec<Value> {
        self.thread.join().unwrap()
    }
}

#[test]
fn an_approved_ask_runs_and_the_request_cannot_be_remembered() {
    let env = TestEnv::new();
    let approver = Approver::start(&env.root, 2, "approve");
    let audit = env.root.join("audit.jsonl");
    for setting in [
        &["--level", "full"][..],
        &["--level", "ask", "--allow", "touch"],
    ] {
        let f = env.file("F");
        let _ = std::fs::remove_file(&f);
        env.gate()
            .args(["--no-config", "--no-tty", "--audit-log"])
            .arg(&audit)
            .arg("--socket")
            .arg(&approver.path)
            .args(setting)
            .args(["--ask", "touch", "-c", "touch F"])
            .run()
            .assert_code(0);
        assert!(f.exists(), "{setting:?}: the approved command ran");
    }
    for request in approver.requests() {
        assert_eq!(request["command"], "touch F", "{request}");
        // A remembered approval never stands in for an ask rule.
        assert_eq!(request["remember_supported"], false, "{request}");
    }
    let records = audit_records(&audit);
    assert_eq!(records.len(), 2);
    for record in records {
        assert_eq!(record["decision"], "allow", "{record}");
        assert_eq!(record["decided_by"], "socket", "{record}");
        assert_eq!(record["rule"], "touch", "{record}");
        assert_eq!(record["rule_origin"], "--ask", "{record}");
    }
}

#[test]
fn an_ask_denied_by_the_approver_runs_nothing() {
    let env = TestEnv::new();
    let approver = Approver::start(&env.root, 1, "deny");
    let f = env.file("F");
    let out = env
        .gate()
        .args(NO_CONFIG)
        .arg("--socket")
        .arg(&approver.path)
        .args(["--level", "full", "--ask", "touch", "-c", "touch F"])
        .run();
    assert_absent(&f, &out);
    out.assert_refused()
        .assert_stderr_contains("the approver denied it");
    approver.requests();
}

// At `safe` what a person approves runs inside the sandbox all the same: it can write in
// the workspace, not in the home directory (which it can at `full`: the control).
#[test]
fn at_safe_an_approved_ask_runs_inside_the_sandbox() {
    let env = TestEnv::new_in("/var/tmp");
    let approver = Approver::start(&env.root, 2, "approve");
    let f = env.file("F");
    let g = env.home.join("G");
    let script = "touch F; touch \"$HOME/G\"";
    env.gate()
        .args(NO_CONFIG)
        .arg("--socket")
        .arg(&approver.path)
        .args(["--level", "full", "--ask", "touch", "-c", script])
        .run()
        .assert_code(0);
    assert!(
        g.exists() && f.exists(),
        "control: approved at full, both are written"
    );
    std::fs::remove_file(&g).unwrap();
    std::fs::remove_file(&f).unwrap();
    let out = env
        .gate()
        .args(NO_CONFIG)
        .arg("--socket")
        .arg(&approver.path)
        .args(["--level", "safe", "--ask", "touch", "-c", script])
        .run();
    assert!(f.exists(), "the approved command ran\n{}", out.report());
    assert_absent(&g, &out);
    assert_ne!(
        out.code(),
        Some(0),
        "touch $HOME/G failed in the sandbox\n{}",
        out.report()
    );
    let requests = approver.requests();
    assert_eq!(requests[1]["level"], "safe");
}

// Only gate's own approvers say that a yes lets a command out of the sandbox: a host
// program's socket would show the command alone, so gate does not ask it.
#[test]
fn an_unsandboxed_rule_never_asks_a_host_programs_approver() {
    let env = TestEnv::new_in("/var/tmp");
    let approver = Approver::start(&env.root, 1, "approve");
    let f = env.file("F");
    let ask = |rule: &[&str]| {
        env.gate()
            .args(NO_CONFIG)
            .arg("--socket")
            .arg(&approver.path)
            .args(["--level", "safe", "--ask", "touch"])
            .args(rule)
            .args(["-c", "touch F"])
            .run()
    };
    // Control: an ask rule at `safe` asks this approver, and the approved command runs
    // inside the sandbox.
    ask(&[]).assert_code(0);
    assert!(f.exists());
    std::fs::remove_file(&f).unwrap();
    let out = ask(&["--unsandboxed", "touch"]);
    assert_absent(&f, &out);
    out.assert_refused()
        .assert_stderr_contains("is not gate's broker, which alone tells the person");
    // The approver saw one request: the control's.
    let requests = approver.requests();
    assert_eq!(requests.len(), 1);
    assert!(
        requests[0].get("leaves_sandbox").is_none(),
        "{}",
        requests[0]
    );
}
