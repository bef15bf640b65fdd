//! The agents' wrappers against what the agents really send.
//!
//! Every `tests/fixtures/agents/*.argv` file (JSON, described in the README there) is the
//! argv an agent gave its shell, with what gate must make of it: the template and the
//! inner command, the start-up call, or nothing. A new agent version is a new fixture and
//! a line in `TEMPLATES`.
//!
//! Then real shells check the unquoting: with `eval` (and Codex's `exec`) replaced by a
//! function that prints what it was given, bash and zsh run each wrapper and must print
//! exactly the inner command `unwrap` found. Gemini CLI's wrappers since 0.37 have no
//! quoting to undo: bash running the whole wrapper must print what the inner command
//! alone prints.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use gate::policy::wrapper::{Stdin, startup, unwrap};
use proptest::prelude::*;
use serde_json::Value;

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agents")
}

struct Fixture {
    name: String,
    argv: Vec<String>,
    expect: Value,
}

fn fixtures() -> Vec<Fixture> {
    let mut out = Vec::new();
    for entry in fs::read_dir(fixtures_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("argv") {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let doc: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        for key in ["agent", "version", "source", "provenance"] {
            assert!(doc[key].is_string(), "{name}: `{key}` missing");
        }
        let argv: Vec<String> = doc["argv"]
            .as_array()
            .unwrap_or_else(|| panic!("{name}: `argv` missing"))
            .iter()
            .map(|a| a.as_str().unwrap().to_owned())
            .collect();
        assert!(argv.len() >= 2, "{name}");
        assert!(
            doc["expect"].is_object() || doc["why_not"].is_string(),
            "{name}: a fixture gate does not recognise says why"
        );
        out.push(Fixture {
            name,
            argv,
            expect: doc["expect"].clone(),
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

#[test]
fn every_fixture_is_decided_as_it_says() {
    let all = fixtures();
    assert!(all.len() >= 15, "only {} fixtures", all.len());
    for f in &all {
        let args: Vec<&str> = f.argv[1..].iter().map(String::as_str).collect();
        if let Some(kind) = f.expect.get("startup") {
            let call = startup(&args).unwrap_or_else(|| panic!("{}: not a start-up call", f.name));
            assert_eq!(Some(call.kind), kind.as_str(), "{}", f.name);
            assert_eq!(call.snapshot(), f.expect["snapshot"].as_str(), "{}", f.name);
            assert!(unwrap(args.last().unwrap()).is_none(), "{}", f.name);
            continue;
        }
        // The text is the last argument; the options before it are the agent's.
        let text = args.last().unwrap();
        if args.len() > 1 {
            let options = &args[..args.len() - 1];
            assert!(
                options == ["-c"] || options == ["-c", "-l"] || options == ["-i", "-c"],
                "{}: unexpected options {options:?}",
                f.name
            );
        }
        let got = unwrap(text);
        match &f.expect {
            Value::Null => assert!(
                got.is_none(),
                "{}: recognised as {:?}, but the fixture says it must not be",
                f.name,
                got.map(|u| u.template)
            ),
            expect => {
                let u = got.unwrap_or_else(|| panic!("{}: not recognised", f.name));
                assert_eq!(Some(u.template), expect["template"].as_str(), "{}", f.name);
                assert_eq!(Some(&*u.inner), expect["inner"].as_str(), "{}", f.name);
                assert!(
                    f.name.starts_with(u.agent),
                    "{}: agent {} not in the file name",
                    f.name,
                    u.agent
                );
                assert!(startup(&args).is_none(), "{}", f.name);
            }
        }
    }
}

#[test]
fn every_template_has_a_recognised_fixture_or_is_listed_as_source_only() {
    // Templates known only from source, or whose only captures use another $TMPDIR:
    // their unit tests build the text from the agent's source.
    const WITHOUT_CAPTURE: [&str; 2] = ["claude-code/2.0-extglob", "gemini-cli/plain"];
    let recognised: Vec<String> = fixtures()
        .iter()
        .filter_map(|f| f.expect.get("template")?.as_str().map(str::to_owned))
        .collect();
    for t in gate::policy::wrapper::TEMPLATES {
        assert!(
            recognised.iter().any(|r| r == t.name) || WITHOUT_CAPTURE.contains(&t.name),
            "template {} has no fixture",
            t.name
        );
    }
}

/// A start-up file for bash (`BASH_ENV`) and zsh (`.zshenv`) that replaces the commands
/// that would run the inner command with ones that print it and stop the shell.
fn printer_env() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let script = "source() { return 0; }\n\
                  eval() { printf '%s' \"$*\"; exit 0; }\n\
                  exec() { printf '%s' \"$3\"; exit 0; }\n";
    fs::write(dir.path().join("env.sh"), script).unwrap();
    fs::write(dir.path().join(".zshenv"), script).unwrap();
    dir
}

/// What `shell -c text` hands to `eval`/`exec`, with those replaced by printers.
fn shell_sees(shell: &str, text: &str, env: &Path) -> Option<String> {
    let mut cmd = Command::new(shell);
    cmd.arg("-c")
        .arg(text)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", env)
        .env("BASH_ENV", env.join("env.sh"))
        .env("ZDOTDIR", env)
        .env("LC_ALL", "C.UTF-8")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .current_dir(env);
    let out = cmd.output().ok()?;
    Some(String::from_utf8(out.stdout).expect("the inner command is UTF-8"))
}

fn have(shell: &str) -> bool {
    Path::new(shell).exists()
}

const SHELLS: [&str; 2] = ["/bin/bash", "/bin/zsh"];

#[test]
fn real_shells_evaluate_exactly_the_inner_command_of_every_fixture() {
    let env = printer_env();
    for f in fixtures() {
        let text = f.argv.last().unwrap();
        let Some(u) = unwrap(text) else { continue };
        if u.agent == "gemini-cli" {
            continue; // No eval: the inner command is the text inside `{ …; }` as is.
        }
        let expected = match (u.bookkeeping.stdin, text.contains(" \\< /dev/null")) {
            (Stdin::DevNull, true) => format!("{} < /dev/null", u.inner),
            _ => u.inner.clone().into_owned(),
        };
        for shell in SHELLS.iter().filter(|s| have(s)) {
            assert_eq!(
                shell_sees(shell, text, env.path()).as_deref(),
                Some(expected.as_str()),
                "{} under {shell}",
                f.name
            );
        }
    }
}

fn claude_2_1(word: &str) -> String {
    format!(
        "source /home/alice/.claude/shell-snapshots/snapshot-bash-1788557415117-j0hu0n.sh 2>/dev/null || true && shopt -u extglob 2>/dev/null || true && {{ \\builtin unalias -- 'unsetenv'; \\builtin unset -f -- 'unsetenv'; }} >/dev/null 2>&1 || true && eval {word} < /dev/null && pwd -P >| /tmp/claude-f8eb-cwd"
    )
}

/// Claude Code 2.1's frame around any `setup` (the snapshot and cwd file of the fixtures'
/// shape; the snapshot does not exist, so `source` fails quietly, as in Claude Code).
fn claude_frame(setup: &str, word: &str, cwd: &str) -> String {
    format!(
        "source /home/alice/.claude/shell-snapshots/snapshot-bash-1788557415117-j0hu0n.sh 2>/dev/null || true && {setup} && eval {word} < /dev/null && pwd -P >| {cwd}"
    )
}

/// Setup statements of the vocabulary (`wrapper::SETUP_VOCABULARY`), for the shells to
/// run in any order: builtins of both shells, then of bash only (a bare `shopt`), then of
/// zsh only (a bare `setopt`). A setup takes the first kind and one of the others.
const VOCABULARY_BOTH: [&str; 7] = [
    "\\builtin shopt -u extglob 2>/dev/null || true",
    "\\builtin setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL NO_BRACE_CCL NO_MAGIC_EQUAL_SUBST NO_RC_QUOTES NO_EQUALS 2>/dev/null || true",
    "{ \\builtin unalias -- 'which'; \\builtin unset -f -- 'which'; } >/dev/null 2>&1 || true",
    "{ \\builtin unalias -- 'unsetenv'; \\builtin unset -f -- 'unsetenv'; } >/dev/null 2>&1 || true",
    "\\builtin setopt NO_GLOB_DOTS 2>/dev/null || true",
    "unalias -- ls || true",
    "\\builtin unset -f -- ls || true",
];
const VOCABULARY_BASH: [&str; 2] = [
    "shopt -u extglob nullglob dotglob 2>/dev/null || true",
    "{ shopt -u globstar || \\builtin setopt NO_EXTENDED_GLOB; } >/dev/null 2>&1 || true",
];
const VOCABULARY_ZSH: [&str; 2] = [
    "setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL 2>/dev/null || true",
    "{ \\builtin shopt -u extglob || setopt NO_EXTENDED_GLOB; } >/dev/null 2>&1 || true",
];

/// Setup-shaped text and an inner command that gate would judge (and could allow), where
/// the real shell runs something more: `MARK` stands for a file only that creates.
const SMUGGLED: [(&str, &str); 11] = [
    (
        "{ \\builtin unalias -- 'which'; touch MARK; } >/dev/null 2>&1 || true",
        "true",
    ),
    (
        "shopt -u extglob 2>/dev/null || true; touch MARK || true",
        "true",
    ),
    ("\\builtin shopt -u extglob\ntouch MARK || true", "true"),
    (
        "\\builtin unalias -- $(touch MARK) 2>/dev/null || true",
        "true",
    ),
    ("\\builtin unset -f -- \"`touch MARK`\" || true", "true"),
    (
        "\\builtin shopt -u extglob$(touch MARK) 2>/dev/null || true",
        "true",
    ),
    (
        "{ \\builtin unalias -- 'which' & touch MARK; } || true",
        "true",
    ),
    ("\\builtin shopt -u extglob >MARK || true", "true"),
    // The inner command gate judged is not what runs.
    (
        "shopt -s expand_aliases || true && alias true='touch MARK' || true",
        "true",
    ),
    ("{ true() { touch MARK; }; } || true", "true"),
    (
        "setopt NO_EXTENDED_GLOB 2>/dev/null || touch MARK || true",
        "true",
    ),
];

fn single_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\"'\"'"))
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 48,
        // Integration tests have no lib.rs beside them to store regressions next to.
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Whatever a wrapper-shaped text holds, if gate recognises it, bash and zsh evaluate
    /// exactly the inner command gate found.
    #[test]
    fn shells_agree_with_unwrap_on_claude_words(
        command in prop_oneof![
            "[ -~\n]{1,40}",
            "[a-z'\" ]{1,12}",
            any::<String>(),
        ],
        raw in prop::bool::ANY,
    ) {
        // An empty command is never recognised (Claude Code refuses it anyway).
        prop_assume!(!command.is_empty() && !command.contains('\0'));
        // Either Claude Code's own quoting, or the command pasted in as raw shell text
        // (a forgery): recognised or not, never evaluated differently.
        let word = if raw { command.clone() } else { single_quote(&command) };
        let text = claude_2_1(&word);
        let env = printer_env();
        if let Some(u) = unwrap(&text) {
            for shell in SHELLS.iter().filter(|s| have(s)) {
                prop_assert_eq!(shell_sees(shell, &text, env.path()), Some(u.inner.clone().into_owned()), "{}", shell);
            }
        } else {
            prop_assert!(raw, "Claude Code's own quoting must be recognised: {:?}", text);
        }
    }

    /// Any run of setup statements of the vocabulary, in any order: gate recognises it,
    /// and bash and zsh evaluate exactly the inner command, having run nothing else
    /// (the `eval` printer is the only output).
    #[test]
    fn shells_agree_with_unwrap_on_any_setup_of_the_vocabulary(
        picks in prop::collection::vec((0..VOCABULARY_BOTH.len(), 0..2usize, any::<bool>()), 0..6),
        zsh in any::<bool>(),
        command in "[ -~]{1,20}",
    ) {
        let own = if zsh { VOCABULARY_ZSH } else { VOCABULARY_BASH };
        let setup: Vec<&str> = picks
            .iter()
            .map(|&(both, other, pick_own)| if pick_own { own[other] } else { VOCABULARY_BOTH[both] })
            .collect();
        let text = if setup.is_empty() {
            format!(
                "source /home/alice/.claude/shell-snapshots/snapshot-bash-1788557415117-j0hu0n.sh 2>/dev/null || true && eval {} < /dev/null && pwd -P >| /tmp/claude-f8eb-cwd",
                single_quote(&command)
            )
        } else {
            claude_frame(&setup.join(" && "), &single_quote(&command), "/tmp/claude-f8eb-cwd")
        };
        let u = unwrap(&text);
        prop_assert!(u.is_some(), "{}", text);
        let shells = u.unwrap().bookkeeping.shells.unwrap();
        let tied = picks.iter().any(|p| p.2);
        let expected: &[&str] = match (tied, zsh) {
            (false, _) => &["bash", "zsh"],
            (true, false) => &["bash"],
            (true, true) => &["zsh"],
        };
        prop_assert_eq!(shells, expected);
        // The printer shows what `eval` got; in the shell the setup is not tied to, its
        // bare word is no program here (PATH is /usr/bin:/bin), so `|| true` goes on.
        let env = printer_env();
        for shell in SHELLS.iter().filter(|s| have(s)) {
            prop_assert_eq!(shell_sees(shell, &text, env.path()), Some(command.clone()), "{}", shell);
        }
    }

    #[test]
    fn shells_agree_with_unwrap_on_codex_scripts(command in "[ -~\n]{1,40}") {
        let text = format!(
            "if . '/home/user/.codex/shell_snapshots/0199a213-81c0-7800-8aa1-bbab2a035a53.sh' >/dev/null 2>&1; then :; fi\n\nexec '/bin/bash' -c {}",
            single_quote(&command)
        );
        let u = unwrap(&text).unwrap();
        let env = printer_env();
        for shell in SHELLS.iter().filter(|s| have(s)) {
            prop_assert_eq!(shell_sees(shell, &text, env.path()), Some(u.inner.clone().into_owned()));
        }
    }
}

/// Each forgery runs its smuggled command in bash (the control: gate's refusal to
/// unwrap it is what keeps it from running as its harmless inner command), and gate does
/// not unwrap it.
#[test]
fn setup_shaped_smuggling_runs_in_bash_and_is_no_wrapper() {
    let dir = tempfile::tempdir().unwrap();
    for (i, (setup, inner)) in SMUGGLED.iter().enumerate() {
        let mark = dir.path().join(format!("mark-{i}"));
        let setup = setup.replace("MARK", mark.to_str().unwrap());
        let inner = inner.replace("MARK", mark.to_str().unwrap());
        let recognisable = claude_frame(&setup, &single_quote(&inner), "/tmp/claude-f8eb-cwd");
        assert_eq!(unwrap(&recognisable).map(|u| u.template), None, "{setup}");
        // The control, with the cwd file in the temporary directory.
        let cwd = dir.path().join("cwd");
        let text = claude_frame(&setup, &single_quote(&inner), cwd.to_str().unwrap());
        let out = Command::new("/bin/bash")
            .arg("-c")
            .arg(&text)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            mark.exists(),
            "bash did not run the smuggled command: {text}\n{out:?}"
        );
        // Without the forgery the same frame runs the inner command alone.
        let vocabulary = "shopt -u extglob || true";
        let recognised = claude_frame(vocabulary, &single_quote(&inner), "/tmp/claude-f8eb-cwd");
        assert_eq!(
            unwrap(&recognised).map(|u| u.inner.into_owned()),
            Some(inner.clone())
        );
        let plain = claude_frame(vocabulary, &single_quote(&inner), cwd.to_str().unwrap());
        fs::remove_file(&mark).unwrap();
        Command::new("/bin/bash")
            .arg("-c")
            .arg(&plain)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .status()
            .unwrap();
        assert!(!mark.exists(), "the plain frame ran more than {inner:?}");
    }
}

#[test]
fn the_snapshot_stub_does_nothing_when_sourced() {
    let dir = tempfile::tempdir().unwrap();
    let stub = dir.path().join("snapshot.sh");
    let mut f = fs::File::create(&stub).unwrap();
    f.write_all(gate::policy::wrapper::SNAPSHOT_STUB.as_bytes())
        .unwrap();
    for shell in ["/bin/bash", "/bin/zsh", "/bin/sh"]
        .iter()
        .filter(|s| have(s))
    {
        let out = Command::new(shell)
            .arg("-c")
            .arg(". \"$0\" && echo ok")
            .arg(&stub)
            .env_clear()
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "ok\n", "{shell}");
        assert!(out.stderr.is_empty(), "{shell}: {:?}", out.stderr);
    }
}

/// Gemini CLI since 0.37 splices the command in as raw text on lines of its own: bash
/// running the whole captured wrapper prints exactly what it prints for the inner
/// command alone (the bookkeeping writes files, not output).
#[test]
fn bash_runs_gemini_clis_wrappers_as_their_inner_command() {
    let mut checked = 0;
    for f in fixtures() {
        let text = f.argv.last().unwrap();
        let Some(u) = unwrap(text) else { continue };
        if u.agent != "gemini-cli" || u.bookkeeping.temp_dir.is_none() && !text.contains("(\n") {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        // The captured per-call directory, made for the run (and removed) unless it exists.
        let made = u
            .bookkeeping
            .temp_dir
            .filter(|temp| fs::create_dir(temp).is_ok());
        let run = |script: &str| {
            Command::new("/bin/bash")
                .arg("-c")
                .arg(script)
                .env_clear()
                .env("PATH", "/usr/bin:/bin")
                .env("LC_ALL", "C")
                .current_dir(dir.path())
                .stdin(Stdio::null())
                .output()
                .unwrap()
        };
        let (whole, alone) = (run(text), run(&u.inner));
        assert_eq!(
            String::from_utf8_lossy(&whole.stdout),
            String::from_utf8_lossy(&alone.stdout),
            "{}",
            f.name
        );
        assert_eq!(whole.status.code(), alone.status.code(), "{}", f.name);
        assert!(
            !whole.stdout.is_empty() || u.inner.starts_with("ls"),
            "{}",
            f.name
        );
        if let Some(temp) = made {
            let _ = fs::remove_dir_all(temp);
        }
        checked += 1;
    }
    assert!(checked >= 6, "only {checked} Gemini CLI fixtures checked");
}
