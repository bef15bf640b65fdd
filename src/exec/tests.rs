use super::*;

#[test]
fn only_the_sandboxed_decisions_are_refused_a_permit() {
    assert!(Permit::for_allowed(&Allowed::Level).is_ok());
    assert!(Permit::for_allowed(&Allowed::RememberedCommand).is_ok());
    assert_eq!(
        Permit::for_allowed(&Allowed::Sandboxed).unwrap_err(),
        PermitError::NeedsSandbox
    );
    // What a person approved at `safe` (an ask rule) stays inside the sandbox.
    let approved = |sandboxed| Allowed::Approved {
        channel: "socket",
        source: None,
        sandboxed,
    };
    assert_eq!(
        Permit::for_allowed(&approved(true)).unwrap_err(),
        PermitError::NeedsSandbox
    );
    assert!(Permit::for_allowed(&approved(false)).is_ok());
}

#[test]
fn login_shells_keep_their_dash() {
    assert_eq!(
        shell_argv0(Path::new("/bin/bash"), OsStr::new("gate")),
        "bash"
    );
    assert_eq!(
        shell_argv0(Path::new("/bin/bash"), OsStr::new("-gate")),
        "-bash"
    );
}

#[test]
fn the_shim_search_skips_relative_entries_and_finds_the_real_shell() {
    let found = shim_shell(
        "sh",
        OsStr::new("sh"),
        Some(OsStr::new(".:bin:/usr/bin:/bin")),
    )
    .unwrap();
    assert!(found.is_absolute());
    assert!(found.ends_with("sh"));
}

#[test]
fn shim_directories_named_twice_on_path_go_both_times() {
    let shims = tempfile::tempdir().unwrap();
    // This test binary stands for gate: /proc/self/exe is what the search compares.
    std::os::unix::fs::symlink(std::env::current_exe().unwrap(), shims.path().join("bash"))
        .unwrap();
    let real = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/bin/sh", real.path().join("sh")).unwrap();
    let (s, r) = (shims.path().display(), real.path().display());
    let path = format!("{s}:{r}:{s}:/nonexistent:{r}");
    assert_eq!(
        without_shim_dirs(OsStr::new(&path)),
        Some(OsString::from(format!("{r}:/nonexistent:{r}")))
    );
    assert_eq!(without_shim_dirs(OsStr::new(&format!("{r}:{r}"))), None);
}

#[test]
fn the_shim_search_skips_argv0s_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/bin/sh", dir.path().join("sh")).unwrap();
    let argv0 = dir.path().join("sh");
    let path = std::env::join_paths([dir.path(), Path::new("/bin")]).unwrap();
    let found = shim_shell("sh", argv0.as_os_str(), Some(&path)).unwrap();
    assert_eq!(found, PathBuf::from("/bin/sh"));
}

#[test]
fn a_missing_shell_is_an_error_that_says_why() {
    let err = shim_shell("no-such-shell-x", OsStr::new("x"), Some(OsStr::new("/bin"))).unwrap_err();
    assert!(err.0.contains("no real no-such-shell-x"), "{err}");
}

#[test]
fn programs_are_found_like_a_shell_finds_them() {
    let dir = tempfile::tempdir().unwrap();
    let locked = dir.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    let plain = dir.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    std::fs::write(plain.join("noexec"), "").unwrap();
    let path =
        std::env::join_paths([locked.as_path(), plain.as_path(), Path::new("/bin")]).unwrap();
    assert_eq!(
        find_program(OsStr::new("sh"), Some(&path)),
        Ok(PathBuf::from("/bin/sh"))
    );
    assert_eq!(
        find_program(OsStr::new("no-such-program-x"), Some(&path)),
        Err(Errno::ENOENT)
    );
    assert_eq!(
        find_program(OsStr::new("noexec"), Some(&path)),
        Err(Errno::EACCES)
    );
    assert_eq!(
        find_program(OsStr::new("./x"), Some(&path)),
        Ok(PathBuf::from("./x"))
    );
    assert_eq!(
        find_program(OsStr::new(""), Some(&path)),
        Err(Errno::ENOENT)
    );
    // Relative entries are never searched.
    assert_eq!(
        find_program(OsStr::new("sh"), Some(OsStr::new(".:bin"))),
        Err(Errno::ENOENT)
    );
}

#[test]
fn a_configured_shell_is_checked_and_the_message_names_where_it_was_set() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::write(&data, "").unwrap();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o644)).unwrap();
    let file = Origin::File {
        path: std::sync::Arc::from(Path::new("/etc/gate/config.toml")),
        line: 4,
    };
    let err = |path: &Path, origin: &Origin| configured_shell(path, origin).unwrap_err().0;
    assert_eq!(
        err(Path::new("/nonexistent/sh"), &Origin::BuiltIn),
        "the shell `/nonexistent/sh` (from the built-in default) does not exist; set \
             --shell, GATE_SHELL or `shell` to a real shell"
    );
    assert_eq!(
        err(dir.path(), &file),
        format!(
            "the shell `{}` (from /etc/gate/config.toml:4) is a directory, not a program",
            dir.path().display()
        )
    );
    assert!(
        err(Path::new("/dev/null"), &Origin::Env("GATE_SHELL"))
            .contains("(from GATE_SHELL) is not a program (not a regular file)")
    );
    // Without any execute bit, not even root may run it.
    assert!(err(&data, &Origin::Flag("--shell")).contains("(from --shell) is not executable"));
    assert_eq!(
        configured_shell(Path::new("/bin/sh"), &Origin::BuiltIn),
        Ok(PathBuf::from("/bin/sh"))
    );
}

#[test]
fn exec_errors_map_to_shell_statuses() {
    let e = |kind, errno| ExecError {
        program: "x".into(),
        kind,
        errno,
        unmarked: None,
        unchecked: None,
        refused: None,
    };
    assert_eq!(e(PlanKind::Program, Errno::ENOENT).exit_status(), 127);
    assert_eq!(
        e(PlanKind::Program, Errno::ENOENT).to_string(),
        "x: command not found"
    );
    assert_eq!(e(PlanKind::Program, Errno::EACCES).exit_status(), 125);
    assert_eq!(e(PlanKind::Shell, Errno::ENOENT).exit_status(), 125);
    assert!(
        e(PlanKind::Shell, Errno::ENOENT)
            .to_string()
            .starts_with("cannot run the shell x")
    );
}
