use super::*;

/// gate as a person's interactive shell starts it: a job (pid 500 leads group 500,
/// the foreground) in the shell's session (400), on /dev/pts/3.
fn a_job() -> Process {
    Process {
        pid: 500,
        pgrp: 500,
        foreground: 500,
        session: 400,
        no_new_privs: false,
        device: Device::Pts(3),
    }
}

fn server(name: &str) -> Holder {
    Holder {
        pid: 100,
        name: name.into(),
        has_terminal: false,
        no_new_privs: false,
    }
}

#[test]
fn a_job_of_a_persons_shell_on_a_terminal_server_is_asked() {
    for holders in [
        vec![server("tmux: server")],
        vec![server("sshd"), server("sshd")],
        vec![server("gnome-terminal-")],
        // Holders gate may not look into (another user's) are passed over.
        vec![],
    ] {
        assert_eq!(judge(&a_job(), &holders), Ok(()), "{holders:?}");
    }
    let console = Process {
        device: Device::Line,
        ..a_job()
    };
    assert_eq!(judge(&console, &[]), Ok(()));
}

#[test]
fn each_shape_an_agent_gives_gate_is_refused_for_its_reason() {
    let cases: Vec<(&str, Process, Vec<Holder>, Distrust)> = vec![
        (
            "a background job",
            Process {
                foreground: 600,
                ..a_job()
            },
            vec![server("tmux: server")],
            Distrust::Background,
        ),
        (
            "Claude Code's start-up call: a child in the agent's group, the foreground",
            Process {
                pgrp: 450,
                foreground: 450,
                ..a_job()
            },
            vec![server("tmux: server")],
            Distrust::NotAJob,
        ),
        (
            "node-pty, Codex, pexpect: gate leads the session the agent made",
            Process {
                session: 500,
                ..a_job()
            },
            vec![],
            Distrust::SessionLeader,
        ),
        (
            "a descendant of a command gate ran",
            Process {
                no_new_privs: true,
                ..a_job()
            },
            vec![server("tmux: server")],
            Distrust::NoNewPrivs,
        ),
        (
            "a BSD pseudo-terminal",
            Process {
                device: Device::BsdPty,
                ..a_job()
            },
            vec![],
            Distrust::BsdPty,
        ),
    ];
    for (shape, process, holders, why) in cases {
        assert_eq!(judge(&process, &holders), Err(why), "{shape}");
    }
}

#[test]
fn a_holder_with_a_terminal_or_no_new_privs_is_refused() {
    let agent = Holder {
        pid: 42,
        name: "codex".into(),
        has_terminal: true,
        no_new_privs: false,
    };
    let command = Holder {
        pid: 43,
        name: "script".into(),
        has_terminal: false,
        no_new_privs: true,
    };
    assert_eq!(
        judge(&a_job(), &[server("tmux: server"), agent.clone()]),
        Err(Distrust::Relayed(agent.clone()))
    );
    assert_eq!(
        judge(&a_job(), &[command.clone(), server("tmux: server")]),
        Err(Distrust::HeldByACommand(command))
    );
    // A terminal that is not a pseudo-terminal has no holders to judge.
    let console = Process {
        device: Device::Line,
        ..a_job()
    };
    assert_eq!(judge(&console, &[agent]), Ok(()));
}

#[test]
fn the_checks_come_in_order() {
    // A session leader in the background is a background job first.
    let p = Process {
        foreground: 1,
        session: 500,
        no_new_privs: true,
        ..a_job()
    };
    assert_eq!(judge_process(&p), Err(Distrust::Background));
    let p = Process {
        session: 500,
        no_new_privs: true,
        ..a_job()
    };
    assert_eq!(judge_process(&p), Err(Distrust::SessionLeader));
}

#[test]
fn the_reasons_say_what_shares_the_terminal() {
    let relayed = Distrust::Relayed(Holder {
        pid: 42,
        name: "no\x1bde".into(),
        has_terminal: true,
        no_new_privs: false,
    });
    assert_eq!(
        relayed.to_string(),
        "the terminal's other end is held by process 42 (no\\u{1b}de), which runs on a \
         terminal of its own: a program relays this terminal, as an agent does that runs \
         commands on a terminal it made"
    );
    assert!(
        Distrust::SessionLeader
            .to_string()
            .starts_with("gate leads the terminal's session")
    );
    assert!(Distrust::Background.to_string().contains("foreground"));
}

#[test]
fn device_numbers_name_the_kind_of_terminal() {
    // /dev/pts/0 and /dev/pts/300 (minor bits above 0xff move up by 12).
    assert_eq!(Device::of_tty_nr(136 << 8), Some(Device::Pts(0)));
    let pts300 = (136 << 8) | (300 & 0xff) | ((300 & !0xff) << 12);
    assert_eq!(Device::of_tty_nr(pts300), Some(Device::Pts(300)));
    // The next major holds the indexes from 2^20.
    assert_eq!(
        Device::of_tty_nr((137 << 8) | 5),
        Some(Device::Pts((1 << 20) | 5))
    );
    assert_eq!(Device::of_tty_nr(3 << 8), Some(Device::BsdPty));
    // /dev/tty1, /dev/ttyS0.
    assert_eq!(Device::of_tty_nr((4 << 8) | 1), Some(Device::Line));
    assert_eq!(Device::of_tty_nr((4 << 8) | 64), Some(Device::Line));
    assert_eq!(Device::of_tty_nr(0), None);
}

#[test]
fn proc_files_parse() {
    let stat = "1234 (tmux: server) S 1 1234 1234 0 -1 4194560 1 0 0";
    assert_eq!(
        parse_stat(stat),
        Some(Stat {
            name: "tmux: server".into(),
            tty_nr: 0
        })
    );
    // A name with spaces and parentheses of its own.
    let stat = "77 (a) b (c) S 1 77 77 34816 77 0";
    assert_eq!(
        parse_stat(stat),
        Some(Stat {
            name: "a) b (c".into(),
            tty_nr: 34816
        })
    );
    assert_eq!(parse_stat("77 (x"), None);
    assert_eq!(parse_stat("77 (x) S 1 2"), None);

    let status = "Name:\tbash\nUid:\t0\t0\t0\t0\nNoNewPrivs:\t1\nSeccomp:\t0\n";
    assert_eq!(parse_no_new_privs(status), Some(true));
    assert_eq!(parse_no_new_privs("NoNewPrivs:\t0\n"), Some(false));
    assert_eq!(parse_no_new_privs("NoNewPrivs:\t2\n"), None);
    assert_eq!(parse_no_new_privs("Name:\tbash\n"), None);

    let fdinfo = "pos:\t0\nflags:\t0104002\nmnt_id:\t24\nino:\t91\ntty-index:\t7\n";
    assert_eq!(parse_tty_index(fdinfo), Some(7));
    assert_eq!(parse_tty_index("pos:\t0\n"), None);
}
