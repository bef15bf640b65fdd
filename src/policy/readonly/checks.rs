//! The checks of the entries whose arguments are more than an option list: `sed` scripts,
//! `find` primaries, `grep`'s recursion, `jq` filters and git's global options and
//! subcommands.
//!
//! Each check refuses what it does not understand; the lists it reads are in the table.

use super::getopt::{Opt, glob_as_option, glob_moves_words, parse_options, refused_long_option};
use super::option_lists::{
    FIND_REFUSED, GIT_BRANCH, GIT_GLOBAL, GIT_GLOBAL_REFUSED, GIT_SUB_EXACT, GIT_SUB_REFUSED, SED,
};
use super::table::ENTRIES;
use super::words::Word;
use super::{Check, Entry, GitSub, NotReadOnly};

// ---------------------------------------------------------------------------------------
// sed

pub(super) fn check_sed(entry: &Entry, args: &[Word]) -> Result<(), NotReadOnly> {
    let parsed = parse_options(entry, &SED, args)?;
    let quiet = parsed
        .opts
        .iter()
        .any(|(o, _)| matches!(o, Opt::Short('n') | Opt::Long("quiet" | "silent")));
    if !quiet {
        return Err(entry.refuse(
            "`sed` without `-n` is not in the preset; write `sed -n` and print commands \
             (`sed -n '5,10p' FILE`)"
                .to_owned(),
        ));
    }
    let mut scripts: Vec<&str> = parsed
        .opts
        .iter()
        .filter(|(o, _)| matches!(o, Opt::Short('e') | Opt::Long("expression")))
        .filter_map(|(_, v)| *v)
        .collect();
    if scripts.is_empty() {
        // The script is the first operand. A pattern in it, or before it, could change
        // which word that is.
        let Some(&at) = parsed.operands.first() else {
            return Err(entry.refuse("`sed` without a script".to_owned()));
        };
        if let Some(word) = args[..=at].iter().find(|w| w.expands) {
            return Err(glob_moves_words(entry, word));
        }
        scripts.push(&args[at].text);
    }
    for script in scripts {
        if let Err(why) = sed_script(script) {
            return Err(entry.refuse(format!("`sed`: the script `{script}` {why}")));
        }
    }
    Ok(())
}

/// A cursor over a sed script.
struct Script<'a> {
    rest: &'a str,
}

impl Script<'_> {
    fn peek(&self) -> Option<char> {
        self.rest.chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.rest = &self.rest[c.len_utf8()..];
        Some(c)
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.bump();
        }
    }

    fn digits(&mut self) -> bool {
        let mut any = false;
        while matches!(self.peek(), Some('0'..='9')) {
            self.bump();
            any = true;
        }
        any
    }

    /// Everything up to `delimiter`, which is consumed. No escapes exist here: the
    /// command text has no backslash.
    fn until(&mut self, delimiter: char) -> Result<(), &'static str> {
        loop {
            match self.bump() {
                None => return Err("has an unterminated regular expression"),
                Some(c) if c == delimiter => return Ok(()),
                Some(_) => {}
            }
        }
    }

    /// `/regex/` and its `I`/`M` flags.
    fn regex_address(&mut self) -> Result<(), &'static str> {
        self.until('/')?;
        while matches!(self.peek(), Some('I' | 'M')) {
            self.bump();
        }
        Ok(())
    }
}

/// Whether `script` is one print-only sed command: `[address[,address]][!]command`, the
/// command one of `p = l q Q`, or `s` with harmless flags.
fn sed_script(script: &str) -> Result<(), &'static str> {
    let mut s = Script { rest: script };
    s.blanks();
    if s.eat('/') {
        s.regex_address()?;
    } else if s.digits() && s.eat('~') && !s.digits() {
        return Err("has a `first~step` address without a step");
    }
    s.blanks();
    if s.eat(',') {
        s.blanks();
        if s.eat('/') {
            s.regex_address()?;
        } else {
            if !s.eat('+') {
                s.eat('~');
            }
            if !s.digits() {
                return Err("has an address range without an end");
            }
        }
        s.blanks();
    }
    if s.eat('!') {
        s.blanks();
    }
    match s.bump() {
        Some('p' | '=') => {}
        Some('l' | 'q' | 'Q') => {
            s.blanks();
            s.digits();
        }
        Some('s') => {
            let Some(delimiter) = s.bump().filter(|c| c.is_ascii_punctuation()) else {
                return Err("has an `s` command with an unusual delimiter");
            };
            s.until(delimiter)?;
            s.until(delimiter)?;
            while let Some(flag) = s.peek() {
                match flag {
                    'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9' => {
                        s.bump();
                    }
                    'e' => return Err("has the `s` flag `e`, which runs the line as a command"),
                    'w' => return Err("has the `s` flag `w`, which writes a file"),
                    _ => break,
                }
            }
        }
        Some('e') => return Err("has the command `e`, which runs a command"),
        Some('w' | 'W') => return Err("has a `w` command, which writes a file"),
        Some('r' | 'R') => return Err("has an `r` command, which reads a file gate cannot see"),
        Some(_) => return Err("has a command that is not one of `p = l q Q s`"),
        None => return Err("has no command"),
    }
    s.blanks();
    if s.peek().is_some() {
        return Err("has more after its command");
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// find

pub(super) fn check_find(entry: &Entry, args: &[Word]) -> Result<(), NotReadOnly> {
    for word in args {
        if let Some((primary, why)) = FIND_REFUSED.iter().find(|(p, _)| *p == word.text) {
            return Err(entry.refuse(format!("`find`: `{primary}` {why}")));
        }
        if word.option_like {
            return Err(glob_as_option(entry, word));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// grep

/// grep's short options that take a value: a cluster ends at one (`-e PATTERN`,
/// `-f FILE`, `-A NUM`).
pub(super) const GREP_VALUES: &str = "ABCDdefm";

/// grep's long options that are refused; any prefix of them too, as getopt reads one.
const GREP_REFUSED_LONG: [(&str, &str); 2] = [
    (
        "dereference-recursive",
        "follows every link under the directories it searches, which gate has not looked at",
    ),
    ("devices", "reads the devices it meets while recursing"),
];

pub(super) fn check_grep(entry: &Entry, args: &[Word]) -> Result<(), NotReadOnly> {
    for word in args {
        let text = word.text.as_str();
        if text == "--" {
            break;
        }
        if let Some(long) = text.strip_prefix("--") {
            let name = long.split_once('=').map_or(long, |(n, _)| n);
            if let Some(refused) = refused_long_option(entry, &GREP_REFUSED_LONG, name) {
                return Err(refused);
            }
            continue;
        }
        let Some(cluster) = text.strip_prefix('-') else {
            continue;
        };
        for c in cluster.chars() {
            let why = match c {
                'R' => GREP_REFUSED_LONG[0].1,
                'D' => GREP_REFUSED_LONG[1].1,
                _ if GREP_VALUES.contains(c) => break,
                _ => continue,
            };
            return Err(entry.refuse(format!("`{}`: the option `-{c}` {why}", entry.name)));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// jq

/// jq 1.6's options without a value.
const JQ_FLAGS: &str = "nrjascCMSeRhV";
const JQ_LONG: [&str; 21] = [
    "--tab",
    "--seq",
    "--stream",
    "--stream-errors",
    "--unbuffered",
    "--slurp",
    "--raw-input",
    "--null-input",
    "--compact-output",
    "--color-output",
    "--monochrome-output",
    "--ascii-output",
    "--sort-keys",
    "--raw-output",
    "--join-output",
    "--exit-status",
    "--help",
    "--version",
    "--build-configuration",
    "--args",
    "--jsonargs",
];
/// jq's options with one value, and with two (a name and a value or file).
const JQ_ONE: [&str; 2] = ["--indent", "--library-path"];
const JQ_TWO: [&str; 4] = ["--arg", "--argjson", "--slurpfile", "--rawfile"];

/// Names a jq filter may not use: the environment, and modules read from files.
const JQ_REFUSED: [(&str, &str); 7] = [
    ("env", "the environment, where agents keep their API keys"),
    ("import", "a module from a file"),
    ("include", "a module from a file"),
    ("modulemeta", "a module's metadata, from a file"),
    ("get_search_list", "where modules are looked for"),
    ("get_prog_origin", "where the program is"),
    ("get_jq_origin", "where jq is"),
];

pub(super) fn check_jq(entry: &Entry, args: &[Word]) -> Result<(), NotReadOnly> {
    let mut filter = None;
    let mut positional = false;
    let mut at = 0;
    while let Some(word) = args.get(at) {
        at += 1;
        let text = word.text.as_str();
        if positional || text == "-" || !text.starts_with('-') {
            filter.get_or_insert(text);
            continue;
        }
        if text == "--" {
            positional = true;
            continue;
        }
        if text.starts_with("--") {
            if JQ_LONG.contains(&text) {
                continue;
            }
            if JQ_ONE.contains(&text) {
                at += 1;
                continue;
            }
            if JQ_TWO.contains(&text) {
                at += 2;
                continue;
            }
            return Err(entry.refuse(if text == "--from-file" {
                "`jq`: `--from-file` reads the program from a file, which gate cannot see"
                    .to_owned()
            } else {
                format!("`jq`: the option `{text}` is not one the preset knows")
            }));
        }
        for (i, c) in text.char_indices().skip(1) {
            match c {
                _ if JQ_FLAGS.contains(c) => {}
                'L' => {
                    if i + 1 == text.len() {
                        at += 1;
                    }
                    break;
                }
                'f' => {
                    return Err(entry.refuse(
                        "`jq`: `-f` reads the program from a file, which gate cannot see"
                            .to_owned(),
                    ));
                }
                _ => {
                    return Err(entry.refuse(format!(
                        "`jq`: the option `-{c}` is not one the preset knows"
                    )));
                }
            }
        }
    }
    match filter.map(jq_filter) {
        Some(Err((name, what))) => Err(entry.refuse(format!(
            "`jq`: the filter uses `{name}`, which reads {what}"
        ))),
        _ => Ok(()),
    }
}

/// The first refused name a jq filter calls, if any. A name right after one `.` is a
/// field (`.env`), a name inside `"…"` is text, and `#` starts a comment; the command
/// has no backslash, so strings hold no escapes or interpolation.
fn jq_filter(filter: &str) -> Result<(), (&'static str, &'static str)> {
    let chars: Vec<char> = filter.chars().collect();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        match c {
            '"' => {
                i += 1;
                while chars.get(i).is_some_and(|&q| q != '"') {
                    i += 1;
                }
                i += 1;
            }
            '#' => {
                while chars.get(i).is_some_and(|&n| n != '\n') {
                    i += 1;
                }
            }
            _ if c.is_ascii_alphabetic() || c == '_' => {
                let start = i;
                while chars
                    .get(i)
                    .is_some_and(|&n| n.is_ascii_alphanumeric() || n == '_')
                {
                    i += 1;
                }
                let name: String = chars[start..i].iter().collect();
                let field =
                    start >= 1 && chars[start - 1] == '.' && (start < 2 || chars[start - 2] != '.');
                if !field {
                    if let Some(refused) = JQ_REFUSED.iter().find(|(r, _)| *r == name) {
                        return Err(*refused);
                    }
                }
            }
            _ => i += 1,
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// git

/// The git entry, and where the words after its subcommand start in `args`.
pub(super) fn check_git(args: &[Word]) -> Result<(&'static Entry, usize), NotReadOnly> {
    let mut at = 0;
    while let Some(word) = args.get(at).filter(|w| w.text.starts_with('-')) {
        let text = word.text.as_str();
        if word.expands {
            return Err(NotReadOnly::plain(format!(
                "`git`: the unquoted pattern `{text}` could expand to any global option"
            )));
        }
        if !GIT_GLOBAL.contains(&text) {
            let name = text.split_once('=').map_or(text, |(n, _)| n);
            let why = GIT_GLOBAL_REFUSED.iter().find(|(o, _)| *o == name).map_or(
                "is not one of the global options the preset allows",
                |(_, w)| w,
            );
            return Err(NotReadOnly::plain(format!(
                "`git`: the global option `{text}` {why}"
            )));
        }
        at += 1;
    }
    let Some(sub) = args.get(at) else {
        return Err(NotReadOnly::plain(
            "`git` without a subcommand is not in the preset".to_owned(),
        ));
    };
    let entry = ENTRIES
        .iter()
        .find(|e| {
            matches!(e.check, Check::Git(_)) && e.name.strip_prefix("git ") == Some(&sub.text)
        })
        .filter(|_| !sub.expands)
        .ok_or_else(|| {
            NotReadOnly::plain(format!("`git {}` is not in the read-only preset", sub.text))
        })?;
    let rest = &args[at + 1..];
    match entry.check {
        Check::Git(GitSub::Branch) => parse_options(entry, &GIT_BRANCH, rest).map(drop),
        Check::Git(GitSub::Grep) => {
            check_git_words(entry, rest).and_then(|()| check_git_grep_short(entry, rest))
        }
        _ => check_git_words(entry, rest),
    }
    .map(|()| (entry, at + 1))
}

/// `git grep`'s short options: `-O` in a cluster, unless a letter before it takes the
/// rest of the word as its value (`-e`, `-f`, `-A`, `-B`, `-C`, `-m`). A word that is the
/// value of the option before it is checked too, so `-e -O` is asked about.
fn check_git_grep_short(entry: &Entry, rest: &[Word]) -> Result<(), NotReadOnly> {
    for word in rest {
        let Some(cluster) = word.text.strip_prefix('-') else {
            continue;
        };
        if cluster.starts_with('-') {
            continue;
        }
        for c in cluster.chars() {
            if c == 'O' {
                return Err(entry.refuse(format!(
                    "`git grep`: `-O` in `{}` runs the pager, or the program given, on \
                     the files found",
                    word.text
                )));
            }
            if "efABCm".contains(c) {
                break;
            }
        }
    }
    Ok(())
}

/// Every word after the subcommand: no refused option or abbreviation of one, wherever
/// it is (even as another option's value or after `--`), and no pattern that could
/// become an option.
fn check_git_words(entry: &Entry, rest: &[Word]) -> Result<(), NotReadOnly> {
    for word in rest {
        if word.option_like {
            return Err(glob_as_option(entry, word));
        }
        let Some(long) = word.text.strip_prefix("--") else {
            continue;
        };
        let name = long.split_once('=').map_or(long, |(n, _)| n);
        if name.is_empty() || GIT_SUB_EXACT.contains(&name) {
            continue;
        }
        if let Some(refused) = refused_long_option(entry, &GIT_SUB_REFUSED, name) {
            return Err(refused);
        }
    }
    Ok(())
}
