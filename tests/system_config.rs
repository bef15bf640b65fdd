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
            "gate: /etc/gate/config.toml:3: key `allow`: expected a string, or a table with `rule`, `match` and `not_match`, found integer"
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

// ---------------------------------------------------------------------------------------
// Drop-ins: /etc/gate/config.d/*.toml, part of the system layer.

impl System {
    /// Write the drop-in `name` into the scratch `/etc/gate/config.d`.
    fn drop_in(&self, name: &str, text: &str) -> PathBuf {
        let dir = self.root.path().join("etc/gate/config.d");
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        fs::write(&path, text).unwrap();
        path
    }
}

#[test]
fn drop_ins_merge_in_name_order_after_the_system_file() {
    let sys = System::new(Some("level = \"deny\"\n"));
    sys.drop_in("20-last.toml", "level = \"full\"\n");
    sys.drop_in("10-first.toml", "level = \"ask\"\n");
    let out = sys.gate(&["-c", "echo ran"], &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // Control: the other way round, the last one says deny.
    sys.drop_in("30-later.toml", "level = \"deny\"\n");
    let out = sys.gate(&["-c", "echo ran"], &[]);
    assert_eq!(code(&out), 126, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("/etc/gate/config.d/30-later.toml:1"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn backups_hidden_files_and_other_names_in_config_d_are_ignored() {
    let sys = System::new(Some("level = \"full\"\n"));
    // Each of these would refuse the command (or break the configuration) were it read.
    for name in [
        "50-ci.toml~",
        "50-ci.toml.dpkg-old",
        "50-ci.toml.dpkg-dist",
        ".50-ci.toml.swp",
        ".hidden.toml",
        "README",
        "50-ci.conf",
        ".toml",
    ] {
        sys.drop_in(name, "level = \"deny\"\nnot toml at all [\n");
    }
    let out = sys.gate(&["-c", "echo ran"], &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ran\n");
    // Control: the same text under a drop-in's name is read, and stops everything.
    sys.drop_in("50-ci.toml", "level = \"deny\"\nnot toml at all [\n");
    let out = sys.gate(&["-c", "echo ran"], &[]);
    assert_eq!(code(&out), 125, "{}", stderr(&out));
}

#[test]
fn a_broken_drop_in_stops_everything_and_names_the_file_and_line() {
    let sys = System::new(None);
    sys.drop_in("40-ci.toml", "level = \"full\"\nallow = [\"ls\", 7]\n");
    let marker = sys.file("ran");
    let out = sys.gate(&["-c", &format!("touch {}", marker.display())], &[]);
    assert_eq!(code(&out), 125, "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with(
            "gate: /etc/gate/config.d/40-ci.toml:2: key `allow`: expected a string, or a table with `rule`, `match` and `not_match`, found integer"
        ),
        "{}",
        stderr(&out)
    );
    assert!(!marker.exists());
}

#[test]
fn a_lock_holds_against_every_drop_in_after_it() {
    let marker_command = |sys: &System| format!("touch {}", sys.file("ran").display());
    // A locked system file: a drop-in may add deny rules, not allow rules, and cannot
    // unlock.
    let sys = System::new(Some(LOCKED));
    sys.drop_in("10-deny.toml", "deny = [\"curl\"]\n");
    let out = sys.gate(&["-c", "echo ok"], &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    for (loosening, key) in [
        ("allow = [\"touch\"]\n", "allow"),
        ("level = \"full\"\n", "level"),
        ("lock = false\n", "lock"),
    ] {
        sys.drop_in("20-loose.toml", loosening);
        let out = sys.gate(&["-c", &marker_command(&sys)], &[]);
        assert_eq!(code(&out), 125, "{loosening}: {}", stderr(&out));
        assert!(
            stderr(&out).starts_with(&format!(
                "gate: /etc/gate/config.d/20-loose.toml:1: key `{key}`: /etc/gate/config.toml \
                 locks the configuration"
            )),
            "{}",
            stderr(&out)
        );
        assert!(!sys.file("ran").exists());
    }
    // A drop-in that locks: the drop-ins after it and the user file are held, the ones
    // before it are not.
    let sys = System::new(Some("level = \"ask\"\n"));
    sys.drop_in("10-before.toml", "allow = [\"echo\"]\n");
    sys.drop_in("50-lock.toml", "lock = true\n");
    sys.drop_in("90-after.toml", "allow = [\"touch\"]\n");
    let out = sys.gate(&["-c", &marker_command(&sys)], &[]);
    assert_eq!(code(&out), 125, "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "/etc/gate/config.d/90-after.toml:1: key `allow`: /etc/gate/config.d/50-lock.toml \
             locks the configuration"
        ),
        "{}",
        stderr(&out)
    );
    fs::remove_file(sys.root.path().join("etc/gate/config.d/90-after.toml")).unwrap();
    let out = sys.gate(&["-c", "echo ok"], &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    sys.user_config("level = \"full\"\n");
    let out = sys.gate(&["-c", &marker_command(&sys)], &[]);
    assert_eq!(code(&out), 125, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("50-lock.toml locks the configuration"),
        "{}",
        stderr(&out)
    );
    let out = sys.gate(&["--no-config", "-c", "echo ok"], &[]);
    assert_eq!(code(&out), 125, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--no-config: /etc/gate/config.d/50-lock.toml locks"),
        "{}",
        stderr(&out)
    );
    // Control: without the lock, the same drop-in and user file loosen freely.
    fs::remove_file(sys.root.path().join("etc/gate/config.d/50-lock.toml")).unwrap();
    sys.drop_in("90-after.toml", "allow = [\"touch\"]\n");
    let out = sys.gate(&["-c", &marker_command(&sys)], &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(sys.file("ran").exists());
}

/// Run gate as a user other than root (uid 65534 when the test runs as root; the test's
/// own user, without capabilities, otherwise) under the scratch `/etc`.
fn gate_as_a_user(sys: &System, args: &[&str]) -> Output {
    let mut unshare = Command::new("unshare");
    let script = if is_root() {
        unshare.arg("--mount");
        "mount --bind \"$1\" /etc && shift && \
         exec setpriv --reuid=65534 --regid=65534 --clear-groups \"$@\""
    } else {
        unshare.args(["--map-current-user", "--keep-caps", "--mount"]);
        "mount --bind \"$1\" /etc && shift && \
         exec setpriv --inh-caps=-all --ambient-caps=-all \"$@\""
    };
    let out = unshare
        .args(["--", "sh", "-c", script, "sh"])
        .arg(sys.root.path().join("etc"))
        .arg(GATE)
        .args(args)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", "/nonexistent")
        .current_dir("/")
        .stdin(Stdio::null())
        .output()
        .expect("unshare (util-linux) must be installed to test the system configuration");
    let e = stderr(&out);
    assert!(
        !e.contains("unshare:") && !e.contains("mount:") && !e.contains("setpriv:"),
        "could not run gate as another user under a private /etc: {e}"
    );
    out
}

#[test]
fn a_system_file_or_drop_in_the_user_can_write_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |path: &Path, mode: u32| {
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap()
    };
    let sys = System::new(Some("level = \"full\"\n"));
    let etc_gate = sys.root.path().join("etc/gate");
    let drop_in = sys.drop_in("50-ci.toml", "deny = [\"curl\"]\n");
    let args = ["--audit-log", "off", "-c", "echo ran"];
    // Control: read-only to this user, everything loads and the command runs.
    for (path, m) in [
        (etc_gate.join("config.toml"), 0o444),
        (drop_in.clone(), 0o444),
        (etc_gate.join("config.d"), 0o555),
        (etc_gate.clone(), 0o555),
    ] {
        mode(&path, m);
    }
    let out = gate_as_a_user(&sys, &args);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    for (path, m, dir) in [
        (etc_gate.join("config.toml"), 0o666, false),
        (drop_in.clone(), 0o666, false),
        (etc_gate.join("config.d"), 0o777, true),
    ] {
        mode(&path, m);
        let out = gate_as_a_user(&sys, &args);
        assert_eq!(code(&out), 125, "{}: {}", path.display(), stderr(&out));
        let e = stderr(&out);
        assert!(
            e.starts_with("gate: /etc/gate/") && e.contains("can write it, so the commands"),
            "{}: {e}",
            path.display()
        );
        assert!(out.stdout.is_empty());
        mode(&path, if dir { 0o555 } else { 0o444 });
    }
    // A drop-in that links to a file elsewhere: that file's directory counts too.
    let elsewhere = tempfile::tempdir().unwrap();
    let target = elsewhere.path().join("policy.toml");
    fs::write(&target, "deny = [\"wget\"]\n").unwrap();
    mode(&target, 0o444);
    mode(&etc_gate.join("config.d"), 0o755);
    std::os::unix::fs::symlink(&target, etc_gate.join("config.d/60-link.toml")).unwrap();
    mode(&etc_gate.join("config.d"), 0o555);
    mode(elsewhere.path(), 0o555);
    let out = gate_as_a_user(&sys, &args);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    mode(elsewhere.path(), 0o777);
    let out = gate_as_a_user(&sys, &args);
    assert_eq!(code(&out), 125, "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "can write its directory {}",
            elsewhere.path().canonicalize().unwrap().display()
        )),
        "{}",
        stderr(&out)
    );
    mode(elsewhere.path(), 0o755);
    // The system file's directory too.
    mode(&etc_gate, 0o777);
    let out = gate_as_a_user(&sys, &args);
    assert_eq!(code(&out), 125, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("can write its directory /etc/gate"),
        "{}",
        stderr(&out)
    );
    mode(&etc_gate, 0o755);
    mode(&etc_gate.join("config.d"), 0o755);
}

// ---------------------------------------------------------------------------------------
// Candidates: `gate doctor|check --system-file FILE --system-drop-ins DIR`.

#[test]
fn a_candidate_with_a_broken_line_is_reported_with_its_file_and_line() {
    let sys = System::new(None);
    let candidate = sys.file("candidate.toml");
    fs::write(
        &candidate,
        "lock = true\nlevel = \"ask\"\nallow = [\"ls | sh\"]\n",
    )
    .unwrap();
    let shown = candidate.display().to_string();
    let out = sys.gate(&["doctor", "--system-file", &shown], &[]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with(&format!(
            "gate: {shown}:3: key `allow`: `ls | sh`: a rule cannot contain"
        )),
        "{}",
        stderr(&out)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(&format!("ERROR: {shown}:3:")),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let out = sys.gate(&["check", "--system-file", &shown, "-c", "ls"], &[]);
    assert_eq!(code(&out), 125, "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with(&format!("gate: {shown}:3: key `allow`")),
        "{}",
        stderr(&out)
    );
    // A candidate that is not there is an error, not an absent system file.
    let out = sys.gate(&["doctor", "--system-file", "/nonexistent/c.toml"], &[]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--system-file: /nonexistent/c.toml: no such file"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_candidate_that_the_installed_drop_ins_or_the_user_file_loosen_is_reported() {
    let sys = System::new(Some("level = \"full\"\n"));
    let candidate = sys.file("candidate.toml");
    fs::write(&candidate, LOCKED).unwrap();
    let shown = candidate.display().to_string();
    // The installed drop-in widens what the candidate locks.
    sys.drop_in("50-ci.toml", "allow = [\"cargo\"]\n");
    let out = sys.gate(&["doctor", "--system-file", &shown], &[]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with(&format!(
            "gate: /etc/gate/config.d/50-ci.toml:1: key `allow`: {shown} locks the configuration"
        )),
        "{}",
        stderr(&out)
    );
    // Control: the installed system file alone is not locked, and the same drop-in loads.
    let out = sys.gate(&["check", "-c", "cargo build"], &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // So does the user file, which the model can write.
    fs::remove_file(sys.root.path().join("etc/gate/config.d/50-ci.toml")).unwrap();
    sys.user_config("level = \"full\"\n");
    let out = sys.gate(&["check", "--system-file", &shown, "-c", "ls"], &[]);
    assert_eq!(code(&out), 125, "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            ".config/gate/config.toml:1: key `level`: {shown} locks the configuration"
        )),
        "{}",
        stderr(&out)
    );
    // A candidate drop-in directory is checked against the installed system file.
    sys.user_config("");
    let locked = System::new(Some(LOCKED));
    let dir = locked.file("candidate.d");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("60-net.toml"), "[sandbox]\nnetwork = true\n").unwrap();
    let dir_shown = dir.display().to_string();
    let out = locked.gate(&["doctor", "--system-drop-ins", &dir_shown], &[]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).starts_with(&format!(
            "gate: {dir_shown}/60-net.toml:2: key `sandbox.network`: /etc/gate/config.toml locks"
        )),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_sound_candidate_loads_in_place_of_the_installed_file() {
    // The installed file is broken: the candidate replaces it, as installing it would.
    let sys = System::new(Some("level = [\n"));
    let candidate = sys.file("candidate.toml");
    fs::write(&candidate, LOCKED).unwrap();
    let dir = sys.file("candidate.d");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("10-deny.toml"), "deny = [\"curl\"]\n").unwrap();
    fs::write(dir.join("10-deny.toml~"), "level = [\n").unwrap();
    let shown = candidate.display().to_string();
    let dir_shown = dir.display().to_string();
    let out = sys.gate(
        &[
            "doctor",
            "--system-file",
            &shown,
            "--system-drop-ins",
            &dir_shown,
        ],
        &[],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains(&format!(
            "system      {shown} (candidate, present, locks the configuration (lock = true))"
        )),
        "{report}"
    );
    assert!(
        report.contains(&format!(
            "drop-ins    10-deny.toml from the candidate directory {dir_shown}"
        )),
        "{report}"
    );
    let out = sys.gate(
        &[
            "check",
            "--system-file",
            &shown,
            "--system-drop-ins",
            &dir_shown,
            "-c",
            "echo ok",
        ],
        &[],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(&format!("(from {shown}:3)")),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // Control: without the candidate, the installed (broken) file is what loads.
    let out = sys.gate(&["doctor"], &[]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("ERROR: /etc/gate/config.toml:1"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // A run never takes a candidate.
    let out = sys.gate(&["--system-file", &shown, "-c", "echo ok"], &[]);
    assert_eq!(code(&out), 125, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("unknown option --system-file"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_locked_ask_rule_holds_whatever_the_user_file_says() {
    // Control: under the same lock without the ask rule, the command runs.
    let sys = System::new(Some("lock = true\nlevel = \"full\"\n"));
    let out = sys.gate(&["--no-tty", "-c", "touch ran"], &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(sys.file("ran").exists(), "control: the command ran");

    let sys = System::new(Some("lock = true\nlevel = \"full\"\nask = [\"touch\"]\n"));
    // A user file that sets the list again, empty, or with other rules, adds to it.
    for user in ["ask = []\n", "ask = [\"git push\"]\n", ""] {
        sys.user_config(user);
        let out = sys.gate(&["--no-tty", "-c", "true && touch ran"], &[]);
        assert_eq!(code(&out), 126, "{user:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("the ask rule `touch` (from /etc/gate/config.toml:3)"),
            "{user:?}: {}",
            stderr(&out)
        );
        assert!(!sys.file("ran").exists(), "{user:?}: the command ran");
    }
}

#[test]
fn gate_rules_lists_each_rule_with_its_file_and_line_and_what_the_lock_allows() {
    let sys = System::new(Some(
        "lock = true\nlevel = \"ask\"\nallow = [\"echo ok\"]\ndeny = [\"rm -rf\"]\nask = [\"git push\"]\n",
    ));
    sys.user_config("\nask = [\"npm publish\"]\ncompound = false\n");
    let user_file = sys.home().join(".config/gate/config.toml");
    let out = sys.gate(&["rules", "--ask", "curl"], &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    for line in [
        "configuration: /etc/gate/config.toml (locks), ".to_owned(),
        "level: ask (from /etc/gate/config.toml:2)\n".to_owned(),
        "  rm -rf       /etc/gate/config.toml:4\n".to_owned(),
        "  git push     /etc/gate/config.toml:5\n".to_owned(),
        format!("  npm publish  {}:2\n", user_file.display()),
        "  curl         --ask\n".to_owned(),
        "  echo ok      /etc/gate/config.toml:3\n".to_owned(),
        format!("  compound        off  (from {}:3)\n", user_file.display()),
        "\nlock: /etc/gate/config.toml says lock = true;".to_owned(),
        "  allow: no rule may be added\n".to_owned(),
        "  ask: rules may be added; none can be taken away\n".to_owned(),
    ] {
        assert!(text.contains(&line), "{line:?} is not in\n{text}");
    }
    let out = sys.gate(&["rules", "--json"], &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["locked_by"], "/etc/gate/config.toml");
    let asks: Vec<(String, String)> = v["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kind"] == "ask")
        .map(|r| {
            (
                r["rule"].as_str().unwrap().to_owned(),
                r["origin"]["text"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        asks,
        [
            ("git push".to_owned(), "/etc/gate/config.toml:5".to_owned()),
            (
                "npm publish".to_owned(),
                format!("{}:2", user_file.display())
            ),
        ]
    );
    // What the lock refuses, `gate rules` refuses to list: the configuration does not
    // load (125), as a run would not.
    let out = sys.gate(&["rules", "--allow", "ls"], &[]);
    assert_eq!(code(&out), 125, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no allow rules can be added"),
        "{}",
        stderr(&out)
    );
}
