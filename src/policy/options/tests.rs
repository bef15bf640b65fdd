use std::collections::BTreeSet;

use super::table::{PROGRAMS, Program, Style, Takes};
use super::*;

/// The rule `rule` read by its program's entry.
fn rule(rule: &str) -> RuleArgs {
    let words: Vec<String> = rule.split(' ').map(str::to_owned).collect();
    RuleArgs::new(&words[0], &words[1..])
}

/// Whether the rule matches `command`, both plain words split at spaces, the command's
/// program taken as the rule's.
fn matches(rule_text: &str, command: &str) -> bool {
    let words: Vec<&str> = command.split(' ').collect();
    rule(rule_text).matched_by(words[1..].iter().map(|w| Arg::literal(w.as_bytes())))
}

fn options(rule_text: &str) -> BTreeSet<String> {
    rule(rule_text).options().into_iter().collect()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn a_rule_is_read_into_operands_in_order_and_options_as_a_set() {
    let r = rule("rm -rf /");
    assert_eq!(r.operands(), ["/"]);
    assert_eq!(options("rm -rf /"), set(&["--recursive", "--force"]));
    for same in [
        "rm -fr /",
        "rm -r -f /",
        "rm / -rf",
        "rm -Rf /",
        "rm --recursive --force /",
        "rm --rec --forc /",
        "rm --force -R /",
    ] {
        assert_eq!(options(same), options("rm -rf /"), "{same}");
        assert_eq!(rule(same).operands(), ["/"], "{same}");
    }
}

#[test]
fn clustered_split_and_reordered_short_options_match() {
    for command in [
        "rm -rf x",
        "rm -fr x",
        "rm -r -f x",
        "rm -rfv x",
        "rm -vfr x",
        "rm -Rf x",
        "rm -f -R x",
        "rm x -rf",
        "rm x -r y -f",
        "rm --recursive --force x",
        "rm --rec --forc x",
        "rm -r --force x",
    ] {
        assert!(matches("rm -rf", command), "{command}");
    }
}

#[test]
fn a_missing_option_or_operand_does_not_match() {
    for (rule, command) in [
        ("rm -rf", "rm -r x"),
        ("rm -rf", "rm -f x"),
        ("rm -rf", "rm x"),
        ("rm -rf /", "rm -rf x"),
        ("git push --force", "git push origin main"),
        ("git push --force", "git push --force-with-lease"),
        (
            "git push --force",
            "git push --force-with-lease=main:abc origin",
        ),
        (
            "git push --force",
            "git push --force-if-includes --force-with-lease",
        ),
        ("git push --force", "git push --force-"),
        ("git push --force", "git pull --force"),
        ("git push --force", "git push -- -f"),
        ("git push --force", "git push origin -- --force"),
        ("git push --force", "git push --no-force"),
        ("git push", "git stash push"),
        ("git push", "git log --grep push"),
        ("git clean -f", "git clean -n"),
        ("git reset --hard", "git reset --soft"),
        ("git branch -D", "git branch -d x"),
        ("git checkout -B", "git checkout -b x"),
        ("cp -a", "cp -r x y"),
        ("chmod -R 777", "chmod 777 -v x"),
        ("chmod 777", "chmod 0777 x"),
        (
            "kubectl delete --all",
            "kubectl delete --all-namespaces pod x",
        ),
        ("find / -delete", "find / -name -delete"),
        ("find / -delete", "find /tmp -delete"),
        ("dd of=/dev/sda", "dd if=/dev/sda of=x"),
        ("curl -X DELETE", "curl -X GET"),
        (
            "terraform destroy -auto-approve",
            "terraform apply -auto-approve",
        ),
        ("npm publish", "npm --registry publish x"),
    ] {
        assert!(!matches(rule, command), "{rule:?} matched {command:?}");
    }
}

#[test]
fn long_forms_and_their_unique_prefixes_are_the_short_options() {
    for (rule, command) in [
        ("git push --force", "git push -f"),
        ("git push -f", "git push --force"),
        // A prefix of several names (git refuses it) is read as each of them.
        ("git push --force", "git push --forc"),
        ("git push --force", "git push --fo"),
        ("git push --force-with-lease", "git push --force-w"),
        ("git clean -fdx", "git clean -x -d --force"),
        ("git clean -f", "git clean -ffdx"),
        ("git reset --hard", "git reset --ha HEAD~1"),
        ("git branch -D", "git branch --delete --force x"),
        ("git branch -D", "git branch -d -f x"),
        ("git branch -d", "git branch -D x"),
        ("git branch -M", "git branch --move --force a b"),
        ("git checkout -b", "git checkout -B x"),
        ("git switch -c x", "git switch -C x"),
        ("git switch --discard-changes", "git switch -f main"),
        ("git rebase --force-rebase", "git rebase --no-ff main"),
        ("git commit --amend", "git commit -m x --amend"),
        ("git commit --no-verify", "git commit -nm x"),
        ("cp -r", "cp -a x y"),
        ("cp -a", "cp -dR --preserve=all x y"),
        ("cp -rf", "cp --recursive --force x y"),
        ("mv -f", "mv --force x y"),
        ("ln -sf", "ln --symbolic --force x y"),
        ("chmod -R 777", "chmod --recursive 777 /"),
        ("chmod -R 777", "chmod 777 / -R"),
        ("chown -R", "chgrp -R x y"),
        ("chgrp -R root", "chgrp --recursive root /"),
        ("rmdir -p", "rmdir --parents a/b"),
        ("shred -u", "shred --remove x"),
        ("shred -u", "shred --remove=unlink x"),
        ("shred -u", "shred -zu x"),
        ("truncate -s 0", "truncate --size 0 x"),
        ("truncate -s 0", "truncate --size=0 x"),
        ("truncate -s 0", "truncate -s0 x"),
        ("docker rm -f", "docker rm --force x"),
        (
            "docker system prune -a",
            "docker system prune --all --force",
        ),
        ("docker rmi -f", "docker -H tcp://x rmi --force img"),
        ("podman rm -a", "podman rm --all"),
        ("kubectl delete --all", "kubectl -n prod delete pods --all"),
        (
            "kubectl delete ns prod",
            "kubectl delete --namespace x ns prod",
        ),
        ("kubectl delete -A", "kubectl delete pods --all-namespaces"),
        ("mkfs -t ext4", "mkfs --type ext4 /dev/x"),
        ("mkfs -t ext4", "mkfs -text4 /dev/x"),
        ("wipefs -a", "wipefs --all /dev/x"),
        ("curl -X DELETE", "curl -XDELETE https://x"),
        ("curl -X DELETE", "curl --request DELETE https://x"),
        ("curl -X DELETE", "curl --request=DELETE https://x"),
        ("curl -X DELETE", "curl https://x -s --req DELETE"),
        ("wget -r", "wget --recursive https://x"),
    ] {
        assert!(matches(rule, command), "{rule:?} did not match {command:?}");
    }
}

#[test]
fn options_may_come_anywhere_before_a_double_dash() {
    assert!(matches("git push --force", "git push origin main --force"));
    assert!(matches("git push --force", "git push origin --force main"));
    assert!(matches("rm -rf", "rm a b c -rf"));
    assert!(matches("rm -rf /", "rm / -f -r"));
    // After `--` a word is an operand, whatever it looks like.
    assert!(!matches("rm -rf", "rm -- -rf"));
    assert!(matches("rm -- -rf", "rm -- -rf"));
    assert!(!matches("git push --force", "git push -- -f"));
    // A rule's `--` says only that what follows is an operand.
    assert!(matches("git checkout -- .", "git checkout ."));
}

#[test]
fn values_are_not_operands() {
    assert_eq!(rule("git -C dir push").operands(), ["push"]);
    assert_eq!(options("git -C dir push"), set(&["-C=dir"]));
    assert_eq!(rule("git -Cdir push").operands(), ["push"]);
    assert_eq!(rule("git --git-dir=x push").operands(), ["push"]);
    assert_eq!(rule("git --git-dir x push").operands(), ["push"]);
    assert_eq!(rule("git -c a=b -p push").operands(), ["push"]);
    assert_eq!(
        rule("git push --repo=x origin").operands(),
        ["push", "origin"]
    );
    assert_eq!(
        rule("git push -o val origin").operands(),
        ["push", "origin"]
    );
    assert_eq!(rule("git commit -m -x").operands(), ["commit"]);
    assert_eq!(
        rule("kubectl delete -n prod pod x").operands(),
        ["delete", "pod", "x"]
    );
    assert_eq!(rule("kubectl -nprod delete").operands(), ["delete"]);
    assert_eq!(rule("docker -H tcp://x rm").operands(), ["rm"]);
    assert_eq!(
        rule("terraform -chdir=infra destroy").operands(),
        ["destroy"]
    );
    assert_eq!(rule("npm --registry x publish").operands(), ["publish"]);
    assert_eq!(rule("find / -name x -delete").operands(), ["/"]);
    assert_eq!(rule("find . -exec rm {} ; -delete").operands(), ["."]);
    assert_eq!(rule("find . -exec rm {} + x").operands(), [".", "x"]);
    assert!(matches("git push", "git -C dir push"));
    assert!(matches("git push", "git -c alias.x=y --no-pager push"));
    assert!(matches("git push origin", "git push --repo x origin"));
    assert!(matches("git push origin", "git push -o ci.skip origin"));
    assert!(matches("git -C /repo push", "git -C/repo push"));
    assert!(!matches("git -C /repo push", "git -C /other push"));
    assert!(matches("git -C", "git -C /other push"));
}

#[test]
fn a_plus_refspec_is_a_forced_push() {
    assert_eq!(options("git push origin +main"), set(&["--force"]));
    assert_eq!(
        rule("git push origin +main").operands(),
        ["push", "origin", "main"]
    );
    assert!(matches("git push --force", "git push origin +main"));
    assert!(matches("git push --force", "git push origin +HEAD:main"));
    assert!(matches(
        "git push origin main --force",
        "git push origin +main"
    ));
    assert!(matches("git push origin +main", "git push -f origin main"));
    assert!(!matches("git push --force", "git push origin main"));
    // Only git push reads it so.
    assert!(!matches("git branch --force", "git branch +x"));
}

#[test]
fn single_dash_programs_read_whole_words() {
    assert_eq!(options("find / -delete"), set(&["-delete"]));
    assert!(matches(
        "find / -delete",
        "find / -name *.o -type f -delete"
    ));
    assert!(matches("find / -delete", "find -L / -delete"));
    assert!(matches("find -exec", "find . -exec rm {} ;"));
    assert!(matches(
        "find . -exec rm",
        "find . -type f -exec rm -f {} +"
    ));
    assert!(!matches("find . -exec rm", "find . -exec ls ;"));
    // `-delete` is one option, not six letters.
    assert!(!matches("find / -delete", "find / -d"));
    assert_eq!(
        options("terraform destroy -auto-approve"),
        set(&["-auto-approve"])
    );
    for command in [
        "terraform destroy -auto-approve",
        "terraform destroy --auto-approve",
        "terraform destroy -auto-approve=true",
        "terraform -chdir=infra destroy -var x=1 -auto-approve",
        "terraform -chdir infra destroy -target=a -auto-approve",
        "tofu destroy -auto-approve",
    ] {
        assert!(
            matches("terraform destroy -auto-approve", command),
            "{command}"
        );
    }
}

#[test]
fn dd_operands_are_options_with_values_in_any_order() {
    assert_eq!(options("dd of=/dev/sda"), set(&["--of=/dev/sda"]));
    assert!(matches(
        "dd of=/dev/sda",
        "dd if=/dev/zero bs=1M of=/dev/sda"
    ));
    assert!(matches(
        "dd if=/dev/zero of=/dev/sda",
        "dd of=/dev/sda if=/dev/zero"
    ));
    assert!(!matches("dd of=/dev/sda", "dd of=/dev/sdb"));
}

#[test]
fn an_unknown_program_is_read_with_getopt_clusters_and_no_values() {
    assert_eq!(options("tar -xzf"), set(&["-x", "-z", "-f"]));
    assert!(matches("tar -xzf", "tar -f a.tar -zx"));
    assert!(matches("foo -ab", "foo -b x -a"));
    // A word after an unknown option may be its value, or an operand.
    assert_eq!(rule("foo -x bar").operands(), ["bar"]);
    assert!(matches("foo bar", "foo -x baz bar"));
    assert!(matches("foo bar", "foo -x bar"));
    assert!(matches("foo -x bar", "foo bar -x"));
    assert!(matches("foo --opt=v", "foo --opt v"));
    // Long options as getopt_long reads them: any unique prefix.
    assert!(matches("foo --recursive", "foo --rec"));
    assert!(!matches("foo --recursive", "foo --red"));
    assert!(!matches("foo bar", "foo -x baz qux"));
    assert!(!matches("foo -x", "foo x"));
}

#[test]
fn cobra_programs_take_long_names_only_in_full() {
    assert!(matches(
        "kubectl delete --force",
        "kubectl delete pod x --force"
    ));
    assert!(!matches(
        "kubectl delete --force",
        "kubectl delete pod x --forc"
    ));
    assert!(matches(
        "kubectl delete --grace-period=0",
        "kubectl delete --grace-period 0"
    ));
}

#[test]
fn a_rule_with_an_option_value_needs_that_value() {
    assert!(matches(
        "git -c core.editor=x",
        "git -ccore.editor=x commit"
    ));
    assert!(!matches(
        "git -c core.editor=x",
        "git -c core.pager=x commit"
    ));
    assert!(matches(
        "git push -o ci.skip",
        "git push --push-option=ci.skip"
    ));
    // Without a value in the rule, any value matches.
    assert!(matches("git push -o", "git push --push-option=ci.skip"));
}

/// Every equivalence the table lists: the first spelling of each option in a rule
/// matches each other spelling in a command, and back; an option's value may be
/// attached or the next word; a rule with the option does not match the command
/// without it.
#[test]
fn every_spelling_in_the_table_is_the_same_option() {
    fn check(program: &Program, sub: Option<&str>, opt: &super::table::Opt) {
        let name = program.names[0];
        let head = match sub {
            Some(sub) => format!("{name} {sub}"),
            None => name.to_owned(),
        };
        let value = match opt.takes {
            Takes::Nothing | Takes::Optional => "",
            Takes::Value => " v",
            Takes::Two => " v w",
            Takes::Command => " v ;",
        };
        let spell = |n: &str| format!("{head} {n}{value}");
        for a in opt.names {
            for b in opt.names {
                assert!(
                    matches(&spell(a), &format!("{} tail", spell(b))),
                    "{:?} does not match {:?}",
                    spell(a),
                    spell(b)
                );
            }
            if program.style == Style::SingleDash {
                let double = format!("{head} -{a}{value}");
                assert!(matches(&spell(a), &double), "{a} as {double:?}");
            }
            if opt.takes == Takes::Value && program.names[0] != "find" {
                let attached = if a.starts_with("--") || program.style == Style::SingleDash {
                    format!("{head} {a}=v")
                } else {
                    format!("{head} {a}v")
                };
                assert!(matches(&spell(a), &attached), "{a} as {attached:?}");
            }
            let bare = format!("{head} operand");
            assert!(
                !matches(&spell(a), &bare),
                "{:?} matched {bare:?}",
                spell(a)
            );
        }
    }
    for program in PROGRAMS {
        for opt in program.options {
            check(program, None, opt);
        }
        for sub in program.subcommands {
            for opt in sub.options {
                for name in sub.names {
                    check(program, Some(name), opt);
                }
            }
        }
    }
}

/// Every long name that is not a prefix of another is matched by each shorter prefix
/// that no other name of its table shares (getopt_long's rule), for programs that
/// accept prefixes.
#[test]
fn unique_prefixes_of_long_names_are_those_options() {
    fn check(head: &str, options: &[super::table::Opt]) {
        let longs: Vec<&str> = options
            .iter()
            .flat_map(|o| o.names.iter().copied())
            .filter_map(|n| n.strip_prefix("--"))
            .collect();
        for opt in options.iter().filter(|o| o.takes == Takes::Nothing) {
            for long in opt.names.iter().filter_map(|n| n.strip_prefix("--")) {
                for end in 1..long.len() {
                    let prefix = &long[..end];
                    let unique = longs
                        .iter()
                        .filter(|l| l.starts_with(prefix))
                        .all(|l| opt.names.iter().any(|n| n.strip_prefix("--") == Some(l)));
                    if unique {
                        let rule = format!("{head} --{long}");
                        let command = format!("{head} --{prefix}");
                        assert!(matches(&rule, &command), "{rule:?} vs {command:?}");
                    }
                }
            }
        }
    }
    for program in PROGRAMS.iter().filter(|p| p.style == Style::Gnu) {
        check(program.names[0], program.options);
        // After the subcommand, a program that reads its own options there too shares
        // their prefixes with the subcommand's.
        for sub in program
            .subcommands
            .iter()
            .filter(|_| !program.options_anywhere)
        {
            check(
                &format!("{} {}", program.names[0], sub.names[0]),
                sub.options,
            );
        }
    }
}

#[test]
fn computed_words_and_globs_keep_their_meaning() {
    let computed = |text: &'static str| Arg {
        text: text.as_bytes(),
        computed: true,
        glob: None,
    };
    let glob = |text: &'static str| Arg {
        text: text.as_bytes(),
        computed: false,
        glob: Some(text),
    };
    let r = rule("rm -rf /");
    assert!(r.matched_by([computed("$X")].into_iter()));
    assert!(r.matched_by([Arg::literal(b"-r"), computed("$X")].into_iter()));
    assert!(!r.matched_by([Arg::literal(b"x"), computed("$X")].into_iter()));
    assert!(r.matched_by([glob("-*"), Arg::literal(b"/")].into_iter()));
    assert!(r.matched_by([glob("-[rR][f]"), Arg::literal(b"/")].into_iter()));
    assert!(r.matched_by([glob("--rec*"), glob("-f"), Arg::literal(b"/")].into_iter()));
    assert!(!r.matched_by([glob("*.o"), Arg::literal(b"/")].into_iter()));
    // A glob may stand for the operand.
    assert!(r.matched_by([Arg::literal(b"-rf"), glob("/*")].into_iter()));
    assert!(r.matched_by([glob("*")].into_iter()));
    // A computed value of a known option: from there on, anything.
    assert!(
        rule("git push --force")
            .matched_by([Arg::literal(b"-C"), computed("$D"), Arg::literal(b"x")].into_iter())
    );
}

/// A rule needs only what it says: extra options, operands and values never stop a
/// match, and words after `--` never make one.
#[test]
fn a_rule_matches_a_command_that_says_more() {
    assert!(matches("rm", "rm -rf /"));
    assert!(matches(
        "git push",
        "git --no-pager push -v --force origin main"
    ));
    assert!(matches("chmod -R 777", "chmod -v -R 777 / --preserve-root"));
    assert!(matches("kubectl delete", "kubectl delete -n x pod y --now"));
}

/// Options the rules name, with letters of extra options of the same program, and the
/// operands, for the generated commands below.
struct Case {
    rule: &'static str,
    head: &'static str,
    letters: &'static [&'static str],
    extra: &'static [&'static str],
    operands: &'static [&'static str],
    long: &'static [(&'static str, &'static str)],
}

const CASES: &[Case] = &[
    Case {
        rule: "rm -rf /",
        head: "rm",
        letters: &["r", "f"],
        extra: &["v", "d", "I"],
        operands: &["/", "x"],
        long: &[("r", "--recursive"), ("f", "--force"), ("v", "--verbose")],
    },
    Case {
        rule: "git clean -fdx",
        head: "git clean",
        letters: &["f", "d", "x"],
        extra: &["q"],
        operands: &["src"],
        long: &[("f", "--force"), ("q", "--quiet")],
    },
    Case {
        rule: "git push -f origin",
        head: "git push",
        letters: &["f"],
        extra: &["v", "q", "u", "n"],
        operands: &["origin", "main"],
        long: &[
            ("f", "--force"),
            ("u", "--set-upstream"),
            ("n", "--dry-run"),
        ],
    },
    Case {
        rule: "chmod -R 777",
        head: "chmod",
        letters: &["R"],
        extra: &["v", "c"],
        operands: &["777", "/"],
        long: &[("R", "--recursive"), ("c", "--changes")],
    },
    Case {
        rule: "cp -rf x",
        head: "cp",
        letters: &["r", "f"],
        extra: &["v", "i", "n", "P"],
        operands: &["x", "y"],
        long: &[
            ("r", "--recursive"),
            ("f", "--force"),
            ("P", "--no-dereference"),
        ],
    },
    Case {
        rule: "docker system prune -af",
        head: "docker system",
        letters: &["a", "f"],
        extra: &["v"],
        operands: &["prune"],
        long: &[("a", "--all"), ("f", "--force")],
    },
];

proptest::proptest! {
    /// Reordering, splitting and clustering the short options of a matching command,
    /// spelling some of them long, and moving them among the operands, still matches.
    #[test]
    fn any_order_split_or_cluster_of_the_options_still_matches(
        case in 0..CASES.len(),
        extra in proptest::collection::vec(proptest::bool::ANY, 4),
        order in proptest::collection::vec(0usize..1000, 8),
        breaks in proptest::collection::vec(proptest::bool::ANY, 8),
        longs in proptest::collection::vec(proptest::bool::ANY, 8),
        places in proptest::collection::vec(0usize..3, 8),
    ) {
        let case = &CASES[case];
        let mut letters: Vec<&str> = case.letters.to_vec();
        letters.extend(case.extra.iter().zip(&extra).filter(|(_, on)| **on).map(|(l, _)| *l));
        // A permutation from the generated keys.
        let mut keyed: Vec<(usize, &str)> = letters
            .iter()
            .enumerate()
            .map(|(i, l)| (order[i % order.len()] * 16 + i, *l))
            .collect();
        keyed.sort();
        let mut groups: Vec<String> = Vec::new();
        for (i, (_, letter)) in keyed.iter().enumerate() {
            let long = case.long.iter().find(|(l, _)| l == letter).map(|(_, n)| *n);
            match long {
                Some(long) if longs[i % longs.len()] => groups.push(long.to_owned()),
                _ if i == 0 || breaks[i % breaks.len()] || groups.last().is_some_and(|g| g.starts_with("--")) => {
                    groups.push(format!("-{letter}"))
                }
                _ => groups.last_mut().expect("a group").push_str(letter),
            }
        }
        // The operands keep their order; each group goes before one of them or last.
        let mut words: Vec<String> = case.head.split(' ').map(str::to_owned).collect();
        for (at, operand) in case.operands.iter().enumerate() {
            for (g, group) in groups.iter().enumerate() {
                if places[g % places.len()].min(case.operands.len()) == at {
                    words.push(group.clone());
                }
            }
            words.push((*operand).to_owned());
        }
        for (g, group) in groups.iter().enumerate() {
            if places[g % places.len()].min(case.operands.len()) == case.operands.len() {
                words.push(group.clone());
            }
        }
        let command = words.join(" ");
        proptest::prop_assert!(matches(case.rule, &command), "{:?} vs {:?}", case.rule, command);
    }
}
