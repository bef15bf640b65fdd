//! Plain HTTP through the proxy: what arrives on the HTTP side of its port (`CONNECT
//! host:port`, or a request in absolute form, `GET http://host/path`), and the request
//! inside a tunnel to port 80.
//!
//! A plain request is one per connection: checked, sent on in origin form with the
//! checked host as `Host` and `Connection: close`, and its response relayed with
//! `Connection: close`, so the client's next request comes on a new connection (and is
//! checked). A tunnel to port 80 (by `CONNECT` or SOCKS5) carries plain HTTP to a
//! server that may front many sites (a CDN routes by `Host`): the request inside is
//! read like a plain one, its target and `Host` must name the tunnel's host, and it is
//! sent on the same way. Every other tunnel carries bytes both ways unread.

#![forbid(unsafe_code)]

use std::io::{self, BufRead, BufReader, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};

use super::http::{self, Framing, Head, Target};
use super::pattern::Host;
use super::server::{BUFFER, Event, Shared, open, relay, tunnel};
use super::stream;

/// The port whose tunnels carry plain HTTP, read like a plain request.
pub(super) const PLAIN_HTTP_PORT: u16 = 80;

/// [`open`] for an HTTP client: the upstream connection, or `None` once the client has
/// its answer (the refusal, recorded). A connection made is not recorded yet.
fn open_answered(
    shared: &Shared,
    peer: SocketAddr,
    host: &Host,
    port: u16,
    e: &mut Event,
    out: &mut TcpStream,
) -> Option<TcpStream> {
    match open(shared, host, port, e) {
        Err(r) => {
            e.message = Some(r.line().to_string());
            shared.record(peer, e);
            let _ = out.write_all(&r.http());
            None
        }
        Ok(upstream) => Some(upstream),
    }
}

/// Records an allowed connection; when the record cannot be written, answers 503 (and
/// `false`): nothing is relayed unrecorded.
fn recorded(shared: &Shared, peer: SocketAddr, e: &Event, out: &mut TcpStream) -> bool {
    if shared.record(peer, e) {
        return true;
    }
    let _ = out.write_all(&http::response(
        503,
        "Service Unavailable",
        "gate could not write the audit log, so nothing is relayed",
    ));
    false
}

/// Answers a request the proxy will not serve with `status`, and records why
/// (`decided_by` `request`).
fn refuse(
    shared: &Shared,
    peer: SocketAddr,
    e: &mut Event,
    out: &mut TcpStream,
    (status, line): (u16, String),
) {
    let phrase = match status {
        403 => "Forbidden",
        _ => "Bad Request",
    };
    let _ = out.write_all(&http::response(status, phrase, &line));
    e.decision = "deny";
    e.decided_by = "request";
    e.message = Some(line);
    shared.record(peer, e);
}

/// The line of a request the proxy could not read.
fn unreadable(err: impl std::fmt::Display) -> (u16, String) {
    (
        400,
        format!("gate's proxy could not read the request: {err}"),
    )
}

/// Serves a connection that speaks HTTP.
pub(super) fn serve_http(
    shared: &Shared,
    mut client: BufReader<TcpStream>,
    mut out: TcpStream,
    peer: SocketAddr,
) {
    let mut e = Event::new("http");
    let head_bytes = match stream::read_head(&mut client) {
        Ok(h) => h,
        Err(err) => {
            e.message = Some(err.to_string());
            shared.record(peer, &e);
            return;
        }
    };
    let head = match Head::request(&head_bytes) {
        Ok(h) => h,
        Err(err) => return refuse(shared, peer, &mut e, &mut out, unreadable(err)),
    };
    let target = match http::target(head.start[0], head.start[1]) {
        Ok(t) => t,
        Err(err) => return refuse(shared, peer, &mut e, &mut out, unreadable(err)),
    };
    match target {
        Target::Connect(host, port) => {
            e.protocol = "connect";
            let Some(upstream) = open_answered(shared, peer, &host, port, &mut e, &mut out) else {
                return;
            };
            if port != PLAIN_HTTP_PORT && !recorded(shared, peer, &e, &mut out) {
                return;
            }
            if out
                .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .is_err()
            {
                return;
            }
            if port == PLAIN_HTTP_PORT {
                return serve_tunneled(shared, peer, client, out, upstream, &host, e);
            }
            let _ = client.get_ref().set_read_timeout(None);
            tunnel(client, out, upstream);
        }
        Target::Http {
            host,
            port,
            authority,
            path,
        } => {
            let framing = match head.request_framing() {
                Ok(f) => f,
                Err(err) => return refuse(shared, peer, &mut e, &mut out, unreadable(err)),
            };
            let Some(upstream) = open_answered(shared, peer, &host, port, &mut e, &mut out) else {
                return;
            };
            if !recorded(shared, peer, &e, &mut out) {
                return;
            }
            let _ = forward(&head, framing, &authority, &path, client, out, upstream);
        }
    }
}

/// Serves the request inside a tunnel to `host` port 80, once the client has been told
/// the tunnel is open (`e`: the tunnel's event, allowed, not recorded yet).
pub(super) fn serve_tunneled(
    shared: &Shared,
    peer: SocketAddr,
    mut client: BufReader<TcpStream>,
    mut out: TcpStream,
    upstream: TcpStream,
    host: &Host,
    mut e: Event,
) {
    let inside = |err: String| {
        (
            400,
            format!(
                "gate's proxy could not read the request inside the tunnel to {host}:80: {err}"
            ),
        )
    };
    // TLS, or anything else that does not start like a request line, is refused at
    // once rather than read up to a line's end that never comes.
    let starts_a_request = match client.fill_buf() {
        Ok([first, ..]) => http::is_tchar(*first),
        _ => false,
    };
    if !starts_a_request {
        let what = "not an HTTP/1.x request (a tunnel to port 80 carries plain HTTP only)";
        return refuse(shared, peer, &mut e, &mut out, inside(what.into()));
    }
    let head_bytes = match stream::read_head(&mut client) {
        Ok(h) => h,
        Err(err) => return refuse(shared, peer, &mut e, &mut out, inside(err.to_string())),
    };
    let head = match Head::request(&head_bytes) {
        Ok(h) => h,
        Err(err) => return refuse(shared, peer, &mut e, &mut out, inside(err)),
    };
    let path = match inside_tunnel(&head, host) {
        Ok(p) => p,
        Err(refusal) => return refuse(shared, peer, &mut e, &mut out, refusal),
    };
    let framing = match head.request_framing() {
        Ok(f) => f,
        Err(err) => return refuse(shared, peer, &mut e, &mut out, inside(err)),
    };
    if !recorded(shared, peer, &e, &mut out) {
        return;
    }
    let _ = upstream.set_nodelay(true);
    let _ = forward(
        &head,
        framing,
        &host.to_string(),
        &path,
        client,
        out,
        upstream,
    );
}

/// The origin-form path of a request sent inside a tunnel to `host` port 80, or why it
/// is refused (status, line): its target and its `Host` must name the tunnel's host
/// (pure).
fn inside_tunnel(head: &Head<'_>, host: &Host) -> Result<String, (u16, String)> {
    let (method, target) = (head.start[0], head.start[1]);
    let other = |named: &Host, port: u16| {
        (
            403,
            format!(
                "gate refused {named}:{port} inside the tunnel to {host}:80: a tunnel reaches only the host it was opened for"
            ),
        )
    };
    let bad = |what: String| {
        (
            400,
            format!(
                "gate's proxy could not read the request inside the tunnel to {host}:80: {what}"
            ),
        )
    };
    let path = if target.starts_with('/') && method != "CONNECT" {
        target.to_string()
    } else {
        match http::target(method, target) {
            Ok(Target::Http {
                host: named,
                port,
                path,
                ..
            }) => {
                if named != *host || port != PLAIN_HTTP_PORT {
                    return Err(other(&named, port));
                }
                path
            }
            Ok(Target::Connect(named, port)) => return Err(other(&named, port)),
            Err(err) => return Err(bad(err)),
        }
    };
    let hosts: Vec<&str> = head.values("host").collect();
    match (hosts.as_slice(), head.start[2]) {
        ([], "HTTP/1.0") => {}
        ([], _) => return Err(bad("an HTTP/1.1 request without Host".into())),
        ([one], _) => {
            let (named, port) = http::host_header(one).map_err(bad)?;
            if named != *host || port != PLAIN_HTTP_PORT {
                return Err(other(&named, port));
            }
        }
        _ => return Err(bad("Host given more than once".into())),
    }
    Ok(path)
}

/// One plain HTTP request and its response.
fn forward(
    head: &Head<'_>,
    framing: Framing,
    authority: &str,
    path: &str,
    mut client: BufReader<TcpStream>,
    mut out: TcpStream,
    mut upstream: TcpStream,
) -> io::Result<()> {
    if http::expects_continue(head) {
        out.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
    }
    upstream.write_all(&http::upstream_request(head, authority, path))?;
    stream::copy_body(&mut client, &mut upstream, framing)?;
    let _ = client.get_ref().set_read_timeout(None);
    let mut server = BufReader::with_capacity(BUFFER, upstream.try_clone()?);
    loop {
        let raw = stream::read_head(&mut server)?;
        let response = Head::response(&raw).map_err(io::Error::other)?;
        let status: u16 = response.start[1]
            .parse()
            .map_err(|_| io::Error::other("a malformed status"))?;
        if (100..200).contains(&status) && status != 101 {
            out.write_all(&raw)?;
            continue;
        }
        if status == 101 {
            return Err(io::Error::other("an upgrade through the plain-HTTP proxy"));
        }
        let no_body = head.start[0] == "HEAD" || status == 204 || status == 304;
        let framing = response
            .response_framing(no_body)
            .map_err(io::Error::other)?;
        out.write_all(&http::downstream_response(&response))?;
        match framing {
            Framing::Length(n) => relay(&mut server, &mut out, Some(n))?,
            Framing::UntilClose => relay(&mut server, &mut out, None)?,
            Framing::Chunked => stream::copy_body(&mut server, &mut out, framing)?,
        }
        let _ = out.shutdown(Shutdown::Write);
        return Ok(());
    }
}

#[cfg(test)]
mod tests;
