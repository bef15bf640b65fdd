//! Gemini CLI's wrappers: its groups, its lines and temporary files since 0.37, and the
//! forgeries of them that must be judged whole.

use super::*;

#[test]
fn gemini_cli_groups_are_recognised() {
    let text = gemini("ps aux | grep x");
    let u = unwrap(&text).unwrap();
    assert_eq!(
        (u.agent, u.template),
        ("gemini-cli", "gemini-cli/shopt-guard")
    );
    assert_eq!(u.inner, "ps aux | grep x");
    assert_eq!(u.bookkeeping.writes, Some(PGREP));
    assert_eq!(u.bookkeeping.sources, None);
    assert_eq!(
        inner(&gemini("npm run dev &")).as_deref(),
        Some("npm run dev &")
    );
    let plain = format!("{{ ls; }}; __code=$?; pgrep -g 0 >{PGREP} 2>&1; exit $__code;");
    assert_eq!(unwrap(&plain).unwrap().template, "gemini-cli/plain");
    // Gemini CLI trims the command and adds `;` unless it ends with `&`.
    for body in [" ls;", "ls ;", "ls", "ls &;", ";", "\u{a0}ls;", "ls\n;"] {
        let text = format!("{{ {body} }}; __code=$?; pgrep -g 0 >{PGREP} 2>&1; exit $__code;");
        assert_eq!(inner(&text), None, "{body:?}");
    }
}

#[test]
fn every_gemini_cli_family_since_0_37_is_recognised() {
    let command = "cat <<'EOF'\nline one\nEOF";
    let cases = [
        (
            gemini_trap(command, GEMINI_DIR, false),
            "gemini-cli/subshell-trap",
            "bgpids.tmp",
        ),
        (
            gemini_trap(command, GEMINI_DIR, true),
            "gemini-cli/subshell-trap",
            "bgpids.tmp",
        ),
        (
            gemini_user(command, GEMINI_DIR),
            "gemini-cli/user-shell",
            "pwd.tmp",
        ),
        (
            gemini_pgrep_dir(command, GEMINI_DIR),
            "gemini-cli/subshell-pgrep-dir",
            "pgrep.tmp",
        ),
    ];
    for (text, template, file) in cases {
        let u = unwrap(&text).unwrap_or_else(|| panic!("{text:?}"));
        assert_eq!(
            (u.agent, u.template, &*u.inner),
            ("gemini-cli", template, command)
        );
        assert_eq!(u.bookkeeping.temp_dir, Some(GEMINI_DIR));
        assert_eq!(u.bookkeeping.writes, Some(&*format!("{GEMINI_DIR}/{file}")));
        assert_eq!(u.bookkeeping.sources, None);
    }
    let old = gemini_pgrep_037(command);
    let u = unwrap(&old).unwrap();
    assert_eq!(
        (u.template, &*u.inner),
        ("gemini-cli/subshell-pgrep", command)
    );
    assert_eq!(
        (u.bookkeeping.writes, u.bookkeeping.temp_dir),
        (Some(PGREP), None)
    );
    // Another temporary directory (TMPDIR) is a shape the run path checks.
    let elsewhere = gemini_trap("ls", "/var/tmp/x/gemini-shell-Ab3dE9", false);
    let u = unwrap(&elsewhere).unwrap();
    assert_eq!(
        u.bookkeeping.temp_dir,
        Some("/var/tmp/x/gemini-shell-Ab3dE9")
    );
    // A final backslash gets a space from Gemini CLI, and the shell runs it.
    assert_eq!(
        inner(&gemini_trap("echo a \\", GEMINI_DIR, false)).as_deref(),
        Some("echo a \\ ")
    );
    assert_eq!(
        inner(&gemini_trap("ls # note", GEMINI_DIR, false)).as_deref(),
        Some("ls # note")
    );
}

#[test]
fn gemini_cli_lines_must_be_what_gemini_cli_writes() {
    let build = |body: &str| {
        format!(
            "{GUARD}_bgpids_file={GEMINI_DIR}/bgpids.tmp\n(\n  trap 'jobs -p > \"$_bgpids_file\"' EXIT\n{body}\n)\n__code=$?\nexit $__code"
        )
    };
    assert_eq!(inner(&build("ls")).as_deref(), Some("ls"));
    for body in [
        "", " ls", "ls ", "\nls", "ls\n", "ls \\", "ls  ", "a \\  ", "\u{a0}ls", "ls\t",
    ] {
        assert_eq!(inner(&build(body)), None, "{body:?}");
    }
}

#[test]
fn gemini_cli_temporary_files_have_their_own_narrow_shape() {
    let real = gemini_trap("ls", GEMINI_DIR, false);
    assert!(unwrap(&real).is_some());
    for dir in [
        "/tmp/gemini-shell-dERLe",
        "/tmp/gemini-shell-dERLenn",
        "/tmp/gemini-shell-dER_en",
        "/tmp/gemini-shel-dERLen",
        "tmp/gemini-shell-dERLen",
        "/tmp/../home/a/gemini-shell-dERLen",
        "/tmp/./gemini-shell-dERLen",
        "/tmp//gemini-shell-dERLen",
        "/gemini-shell-dERLen",
        "'/tmp/gemini-shell-dERLen'",
    ] {
        assert_eq!(inner(&real.replace(GEMINI_DIR, dir)), None, "{dir}");
    }
    for (what, text) in [
        ("another file", real.replace("bgpids.tmp", "pgrep.tmp")),
        (
            "file in a subdirectory",
            real.replace("/bgpids.tmp", "/x/bgpids.tmp"),
        ),
        (
            "pwd file of the user form",
            gemini_user("ls", GEMINI_DIR).replace("pwd.tmp", "bgpids.tmp"),
        ),
        (
            "pgrep file elsewhere",
            gemini_pgrep_dir("ls", GEMINI_DIR).replace(GEMINI_DIR, "/home/alice"),
        ),
    ] {
        assert_eq!(inner(&text), None, "{what}: {text:?}");
    }
}

#[test]
fn gemini_cli_forgeries_of_the_new_forms_are_not_wrappers() {
    let real = gemini_trap("ls", GEMINI_DIR, false);
    let user = gemini_user("ls", GEMINI_DIR);
    for (what, text) in [
        ("command after exit", format!("{real}\nrm -rf ~")),
        ("command after exit, same line", format!("{real}; rm -rf ~")),
        ("exit edited", real.replace("exit $__code", "exit 0")),
        ("trap edited", real.replace("jobs -p", "rm -rf ~")),
        (
            "trap target edited",
            real.replace("\"$_bgpids_file\"", "~/.bashrc"),
        ),
        (
            "assignment edited",
            real.replace("_bgpids_file=/", "_bgpids_file=~/"),
        ),
        ("guard dropped", real.replacen(GUARD, "", 1)),
        (
            "another guard",
            real.replacen("trap '' HUP; ", "", 1).replacen(
                "shopt",
                "trap 'rm -rf ~' HUP; shopt",
                1,
            ),
        ),
        (
            "HUP guard twice",
            format!("trap '' HUP; trap '' HUP; {real}"),
        ),
        (
            "HUP guard after shopt",
            real.replacen(GUARD, &format!("{GUARD}trap '' HUP; "), 1),
        ),
        ("no newline before )", real.replace("\n)\n", ")\n")),
        ("subshell made a group", real.replace("\n(\n", "\n{\n")),
        ("trailing newline", format!("{real}\n")),
        ("leading space", format!(" {real}")),
        ("user form, command after", format!("{user}; rm -rf ~")),
        (
            "user form, pwd target",
            user.replace("/pwd.tmp", "/../.bashrc"),
        ),
        ("user form, >| ", user.replace("pwd > ", "pwd >| ")),
        ("NUL", real.replace("ls", "l\0s")),
    ] {
        assert_eq!(inner(&text), None, "{what}: {text:?}");
    }
}
