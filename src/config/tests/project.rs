//! A project's file: it may tighten, it may loosen only once trusted, and what trust grants.

use super::*;

#[test]
fn a_project_file_cannot_lock() {
    let e = parse_file(
        Path::new("/src/repo/.gate.toml"),
        "lock = true\n",
        FileKind::Project,
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("/src/repo/.gate.toml:1: key `lock`: a project file cannot lock"),
        "{e}"
    );
}

#[test]
fn an_untrusted_project_file_may_tighten() {
    let user = user_file("level = \"full\"\nallow = [\"git status\"]\n").unwrap();
    let project = project_file(
        "level = \"ask\"\ndeny = [\"git push\"]\nask = [\"npm publish\"]\n\
             readonly_rules = true\n[sandbox]\ndeny_read = [\"~/secrets\"]\n\
             [approval]\ntimeout = 10\n",
        false,
    );
    let s = merge(vec![user, project], vec![]).unwrap();
    assert_eq!(s.policy.level, Level::Ask);
    assert_eq!(s.policy.deny.len(), 1);
    assert_eq!(s.policy.ask.len(), 1);
    assert_eq!(s.policy.allow.len(), 1, "the user's own rule stays");
    assert!(s.policy.readonly_rules);
    assert_eq!(s.timeout, 10);
    assert_eq!(s.sandbox.deny_read, vec![PathBuf::from("/home/u/secrets")]);
}

#[test]
fn an_untrusted_project_file_that_loosens_is_refused_naming_file_key_and_gate_trust() {
    for (text, key) in [
        ("allow = [\"git push\"]\n", "allow"),
        (
            "allow = [{ rule = \"git status\", exact = true }]\n",
            "allow",
        ),
        ("unsandboxed = [\"git push\"]\n", "unsandboxed"),
        ("level = \"full\"\n", "level"),
        ("level = \"safe\"\n", "level"),
        ("shell = \"/tmp/evil\"\n", "shell"),
        ("readonly = true\n", "readonly"),
        ("compound = true\n", "compound"),
        ("[audit]\nlog = \"off\"\n", "audit.log"),
        ("[audit]\njournal = \"on\"\n", "audit.journal"),
        ("[approval]\nsocket = \"/tmp/s\"\n", "approval.socket"),
        ("[approval]\ntty = true\n", "approval.tty"),
        ("[approval]\ntimeout = 600\n", "approval.timeout"),
        ("[sandbox]\nwrite = [\"/\"]\n", "sandbox.write"),
        ("[sandbox]\nnetwork = true\n", "sandbox.network"),
        (
            "[sandbox]\nallow_domains = [\"example.com\"]\n",
            "sandbox.allow_domains",
        ),
        ("[sandbox]\nunix_sockets = true\n", "sandbox.unix_sockets"),
        ("[sandbox]\nbest_effort = true\n", "sandbox.best_effort"),
    ] {
        let e = merge(vec![project_file(text, false)], vec![])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("/src/repo/.gate.toml:")
                && e.contains(&format!(
                    "key `{key}`: the project file is not trusted, so "
                )),
            "{text}: {e}"
        );
        assert!(
            e.ends_with(
                "; a person who trusts it can run `gate trust /src/repo/.gate.toml` in a \
                     terminal of their own"
            ),
            "{e}"
        );
        assert!(!e.contains('\n'));
        // Trusted, it loads.
        merge(vec![project_file(text, true)], vec![]).unwrap();
    }
}

#[test]
fn from_full_an_untrusted_project_may_choose_any_stricter_level() {
    for level in ["ask", "safe", "deny"] {
        let user = user_file("level = \"full\"\n").unwrap();
        let project = project_file(&format!("level = \"{level}\"\n"), false);
        let s = merge(vec![user, project], vec![]).unwrap();
        assert_eq!(s.policy.level.as_str(), level);
    }
    let user = user_file("level = \"safe\"\n").unwrap();
    let e = merge(vec![user, project_file("level = \"ask\"\n", false)], vec![])
        .unwrap_err()
        .to_string();
    assert!(e.contains("the level stays `safe` (only `deny`"), "{e}");
    assert!(stricter_level(Level::Ask, Level::Deny));
    assert!(!stricter_level(Level::Ask, Level::Safe));
    assert!(!stricter_level(Level::Deny, Level::Ask));
}

#[test]
fn a_system_lock_holds_against_a_trusted_project_file_and_is_what_the_message_names() {
    for trusted in [true, false] {
        let e = merge(
            vec![
                locked_system(),
                project_file("allow = [\"git push\"]\n", trusted),
            ],
            vec![],
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains(
                "key `allow`: /etc/gate/config.toml locks the configuration (lock = true), \
                     so no allow rules can be added (`git push`)"
            ),
            "{e}"
        );
    }
}

#[test]
fn grants_lists_every_loosening_of_the_project_file() {
    let user = user_file("level = \"ask\"\n").unwrap();
    let project = project_file(
        "allow = [\"b\", \"a\"]\nlevel = \"full\"\ndeny = [\"rm\"]\n[sandbox]\nnetwork = true\n",
        true,
    );
    let untrusted = Untrusted {
        file: Arc::from(Path::new("/src/repo/.gate.toml")),
        why: "is not trusted".into(),
    };
    let (grants, still) = grants(vec![user, project], untrusted.clone()).unwrap();
    let keys: Vec<_> = grants.iter().map(|l| l.key.as_str()).collect();
    assert_eq!(keys, ["level", "allow", "allow", "sandbox.network"]);
    assert_eq!(
        grants[1].to_string(),
        "/src/repo/.gate.toml:1: key `allow`: no allow rules can be added (`a`)"
    );
    assert!(still.is_none());
    let only_tightens = project_file("deny = [\"rm\"]\n", true);
    let (grants, still) = super::grants(vec![only_tightens], untrusted.clone()).unwrap();
    assert!(grants.is_empty() && still.is_none());
    let (_, still) = super::grants(
        vec![locked_system(), project_file("allow = [\"x\"]\n", true)],
        untrusted,
    )
    .unwrap();
    assert!(
        still
            .unwrap()
            .to_string()
            .contains("locks the configuration")
    );
}
