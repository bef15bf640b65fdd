use super::holes::{CODEX_OVERRIDE, CODEX_PROXY_ENV_SET, CODEX_PROXY_OVERRIDE};
use super::setup::SETUP_MAX_STATEMENTS;
use super::*;
use proptest::prelude::*;

const SNAP: &str = "/home/alice/.claude/shell-snapshots/snapshot-bash-1788557415117-j0hu0n.sh";
const ZSNAP: &str = "/home/alice/.claude/shell-snapshots/snapshot-zsh-1788557415117-j0hu0n.sh";
const CWD: &str = "/tmp/claude-f8eb-cwd";
const PGREP: &str = "/tmp/shell_pgrep_5a63468e1d38.tmp";
const CODEX_SNAP: &str = "/home/alice/.codex/shell_snapshots/0199a213-81c0-7800-8aa1-bbab2a035a53.1760000000000000000.sh";

/// Claude Code 2.1's own single-quoting (`singleQuoteWrap`).
fn claude_quote(command: &str) -> String {
    format!("'{}'", command.replace('\'', "'\"'\"'"))
}

fn claude_2_1(setup: &str, word: &str, stdin: &str) -> String {
    format!("source {SNAP} 2>/dev/null || true && {setup} && eval {word}{stdin} && pwd -P >| {CWD}")
}

const BASH_UNALIAS: &str = "shopt -u extglob 2>/dev/null || true && { \\builtin unalias -- 'unsetenv'; \\builtin unset -f -- 'unsetenv'; } >/dev/null 2>&1 || true";

/// Claude Code 2.1.332's setup (zsh): four more options, all off by default but
/// `EQUALS`.
const ZSH_2_1_332: &str = "\\builtin setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL NO_BRACE_CCL NO_MAGIC_EQUAL_SUBST NO_RC_QUOTES NO_EQUALS 2>/dev/null || true && { \\builtin unalias -- 'which'; \\builtin unset -f -- 'which'; } >/dev/null 2>&1 || true && { \\builtin unalias -- 'unsetenv'; \\builtin unset -f -- 'unsetenv'; } >/dev/null 2>&1 || true";

/// Claude Code 2.1.332's setup (bash): `\builtin shopt`, and `which` unaliased too.
const BASH_2_1_332: &str = "\\builtin shopt -u extglob 2>/dev/null || true && { \\builtin unalias -- 'which'; \\builtin unset -f -- 'which'; } >/dev/null 2>&1 || true && { \\builtin unalias -- 'unsetenv'; \\builtin unset -f -- 'unsetenv'; } >/dev/null 2>&1 || true";

/// Forged setups; `MARK` stands for a file the smuggled command would create.
const SMUGGLED_SETUPS: &[&str] = &[
    // Another command, anywhere in the vocabulary's shapes.
    "{ \\builtin unalias -- 'which'; touch MARK; } >/dev/null 2>&1 || true",
    "{ \\builtin unalias -- 'which'; \\builtin unset -f -- 'which'; touch MARK; } || true",
    "shopt -u extglob 2>/dev/null || touch MARK && \\builtin shopt -u extglob || true",
    "shopt -u extglob; touch MARK || true",
    "shopt -u extglob 2>/dev/null || true; touch MARK || true",
    "touch MARK 2>/dev/null || true",
    "\\builtin touch MARK || true",
    "\\builtin eval 'touch MARK' || true",
    "builtin eval touch MARK || true",
    "\\builtin shopt -u extglob\ntouch MARK || true",
    "{ \\builtin unalias -- 'which' & touch MARK; } || true",
    "{ \\builtin unalias -- 'which' | touch MARK; } || true",
    "{ \\builtin unalias -- 'which' && touch MARK; } || true",
    // Expansions in a name or an option: the shell would run them.
    "\\builtin unalias -- $(touch MARK) || true",
    "\\builtin unalias -- `touch MARK` || true",
    "\\builtin unset -f -- \"$(touch MARK)\" || true",
    "\\builtin unalias -- 'a'$(touch MARK) || true",
    "\\builtin shopt -u $(touch MARK) || true",
    "\\builtin shopt -u extglob$(touch MARK) || true",
    "\\builtin unalias -- ${X:=$(touch MARK)} || true",
    // A quote left open, or closed elsewhere.
    "\\builtin unalias -- 'which || true && touch MARK && \\builtin unalias -- ' || true",
    // Redirections to files: they write (or create MARK).
    "\\builtin shopt -u extglob >MARK || true",
    "\\builtin shopt -u extglob 2>MARK || true",
    "{ \\builtin unalias -- 'which'; } >/dev/null 2>MARK || true",
    // Options that change how the command gate judged is read or matched.
    "shopt -s extglob || true",
    "shopt -u extquote || true",
    "shopt -s expand_aliases || true",
    "setopt NO_CASE_GLOB || true",
    "setopt EXTENDED_GLOB || true",
    "set -o noglob || true",
    // Functions and aliases defined, not removed.
    "alias ls='touch MARK' || true",
    "{ ls() { touch MARK; }; } || true",
    "unset -v -- PATH || true",
    "unset -- PATH || true",
    // Not `|| true`.
    "shopt -u extglob || touch MARK",
    "shopt -u extglob && touch MARK || true",
];

fn claude_latest(command: &str) -> String {
    claude_2_1(BASH_2_1_332, &claude_quote(command), " < /dev/null")
}

fn gemini(command: &str) -> String {
    let mut body = command.to_owned();
    if !body.ends_with('&') {
        body.push(';');
    }
    format!(
        "shopt -u promptvars nullglob extglob nocaseglob dotglob; {{ {body} }}; __code=$?; pgrep -g 0 >{PGREP} 2>&1; exit $__code;"
    )
}

const GEMINI_DIR: &str = "/tmp/gemini-shell-dERLen";
const GUARD: &str = "shopt -u promptvars nullglob extglob nocaseglob dotglob; ";

/// Gemini CLI's own trimming: JavaScript's `trim()`, and a space after a final `\\`.
fn gemini_trim(command: &str) -> String {
    let mut body = command
        .trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
        .to_owned();
    if body.ends_with('\\') {
        body.push(' ');
    }
    body
}

/// Gemini CLI 0.44 and later (`hup`: 0.44's `trap '' HUP; ` first).
fn gemini_trap(command: &str, dir: &str, hup: bool) -> String {
    let hup = if hup { "trap '' HUP; " } else { "" };
    format!(
        "{hup}{GUARD}_bgpids_file={dir}/bgpids.tmp\n(\n  trap 'jobs -p > \"$_bgpids_file\"' EXIT\n{}\n)\n__code=$?\nexit $__code",
        gemini_trim(command)
    )
}

/// Gemini CLI 0.40 to 0.43.
fn gemini_pgrep_dir(command: &str, dir: &str) -> String {
    format!(
        "{GUARD}(\n{}\n)\n__code=$?; pgrep -g 0 >{dir}/pgrep.tmp 2>&1; exit $__code;",
        gemini_trim(command)
    )
}

/// Gemini CLI 0.37 to 0.39.
fn gemini_pgrep_037(command: &str) -> String {
    format!(
        "{GUARD}(\n{}\n); __code=$?; pgrep -g 0 >{PGREP} 2>&1; exit $__code;",
        gemini_trim(command)
    )
}

/// The user's own `!command` in Gemini CLI 0.40 and later.
fn gemini_user(command: &str, dir: &str) -> String {
    format!(
        "{GUARD}{{\n{}\n}}\n__code=$?; pwd > {dir}/pwd.tmp; exit $__code",
        gemini_trim(command)
    )
}

fn codex(shell: &str, script: &str) -> String {
    codex_with_snapshot(CODEX_SNAP, shell, script)
}

fn codex_with_snapshot(snapshot: &str, shell: &str, script: &str) -> String {
    format!(
        "if . '{snapshot}' >/dev/null 2>&1; then :; fi\n\nexec '{shell}' -c {}",
        claude_quote(script)
    )
}

/// npm shell-quote 1.8's `quote([s])`, for the 1.0/2.0 templates.
fn npm_quote(s: &str) -> String {
    if s.is_empty() {
        return "''".into();
    }
    let has = |set: &str| {
        s.chars()
            .any(|c| set.contains(c) || (set.contains(' ') && c.is_whitespace()))
    };
    if has("\" \\") && !s.contains('\'') {
        return format!("'{s}'");
    }
    if has("\"' ") {
        let mut out = String::from("\"");
        for c in s.chars() {
            if "\"\\$`!".contains(c) {
                out.push('\\');
            }
            out.push(c);
        }
        out.push('"');
        return out;
    }
    let mut out = String::new();
    for c in s.chars() {
        if "#!\"$&'()*,:;<=>?@[\\]^`{|}".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn inner(text: &str) -> Option<String> {
    unwrap(text).map(|u| u.inner.into_owned())
}

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

#[test]
fn gemini_cli_groups_are_recognised() {
    let text = gemini("ps aux | grep x");
    let u = unwrap(&text).unwrap();
    assert_eq!(
        (u.agent, u.template),
        ("gemini-cli", "gemini-cli/shopt-guard")
    );
    assert_eq!(u.inner, "ps aux | grep x");
    assert_eq!(u.bookkeeping.writes, Some(PGREP));
    assert_eq!(u.bookkeeping.sources, None);
    assert_eq!(
        inner(&gemini("npm run dev &")).as_deref(),
        Some("npm run dev &")
    );
    let plain = format!("{{ ls; }}; __code=$?; pgrep -g 0 >{PGREP} 2>&1; exit $__code;");
    assert_eq!(unwrap(&plain).unwrap().template, "gemini-cli/plain");
    // Gemini CLI trims the command and adds `;` unless it ends with `&`.
    for body in [" ls;", "ls ;", "ls", "ls &;", ";", "\u{a0}ls;", "ls\n;"] {
        let text = format!("{{ {body} }}; __code=$?; pgrep -g 0 >{PGREP} 2>&1; exit $__code;");
        assert_eq!(inner(&text), None, "{body:?}");
    }
}

#[test]
fn every_gemini_cli_family_since_0_37_is_recognised() {
    let command = "cat <<'EOF'\nline one\nEOF";
    let cases = [
        (
            gemini_trap(command, GEMINI_DIR, false),
            "gemini-cli/subshell-trap",
            "bgpids.tmp",
        ),
        (
            gemini_trap(command, GEMINI_DIR, true),
            "gemini-cli/subshell-trap",
            "bgpids.tmp",
        ),
        (
            gemini_user(command, GEMINI_DIR),
            "gemini-cli/user-shell",
            "pwd.tmp",
        ),
        (
            gemini_pgrep_dir(command, GEMINI_DIR),
            "gemini-cli/subshell-pgrep-dir",
            "pgrep.tmp",
        ),
    ];
    for (text, template, file) in cases {
        let u = unwrap(&text).unwrap_or_else(|| panic!("{text:?}"));
        assert_eq!(
            (u.agent, u.template, &*u.inner),
            ("gemini-cli", template, command)
        );
        assert_eq!(u.bookkeeping.temp_dir, Some(GEMINI_DIR));
        assert_eq!(u.bookkeeping.writes, Some(&*format!("{GEMINI_DIR}/{file}")));
        assert_eq!(u.bookkeeping.sources, None);
    }
    let old = gemini_pgrep_037(command);
    let u = unwrap(&old).unwrap();
    assert_eq!(
        (u.template, &*u.inner),
        ("gemini-cli/subshell-pgrep", command)
    );
    assert_eq!(
        (u.bookkeeping.writes, u.bookkeeping.temp_dir),
        (Some(PGREP), None)
    );
    // Another temporary directory (TMPDIR) is a shape the run path checks.
    let elsewhere = gemini_trap("ls", "/var/tmp/x/gemini-shell-Ab3dE9", false);
    let u = unwrap(&elsewhere).unwrap();
    assert_eq!(
        u.bookkeeping.temp_dir,
        Some("/var/tmp/x/gemini-shell-Ab3dE9")
    );
    // A final backslash gets a space from Gemini CLI, and the shell runs it.
    assert_eq!(
        inner(&gemini_trap("echo a \\", GEMINI_DIR, false)).as_deref(),
        Some("echo a \\ ")
    );
    assert_eq!(
        inner(&gemini_trap("ls # note", GEMINI_DIR, false)).as_deref(),
        Some("ls # note")
    );
}

#[test]
fn gemini_cli_lines_must_be_what_gemini_cli_writes() {
    let build = |body: &str| {
        format!(
            "{GUARD}_bgpids_file={GEMINI_DIR}/bgpids.tmp\n(\n  trap 'jobs -p > \"$_bgpids_file\"' EXIT\n{body}\n)\n__code=$?\nexit $__code"
        )
    };
    assert_eq!(inner(&build("ls")).as_deref(), Some("ls"));
    for body in [
        "", " ls", "ls ", "\nls", "ls\n", "ls \\", "ls  ", "a \\  ", "\u{a0}ls", "ls\t",
    ] {
        assert_eq!(inner(&build(body)), None, "{body:?}");
    }
}

#[test]
fn gemini_cli_temporary_files_have_their_own_narrow_shape() {
    let real = gemini_trap("ls", GEMINI_DIR, false);
    assert!(unwrap(&real).is_some());
    for dir in [
        "/tmp/gemini-shell-dERLe",
        "/tmp/gemini-shell-dERLenn",
        "/tmp/gemini-shell-dER_en",
        "/tmp/gemini-shel-dERLen",
        "tmp/gemini-shell-dERLen",
        "/tmp/../home/a/gemini-shell-dERLen",
        "/tmp/./gemini-shell-dERLen",
        "/tmp//gemini-shell-dERLen",
        "/gemini-shell-dERLen",
        "'/tmp/gemini-shell-dERLen'",
    ] {
        assert_eq!(inner(&real.replace(GEMINI_DIR, dir)), None, "{dir}");
    }
    for (what, text) in [
        ("another file", real.replace("bgpids.tmp", "pgrep.tmp")),
        (
            "file in a subdirectory",
            real.replace("/bgpids.tmp", "/x/bgpids.tmp"),
        ),
        (
            "pwd file of the user form",
            gemini_user("ls", GEMINI_DIR).replace("pwd.tmp", "bgpids.tmp"),
        ),
        (
            "pgrep file elsewhere",
            gemini_pgrep_dir("ls", GEMINI_DIR).replace(GEMINI_DIR, "/home/alice"),
        ),
    ] {
        assert_eq!(inner(&text), None, "{what}: {text:?}");
    }
}

#[test]
fn gemini_cli_forgeries_of_the_new_forms_are_not_wrappers() {
    let real = gemini_trap("ls", GEMINI_DIR, false);
    let user = gemini_user("ls", GEMINI_DIR);
    for (what, text) in [
        ("command after exit", format!("{real}\nrm -rf ~")),
        ("command after exit, same line", format!("{real}; rm -rf ~")),
        ("exit edited", real.replace("exit $__code", "exit 0")),
        ("trap edited", real.replace("jobs -p", "rm -rf ~")),
        (
            "trap target edited",
            real.replace("\"$_bgpids_file\"", "~/.bashrc"),
        ),
        (
            "assignment edited",
            real.replace("_bgpids_file=/", "_bgpids_file=~/"),
        ),
        ("guard dropped", real.replacen(GUARD, "", 1)),
        (
            "another guard",
            real.replacen("trap '' HUP; ", "", 1).replacen(
                "shopt",
                "trap 'rm -rf ~' HUP; shopt",
                1,
            ),
        ),
        (
            "HUP guard twice",
            format!("trap '' HUP; trap '' HUP; {real}"),
        ),
        (
            "HUP guard after shopt",
            real.replacen(GUARD, &format!("{GUARD}trap '' HUP; "), 1),
        ),
        ("no newline before )", real.replace("\n)\n", ")\n")),
        ("subshell made a group", real.replace("\n(\n", "\n{\n")),
        ("trailing newline", format!("{real}\n")),
        ("leading space", format!(" {real}")),
        ("user form, command after", format!("{user}; rm -rf ~")),
        (
            "user form, pwd target",
            user.replace("/pwd.tmp", "/../.bashrc"),
        ),
        ("user form, >| ", user.replace("pwd > ", "pwd >| ")),
        ("NUL", real.replace("ls", "l\0s")),
    ] {
        assert_eq!(inner(&text), None, "{what}: {text:?}");
    }
}

#[test]
fn an_unknown_version_of_a_known_agent_resembles_it() {
    let gemini_next = gemini_trap("ls", GEMINI_DIR, false).replace("jobs -p", "jobs -pr");
    let claude_next = claude_latest("ls").replace("|| true && eval", "|| true && builtin eval");
    let codex_next = codex("/bin/bash", "ls").replace("then :; fi", "then true; fi");
    let cases = [
        (gemini_next.as_str(), Some("gemini-cli")),
        (
            "{ ls; }; __code=$?; pgrep -g 0 >/var/folders/x/T/shell_pgrep_bd6447d8f648.tmp 2>&1; exit $__code;",
            Some("gemini-cli"),
        ),
        (claude_next.as_str(), Some("claude-code")),
        (codex_next.as_str(), Some("codex")),
        ("ls -la", None),
        ("git status && cargo test", None),
    ];
    for (text, agent) in cases {
        assert_eq!(unwrap(text), None, "{text:?}");
        assert_eq!(resembles(text).map(|f| f.agent), agent, "{text:?}");
    }
    for t in TEMPLATES {
        assert!(family(t.agent).is_some(), "{}", t.name);
    }
    // Every recognised wrapper also resembles its own agent.
    for text in [
        gemini_trap("ls", GEMINI_DIR, true),
        claude_latest("ls"),
        codex("/bin/sh", "ls"),
        gemini_user("ls", GEMINI_DIR),
    ] {
        let u = unwrap(&text).unwrap();
        assert_eq!(resembles(&text).map(|f| f.agent), Some(u.agent), "{text:?}");
    }
}

#[test]
fn codex_snapshot_wrappers_are_recognised() {
    let text = codex("/bin/bash", "echo 'hello'");
    let u = unwrap(&text).unwrap();
    assert_eq!((u.agent, u.template), ("codex", "codex/snapshot"));
    assert_eq!(u.inner, "echo 'hello'");
    assert_eq!(u.bookkeeping.exec_shell, Some("/bin/bash"));
    assert_eq!(u.bookkeeping.sources, Some(CODEX_SNAP));
    assert_eq!(u.bookkeeping.sources_home, Some("/home/alice"));
    // Another program, trailing arguments, or overrides around the source: no.
    assert_eq!(inner(&codex("/tmp/evil", "ls")), None);
    // Any shell path of plain components names a candidate; the run path checks
    // which file it is (a system shell, or gate itself).
    for shell in [
        "/usr/lib/gate/bin/bash",
        "/home/a/.local/lib/gate/bin/zsh",
        "/bin/sh",
    ] {
        assert_eq!(inner(&codex(shell, "ls")).as_deref(), Some("ls"), "{shell}");
    }
    for shell in [
        "bash",
        "/bin/../tmp/bash",
        "/tmp//bash",
        "/bin/bash ",
        "/bin/dash",
        "/bin/bashx",
    ] {
        assert_eq!(inner(&codex(shell, "ls")), None, "{shell}");
    }
    assert_eq!(inner(&format!("{} 'arg0'", codex("/bin/bash", "ls"))), None);
    assert_eq!(inner(&format!("X=1\n\n{}", codex("/bin/bash", "ls"))), None);
}

/// Edits of a real wrapper that must not be recognised. Each is judged as plain text.
#[test]
fn near_misses_are_not_wrappers() {
    let real = claude_latest("ls");
    assert!(unwrap(&real).is_some());
    let cases: Vec<(&str, String)> = vec![
        ("edited operator", real.replace("&& eval", "; eval")),
        ("|| for &&", real.replace(" && pwd", " || pwd")),
        ("doubled eval", real.replace("eval 'ls'", "eval eval 'ls'")),
        (
            "second eval word",
            real.replace("eval 'ls'", "eval 'ls' 'rm -rf ~'"),
        ),
        (
            "injected ; rm",
            real.replace("|| true && eval", "|| true; rm -rf ~; eval"),
        ),
        ("command after pwd", format!("{real}; rm -rf ~")),
        ("command after pwd, &&", format!("{real} && rm -rf ~")),
        (
            "quote break",
            real.replace("eval 'ls'", "eval 'ls'; rm -rf ~; ''"),
        ),
        (
            "substitution beside the word",
            real.replace("eval 'ls'", "eval \"$(rm -rf ~)\"'ls'"),
        ),
        ("newline before pwd", real.replace(" && pwd", "\n&& pwd")),
        ("newline at the end", format!("{real}\n")),
        ("NUL", real.replace("'ls'", "'l\0s'")),
        (
            "wrong snapshot dir",
            real.replace("/.claude/shell-snapshots/", "/.claude/snapshots/"),
        ),
        (
            "snapshot in /tmp",
            real.replace(SNAP, "/tmp/.claude/shell-snapshots/../x.sh"),
        ),
        (
            "dotdot in home",
            real.replace("/home/alice/", "/home/../alice/"),
        ),
        (
            "dot in home",
            real.replace("/home/alice/", "/home/./alice/"),
        ),
        (
            "empty component",
            real.replace("/home/alice/", "/home//alice/"),
        ),
        (
            "snapshot name",
            real.replace("snapshot-bash-", "snapshot-fish-"),
        ),
        ("short stamp", real.replace("1788557415117", "178855741511")),
        ("uppercase id", real.replace("j0hu0n", "J0HU0N")),
        ("quoted snapshot", real.replace(SNAP, &format!("'{SNAP}'"))),
        ("uppercase hex", real.replace("f8eb", "F8EB")),
        (
            "cwd elsewhere",
            real.replace("/tmp/claude-f8eb-cwd", "/home/alice/.bashrc"),
        ),
        (
            "cwd with dotdot",
            real.replace("/tmp/claude-f8eb-cwd", "/tmp/claude-f8eb-cwd/.."),
        ),
        ("> for >|", real.replace(">|", ">")),
        (
            "different redirect",
            real.replace("< /dev/null", "< /etc/passwd"),
        ),
        (
            "stderr dropped",
            real.replace(
                " 2>/dev/null || true && \\builtin shopt",
                " || true && \\builtin shopt",
            ),
        ),
        ("trailing space", format!("{real} ")),
        ("leading space", format!(" {real}")),
        ("double space", real.replace("eval 'ls'", "eval  'ls'")),
        ("tab", real.replace("eval 'ls'", "eval\t'ls'")),
        ("empty command", claude_latest("")),
        ("unterminated quote", real.replace("'ls'", "'ls")),
        ("unquoted word", real.replace("'ls'", "ls;rm")),
        ("quoted then bare", real.replace("'ls'", "'ls'x")),
        ("double-quoted word", real.replace("'ls'", "\"ls\"")),
        (
            "escaped redirect in 2.1",
            real.replace(" < /dev/null", " \\< /dev/null"),
        ),
        (
            "gemini tail on claude",
            real.replace(
                " && pwd -P >| /tmp/claude-f8eb-cwd",
                " }; __code=$?; pgrep -g 0 >/tmp/shell_pgrep_5a63468e1d38.tmp 2>&1; exit $__code;",
            ),
        ),
    ];
    for (what, text) in cases {
        assert_eq!(inner(&text), None, "{what}: {text:?}");
    }
}

#[test]
fn a_properly_quoted_quote_break_is_a_command_with_shell_characters() {
    // The model's command itself tries to break out; Claude Code quotes it, and the
    // unwrapped command is exactly that text, which matches no allow rule.
    let model = "a'\"'\"'; rm -rf ~; '\"'\"'";
    let text = claude_latest(model);
    let u = unwrap(&text).unwrap();
    assert_eq!(u.inner, model);
    assert!(crate::policy::first_shell_char(&u.inner).is_some());
}

#[test]
fn gemini_near_misses_are_not_wrappers() {
    let real = gemini("ls");
    assert!(unwrap(&real).is_some());
    for (what, text) in [
        ("trailing command", format!("{real} rm -rf ~")),
        (
            "pgrep file elsewhere",
            real.replace(PGREP, "/home/alice/.bashrc"),
        ),
        (
            "pgrep hex case",
            real.replace("5a63468e1d38", "5A63468E1D38"),
        ),
        ("exit edited", real.replace("exit $__code;", "exit 0;")),
        ("guard edited", real.replace("dotglob;", "dotglob &&")),
        ("trailing newline", format!("{real}\n")),
    ] {
        assert_eq!(inner(&text), None, "{what}: {text:?}");
    }
}

#[test]
fn every_template_can_be_matched_and_has_a_fixed_tail_after_a_raw_group() {
    for t in TEMPLATES {
        // A literal first, or Codex's save, whose lines all start `__CODEX_SNAPSHOT_`.
        assert!(
            matches!(
                t.pieces.first(),
                Some(Piece::Lit(_) | Piece::CodexEnvSave | Piece::Optional(_))
            ),
            "{}",
            t.name
        );
        for (i, p) in t.pieces.iter().enumerate() {
            if matches!(p, Piece::GeminiGroup | Piece::GeminiLines) {
                let after = &t.pieces[i + 1..];
                assert!(after.iter().all(|p| matches_from_end(*p)), "{}", t.name);
                // A temporary file is found from its end as a run of path
                // characters: the literal before it must end with another.
                for pair in after.windows(2) {
                    if let [Piece::Lit(lit), Piece::GeminiTempFile(_)] = pair {
                        assert!(!is_path_byte(*lit.as_bytes().last().unwrap()), "{}", t.name);
                    }
                }
            }
        }
        assert!(family(t.agent).is_some(), "{}", t.name);
    }
    let mut names: Vec<_> = TEMPLATES.iter().map(|t| t.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), TEMPLATES.len());
}

#[test]
fn claudes_snapshot_creation_is_its_startup_call() {
    let script = format!(
        "SNAPSHOT_FILE={SNAP}\n      source \"/home/alice/.bashrc\" < /dev/null\n\n      # First, create/clear the snapshot file\n      echo \"# Snapshot file\" >| \"$SNAPSHOT_FILE\"\n"
    );
    let call = startup(&["-c", "-l", &script]).unwrap();
    assert_eq!(call.kind, "claude-code/snapshot-create");
    assert_eq!(call.answer, StartupAnswer::WriteStub(SNAP));
    assert_eq!(call.snapshot(), Some(SNAP));
    assert_eq!(call.home, Some("/home/alice"));
    assert_eq!(
        startup_call(&["-c", "-l", &script]),
        Some("claude-code/snapshot-create")
    );
    let quoted = script.replacen(SNAP, &format!("'{SNAP}'"), 1);
    assert_eq!(
        startup(&["-c", "-l", &quoted]).unwrap().snapshot(),
        Some(SNAP)
    );
    for args in [
        vec!["-c", script.as_str()],
        vec!["-lc", script.as_str()],
        vec!["-c", "-l", script.as_str(), "x"],
        vec!["-l", "-c", script.as_str()],
    ] {
        assert_eq!(startup_call(&args), None, "{args:?}");
    }
    for bad in [
        script.replacen(SNAP, "/home/alice/.bashrc", 1),
        script.replacen(SNAP, &format!("{SNAP};rm -rf ~"), 1),
        script.replace("echo \"# Snapshot file\"", "echo \"# snapshot\""),
        format!(" {script}"),
    ] {
        assert_eq!(startup_call(&["-c", "-l", &bad]), None, "{bad:?}");
    }
    assert!(is_snapshot_stub(SNAPSHOT_STUB.as_bytes()));
    assert!(!is_snapshot_stub(b"# Snapshot file\nrm -rf ~\n"));
}

#[test]
fn claudes_environment_probe_is_its_startup_call_and_prints_nothing() {
    let call = startup(&["-c", "env"]).unwrap();
    assert_eq!(
        (call.agent, call.kind, call.answer, call.home),
        (
            "claude-code",
            "claude-code/env-probe",
            StartupAnswer::Nothing,
            None
        )
    );
    assert_eq!(call.snapshot(), None);
    for args in [
        &["-c", "env "][..],
        &["-c", " env"],
        &["-c", "env -i"],
        &["-c", "env; rm -rf ~"],
        &["-c", "printenv"],
        &["-lc", "env"],
        &["-c", "-l", "env"],
        &["-l", "-c", "env"],
        &["-c", "env", "x"],
        &["-c", "env\n"],
    ] {
        assert_eq!(startup_call(args), None, "{args:?}");
    }
}

#[test]
fn codex_snapshot_capture_and_check_are_its_startup_calls() {
    let bash = "if [ -z \"$BASH_ENV\" ] && [ -r \"$HOME/.bashrc\" ]; then\n  . \"$HOME/.bashrc\"\nfi\necho '# Snapshot file'\ndeclare -f\n";
    let zsh = "setopt x\nprint '# Snapshot file'\nfunctions\n";
    for script in [bash, zsh] {
        let call = startup(&["-lc", script]).unwrap();
        assert_eq!(call.kind, "codex/snapshot-capture");
        assert_eq!(call.answer, StartupAnswer::PrintStub);
        assert_eq!(call.snapshot(), None);
        for args in [
            vec!["-c", script],
            vec!["-l", "-c", script],
            vec!["-lc", script, "x"],
        ] {
            assert_ne!(
                startup_call(&args),
                Some("codex/snapshot-capture"),
                "{args:?}"
            );
        }
    }
    // The mark must be a line of its own.
    for bad in [
        "echo '# Snapshot file' && rm -rf ~",
        "x; echo '# Snapshot file'",
        "ls",
    ] {
        assert_eq!(startup_call(&["-lc", bad]), None, "{bad:?}");
    }
    let tmp = "/home/alice/.codex/shell_snapshots/0199a213-81c0-7800-8aa1-bbab2a035a53.tmp-1760000000000000000";
    for path in [tmp, CODEX_SNAP] {
        let script = format!("set -e; . \"{path}\"");
        let call = startup(&["-c", &script]).unwrap();
        assert_eq!(call.kind, "codex/snapshot-check");
        assert_eq!(call.answer, StartupAnswer::CheckStub(path));
        assert_eq!(call.home, Some("/home/alice"));
    }
    for bad in [
        format!("set -e; . \"{tmp}\"; rm -rf ~"),
        format!("set -e; . \"{tmp}\" x"),
        format!("set -e; . '{tmp}'"),
        "set -e; . \"/home/alice/.bashrc\"".to_owned(),
        format!("set -e; . \"{}\"", tmp.replace("tmp-", "tmp-x")),
        format!("set -e; . \"{}\"", tmp.replace("0199a213", "0199A213")),
        format!(
            "set -e; . \"{}\"",
            tmp.replace("/home/alice", "/home/../etc")
        ),
    ] {
        assert_eq!(startup_call(&["-c", &bad]), None, "{bad:?}");
    }
    // The temporary name is never a snapshot the wrapper may source.
    assert_eq!(inner(&codex_with_snapshot(tmp, "/bin/bash", "ls")), None);
}

const CODEX_PATH_DIR: &str =
    "/usr/lib/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/codex-path";

/// Codex 0.171's wrapper with its environment save and restore, built the way the
/// captured one is laid out (fixture codex-0.171-snapshot-env-echo).
fn codex_env(overrides: &[&str], proxies: &[&str], path_dir: Option<&str>, script: &str) -> String {
    let save = |prefix: &str, names: &[&str]| -> Vec<String> {
        names
            .iter()
            .enumerate()
            .map(|(i, n)| format!("{prefix}_SET_{i}=\"${{{n}+x}}\"\n{prefix}_{i}=\"${{{n}-}}\""))
            .collect()
    };
    let mut captures = save(CODEX_OVERRIDE, overrides);
    captures.extend(save(CODEX_PROXY_OVERRIDE, proxies));
    captures.push(CODEX_PROXY_ENV_SET.to_owned());
    let env = CodexEnv {
        overrides: overrides.to_vec(),
        proxies: proxies.to_vec(),
    };
    let path = path_dir
        .map(|d| format!("\nif [ -n \"${{PATH:-}}\" ]; then export PATH='{d}':\"$PATH\"; else export PATH='{d}'; fi"))
        .unwrap_or_default();
    format!(
        "{}\n\nif . '{CODEX_SNAP}' >/dev/null 2>&1; then :; fi\n\n{}{path}\n\nexec '/usr/lib/gate/bin/bash' -c {}",
        captures.join("\n"),
        codex_env_restore(&env),
        claude_quote(script)
    )
}

#[test]
fn codex_0_171_wrapper_with_its_environment_restore_is_recognised() {
    let names = ["CODEX_THREAD_ID", "CODEX_VERSION"];
    let proxies = ["HTTPS_PROXY", "http_proxy"];
    for dir in [Some(CODEX_PATH_DIR), None] {
        let text = codex_env(&names, &proxies, dir, "echo 'hi'");
        let u = unwrap(&text).unwrap_or_else(|| panic!("{text}"));
        assert_eq!(u.template, "codex/snapshot-env");
        assert_eq!(u.inner, "echo 'hi'");
        assert_eq!(u.bookkeeping.sources, Some(CODEX_SNAP));
        assert_eq!(u.bookkeeping.sources_home, Some("/home/alice"));
        assert_eq!(u.bookkeeping.exec_shell, Some("/usr/lib/gate/bin/bash"));
        assert_eq!(u.bookkeeping.path_prepend, dir);
    }
    assert!(unwrap(&codex_env(&[], &[], None, "ls")).is_some());
}

#[test]
fn codex_0_171_wrapper_edited_anywhere_is_judged_whole() {
    let good = codex_env(
        &["CODEX_THREAD_ID"],
        &["HTTPS_PROXY"],
        Some(CODEX_PATH_DIR),
        "ls",
    );
    assert!(unwrap(&good).is_some());
    let edits: Vec<String> = vec![
        // A restore that sets something else than what was saved.
        good.replacen(
            "export CODEX_THREAD_ID=\"${__CODEX_SNAPSHOT_OVERRIDE_0}\"",
            "export CODEX_THREAD_ID=\"evil\"",
            1,
        ),
        good.replacen(
            "else export HTTPS_PROXY; fi",
            "else export HTTPS_PROXY; fi; rm -rf ~",
            1,
        ),
        // A saved name Codex cannot have written, or one of its own temporaries.
        codex_env(&["A-B"], &[], None, "ls"),
        codex_env(&["__CODEX_SNAPSHOT_PROXY_ENV_SET"], &[], None, "ls"),
        codex_env(&["1X"], &[], None, "ls"),
        // Out of order, or a name saved twice under one index.
        good.replacen("_SET_0=", "_SET_1=", 1),
        // A PATH directory that is not Codex's, or not plain.
        good.replace(CODEX_PATH_DIR, "/home/alice/bin"),
        good.replace(CODEX_PATH_DIR, "/home/alice/../x/codex-path"),
        good.replace(CODEX_PATH_DIR, "codex-path"),
        good.replacen(":\"$PATH\"", ":\"$PATH\":/x", 1),
        // No proxy line, extra lines, trailing arguments.
        good.replacen(CODEX_PROXY_ENV_SET, "", 1),
        good.replacen("\n\nif . '", "\nX=1\n\nif . '", 1),
        format!("{good} 'arg'"),
        format!("{good}\n"),
        good.replace(
            CODEX_SNAP,
            &CODEX_SNAP.replace(".1760000000000000000.sh", ".tmp-1"),
        ),
    ];
    for text in &edits {
        assert_ne!(&good, text, "an edit that changed nothing");
        assert_eq!(unwrap(text).map(|u| u.template), None, "{text}");
    }
}

#[test]
fn codex_lookalikes_are_named_but_never_unwrapped() {
    let good = codex_env(&["CODEX_THREAD_ID"], &[], None, "ls");
    let newer = good.replacen("then :; fi", "then true; fi", 1);
    assert!(unwrap(&newer).is_none());
    assert_eq!(resembles(&newer).map(|f| f.name), Some("Codex CLI"));
    let old = codex("/bin/bash", "ls").replace("exec '", "exec  '");
    assert_eq!(resembles(&old).map(|f| f.name), Some("Codex CLI"));
    for other in [
        "ls",
        "if . '/etc/profile'; then :; fi",
        "echo __CODEX_SNAPSHOT_",
    ] {
        assert_eq!(resembles(other).map(|f| f.name), None, "{other}");
    }
}

#[test]
fn codex_capture_answer_has_the_sections_codex_wants_and_its_rewrite_is_known() {
    let sections: Vec<&str> = CODEX_CAPTURE_STUB.split('\0').collect();
    assert_eq!(sections, [SNAPSHOT_STUB, "", "", ""]);
    assert!(CODEX_SNAPSHOT_STUB.starts_with(SNAPSHOT_STUB));
    assert!(CODEX_SNAPSHOT_STUB.lines().all(|l| l.starts_with('#')));
    assert!(is_codex_snapshot_stub(CODEX_SNAPSHOT_STUB.as_bytes()));
    assert!(is_codex_snapshot_stub(SNAPSHOT_STUB.as_bytes()));
    assert!(!is_snapshot_stub(CODEX_SNAPSHOT_STUB.as_bytes()));
    for edited in [
        format!("{CODEX_SNAPSHOT_STUB}declare -x PATH=\"/evil\"\n"),
        CODEX_SNAPSHOT_STUB.replace('\n', "\r\n"),
        CODEX_CAPTURE_STUB.to_owned(),
    ] {
        assert!(!is_codex_snapshot_stub(edited.as_bytes()), "{edited:?}");
    }
}

#[test]
fn neutral_appending_is_judged_by_quoting_state() {
    for ok in ["ls", "a | b", "echo 'a # b' \"c\"", "a && b;", "x=1"] {
        assert!(appending_stdin_is_neutral(ok), "{ok}");
    }
    for bad in [
        "ls #", "'a", "\"a", "a\\", "a $(b)", "`a`", "\"$x\"", "a\tb", "(a)",
    ] {
        assert!(!appending_stdin_is_neutral(bad), "{bad}");
    }
}

fn arb_command() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[ -~\n\t']{0,40}",
        "[a-z' ]{0,20}",
        prop::collection::vec(
            prop_oneof![
                Just("'".to_owned()),
                Just("\"'\"'".to_owned()),
                "[a-z ]{0,3}"
            ],
            0..8
        )
        .prop_map(|parts| parts.concat()),
    ]
    .prop_filter("no NUL, not empty", |s| !s.is_empty() && !s.contains('\0'))
}

/// Every text made from `text` by replacing or deleting one byte outside `from..to`,
/// or inserting one byte anywhere but inside or at the edges of `from..to` (an
/// insertion there would edit the agent's word itself).
fn mutations(text: &str, from: usize, to: usize) -> Vec<String> {
    const BYTES: [u8; 13] = [
        b' ', b';', b'\'', b'"', b'\\', b'x', b'0', b'\n', b'&', b'/', b'<', b'-', b'.',
    ];
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    for at in 0..=bytes.len() {
        if at < from || at > to {
            for b in BYTES {
                let mut v = bytes.to_vec();
                v.insert(at, b);
                out.extend(String::from_utf8(v).ok());
            }
        }
        if at == bytes.len() || (from..to).contains(&at) || !bytes[at].is_ascii() {
            continue;
        }
        for b in BYTES {
            let mut v = bytes.to_vec();
            v[at] = b;
            out.extend(String::from_utf8(v).ok());
        }
        let mut v = bytes.to_vec();
        v.remove(at);
        out.extend(String::from_utf8(v).ok());
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn claude_round_trips_any_command(command in arb_command()) {
        prop_assert_eq!(inner(&claude_latest(&command)), Some(command.clone()));
        let old = claude_2_1("shopt -u extglob 2>/dev/null || true", &claude_quote(&command), "");
        prop_assert_eq!(inner(&old), Some(command.clone()));
    }

    #[test]
    fn gemini_round_trips_any_trimmed_command(command in arb_command()) {
        let trimmed = command.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
        prop_assume!(!trimmed.is_empty());
        prop_assert_eq!(inner(&gemini(trimmed)), Some(trimmed.to_owned()));
    }

    #[test]
    fn the_new_gemini_forms_round_trip_any_command(command in arb_command()) {
        let body = gemini_trim(&command);
        prop_assume!(!body.is_empty());
        for text in [
            gemini_trap(&command, GEMINI_DIR, false),
            gemini_trap(&command, GEMINI_DIR, true),
            gemini_user(&command, GEMINI_DIR),
            gemini_pgrep_dir(&command, GEMINI_DIR),
            gemini_pgrep_037(&command),
        ] {
            prop_assert_eq!(inner(&text), Some(body.clone()), "{:?}", text);
        }
    }

    #[test]
    fn codex_round_trips_any_command(command in arb_command()) {
        prop_assert_eq!(inner(&codex("/bin/zsh", &command)), Some(command.clone()));
    }

    #[test]
    fn the_old_form_round_trips_every_neutral_command(command in "[ -~]{1,30}") {
        let text = format!("source {SNAP} && eval {} \\< /dev/null && pwd -P >| {CWD}", npm_quote(&command));
        let got = inner(&text);
        // Whatever is recognised is exact; a neutral command is recognised unless it
        // has `!` (refused in double quotes) or a bare `~` (the shell would expand it).
        prop_assert!(got.is_none() || got.as_deref() == Some(command.as_str()));
        let bare_tilde = command.contains('~') && !npm_quote(&command).starts_with(['\'', '"']);
        if appending_stdin_is_neutral(&command) && !command.contains('!') && !bare_tilde {
            prop_assert_eq!(got, Some(command.clone()));
        }
    }

    #[test]
    fn unwrap_never_panics_on_any_text(text in any::<String>()) {
        if let Some(u) = unwrap(&text) {
            prop_assert!(!u.inner.is_empty());
        }
    }

}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn a_one_byte_edit_of_the_fixed_parts_changes_nothing_or_is_refused(command in "[a-z '|;&]{1,12}") {
        let trimmed = command.trim();
        let body = if trimmed.ends_with('&') { trimmed.to_owned() } else { format!("{trimmed};") };
        let texts = [
            (claude_latest(&command), "&& eval ", claude_quote(&command)),
            (gemini(trimmed), "{ ", body),
            (gemini_trap(trimmed, GEMINI_DIR, false), "EXIT\n", gemini_trim(trimmed)),
            (gemini_user(trimmed, GEMINI_DIR), "{\n", gemini_trim(trimmed)),
            (gemini_pgrep_dir(trimmed, GEMINI_DIR), "(\n", gemini_trim(trimmed)),
            (codex("/bin/bash", &command), "' -c ", claude_quote(&command)),
        ];
        for (text, before, word) in texts {
            let Some(original) = unwrap(&text) else { continue };
            // The agent's word starts right after the first `before`.
            let from = text.find(before).unwrap() + before.len();
            prop_assert!(text[from..].starts_with(word.as_str()));
            for edited in mutations(&text, from, from + word.len()) {
                if let Some(u) = unwrap(&edited) {
                    prop_assert_eq!(&u.inner, &original.inner, "{:?}", edited);
                }
            }
        }
    }
}
