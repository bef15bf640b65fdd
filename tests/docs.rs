//! The documentation stays in step with the binary: every option gate parses is in the
//! man page, the man page renders without warnings, and the README's test command is the
//! one CI runs.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use common::{TestEnv, require_program};

const MAN_PAGES: [&str; 2] = ["man/gate.1", "man/gate.toml.5"];

fn repo_file(path: &str) -> String {
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("cannot read {}: {e}", full.display()))
}

/// gate's own options, as `gate --help` lists them.
fn options_from_help() -> Vec<String> {
    let env = TestEnv::new();
    let out = env.gate().arg("--help").run();
    out.assert_code(0);
    let mut options: Vec<String> = out
        .stdout()
        .split_whitespace()
        .filter(|w| w.starts_with("--") && w.len() > 2)
        .map(|w| {
            w.trim_end_matches([',', '.', ')', ':'])
                .split('=')
                .next()
                .unwrap_or(w)
                .to_owned()
        })
        .filter(|w| {
            w.chars()
                .skip(2)
                .all(|c| c.is_ascii_lowercase() || c == '-')
        })
        .collect();
    options.sort();
    options.dedup();
    assert!(
        options.len() >= 11,
        "too few options found in --help: {options:?}"
    );
    options
}

#[test]
fn every_option_in_help_is_in_the_man_page() {
    let man = repo_file("man/gate.1");
    // roff escapes the hyphens of options as \-.
    let man = man.replace("\\-", "-");
    for option in options_from_help() {
        assert!(
            man.contains(&option),
            "man/gate.1 does not mention {option}"
        );
    }
    for word in [
        "check",
        "--json",
        "GATE_LEVEL",
        "GATE_LOG",
        "125",
        "126",
        "127",
    ] {
        assert!(man.contains(word), "man/gate.1 does not mention {word}");
    }
}

#[test]
fn the_man_pages_render_without_warnings() {
    let groff = require_program("groff");
    let mandoc = require_program("mandoc");
    for page in MAN_PAGES {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(page);
        let out = Command::new(&groff)
            .args(["-man", "-ww", "-z"])
            .arg(&path)
            .output()
            .expect("groff runs");
        assert!(out.status.success(), "groff failed on {page}: {out:?}");
        assert!(
            out.stderr.is_empty() && out.stdout.is_empty(),
            "groff warns about {page}:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // mandoc's linter is stricter about structure; style notes (long source
        // lines) are below its warning level and allowed.
        let out = Command::new(&mandoc)
            .args(["-T", "lint", "-W", "warning"])
            .arg(&path)
            .output()
            .expect("mandoc runs");
        assert!(
            out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(),
            "mandoc -T lint warns about {page}:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn ci_runs_the_test_command_the_readme_gives() {
    let readme = repo_file("README.md");
    let ci = repo_file(".ci/run");
    assert!(
        readme.contains("cargo test"),
        "README.md gives no test command"
    );
    assert!(
        ci.lines().any(|l| l.trim() == "cargo test"),
        ".ci/run does not run `cargo test`"
    );
}

#[test]
fn gate_log_debug_explains_the_decision_on_stderr() {
    let env = TestEnv::new();
    let out = env
        .gate()
        .env("GATE_LOG", "debug")
        .args([
            "--no-config",
            "--audit-log",
            "off",
            "--level",
            "full",
            "-c",
            "echo hi",
        ])
        .run();
    out.assert_code(0).assert_stdout("hi\n");
    let err = out.stderr();
    assert!(err.contains("configuration loaded"), "{err}");
    assert!(err.contains("decided"), "{err}");
    assert!(err.contains("exec"), "{err}");
}

#[test]
fn without_gate_log_gate_is_silent() {
    let env = TestEnv::new();
    let out = env
        .gate()
        .args([
            "--no-config",
            "--audit-log",
            "off",
            "--level",
            "full",
            "-c",
            "echo hi",
        ])
        .run();
    out.assert_code(0)
        .assert_stdout("hi\n")
        .assert_stderr_empty();
}

/// The block that follows `marker` in README.md, between the next pair of ``` fences.
fn readme_block_after(readme: &str, marker: &str) -> String {
    let start = readme
        .find(marker)
        .unwrap_or_else(|| panic!("README.md no longer contains {marker:?}"));
    let rest = &readme[start..];
    let open = rest.find("```").expect("a code block after the marker");
    let body_start = open + rest[open..].find('\n').expect("a fence line") + 1;
    let close = rest[body_start..].find("```").expect("a closing fence");
    rest[body_start..body_start + close].to_owned()
}

#[test]
fn the_readme_demo_prints_what_the_readme_says() {
    let readme = repo_file("README.md");
    let demo = readme_block_after(&readme, "build gate and watch it work");
    let expected = readme_block_after(&readme, "That prints:");
    let line = demo.trim();
    let script = line
        .strip_prefix("cargo build -q && ")
        .unwrap_or_else(|| panic!("the demo no longer starts with the build: {line}"))
        .replace("g=target/debug/gate", &format!("g='{}'", common::GATE));
    let env = TestEnv::new();
    let out = env
        .gate()
        .program("/bin/sh")
        .arg0("sh")
        .args(["-c", &format!("{script} 2>&1")])
        .run();
    assert_eq!(out.stdout(), expected, "the README demo's output changed");
}

// ---------------------------------------------------------------------------------------
// The manual pages cover what the code defines.

/// Roff text as a reader sees it: escapes resolved, font changes dropped.
fn unroff(text: &str) -> String {
    let mut out = text.to_owned();
    for (from, to) in [
        ("\\-", "-"),
        ("\\(aq", "'"),
        ("\\(dq", "\""),
        ("\\(ga", "`"),
        ("\\(ti", "~"),
        ("\\(lq", "\""),
        ("\\(rq", "\""),
        ("\\(bu", "*"),
        ("\\fB", ""),
        ("\\fI", ""),
        ("\\fR", ""),
        ("\\fP", ""),
        ("\\&", ""),
        ("\\%", ""),
        ("\\e", "\\"),
    ] {
        out = out.replace(from, to);
    }
    out
}

/// The arguments of a macro line (`.B a "b c" d`), unescaped; for a text line, its words.
fn macro_words(line: &str) -> Vec<String> {
    let body = match line.strip_prefix('.') {
        Some(rest) => rest.split_once(char::is_whitespace).map_or("", |(_, a)| a),
        None => line,
    };
    let mut args = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for c in body.chars() {
        match c {
            '"' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => {
                if !current.is_empty() {
                    args.push(std::mem::take(&mut current));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        args.push(current);
    }
    args.iter()
        .flat_map(|a| {
            unroff(a)
                .split_whitespace()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The tags of a page's tagged paragraphs: the words of each line after `.TP` or `.TQ`.
fn tags(page: &str) -> Vec<Vec<String>> {
    let lines: Vec<&str> = page.lines().collect();
    lines
        .windows(2)
        .filter(|w| w[0].trim() == ".TP" || w[0].trim() == ".TQ")
        .map(|w| macro_words(w[1]))
        .collect()
}

/// The lines of one section (`.SH NAME` up to the next `.SH`).
fn section<'a>(page: &'a str, name: &str) -> Vec<&'a str> {
    let mut lines = page
        .lines()
        .skip_while(|l| l.trim() != format!(".SH {name}"));
    assert!(lines.next().is_some(), "the page has no section {name}");
    lines.take_while(|l| !l.starts_with(".SH ")).collect()
}

/// Every long and short option of a clap command, as `--name` / `-c`.
fn option_names(command: &clap::Command) -> Vec<String> {
    command
        .get_arguments()
        .flat_map(|a| {
            let long = a.get_long().map(|l| format!("--{l}"));
            let short = a.get_short().map(|c| format!("-{c}"));
            long.into_iter().chain(short)
        })
        .collect()
}

#[test]
fn every_option_and_subcommand_of_the_cli_has_an_entry_in_gate_1() {
    let page = repo_file("man/gate.1");
    let tags = tags(&page);
    let command = gate::cli::command();
    let top: Vec<String> = option_names(&command);
    let has_tag = |first: &str| tags.iter().any(|t| t.first().is_some_and(|w| w == first));

    // Every option, of gate and of each subcommand, is the tag of a paragraph.
    let mut all = top.clone();
    for sub in command.get_subcommands() {
        all.extend(option_names(sub));
    }
    all.sort();
    all.dedup();
    assert!(all.len() > 25, "too few options found: {all:?}");
    for option in &all {
        assert!(
            has_tag(option),
            "man/gate.1 has no entry for the option {option}"
        );
    }

    let synopsis_forms: Vec<Vec<String>> = section(&page, "SYNOPSIS")
        .split(|l| l.trim() == ".br")
        .map(|form| form.iter().flat_map(|l| macro_words(l)).collect())
        .collect();
    let names: Vec<&str> = command.get_subcommands().map(|s| s.get_name()).collect();
    for name in [
        "check",
        "doctor",
        "serve",
        "pending",
        "approve",
        "deny",
        "watch",
        "ask",
        "completions",
    ] {
        assert!(
            names.contains(&name),
            "cli::command() lacks {name}: {names:?}"
        );
    }
    for sub in command.get_subcommands() {
        let name = sub.get_name();
        // An entry `gate NAME ...` under SUBCOMMANDS.
        assert!(
            tags.iter()
                .any(|t| t.len() >= 2 && t[0] == "gate" && t[1] == name),
            "man/gate.1 has no `gate {name}` entry"
        );
        // A form in the SYNOPSIS with the subcommand's own options and operands.
        let form = synopsis_forms
            .iter()
            .find(|f| f.first().is_some_and(|w| w == "gate") && f.iter().any(|w| w == name))
            .unwrap_or_else(|| panic!("the SYNOPSIS of man/gate.1 has no form for gate {name}"));
        for arg in sub.get_arguments() {
            let long = arg.get_long().map(|l| format!("--{l}"));
            if arg.get_id() == "help" || long.as_ref().is_some_and(|l| top.contains(l)) {
                continue;
            }
            let mut expected: Vec<String> = option_names_of(arg);
            if arg.is_positional() {
                let values: Vec<String> = arg
                    .get_possible_values()
                    .iter()
                    .map(|v| v.get_name().to_owned())
                    .collect();
                if values.is_empty() {
                    let value = arg
                        .get_value_names()
                        .and_then(|v| v.first())
                        .map(|v| v.to_lowercase())
                        .unwrap_or_else(|| arg.get_id().to_string());
                    expected.push(value);
                } else {
                    expected.extend(values);
                }
            }
            for word in expected {
                assert!(
                    form.iter()
                        .any(|w| w.trim_matches(|c| "[]().,|".contains(c)) == word),
                    "the SYNOPSIS form for gate {name} lacks {word}: {form:?}"
                );
            }
        }
    }
}

fn option_names_of(arg: &clap::Arg) -> Vec<String> {
    let long = arg.get_long().map(|l| format!("--{l}"));
    let short = arg.get_short().map(|c| format!("-{c}"));
    long.into_iter().chain(short).collect()
}

#[test]
fn the_approval_statuses_and_files_are_in_gate_1() {
    let page = unroff(&repo_file("man/gate.1"));
    for word in [
        "answered",
        "already settled",
        "not found",
        "broker.sock",
        "broker.sock.token",
        "$XDG_RUNTIME_DIR/gate",
        "/tmp/gate-UID",
        "GATE_SOCKET",
        "GATE_TIMEOUT",
        "GATE_SESSION",
        "/usr/lib/gate/bin/",
        "gate.toml (5)",
    ] {
        let word = word.replace("gate.toml (5)", "gate.toml");
        assert!(page.contains(&word), "man/gate.1 does not mention {word}");
    }
}

/// The configuration tables and the key lists src/config.rs checks them against.
fn config_tables() -> Vec<(&'static str, &'static [&'static str])> {
    vec![
        ("approval", gate::config::APPROVAL_KEYS),
        ("audit", gate::config::AUDIT_KEYS),
        ("sandbox", gate::config::SANDBOX_KEYS),
    ]
}

/// Every key a configuration file may hold, dotted (`audit.log`).
fn all_config_keys() -> Vec<String> {
    let tables = config_tables();
    let mut keys = Vec::new();
    for top in gate::config::TOP_KEYS {
        match tables.iter().find(|(t, _)| t == top) {
            Some((table, subs)) => keys.extend(subs.iter().map(|k| format!("{table}.{k}"))),
            None => keys.push((*top).to_owned()),
        }
    }
    for (table, _) in &tables {
        assert!(
            gate::config::TOP_KEYS.contains(table),
            "[{table}] is no longer a key of src/config.rs; update this test"
        );
    }
    assert!(keys.len() >= 17, "too few keys: {keys:?}");
    keys
}

/// The keys set in a TOML text, dotted, by reading `[table]` headers and `key =` lines.
fn keys_set_in(toml: &str) -> Vec<String> {
    let mut table: Option<String> = None;
    let mut keys = Vec::new();
    for line in toml.lines().map(str::trim) {
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.split(']').next()) {
            table = Some(name.trim().to_owned());
        } else if let Some((key, _)) = line.split_once('=') {
            if !line.starts_with('#') {
                let key = key.trim();
                keys.push(match &table {
                    Some(t) => format!("{t}.{key}"),
                    None => key.to_owned(),
                });
            }
        }
    }
    keys
}

#[test]
fn every_configuration_key_has_an_entry_in_gate_toml_5() {
    let page = repo_file("man/gate.toml.5");
    let tags = tags(&page);
    for key in all_config_keys() {
        assert!(
            tags.iter().any(|t| t.first() == Some(&key)),
            "man/gate.toml.5 has no entry for the key {key}"
        );
    }
    for (table, _) in config_tables() {
        assert!(
            page.lines()
                .any(|l| l == format!(".SS The [{table}] table")),
            "man/gate.toml.5 has no section for [{table}]"
        );
    }
}

/// The first `.EX` ... `.EE` block of a section, as plain text.
fn example_block(page: &str, section_name: &str) -> String {
    let lines = section(page, section_name);
    let start = lines
        .iter()
        .position(|l| l.trim() == ".EX")
        .unwrap_or_else(|| panic!("no example in {section_name}"));
    let end = start
        + lines[start..]
            .iter()
            .position(|l| l.trim() == ".EE")
            .expect("the example ends");
    lines[start + 1..end]
        .iter()
        .map(|l| unroff(l) + "\n")
        .collect()
}

#[test]
fn the_complete_example_in_gate_toml_5_sets_every_key_and_is_accepted() {
    let example = example_block(&repo_file("man/gate.toml.5"), "EXAMPLE");
    let mut set = keys_set_in(&example);
    set.sort();
    let mut all = all_config_keys();
    all.sort();
    assert_eq!(
        set, all,
        "the complete example does not set exactly every key"
    );
    gate::config::parse_file(
        Path::new("/etc/gate/config.toml"),
        &example,
        gate::config::FileKind::System,
        Some(Path::new("/home/ci")),
    )
    .unwrap_or_else(|e| panic!("gate rejects the example of gate.toml(5): {e}\n{example}"));
}

// ---------------------------------------------------------------------------------------
// The names the documents use are the names the code reads, and the output they show is
// what the binary prints: the environment variables, the configuration keys, the header
// of `gate pending`, and the transcripts of commands that depend on nothing but their
// arguments.

/// The documents beside README.md at the top of the tree.
const TOP_LEVEL: [&str; 4] = [
    "ARCHITECTURE.md",
    "CONTRIBUTING.md",
    "SECURITY.md",
    "CHANGELOG.md",
];

/// The documents people read: README.md, the top-level ones, docs/*.md and the man
/// pages, as (name, text).
fn documents() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ exists")
        .map(|e| format!("docs/{}", e.unwrap().file_name().to_string_lossy()))
        .filter(|name| name.ends_with(".md"))
        .collect();
    names.sort();
    names.push("README.md".to_owned());
    names.extend(TOP_LEVEL.map(str::to_owned));
    names.extend(MAN_PAGES.map(str::to_owned));
    names
        .into_iter()
        .map(|name| {
            let text = repo_file(&name);
            let text = if name.starts_with("man/") {
                unroff(&text)
            } else {
                text
            };
            (name, text)
        })
        .collect()
}

/// Every `GATE_X` name in `text` (a bare `GATE_` or `GATE_*` is no name).
fn gate_names(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("GATE_") {
        let preceded = rest[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        let tail = &rest[at + "GATE_".len()..];
        let len = tail
            .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(tail.len());
        let name = tail[..len].trim_end_matches('_');
        if !preceded && !name.is_empty() {
            names.insert(format!("GATE_{name}"));
        }
        rest = &tail[len..];
    }
    names
}

/// A source file without its test modules. rustfmt (which CI enforces) puts the closing
/// brace of a top-level `mod tests {` alone at the start of a line.
fn without_test_modules(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let opens_test_module = line.trim() == "#[cfg(test)]"
            && lines
                .peek()
                .is_some_and(|next| next.starts_with("mod ") && next.ends_with('{'));
        if opens_test_module {
            for skipped in lines.by_ref() {
                if skipped == "}" {
                    break;
                }
            }
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The environment variables gate reads when it runs: every `"GATE_..."` string literal
/// in src/ outside test modules. Those read by the compiler (`option_env!`) are returned
/// apart: they set how gate is built, and no one running gate can set them.
fn env_vars_in_the_code() -> (BTreeSet<String>, BTreeSet<String>) {
    fn walk(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            // A test module split into files of its own (`#[cfg(test)] mod tests;` with
            // its body in a `tests/` directory), as `tests.rs` files are below.
            if path.is_dir() && path.file_name().is_some_and(|n| n == "tests") {
                continue;
            }
            if path.is_dir() {
                walk(&path, files);
            } else if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("tests.rs") {
                files.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    assert!(files.len() > 20, "too few source files: {files:?}");
    let (mut run_time, mut build_time) = (BTreeSet::new(), BTreeSet::new());
    for file in files {
        let text = without_test_modules(&std::fs::read_to_string(&file).unwrap());
        let mut rest = text.as_str();
        while let Some(at) = rest.find("\"GATE_") {
            let tail = &rest[at + 1..];
            let len = tail
                .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
                .unwrap_or(tail.len());
            if tail[len..].starts_with('"') {
                let name = tail[..len].to_owned();
                if rest[..at].ends_with("option_env!(") {
                    build_time.insert(name);
                } else {
                    run_time.insert(name);
                }
            }
            rest = &tail[len..];
        }
    }
    (run_time, build_time)
}

/// Names the documents may use although gate does not read them, and why.
const NAMES_THAT_ARE_NOT_VARIABLES: [(&str, &str); 2] = [
    (
        "GATE_ALLOW",
        "named to say that rules come from files and options only",
    ),
    (
        "GATE_DENY",
        "named to say that rules come from files and options only",
    ),
];

/// The journal fields of audit records (`GATE_CALL_ID`: docs/audit.md#the-system-journal),
/// which are not variables: one per key of docs/audit.md's field table.
fn journal_fields() -> BTreeSet<String> {
    let audit = repo_file("docs/audit.md");
    audit
        .lines()
        .skip_while(|l| *l != "## Fields")
        .take_while(|l| !l.starts_with("### "))
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .map(gate::audit::journal::field_name)
        .collect()
}

/// What a document must not say about a variable gate reads.
const NOT_IN_USE: [&str; 5] = [
    "not used yet",
    "not yet used",
    "not read yet",
    "not implemented",
    "has no effect yet",
];

#[test]
fn every_environment_variable_gate_reads_is_documented_and_none_other() {
    let (vars, build_time) = env_vars_in_the_code();
    assert!(vars.len() >= 8, "too few variables found in src/: {vars:?}");
    assert!(
        build_time.contains("GATE_SYSTEM_CONFIG"),
        "the scan no longer tells build-time variables apart: {build_time:?}"
    );

    // Each is really read: a value it cannot take stops gate, naming the variable.
    let env = TestEnv::new();
    // The control: without the variable, gate check judges the command (here: it needs
    // an approver and nobody can be asked, exit 2), rather than failing with 125.
    let control = env.gate().args(["check", "-c", "true"]).run();
    control.assert_code(2);
    for var in &vars {
        let out = env
            .gate()
            .env(var, "x=y=z")
            .args(["check", "-c", "true"])
            .run();
        assert!(
            out.code() == Some(common::GATE_ERROR)
                && out.stderr().starts_with(&format!("gate: {var}: ")),
            "src/ names {var}, but {var}=x=y=z did not stop gate with a message naming it; \
             if gate reads it without checking the value, give this test a value it refuses\n{}",
            out.report()
        );
    }

    // docs/configuration.md: its table of variables lists exactly these, none "not used".
    let doc = repo_file("docs/configuration.md");
    let table: Vec<&str> = doc
        .lines()
        .skip_while(|l| *l != "## Environment variables")
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| l.starts_with("| `GATE_"))
        .collect();
    let listed: BTreeSet<String> = table
        .iter()
        .map(|row| row.split('`').nth(1).unwrap().to_owned())
        .collect();
    assert_eq!(
        listed, vars,
        "the table in docs/configuration.md#environment-variables"
    );

    // man/gate.1: an ENVIRONMENT entry for each, and for no other GATE_ name.
    let page = repo_file("man/gate.1");
    let environment = section(&page, "ENVIRONMENT").join("\n");
    let entries: BTreeSet<String> = tags(&environment)
        .iter()
        .filter_map(|t| t.first())
        .filter(|w| w.starts_with("GATE_"))
        .cloned()
        .collect();
    assert_eq!(entries, vars, "the ENVIRONMENT entries of man/gate.1");

    // gate --help names exactly these; gate.toml(5) names each where it lists layers.
    let out = env.gate().arg("--help").run();
    out.assert_code(0);
    assert_eq!(
        gate_names(&out.stdout()),
        vars,
        "the variables in gate --help"
    );
    let toml5 = unroff(&repo_file("man/gate.toml.5"));
    assert_eq!(gate_names(&toml5), vars, "the variables in man/gate.toml.5");

    // Every document: no GATE_ name gate does not read (but the documented exceptions),
    // and no paragraph that names a variable gate reads calls it unused.
    let mut mentioned = BTreeSet::new();
    let journal_fields = journal_fields();
    assert!(
        journal_fields.contains("GATE_CALL_ID"),
        "{journal_fields:?}"
    );
    for (name, text) in documents() {
        for found in gate_names(&text) {
            assert!(
                vars.contains(&found)
                    || journal_fields.contains(&found)
                    || NAMES_THAT_ARE_NOT_VARIABLES
                        .iter()
                        .any(|(n, _)| *n == found),
                "{name} mentions {found}, which gate does not read"
            );
            mentioned.insert(found);
        }
        for paragraph in text.lines().chain(text.split("\n\n")) {
            let lower = paragraph.to_lowercase();
            if let Some(phrase) = NOT_IN_USE.iter().find(|p| lower.contains(*p)) {
                let named = gate_names(paragraph);
                assert!(
                    named.is_disjoint(&vars),
                    "{name} says {phrase:?} about {named:?}, which gate reads:\n{paragraph}"
                );
            }
        }
    }
    for (name, why) in NAMES_THAT_ARE_NOT_VARIABLES {
        assert!(!vars.contains(name), "{name} is read now; document it");
        assert!(
            mentioned.contains(name),
            "no document mentions {name} any more ({why}); drop it from this list"
        );
    }
    assert!(vars.is_subset(&mentioned), "{vars:?} vs {mentioned:?}");
}

/// The backquoted words of `text`, brackets dropped (`[audit]` is `audit`).
fn backquoted(text: &str) -> BTreeSet<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(|w| w.trim_matches(['[', ']']).to_owned())
        .collect()
}

/// The text of a Markdown document from the line `heading` to the next heading of the
/// same or a higher level.
fn md_section<'a>(doc: &'a str, heading: &str) -> Vec<&'a str> {
    let level = heading.split(' ').next().unwrap();
    let mut lines = doc.lines().skip_while(|l| *l != heading);
    assert!(lines.next().is_some(), "no heading {heading:?}");
    lines
        .take_while(|l| {
            let hashes = l.split(' ').next().unwrap_or("");
            !(hashes.chars().all(|c| c == '#') && !hashes.is_empty() && hashes.len() <= level.len())
        })
        .collect()
}

#[test]
fn the_key_lists_in_the_docs_are_the_keys_gate_accepts() {
    let top: BTreeSet<String> = gate::config::TOP_KEYS
        .iter()
        .map(|k| (*k).to_owned())
        .collect();
    let all: BTreeSet<String> = all_config_keys().into_iter().collect();
    let doc = repo_file("docs/configuration.md");

    // "Top-level keys: ..." in docs/configuration.md and in gate.toml(5).
    let format = md_section(&doc, "## The file format").join("\n");
    let start = format
        .find("Top-level keys:")
        .expect("a list of top-level keys");
    let sentence = &format[start..start + format[start..].find(". ").unwrap()];
    assert_eq!(
        backquoted(sentence),
        top,
        "docs/configuration.md: {sentence}"
    );
    let page = repo_file("man/gate.toml.5");
    let words: BTreeSet<String> = section(&page, "FORMAT")
        .iter()
        .skip_while(|l| !l.starts_with("Top\\-level keys:"))
        .skip(1)
        .take_while(|l| !l.starts_with("A dotted key"))
        .flat_map(|l| macro_words(l))
        .map(|w| w.trim_matches(|c| "[]().,".contains(c)).to_owned())
        .filter(|w| !["", "and", "the", "tables"].contains(&w.as_str()))
        .collect();
    assert_eq!(
        words, top,
        "the top-level keys under FORMAT in man/gate.toml.5"
    );

    // The table under "## Keys": every key, and only keys.
    let rows: BTreeSet<String> = md_section(&doc, "## Keys")
        .iter()
        .filter(|l| l.starts_with("| `"))
        .map(|l| l.split('`').nth(1).unwrap().to_owned())
        .collect();
    assert_eq!(
        rows, all,
        "the table under ## Keys in docs/configuration.md"
    );

    // A heading for each key: `### `key`` for a top-level one (several may share one),
    // `### `[table]`: `a`, `b`` naming exactly the table's keys.
    let headings: Vec<&str> = doc.lines().filter(|l| l.starts_with("### ")).collect();
    for key in gate::config::TOP_KEYS {
        let subs = config_tables().into_iter().find(|(t, _)| t == key);
        let heading = headings
            .iter()
            .find(|h| match subs {
                Some(_) => h.starts_with(&format!("### `[{key}]`")),
                None => backquoted(h).contains(*key),
            })
            .unwrap_or_else(|| panic!("docs/configuration.md has no heading for {key}"));
        if let Some((table, subs)) = subs {
            let named = backquoted(heading.split_once(':').unwrap().1);
            let expected: BTreeSet<String> = subs.iter().map(|k| (*k).to_owned()).collect();
            assert_eq!(named, expected, "the heading of [{table}]: {heading}");
        }
    }

    // "A complete file" sets every key, and gate accepts it as the system file.
    let example = readme_block_after(&doc, "### A complete file");
    let set: BTreeSet<String> = keys_set_in(&example).into_iter().collect();
    assert_eq!(set, all, "the complete file of docs/configuration.md");
    gate::config::parse_file(
        Path::new("/etc/gate/config.toml"),
        &example,
        gate::config::FileKind::System,
        Some(Path::new("/home/me")),
    )
    .unwrap_or_else(|e| panic!("gate rejects the complete file of configuration.md: {e}"));
}

#[test]
fn the_unknown_key_message_in_configuration_md_is_the_one_gate_prints() {
    let doc = repo_file("docs/configuration.md");
    let shown = doc
        .lines()
        .find(|l| l.starts_with("gate: ") && l.contains("unknown key"))
        .expect("docs/configuration.md shows the message for an unknown key");
    let env = TestEnv::new();
    let file = env.write_user_config("# line 1\nlevle = \"deny\"\n");
    let out = env.gate().args(["check", "-c", "true"]).run();
    out.assert_code(common::GATE_ERROR);
    let real = out.stderr().replace(
        &*file.to_string_lossy(),
        "/home/me/.config/gate/config.toml",
    );
    assert_eq!(
        real,
        format!("{shown}\n"),
        "docs/configuration.md shows another message"
    );
}

/// Kills the process when the test ends, passed or failed.
struct KillOnDrop(Option<common::Running>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(running) = self.0.take() {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(running.pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
            let _ = running.wait();
        }
    }
}

#[test]
fn the_pending_listing_in_the_docs_is_what_gate_pending_prints() {
    use std::io::Write;
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    use std::time::{Duration, Instant};

    // The listing docs/approvals.md shows, and every header line shown anywhere.
    let doc = repo_file("docs/approvals.md");
    let mut lines = doc.lines().skip_while(|l| *l != "$ gate pending").skip(1);
    let (header, row) = (lines.next().unwrap(), lines.next().unwrap());
    let headers: Vec<(String, String)> = documents()
        .into_iter()
        .flat_map(|(name, text)| {
            text.lines()
                .filter(|l| l.trim_start().starts_with("ID ") && l.contains(" AGE "))
                .map(|l| (name.clone(), l.trim().to_owned()))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(headers.iter().any(|(_, h)| h == header), "{headers:?}");
    let cells: Vec<&str> = row
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    let [id, age, session, dir, command] = cells[..] else {
        panic!("not a row of five cells: {row:?}");
    };
    assert!(id.chars().all(|c| c.is_ascii_digit()), "{row}");
    assert!(
        age.ends_with('s') && age[..age.len() - 1].parse::<u32>().is_ok(),
        "{row}"
    );

    // A broker, and a request with the row's session, directory and command waiting in it.
    let env = TestEnv::new();
    let runtime = env.root.join("private-runtime");
    std::fs::create_dir(&runtime).unwrap();
    std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
    let socket = runtime.join("gate/broker.sock");
    let _broker = KillOnDrop(Some(
        env.gate()
            .env("XDG_RUNTIME_DIR", &runtime)
            .arg("serve")
            .deadline(Duration::from_secs(120))
            .spawn(),
    ));
    let deadline = Instant::now() + Duration::from_secs(30);
    while !std::fs::symlink_metadata(&socket).is_ok_and(|m| m.file_type().is_socket()) {
        assert!(Instant::now() < deadline, "the broker did not start");
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut requester = std::os::unix::net::UnixStream::connect(&socket).unwrap();
    let request = serde_json::json!({
        "type": "approval_request", "version": 1, "call_id": "doc-1",
        "session_id": session, "command": command, "work_dir": dir, "level": "ask",
        "timeout_seconds": 60, "remember_supported": true, "pid": 4242,
    });
    requester
        .write_all(format!("{request}\n").as_bytes())
        .unwrap();
    let listing = loop {
        let out = env
            .gate()
            .env("XDG_RUNTIME_DIR", &runtime)
            .arg("pending")
            .run();
        out.assert_code(0);
        if out.stdout().lines().count() == 2 {
            break out.stdout();
        }
        assert!(
            Instant::now() < deadline,
            "the request is not listed: {}",
            out.report()
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    let real: Vec<&str> = listing.lines().collect();

    // The header everywhere, and the row with its id and age (which vary) blanked.
    for (name, shown) in &headers {
        assert_eq!(
            shown, real[0],
            "{name} shows another header for gate pending"
        );
    }
    let blank = |line: &str| {
        let from = real[0].find("SESSION").unwrap();
        format!("{}{}", " ".repeat(from), line.get(from..).unwrap_or(""))
    };
    assert_eq!(
        blank(row),
        blank(real[1]),
        "docs/approvals.md: another row\n{listing}"
    );
}

/// The `$ gate ...` lines of the Markdown documents' console blocks whose output depends
/// on nothing but their arguments (`gate check`, or a refused option: status 125), with
/// the output shown under each and the status shown by a following `$ echo $?`.
fn transcripts() -> Vec<(String, String, String, Option<i32>)> {
    let mut found = Vec::new();
    for (name, text) in documents().into_iter().filter(|(n, _)| n.ends_with(".md")) {
        let mut in_console = false;
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if line.starts_with("```") {
                in_console = !in_console && *line == "```console";
                continue;
            }
            let Some(command) = line.strip_prefix("$ gate ").filter(|_| in_console) else {
                continue;
            };
            let mut output = String::new();
            let mut status = None;
            let mut next = lines[i + 1..].iter();
            for l in next.by_ref() {
                if l.starts_with("$ ") || l.starts_with("```") {
                    if *l == "$ echo $?" {
                        status = next.next().and_then(|s| s.parse().ok());
                    }
                    break;
                }
                output.push_str(l);
                output.push('\n');
            }
            if command.starts_with("check ") || status == Some(common::GATE_ERROR) {
                found.push((name.clone(), command.to_owned(), output, status));
            }
        }
    }
    found
}

#[test]
fn the_gate_check_and_error_transcripts_in_the_docs_are_what_gate_prints() {
    let found = transcripts();
    for doc in ["docs/rules.md", "docs/sandbox.md"] {
        assert!(
            found.iter().any(|(name, ..)| name == doc),
            "no transcript found in {doc}: {found:?}"
        );
    }
    let env = TestEnv::new();
    for (name, command, output, status) in found {
        let args = shell_words::split(&command).unwrap();
        let out = env.gate().args(&args).run();
        assert_eq!(
            format!("{}{}", out.stdout(), out.stderr()),
            output,
            "{name}: the output of `gate {command}` changed"
        );
        if let Some(status) = status {
            out.assert_code(status);
        }
    }
}

#[test]
fn the_tests_the_docs_name_exist_and_none_is_said_to_fail() {
    // Every test runs in CI and passes, so a document that says one "fails until" a fix
    // describes gate as it was before the fix.
    for (name, text) in documents() {
        for line in text.lines() {
            assert!(
                !line.to_lowercase().contains("fails until"),
                "{name} says a test fails; the tests pass, so this describes old behaviour:\n{line}"
            );
        }
    }
    let doc = repo_file("docs/integrations.md");
    let source = repo_file("tests/integrations.rs");
    let named: Vec<String> = md_section(&doc, "## What the tests check")
        .iter()
        .filter(|l| l.starts_with("| `"))
        .map(|l| l.split('`').nth(1).unwrap().to_owned())
        .collect();
    assert!(named.len() >= 10, "too few tests named: {named:?}");
    for test in named {
        assert!(
            source.contains(&format!("fn {test}(")),
            "docs/integrations.md names the test {test}, which tests/integrations.rs lacks"
        );
    }
}

// ---------------------------------------------------------------------------------------
// The packaged configuration file.

#[test]
fn the_packaged_config_sets_nothing_and_comments_out_every_key() {
    let text = repo_file("packaging/config.toml");
    let path = Path::new("/etc/gate/config.toml");
    let system = gate::config::FileKind::System;
    let home = Some(Path::new("/home/someone"));
    // As shipped: only empty tables, so the built-in defaults apply.
    let layer = gate::config::parse_file(path, &text, system, home)
        .unwrap_or_else(|e| panic!("gate rejects packaging/config.toml: {e}"));
    assert!(
        keys_set_in(&text).is_empty(),
        "packaging/config.toml sets keys"
    );
    assert!(layer.level.is_none() && layer.lock.is_none() && layer.shell.is_none());
    assert!(layer.allow.is_empty() && layer.deny.is_empty());
    assert!(layer.socket.is_none() && layer.tty.is_none() && layer.timeout.is_none());
    assert!(layer.audit_log.is_none() && layer.audit_required.is_none());
    assert!(layer.write.is_empty() && layer.deny_read.is_empty());
    assert!(layer.net_connect.is_empty() && layer.net_bind.is_empty());
    assert!(layer.network.is_none() && layer.unix_sockets.is_none());
    assert!(layer.best_effort.is_none());

    // With every `#key = value` line uncommented: every key, and gate accepts it.
    let uncommented: String = text
        .lines()
        .map(|l| match l.strip_prefix('#') {
            Some(rest) if rest.starts_with(|c: char| c.is_ascii_lowercase()) => rest,
            _ => l,
        })
        .map(|l| format!("{l}\n"))
        .collect();
    let mut set = keys_set_in(&uncommented);
    set.sort();
    let mut all = all_config_keys();
    all.sort();
    assert_eq!(
        set, all,
        "packaging/config.toml does not show exactly every key"
    );
    let layer = gate::config::parse_file(path, &uncommented, system, home)
        .unwrap_or_else(|e| panic!("gate rejects packaging/config.toml uncommented: {e}"));
    // The values shown are the defaults.
    assert_eq!(
        layer.level.map(|(l, _)| l),
        Some(gate::config::DEFAULT_LEVEL)
    );
    assert_eq!(
        layer.shell.map(|(s, _)| s),
        Some(std::path::PathBuf::from(gate::config::DEFAULT_SHELL))
    );
    assert_eq!(
        layer.timeout.map(|(t, _)| t),
        Some(gate::config::DEFAULT_TIMEOUT)
    );
    assert_eq!(layer.lock.map(|(l, _)| l), Some(false));
}

// ---------------------------------------------------------------------------------------
// Completions.

const COMPLETION_FILES: [(&str, &str); 3] = [
    ("bash", "completions/gate.bash"),
    ("zsh", "completions/_gate"),
    ("fish", "completions/gate.fish"),
];

#[test]
fn the_shipped_completion_files_are_what_gate_completions_prints() {
    let env = TestEnv::new();
    for (shell, file) in COMPLETION_FILES {
        let out = env.gate().args(["completions", shell]).run();
        out.assert_code(0).assert_stderr_empty();
        assert!(
            out.stdout() == repo_file(file),
            "{file} is not the output of `gate completions {shell}`; regenerate it (see \
             packaging/README.md)"
        );
    }
    let out = env.gate().args(["completions", "powershell"]).run();
    out.assert_code(common::GATE_ERROR);
    assert!(out.stdout().is_empty());
    assert!(out.stderr().contains("bash, zsh, fish"), "{}", out.stderr());
}

/// Run a shell on the repository's files, with a home of its own.
fn run_shell(program: &str, args: &[&str]) -> std::process::Output {
    let program = require_program(program);
    let home = tempfile::tempdir().unwrap();
    Command::new(&program)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env("XDG_DATA_HOME", home.path().join(".local/share"))
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()))
}

#[test]
fn the_bash_completion_completes_options_subcommands_and_levels() {
    // What bash does on TAB: set COMP_WORDS and COMP_CWORD, call the function.
    let script = r#"
        source completions/gate.bash
        complete -p gate
        complete_at() {
            COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
            COMPREPLY=()
            _gate gate "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
            echo "$* => ${COMPREPLY[*]}"
        }
        complete_at gate --lev
        complete_at gate --level ''
        complete_at gate app
        complete_at gate approve --rem
        complete_at gate completions ''
    "#;
    let out = run_shell("bash", &["--norc", "--noprofile", "-c", script]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    for expected in [
        "-F _gate gate",
        "gate --lev => --level",
        "gate --level  => deny ask safe full",
        "gate app => approve",
        "gate approve --rem => --remember --remember-rule",
        "bash zsh fish",
    ] {
        assert!(text.contains(expected), "bash: no `{expected}` in\n{text}");
    }
}

#[test]
fn the_fish_completion_completes_options_subcommands_and_levels() {
    let out = run_shell(
        "fish",
        &[
            "--no-config",
            "-c",
            "source completions/gate.fish; complete -C 'gate --lev'; complete -C 'gate --level='; \
             complete -C 'gate check --level '; complete -C 'gate appr'; \
             complete -C 'gate deny 3 --mes'",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    let firsts: Vec<&str> = text
        .lines()
        .map(|l| l.split('\t').next().unwrap_or(""))
        .collect();
    for expected in [
        "--level",
        "--level=deny",
        "--level=safe",
        "ask",
        "full",
        "approve",
        "--message",
    ] {
        assert!(firsts.contains(&expected), "fish: no {expected} in\n{text}");
    }
}

#[test]
fn the_zsh_completion_is_valid_zsh() {
    let out = run_shell("zsh", &["-n", "-f", "completions/_gate"]);
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "zsh -n completions/_gate: {out:?}"
    );
    // The function the file defines, and the values it offers for --level.
    let text = repo_file("completions/_gate");
    assert!(
        text.starts_with("#compdef gate"),
        "not a zsh completion file"
    );
    assert!(text.contains("(deny ask safe full)"));
}

// ---------------------------------------------------------------------------------------
// The README points at every document.

#[test]
fn the_readme_links_every_document() {
    let readme = repo_file("README.md");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut documents: Vec<String> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ exists")
        .map(|e| format!("docs/{}", e.unwrap().file_name().to_string_lossy()))
        .filter(|name| name.ends_with(".md"))
        .collect();
    documents.extend(MAN_PAGES.map(str::to_owned));
    documents.extend(["packaging/README.md", "packaging/deb/README.md"].map(str::to_owned));
    documents.extend(TOP_LEVEL.map(str::to_owned));
    for document in documents {
        assert!(root.join(&document).exists(), "{document} does not exist");
        assert!(
            readme.contains(&format!("]({document})")),
            "README.md does not link {document}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// docs/ci.md: the locked runner configuration and the GitHub Actions `shell:` line, run
// as written under a scratch /etc that holds that configuration.

/// A private mount namespace in which a scratch directory is /etc, holding `config` as
/// /etc/gate/config.toml, and a home, state and workspace under /var/tmp (outside the
/// temporary directories the sandbox leaves writable).
struct RunnerEtc {
    root: tempfile::TempDir,
}

impl RunnerEtc {
    fn new(config: &str) -> RunnerEtc {
        let root = tempfile::Builder::new()
            .prefix("gate-ci-doc-")
            .tempdir_in("/var/tmp")
            .expect("a directory in /var/tmp");
        let etc = root.path().join("etc");
        std::fs::create_dir_all(etc.join("gate")).unwrap();
        for file in ["ld.so.cache", "passwd", "group", "nsswitch.conf"] {
            let from = Path::new("/etc").join(file);
            if from.exists() {
                std::fs::copy(&from, etc.join(file)).unwrap();
            }
        }
        std::fs::write(etc.join("gate/config.toml"), config).unwrap();
        for dir in ["home", "state", "work", "runner-temp"] {
            std::fs::create_dir(root.path().join(dir)).unwrap();
        }
        RunnerEtc { root }
    }

    fn path(&self, name: &str) -> std::path::PathBuf {
        self.root.path().join(name)
    }

    /// Run `argv` in the namespace, in the workspace, with a runner-like environment.
    fn run(&self, argv: &[String]) -> std::process::Output {
        let mut unshare = Command::new(require_program("unshare"));
        if !common::running_as_root() {
            unshare.arg("--map-root-user");
        }
        unshare
            .args([
                "--mount",
                "--",
                "sh",
                "-c",
                "mount --bind \"$1\" /etc && shift && exec \"$@\"",
                "sh",
            ])
            .arg(self.path("etc"))
            .args(argv)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", self.path("home"))
            .env("XDG_STATE_HOME", self.path("state"))
            .env("XDG_RUNTIME_DIR", self.path("runner-temp"))
            .env("LC_ALL", "C")
            .current_dir(self.path("work"))
            .output()
            .expect("unshare runs")
    }
}

#[test]
fn the_runner_setup_in_ci_md_locks_and_its_shell_line_runs_steps_in_the_sandbox() {
    let doc = repo_file("docs/ci.md");
    let config = readme_block_after(&doc, "## Lock the policy");
    assert!(
        config.contains("lock  = true"),
        "not the locked file:\n{config}"
    );
    let etc = RunnerEtc::new(&config);
    let gate = common::GATE.to_owned();

    // The lock holds: the level cannot be changed, the locked values may be repeated.
    let out = etc.run(&[
        gate.clone(),
        "--level".into(),
        "full".into(),
        "-c".into(),
        "true".into(),
    ]);
    assert_eq!(out.status.code(), Some(common::GATE_ERROR), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("locks the configuration"));
    let out = etc.run(&[gate.clone(), "doctor".into()]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains("present, locks the configuration") && report.contains("level       safe"),
        "{report}"
    );

    // The `shell:` template: its first word is the program, {0} the step's script file.
    let line = doc
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("shell: gate "))
        .expect("docs/ci.md has a `shell: gate ...` line");
    let script = etc.path("runner-temp/step.sh");
    std::fs::write(
        &script,
        r#"echo "shell: bash ${BASH_VERSINFO[0]}"
case $- in *e*) echo "errexit: on" ;; esac
[[ -o pipefail ]] && echo "pipefail: on"
echo made > made-in-workspace
if (echo escaped > "$HOME/escaped") 2>/dev/null; then echo "home: writable"; else echo "home: not writable"; fi
false | true
echo "not reached"
"#,
    )
    .unwrap();
    let argv: Vec<String> = line["shell: ".len()..]
        .split_whitespace()
        .map(|w| match w {
            "gate" => gate.clone(),
            "{0}" => script.to_string_lossy().into_owned(),
            w => w.to_owned(),
        })
        .collect();
    assert!(
        argv.contains(&script.to_string_lossy().into_owned()),
        "no {{0}}: {line}"
    );
    let out = etc.run(&argv);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "the pipeline failure stops the step: {out:?}"
    );
    for expected in [
        "shell: bash 5",
        "errexit: on",
        "pipefail: on",
        "home: not writable",
    ] {
        assert!(
            stdout.contains(expected),
            "no {expected:?} in\n{stdout}\n{out:?}"
        );
    }
    assert!(!stdout.contains("not reached"), "{stdout}");
    assert!(
        etc.path("work/made-in-workspace").exists(),
        "the step could not write its workspace"
    );
    assert!(
        !etc.path("home/escaped").exists(),
        "the step wrote outside its workspace"
    );
    // Every run above that ran something was recorded (the file requires the audit log).
    let log = std::fs::read_to_string(etc.path("state/gate/audit.jsonl")).expect("an audit log");
    assert!(log.contains("step.sh"), "{log}");
}
