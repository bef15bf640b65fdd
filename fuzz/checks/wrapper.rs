//! The agent-wrapper recogniser, `wrapper::unwrap`, and the start-up call recogniser,
//! `wrapper::startup`.
//!
//! Input: UTF-8 text, the `-c` string an agent sent. `unwrap` must never panic and must
//! be deterministic. When it recognises a wrapper, the inner command it returns must be
//! a slice of the text, or, when it had to undo quoting, exactly what the shell makes of
//! one word of the text ([`shell_word`], written here from POSIX, not from gate's code).
//! The bookkeeping it reports (files sourced and written, the shell exec'd, a directory
//! put first on PATH) must be slices of the text too, and no path it reports may have a
//! `.` or `..` component.
//!
//! The same text as the script of each start-up call shape (`-c -l`, `-lc`, `-c`):
//! `startup` must never panic and be deterministic; a snapshot path it names must be a
//! slice of the text without `.`/`..` components, under the home it names; a Codex check
//! must be exactly `set -e; . "PATH"`.

use std::borrow::Cow;

use gate::policy::wrapper;

pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let result = wrapper::unwrap(text);
    assert_eq!(
        wrapper::unwrap(text),
        result,
        "wrapper::unwrap({text:?}) is not deterministic"
    );
    let Some(unwrapped) = result else {
        return;
    };
    match &unwrapped.inner {
        Cow::Borrowed(inner) => assert!(
            is_slice_of(inner, text),
            "{text:?}: the inner command {inner:?} is borrowed from elsewhere"
        ),
        Cow::Owned(inner) => assert!(
            is_some_word_of(inner, text),
            "{text:?}: the inner command {inner:?} is not what the shell makes of any word"
        ),
    }
    let bookkeeping = unwrapped.bookkeeping;
    for field in [
        bookkeeping.sources,
        bookkeeping.sources_home,
        bookkeeping.writes,
        bookkeeping.temp_dir,
        bookkeeping.exec_shell,
        bookkeeping.path_prepend,
    ]
    .into_iter()
    .flatten()
    {
        assert!(
            is_slice_of(field, text),
            "{text:?}: the bookkeeping {field:?} is not part of the text"
        );
        assert!(
            !has_dot_component(field),
            "{text:?}: the bookkeeping path {field:?} has a . or .. component"
        );
    }
    check_startup(text);
}

fn check_startup(text: &str) {
    for args in [["-c", "-l", text].as_slice(), &["-lc", text], &["-c", text]] {
        let call = wrapper::startup(args);
        assert_eq!(
            wrapper::startup(args),
            call,
            "startup({args:?}) is not deterministic"
        );
        let Some(call) = call else {
            continue;
        };
        if let Some(path) = call.snapshot() {
            let home = call.home.expect("a snapshot path has a home");
            assert!(
                is_slice_of(path, text),
                "{args:?}: {path:?} is not part of the text"
            );
            assert!(
                !has_dot_component(path),
                "{args:?}: {path:?} has a . or .. component"
            );
            assert!(
                path.starts_with(home) && home.starts_with('/'),
                "{args:?}: {home:?}"
            );
        }
        if call.answer == wrapper::StartupAnswer::Nothing {
            assert_eq!(
                args,
                ["-c", "env"],
                "only the exact probe is answered with nothing"
            );
        }
        if let wrapper::StartupAnswer::CheckStub(path) = call.answer {
            assert_eq!(text, format!("set -e; . \"{path}\""), "{args:?}");
        }
    }
}

fn has_dot_component(path: &str) -> bool {
    path.split('/').any(|c| c == "." || c == "..")
}

fn is_slice_of(part: &str, whole: &str) -> bool {
    let start = part.as_ptr() as usize;
    let base = whole.as_ptr() as usize;
    start >= base && start + part.len() <= base + whole.len()
}

/// Whether some word of `text`, starting anywhere, unquotes to `inner`.
fn is_some_word_of(inner: &str, text: &str) -> bool {
    text.char_indices()
        .any(|(i, _)| shell_word(&text[i..]).as_deref() == Some(inner))
}

/// The value of the shell word at the start of `text`, up to the first unquoted blank
/// or operator character: `'…'` literal, `"…"` with `\` escaping only `$`, `` ` ``, `"`,
/// `\` and newline, and outside quotes `\X` for X. `None` if a quote is left open or the
/// word has an unquoted `$` or `` ` `` (then its value is not known from the text).
fn shell_word(text: &str) -> Option<String> {
    let mut value = String::new();
    let mut chars = text.chars().peekable();
    let mut any = false;
    while let Some(&c) = chars.peek() {
        match c {
            ' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')' => break,
            '\'' => {
                chars.next();
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => value.push(c),
                    }
                }
            }
            '"' => {
                chars.next();
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.next()? {
                            c @ ('$' | '`' | '"' | '\\') => value.push(c),
                            '\n' => {}
                            c => {
                                value.push('\\');
                                value.push(c);
                            }
                        },
                        '$' | '`' => return None,
                        c => value.push(c),
                    }
                }
            }
            '\\' => {
                chars.next();
                match chars.next()? {
                    '\n' => {}
                    c => value.push(c),
                }
            }
            '$' | '`' => return None,
            c => {
                chars.next();
                value.push(c);
            }
        }
        any = true;
    }
    any.then_some(value)
}
