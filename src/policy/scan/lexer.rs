//! The scanner's reader of shell text: simple commands, with quotes removed, through
//! substitutions, here-documents and nested command lists, in the reading the budget names.
//!
//! It never fails and never panics: unclosed text runs to the end. It expands braces
//! ([`super::braces`]) and marks patterns ([`super::glob`]); it peels no wrapper.

use super::braces::brace_expand;
use super::glob::glob_pattern;
use super::{Budget, MAX_NESTED_TEXT, SimpleCommand, Word};
use crate::shells::{self, Quoting};

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

/// Split shell text into simple commands. Never fails: unterminated quotes and
/// substitutions run to the end of the text.
#[cfg(test)]
pub(super) fn lex(text: &str) -> Vec<SimpleCommand> {
    lex_in(text, &mut Budget::default(), 0)
}

/// `lex` (a test's entry) with a shared budget; `depth` counts texts read inside other texts. Past
/// the budget or the depth it sets `budget.exceeded` and returns what it found.
pub(super) fn lex_in(text: &str, budget: &mut Budget, depth: usize) -> Vec<SimpleCommand> {
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
