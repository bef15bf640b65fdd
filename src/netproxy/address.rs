//! Which addresses the proxy never connects to on its own: everything that is not the
//! public internet, and this machine's own addresses. An allowed name whose DNS answer
//! points into the local network (DNS rebinding, a name the model registered for
//! 127.0.0.1) or at this machine (a public address of one of its interfaces, where a
//! service bound to `0.0.0.0` answers that a firewall hides from the outside) is
//! refused here; only a name the user mapped with `sandbox.resolve` may reach such an
//! address.

#![forbid(unsafe_code)]

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The kind of non-public address `ip` is ("a loopback", "a private", …, written to
/// follow "is"), or `None` for a public one.
pub fn forbidden(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => forbidden_v4(v4),
        IpAddr::V6(v6) => forbidden_v6(v6),
    }
}

/// [`forbidden`], or this machine's own: one of `own` (the addresses of its
/// interfaces), where a service bound to every address answers.
pub fn refused(ip: IpAddr, own: &[IpAddr]) -> Option<&'static str> {
    forbidden(ip).or_else(|| own.contains(&ip).then_some("this machine's own"))
}

fn forbidden_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        (0, _, _) => "an unspecified (\"this network\")",
        (127, _, _) => "a loopback",
        (10, _, _) | (192, 168, _) => "a private",
        (172, 16..=31, _) => "a private",
        (100, 64..=127, _) => "a shared (CGNAT)",
        (169, 254, _) => "a link-local",
        (192, 0, 0) => "an IETF protocol",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "a documentation",
        (198, 18..=19, _) => "a benchmarking",
        (224..=239, _, _) => "a multicast",
        (240..=255, _, _) => "a reserved or broadcast",
        _ => return None,
    })
}

fn forbidden_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    if ip.is_unspecified() {
        return Some("an unspecified");
    }
    if ip.is_loopback() {
        return Some("a loopback");
    }
    // Forms that carry an IPv4 address are judged by it: v4-mapped (::ffff:a.b.c.d),
    // v4-compatible (::a.b.c.d), NAT64 (64:ff9b::a.b.c.d), 6to4 (2002:AABB:CCDD::).
    let embedded = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    if s[..5] == [0; 5] && s[5] == 0xffff {
        return forbidden_v4(embedded(s[6], s[7]));
    }
    if s[..6] == [0; 6] {
        return forbidden_v4(embedded(s[6], s[7])).or(Some("an IPv4-compatible"));
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return forbidden_v4(embedded(s[6], s[7]));
    }
    if s[0] == 0x64 && s[1] == 0xff9b {
        return Some("a local NAT64");
    }
    if s[0] == 0x2002 {
        return forbidden_v4(embedded(s[1], s[2]));
    }
    Some(match s[0] {
        0xfc00..=0xfdff => "a unique local (ULA)",
        0xfe80..=0xfebf => "a link-local",
        0xfec0..=0xfeff => "a site-local",
        0xff00..=0xffff => "a multicast",
        0x0100 if s[1..4] == [0, 0, 0] => "a discard",
        0x2001 if s[1] < 0x0200 => "an IETF protocol (Teredo, ORCHID, benchmarking)",
        0x2001 if s[1] == 0x0db8 => "a documentation",
        0x3fff if s[1] < 0x1000 => "a documentation",
        _ => return None,
    })
}

#[cfg(test)]
mod tests;
