use super::read::{parse_shebang, read_path_and_argv0};
use super::tell::{shown, shown_argv};
use super::*;

#[test]
fn a_shebang_line_is_read_as_the_kernel_reads_it() {
    assert_eq!(
        parse_shebang(b"#!/bin/sh\necho"),
        Some((b"/bin/sh".to_vec(), None))
    );
    assert_eq!(
        parse_shebang(b"#! /usr/bin/env  -S rm -rf  \nx"),
        Some((b"/usr/bin/env".to_vec(), Some(b"-S rm -rf".to_vec())))
    );
    assert_eq!(
        parse_shebang(b"#!\t/bin/rm\t-rf"),
        Some((b"/bin/rm".to_vec(), Some(b"-rf".to_vec())))
    );
    assert_eq!(parse_shebang(b"#!   \n"), None);
    assert_eq!(parse_shebang(b"\x7fELF"), None);
    assert_eq!(parse_shebang(b"# !/bin/sh"), None);
}

#[test]
fn a_message_is_one_line() {
    assert_eq!(shown(b"rm\nx\ty"), "rm\\nx\\ty");
    assert_eq!(shown(b"\xffrm"), "\u{fffd}rm");
    let long = vec![b"a".repeat(300)];
    assert!(shown_argv(&long).ends_with('…'));
    assert!(shown_argv(&long).len() < 210);
}

#[test]
fn the_path_and_argv0s_pointer_come_in_one_read_across_pages_too() {
    let pid = std::process::id();
    let buf = vec![0u8; 3 * 4096];
    let base = buf.as_ptr() as u64;
    // Five bytes before a page boundary: the rest is read on the next page.
    let start = (base / 4096 + 1) * 4096 - 5;
    let mut buf = buf;
    let offset = (start - base) as usize;
    buf[offset..offset + 12].copy_from_slice(b"/usr/bin/rm\0");
    let argv0 = b"rm\0";
    let argv: [u64; 2] = [argv0.as_ptr() as u64, 0];
    let read = |argv_at: u64| match read_path_and_argv0(pid, start, argv_at) {
        Ok(read) => read,
        Err(_) => panic!("cannot read this process"),
    };
    assert_eq!(
        read(argv.as_ptr() as u64),
        (b"/usr/bin/rm".to_vec(), Some(argv0.as_ptr() as u64))
    );
    let at = buf.as_ptr() as u64 + 64;
    buf[64..67].copy_from_slice(b"/x\0");
    let read_at = |argv_at: u64| match read_path_and_argv0(pid, at, argv_at) {
        Ok(read) => read,
        Err(_) => panic!("cannot read this process"),
    };
    assert_eq!(
        read_at(argv.as_ptr() as u64),
        (b"/x".to_vec(), Some(argv0.as_ptr() as u64))
    );
    // No argv, and an argv the kernel would fault on: argv[0] is left for later.
    assert_eq!(read_at(0), (b"/x".to_vec(), None));
    assert_eq!(read_at(8), (b"/x".to_vec(), None));
}

#[test]
fn the_last_component_names_the_program() {
    assert_eq!(last(b"/usr/bin/rm"), b"rm");
    assert_eq!(last(b"rm"), b"rm");
    assert_eq!(last(b"./d/"), b"");
}
