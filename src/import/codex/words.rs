//! Codex's pattern tokens are argv words; gate's rules and commands are shell text. This
//! is the one place that turns words into text, so a rule and the examples checked
//! against it are always spelled alike.
//!
//! A word made only of characters no shell reads specially is written as it is. Any
//! other word is quoted: in single quotes, or in double quotes when it holds a single
//! quote. A rule cannot hold a shell character even inside quotes (gate refuses such
//! rules, [`crate::policy::validate_rule`]), nor a word with both kinds of quote; a
//! command (an example) can, with the quoting any POSIX shell reads back.

use crate::policy::SHELL_CHARS;

// Words a shell reads as its own syntax when they come first: the shell table's.
use crate::shells::RESERVED_WORDS as RESERVED;

/// Whether `word` must be quoted to reach the program as this one argument. `first`: the
/// word is the program (where `NAME=value` would be an assignment and `if` a keyword).
fn needs_quotes(word: &str, first: bool) -> bool {
    word.is_empty()
        || (first && (word.contains('=') || RESERVED.contains(&word)))
        || word.chars().any(|c| {
            c.is_whitespace()
                || c.is_control()
                || (c.is_ascii() && !(c.is_ascii_alphanumeric() || "-_./:,+@%^=".contains(c)))
        })
}

/// The word as a command spells it: as it is, or quoted so that a POSIX shell reads
/// it back as exactly this word.
pub fn command_word(word: &str, first: bool) -> String {
    if !needs_quotes(word, first) {
        word.to_owned()
    } else if !word.contains('\'') {
        format!("'{word}'")
    } else if !word.contains(['"', '$', '`', '\\']) {
        format!("\"{word}\"")
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// A whole argv as a command's text.
pub fn command(words: &[String]) -> String {
    words
        .iter()
        .enumerate()
        .map(|(i, w)| command_word(w, i == 0))
        .collect::<Vec<_>>()
        .join(" ")
}

/// How a word was written into a rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleWord {
    /// As it is.
    Plain(String),
    /// In quotes: an allow rule then matches this spelling only.
    Quoted(String),
}

/// Why a word cannot be written into a gate rule: the character at fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unwritable(pub char);

/// The word as a gate rule spells it, or the character that keeps it out of any rule.
pub fn rule_word(word: &str, first: bool) -> Result<RuleWord, Unwritable> {
    if let Some(c) = word
        .chars()
        .find(|&c| SHELL_CHARS.contains(&c) || (c.is_control() && c != '\t'))
    {
        return Err(Unwritable(c));
    }
    let spelled = command_word(word, first);
    if spelled == word {
        Ok(RuleWord::Plain(spelled))
    } else if spelled.contains('\\') {
        // Both kinds of quote: only a backslash could write it.
        Err(Unwritable('\''))
    } else {
        Ok(RuleWord::Quoted(spelled))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn plain_words_stay_as_they_are_and_others_are_quoted() {
        assert_eq!(
            command(&argv(&["git", "push", "--force-with-lease=main"])),
            "git push --force-with-lease=main"
        );
        assert_eq!(
            command(&argv(&["git", "commit", "-m", "a b"])),
            "git commit -m 'a b'"
        );
        assert_eq!(command(&argv(&["echo", "it's"])), "echo \"it's\"");
        assert_eq!(command(&argv(&["echo", "it's $x"])), r"echo 'it'\''s $x'");
        assert_eq!(
            command(&argv(&["rm", "*.o", "~", "#x", ""])),
            "rm '*.o' '~' '#x' ''"
        );
        // The program: an assignment or a keyword would not be the program.
        assert_eq!(command(&argv(&["A=1", "x=1"])), "'A=1' x=1");
        assert_eq!(command(&argv(&["if", "if"])), "'if' if");
        assert_eq!(command(&argv(&["äpfel", "a\u{a0}b"])), "äpfel 'a\u{a0}b'");
    }

    #[test]
    fn every_command_word_reads_back_as_the_same_word() {
        for words in [
            argv(&[
                "echo",
                "it's $x",
                "a\"b",
                "tab\there",
                "new\nline",
                "\\",
                "`x`",
            ]),
            argv(&["A=1", "!", "[[", "{", "x;y", "*"]),
        ] {
            assert_eq!(shell_words::split(&command(&words)).unwrap(), words);
        }
    }

    #[test]
    fn a_rule_word_is_plain_quoted_or_unwritable() {
        assert_eq!(rule_word("push", false), Ok(RuleWord::Plain("push".into())));
        assert_eq!(
            rule_word("a b", false),
            Ok(RuleWord::Quoted("'a b'".into()))
        );
        assert_eq!(
            rule_word("it's", false),
            Ok(RuleWord::Quoted("\"it's\"".into()))
        );
        assert_eq!(rule_word("$HOME", false), Err(Unwritable('$')));
        assert_eq!(rule_word("a;b", false), Err(Unwritable(';')));
        assert_eq!(rule_word("a\nb", false), Err(Unwritable('\n')));
        assert_eq!(rule_word("it's \"x\"", false), Err(Unwritable('\'')));
        assert_eq!(rule_word("x=1", true), Ok(RuleWord::Quoted("'x=1'".into())));
    }
}
