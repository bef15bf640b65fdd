//! HTTP/1.x as the proxy sees it: request and response heads, the target of a request
//! (`CONNECT host:port`, or an absolute `http://` URL), and the framing of a body.
//! Pure: bytes in, values out.

#![forbid(unsafe_code)]

use super::pattern::Host;

/// The most a request or response head may take.
pub const MAX_HEAD: usize = 64 * 1024;

/// Where the head ends (just past the blank line), if it has ended.
pub fn head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

/// A parsed head: the start line's three parts and the header fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head<'a> {
    pub start: [&'a str; 3],
    pub headers: Vec<(&'a str, &'a str)>,
}

impl<'a> Head<'a> {
    /// Parses a head (with its blank line).
    pub fn parse(buf: &'a [u8]) -> Result<Head<'a>, String> {
        let text = std::str::from_utf8(buf).map_err(|_| "the head is not UTF-8".to_string())?;
        let mut lines = text.split("\r\n");
        let start_line = lines.next().unwrap_or_default();
        let mut parts = start_line.splitn(3, ' ');
        let start = [
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or_default(),
        ];
        if start.iter().any(|p| p.is_empty()) {
            return Err("a malformed start line".into());
        }
        let mut headers = Vec::new();
        for line in lines {
            if line.is_empty() {
                break;
            }
            let Some((name, value)) = line.split_once(':') else {
                return Err("a malformed header line".into());
            };
            if name.is_empty() || name.contains([' ', '\t']) {
                return Err("a malformed header name".into());
            }
            headers.push((name, value.trim_matches([' ', '\t'])));
        }
        Ok(Head { start, headers })
    }

    /// The values of header `name` (any case).
    pub fn values(&self, name: &str) -> impl Iterator<Item = &'a str> + '_ {
        let name = name.to_string();
        self.headers
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(&name))
            .map(|(_, v)| *v)
    }

    /// How a body that follows this head is framed. `no_body` for responses that
    /// never have one (to HEAD, 1xx, 204, 304).
    pub fn framing(&self, no_body: bool, is_request: bool) -> Result<Framing, String> {
        if no_body {
            return Ok(Framing::Length(0));
        }
        let te: Vec<&str> = self.values("transfer-encoding").collect();
        let cl: Vec<&str> = self.values("content-length").collect();
        if !te.is_empty() {
            if !cl.is_empty() {
                return Err("both Transfer-Encoding and Content-Length".into());
            }
            let last = te
                .iter()
                .flat_map(|v| v.split(','))
                .map(str::trim)
                .next_back()
                .unwrap_or_default();
            return if last.eq_ignore_ascii_case("chunked") {
                Ok(Framing::Chunked)
            } else if is_request {
                Err("a Transfer-Encoding other than chunked".into())
            } else {
                Ok(Framing::UntilClose)
            };
        }
        let mut length = None;
        for v in cl.iter().flat_map(|v| v.split(',')).map(str::trim) {
            if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
                return Err("a malformed Content-Length".into());
            }
            let n: u64 = v
                .parse()
                .map_err(|_| "a malformed Content-Length".to_string())?;
            if length.is_some_and(|l| l != n) {
                return Err("Content-Length values that differ".into());
            }
            length = Some(n);
        }
        Ok(match length {
            Some(n) => Framing::Length(n),
            None if is_request => Framing::Length(0),
            None => Framing::UntilClose,
        })
    }
}

/// How a body is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    Length(u64),
    Chunked,
    /// A response that ends when the server closes.
    UntilClose,
}

/// What a request asks the proxy for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `CONNECT host:port`: a tunnel.
    Connect(Host, u16),
    /// An absolute `http://` URL: the host, port, and the origin-form path to send on.
    Http {
        host: Host,
        port: u16,
        authority: String,
        path: String,
    },
}

/// The target of a request line (method, request-target).
pub fn target(method: &str, target: &str) -> Result<Target, String> {
    if method == "CONNECT" {
        let (host, port) = authority(target, None)?;
        return Ok(Target::Connect(host, port));
    }
    let Some(rest) = strip_prefix_ignore_case(target, "http://") else {
        return Err(if strip_prefix_ignore_case(target, "https://").is_some() {
            "an https:// URL sent to the proxy in plain text (clients use CONNECT for https)".into()
        } else {
            format!(
                "`{}` is not an absolute http:// URL (point the client at the proxy as a proxy)",
                target.escape_debug()
            )
        });
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (auth, path) = rest.split_at(end);
    let auth = auth.rsplit_once('@').map_or(auth, |(_, a)| a);
    let (host, port) = authority(auth, Some(80))?;
    let path = match path.split('#').next().unwrap_or_default() {
        "" => "/".to_string(),
        p if p.starts_with('?') => format!("/{p}"),
        p => p.to_string(),
    };
    let authority = if port == 80 {
        host.to_string()
    } else {
        format!("{host}:{port}")
    };
    Ok(Target::Http {
        host,
        port,
        authority,
        path,
    })
}

fn strip_prefix_ignore_case<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    (s.len() >= prefix.len() && s[..prefix.len()].eq_ignore_ascii_case(prefix))
        .then(|| &s[prefix.len()..])
}

/// `host:port`, `[v6]:port`; the port may be left out only when `default` is given.
fn authority(text: &str, default: Option<u16>) -> Result<(Host, u16), String> {
    let shown = text.escape_debug();
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (h, after) = rest
            .split_once(']')
            .ok_or_else(|| format!("`{shown}` has `[` without `]`"))?;
        (h, after.strip_prefix(':'))
    } else {
        match text.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (text, None),
        }
    };
    let port = match (port, default) {
        (Some(p), _) => p
            .parse::<u16>()
            .ok()
            .filter(|n| *n > 0 && p.bytes().all(|b| b.is_ascii_digit()))
            .ok_or_else(|| format!("`{shown}` has no valid port"))?,
        (None, Some(d)) => d,
        (None, None) => return Err(format!("`{shown}` is not HOST:PORT")),
    };
    let host = Host::parse(host).map_err(|e| format!("`{shown}`: {e}"))?;
    Ok((host, port))
}

/// Header fields a proxy must not pass on (hop-by-hop), and the ones gate sets itself.
fn hop_by_hop(head: &Head<'_>) -> Vec<String> {
    let mut names: Vec<String> = [
        "connection",
        "keep-alive",
        "proxy-connection",
        "proxy-authorization",
        "proxy-authenticate",
        "te",
        "upgrade",
        "expect",
        "host",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for v in head.values("connection") {
        names.extend(v.split(',').map(|t| t.trim().to_ascii_lowercase()));
    }
    names
}

/// The request as sent to the server: origin form, the URL's host as `Host`, one
/// request per connection.
pub fn upstream_request(head: &Head<'_>, authority: &str, path: &str) -> Vec<u8> {
    let drop = hop_by_hop(head);
    let mut out = Vec::with_capacity(512);
    out.extend_from_slice(
        format!(
            "{} {} {}\r\nHost: {authority}\r\n",
            head.start[0], path, head.start[2]
        )
        .as_bytes(),
    );
    for (n, v) in &head.headers {
        if !drop.iter().any(|d| n.eq_ignore_ascii_case(d)) {
            out.extend_from_slice(format!("{n}: {v}\r\n").as_bytes());
        }
    }
    out.extend_from_slice(b"Connection: close\r\n\r\n");
    out
}

/// The response head as passed back to the client: it closes the connection after
/// this response, so the client's next request comes on a new one (and is checked).
pub fn downstream_response(head: &Head<'_>) -> Vec<u8> {
    let drop = ["connection", "keep-alive", "proxy-connection"];
    let mut out = Vec::with_capacity(512);
    out.extend_from_slice(
        format!("{} {} {}\r\n", head.start[0], head.start[1], head.start[2]).as_bytes(),
    );
    for (n, v) in &head.headers {
        if !drop.iter().any(|d| n.eq_ignore_ascii_case(d)) {
            out.extend_from_slice(format!("{n}: {v}\r\n").as_bytes());
        }
    }
    out.extend_from_slice(b"Connection: close\r\n\r\n");
    out
}

/// Whether the client asked for `100 Continue` before sending its body.
pub fn expects_continue(head: &Head<'_>) -> bool {
    head.values("expect")
        .any(|v| v.eq_ignore_ascii_case("100-continue"))
}

/// A refusal or error response: the one-line reason is both the status line's phrase
/// and the body.
pub fn response(status: u16, phrase: &str, line: &str) -> Vec<u8> {
    let safe: String = line
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() || c == ' ' {
                c
            } else {
                '?'
            }
        })
        .collect();
    let body = format!("{safe}\n");
    format!(
        "HTTP/1.1 {status} {phrase}: {safe}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
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
        let h = Head::parse(raw).unwrap();
        assert_eq!(h.start, ["POST", "http://a.test/x", "HTTP/1.1"]);
        assert_eq!(h.framing(false, true), Ok(Framing::Length(5)));
        let up = String::from_utf8(upstream_request(&h, "a.test", "/x")).unwrap();
        assert_eq!(
            up,
            "POST /x HTTP/1.1\r\nHost: a.test\r\nContent-Length: 5\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        );
    }

    #[test]
    fn ambiguous_framing_is_refused() {
        let h = |t: &'static str| Head::parse(t.as_bytes()).unwrap();
        let both = h("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n");
        assert!(both.framing(false, true).is_err());
        let two = h("POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n");
        assert!(two.framing(false, true).is_err());
        let same = h("POST / HTTP/1.1\r\nContent-Length: 3, 3\r\n\r\n");
        assert_eq!(same.framing(false, true), Ok(Framing::Length(3)));
        let neg = h("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n");
        assert!(neg.framing(false, true).is_err());
        let gz = h("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n");
        assert!(gz.framing(false, true).is_err());
        let chunked = h("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n");
        assert_eq!(chunked.framing(false, true), Ok(Framing::Chunked));
        let none = h("GET / HTTP/1.1\r\n\r\n");
        assert_eq!(none.framing(false, true), Ok(Framing::Length(0)));
        assert_eq!(none.framing(false, false), Ok(Framing::UntilClose));
        assert_eq!(none.framing(true, false), Ok(Framing::Length(0)));
        assert!(Head::parse(b"GET /\r\n\r\n").is_err());
        assert!(Head::parse(b"GET / HTTP/1.1\r\nBad Header: x\r\n\r\n").is_err());
        assert!(Head::parse(b"GET / HTTP/1.1\r\nNoColon\r\n\r\n").is_err());
    }

    #[test]
    fn responses_are_closed_after_one() {
        let h = Head::parse(b"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\nContent-Length: 2\r\n\r\n").unwrap();
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
}
