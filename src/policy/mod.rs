//! The decision: level, deny rules, allow rules and remembered approvals applied to one
//! request, giving allow, ask or deny with the reason. Pure: no files, environment,
//! sockets or terminals here, so every branch is tested with tables.

#![forbid(unsafe_code)]

mod ask;
pub mod compound;
mod decide;
mod deny;
mod examples;
mod index;
mod options;
mod patterns;
pub mod readonly;
mod rules;
pub mod runners;
pub mod scan;
mod store;
pub mod wrapper;

use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::path::Path;
use std::sync::Arc;

pub use ask::{AskMatch, AskRules};
pub use decide::{
    Allowed, Asked, Decision, Denied, Policy, Remembered, Request, Unallowed, Unmatched, decide,
};
pub use deny::{DenyMatch, DenyRules, ExecMatch, MULTI_CALL};
pub use examples::{Alone, Expect, RuleKind};
pub use rules::{
    AllowRules, RuleError, SHELL_CHARS, allow_rule_matches, describe_char, first_shell_char,
    first_unmatchable_char, trim_blanks, validate_rule,
};

/// The permission level: how much runs without a person's say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Level {
    /// Nothing runs and nothing is asked.
    Deny,
    /// Allow rules run; anything else waits for an approver; unanswered means denied.
    Ask,
    /// Everything runs, unasked, inside the sandbox.
    Safe,
    /// Everything runs.
    Full,
}

impl Level {
    pub const ALL: [Level; 4] = [Level::Deny, Level::Ask, Level::Safe, Level::Full];

    pub fn as_str(self) -> &'static str {
        match self {
            Level::Deny => "deny",
            Level::Ask => "ask",
            Level::Safe => "safe",
            Level::Full => "full",
        }
    }

    pub fn parse(text: &str) -> Option<Level> {
        Level::ALL.into_iter().find(|l| l.as_str() == text)
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An imported rule's `from`: where `gate import` found the agent's rule, `FILE:LINE`
/// as it writes it. Kept as the file, which every rule imported from the same file
/// shares, and the line, when the text is of that form (a line number without a leading
/// zero); otherwise as the text itself. Shown, either way, as the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportedFrom {
    /// The text before the line number and its `:`, or all of it.
    file: Arc<str>,
    line: Option<u32>,
}

impl ImportedFrom {
    /// The `from` that `text` says, sharing its file with `earlier` (the previous
    /// rule's, when there is one) when the file is the same.
    pub fn new(text: &str, earlier: Option<&ImportedFrom>) -> ImportedFrom {
        // By byte: this runs for each of an imported policy's rules before every command.
        let bytes = text.as_bytes();
        let line = bytes.iter().rposition(|&b| b == b':').and_then(|colon| {
            let digits = &bytes[colon + 1..];
            // Nine digits at most, so the number fits a u32; a longer one stays text.
            let canonical = (1..=9).contains(&digits.len())
                && digits[0] != b'0'
                && digits.iter().all(u8::is_ascii_digit);
            canonical.then(|| {
                let line = digits
                    .iter()
                    .fold(0u32, |n, &d| n * 10 + u32::from(d - b'0'));
                (colon, line)
            })
        });
        let (file, line) = match line {
            Some((colon, line)) => (&text[..colon], Some(line)),
            None => (text, None),
        };
        let file = match earlier {
            Some(earlier) if &*earlier.file == file => earlier.file.clone(),
            _ => Arc::from(file),
        };
        ImportedFrom { file, line }
    }
}

impl ImportedFrom {
    /// Become the `from` that `text` says when it is this one's file at another line
    /// (what [`ImportedFrom::new`] would make of it, without making anything); `false`,
    /// and unchanged, otherwise.
    pub fn relined(&mut self, text: &str) -> bool {
        let Some(digits) = text
            .strip_prefix(&*self.file)
            .and_then(|rest| rest.strip_prefix(':'))
        else {
            return false;
        };
        let digits = digits.as_bytes();
        if !(1..=9).contains(&digits.len())
            || digits[0] == b'0'
            || !digits.iter().all(u8::is_ascii_digit)
        {
            return false;
        }
        self.line = Some(
            digits
                .iter()
                .fold(0u32, |n, &d| n * 10 + u32::from(d - b'0')),
        );
        true
    }
}

impl fmt::Display for ImportedFrom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        match self.line {
            Some(line) => write!(f, ":{line}"),
            None => Ok(()),
        }
    }
}

/// Where a setting or rule came from, so that every message can name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    BuiltIn,
    /// A configuration file and the 1-based line of the value.
    File {
        path: Arc<Path>,
        line: u32,
    },
    /// An environment variable, by name.
    Env(&'static str),
    /// A command-line option, by name (`--allow`).
    Flag(&'static str),
    /// A configuration file's rule that `gate import` wrote from another agent's rule:
    /// where it is written in gate's file, and where the agent's rule was (its `from`).
    Imported {
        path: Arc<Path>,
        line: u32,
        from: ImportedFrom,
    },
    /// A lasting approval ("always allow") in the always-allow file, which the broker
    /// wrote when a person chose it (or the person, by hand), and its line.
    Always {
        path: Arc<Path>,
        line: u32,
    },
    /// An approver's answer earlier in the session.
    Approver,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::BuiltIn => f.write_str("the built-in default"),
            Origin::File { path, line } => write!(f, "{}:{line}", path.display()),
            Origin::Env(name) => f.write_str(name),
            Origin::Flag(name) => f.write_str(name),
            Origin::Imported { path, line, from } => {
                write!(f, "{}:{line} (imported from {from})", path.display())
            }
            Origin::Always { path, line } => {
                write!(f, "{}:{line} (always allow)", path.display())
            }
            Origin::Approver => f.write_str("an approver, earlier in this session"),
        }
    }
}

/// The text of a command as gate judges it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandText {
    text: String,
    /// The original bytes were valid UTF-8, so `text` is exactly what will run.
    exact: bool,
}

impl CommandText {
    /// A command given as valid UTF-8.
    pub fn new(text: impl Into<String>) -> Self {
        CommandText {
            text: text.into(),
            exact: true,
        }
    }

    /// A command from raw bytes. Invalid UTF-8 is replaced for display and for deny
    /// rules, and such a command never matches an allow rule or a remembered approval.
    pub fn from_bytes(bytes: &[u8]) -> Self {
        match std::str::from_utf8(bytes) {
            Ok(text) => CommandText::new(text),
            Err(_) => CommandText {
                text: String::from_utf8_lossy(bytes).into_owned(),
                exact: false,
            },
        }
    }

    /// A command whose text could only be shown approximately (an argument was not
    /// UTF-8): it can meet deny rules, never an allow rule.
    pub fn inexact(text: impl Into<String>) -> Self {
        CommandText {
            text: text.into(),
            exact: false,
        }
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    pub fn is_exact(&self) -> bool {
        self.exact
    }
}

/// A fast hasher for rule tables. It is not keyed: the keys are rules from configuration,
/// and the lookups are prefixes of one command, so there is no table to flood. It also
/// spares gate the random seed that std's default hasher fetches from the kernel.
#[derive(Debug, Default, Clone, Copy)]
pub struct RuleHasher(u64);

const HASH_MULTIPLIER: u64 = 0x517c_c1b7_2722_0a95;

impl RuleHasher {
    fn mix(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(HASH_MULTIPLIER);
    }
}

impl Hasher for RuleHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.mix(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.mix(u64::from_le_bytes(word) ^ ((rest.len() as u64) << 56));
        }
    }

    fn write_u8(&mut self, byte: u8) {
        self.mix(u64::from(byte));
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

pub type RuleHashBuilder = BuildHasherDefault<RuleHasher>;

#[cfg(test)]
mod imported_from_tests {
    use super::ImportedFrom;
    use proptest::prelude::*;

    #[test]
    fn an_imported_rules_from_is_shown_as_written_and_shares_its_file() {
        for text in [
            "/h/.claude/settings.json:4",
            "a:01",
            "a:",
            "a",
            "",
            "a:b:3",
            "C:\\x.json:4",
            ":5",
            "a:4294967296",
            "a:999999999",
            "a:1234567890",
            "a:+4",
        ] {
            assert_eq!(ImportedFrom::new(text, None).to_string(), text);
        }
        let first = ImportedFrom::new("/h/s.json:4", None);
        let second = ImportedFrom::new("/h/s.json:5", Some(&first));
        let other = ImportedFrom::new("/h/t.json:5", Some(&first));
        assert!(std::sync::Arc::ptr_eq(&first.file, &second.file));
        assert!(!std::sync::Arc::ptr_eq(&first.file, &other.file));
        assert_eq!(
            (second.to_string(), other.to_string()),
            ("/h/s.json:5".to_owned(), "/h/t.json:5".to_owned())
        );
    }

    proptest! {
        #[test]
        fn any_from_is_shown_as_written(text in "[a-z:0-9/]{0,12}", earlier in "[a-z:0-9/]{0,12}") {
            let earlier = ImportedFrom::new(&earlier, None);
            prop_assert_eq!(ImportedFrom::new(&text, Some(&earlier)).to_string(), text);
        }

        /// Relining a `from` makes what reading the text anew makes, or declines and
        /// leaves it as it was.
        #[test]
        fn relining_makes_what_reading_anew_makes(text in "[a:0-9/]{0,10}", earlier in "[a:0-9/]{0,10}") {
            let mut relined = ImportedFrom::new(&earlier, None);
            let before = relined.clone();
            if relined.relined(&text) {
                prop_assert_eq!(&relined, &ImportedFrom::new(&text, None));
            } else {
                prop_assert_eq!(&relined, &before);
            }
        }
    }
}
