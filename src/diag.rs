//! Diagnostics for people debugging gate: `GATE_LOG` is a filter (`debug`, `gate=trace`,
//! …) and output goes to stderr. Silent when unset, and then costs nothing.
//!
//! The filter is a comma-separated list of directives, each a level (`trace`, `debug`,
//! `info`, `warn`, `error` or `off`, in any case) or `TARGET=LEVEL`. Anything else is an
//! error, checked here before the filter is handed to `tracing_subscriber`, which would
//! take a bare word such as `degub` for a target and show nothing.

use std::io::{self, Write};
use std::str::FromStr;

use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use crate::output::without_sigpipe;

/// The levels a directive may name.
const LEVELS: &[&str] = &["trace", "debug", "info", "warn", "error", "off"];

/// Install the subscriber when `GATE_LOG` is set. A filter that does not parse is an
/// error: it is configuration like any other.
pub fn init(filter: Option<&str>) -> Result<(), String> {
    let Some(filter) = filter.filter(|f| !f.is_empty()) else {
        return Ok(());
    };
    let bad = |why: String| {
        format!(
            "GATE_LOG: `{}` is not a log filter: {why}",
            filter.escape_debug()
        )
    };
    check(filter).map_err(bad)?;
    let targets = Targets::from_str(filter).map_err(|e| bad(e.to_string()))?;
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(|| Stderr)
        .without_time()
        .with_target(false);
    // Another subscriber can only exist in tests; keep the first.
    let _ = tracing_subscriber::registry()
        .with(targets)
        .with(fmt)
        .try_init();
    Ok(())
}

/// Check every directive of a filter: a level, or `TARGET=LEVEL`.
fn check(filter: &str) -> Result<(), String> {
    let is_level = |word: &str| LEVELS.iter().any(|l| l.eq_ignore_ascii_case(word));
    let levels = LEVELS.join(", ");
    for directive in filter.split(',') {
        let shown = directive.escape_debug();
        match directive.split_once('=') {
            None if is_level(directive) => {}
            None if directive.is_empty() => {
                return Err(format!(
                    "it has an empty directive; separate directives with single commas, \
                     each a level ({levels}) or TARGET=LEVEL"
                ));
            }
            None => {
                return Err(format!(
                    "`{shown}` names no level; use a level ({levels}) or TARGET=LEVEL"
                ));
            }
            Some((target, level)) => {
                let plain_target = !target.is_empty()
                    && target
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"_:-.".contains(&b));
                if !plain_target {
                    return Err(format!(
                        "`{shown}`: before `=` comes a target, a module path such as gate or \
                         gate::run"
                    ));
                }
                if !is_level(level) {
                    return Err(format!(
                        "`{shown}` names no level after `=`; use one of {levels}"
                    ));
                }
            }
        }
    }
    Ok(())
}

/// stderr for diagnostics: like gate's own lines, a pipe nobody reads does not kill gate.
struct Stderr;

impl Write for Stderr {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        without_sigpipe(|| io::stderr().write(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        io::stderr().flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_are_levels_or_targets_with_levels() {
        for good in [
            "debug",
            "TRACE",
            "off",
            "gate=trace",
            "warn,gate::run=debug",
            "gate::policy=Info,error",
        ] {
            assert_eq!(check(good), Ok(()), "{good}");
        }
        for (bad, why) in [
            ("degub", "`degub` names no level"),
            ("info,degub", "`degub` names no level"),
            ("gate debug", "`gate debug` names no level"),
            ("3", "`3` names no level"),
            ("gate=degub", "`gate=degub` names no level after `=`"),
            ("gate=", "`gate=` names no level after `=`"),
            ("=debug", "`=debug`: before `=` comes a target"),
            (
                "gate[x]=debug",
                "`gate[x]=debug`: before `=` comes a target",
            ),
            (" gate=debug", "` gate=debug`: before `=` comes a target"),
            ("debug,", "an empty directive"),
            (",debug", "an empty directive"),
        ] {
            let e = check(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn the_error_names_the_variable_and_the_filter() {
        let e = init(Some("degub")).unwrap_err();
        assert!(
            e.starts_with("GATE_LOG: `degub` is not a log filter: `degub` names no level"),
            "{e}"
        );
        assert!(!e.contains('\n'));
        assert_eq!(init(None), Ok(()));
        assert_eq!(init(Some("")), Ok(()));
    }
}
