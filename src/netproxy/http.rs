//! HTTP/1.x as the proxy sees it: request and response heads, the target of a request
//! (`CONNECT host:port`, or an absolute `http://` URL), and the framing of a body.
//! Pure: bytes in, values out.
//!
//! A request head is read strictly (RFC 9112), because what the proxy forwards must
//! mean to the server exactly what it meant to the proxy: an upstream that ends a line
//! at a bare LF (Python's http.server does) would otherwise read a second request,
//! with a `Host` of the client's choosing, inside a header value the proxy copied
//! (request smuggling). So every line ends in CRLF and holds no other CR or LF; the
//! method is a token, the version `HTTP/1.1` or `HTTP/1.0`; a field name is a token and
//! a value holds no control character but HTAB; a line that starts with a space or a
//! tab (obs-fold) is refused, as are a repeated or list-valued `Content-Length`, a
//! `Content-Length` beside `Transfer-Encoding`, any `Transfer-Encoding` but `chunked`
//! alone (and that only in HTTP/1.1), and a `Connection` that names either (the proxy
//! drops the fields `Connection` names, and the server would then read the body as the
//! next request). A response head is read with the same
//! line and field rules; its framing follows RFC 9112 section 6.3.

#![forbid(unsafe_code)]

use super::pattern::Host;

/// The most a request or response head may take.
pub const MAX_HEAD: usize = 64 * 1024;

/// Where the head ends (just past the blank line), if it has ended.
pub fn head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

/// A parsed head: the start line's three parts and the header fields.
///
/// For a request: method, request-target, version. For a response: version, status
/// code, reason phrase (which may be empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head<'a> {
    pub start: [&'a str; 3],
    pub headers: Fields<'a>,
}

/// Header fields as (name, value), in order.
type Fields<'a> = Vec<(&'a str, &'a str)>;

/// A `tchar` of RFC 9110: what methods and field names are made of.
pub fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Whether `s` is a token (one or more `tchar`).
pub fn is_token(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(is_tchar)
}

/// The lines of a head (its blank line included, at the end), each without its CRLF,
/// or why they are not CRLF lines: a bare CR or LF anywhere is refused.
fn crlf_lines(text: &str) -> Result<Vec<&str>, String> {
    let mut lines = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let Some(end) = rest.find('\n') else {
            return Err("a line without its CRLF".into());
        };
        let Some(line) = rest[..end].strip_suffix('\r') else {
            return Err("a bare LF (a line must end in CRLF)".into());
        };
        if line.contains('\r') {
            return Err("a bare CR".into());
        }
        lines.push(line);
        rest = &rest[end + 1..];
    }
    match lines.last() {
        Some(&"") => Ok(lines),
        _ => Err("a head that does not end in a blank line".into()),
    }
}

/// One field line, `name: value`, checked: the name a token, the value free of control
/// characters but HTAB; the value comes without its surrounding blanks.
pub fn field_line(line: &str) -> Result<(&str, &str), String> {
    if line.starts_with([' ', '\t']) {
        return Err("a header line folded onto the one before (obs-fold)".into());
    }
    let Some((name, value)) = line.split_once(':') else {
        return Err("a malformed header line".into());
    };
    if !is_token(name) {
        return Err("a malformed header name".into());
    }
    if value.chars().any(|c| c.is_control() && c != '\t') {
        return Err(format!(
            "a control character in the value of `{}`",
            name.escape_debug()
        ));
    }
    Ok((name, value.trim_matches([' ', '\t'])))
}

/// The version of an HTTP/1.x message, checked.
fn version(text: &str) -> Result<&str, String> {
    match text {
        "HTTP/1.1" | "HTTP/1.0" => Ok(text),
        _ => Err(format!(
            "`{}` is not HTTP/1.1 or HTTP/1.0",
            text.escape_debug()
        )),
    }
}

/// A start line's three parts, split at the first two spaces (the third keeps its
/// spaces: a reason phrase); a missing part is empty.
fn three_parts(start_line: &str) -> [&str; 3] {
    let mut parts = start_line.splitn(3, ' ');
    [
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    ]
}

impl<'a> Head<'a> {
    /// Parses a request head (with its blank line), strictly: see the module's notes.
    pub fn request(buf: &'a [u8]) -> Result<Head<'a>, String> {
        let (start_line, headers) = Head::lines(buf)?;
        let start = three_parts(start_line);
        if !is_token(start[0]) {
            return Err("a malformed start line (the method is not a token)".into());
        }
        if start[1].is_empty() || !start[1].bytes().all(|b| b.is_ascii_graphic()) {
            return Err("a malformed start line (the request target)".into());
        }
        version(start[2])?;
        Ok(Head { start, headers })
    }

    /// Parses a response head (with its blank line): the lines and fields as a
    /// request's; the status line is a version, a three-digit code and a phrase.
    pub fn response(buf: &'a [u8]) -> Result<Head<'a>, String> {
        let (start_line, headers) = Head::lines(buf)?;
        let start = three_parts(start_line);
        version(start[0])?;
        if start[1].len() != 3 || !start[1].bytes().all(|b| b.is_ascii_digit()) {
            return Err("a malformed status line".into());
        }
        if start[2].chars().any(|c| c.is_control() && c != '\t') {
            return Err("a control character in the status line".into());
        }
        Ok(Head { start, headers })
    }

    /// The start line and the checked fields of a head.
    fn lines(buf: &'a [u8]) -> Result<(&'a str, Fields<'a>), String> {
        let text = std::str::from_utf8(buf).map_err(|_| "the head is not UTF-8".to_string())?;
        let lines = crlf_lines(text)?;
        let (start, fields) = lines.split_first().expect("a blank line at least");
        if start.is_empty() {
            return Err("a malformed start line".into());
        }
        let fields = &fields[..fields.len() - 1];
        let headers = fields
            .iter()
            .map(|l| field_line(l))
            .collect::<Result<Vec<_>, _>>()?;
        Ok((start, headers))
    }

    /// The values of header `name` (any case).
    pub fn values(&self, name: &str) -> impl Iterator<Item = &'a str> + '_ {
        let name = name.to_string();
        self.headers
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(&name))
            .map(|(_, v)| *v)
    }

    /// How the body of this request is framed, refusing anything two readers could
    /// take differently (see the module's notes).
    pub fn request_framing(&self) -> Result<Framing, String> {
        // A field `Connection` names is not sent on: were it the framing, the server
        // would read the body as the next request.
        if self
            .values("connection")
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .any(|t| {
                t.eq_ignore_ascii_case("content-length")
                    || t.eq_ignore_ascii_case("transfer-encoding")
            })
        {
            return Err("Connection names Content-Length or Transfer-Encoding".into());
        }
        let te: Vec<&str> = self.values("transfer-encoding").collect();
        let cl: Vec<&str> = self.values("content-length").collect();
        match (te.as_slice(), cl.as_slice()) {
            ([], []) => Ok(Framing::Length(0)),
            ([], [one]) => content_length(one).map(Framing::Length),
            ([], _) => Err("Content-Length given more than once".into()),
            (_, [_, ..]) => Err("both Transfer-Encoding and Content-Length".into()),
            ([_], []) if self.start[2] == "HTTP/1.0" => {
                Err("Transfer-Encoding in an HTTP/1.0 request".into())
            }
            ([one], []) if one.eq_ignore_ascii_case("chunked") => Ok(Framing::Chunked),
            _ => Err("a Transfer-Encoding other than `chunked` alone".into()),
        }
    }

    /// How the body of this response is framed (RFC 9112, 6.3). `no_body` for
    /// responses that never have one (to HEAD, 1xx, 204, 304).
    pub fn response_framing(&self, no_body: bool) -> Result<Framing, String> {
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
            return Ok(if last.eq_ignore_ascii_case("chunked") {
                Framing::Chunked
            } else {
                Framing::UntilClose
            });
        }
        let mut length = None;
        for v in cl.iter().flat_map(|v| v.split(',')).map(str::trim) {
            let n = content_length(v)?;
            if length.is_some_and(|l| l != n) {
                return Err("Content-Length values that differ".into());
            }
            length = Some(n);
        }
        Ok(length.map_or(Framing::UntilClose, Framing::Length))
    }
}

/// One Content-Length value: digits only.
fn content_length(v: &str) -> Result<u64, String> {
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return Err("a malformed Content-Length".into());
    }
    v.parse()
        .map_err(|_| "a malformed Content-Length".to_string())
}

/// The size of a chunk from its size line (without the CRLF): hexadecimal digits, and
/// extensions after `;` that are dropped (the proxy writes each chunk anew).
pub fn chunk_size(line: &[u8]) -> Result<u64, String> {
    let digits = line.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    let (size, rest) = line.split_at(digits);
    if size.is_empty() || size.len() > 15 {
        return Err("a malformed chunk size".into());
    }
    let rest_ok = match rest.iter().position(|b| !matches!(b, b' ' | b'\t')) {
        None => true,
        Some(i) => {
            rest[i] == b';'
                && rest
                    .iter()
                    .all(|&b| b == b'\t' || (b' '..=b'~').contains(&b))
        }
    };
    if !rest_ok {
        return Err("a malformed chunk extension".into());
    }
    let text = std::str::from_utf8(size).expect("hexadecimal digits");
    u64::from_str_radix(text, 16).map_err(|_| "a malformed chunk size".into())
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

/// The host and port a `Host` header names (port 80 when it names none).
pub fn host_header(value: &str) -> Result<(Host, u16), String> {
    authority(value, Some(80))
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
mod tests;
