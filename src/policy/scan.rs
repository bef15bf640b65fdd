//! A conservative reading of shell text into the simple commands it could run, for deny
//! rules.
//!
//! Allow rules never need this: a command with any shell character matches no allow
//! rule. Deny rules are the opposite case: they must still catch a denied command that is
//! hidden behind shell syntax (`x; rm -rf /`, `$(rm -rf /)`, `FOO=1 rm -rf /`,
//! `env nohup timeout 5 rm -rf /`, `bash -c 'rm -rf /'`). So this module over-approximates:
//! every piece of text that a shell might run as a command comes out as one
//! [`SimpleCommand`], with quotes removed, assignments and redirections dropped, and each
//! known wrapper peeled off in turn. A word whose value is only known when the shell runs
//! (`$VAR`, `$(…)`) is marked dynamic, and a deny rule treats it as matching anything.
//!
//! It is not a shell parser and does not try to be: it never fails, never panics, and when
//! it cannot tell it errs towards finding more commands. Deny rules are a safety net;
//! the `safe` level's sandbox is the boundary.

use crate::shells::{self, ANY_SHELL, Quoting};

/// One word of a simple command, after quote removal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub text: String,
    /// Part of the word comes from an expansion or substitution (`$X`, `${X}`, `$(…)`,
    /// `` `…` ``), so its real value is unknown until the shell runs.
    pub dynamic: bool,
    /// The word for messages when it is not [`Word::text`]: a computed word, with each
    /// expansion or substitution as it was written (`$G`, `${1+"$@"}`, `$(…)` with its
    /// text), so that it is never shown as nothing. See [`Word::shown`].
    pub source: Option<String>,
    /// The word holds unquoted glob characters (`r[m]`, `/usr/bin/r?`, `*`): the shell
    /// replaces it with the names of the files it matches, so it stands for any words
    /// that match this pattern (quoted characters escaped with `\`). See
    /// [`glob_matches`].
    pub pattern: Option<String>,
}

impl AsRef<str> for Word {
    fn as_ref(&self) -> &str {
        &self.text
    }
}

impl Word {
    /// The word as a message shows it.
    pub fn shown(&self) -> &str {
        self.source.as_deref().unwrap_or(&self.text)
    }

    fn computed(text: String, source: String) -> Word {
        Word {
            text,
            dynamic: true,
            source: Some(source),
            pattern: None,
        }
    }
}

/// The words of one simple command.
pub type SimpleCommand = Vec<Word>;

/// How deep `bash -c '…'`, `eval …` and `env -S …` strings are followed.
const MAX_NESTED_SHELLS: usize = 8;
/// How deep text inside text (a backtick substitution inside another, a here-document
/// read as a script) is read.
const MAX_NESTED_TEXT: usize = 32;
/// The most words one word's brace expansion may produce.
const MAX_BRACE_WORDS: usize = 1 << 16;
/// The most characters brace expansion may produce and here-documents, substitutions
/// and nested shell strings may make the lexer read again, over the whole text. Far
/// above any real command (one argument is at most 128 KiB on Linux); past it the text
/// is reported, not ground through.
const MAX_WORK_CHARS: usize = 1 << 23;
/// The most ways one wrapper's options may be read (an abbreviated or unknown long
/// option is read both with and without a value).
const MAX_WRAPPER_READINGS: usize = 64;

/// The most words all candidates together may hold. Real commands stay far below; a
/// text past it is reported rather than ground through (wrappers make the work
/// quadratic in the number of words).
const MAX_CANDIDATE_WORDS: usize = 1 << 20;

/// The text is too large or too deeply wrapped to be read in bounded time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooComplex;

/// Every simple command that `text` could run, each in every form a deny rule should see:
/// as written (after assignments), and again after each wrapper (`env`, `nohup`, `sudo`…)
/// is removed.
pub fn candidate_commands(text: &str) -> Result<Vec<SimpleCommand>, TooComplex> {
    let mut all = Vec::new();
    for_each_candidate(text, |command| all.push(command.to_vec()))?;
    Ok(all)
}

/// [`candidate_commands`] without collecting them: `visit` sees each candidate, in the
/// same order, as it is found. When the text turns out too complex, the commands
/// visited so far are only part of it, and the answer is `Err`.
///
/// Where shells read the same text differently ([`Quoting`]: dash has no `$'…'` or
/// `$"…"` strings, so its quote can end where bash's does not, and reads `&>` as `&`
/// then `>`; busybox sh and zsh have `$'…'` but no `$"…"`), every reading counts. The
/// text is read as bash reads it, then again in each reading that reads a form in it
/// differently, and the commands of every reading are candidates. gate's own `-c`
/// string may go to any shell, so it takes every reading ([`ANY_SHELL`]); a string
/// handed to a shell by name (`dash -c …`) takes that shell's readings
/// ([`shells::Dialect::readings`]), whatever reading found it.
pub fn for_each_candidate(text: &str, mut visit: impl FnMut(&[Word])) -> Result<(), TooComplex> {
    let mut out = Candidates {
        visit: &mut visit,
        words: 0,
        budget: Budget::default(),
    };
    collect_readings(text, ANY_SHELL, 0, &mut out)
}

struct Candidates<'v> {
    visit: &'v mut dyn FnMut(&[Word]),
    words: usize,
    budget: Budget,
}

impl Candidates<'_> {
    fn push(&mut self, command: &[Word]) -> Result<(), TooComplex> {
        self.words += command.len();
        if self.words > MAX_CANDIDATE_WORDS {
            return Err(TooComplex);
        }
        (self.visit)(command);
        Ok(())
    }
}

/// The work the lexer may still do for one text, shared by everything it reads again.
#[derive(Debug)]
struct Budget {
    work: usize,
    exceeded: bool,
    /// The reading the lexer takes now (see [`for_each_candidate`]).
    quoting: Quoting,
    /// Character buffers for [`lex_in`] to reuse.
    spare_chars: Vec<Vec<char>>,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            work: 0,
            exceeded: false,
            quoting: Quoting::BASH,
            spare_chars: Vec::new(),
        }
    }
}

impl Budget {
    /// Spend `n` characters of work; false (and the text is too complex) past the bound.
    fn spend(&mut self, n: usize) -> bool {
        self.work = self.work.saturating_add(n);
        if self.work > MAX_WORK_CHARS {
            self.exceeded = true;
        }
        !self.exceeded
    }
}

/// Read `text` in the first of `readings`, then in each other one that reads a form in
/// it differently ([`Quoting::differs_in`]).
fn collect_readings(
    text: &str,
    readings: &[Quoting],
    depth: usize,
    out: &mut Candidates,
) -> Result<(), TooComplex> {
    let outer = out.budget.quoting;
    let mut read = Ok(());
    for (n, &reading) in readings.iter().enumerate() {
        if n > 0 && !reading.differs_in(readings[0], text) {
            continue;
        }
        out.budget.quoting = reading;
        read = collect(text, depth, out);
        if read.is_err() {
            break;
        }
    }
    out.budget.quoting = outer;
    read
}

fn collect(text: &str, depth: usize, out: &mut Candidates) -> Result<(), TooComplex> {
    let commands = lex_in(text, &mut out.budget, 0);
    if out.budget.exceeded {
        return Err(TooComplex);
    }
    for command in commands {
        expand_candidates(command, depth, out)?;
    }
    Ok(())
}

fn expand_candidates(
    words: SimpleCommand,
    depth: usize,
    out: &mut Candidates,
) -> Result<(), TooComplex> {
    // A work list, not recursion: a wrapper read two ways gives two forms to follow.
    // Most forms are a tail of one they came from, so a form is a word list (`words`
    // for the first, `made[i - 1]` for the ones `env -S` made) and where in it the
    // form starts. A command that is no wrapper allocates neither list.
    let mut made: Vec<SimpleCommand> = Vec::new();
    let mut pending: Vec<(usize, usize)> = Vec::new();
    let mut next = Some((0usize, 0usize));
    while let Some((form, start)) = next.take().or_else(|| pending.pop()) {
        let list = if form == 0 { &words } else { &made[form - 1] };
        let start = start + prefix_len(&list[start..]);
        let words = &list[start..];
        if words.is_empty() {
            continue;
        }
        out.push(words)?;
        // zsh (its EQUALS option, on by default) runs `=rm x` as the `rm` it finds on
        // PATH; to bash and dash it is a program called `=rm`, which a rule for `rm`
        // does not name. Read it both ways.
        let as_zsh = zsh_equals(&words[0]).map(|named| {
            let mut form = words.to_vec();
            form[0] = named;
            form
        });
        let nested = nested_shell_text(words)?;
        let tails = exec_like_tails(words);
        if depth >= MAX_NESTED_SHELLS && (!nested.is_empty() || !tails.is_empty()) {
            // Deeper than any real command goes: refuse to guess rather than let it by.
            return Err(TooComplex);
        }
        for text in nested {
            if text.dynamic {
                // A command string computed at run time (`eval "$CMD"`) could be
                // anything.
                out.push(&[Word::computed(String::new(), text.shown.clone())])?;
            }
            if !out.budget.spend(text.text.len()) {
                return Err(TooComplex);
            }
            match text.readings {
                // `eval`: read again by the same shell, in the same reading.
                None => collect(&text.text, depth + 1, out)?,
                // fish ends a single quote where bash does not (`'a\'' ; rm x #'`),
                // dash a `$'…'` string where bash does not: each reading counts.
                Some(readings) => collect_readings(&text.text, readings, depth + 1, out)?,
            }
        }
        for tail in tails {
            expand_candidates(tail, depth + 1, out)?;
        }
        for rest in strip_wrapper(words)? {
            match rest {
                Unwrapped::Tail(at) => pending.push((form, start + at)),
                Unwrapped::New(words) => {
                    made.push(words);
                    pending.push((made.len(), 0));
                }
            }
        }
        if let Some(form) = as_zsh {
            made.push(form);
            pending.push((made.len(), 0));
        }
    }
    Ok(())
}

/// How many words stand before a command: assignments and reserved words.
/// The command word `=NAME` as zsh expands it where a command name goes: `NAME`.
fn zsh_equals(word: &Word) -> Option<Word> {
    let name = word.text.strip_prefix('=')?;
    if name.is_empty() || word.dynamic || word.pattern.is_some() {
        return None;
    }
    Some(Word {
        text: name.to_owned(),
        dynamic: false,
        source: Some(word.shown().to_owned()),
        pattern: None,
    })
}

fn prefix_len(words: &[Word]) -> usize {
    words
        .iter()
        .take_while(|w| {
            is_assignment(w) || (!w.dynamic && shells::PREFIX_WORDS.contains(&w.text.as_str()))
        })
        .count()
}

/// `NAME=value`, `NAME+=value`, `NAME[SUBSCRIPT]=value` (bash runs the command after
/// an array element assignment too, with an error message).
fn is_assignment(word: &Word) -> bool {
    let text = word.text.as_str();
    if !text.contains('=') {
        return false;
    }
    let name_len = text
        .char_indices()
        .take_while(|&(i, c)| c == '_' || c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit()))
        .count();
    if name_len == 0 {
        return false;
    }
    let mut rest = &text[name_len..];
    if let Some(subscript) = rest.strip_prefix('[') {
        // The subscript runs to its matching `]`; it may hold `=` (`a[x=1]=2`).
        let mut level = 1usize;
        let mut end = None;
        for (i, c) in subscript.char_indices() {
            match c {
                '[' => level += 1,
                ']' => {
                    level -= 1;
                    if level == 0 {
                        end = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(end) = end else {
            return false;
        };
        rest = &subscript[end + 1..];
    }
    rest.starts_with('=') || rest.starts_with("+=")
}

/// The program name as a deny rule compares it: the last path component.
pub fn program_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// A command string handed to another shell, and whether part of it is computed at run
/// time.
struct NestedText {
    text: String,
    dynamic: bool,
    /// How the words it came from are shown ([`Word::shown`]).
    shown: String,
    /// The readings of the shell that reads it ([`shells::Dialect::readings`]);
    /// `None` for the shell that read the text it came from (`eval`).
    readings: Option<&'static [Quoting]>,
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

/// `su`'s and `runuser`'s long options (util-linux), for getopt_long's prefix rule.
const SU_LONG: &[&str] = &[
    "command=",
    "session-command=",
    "fast",
    "group=",
    "supp-group=",
    "login",
    "preserve-environment",
    "pty",
    "shell=",
    "whitelist-environment=",
    "help",
    "version",
    "user=",
];

/// The command strings that a word list hands to another shell: `bash -c STR`,
/// `eval ARGS…`, `su -c STR`, `flock … -c STR`, `watch … ARGS…`.
fn nested_shell_text(words: &[Word]) -> Result<Vec<NestedText>, TooComplex> {
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
fn exec_like_tails(words: &[Word]) -> Vec<SimpleCommand> {
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

/// How a wrapper's own options are shaped, so that they can be skipped to reach the
/// command it runs.
struct WrapperSpec {
    name: &'static str,
    /// Short options that take a value (`-u NAME` or `-uNAME`).
    short_with_value: &'static str,
    /// Every long option, without its `--`, as getopt_long's table holds it: `name=`
    /// takes a value (`--name=V` or `--name V`), `name?` takes one only with `=`, a
    /// bare `name` takes none. getopt_long also accepts any unique prefix of a name
    /// ([`resolve_long`]).
    long: &'static [&'static str],
    /// Operands before the command (`timeout DURATION`, `chroot DIR`, `taskset MASK`).
    operands: usize,
    /// `nice -5 CMD`: a dash followed by digits is an option.
    numeric_options: bool,
    /// Short options whose value is optional and can only be attached (`xargs -i`,
    /// `-iR`): they never take the next word.
    short_optional: &'static str,
}

const FLOCK_LONG: &[&str] = &[
    "shared",
    "exclusive",
    "unlock",
    "nonblock",
    "nb",
    "timeout=",
    "wait=",
    "conflict-exit-code=",
    "close",
    "command=",
    "no-fork",
    "verbose",
    "help",
    "version",
];

const WRAPPERS: &[WrapperSpec] = &[
    WrapperSpec {
        name: "env",
        short_with_value: "uCS",
        long: &[
            "ignore-environment",
            "null",
            "unset=",
            "chdir=",
            "split-string=",
            "block-signal?",
            "default-signal?",
            "ignore-signal?",
            "list-signal-handling",
            "debug",
            "help",
            "version",
        ],
        operands: 0,
        numeric_options: false,
        short_optional: "",
    },
    wrapper("nohup", "", &["help", "version"], 0),
    WrapperSpec {
        name: "nice",
        short_with_value: "n",
        long: &["adjustment=", "help", "version"],
        operands: 0,
        numeric_options: true,
        short_optional: "",
    },
    wrapper(
        "timeout",
        "sk",
        &[
            "foreground",
            "kill-after=",
            "preserve-status",
            "signal=",
            "verbose",
            "help",
            "version",
        ],
        1,
    ),
    wrapper("command", "", &[], 0),
    wrapper("builtin", "", &[], 0),
    wrapper("exec", "a", &[], 0),
    wrapper(
        "sudo",
        "ugCDhprRtTU",
        &[
            "askpass",
            "bell",
            "background",
            "close-from=",
            "chdir=",
            "preserve-env?",
            "edit",
            "group=",
            "set-home",
            "help",
            "host=",
            "login",
            "remove-timestamp",
            "reset-timestamp",
            "list",
            "non-interactive",
            "preserve-groups",
            "prompt=",
            "chroot=",
            "role=",
            "stdin",
            "shell",
            "type=",
            "command-timeout=",
            "other-user=",
            "user=",
            "version",
            "validate",
        ],
        0,
    ),
    wrapper("runuser", "ugGsw", SU_LONG, 0),
    // `flock [OPTIONS] FILE COMMAND...` (`flock -c` is read as a nested shell).
    wrapper("flock", "wE", FLOCK_LONG, 1),
    wrapper("doas", "uC", &[], 0),
    wrapper(
        "time",
        "fo",
        &[
            "format=",
            "portability",
            "output=",
            "append",
            "verbose",
            "quiet",
            "help",
            "version",
        ],
        0,
    ),
    wrapper(
        "stdbuf",
        "ioe",
        &["input=", "output=", "error=", "help", "version"],
        0,
    ),
    wrapper(
        "setsid",
        "",
        &["ctty", "fork", "wait", "help", "version"],
        0,
    ),
    wrapper(
        "ionice",
        "cnpPu",
        &[
            "class=",
            "classdata=",
            "pid=",
            "pgid=",
            "ignore",
            "uid=",
            "help",
            "version",
        ],
        0,
    ),
    wrapper("nocorrect", "", &[], 0),
    wrapper("noglob", "", &[], 0),
    wrapper("unbuffer", "", &[], 0),
    wrapper(
        "chroot",
        "",
        &["userspec=", "groups=", "skip-chdir", "help", "version"],
        1,
    ),
    wrapper(
        "taskset",
        "",
        &["all-tasks", "pid", "cpu-list", "help", "version"],
        1,
    ),
    // GNU xargs: `-e[EOF]`, `-i[R]` and `-l[N]` (and `--eof`, `--replace`,
    // `--max-lines` without `=`) take no next word.
    WrapperSpec {
        name: "xargs",
        short_with_value: "adEILnPs",
        long: &[
            "null",
            "arg-file=",
            "delimiter=",
            "eof?",
            "replace?",
            "max-lines?",
            "max-args=",
            "open-tty",
            "max-procs=",
            "interactive",
            "process-slot-var=",
            "no-run-if-empty",
            "max-chars=",
            "show-limits",
            "verbose",
            "exit",
            "help",
            "version",
        ],
        operands: 0,
        numeric_options: false,
        short_optional: "eil",
    },
    wrapper(
        "strace",
        "abeEIoOpPsSUX",
        &[
            "env=",
            "attach=",
            "user=",
            "detach-on=",
            "daemonize?",
            "follow-forks",
            "interruptible=",
            "trace=",
            "signal=",
            "status=",
            "trace-path=",
            "successful-only",
            "failed-only",
            "columns=",
            "abbrev=",
            "verbose=",
            "raw=",
            "read=",
            "write=",
            "quiet?",
            "kvm=",
            "decode-fds?",
            "instruction-pointer",
            "stack-traces",
            "syscall-number",
            "output=",
            "output-append-mode",
            "output-separately",
            "relative-timestamps?",
            "string-limit=",
            "absolute-timestamps?",
            "syscall-times?",
            "no-abbrev",
            "strings-in-hex?",
            "const-print-style=",
            "decode-pids=",
            "summary-only",
            "summary",
            "summary-syscall-overhead=",
            "summary-sort-by=",
            "summary-columns=",
            "summary-wall-clock",
            "inject=",
            "fault=",
            "debug",
            "help",
            "seccomp-bpf",
            "tips?",
            "version",
        ],
        0,
    ),
    wrapper("ltrace", "aAeEnoOpsu", &["output="], 0),
    wrapper("busybox", "", &[], 0),
    wrapper("toybox", "", &[], 0),
    WrapperSpec {
        name: "watch",
        short_with_value: "nq",
        long: &[
            "beep",
            "color",
            "no-color",
            "differences?",
            "errexit",
            "chgexit",
            "equexit=",
            "interval=",
            "precise",
            "no-rerun",
            "no-title",
            "no-wrap",
            "exec",
            "help",
            "version",
        ],
        operands: 0,
        numeric_options: false,
        short_optional: "d",
    },
    // zsh: `repeat N COMMAND`.
    wrapper("repeat", "", &[], 1),
];

const fn wrapper(
    name: &'static str,
    short_with_value: &'static str,
    long: &'static [&'static str],
    operands: usize,
) -> WrapperSpec {
    WrapperSpec {
        name,
        short_with_value,
        long,
        operands,
        numeric_options: false,
        short_optional: "",
    }
}

/// Whether a long option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Takes {
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
enum Resolved {
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
fn resolve_long(table: &'static [&'static str], opt: &str) -> Resolved {
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
enum Unwrapped {
    /// The wrapper's words from this index on.
    Tail(usize),
    /// Words `env -S` split from a string, then the rest of the wrapper's words.
    New(SimpleCommand),
}

/// Every command a wrapper may run, with the wrapper and its options removed; empty
/// when the first word is not a known wrapper or it wraps nothing. An option whose
/// reading is not certain (an ambiguous or unknown long option) is read both ways.
fn strip_wrapper(words: &[Word]) -> Result<Vec<Unwrapped>, TooComplex> {
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

// ---------------------------------------------------------------------------------------
// The lexer.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FrameKind {
    /// The whole text.
    Top,
    /// `$(…)`, `<(…)`, `>(…)`: a nested command list closed by `)`.
    Paren,
    /// `${…}`: a parameter expansion. Its text is not a command, but substitutions
    /// inside it run.
    Brace,
}

/// The word under construction, with a per-character "was quoted" flag (needed to tell
/// `{a,b}` brace expansion and globs from quoted text).
#[derive(Debug, Default, Clone)]
struct PartialWord {
    chars: Vec<(char, bool)>,
    dynamic: bool,
    /// Something (even an empty quote pair) started this word.
    started: bool,
    /// The word for messages ([`Word::shown`]), kept from the first expansion on (until
    /// then the characters are the word as shown), so plain words cost nothing more.
    shown: Option<String>,
    /// Some character is quoted.
    any_quoted: bool,
    /// Some unquoted `{`: brace expansion may apply.
    any_brace: bool,
    /// Some unquoted `*`, `?` or `[`: the word may be a glob.
    any_glob: bool,
}

impl PartialWord {
    /// Empty again, keeping the buffer.
    fn clear(&mut self) {
        self.chars.clear();
        self.dynamic = false;
        self.started = false;
        self.shown = None;
        self.any_quoted = false;
        self.any_brace = false;
        self.any_glob = false;
    }

    fn push(&mut self, c: char, quoted: bool) {
        self.chars.push((c, quoted));
        self.any_quoted |= quoted;
        self.any_brace |= c == '{' && !quoted;
        self.any_glob |= shells::quoting::GLOB_CHARS.contains(&c) && !quoted;
        if let Some(shown) = &mut self.shown {
            shown.push(c);
        }
        self.started = true;
    }

    /// An expansion or substitution, written `source`: its value is known only when the
    /// shell runs.
    fn computed(&mut self, source: &[char]) {
        self.dynamic = true;
        self.started = true;
        let chars = &self.chars;
        self.shown
            .get_or_insert_with(|| chars.iter().map(|&(c, _)| c).collect())
            .extend(source);
    }

    fn is_fd_number(&self) -> bool {
        !self.chars.is_empty()
            && !self.dynamic
            && self.chars.iter().all(|(c, q)| !q && c.is_ascii_digit())
    }

    /// `{NAME}` or `{NAME[SUBSCRIPT]}` right before a redirection: bash stores the
    /// descriptor it opens in that variable; the word is not part of the command.
    fn is_fd_name(&self) -> bool {
        if self.dynamic || self.any_quoted {
            return false;
        }
        let text: String = self.chars.iter().map(|&(c, _)| c).collect();
        let Some(inner) = text.strip_prefix('{').and_then(|t| t.strip_suffix('}')) else {
            return false;
        };
        let name = inner.split('[').next().unwrap_or_default();
        let mut letters = name.chars();
        matches!(letters.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
            && letters.all(|c| c == '_' || c.is_ascii_alphanumeric())
            && (name.len() == inner.len() || inner.ends_with(']'))
    }

    /// The word ends in an unquoted `?`, `*`, `+`, `@` or `!`: with a `(` next, bash's
    /// extglob reads a pattern (`+(r)m`).
    fn ends_extglob_prefix(&self) -> bool {
        matches!(self.chars.last(), Some(&(c, false)) if "?*+@!".contains(c))
    }
}

/// A here-document whose body starts after the current line.
#[derive(Debug, Clone)]
struct Heredoc {
    delimiter: String,
    /// Part of the delimiter was quoted: the body is literal, not expanded.
    quoted: bool,
    /// `<<-`: leading tabs are removed from the body's lines.
    strip_tabs: bool,
}

#[derive(Debug)]
struct Frame {
    kind: FrameKind,
    /// Where the frame's text starts (its `$(`, `${` or `<(`), for [`Word::shown`].
    start: usize,
    words: SimpleCommand,
    word: PartialWord,
    in_double_quotes: bool,
    /// Open `(` subshells inside this frame, so that their `)` does not close it.
    open_parens: usize,
    /// Open `case … esac` inside this frame: until its `esac`, a `)` ends a pattern
    /// (`$(case a in a) rm x;; esac)`), not the frame. Counted by the words alone, so a
    /// stray `case` only makes the frame reach further, which reads more, never less.
    open_cases: usize,
    /// Open `{` inside a `${…}` frame.
    open_braces: usize,
    /// The next word is the target of a redirection and is not part of the command.
    redirect_target: bool,
    /// The target is a here-document's delimiter (`Some(strip_tabs)`).
    heredoc_target: Option<bool>,
    /// Here-documents whose bodies start after the next newline.
    heredocs: Vec<Heredoc>,
}

impl Frame {
    fn new(kind: FrameKind, start: usize) -> Self {
        Frame {
            kind,
            start,
            words: Vec::new(),
            // Room for most words, so that it is allocated once, not grown.
            word: PartialWord {
                chars: Vec::with_capacity(32),
                ..PartialWord::default()
            },
            in_double_quotes: false,
            open_parens: 0,
            open_cases: 0,
            open_braces: 0,
            redirect_target: false,
            heredoc_target: None,
            heredocs: Vec::new(),
        }
    }

    fn finish_word(&mut self, budget: &mut Budget) {
        if !self.word.started {
            return;
        }
        // The word's buffer is kept for the next word (cleared, not dropped), so a
        // frame allocates it once rather than once per word.
        let Frame {
            word,
            words,
            open_cases,
            redirect_target,
            heredoc_target,
            heredocs,
            ..
        } = self;
        if words.capacity() == 0 {
            // Room for most commands, so that the list is allocated once, not grown.
            words.reserve(8);
        }
        if !word.dynamic && !word.any_quoted && word.chars.len() == 4 {
            let is = |keyword: &str| word.chars.iter().map(|&(c, _)| c).eq(keyword.chars());
            if is("case") {
                *open_cases += 1;
            } else if is("esac") {
                *open_cases = open_cases.saturating_sub(1);
            }
        }
        if *redirect_target {
            *redirect_target = false;
            if let Some(strip_tabs) = heredoc_target.take() {
                let delimiter = match (&word.shown, word.dynamic) {
                    // `<<$X`: the delimiter is the text as written.
                    (Some(shown), true) => shown.clone(),
                    _ => word.chars.iter().map(|&(c, _)| c).collect(),
                };
                heredocs.push(Heredoc {
                    delimiter,
                    quoted: word.any_quoted,
                    strip_tabs,
                });
            }
        } else if word.dynamic && word.chars.is_empty() {
            words.push(Word::computed(
                String::new(),
                word.shown.take().unwrap_or_default(),
            ));
        } else if !word.any_brace {
            // No brace to expand (most words): the word as it is.
            words.push(Word {
                text: word.chars.iter().map(|&(c, _)| c).collect(),
                dynamic: word.dynamic,
                source: word.shown.take(),
                pattern: if word.any_glob {
                    glob_pattern(&word.chars)
                } else {
                    None
                },
            });
        } else {
            for chars in brace_expand(&word.chars, budget) {
                let text: String = chars.iter().map(|&(c, _)| c).collect();
                let pattern = glob_pattern(&chars);
                words.push(Word {
                    text,
                    dynamic: word.dynamic,
                    source: word.shown.clone(),
                    pattern,
                });
            }
        }
        word.clear();
    }

    fn finish_command(&mut self, out: &mut Vec<SimpleCommand>, budget: &mut Budget) {
        self.finish_word(budget);
        self.redirect_target = false;
        self.heredoc_target = None;
        let words = std::mem::take(&mut self.words);
        if self.kind != FrameKind::Brace && !words.is_empty() {
            out.push(words);
        }
    }
}

/// The glob pattern of a word with unquoted `*`, `?` or `[`, quoted characters escaped.
fn glob_pattern(chars: &[(char, bool)]) -> Option<String> {
    if !chars
        .iter()
        .any(|&(c, q)| !q && shells::quoting::GLOB_CHARS.contains(&c))
    {
        return None;
    }
    let mut pattern = String::with_capacity(chars.len());
    for &(c, quoted) in chars {
        if quoted && matches!(c, '*' | '?' | '[' | ']' | '\\' | '!' | '^' | '-') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    Some(pattern)
}

/// Whether the glob `pattern` (`*`, `?`, `[…]` with `!`/`^` and ranges, `\` escapes)
/// matches all of `text`, as the shell matches a file name.
pub fn glob_matches(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // Iterative matching with one backtrack point for the last `*`: linear-ish, never
    // exponential.
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        let step = match p.get(pi) {
            Some('*') => {
                star = Some((pi + 1, ti));
                pi += 1;
                continue;
            }
            Some('?') => Some(1),
            Some('[') => match bracket(&p, pi, t[ti]) {
                Some((true, len)) => Some(len),
                Some((false, _)) => None,
                // No closing `]`: a literal `[`.
                None => (t[ti] == '[').then_some(1),
            },
            Some('\\') if pi + 1 < p.len() => (p[pi + 1] == t[ti]).then_some(2),
            Some(&c) => (c == t[ti]).then_some(1),
            None => None,
        };
        match step {
            Some(len) => {
                pi += len;
                ti += 1;
            }
            None => match star {
                Some((sp, st)) => {
                    pi = sp;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p[pi.min(p.len())..].iter().all(|&c| c == '*')
}

/// A bracket expression at `p[start]` against `c`: whether it matches, and its length;
/// `None` when it has no closing `]`.
fn bracket(p: &[char], start: usize, c: char) -> Option<(bool, usize)> {
    let mut i = start + 1;
    let negate = matches!(p.get(i), Some('!' | '^'));
    if negate {
        i += 1;
    }
    let mut matched = false;
    // `[[:alpha:]]` and the like: any character may belong to the class.
    let mut class = false;
    let mut first = true;
    while i < p.len() {
        let mut lo = p[i];
        if lo == ']' && !first {
            return Some((class || matched != negate, i + 1 - start));
        }
        if lo == '[' && matches!(p.get(i + 1), Some(':' | '=' | '.')) {
            let close = p
                .get(i + 2..)?
                .windows(2)
                .position(|w| w[0] == p[i + 1] && w[1] == ']')?;
            class = true;
            first = false;
            i += close + 4;
            continue;
        }
        first = false;
        if lo == '\\' && i + 1 < p.len() {
            i += 1;
            lo = p[i];
        }
        if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|&h| h != ']') {
            let mut hi = p[i + 2];
            i += 2;
            if hi == '\\' && i + 1 < p.len() {
                i += 1;
                hi = p[i];
            }
            matched |= lo <= c && c <= hi;
        } else {
            matched |= lo == c;
        }
        i += 1;
    }
    None
}

/// Split shell text into simple commands. Never fails: unterminated quotes and
/// substitutions run to the end of the text.
#[cfg(test)]
fn lex(text: &str) -> Vec<SimpleCommand> {
    lex_in(text, &mut Budget::default(), 0)
}

/// [`lex`] with a shared budget; `depth` counts texts read inside other texts. Past
/// the budget or the depth it sets `budget.exceeded` and returns what it found.
fn lex_in(text: &str, budget: &mut Budget, depth: usize) -> Vec<SimpleCommand> {
    if depth > MAX_NESTED_TEXT || !budget.spend(text.len()) {
        budget.exceeded = true;
        return Vec::new();
    }
    // The characters, in a buffer the budget lends (a text read inside this one takes
    // another), so the texts of one scan share a few buffers.
    let mut chars = budget.spare_chars.pop().unwrap_or_default();
    chars.clear();
    chars.reserve(text.len());
    if text.is_ascii() {
        chars.extend(text.bytes().map(char::from));
    } else {
        chars.extend(text.chars());
    }
    let out = lex_chars(&chars, budget, depth);
    budget.spare_chars.push(chars);
    out
}

fn lex_chars(chars: &[char], budget: &mut Budget, depth: usize) -> Vec<SimpleCommand> {
    let mut out = Vec::new();
    let mut stack = vec![Frame::new(FrameKind::Top, 0)];
    let mut i = 0;
    while i < chars.len() {
        if budget.exceeded {
            return out;
        }
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let frame = stack.last_mut().expect("the top frame is never popped");

        if frame.in_double_quotes {
            match c {
                '"' => frame.in_double_quotes = false,
                '\\' => {
                    match next {
                        Some('\n') => {}
                        Some(n) if shells::quoting::escapes_in_double_quotes(n) => {
                            frame.word.push(n, true)
                        }
                        Some(n) => {
                            frame.word.push('\\', true);
                            frame.word.push(n, true);
                        }
                        None => frame.word.push('\\', true),
                    }
                    i += 1;
                }
                '$' => {
                    i = dollar(chars, i, &mut stack, budget.quoting);
                    continue;
                }
                '`' => {
                    i = backtick(chars, i, &mut stack, &mut out, budget, depth);
                }
                _ => frame.word.push(c, true),
            }
            i += 1;
            continue;
        }

        match c {
            ' ' | '\t' => frame.finish_word(budget),
            '\n' => {
                frame.finish_command(&mut out, budget);
                let heredocs = std::mem::take(&mut frame.heredocs);
                if !heredocs.is_empty() {
                    i = heredoc_bodies(chars, i + 1, &heredocs, &mut out, budget, depth);
                    continue;
                }
            }
            ';' => frame.finish_command(&mut out, budget),
            '\\' => {
                match next {
                    Some('\n') => {}
                    Some(n) => frame.word.push(n, true),
                    None => {}
                }
                i += 1;
            }
            '\'' => {
                frame.word.started = true;
                let word = &mut frame.word;
                i = shells::quoting::single_quoted(chars, i + 1, budget.quoting, |c| {
                    word.push(c, true)
                });
            }
            '"' => {
                frame.word.started = true;
                frame.in_double_quotes = true;
            }
            '$' => {
                i = dollar(chars, i, &mut stack, budget.quoting);
                continue;
            }
            '`' => i = backtick(chars, i, &mut stack, &mut out, budget, depth),
            '#' if !frame.word.started && frame.kind != FrameKind::Brace => {
                // A comment runs to the end of the line.
                while i + 1 < chars.len() && chars[i + 1] != '\n' {
                    i += 1;
                }
            }
            '|' | '&' => {
                if c == '&' && next == Some('>') && budget.quoting.amp_redirect {
                    // `&>` / `&>>`: redirect both streams.
                    frame.finish_word(budget);
                    frame.redirect_target = true;
                    i += if chars.get(i + 2) == Some(&'>') { 3 } else { 2 };
                    continue;
                }
                frame.finish_command(&mut out, budget);
            }
            '<' | '>' => {
                if next == Some('(') {
                    // Process substitution runs a command list.
                    frame.finish_word(budget);
                    stack.push(Frame::new(FrameKind::Paren, i));
                    i += 2;
                    continue;
                }
                if frame.word.is_fd_number() || frame.word.is_fd_name() {
                    frame.word.clear();
                } else {
                    frame.finish_word(budget);
                }
                frame.redirect_target = true;
                i = redirection_operator(chars, i, frame);
                continue;
            }
            '(' => {
                if frame.word.started && frame.word.ends_extglob_prefix() {
                    // `+(r)m`: with `shopt -s extglob` a pattern that may match any
                    // program name. Its text is still read as commands below.
                    out.push(vec![Word::computed(
                        String::new(),
                        chars[i.saturating_sub(1)..].iter().take(40).collect(),
                    )]);
                }
                frame.finish_command(&mut out, budget);
                frame.open_parens += 1;
            }
            ')' => {
                frame.finish_word(budget);
                if frame.open_parens > 0 {
                    frame.open_parens -= 1;
                    frame.finish_command(&mut out, budget);
                } else if frame.open_cases > 0 {
                    // A case pattern's end: the command after it starts here.
                    frame.finish_command(&mut out, budget);
                } else if frame.kind == FrameKind::Paren {
                    close_frame(&mut stack, &mut out, chars, i + 1, budget);
                } else {
                    frame.finish_command(&mut out, budget);
                }
            }
            '{' if frame.kind == FrameKind::Brace => {
                frame.open_braces += 1;
                frame.word.push(c, false);
            }
            '}' if frame.kind == FrameKind::Brace => {
                if frame.open_braces > 0 {
                    frame.open_braces -= 1;
                    frame.word.push(c, false);
                } else {
                    close_frame(&mut stack, &mut out, chars, i + 1, budget);
                }
            }
            '{' | '}' if !frame.word.started && is_word_end(next) => {
                // A group `{ …; }`: a command boundary, like a subshell.
                frame.finish_command(&mut out, budget);
            }
            _ => frame.word.push(c, false),
        }
        i += 1;
    }
    while stack.len() > 1 {
        close_frame(&mut stack, &mut out, chars, chars.len(), budget);
    }
    let mut top = stack.pop().expect("the top frame");
    top.finish_command(&mut out, budget);
    out
}

/// Read a redirection operator starting at `chars[i]` (`<` or `>`); returns the index
/// after it. Its target is the next word: `>-` writes a file named `-`, `<&-`, `>&-`
/// and `2>&-` close a descriptor, so `-` is the target, never part of the operator
/// (except in `<<-`).
fn redirection_operator(chars: &[char], i: usize, frame: &mut Frame) -> usize {
    let mut j = i + 1;
    match (chars[i], chars.get(j)) {
        ('<', Some('<')) => {
            j += 1;
            match chars.get(j) {
                // `<<<`: a here-string; its word is the target.
                Some('<') => j += 1,
                Some('-') => {
                    j += 1;
                    frame.heredoc_target = Some(true);
                }
                _ => frame.heredoc_target = Some(false),
            }
        }
        ('<', Some('&' | '>')) | ('>', Some('&' | '|')) => j += 1,
        ('>', Some('>')) => {
            j += 1;
            // `>>&`is not bash, but `>>|` is not either: nothing more to swallow.
        }
        _ => {}
    }
    j
}

/// Read the bodies of `heredocs`, one after another, from `chars[start]`; returns the
/// index after the last delimiter line. Each body is read twice: as a script (for
/// `sh <<EOF`, `bash <<EOF`), and, when its delimiter is unquoted, for the
/// substitutions the shell performs in it. Quotes in a body are ordinary characters, so
/// a `don't` in it never hides what follows the body.
fn heredoc_bodies(
    chars: &[char],
    start: usize,
    heredocs: &[Heredoc],
    out: &mut Vec<SimpleCommand>,
    budget: &mut Budget,
    depth: usize,
) -> usize {
    let mut i = start;
    for heredoc in heredocs {
        let mut body = String::new();
        while i < chars.len() {
            let end = chars[i..]
                .iter()
                .position(|&c| c == '\n')
                .map_or(chars.len(), |n| i + n);
            let mut line: &[char] = &chars[i..end];
            if heredoc.strip_tabs {
                let tabs = line.iter().take_while(|&&c| c == '\t').count();
                line = &line[tabs..];
            }
            i = (end + 1).min(chars.len());
            if line.iter().copied().eq(heredoc.delimiter.chars()) {
                break;
            }
            body.extend(line);
            body.push('\n');
        }
        out.extend(lex_in(&body, budget, depth + 1));
        // And each line on its own: a `<<` that bash reads as a shift (`$[1<<2]`,
        // `(( a << 2 ))`) makes gate take the rest of the text for a body, and a quote
        // in it must not hide a later line.
        for line in body.lines() {
            out.extend(lex_in(line, budget, depth + 1));
        }
        if !heredoc.quoted {
            // The body as the shell expands it: like a double-quoted string in which
            // `"` is an ordinary character.
            let mut expanded = String::with_capacity(body.len() + 2);
            expanded.push('"');
            for c in body.chars() {
                if c == '"' {
                    expanded.push('\\');
                }
                expanded.push(c);
            }
            expanded.push('"');
            out.extend(lex_in(&expanded, budget, depth + 1));
        }
    }
    i
}

fn is_word_end(next: Option<char>) -> bool {
    next.is_none_or(|c| shells::quoting::is_blank(c) || shells::quoting::is_metachar(c))
}

/// Handle a `$` at `chars[i]`; returns the index of the next character to read.
fn dollar(chars: &[char], i: usize, stack: &mut Vec<Frame>, quoting: Quoting) -> usize {
    let next = chars.get(i + 1).copied();
    let frame = stack.last_mut().expect("a frame");
    match next {
        Some('(') => {
            // Shown when the frame closes, with its text.
            frame.word.computed(&[]);
            // `$((…))` is arithmetic; reading it as commands only finds more words.
            stack.push(Frame::new(FrameKind::Paren, i));
            i + 2
        }
        Some('{') => {
            frame.word.computed(&[]);
            stack.push(Frame::new(FrameKind::Brace, i));
            i + 2
        }
        Some('\'') if !frame.in_double_quotes && !quoting.ansi_c => {
            // dash: a plain `$`, then an ordinary quote (read next).
            frame.word.push('$', false);
            i + 1
        }
        Some('"') if !frame.in_double_quotes && !quoting.locale => {
            // dash, zsh, busybox sh: a plain `$`, then a double quote (read next).
            frame.word.push('$', false);
            i + 1
        }
        Some('\'') if !frame.in_double_quotes => {
            // ANSI-C quoting: decode it, so `$'\x72m'` is seen as `rm`.
            let (decoded, end) = shells::quoting::ansi_c_string(chars, i + 2);
            frame.word.started = true;
            for c in decoded.chars() {
                frame.word.push(c, true);
            }
            end + 1
        }
        Some('"') if !frame.in_double_quotes => {
            // `$"…"` is a translated double-quoted string.
            frame.word.started = true;
            frame.in_double_quotes = true;
            i + 2
        }
        Some(c) if c == '_' || c.is_ascii_alphanumeric() => {
            let mut j = i + 1;
            if c.is_ascii_digit() {
                j += 1;
            } else {
                while j < chars.len() && (chars[j] == '_' || chars[j].is_ascii_alphanumeric()) {
                    j += 1;
                }
            }
            frame.word.computed(&chars[i..j]);
            j
        }
        Some('@' | '*' | '#' | '?' | '-' | '$' | '!') => {
            frame.word.computed(&chars[i..i + 2]);
            i + 2
        }
        _ => {
            frame.word.push('$', frame.in_double_quotes);
            i + 1
        }
    }
}

/// A backtick substitution at `chars[i]`: its text, with the backslashes the shell
/// removes inside backticks removed (`` \` `` is a backtick substitution inside this
/// one, `\\` a backslash, `\$` a dollar; `\"` a quote inside double quotes), is read as
/// commands of its own. Returns the index of the closing backtick (or the end).
fn backtick(
    chars: &[char],
    i: usize,
    stack: &mut [Frame],
    out: &mut Vec<SimpleCommand>,
    budget: &mut Budget,
    depth: usize,
) -> usize {
    let frame = stack.last_mut().expect("a frame");
    let in_dq = frame.in_double_quotes;
    let mut body = String::new();
    let mut j = i + 1;
    while j < chars.len() && chars[j] != '`' {
        if chars[j] == '\\' && j + 1 < chars.len() {
            let n = chars[j + 1];
            if matches!(n, '$' | '`' | '\\') || (in_dq && n == '"') {
                body.push(n);
            } else {
                body.push('\\');
                body.push(n);
            }
            j += 2;
            continue;
        }
        body.push(chars[j]);
        j += 1;
    }
    out.extend(lex_in(&body, budget, depth + 1));
    let end = (j + 1).min(chars.len());
    frame.word.computed(&chars[i..end]);
    j
}

/// Close the innermost frame, whose text ends before `chars[end]`: the word it stands in
/// is computed, and shown with the frame's text.
fn close_frame(
    stack: &mut Vec<Frame>,
    out: &mut Vec<SimpleCommand>,
    chars: &[char],
    end: usize,
    budget: &mut Budget,
) {
    let mut frame = stack.pop().expect("a nested frame");
    frame.finish_command(out, budget);
    let outer = stack.last_mut().expect("the top frame");
    let source = chars
        .get(frame.start..end.min(chars.len()))
        .unwrap_or_default();
    outer.word.computed(source);
}

/// Brace expansion of one word (`{rm,-rf}` → `rm`, `-rf`; `a{b,c}d` → `abd`, `acd`;
/// `{r..r}m` → `rm`; `{1..3}` → `1`, `2`, `3`), on unquoted braces only. Past the
/// budget it marks the text too complex.
fn brace_expand(chars: &[(char, bool)], budget: &mut Budget) -> Vec<Vec<(char, bool)>> {
    let mut results = Vec::new();
    if !chars.iter().any(|&(c, q)| c == '{' && !q) {
        results.push(chars.to_vec());
        return results;
    }
    let mut todo = vec![chars.to_vec()];
    while let Some(word) = todo.pop() {
        if budget.exceeded {
            return results;
        }
        match find_brace_group(&word, budget) {
            Some((open, close, alternatives)) => {
                // In reverse, so that the work list yields them in order.
                for alt in alternatives.into_iter().rev() {
                    let mut combined: Vec<(char, bool)> =
                        Vec::with_capacity(open + alt.len() + word.len() - close);
                    combined.extend_from_slice(&word[..open]);
                    combined.extend(alt);
                    combined.extend_from_slice(&word[close + 1..]);
                    if !budget.spend(combined.len()) {
                        return results;
                    }
                    todo.push(combined);
                }
            }
            None => {
                results.push(word);
                if results.len() > MAX_BRACE_WORDS {
                    budget.exceeded = true;
                    return results;
                }
            }
        }
    }
    results
}

/// The first unquoted `{…}` that brace expansion expands: one with a top-level comma
/// (its alternatives), or a sequence `{X..Y}` / `{X..Y..STEP}` of integers or of single
/// letters. Returns (open, close, the alternatives).
type BraceGroup = (usize, usize, Vec<Vec<(char, bool)>>);

fn find_brace_group(chars: &[(char, bool)], budget: &mut Budget) -> Option<BraceGroup> {
    for open in 0..chars.len() {
        if chars[open] != ('{', false) {
            continue;
        }
        let mut depth = 0usize;
        let mut commas = Vec::new();
        for (j, &(c, quoted)) in chars.iter().enumerate().skip(open + 1) {
            if quoted {
                continue;
            }
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    if commas.is_empty() {
                        if let Some(seq) = sequence(&chars[open + 1..j], budget) {
                            return Some((open, j, seq));
                        }
                        break;
                    }
                    let mut alternatives = Vec::with_capacity(commas.len() + 1);
                    let mut start = open + 1;
                    for end in commas.into_iter().chain(std::iter::once(j)) {
                        alternatives.push(chars[start..end].to_vec());
                        start = end + 1;
                    }
                    return Some((open, j, alternatives));
                }
                '}' => depth -= 1,
                ',' if depth == 0 => commas.push(j),
                _ => {}
            }
        }
    }
    None
}

/// A brace sequence's words, when `inner` (between the braces) is one: `a..e`, `1..10`,
/// `01..3` (padded), `10..1..3`. One that would produce more than [`MAX_BRACE_WORDS`]
/// words marks the text too complex.
fn sequence(inner: &[(char, bool)], budget: &mut Budget) -> Option<Vec<Vec<(char, bool)>>> {
    if inner.iter().any(|&(_, q)| q) {
        return None;
    }
    let text: String = inner.iter().map(|&(c, _)| c).collect();
    let parts: Vec<&str> = text.split("..").collect();
    let (from, to, step) = match parts.as_slice() {
        [a, b] => (*a, *b, None),
        [a, b, s] => (*a, *b, Some(*s)),
        _ => return None,
    };
    let step: i128 = match step {
        Some(s) => s.parse::<i128>().ok()?.checked_abs()?.max(1),
        None => 1,
    };
    let letter = |s: &str| {
        let mut cs = s.chars();
        match (cs.next(), cs.next()) {
            (Some(c), None) if c.is_ascii_alphabetic() => Some(c),
            _ => None,
        }
    };
    let mut words = Vec::new();
    if let (Some(a), Some(b)) = (letter(from), letter(to)) {
        let (a, b) = (a as i128, b as i128);
        let mut v = a;
        loop {
            let c = char::from_u32(v as u32)?;
            words.push(vec![(c, false)]);
            if v == b {
                break;
            }
            v += if b > a { step } else { -step };
            if (b > a && v > b) || (b < a && v < b) {
                break;
            }
        }
        return Some(words);
    }
    let number = |s: &str| {
        let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
        (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<i128>().ok())
            .flatten()
    };
    let (a, b) = (number(from)?, number(to)?);
    let count = (a - b).unsigned_abs() / step as u128 + 1;
    if count > MAX_BRACE_WORDS as u128 {
        budget.exceeded = true;
        return Some(vec![Vec::new()]);
    }
    let padded = |s: &str| {
        let d = s.strip_prefix('-').unwrap_or(s);
        d.len() > 1 && d.starts_with('0')
    };
    let width = if padded(from) || padded(to) {
        from.len().max(to.len())
    } else {
        0
    };
    let mut v = a;
    loop {
        let s = if v < 0 {
            format!("-{:0w$}", -v, w = width.saturating_sub(1))
        } else {
            format!("{v:0width$}")
        };
        words.push(s.chars().map(|c| (c, false)).collect());
        if v == b {
            break;
        }
        v += if b > a { step } else { -step };
        if (b > a && v > b) || (b < a && v < b) {
            break;
        }
    }
    Some(words)
}

#[cfg(test)]
mod tests;
