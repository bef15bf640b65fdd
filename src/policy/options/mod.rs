//! Options in any order and spelling: the words after a program, read the way the program
//! reads them ([`table`]), for deny rules.
//!
//! A deny rule's words after the program are split into operands (subcommands, paths:
//! compared in order, as a prefix of the command's operands) and options (a set: each
//! must be among the command's options before `--`, in any spelling the table gives, in a
//! cluster or alone, before or after the operands). [`Reader`] reads the rule and every
//! command the same way, so what the rule says and what the command does are compared
//! option by option.
//!
//! Where a word's role is unclear (an option the table does not know, followed by a word
//! that may be its value or an operand), both readings are kept: a deny rule matches if
//! either would. Words known only at run time and globs keep their meaning from
//! [`super::deny`]: a computed word may be anything from there on, and a glob may be
//! any words it could match, options among them.

mod table;
#[cfg(test)]
mod tests;

use self::table::{Opt, Program, Style, Subcommand, Takes};
use super::scan::{self, Word};

/// A rule needs at most this many operands and options to match; past that, the rest
/// are ignored, which makes such a rule match more, never less.
const MAX_OPERANDS: usize = 63;
const MAX_OPTIONS: usize = 64;

/// One word after the program.
#[derive(Debug, Clone, Copy)]
pub struct Arg<'a> {
    pub text: &'a [u8],
    /// Known only when the shell runs: it may become any words.
    pub computed: bool,
    /// An unquoted glob, as a pattern ([`scan::glob_matches`]).
    pub glob: Option<&'a str>,
}

impl<'a> Arg<'a> {
    pub fn literal(text: &'a [u8]) -> Self {
        Arg {
            text,
            computed: false,
            glob: None,
        }
    }

    pub fn of_word(word: &'a Word) -> Self {
        Arg {
            text: word.text.as_bytes(),
            computed: word.dynamic,
            glob: word.pattern.as_deref(),
        }
    }

    fn with_text(self, text: &'a [u8]) -> Self {
        Arg { text, ..self }
    }

    /// A word getopt could read as an option (not `-` alone).
    fn looks_like_option(&self) -> bool {
        self.text.len() > 1 && self.text[0] == b'-'
    }
}

/// What a word (or a letter of a cluster) is to the program.
#[derive(Debug, Clone, Copy)]
pub enum Item<'a> {
    /// An operand. `maybe`: it may instead be the value of the unknown option before it.
    Operand { arg: Arg<'a>, maybe: bool },
    Option {
        key: Key<'a>,
        value: Option<Arg<'a>>,
        /// The value is the option's for sure; otherwise it is also read as an operand.
        certain: bool,
        /// The word the option was read from (`-rf` for both `r` and `f`).
        word: &'a [u8],
    },
    /// A glob where options may still come: it may stand for options and operands.
    Glob(Arg<'a>),
    /// A word known only at run time: from here on, anything.
    Computed,
}

/// An option as the program knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key<'a> {
    /// An option of the table, by the canonical names of what it means.
    Known(&'static [&'static str]),
    /// A short option the table does not have, by its letter (a byte).
    Short(u8),
    /// A long option the table does not have, or a prefix of several it has, without
    /// its dashes.
    Long(&'a [u8]),
}

/// Where the reader is in the command.
#[derive(Debug, Clone, Copy)]
enum Place {
    /// Before the first operand: the program's own options.
    Program,
    /// After a subcommand (`None`: one the table does not have).
    Subcommand(Option<&'static Subcommand>),
}

/// Reads the words after a program as that program would: [`Item`]s, one per operand
/// and one per option (a cluster gives several).
pub(crate) struct Reader<'a, I: Iterator<Item = Arg<'a>>> {
    program: &'static Program,
    args: std::iter::Peekable<I>,
    place: Place,
    /// After `--`: only operands.
    operands_only: bool,
    /// The rest of a short-option cluster: the word and the next letter's index.
    cluster: Option<(&'a [u8], usize)>,
    /// An operand taken as an option's possible value, still to be read as an operand.
    pending: Option<Arg<'a>>,
    /// An item to give before anything else.
    queued: Option<Item<'a>>,
}

impl<'a, I: Iterator<Item = Arg<'a>>> Reader<'a, I> {
    pub fn new(program: &'static Program, args: I) -> Self {
        Reader {
            program,
            args: args.peekable(),
            place: Place::Program,
            operands_only: false,
            cluster: None,
            pending: None,
            queued: None,
        }
    }

    /// The options in force: the subcommand's (or the program's before it), and the
    /// program's after it when it reads them anywhere.
    fn tables(&self) -> [&'static [Opt]; 2] {
        match self.place {
            Place::Program => [self.program.options, &[]],
            Place::Subcommand(sub) => [
                sub.map_or(&[][..], |s| s.options),
                if self.program.options_anywhere {
                    self.program.options
                } else {
                    &[]
                },
            ],
        }
    }

    fn short(&self, letter: u8) -> Option<&'static Opt> {
        self.tables().into_iter().flatten().find(|o| {
            o.names
                .iter()
                .any(|n| n.len() == 2 && n.as_bytes() == [b'-', letter])
        })
    }

    /// A long option by name (without dashes): exact, or, where the program allows it, a
    /// unique prefix. `None` when unknown or ambiguous.
    fn long(&self, name: &[u8]) -> Option<&'static Opt> {
        let style = self.program.style;
        let tables = self.tables().into_iter().flatten();
        if let Some(exact) = tables
            .clone()
            .find(|o| o.names.iter().any(|n| long_part(style, n) == Some(name)))
        {
            return Some(exact);
        }
        if !allows_prefixes(style) || name.is_empty() {
            return None;
        }
        let mut found = tables.filter(|o| {
            o.names
                .iter()
                .any(|n| long_part(style, n).is_some_and(|l| l.starts_with(name)))
        });
        match (found.next(), found.next()) {
            (Some(one), None) => Some(one),
            _ => None,
        }
    }

    /// The next word, unless it is known only at run time (that one is left for
    /// [`Iterator::next`] to give as [`Item::Computed`]).
    fn next_known(&mut self) -> Option<Arg<'a>> {
        self.args.next_if(|a| !a.computed)
    }

    /// An option's value from the next word(s), as its entry says.
    fn value_after(&mut self, takes: Takes) -> Option<Arg<'a>> {
        match takes {
            Takes::Nothing | Takes::Optional => None,
            Takes::Value => self.next_known(),
            Takes::Two => {
                let first = self.next_known();
                self.next_known();
                first
            }
            Takes::Command => {
                let first = self.next_known()?;
                let mut previous = first.text;
                while let Some(word) = self.next_known() {
                    if word.text == b";" || (word.text == b"+" && previous == b"{}") {
                        break;
                    }
                    previous = word.text;
                }
                Some(first)
            }
        }
    }

    /// An option the table does not have, without an attached value: the next word may
    /// be its value or an operand, so it is read as both.
    fn unknown(&mut self, key: Key<'a>, word: &'a [u8]) -> Item<'a> {
        let value = self
            .args
            .next_if(|a| !a.computed && a.glob.is_none() && !a.looks_like_option());
        self.pending = value;
        Item::Option {
            key,
            value,
            certain: false,
            word,
        }
    }

    /// `--name`, `--name=value` (or `-name` for single-dash programs).
    fn long_option(&mut self, word: &'a [u8], name: &'a [u8]) -> Item<'a> {
        let (name, attached) = match name.iter().position(|&b| b == b'=') {
            Some(at) => (&name[..at], Some(&name[at + 1..])),
            None => (name, None),
        };
        let Some(opt) = self.long(name) else {
            if let Some(value) = attached {
                return Item::Option {
                    key: Key::Long(name),
                    value: Some(Arg::literal(value)),
                    certain: true,
                    word,
                };
            }
            return self.unknown(Key::Long(name), word);
        };
        let value = match attached {
            Some(value) => Some(Arg::literal(value)),
            None => self.value_after(opt.takes),
        };
        Item::Option {
            key: Key::Known(opt.meaning()),
            value,
            certain: true,
            word,
        }
    }

    /// The letter at `at` of the cluster `word` (`-rf`, `-mfix`).
    fn short_option(&mut self, word: &'a [u8], at: usize) -> Item<'a> {
        let letter = word[at];
        let rest = &word[at + 1..];
        let Some(opt) = self.short(letter) else {
            if !rest.is_empty() {
                self.cluster = Some((word, at + 1));
                return Item::Option {
                    key: Key::Short(letter),
                    value: None,
                    certain: true,
                    word,
                };
            }
            return self.unknown(Key::Short(letter), word);
        };
        let value = match opt.takes {
            Takes::Nothing => {
                if !rest.is_empty() {
                    self.cluster = Some((word, at + 1));
                }
                None
            }
            Takes::Optional => (!rest.is_empty()).then(|| Arg::literal(rest)),
            takes if rest.is_empty() => self.value_after(takes),
            _ => Some(Arg::literal(rest)),
        };
        Item::Option {
            key: Key::Known(opt.meaning()),
            value,
            certain: true,
            word,
        }
    }

    /// An operand; the first one names the subcommand, and a `+` may stand for options.
    fn operand(&mut self, arg: Arg<'a>, maybe: bool) -> Item<'a> {
        match self.place {
            Place::Program if !self.program.subcommands.is_empty() => {
                let sub = self
                    .program
                    .subcommands
                    .iter()
                    .find(|s| s.names.iter().any(|n| n.as_bytes() == arg.text));
                self.place = Place::Subcommand(sub);
            }
            Place::Subcommand(Some(sub))
                if !sub.plus.is_empty()
                    && arg.glob.is_none()
                    && arg.text.len() > 1
                    && arg.text[0] == b'+' =>
            {
                self.queued = Some(Item::Operand {
                    arg: arg.with_text(&arg.text[1..]),
                    maybe,
                });
                return Item::Option {
                    key: Key::Known(sub.plus),
                    value: None,
                    certain: true,
                    word: arg.text,
                };
            }
            _ => {}
        }
        Item::Operand { arg, maybe }
    }
}

impl<'a, I: Iterator<Item = Arg<'a>>> Iterator for Reader<'a, I> {
    type Item = Item<'a>;

    fn next(&mut self) -> Option<Item<'a>> {
        if let Some(item) = self.queued.take() {
            return Some(item);
        }
        if let Some(arg) = self.pending.take() {
            return Some(self.operand(arg, true));
        }
        if let Some((word, at)) = self.cluster.take() {
            return Some(self.short_option(word, at));
        }
        let arg = self.args.next()?;
        if arg.computed {
            return Some(Item::Computed);
        }
        if self.operands_only {
            return Some(self.operand(arg, false));
        }
        if arg.glob.is_some() {
            return Some(Item::Glob(arg));
        }
        let text = arg.text;
        if text == b"--" {
            self.operands_only = true;
            return self.next();
        }
        let item = match self.program.style {
            Style::Gnu | Style::Cobra => match text.strip_prefix(b"--") {
                Some(name) => self.long_option(text, name),
                None if arg.looks_like_option() => self.short_option(text, 1),
                None => self.operand(arg, false),
            },
            Style::SingleDash if arg.looks_like_option() => {
                let name = text.strip_prefix(b"--").unwrap_or(&text[1..]);
                self.long_option(text, name)
            }
            Style::Operands if arg.looks_like_option() => {
                self.long_option(text, text.strip_prefix(b"--").unwrap_or(&text[1..]))
            }
            Style::Operands => match text.iter().position(|&b| b == b'=') {
                Some(at) => Item::Option {
                    key: Key::Long(&text[..at]),
                    value: Some(arg.with_text(&text[at + 1..])),
                    certain: true,
                    word: text,
                },
                None => self.operand(arg, false),
            },
            Style::SingleDash => self.operand(arg, false),
        };
        Some(item)
    }
}

fn allows_prefixes(style: Style) -> bool {
    style == Style::Gnu
}

/// The name of a long spelling without its dashes (`--force` is `force`; for
/// single-dash programs `-delete` is `delete`); `None` for a short one.
fn long_part(style: Style, name: &str) -> Option<&[u8]> {
    let name = name.as_bytes();
    match style {
        Style::SingleDash => name.strip_prefix(b"-"),
        Style::Gnu | Style::Cobra | Style::Operands => name.strip_prefix(b"--"),
    }
}

/// A rule's option, as the rule's program reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum RuleKey {
    Known(&'static str),
    Short(u8),
    Long(Box<[u8]>),
}

#[derive(Debug, Clone)]
struct RuleOption {
    key: RuleKey,
    /// The value the rule gives it; without one, any value (or none) matches.
    value: Option<Box<[u8]>>,
    /// Every way to write the option, for globs: the rule's own word and the table's
    /// names for it.
    spellings: Vec<Box<str>>,
}

/// A deny rule's words after the program: operands in order, options as a set.
#[derive(Debug, Clone)]
pub(crate) struct RuleArgs {
    program: &'static Program,
    operands: Vec<Box<[u8]>>,
    options: Vec<RuleOption>,
}

impl RuleArgs {
    /// Read `words` (the rule's words after its program, `program`) by the program's
    /// table entry.
    pub fn new<W: AsRef<str>>(program: &str, words: &[W]) -> RuleArgs {
        let table = table::program_named(scan::program_name(program));
        let mut operands = Vec::new();
        let mut options: Vec<RuleOption> = Vec::new();
        let args = words.iter().map(|w| Arg::literal(w.as_ref().as_bytes()));
        for item in Reader::new(table, args) {
            let (key, value, certain, word) = match item {
                // A rule's words are literal: no glob, nothing computed.
                Item::Operand { arg, .. } | Item::Glob(arg) => {
                    operands.push(arg.text.into());
                    continue;
                }
                Item::Computed => continue,
                Item::Option {
                    key,
                    value,
                    certain,
                    word,
                } => (key, value, certain, word),
            };
            // An unknown option's possible value is read as an operand: the broader
            // reading of the two.
            let value: Option<Box<[u8]>> = value.filter(|_| certain).map(|v| v.text.into());
            let keys: Vec<RuleKey> = match key {
                Key::Known(meaning) => meaning.iter().map(|&k| RuleKey::Known(k)).collect(),
                Key::Short(letter) => vec![RuleKey::Short(letter)],
                Key::Long(name) => vec![RuleKey::Long(name.into())],
            };
            for key in keys {
                let word = String::from_utf8_lossy(word).into_owned().into_boxed_str();
                if let Some(same) = options
                    .iter_mut()
                    .find(|o| o.key == key && o.value == value)
                {
                    if !same.spellings.contains(&word) {
                        same.spellings.push(word);
                    }
                    continue;
                }
                let mut spellings = vec![word];
                spellings.extend(spellings_of(table, &key));
                options.push(RuleOption {
                    key,
                    value: value.clone(),
                    spellings,
                });
            }
        }
        RuleArgs {
            program: table,
            operands,
            options,
        }
    }

    /// Whether a command's words after its program hold this rule's operands (as a
    /// prefix of its operands) and options (anywhere before `--`).
    pub fn matched_by<'a>(&self, args: impl Iterator<Item = Arg<'a>>) -> bool {
        let operands = &self.operands[..self.operands.len().min(MAX_OPERANDS)];
        let options = &self.options[..self.options.len().min(MAX_OPTIONS)];
        if operands.is_empty() && options.is_empty() {
            return true;
        }
        let all = match options.len() {
            0 => 0,
            n => u64::MAX >> (64 - n),
        };
        let mut found = 0u64;
        let mut operand = Operands {
            rule: operands,
            states: 1,
            done: operands.is_empty(),
        };
        for item in Reader::new(self.program, args) {
            match item {
                Item::Computed => return operand.possible(),
                Item::Option { key, value, .. } => {
                    for (i, o) in options.iter().enumerate() {
                        if self.key_matches(o, key) && value_matches(o, value) {
                            found |= 1 << i;
                        }
                    }
                }
                Item::Glob(arg) => {
                    let pattern = arg.glob.unwrap_or_default();
                    for (i, o) in options.iter().enumerate() {
                        if o.spellings.iter().any(|s| scan::glob_matches(pattern, s)) {
                            found |= 1 << i;
                        }
                    }
                    operand.read(arg, may_be_options(pattern));
                }
                Item::Operand { arg, maybe } => operand.read(arg, maybe),
            }
            if operand.done && found & all == all {
                return true;
            }
            if !operand.possible() {
                return false;
            }
        }
        false
    }

    fn key_matches(&self, option: &RuleOption, key: Key<'_>) -> bool {
        match (&option.key, key) {
            (RuleKey::Known(name), Key::Known(meaning)) => meaning.contains(name),
            (RuleKey::Short(rule), Key::Short(letter)) => *rule == letter,
            (RuleKey::Long(rule), Key::Long(name)) => {
                **rule == *name
                    || (allows_prefixes(self.program.style)
                        && !name.is_empty()
                        && rule.starts_with(name))
            }
            // A prefix of several of the table's names, among them one of this option's.
            (RuleKey::Known(_), Key::Long(name)) => {
                allows_prefixes(self.program.style)
                    && !name.is_empty()
                    && option.spellings.iter().any(|s| {
                        long_part(self.program.style, s).is_some_and(|l| l.starts_with(name))
                    })
            }
            _ => false,
        }
    }

    /// The rule's operands, for tests.
    #[cfg(test)]
    pub fn operands(&self) -> Vec<&str> {
        self.operands
            .iter()
            .map(|o| std::str::from_utf8(o).unwrap_or("?"))
            .collect()
    }

    /// The rule's options, each as its canonical name, letter or long name, with its
    /// value, for tests.
    #[cfg(test)]
    pub fn options(&self) -> Vec<String> {
        self.options
            .iter()
            .map(|o| {
                let key = match &o.key {
                    RuleKey::Known(name) => (*name).to_owned(),
                    RuleKey::Short(letter) => format!("-{}", char::from(*letter)),
                    RuleKey::Long(name) => format!("--{}", String::from_utf8_lossy(name)),
                };
                match &o.value {
                    Some(v) => format!("{key}={}", String::from_utf8_lossy(v)),
                    None => key,
                }
            })
            .collect()
    }
}

/// How far into the rule's operands a command's operands can have got: a set of
/// positions, because a glob may stand for several operands and a possible value may or
/// may not be one.
struct Operands<'r> {
    rule: &'r [Box<[u8]>],
    /// Bit `i`: the first `i` of the rule's operands are matched (`i` below their
    /// number).
    states: u64,
    /// All of them are.
    done: bool,
}

impl Operands<'_> {
    fn possible(&self) -> bool {
        self.done || self.states != 0
    }

    /// Read one operand of the command. `skippable`: it may be no operand at all.
    fn read(&mut self, arg: Arg<'_>, skippable: bool) {
        if self.done {
            return;
        }
        let n = self.rule.len();
        let mut next = 0u64;
        let mut advance = |to: usize, next: &mut u64| {
            if to == n {
                self.done = true;
            } else {
                *next |= 1 << to;
            }
        };
        let mut states = self.states;
        while states != 0 {
            let i = states.trailing_zeros() as usize;
            states &= states - 1;
            if skippable {
                next |= 1 << i;
            }
            if *self.rule[i] == *arg.text {
                advance(i + 1, &mut next);
            }
            if let Some(pattern) = arg.glob {
                let mut j = i;
                while j < n
                    && std::str::from_utf8(&self.rule[j])
                        .is_ok_and(|r| scan::glob_matches(pattern, r))
                {
                    j += 1;
                    advance(j, &mut next);
                }
            }
        }
        self.states = next;
    }
}

fn value_matches(option: &RuleOption, value: Option<Arg<'_>>) -> bool {
    let Some(rule) = &option.value else {
        return true;
    };
    let Some(value) = value else {
        return false;
    };
    *value.text == **rule
        || value.glob.is_some_and(|pattern| {
            std::str::from_utf8(rule).is_ok_and(|r| scan::glob_matches(pattern, r))
        })
}

/// Whether a glob may expand to option words (file names starting with `-`), and so
/// to no operand at all.
fn may_be_options(pattern: &str) -> bool {
    matches!(pattern.as_bytes().first(), Some(b'-' | b'*' | b'?' | b'['))
}

/// The table's names for an option a rule gives, for globs to match.
fn spellings_of(program: &'static Program, key: &RuleKey) -> Vec<Box<str>> {
    match key {
        RuleKey::Known(name) => {
            let subcommands = program.subcommands.iter().flat_map(|s| s.options);
            program
                .options
                .iter()
                .chain(subcommands)
                .filter(|o| o.meaning().contains(name))
                .flat_map(|o| o.names.iter().map(|&n| Box::from(n)))
                .collect()
        }
        RuleKey::Short(letter) => vec![format!("-{}", char::from(*letter)).into()],
        RuleKey::Long(name) => {
            let name = String::from_utf8_lossy(name);
            vec![format!("--{name}").into(), format!("-{name}").into()]
        }
    }
}
