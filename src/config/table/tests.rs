//! The settings table against everything else that names a setting: the key lists a
//! file is checked against, gate's options, `--help`, the lock rules in words, and the
//! manual pages. A setting added to the table without its entry elsewhere fails here.

use super::*;
use crate::cli::GATE_OPTIONS;
use crate::config::{TOP_KEYS, under_lock};

/// The options that choose which files are read: not settings.
const FILE_OPTIONS: [&str; 2] = ["--config", "--no-config"];

fn file_keys() -> Vec<&'static str> {
    SETTINGS
        .iter()
        .filter(|s| s.file.is_some())
        .map(|s| s.key)
        .collect()
}

/// The tags of a manual page's tagged paragraphs, each the first word of the line after
/// `.TP` or `.TQ`, as a reader sees it (`--net-connect`, `approval.timeout`).
fn tags(page: &str) -> Vec<String> {
    let lines: Vec<&str> = page.lines().collect();
    lines
        .windows(2)
        .filter(|w| matches!(w[0].trim(), ".TP" | ".TQ"))
        .filter_map(|w| {
            let line = w[1].strip_prefix('.').map_or(w[1], |macro_line| {
                macro_line.split_once(' ').map_or("", |(_, args)| args)
            });
            let word = line.split_whitespace().next()?;
            Some(word.replace("\\-", "-").trim_matches('"').to_owned())
        })
        .collect()
}

/// The lines of one section of a manual page (`.SH NAME` up to the next `.SH`).
fn section(page: &str, name: &str) -> String {
    let heading = format!(".SH {name}");
    let mut lines = page.lines().skip_while(|l| l.trim() != heading);
    assert!(lines.next().is_some(), "the page has no section {name}");
    lines
        .take_while(|l| !l.starts_with(".SH "))
        .map(|l| format!("{l}\n"))
        .collect()
}

fn manual(name: &str) -> String {
    let path = format!("{}/man/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn every_key_a_file_may_hold_is_a_setting_and_every_settings_key_is_listed() {
    let mut listed = Vec::new();
    for top in TOP_KEYS {
        match super::super::TABLES.iter().find(|(t, _)| t == top) {
            Some((table, keys)) => listed.extend(keys.iter().map(|k| format!("{table}.{k}"))),
            None => listed.push((*top).to_owned()),
        }
    }
    let mut listed: Vec<&str> = listed.iter().map(String::as_str).collect();
    let mut keys = file_keys();
    listed.sort_unstable();
    keys.sort_unstable();
    assert_eq!(listed, keys, "the key lists and the settings table differ");
    for (table, _) in super::super::TABLES {
        assert!(TOP_KEYS.contains(&table), "[{table}] is not in TOP_KEYS");
    }
}

#[test]
fn each_key_flag_and_variable_names_one_setting() {
    let mut names: Vec<&str> = SETTINGS
        .iter()
        .flat_map(|s| [Some(s.key), s.env, s.flag.map(|(f, _)| f)])
        .flatten()
        .collect();
    let all = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), all, "a name appears twice in the table");
}

#[test]
fn every_option_of_gates_sets_a_setting_or_chooses_the_files() {
    for option in GATE_OPTIONS {
        let setting = by_flag(option.name);
        assert!(
            setting.is_some() || FILE_OPTIONS.contains(&option.name),
            "{} is in cli::GATE_OPTIONS but sets no setting of the table",
            option.name
        );
        if let Some((_, arg)) = setting.and_then(|s| s.flag) {
            assert_eq!(
                matches!(arg, Arg::Flag(..)),
                option.value.is_none(),
                "{}: the table and cli::GATE_OPTIONS disagree on whether it takes a value",
                option.name
            );
        }
    }
    for setting in SETTINGS {
        if let Some((flag, _)) = setting.flag {
            assert!(
                GATE_OPTIONS.iter().any(|o| o.name == flag),
                "{flag} ({}) has no entry in cli::GATE_OPTIONS, so no help",
                setting.key
            );
        }
    }
}

#[test]
fn a_settings_option_and_its_reader_agree() {
    for setting in SETTINGS {
        let Some((flag, arg)) = setting.flag else {
            continue;
        };
        let agree = matches!(
            (arg, setting.text),
            (Arg::One(..) | Arg::Many(..), Text::Value(_)) | (Arg::Flag(..), Text::Switch(..))
        );
        assert!(agree, "{flag}: its option and its reader disagree");
    }
    for setting in SETTINGS {
        if setting.env.is_some() {
            assert!(
                matches!(setting.text, Text::Value(_)),
                "{}: a variable needs a reader of text",
                setting.key
            );
        }
    }
}

#[test]
fn every_variable_is_in_the_help() {
    let help = crate::cli::help_text();
    for name in SETTINGS.iter().filter_map(|s| s.env) {
        assert!(help.contains(name), "gate --help does not mention {name}");
    }
}

#[test]
fn the_lock_rule_of_every_file_key_is_said_in_words_for_gate_rules() {
    let locked = crate::config::merge(
        vec![
            crate::config::parse_file(
                std::path::Path::new("/etc/gate/config.toml"),
                "lock = true\n",
                FileKind::System,
                None,
            )
            .unwrap(),
        ],
        Vec::new(),
    )
    .unwrap();
    let said: Vec<&str> = under_lock(&locked)
        .into_iter()
        .flat_map(|(keys, _)| keys.split(", "))
        .collect();
    for key in file_keys() {
        if key == "lock" {
            continue;
        }
        assert!(
            said.contains(&key),
            "{key}: config::under_lock does not say what the lock allows for it"
        );
    }
}

#[test]
fn every_setting_has_its_entries_in_both_manual_pages() {
    let gate_1 = manual("gate.1");
    let options = tags(&section(&gate_1, "OPTIONS"));
    let environment = tags(&section(&gate_1, "ENVIRONMENT"));
    let keys = tags(&section(&manual("gate.toml.5"), "KEYS"));
    let not_keys = section(&manual("gate.toml.5"), "KEYS");
    let not_keys = not_keys
        .split_once(".SS Settings that are not keys")
        .map_or("", |(_, rest)| rest)
        .replace("\\-", "-");
    for setting in SETTINGS {
        if let Some((flag, _)) = setting.flag {
            assert!(
                options.iter().any(|t| t == flag),
                "man/gate.1 has no entry under OPTIONS for {flag}"
            );
        }
        if let Some(name) = setting.env {
            assert!(
                environment.iter().any(|t| t == name),
                "man/gate.1 has no entry under ENVIRONMENT for {name}"
            );
        }
        if setting.file.is_some() {
            assert!(
                keys.iter().any(|t| t == setting.key),
                "man/gate.toml.5 has no entry under KEYS for {}",
                setting.key
            );
        } else {
            // A setting no file holds is said to be one, with how it is set instead.
            for name in [setting.env, setting.flag.map(|(f, _)| f)]
                .into_iter()
                .flatten()
            {
                assert!(
                    not_keys.contains(name),
                    "man/gate.toml.5's \"Settings that are not keys\" does not name {name}"
                );
            }
        }
    }
}

#[test]
fn the_manual_page_check_finds_a_missing_entry() {
    // The control: a page without the entry for --timeout is caught.
    let gate_1 = manual("gate.1").replace(".BI \\-\\-timeout \" seconds\"", ".BI \\-\\-wait");
    let options = tags(&section(&gate_1, "OPTIONS"));
    assert!(options.iter().any(|t| t == "--net-connect"));
    assert!(!options.iter().any(|t| t == "--timeout"));
}
