//! Plain HTTP through the proxy: what arrives on the HTTP side of its port (`CONNECT
//! host:port`, or a request in absolute form, `GET http://host/path`).
//!
//! A plain request is one per connection: checked, sent on in origin form with the
//! checked host as `Host` and `Connection: close`, and its response relayed with
//! `Connection: close`, so the client's next request comes on a new connection (and is
//! checked). A tunnel carries bytes both ways unread.

#![forbid(unsafe_code)]

use std::io::{self, BufReader, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};

use super::http::{self, Framing, Head, Target};
use super::pattern::Host;
use super::server::{BUFFER, Event, Shared, open, relay, tunnel};
use super::stream;

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
            if !recorded(shared, peer, &e, &mut out) {
                return;
            }
            if out
                .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .is_err()
            {
                return;
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
