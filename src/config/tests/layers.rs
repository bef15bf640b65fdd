//! The variables and the options read into their layers, and the errors that name them.

use super::*;

#[test]
fn environment_variables_are_parsed_and_named_in_errors() {
    let env = env_of(&[
        ("GATE_LEVEL", "full"),
        ("GATE_TIMEOUT", "7"),
        ("GATE_SESSION", "abc-1"),
        ("GATE_AUDIT_LOG", "off"),
    ]);
    let l = env_layer(&env).unwrap();
    assert_eq!(l.level.unwrap(), (Level::Full, Origin::Env("GATE_LEVEL")));
    assert_eq!(l.timeout.unwrap().0, 7);
    assert_eq!(l.session.unwrap().0, "abc-1");
    assert_eq!(l.audit_log.unwrap().0, AuditLog::Off);
    for (var, value, expect) in [
        ("GATE_LEVEL", "FULL", "GATE_LEVEL: `FULL` is not a level"),
        (
            "GATE_TIMEOUT",
            "soon",
            "GATE_TIMEOUT: `soon` is not a number",
        ),
        (
            "GATE_TIMEOUT",
            "0",
            "GATE_TIMEOUT: the timeout must be between",
        ),
        (
            "GATE_SESSION",
            "a b",
            "GATE_SESSION: `a b` is not a session id",
        ),
        (
            "GATE_SHELL",
            "bash",
            "GATE_SHELL: `bash` must be an absolute path",
        ),
        (
            "GATE_AUDIT_LOG",
            "log.jsonl",
            "GATE_AUDIT_LOG: `log.jsonl` must be an absolute path",
        ),
        (
            "GATE_SOCKET",
            "s.sock",
            "GATE_SOCKET: `s.sock` must be an absolute path",
        ),
    ] {
        let e = env_layer(&env_of(&[(var, value)])).unwrap_err().to_string();
        assert!(e.starts_with(expect), "{e}");
    }
    // Empty means unset.
    assert!(
        env_layer(&env_of(&[("GATE_LEVEL", "")]))
            .unwrap()
            .level
            .is_none()
    );
}

#[test]
fn flags_are_parsed_and_named_in_errors() {
    let args = GateArgs {
        level: Some("deny".into()),
        allow: vec!["ls".into()],
        no_tty: true,
        ..GateArgs::default()
    };
    let l = flag_layer(&args).unwrap();
    assert_eq!(l.level.unwrap(), (Level::Deny, flag("--level")));
    assert_eq!(
        l.allow.iter().collect::<Vec<_>>(),
        vec![("ls", flag("--allow"))]
    );
    assert!(!l.tty.unwrap().0);
    let bad = GateArgs {
        allow: vec!["ls | sh".into()],
        ..GateArgs::default()
    };
    let e = flag_layer(&bad).unwrap_err().to_string();
    assert!(
        e.starts_with("--allow: `ls | sh`: a rule cannot contain the shell character '|'"),
        "{e}"
    );
    let bad = GateArgs {
        timeout: Some("-3".into()),
        ..GateArgs::default()
    };
    assert!(
        flag_layer(&bad)
            .unwrap_err()
            .to_string()
            .starts_with("--timeout: ")
    );
}
