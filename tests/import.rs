//! `gate import`: realistic Claude Code settings and Gemini CLI policy files, with the
//! traps people write (`Bash(git * main)`, `Bash(ls*)`, `commandPrefix = "git"`, regexes),
//! read where the agents read them; what the table says was imported, narrowed and
//! dropped; what `--save` writes and what `gate rules` then shows; and the promise,
//! checked through gate's real loader and decision: no command a source refused or asked
//! about is allowed by the imported policy, at any level (with the control: without the
//! import, the same commands are allowed at level full).

use crate::common;

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use common::*;
use proptest::prelude::*;

const CLAUDE_USER: &str = r#"{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "model": "opus",
  "permissions": {
    "allow": [
      "Bash(npm run test:*)",
      "Bash(git status)",
      "Bash(git * main)",
      "Bash(ls*)",
      "Bash(cargo build *)",
      "Read(~/.zshrc)",
      "WebFetch(domain:docs.rs)"
    ],
    "ask": ["Bash(git push:*)", "Bash(npm publish)"],
    "deny": [
      "Bash(rm -rf:*)",
      "Bash(curl:*)",
      "Read(./.env)"
    ],
    "defaultMode": "acceptEdits"
  },
  "env": { "DISABLE_TELEMETRY": "1" }
}
"#;

const CLAUDE_PROJECT: &str = r#"{
  "permissions": {
    "allow": ["Bash(make:*)"],
    "deny": ["Bash(docker push:*)"]
  }
}
"#;

const CLAUDE_LOCAL: &str = r#"{"permissions": {"allow": ["Bash(./scripts/dev.sh)"]}}
"#;

const GEMINI_USER: &str = r#"# My rules for Gemini CLI.
[[rule]]
toolName = "run_shell_command"
commandPrefix = "git"
decision = "allow"
priority = 100

[[rule]]
toolName = "run_shell_command"
commandRegex = "npm (test|run lint)"
decision = "allow"
priority = 100

[[rule]]
toolName = "run_shell_command"
commandPrefix = ["git push", "rm -rf"]
decision = "deny"
priority = 200
denyMessage = "Not from an agent."

[[rule]]
toolName = "run_shell_command"
commandPrefix = "kubectl"
decision = "ask_user"
priority = 50

[[rule]]
toolName = ["write_file", "replace"]
decision = "ask_user"
priority = 10

[[rule]]
toolName = "run_shell_command"
commandPrefix = "make deploy"
decision = "allow"
priority = 10
modes = ["yolo"]
"#;

/// A home with Claude Code's user settings, and a project with its shared and local
/// settings in the working directory.
fn claude_env() -> TestEnv {
    let t = TestEnv::new();
    put(&t.home.join(".claude/settings.json"), CLAUDE_USER);
    put(&t.work.join(".claude/settings.json"), CLAUDE_PROJECT);
    put(&t.work.join(".claude/settings.local.json"), CLAUDE_LOCAL);
    t
}

fn gemini_env() -> TestEnv {
    let t = TestEnv::new();
    put(&t.home.join(".gemini/policies/mine.toml"), GEMINI_USER);
    t
}

fn put(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn import_file(t: &TestEnv, agent: &str) -> PathBuf {
    t.config.join(format!("gate/config.d/import-{agent}.toml"))
}

/// The table's blocks: (outcome, said, the source rule) → the block's text.
fn blocks(table: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in table.lines() {
        if line.starts_with(' ') {
            if let Some((_, body)) = out.last_mut() {
                body.push_str(line.trim());
                body.push('\n');
            }
        } else if !line.contains(" rules found: ") {
            let head = line.split_whitespace().collect::<Vec<_>>().join(" ");
            out.push((head, String::new()));
        }
    }
    out
}

#[track_caller]
fn block<'a>(table: &'a [(String, String)], head: &str) -> &'a str {
    table
        .iter()
        .find(|(h, _)| h == head)
        .map(|(_, b)| b.as_str())
        .unwrap_or_else(|| panic!("no `{head}` in the table: {table:#?}"))
}

#[test]
fn claude_rules_are_imported_narrowed_and_dropped_as_the_table_says() {
    let t = claude_env();
    let out = t.gate().args(["import", "claude"]).run();
    out.assert_code(0);
    let table = blocks(&out.stdout());
    let user = t.home.join(".claude/settings.json");
    let at = |line: u32| format!("at {}:{line}", user.display());

    let b = block(&table, "imported allow Bash(npm run test:*)");
    assert!(
        b.contains(&at(6)) && b.contains("as allow npm run test\n"),
        "{b}"
    );
    let b = block(&table, "imported allow Bash(git status)");
    assert!(b.contains("as allow git status (exact)"), "{b}");
    let b = block(&table, "imported allow Bash(cargo build *)");
    assert!(b.contains("as allow cargo build\n"), "{b}");
    let b = block(&table, "narrowed allow Bash(ls*)");
    assert!(b.contains(&at(9)) && b.contains("as allow ls:"), "{b}");
    let b = block(&table, "dropped allow Bash(git * main)");
    assert!(
        b.contains(&at(8)) && b.contains("a `*` inside the pattern"),
        "{b}"
    );
    for tool in ["Read(~/.zshrc)", "WebFetch(domain:docs.rs)"] {
        let b = block(&table, &format!("dropped allow {tool}"));
        assert!(b.contains("not a shell rule"), "{b}");
    }
    assert!(block(&table, "dropped deny Read(./.env)").contains("not a shell rule"));
    assert!(block(&table, "imported ask Bash(git push:*)").contains("as ask git push\n"));
    let b = block(&table, "broadened ask Bash(npm publish)");
    assert!(b.contains("as ask npm publish:"), "{b}");
    assert!(block(&table, "imported deny Bash(rm -rf:*)").contains("as deny rm -rf\n"));
    assert!(block(&table, "imported deny Bash(curl:*)").contains("as deny curl\n"));
    // The project's deny rule is imported; its allow rules wait for --project.
    assert!(
        block(&table, "imported deny Bash(docker push:*) (project)")
            .contains("as deny docker push\n")
    );
    for head in [
        "dropped allow Bash(make:*) (project)",
        "dropped allow Bash(./scripts/dev.sh) (project, local)",
    ] {
        assert!(
            block(&table, head).contains("only with --project"),
            "{head}"
        );
    }
    assert!(
        out.stdout()
            .contains("15 rules found: 7 imported, 1 narrowed, 1 broadened, 0 asked, 6 dropped"),
        "{}",
        out.stdout()
    );
    // A dry run writes nothing and says how to write.
    assert!(!import_file(&t, "claude").exists());
    out.assert_stderr_contains("nothing was written (a dry run); --save writes");

    let out = t.gate().args(["import", "claude", "--project"]).run();
    out.assert_code(0);
    let table = blocks(&out.stdout());
    block(&table, "imported allow Bash(make:*) (project)");
    let b = block(
        &table,
        "imported allow Bash(./scripts/dev.sh) (project, local)",
    );
    assert!(b.contains("as allow ./scripts/dev.sh (exact)"), "{b}");
}

#[test]
fn a_saved_import_is_gates_own_file_and_gate_rules_shows_where_each_rule_came_from() {
    let t = claude_env();
    let own = "level = \"ask\"\nallow = [\"echo hi\"] # mine\n";
    let mine = t.write_user_config(own);
    let out = t.gate().args(["import", "claude", "--save"]).run();
    out.assert_code(0);
    let file = import_file(&t, "claude");
    out.assert_stderr_contains(&format!("wrote {}", file.display()));
    // The person's own file is untouched.
    assert_eq!(fs::read_to_string(&mine).unwrap(), own);
    let text = fs::read_to_string(&file).unwrap();
    let user = t.home.join(".claude/settings.json").display().to_string();
    for line in [
        format!("  {{ rule = \"npm run test\", from = \"{user}:6\" }},"),
        format!("  {{ rule = \"git status\", exact = true, from = \"{user}:7\" }},"),
        format!("  {{ rule = \"git push\", from = \"{user}:14\" }},"),
        format!("  {{ rule = \"rm -rf\", from = \"{user}:16\" }},"),
    ] {
        assert!(text.contains(&line), "{line}\n{text}");
    }
    assert!(
        !text.contains("make"),
        "a project allow without --project: {text}"
    );

    let rules = t.gate().arg("rules").run();
    rules.assert_code(0);
    rules.assert_stdout_contains(&format!("imported from {user}:6)"));
    rules.assert_stdout_contains(&file.display().to_string());
    // The imported policy decides: the exact rule allows only its own command.
    t.gate()
        .args(["check", "-c", "git status"])
        .run()
        .assert_code(0);
    t.gate()
        .args(["check", "-c", "git status -s"])
        .run()
        .assert_stdout_contains("decision: ask\n");
    t.gate()
        .args(["--level", "full", "check", "-c", "rm -rf /"])
        .run()
        .assert_code(2);

    // A second import replaces the file: a rule gone from the source is gone from gate.
    put(
        &t.home.join(".claude/settings.json"),
        &CLAUDE_USER.replace("\"Bash(curl:*)\",", ""),
    );
    t.gate()
        .args(["import", "claude", "--save"])
        .run()
        .assert_code(0);
    let text = fs::read_to_string(&file).unwrap();
    assert!(!text.contains("\"curl\""), "{text}");
    assert!(text.contains("\"rm -rf\""), "{text}");
    // No temporary file is left beside it, and none would be loaded (hidden).
    let names: Vec<_> = fs::read_dir(file.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, [OsString::from("import-claude.toml")]);
}

#[test]
fn a_deny_gate_cannot_express_stops_the_import_and_keeps_the_previous_file() {
    let t = claude_env();
    t.gate()
        .args(["import", "claude", "--save"])
        .run()
        .assert_code(0);
    let file = import_file(&t, "claude");
    let before = fs::read_to_string(&file).unwrap();
    let settings = t.home.join(".claude/settings.json");
    put(
        &settings,
        &CLAUDE_USER.replace("\"Bash(curl:*)\",", "\"Bash(git * main)\","),
    );
    let out = t.gate().args(["import", "claude", "--save"]).run();
    out.assert_code(GATE_ERROR);
    assert_eq!(
        out.stderr().lines().next().unwrap_or(""),
        format!(
            "gate: import: {}:17: `Bash(git * main)`: a `*` that is not a trailing word \
             wildcard: gate's rules are word prefixes and cannot refuse exactly these \
             commands, and a broader rule would refuse far more; rewrite it as a prefix \
             (`git push:*`) or write the gate rule you want yourself; nothing was written",
            settings.display()
        )
    );
    assert!(out.stdout().is_empty(), "no table for a failed import");
    assert_eq!(fs::read_to_string(&file).unwrap(), before);
}

#[test]
fn an_import_the_lock_forbids_is_put_back_and_says_why() {
    let t = claude_env();
    let system = t.write("system.toml", "lock = true\nlevel = \"ask\"\n");
    let out = t
        .gate()
        .args(["import", "claude", "--save", "--system-file"])
        .arg(&system)
        .run();
    // --system-file is check's and doctor's; import refuses what it does not take.
    out.assert_code(GATE_ERROR);
    assert!(!import_file(&t, "claude").exists());

    // Under a lock in the installed place's stead: the user layer may not add allow
    // rules, so the loader refuses the written file and the import puts it back.
    let drop_ins = t.root.join("system.d");
    fs::create_dir(&drop_ins).unwrap();
    fs::write(drop_ins.join("10-lock.toml"), "lock = true\n").unwrap();
    let out = t
        .gate()
        .args(["import", "claude", "--save", "--system-drop-ins"])
        .arg(&drop_ins)
        .run();
    out.assert_code(GATE_ERROR);
    out.assert_stderr_contains("with the imported rules the configuration does not load");
    out.assert_stderr_contains("the previous files were put back");
    assert!(!import_file(&t, "claude").exists());
}

#[test]
fn gemini_prefixes_are_narrowed_as_allows_and_need_whole_words_as_denies() {
    let t = gemini_env();
    let policy = t.home.join(".gemini/policies/mine.toml");
    let out = t.gate().args(["import", "gemini"]).run();
    out.assert_code(GATE_ERROR);
    out.assert_stderr_contains(&format!(
        "gate: import: {}:14: Gemini CLI refuses the text `git push` followed by a space, a \
         quote or the end",
        policy.display()
    ));
    out.assert_stderr_contains("--whole-words");

    let out = t.gate().args(["import", "gemini", "--whole-words"]).run();
    out.assert_code(0);
    let table = blocks(&out.stdout());
    let head = |outcome: &str, said: &str, first: &str| {
        table
            .iter()
            .find(|(h, _)| h.starts_with(&format!("{outcome} {said} toolName = {first}")))
            .map(|(h, b)| format!("{h}\n{b}"))
            .unwrap_or_else(|| panic!("no {outcome} {said} {first}: {table:#?}"))
    };
    let git = head(
        "narrowed",
        "allow",
        "\"run_shell_command\"; commandPrefix = \"git\"",
    );
    assert!(git.contains(&format!("at {}:2", policy.display())), "{git}");
    assert!(
        git.contains("as allow git: `git` as a whole word only"),
        "{git}"
    );
    let regex = head("dropped", "allow", "\"run_shell_command\"; commandRegex");
    assert!(regex.contains("a regular expression"), "{regex}");
    let deny = head(
        "broadened",
        "deny",
        "\"run_shell_command\"; commandPrefix = [",
    );
    assert!(deny.contains("as deny git push:"), "{deny}");
    assert!(deny.contains("--whole-words"), "{deny}");
    let ask = head(
        "broadened",
        "ask",
        "\"run_shell_command\"; commandPrefix = \"kubectl\"",
    );
    assert!(ask.contains("as ask kubectl:"), "{ask}");
    let files = head("dropped", "ask", "[\"write_file\"");
    assert!(files.contains("not a shell rule"), "{files}");
    let yolo = head(
        "dropped",
        "allow",
        "\"run_shell_command\"; commandPrefix = \"make deploy\"",
    );
    assert!(yolo.contains("only in the modes yolo"), "{yolo}");
    assert!(
        out.stdout()
            .contains("7 rules found: 0 imported, 1 narrowed, 3 broadened, 0 asked, 3 dropped"),
        "{}",
        out.stdout()
    );
}

#[test]
fn print_shows_the_file_and_writes_nothing() {
    let t = gemini_env();
    let out = t
        .gate()
        .args(["import", "gemini", "--whole-words", "--print"])
        .run();
    out.assert_code(0);
    let file = import_file(&t, "gemini");
    assert!(!file.exists());
    let stdout = out.stdout();
    assert!(
        stdout.starts_with(&format!("# {}\n", file.display())),
        "{stdout}"
    );
    assert!(
        stdout.contains("deny = [\n  { rule = \"git push\", from = "),
        "{stdout}"
    );
    // The table went to stderr.
    out.assert_stderr_contains("narrowed   allow");
}

#[test]
fn named_files_are_read_instead_and_must_be_there() {
    let t = TestEnv::new();
    let file = t.write("elsewhere.json", CLAUDE_PROJECT);
    let out = t.gate().args(["import", "claude"]).arg(&file).run();
    out.assert_code(0);
    // A named file is the person's own: its allow rule is imported.
    assert!(
        blocks(&out.stdout())
            .iter()
            .any(|(h, _)| h == "imported allow Bash(make:*)")
    );
    let out = t
        .gate()
        .args(["import", "claude"])
        .arg(t.root.join("absent.json"))
        .run();
    out.assert_code(GATE_ERROR);
    out.assert_stderr_contains("absent.json: cannot read it");
    let out = t.gate().args(["import", "claude"]).run();
    out.assert_code(GATE_ERROR);
    out.assert_stderr_contains("none of claude's files is here");
    // A FIFO where a project's settings file would be: refused at once, not waited on.
    fs::create_dir_all(t.work.join(".claude")).unwrap();
    let fifo = t.work.join(".claude/settings.json");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
    let out = t.gate().args(["import", "claude"]).run();
    out.assert_code(GATE_ERROR);
    out.assert_stderr_contains(&format!("{}: not a regular file", fifo.display()));
    let out = t.gate().args(["import", "aider"]).run();
    out.assert_code(GATE_ERROR);
    out.assert_stderr_contains("gate imports from claude, codex, gemini, not aider");
}

// ---------------------------------------------------------------------------------------
// The promise, through the real loader and decision.

/// The policy gate loads in `t` at `level`, as a run there would.
fn policy(t: &TestEnv, level: &str) -> gate::policy::Policy {
    let vars = [
        ("HOME", t.home.clone()),
        ("XDG_CONFIG_HOME", t.config.clone()),
    ];
    let var = |name: &str| {
        vars.iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone().into_os_string())
    };
    let args = gate::invocation::GateArgs {
        level: Some(level.into()),
        ..Default::default()
    };
    gate::config::load(&args, &gate::config::Environment { var: &var })
        .unwrap()
        .policy
}

fn allowed(policy: &gate::policy::Policy, command: &str) -> bool {
    let text = gate::policy::CommandText::new(command);
    let decision = gate::policy::decide(
        policy,
        &gate::policy::Remembered::new(),
        gate::policy::Request::Command(&text),
        &gate::policy::readonly::Files::new(Vec::new()),
    );
    matches!(decision, gate::policy::Decision::Allow(_))
}

/// What follows a source rule's words in a command it matches: nothing, or a space and
/// arguments (options, paths, words the rule's own words could be confused with).
fn tail() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        proptest::collection::vec(
            prop_oneof![
                Just("-f".to_owned()),
                Just("--force".to_owned()),
                Just("/".to_owned()),
                Just("~/x".to_owned()),
                Just("origin".to_owned()),
                Just("main".to_owned()),
                "[a-z0-9._/=-]{1,8}",
            ],
            1..5
        )
        .prop_map(|words| format!(" {}", words.join(" "))),
    ]
}

/// Around a command the source matched: alone, or as a part of a compound command (both
/// agents split those and judge each part).
fn around() -> impl Strategy<Value = (String, String)> {
    prop_oneof![
        Just((String::new(), String::new())),
        Just(("cd /tmp && ".to_owned(), String::new())),
        Just((String::new(), "; echo done".to_owned())),
        Just(("true || ".to_owned(), " | cat".to_owned())),
    ]
}

/// The words of each deny and ask rule in the sources, as the sources match them.
const CLAUDE_HELD_BACK: [&str; 5] = ["git push", "npm publish", "rm -rf", "curl", "docker push"];
const GEMINI_HELD_BACK: [&str; 3] = ["git push", "rm -rf", "kubectl"];

fn held_back_case() -> impl Strategy<Value = (usize, String, (String, String))> {
    (
        0..CLAUDE_HELD_BACK.len().max(GEMINI_HELD_BACK.len()),
        tail(),
        around(),
    )
}

/// Both imports saved once, and the policies at each level, for the property below.
struct Imported {
    claude: Vec<gate::policy::Policy>,
    gemini: Vec<gate::policy::Policy>,
    control: gate::policy::Policy,
    _envs: [TestEnv; 3],
}

fn imported() -> &'static Imported {
    use std::sync::OnceLock;
    static IMPORTED: OnceLock<Imported> = OnceLock::new();
    IMPORTED.get_or_init(|| {
        let claude = claude_env();
        claude
            .gate()
            .args(["import", "claude", "--save", "--project"])
            .run()
            .assert_code(0);
        let gemini = gemini_env();
        gemini
            .gate()
            .args(["import", "gemini", "--save", "--whole-words"])
            .run()
            .assert_code(0);
        let control = TestEnv::new();
        let levels = ["ask", "safe", "full"];
        Imported {
            claude: levels.iter().map(|l| policy(&claude, l)).collect(),
            gemini: levels.iter().map(|l| policy(&gemini, l)).collect(),
            control: policy(&control, "full"),
            _envs: [claude, gemini, control],
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    /// Every command a source's deny or ask rule matched is refused or asked about by
    /// the imported policy at every level that runs commands, and (the control) the same
    /// command is allowed at level full without the import.
    #[test]
    fn nothing_a_source_denied_or_asked_about_is_allowed_by_the_imported_policy(
        (which, tail, (before, after)) in held_back_case()
    ) {
        let imported = imported();
        for (words, policies) in [
            (CLAUDE_HELD_BACK[which % CLAUDE_HELD_BACK.len()], &imported.claude),
            (GEMINI_HELD_BACK[which % GEMINI_HELD_BACK.len()], &imported.gemini),
        ] {
            let command = format!("{before}{words}{tail}{after}");
            for policy in policies {
                prop_assert!(
                    !allowed(policy, &command),
                    "{command:?} is allowed at level {}",
                    policy.level
                );
            }
            prop_assert!(allowed(&imported.control, &command), "control: {command:?}");
        }
    }
}

/// The imported allow rules do allow, at level ask: the import is not just refusing.
#[test]
fn the_imported_allow_rules_allow_what_they_should_and_no_more() {
    let imported = imported();
    let claude_ask = &imported.claude[0];
    for command in [
        "npm run test",
        "npm run test -- --watch",
        "git status",
        "ls -la",
        "cargo build --release",
        "make all",
        "./scripts/dev.sh",
    ] {
        assert!(allowed(claude_ask, command), "{command}");
    }
    for command in [
        "git status -s",
        "git push origin main",
        "lsof",
        "npm run test; rm -rf /",
        "./scripts/dev.sh --prod",
        "git checkout main",
    ] {
        assert!(!allowed(claude_ask, command), "{command}");
    }
    let gemini_ask = &imported.gemini[0];
    assert!(allowed(gemini_ask, "git log"));
    for command in ["gitk", "git\"k\"", "git push", "npm test", "make deploy"] {
        assert!(!allowed(gemini_ask, command), "{command}");
    }
}

/// As an unprivileged user (uid 65534 when the tests run as root): the import reads the
/// user's files, writes the user's own layer, and the next command of that user loads it.
#[test]
fn an_unprivileged_user_imports_into_its_own_layer() {
    let t = claude_env();
    let out = t
        .gate()
        .user(User::Unprivileged)
        .args(["import", "claude", "--save"])
        .run();
    out.assert_code(0);
    let file = import_file(&t, "claude");
    assert!(file.exists(), "{}", out.report());
    t.gate()
        .user(User::Unprivileged)
        .args(["--level", "full", "check", "-c", "curl http://example.org"])
        .run()
        .assert_code(2)
        .assert_stdout_contains("imported from");
    t.gate()
        .user(User::Unprivileged)
        .args(["check", "-c", "npm run test"])
        .run()
        .assert_code(0);
}
