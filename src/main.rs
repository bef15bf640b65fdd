//! The `gate` binary. It defines the C `main` itself (`#![no_main]`) instead of Rust's
//! `fn main`, because Rust's start-up code changes what a program inherits: it sets
//! SIGPIPE to "ignore" (which survives exec, so `yes | head` would stop dying of SIGPIPE)
//! and reopens closed standard descriptors on /dev/null. gate must hand the command
//! exactly what gate was given, so it skips that start-up and reads argv directly.

#![no_main]

use std::ffi::{CStr, OsString, c_char, c_int};
use std::os::unix::ffi::OsStringExt;

/// The process entry point, called by the C runtime.
///
/// # Safety
///
/// Only the C runtime calls this, with `argc` valid string pointers in `argv`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn main(argc: c_int, argv: *const *const c_char) -> c_int {
    let count = usize::try_from(argc).unwrap_or(0);
    let mut args = Vec::with_capacity(count);
    for i in 0..count {
        // SAFETY: the C runtime passes `argc` valid pointers in `argv`, each to a
        // NUL-terminated string that lives for the whole process; `i < argc`.
        let arg = unsafe { CStr::from_ptr(*argv.add(i)) };
        args.push(OsString::from_vec(arg.to_bytes().to_vec()));
    }
    gate::main(args)
}
