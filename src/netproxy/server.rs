//! The proxy server: one loopback listener, one thread per connection. The first bytes
//! say what a client speaks: SOCKS5 (`0x05`), or HTTP (`CONNECT host:port` for a
//! tunnel, an absolute `http://` URL for a plain request: [`super::plain`]). Only peers
//! the supervisor registered are served. Every connection is one audit record.
//!
//! Here too: the check of a host and port against the policy, the lookup, and the
//! addresses never connected to unless the user mapped the name there (the ranges of
//! [`super::address`], and this machine's own addresses, read when the proxy starts
//! serving).

#![forbid(unsafe_code)]

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, SystemTime};

use serde_json::{Map, Value, json};

use super::address;
use super::dns::Resolver;
use super::http::{self, Framing};
use super::pattern::{self, Host};
use super::plain::{self, PLAIN_HTTP_PORT};
use super::policy::{Policy, Verdict};
use super::socks;
use super::splice::{self, Relayed};
use super::stream;

/// Each direction of a connection copies through one buffer of this size.
pub(super) const BUFFER: usize = 64 * 1024;
/// How long a client may take to send its request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a connection to a server may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// The peers the proxy serves: the local addresses of the sockets the supervisor made
/// for the command, each registered as soon as its connection is made. Each admits one
/// connection; a peer nobody registers within [`ADMIT_WAIT`] is dropped.
#[derive(Debug, Clone, Default)]
pub struct Admit(Arc<(Mutex<HashSet<SocketAddr>>, Condvar)>);

/// How long an accepted connection waits for its registration.
const ADMIT_WAIT: Duration = Duration::from_secs(2);

fn normal(addr: SocketAddr) -> SocketAddr {
    SocketAddr::new(pattern::unmap(addr.ip()), addr.port())
}

impl Admit {
    /// Admit one connection from `local` (the address of a socket gate made).
    pub fn register(&self, local: SocketAddr) {
        self.set().insert(normal(local));
        self.0.1.notify_all();
    }

    /// Take back a registration whose connection was never served.
    pub fn unregister(&self, local: SocketAddr) {
        self.set().remove(&normal(local));
    }

    /// Whether `peer` is registered (waiting up to `wait` for it), consuming it.
    fn take(&self, peer: SocketAddr, wait: Duration) -> bool {
        let peer = normal(peer);
        let deadline = std::time::Instant::now() + wait;
        let mut set = self.set();
        loop {
            if set.remove(&peer) {
                return true;
            }
            let now = std::time::Instant::now();
            if now >= deadline {
                return false;
            }
            set = match self.0.1.wait_timeout(set, deadline - now) {
                Ok((s, _)) => s,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }

    fn set(&self) -> std::sync::MutexGuard<'_, HashSet<SocketAddr>> {
        self.0
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A TCP connection to the proxy at `proxy` that the proxy admits: connected, then its
/// local address registered with `admit`. What the supervisor hands the command in
/// place of its own socket.
pub fn connect_registered(admit: &Admit, proxy: SocketAddr) -> io::Result<TcpStream> {
    let stream = TcpStream::connect(proxy)?;
    admit.register(stream.local_addr()?);
    Ok(stream)
}

/// Where the proxy's audit records go: the run's audit log, already open for
/// appending, and the ids that tie each record to the command's own record.
#[derive(Debug)]
pub struct Audit {
    pub file: File,
    pub call_id: String,
    pub session_id: String,
}

/// The proxy: a listener on a loopback port of its own, in the supervisor's process.
pub struct Proxy {
    listener: TcpListener,
    policy: Policy,
    resolver: Resolver,
    admit: Admit,
}

/// What every connection's thread reads.
pub(super) struct Shared {
    policy: Policy,
    resolver: Resolver,
    admit: Admit,
    audit: Option<(Mutex<File>, String, String)>,
    /// This machine's own addresses: never connected to for a name the user did not map.
    own: Vec<IpAddr>,
    /// Why they could not be read: then no address but a mapped one is connected to.
    own_unknown: Option<String>,
}

/// Every address of every interface of this machine (in the proxy's network
/// namespace), read once. A service bound to `0.0.0.0` or `::` answers on each of them,
/// also where a firewall hides it from the outside.
fn own_addresses() -> io::Result<Vec<IpAddr>> {
    let mut own = Vec::new();
    for interface in nix::ifaddrs::getifaddrs().map_err(io::Error::from)? {
        let Some(addr) = interface.address else {
            continue;
        };
        let ip = if let Some(v4) = addr.as_sockaddr_in() {
            IpAddr::V4(v4.ip())
        } else if let Some(v6) = addr.as_sockaddr_in6() {
            IpAddr::V6(v6.ip())
        } else {
            continue;
        };
        let ip = pattern::unmap(ip);
        if !own.contains(&ip) {
            own.push(ip);
        }
    }
    Ok(own)
}

impl Proxy {
    /// Binds 127.0.0.1 on a port the kernel picks, and reads the system's resolver
    /// files. Called before the sandbox applies.
    pub fn bind(policy: Policy) -> io::Result<Proxy> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        Ok(Proxy {
            listener,
            policy,
            resolver: Resolver::system(),
            admit: Admit::default(),
        })
    }

    /// The same proxy asking another resolver (tests).
    pub fn with_resolver(mut self, resolver: Resolver) -> Proxy {
        self.resolver = resolver;
        self
    }

    /// Where the proxy listens: the only address the command's connections may go to.
    pub fn addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The handle that registers the peers the proxy will serve.
    pub fn admit(&self) -> Admit {
        self.admit.clone()
    }

    /// Serves connections until the process ends, one audit record each to `audit`.
    /// First it reads this machine's addresses: in the supervisor, while the command
    /// starts, not on gate's way to exec it. A connection made meanwhile waits in the
    /// listener's queue.
    pub fn serve(self, audit: Option<Audit>) {
        let (own, own_unknown) = match own_addresses() {
            Ok(own) => (own, None),
            Err(e) => (Vec::new(), Some(e.to_string())),
        };
        let shared = Arc::new(Shared {
            policy: self.policy,
            resolver: self.resolver,
            admit: self.admit,
            audit: audit.map(|a| (Mutex::new(a.file), a.call_id, a.session_id)),
            own,
            own_unknown,
        });
        loop {
            let (stream, peer) = match self.listener.accept() {
                Ok(s) => s,
                Err(_) => {
                    // Out of descriptors or memory: wait instead of spinning.
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                }
            };
            let shared = Arc::clone(&shared);
            let _ = std::thread::Builder::new()
                .name("gate-proxy".into())
                .spawn(move || handle(&shared, stream, peer));
        }
    }
}

/// What happened to one connection, as audited.
pub(super) struct Event {
    pub(super) protocol: &'static str,
    host: Option<String>,
    port: Option<u16>,
    pub(super) decision: &'static str,
    pub(super) decided_by: &'static str,
    rule: Option<String>,
    address: Option<SocketAddr>,
    pub(super) message: Option<String>,
}

impl Event {
    pub(super) fn new(protocol: &'static str) -> Event {
        Event {
            protocol,
            host: None,
            port: None,
            decision: "deny",
            decided_by: "request",
            rule: None,
            address: None,
            message: None,
        }
    }
}

impl Shared {
    /// Writes the record. `false` when an audit log is configured and the record could
    /// not be written: then the connection is not made.
    pub(super) fn record(&self, peer: SocketAddr, e: &Event) -> bool {
        let Some((file, call_id, session_id)) = &self.audit else {
            return true;
        };
        let line = encode(e, peer, call_id, session_id, SystemTime::now());
        let mut file = file.lock().unwrap_or_else(|p| p.into_inner());
        crate::audit::write(&mut file, &line).is_ok()
    }
}

fn encode(
    e: &Event,
    peer: SocketAddr,
    call_id: &str,
    session_id: &str,
    now: SystemTime,
) -> Vec<u8> {
    let mut o = Map::new();
    o.insert("time".into(), json!(crate::audit::rfc3339(now)));
    o.insert("call_id".into(), json!(call_id));
    o.insert("session_id".into(), json!(session_id));
    o.insert("pid".into(), json!(std::process::id()));
    o.insert("uid".into(), json!(nix::unistd::getuid().as_raw()));
    o.insert("kind".into(), json!("connection"));
    o.insert("protocol".into(), json!(e.protocol));
    o.insert("peer".into(), json!(peer.to_string()));
    o.insert("host".into(), json!(e.host));
    o.insert("port".into(), json!(e.port));
    o.insert("decision".into(), json!(e.decision));
    o.insert("decided_by".into(), json!(e.decided_by));
    o.insert("rule".into(), json!(e.rule));
    o.insert("address".into(), json!(e.address.map(|a| a.to_string())));
    o.insert("message".into(), json!(e.message));
    let mut line = serde_json::to_vec(&Value::Object(o)).expect("a JSON map always encodes");
    line.push(b'\n');
    line
}

/// Why a connection was not made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Refusal {
    /// The policy refused it (403, SOCKS 2).
    Policy(String),
    /// The name resolved only to addresses outside the public internet (403, SOCKS 2).
    Address(String),
    /// The name has no address or could not be looked up (502, SOCKS 4).
    Resolve(String),
    /// No server answered (502, SOCKS 5).
    Connect(String),
}

impl Refusal {
    pub(super) fn line(&self) -> &str {
        match self {
            Refusal::Policy(l)
            | Refusal::Address(l)
            | Refusal::Resolve(l)
            | Refusal::Connect(l) => l,
        }
    }
    pub(super) fn http(&self) -> Vec<u8> {
        match self {
            Refusal::Policy(l) | Refusal::Address(l) => http::response(403, "Forbidden", l),
            Refusal::Resolve(l) | Refusal::Connect(l) => http::response(502, "Bad Gateway", l),
        }
    }
    fn socks(&self) -> u8 {
        match self {
            Refusal::Policy(_) | Refusal::Address(_) => socks::REPLY_NOT_ALLOWED,
            Refusal::Resolve(_) => socks::REPLY_HOST_UNREACHABLE,
            Refusal::Connect(_) => socks::REPLY_REFUSED,
        }
    }
}

/// The pattern that would allow `host` on `port`, as a user would write it.
fn suggestion(host: &Host, port: u16) -> String {
    if port == 443 {
        host.to_string()
    } else {
        format!("{host}:{port}")
    }
}

/// The refusal line for a verdict that is not an allow (pure).
fn refusal_line(verdict: &Verdict, host: &Host, port: u16) -> Option<String> {
    match verdict {
        Verdict::Allow(_) => None,
        Verdict::Deny(rule) => Some(format!(
            "gate refused {host}:{port}: sandbox.deny_domains has `{rule}` (a deny entry wins over --allow-domain and sandbox.allow_domains)"
        )),
        Verdict::Unlisted => {
            let s = suggestion(host, port);
            Some(format!(
                "gate refused {host}:{port}: not in sandbox.allow_domains; --allow-domain {s} or sandbox.allow_domains = [\"{s}\"] would allow it"
            ))
        }
    }
}

/// The addresses to connect to, or why there are none (pure but for the lookup).
fn addresses(shared: &Shared, host: &Host, port: u16) -> Result<Vec<SocketAddr>, Refusal> {
    let (ips, trusted) = match host {
        Host::Ip(ip) => (vec![*ip], false),
        Host::Name(name) => {
            let mapped = shared.policy.mapped(name);
            if mapped.is_empty() {
                let found = shared
                    .resolver
                    .lookup(name)
                    .map_err(|e| Refusal::Resolve(format!("gate could not resolve {host}: {e}")))?;
                (found, false)
            } else {
                (mapped, true)
            }
        }
    };
    if ips.is_empty() {
        return Err(Refusal::Resolve(format!(
            "gate could not resolve {host}: the name has no address"
        )));
    }
    if trusted {
        return Ok(ips
            .into_iter()
            .map(|ip| SocketAddr::new(ip, port))
            .collect());
    }
    if let Some(e) = &shared.own_unknown {
        return Err(Refusal::Address(format!(
            "gate refused {host}: gate's proxy could not read this machine's addresses ({e}), so it cannot tell them from the ones DNS gives; only names mapped with --resolve are reached"
        )));
    }
    let public: Vec<SocketAddr> = ips
        .iter()
        .filter(|ip| address::refused(**ip, &shared.own).is_none())
        .map(|ip| SocketAddr::new(*ip, port))
        .collect();
    if public.is_empty() {
        return Err(Refusal::Address(address_line(host, ips[0], &shared.own)));
    }
    Ok(public)
}

fn address_line(host: &Host, ip: IpAddr, own: &[IpAddr]) -> String {
    let kind = address::refused(ip, own).unwrap_or("a non-public");
    match host {
        Host::Name(name) => format!(
            "gate refused {host}: it resolves to {ip}, {kind} address; if that is meant, map the name yourself with --resolve {name}={ip} or sandbox.resolve = [\"{name}={ip}\"]"
        ),
        Host::Ip(_) => format!(
            "gate refused {host}: {kind} address; map a name to it with --resolve NAME={ip} or sandbox.resolve = [\"NAME={ip}\"] and allow NAME"
        ),
    }
}

/// Checks, resolves and connects, filling in the event.
pub(super) fn open(
    shared: &Shared,
    host: &Host,
    port: u16,
    e: &mut Event,
) -> Result<TcpStream, Refusal> {
    e.host = Some(host.to_string());
    e.port = Some(port);
    let verdict = shared.policy.check(host, port);
    if let Some(line) = refusal_line(&verdict, host, port) {
        (e.decided_by, e.rule) = match verdict {
            Verdict::Deny(rule) => ("deny_domains", Some(rule)),
            _ => ("unlisted", None),
        };
        return Err(Refusal::Policy(line));
    }
    if let Verdict::Allow(rule) = verdict {
        e.rule = Some(rule);
    }
    e.decision = "allow";
    e.decided_by = "allow_domains";
    let addrs = addresses(shared, host, port).inspect_err(|r| {
        if matches!(r, Refusal::Address(_)) {
            e.decision = "deny";
            e.decided_by = "address";
        }
    })?;
    let mut last = None;
    for addr in &addrs {
        match TcpStream::connect_timeout(addr, CONNECT_TIMEOUT) {
            Ok(s) => {
                e.address = Some(*addr);
                return Ok(s);
            }
            Err(err) => last = Some((*addr, err)),
        }
    }
    let (addr, err) = last.expect("at least one address");
    Err(Refusal::Connect(format!(
        "gate could not connect to {host}:{port} ({addr}): {err}"
    )))
}

fn handle(shared: &Shared, stream: TcpStream, peer: SocketAddr) {
    if !shared.admit.take(peer, ADMIT_WAIT) {
        let mut e = Event::new("unknown");
        e.decided_by = "peer";
        e.message = Some(format!(
            "{peer} is not a connection gate made for the command"
        ));
        shared.record(peer, &e);
        return;
    }
    let _ = stream.set_nodelay(true);
    let _ = stream.set_read_timeout(Some(REQUEST_TIMEOUT));
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut client = BufReader::with_capacity(BUFFER, read_half);
    let first = match client.fill_buf() {
        Ok([first, ..]) => *first,
        _ => return,
    };
    match first {
        socks::VERSION => serve_socks(shared, client, stream, peer),
        b'A'..=b'Z' => plain::serve_http(shared, client, stream, peer),
        _ => {
            let mut e = Event::new("unknown");
            e.message = Some("neither HTTP nor SOCKS5".into());
            shared.record(peer, &e);
        }
    }
}

/// Copies both ways until both ends are done: the client's side (with what it already
/// sent) on this thread, the server's on another.
pub(super) fn tunnel(mut client: BufReader<TcpStream>, out: TcpStream, mut upstream: TcpStream) {
    let _ = upstream.set_nodelay(true);
    let (Ok(up_read), Ok(mut out_write)) = (upstream.try_clone(), out.try_clone()) else {
        return;
    };
    let back = std::thread::Builder::new()
        .name("gate-proxy".into())
        .spawn(move || {
            let mut up_read = BufReader::with_capacity(BUFFER, up_read);
            pump(&mut up_read, &mut out_write);
        });
    pump(&mut client, &mut upstream);
    if let Ok(back) = back {
        let _ = back.join();
    }
    let _ = out.shutdown(Shutdown::Both);
}

/// Relays the rest of `from` (what it has buffered, then its socket) to `to`: all of
/// it, or `limit` bytes. The socket's part goes by splice(2) where it can.
pub(super) fn relay(
    from: &mut BufReader<TcpStream>,
    to: &mut TcpStream,
    limit: Option<u64>,
) -> io::Result<()> {
    let buffered = from.buffer();
    let take = limit.map_or(buffered.len(), |l| {
        buffered.len().min(usize::try_from(l).unwrap_or(usize::MAX))
    });
    to.write_all(&buffered[..take])?;
    from.consume(take);
    let rest = limit.map(|l| l - take as u64);
    if rest == Some(0) {
        return Ok(());
    }
    match splice::relay(from.get_ref(), to, rest)? {
        Relayed::Done(_) => Ok(()),
        Relayed::Unsupported => match rest {
            Some(n) => stream::copy_exact(from, to, n),
            None => stream::copy_body(from, to, Framing::UntilClose),
        },
    }
}

/// Copies until end of file, then passes the end on.
fn pump(from: &mut BufReader<TcpStream>, to: &mut TcpStream) {
    let result = relay(from, to, None);
    match result {
        Ok(()) => {
            let _ = to.shutdown(Shutdown::Write);
        }
        Err(_) => {
            let _ = to.shutdown(Shutdown::Both);
            let _ = from.get_ref().shutdown(Shutdown::Both);
        }
    }
}

fn serve_socks(
    shared: &Shared,
    mut client: BufReader<TcpStream>,
    mut out: TcpStream,
    peer: SocketAddr,
) {
    let mut e = Event::new("socks5");
    let mut read = |n: usize, buf: &mut Vec<u8>| -> io::Result<()> {
        let at = buf.len();
        buf.resize(at + n, 0);
        client.read_exact(&mut buf[at..])
    };
    let mut greeting = Vec::with_capacity(16);
    let parsed = read(2, &mut greeting)
        .and_then(|()| read(usize::from(greeting[1]), &mut greeting))
        .ok()
        .and_then(|()| socks::greeting(&greeting));
    let Some((method, _)) = parsed else {
        e.message = Some("a malformed SOCKS5 greeting".into());
        shared.record(peer, &e);
        return;
    };
    if out.write_all(&[socks::VERSION, method]).is_err() || method != 0 {
        e.message = Some("the SOCKS5 client offered no method without authentication".into());
        shared.record(peer, &e);
        return;
    }
    let mut req = Vec::with_capacity(300);
    let complete = read(4, &mut req).and_then(|()| match req[3] {
        1 => read(6, &mut req),
        4 => read(18, &mut req),
        3 => read(1, &mut req).and_then(|()| read(usize::from(req[4]) + 2, &mut req)),
        _ => Ok(()),
    });
    let request = complete.ok().and_then(|()| socks::request(&req));
    let (host, port) = match request {
        Some((socks::Request::Connect(host, port), _)) => (host, port),
        Some((socks::Request::Refuse(code), _)) => {
            e.message = Some(format!(
                "a SOCKS5 request gate does not serve (reply {code})"
            ));
            shared.record(peer, &e);
            let _ = out.write_all(&socks::reply(code));
            return;
        }
        None => {
            e.message = Some("a malformed SOCKS5 request".into());
            shared.record(peer, &e);
            return;
        }
    };
    let upstream = match open(shared, &host, port, &mut e) {
        Ok(u) => u,
        Err(r) => {
            e.message = Some(r.line().to_string());
            shared.record(peer, &e);
            let _ = out.write_all(&socks::reply(r.socks()));
            return;
        }
    };
    if port == PLAIN_HTTP_PORT {
        // Plain HTTP inside: recorded once its request is read.
        if out.write_all(&socks::reply(socks::REPLY_OK)).is_ok() {
            plain::serve_tunneled(shared, peer, client, out, upstream, &host, e);
        }
        return;
    }
    if !shared.record(peer, &e) {
        let _ = out.write_all(&socks::reply(socks::REPLY_FAILURE));
        return;
    }
    if out.write_all(&socks::reply(socks::REPLY_OK)).is_err() {
        return;
    }
    let _ = client.get_ref().set_read_timeout(None);
    tunnel(client, out, upstream);
}

#[cfg(test)]
mod tests;
