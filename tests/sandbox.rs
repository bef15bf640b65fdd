//! The `safe` level's sandbox, black-box: the real gate binary runs real commands with
//! `--no-config --level safe`, and the tests look at what those commands could and could
//! not do.
//!
//! Every "must fail" test has a control: the same action, by the same user, succeeds
//! without the sandbox (at level full, or from the test itself). A failure under `safe`
//! then means the sandbox stopped it, not that the action was impossible anyway. Where
//! the unprivileged user cannot do the action even without the sandbox (write to /etc,
//! open a raw socket), the control says so, and the test checks that the sandbox's own
//! error (EPERM from seccomp) is what the command saw.
//!
//! The security tests run twice (`for_each_user!`): as the current user (root in CI) and
//! as uid 65534. A few tests are about root only (capabilities, setuid): they run once
//! and say in their documentation what they check when the tests do not run as root.
//!
//! The test tree lives in /var/tmp, not /tmp (see `TestEnv::new_in`): the fake home holds
//! secrets the sandbox hides, and a hidden path inside /tmp would make /tmp read-only at
//! its top level.
//!
//! Some tests here fail on purpose: they show holes in the sandbox (see the tests marked
//! "Known hole"). They are written as the sandbox should behave.

use crate::common;

use std::ffi::OsString;
use std::fs;
use std::io::{ErrorKind, Read, Seek};
use std::net::{TcpListener, UdpSocket};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::os::unix::net::{SocketAddr, UnixDatagram, UnixListener};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::*;

const EPERM: i32 = libc::EPERM;
const EACCES: i32 = libc::EACCES;

// ---------------------------------------------------------------------------------------
// Helpers.

/// A name no other test (or test process) uses.
fn unique(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!(
        "{prefix}-{}-{}-{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// Whether a process started as `user` is root.
fn is_root(user: User) -> bool {
    uid_of(user) == 0
}

/// Remove a file or directory tree when dropped: for files a control (or a sandbox that
/// failed to stop a command) created outside the test's tree, in /etc or /usr.
struct Removed(PathBuf);

impl Drop for Removed {
    fn drop(&mut self) {
        if self.0.is_dir() && !self.0.is_symlink() {
            let _ = fs::remove_dir_all(&self.0);
        } else {
            let _ = fs::remove_file(&self.0);
        }
    }
}

/// The environment of one sandbox test: a [`TestEnv`] in /var/tmp whose workspace belongs
/// to the user (git wants that), a fake home with a secret in ~/.ssh, and a directory
/// outside every writable root that the user may write without the sandbox.
struct Env {
    t: TestEnv,
    user: User,
    /// ~/.ssh of the fake home.
    ssh: PathBuf,
    /// A file in ~/.ssh, readable by the user without the sandbox.
    secret: PathBuf,
    /// Its contents (one line, unique to this test).
    secret_text: String,
    /// Writable by the user without the sandbox, never inside it.
    outside: PathBuf,
}

impl Env {
    fn new(user: User) -> Env {
        Env::new_in(user, "/var/tmp")
    }

    /// The same tree made in `parent`.
    fn new_in(user: User, parent: &str) -> Env {
        let t = TestEnv::new_in(parent);
        let ssh = t.home.join(".ssh");
        fs::create_dir(&ssh).unwrap();
        let secret_text = unique("gate-test-secret");
        let secret = ssh.join("id_test");
        fs::write(&secret, format!("{secret_text}\n")).unwrap();
        let outside = t.root.join("outside");
        fs::create_dir(&outside).unwrap();
        let env = Env {
            t,
            user,
            ssh,
            secret,
            secret_text,
            outside,
        };
        env.give(&env.t.work, 0o755);
        env.give(&env.ssh, 0o755);
        env.give(&env.secret, 0o644);
        env.give(&env.outside, 0o755);
        env
    }

    /// Make `path` the user's, with `mode`: without the sandbox, the user may then do
    /// with it whatever the test tries.
    fn give(&self, path: &Path, mode: u32) {
        if running_as_root() {
            let id = uid_of(self.user);
            std::os::unix::fs::lchown(path, Some(id), Some(id)).unwrap();
        }
        if !path.is_symlink() {
            fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
        }
    }

    /// A directory made for the user, with `mode`.
    fn dir(&self, path: &Path, mode: u32) -> PathBuf {
        fs::create_dir_all(path).unwrap();
        self.give(path, mode);
        path.to_path_buf()
    }

    /// A file made for the user, with `mode`.
    fn file(&self, path: &Path, contents: &str, mode: u32) -> PathBuf {
        fs::write(path, contents).unwrap();
        self.give(path, mode);
        path.to_path_buf()
    }

    /// gate at `level`, as the test's user, without configuration or audit log.
    fn at(&self, level: &str) -> Gate {
        self.t
            .gate()
            .user(self.user)
            .args(["--no-config", "--audit-log", "off", "--level", level])
    }

    fn safe(&self) -> Gate {
        self.at("safe")
    }

    fn full(&self) -> Gate {
        self.at("full")
    }

    /// `program`, run as the test's user by the test itself, not by gate: the control
    /// for what every command gate runs gives up at every level (setuid, ptrace of
    /// processes outside, mounting; see src/sandbox/mark.rs).
    fn unmarked(&self, program: &str) -> Gate {
        self.t
            .gate()
            .user(self.user)
            .program(require_program(program))
    }

    /// The environment gate gets from [`TestEnv::gate`], for processes that start gate
    /// themselves (tmux).
    fn variables(&self) -> Vec<(OsString, OsString)> {
        let path = std::env::var_os("PATH")
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| OsString::from("/usr/local/bin:/usr/bin:/bin"));
        vec![
            ("PATH".into(), path),
            ("HOME".into(), self.t.home.clone().into()),
            ("XDG_STATE_HOME".into(), self.t.state.clone().into()),
            ("XDG_CONFIG_HOME".into(), self.t.config.clone().into()),
            ("LC_ALL".into(), "C".into()),
        ]
    }
}

/// Run `script` with `sh -c`, the paths as its positional parameters ($1, $2, ...).
fn sh(gate: Gate, script: &str, params: &[&Path]) -> Outcome {
    gate.args(["-c", script, "sh"]).args(params).run()
}

/// What a python3 attempt came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Try {
    Ok,
    Errno(i32),
}

/// Available to every attempt: the usual modules, and `syscall(...)`, which raises
/// OSError with errno like the library calls do.
const PRELUDE: &str = r#"
import ctypes, fcntl, os, socket, sys, termios
_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
def syscall(*args):
    r = _libc.syscall(*args)
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r
"#;

/// `code` with its common indentation removed.
fn dedent(code: &str) -> String {
    let lines: Vec<&str> = code.trim_matches('\n').lines().collect();
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|l| format!("{}\n", l.get(indent..).unwrap_or("")))
        .collect()
}

/// A python3 program that runs `body` and prints `RESULT ok`, or `RESULT errno=N` when
/// it raises OSError.
fn python_program(body: &str) -> String {
    let body: String = dedent(body).lines().map(|l| format!("    {l}\n")).collect();
    format!(
        "{PRELUDE}try:\n{body}except OSError as e:\n    print('RESULT errno=%d' % e.errno, flush=True)\n\
         else:\n    print('RESULT ok', flush=True)\n"
    )
}

/// The result a python3 program printed, if any.
fn result_in(text: &str) -> Option<Try> {
    text.lines().find_map(|line| {
        // Anywhere in the line: in a terminal, an injected character is echoed before it.
        let rest = line[line.find("RESULT ")? + "RESULT ".len()..].trim();
        if rest == "ok" {
            Some(Try::Ok)
        } else {
            rest.strip_prefix("errno=")?.parse().ok().map(Try::Errno)
        }
    })
}

/// Run `body` in python3 through `gate` and say how it ended.
#[track_caller]
fn attempt(gate: Gate, body: &str) -> (Try, Outcome) {
    let out = gate
        .arg("--")
        .arg(python3())
        .arg("-c")
        .arg(python_program(body))
        .run();
    let result = result_in(&out.stdout())
        .unwrap_or_else(|| panic!("python3 reported no result\n{}", out.report()));
    (result, out)
}

/// Assert that `body` ends as `expected` through `gate`; `what` names it for the message.
#[track_caller]
fn expect(gate: Gate, body: &str, expected: Try, what: &str) -> Outcome {
    let (result, out) = attempt(gate, body);
    assert_eq!(result, expected, "{what}\n{}", out.report());
    out
}

/// Whether a file named `needle` or holding `needle` is anywhere under `dir`.
fn tree_holds(dir: &Path, needle: &str) -> Option<PathBuf> {
    for entry in fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            if let Some(found) = tree_holds(&path, needle) {
                return Some(found);
            }
        } else if kind.is_file() {
            let mut text = Vec::new();
            if fs::File::open(&path)
                .and_then(|mut f| f.read_to_end(&mut text))
                .is_ok()
                && String::from_utf8_lossy(&text).contains(needle)
            {
                return Some(path);
            }
        }
    }
    None
}

/// A TCP listener on a free loopback port, not blocking (connections wait in its backlog
/// until [`accepted`] counts them).
fn tcp_listener() -> (TcpListener, u16) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("cannot listen on 127.0.0.1");
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    (listener, port)
}

/// How many connections wait on `listener`, accepting them all.
fn accepted(listener: &TcpListener) -> usize {
    let mut count = 0;
    loop {
        match listener.accept() {
            Ok(_) => count += 1,
            Err(e) if e.kind() == ErrorKind::WouldBlock => return count,
            Err(e) => panic!("accept failed: {e}"),
        }
    }
}

/// A UDP socket on a free loopback port, not blocking.
fn udp_listener() -> (UdpSocket, u16) {
    let socket = UdpSocket::bind("127.0.0.1:0").expect("cannot bind UDP on 127.0.0.1");
    socket.set_nonblocking(true).unwrap();
    let port = socket.local_addr().unwrap().port();
    (socket, port)
}

/// The datagrams waiting on `socket`.
fn received(socket: &UdpSocket) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut buf = [0u8; 2048];
    loop {
        match socket.recv(&mut buf) {
            Ok(n) => out.push(buf[..n].to_vec()),
            Err(e) if e.kind() == ErrorKind::WouldBlock => return out,
            Err(e) => panic!("recv failed: {e}"),
        }
    }
}

/// A loopback TCP port nothing listens on right now.
fn free_port() -> u16 {
    let (listener, port) = tcp_listener();
    drop(listener);
    port
}

/// Python code that connects to TCP `port` on 127.0.0.1.
fn tcp_connect(port: u16) -> String {
    format!("socket.create_connection(('127.0.0.1', {port}), timeout=5).close()")
}

/// Python code that sends one UDP datagram to `port` on 127.0.0.1.
fn udp_send(port: u16) -> String {
    format!(
        "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n\
         s.sendto(b'gate-test', ('127.0.0.1', {port}))"
    )
}

/// Python code that binds a TCP socket to `port` on 127.0.0.1.
fn tcp_bind(port: u16) -> String {
    format!("socket.socket(socket.AF_INET, socket.SOCK_STREAM).bind(('127.0.0.1', {port}))")
}

/// Run a helper program (not gate) to completion within [`DEADLINE`], its output in
/// files (a daemon it starts may keep pipes open).
#[track_caller]
fn run_bounded(mut command: Command, what: &str) -> (std::process::ExitStatus, String) {
    let mut log = tempfile::tempfile().unwrap();
    command
        .stdin(Stdio::null())
        .stdout(Stdio::from(log.try_clone().unwrap()))
        .stderr(Stdio::from(log.try_clone().unwrap()))
        .process_group(0);
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
    let end = Instant::now() + DEADLINE;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > end {
            let _ = Command::new(require_program("kill"))
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.wait();
            panic!("{what} did not finish within {DEADLINE:?}; killed it");
        }
        thread::sleep(Duration::from_millis(5));
    };
    let mut text = String::new();
    log.rewind().unwrap();
    log.read_to_string(&mut text).unwrap();
    (status, text)
}

/// A process outside the sandbox (`sleep`), running as the test's user, killed when
/// dropped.
struct Outsider {
    child: Child,
}

impl Outsider {
    fn start(user: User, vars: &[(&str, &str)]) -> Outsider {
        let mut command = command_as(user, require_program("sleep"));
        command
            .arg("60")
            .env_clear()
            .envs(vars.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        let child = command.spawn().expect("cannot start sleep");
        let outsider = Outsider { child };
        // Through setpriv, the pid is setpriv's until it execs sleep.
        let comm = format!("/proc/{}/comm", outsider.pid());
        let end = Instant::now() + DEADLINE;
        while fs::read_to_string(&comm)
            .map(|c| c.trim() != "sleep")
            .unwrap_or(true)
        {
            assert!(Instant::now() < end, "sleep did not start");
            thread::sleep(Duration::from_millis(2));
        }
        outsider
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn is_running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Wait (within the deadline) for it to end.
    fn ended(&mut self) -> bool {
        let end = Instant::now() + DEADLINE;
        while Instant::now() < end {
            if !self.is_running() {
                return true;
            }
            thread::sleep(Duration::from_millis(5));
        }
        false
    }
}

impl Drop for Outsider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A tmux server of its own (own socket, own directory), running as the test's user,
/// with one 80x24 window running a command. The server is killed when dropped.
///
/// tmux is required: a missing tmux fails the test, saying so.
struct Tmux {
    tmux: PathBuf,
    dir: PathBuf,
    socket: String,
    user: User,
    vars: Vec<(OsString, OsString)>,
}

impl Tmux {
    /// Start the server with `command` (run by /bin/sh) as its only window.
    fn start(env: &Env, command: &str) -> Tmux {
        let tmux = require_program("tmux");
        let dir = env.dir(&env.t.root.join(unique("tmux")), 0o700);
        let conf = dir.join("tmux.conf");
        // The window stays after its command ends (remain-on-exit), so that its output
        // and status can be read; no status line, so the pane is the whole 80x24.
        env.file(
            &conf,
            "set -g remain-on-exit on\nset -g default-shell /bin/sh\nset -g status off\n",
            0o644,
        );
        let mut vars = env.variables();
        vars.push(("TMUX_TMPDIR".into(), dir.clone().into()));
        vars.push(("SHELL".into(), "/bin/sh".into()));
        vars.push(("TERM".into(), "xterm".into()));
        let server = Tmux {
            tmux,
            dir,
            socket: unique("gate"),
            user: env.user,
            vars,
        };
        let (status, text) = run_bounded(
            server.command(&[
                "new-session",
                "-d",
                "-s",
                "gate",
                "-x",
                "80",
                "-y",
                "24",
                command,
            ]),
            "tmux new-session",
        );
        assert!(status.success(), "tmux new-session failed: {text}");
        server
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = command_as(self.user, &self.tmux);
        command
            .arg("-f")
            .arg(self.dir.join("tmux.conf"))
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .env_clear()
            .envs(self.vars.iter().map(|(k, v)| (k, v)))
            .current_dir(&self.dir);
        command
    }

    /// Wait for the window's command to end; its screen (with history, without tmux's
    /// own "Pane is dead" line) and, when tmux knows it, its exit status. (tmux 3.3 now
    /// and then marks a window dead before reaping its process, and then never reports
    /// the status, with or without the sandbox: tests look at what the command printed.)
    #[track_caller]
    fn finished(&self) -> (String, Option<i32>) {
        let end = Instant::now() + DEADLINE;
        let mut dead_since: Option<Instant> = None;
        loop {
            let (_, state) = run_bounded(
                self.command(&[
                    "display-message",
                    "-p",
                    "-t",
                    "gate",
                    "#{pane_dead} #{pane_dead_status}",
                ]),
                "tmux display-message",
            );
            let state = state.trim();
            if state.starts_with('1') {
                let status = state.strip_prefix("1 ").and_then(|c| c.trim().parse().ok());
                let since = *dead_since.get_or_insert_with(Instant::now);
                if status.is_some() || since.elapsed() > Duration::from_secs(1) {
                    let (_, screen) = run_bounded(
                        self.command(&["capture-pane", "-p", "-S", "-", "-t", "gate"]),
                        "tmux capture-pane",
                    );
                    let screen = screen
                        .lines()
                        .filter(|l| !l.starts_with("Pane is dead"))
                        .map(|l| format!("{l}\n"))
                        .collect();
                    return (screen, status);
                }
            }
            if Instant::now() > end {
                let (_, screen) = run_bounded(
                    self.command(&["capture-pane", "-p", "-S", "-", "-t", "gate"]),
                    "tmux capture-pane",
                );
                panic!(
                    "the command in tmux did not finish within {DEADLINE:?}; tmux says \
                     {state:?}; screen:\n{screen}"
                );
            }
            thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Tmux {
    /// Kill the server, giving up after a few seconds (no panic: this may run while a
    /// failed test unwinds).
    fn drop(&mut self) {
        let mut command = self.command(&["kill-server"]);
        command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let Ok(mut child) = command.spawn() else {
            return;
        };
        let end = Instant::now() + Duration::from_secs(5);
        while Instant::now() < end {
            if !matches!(child.try_wait(), Ok(None)) {
                return;
            }
            thread::sleep(Duration::from_millis(5));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// A shell command line that runs gate at `level` (as the user the tmux server runs as)
/// with `args` after the options, each quoted for sh.
fn gate_command_line(user: User, level: &str, args: &[&str]) -> String {
    let gate = gate_binary_for(user);
    let mut words = vec![
        gate.to_str().unwrap().to_owned(),
        "--no-config".into(),
        "--audit-log".into(),
        "off".into(),
        "--level".into(),
        level.into(),
    ];
    words.extend(args.iter().map(|a| a.to_string()));
    shell_quote_all(&words)
}

fn shell_quote_all(words: &[String]) -> String {
    words
        .iter()
        .map(|w| format!("'{}'", w.replace('\'', "'\\''")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The hexadecimal capability sets and the other lines of /proc/self/status that say what
/// a process may do, as the command in the sandbox sees them.
fn status_fields(text: &str) -> std::collections::BTreeMap<String, String> {
    text.lines()
        .filter_map(|line| {
            let (key, value) = line.split_once(':')?;
            Some((key.trim().to_owned(), value.trim().to_owned()))
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// The machine.

/// The sandbox needs Landlock ABI 6 (scoping of signals and abstract sockets) and
/// seccomp. A machine without them cannot run the sandbox tests, and says so here rather
/// than letting them pass or fail for the wrong reason.
#[test]
fn this_kernel_can_run_the_sandbox_tests() {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute pointer and size 0, landlock_create_ruleset only reads
    // its flags argument and returns the ABI version (or -1); it touches no memory.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    let why = std::io::Error::last_os_error();
    assert!(
        abi >= 6,
        "this kernel offers Landlock ABI {abi}{}; gate's safe level and its tests need ABI 6 \
         or newer (Linux 6.12+, with landlock in the lsm= boot list). This machine cannot \
         run the sandbox tests",
        if abi < 0 {
            format!(" ({why})")
        } else {
            String::new()
        }
    );
    // SAFETY: PR_GET_SECCOMP takes no pointer and only returns the current mode.
    let mode = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) };
    assert!(
        mode >= 0,
        "this kernel cannot load seccomp filters ({}); gate's safe level needs them. This \
         machine cannot run the sandbox tests",
        std::io::Error::last_os_error()
    );
}

// ---------------------------------------------------------------------------------------
// The filesystem: what must fail.

for_each_user! {
    /// Creating a file outside the workspace and the temporary directories fails: in the
    /// home directory, in /etc, /usr and /var/tmp, and in a directory of the test's own.
    /// The control creates the same file at level full (and removes it); in /etc and /usr
    /// only root can.
    fn new_files_outside_the_writable_roots_cannot_be_made(user) {
        let env = Env::new(user);
        let name = unique("gate-test");
        let targets = [
            (env.t.home.clone(), true),
            (env.outside.clone(), true),
            (PathBuf::from("/var/tmp"), true),
            (PathBuf::from("/etc"), is_root(user)),
            (PathBuf::from("/usr"), is_root(user)),
        ];
        for (dir, writable_without_sandbox) in targets {
            let path = dir.join(&name);
            let _cleanup = Removed(path.clone());

            let control = sh(env.full(), "echo x > \"$1\"", &[&path]);
            assert_eq!(
                path.exists(),
                writable_without_sandbox,
                "control: as {user:?}, writing {} at level full {}\n{}",
                path.display(),
                if writable_without_sandbox { "should work" } else { "should fail" },
                control.report()
            );
            let _ = fs::remove_file(&path);

            for script in ["echo x > \"$1\"", "touch \"$1\"", "mkdir \"$1\"", "ln -s / \"$1\""] {
                let out = sh(env.safe(), script, &[&path]);
                assert!(
                    !path.exists() && !path.is_symlink(),
                    "the sandbox let `{script}` create {}\n{}",
                    path.display(),
                    out.report()
                );
                assert_ne!(out.code(), Some(0), "`{script}` should fail\n{}", out.report());
            }
        }
    }

    /// An existing file or directory outside the writable roots cannot be changed:
    /// appended to, truncated (by open or by truncate), removed, renamed, or given new
    /// entries of any kind. Each operation works at level full (the control), on a fresh
    /// copy.
    fn existing_files_outside_cannot_be_changed_or_removed(user) {
        let env = Env::new(user);
        let operations = [
            ("append", "echo more >> f"),
            ("truncate on open", ": > f"),
            ("truncate", "truncate -s 0 f"),
            ("remove", "rm f"),
            ("rename", "mv f g"),
            ("hard link", "ln f h"),
            ("symlink", "ln -s f l"),
            ("directory", "mkdir d"),
            ("fifo", "mkfifo p"),
            ("new file", "echo x > n"),
            ("remove directory", "rmdir empty"),
        ];
        for (i, (what, operation)) in operations.iter().enumerate() {
            for (level, changes) in [("full", true), ("safe", false)] {
                let dir = env.dir(&env.outside.join(format!("{i}-{level}")), 0o755);
                env.file(&dir.join("f"), "original\n", 0o644);
                env.dir(&dir.join("empty"), 0o755);
                let script = format!("cd \"$1\" && {operation}");
                let out = sh(env.at(level), &script, &[&dir]);
                let mut entries: Vec<String> = fs::read_dir(&dir)
                    .unwrap()
                    .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect();
                entries.sort();
                let unchanged = entries == ["empty", "f"]
                    && fs::read_to_string(dir.join("f")).unwrap() == "original\n";
                if changes {
                    assert!(
                        !unchanged && out.code() == Some(0),
                        "control: `{operation}` ({what}) should work at level full\n{}",
                        out.report()
                    );
                } else {
                    assert!(
                        unchanged,
                        "the sandbox let `{operation}` ({what}) change {}: now {entries:?}\n{}",
                        dir.display(),
                        out.report()
                    );
                    assert_ne!(out.code(), Some(0), "{}", out.report());
                }
            }
        }
    }

    /// Every secret on the default deny-read list is unreadable: `cat` fails and nothing
    /// of it reaches the output, a recursive grep of the home directory finds nothing,
    /// and a recursive copy of the home directory into the workspace copies none of it.
    /// The control reads each one at level full.
    fn secrets_in_the_home_directory_cannot_be_read(user) {
        let env = Env::new(user);
        let home = &env.t.home;
        let mut secrets: Vec<(PathBuf, String)> = vec![(env.secret.clone(), env.secret_text.clone())];
        for dir in [
            ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker", ".config/gh",
            ".password-store",
        ] {
            env.dir(&home.join(".config"), 0o755);
            let dir = env.dir(&home.join(dir), 0o755);
            let text = unique("gate-test-secret");
            secrets.push((env.file(&dir.join("secret"), &format!("{text}\n"), 0o644), text));
        }
        for file in [".netrc", ".git-credentials"] {
            let text = unique("gate-test-secret");
            secrets.push((env.file(&home.join(file), &format!("{text}\n"), 0o644), text));
        }
        let paths: Vec<&Path> = secrets.iter().map(|(p, _)| p.as_path()).collect();
        let read_each = "for f; do cat \"$f\" && echo \"READ $f\"; done; true";

        let control = sh(env.full(), read_each, &paths);
        for (path, text) in &secrets {
            assert!(
                control.stdout().contains(text.as_str()),
                "control: {} should be readable at level full\n{}",
                path.display(),
                control.report()
            );
        }

        let out = sh(env.safe(), read_each, &paths);
        let grep = sh(env.safe(), "grep -r gate-test-secret \"$HOME\"; true", &[]);
        let copy = sh(env.safe(), "cp -r \"$HOME\" home-copy; true", &[]);
        for (path, text) in &secrets {
            for run in [&out, &grep, &copy] {
                assert!(
                    !run.stdout().contains(text.as_str()) && !run.stderr().contains(text.as_str()),
                    "the sandbox let {} be read\n{}",
                    path.display(),
                    run.report()
                );
            }
            assert!(
                !out.stdout().contains(&format!("READ {}", path.display())),
                "cat {} succeeded in the sandbox\n{}",
                path.display(),
                out.report()
            );
            if let Some(found) = tree_holds(&env.t.work, text) {
                panic!(
                    "a copy of {} reached the workspace: {}\n{}",
                    path.display(),
                    found.display(),
                    copy.report()
                );
            }
        }
    }

    /// gate's own runtime directory ($XDG_RUNTIME_DIR/gate) is hidden, and so is a path
    /// given with --deny-read; the control reads both at level full.
    fn the_runtime_directory_and_deny_read_paths_are_hidden(user) {
        let env = Env::new(user);
        let runtime = env.dir(&env.t.root.join("run"), 0o755);
        let gate_dir = env.dir(&runtime.join("gate"), 0o755);
        let runtime_secret = unique("gate-test-secret");
        let in_runtime = env.file(&gate_dir.join("state"), &format!("{runtime_secret}\n"), 0o644);
        let extra_secret = unique("gate-test-secret");
        let extra = env.file(&env.outside.join("extra.txt"), &format!("{extra_secret}\n"), 0o644);
        let read = "cat \"$1\" \"$2\"; true";
        let with = |gate: Gate| {
            gate.env("XDG_RUNTIME_DIR", &runtime)
                .arg("--deny-read")
                .arg(&extra)
        };

        let control = sh(with(env.full()), read, &[&in_runtime, &extra]);
        assert!(
            control.stdout().contains(&runtime_secret) && control.stdout().contains(&extra_secret),
            "control: both files should be readable at level full\n{}",
            control.report()
        );
        let out = sh(with(env.safe()), read, &[&in_runtime, &extra]);
        for secret in [&runtime_secret, &extra_secret] {
            assert!(
                !out.stdout().contains(secret.as_str()),
                "the sandbox let a hidden file be read\n{}",
                out.report()
            );
        }
        assert!(
            out.stderr().contains("Permission denied"),
            "{}",
            out.report()
        );
    }

    /// A secret cannot be carried into the workspace by a hard link, a rename, a copy or
    /// a redirection; afterwards the secret is still in place and no file of the
    /// workspace holds it. The control links it and moves it (and back) at level full.
    fn a_secret_cannot_be_linked_moved_or_copied_into_the_workspace(user) {
        let env = Env::new(user);
        assert_eq!(
            fs::metadata(&env.ssh).unwrap().dev(),
            fs::metadata(&env.t.work).unwrap().dev(),
            "the home and the workspace must be on one filesystem, or links fail anyway"
        );
        let secret = env.secret.as_path();

        let control = sh(
            env.full(),
            "ln \"$1\" linked && cat linked && rm linked && mv \"$1\" moved && mv moved \"$1\"",
            &[secret],
        );
        control.assert_code(0).assert_stdout_contains(&env.secret_text);

        for script in [
            "ln \"$1\" stolen",
            "ln -P \"$1\" stolen",
            "mv \"$1\" stolen",
            "mv \"$1\" .",
            "cp \"$1\" stolen",
            "cat \"$1\" > stolen",
            "python3 -c 'import os, sys; os.rename(sys.argv[1], \"stolen\")' \"$1\"",
            "python3 -c 'import os, sys; os.link(sys.argv[1], \"stolen\")' \"$1\"",
        ] {
            let out = sh(env.safe(), script, &[secret]);
            assert_ne!(out.code(), Some(0), "`{script}` should fail\n{}", out.report());
            assert_eq!(
                fs::read_to_string(secret).ok().as_deref(),
                Some(format!("{}\n", env.secret_text).as_str()),
                "`{script}` moved or changed the secret\n{}",
                out.report()
            );
            if let Some(found) = tree_holds(&env.t.work, &env.secret_text) {
                panic!(
                    "`{script}` put the secret in the workspace: {}\n{}",
                    found.display(),
                    out.report()
                );
            }
        }
    }

    /// Symbolic links in the workspace lead nowhere the sandbox does not already allow:
    /// writing through a link to /etc or to a directory outside fails, and so does
    /// reading a secret through a link, whether the test made the link or the command
    /// did. The controls do the same at level full.
    fn symlinks_in_the_workspace_do_not_lead_out(user) {
        let env = Env::new(user);
        let name = unique("gate-test");
        let etc_file = PathBuf::from("/etc").join(&name);
        let _cleanup = Removed(etc_file.clone());
        let outside_file = env.outside.join(&name);
        for (link, target) in [
            ("to-etc", PathBuf::from("/etc")),
            ("to-outside", env.outside.clone()),
            ("to-secret", env.secret.clone()),
            ("to-ssh", env.ssh.clone()),
        ] {
            symlink(&target, env.t.work.join(link)).unwrap();
            env.give(&env.t.work.join(link), 0o777);
        }
        let through = |name: &str| {
            format!(
                "echo x > to-etc/{name}; echo x > to-outside/{name}; cat to-secret; \
                 cat to-ssh/id_test; true"
            )
        };

        let control = sh(env.full(), &through(&name), &[]);
        assert!(
            outside_file.exists() && control.stdout().contains(&env.secret_text),
            "control: the links should work at level full\n{}",
            control.report()
        );
        assert_eq!(etc_file.exists(), is_root(user), "control\n{}", control.report());
        let _ = fs::remove_file(&outside_file);
        let _ = fs::remove_file(&etc_file);

        let out = sh(env.safe(), &through(&name), &[]);
        let made_inside = sh(
            env.safe(),
            &format!(
                "ln -s /etc e && ln -s \"$1\" o && ln -s \"$2\" s && echo x > e/{name}; \
                 echo x > o/{name}; cat s; true"
            ),
            &[&env.outside, &env.secret],
        );
        for run in [&out, &made_inside] {
            assert!(
                !etc_file.exists() && !outside_file.exists(),
                "the sandbox let a write through a symlink leave the workspace\n{}",
                run.report()
            );
            assert!(
                !run.stdout().contains(&env.secret_text),
                "the sandbox let a secret be read through a symlink\n{}",
                run.report()
            );
        }
    }

    /// gate's own files (the audit log, the user configuration) and the shell start-up
    /// files run outside the sandbox later, so they are never writable, even when the
    /// workspace contains them (here the workspace is the home directory, which holds
    /// them all). Files can still be made in a directory of the workspace that holds none
    /// of them. The control changes them all at level full.
    fn gate_files_and_shell_start_up_files_are_protected_in_the_workspace(user) {
        let env = Env::new(user);
        let home = env.t.home.clone();
        env.give(&home, 0o755);
        let state = env.dir(&home.join(".local/state/gate"), 0o755);
        env.give(&home.join(".local"), 0o755);
        env.give(&home.join(".local/state"), 0o755);
        let audit = env.file(&state.join("audit.jsonl"), "", 0o644);
        let config_dir = env.dir(&home.join(".config/gate"), 0o755);
        env.give(&home.join(".config"), 0o755);
        let config = env.file(&config_dir.join("config.toml"), "# mine\n", 0o644);
        let bashrc = env.file(&home.join(".bashrc"), "# mine\n", 0o644);
        let profile = env.file(&home.join(".profile"), "# mine\n", 0o644);
        let project = env.dir(&home.join("project"), 0o755);
        let gate = |level: &str| {
            env.t
                .gate()
                .user(user)
                .current_dir(&home)
                .env("XDG_STATE_HOME", home.join(".local/state"))
                .env("XDG_CONFIG_HOME", home.join(".config"))
                .args(["--no-config", "--level", level])
        };
        let tamper = "echo forged >> \"$1\"; echo forged >> \"$2\"; echo forged >> \"$3\"; \
                      rm -f \"$4\"; mv .local/state/gate .local/state/moved; \
                      echo made > project/new";
        let params = [&*audit, &config, &bashrc, &profile];

        let out = sh(gate("safe"), tamper, &params);
        for file in [&audit, &config, &bashrc, &profile] {
            let text = fs::read_to_string(file).unwrap_or_default();
            // A line of its own: the audit record quotes the command, "forged" included.
            assert!(
                file.exists() && !text.lines().any(|l| l == "forged"),
                "the sandbox let {} be changed\n{}",
                file.display(),
                out.report()
            );
        }
        assert!(state.exists(), "the sandbox let the state directory be moved\n{}", out.report());
        assert_eq!(
            fs::read_to_string(project.join("new")).ok().as_deref(),
            Some("made\n"),
            "a directory of the workspace without protected files should stay writable\n{}",
            out.report()
        );
        let records = audit_records(&audit);
        assert_eq!(records.len(), 1, "gate itself writes the log before the sandbox: {records:?}");
        assert_eq!(records[0]["level"], "safe");

        let control = sh(gate("full"), tamper, &params);
        control.assert_code(0);
        let moved_audit = home.join(".local/state/moved/audit.jsonl");
        for file in [&moved_audit, &config, &bashrc] {
            assert!(
                fs::read_to_string(file).unwrap().lines().any(|l| l == "forged"),
                "control: {} should be writable at level full\n{}",
                file.display(),
                control.report()
            );
        }
        assert!(!profile.exists() && !state.exists(), "control\n{}", control.report());
    }
}

for_each_user! {
    /// The agents' own settings (Claude Code's hooks, Gemini CLI's and Qwen Code's MCP
    /// servers, Codex's config) run later outside the sandbox, so a command at safe
    /// cannot change them, even with HOME as its workspace, nor make them where they do
    /// not exist yet. The control changes and makes them at level full.
    fn agents_settings_are_protected_in_the_workspace(user) {
        let env = Env::new(user);
        let home = env.t.home.clone();
        env.give(&home, 0o755);
        let claude = env.dir(&home.join(".claude"), 0o755);
        let settings = env.file(&claude.join("settings.json"), "{}\n", 0o644);
        // The top of a workspace that holds protected paths takes no new entries (see
        // docs/sandbox.md); a directory in it that holds none stays writable.
        let project = env.dir(&home.join("project"), 0o755);
        let gate = |level: &str| {
            env.t
                .gate()
                .user(user)
                .current_dir(&home)
                .args(["--no-config", "--audit-log", "off", "--level", level])
        };
        let tamper = "echo forged >> .claude/settings.json; \
                      mkdir -p .gemini .qwen .codex; \
                      echo forged > .gemini/settings.json; echo forged > .qwen/settings.json; \
                      echo forged > .codex/config.toml; echo made > project/new";
        let out = sh(gate("safe"), tamper, &[]);
        assert_eq!(fs::read_to_string(&settings).unwrap(), "{}\n", "{}", out.report());
        for made in [".gemini", ".qwen", ".codex"] {
            assert!(!home.join(made).exists(), "{made} was made\n{}", out.report());
        }
        assert_eq!(
            fs::read_to_string(project.join("new")).ok().as_deref(),
            Some("made\n"),
            "the workspace should stay writable\n{}",
            out.report()
        );

        sh(gate("full"), tamper, &[]).assert_code(0);
        assert!(fs::read_to_string(&settings).unwrap().contains("forged"), "control");
        for made in [".gemini/settings.json", ".qwen/settings.json", ".codex/config.toml"] {
            assert!(home.join(made).exists(), "control: {made}");
        }
    }
}

/// As root, the password hashes are hidden too: without capabilities root could still
/// read /etc/shadow, which it owns. The control reads it at level full. (Run as another
/// user, this checks only that the sandbox does not make it readable.)
#[test]
fn the_password_hashes_are_hidden_from_root() {
    let env = Env::new(User::Current);
    let read = "cat /etc/shadow /etc/gshadow";
    if running_as_root() {
        let control = sh(env.full(), read, &[]);
        control.assert_code(0).assert_stdout_contains("root:");
    }
    let out = sh(env.safe(), read, &[]);
    assert_ne!(out.code(), Some(0), "{}", out.report());
    assert!(
        !out.stdout().contains("root:"),
        "the sandbox let /etc/shadow be read\n{}",
        out.report()
    );
}

// ---------------------------------------------------------------------------------------
// The network: what must fail.

/// The sockets the tests try, as python3 code; whether opening one at level full needs
/// CAP_NET_RAW (so fails for the unprivileged user even without the sandbox).
const SOCKETS: [(&str, &str, bool); 7] = [
    (
        "raw ICMP",
        "socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)",
        true,
    ),
    (
        "packet",
        "socket.socket(socket.AF_PACKET, socket.SOCK_RAW)",
        true,
    ),
    (
        "MPTCP",
        "socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262)",
        false,
    ),
    (
        "MPTCP over IPv6",
        "socket.socket(socket.AF_INET6, socket.SOCK_STREAM, 262)",
        false,
    ),
    (
        "UDP",
        "socket.socket(socket.AF_INET, socket.SOCK_DGRAM)",
        false,
    ),
    (
        "UDP, close-on-exec",
        "socket.socket(socket.AF_INET, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)",
        false,
    ),
    (
        "netlink",
        "socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)",
        false,
    ),
];

for_each_user! {
    /// With the network off, a TCP connection to a listener on the loopback fails (the
    /// listener accepts nothing); the control connects at level full.
    fn tcp_connections_are_refused(user) {
        let env = Env::new(user);
        let (listener, port) = tcp_listener();
        expect(env.full(), &tcp_connect(port), Try::Ok, "control: connect at level full");
        assert_eq!(accepted(&listener), 1, "control: the listener should have a connection");

        let out = expect(env.safe(), &tcp_connect(port), Try::Errno(EPERM), "connect in the sandbox");
        assert_eq!(accepted(&listener), 0, "the sandbox let a connection through\n{}", out.report());
    }

    /// With the network off, binding a TCP port fails; the control binds at level full.
    fn tcp_bind_is_refused(user) {
        let env = Env::new(user);
        expect(env.full(), &tcp_bind(0), Try::Ok, "control: bind at level full");
        expect(env.safe(), &tcp_bind(0), Try::Errno(EPERM), "bind in the sandbox");
    }

    /// With the network off, a UDP datagram to a socket on the loopback never arrives;
    /// the control's does.
    fn udp_is_refused(user) {
        let env = Env::new(user);
        let (socket, port) = udp_listener();
        expect(env.full(), &udp_send(port), Try::Ok, "control: send at level full");
        assert_eq!(received(&socket), vec![b"gate-test".to_vec()], "control");

        expect(env.safe(), &udp_send(port), Try::Errno(EPERM), "send in the sandbox");
        assert!(received(&socket).is_empty(), "the sandbox let a datagram through");
    }

    /// Raw, packet, MPTCP, UDP, netlink and other sockets all fail with EPERM, seccomp's
    /// answer. The control opens each at level full; as the unprivileged user the raw and
    /// packet ones fail there too (no CAP_NET_RAW, also EPERM), so for that user the
    /// others carry the proof.
    fn other_sockets_are_refused_with_eperm(user) {
        let env = Env::new(user);
        for (what, code, needs_cap_net_raw) in SOCKETS {
            let control = if needs_cap_net_raw && !is_root(user) {
                Try::Errno(EPERM)
            } else {
                Try::Ok
            };
            expect(env.full(), code, control, &format!("control: a {what} socket at level full"));
            expect(env.safe(), code, Try::Errno(EPERM), &format!("a {what} socket in the sandbox"));
        }
    }

    /// Unix sockets are off by default too (a socket reached by path leads out of any
    /// sandbox): socket(AF_UNIX) fails with EPERM, while a stream socketpair(), whose
    /// ends reach only each other, works. --unix-sockets allows them; --net alone does
    /// not.
    fn unix_sockets_are_off_unless_allowed(user) {
        let env = Env::new(user);
        let unix = "socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)";
        let pair = "a, b = socket.socketpair(); a.sendall(b'x'); assert b.recv(1) == b'x'";
        expect(env.full(), unix, Try::Ok, "control: a Unix socket at level full");
        expect(env.safe(), unix, Try::Errno(EPERM), "a Unix socket in the sandbox");
        expect(env.safe().arg("--net"), unix, Try::Errno(EPERM), "a Unix socket with --net");
        expect(
            env.safe().args(["--net-connect", "1"]),
            unix,
            Try::Errno(EPERM),
            "a Unix socket with --net-connect",
        );
        expect(env.safe(), pair, Try::Ok, "socketpair in the sandbox");
        for flags in [&["--unix-sockets"][..], &["--unix-sockets", "--net"], &["--unix-sockets", "--net-connect", "1"]] {
            expect(env.safe().args(flags), unix, Try::Ok, &format!("a Unix socket with {flags:?}"));
        }
        expect(
            env.safe().arg("--unix-sockets"),
            "socket.socket(socket.AF_INET, socket.SOCK_DGRAM)",
            Try::Errno(EPERM),
            "--unix-sockets allows no network",
        );
    }

    /// With TCP ports allowed (--net-connect), stream sockets of IPv4 and IPv6 with
    /// protocol 0 or TCP (and any socket flags) can be opened; every other socket still
    /// fails with EPERM: MPTCP would slip past Landlock's TCP rules, and Landlock has no
    /// rules for the others at all.
    fn allowed_ports_allow_only_plain_tcp_sockets(user) {
        let env = Env::new(user);
        let gate = || env.safe().args(["--net-connect", "1"]);
        for (what, code) in [
            ("TCP", "socket.socket(socket.AF_INET, socket.SOCK_STREAM)"),
            ("TCP, explicitly", "socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)"),
            ("TCP with flags", "socket.socket(socket.AF_INET, socket.SOCK_STREAM | socket.SOCK_NONBLOCK | socket.SOCK_CLOEXEC)"),
            ("TCP over IPv6", "socket.socket(socket.AF_INET6, socket.SOCK_STREAM)"),
        ] {
            expect(gate(), code, Try::Ok, &format!("a {what} socket with --net-connect"));
        }
        let others = [
            ("seqpacket", "socket.socket(socket.AF_INET, socket.SOCK_SEQPACKET)"),
            ("raw IPv6", "socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)"),
            ("UDP over IPv6", "socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)"),
            ("AF_UNIX", "socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)"),
        ];
        for (what, code) in SOCKETS.map(|(what, code, _)| (what, code)).into_iter().chain(others) {
            expect(gate(), code, Try::Errno(EPERM), &format!("a {what} socket with --net-connect"));
        }
    }

    /// With --net-connect PORT, TCP to PORT works and to any other port fails (EACCES,
    /// Landlock's answer); UDP still fails.
    fn net_connect_allows_its_port_only(user) {
        let env = Env::new(user);
        let (allowed, allowed_port) = tcp_listener();
        let (other, other_port) = tcp_listener();
        let (udp, udp_port) = udp_listener();
        let gate = || env.safe().arg("--net-connect").arg(allowed_port.to_string());
        expect(gate(), &tcp_connect(allowed_port), Try::Ok, "the allowed port");
        expect(gate(), &tcp_connect(other_port), Try::Errno(EACCES), "another port");
        expect(gate(), &udp_send(udp_port), Try::Errno(EPERM), "UDP");
        // No port to bind: bind() itself is refused (seccomp), not only port 0 (Landlock).
        expect(gate(), &tcp_bind(0), Try::Errno(EPERM), "binding with only --net-connect");
        assert_eq!(accepted(&allowed), 1);
        assert_eq!(accepted(&other), 0, "the sandbox let a connection to another port through");
        assert!(received(&udp).is_empty(), "the sandbox let a datagram through");
    }

    /// With --net-bind PORT, binding PORT works and binding another port fails.
    fn net_bind_allows_its_port_only(user) {
        let env = Env::new(user);
        let port = free_port();
        let other = free_port();
        let gate = || env.safe().arg("--net-bind").arg(port.to_string());
        expect(gate(), &tcp_bind(port), Try::Ok, "binding the allowed port");
        expect(gate(), &tcp_bind(other), Try::Errno(EACCES), "binding another port");
        let listen = format!(
            "s = socket.socket()\ns.bind(('127.0.0.1', {port}))\ns.listen(1)\n\
             c = socket.create_connection(('127.0.0.1', {port}), timeout=5)"
        );
        expect(gate(), &listen, Try::Errno(EACCES), "connecting needs --net-connect");
    }

    /// With --net, TCP and UDP to loopback listeners work.
    fn net_allows_tcp_and_udp(user) {
        let env = Env::new(user);
        let (listener, port) = tcp_listener();
        let (udp, udp_port) = udp_listener();
        expect(env.safe().arg("--net"), &tcp_connect(port), Try::Ok, "TCP with --net");
        expect(env.safe().arg("--net"), &udp_send(udp_port), Try::Ok, "UDP with --net");
        expect(env.safe().arg("--net"), &tcp_bind(0), Try::Ok, "bind with --net");
        assert_eq!(accepted(&listener), 1);
        assert_eq!(received(&udp), vec![b"gate-test".to_vec()]);
        for (what, code, needs_cap_net_raw) in SOCKETS {
            // Raw and packet sockets need CAP_NET_RAW, which nothing in the sandbox has.
            let expected = if needs_cap_net_raw { Try::Errno(EPERM) } else { Try::Ok };
            expect(env.safe().arg("--net"), code, expected, &format!("a {what} socket with --net"));
        }
    }
}

// ---------------------------------------------------------------------------------------
// Other processes, abstract sockets, the terminal, the kernel.

for_each_user! {
    /// A signal to a process outside the sandbox fails, even to a process of the same
    /// user, and the process lives on; the control signals it at level full.
    fn signals_do_not_reach_processes_outside(user) {
        let env = Env::new(user);
        let mut outsider = Outsider::start(user, &[]);
        let pid = outsider.pid().to_string();
        let probe = sh(env.safe(), &format!("kill -0 {pid}"), &[]);
        assert_ne!(probe.code(), Some(0), "kill -0 should fail in the sandbox\n{}", probe.report());
        let term = sh(env.safe(), &format!("kill -TERM {pid}"), &[]);
        assert_ne!(term.code(), Some(0), "{}", term.report());
        let python = format!("os.kill({pid}, 15)");
        expect(env.safe(), &python, Try::Errno(EPERM), "os.kill in the sandbox");
        thread::sleep(Duration::from_millis(50));
        assert!(outsider.is_running(), "the sandbox let a signal kill a process outside\n{}", term.report());

        sh(env.full(), &format!("kill -0 {pid}"), &[]).assert_code(0);
        sh(env.full(), &format!("kill -TERM {pid}"), &[]).assert_code(0);
        assert!(outsider.ended(), "control: kill at level full should end the process");
    }

    /// Another process of the same user cannot be looked into: its environment (which
    /// holds secrets often enough) cannot be read through /proc. The control reads it.
    fn processes_outside_cannot_be_inspected(user) {
        let env = Env::new(user);
        let secret = unique("gate-test-secret");
        let outsider = Outsider::start(user, &[("GATE_TEST_SECRET", secret.as_str())]);
        let read = format!("tr '\\0' '\\n' < /proc/{}/environ", outsider.pid());
        sh(env.unmarked("sh"), &read, &[]).assert_stdout_contains(&secret);
        let out = sh(env.safe(), &read, &[]);
        assert!(
            !out.stdout().contains(&secret),
            "the sandbox let the environment of a process outside be read\n{}",
            out.report()
        );
    }

    /// An abstract Unix socket made outside the sandbox cannot be reached from inside,
    /// as a stream (connect) or as datagrams (sendto): by default no Unix socket can be
    /// made (seccomp), and with --unix-sockets Landlock's scope stops it. The control,
    /// outside gate, reaches both; at level full the mark's scope stops both as well.
    fn abstract_sockets_made_outside_are_unreachable(user) {
        let env = Env::new(user);
        let stream_name = unique("gate-test-abstract");
        let stream = UnixListener::bind_addr(&SocketAddr::from_abstract_name(&stream_name).unwrap())
            .unwrap();
        stream.set_nonblocking(true).unwrap();
        let dgram_name = unique("gate-test-abstract");
        let dgram = UnixDatagram::bind_addr(&SocketAddr::from_abstract_name(&dgram_name).unwrap())
            .unwrap();
        dgram.set_nonblocking(true).unwrap();
        let connect = format!(
            "socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).connect('\\0{stream_name}')"
        );
        let send = format!(
            "socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b'x', '\\0{dgram_name}')"
        );
        let count = || {
            let mut n = 0;
            while stream.accept().is_ok() {
                n += 1;
            }
            let mut buf = [0u8; 16];
            while dgram.recv(&mut buf).is_ok() {
                n += 1;
            }
            n
        };

        expect(env.unmarked("env"), &connect, Try::Ok, "control: connect outside gate");
        expect(env.unmarked("env"), &send, Try::Ok, "control: sendto outside gate");
        assert_eq!(count(), 2, "control");
        // At level full the mark scopes abstract sockets too (Landlock ABI 6 and later,
        // which this machine has; see src/sandbox/mark.rs).
        expect(env.full(), &connect, Try::Errno(EPERM), "connect at level full");
        expect(env.full(), &send, Try::Errno(EPERM), "sendto at level full");
        assert_eq!(count(), 0, "the mark let an abstract socket outside be reached");
        for flags in [&[][..], &["--unix-sockets"]] {
            let what = format!("in the sandbox with {flags:?}");
            expect(env.safe().args(flags), &connect, Try::Errno(EPERM), &format!("connect {what}"));
            expect(env.safe().args(flags), &send, Try::Errno(EPERM), &format!("sendto {what}"));
            assert_eq!(count(), 0, "the sandbox let an abstract socket outside be reached {what}");
        }
    }

    /// Keystrokes cannot be pushed into the terminal (TIOCSTI), nor the console driven
    /// (TIOCLINUX): both fail with EPERM, seccomp's answer, in a real terminal (a tmux
    /// window). The control, at level full: TIOCSTI works, unless the kernel disabled it
    /// (dev.tty.legacy_tiocsti = 0: EIO, except for CAP_SYS_ADMIN, so root); TIOCLINUX
    /// fails with an error of its own (a pseudo-terminal is no console), not EPERM.
    fn terminal_input_cannot_be_injected(user) {
        let env = Env::new(user);
        let legacy = fs::read_to_string("/proc/sys/dev/tty/legacy_tiocsti")
            .map(|v| v.trim() == "1")
            .unwrap_or(true);
        let program = |request: &str| {
            python_program(&format!("fcntl.ioctl(0, {request}, b'\\x06\\x00')"))
        };
        let run = |level: &str, request: &str| {
            let line = gate_command_line(
                user,
                level,
                &["--", python3().to_str().unwrap(), "-c", &program(request)],
            );
            let tmux = Tmux::start(&env, &line);
            let (screen, status) = tmux.finished();
            let result = result_in(&screen).unwrap_or_else(|| {
                panic!("no result at level {level} (status {status:?}):\n{screen}")
            });
            (result, screen)
        };
        let (control, screen) = run("full", "termios.TIOCSTI");
        let expected = if legacy || is_root(user) {
            Try::Ok
        } else {
            Try::Errno(libc::EIO)
        };
        assert_eq!(control, expected, "control: TIOCSTI at level full\n{screen}");
        let (result, screen) = run("safe", "termios.TIOCSTI");
        assert_eq!(result, Try::Errno(EPERM), "TIOCSTI in the sandbox\n{screen}");

        let (control, screen) = run("full", "0x541C");
        assert!(
            matches!(control, Try::Errno(e) if e != EPERM),
            "control: TIOCLINUX on a pseudo-terminal should fail by itself\n{screen}"
        );
        let (result, screen) = run("safe", "0x541C");
        assert_eq!(result, Try::Errno(EPERM), "TIOCLINUX in the sandbox\n{screen}");
    }

    /// io_uring (which can open sockets and files past the other checks) and the kernel
    /// keyring are refused with EPERM; at level full each call gives its own result (an
    /// io_uring instance, a key, ENOKEY, or for the io_uring calls on no instance, some
    /// error of the kernel's that is not EPERM).
    fn io_uring_and_the_keyring_are_refused(user) {
        let env = Env::new(user);
        let uring_control = match fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
            .map(|v| v.trim().to_owned())
            .as_deref()
        {
            Ok("0") | Err(_) => Try::Ok,
            Ok("1") if is_root(user) => Try::Ok,
            _ => Try::Errno(EPERM),
        };
        let calls = [
            (
                "io_uring_setup",
                format!("syscall({}, 1, ctypes.create_string_buffer(120))", libc::SYS_io_uring_setup),
                Some(uring_control),
            ),
            (
                "io_uring_enter",
                format!("syscall({}, -1, 0, 0, 0, None, 0)", libc::SYS_io_uring_enter),
                None,
            ),
            (
                "io_uring_register",
                format!("syscall({}, -1, 0, None, 0)", libc::SYS_io_uring_register),
                None,
            ),
            // KEYCTL_GET_KEYRING_ID of the process keyring (-2), creating it.
            ("keyctl", format!("syscall({}, 0, -2, 1)", libc::SYS_keyctl), Some(Try::Ok)),
            (
                "add_key",
                format!("syscall({}, b'user', b'gate-test', b'x', 1, -2)", libc::SYS_add_key),
                Some(Try::Ok),
            ),
            (
                "request_key",
                format!("syscall({}, b'user', b'gate-test-none', None, 0)", libc::SYS_request_key),
                Some(Try::Errno(libc::ENOKEY)),
            ),
        ];
        for (name, code, control) in calls {
            let what = format!("control: {name} at level full");
            match control {
                Some(control) => {
                    expect(env.full(), &code, control, &what);
                }
                None => {
                    let (result, out) = attempt(env.full(), &code);
                    assert!(
                        matches!(result, Try::Errno(e) if e != EPERM),
                        "{what}: {result:?}\n{}",
                        out.report()
                    );
                }
            }
            expect(env.safe(), &code, Try::Errno(EPERM), &format!("{name} in the sandbox"));
        }
    }

    /// Capabilities: none at all inside the sandbox, no_new_privs is set, and the seccomp
    /// filter is in force. The control shows root has capabilities at level full.
    fn the_command_has_no_capabilities(user) {
        let env = Env::new(user);
        let out = sh(env.safe(), "cat /proc/self/status", &[]);
        out.assert_code(0);
        let fields = status_fields(&out.stdout());
        // The bounding set is left alone: it bounds what an exec may grant, and with
        // no_new_privs and NOROOT no exec grants anything
        // (`a_file_capability_gains_nothing_as_root`).
        for set in ["CapInh", "CapPrm", "CapEff", "CapAmb"] {
            assert_eq!(
                fields.get(set).map(String::as_str),
                Some("0000000000000000"),
                "{set} in the sandbox\n{}",
                out.report()
            );
        }
        assert_eq!(fields.get("NoNewPrivs").map(String::as_str), Some("1"), "{}", out.report());
        assert_eq!(fields.get("Seccomp").map(String::as_str), Some("2"), "{}", out.report());

        if is_root(user) {
            let control = sh(env.full(), "cat /proc/self/status", &[]);
            let fields = status_fields(&control.stdout());
            assert_ne!(
                fields.get("CapEff").map(String::as_str),
                Some("0000000000000000"),
                "control: root has capabilities at level full\n{}",
                control.report()
            );
        }
    }
}

/// Installs a seccomp filter that answers the given system calls with "errno 0", so they
/// return 0 without doing anything, as a broken kernel or a runtime's filter could, then
/// execs the rest of its arguments. `CALLS`: comma-separated numbers, each optionally
/// `NR:ARG=VALUE` (only when that argument's low 32 bits are VALUE).
const ANSWER_ZERO: &str = r#"
import ctypes, os, struct, sys
def op(code, jt, jf, k): return struct.pack("HBBI", code, jt, jf, k)
LD, JEQ, RET, ERRNO_0, ALLOW = 0x20, 0x15, 0x06, 0x00050000, 0x7fff0000
prog = []
for call in sys.argv[1].split(","):
    nr, _, cond = call.partition(":")
    tail = [op(RET, 0, 0, ERRNO_0)]
    if cond:
        arg, value = (int(x) for x in cond.split("="))
        tail = [op(LD, 0, 0, 16 + 8 * arg), op(JEQ, 0, 1, value)] + tail
    prog += [op(LD, 0, 0, 0), op(JEQ, 0, len(tail), int(nr))] + tail
prog.append(op(RET, 0, 0, ALLOW))
code = ctypes.create_string_buffer(b"".join(prog))
fprog = ctypes.create_string_buffer(struct.pack("HxxxxxxQ", len(prog), ctypes.addressof(code)))
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl.argtypes = [ctypes.c_int] + [ctypes.c_ulong] * 4
for args in [(38, 1, 0, 0, 0), (22, 2, ctypes.addressof(fprog), 0, 0)]:
    if libc.prctl(*args) != 0:
        sys.exit("answer-zero: prctl: " + os.strerror(ctypes.get_errno()))
os.execv(sys.argv[2], sys.argv[2:])
"#;

/// gate at `level` under a parent filter that answers `calls` with 0 ([`ANSWER_ZERO`]).
fn answering_zero(env: &Env, calls: &str, level: &str) -> Gate {
    env.t
        .gate()
        .user(env.user)
        .program(python3())
        .args(["-c", ANSWER_ZERO, calls])
        .arg(gate_binary_for(env.user))
        .args(["--no-config", "--audit-log", "off", "--level", level])
}

/// As [`answering_zero`] at `safe`, but as root without CAP_SYS_ADMIN in the bounding
/// set (as in a container that may not mount), so that root's hidden paths are walked
/// around by Landlock, not covered by mounts, and can serve the file probe.
fn answering_zero_walked(env: &Env, calls: &str) -> Gate {
    if !is_root(env.user) {
        return answering_zero(env, calls, "safe");
    }
    env.t
        .gate()
        .user(env.user)
        .program(python3())
        .args(["-c", ANSWER_ZERO, calls])
        .arg(require_program("setpriv"))
        .args(["--bounding-set", "-sys_admin", "--"])
        .arg(gate_binary_for(env.user))
        .args(["--no-config", "--audit-log", "off", "--level", "safe"])
}

/// `env.safe()`, walked as in [`answering_zero_walked`].
fn safe_walked(env: &Env) -> Gate {
    if !is_root(env.user) {
        return env.safe();
    }
    env.t
        .gate()
        .user(env.user)
        .program(require_program("setpriv"))
        .args(["--bounding-set", "-sys_admin", "--"])
        .arg(gate_binary_for(env.user))
        .args(["--no-config", "--audit-log", "off", "--level", "safe"])
}

for_each_user! {
    /// Issue 13: a Landlock or seccomp layer that reports success without acting is
    /// caught. Under a parent filter that answers `landlock_restrict_self` (alone, or with
    /// `landlock_create_ruleset` and `landlock_add_rule`) or `seccomp` with 0, gate exits
    /// 125 with one line naming the layer, and the command ran not at all (it would have
    /// made a file in the workspace, and one outside, which only Landlock stops). Controls:
    /// without the filter the same command runs and its write outside is refused; under
    /// the filter at level full it runs too, so the filter does not break gate itself.
    fn a_layer_that_does_not_act_runs_nothing(user) {
        let env = Env::new(user);
        let ran = env.t.work.join("ran");
        let planted = env.outside.join("planted");
        let script = "touch \"$1\"; touch \"$2\"";
        let nr = |call: libc::c_long| call.to_string();
        let restrict = nr(libc::SYS_landlock_restrict_self);
        let all_three = format!(
            "{}:2=0,{},{}",
            libc::SYS_landlock_create_ruleset,
            libc::SYS_landlock_add_rule,
            libc::SYS_landlock_restrict_self
        );
        let seccomp = nr(libc::SYS_seccomp);
        for (calls, layer) in [
            (&restrict, "Landlock was enforced but does not act"),
            (&all_three, "Landlock was enforced but does not act"),
            (&seccomp, "the seccomp filter was loaded but does not act"),
        ] {
            let out = sh(answering_zero(&env, calls, "safe"), script, &[&ran, &planted]);
            out.assert_gate_error().assert_stderr_contains(layer);
            assert_eq!(out.stderr().lines().count(), 1, "{}", out.report());
            assert_absent(&ran, &out);
            assert_absent(&planted, &out);
        }

        let control = sh(env.safe(), script, &[&ran, &planted]);
        assert!(ran.exists(), "control: the command runs\n{}", control.report());
        assert_absent(&planted, &control);
        fs::remove_file(&ran).unwrap();

        let control = sh(answering_zero(&env, &restrict, "full"), script, &[&ran, &planted]);
        control.assert_code(0);
        assert!(ran.exists() && planted.exists(), "control: {}", control.report());
    }

    /// A gate that a command at `safe` starts runs its own command in a sandbox of its own,
    /// and its checks pass there: Landlock's file probe, and the scope probe, which it
    /// skips when no Unix socket can be made (the outer filter refuses them, so nothing
    /// inside can reach an abstract socket) and runs when they are allowed. The inner
    /// command writes in the workspace, which both sandboxes allow; a write outside stays
    /// refused.
    fn a_gate_inside_the_sandbox_runs_sandboxed(user) {
        let env = Env::new(user);
        let gate = gate_binary_for(user);
        let inner = env.t.work.join("inner");
        let outside = env.outside.join("inner");
        let script = "\"$1\" --no-config --audit-log off --level safe \
                      -c 'echo x > \"$0\"; echo x > \"$1\"' \"$2\" \"$3\"";
        for outer in [&[][..], &["--unix-sockets"][..]] {
            let out = sh(env.safe().args(outer), script, &[&gate, &inner, &outside]);
            assert!(inner.exists(), "outer {outer:?}: the inner gate ran nothing\n{}", out.report());
            assert!(!out.stderr().contains("gate: "), "outer {outer:?}\n{}", out.report());
            assert_absent(&outside, &out);
            fs::remove_file(&inner).unwrap();
        }
    }

    /// Where /proc/self/comm cannot show whether Landlock acts (here /proc is made
    /// writable with `--write /proc`; a read-only or missing /proc is the same), gate
    /// tries a file it hides or protects instead: one the user may write by its mode
    /// (~/.netrc, 0600), opened for writing, or else one it may read (~/.netrc, 0400),
    /// opened for reading. Under a parent filter that makes `landlock_restrict_self` a
    /// no-op, the refusal names that file and nothing runs; without the filter the
    /// command runs. With no such file, uid 65534 cannot be checked and nothing runs.
    /// Root, without capabilities by then, may write /etc/shadow by its mode, which is
    /// hidden from it: that is tried once ~/.netrc is read-only, and root runs. (Root
    /// runs without CAP_SYS_ADMIN here: where it covers hidden paths with mounts, they
    /// are not Landlock's to refuse and cannot serve the probe.)
    fn without_a_usable_proc_landlock_is_tried_on_a_hidden_file(user) {
        let env = Env::new(user);
        let netrc = env.file(&env.t.home.join(".netrc"), "machine example.com\n", 0o600);
        let shown = netrc.canonicalize().unwrap().display().to_string();
        let ran = env.t.work.join("ran");
        let touch = "touch \"$1\"";
        let restrict = libc::SYS_landlock_restrict_self.to_string();
        let faked = || answering_zero_walked(&env, &restrict).args(["--write", "/proc"]);
        let refused = |expected: &str| {
            let out = sh(faked(), touch, &[&ran]);
            out.assert_gate_error().assert_stderr_contains(&format!(
                "Landlock was enforced but does not act (opening {expected} answered success)"
            ));
            assert_absent(&ran, &out);
        };
        refused(&format!("{shown}, which the rules keep read-only, for writing"));
        let control = sh(safe_walked(&env).args(["--write", "/proc"]), touch, &[&ran]);
        control.assert_code(0);
        assert!(ran.exists(), "control: {}", control.report());
        fs::remove_file(&ran).unwrap();

        env.give(&netrc, 0o400);
        if is_root(user) {
            refused("/etc/shadow, which the rules keep read-only, for writing");
        } else {
            refused(&format!("{shown}, which the rules hide, for reading"));
        }

        fs::remove_file(&netrc).unwrap();
        let out = sh(safe_walked(&env).args(["--write", "/proc"]), touch, &[&ran]);
        if is_root(user) {
            out.assert_code(0);
            assert!(ran.exists(), "root is checked on /etc/shadow\n{}", out.report());
        } else {
            out.assert_gate_error().assert_stderr_contains(
                "cannot check that Landlock acts: the writable root /proc holds /proc/self/comm, \
                 and no file it protects or hides can be written or read by its mode",
            );
            assert_absent(&ran, &out);
        }
    }
}

/// Root prepares the sandbox with every capability, and the command gets none: a file
/// of another user's HOME looks writable to root while preparing (`CAP_DAC_OVERRIDE`)
/// but is not once the capabilities are dropped, and an open refused by the mode bits
/// would prove nothing about Landlock. So the file probe is chosen after they are
/// dropped: with /proc made writable and uid 65534's HOME (its ~/.netrc, 0600), root is
/// tried on /etc/shadow, which it owns, and a `landlock_restrict_self` that does not act
/// is caught. (Run as another user, this is the same as the test above with its own
/// HOME: ~/.netrc is tried.) Root runs without CAP_SYS_ADMIN here, so that its hidden
/// paths are walked around by Landlock rather than covered by mounts.
#[test]
fn root_is_tried_on_a_file_it_may_open_without_capabilities() {
    let env = Env::new(User::Current);
    let netrc = env.t.home.join(".netrc");
    fs::write(&netrc, "machine example.com\n").unwrap();
    fs::set_permissions(&netrc, fs::Permissions::from_mode(0o600)).unwrap();
    let expected = if running_as_root() {
        std::os::unix::fs::lchown(&netrc, Some(uid_of(User::Unprivileged)), None).unwrap();
        PathBuf::from("/etc/shadow")
    } else {
        netrc.canonicalize().unwrap()
    };
    let ran = env.t.work.join("ran");
    let restrict = libc::SYS_landlock_restrict_self.to_string();
    let faked = answering_zero_walked(&env, &restrict).args(["--write", "/proc"]);
    let out = sh(faked, "touch \"$1\"", &[&ran]);
    out.assert_gate_error().assert_stderr_contains(&format!(
        "does not act (opening {}, which the rules keep read-only, for writing answered success)",
        expected.display()
    ));
    assert_absent(&ran, &out);
}

/// On x86_64, x32 system calls (their own numbers, which the seccomp rules would not
/// match) are refused with EPERM. The control gets the kernel's own answer: the result,
/// or ENOSYS on a kernel without x32.
#[cfg(target_arch = "x86_64")]
#[test]
fn x32_system_calls_are_refused() {
    let env = Env::new(User::Current);
    // getpid in the x32 table.
    let code = "syscall(0x40000000 | 39)";
    let (control, out) = attempt(env.full(), code);
    assert_ne!(control, Try::Errno(EPERM), "control\n{}", out.report());
    expect(
        env.safe(),
        code,
        Try::Errno(EPERM),
        "an x32 system call in the sandbox",
    );
}

/// Root inside the sandbox cannot mount, set the hostname (set to its current value, so
/// that nothing changes if it wrongly works) or chroot; the control does all three
/// outside gate, unmounting at once (at level full a command cannot mount either: see
/// tests/approver_reach.rs). Run as another user, the control shows the user
/// cannot anyway, and the test checks the sandbox's answer (EPERM).
#[test]
fn root_cannot_mount_set_the_hostname_or_chroot() {
    let env = Env::new(User::Current);
    let mnt = env.dir(&env.t.work.join("mnt"), 0o755);
    let mnt_text = mnt.canonicalize().unwrap().to_str().unwrap().to_owned();
    let mounted = || {
        fs::read_to_string("/proc/self/mountinfo")
            .unwrap()
            .lines()
            .any(|l| l.split(' ').nth(4) == Some(mnt_text.as_str()))
    };
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount")
                .arg("-l")
                .arg(&self.0)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
    let _unmount = running_as_root().then(|| Unmount(mnt.clone()));
    let mount = format!(
        "m = {mnt_text:?}.encode()\n\
         if _libc.mount(b'none', m, b'tmpfs', 0, None) != 0:\n    \
             e = ctypes.get_errno(); raise OSError(e, os.strerror(e))\n\
         _libc.umount2(m, 0)"
    );
    let calls = [
        ("mount", mount),
        (
            "sethostname",
            "socket.sethostname(socket.gethostname())".to_owned(),
        ),
        ("chroot", "os.chroot('/')".to_owned()),
    ];
    let control = if running_as_root() {
        Try::Ok
    } else {
        Try::Errno(EPERM)
    };
    for (name, code) in calls {
        expect(
            env.unmarked("env"),
            &code,
            control,
            &format!("control: {name} outside gate"),
        );
        assert!(!mounted(), "control: the tmpfs should be unmounted");
        expect(
            env.safe(),
            &code,
            Try::Errno(EPERM),
            &format!("{name} in the sandbox"),
        );
        assert!(
            !mounted(),
            "the sandbox let a tmpfs be mounted on {mnt_text}"
        );
    }
}

/// Root without capabilities cannot read or take over a file of another user (no
/// CAP_DAC_OVERRIDE, no CAP_CHOWN); the control can at level full. Only root can have a
/// file of another user to try this on: run as another user, there is nothing to check.
#[test]
#[ignore = "root tier: cargo test --lib --test all -- --ignored, as root"]
fn root_cannot_override_file_permissions() {
    needs_root("this test tries a file of another user");
    let env = Env::new(User::Current);
    let private = env.t.work.join("private");
    fs::write(&private, "private\n").unwrap();
    std::os::unix::fs::chown(&private, Some(NOBODY), Some(NOBODY)).unwrap();
    fs::set_permissions(&private, fs::Permissions::from_mode(0o600)).unwrap();
    let read = "cat \"$1\"";
    let take = "chown 0 \"$1\"";

    let out = sh(env.safe(), read, &[&private]);
    assert!(!out.stdout().contains("private"), "{}", out.report());
    out.assert_stderr_contains("Permission denied");
    let out = sh(env.safe(), take, &[&private]);
    out.assert_stderr_contains("Operation not permitted");
    assert_eq!(
        fs::metadata(&private).unwrap().uid(),
        NOBODY,
        "{}",
        out.report()
    );

    sh(env.full(), read, &[&private])
        .assert_code(0)
        .assert_stdout("private\n");
    sh(env.full(), take, &[&private]).assert_code(0);
    assert_eq!(fs::metadata(&private).unwrap().uid(), 0);
}

/// A setuid-root program gains nothing in the sandbox (no_new_privs): run by uid 65534,
/// a setuid-root copy of `id` says the effective uid is 65534, where run by the test
/// itself it says 0 (the control; at level full it gains nothing either, see
/// tests/approver_reach.rs).
///
/// Only root can make a setuid-root file. Run as another user, the test checks what
/// makes setuid powerless instead: NoNewPrivs is 1 in the sandbox (and 0 outside gate,
/// unless the test itself already runs with no_new_privs).
#[test]
fn a_setuid_program_gains_nothing() {
    if running_as_root() {
        let env = Env::new(User::Unprivileged);
        let copy = env.t.work.join("id-setuid");
        let status = Command::new(require_program("cp"))
            .arg(require_program("id"))
            .arg(&copy)
            .status()
            .unwrap();
        assert!(status.success());
        std::os::unix::fs::chown(&copy, Some(0), Some(0)).unwrap();
        fs::set_permissions(&copy, fs::Permissions::from_mode(0o4755)).unwrap();
        let run = |level: &str| env.at(level).arg("--").arg(&copy).arg("-u").run();
        env.unmarked("env")
            .arg("--")
            .arg(&copy)
            .arg("-u")
            .run()
            .assert_code(0)
            .assert_stdout("0\n");
        run("safe")
            .assert_code(0)
            .assert_stdout(&format!("{NOBODY}\n"));
    } else {
        let env = Env::new(User::Current);
        let nnp = |gate: Gate| {
            let out = sh(gate, "grep NoNewPrivs /proc/self/status", &[]);
            status_fields(&out.stdout())
                .get("NoNewPrivs")
                .cloned()
                .unwrap_or_default()
        };
        assert_eq!(nnp(env.safe()), "1", "no_new_privs in the sandbox");
        let own = fs::read_to_string("/proc/self/status").unwrap();
        if status_fields(&own).get("NoNewPrivs").map(String::as_str) == Some("0") {
            assert_eq!(
                nnp(env.unmarked("sh")),
                "0",
                "control: no_new_privs outside gate"
            );
        }
    }
}

/// A program with file capabilities gains none in the sandbox, as root too (no_new_privs,
/// and the locked NOROOT securebit, which gate sets as root): a copy of `cat` given
/// CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH reads another user's mode-0600 file when uid
/// 65534 runs it outside gate (the control: the capability works), and cannot when root
/// runs it at `safe`, where root without capabilities is refused that file like anyone.
/// Also checked: the securebits inside are the four gate sets, locked.
///
/// Only root can give a file capabilities. Run as another user, the test checks what
/// makes them powerless instead: NoNewPrivs is 1 in the sandbox.
#[test]
fn a_file_capability_gains_nothing_as_root() {
    if !running_as_root() {
        let env = Env::new(User::Current);
        let out = sh(env.safe(), "grep NoNewPrivs /proc/self/status", &[]);
        assert_eq!(
            status_fields(&out.stdout())
                .get("NoNewPrivs")
                .map(String::as_str),
            Some("1"),
            "{}",
            out.report()
        );
        return;
    }
    let env = Env::new(User::Current);
    let secret = env.t.work.join("not-roots.txt");
    fs::write(&secret, "another user's secret\n").unwrap();
    std::os::unix::fs::chown(&secret, Some(NOBODY - 1), Some(NOBODY - 1)).unwrap();
    fs::set_permissions(&secret, fs::Permissions::from_mode(0o600)).unwrap();
    let copy = env.t.work.join("cat-with-caps");
    fs::copy(require_program("cat"), &copy).unwrap();
    fs::set_permissions(&copy, fs::Permissions::from_mode(0o755)).unwrap();
    // struct vfs_cap_data, revision 2, effective: CAP_DAC_OVERRIDE (1) and
    // CAP_DAC_READ_SEARCH (2) permitted.
    let mut xattr = Vec::new();
    for word in [0x0200_0001u32, (1 << 1) | (1 << 2), 0, 0, 0] {
        xattr.extend_from_slice(&word.to_le_bytes());
    }
    let name = std::ffi::CString::new("security.capability").unwrap();
    let path = std::ffi::CString::new(copy.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: both strings are NUL-terminated and alive, and the value is `xattr`'s bytes.
    let rc = unsafe {
        libc::setxattr(
            path.as_ptr(),
            name.as_ptr(),
            xattr.as_ptr().cast(),
            xattr.len(),
            0,
        )
    };
    assert_eq!(rc, 0, "setxattr: {}", std::io::Error::last_os_error());

    // The control: the capability works for a user who otherwise may not read the file.
    let as_nobody = Env::new(User::Unprivileged);
    as_nobody
        .unmarked("env")
        .arg("--")
        .arg(&copy)
        .arg(&secret)
        .run()
        .assert_code(0)
        .assert_stdout("another user's secret\n");
    env.safe()
        .arg("--")
        .arg(&copy)
        .arg(&secret)
        .run()
        .assert_code(1)
        .assert_stderr_contains("Permission denied");

    // PR_GET_SECUREBITS is 27.
    let (result, out) = attempt(
        env.safe(),
        "print('SECUREBITS %d' % _libc.prctl(27, 0, 0, 0, 0))",
    );
    assert_eq!(result, Try::Ok, "{}", out.report());
    assert!(
        out.stdout().contains("SECUREBITS 195\n"),
        "securebits NOROOT, NOROOT_LOCKED, NO_CAP_AMBIENT_RAISE and its lock (0xc3)\n{}",
        out.report()
    );
}

// ---------------------------------------------------------------------------------------
// What must work.

for_each_user! {
    /// Files are made, changed, renamed, linked and removed in the workspace, in /tmp,
    /// in /dev/shm and in $TMPDIR.
    fn files_can_be_made_changed_and_removed_where_writable(user) {
        let env = Env::new(user);
        let tmpdir = env.dir(&env.t.root.join("tmpdir"), 0o755);
        let script = r#"
            set -e
            for d in "$PWD" "$(mktemp -d /tmp/gate-test-XXXXXX)" \
                     "$(mktemp -d /dev/shm/gate-test-XXXXXX)" "$(mktemp -d)"; do
                cd "$d"
                mkdir sub
                echo one > sub/f
                echo two >> sub/f
                sed -i s/one/ONE/ sub/f
                mv sub/f sub/g
                cp sub/g sub/h
                ln sub/g sub/hard
                ln -s g sub/soft
                cat sub/soft > /dev/null
                mkfifo sub/fifo
                truncate -s 2 sub/h
                chmod +x sub/h
                touch -d 2001-01-01 sub/h
                : > sub/hard
                rm sub/g sub/hard sub/soft sub/fifo
                mv sub renamed
                rm -r renamed
                echo kept > kept
                echo "done $d"
            done
        "#;
        let out = env.safe().env("TMPDIR", &tmpdir).args(["-c", script]).run();
        let _cleanup: Vec<Removed> = out
            .stdout()
            .lines()
            .filter_map(|line| line.strip_prefix("done "))
            .filter(|dir| dir.starts_with("/tmp/") || dir.starts_with("/dev/shm/"))
            .map(|dir| Removed(PathBuf::from(dir)))
            .collect();
        out.assert_code(0);
        assert_eq!(out.stdout().matches("done ").count(), 4, "{}", out.report());
        assert_eq!(fs::read_to_string(env.t.work.join("kept")).unwrap(), "kept\n");
        let made_in_tmpdir: Vec<PathBuf> =
            fs::read_dir(&tmpdir).unwrap().map(|e| e.unwrap().path()).collect();
        assert_eq!(made_in_tmpdir.len(), 1, "mktemp should use $TMPDIR\n{}", out.report());
        assert_eq!(fs::read_to_string(made_in_tmpdir[0].join("kept")).unwrap(), "kept\n");
    }

    /// A directory given with --write is writable too; nothing else is.
    fn extra_write_paths_are_writable(user) {
        let env = Env::new(user);
        let out = sh(
            env.safe().arg("--write").arg(&env.outside),
            "echo x > \"$1/made\" && mkdir \"$1/dir\" && echo y > \"$1/dir/f\"; echo z > \"$HOME/nope\"",
            &[&env.outside],
        );
        assert!(env.outside.join("dir/f").exists(), "{}", out.report());
        assert!(!env.t.home.join("nope").exists(), "{}", out.report());
    }

    /// git works in the workspace: init, add, commit.
    fn git_works_in_the_workspace(user) {
        let env = Env::new(user);
        let out = sh(
            env.safe(),
            "git init -q && echo hi > a && git add a && \
             git -c user.name=t -c user.email=t@t commit -q -m first && \
             git -c user.name=t -c user.email=t@t commit -q --allow-empty -m x && \
             git log --oneline | wc -l",
            &[],
        );
        out.assert_code(0);
        assert_eq!(out.stdout().trim(), "2", "{}", out.report());
    }

    /// python3 runs, and gcc builds a C program in the workspace, which then runs.
    fn python_and_a_c_compiler_work(user) {
        let env = Env::new(user);
        require_program("gcc");
        env.safe()
            .arg("--")
            .arg(python3())
            .args(["-c", "print(6*7)"])
            .run()
            .assert_code(0)
            .assert_stdout("42\n");
        let out = sh(
            env.safe(),
            "printf '#include <stdio.h>\\nint main(void) { puts(\"built\"); return 0; }\\n' > hello.c \
             && gcc -O1 -o hello hello.c && ./hello",
            &[],
        );
        out.assert_code(0).assert_stdout("built\n");
    }

    /// Pipes, FIFOs, socketpairs, the usual device files, reading the system and signals
    /// among the sandbox's own processes all work; with --unix-sockets, so do Unix
    /// sockets in the workspace and abstract sockets made inside.
    fn pipes_devices_and_local_ipc_work(user) {
        let env = Env::new(user);
        let script = r#"
            echo hello | tr a-z A-Z
            head -c 1000 /dev/urandom | wc -c
            head -c 1000 /dev/random | wc -c
            head -c 4 /dev/zero | od -An -tx1
            echo gone > /dev/null && echo null-ok
            head -c 1 /dev/zero 2>&1 > /dev/full | grep -q 'No space' && echo full-ENOSPC
            grep -c '^root:' /etc/passwd
            ls /usr/bin > /dev/null && echo listed
            sleep 30 & kill $!; wait $!; echo "signalled $?"
        "#;
        let out = sh(env.safe(), script, &[]);
        out.assert_code(0).assert_stdout(
            "HELLO\n1000\n1000\n 00 00 00 00\nnull-ok\nfull-ENOSPC\n1\nlisted\nsignalled 143\n",
        );
        let pipes = r#"
            r, w = os.pipe(); os.write(w, b"z"); assert os.read(r, 1) == b"z"
            a, b = socket.socketpair(); a.sendall(b"p"); assert b.recv(1) == b"p"
            os.mkfifo("fifo"); fd = os.open("fifo", os.O_RDWR); os.write(fd, b"f")
            assert os.read(fd, 1) == b"f"
        "#;
        expect(env.safe(), pipes, Try::Ok, "pipes, socketpair and FIFOs in the sandbox");
        let ipc = r#"
            a = socket.socket(socket.AF_UNIX); a.bind("sock"); a.listen(1)
            b = socket.socket(socket.AF_UNIX); b.connect("sock")
            c, _ = a.accept(); b.sendall(b"x"); assert c.recv(1) == b"x"
            name = "\0gate-test-inside-%d" % os.getpid()
            a = socket.socket(socket.AF_UNIX); a.bind(name); a.listen(1)
            b = socket.socket(socket.AF_UNIX); b.connect(name)
            c, _ = a.accept(); b.sendall(b"y"); assert c.recv(1) == b"y"
        "#;
        expect(
            env.safe().arg("--unix-sockets"),
            ipc,
            Try::Ok,
            "Unix sockets of the sandbox's own, with --unix-sockets",
        );
    }

    /// A program in a real terminal (a tmux window) works: the terminal's size can be
    /// read (an ioctl on the terminal gate got), and the terminal can be opened again
    /// by name, as /dev/tty and as /dev/pts/N.
    fn a_terminal_program_works(user) {
        let env = Env::new(user);
        let line = gate_command_line(
            user,
            "safe",
            &[
                "--",
                "sh",
                "-c",
                "stty size; tty; stty size < /dev/tty; stty size < \"$(tty)\"; \
                 echo hi > /dev/tty; echo READY",
            ],
        );
        let tmux = Tmux::start(&env, &line);
        let (screen, _) = tmux.finished();
        let lines: Vec<&str> = screen.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 6, "{screen}");
        assert_eq!(lines[0], "24 80", "{screen}");
        assert!(lines[1].starts_with("/dev/pts/"), "{screen}");
        assert_eq!(&lines[2..], ["24 80", "24 80", "hi", "READY"], "{screen}");
    }

    /// The command's exit status, output and input are its own.
    fn the_command_keeps_its_status_and_streams(user) {
        let env = Env::new(user);
        sh(env.safe(), "echo out; echo err >&2; exit 7", &[])
            .assert_code(7)
            .assert_stdout("out\n")
            .assert_stderr_contains("err");
        env.safe()
            .stdin("line one\nline two\n")
            .args(["--", "cat"])
            .run()
            .assert_code(0)
            .assert_stdout("line one\nline two\n");
    }

    /// A process the command leaves behind does not outlive it at `safe` (it is ended
    /// with the command: tests/left_behind.rs), so it never writes anything later, not
    /// even inside the workspace. The control's writes outside once the command is gone.
    fn a_background_process_writes_nothing_after_the_command(user) {
        let env = Env::new(user);
        let late = env.t.home.join("late");
        let script = "(sleep 0.3; echo x > \"$1\"; echo finished > done) > /dev/null 2>&1 &";
        for level in ["full", "safe"] {
            let _ = fs::remove_file(env.t.work.join("done"));
            let _ = fs::remove_file(&late);
            let out = sh(env.at(level), script, &[&late]);
            out.assert_code(0);
            if level == "full" {
                let end = Instant::now() + DEADLINE;
                while !env.t.work.join("done").exists() {
                    assert!(Instant::now() < end, "control: the background process did not finish");
                    thread::sleep(Duration::from_millis(10));
                }
                assert!(late.exists(), "control: it wrote outside\n{}", out.report());
            } else {
                thread::sleep(Duration::from_millis(1000));
                assert!(
                    !env.t.work.join("done").exists() && !late.exists(),
                    "at safe the background process ran on after the command\n{}",
                    out.report()
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// What gate says about the sandbox.

/// The audit record of a run at `safe` describes the sandbox: the kernel's Landlock ABI,
/// what is writable and hidden, the network, and that everything is enforced.
#[test]
fn the_audit_record_describes_the_sandbox() {
    let env = Env::new(User::Current);
    let log = env.t.default_audit_log();
    let run = |args: &[&str]| {
        env.t
            .gate()
            .args(["--no-config", "--level", "safe"])
            .args(args)
            .args(["-c", "true"])
            .run()
            .assert_code(0);
        let records = audit_records(&log);
        records.last().unwrap()["sandbox"].clone()
    };
    let sandbox = run(&[]);
    assert!(sandbox["landlock_abi"].as_i64().unwrap() >= 6, "{sandbox}");
    assert_eq!(sandbox["network"], "off", "{sandbox}");
    let ssh = env.ssh.canonicalize().unwrap().display().to_string();
    assert!(
        sandbox["deny_read"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p == &ssh),
        "{ssh} should be in deny_read: {sandbox}"
    );
    let work = env.t.work.canonicalize().unwrap().display().to_string();
    let write: Vec<&str> = sandbox["write"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert!(
        write.contains(&work.as_str()) && write.contains(&"/tmp"),
        "{sandbox}"
    );
    assert_eq!(sandbox["seccomp"], true, "{sandbox}");
    assert_eq!(sandbox["scopes"], true, "{sandbox}");
    assert_eq!(sandbox["no_new_privs"], true, "{sandbox}");
    let capabilities = if running_as_root() {
        "dropped"
    } else {
        "none held"
    };
    assert_eq!(sandbox["capabilities"], capabilities, "{sandbox}");
    assert_eq!(sandbox["unix_sockets"], false, "{sandbox}");
    assert_eq!(sandbox["not_enforced"], serde_json::json!([]), "{sandbox}");
    // This kernel has every Landlock feature: no residual (issue 24).
    assert_eq!(sandbox["residual"], serde_json::json!([]), "{sandbox}");

    let sandbox = run(&["--net-connect", "443", "--net-bind", "8080"]);
    assert_eq!(
        sandbox["network"],
        serde_json::json!({"tcp_connect": [443], "tcp_bind": [8080]}),
        "{sandbox}"
    );
    let sandbox = run(&["--net", "--unix-sockets"]);
    assert_eq!(sandbox["network"], "on", "{sandbox}");
    assert_eq!(sandbox["unix_sockets"], true, "{sandbox}");
}

/// On a kernel that enforces everything (this one: see
/// `this_kernel_can_run_the_sandbox_tests`), --best-effort changes nothing: no warning,
/// and the sandbox is all there.
#[test]
fn best_effort_on_a_capable_kernel_warns_about_nothing() {
    let env = Env::new(User::Current);
    let out = sh(
        env.safe().arg("--best-effort"),
        "echo ok; grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status",
        &[],
    );
    out.assert_code(0)
        .assert_stderr_empty()
        .assert_stdout("ok\nNoNewPrivs:\t1\nSeccomp:\t2\n");
    let out = sh(
        env.safe().arg("--best-effort"),
        "cat \"$1\"",
        &[&env.secret],
    );
    assert!(!out.stdout().contains(&env.secret_text), "{}", out.report());
    assert!(!out.stderr().contains("warning"), "{}", out.report());
}

// ---------------------------------------------------------------------------------------
// The environment, gate's own files, gate inside the sandbox.

for_each_user! {
    /// $TMPDIR is writable, but it is only an environment variable: pointed at the home
    /// directory, it does not unprotect the shell start-up files there. The control
    /// appends to ~/.bashrc at level full.
    fn tmpdir_does_not_unprotect_start_up_files(user) {
        let env = Env::new(user);
        env.give(&env.t.home, 0o755);
        let bashrc = env.file(&env.t.home.join(".bashrc"), "# mine\n", 0o644);
        let project = env.dir(&env.t.home.join("project"), 0o755);
        let append = "echo forged >> \"$1\"; echo made > \"$2/new\"";
        let out = sh(env.safe().env("TMPDIR", &env.t.home), append, &[&bashrc, &project]);
        assert_eq!(
            fs::read_to_string(&bashrc).unwrap(),
            "# mine\n",
            "TMPDIR=$HOME let ~/.bashrc be changed\n{}",
            out.report()
        );
        assert!(project.join("new").exists(), "$TMPDIR should be writable\n{}", out.report());
        sh(env.full().env("TMPDIR", &env.t.home), append, &[&bashrc, &project]).assert_code(0);
        assert!(fs::read_to_string(&bashrc).unwrap().contains("forged"), "control");
    }

    /// A writable root of / would make everything writable: TMPDIR=/ or --write / makes
    /// gate run nothing (125).
    fn a_writable_root_of_slash_runs_nothing(user) {
        let env = Env::new(user);
        env.t.assert_side_effects_are_visible(user);
        for gate in [env.safe().env("TMPDIR", "/"), env.safe().args(["--write", "/"])] {
            let out = gate.args(["-c", "touch F"]).run();
            assert_absent(&env.t.file("F"), &out);
            out.assert_gate_error().assert_stderr_contains("nothing was run");
        }
    }

    /// The configuration file gate read (--config) and the audit log it writes
    /// (--audit-log) are write-protected wherever they are, the workspace included; the
    /// rest of the workspace stays writable (but for its top level, which holds them).
    /// The control changes both at level full.
    fn the_config_file_and_audit_log_gate_used_are_protected(user) {
        let env = Env::new(user);
        let config = env.file(&env.t.work.join("gate.toml"), "level = \"safe\"\n", 0o644);
        let log = env.file(&env.t.work.join("audit.jsonl"), "", 0o644);
        let sub = env.dir(&env.t.work.join("sub"), 0o755);
        let gate = |config: &Path| {
            env.t
                .gate()
                .user(user)
                .arg("--config")
                .arg(config)
                .arg("--audit-log")
                .arg(&log)
        };
        let tamper = "echo forged >> \"$1\"; echo forged >> \"$2\"; echo made > sub/new";
        let out = sh(gate(&config), tamper, &[&config, &log]);
        assert_eq!(fs::read_to_string(&config).unwrap(), "level = \"safe\"\n", "{}", out.report());
        assert!(
            !fs::read_to_string(&log).unwrap().lines().any(|l| l == "forged"),
            "the sandbox let the audit log be forged\n{}",
            out.report()
        );
        assert_eq!(audit_records(&log).len(), 1, "{}", out.report());
        assert!(sub.join("new").exists(), "{}", out.report());

        let full = env.file(&env.t.root.join("full.toml"), "level = \"full\"\n", 0o644);
        sh(gate(&full), tamper, &[&config, &log]).assert_code(0);
        assert!(fs::read_to_string(&config).unwrap().contains("forged"), "control");
    }

    /// A gate started inside the sandbox cannot loosen it: at level full, or at safe with
    /// the network and extra writable paths, its command is still in the outer sandbox.
    fn a_gate_inside_the_sandbox_cannot_loosen_it(user) {
        let env = Env::new(user);
        let gate = gate_binary_for(user);
        let target = env.outside.join("from-inner-gate");
        let (listener, port) = tcp_listener();
        let inner = format!(
            "\"$1\" --no-config --audit-log off --level full -c 'echo x > \"$0\"' \"$2\"; \
             \"$1\" --no-config --audit-log off --level safe --net --write \"$3\" \
                 -c 'echo x > \"$0\"' \"$2\"; \
             \"$1\" --no-config --audit-log off --level full -- {python} -c \
                 'import socket; socket.create_connection((\"127.0.0.1\", {port}), timeout=5)'; \
             true",
            python = python3().display()
        );
        let out = sh(env.safe(), &inner, &[&gate, &target, &env.outside]);
        assert!(!target.exists(), "an inner gate wrote outside the sandbox\n{}", out.report());
        assert_eq!(accepted(&listener), 0, "an inner gate connected\n{}", out.report());
        let control = sh(env.full(), &inner, &[&gate, &target, &env.outside]);
        assert!(target.exists(), "control\n{}", control.report());
        assert!(accepted(&listener) >= 1, "control\n{}", control.report());
    }
}

// ---------------------------------------------------------------------------------------
// Failing closed.

for_each_user! {
    /// Without HOME gate cannot find the secrets to hide, so it runs nothing (125). The
    /// control shows the command would leave a mark.
    fn without_home_nothing_runs(user) {
        let env = Env::new(user);
        env.t.assert_side_effects_are_visible(user);
        let out = env.safe().env_remove("HOME").args(["-c", "touch F"]).run();
        assert_absent(&env.t.file("F"), &out);
        out.assert_gate_error().assert_stderr_contains("HOME");
    }

    /// The workspace is writable, so / is never one, and a workspace inside a hidden
    /// directory is refused: gate runs nothing (125).
    fn a_workspace_that_cannot_be_sandboxed_runs_nothing(user) {
        let env = Env::new(user);
        let marker = env.outside.join("ran");
        let inside_secret = env.dir(&env.ssh.join("project"), 0o755);
        for cwd in [Path::new("/"), inside_secret.as_path()] {
            let control = sh(env.full().current_dir(cwd), "touch \"$1\"", &[&marker]);
            control.assert_code(0);
            fs::remove_file(&marker).unwrap();
            let out = sh(env.safe().current_dir(cwd), "touch \"$1\"", &[&marker]);
            assert_absent(&marker, &out);
            out.assert_gate_error().assert_stderr_contains("nothing was run");
        }
    }
}

// ---------------------------------------------------------------------------------------
// Unix sockets that lead out.

for_each_user! {
    /// A Unix socket inside a hidden directory (an ssh-agent socket in ~/.ssh) cannot be
    /// reached: Unix sockets are off by default. (With --unix-sockets it can be: before
    /// Landlock ABI 9 nothing mediates connect() by path; docs/sandbox.md says so under
    /// Limits.) The control connects at level full.
    fn sockets_in_hidden_directories_cannot_be_reached(user) {
        let env = Env::new(user);
        let path = env.ssh.join("agent.sock");
        let listener = UnixListener::bind(&path).unwrap();
        listener.set_nonblocking(true).unwrap();
        env.give(&path, 0o777);
        let connect = format!(
            "socket.socket(socket.AF_UNIX).connect({:?})",
            path.to_str().unwrap()
        );
        let count = || std::iter::from_fn(|| listener.accept().ok()).count();

        let (result, out) = attempt(env.safe(), &connect);
        let reached = count();
        assert!(
            result != Try::Ok && reached == 0,
            "the sandbox let a socket in {} be connected to ({result:?}, {reached} accepted)\n{}",
            env.ssh.display(),
            out.report()
        );
        expect(env.full(), &connect, Try::Ok, "control: connect at level full");
        assert_eq!(count(), 1, "control");
    }

    /// A command in a tmux window cannot ask the tmux server, outside the sandbox, to run
    /// a command for it, which would run unsandboxed (the same danger as TIOCSTI): the
    /// server's socket, named by $TMUX, is a Unix socket, and those are off by default.
    /// (With --unix-sockets the server can be reached: see docs/sandbox.md, Limits.) The
    /// control does it at level full.
    fn the_terminal_multiplexer_cannot_run_commands_for_the_sandbox(user) {
        let env = Env::new(user);
        let escaped = env.outside.join("escaped");
        let direct = env.outside.join("direct");
        let script = format!(
            "echo x > {direct}; tmux run-shell 'echo x > {escaped}'; echo DONE",
            direct = direct.display(),
            escaped = escaped.display(),
        );
        for (level, writes) in [("full", true), ("safe", false)] {
            let line = gate_command_line(user, level, &["-c", &script]);
            let tmux = Tmux::start(&env, &line);
            let (screen, _) = tmux.finished();
            assert!(screen.contains("DONE"), "{screen}");
            drop(tmux);
            assert_eq!(direct.exists(), writes, "at level {level}: {screen}");
            assert_eq!(
                escaped.exists(),
                writes,
                "at level {level}, the command in the sandbox had tmux write {} for it\n{screen}",
                escaped.display()
            );
            let _ = fs::remove_file(&escaped);
            let _ = fs::remove_file(&direct);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Permission changes. Landlock does not mediate chmod (nor utime, extended attributes, or
// chgrp to one's own groups). The seccomp filter refuses the dangerous part: the setuid
// and setgid bits, set by chmod or given to a new file, which root without capabilities
// could otherwise put on any file it owns (/bin/bash included). Other permission changes
// to files the user owns stay possible; docs/sandbox.md lists that under Limits.

for_each_user! {
    /// chmod u+s / g+s is refused everywhere, inside the workspace and outside; so is
    /// creating a file with either bit. The control sets them at level full.
    fn setuid_and_setgid_bits_cannot_be_set(user) {
        let env = Env::new(user);
        let outside = env.file(&env.outside.join("mode"), "x\n", 0o600);
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o7777;

        let out = sh(
            env.safe(),
            "chmod 4755 \"$1\"; chmod 2755 \"$1\"; touch mine; chmod u+s mine; chmod g+s mine; \
             python3 -c 'import os; os.open(\"made\", os.O_CREAT | os.O_WRONLY, 0o4755)'; \
             stat -c %a mine",
            &[&outside],
        );
        assert_eq!(mode(&outside), 0o600, "setuid/setgid set outside\n{}", out.report());
        assert_eq!(out.stdout().trim(), "644", "setuid/setgid set inside\n{}", out.report());
        assert!(
            !env.t.work.join("made").exists() || mode(&env.t.work.join("made")) & 0o6000 == 0,
            "a setuid file was created\n{}",
            out.report()
        );
        assert!(out.stderr().contains("Operation not permitted"), "{}", out.report());

        sh(env.full(), "chmod 4755 \"$1\"", &[&outside]).assert_code(0);
        assert_eq!(mode(&outside), 0o4755, "control");
    }
}

// ---------------------------------------------------------------------------------------
// Escapes of issue 13 closed by the seccomp filter: datagram socketpairs, names bound by
// socketpair ends, TCP Fast Open past the connect rule, listen() without bind(), and root
// opening up the files it owns.

/// The datagrams waiting on `socket`.
fn datagrams(socket: &UnixDatagram) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut buf = [0u8; 2048];
    loop {
        match socket.recv(&mut buf) {
            Ok(n) => out.push(buf[..n].to_vec()),
            Err(e) if e.kind() == ErrorKind::WouldBlock => return out,
            Err(e) => panic!("recv failed: {e}"),
        }
    }
}

/// Python code that opens a socketpair of `kind` and sends, from one end, a datagram
/// carrying a descriptor (SCM_RIGHTS) to the Unix socket at `path`.
fn pair_sends_out(kind: &str, path: &Path) -> String {
    format!(
        "import struct\n\
         a, b = socket.socketpair(socket.AF_UNIX, socket.{kind})\n\
         fd = os.open('/etc/hostname', os.O_RDONLY)\n\
         rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack('i', fd))]\n\
         a.sendmsg([b'gate-test'], rights, 0, {path:?})"
    )
}

/// The TCP Fast Open client setting (net.ipv4.tcp_fastopen), turned on for as long as
/// this lives if it was off, and put back after.
struct FastOpen(Option<String>);

impl FastOpen {
    const SYSCTL: &str = "/proc/sys/net/ipv4/tcp_fastopen";

    #[track_caller]
    fn client() -> FastOpen {
        let old = fs::read_to_string(Self::SYSCTL).expect("cannot read net.ipv4.tcp_fastopen");
        let value: u32 = old.trim().parse().unwrap();
        if value & 1 == 1 {
            return FastOpen(None);
        }
        assert!(
            running_as_root(),
            "TCP Fast Open is off for clients here (net.ipv4.tcp_fastopen = {value}) and only \
             root can turn it on: the test cannot show the attack"
        );
        fs::write(Self::SYSCTL, format!("{}\n", value | 1)).unwrap();
        FastOpen(Some(old))
    }
}

impl Drop for FastOpen {
    fn drop(&mut self) {
        if let Some(old) = &self.0 {
            let _ = fs::write(Self::SYSCTL, old);
        }
    }
}

for_each_user! {
    /// A datagram (or SOCK_RAW, which is one) socketpair end could send to any Unix
    /// socket by path, descriptors included: with Unix sockets off, such a pair cannot
    /// be made (EPERM). The stream and seqpacket pairs that stay allowed are connected
    /// to each other and cannot be re-targeted (EISCONN). The control sends a datagram
    /// carrying a descriptor to a socket made outside, at level full, and it arrives.
    fn a_datagram_socketpair_reaches_no_unix_socket_outside(user) {
        let env = Env::new(user);
        let path = env.outside.join("log.sock");
        let log = UnixDatagram::bind(&path).unwrap();
        log.set_nonblocking(true).unwrap();
        env.give(&path, 0o666);

        expect(env.full(), &pair_sends_out("SOCK_DGRAM", &path), Try::Ok, "control: at level full");
        assert_eq!(datagrams(&log), vec![b"gate-test".to_vec()], "control: the datagram");

        for kind in ["SOCK_DGRAM", "SOCK_RAW"] {
            expect(env.safe(), &pair_sends_out(kind, &path), Try::Errno(EPERM), kind);
            expect(
                env.safe().args(["--net-connect", "1"]),
                &pair_sends_out(kind, &path),
                Try::Errno(EPERM),
                &format!("{kind} with --net-connect"),
            );
            expect(
                env.safe().arg("--net"),
                &pair_sends_out(kind, &path),
                Try::Errno(EPERM),
                &format!("{kind} with --net"),
            );
        }
        let eisconn = Try::Errno(libc::EISCONN);
        let stream_path = env.outside.join("stream.sock");
        let stream = UnixListener::bind(&stream_path).unwrap();
        stream.set_nonblocking(true).unwrap();
        env.give(&stream_path, 0o666);
        let stream_connect = format!("a, b = socket.socketpair()\na.connect({stream_path:?})");
        expect(env.safe(), &stream_connect, eisconn, "a stream pair end cannot connect elsewhere");
        let stream_send = format!("a, b = socket.socketpair()\na.sendto(b'gate-test', {path:?})");
        expect(env.safe(), &stream_send, eisconn, "a stream pair end cannot send elsewhere");
        let seqpacket = format!(
            "a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)\n\
             a.sendto(b'gate-test', {path:?})\nassert b.recv(16) == b'gate-test'"
        );
        expect(env.safe(), &seqpacket, Try::Ok, "a seqpacket pair ignores the address");
        assert!(datagrams(&log).is_empty(), "the sandbox let a datagram out");
        assert!(stream.accept().is_err(), "the sandbox let a connection out");
        // With Unix sockets allowed, datagram pairs are as allowed as the sockets.
        expect(
            env.safe().arg("--unix-sockets"),
            "socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)",
            Try::Ok,
            "a datagram pair with --unix-sockets",
        );
    }

    /// A socketpair end can be bound to an abstract name (or a path in a writable root),
    /// squatting it before the program that owns it starts: with no port to bind and Unix
    /// sockets off, bind() is refused (EPERM). The control binds at level full.
    fn a_socketpair_end_cannot_be_bound_to_a_name(user) {
        let env = Env::new(user);
        let bind = |name: &str| format!("a, b = socket.socketpair()\na.bind('\\0{name}')");
        expect(env.full(), &bind(&unique("gate-test-squat")), Try::Ok, "control: at level full");
        expect(env.safe(), &bind(&unique("gate-test-squat")), Try::Errno(EPERM), "in the sandbox");
        expect(
            env.safe().args(["--net-connect", "1"]),
            &bind(&unique("gate-test-squat")),
            Try::Errno(EPERM),
            "with --net-connect",
        );
        let path = env.t.work.join("squat.sock");
        let bind_path = format!("a, b = socket.socketpair()\na.bind({path:?})");
        expect(env.safe(), &bind_path, Try::Errno(EPERM), "a path in the workspace");
        assert!(!path.exists(), "the sandbox let a socket file be made");
    }

    /// sendto(MSG_FASTOPEN) connects from inside the send call, where Landlock's connect
    /// rule never looks: under --net-connect, it fails (EPERM) for IPv4 and IPv6, by
    /// sendto, sendmsg and sendmmsg, and the listener sees no connection. A connect() with
    /// TCP_FASTOPEN_CONNECT set goes through the connect rule (EACCES). The control: the
    /// same sendto at level full reaches the listener, and connect() to the allowed port
    /// works in the sandbox.
    fn tcp_fast_open_cannot_pass_the_port_rules(user) {
        let _fast_open = FastOpen::client();
        let env = Env::new(user);
        let (allowed, allowed_port) = tcp_listener();
        let (other, port) = tcp_listener();
        let other6 = TcpListener::bind("[::1]:0").expect("cannot listen on ::1");
        other6.set_nonblocking(true).unwrap();
        let port6 = other6.local_addr().unwrap().port();
        let sendto = |family: &str, host: &str, port: u16| {
            format!(
                "s = socket.socket(socket.{family}, socket.SOCK_STREAM)\n\
                 s.sendto(b'gate-test', socket.MSG_FASTOPEN, ('{host}', {port}))"
            )
        };
        let sendmsg = format!(
            "s = socket.socket()\n\
             s.sendmsg([b'gate-test'], [], socket.MSG_FASTOPEN, ('127.0.0.1', {port}))"
        );
        // Python has no sendmmsg: one mmsghdr by hand, a sockaddr_in in its msghdr.
        let sendmmsg = format!(
            "import struct\n\
             L = ctypes.c_long\n\
             name = ctypes.create_string_buffer(struct.pack('=H', socket.AF_INET)\n\
                 + struct.pack('!H', {port}) + socket.inet_aton('127.0.0.1') + bytes(8))\n\
             data = ctypes.create_string_buffer(b'gate-test')\n\
             iov = ctypes.create_string_buffer(struct.pack('QQ', ctypes.addressof(data), 9))\n\
             mm = ctypes.create_string_buffer(struct.pack('QI4xQQQQi4xI4x',\n\
                 ctypes.addressof(name), 16, ctypes.addressof(iov), 1, 0, 0, 0, 0))\n\
             s = socket.socket()\n\
             assert syscall(L({nr}), L(s.fileno()), mm, L(1), L(socket.MSG_FASTOPEN)) == 1",
            nr = libc::SYS_sendmmsg,
        );
        let fastopen_connect = format!(
            "s = socket.socket()\ns.setsockopt(socket.IPPROTO_TCP, 30, 1)\n\
             s.connect(('127.0.0.1', {port}))\ns.send(b'gate-test')"
        );

        expect(env.full(), &sendto("AF_INET", "127.0.0.1", port), Try::Ok, "control: IPv4 at level full");
        expect(env.full(), &sendto("AF_INET6", "::1", port6), Try::Ok, "control: IPv6 at level full");
        expect(env.full(), &sendmsg, Try::Ok, "control: sendmsg at level full");
        expect(env.full(), &sendmmsg, Try::Ok, "control: sendmmsg at level full");
        assert_eq!(accepted(&other), 3, "control: the listener should have three connections");
        assert_eq!(accepted(&other6), 1, "control: the IPv6 listener should have a connection");

        let gate = || env.safe().arg("--net-connect").arg(allowed_port.to_string());
        expect(gate(), &tcp_connect(allowed_port), Try::Ok, "control: the allowed port");
        assert_eq!(accepted(&allowed), 1, "control: the allowed port's listener");
        let sandboxed = [
            ("sendto, IPv4", sendto("AF_INET", "127.0.0.1", port), Try::Errno(EPERM)),
            ("sendto, IPv6", sendto("AF_INET6", "::1", port6), Try::Errno(EPERM)),
            ("sendmsg", sendmsg.clone(), Try::Errno(EPERM)),
            ("sendmmsg", sendmmsg.clone(), Try::Errno(EPERM)),
            ("TCP_FASTOPEN_CONNECT", fastopen_connect, Try::Errno(EACCES)),
        ];
        for (what, code, expected) in sandboxed {
            expect(gate(), &code, expected, &format!("{what} in the sandbox"));
        }
        assert_eq!(accepted(&other), 0, "TCP Fast Open reached a port the rules refuse");
        assert_eq!(accepted(&other6), 0, "TCP Fast Open reached a port the rules refuse (IPv6)");
    }

    /// listen() on a socket that was never bound picks a free port on every address,
    /// and Landlock, which checks bind(), never sees it: under --net-connect alone (no
    /// port to bind), listen() fails (EPERM). The control at level full listens, and a
    /// connection reaches the port it got.
    fn listen_without_bind_is_refused_under_port_rules(user) {
        let env = Env::new(user);
        let listen = "s = socket.socket()\ns.listen(1)\nport = s.getsockname()[1]\n\
                      c = socket.create_connection(('127.0.0.1', port), timeout=5)\n\
                      s.accept()";
        expect(env.full(), listen, Try::Ok, "control: at level full");
        let (_allowed, allowed_port) = tcp_listener();
        let gate = || env.safe().arg("--net-connect").arg(allowed_port.to_string());
        expect(gate(), "socket.socket().listen(1)", Try::Errno(EPERM), "listen in the sandbox");
        expect(
            gate(),
            "socket.socket(socket.AF_INET6).listen(1)",
            Try::Errno(EPERM),
            "listen over IPv6 in the sandbox",
        );
    }
}

/// fchmodat2(AT_FDCWD, $1, 0666, 0), by its number (Linux 6.6; x86_64 and aarch64 alike),
/// exiting with the error's text on failure.
const FCHMODAT2_0666: &str = "python3 -c 'import ctypes as c, os, sys; l = c.CDLL(None, use_errno=True); \
     r = l.syscall(c.c_long(452), c.c_long(-100), os.fsencode(sys.argv[1]), c.c_long(0o666), c.c_long(0)); \
     r < 0 and sys.exit(os.strerror(c.get_errno()))' \"$1\"";

/// setxattrat(AT_FDCWD, $1, 0, \"user.gate\", {value: \"x\", size: 1}), by its number
/// (Linux 6.13; x86_64 and aarch64 alike), exiting with the error's text on failure.
const SETXATTRAT: &str = "python3 -c 'import ctypes as c, os, struct, sys; l = c.CDLL(None, use_errno=True); \
     v = c.create_string_buffer(b\"x\"); a = struct.pack(\"QII\", c.addressof(v), 1, 0); \
     r = l.syscall(c.c_long(463), c.c_long(-100), os.fsencode(sys.argv[1]), c.c_long(0), b\"user.gate\", a, c.c_size_t(len(a))); \
     r < 0 and sys.exit(os.strerror(c.get_errno()))' \"$1\"";

/// As root, chmod that adds a group or other write bit, and setting an extended
/// attribute (a POSIX ACL is one), are refused: root still owns most of the system, and
/// `chmod 0666 /etc/passwd` would outlive the command. Tried on a root-owned file
/// outside the writable roots, by chmod, python's os.chmod and setxattr, setfacl, and
/// fchmodat2 and setxattrat by number; the controls do chmod, setfacl, fchmodat2 and
/// setxattrat at level full. Inside the workspace, root's chmod 0644 and 0755 still work.
///
/// As uid 65534 (the second half, or the only one when the tests do not run as root)
/// the rule does not apply: a root-owned file cannot be changed even at level full,
/// and chmod 0664 of its own file in the workspace works in the sandbox.
#[test]
fn root_cannot_open_up_the_files_it_owns() {
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    if running_as_root() {
        let env = Env::new(User::Current);
        let passwd = env.file(
            &env.outside.join("passwd"),
            "root:x:0:0::/root:/bin/sh\n",
            0o644,
        );
        let attempts = [
            "chmod 0666 \"$1\"",
            "chmod g+w \"$1\"",
            "chmod o+w \"$1\"",
            "python3 -c 'import os, sys; os.chmod(sys.argv[1], 0o646)' \"$1\"",
            "setfacl -m u:65534:rw \"$1\"",
            "python3 -c 'import os, sys; os.setxattr(sys.argv[1], \"user.gate\", b\"x\")' \"$1\"",
            FCHMODAT2_0666,
            SETXATTRAT,
        ];
        for attempt in attempts {
            let out = sh(env.safe(), attempt, &[&passwd]);
            assert_ne!(
                out.code(),
                Some(0),
                "{attempt} in the sandbox\n{}",
                out.report()
            );
            assert!(
                out.stderr().contains("Operation not permitted"),
                "{attempt}\n{}",
                out.report()
            );
            assert_eq!(
                mode(&passwd),
                0o644,
                "{attempt} in the sandbox\n{}",
                out.report()
            );
        }
        let acl = sh(env.full(), "getfacl -cn \"$1\"", &[&passwd]);
        assert!(
            !acl.stdout().contains("user:65534"),
            "an ACL was set\n{}",
            acl.report()
        );

        sh(env.full(), "chmod 0666 \"$1\"", &[&passwd]).assert_code(0);
        assert_eq!(mode(&passwd), 0o666, "control: chmod at level full");
        fs::set_permissions(&passwd, fs::Permissions::from_mode(0o644)).unwrap();
        sh(
            env.full(),
            "setfacl -m u:65534:rw \"$1\" && getfacl -cn \"$1\"",
            &[&passwd],
        )
        .assert_code(0)
        .assert_stdout_contains("user:65534:rw-");

        fs::set_permissions(&passwd, fs::Permissions::from_mode(0o644)).unwrap();
        sh(env.full(), FCHMODAT2_0666, &[&passwd]).assert_code(0);
        assert_eq!(mode(&passwd), 0o666, "control: fchmodat2 at level full");
        fs::set_permissions(&passwd, fs::Permissions::from_mode(0o644)).unwrap();
        sh(env.full(), SETXATTRAT, &[&passwd]).assert_code(0);
        let listed = sh(
            env.full(),
            "python3 -c 'import os, sys; print(os.listxattr(sys.argv[1]))' \"$1\"",
            &[&passwd],
        );
        listed.assert_code(0).assert_stdout_contains("user.gate");

        let out = sh(
            env.safe(),
            "touch mine && chmod 0644 mine && chmod 0755 mine && stat -c %a mine",
            &[],
        );
        out.assert_code(0).assert_stdout("755\n");
    }
    let env = Env::new(User::Unprivileged);
    let root_file = env.t.root.join("root-owned");
    fs::write(&root_file, "x\n").unwrap();
    fs::set_permissions(&root_file, fs::Permissions::from_mode(0o644)).unwrap();
    if running_as_root() {
        std::os::unix::fs::chown(&root_file, Some(0), Some(0)).unwrap();
    }
    if uid_of(User::Unprivileged) != fs::metadata(&root_file).unwrap().uid() {
        let out = sh(env.full(), "chmod 0666 \"$1\"", &[&root_file]);
        assert_ne!(
            out.code(),
            Some(0),
            "another user's file at level full\n{}",
            out.report()
        );
    }
    sh(
        env.safe(),
        "touch mine && chmod 0664 mine && stat -c %a mine",
        &[],
    )
    .assert_code(0)
    .assert_stdout("664\n");
    assert_eq!(mode(&root_file), 0o644);
}

// ---------------------------------------------------------------------------------------
// Issue 13, the Landlock spec: registry tokens, other terminals, protected paths that do
// not exist yet, and second mounts of a protected tree.

for_each_user! {
    /// The package-registry and vault tokens in the home directory are hidden, while the
    /// ordinary settings beside them (~/.cargo/config.toml) stay readable. The control
    /// reads each token at level full.
    fn registry_and_vault_tokens_cannot_be_read(user) {
        let env = Env::new(user);
        let home = &env.t.home;
        env.dir(&home.join(".cargo"), 0o755);
        let settings = env.file(&home.join(".cargo/config.toml"), "[build]\n", 0o644);
        let mut tokens: Vec<(PathBuf, String)> = Vec::new();
        for file in [
            ".npmrc", ".pypirc", ".cargo/credentials.toml", ".cargo/credentials", ".vault-token",
        ] {
            let text = unique("gate-test-token");
            tokens.push((env.file(&home.join(file), &format!("{text}\n"), 0o644), text));
        }
        let paths: Vec<&Path> = tokens.iter().map(|(p, _)| p.as_path()).collect();
        let read_each = "for f; do cat \"$f\" && echo \"READ $f\"; done; true";

        let control = sh(env.full(), read_each, &paths);
        for (path, text) in &tokens {
            assert!(
                control.stdout().contains(text.as_str()),
                "control: {} should be readable at level full\n{}",
                path.display(),
                control.report()
            );
        }
        let out = sh(env.safe(), read_each, &paths);
        for (path, text) in &tokens {
            assert!(
                !out.stdout().contains(text.as_str()),
                "the sandbox let {} be read\n{}",
                path.display(),
                out.report()
            );
        }
        sh(env.safe(), "cat \"$1\"", &[&settings]).assert_code(0);
    }
}

/// A new pseudo-terminal pair, the slave made the user's (as a login gives a session's
/// terminal to its user), and the slave's name.
fn session_terminal(env: &Env) -> (std::os::fd::OwnedFd, std::os::fd::OwnedFd, PathBuf) {
    let pty = nix::pty::openpty(None, None).expect("cannot open a pseudo-terminal");
    let name = fs::read_link(format!(
        "/proc/self/fd/{}",
        std::os::fd::AsRawFd::as_raw_fd(&pty.slave)
    ))
    .unwrap();
    assert!(name.starts_with("/dev/pts/"), "{}", name.display());
    env.give(&name, 0o620);
    (pty.master, pty.slave, name)
}

/// What the master of a pseudo-terminal holds, without waiting.
fn drain(master: &std::os::fd::OwnedFd) -> String {
    let flags = nix::fcntl::fcntl(master, nix::fcntl::FcntlArg::F_GETFL).unwrap();
    let flags = nix::fcntl::OFlag::from_bits_retain(flags) | nix::fcntl::OFlag::O_NONBLOCK;
    nix::fcntl::fcntl(master, nix::fcntl::FcntlArg::F_SETFL(flags)).unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = nix::unistd::read(master, &mut buf) {
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&out).into_owned()
}

for_each_user! {
    /// Another session's terminal (a /dev/pts/N of the same user that gate was not
    /// handed) cannot be opened, for reading (to steal what is typed there) or writing
    /// (to show a fake prompt, or change its modes). The control opens it at level full.
    fn other_terminals_cannot_be_opened(user) {
        let env = Env::new(user);
        let (_master, _slave, name) = session_terminal(&env);
        for (flags, what) in [("os.O_RDONLY", "reading"), ("os.O_WRONLY", "writing"), ("os.O_RDWR", "both")] {
            let body = format!(
                "os.close(os.open({:?}, {flags} | os.O_NOCTTY))",
                name.to_str().unwrap()
            );
            expect(env.full(), &body, Try::Ok, &format!("control: {what} at level full"));
            expect(env.safe(), &body, Try::Errno(EACCES), &format!("another terminal, {what}"));
        }
    }

    /// The terminal gate was handed keeps working in the sandbox: the command sees a
    /// terminal on its descriptors, reads and sets its modes, writes to it, and opens it
    /// again by name.
    fn the_handed_terminal_works(user) {
        let env = Env::new(user);
        let (master, _slave, name) = session_terminal(&env);
        let body = "
            assert os.isatty(0) and os.isatty(2)
            mode = termios.tcgetattr(0)
            termios.tcsetattr(0, termios.TCSANOW, mode)
            os.write(2, b'ON-THE-TERMINAL\\n')
            fd = os.open(os.ttyname(0), os.O_RDWR | os.O_NOCTTY)
            os.write(fd, b'BY-NAME\\n')
        ";
        for level in ["full", "safe"] {
            let out = env
                .unmarked("sh")
                .args(["-c", "exec \"$0\" \"$@\" <\"$T\" 2>\"$T\""])
                .arg(gate_binary_for(user))
                .args(["--no-config", "--audit-log", "off", "--level", level, "--"])
                .arg(python3())
                .args(["-c", &python_program(body)])
                .env("T", &name)
                .run();
            assert_eq!(result_in(&out.stdout()), Some(Try::Ok), "at level {level}\n{}", out.report());
            let screen = drain(&master);
            assert!(
                screen.contains("ON-THE-TERMINAL") && screen.contains("BY-NAME"),
                "at level {level}, the terminal shows {screen:?}\n{}",
                out.report()
            );
        }
    }
}

for_each_user! {
    /// Issue 13: with HOME under /tmp and a secret in ~/.ssh, hiding it would take away
    /// the right to create files directly in /tmp (Claude Code writes its
    /// /tmp/claude-*-cwd file there, so every command failed), and a hidden secret must
    /// stay hidden: where gate walks around hidden paths (any user but root), it refuses
    /// the layout at start with one line that says to move HOME, and runs nothing (no
    /// file made in /tmp, the secret not printed). Root covers hidden paths with mounts
    /// instead, which takes nothing from /tmp: there the file is made and the secret
    /// stays hidden. Controls: at level full the command makes the file and reads the
    /// secret; at safe, with the same HOME but nothing hidden in it, it makes the file.
    fn a_secret_hidden_in_tmp_is_refused_at_start(user) {
        let env = Env::new_in(user, "/tmp");
        let made = PathBuf::from("/tmp").join(unique("gate-test-new"));
        let _cleanup = Removed(made.clone());
        let script = "touch \"$1\"; cat \"$2\"";
        let out = sh(env.safe(), script, &[&made, &env.secret]);
        assert!(!out.stdout().contains(&env.secret_text), "{}", out.report());
        if is_root(user) {
            assert!(made.exists(), "root covers, so /tmp stays creatable\n{}", out.report());
            fs::remove_file(&made).unwrap();
        } else {
            out.assert_gate_error()
                .assert_stderr_contains("Set HOME to a directory outside /tmp");
            assert_eq!(out.stderr().lines().count(), 1, "{}", out.report());
            assert_absent(&made, &out);
        }

        let control = sh(env.full(), script, &[&made, &env.secret]);
        control.assert_code(0).assert_stdout_contains(&env.secret_text);
        assert!(made.exists(), "control: {}", control.report());
        fs::remove_file(&made).unwrap();

        fs::remove_dir_all(&env.ssh).unwrap();
        let control = sh(env.safe(), "touch \"$1\"", &[&made]);
        control.assert_code(0);
        assert!(made.exists(), "control: nothing hidden in /tmp\n{}", control.report());
    }
}

for_each_user! {
    /// With TMPDIR=$HOME (so HOME is a writable root), files gate would protect or hide
    /// but that do not exist yet cannot be made: gate's user configuration (a planted
    /// `level = "full"` would loosen the next run), its default audit log, fish's
    /// start-up files, and a hidden secret's directory (~/.config/gh). ~/.config and
    /// ~/.local/state exist, and nothing protected is in them yet. (The top of HOME
    /// holds ~/.ssh, so nothing can be made there anyway.) The control makes each at
    /// level full.
    fn protected_paths_that_do_not_exist_yet_cannot_be_made(user) {
        let env = Env::new(user);
        let home = &env.t.home;
        env.dir(&home.join(".config"), 0o755);
        env.dir(&home.join(".local/state"), 0o755);
        let config = home.join(".config/gate/config.toml");
        let log = home.join(".local/state/gate/audit.jsonl");
        let fish = home.join(".config/fish/config.fish");
        let gh = home.join(".config/gh/hosts.yml");
        let plant = "for f; do mkdir -p \"${f%/*}\"; printf 'level = \"full\"\\n' > \"$f\"; done; true";
        let run = |level: &str| {
            env.t
                .gate()
                .user(user)
                .env("TMPDIR", home)
                .env_remove("XDG_CONFIG_HOME")
                .env_remove("XDG_STATE_HOME")
                .args(["--no-config", "--level", level, "--", "sh", "-c", plant, "sh"])
                .args([&config, &log, &fish, &gh])
                .run()
        };
        let out = run("safe");
        out.assert_code(0);
        for path in [&config, &fish, &gh] {
            assert!(!path.exists(), "the sandbox let {} be made\n{}", path.display(), out.report());
        }
        let record = fs::read_to_string(&log).unwrap_or_default();
        assert!(
            record.starts_with('{') && record.contains("\"level\":\"safe\""),
            "the sandbox let this run's audit record be replaced: {record:?}\n{}",
            out.report()
        );

        fs::remove_dir_all(home.join(".local/state/gate")).unwrap();
        let control = run("full");
        for path in [&config, &log, &fish, &gh] {
            assert_eq!(
                fs::read_to_string(path).unwrap_or_default(),
                "level = \"full\"\n",
                "control: {} at level full\n{}",
                path.display(),
                control.report()
            );
        }
    }

    /// An audit log in the workspace (`--audit-log`) that does not exist before the run
    /// cannot be replaced by the run's own command: gate's record stays. The control
    /// replaces it at level full.
    fn a_first_audit_log_in_the_workspace_cannot_be_replaced(user) {
        let env = Env::new(user);
        let log = env.t.work.join("audit.jsonl");
        let replace = "rm -f audit.jsonl; mv audit.jsonl gone 2>/dev/null; echo forged > audit.jsonl; true";
        let run = |level: &str| {
            env.t
                .gate()
                .user(user)
                .args(["--no-config", "--audit-log"])
                .arg(&log)
                .args(["--level", level, "-c", replace])
                .run()
        };
        let out = run("safe");
        out.assert_code(0);
        let text = fs::read_to_string(&log).unwrap_or_default();
        assert!(
            text.starts_with('{') && text.contains("\"level\":\"safe\""),
            "the command replaced the audit log: {text:?}\n{}",
            out.report()
        );
        fs::remove_file(&log).unwrap();
        run("full");
        assert_eq!(fs::read_to_string(&log).unwrap(), "forged\n", "control");
    }
}

for_each_user! {
    /// A second mount of the home directory (a bind mount elsewhere, as containers and
    /// some distributions make) is no way around the lists: through it ~/.ssh cannot
    /// be read, and ~/.bashrc cannot be changed even where the alias is writable
    /// (TMPDIR there). The mount is made in a private mount namespace (so this needs
    /// root, which then starts gate as the test's user); the control reads and writes
    /// through the alias at level full.
    fn a_second_mount_of_home_is_hidden_and_protected_too(user) needs root because "it bind-mounts a second copy of the home directory" {
        let env = Env::new(user);
        let bashrc = env.file(&env.t.home.join(".bashrc"), "# mine\n", 0o644);
        let alias = env.dir(&env.t.root.join("alias"), 0o755);
        let alias_secret = alias.join(env.secret.strip_prefix(&env.t.home).unwrap());
        let run = |level: &str| {
            let mut command = Command::new(require_program("unshare"));
            command
                .args(["--mount", "--propagation", "private", "--", "sh", "-c"])
                .arg("mount --bind \"$1\" \"$2\" && shift 2 && exec \"$@\"")
                .arg("sh")
                .arg(&env.t.home)
                .arg(&alias);
            if uid_of(user) != effective_uid() {
                command.args(["setpriv", &format!("--reuid={NOBODY}"), &format!("--regid={NOBODY}")]);
                command.args(["--clear-groups", "--"]);
            }
            command
                .arg(gate_binary_for(user))
                .args(["--no-config", "--audit-log", "off", "--level", level, "--", "sh", "-c"])
                .arg("cat \"$1\"; echo forged >> \"$2\"; true")
                .arg("sh")
                .arg(&alias_secret)
                .arg(alias.join(".bashrc"))
                .env_clear()
                .envs(env.variables())
                .env("TMPDIR", &alias)
                .current_dir(&env.t.work);
            let (status, text) = run_bounded(command, "unshare and gate");
            assert!(
                status.success() && !text.contains("unshare:") && !text.contains("mount:"),
                "could not bind-mount the home directory for the test (needs root): {text}"
            );
            text
        };
        let text = run("safe");
        assert!(!text.contains(&env.secret_text), "the secret was read through the alias: {text}");
        assert_eq!(
            fs::read_to_string(&bashrc).unwrap(),
            "# mine\n",
            "~/.bashrc was changed through the alias: {text}"
        );
        let text = run("full");
        assert!(text.contains(&env.secret_text), "control: read through the alias: {text}");
        assert!(fs::read_to_string(&bashrc).unwrap().contains("forged"), "control: {text}");
    }
}
