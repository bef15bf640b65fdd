//! The deny-rule scanner, `DenyRules::find`.
//!
//! Input: bytes. Before the first NUL: up to 8 deny rules, one per line; after it: the
//! command, any bytes. (No NUL: the rule `rm` and the whole input as the command.)
//!
//! 1. `find` never panics (libFuzzer also reports a hang) and is deterministic: the same
//!    rules added again give the same answer for the same command.
//! 2. Deny rules hold (issue 5, item 5): a rule built from the first bytes of the input,
//!    of plain words, is caught in every hiding place of [`HIDING_PLACES`]: after
//!    `VAR=value`, behind `env`, `nohup`, `timeout N`, `nice`, `command`, `exec`, `sudo`,
//!    in any part of a compound, in a substitution, with repeated spaces or tabs.

use gate::policy::{CommandText, DenyMatch, DenyRules, Origin};

/// Where a denied command must still be found; `{}` is the rule's text.
pub const HIDING_PLACES: &[&str] = &[
    "{}",
    "FOO=1 {}",
    "FOO=1 BAR='a b' {}",
    "env {}",
    "env -i A=1 {}",
    "/usr/bin/env {}",
    "nohup {}",
    "timeout 5 {}",
    "timeout -s KILL 5 {}",
    "nice {}",
    "nice -n 5 {}",
    "command {}",
    "command -p {}",
    "exec {}",
    "sudo {}",
    "sudo -u root {}",
    "nohup nice -n 1 timeout 9 env A=1 {}",
    "ls; {}",
    "ls && {}",
    "false || {}",
    "ls | {}",
    "{} | ls",
    "ls & {}",
    "ls\n{}",
    "echo $({})",
    "echo `{}`",
    "echo \"$({})\"",
    "x=$({})",
    "cat <({})",
    "( {} )",
    "{ {}; }",
    "if true; then {}; fi",
    "bash -c '{}'",
    "sh -c \"{}\"",
    "eval '{}'",
    "  {}  ",
    "\t{}\t",
];

/// First words that change how the rest of a hiding place parses (reserved words,
/// wrappers, shells): a rule that starts with one is not used for property 2.
#[rustfmt::skip]
const SPECIAL_FIRST_WORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until",
    "for", "in", "select", "function", "time", "coproc", "exec", "command", "builtin",
    "eval", "source", "env", "nohup", "nice", "timeout", "sudo", "doas", "xargs", "stdbuf",
    "setsid", "ionice", "taskset", "chroot", "strace", "ltrace", "busybox", "watch",
    "repeat", "nocorrect", "noglob", "unbuffer", "bash", "sh", "zsh", "dash", "ksh",
    "mksh", "ash", "yash", "fish", "su", "runuser", "flock", "find", "alias", "set",
    "shopt", "declare", "typeset", "local", "export", "readonly", "let", "trap", "true",
    "false", "test", "echo", "ls", "cat", "x", "select", "wait", "foreach", "end",
];

pub fn check(data: &[u8]) {
    robust_and_deterministic(data);
    if let Some(rule) = plain_rule(data) {
        rule_holds_everywhere(&rule, data);
    }
}

fn robust_and_deterministic(data: &[u8]) {
    let (rules, command) = match data.iter().position(|&b| b == 0) {
        Some(at) => (
            String::from_utf8_lossy(&data[..at]).into_owned(),
            &data[at + 1..],
        ),
        None => ("rm".to_owned(), data),
    };
    let build = || {
        let mut deny = DenyRules::new();
        for rule in rules.lines().take(8) {
            let _ = deny.add(rule, Origin::Flag("--deny"));
        }
        deny
    };
    let (first, second) = (build(), build());
    let text = CommandText::from_bytes(command);
    let found = first.find(&text);
    assert_eq!(
        first.find(&text),
        found,
        "DenyRules::find is not deterministic for {text:?}"
    );
    assert_eq!(
        second.find(&text),
        found,
        "the same rules, added again, decide {text:?} differently"
    );
}

/// A rule of one to three plain words, from the input's first bytes: the first word of
/// letters, the others of letters, digits and `.-_/`.
fn plain_rule(data: &[u8]) -> Option<String> {
    const FIRST: &[u8] = b"abcdefghijklmnopqrstuvwxyz";
    const OTHER: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789.-_/";
    let mut words: Vec<String> = vec![String::new()];
    for &b in data.iter().take(24) {
        if b % 9 == 0 {
            if words.len() == 3 {
                break;
            }
            if !words.last().is_some_and(String::is_empty) {
                words.push(String::new());
            }
            continue;
        }
        let alphabet = if words.len() == 1 { FIRST } else { OTHER };
        let word = words.last_mut()?;
        word.push(char::from(alphabet[usize::from(b) % alphabet.len()]));
    }
    words.retain(|w| !w.is_empty());
    let first = words.first()?;
    if SPECIAL_FIRST_WORDS.contains(&first.as_str()) {
        return None;
    }
    Some(words.join(" "))
}

/// The rule as written must be caught in every hiding place; the other spellings (blanks
/// doubled, tabs, a path) in a few places that the input's bytes pick, which keeps a run
/// fast enough to fuzz.
fn rule_holds_everywhere(rule: &str, data: &[u8]) {
    let mut deny = DenyRules::new();
    deny.add(rule, Origin::Flag("--deny"))
        .unwrap_or_else(|e| panic!("a plain rule {rule:?} was refused: {e}"));
    let caught = |command: &str| {
        matches!(
            deny.find(&CommandText::new(command)),
            Some(DenyMatch::Rule { .. })
        )
    };
    let mut spellings = vec![
        rule.to_owned(),
        rule.replace(' ', "  "),
        rule.replace(' ', "\t"),
    ];
    if !rule.split(' ').next().unwrap_or_default().contains('/') {
        spellings.push(format!("/usr/bin/{rule}"));
    }
    let mut picks = data
        .iter()
        .rev()
        .map(|&b| usize::from(b) % HIDING_PLACES.len());
    for (i, spelling) in spellings.iter().enumerate() {
        let places: Vec<&str> = if i == 0 {
            HIDING_PLACES.to_vec()
        } else {
            (0..3)
                .map(|_| HIDING_PLACES[picks.next().unwrap_or(i)])
                .collect()
        };
        for place in places {
            let command = place.replace("{}", spelling);
            assert!(
                caught(&command),
                "the deny rule {rule:?} does not catch {command:?}"
            );
        }
    }
    // A rule written with extra blanks is the same rule.
    let mut spaced = DenyRules::new();
    spaced
        .add(
            &format!(" {}\t", rule.replace(' ', " \t ")),
            Origin::Flag("--deny"),
        )
        .unwrap_or_else(|e| panic!("a spaced rule was refused: {e}"));
    assert!(
        matches!(
            spaced.find(&CommandText::new(rule)),
            Some(DenyMatch::Rule { .. })
        ),
        "the deny rule {rule:?} written with extra blanks does not catch {rule:?}"
    );
}
