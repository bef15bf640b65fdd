//! The system configuration file, `/etc/gate/config.toml`, read from its real path.
//!
//! Each test runs gate in a private mount namespace where a scratch directory is
//! bind-mounted over `/etc`, so the real system is never touched. As root that needs
//! `unshare --mount`; as another user, `unshare --map-root-user --mount` (a user
//! namespace). Where neither works the tests fail and say so: a lock that is not tested
//! is not known to hold.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const GATE: &str = env!("CARGO_BIN_EXE_gate");

fn is_root() -> bool {
    let status = fs::read_to_string("/proc/self/status").expect("read /proc/self/status");
    let uid_line = status
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .expect("a Uid line");
    uid_line.split_whitespace().nth(2) == Some("0")
}

/// A scratch `/etc` holding a system configuration, and a scratch home.
struct System {
    root: tempfile::TempDir,
}

impl System {
    fn new(config: Option<&str>) -> System {
        let root = tempfile::tempdir().expect("tempdir");
        let etc = root.path().join("etc");
        fs::create_dir_all(etc.join("gate")).unwrap();
        // What the dynamic loader and the shells may read from /etc.
        for file in ["ld.so.cache", "passwd", "group", "nsswitch.conf"] {
            let from = Path::new("/etc").join(file);
            if from.exists() {
                fs::copy(&from, etc.join(file)).unwrap();
            }
        }
        if let Some(text) = config {
            fs::write(etc.join("gate/config.toml"), text).unwrap();
        }
        fs::create_dir_all(root.path().join("home/.config/gate")).unwrap();
        System { root }
    }

    fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }

    fn user_config(&self, text: &str) {
        fs::write(self.home().join(".config/gate/config.toml"), text).unwrap();
    }

    fn file(&self, name: &str) -> PathBuf {
        self.root.path().join(name)
    }

    /// Run gate with `args` (and `env`) under the scratch `/etc`.
    fn gate(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        self.gate_after(&[], args, env)
    }

    /// As [`System::gate`], with gate run by `prefix` (`timeout …`).
    fn gate_after(&self, prefix: &[&str], args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut unshare = Command::new("unshare");
        if !is_root() {
            unshare.arg("--map-root-user");
        }
        unshare
            .args([
                "--mount",
                "--",
                "sh",
                "-c",
                "mount --bind \"$1\" /etc && shift && exec \"$@\"",
                "sh",
            ])
            .arg(self.root.path().join("etc"))
            .args(prefix)
            .arg(GATE)
            .args(args)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", self.home())
            .env("XDG_STATE_HOME", self.root.path().join("state"))
            .current_dir(self.root.path())
            .stdin(Stdio::null());
        for (k, v) in env {
            unshare.env(k, v);
        }
        let out = unshare
            .output()
            .expect("unshare (util-linux) must be installed to test the system configuration");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains("unshare:") && !stderr.contains("mount:"),
            "could not set up a private /etc for the test (needs root, or user namespaces): {stderr}"
        );
        out
    }
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn code(out: &Output) -> i32 {
    out.status
        .code()
        .unwrap_or_else(|| panic!("killed by a signal: {out:?}"))
}

const LOCKED: &str = "lock = true\nlevel = \"ask\"\nallow = [\"echo ok\"]\ndeny = [\"rm -rf\"]\n";

#[test]
fn the_system_file_is_read_from_etc() {
    let sys = System::new(Some("level = \"full\"\n"));
    let out = sys.gate(&["-c", "echo ran"], &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ran\n");
}

#[test]
fn a_locked_system_file_lets_its_own_rules_run() {
    let sys = System::new(Some(LOCKED));
    let out = sys.gate(&["-c", "echo ok then"], &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

#[test]
fn a_locked_level_cannot_be_raised_by_a_flag_or_the_environment() {
    let sys = System::new(Some(LOCKED));
    let marker = sys.file("ran");
    let command = format!("touch {}", marker.display());
    for (args, env) in [
        (vec!["--level", "full", "-c", command.as_str()], vec![]),
        (vec!["-c", command.as_str()], vec![("GATE_LEVEL", "full")]),
        (vec!["--level", "safe", "-c", command.as_str()], vec![]),
    ] {
        let out = sys.gate(&args, &env);
        assert_eq!(code(&out), 125, "{args:?} {env:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("/etc/gate/config.toml locks the configuration"),
            "{}",
            stderr(&out)
        );
        assert!(!marker.exists(), "{args:?} ran the command");
    }
}

#[test]
fn a_locked_configuration_takes_no_added_allow_rules() {
    let sys = System::new(Some(LOCKED));
    let marker = sys.file("ran");
    let command = format!("touch {}", marker.display());
    let out = sys.gate(&["--allow", "touch", "-c", &command], &[]);
    assert_eq!(code(&out), 125, "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with("gate: --allow: /etc/gate/config.toml locks"),
        "{}",
        stderr(&out)
    );

    sys.user_config("allow = [\"touch\"]\n");
    let out = sys.gate(&["-c", &command], &[]);
    assert_eq!(code(&out), 125, "{}", stderr(&out));
    let message = stderr(&out);
    assert!(
        message.contains(".config/gate/config.toml:1: key `allow`"),
        "{message}"
    );
    assert!(!marker.exists());
}

#[test]
fn a_locked_system_file_cannot_be_ignored_with_no_config() {
    let sys = System::new(Some(LOCKED));
    let out = sys.gate(&["--no-config", "--level", "full", "-c", "echo hi"], &[]);
    assert_eq!(code(&out), 125, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot be ignored"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_locked_configuration_can_still_be_tightened() {
    let sys = System::new(Some(LOCKED));
    let out = sys.gate(&["--level", "deny", "-c", "echo ok"], &[]);
    assert_eq!(code(&out), 126, "{}", stderr(&out));
    let out = sys.gate(&["--deny", "echo", "-c", "echo ok"], &[]);
    assert_eq!(code(&out), 126, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("the deny rule `echo` (from --deny)"),
        "{}",
        stderr(&out)
    );
}

/// `readonly_rules` narrows what runs unasked: a locked system file that turns it on
/// cannot have it turned off by a user file; a locked file without it can have it
/// turned on.
#[test]
fn readonly_rules_can_be_turned_on_under_a_lock_but_not_off() {
    let sys = System::new(Some(&format!("{LOCKED}readonly_rules = true\n")));
    sys.user_config("readonly_rules = false\n");
    let out = sys.gate(&["-c", "echo ok"], &[]);
    assert_eq!(code(&out), 125, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("readonly_rules") && stderr(&out).contains("locks"),
        "{}",
        stderr(&out)
    );
    let sys = System::new(Some(LOCKED));
    sys.user_config("readonly_rules = true\n");
    let out = sys.gate(&["-c", "echo ok"], &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = sys.gate(&["--readonly-rules", "-c", "echo ok"], &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

#[test]
fn the_system_deny_rules_hold_under_every_layer() {
    let sys = System::new(Some(LOCKED));
    let out = sys.gate(&["-c", "echo ok; rm -rf /nonexistent-gate-test"], &[]);
    assert_eq!(code(&out), 126, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("/etc/gate/config.toml:4"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_unlocked_system_file_can_be_overridden_or_ignored() {
    let sys = System::new(Some("level = \"deny\"\n"));
    let out = sys.gate(&["-c", "echo hi"], &[]);
    assert_eq!(code(&out), 126, "{}", stderr(&out));
    let out = sys.gate(&["--level", "full", "-c", "echo hi"], &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let out = sys.gate(&["--no-config", "--allow", "echo", "-c", "echo hi"], &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

#[test]
fn a_broken_system_file_stops_everything_and_names_the_line() {
    let sys = System::new(Some("level = \"full\"\n\nallow = [\"ls\", 7]\n"));
    let out = sys.gate(&["-c", "echo hi"], &[]);
    assert_eq!(code(&out), 125);
    assert!(out.stdout.is_empty());
    assert!(
        stderr(&out).starts_with(
            "gate: /etc/gate/config.toml:3: key `allow`: expected a string, found integer"
        ),
        "{}",
        stderr(&out)
    );
    // --no-config does not skip a system file it cannot read.
    let out = sys.gate(&["--no-config", "--level", "full", "-c", "echo hi"], &[]);
    assert_eq!(code(&out), 125, "{}", stderr(&out));
}

#[test]
fn lock_in_a_user_file_is_an_error() {
    let sys = System::new(None);
    sys.user_config("lock = true\n");
    let out = sys.gate(&["--level", "full", "-c", "echo hi"], &[]);
    assert_eq!(code(&out), 125);
    assert!(
        stderr(&out).contains("key `lock`: only the system file"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_system_file_that_is_a_fifo_or_a_device_is_refused_at_once() {
    // Were it read like a file, a FIFO would wait for a writer forever and /dev/zero
    // would fill the memory; `timeout` ends such a run (status 137) and the test fails.
    let deadline = ["timeout", "--signal=KILL", "20"];
    for kind in ["fifo", "device"] {
        let sys = System::new(None);
        let marker = sys.file("ran");
        let path = sys.root.path().join("etc/gate/config.toml");
        match kind {
            "fifo" => {
                nix::unistd::mkfifo(&path, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap()
            }
            _ => std::os::unix::fs::symlink("/dev/zero", &path).unwrap(),
        }
        let command = format!("touch {}", marker.display());
        let out = sys.gate_after(
            &deadline,
            &["--level", "full", "--audit-log", "off", "-c", &command],
            &[],
        );
        assert_eq!(code(&out), 125, "{kind}: {}", stderr(&out));
        let what = match kind {
            "fifo" => "is a FIFO (named pipe), not a regular file",
            _ => "is a character device, not a regular file",
        };
        assert_eq!(
            stderr(&out),
            format!("gate: /etc/gate/config.toml: {what}; nothing was run\n")
        );
        assert!(!marker.exists(), "{kind}: the command ran");
    }
}

#[test]
fn under_a_lock_a_user_file_cannot_send_the_audit_log_away_or_choose_the_approver() {
    // The locking file names neither an audit log nor a socket; the model can write the
    // user file. Before, it could send the log to /dev/null and the record of what ran
    // was gone, or point gate at an approver of its own.
    let sys = System::new(Some(LOCKED));
    let marker = sys.file("ran");
    let command = format!("echo ok; touch {}", marker.display());
    for (user, key) in [
        ("[audit]\nlog = \"/dev/null\"\n", "audit.log"),
        (
            "[approval]\nsocket = \"/tmp/model-approver.sock\"\n",
            "approval.socket",
        ),
    ] {
        sys.user_config(user);
        let out = sys.gate(&["-c", &command], &[]);
        assert_eq!(code(&out), 125, "{user}: {}", stderr(&out));
        let e = stderr(&out);
        assert!(
            e.starts_with("gate: ") && e.contains(key) && e.contains("lock"),
            "{user}: {e}"
        );
        assert!(!marker.exists(), "{user}: the command ran");
    }
    // Control: restating the default place is not a change, and the allowed command
    // runs and is recorded where the default puts it.
    sys.user_config("");
    fs::create_dir_all(sys.root.path().join("state")).unwrap();
    let out = sys.gate(&["-c", "echo ok"], &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let log = fs::read_to_string(sys.root.path().join("state/gate/audit.jsonl")).unwrap();
    assert!(log.contains("\"command\":\"echo ok\""), "{log}");
}
