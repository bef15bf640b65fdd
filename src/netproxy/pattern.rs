//! The grammar of a domain list entry, the host names the proxy is asked for, and the
//! presets (data: `presets.txt`).
//!
//! An entry is one of:
//! - `host`: that host exactly, on port 443 (in `deny_domains`: every port);
//! - `*.host`: every subdomain of `host`, not `host` itself (write both for both);
//! - either with `:PORT` (that port only) or `:*` (every port). Port 80 is never a
//!   default: plain HTTP to a name that fronts many sites (a CDN) reaches whichever site
//!   the request's `Host` names, so it is allowed only when written (`host:80`);
//! - a public IP address (`8.8.8.8`, `[2606:4700::1111]:443`), matched only when a
//!   client asks for that literal address;
//! - `@NAME`: a preset, the patterns under `[NAME]` in `presets.txt`.
//!
//! Names are compared in lower case without a trailing dot. Only ASCII names are
//! accepted: an internationalised name is written in its punycode (`xn--…`) form,
//! which is what clients send. No pattern can name a private, loopback or other
//! non-public address: the proxy never connects to one unless `sandbox.resolve` maps a
//! name to it.

#![forbid(unsafe_code)]

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::address;

/// The presets, as shipped.
const PRESETS: &str = include_str!("presets.txt");

/// A host a client asked for, in normal form.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Host {
    /// A DNS name: lower case, no trailing dot, ASCII labels.
    Name(String),
    /// An IP address literal (a v4-mapped IPv6 address is kept as its IPv4 address).
    Ip(IpAddr),
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Name(n) => f.write_str(n),
            Host::Ip(IpAddr::V6(a)) => write!(f, "[{a}]"),
            Host::Ip(a) => write!(f, "{a}"),
        }
    }
}

impl Host {
    /// Parses a host as a client writes it: a name, an IPv4 address, or an IPv6 address
    /// with or without brackets.
    pub fn parse(text: &str) -> Result<Host, String> {
        let inner = text
            .strip_prefix('[')
            .and_then(|t| t.strip_suffix(']'))
            .unwrap_or(text);
        if let Ok(v6) = inner.parse::<Ipv6Addr>() {
            return Ok(Host::Ip(unmap(IpAddr::V6(v6))));
        }
        if inner.len() != text.len() {
            return Err(format!("`{}` is not an IPv6 address", inner.escape_debug()));
        }
        if let Ok(v4) = text.parse::<Ipv4Addr>() {
            return Ok(Host::Ip(IpAddr::V4(v4)));
        }
        name(text).map(Host::Name)
    }
}

/// A v4-mapped IPv6 address as the IPv4 address it stands for.
pub fn unmap(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(v6),
        },
        v4 => v4,
    }
}

/// A DNS name in normal form, or why it is not one.
fn name(text: &str) -> Result<String, String> {
    let shown = text.escape_debug();
    if !text.is_ascii() {
        return Err(format!(
            "`{shown}` is not ASCII; write an internationalised name in its punycode form (xn--…)"
        ));
    }
    let t = text.strip_suffix('.').unwrap_or(text);
    if t.is_empty() {
        return Err("an empty host name".into());
    }
    if t.len() > 253 {
        return Err(format!("`{shown}` is longer than a host name can be (253)"));
    }
    let lower = t.to_ascii_lowercase();
    for label in lower.split('.') {
        if label.is_empty() || label.len() > 63 {
            return Err(format!(
                "`{shown}` is not a host name (each dot-separated label has 1 to 63 characters)"
            ));
        }
        if let Some(c) = label
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_'))
        {
            return Err(format!(
                "`{shown}` is not a host name (`{}` is not a letter, digit, `-` or `_`)",
                c.escape_debug()
            ));
        }
        if label.starts_with('-') || label.ends_with('-') {
            return Err(format!(
                "`{shown}` is not a host name (a label cannot begin or end with `-`)"
            ));
        }
    }
    // A numeric last label is no DNS name: it is an address in a form some resolvers
    // read (`2130706433`, `127.1`, `0x7f.1`), which gate does not.
    let last = lower.rsplit('.').next().unwrap_or_default();
    if last.chars().all(|c| c.is_ascii_digit())
        || (last.starts_with("0x") && last[2..].chars().all(|c| c.is_ascii_hexdigit()))
    {
        return Err(format!(
            "`{shown}` is neither a host name nor an IP address in dotted or bracketed form"
        ));
    }
    Ok(lower)
}

/// Which ports a pattern covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ports {
    /// None written: 443 in an allow list, every port in a deny list.
    Default,
    One(u16),
    Any,
}

/// Which hosts a pattern covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hosts {
    Exact(String),
    /// Subdomains of this name, not the name itself.
    Below(String),
    Ip(IpAddr),
}

/// One checked pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    pub hosts: Hosts,
    pub ports: Ports,
}

/// Which list a pattern is in: the default ports differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum List {
    Allow,
    Deny,
}

impl Pattern {
    /// Parses one pattern (not a preset).
    pub fn parse(text: &str) -> Result<Pattern, String> {
        let shown = text.escape_debug();
        let (host, port) = split_port(text)?;
        let ports = match port {
            None => Ports::Default,
            Some("*") => Ports::Any,
            Some(p) => match p.parse::<u16>() {
                Ok(n) if n > 0 && p.chars().all(|c| c.is_ascii_digit()) => Ports::One(n),
                _ => {
                    return Err(format!(
                        "`{shown}`: `{}` is not a port (1 to 65535, or `*` for every port)",
                        p.escape_debug()
                    ));
                }
            },
        };
        if host == "*" {
            return Err(format!(
                "`{shown}` would allow every domain; allow the whole network with --net / \
                 sandbox.network instead"
            ));
        }
        let hosts = if let Some(rest) = host.strip_prefix("*.") {
            if rest.contains('*') {
                return Err(format!("`{shown}`: `*.` must be followed by a domain name"));
            }
            match Host::parse(rest).map_err(|e| format!("`{shown}`: {e}"))? {
                Host::Name(n) if !n.contains('*') => Hosts::Below(n),
                _ => {
                    return Err(format!("`{shown}`: `*.` must be followed by a domain name"));
                }
            }
        } else if host.contains('*') {
            return Err(format!(
                "`{shown}`: `*` may only stand first, as `*.domain` (every subdomain)"
            ));
        } else {
            let named = |e: String| {
                if host == text {
                    e
                } else {
                    format!("`{shown}`: {e}")
                }
            };
            match Host::parse(host).map_err(named)? {
                Host::Name(n) => Hosts::Exact(n),
                Host::Ip(ip) => {
                    if let Some(kind) = address::forbidden(ip) {
                        return Err(format!(
                            "`{shown}` is {kind} address, which the proxy never connects to \
                             by address; map a name to it with sandbox.resolve = \
                             [\"NAME={ip}\"] (or --resolve NAME={ip}) and allow NAME"
                        ));
                    }
                    Hosts::Ip(ip)
                }
            }
        };
        Ok(Pattern { hosts, ports })
    }

    /// Whether this pattern, in `list`, covers `host` on `port`.
    pub fn matches(&self, list: List, host: &Host, port: u16) -> bool {
        let host_ok = match (&self.hosts, host) {
            (Hosts::Exact(p), Host::Name(h)) => p == h,
            (Hosts::Below(p), Host::Name(h)) => {
                h.len() > p.len() + 1 && h.ends_with(p.as_str()) && {
                    let cut = h.len() - p.len() - 1;
                    h.as_bytes()[cut] == b'.'
                }
            }
            (Hosts::Ip(p), Host::Ip(h)) => p == h,
            _ => false,
        };
        host_ok
            && match (self.ports, list) {
                (Ports::Any, _) | (Ports::Default, List::Deny) => true,
                (Ports::Default, List::Allow) => port == 443,
                (Ports::One(p), _) => p == port,
            }
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.hosts {
            Hosts::Exact(n) => f.write_str(n)?,
            Hosts::Below(n) => write!(f, "*.{n}")?,
            Hosts::Ip(ip) => write!(f, "{}", Host::Ip(*ip))?,
        }
        match self.ports {
            Ports::Default => Ok(()),
            Ports::One(p) => write!(f, ":{p}"),
            Ports::Any => f.write_str(":*"),
        }
    }
}

/// Splits `host[:port]` and `[v6][:port]`.
fn split_port(text: &str) -> Result<(&str, Option<&str>), String> {
    if text.starts_with('[') {
        let Some(end) = text.find(']') else {
            return Err(format!("`{}` has `[` without `]`", text.escape_debug()));
        };
        let (host, rest) = text.split_at(end + 1);
        return match rest {
            "" => Ok((host, None)),
            r => match r.strip_prefix(':') {
                Some(p) => Ok((host, Some(p))),
                None => Err(format!(
                    "`{}`: only `:PORT` may follow `]`",
                    text.escape_debug()
                )),
            },
        };
    }
    match text.matches(':').count() {
        0 => Ok((text, None)),
        1 => {
            let (h, p) = text.split_once(':').expect("one colon");
            Ok((h, Some(p)))
        }
        _ => Err(format!(
            "`{}`: write an IPv6 address in brackets, `[ADDRESS]` or `[ADDRESS]:PORT`",
            text.escape_debug()
        )),
    }
}

/// The names of the presets, in file order.
pub fn preset_names() -> impl Iterator<Item = &'static str> {
    PRESETS
        .lines()
        .filter_map(|l| l.trim().strip_prefix('[').and_then(|l| l.strip_suffix(']')))
}

/// The pattern texts of preset `name` (without the `@`), or `None` when there is none.
pub fn preset(name: &str) -> Option<Vec<&'static str>> {
    let mut found = None;
    for line in PRESETS.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(section) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            if found.is_some() {
                break;
            }
            if section == name {
                found = Some(Vec::new());
            }
        } else if let Some(list) = found.as_mut() {
            list.push(line);
        }
    }
    found
}

/// One entry of a list: a pattern, or a preset expanded to its patterns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Pattern(Pattern),
    Preset(&'static str, Vec<Pattern>),
}

impl Entry {
    pub fn parse(text: &str) -> Result<Entry, String> {
        let t = text.trim();
        if t.is_empty() {
            return Err("an empty domain pattern".into());
        }
        if let Some(c) = t.chars().find(|c| c.is_whitespace() || c.is_control()) {
            return Err(format!(
                "`{}` is not a domain pattern (it contains `{}`)",
                text.escape_debug(),
                c.escape_debug()
            ));
        }
        if let Some(name) = t.strip_prefix('@') {
            let lower = name.to_ascii_lowercase();
            let Some(texts) = preset(&lower) else {
                let known: Vec<String> = preset_names().map(|n| format!("@{n}")).collect();
                return Err(format!(
                    "`{}` is not a preset (the presets are {})",
                    t.escape_debug(),
                    known.join(", ")
                ));
            };
            let name = preset_names()
                .find(|n| *n == lower)
                .expect("a preset found is named");
            let patterns = texts
                .iter()
                .map(|p| Pattern::parse(p))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("preset @{name}: {e}"))?;
            return Ok(Entry::Preset(name, patterns));
        }
        Pattern::parse(t).map(Entry::Pattern)
    }

    /// Its normal form, as settings keep it.
    pub fn text(&self) -> String {
        match self {
            Entry::Pattern(p) => p.to_string(),
            Entry::Preset(name, _) => format!("@{name}"),
        }
    }
}

#[cfg(test)]
mod tests;
