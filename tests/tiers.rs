//! The tiers themselves: every file in `tests/` runs in exactly one tier, and the only
//! `#[ignore]` in the default tier is the root tier's. With `autotests = false` in
//! Cargo.toml a new file in `tests/` is not compiled until a tier names it; this is
//! where that fails, loudly, instead of the file's tests silently never running.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use crate::common::ROOT_TIER;

const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// The test targets in Cargo.toml (its `[[test]]` tables): name → path.
fn targets() -> BTreeMap<String, String> {
    let manifest = fs::read_to_string(Path::new(REPO).join("Cargo.toml")).unwrap();
    assert!(
        manifest.lines().any(|l| l == "autotests = false"),
        "Cargo.toml must say autotests = false: the tiers are the [[test]] targets"
    );
    let value = |line: &str, key: &str| {
        line.strip_prefix(key)?
            .trim_start()
            .strip_prefix("= \"")?
            .strip_suffix('"')
            .map(str::to_owned)
    };
    let mut targets = BTreeMap::new();
    let mut table = None;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            table = (line == "[[test]]").then_some((None, None));
        } else if let Some((name, path)) = &mut table {
            *name = value(line, "name").or(name.take());
            *path = value(line, "path").or(path.take());
            if let (Some(n), Some(p)) = (name.clone(), path.clone()) {
                targets.insert(n, p);
            }
        }
    }
    targets
}

/// The files a tier root includes with `#[path = "…"] mod …;`.
fn modules_of(root: &str) -> Vec<String> {
    fs::read_to_string(Path::new(REPO).join(root))
        .unwrap()
        .lines()
        .filter_map(|l| l.trim().strip_prefix("#[path = \""))
        .filter_map(|l| l.strip_suffix("\"]"))
        .map(|p| format!("tests/{p}"))
        .collect()
}

#[test]
fn every_file_in_tests_runs_in_exactly_one_tier() {
    let targets = targets();
    assert_eq!(
        targets.keys().map(String::as_str).collect::<Vec<_>>(),
        ["all", "kernels", "packaging", "real_agents"],
        "the tiers changed: update CONTRIBUTING.md's tier table, .ci/run and this test"
    );
    let mut tier_of: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (name, path) in &targets {
        tier_of.entry(path.clone()).or_default().push(name.clone());
        for module in modules_of(path) {
            tier_of.entry(module).or_default().push(name.clone());
        }
    }
    let mut files: Vec<String> = fs::read_dir(Path::new(REPO).join("tests"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".rs"))
        .map(|n| format!("tests/{n}"))
        .collect();
    files.sort();
    for file in &files {
        let tiers = tier_of.get(file).cloned().unwrap_or_default();
        assert_eq!(
            tiers.len(),
            1,
            "{file} is in the tiers {tiers:?}: every file in tests/ must be in exactly one \
             (a `#[path = \"…\"] mod …;` line in tests/all.rs, or in another tier's root)"
        );
    }
    for included in tier_of.keys() {
        assert!(
            Path::new(REPO).join(included).is_file(),
            "a tier names {included}, which does not exist"
        );
    }
}

#[test]
fn the_only_ignored_tests_in_the_default_tier_are_the_root_tiers() {
    let marker = format!("#[ignore = \"{ROOT_TIER}\"]");
    let macro_marker = ") needs root because \"";
    let mut root_tier_files = 0;
    for module in modules_of("tests/all.rs") {
        let text = fs::read_to_string(Path::new(REPO).join(&module)).unwrap();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.starts_with("#[ignore") {
                assert_eq!(
                    line,
                    marker,
                    "{module}:{}: the default tier ignores a test only to put it in the \
                     root tier",
                    n + 1
                );
            }
        }
        if text.contains(&marker) || text.contains(macro_marker) {
            root_tier_files += 1;
        }
    }
    // The control: the scan finds the root tier's tests where they are.
    assert!(
        root_tier_files >= 3,
        "only {root_tier_files} files have root-tier tests: the scan is broken"
    );
    let common = fs::read_to_string(Path::new(REPO).join("tests/common/mod.rs")).unwrap();
    assert_eq!(
        common.matches(&marker).count(),
        2,
        "for_each_user! marks both tests of a scenario that needs root with the root tier's reason"
    );
}

#[test]
#[ignore = "root tier: cargo test --lib --test all -- --ignored, as root"]
fn the_root_tier_runs_as_root() {
    crate::common::needs_root("the root tier");
}
