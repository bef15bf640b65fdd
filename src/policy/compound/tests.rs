use super::*;
use crate::policy::{AllowRules, Origin, SHELL_CHARS};
use proptest::prelude::*;

/// The shell parser, given the whole text (not the skeleton), reads exactly the
/// scan's simple commands, words and operators: brush-parser's tokens are the
/// shell's word reader's words ([`crate::shells::words`]), which the scan reads
/// with. The proptests below run it on generated compositions and soups.
fn full_parse_agrees(command: &str) -> bool {
    let (Some(scanned), Some(parsed)) = (scan(command), parse(command)) else {
        return false;
    };
    reads_as_scanned(&parsed, &scanned, |p, s| p.words == words(s.text))
}

/// The words of a part, as written.
fn words(part: &str) -> Vec<&str> {
    let bytes = part.as_bytes();
    let mut words = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if is_blank(bytes[i]) {
            i += 1;
            continue;
        }
        let end = word_end(part, i).unwrap();
        words.push(&part[i..end]);
        i = end;
    }
    words
}

/// Compositions compound mode accepts, and the parts it returns.
const ACCEPTED: &[(&str, &[&str])] = &[
    ("a && b", &["a", "b"]),
    ("a || b", &["a", "b"]),
    ("a; b", &["a", "b"]),
    ("a | b", &["a", "b"]),
    ("a&&b||c;d|e", &["a", "b", "c", "d", "e"]),
    ("a;b;c", &["a", "b", "c"]),
    ("ls -la && git status -s", &["ls -la", "git status -s"]),
    (
        "git diff | grep -n TODO | head",
        &["git diff", "grep -n TODO", "head"],
    ),
    (
        "cargo build && cargo test -- --nocapture",
        &["cargo build", "cargo test -- --nocapture"],
    ),
    ("a || b && c | d ; e", &["a", "b", "c", "d", "e"]),
    // Blanks around parts and operators are not part of either.
    ("  a  &&  b  ", &["a", "b"]),
    ("a\t&&\tb", &["a", "b"]),
    ("  git status  ", &["git status"]),
    // A tab inside a part is kept: only a space continues an allow rule.
    ("ls\tfoo", &["ls\tfoo"]),
    ("ls\tfoo && b", &["ls\tfoo", "b"]),
    // One simple command is one part.
    ("ls", &["ls"]),
    // Quotes are kept, as written.
    ("echo 'a b' && ls", &["echo 'a b'", "ls"]),
    ("echo \"a b\" | wc -l", &["echo \"a b\"", "wc -l"]),
    ("a 'b'\"c\"d && e", &["a 'b'\"c\"d", "e"]),
    ("echo \"it's\" && ls", &["echo \"it's\"", "ls"]),
    ("echo '' \"\" && ls", &["echo '' \"\"", "ls"]),
    // Globs, `~` and `#` inside a word mean what they mean in strict mode.
    (
        "ls ~user && ls *.rs src/[ab]?.rs",
        &["ls ~user", "ls *.rs src/[ab]?.rs"],
    ),
    ("a#x && b", &["a#x", "b"]),
    // An argument that looks like an assignment is an argument.
    ("make CC=gcc && ./a.out", &["make CC=gcc", "./a.out"]),
    // Reserved words and `!` are only syntax where a command name goes.
    ("echo if then fi; ls", &["echo if then fi", "ls"]),
    ("a ! b", &["a ! b"]),
    ("echo [[ ]]", &["echo [[ ]]"]),
    // A quoted reserved word is a command name (and needs a rule that says so).
    ("'if' x", &["'if' x"]),
    ("echo é && ls ü", &["echo é", "ls ü"]),
    // To a shell a no-break space is part of a word, so it stays in the part, where
    // it keeps the rule `ls` from matching.
    ("ls\u{a0}&& b", &["ls\u{a0}", "b"]),
];

#[test]
fn accepted_compositions_split_into_their_simple_commands() {
    for (command, expected) in ACCEPTED {
        assert_eq!(split(command).as_deref(), Some(*expected), "{command:?}");
    }
}

#[test]
fn the_parser_reading_the_whole_text_agrees_with_every_accepted_split() {
    for (command, _) in ACCEPTED {
        assert!(full_parse_agrees(command), "{command:?}");
    }
}

/// Constructs compound mode refuses, so that an approver is asked.
const REFUSED: &[(&str, &str)] = &[
    ("a $(b)", "command substitution"),
    ("a `b`", "command substitution"),
    ("a && echo $(id)", "command substitution"),
    ("cat <(a)", "process substitution"),
    ("a $X", "a variable"),
    ("a ${X}", "a variable"),
    ("echo $((1))", "arithmetic expansion"),
    ("(( 1 ))", "an arithmetic command"),
    ("a > f", "redirection"),
    ("a >> f", "redirection"),
    ("a < f", "redirection"),
    ("a 2>&1", "redirection"),
    ("a &> f", "redirection"),
    ("a <<EOF\nx\nEOF", "a heredoc"),
    ("a <<< x", "a here-string"),
    ("(a)", "a subshell"),
    ("a && (b)", "a subshell"),
    ("{ a; }", "a group"),
    ("echo {a,b}", "brace expansion"),
    ("a & b", "background"),
    ("a &", "background"),
    ("a |& b", "a pipe with standard error"),
    ("a=1 b", "an assignment prefix"),
    ("FOO=bar ls && pwd", "an assignment prefix"),
    ("a && FOO=bar ls", "an assignment prefix"),
    ("a[0]=x b", "an assignment prefix"),
    ("a+=1 b", "an assignment prefix"),
    ("a=1", "an assignment"),
    ("! a", "negation"),
    ("a && ! b", "negation"),
    ("# x", "a comment"),
    ("a # x && b", "a comment"),
    ("a && b # c", "a comment"),
    ("a && #b", "a comment"),
    ("if true; then a; fi", "a reserved word"),
    ("while a; do b; done", "a reserved word"),
    ("until a; do b; done", "a reserved word"),
    ("for x in a; do b; done", "a reserved word"),
    ("case x in x) a;; esac", "a reserved word"),
    ("function f { a; }", "a function"),
    ("f() { a; }", "a function"),
    ("select x in a; do b; done", "a reserved word"),
    ("time a", "time"),
    ("time -p a && b", "time"),
    ("a && time b", "time"),
    ("coproc a", "coproc"),
    ("a; coproc b", "coproc"),
    ("[[ -f x ]]", "a conditional command"),
    ("a && [[ -f x ]]", "a conditional command"),
    ("a; then b", "a reserved word"),
    ("a | done", "a reserved word"),
    ("repeat 3 a", "a zsh reserved word"),
    ("a &&& b", "a doubled operator"),
    ("a ||| b", "a doubled operator"),
    ("a | | b", "a doubled operator"),
    ("a & & b", "a doubled operator"),
    ("a;;b", "an empty command"),
    ("a ;& b", "a case terminator"),
    ("a ;;& b", "a case terminator"),
    ("a && ", "an empty command"),
    ("&& a", "an empty command"),
    ("| a", "an empty command"),
    ("a;", "an empty command"),
    (";", "an empty command"),
    ("", "nothing"),
    ("   ", "nothing"),
    ("echo 'a", "an open quote"),
    ("echo \"a && b", "an open quote"),
    ("echo 'a && b'", "a shell character in quotes"),
    ("echo \"a;b\"", "a shell character in quotes"),
    ("echo 'a|b' && ls", "a shell character in quotes"),
    ("a'&&'b", "a shell character in quotes"),
    ("echo a\\;b", "an escape"),
    ("a \\&& b", "an escape"),
    ("a\\\nb", "a line continuation"),
    ("a\nb", "a newline"),
    ("a &&\nb", "a newline"),
    ("a && b\n", "a newline"),
    ("a\r\nb", "CRLF"),
    ("a && b\r", "a carriage return"),
    ("a\0b", "NUL"),
    ("a && b\0", "NUL"),
    ("a\x1bb", "a control character"),
    ("a\x7fb && c", "a control character"),
    ("a\u{85}b && c", "a control character"),
];

#[test]
fn refused_constructs_fall_back_to_asking() {
    for (command, what) in REFUSED {
        assert_eq!(split(command), None, "{what}: {command:?}");
    }
}

#[test]
fn a_quoted_operator_is_one_part_with_its_quotes_and_still_refused() {
    // Both readers see one simple command with the quotes kept, not two...
    for command in ["echo 'a && b'", "echo \"a;b\""] {
        let scanned = scan(command).unwrap();
        assert_eq!(scanned.parts.len(), 1);
        assert_eq!(scanned.parts[0].text, command);
        assert!(full_parse_agrees(command), "{command:?}");
    }
    assert_eq!(
        words(scan("echo 'a && b'").unwrap().parts[0].text),
        ["echo", "'a && b'"]
    );
    // ...but that command holds a shell character, so no allow rule could match it
    // in strict mode, and compound mode does not change that.
    assert_eq!(split("echo 'a && b'"), None);
    assert_eq!(split("echo \"a;b\" && ls"), None);
}

/// Grammar errors: gate's scan and the shell parser each refuse them on their own.
#[test]
fn both_readers_refuse_a_grammar_error() {
    for command in [
        "a &&& b",
        "a && ",
        "&& a",
        "a;;b",
        "a | | b",
        "a; then b",
        "echo 'a",
        "| a",
    ] {
        assert_eq!(scan(command), None, "scan: {command:?}");
        assert!(parse(command).is_none(), "parser: {command:?}");
    }
}

/// More than simple commands: each reader refuses them on its own.
#[test]
fn both_readers_refuse_more_than_simple_commands() {
    for command in [
        "a & b",
        "a |& b",
        "! a",
        "time a",
        "a=1 b",
        "(a)",
        "[[ -f x ]]",
        "if a; then b; fi",
        "a > f",
        "a 2>&1",
        "cat <(a)",
        "f() { a; }",
        "{ a; }",
        "while a; do b; done",
    ] {
        assert!(split(command).is_none(), "{command:?}");
        assert!(
            scan(command).is_none()
                || scan(command)
                    .unwrap()
                    .parts
                    .iter()
                    .any(|p| first_unmatchable_char(p.text).is_some()),
            "scan: {command:?}"
        );
        assert!(parse(command).is_none(), "parser: {command:?}");
    }
}

#[test]
fn coproc_is_caught_by_the_scan_though_this_parser_reads_a_simple_command() {
    // brush-parser 0.2 does not know `coproc`, which runs its command in the
    // background: the reason gate keeps its own list of reserved words.
    assert!(parse("coproc a").is_some());
    assert_eq!(scan("coproc a"), None);
    assert_eq!(split("coproc a"), None);
}

#[test]
fn bash_reads_every_accepted_row_and_rejects_the_grammar_errors() {
    let bash = std::path::Path::new("/bin/bash");
    if !bash.exists() {
        return;
    }
    let syntax_ok = |command: &str| {
        std::process::Command::new(bash)
            .args(["-n", "-c", command])
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap()
            .success()
    };
    for (command, _) in ACCEPTED {
        assert!(syntax_ok(command), "{command:?}");
    }
    for command in ["a &&& b", "a && ", "&& a", "a;;b", "a | | b", "a; then b"] {
        assert!(!syntax_ok(command), "{command:?}");
    }
}

#[test]
fn every_reserved_word_is_refused_where_a_command_name_goes() {
    for word in RESERVED_WORDS {
        for command in [
            format!("{word} x"),
            format!("a && {word}"),
            format!("a | {word} b"),
        ] {
            assert_eq!(split(&command), None, "{command:?}");
        }
        // As an argument it is a plain word.
        let command = format!("echo {word} && ls");
        if first_unmatchable_char(word).is_none() {
            assert_eq!(
                split(&command),
                Some(vec![&command[..command.len() - 6], "ls"])
            );
        }
    }
}

#[test]
fn a_compound_command_holds_at_most_max_parts_simple_commands() {
    let chain = |n: usize| vec!["ls -l"; n].join(" && ");
    assert_eq!(split(&chain(MAX_PARTS)).map(|p| p.len()), Some(MAX_PARTS));
    assert_eq!(split(&chain(MAX_PARTS + 1)), None);
    assert_eq!(split(&chain(1000)), None);
}

#[test]
fn operators_have_their_text() {
    for op in Operator::ALL {
        let command = format!("a {} b", op.as_str());
        assert_eq!(scan(&command).unwrap().operators, [op]);
    }
}

// Strategies for the properties.

fn command_word() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9_.-]{0,6}".prop_filter("a reserved word is not a command name", |w| {
        !RESERVED_WORDS.contains(&w.as_str())
    })
}

fn argument() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9_./~*?=:,+%@^-]{1,8}",
        "'[a-z0-9 #=~*]{0,6}'",
        "\"[a-z0-9 #=~*']{0,6}\"",
        "[a-z]{1,3}'[a-z ]{0,3}'[a-z]{0,2}",
        "[a-z][a-z#!]{0,4}",
    ]
}

fn blanks() -> impl Strategy<Value = &'static str> {
    proptest::sample::select(vec!["", " ", "  ", "\t", " \t "])
}

fn separator() -> impl Strategy<Value = &'static str> {
    proptest::sample::select(vec![" ", "  ", "\t", " \t"])
}

/// One simple command of plain words, as text.
fn simple_command() -> impl Strategy<Value = String> {
    (
        command_word(),
        proptest::collection::vec((separator(), argument()), 0..4),
    )
        .prop_map(|(name, args)| {
            let mut text = name;
            for (sep, arg) in args {
                text.push_str(sep);
                text.push_str(&arg);
            }
            text
        })
}

fn operator() -> impl Strategy<Value = Operator> {
    proptest::sample::select(Operator::ALL.to_vec())
}

/// Simple commands, and the command that joins them with random operators and
/// blanks.
fn composition() -> impl Strategy<Value = (Vec<String>, String)> {
    (
        blanks(),
        simple_command(),
        proptest::collection::vec((blanks(), operator(), blanks(), simple_command()), 0..8),
        blanks(),
    )
        .prop_map(|(lead, first, rest, trail)| {
            let mut parts = vec![first.clone()];
            let mut text = format!("{lead}{first}");
            for (before, op, after, command) in rest {
                text.push_str(before);
                text.push_str(op.as_str());
                text.push_str(after);
                text.push_str(&command);
                parts.push(command);
            }
            text.push_str(trail);
            (parts, text)
        })
}

fn refused_char() -> impl Strategy<Value = char> {
    let mut chars: Vec<char> = SHELL_CHARS
        .into_iter()
        .filter(|c| !matches!(c, ';' | '&' | '|'))
        .collect();
    chars.extend(['\r', '\0', '\x1b', '\x7f', '\u{85}', '\u{9b}']);
    proptest::sample::select(chars)
}

/// Text made of pieces that matter to the scan: words, blanks, operators and their
/// characters, quotes, `#`, `=`, `!` and reserved words, weighted so that a fair
/// share of it splits.
fn shell_soup() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        6 => proptest::sample::select(vec!["a", "b", "ls", "x1", "é"]),
        4 => proptest::sample::select(vec![" ", "\t"]),
        3 => proptest::sample::select(vec![" && ", " || ", "; ", " | "]),
        2 => proptest::sample::select(vec![";", "&", "|", "&&", "||"]),
        2 => proptest::sample::select(vec![
            "'", "\"", "' '", "\"a b\"", "#", "=", "!", "if", "time", "[[", "x=1", "~",
        ]),
    ];
    proptest::collection::vec(piece, 0..16).prop_map(|pieces| pieces.concat())
}

/// Whatever `split` returns is sound: each part is non-empty, trimmed, free of every
/// shell character, found in order in the command, and read by the shell parser
/// from the whole text exactly as the scan read it.
fn check_sound(command: &str) -> Result<(), TestCaseError> {
    let Some(parts) = split(command) else {
        return Ok(());
    };
    let mut from = 0;
    for part in &parts {
        prop_assert!(!part.is_empty());
        prop_assert_eq!(*part, crate::policy::trim_blanks(part));
        prop_assert!(first_unmatchable_char(part).is_none());
        let at = command[from..].find(part);
        prop_assert!(at.is_some(), "{:?} not in order in {:?}", part, command);
        from += at.unwrap() + part.len();
    }
    prop_assert!(
        full_parse_agrees(command),
        "the parser disagrees on {:?}",
        command
    );
    Ok(())
}

/// The parts that are valid rules as allow rules. A part with a glob outside quotes
/// is none (see `patterns`): it is left out, so that part is asked whether alone or
/// in the composition, and the property holds the same.
fn rules(list: &[String]) -> AllowRules {
    let mut rules = AllowRules::new();
    for rule in list {
        if crate::policy::validate_rule(rule).is_ok() {
            rules.add(rule, Origin::Flag("--allow")).unwrap();
        }
    }
    rules
}

proptest! {
    #[test]
    fn a_composition_of_simple_commands_splits_into_exactly_them(
        (parts, command) in composition(),
    ) {
        prop_assert_eq!(split(&command), Some(parts.iter().map(String::as_str).collect()));
        prop_assert!(full_parse_agrees(&command), "{:?}", command);
    }

    /// The caller allows a compound command when every part matches an allow rule;
    /// that is exactly when every simple command in it is allowed on its own.
    #[test]
    fn compound_allow_means_every_part_is_allowed_on_its_own(
        (parts, command) in composition(),
        allowed in proptest::collection::vec(any::<bool>(), 8),
        by_prefix in any::<bool>(),
    ) {
        let rule_list: Vec<String> = parts
            .iter()
            .zip(&allowed)
            .filter(|(_, allowed)| **allowed)
            .map(|(part, _)| {
                if by_prefix {
                    part.split([' ', '\t']).next().unwrap().to_owned()
                } else {
                    part.clone()
                }
            })
            .collect();
        let rules = rules(&rule_list);
        let each_alone = parts.iter().all(|part| rules.find(part).is_some());
        let compound = split(&command)
            .is_some_and(|split| split.iter().all(|part| rules.find(part).is_some()));
        prop_assert_eq!(compound, each_alone, "{:?} with rules {:?}", command, rule_list);
        // And strict mode never allows a composition of two or more.
        if parts.len() > 1 {
            prop_assert!(rules.find(&command).is_none());
        }
    }

    #[test]
    fn any_other_shell_character_means_asking(
        before in "[ -~]{0,20}",
        c in refused_char(),
        after in "[ -~]{0,20}",
    ) {
        let command = format!("{before}{c}{after}");
        prop_assert_eq!(split(&command), None);
    }

    #[test]
    fn a_shell_character_inside_any_composition_means_asking(
        (_, command) in composition(),
        at in any::<proptest::sample::Index>(),
        c in refused_char(),
    ) {
        let mut chars: Vec<char> = command.chars().collect();
        chars.insert(at.index(chars.len() + 1), c);
        let command: String = chars.into_iter().collect();
        prop_assert_eq!(split(&command), None);
    }

    #[test]
    fn parts_joined_again_split_into_the_same_parts(
        (_, command) in composition(),
        ops in proptest::collection::vec(operator(), 8),
    ) {
        let parts = split(&command).unwrap();
        let mut joined = parts[0].to_owned();
        for (part, op) in parts[1..].iter().zip(&ops) {
            joined.push_str(&format!(" {} {part}", op.as_str()));
        }
        prop_assert_eq!(split(&joined), Some(parts));
    }

}

proptest! {
    // Cheap cases, and most of them are refused: run more of them.
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn whatever_is_split_is_sound(command in shell_soup()) {
        check_sound(&command)?;
    }

    #[test]
    fn whatever_is_split_is_sound_for_any_text(command in "\\PC{0,40}") {
        check_sound(&command)?;
    }
}
