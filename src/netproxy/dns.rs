//! A small stub resolver of the proxy's own: `/etc/hosts`, then the name servers of
//! `/etc/resolv.conf` over UDP (TCP when the answer is truncated), A and AAAA only.
//!
//! Why not getaddrinfo: gate is built as a static glibc binary, whose getaddrinfo loads
//! NSS modules at run time (and may find none, or mismatched ones); and glibc's
//! resolver reads `HOSTALIASES`, `LOCALDOMAIN` and `RES_OPTIONS` from the environment,
//! which the model controls (the supervisor inherits gate's). This resolver reads only
//! the two system files, once, when the proxy starts; it applies no search domains (a
//! name the policy allowed is the name looked up, never `name.corp.example`), and
//! every address it returns is still checked against the private ranges by the proxy.

#![forbid(unsafe_code)]

use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream, UdpSocket};
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(3);
/// The record types asked for (A, AAAA) and followed (CNAME).
pub const TYPE_A: u16 = 1;
const TYPE_CNAME: u16 = 5;
pub const TYPE_AAAA: u16 = 28;

/// Where names are looked up.
#[derive(Debug, Clone, Default)]
pub struct Resolver {
    /// `/etc/hosts`, as (address, lower-case names) lines.
    hosts: Vec<(IpAddr, Vec<String>)>,
    servers: Vec<SocketAddr>,
    /// How long to wait for each answer.
    timeout: Duration,
}

impl Resolver {
    /// The system's: `/etc/hosts` and `/etc/resolv.conf`, read now. A missing file is
    /// an empty one (and no `nameserver` line means the local one, as for libc).
    pub fn system() -> Resolver {
        let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
        Resolver::from_files(&read("/etc/hosts"), &read("/etc/resolv.conf"))
    }

    /// From the texts of a hosts file and a resolv.conf.
    pub fn from_files(hosts: &str, resolv_conf: &str) -> Resolver {
        let mut servers: Vec<SocketAddr> = resolv_conf
            .lines()
            .filter_map(|l| {
                let mut words = l.split_whitespace();
                (words.next() == Some("nameserver")).then(|| words.next())?
            })
            .filter_map(|a| a.split('%').next()?.parse::<IpAddr>().ok())
            .map(|ip| SocketAddr::new(ip, 53))
            .take(3)
            .collect();
        if servers.is_empty() {
            servers.push(SocketAddr::from((Ipv4Addr::LOCALHOST, 53)));
        }
        Resolver {
            hosts: parse_hosts(hosts),
            servers,
            timeout: TIMEOUT,
        }
    }

    /// Name servers to ask, replacing the system's (tests).
    pub fn with_servers(mut self, servers: Vec<SocketAddr>, timeout: Duration) -> Resolver {
        self.servers = servers;
        self.timeout = timeout;
        self
    }

    /// The addresses of `name` (normal form: lower case, no trailing dot), IPv4 first.
    /// An empty list means the name does not exist.
    pub fn lookup(&self, name: &str) -> io::Result<Vec<IpAddr>> {
        let from_hosts: Vec<IpAddr> = self
            .hosts
            .iter()
            .filter(|(_, names)| names.iter().any(|n| n == name))
            .map(|(ip, _)| *ip)
            .collect();
        if !from_hosts.is_empty() {
            return Ok(from_hosts);
        }
        let mut out = Vec::new();
        let mut last_error = None;
        for qtype in [TYPE_A, TYPE_AAAA] {
            match self.query_all(name, qtype) {
                Ok(found) => out.extend(found),
                Err(e) => last_error = Some(e),
            }
        }
        match (out.is_empty(), last_error) {
            (true, Some(e)) => Err(e),
            _ => Ok(out),
        }
    }

    fn query_all(&self, name: &str, qtype: u16) -> io::Result<Vec<IpAddr>> {
        let mut last = io::Error::new(io::ErrorKind::NotFound, "no name server");
        for server in &self.servers {
            match query(*server, name, qtype, self.timeout) {
                Ok(found) => return Ok(found),
                Err(e) => last = e,
            }
        }
        Err(last)
    }
}

fn parse_hosts(text: &str) -> Vec<(IpAddr, Vec<String>)> {
    text.lines()
        .filter_map(|line| {
            let line = line.split('#').next().unwrap_or_default();
            let mut words = line.split_whitespace();
            let ip = words.next()?.split('%').next()?.parse::<IpAddr>().ok()?;
            let names: Vec<String> = words
                .map(|n| n.trim_end_matches('.').to_ascii_lowercase())
                .collect();
            (!names.is_empty()).then_some((super::pattern::unmap(ip), names))
        })
        .collect()
}

/// One question to one server: UDP, and TCP when the answer was truncated.
fn query(server: SocketAddr, name: &str, qtype: u16, timeout: Duration) -> io::Result<Vec<IpAddr>> {
    let mut id = [0u8; 2];
    crate::random::fill(&mut id)?;
    let id = u16::from_be_bytes(id);
    let message = build_query(id, name, qtype)?;
    let local: SocketAddr = match server {
        SocketAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, 0).into(),
        SocketAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, 0).into(),
    };
    let udp = UdpSocket::bind(local)?;
    // connect() makes the kernel drop datagrams from any other source.
    udp.connect(server)?;
    udp.set_read_timeout(Some(timeout))?;
    let mut buf = [0u8; 1500];
    for _attempt in 0..2 {
        udp.send(&message)?;
        loop {
            let n = match udp.recv(&mut buf) {
                Ok(n) => n,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    break;
                }
                Err(e) => return Err(e),
            };
            match parse_answer(&buf[..n], id, name, qtype) {
                Ok(Answer::Truncated) => {
                    return query_tcp(server, &message, id, name, qtype, timeout);
                }
                Ok(Answer::Addresses(a)) => return Ok(a),
                // Not the answer to this question (a stray or forged datagram): wait on.
                Err(Malformed::NotOurs) => continue,
                Err(Malformed::Bad(e)) => {
                    return Err(io::Error::new(io::ErrorKind::InvalidData, e));
                }
            }
        }
    }
    Err(io::Error::new(
        io::ErrorKind::TimedOut,
        format!("the name server {server} did not answer"),
    ))
}

fn query_tcp(
    server: SocketAddr,
    message: &[u8],
    id: u16,
    name: &str,
    qtype: u16,
    timeout: Duration,
) -> io::Result<Vec<IpAddr>> {
    let mut s = TcpStream::connect_timeout(&server, timeout)?;
    s.set_read_timeout(Some(timeout))?;
    s.set_write_timeout(Some(timeout))?;
    let len = u16::try_from(message.len()).expect("a query is short");
    let mut framed = len.to_be_bytes().to_vec();
    framed.extend_from_slice(message);
    s.write_all(&framed)?;
    let mut len = [0u8; 2];
    s.read_exact(&mut len)?;
    let mut buf = vec![0u8; usize::from(u16::from_be_bytes(len))];
    s.read_exact(&mut buf)?;
    match parse_answer(&buf, id, name, qtype) {
        Ok(Answer::Addresses(a)) => Ok(a),
        Ok(Answer::Truncated) => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "a truncated answer over TCP",
        )),
        Err(Malformed::NotOurs) | Err(Malformed::Bad(_)) => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a malformed answer from {server}"),
        )),
    }
}

/// The question for `name` (normal form) of type `qtype`, with recursion desired.
pub fn build_query(id: u16, name: &str, qtype: u16) -> io::Result<Vec<u8>> {
    let mut m = Vec::with_capacity(18 + name.len());
    m.extend_from_slice(&id.to_be_bytes());
    m.extend_from_slice(&[0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]); // RD; one question
    for label in name.split('.') {
        let len = u8::try_from(label.len())
            .ok()
            .filter(|l| (1..=63).contains(l))
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a host name"))?;
        m.push(len);
        m.extend_from_slice(label.as_bytes());
    }
    m.push(0);
    m.extend_from_slice(&qtype.to_be_bytes());
    m.extend_from_slice(&1u16.to_be_bytes()); // IN
    Ok(m)
}

/// What a name server's message says about the question.
#[derive(Debug, PartialEq, Eq)]
pub enum Answer {
    Addresses(Vec<IpAddr>),
    Truncated,
}

/// Why a message is not taken.
#[derive(Debug, PartialEq, Eq)]
pub enum Malformed {
    /// Another id, not a response, or another question.
    NotOurs,
    Bad(String),
}

fn bad(what: &str) -> Malformed {
    Malformed::Bad(format!("a malformed DNS answer ({what})"))
}

struct Reader<'a> {
    m: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn u8(&mut self) -> Result<u8, Malformed> {
        let b = *self.m.get(self.at).ok_or_else(|| bad("short"))?;
        self.at += 1;
        Ok(b)
    }
    fn u16(&mut self) -> Result<u16, Malformed> {
        Ok(u16::from_be_bytes([self.u8()?, self.u8()?]))
    }
    fn bytes(&mut self, n: usize) -> Result<&[u8], Malformed> {
        let end = self.at.checked_add(n).ok_or_else(|| bad("short"))?;
        let b = self.m.get(self.at..end).ok_or_else(|| bad("short"))?;
        self.at = end;
        Ok(b)
    }
    /// A (possibly compressed) name, lower case, dot-separated.
    fn name(&mut self) -> Result<String, Malformed> {
        let mut out = String::new();
        let mut at = self.at;
        let mut jumped = false;
        for _ in 0..128 {
            let len = *self.m.get(at).ok_or_else(|| bad("short name"))?;
            match len {
                0 => {
                    if !jumped {
                        self.at = at + 1;
                    }
                    return Ok(out);
                }
                l if l & 0xc0 == 0xc0 => {
                    let lo = *self.m.get(at + 1).ok_or_else(|| bad("short pointer"))?;
                    if !jumped {
                        self.at = at + 2;
                    }
                    jumped = true;
                    at = (usize::from(l & 0x3f) << 8) | usize::from(lo);
                }
                l if l & 0xc0 == 0 => {
                    let l = usize::from(l);
                    let label = self
                        .m
                        .get(at + 1..at + 1 + l)
                        .ok_or_else(|| bad("short label"))?;
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.extend(label.iter().map(|b| char::from(b.to_ascii_lowercase())));
                    at += 1 + l;
                }
                _ => return Err(bad("label type")),
            }
        }
        Err(bad("a name loop"))
    }
}

/// Reads a name server's message `m` as the answer to question `id` for `name` of type
/// `qtype`: the addresses of `name`, followed through CNAME records from it only. The
/// message comes from the network (a forged one too), so nothing in it is trusted: a
/// bad one is an error, never a panic.
pub fn parse_answer(m: &[u8], id: u16, name: &str, qtype: u16) -> Result<Answer, Malformed> {
    let mut r = Reader { m, at: 0 };
    let got_id = r.u16().map_err(|_| Malformed::NotOurs)?;
    let flags = r.u16().map_err(|_| Malformed::NotOurs)?;
    if got_id != id || flags & 0x8000 == 0 {
        return Err(Malformed::NotOurs);
    }
    let qd = r.u16()?;
    let an = r.u16()?;
    r.u16()?;
    r.u16()?;
    if qd != 1 {
        return Err(Malformed::NotOurs);
    }
    let (qname, qt, _class) = (r.name()?, r.u16()?, r.u16()?);
    if qname != name || qt != qtype {
        return Err(Malformed::NotOurs);
    }
    if flags & 0x0200 != 0 {
        return Ok(Answer::Truncated);
    }
    match flags & 0x000f {
        0 => {}
        3 => return Ok(Answer::Addresses(Vec::new())), // NXDOMAIN
        rcode => {
            return Err(Malformed::Bad(format!(
                "the name server answered error {rcode}"
            )));
        }
    }
    let mut cnames: Vec<(String, String)> = Vec::new();
    let mut addresses: Vec<(String, IpAddr)> = Vec::new();
    for _ in 0..an {
        let owner = r.name()?;
        let (rtype, _class) = (r.u16()?, r.u16()?);
        r.bytes(4)?; // TTL
        let len = usize::from(r.u16()?);
        let start = r.at;
        match rtype {
            // Only records of the type asked: an AAAA in the answer to an A question
            // (or the reverse) is no answer to it.
            TYPE_A if qtype == TYPE_A && len == 4 => {
                let b: [u8; 4] = r.bytes(4)?.try_into().expect("4 bytes");
                addresses.push((owner, IpAddr::from(b)));
            }
            TYPE_AAAA if qtype == TYPE_AAAA && len == 16 => {
                let b: [u8; 16] = r.bytes(16)?.try_into().expect("16 bytes");
                addresses.push((owner, super::pattern::unmap(IpAddr::from(b))));
            }
            TYPE_CNAME => {
                let target = r.name()?;
                cnames.push((owner, target));
            }
            _ => {}
        }
        r.at = start;
        r.bytes(len)?;
    }
    // Follow the chain from the name asked: only records about it, or about the names
    // it is an alias of, count (a server's extra records about other names do not).
    let mut current = name.to_string();
    for _ in 0..16 {
        let found: Vec<IpAddr> = addresses
            .iter()
            .filter(|(owner, _)| *owner == current)
            .map(|(_, ip)| *ip)
            .collect();
        if !found.is_empty() {
            return Ok(Answer::Addresses(found));
        }
        match cnames.iter().find(|(owner, _)| *owner == current) {
            Some((_, target)) => current = target.clone(),
            None => break,
        }
    }
    Ok(Answer::Addresses(Vec::new()))
}

#[cfg(test)]
mod tests;
