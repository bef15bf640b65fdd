//! Codex's rules imported into gate, end to end: the rules `gate::import::codex::read`
//! makes of realistic `.rules` and `requirements.toml` files, written as a gate
//! configuration, loaded by gate's real loader (which runs the carried `match` and
//! `not_match` examples again) and judged by `gate check`, as root and as uid 65534.
//!
//! The last test puts the real Codex CLI (0.171.0, `codex execpolicy check`) beside
//! gate on the same commands: whatever Codex forbids gate refuses, whatever Codex
//! prompts for gate does not allow, and gate allows nothing Codex did not allow.

use crate::common;

use std::path::PathBuf;
use std::process::Command;

use common::real_agents::install;
use common::*;
use gate::import::codex;
use gate::import::{Entry, Expect, GateRule, Outcome, RuleKind, Scope};

const RULES: &str = r#"# ~/.codex/rules/default.rules
# What the TUI appended after "always allow": no decision, so Codex allows.
prefix_rule(pattern=["cargo", "test"])
prefix_rule(pattern=["git", "status"])

prefix_rule(
    pattern = ["git", ["push", "fetch"]],
    decision = "prompt",
    justification = "talks to the remote",
    match = [["git", "push", "origin", "main"], "git fetch --all"],
    not_match = ["git status"],
)
prefix_rule(pattern = ["rm", ["-rf", "-fr"]], decision = "forbidden", match = ["rm -rf /"])
prefix_rule(pattern = ["git", "commit", "-m", "wip: save"], decision = "allow")
prefix_rule(pattern = ["echo", "$HOME"], decision = "allow")
prefix_rule(pattern = ["curl", "-H", "Authorization: $TOKEN"], decision = "forbidden")
prefix_rule(pattern = ["npm", "publish"], decision = "prompt", canonical_matching = False)
host_executable(name = "git", paths = ["/usr/bin/git"])
prefix_rule(pattern = ["make", "lint"], canonical_matching = True)
"#;

const REQUIREMENTS: &str = r#"[rules]
prefix_rules = [
  { pattern = [{ token = "dd" }], decision = "forbidden", justification = "disks" },
  { pattern = [{ token = "kubectl" }, { any_of = ["delete", "drain"] }], decision = "prompt" },
]
"#;

/// A TOML string: JSON's escapes are all TOML's too.
fn toml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

fn rule_table(rule: &GateRule, from: &str) -> String {
    let examples = |expect: Expect| {
        rule.examples
            .iter()
            .filter(|(_, e)| *e == expect)
            .map(|(t, _)| toml_str(t))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "{{ rule = {}, from = {}, match = [{}], not_match = [{}] }}",
        toml_str(&rule.text),
        toml_str(from),
        examples(Expect::Match),
        examples(Expect::NotMatch)
    )
}

/// The gate configuration the entries make: each written rule in its list, with where
/// it came from and its examples.
fn configuration(entries: &[Entry]) -> String {
    let mut lists: [(RuleKind, &str, Vec<String>); 3] = [
        (RuleKind::Allow, "allow", Vec::new()),
        (RuleKind::Ask, "ask", Vec::new()),
        (RuleKind::Deny, "deny", Vec::new()),
    ];
    for entry in entries {
        let rule = match &entry.outcome {
            Outcome::Imported(r)
            | Outcome::Narrowed { rule: r, .. }
            | Outcome::Broadened { rule: r, .. }
            | Outcome::Asked { rule: r, .. } => r,
            Outcome::Dropped { .. } => continue,
        };
        let list = lists.iter_mut().find(|(k, _, _)| *k == rule.kind).unwrap();
        list.2.push(rule_table(rule, &entry.source.to_string()));
    }
    lists
        .iter()
        .map(|(_, key, items)| format!("{key} = [\n  {}\n]\n", items.join(",\n  ")))
        .collect()
}

fn imported() -> Vec<Entry> {
    codex::read(&[
        (
            PathBuf::from("/home/u/.codex/rules/default.rules"),
            Scope::User,
            RULES.to_owned(),
        ),
        (
            PathBuf::from("/etc/codex/requirements.toml"),
            Scope::Managed,
            REQUIREMENTS.to_owned(),
        ),
    ])
    .unwrap()
}

/// `gate check --json` of `command` at `level` with `config`: the decision, as
/// [`ALLOW`], [`ASK`] or [`DENY`] (exit statuses say what happens now, which for an ask
/// depends on whether an approver is reachable; the decision does not).
fn check(env: &TestEnv, user: User, config: &std::path::Path, level: &str, command: &str) -> i32 {
    let out = env
        .gate()
        .user(user)
        .args([
            "check",
            "--json",
            "--audit-log",
            "off",
            "--level",
            level,
            "--config",
        ])
        .arg(config)
        .args(["-c", command])
        .run();
    let v: serde_json::Value = serde_json::from_str(&out.stdout())
        .unwrap_or_else(|e| panic!("gate check {command:?} is not JSON ({e}): {}", out.report()));
    match v["decision"].as_str() {
        Some("allow") => ALLOW,
        Some("ask") => ASK,
        Some("deny") => DENY,
        _ => panic!("gate check {command:?}: {}", out.report()),
    }
}

const ALLOW: i32 = 0;
const ASK: i32 = 1;
const DENY: i32 = 2;

#[test]
fn the_imported_rules_load_and_decide_as_codex_did() {
    let env = TestEnv::new();
    let config = env.write("imported.toml", configuration(&imported()));
    for user in [User::Current, User::Unprivileged] {
        for (level, command, expected) in [
            // Forbidden in Codex: refused at every level, `full` included.
            ("full", "rm -rf /", DENY),
            ("full", "rm -fr build", DENY),
            ("full", "dd if=/dev/zero of=/dev/sda", DENY),
            (
                "full",
                "curl -H 'Authorization: x' https://example.com",
                DENY,
            ),
            // Prompted for: asked about at every level that runs commands.
            ("full", "git push origin main", ASK),
            ("full", "git fetch --all", ASK),
            ("full", "npm publish", ASK),
            ("full", "kubectl delete pod x", ASK),
            ("ask", "kubectl drain node-1", ASK),
            // Allowed, the default decision included.
            ("ask", "cargo test --workspace", ALLOW),
            ("ask", "git status -s", ALLOW),
            ("ask", "git commit -m 'wip: save'", ALLOW),
            // Narrowed: the same words spelled otherwise are asked about.
            ("ask", "git commit -m \"wip: save\"", ASK),
            // Dropped (`$HOME` cannot be in a gate rule): asked about.
            ("ask", "echo '$HOME'", ASK),
            // Never allowed through shell syntax, whatever the allow rule.
            ("ask", "git status; rm -rf ~", DENY),
        ] {
            assert_eq!(
                check(&env, user, &config, level, command),
                expected,
                "{user:?} at {level}: {command}"
            );
        }
    }
}

#[test]
fn gate_rules_names_the_codex_file_and_line_of_each_imported_rule() {
    let env = TestEnv::new();
    let config = env.write("imported.toml", configuration(&imported()));
    let out = env.gate().args(["rules", "--config"]).arg(&config).run();
    out.assert_code(0);
    let text = out.stdout();
    for line in [
        "rm -rf  ",
        "(imported from /home/u/.codex/rules/default.rules:13)",
        "(imported from /etc/codex/requirements.toml:3)",
        "(imported from /home/u/.codex/rules/default.rules:6)",
    ] {
        assert!(text.contains(line), "{line}\n{text}");
    }
}

#[test]
fn without_the_imported_rules_the_same_commands_run() {
    // The control: the refusals above come from the imported rules.
    let env = TestEnv::new();
    let empty = env.write("empty.toml", "");
    for command in ["rm -rf /", "git push origin main", "dd if=/dev/zero of=x"] {
        assert_eq!(check(&env, User::Current, &empty, "full", command), ALLOW);
    }
    assert_eq!(check(&env, User::Current, &empty, "ask", "cargo test"), ASK);
}

#[test]
fn an_example_gate_disagrees_with_fails_the_import_and_a_loader_would_refuse_it_too() {
    // Codex compares argv position by position: `git -C repo push` is not its `git push`.
    // gate's deny reads options anywhere, so the import stops and names the example.
    let text = "prefix_rule(\n  pattern=[\"git\", \"push\"],\n  decision=\"forbidden\",\n  not_match=[\"git -C repo push\"],\n)\n";
    let e = codex::read(&[(
        PathBuf::from("/home/u/.codex/rules/default.rules"),
        Scope::User,
        text.to_owned(),
    )])
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "/home/u/.codex/rules/default.rules:1: its `not_match` example `git -C repo push` is \
         matched by gate's rule `git push` (gate's deny and ask rules match options in any \
         order and position, and the program at any path)"
    );
    // The same rule and example written by hand: gate's loader refuses it (125).
    let env = TestEnv::new();
    let config = env.write(
        "hand.toml",
        "deny = [{ rule = \"git push\", not_match = [\"git -C repo push\"] }]\n",
    );
    let out = env
        .gate()
        .args(["check", "--audit-log", "off", "--config"])
        .arg(&config)
        .args(["-c", "true"])
        .run();
    out.assert_gate_error();
}

/// Codex's decision for `argv`: "forbidden", "prompt", "allow", or "" when no rule
/// matches.
fn codex_decision(
    codex: &std::path::Path,
    home: &std::path::Path,
    rules: &std::path::Path,
    argv: &[&str],
) -> String {
    let out = Command::new(codex)
        .args([
            "execpolicy",
            "check",
            "--resolve-host-executables",
            "--rules",
        ])
        .arg(rules)
        .args(argv)
        .env("CODEX_HOME", home)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "codex execpolicy check {argv:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["decision"].as_str().unwrap_or("").to_owned()
}

#[test]
fn beside_the_real_codex_gate_never_allows_more_and_never_refuses_less() {
    let codex = install("codex");
    let env = TestEnv::new();
    let home = env.root.join("codex-home");
    std::fs::create_dir_all(&home).unwrap();
    let rules = env.write("default.rules", RULES);
    let entries = codex::read(&[(rules.clone(), Scope::User, RULES.to_owned())]).unwrap();
    let config = env.write("imported.toml", configuration(&entries));
    let commands: &[&[&str]] = &[
        &["cargo", "test"],
        &["cargo", "test", "--release"],
        &["cargo", "build"],
        &["git", "status"],
        &["/usr/bin/git", "status"],
        &["git", "push"],
        &["git", "push", "--force", "origin"],
        &["/usr/bin/git", "push"],
        &["./git", "push"],
        &["/opt/x/git", "push"],
        &["git", "-C", "repo", "push"],
        &["git", "fetch", "--all"],
        &["git", "pull"],
        &["rm", "-rf", "/"],
        &["rm", "-fr", "."],
        &["/bin/rm", "-rf", "x"],
        &["rm", "-r", "x"],
        &["git", "commit", "-m", "wip: save"],
        &["git", "commit", "-m", "wip: save", "--amend"],
        &["git", "commit", "-m", "other"],
        &["echo", "$HOME"],
        &["echo", "hi"],
        &["curl", "-H", "Authorization: $TOKEN", "https://x.example"],
        &["curl", "-H", "Accept: */*", "https://x.example"],
        &["npm", "publish"],
        &["npm", "publish", "--dry-run"],
        &["NPM", "publish"],
        &["make", "lint"],
        &["MAKE", "Lint", "-j"],
    ];
    let mut seen = [0usize; 4];
    for argv in commands {
        let said = codex_decision(&codex, &home, &rules, argv);
        let words: Vec<String> = argv.iter().map(|w| (*w).to_owned()).collect();
        let text = shell_words::join(&words);
        for user in [User::Current, User::Unprivileged] {
            let gate = check(&env, user, &config, "ask", &text);
            match said.as_str() {
                "forbidden" => assert_eq!(gate, DENY, "{text}: Codex forbids it"),
                "prompt" => assert_ne!(gate, ALLOW, "{text}: Codex prompts for it"),
                "allow" => {}
                "" => assert_ne!(gate, ALLOW, "{text}: no Codex rule allows it"),
                other => panic!("{text}: Codex said {other:?}"),
            }
            if gate == ALLOW {
                assert_eq!(said, "allow", "{text}: gate allows what Codex did not");
            }
        }
        seen[["forbidden", "prompt", "allow", ""]
            .iter()
            .position(|d| *d == said)
            .unwrap()] += 1;
    }
    // The commands above reach every decision, so no branch above is left untested.
    assert!(seen.iter().all(|&n| n > 0), "{seen:?}");
}

/// `gate import codex` end to end: Codex's files found where Codex reads them
/// (`$CODEX_HOME/rules`, the project's `.codex/rules`), the table, `--save`, and the
/// saved rules in force for the next command, as root and as uid 65534.
#[test]
fn gate_import_codex_finds_codexs_files_and_saves_what_they_say() {
    for user in [User::Current, User::Unprivileged] {
        let env = TestEnv::new();
        let codex_home = env.root.join("codex-home");
        std::fs::create_dir_all(codex_home.join("rules")).unwrap();
        std::fs::write(codex_home.join("rules/default.rules"), RULES).unwrap();
        let project = env.work.join(".codex/rules");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(
            project.join("repo.rules"),
            "prefix_rule(pattern=[\"make\", \"deploy\"])\nprefix_rule(pattern=[\"make\", \"clean\"], decision=\"forbidden\")\n",
        )
        .unwrap();
        for dir in [&env.root.join("codex-home"), &env.work.join(".codex")] {
            let status = Command::new("chmod")
                .arg("-R")
                .arg("a+rX")
                .arg(dir)
                .status()
                .unwrap();
            assert!(status.success());
        }
        let dry = env
            .gate()
            .user(user)
            .env("CODEX_HOME", &codex_home)
            .args(["import", "codex"])
            .run();
        dry.assert_code(0);
        let table = dry.stdout() + &dry.stderr();
        for needle in [
            "# no decision: Codex's default is allow",
            "as ask git push",
            "as deny rm -rf",
            "narrowed   allow prefix_rule(pattern=[\"git\", \"commit\", \"-m\", \"wip: save\"]",
            "repo.rules:1",
        ] {
            assert!(table.contains(needle), "{needle}\n{table}");
        }
        let config_dir = env.config.join("gate");
        std::fs::create_dir_all(&config_dir).unwrap();
        std::fs::set_permissions(
            &config_dir,
            std::os::unix::fs::PermissionsExt::from_mode(0o777),
        )
        .unwrap();
        env.gate()
            .user(user)
            .env("CODEX_HOME", &codex_home)
            .args(["import", "codex", "--save"])
            .run()
            .assert_code(0);
        // The saved rules are in force: no --config, the user layer's drop-in.
        let decide = |command: &str| {
            let out = env
                .gate()
                .user(user)
                .args([
                    "check",
                    "--json",
                    "--audit-log",
                    "off",
                    "--level",
                    "full",
                    "-c",
                    command,
                ])
                .run();
            let v: serde_json::Value = serde_json::from_str(&out.stdout())
                .unwrap_or_else(|e| panic!("{e}: {}", out.report()));
            v["decision"].as_str().unwrap_or_default().to_owned()
        };
        assert_eq!(decide("rm -rf /"), "deny", "{user:?}");
        assert_eq!(decide("git push origin main"), "ask", "{user:?}");
        // The project's deny rule is imported; its allow rule waits for --project.
        assert_eq!(decide("make clean"), "deny", "{user:?}");
        assert_eq!(decide("echo fine"), "allow", "{user:?}");
    }
}
