//! The other concurrency model the broker could have used, reduced to what it costs:
//! a thread per connection. Each thread reads its peer's request line, registers it in
//! a shared table behind a mutex, and blocks reading until the peer goes away (that is
//! how a thread would notice a requester leaving). No approver side, no JSON: a lower
//! bound for the memory of the real thing. bench/broker.sh holds 1,000 connections on
//! it and on `gate serve` and compares their memory.
//!
//!   rustc --edition 2021 -O -o broker-threads bench/broker-threads.rs
//!   broker-threads SOCKET

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::net::UnixListener;
use std::sync::{Arc, Mutex};
use std::thread;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: broker-threads SOCKET");
        std::process::exit(2);
    };
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path).unwrap_or_else(|e| {
        eprintln!("broker-threads: cannot bind {path}: {e}");
        std::process::exit(1);
    });
    let table: Arc<Mutex<HashMap<u64, Vec<u8>>>> = Arc::default();
    let mut next = 0u64;
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let id = next;
        next += 1;
        let table = Arc::clone(&table);
        let spawned = thread::Builder::new()
            // Far more than enough for this loop; the default is 2 MiB of address space.
            .stack_size(64 * 1024)
            .spawn(move || {
                let mut reader = BufReader::new(stream);
                let mut line = Vec::new();
                if reader
                    .by_ref()
                    .take(64 * 1024)
                    .read_until(b'\n', &mut line)
                    .is_err()
                {
                    return;
                }
                table.lock().unwrap().insert(id, line);
                let mut rest = [0u8; 1];
                let _ = reader.read(&mut rest);
                table.lock().unwrap().remove(&id);
            });
        if let Err(e) = spawned {
            eprintln!("broker-threads: cannot start a thread: {e}");
        }
    }
}
