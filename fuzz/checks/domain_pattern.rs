//! The grammar of the domain lists: `netproxy::pattern::{Entry, Host}`, and the
//! `sandbox.resolve` entries (`netproxy::check_resolve`).
//!
//! Input: any bytes, as text (lossily). No parser may panic. What one accepts comes out
//! in a normal form that reads back as itself: a pattern or preset entry, a host as a
//! client writes it, a resolve entry. A name is lower-case ASCII letters, digits, `-`
//! and `_` in dot-separated labels of 1 to 63, with no trailing dot; an address pattern
//! is never one the proxy refuses to connect to; a pattern allows its own host on the
//! ports it says (443 when it names none, never 80 then).

use gate::netproxy::address;
use gate::netproxy::check_resolve;
use gate::netproxy::pattern::{Entry, Host, Hosts, List, Pattern, Ports};

fn check_name(name: &str) {
    assert!(!name.is_empty() && !name.ends_with('.'), "{name:?}");
    for label in name.split('.') {
        assert!((1..=63).contains(&label.len()), "a label of {name:?}");
        assert!(
            label
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_'),
            "{name:?}"
        );
    }
}

fn check_pattern(p: &Pattern) {
    let host = match &p.hosts {
        Hosts::Exact(n) => {
            check_name(n);
            Host::Name(n.clone())
        }
        Hosts::Below(n) => {
            check_name(n);
            assert!(
                !p.matches(List::Allow, &Host::Name(n.clone()), 443),
                "{p} covers its apex"
            );
            Host::Name(format!("a.{n}"))
        }
        Hosts::Ip(ip) => {
            assert_eq!(address::forbidden(*ip), None, "a pattern for {ip}");
            Host::Ip(*ip)
        }
    };
    let allows = |port| p.matches(List::Allow, &host, port);
    match p.ports {
        Ports::Default => {
            assert!(allows(443) && !allows(80) && !allows(8443), "{p}");
            assert!(p.matches(List::Deny, &host, 80), "{p}");
        }
        Ports::One(port) => assert!(allows(port) && (port == 443 || !allows(443)), "{p}"),
        Ports::Any => assert!(allows(1) && allows(80) && allows(65535), "{p}"),
    }
}

pub fn check(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(entry) = Entry::parse(&text) {
        let normal = entry.text();
        assert_eq!(
            Entry::parse(&normal).as_ref(),
            Ok(&entry),
            "{normal:?} reads as another entry"
        );
        match &entry {
            Entry::Pattern(p) => check_pattern(p),
            Entry::Preset(_, ps) => ps.iter().for_each(check_pattern),
        }
    }
    if let Ok(host) = Host::parse(&text) {
        assert_eq!(
            Host::parse(&host.to_string()),
            Ok(host.clone()),
            "{host} reads as another host"
        );
        if let Host::Name(n) = &host {
            check_name(n);
        }
    }
    if let Ok(normal) = check_resolve(&text) {
        assert_eq!(
            check_resolve(&normal).as_ref(),
            Ok(&normal),
            "{normal:?} is not normal"
        );
    }
}
