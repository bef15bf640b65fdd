//! The proxy's HTTP reader: `netproxy::http::Head::{request, response}`, the request's
//! framing, the request as sent upstream, and a chunked body as copied
//! (`netproxy::stream::copy_body`).
//!
//! Input: any bytes, read three ways: as a request head, as a response head, and as a
//! chunked body. No reader may panic. A request head it accepts must go upstream as
//! exactly one request that a reader splitting lines at a bare LF (as Python's
//! http.server does) also reads as one head, with no folded line, and that the strict
//! reader reads again with the same method, version and fields (less the hop-by-hop
//! ones the proxy drops), and one framing field agreeing with the framing the proxy
//! used. A chunked body it accepts must come out in the proxy's own form, which it
//! reads back unchanged, carrying the same bytes an independent reader of the input
//! (written here from RFC 9112, section 7.1) finds.

use gate::netproxy::http::{self, Framing, Head};
use gate::netproxy::stream;

/// Splits like a lenient server: lines end at LF, a CR before it dropped. The head ends
/// at the first empty line; returns its lines and what follows.
fn lenient_head(bytes: &[u8]) -> (Vec<&[u8]>, &[u8]) {
    let mut lines = Vec::new();
    let mut rest = bytes;
    while let Some(end) = rest.iter().position(|&b| b == b'\n') {
        let line = &rest[..end];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        rest = &rest[end + 1..];
        if line.is_empty() {
            return (lines, rest);
        }
        lines.push(line);
    }
    (lines, rest)
}

fn check_request(data: &[u8]) {
    let Ok(head) = Head::request(data) else {
        return;
    };
    let framing = head.request_framing();
    let up = http::upstream_request(&head, "a.test", "/p");
    // A lenient reader sees one head, ending exactly at the end, with no folded line
    // and no CR left in any line.
    let (lines, after) = lenient_head(&up);
    assert!(
        after.is_empty(),
        "a second request upstream: {:?}",
        String::from_utf8_lossy(&up)
    );
    for line in &lines[1..] {
        assert!(
            !line.starts_with(b" ") && !line.starts_with(b"\t"),
            "a folded line upstream"
        );
    }
    assert!(
        lines.iter().all(|l| !l.contains(&b'\r')),
        "a bare CR upstream"
    );
    // The strict reader takes it again, with what the proxy meant.
    let again = Head::request(&up).unwrap_or_else(|e| {
        panic!(
            "the request sent upstream is refused ({e}): {:?}",
            String::from_utf8_lossy(&up)
        )
    });
    assert_eq!(again.start[0], head.start[0]);
    assert_eq!(again.start[1], "/p");
    assert_eq!(again.start[2], head.start[2]);
    let hosts: Vec<&str> = again.values("host").collect();
    assert_eq!(hosts, ["a.test"], "the Host upstream");
    let sent: Vec<(&str, &str)> = again
        .headers
        .iter()
        .copied()
        .filter(|(n, _)| !n.eq_ignore_ascii_case("host") && !n.eq_ignore_ascii_case("connection"))
        .collect();
    let kept: Vec<(&str, &str)> = head
        .headers
        .iter()
        .copied()
        .filter(|(n, _)| sent.iter().any(|(s, _)| s.eq_ignore_ascii_case(n)))
        .collect();
    assert_eq!(sent, kept, "the fields sent upstream are not the client's");
    match framing {
        Ok(Framing::Length(n)) => {
            let cl: Vec<&str> = again.values("content-length").collect();
            assert!(
                (n == 0 && cl.is_empty())
                    || cl == [n.to_string()]
                    || cl.len() == 1 && cl[0].parse() == Ok(n),
                "Content-Length upstream {cl:?} for a body of {n}"
            );
            assert_eq!(again.values("transfer-encoding").count(), 0);
            assert_eq!(again.request_framing(), Ok(Framing::Length(n)));
        }
        Ok(Framing::Chunked) => {
            assert_eq!(again.values("content-length").count(), 0);
            assert_eq!(again.request_framing(), Ok(Framing::Chunked));
        }
        Ok(Framing::UntilClose) => panic!("a request framed until close"),
        Err(_) => {}
    }
}

fn check_response(data: &[u8]) {
    let Ok(head) = Head::response(data) else {
        return;
    };
    let _ = head.response_framing(false);
    let down = http::downstream_response(&head);
    let again = Head::response(&down).expect("the response passed on is readable");
    assert_eq!(again.start, head.start);
}

/// The chunks of a chunked body by RFC 9112 (7.1), read independently: the data, and
/// how many bytes the body took; `None` when it is not a complete, valid body.
fn reference_chunks(b: &[u8]) -> Option<(Vec<u8>, usize)> {
    let line = |at: usize| -> Option<(&[u8], usize)> {
        let end = at + b.get(at..)?.windows(2).position(|w| w == b"\r\n")?;
        let l = &b[at..end];
        (!l.contains(&b'\n') && !l.contains(&b'\r') && l.len() <= 4094).then_some((l, end + 2))
    };
    let mut data = Vec::new();
    let mut at = 0;
    loop {
        let (l, next) = line(at)?;
        let hex = l.iter().take_while(|c| c.is_ascii_hexdigit()).count();
        if hex == 0 || hex > 15 {
            return None;
        }
        let ext = &l[hex..];
        let ext_ok = ext.iter().all(|&c| c == b' ' || c == b'\t')
            || (ext.iter().find(|&&c| c != b' ' && c != b'\t') == Some(&b';')
                && ext
                    .iter()
                    .all(|&c| c == b'\t' || (b' '..=b'~').contains(&c)));
        if !ext_ok {
            return None;
        }
        let size = u64::from_str_radix(std::str::from_utf8(&l[..hex]).ok()?, 16).ok()?;
        at = next;
        if size == 0 {
            loop {
                let (t, next) = line(at)?;
                at = next;
                if t.is_empty() {
                    return Some((data, at));
                }
                let t = std::str::from_utf8(t).ok()?;
                let (name, value) = t.split_once(':')?;
                let tchar = |c: u8| c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c);
                if name.is_empty()
                    || !name.bytes().all(tchar)
                    || value.chars().any(|c| c.is_control() && c != '\t')
                {
                    return None;
                }
            }
        }
        let size = usize::try_from(size).ok()?;
        let chunk = b.get(at..at.checked_add(size)?)?;
        data.extend_from_slice(chunk);
        at += size;
        if b.get(at..at + 2)? != b"\r\n" {
            return None;
        }
        at += 2;
    }
}

/// The proxy's own form of a chunked body carrying `data` in chunks of these sizes.
fn check_chunked(input: &[u8]) {
    let mut reader = input;
    let mut out = Vec::new();
    let copied = stream::copy_body(&mut reader, &mut out, Framing::Chunked);
    let reference = reference_chunks(input);
    match (copied, reference) {
        (Ok(()), Some((data, used))) => {
            assert_eq!(
                input.len() - reader.len(),
                used,
                "the copy stopped elsewhere than the body's end"
            );
            assert_eq!(
                reference_chunks(&out).map(|r| r.0),
                Some(data),
                "the copy carries other bytes"
            );
            let mut again = Vec::new();
            stream::copy_body(&mut &out[..], &mut again, Framing::Chunked)
                .expect("the proxy's own form is readable");
            assert_eq!(again, out, "the proxy's own form changed when copied again");
        }
        (Err(_), None) => {}
        (Ok(()), None) => panic!(
            "a chunked body the reference refuses was copied: {:?}",
            String::from_utf8_lossy(input)
        ),
        (Err(e), Some(_)) => panic!(
            "a valid chunked body was refused ({e}): {:?}",
            String::from_utf8_lossy(input)
        ),
    }
}

pub fn check(data: &[u8]) {
    check_request(data);
    check_response(data);
    check_chunked(data);
}
