use super::*;

fn name(n: &str) -> Host {
    Host::Name(n.into())
}

#[test]
fn connect_targets_are_host_and_port() {
    assert_eq!(
        target("CONNECT", "Example.com:443"),
        Ok(Target::Connect(name("example.com"), 443))
    );
    assert_eq!(
        target("CONNECT", "[2606:4700::1]:8443"),
        Ok(Target::Connect(
            Host::Ip("2606:4700::1".parse().unwrap()),
            8443
        ))
    );
    assert!(target("CONNECT", "example.com").is_err());
    assert!(target("CONNECT", "example.com:0").is_err());
    assert!(target("CONNECT", "example.com:99999").is_err());
    assert!(target("CONNECT", "exa mple.com:443").is_err());
}

#[test]
fn absolute_urls_give_host_port_and_path() {
    let t = target("GET", "http://user:pw@Registry.Test:8080/a/b?c=1#frag").unwrap();
    assert_eq!(
        t,
        Target::Http {
            host: name("registry.test"),
            port: 8080,
            authority: "registry.test:8080".into(),
            path: "/a/b?c=1".into(),
        }
    );
    let t = target("GET", "HTTP://example.com").unwrap();
    assert!(
        matches!(t, Target::Http { port: 80, ref path, ref authority, .. } if path == "/" && authority == "example.com")
    );
    let t = target("GET", "http://example.com?x").unwrap();
    assert!(matches!(t, Target::Http { ref path, .. } if path == "/?x"));
    assert!(target("GET", "/relative").unwrap_err().contains("absolute"));
    assert!(
        target("GET", "https://example.com/")
            .unwrap_err()
            .contains("CONNECT")
    );
    assert!(target("GET", "http://:80/").is_err());
    assert!(target("GET", "http://evil.example@/").is_err());
}

#[test]
fn heads_parse_and_frame() {
    let raw = b"POST http://a.test/x HTTP/1.1\r\nHost: b.test\r\nContent-Length: 5\r\nConnection: keep-alive, X-Secret\r\nX-Secret: 1\r\nProxy-Authorization: no\r\nAccept: */*\r\n\r\n";
    assert_eq!(head_end(raw), Some(raw.len()));
    let h = Head::request(raw).unwrap();
    assert_eq!(h.start, ["POST", "http://a.test/x", "HTTP/1.1"]);
    assert_eq!(h.request_framing(), Ok(Framing::Length(5)));
    let up = String::from_utf8(upstream_request(&h, "a.test", "/x")).unwrap();
    assert_eq!(
        up,
        "POST /x HTTP/1.1\r\nHost: a.test\r\nContent-Length: 5\r\nAccept: */*\r\nConnection: close\r\n\r\n"
    );
}

#[test]
fn ambiguous_request_framing_is_refused() {
    let h = |t: &'static str| Head::request(t.as_bytes()).unwrap();
    let framing = |t: &'static str| h(t).request_framing();
    for (t, words) in [
        (
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
            "both",
        ),
        (
            "POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
            "both",
        ),
        (
            "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
            "more than once",
        ),
        (
            "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n",
            "more than once",
        ),
        (
            "POST / HTTP/1.1\r\nContent-Length: 3, 3\r\n\r\n",
            "malformed",
        ),
        ("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", "malformed"),
        ("POST / HTTP/1.1\r\nContent-Length: +3\r\n\r\n", "malformed"),
        (
            "POST / HTTP/1.1\r\nContent-Length: 0x3\r\n\r\n",
            "malformed",
        ),
        ("POST / HTTP/1.1\r\nContent-Length:\r\n\r\n", "malformed"),
        (
            "POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n",
            "malformed",
        ),
        (
            "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
            "chunked",
        ),
        (
            "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
            "chunked",
        ),
        (
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked, chunked\r\n\r\n",
            "chunked",
        ),
        (
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
            "chunked",
        ),
        (
            "POST / HTTP/1.1\r\nTransfer-Encoding: xchunked\r\n\r\n",
            "chunked",
        ),
        (
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked;q=1\r\n\r\n",
            "chunked",
        ),
        (
            "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
            "HTTP/1.0",
        ),
        (
            "POST / HTTP/1.1\r\nContent-Length: 3\r\nConnection: close, Content-Length\r\n\r\n",
            "Connection names",
        ),
        (
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nConnection: transfer-encoding\r\n\r\n",
            "Connection names",
        ),
    ] {
        let e = framing(t).unwrap_err();
        assert!(e.contains(words), "{t:?}: {e}");
    }
    assert_eq!(
        framing("POST / HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n"),
        Ok(Framing::Chunked)
    );
    assert_eq!(
        framing("POST / HTTP/1.1\r\ncontent-length: 007\r\n\r\n"),
        Ok(Framing::Length(7))
    );
    assert_eq!(framing("GET / HTTP/1.1\r\n\r\n"), Ok(Framing::Length(0)));
}

#[test]
fn a_request_head_is_read_strictly() {
    let good = "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nX-Tab:\tv\tw \r\nEmpty:\r\n\r\n";
    let h = Head::request(good.as_bytes()).unwrap();
    assert_eq!(
        h.headers,
        [("Host", "a.test"), ("X-Tab", "v\tw"), ("Empty", "")]
    );
    for (bad, words) in [
        // Bare LF and bare CR, anywhere: a second request for an upstream that
        // takes a bare LF for a line's end.
        (
            "GET http://a.test/ HTTP/1.1\r\nX: 1\n\nGET /x HTTP/1.1\nHost: evil.test\r\n\r\n",
            "bare LF",
        ),
        (
            "GET http://a.test/ HTTP/1.1\nHost: a.test\r\n\r\n",
            "bare LF",
        ),
        ("GET http://a.test/ HTTP/1.1\r\nHost: a.test\n\n", "bare LF"),
        (
            "GET http://a.test/ HTTP/1.1\r\nX: a\rHost: evil\r\n\r\n",
            "bare CR",
        ),
        ("GET http://a.test/ HTTP/1.1\r\r\n\r\n", "bare CR"),
        ("GET http://a.test/ HTTP/1.1\r\n\r", "CRLF"),
        (
            "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n",
            "blank line",
        ),
        // Control characters in a value.
        (
            "GET http://a.test/ HTTP/1.1\r\nX: a\x00b\r\n\r\n",
            "control",
        ),
        (
            "GET http://a.test/ HTTP/1.1\r\nX: a\x0bb\r\n\r\n",
            "control",
        ),
        (
            "GET http://a.test/ HTTP/1.1\r\nX: a\x7fb\r\n\r\n",
            "control",
        ),
        // obs-fold, and blanks between the start line and the first field.
        (
            "GET http://a.test/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n",
            "obs-fold",
        ),
        (
            "GET http://a.test/ HTTP/1.1\r\n\tHost: evil\r\n\r\n",
            "obs-fold",
        ),
        // Field names.
        (
            "GET http://a.test/ HTTP/1.1\r\nBad Header: x\r\n\r\n",
            "header name",
        ),
        (
            "GET http://a.test/ HTTP/1.1\r\nHost : x\r\n\r\n",
            "header name",
        ),
        ("GET http://a.test/ HTTP/1.1\r\n: x\r\n\r\n", "header name"),
        (
            "GET http://a.test/ HTTP/1.1\r\nX\"y: x\r\n\r\n",
            "header name",
        ),
        (
            "GET http://a.test/ HTTP/1.1\r\nNoColon\r\n\r\n",
            "header line",
        ),
        // Methods, targets, versions.
        ("G(T http://a.test/ HTTP/1.1\r\n\r\n", "method"),
        ("GET\thttp://a.test/ HTTP/1.1\r\n\r\n", "method"),
        ("GET  http://a.test/ HTTP/1.1\r\n\r\n", "target"),
        ("GET http://a.test/\x01 HTTP/1.1\r\n\r\n", "target"),
        (
            "GET http://a.test/ HTTP/1.1 \r\n\r\n",
            "HTTP/1.1 or HTTP/1.0",
        ),
        (
            "GET http://a.test/ HTTP/1.1 x\r\n\r\n",
            "HTTP/1.1 or HTTP/1.0",
        ),
        (
            "GET http://a.test/ HTTP/2.0\r\n\r\n",
            "HTTP/1.1 or HTTP/1.0",
        ),
        (
            "GET http://a.test/ http/1.1\r\n\r\n",
            "HTTP/1.1 or HTTP/1.0",
        ),
        (
            "GET http://a.test/ HTTP/1.10\r\n\r\n",
            "HTTP/1.1 or HTTP/1.0",
        ),
        ("GET http://a.test/\r\n\r\n", "HTTP/1.1 or HTTP/1.0"),
        ("GET /\r\n\r\n", "HTTP/1.1 or HTTP/1.0"),
        ("\r\n\r\n", "start line"),
    ] {
        let e = Head::request(bad.as_bytes()).unwrap_err();
        assert!(e.contains(words), "{bad:?}: {e}");
    }
    assert!(Head::request(b"GET / HTTP/1.1\r\nX: \xff\r\n\r\n").is_err());
}

#[test]
fn response_heads_are_read_with_the_same_line_rules() {
    let r = Head::response(b"HTTP/1.1 204\r\n\r\n").unwrap();
    assert_eq!(r.start, ["HTTP/1.1", "204", ""]);
    let r = Head::response(b"HTTP/1.0 404 Not  Found\r\n\r\n").unwrap();
    assert_eq!(r.start, ["HTTP/1.0", "404", "Not  Found"]);
    for bad in [
        &b"HTTP/1.1 200 OK\nX: 1\r\n\r\n"[..],
        b"HTTP/1.1 2000 OK\r\n\r\n",
        b"HTTP/1.1 20x OK\r\n\r\n",
        b"ICY 200 OK\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n",
    ] {
        assert!(
            Head::response(bad).is_err(),
            "{:?}",
            String::from_utf8_lossy(bad)
        );
    }
    let h = |t: &'static str| Head::response(t.as_bytes()).unwrap();
    let both = h("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n");
    assert!(both.response_framing(false).is_err());
    let two = h("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n");
    assert!(two.response_framing(false).is_err());
    let same = h("HTTP/1.1 200 OK\r\nContent-Length: 3, 3\r\n\r\n");
    assert_eq!(same.response_framing(false), Ok(Framing::Length(3)));
    let gz = h("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n");
    assert_eq!(gz.response_framing(false), Ok(Framing::UntilClose));
    let chunked = h("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n");
    assert_eq!(chunked.response_framing(false), Ok(Framing::Chunked));
    let none = h("HTTP/1.1 200 OK\r\n\r\n");
    assert_eq!(none.response_framing(false), Ok(Framing::UntilClose));
    assert_eq!(none.response_framing(true), Ok(Framing::Length(0)));
}

#[test]
fn chunk_sizes_are_hexadecimal_digits_and_extensions() {
    assert_eq!(chunk_size(b"1a"), Ok(26));
    assert_eq!(chunk_size(b"A;name=value"), Ok(10));
    assert_eq!(chunk_size(b"0 ; x=\"y z\""), Ok(0));
    for bad in [
        &b""[..],
        b"+1",
        b"-1",
        b"0x1",
        b" 1",
        b"1 2",
        b"1;\x00",
        b"1\r",
        b"1000000000000000",
        b"\xff",
    ] {
        assert!(
            chunk_size(bad).is_err(),
            "{:?}",
            String::from_utf8_lossy(bad)
        );
    }
}

#[test]
fn responses_are_closed_after_one() {
    let h = Head::response(b"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\nContent-Length: 2\r\n\r\n").unwrap();
    assert_eq!(
        String::from_utf8(downstream_response(&h)).unwrap(),
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n"
    );
}

#[test]
fn a_refusal_is_one_line_in_status_and_body() {
    let r = String::from_utf8(response(403, "Forbidden", "gate: x\r\ny")).unwrap();
    assert!(
        r.starts_with("HTTP/1.1 403 Forbidden: gate: x??y\r\n"),
        "{r}"
    );
    assert!(r.ends_with("\r\n\r\ngate: x??y\n"), "{r}");
}
