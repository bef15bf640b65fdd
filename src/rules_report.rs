//! `gate rules`: the rules in force, each with where it came from (a file and line, an
//! option, a variable), the switches that change what the rules allow, and what the
//! lock lets later layers change, in the manner of `sudo -l`. It reads the settings a
//! run with the same options would use and runs nothing.

#![forbid(unsafe_code)]

use serde_json::{Value, json};

use crate::config::{self, Settings};
use crate::explain::display;
use crate::invocation::Invocation;
use crate::output::print_out;
use crate::policy::Origin;

/// `gate rules [--json]`: exit 0 once listed, 125 when the configuration does not load.
pub(crate) fn run(inv: &Invocation, json: bool) -> i32 {
    let settings = match crate::settings::load_settings(inv) {
        Ok(s) => s,
        Err(code) => return code,
    };
    if json {
        print_out(&format!("{}\n", to_json(&settings)))
    } else {
        print_out(&to_text(&settings))
    }
}

/// One kind of rule, in the order they are applied.
struct Kind {
    name: &'static str,
    what: &'static str,
}

const DENY: Kind = Kind {
    name: "deny",
    what: "refused at every level, in the text and when a program runs",
};
const ASK: Kind = Kind {
    name: "ask",
    what: "a person answers, at every level that runs commands, whatever allows them",
};
const UNSANDBOXED: Kind = Kind {
    name: "unsandboxed",
    what: "at level safe, run outside the sandbox when a person approves",
};
const ALLOW: Kind = Kind {
    name: "allow",
    what: "run unasked at level ask",
};

/// Every rule in force, by kind in the order they apply, then in the order of the
/// layers they came from (files as read, then variables, then options) and their lines.
fn rules(s: &Settings) -> Vec<(&'static Kind, &str, &Origin)> {
    let rank = |origin: &Origin| -> (usize, u32) {
        let files = s.files.len();
        match origin {
            Origin::BuiltIn => (0, 0),
            Origin::File { path, line }
            | Origin::Imported { path, line, .. }
            | Origin::Always { path, line } => (
                1 + s.files.iter().position(|f| **f == **path).unwrap_or(files),
                *line,
            ),
            Origin::Env(_) => (files + 2, 0),
            Origin::Flag(_) => (files + 3, 0),
            Origin::Approver => (files + 4, 0),
        }
    };
    let mut all = Vec::new();
    for (kind, found) in [
        (&DENY, s.policy.deny.iter().collect::<Vec<_>>()),
        (&ASK, s.policy.ask.iter().collect()),
        (&UNSANDBOXED, s.policy.unsandboxed.iter().collect()),
        (&ALLOW, s.policy.allow.iter().collect()),
    ] {
        let mut found = found;
        // Deny and ask rules are kept in the order they were read; allow rules are
        // indexed by text, so on one line they are listed by text.
        if matches!(kind.name, "allow" | "unsandboxed") {
            found.sort_by(|a, b| a.0.cmp(b.0));
        }
        found.sort_by_key(|(_, origin)| rank(origin));
        all.extend(found.into_iter().map(|(rule, origin)| (kind, rule, origin)));
    }
    all
}

fn switches(s: &Settings) -> [(&'static str, bool, &Origin); 3] {
    let o = &s.switch_origins;
    [
        ("compound", s.policy.compound, &o.compound),
        ("readonly", s.policy.readonly, &o.readonly),
        ("readonly_rules", s.policy.readonly_rules, &o.readonly_rules),
    ]
}

const REMEMBERED: &str = "approvals remembered for a session (gate approve --remember, \
                          --remember-rule) live in the broker's memory and are not listed; \
                          lasting ones (gate approve --always) are allow rules above, \
                          marked (always allow)";

/// The listing people read.
pub(crate) fn to_text(s: &Settings) -> String {
    let mut out = String::new();
    let files = if s.files.is_empty() {
        "none".to_owned()
    } else {
        s.files
            .iter()
            .map(|f| {
                let locks = s.locked_by.as_deref() == Some(f.as_path());
                format!("{}{}", f.display(), if locks { " (locks)" } else { "" })
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    out.push_str(&format!("configuration: {files}\n"));
    if let Some(project) = &s.project {
        out.push_str(&format!(
            "project: {}, {}\n",
            project.path.display(),
            project.trust.describe()
        ));
    }
    out.push_str(&format!(
        "level: {} (from {})\n",
        s.policy.level, s.policy.level_origin
    ));
    let all = rules(s);
    let width = all
        .iter()
        .map(|(_, rule, _)| display(rule).chars().count())
        .max()
        .unwrap_or(0)
        .min(40);
    for kind in [&DENY, &ASK, &UNSANDBOXED, &ALLOW] {
        out.push_str(&format!("\n{} rules ({}):\n", kind.name, kind.what));
        let mut any = false;
        for (_, rule, origin) in all.iter().filter(|(k, _, _)| k.name == kind.name) {
            any = true;
            let held = match kind.name {
                "allow" => Some(&s.policy.allow),
                "unsandboxed" => Some(&s.policy.unsandboxed),
                _ => None,
            };
            let exact = if held.is_some_and(|h| h.is_exact(rule)) {
                "exact, "
            } else {
                ""
            };
            out.push_str(&format!(
                "  {:<width$}  {exact}{origin}{}\n",
                display(rule),
                project_mark(s, origin)
            ));
        }
        if !any {
            out.push_str("  none\n");
        }
    }
    out.push_str("\nswitches:\n");
    for (name, on, origin) in switches(s) {
        let value = if on { "on" } else { "off" };
        out.push_str(&format!("  {name:<14}  {value:<3}  (from {origin})\n"));
    }
    out.push_str(&format!("\nremembered: {REMEMBERED}\n"));
    match &s.locked_by {
        None => out.push_str("\nlock: none; every layer may change every setting\n"),
        Some(path) => {
            out.push_str(&format!(
                "\nlock: {} says lock = true; later layers (the user file, a project file, GATE_* \
                 variables, options) may only tighten:\n",
                path.display()
            ));
            for (key, may) in config::under_lock(s) {
                out.push_str(&format!("  {key}: {may}\n"));
            }
        }
    }
    out
}

/// After an origin in the project file: whether that file is trusted.
fn project_mark(s: &Settings, origin: &Origin) -> &'static str {
    let path = match origin {
        Origin::File { path, .. } | Origin::Imported { path, .. } => path,
        _ => return "",
    };
    match &s.project {
        Some(project) if **path == *project.path => {
            if project.trust.is_trusted() {
                " (project, trusted)"
            } else {
                " (project, untrusted)"
            }
        }
        _ => "",
    }
}

/// An origin as data.
fn origin_json(origin: &Origin) -> Value {
    let text = origin.to_string();
    match origin {
        Origin::BuiltIn => json!({"source": "built-in", "text": text}),
        Origin::File { path, line } => json!({
            "source": "file",
            "file": path.display().to_string(),
            "line": line,
            "text": text,
        }),
        Origin::Imported { path, line, from } => json!({
            "source": "import",
            "file": path.display().to_string(),
            "line": line,
            "from": &**from,
            "text": text,
        }),
        Origin::Always { path, line } => json!({
            "source": "always-allow",
            "file": path.display().to_string(),
            "line": line,
            "text": text,
        }),
        Origin::Env(name) => json!({"source": "env", "name": name, "text": text}),
        Origin::Flag(name) => json!({"source": "flag", "name": name, "text": text}),
        Origin::Approver => json!({"source": "approver", "text": text}),
    }
}

/// The listing as one JSON object.
pub(crate) fn to_json(s: &Settings) -> Value {
    let rules: Vec<Value> = rules(s)
        .into_iter()
        .map(|(kind, rule, origin)| {
            let exact = match kind.name {
                "allow" => s.policy.allow.is_exact(rule),
                "unsandboxed" => s.policy.unsandboxed.is_exact(rule),
                _ => false,
            };
            json!({"kind": kind.name, "rule": rule, "exact": exact, "origin": origin_json(origin)})
        })
        .collect();
    let switches: serde_json::Map<String, Value> = switches(s)
        .into_iter()
        .map(|(name, on, origin)| {
            (
                name.to_owned(),
                json!({"value": on, "origin": origin_json(origin)}),
            )
        })
        .collect();
    let lock: Vec<Value> = config::under_lock(s)
        .into_iter()
        .map(|(key, may)| json!({"key": key, "later_layers": may}))
        .collect();
    json!({
        "config_files": s.files.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        "locked_by": s.locked_by.as_ref().map(|p| p.display().to_string()),
        "project": s.project.as_ref().map(|p| json!({
            "file": p.path.display().to_string(),
            "sha256": p.sha256,
            "trust": p.trust.key(),
            "text": p.trust.describe(),
        })),
        "level": {
            "value": s.policy.level.as_str(),
            "origin": origin_json(&s.policy.level_origin),
        },
        "rules": rules,
        "switches": switches,
        "remembered": REMEMBERED,
        "lock": lock,
    })
}

#[cfg(test)]
mod tests {
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
}
