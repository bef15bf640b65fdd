//! What a notified exec asks the kernel to run, read from the caller: the path and
//! argv from its memory (`process_vm_readv`, through [`super::super::notify`]), and
//! from the file system the file the path names, its identity and its `#!` line. It
//! judges nothing; [`super::Execs`] does.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use nix::errno::Errno;

use super::super::notify::{read_into, read_two};

use super::{Call, MAX_ARGV_BYTES, MAX_PATH, SHEBANG_BYTES};

/// The path and argv pointer of a notified `execve` or `execveat`, and the file it names.
pub(super) fn read_call(req: &libc::seccomp_notif) -> Result<Call, Errno> {
    let nr = i64::from(req.data.nr);
    let args = req.data.args;
    let (dirfd, path_at, argv_at, flags) = if nr == libc::SYS_execveat {
        (args[0] as i32, args[1], args[2], args[4] as i32)
    } else {
        (libc::AT_FDCWD, args[0], args[1], 0)
    };
    let pid = req.pid;
    let (path, argv0_at) = read_path_and_argv0(pid, path_at, argv_at).map_err(|e| match e {
        ReadError::Memory(e) => e,
        ReadError::TooLong => Errno::ENAMETOOLONG,
    })?;
    let file = if path.is_empty() && flags & libc::AT_EMPTY_PATH != 0 {
        PathBuf::from(format!("/proc/{pid}/fd/{dirfd}"))
    } else {
        file_of(pid, dirfd, &path)
    };
    // `fexecve` and friends: the path the descriptor was opened by.
    let path = if path.is_empty() {
        std::fs::read_link(&file)
            .map(|p| p.into_os_string().into_vec())
            .unwrap_or_default()
    } else {
        path
    };
    Ok(Call {
        pid,
        path,
        file,
        argv_at,
        argv0_at,
    })
}

/// The path at `path_at` and, when it came with it, `argv[0]`'s pointer (`Some(0)`: argv
/// is empty), from one read of both where it can be: the path's page and argv's first
/// pointer. Where the first read falls short, the path is read on, and `argv[0]` later.
pub(super) fn read_path_and_argv0(
    pid: u32,
    path_at: u64,
    argv_at: u64,
) -> Result<(Vec<u8>, Option<u64>), ReadError> {
    const PAGE: u64 = 4096;
    let room = (PAGE - path_at % PAGE) as usize;
    let mut chunk = [0u8; PAGE as usize];
    let mut first = [0u8; 8];
    let with_argv = argv_at != 0 && argv_at % 8 == 0;
    let n = if with_argv {
        read_two(pid, path_at, &mut chunk[..room], argv_at, &mut first)
            .map_err(ReadError::Memory)?
    } else {
        read_into(pid, path_at, &mut chunk[..room]).map_err(ReadError::Memory)?
    };
    let got = n.min(room);
    let argv0_at = (with_argv && n == room + 8).then(|| u64::from_ne_bytes(first));
    if got == 0 {
        return Err(ReadError::Memory(Errno::EFAULT));
    }
    if let Some(end) = chunk[..got].iter().position(|&b| b == 0) {
        if end > MAX_PATH {
            return Err(ReadError::TooLong);
        }
        return Ok((chunk[..end].to_vec(), argv0_at));
    }
    let mut path = chunk[..got].to_vec();
    if path.len() > MAX_PATH {
        return Err(ReadError::TooLong);
    }
    path.extend(read_string(
        pid,
        path_at + got as u64,
        MAX_PATH - path.len(),
    )?);
    Ok((path, argv0_at))
}

/// Where the file at `path` (relative to `dirfd`, or the working directory) is, as the
/// process `pid` sees it.
pub(super) fn file_of(pid: u32, dirfd: i32, path: &[u8]) -> PathBuf {
    if path.first() == Some(&b'/') {
        return in_root(pid, path);
    }
    let mut p = if dirfd == libc::AT_FDCWD {
        PathBuf::from(format!("/proc/{pid}/cwd"))
    } else {
        PathBuf::from(format!("/proc/{pid}/fd/{dirfd}"))
    };
    p.push(std::ffi::OsStr::from_bytes(path));
    p
}

/// Whether there is no file at `file` (nor a directory on the way): what the kernel
/// would answer ENOENT or ENOTDIR for.
pub(super) fn missing(file: &std::path::Path) -> bool {
    matches!(
        std::fs::metadata(file).map_err(|e| e.raw_os_error()),
        Err(Some(libc::ENOENT | libc::ENOTDIR))
    )
}

/// An absolute path as the process `pid` sees it.
pub(super) fn in_root(pid: u32, path: &[u8]) -> PathBuf {
    let mut p = format!("/proc/{pid}/root").into_bytes();
    if path.first() != Some(&b'/') {
        p.push(b'/');
    }
    p.extend_from_slice(path);
    PathBuf::from(OsString::from_vec(p))
}

/// What the kernel will find at the start of a file it runs.
pub(super) enum Head {
    /// A `#!` line: the interpreter and its one argument.
    Script(Vec<u8>, Option<Vec<u8>>),
    /// Anything else, or no file the kernel could run (it fails the exec itself).
    Other,
    /// An executable regular file the supervisor may not read.
    Unreadable,
    /// No file (ENOENT, ENOTDIR): the kernel fails the exec itself.
    Missing,
}

/// The identity (device, inode) of the file at `file` and its first line, from one
/// open: non-blocking and without taking a terminal (a FIFO or a device at the path
/// must not stop or affect the supervisor), and read only when it is a regular file,
/// the only kind the kernel runs. The kernel reads the `#!` line: blanks after `#!`
/// skipped, the interpreter up to a blank, the rest of the line, trimmed, as one
/// argument.
pub(super) fn look(file: &std::path::Path) -> (Option<(u64, u64)>, Head) {
    use std::io::Read;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(file);
    let mut f = match opened {
        Ok(f) => f,
        Err(e) if matches!(e.raw_os_error(), Some(libc::EACCES | libc::EPERM)) => {
            // Executable without read permission: the kernel still reads the first
            // line (and starts a `#!` interpreter), the supervisor cannot.
            return match std::fs::metadata(file) {
                Ok(m) if m.is_file() && m.permissions().mode() & 0o111 != 0 => {
                    (Some((m.dev(), m.ino())), Head::Unreadable)
                }
                Ok(m) => (Some((m.dev(), m.ino())), Head::Other),
                Err(_) => (None, Head::Other),
            };
        }
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)) => {
            return (None, Head::Missing);
        }
        Err(_) => return (None, Head::Other),
    };
    let Ok(meta) = f.metadata() else {
        return (None, Head::Unreadable);
    };
    let id = Some((meta.dev(), meta.ino()));
    if !meta.is_file() {
        return (id, Head::Other);
    }
    let mut head = [0u8; SHEBANG_BYTES];
    let Ok(n) = f.read(&mut head) else {
        return (id, Head::Unreadable);
    };
    match parse_shebang(&head[..n]) {
        Some((interpreter, argument)) => (id, Head::Script(interpreter, argument)),
        None => (id, Head::Other),
    }
}

pub(super) fn parse_shebang(head: &[u8]) -> Option<(Vec<u8>, Option<Vec<u8>>)> {
    let line = head.strip_prefix(b"#!")?;
    let line = match line.iter().position(|&b| b == b'\n') {
        Some(end) => &line[..end],
        None => line,
    };
    let blank = |b: &u8| *b == b' ' || *b == b'\t';
    let start = line.iter().position(|b| !blank(b))?;
    let line = &line[start..];
    let end = line.iter().position(blank).unwrap_or(line.len());
    let interpreter = line[..end].to_vec();
    let rest = &line[end..];
    let argument = match rest.iter().position(|b| !blank(b)) {
        Some(from) => {
            let to = rest.iter().rposition(|b| !blank(b)).expect("found one");
            Some(rest[from..=to].to_vec())
        }
        None => None,
    };
    if interpreter.is_empty() {
        return None;
    }
    Some((interpreter, argument))
}

pub(super) enum ReadError {
    Memory(Errno),
    TooLong,
}

/// A NUL-terminated string at `at` in `pid`, read a page at a time (a read never crosses
/// into a page that may not be mapped), at most `max` bytes before the NUL.
pub(super) fn read_string(pid: u32, at: u64, max: usize) -> Result<Vec<u8>, ReadError> {
    const PAGE: u64 = 4096;
    let mut out = Vec::new();
    let mut addr = at;
    loop {
        let room = (PAGE - addr % PAGE) as usize;
        let mut chunk = [0u8; PAGE as usize];
        let n = read_into(pid, addr, &mut chunk[..room]).map_err(ReadError::Memory)?;
        if n == 0 {
            return Err(ReadError::Memory(Errno::EFAULT));
        }
        if let Some(end) = chunk[..n].iter().position(|&b| b == 0) {
            out.extend_from_slice(&chunk[..end]);
            if out.len() > max {
                return Err(ReadError::TooLong);
            }
            return Ok(out);
        }
        out.extend_from_slice(&chunk[..n]);
        if out.len() > max {
            return Err(ReadError::TooLong);
        }
        addr += n as u64;
    }
}

/// Up to `count` argv strings at `at` (a NULL-terminated array of pointers), and whether
/// that is all of them; past [`MAX_ARGV_BYTES`] the answer is `false`. A NULL array is
/// an empty argv.
pub(super) fn read_argv(pid: u32, at: u64, count: usize) -> Result<(Vec<Vec<u8>>, bool), Errno> {
    let mut out = Vec::new();
    if at == 0 {
        return Ok((out, true));
    }
    let mut used = 0usize;
    let mut slot = at;
    let mut pointers = Vec::new();
    'pointers: loop {
        // A page's worth of pointers at a time, never across a page.
        let room = (4096 - slot % 4096) as usize;
        let mut buf = vec![0u8; room.min(512)];
        let n = read_into(pid, slot, &mut buf)?;
        if n < 8 {
            return Err(Errno::EFAULT);
        }
        for p in buf[..n - n % 8].chunks_exact(8) {
            let ptr = u64::from_ne_bytes(p.try_into().expect("8 bytes"));
            if ptr == 0 {
                break 'pointers;
            }
            pointers.push(ptr);
            used += 8;
            if pointers.len() >= count {
                break 'pointers;
            }
            if used > MAX_ARGV_BYTES {
                return Ok((out, false));
            }
        }
        slot += (n - n % 8) as u64;
    }
    let complete_list = pointers.len() < count || count == usize::MAX;
    for ptr in pointers {
        let room = MAX_ARGV_BYTES.saturating_sub(used);
        match read_string(pid, ptr, room) {
            Ok(s) => {
                used += s.len() + 1;
                out.push(s);
            }
            Err(ReadError::TooLong) => return Ok((out, false)),
            Err(ReadError::Memory(e)) => return Err(e),
        }
    }
    Ok((out, complete_list))
}
