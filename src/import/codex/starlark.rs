//! The literal subset of Starlark that Codex's `.rules` files are written in, read and
//! never executed: statements that are calls at the top level (`name(arguments)`), whose
//! arguments are string literals, lists of them, `True`, `False` and `None`, positional
//! or by keyword. Comments, blank lines, `;` between calls and calls spread over many
//! lines are read as Starlark reads them.
//!
//! Everything else Starlark allows — variables, `load`, loops, functions, operators,
//! numbers, dictionaries, string formatting — is an error naming the line and what was
//! not understood: an importer that guessed past a computed value could import a rule
//! that is not the one Codex runs.

use std::fmt;

/// A value written as a literal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Str(String),
    List(Vec<Value>),
    Bool(bool),
    None,
}

impl Value {
    /// The value's type as Starlark names it, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Str(_) => "string",
            Value::List(_) => "list",
            Value::Bool(_) => "bool",
            Value::None => "None",
        }
    }
}

/// Starlark's own spelling of a value, to show a rule as it was written.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Str(s) => {
                f.write_str("\"")?;
                for c in s.chars() {
                    match c {
                        '"' => f.write_str("\\\"")?,
                        '\\' => f.write_str("\\\\")?,
                        '\n' => f.write_str("\\n")?,
                        '\t' => f.write_str("\\t")?,
                        c if c.is_control() => write!(f, "\\u{:04x}", u32::from(c))?,
                        c => write!(f, "{c}")?,
                    }
                }
                f.write_str("\"")
            }
            Value::List(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
            Value::Bool(true) => f.write_str("True"),
            Value::Bool(false) => f.write_str("False"),
            Value::None => f.write_str("None"),
        }
    }
}

/// One argument of a call: by keyword (`decision = "prompt"`) or by position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arg {
    pub name: Option<String>,
    pub value: Value,
}

/// A call at the top level of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub name: String,
    /// The 1-based line of the function's name.
    pub line: u32,
    pub args: Vec<Arg>,
}

/// What could not be read, and on which 1-based line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub line: u32,
    pub why: String,
}

/// Read a whole file into its calls, in order.
pub fn parse(text: &str) -> Result<Vec<Call>, SyntaxError> {
    let tokens = lex(text)?;
    Parser { tokens, at: 0 }.file()
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Name(String),
    Str(String),
    Open,
    Close,
    OpenList,
    CloseList,
    Comma,
    Assign,
    Semicolon,
    /// The end of a logical line (outside brackets).
    Newline,
    End,
    /// Something this reader does not take, described: an error when the parser
    /// reaches it (so that a statement it does not take is named first).
    Bad(String),
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    line: u32,
    /// The token is the first thing on its line, in column 0.
    line_start: bool,
}

fn err(line: u32, why: impl Into<String>) -> SyntaxError {
    SyntaxError {
        line,
        why: why.into(),
    }
}

/// Words Starlark reserves: a statement starting with one is a construct this reader
/// does not take (`load`, `def`, `for`, `if` ...).
const KEYWORDS: [&str; 18] = [
    "and", "break", "continue", "def", "elif", "else", "for", "if", "in", "lambda", "load", "not",
    "or", "pass", "return", "while", "with", "yield",
];

fn lex(text: &str) -> Result<Vec<Token>, SyntaxError> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    let mut line = 1u32;
    let mut line_begin = 0usize;
    // Brackets open: newlines inside them are only white space.
    let mut depth = 0usize;
    while i < chars.len() {
        let c = chars[i];
        let line_start = i == line_begin;
        let push = |tokens: &mut Vec<Token>, tok| {
            tokens.push(Token {
                tok,
                line,
                line_start,
            })
        };
        match c {
            ' ' | '\t' | '\x0c' => i += 1,
            '\r' if chars.get(i + 1) == Some(&'\n') => i += 1,
            '\n' => {
                if depth == 0 {
                    push(&mut tokens, Tok::Newline);
                }
                i += 1;
                line += 1;
                line_begin = i;
            }
            '#' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '(' | '[' => {
                depth += 1;
                push(
                    &mut tokens,
                    if c == '(' { Tok::Open } else { Tok::OpenList },
                );
                i += 1;
            }
            ')' | ']' => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| err(line, format!("a '{c}' with nothing open before it")))?;
                push(
                    &mut tokens,
                    if c == ')' { Tok::Close } else { Tok::CloseList },
                );
                i += 1;
            }
            ',' => {
                push(&mut tokens, Tok::Comma);
                i += 1;
            }
            ';' => {
                push(&mut tokens, Tok::Semicolon);
                i += 1;
            }
            '=' if chars.get(i + 1) != Some(&'=') => {
                push(&mut tokens, Tok::Assign);
                i += 1;
            }
            '"' | '\'' => {
                let start_line = line;
                let (s, next, lines) = string(&chars, i, false, line)?;
                tokens.push(Token {
                    tok: Tok::Str(s),
                    line: start_line,
                    line_start,
                });
                i = next;
                line += lines;
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let start = i;
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                let name: String = chars[start..i].iter().collect();
                if matches!(chars.get(i), Some('"' | '\'')) {
                    // A string with a prefix.
                    let start_line = line;
                    let s = match name.as_str() {
                        "r" | "R" => {
                            let (s, next, lines) = string(&chars, i, true, line)?;
                            i = next;
                            line += lines;
                            s
                        }
                        "f" | "F" => {
                            let (s, next, lines) = string(&chars, i, false, line)?;
                            if s.contains(['{', '}']) {
                                return Err(err(
                                    start_line,
                                    "an f-string with a replacement field: its value is \
                                     computed, and this reader takes only literal values",
                                ));
                            }
                            i = next;
                            line += lines;
                            s
                        }
                        other => {
                            return Err(err(
                                line,
                                format!(
                                    "a string with the prefix `{other}` (only plain, raw \
                                     `r\"…\"` and literal `f\"…\"` strings are taken)"
                                ),
                            ));
                        }
                    };
                    tokens.push(Token {
                        tok: Tok::Str(s),
                        line: start_line,
                        line_start,
                    });
                } else {
                    push(&mut tokens, Tok::Name(name));
                }
            }
            '\\' => {
                push(
                    &mut tokens,
                    Tok::Bad(
                        "a backslash outside a string (a line continuation is not taken)".into(),
                    ),
                );
                i += 1;
            }
            c if c.is_ascii_digit() => {
                push(
                    &mut tokens,
                    Tok::Bad("a number (only strings, lists and True/False are taken)".into()),
                );
                while i < chars.len() && chars[i].is_ascii_alphanumeric() {
                    i += 1;
                }
            }
            c => {
                let what = match c {
                    '+' | '-' | '*' | '/' | '%' | '|' | '&' | '^' | '~' | '<' | '>' | '=' => {
                        format!("the operator '{c}'")
                    }
                    '{' | '}' => "a dictionary".to_owned(),
                    '.' => "an attribute or method ('.')".to_owned(),
                    ':' => "a block or slice (':')".to_owned(),
                    c if c.is_control() || c.is_whitespace() => {
                        format!("the character U+{:04X}", u32::from(c))
                    }
                    c => format!("the character '{c}'"),
                };
                push(&mut tokens, Tok::Bad(what));
                i += 1;
            }
        }
    }
    tokens.push(Token {
        tok: Tok::Newline,
        line,
        line_start: false,
    });
    tokens.push(Token {
        tok: Tok::End,
        line,
        line_start: false,
    });
    Ok(tokens)
}

/// Read the string literal whose opening quote is at `chars[at]`: its value, the index
/// after its closing quote, and how many newlines it spans.
fn string(
    chars: &[char],
    at: usize,
    raw: bool,
    line: u32,
) -> Result<(String, usize, u32), SyntaxError> {
    let quote = chars[at];
    let triple = chars.get(at + 1) == Some(&quote) && chars.get(at + 2) == Some(&quote);
    let mut i = if triple { at + 3 } else { at + 1 };
    let mut out = String::new();
    let mut lines = 0u32;
    let unterminated = || err(line, "a string that is never closed");
    loop {
        let c = *chars.get(i).ok_or_else(unterminated)?;
        if c == quote {
            if !triple {
                return Ok((out, i + 1, lines));
            }
            if chars.get(i + 1) == Some(&quote) && chars.get(i + 2) == Some(&quote) {
                return Ok((out, i + 3, lines));
            }
            out.push(c);
            i += 1;
            continue;
        }
        if c == '\n' {
            if !triple {
                return Err(unterminated());
            }
            lines += 1;
            out.push(c);
            i += 1;
            continue;
        }
        if c != '\\' {
            out.push(c);
            i += 1;
            continue;
        }
        let next = *chars.get(i + 1).ok_or_else(unterminated)?;
        if raw {
            // A raw string keeps the backslash, and the character after it never ends
            // the string.
            out.push('\\');
            out.push(next);
            if next == '\n' {
                lines += 1;
            }
            i += 2;
            continue;
        }
        i += 2;
        match next {
            '\n' => lines += 1,
            '\r' if chars.get(i) == Some(&'\n') => {
                lines += 1;
                i += 1;
            }
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'f' => out.push('\x0c'),
            'v' => out.push('\x0b'),
            '\\' | '\'' | '"' => out.push(next),
            '0'..='7' => {
                let mut value = next.to_digit(8).unwrap_or(0);
                let mut n = 1;
                while n < 3 {
                    match chars.get(i).and_then(|c| c.to_digit(8)) {
                        Some(d) => value = value * 8 + d,
                        None => break,
                    }
                    i += 1;
                    n += 1;
                }
                out.push(escaped_char(value, line)?);
            }
            'x' | 'u' | 'U' => {
                let len = match next {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let digits: String = chars.iter().skip(i).take(len).collect();
                let value = (digits.len() == len && digits.chars().all(|c| c.is_ascii_hexdigit()))
                    .then(|| u32::from_str_radix(&digits, 16).ok())
                    .flatten()
                    .ok_or_else(|| {
                        err(
                            line,
                            format!(
                                "the string escape `\\{next}{digits}` (it needs {len} hex digits)"
                            ),
                        )
                    })?;
                out.push(escaped_char(value, line)?);
                i += len;
            }
            // Starlark keeps an escape it does not know as written, backslash and all.
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
}

fn escaped_char(value: u32, line: u32) -> Result<char, SyntaxError> {
    char::from_u32(value).ok_or_else(|| {
        err(
            line,
            format!("a string escape for U+{value:04X}, which is not a character"),
        )
    })
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> &Token {
        &self.tokens[self.at.min(self.tokens.len() - 1)]
    }

    fn next(&mut self) -> Result<Token, SyntaxError> {
        let t = self.peek().clone();
        self.at += 1;
        match t.tok {
            Tok::Bad(what) => Err(err(t.line, what)),
            _ => Ok(t),
        }
    }

    fn file(&mut self) -> Result<Vec<Call>, SyntaxError> {
        let mut calls = Vec::new();
        loop {
            let t = self.peek().clone();
            match t.tok {
                Tok::End => return Ok(calls),
                Tok::Newline => {
                    self.at += 1;
                }
                _ => {
                    if !t.line_start {
                        return Err(err(
                            t.line,
                            "an indented statement (a top-level call starts in column 1)",
                        ));
                    }
                    loop {
                        calls.push(self.call()?);
                        let t = self.next()?;
                        match t.tok {
                            Tok::Newline => break,
                            Tok::Semicolon => {
                                if self.peek().tok == Tok::Newline {
                                    self.at += 1;
                                    break;
                                }
                            }
                            other => {
                                return Err(err(
                                    t.line,
                                    format!("{} after a call", describe(&other)),
                                ));
                            }
                        }
                    }
                }
            }
        }
    }

    fn call(&mut self) -> Result<Call, SyntaxError> {
        let t = self.next()?;
        let name = match t.tok {
            Tok::Name(name) if KEYWORDS.contains(&name.as_str()) => {
                return Err(err(
                    t.line,
                    format!(
                        "the statement `{name}` (only calls such as prefix_rule(...) are taken)"
                    ),
                ));
            }
            Tok::Name(name) => name,
            other => {
                return Err(err(
                    t.line,
                    format!(
                        "{} where a call such as prefix_rule(...) was expected",
                        describe(&other)
                    ),
                ));
            }
        };
        let open = self.next()?;
        if open.tok != Tok::Open {
            let what = match open.tok {
                Tok::Assign => format!("the assignment to `{name}` (variables are not taken)"),
                other => format!("`{name}` followed by {}", describe(&other)),
            };
            return Err(err(open.line, what));
        }
        let mut args: Vec<Arg> = Vec::new();
        loop {
            if self.peek().tok == Tok::Close {
                self.at += 1;
                break;
            }
            let arg = self.arg()?;
            if let Some(n) = &arg.name {
                if args.iter().any(|a| a.name.as_ref() == Some(n)) {
                    return Err(err(t.line, format!("the argument `{n}` given twice")));
                }
            } else if args.iter().any(|a| a.name.is_some()) {
                return Err(err(
                    t.line,
                    "a positional argument after a keyword argument",
                ));
            }
            args.push(arg);
            let sep = self.next()?;
            match sep.tok {
                Tok::Comma => {}
                Tok::Close => break,
                other => {
                    return Err(err(
                        sep.line,
                        format!("{} between the arguments of `{name}`", describe(&other)),
                    ));
                }
            }
        }
        Ok(Call {
            name,
            line: t.line,
            args,
        })
    }

    fn arg(&mut self) -> Result<Arg, SyntaxError> {
        if let Tok::Name(name) = &self.peek().tok {
            if self.tokens.get(self.at + 1).map(|t| &t.tok) == Some(&Tok::Assign) {
                let name = name.clone();
                self.at += 2;
                return Ok(Arg {
                    name: Some(name),
                    value: self.value()?,
                });
            }
        }
        Ok(Arg {
            name: None,
            value: self.value()?,
        })
    }

    fn value(&mut self) -> Result<Value, SyntaxError> {
        let t = self.next()?;
        match t.tok {
            Tok::Str(s) => {
                if let Tok::Str(_) = self.peek().tok {
                    return Err(err(
                        t.line,
                        "two string literals side by side (Starlark does not join them)",
                    ));
                }
                Ok(Value::Str(s))
            }
            Tok::Name(n) if n == "True" => Ok(Value::Bool(true)),
            Tok::Name(n) if n == "False" => Ok(Value::Bool(false)),
            Tok::Name(n) if n == "None" => Ok(Value::None),
            Tok::Name(n) => Err(err(
                t.line,
                if self.peek().tok == Tok::Open {
                    format!("the call `{n}(...)` inside an argument (values must be literals)")
                } else {
                    format!("the variable `{n}` (values must be literals)")
                },
            )),
            Tok::OpenList => {
                let mut items = Vec::new();
                loop {
                    if self.peek().tok == Tok::CloseList {
                        self.at += 1;
                        return Ok(Value::List(items));
                    }
                    items.push(self.value()?);
                    let sep = self.next()?;
                    match sep.tok {
                        Tok::Comma => {}
                        Tok::CloseList => return Ok(Value::List(items)),
                        Tok::Name(n) if n == "for" => {
                            return Err(err(sep.line, "a list comprehension"));
                        }
                        other => {
                            return Err(err(
                                sep.line,
                                format!("{} inside a list", describe(&other)),
                            ));
                        }
                    }
                }
            }
            Tok::Open => Err(err(
                t.line,
                "a tuple or parenthesised expression (Codex takes lists, written [...])",
            )),
            other => Err(err(
                t.line,
                format!("{} where a value was expected", describe(&other)),
            )),
        }
    }
}

fn describe(tok: &Tok) -> String {
    match tok {
        Tok::Name(n) => format!("`{n}`"),
        Tok::Str(_) => "a string".to_owned(),
        Tok::Open => "'('".to_owned(),
        Tok::Close => "')'".to_owned(),
        Tok::OpenList => "'['".to_owned(),
        Tok::CloseList => "']'".to_owned(),
        Tok::Comma => "','".to_owned(),
        Tok::Assign => "'='".to_owned(),
        Tok::Semicolon => "';'".to_owned(),
        Tok::Newline => "the end of the line".to_owned(),
        Tok::End => "the end of the file".to_owned(),
        Tok::Bad(what) => what.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Value {
        Value::Str(x.to_owned())
    }

    #[test]
    fn calls_over_many_lines_keep_the_line_of_their_name() {
        let text = "# rules\n\nprefix_rule(\n    pattern = [\"git\", [\"push\", \"fetch\"]],  # two\n    decision = 'prompt',\n)\nprefix_rule(pattern=[\"ls\"]); host_executable(name=\"ls\", paths=[])\n";
        let calls = parse(text).unwrap();
        assert_eq!(calls.len(), 3);
        assert_eq!((calls[0].name.as_str(), calls[0].line), ("prefix_rule", 3));
        assert_eq!(
            calls[0].args,
            vec![
                Arg {
                    name: Some("pattern".into()),
                    value: Value::List(vec![s("git"), Value::List(vec![s("push"), s("fetch")])])
                },
                Arg {
                    name: Some("decision".into()),
                    value: s("prompt")
                },
            ]
        );
        assert_eq!((calls[1].line, calls[2].line), (7, 7));
        assert_eq!(calls[2].name, "host_executable");
    }

    #[test]
    fn strings_are_read_as_starlark_reads_them() {
        let one = |lit: &str| match parse(&format!("f({lit})")).unwrap()[0].args[0]
            .value
            .clone()
        {
            Value::Str(s) => s,
            other => panic!("{other:?}"),
        };
        assert_eq!(one(r#""a b""#), "a b");
        assert_eq!(one(r#"'it\'s'"#), "it's");
        assert_eq!(one(r#""\x41\101\u0042\U00000043""#), "AABC");
        assert_eq!(one(r#""\a\v\t\n""#), "\x07\x0b\t\n");
        assert_eq!(one(r#""\777""#), "\u{1ff}");
        // An escape Starlark does not know stays as written.
        assert_eq!(one(r#""\d\z""#), "\\d\\z");
        assert_eq!(one(r#"r"s\t\"""#), "s\\t\\\"");
        assert_eq!(one(r#"f"plain""#), "plain");
        assert_eq!(one("\"a\\\nb\""), "ab");
        assert_eq!(one("\"\"\"x\n'y'\"\"\""), "x\n'y'");
        assert_eq!(one("''"), "");
    }

    #[test]
    fn a_string_over_lines_moves_the_line_count_on() {
        let calls = parse("f(\"\"\"a\nb\nc\"\"\")\ng()\n").unwrap();
        assert_eq!(calls[1].line, 4);
    }

    #[test]
    fn anything_beyond_literal_calls_is_refused_with_its_line() {
        for (text, line, needle) in [
            ("x = [\"git\"]\n", 1, "assignment to `x`"),
            ("prefix_rule(pattern=x)\n", 1, "variable `x`"),
            ("\n\nload(\"a.star\", \"x\")\n", 3, "`load`"),
            ("for x in []:\n  f()\n", 1, "`for`"),
            (
                "prefix_rule(pattern=[\"a\"] + [\"b\"])\n",
                1,
                "operator '+'",
            ),
            (
                "prefix_rule(pattern=[\"a\", \"b\" \"c\"])\n",
                1,
                "side by side",
            ),
            ("prefix_rule(pattern=(\"a\",))\n", 1, "tuple"),
            ("prefix_rule(pattern=[f\"{x}\"])\n", 1, "f-string"),
            ("prefix_rule(pattern=[b\"x\"])\n", 1, "prefix `b`"),
            ("prefix_rule(pattern=[1])\n", 1, "number"),
            (
                "prefix_rule(\n  pattern=[str(1)],\n)\n",
                2,
                "call `str(...)`",
            ),
            ("  prefix_rule(pattern=[\"x\"])\n", 1, "indented"),
            (
                "prefix_rule(pattern=[\"x\"], pattern=[\"y\"])\n",
                1,
                "given twice",
            ),
            (
                "prefix_rule(decision=\"allow\", [\"x\"])\n",
                1,
                "positional argument after",
            ),
            (
                "prefix_rule(pattern=[\"x\"]) prefix_rule()\n",
                1,
                "after a call",
            ),
            ("prefix_rule(pattern=[\"x\n\"])\n", 1, "never closed"),
            ("prefix_rule(pattern=[\"\\x4\"])\n", 1, "hex digits"),
            ("prefix_rule(pattern={})\n", 1, "dictionary"),
            ("prefix_rule(pattern=[x for x in y])\n", 1, "variable `x`"),
            ("prefix_rule(pattern=[\"x\"])\n)\n", 2, "nothing open"),
            ("prefix_rule(pattern=[\"x\"]).y\n", 1, "attribute"),
        ] {
            let e = parse(text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e:?}");
            assert!(e.why.contains(needle), "{text:?}: {}", e.why);
        }
    }

    #[test]
    fn values_are_shown_in_starlark_spelling() {
        let v = Value::List(vec![
            s("a\"b"),
            Value::List(vec![s("c")]),
            Value::Bool(true),
        ]);
        assert_eq!(v.to_string(), r#"["a\"b", ["c"], True]"#);
    }
}
