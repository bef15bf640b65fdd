//! Signals while gate waits for an answer. SIGINT, SIGTERM, SIGHUP and SIGQUIT are
//! blocked and read from a signalfd, so that a wait can end in "denied: interrupted"
//! with the terminal restored, instead of gate dying mid-prompt. The previous mask is
//! put back when the guard is dropped, before anything is exec'd (a blocked mask would
//! be inherited by the command).

use std::os::fd::{AsFd, BorrowedFd};

use nix::sys::signal::{SigSet, SigmaskHow, Signal, sigprocmask};
use nix::sys::signalfd::{SfdFlags, SignalFd};

/// The signals that end a wait.
pub const WAIT_SIGNALS: [Signal; 4] = [
    Signal::SIGINT,
    Signal::SIGTERM,
    Signal::SIGHUP,
    Signal::SIGQUIT,
];

/// Blocks [`WAIT_SIGNALS`] for its lifetime and makes them readable on a descriptor.
pub struct Interrupts {
    fd: SignalFd,
    old: SigSet,
}

impl Interrupts {
    pub fn block() -> Result<Interrupts, String> {
        let mut set = SigSet::empty();
        for s in WAIT_SIGNALS {
            set.add(s);
        }
        let mut old = SigSet::empty();
        sigprocmask(SigmaskHow::SIG_BLOCK, Some(&set), Some(&mut old))
            .map_err(|e| format!("cannot block signals while waiting: {e}"))?;
        match SignalFd::with_flags(&set, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC) {
            Ok(fd) => Ok(Interrupts { fd, old }),
            Err(e) => {
                let _ = sigprocmask(SigmaskHow::SIG_SETMASK, Some(&old), None);
                Err(format!("cannot watch for signals while waiting: {e}"))
            }
        }
    }

    /// A descriptor that becomes readable when one of the signals arrives.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// The signal that arrived, if one did (consumed).
    pub fn take(&self) -> Option<Signal> {
        match self.fd.read_signal() {
            Ok(Some(info)) => Signal::try_from(info.ssi_signo as i32).ok(),
            _ => None,
        }
    }
}

impl Drop for Interrupts {
    fn drop(&mut self) {
        let _ = sigprocmask(SigmaskHow::SIG_SETMASK, Some(&self.old), None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_raised_signal_is_read_not_delivered() {
        let guard = Interrupts::block().unwrap();
        nix::sys::signal::raise(Signal::SIGHUP).unwrap();
        // Blocked and pending per thread: raise() targets this thread.
        assert_eq!(guard.take(), Some(Signal::SIGHUP));
        assert_eq!(guard.take(), None);
    }
}
