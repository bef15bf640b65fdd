//! Rule self-tests end to end: a rule's `match` and `not_match` examples are checked when
//! the configuration loads; one the rule gets wrong stops every command (125) with one
//! line naming the example's line, the rule and the example.

use crate::common;

use common::*;

const RULES: &str = "level = \"full\"\ndeny = [\n  { rule = \"git push --force\",\n    match = [\"git push -f origin\", \"sh -c 'git push --force'\"],\n    not_match = [\"git push origin\"] },\n]\nask = [{ rule = \"npm publish\", match = [\"cd pkg && npm publish\"] }]\nallow = [{ rule = \"git status\", not_match = [\"git status; rm -rf ~\"] }]\n";

#[test]
fn examples_the_rules_get_right_let_commands_run() {
    let env = TestEnv::new();
    env.write_user_config(RULES);
    let out = env
        .gate()
        .args(["--audit-log", "off", "-c", "echo ran > F"])
        .run();
    out.assert_code(0);
    assert!(env.file("F").exists(), "{}", out.report());
}

#[test]
fn an_example_a_rule_gets_wrong_stops_every_command_naming_the_rule_and_the_example() {
    let env = TestEnv::new();
    // The author wrote `git push -f` as a command the rule must let by, forgetting that
    // `-f` is how `--force` is spelled short.
    let config = env.write_user_config(&RULES.replace(
        "not_match = [\"git push origin\"]",
        "not_match = [\"git push -f\"]",
    ));
    let f = env.file("F");
    let out = env
        .gate()
        .args(["--audit-log", "off", "-c", "echo ran > F"])
        .run();
    assert_absent(&f, &out);
    out.assert_gate_error();
    assert_eq!(
        out.stderr(),
        format!(
            "gate: {}:5: key `deny.not_match`: the rule `git push --force` matches its \
             example `git push -f`, which `not_match` says it must not; nothing was run\n",
            config.display()
        )
    );
    // `gate rules` and `gate check` load the same configuration and stop the same way.
    for args in [&["rules"][..], &["check", "-c", "ls"]] {
        let out = env.gate().args(args).run();
        out.assert_gate_error()
            .assert_stderr_contains("key `deny.not_match`: the rule `git push --force`");
    }
}
