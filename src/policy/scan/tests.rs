use super::lexer::lex;
use super::wrapper_table::{FLOCK_LONG, WRAPPERS};
use super::wrappers::{Resolved, Takes, resolve_long};
use super::*;

fn texts(command: &SimpleCommand) -> Vec<&str> {
    command.iter().map(|w| w.text.as_str()).collect()
}

fn lexed(text: &str) -> Vec<Vec<String>> {
    lex(text)
        .iter()
        .map(|c| texts(c).into_iter().map(String::from).collect())
        .collect()
}

fn candidates(text: &str) -> Vec<String> {
    candidate_commands(text)
        .unwrap()
        .iter()
        .map(|c| texts(c).join(" "))
        .collect()
}

#[test]
fn plain_words_are_split_on_blanks() {
    assert_eq!(lexed("git  push\t--force"), [["git", "push", "--force"]]);
}

#[test]
fn separators_split_commands() {
    for text in [
        "ls; rm -rf /",
        "ls;rm -rf /",
        "ls && rm -rf /",
        "ls || rm -rf /",
        "ls | rm -rf /",
        "ls & rm -rf /",
        "ls\nrm -rf /",
        "ls |& rm -rf /",
    ] {
        assert_eq!(
            lexed(text),
            [vec!["ls"], vec!["rm", "-rf", "/"]],
            "{text:?}"
        );
    }
}

#[test]
fn quotes_are_removed() {
    assert_eq!(lexed(r#"r"m" '-rf' \/"#), [["rm", "-rf", "/"]]);
    assert_eq!(lexed(r#""a b" 'c d'"#), [["a b", "c d"]]);
}

#[test]
fn quoted_separators_do_not_split() {
    assert_eq!(lexed("echo 'a; rm -rf /'"), [["echo", "a; rm -rf /"]]);
    assert_eq!(lexed(r#"echo "a && b""#), [["echo", "a && b"]]);
    assert_eq!(lexed(r"echo a\;b"), [["echo", "a;b"]]);
}

#[test]
fn a_case_pattern_does_not_close_a_substitution() {
    for text in [
        "echo \"$(case a in a) rm victim;; esac)\"",
        "echo $(case a in (a) rm victim;; esac)",
        "x=$(case a in a) echo;; b) rm victim;; esac) ; ls",
    ] {
        assert!(candidates(text).contains(&"rm victim".to_owned()), "{text}");
    }
    // A stray `case` reads further, never less.
    assert!(candidates("echo $(echo case) ; rm victim").contains(&"rm victim".to_owned()));
}

#[test]
fn substitutions_are_commands_of_their_own() {
    for text in [
        "echo $(rm -rf /)",
        "echo \"$(rm -rf /)\"",
        "echo `rm -rf /`",
        "echo \"`rm -rf /`\"",
        "cat <(rm -rf /)",
        "tee >(rm -rf /)",
        "echo ${x:-$(rm -rf /)}",
        "echo $((1 + $(rm -rf /)))",
    ] {
        let all = lexed(text);
        assert!(
            all.iter().any(|c| c == &["rm", "-rf", "/"]),
            "{text:?} gave {all:?}"
        );
    }
}

#[test]
fn nested_quotes_inside_substitutions_are_their_own() {
    let all = lexed(r#"echo "$(echo "inner" ; rm -rf /)" done"#);
    assert!(
        all.contains(&vec!["rm".into(), "-rf".into(), "/".into()]),
        "{all:?}"
    );
}

#[test]
fn substituted_words_are_dynamic() {
    let commands = lex("$(echo rm) -rf /");
    let outer = commands.iter().find(|c| c.len() == 3).unwrap();
    assert!(outer[0].dynamic);
    assert!(!outer[1].dynamic);
    let commands = lex("\"$X\" -rf");
    assert!(commands[0][0].dynamic);
}

#[test]
fn redirections_and_their_targets_are_dropped() {
    assert_eq!(lexed(">/dev/null rm -rf /"), [["rm", "-rf", "/"]]);
    assert_eq!(lexed("rm -rf / 2>&1"), [["rm", "-rf", "/"]]);
    assert_eq!(lexed("rm 2> err -rf /"), [["rm", "-rf", "/"]]);
    assert_eq!(lexed("rm &>log -rf /"), [["rm", "-rf", "/"]]);
    assert_eq!(lexed("cat <<EOF"), [["cat"]]);
}

#[test]
fn subshells_and_groups_split_commands() {
    assert_eq!(lexed("(rm -rf /)"), [["rm", "-rf", "/"]]);
    assert_eq!(lexed("{ rm -rf /; }"), [["rm", "-rf", "/"]]);
    assert_eq!(
        lexed("ls&&(cd x;rm -rf /)"),
        [vec!["ls"], vec!["cd", "x"], vec!["rm", "-rf", "/"]]
    );
}

#[test]
fn comments_end_at_the_newline() {
    assert_eq!(lexed("ls # rm -rf /"), [["ls"]]);
    assert_eq!(
        lexed("ls # x\nrm -rf /"),
        [vec!["ls"], vec!["rm", "-rf", "/"]]
    );
    assert_eq!(lexed("echo a#b"), [["echo", "a#b"]]);
}

/// dash (gate's default `/bin/sh`) has no `$'…'`: there the quote ends at the second
/// `'`, and `rm victim` runs where bash reads one string; and `&>` is `&` then `>`.
/// Each text is read both ways. (Before: only bash's reading, and each of these
/// removed the victim under dash past `--deny rm`.)
#[test]
fn a_text_is_also_read_as_dash_reads_it() {
    for (text, dash_runs) in [
        (r"echo $'\' ; rm victim ; # '", "rm victim"),
        (r"a=$'\' rm victim # '", "rm victim"),
        (r"case $'\' in *) rm victim ;; esac ; # '", "rm victim"),
        ("echo hi &> out rm victim", "rm victim"),
    ] {
        assert!(
            candidates(text).iter().any(|c| c == dash_runs),
            "{text:?}: {:?}",
            candidates(text)
        );
    }
    // bash's reading is kept: the ANSI-C string is still decoded.
    assert!(candidates(r"$'\x72m' x").iter().any(|c| c == "rm x"));
    // Text without either form is read once.
    assert_eq!(candidates("ls; rm x"), ["ls", "rm x"]);
}

/// A string handed to a shell by name is read as that shell reads it, whatever
/// reading of the outer text found it. (Before, one reading held for the whole text,
/// nested strings included, and each of these removed the victim under dash past
/// `--deny rm`: dash's `-c` string written with backslashes holds no `$'` for the
/// outer text to be read twice; bash's string found only in dash's reading of the
/// outer text was read as dash; `$"…"` is `$` then a quote to dash, so dash hands
/// bash a `$'…'` string.)
#[test]
fn a_nested_string_is_read_as_its_own_shell_reads_it() {
    for text in [
        r"dash -c \e\c\h\o\ \$\'\\\'\ \;\ \r\m\ \v\i\c\t\i\m\ \;\ \#\'",
        r#"echo $'\' ; bash -c "\$'\\x72m' victim" ; #'"#,
        r#"bash -c $"'\\x72m' victim""#,
        r#"sh -c $"'\\x72m' victim""#,
    ] {
        let found = candidates(text);
        assert!(
            found.iter().any(|c| c == "rm victim"),
            "{text:?}: {found:?}"
        );
    }
    // The control: bash, whose reading these texts were read with alone before,
    // finds no `rm` in them.
    let mut bash_alone = Vec::new();
    for text in [
        r"dash -c \e\c\h\o\ \$\'\\\'\ \;\ \r\m\ \v\i\c\t\i\m\ \;\ \#\'",
        r#"echo $'\' ; bash -c "\$'\\x72m' victim" ; #'"#,
        r#"bash -c $"'\\x72m' victim""#,
    ] {
        for command in lex(text) {
            bash_alone.push(texts(&command).join(" "));
        }
    }
    assert!(
        !bash_alone.iter().any(|c| c.starts_with("rm")),
        "{bash_alone:?}"
    );
    // A string for bash by name takes bash's reading only.
    // (The outer text holds `$"` and `&>`, so it is read three ways; the string
    // for bash is read as bash reads it in each.)
    for found in candidates(r#"bash -c 'echo $"a" &> f'"#) {
        assert!(
            [r#"bash -c echo $"a" &> f"#, "echo a"].contains(&found.as_str()),
            "{found:?}"
        );
    }
}

#[test]
fn ansi_c_strings_are_decoded() {
    assert_eq!(lexed(r"$'\x72m' -rf /"), [["rm", "-rf", "/"]]);
    assert_eq!(lexed(r"$'\162m' -rf /"), [["rm", "-rf", "/"]]);
    assert_eq!(lexed(r"$'r\u006d' -rf /"), [["rm", "-rf", "/"]]);
}

#[test]
fn brace_expansion_produces_words() {
    assert_eq!(lexed("{rm,-rf,/}"), [["rm", "-rf", "/"]]);
    assert_eq!(lexed("a{b,c}d"), [["abd", "acd"]]);
    assert_eq!(lexed("'{rm,-rf}'"), [["{rm,-rf}"]]);
    assert_eq!(lexed("echo {1..3}"), [["echo", "1", "2", "3"]]);
    assert_eq!(lexed("{r..r}m"), [["rm"]]);
    assert_eq!(
        lexed("x{Z..b}"),
        [["xZ", "x[", "x\\", "x]", "x^", "x_", "x`", "xa", "xb"]]
    );
    assert_eq!(
        lexed("{01..3} {1..7..3} {a..e..2}"),
        [["01", "02", "03", "1", "4", "7", "a", "c", "e"]]
    );
    assert_eq!(lexed("{5..3} {-1..1}"), [["5", "4", "3", "-1", "0", "1"]]);
    assert_eq!(lexed("{a..1} '{r..r}'"), [["{a..1}", "{r..r}"]]);
}

#[test]
fn line_continuations_join_words() {
    assert_eq!(lexed("r\\\nm -rf /"), [["rm", "-rf", "/"]]);
}

#[test]
fn unterminated_input_never_panics() {
    for text in [
        "'",
        "\"",
        "$(",
        "`",
        "${",
        "$'",
        "\\",
        "echo \"$(",
        "((",
        "))",
        "}}",
        "{{",
        "<",
        ">",
        "&>",
        "$'\\x",
        "$'\\u",
        "$'\\0",
        "a{,",
        "{,}",
        "$",
        "\"$\"",
        "<(",
        "$((",
        "${a",
    ] {
        let _ = candidate_commands(text).unwrap();
    }
}

#[test]
fn assignments_are_skipped() {
    assert_eq!(candidates("FOO=1 BAR+=2 rm -rf /"), ["rm -rf /"]);
    assert_eq!(candidates("FOO=1"), Vec::<String>::new());
    // Not an assignment: the name is not a valid identifier.
    assert_eq!(candidates("1FOO=1 rm"), ["1FOO=1 rm"]);
}

#[test]
fn wrappers_are_peeled_one_by_one() {
    let found = candidates("env -i FOO=1 nohup timeout -s KILL 5 nice -n 10 rm -rf /");
    assert!(found.contains(&"rm -rf /".to_owned()), "{found:?}");
    assert!(found.iter().any(|c| c.starts_with("env ")), "{found:?}");
    assert!(found.iter().any(|c| c.starts_with("nohup ")), "{found:?}");
}

#[test]
fn wrapper_options_with_values_are_skipped() {
    for text in [
        "sudo -u root rm -rf /",
        "sudo -uroot rm -rf /",
        "sudo --user=root rm -rf /",
        "sudo --user root -- rm -rf /",
        "timeout --signal=KILL 10s rm -rf /",
        "nice -5 rm -rf /",
        "command -p rm -rf /",
        "exec -a name rm -rf /",
        "stdbuf -oL rm -rf /",
        "xargs -n 1 rm -rf /",
        "env -u HOME rm -rf /",
        "env -S 'rm -rf /'",
        "env --split-string='rm -rf' /",
        "/usr/bin/env rm -rf /",
        "time -p rm -rf /",
        "sudo -R / rm -rf /",
        "runuser -u root -- rm -rf /",
        "flock . rm -rf /",
        "flock -w 5 . rm -rf /",
        "xargs -a list -i rm -rf /",
        "xargs -a list -e rm -rf /",
        "xargs -a list -l rm -rf /",
        "xargs -a list --replace rm -rf /",
        "xargs -iX rm -rf /",
        "bash -c -- 'rm -rf /'",
        "sh -c -e 'rm -rf /'",
        "bash -xc -- 'rm -rf /'",
        "bash -c -o errexit 'rm -rf /'",
        "bash -o errexit -c 'rm -rf /'",
        "bash +o posix -c 'rm -rf /'",
    ] {
        let found = candidates(text);
        assert!(
            found.iter().any(|c| c.starts_with("rm -rf")),
            "{text:?} gave {found:?}"
        );
    }
}

#[test]
fn nested_shell_strings_are_read_too() {
    for text in [
        "bash -c 'rm -rf /'",
        "sh -lc \"rm -rf /\"",
        "/bin/sh -ec 'ls; rm -rf /'",
        "eval 'rm -rf /'",
        "eval rm -rf /",
        "su -c 'rm -rf /' root",
        "find . -exec rm -rf {} ;",
        "bash -c \"bash -c 'rm -rf /'\"",
    ] {
        let found = candidates(text);
        assert!(
            found.iter().any(|c| c.starts_with("rm -rf")),
            "{text:?} gave {found:?}"
        );
    }
}

#[test]
fn every_shell_in_the_table_has_its_string_read_as_it_reads_its_options() {
    for text in [
        "rbash -c 'rm -rf /'",
        "/usr/bin/rbash -c 'rm -rf /'",
        "rzsh -c 'rm -rf /'",
        "bash5.2 -c 'rm -rf /'",
        "zsh-5.9 -c 'rm -rf /'",
        "ksh93 -c 'rm -rf /'",
        "lksh -c 'rm -rf /'",
        "posh -c 'rm -rf /'",
        "busybox sh -c 'rm -rf /'",
        "toybox sh -c 'rm -rf /'",
        "bash -c - 'rm -rf /'",
        "zsh -O -c 'rm -rf /'",
        "zsh -oerrexit -c 'rm -rf /'",
        "ksh -oerrexit -c 'rm -rf /'",
        "mksh -T /dev/tty1 -c 'rm -rf /'",
        "yash -o cmdline 'rm -rf /'",
        "yash --cmdline 'rm -rf /'",
        "fish -C 'rm -rf /'",
        "fish --init-command='rm -rf /'",
        "fish -c ls -c 'rm -rf /'",
        "fish -c\"rm -rf /\"",
        "tcsh -c 'rm -rf /'",
        "bash $OPT 'rm -rf /'",
    ] {
        let found = candidates(text);
        assert!(
            found.iter().any(|c| c.starts_with("rm -rf")),
            "{text:?} gave {found:?}"
        );
    }
    // Operands after the command string are NAME and arguments, not text.
    for text in ["bash -c 'echo $0' rm", "sh script rm", "fish -c ls rm"] {
        let found = candidates(text);
        assert!(
            !found.iter().any(|c| c.starts_with("rm")),
            "{text:?} gave {found:?}"
        );
    }
}

#[test]
fn a_zsh_equals_command_is_also_read_as_the_program_it_names() {
    for text in ["=rm x", "zsh -c '=rm x'", "=sudo rm x", "FOO=1 =rm x"] {
        let found = candidates(text);
        assert!(found.iter().any(|c| c == "rm x"), "{text:?} gave {found:?}");
    }
    // `=` alone, and an argument that starts with `=`, are not commands.
    for text in ["= rm x", "echo =rm x"] {
        let found = candidates(text);
        assert!(
            !found.iter().any(|c| c == "rm x"),
            "{text:?} gave {found:?}"
        );
    }
}

#[test]
fn fish_and_or_not_run_the_command_after_them() {
    for text in [
        "fish -c 'true; and rm x'",
        "fish -c 'false; or rm x'",
        "not rm x",
    ] {
        let found = candidates(text);
        assert!(found.iter().any(|c| c == "rm x"), "{text:?} gave {found:?}");
    }
    let found = candidates("echo and rm x");
    assert!(!found.iter().any(|c| c == "rm x"), "{found:?}");
}

#[test]
fn a_fish_string_is_also_read_with_fish_quotes() {
    // In fish `\'` inside single quotes is a quote: `'a\''` ends there.
    let found = candidates("fish -c \"echo 'a\\\\'' ; rm x #'\"");
    assert!(found.iter().any(|c| c == "rm x"), "{found:?}");
    // bash reads the same string as one quoted word.
    let found = candidates("bash -c \"echo 'a\\\\'' ; rm x #'\"");
    assert!(!found.iter().any(|c| c == "rm x"), "{found:?}");
}

#[test]
fn nesting_past_the_bound_is_refused_not_let_through() {
    let text = format!("{}rm -rf /", "eval ".repeat(40));
    assert_eq!(candidate_commands(&text), Err(TooComplex));
    let text = format!("{}rm -rf /", "find -exec ".repeat(40));
    assert_eq!(candidate_commands(&text), Err(TooComplex));
    let mut text = "rm x".to_owned();
    for _ in 0..(MAX_NESTED_SHELLS + 1) {
        text = format!("sh -c {}", shell_words::quote(&text));
    }
    assert_eq!(candidate_commands(&text), Err(TooComplex));
    // Within the bound, the innermost command is found.
    let text = format!("{}rm -rf /", "eval ".repeat(MAX_NESTED_SHELLS));
    assert!(candidates(&text).contains(&"rm -rf /".to_owned()));
}

#[test]
fn reserved_words_do_not_hide_commands() {
    for text in [
        "for f in a; do rm -rf /; done",
        "if true; then rm -rf /; fi",
        "if rm -rf /; then :; fi",
        "if false; then :; elif rm -rf /; then :; fi",
        "if false; then :; else rm -rf /; fi",
        "while rm -rf /; do :; done",
        "until rm -rf /; do :; done",
        "! rm -rf /",
        "coproc rm -rf /",
        "case x in x) rm -rf /;; esac",
    ] {
        let found = candidates(text);
        assert!(
            found.iter().any(|c| c.starts_with("rm -rf")),
            "{text:?} gave {found:?}"
        );
    }
}

#[test]
fn computed_command_strings_are_wildcards() {
    for text in ["eval \"$CMD\"", "bash -c \"$CMD\"", "sh -c \"rm $X\""] {
        let found = candidate_commands(text).unwrap();
        assert!(
            found.iter().any(|c| c.len() == 1 && c[0].dynamic),
            "{text:?} gave {found:?}"
        );
    }
}

#[test]
fn pathological_input_is_reported_not_ground_through() {
    let text = format!("{}rm", "env ".repeat(20_000));
    assert_eq!(candidate_commands(&text), Err(TooComplex));
}

#[test]
fn brace_expansion_past_its_bound_is_too_complex_not_cut_short() {
    // Cutting it short would hide what comes after the bound.
    assert_eq!(candidate_commands(&"{a,b}".repeat(30)), Err(TooComplex));
    assert_eq!(candidate_commands(&"{a,b}".repeat(8000)), Err(TooComplex));
    assert_eq!(
        candidate_commands("echo {1..99999999999999}"),
        Err(TooComplex)
    );
    let many: Vec<String> = (0..MAX_BRACE_WORDS).map(|i| format!("w{i}")).collect();
    let text = format!("{{{},rm}} x", many.join(","));
    assert_eq!(candidate_commands(&text), Err(TooComplex));
    // Within the bound, every word is there.
    let text = format!("{{{},rm}} x", many[..300].join(","));
    assert!(lex(&text)[0].iter().any(|w| w.text == "rm"));
}

fn finds(text: &str, command: &str) -> bool {
    candidates(text).iter().any(|c| c == command)
}

#[test]
fn a_dash_after_a_redirection_is_its_target_not_part_of_the_operator() {
    for text in [
        ">- rm x",
        "<&- rm x",
        "2>&- rm x",
        ">&- rm x",
        ">& - rm x",
        "{fd}>/dev/null rm x",
        "{fd}<&- rm x",
        "{a[0]}>/dev/null rm x",
        "<<< word rm x",
        ">|f rm x",
        "<>f rm x",
    ] {
        assert!(finds(text, "rm x"), "{text:?} gave {:?}", candidates(text));
    }
    // Not a named descriptor: brace expansion runs it as `rm x`.
    assert!(finds("{rm,x}>/dev/null", "rm x"));
}

#[test]
fn array_element_assignments_are_skipped_like_assignments() {
    for text in [
        "a[0]=x rm x",
        "a[x=1]=2 rm x",
        "a[$i]+=y rm x",
        "a[b[1]]=z rm x",
    ] {
        assert!(finds(text, "rm x"), "{text:?} gave {:?}", candidates(text));
    }
    assert_eq!(candidates("a[=x rm"), ["a[=x rm"]);
}

#[test]
fn backticks_nest_with_escaped_backticks() {
    assert!(finds("echo `echo \\`rm x\\``", "rm x"));
    assert!(finds("echo \"`echo \\`rm x\\``\"", "rm x"));
    assert!(finds("`echo \\`echo \\\\\\`rm x\\\\\\`\\``", "rm x"));
}

#[test]
fn a_quote_in_a_here_document_never_hides_what_follows_it() {
    for text in [
        "cat > f <<EOF\ndon't\nEOF\nrm -rf build",
        "cat > f <<'EOF'\ndon't\nEOF\nrm -rf build",
        "cat > f <<-EOF\n\tdon\"t\n\tEOF\nrm -rf build",
        "cat <<A <<B\n'\nA\n\"\nB\nrm -rf build",
        "cat <<EOF; echo '\n'\nEOF\nrm -rf build",
    ] {
        assert!(
            finds(text, "rm -rf build"),
            "{text:?} gave {:?}",
            candidates(text)
        );
    }
    // The body's substitutions run, whatever quotes surround them.
    assert!(finds("cat <<EOF\ndon't $(rm x)\nEOF", "rm x"));
    // A shift that is not a here-document never hides a later line.
    assert!(finds("(( a = 1 << 2 ))\necho don't\nrm x", "rm x"));
    assert!(finds("echo $[1<<2]\necho don't\nrm x", "rm x"));
    // The body is still read as a script, for `sh <<EOF`.
    assert!(finds("sh <<'EOF'\nrm x\nEOF", "rm x"));
}

#[test]
fn ansi_c_octal_escapes_keep_their_low_eight_bits() {
    assert_eq!(lexed(r"$'\562\555' x"), [["rm", "x"]]);
    assert_eq!(lexed(r"$'\x72\x6d' x"), [["rm", "x"]]);
    assert_eq!(lexed(r"$'\303\251'"), [["\u{e9}"]]);
}

#[test]
fn options_with_values_before_a_shell_command_string_are_skipped() {
    for text in [
        "bash --rcfile /dev/null -c 'rm x'",
        "bash --init-file /dev/null -c 'rm x'",
        "eval -- rm x",
        "eval -- 'rm x'",
    ] {
        assert!(finds(text, "rm x"), "{text:?} gave {:?}", candidates(text));
    }
}

#[test]
fn env_split_string_reads_gnu_escapes() {
    for text in [
        "env -S 'rm\\_x'",
        "env -S 'rm x\\c ignored'",
        "env -S '\"rm\" x'",
        "env -S \"rm  x #comment\"",
        "env --split='rm x'",
        "env --sp 'rm x'",
    ] {
        assert!(finds(text, "rm x"), "{text:?} gave {:?}", candidates(text));
    }
    let found = candidate_commands("env -S 'rm ${X}'").unwrap();
    assert!(
        found.iter().any(|c| c[0].text == "rm" && c[1].dynamic),
        "{found:?}"
    );
}

#[test]
fn long_options_may_be_abbreviated_as_getopt_long_accepts_them() {
    for text in [
        "env --chd . rm x",
        "env --unse HOME rm x",
        "nice --adj 5 rm x",
        "timeout --sig KILL 5 rm x",
        "timeout --k 1 5 rm x",
        "sudo --us root rm x",
        "xargs --arg /dev/null rm x",
        "stdbuf --out L rm x",
        "flock --time 1 . rm x",
        "chroot --user root:root / rm x",
        "strace --trace execve rm x",
        "strace --o /dev/null rm x",
        "ionice --cl 2 rm x",
        "time --f %e rm x",
        "watch --int 1 rm x",
        "su --comm 'rm x'",
        "runuser --session-c 'rm x' root",
        "flock . --comm 'rm x'",
        // Unknown to the table: read both with and without a value.
        "env --frobnicate X rm x",
        "env --frobnicate rm x",
    ] {
        assert!(finds(text, "rm x"), "{text:?} gave {:?}", candidates(text));
    }
}

#[test]
fn getopt_long_prefixes_resolve_like_glibc() {
    let env = WRAPPERS.iter().find(|w| w.name == "env").unwrap().long;
    assert_eq!(
        resolve_long(env, "chd"),
        Resolved::One("chdir", Takes::Value)
    );
    assert_eq!(
        resolve_long(env, "null"),
        Resolved::One("null", Takes::Nothing)
    );
    assert_eq!(resolve_long(env, "zzz"), Resolved::Unknown);
    assert!(matches!(resolve_long(env, "i"), Resolved::Several(_)));
    let flock = FLOCK_LONG;
    // Exact wins over a longer name with the same prefix.
    assert_eq!(
        resolve_long(flock, "nb"),
        Resolved::One("nb", Takes::Nothing)
    );
}

#[test]
fn watch_runs_its_arguments_through_a_shell() {
    for text in [
        "watch -n 1 'rm x'",
        "watch 'ls; rm x'",
        "watch -d 'rm x'",
        "watch -x rm x",
    ] {
        assert!(finds(text, "rm x"), "{text:?} gave {:?}", candidates(text));
    }
    let found = candidate_commands("watch \"$CMD\"").unwrap();
    assert!(found.iter().any(|c| c.len() == 1 && c[0].dynamic));
}

#[test]
fn unquoted_glob_characters_make_a_pattern() {
    let word = &lex("/usr/bin/r[m] '*' a\\*")[0];
    assert_eq!(word[0].pattern.as_deref(), Some("/usr/bin/r[m]"));
    assert_eq!(word[1].pattern, None);
    assert_eq!(word[2].pattern, None);
    assert_eq!(lex("r'*'[m]")[0][0].pattern.as_deref(), Some("r\\*[m]"));
    for (pattern, text, expect) in [
        ("r[m]", "rm", true),
        ("r?", "rm", true),
        ("*", "rm", true),
        ("r*m", "rm", true),
        ("[!a]m", "rm", true),
        ("[a-s]m", "rm", true),
        ("[[:alpha:]]m", "rm", true),
        ("r[n]", "rm", false),
        ("r\\*", "rm", false),
        ("r[", "r[", true),
        ("*.o", "-rf", false),
    ] {
        assert_eq!(glob_matches(pattern, text), expect, "{pattern} {text}");
    }
}

#[test]
fn an_extglob_group_may_be_any_program() {
    let found = candidate_commands("shopt -s extglob\n+(r)m x").unwrap();
    assert!(
        found.iter().any(|c| c.len() == 1 && c[0].dynamic),
        "{found:?}"
    );
}

#[test]
fn expansion_work_is_bounded_for_every_kind() {
    // Here-documents read inside here-documents, and backticks inside backticks,
    // stop at a depth rather than recurse without end.
    let text = "cat <<A\n".repeat(200);
    assert_eq!(candidate_commands(&text), Err(TooComplex));
    let mut text = "rm x".to_owned();
    for _ in 0..12 {
        text = format!("echo `{}`", text.replace('\\', "\\\\").replace('`', "\\`"));
        if text.len() > 200_000 {
            break;
        }
    }
    let _ = candidate_commands(&text);
    let text = format!("{}rm x", "env --zz ".repeat(40));
    assert_eq!(candidate_commands(&text), Err(TooComplex));
}
