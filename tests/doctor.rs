//! `gate doctor`: a report of what this machine can enforce, exit 0 when the safe level
//! can be fully enforced.

use crate::common;

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

/// The text line for `topic`, without the topic.
fn topic_line<'a>(report: &'a str, topic: &str) -> &'a str {
    report
        .lines()
        .find(|l| l.starts_with(&format!("{topic:<12}")))
        .unwrap_or_else(|| panic!("no `{topic}` line in:\n{report}"))[12..]
        .trim_end()
}

fn doctor_json(env: &TestEnv, args: &[&str]) -> (serde_json::Value, common::Outcome) {
    let out = env.gate().args(args).args(["doctor", "--json"]).run();
    let stdout = out.stdout();
    assert_eq!(
        stdout.lines().count(),
        1,
        "one JSON object, one line\n{stdout}"
    );
    let value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("gate doctor --json is not JSON ({e})\n{}", out.report()));
    (value, out)
}

/// `--json` is the same report as the text, in fields, with the same exit status.
#[test]
fn doctor_json_is_the_text_report_in_fields() {
    let env = TestEnv::new();
    let config = env.write(
        "gate.toml",
        "allow = [\"ls\", \"cat\"]\ndeny = [\"rm\"]\nask = [\"git push\"]\n",
    );
    let args = ["--config", config.to_str().unwrap()];
    let text = env.gate().args(args).arg("doctor").run();
    text.assert_code(0);
    let report = text.stdout();
    let (v, out) = doctor_json(&env, &args);
    out.assert_code(0).assert_stderr_empty();

    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(topic_line(&report, "gate"), v["version"].as_str().unwrap());
    assert_eq!(
        topic_line(&report, "kernel"),
        format!(
            "Linux {} ({})",
            v["kernel"]["release"].as_str().unwrap(),
            v["kernel"]["arch"].as_str().unwrap()
        )
    );
    let abi = v["landlock"]["abi"].as_u64().unwrap();
    let features: Vec<&str> = v["landlock"]["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert_eq!(
        topic_line(&report, "landlock"),
        format!("ABI {abi}: {}", features.join(", "))
    );
    assert_eq!(
        topic_line(&report, "seccomp") == "available",
        v["seccomp"] == true,
        "{v}"
    );
    assert_eq!(v["uid"], common::effective_uid(), "{v}");
    assert_eq!(v["root"], common::running_as_root(), "{v}");
    assert_eq!(v["config"]["error"], serde_json::Value::Null, "{v}");
    assert_eq!(
        v["config"]["files"],
        serde_json::json!([config.to_str().unwrap()])
    );
    assert_eq!(topic_line(&report, "config"), config.to_str().unwrap());
    assert!(
        topic_line(&report, "system").starts_with(v["config"]["system"]["path"].as_str().unwrap()),
        "{v}"
    );
    assert_eq!(
        topic_line(&report, "level"),
        format!(
            "{} (from {})",
            v["level"].as_str().unwrap(),
            v["level_origin"].as_str().unwrap()
        )
    );
    assert_eq!(
        v["rules"],
        serde_json::json!({"allow": 2, "deny": 1, "ask": 1}),
        "{v}"
    );
    assert_eq!(topic_line(&report, "rules"), "2 allow, 1 deny, 1 ask");
    assert_eq!(
        topic_line(&report, "approver"),
        v["approver"]["text"].as_str().unwrap()
    );
    let socket = env.runtime.join("gate/broker.sock");
    assert_eq!(v["approver"]["socket"], socket.to_str().unwrap(), "{v}");
    assert_eq!(v["approver"]["socket_state"], "absent", "{v}");
    let shims = v["shims"].as_object().unwrap();
    for (name, real) in shims {
        let shown = real.as_str().unwrap_or("(none)");
        assert!(
            topic_line(&report, "shims").contains(&format!("{name} -> {shown}")),
            "{name}: {v}\n{report}"
        );
    }
    assert!(shims["sh"].is_string(), "{v}");
    assert_eq!(v["safe_level"]["enforceable"], true, "{v}");
    assert_eq!(
        topic_line(&report, "safe level"),
        v["safe_level"]["text"].as_str().unwrap()
    );
    assert_eq!(v["git_workspace"], false, "{v}");
}

#[test]
fn doctor_json_reports_a_configuration_error_and_exits_1() {
    let env = TestEnv::new();
    let config = env.write("gate.toml", "levle = \"deny\"\n");
    let (v, out) = doctor_json(&env, &["--config", config.to_str().unwrap()]);
    out.assert_code(1);
    assert_eq!(v["ok"], false, "{v}");
    assert!(
        v["config"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("levle")),
        "{v}"
    );
    assert_eq!(v["level"], serde_json::Value::Null, "{v}");
    assert_eq!(v["safe_level"], serde_json::Value::Null, "{v}");
    // And a safe level that cannot run here is not ok either.
    let out = env
        .gate()
        .env_remove("HOME")
        .args(["--no-config", "doctor", "--json"])
        .run();
    out.assert_code(1);
    let v: serde_json::Value = serde_json::from_str(&out.stdout()).unwrap();
    assert_eq!(v["safe_level"]["enforceable"], false, "{v}");
    assert!(
        v["safe_level"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("HOME is not set")),
        "{v}"
    );
}

/// The approver line uses the requester's trust checks: a socket open to other users
/// is not "listening and asked first", because a run would refuse rather than ask it.
#[test]
fn doctor_says_a_socket_that_cannot_be_trusted_is_not_asked() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    let dir = env.root.join("approver");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let path = dir.join("approver.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let socket = path.to_str().unwrap();
    let args = ["--no-config", "--socket", socket];
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
    let out = env.gate().args(args).arg("doctor").run();
    assert!(
        topic_line(&out.stdout(), "approver").starts_with(&format!(
            "{socket} cannot be trusted (the socket {socket} is open to other users (mode 0666))"
        )),
        "{}",
        out.stdout()
    );
    let (v, _) = doctor_json(&env, &args);
    assert_eq!(v["approver"]["socket_state"], "untrusted", "{v}");
    assert_eq!(v["approver"]["asks"], serde_json::Value::Null, "{v}");
    // Control: made private, it is asked first.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = env.gate().args(args).arg("doctor").run();
    assert!(
        topic_line(&out.stdout(), "approver")
            .starts_with(&format!("{socket} is listening and is asked first")),
        "{}",
        out.stdout()
    );
    let (v, _) = doctor_json(&env, &args);
    assert_eq!(v["approver"]["asks"], "socket", "{v}");
}

/// The doctor says how the commands gate runs are marked on this kernel (Landlock ABI 7
/// here: no_new_privs and a domain), and whether the process it runs in is marked: run
/// by gate at level full it is, and says the approver tools will not work there; run by
/// the test it is not (the control).
#[test]
fn doctor_reports_how_commands_are_marked_and_whether_this_process_is() {
    let env = TestEnv::new();
    let out = env.gate().args(["--no-config", "doctor"]).run();
    out.assert_code(0);
    let report = out.stdout();
    assert!(
        topic_line(&report, "commands").contains("no_new_privs and a Landlock domain"),
        "{report}"
    );
    assert_eq!(
        topic_line(&report, "process"),
        "runs without no_new_privs: approver tools work here"
    );
    let (v, _) = doctor_json(&env, &["--no-config"]);
    // This machine has Landlock ABI 6 or later: the domain is made of the abstract
    // socket scope alone.
    assert_eq!(
        v["marking"]["commands"], "no_new_privs+landlock-scope",
        "{v}"
    );
    assert_eq!(v["marking"]["ptrace_stopped"], true, "{v}");
    assert_eq!(v["marking"]["this_process_marked"], false, "{v}");
    assert_eq!(
        topic_line(&report, "commands"),
        v["marking"]["text"].as_str().unwrap()
    );

    let inside = env
        .gate()
        .args(["--no-config", "--level", "full", "--audit-log", "off", "--"])
        .arg(common::GATE)
        .args(["--no-config", "doctor"])
        .run();
    inside.assert_code(0);
    assert!(
        topic_line(&inside.stdout(), "process").starts_with("runs with no_new_privs"),
        "{}",
        inside.stdout()
    );
    let inside = env
        .gate()
        .args(["--no-config", "--level", "full", "--audit-log", "off", "--"])
        .arg(common::GATE)
        .args(["--no-config", "doctor", "--json"])
        .run();
    let v: serde_json::Value = serde_json::from_str(&inside.stdout()).unwrap();
    assert_eq!(v["marking"]["this_process_marked"], true, "{v}");
}

/// Runs argv[3:] under a seccomp filter that answers the system call number argv[1]
/// with the errno argv[2] (after no_new_privs, as a container runtime's profile would).
const REFUSING: &str = r#"
import ctypes, os, struct, sys
def op(code, jt, jf, k): return struct.pack("HBBI", code, jt, jf, k)
LD, JEQ, RET, ERRNO, ALLOW = 0x20, 0x15, 0x06, 0x00050000, 0x7fff0000
prog = [op(LD, 0, 0, 0), op(JEQ, 0, 1, int(sys.argv[1])), op(RET, 0, 0, ERRNO | int(sys.argv[2])),
        op(RET, 0, 0, ALLOW)]
code = ctypes.create_string_buffer(b"".join(prog))
fprog = ctypes.create_string_buffer(struct.pack("HxxxxxxQ", len(prog), ctypes.addressof(code)))
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl.argtypes = [ctypes.c_int] + [ctypes.c_ulong] * 4
for args in [(38, 1, 0, 0, 0), (22, 2, ctypes.addressof(fprog), 0, 0)]:
    if libc.prctl(*args) != 0:
        sys.exit("refusing: prctl: " + os.strerror(ctypes.get_errno()))
os.execv(sys.argv[3], sys.argv[3:])
"#;

/// `gate doctor` under a filter that answers `call` with `errno`.
fn doctor_refused(env: &TestEnv, call: libc::c_long, errno: i32) -> common::Outcome {
    env.gate()
        .program(common::python3())
        .args(["-c", REFUSING, &call.to_string(), &errno.to_string()])
        .arg(common::gate_binary_for(common::User::Current))
        .args(["--no-config", "doctor"])
        .run()
}

/// Issue 24: a container's seccomp profile that refuses Landlock is not a kernel
/// without it. Under a filter that answers `landlock_create_ruleset` with EPERM, or with
/// ENOSYS (as Docker's profile does for calls newer than itself), the doctor says the
/// filter refused it and names the calls the profile must allow; under one that refuses
/// `seccomp()`, it says the same of seccomp. Each exits 1 (safe cannot run). The control:
/// without the filter, the same doctor finds Landlock and seccomp.
#[test]
fn doctor_tells_a_containers_seccomp_profile_from_a_kernel_without_landlock() {
    let env = TestEnv::new();
    let control = env.gate().args(["--no-config", "doctor"]).run();
    control.assert_code(0);
    assert!(topic_line(&control.stdout(), "landlock").starts_with("ABI "));
    assert_eq!(topic_line(&control.stdout(), "seccomp"), "available");

    let out = doctor_refused(&env, libc::SYS_landlock_create_ruleset, libc::EPERM);
    out.assert_code(1);
    let landlock = topic_line(&out.stdout(), "landlock").to_owned();
    assert!(
        landlock.starts_with(
            "not available: refused (EPERM) by the seccomp filter this process runs under, as a \
             container's seccomp profile refuses it, not missing from the kernel; allow \
             landlock_create_ruleset, landlock_add_rule and landlock_restrict_self in it \
             (Docker and Podman: --security-opt seccomp=PROFILE.json"
        ),
        "{}",
        out.report()
    );
    assert!(
        topic_line(&out.stdout(), "safe level").contains("Landlock filesystem rules (ABI 1)"),
        "{}",
        out.report()
    );

    let out = doctor_refused(&env, libc::SYS_landlock_create_ruleset, libc::ENOSYS);
    out.assert_code(1);
    let landlock = topic_line(&out.stdout(), "landlock").to_owned();
    assert!(
        landlock.contains("(ENOSYS)")
            && landlock.contains("the seccomp filter this process runs under"),
        "{}",
        out.report()
    );

    let out = doctor_refused(&env, libc::SYS_seccomp, libc::EPERM);
    out.assert_code(1);
    assert!(
        topic_line(&out.stdout(), "seccomp").starts_with(
            "not available: the seccomp() call is refused (EPERM) by the \
             seccomp filter this process runs under"
        ),
        "{}",
        out.report()
    );
    assert!(topic_line(&out.stdout(), "landlock").starts_with("ABI "));
}
