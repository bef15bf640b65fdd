//! What gate writes for itself and the exit statuses it ends with: a leaf module, so the
//! subcommands and the run sequence share them without importing each other.

use std::io::{self, Write};

use nix::sys::signal::{SigSet, SigmaskHow, Signal};

/// Exit status: refused by policy.
pub const REFUSED: i32 = 126;
/// Exit status: gate itself failed; nothing ran.
pub const GATE_ERROR: i32 = 125;

/// Write one line to stderr. A closed or broken stderr must not turn a refusal into a
/// crash, so write errors are ignored, and a pipe nobody reads does not kill gate with
/// SIGPIPE (see [`without_sigpipe`]).
pub fn say(line: &str) {
    without_sigpipe(|| {
        let _ = writeln!(io::stderr().lock(), "{line}");
    });
}

/// Write to stdout; a closed stdout, or a pipe nobody reads, is gate's failure to report
/// (125), never a panic or a death by SIGPIPE.
pub fn print_out(text: &str) -> i32 {
    without_sigpipe(|| {
        let mut out = io::stdout().lock();
        match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
            Ok(()) => 0,
            Err(_) => GATE_ERROR,
        }
    })
}

/// Say `gate: MESSAGE` and return gate's own failure status.
pub fn fail(message: impl std::fmt::Display) -> i32 {
    say(&format!("gate: {message}"));
    GATE_ERROR
}

/// Run `write` so that a write to a pipe nobody reads fails with `EPIPE` instead of
/// killing gate: a refusal must still end with 126, gate's own error with 125, and a
/// warning before an exec must not stop the command from running.
///
/// gate keeps SIGPIPE as it was given (the command inherits it, see `main.rs`), so the
/// signal is blocked in this thread only for the write, a SIGPIPE the write raised is
/// taken off the pending set, and the mask is put back exactly. The disposition is never
/// touched, and the command inherits neither a changed mask nor a pending SIGPIPE that
/// gate caused.
pub fn without_sigpipe<T>(write: impl FnOnce() -> T) -> T {
    let pipe = SigSet::from(Signal::SIGPIPE);
    let Ok(before) = pipe.thread_swap_mask(SigmaskHow::SIG_BLOCK) else {
        return write();
    };
    // Only a SIGPIPE the caller itself blocked can already be pending (an unblocked one
    // is delivered or discarded at once); that one is the caller's and stays.
    let pending_before = before.contains(Signal::SIGPIPE) && sigpipe_pending();
    let result = write();
    if !pending_before && sigpipe_pending() {
        take_pending_sigpipe(&pipe);
    }
    let _ = before.thread_set_mask();
    result
}

/// Whether SIGPIPE is pending for this thread or the process.
fn sigpipe_pending() -> bool {
    let mut set = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigpending(2) fills the whole sigset_t it is given a pointer to, and only
    // reports an error for an invalid pointer, which this is not.
    if unsafe { libc::sigpending(set.as_mut_ptr()) } != 0 {
        return false;
    }
    // SAFETY: the successful sigpending above initialised `set`.
    let set = unsafe { set.assume_init() };
    // SAFETY: `set` is an initialised signal set and SIGPIPE a valid signal number.
    unsafe { libc::sigismember(&set, libc::SIGPIPE) == 1 }
}

/// Accept a pending SIGPIPE without waiting (the signal is blocked, so this is the only
/// way to discard it without changing its disposition).
fn take_pending_sigpipe(pipe: &SigSet) {
    let now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `pipe` is a valid signal set, a null `info` is allowed, and `now` is a
    // valid zero timeout, so sigtimedwait(2) returns at once: with the signal, or with
    // EAGAIN when none is pending.
    unsafe { libc::sigtimedwait(pipe.as_ref(), std::ptr::null_mut(), &now) };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pipe whose read end is closed: writing to it raises SIGPIPE and fails with EPIPE.
    fn broken_pipe() -> std::fs::File {
        let (read_end, write_end) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).unwrap();
        drop(read_end);
        std::fs::File::from(write_end)
    }

    /// Run `f` on a thread of its own with SIGPIPE blocked: the mask is per thread, so
    /// the harness's other threads see nothing. (The harness ignores SIGPIPE, but a
    /// blocked signal is kept pending whatever its disposition, so pending is visible.)
    fn with_sigpipe_blocked(f: impl FnOnce() + Send + 'static) {
        std::thread::spawn(move || {
            SigSet::from(Signal::SIGPIPE).thread_block().unwrap();
            f();
            take_pending_sigpipe(&SigSet::from(Signal::SIGPIPE));
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_write_to_a_pipe_nobody_reads_fails_with_epipe_and_leaves_no_sigpipe_pending() {
        with_sigpipe_blocked(|| {
            let mut pipe = broken_pipe();
            let result = without_sigpipe(|| pipe.write(b"x"));
            assert_eq!(result.unwrap_err().raw_os_error(), Some(libc::EPIPE));
            assert!(!sigpipe_pending(), "gate's SIGPIPE would reach the command");
            let mask = SigSet::thread_get_mask().unwrap();
            assert!(mask.contains(Signal::SIGPIPE), "the mask was not put back");
        });
    }

    #[test]
    fn a_sigpipe_the_caller_left_pending_stays_pending() {
        with_sigpipe_blocked(|| {
            // raise(3) sends it to this thread.
            nix::sys::signal::raise(Signal::SIGPIPE).unwrap();
            assert!(sigpipe_pending());
            let mut pipe = broken_pipe();
            let _ = without_sigpipe(|| pipe.write(b"x"));
            assert!(sigpipe_pending(), "the caller's pending SIGPIPE was taken");
        });
    }

    #[test]
    fn an_unblocked_sigpipe_is_unblocked_again_after_the_write() {
        std::thread::spawn(|| {
            SigSet::from(Signal::SIGPIPE).thread_unblock().unwrap();
            // The harness ignores SIGPIPE, so a signal that escaped would be discarded:
            // what is checked here is the mask.
            let mut pipe = broken_pipe();
            let result = without_sigpipe(|| pipe.write(b"x"));
            assert_eq!(result.unwrap_err().raw_os_error(), Some(libc::EPIPE));
            let mask = SigSet::thread_get_mask().unwrap();
            assert!(!mask.contains(Signal::SIGPIPE), "SIGPIPE was left blocked");
        })
        .join()
        .unwrap();
    }
}
