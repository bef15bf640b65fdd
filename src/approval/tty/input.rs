//! The keys as they arrive: [`EscFilter`] drops terminal escape sequences whole (arrow
//! and function keys, Alt+key, OSC strings) so that no part of one is read as a key, and
//! [`LineEditor`] edits the one line a person types (a deny reason, an answer). Pure:
//! bytes and times in, edits out; the terminal is read elsewhere.

use std::time::{Duration, Instant};

use super::text::needs_escape;

/// Bytes of an escape sequence that arrive this long after its start are not part of
/// it: a lone Esc key press followed later by a key is that key.
pub(super) const ESC_TIMEOUT: Duration = Duration::from_millis(100);

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
