//! A requester that went away with its request open: why, for the log (timed out, or
//! killed or interrupted before its timeout), and the audit record the broker writes
//! for one that left none of its own (Codex kills its command's process group). Nothing
//! of such a command ran; the record says so. It must not answer or settle a request:
//! the loop has done that when the requester closed.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::time::{Duration, Instant};

use super::{Broker, log};

/// The end of the audit log, where a record written in the last seconds is.
fn log_tail(path: &Path) -> io::Result<Vec<u8>> {
    use std::io::{Seek, SeekFrom};
    const TAIL: u64 = 4 << 20;
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(TAIL)))?;
    let mut tail = Vec::new();
    file.read_to_end(&mut tail)?;
    Ok(tail)
}

/// How early before its timeout a requester that closes still counts as timed out: it
/// counts its timeout from before it connected, the broker from when the request came.
const TIMEOUT_SLACK: Duration = Duration::from_millis(500);

/// Why a requester closed with its request open, for the log, from how long the request
/// waited and its timeout (`None`: it was no longer open): at its timeout the requester
/// gave up, which is a denial; before it, it was killed or interrupted.
pub(super) fn gone_why(waited: Option<(Duration, Duration)>) -> String {
    match waited {
        Some((waited, timeout)) if waited + TIMEOUT_SLACK.min(timeout / 2) >= timeout => {
            format!(
                "timed out: nobody answered within {} s, so the requester denied it",
                timeout.as_secs()
            )
        }
        Some((waited, _)) => format!(
            "the requester went away after {:.1} s, before its timeout (killed or \
             interrupted); nothing was run",
            waited.as_secs_f64()
        ),
        None => "the requester went away".to_owned(),
    }
}

/// How long a requester that went away has to write its own record (a gate that gave
/// up at its timeout does, at once) before the broker writes one for it.
pub(super) const GONE_GRACE: Duration = Duration::from_secs(2);

impl Broker {
    /// A requester killed while it waited (Codex kills its command's process group)
    /// leaves no record of its own: once its grace is over, write one for it unless the
    /// log has one with its call id. Nothing of the command ran: gate runs a command
    /// only after its answer.
    pub(super) fn record_gone(&mut self, now: Instant) {
        let (due, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut self.gone)
            .into_iter()
            .partition(|(at, _)| *at <= now);
        self.gone = waiting;
        let Some(path) = self.audit_log.clone() else {
            return;
        };
        for (_, request) in due {
            let needle = format!("\"call_id\":{}", serde_json::json!(request.call_id));
            let recorded = log_tail(&path)
                .map(|log| log.windows(needle.len()).any(|w| w == needle.as_bytes()))
                .unwrap_or(false);
            if recorded {
                continue;
            }
            let record = crate::audit::Record {
                call_id: &request.call_id,
                session_id: &request.session_id,
                level: &request.level,
                kind: &request.kind,
                command: Some(&request.command),
                decision: "deny",
                decided_by: "requester-gone",
                rule: None,
                rule_origin: None,
                message: Some(
                    "recorded by the broker: the requester went away before an answer \
                     (killed or interrupted) and left no record; nothing was run",
                ),
                sandbox: None,
                wrapper: None,
                looks_like: None,
                script_sha256: None,
            };
            let line = crate::audit::encode_for(
                &record,
                std::time::SystemTime::now(),
                request.pid,
                Some(&request.work_dir),
            );
            if let Err(e) = crate::audit::append(&path, &|n| std::env::var_os(n), &line) {
                log(&format!(
                    "cannot record request {} in {}: {e}",
                    request.call_id,
                    path.display()
                ));
            }
        }
    }
}
