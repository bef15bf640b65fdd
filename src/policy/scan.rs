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
}

impl Word {
    /// The word as a message shows it.
    pub fn shown(&self) -> &str {
        self.source.as_deref().unwrap_or(&self.text)
    }
}

/// The words of one simple command.
pub type SimpleCommand = Vec<Word>;

/// How deep `bash -c '…'`, `eval …` and `env -S …` strings are followed.
const MAX_NESTED_SHELLS: usize = 8;
/// Brace expansion stops producing words past this many, to bound the work.
const MAX_BRACE_WORDS: usize = 256;

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
    let mut out = Candidates {
        commands: Vec::new(),
        words: 0,
    };
    collect(text, 0, &mut out)?;
    Ok(out.commands)
}

struct Candidates {
    commands: Vec<SimpleCommand>,
    words: usize,
}

impl Candidates {
    fn push(&mut self, command: SimpleCommand) -> Result<(), TooComplex> {
        self.words += command.len();
        if self.words > MAX_CANDIDATE_WORDS {
            return Err(TooComplex);
        }
        self.commands.push(command);
        Ok(())
    }
}

fn collect(text: &str, depth: usize, out: &mut Candidates) -> Result<(), TooComplex> {
    for command in lex(text) {
        expand_candidates(command, depth, out)?;
    }
    Ok(())
}

fn expand_candidates(
    mut words: SimpleCommand,
    depth: usize,
    out: &mut Candidates,
) -> Result<(), TooComplex> {
    loop {
        skip_prefixes(&mut words);
        if words.is_empty() {
            return Ok(());
        }
        out.push(words.clone())?;
        let nested = nested_shell_text(&words);
        let tails = exec_like_tails(&words);
        if depth >= MAX_NESTED_SHELLS && (!nested.is_empty() || !tails.is_empty()) {
            // Deeper than any real command goes: refuse to guess rather than let it by.
            return Err(TooComplex);
        }
        for text in nested {
            if text.dynamic {
                // A command string computed at run time (`eval "$CMD"`) could be
                // anything.
                out.push(vec![Word {
                    text: String::new(),
                    dynamic: true,
                    source: Some(text.shown.clone()),
                }])?;
            }
            collect(&text.text, depth + 1, out)?;
        }
        for tail in tails {
            expand_candidates(tail, depth + 1, out)?;
        }
        match strip_wrapper(&words) {
            Some(rest) => words = rest,
            None => return Ok(()),
        }
    }
}

/// Remove what may stand before a command: assignments and reserved words.
fn skip_prefixes(words: &mut SimpleCommand) {
    let n = words
        .iter()
        .take_while(|w| {
            is_assignment(w) || (!w.dynamic && RESERVED_PREFIXES.contains(&w.text.as_str()))
        })
        .count();
    words.drain(..n);
}

fn is_assignment(word: &Word) -> bool {
    let Some((name, _)) = word.text.split_once('=') else {
        return false;
    };
    let name = name.strip_suffix('+').unwrap_or(name);
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// The program name as a deny rule compares it: the last path component.
pub fn program_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

const SHELLS: [&str; 9] = [
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "fish",
];

/// Reserved words that may stand before a command in a compound command
/// (`if rm …; then rm …; fi`, `while …; do rm …; done`, `! rm …`).
const RESERVED_PREFIXES: [&str; 9] = [
    "!", "if", "then", "elif", "else", "while", "until", "do", "coproc",
];

/// A command string handed to another shell, and whether part of it is computed at run
/// time.
struct NestedText {
    text: String,
    dynamic: bool,
    /// How the words it came from are shown ([`Word::shown`]).
    shown: String,
}

/// The command strings that a word list hands to another shell: `bash -c STR`,
/// `eval ARGS…`, `su -c STR`, `flock … -c STR`.
fn nested_shell_text(words: &[Word]) -> Vec<NestedText> {
    let name = program_name(&words[0].text);
    let args = &words[1..];
    let mut found = Vec::new();
    match name {
        "eval" if !args.is_empty() => {
            let joined: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
            let shown: Vec<&str> = args.iter().map(Word::shown).collect();
            found.push(NestedText {
                text: joined.join(" "),
                dynamic: args.iter().any(|w| w.dynamic),
                shown: shown.join(" "),
            });
        }
        _ if SHELLS.contains(&name) => {
            // `-c` (alone or in a cluster: `-lc`, `-xc`) makes the first operand after
            // all the options the command string: `bash -c -e -- 'CMD'`,
            // `bash -c -o errexit 'CMD'`.
            let mut command_flag = false;
            let mut i = 0;
            while i < args.len() {
                let t = args[i].text.as_str();
                if t == "--" {
                    i += 1;
                    break;
                }
                let is_option = (t.starts_with('-') || t.starts_with('+')) && t.len() > 1;
                if !is_option {
                    break;
                }
                if t == "--command" {
                    command_flag = true;
                } else if !t.starts_with("--") {
                    let letters = &t[1..];
                    if letters.contains('c') {
                        command_flag = true;
                    }
                    // `-o NAME` / `+o NAME` / `-O NAME`: the option's name follows.
                    i += letters.chars().filter(|&c| c == 'o' || c == 'O').count();
                }
                i += 1;
            }
            if command_flag {
                if let Some(word) = args.get(i) {
                    found.push(NestedText {
                        text: word.text.clone(),
                        dynamic: word.dynamic,
                        shown: word.shown().to_owned(),
                    });
                }
            }
        }
        "su" | "flock" | "runuser" => {
            // The argument after an option cluster containing `c` (`-c`, `-lc`, `-ec`…),
            // or after `--command`.
            let mut want_next = false;
            for word in args {
                if want_next {
                    found.push(NestedText {
                        text: word.text.clone(),
                        dynamic: word.dynamic,
                        shown: word.shown().to_owned(),
                    });
                    want_next = false;
                    continue;
                }
                let t = word.text.as_str();
                if t == "--command" || t == "-c" {
                    want_next = true;
                } else if let Some(cmd) = t.strip_prefix("--command=") {
                    found.push(NestedText {
                        text: cmd.to_owned(),
                        dynamic: word.dynamic,
                        shown: word.shown().to_owned(),
                    });
                } else if t.starts_with('-') && !t.starts_with("--") && t[1..].contains('c') {
                    want_next = true;
                }
            }
        }
        _ => {}
    }
    found
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
    /// Long options that take a value when it is not given with `=`.
    long_with_value: &'static [&'static str],
    /// Operands before the command (`timeout DURATION`, `chroot DIR`, `taskset MASK`).
    operands: usize,
    /// `nice -5 CMD`: a dash followed by digits is an option.
    numeric_options: bool,
    /// Short options whose value is optional and can only be attached (`xargs -i`,
    /// `-iR`): they never take the next word.
    short_optional: &'static str,
}

const WRAPPERS: &[WrapperSpec] = &[
    WrapperSpec {
        name: "env",
        short_with_value: "uCSP",
        long_with_value: &["--unset", "--chdir", "--split-string"],
        operands: 0,
        numeric_options: false,
        short_optional: "",
    },
    wrapper("nohup", "", &[], 0),
    WrapperSpec {
        name: "nice",
        short_with_value: "n",
        long_with_value: &["--adjustment"],
        operands: 0,
        numeric_options: true,
        short_optional: "",
    },
    wrapper("timeout", "sk", &["--signal", "--kill-after"], 1),
    wrapper("command", "", &[], 0),
    wrapper("builtin", "", &[], 0),
    wrapper("exec", "a", &[], 0),
    wrapper(
        "sudo",
        "ugCDhprRtTU",
        &[
            "--user",
            "--group",
            "--close-from",
            "--chdir",
            "--host",
            "--prompt",
            "--role",
            "--type",
            "--command-timeout",
            "--other-user",
            "--chroot",
        ],
        0,
    ),
    wrapper(
        "runuser",
        "ugGsw",
        &[
            "--user",
            "--group",
            "--supp-group",
            "--shell",
            "--whitelist-environment",
        ],
        0,
    ),
    // `flock [OPTIONS] FILE COMMAND...` (`flock -c` is read as a nested shell).
    wrapper(
        "flock",
        "wE",
        &["--timeout", "--wait", "--conflict-exit-code"],
        1,
    ),
    wrapper("doas", "uC", &[], 0),
    wrapper("time", "fo", &["--format", "--output"], 0),
    wrapper("stdbuf", "ioe", &["--input", "--output", "--error"], 0),
    wrapper("setsid", "", &[], 0),
    wrapper("ionice", "cnpPu", &["--class", "--classdata"], 0),
    wrapper("nocorrect", "", &[], 0),
    wrapper("noglob", "", &[], 0),
    wrapper("unbuffer", "", &[], 0),
    wrapper("chroot", "", &["--userspec", "--groups"], 1),
    wrapper("taskset", "", &[], 1),
    // GNU xargs: `-e[EOF]`, `-i[R]` and `-l[N]` (and `--eof`, `--replace`,
    // `--max-lines` without `=`) take no next word.
    WrapperSpec {
        name: "xargs",
        short_with_value: "adEILnPs",
        long_with_value: &[
            "--arg-file",
            "--delimiter",
            "--max-args",
            "--max-procs",
            "--max-chars",
            "--process-slot-var",
        ],
        operands: 0,
        numeric_options: false,
        short_optional: "eil",
    },
    wrapper("strace", "abeEIoOpPsSUX", &["--output"], 0),
    wrapper("ltrace", "aAeEnoOpsu", &["--output"], 0),
    wrapper("busybox", "", &[], 0),
    wrapper("watch", "nd", &["--interval", "--differences"], 0),
    // zsh: `repeat N COMMAND`.
    wrapper("repeat", "", &[], 1),
];

const fn wrapper(
    name: &'static str,
    short_with_value: &'static str,
    long_with_value: &'static [&'static str],
    operands: usize,
) -> WrapperSpec {
    WrapperSpec {
        name,
        short_with_value,
        long_with_value,
        operands,
        numeric_options: false,
        short_optional: "",
    }
}

/// The command a wrapper runs, with the wrapper and its options removed; `None` when
/// the first word is not a known wrapper or it wraps nothing.
fn strip_wrapper(words: &[Word]) -> Option<SimpleCommand> {
    let name = program_name(&words[0].text);
    let spec = WRAPPERS.iter().find(|w| w.name == name)?;
    let mut prepend: SimpleCommand = Vec::new();
    let mut i = 1;
    while i < words.len() {
        let t = words[i].text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        if let Some(long) = t.strip_prefix("--") {
            let (opt, inline) = match long.split_once('=') {
                Some((o, v)) => (o, Some(v)),
                None => (long, None),
            };
            let opt = &t[..opt.len() + 2];
            let takes_value = spec.long_with_value.contains(&opt);
            let value = match (takes_value, inline) {
                (true, Some(v)) => {
                    Some((v.to_owned(), words[i].dynamic, words[i].shown().to_owned()))
                }
                (true, None) => {
                    i += 1;
                    words
                        .get(i)
                        .map(|w| (w.text.clone(), w.dynamic, w.shown().to_owned()))
                }
                (false, _) => None,
            };
            if opt == "--split-string" {
                if let Some((text, dynamic, shown)) = value {
                    prepend.extend(split_words(&text, dynamic, &shown));
                }
            }
            i += 1;
            continue;
        }
        if t.len() > 1 && t.starts_with('-') {
            if spec.numeric_options && t[1..].bytes().all(|b| b.is_ascii_digit()) {
                i += 1;
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
                            prepend.extend(split_words(&text, dynamic, &shown));
                        }
                    }
                    break;
                }
            }
            i += if consumed_next { 2 } else { 1 };
            continue;
        }
        if spec.name == "env" && t == "-" {
            i += 1;
            continue;
        }
        break;
    }
    // `env` takes assignments before its command; they are skipped by the caller.
    let mut rest: SimpleCommand = prepend;
    let after = words.get(i..).unwrap_or_default();
    let after_assignments = if spec.name == "env" || spec.name == "sudo" {
        let n = after.iter().take_while(|w| is_assignment(w)).count();
        &after[n..]
    } else {
        after
    };
    rest.extend(after_assignments.iter().skip(spec.operands).cloned());
    if rest.is_empty() { None } else { Some(rest) }
}

/// The words of a string that `env -S` splits into a command, close enough for a safety
/// net. When part of the string is computed at run time, a computed word ends the list:
/// it may stand for anything from there on.
fn split_words(text: &str, dynamic: bool, shown: &str) -> SimpleCommand {
    let mut words: SimpleCommand = lex(text).into_iter().flatten().collect();
    if dynamic {
        words.push(Word {
            text: String::new(),
            dynamic: true,
            source: Some(shown.to_owned()),
        });
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
    /// `` `…` ``.
    Backtick,
    /// `${…}`: a parameter expansion. Its text is not a command, but substitutions
    /// inside it run.
    Brace,
}

/// The word under construction, with a per-character "was quoted" flag (needed to tell
/// `{a,b}` brace expansion from a quoted brace).
#[derive(Debug, Default, Clone)]
struct PartialWord {
    chars: Vec<(char, bool)>,
    dynamic: bool,
    /// Something (even an empty quote pair) started this word.
    started: bool,
    /// The word for messages ([`Word::shown`]), kept from the first expansion on (until
    /// then the characters are the word as shown), so plain words cost nothing more.
    shown: Option<String>,
}

impl PartialWord {
    fn push(&mut self, c: char, quoted: bool) {
        self.chars.push((c, quoted));
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
}

#[derive(Debug)]
struct Frame {
    kind: FrameKind,
    /// Where the frame's text starts (its `$(`, `${`, `` ` `` or `<(`), for
    /// [`Word::shown`].
    start: usize,
    words: SimpleCommand,
    word: PartialWord,
    in_double_quotes: bool,
    /// Open `(` subshells inside this frame, so that their `)` does not close it.
    open_parens: usize,
    /// Open `{` inside a `${…}` frame.
    open_braces: usize,
    /// The next word is the target of a redirection and is not part of the command.
    redirect_target: bool,
}

impl Frame {
    fn new(kind: FrameKind, start: usize) -> Self {
        Frame {
            kind,
            start,
            words: Vec::new(),
            word: PartialWord::default(),
            in_double_quotes: false,
            open_parens: 0,
            open_braces: 0,
            redirect_target: false,
        }
    }

    fn finish_word(&mut self) {
        if !self.word.started {
            return;
        }
        let word = std::mem::take(&mut self.word);
        if self.redirect_target {
            self.redirect_target = false;
            return;
        }
        if word.dynamic && word.chars.is_empty() {
            self.words.push(Word {
                text: String::new(),
                dynamic: true,
                source: word.shown,
            });
            return;
        }
        for text in brace_expand(&word.chars) {
            self.words.push(Word {
                text,
                dynamic: word.dynamic,
                source: word.shown.clone(),
            });
        }
    }

    fn finish_command(&mut self, out: &mut Vec<SimpleCommand>) {
        self.finish_word();
        self.redirect_target = false;
        let words = std::mem::take(&mut self.words);
        if self.kind != FrameKind::Brace && !words.is_empty() {
            out.push(words);
        }
    }
}

/// Split shell text into simple commands. Never fails: unterminated quotes and
/// substitutions run to the end of the text.
fn lex(text: &str) -> Vec<SimpleCommand> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut stack = vec![Frame::new(FrameKind::Top, 0)];
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let frame = stack.last_mut().expect("the top frame is never popped");

        if frame.in_double_quotes {
            match c {
                '"' => frame.in_double_quotes = false,
                '\\' => {
                    match next {
                        Some('\n') => {}
                        Some(n @ ('$' | '`' | '"' | '\\')) => frame.word.push(n, true),
                        Some(n) => {
                            frame.word.push('\\', true);
                            frame.word.push(n, true);
                        }
                        None => frame.word.push('\\', true),
                    }
                    i += 1;
                }
                '$' => {
                    i = dollar(&chars, i, &mut stack);
                    continue;
                }
                '`' => {
                    open_or_close_backtick(&mut stack, &mut out, &chars, i);
                }
                _ => frame.word.push(c, true),
            }
            i += 1;
            continue;
        }

        match c {
            ' ' | '\t' => frame.finish_word(),
            '\n' | ';' => frame.finish_command(&mut out),
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
                let mut j = i + 1;
                while j < chars.len() && chars[j] != '\'' {
                    frame.word.push(chars[j], true);
                    j += 1;
                }
                i = j;
            }
            '"' => {
                frame.word.started = true;
                frame.in_double_quotes = true;
            }
            '$' => {
                i = dollar(&chars, i, &mut stack);
                continue;
            }
            '`' => open_or_close_backtick(&mut stack, &mut out, &chars, i),
            '#' if !frame.word.started && frame.kind != FrameKind::Brace => {
                // A comment runs to the end of the line.
                while i + 1 < chars.len() && chars[i + 1] != '\n' {
                    i += 1;
                }
            }
            '|' | '&' => {
                if c == '&' && next == Some('>') {
                    // `&>` / `&>>`: redirect both streams.
                    frame.finish_word();
                    frame.redirect_target = true;
                    i += if chars.get(i + 2) == Some(&'>') { 3 } else { 2 };
                    continue;
                }
                frame.finish_command(&mut out);
            }
            '<' | '>' => {
                if next == Some('(') {
                    // Process substitution runs a command list.
                    frame.finish_word();
                    stack.push(Frame::new(FrameKind::Paren, i));
                    i += 2;
                    continue;
                }
                if frame.word.is_fd_number() {
                    frame.word = PartialWord::default();
                } else {
                    frame.finish_word();
                }
                frame.redirect_target = true;
                // Swallow the rest of the operator: `>>`, `<<`, `<<<`, `<<-`, `>&`, `<&`,
                // `<>`, `>|`.
                let mut j = i + 1;
                while j < chars.len() && matches!(chars[j], '<' | '>' | '&' | '|' | '-') {
                    j += 1;
                }
                i = j;
                continue;
            }
            '(' => {
                frame.finish_command(&mut out);
                frame.open_parens += 1;
            }
            ')' => {
                if frame.open_parens > 0 {
                    frame.open_parens -= 1;
                    frame.finish_command(&mut out);
                } else if frame.kind == FrameKind::Paren {
                    close_frame(&mut stack, &mut out, &chars, i + 1);
                } else {
                    frame.finish_command(&mut out);
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
                    close_frame(&mut stack, &mut out, &chars, i + 1);
                }
            }
            '{' | '}' if !frame.word.started && is_word_end(next) => {
                // A group `{ …; }`: a command boundary, like a subshell.
                frame.finish_command(&mut out);
            }
            _ => frame.word.push(c, false),
        }
        i += 1;
    }
    while stack.len() > 1 {
        close_frame(&mut stack, &mut out, &chars, chars.len());
    }
    let mut top = stack.pop().expect("the top frame");
    top.finish_command(&mut out);
    out
}

fn is_word_end(next: Option<char>) -> bool {
    matches!(
        next,
        None | Some(' ' | '\t' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>')
    )
}

/// Handle a `$` at `chars[i]`; returns the index of the next character to read.
fn dollar(chars: &[char], i: usize, stack: &mut Vec<Frame>) -> usize {
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
        Some('\'') if !frame.in_double_quotes => {
            // ANSI-C quoting: decode it, so `$'\x72m'` is seen as `rm`.
            let (decoded, end) = ansi_c_string(chars, i + 2);
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

/// A backtick at `chars[i]`.
fn open_or_close_backtick(
    stack: &mut Vec<Frame>,
    out: &mut Vec<SimpleCommand>,
    chars: &[char],
    i: usize,
) {
    if stack.last().map(|f| f.kind) == Some(FrameKind::Backtick) {
        close_frame(stack, out, chars, i + 1);
    } else {
        let frame = stack.last_mut().expect("a frame");
        frame.word.computed(&[]);
        stack.push(Frame::new(FrameKind::Backtick, i));
    }
}

/// Close the innermost frame, whose text ends before `chars[end]`: the word it stands in
/// is computed, and shown with the frame's text.
fn close_frame(stack: &mut Vec<Frame>, out: &mut Vec<SimpleCommand>, chars: &[char], end: usize) {
    let mut frame = stack.pop().expect("a nested frame");
    frame.finish_command(out);
    let outer = stack.last_mut().expect("the top frame");
    let source = chars
        .get(frame.start..end.min(chars.len()))
        .unwrap_or_default();
    outer.word.computed(source);
}

/// Decode the body of `$'…'` starting at `start`; returns the text and the index of the
/// closing quote (or the end).
fn ansi_c_string(chars: &[char], start: usize) -> (String, usize) {
    let mut s = String::new();
    let mut i = start;
    while i < chars.len() && chars[i] != '\'' {
        if chars[i] == '\\' && i + 1 < chars.len() {
            i += 1;
            let (c, used) = match chars[i] {
                'n' => (Some('\n'), 1),
                't' => (Some('\t'), 1),
                'r' => (Some('\r'), 1),
                'a' => (Some('\x07'), 1),
                'b' => (Some('\x08'), 1),
                'e' | 'E' => (Some('\x1b'), 1),
                'f' => (Some('\x0c'), 1),
                'v' => (Some('\x0b'), 1),
                'x' => hex_escape(chars, i + 1, 2),
                'u' => hex_escape(chars, i + 1, 4),
                'U' => hex_escape(chars, i + 1, 8),
                '0'..='7' => octal_escape(chars, i),
                other => (Some(other), 1),
            };
            if let Some(c) = c {
                s.push(c);
            }
            i += used.max(1);
            // `used` counts from the escape letter for x/u/U (letter + digits).
            continue;
        }
        s.push(chars[i]);
        i += 1;
    }
    (s, i)
}

fn hex_escape(chars: &[char], start: usize, max: usize) -> (Option<char>, usize) {
    let digits: String = chars[start.min(chars.len())..]
        .iter()
        .take(max)
        .take_while(|c| c.is_ascii_hexdigit())
        .collect();
    let value = u32::from_str_radix(&digits, 16)
        .ok()
        .and_then(char::from_u32);
    (value, 1 + digits.len())
}

fn octal_escape(chars: &[char], start: usize) -> (Option<char>, usize) {
    let digits: String = chars[start..]
        .iter()
        .take(3)
        .take_while(|c| matches!(c, '0'..='7'))
        .collect();
    let value = u32::from_str_radix(&digits, 8)
        .ok()
        .and_then(char::from_u32);
    (value, digits.len())
}

/// Brace expansion of one word (`{rm,-rf}` → `rm`, `-rf`; `a{b,c}d` → `abd`, `acd`),
/// on unquoted braces only. Sequences (`{1..3}`) are left alone.
fn brace_expand(chars: &[(char, bool)]) -> Vec<String> {
    let mut results = Vec::new();
    expand_into(chars, &mut results);
    results
}

fn expand_into(chars: &[(char, bool)], out: &mut Vec<String>) {
    if out.len() >= MAX_BRACE_WORDS {
        return;
    }
    if let Some((open, close, commas)) = find_brace_group(chars) {
        let prefix = &chars[..open];
        let suffix = &chars[close + 1..];
        let mut start = open + 1;
        for end in commas.into_iter().chain(std::iter::once(close)) {
            let mut combined: Vec<(char, bool)> = prefix.to_vec();
            combined.extend_from_slice(&chars[start..end]);
            combined.extend_from_slice(suffix);
            expand_into(&combined, out);
            start = end + 1;
        }
    } else {
        out.push(chars.iter().map(|(c, _)| c).collect());
    }
}

/// The first unquoted `{…}` with a top-level comma: (open, close, comma positions).
fn find_brace_group(chars: &[(char, bool)]) -> Option<(usize, usize, Vec<usize>)> {
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
                        break;
                    }
                    return Some((open, j, commas));
                }
                '}' => depth -= 1,
                ',' if depth == 0 => commas.push(j),
                _ => {}
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(command: &SimpleCommand) -> Vec<&str> {
        command.iter().map(|w| w.text.as_str()).collect()
    }

    fn lexed(text: &str) -> Vec<Vec<String>> {
        lex(text)
            .iter()
            .map(|c| texts(c).into_iter().map(String::from).collect())
            .collect()
    }

    fn candidates(text: &str) -> Vec<String> {
        candidate_commands(text)
            .unwrap()
            .iter()
            .map(|c| texts(c).join(" "))
            .collect()
    }

    #[test]
    fn plain_words_are_split_on_blanks() {
        assert_eq!(lexed("git  push\t--force"), [["git", "push", "--force"]]);
    }

    #[test]
    fn separators_split_commands() {
        for text in [
            "ls; rm -rf /",
            "ls;rm -rf /",
            "ls && rm -rf /",
            "ls || rm -rf /",
            "ls | rm -rf /",
            "ls & rm -rf /",
            "ls\nrm -rf /",
            "ls |& rm -rf /",
        ] {
            assert_eq!(
                lexed(text),
                [vec!["ls"], vec!["rm", "-rf", "/"]],
                "{text:?}"
            );
        }
    }

    #[test]
    fn quotes_are_removed() {
        assert_eq!(lexed(r#"r"m" '-rf' \/"#), [["rm", "-rf", "/"]]);
        assert_eq!(lexed(r#""a b" 'c d'"#), [["a b", "c d"]]);
    }

    #[test]
    fn quoted_separators_do_not_split() {
        assert_eq!(lexed("echo 'a; rm -rf /'"), [["echo", "a; rm -rf /"]]);
        assert_eq!(lexed(r#"echo "a && b""#), [["echo", "a && b"]]);
        assert_eq!(lexed(r"echo a\;b"), [["echo", "a;b"]]);
    }

    #[test]
    fn substitutions_are_commands_of_their_own() {
        for text in [
            "echo $(rm -rf /)",
            "echo \"$(rm -rf /)\"",
            "echo `rm -rf /`",
            "echo \"`rm -rf /`\"",
            "cat <(rm -rf /)",
            "tee >(rm -rf /)",
            "echo ${x:-$(rm -rf /)}",
            "echo $((1 + $(rm -rf /)))",
        ] {
            let all = lexed(text);
            assert!(
                all.iter().any(|c| c == &["rm", "-rf", "/"]),
                "{text:?} gave {all:?}"
            );
        }
    }

    #[test]
    fn nested_quotes_inside_substitutions_are_their_own() {
        let all = lexed(r#"echo "$(echo "inner" ; rm -rf /)" done"#);
        assert!(
            all.contains(&vec!["rm".into(), "-rf".into(), "/".into()]),
            "{all:?}"
        );
    }

    #[test]
    fn substituted_words_are_dynamic() {
        let commands = lex("$(echo rm) -rf /");
        let outer = commands.iter().find(|c| c.len() == 3).unwrap();
        assert!(outer[0].dynamic);
        assert!(!outer[1].dynamic);
        let commands = lex("\"$X\" -rf");
        assert!(commands[0][0].dynamic);
    }

    #[test]
    fn redirections_and_their_targets_are_dropped() {
        assert_eq!(lexed(">/dev/null rm -rf /"), [["rm", "-rf", "/"]]);
        assert_eq!(lexed("rm -rf / 2>&1"), [["rm", "-rf", "/"]]);
        assert_eq!(lexed("rm 2> err -rf /"), [["rm", "-rf", "/"]]);
        assert_eq!(lexed("rm &>log -rf /"), [["rm", "-rf", "/"]]);
        assert_eq!(lexed("cat <<EOF"), [["cat"]]);
    }

    #[test]
    fn subshells_and_groups_split_commands() {
        assert_eq!(lexed("(rm -rf /)"), [["rm", "-rf", "/"]]);
        assert_eq!(lexed("{ rm -rf /; }"), [["rm", "-rf", "/"]]);
        assert_eq!(
            lexed("ls&&(cd x;rm -rf /)"),
            [vec!["ls"], vec!["cd", "x"], vec!["rm", "-rf", "/"]]
        );
    }

    #[test]
    fn comments_end_at_the_newline() {
        assert_eq!(lexed("ls # rm -rf /"), [["ls"]]);
        assert_eq!(
            lexed("ls # x\nrm -rf /"),
            [vec!["ls"], vec!["rm", "-rf", "/"]]
        );
        assert_eq!(lexed("echo a#b"), [["echo", "a#b"]]);
    }

    #[test]
    fn ansi_c_strings_are_decoded() {
        assert_eq!(lexed(r"$'\x72m' -rf /"), [["rm", "-rf", "/"]]);
        assert_eq!(lexed(r"$'\162m' -rf /"), [["rm", "-rf", "/"]]);
        assert_eq!(lexed(r"$'r\u006d' -rf /"), [["rm", "-rf", "/"]]);
    }

    #[test]
    fn brace_expansion_produces_words() {
        assert_eq!(lexed("{rm,-rf,/}"), [["rm", "-rf", "/"]]);
        assert_eq!(lexed("a{b,c}d"), [["abd", "acd"]]);
        assert_eq!(lexed("'{rm,-rf}'"), [["{rm,-rf}"]]);
        assert_eq!(lexed("echo {1..3}"), [["echo", "{1..3}"]]);
    }

    #[test]
    fn line_continuations_join_words() {
        assert_eq!(lexed("r\\\nm -rf /"), [["rm", "-rf", "/"]]);
    }

    #[test]
    fn unterminated_input_never_panics() {
        for text in [
            "'",
            "\"",
            "$(",
            "`",
            "${",
            "$'",
            "\\",
            "echo \"$(",
            "((",
            "))",
            "}}",
            "{{",
            "<",
            ">",
            "&>",
            "$'\\x",
            "$'\\u",
            "$'\\0",
            "a{,",
            "{,}",
            "$",
            "\"$\"",
            "<(",
            "$((",
            "${a",
        ] {
            let _ = candidate_commands(text).unwrap();
        }
    }

    #[test]
    fn assignments_are_skipped() {
        assert_eq!(candidates("FOO=1 BAR+=2 rm -rf /"), ["rm -rf /"]);
        assert_eq!(candidates("FOO=1"), Vec::<String>::new());
        // Not an assignment: the name is not a valid identifier.
        assert_eq!(candidates("1FOO=1 rm"), ["1FOO=1 rm"]);
    }

    #[test]
    fn wrappers_are_peeled_one_by_one() {
        let found = candidates("env -i FOO=1 nohup timeout -s KILL 5 nice -n 10 rm -rf /");
        assert!(found.contains(&"rm -rf /".to_owned()), "{found:?}");
        assert!(found.iter().any(|c| c.starts_with("env ")), "{found:?}");
        assert!(found.iter().any(|c| c.starts_with("nohup ")), "{found:?}");
    }

    #[test]
    fn wrapper_options_with_values_are_skipped() {
        for text in [
            "sudo -u root rm -rf /",
            "sudo -uroot rm -rf /",
            "sudo --user=root rm -rf /",
            "sudo --user root -- rm -rf /",
            "timeout --signal=KILL 10s rm -rf /",
            "nice -5 rm -rf /",
            "command -p rm -rf /",
            "exec -a name rm -rf /",
            "stdbuf -oL rm -rf /",
            "xargs -n 1 rm -rf /",
            "env -u HOME rm -rf /",
            "env -S 'rm -rf /'",
            "env --split-string='rm -rf' /",
            "/usr/bin/env rm -rf /",
            "time -p rm -rf /",
            "sudo -R / rm -rf /",
            "runuser -u root -- rm -rf /",
            "flock . rm -rf /",
            "flock -w 5 . rm -rf /",
            "xargs -a list -i rm -rf /",
            "xargs -a list -e rm -rf /",
            "xargs -a list -l rm -rf /",
            "xargs -a list --replace rm -rf /",
            "xargs -iX rm -rf /",
            "bash -c -- 'rm -rf /'",
            "sh -c -e 'rm -rf /'",
            "bash -xc -- 'rm -rf /'",
            "bash -c -o errexit 'rm -rf /'",
            "bash -o errexit -c 'rm -rf /'",
            "bash +o posix -c 'rm -rf /'",
        ] {
            let found = candidates(text);
            assert!(
                found.iter().any(|c| c.starts_with("rm -rf")),
                "{text:?} gave {found:?}"
            );
        }
    }

    #[test]
    fn nested_shell_strings_are_read_too() {
        for text in [
            "bash -c 'rm -rf /'",
            "sh -lc \"rm -rf /\"",
            "/bin/sh -ec 'ls; rm -rf /'",
            "eval 'rm -rf /'",
            "eval rm -rf /",
            "su -c 'rm -rf /' root",
            "find . -exec rm -rf {} ;",
            "bash -c \"bash -c 'rm -rf /'\"",
        ] {
            let found = candidates(text);
            assert!(
                found.iter().any(|c| c.starts_with("rm -rf")),
                "{text:?} gave {found:?}"
            );
        }
    }

    #[test]
    fn nesting_past_the_bound_is_refused_not_let_through() {
        let text = format!("{}rm -rf /", "eval ".repeat(40));
        assert_eq!(candidate_commands(&text), Err(TooComplex));
        let text = format!("{}rm -rf /", "find -exec ".repeat(40));
        assert_eq!(candidate_commands(&text), Err(TooComplex));
        let mut text = "rm x".to_owned();
        for _ in 0..(MAX_NESTED_SHELLS + 1) {
            text = format!("sh -c {}", shell_words::quote(&text));
        }
        assert_eq!(candidate_commands(&text), Err(TooComplex));
        // Within the bound, the innermost command is found.
        let text = format!("{}rm -rf /", "eval ".repeat(MAX_NESTED_SHELLS));
        assert!(candidates(&text).contains(&"rm -rf /".to_owned()));
    }

    #[test]
    fn reserved_words_do_not_hide_commands() {
        for text in [
            "for f in a; do rm -rf /; done",
            "if true; then rm -rf /; fi",
            "if rm -rf /; then :; fi",
            "if false; then :; elif rm -rf /; then :; fi",
            "if false; then :; else rm -rf /; fi",
            "while rm -rf /; do :; done",
            "until rm -rf /; do :; done",
            "! rm -rf /",
            "coproc rm -rf /",
            "case x in x) rm -rf /;; esac",
        ] {
            let found = candidates(text);
            assert!(
                found.iter().any(|c| c.starts_with("rm -rf")),
                "{text:?} gave {found:?}"
            );
        }
    }

    #[test]
    fn computed_command_strings_are_wildcards() {
        for text in ["eval \"$CMD\"", "bash -c \"$CMD\"", "sh -c \"rm $X\""] {
            let found = candidate_commands(text).unwrap();
            assert!(
                found.iter().any(|c| c.len() == 1 && c[0].dynamic),
                "{text:?} gave {found:?}"
            );
        }
    }

    #[test]
    fn pathological_input_is_reported_not_ground_through() {
        let text = format!("{}rm", "env ".repeat(20_000));
        assert_eq!(candidate_commands(&text), Err(TooComplex));
    }

    #[test]
    fn brace_expansion_is_bounded() {
        let text = "{a,b}".repeat(30);
        let found = lex(&text);
        assert!(found[0].len() <= MAX_BRACE_WORDS);
    }
}
