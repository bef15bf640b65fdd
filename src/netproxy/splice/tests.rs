use super::*;
use std::io::{Read, Write};
use std::net::TcpListener;

fn pair() -> (TcpStream, TcpStream) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
    let (b, _) = l.accept().unwrap();
    (a, b)
}

#[test]
fn bytes_cross_whole_and_in_order() {
    let (mut src_w, src_r) = pair();
    let (dst_w, mut dst_r) = pair();
    let data: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let sent = data.clone();
    let writer = std::thread::spawn(move || {
        src_w.write_all(&sent).unwrap();
    });
    let reader = std::thread::spawn(move || {
        let mut got = Vec::new();
        dst_r.read_to_end(&mut got).unwrap();
        got
    });
    assert_eq!(
        relay(&src_r, &dst_w, None).unwrap(),
        Relayed::Done(3_000_000)
    );
    writer.join().unwrap();
    drop(dst_w);
    assert_eq!(reader.join().unwrap(), data);
}

#[test]
fn a_limit_stops_there_and_a_short_stream_is_an_error() {
    let (mut src_w, src_r) = pair();
    let (dst_w, mut dst_r) = pair();
    src_w.write_all(b"0123456789").unwrap();
    assert_eq!(relay(&src_r, &dst_w, Some(4)).unwrap(), Relayed::Done(4));
    drop(dst_w);
    let mut got = Vec::new();
    dst_r.read_to_end(&mut got).unwrap();
    assert_eq!(got, b"0123");
    drop(src_w);
    let (dst_w, _dst_r) = pair();
    let e = relay(&src_r, &dst_w, Some(100)).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
}
