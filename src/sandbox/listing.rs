//! Directories read with `getdents64` directly: for the walk around hidden paths
//! ([`super::landlock`]) and, in the spec, to answer many look-ups in one directory
//! (`HOME` holds some thirty of the names gate hides or protects, most of them missing)
//! with one listing instead of a `statx` each.

use std::ffi::CStr;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use nix::fcntl::OFlag;
use nix::sys::stat::Mode;

/// Call `each` with the name and type (`DT_*`) of every entry of the directory `dir`
/// (open for reading, at its start). `each` returns false to stop early.
pub(crate) fn for_each_entry(
    dir: BorrowedFd<'_>,
    mut each: impl FnMut(&CStr, u8) -> bool,
) -> Result<(), nix::errno::Errno> {
    // struct linux_dirent64: d_ino (8 bytes), d_off (8), d_reclen (2), d_type (1), then
    // the name, NUL-terminated.
    const NAME_AT: usize = 19;
    let mut buf = vec![0u8; 32 * 1024];
    loop {
        // SAFETY: `buf` is writable for the length passed and outlives the call; the
        // kernel writes whole records into it and returns how many bytes it wrote.
        let n = unsafe {
            libc::syscall(
                libc::SYS_getdents64,
                dir.as_raw_fd(),
                buf.as_mut_ptr(),
                buf.len(),
            )
        };
        let n = usize::try_from(n).map_err(|_| nix::errno::Errno::last())?;
        if n == 0 {
            return Ok(());
        }
        let mut at = 0;
        while at + NAME_AT < n {
            let reclen = usize::from(u16::from_ne_bytes([buf[at + 16], buf[at + 17]]));
            let record = buf
                .get(at..at + reclen)
                .filter(|r| r.len() > NAME_AT)
                .ok_or(nix::errno::Errno::EIO)?;
            let name = CStr::from_bytes_until_nul(&record[NAME_AT..])
                .map_err(|_| nix::errno::Errno::EIO)?;
            if !each(name, record[18]) {
                return Ok(());
            }
            at += reclen;
        }
    }
}

/// The names in one directory and their types, as listed once.
#[derive(Debug)]
pub(crate) struct Listing {
    /// The directory as it was named (not made canonical): paths are matched against it
    /// as they were built, by their bytes.
    dir: PathBuf,
    /// Sorted by name.
    entries: Vec<(Box<[u8]>, u8)>,
}

/// What a listing says of a path below its directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Listed {
    /// Its first name below the directory is not there: the path does not exist.
    Missing,
    /// It is an entry of the directory, of this type, and no symbolic link: true for a
    /// directory.
    Entry { is_dir: bool },
}

impl Listing {
    /// Past this many entries one look-up per wanted name costs less than the listing
    /// (a listing of /etc's 144 entries cost what 50 `statx` do).
    const MAX_ENTRIES: usize = 256;

    /// `dir` listed, or `None` when it cannot be (or holds too many entries to be worth
    /// it): the caller then looks each path up.
    pub(crate) fn of(dir: &Path) -> Option<Listing> {
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        let fd = nix::fcntl::open(dir, flags, Mode::empty()).ok()?;
        let mut entries: Vec<(Box<[u8]>, u8)> = Vec::new();
        let mut too_many = false;
        for_each_entry(std::os::fd::AsFd::as_fd(&fd), |name, kind| {
            if entries.len() == Self::MAX_ENTRIES {
                too_many = true;
                return false;
            }
            entries.push((Box::from(name.to_bytes()), kind));
            true
        })
        .ok()?;
        if too_many {
            return None;
        }
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        Some(Listing {
            dir: dir.to_path_buf(),
            entries,
        })
    }

    /// What the listing says of `path`, when `path` is below its directory, named the
    /// way the directory was; `None` when it cannot say (not below, a `.` or `..` as its
    /// first name, a deeper path whose first name exists, a symbolic link, an unknown
    /// type): then `path` must be looked up.
    pub(crate) fn lookup(&self, path: &Path) -> Option<Listed> {
        let dir = self.dir.as_os_str().as_bytes();
        let rest = path.as_os_str().as_bytes().strip_prefix(dir)?;
        let rest = if dir.last() == Some(&b'/') {
            rest
        } else {
            rest.strip_prefix(b"/")?
        };
        let (first, deeper) = match rest.iter().position(|&b| b == b'/') {
            Some(at) => (&rest[..at], !rest[at..].iter().all(|&b| b == b'/')),
            None => (rest, false),
        };
        if first.is_empty() || first == b"." || first == b".." {
            return None;
        }
        let kind = match self
            .entries
            .binary_search_by(|(name, _)| (**name).cmp(first))
        {
            Err(_) => return Some(Listed::Missing),
            Ok(at) => self.entries[at].1,
        };
        match kind {
            _ if deeper => None,
            libc::DT_LNK | libc::DT_UNKNOWN => None,
            kind => Some(Listed::Entry {
                is_dir: kind == libc::DT_DIR,
            }),
        }
    }
}

#[cfg(test)]
mod tests;
