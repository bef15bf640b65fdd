//! Identifiers: the session a request belongs to and the id of one call.

/// The session id: the configured one, else derived from the parent process (its pid and
/// start time, so that a reused pid does not inherit another session's approvals).
pub fn session_id(configured: Option<&str>) -> String {
    if let Some(id) = configured {
        return id.to_owned();
    }
    let ppid = nix::unistd::getppid().as_raw();
    match process_start_time(ppid) {
        Some(start) => format!("ppid-{ppid}-{start}"),
        None => format!("ppid-{ppid}"),
    }
}

/// A process's start time in clock ticks since boot (field 22 of `/proc/PID/stat`).
fn process_start_time(pid: i32) -> Option<u64> {
    use std::io::Read;
    // /proc files report a size of 0, so a growing read would take several calls; the
    // line is far shorter than this buffer, so one read gets all of it.
    let mut buf = [0u8; 1024];
    let mut file = std::fs::File::open(format!("/proc/{pid}/stat")).ok()?;
    let n = file.read(&mut buf).ok()?;
    let stat = std::str::from_utf8(&buf[..n]).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces and ')'.
    let after_name = &stat[stat.rfind(')')? + 1..];
    // Field 3 is the first after the name; field 22 is the 20th from there.
    after_name.split_whitespace().nth(19)?.parse().ok()
}

/// A new call id: 16 hex digits from getrandom(2), unpredictable and unique per call.
pub fn call_id() -> Result<String, String> {
    crate::random::hex(8).map_err(|e| format!("cannot make a call id: getrandom failed: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configured_session_is_used_as_is() {
        assert_eq!(session_id(Some("abc")), "abc");
    }

    #[test]
    fn the_derived_session_names_the_parent_and_its_start_time() {
        let id = session_id(None);
        let ppid = nix::unistd::getppid().as_raw();
        assert!(id.starts_with(&format!("ppid-{ppid}-")), "{id}");
        assert_eq!(id, session_id(None), "stable within one process");
    }

    #[test]
    fn call_ids_differ() {
        let a = call_id().unwrap();
        let b = call_id().unwrap();
        assert_eq!(a.len(), 16);
        assert_ne!(a, b);
    }
}
