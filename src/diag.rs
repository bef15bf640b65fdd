//! Diagnostics for people debugging gate: `GATE_LOG` is a tracing filter (`debug`,
//! `gate=trace`, …) and output goes to stderr. Silent when unset, and then costs nothing.

use std::str::FromStr;

use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Install the subscriber when `GATE_LOG` is set. A filter that does not parse is an
/// error: it is configuration like any other.
pub fn init(filter: Option<&str>) -> Result<(), String> {
    let Some(filter) = filter.filter(|f| !f.is_empty()) else {
        return Ok(());
    };
    let targets = Targets::from_str(filter).map_err(|e| {
        format!(
            "GATE_LOG: `{}` is not a log filter: {e}",
            filter.escape_debug()
        )
    })?;
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .without_time()
        .with_target(false);
    // Another subscriber can only exist in tests; keep the first.
    let _ = tracing_subscriber::registry()
        .with(targets)
        .with(fmt)
        .try_init();
    Ok(())
}
