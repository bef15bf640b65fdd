//! Policy end to end: levels, allow rules and deny rules decide what really runs.
//!
//! Every "runs nothing" test checks for a side effect (a file the command would create)
//! and first runs a control that shows the same user *can* create it, so the absence of
//! the file proves that gate ran nothing. The security tests run twice, as the current
//! user and as an unprivileged one (see `for_each_user!`).

use crate::common;

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use common::*;

const NO_CONFIG: [&str; 3] = ["--no-config", "--audit-log", "off"];

/// The command forms that hide `touch F` behind shell syntax. Each one creates F when
/// run at level full without deny rules (checked by the tests as a control).
fn hidden_touch_commands() -> Vec<String> {
    let touch = require_program("touch");
    require_program("bash");
    require_program("env");
    require_program("nohup");
    require_program("timeout");
    vec![
        "x; touch F".into(),
        "true && touch F".into(),
        "echo $(touch F)".into(),
        "echo `touch F`".into(),
        "FOO=1 touch F".into(),
        "env touch F".into(),
        "nohup touch F".into(),
        "timeout 5 touch F".into(),
        "bash -c 'touch F'".into(),
        format!("{} F", touch.display()),
        "\"touch\" F".into(),
    ]
}

/// Commands that hide `touch F` behind the shell's reserved words.
const RESERVED_WORD_COMMANDS: &[&str] = &[
    "! touch F",
    "if true; then touch F; fi",
    "if touch F; then :; fi",
    "if false; then :; else touch F; fi",
    "if false; then :; elif touch F; then :; fi",
    "for i in 1; do touch F; done",
    "while touch F; do break; done",
    "until touch F; do :; done",
    "true || ! touch F; touch F",
];

/// Run `command` at level full with `--deny touch`: it must be refused with one line
/// naming the rule, and F never created. A control run without the deny rule first shows
/// that the same command does create F. Returns what went wrong, if anything.
fn deny_rule_problem(
    env: &TestEnv,
    user: User,
    shell: Option<&str>,
    command: &str,
) -> Option<String> {
    let f = env.file("F");
    let _ = std::fs::remove_file(&f);
    let shell_args: Vec<&str> = shell.map(|s| vec!["--shell", s]).unwrap_or_default();

    let control = env
        .gate()
        .user(user)
        .args(NO_CONFIG)
        .args(["--level", "full"])
        .args(&shell_args)
        .args(["-c", command])
        .run();
    if !f.exists() {
        return Some(format!(
            "control: {command:?} does not create F even without a deny rule\n{}",
            control.report()
        ));
    }
    std::fs::remove_file(&f).unwrap();

    let out = env
        .gate()
        .user(user)
        .args(NO_CONFIG)
        .args(["--level", "full", "--deny", "touch"])
        .args(&shell_args)
        .args(["-c", command])
        .run();
    let stderr = out.stderr();
    if f.exists() {
        let _ = std::fs::remove_file(&f);
        Some(format!(
            "{command:?} ran touch F despite --deny touch\n{}",
            out.report()
        ))
    } else if out.code() != Some(REFUSED)
        || !stderr.starts_with("gate: refused")
        || stderr.matches('\n').count() != 1
        || !stderr.contains("deny rule `touch` (from --deny)")
    {
        Some(format!(
            "{command:?} was not refused with one line naming the rule\n{}",
            out.report()
        ))
    } else {
        None
    }
}

/// Check every command and report all that get past the deny rule at once.
#[track_caller]
fn assert_deny_rule_catches_all(
    env: &TestEnv,
    user: User,
    shell: Option<&str>,
    commands: &[String],
) {
    let problems: Vec<String> = commands
        .iter()
        .filter_map(|c| deny_rule_problem(env, user, shell, c))
        .collect();
    assert!(
        problems.is_empty(),
        "{} of {} commands got past `--deny touch`:\n\n{}",
        problems.len(),
        commands.len(),
        problems.join("\n\n")
    );
}

for_each_user! {
    fn deny_level_runs_nothing(user) {
        let env = TestEnv::new();
        env.assert_side_effects_are_visible(user);
        let f = env.file("F");
        for form in [
            &["-c", "touch F"][..],
            &["--", "touch", "F"],
            &["--allow", "touch", "-c", "touch F"],
            &["--allow", "touch", "--", "touch", "F"],
        ] {
            let out = env
                .gate()
                .user(user)
                .args(NO_CONFIG)
                .args(["--level", "deny"])
                .args(form)
                .run();
            assert_absent(&f, &out);
            out.assert_refused().assert_stderr_contains("level \"deny\"");
        }
    }

    fn unmatched_command_at_ask_runs_nothing(user) {
        let env = TestEnv::new();
        env.assert_side_effects_are_visible(user);
        let f = env.file("F");
        for level in [&[][..], &["--level", "ask"]] {
            for form in [&["-c", "touch F"][..], &["--", "touch", "F"]] {
                let out = env
                    .gate()
                    .user(user)
                    .args(NO_CONFIG)
                    .args(level)
                    .args(["--allow", "echo hello"])
                    .args(form)
                    .run();
                assert_absent(&f, &out);
                out.assert_refused()
                    .assert_stderr_contains("no allow rule matches it")
                    .assert_stderr_contains("no approver");
            }
        }
    }

    // The safe level runs every command, unasked, in the sandbox: the command creates F in
    // the working directory, but cannot create G in the home directory, which it can at
    // level full (the control). The home is outside /tmp, which stays writable at safe.
    // tests/sandbox.rs tests the sandbox itself.
    fn safe_level_runs_every_command_in_the_sandbox(user) {
        let env = TestEnv::new_in("/var/tmp");
        env.assert_side_effects_are_visible(user);
        let f = env.file("F");
        let g = env.home.join("G");
        let script = "touch F; touch \"$HOME/G\"";
        env.gate()
            .user(user)
            .args(NO_CONFIG)
            .args(["--level", "full", "-c", script])
            .run()
            .assert_code(0);
        assert!(g.exists(), "control: at level full the command can create {}", g.display());
        std::fs::remove_file(&g).unwrap();
        std::fs::remove_file(&f).unwrap();
        for (level, form) in [
            (&["--level", "safe"][..], &["-c", script][..]),
            (&["--level", "safe"], &["--", "sh", "-c", script]),
            (&["--level", "safe"], &["--allow", "touch", "-c", script]),
            (&[], &["-c", script]),
        ] {
            let out = env
                .gate()
                .user(user)
                .env("GATE_LEVEL", "safe")
                .args(NO_CONFIG)
                .args(level)
                .args(form)
                .run();
            assert!(f.exists(), "the command should have run\n{}", out.report());
            assert_absent(&g, &out);
            out.assert_code(1)
                .assert_stderr_contains("Permission denied");
            std::fs::remove_file(&f).unwrap();
        }
    }

    fn deny_rules_apply_at_the_safe_level(user) {
        let env = TestEnv::new_in("/var/tmp");
        env.assert_side_effects_are_visible(user);
        let f = env.file("F");
        for form in [&["-c", "true; touch F"][..], &["--", "touch", "F"]] {
            let out = env
                .gate()
                .user(user)
                .args(NO_CONFIG)
                .args(["--level", "safe", "--deny", "touch"])
                .args(form)
                .run();
            assert_absent(&f, &out);
            out.assert_refused().assert_stderr_contains("touch");
        }
    }

    fn allow_rule_with_a_shell_character_appended_runs_nothing(user) {
        let env = TestEnv::new();
        env.assert_side_effects_are_visible(user);
        let f = env.file("F");
        for command in [
            "echo hi; touch F",
            "echo hi;touch F",
            "echo hi && touch F",
            "echo hi || touch F",
            "echo hi & touch F",
            "echo hi | touch F",
            "echo hi > F",
            "echo hi >> F",
            "echo hi $(touch F)",
            "echo hi `touch F`",
            "echo hi\ntouch F",
            "echo hi; (touch F)",
            "echo hi; { touch F; }",
        ] {
            let out = env
                .gate()
                .user(user)
                .args(NO_CONFIG)
                .args(["--allow", "echo"])
                .args(["-c", command])
                .run();
            assert_absent(&f, &out);
            out.assert_refused().assert_stderr_contains("shell character");
        }
    }

    fn deny_rules_hidden_behind_shell_syntax_run_nothing(user) {
        let env = TestEnv::new();
        assert_deny_rule_catches_all(&env, user, None, &hidden_touch_commands());
    }

    fn deny_rules_hidden_behind_shell_reserved_words_run_nothing(user) {
        // `!`, `if … then … elif … else`, `while`, `until`, `for … do` start a command
        // like `;` does: the word after them is a command the shell runs.
        let env = TestEnv::new();
        let commands: Vec<String> = RESERVED_WORD_COMMANDS.iter().map(|c| c.to_string()).collect();
        assert_deny_rule_catches_all(&env, user, None, &commands);
        // bash's `coproc` too.
        let bash = bash();
        let coproc = ["coproc touch F; wait".to_string()];
        assert_deny_rule_catches_all(&env, user, bash.to_str(), &coproc);
    }

    fn deny_rules_apply_when_plus_c_introduces_the_command(user) {
        // sh and bash both treat `+c` like `-c`: the next operand is the command text.
        // gate must judge it as a command, not as the name of a script.
        let env = TestEnv::new();
        let f = env.file("F");
        let bash = bash();
        for shell in [None, Some(bash.to_str().unwrap())] {
            let shell_args: Vec<&str> = shell.map(|s| vec!["--shell", s]).unwrap_or_default();
            let control = env
                .gate()
                .user(user)
                .args(NO_CONFIG)
                .args(["--level", "full"])
                .args(&shell_args)
                .args(["+c", "touch F"])
                .run();
            assert!(
                f.exists(),
                "control: `+c 'touch F'` does not run touch F\n{}",
                control.report()
            );
            std::fs::remove_file(&f).unwrap();

            let out = env
                .gate()
                .user(user)
                .args(NO_CONFIG)
                .args(["--level", "full", "--deny", "touch"])
                .args(&shell_args)
                .args(["+c", "touch F"])
                .run();
            assert_absent(&f, &out);
            out.assert_refused();
        }
    }

    fn gate_options_after_the_command_do_not_raise_the_level(user) {
        // Everything after the command text is the command's $0 and arguments.
        let env = TestEnv::new();
        env.assert_side_effects_are_visible(user);
        let f = env.file("F");
        let out = env
            .gate()
            .user(user)
            .args(NO_CONFIG)
            .args(["-c", "touch F", "name", "--level", "full"])
            .run();
        assert_absent(&f, &out);
        out.assert_refused();
    }

    fn a_deny_rule_beats_an_allow_rule(user) {
        let env = TestEnv::new();
        env.assert_side_effects_are_visible(user);
        let f = env.file("F");
        let out = env
            .gate()
            .user(user)
            .args(NO_CONFIG)
            .args(["--allow", "touch", "--deny", "touch", "-c", "touch F"])
            .run();
        assert_absent(&f, &out);
        out.assert_refused().assert_stderr_contains("deny rule `touch`");
    }

    fn an_allow_rule_for_a_wrapper_never_admits_a_denied_program_inside_it(user) {
        // Issue 15: `--allow timeout --deny rm` ran `timeout --sig KILL 5 rm victim`
        // unasked: the allow rule matched and the deny rule never saw the program.
        let env = TestEnv::new();
        env.assert_side_effects_are_visible(user);
        let f = env.file("F");
        for (wrapper, command) in [
            ("timeout", "timeout --sig KILL 5 touch F"),
            ("nice", "nice --adj 5 touch F"),
            ("env", "env --chd . touch F"),
            ("stdbuf", "stdbuf --out L touch F"),
        ] {
            // Control: the allow rule alone runs it at ask.
            let out = env
                .gate()
                .user(user)
                .args(NO_CONFIG)
                .args(["--allow", wrapper, "-c", command])
                .run();
            out.assert_code(0);
            assert!(f.exists(), "control {command:?}: {}", out.report());
            std::fs::remove_file(&f).unwrap();
            let out = env
                .gate()
                .user(user)
                .args(NO_CONFIG)
                .args(["--allow", wrapper, "--deny", "touch", "-c", command])
                .run();
            assert_absent(&f, &out);
            out.assert_refused().assert_stderr_contains("deny rule `touch`");
        }
    }

    fn full_level_runs_everything(user) {
        let env = TestEnv::new();
        let out = env
            .gate()
            .user(user)
            .args(NO_CONFIG)
            .args(["--level", "full", "-c", "touch F; echo a | cat; echo $(echo b)"])
            .run();
        out.assert_code(0).assert_stdout("a\nb\n").assert_stderr_empty();
        assert!(env.file("F").exists(), "{}", out.report());
    }
}

// ---------------------------------------------------------------------------------------
// Allow rules: the seed semantics, end to end.

fn allow_echo_hello(env: &TestEnv, command: &str) -> Outcome {
    env.gate()
        .args(NO_CONFIG)
        .args(["--allow", "echo hello", "-c", command])
        .run()
}

#[test]
fn allow_rule_runs_the_exact_command() {
    let env = TestEnv::new();
    allow_echo_hello(&env, "echo hello")
        .assert_code(0)
        .assert_stdout("hello\n")
        .assert_stderr_empty();
}

#[test]
fn allow_rule_runs_the_command_with_more_arguments() {
    let env = TestEnv::new();
    allow_echo_hello(&env, "echo hello world")
        .assert_code(0)
        .assert_stdout("hello world\n");
}

#[test]
fn allow_rule_does_not_run_a_longer_word() {
    let env = TestEnv::new();
    let out = allow_echo_hello(&env, "echo helloworld");
    out.assert_refused().assert_stdout("");
}

#[test]
fn allow_rule_does_not_run_a_command_after_a_semicolon() {
    let env = TestEnv::new();
    let out = allow_echo_hello(&env, "echo hello; touch F");
    assert_absent(&env.file("F"), &out);
    out.assert_refused().assert_stdout("");
}

#[test]
fn allow_rule_does_not_run_a_pipeline() {
    let env = TestEnv::new();
    let out = allow_echo_hello(&env, "echo hello | cat");
    out.assert_refused()
        .assert_stdout("")
        .assert_stderr_contains("'|'");
}

#[test]
fn allow_rule_ignores_leading_and_trailing_spaces_on_rule_and_command() {
    let env = TestEnv::new();
    for (rule, command) in [
        ("  echo hello  ", "echo hello"),
        ("echo hello", "   echo hello   "),
        ("  echo hello ", "  echo hello there  "),
    ] {
        env.gate()
            .args(NO_CONFIG)
            .args(["--allow", rule, "-c", command])
            .run()
            .assert_code(0)
            .assert_stdout_contains("hello");
    }
}

#[test]
fn allow_rule_trims_tabs_but_no_other_white_space() {
    // To a shell, a leading no-break space is part of the program name and a trailing
    // carriage return part of the last word: neither is the allowed command.
    let env = TestEnv::new();
    allow_echo_hello(&env, "\techo hello\t")
        .assert_code(0)
        .assert_stdout("hello\n");
    allow_echo_hello(&env, "\u{a0}echo hello").assert_refused();
    allow_echo_hello(&env, "echo hello\u{a0}").assert_refused();
    allow_echo_hello(&env, "echo hello\r").assert_refused();
    allow_echo_hello(&env, "\u{b}echo hello").assert_refused();
}

#[test]
fn allow_rule_treats_inner_spaces_and_tabs_literally() {
    let env = TestEnv::new();
    allow_echo_hello(&env, "echo  hello").assert_refused();
    allow_echo_hello(&env, "echo hello\tworld").assert_refused();
    allow_echo_hello(&env, "echo\thello").assert_refused();
}

#[test]
fn a_newline_inside_the_command_matches_no_allow_rule() {
    let env = TestEnv::new();
    let f = env.file("F");
    for command in ["echo hello\ntouch F", "echo hello\n", "\necho hello"] {
        let out = allow_echo_hello(&env, command);
        assert_absent(&f, &out);
        out.assert_refused()
            .assert_stderr_contains("newline")
            .assert_stdout("");
    }
}

#[test]
fn allow_rule_is_a_prefix_of_words_not_a_substring() {
    let env = TestEnv::new();
    let out = env
        .gate()
        .args(NO_CONFIG)
        .args(["--allow", "hello", "-c", "echo hello"])
        .run();
    out.assert_refused();
}

#[test]
fn a_program_is_judged_as_its_shell_quoted_arguments() {
    let env = TestEnv::new();
    let f = env.file("F");
    env.gate()
        .args(NO_CONFIG)
        .args(["--allow", "echo hello", "--", "echo", "hello", "world"])
        .run()
        .assert_code(0)
        .assert_stdout("hello world\n");
    // One argument holding a space is quoted, so it is not the words `echo hello`.
    env.gate()
        .args(NO_CONFIG)
        .args(["--allow", "echo hello", "--", "echo hello"])
        .run()
        .assert_refused();
    let out = env
        .gate()
        .args(NO_CONFIG)
        .args([
            "--allow",
            "echo hello",
            "--",
            "sh",
            "-c",
            "echo hello; touch F",
        ])
        .run();
    assert_absent(&f, &out);
    out.assert_refused();
}

#[test]
fn a_deny_rule_refusal_names_the_rule_and_where_it_came_from() {
    let env = TestEnv::new();
    let out = env
        .gate()
        .args(NO_CONFIG)
        .args([
            "--level",
            "full",
            "--deny",
            "touch",
            "-c",
            "echo ok; touch F",
        ])
        .run();
    assert_absent(&env.file("F"), &out);
    out.assert_refused()
        .assert_stderr_contains("the deny rule `touch` (from --deny) matches `touch F`")
        .assert_stdout("");
}

#[test]
fn a_deny_rule_does_not_catch_quoted_text() {
    let env = TestEnv::new();
    env.gate()
        .args(NO_CONFIG)
        .args(["--level", "full", "--deny", "touch", "-c", "echo 'touch F'"])
        .run()
        .assert_code(0)
        .assert_stdout("touch F\n");
}

// ---------------------------------------------------------------------------------------
// Arguments that are not UTF-8.

fn bytes(b: &[u8]) -> OsString {
    OsString::from_vec(b.to_vec())
}

#[test]
fn a_non_utf8_command_is_refused_at_ask_even_when_an_allow_rule_seems_to_match() {
    let env = TestEnv::new();
    let out = env
        .gate()
        .args(NO_CONFIG)
        .args(["--allow", "printf"])
        .arg("-c")
        .arg(bytes(b"printf %s \xff"))
        .run();
    out.assert_refused()
        .assert_stderr_contains("not valid UTF-8")
        .assert_stdout("");
}

#[test]
fn a_non_utf8_program_argument_is_refused_at_ask_even_when_an_allow_rule_seems_to_match() {
    let env = TestEnv::new();
    let out = env
        .gate()
        .args(NO_CONFIG)
        .args(["--allow", "printf %s", "--", "printf", "%s"])
        .arg(bytes(b"a\xffb"))
        .run();
    out.assert_refused()
        .assert_stderr_contains("not valid UTF-8")
        .assert_stdout("");
}

#[test]
fn a_non_utf8_command_runs_unchanged_at_full() {
    let env = TestEnv::new();
    let out = env
        .gate()
        .args(NO_CONFIG)
        .args(["--level", "full", "-c"])
        .arg(bytes(b"printf %s '\xff\xfe'"))
        .run();
    out.assert_code(0);
    assert_eq!(out.stdout, b"\xff\xfe", "{}", out.report());
}

#[test]
fn a_non_utf8_program_argument_runs_unchanged_at_full() {
    let env = TestEnv::new();
    let out = env
        .gate()
        .args(NO_CONFIG)
        .args(["--level", "full", "--", "printf", "%s"])
        .arg(bytes(b"a\xffb\x80"))
        .run();
    out.assert_code(0);
    assert_eq!(out.stdout, b"a\xffb\x80", "{}", out.report());
}

#[test]
fn a_non_utf8_command_still_meets_the_deny_rules() {
    let env = TestEnv::new();
    let out = env
        .gate()
        .args(NO_CONFIG)
        .args(["--level", "full", "--deny", "touch", "-c"])
        .arg(bytes(b"touch F\xff"))
        .run();
    out.assert_refused();
    let created: Vec<_> = std::fs::read_dir(&env.work).unwrap().collect();
    assert!(
        created.is_empty(),
        "the denied command created {created:?}\n{}",
        out.report()
    );
}

/// `--readonly` runs the preset's commands unasked at `ask`; without it they are asked
/// about, and with no approver refused.
#[test]
fn the_read_only_preset_runs_reads_unasked_only_when_turned_on() {
    let env = TestEnv::new();
    std::fs::write(env.file("notes.txt"), "hello\n").unwrap();
    let out = env
        .gate()
        .args(NO_CONFIG)
        .args(["--readonly", "-c", "cat notes.txt"])
        .run();
    out.assert_code(0);
    assert_eq!(out.stdout(), "hello\n");
    env.gate()
        .args(NO_CONFIG)
        .args(["-c", "cat notes.txt"])
        .run()
        .assert_refused();
    // Writing is not reading: sort -o is refused even with the preset.
    let f = env.file("sorted");
    let out = env
        .gate()
        .args(NO_CONFIG)
        .args(["--readonly", "-c", "sort -o sorted notes.txt"])
        .run();
    assert_absent(&f, &out);
    out.assert_refused();
}

/// `--readonly-rules`: the allow rule `git diff` (a read-only command) still runs `git
/// diff --stat`, but `git diff --output=FILE` (which writes) is asked about and, with no
/// approver, refused; without the setting the seeds' prefix rule runs it.
#[test]
fn readonly_rules_keep_a_read_only_rule_to_reading() {
    let env = TestEnv::new();
    let git = require_program("git");
    let status = std::process::Command::new(&git)
        .args(["init", "-q"])
        .current_dir(&env.work)
        .env("HOME", &env.home)
        .status()
        .unwrap();
    assert!(status.success());
    let allow = ["--allow", "git diff"];
    env.gate()
        .args(NO_CONFIG)
        .args(allow)
        .args(["--readonly-rules", "-c", "git diff --stat"])
        .env("HOME", &env.home)
        .run()
        .assert_code(0);
    let written = env.file("PWNED");
    let out = env
        .gate()
        .args(NO_CONFIG)
        .args(allow)
        .args(["--readonly-rules", "-c", "git diff --output=PWNED"])
        .env("HOME", &env.home)
        .run();
    assert_absent(&written, &out);
    out.assert_refused()
        .assert_stderr_contains("the option `--output` writes the output to a file");
    // The control: the seeds' rule alone runs it.
    let out = env
        .gate()
        .args(NO_CONFIG)
        .args(allow)
        .args(["-c", "git diff --output=PWNED"])
        .env("HOME", &env.home)
        .run();
    out.assert_code(0);
    assert!(written.exists(), "{}", out.report());
}

/// `--compound` runs `a && b` when each part is allowed, and refuses (no approver) as
/// soon as one part is not: nothing of it runs.
#[test]
fn compound_mode_runs_a_chain_only_when_every_part_is_allowed() {
    let env = TestEnv::new();
    let out = env
        .gate()
        .args(NO_CONFIG)
        .args(["--compound", "--allow", "echo one", "--allow", "echo two"])
        .args(["-c", "echo one && echo two | cat"])
        .run();
    out.assert_refused()
        .assert_stderr_contains("`cat` is not allowed on its own");
    assert!(
        out.stdout().is_empty(),
        "nothing of it ran: {}",
        out.report()
    );
    let out = env
        .gate()
        .args(NO_CONFIG)
        .args([
            "--compound",
            "--allow",
            "echo one",
            "--allow",
            "echo two",
            "--allow",
            "cat",
        ])
        .args(["-c", "echo one && echo two | cat"])
        .run();
    out.assert_code(0);
    assert_eq!(out.stdout(), "one\ntwo\n");
    let f = env.file("F");
    let out = env
        .gate()
        .args(NO_CONFIG)
        .args(["--compound", "--allow", "echo one"])
        .args(["-c", "echo one && touch F"])
        .run();
    assert_absent(&f, &out);
    out.assert_refused();
    assert!(
        out.stdout().is_empty(),
        "nothing of it ran: {}",
        out.report()
    );
}

#[test]
fn a_brace_expansion_too_large_to_check_is_refused_in_bounded_memory() {
    // Issue 15: a 40 KB `{a,b}{a,b}…` made gate take 1.5 GB, and a larger one aborted
    // it (status 134). Now it is refused as too complex, within 256 MB of address space.
    let prlimit = require_program("prlimit");
    let env = TestEnv::new();
    for text in [
        "{a,b}".repeat(8_000),
        "{a,b}".repeat(25_000),
        format!("echo {{1..{}}}", u64::MAX),
    ] {
        let run = |rules: &[&str]| {
            env.gate()
                .program(&prlimit)
                .arg("--as=268435456")
                .arg(gate_binary_for(User::Current))
                .args(NO_CONFIG)
                .args(["--level", "full", "--shell", "/bin/true"])
                .args(rules)
                .args(["-c", &text])
                .run()
        };
        // Control: without the rule gate does not scan, and the "shell" runs.
        run(&[]).assert_code(0);
        run(&["--deny", "rm"])
            .assert_refused()
            .assert_stderr_contains("too large or too deeply nested to be checked");
    }
}

// ---------------------------------------------------------------------------------------
// Allow rules for test and build runners (issue 23, item 10)

/// A script in the working directory that creates `PWNED` wherever it is run from, and
/// that every user can run.
fn plant_pwn(env: &TestEnv) {
    use std::os::unix::fs::PermissionsExt;
    let script = env.file("pwn.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\ntouch '{}'\n", env.file("PWNED").display()),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
}

for_each_user! {
    /// `--allow make` runs the project's Makefile, but not `make SHELL=./pwn.sh`, another
    /// makefile, or text evaluated as one: those are asked about (and with no approver,
    /// refused). The control runs each at level full, where it does create PWNED, and
    /// runs plain `make` under the rule.
    fn an_allowed_make_does_not_take_other_code_from_its_arguments(user) {
        require_program("make");
        let env = TestEnv::new();
        env.assert_side_effects_are_visible(user);
        plant_pwn(&env);
        std::fs::write(env.file("Makefile"), "all:\n\t@echo built\n").unwrap();
        std::fs::write(env.file("evil.mk"), "all:\n\t@./pwn.sh\n").unwrap();
        let pwned = env.file("PWNED");
        let allowed = env
            .gate()
            .user(user)
            .args(NO_CONFIG)
            .args(["--allow", "make", "-c", "make -s"])
            .run();
        allowed.assert_code(0).assert_stdout("built\n");
        for (command, word) in [
            ("make SHELL=./pwn.sh", "SHELL=./pwn.sh"),
            ("make -s -f evil.mk", "-f"),
            ("make --fil=evil.mk", "--fil=evil.mk"),
            ("make --eval=SHELL=./pwn.sh", "--eval=SHELL=./pwn.sh"),
            ("make -- SHELL=./pwn.sh", "SHELL=./pwn.sh"),
        ] {
            env.gate()
                .user(user)
                .args(NO_CONFIG)
                .args(["--level", "full", "-c", command])
                .run();
            assert!(pwned.exists(), "control: `{command}` does not create PWNED at full");
            std::fs::remove_file(&pwned).unwrap();
            let out = env
                .gate()
                .user(user)
                .args(NO_CONFIG)
                .args(["--allow", "make", "-c", command])
                .run();
            assert_absent(&pwned, &out);
            out.assert_refused()
                .assert_stderr_contains(&format!("`make`: `{word}"));
        }
    }
}

/// `--allow 'npm test'` runs the package's test script, but not with another shell for
/// its scripts (also abbreviated, as npm accepts it). Control: the same at level full
/// creates PWNED.
#[test]
fn an_allowed_npm_test_does_not_run_its_scripts_with_another_shell() {
    require_program("npm");
    let env = TestEnv::new();
    plant_pwn(&env);
    std::fs::write(
        env.file("package.json"),
        r#"{"name":"t","version":"1.0.0","scripts":{"test":"echo tested"}}"#,
    )
    .unwrap();
    let pwned = env.file("PWNED");
    let allow = ["--allow", "npm test"];
    let out = env
        .gate()
        .args(NO_CONFIG)
        .args(allow)
        .args(["-c", "npm test --silent"])
        .run();
    out.assert_code(0).assert_stdout_contains("tested");
    for command in [
        "npm test --script-shell=./pwn.sh",
        "npm test --script-sh ./pwn.sh",
    ] {
        env.gate()
            .args(NO_CONFIG)
            .args(["--level", "full", "-c", command])
            .run();
        assert!(
            pwned.exists(),
            "control: `{command}` does not create PWNED at full"
        );
        std::fs::remove_file(&pwned).unwrap();
        let out = env
            .gate()
            .args(NO_CONFIG)
            .args(allow)
            .args(["-c", command])
            .run();
        assert_absent(&pwned, &out);
        out.assert_refused()
            .assert_stderr_contains("runs the package's scripts with the program it names");
    }
}

/// `--allow 'cargo build'` builds the package, but not with a configuration that names
/// a compiler wrapper. Control: the same at level full runs the wrapper.
#[test]
fn an_allowed_cargo_build_does_not_take_configuration_from_its_arguments() {
    // The cargo that builds these tests (a toolchain, not a Debian package).
    let cargo = std::path::PathBuf::from(env!("CARGO"));
    let env = TestEnv::new();
    plant_pwn(&env);
    std::fs::write(
        env.file("Cargo.toml"),
        "[package]\nname = \"t\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::create_dir(env.file("src")).unwrap();
    std::fs::write(env.file("src/lib.rs"), "").unwrap();
    // The toolchain lives outside the test's home.
    let toolchain = |mut gate: Gate| {
        let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        for (name, default) in [("RUSTUP_HOME", ".rustup"), ("CARGO_HOME", ".cargo")] {
            match (std::env::var_os(name), &home) {
                (Some(value), _) => gate = gate.env(name, value),
                (None, Some(home)) => gate = gate.env(name, home.join(default)),
                (None, None) => {}
            }
        }
        if let Some(value) = std::env::var_os("RUSTUP_TOOLCHAIN") {
            gate = gate.env("RUSTUP_TOOLCHAIN", value);
        }
        gate.env(
            "PATH",
            format!("{}:/usr/bin:/bin", cargo.parent().unwrap().display()),
        )
    };
    let pwned = env.file("PWNED");
    let allow = ["--allow", "cargo build"];
    let out = toolchain(env.gate())
        .deadline(std::time::Duration::from_secs(300))
        .args(NO_CONFIG)
        .args(allow)
        .args(["-c", "cargo build --offline -q"])
        .run();
    out.assert_code(0);
    let command = "cargo build --offline -q --config 'build.rustc-wrapper=\"./pwn.sh\"'";
    toolchain(env.gate())
        .deadline(std::time::Duration::from_secs(300))
        .args(NO_CONFIG)
        .args(["--level", "full", "-c", command])
        .run();
    assert!(
        pwned.exists(),
        "control: `{command}` does not run the wrapper at full"
    );
    std::fs::remove_file(&pwned).unwrap();
    let out = toolchain(env.gate())
        .args(NO_CONFIG)
        .args(allow)
        .args(["-c", command])
        .run();
    assert_absent(&pwned, &out);
    out.assert_refused()
        .assert_stderr_contains("`cargo`: `--config` sets configuration");
}

/// pytest, go and tox need not be installed: `gate check` shows the decision. Each
/// command is allowed by its rule without the option (the control) and asked about with
/// it.
#[test]
fn allowed_pytest_go_test_and_tox_do_not_take_options_that_load_other_code() {
    let env = TestEnv::new();
    let decision = |rule: &str, command: &str| {
        let out = env
            .gate()
            .args(["check", "--json"])
            .args(NO_CONFIG)
            .args(["--allow", rule, "-c", command])
            .run();
        let v: serde_json::Value = serde_json::from_slice(out.stdout().as_bytes())
            .unwrap_or_else(|e| panic!("not JSON ({e})\n{}", out.report()));
        (
            v["decision"].as_str().unwrap_or_default().to_owned(),
            v["reason"].to_string(),
        )
    };
    for (rule, control, attack) in [
        ("pytest", "pytest -q tests", "pytest -q tests -p pwn"),
        ("pytest", "pytest -p no:cacheprovider", "pytest -ppwn"),
        ("pytest", "pytest -q", "pytest -q -c /tmp/pytest.ini"),
        ("pytest", "pytest -q", "pytest --rootdir=/tmp -q"),
        ("pytest", "pytest -q", "pytest -o pythonpath=/tmp"),
        ("pytest", "pytest -q", "pytest @args.txt"),
        (
            "python3 -m pytest",
            "python3 -m pytest -x",
            "python3 -m pytest --pyargs pwn",
        ),
        ("go test", "go test ./...", "go test -exec ./pwn.sh ./..."),
        (
            "go test",
            "go test ./...",
            "go test -toolexec=./pwn.sh ./...",
        ),
        ("go test", "go test ./...", "go test -overlay=o.json ./..."),
        ("tox", "tox -e py", "tox -e py -c /tmp/tox.ini"),
        ("tox", "tox -e py", "tox -e py -x testenv.commands=./pwn.sh"),
        ("tox", "tox -e py -- -k x", "tox -e py -- -p pwn"),
    ] {
        let (allowed, why) = decision(rule, control);
        assert_eq!(
            allowed, "allow",
            "control: `{control}` under `{rule}`: {why}"
        );
        let (asked, why) = decision(rule, attack);
        assert_eq!(asked, "ask", "`{attack}` under `{rule}`: {why}");
        assert!(
            why.contains("not an argument that loads or runs other code"),
            "{why}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// The read-only preset and secrets (issue 23, item 8)

/// What the agent's environment holds and a key in the home directory.
const API_KEY: &str = "sk-gate-test-4b1d7e0c9a";
const KEY_TEXT: &str = "PRIVATE-KEY-MATERIAL-7f3a";

/// A home with `~/.ssh/id_rsa` (readable by every user, so that the control can show the
/// command really prints it), and in the working directory a symbolic link and a hard
/// link to it, a list naming `/proc/self/environ`, and a git repository.
fn plant_secrets(env: &TestEnv) {
    use std::os::unix::fs::PermissionsExt;
    let ssh = env.home.join(".ssh");
    std::fs::create_dir(&ssh).unwrap();
    std::fs::set_permissions(&ssh, std::fs::Permissions::from_mode(0o755)).unwrap();
    let key = ssh.join("id_rsa");
    std::fs::write(&key, format!("{KEY_TEXT}\n")).unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::os::unix::fs::symlink(&key, env.file("notes.txt")).unwrap();
    std::fs::hard_link(&key, env.file("copy.txt")).unwrap();
    std::fs::write(env.file("names"), "/proc/self/environ").unwrap();
    std::fs::write(env.file("README"), "hello\n").unwrap();
    let git = require_program("git");
    for args in [
        &["init", "-q"][..],
        &["add", "README"],
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "x",
        ],
    ] {
        let status = std::process::Command::new(&git)
            .args(args)
            .current_dir(&env.work)
            .env("HOME", &env.home)
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }
}

/// Run `command` at level full, where it must print `secret` (the control), then at ask
/// with the read-only preset, where it must be refused and print none of it. What went
/// wrong, if anything.
fn preset_problem(
    env: &TestEnv,
    user: User,
    flags: &[&str],
    command: &str,
    secret: &str,
) -> Option<String> {
    let run = |level: &[&str]| {
        env.gate()
            .user(user)
            .args(NO_CONFIG)
            .args(level)
            .args(["--no-tty", "-c", command])
            // The agent's key, and git's trust in a repository another user owns.
            .env("FAKE_API_KEY", API_KEY)
            .env("GIT_CONFIG_COUNT", "1")
            .env("GIT_CONFIG_KEY_0", "safe.directory")
            .env("GIT_CONFIG_VALUE_0", "*")
            .run()
    };
    let control = run(&["--level", "full"]);
    if !format!("{}{}", control.stdout(), control.stderr()).contains(secret) {
        return Some(format!(
            "control: `{command}` does not print the secret at level full\n{}",
            control.report()
        ));
    }
    let out = run(&[&["--level", "ask", "--readonly"][..], flags].concat());
    let printed = format!("{}{}", out.stdout(), out.stderr());
    if printed.contains(secret)
        || out.code() != Some(REFUSED)
        || !out.stderr().starts_with("gate: refused")
    {
        return Some(format!(
            "`{command}` {flags:?} was not refused, or printed the secret\n{}",
            out.report()
        ));
    }
    None
}

for_each_user! {
    /// The read-only preset reads no secret through a name that leads to one (a symbolic
    /// or hard link in the workspace, a list of names, a directory above it), and no
    /// environment (`/proc/self/environ`, jq's `env`). Each command first runs at level
    /// full, where it does print the key or the environment: that is the old behaviour
    /// of the preset, which ran them unasked.
    fn the_read_only_preset_prints_no_secret_and_no_environment(user) {
        let env = TestEnv::new();
        plant_secrets(&env);
        // The preset is on and reads what is not a secret.
        env.gate()
            .user(user)
            .args(NO_CONFIG)
            .args(["--readonly", "-c", "cat README"])
            .run()
            .assert_code(0)
            .assert_stdout("hello\n");
        let mut cases: Vec<(&[&str], &str, &str)> = vec![
            (&[], "cat notes.txt", KEY_TEXT),
            (&[], "head -c 100 ./notes.txt", KEY_TEXT),
            (&[], "sed -n 1p notes.txt", KEY_TEXT),
            (&[], "grep -h -F -f notes.txt README notes.txt", KEY_TEXT),
            (&[], "cat copy.txt", KEY_TEXT),
            (&[], "grep -r PRIVATE ..", KEY_TEXT),
            (&[], "git blame --contents notes.txt README", KEY_TEXT),
            (&[], "cat /proc/self/environ", API_KEY),
            (&[], "tail -c +1 /proc/self/environ", API_KEY),
            (&[], "grep -a API /proc/self/environ", API_KEY),
            (&[], "wc --files0-from=/proc/self/environ", API_KEY),
            (&[], "sort --files0-from=names", API_KEY),
            // After `cd`, the names of the next part are not what gate resolved.
            (&["--compound", "--allow", "cd"], "cd ../home/.ssh && cat id_rsa", KEY_TEXT),
        ];
        if std::path::Path::new("/usr/bin/jq").exists() {
            cases.push((&[], "jq -n env", API_KEY));
        }
        let problems: Vec<String> = cases
            .iter()
            .filter_map(|(flags, command, secret)| preset_problem(&env, user, flags, command, secret))
            .collect();
        assert!(
            problems.is_empty(),
            "{} of {} got past the preset:\n\n{}",
            problems.len(),
            cases.len(),
            problems.join("\n\n")
        );
    }
}

/// `--readonly-rules` holds a reader's rule to the same: `--allow cat` with it does not
/// print a key through a link, and without it (the control) does.
#[test]
fn a_read_only_rule_reads_no_secret_through_a_link() {
    let env = TestEnv::new();
    plant_secrets(&env);
    let run = |flags: &[&str]| {
        env.gate()
            .args(NO_CONFIG)
            .args(["--no-tty", "--allow", "cat"])
            .args(flags)
            .args(["-c", "cat notes.txt"])
            .run()
    };
    let control = run(&[]);
    control.assert_code(0).assert_stdout_contains(KEY_TEXT);
    let out = run(&["--readonly-rules"]);
    out.assert_refused().assert_stderr_contains("leads to");
    assert!(!out.stdout().contains(KEY_TEXT), "{}", out.report());
}
