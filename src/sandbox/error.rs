//! Why the sandbox cannot be set up, as a kind callers can tell apart and the words for
//! what went wrong. What that means for the command (nothing was run) is not said here:
//! the edge that prints the error adds it ([`crate::explain::not_run`]).

use std::fmt;

/// Why the sandbox could not be set up: gate's own failure (exit 125), and the command
/// must not run. `Display` says what went wrong; [`SandboxError::advice`], for some
/// kinds, what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SandboxError {
    /// The kernel lacks what the safe level, a domain list or `sandbox.require` needs.
    Kernel { cause: String, advice: String },
    /// This place or this configuration cannot be sandboxed as asked: `HOME` unset, the
    /// working directory gone, hidden or `/`, a writable root of `/`, a hidden path in
    /// /tmp or /dev/shm.
    Place {
        cause: String,
        advice: Option<String>,
    },
    /// A step of setting up failed (a system call, a file), in the words of the layer
    /// that failed.
    Setup(String),
    /// A layer was put in force but does not act as it must, or that could not be
    /// checked.
    NotActing(String),
    /// gate's supervisor was not set up as the sandbox needs it.
    Supervisor(String),
}

impl SandboxError {
    /// What to do about it, where there is something to say (a sentence of its own).
    pub(crate) fn advice(&self) -> Option<&str> {
        match self {
            SandboxError::Kernel { advice, .. } => Some(advice),
            SandboxError::Place { advice, .. } => advice.as_deref(),
            SandboxError::Setup(_) | SandboxError::NotActing(_) | SandboxError::Supervisor(_) => {
                None
            }
        }
    }
}

impl fmt::Display for SandboxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SandboxError::Kernel { cause, .. } | SandboxError::Place { cause, .. } => {
                f.write_str(cause)
            }
            SandboxError::Setup(cause)
            | SandboxError::NotActing(cause)
            | SandboxError::Supervisor(cause) => f.write_str(cause),
        }
    }
}

impl std::error::Error for SandboxError {}
