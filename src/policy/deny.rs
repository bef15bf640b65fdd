//! Deny rules: checked at every level, against every simple command the text could run,
//! and against every program about to be executed.
//!
//! A deny rule is a command in words, validated like an allow rule: a program, then
//! operands and options. It matches a simple command (as found by [`super::scan`]) or an
//! exec (a path and its argv) that runs that program with those operands first, in order,
//! and those options anywhere before `--`, in any spelling the program accepts
//! ([`super::options`]). The program is compared by name (`rm` also catches `/bin/rm`),
//! and a word whose value is only known when the shell runs matches the rest of any rule.

use std::collections::HashSet;

use super::index::{self, TextIndex};
use super::options::{Arg, RuleArgs};
use super::rules::{RuleError, validate_rule};
use super::scan::{self, Word};
use super::store::Store;
use super::{CommandText, Origin, RuleHashBuilder};

/// Programs that run the program named by their first argument themselves, without an
/// exec: `busybox rm x` removes `x` as `rm x` would.
pub const MULTI_CALL: [&str; 3] = ["busybox", "toybox", "coreutils"];

/// What a deny rule keeps besides its text and origin.
#[derive(Debug, Clone)]
struct Parts {
    /// The rule's first word after quote removal: a program name, or a path if it has a
    /// slash.
    program: Program,
    /// The rule's other words, read as the program reads them: when a command or an
    /// exec first names the rule's program (most of a policy's rules are never
    /// consulted by a given command, and reading them was most of their load).
    args: std::sync::OnceLock<RuleArgs>,
}

/// Where a rule's program is: in its text as written (a rule in plain words, as most
/// are: no copy is made), or, after quote removal, a text of its own.
#[derive(Debug, Clone)]
enum Program {
    Written { start: u32, end: u32 },
    Read(Box<str>),
}

/// A rule's words: split at blanks when it is in plain words ([`plain_words`]), as the
/// scanner reads its first simple command otherwise.
fn words(text: &str) -> Vec<std::borrow::Cow<'_, str>> {
    use std::borrow::Cow;
    match plain_words(text) {
        Some(words) => words.into_iter().map(Cow::Borrowed).collect(),
        None => scan::candidate_commands(text)
            .ok()
            .and_then(|c| c.into_iter().next())
            .map(|c| c.into_iter().map(|w| Cow::Owned(w.text)).collect())
            .unwrap_or_default(),
    }
}

/// A validated set of deny rules.
///
/// The rules are kept in the order they were added, a rule given twice as often as it
/// was given (the first copy is the one that matches; [`DenyRules::iter`] shows each
/// rule once): adding one is a push, which an imported policy does for each of its
/// rules before every command (issue 25). Rules are found by their program by looking
/// through them, or by [`TextIndex`] in a set of more than [`index::LINEAR_MAX`].
#[derive(Debug, Clone, Default)]
pub struct DenyRules {
    rules: Store,
    /// Each rule's program and arguments, by position.
    parts: Vec<Parts>,
    /// Rules by their first word (a program name, or a path), for commands whose
    /// program is known.
    by_program: TextIndex,
}

/// Why the deny rules refuse a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DenyMatch {
    /// A rule matched one of the simple commands.
    Rule {
        rule: Box<str>,
        origin: Origin,
        /// The simple command, as words joined by spaces, that the rule caught.
        found: String,
    },
    /// The text is too large or too deeply wrapped to check in bounded time, so it
    /// cannot be shown to be free of denied commands.
    TooComplex,
}

/// The deny rule that matches a program about to be executed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecMatch {
    pub rule: Box<str>,
    pub origin: Origin,
}

impl DenyRules {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add(&mut self, raw: &str, origin: Origin) -> Result<(), RuleError> {
        self.add_with(raw, &origin)
    }

    /// [`DenyRules::add`] with an origin the caller keeps.
    pub fn add_with(&mut self, raw: &str, origin: &Origin) -> Result<(), RuleError> {
        let text = validate_rule(raw)?;
        let program = match plain_program(text) {
            Some(program) => {
                // Within the text, which is far shorter than 4 GiB (a command line).
                let start = program.as_ptr() as usize - text.as_ptr() as usize;
                let at = |n: usize| u32::try_from(n).map_err(|_| RuleError::NoProgram);
                Program::Written {
                    start: at(start)?,
                    end: at(start + program.len())?,
                }
            }
            None => match words(text).first() {
                Some(program) => Program::Read((**program).into()),
                None => return Err(RuleError::NoProgram),
            },
        };
        self.by_program.clear();
        self.rules.push(text, origin, false);
        self.parts.push(Parts {
            program,
            args: std::sync::OnceLock::new(),
        });
        Ok(())
    }

    /// Add every rule of `other` (already validated) after this set's.
    pub fn extend(&mut self, mut other: DenyRules) {
        if self.rules.is_empty() {
            *self = other;
            return;
        }
        self.by_program.clear();
        self.rules.append(other.rules);
        self.parts.append(&mut other.parts);
    }

    /// The number of rules, each counted once however often it was given.
    pub fn len(&self) -> usize {
        self.firsts().len()
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Each rule once (its first copy), in the order the rules were first given.
    pub fn iter(&self) -> impl Iterator<Item = (&str, Origin)> {
        self.firsts()
            .into_iter()
            .map(|i| (self.rules.text(i), self.rules.origin(i)))
    }

    /// The position of each rule's first copy.
    fn firsts(&self) -> Vec<usize> {
        let mut seen: HashSet<&str, RuleHashBuilder> = HashSet::default();
        (0..self.rules.len())
            .filter(|&i| seen.insert(self.rules.text(i)))
            .collect()
    }

    /// The positions of the rules whose program is `program`, in the order added.
    fn with_program<'a>(&'a self, program: &'a str) -> Box<dyn Iterator<Item = usize> + 'a> {
        let named = move |i: &usize| self.program(*i) == program;
        if self.rules.len() <= index::LINEAR_MAX {
            Box::new((0..self.rules.len()).filter(named))
        } else {
            let keys = || -> Box<dyn Iterator<Item = &str>> {
                Box::new((0..self.rules.len()).map(|i| self.program(i)))
            };
            Box::new(self.by_program.maybe_equal(keys, program).filter(named))
        }
    }

    /// Each program the rules name, once, in the order of the rules: a name (`rm`), or
    /// a path when the rule's first word has a slash (`/bin/rm`). For recognising a
    /// denied program under another name by what file it is; [`DenyRules::find_exec`]
    /// given that program's path then checks its arguments.
    pub fn program_names(&self) -> impl Iterator<Item = &str> {
        let mut seen: HashSet<&str, RuleHashBuilder> = HashSet::default();
        (0..self.rules.len())
            .map(|i| self.program(i))
            .filter(move |program| seen.insert(program))
    }

    /// Rule `i`'s program.
    fn program(&self, i: usize) -> &str {
        match &self.parts[i].program {
            Program::Written { start, end } => &self.rules.text(i)[*start as usize..*end as usize],
            Program::Read(program) => program,
        }
    }

    /// Rule `i`'s other words, read the first time they are needed.
    fn args(&self, i: usize) -> &RuleArgs {
        self.parts[i].args.get_or_init(|| {
            let words = words(self.rules.text(i));
            let rest = words.get(1..).unwrap_or_default();
            RuleArgs::new(self.program(i), rest)
        })
    }

    /// The first deny rule that catches any simple command in `command`.
    pub fn find(&self, command: &CommandText) -> Option<DenyMatch> {
        if self.rules.is_empty() {
            return None;
        }
        // Each candidate is matched as the scanner finds it, none is kept; the scan
        // still runs to the end, because a text too complex to read is refused as that
        // even when an earlier command matched.
        let mut first = None;
        let scanned = scan::for_each_candidate(command.as_str(), |candidate| {
            if first.is_none() {
                first = self.find_in(candidate).map(|i| DenyMatch::Rule {
                    rule: self.rules.text(i).into(),
                    origin: self.rules.origin(i),
                    found: shown(candidate),
                });
            }
        });
        match scanned {
            Ok(()) => first,
            Err(scan::TooComplex) => Some(DenyMatch::TooComplex),
        }
    }

    fn find_in(&self, command: &[Word]) -> Option<usize> {
        let first = &command[0];
        if first.dynamic {
            // The program is computed at run time: it could be any of them, with any
            // words after it.
            return (!self.rules.is_empty()).then_some(0);
        }
        let rest = || command[1..].iter().map(Arg::of_word);
        if let Some(pattern) = &first.pattern {
            // A glob: it could be any program it matches, and more words after it.
            return (0..self.rules.len()).find(|&i| {
                let program = self.program(i);
                (program == first.text || glob_could_be(pattern, true, program))
                    && self
                        .args(i)
                        .matched_by(std::iter::once(Arg::of_word(first)).chain(rest()))
            });
        }
        let name = scan::program_name(&first.text);
        let by_name = self.with_program(name);
        let by_path = (name != first.text)
            .then(|| self.with_program(first.text.as_str()))
            .into_iter()
            .flatten();
        by_name
            .chain(by_path)
            .find(|&i| self.args(i).matched_by(rest()))
    }

    /// The first deny rule that matches a program the kernel is about to run: the file
    /// `path` with the argument vector `argv`, read literally (no shell, no wrappers:
    /// a program that another one starts is an exec of its own).
    ///
    /// The program is known by the last component of `path` and by that of `argv[0]`
    /// (a multi-call binary such as busybox runs `rm` when `argv[0]` says `rm`); a rule
    /// whose first word has a slash matches `path` or `argv[0]` exactly. `busybox`,
    /// `toybox` and `coreutils` also run the program their first argument names. With
    /// an empty `argv` the program is `path`'s, with no arguments. Bytes that are not
    /// UTF-8 are compared as bytes.
    pub fn find_exec(&self, path: &[u8], argv: &[&[u8]]) -> Option<ExecMatch> {
        let i = self.exec_rule(path, argv)?;
        Some(ExecMatch {
            rule: self.rules.text(i).into(),
            origin: self.rules.origin(i),
        })
    }

    fn exec_rule(&self, path: &[u8], argv: &[&[u8]]) -> Option<usize> {
        if self.rules.is_empty() {
            return None;
        }
        let (arg0, args) = match argv.split_first() {
            Some((arg0, args)) => (Some(*arg0), args),
            None => (None, &[][..]),
        };
        let names = [Some(path), arg0];
        let programs = names
            .into_iter()
            .flatten()
            .flat_map(|p| [last_component(p), p])
            .map(|p| (p, args));
        let applet = names
            .into_iter()
            .flatten()
            .any(|p| MULTI_CALL.iter().any(|m| m.as_bytes() == last_component(p)))
            .then(|| args.split_first())
            .flatten();
        let applets = applet
            .into_iter()
            .flat_map(|(program, args)| [(last_component(program), args), (*program, args)]);
        programs.chain(applets).find_map(|(program, args)| {
            let program = std::str::from_utf8(program).ok()?;
            let literal = || args.iter().map(|a| Arg::literal(a));
            self.with_program(program)
                .find(|&i| self.args(i).matched_by(literal()))
        })
    }
}

/// The last component of a path, as bytes (`rm` for `/bin/rm`).
fn last_component(path: &[u8]) -> &[u8] {
    path.rsplit(|&b| b == b'/').next().unwrap_or(path)
}

/// A simple command as a refusal shows it: its words, each computed one as it was
/// written (`$G push`), never as nothing.
fn shown(command: &[Word]) -> String {
    command
        .iter()
        .map(|w| match (w.dynamic, w.shown()) {
            (false, text) => text,
            // Defensive: every computed word records its source.
            (true, "") => "(a word computed when the shell runs)",
            (true, shown) => shown,
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether a glob could expand to the rule word `r`; as the program (`first`), a rule
/// word without a `/` is a program name, matched by the glob's last component.
fn glob_could_be(pattern: &str, first: bool, r: &str) -> bool {
    if first && !r.contains('/') {
        scan::glob_matches(scan::program_name(pattern), r)
    } else {
        scan::glob_matches(pattern, r)
    }
}

/// The words of a rule written only in plain characters (letters, digits and `_./-`,
/// between blanks) whose first word the shell does not read as syntax: what the scanner
/// reads as the command as written, without running it. A policy's rules are read
/// before every command, and most are written so. `None` for any other rule.
fn plain_words(text: &str) -> Option<Vec<&str>> {
    plain_program(text)?;
    Some(text.split([' ', '\t']).filter(|w| !w.is_empty()).collect())
}

/// The bytes of a rule in plain words: letters, digits, `_./-`, and blanks.
const PLAIN: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] =
            c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'/' | b'-' | b' ' | b'\t');
        b += 1;
    }
    table
};

/// The first of [`plain_words`], found without splitting the rest.
fn plain_program(text: &str) -> Option<&str> {
    if !text.bytes().all(|b| PLAIN[usize::from(b)]) {
        return None;
    }
    let text = text.trim_start_matches([' ', '\t']);
    let end = text
        .bytes()
        .position(|b| b == b' ' || b == b'\t')
        .unwrap_or(text.len());
    let first = Some(&text[..end]).filter(|first| !first.is_empty())?;
    // The shell's words in plain characters are all lower-case letters: a program
    // name with anything else (most of an imported policy's) is looked up in no list.
    let syntax = first.bytes().all(|b| b.is_ascii_lowercase())
        && (crate::shells::RESERVED_WORDS.contains(&first)
            || crate::shells::PREFIX_WORDS.contains(&first));
    (!syntax).then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deny(rules: &[&str]) -> DenyRules {
        let mut d = DenyRules::new();
        for r in rules {
            d.add(r, Origin::Flag("--deny")).unwrap();
        }
        d
    }

    fn caught(rules: &[&str], command: &str) -> bool {
        deny(rules).find(&CommandText::new(command)).is_some()
    }

    fn found(rules: &[&str], command: &str) -> String {
        match deny(rules).find(&CommandText::new(command)) {
            Some(DenyMatch::Rule { found, .. }) => found,
            other => panic!("{command:?}: {other:?}"),
        }
    }

    /// Claude Code's start-up script runs `"$_cc_bin" ${1+"$@"}`, which every rule
    /// matches; the refusal showed that as `… …`.
    #[test]
    fn a_computed_word_is_shown_as_written_never_as_nothing() {
        let rule = ["git push --force"];
        assert_eq!(
            found(&rule, "x; \"$_cc_bin\" ${1+\"$@\"}"),
            "$_cc_bin ${1+\"$@\"}"
        );
        assert_eq!(found(&rule, "$G push --force"), "$G push --force");
        assert_eq!(found(&rule, "$(which git) push"), "$(which git) push");
        assert_eq!(found(&rule, "`which git` push"), "`which git` push");
        assert_eq!(found(&rule, "pre$1post"), "pre$1post");
        assert_eq!(found(&rule, "eval \"$CMD\""), "$CMD");
        assert_eq!(found(&rule, "env -S \"$X\""), "$X");
        for command in [
            "\"$_cc_bin\" ${1+\"$@\"}",
            "$@",
            "${X:-$(y)}",
            "`a` `b`",
            "$(",
            "${",
            "eval \"$A\" \"$B\"",
        ] {
            let shown = found(&rule, command);
            assert!(
                !shown.is_empty() && !shown.contains('…') && !shown.split(' ').any(str::is_empty),
                "{command:?} is shown as {shown:?}"
            );
        }
    }

    #[test]
    fn a_plain_prefix_is_caught() {
        assert!(caught(&["git push --force"], "git push --force"));
        assert!(caught(
            &["git push --force"],
            "git push --force origin main"
        ));
        assert!(!caught(&["git push --force"], "git push origin"));
        assert!(!caught(
            &["git push --force"],
            "git push --force-with-lease"
        ));
    }

    #[test]
    fn options_in_another_order_or_spelling_are_caught() {
        for command in [
            "rm -fr x",
            "rm -r -f x",
            "rm x -rf",
            "rm --recursive --force x",
            "rm --rec --forc x",
            "rm -Rf x",
            "sudo rm -vfr x",
            "bash -c 'rm -f -R x'",
        ] {
            assert!(caught(&["rm -rf"], command), "{command:?} was not caught");
        }
        for command in [
            "git push -f",
            "git push origin main --force",
            "git push origin +main",
            "git -C repo push --force",
            "git -c core.askPass=x --no-pager push -fq origin",
        ] {
            assert!(
                caught(&["git push --force"], command),
                "{command:?} was not caught"
            );
        }
        assert!(caught(&["git push"], "git -C repo push"));
        assert!(!caught(&["rm -rf"], "rm -r x"));
        assert!(!caught(&["rm -rf"], "rm -- -rf"));
        assert!(!caught(&["git push --force"], "git push origin main"));
        assert!(!caught(&["git push --force"], "git push -- -f"));
    }

    #[test]
    fn a_glob_that_could_be_an_option_counts_as_that_option() {
        assert!(caught(&["rm -rf"], "rm -[rR][f] x"));
        assert!(caught(&["rm -rf"], "rm --rec* -f x"));
        assert!(caught(&["rm -rf"], "rm -f -? x"));
        assert!(!caught(&["rm -rf"], "rm -f -[v] x"));
    }

    fn exec(rules: &[&str], path: &[u8], argv: &[&[u8]]) -> Option<String> {
        deny(rules).find_exec(path, argv).map(|m| m.rule.into())
    }

    #[test]
    fn an_exec_is_known_by_its_path_and_by_argv0() {
        let rules = ["rm -rf"];
        assert_eq!(
            exec(&rules, b"/usr/bin/rm", &[b"rm", b"-fr", b"/"]),
            Some("rm -rf".into())
        );
        assert_eq!(
            exec(&rules, b"/usr/bin/rm", &[b"x", b"-r", b"-f"]),
            Some("rm -rf".into())
        );
        // busybox runs the applet argv[0] names, or its first argument.
        assert!(exec(&rules, b"/bin/busybox", &[b"rm", b"-rf", b"/"]).is_some());
        assert!(exec(&rules, b"/bin/busybox", &[b"busybox", b"rm", b"-rf", b"/"]).is_some());
        assert!(
            exec(
                &rules,
                b"/bin/toybox",
                &[b"toybox", b"/bin/rm", b"-rf", b"/"]
            )
            .is_some()
        );
        assert!(exec(&rules, b"/bin/busybox", &[b"busybox", b"ls", b"-rf"]).is_none());
        assert!(exec(&rules, b"/usr/bin/rm", &[b"rm", b"-r", b"x"]).is_none());
        assert!(exec(&rules, b"/usr/bin/ls", &[b"ls", b"-rf"]).is_none());
    }

    #[test]
    fn an_exec_reads_its_argv_literally() {
        // No shell, no wrappers, nothing computed: each program another starts is an
        // exec of its own, checked then.
        assert!(exec(&["rm"], b"/bin/sh", &[b"sh", b"-c", b"rm -rf /"]).is_none());
        assert!(exec(&["rm"], b"/usr/bin/env", &[b"env", b"rm", b"x"]).is_none());
        assert!(exec(&["rm -rf"], b"/bin/rm", &[b"rm", b"$FLAGS", b"/"]).is_none());
        assert!(exec(&["rm -rf"], b"/bin/rm", &[b"rm", b"-*", b"/"]).is_none());
        assert!(exec(&["env"], b"/usr/bin/env", &[b"env", b"rm", b"x"]).is_some());
        let push = ["git push --force"];
        let argv: [&[u8]; 6] = [b"git", b"-C", b"repo", b"push", b"origin", b"+main"];
        assert!(exec(&push, b"/usr/bin/git", &argv).is_some());
        let argv: [&[u8]; 3] = [b"git", b"push", b"--force-with-lease"];
        assert!(exec(&push, b"/usr/bin/git", &argv).is_none());
    }

    #[test]
    fn an_exec_rule_with_a_slash_matches_that_path_or_argv0_exactly() {
        let rules = ["/bin/rm"];
        assert!(exec(&rules, b"/bin/rm", &[b"rm", b"x"]).is_some());
        assert!(exec(&rules, b"/bin/busybox", &[b"/bin/rm", b"x"]).is_some());
        assert!(exec(&rules, b"/usr/bin/rm", &[b"rm", b"x"]).is_none());
        assert!(exec(&rules, b"./bin/rm", &[b"bin/rm"]).is_none());
    }

    #[test]
    fn an_exec_with_an_empty_argv_is_its_path_alone() {
        assert!(exec(&["rm"], b"/bin/rm", &[]).is_some());
        assert!(exec(&["rm -rf"], b"/bin/rm", &[]).is_none());
        assert!(exec(&["rm"], b"", &[]).is_none());
        assert!(exec(&["rm"], b"/", &[b""]).is_none());
    }

    #[test]
    fn an_exec_that_is_not_utf8_is_compared_as_bytes() {
        let rules = ["rm -rf", "git push origin"];
        assert!(exec(&rules, b"/bin/rm", &[b"rm", b"-rf", b"\xff\xfe"]).is_some());
        assert!(exec(&rules, b"/bin/\xffrm", &[b"rm", b"-rf"]).is_some());
        assert!(exec(&rules, b"/bin/\xffrm", &[b"\xffrm", b"-rf"]).is_none());
        // A byte rm does not know in a cluster is still a cluster.
        assert!(exec(&rules, b"/bin/rm", &[b"rm", b"-\xffrf"]).is_some());
        assert!(exec(&rules, b"/bin/rm", &[b"rm", b"-\xff", b"-r"]).is_none());
        let argv: [&[u8]; 3] = [b"git", b"push", b"orig\xffin"];
        assert!(exec(&rules, b"/usr/bin/git", &argv).is_none());
        assert!(exec(&rules, b"\xff", &[b"\xff", b"-\xff", b"--\xff=\xff"]).is_none());
    }

    /// `plain_program` looks in the shell's word lists only for lower-case words: every
    /// word there that a rule in plain words could start with is one.
    #[test]
    fn the_shells_words_in_plain_characters_are_lower_case() {
        let words = crate::shells::RESERVED_WORDS
            .iter()
            .chain(&crate::shells::PREFIX_WORDS);
        for word in words {
            if plain_program(&format!("{word} x")).is_some() {
                panic!("{word:?} is read as a program");
            }
        }
    }

    #[test]
    fn the_program_names_are_each_rules_first_word_once() {
        let rules = deny(&["rm -rf", "git push --force", "rm", "/bin/rm", "git push"]);
        let names: Vec<&str> = rules.program_names().collect();
        assert_eq!(names, ["rm", "git", "/bin/rm"]);
        assert_eq!(DenyRules::new().program_names().count(), 0);
    }

    #[test]
    fn repeated_blanks_do_not_hide_a_command() {
        assert!(caught(&["git push --force"], "git   push\t\t--force"));
        assert!(caught(&["git push --force"], "  git push --force  "));
    }

    #[test]
    fn shell_syntax_does_not_hide_a_command() {
        let rule = ["rm -rf"];
        for command in [
            "ls; rm -rf /",
            "ls && rm -rf /",
            "ls || rm -rf /",
            "ls | rm -rf /",
            "ls & rm -rf /",
            "ls\nrm -rf /",
            "echo $(rm -rf /)",
            "echo `rm -rf /`",
            "(rm -rf /)",
            "{ rm -rf /; }",
            "FOO=1 rm -rf /",
            "env rm -rf /",
            "env -i FOO=bar rm -rf /",
            "nohup rm -rf /",
            "timeout 5 rm -rf /",
            "timeout -s KILL 5 rm -rf /",
            "nice -n 5 rm -rf /",
            "sudo rm -rf /",
            "command rm -rf /",
            "exec rm -rf /",
            "/bin/rm -rf /",
            "\"rm\" -rf /",
            "r'm' -rf /",
            "\\rm -rf /",
            "bash -c 'rm -rf /'",
            "sh -c \"cd /; rm -rf .\"",
            "eval 'rm -rf /'",
            "$'\\x72\\x6d' -rf /",
            "{rm,-rf,/}",
            ">/dev/null rm -rf /",
            "cat <(rm -rf /)",
        ] {
            assert!(caught(&rule, command), "{command:?} was not caught");
        }
    }

    #[test]
    fn a_computed_program_name_is_caught() {
        assert!(caught(&["rm -rf"], "$RM -rf /"));
        assert!(caught(&["rm -rf"], "$(which rm) -rf /"));
        assert!(caught(&["rm -rf"], "rm $FLAGS /"));
    }

    #[test]
    fn a_computed_word_may_stand_for_several() {
        assert!(caught(&["rm -rf"], "X='rm -rf /'; $X"));
        assert!(caught(&["rm -rf"], "\"$@\""));
        assert!(caught(&["git push --force"], "git $ARGS"));
        assert!(caught(&["rm -rf"], "eval \"$CMD\""));
        assert!(caught(&["rm -rf"], "bash -c \"$CMD\""));
        assert!(caught(&["rm"], "env -S \"$CMD\""));
        assert!(caught(&["rm -rf"], "env -S \"rm $X\""));
        assert!(caught(&["rm -rf"], "env --split-string=\"rm $X\""));
        assert!(caught(&["rm"], "repeat 3 rm x"));
        // A computed word after a word that already differs changes nothing.
        assert!(!caught(&["rm -rf"], "echo $X"));
    }

    #[test]
    fn reserved_words_do_not_hide_a_command() {
        assert!(caught(&["rm"], "for f in a; do rm -rf /; done"));
        assert!(caught(&["rm"], "if true; then rm x; fi"));
        assert!(caught(&["rm"], "! rm x"));
    }

    #[test]
    fn deep_nesting_is_refused() {
        let text = format!("{}ls", "eval ".repeat(20));
        assert_eq!(
            deny(&["rm"]).find(&CommandText::new(text)),
            Some(DenyMatch::TooComplex)
        );
    }

    #[test]
    fn quoted_text_is_data_not_a_command() {
        assert!(!caught(&["rm -rf"], "echo 'rm -rf /'"));
        assert!(!caught(&["rm -rf"], "grep -r 'rm -rf' ."));
        assert!(!caught(&["rm -rf"], "echo rm -rf"));
    }

    #[test]
    fn a_rule_with_a_path_matches_that_path_only() {
        assert!(caught(&["/bin/rm"], "/bin/rm x"));
        assert!(!caught(&["/bin/rm"], "rm x"));
    }

    #[test]
    fn a_rule_naming_a_wrapper_catches_the_wrapper() {
        assert!(caught(&["sudo"], "sudo ls"));
        assert!(caught(&["sudo"], "FOO=1 sudo ls"));
        assert!(caught(&["env"], "env ls"));
        assert!(caught(&["nohup"], "env nohup ls"));
    }

    #[test]
    fn the_match_reports_the_rule_and_the_command() {
        let m = deny(&["rm -rf"])
            .find(&CommandText::new("ls; rm  -rf /"))
            .unwrap();
        assert_eq!(
            m,
            DenyMatch::Rule {
                rule: "rm -rf".into(),
                origin: Origin::Flag("--deny"),
                found: "rm -rf /".into()
            }
        );
    }

    #[test]
    fn bad_deny_rules_are_refused() {
        let mut d = DenyRules::new();
        assert_eq!(d.add("  ", Origin::BuiltIn), Err(RuleError::Blank));
        assert_eq!(
            d.add("rm; ls", Origin::BuiltIn),
            Err(RuleError::ShellChar(';'))
        );
        assert_eq!(d.add("FOO=1", Origin::BuiltIn), Err(RuleError::NoProgram));
    }

    #[test]
    fn a_command_too_complex_to_check_is_refused() {
        let text = format!("{}ls", "env ".repeat(20_000));
        assert_eq!(
            deny(&["rm"]).find(&CommandText::new(text.clone())),
            Some(DenyMatch::TooComplex)
        );
        // Without deny rules there is nothing to check.
        assert_eq!(DenyRules::new().find(&CommandText::new(text)), None);
    }

    #[test]
    fn invalid_utf8_still_meets_deny_rules() {
        let d = deny(&["rm -rf"]);
        let command = CommandText::from_bytes(b"rm -rf /\xff");
        assert!(d.find(&command).is_some());
    }

    /// The reading `find` had before it matched candidates as the scanner found them:
    /// every candidate collected first, then the first that a rule catches.
    fn find_after_collecting(rules: &DenyRules, text: &str) -> Option<DenyMatch> {
        if rules.is_empty() {
            return None;
        }
        let Ok(candidates) = scan::candidate_commands(text) else {
            return Some(DenyMatch::TooComplex);
        };
        candidates.iter().find_map(|c| {
            rules.find_in(c).map(|i| DenyMatch::Rule {
                rule: rules.rules.text(i).into(),
                origin: rules.rules.origin(i),
                found: shown(c),
            })
        })
    }

    /// A text too complex to read is refused as that even when a command before the
    /// point where it became too complex matches: the scan runs to the end.
    #[test]
    fn a_match_before_the_text_turns_too_complex_is_still_too_complex() {
        for text in [
            format!("rm -rf /; echo {}", "{a,b}".repeat(30)),
            format!("rm -rf /\n{}ls", "eval ".repeat(20)),
            format!("rm -rf /; {}ls", "env ".repeat(20_000)),
        ] {
            assert_eq!(
                deny(&["rm -rf"]).find(&CommandText::new(text.clone())),
                Some(DenyMatch::TooComplex),
                "{text:.60}"
            );
            assert_eq!(
                find_after_collecting(&deny(&["rm -rf"]), &text),
                Some(DenyMatch::TooComplex)
            );
        }
    }

    proptest::proptest! {
        /// Matching as the scanner goes gives the same answer as collecting every
        /// candidate first: the same rule, the same command shown, the same refusals
        /// as too complex.
        #[test]
        fn matching_while_scanning_agrees_with_matching_every_candidate_after(
            pieces in proptest::collection::vec(
                proptest::sample::select(vec![
                    "rm", "-rf", "/", "git", "push", "--force", "x", "env", "-S", "'rm x'",
                    "sudo", "-u", "nobody", "timeout", "5", "nice", "-n", "bash", "-c",
                    "eval", "$X", "\"$@\"", "$(", "`", "'", "\"", ")", "(", "{", "}",
                    "{a,b}", "{1..3}", "r[m]", "*", ";", "&&", "|", "\n", "<<EOF", "EOF",
                    "cat", "<<'E'", "E", "find", "-exec", "+", "\\;", "watch", "FOO=1",
                    "--chd", "/tmp", "case", "esac", "in", "$'\\x72m'", "#", "2>&1",
                ]),
                0..24,
            ),
            glue in proptest::collection::vec(
                proptest::sample::select(vec![" ", "", "\n", "; "]),
                24,
            ),
            set in 0usize..3,
        ) {
            let mut text = String::new();
            for (i, piece) in pieces.iter().enumerate() {
                text.push_str(piece);
                text.push_str(glue[i]);
            }
            let rules = deny(
                [&["rm -rf", "git push --force", "curl"][..], &["rm"][..], &["sudo", "x"][..]][set],
            );
            proptest::prop_assert_eq!(
                rules.find(&CommandText::new(text.clone())),
                find_after_collecting(&rules, &text),
                "{:?}", text
            );
        }
    }

    #[test]
    fn a_glob_matches_every_rule_whose_words_it_could_expand_to() {
        for (rules, command) in [
            (&["rm"][..], "/usr/bin/r[m] x"),
            (&["rm"][..], "r? x"),
            (&["rm"][..], "* x"),
            (&["/bin/rm"][..], "/bin/r* x"),
            (&["rm -rf"][..], "rm -* x"),
            (&["rm -rf"][..], "rm -r[f] x"),
            // `*` may be several file names: `rm` and `-rf`.
            (&["rm -rf"][..], "* x"),
            (&["git push"][..], "git pu?h"),
        ] {
            assert!(caught(rules, command), "{rules:?} {command:?}");
        }
        for (rules, command) in [
            (&["rm"][..], "r[n] x"),
            (&["rm"][..], "'r[m]' x"),
            (&["rm -rf"][..], "rm *.o"),
            (&["rm"][..], "ls r*"),
            (&["git push"][..], "git a*"),
        ] {
            assert!(!caught(rules, command), "{rules:?} {command:?}");
        }
    }

    use proptest::prelude::*;

    proptest! {
        /// The shortcut for plain rules reads what the scanner reads.
        #[test]
        fn plain_rules_read_as_the_scanner_reads_them(
            words in proptest::collection::vec(
                proptest::prop_oneof![
                    "[a-z0-9_./-]{1,8}",
                    proptest::sample::select(crate::shells::RESERVED_WORDS.to_vec()).prop_map(str::to_owned),
                    proptest::sample::select(crate::shells::PREFIX_WORDS.to_vec()).prop_map(str::to_owned),
                    proptest::sample::select(vec!["sudo", "env", "time", "exec", "nohup", "-", "--", ".", "..", "/"]).prop_map(str::to_owned),
                ],
                1..5,
            ),
            blanks in proptest::collection::vec("[ \t]{1,3}", 5),
        ) {
            let mut text = String::new();
            for (i, word) in words.iter().enumerate() {
                if i > 0 {
                    text.push_str(&blanks[i]);
                }
                text.push_str(word);
            }
            if let Some(plain) = plain_words(&text) {
                let scanned: Vec<String> = scan::candidate_commands(&text)
                    .unwrap()
                    .into_iter()
                    .next()
                    .unwrap()
                    .into_iter()
                    .map(|w| w.text)
                    .collect();
                proptest::prop_assert_eq!(plain, scanned, "{:?}", text);
            }
        }
    }

    proptest::proptest! {
        /// Rules kept as given (a copy of a rule as often as it was given), looked
        /// through or found by the index, catch what the same rules given once catch,
        /// by the same rule from the same origin, and show each rule once.
        #[test]
        fn copies_and_the_index_change_nothing_that_is_found(
            rules in proptest::collection::vec("(rm|git|tar|/bin/rm)( (-rf|push|-f|x)){0,2}", 1..10),
            command in "(rm|git|tar|/bin/rm|sudo rm|busybox rm)( (-rf|-r|-f|push|x|-fr)){0,3}",
        ) {
            let origin = |i: usize| Origin::File { path: std::path::Path::new("f").into(), line: i as u32 };
            let mut once = DenyRules::new();
            let mut given: Vec<&str> = Vec::new();
            for (i, rule) in rules.iter().enumerate() {
                if !given.contains(&rule.as_str()) {
                    given.push(rule);
                    once.add(rule, origin(i)).unwrap();
                }
            }
            let text = CommandText::new(command.clone());
            let argv: Vec<&[u8]> = command.split(' ').map(str::as_bytes).collect();
            for filler in [0, index::LINEAR_MAX + 1] {
                let mut set = DenyRules::new();
                for n in 0..filler {
                    set.add(&format!("filler{n} x"), Origin::BuiltIn).unwrap();
                }
                // An index built before the rules are added must not hide them.
                proptest::prop_assert_eq!(set.find(&text), None);
                for (i, rule) in rules.iter().enumerate() {
                    set.add(rule, origin(i)).unwrap();
                }
                proptest::prop_assert_eq!(set.find(&text), once.find(&text));
                proptest::prop_assert_eq!(
                    set.find_exec(argv[0], &argv),
                    once.find_exec(argv[0], &argv)
                );
                let shown: Vec<_> = set.iter().skip(filler).collect();
                proptest::prop_assert_eq!(shown, once.iter().collect::<Vec<_>>());
                proptest::prop_assert_eq!(set.len(), once.len() + filler);
                let names: Vec<_> = set.program_names().skip(filler).collect();
                proptest::prop_assert_eq!(names, once.program_names().collect::<Vec<_>>());
            }
        }
    }
}
