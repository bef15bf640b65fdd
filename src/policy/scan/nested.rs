//! Commands hidden inside another command's words: the command strings a shell (`bash -c`),
//! `eval`, `su -c`, `runuser -c`, `flock -c` and `watch` hand to a shell, and the command
//! `find -exec` runs.
//!
//! It finds the text; reading it is the lexer's work, again.

use super::wrapper_table::{FLOCK_LONG, SU_LONG};
use super::wrappers::{Resolved, Unwrapped, resolve_long, strip_wrapper};
use super::{SimpleCommand, TooComplex, Word, program_name};
use crate::shells::{self, ANY_SHELL, Quoting};

/// A command string handed to another shell, and whether part of it is computed at run
/// time.
pub(super) struct NestedText {
    pub(super) text: String,
    pub(super) dynamic: bool,
    /// How the words it came from are shown ([`Word::shown`]).
    pub(super) shown: String,
    /// The readings of the shell that reads it ([`shells::Dialect::readings`]);
    /// `None` for the shell that read the text it came from (`eval`).
    pub(super) readings: Option<&'static [Quoting]>,
}

impl NestedText {
    /// The word, for a shell that reads it with `readings`.
    fn of(word: &Word, readings: &'static [Quoting]) -> NestedText {
        NestedText {
            text: word.text.clone(),
            dynamic: word.dynamic,
            shown: word.shown().to_owned(),
            readings: Some(readings),
        }
    }

    /// Words joined with spaces, as `eval` and `watch` join them, for a shell that
    /// reads them with `readings` (`None`: the same shell, as for `eval`).
    fn joined(words: &[Word], readings: Option<&'static [Quoting]>) -> NestedText {
        let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
        let shown: Vec<&str> = words.iter().map(Word::shown).collect();
        NestedText {
            text: texts.join(" "),
            // A glob may become other words before the string is read again.
            dynamic: words.iter().any(|w| w.dynamic || w.pattern.is_some()),
            shown: shown.join(" "),
            readings,
        }
    }
}

/// The command strings that a word list hands to another shell: `bash -c STR`,
/// `eval ARGS…`, `su -c STR`, `flock … -c STR`, `watch … ARGS…`.
pub(super) fn nested_shell_text(words: &[Word]) -> Result<Vec<NestedText>, TooComplex> {
    let name = program_name(&words[0].text);
    let args = &words[1..];
    let mut found = Vec::new();
    match name {
        "eval" => {
            // `eval -- ARGS`: bash's eval takes `--` before its arguments.
            let args = match args.first() {
                Some(w) if w.text == "--" && !w.dynamic => &args[1..],
                _ => args,
            };
            if !args.is_empty() {
                found.push(NestedText::joined(args, None));
            }
        }
        // `watch` hands its arguments, joined with spaces, to `sh -c` (unless `-x`,
        // which the wrapper reading covers).
        "watch" => {
            for rest in strip_wrapper(words)? {
                match rest {
                    Unwrapped::Tail(at) => {
                        found.push(NestedText::joined(&words[at..], Some(ANY_SHELL)))
                    }
                    Unwrapped::New(rest) => found.push(NestedText::joined(&rest, Some(ANY_SHELL))),
                }
            }
        }
        _ if shells::named(name).is_some() => {
            let shell = shells::named(name).expect("checked");
            // Where the command strings are, as this shell reads its options
            // (`bash -c -e -- 'CMD'`, `bash -co errexit 'CMD'`, `zsh -oerrexit -c 'CMD'`,
            // `fish -C 'CMD'`); the table is the shell's own ([`shells`]).
            let computed = |i: usize| args[i].dynamic || args[i].pattern.is_some();
            for at in shells::command_strings(shell.options, args, computed) {
                let word = &args[at.word];
                let mut text = NestedText::of(word, shell.dialect.readings());
                if at.from > 0 {
                    text.text = word.text.get(at.from..).unwrap_or_default().to_owned();
                }
                found.push(text);
            }
        }
        "su" | "flock" | "runuser" => {
            // The argument after an option cluster containing `c` (`-c`, `-lc`, `-ec`…),
            // or after `--command` / `--session-command`, abbreviated or not.
            let mut want_next = false;
            for word in args {
                if want_next {
                    // su and runuser hand it to the user's shell, flock to `sh`.
                    found.push(NestedText::of(word, ANY_SHELL));
                    want_next = false;
                    continue;
                }
                let t = word.text.as_str();
                if let Some(long) = t.strip_prefix("--") {
                    let (opt, inline) = match long.split_once('=') {
                        Some((o, v)) => (o, Some(v)),
                        None => (long, None),
                    };
                    let table = if name == "flock" { FLOCK_LONG } else { SU_LONG };
                    let may_be_command = match resolve_long(table, opt) {
                        Resolved::One(n, _) => {
                            n.starts_with("command") || n.starts_with("session-command")
                        }
                        Resolved::Several(names) => names
                            .iter()
                            .any(|n| n.starts_with("command") || n.starts_with("session-command")),
                        Resolved::Unknown => false,
                    };
                    if may_be_command {
                        match inline {
                            Some(cmd) => found.push(NestedText {
                                text: cmd.to_owned(),
                                dynamic: word.dynamic,
                                shown: word.shown().to_owned(),
                                readings: Some(ANY_SHELL),
                            }),
                            None => want_next = true,
                        }
                    }
                } else if t.starts_with('-') && t[1..].contains('c') {
                    want_next = true;
                }
            }
        }
        _ => {}
    }
    Ok(found)
}

/// Commands that run their arguments as another command outside the wrapper pattern:
/// `find … -exec CMD … ;`.
pub(super) fn exec_like_tails(words: &[Word]) -> Vec<SimpleCommand> {
    let mut tails = Vec::new();
    if program_name(&words[0].text) == "find" {
        let mut i = 1;
        while i < words.len() {
            if matches!(
                words[i].text.as_str(),
                "-exec" | "-execdir" | "-ok" | "-okdir"
            ) {
                let tail: SimpleCommand = words[i + 1..]
                    .iter()
                    .take_while(|w| w.text != ";" && w.text != "+")
                    .cloned()
                    .collect();
                i += tail.len() + 1;
                if !tail.is_empty() {
                    tails.push(tail);
                }
            }
            i += 1;
        }
    }
    tails
}
