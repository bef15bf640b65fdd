//! Whether the controlling terminal is a person's: the checks a requester makes before it
//! prompts there, so that gate never asks on a terminal an agent controls.
//!
//! Agents that give their commands a terminal make it themselves: node-pty (Gemini CLI,
//! Qwen Code), portable-pty (Codex) and pexpect (Aider) open a pseudo-terminal, start the
//! shell (gate, as `$SHELL` or a shim) in a new session with it as the controlling
//! terminal, and hand what it prints to the model, which writes its input. An agent that
//! runs on the person's terminal (Claude Code's start-up call) starts the shell as a child
//! in its own process group. A person's interactive shell does neither: it starts each
//! command as a job — a process group of its own, made the terminal's foreground — in the
//! session the shell leads, on a terminal whose other end a terminal server holds (a
//! terminal emulator, tmux, sshd), which has no controlling terminal itself.
//!
//! So the terminal is asked only when all of these hold ([`judge`]):
//! 1. gate's process group is the terminal's foreground group, and gate leads it: an
//!    interactive shell started gate as a job;
//! 2. gate does not lead the terminal's session: nobody made the terminal for gate;
//! 3. gate does not run with no_new_privs (every command gate runs does: a process that
//!    descends from one is the model's);
//! 4. for a pseudo-terminal, every process that holds its other end (found in /proc: a
//!    descriptor of `/dev/ptmx` whose `tty-index` is this terminal's number) has no
//!    controlling terminal of its own, and none runs with no_new_privs. A program with a
//!    terminal of its own that holds the other end relays it, as an agent on the person's
//!    terminal that made one for its commands does. Processes gate may not look into
//!    (another user's) are passed over. A virtual console or a serial line has no other
//!    end to hold.
//!
//! The facts are gathered only when gate is about to ask ([`open`]), so that a command
//! that needs no approver pays nothing for them. The judgement is a pure function of
//! them, tested with tables.

#![forbid(unsafe_code)]

use std::fmt;
use std::fs;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::Path;

use nix::unistd::{getpgrp, getpid, tcgetpgrp};

use super::tty::Tty;

/// Open the controlling terminal for a prompt, if it is a person's: Err(why not), in words
/// a refusal can carry.
pub fn open() -> Result<Tty, String> {
    let tty = Tty::open()?;
    let process = Process::of(tty.as_fd())?;
    // The holders of a pseudo-terminal are read from /proc only when the process itself
    // passes: a refusal never waits for them.
    let holders = match process.device {
        Device::Pts(index) if judge_process(&process).is_ok() => holders_of(index)?,
        _ => Vec::new(),
    };
    judge(&process, &holders).map_err(|d| d.to_string())?;
    Ok(tty)
}

// ---------------------------------------------------------------------------------------
// The facts.

/// What the controlling terminal is, from its device number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Device {
    /// A Unix 98 pseudo-terminal, `/dev/pts/N`.
    Pts(u32),
    /// A BSD pseudo-terminal (`/dev/ttyp*`): its other end cannot be traced.
    BsdPty,
    /// A terminal with no other end a process holds: a virtual console, a serial line.
    Line,
}

impl Device {
    /// The device of a controlling terminal from `tty_nr` in /proc/PID/stat (0: none).
    pub fn of_tty_nr(tty_nr: u64) -> Option<Device> {
        if tty_nr == 0 {
            return None;
        }
        let major = (tty_nr >> 8) & 0xfff;
        let minor = (tty_nr & 0xff) | ((tty_nr >> 12) & 0xfff00);
        Some(match major {
            // UNIX98_PTY_SLAVE_MAJOR and the majors after it: index = major offset
            // × 2^20 + minor, as the kernel numbers them.
            136..=143 => Device::Pts((((major - 136) << 20) | minor) as u32),
            2 | 3 => Device::BsdPty,
            _ => Device::Line,
        })
    }
}

/// gate's own place on its terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Process {
    pub pid: i32,
    pub pgrp: i32,
    /// The terminal's foreground process group.
    pub foreground: i32,
    /// The terminal's session (its leader's pid).
    pub session: i32,
    pub no_new_privs: bool,
    pub device: Device,
}

/// A process that holds the other end of the terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub pid: u32,
    /// Its name (`comm`), as the kernel has it.
    pub name: String,
    /// Whether it has a controlling terminal of its own.
    pub has_terminal: bool,
    pub no_new_privs: bool,
}

impl Process {
    fn of(tty: BorrowedFd<'_>) -> Result<Process, String> {
        let foreground = tcgetpgrp(tty)
            .map_err(|e| format!("cannot read the terminal's foreground process group: {e}"))?;
        let session = nix::sys::termios::tcgetsid(tty)
            .map_err(|e| format!("cannot read the terminal's session: {e}"))?;
        let stat = read_proc(Path::new("/proc/self/stat"))?;
        let status = read_proc(Path::new("/proc/self/status"))?;
        let device = parse_stat(&stat)
            .and_then(|s| Device::of_tty_nr(s.tty_nr))
            .ok_or("/proc/self/stat names no controlling terminal")?;
        let no_new_privs =
            parse_no_new_privs(&status).ok_or("/proc/self/status has no NoNewPrivs line")?;
        Ok(Process {
            pid: getpid().as_raw(),
            pgrp: getpgrp().as_raw(),
            foreground: foreground.as_raw(),
            session: session.as_raw(),
            no_new_privs,
            device,
        })
    }
}

fn read_proc(path: &Path) -> Result<String, String> {
    fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// The processes that hold the other end of `/dev/pts/INDEX`, among those gate may look
/// into.
fn holders_of(index: u32) -> Result<Vec<Holder>, String> {
    let me = std::process::id();
    let proc = fs::read_dir("/proc").map_err(|e| {
        format!("cannot tell who holds the terminal's other end: cannot list /proc: {e}")
    })?;
    let mut holders = Vec::new();
    for entry in proc.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me || !holds(pid, index) {
            continue;
        }
        // Gone since: it no longer holds anything.
        let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Ok(status) = fs::read_to_string(format!("/proc/{pid}/status")) else {
            continue;
        };
        let (Some(stat), Some(no_new_privs)) = (parse_stat(&stat), parse_no_new_privs(&status))
        else {
            return Err(format!(
                "cannot tell who holds the terminal's other end: /proc/{pid} cannot be read"
            ));
        };
        holders.push(Holder {
            pid,
            name: stat.name,
            has_terminal: stat.tty_nr != 0,
            no_new_privs,
        });
    }
    Ok(holders)
}

/// Whether process `pid` has a descriptor of the pseudo-terminal master numbered `index`.
/// A process gate may not look into does not count.
fn holds(pid: u32, index: u32) -> bool {
    let Ok(fds) = fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten().any(|fd| {
        let is_master = fs::read_link(fd.path())
            .is_ok_and(|target| target.file_name().is_some_and(|name| name == "ptmx"));
        is_master
            && fs::read_to_string(format!(
                "/proc/{pid}/fdinfo/{}",
                fd.file_name().to_string_lossy()
            ))
            .is_ok_and(|info| parse_tty_index(&info) == Some(index))
    })
}

/// The fields of /proc/PID/stat gate uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    pub name: String,
    pub tty_nr: u64,
}

/// Parse /proc/PID/stat: `pid (comm) state ppid pgrp session tty_nr …`. The name may hold
/// spaces and parentheses, so the fields are counted after its last `)`.
pub fn parse_stat(text: &str) -> Option<Stat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let name = text.get(open + 1..close)?.to_owned();
    let tty_nr: i64 = text
        .get(close + 1..)?
        .split_whitespace()
        .nth(4)?
        .parse()
        .ok()?;
    Some(Stat {
        name,
        // A negative number is not a terminal gate knows; all bits count.
        tty_nr: tty_nr as u64,
    })
}

/// `NoNewPrivs:` from /proc/PID/status.
pub fn parse_no_new_privs(text: &str) -> Option<bool> {
    let value = text
        .lines()
        .find_map(|line| line.strip_prefix("NoNewPrivs:"))?;
    match value.trim() {
        "0" => Some(false),
        "1" => Some(true),
        _ => None,
    }
}

/// `tty-index:` from /proc/PID/fdinfo/FD of a pseudo-terminal master.
pub fn parse_tty_index(text: &str) -> Option<u32> {
    text.lines()
        .find_map(|line| line.strip_prefix("tty-index:"))?
        .trim()
        .parse()
        .ok()
}

// ---------------------------------------------------------------------------------------
// The judgement.

/// Why the terminal is not a person's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Distrust {
    /// Not in the foreground: a background job.
    Background,
    /// In the foreground group, which gate does not lead: started by a program that shares
    /// the terminal, not as a job of an interactive shell.
    NotAJob,
    /// gate leads the terminal's session: the terminal was made for it.
    SessionLeader,
    /// gate runs with no_new_privs: a command gate ran started it.
    NoNewPrivs,
    /// A BSD pseudo-terminal.
    BsdPty,
    /// A holder of the other end has a controlling terminal of its own.
    Relayed(Holder),
    /// A holder of the other end runs with no_new_privs.
    HeldByACommand(Holder),
}

impl fmt::Display for Distrust {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let holder = |h: &Holder| {
            format!(
                "the terminal's other end is held by process {} ({})",
                h.pid,
                crate::explain::display(&h.name)
            )
        };
        match self {
            Distrust::Background => f.write_str(
                "gate is not in the terminal's foreground process group (a background job \
                 cannot prompt)",
            ),
            Distrust::NotAJob => f.write_str(
                "gate does not lead the terminal's foreground process group, so no \
                 interactive shell started it as a job: the program that started gate (an \
                 agent, a script, a pipeline) shares this terminal",
            ),
            Distrust::SessionLeader => f.write_str(
                "gate leads the terminal's session, so the program that started gate made \
                 this terminal for it, as an agent does for the commands it runs",
            ),
            Distrust::NoNewPrivs => f.write_str(
                "gate runs with no_new_privs, so it was started by a command gate ran, whose \
                 terminal is not a person's",
            ),
            Distrust::BsdPty => f.write_str(
                "the terminal is a BSD pseudo-terminal, whose other end gate cannot trace",
            ),
            Distrust::Relayed(h) => write!(
                f,
                "{}, which runs on a terminal of its own: a program relays this terminal, as \
                 an agent does that runs commands on a terminal it made",
                holder(h)
            ),
            Distrust::HeldByACommand(h) => write!(
                f,
                "{}, which runs with no_new_privs: a command gate ran made this terminal",
                holder(h)
            ),
        }
    }
}

/// Judge gate's own place on the terminal (checks 1–3, and the kind of terminal).
pub fn judge_process(p: &Process) -> Result<(), Distrust> {
    if p.foreground != p.pgrp {
        return Err(Distrust::Background);
    }
    if p.pgrp != p.pid {
        return Err(Distrust::NotAJob);
    }
    if p.session == p.pid {
        return Err(Distrust::SessionLeader);
    }
    if p.no_new_privs {
        return Err(Distrust::NoNewPrivs);
    }
    if p.device == Device::BsdPty {
        return Err(Distrust::BsdPty);
    }
    Ok(())
}

/// Judge the holders of a pseudo-terminal's other end (check 4).
pub fn judge_holders(holders: &[Holder]) -> Result<(), Distrust> {
    for h in holders {
        if h.no_new_privs {
            return Err(Distrust::HeldByACommand(h.clone()));
        }
        if h.has_terminal {
            return Err(Distrust::Relayed(h.clone()));
        }
    }
    Ok(())
}

/// The whole judgement over gathered facts: `holders` are those of the pseudo-terminal
/// (empty for another kind of terminal).
pub fn judge(p: &Process, holders: &[Holder]) -> Result<(), Distrust> {
    judge_process(p)?;
    if matches!(p.device, Device::Pts(_)) {
        judge_holders(holders)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
