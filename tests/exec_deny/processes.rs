//! What the exec-check tests see of processes: a command held at a handshake while the
//! test looks around, and the processes gate leaves beside the command (the exec check's
//! supervisor), found in /proc by the run's marker or process group.

use std::fmt;
use std::fs;
use std::io::Write as _;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use super::support::{MARKER, give};
use crate::common::*;

/// The start of a command that waits for the test: it writes `ready`, then blocks reading
/// the FIFO `go` until the test writes to it. Only shell builtins, so that it works when
/// every exec fails.
pub const HANDSHAKE: &str = "echo ready > ready; read go < go";

// ---------------------------------------------------------------------------------------
// A command held at the handshake.

/// A gate whose command waits at [`HANDSHAKE`] until [`Paused::release`].
pub struct Paused {
    running: Option<Running>,
    go: PathBuf,
    pub pid: u32,
}

impl Paused {
    /// Start `gate` (whose command starts with [`HANDSHAKE`]) and wait until the command
    /// has written `ready`. If it never does, the run's outcome is the failure message.
    pub fn start(env: &TestEnv, gate: Gate, user: User) -> Paused {
        let go = env.file("go");
        nix::unistd::mkfifo(&go, nix::sys::stat::Mode::from_bits_truncate(0o666))
            .expect("cannot make the FIFO");
        fs::set_permissions(&go, fs::Permissions::from_mode(0o666)).unwrap();
        give(&go, user);
        let running = gate.spawn();
        let mut paused = Paused {
            pid: running.pid,
            running: Some(running),
            go,
        };
        let ready = env.file("ready");
        let end = Instant::now() + DEADLINE;
        while !fs::read_to_string(&ready).is_ok_and(|t| t.ends_with('\n')) {
            if Instant::now() >= end {
                let outcome = paused.release();
                panic!(
                    "the command never reached the handshake\n{}",
                    outcome.report()
                );
            }
            thread::sleep(Duration::from_millis(5));
        }
        paused
    }

    /// Let the command go on, and wait for it (within the deadline).
    pub fn release(&mut self) -> Outcome {
        self.let_go();
        self.running.take().expect("released once").wait()
    }

    /// Write to the FIFO the command waits on. A command that is not (or no longer)
    /// waiting gets nothing: the wait for the run has the deadline.
    fn let_go(&self) {
        let end = Instant::now() + DEADLINE;
        loop {
            let opened = fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&self.go);
            match opened {
                Ok(mut fifo) => {
                    let _ = fifo.write_all(b"go\n");
                    return;
                }
                Err(e) if e.raw_os_error() == Some(libc::ENXIO) && Instant::now() < end => {
                    thread::sleep(Duration::from_millis(5));
                }
                Err(_) => return,
            }
        }
    }
}

impl Drop for Paused {
    /// A test that fails while the command waits lets it go, so that nothing is left
    /// blocked on the FIFO.
    fn drop(&mut self) {
        if self.running.is_some() {
            self.let_go();
            if !thread::panicking() {
                let _ = self.release();
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Processes.

/// A process seen in /proc.
#[derive(Debug, Clone)]
pub struct Proc {
    pub pid: u32,
    pub ppid: u32,
    pub pgid: u32,
    pub comm: String,
    pub exe: Option<PathBuf>,
    pub uid: Option<u32>,
}

impl fmt::Display for Proc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let exe = self
            .exe
            .as_deref()
            .map_or_else(|| "?".to_owned(), |e| e.display().to_string());
        let uid = self.uid.map_or_else(|| "?".to_owned(), |u| u.to_string());
        write!(
            f,
            "pid {} (parent {}, group {}, uid {uid}): {} [{exe}]",
            self.pid, self.ppid, self.pgid, self.comm
        )
    }
}

impl Proc {
    fn read(pid: u32) -> Option<Proc> {
        let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
        let open = stat.find('(')?;
        let close = stat.rfind(')')?;
        let comm = stat[open + 1..close].to_owned();
        let mut rest = stat[close + 1..].split_whitespace();
        let state = rest.next()?;
        if state == "Z" {
            return None;
        }
        let ppid = rest.next()?.parse().ok()?;
        let pgid = rest.next()?.parse().ok()?;
        let exe = fs::read_link(format!("/proc/{pid}/exe")).ok();
        let uid = fs::read_to_string(format!("/proc/{pid}/status"))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("Uid:"))
                    .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
            });
        Some(Proc {
            pid,
            ppid,
            pgid,
            comm,
            exe,
            uid,
        })
    }

    fn carries(&self, marker: &str) -> bool {
        let Ok(environ) = fs::read(format!("/proc/{}/environ", self.pid)) else {
            return false;
        };
        let wanted = format!("{MARKER}={marker}");
        environ.split(|b| *b == 0).any(|v| v == wanted.as_bytes())
    }

    /// The process is a gate (not yet, or never, replaced by the command).
    fn is_gate(&self) -> bool {
        self.comm == "gate"
            || self
                .exe
                .as_deref()
                .and_then(Path::file_name)
                .is_some_and(|name| name == "gate")
    }
}

/// Processes, one a line, for failure messages.
pub fn list(procs: &[Proc]) -> String {
    if procs.is_empty() {
        return "none".to_owned();
    }
    procs.iter().map(|p| format!("\n    {p}")).collect()
}

/// Every live process.
fn processes() -> Vec<Proc> {
    fs::read_dir("/proc")
        .expect("these tests need /proc")
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .filter_map(Proc::read)
        .collect()
}

/// The marker value of a gate started by [`gate_for`].
fn marker_of(pid: u32) -> Option<String> {
    let environ = fs::read(format!("/proc/{pid}/environ")).ok()?;
    let prefix = format!("{MARKER}=");
    environ.split(|b| *b == 0).find_map(|v| {
        let v = std::str::from_utf8(v).ok()?;
        v.strip_prefix(&prefix).map(str::to_owned)
    })
}

/// The processes of the run whose command is `command` that are gate itself, not the
/// command: what gate left beside the command (the exec check's supervisor). A process
/// belongs to the run when it carries the run's marker or sits in the command's process
/// group (the test made it a group of its own).
pub fn helpers(command: u32) -> Vec<Proc> {
    let marker = marker_of(command).unwrap_or_else(|| {
        panic!("the command {command} carries no {MARKER}: is it still running?")
    });
    helpers_marked(&marker, Some(command))
}

fn helpers_marked(marker: &str, command: Option<u32>) -> Vec<Proc> {
    processes()
        .into_iter()
        .filter(|p| Some(p.pid) != command && p.is_gate())
        .filter(|p| p.carries(marker) || command.is_some_and(|c| p.pgid == c))
        .collect()
}

/// Wait (within the deadline) until the run of `command` has a helper, and return them.
pub fn wait_for_helpers(command: u32) -> Vec<Proc> {
    let end = Instant::now() + DEADLINE;
    loop {
        let found = helpers(command);
        if !found.is_empty() || Instant::now() >= end {
            return found;
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// Wait (within the deadline) until none of `marker`'s helpers is left.
pub fn wait_until_no_helper(marker: &str) -> Vec<Proc> {
    let end = Instant::now() + DEADLINE;
    loop {
        let left = helpers_marked(marker, None);
        if left.is_empty() || Instant::now() >= end {
            return left;
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// The marker of a running command, to look for its helpers after it ends.
pub fn marker_of_command(command: u32) -> String {
    marker_of(command).unwrap_or_else(|| panic!("the command {command} carries no {MARKER}"))
}

/// Every process of the run, for failure messages.
pub fn describe_run(command: u32) -> String {
    let marker = marker_of(command).unwrap_or_default();
    processes()
        .into_iter()
        .filter(|p| p.pid == command || p.pgid == command || p.carries(&marker))
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join("\n    ")
}

/// Kill `proc` and wait (within the deadline) until it is gone or a zombie.
pub fn kill_and_wait(proc: &Proc) {
    let pid = nix::unistd::Pid::from_raw(i32::try_from(proc.pid).unwrap());
    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
    let end = Instant::now() + DEADLINE;
    while Proc::read(proc.pid).is_some() {
        assert!(Instant::now() < end, "{proc} is still alive after SIGKILL");
        thread::sleep(Duration::from_millis(5));
    }
}
