//! The initramfs: a `newc` cpio archive (the format the kernel unpacks into its first
//! root file system), written here so that every entry's owner and mode is what the
//! boot needs, whoever runs the tests, and no `cpio` program is needed.

/// One entry of the archive. Owners are root's unless a path says otherwise.
pub enum Entry {
    Dir {
        path: String,
        mode: u32,
    },
    File {
        path: String,
        mode: u32,
        data: Vec<u8>,
    },
    CharDevice {
        path: String,
        mode: u32,
        major: u32,
        minor: u32,
    },
}

/// The archive of `entries`, in order (a directory before what it holds), with the
/// trailer the format ends with.
pub fn archive(entries: &[Entry]) -> Vec<u8> {
    let mut out = Vec::new();
    for (ino, entry) in (1u32..).zip(entries) {
        let (path, mode, data, rdev): (&str, u32, &[u8], (u32, u32)) = match entry {
            Entry::Dir { path, mode } => (path, 0o040000 | mode, &[], (0, 0)),
            Entry::File { path, mode, data } => (path, 0o100000 | mode, data, (0, 0)),
            Entry::CharDevice {
                path,
                mode,
                major,
                minor,
            } => (path, 0o020000 | mode, &[], (*major, *minor)),
        };
        let nlink = if mode & 0o040000 != 0 { 2 } else { 1 };
        push_entry(&mut out, ino, path, mode, nlink, data, rdev);
    }
    push_entry(&mut out, 0, "TRAILER!!!", 0, 1, &[], (0, 0));
    out
}

fn push_entry(
    out: &mut Vec<u8>,
    ino: u32,
    path: &str,
    mode: u32,
    nlink: u32,
    data: &[u8],
    rdev: (u32, u32),
) {
    assert!(!path.starts_with('/'), "cpio paths are relative: {path}");
    let size = u32::try_from(data.len()).expect("an initramfs file under 4 GiB");
    let name_size = u32::try_from(path.len() + 1).expect("a short path");
    // magic, then 13 fields of 8 hex digits: ino, mode, uid, gid, nlink, mtime,
    // filesize, devmajor, devminor, rdevmajor, rdevminor, namesize, check.
    out.extend_from_slice(b"070701");
    for field in [
        ino, mode, 0, 0, nlink, 0, size, 0, 0, rdev.0, rdev.1, name_size, 0,
    ] {
        out.extend_from_slice(format!("{field:08x}").as_bytes());
    }
    out.extend_from_slice(path.as_bytes());
    out.push(0);
    pad4(out);
    out.extend_from_slice(data);
    pad4(out);
}

fn pad4(out: &mut Vec<u8>) {
    while out.len() % 4 != 0 {
        out.push(0);
    }
}
