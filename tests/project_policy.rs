//! Per-project policy: a repository's `.gate.toml` tightens as it is, loosens only once
//! the person trusts it (`gate trust`), and is untrusted again when a byte changes. The
//! attacks are the model's: it writes files in the repository (a trust record, a link, a
//! FIFO) and runs commands (`gate trust` itself); each has a control showing what the
//! attack would do were gate not in its way. Every scenario runs as the current user and
//! as an unprivileged one.

use crate::common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use common::*;

/// A repository in the test's working directory: `repo/` with a `.git` directory, and
/// `repo/sub/`, where gate runs. Everything is open to the unprivileged user.
struct Repo {
    env: TestEnv,
    root: PathBuf,
    sub: PathBuf,
}

impl Repo {
    fn new() -> Repo {
        let env = TestEnv::new();
        let root = env.work.join("repo");
        let sub = root.join("sub");
        for dir in [&root, &root.join(".git"), &sub] {
            fs::create_dir(dir).unwrap();
            fs::set_permissions(dir, fs::Permissions::from_mode(0o777)).unwrap();
        }
        Repo { env, root, sub }
    }

    /// Write the project file (readable by everyone) and return its path.
    fn policy(&self, text: &str) -> PathBuf {
        write_policy(&self.root, text)
    }

    fn policy_path(&self) -> PathBuf {
        self.root.join(".gate.toml")
    }

    /// gate as `user`, in `repo/sub`, with no audit log.
    fn gate(&self, user: User) -> Gate {
        self.env
            .gate()
            .user(user)
            .current_dir(&self.sub)
            .args(["--audit-log", "off"])
    }

    /// `gate trust` as `user` in `repo/sub`.
    fn trust(&self, user: User) -> Outcome {
        self.env
            .gate()
            .user(user)
            .current_dir(&self.sub)
            .arg("trust")
            .run()
    }

    /// Run `touch F` in `repo/sub` with `options`; whether F was made.
    fn touch(&self, user: User, options: &[&str]) -> (Outcome, bool) {
        let marker = self.sub.join("F");
        let _ = fs::remove_file(&marker);
        let out = self.gate(user).args(options).args(["-c", "touch F"]).run();
        let made = marker.exists();
        let _ = fs::remove_file(&marker);
        (out, made)
    }
}

fn write_policy(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join(".gate.toml");
    fs::write(&path, text).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
    path
}

/// The one line an untrusted project file that loosens gives: it names the file, the
/// key and `gate trust`, and nothing ran.
#[track_caller]
fn assert_untrusted_refusal(out: &Outcome, made: bool, policy: &Path, key: &str) {
    assert!(!made, "nothing may run\n{}", out.report());
    out.assert_gate_error()
        .assert_stderr_contains(&format!("{}:", policy.display()))
        .assert_stderr_contains(&format!("key `{key}`"))
        .assert_stderr_contains(&format!(
            "a person who trusts it can run `gate trust {}` in a terminal of their own",
            policy.display()
        ))
        .assert_stderr_contains("nothing was run");
    assert_eq!(out.stderr().matches('\n').count(), 1, "{}", out.report());
}

for_each_user! {
    fn an_untrusted_file_that_tightens_applies(user) {
        let repo = Repo::new();
        repo.env.assert_side_effects_are_visible(user);
        // Control: at level full, with no project file, the command runs.
        let (out, made) = repo.touch(user, &["--level", "full"]);
        out.assert_code(0);
        assert!(made);
        // A deny rule refuses it.
        repo.policy("deny = [\"touch\"]\n");
        let (out, made) = repo.touch(user, &["--level", "full"]);
        out.assert_refused()
            .assert_stderr_contains(&format!("{}:1", repo.policy_path().display()));
        assert!(!made);
        // So does level deny, chosen by the project over the user's full.
        fs::remove_file(repo.policy_path()).unwrap();
        repo.env.write_user_config("level = \"full\"\n");
        let (out, made) = repo.touch(user, &[]);
        out.assert_code(0);
        assert!(made, "control: the user file's level full runs it");
        repo.policy("level = \"deny\"\n");
        let (out, made) = repo.touch(user, &[]);
        out.assert_refused();
        assert!(!made);
    }

    fn an_untrusted_file_that_loosens_stops_everything_with_one_line(user) {
        let repo = Repo::new();
        repo.env.assert_side_effects_are_visible(user);
        for (text, key) in [
            ("allow = [\"touch F\"]\n", "allow"),
            ("level = \"full\"\n", "level"),
            ("deny = [\"rm\"]\nreadonly = true\n", "readonly"),
            ("[sandbox]\nwrite = [\"/\"]\n", "sandbox.write"),
        ] {
            let policy = repo.policy(text);
            let (out, made) = repo.touch(user, &[]);
            assert_untrusted_refusal(&out, made, &policy, key);
        }
        // The whole file is refused, not the loosening part alone: its deny rule does not
        // apply either, since nothing runs at all.
        let policy = repo.policy("deny = [\"touch\"]\nallow = [\"ls\"]\n");
        let (out, made) = repo.touch(user, &["--level", "full"]);
        assert_untrusted_refusal(&out, made, &policy, "allow");
    }

    fn a_trusted_file_loosens_and_a_changed_byte_untrusts_it(user) {
        let repo = Repo::new();
        repo.env.assert_side_effects_are_visible(user);
        let policy = repo.policy("allow = [\"touch F\"]\n");
        let (out, made) = repo.touch(user, &[]);
        assert_untrusted_refusal(&out, made, &policy, "allow");

        let before: Vec<_> = walk(&repo.root);
        let out = repo.trust(user);
        out.assert_code(0)
            .assert_stdout_contains(&format!("trusted: {}", policy.display()))
            .assert_stdout_contains(&format!(
                "{}:1: key `allow`: no allow rules can be added (`touch F`)",
                policy.display()
            ));
        assert_eq!(walk(&repo.root), before, "nothing is written in the repository");
        let records: Vec<_> = fs::read_dir(repo.env.state.join("gate/trusted"))
            .unwrap()
            .collect();
        assert_eq!(records.len(), 1, "one record, in the state directory");

        let (out, made) = repo.touch(user, &[]);
        out.assert_code(0);
        assert!(made, "trusted, its allow rule applies\n{}", out.report());

        // One byte more (a space at the end) and it is untrusted again.
        fs::write(&policy, "allow = [\"touch F\"] \n").unwrap();
        let (out, made) = repo.touch(user, &[]);
        assert_untrusted_refusal(&out, made, &policy, "allow");
        out.assert_stderr_contains("the project file changed since it was trusted");

        repo.trust(user).assert_code(0);
        let (out, made) = repo.touch(user, &[]);
        out.assert_code(0);
        assert!(made);

        // Revoked, it is untrusted again.
        repo.env
            .gate()
            .user(user)
            .current_dir(&repo.sub)
            .args(["trust", "--revoke"])
            .run()
            .assert_code(0)
            .assert_stdout(&format!("revoked: {}\n", policy.display()));
        let (out, made) = repo.touch(user, &[]);
        assert_untrusted_refusal(&out, made, &policy, "allow");
        out.assert_stderr_contains("the project file is not trusted");
    }

    fn a_file_above_applies_up_to_the_repository_root_and_not_beyond(user) {
        let repo = Repo::new();
        repo.env.assert_side_effects_are_visible(user);
        // In the repository's root, it applies in a subdirectory.
        repo.policy("deny = [\"touch\"]\n");
        let (out, made) = repo.touch(user, &["--level", "full"]);
        out.assert_refused();
        assert!(!made);
        // Above the root (the directory holding .git), it does not.
        fs::remove_file(repo.policy_path()).unwrap();
        write_policy(&repo.env.work, "deny = [\"touch\"]\n");
        let (out, made) = repo.touch(user, &["--level", "full"]);
        out.assert_code(0);
        assert!(made, "a file beyond .git does not apply\n{}", out.report());
        // Control: without .git the walk goes on, and finds it.
        fs::remove_dir(repo.root.join(".git")).unwrap();
        let (out, made) = repo.touch(user, &["--level", "full"]);
        out.assert_refused();
        assert!(!made);
    }

    fn a_system_lock_holds_against_a_trusted_project_file(user) {
        let repo = Repo::new();
        repo.policy("allow = [\"touch F\"]\n");
        repo.trust(user).assert_code(0);
        let check = |system: Option<&Path>| {
            let mut gate = repo.gate(user).arg("check");
            if let Some(system) = system {
                gate = gate.arg("--system-file").arg(system);
            }
            gate.args(["-c", "touch F"]).run()
        };
        // Control: trusted, its rule allows the command.
        check(None).assert_code(0).assert_stdout_contains("touch F");
        let system = repo.env.write("system.toml", "lock = true\nlevel = \"ask\"\n");
        check(Some(&system))
            .assert_gate_error()
            .assert_stderr_contains(&format!(
                "{}:1: key `allow`: {} locks the configuration (lock = true), so no allow \
                 rules can be added (`touch F`)",
                repo.policy_path().display(),
                system.display()
            ));
    }

    fn a_locked_etc_gate_config_toml_holds_against_a_trusted_project_file_in_a_real_run(user) {
        let repo = Repo::new();
        repo.env.assert_side_effects_are_visible(user);
        repo.policy("allow = [\"touch F\"]\n");
        repo.trust(user).assert_code(0);
        // A scratch /etc, bind-mounted over the real one in a private mount namespace.
        let etc = repo.env.root.join("etc");
        fs::create_dir_all(etc.join("gate")).unwrap();
        for file in ["ld.so.cache", "passwd", "group", "nsswitch.conf"] {
            let from = Path::new("/etc").join(file);
            if from.exists() {
                fs::copy(&from, etc.join(file)).unwrap();
            }
        }
        let mut within: Vec<String> = vec![require_program("unshare").display().to_string()];
        if !running_as_root() {
            within.push("--map-root-user".into());
        }
        within.extend([
            "--mount".into(),
            "--".into(),
            require_program("sh").display().to_string(),
            "-c".into(),
            "mount --bind \"$1\" /etc && shift && exec \"$@\"".into(),
            "sh".into(),
            etc.display().to_string(),
        ]);
        let run = |repo: &Repo| {
            let marker = repo.sub.join("F");
            let out = repo.gate(user).within(&within).args(["-c", "touch F"]).run();
            let made = marker.exists();
            let _ = fs::remove_file(&marker);
            (out, made)
        };
        // Control: with no system file, the trusted rule runs the command.
        let (out, made) = run(&repo);
        out.assert_code(0);
        assert!(made, "{}", out.report());
        fs::write(etc.join("gate/config.toml"), "lock = true\nlevel = \"ask\"\n").unwrap();
        let (out, made) = run(&repo);
        assert!(!made, "{}", out.report());
        out.assert_gate_error().assert_stderr_contains(&format!(
            "{}:1: key `allow`: /etc/gate/config.toml locks the configuration (lock = true), \
             so no allow rules can be added (`touch F`)",
            repo.policy_path().display()
        ));
    }

    fn no_config_skips_the_project_file(user) {
        let repo = Repo::new();
        repo.env.assert_side_effects_are_visible(user);
        repo.policy("deny = [\"touch\"]\nallow = [\"ls\"]\n");
        let (out, made) = repo.touch(user, &["--level", "full"]);
        assert_untrusted_refusal(&out, made, &repo.policy_path(), "allow");
        let (out, made) = repo.touch(user, &["--no-config", "--level", "full"]);
        out.assert_code(0);
        assert!(made, "{}", out.report());
    }

    fn rules_doctor_and_check_show_the_project_file_and_its_trust(user) {
        let repo = Repo::new();
        let policy = repo.policy("deny = [\"touch\"]\n");
        let rules = repo.gate(user).arg("rules").run();
        rules
            .assert_code(0)
            .assert_stdout_contains(&format!(
                "project: {}, not trusted: only what tightens applies",
                policy.display()
            ))
            .assert_stdout_contains(&format!("{}:1 (project, untrusted)", policy.display()));
        let json = repo.gate(user).args(["rules", "--json"]).run();
        let value: serde_json::Value = serde_json::from_str(&json.stdout()).unwrap();
        assert_eq!(value["project"]["trust"], "untrusted");
        assert_eq!(value["project"]["file"], policy.display().to_string());
        repo.gate(user)
            .args(["check", "-c", "touch F"])
            .run()
            .assert_code(2)
            .assert_stdout_contains(&format!("{}:1", policy.display()));
        repo.trust(user).assert_code(0).assert_stdout_contains(
            "grants:  nothing beyond tightening",
        );
        repo.gate(user)
            .arg("rules")
            .run()
            .assert_stdout_contains(&format!("project: {}, trusted (since ", policy.display()))
            .assert_stdout_contains("(project, trusted)");
        let doctor = repo.gate(user).args(["doctor", "--json"]).run();
        let value: serde_json::Value = serde_json::from_str(&doctor.stdout()).unwrap();
        assert_eq!(value["project"]["file"], policy.display().to_string());
        assert_eq!(value["project"]["trust"], "trusted");
        let list = repo.env.gate().user(user).args(["trust", "--list"]).run();
        list.assert_code(0)
            .assert_stdout_contains(&policy.display().to_string())
            .assert_stdout_contains("the file is unchanged");
    }

    fn a_trust_record_shipped_inside_the_repository_grants_nothing(user) {
        let repo = Repo::new();
        repo.env.assert_side_effects_are_visible(user);
        let policy = repo.policy("allow = [\"touch F\"]\n");
        // The model makes a real record for this very file (in a scratch store) and puts
        // it in the repository, where a relative XDG_STATE_HOME would find it.
        let shipped = repo.sub.join(".local/state");
        fs::create_dir_all(&shipped).unwrap();
        chmod_tree(&repo.sub);
        repo.env
            .gate()
            .user(user)
            .current_dir(&repo.sub)
            .env("XDG_STATE_HOME", &shipped)
            .arg("trust")
            .run()
            .assert_code(0);
        let record = single_file(&shipped.join("gate/trusted"));
        // gate reads records only from the absolute state directory: a relative
        // XDG_STATE_HOME is ignored (as the XDG specification says), and the
        // repository is never looked in.
        for state in [None, Some(".local/state")] {
            let mut gate = repo.gate(user);
            if let Some(state) = state {
                gate = gate.env("XDG_STATE_HOME", state);
            }
            let marker = repo.sub.join("F");
            let out = gate.args(["-c", "touch F"]).run();
            assert_untrusted_refusal(&out, marker.exists(), &policy, "allow");
        }
        // Control: the same record in the person's own store is trust.
        let store = repo.env.state.join("gate/trusted");
        fs::create_dir_all(&store).unwrap();
        let placed = store.join(record.file_name().unwrap());
        fs::copy(&record, &placed).unwrap();
        let uid = uid_of(user);
        for path in [repo.env.state.join("gate"), store.clone(), placed.clone()] {
            std::os::unix::fs::chown(&path, Some(uid), Some(uid)).unwrap();
        }
        let (out, made) = repo.touch(user, &[]);
        out.assert_code(0);
        assert!(made, "control: the record is a real one\n{}", out.report());
    }

    fn a_link_to_a_trusted_file_is_not_trusted_where_it_lies(user) {
        let trusted = Repo::new();
        trusted.env.assert_side_effects_are_visible(user);
        let target = trusted.policy("allow = [\"touch F\"]\n");
        trusted.trust(user).assert_code(0);
        // Control: where it was trusted, the file allows the command.
        let (out, made) = trusted.touch(user, &[]);
        out.assert_code(0);
        assert!(made);
        // Another repository links its .gate.toml to that file: same bytes, but trust
        // belongs to the path where the person trusted them.
        let other = trusted.root.parent().unwrap().join("other");
        let other_sub = other.join("sub");
        for dir in [&other, &other.join(".git"), &other_sub] {
            fs::create_dir(dir).unwrap();
            fs::set_permissions(dir, fs::Permissions::from_mode(0o777)).unwrap();
        }
        std::os::unix::fs::symlink(&target, other.join(".gate.toml")).unwrap();
        let marker = other_sub.join("F");
        let out = trusted
            .env
            .gate()
            .user(user)
            .current_dir(&other_sub)
            .args(["--audit-log", "off", "-c", "touch F"])
            .run();
        assert_untrusted_refusal(&out, marker.exists(), &other.join(".gate.toml"), "allow");
    }

    fn a_fifo_named_gate_toml_is_refused_at_once(user) {
        let repo = Repo::new();
        repo.env.assert_side_effects_are_visible(user);
        let fifo = repo.policy_path();
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o666)).unwrap();
        fs::set_permissions(&fifo, fs::Permissions::from_mode(0o666)).unwrap();
        // Control: a plain reader waits on it for a writer that never comes.
        let status = std::process::Command::new(require_program("timeout"))
            .args(["1", "cat"])
            .arg(&fifo)
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(124), "control: reading the FIFO blocks");
        let started = std::time::Instant::now();
        let (out, made) = repo.touch(user, &["--level", "full"]);
        assert!(!made);
        out.assert_gate_error()
            .assert_stderr_contains(&format!(
                "{}: is a FIFO (named pipe), not a regular file",
                fifo.display()
            ));
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    fn swapping_the_file_while_gate_reads_it_never_runs_what_the_untrusted_version_allows(user) {
        let repo = Repo::new();
        repo.env.assert_side_effects_are_visible(user);
        let trusted = "allow = [\"touch F\"]\n";
        let untrusted = "allow = [\"touch F\", \"touch G\"]\n";
        repo.policy(trusted);
        repo.trust(user).assert_code(0);
        // The model swaps the file between the trusted bytes and its own, as fast as it
        // can, while gate runs `touch G`, which only its own version allows. Were the
        // bytes hashed not the bytes parsed, some run would hash the trusted version and
        // parse the other one.
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let swapper = {
            let stop = stop.clone();
            let root = repo.root.clone();
            std::thread::spawn(move || {
                let mut swaps = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let text = if swaps % 2 == 0 { untrusted } else { trusted };
                    let next = root.join(".gate.toml.next");
                    fs::write(&next, text).unwrap();
                    fs::set_permissions(&next, fs::Permissions::from_mode(0o644)).unwrap();
                    fs::rename(&next, root.join(".gate.toml")).unwrap();
                    swaps += 1;
                }
                swaps
            })
        };
        let marker = repo.sub.join("G");
        let mut outcomes = std::collections::BTreeMap::new();
        for _ in 0..60 {
            let out = repo.gate(user).args(["--no-tty", "-c", "touch G"]).run();
            assert!(!marker.exists(), "the untrusted version ran\n{}", out.report());
            assert!(
                matches!(out.code(), Some(125) | Some(126)),
                "{}",
                out.report()
            );
            *outcomes.entry(out.code()).or_insert(0) += 1;
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let swaps = swapper.join().unwrap();
        assert!(swaps > 60, "the file was swapped only {swaps} times");
        // Control: the other version, once trusted, runs `touch G`.
        repo.policy(untrusted);
        repo.trust(user).assert_code(0);
        let out = repo.gate(user).args(["-c", "touch G"]).run();
        out.assert_code(0);
        assert!(marker.exists(), "control\n{}", out.report());
        eprintln!("runs by status while swapping: {outcomes:?}, swaps: {swaps}");
    }

    fn a_command_gate_ran_cannot_trust_a_file(user) {
        let repo = Repo::new();
        repo.env.assert_side_effects_are_visible(user);
        let policy = repo.policy("allow = [\"touch F\"]\n");
        let inner = gate_binary_for(user);
        // The model asks gate (at level full, outside the repository, where its file
        // does not stop this very command) to run `gate trust` in it.
        let out = repo
            .gate(user)
            .current_dir(&repo.env.work)
            .args(["--level", "full", "-c"])
            .arg(format!("cd repo/sub && {} trust", inner.display()))
            .run();
        out.assert_code(125)
            .assert_stderr_contains("gate: trust: this process runs with no_new_privs");
        assert!(!repo.env.state.join("gate/trusted").exists(), "no record");
        let (out, made) = repo.touch(user, &[]);
        assert_untrusted_refusal(&out, made, &policy, "allow");
        // Control: the person, in a terminal of their own, can.
        repo.trust(user).assert_code(0);
        let (out, made) = repo.touch(user, &[]);
        out.assert_code(0);
        assert!(made);
    }
}

for_each_user! {
    fn a_deleted_working_directory_runs_nothing(user) {
        let repo = Repo::new();
        repo.env.assert_side_effects_are_visible(user);
        repo.policy("deny = [\"touch\"]\n");
        let gone = repo.sub.join("gone");
        fs::create_dir(&gone).unwrap();
        fs::set_permissions(&gone, fs::Permissions::from_mode(0o777)).unwrap();
        // gate starts in `gone`, which the shell removes first: gate cannot tell which
        // project file applies, so nothing runs. The marker would land in repo/sub.
        let marker = repo.sub.join("F");
        let script = format!(
            "cd {gone} && rmdir {gone} && exec \"$0\" --audit-log off --level full -c 'touch {marker}'",
            gone = gone.display(),
            marker = marker.display()
        );
        let out = repo
            .env
            .gate()
            .user(user)
            .program(require_program("sh"))
            .args(["-c", &script])
            .arg(gate_binary_for(user))
            .run();
        assert!(!marker.exists(), "{}", out.report());
        out.assert_gate_error()
            .assert_stderr_contains("cannot find the working directory (was it deleted?)");
        // Control: with --no-config (no project file to look for) it runs there.
        let script = format!(
            "mkdir {gone} && cd {gone} && rmdir {gone} && exec \"$0\" --no-config --audit-log off --level full -c 'touch {marker}'",
            gone = gone.display(),
            marker = marker.display()
        );
        let out = repo
            .env
            .gate()
            .user(user)
            .program(require_program("sh"))
            .args(["-c", &script])
            .arg(gate_binary_for(user))
            .run();
        out.assert_code(0);
        assert!(marker.exists(), "{}", out.report());
    }
}

/// Every path under `dir`, sorted.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut all = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() && !path.is_symlink() {
                stack.push(path.clone());
            }
            all.push(path);
        }
    }
    all.sort();
    all
}

fn chmod_tree(dir: &Path) {
    for path in walk(dir).into_iter().chain([dir.to_path_buf()]) {
        if path.is_dir() {
            fs::set_permissions(&path, fs::Permissions::from_mode(0o777)).unwrap();
        }
    }
}

fn single_file(dir: &Path) -> PathBuf {
    let files: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files.into_iter().next().unwrap()
}
