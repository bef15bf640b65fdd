//! Whose terminal gate asks on: a person's, never one an agent controls. Each test plays
//! one real shape and lets "the model" answer the prompt (it writes `y` as soon as it
//! sees the prompt, as a model reading its tool output would):
//!
//! - node-pty (Gemini CLI, Qwen Code) and Codex (portable-pty): the agent opens a
//!   pseudo-terminal, and the command runs as `$SHELL -c COMMAND` (`-lc` for Codex) in a
//!   new session whose controlling terminal it is: gate, as the shell, leads that session.
//! - pexpect (Aider): the same with `bash -i -c COMMAND`.
//! - Claude Code's start-up call: a child in the agent's own process group, on the
//!   person's terminal, where the agent is the foreground job.
//! - A relay: a program on the person's terminal that made a pseudo-terminal of its own
//!   and runs an interactive shell there (`script`), and the same relay run by a command
//!   gate ran (no_new_privs).
//!
//! And the person: an interactive shell in tmux where `gate …` is typed; gate asks, the
//! person presses `y`, the command runs. The terminal is asked only with
//! `approval.tty = true`: without it, even the person is not asked.

use crate::common;

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use common::tmux::{Term, unique};
use common::{
    DEADLINE, NOBODY, REFUSED, TestEnv, User, audit_records, gate_binary_for, require_program,
    running_as_root, shim_dir_for,
};

/// The line the prompt asks on, drawn once type-ahead is discarded (a key sent after it
/// counts). Only its start, so the tests do not depend on which keys it offers.
const PROMPT: &str = "run it? [y/";

/// What a person who runs gate by hand writes to be asked on the terminal.
const TTY_ON: &str = "level = \"ask\"\n\n[approval]\ntty = true\n";

/// What a refusal tells the model to do instead.
const INSTEAD: &str = "`gate watch`";

// ---------------------------------------------------------------------------------------
// The world a test runs in.

struct World {
    env: TestEnv,
    user: User,
}

impl World {
    /// An isolated environment whose user configuration file is `config`.
    fn new(user: User, config: &str) -> World {
        let env = TestEnv::new();
        env.write_user_config(config);
        World { env, user }
    }

    /// The gate binary the user can run.
    fn gate(&self) -> PathBuf {
        gate_binary_for(self.user)
    }

    fn exists(&self, name: &str) -> bool {
        fs::symlink_metadata(self.env.file(name)).is_ok()
    }

    fn read(&self, name: &str) -> String {
        fs::read_to_string(self.env.file(name)).unwrap_or_default()
    }

    /// The environment every process of the test gets.
    fn vars(&self, path: &str) -> Vec<(&'static str, OsString)> {
        vec![
            ("PATH", path.into()),
            ("HOME", self.env.home.clone().into()),
            ("XDG_STATE_HOME", self.env.state.clone().into()),
            ("XDG_CONFIG_HOME", self.env.config.clone().into()),
            ("XDG_RUNTIME_DIR", self.env.runtime.clone().into()),
            ("LC_ALL", "C".into()),
            ("TERM", "xterm".into()),
            ("SHELL", "/bin/sh".into()),
        ]
    }

    /// The argv prefix that runs a program as the test's user.
    fn as_user(&self) -> Vec<OsString> {
        if self.user == User::Unprivileged && running_as_root() {
            vec![
                require_program("setpriv").into(),
                format!("--reuid={NOBODY}").into(),
                format!("--regid={NOBODY}").into(),
                "--clear-groups".into(),
                "--".into(),
            ]
        } else {
            Vec::new()
        }
    }

    /// A tmux window whose interactive bash waits at the prompt `person$ `, in the
    /// working directory, with `$GATE` set to the gate binary: the terminal a person
    /// sits at. tmux's server (which holds the terminal's other end) and the shell run
    /// as the test's user.
    fn person(&self) -> Term {
        let mut script = String::from("set -u\n");
        for (name, value) in self.vars("/usr/local/bin:/usr/bin:/bin") {
            script.push_str(&format!(
                "export {name}={}\n",
                shell_words::quote(&value.to_string_lossy())
            ));
        }
        script.push_str(&format!(
            "export GATE={}\nexport PS1='person$ '\ncd {}\nexec {} --norc --noprofile -i\n",
            shell_words::quote(&self.gate().to_string_lossy()),
            shell_words::quote(&self.env.work.to_string_lossy()),
            common::bash().display(),
        ));
        let path = self.env.write(&unique("person.sh"), script);
        let term = Term::start_as(&self.env, &path, self.user);
        term.wait_text("person$ ");
        term
    }
}

/// The exit status a window printed as `EXIT=<status>` (the typed line shows `EXIT=$?`).
fn printed_status(screen: &str) -> Option<i32> {
    screen
        .match_indices("EXIT=")
        .filter_map(|(at, _)| {
            let digits: String = screen[at + 5..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().ok()
        })
        .last()
}

/// Type `line` at the person's shell, and play the model: press `y` if gate prompts.
/// The screen once the line printed its `EXIT=` status, and whether a prompt was shown.
fn type_and_answer_y(term: &Term, line: &str) -> (String, bool) {
    term.type_text(line);
    term.keys(&["Enter"]);
    let screen = term.wait_for("a prompt or the exit status", |s| {
        s.contains(PROMPT) || printed_status(s).is_some()
    });
    if printed_status(&screen).is_some() {
        return (screen, false);
    }
    term.keys(&["y"]);
    let screen = term.wait_for("the exit status", |s| printed_status(s).is_some());
    (screen, true)
}

// ---------------------------------------------------------------------------------------
// An agent's pseudo-terminal.

/// What the model saw on its pseudo-terminal, and how the command ended.
struct Seen {
    transcript: String,
    status: ExitStatus,
    prompted: bool,
}

/// Play an agent that runs a command on a pseudo-terminal it owns, as node-pty,
/// portable-pty (Codex) and pexpect do: open a pseudo-terminal, start `argv` in a new
/// session with it as the controlling terminal (util-linux `setsid --ctty`: setsid(2),
/// then TIOCSCTTY on the pseudo-terminal, which is its stdin), read what it writes, and
/// as soon as gate's prompt shows, write `y` and Enter, as a model answering its tool
/// output would.
fn on_agent_pty(w: &World, argv: &[OsString], path: &str) -> Seen {
    use nix::fcntl::OFlag;
    use nix::pty::{grantpt, posix_openpt, ptsname_r, unlockpt};
    let master = posix_openpt(OFlag::O_RDWR | OFlag::O_NOCTTY | OFlag::O_CLOEXEC).unwrap();
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let name = ptsname_r(&master).unwrap();
    let slave = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(&name)
        .unwrap();
    let master = File::from(std::os::fd::OwnedFd::from(master));

    let mut line: Vec<OsString> = vec![require_program("setsid").into(), "--ctty".into()];
    line.push("--".into());
    line.extend(w.as_user());
    line.extend(argv.iter().cloned());
    let mut command = Command::new(&line[0]);
    command
        .args(&line[1..])
        .env_clear()
        .envs(w.vars(path))
        .current_dir(&w.env.work)
        .stdin(Stdio::from(slave.try_clone().unwrap()))
        .stdout(Stdio::from(slave.try_clone().unwrap()))
        .stderr(Stdio::from(slave));
    let child = command.spawn().unwrap();
    // The command's copies are the only ones left: reading ends when it is gone.
    drop(command);
    answer_when_prompted(child, master)
}

/// Read `master` until the child exits, writing `y` and Enter once the prompt shows.
fn answer_when_prompted(mut child: Child, master: File) -> Seen {
    let shown = Arc::new(Mutex::new(Vec::new()));
    let (done_tx, done_rx) = mpsc::channel();
    let mut reader = master.try_clone().unwrap();
    let sink = Arc::clone(&shown);
    thread::spawn(move || {
        let mut buf = [0u8; 4096];
        // EIO once every copy of the other end is closed.
        while let Ok(n @ 1..) = reader.read(&mut buf) {
            sink.lock().unwrap().extend_from_slice(&buf[..n]);
        }
        let _ = done_tx.send(());
    });
    let mut writer = master;
    let mut prompted = false;
    let end = Instant::now() + DEADLINE;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if !prompted && String::from_utf8_lossy(&shown.lock().unwrap()).contains(PROMPT) {
            prompted = true;
            writer.write_all(b"y\r").unwrap();
        }
        if Instant::now() > end {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(child.id() as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "the command on the pseudo-terminal did not finish within {DEADLINE:?}:\n{}",
                String::from_utf8_lossy(&shown.lock().unwrap())
            );
        }
        thread::sleep(Duration::from_millis(5));
    };
    done_rx
        .recv_timeout(DEADLINE)
        .expect("the pseudo-terminal stayed open after the command exited");
    let transcript = String::from_utf8_lossy(&shown.lock().unwrap()).replace('\r', "");
    Seen {
        transcript,
        status,
        prompted,
    }
}

/// A shim directory (`bash` linked to gate) first on PATH, as the agents are set up.
fn shim_path(w: &World) -> String {
    let shims = shim_dir_for(&w.env, &["bash"], w.user);
    format!("{}:/usr/local/bin:/usr/bin:/bin", shims.display())
}

#[track_caller]
fn assert_the_model_could_not_approve(w: &World, seen: &Seen, why: &str) {
    let report = format!(
        "{:?}; what the model saw:\n{}",
        seen.status, seen.transcript
    );
    assert!(
        !w.exists("PWNED"),
        "the model approved its own command: {report}"
    );
    assert!(
        !seen.prompted,
        "gate prompted on the agent's terminal: {report}"
    );
    assert_eq!(seen.status.code(), Some(REFUSED), "{report}");
    assert!(
        seen.transcript.contains("gate: refused `touch PWNED`"),
        "{report}"
    );
    assert!(
        seen.transcript.contains(why),
        "the reason is not named: {report}"
    );
    assert!(
        seen.transcript.contains(INSTEAD),
        "the refusal does not say how to approve instead: {report}"
    );
}

for_each_user! {
    /// node-pty (Gemini CLI, Qwen Code) and Codex run `$SHELL -c COMMAND` (Codex:
    /// `-lc`) in a session of its own on the agent's pseudo-terminal.
    fn the_model_cannot_answer_the_prompt_on_a_node_pty_or_codex_terminal(user) {
        let w = World::new(user, TTY_ON);
        let path = shim_path(&w);
        let bash = w.env.root.join("shims/bash");
        for flag in ["-c", "-lc"] {
            let argv: Vec<OsString> = vec![bash.clone().into(), flag.into(), "touch PWNED".into()];
            let seen = on_agent_pty(&w, &argv, &path);
            assert_the_model_could_not_approve(&w, &seen, "leads the terminal's session");
        }
    }

    /// pexpect (Aider) runs `bash -i -c COMMAND` the same way.
    fn the_model_cannot_answer_the_prompt_on_a_pexpect_terminal(user) {
        let w = World::new(user, TTY_ON);
        let path = shim_path(&w);
        let bash = w.env.root.join("shims/bash");
        let argv: Vec<OsString> =
            vec![bash.into(), "-i".into(), "-c".into(), "touch PWNED".into()];
        let seen = on_agent_pty(&w, &argv, &path);
        assert_the_model_could_not_approve(&w, &seen, "leads the terminal's session");
    }

    /// A person in tmux types the command; gate asks, `y` runs it, and the audit log
    /// says the terminal decided.
    fn a_person_in_tmux_is_asked_and_answers(user) {
        let w = World::new(user, TTY_ON);
        let term = w.person();
        let (screen, prompted) =
            type_and_answer_y(&term, "\"$GATE\" --level ask -- touch OK; echo \"EXIT=$?\"");
        assert!(prompted, "gate did not ask the person:\n{screen}");
        assert!(screen.contains("command:   touch OK"), "{screen}");
        assert_eq!(printed_status(&screen), Some(0), "{screen}");
        assert!(w.exists("OK"), "{screen}");
        let records = audit_records(&w.env.default_audit_log());
        let last = records.last().expect("an audit record");
        assert_eq!(last["decided_by"], "tty", "{last}");
        assert_eq!(last["decision"], "allow", "{last}");
    }
}

/// Claude Code's start-up call: the agent, the foreground job on the person's terminal,
/// starts the shell as a child in its own process group (no new group, no new session).
/// Played by python3's subprocess, which starts children the way Node does.
#[test]
fn an_agent_on_the_persons_terminal_does_not_get_a_prompt_for_its_child() {
    let w = World::new(User::Current, TTY_ON);
    let term = w.person();
    let (screen, prompted) = type_and_answer_y(
        &term,
        "python3 -c 'import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:]).returncode)' \
         \"$GATE\" -c 'touch PWNED' 2>err.txt; echo \"EXIT=$?\"",
    );
    let err = w.read("err.txt");
    assert!(
        !prompted,
        "gate prompted on the agent's interface:\n{screen}"
    );
    assert!(!w.exists("PWNED"), "{screen}\n{err}");
    assert_eq!(printed_status(&screen), Some(REFUSED), "{screen}\n{err}");
    assert!(err.contains("does not lead"), "{err}");
    assert!(err.contains(INSTEAD), "{err}");
}

/// A program on the person's terminal that made a pseudo-terminal of its own and runs
/// an interactive shell on it (util-linux `script`, as an agent with a persistent shell
/// session would): gate runs there as a job, so only the holder of the terminal's other
/// end tells it apart. That holder runs on a terminal of its own: not asked.
#[test]
fn a_relay_on_the_persons_terminal_does_not_get_a_prompt() {
    let w = World::new(User::Current, TTY_ON);
    w.env.write(
        "inner.sh",
        "set -m\n\"$GATE\" -c 'touch PWNED' 2>err.txt\necho \"EXIT=$?\"\n",
    );
    let term = w.person();
    let (screen, prompted) = type_and_answer_y(
        &term,
        &format!(
            "script -qec '{} --norc --noprofile {}' /dev/null",
            common::bash().display(),
            w.env.root.join("inner.sh").display()
        ),
    );
    let err = w.read("err.txt");
    assert!(
        !prompted,
        "gate prompted on the relayed terminal:\n{screen}"
    );
    assert!(!w.exists("PWNED"), "{screen}\n{err}");
    assert_eq!(printed_status(&screen), Some(REFUSED), "{screen}\n{err}");
    assert!(err.contains("(script)"), "the holder is not named: {err}");
    assert!(err.contains("a terminal of its own"), "{err}");
    assert!(err.contains(INSTEAD), "{err}");
}

/// The same relay, with no terminal of its own (a terminal server's shape), started by
/// a command gate ran: it runs with no_new_privs, so it is not a person's terminal.
/// Control: the same relay without no_new_privs is a terminal server like tmux, and its
/// terminal is asked.
#[test]
fn a_relay_with_no_new_privs_does_not_get_a_prompt() {
    let w = World::new(User::Current, TTY_ON);
    let inner = w.env.write(
        "inner.sh",
        "set -m\n\"$GATE\" -c \"touch $1\" 2>err.txt\necho \"EXIT=$?\"\n",
    );
    let relay = |nnp: bool, name: &str| {
        // In a session of its own: no terminal, even when the tests run on one.
        let mut line: Vec<OsString> = vec![require_program("setsid").into()];
        if nnp {
            line.extend([require_program("setpriv").into(), "--no-new-privs".into()]);
        }
        line.extend([
            require_program("script").into(),
            "-qec".into(),
            format!(
                "{} --norc --noprofile {} {name}",
                common::bash().display(),
                inner.display()
            )
            .into(),
            "/dev/null".into(),
        ]);
        let mut vars = w.vars("/usr/local/bin:/usr/bin:/bin");
        vars.push(("GATE", w.gate().into()));
        let mut command = Command::new(&line[0]);
        command
            .args(&line[1..])
            .env_clear()
            .envs(vars)
            .current_dir(&w.env.work)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = command.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        piped_answer_when_prompted(child, stdin, stdout)
    };
    let seen = relay(true, "PWNED");
    let err = w.read("err.txt");
    let report = format!("{}\n{err}", seen.transcript);
    assert!(!seen.prompted, "{report}");
    assert!(!w.exists("PWNED"), "{report}");
    assert_eq!(printed_status(&seen.transcript), Some(REFUSED), "{report}");
    assert!(err.contains("no_new_privs"), "{report}");
    assert!(err.contains(INSTEAD), "{report}");

    let seen = relay(false, "ASKED");
    assert!(seen.prompted, "{}\n{}", seen.transcript, w.read("err.txt"));
    assert!(w.exists("ASKED"), "{}", seen.transcript);
}

/// [`answer_when_prompted`] for a relay that takes its input on a pipe.
fn piped_answer_when_prompted(
    child: Child,
    stdin: std::process::ChildStdin,
    stdout: std::process::ChildStdout,
) -> Seen {
    use std::os::fd::OwnedFd;
    // The pipe ends as files: the same reader and writer as for a pseudo-terminal.
    let out = File::from(OwnedFd::from(stdout));
    let input = OwnedFd::from(stdin);
    let mut child = child;
    let shown = Arc::new(Mutex::new(Vec::new()));
    let (done_tx, done_rx) = mpsc::channel();
    let sink = Arc::clone(&shown);
    let mut reader = out;
    thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n @ 1..) = reader.read(&mut buf) {
            sink.lock().unwrap().extend_from_slice(&buf[..n]);
        }
        let _ = done_tx.send(());
    });
    let mut writer = File::from(input);
    let mut prompted = false;
    let end = Instant::now() + DEADLINE;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if !prompted && String::from_utf8_lossy(&shown.lock().unwrap()).contains(PROMPT) {
            prompted = true;
            writer.write_all(b"y").unwrap();
        }
        if Instant::now() > end {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(child.id() as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
            let _ = child.wait();
            panic!(
                "the relay did not finish within {DEADLINE:?}:\n{}",
                String::from_utf8_lossy(&shown.lock().unwrap())
            );
        }
        thread::sleep(Duration::from_millis(5));
    };
    drop(writer);
    done_rx
        .recv_timeout(DEADLINE)
        .expect("the relay's output stayed open after it exited");
    let transcript = String::from_utf8_lossy(&shown.lock().unwrap()).replace('\r', "");
    Seen {
        transcript,
        status,
        prompted,
    }
}

/// Without `approval.tty = true`, even a person's terminal is not asked: the refusal
/// says how to turn it on and how to approve instead.
#[test]
fn the_terminal_is_off_by_default() {
    let w = World::new(User::Current, "level = \"ask\"\n");
    let term = w.person();
    let (screen, prompted) = type_and_answer_y(
        &term,
        "\"$GATE\" -c 'touch PWNED' 2>err.txt; echo \"EXIT=$?\"",
    );
    let err = w.read("err.txt");
    assert!(!prompted, "{screen}");
    assert!(!w.exists("PWNED"), "{screen}");
    assert_eq!(printed_status(&screen), Some(REFUSED), "{screen}\n{err}");
    assert!(err.contains("approval.tty = false"), "{err}");
    assert!(err.contains(INSTEAD), "{err}");
}

/// `gate check` and `gate doctor` judge the terminal with the run's own checks: on an
/// agent's pseudo-terminal they say it cannot be asked, and why; on the person's they
/// say it would be.
#[test]
fn check_and_doctor_judge_the_terminal_as_a_run_does() {
    let w = World::new(User::Current, TTY_ON);
    let path = "/usr/local/bin:/usr/bin:/bin";
    let gate: OsString = w.gate().into();
    let seen = on_agent_pty(
        &w,
        &[gate.clone(), "check".into(), "-c".into(), "touch F".into()],
        path,
    );
    assert_eq!(seen.status.code(), Some(2), "{}", seen.transcript);
    assert!(
        seen.transcript.contains(
            "gate would refuse it now (exit 126): nobody can be asked: no broker is listening \
             on the default socket, and the terminal cannot be asked: gate leads the terminal's \
             session"
        ),
        "{}",
        seen.transcript
    );
    assert!(seen.transcript.contains(INSTEAD), "{}", seen.transcript);
    let seen = on_agent_pty(&w, &[gate, "doctor".into()], path);
    assert!(
        seen.transcript
            .contains("not here: gate leads the terminal's session"),
        "{}",
        seen.transcript
    );

    let term = w.person();
    term.type_text("\"$GATE\" check -c 'touch F'; echo \"EXIT=$?\"");
    term.keys(&["Enter"]);
    let screen = term.wait_for("the exit status", |s| printed_status(s).is_some());
    assert!(
        screen.contains("gate would ask on the terminal and run it only if approved"),
        "{screen}"
    );
    assert_eq!(printed_status(&screen), Some(1), "{screen}");
    assert!(!w.exists("F"));
}
