//! The terminals gate was handed (its standard descriptors and its controlling
//! terminal), the only ones a command at `safe` may use. Reads /proc; grants nothing.

use std::path::PathBuf;

use nix::fcntl::OFlag;
use nix::sys::stat::Mode;

use super::{existing, read_proc};

/// The terminals gate was handed: those on its standard descriptors and its controlling
/// terminal, by name. Other terminals of the same user (other sessions' /dev/pts/N) are
/// not granted: a command could read what is typed there and write a fake prompt.
pub(super) fn handed_terminals() -> Vec<PathBuf> {
    use std::io::IsTerminal;
    let handed = [
        std::io::stdin().is_terminal(),
        std::io::stdout().is_terminal(),
        std::io::stderr().is_terminal(),
    ];
    let mut found: Vec<PathBuf> = (0..=2)
        .filter(|&fd| handed[fd])
        .filter_map(|fd| std::fs::read_link(format!("/proc/self/fd/{fd}")).ok())
        .collect();
    let controlling = has_controlling_terminal()
        .then(|| read_proc("/proc/self/stat"))
        .flatten()
        .and_then(|stat| pts_of_tty_nr(&stat));
    if let Some((path, rdev)) = controlling {
        // Only when the name is that device here (another devpts instance numbers its
        // own terminals).
        if std::fs::metadata(&path).is_ok_and(|m| {
            std::os::unix::fs::MetadataExt::rdev(&m) == rdev
                && std::os::unix::fs::FileTypeExt::is_char_device(&m.file_type())
        }) {
            found.push(path);
        }
    }
    let mut out = Vec::new();
    for path in found.into_iter().filter(|p| p.starts_with("/dev")) {
        if let Some(path) = existing(&path).filter(|p| !out.contains(p)) {
            out.push(path);
        }
    }
    out
}

/// Whether this process may have a controlling terminal. Opening `/dev/tty` fails with
/// `ENXIO` exactly when it has none, which is cheaper to learn than reading
/// `/proc/self/stat` (agents start commands without one). Anything else (it opened,
/// or there is no `/dev/tty` to ask) cannot rule one out.
pub(super) fn has_controlling_terminal() -> bool {
    let flags = OFlag::O_RDONLY | OFlag::O_NOCTTY | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
    !matches!(
        nix::fcntl::open("/dev/tty", flags, Mode::empty()),
        Err(nix::errno::Errno::ENXIO)
    )
}

/// From /proc/self/stat, the controlling terminal when it is a pseudo-terminal: its
/// name in /dev/pts and its device number.
pub(super) fn pts_of_tty_nr(stat: &str) -> Option<(PathBuf, u64)> {
    // The command name (field 2) may hold spaces and parentheses: count from its end.
    let after = &stat[stat.rfind(')')? + 1..];
    // state, ppid, pgrp, session, tty_nr.
    let tty_nr: u64 = after.split_whitespace().nth(4)?.parse().ok()?;
    let major = (tty_nr >> 8) & 0xfff;
    let minor = (tty_nr & 0xff) | ((tty_nr >> 12) & 0xf_ff00);
    // Unix 98 pseudo-terminal slaves: majors 136 to 143, 256 minors each.
    if !(136..=143).contains(&major) {
        return None;
    }
    let index = (major - 136) * 256 + minor;
    let rdev = libc::makedev(major as u32, minor as u32);
    Some((PathBuf::from(format!("/dev/pts/{index}")), rdev))
}
