use super::option_lists::{DATE, FILE, GIT_BRANCH, RG, SED, SORT, TAIL, TREE, UNIQ};
use super::secrets::{SECRET_LOCATIONS, pattern_may_match};
use super::words::is_pattern_char;
use super::*;
use proptest::prelude::*;

mod cases;

use cases::{ALLOWED, BYPASSES, REFUSED};

#[test]
fn allowed_commands_name_their_entry() {
    for (command, entry) in ALLOWED {
        assert_eq!(
            check(command, &Files::nothing_there()).map(|e| e.name),
            Ok(*entry),
            "{command:?} should be read-only by {entry}"
        );
        assert_eq!(
            read_only(command, &Files::nothing_there()),
            Some(*entry),
            "{command:?}"
        );
    }
}

#[test]
fn refused_commands_say_why() {
    for (command, why) in REFUSED {
        match check(command, &Files::nothing_there()) {
            Ok(entry) => panic!("{command:?} was allowed by {}", entry.name),
            Err(e) => assert!(
                e.reason().contains(why),
                "{command:?}: the reason {:?} lacks {why:?}",
                e.reason()
            ),
        }
        assert_eq!(
            read_only(command, &Files::nothing_there()),
            None,
            "{command:?}"
        );
    }
}

#[test]
fn every_entry_has_an_allowed_example() {
    for entry in entries() {
        assert!(
            ALLOWED.iter().any(|(_, e)| *e == entry.name),
            "no allowed example for {}",
            entry.name
        );
    }
}

#[test]
fn the_table_is_well_formed() {
    for (i, entry) in entries().iter().enumerate() {
        assert!(!entry.reason.is_empty() && !entry.refused.is_empty());
        assert!(
            entries()[..i].iter().all(|e| e.name != entry.name),
            "{} twice",
            entry.name
        );
        assert_eq!(
            entry.program() == "git",
            matches!(entry.check, Check::Git(_)),
            "{}",
            entry.name
        );
        assert_eq!(
            entry.globs == Globs::Allowed,
            matches!(entry.check, Check::Any),
            "{}: patterns are free exactly where nothing is refused",
            entry.name
        );
        assert!(
            !entry
                .name
                .contains(|c: char| is_pattern_char(c) || c == '/'),
            "{}",
            entry.name
        );
    }
}

#[test]
fn option_tables_are_consistent() {
    let tables: [(&str, &Options); 9] = [
        ("tail", &TAIL),
        ("sort", &SORT),
        ("uniq", &UNIQ),
        ("date", &DATE),
        ("file", &FILE),
        ("tree", &TREE),
        ("rg", &RG),
        ("sed", &SED),
        ("git branch", &GIT_BRANCH),
    ];
    for (name, spec) in tables {
        let shorts = [spec.flags, spec.values, spec.optional].concat();
        for (c, _) in spec.refused_short {
            assert!(!shorts.contains(*c), "{name}: -{c} is allowed and refused");
        }
        for (i, c) in shorts.char_indices() {
            assert!(!shorts[..i].contains(c), "{name}: -{c} listed twice");
        }
        for (i, (long, _)) in spec.long.iter().enumerate() {
            assert!(
                spec.refused_long.iter().all(|(r, _)| r != long),
                "{name}: --{long} is allowed and refused"
            );
            assert!(
                spec.long[..i].iter().all(|(l, _)| l != long),
                "{name}: --{long} listed twice"
            );
        }
    }
}

#[test]
fn the_documentation_lists_every_entry() {
    let doc = include_str!("../../../docs/readonly.md");
    for entry in entries() {
        assert!(
            doc.contains(&format!("| `{}` |", entry.name)),
            "docs/readonly.md has no row for {}",
            entry.name
        );
    }
}

#[test]
fn words_know_what_the_shell_may_expand() {
    let w = |text: &str| split_words(text).unwrap();
    let flags = |word: &Word| (word.expands, word.option_like);
    let words = w("a* '*'x *b -x* src/*.rs ~ ~/x x~ '-'* ''* HEAD^ a#b --g=* --g* -g=*");
    let got: Vec<_> = words.iter().map(flags).collect();
    assert_eq!(
        got,
        [
            (true, false),  // a*
            (false, false), // '*'x
            (true, true),   // *b
            (true, true),   // -x*
            (true, false),  // src/*.rs
            (true, true),   // ~
            (true, true),   // ~/x
            (true, false),  // x~
            (true, true),   // '-'*
            (true, true),   // ''*
            (true, false),  // HEAD^
            (true, false),  // a#b
            (true, false),  // --g=*
            (true, true),   // --g*
            (true, true),   // -g=*
        ]
    );
    let words = w("ls # a 'b");
    assert_eq!(words.len(), 4);
    assert!(words[1].comment && !words[2].comment);
    assert_eq!(split_words("ls 'a"), None);
    assert_eq!(w("a''b \"\" ''").len(), 3);
}

#[test]
fn reasons_name_the_entry_that_refused() {
    let e = check("sort --out=x f", &Files::nothing_there()).unwrap_err();
    assert_eq!(e.entry(), Some("sort"));
    assert_eq!(
        e.to_string(),
        "`sort`: `--out` abbreviates `--output`, which writes the result to a file"
    );
    assert_eq!(
        check("awk 1 f", &Files::nothing_there())
            .unwrap_err()
            .entry(),
        None
    );
    assert_eq!(
        check("git log --output=x", &Files::nothing_there())
            .unwrap_err()
            .entry(),
        Some("git log")
    );
    assert_eq!(
        check("ls; x", &Files::nothing_there())
            .unwrap_err()
            .to_string(),
        "it contains the shell character ';'"
    );
}

fn insert_word(base: &str, at: usize, word: &str) -> String {
    let mut words: Vec<&str> = base.split(' ').collect();
    words.insert(at, word);
    words.join(" ")
}

/// Issue 14, item 4: Claude Code passes its ANTHROPIC_API_KEY to every command, so
/// what prints the environment or a secret file is not read-only.
#[test]
fn the_environment_and_secret_files_are_not_read_only() {
    for command in [
        "env",
        "printenv",
        "printenv -0",
        "printenv ANTHROPIC_API_KEY",
        "printenv HOME ANTHROPIC_API_KEY",
        "printenv -- AWS_SECRET_ACCESS_KEY",
        "cat ~/.ssh/id_rsa",
        "cat /home/me/.ssh/id_rsa",
        "cat .ssh/config",
        "head -c 100 ../../.aws/credentials",
        "grep -r PRIVATE .ssh",
        "grep -r PRIVATE ./.ssh/",
        "ls -la ~/.gnupg",
        "cat ~/.claude/.credentials.json",
        "cat ~/.claude.json",
        "jq . /root/.codex/auth.json",
        "cat ~/.config/gh/hosts.yml",
        "cat ~/.cargo/credentials.toml",
        "diff --from-file=.netrc x",
        "cat ~/.s*/id_rsa",
        "cat ~/.ss?/id_rsa",
        "cat ~/.[s]sh/id_rsa",
        "cat ~/.*/id_rsa",
        "cat ~/.*/*",
        "tail -n1 ~/.config/g*/hosts.yml",
        "git show HEAD:.npmrc",
        "git diff --no-index ~/.ssh/a b",
        "ls # ~/.ssh",
    ] {
        assert_eq!(
            read_only(command, &Files::nothing_there()),
            None,
            "{command}"
        );
    }
    for (command, entry) in [
        ("cat .sshd_config", "cat"),
        ("ls ssh", "ls"),
        ("cat docs/ssh.md", "cat"),
        ("grep -r ssh src", "grep"),
        ("printenv HOME PATH", "printenv"),
        ("ls ~/.config", "ls"),
        ("cat ~/.claude/settings.json", "cat"),
        ("ls src/*.rs", "ls"),
        ("cat .git/config", "cat"),
        ("ls *", "ls"),
        ("ls */id_rsa", "ls"),
    ] {
        assert_eq!(
            read_only(command, &Files::nothing_there()),
            Some(entry),
            "{command}"
        );
    }
    let why = check("cat ~/.ssh/id_rsa", &Files::nothing_there()).unwrap_err();
    assert!(why.reason().contains("`.ssh`"), "{why}");
    let why = check("printenv", &Files::nothing_there()).unwrap_err();
    assert!(why.reason().contains("whole environment"), "{why}");
}

#[test]
fn every_secret_the_sandbox_hides_is_a_secret_location() {
    for hidden in crate::sandbox::spec::DEFAULT_DENY_READ {
        assert!(SECRET_LOCATIONS.contains(&hidden), "{hidden}");
    }
}

#[test]
fn patterns_match_as_the_shell_would_or_more() {
    for (pattern, name) in [
        (".*", ".ssh"),
        ("*", "ssh"),
        (".s*", ".ssh"),
        ("?ssh", "xssh"),
        (".[abs]sh", ".ssh"),
        ("[", "["),
        (".ssh", ".ssh"),
    ] {
        assert!(pattern_may_match(pattern, name), "{pattern} {name}");
    }
    for (pattern, name) in [
        (".s?", ".ssh"),
        ("x*", ".ssh"),
        ("[ab]", ""),
        ("*", ".ssh"),
        ("?ssh", ".ssh"),
    ] {
        assert!(!pattern_may_match(pattern, name), "{pattern} {name}");
    }
}

#[test]
fn every_bypass_base_is_allowed() {
    for (base, _, _) in BYPASSES {
        assert!(read_only(base, &Files::nothing_there()).is_some(), "{base}");
    }
}

fn shell_or_control_char() -> impl Strategy<Value = char> {
    prop_oneof![
        proptest::sample::select(SHELL_CHARS.to_vec()),
        (0u32..0x20)
            .prop_filter("tab is a blank", |c| *c != 9)
            .prop_map(|c| char::from_u32(c).unwrap()),
        Just('\u{7f}'),
        Just('\u{85}'),
    ]
}

use super::super::SHELL_CHARS;

proptest! {
    /// The shell's word reader, which the preset splits with, reads the preset's
    /// language (no `\`, `$`, `` ` ``, comment) as `shell_words::split` does.
    #[test]
    fn the_words_are_the_ones_shell_words_splits(
        text in "[ab '\"*~é\t]{0,24}",
    ) {
        let ours = split_words(&text).map(|w| w.into_iter().map(|w| w.text).collect::<Vec<_>>());
        prop_assert_eq!(ours, shell_words::split(&text).ok(), "{:?}", text);
    }

    #[test]
    fn an_unmatchable_char_anywhere_is_never_read_only(
        i in 0..ALLOWED.len(),
        at in 0usize..64,
        c in shell_or_control_char(),
    ) {
        let base = ALLOWED[i].0;
        let boundaries: Vec<usize> = base
            .char_indices()
            .map(|(b, _)| b)
            .chain([base.len()])
            .collect();
        let at = boundaries[at % boundaries.len()];
        let command = format!("{}{c}{}", &base[..at], &base[at..]);
        prop_assert_eq!(read_only(&command, &Files::nothing_there()), None, "{:?}", command);
    }

    #[test]
    fn a_refused_word_inserted_anywhere_is_never_read_only(
        i in 0..BYPASSES.len(),
        at in 0usize..16,
        j in 0usize..16,
    ) {
        let (base, last, words) = BYPASSES[i];
        // A position after the program, up to `last` (the end when `last` is large).
        let count = base.split(' ').count();
        let at = 1 + at % count.min(last);
        let word = words[j % words.len()];
        let command = insert_word(base, at, word);
        prop_assert_eq!(read_only(&command, &Files::nothing_there()), None, "{:?}", command);
    }

    #[test]
    fn a_path_qualified_program_is_never_read_only(
        i in 0..ALLOWED.len(),
        dir in prop_oneof![
            Just("./".to_owned()),
            Just("/usr/bin/".to_owned()),
            Just("bin/".to_owned()),
            Just("/".to_owned()),
            "[a-z./]{0,6}/",
        ],
    ) {
        let base = ALLOWED[i].0.trim_start_matches([' ', '\t']);
        let command = format!("{dir}{base}");
        prop_assert_eq!(read_only(&command, &Files::nothing_there()), None, "{:?}", command);
    }

    #[test]
    fn a_leading_assignment_is_never_read_only(
        i in 0..ALLOWED.len(),
        name in "[A-Za-z_][A-Za-z0-9_]{0,8}",
        value in "[a-z0-9/.-]{0,6}",
    ) {
        let command = format!("{name}={value} {}", ALLOWED[i].0);
        prop_assert_eq!(read_only(&command, &Files::nothing_there()), None, "{:?}", command);
    }

    #[test]
    fn surrounding_blanks_change_nothing(
        i in 0..ALLOWED.len(),
        before in "[ \t]{0,3}",
        after in "[ \t]{0,3}",
    ) {
        let base = ALLOWED[i].0;
        prop_assert_eq!(read_only(&format!("{before}{base}{after}"), &Files::nothing_there()), read_only(base, &Files::nothing_there()));
    }

    #[test]
    fn an_unquoted_leading_pattern_is_refused_and_a_quoted_one_is_not(
        i in 0..6usize,
        pattern in "[*?][a-z-]{0,4}",
    ) {
        // Bases where an extra operand is harmless, so only the quoting differs.
        let base = [
            "sort -n f",
            "tail -n 5 f",
            "rg -n foo src",
            "find . -type f",
            "file -b f",
            "git log --oneline",
        ][i];
        let unquoted = format!("{base} {pattern}");
        let quoted = format!("{base} '{pattern}'");
        prop_assert_eq!(read_only(&unquoted, &Files::nothing_there()), None, "{:?}", unquoted);
        prop_assert!(read_only(&quoted, &Files::nothing_there()).is_some(), "{:?}", quoted);
    }

    #[test]
    fn anything_read_only_is_a_bare_listed_program_without_shell_syntax(
        text in "[ -~\t\u{a0}é]{0,40}",
    ) {
        if let Some(name) = read_only(&text, &Files::nothing_there()) {
            prop_assert!(first_unmatchable_char(&text).is_none());
            let entry = entries().iter().find(|e| e.name == name).unwrap();
            let first = shell_words::split(&text).unwrap().remove(0);
            prop_assert_eq!(first, entry.program());
        }
    }

    #[test]
    fn words_from_preset_programs_never_panic(
        program in proptest::sample::select(
            entries().iter().map(|e| e.name).collect::<Vec<_>>()
        ),
        args in proptest::collection::vec(
            prop_oneof![
                "-{1,2}[a-zA-Z0-9=.-]{0,8}",
                "[a-z0-9*?~+/^#.,]{1,6}",
                Just("--".to_owned()),
                Just("'-o'".to_owned()),
            ],
            0..6,
        ),
    ) {
        let command = format!("{program} {}", args.join(" "));
        if let Some(name) = read_only(&command, &Files::nothing_there()) {
            prop_assert_eq!(name, program);
        }
    }
}
