//! Shared helpers for gate's black-box tests.
//!
//! Every gate process a test starts goes through [`Gate`], which isolates it from the
//! developer's machine: the environment is cleared and rebuilt from scratch (no `GATE_*`
//! variable, no `BASH_ENV`/`ENV` start-up files), `HOME`, `XDG_STATE_HOME` and
//! `XDG_CONFIG_HOME` point into a fresh temporary directory ([`TestEnv`]), and every wait
//! has a deadline, after which the whole process group is killed and the test fails
//! instead of hanging.
//!
//! Security tests run twice: as the current user and as an unprivileged one
//! ([`User::Unprivileged`]: uid/gid 65534 through `setpriv` when the tests run as root,
//! the current user otherwise). The [`for_each_user!`] macro writes both tests.

#![allow(dead_code)]

pub mod netproxy;
pub mod real_agents;
pub mod tmux;

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

/// The gate binary cargo built for these tests.
pub const GATE: &str = env!("CARGO_BIN_EXE_gate");

/// gate's exit status when policy refused the command.
pub const REFUSED: i32 = 126;
/// gate's exit status for its own errors.
pub const GATE_ERROR: i32 = 125;

/// The uid and gid the unprivileged runs use when the tests run as root.
pub const NOBODY: u32 = 65534;

/// How long one gate process may take before the test fails. Generous, because CI
/// machines are small and busy; a healthy run takes milliseconds.
pub const DEADLINE: Duration = Duration::from_secs(20);

// ---------------------------------------------------------------------------------------
// Who runs gate.

/// Who a gate process runs as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum User {
    /// The user running the tests.
    Current,
    /// uid/gid 65534 when the tests run as root; the current (already unprivileged) user
    /// otherwise.
    Unprivileged,
}

/// The effective uid of the test process, from /proc/self/status.
pub fn effective_uid() -> u32 {
    let status = fs::read_to_string("/proc/self/status")
        .expect("cannot read /proc/self/status: these tests need Linux /proc");
    let line = status
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .expect("/proc/self/status has no Uid line");
    line.split_whitespace()
        .nth(2)
        .and_then(|u| u.parse().ok())
        .expect("/proc/self/status has a malformed Uid line")
}

pub fn running_as_root() -> bool {
    effective_uid() == 0
}

/// The root tier's reason for ignoring a test, the one `#[ignore]` the default tier
/// (`tests/all.rs`) allows: `cargo test --lib --test all -- --ignored` runs exactly these.
pub const ROOT_TIER: &str = "root tier: cargo test --lib --test all -- --ignored, as root";

/// Fail unless this test runs in the root tier, as root: a test that needs root and is not
/// marked for that tier fails in the default tier (as root too), instead of passing there
/// by luck or skipping. `why` says what the test does that needs root.
///
/// The root tier is the ignored tests of `all`, run with `--ignored` (libtest's own
/// arguments, which the test process sees).
#[track_caller]
pub fn needs_root(why: &str) {
    let in_root_tier = std::env::args().any(|a| a == "--ignored" || a == "--include-ignored");
    assert!(
        in_root_tier,
        "{why}\n  a test that needs root belongs in the root tier: mark it \
         #[ignore = \"{ROOT_TIER}\"] (or write `needs root because …` in for_each_user!)"
    );
    assert!(
        running_as_root(),
        "{why}\n  run the root tier as root (CI does)"
    );
}

/// The uid a process started as `user` has.
pub fn uid_of(user: User) -> u32 {
    match user {
        User::Unprivileged if running_as_root() => NOBODY,
        _ => effective_uid(),
    }
}

/// Find a program on the test process's PATH (or in the usual places), or panic naming
/// what is missing.
pub fn require_program(name: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs = std::env::split_paths(&path)
        .chain(["/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"].map(PathBuf::from));
    for dir in dirs {
        let candidate = dir.join(name);
        if let Ok(meta) = fs::metadata(&candidate) {
            if meta.is_file() && meta.permissions().mode() & 0o111 != 0 {
                return candidate;
            }
        }
    }
    panic!("these tests need `{name}`, which is not installed (not found on PATH)");
}

/// Every user can execute `path`: it and each directory above it are open to others.
pub fn usable_by_everyone(path: &Path) -> bool {
    let Ok(real) = path.canonicalize() else {
        return false;
    };
    let Ok(meta) = fs::metadata(&real) else {
        return false;
    };
    meta.is_file()
        && meta.permissions().mode() & 0o001 != 0
        && real
            .ancestors()
            .skip(1)
            .all(|dir| fs::metadata(dir).is_ok_and(|m| m.permissions().mode() & 0o001 != 0))
}

/// A python3 that uid 65534 can run too (a python3 under /root, e.g. a pyenv shim, is
/// skipped). Used for everything a shell cannot do: sockets, ioctls, raw system calls.
pub fn python3() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let path = std::env::var_os("PATH").unwrap_or_default();
        std::env::split_paths(&path)
            .chain(["/usr/local/bin", "/usr/bin", "/bin"].map(PathBuf::from))
            .map(|dir| dir.join("python3"))
            .find(|candidate| usable_by_everyone(candidate))
            .unwrap_or_else(|| {
                panic!(
                    "these tests need a python3 that every user can run (uid {NOBODY} too); \
                     none was found on PATH or in /usr/bin"
                )
            })
    })
}

/// `bash`, which several tests need for its options; a missing bash fails them loudly.
pub fn bash() -> PathBuf {
    require_program("bash")
}

/// The gate executable a process running as `user` can execute: the build's binary, or
/// for the unprivileged user (when the tests run as root) a copy it can reach. For
/// starting gate from another program (a terminal multiplexer, a shell).
pub fn gate_binary_for(user: User) -> PathBuf {
    if user == User::Unprivileged && running_as_root() {
        unprivileged_gate().to_path_buf()
    } else {
        PathBuf::from(GATE)
    }
}

/// A [`Command`] for `program` that runs as `user`: through `setpriv` as uid/gid 65534
/// when the tests run as root and `user` is [`User::Unprivileged`], directly otherwise.
/// Nothing else is set: the caller chooses the environment.
pub fn command_as(user: User, program: impl AsRef<OsStr>) -> Command {
    if user == User::Unprivileged && running_as_root() {
        let mut command = Command::new(require_program("setpriv"));
        command
            .arg(format!("--reuid={NOBODY}"))
            .arg(format!("--regid={NOBODY}"))
            .arg("--clear-groups")
            .arg("--")
            .arg(program);
        command
    } else {
        Command::new(program)
    }
}

/// The directory that holds the copy of gate the unprivileged user runs.
static UNPRIVILEGED_GATE: OnceLock<PathBuf> = OnceLock::new();

const COPY_PREFIX: &str = "gate-tests-unprivileged-";

/// A copy of gate that uid 65534 can execute: the build directory need not be
/// traversable by other users. Copied once per test binary, into a directory named after
/// the test process; copies left by test processes that no longer exist are removed.
pub fn unprivileged_gate() -> &'static Path {
    UNPRIVILEGED_GATE.get_or_init(|| {
        let tmp = std::env::temp_dir();
        remove_stale_copies(&tmp);
        let dir = tmp.join(format!("{COPY_PREFIX}{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        let copy = dir.join("gate");
        // Copied by another process: were this (multi-threaded) process to hold the file
        // open for writing, a child forked meanwhile by another test would inherit that
        // descriptor until its exec, and executing the copy would fail with ETXTBSY.
        let status = Command::new(require_program("cp"))
            .arg(GATE)
            .arg(&copy)
            .status()
            .unwrap_or_else(|e| panic!("cannot run cp: {e}"));
        assert!(status.success(), "cannot copy {GATE} to {}", copy.display());
        fs::set_permissions(&copy, fs::Permissions::from_mode(0o755)).unwrap();
        for ancestor in dir.ancestors().skip(1) {
            let mode = fs::metadata(ancestor).unwrap().permissions().mode();
            assert!(
                mode & 0o001 != 0,
                "{} (mode {mode:o}) is not traversable by other users, so uid {NOBODY} cannot \
                 run the copy of gate in {}; set TMPDIR to a world-traversable directory",
                ancestor.display(),
                dir.display()
            );
        }
        copy
    })
}

fn remove_stale_copies(tmp: &Path) {
    let Ok(entries) = fs::read_dir(tmp) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(COPY_PREFIX))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

// ---------------------------------------------------------------------------------------
// The isolated environment.

/// A private runtime directory (XDG_RUNTIME_DIR) owned by `user`, in the test's tree.
pub fn runtime_dir(env: &TestEnv, user: User) -> PathBuf {
    let uid = uid_of(user);
    let dir = env.root.join(format!("run-{uid}"));
    fs::create_dir(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
    std::os::unix::fs::chown(&dir, Some(uid), Some(uid)).unwrap();
    dir
}

/// A fresh directory tree for one test: home, state, config and a working directory.
/// Every directory is writable by the unprivileged user, so that a file an unprivileged
/// command would create can be created: its absence then proves nothing ran.
pub struct TestEnv {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
    /// XDG_STATE_HOME
    pub state: PathBuf,
    /// XDG_CONFIG_HOME
    pub config: PathBuf,
    /// XDG_RUNTIME_DIR: gate keeps the broker's socket and remembered approvals in
    /// its `gate/` subdirectory, so no test meets a broker the developer runs.
    pub runtime: PathBuf,
    /// The working directory of every gate process.
    pub work: PathBuf,
}

impl TestEnv {
    pub fn new() -> TestEnv {
        TestEnv::new_in(std::env::temp_dir())
    }

    /// A fresh tree made in `parent` instead of the temporary directory. The sandbox
    /// tests make theirs in /var/tmp: a secret the sandbox hides (the fake home's ~/.ssh)
    /// must not sit in /tmp, because a hidden path inside a writable directory takes away
    /// the right to create files directly in that directory, and /tmp must stay fully
    /// writable.
    pub fn new_in(parent: impl AsRef<Path>) -> TestEnv {
        let parent = parent.as_ref();
        let dir = tempfile::Builder::new()
            .prefix("gate-test-")
            .tempdir_in(parent)
            .unwrap_or_else(|e| {
                panic!(
                    "cannot create a temporary directory in {}: {e}",
                    parent.display()
                )
            });
        let root = dir.path().to_path_buf();
        fs::set_permissions(&root, fs::Permissions::from_mode(0o755)).unwrap();
        let make = |name: &str| {
            let path = root.join(name);
            fs::create_dir(&path).unwrap();
            fs::set_permissions(&path, fs::Permissions::from_mode(0o777)).unwrap();
            path
        };
        TestEnv {
            home: make("home"),
            state: make("state"),
            config: make("config"),
            runtime: make("runtime"),
            work: make("work"),
            root,
            _dir: dir,
        }
    }

    /// A gate process with the isolated environment, working in [`TestEnv::work`].
    pub fn gate(&self) -> Gate {
        let mut env = BTreeMap::new();
        let path = std::env::var_os("PATH")
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| OsString::from("/usr/local/bin:/usr/bin:/bin"));
        env.insert(OsString::from("PATH"), path);
        env.insert(OsString::from("HOME"), self.home.clone().into());
        env.insert(OsString::from("XDG_STATE_HOME"), self.state.clone().into());
        env.insert(
            OsString::from("XDG_CONFIG_HOME"),
            self.config.clone().into(),
        );
        env.insert(
            OsString::from("XDG_RUNTIME_DIR"),
            self.runtime.clone().into(),
        );
        env.insert(OsString::from("LC_ALL"), OsString::from("C"));
        Gate {
            program: None,
            arg0: None,
            args: Vec::new(),
            env,
            cwd: self.work.clone(),
            stdin: Input::Null,
            closed: Vec::new(),
            stderr_unread: false,
            user: User::Current,
            deadline: DEADLINE,
            within: Vec::new(),
        }
    }

    /// A path in the working directory (where commands create their side effects).
    pub fn file(&self, name: &str) -> PathBuf {
        self.work.join(name)
    }

    /// Write a file in the test's root directory (readable by everyone) and return its
    /// path. For configuration files and scripts.
    pub fn write(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.root.join(name);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        fs::write(&path, contents).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        path
    }

    /// The user configuration file gate reads by default.
    pub fn user_config_file(&self) -> PathBuf {
        self.config.join("gate/config.toml")
    }

    /// Write the user configuration file gate reads by default.
    pub fn write_user_config(&self, text: &str) -> PathBuf {
        let path = self.user_config_file();
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, text).unwrap();
        path
    }

    /// Where gate writes the audit log by default in this environment.
    pub fn default_audit_log(&self) -> PathBuf {
        self.state.join("gate/audit.jsonl")
    }

    /// Assert that a command run by `user` at level full can create a file in the working
    /// directory, as that user. This is the control for every "runs nothing" test: it
    /// shows that the absence of a file there means gate ran nothing, not that the file
    /// could not be created.
    #[track_caller]
    pub fn assert_side_effects_are_visible(&self, user: User) {
        let marker = self.file("control-side-effect");
        let _ = fs::remove_file(&marker);
        self.gate()
            .user(user)
            .args(["--no-config", "--audit-log", "off", "--level", "full"])
            .args(["-c", "id -u > control-side-effect"])
            .run()
            .assert_code(0);
        let written = fs::read_to_string(&marker).unwrap_or_else(|e| {
            panic!(
                "control: the command could not create {} as {user:?}: {e}",
                marker.display()
            )
        });
        assert_eq!(
            written.trim(),
            uid_of(user).to_string(),
            "control: the command ran as the wrong user"
        );
        fs::remove_file(&marker).unwrap();
    }
}

impl Default for TestEnv {
    fn default() -> Self {
        TestEnv::new()
    }
}

// ---------------------------------------------------------------------------------------
// Running gate.

/// What a gate process reads on standard input.
#[derive(Debug, Clone)]
pub enum Input {
    Null,
    Bytes(Vec<u8>),
    /// One end of a Unix socket pair, as Node hosts give their children (the other end
    /// is closed once gate has started).
    Socket,
}

/// A gate invocation being built: a thin wrapper over [`Command`] with isolation.
#[derive(Debug, Clone)]
pub struct Gate {
    /// The executable (default: the gate binary, or its copy for the unprivileged user).
    program: Option<PathBuf>,
    arg0: Option<OsString>,
    args: Vec<OsString>,
    env: BTreeMap<OsString, OsString>,
    cwd: PathBuf,
    stdin: Input,
    /// Standard descriptors (0, 1, 2) to close, not redirect, before gate starts.
    closed: Vec<u8>,
    /// stderr is a pipe whose read end is closed before gate starts.
    stderr_unread: bool,
    user: User,
    deadline: Duration,
    /// A program (and its arguments) that runs the rest of the chain: `nsenter …` to
    /// start gate in other namespaces.
    within: Vec<OsString>,
}

impl Gate {
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env
            .insert(key.as_ref().to_owned(), value.as_ref().to_owned());
        self
    }

    pub fn env_remove(mut self, key: impl AsRef<OsStr>) -> Self {
        self.env.remove(key.as_ref());
        self
    }

    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.cwd = dir.as_ref().to_owned();
        self
    }

    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.stdin = Input::Bytes(bytes.into());
        self
    }

    /// Standard input a Unix socket, not a pipe or a file.
    pub fn stdin_socket(mut self) -> Self {
        self.stdin = Input::Socket;
        self
    }

    /// Run another executable (a shim link to gate) instead of the gate binary.
    pub fn program(mut self, path: impl AsRef<Path>) -> Self {
        self.program = Some(path.as_ref().to_owned());
        self
    }

    /// Set argv[0].
    pub fn arg0(mut self, arg0: impl AsRef<OsStr>) -> Self {
        self.arg0 = Some(arg0.as_ref().to_owned());
        self
    }

    pub fn user(mut self, user: User) -> Self {
        self.user = user;
        self
    }

    /// Start gate with standard descriptor `fd` (0, 1 or 2) closed, not redirected.
    pub fn close_fd(mut self, fd: u8) -> Self {
        assert!(fd <= 2, "only standard descriptors can be closed");
        self.closed.push(fd);
        self
    }

    /// Start gate with stderr a pipe that nobody reads: its read end is closed before
    /// gate starts, so a write to it fails with EPIPE and raises SIGPIPE. The outcome's
    /// stderr is then empty.
    pub fn stderr_unread(mut self) -> Self {
        self.stderr_unread = true;
        self
    }

    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    /// Start gate through `wrapper` (a program and its arguments that executes the rest
    /// of its command line, such as `nsenter --net=… --`), before the drop to uid 65534.
    pub fn within<I, S>(mut self, wrapper: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.within = wrapper.into_iter().map(|a| a.as_ref().to_owned()).collect();
        self
    }

    /// A one-line description for failure messages.
    fn describe(&self) -> String {
        let mut text = String::new();
        for (k, v) in &self.env {
            if k.to_string_lossy().starts_with("GATE_") {
                let _ = write!(text, "{}={:?} ", k.to_string_lossy(), v);
            }
        }
        if self.user == User::Unprivileged && running_as_root() {
            text.push_str("[as uid 65534] ");
        }
        if !self.closed.is_empty() {
            let _ = write!(text, "[fds {:?} closed] ", self.closed);
        }
        if self.stderr_unread {
            text.push_str("[stderr a pipe nobody reads] ");
        }
        let program = self
            .program
            .clone()
            .unwrap_or_else(|| PathBuf::from("gate"));
        let _ = write!(
            text,
            "{}",
            self.arg0
                .clone()
                .unwrap_or(program.into())
                .to_string_lossy()
        );
        for arg in &self.args {
            let _ = write!(text, " {:?}", arg);
        }
        text
    }

    /// The std Command that runs this invocation.
    fn command(&self) -> Command {
        let unprivileged = self.user == User::Unprivileged && running_as_root();
        let gate_path: PathBuf = match (&self.program, unprivileged) {
            (Some(p), _) => p.clone(),
            (None, true) => unprivileged_gate().to_path_buf(),
            (None, false) => PathBuf::from(GATE),
        };
        // The chain: [sh (closes fds)] → [a wrapper] → [setpriv (drops to 65534)] → gate.
        // Each execs the next, so the pid the test sees is gate's, and then the
        // command's.
        let mut chain: Vec<OsString> = Vec::new();
        if !self.closed.is_empty() {
            let redirections: String = self.closed.iter().map(|fd| format!(" {fd}>&-")).collect();
            chain.push(require_program("sh").into());
            chain.push("-c".into());
            chain.push(format!("exec \"$0\" \"$@\"{redirections}").into());
        }
        chain.extend(self.within.iter().cloned());
        if unprivileged {
            assert!(self.arg0.is_none(), "argv[0] cannot be set through setpriv");
            chain.push(require_program("setpriv").into());
            chain.push(format!("--reuid={NOBODY}").into());
            chain.push(format!("--regid={NOBODY}").into());
            chain.push("--clear-groups".into());
            chain.push("--".into());
        }
        chain.push(gate_path.into());
        chain.extend(self.args.iter().cloned());

        let mut command = Command::new(&chain[0]);
        if chain.len() == 1 + self.args.len() {
            if let Some(arg0) = &self.arg0 {
                command.arg0(arg0);
            }
        } else {
            assert!(
                self.arg0.is_none(),
                "argv[0] cannot be set through a wrapper"
            );
        }
        command.args(&chain[1..]);
        command.env_clear().envs(&self.env).current_dir(&self.cwd);
        command.process_group(0);
        command
    }

    /// Start the process.
    pub fn spawn(self) -> Running {
        let description = self.describe();
        let mut command = self.command();
        let mut socket_peer = None;
        command
            .stdin(match self.stdin {
                Input::Null => Stdio::null(),
                Input::Bytes(_) => Stdio::piped(),
                Input::Socket => {
                    let (ours, theirs) =
                        std::os::unix::net::UnixStream::pair().expect("cannot make a socket pair");
                    socket_peer = Some(ours);
                    Stdio::from(std::os::fd::OwnedFd::from(theirs))
                }
            })
            .stdout(Stdio::piped());
        if self.stderr_unread {
            // Close-on-exec, so no process another test starts meanwhile keeps the read
            // end open.
            let (read_end, write_end) =
                nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).expect("cannot make a pipe");
            drop(read_end);
            command.stderr(Stdio::from(write_end));
        } else {
            command.stderr(Stdio::piped());
        }
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {description}: {e}"));
        let pid = child.id();
        // The child has its end: a read then sees the end of the input.
        drop(socket_peer);
        drop(command);
        if let Input::Bytes(bytes) = self.stdin {
            let mut stdin = child.stdin.take().unwrap();
            // A command that does not read its input closes the pipe early: not an error.
            thread::spawn(move || {
                let _ = stdin.write_all(&bytes);
            });
        }
        let stdout = reader(child.stdout.take().unwrap());
        let stderr = match child.stderr.take() {
            Some(stderr) => reader(stderr),
            None => reader(std::io::empty()),
        };
        Running {
            child,
            pid,
            stdout,
            stderr,
            started: Instant::now(),
            deadline: self.deadline,
            description,
        }
    }

    /// Run to completion (within the deadline) and capture everything.
    pub fn run(self) -> Outcome {
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

/// A started gate process.
pub struct Running {
    child: Child,
    pub pid: u32,
    stdout: Receiver<Vec<u8>>,
    stderr: Receiver<Vec<u8>>,
    started: Instant,
    deadline: Duration,
    description: String,
}

impl Running {
    /// Wait for the process and its output. Past the deadline the process group is
    /// killed and the test fails.
    #[track_caller]
    pub fn wait(mut self) -> Outcome {
        let end = self.started + self.deadline;
        let mut pause = Duration::from_micros(200);
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) => {}
                Err(e) => panic!("cannot wait for {}: {e}", self.description),
            }
            if Instant::now() >= end {
                self.kill_group();
                let stderr = self
                    .stderr
                    .recv_timeout(Duration::from_secs(1))
                    .unwrap_or_default();
                panic!(
                    "{} did not finish within {:?}; killed it. stderr so far: {}",
                    self.description,
                    self.deadline,
                    String::from_utf8_lossy(&stderr)
                );
            }
            thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(10));
        };
        // Output ends when every holder of the pipes is gone; a left-over background
        // process must not block the test either.
        let remaining = end.saturating_duration_since(Instant::now()) + Duration::from_secs(1);
        let collect = |rx: &Receiver<Vec<u8>>, name: &str| {
            rx.recv_timeout(remaining).unwrap_or_else(|_| {
                panic!(
                    "{}: {name} stayed open after the process exited (a background process \
                     holds it?)",
                    self.description
                )
            })
        };
        let stdout = collect(&self.stdout, "stdout");
        let stderr = collect(&self.stderr, "stderr");
        Outcome {
            status,
            stdout,
            stderr,
            pid: self.pid,
            elapsed: self.started.elapsed(),
            description: self.description.clone(),
        }
    }

    fn kill_group(&mut self) {
        // The process group was made for this process alone (process_group(0)).
        let _ = Command::new(require_program("kill"))
            .args(["-KILL", "--", &format!("-{}", self.pid)])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The result of one gate process.
#[derive(Debug)]
pub struct Outcome {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// The pid the test spawned.
    pub pid: u32,
    pub elapsed: Duration,
    pub description: String,
}

impl Outcome {
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    pub fn signal(&self) -> Option<i32> {
        self.status.signal()
    }

    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }

    /// Everything about the run, for failure messages.
    pub fn report(&self) -> String {
        format!(
            "{}\n  status: {:?}\n  stdout: {:?}\n  stderr: {:?}",
            self.description,
            self.status,
            self.stdout(),
            self.stderr()
        )
    }

    #[track_caller]
    pub fn assert_code(&self, code: i32) -> &Self {
        assert_eq!(
            self.code(),
            Some(code),
            "expected exit status {code}\n{}",
            self.report()
        );
        self
    }

    /// stderr without the one line gate writes when it waits for a person to answer
    /// (`gate: waiting up to N s for a person to …`), which comes first when it is there.
    pub fn stderr_after_waiting(&self) -> String {
        let stderr = self.stderr();
        match stderr.strip_prefix("gate: waiting up to ") {
            Some(rest) => rest
                .split_once('\n')
                .map(|(_, after)| after)
                .unwrap_or("")
                .to_owned(),
            None => stderr,
        }
    }

    /// Refused by policy: exit 126 and exactly one stderr line, starting `gate: refused`
    /// (after the line saying that gate waited for a person, when it did).
    #[track_caller]
    pub fn assert_refused(&self) -> &Self {
        self.assert_code(REFUSED);
        let stderr = self.stderr_after_waiting();
        assert!(
            stderr.starts_with("gate: refused"),
            "a refusal starts with `gate: refused`\n{}",
            self.report()
        );
        assert!(
            stderr.ends_with('\n') && stderr.matches('\n').count() == 1,
            "a refusal is exactly one line on stderr\n{}",
            self.report()
        );
        self
    }

    /// gate's own error: exit 125, and stderr says `gate: …`.
    #[track_caller]
    pub fn assert_gate_error(&self) -> &Self {
        self.assert_code(GATE_ERROR);
        assert!(
            self.stderr().starts_with("gate: "),
            "gate's own errors start with `gate: `\n{}",
            self.report()
        );
        self
    }

    #[track_caller]
    pub fn assert_stderr_contains(&self, needle: &str) -> &Self {
        assert!(
            self.stderr().contains(needle),
            "stderr should contain {needle:?}\n{}",
            self.report()
        );
        self
    }

    #[track_caller]
    pub fn assert_stdout(&self, expected: &str) -> &Self {
        assert_eq!(self.stdout(), expected, "stdout differs\n{}", self.report());
        self
    }

    #[track_caller]
    pub fn assert_stdout_contains(&self, needle: &str) -> &Self {
        assert!(
            self.stdout().contains(needle),
            "stdout should contain {needle:?}\n{}",
            self.report()
        );
        self
    }

    #[track_caller]
    pub fn assert_stderr_empty(&self) -> &Self {
        assert!(
            self.stderr.is_empty(),
            "stderr should be empty\n{}",
            self.report()
        );
        self
    }
}

// ---------------------------------------------------------------------------------------
// Small utilities.

/// Assert that a file does not exist, naming the invocation that must not have made it.
#[track_caller]
pub fn assert_absent(path: &Path, outcome: &Outcome) {
    assert!(
        !path.exists(),
        "{} exists: gate ran a command it should have refused\n{}",
        path.display(),
        outcome.report()
    );
}

/// Deterministic pseudo-random bytes (xorshift64*), for data round trips.
pub fn pseudo_random_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed.max(1);
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        out.extend_from_slice(&state.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes());
    }
    out.truncate(len);
    out
}

/// The lines of an audit log, each parsed as JSON.
#[track_caller]
pub fn audit_records(path: &Path) -> Vec<serde_json::Value> {
    let text = fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read the audit log {}: {e}", path.display()));
    text.lines()
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("audit line is not JSON ({e}): {line:?}"))
        })
        .collect()
}

/// Make a directory of shim links: each name links to the gate binary.
pub fn shim_dir(env: &TestEnv, names: &[&str]) -> PathBuf {
    shim_dir_for(env, names, User::Current)
}

/// Make a directory of shim links to the gate binary that `user` can execute.
pub fn shim_dir_for(env: &TestEnv, names: &[&str], user: User) -> PathBuf {
    let target = if user == User::Unprivileged && running_as_root() {
        unprivileged_gate().to_path_buf()
    } else {
        PathBuf::from(GATE)
    };
    let dir = env.root.join("shims");
    fs::create_dir_all(&dir).unwrap();
    for name in names {
        std::os::unix::fs::symlink(&target, dir.join(name)).unwrap();
    }
    dir
}

/// Write a test twice: as the current user and as the unprivileged user.
///
/// ```ignore
/// for_each_user! {
///     fn deny_level_runs_nothing(user) { ... }
/// }
/// ```
/// gives `deny_level_runs_nothing::as_the_current_user` and
/// `deny_level_runs_nothing::as_an_unprivileged_user`. Doc comments before a `fn` document
/// the module of its two tests.
///
/// A scenario that needs root (two users, mounts, another user's files) says so after its
/// signature, `fn NAME(user) needs root because "it mounts …" { ... }`: both tests are
/// then in the root tier (see [`needs_root`]).
#[allow(unused_macros)]
macro_rules! for_each_user {
    ($($(#[$meta:meta])* fn $name:ident($user:ident) $(needs root because $why:literal)? $body:block)*) => {
        $(
            $(#[$meta])*
            mod $name {
                #[allow(unused_imports)]
                use super::*;

                fn scenario($user: $crate::common::User) {
                    $($crate::common::needs_root($why);)?
                    $body
                }

                #[test]
                $(#[ignore = "root tier: cargo test --lib --test all -- --ignored, as root"] #[doc = $why])?
                fn as_the_current_user() {
                    scenario($crate::common::User::Current)
                }

                #[test]
                $(#[ignore = "root tier: cargo test --lib --test all -- --ignored, as root"] #[doc = $why])?
                fn as_an_unprivileged_user() {
                    scenario($crate::common::User::Unprivileged)
                }
            }
        )*
    };
}

/// Wait (within the tests' deadline) until `path` holds a line, and read it.
#[track_caller]
pub fn wait_for(path: &Path) -> String {
    let end = std::time::Instant::now() + DEADLINE;
    loop {
        if let Ok(text) = std::fs::read_to_string(path) {
            if text.ends_with('\n') {
                return text.trim().to_owned();
            }
        }
        assert!(
            std::time::Instant::now() < end,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}
