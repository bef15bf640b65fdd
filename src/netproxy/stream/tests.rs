use super::*;

fn chunked(input: &[u8]) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    copy_body(&mut &input[..], &mut out, Framing::Chunked).map(|()| out)
}

#[test]
fn chunked_bodies_are_written_anew_and_stop_at_their_end() {
    let body = b"4;x=1\r\nWiki\r\n5 ; y\r\npedia\r\n0\r\nTrailer: 1\r\n\r\nGET http://evil/ HTTP/1.1\r\n\r\n";
    assert_eq!(
        chunked(body).unwrap(),
        b"4\r\nWiki\r\n5\r\npedia\r\n0\r\n\r\n"
    );
    let long = b"00000000000000a\r\n0123456789\r\n0\r\n\r\n";
    assert_eq!(chunked(long).unwrap(), b"a\r\n0123456789\r\n0\r\n\r\n");
}

#[test]
fn chunks_two_readers_could_read_apart_are_refused() {
    for bad in [
        &b"zz\r\n"[..],
        b"5\nhello\r\n0\r\n\r\n",
        b"5\r\nhello\n0\r\n\r\n",
        b"+5\r\nhello\r\n0\r\n\r\n",
        b"0x5\r\nhello\r\n0\r\n\r\n",
        b"-0\r\n\r\n",
        b"5\rx\r\nhello\r\n0\r\n\r\n",
        b"1000000000000000\r\n",
        b"5;a\x01\r\nhello\r\n0\r\n\r\n",
        b"5 x\r\nhello\r\n0\r\n\r\n",
        b"0\r\nTrailer: 1\n\r\n",
        b"0\r\n Folded: 1\r\n\r\n",
        b"0\r\nBad Name: 1\r\n\r\n",
        b"0\r\n\n",
        b"5\r\nhelloXY0\r\n\r\n",
        b"5\r\nhel",
    ] {
        assert!(
            chunked(bad).is_err(),
            "{:?} was taken",
            String::from_utf8_lossy(bad)
        );
    }
}

#[test]
fn a_head_ends_at_its_blank_line_or_at_a_bare_lf() {
    let mut r = &b"GET / HTTP/1.1\r\nA: 1\r\n\r\nBODY"[..];
    assert_eq!(
        read_head(&mut r).unwrap(),
        b"GET / HTTP/1.1\r\nA: 1\r\n\r\n"
    );
    assert_eq!(r, b"BODY");
    let mut r = &b"GET / HTTP/1.1\nA: 1\n\nBODY"[..];
    assert_eq!(read_head(&mut r).unwrap(), b"GET / HTTP/1.1\nA: 1\n\n");
    let mut r = &b"GET / HTTP/1.1\r\n"[..];
    assert_eq!(
        read_head(&mut r).unwrap_err().kind(),
        io::ErrorKind::UnexpectedEof
    );
    let big = [&b"GET / HTTP/1.1\r\nA: "[..], &vec![b'x'; http::MAX_HEAD]].concat();
    assert_eq!(
        read_head(&mut &big[..]).unwrap_err().kind(),
        io::ErrorKind::InvalidData
    );
}
