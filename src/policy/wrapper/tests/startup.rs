//! The agents' start-up calls gate answers itself (Claude Code's snapshot and environment
//! probe, Codex's capture and check).

use super::*;

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
