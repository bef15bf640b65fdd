//! gate's own command line: help, version, and options that are parsed and validated
//! before anything runs (a bad value is gate's error, 125, and nothing runs).

mod common;

use common::*;

const OPTIONS: &[&str] = &[
    "--level",
    "--allow",
    "--deny",
    "--shell",
    "--config",
    "--no-config",
    "--audit-log",
    "--timeout",
    "--session",
    "--socket",
    "--no-tty",
];

#[test]
fn help_lists_every_option_and_exits_0() {
    let env = TestEnv::new();
    let out = env.gate().arg("--help").run();
    out.assert_code(0).assert_stderr_empty();
    let help = out.stdout();
    for option in OPTIONS {
        assert!(
            help.contains(option),
            "--help does not list {option}\n{help}"
        );
    }
    for word in ["deny", "ask", "safe", "full", "check", "Exit status"] {
        assert!(help.contains(word), "--help does not mention {word}");
    }
}

#[test]
fn help_as_a_word_prints_the_same_help() {
    let env = TestEnv::new();
    let by_option = env.gate().arg("--help").run();
    let by_word = env.gate().arg("help").run();
    by_word.assert_code(0);
    assert_eq!(by_word.stdout, by_option.stdout);
}

#[test]
fn help_wins_over_other_options_and_runs_nothing() {
    let env = TestEnv::new();
    let out = env
        .gate()
        .args(["--no-config", "--level", "full", "--help", "-c", "touch F"])
        .run();
    out.assert_code(0).assert_stdout_contains("--level");
    assert_absent(&env.file("F"), &out);
}

#[test]
fn help_does_not_advertise_short_flags_that_belong_to_the_shell() {
    // Every short option is the real shell's: `gate -h` is not gate's help.
    let env = TestEnv::new();
    let help = env.gate().arg("--help").run().stdout();
    assert!(
        help.contains("--help"),
        "gate --help printed no help: {help:?}"
    );
    for short in ["-h,", "-V,"] {
        assert!(
            !help.lines().any(|l| l.trim_start().starts_with(short)),
            "--help advertises {short} but gate passes it to the shell\n{help}"
        );
    }
}

#[test]
fn version_prints_the_name_and_version() {
    let env = TestEnv::new();
    env.gate()
        .arg("--version")
        .run()
        .assert_code(0)
        .assert_stdout("gate 0.1.0\n")
        .assert_stderr_empty();
}

#[test]
fn options_after_the_command_are_not_gates_help() {
    let env = TestEnv::new();
    env.gate()
        .args(["--no-config", "--audit-log", "off", "--level", "full"])
        .args(["--", "echo", "--help", "--version"])
        .run()
        .assert_code(0)
        .assert_stdout("--help --version\n");
}

#[test]
fn an_unknown_option_is_an_error_that_lists_the_real_ones() {
    let env = TestEnv::new();
    let out = env
        .gate()
        .args(["--no-config", "--levle", "full", "-c", "touch F"])
        .run();
    assert_absent(&env.file("F"), &out);
    out.assert_gate_error()
        .assert_stderr_contains("--levle")
        .assert_stderr_contains("--level");
}

#[test]
fn bad_option_values_are_errors_and_run_nothing() {
    let env = TestEnv::new();
    let long_session = "s".repeat(129);
    let cases: Vec<Vec<&str>> = vec![
        vec!["--timeout", "0"],
        vec!["--timeout", "abc"],
        vec!["--timeout", "-5"],
        vec!["--timeout", "86401"],
        vec!["--timeout", ""],
        vec!["--session", "a b"],
        vec!["--session", "a/b"],
        vec!["--session", ""],
        vec!["--session", &long_session],
        vec!["--socket", ""],
        vec!["--shell", "bash"],
        vec!["--shell", ""],
        vec!["--audit-log", ""],
        vec!["--audit-log", "relative/audit.jsonl"],
        vec!["--socket", "relative.sock"],
        vec!["--level", "bogus"],
        vec!["--level", "FULL"],
        vec!["--no-tty=yes"],
        vec!["--no-config=1"],
    ];
    for case in &cases {
        let out = env
            .gate()
            .args(["--no-config", "--level=full", "--audit-log=off"])
            .args(case)
            .args(["-c", "touch F"])
            .run();
        let option = case[0].split('=').next().unwrap();
        assert_absent(&env.file("F"), &out);
        out.assert_gate_error()
            .assert_stderr_contains(option)
            .assert_stderr_contains("nothing was run");
    }
}

#[test]
fn an_option_given_twice_is_an_error() {
    let env = TestEnv::new();
    let out = env
        .gate()
        .args([
            "--no-config",
            "--level",
            "full",
            "--level",
            "deny",
            "-c",
            "touch F",
        ])
        .run();
    assert_absent(&env.file("F"), &out);
    out.assert_gate_error().assert_stderr_contains("twice");
}

#[test]
fn an_option_without_its_value_is_an_error() {
    let env = TestEnv::new();
    for option in ["--level", "--timeout", "--session", "--socket", "--allow"] {
        env.gate()
            .args(["--no-config", option])
            .run()
            .assert_gate_error()
            .assert_stderr_contains(option);
    }
}

#[test]
fn dash_c_without_a_command_is_an_error() {
    let env = TestEnv::new();
    env.gate()
        .args(["--no-config", "--level", "full", "-c"])
        .run()
        .assert_gate_error();
}

#[test]
fn double_dash_without_a_program_is_an_error() {
    let env = TestEnv::new();
    env.gate()
        .args(["--no-config", "--level", "full", "--"])
        .run()
        .assert_gate_error();
}

#[test]
fn shell_options_cannot_precede_a_program_run_without_a_shell() {
    let env = TestEnv::new();
    let out = env
        .gate()
        .args(["--no-config", "--level", "full", "-e", "--", "touch", "F"])
        .run();
    assert_absent(&env.file("F"), &out);
    out.assert_gate_error();
}

#[test]
fn valid_timeout_session_socket_and_no_tty_are_accepted() {
    let env = TestEnv::new();
    env.gate()
        .args(["--no-config", "--audit-log", "off", "--level", "full"])
        .args(["--timeout", "86400", "--session", "a.b:c@d+e-1"])
        .args(["--socket", "/nonexistent/approver.sock", "--no-tty"])
        .args(["-c", "echo accepted"])
        .run()
        .assert_code(0)
        .assert_stdout("accepted\n")
        .assert_stderr_empty();
    env.gate()
        .args(["--no-config", "--audit-log", "off", "--level", "full"])
        .args(["--timeout", "1"])
        .args(["-c", "echo accepted"])
        .run()
        .assert_code(0);
}

#[test]
fn a_bad_diagnostics_filter_in_gate_log_is_named() {
    let env = TestEnv::new();
    let out = env
        .gate()
        .env("GATE_LOG", "gate=notalevel")
        .args([
            "--no-config",
            "--audit-log",
            "off",
            "--level",
            "full",
            "-c",
            "touch F",
        ])
        .run();
    assert_absent(&env.file("F"), &out);
    out.assert_gate_error().assert_stderr_contains("GATE_LOG");
}
