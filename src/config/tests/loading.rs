//! Finding and reading the files: drop-ins, what is read and how much.

use super::*;

#[test]
fn drop_ins_are_toml_files_that_are_not_hidden() {
    for name in ["10-ci.toml", "ci.toml", "a b.toml"] {
        assert!(is_drop_in(OsStr::new(name)), "{name}");
    }
    for name in [
        "10-ci.toml~",
        "10-ci.toml.dpkg-old",
        "10-ci.toml.dpkg-dist",
        "10-ci.toml.dpkg-new",
        ".10-ci.toml.swp",
        ".10-ci.toml",
        ".toml",
        "10-ci.conf",
        "README",
    ] {
        assert!(!is_drop_in(OsStr::new(name)), "{name}");
    }
}

#[test]
fn only_regular_files_are_read_and_nothing_waits() {
    let dir = tempfile::tempdir().unwrap();
    let err = |path: &Path| read_optional(path).unwrap_err().to_string();
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    assert_eq!(
        err(&fifo),
        format!(
            "{}: is a FIFO (named pipe), not a regular file",
            fifo.display()
        )
    );
    assert_eq!(
        err(dir.path()),
        format!(
            "{}: is a directory, not a regular file",
            dir.path().display()
        )
    );
    assert_eq!(
        err(Path::new("/dev/zero")),
        "/dev/zero: is a character device, not a regular file"
    );
    // The null device is the usual way to name an empty file.
    assert_eq!(
        read_optional(Path::new("/dev/null")),
        Ok(Some(String::new()))
    );
    assert_eq!(read_optional(&dir.path().join("absent")), Ok(None));
    let through_a_file = dir.path().join("fifo/x.toml");
    assert!(err(&through_a_file).contains("cannot read it"));
}

#[test]
fn a_file_is_read_up_to_a_mebibyte_and_no_further() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.toml");
    let cap = usize::try_from(MAX_CONFIG_BYTES).unwrap();
    std::fs::write(&path, "#".repeat(cap)).unwrap();
    assert_eq!(read_optional(&path).unwrap().unwrap().len(), cap);
    std::fs::write(&path, "#".repeat(cap + 1)).unwrap();
    assert_eq!(
        read_optional(&path).unwrap_err().to_string(),
        format!(
            "{}: is larger than 1 MiB (1048577 bytes), too large for a configuration file",
            path.display()
        )
    );
}
