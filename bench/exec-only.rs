//! The floor for a command wrapper: a minimal static Rust program that execs its
//! argument and does nothing else. bench/overhead.sh builds it with
//! `rustc -O -C target-feature=+crt-static`.

use std::os::unix::process::CommandExt;
use std::process::Command;

fn main() {
    let mut args = std::env::args_os().skip(1);
    let Some(program) = args.next() else {
        eprintln!("usage: exec-only PROGRAM [ARGS...]");
        std::process::exit(125);
    };
    let err = Command::new(&program).args(args).exec();
    eprintln!("exec-only: {}: {err}", program.to_string_lossy());
    std::process::exit(127);
}
