//! How a refused exec is told: the line the caller reads on its own standard error,
//! written through its descriptor as it could write itself, and the audit record. It
//! decides nothing; [`super::Execs`] does.

use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::SystemTime;

use serde_json::{Map, Value, json};

use super::super::notify::{descriptor_from, pidfd_of};

use super::{MAX_ARGV_BYTES, Record, Refusal};

/// The line a refusal is told by (none for the probe's answer and a missing file).
pub(super) fn message(refusal: &Refusal) -> Option<String> {
    Some(match refusal {
        Refusal::Rule {
            program,
            argv,
            matched,
        } => format!(
            "gate: refused to run `{}` ({}): the deny rule `{}` (from {}) matches it; it \
             was not run. Do not try to run it another way; tell the user if it is needed.",
            shown_argv(argv),
            shown(program),
            matched.rule,
            matched.origin
        ),
        Refusal::Unreadable(e) => format!(
            "gate: refused to run a program: deny rules are checked at exec, and gate's \
             supervisor may not read what this process asks to run ({e}; see `gate doctor`)"
        ),
        Refusal::Missing | Refusal::Probe(_) => return None,
        Refusal::TooLong(program) => format!(
            "gate: refused to run {}: its arguments are longer than the {} bytes the deny \
             rules are checked on",
            shown(program),
            MAX_ARGV_BYTES
        ),
        Refusal::Unseen(program) => format!(
            "gate: refused to run {}: deny rules are checked at exec, and this user may not \
             read the file to see what its `#!` line runs; make it readable to run it",
            shown(program)
        ),
    })
}

/// Bytes as one line of a message: invalid UTF-8 replaced, control characters escaped.
pub(super) fn shown(bytes: &[u8]) -> String {
    crate::explain::one_line(&String::from_utf8_lossy(bytes), usize::MAX)
}

/// An argv as a message shows it, cut to a readable length.
pub(super) fn shown_argv(argv: &[Vec<u8>]) -> String {
    const MAX: usize = 200;
    let mut text = argv.iter().map(|a| shown(a)).collect::<Vec<_>>().join(" ");
    if text.len() > MAX {
        let mut end = MAX;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

/// Writers of a refusal line still blocked (a pipe nobody reads, a stopped terminal):
/// past this many, further lines are not written (the refusal and its record stand).
pub(super) static STUCK_WRITERS: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

pub(super) const MAX_STUCK_WRITERS: usize = 4;

/// How long the supervisor waits for the line to be written before it answers the exec
/// (the line then comes before the shell's own message about the failed exec).
pub(super) const WRITE_WAIT: std::time::Duration = std::time::Duration::from_millis(100);

/// Write `line` to the standard error of process `pid`, as that process could itself:
/// only when its descriptor 2 is open for writing, through that very descriptor (a copy,
/// `pidfd_getfd`: the same file, offset and flags, and no permission on the file beyond
/// the process's own). A socket is sent to without waiting; anything else is written on
/// a thread of its own, waited for a moment: a full pipe or a stopped terminal must not
/// stop the supervisor.
pub(super) fn tell(pid: u32, line: &str) {
    let fdinfo = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/2")).unwrap_or_default();
    let Some(flags) = fdinfo
        .lines()
        .find_map(|l| l.strip_prefix("flags:"))
        .and_then(|v| i32::from_str_radix(v.trim(), 8).ok())
    else {
        return;
    };
    if flags & libc::O_ACCMODE == libc::O_RDONLY {
        return;
    }
    let Some(fd) = descriptor_of(pid, 2) else {
        return;
    };
    let mut text = line.as_bytes().to_vec();
    text.push(b'\n');
    let file = std::fs::File::from(fd);
    let is_socket = file.metadata().is_ok_and(|m| {
        use std::os::unix::fs::FileTypeExt;
        m.file_type().is_socket()
    });
    if is_socket {
        // SAFETY: send reads `text`, alive for the call.
        unsafe {
            libc::send(
                file.as_raw_fd(),
                text.as_ptr().cast(),
                text.len(),
                libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
            )
        };
        return;
    }
    use std::sync::atomic::Ordering;
    if STUCK_WRITERS.fetch_add(1, Ordering::SeqCst) >= MAX_STUCK_WRITERS {
        STUCK_WRITERS.fetch_sub(1, Ordering::SeqCst);
        return;
    }
    let (done, written) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("tell".to_owned())
        .spawn(move || {
            let mut file = file;
            let _ = file.write_all(&text);
            STUCK_WRITERS.fetch_sub(1, Ordering::SeqCst);
            let _ = done.send(());
        });
    match spawned {
        Ok(_) => {
            let _ = written.recv_timeout(WRITE_WAIT);
        }
        Err(_) => {
            STUCK_WRITERS.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// A copy of descriptor `fd` of process `pid` (pidfd_getfd, Linux 5.6).
pub(super) fn descriptor_of(pid: u32, fd: i32) -> Option<OwnedFd> {
    let pidfd = pidfd_of(pid).ok()?;
    descriptor_from(&pidfd, fd).ok()
}

/// The audit record of a refused exec, as the JSON object the audit log's line and the
/// system log's fields are made from.
pub(super) fn encode(
    record: &Record,
    pid: u32,
    refusal: &Refusal,
    message: &str,
    now: SystemTime,
) -> Map<String, Value> {
    let mut o = Map::new();
    o.insert("time".into(), json!(crate::audit::rfc3339(now)));
    o.insert("call_id".into(), json!(record.call_id));
    o.insert("session_id".into(), json!(record.session_id));
    o.insert("pid".into(), json!(pid));
    o.insert("uid".into(), json!(nix::unistd::getuid().as_raw()));
    o.insert("host".into(), json!(crate::audit::host_name()));
    o.insert("level".into(), json!(record.level));
    o.insert("kind".into(), json!("exec"));
    let lossy = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let (program, argv, rule, origin) = match refusal {
        Refusal::Rule {
            program,
            argv,
            matched,
        } => (
            Some(lossy(program)),
            Some(argv.iter().map(|a| lossy(a)).collect::<Vec<_>>()),
            Some(matched.rule.to_string()),
            Some(matched.origin.to_string()),
        ),
        Refusal::TooLong(program) | Refusal::Unseen(program) => {
            (Some(lossy(program)), None, None, None)
        }
        Refusal::Unreadable(_) | Refusal::Missing | Refusal::Probe(_) => (None, None, None, None),
    };
    o.insert("program".into(), json!(program));
    o.insert("argv".into(), json!(argv));
    o.insert("decision".into(), json!("deny"));
    o.insert("decided_by".into(), json!("exec"));
    o.insert("rule".into(), json!(rule));
    o.insert("rule_origin".into(), json!(origin));
    o.insert("message".into(), json!(message));
    o
}
