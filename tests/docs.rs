//! The documentation stays in step with the binary: every option gate parses is in the
//! man page, the man page renders without warnings, and the README's test command is the
//! one CI runs.

mod common;

use std::path::Path;
use std::process::Command;

use common::{TestEnv, require_program};

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
fn the_man_page_renders_without_warnings() {
    let groff = require_program("groff");
    let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("man/gate.1");
    let out = Command::new(groff)
        .args(["-man", "-ww", "-z"])
        .arg(&page)
        .output()
        .expect("groff runs");
    assert!(out.status.success(), "groff failed: {out:?}");
    assert!(
        out.stderr.is_empty() && out.stdout.is_empty(),
        "groff warns about man/gate.1:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
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
