use super::holes::{CODEX_OVERRIDE, CODEX_PROXY_ENV_SET, CODEX_PROXY_OVERRIDE};
use super::*;
use proptest::prelude::*;

mod claude;
mod codex;
mod gemini;
mod startup;

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
