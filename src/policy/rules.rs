//! Allow rules: validation when they are loaded, and matching with the exact prefix
//! semantics gate promises.
//!
//! A command matches an allow rule when, after trimming blanks (spaces and tabs) from both
//! ends of each, the command equals the rule or starts with the rule followed by a space.
//! A command that contains a shell character anywhere (in its untrimmed form) matches no
//! rule at all: a prefix rule such as `git status` must never approve
//! `git status; rm -rf ~`. A rule that is blank, contains a shell character or is a
//! pattern (a glob, an agent's own rule syntax: see [`super::patterns`]) is refused when
//! the configuration is loaded, so a bad rule is found before any command arrives.
//!
//! Two deliberate tightenings, both in the direction of asking more often: only the
//! blanks a shell itself skips are trimmed (a no-break space or a carriage return is part
//! of the program name to the shell, so it must be part of it here too), and a control
//! character other than tab makes a command match nothing, like a shell character.

use std::collections::HashMap;
use std::fmt;

use super::index::{self, TextIndex};
use super::store::Store;
use super::{Origin, RuleHashBuilder};

/// The shell characters live with the other shell facts.
pub use crate::shells::SHELL_CHARS;

/// The first shell character in `text`, if any.
pub fn first_shell_char(text: &str) -> Option<char> {
    // Every shell character is ASCII, so a byte scan finds exactly the same characters
    // as a char scan and is faster on long commands.
    text.bytes()
        .find(|b| b.is_ascii() && SHELL_CHARS.contains(&char::from(*b)))
        .map(char::from)
}

/// ASCII bytes that keep a command from matching: the shell characters, and control
/// characters other than tab.
const UNMATCHABLE_ASCII: [bool; 128] = {
    let mut table = [false; 128];
    let mut b = 0;
    while b < 128 {
        table[b] = (b < 0x20 && b != b'\t' as usize) || b == 0x7f;
        b += 1;
    }
    let mut i = 0;
    while i < SHELL_CHARS.len() {
        table[SHELL_CHARS[i] as usize] = true;
        i += 1;
    }
    table
};

/// The bytes that [`validate_rule`] looks at more closely: those of
/// [`UNMATCHABLE_ASCII`], the glob characters (`*`, `?`, `[`; [`super::patterns::check`]),
/// the parenthesis of an agent's rule (`Bash(...)`: [`super::patterns::agent_rule`];
/// a shell character too), and every byte of a character that is not ASCII.
const CHECKED: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = b >= 128 || UNMATCHABLE_ASCII[b] || matches!(b as u8, b'*' | b'?' | b'[' | b'(');
        b += 1;
    }
    table
};

/// The first character that keeps a command from matching any allow rule: a shell
/// character, or a control character other than tab.
pub fn first_unmatchable_char(text: &str) -> Option<char> {
    if text.is_ascii() {
        return text
            .bytes()
            .find(|&b| UNMATCHABLE_ASCII[usize::from(b)])
            .map(char::from);
    }
    text.chars().find(|&c| {
        if c.is_ascii() {
            UNMATCHABLE_ASCII[c as usize]
        } else {
            c.is_control()
        }
    })
}

/// Trim what a shell skips around words: spaces and tabs.
pub fn trim_blanks(text: &str) -> &str {
    let bytes = text.as_bytes();
    let blank = |b: &u8| *b == b' ' || *b == b'\t';
    let start = bytes.iter().position(|b| !blank(b)).unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !blank(b))
        .map_or(start, |i| i + 1);
    // Both ends sit next to an ASCII byte (or at an end), so they are char boundaries.
    &text[start..end]
}

/// Why a rule was refused at load time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleError {
    Blank,
    ShellChar(char),
    /// A deny or ask rule made only of assignments (`FOO=1`) names no program to deny.
    NoProgram,
    /// The rule starts or ends with white space other than a space or tab.
    InvisibleEnd(char),
    /// An agent's permission rule for its shell tool (`Bash(npm test:*)`), with the
    /// rule gate writes for it, or why the command in it cannot be one.
    AgentRule {
        agent: &'static str,
        written: Result<String, Box<RuleError>>,
    },
    /// Claude Code's trailing `:*`, with the rule without it.
    ColonStar {
        written: String,
    },
    /// A glob character outside quotes: gate compares words as written.
    Glob(char),
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuleError::Blank => f.write_str("a rule cannot be blank"),
            RuleError::ShellChar(c) => write!(
                f,
                "a rule cannot contain the {}{}; write the plain command prefix (allow rules \
                 never match shell syntax, and deny rules look inside it by themselves)",
                if SHELL_CHARS.contains(c) {
                    "shell character "
                } else {
                    ""
                },
                describe_char(*c)
            ),
            RuleError::InvisibleEnd(c) => write!(
                f,
                "a rule cannot start or end with the invisible white space U+{:04X}, which \
                 commands typed normally never carry",
                u32::from(*c)
            ),
            RuleError::NoProgram => {
                f.write_str("a deny or ask rule must name a program, not only variable assignments")
            }
            RuleError::AgentRule {
                agent,
                written: Ok(rule),
            } => write!(
                f,
                "this is {agent}'s permission syntax, which gate does not read; a gate rule \
                 is the command's first words and already matches them followed by any \
                 arguments: write `{rule}`"
            ),
            RuleError::AgentRule {
                agent,
                written: Err(why),
            } => write!(
                f,
                "this is {agent}'s permission syntax, which gate does not read, and the \
                 command in it cannot be a gate rule either: {why}"
            ),
            RuleError::ColonStar { written } => write!(
                f,
                "a trailing `:*` is Claude Code's permission syntax, which gate does not \
                 read; a gate rule already matches its words followed by any arguments: \
                 write `{written}`"
            ),
            RuleError::Glob(c) => write!(
                f,
                "a rule cannot contain the glob character '{c}' outside quotes: a gate rule \
                 is the command's first words, compared as written, and a glob cannot be \
                 expressed in one (it already matches its words followed by any arguments)"
            ),
        }
    }
}

impl std::error::Error for RuleError {}

/// A character as a person would name it in a message, on one line.
pub fn describe_char(c: char) -> String {
    match c {
        '\n' => "newline".to_owned(),
        c if c.is_control() => format!("control character U+{:04X}", u32::from(c)),
        c => format!("'{c}'"),
    }
}

/// Check one rule as written and return its trimmed text.
pub fn validate_rule(raw: &str) -> Result<&str, RuleError> {
    // Most rules (all of an imported policy's hundreds, checked before every command)
    // hold none of the bytes any check below looks for: then only the blank check is
    // left, with what every check would have answered.
    if !raw.bytes().any(|b| CHECKED[usize::from(b)]) {
        let rule = trim_blanks(raw);
        return if rule.is_empty() {
            Err(RuleError::Blank)
        } else {
            Ok(rule)
        };
    }
    validate_closely(raw)
}

/// [`validate_rule`] with every check.
fn validate_closely(raw: &str) -> Result<&str, RuleError> {
    // Before the shell characters: its parentheses are one.
    if let Some(e) = super::patterns::agent_rule(raw) {
        return Err(e);
    }
    if let Some(c) = first_unmatchable_char(raw) {
        return Err(RuleError::ShellChar(c));
    }
    let rule = trim_blanks(raw);
    if rule.is_empty() {
        return Err(RuleError::Blank);
    }
    if !rule.is_ascii() {
        // Blank means nothing visible, whatever kind of white space it is.
        if rule.trim().is_empty() {
            return Err(RuleError::Blank);
        }
        // Other white space at an end (a no-break space) is not trimmed, so the rule
        // could only match commands that carry the same invisible character: surely a
        // mistake. (ASCII white space other than space and tab is a control character,
        // refused above.)
        let ends = [rule.chars().next(), rule.chars().next_back()];
        if let Some(c) = ends.into_iter().flatten().find(|c| c.is_whitespace()) {
            return Err(RuleError::InvisibleEnd(c));
        }
    }
    super::patterns::check(rule)?;
    Ok(rule)
}

/// The reference form of the matching rule, for one rule and one command. The indexed
/// [`AllowRules::find`] must agree with it on every input (a property test checks this).
pub fn allow_rule_matches(rule: &str, command: &str) -> bool {
    if first_unmatchable_char(command).is_some() || first_unmatchable_char(rule).is_some() {
        return false;
    }
    if rule.trim().is_empty() {
        return false;
    }
    let rule = trim_blanks(rule);
    let command = trim_blanks(command);
    command == rule
        || (command.starts_with(rule) && command.as_bytes().get(rule.len()) == Some(&b' '))
}

/// A set of validated allow rules.
///
/// A rule is a prefix (it matches the command equal to it and the command followed by a
/// space and more) or exact (only the command equal to it, as Claude Code's
/// `Bash(git status)` and a lasting approval of one command mean).
///
/// The rules are kept in the order they were added, a rule given twice as often as it
/// was given: adding one is a push, which an imported policy of hundreds of rules does
/// before every command (issue 25). Of a rule's copies, the one in force is the first
/// prefix, or the first copy when all are exact ([`AllowRules::held`]): a set keeps a
/// rule's first origin, and a prefix over an exact copy, because the prefix is what
/// matches. Up to [`index::LINEAR_MAX`] rules times 16 are looked through in one pass;
/// a larger set is looked up by hash ([`index::TextIndex`]), one lookup per space in
/// the command.
#[derive(Debug, Clone, Default)]
pub struct AllowRules {
    /// The rules, each marked when it is exact.
    rules: Store,
    index: TextIndex,
}

/// The texts a rule must equal to match the (trimmed) `command`, longest first: the
/// whole command (which an exact rule matches too), then every prefix that ends just
/// before a space (`false`: prefix rules only). A prefix ending in white space cannot
/// equal a rule (rules are trimmed), so runs of spaces cost a candidate each but never
/// match wrongly.
fn candidates(command: &str) -> impl Iterator<Item = (&str, bool)> {
    let prefixes = command
        .bytes()
        .enumerate()
        .rev()
        .filter(|&(_, b)| b == b' ')
        .map(|(i, _)| (&command[..i], false));
    std::iter::once((command, true)).chain(prefixes)
}

/// The most rules [`AllowRules::find_where`] looks through in one pass, comparing each
/// with the command once, before it uses the index: a pass costs a few comparisons a
/// rule, the index a hash of each prefix of the command.
const ONE_PASS_MAX: usize = index::LINEAR_MAX * 16;

impl AllowRules {
    pub fn new() -> Self {
        Self::default()
    }

    /// Make room for `additional` more rules.
    pub fn reserve(&mut self, additional: usize) {
        self.rules.reserve(additional);
    }

    /// Add a prefix rule, validating it.
    pub fn add(&mut self, raw: &str, origin: Origin) -> Result<(), RuleError> {
        self.add_with(raw, &origin, false)
    }

    /// Add an exact rule, validating it as a prefix rule is validated.
    pub fn add_exact(&mut self, raw: &str, origin: Origin) -> Result<(), RuleError> {
        self.add_with(raw, &origin, true)
    }

    /// Add a rule, exact or a prefix, with an origin the caller keeps (a file's reader
    /// changes one origin's line from rule to rule).
    pub fn add_with(&mut self, raw: &str, origin: &Origin, exact: bool) -> Result<(), RuleError> {
        let text = validate_rule(raw)?;
        self.index.clear();
        self.rules.push(text, origin, exact);
        Ok(())
    }

    /// Add every rule of `other` after this set's: a rule both have keeps this set's
    /// origin (unless only `other` has it as a prefix).
    pub fn extend(&mut self, other: AllowRules) {
        self.index.clear();
        self.rules.append(other.rules);
    }

    /// The number of rules, each counted once however often it was given.
    pub fn len(&self) -> usize {
        self.firsts().len()
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    pub fn contains(&self, rule: &str) -> bool {
        self.held(trim_blanks(rule)).is_some()
    }

    /// The most specific (longest) rule that the command matches.
    pub fn find(&self, command: &str) -> Option<(&str, Origin)> {
        self.find_where(command, |_| true)
    }

    /// The most specific (longest) rule that the command matches and `accept` takes.
    pub fn find_where(
        &self,
        command: &str,
        mut accept: impl FnMut(&str) -> bool,
    ) -> Option<(&str, Origin)> {
        if self.rules.is_empty() || first_unmatchable_char(command).is_some() {
            return None;
        }
        let command = trim_blanks(command);
        let found = if self.rules.len() <= ONE_PASS_MAX
            && (self.rules.len() <= index::LINEAR_MAX || !self.index.worth_building())
        {
            self.find_in_one_pass(command, accept)
        } else {
            candidates(command).find_map(|(candidate, whole)| {
                self.held(candidate)
                    .filter(|&i| whole || !self.rules.mark(i))
                    .filter(|&i| accept(self.rules.text(i)))
            })
        };
        found.map(|i| (self.rules.text(i), self.rules.origin(i)))
    }

    /// [`AllowRules::find_where`] by comparing each rule with the (trimmed) command
    /// once: the rules that match, longest first and in force first, until `accept`
    /// takes one.
    fn find_in_one_pass(
        &self,
        command: &str,
        mut accept: impl FnMut(&str) -> bool,
    ) -> Option<usize> {
        let bytes = command.as_bytes();
        let mut matched: Vec<usize> = self
            .rules
            .rows()
            .enumerate()
            .filter(|&(_, (rule, exact))| {
                let ends = match bytes.get(rule.len()) {
                    None => rule.len() == bytes.len(),
                    Some(&b) => b == b' ' && !exact,
                };
                ends && bytes.starts_with(rule)
            })
            .map(|(i, _)| i)
            .collect();
        // Longest first; of one rule's copies, the one in force first (a prefix before
        // an exact one, then the first added), as `held` chooses it.
        matched.sort_by_key(|&i| {
            (
                std::cmp::Reverse(self.rules.text(i).len()),
                self.rules.mark(i),
                i,
            )
        });
        let mut last_len = None;
        matched.into_iter().find(|&i| {
            let len = self.rules.text(i).len();
            // Copies of a rule that is not in force, and the rule when it was refused.
            last_len.replace(len) != Some(len) && accept(self.rules.text(i))
        })
    }

    /// The copy of `text` that is in force: its first prefix, or its first copy when all
    /// are exact.
    fn held(&self, text: &str) -> Option<usize> {
        let mut first = None;
        for i in self.same_text(text) {
            if !self.rules.mark(i) {
                return Some(i);
            }
            first.get_or_insert(i);
        }
        first
    }

    /// The positions of the rules whose text is `text`, in the order added.
    fn same_text<'a>(&'a self, text: &'a str) -> Box<dyn Iterator<Item = usize> + 'a> {
        let equal = move |i: &usize| self.rules.text(*i) == text;
        if self.rules.len() <= index::LINEAR_MAX {
            Box::new((0..self.rules.len()).filter(equal))
        } else {
            let keys = || -> Box<dyn Iterator<Item = &str>> { Box::new(self.rules.texts()) };
            Box::new(self.index.maybe_equal(keys, text).filter(equal))
        }
    }

    /// The position of each rule's copy in force, in the order the rules were first
    /// given.
    fn firsts(&self) -> Vec<usize> {
        let mut seen: HashMap<&str, usize, RuleHashBuilder> = HashMap::default();
        let mut order: Vec<usize> = Vec::new();
        for (i, text) in self.rules.texts().enumerate() {
            match seen.get(text) {
                None => {
                    seen.insert(text, order.len());
                    order.push(i);
                }
                Some(&at) => {
                    if self.rules.mark(order[at]) && !self.rules.mark(i) {
                        order[at] = i;
                    }
                }
            }
        }
        order
    }

    /// Whether `rule` is held as an exact rule (and not also as a prefix).
    pub fn is_exact(&self, rule: &str) -> bool {
        self.held(trim_blanks(rule))
            .is_some_and(|i| self.rules.mark(i))
    }

    /// Each rule once, with the origin of its copy in force, in the order the rules were
    /// first given.
    pub fn iter(&self) -> impl Iterator<Item = (&str, Origin)> {
        self.firsts()
            .into_iter()
            .map(|i| (self.rules.text(i), self.rules.origin(i)))
    }
}

#[cfg(test)]
mod tests {
    /// The quick path of `validate_rule` answers as every check does, on rules made of
    /// the characters the checks look for and others.
    #[test]
    fn validating_quickly_answers_as_every_check_does() {
        use proptest::prelude::*;
        let pieces = prop::sample::select(vec![
            "git", " ", "\t", "status", "*", "?", "[", "]", "(", ")", "Bash", ":*", ";", "'", "\"",
            "\\", "\n", "\u{7f}", "\u{85}", "\u{a0}", "\u{e9}", "-rf", "|", "$",
        ]);
        proptest!(|(parts in prop::collection::vec(pieces, 0..8))| {
            let rule = parts.concat();
            prop_assert_eq!(
                format!("{:?}", validate_rule(&rule)),
                format!("{:?}", validate_closely(&rule))
            );
        });
    }

    use super::*;
    use proptest::prelude::*;

    fn rules(list: &[&str]) -> AllowRules {
        let mut r = AllowRules::new();
        for rule in list {
            r.add(rule, Origin::Flag("--allow")).unwrap();
        }
        r
    }

    fn matches(rule: &str, command: &str) -> bool {
        let indexed = rules(&[rule]).find(command).is_some();
        assert_eq!(
            indexed,
            allow_rule_matches(rule, command),
            "indexed and reference matching disagree for rule {rule:?}, command {command:?}"
        );
        indexed
    }

    // The example table of the seed, row by row.
    #[test]
    fn seed_table_exact_command_matches() {
        assert!(matches("git status", "git status"));
    }

    #[test]
    fn seed_table_command_with_arguments_matches() {
        assert!(matches("git status", "git status -s"));
    }

    #[test]
    fn seed_table_longer_word_does_not_match() {
        assert!(!matches("git status", "git statusx"));
    }

    #[test]
    fn seed_table_rule_with_many_arguments_matches() {
        assert!(matches("pytest", "pytest tests/ -k parser"));
    }

    #[test]
    fn seed_table_rule_later_in_command_does_not_match() {
        assert!(!matches("pytest", "python -m pytest"));
    }

    #[test]
    fn leading_and_trailing_space_is_ignored_on_rule_and_command() {
        assert!(matches("  git status  ", "git status"));
        assert!(matches("git status", "   git status   "));
        assert!(matches("\tgit status\t", " \t git status -s \t "));
    }

    #[test]
    fn only_a_space_continues_a_rule() {
        assert!(!matches("git status", "git status\t-s"));
        assert!(!matches("git status", "git status-s"));
        assert!(!matches("git status", "git status/x"));
    }

    #[test]
    fn inner_space_is_literal() {
        assert!(!matches("git status", "git  status"));
        assert!(matches("git  status", "git  status -s"));
    }

    #[test]
    fn a_rule_is_not_a_substring_match() {
        assert!(!matches("status", "git status"));
        assert!(!matches("git status -s", "git status"));
    }

    #[test]
    fn every_shell_character_inside_at_start_and_at_end_prevents_a_match() {
        for c in SHELL_CHARS {
            for command in [
                format!("git status{c}rm -rf ~"),
                format!("git status {c} rm -rf ~"),
                format!("{c}git status"),
                format!("git status{c}"),
                format!("git status -s{c}"),
                format!("git status -{c}s"),
            ] {
                assert!(!matches("git status", &command), "{command:?} matched");
                assert!(!matches("git", &command), "{command:?} matched `git`");
            }
        }
    }

    #[test]
    fn a_trailing_newline_is_a_shell_character_not_white_space() {
        // Trimming happens for the prefix comparison only; the shell-character check looks
        // at the command as received, so a newline anywhere refuses the match.
        assert!(!matches("git status", "git status\n"));
        assert!(!matches("git status", "\ngit status"));
    }

    #[test]
    fn only_spaces_and_tabs_are_trimmed() {
        // To a shell these are part of the program name: `\u{a0}ls` is not `ls`.
        assert!(!matches("ls", "\u{a0}ls -la"));
        assert!(!matches("ls", "ls\u{a0}"));
        assert!(!matches("git status", "git status\r"));
        assert!(!matches("ls", "\rls"));
        assert!(matches("ls", " \t ls -la \t "));
    }

    #[test]
    fn control_characters_prevent_a_match_and_are_refused_in_rules() {
        for c in ['\r', '\x1b', '\x00', '\x7f', '\u{85}'] {
            assert!(!matches("echo", &format!("echo a{c}b")), "{c:?}");
            assert_eq!(
                validate_rule(&format!("echo{c}")),
                Err(RuleError::ShellChar(c))
            );
        }
        assert!(matches("echo", "echo a\tb"));
    }

    #[test]
    fn rules_with_invisible_white_space_at_an_end_are_refused() {
        assert_eq!(
            validate_rule("ls\u{a0}"),
            Err(RuleError::InvisibleEnd('\u{a0}'))
        );
        assert_eq!(
            validate_rule(" \u{2003}ls"),
            Err(RuleError::InvisibleEnd('\u{2003}'))
        );
        assert_eq!(validate_rule("echo a\u{a0}b"), Ok("echo a\u{a0}b"));
    }

    #[test]
    fn trimming_removes_only_outer_blanks() {
        assert_eq!(trim_blanks(" \t a b \t "), "a b");
        assert_eq!(trim_blanks("   "), "");
        assert_eq!(trim_blanks(""), "");
        assert_eq!(trim_blanks(" é "), "é");
        assert_eq!(trim_blanks("\u{a0}x\u{a0}"), "\u{a0}x\u{a0}");
    }

    #[test]
    fn blank_rules_are_refused() {
        for raw in ["", " ", "\t", "  \t  ", "\u{a0}"] {
            assert_eq!(validate_rule(raw), Err(RuleError::Blank), "{raw:?}");
        }
    }

    #[test]
    fn rules_with_a_shell_character_are_refused_wherever_it_is() {
        for c in SHELL_CHARS {
            for raw in [
                format!("git status{c} ls"),
                format!("{c}ls"),
                format!("ls{c}"),
            ] {
                assert_eq!(validate_rule(&raw), Err(RuleError::ShellChar(c)), "{raw:?}");
            }
        }
    }

    #[test]
    fn the_error_for_a_newline_names_it_in_words() {
        let err = validate_rule("ls\n").unwrap_err().to_string();
        assert!(err.contains("newline"), "{err}");
        assert!(
            !err.contains('\n'),
            "message must stay on one line: {err:?}"
        );
    }

    #[test]
    fn the_most_specific_rule_is_reported() {
        let r = rules(&["git", "git status", "git status -s"]);
        assert_eq!(r.find("git status -s").unwrap().0, "git status -s");
        assert_eq!(r.find("git status --short").unwrap().0, "git status");
        assert_eq!(r.find("git log").unwrap().0, "git");
        assert!(r.find("gitk").is_none());
    }

    #[test]
    fn duplicate_rules_keep_their_first_origin() {
        let mut r = AllowRules::new();
        r.add("ls", Origin::Flag("--allow")).unwrap();
        r.add(" ls ", Origin::Env("GATE_X")).unwrap();
        assert_eq!(r.len(), 1);
        assert_eq!(r.find("ls").unwrap().1, Origin::Flag("--allow"));
    }

    #[test]
    fn an_empty_rule_set_matches_nothing() {
        assert!(AllowRules::new().find("ls").is_none());
        assert!(AllowRules::new().find("").is_none());
    }

    #[test]
    fn a_blank_command_matches_no_rule() {
        let r = rules(&["ls"]);
        assert!(r.find("").is_none());
        assert!(r.find("   ").is_none());
    }

    #[test]
    fn non_ascii_commands_are_matched_on_characters_not_bytes() {
        assert!(matches("echo héllo", "echo héllo wörld"));
        assert!(!matches("echo h", "echo héllo"));
    }

    fn exact(list: &[&str]) -> AllowRules {
        let mut r = AllowRules::new();
        for rule in list {
            r.add_exact(rule, Origin::Flag("--allow")).unwrap();
        }
        r
    }

    #[test]
    fn an_exact_rule_matches_only_the_command_equal_to_it() {
        let r = exact(&["git status"]);
        assert!(r.find("git status").is_some());
        assert!(r.find("  git status\t").is_some());
        assert!(r.is_exact("git status"));
        for command in [
            "git status -s",
            "git status --porcelain",
            "git  status",
            "git statusx",
            "git",
            "git status; rm -rf ~",
            "git status\n",
        ] {
            assert!(r.find(command).is_none(), "{command:?} matched");
        }
    }

    #[test]
    fn an_exact_rule_is_validated_as_a_prefix_rule_is() {
        let mut r = AllowRules::new();
        assert_eq!(
            r.add_exact("git status; ls", Origin::BuiltIn),
            Err(RuleError::ShellChar(';'))
        );
        assert!(r.add_exact("  ", Origin::BuiltIn).is_err());
        assert!(r.add_exact("touch *", Origin::BuiltIn).is_err());
    }

    #[test]
    fn a_prefix_rule_beside_an_exact_one_of_the_same_text_is_what_holds() {
        // Exact first, then the prefix: the prefix is in force, with its own origin.
        let mut r = exact(&["git status"]);
        r.add("git status", Origin::Flag("--second")).unwrap();
        assert!(!r.is_exact("git status"));
        assert_eq!(r.find("git status -s").unwrap().1, Origin::Flag("--second"));
        // Prefix first, then exact: the prefix stays, with the first origin.
        let mut r = rules(&["git status"]);
        r.add_exact("git status", Origin::Flag("--second")).unwrap();
        assert!(!r.is_exact("git status"));
        assert_eq!(r.find("git status -s").unwrap().1, Origin::Flag("--allow"));
        // Across layers the same.
        let mut first = exact(&["ls"]);
        first.extend(rules(&["ls"]));
        assert!(first.find("ls -la").is_some());
        let mut first = rules(&["ls"]);
        first.extend(exact(&["ls", "pwd"]));
        assert!(first.find("ls -la").is_some());
        assert!(first.find("pwd").is_some() && first.find("pwd -P").is_none());
    }

    #[test]
    fn a_longer_prefix_rule_still_matches_past_a_shorter_exact_one() {
        let mut r = exact(&["git"]);
        r.add("git status", Origin::BuiltIn).unwrap();
        assert_eq!(r.find("git status -s").unwrap().0, "git status");
        assert!(r.find("git log").is_none());
        assert!(r.find("git").is_some());
    }

    fn shell_char() -> impl Strategy<Value = char> {
        proptest::sample::select(SHELL_CHARS.to_vec())
    }

    proptest! {
        #[test]
        fn no_command_with_a_shell_character_matches_any_rule(
            rule in "[a-z][a-z0-9 ./_=-]{0,20}",
            before in "[ -~]{0,20}",
            after in "[ -~]{0,20}",
            c in shell_char(),
        ) {
            prop_assume!(validate_rule(&rule).is_ok());
            let command = format!("{before}{c}{after}");
            prop_assert!(!matches(&rule, &command));
            let prefixed = format!("{} {before}{c}{after}", rule.trim());
            prop_assert!(!matches(&rule, &prefixed));
        }

        #[test]
        fn a_command_without_shell_characters_matches_itself_as_a_rule(
            command in "[^;&|<>$`(){}\\\\\\p{C}]{1,40}",
        ) {
            prop_assert!(first_shell_char(&command).is_none());
            // Blank commands, those with invisible white space at an end and those with
            // a glob character outside quotes are not valid rules; every other command
            // is one, and matches itself.
            match validate_rule(&command) {
                Ok(_) => prop_assert!(matches(&command, &command)),
                Err(e) => prop_assert!(
                    matches!(
                        e,
                        RuleError::Blank
                            | RuleError::InvisibleEnd(_)
                            | RuleError::Glob(_)
                            | RuleError::ColonStar { .. }
                    ),
                    "{e}"
                ),
            }
        }

        #[test]
        fn indexed_matching_agrees_with_the_reference(
            rule in "[a-c ]{1,8}",
            command in "[a-c ;]{0,12}",
        ) {
            prop_assume!(validate_rule(&rule).is_ok());
            // `matches` asserts the agreement itself.
            let _ = matches(&rule, &command);
        }

        #[test]
        fn a_match_means_the_command_starts_with_the_rule(
            rule in "[a-c ]{1,8}",
            command in "[a-c ]{0,12}",
        ) {
            prop_assume!(validate_rule(&rule).is_ok());
            if matches(&rule, &command) {
                prop_assert!(trim_blanks(&command).starts_with(trim_blanks(&rule)));
            }
        }
    }

    /// The set as a hash table keyed by text held it before it became a list (issue 25):
    /// a rule's first origin, unless it was exact and a later copy a prefix. The list
    /// must find what the table found, looked through or by its index.
    fn by_table(
        rules: &[(String, bool, u32)],
        command: &str,
        refused: &str,
    ) -> Option<(String, u32)> {
        let mut table: HashMap<&str, (bool, u32)> = HashMap::new();
        for (text, exact, origin) in rules {
            let text = trim_blanks(text);
            match table.get(text) {
                Some(&(true, _)) if !exact => {
                    table.insert(text, (*exact, *origin));
                }
                Some(_) => {}
                None => {
                    table.insert(text, (*exact, *origin));
                }
            }
        }
        if first_unmatchable_char(command).is_some() {
            return None;
        }
        let command = trim_blanks(command);
        candidates(command).find_map(|(candidate, whole)| {
            table
                .get(candidate)
                .filter(|(exact, _)| whole || !exact)
                .filter(|_| candidate != refused)
                .map(|&(_, origin)| (candidate.to_owned(), origin))
        })
    }

    proptest! {
        #[test]
        fn the_list_finds_what_a_table_found_looked_through_and_indexed(
            rules in prop::collection::vec(("[ab]( [ab]){0,2}", any::<bool>()), 1..12),
            (pick, tail) in (any::<prop::sample::Index>(), "( [ab]){0,2}"),
            own in prop::option::of("[ab ]{0,8}"),
            refuse in any::<prop::sample::Index>(),
        ) {
            // Mostly a rule's own text with words after it: the copies of one rule,
            // exact and prefix, are what a table and a list could disagree on.
            let command = own.unwrap_or_else(|| format!("{}{tail}", rules[pick.index(rules.len())].0));
            let rules: Vec<(String, bool, u32)> = rules
                .into_iter()
                .enumerate()
                .map(|(i, (text, exact))| (text, exact, i as u32))
                .collect();
            // `accept` refuses one of the rules, as a runner's check does.
            let refused = trim_blanks(&rules[refuse.index(rules.len())].0).to_owned();
            let expected = by_table(&rules, &command, &refused);
            // Filler past the limits makes the set indexed: at once, or once it has
            // been looked through a few times. None of it matches.
            for filler in [0, index::LINEAR_MAX + 1, ONE_PASS_MAX + 1] {
                let mut set = AllowRules::new();
                for n in 0..filler {
                    set.add(&format!("filler{n}"), Origin::BuiltIn).unwrap();
                }
                // An index built before the rules are added must not hide them.
                for _ in 0..8 {
                    prop_assert!(set.find(&command).is_none());
                }
                for (text, exact, origin) in &rules {
                    let origin = Origin::File { path: std::path::Path::new("f").into(), line: *origin };
                    if *exact {
                        set.add_exact(text, origin).unwrap();
                    } else {
                        set.add(text, origin).unwrap();
                    }
                }
                // Looked through, then (past the limit) by the index.
                for pass in 0..8 {
                    let found = set
                        .find_where(&command, |rule| rule != refused)
                        .map(|(rule, origin)| match origin {
                            Origin::File { line, .. } => (rule.to_owned(), line),
                            other => panic!("{other:?}"),
                        });
                    prop_assert_eq!(&found, &expected, "filler {}, pass {}", filler, pass);
                }
                for (text, _, _) in &rules {
                    let text = trim_blanks(text);
                    let held = by_table(&rules, text, "").filter(|(t, _)| t == text);
                    prop_assert!(set.contains(text));
                    let shown = set.iter().find(|(t, _)| *t == text).map(|(_, o)| o.clone());
                    let line = match shown {
                        Some(Origin::File { line, .. }) => line,
                        other => panic!("{other:?}"),
                    };
                    prop_assert_eq!(Some(line), held.map(|(_, l)| l), "{}", text);
                }
                prop_assert_eq!(
                    set.iter().count(),
                    rules.iter().map(|r| trim_blanks(&r.0)).collect::<std::collections::HashSet<_>>().len() + filler
                );
                prop_assert_eq!(set.len(), set.iter().count());
            }
        }
    }
}
