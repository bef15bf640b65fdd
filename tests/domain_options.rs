//! The options and keys of network by domain (issue 16), black-box: a pattern gate
//! cannot read stops the run with one `gate: …` line naming the option or the file and
//! key, status 125, and nothing runs; patterns it can read are accepted at every level.

use crate::common;

use common::*;

/// `touch F` at level full with `args`: refused at once with exactly `line`.
#[track_caller]
fn refused(env: &TestEnv, args: &[&str], line: &str) {
    let out = env
        .gate()
        .args(["--no-config", "--audit-log", "off", "--level", "full"])
        .args(args)
        .args(["-c", "touch F"])
        .run();
    assert_absent(&env.file("F"), &out);
    out.assert_gate_error();
    assert_eq!(out.stderr(), format!("{line}\n"), "{}", out.report());
}

#[test]
fn a_bad_domain_option_is_one_line_naming_it() {
    let env = TestEnv::new();
    refused(
        &env,
        &["--allow-domain", "*"],
        "gate: --allow-domain: `*` would allow every domain; allow the whole network with --net / sandbox.network instead; nothing was run",
    );
    refused(
        &env,
        &["--allow-domain", "@nope"],
        "gate: --allow-domain: `@nope` is not a preset (the presets are @npm, @pypi, @crates, @go, @github); nothing was run",
    );
    refused(
        &env,
        &["--deny-domain", "bücher.example"],
        "gate: --deny-domain: `bücher.example` is not ASCII; write an internationalised name in its punycode form (xn--…); nothing was run",
    );
    refused(
        &env,
        &["--allow-domain", "127.0.0.1:8080"],
        "gate: --allow-domain: `127.0.0.1:8080` is a loopback address, which the proxy never connects to by address; map a name to it with sandbox.resolve = [\"NAME=127.0.0.1\"] (or --resolve NAME=127.0.0.1) and allow NAME; nothing was run",
    );
    refused(
        &env,
        &["--resolve", "registry.test"],
        "gate: --resolve: `registry.test` is not NAME=ADDRESS (e.g. registry.test=127.0.0.1); nothing was run",
    );
}

#[test]
fn a_bad_domain_key_names_the_file_line_and_key() {
    let env = TestEnv::new();
    let file =
        env.write_user_config("[sandbox]\nallow_domains = [\"@npm\",\n  \"exa mple.org\"]\n");
    let out = env
        .gate()
        .args(["--audit-log", "off", "--level", "full", "-c", "touch F"])
        .run();
    assert_absent(&env.file("F"), &out);
    out.assert_gate_error();
    out.assert_stderr_contains(&format!(
        "{}:3: key `sandbox.allow_domains`: `exa mple.org` is not a domain pattern (it contains ` `)",
        file.display()
    ));
    let file = env.write_user_config("[sandbox]\nresolve = [\"a.test=nowhere\"]\n");
    let out = env
        .gate()
        .args(["--audit-log", "off", "--level", "full", "-c", "touch F"])
        .run();
    out.assert_gate_error();
    out.assert_stderr_contains(&format!(
        "{}:2: key `sandbox.resolve`: `a.test=nowhere`: `nowhere` is not an IP address",
        file.display()
    ));
}

#[test]
fn good_domain_settings_are_accepted_at_every_level_that_runs() {
    let env = TestEnv::new();
    env.write_user_config(
        "[sandbox]\nallow_domains = [\"@pypi\", \"*.Example.net:*\"]\ndeny_domains = [\"x.example.net\"]\nresolve = [\"registry.test=127.0.0.1\"]\n",
    );
    let out = env
        .gate()
        .args(["--audit-log", "off", "--level", "full"])
        .args([
            "--allow-domain",
            "registry.test:8080",
            "--resolve",
            "other.test=::1",
        ])
        .args(["-c", "touch F"])
        .run();
    out.assert_code(0);
    assert!(env.file("F").exists(), "{}", out.report());
}
