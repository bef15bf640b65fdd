//! What a fresh machine needs to run the tests, and that CI installs exactly that.
//!
//! README.md gives one `apt-get install` line; `.ci/run` installs the packages that line
//! names and nothing else. These tests check that `.ci/run` really reads the README, and
//! that every program the tests ask for by name comes from one of those packages (or
//! from what they depend on, or from Debian's essential set, which every machine has).
//! A new test that needs a new program fails here until the README line names it.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;
use std::process::Command;

use common::require_program;

const REPO: &str = env!("CARGO_MANIFEST_DIR");
const PREFIX: &str = "sudo apt-get install -y --no-install-recommends ";

/// The packages on README.md's install line (there must be exactly one such line).
fn readme_packages(readme: &str) -> Vec<String> {
    let lines: Vec<&str> = readme
        .lines()
        .filter_map(|l| l.strip_prefix(PREFIX))
        .collect();
    assert_eq!(
        lines.len(),
        1,
        "README.md must have exactly one line starting `{PREFIX}`"
    );
    lines[0].split_whitespace().map(str::to_owned).collect()
}

/// Run `.ci/run --print-packages` as it sits in `root` (a copy of the repository's
/// `.ci/run` beside a README.md).
fn ci_packages(root: &Path) -> std::process::Output {
    Command::new(require_program("sh"))
        .arg(root.join(".ci/run"))
        .arg("--print-packages")
        .output()
        .expect("sh runs .ci/run")
}

/// A scratch copy of `.ci/run` beside the given README text.
fn scratch_repo(readme: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join(".ci")).unwrap();
    fs::copy(Path::new(REPO).join(".ci/run"), dir.path().join(".ci/run")).unwrap();
    fs::write(dir.path().join("README.md"), readme).unwrap();
    dir
}

#[test]
fn ci_installs_the_packages_the_readme_lists() {
    let readme = fs::read_to_string(Path::new(REPO).join("README.md")).unwrap();
    let listed = readme_packages(&readme);
    assert!(listed.len() > 5, "the README lists only {listed:?}");
    let out = ci_packages(Path::new(REPO));
    assert!(out.status.success(), "{out:?}");
    let printed: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    assert_eq!(printed, listed);
}

#[test]
fn ci_follows_a_change_to_the_readme_line_and_refuses_a_missing_or_second_one() {
    // The list comes from the README, not from a copy inside .ci/run: change the line
    // and .ci/run's list changes with it.
    let dir = scratch_repo(&format!("# x\n\n{PREFIX}cowsay sl\n\ncargo test\n"));
    let out = ci_packages(dir.path());
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "cowsay sl\n");

    for readme in [
        "# no install line at all\n".to_owned(),
        format!("{PREFIX}bash\n{PREFIX}dash\n"),
    ] {
        let dir = scratch_repo(&readme);
        let out = ci_packages(dir.path());
        assert!(!out.status.success(), "{readme:?} was accepted: {out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("exactly one line"),
            "{out:?}"
        );
    }
}

/// The programs the tests name: `require_program("X")`, `run_shell("X", …)`,
/// `Command::new("X")` and the entries of `REQUIRED_TOOLS` lists, in every file under
/// tests/. python3 is found by `python3_for` in three files, which looks in the system
/// directories for a python3 the unprivileged user can run, so it is named here.
fn programs_the_tests_name() -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
    found.insert("python3".to_owned(), "python3_for".to_owned());
    let mut files = Vec::new();
    for dir in ["tests", "tests/common"] {
        for entry in fs::read_dir(Path::new(REPO).join(dir)).unwrap() {
            let path = entry.unwrap().path();
            // Not this file: it names the calls it looks for.
            if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("ci.rs") {
                files.push(path);
            }
        }
    }
    for file in files {
        let text = fs::read_to_string(&file).unwrap();
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        for call in ["require_program(", "run_shell(", "Command::new("] {
            for (at, _) in text.match_indices(call) {
                // A string literal as the first argument, perhaps on the next line.
                let rest = text[at + call.len()..].trim_start();
                let Some(rest) = rest.strip_prefix('"') else {
                    continue;
                };
                let program = &rest[..rest.find('"').unwrap()];
                found.insert(program.to_owned(), name.clone());
            }
        }
        if let Some(at) = text.find("REQUIRED_TOOLS: &[&str] = &[") {
            let list = &text[at + "REQUIRED_TOOLS: &[&str] = &[".len()..];
            let list = &list[..list.find("];").unwrap()];
            for item in list.split(',') {
                let item = item.trim().trim_matches('"');
                if !item.is_empty() {
                    found.insert(item.to_owned(), name.clone());
                }
            }
        }
    }
    found
}

/// The Debian package that owns each program in the system directories, or why none
/// does. One `dpkg-query -S` for all of them: each call reads every package's file list,
/// which took a minute when it ran once a program.
fn owners<'a>(
    programs: impl IntoIterator<Item = &'a str>,
) -> BTreeMap<String, Result<String, String>> {
    let mut candidates: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for program in programs {
        let mut paths = Vec::new();
        for dir in ["/usr/sbin", "/usr/bin", "/sbin", "/bin"] {
            let path = Path::new(dir).join(program);
            if path.exists() {
                paths.push(path.to_string_lossy().into_owned());
                if let Ok(real) = fs::canonicalize(&path) {
                    paths.push(real.to_string_lossy().into_owned());
                }
            }
        }
        candidates.insert(program.to_owned(), paths);
    }
    let all: BTreeSet<&String> = candidates.values().flatten().collect();
    let mut owner_of: BTreeMap<String, String> = BTreeMap::new();
    if !all.is_empty() {
        // Exit status 1 when some path has no owner: those are simply not in the output.
        let out = Command::new(require_program("dpkg-query"))
            .arg("-S")
            .args(&all)
            .output()
            .unwrap();
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            if line.starts_with("diversion by ") {
                continue;
            }
            if let Some((packages, path)) = line.split_once(": ") {
                let first = packages.split(", ").next().unwrap();
                owner_of
                    .entry(path.to_owned())
                    .or_insert_with(|| first.split(':').next().unwrap().to_owned());
            }
        }
    }
    candidates
        .into_iter()
        .map(|(program, paths)| {
            let owner = if paths.is_empty() {
                Err(format!(
                    "`{program}` is not installed in /usr/bin, /usr/sbin, /bin or /sbin \
                     (a program found only elsewhere on PATH did not come from a Debian package)"
                ))
            } else {
                paths
                    .iter()
                    .find_map(|p| owner_of.get(p).cloned())
                    .ok_or_else(|| format!("no Debian package owns `{program}` ({paths:?})"))
            };
            (program, owner)
        })
        .collect()
}

/// Every package in dpkg's database (what `dpkg-query -W PACKAGE` finds), with whether it
/// is essential and what it depends on: one `dpkg-query` for all, not one a package.
fn packages() -> BTreeMap<String, (bool, String)> {
    let out = Command::new(require_program("dpkg-query"))
        .args([
            "-W",
            "-f",
            "${Package}\t${Essential}\t${Pre-Depends}, ${Depends}\n",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "dpkg-query -W: {out:?}");
    let mut packages: BTreeMap<String, (bool, String)> = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let mut fields = line.splitn(3, '\t');
        let (Some(name), Some(essential), Some(depends)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        // A package installed for two architectures is two lines.
        let entry = packages.entry(name.to_owned()).or_default();
        entry.0 |= essential == "yes";
        entry.1.push_str(depends);
        entry.1.push_str(", ");
    }
    packages
}

/// The listed packages and every installed package they depend on, recursively.
fn with_dependencies(
    listed: &[String],
    packages: &BTreeMap<String, (bool, String)>,
) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo: Vec<String> = listed.to_vec();
    while let Some(package) = todo.pop() {
        let Some((_, depends)) = packages.get(&package) else {
            continue;
        };
        if !seen.insert(package) {
            continue;
        }
        for alternative in depends.split([',', '|']) {
            let name = alternative.split_whitespace().next().unwrap_or("");
            let name = name.split(':').next().unwrap();
            if !name.is_empty() && !seen.contains(name) {
                todo.push(name.to_owned());
            }
        }
    }
    seen
}

#[test]
fn every_program_the_tests_need_comes_from_a_package_the_readme_lists() {
    let readme = fs::read_to_string(Path::new(REPO).join("README.md")).unwrap();
    let listed = readme_packages(&readme);
    let packages = packages();
    let provided = with_dependencies(&listed, &packages);
    for package in &listed {
        assert!(
            provided.contains(package),
            "README.md lists `{package}`, which is not installed here; run its apt-get line"
        );
    }
    let programs = programs_the_tests_name();
    assert!(
        programs.len() > 25,
        "found only {} programs in the tests: {programs:?}",
        programs.len()
    );
    let owners = owners(programs.keys().map(String::as_str));
    let mut missing = Vec::new();
    for (program, file) in &programs {
        let package = match &owners[program] {
            Ok(package) => package.clone(),
            Err(why) => {
                missing.push(format!("{file}: {why}"));
                continue;
            }
        };
        // Essential packages are on every Debian system, however minimal.
        let essential = packages.get(&package).is_some_and(|p| p.0);
        if !essential && !provided.contains(&package) {
            missing.push(format!(
                "{file} runs `{program}`, from the package `{package}`, which README.md's \
                 install line neither names nor brings in"
            ));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn the_scan_sees_the_programs_it_is_meant_to_see() {
    // A control for the scan above: if it stopped finding programs, the check would
    // pass on nothing.
    let programs = programs_the_tests_name();
    for expected in [
        "zsh", "fish", "tmux", "lintian", "rpmbuild", "setpriv", "mandoc",
    ] {
        assert!(
            programs.contains_key(expected),
            "the scan missed `{expected}`: {programs:?}"
        );
    }
    // And a program no listed package provides is reported.
    let owners = owners(["gate-no-such-program", "dpkg-query"]);
    assert!(owners["gate-no-such-program"].is_err(), "{owners:?}");
    // And one that is installed is found, in the same call.
    assert_eq!(owners["dpkg-query"], Ok("dpkg".to_owned()), "{owners:?}");
}
