use super::*;

fn os(list: &[&str]) -> Vec<OsString> {
    list.iter().map(OsString::from).collect()
}

fn parse_strs(list: &[&str]) -> Result<Invocation, UsageError> {
    parse(os(list), &|_| false)
}

fn run_target(list: &[&str]) -> Target {
    match parse_strs(list).unwrap().action {
        Action::Run(t) => t,
        other => panic!("not a run: {other:?}"),
    }
}

/// The target for `args`; the operands start at the command, or at the script.
fn shell(args: &[&str], work: ShellWork) -> Target {
    let operands_at = match &work {
        ShellWork::Command(c) => args.iter().position(|a| OsStr::new(a) == c).unwrap(),
        ShellWork::Script(operands) => args.len() - operands.len(),
        ShellWork::Session | ShellWork::Info => args.len(),
    };
    Target::Shell {
        args: os(args),
        work,
        operands_at,
    }
}

fn cmd(text: &str) -> ShellWork {
    ShellWork::Command(text.into())
}

#[test]
fn argv0_picks_the_personality() {
    assert_eq!(personality(OsStr::new("gate")), Personality::Gate);
    assert_eq!(personality(OsStr::new("/usr/bin/gate")), Personality::Gate);
    assert_eq!(personality(OsStr::new("gate-dev")), Personality::Gate);
    assert_eq!(
        personality(OsStr::new("/usr/lib/gate/bin/bash")),
        Personality::Shim {
            name: "bash".into()
        }
    );
    assert_eq!(
        personality(OsStr::new("-bash")),
        Personality::Shim {
            name: "bash".into()
        }
    );
    assert_eq!(
        personality(OsStr::new("sh")),
        Personality::Shim { name: "sh".into() }
    );
    assert_eq!(personality(OsStr::new("bash5")), Personality::Gate);
    assert_eq!(personality(OsStr::from_bytes(b"\xff")), Personality::Gate);
}

#[test]
fn dash_c_forms_all_find_the_command() {
    for form in [
        &["gate", "-c", "ls -l"][..],
        &["gate", "-lc", "ls -l"],
        &["gate", "-l", "-c", "ls -l"],
        &["gate", "-c", "-l", "ls -l"],
        &["gate", "--login", "-c", "ls -l"],
        &["gate", "-e", "-c", "ls -l"],
        &["gate", "-o", "pipefail", "-c", "ls -l"],
        &["gate", "-eo", "pipefail", "-c", "ls -l"],
        &["gate", "+O", "extglob", "-c", "ls -l"],
        &["gate", "+c", "ls -l"],
        &["gate", "+ec", "ls -l"],
        &["gate", "-i", "-c", "ls -l"],
        &["gate", "-c", "--", "ls -l"],
        &["gate", "--norc", "--noprofile", "-c", "ls -l"],
        &["gate", "--rcfile", "x", "-c", "ls -l"],
    ] {
        let t = run_target(form);
        let Target::Shell { args, work, .. } = t else {
            panic!()
        };
        assert_eq!(work, cmd("ls -l"), "{form:?}");
        assert_eq!(
            args,
            os(&form[1..]),
            "shell args are passed unchanged: {form:?}"
        );
    }
}

#[test]
fn the_operands_start_after_the_option_section() {
    for (form, at) in [
        (&["gate", "-c", "ls", "-l"][..], 1),
        (&["gate", "-o", "-c", "-lc", "ls"], 3),
        (&["gate", "--rcfile", "-l", "-c", "ls"], 3),
        (&["gate", "-c", "--", "ls", "--"], 2),
        (&["bash", "-", "-x"], 1),
        (&["bash", "-e", "build.sh", "-c"], 1),
        (&["bash", "-l"], 1),
    ] {
        let Target::Shell { operands_at, .. } = run_target(form) else {
            panic!()
        };
        assert_eq!(operands_at, at, "{form:?}");
    }
}

#[test]
fn positional_arguments_follow_the_command_unchanged() {
    assert_eq!(
        run_target(&["gate", "-c", "echo $0 $1", "name", "--level", "-c"]),
        shell(
            &["-c", "echo $0 $1", "name", "--level", "-c"],
            cmd("echo $0 $1")
        )
    );
}

#[test]
fn gate_options_are_taken_out_of_the_shell_args() {
    let inv = parse_strs(&[
        "gate",
        "--level",
        "full",
        "-l",
        "--allow=ls",
        "--allow",
        "git status",
        "-c",
        "ls",
    ])
    .unwrap();
    assert_eq!(inv.gate.level, Some("full".into()));
    assert_eq!(inv.gate.allow, os(&["ls", "git status"]));
    assert_eq!(
        inv.action,
        Action::Run(shell(&["-l", "-c", "ls"], cmd("ls")))
    );
}

#[test]
fn every_gate_option_is_parsed() {
    let inv = parse_strs(&[
        "gate",
        "--level=ask",
        "--allow",
        "a",
        "--deny",
        "b",
        "--shell",
        "/bin/bash",
        "--config",
        "/c",
        "--audit-log",
        "off",
        "--timeout",
        "5",
        "--session",
        "s1",
        "--socket",
        "/s",
        "--no-tty",
        "-c",
        "x",
    ])
    .unwrap();
    let g = inv.gate;
    assert_eq!(g.level, Some("ask".into()));
    assert_eq!(g.allow, os(&["a"]));
    assert_eq!(g.deny, os(&["b"]));
    assert_eq!(g.shell, Some("/bin/bash".into()));
    assert_eq!(g.config, Some("/c".into()));
    assert_eq!(g.audit_log, Some("off".into()));
    assert_eq!(g.timeout, Some("5".into()));
    assert_eq!(g.session, Some("s1".into()));
    assert_eq!(g.socket, Some("/s".into()));
    assert!(g.no_tty);
    assert!(!g.no_config);
    assert!(
        parse_strs(&["gate", "--no-config", "-c", "x"])
            .unwrap()
            .gate
            .no_config
    );
}

#[test]
fn gate_options_after_the_command_belong_to_the_command() {
    let inv = parse_strs(&["gate", "-c", "ls", "--level", "full"]).unwrap();
    assert_eq!(inv.gate.level, None);
}

#[test]
fn a_missing_or_repeated_value_is_an_error() {
    assert!(parse_strs(&["gate", "--level"]).is_err());
    assert!(parse_strs(&["gate", "--level", "ask", "--level", "full", "-c", "x"]).is_err());
    assert!(parse_strs(&["gate", "--no-tty=1", "-c", "x"]).is_err());
    assert!(parse_strs(&["gate", "-c"]).is_err());
    assert!(parse_strs(&["gate", "--"]).is_err());
}

#[test]
fn unknown_long_options_are_refused_in_gate_mode() {
    let err = parse_strs(&["gate", "--levle", "full", "-c", "x"]).unwrap_err();
    assert!(err.0.contains("--levle"), "{err}");
    assert!(err.0.contains("--level"), "{err}");
}

#[test]
fn double_dash_runs_a_program_directly() {
    assert_eq!(
        run_target(&["gate", "--level", "full", "--", "ls", "-l", "--level"]),
        Target::Program {
            argv: os(&["ls", "-l", "--level"])
        }
    );
}

#[test]
fn shell_options_cannot_precede_a_direct_program() {
    assert!(parse_strs(&["gate", "-l", "--", "ls"]).is_err());
}

#[test]
fn no_command_is_a_session() {
    for form in [
        &["gate"][..],
        &["gate", "-l"],
        &["gate", "-i"],
        &["gate", "--login"],
        &["gate", "-s"],
        &["gate", "-s", "arg1", "arg2"],
    ] {
        let Target::Shell { args, work, .. } = run_target(form) else {
            panic!()
        };
        assert_eq!(work, ShellWork::Session, "{form:?}");
        assert_eq!(args, os(&form[1..]));
    }
}

#[test]
fn an_operand_without_dash_c_is_a_script() {
    assert_eq!(
        run_target(&["gate", "-e", "build.sh", "a", "-c"]),
        shell(
            &["-e", "build.sh", "a", "-c"],
            ShellWork::Script(os(&["build.sh", "a", "-c"]))
        )
    );
    assert_eq!(
        run_target(&["gate", "-", "-x"]),
        shell(&["-", "-x"], ShellWork::Script(os(&["-x"])))
    );
}

#[test]
fn shims_parse_like_a_shell_and_know_no_gate_options() {
    let inv = parse_strs(&["bash", "--level", "full", "-c", "x"]).unwrap();
    assert_eq!(inv.gate, GateArgs::default());
    assert_eq!(
        inv.action,
        Action::Run(shell(
            &["--level", "full", "-c", "x"],
            ShellWork::Script(os(&["full", "-c", "x"]))
        ))
    );
    // `--` in a shim ends the options; it does not mean "run a program".
    assert_eq!(
        run_target(&["bash", "-c", "--", "ls"]),
        shell(&["-c", "--", "ls"], cmd("ls"))
    );
    assert_eq!(
        run_target(&["sh", "--", "script.sh"]),
        shell(&["--", "script.sh"], ShellWork::Script(os(&["script.sh"])))
    );
    assert_eq!(
        parse_strs(&["bash", "check", "-c", "x"]).unwrap().action,
        Action::Run(shell(
            &["check", "-c", "x"],
            ShellWork::Script(os(&["check", "-c", "x"]))
        ))
    );
    assert_eq!(
        run_target(&["bash", "--version"]),
        shell(&["--version"], ShellWork::Info)
    );
    assert_eq!(
        run_target(&["/usr/lib/gate/bin/zsh", "--help"]),
        shell(&["--help"], ShellWork::Info)
    );
    // Anything more is a session or a command, judged as usual.
    assert_eq!(
        run_target(&["bash", "--version", "-i"]),
        shell(&["--version", "-i"], ShellWork::Session)
    );
    assert_eq!(
        run_target(&["bash", "--version", "x"]),
        shell(&["--version", "x"], ShellWork::Script(os(&["x"])))
    );
}

#[test]
fn check_takes_gate_options_and_json() {
    let inv = parse_strs(&["gate", "check", "--json", "--allow", "ls", "-c", "ls -l"]).unwrap();
    assert_eq!(inv.gate.allow, os(&["ls"]));
    assert_eq!(
        inv.action,
        Action::Check {
            target: shell(&["-c", "ls -l"], cmd("ls -l")),
            json: true
        }
    );
    let inv = parse_strs(&["gate", "check", "--", "git", "status"]).unwrap();
    assert_eq!(
        inv.action,
        Action::Check {
            target: Target::Program {
                argv: os(&["git", "status"])
            },
            json: false
        }
    );
    let inv = parse_strs(&[
        "gate",
        "--no-config",
        "--level=full",
        "--allow",
        "ls",
        "check",
        "-c",
        "ls",
    ])
    .unwrap();
    assert!(inv.gate.no_config);
    assert_eq!(inv.gate.allow, os(&["ls"]));
    assert!(matches!(inv.action, Action::Check { .. }));
    // After a shell option, `check` is a script name as it would be for a shell.
    assert!(matches!(
        parse_strs(&["gate", "-e", "check"]).unwrap().action,
        Action::Run(_)
    ));
    assert!(parse_strs(&["gate", "check"]).is_err());
    assert_eq!(
        parse_strs(&["gate", "doctor"]).unwrap().action,
        Action::Doctor { json: false }
    );
    assert_eq!(
        parse_strs(&["gate", "doctor", "--json"]).unwrap().action,
        Action::Doctor { json: true }
    );
    let inv = parse_strs(&["gate", "--no-config", "doctor", "--net"]).unwrap();
    assert_eq!(inv.action, Action::Doctor { json: false });
    assert!(inv.gate.net && inv.gate.no_config);
    assert!(parse_strs(&["gate", "doctor", "-c", "ls"]).is_err());
    assert!(parse_strs(&["gate", "check", "script.sh"]).is_err());
    assert!(parse_strs(&["gate", "--json", "-c", "x"]).is_err());
}

#[test]
fn rules_is_a_subcommand_and_a_script_of_that_name_runs_as_dot_slash_rules() {
    assert_eq!(
        parse_strs(&["gate", "rules"]).unwrap().action,
        Action::Rules { json: false }
    );
    let inv = parse_strs(&[
        "gate",
        "--no-config",
        "rules",
        "--json",
        "--ask",
        "git push",
    ])
    .unwrap();
    assert_eq!(inv.action, Action::Rules { json: true });
    assert!(inv.gate.no_config);
    assert_eq!(inv.gate.ask, os(&["git push"]));
    assert!(parse_strs(&["gate", "rules", "-c", "ls"]).is_err());
    // A candidate system layer, as for doctor.
    let inv = parse_strs(&["gate", "rules", "--system-file", "cand.toml"]).unwrap();
    assert_eq!(inv.action, Action::Rules { json: false });
    assert_eq!(inv.gate.system_file, Some("cand.toml".into()));
    assert!(parse_strs(&["gate", "rules", "extra"]).is_err());
    // As for a shell: `./rules`, after a shell option, or under a shell's name.
    for argv in [
        &["gate", "./rules"][..],
        &["gate", "-e", "rules"],
        &["bash", "rules"],
    ] {
        assert!(
            matches!(
                parse_strs(argv).unwrap().action,
                Action::Run(Target::Shell {
                    work: ShellWork::Script(_),
                    ..
                })
            ),
            "{argv:?}"
        );
    }
}

#[test]
fn help_and_version() {
    let help = Action::Help { subcommand: None };
    assert_eq!(parse_strs(&["gate", "--help"]).unwrap().action, help);
    assert_eq!(parse_strs(&["gate", "help"]).unwrap().action, help);
    assert_eq!(
        parse_strs(&["gate", "--version"]).unwrap().action,
        Action::Version
    );
    assert_eq!(parse_strs(&["gate", "--help", "-c"]).unwrap().action, help);
    // After the command they are the command's.
    assert!(matches!(
        parse_strs(&["gate", "-c", "x", "--help"]).unwrap().action,
        Action::Run(_)
    ));
    assert!(matches!(
        parse_strs(&["gate", "--", "ls", "--help"]).unwrap().action,
        Action::Run(_)
    ));
}

#[test]
fn each_subcommand_has_its_own_help() {
    for (argv, name) in [
        (&["gate", "check", "--help"][..], "check"),
        (&["gate", "check", "--help", "-c", "x"], "check"),
        (&["gate", "--no-config", "approve", "--help"], "approve"),
        (&["gate", "deny", "1", "--help"], "deny"),
        (&["gate", "doctor", "--help"], "doctor"),
        (&["gate", "completions", "--help"], "completions"),
        (&["gate", "help", "pending"], "pending"),
        (&["gate", "--no-config", "help", "ask"], "ask"),
    ] {
        assert_eq!(
            parse_strs(argv).unwrap().action,
            Action::Help {
                subcommand: Some(name)
            },
            "{argv:?}"
        );
    }
    assert!(parse_strs(&["gate", "help", "chek"]).is_err());
    assert!(parse_strs(&["gate", "help", "check", "deny"]).is_err());
}

#[test]
fn subcommands_take_gates_options_before_their_name_and_theirs_after() {
    let inv = parse_strs(&[
        "gate",
        "--level=full",
        "--net",
        "approve",
        "7",
        "--remember",
    ])
    .unwrap();
    assert_eq!(inv.gate.level, Some("full".into()));
    assert!(inv.gate.net);
    assert_eq!(
        inv.action,
        Action::Approve {
            id: "7".into(),
            remember: true,
            remember_rule: None,
            always: false,
            always_rule: None,
        }
    );
    let inv = parse_strs(&["gate", "deny", "7", "--socket", "/s", "--message=-x"]).unwrap();
    assert_eq!(inv.gate.socket, Some("/s".into()));
    assert_eq!(
        inv.action,
        Action::Refuse {
            id: "7".into(),
            message: Some("-x".into())
        }
    );
    // After the name, only the options that apply.
    let err = parse_strs(&["gate", "approve", "7", "--level", "full"]).unwrap_err();
    assert!(err.0.contains("approve: unknown option --level"), "{err}");
    let err = parse_strs(&["gate", "deny", "1", "--remember"]).unwrap_err();
    assert!(err.0.contains("--message TEXT"), "{err}");
    let err = parse_strs(&["gate", "--socket=/a", "pending", "--socket", "/b"]).unwrap_err();
    assert!(err.0.contains("--socket was given twice"), "{err}");
    assert_eq!(
        parse_strs(&[
            "gate", "ask", "q?", "--option", "a", "--option", "b", "--level", "ask"
        ])
        .unwrap()
        .action,
        Action::Ask {
            question: "q?".into(),
            options: vec!["a".into(), "b".into()],
            multiple: false
        }
    );
    assert_eq!(
        parse_strs(&["gate", "completions", "zsh"]).unwrap().action,
        Action::Completions {
            shell: "zsh".into()
        }
    );
    assert!(parse_strs(&["gate", "serve", "x"]).is_err());
    assert!(parse_strs(&["gate", "ask", " "]).is_err());
}

#[test]
fn a_mistyped_subcommand_is_an_error_unless_a_file_has_that_name() {
    let err = parse_strs(&["gate", "chek", "-c", "x"]).unwrap_err();
    assert!(err.0.contains("unknown subcommand `chek`"), "{err}");
    assert!(err.0.contains("`gate check`"), "{err}");
    assert!(err.0.contains("gate ./chek"), "{err}");
    assert!(parse_strs(&["gate", "--no-config", "init"]).is_err());
    // The option before the word is reported first.
    let err = parse_strs(&["gate", "--levle", "chek"]).unwrap_err();
    assert!(err.0.contains("--levle"), "{err}");
    // A file of that name is a script, as for a shell.
    let chek_exists = |name: &OsStr| name == "chek";
    assert_eq!(
        parse(os(&["gate", "chek", "a"]), &chek_exists)
            .unwrap()
            .action,
        Action::Run(shell(&["chek", "a"], ShellWork::Script(os(&["chek", "a"]))))
    );
    // Other words, paths and words after a shell option are scripts unasked.
    for argv in [
        &["gate", "build.sh"][..],
        &["gate", "./chek"],
        &["gate", "-e", "chek"],
        &["gate", "deploy"],
    ] {
        assert!(
            matches!(parse_strs(argv).unwrap().action, Action::Run(_)),
            "{argv:?}"
        );
    }
    // A shim knows no subcommands.
    assert!(matches!(
        parse_strs(&["bash", "chek"]).unwrap().action,
        Action::Run(_)
    ));
}

#[test]
fn dash_h_alone_is_explained_and_with_more_goes_to_the_shell() {
    let err = parse_strs(&["gate", "-h"]).unwrap_err();
    assert!(err.0.contains("gate --help"), "{err}");
    assert!(parse_strs(&["gate", "--no-config", "-h"]).is_err());
    assert_eq!(
        run_target(&["gate", "-h", "-c", "ls"]),
        shell(&["-h", "-c", "ls"], cmd("ls"))
    );
    assert_eq!(
        run_target(&["gate", "-h", "-i"]),
        shell(&["-h", "-i"], ShellWork::Session)
    );
    assert_eq!(
        run_target(&["bash", "-h"]),
        shell(&["-h"], ShellWork::Session)
    );
}

#[test]
fn a_value_that_looks_like_an_option_is_an_error() {
    for argv in [
        &["gate", "--allow", "-c", "echo hi"][..],
        &["gate", "--deny", "--level", "full", "-c", "x"],
        &["gate", "--shell", "-l", "-c", "x"],
        &["gate", "--timeout", "-5", "-c", "x"],
        &["gate", "--level", "-", "-c", "x"],
        &["gate", "check", "--allow", "-c", "x"],
        &["gate", "--allow", "-c", "check", "-c", "x"],
        &["gate", "--socket", "--no-config", "pending"],
    ] {
        let err = parse_strs(argv).unwrap_err();
        assert!(err.0.contains("looks like an option"), "{argv:?}: {err}");
        assert!(err.0.contains("write --"), "{argv:?}: {err}");
    }
    let inv = parse_strs(&["gate", "--allow=-c", "--deny=--x", "-c", "echo hi"]).unwrap();
    assert_eq!(inv.gate.allow, os(&["-c"]));
    assert_eq!(inv.gate.deny, os(&["--x"]));
    assert_eq!(
        inv.action,
        Action::Run(shell(&["-c", "echo hi"], cmd("echo hi")))
    );
}

#[test]
fn non_utf8_arguments_do_not_panic() {
    let argv = vec![
        OsString::from("gate"),
        OsString::from("-c"),
        OsString::from_vec(vec![b'l', b's', 0xff]),
        OsString::from_vec(vec![0xfe]),
    ];
    let inv = parse(argv, &|_| false).unwrap();
    assert!(matches!(inv.action, Action::Run(_)));
    let argv = vec![
        OsString::from("gate"),
        OsString::from_vec(b"--\xff".to_vec()),
    ];
    assert!(parse(argv, &|_| false).is_err());
    let argv = vec![
        OsString::from("gate"),
        OsString::from("deny"),
        OsString::from_vec(b"\xff".to_vec()),
    ];
    assert!(parse(argv, &|_| false).is_err());
}

use std::os::unix::ffi::OsStringExt;

#[test]
fn only_check_and_doctor_take_a_candidate_system_layer() {
    let inv = parse_strs(&[
        "gate",
        "check",
        "--system-file",
        "cand.toml",
        "--system-drop-ins=cand.d",
        "-c",
        "ls",
    ])
    .unwrap();
    assert_eq!(inv.gate.system_file, Some("cand.toml".into()));
    assert_eq!(inv.gate.system_drop_ins, Some("cand.d".into()));
    assert!(matches!(inv.action, Action::Check { .. }));
    let inv = parse_strs(&["gate", "doctor", "--system-file=cand.toml"]).unwrap();
    assert_eq!(inv.gate.system_file, Some("cand.toml".into()));
    assert_eq!(inv.action, Action::Doctor { json: false });
    let twice = parse_strs(&["gate", "doctor", "--system-file", "a", "--system-file", "b"]);
    assert!(twice.is_err());
    let missing = parse_strs(&["gate", "check", "--system-file"]);
    assert!(missing.is_err());
    // After -c COMMAND it is an operand of the shell's, as for any option.
    let operand = parse_strs(&["gate", "check", "-c", "ls", "--system-file"]).unwrap();
    assert_eq!(operand.gate.system_file, None);
    // A run, before a subcommand or as a shim, never takes one.
    for argv in [
        &["gate", "--system-file", "x", "-c", "ls"][..],
        &["gate", "--system-file", "x", "check", "-c", "ls"],
        &["gate", "serve", "--system-file", "x"],
        &["gate", "watch", "--system-file", "x"],
    ] {
        assert!(parse_strs(argv).is_err(), "{argv:?}");
    }
    let shim = parse_strs(&["bash", "--system-file", "x", "-c", "ls"]).unwrap();
    assert_eq!(shim.gate.system_file, None);
}
