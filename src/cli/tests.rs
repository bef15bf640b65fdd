use super::*;
use std::ffi::{OsStr, OsString};

fn os(list: &[&str]) -> Vec<OsString> {
    list.iter().map(OsString::from).collect()
}

fn parse(name: &str, args: &[&str]) -> Result<Parsed, String> {
    parse_subcommand(subcommand(name).unwrap(), os(args))
}

#[test]
fn the_command_definition_is_consistent() {
    command().debug_assert();
}

#[test]
fn help_lists_every_option() {
    let help = help_text();
    for spec in GATE_OPTIONS {
        assert!(
            help.contains(spec.name),
            "{} is missing from --help",
            spec.name
        );
    }
    assert!(
        !help.contains("-h,") && !help.contains("-V,"),
        "short help flags: {help}"
    );
    for level in ["deny", "ask", "safe", "full"] {
        assert!(help.contains(level));
    }
    assert!(help.contains("check"));
}

#[test]
fn each_subcommand_help_shows_its_usage_and_options_and_not_gates() {
    for sub in SUBCOMMANDS {
        let help = sub.help();
        assert!(help.contains(sub.usage), "{}: {help}", sub.name);
        for option in sub.own.iter().chain(sub.gate_options()) {
            assert!(help.contains(option.name), "{}: {}", sub.name, option.name);
        }
        assert!(!help.contains("Levels:"), "{}: {help}", sub.name);
    }
    assert!(!subcommand("approve").unwrap().help().contains("--level"));
}

#[test]
fn the_options_a_subcommand_shares_are_gates() {
    for sub in SUBCOMMANDS {
        if let Shared::Only(names) = sub.shared {
            let found: Vec<&str> = sub.gate_options().map(|o| o.name).collect();
            assert_eq!(found.len(), names.len(), "{}: {names:?}", sub.name);
        }
        for own in sub.own {
            assert!(
                !GATE_OPTIONS.iter().any(|o| o.name == own.name),
                "{}: {} is one of gate's options",
                sub.name,
                own.name
            );
        }
    }
}

#[test]
fn an_unknown_option_names_the_subcommands_own() {
    let err = parse("deny", &["1", "--remember"]).unwrap_err();
    assert!(err.starts_with("deny: unknown option --remember;"), "{err}");
    for option in ["--message TEXT", "--socket PATH", "see gate deny --help"] {
        assert!(err.contains(option), "{err}");
    }
    assert!(!err.contains("--level"), "{err}");
}

#[test]
fn options_operands_and_help_are_matched_by_the_tables() {
    let Parsed::Args(args) = parse(
        "approve",
        &[
            "--remember",
            "7",
            "--socket=/s",
            "--remember-rule",
            "npm test",
        ],
    )
    .unwrap() else {
        panic!()
    };
    let names: Vec<(&str, Option<&str>)> = args
        .options
        .iter()
        .map(|(s, v)| (s.name, v.as_deref().and_then(OsStr::to_str)))
        .collect();
    assert_eq!(
        names,
        [
            ("--remember", None),
            ("--remember-rule", Some("npm test")),
            ("--socket", Some("/s")),
        ]
    );
    assert_eq!(args.operand, Some("7".into()));
    assert_eq!(parse("approve", &["--help"]), Ok(Parsed::Help));
    assert_eq!(parse("approve", &["7", "--help"]), Ok(Parsed::Help));
}

#[test]
fn errors_are_one_line_that_says_what_to_do() {
    for (name, args, needle) in [
        ("approve", &[][..], "ID is missing; usage: gate approve ID"),
        (
            "deny",
            &["1", "2"],
            "unexpected argument 2; usage: gate deny ID",
        ),
        (
            "deny",
            &["1", "--message"],
            "--message needs a value (TEXT)",
        ),
        (
            "completions",
            &["powershell"],
            "choose one of bash, zsh, fish",
        ),
        (
            "watch",
            &["-x"],
            "watch: unknown option -x; watch takes gate's --config FILE",
        ),
        (
            "completions",
            &["--socket", "/s"],
            "completions takes no options",
        ),
    ] {
        let err = parse(name, args).unwrap_err();
        assert!(err.contains(needle), "{name} {args:?}: {err}");
        assert!(!err.contains('\n'), "{err:?}");
    }
}

#[test]
fn a_value_that_looks_like_an_option_is_refused_unless_joined_with_equals() {
    let err = parse("deny", &["1", "--message", "-x"]).unwrap_err();
    assert!(err.contains("write --message=-x"), "{err}");
    let err = parse("ask", &["q?", "--option", "--multiple"]).unwrap_err();
    assert!(err.contains("write --option=--multiple"), "{err}");
    let err = parse("ask", &["q?", "--option", "-a b"]).unwrap_err();
    assert!(err.contains("write --option='-a b'"), "{err}");
    let Parsed::Args(args) = parse("deny", &["1", "--message=-x"]).unwrap() else {
        panic!()
    };
    assert_eq!(args.options[0].1, Some("-x".into()));
    // After `--`, everything is an operand.
    assert!(parse("ask", &["--", "--option"]).is_ok());
}

#[test]
fn mistyped_subcommands_are_recognised_and_scripts_are_not() {
    for (word, meant) in [
        ("chek", "gate check"),
        ("chekk", "gate check"),
        ("Check", "gate check"),
        ("aprove", "gate approve"),
        ("appr", "gate approve"),
        ("pendign", "gate pending"),
        ("aks", "gate ask"),
        ("completion", "gate completions"),
        ("halp", "gate help"),
        ("init", "gate doctor"),
        ("version", "gate --version"),
    ] {
        assert_eq!(meant_subcommand(word).as_deref(), Some(meant), "{word}");
    }
    for word in [
        "build.sh",
        "./chek",
        "chek.sh",
        "deploy",
        "make",
        "test",
        "dev",
        "-c",
        "",
        "my script",
    ] {
        assert_eq!(meant_subcommand(word), None, "{word}");
    }
}

#[test]
fn edit_distance_counts_single_edits() {
    assert_eq!(edit_distance("check", "check"), 0);
    assert_eq!(edit_distance("chek", "check"), 1);
    assert_eq!(edit_distance("chekc", "check"), 1);
    assert_eq!(edit_distance("", "ask"), 3);
    assert_eq!(edit_distance("kitten", "sitting"), 3);
}
