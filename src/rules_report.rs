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
fn rules(s: &Settings) -> Vec<(&'static Kind, &str, Origin)> {
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
        // Rules are kept in the order they were read; allow rules on one line are
        // listed by text (as when they were kept in a hash table, which had no order).
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
            "from": from.to_string(),
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
            json!({"kind": kind.name, "rule": rule, "exact": exact, "origin": origin_json(&origin)})
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
mod tests;
