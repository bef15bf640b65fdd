//! The prompts that read keys: the approval prompt (one key, then for `n` a reason), the
//! question prompt (a line that picks numbered options or is the answer itself), and the
//! idle line of `gate watch`. Pure: each takes the bytes typed and the time, and says
//! what its line shows and what else the screen should do ([`Effects`]); none reads or
//! writes the terminal ([`Tty::drive`](super::Tty::drive) does).

use std::time::Instant;

use super::input::{Edit, EscFilter, LineEditor};
use super::text::one_row;
use super::{Effects, Prompt, WIDTH};
use crate::approval::protocol::QuestionRequest;

/// The longest deny reason a person can type, in characters.
pub const MAX_REASON: usize = 300;

/// The longest answer to a question a person can type, in characters.
pub const MAX_ANSWER: usize = 2000;

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
        feed_keys(self, |p| &mut p.filter, bytes, now, Self::feed_byte)
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
        feed_keys(self, |p| &mut p.filter, bytes, now, Self::feed_byte)
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
        feed_keys(
            self,
            |p| &mut p.filter,
            bytes,
            now,
            |_, b| matches!(b, 0x03 | 0x1c).then_some(()),
        )
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

/// What every prompt's [`Prompt::feed`] does: expire an escape sequence left from
/// before, then hand `key` each byte that the prompt's escape filter lets through, until
/// one ends the prompt (the bytes after it are dropped, and never reach the filter).
fn feed_keys<P, T>(
    prompt: &mut P,
    filter: fn(&mut P) -> &mut EscFilter,
    bytes: &[u8],
    now: Instant,
    key: fn(&mut P, u8) -> Option<T>,
) -> Option<T> {
    filter(prompt).expire(now);
    for &b in bytes {
        if let Some(b) = filter(prompt).pass(b, now) {
            if let Some(out) = key(prompt, b) {
                return Some(out);
            }
        }
    }
    None
}
