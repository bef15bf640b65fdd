//! The terminal prompt: asking the person at `/dev/tty` whether a command may run, or
//! what the answer to an agent's question is. Used by the requester when no socket
//! answers, and by `gate watch`, the interactive approver.
//!
//! Everything goes to and comes from `/dev/tty`, never stdin or stdout (they belong to
//! the agent and are often pipes). While a prompt waits, the terminal is in
//! non-canonical mode without echo and without signal keys, so that Ctrl-C arrives as a
//! byte (it means "interrupted"), Ctrl-Z cannot stop gate with the terminal left raw,
//! and nothing the person types is echoed except the reason or answer being typed. The
//! original settings are restored on every path, panics included (the [`Tty`] puts them
//! back when dropped).
//!
//! Type-ahead never answers: pending input is discarded when a prompt starts. Escape
//! sequences (arrow keys, function keys, Alt+key) are dropped whole, so that the last
//! byte of an arrow key is never read as a key.
//!
//! The screen is drawn for a terminal at least 80 columns wide, with plain text and
//! carriage returns only (no cursor addressing): the line being edited is redrawn in
//! place and never longer than 79 columns, so it cannot wrap.

#![forbid(unsafe_code)]

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::termios::{
    FlushArg, InputFlags, LocalFlags, SetArg, SpecialCharacterIndices, Termios, tcflush, tcgetattr,
    tcsetattr,
};
use nix::unistd::{getpgrp, tcgetpgrp};

use super::protocol::{ApprovalRequest, QuestionRequest};

/// The widest line gate writes, in columns: one less than the narrowest usual terminal,
/// so that nothing wraps and a carriage return always reaches the start of the line.
const WIDTH: usize = 79;

/// The longest deny reason a person can type, in characters.
pub const MAX_REASON: usize = 300;

/// The longest answer to a question a person can type, in characters.
pub const MAX_ANSWER: usize = 2000;

/// How many rows a command or a question may take on the screen before its middle is
/// left out (with a note saying so).
const MAX_ROWS: usize = 20;

/// Bytes of an escape sequence that arrive this long after its start are not part of
/// it: a lone Esc key press followed later by a key is that key.
const ESC_TIMEOUT: Duration = Duration::from_millis(100);

// ---------------------------------------------------------------------------------------
// The public face the requester uses.

/// What the person decided about a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TtyVerdict {
    /// `y`: run it this once. (Nothing more: gate keeps no remembered approvals, so the
    /// terminal prompt never offers `a`.)
    Once,
    /// `n` (with the reason typed after it, if any), or Enter alone.
    Deny { reason: Option<String> },
    /// The deadline passed before a key was pressed.
    Timeout,
    /// The interrupt descriptor became readable, or the person pressed Ctrl-C.
    Interrupted,
    /// The terminal failed (closed, hung up, no longer ours); the cause.
    Failed(String),
}

/// What the person answered to a question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TtyAnswer {
    /// The chosen option(s), joined with ", ", or the text typed. Never blank.
    Text(String),
    /// Enter on an empty line.
    Declined,
    Timeout,
    /// The interrupt descriptor became readable, or the person pressed Ctrl-C.
    Interrupted,
    Failed(String),
}

/// The controlling terminal, open for prompting.
pub struct Tty {
    file: File,
    /// The settings found when raw mode was entered; put back by [`Tty::leave_raw`] and
    /// when the `Tty` is dropped.
    saved: Option<Termios>,
    /// The line being edited as it is on the screen now (`None`: the cursor is at the
    /// start of an empty line).
    shown: Option<String>,
}

impl Tty {
    /// Open /dev/tty (O_RDWR|O_NOCTTY|O_CLOEXEC) for prompting. Err(reason) when there is
    /// no controlling terminal, or this process is not in the terminal's foreground
    /// process group (a background job must not prompt).
    pub fn open() -> Result<Tty, String> {
        // std opens with O_CLOEXEC already.
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOCTTY)
            .open("/dev/tty")
            .map_err(|e| match e.raw_os_error() {
                Some(libc::ENXIO) | Some(libc::ENODEV) => {
                    "there is no controlling terminal".to_owned()
                }
                _ => format!("cannot open /dev/tty: {e}"),
            })?;
        let tty = Tty {
            file,
            saved: None,
            shown: None,
        };
        tty.check_foreground()?;
        Ok(tty)
    }

    /// Ask whether `request` may run: one key, `y` / `n` (then an optional reason) /
    /// Enter, until `deadline`, or until `interrupt` becomes readable. Remembering is
    /// never offered here, whatever the request says: only the broker remembers, and
    /// an answer on the terminal does not reach it.
    pub fn approve(
        &mut self,
        request: &ApprovalRequest,
        deadline: Instant,
        interrupt: Option<BorrowedFd<'_>>,
    ) -> TtyVerdict {
        let entered = match self.begin() {
            Ok(entered) => entered,
            Err(e) => return TtyVerdict::Failed(e),
        };
        let verdict = self.approve_in_raw(request, deadline, interrupt);
        self.end(entered);
        verdict
    }

    fn approve_in_raw(
        &mut self,
        request: &ApprovalRequest,
        deadline: Instant,
        interrupt: Option<BorrowedFd<'_>>,
    ) -> TtyVerdict {
        let title = "gate: may this command run?";
        let request = &ApprovalRequest {
            remember_supported: false,
            ..request.clone()
        };
        if let Err(e) = self.show_approval(title, request, "interrupt (deny)") {
            return TtyVerdict::Failed(e);
        }
        if let Err(e) = self.flush_input() {
            return TtyVerdict::Failed(e);
        }
        let mut prompt = ApprovalPrompt::new(false);
        let wake: Vec<BorrowedFd<'_>> = interrupt.into_iter().collect();
        let verdict = match self.drive(&mut prompt, Some(deadline), &wake) {
            Step::Done(Choice::Once) => TtyVerdict::Once,
            // Not offered, so never chosen; should it happen, nothing runs.
            Step::Done(Choice::Session | Choice::Always) => {
                TtyVerdict::Failed("the prompt took an answer it did not offer".into())
            }
            Step::Done(Choice::Deny(reason)) => TtyVerdict::Deny { reason },
            Step::Done(Choice::Cancelled) | Step::Woken(_) => TtyVerdict::Interrupted,
            // The person said no and was typing why: still no, without the reason.
            Step::Timeout if prompt.denying() => TtyVerdict::Deny { reason: None },
            Step::Timeout => TtyVerdict::Timeout,
            Step::Failed(e) => TtyVerdict::Failed(e),
        };
        let said = match &verdict {
            TtyVerdict::Once => "gate: approved once",
            TtyVerdict::Deny { reason: Some(_) } => "gate: denied, with the reason given",
            TtyVerdict::Deny { reason: None } => "gate: denied",
            TtyVerdict::Timeout => "gate: no answer in time: denied",
            TtyVerdict::Interrupted => "gate: interrupted: denied",
            TtyVerdict::Failed(_) => "gate: the terminal failed: denied",
        };
        let _ = self.say(said);
        verdict
    }

    /// Ask the agent's question: a line, which picks numbered options or is the answer
    /// itself; an empty line declines.
    pub fn question(
        &mut self,
        question: &QuestionRequest,
        deadline: Instant,
        interrupt: Option<BorrowedFd<'_>>,
    ) -> TtyAnswer {
        let entered = match self.begin() {
            Ok(entered) => entered,
            Err(e) => return TtyAnswer::Failed(e),
        };
        let answer = self.question_in_raw(question, deadline, interrupt);
        self.end(entered);
        answer
    }

    fn question_in_raw(
        &mut self,
        question: &QuestionRequest,
        deadline: Instant,
        interrupt: Option<BorrowedFd<'_>>,
    ) -> TtyAnswer {
        let title = "gate: the agent asks";
        if let Err(e) = self.show_question(title, question, "interrupt (decline)") {
            return TtyAnswer::Failed(e);
        }
        if let Err(e) = self.flush_input() {
            return TtyAnswer::Failed(e);
        }
        let mut prompt = QuestionPrompt::new(question);
        let wake: Vec<BorrowedFd<'_>> = interrupt.into_iter().collect();
        let answer = match self.drive(&mut prompt, Some(deadline), &wake) {
            Step::Done(Reply::Text(text)) => TtyAnswer::Text(text),
            Step::Done(Reply::Declined) => TtyAnswer::Declined,
            Step::Done(Reply::Cancelled) | Step::Woken(_) => TtyAnswer::Interrupted,
            Step::Timeout => TtyAnswer::Timeout,
            Step::Failed(e) => TtyAnswer::Failed(e),
        };
        let said = match &answer {
            TtyAnswer::Text(_) => "gate: answered",
            TtyAnswer::Declined => "gate: declined",
            TtyAnswer::Timeout => "gate: no answer in time: declined",
            TtyAnswer::Interrupted => "gate: interrupted: declined",
            TtyAnswer::Failed(_) => "gate: the terminal failed: declined",
        };
        let _ = self.say(said);
        answer
    }
}

// ---------------------------------------------------------------------------------------
// The pieces `gate watch` puts together itself.

/// How a [`Tty::drive`] ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step<T> {
    /// The prompt got its answer.
    Done(T),
    /// The deadline passed; the prompt's state is kept.
    Timeout,
    /// `wake[i]` became readable; the prompt's state is kept, so driving it again
    /// resumes where the person was (a half-typed reason is not lost).
    Woken(usize),
    /// The terminal failed.
    Failed(String),
}

/// A prompt that reads keys: the approval prompt, the question prompt, the idle line of
/// `gate watch`.
pub trait Prompt {
    type Out;
    /// Take the bytes the person typed (escape sequences already in progress expire
    /// after a pause, judged by `now`). `Some` ends the prompt; bytes after the one that
    /// ended it are dropped.
    fn feed(&mut self, bytes: &[u8], now: Instant) -> Option<Self::Out>;
    /// The line being edited, with the seconds left if there is a deadline. At most
    /// [`WIDTH`] columns.
    fn line(&self, seconds_left: Option<u64>) -> String;
    /// The line to leave on the screen when the prompt ends (`None`: erase it).
    fn last_line(&self) -> Option<String>;
    /// What to show besides the line, since the last call.
    fn take_effects(&mut self) -> Effects;
}

/// What a prompt asks of the screen besides redrawing its line.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Effects {
    /// Leave the line being edited on the screen as this text and start a new one.
    pub commit: Option<String>,
    /// Lines to print above the line being edited.
    pub notes: Vec<String>,
    /// Ring the bell: a key that means nothing here.
    pub bell: bool,
}

impl Tty {
    /// Check that this process is in the terminal's foreground process group.
    pub fn check_foreground(&self) -> Result<(), String> {
        let fg = tcgetpgrp(self.file.as_fd()).map_err(|e| match e {
            Errno::ENOTTY | Errno::ENXIO => "there is no controlling terminal".to_owned(),
            e => format!("cannot read the terminal's foreground process group: {e}"),
        })?;
        if fg != getpgrp() {
            return Err("gate is not in the terminal's foreground process group \
                 (a background job cannot prompt)"
                .to_owned());
        }
        Ok(())
    }

    /// Put the terminal in the prompt's mode: no canonical line editing, no echo, no
    /// signal keys, no flow control, reads that never block. The original settings are
    /// kept for [`Tty::leave_raw`] and the drop. Nothing happens when already raw.
    pub fn enter_raw(&mut self) -> Result<(), String> {
        if self.saved.is_some() {
            return Ok(());
        }
        self.check_foreground()?;
        self.set_raw()
    }

    fn set_raw(&mut self) -> Result<(), String> {
        let saved = tcgetattr(self.file.as_fd())
            .map_err(|e| format!("cannot read the terminal's settings: {e}"))?;
        let mut raw = saved.clone();
        raw.local_flags.remove(
            LocalFlags::ICANON
                | LocalFlags::ECHO
                | LocalFlags::ECHONL
                | LocalFlags::ISIG
                | LocalFlags::IEXTEN,
        );
        // Ctrl-S must not freeze the screen under a countdown; Enter must arrive.
        raw.input_flags
            .remove(InputFlags::IXON | InputFlags::IGNCR | InputFlags::INLCR);
        raw.control_chars[SpecialCharacterIndices::VMIN as usize] = 0;
        raw.control_chars[SpecialCharacterIndices::VTIME as usize] = 0;
        // Saved before the change, so that a half-applied change is still undone.
        self.saved = Some(saved);
        tcsetattr(self.file.as_fd(), SetArg::TCSANOW, &raw)
            .map_err(|e| format!("cannot set the terminal's mode: {e}"))?;
        Ok(())
    }

    /// End the line being edited and put back the settings [`Tty::enter_raw`] found.
    pub fn leave_raw(&mut self) {
        let _ = self.end_line();
        if let Some(saved) = self.saved.take() {
            let _ = tcsetattr(self.file.as_fd(), SetArg::TCSANOW, &saved);
        }
    }

    /// Discard whatever was typed and not read yet: type-ahead never answers a prompt.
    pub fn flush_input(&mut self) -> Result<(), String> {
        tcflush(self.file.as_fd(), FlushArg::TCIFLUSH)
            .map_err(|e| format!("cannot discard the terminal's pending input: {e}"))
    }

    /// Raw mode for one prompt: whether this call entered it (and the end leaves it).
    fn begin(&mut self) -> Result<bool, String> {
        if self.saved.is_some() {
            return Ok(false);
        }
        if let Err(e) = self.enter_raw() {
            self.leave_raw();
            return Err(e);
        }
        Ok(true)
    }

    fn end(&mut self, entered: bool) {
        let _ = self.end_line();
        if entered {
            self.leave_raw();
        }
    }

    /// Show an approval request: what, where, which session, and the keys. `title` is
    /// the first line; `ctrl_c` says what Ctrl-C does.
    pub fn show_approval(
        &mut self,
        title: &str,
        request: &ApprovalRequest,
        ctrl_c: &str,
    ) -> Result<(), String> {
        self.show_approval_offering(title, request, ctrl_c, None)
    }

    /// [`Tty::show_approval`], offering `l` (always allow: a lasting exact rule in the
    /// file `always`) when it is given.
    pub fn show_approval_offering(
        &mut self,
        title: &str,
        request: &ApprovalRequest,
        ctrl_c: &str,
        always: Option<&std::path::Path>,
    ) -> Result<(), String> {
        let mut text = vec![String::new(), one_row(title, WIDTH)];
        // A label column of 11, then the value, wrapped.
        let field = |text: &mut Vec<String>, label: &str, rows: &[String]| {
            for (i, row) in rows.iter().enumerate() {
                let label = if i == 0 { label } else { "" };
                text.push(format!("  {label:<11}{row}"));
            }
        };
        let room = WIDTH - 13;
        let (command, mut escaped) = block(&request.command, room);
        if request.kind == "session" && request.command.trim().is_empty() {
            field(
                &mut text,
                "command:",
                &["(an interactive shell)".to_owned()],
            );
        } else {
            field(&mut text, "command:", &command);
        }
        if request.kind != "command" && !request.kind.is_empty() {
            field(&mut text, "kind:", &[one_row(&request.kind, room)]);
        }
        let (mut directory, e) = block(&request.work_dir, room);
        escaped |= e;
        if directory.len() > 4 {
            directory.truncate(4);
            directory[3] = cut(&format!("{}…", directory[3]), room);
        }
        field(&mut text, "directory:", &directory);
        field(&mut text, "session:", &[one_row(&request.session_id, room)]);
        if request.leaves_sandbox {
            field(
                &mut text,
                "sandbox:",
                &[one_row(
                    "a yes runs it OUTSIDE the sandbox (level safe, an unsandboxed rule)",
                    room,
                )],
            );
        }
        if escaped {
            text.push("  (control characters are shown as \\xNN or \\u{NNNN})".into());
        }
        text.push(if request.remember_supported {
            "  y: run it once   a: allow it for this session   n: deny, with a reason".into()
        } else {
            "  y: run it once   n: deny, with a reason".into()
        });
        if let Some(file) = always {
            text.push(one_row(
                &format!(
                    "  l: always allow this exact command (a lasting rule in {})",
                    file.display()
                ),
                WIDTH,
            ));
        }
        text.push(one_row(&format!("  Enter: deny   Ctrl-C: {ctrl_c}"), WIDTH));
        self.print_lines(&text)
    }

    /// Show a question, its numbered options and how to answer; `ctrl_c` says what
    /// Ctrl-C does.
    pub fn show_question(
        &mut self,
        title: &str,
        question: &QuestionRequest,
        ctrl_c: &str,
    ) -> Result<(), String> {
        let mut text = Vec::new();
        text.push(String::new());
        text.push(one_row(title, WIDTH));
        let rows = prose(&question.question, WIDTH - 2);
        for row in rows {
            text.push(format!("  {row}"));
        }
        let digits = question.options.len().to_string().len();
        for (i, option) in question.options.iter().enumerate() {
            let number = format!("{:>digits$})", i + 1);
            let rows = prose(option, WIDTH - 5 - digits);
            for (j, row) in rows.iter().take(3).enumerate() {
                let lead = if j == 0 { number.as_str() } else { "" };
                text.push(format!("  {lead:<w$} {row}", w = digits + 1));
            }
            if rows.len() > 3 {
                text.push(format!("  {:<w$} …", "", w = digits + 1));
            }
        }
        text.push(
            match (question.options.is_empty(), question.allow_multiple) {
                (true, _) => "  Type your answer. Enter alone declines.".into(),
                (false, false) => {
                    "  Type a number to choose, or your own answer. Enter alone declines.".into()
                }
                (false, true) => {
                    "  Type numbers (1,3) to choose, or your own answer. Enter alone declines."
                        .into()
                }
            },
        );
        text.push(one_row(&format!("  Ctrl-C: {ctrl_c}"), WIDTH));
        self.print_lines(&text)
    }

    /// Print a line above the line being edited (which is redrawn by the next drive).
    pub fn note(&mut self, text: &str) -> Result<(), String> {
        self.print_lines(&[one_row(text, WIDTH)])
    }

    /// Print a line saying how something ended, on a fresh line.
    pub fn say(&mut self, text: &str) -> Result<(), String> {
        self.end_line()?;
        self.print_lines(&[one_row(text, WIDTH)])
    }

    /// [`Tty::say`] for a longer text: wrapped, the rows after the first indented.
    pub fn say_wrapped(&mut self, text: &str) -> Result<(), String> {
        self.end_line()?;
        let rows: Vec<String> = prose(text, WIDTH - 2)
            .into_iter()
            .enumerate()
            .map(|(i, row)| if i == 0 { row } else { format!("  {row}") })
            .collect();
        self.print_lines(&rows)
    }

    fn print_lines(&mut self, lines: &[String]) -> Result<(), String> {
        self.clear_line()?;
        let mut out = String::new();
        for line in lines {
            out.push_str(line);
            out.push_str("\r\n");
        }
        self.write(out.as_bytes())
    }

    /// Run `prompt` until it ends, the deadline passes, or one of `wake` becomes
    /// readable (the lowest index wins; any of them wins over the terminal). The line
    /// is redrawn with a countdown about once a second.
    pub fn drive<P: Prompt>(
        &mut self,
        prompt: &mut P,
        deadline: Option<Instant>,
        wake: &[BorrowedFd<'_>],
    ) -> Step<P::Out> {
        let mut empty_reads = 0u32;
        loop {
            let now = Instant::now();
            let left = match deadline {
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(now);
                    if left.is_zero() {
                        return Step::Timeout;
                    }
                    Some(left)
                }
                None => None,
            };
            let seconds = left.map(ceil_seconds);
            let line = prompt.line(seconds);
            if self.shown.as_deref() != Some(line.as_str()) {
                if let Err(e) = self.draw(&line) {
                    return Step::Failed(e);
                }
            }
            // Wake up when the number of seconds shown changes.
            let tick = match (left, seconds) {
                (Some(left), Some(s)) => Some(now + (left - Duration::from_secs(s - 1))),
                _ => None,
            };
            match self.wait(tick, wake) {
                Err(e) => return Step::Failed(format!("cannot wait for the terminal: {e}")),
                Ok(Ready::Timer) => {}
                Ok(Ready::Wake(i)) => return Step::Woken(i),
                Ok(Ready::HungUp) => return Step::Failed("the terminal was closed".into()),
                Ok(Ready::Input) => {
                    let mut buf = [0u8; 512];
                    match (&self.file).read(&mut buf) {
                        Ok(0) => {
                            // Readable yet empty, again and again: not a terminal that
                            // works any more.
                            empty_reads += 1;
                            if empty_reads > 100 {
                                return Step::Failed("the terminal gives no input".into());
                            }
                        }
                        Ok(n) => {
                            empty_reads = 0;
                            let out = prompt.feed(&buf[..n], Instant::now());
                            if let Err(e) = self.apply(prompt.take_effects()) {
                                return Step::Failed(e);
                            }
                            if let Some(out) = out {
                                let ended = match prompt.last_line() {
                                    Some(last) => self.draw(&last).and_then(|()| self.end_line()),
                                    None => self.clear_line(),
                                };
                                if let Err(e) = ended {
                                    return Step::Failed(e);
                                }
                                return Step::Done(out);
                            }
                        }
                        Err(e)
                            if e.kind() == io::ErrorKind::Interrupted
                                || e.kind() == io::ErrorKind::WouldBlock => {}
                        Err(e) => {
                            return Step::Failed(format!("cannot read the terminal: {e}"));
                        }
                    }
                }
            }
        }
    }

    fn apply(&mut self, effects: Effects) -> Result<(), String> {
        if let Some(commit) = &effects.commit {
            self.draw(commit)?;
            self.end_line()?;
        }
        if !effects.notes.is_empty() {
            let notes: Vec<String> = effects.notes.iter().map(|n| one_row(n, WIDTH)).collect();
            self.print_lines(&notes)?;
        }
        if effects.bell {
            self.write(b"\x07")?;
        }
        Ok(())
    }

    /// Wait for input, a wake descriptor, or the tick.
    fn wait(&self, tick: Option<Instant>, wake: &[BorrowedFd<'_>]) -> io::Result<Ready> {
        let timeout = match tick {
            None => PollTimeout::NONE,
            Some(tick) => {
                let left = tick.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Ok(Ready::Timer);
                }
                // Rounded up, so that the wait never ends just before the tick.
                let ms = left.as_millis().saturating_add(1).min(i32::MAX as u128);
                PollTimeout::try_from(ms as u64).unwrap_or(PollTimeout::MAX)
            }
        };
        let mut fds = Vec::with_capacity(1 + wake.len());
        fds.push(PollFd::new(self.file.as_fd(), PollFlags::POLLIN));
        for fd in wake {
            fds.push(PollFd::new(*fd, PollFlags::POLLIN));
        }
        match poll(&mut fds, timeout) {
            Ok(0) | Err(Errno::EINTR) => Ok(Ready::Timer),
            Ok(_) => {
                for (i, fd) in fds[1..].iter().enumerate() {
                    if fd.revents().is_some_and(|r| !r.is_empty()) {
                        return Ok(Ready::Wake(i));
                    }
                }
                let revents = fds[0].revents().unwrap_or(PollFlags::empty());
                if revents.intersects(PollFlags::POLLHUP | PollFlags::POLLERR | PollFlags::POLLNVAL)
                {
                    Ok(Ready::HungUp)
                } else if revents.contains(PollFlags::POLLIN) {
                    Ok(Ready::Input)
                } else {
                    Ok(Ready::Timer)
                }
            }
            Err(e) => Err(io::Error::from(e)),
        }
    }

    /// Redraw the line being edited as `line`.
    fn draw(&mut self, line: &str) -> Result<(), String> {
        let mut out = String::new();
        let new = line.chars().count();
        match &self.shown {
            Some(old) => {
                let old = old.chars().count();
                out.push('\r');
                out.push_str(line);
                if old > new {
                    out.extend(std::iter::repeat_n(' ', old - new));
                    out.extend(std::iter::repeat_n('\x08', old - new));
                }
            }
            None => out.push_str(line),
        }
        self.shown = Some(line.to_owned());
        self.write(out.as_bytes())
    }

    /// Erase the line being edited (the cursor stays at its start): for a prompt that is
    /// abandoned.
    pub fn clear_line(&mut self) -> Result<(), String> {
        if let Some(old) = self.shown.take() {
            let mut out = String::from("\r");
            out.extend(std::iter::repeat_n(' ', old.chars().count()));
            out.push('\r');
            self.write(out.as_bytes())?;
        }
        Ok(())
    }

    /// Leave the line being edited on the screen and move to a fresh line.
    fn end_line(&mut self) -> Result<(), String> {
        if self.shown.take().is_some() {
            self.write(b"\r\n")?;
        }
        Ok(())
    }

    /// Call for attention: ring the bell and set the window title (OSC 0: the icon name
    /// and the window title) to `title`, escaped so that no text in it can end the
    /// sequence early.
    pub fn alert(&mut self, title: &str) -> Result<(), String> {
        self.write(format!("\x07\x1b]0;{}\x07", one_row(title, 80)).as_bytes())
    }

    /// Set the window title without the bell.
    pub fn set_title(&mut self, title: &str) -> Result<(), String> {
        self.write(format!("\x1b]0;{}\x07", one_row(title, 80)).as_bytes())
    }

    /// Save the window title on the terminal's title stack (`keep`), or put the saved
    /// one back (xterm's window operations 22 and 23; terminals without them ignore
    /// them).
    pub fn title_stack(&mut self, keep: bool) -> Result<(), String> {
        self.write(if keep { b"\x1b[22;0t" } else { b"\x1b[23;0t" })
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), String> {
        (&self.file)
            .write_all(bytes)
            .map_err(|e| format!("cannot write to the terminal: {e}"))
    }
}

impl AsFd for Tty {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.file.as_fd()
    }
}

impl Drop for Tty {
    /// Leave the cursor on a fresh line and the terminal as it was found, also when a
    /// panic unwinds.
    fn drop(&mut self) {
        self.leave_raw();
    }
}

enum Ready {
    Input,
    HungUp,
    Wake(usize),
    Timer,
}

/// Whole seconds left, rounded up (the countdown shows 1 until the very end).
fn ceil_seconds(left: Duration) -> u64 {
    left.as_secs() + u64::from(left.subsec_nanos() > 0)
}

/// The countdown as shown: `42s`, `99s`, `3m05s`, `2h05m`.
pub fn countdown(seconds: u64) -> String {
    if seconds < 100 {
        format!("{seconds}s")
    } else if seconds < 3600 {
        format!("{}m{:02}s", seconds / 60, seconds % 60)
    } else {
        format!("{}h{:02}m", seconds / 3600, seconds % 3600 / 60)
    }
}

// ---------------------------------------------------------------------------------------
// The approval prompt.

/// What one key means at the approval prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// `y`: approve once.
    Once,
    /// `a`: approve for the session.
    Session,
    /// `n`: deny, then read a reason.
    Deny,
    /// Enter: deny without a reason.
    DenyNow,
    /// Ctrl-C or Ctrl-\: interrupted.
    Cancel,
}

/// The meaning of `byte` at the approval prompt; `None`: ignored. `a` means something
/// only when the approval can be remembered.
pub fn key(byte: u8, remember_supported: bool) -> Option<Key> {
    match byte {
        b'y' | b'Y' => Some(Key::Once),
        b'a' | b'A' if remember_supported => Some(Key::Session),
        b'n' | b'N' => Some(Key::Deny),
        b'\r' | b'\n' => Some(Key::DenyNow),
        0x03 | 0x1c => Some(Key::Cancel),
        _ => None,
    }
}

/// The person's choice at the approval prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    Once,
    Session,
    /// `l`: always allow this exact command (only where offered).
    Always,
    Deny(Option<String>),
    /// Ctrl-C before a choice.
    Cancelled,
}

/// The approval prompt: one key, then for `n` a reason.
#[derive(Debug)]
pub struct ApprovalPrompt {
    remember: bool,
    /// `l` (always allow) is offered.
    always: bool,
    stage: Stage,
    filter: EscFilter,
    effects: Effects,
}

#[derive(Debug)]
enum Stage {
    Key,
    Reason(LineEditor),
    /// Ended; the line left on the screen.
    Ended(String),
}

impl ApprovalPrompt {
    pub fn new(remember_supported: bool) -> Self {
        ApprovalPrompt {
            remember: remember_supported,
            always: false,
            stage: Stage::Key,
            filter: EscFilter::default(),
            effects: Effects::default(),
        }
    }

    /// Offer `l` too: always allow the exact command (a lasting rule).
    pub fn offering_always(mut self, always: bool) -> Self {
        self.always = always;
        self
    }

    /// Whether the person pressed `n` and is typing a reason.
    pub fn denying(&self) -> bool {
        matches!(self.stage, Stage::Reason(_))
    }

    fn question(&self) -> &'static str {
        match (self.remember, self.always) {
            (true, true) => "run it? [y/a/l/n]",
            (true, false) => "run it? [y/a/n]",
            (false, true) => "run it? [y/l/n]",
            (false, false) => "run it? [y/n]",
        }
    }

    fn feed_byte(&mut self, byte: u8) -> Option<Choice> {
        match &mut self.stage {
            Stage::Key => {
                if self.always && matches!(byte, b'l' | b'L') {
                    let line = format!("{} l", self.question());
                    self.stage = Stage::Ended(line);
                    return Some(Choice::Always);
                }
                let Some(k) = key(byte, self.remember) else {
                    self.effects.bell = true;
                    return None;
                };
                let shown = |c: &str| format!("{} {c}", self.question());
                let (choice, line) = match k {
                    Key::Once => (Choice::Once, shown("y")),
                    Key::Session => (Choice::Session, shown("a")),
                    Key::DenyNow => (Choice::Deny(None), shown("n")),
                    Key::Cancel => (Choice::Cancelled, shown("^C")),
                    Key::Deny => {
                        self.effects.commit = Some(shown("n"));
                        self.effects.notes.push(
                            "  Why? The reason goes to the agent (Enter alone: none).".into(),
                        );
                        self.stage = Stage::Reason(LineEditor::new(MAX_REASON));
                        return None;
                    }
                };
                self.stage = Stage::Ended(line);
                Some(choice)
            }
            Stage::Reason(editor) => match editor.feed(byte) {
                Edit::Enter => {
                    let reason = editor.text().trim().to_owned();
                    let line = editor.render("reason: ", WIDTH);
                    self.stage = Stage::Ended(line);
                    Some(Choice::Deny((!reason.is_empty()).then_some(reason)))
                }
                Edit::Cancel => {
                    self.stage = Stage::Ended("reason: ^C (none)".into());
                    Some(Choice::Deny(None))
                }
                Edit::Bell => {
                    self.effects.bell = true;
                    None
                }
                Edit::Changed | Edit::Nothing => None,
            },
            Stage::Ended(_) => None,
        }
    }
}

impl Prompt for ApprovalPrompt {
    type Out = Choice;

    fn feed(&mut self, bytes: &[u8], now: Instant) -> Option<Choice> {
        self.filter.expire(now);
        for &b in bytes {
            if let Some(b) = self.filter.pass(b, now) {
                if let Some(choice) = self.feed_byte(b) {
                    return Some(choice);
                }
            }
        }
        None
    }

    fn line(&self, seconds_left: Option<u64>) -> String {
        let left = seconds_left
            .map(|s| format!("({}) ", countdown(s)))
            .unwrap_or_default();
        match &self.stage {
            Stage::Key => format!("{left}{} ", self.question()),
            Stage::Reason(editor) => editor.render(&format!("{left}reason: "), WIDTH),
            Stage::Ended(line) => line.clone(),
        }
    }

    fn last_line(&self) -> Option<String> {
        match &self.stage {
            Stage::Ended(line) => Some(line.clone()),
            _ => None,
        }
    }

    fn take_effects(&mut self) -> Effects {
        std::mem::take(&mut self.effects)
    }
}

// ---------------------------------------------------------------------------------------
// The question prompt.

/// The answer typed at the question prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    Text(String),
    Declined,
    /// Ctrl-C.
    Cancelled,
}

/// The question prompt: one line.
#[derive(Debug)]
pub struct QuestionPrompt {
    options: Vec<String>,
    multiple: bool,
    editor: LineEditor,
    filter: EscFilter,
    effects: Effects,
    ended: Option<String>,
}

impl QuestionPrompt {
    pub fn new(question: &QuestionRequest) -> Self {
        QuestionPrompt {
            options: question.options.clone(),
            multiple: question.allow_multiple,
            editor: LineEditor::new(MAX_ANSWER),
            filter: EscFilter::default(),
            effects: Effects::default(),
            ended: None,
        }
    }

    fn feed_byte(&mut self, byte: u8) -> Option<Reply> {
        match self.editor.feed(byte) {
            Edit::Enter => match select(self.editor.text(), &self.options, self.multiple) {
                Ok(Some(answer)) => {
                    self.ended = Some(self.editor.render("answer: ", WIDTH));
                    Some(Reply::Text(answer))
                }
                Ok(None) => {
                    self.ended = Some("answer: (none)".into());
                    Some(Reply::Declined)
                }
                Err(why) => {
                    self.effects.notes.push(format!("  {why}"));
                    self.effects.bell = true;
                    None
                }
            },
            Edit::Cancel => {
                self.ended = Some(self.editor.render("answer: ", WIDTH) + "^C");
                Some(Reply::Cancelled)
            }
            Edit::Bell => {
                self.effects.bell = true;
                None
            }
            Edit::Changed | Edit::Nothing => None,
        }
    }
}

impl Prompt for QuestionPrompt {
    type Out = Reply;

    fn feed(&mut self, bytes: &[u8], now: Instant) -> Option<Reply> {
        self.filter.expire(now);
        for &b in bytes {
            if let Some(b) = self.filter.pass(b, now) {
                if let Some(reply) = self.feed_byte(b) {
                    return Some(reply);
                }
            }
        }
        None
    }

    fn line(&self, seconds_left: Option<u64>) -> String {
        if let Some(ended) = &self.ended {
            return ended.clone();
        }
        let left = seconds_left
            .map(|s| format!("({}) ", countdown(s)))
            .unwrap_or_default();
        self.editor.render(&format!("{left}answer: "), WIDTH)
    }

    fn last_line(&self) -> Option<String> {
        self.ended.clone()
    }

    fn take_effects(&mut self) -> Effects {
        std::mem::take(&mut self.effects)
    }
}

/// The answer a line gives: options picked by number (several, comma-separated, when
/// `multiple`), joined with ", "; other text as typed (trimmed). `Ok(None)`: a blank
/// line, declined. `Err`: numbers that pick no option, or several for a single choice;
/// the person is told and types again.
pub fn select(text: &str, options: &[String], multiple: bool) -> Result<Option<String>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    if options.is_empty() {
        return Ok(Some(text.to_owned()));
    }
    let parts: Vec<&str> = text
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|p| !p.is_empty())
        .collect();
    let all_numbers =
        !parts.is_empty() && parts.iter().all(|p| p.bytes().all(|b| b.is_ascii_digit()));
    if !all_numbers {
        return Ok(Some(text.to_owned()));
    }
    let n = options.len();
    let mut picked: Vec<usize> = Vec::new();
    for part in &parts {
        match part.parse::<usize>() {
            Ok(i) if (1..=n).contains(&i) => {
                if !picked.contains(&i) {
                    picked.push(i);
                }
            }
            _ => {
                return Err(format!(
                    "there is no option {}: choose {}",
                    one_row(part, 20),
                    if n == 1 {
                        "1".to_owned()
                    } else {
                        format!("1 to {n}")
                    }
                ));
            }
        }
    }
    if picked.len() > 1 && !multiple {
        return Err("choose one option only".into());
    }
    let answer: Vec<&str> = picked.iter().map(|&i| options[i - 1].as_str()).collect();
    Ok(Some(answer.join(", ")))
}

// ---------------------------------------------------------------------------------------
// The idle line of `gate watch`.

/// A line that waits for nothing but Ctrl-C (and drops every other key): what `gate
/// watch` shows between requests.
#[derive(Debug)]
pub struct IdlePrompt {
    text: String,
    filter: EscFilter,
}

impl IdlePrompt {
    pub fn new(text: &str) -> Self {
        IdlePrompt {
            text: one_row(text, WIDTH),
            filter: EscFilter::default(),
        }
    }
}

impl Prompt for IdlePrompt {
    /// Ctrl-C (or Ctrl-\) was pressed.
    type Out = ();

    fn feed(&mut self, bytes: &[u8], now: Instant) -> Option<()> {
        self.filter.expire(now);
        for &b in bytes {
            if let Some(0x03 | 0x1c) = self.filter.pass(b, now) {
                return Some(());
            }
        }
        None
    }

    fn line(&self, _: Option<u64>) -> String {
        self.text.clone()
    }

    fn last_line(&self) -> Option<String> {
        None
    }

    fn take_effects(&mut self) -> Effects {
        Effects::default()
    }
}

// ---------------------------------------------------------------------------------------
// Input: escape sequences, the line editor.

/// Drops terminal escape sequences (CSI, SS3, OSC/DCS strings, Alt+key) from the input.
#[derive(Debug, Default)]
pub struct EscFilter {
    state: Esc,
    since: Option<Instant>,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Esc {
    #[default]
    Normal,
    /// After ESC.
    Start,
    /// After ESC [: parameters until a final byte.
    Csi,
    /// After ESC O: one more byte.
    Ss3,
    /// After ESC ] / P / _ / ^: a string until BEL or ESC \.
    Str,
    /// ESC inside a string.
    StrEscape,
}

impl EscFilter {
    /// Forget a sequence that started too long ago: what follows is typed, not sent.
    pub fn expire(&mut self, now: Instant) {
        if let Some(since) = self.since {
            if now.saturating_duration_since(since) >= ESC_TIMEOUT {
                self.state = Esc::Normal;
                self.since = None;
            }
        }
    }

    /// `Some(byte)` when `byte` is input, `None` when it belongs to an escape sequence.
    /// Ctrl-C always passes, ending any sequence.
    pub fn pass(&mut self, byte: u8, now: Instant) -> Option<u8> {
        if byte == 0x03 {
            self.state = Esc::Normal;
            self.since = None;
            return Some(byte);
        }
        let next = match (self.state, byte) {
            (Esc::Normal, 0x1b) => Esc::Start,
            (Esc::Normal, _) => return Some(byte),
            (Esc::Start, b'[') => Esc::Csi,
            (Esc::Start, b'O') => Esc::Ss3,
            (Esc::Start, b']' | b'P' | b'_' | b'^') => Esc::Str,
            (Esc::Start, 0x1b) => Esc::Start,
            // Alt+key, or ESC then a control key: dropped.
            (Esc::Start, _) => Esc::Normal,
            (Esc::Csi, 0x20..=0x3f) => Esc::Csi,
            (Esc::Csi, 0x1b) => Esc::Start,
            (Esc::Csi, 0x40..=0x7e) => Esc::Normal,
            // A control key inside a sequence ends it and counts.
            (Esc::Csi, b) if b < 0x20 => {
                self.state = Esc::Normal;
                self.since = None;
                return Some(b);
            }
            (Esc::Csi, _) => Esc::Normal,
            (Esc::Ss3, 0x1b) => Esc::Start,
            (Esc::Ss3, _) => Esc::Normal,
            (Esc::Str, 0x07) => Esc::Normal,
            (Esc::Str, 0x1b) => Esc::StrEscape,
            (Esc::Str, _) => Esc::Str,
            (Esc::StrEscape, _) => Esc::Normal,
        };
        self.state = next;
        self.since = (next != Esc::Normal).then_some(now);
        None
    }
}

/// What one byte did to a [`LineEditor`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edit {
    Nothing,
    Changed,
    /// Refused (full, nothing to erase).
    Bell,
    Enter,
    /// Ctrl-C or Ctrl-\.
    Cancel,
}

/// A one-line editor: printable characters (UTF-8) are added, Backspace erases one,
/// Ctrl-W a word, Ctrl-U the line, Enter ends, Ctrl-C cancels; other control bytes are
/// dropped. Escape sequences are filtered before (see [`EscFilter`]).
#[derive(Debug, Clone)]
pub struct LineEditor {
    text: String,
    max: usize,
    /// A UTF-8 sequence being read.
    partial: Vec<u8>,
}

impl LineEditor {
    pub fn new(max_chars: usize) -> Self {
        LineEditor {
            text: String::new(),
            max: max_chars,
            partial: Vec::new(),
        }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn feed(&mut self, byte: u8) -> Edit {
        if byte >= 0x80 {
            return self.feed_utf8(byte);
        }
        // An ASCII byte ends any UTF-8 sequence, which was broken.
        self.partial.clear();
        match byte {
            b'\r' | b'\n' => Edit::Enter,
            0x03 | 0x1c => Edit::Cancel,
            0x7f | 0x08 => {
                if self.text.pop().is_some() {
                    Edit::Changed
                } else {
                    Edit::Bell
                }
            }
            0x15 => {
                self.text.clear();
                Edit::Changed
            }
            0x17 => {
                let kept = self.text.trim_end().len();
                let start = self.text[..kept]
                    .rfind(char::is_whitespace)
                    .map_or(0, |i| i + 1);
                self.text.truncate(start);
                Edit::Changed
            }
            0x20..=0x7e => self.push(byte as char),
            _ => Edit::Nothing,
        }
    }

    fn feed_utf8(&mut self, byte: u8) -> Edit {
        self.partial.push(byte);
        match std::str::from_utf8(&self.partial) {
            Ok(s) => {
                let c = s.chars().next();
                self.partial.clear();
                match c {
                    Some(c) if !needs_escape(c) => self.push(c),
                    _ => Edit::Nothing,
                }
            }
            Err(e) if e.error_len().is_none() && self.partial.len() < 4 => Edit::Nothing,
            Err(_) => {
                self.partial.clear();
                Edit::Nothing
            }
        }
    }

    fn push(&mut self, c: char) -> Edit {
        if self.text.chars().count() >= self.max {
            return Edit::Bell;
        }
        self.text.push(c);
        Edit::Changed
    }

    /// `prefix` and the text, cut at the front to fit in `width` columns.
    pub fn render(&self, prefix: &str, width: usize) -> String {
        let room = width.saturating_sub(prefix.chars().count()).max(2);
        let count = self.text.chars().count();
        if count <= room {
            format!("{prefix}{}", self.text)
        } else {
            let tail: String = self.text.chars().skip(count - (room - 1)).collect();
            format!("{prefix}…{tail}")
        }
    }
}

// ---------------------------------------------------------------------------------------
// Output: showing text that came from elsewhere.

/// Whether `c` is shown escaped: control characters, and the invisible ones that change
/// how text around them looks (bidirectional overrides, zero-width characters).
pub fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00ad}'
                | '\u{034f}'
                | '\u{061c}'
                | '\u{115f}'
                | '\u{1160}'
                | '\u{17b4}'
                | '\u{17b5}'
                | '\u{180b}'..='\u{180e}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{206f}'
                | '\u{3164}'
                | '\u{fe00}'..='\u{fe0f}'
                | '\u{feff}'
                | '\u{ffa0}'
                | '\u{fff9}'..='\u{fffb}'
                | '\u{e0000}'..='\u{e0fff}'
        )
}

/// `text` with every character [`needs_escape`] says so written as `\t`, `\r`, `\xNN`
/// or `\u{NNNN}`; whether any was.
pub fn escape(text: &str) -> (String, bool) {
    let mut out = String::with_capacity(text.len());
    let mut any = false;
    for c in text.chars() {
        if !needs_escape(c) {
            out.push(c);
            continue;
        }
        any = true;
        match c {
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push_str(&format!("\\u{{{:04x}}}", c as u32)),
        }
    }
    (out, any)
}

/// `text` on one row of at most `width` columns: escaped, cut with `…`.
pub fn one_row(text: &str, width: usize) -> String {
    let (text, _) = escape(text);
    cut(&text, width)
}

fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// `text` as rows of at most `width` columns: each of its lines escaped and wrapped,
/// numbered when there is more than one line; when there are more than [`MAX_ROWS`]
/// rows, the middle ones are replaced by a row that says how many were left out.
/// Also whether anything was escaped.
pub fn block(text: &str, width: usize) -> (Vec<String>, bool) {
    let lines: Vec<&str> = text.split('\n').collect();
    let numbered = lines.len() > 1;
    let digits = lines.len().to_string().len();
    let room = if numbered {
        width.saturating_sub(digits + 2).max(8)
    } else {
        width.max(8)
    };
    let mut rows = Vec::new();
    let mut any = false;
    for (i, line) in lines.iter().enumerate() {
        let (escaped, e) = escape(line);
        any |= e;
        let chars: Vec<char> = escaped.chars().collect();
        let mut chunks: Vec<String> = chars.chunks(room).map(|c| c.iter().collect()).collect();
        if chunks.is_empty() {
            chunks.push(String::new());
        }
        for (j, chunk) in chunks.into_iter().enumerate() {
            if numbered {
                let number = if j == 0 {
                    (i + 1).to_string()
                } else {
                    String::new()
                };
                rows.push(format!("{number:>digits$}  {chunk}"));
            } else {
                rows.push(chunk);
            }
        }
    }
    (limit(rows, text, width), any)
}

/// Prose (a question, an option) as rows of at most `width` columns: escaped, wrapped
/// between words where it can be, the middle left out past [`MAX_ROWS`] rows.
pub fn prose(text: &str, width: usize) -> Vec<String> {
    let room = width.max(8);
    let mut rows = Vec::new();
    for line in text.split('\n') {
        let (escaped, _) = escape(line);
        let mut rest: Vec<char> = escaped.chars().collect();
        while rest.len() > room {
            // The last space that leaves at least half a row; else a hard break.
            let split = (room / 2..=room).rev().find(|&i| rest[i] == ' ');
            let (row, skip) = match split {
                Some(i) => (rest[..i].iter().collect::<String>(), i + 1),
                None => (rest[..room].iter().collect::<String>(), room),
            };
            rows.push(row.trim_end().to_owned());
            rest.drain(..skip);
        }
        rows.push(rest.into_iter().collect());
    }
    limit(rows, text, width)
}

/// At most [`MAX_ROWS`] rows: the first and the last, and a row that says how many
/// were left out between them.
fn limit(rows: Vec<String>, text: &str, width: usize) -> Vec<String> {
    if rows.len() <= MAX_ROWS {
        return rows;
    }
    let head = MAX_ROWS - 6;
    let tail = 5;
    let hidden = rows.len() - head - tail;
    let mut kept: Vec<String> = rows[..head].to_vec();
    let note = format!(
        "… {hidden} rows left out ({} characters in all) …",
        text.chars().count()
    );
    kept.push(cut(&note, width));
    kept.extend_from_slice(&rows[rows.len() - tail..]);
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use nix::pty::openpty;

    /// A prompt on the slave side of a new pseudo-terminal (not a controlling
    /// terminal, so the foreground check is skipped); the master side to type on.
    fn pty() -> (Tty, File) {
        let pty = openpty(None, None).unwrap();
        let tty = Tty {
            file: File::from(pty.slave),
            saved: None,
            shown: None,
        };
        (tty, File::from(pty.master))
    }

    #[test]
    fn the_terminal_is_restored_when_a_panic_unwinds() {
        let (tty, _master) = pty();
        let probe = tty.file.try_clone().unwrap();
        let inside = tty.file.try_clone().unwrap();
        let before = tcgetattr(&probe).unwrap();
        assert!(
            before
                .local_flags
                .contains(LocalFlags::ICANON | LocalFlags::ECHO | LocalFlags::ISIG)
        );
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            let mut tty = tty;
            tty.set_raw().unwrap();
            let raw = tcgetattr(&inside).unwrap();
            assert!(
                !raw.local_flags
                    .intersects(LocalFlags::ICANON | LocalFlags::ECHO)
            );
            assert!(!raw.local_flags.contains(LocalFlags::ISIG));
            panic!("a bug while prompting");
        }));
        assert!(unwound.is_err());
        let after = tcgetattr(&probe).unwrap();
        assert_eq!(after.local_flags, before.local_flags);
        assert_eq!(after.input_flags, before.input_flags);
        assert_eq!(after.control_chars, before.control_chars);
    }

    /// Type `keys` on the master side (after `delay`), draining what the prompt writes.
    fn typist(master: File, keys: Vec<(Duration, Vec<u8>)>) -> std::thread::JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let reader = master.try_clone().unwrap();
            let drained = std::thread::spawn(move || {
                let mut out = Vec::new();
                let mut buf = [0u8; 4096];
                // Ends when the slave side is closed (EIO).
                while let Ok(n) = (&reader).read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    out.extend_from_slice(&buf[..n]);
                }
                out
            });
            for (delay, bytes) in keys {
                std::thread::sleep(delay);
                (&master).write_all(&bytes).unwrap();
            }
            drained.join().unwrap()
        })
    }

    #[test]
    fn a_prompt_on_a_pseudo_terminal_reads_its_keys() {
        let (mut tty, master) = pty();
        tty.set_raw().unwrap();
        let ms = Duration::from_millis;
        // An arrow key and a stray key first, then n, a reason with a typo, Enter.
        let typed = typist(
            master,
            vec![
                (ms(50), b"\x1b[Ax".to_vec()),
                (ms(50), b"nno\x7f\x7fnot now\r".to_vec()),
            ],
        );
        let mut prompt = ApprovalPrompt::new(true);
        let step = tty.drive(
            &mut prompt,
            Some(Instant::now() + Duration::from_secs(20)),
            &[],
        );
        assert_eq!(step, Step::Done(Choice::Deny(Some("not now".into()))));
        drop(tty);
        let screen = String::from_utf8_lossy(&typed.join().unwrap()).into_owned();
        assert!(screen.contains("run it? [y/a/n] "), "{screen:?}");
        assert!(
            screen.contains("\x07"),
            "no bell for the stray key: {screen:?}"
        );
        assert!(screen.contains("reason: not now"), "{screen:?}");
        assert!(
            !screen.contains("\x1b"),
            "an escape sequence was echoed: {screen:?}"
        );
    }

    #[test]
    fn a_deadline_ends_the_prompt_and_a_wake_descriptor_interrupts_it() {
        let (mut tty, master) = pty();
        tty.set_raw().unwrap();
        let _typed = typist(master.try_clone().unwrap(), vec![]);
        let mut prompt = ApprovalPrompt::new(false);
        let start = Instant::now();
        let step = tty.drive(&mut prompt, Some(start + Duration::from_millis(300)), &[]);
        assert_eq!(step, Step::Timeout);
        assert!(start.elapsed() >= Duration::from_millis(300));
        let (mut a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        a.write_all(b"!").unwrap();
        let step = tty.drive(
            &mut prompt,
            Some(Instant::now() + Duration::from_secs(20)),
            &[b.as_fd()],
        );
        assert_eq!(step, Step::Woken(0));
    }

    #[test]
    fn type_ahead_is_discarded() {
        let (mut tty, master) = pty();
        tty.set_raw().unwrap();
        (&master).write_all(b"y").unwrap();
        // Wait until the byte is readable on the slave side, then flush it.
        let mut fds = [PollFd::new(tty.file.as_fd(), PollFlags::POLLIN)];
        assert_eq!(poll(&mut fds, PollTimeout::from(5000u16)).unwrap(), 1);
        tty.flush_input().unwrap();
        let _typed = typist(master, vec![(Duration::from_millis(50), b"\r".to_vec())]);
        let mut prompt = ApprovalPrompt::new(true);
        let step = tty.drive(
            &mut prompt,
            Some(Instant::now() + Duration::from_secs(20)),
            &[],
        );
        assert_eq!(step, Step::Done(Choice::Deny(None)));
    }

    fn feed_all<P: Prompt>(p: &mut P, bytes: &[u8]) -> Option<P::Out> {
        p.feed(bytes, Instant::now())
    }

    #[test]
    fn keys_map_to_choices() {
        for (b, k) in [
            (b'y', Some(Key::Once)),
            (b'Y', Some(Key::Once)),
            (b'a', Some(Key::Session)),
            (b'A', Some(Key::Session)),
            (b'n', Some(Key::Deny)),
            (b'N', Some(Key::Deny)),
            (b'\r', Some(Key::DenyNow)),
            (b'\n', Some(Key::DenyNow)),
            (0x03, Some(Key::Cancel)),
            (0x1c, Some(Key::Cancel)),
            (b'x', None),
            (b' ', None),
            (0x1a, None),
            (0x04, None),
            (0x1b, None),
        ] {
            assert_eq!(key(b, true), k, "byte {b:#x}");
        }
        assert_eq!(key(b'a', false), None);
        assert_eq!(key(b'A', false), None);
        assert_eq!(key(b'y', false), Some(Key::Once));
    }

    #[test]
    fn the_approval_prompt_answers() {
        let mut p = ApprovalPrompt::new(true);
        assert_eq!(feed_all(&mut p, b"xzq"), None);
        assert!(p.take_effects().bell);
        assert_eq!(feed_all(&mut p, b"y"), Some(Choice::Once));
        assert_eq!(p.last_line().as_deref(), Some("run it? [y/a/n] y"));

        let mut p = ApprovalPrompt::new(true);
        assert_eq!(feed_all(&mut p, b"A"), Some(Choice::Session));

        // `l` only where always is offered.
        let mut p = ApprovalPrompt::new(true);
        assert_eq!(feed_all(&mut p, b"l"), None);
        assert!(p.take_effects().bell);
        let mut p = ApprovalPrompt::new(true).offering_always(true);
        assert_eq!(feed_all(&mut p, b"l"), Some(Choice::Always));
        assert_eq!(p.last_line().as_deref(), Some("run it? [y/a/l/n] l"));

        let mut p = ApprovalPrompt::new(false);
        assert_eq!(feed_all(&mut p, b"a"), None);
        assert_eq!(feed_all(&mut p, b"\r"), Some(Choice::Deny(None)));

        let mut p = ApprovalPrompt::new(true);
        assert_eq!(feed_all(&mut p, b"\x03"), Some(Choice::Cancelled));
    }

    #[test]
    fn n_reads_a_reason() {
        let mut p = ApprovalPrompt::new(true);
        assert_eq!(feed_all(&mut p, b"n"), None);
        assert!(p.denying());
        let fx = p.take_effects();
        assert_eq!(fx.commit.as_deref(), Some("run it? [y/a/n] n"));
        // y and a are text now, not answers.
        assert_eq!(feed_all(&mut p, b"yay\x7f\x7f\x7fuse make clean"), None);
        assert_eq!(
            feed_all(&mut p, b"\r"),
            Some(Choice::Deny(Some("use make clean".into())))
        );

        let mut p = ApprovalPrompt::new(true);
        assert_eq!(
            feed_all(&mut p, b"n  \r"),
            Some(Choice::Deny(None)),
            "a blank reason is none"
        );
        let mut p = ApprovalPrompt::new(true);
        assert_eq!(
            feed_all(&mut p, b"nnot this\x03"),
            Some(Choice::Deny(None)),
            "Ctrl-C while typing the reason denies without it"
        );
    }

    #[test]
    fn arrow_keys_never_answer() {
        // Up arrow (ESC [ A, ESC O A), F5 (ESC [ 1 5 ~), Alt+y, an OSC reply: all dropped.
        let mut p = ApprovalPrompt::new(true);
        assert_eq!(
            feed_all(&mut p, b"\x1b[A\x1bOA\x1b[15~\x1by\x1b]11;rgb:0/0/0\x07"),
            None
        );
        assert_eq!(feed_all(&mut p, b"y"), Some(Choice::Once));
    }

    #[test]
    fn a_lone_escape_expires() {
        let mut f = EscFilter::default();
        let t0 = Instant::now();
        assert_eq!(f.pass(0x1b, t0), None);
        // The next byte a moment later is typed, not part of a sequence.
        let later = t0 + ESC_TIMEOUT;
        f.expire(later);
        assert_eq!(f.pass(b'y', later), Some(b'y'));
        // Within the same burst it is Alt+y.
        assert_eq!(f.pass(0x1b, later), None);
        f.expire(later);
        assert_eq!(f.pass(b'y', later), None);
        assert_eq!(f.pass(b'y', later), Some(b'y'));
        // Ctrl-C ends any sequence.
        assert_eq!(f.pass(0x1b, later), None);
        assert_eq!(f.pass(b'[', later), None);
        assert_eq!(f.pass(0x03, later), Some(0x03));
    }

    #[test]
    fn the_line_editor_edits() {
        let mut e = LineEditor::new(10);
        for &b in b"hello wor" {
            e.feed(b);
        }
        assert_eq!(e.text(), "hello wor");
        assert_eq!(e.feed(0x17), Edit::Changed);
        assert_eq!(e.text(), "hello ");
        assert_eq!(e.feed(0x7f), Edit::Changed);
        assert_eq!(e.text(), "hello");
        assert_eq!(e.feed(0x08), Edit::Changed);
        assert_eq!(e.text(), "hell");
        // Control bytes are dropped; tabs too.
        for &b in b"\x01\x02\t\x1a\x00" {
            assert_eq!(e.feed(b), Edit::Nothing);
        }
        assert_eq!(e.text(), "hell");
        assert_eq!(e.feed(0x15), Edit::Changed);
        assert_eq!(e.text(), "");
        assert_eq!(e.feed(0x7f), Edit::Bell);
        // The cap.
        for &b in b"0123456789" {
            assert_eq!(e.feed(b), Edit::Changed);
        }
        assert_eq!(e.feed(b'x'), Edit::Bell);
        assert_eq!(e.text(), "0123456789");
        assert_eq!(e.feed(b'\r'), Edit::Enter);
        assert_eq!(e.feed(0x03), Edit::Cancel);
    }

    #[test]
    fn the_line_editor_takes_utf8_and_drops_the_invisible() {
        let mut e = LineEditor::new(50);
        for &b in "héllo ✓ ".as_bytes() {
            e.feed(b);
        }
        // A right-to-left override, a zero-width space, a C1 control, broken UTF-8.
        for &b in "\u{202e}\u{200b}\u{85}".as_bytes() {
            e.feed(b);
        }
        for &b in b"\xff\xc3x\xe2\x9c" {
            e.feed(b);
        }
        assert_eq!(e.text(), "héllo ✓ x");
        assert_eq!(e.feed(0x7f), Edit::Changed);
        assert_eq!(e.text(), "héllo ✓ ");
    }

    #[test]
    fn a_long_line_scrolls() {
        let mut e = LineEditor::new(200);
        for _ in 0..100 {
            e.feed(b'x');
        }
        e.feed(b'E');
        let shown = e.render("reason: ", WIDTH);
        assert_eq!(shown.chars().count(), WIDTH);
        assert!(shown.starts_with("reason: …"));
        assert!(shown.ends_with("xE"));
    }

    #[test]
    fn options_are_selected_by_number() {
        let options: Vec<String> = ["red", "green", "blue"].map(String::from).to_vec();
        assert_eq!(select("2", &options, false), Ok(Some("green".into())));
        assert_eq!(select(" 3 ", &options, false), Ok(Some("blue".into())));
        assert_eq!(select("1,3", &options, true), Ok(Some("red, blue".into())));
        assert_eq!(
            select("3, 1 ,3", &options, true),
            Ok(Some("blue, red".into()))
        );
        assert_eq!(select("1 2", &options, true), Ok(Some("red, green".into())));
        assert!(select("1,3", &options, false).is_err());
        assert!(select("4", &options, false).is_err());
        assert!(select("0", &options, true).is_err());
        assert!(select("1,9", &options, true).is_err());
        assert_eq!(
            select("purple please", &options, false),
            Ok(Some("purple please".into()))
        );
        assert_eq!(select("2 cats", &options, false), Ok(Some("2 cats".into())));
        assert_eq!(select("   ", &options, false), Ok(None));
        assert_eq!(select("", &[], false), Ok(None));
        assert_eq!(select("42", &[], false), Ok(Some("42".into())));
    }

    #[test]
    fn the_question_prompt_answers_and_retries() {
        let q = QuestionRequest {
            call_id: "c".into(),
            session_id: "s".into(),
            question: "which?".into(),
            options: vec!["red".into(), "green".into()],
            allow_multiple: false,
            timeout_seconds: 10,
            pid: 1,
        };
        let mut p = QuestionPrompt::new(&q);
        assert_eq!(feed_all(&mut p, b"7\r"), None);
        let fx = p.take_effects();
        assert_eq!(fx.notes.len(), 1, "{fx:?}");
        assert_eq!(
            feed_all(&mut p, b"\x7f2\r"),
            Some(Reply::Text("green".into()))
        );
        let mut p = QuestionPrompt::new(&q);
        assert_eq!(feed_all(&mut p, b"  \r"), Some(Reply::Declined));
        let mut p = QuestionPrompt::new(&q);
        assert_eq!(feed_all(&mut p, b"ab\x03"), Some(Reply::Cancelled));
    }

    #[test]
    fn text_is_escaped_for_the_screen() {
        assert_eq!(escape("ls -l"), ("ls -l".into(), false));
        assert_eq!(
            escape("a\x1b[2Jb\tc\r\u{7f}"),
            ("a\\x1b[2Jb\\tc\\r\\x7f".into(), true)
        );
        assert_eq!(
            escape("rm \u{202e}fdp.exe"),
            ("rm \\u{202e}fdp.exe".into(), true)
        );
        assert_eq!(escape("\u{9b}31m"), ("\\x9b31m".into(), true));
        assert_eq!(escape("héllo ✓"), ("héllo ✓".into(), false));
    }

    #[test]
    fn blocks_wrap_number_and_cut() {
        let (rows, any) = block("echo hi", 20);
        assert_eq!(rows, vec!["echo hi"]);
        assert!(!any);
        let (rows, _) = block(&"x".repeat(25), 10);
        assert_eq!(rows, vec!["xxxxxxxxxx", "xxxxxxxxxx", "xxxxx"]);
        let (rows, _) = block("for f in *; do\n  echo $f\ndone", 40);
        assert_eq!(rows, vec!["1  for f in *; do", "2    echo $f", "3  done"]);
        let long: Vec<String> = (1..=100).map(|i| format!("line {i}")).collect();
        let (rows, _) = block(&long.join("\n"), 40);
        assert_eq!(rows.len(), MAX_ROWS);
        assert!(
            rows[MAX_ROWS - 6].starts_with("… 81 rows left out ("),
            "{rows:?}"
        );
        assert!(rows.last().unwrap().ends_with("line 100"));
        assert!(rows.iter().all(|r| r.chars().count() <= 40));
        assert_eq!(one_row("a\nb", 10), "a\\nb");
        assert_eq!(
            prose("Which database should the migration target?", 20),
            vec!["Which database", "should the migration", "target?"]
        );
        assert_eq!(
            prose(&"y".repeat(25), 10),
            vec!["yyyyyyyyyy", "yyyyyyyyyy", "yyyyy"]
        );
        assert_eq!(prose("two\nlines", 20), vec!["two", "lines"]);
        assert_eq!(one_row("abcdefghijkl", 5), "abcd…");
    }

    #[test]
    fn countdowns() {
        assert_eq!(countdown(9), "9s");
        assert_eq!(countdown(65), "65s");
        assert_eq!(countdown(125), "2m05s");
        assert_eq!(countdown(7500), "2h05m");
        assert_eq!(ceil_seconds(Duration::from_millis(1)), 1);
        assert_eq!(ceil_seconds(Duration::from_millis(1000)), 1);
        assert_eq!(ceil_seconds(Duration::from_millis(1001)), 2);
    }

    #[test]
    fn prompt_lines_fit() {
        let mut p = ApprovalPrompt::new(true);
        assert_eq!(p.line(Some(57)), "(57s) run it? [y/a/n] ");
        feed_all(&mut p, b"n");
        feed_all(&mut p, "é".repeat(500).as_bytes());
        assert!(p.line(Some(7500)).chars().count() <= WIDTH);
    }
}
