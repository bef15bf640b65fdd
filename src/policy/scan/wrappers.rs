//! Peeling a wrapper off a command: skipping its options as getopt_long would (with every
//! reading an unclear option allows), its operands and assignments, and splitting the
//! string `env -S` takes into words.
//!
//! It knows no program by name: each wrapper's options are in [`super::wrapper_table`].

use super::wrapper_table::{WRAPPERS, WrapperSpec};
use super::{MAX_WRAPPER_READINGS, SimpleCommand, TooComplex, Word, is_assignment, program_name};

/// Whether a long option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Takes {
    /// `name=`: `--name=V` or `--name V`.
    Value,
    /// `name?`: only `--name=V`.
    Optional,
    /// `name`: never.
    Nothing,
}

fn entry(raw: &'static str) -> (&'static str, Takes) {
    if let Some(n) = raw.strip_suffix('=') {
        (n, Takes::Value)
    } else if let Some(n) = raw.strip_suffix('?') {
        (n, Takes::Optional)
    } else {
        (raw, Takes::Nothing)
    }
}

/// A long option as getopt_long reads it.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Resolved {
    /// An exact name, or a prefix of exactly one name, or of several that take a value
    /// the same way.
    One(&'static str, Takes),
    /// A prefix of several names that differ in taking a value: the real program
    /// refuses it as ambiguous (or, in a version with fewer options, takes one of them).
    Several(Vec<&'static str>),
    /// No name starts with it: the real program refuses it, unless it is a version with
    /// an option this table lacks.
    Unknown,
}

/// getopt_long's rule: an exact match wins; otherwise a unique prefix (`--chd` is
/// `--chdir`); a prefix of several is ambiguous.
pub(super) fn resolve_long(table: &'static [&'static str], opt: &str) -> Resolved {
    let entries = table.iter().map(|raw| entry(raw));
    if let Some((name, takes)) = entries.clone().find(|(n, _)| *n == opt) {
        return Resolved::One(name, takes);
    }
    if opt.is_empty() {
        return Resolved::Unknown;
    }
    let matching: Vec<(&'static str, Takes)> =
        entries.filter(|(n, _)| n.starts_with(opt)).collect();
    match matching.as_slice() {
        [] => Resolved::Unknown,
        [(name, takes), rest @ ..] if rest.iter().all(|(_, t)| t == takes) => {
            Resolved::One(name, *takes)
        }
        _ => Resolved::Several(matching.iter().map(|(n, _)| *n).collect()),
    }
}

/// One way of reading a wrapper's options: where its command starts, and the words
/// `env -S` put before it.
struct Reading {
    at: usize,
    prepend: SimpleCommand,
}

/// A command a wrapper may run, with the wrapper and its options removed.
pub(super) enum Unwrapped {
    /// The wrapper's words from this index on.
    Tail(usize),
    /// Words `env -S` split from a string, then the rest of the wrapper's words.
    New(SimpleCommand),
}

/// Every command a wrapper may run, with the wrapper and its options removed; empty
/// when the first word is not a known wrapper or it wraps nothing. An option whose
/// reading is not certain (an ambiguous or unknown long option) is read both ways.
pub(super) fn strip_wrapper(words: &[Word]) -> Result<Vec<Unwrapped>, TooComplex> {
    let name = program_name(&words[0].text);
    let Some(spec) = WRAPPERS.iter().find(|w| w.name == name) else {
        return Ok(Vec::new());
    };
    let mut todo = vec![Reading {
        at: 1,
        prepend: Vec::new(),
    }];
    let mut forms = Vec::new();
    let mut readings = 1usize;
    while let Some(reading) = todo.pop() {
        let (reading, other) = skip_options(spec, words, reading);
        if let Some(other) = other {
            readings += 1;
            if readings > MAX_WRAPPER_READINGS {
                return Err(TooComplex);
            }
            todo.push(other);
        }
        let Reading { at, prepend } = reading;
        // `env` and `sudo` take assignments before their command; they are skipped by
        // the caller.
        let at = at.min(words.len());
        let after = &words[at..];
        let assignments = if spec.name == "env" || spec.name == "sudo" {
            after.iter().take_while(|w| is_assignment(w)).count()
        } else {
            0
        };
        let from = (at + assignments + spec.operands).min(words.len());
        if prepend.is_empty() {
            if from < words.len() {
                forms.push(Unwrapped::Tail(from));
            }
        } else {
            let mut rest = prepend;
            rest.extend_from_slice(&words[from..]);
            forms.push(Unwrapped::New(rest));
        }
    }
    Ok(forms)
}

/// Skip the wrapper's options from `reading.at` on, up to its first operand. When an
/// option can be read two ways, the second reading is returned too, to be followed on
/// its own.
fn skip_options(
    spec: &WrapperSpec,
    words: &[Word],
    mut reading: Reading,
) -> (Reading, Option<Reading>) {
    let mut other = None;
    while reading.at < words.len() {
        let i = reading.at;
        let t = words[i].text.as_str();
        if t == "--" {
            reading.at += 1;
            break;
        }
        if let Some(long) = t.strip_prefix("--") {
            let (opt, inline) = match long.split_once('=') {
                Some((o, v)) => (o, Some(v)),
                None => (long, None),
            };
            let value_of =
                |w: &Word, text: &str| (text.to_owned(), w.dynamic, w.shown().to_owned());
            let (name, takes) = match resolve_long(spec.long, opt) {
                Resolved::One(name, takes) => (Some(name), Some(takes)),
                Resolved::Several(names) => {
                    // `--s` for env: `--split-string` or a flag. Read it both ways.
                    (names.iter().copied().find(|n| *n == "split-string"), None)
                }
                Resolved::Unknown => (None, None),
            };
            let value = match (takes, inline) {
                (_, Some(v)) => Some(value_of(&words[i], v)),
                (Some(Takes::Value), None) => {
                    reading.at += 1;
                    words.get(i + 1).map(|w| value_of(w, &w.text))
                }
                (Some(_), None) => None,
                (None, None) => {
                    // Not certain: also read it as taking the next word.
                    if other.is_none() && i + 1 < words.len() {
                        let mut prepend = reading.prepend.clone();
                        if name == Some("split-string") {
                            let w = &words[i + 1];
                            prepend.extend(env_split(&w.text, w.dynamic, w.shown()));
                        }
                        other = Some(Reading { at: i + 2, prepend });
                    }
                    None
                }
            };
            if spec.name == "env" && name == Some("split-string") {
                if let Some((text, dynamic, shown)) = value {
                    reading.prepend.extend(env_split(&text, dynamic, &shown));
                }
            }
            reading.at += 1;
            continue;
        }
        if t.len() > 1 && t.starts_with('-') {
            if spec.numeric_options && t[1..].bytes().all(|b| b.is_ascii_digit()) {
                reading.at += 1;
                continue;
            }
            let cluster = &t[1..];
            let mut consumed_next = false;
            for (pos, c) in cluster.char_indices() {
                if spec.short_optional.contains(c) {
                    // The rest of the cluster, if any, is its value.
                    break;
                }
                if spec.short_with_value.contains(c) {
                    let attached = &cluster[pos + c.len_utf8()..];
                    let value = if attached.is_empty() {
                        consumed_next = true;
                        words
                            .get(i + 1)
                            .map(|w| (w.text.clone(), w.dynamic, w.shown().to_owned()))
                    } else {
                        Some((
                            attached.to_owned(),
                            words[i].dynamic,
                            words[i].shown().to_owned(),
                        ))
                    };
                    if spec.name == "env" && c == 'S' {
                        if let Some((text, dynamic, shown)) = value {
                            reading.prepend.extend(env_split(&text, dynamic, &shown));
                        }
                    }
                    break;
                }
            }
            reading.at += if consumed_next { 2 } else { 1 };
            continue;
        }
        if spec.name == "env" && t == "-" {
            reading.at += 1;
            continue;
        }
        break;
    }
    (reading, other)
}

/// The words GNU `env -S` splits a string into: blanks separate them, `'…'` and `"…"`
/// quote, `\_` separates (a space inside double quotes), `\c` ends the string, `#`
/// starts a comment at the start of a word, `${NAME}` is a variable (computed). When
/// part of the string is computed at run time, a computed word ends the list: it may
/// stand for anything from there on.
fn env_split(text: &str, dynamic: bool, shown: &str) -> SimpleCommand {
    let mut words: SimpleCommand = Vec::new();
    let mut word = String::new();
    let mut started = false;
    let mut computed = dynamic;
    let chars: Vec<char> = text.chars().collect();
    let mut quote: Option<char> = None;
    let mut i = 0;
    let push = |words: &mut SimpleCommand, word: &mut String, started: &mut bool| {
        if *started {
            words.push(Word {
                text: std::mem::take(word),
                dynamic: false,
                source: None,
                pattern: None,
            });
            *started = false;
        }
    };
    while i < chars.len() {
        let c = chars[i];
        match (quote, c) {
            (None, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r') => {
                push(&mut words, &mut word, &mut started)
            }
            (None, '#') if !started => break,
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (Some(q), _) if c == q => quote = None,
            (Some('\''), '\\') if matches!(chars.get(i + 1), Some('\\' | '\'')) => {
                word.push(chars[i + 1]);
                i += 1;
            }
            (Some('\''), _) => word.push(c),
            (_, '\\') => {
                i += 1;
                match chars.get(i) {
                    Some('_') if quote.is_none() => push(&mut words, &mut word, &mut started),
                    Some('_') => word.push(' '),
                    Some('c') => break,
                    Some('n') => word.push('\n'),
                    Some('t') => word.push('\t'),
                    Some('r') => word.push('\r'),
                    Some('f') => word.push('\x0c'),
                    Some('v') => word.push('\x0b'),
                    Some(&other) => {
                        word.push(other);
                        started = true;
                    }
                    None => {}
                }
                if chars.get(i) != Some(&'_') {
                    started = true;
                }
            }
            (_, '$') if chars.get(i + 1) == Some(&'{') => {
                // `${NAME}`: the variable's value, known only when env runs.
                computed = true;
                break;
            }
            _ => {
                word.push(c);
                started = true;
            }
        }
        i += 1;
    }
    push(&mut words, &mut word, &mut started);
    if computed {
        words.push(Word::computed(String::new(), shown.to_owned()));
    }
    words
}
