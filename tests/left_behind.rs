//! What a command leaves behind (issue 23, item 6), black-box: at `safe`, nothing the
//! command started outlives it, however it detached, and no process of it keeps the
//! terminal once gate's caller has it back.
//!
//! Each test starts a process that is meant to outlive the command (a `setsid` daemon, a
//! double-forked one, `nohup … &`, one that ignores SIGTERM, SIGHUP and SIGINT, one that
//! keeps reading the terminal), lets the command end, and looks for it. The control is the
//! same command at `full`, where gate ends nothing: there the process is still alive
//! (and is killed by the test). Every test runs as the current user (root in CI) and as
//! uid 65534.

use crate::common;

use std::fs;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;
use std::time::{Duration, Instant};

use common::*;

/// The process meant to outlive the command: it writes its pid to the file named by
/// its second argument (atomically) and lives a minute. `ignore` makes it ignore SIGTERM,
/// SIGHUP and SIGINT; `double` makes it fork twice with a new session between, so it is
/// nobody's child but init's (or a subreaper's).
const DAEMON: &str = r#"
import os, signal, sys, time
mode, name = sys.argv[1], sys.argv[2]
if mode == "ignore":
    for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(s, signal.SIG_IGN)
if mode == "double":
    if os.fork():
        os._exit(0)
    os.setsid()
    if os.fork():
        os._exit(0)
with open(name + ".tmp", "w") as f:
    f.write("%d\n" % os.getpid())
os.rename(name + ".tmp", name)
end = time.time() + 60
if mode == "chain":
    # A new pid as fast as it can: the parent forks and exits at once, so no pid found
    # stays the daemon's for long. A byte to `beat` each time, so the test can tell
    # it lives. Stops when the file `stop` appears.
    while time.time() < end and not os.path.exists("stop"):
        if os.fork():
            os._exit(0)
        with open("beat", "a") as f:
            f.write(".")
    sys.exit(0)
while time.time() < end:
    time.sleep(0.05)
"#;

/// Wait in the command until the test has seen the daemon (the file `go`).
const WAIT_FOR_GO: &str =
    "n=0; while [ ! -e go ] && [ $n -lt 2000 ]; do sleep 0.01; n=$((n+1)); done";

fn env() -> TestEnv {
    let t = TestEnv::new_in("/var/tmp");
    let daemon = t.file("daemon.py");
    fs::write(&daemon, DAEMON).unwrap();
    fs::set_permissions(&daemon, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    t
}

fn pidfd_open(pid: i32) -> Option<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor.
    let rc = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    // SAFETY: a new descriptor nothing else owns.
    (rc >= 0).then(|| unsafe { OwnedFd::from_raw_fd(rc as i32) })
}

/// Whether the process has ended within `wait`.
fn ends_within(pidfd: &OwnedFd, wait: Duration) -> bool {
    let end = Instant::now() + wait;
    loop {
        let mut fds = [nix::poll::PollFd::new(
            pidfd.as_fd(),
            nix::poll::PollFlags::POLLIN,
        )];
        let left = end.saturating_duration_since(Instant::now());
        let ms = u16::try_from(left.as_millis()).unwrap_or(u16::MAX);
        match nix::poll::poll(&mut fds, nix::poll::PollTimeout::from(ms)) {
            Ok(n) if n > 0 => return true,
            Err(nix::errno::Errno::EINTR) => continue,
            _ if Instant::now() >= end => return false,
            _ => continue,
        }
    }
}

fn kill(pidfd: &OwnedFd) {
    // SAFETY: pidfd_send_signal with a pidfd we own and no siginfo.
    unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            libc::SIGKILL,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        );
    }
    ends_within(pidfd, DEADLINE);
}

/// The daemon named in `pid_file`, opened as a pidfd while it runs, checked to be ours.
fn daemon(pid_file: &Path) -> OwnedFd {
    let pid: i32 = wait_for(pid_file).parse().unwrap();
    let pidfd = pidfd_open(pid).unwrap_or_else(|| panic!("the daemon {pid} is gone already"));
    let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    assert!(
        String::from_utf8_lossy(&cmdline).contains("daemon.py"),
        "pid {pid} is not the daemon"
    );
    pidfd
}

/// Run `start` (which starts the daemon writing `pid`) at `level`, let the command end
/// once the test holds the daemon, and return the daemon's pidfd.
fn run(t: &TestEnv, user: User, level: &str, start: &str) -> OwnedFd {
    let _ = fs::remove_file(t.file("go"));
    let _ = fs::remove_file(t.file("pid"));
    let script = format!("{start}\n{WAIT_FOR_GO}");
    let running = t
        .gate()
        .user(user)
        .env("PY", python3())
        .args([
            "--no-config",
            "--audit-log",
            "off",
            "--level",
            level,
            "-c",
            &script,
        ])
        .spawn();
    let pidfd = daemon(&t.file("pid"));
    fs::write(t.file("go"), "").unwrap();
    let out = running.wait();
    out.assert_code(0);
    pidfd
}

/// At `safe` the daemon is gone once the command has ended; at `full` (the control) it
/// is still running.
fn ends_at_safe_only(user: User, start: &str) {
    let t = env();
    let control = run(&t, user, "full", start);
    assert!(
        !ends_within(&control, Duration::from_millis(300)),
        "CONTROL: at full the daemon did not outlive the command ({start})"
    );
    kill(&control);
    let daemon = run(&t, user, "safe", start);
    assert!(
        ends_within(&daemon, DEADLINE),
        "at safe the daemon outlived the command ({start})"
    );
}

for_each_user! {
    /// `setsid` makes a session of its own: no job control, no SIGHUP reaches it.
    fn a_setsid_daemon_is_ended(user) {
        ends_at_safe_only(user, "setsid \"$PY\" daemon.py plain pid </dev/null >/dev/null 2>&1 &");
    }

    /// Forked twice with a new session between: init's child, in no group of the
    /// command's.
    fn a_double_forked_daemon_is_ended(user) {
        ends_at_safe_only(user, "\"$PY\" daemon.py double pid </dev/null >/dev/null 2>&1");
    }

    fn a_nohup_background_process_is_ended(user) {
        ends_at_safe_only(user, "nohup \"$PY\" daemon.py plain pid >/dev/null 2>&1 &");
    }

    /// SIGTERM, SIGHUP and SIGINT ignored, in a session of its own.
    fn a_process_that_ignores_sigterm_and_sighup_is_ended(user) {
        ends_at_safe_only(user, "setsid \"$PY\" daemon.py ignore pid </dev/null >/dev/null 2>&1 &");
    }

    /// A daemon that made itself non-dumpable (so /proc/PID/ns of it needs more than
    /// the same uid) and sits in a user namespace it made beneath the command's.
    fn a_daemon_in_a_nested_user_namespace_is_ended(user) {
        ends_at_safe_only(
            user,
            "setsid unshare -U \"$PY\" -c 'import ctypes,runpy,sys; \
             ctypes.CDLL(None).prctl(4, 0, 0, 0, 0); sys.argv=[\"daemon.py\",\"plain\",\"pid\"]; \
             runpy.run_path(\"daemon.py\", run_name=\"__main__\")' </dev/null >/dev/null 2>&1 &",
        );
    }

    /// A daemon that changes its pid all the time (it forks and the parent exits, as fast
    /// as it can) is ended all the same: the supervisor reads /proc a few entries at a
    /// time, so the child turns up later in the same listing, and lists again while a
    /// listing shows signs of life (this test failed before both). Whether it lives is told by a file it grows each time.
    /// Control: at `full` the chain still runs until told to stop.
    fn a_daemon_that_keeps_changing_its_pid_is_ended(user) {
        let t = env();
        let beat = t.file("beat");
        let size = || fs::metadata(&beat).map(|m| m.len()).unwrap_or(0);
        let chain = |level: &str| {
            for name in ["stop", "go", "pid", "beat"] {
                let _ = fs::remove_file(t.file(name));
            }
            let running = t
                .gate()
                .user(user)
                .env("PY", python3())
                .args(["--no-config", "--audit-log", "off", "--level", level])
                .args([
                    "-c",
                    &format!(
                        "setsid \"$PY\" daemon.py chain pid </dev/null >/dev/null 2>&1 &\n\
                         {WAIT_FOR_GO}"
                    ),
                ])
                .spawn();
            wait_for(&t.file("pid"));
            // Let it change its pid a few times while the command runs.
            std::thread::sleep(Duration::from_millis(100));
            fs::write(t.file("go"), "").unwrap();
            running.wait().assert_code(0);
            std::thread::sleep(Duration::from_millis(300));
            let before = size();
            std::thread::sleep(Duration::from_millis(300));
            size() > before
        };
        let control = chain("full");
        fs::write(t.file("stop"), "").unwrap();
        assert!(control, "CONTROL: at full the chain did not outlive the command");
        // The control's chain sees `stop` within milliseconds.
        std::thread::sleep(Duration::from_millis(300));
        assert!(!chain("safe"), "at safe the chain outlived the command");
    }

    /// A gate at `safe` inside a command of a gate at `safe` cannot make a namespace of
    /// its own (the outer sandbox keeps /proc read-only): what its command leaves behind
    /// is the outer gate's to end, when the outer command ends. Control: the outer gate
    /// at `full`, where the inner gate makes its own namespace and ends the daemon with
    /// the inner command (it is gone before the outer command ends).
    fn a_gate_inside_leaves_the_ending_to_the_gate_outside(user) {
        let t = env();
        let gate = gate_binary_for(user);
        let inner = format!(
            "\"{}\" --no-config --audit-log off --level safe -c \
             'setsid \"$PY\" daemon.py plain pid </dev/null >/dev/null 2>&1 & \
             n=0; while [ ! -s pid ] && [ $n -lt 1000 ]; do sleep 0.01; n=$((n+1)); done'",
            gate.display()
        );
        // The inner command waits for the daemon's pid; the outer reports whether the
        // daemon still runs once the inner gate has returned (a zombie nobody reaped
        // yet has ended), then waits for `go`.
        let start = format!(
            "{inner}; while [ ! -s pid ]; do sleep 0.01; done; sleep 0.3; \
             s=$(cut -d' ' -f3 \"/proc/$(cat pid)/stat\" 2>/dev/null); \
             case \"$s\" in ''|Z|X) echo gone > inner-end;; *) echo alive > inner-end;; esac"
        );
        let daemon = run(&t, user, "safe", &start);
        assert_eq!(
            wait_for(&t.file("inner-end")),
            "alive",
            "the inner gate ended its daemon inside the outer sandbox"
        );
        assert!(
            ends_within(&daemon, DEADLINE),
            "the daemon outlived the outer command at safe"
        );
        for name in ["inner-end", "pid"] {
            let _ = fs::remove_file(t.file(name));
        }
        let control = t
            .gate()
            .user(user)
            .env("PY", python3())
            .args(["--no-config", "--audit-log", "off", "--level", "full", "-c", &start])
            .run();
        control.assert_code(0);
        assert_eq!(
            wait_for(&t.file("inner-end")),
            "gone",
            "CONTROL: the inner gate, outside any sandbox, did not end its daemon\n{}",
            control.report()
        );
    }

    /// The terminal: a `setsid` daemon keeps the terminal gate was given (its standard
    /// input) and reads what is typed once gate's caller has it back, a password for
    /// `sudo` say. Run in a pseudo-terminal (python3's `pty`), as a terminal would: a
    /// shell runs gate, then reads a line itself, typed 0.2 s after gate returned. At
    /// `safe` the line reaches the shell, never the daemon; at `full` (the control) the
    /// daemon reads it.
    fn a_daemon_does_not_keep_the_terminal(user) {
        let t = env();
        for level in ["full", "safe"] {
            let (stolen, typed) = through_a_terminal(&t, user, level);
            if level == "full" {
                assert!(
                    stolen.contains("hunter2-secret"),
                    "CONTROL: at full the daemon did not read the terminal: stolen {stolen:?}, \
                     typed {typed:?}"
                );
            } else {
                assert!(
                    !stolen.contains("hunter2-secret"),
                    "at safe a process left behind read the terminal: {stolen:?}"
                );
                assert_eq!(typed, "hunter2-secret", "the shell did not get the line");
            }
        }
    }
}

/// The terminal scenario at `level`: what the daemon read, and what the shell read.
fn through_a_terminal(t: &TestEnv, user: User, level: &str) -> (String, String) {
    for name in ["stolen", "typed", "daemon.pid", "returned"] {
        let _ = fs::remove_file(t.file(name));
    }
    // The daemon's pid goes to a file, so the control's daemon can be killed.
    let command = "setsid sh -c 'echo \\$\\$ > daemon.pid; exec cat > stolen' </dev/tty & \
                   while [ ! -s daemon.pid ]; do sleep 0.01; done; sleep 0.1";
    let shell = format!(
        "\"$GATE\" --no-config --audit-log off --level {level} -c \"{command}\"; \
         echo gate-returned; : > returned; sleep 0.5; IFS= read -r line; \
         printf '%s\\n' \"$line\" > typed"
    );
    let driver = r#"
import os, pty, select, sys, time
shell = sys.argv[1]
pid, master = pty.fork()
if pid == 0:
    os.execv("/bin/sh", ["sh", "-c", shell])
seen = b""
def pump(until, limit):
    global seen
    end = time.time() + limit
    while time.time() < end and not until():
        r, _, _ = select.select([master], [], [], 0.05)
        if r:
            try:
                data = os.read(master, 4096)
            except OSError:
                return
            if not data:
                return
            seen += data
pump(lambda: b"gate-returned" in seen, 20)
# A person types after the prompt is back, not within a fifth of a second.
time.sleep(0.2)
os.write(master, b"hunter2-secret\n")
def exited():
    return os.waitpid(pid, os.WNOHANG)[0] == pid
done = False
end = time.time() + 2
while time.time() < end:
    pump(lambda: False, 0.1)
    if exited():
        done = True
        break
if not done:
    # The control: the daemon took the line. Ended here, so the shell gets the next.
    try:
        os.kill(int(open("daemon.pid").read()), 9)
    except (OSError, ValueError):
        pass
    time.sleep(0.1)
    os.write(master, b"released\n")
    pump(lambda: False, 1)
    os.waitpid(pid, 0)
sys.stdout.write(seen.decode(errors="replace"))
"#;
    let mut command = command_as(user, python3());
    command
        .args(["-c", driver, &shell])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &t.home)
        .env("XDG_STATE_HOME", &t.state)
        .env("XDG_CONFIG_HOME", &t.config)
        .env("XDG_RUNTIME_DIR", &t.runtime)
        .env("GATE", gate_binary_for(user))
        .current_dir(&t.work);
    let out = command.output().expect("cannot run python3");
    let screen = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        t.file("returned").exists(),
        "gate never returned at {level}:\n{screen}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stolen = fs::read_to_string(t.file("stolen")).unwrap_or_default();
    let typed = fs::read_to_string(t.file("typed"))
        .unwrap_or_default()
        .trim()
        .to_owned();
    if let Ok(pid) = fs::read_to_string(t.file("daemon.pid")) {
        if let Some(fd) = pid.trim().parse().ok().and_then(pidfd_open) {
            kill(&fd);
        }
    }
    (stolen, typed)
}

/// Loads a seccomp filter that fails `unshare` (x86_64: 272) with exactly the flags
/// given (`CLONE_NEWUSER`, `CLONE_NEWNS`) with the errno given (0: "success" without
/// doing anything, as a broken layer could), then execs the rest. Other `unshare` calls
/// are left alone.
const UNSHARE_ANSWERS: &str = r#"
import ctypes, os, struct, sys
def op(code, jt, jf, k): return struct.pack("HBBI", code, jt, jf, k)
flags, errno = int(sys.argv[1]), int(sys.argv[2])
prog = [op(0x20, 0, 0, 0), op(0x15, 0, 3, 272), op(0x20, 0, 0, 16),
        op(0x15, 0, 1, flags), op(0x06, 0, 0, 0x00050000 | errno),
        op(0x06, 0, 0, 0x7fff0000)]
code = ctypes.create_string_buffer(b"".join(prog))
fprog = ctypes.create_string_buffer(struct.pack("HxxxxxxQ", len(prog), ctypes.addressof(code)))
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl.argtypes = [ctypes.c_int] + [ctypes.c_ulong] * 4
for args in [(38, 1, 0, 0, 0), (22, 2, ctypes.addressof(fprog), 0, 0)]:
    if libc.prctl(*args) != 0:
        sys.exit("unshare-answers: prctl: " + os.strerror(ctypes.get_errno()))
os.execv(sys.argv[3], sys.argv[3:])
"#;

/// gate under a parent filter that answers `unshare(CLONE_NEWUSER)` with `errno`.
fn unshare_answering(t: &TestEnv, user: User, errno: i32) -> Gate {
    t.gate()
        .user(user)
        .program(python3())
        .args([
            "-c",
            UNSHARE_ANSWERS,
            &libc::CLONE_NEWUSER.to_string(),
            &errno.to_string(),
        ])
        .arg(gate_binary_for(user))
}

/// Root: a layer that answers `unshare(CLONE_NEWNS)` with success without making the
/// mount namespace must not have the covers of the hidden paths made in the host's
/// namespace (found while writing these tests: /etc/shadow was covered for the whole
/// machine). gate sees that no namespace was made and walks around the hidden paths
/// instead; the host's mounts are unchanged. Control: without the filter, gate covers
/// them (in a namespace of its own).
#[test]
#[ignore = "root tier: cargo test --lib --test all -- --ignored, as root"]
fn a_mount_namespace_that_was_not_made_covers_nothing_on_the_host() {
    // Only root covers hidden paths with mounts; as another user nothing is mounted.
    needs_root("this test checks the mounts that cover hidden paths, which only root makes");
    let t = env();
    let mounts = || {
        fs::read_to_string("/proc/1/mountinfo")
            .unwrap()
            .lines()
            .count()
    };
    let before = mounts();
    let out = t
        .gate()
        .program(python3())
        .args(["-c", UNSHARE_ANSWERS, &libc::CLONE_NEWNS.to_string(), "0"])
        .arg(gate_binary_for(User::Current))
        .args(["--no-config", "--level", "safe", "-c", "true"])
        .run();
    let after = mounts();
    out.assert_code(0);
    assert_eq!(
        before,
        after,
        "covers were mounted on the host\n{}",
        out.report()
    );
    let records = audit_records(&t.default_audit_log());
    let sandbox = &records.last().unwrap()["sandbox"];
    assert_eq!(sandbox["hidden_by"], "landlock", "{sandbox}");
    assert!(
        sandbox["mounts_not_used"]
            .as_str()
            .unwrap_or("")
            .contains("made no mount namespace"),
        "{sandbox}"
    );
    let control = t
        .gate()
        .args(["--no-config", "--level", "safe", "-c", "true"])
        .run();
    control.assert_code(0);
    let records = audit_records(&t.default_audit_log());
    assert_eq!(
        records.last().unwrap()["sandbox"]["hidden_by"],
        "mounts",
        "CONTROL"
    );
}

for_each_user! {
    /// The record says what happens to what the command leaves behind: ended, by a user
    /// namespace of the command's own.
    fn the_record_says_what_is_left_behind_is_ended(user) {
        let t = env();
        let out = t
            .gate()
            .user(user)
            .args(["--no-config", "--level", "safe", "-c", "true"])
            .run();
        out.assert_code(0);
        let records = audit_records(&t.default_audit_log());
        let allow = records
            .iter()
            .find(|r| r["decision"] == "allow")
            .unwrap_or_else(|| panic!("no allow record: {records:?}"));
        assert_eq!(
            allow["sandbox"]["left_behind"],
            serde_json::json!({"ended": true, "by": "user_namespace"}),
            "{allow}"
        );
    }

    /// Where no user namespace can be made (here a parent filter fails
    /// `unshare(CLONE_NEWUSER)` with EPERM, as a container's profile may), the command runs and what it leaves behind
    /// is not ended: the residual, named in the record and by `gate doctor`, never
    /// silent. The daemon outlives the command there, which also shows that the
    /// namespace is what ends it.
    fn without_user_namespaces_the_residual_is_named(user) {
        let t = env();
        let _ = fs::remove_file(t.file("pid"));
        let script = format!(
            "setsid \"$PY\" daemon.py plain pid </dev/null >/dev/null 2>&1 &\n{WAIT_FOR_GO}"
        );
        let running = unshare_answering(&t, user, libc::EPERM)
            .env("PY", python3())
            .args(["--no-config", "--level", "safe", "-c", &script])
            .spawn();
        let daemon = daemon(&t.file("pid"));
        fs::write(t.file("go"), "").unwrap();
        running.wait().assert_code(0);
        let survived = !ends_within(&daemon, Duration::from_millis(300));
        kill(&daemon);
        assert!(survived, "the daemon was ended without a user namespace");
        let records = audit_records(&t.default_audit_log());
        let allow = records
            .iter()
            .find(|r| r["decision"] == "allow")
            .unwrap_or_else(|| panic!("no allow record: {records:?}"));
        let left = &allow["sandbox"]["left_behind"];
        assert_eq!(left["ended"], false, "{allow}");
        assert!(
            left["why"].as_str().unwrap_or("").contains("refuses a new user namespace"),
            "{allow}"
        );
        let doctor = unshare_answering(&t, user, libc::EPERM)
            .args(["doctor", "--json"])
            .run();
        let report: serde_json::Value = serde_json::from_str(&doctor.stdout()).unwrap();
        assert_eq!(report["left_behind"]["ended"], false, "{}", doctor.report());
        assert!(
            report["left_behind"]["text"]
                .as_str()
                .unwrap_or("")
                .starts_with("NOT ended"),
            "{}",
            doctor.report()
        );
    }

    /// A layer that answers `unshare` with success without making the namespace: the map
    /// cannot be written, and gate runs nothing (125, one `gate: ` line). Control: the
    /// same command at `full`, which makes no namespace, runs.
    fn a_namespace_that_cannot_be_mapped_runs_nothing(user) {
        let t = env();
        let out = unshare_answering(&t, user, 0)
            .args(["--no-config", "--audit-log", "off", "--level", "safe", "-c", "echo ran > ran"])
            .run();
        out.assert_gate_error();
        assert!(
            out.stderr().starts_with("gate: cannot set up the user namespace that ends what the \
                                      command leaves behind")
                && out.stderr().trim_end().lines().count() == 1,
            "{}",
            out.report()
        );
        assert_absent(&t.file("ran"), &out);
        let control = unshare_answering(&t, user, 0)
            .args(["--no-config", "--audit-log", "off", "--level", "full", "-c", "echo ran > ran"])
            .run();
        control.assert_code(0);
        assert!(t.file("ran").exists(), "CONTROL: {}", control.report());
    }
}
