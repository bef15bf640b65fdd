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
//!
//! This file owns the terminal itself: opening it, raw mode and putting it back,
//! drawing, and [`Tty::drive`], the loop that feeds a [`Prompt`] the keys until it
//! ends, a deadline passes or a wake descriptor fires. The rest lives beside it, each
//! pure but the first: [`ask`] (the requester's approve and question), `prompts` (what
//! keys mean at each prompt), `input` (escape sequences, the line editor) and `text`
//! (showing text that came from elsewhere). No other module writes to the terminal.

#![forbid(unsafe_code)]

mod ask;
mod input;
mod prompts;
mod text;

pub use ask::{TtyAnswer, TtyVerdict};
pub use input::{Edit, EscFilter, LineEditor};
pub use prompts::{
    ApprovalPrompt, Choice, IdlePrompt, Key, MAX_ANSWER, MAX_REASON, QuestionPrompt, Reply,
    countdown, key, select,
};
use text::cut;
pub use text::{block, escape, needs_escape, one_row, prose};

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

#[cfg(test)]
mod tests;
