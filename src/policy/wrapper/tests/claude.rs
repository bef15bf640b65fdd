//! Claude Code's wrappers: every form and setup it has sent, the setup vocabulary, and the
//! forgeries of them that must be judged whole.

use super::*;

#[test]
fn the_latest_claude_wrapper_gives_back_the_command() {
    let text = claude_latest("git status");
    let u = unwrap(&text).unwrap();
    assert_eq!(u.agent, "claude-code");
    assert_eq!(u.template, "claude-code/2.1");
    assert_eq!(u.inner, "git status");
    assert_eq!(u.bookkeeping.sources, Some(SNAP));
    assert_eq!(u.bookkeeping.sources_home, Some("/home/alice"));
    assert_eq!(u.bookkeeping.writes, Some(CWD));
    assert_eq!(u.bookkeeping.stdin, Stdin::DevNull);
    assert_eq!(u.bookkeeping.exec_shell, None);
}

#[test]
fn single_quotes_in_the_command_are_undone() {
    let command = "echo 'it'\\''s done' && printf '%s' \"$HOME\"";
    assert_eq!(inner(&claude_latest(command)).as_deref(), Some(command));
    assert!(matches!(
        unwrap(&claude_latest("it's")).unwrap().inner,
        Cow::Owned(_)
    ));
    assert!(matches!(
        unwrap(&claude_latest("ls -la")).unwrap().inner,
        Cow::Borrowed(_)
    ));
}

#[test]
fn a_bare_simple_word_is_claudes_quoting_of_a_simple_command() {
    let text = claude_2_1(BASH_UNALIAS, "pwd", " < /dev/null");
    assert_eq!(inner(&text).as_deref(), Some("pwd"));
    let text = claude_2_1(BASH_UNALIAS, "cargo-test", " < /dev/null");
    assert_eq!(inner(&text).as_deref(), Some("cargo-test"));
    // Words the outer shell would expand are not Claude Code's bare words.
    for word in ["~/x", "=ls", "-x", "a*", "a?", "$x", "a\\b", "#x", "a[b]"] {
        assert_eq!(
            inner(&claude_2_1(BASH_UNALIAS, word, " < /dev/null")),
            None,
            "{word}"
        );
    }
}

#[test]
fn every_claude_2_1_setup_is_recognised_with_and_without_the_stdin_redirect() {
    for setup in [
        BASH_2_1_332,
        ZSH_2_1_332,
        BASH_UNALIAS,
        "setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL 2>/dev/null || true && { \\builtin unalias -- 'unsetenv'; \\builtin unset -f -- 'unsetenv'; } >/dev/null 2>&1 || true",
        "shopt -u extglob 2>/dev/null || true",
        "setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL 2>/dev/null || true",
        "setopt NO_EXTENDED_GLOB 2>/dev/null || true",
    ] {
        for (stdin, expect) in [(" < /dev/null", Stdin::DevNull), ("", Stdin::Inherited)] {
            let text = claude_2_1(setup, &claude_quote("cat <<'EOF'\nx\nEOF"), stdin);
            let u = unwrap(&text).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(u.template, "claude-code/2.1");
            assert_eq!(u.inner, "cat <<'EOF'\nx\nEOF");
            assert_eq!(u.bookkeeping.stdin, expect);
        }
    }
}

/// Setups Claude Code has not sent (yet), made only of the vocabulary: recognised,
/// and the inner command is the same.
#[test]
fn any_setup_made_of_the_vocabulary_is_recognised() {
    for setup in [
        "\\builtin setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL 2>/dev/null || true",
        "{ \\builtin unalias -- 'grep'; \\builtin unset -f -- 'grep'; } >/dev/null 2>&1 || true && \\builtin shopt -u extglob 2>/dev/null || true",
        "{ \\builtin shopt -u extglob || \\builtin setopt NO_EXTENDED_GLOB; } >/dev/null 2>&1 || true",
        "shopt -u extglob nullglob dotglob failglob nocaseglob nocasematch globstar || true",
        "unalias -- rg || true && unset -f -- rg || true",
        "{ \\builtin unalias -- 'x.y-z'; } 2>/dev/null || true",
    ] {
        let text = claude_2_1(setup, &claude_quote("ls"), " < /dev/null");
        let u = unwrap(&text).unwrap_or_else(|| panic!("{text}"));
        assert_eq!(
            (u.template, &*u.inner),
            ("claude-code/2.1", "ls"),
            "{setup}"
        );
    }
    // Which shell the setup's words are builtins of, for the run path to compare with
    // the shell it runs: a bare `shopt` is bash's, a bare `setopt` zsh's.
    let shells = |setup: &str| {
        unwrap(&claude_2_1(setup, "'ls'", " < /dev/null")).and_then(|u| u.bookkeeping.shells)
    };
    assert_eq!(shells(BASH_2_1_332), Some(&["bash", "zsh"][..]));
    assert_eq!(shells(BASH_UNALIAS), Some(&["bash"][..]));
    assert_eq!(
        shells("setopt NO_EXTENDED_GLOB 2>/dev/null || true"),
        Some(&["zsh"][..])
    );
    // Both bare: one of them would be a program found on PATH whichever shell runs it.
    assert_eq!(
        shells("{ shopt -u extglob || setopt NO_EXTENDED_GLOB; } >/dev/null 2>&1 || true"),
        None
    );
    assert_eq!(
        shells("shopt -u extglob || true && setopt NO_EXTENDED_GLOB || true"),
        None
    );
    // Other templates make no such demand.
    assert_eq!(unwrap(&gemini("ls")).unwrap().bookkeeping.shells, None);
    // No setup at all: the frame alone.
    let bare =
        format!("source {SNAP} 2>/dev/null || true && eval 'ls' < /dev/null && pwd -P >| {CWD}");
    assert_eq!(inner(&bare).as_deref(), Some("ls"));
    // Boilerplate, not a program: a bounded number of statements.
    let many = vec!["shopt -u extglob || true"; SETUP_MAX_STATEMENTS + 1].join(" && ");
    assert_eq!(inner(&claude_2_1(&many, "'ls'", " < /dev/null")), None);
    let enough = vec!["shopt -u extglob || true"; SETUP_MAX_STATEMENTS].join(" && ");
    assert!(inner(&claude_2_1(&enough, "'ls'", " < /dev/null")).is_some());
}

/// Setup-shaped text that runs something besides the vocabulary, or changes how the
/// shell reads the command gate judged: never a wrapper, so it is judged whole (and
/// matches no allow rule). `tests/agent_fixtures.rs` runs such texts in bash, where
/// the smuggled part does run.
#[test]
fn setup_shaped_text_that_smuggles_a_command_is_not_a_wrapper() {
    // The control: the same text with a statement of the vocabulary is a wrapper.
    let control = claude_2_1(
        "shopt -u extglob || true",
        &claude_quote("ls"),
        " < /dev/null",
    );
    assert_eq!(inner(&control).as_deref(), Some("ls"));
    for setup in SMUGGLED_SETUPS {
        let text = claude_2_1(setup, &claude_quote("ls"), " < /dev/null");
        assert_eq!(inner(&text), None, "{setup}");
        // Claude Code's mark is still there: gate says it looks like its wrapper.
        assert_eq!(resembles(&text).map(|f| f.agent), Some("claude-code"));
    }
}

#[test]
fn the_old_claude_forms_are_recognised() {
    let text = format!("source {SNAP} && eval date \\< /dev/null && pwd -P >| {CWD}");
    let u = unwrap(&text).unwrap();
    assert_eq!((u.template, &*u.inner), ("claude-code/1.0", "date"));
    assert_eq!(u.bookkeeping.stdin, Stdin::DevNull);
    let text = format!(
        "source {ZSNAP} && {{ shopt -u extglob || setopt NO_EXTENDED_GLOB; }} 2>/dev/null || true && eval 'python x.py \"a b\"' \\< /dev/null && pwd -P >| {CWD}"
    );
    let u = unwrap(&text).unwrap();
    assert_eq!(
        (u.template, &*u.inner),
        ("claude-code/2.0-extglob", "python x.py \"a b\"")
    );
    // The pipe form of 1.0: the redirect is inside the command, nothing after it.
    let text = format!("source {SNAP} && eval 'ps aux < /dev/null | grep x' && pwd -P >| {CWD}");
    let u = unwrap(&text).unwrap();
    assert_eq!(&*u.inner, "ps aux < /dev/null | grep x");
    assert_eq!(u.bookkeeping.stdin, Stdin::Inherited);
}

#[test]
fn the_old_forms_only_accept_commands_that_the_appended_redirect_leaves_alone() {
    for command in [
        "ls #x",
        "echo 'a",
        "echo \"a",
        "echo a\\",
        "echo $(id)",
        "a\nb",
    ] {
        let text = format!(
            "source {SNAP} && eval {} \\< /dev/null && pwd -P >| {CWD}",
            npm_quote(command)
        );
        assert_eq!(inner(&text), None, "{command:?}");
    }
    for command in ["ls -la", "echo \"a b\" 'c'", "a | b", "x=1 y"] {
        let text = format!(
            "source {SNAP} && eval {} \\< /dev/null && pwd -P >| {CWD}",
            npm_quote(command)
        );
        assert_eq!(inner(&text).as_deref(), Some(command), "{text}");
    }
}
