//! Ending what the command leaves behind, at `safe`: once the command has ended, kill
//! every process in its user namespace, or in one made beneath it (see
//! [`crate::sandbox::ending`] for how the command got there).
//!
//! The supervisor scans /proc: for each process, the user namespace its
//! `/proc/PID/ns/user` names (one `stat`); for a member, a pidfd, the namespace once more,
//! and SIGKILL through the pidfd. A pid reused before the pidfd was opened fails the
//! second look; one reused after leaves the pidfd naming the process that ended; so no
//! other process is ever signalled. The scan is repeated until one finds no sign of
//! life: no member killed, and no member seen for the first time already gone (it may
//! have forked first: a daemon that changes its pid all the time is caught by a later
//! scan; a zombie nobody reaps is seen twice and counts once). Killing needs no
//! capability: the members run as the supervisor's user, and the supervisor, in the
//! namespace's parent with the owner's uid, holds every capability in it, so a member
//! that made itself non-dumpable is still seen.

use std::collections::{HashMap, HashSet};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

/// `NS_GET_PARENT` (linux/nsfs.h): a descriptor of a namespace's parent.
const NS_GET_PARENT: libc::c_ulong = 0xb702;
/// How deep user namespaces nest (the kernel's limit is 32).
const MAX_DEPTH: usize = 33;

/// A namespace's identity: the device and inode of its nsfs file.
type Id = (u64, u64);

fn id_of(fd: BorrowedFd<'_>) -> Option<Id> {
    let st = nix::sys::stat::fstat(fd).ok()?;
    Some((st.st_dev, st.st_ino))
}

/// Kill every process in the namespace `ours` or beneath it; return how many were
/// killed.
pub(crate) fn end(ours: BorrowedFd<'_>) -> usize {
    let Some(own) = id_of(ours) else {
        return 0;
    };
    let mut members: HashMap<Id, bool> = HashMap::from([(own, true)]);
    let me = std::process::id();
    // The pidfds of the processes killed so far, by pid.
    let mut killed: HashMap<i32, OwnedFd> = HashMap::new();
    // Members found already ended, by pid: each once is a sign of life (it may have
    // forked first), again is a zombie nobody reaped yet.
    let mut seen_ended: HashSet<i32> = HashSet::new();
    loop {
        let mut new = Vec::new();
        let mut activity = false;
        for pid in pids().filter(|&pid| pid as u32 != me) {
            if killed.get(&pid).is_some_and(|fd| !ended(fd.as_fd())) {
                // Killed already, still dying.
                continue;
            }
            // One stat for most processes: the namespace they share is known.
            let Some(id) = user_ns_id(pid) else {
                continue;
            };
            let member = match members.get(&id) {
                Some(&known) => known,
                None => user_ns(pid).is_some_and(|ns| is_member(ns, &mut members)),
            };
            if !member {
                continue;
            }
            // The pidfd first, then the namespace again: the pidfd names this process,
            // or one that has ended (the pid reused since), never another.
            let pidfd = pidfd_open(pid);
            let Some(pidfd) = pidfd.filter(|fd| user_ns_id(pid) == Some(id) && !ended(fd.as_fd()))
            else {
                // Gone between the two looks: it may have forked first (a daemon that
                // changes its pid all the time), so list again.
                if !killed.contains_key(&pid) && seen_ended.insert(pid) {
                    activity = true;
                }
                continue;
            };
            // SAFETY: pidfd_send_signal with a valid pidfd, a signal number, no info.
            unsafe {
                libc::syscall(
                    libc::SYS_pidfd_send_signal,
                    pidfd.as_raw_fd(),
                    libc::SIGKILL,
                    std::ptr::null::<libc::siginfo_t>(),
                    0,
                );
            }
            activity = true;
            seen_ended.remove(&pid);
            new.push(pid);
            killed.insert(pid, pidfd);
        }
        if !activity {
            return killed.len();
        }
        // Wait for them to go (a second at most: one stuck in the kernel is not waited
        // for), so the next scan does not find them again.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
        for pid in new {
            let Some(fd) = killed.get(&pid) else { continue };
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let ms = u16::try_from(left.as_millis()).unwrap_or(u16::MAX);
            let mut fds = [PollFd::new(fd.as_fd(), PollFlags::POLLIN)];
            let _ = poll(&mut fds, PollTimeout::from(ms));
        }
    }
}

/// The pids in /proc, read a few at a time as the scan goes: /proc lists processes in
/// the order of their pids from where the last read stopped, so a process made during
/// the scan with a pid above it (its parent's pid, or any, until pids wrap around) is
/// listed in the same scan. A listing read whole first would miss it.
struct Pids {
    dir: Option<OwnedFd>,
    buffer: Vec<u8>,
    filled: usize,
    at: usize,
}

fn pids() -> Pids {
    let dir = std::fs::File::open("/proc").ok().map(OwnedFd::from);
    Pids {
        dir,
        // About 16 entries a read.
        buffer: vec![0; 512],
        filled: 0,
        at: 0,
    }
}

impl Iterator for Pids {
    type Item = i32;

    fn next(&mut self) -> Option<i32> {
        loop {
            if self.at >= self.filled {
                let dir = self.dir.as_ref()?;
                // SAFETY: getdents64 writes at most `buffer.len()` bytes into the buffer,
                // which we own, from a directory descriptor we own.
                let n = unsafe {
                    libc::syscall(
                        libc::SYS_getdents64,
                        dir.as_raw_fd(),
                        self.buffer.as_mut_ptr(),
                        self.buffer.len(),
                    )
                };
                if n <= 0 {
                    self.dir = None;
                    return None;
                }
                self.filled = n as usize;
                self.at = 0;
            }
            // struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name.
            let entry = &self.buffer[self.at..self.filled];
            let reclen = entry
                .get(16..18)
                .map(|b| usize::from(u16::from_ne_bytes([b[0], b[1]])))
                .filter(|&len| len > 19 && len <= entry.len())?;
            self.at += reclen;
            let name = &entry[19..reclen];
            let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
            if let Some(pid) = std::str::from_utf8(name).ok().and_then(|n| n.parse().ok()) {
                return Some(pid);
            }
        }
    }
}

/// The identity of the user namespace of `pid`, without opening it.
fn user_ns_id(pid: i32) -> Option<Id> {
    let st = nix::sys::stat::stat(format!("/proc/{pid}/ns/user").as_str()).ok()?;
    Some((st.st_dev, st.st_ino))
}

/// The user namespace of `pid`, opened.
fn user_ns(pid: i32) -> Option<OwnedFd> {
    std::fs::File::open(format!("/proc/{pid}/ns/user"))
        .ok()
        .map(OwnedFd::from)
}

/// Whether `ns` is the command's namespace or lies beneath it; remembered by identity,
/// so the namespace most processes share is walked once.
fn is_member(ns: OwnedFd, members: &mut HashMap<Id, bool>) -> bool {
    let Some(first) = id_of(ns.as_fd()) else {
        return false;
    };
    if let Some(&known) = members.get(&first) {
        return known;
    }
    let mut seen = vec![first];
    let mut current = ns;
    let mut answer = false;
    for _ in 0..MAX_DEPTH {
        // SAFETY: NS_GET_PARENT takes no argument and returns a new descriptor.
        let rc = unsafe { libc::ioctl(current.as_raw_fd(), NS_GET_PARENT) };
        if rc < 0 {
            // The initial namespace, or one outside the supervisor's.
            break;
        }
        // SAFETY: a new descriptor that nothing else owns.
        current = unsafe { OwnedFd::from_raw_fd(rc as RawFd) };
        let Some(id) = id_of(current.as_fd()) else {
            break;
        };
        if let Some(&known) = members.get(&id) {
            answer = known;
            break;
        }
        seen.push(id);
    }
    for id in seen {
        members.insert(id, answer);
    }
    answer
}

fn pidfd_open(pid: i32) -> Option<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor.
    let rc = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    // SAFETY: a new descriptor that nothing else owns.
    (rc >= 0).then(|| unsafe { OwnedFd::from_raw_fd(rc as RawFd) })
}

/// Whether the process a pidfd names has ended (a zombie included).
fn ended(pidfd: BorrowedFd<'_>) -> bool {
    let mut fds = [PollFd::new(pidfd, PollFlags::POLLIN)];
    matches!(poll(&mut fds, PollTimeout::ZERO), Ok(n) if n > 0)
}

/// The pids of the processes still alive in the namespace or beneath it (for tests).
#[cfg(test)]
fn members_alive(ours: BorrowedFd<'_>) -> HashSet<i32> {
    let own = id_of(ours).expect("fstat");
    let mut members: HashMap<Id, bool> = HashMap::from([(own, true)]);
    pids()
        .filter(|&pid| {
            user_ns(pid).is_some_and(|ns| is_member(ns, &mut members))
                && pidfd_open(pid).is_some_and(|fd| !ended(fd.as_fd()))
        })
        .collect()
}

#[cfg(test)]
mod tests;
