//! `gate doctor`: a report of what this machine can enforce, exit 0 when the safe level
//! can be fully enforced.

mod common;

use common::TestEnv;

#[test]
fn doctor_reports_every_topic_and_says_safe_can_be_enforced_here() {
    let env = TestEnv::new();
    let out = env.gate().args(["--no-config", "doctor"]).run();
    // This machine (and CI) has Landlock ABI >= 6 and seccomp: a doctor that says
    // otherwise here is wrong, or the machine cannot run the safe level's tests.
    out.assert_code(0);
    let report = out.stdout();
    for topic in [
        "kernel",
        "landlock",
        "seccomp",
        "user",
        "system",
        "config",
        "level",
        "rules",
        "approver",
        "shims",
        "safe level",
    ] {
        assert!(
            report.lines().any(|l| l.starts_with(topic)),
            "no `{topic}` line in:\n{report}"
        );
    }
    assert!(report.contains("ABI "), "{report}");
    assert!(report.contains("can be fully enforced"), "{report}");
    assert!(report.contains("sh -> /"), "{report}");
}

#[test]
fn doctor_shows_the_configuration_it_would_use() {
    let env = TestEnv::new();
    let config = env.write(
        "gate.toml",
        "level = \"deny\"\nallow = [\"ls\"]\ndeny = [\"rm\", \"dd\"]\n",
    );
    let out = env.gate().arg("--config").arg(&config).arg("doctor").run();
    out.assert_code(0);
    let report = out.stdout();
    assert!(report.contains(&config.display().to_string()), "{report}");
    assert!(report.contains("deny (from "), "{report}");
    assert!(report.contains("1 allow, 2 deny"), "{report}");
}

#[test]
fn doctor_fails_when_the_configuration_does_not_load() {
    let env = TestEnv::new();
    let config = env.write("gate.toml", "levle = \"deny\"\n");
    let out = env.gate().arg("--config").arg(&config).arg("doctor").run();
    out.assert_code(1);
    assert!(out.stdout().contains("ERROR:"), "{}", out.stdout());
    assert!(out.stdout().contains("levle"), "{}", out.stdout());
}

#[test]
fn doctor_fails_when_safe_cannot_run_here() {
    // Without HOME the safe level cannot find the secrets it hides, so it would refuse
    // every command: the doctor must say so and exit 1.
    let env = TestEnv::new();
    let out = env
        .gate()
        .env_remove("HOME")
        .args(["--no-config", "doctor"])
        .run();
    out.assert_code(1);
    assert!(out.stdout().contains("HOME is not set"), "{}", out.stdout());
}

#[test]
fn doctor_warns_about_git_hooks_in_the_workspace() {
    let env = TestEnv::new();
    std::fs::create_dir(env.work.join(".git")).unwrap();
    let out = env.gate().args(["--no-config", "doctor"]).run();
    assert!(out.stdout().contains(".git/hooks"), "{}", out.stdout());
}

#[test]
fn doctor_takes_no_command() {
    let env = TestEnv::new();
    let out = env.gate().args(["doctor", "-c", "ls"]).run();
    out.assert_code(125);
}
