//! The policy: which host and port a command may reach, by which rule, and which names
//! the user mapped to addresses of their own choosing (`sandbox.resolve`).
//!
//! Pure: the lists come from the settings, which only gate's configuration and gate's
//! own options can set.

#![forbid(unsafe_code)]

use std::net::IpAddr;

use super::pattern::{Entry, Host, List, Pattern};

/// One pattern and the list entry it came from (itself, or the preset it is part of).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Rule {
    entry: String,
    pattern: Pattern,
}

impl Rule {
    /// How the rule is named in the audit log and in refusals.
    fn name(&self) -> String {
        let p = self.pattern.to_string();
        if self.entry == p {
            p
        } else {
            format!("{} ({p})", self.entry)
        }
    }
}

/// Which host names (and ports) the proxy lets a command reach.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Policy {
    allow: Vec<Rule>,
    deny: Vec<Rule>,
    resolve: Vec<(String, IpAddr)>,
}

/// The policy's answer for one host and port.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub enum Verdict {
    /// Allowed by this `allow_domains` rule.
    Allow(String),
    /// Refused by this `deny_domains` rule (deny beats allow).
    Deny(String),
    /// In neither list: refused.
    Unlisted,
}

fn rules(list: &[String]) -> Result<Vec<Rule>, String> {
    let mut out = Vec::new();
    for text in list {
        match Entry::parse(text)? {
            Entry::Pattern(pattern) => out.push(Rule {
                entry: pattern.to_string(),
                pattern,
            }),
            Entry::Preset(name, patterns) => {
                out.extend(patterns.into_iter().map(|pattern| Rule {
                    entry: format!("@{name}"),
                    pattern,
                }));
            }
        }
    }
    Ok(out)
}

impl Policy {
    /// From the settings' lists (already checked by [`check_pattern`](super::check_pattern)).
    pub fn new(allow: &[String], deny: &[String]) -> Result<Policy, String> {
        Ok(Policy {
            allow: rules(allow)?,
            deny: rules(deny)?,
            resolve: Vec::new(),
        })
    }

    /// With the user's name-to-address mapping (`sandbox.resolve`, `--resolve`; entries
    /// already checked by [`check_resolve`]). A mapped name resolves to its addresses
    /// only, and those may be private or loopback: the user named them.
    pub fn with_resolve(mut self, entries: &[String]) -> Result<Policy, String> {
        for text in entries {
            let (name, ip) = parse_resolve(text)?;
            self.resolve.push((name, ip));
        }
        Ok(self)
    }

    /// The policy for a run's sandbox settings: both lists and the mapping.
    pub fn from_settings(s: &crate::config::SandboxSettings) -> Result<Policy, String> {
        Policy::new(&s.allow_domains, &s.deny_domains)?.with_resolve(&s.resolve)
    }

    /// Whether `host` may be reached on `port`, and by which rule.
    pub fn check(&self, host: &Host, port: u16) -> Verdict {
        if let Some(rule) = self
            .deny
            .iter()
            .find(|r| r.pattern.matches(List::Deny, host, port))
        {
            return Verdict::Deny(rule.name());
        }
        match self
            .allow
            .iter()
            .find(|r| r.pattern.matches(List::Allow, host, port))
        {
            Some(rule) => Verdict::Allow(rule.name()),
            None => Verdict::Unlisted,
        }
    }

    /// The addresses the user mapped `name` to, if any.
    pub fn mapped(&self, name: &str) -> Vec<IpAddr> {
        self.resolve
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, ip)| *ip)
            .collect()
    }
}

fn parse_resolve(text: &str) -> Result<(String, IpAddr), String> {
    let t = text.trim();
    let shown = t.escape_debug();
    let Some((name, addr)) = t.split_once('=') else {
        return Err(format!(
            "`{shown}` is not NAME=ADDRESS (e.g. registry.test=127.0.0.1)"
        ));
    };
    let name = match Host::parse(name.trim()) {
        Ok(Host::Name(n)) => n,
        Ok(Host::Ip(_)) => return Err(format!("`{shown}`: the name to map is an address")),
        Err(e) => return Err(format!("`{shown}`: {e}")),
    };
    let addr = addr.trim();
    let inner = addr
        .strip_prefix('[')
        .and_then(|a| a.strip_suffix(']'))
        .unwrap_or(addr);
    let ip = inner
        .parse::<IpAddr>()
        .map_err(|_| format!("`{shown}`: `{}` is not an IP address", addr.escape_debug()))?;
    Ok((name, super::pattern::unmap(ip)))
}

/// Checks one entry of `sandbox.resolve` / `--resolve` (`NAME=ADDRESS`) and returns its
/// normal form. The message of an error completes "key `sandbox.resolve`: …".
pub fn check_resolve(text: &str) -> Result<String, String> {
    let (name, ip) = parse_resolve(text)?;
    Ok(format!("{name}={ip}"))
}

#[cfg(test)]
mod tests;
