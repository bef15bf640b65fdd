use super::super::listing::Listing;
use super::aliases::{Mount, alias_candidates, mount_devices};
use super::canonical::{Resolved, canonical_dir};
use super::terminals::{has_controlling_terminal, pts_of_tty_nr};
use super::*;

fn env_with(home: &Path) -> impl Fn(&str) -> Option<OsString> + '_ {
    move |name| match name {
        "HOME" => Some(home.as_os_str().to_owned()),
        _ => None,
    }
}

/// A home outside /tmp: protection stops at temporary directories.
fn home_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("gate-home-")
        .tempdir_in("/var/tmp")
        .unwrap()
}

#[test]
fn defaults_hide_existing_secrets_and_protect_start_up_files() {
    let home = home_dir();
    std::fs::create_dir(home.path().join(".ssh")).unwrap();
    std::fs::write(home.path().join(".netrc"), "").unwrap();
    std::fs::write(home.path().join(".bashrc"), "").unwrap();
    let work = tempfile::tempdir().unwrap();
    let spec = build(
        &SandboxSettings::default(),
        work.path(),
        &env_with(home.path()),
        false,
        &[],
    )
    .unwrap();
    let home = home.path().canonicalize().unwrap();
    assert_eq!(spec.deny_read, vec![home.join(".ssh"), home.join(".netrc")]);
    // The system configuration file is protected too, when this machine has one.
    let deny_write: Vec<_> = spec
        .deny_write
        .iter()
        .filter(|p| **p != Path::new(crate::config::SYSTEM_CONFIG))
        .collect();
    assert_eq!(deny_write, vec![&home.join(".bashrc")]);
    assert_eq!(spec.write[0], work.path().canonicalize().unwrap());
    assert!(spec.write.contains(&PathBuf::from("/tmp")));
    assert_eq!(spec.network, Network::Off);
}

#[test]
fn protection_stops_at_temporary_directories() {
    let home = tempfile::tempdir().unwrap();
    let state = tempfile::Builder::new()
        .prefix("gate-state-")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::create_dir(state.path().join("gate")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let env = |name: &str| match name {
        "HOME" => Some(home.path().as_os_str().to_owned()),
        "XDG_STATE_HOME" => Some(state.path().as_os_str().to_owned()),
        _ => None,
    };
    let spec = build(&SandboxSettings::default(), work.path(), &env, false, &[]).unwrap();
    let gate_state = state.path().canonicalize().unwrap().join("gate");
    assert!(!spec.deny_write.contains(&gate_state));
    assert_eq!(spec.unprotected, vec![gate_state]);
}

#[test]
fn a_secret_hidden_in_tmp_is_refused_with_what_to_change() {
    let home = tempfile::Builder::new()
        .prefix("gate-home-")
        .tempdir_in("/tmp")
        .unwrap();
    let work = home_dir();
    // The spec is built either way; why it cannot be walked is kept for the sandbox,
    // which refuses with it unless the hidden paths are covered by mounts instead.
    let run = |settings: &SandboxSettings| {
        build(settings, work.path(), &env_with(home.path()), false, &[]).map(|s| s.unwalkable)
    };
    // Nothing hidden there yet: nothing to refuse.
    assert!(run(&SandboxSettings::default()).unwrap().is_none());
    std::fs::create_dir(home.path().join(".ssh")).unwrap();
    let err = run(&SandboxSettings::default()).unwrap().unwrap();
    let ssh = home.path().canonicalize().unwrap().join(".ssh");
    assert!(
        err.to_string()
            .contains(&format!("hides {}", ssh.display())),
        "{err}"
    );
    assert!(
        err.advice()
            .unwrap()
            .contains("Set HOME to a directory outside /tmp"),
        "{err}"
    );
    // Added by hand, outside HOME.
    let other = tempfile::Builder::new()
        .prefix("gate-secret-")
        .tempdir_in("/tmp")
        .unwrap();
    let settings = SandboxSettings {
        deny_read: vec![other.path().to_path_buf()],
        ..SandboxSettings::default()
    };
    let err = build(&settings, work.path(), &env_with(work.path()), false, &[])
        .unwrap()
        .unwalkable
        .unwrap();
    assert!(
        err.advice().unwrap().contains("Move it out of /tmp"),
        "{err}"
    );
}

#[test]
fn only_paths_strictly_inside_a_temporary_directory_count() {
    let temporary = [PathBuf::from("/tmp"), PathBuf::from("/dev/shm")];
    let found = |hidden: &[&str]| {
        let hidden: Vec<PathBuf> = hidden.iter().map(PathBuf::from).collect();
        hidden_in_temporary(&hidden, &temporary).map(|(h, t)| (h.to_path_buf(), t.to_path_buf()))
    };
    assert_eq!(found(&["/var/tmp/h/.ssh", "/tmp", "/tmpx/a"]), None);
    assert_eq!(
        found(&["/home/u/.ssh", "/dev/shm/k"]),
        Some((PathBuf::from("/dev/shm/k"), PathBuf::from("/dev/shm")))
    );
}

#[test]
fn tmpdir_gets_no_exemption_from_protection() {
    let home = home_dir();
    std::fs::write(home.path().join(".bashrc"), "").unwrap();
    let work = tempfile::tempdir().unwrap();
    let env = |name: &str| match name {
        "HOME" | "TMPDIR" => Some(home.path().as_os_str().to_owned()),
        _ => None,
    };
    let spec = build(&SandboxSettings::default(), work.path(), &env, false, &[]).unwrap();
    let home = home.path().canonicalize().unwrap();
    assert!(spec.write.contains(&home));
    assert!(spec.deny_write.contains(&home.join(".bashrc")));
}

#[test]
fn paths_that_do_not_exist_yet_are_protected_in_a_writable_root() {
    let home = home_dir();
    std::fs::create_dir(home.path().join(".cargo")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let env = |name: &str| match name {
        "HOME" | "TMPDIR" => Some(home.path().as_os_str().to_owned()),
        _ => None,
    };
    let spec = build(&SandboxSettings::default(), work.path(), &env, false, &[]).unwrap();
    let home = home.path().canonicalize().unwrap();
    for missing in [
        ".config/gate",
        ".local/state/gate",
        ".zshrc",
        ".ssh",
        ".cargo/credentials.toml",
    ] {
        assert!(
            spec.deny_write.contains(&home.join(missing)),
            "{missing}: {spec:?}"
        );
    }
    assert!(spec.deny_read.is_empty(), "{spec:?}");
    assert!(spec.unprotected.is_empty(), "{spec:?}");
    // Outside every writable root, a path that does not exist costs nothing.
    let spec = build(
        &SandboxSettings::default(),
        work.path(),
        &env_with(&home),
        false,
        &[],
    )
    .unwrap();
    assert!(
        !spec.deny_write.iter().any(|p| p.starts_with(&home)),
        "{spec:?}"
    );
}

#[test]
fn paths_are_made_canonical_through_their_directories() {
    let dir = home_dir();
    let base = dir.path().canonicalize().unwrap();
    std::fs::create_dir(base.join("real")).unwrap();
    std::fs::write(base.join("real/a"), "").unwrap();
    std::fs::write(base.join("real/b"), "").unwrap();
    std::os::unix::fs::symlink(base.join("real"), base.join("link")).unwrap();
    std::os::unix::fs::symlink(base.join("real/a"), base.join("to-a")).unwrap();
    let given = [
        dir.path().join("link/a"),
        dir.path().join("link/b"),
        dir.path().join("link/../real/a"),
        dir.path().join("to-a"),
        dir.path().join("link/../link"),
        dir.path().join("link/missing"),
    ];
    let mut parents = Resolved::new();
    let (found, missing, kinds) = canonical_split(&given, &mut parents);
    assert_eq!(
        found,
        vec![base.join("real/a"), base.join("real/b"), base.join("real")]
    );
    assert_eq!(missing, vec![dir.path().join("link/missing")]);
    // What each is, where no link was in the last component (`real` came through
    // one, so it is looked at again when covered).
    assert_eq!(
        kinds,
        vec![(base.join("real/a"), false), (base.join("real/b"), false)]
    );
}

#[test]
fn a_listing_of_home_answers_as_the_look_ups_would() {
    let dir = home_dir();
    let home = dir.path();
    std::fs::create_dir_all(home.join(".config/gh")).unwrap();
    std::fs::create_dir(home.join(".ssh")).unwrap();
    std::fs::create_dir(home.join("dotfiles")).unwrap();
    std::fs::write(home.join("dotfiles/bashrc"), "").unwrap();
    std::fs::write(home.join(".netrc"), "").unwrap();
    std::os::unix::fs::symlink("dotfiles/bashrc", home.join(".bashrc")).unwrap();
    std::os::unix::fs::symlink("dotfiles", home.join(".cargo")).unwrap();
    std::os::unix::fs::symlink("nowhere", home.join(".zshrc")).unwrap();
    let mut wanted: Vec<PathBuf> = DEFAULT_DENY_READ
        .iter()
        .chain(DEFAULT_DENY_WRITE.iter())
        .map(|p| home.join(p))
        .collect();
    wanted.extend(
        [
            ".cargo/bashrc",
            ".local/state/gate",
            "dotfiles/missing",
            ".ssh/x/y",
        ]
        .iter()
        .map(|p| home.join(p)),
    );
    let mut plain = Resolved::new();
    let mut listed = Resolved::new();
    listed.listings.extend(Listing::of(home));
    assert_eq!(listed.listings.len(), 1);
    let without = canonical_split(&wanted, &mut plain);
    let with = canonical_split(&wanted, &mut listed);
    assert_eq!(with, without);
    assert!(
        without
            .0
            .contains(&home.canonicalize().unwrap().join(".ssh"))
    );
    for path in &without.1 {
        assert_eq!(
            not_yet(path, &mut listed),
            not_yet(path, &mut plain),
            "{}",
            path.display()
        );
    }
}

#[test]
fn directories_are_made_canonical_through_their_parents() {
    let dir = home_dir();
    let base = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(base.join("real/sub")).unwrap();
    std::os::unix::fs::symlink(base.join("real"), base.join("link")).unwrap();
    std::os::unix::fs::symlink("real/sub", base.join("rel")).unwrap();
    let mut memo = Resolved::new();
    for (given, want) in [
        (dir.path().join("link/sub"), Some(base.join("real/sub"))),
        (dir.path().join("rel"), Some(base.join("real/sub"))),
        (dir.path().join("link/sub/.."), Some(base.join("real"))),
        (
            dir.path().join("real/../link/sub"),
            Some(base.join("real/sub")),
        ),
        (dir.path().join("link/missing"), None),
        (PathBuf::from("/"), Some(PathBuf::from("/"))),
    ] {
        assert_eq!(
            canonical_dir(&given, &mut memo),
            want,
            "{}",
            given.display()
        );
        // Remembered: the same answer again.
        assert_eq!(
            canonical_dir(&given, &mut memo),
            want,
            "{}",
            given.display()
        );
    }
}

#[test]
fn where_a_missing_path_would_be_made() {
    let dir = home_dir();
    let base = dir.path().canonicalize().unwrap();
    let mut memo = Resolved::new();
    assert_eq!(
        not_yet(&dir.path().join("a/b/c"), &mut memo),
        Some(base.join("a/b/c"))
    );
    assert_eq!(not_yet(&dir.path().join("a/../c"), &mut memo), None);
    assert_eq!(not_yet(Path::new("/"), &mut memo), None);
    let linked = home_dir();
    let link = linked.path().join("link");
    std::os::unix::fs::symlink(dir.path(), &link).unwrap();
    assert_eq!(not_yet(&link.join("x"), &mut memo), Some(base.join("x")));
}

#[test]
fn the_kernels_mount_list_names_the_devices_mountinfo_shows() {
    // Linux 6.8 and later (CI: 6.18): listmount and statmount answer, and agree
    // with the mount table, so that a filesystem mounted twice is never missed.
    let mut devices = mount_devices().expect("listmount and statmount answer");
    let text = read_proc("/proc/self/mountinfo").unwrap();
    let mut shown: Vec<(u32, u32)> = parse_mountinfo(&text)
        .iter()
        .map(|m| {
            let (major, minor) = m.device.split_once(':').unwrap();
            (major.parse().unwrap(), minor.parse().unwrap())
        })
        .collect();
    devices.sort_unstable();
    shown.sort_unstable();
    assert_eq!(devices, shown);
    let mut unique = shown.clone();
    unique.dedup();
    assert_eq!(each_filesystem_mounted_once(), unique.len() == shown.len());
}

#[test]
fn mountinfo_is_read_with_its_escapes() {
    let text = "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n\
                    40 22 8:1 /home/a\\040b /mnt/x\\134y rw,relatime shared:1 - ext4 /dev/sda1 rw\n";
    assert_eq!(
        parse_mountinfo(text),
        vec![
            Mount {
                device: "8:1".into(),
                root: "/".into(),
                point: "/".into()
            },
            Mount {
                device: "8:1".into(),
                root: "/home/a b".into(),
                point: "/mnt/x\\y".into()
            },
        ]
    );
}

#[test]
fn a_second_mount_of_a_tree_gives_its_files_other_names() {
    let mount = |device: &str, root: &str, point: &str| Mount {
        device: device.into(),
        root: root.into(),
        point: point.into(),
    };
    let mounts = [
        mount("8:1", "/", "/"),
        mount("8:2", "/", "/home"),
        // /home/u bind-mounted at /srv/u, and all of /home at /data.
        mount("8:2", "/u", "/srv/u"),
        mount("8:2", "/", "/data"),
        // Another filesystem, and a mount of another part of this one.
        mount("8:3", "/u", "/other"),
        mount("8:2", "/v", "/srv/v"),
    ];
    let mut found = alias_candidates(&mounts, Path::new("/home/u/.ssh"));
    found.sort();
    assert_eq!(
        found,
        [PathBuf::from("/data/u/.ssh"), PathBuf::from("/srv/u/.ssh")]
    );
    // From an alias back to the first name.
    let mut found = alias_candidates(&mounts, Path::new("/srv/u/.ssh"));
    found.sort();
    assert_eq!(
        found,
        [PathBuf::from("/data/u/.ssh"), PathBuf::from("/home/u/.ssh")]
    );
    assert_eq!(
        alias_candidates(&mounts, Path::new("/srv/u")),
        [PathBuf::from("/home/u"), PathBuf::from("/data/u")]
    );
    assert!(alias_candidates(&mounts, Path::new("/etc/shadow")).is_empty());
}

#[test]
fn nothing_makes_the_root_directory_writable() {
    let home = home_dir();
    let work = tempfile::tempdir().unwrap();
    let env = |name: &str| match name {
        "HOME" => Some(home.path().as_os_str().to_owned()),
        "TMPDIR" => Some("/".into()),
        _ => None,
    };
    let err = build(&SandboxSettings::default(), work.path(), &env, false, &[]).unwrap_err();
    assert!(err.to_string().contains("is /"), "{err}");
    let settings = SandboxSettings {
        write: vec![PathBuf::from("/")],
        ..SandboxSettings::default()
    };
    assert!(build(&settings, work.path(), &env_with(home.path()), false, &[]).is_err());
}

#[test]
fn files_gate_read_are_protected_wherever_they_are() {
    let home = home_dir();
    let work = tempfile::Builder::new()
        .prefix("gate-work-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let config = work.path().join("gate.toml");
    std::fs::write(&config, "").unwrap();
    let spec = build(
        &SandboxSettings::default(),
        work.path(),
        &env_with(home.path()),
        false,
        std::slice::from_ref(&config),
    )
    .unwrap();
    assert!(spec.deny_write.contains(&config.canonicalize().unwrap()));
}

#[test]
fn root_also_hides_the_password_hashes() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let spec = build(
        &SandboxSettings::default(),
        work.path(),
        &env_with(home.path()),
        true,
        &[],
    )
    .unwrap();
    assert!(spec.deny_read.contains(&PathBuf::from("/etc/shadow")));
}

#[test]
#[ignore = "root tier: cargo test --lib --test all -- --ignored, as root"]
fn root_hides_what_only_root_may_read_in_a_scanned_directory() {
    use std::os::unix::fs::PermissionsExt;
    assert!(
        nix::unistd::geteuid().is_root(),
        "this test makes files that uid 0 owns: run it as root (CI does)"
    );
    let dir = tempfile::tempdir().unwrap();
    let make = |name: &str, mode: u32| {
        let path = dir.path().join(name);
        std::fs::write(&path, "").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        path
    };
    let key = make("ssh_host_ed25519_key", 0o600);
    let group = make("chap-secrets", 0o640);
    make("ssh_host_ed25519_key.pub", 0o644);
    make("moduli", 0o444);
    let theirs = make("someone-elses", 0o600);
    std::os::unix::fs::chown(&theirs, Some(65534), None).unwrap();
    std::os::unix::fs::symlink(&key, dir.path().join("link")).unwrap();
    let mut found = root_only_entries(dir.path());
    found.sort();
    assert_eq!(found, vec![group, key]);
    assert!(root_only_entries(&dir.path().join("missing")).is_empty());
}

#[test]
fn the_root_directory_is_never_the_workspace() {
    let home = tempfile::tempdir().unwrap();
    let err = build(
        &SandboxSettings::default(),
        Path::new("/"),
        &env_with(home.path()),
        false,
        &[],
    )
    .unwrap_err();
    assert!(err.to_string().contains("it is /"), "{err}");
    assert_eq!(
        crate::explain::sandbox_not_run(&err),
        "the safe level makes the working directory writable, and it is /; nothing was run. \
         Run the command from a project directory"
    );
}

#[test]
fn a_workspace_inside_a_secret_is_refused() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".ssh/sub")).unwrap();
    let err = build(
        &SandboxSettings::default(),
        &home.path().join(".ssh/sub"),
        &env_with(home.path()),
        false,
        &[],
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("which the safe level hides"),
        "{err}"
    );
}

#[test]
fn without_home_nothing_runs() {
    let work = tempfile::tempdir().unwrap();
    let err = build(
        &SandboxSettings::default(),
        work.path(),
        &|_| None,
        false,
        &[],
    )
    .unwrap_err();
    assert!(err.to_string().starts_with("HOME is not set"), "{err}");
    assert_eq!(
        crate::explain::sandbox_not_run(&err),
        "HOME is not set (or not absolute), so the safe level cannot find the secrets it \
         hides (~/.ssh, ~/.aws, ...); nothing was run. Set HOME"
    );
}

#[test]
fn ports_make_a_tcp_network_and_network_makes_it_open() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let settings = SandboxSettings {
        net_connect: vec![443],
        ..SandboxSettings::default()
    };
    let spec = build(&settings, work.path(), &env_with(home.path()), false, &[]).unwrap();
    assert_eq!(
        spec.network,
        Network::Tcp {
            connect: vec![443],
            bind: vec![]
        }
    );
    let settings = SandboxSettings {
        network: true,
        ..SandboxSettings::default()
    };
    let spec = build(&settings, work.path(), &env_with(home.path()), false, &[]).unwrap();
    assert_eq!(spec.network, Network::On);
}

#[test]
fn without_a_controlling_terminal_dev_tty_says_so() {
    // A child in a session of its own has no controlling terminal.
    // SAFETY: the child only calls setsid, open, close and _exit, which allocate
    // nothing, then exits; the parent only waits for it.
    match unsafe { nix::unistd::fork() }.unwrap() {
        nix::unistd::ForkResult::Child => {
            let code = match nix::unistd::setsid() {
                Ok(_) if !has_controlling_terminal() => 0,
                _ => 1,
            };
            // SAFETY: _exit ends the child at once, running nothing of the parent's.
            unsafe { libc::_exit(code) }
        }
        nix::unistd::ForkResult::Parent { child } => {
            let status = nix::sys::wait::waitpid(child, None).unwrap();
            assert_eq!(status, nix::sys::wait::WaitStatus::Exited(child, 0));
        }
    }
}

#[test]
fn the_controlling_terminal_is_read_from_tty_nr() {
    // pts/3: major 136, minor 3, tty_nr 34819.
    let stat = "42 (sh (x) y) S 1 42 42 34819 42 4194560 0";
    assert_eq!(
        pts_of_tty_nr(stat),
        Some((PathBuf::from("/dev/pts/3"), libc::makedev(136, 3)))
    );
    // pts/300: major 137, minor 44.
    let tty_nr = (137 << 8) | 44;
    let stat = format!("1 (gate) S 0 1 1 {tty_nr} 1");
    assert_eq!(
        pts_of_tty_nr(&stat),
        Some((PathBuf::from("/dev/pts/300"), libc::makedev(137, 44)))
    );
    // No controlling terminal, or a console.
    assert_eq!(pts_of_tty_nr("1 (init) S 0 1 1 0 -1"), None);
    assert_eq!(pts_of_tty_nr("1 (getty) S 0 1 1 1025 1"), None);
    assert_eq!(pts_of_tty_nr("garbage"), None);
}

#[test]
fn relative_extra_paths_are_taken_from_the_working_directory() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir(work.path().join("out")).unwrap();
    let settings = SandboxSettings {
        write: vec![PathBuf::from("out"), PathBuf::from("missing")],
        ..SandboxSettings::default()
    };
    let spec = build(&settings, work.path(), &env_with(home.path()), false, &[]).unwrap();
    assert!(
        spec.write
            .contains(&work.path().canonicalize().unwrap().join("out"))
    );
    assert!(!spec.write.iter().any(|p| p.ends_with("missing")));
}
