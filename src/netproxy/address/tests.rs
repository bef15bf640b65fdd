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
