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
mod tests {
    use super::*;

    fn kind(text: &str) -> Option<&'static str> {
        forbidden(text.parse().unwrap())
    }

    #[test]
    fn the_public_internet_is_allowed() {
        for a in [
            "1.1.1.1",
            "8.8.8.8",
            "9.255.255.255",
            "11.0.0.0",
            "100.63.255.255",
            "100.128.0.0",
            "126.255.255.255",
            "128.0.0.0",
            "169.253.255.255",
            "172.15.255.255",
            "172.32.0.0",
            "192.0.1.255",
            "192.167.255.255",
            "192.169.0.0",
            "198.17.255.255",
            "198.20.0.0",
            "223.255.255.255",
            "2606:4700::1111",
            "2a00:1450:4001::200e",
            "2001:4860:4860::8888",
            "2002:808:808::1",
            "64:ff9b::808:808",
            "::ffff:8.8.8.8",
        ] {
            assert_eq!(kind(a), None, "{a}");
        }
    }

    #[test]
    fn this_machines_own_addresses_are_refused_too() {
        let own: Vec<IpAddr> = ["11.22.33.44", "2a00:1450::44"]
            .iter()
            .map(|a| a.parse().unwrap())
            .collect();
        for a in ["11.22.33.44", "2a00:1450::44"] {
            assert_eq!(
                refused(a.parse().unwrap(), &own),
                Some("this machine's own"),
                "{a}"
            );
            assert_eq!(refused(a.parse().unwrap(), &[]), None, "{a}");
        }
        assert_eq!(refused("11.22.33.45".parse().unwrap(), &own), None);
        assert_eq!(
            refused("127.0.0.1".parse().unwrap(), &own),
            Some("a loopback")
        );
        assert_eq!(refused("0.0.0.0".parse().unwrap(), &own), kind("0.0.0.0"));
        assert_eq!(refused("::".parse().unwrap(), &own), Some("an unspecified"));
    }

    #[test]
    fn everything_local_is_refused_and_named() {
        for (a, k) in [
            ("0.0.0.0", "unspecified"),
            ("0.1.2.3", "unspecified"),
            ("127.0.0.1", "loopback"),
            ("127.255.255.254", "loopback"),
            ("10.0.0.1", "private"),
            ("172.16.0.1", "private"),
            ("172.31.255.255", "private"),
            ("192.168.1.1", "private"),
            ("100.64.0.1", "CGNAT"),
            ("100.127.255.255", "CGNAT"),
            ("169.254.169.254", "link-local"),
            ("192.0.0.8", "IETF"),
            ("192.0.2.1", "documentation"),
            ("198.51.100.1", "documentation"),
            ("203.0.113.9", "documentation"),
            ("198.18.0.1", "benchmarking"),
            ("224.0.0.1", "multicast"),
            ("239.255.255.250", "multicast"),
            ("240.0.0.1", "reserved"),
            ("255.255.255.255", "broadcast"),
            ("::", "unspecified"),
            ("::1", "loopback"),
            ("::ffff:127.0.0.1", "loopback"),
            ("::ffff:10.0.0.1", "private"),
            ("::ffff:0.0.0.0", "unspecified"),
            ("::127.0.0.1", "loopback"),
            ("::8.8.8.8", "IPv4-compatible"),
            ("64:ff9b::7f00:1", "loopback"),
            ("64:ff9b:1::1", "NAT64"),
            ("2002:7f00:1::", "loopback"),
            ("2002:a00:1::1", "private"),
            ("fc00::1", "ULA"),
            ("fd12:3456::1", "ULA"),
            ("fe80::1", "link-local"),
            ("febf::1", "link-local"),
            ("fec0::1", "site-local"),
            ("ff02::1", "multicast"),
            ("100::1", "discard"),
            ("2001::1", "IETF"),
            ("2001:db8::1", "documentation"),
            ("3fff::1", "documentation"),
        ] {
            let got = kind(a).unwrap_or_else(|| panic!("{a} was allowed"));
            assert!(got.contains(k), "{a}: {got}");
        }
    }
}
