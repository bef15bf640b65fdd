//! `gate watch`, the interactive approver, driven through a real terminal (a tmux
//! window) against a real broker (`gate serve`) and real requesters (gate at level
//! `ask` pointed at the broker's socket), or a raw requester connection where the test
//! needs to see the decision line itself.
//!
//! The window runs a bash script that records the terminal's settings (`stty -g`)
//! before and after `gate watch`, so that every test that ends it also checks that the
//! terminal was restored. tmux is required: a missing tmux fails these tests.

use crate::common;

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use common::{DEADLINE, GATE, GATE_ERROR, Running, TestEnv};

use common::tmux::{Term, unique};

/// What `gate watch` shows, waited for.
impl Term {
    /// Wait until `text` appears `n` times.
    #[track_caller]
    fn wait_count(&self, text: &str, n: usize) -> String {
        self.wait_for(&format!("{n} × {text:?}"), |s| {
            s.matches(text).count() >= n
        })
    }

    /// Wait until gate watch shows its idle line last: no prompt is open.
    #[track_caller]
    fn wait_idle(&self) -> String {
        self.wait_for("the idle line, last", |s| {
            s.lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .is_some_and(|l| l.starts_with("waiting for requests"))
        })
    }
}

// ---------------------------------------------------------------------------------------
// A broker, an approver window, requesters.

/// A broker of the test's own, and `gate watch` in a terminal answering for it.
struct Setup {
    env: TestEnv,
    socket: PathBuf,
    broker: Option<Running>,
    term: Option<Term>,
    /// `--no-config`, or nothing: the broker, `gate watch` and the requesters read the
    /// user's configuration (and its always-allow file).
    config: &'static [&'static str],
}

impl Setup {
    /// Start the broker and wait until it listens.
    fn new() -> Setup {
        Setup::start(&["--no-config"])
    }

    /// [`Setup::new`], everything reading the user's configuration.
    fn reading_config() -> Setup {
        Setup::start(&[])
    }

    fn start(config: &'static [&'static str]) -> Setup {
        Setup::start_with(config, config)
    }

    /// The broker with `broker` (its configuration options), the rest with `config`.
    fn start_with(broker: &[&str], config: &'static [&'static str]) -> Setup {
        let env = TestEnv::new();
        let socket = env.root.join("broker").join("sock");
        let broker = env
            .gate()
            .args(broker)
            .args(["serve", "--socket"])
            .arg(&socket)
            .deadline(Duration::from_secs(600))
            .spawn();
        let end = Instant::now() + DEADLINE;
        let token = socket.with_file_name("sock.token");
        while !(socket.exists() && fs::metadata(&token).is_ok_and(|m| m.len() > 0)) {
            assert!(
                Instant::now() < end,
                "the broker did not start listening on {} within {DEADLINE:?}",
                socket.display()
            );
            thread::sleep(Duration::from_millis(10));
        }
        Setup {
            env,
            socket,
            broker: Some(broker),
            term: None,
            config,
        }
    }

    /// Start `gate watch` in a terminal and wait until it is ready.
    fn watch(&mut self) -> &Term {
        self.watch_with_path_first(None)
    }

    /// [`Setup::watch`], with `first` ahead of the usual directories on PATH.
    fn watch_with_path_first(&mut self, first: Option<&Path>) -> &Term {
        let first = first
            .map(|dir| format!("{}:", dir.display()))
            .unwrap_or_default();
        let script = format!(
            r#"set -u
export PATH={first}/usr/local/bin:/usr/bin:/bin
export HOME='{home}' XDG_STATE_HOME='{state}' XDG_CONFIG_HOME='{config}'
export XDG_RUNTIME_DIR='{runtime}' LC_ALL=C
unset GATE_SOCKET GATE_LEVEL GATE_TIMEOUT GATE_SESSION GATE_LOG
cd '{work}'
before=$(stty -g)
bash -c 'echo $$ > watch.pid; exec "$@"' watch '{gate}' {config_args} watch --socket '{socket}' 2>watch-stderr.txt
echo "EXIT=$?"
if [ "$(stty -g)" = "$before" ]; then echo "TTY=restored"; else echo "TTY=changed"; fi
echo "ALL-DONE"
exec sleep 600
"#,
            home = self.env.home.display(),
            state = self.env.state.display(),
            config = self.env.config.display(),
            runtime = self.env.runtime.display(),
            work = self.env.work.display(),
            gate = GATE,
            socket = self.socket.display(),
            config_args = self.config.join(" "),
        );
        let path = self.env.write(&unique("watch.sh"), script);
        let term = Term::start(&self.env, &path);
        term.wait_text("gate watch: answering the requests");
        self.term = Some(term);
        self.term.as_ref().unwrap()
    }

    fn term(&self) -> &Term {
        self.term.as_ref().expect("gate watch was started")
    }

    /// A requester: gate at level ask, asking the broker about `command`.
    fn request(&self, command: &str, session: &str) -> Running {
        self.env
            .gate()
            .args(self.config)
            .args(["--audit-log", "off", "--level", "ask"])
            .args(["--timeout", "60", "--session", session, "--socket"])
            .arg(&self.socket)
            .args(["-c", command])
            .spawn()
    }

    /// `gate watch`'s pid.
    fn watch_pid(&self) -> nix::unistd::Pid {
        let text = fs::read_to_string(self.env.file("watch.pid")).unwrap();
        nix::unistd::Pid::from_raw(text.trim().parse().unwrap())
    }

    fn file(&self, name: &str) -> PathBuf {
        self.env.file(name)
    }

    /// Wait for the window's script to end: the screen. The terminal must be restored.
    #[track_caller]
    fn finished(&self, code: i32) -> String {
        let screen = self.term().wait_text("ALL-DONE");
        assert!(
            screen.contains(&format!("EXIT={code}\n")),
            "expected gate watch to exit with {code}; the screen:\n{screen}"
        );
        assert!(
            screen.contains("TTY=restored"),
            "the terminal settings were not restored; the screen:\n{screen}"
        );
        screen
    }

    fn watch_stderr(&self) -> String {
        fs::read_to_string(self.file("watch-stderr.txt")).unwrap_or_default()
    }

    /// `gate pending --json`, parsed.
    fn pending(&self) -> Vec<serde_json::Value> {
        let out = self
            .env
            .gate()
            .args(["--no-config", "pending", "--json", "--socket"])
            .arg(&self.socket)
            .run();
        out.assert_code(0);
        match serde_json::from_str(&out.stdout()).unwrap() {
            serde_json::Value::Array(items) => items,
            other => panic!("gate pending --json printed {other}"),
        }
    }

    /// Stop the broker with SIGTERM and wait for it.
    fn stop_broker(&mut self) {
        if let Some(broker) = self.broker.take() {
            terminate(broker.pid);
            broker.wait();
        }
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        self.term.take();
        if let Some(broker) = self.broker.take() {
            terminate(broker.pid);
            if !thread::panicking() {
                broker.wait();
            }
        }
    }
}

fn terminate(pid: u32) {
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGTERM,
    );
}

/// The id of the request prompted for last ("gate watch: request ID from pid …").
#[track_caller]
fn prompted_id(screen: &str) -> String {
    let marker = "gate watch: request ";
    let line = screen
        .lines()
        .rev()
        .find(|l| l.starts_with(marker) && l.contains(" from pid "))
        .unwrap_or_else(|| panic!("no prompt on the screen:\n{screen}"));
    line[marker.len()..].split(' ').next().unwrap().to_owned()
}

const PROMPT: &str = "run it? [y/a/n]";

fn exists(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok()
}

// ---------------------------------------------------------------------------------------
// Answers.

#[test]
fn y_approves_once() {
    let mut s = Setup::new();
    s.watch();
    let requester = s.request("touch ran", "s1");
    let screen = s.term().wait_text(PROMPT);
    assert!(screen.contains("command:   touch ran"), "{screen}");
    assert!(
        screen.contains(&format!("directory: {}", s.env.work.display())),
        "{screen}"
    );
    assert!(screen.contains("session:   s1"), "{screen}");
    s.term().keys(&["y"]);
    requester.wait().assert_code(0);
    assert!(exists(&s.file("ran")));
    s.term().wait_text("approved once: answered");
    // Back to waiting; Ctrl-C quits with the terminal restored.
    s.term().wait_idle();
    s.term().keys(&["C-c"]);
    s.finished(0);
    assert_eq!(s.watch_stderr(), "");
}

#[test]
fn a_approves_for_the_session_and_the_broker_remembers() {
    let mut s = Setup::new();
    s.watch();
    let first = s.request("touch ran", "s1");
    s.term().wait_text(PROMPT);
    s.term().keys(&["a"]);
    first.wait().assert_code(0);
    s.term().wait_text("approved for the session: answered");
    fs::remove_file(s.file("ran")).unwrap();
    // The same command in the same session: answered by the broker, no prompt.
    s.request("touch ran", "s1").wait().assert_code(0);
    assert!(exists(&s.file("ran")));
    // Another session is asked again.
    let other = s.request("touch ran", "s2");
    let screen = s.term().wait_count(PROMPT, 2);
    assert!(screen.contains("session:   s2"), "{screen}");
    assert_eq!(
        screen.matches("session:   s1").count(),
        1,
        "the remembered command was asked about again:\n{screen}"
    );
    s.term().keys(&["Enter"]);
    other.wait().assert_refused();
}

#[test]
fn l_always_allows_the_exact_command_in_every_session() {
    let mut s = Setup::reading_config();
    s.watch();
    let always = "run it? [y/a/l/n]";
    let first = s.request("touch ran", "s1");
    let screen = s.term().wait_text(always);
    let file = s.env.config.join("gate/always.toml");
    assert!(
        screen.contains("l: always allow this exact command (a lasting rule in"),
        "{screen}"
    );
    s.term().keys(&["l"]);
    first.wait().assert_code(0);
    s.term().wait_text("always allowed from now on: answered");
    let text = fs::read_to_string(&file).unwrap();
    assert!(
        text.contains("rule = \"touch ran\"\nexact = true\n"),
        "{text}"
    );
    fs::remove_file(s.file("ran")).unwrap();
    // Another session: nobody is asked.
    s.request("touch ran", "s2").wait().assert_code(0);
    assert!(exists(&s.file("ran")));
    // A longer command is asked; a compound one is not offered `l` at all.
    let longer = s.request("touch ran more", "s2");
    s.term().wait_count(always, 2);
    s.term().keys(&["Enter"]);
    longer.wait().assert_refused();
    let compound = s.request("touch x; touch y", "s2");
    let screen = s.term().wait_text(PROMPT);
    let shown = &screen[screen.rfind("touch x; touch y").unwrap()..];
    assert!(!shown.contains("l: always allow"), "{screen}");
    s.term().keys(&["l"]);
    s.term().keys(&["Enter"]);
    compound.wait().assert_refused();
    assert!(!exists(&s.file("x")));
    assert_eq!(fs::read_to_string(&file).unwrap(), text);
}

#[test]
fn an_always_the_broker_refuses_is_said_and_the_request_asked_again() {
    // The broker reads no user file, so it keeps no always-allow file; gate watch and
    // the requester do, so `l` is offered, and the broker refuses it.
    let mut s = Setup::start_with(&["--no-config"], &[]);
    s.watch();
    let first = s.request("touch ran", "s1");
    s.term().wait_text("run it? [y/a/l/n]");
    s.term().keys(&["l"]);
    let screen = s.term().wait_text("it was started with --config");
    assert!(
        screen.contains("gate watch: request 1: not always allowed: this broker reads no"),
        "{screen}"
    );
    // Asked again, without `l`; still open, so `y` runs it.
    s.term().wait_text(PROMPT);
    s.term().keys(&["y"]);
    first.wait().assert_code(0);
    s.term().wait_text("approved once: answered");
    assert!(!exists(&s.env.config.join("gate/always.toml")));
}

#[test]
fn n_denies_with_the_reason_typed() {
    let mut s = Setup::new();
    s.watch();
    let requester = s.request("touch ran", "s1");
    s.term().wait_text(PROMPT);
    s.term().keys(&["n"]);
    s.term().wait_text("reason: ");
    s.term().type_text("use make clenn");
    s.term().keys(&["BSpace", "BSpace", "Up"]);
    s.term().type_text("an");
    s.term().wait_text("reason: use make clean");
    s.term().keys(&["Enter"]);
    let out = requester.wait();
    out.assert_refused();
    assert!(out.stderr().contains("use make clean"), "{}", out.report());
    assert!(!exists(&s.file("ran")));
    s.term()
        .wait_text("denied, with the reason given: answered");
}

#[test]
fn enter_denies() {
    let mut s = Setup::new();
    s.watch();
    let requester = s.request("touch ran", "s1");
    let id = prompted_id(&s.term().wait_text(PROMPT));
    s.term().keys(&["x", "Enter"]);
    requester.wait().assert_refused();
    assert!(!exists(&s.file("ran")));
    s.term()
        .wait_text(&format!("request {id} denied: answered"));
}

#[test]
fn a_is_not_accepted_when_remembering_is_not_supported() {
    let mut s = Setup::new();
    s.watch();
    // A raw requester, so that the test sees the decision line itself.
    let mut conn = UnixStream::connect(&s.socket).unwrap();
    conn.set_read_timeout(Some(DEADLINE)).unwrap();
    let request = serde_json::json!({
        "type": "approval_request", "version": 1, "call_id": "raw-1",
        "session_id": "raw", "kind": "command", "command": "make deploy",
        "work_dir": "/srv/app", "level": "ask", "timeout_seconds": 60,
        "remember_supported": false, "pid": 4242,
    });
    conn.write_all(format!("{request}\n").as_bytes()).unwrap();
    let screen = s.term().wait_text("run it? [y/n]");
    assert!(screen.contains("from pid 4242"), "{screen}");
    assert!(!screen.contains("a: allow"), "{screen}");
    s.term().keys(&["a", "A", "y"]);
    let mut line = String::new();
    BufReader::new(&conn).read_line(&mut line).unwrap();
    let decision: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(decision["type"], "decision", "{line}");
    assert_eq!(decision["call_id"], "raw-1", "{line}");
    assert_eq!(decision["decision"], "approve", "{line}");
    assert_eq!(decision["remember"], false, "{line}");
}

/// `gate pending` shows a command as `gate watch` does: bidi controls, zero-width
/// characters and other controls escaped by the same function, so that a listed command
/// cannot read differently from what will run.
#[test]
fn gate_pending_escapes_what_watch_escapes() {
    let mut s = Setup::new();
    s.watch();
    let command = "echo \u{202e}txt.exe\u{200b} \u{1b}[31mred";
    let shown = gate::approval::tty::escape(command).0;
    assert_eq!(shown, "echo \\u{202e}txt.exe\\u{200b} \\x1b[31mred");
    let requester = s.request(command, "s1");
    let screen = s.term().wait_text(PROMPT);
    let id = prompted_id(&screen);
    assert!(
        screen.contains(&format!("command:   {shown}")),
        "watch shows {shown:?}:\n{screen}"
    );
    let out = s
        .env
        .gate()
        .args(["--no-config", "pending", "--socket"])
        .arg(&s.socket)
        .run();
    out.assert_code(0);
    let listing = out.stdout();
    let row = listing
        .lines()
        .find(|l| l.starts_with(&format!("{id} ")))
        .unwrap_or_else(|| panic!("request {id} is not listed:\n{listing}"));
    assert!(
        row.ends_with(&format!("  {shown}")),
        "gate pending shows it otherwise than watch ({shown:?}):\n{row:?}"
    );
    assert!(
        !listing
            .chars()
            .any(|c| c != '\n' && gate::approval::tty::needs_escape(c)),
        "{listing:?}"
    );
    s.term().keys(&["Enter"]);
    requester.wait().assert_refused();
}

// ---------------------------------------------------------------------------------------
// Several requests, requests settled elsewhere.

#[test]
fn a_second_request_waits_its_turn() {
    let mut s = Setup::new();
    s.watch();
    let first = s.request("touch first", "s1");
    s.term().wait_text("command:   touch first");
    // Start typing a reason for the first; the second arrives meanwhile.
    s.term().keys(&["n"]);
    s.term().type_text("not the ");
    s.term().wait_text("reason: not the ");
    let second = s.request("touch second", "s2");
    s.term().wait_text("arrived; 1 waiting after this one");
    // The half-typed reason is still there, and typing goes on.
    s.term().type_text("first");
    s.term().wait_text("reason: not the first");
    let screen = s.term().screen();
    assert!(
        !screen.contains("command:   touch second"),
        "the second request was shown before the first was answered:\n{screen}"
    );
    s.term().keys(&["Enter"]);
    let out = first.wait();
    out.assert_refused();
    assert!(out.stderr().contains("not the first"), "{}", out.report());
    // Then the second.
    s.term().wait_text("command:   touch second");
    s.term().keys(&["y"]);
    second.wait().assert_code(0);
    assert!(exists(&s.file("second")));
    assert!(!exists(&s.file("first")));
}

/// A `notify-send` in `bin` that writes down what it was asked to show, into `notified`.
fn fake_notify_send(bin: &Path, notified: &Path) -> PathBuf {
    fs::create_dir_all(bin).unwrap();
    let fake = bin.join("notify-send");
    fs::write(
        &fake,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}.part' && mv '{0}.part' '{0}'\n",
            notified.display()
        ),
    )
    .unwrap();
    fs::set_permissions(
        &fake,
        <fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o755),
    )
    .unwrap();
    fake
}

#[test]
fn a_new_request_rings_the_bell_and_sets_the_title() {
    let mut s = Setup::new();
    s.watch();
    let raw = s.env.root.join("raw-output");
    let (ok, text) = s.term().run(&[
        "pipe-pane",
        "-o",
        "-t",
        "t",
        &format!("cat >> '{}'", raw.display()),
    ]);
    assert!(ok, "tmux pipe-pane: {text}");
    let title = || {
        let (ok, text) = s
            .term()
            .run(&["display-message", "-p", "-t", "t", "#{pane_title}"]);
        assert!(ok, "tmux display-message: {text}");
        text.trim().to_owned()
    };
    // Control: before any request, gate watch leaves the title alone.
    assert!(!title().starts_with("gate watch"), "{}", title());

    let requester = s.request("touch ran \x1b]0;evil\x07", "s1");
    s.term().wait_text(PROMPT);
    assert_eq!(title(), "gate watch: 1 request waits");
    let end = Instant::now() + DEADLINE;
    let seen = loop {
        let seen = fs::read(&raw).unwrap_or_default();
        if seen.contains(&b'\x07') || Instant::now() > end {
            break seen;
        }
        thread::sleep(Duration::from_millis(20));
    };
    let seen = String::from_utf8_lossy(&seen);
    assert!(
        seen.contains("\x07\x1b]0;gate watch: 1 request waits\x07"),
        "no bell and title in the terminal's output: {seen:?}"
    );
    // The command's own escape sequence reached the terminal escaped, never raw.
    assert!(!seen.contains("\x1b]0;evil"), "{seen:?}");

    s.term().keys(&["Enter"]);
    requester.wait().assert_refused();
    s.term().wait_idle();
    let end = Instant::now() + DEADLINE;
    while title() != "gate watch: no request waits" {
        assert!(Instant::now() < end, "the title still says {}", title());
        thread::sleep(Duration::from_millis(20));
    }
    s.term().keys(&["C-c"]);
    s.finished(0);
    assert_eq!(s.watch_stderr(), "");
}

#[test]
#[ignore = "root tier: cargo test --lib --test all -- --ignored, as root"]
fn a_new_request_starts_a_notify_send_that_root_installed() {
    common::needs_root(
        "this test needs root: gate watch runs only a notify-send that root installed, and \
         only root can make one here (the refusals are tested for every user in \
         a_notify_send_the_model_could_have_written_is_never_run)",
    );
    let mut s = Setup::new();
    let bin = s.env.root.join("bin");
    let notified = s.env.root.join("notified.txt");
    fake_notify_send(&bin, &notified);
    s.watch_with_path_first(Some(&bin));
    let requester = s.request("touch <b>ran</b> & \x1b]0;evil\x07", "s1");
    s.term().wait_text(PROMPT);
    let end = Instant::now() + DEADLINE;
    while !notified.exists() {
        assert!(Instant::now() < end, "notify-send was not run");
        thread::sleep(Duration::from_millis(20));
    }
    // Escaped for the terminal, then for notification markup.
    let args = fs::read_to_string(&notified).unwrap();
    assert_eq!(
        args,
        "--app-name=gate\n--\ngate: a command waits for approval\n\
         request 1: touch &lt;b&gt;ran&lt;/b&gt; &amp; \\x1b]0;evil\\x07\n"
    );
    s.term().keys(&["Enter"]);
    requester.wait().assert_refused();
    s.term().wait_idle();
    s.term().keys(&["C-c"]);
    s.finished(0);
    assert_eq!(s.watch_stderr(), "");
}

#[test]
fn a_notify_send_the_model_could_have_written_is_never_run() {
    // The user's own (as root: another user's) notify-send first on PATH, or root's in a
    // directory anyone can write: the model could have put either there, and gate watch
    // would run it unsandboxed. The control, a notify-send root installed, is
    // a_new_request_starts_a_notify_send_that_root_installed.
    for case in ["owned by a user", "in a directory others can write"] {
        let mut s = Setup::new();
        let bin = s.env.root.join("bin");
        let notified = s.env.root.join("notified.txt");
        let fake = fake_notify_send(&bin, &notified);
        match case {
            "owned by a user" if common::running_as_root() => {
                std::os::unix::fs::chown(&fake, Some(common::NOBODY), Some(common::NOBODY)).unwrap()
            }
            "owned by a user" => {}
            _ => fs::set_permissions(
                &bin,
                <fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o777),
            )
            .unwrap(),
        }
        s.watch_with_path_first(Some(&bin));
        let requester = s.request("touch ran", "s1");
        s.term().wait_text(PROMPT);
        // Long enough for a started notify-send to have written its file.
        thread::sleep(Duration::from_millis(1500));
        assert!(
            !notified.exists(),
            "{case}: gate watch ran {}",
            fake.display()
        );
        s.term().keys(&["Enter"]);
        requester.wait().assert_refused();
        s.term().wait_idle();
        s.term().keys(&["C-c"]);
        s.finished(0);
        assert_eq!(s.watch_stderr(), "", "{case}");
    }
}

#[test]
fn waiting_requests_are_counted_in_the_title() {
    let mut s = Setup::new();
    // Two requests before the watch starts: it gets both at once.
    let first = s.request("touch first", "s1");
    let second = s.request("touch second", "s1");
    let end = Instant::now() + DEADLINE;
    while s.pending().len() < 2 {
        assert!(
            Instant::now() < end,
            "the requests did not reach the broker"
        );
        thread::sleep(Duration::from_millis(20));
    }
    s.watch();
    let screen = s.term().wait_text(PROMPT);
    assert!(screen.contains("; 1 more waiting"), "{screen}");
    s.term().keys(&["Enter"]);
    s.term().wait_count(PROMPT, 2);
    s.term().keys(&["Enter"]);
    first.wait().assert_refused();
    second.wait().assert_refused();
}

#[test]
fn a_request_settled_elsewhere_ends_its_prompt() {
    let mut s = Setup::new();
    s.watch();
    let requester = s.request("touch ran", "s1");
    let screen = s.term().wait_text(PROMPT);
    let id = prompted_id(&screen);
    s.term().keys(&["n"]);
    s.term().type_text("half a reas");
    s.term().wait_text("reason: half a reas");
    // Another approver answers first.
    let out = s
        .env
        .gate()
        .args(["--no-config", "approve", &id, "--socket"])
        .arg(&s.socket)
        .run();
    out.assert_code(0);
    assert_eq!(out.stdout(), "answered\n");
    requester.wait().assert_code(0);
    assert!(exists(&s.file("ran")));
    s.term()
        .wait_text(&format!("request {id} settled elsewhere (approved)"));
    s.term().wait_idle();
    // Typing and Enter now answer nothing.
    s.term().type_text("on");
    s.term().keys(&["Enter", "C-c"]);
    let screen = s.finished(0);
    assert!(!screen.contains("denied, with"), "{screen}");
}

#[test]
fn a_requester_that_goes_away_ends_its_prompt() {
    let mut s = Setup::new();
    s.watch();
    let requester = s.request("touch ran", "s1");
    s.term().wait_text(PROMPT);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(requester.pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    requester.wait();
    s.term()
        .wait_text("settled elsewhere (its requester went away)");
    s.term().wait_idle();
    assert!(!exists(&s.file("ran")));
}

#[test]
fn a_request_out_of_time_ends_its_prompt() {
    let mut s = Setup::new();
    s.watch();
    let requester = s
        .env
        .gate()
        .args(["--no-config", "--audit-log", "off", "--level", "ask"])
        .args(["--timeout", "3", "--socket"])
        .arg(&s.socket)
        .args(["-c", "touch ran"])
        .spawn();
    // The countdown starts from the request's own time limit.
    s.term().wait_for("a countdown of 3 s or less", |screen| {
        ["(3s) run it?", "(2s) run it?", "(1s) run it?"]
            .iter()
            .any(|c| screen.contains(c))
    });
    requester.wait().assert_refused();
    // Whichever comes first, the prompt's own deadline or the requester leaving, the
    // prompt ends and gate watch waits for the next request.
    let screen = s.term().wait_idle();
    assert!(
        screen.contains("ran out of time") || screen.contains("its requester went away"),
        "{screen}"
    );
    assert!(!exists(&s.file("ran")));
    // A late key answers nothing.
    s.term().keys(&["y", "C-c"]);
    let screen = s.finished(0);
    assert!(!screen.contains("approved once"), "{screen}");
}

#[test]
fn a_question_is_answered() {
    let mut s = Setup::new();
    s.watch();
    let asker = s
        .env
        .gate()
        .args(["--no-config", "--timeout", "60", "--socket"])
        .arg(&s.socket)
        .args([
            "ask",
            "Which colour?",
            "--option",
            "red",
            "--option",
            "blue",
        ])
        .spawn();
    let screen = s.term().wait_text("answer: ");
    assert!(screen.contains("Which colour?"), "{screen}");
    assert!(screen.contains("2) blue"), "{screen}");
    s.term().type_text("2");
    s.term().keys(&["Enter"]);
    let out = asker.wait();
    out.assert_code(0);
    assert_eq!(out.stdout(), "blue\n");
    s.term().wait_text("answered: answered");
}

// ---------------------------------------------------------------------------------------
// Ending.

#[test]
fn ctrl_c_quits_and_leaves_the_request_open() {
    let mut s = Setup::new();
    s.watch();
    let requester = s.request("touch ran", "s1");
    s.term().wait_text(PROMPT);
    s.term().keys(&["C-c"]);
    let screen = s.finished(0);
    assert!(screen.contains("stopped"), "{screen}");
    // Still open for another approver.
    let pending = s.pending();
    assert_eq!(pending.len(), 1, "{pending:?}");
    assert_eq!(pending[0]["command"], "touch ran");
    let id = pending[0]["id"].as_str().unwrap().to_owned();
    s.env
        .gate()
        .args(["--no-config", "deny", &id, "--socket"])
        .arg(&s.socket)
        .run()
        .assert_code(0);
    requester.wait().assert_refused();
}

#[test]
fn sigterm_quits_with_the_terminal_restored() {
    let mut s = Setup::new();
    s.watch();
    let requester = s.request("touch ran", "s1");
    s.term().wait_text(PROMPT);
    s.term().keys(&["n"]);
    s.term().wait_text("reason: ");
    nix::sys::signal::kill(s.watch_pid(), nix::sys::signal::Signal::SIGTERM).unwrap();
    let screen = s.finished(0);
    assert!(screen.contains("stopped (SIGTERM)"), "{screen}");
    assert_eq!(s.pending().len(), 1);
    s.stop_broker();
    requester.wait().assert_refused();
}

#[test]
fn the_broker_going_away_ends_it() {
    let mut s = Setup::new();
    s.watch();
    s.stop_broker();
    let screen = s.finished(1);
    assert!(screen.contains("the broker went away"), "{screen}");
    assert!(
        s.watch_stderr().starts_with("gate: watch: "),
        "{:?}",
        s.watch_stderr()
    );
}

#[test]
fn the_broker_stopping_while_prompting_ends_it() {
    let mut s = Setup::new();
    s.watch();
    let requester = s.request("touch ran", "s1");
    s.term().wait_text(PROMPT);
    s.stop_broker();
    s.finished(1);
    requester.wait().assert_refused();
    assert!(!exists(&s.file("ran")));
}

#[test]
fn without_a_terminal_it_refuses() {
    let s = Setup::new();
    let out = s
        .env
        .gate()
        .args(["--no-config", "watch", "--socket"])
        .arg(&s.socket)
        .run();
    out.assert_code(GATE_ERROR);
    assert!(out.stderr().contains("terminal"), "{}", out.report());
    assert_eq!(out.stdout(), "");
}

#[test]
fn without_a_broker_it_refuses() {
    let env = TestEnv::new();
    let script = format!(
        "cd '{work}'\n'{gate}' --no-config watch --socket '{root}/none/sock' 2>err.txt\n\
         echo \"EXIT=$?\"\nexec sleep 600\n",
        work = env.work.display(),
        gate = GATE,
        root = env.root.display(),
    );
    let path = env.write("nobroker.sh", script);
    let term = Term::start(&env, &path);
    let screen = term.wait_text("EXIT=");
    assert!(screen.contains(&format!("EXIT={GATE_ERROR}")), "{screen}");
    let err = fs::read_to_string(env.file("err.txt")).unwrap();
    assert!(err.contains("no broker"), "{err:?}");
}
