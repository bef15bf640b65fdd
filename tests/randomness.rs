//! Where gate's secrets come from: the broker's token and every call id are read from
//! getrandom(2), seen with strace on the real binary, and no /dev/urandom is opened.

use crate::common;

use std::fs;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{TestEnv, require_program};

const GATE: &str = env!("CARGO_BIN_EXE_gate");

/// Run gate under `strace -f -e trace=openat,open,getrandom` and return the trace.
fn traced(env: &TestEnv, args: &[&str], run_for: Option<Duration>) -> String {
    let log = env.root.join("strace.log");
    let child = Command::new(require_program("strace"))
        .args(["-f", "-qq", "-e", "trace=openat,open,getrandom", "-o"])
        .arg(&log)
        .arg(GATE)
        .args(args)
        .current_dir(&env.work)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", &env.home)
        .env("XDG_STATE_HOME", &env.state)
        .env("XDG_CONFIG_HOME", &env.config)
        .env("XDG_RUNTIME_DIR", &env.runtime)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("strace starts");
    if let Some(wait) = run_for {
        // A server: let it start (its socket appears), then stop it.
        let socket = env.runtime.join("gate/broker.sock");
        let deadline = Instant::now() + wait;
        while !socket.exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(socket.exists(), "the broker made no socket in {wait:?}");
        // Stop the broker itself (strace's only child): it removes its socket and
        // exits, and strace with it.
        let _ = Command::new(require_program("pkill"))
            .args(["-TERM", "-P", &child.id().to_string()])
            .status();
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.code().is_some(), "{out:?}");
    fs::read_to_string(&log).unwrap()
}

/// The sizes gate asked of getrandom in a trace, with no flags (blocking until the pool
/// is ready). The C library and Rust's std make calls of their own, always with flags
/// (GRND_NONBLOCK, GRND_INSECURE: their hash keys), so those do not count.
fn getrandom_sizes(trace: &str) -> Vec<usize> {
    // `PID getrandom("…", SIZE, FLAGS) = N`; the bytes shown may hold anything, so the
    // fields are taken from the right.
    trace
        .lines()
        .filter_map(|l| {
            let call = l.split_once("getrandom(")?.1.rsplit_once(") = ")?.0;
            let mut fields = call.rsplitn(3, ", ");
            let flags = fields.next()?;
            let size = fields.next()?;
            (flags == "0").then(|| size.parse().ok())?
        })
        .collect()
}

#[test]
fn the_broker_token_is_32_bytes_from_getrandom_and_no_urandom_is_opened() {
    let env = TestEnv::new();
    let trace = traced(&env, &["serve"], Some(Duration::from_secs(20)));
    assert!(
        getrandom_sizes(&trace).contains(&32),
        "no getrandom of 32 bytes for the token:\n{trace}"
    );
    assert!(!trace.contains("/dev/urandom"), "{trace}");
    assert!(!trace.contains("/dev/random"), "{trace}");
}

#[test]
fn a_call_id_is_8_bytes_from_getrandom() {
    let env = TestEnv::new();
    // Level deny writes an audit record, which carries a call id.
    let trace = traced(&env, &["--level", "deny", "-c", "true"], None);
    assert!(
        getrandom_sizes(&trace).contains(&8),
        "no getrandom of 8 bytes for the call id:\n{trace}"
    );
    assert!(!trace.contains("/dev/urandom"), "{trace}");
    let log = fs::read_to_string(env.default_audit_log()).unwrap();
    assert!(log.contains("\"call_id\":\""), "{log}");
}
