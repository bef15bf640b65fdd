use super::*;

#[test]
fn only_eacces_shows_the_file_rules_act() {
    let file = Path::new(FILE);
    assert!(file_refused::<()>(file, Access::Write, Err(Errno::EACCES)).is_ok());
    let e = file_refused(file, Access::Read, Ok(())).unwrap_err();
    assert!(
        e.to_string()
            .contains("which the rules hide, for reading answered success"),
        "{e}"
    );
    for answer in [Ok(()), Err(Errno::ENOENT), Err(Errno::EPERM)] {
        let e = file_refused(file, Access::Write, answer).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("Landlock was enforced but does not act"),
            "{e}"
        );
        assert!(e.to_string().contains("/proc/self/comm"), "{e}");
        assert!(matches!(e, SandboxError::NotActing(_)), "{e}");
    }
}

#[test]
fn only_eperm_shows_the_scope_acts() {
    assert!(scope_refused(Err(Errno::EPERM)).is_ok());
    for answer in [Ok(()), Err(Errno::ECONNREFUSED), Err(Errno::EACCES)] {
        let e = scope_refused(answer).unwrap_err();
        assert!(e.to_string().contains("abstract Unix socket"), "{e}");
        assert!(matches!(e, SandboxError::NotActing(_)), "{e}");
    }
}

#[test]
fn without_landlock_in_force_both_probes_get_through() {
    // This test process is not restricted: the probes must see that.
    let check = Check {
        files: Some(spec(&[], &[], &[])),
        scope: Some(bound_socket().unwrap()),
    };
    let e = check.run().unwrap_err();
    assert!(e.to_string().contains("/proc/self/comm"), "{e}");
    let check = Check {
        files: None,
        scope: Some(bound_socket().unwrap()),
    };
    let e = check.run().unwrap_err();
    assert!(e.to_string().contains("abstract Unix socket"), "{e}");
}

fn spec(write: &[&Path], deny_write: &[&Path], deny_read: &[&Path]) -> Files {
    let owned = |paths: &[&Path]| paths.iter().map(|p| p.to_path_buf()).collect();
    Files {
        write: owned(write),
        deny_write: owned(deny_write),
        deny_read: owned(deny_read),
    }
}

use std::os::unix::fs::PermissionsExt;

#[test]
fn proc_self_comm_is_tried_unless_proc_is_writable_then_a_protected_file() {
    let dir = tempfile::tempdir().unwrap();
    let protected = dir.path().join("config.toml");
    std::fs::write(&protected, "").unwrap();
    let proc_ = Path::new("/proc");
    assert_eq!(
        target(&spec(&[], &[], &[])).unwrap(),
        (PathBuf::from(FILE), Access::Write)
    );
    // A directory, a missing path and a writable file: the file is taken.
    let candidates = [dir.path(), &dir.path().join("x"), &protected];
    let chosen = target(&spec(&[proc_], &candidates, &[]));
    assert_eq!(chosen.unwrap(), (protected.clone(), Access::Write));
    // Read-only by its mode (as root, mode bits do not stop writing): hidden files
    // are tried for reading.
    if !nix::unistd::geteuid().is_root() {
        std::fs::set_permissions(&protected, std::fs::Permissions::from_mode(0o444)).unwrap();
        assert!(target(&spec(&[proc_], &[&protected], &[])).is_err());
        let chosen = target(&spec(&[proc_], &[], &[&protected]));
        assert_eq!(chosen.unwrap(), (protected.clone(), Access::Read));
    }
    let e = target(&spec(&[proc_], &[dir.path()], &[])).unwrap_err();
    assert!(
        e.to_string()
            .contains("the writable root /proc holds /proc/self/comm"),
        "{e}"
    );
    assert!(
        e.to_string()
            .contains("mount a proc filesystem read-write at /proc"),
        "{e}"
    );
}

#[test]
fn outside_a_sandbox_unix_sockets_can_be_made() {
    // So the scope probe is skipped only where they cannot.
    assert!(any_unix_socket());
}

#[test]
fn a_writable_proc_leaves_nothing_to_check() {
    let own = Path::new("/proc/42/comm");
    let write = [PathBuf::from("/work"), PathBuf::from("/proc")];
    assert_eq!(writable_above(&write, own), Some(&write[1]));
    assert_eq!(writable_above(&write[..1], own), None);
    // A neighbour's name is no parent.
    assert_eq!(writable_above(&[PathBuf::from("/pro")], own), None);
}
