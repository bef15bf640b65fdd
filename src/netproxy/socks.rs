//! SOCKS5 (RFC 1928) as the proxy speaks it: no authentication, CONNECT only, to a
//! domain name (socks5h) or an address. Pure: bytes in, values out.

#![forbid(unsafe_code)]

use std::net::{Ipv4Addr, Ipv6Addr};

use super::pattern::Host;

pub const VERSION: u8 = 5;
pub const REPLY_OK: u8 = 0;
pub const REPLY_FAILURE: u8 = 1;
/// "connection not allowed by ruleset": the policy's refusal.
pub const REPLY_NOT_ALLOWED: u8 = 2;
pub const REPLY_HOST_UNREACHABLE: u8 = 4;
pub const REPLY_REFUSED: u8 = 5;
pub const REPLY_COMMAND: u8 = 7;
pub const REPLY_ADDRESS_TYPE: u8 = 8;

/// The method the proxy picks from a greeting (`VER NMETHODS METHODS…`), when it is
/// complete: `Some(0)` (no authentication) or `Some(0xff)` (none acceptable).
pub fn greeting(buf: &[u8]) -> Option<(u8, usize)> {
    let n = usize::from(*buf.get(1)?);
    let methods = buf.get(2..2 + n)?;
    Some((if methods.contains(&0) { 0 } else { 0xff }, 2 + n))
}

/// What a request asks for, once complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    Connect(Host, u16),
    /// A request the proxy answers with this reply code and closes.
    Refuse(u8),
}

/// Parses `VER CMD RSV ATYP ADDR PORT`; `None` until it is complete.
pub fn request(buf: &[u8]) -> Option<(Request, usize)> {
    let (ver, cmd, atyp) = (*buf.first()?, *buf.get(1)?, *buf.get(3)?);
    let (host, at) = match atyp {
        1 => {
            let b: [u8; 4] = buf.get(4..8)?.try_into().ok()?;
            (Ok(Host::Ip(Ipv4Addr::from(b).into())), 8)
        }
        3 => {
            let len = usize::from(*buf.get(4)?);
            let name = buf.get(5..5 + len)?;
            let host = std::str::from_utf8(name)
                .map_err(|_| ())
                .and_then(|n| Host::parse(n).map_err(|_| ()));
            (host, 5 + len)
        }
        4 => {
            let b: [u8; 16] = buf.get(4..20)?.try_into().ok()?;
            let ip = super::pattern::unmap(Ipv6Addr::from(b).into());
            (Ok(Host::Ip(ip)), 20)
        }
        _ => return Some((Request::Refuse(REPLY_ADDRESS_TYPE), buf.len())),
    };
    let port = u16::from_be_bytes(buf.get(at..at + 2)?.try_into().ok()?);
    let end = at + 2;
    Some((
        match (ver, cmd, host) {
            (VERSION, 1, Ok(host)) if port != 0 => Request::Connect(host, port),
            (VERSION, 1, _) => Request::Refuse(REPLY_HOST_UNREACHABLE),
            (VERSION, _, _) => Request::Refuse(REPLY_COMMAND),
            _ => Request::Refuse(REPLY_FAILURE),
        },
        end,
    ))
}

/// A reply with an all-zero bound address (clients of CONNECT do not use it).
pub fn reply(code: u8) -> [u8; 10] {
    [VERSION, code, 0, 1, 0, 0, 0, 0, 0, 0]
}

#[cfg(test)]
mod tests;
