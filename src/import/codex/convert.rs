//! One Codex rule into gate rules: its alternatives expanded, its words written as
//! rule text, each allow rule kept only where gate matches a subset of what Codex
//! matched, each deny or ask rule kept whole or broadened (never narrowed), and the
//! rule's examples checked with gate's matcher.

use std::collections::BTreeMap;
use std::path::Path;

use super::words::{self, RuleWord, Unwritable};
use super::{CodexRule, MAX_EXPANSION, Pattern};
use crate::import::{Entry, Expect, GateRule, ImportError, Outcome, RuleKind, Scope, Source};
use crate::policy::Alone;

/// What one choice of alternatives became.
enum Piece {
    Written {
        text: String,
        /// Set when the rule matches fewer commands (allow) or more (deny, ask) than
        /// Codex's, with what changed.
        changed: Option<String>,
    },
    Dropped(String),
}

/// The paths `host_executable` lets stand for each program it names.
pub(super) type Hosts = BTreeMap<String, Vec<String>>;

/// What the other files say about one file's rules.
pub(super) struct Context<'a> {
    /// Codex does not use the file's rules (`ignore_rules`): its allow rules are dropped.
    pub drop_allows: bool,
    pub hosts: &'a Hosts,
}

/// The entries one Codex rule makes.
pub(super) fn entries(
    rule: &CodexRule,
    path: &Path,
    scope: Scope,
    cx: &Context<'_>,
) -> Result<Vec<Entry>, ImportError> {
    let error = |why: String| ImportError {
        path: path.to_owned(),
        line: Some(rule.line),
        why,
    };
    let kind = rule.decision.kind();
    let count = rule
        .pattern
        .iter()
        .try_fold(1usize, |n, alts| n.checked_mul(alts.len()))
        .filter(|&n| n <= MAX_EXPANSION)
        .ok_or_else(|| {
            error(format!(
                "its alternatives make more than {MAX_EXPANSION} gate rules; split it into \
                 several rules"
            ))
        })?;
    let mut pieces: Vec<Piece> = Vec::with_capacity(count);
    for argv in expand(&rule.pattern) {
        let piece = if kind == RuleKind::Allow {
            if cx.drop_allows {
                Piece::Dropped(
                    "Codex's requirements.toml sets ignore_rules, so Codex does not use this \
                     file's rules"
                        .into(),
                )
            } else {
                allow_piece(&argv, rule.canonical)
            }
        } else {
            let piece = refusing_piece(kind, &argv, rule.canonical).map_err(error)?;
            at_any_path(piece, kind, &argv[0], cx.hosts)
        };
        pieces.push(piece);
    }
    check_examples(rule, kind, &pieces).map_err(error)?;

    let source = Source {
        path: path.to_owned(),
        line: rule.line,
        text: rule.text.clone(),
    };
    let mut entries: Vec<Entry> = Vec::new();
    for piece in pieces {
        let outcome = match piece {
            Piece::Dropped(why) => Outcome::Dropped { why },
            Piece::Written { text, changed } => {
                if entries
                    .iter()
                    .any(|e| written_text(&e.outcome) == Some(&text))
                {
                    continue;
                }
                let gate = GateRule {
                    kind,
                    examples: rule_examples(rule, kind, &text),
                    text,
                    exact: false,
                };
                match (changed, kind) {
                    (None, _) => Outcome::Imported(gate),
                    (Some(why), RuleKind::Allow) => Outcome::Narrowed { rule: gate, why },
                    (Some(why), _) => Outcome::Broadened { rule: gate, why },
                }
            }
        };
        entries.push(Entry {
            source: source.clone(),
            scope,
            said: kind,
            outcome,
        });
    }
    Ok(entries)
}

pub(super) fn written_text(outcome: &Outcome) -> Option<&String> {
    match outcome {
        Outcome::Imported(r)
        | Outcome::Narrowed { rule: r, .. }
        | Outcome::Broadened { rule: r, .. }
        | Outcome::Asked { rule: r, .. } => Some(&r.text),
        Outcome::Dropped { .. } => None,
    }
}

/// Every choice of one word from each position, in the order written.
fn expand(pattern: &Pattern) -> Vec<Vec<String>> {
    pattern.iter().fold(vec![Vec::new()], |acc, alts| {
        acc.iter()
            .flat_map(|prefix| {
                alts.iter().map(move |w| {
                    let mut next = prefix.clone();
                    next.push(w.clone());
                    next
                })
            })
            .collect()
    })
}

/// Whether Codex's canonical matching could match `word` in another spelling: it has
/// letters with case, or characters beyond ASCII (Codex also compares Unicode
/// compositions alike: `e` with a combining accent matches `é`).
fn has_other_forms(word: &str) -> bool {
    !word.is_ascii() || word.to_lowercase() != word.to_uppercase()
}

/// An allow rule: written when gate can match a subset of what Codex matched, dropped
/// otherwise (gate then asks, at `ask`, about what Codex allowed).
fn allow_piece(argv: &[String], canonical: bool) -> Piece {
    let mut spelled = Vec::new();
    let mut quoted = Vec::new();
    for (i, word) in argv.iter().enumerate() {
        match words::rule_word(word, i == 0) {
            Ok(RuleWord::Plain(w)) => spelled.push(w),
            Ok(RuleWord::Quoted(w)) => {
                quoted.push(w.clone());
                spelled.push(w);
            }
            Err(Unwritable(c)) => {
                return Piece::Dropped(format!(
                    "the word {} holds the {}, which a gate rule cannot hold; `{}` is asked \
                     about instead",
                    words::command_word(word, false),
                    crate::policy::describe_char(c),
                    words::command(argv)
                ));
            }
        }
    }
    let text = spelled.join(" ");
    match Alone::new(RuleKind::Allow, &text) {
        Ok(alone) if alone.matches(&text) => {}
        Ok(_) => {
            return Piece::Dropped(format!(
                "gate's allow rule `{text}` would not match the command itself (gate \
                 refuses it as a prefix: docs/rules.md)"
            ));
        }
        Err(e) => return Piece::Dropped(format!("gate cannot take `{text}` as a rule: {e}")),
    }
    let mut changes = Vec::new();
    if !quoted.is_empty() {
        changes.push(format!(
            "gate compares the quoted {} {} as written, so other spellings of the same words \
             are asked about",
            if quoted.len() == 1 { "word" } else { "words" },
            quoted.join(" ")
        ));
    }
    if canonical && argv.iter().any(|w| has_other_forms(w)) {
        changes.push(
            "Codex matched these words in any capitalisation and Unicode composition \
             (canonical_matching); gate matches them as written"
                .into(),
        );
    }
    Piece::Written {
        text,
        changed: (!changes.is_empty()).then(|| changes.join("; ")),
    }
}

/// A deny or ask rule: the pattern's words as a rule, or the longest prefix of them gate
/// can write and that still matches the whole command Codex matched. Never narrower.
fn refusing_piece(kind: RuleKind, argv: &[String], canonical: bool) -> Result<Piece, String> {
    let full = words::command(argv);
    // How far the words can be written at all.
    let mut spelled = Vec::new();
    let mut stop = None;
    for (i, word) in argv.iter().enumerate() {
        if canonical && has_other_forms(word) {
            stop = Some(format!(
                "Codex matches {} in any capitalisation and Unicode composition \
                 (canonical_matching), and gate's rules compare words as written",
                words::command_word(word, false)
            ));
            break;
        }
        match words::rule_word(word, i == 0) {
            Ok(RuleWord::Plain(w) | RuleWord::Quoted(w)) => spelled.push(w),
            Err(Unwritable(c)) => {
                stop = Some(format!(
                    "the word {} holds the {}, which a gate rule cannot hold",
                    words::command_word(word, false),
                    crate::policy::describe_char(c)
                ));
                break;
            }
        }
    }
    let what = if kind == RuleKind::Deny {
        "refuses"
    } else {
        "asks about"
    };
    for len in (1..=spelled.len()).rev() {
        let text = spelled[..len].join(" ");
        let Ok(alone) = Alone::new(kind, &text) else {
            continue;
        };
        if !alone.matches(&full) || !alone.matches(&format!("{full} x")) {
            continue;
        }
        let changed = if len == argv.len() {
            None
        } else {
            Some(format!(
                "{}; gate {what} every `{text}` command instead",
                stop.clone().unwrap_or_else(|| format!(
                    "gate's rule `{}` would not match `{full}` itself",
                    spelled.join(" ")
                ))
            ))
        };
        return Ok(Piece::Written { text, changed });
    }
    Err(format!(
        "this {} rule cannot be imported without narrowing it: {}; a gate rule of its first \
         word would not do either. Rewrite it in gate's own configuration (docs/rules.md)",
        if kind == RuleKind::Deny {
            "forbidden"
        } else {
            "prompt"
        },
        stop.unwrap_or_else(|| format!("gate's deny matcher does not match `{full}`"))
    ))
}

/// A deny or ask rule for a program `host_executable` ties to some paths: Codex's rule
/// holds only for those, gate's for the program at any path, which the table says.
fn at_any_path(piece: Piece, kind: RuleKind, program: &str, hosts: &Hosts) -> Piece {
    let (Piece::Written { text, changed }, Some(paths)) = (&piece, hosts.get(program)) else {
        return piece;
    };
    let what = if kind == RuleKind::Deny {
        "refuses"
    } else {
        "asks about"
    };
    let listed = if paths.is_empty() {
        "none".to_owned()
    } else {
        paths.join(", ")
    };
    let note = format!(
        "gate {what} `{program}` at any path; Codex only by its name and at the paths its \
         host_executable lists ({listed})"
    );
    Piece::Written {
        text: text.clone(),
        changed: Some(match changed {
            Some(why) => format!("{why}; {note}"),
            None => note,
        }),
    }
}

/// Codex's examples, checked against the rules written for this Codex rule as Codex
/// checks them against its own: each `match` example matched by at least one, each
/// `not_match` example by none. An example only a dropped allow rule covered is not
/// checked (nothing of that rule is imported).
fn check_examples(rule: &CodexRule, kind: RuleKind, pieces: &[Piece]) -> Result<(), String> {
    let written: Vec<(&str, Alone)> = pieces
        .iter()
        .filter_map(|p| match p {
            Piece::Written { text, .. } => Some(text.as_str()),
            Piece::Dropped(_) => None,
        })
        .map(|text| {
            Alone::new(kind, text)
                .map(|a| (text, a))
                .map_err(|e| format!("gate refuses its own rule `{text}`: {e}"))
        })
        .collect::<Result<_, _>>()?;
    let some_dropped = written.len() < pieces.len();
    for example in &rule.matches {
        let command = words::command(example);
        if !some_dropped && !written.iter().any(|(_, a)| a.matches(&command)) {
            return Err(format!(
                "its `match` example `{command}` is not matched by gate's rule {}, so gate would \
                 not do what the rule's author checked Codex does",
                shown_rules(&written)
            ));
        }
    }
    for example in &rule.not_matches {
        let command = words::command(example);
        if let Some((text, _)) = written.iter().find(|(_, a)| a.matches(&command)) {
            return Err(format!(
                "its `not_match` example `{command}` is matched by gate's rule `{text}`{}",
                if kind == RuleKind::Allow {
                    ""
                } else {
                    " (gate's deny and ask rules match options in any order and position, and \
                     the program at any path)"
                }
            ));
        }
    }
    Ok(())
}

fn shown_rules(written: &[(&str, Alone)]) -> String {
    written
        .iter()
        .map(|(t, _)| format!("`{t}`"))
        .collect::<Vec<_>>()
        .join(" or ")
}

/// The examples a written rule carries: every `not_match` one, and the `match` ones it
/// matches itself (another alternative's rule matches the others).
fn rule_examples(rule: &CodexRule, kind: RuleKind, text: &str) -> Vec<(String, Expect)> {
    let Ok(alone) = Alone::new(kind, text) else {
        return Vec::new();
    };
    let mut out: Vec<(String, Expect)> = Vec::new();
    for example in &rule.matches {
        let command = words::command(example);
        if alone.matches(&command) {
            out.push((command, Expect::Match));
        }
    }
    for example in &rule.not_matches {
        out.push((words::command(example), Expect::NotMatch));
    }
    out
}
