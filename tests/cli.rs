//! gate's own command line: help, version, and options that are parsed and validated
//! before anything runs (a bad value is gate's error, 125, and nothing runs).

use crate::common;

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

// ---------------------------------------------------------------------------------------
// Subcommands: their own help and errors.

/// gate's own error in exactly one line on stderr, and nothing on stdout.
#[track_caller]
fn assert_one_error_line(out: &Outcome) {
    out.assert_gate_error();
    assert!(
        out.stderr().matches('\n').count() == 1 && out.stdout().is_empty(),
        "one line on stderr and nothing else\n{}",
        out.report()
    );
}

#[test]
fn each_subcommand_prints_its_own_usage_and_options() {
    let env = TestEnv::new();
    let top = env.gate().arg("--help").run().stdout();
    // Each subcommand, what its help must list, and an option of gate's it must not.
    let cases: &[(&str, &[&str], Option<&str>)] = &[
        (
            "check",
            &["--json", "-c <COMMAND>", "PROGRAM", "--level"],
            None,
        ),
        (
            "approve",
            &["<ID>", "--remember", "--remember-rule <RULE>", "--socket"],
            Some("--level"),
        ),
        (
            "deny",
            &["<ID>", "--message <TEXT>", "--socket"],
            Some("--remember"),
        ),
        ("pending", &["--json", "--socket"], Some("--level")),
        (
            "ask",
            &["<QUESTION>", "--option <TEXT>", "--multiple", "--timeout"],
            Some("--allow"),
        ),
        ("serve", &["--socket <PATH>", "--config"], Some("--level")),
        (
            "watch",
            &["--socket <PATH>", "--no-config"],
            Some("--timeout"),
        ),
        (
            "doctor",
            &["--level", "--net", "--json", "Exit status"],
            Some("--remember"),
        ),
        (
            "completions",
            &["<SHELL>", "bash, zsh, fish"],
            Some("--socket"),
        ),
    ];
    for (name, wanted, unwanted) in cases {
        let out = env.gate().args(["--no-config", name, "--help"]).run();
        out.assert_code(0).assert_stderr_empty();
        let help = out.stdout();
        assert!(
            help.contains(&format!("Usage: gate {name}")),
            "gate {name} --help has no usage of its own\n{help}"
        );
        for word in *wanted {
            assert!(
                help.contains(word),
                "gate {name} --help lacks {word}\n{help}"
            );
        }
        if let Some(word) = unwanted {
            assert!(
                !help.contains(word),
                "gate {name} --help lists {word}\n{help}"
            );
        }
        assert!(
            !help.contains("Levels:") && !help.contains("gate [OPTIONS] -- PROGRAM"),
            "gate {name} --help prints gate's whole help\n{help}"
        );
        assert_ne!(help, top);
        // `gate help NAME` is the same text.
        let by_word = env.gate().args(["help", name]).run();
        by_word.assert_code(0);
        assert_eq!(by_word.stdout(), help, "gate help {name}");
    }
}

#[test]
fn gates_help_points_to_the_subcommands_help() {
    let env = TestEnv::new();
    env.gate()
        .arg("--help")
        .run()
        .assert_code(0)
        .assert_stdout_contains("gate SUBCOMMAND --help");
}

#[test]
fn an_option_deny_does_not_take_is_an_error_that_lists_denys_and_contacts_nobody() {
    let env = TestEnv::new();
    let socket = env.root.join("approver.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    listener.set_nonblocking(true).unwrap();
    let out = env
        .gate()
        .args(["--no-config", "deny", "1", "--remember", "--socket"])
        .arg(&socket)
        .run();
    assert_one_error_line(&out);
    out.assert_stderr_contains("unknown option --remember")
        .assert_stderr_contains("--message TEXT")
        .assert_stderr_contains("see gate deny --help");
    assert!(
        listener
            .accept()
            .is_err_and(|e| e.kind() == std::io::ErrorKind::WouldBlock),
        "gate deny connected to the approver socket"
    );
    // After its name, a subcommand takes only the options of gate's that apply to it.
    let out = env
        .gate()
        .args(["--no-config", "approve", "1", "--level", "full"])
        .run();
    assert_one_error_line(&out);
    out.assert_stderr_contains("approve: unknown option --level")
        .assert_stderr_contains("--remember-rule RULE");
    // gate check, parsed by hand, names its options the same way.
    let out = env.gate().args(["check", "--jsn", "-c", "ls"]).run();
    assert_one_error_line(&out);
    out.assert_stderr_contains("check: unknown option --jsn")
        .assert_stderr_contains("--json")
        .assert_stderr_contains("see gate check --help");
}

#[test]
fn a_mistyped_subcommand_says_what_was_meant_and_runs_nothing() {
    let env = TestEnv::new();
    for (word, meant) in [
        ("chek", "`gate check`"),
        ("init", "`gate doctor`"),
        ("aprove", "`gate approve`"),
    ] {
        let out = env
            .gate()
            .args(["--no-config", "--level", "full", "--audit-log", "off"])
            .args([word, "-c", "touch F"])
            .run();
        assert_one_error_line(&out);
        out.assert_stderr_contains(&format!("unknown subcommand `{word}`"))
            .assert_stderr_contains(&format!("did you mean {meant}?"))
            .assert_stderr_contains(&format!("gate ./{word}"));
        assert_absent(&env.file("F"), &out);
    }
}

#[test]
fn a_script_named_like_a_mistyped_subcommand_runs_when_it_exists() {
    let env = TestEnv::new();
    std::fs::write(env.file("chekk"), "echo ran chekk \"$1\"\n").unwrap();
    for script in ["chekk", "./chekk"] {
        env.gate()
            .args(["--no-config", "--level", "full", "--audit-log", "off"])
            .args([script, "arg"])
            .run()
            .assert_code(0)
            .assert_stdout("ran chekk arg\n");
    }
}

#[test]
fn dash_h_alone_explains_itself_and_with_a_command_goes_to_the_shell() {
    let env = TestEnv::new();
    let out = env
        .gate()
        .args(["--no-config", "--level", "full", "--audit-log", "off", "-h"])
        .stdin("touch F\n")
        .run();
    assert_one_error_line(&out);
    out.assert_stderr_contains("gate --help")
        .assert_stderr_contains("hashall");
    assert_absent(&env.file("F"), &out);
    env.gate()
        .args([
            "--no-config",
            "--level",
            "full",
            "--audit-log",
            "off",
            "--shell",
        ])
        .arg(bash())
        .args(["-h", "-c", "case $- in *h*) echo hashall;; esac"])
        .run()
        .assert_code(0)
        .assert_stdout("hashall\n");
}

#[test]
fn an_option_value_that_looks_like_an_option_is_an_error() {
    let env = TestEnv::new();
    for args in [
        &["--allow", "-c", "touch F"][..],
        &["--deny", "--no-tty", "-c", "touch F"],
        &["--write", "-l", "-c", "touch F"],
    ] {
        let out = env
            .gate()
            .args(["--no-config", "--level", "full", "--audit-log", "off"])
            .args(args)
            .run();
        assert_one_error_line(&out);
        out.assert_stderr_contains(&format!("{} needs a value", args[0]))
            .assert_stderr_contains(&format!("write {}={}", args[0], args[1]));
        assert_absent(&env.file("F"), &out);
    }
    // The same in gate check and in the subcommands clap parses.
    let out = env
        .gate()
        .args(["check", "--no-config", "--allow", "-c", "echo hi"])
        .run();
    assert_one_error_line(&out);
    out.assert_stderr_contains("write --allow=-c");
    let out = env
        .gate()
        .args(["--no-config", "deny", "1", "--message", "-x"])
        .run();
    assert_one_error_line(&out);
    out.assert_stderr_contains("write --message=-x");
}

#[test]
fn a_value_that_starts_with_a_dash_is_given_with_equals() {
    let env = TestEnv::new();
    env.gate()
        .args([
            "check",
            "--no-config",
            "--audit-log",
            "off",
            "--allow=-x",
            "--",
            "-x",
            "arg",
        ])
        .run()
        .assert_code(0)
        .assert_stdout_contains("decision: allow")
        .assert_stdout_contains("-x");
    env.gate()
        .args([
            "--no-config",
            "--level",
            "full",
            "--audit-log",
            "off",
            "--deny=-x",
        ])
        .args(["-c", "echo ran"])
        .run()
        .assert_code(0)
        .assert_stdout("ran\n");
}
