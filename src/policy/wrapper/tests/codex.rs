//! Codex's wrappers: the snapshot forms, 0.171's environment save and restore, its
//! lookalikes, and the capture answer.

use super::*;

#[test]
fn codex_snapshot_wrappers_are_recognised() {
    let text = codex("/bin/bash", "echo 'hello'");
    let u = unwrap(&text).unwrap();
    assert_eq!((u.agent, u.template), ("codex", "codex/snapshot"));
    assert_eq!(u.inner, "echo 'hello'");
    assert_eq!(u.bookkeeping.exec_shell, Some("/bin/bash"));
    assert_eq!(u.bookkeeping.sources, Some(CODEX_SNAP));
    assert_eq!(u.bookkeeping.sources_home, Some("/home/alice"));
    // Another program, trailing arguments, or overrides around the source: no.
    assert_eq!(inner(&codex("/tmp/evil", "ls")), None);
    // Any shell path of plain components names a candidate; the run path checks
    // which file it is (a system shell, or gate itself).
    for shell in [
        "/usr/lib/gate/bin/bash",
        "/home/a/.local/lib/gate/bin/zsh",
        "/bin/sh",
    ] {
        assert_eq!(inner(&codex(shell, "ls")).as_deref(), Some("ls"), "{shell}");
    }
    for shell in [
        "bash",
        "/bin/../tmp/bash",
        "/tmp//bash",
        "/bin/bash ",
        "/bin/dash",
        "/bin/bashx",
    ] {
        assert_eq!(inner(&codex(shell, "ls")), None, "{shell}");
    }
    assert_eq!(inner(&format!("{} 'arg0'", codex("/bin/bash", "ls"))), None);
    assert_eq!(inner(&format!("X=1\n\n{}", codex("/bin/bash", "ls"))), None);
}

const CODEX_PATH_DIR: &str =
    "/usr/lib/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/codex-path";

/// Codex 0.171's wrapper with its environment save and restore, built the way the
/// captured one is laid out (fixture codex-0.171-snapshot-env-echo).
fn codex_env(overrides: &[&str], proxies: &[&str], path_dir: Option<&str>, script: &str) -> String {
    let save = |prefix: &str, names: &[&str]| -> Vec<String> {
        names
            .iter()
            .enumerate()
            .map(|(i, n)| format!("{prefix}_SET_{i}=\"${{{n}+x}}\"\n{prefix}_{i}=\"${{{n}-}}\""))
            .collect()
    };
    let mut captures = save(CODEX_OVERRIDE, overrides);
    captures.extend(save(CODEX_PROXY_OVERRIDE, proxies));
    captures.push(CODEX_PROXY_ENV_SET.to_owned());
    let env = CodexEnv {
        overrides: overrides.to_vec(),
        proxies: proxies.to_vec(),
    };
    let path = path_dir
        .map(|d| format!("\nif [ -n \"${{PATH:-}}\" ]; then export PATH='{d}':\"$PATH\"; else export PATH='{d}'; fi"))
        .unwrap_or_default();
    format!(
        "{}\n\nif . '{CODEX_SNAP}' >/dev/null 2>&1; then :; fi\n\n{}{path}\n\nexec '/usr/lib/gate/bin/bash' -c {}",
        captures.join("\n"),
        codex_env_restore(&env),
        claude_quote(script)
    )
}

#[test]
fn codex_0_171_wrapper_with_its_environment_restore_is_recognised() {
    let names = ["CODEX_THREAD_ID", "CODEX_VERSION"];
    let proxies = ["HTTPS_PROXY", "http_proxy"];
    for dir in [Some(CODEX_PATH_DIR), None] {
        let text = codex_env(&names, &proxies, dir, "echo 'hi'");
        let u = unwrap(&text).unwrap_or_else(|| panic!("{text}"));
        assert_eq!(u.template, "codex/snapshot-env");
        assert_eq!(u.inner, "echo 'hi'");
        assert_eq!(u.bookkeeping.sources, Some(CODEX_SNAP));
        assert_eq!(u.bookkeeping.sources_home, Some("/home/alice"));
        assert_eq!(u.bookkeeping.exec_shell, Some("/usr/lib/gate/bin/bash"));
        assert_eq!(u.bookkeeping.path_prepend, dir);
    }
    assert!(unwrap(&codex_env(&[], &[], None, "ls")).is_some());
}

#[test]
fn codex_0_171_wrapper_edited_anywhere_is_judged_whole() {
    let good = codex_env(
        &["CODEX_THREAD_ID"],
        &["HTTPS_PROXY"],
        Some(CODEX_PATH_DIR),
        "ls",
    );
    assert!(unwrap(&good).is_some());
    let edits: Vec<String> = vec![
        // A restore that sets something else than what was saved.
        good.replacen(
            "export CODEX_THREAD_ID=\"${__CODEX_SNAPSHOT_OVERRIDE_0}\"",
            "export CODEX_THREAD_ID=\"evil\"",
            1,
        ),
        good.replacen(
            "else export HTTPS_PROXY; fi",
            "else export HTTPS_PROXY; fi; rm -rf ~",
            1,
        ),
        // A saved name Codex cannot have written, or one of its own temporaries.
        codex_env(&["A-B"], &[], None, "ls"),
        codex_env(&["__CODEX_SNAPSHOT_PROXY_ENV_SET"], &[], None, "ls"),
        codex_env(&["1X"], &[], None, "ls"),
        // Out of order, or a name saved twice under one index.
        good.replacen("_SET_0=", "_SET_1=", 1),
        // A PATH directory that is not Codex's, or not plain.
        good.replace(CODEX_PATH_DIR, "/home/alice/bin"),
        good.replace(CODEX_PATH_DIR, "/home/alice/../x/codex-path"),
        good.replace(CODEX_PATH_DIR, "codex-path"),
        good.replacen(":\"$PATH\"", ":\"$PATH\":/x", 1),
        // No proxy line, extra lines, trailing arguments.
        good.replacen(CODEX_PROXY_ENV_SET, "", 1),
        good.replacen("\n\nif . '", "\nX=1\n\nif . '", 1),
        format!("{good} 'arg'"),
        format!("{good}\n"),
        good.replace(
            CODEX_SNAP,
            &CODEX_SNAP.replace(".1760000000000000000.sh", ".tmp-1"),
        ),
    ];
    for text in &edits {
        assert_ne!(&good, text, "an edit that changed nothing");
        assert_eq!(unwrap(text).map(|u| u.template), None, "{text}");
    }
}

#[test]
fn codex_lookalikes_are_named_but_never_unwrapped() {
    let good = codex_env(&["CODEX_THREAD_ID"], &[], None, "ls");
    let newer = good.replacen("then :; fi", "then true; fi", 1);
    assert!(unwrap(&newer).is_none());
    assert_eq!(resembles(&newer).map(|f| f.name), Some("Codex CLI"));
    let old = codex("/bin/bash", "ls").replace("exec '", "exec  '");
    assert_eq!(resembles(&old).map(|f| f.name), Some("Codex CLI"));
    for other in [
        "ls",
        "if . '/etc/profile'; then :; fi",
        "echo __CODEX_SNAPSHOT_",
    ] {
        assert_eq!(resembles(other).map(|f| f.name), None, "{other}");
    }
}

#[test]
fn codex_capture_answer_has_the_sections_codex_wants_and_its_rewrite_is_known() {
    let sections: Vec<&str> = CODEX_CAPTURE_STUB.split('\0').collect();
    assert_eq!(sections, [SNAPSHOT_STUB, "", "", ""]);
    assert!(CODEX_SNAPSHOT_STUB.starts_with(SNAPSHOT_STUB));
    assert!(CODEX_SNAPSHOT_STUB.lines().all(|l| l.starts_with('#')));
    assert!(is_codex_snapshot_stub(CODEX_SNAPSHOT_STUB.as_bytes()));
    assert!(is_codex_snapshot_stub(SNAPSHOT_STUB.as_bytes()));
    assert!(!is_snapshot_stub(CODEX_SNAPSHOT_STUB.as_bytes()));
    for edited in [
        format!("{CODEX_SNAPSHOT_STUB}declare -x PATH=\"/evil\"\n"),
        CODEX_SNAPSHOT_STUB.replace('\n', "\r\n"),
        CODEX_CAPTURE_STUB.to_owned(),
    ] {
        assert!(!is_codex_snapshot_stub(edited.as_bytes()), "{edited:?}");
    }
}
