//! Allow rules for test and build runners: what the words after the rule may not hold.
//!
//! An allow rule matches its own words followed by any others, so `--allow 'npm test'`
//! would also run `npm test --script-shell=./pwn.sh`, and `--allow make` would run
//! `make SHELL=./x`. A rule for a runner trusts the project: its package.json scripts,
//! its Makefile, its tests. It should not trust an option that makes the runner load or
//! run something else: another shell, another makefile, a plugin module, another
//! project's directory. So when the command is one of the runners in [`table`] and a word
//! after the rule's own words is one of those options (in any spelling the runner
//! accepts), or for make a variable assignment, the rule does not match and the command
//! is asked about, as [`super::Policy::readonly_rules`] does for the readers.
//!
//! Unquoted patterns: the shell replaces `*` by file names after gate has decided, and a
//! file can be named `SHELL=./x` or `--script-shell=./x`. A pattern is therefore refused
//! unless the text before it holds a `/`, so that every name it becomes starts with a
//! directory (`tests/test_*.py`) and cannot be an option or an assignment.
//!
//! Pure: words in, a refusal out.

use std::fmt;

use super::readonly::{Word, split_words};

mod table;

pub use table::RUNNERS;
use table::{List, Refused, Runner, When};

/// Why an allow rule for a runner does not cover a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The runner, as its first words (`make`, `python3 -m pytest`).
    pub runner: String,
    /// The word that was refused, as the command has it.
    pub word: String,
    /// Why, completing "`WORD` …".
    pub why: String,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: `{}` {}", self.runner, self.word, self.why)
    }
}

/// Whether the allow rule `rule`, which matches `command` as text, covers it: `Err` when
/// the command is a runner's and a word after the rule's own words loads or runs other
/// code. Commands of other programs, and commands whose words cannot be read (an
/// unclosed quote, which the shell refuses as well), are covered.
pub fn check(rule: &str, command: &str) -> Result<(), Refusal> {
    let Some(words) = split_words(command) else {
        return Ok(());
    };
    let Some(runner) = RUNNERS.iter().find(|r| {
        r.command.len() <= words.len()
            && r.command
                .iter()
                .zip(&words)
                .all(|(name, word)| *name == word.text && !word.expands)
    }) else {
        return Ok(());
    };
    // The rule's own words are the user's: `--allow 'make -f ci.mk'` allows that file.
    let rule_words = split_words(rule).map_or(0, |w| w.len());
    let from = rule_words.max(runner.command.len());
    judge(runner, &words, from)
}

fn judge(runner: &Runner, words: &[Word], from: usize) -> Result<(), Refusal> {
    let name = runner.command.join(" ");
    let refuse = |word: &str, why: String| Refusal {
        runner: name.clone(),
        word: word.to_owned(),
        why,
    };
    let mut options_ended = false;
    let mut at = from;
    while let Some(word) = words.get(at) {
        at += 1;
        let text = word.text.as_str();
        if !options_ended && runner.stop == Some(text) {
            // The rest goes to the tests: the project's code.
            return Ok(());
        }
        if word.expands && !fixed_directory(text) {
            return Err(refuse(
                text,
                "is an unquoted pattern, which the shell replaces with file names after gate \
                 has decided; a file can be named like an option or an assignment"
                    .to_owned(),
            ));
        }
        if let (Some(why), true) = (runner.argument_files, text.starts_with('@')) {
            return Err(refuse(text, why.to_owned()));
        }
        if let (Some(why), true) = (
            runner.assignments,
            !text.starts_with('-') && text.contains('='),
        ) {
            return Err(refuse(text, why.to_owned()));
        }
        if !options_ended && text == "--" {
            options_ended = true;
            continue;
        }
        if text == "-" || !text.starts_with('-') {
            continue;
        }
        let lists = if options_ended {
            runner.after_dashes
        } else {
            runner.refused
        };
        let next = words.get(at).map(|w| w.text.as_str());
        if let Some((option, found, why)) = refused_option(runner, lists, text, next) {
            let why = if option == found {
                why.to_owned()
            } else {
                format!("is read as `{found}`, which {why}")
            };
            return Err(refuse(text, why));
        }
    }
    Ok(())
}

/// A pattern whose every expansion starts with a fixed directory: the text before its
/// first pattern character holds a `/`.
fn fixed_directory(text: &str) -> bool {
    let before = text
        .find(['*', '?', '[', '^', '#'])
        .map_or(text, |at| &text[..at]);
    // A leading `~` is the home directory's name, which starts with `/`.
    before.contains('/')
}

/// The refused option `word` is or holds, in the lists: the word (or its option part),
/// the refused name it stands for, and why. `next` is the word after it, the value of an
/// option that takes one when it is not attached.
fn refused_option(
    runner: &Runner,
    lists: &[&List],
    word: &str,
    next: Option<&str>,
) -> Option<(String, &'static str, &'static str)> {
    let syntax = &runner.syntax;
    let long = word.starts_with("--") || (syntax.single_dash_long && word.len() > 1);
    if long || !syntax.clusters {
        let (option, attached) = match word.split_once('=') {
            Some((option, value)) => (option, Some(value)),
            None => (word, None),
        };
        let value = attached.or(next);
        for list in lists {
            for refused in list.refused {
                for &name in refused.names {
                    if names_match(runner, list, option, name) && refuses(refused, value) {
                        return Some((option.to_owned(), name, refused.why));
                    }
                }
            }
        }
        return None;
    }
    // A cluster of short options.
    let cluster = &word[1..];
    for (at, c) in cluster.char_indices() {
        let rest = &cluster[at + c.len_utf8()..];
        let value = if rest.is_empty() { next } else { Some(rest) };
        for list in lists {
            for refused in list.refused {
                let short = refused
                    .names
                    .iter()
                    .find(|n| n.len() == 2 && n.starts_with('-') && n.ends_with(c));
                if let (Some(&name), true) = (short, refuses(refused, value)) {
                    return Some((format!("-{c}"), name, refused.why));
                }
            }
        }
        if syntax.short_values.contains(c) {
            break;
        }
    }
    None
}

/// Whether the option `option` as written is the refused `name`, in the runner's
/// spelling rules.
fn names_match(runner: &Runner, list: &List, option: &str, name: &str) -> bool {
    let loose = runner.syntax.loose_names;
    let (option, name) = if runner.syntax.single_dash_long {
        (option.trim_start_matches('-'), name.trim_start_matches('-'))
    } else {
        (option, name)
    };
    let (option, name) = (spelled(option, loose), spelled(name, loose));
    if option == name {
        return true;
    }
    // Only long names are abbreviated, and not to nothing (`--` alone ends the options).
    let written = option.trim_start_matches('-');
    list.prefixes
        && option.starts_with("--")
        && name.starts_with("--")
        && !written.is_empty()
        && name.trim_start_matches('-').starts_with(written)
        && !list
            .exact
            .iter()
            .any(|exact| spelled(exact, loose) == option)
}

/// A name as compared: with loose names, without case, `-` or `_` after its leading
/// dashes, and without what follows a `.`.
fn spelled(name: &str, loose: bool) -> String {
    if !loose {
        return name.to_owned();
    }
    let body = name.trim_start_matches('-');
    let dashes = &name[..name.len() - body.len()];
    let body = body.split('.').next().unwrap_or(body);
    let mut out = dashes.to_owned();
    out.extend(
        body.chars()
            .filter(|c| *c != '-' && *c != '_')
            .flat_map(char::to_lowercase),
    );
    out
}

fn refuses(refused: &Refused, value: Option<&str>) -> bool {
    match refused.when {
        When::Always => true,
        When::UnlessValueStarts(fine) => !value.is_some_and(|v| v.starts_with(fine)),
        When::ValueIsAFile => value.is_some_and(|v| v.contains('/') || v.ends_with(".json")),
    }
}

#[cfg(test)]
mod tests;
