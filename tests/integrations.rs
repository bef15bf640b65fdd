//! The recipes of docs/integrations.md, each run the way its agent runs its shell:
//!
//! - the argv the agent sends, taken from the captured fixtures in
//!   `tests/fixtures/agents/*.argv` (only the snapshot, the cwd or pgrep file and the
//!   model's command are put in this test's place; the rest is the capture, byte for byte);
//! - argv[0] as the agent sets it: the shell's path, or `bash` for a shell found on PATH;
//! - detached (a new session made with `setsid()`, so no controlling terminal) where the
//!   agent detaches, stdin a pipe (or /dev/null where the agent ignores it), stdout and
//!   stderr to files or pipes;
//! - gate installed as a shim in a temporary directory whose path contains `bash`
//!   (`<tmp>/gate-bash-shims/bash`, a symbolic link to gate), and as `<tmp>/bin/gate` (the
//!   stand-in for /usr/bin/gate);
//! - a private HOME and XDG directories, the settings the recipe recommends in the user
//!   configuration file, and the approver the recipe names: a real `gate serve` answered
//!   with `gate approve` and `gate deny`, or the reference approver examples/approver.py.
//!
//! Every wait has a deadline, and every test checks side effects, exit statuses and
//! stderr, so each can fail. A few tests describe what a user of a recipe expects and
//! gate does not do yet; their comments say so, and they fail until gate is fixed.

use crate::common;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use common::*;
use gate::policy::wrapper;
use serde_json::Value;

/// How long any one wait (a process, a pending request, a socket) may take.
const WAIT: Duration = Duration::from_secs(30);

/// Claude Code gives its start-up call 10 s; gate must answer it in far less.
const CLAUDE_STARTUP_LIMIT: Duration = Duration::from_secs(3);

fn unique(prefix: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!(
        "{prefix}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

// ---------------------------------------------------------------------------------------
// The fixtures: what each agent really sends.

fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/agents")
        .join(format!("{name}.argv"));
    let text =
        fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn fixture_argv(f: &Value) -> Vec<String> {
    f["argv"]
        .as_array()
        .expect("an argv array")
        .iter()
        .map(|a| a.as_str().expect("string arguments").to_owned())
        .collect()
}

/// The text the shell gets (the last argument).
fn fixture_text(f: &Value) -> String {
    fixture_argv(f).pop().expect("a non-empty argv")
}

/// Claude Code 2.1's quoting of the model's command: a bare word of its safe characters,
/// else single quotes with each `'` written `'"'"'`.
fn claude_quote(command: &str) -> String {
    let safe = |b: u8| b.is_ascii_alphanumeric() || b"_./:@%+,=-".contains(&b);
    let first = |b: u8| b.is_ascii_alphanumeric() || b"_./".contains(&b);
    let bare = command.bytes().all(safe) && command.bytes().next().is_some_and(first);
    if bare {
        command.to_owned()
    } else {
        format!("'{}'", command.replace('\'', "'\"'\"'"))
    }
}

const CLAUDE_TAIL: &str = " < /dev/null && pwd -P >| ";

/// The pieces of a captured Claude Code 2.1 wrapper: the text before ` && eval `, the
/// snapshot it sources, and the cwd file.
fn claude_pieces(text: &str) -> (&str, &str, &str) {
    let (head, rest) = text
        .split_once(" && eval ")
        .expect("a Claude wrapper has an eval");
    let at = rest
        .rfind(CLAUDE_TAIL)
        .expect("a Claude wrapper ends with its cwd file");
    let cwd = &rest[at + CLAUDE_TAIL.len()..];
    let snapshot = head
        .strip_prefix("source ")
        .and_then(|h| h.split(' ').next())
        .expect("a Claude wrapper sources its snapshot first");
    (head, snapshot, cwd)
}

/// A captured Claude Code wrapper with this test's snapshot, command and cwd file in place
/// of the captured ones. Everything else is the capture's text.
fn claude_text(f: &Value, snapshot: &str, command: &str, cwd: &str) -> String {
    let text = fixture_text(f);
    let (head, captured_snapshot, _) = claude_pieces(&text);
    let head = head.replacen(captured_snapshot, snapshot, 1);
    format!("{head} && eval {}{CLAUDE_TAIL}{cwd}", claude_quote(command))
}

/// Check that [`claude_text`] rebuilds the capture from its own pieces: the template used
/// here is exactly the one Claude Code sent.
#[track_caller]
fn assert_claude_fixture_rebuilds(f: &Value) {
    let text = fixture_text(f);
    let (_, snapshot, cwd) = claude_pieces(&text);
    let inner = f["expect"]["inner"].as_str().expect("a recognised capture");
    assert_eq!(claude_text(f, snapshot, inner, cwd), text);
}

/// The snapshot path Claude Code would use under `home`.
fn claude_snapshot(home: &Path, shell: &str) -> String {
    format!(
        "{}/.claude/shell-snapshots/snapshot-{shell}-1788557415117-j0hu0n.sh",
        home.display()
    )
}

/// Claude Code's start-up call script from the fixture, for `snapshot` and `home`.
fn claude_startup_script(snapshot: &str, home: &Path) -> String {
    let f = fixture("claude-code-2.1-startup-snapshot-derived");
    let captured = f["expect"]["snapshot"].as_str().unwrap();
    fixture_text(&f)
        .replace(captured, snapshot)
        .replace("/home/user/", &format!("{}/", home.display()))
}

/// A file name in /tmp of the shape an agent's wrapper writes (`/tmp/claude-XXXX-cwd`,
/// `/tmp/shell_pgrep_<12 hex>.tmp`), claimed for this test by creating it empty (a regular
/// file of this user's, which gate trusts like an absent one), removed when dropped.
struct TmpName(PathBuf);

impl TmpName {
    fn claim(make: impl Fn(u64) -> String) -> TmpName {
        let seed = u64::from(std::process::id()) << 20
            ^ std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64;
        for n in 0..100_000u64 {
            let path = PathBuf::from(make(seed.wrapping_add(n.wrapping_mul(0x9e37_79b9))));
            let created = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path);
            if created.is_ok() {
                fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
                return TmpName(path);
            }
        }
        panic!("no free name in /tmp");
    }

    fn claude_cwd() -> TmpName {
        TmpName::claim(|n| format!("/tmp/claude-{:04x}-cwd", n & 0xffff))
    }

    fn gemini_pgrep() -> TmpName {
        TmpName::claim(|n| format!("/tmp/shell_pgrep_{:012x}.tmp", n & 0xffff_ffff_ffff))
    }

    fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }

    fn contents(&self) -> String {
        fs::read_to_string(&self.0).unwrap_or_default()
    }
}

impl Drop for TmpName {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

// ---------------------------------------------------------------------------------------
// The machine an agent runs on.

/// One recipe's machine: a [`TestEnv`], a private runtime directory (the broker's), gate
/// installed as shims in `<root>/gate-bash-shims/` and as `<root>/bin/gate`.
struct Machine {
    t: TestEnv,
    user: User,
    runtime: PathBuf,
    shims: PathBuf,
    bin: PathBuf,
}

impl Machine {
    fn new(user: User) -> Machine {
        Machine::new_in(std::env::temp_dir(), user)
    }

    fn new_in(parent: impl AsRef<Path>, user: User) -> Machine {
        let t = TestEnv::new_in(parent);
        let uid = uid_of(user);
        let runtime = t.root.join("run");
        fs::create_dir(&runtime).unwrap();
        fs::set_permissions(&runtime, fs::Permissions::from_mode(0o700)).unwrap();
        if uid != effective_uid() {
            std::os::unix::fs::chown(&runtime, Some(uid), Some(uid)).unwrap();
        }
        let gate = gate_binary_for(user);
        let shims = t.root.join("gate-bash-shims");
        let bin = t.root.join("bin");
        for dir in [&shims, &bin] {
            fs::create_dir(dir).unwrap();
            fs::set_permissions(dir, fs::Permissions::from_mode(0o755)).unwrap();
        }
        for name in ["bash", "sh", "zsh"] {
            std::os::unix::fs::symlink(&gate, shims.join(name)).unwrap();
        }
        std::os::unix::fs::symlink(&gate, bin.join("gate")).unwrap();
        Machine {
            t,
            user,
            runtime,
            shims,
            bin,
        }
    }

    fn shim(&self, name: &str) -> PathBuf {
        self.shims.join(name)
    }

    /// The stand-in for /usr/bin/gate.
    fn gate(&self) -> PathBuf {
        self.bin.join("gate")
    }

    /// The PATH the test itself runs with.
    fn base_path() -> OsString {
        std::env::var_os("PATH")
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| OsString::from("/usr/local/bin:/usr/bin:/bin"))
    }

    /// The environment the agent passes on to its shell: a private HOME and XDG
    /// directories, the broker's runtime directory, and `<root>/bin` (gate) on PATH.
    fn vars(&self) -> BTreeMap<OsString, OsString> {
        let mut path = self.bin.clone().into_os_string();
        path.push(":");
        path.push(Machine::base_path());
        BTreeMap::from([
            ("PATH".into(), path),
            ("HOME".into(), self.t.home.clone().into()),
            ("XDG_STATE_HOME".into(), self.t.state.clone().into()),
            ("XDG_CONFIG_HOME".into(), self.t.config.clone().into()),
            ("XDG_RUNTIME_DIR".into(), self.runtime.clone().into()),
            ("LC_ALL".into(), "C".into()),
        ])
    }

    /// [`Machine::vars`] with the shim directory first on PATH.
    fn vars_with_shims_first(&self) -> BTreeMap<OsString, OsString> {
        let mut vars = self.vars();
        let mut path = self.shims.clone().into_os_string();
        path.push(":");
        path.push(&vars[&OsString::from("PATH")]);
        vars.insert("PATH".into(), path);
        vars
    }

    /// Write the user configuration file, `$XDG_CONFIG_HOME/gate/config.toml`.
    fn config(&self, text: &str) {
        let path = self.t.write_user_config(text);
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
    }

    /// A process as this machine's user, with the agent's environment, in the workspace.
    fn process(&self, program: impl AsRef<Path>) -> Proc {
        Proc {
            program: program.as_ref().to_owned(),
            arg0: None,
            args: Vec::new(),
            env: self.vars(),
            cwd: self.t.work.clone(),
            user: self.user,
            detach: false,
            stdin: In::Null,
            out: Out::Pipes,
            files_in: self.t.root.clone(),
            deadline: WAIT,
        }
    }

    /// The audit records written so far.
    fn audit(&self) -> Vec<Value> {
        let path = self.t.default_audit_log();
        if path.exists() {
            audit_records(&path)
        } else {
            Vec::new()
        }
    }
}

// ---------------------------------------------------------------------------------------
// Starting processes the way agents do.

/// What the process reads.
#[derive(Clone, Copy)]
enum In {
    /// /dev/null (Gemini CLI and Codex ignore stdin).
    Null,
    /// A pipe that the agent holds open and never writes (Claude Code, Continue).
    OpenPipe,
}

/// Where the output goes.
#[derive(Clone, Copy)]
enum Out {
    Pipes,
    /// Regular files (Claude Code writes its commands' output to files).
    Files,
}

/// A process to start, as an agent starts its shell.
#[derive(Clone)]
struct Proc {
    program: PathBuf,
    arg0: Option<OsString>,
    args: Vec<OsString>,
    env: BTreeMap<OsString, OsString>,
    cwd: PathBuf,
    user: User,
    /// A new session (`setsid()`): no controlling terminal.
    detach: bool,
    stdin: In,
    out: Out,
    files_in: PathBuf,
    deadline: Duration,
}

impl Proc {
    fn arg0(mut self, arg0: impl Into<OsString>) -> Self {
        self.arg0 = Some(arg0.into());
        self
    }

    fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    fn env(mut self, key: &str, value: impl Into<OsString>) -> Self {
        self.env.insert(key.into(), value.into());
        self
    }

    fn envs(mut self, vars: BTreeMap<OsString, OsString>) -> Self {
        self.env = vars;
        self
    }

    fn detached(mut self) -> Self {
        self.detach = true;
        self
    }

    fn stdin(mut self, stdin: In) -> Self {
        self.stdin = stdin;
        self
    }

    fn output(mut self, out: Out) -> Self {
        self.out = out;
        self
    }

    fn describe(&self) -> String {
        let mut text = String::new();
        if self.detach {
            text.push_str("[setsid] ");
        }
        if self.user == User::Unprivileged && running_as_root() {
            text.push_str("[as uid 65534] ");
        }
        if let Some(arg0) = &self.arg0 {
            text.push_str(&format!("[argv0 {arg0:?}] "));
        }
        text.push_str(&self.program.display().to_string());
        for arg in &self.args {
            text.push_str(&format!(" {arg:?}"));
        }
        text
    }

    /// The std Command: the agent's argv, environment and working directory, in a new
    /// session or a process group of its own, as the user.
    fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        if let Some(arg0) = &self.arg0 {
            command.arg0(arg0);
        }
        command
            .args(&self.args)
            .env_clear()
            .envs(&self.env)
            .current_dir(&self.cwd);
        let detach = self.detach;
        let drop_to_nobody = self.user == User::Unprivileged && running_as_root();
        // SAFETY: the closure runs in the child between fork and exec and calls only
        // async-signal-safe system calls (setsid, setpgid, setgroups, setgid, setuid),
        // touching no memory of the parent's but the two captured booleans.
        unsafe {
            command.pre_exec(move || {
                let failed = if detach {
                    libc::setsid() == -1
                } else {
                    libc::setpgid(0, 0) == -1
                };
                if failed {
                    return Err(io::Error::last_os_error());
                }
                if drop_to_nobody
                    && (libc::setgroups(0, std::ptr::null()) == -1
                        || libc::setgid(NOBODY) == -1
                        || libc::setuid(NOBODY) == -1)
                {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
        command
    }

    fn spawn(self) -> Started {
        let description = self.describe();
        let mut command = self.command();
        command.stdin(match self.stdin {
            In::Null => Stdio::null(),
            In::OpenPipe => Stdio::piped(),
        });
        let files = match self.out {
            Out::Pipes => {
                command.stdout(Stdio::piped()).stderr(Stdio::piped());
                None
            }
            Out::Files => {
                let name = unique("agent-output");
                let stdout = self.files_in.join(format!("{name}.stdout"));
                let stderr = self.files_in.join(format!("{name}.stderr"));
                command
                    .stdout(fs::File::create(&stdout).unwrap())
                    .stderr(fs::File::create(&stderr).unwrap());
                Some((stdout, stderr))
            }
        };
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {description}: {e}"));
        let stdin = child.stdin.take();
        let output = match files {
            Some((stdout, stderr)) => Captured::Files(stdout, stderr),
            None => Captured::Pipes(
                reader(child.stdout.take().unwrap()),
                reader(child.stderr.take().unwrap()),
            ),
        };
        Started {
            pid: child.id() as i32,
            child: Some(child),
            stdin,
            output,
            started: Instant::now(),
            deadline: self.deadline,
            description,
        }
    }

    #[track_caller]
    fn run(self) -> Done {
        self.spawn().wait()
    }
}

fn reader(mut stream: impl Read + Send + 'static) -> Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stream.read_to_end(&mut buf);
        let _ = tx.send(buf);
    });
    rx
}

enum Captured {
    Pipes(Receiver<Vec<u8>>, Receiver<Vec<u8>>),
    Files(PathBuf, PathBuf),
}

/// A started process. Killed with its whole process group if dropped unfinished.
struct Started {
    child: Option<Child>,
    pid: i32,
    /// The write end of its stdin pipe, held open (never written) until it ends.
    stdin: Option<ChildStdin>,
    output: Captured,
    started: Instant,
    deadline: Duration,
    description: String,
}

impl Started {
    /// Nothing: what is left where a process was taken out.
    fn none() -> Started {
        Started {
            child: None,
            pid: 0,
            stdin: None,
            output: Captured::Files(PathBuf::new(), PathBuf::new()),
            started: Instant::now(),
            deadline: WAIT,
            description: String::new(),
        }
    }

    /// Whether it exited (its status is kept for [`Started::wait`]).
    fn has_ended(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|c| matches!(c.try_wait(), Ok(Some(_))))
    }

    fn kill_group(&mut self) {
        // SAFETY: kill(2) on the process group this test made for the child.
        unsafe {
            libc::kill(-self.pid, libc::SIGKILL);
        }
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Wait for the exit, within the deadline; past it, kill the group and fail.
    #[track_caller]
    fn wait(mut self) -> Done {
        let end = self.started + self.deadline;
        let mut pause = Duration::from_micros(200);
        let status = loop {
            let child = self.child.as_mut().unwrap();
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) => {}
                Err(e) => panic!("cannot wait for {}: {e}", self.description),
            }
            if Instant::now() >= end {
                self.kill_group();
                panic!(
                    "{} did not finish within {:?}; killed it",
                    self.description, self.deadline
                );
            }
            thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(10));
        };
        let elapsed = self.started.elapsed();
        self.child = None;
        self.stdin = None;
        let (stdout, stderr) = match &self.output {
            Captured::Files(out, err) => (fs::read(out).unwrap(), fs::read(err).unwrap()),
            Captured::Pipes(out, err) => {
                let left = end.saturating_duration_since(Instant::now()) + Duration::from_secs(1);
                let take = |rx: &Receiver<Vec<u8>>| {
                    rx.recv_timeout(left).unwrap_or_else(|_| {
                        panic!(
                            "{}: its output stayed open after it exited",
                            self.description
                        )
                    })
                };
                (take(out), take(err))
            }
        };
        Done {
            status,
            stdout: String::from_utf8_lossy(&stdout).into_owned(),
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
            elapsed,
            description: self.description.clone(),
        }
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        if self.child.is_some() {
            self.kill_group();
        }
    }
}

/// A finished process.
struct Done {
    status: ExitStatus,
    stdout: String,
    stderr: String,
    elapsed: Duration,
    description: String,
}

impl Done {
    fn report(&self) -> String {
        format!(
            "{}\n  status: {:?} (signal {:?}) after {:?}\n  stdout: {:?}\n  stderr: {:?}",
            self.description,
            self.status.code(),
            self.status.signal(),
            self.elapsed,
            self.stdout,
            self.stderr
        )
    }

    #[track_caller]
    fn code(&self, code: i32) -> &Self {
        assert_eq!(
            self.status.code(),
            Some(code),
            "expected exit status {code}\n{}",
            self.report()
        );
        self
    }

    /// Refused by gate: 126 and one line on stderr that starts `gate: refused`.
    #[track_caller]
    fn refused(&self) -> &Self {
        self.code(REFUSED);
        assert!(
            self.stderr.starts_with("gate: refused ")
                && self.stderr.ends_with('\n')
                && self.stderr.matches('\n').count() == 1,
            "a refusal is one line on stderr that starts `gate: refused`\n{}",
            self.report()
        );
        self
    }

    #[track_caller]
    fn stdout_is(&self, expected: &str) -> &Self {
        assert_eq!(self.stdout, expected, "stdout differs\n{}", self.report());
        self
    }

    #[track_caller]
    fn stdout_has(&self, needle: &str) -> &Self {
        assert!(
            self.stdout.contains(needle),
            "stdout should contain {needle:?}\n{}",
            self.report()
        );
        self
    }

    #[track_caller]
    fn stderr_has(&self, needle: &str) -> &Self {
        assert!(
            self.stderr.contains(needle),
            "stderr should contain {needle:?}\n{}",
            self.report()
        );
        self
    }

    #[track_caller]
    fn stderr_empty(&self) -> &Self {
        assert!(
            self.stderr.is_empty(),
            "stderr should be empty\n{}",
            self.report()
        );
        self
    }
}

#[track_caller]
fn assert_missing(path: &Path, done: &Done) {
    assert!(
        !path.exists(),
        "{} exists: something ran that should not have\n{}",
        path.display(),
        done.report()
    );
}

// ---------------------------------------------------------------------------------------
// The broker: `gate serve`, answered with `gate approve` and `gate deny`.

struct Broker<'a> {
    m: &'a Machine,
    running: Option<Started>,
}

impl<'a> Broker<'a> {
    /// `gate serve` on the machine's default socket, `$XDG_RUNTIME_DIR/gate/broker.sock`.
    fn start(m: &'a Machine) -> Broker<'a> {
        let running = m
            .process(m.gate())
            .args(["serve"])
            .output(Out::Files)
            .spawn();
        let broker = Broker {
            m,
            running: Some(running),
        };
        let socket = m.runtime.join("gate/broker.sock");
        let end = Instant::now() + WAIT;
        while !socket.exists() {
            assert!(
                Instant::now() < end,
                "gate serve did not create {} in time",
                socket.display()
            );
            thread::sleep(Duration::from_millis(5));
        }
        broker
    }

    /// `gate ARGS`, an approver tool, as the broker's user.
    fn tool(&self, args: &[&str]) -> Done {
        self.m.process(self.m.gate()).args(args).run()
    }

    /// The open requests, as `gate pending --json` lists them.
    fn pending(&self) -> Vec<Value> {
        let out = self.tool(&["pending", "--json"]);
        out.code(0);
        serde_json::from_str(&out.stdout)
            .unwrap_or_else(|e| panic!("gate pending --json: {e}\n{}", out.report()))
    }

    /// Wait until a request for exactly `command` from `asking` is open; its id. Fails
    /// if `asking` ends first.
    #[track_caller]
    fn wait_for(&self, command: &str, asking: &mut Started) -> String {
        let end = Instant::now() + WAIT;
        loop {
            let pending = self.pending();
            if let Some(item) = pending.iter().find(|i| i["command"] == command) {
                return item["id"].as_str().expect("an id").to_owned();
            }
            if asking.has_ended() {
                let ended = std::mem::replace(asking, Started::none());
                panic!(
                    "the agent's command ended instead of waiting for the broker; pending: \
                     {pending:?}\n{}",
                    ended.wait().report()
                );
            }
            assert!(
                Instant::now() < end,
                "no request for {command:?} reached the broker; pending: {pending:?}"
            );
            thread::sleep(Duration::from_millis(10));
        }
    }

    fn approve(&self, id: &str) {
        self.tool(&["approve", id]).code(0).stdout_is("answered\n");
    }

    fn deny(&self, id: &str, message: &str) {
        self.tool(&["deny", id, "--message", message])
            .code(0)
            .stdout_is("answered\n");
    }
}

impl Drop for Broker<'_> {
    fn drop(&mut self) {
        if let Some(running) = self.running.take() {
            // SAFETY: kill(2) on the broker this test started.
            unsafe {
                libc::kill(running.pid, libc::SIGTERM);
            }
            if !thread::panicking() {
                running.wait().code(0);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// A python3 the user can run (one under root's home, from pyenv, is out of uid 65534's
// reach).

fn python3_for(user: User) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs = std::env::split_paths(&path)
        .chain(["/usr/local/bin", "/usr/bin", "/bin"].map(PathBuf::from));
    for dir in dirs {
        let candidate = dir.join("python3");
        let starts = candidate.is_file()
            && command_as(user, &candidate)
                .args(["-c", ""])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
        if starts {
            return candidate;
        }
    }
    panic!("these tests need a python3 that {user:?} can run");
}

// =======================================================================================
// Claude Code

/// The settings docs/integrations.md gives for Claude Code (with this test's allow rule).
const CLAUDE_CONFIG: &str = r#"level = "ask"
readonly = true
allow = ["echo hello"]
deny = ["git push --force"]

[approval]
tty = false
"#;

/// Claude Code, as it runs its shell: `SHELL -c TEXT` (`-c -l` for the start-up call),
/// argv0 the shell's path, detached, stdin a pipe it never writes, output to files.
fn claude(m: &Machine, shell: &Path, args: &[&str]) -> Proc {
    m.process(shell)
        .arg0(shell)
        .args(args.iter().copied())
        .env("SHELL", shell)
        .detached()
        .stdin(In::OpenPipe)
        .output(Out::Files)
}

/// gate answers Claude Code's start-up call itself: at once, with an empty snapshot,
/// running nothing of the script (which would source ~/.bashrc). A broker that is running
/// is not asked.
#[test]
fn claude_code_start_up_call_is_answered_at_once_with_an_empty_snapshot() {
    let m = Machine::new(User::Current);
    m.config(CLAUDE_CONFIG);
    let broker = Broker::start(&m);
    let ran = m.t.file("bashrc-ran");
    fs::write(
        m.t.home.join(".bashrc"),
        format!("touch {}\n", ran.display()),
    )
    .unwrap();
    let shell = m.shim("bash");
    let snapshot = claude_snapshot(&m.t.home, "bash");
    let script = claude_startup_script(&snapshot, &m.t.home);
    assert!(
        wrapper::startup(&["-c", "-l", script.as_str()]).is_some(),
        "the test's start-up call is not of the fixture's shape"
    );

    let out = claude(&m, &shell, &["-c", "-l", script.as_str()]).run();
    out.code(0).stderr_empty();
    assert!(
        out.elapsed < CLAUDE_STARTUP_LIMIT,
        "the start-up call took {:?}; Claude Code gives it 10 s\n{}",
        out.elapsed,
        out.report()
    );
    assert_eq!(
        fs::read_to_string(&snapshot).unwrap(),
        wrapper::SNAPSHOT_STUB,
        "the snapshot is gate's stub"
    );
    assert_missing(&ran, &out);
    assert!(broker.pending().is_empty(), "the broker was asked");
    let records = m.audit();
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["decided_by"], "agent-startup");
}

/// Claude Code 2.1.197's second start-up call, the environment probe `SHELL -c env`
/// (captured; not detached, on Claude Code's own streams): gate answers it with no
/// output and runs nothing, so the broker is not asked and the key in the environment is
/// not printed. At level `full` with a deny rule, gate answers the snapshot call too,
/// instead of refusing the script that every deny rule matches.
#[test]
fn claude_code_env_probe_is_answered_with_nothing_and_full_with_deny_rules_starts() {
    let f = fixture("claude-code-2.1.197-env-probe-captured");
    let args = fixture_argv(&f);
    assert_eq!(args[1..], ["-c", "env"]);
    let m = Machine::new(User::Current);
    m.config(&CLAUDE_CONFIG.replace("readonly = true", "readonly = false"));
    let broker = Broker::start(&m);
    let shell = m.shim("bash");
    let out = m
        .process(&shell)
        .arg0(&shell)
        .args(["-c", "env"])
        .env("ANTHROPIC_API_KEY", "sk-ant-probe-secret")
        .stdin(In::OpenPipe)
        .output(Out::Files)
        .run();
    out.code(0).stdout_is("").stderr_empty();
    assert!(broker.pending().is_empty(), "the broker was asked");
    let records = m.audit();
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["decided_by"], "agent-startup");
    assert_eq!(records[0]["command"], "(claude-code/env-probe)");

    m.config("level = \"full\"\ndeny = [\"git push --force\"]\n");
    let snapshot = claude_snapshot(&m.t.home, "bash");
    let script = claude_startup_script(&snapshot, &m.t.home);
    claude(&m, &shell, &["-c", "-l", script.as_str()])
        .run()
        .code(0)
        .stderr_empty();
    assert_eq!(
        fs::read_to_string(&snapshot).unwrap(),
        wrapper::SNAPSHOT_STUB,
        "at full with a deny rule the snapshot is gate's stub"
    );
}

/// The Claude Code recipe end to end, with the newest captured wrapper (2.1.332, template
/// `claude-code/2.1`): the start-up call, then an allowed command that runs
/// unasked and writes the cwd file, a command no rule allows that waits for the broker
/// and runs after `gate approve`, and one refused with `gate deny --message`.
#[test]
fn claude_code_through_the_bash_shim_with_a_broker() {
    let f = fixture("claude-code-2.1.332-bash-captured");
    assert_claude_fixture_rebuilds(&f);
    let m = Machine::new(User::Current);
    m.config(CLAUDE_CONFIG);
    let broker = Broker::start(&m);
    let shell = m.shim("bash");
    let snapshot = claude_snapshot(&m.t.home, "bash");
    claude(
        &m,
        &shell,
        &[
            "-c",
            "-l",
            claude_startup_script(&snapshot, &m.t.home).as_str(),
        ],
    )
    .run()
    .code(0);
    let work = m.t.work.canonicalize().unwrap();
    let work = work.to_str().unwrap();

    // Allowed by the read-only preset and by the rule: runs unasked; the bookkeeping
    // writes the cwd file.
    for (command, expected) in [
        ("pwd", format!("{work}\n")),
        ("echo hello", "hello\n".into()),
    ] {
        let cwd = TmpName::claude_cwd();
        let text = claude_text(&f, &snapshot, command, cwd.path());
        let u = wrapper::unwrap(&text).expect("recognised");
        assert_eq!((u.template, u.inner.as_ref()), ("claude-code/2.1", command));
        let out = claude(&m, &shell, &["-c", text.as_str()]).run();
        out.code(0).stdout_is(&expected).stderr_empty();
        assert_eq!(cwd.contents(), format!("{work}\n"), "{}", out.report());
    }
    let records = m.audit();
    let last = records.last().unwrap();
    assert_eq!(
        (&last["command"], &last["wrapper"], &last["decided_by"]),
        (
            &Value::from("echo hello"),
            &Value::from("claude-code/2.1"),
            &Value::from("rule")
        ),
        "gate judged the agent's own command"
    );

    // No rule allows it: the broker is asked about the command alone, and it runs once
    // approved.
    let cwd = TmpName::claude_cwd();
    let mut asking = claude(
        &m,
        &shell,
        &[
            "-c",
            claude_text(&f, &snapshot, "touch approved", cwd.path()).as_str(),
        ],
    )
    .spawn();
    let id = broker.wait_for("touch approved", &mut asking);
    assert!(!m.t.file("approved").exists());
    broker.approve(&id);
    let out = asking.wait();
    out.code(0).stderr_empty();
    assert!(m.t.file("approved").exists(), "{}", out.report());
    assert_eq!(cwd.contents(), format!("{work}\n"), "{}", out.report());

    // Denied with a message: 126, the message on stderr for the model, nothing ran (not
    // even the bookkeeping).
    let cwd = TmpName::claude_cwd();
    let mut asking = claude(
        &m,
        &shell,
        &[
            "-c",
            claude_text(&f, &snapshot, "touch denied", cwd.path()).as_str(),
        ],
    )
    .spawn();
    let id = broker.wait_for("touch denied", &mut asking);
    broker.deny(&id, "use the build directory instead");
    let out = asking.wait();
    out.refused()
        .stderr_has("`touch denied`")
        .stderr_has("use the build directory instead");
    assert_missing(&m.t.file("denied"), &out);
    assert_eq!(cwd.contents(), "", "the bookkeeping ran: {}", out.report());
    assert!(broker.pending().is_empty());
}

/// Claude Code with zsh: `CLAUDE_CODE_SHELL` (or `SHELL`) must contain `zsh`; the zsh shim
/// answers the start-up call and judges the command inside the zsh wrapper.
#[test]
fn claude_code_through_the_zsh_shim() {
    require_program("zsh");
    let f = fixture("claude-code-2.1.332-zsh-captured");
    assert_claude_fixture_rebuilds(&f);
    let m = Machine::new(User::Current);
    m.config(CLAUDE_CONFIG);
    let shell = m.shim("zsh");
    let snapshot = claude_snapshot(&m.t.home, "zsh");
    let script = claude_startup_script(&snapshot, &m.t.home).replace(".bashrc", ".zshrc");
    claude(&m, &shell, &["-c", "-l", script.as_str()])
        .env("CLAUDE_CODE_SHELL", &shell)
        .run()
        .code(0);
    assert_eq!(
        fs::read_to_string(&snapshot).unwrap(),
        wrapper::SNAPSHOT_STUB
    );
    let cwd = TmpName::claude_cwd();
    let text = claude_text(&f, &snapshot, "echo hello", cwd.path());
    assert_eq!(
        wrapper::unwrap(&text).map(|u| u.template),
        Some("claude-code/2.1")
    );
    let out = claude(&m, &shell, &["-c", text.as_str()])
        .env("CLAUDE_CODE_SHELL", &shell)
        .run();
    out.code(0).stdout_is("hello\n").stderr_empty();
    assert!(!cwd.contents().is_empty(), "{}", out.report());
    // Something no rule allows is refused at once: no broker, no terminal.
    let out = claude(
        &m,
        &shell,
        &[
            "-c",
            claude_text(&f, &snapshot, "touch zsh-ran", cwd.path()).as_str(),
        ],
    )
    .run();
    out.refused().stderr_has("`touch zsh-ran`");
    assert_missing(&m.t.file("zsh-ran"), &out);
}

/// Settings that change Claude Code's wrapper make gate judge the whole text, which no
/// allow rule matches: `CLAUDE_CODE_SHELL_PREFIX`, `CLAUDE_ENV_FILE` (and SessionStart
/// hooks), `$TMPDIR` other than /tmp, and a snapshot gate did not write. Under
/// `CLAUDE_CONFIG_DIR` the start-up call itself is not recognised.
#[test]
fn claude_code_settings_that_change_the_wrapper_are_judged_whole() {
    let m = Machine::new(User::Current);
    m.config(CLAUDE_CONFIG);
    let shell = m.shim("bash");
    let snapshot = claude_snapshot(&m.t.home, "bash");
    claude(
        &m,
        &shell,
        &[
            "-c",
            "-l",
            claude_startup_script(&snapshot, &m.t.home).as_str(),
        ],
    )
    .run()
    .code(0);
    let cwd = TmpName::claude_cwd();
    let standard = fixture("claude-code-2.1.2xx-bash-proc-cmdline");

    // The control: the standard wrapper around the same command runs.
    claude(
        &m,
        &shell,
        &[
            "-c",
            claude_text(&standard, &snapshot, "echo hello", cwd.path()).as_str(),
        ],
    )
    .run()
    .code(0)
    .stdout_is("hello\n");
    let written = cwd.contents();
    assert!(!written.is_empty(), "the control's bookkeeping did not run");
    fs::write(cwd.path(), "").unwrap();

    let prefix = claude_text(
        &fixture("claude-code-2.1.185-prefix-pwd"),
        &snapshot,
        "echo hello",
        cwd.path(),
    );
    let env_file = claude_text(
        &fixture("claude-code-2.1.2xx-zsh-session-env"),
        &snapshot,
        "echo hello",
        cwd.path(),
    )
    .replace(
        "setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL",
        "shopt -u extglob",
    );
    let other_tmp = claude_text(
        &standard,
        &snapshot,
        "echo hello",
        "/var/tmp/claude-1a2b-cwd",
    );
    let other_snapshot = claude_snapshot(&m.t.home, "bash").replace("j0hu0n", "abc123");
    fs::write(&other_snapshot, "# Snapshot file\nalias ls='ls -F'\n").unwrap();
    let foreign = claude_text(&standard, &other_snapshot, "echo hello", cwd.path());
    for (what, text) in [
        ("CLAUDE_CODE_SHELL_PREFIX", prefix),
        ("CLAUDE_ENV_FILE", env_file),
        ("TMPDIR=/var/tmp", other_tmp),
        ("a snapshot gate did not write", foreign),
    ] {
        let out = claude(&m, &shell, &["-c", text.as_str()]).run();
        out.refused().stderr_has("gate: refused `source ");
        assert_eq!(out.stdout, "", "{what}: {}", out.report());
        assert_eq!(
            cwd.contents(),
            "",
            "{what}: the wrapper ran\n{}",
            out.report()
        );
    }
    assert!(!Path::new("/var/tmp/claude-1a2b-cwd").exists());

    // CLAUDE_CONFIG_DIR: the snapshot is not under ~/.claude, the start-up call is judged
    // like any command (refused here: no approver), and nothing is written.
    let config_dir_snapshot = snapshot.replace("/.claude/", "/claude-config/");
    let script = claude_startup_script(&config_dir_snapshot, &m.t.home);
    let out = claude(&m, &shell, &["-c", "-l", script.as_str()]).run();
    out.refused().stderr_has("SNAPSHOT_FILE=");
    assert_missing(Path::new(&config_dir_snapshot), &out);
}

// =======================================================================================
// Codex CLI

/// The settings docs/integrations.md gives for Codex CLI (with this test's allow rule).
const CODEX_CONFIG: &str = r#"level = "ask"
shell = "/bin/bash"
readonly = true
allow = ["echo hello"]

[approval]
tty = false
"#;

/// Codex runs `[SHELL, "-lc", CMD]` with SHELL its passwd shell, argv0 that path, in a
/// new session (`detach_from_tty`), stdin /dev/null, output to pipes.
fn codex(m: &Machine, shell: &Path, command: &str) -> Proc {
    m.process(shell)
        .arg0(shell)
        .args(["-lc", command])
        .detached()
        .stdin(In::Null)
}

fn git_init(dir: &Path) {
    let status = Command::new(require_program("git"))
        .args(["init", "-q"])
        .current_dir(dir)
        .env("HOME", dir)
        .stdin(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "git init failed");
}

/// As the login shell, gate runs `-lc` commands: `git status` (read-only) unasked, a
/// command no rule allows after `gate approve`, through the `bash` shim (`chsh -s
/// /usr/lib/gate/bin/bash`, what Codex runs) and through a shell named `gate` (which Codex
/// itself does not pick, see docs/integrations.md, but gate runs the call all the same).
#[test]
fn codex_cli_as_the_login_shell() {
    let m = Machine::new(User::Current);
    m.config(CODEX_CONFIG);
    git_init(&m.t.work);
    let broker = Broker::start(&m);
    for shell in [m.gate(), m.shim("bash")] {
        let out = codex(&m, &shell, "git status").run();
        out.code(0).stdout_has("No commits yet").stderr_empty();

        let name = format!("approved-{}", shell.file_name().unwrap().to_str().unwrap());
        let command = format!("touch {name}");
        let mut asking = codex(&m, &shell, &command).spawn();
        let id = broker.wait_for(&command, &mut asking);
        broker.approve(&id);
        let out = asking.wait();
        out.code(0).stderr_empty();
        assert!(m.t.file(&name).exists(), "{}", out.report());
    }
    let logins: Vec<Value> = m
        .audit()
        .into_iter()
        .filter(|r| r["command"] == "git status")
        .collect();
    assert_eq!(logins.len(), 2, "{logins:?}");
}

/// The login shell is the account's own: an interactive login through it is a shell
/// session, which level `ask` asks about like any command (refused here: no approver).
#[test]
fn codex_cli_login_shell_gates_the_accounts_own_logins() {
    let m = Machine::new(User::Current);
    m.config(CODEX_CONFIG);
    for (program, arg0) in [(m.shim("bash"), "-bash"), (m.gate(), "-gate")] {
        let out = m
            .process(&program)
            .arg0(arg0)
            .detached()
            .stdin(In::OpenPipe)
            .run();
        out.refused().stderr_has("refused an interactive shell");
    }
}

/// Codex's snapshot wrapper from the fixture, with this test's snapshot, shell and
/// command in place of the fixture's: `if . 'SNAP' …; then :; fi` and `exec 'SHELL' -c
/// 'CMD'` (`maybe_wrap_shell_lc_with_snapshot`: each `'` of a value as `'"'"'`).
fn codex_wrapper(snapshot: &str, shell: &str, command: &str) -> String {
    let f = fixture("codex-snapshot-derived");
    let text = fixture_text(&f);
    let (head, _) = text
        .split_once("\n\nexec '")
        .expect("Codex's wrapper execs");
    let captured_snapshot = head
        .strip_prefix("if . '")
        .and_then(|h| h.split_once('\''))
        .expect("Codex's wrapper sources its snapshot first")
        .0;
    let quote = |s: &str| s.replace('\'', "'\"'\"'");
    format!(
        "{}\n\nexec '{}' -c '{}'",
        head.replacen(captured_snapshot, &quote(snapshot), 1),
        quote(shell),
        quote(command)
    )
}

#[test]
fn codex_wrapper_rebuilds_its_fixture() {
    let f = fixture("codex-snapshot-derived");
    let inner = f["expect"]["inner"].as_str().unwrap();
    let snapshot = "/home/user/.codex/shell_snapshots/0199a213-81c0-7800-8aa1-bbab2a035a53.1760000000000000000.sh";
    assert_eq!(
        codex_wrapper(snapshot, "/bin/bash", inner),
        fixture_text(&f)
    );
}

/// Codex's shell snapshot, made as codex-rs makes it (`ShellSnapshot::try_new`; fixtures
/// codex-snapshot-capture-derived and codex-snapshot-check-derived): run the capture
/// script through `SHELL -lc`, keep stdout from the `# Snapshot file` line on in
/// `<id>.tmp-<nanos>`, check that file with `SHELL -c 'set -e; . "FILE"'`, and rename it
/// to `<id>.<nanos>.sh`. `Err` with the failed step's outcome where Codex would give up
/// and run its commands without a snapshot. The capture script gets one line of this
/// test's, which must never run.
fn codex_snapshot(m: &Machine, shell: &Path) -> Result<PathBuf, Done> {
    let dir = m.t.home.join(".codex/shell_snapshots");
    let id = "0199a213-81c0-7800-8aa1-bbab2a035a53";
    let nanos = "1764480000123456789";
    let script = format!(
        "{}touch {}/capture-ran\n",
        fixture_text(&fixture("codex-snapshot-capture-derived")),
        m.t.home.display()
    );
    let out = codex(m, shell, &script).run();
    if out.status.code() != Some(0) {
        return Err(out);
    }
    let Some(at) = out.stdout.find("# Snapshot file") else {
        return Err(out);
    };
    // Codex 0.17x takes the capture in NUL-ended sections and writes the file anew.
    let Some(written) = codex_rewrite_capture(&out.stdout[at..]) else {
        return Err(out);
    };
    // Codex writes the file itself (create_dir_all, fs::write), as the agent's user.
    m.process("/bin/sh")
        .args([
            "-c",
            "mkdir -p \"$1\" && printf %s \"$3\" > \"$1/$2\"",
            "sh",
            dir.to_str().unwrap(),
            &format!("{id}.tmp-{nanos}"),
            &written,
        ])
        .run()
        .code(0);
    let temporary = dir.join(format!("{id}.tmp-{nanos}"));
    let check = codex_c(m, shell, &codex_check_script(&temporary)).run();
    if check.status.code() != Some(0) {
        return Err(check);
    }
    let snapshot = dir.join(format!("{id}.{nanos}.sh"));
    fs::rename(&temporary, &snapshot).unwrap();
    Ok(snapshot)
}

/// What Codex 0.171 writes as its snapshot from a capture (as observed with the real
/// Codex, see tests/real_codex.rs): the capture is the shell's functions and options, a
/// NUL, its aliases, a NUL, then `NAME NUL DECLARATION NUL` per exported variable and a
/// final NUL; the file is the first two sections, a header, and the declarations. `None`
/// where Codex reports an invalid capture.
fn codex_rewrite_capture(captured: &str) -> Option<String> {
    let mut sections = captured.split('\0');
    let (text, aliases) = (sections.next()?, sections.next()?);
    let mut out = format!("{text}{aliases}# exports (native declarations)\n");
    loop {
        let name = sections.next()?;
        if name.is_empty() {
            break;
        }
        out.push_str(sections.next()?);
    }
    Some(out)
}

/// `[SHELL, "-c", TEXT]` as Codex runs it: argv0 the path, detached, stdin /dev/null.
fn codex_c(m: &Machine, shell: &Path, text: &str) -> Proc {
    m.process(shell)
        .arg0(shell)
        .args(["-c", text])
        .detached()
        .stdin(In::Null)
}

/// Codex's check of the snapshot file it wrote.
fn codex_check_script(file: &Path) -> String {
    format!("set -e; . \"{}\"", file.display())
}

/// `[SHELL, "-lc", CMD]` as Codex runs it with its snapshot on: wrapped, and SHELL the
/// shell it execs (the session's shell, here the shim itself).
fn codex_wrapped(m: &Machine, shell: &Path, snapshot: &Path, command: &str) -> Proc {
    let text = codex_wrapper(snapshot.to_str().unwrap(), shell.to_str().unwrap(), command);
    codex_c(m, shell, &text)
}

/// Codex with its `shell_snapshot` on (the default), its login shell the bash shim: gate
/// answers the capture with an empty snapshot and the check without running it, so
/// Codex starts at once; then each wrapped command is judged once, by the gate the
/// wrapper execs, and an approver is asked once.
#[test]
fn codex_cli_with_its_shell_snapshot() {
    let m = Machine::new(User::Current);
    m.config(&CODEX_CONFIG.replace(
        r#"allow = ["echo hello"]"#,
        "allow = [\"echo hello\"]\ndeny = [\"git push\"]",
    ));
    git_init(&m.t.work);
    let shell = m.shim("bash");
    let snapshot = codex_snapshot(&m, &shell).unwrap_or_else(|out| panic!("{}", out.report()));
    assert_eq!(
        fs::read_to_string(&snapshot).unwrap(),
        wrapper::CODEX_SNAPSHOT_STUB
    );
    assert!(!m.t.home.join("capture-ran").exists());
    let startup: Vec<Value> = m
        .audit()
        .into_iter()
        .filter(|r| r["decided_by"] == "agent-startup")
        .collect();
    assert_eq!(startup.len(), 2, "{startup:?}");

    codex_wrapped(&m, &shell, &snapshot, "echo hello")
        .run()
        .code(0)
        .stdout_is("hello\n")
        .stderr_empty();
    codex_wrapped(&m, &shell, &snapshot, "git status")
        .run()
        .code(0)
        .stdout_has("No commits yet")
        .stderr_empty();
    codex_wrapped(&m, &shell, &snapshot, "git push origin main")
        .run()
        .refused()
        .stderr_has("deny rule `git push`");
    // Without an approver, what no rule allows is refused by the inner gate.
    let out = codex_wrapped(&m, &shell, &snapshot, "touch unasked").run();
    out.refused().stderr_has("refused `touch unasked`");
    assert_missing(&m.t.file("unasked"), &out);

    let broker = Broker::start(&m);
    let command = "touch approved-once";
    let mut asking = codex_wrapped(&m, &shell, &snapshot, command).spawn();
    let id = broker.wait_for(command, &mut asking);
    broker.approve(&id);
    let out = asking.wait();
    out.code(0).stderr_empty();
    assert!(m.t.file("approved-once").exists(), "{}", out.report());
    assert!(broker.pending().is_empty());
    let records: Vec<Value> = m
        .audit()
        .into_iter()
        .filter(|r| r["command"] == command)
        .collect();
    let by: Vec<&str> = records
        .iter()
        .map(|r| r["decided_by"].as_str().unwrap())
        .collect();
    assert_eq!(by, ["delegated", "socket"], "{records:?}");
    assert_eq!(records[0]["wrapper"], "codex/snapshot");
}

/// What gate trusts in Codex's wrapper, each with its control: a snapshot that is not
/// gate's stub, a check of such a file, and an exec'd shell that is neither gate nor a
/// system shell of root's make the call judged whole (refused here, no approver); a
/// system shell makes gate judge the command itself.
#[test]
fn codex_cli_forged_snapshots_and_shells_gain_nothing() {
    let m = Machine::new(User::Current);
    m.config(CODEX_CONFIG);
    let shell = m.shim("bash");
    let snapshot = codex_snapshot(&m, &shell).unwrap_or_else(|out| panic!("{}", out.report()));

    // A system shell: this gate judges the command (allowed, then not).
    codex_wrapped(&m, &shell, &snapshot, "echo hello")
        .run()
        .code(0)
        .stdout_is("hello\n");
    let text = codex_wrapper(snapshot.to_str().unwrap(), "/bin/bash", "echo hello");
    let system = |text: &str| codex_c(&m, &shell, text).run();
    system(&text).code(0).stdout_is("hello\n");
    let audit = m.audit();
    assert_eq!(audit.last().unwrap()["decided_by"], "rule", "{audit:?}");
    let text = codex_wrapper(snapshot.to_str().unwrap(), "/bin/bash", "touch x");
    system(&text).refused().stderr_has("refused `touch x`");

    // A bash of the user's own, in a directory others may write: not trusted.
    let own = m.t.root.join("open-dir");
    fs::create_dir(&own).unwrap();
    fs::set_permissions(&own, fs::Permissions::from_mode(0o777)).unwrap();
    fs::copy(bash(), own.join("bash")).unwrap();
    let text = codex_wrapper(
        snapshot.to_str().unwrap(),
        own.join("bash").to_str().unwrap(),
        "echo hello",
    );
    system(&text).refused().stderr_has("gate: refused `if . '");
    // Gate itself, but not through the shim: a link in that open directory.
    fs::remove_file(own.join("bash")).unwrap();
    std::os::unix::fs::symlink(gate_binary_for(m.user), own.join("bash")).unwrap();
    system(&text).refused().stderr_has("gate: refused `if . '");

    // The snapshot edited after the check: the wrapper is judged whole.
    fs::write(
        &snapshot,
        format!("# Snapshot file\ntouch {}/sourced\n", m.t.home.display()),
    )
    .unwrap();
    let out = codex_wrapped(&m, &shell, &snapshot, "echo hello").run();
    out.refused().stderr_has("gate: refused `if . '");
    assert_missing(&m.t.home.join("sourced"), &out);

    // A check of a file that is not the stub is judged like any command.
    let temporary = snapshot.with_file_name("0199a213-81c0-7800-8aa1-bbab2a035a53.tmp-1");
    fs::write(
        &temporary,
        format!("# Snapshot file\ntouch {}/checked\n", m.t.home.display()),
    )
    .unwrap();
    let out = system(&codex_check_script(&temporary));
    out.refused().stderr_has("refused `set -e;");
    assert_missing(&m.t.home.join("checked"), &out);
    // The control: the stub is checked without running anything.
    fs::write(&temporary, wrapper::SNAPSHOT_STUB).unwrap();
    system(&codex_check_script(&temporary))
        .code(0)
        .stdout_is("")
        .stderr_empty();
}

/// At level `safe` the wrapper runs outside the sandbox (it only sources gate's stub and
/// execs gate), and the gate it execs runs the command inside it: the command can write
/// the workspace, not HOME, and both gates write their audit records. Root and uid 65534.
#[test]
fn codex_cli_with_its_shell_snapshot_at_level_safe() {
    for user in [User::Current, User::Unprivileged] {
        // Not under /tmp, which the sandbox leaves writable.
        let m = Machine::new_in("/var/tmp", user);
        m.config(&CODEX_CONFIG.replace("level = \"ask\"", "level = \"safe\""));
        let shell = m.shim("bash");
        let snapshot = codex_snapshot(&m, &shell).unwrap_or_else(|out| panic!("{}", out.report()));
        assert!(!m.t.home.join("capture-ran").exists());
        codex_wrapped(&m, &shell, &snapshot, "touch inside && echo done")
            .run()
            .code(0)
            .stdout_is("done\n")
            .stderr_empty();
        assert!(m.t.work.join("inside").exists());
        let outside = m.t.home.join("outside");
        let out = codex_wrapped(
            &m,
            &shell,
            &snapshot,
            &format!("touch {}", outside.display()),
        )
        .run();
        assert_ne!(out.status.code(), Some(0), "{}", out.report());
        assert_missing(&outside, &out);
        let records: Vec<Value> = m
            .audit()
            .into_iter()
            .filter(|r| r["command"] == "touch inside && echo done")
            .collect();
        assert_eq!(records.len(), 2, "{records:?}");
        assert_eq!(records[0]["decided_by"], "delegated");
        assert!(records[0]["sandbox"].is_null());
        assert_eq!(records[1]["decided_by"], "level");
        assert!(records[1]["sandbox"].is_object(), "{records:?}");
    }
}

// =======================================================================================
// Aider

/// Aider 0.86 on a terminal: `run_cmd_pexpect` in aider/run_cmd.py, that is
/// `pexpect.spawn($SHELL, ["-i", "-c", command])`, a child that leads a new session on a
/// pseudo-terminal of its own, output read from the terminal's master side. (Without a
/// terminal Aider runs `/bin/sh -c` by its path, which no `SHELL` can route through gate;
/// tests/real_aider.rs runs the real Aider both ways.) Prints the status and the output.
const AIDER_RUN_CMD: &str = r#"
import json, os, pty, sys
shell = os.environ.get("SHELL", "/bin/sh")
pid, fd = pty.fork()
if pid == 0:
    os.execv(shell, [shell, "-i", "-c", sys.argv[1]])
chunks = []
while True:
    try:
        data = os.read(fd, 4096)
    except OSError:
        break
    if not data:
        break
    chunks.append(data)
_, status = os.waitpid(pid, 0)
output = b"".join(chunks).decode(errors="replace").replace("\r\n", "\n")
print(json.dumps({"status": os.waitstatus_to_exitcode(status), "output": output}))
"#;

fn aider(m: &Machine, shell: &Path, command: &str) -> Proc {
    m.process(python3_for(m.user))
        .args(["-c", AIDER_RUN_CMD, command])
        .env("SHELL", shell)
        .detached()
        .stdin(In::OpenPipe)
}

fn aider_result(out: &Done) -> (i64, String) {
    out.code(0).stderr_empty();
    let v: Value =
        serde_json::from_str(out.stdout.trim()).unwrap_or_else(|e| panic!("{e}\n{}", out.report()));
    (
        v["status"].as_i64().unwrap(),
        v["output"].as_str().unwrap().to_owned(),
    )
}

/// Aider's `$SHELL -i -c CMD` on its own terminal, through the `bash` shim and through
/// gate itself.
#[test]
fn aider_runs_shell_dash_i_dash_c_on_its_own_terminal() {
    let m = Machine::new(User::Current);
    m.config(CODEX_CONFIG);
    let broker = Broker::start(&m);
    for shell in [m.shim("bash"), m.gate()] {
        let (status, output) = aider_result(&aider(&m, &shell, "echo hello").run());
        assert_eq!((status, output.as_str()), (0, "hello\n"));

        let mut asking = aider(&m, &shell, "touch aider-approved").spawn();
        let id = broker.wait_for("touch aider-approved", &mut asking);
        broker.approve(&id);
        let out = asking.wait();
        assert_eq!(aider_result(&out), (0, String::new()));
        assert!(m.t.file("aider-approved").exists(), "{}", out.report());
        fs::remove_file(m.t.file("aider-approved")).unwrap();

        let mut asking = aider(&m, &shell, "touch aider-denied").spawn();
        let id = broker.wait_for("touch aider-denied", &mut asking);
        broker.deny(&id, "not now");
        let out = asking.wait();
        let (status, output) = aider_result(&out);
        assert_eq!(status, 126, "{}", out.report());
        assert!(
            output.starts_with("gate: refused `touch aider-denied`") && output.contains("not now"),
            "{output}"
        );
        assert_missing(&m.t.file("aider-denied"), &out);
    }
}

// =======================================================================================
// Continue

/// Continue: `spawn($SHELL, ["-l", "-c", CMD])`, stdin a pipe, output to pipes; the IDE's
/// extension host has no terminal.
fn continue_dev(m: &Machine, shell: &Path, command: &str) -> Proc {
    m.process(shell)
        .arg0(shell)
        .args(["-l", "-c", command])
        .env("SHELL", shell)
        .detached()
        .stdin(In::OpenPipe)
}

/// `$SHELL -l -c CMD`: gate judges CMD and runs it, through the shim and through gate
/// itself, in a shell that is not a login shell: a login shell would read
/// `~/.bash_profile` before CMD, a file the model can write (tests/rc_files.rs).
#[test]
fn continue_runs_its_login_form_without_a_login_shell() {
    let m = Machine::new(User::Current);
    m.config(&CODEX_CONFIG.replace(
        r#"allow = ["echo hello"]"#,
        r#"allow = ["echo hello", "shopt -q login_shell"]"#,
    ));
    let broker = Broker::start(&m);
    assert_eq!(fs::read_dir(&m.t.home).unwrap().count(), 0, "HOME is empty");
    for shell in [m.shim("bash"), m.gate()] {
        continue_dev(&m, &shell, "shopt -q login_shell")
            .run()
            .code(1)
            .stderr_empty();
        continue_dev(&m, &shell, "echo hello")
            .run()
            .code(0)
            .stdout_is("hello\n");
        let mut asking = continue_dev(&m, &shell, "touch continue-denied").spawn();
        let id = broker.wait_for("touch continue-denied", &mut asking);
        broker.deny(&id, "ask first");
        let out = asking.wait();
        out.refused().stderr_has("ask first");
        assert_missing(&m.t.file("continue-denied"), &out);
    }
    // The control: the same check finds a login shell in the real bash started so.
    let bash = require_program("bash");
    m.process(&bash)
        .arg0(&bash)
        .args(["-l", "-c", "shopt -q login_shell"])
        .detached()
        .run()
        .code(0);
    assert_eq!(fs::read_dir(&m.t.home).unwrap().count(), 0, "HOME is empty");
}

// =======================================================================================
// Gemini CLI

/// Gemini CLI: `bash` found on PATH (the shim directory first), argv0 `bash`, `-c TEXT`,
/// spawned detached with stdin ignored (`child_process.spawn`; see the pty test for
/// node-pty).
fn gemini(m: &Machine, text: &str) -> Proc {
    let vars = m.vars_with_shims_first();
    let path = vars[&OsString::from("PATH")].clone();
    let bash = std::env::split_paths(&path)
        .map(|d| d.join("bash"))
        .find(|p| p.is_file())
        .expect("bash on PATH");
    assert_eq!(bash, m.shim("bash"), "the shim is the first bash on PATH");
    m.process(bash)
        .envs(vars)
        .arg0("bash")
        .args(["-c", text])
        .detached()
        .stdin(In::Null)
}

/// The captured shopt-guard wrapper around `command`, with this test's pgrep file.
fn gemini_text(command: &str, pgrep: &str) -> String {
    let f = fixture("gemini-cli-shopt-guard-ps-grep");
    let text = fixture_text(&f);
    let inner = f["expect"]["inner"].as_str().unwrap();
    let at = text
        .find("/tmp/shell_pgrep_")
        .expect("a pgrep file in /tmp");
    let captured_pgrep = &text[at..at + "/tmp/shell_pgrep_".len() + 12 + ".tmp".len()];
    let ours = text
        .replacen(&format!("{{ {inner}; }}"), &format!("{{ {command}; }}"), 1)
        .replacen(captured_pgrep, pgrep, 1);
    let u = wrapper::unwrap(&ours).expect("recognised");
    assert_eq!(
        (u.template, u.inner.as_ref()),
        ("gemini-cli/shopt-guard", command)
    );
    ours
}

const GEMINI_CONFIG: &str = CODEX_CONFIG;

/// gate judges the command inside Gemini CLI's wrapper: an allowed one runs and the
/// bookkeeping writes the pgrep file; one no rule allows waits for the broker, and
/// `gate deny --message` refuses it with the message.
#[test]
fn gemini_cli_runs_bash_from_path() {
    let m = Machine::new(User::Current);
    m.config(GEMINI_CONFIG);
    let broker = Broker::start(&m);
    let pgrep = TmpName::gemini_pgrep();
    let out = gemini(&m, &gemini_text("echo hello", pgrep.path())).run();
    out.code(0).stdout_is("hello\n").stderr_empty();
    assert!(
        !pgrep.contents().is_empty(),
        "the pgrep bookkeeping did not run"
    );
    let last = m.audit().pop().unwrap();
    assert_eq!(last["wrapper"], "gemini-cli/shopt-guard");

    let pgrep = TmpName::gemini_pgrep();
    let mut asking = gemini(&m, &gemini_text("touch gemini-denied", pgrep.path())).spawn();
    let id = broker.wait_for("touch gemini-denied", &mut asking);
    broker.deny(&id, "use the scratch directory");
    let out = asking.wait();
    out.refused().stderr_has("use the scratch directory");
    assert_missing(&m.t.file("gemini-denied"), &out);
    assert_eq!(pgrep.contents(), "", "the bookkeeping ran");
}

/// Gemini CLI with node-pty runs the shell on a pseudo-terminal that becomes its
/// controlling terminal. Without a broker gate would prompt there, on the agent's own
/// output; with `approval.tty = false` it refuses at once instead.
#[test]
fn gemini_cli_under_node_pty_with_the_terminal_off_refuses_at_once() {
    let m = Machine::new(User::Current);
    m.config(GEMINI_CONFIG);
    let pgrep = TmpName::gemini_pgrep();
    let proc = gemini(&m, &gemini_text("touch pty-ran", pgrep.path()));
    let (master, slave) = openpty();
    let mut command = proc.command();
    let slave_fd = slave.as_raw_fd();
    // SAFETY: between fork and exec, only async-signal-safe calls: ioctl to take the
    // pseudo-terminal as the controlling terminal of the new session (made by the
    // earlier pre_exec hook), and dup2 onto the standard descriptors.
    unsafe {
        command.pre_exec(move || {
            if libc::ioctl(slave_fd, libc::TIOCSCTTY, 0) == -1 {
                return Err(io::Error::last_os_error());
            }
            for fd in 0..3 {
                if libc::dup2(slave_fd, fd) == -1 {
                    return Err(io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    drop(slave);
    let screen = reader(fs::File::from(master));
    let end = Instant::now() + WAIT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > end {
            let _ = child.kill();
            let _ = child.wait();
            panic!("gate waited on the pseudo-terminal");
        }
        thread::sleep(Duration::from_millis(5));
    };
    let screen = String::from_utf8_lossy(&screen.recv_timeout(WAIT).unwrap()).into_owned();
    assert_eq!(status.code(), Some(REFUSED), "{screen}");
    assert!(
        screen.starts_with("gate: refused `touch pty-ran`"),
        "{screen:?}"
    );
    assert!(!screen.contains("may this command run"), "{screen:?}");
    assert!(!m.t.file("pty-ran").exists());
}

fn openpty() -> (OwnedFd, OwnedFd) {
    let mut master = -1;
    let mut slave = -1;
    // SAFETY: openpty(3) with valid pointers to two ints and null name/termios/winsize.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", io::Error::last_os_error());
    // SAFETY: openpty returned two new descriptors that nothing else owns.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    // The child must not keep the master open, or reading it would never end.
    // SAFETY: fcntl on a descriptor this function owns.
    unsafe {
        libc::fcntl(master.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC);
    }
    (master, slave)
}

/// A script that starts with `#!/usr/bin/env bash`, as most do, for [`run_in_make`].
fn bash_script_and_makefile(m: &Machine) {
    let scripts = m.t.work.join("scripts");
    fs::create_dir_all(&scripts).unwrap();
    let script = scripts.join("test.sh");
    fs::write(
        &script,
        "#!/usr/bin/env bash\necho \"tests ran in bash $BASH_VERSION\"\n",
    )
    .unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    fs::write(m.t.work.join("Makefile"), "test:\n\t./scripts/test.sh\n").unwrap();
    for path in [&scripts, &m.t.work] {
        if uid_of(m.user) != effective_uid() {
            std::os::unix::fs::chown(path, Some(uid_of(m.user)), None).unwrap();
        }
    }
}

/// The user's expectation: an allowed command runs, including the bash scripts it
/// starts. The shim directory is first on the agent's PATH (Gemini CLI needs it there),
/// but gate takes its shim directories off the PATH of the command it runs, so the
/// script's `#!/usr/bin/env bash` finds the real bash and `make test` runs whole.
#[test]
fn gemini_cli_an_allowed_command_may_start_bash_from_path() {
    let m = Machine::new(User::Current);
    m.config(&GEMINI_CONFIG.replace(r#"allow = ["echo hello"]"#, r#"allow = ["make test"]"#));
    bash_script_and_makefile(&m);
    let pgrep = TmpName::gemini_pgrep();
    let out = gemini(&m, &gemini_text("make test", pgrep.path())).run();
    out.code(0).stdout_has("tests ran in bash ").stderr_empty();
}

// =======================================================================================
// A Python SDK host with its own approver on the socket protocol

/// A host program's shell tool, as an SDK host would write it: each command the model
/// asks for runs as `gate -c COMMAND` in a session of its own, stdin /dev/null, output
/// captured, with `GATE_SOCKET` pointing at the host's approver.
const SDK_HOST: &str = r#"
import json, os, subprocess, sys
socket_path, commands = sys.argv[1], sys.argv[2:]
env = dict(os.environ, GATE_SOCKET=socket_path)
results = []
for command in commands:
    done = subprocess.run(
        ["gate", "-c", command],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        start_new_session=True,
        timeout=90,
    )
    results.append({"status": done.returncode, "stdout": done.stdout, "stderr": done.stderr})
print(json.dumps(results))
"#;

#[test]
fn python_sdk_host_with_the_reference_approver() {
    let m = Machine::new(User::Current);
    m.config("level = \"ask\"\nshell = \"/bin/bash\"\n\n[approval]\ntty = false\n");
    let python = python3_for(m.user);
    let dir = m.t.root.join("host");
    fs::create_dir(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
    let socket = dir.join("approver.sock");
    let approver_py = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/approver.py");
    let approver = m
        .process(&python)
        .args([
            approver_py.as_os_str(),
            "--socket".as_ref(),
            socket.as_os_str(),
        ])
        .args([
            "--allow-prefix",
            "touch approved",
            "--allow-prefix",
            "echo hello",
        ])
        .output(Out::Files)
        .spawn();
    let end = Instant::now() + WAIT;
    while !socket.exists() {
        assert!(Instant::now() < end, "the approver did not listen in time");
        thread::sleep(Duration::from_millis(5));
    }
    let out = m
        .process(&python)
        .args(["-c", SDK_HOST])
        .arg0("python3")
        .args([
            socket.to_str().unwrap(),
            "echo hello world",
            "touch approved",
            "touch denied",
            "touch approved; touch pwned",
        ])
        .detached()
        .run();
    out.code(0).stderr_empty();
    let results: Vec<Value> = serde_json::from_str(out.stdout.trim()).unwrap();
    let status: Vec<i64> = results
        .iter()
        .map(|r| r["status"].as_i64().unwrap())
        .collect();
    assert_eq!(status, [0, 0, 126, 126], "{}", out.report());
    assert_eq!(results[0]["stdout"], "hello world\n");
    for r in &results[2..] {
        let stderr = r["stderr"].as_str().unwrap();
        assert!(
            stderr.starts_with("gate: refused `touch ") && stderr.contains("approver"),
            "{stderr}"
        );
    }
    assert!(m.t.file("approved").exists());
    for name in ["denied", "pwned"] {
        assert_missing(&m.t.file(name), &out);
    }
    drop(approver);
}

// =======================================================================================
// CI: GitHub Actions `shell:` and GitLab CI, at level safe

/// A runner's machine: the tree in /var/tmp (the sandbox hides ~/.ssh, which must not be
/// in /tmp), the workspace the user's, a secret in ~/.ssh the user can read without the
/// sandbox.
fn runner(user: User) -> Machine {
    let m = Machine::new_in("/var/tmp", user);
    let uid = uid_of(user);
    let ssh = m.t.home.join(".ssh");
    fs::create_dir(&ssh).unwrap();
    fs::write(ssh.join("id_test"), "SECRET\n").unwrap();
    for path in [&ssh, &ssh.join("id_test"), &m.t.work] {
        if uid != effective_uid() {
            std::os::unix::fs::chown(path, Some(uid), Some(uid)).unwrap();
        }
    }
    m
}

/// The GitHub Actions `shell:` line of docs/ci.md, `{0}` replaced by `script`, `gate` by
/// gate's path, and the level by `level`.
fn github_shell_line(m: &Machine, script: &Path, level: &str) -> Vec<String> {
    let doc = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ci.md")).unwrap();
    let line = doc
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("shell: gate "))
        .expect("docs/ci.md has a `shell: gate ...` line");
    let words: Vec<String> = line["shell: ".len()..]
        .split_whitespace()
        .map(|w| match w {
            "gate" => m.gate().to_str().unwrap().to_owned(),
            "{0}" => script.to_str().unwrap().to_owned(),
            "safe" => level.to_owned(),
            w => w.to_owned(),
        })
        .collect();
    assert!(words.contains(&"--level".to_owned()) && words.contains(&level.to_owned()));
    words
}

const STEP: &str = r#"echo "shell: bash ${BASH_VERSINFO[0]}"
[[ -o errexit ]] && echo "errexit: on"
[[ -o pipefail ]] && echo "pipefail: on"
id -u > built-in-workspace
if (cat ~/.ssh/id_test) >/dev/null 2>&1; then echo "secret: read"; else echo "secret: hidden"; fi
if (echo x > "$HOME/escaped") 2>/dev/null; then echo "home: written"; else echo "home: not writable"; fi
false | true
echo "not reached"
"#;

for_each_user! {
    /// The `shell:` line runs a step's script in the sandbox: bash with `-eo pipefail`,
    /// the workspace writable, HOME not, ~/.ssh hidden. The control at level `full` shows
    /// what the sandbox took away.
    fn ci_github_actions_shell_line_runs_the_step_in_the_sandbox(user) {
        let m = runner(user);
        let script = m.t.write("runner-temp/step.sh", STEP);
        let escaped = m.t.home.join("escaped");
        for (level, secret, home) in
            [("safe", "secret: hidden", "home: not writable"), ("full", "secret: read", "home: written")]
        {
            let argv = github_shell_line(&m, &script, level);
            let out = m
                .process(&argv[0])
                .args(&argv[1..])
                .detached()
                .stdin(In::OpenPipe)
                .run();
            out.code(1)
                .stdout_has("shell: bash 5")
                .stdout_has("errexit: on")
                .stdout_has("pipefail: on")
                .stdout_has(secret)
                .stdout_has(home);
            assert!(!out.stdout.contains("not reached"), "{}", out.report());
            assert_eq!(
                fs::read_to_string(m.t.file("built-in-workspace")).unwrap().trim(),
                uid_of(user).to_string()
            );
            fs::remove_file(m.t.file("built-in-workspace")).unwrap();
            assert_eq!(escaped.exists(), level == "full", "{}", out.report());
            let _ = fs::remove_file(&escaped);
        }
    }

    /// GitLab's `gate --level safe -c 'make test'` (the job shell runs it), and the agent
    /// step of both: `SHELL` gate and the shims first on PATH, so that `$SHELL -c` and
    /// `bash -c` from PATH both run in the sandbox at the configured level.
    fn ci_gitlab_script_line_and_the_agent_step_run_in_the_sandbox(user) {
        let m = runner(user);
        fs::write(
            m.t.work.join("Makefile"),
            "test:\n\tid -u > tested-in-workspace\n\techo x > $(HOME)/escaped\n",
        )
        .unwrap();
        let escaped = m.t.home.join("escaped");
        let job = |line: &str| {
            m.process(require_program("bash"))
                .args(["--noprofile", "--norc", "-c", line])
                .env("GATE_SHELL", "/bin/bash")
                .detached()
                .stdin(In::OpenPipe)
                .run()
        };
        let out = job("gate --level safe -c 'make test'");
        out.code(2).stderr_has("Permission denied");
        assert!(m.t.file("tested-in-workspace").exists(), "{}", out.report());
        assert_missing(&escaped, &out);
        // The control: at full, the same line writes HOME.
        job("gate --level full -c 'make test'").code(0);
        assert!(escaped.exists());
        fs::remove_file(&escaped).unwrap();

        // The agent step: the agent runs `$SHELL -c CMD`, or `bash -c CMD` from PATH.
        let command = "id -u > agent-wrote; echo x > \"$HOME/escaped\"";
        for (program, arg0) in [(m.gate(), m.gate().into_os_string()), (m.shim("bash"), "bash".into())] {
            let out = m
                .process(&program)
                .envs(m.vars_with_shims_first())
                .env("SHELL", m.gate())
                .env("GATE_LEVEL", "safe")
                .env("GATE_SHELL", "/bin/bash")
                .arg0(arg0)
                .args(["-c", command])
                .detached()
                .stdin(In::OpenPipe)
                .run();
            out.code(1).stderr_has("Permission denied");
            assert!(m.t.file("agent-wrote").exists(), "{}", out.report());
            fs::remove_file(m.t.file("agent-wrote")).unwrap();
            assert_missing(&escaped, &out);
        }
    }

    /// The user's expectation: in the agent step, a command may run a script that starts
    /// with `#!/usr/bin/env bash`, under docs/ci.md's locked configuration (the audit log
    /// required) with the shims first on PATH. The command gets PATH without the shim
    /// directories, so the script's `bash` is the real one, not a gate inside the sandbox
    /// that could not write the audit log.
    fn ci_agent_step_a_command_may_run_a_bash_script(user) {
        let m = runner(user);
        m.config("level = \"safe\"\nshell = \"/bin/bash\"\n\n[approval]\ntty = false\n\n[audit]\nrequired = true\n");
        bash_script_and_makefile(&m);
        for command in ["./scripts/test.sh", "make test"] {
            let out = m
                .process(m.gate())
                .envs(m.vars_with_shims_first())
                .env("SHELL", m.gate())
                .arg0(m.gate())
                .args(["-c", command])
                .detached()
                .stdin(In::OpenPipe)
                .run();
            out.code(0).stdout_has("tests ran in bash ").stderr_empty();
        }
    }
}

/// A Codex wrapper gate does not know (here the 0.171 capture with one word changed, as
/// a new release might): judged whole, and the refusal, `gate check` and the audit
/// record say that it looks like Codex's wrapper, so the user knows why nothing is
/// allowed.
#[test]
fn codex_cli_a_wrapper_of_another_version_is_named_as_such() {
    let text = fixture_text(&fixture("codex-0.171-snapshot-env-echo")).replacen(
        "then :; fi",
        "then true; fi",
        1,
    );
    let env = TestEnv::new();
    env.write_user_config("level = \"ask\"\nallow = [\"echo\"]\n");
    let note = "it looks like Codex CLI's wrapper, a version gate does not know";
    let check = env.gate().args(["check", "-c", &text]).run();
    assert!(check.stdout().contains(note), "{}", check.report());
    let run = env.gate().args(["-c", &text]).run();
    run.assert_refused();
    assert!(run.stderr().contains(note), "{}", run.report());
    let records = audit_records(&env.default_audit_log());
    assert!(
        records
            .iter()
            .any(|r| r["message"].as_str().is_some_and(|m| m.contains(note))),
        "{records:?}"
    );
}
