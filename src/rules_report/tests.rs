use super::*;
use crate::config::{FileKind, Layer, merge, parse_file};
use std::path::Path;

fn file(path: &str, kind: FileKind, text: &str) -> Layer {
    parse_file(Path::new(path), text, kind, Some(Path::new("/home/u"))).unwrap()
}

fn settings(system: &str, user: &str, flags: impl FnOnce(&mut Layer)) -> Settings {
    let mut cli = Layer::default();
    flags(&mut cli);
    merge(
        vec![
            file("/etc/gate/config.toml", FileKind::System, system),
            file("/home/u/.config/gate/config.toml", FileKind::User, user),
            cli,
        ],
        vec![
            "/etc/gate/config.toml".into(),
            "/home/u/.config/gate/config.toml".into(),
        ],
    )
    .unwrap()
}

#[test]
fn each_rule_is_listed_by_kind_with_its_file_and_line_or_option() {
    let s = settings(
        "level = \"full\"\ndeny = [\"rm -rf\"]\n",
        "\nask = [\"npm publish\", \"git push\"]\nallow = [\"ls\"]\ncompound = true\n",
        |l| {
            l.allow.add("git status", Origin::Flag("--allow")).unwrap();
            l.ask.add("curl", Origin::Flag("--ask")).unwrap();
        },
    );
    let text = to_text(&s);
    let lines: Vec<&str> = text.lines().collect();
    let at = |needle: &str| {
        lines
            .iter()
            .position(|l| l.starts_with(needle))
            .unwrap_or_else(|| panic!("{needle:?} not in\n{text}"))
    };
    assert!(text.starts_with(
        "configuration: /etc/gate/config.toml, /home/u/.config/gate/config.toml\n\
             level: full (from /etc/gate/config.toml:1)\n"
    ));
    let deny = at("deny rules");
    let ask = at("ask rules");
    let allow = at("allow rules");
    assert!(deny < ask && ask < allow, "{text}");
    assert_eq!(
        lines[deny + 1].split_whitespace().collect::<Vec<_>>(),
        ["rm", "-rf", "/etc/gate/config.toml:2"]
    );
    // In the order of the file, then the options.
    let unsandboxed = at("unsandboxed rules");
    assert!(ask < unsandboxed && unsandboxed < allow, "{text}");
    assert_eq!(lines[unsandboxed + 1].trim(), "none", "{text}");
    let asks: Vec<&str> = lines[ask + 1..unsandboxed - 1]
        .iter()
        .map(|l| l.trim())
        .collect();
    assert_eq!(asks.len(), 3, "{text}");
    assert!(asks[0].starts_with("npm publish") && asks[0].ends_with("config.toml:2"));
    assert!(asks[1].starts_with("git push") && asks[1].ends_with("config.toml:2"));
    assert!(asks[2].starts_with("curl") && asks[2].ends_with("--ask"));
    assert!(lines[allow + 1].trim().starts_with("ls "), "{text}");
    assert!(lines[allow + 2].trim().ends_with("--allow"), "{text}");
    assert!(
        text.contains("  compound        on   (from /home/u/.config/gate/config.toml:4)\n"),
        "{text}"
    );
    assert!(
        text.contains("readonly        off  (from the built-in default)"),
        "{text}"
    );
    assert!(text.ends_with("\nlock: none; every layer may change every setting\n"));

    let v = to_json(&s);
    assert_eq!(v["level"]["origin"]["line"], 1);
    let rules = v["rules"].as_array().unwrap();
    assert_eq!(rules.len(), 6);
    assert_eq!(rules[0]["kind"], "deny");
    assert_eq!(rules[0]["origin"]["source"], "file");
    assert_eq!(rules[0]["origin"]["file"], "/etc/gate/config.toml");
    assert_eq!(rules[3]["rule"], "curl");
    assert_eq!(rules[3]["origin"]["source"], "flag");
    assert_eq!(rules[3]["origin"]["name"], "--ask");
    assert_eq!(v["switches"]["compound"]["value"], true);
    assert_eq!(v["lock"], json!([]));
}

#[test]
fn an_exact_rule_and_an_imported_one_say_so() {
    let s = settings(
        "",
        "allow = [\n  { rule = \"git status\", exact = true },\n               { rule = \"npm test\", from = \"/home/u/.claude/settings.json:7\" },\n]\n",
        |_| {},
    );
    let text = to_text(&s);
    let line = |rule: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(rule))
            .unwrap_or_else(|| panic!("{rule:?} not in\n{text}"))
            .to_owned()
    };
    assert!(
        line("git status").ends_with("exact, /home/u/.config/gate/config.toml:2"),
        "{text}"
    );
    assert!(
        line("npm test").ends_with(
            "/home/u/.config/gate/config.toml:3 (imported from \
                 /home/u/.claude/settings.json:7)"
        ),
        "{text}"
    );
    let v = to_json(&s);
    let rules = v["rules"].as_array().unwrap();
    let by = |rule: &str| rules.iter().find(|r| r["rule"] == rule).unwrap();
    assert_eq!(by("git status")["exact"], true);
    assert_eq!(by("npm test")["exact"], false);
    assert_eq!(by("npm test")["origin"]["source"], "import");
    assert_eq!(
        by("npm test")["origin"]["from"],
        "/home/u/.claude/settings.json:7"
    );
    assert_eq!(by("npm test")["origin"]["line"], 3);
}

#[test]
fn under_a_lock_the_listing_says_what_later_layers_may_change() {
    let s = settings(
        "lock = true\nlevel = \"ask\"\nask = [\"git push\"]\n",
        "ask = [\"npm publish\"]\n",
        |_| {},
    );
    let text = to_text(&s);
    assert!(
        text.contains("configuration: /etc/gate/config.toml (locks), "),
        "{text}"
    );
    assert!(
        text.contains("\nlock: /etc/gate/config.toml says lock = true;"),
        "{text}"
    );
    for line in [
        "  level: stays `ask`, or becomes `deny`\n",
        "  allow: no rule may be added\n",
        "  ask: rules may be added; none can be taken away\n",
        "  compound: stays off: no later layer may turn compound on\n",
        "  --no-config: refused: the locking file cannot be skipped\n",
    ] {
        assert!(text.contains(line), "{line:?} not in\n{text}");
    }
    let v = to_json(&s);
    assert_eq!(v["locked_by"], "/etc/gate/config.toml");
    assert!(
        v["lock"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["key"] == "allow" && e["later_layers"] == "no rule may be added")
    );
}

/// Each sentence of `under_lock` is what `merge` does: a later layer that does what
/// a sentence forbids is refused, and one that does what it allows is not.
#[test]
fn the_lock_sentences_are_what_merge_enforces() {
    let system = || {
        file(
            "/etc/gate/config.toml",
            FileKind::System,
            "lock = true\nlevel = \"ask\"\n",
        )
    };
    let try_layer = |f: &dyn Fn(&mut Layer)| {
        let mut l = Layer::default();
        f(&mut l);
        merge(vec![system(), l], vec![]).is_ok()
    };
    let flag = |n| Origin::Flag(n);
    let sentences: std::collections::HashMap<_, _> = {
        let s = merge(vec![system()], vec![]).unwrap();
        config::under_lock(&s).into_iter().collect()
    };
    assert_eq!(sentences["allow"], "no rule may be added");
    assert!(!try_layer(&|l| l.allow.add("ls", flag("--allow")).unwrap()));
    for key in ["deny", "ask"] {
        assert_eq!(sentences[key], "rules may be added; none can be taken away");
    }
    assert!(try_layer(&|l| l.deny.add("rm", flag("--deny")).unwrap()));
    assert!(try_layer(&|l| l.ask.add("rm", flag("--ask")).unwrap()));
    assert_eq!(sentences["level"], "stays `ask`, or becomes `deny`");
    assert!(!try_layer(
        &|l| l.level = Some((crate::policy::Level::Full, flag("--level")))
    ));
    assert!(try_layer(
        &|l| l.level = Some((crate::policy::Level::Deny, flag("--level")))
    ));
    assert!(sentences["compound"].starts_with("stays off"));
    assert!(!try_layer(
        &|l| l.compound = Some((true, flag("--compound")))
    ));
    assert_eq!(sentences["readonly_rules"], "may be turned on (it is off)");
    assert!(try_layer(
        &|l| l.readonly_rules = Some((true, flag("--readonly-rules")))
    ));
    assert!(sentences["approval.timeout"].starts_with("may be shortened"));
    assert!(try_layer(&|l| l.timeout = Some((10, flag("--timeout")))));
    assert!(!try_layer(&|l| l.timeout = Some((600, flag("--timeout")))));
    assert_eq!(sentences["approval.tty"], "stays off");
    assert!(!try_layer(&|l| l.tty = Some((true, flag("x")))));
    assert!(!try_layer(&|l| l
        .write
        .push(("/srv".into(), flag("--write")))));
    assert!(try_layer(&|l| l
        .deny_read
        .push(("/srv".into(), flag("--deny-read")))));
    assert!(sentences["sandbox.network"].starts_with("stays off"));
    assert!(!try_layer(&|l| l.network = Some((true, flag("--net")))));
}

#[test]
fn the_project_file_and_its_rules_say_whether_it_is_trusted() {
    use crate::project::{ProjectFile, Trust};
    let project = file(
        "/src/app/.gate.toml",
        FileKind::Project,
        "deny = [\"npm publish\"]\n",
    );
    let mut s = merge(
        vec![
            file("/home/u/.config/gate/config.toml", FileKind::User, ""),
            project,
        ],
        vec!["/home/u/.config/gate/config.toml".into()],
    )
    .unwrap();
    s.project = Some(ProjectFile {
        path: "/src/app/.gate.toml".into(),
        sha256: "0".repeat(64),
        trust: Trust::NotTrusted,
    });
    let text = to_text(&s);
    assert!(
        text.contains(
            "\nproject: /src/app/.gate.toml, not trusted: only what tightens applies; \
                 anything it loosens is refused\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("/src/app/.gate.toml:1 (project, untrusted)\n"),
        "{text}"
    );
    assert_eq!(to_json(&s)["project"]["trust"], "untrusted");
    s.project.as_mut().unwrap().trust = Trust::Trusted {
        at: "2026-12-04T00:00:00.000Z".into(),
    };
    let text = to_text(&s);
    assert!(
        text.contains("project: /src/app/.gate.toml, trusted (since 2026-12-04T00:00:00.000Z)"),
        "{text}"
    );
    assert!(text.contains(":1 (project, trusted)\n"), "{text}");
    // Without a project file, neither line nor mark.
    s.project = None;
    let text = to_text(&s);
    assert!(!text.contains("project"), "{text}");
    assert!(to_json(&s)["project"].is_null());
}
