//! What gate writes for itself and the exit statuses it ends with: a leaf module, so the
//! subcommands and the run sequence share them without importing each other.

use std::io::{self, Write};

/// Exit status: refused by policy.
pub const REFUSED: i32 = 126;
/// Exit status: gate itself failed; nothing ran.
pub const GATE_ERROR: i32 = 125;

/// Write one line to stderr. A closed or broken stderr must not turn a refusal into a
/// crash, so write errors are ignored.
pub fn say(line: &str) {
    let _ = writeln!(io::stderr().lock(), "{line}");
}

/// Write to stdout; a closed stdout is gate's failure to report (125), never a panic.
pub fn print_out(text: &str) -> i32 {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => 0,
        Err(_) => GATE_ERROR,
    }
}

/// Say `gate: MESSAGE` and return gate's own failure status.
pub fn fail(message: impl std::fmt::Display) -> i32 {
    say(&format!("gate: {message}"));
    GATE_ERROR
}
