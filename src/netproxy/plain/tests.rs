use super::*;

fn head(text: &str) -> Head<'_> {
    Head::request(text.as_bytes()).unwrap()
}
fn name(n: &str) -> Host {
    Host::Name(n.into())
}

#[test]
fn a_request_inside_a_tunnel_to_port_80_must_name_its_host() {
    let cdn = name("cdn.test");
    let ok = |t: &str| inside_tunnel(&head(t), &cdn);
    assert_eq!(
        ok("GET /a?b HTTP/1.1\r\nHost: cdn.test\r\n\r\n"),
        Ok("/a?b".into())
    );
    assert_eq!(
        ok("GET /a HTTP/1.1\r\nHost: CDN.test.:80\r\n\r\n"),
        Ok("/a".into())
    );
    assert_eq!(
        ok("GET http://cdn.test/x HTTP/1.1\r\nHost: cdn.test\r\n\r\n"),
        Ok("/x".into())
    );
    assert_eq!(ok("GET / HTTP/1.0\r\n\r\n"), Ok("/".into()));
    let refused = |t: &str, status: u16, words: &str| {
        let (s, line) = ok(t).unwrap_err();
        assert_eq!(s, status, "{t:?}: {line}");
        assert!(line.contains(words), "{t:?}: {line}");
    };
    let other = "a tunnel reaches only the host it was opened for";
    refused(
        "GET / HTTP/1.1\r\nHost: evil.test\r\n\r\n",
        403,
        "evil.test:80",
    );
    refused("GET / HTTP/1.1\r\nHost: cdn.test:8080\r\n\r\n", 403, other);
    refused("GET / HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\n", 403, other);
    refused(
        "GET http://evil.test/ HTTP/1.1\r\nHost: cdn.test\r\n\r\n",
        403,
        "evil.test:80",
    );
    refused(
        "GET http://cdn.test/ HTTP/1.1\r\nHost: evil.test\r\n\r\n",
        403,
        "evil.test:80",
    );
    refused(
        "CONNECT evil.test:443 HTTP/1.1\r\n\r\n",
        403,
        "evil.test:443",
    );
    refused("GET / HTTP/1.1\r\n\r\n", 400, "without Host");
    refused(
        "GET / HTTP/1.1\r\nHost: cdn.test\r\nHost: evil.test\r\n\r\n",
        400,
        "more than once",
    );
    refused("GET * HTTP/1.1\r\nHost: cdn.test\r\n\r\n", 400, "absolute");
    refused(
        "GET / HTTP/1.1\r\nHost: a b\r\n\r\n",
        400,
        "inside the tunnel",
    );
}
