//! Network by domain at the safe level: the policy (which host names a command may
//! reach) and the proxy that applies it, run outside the sandbox for the life of the
//! command (docs/sandbox.md, "Network by domain").
//!
//! - [`pattern`]: the grammar of `sandbox.allow_domains`/`deny_domains` entries, and
//!   the presets (`presets.txt`, data).
//! - [`policy`]: which host and port may be reached, by which rule; the user's
//!   name-to-address mapping (`sandbox.resolve`).
//! - [`address`]: the ranges the proxy never connects to unless the user mapped a name
//!   there (loopback, private, link-local, …, and this machine's own addresses).
//! - [`dns`]: the proxy's own resolver (`/etc/hosts`, `/etc/resolv.conf`).
//! - [`http`], [`socks`]: the protocols, parsed purely; [`stream`]: an HTTP head and
//!   body read off a connection (a chunked body read strictly and written anew).
//! - `server`: [`Proxy`], the listener that serves only the connections the supervisor
//!   registered ([`Admit`]), audited one record each ([`Audit`]); `plain`: plain HTTP,
//!   one request per connection, also inside a tunnel to port 80.

pub mod address;
pub mod dns;
pub mod http;
pub mod pattern;
mod plain;
pub mod policy;
mod server;
pub mod socks;
mod splice;
pub mod stream;

use std::net::SocketAddr;

pub use policy::{Policy, Verdict, check_resolve};
pub use server::{Admit, Audit, Proxy, connect_registered};

/// Checks one domain pattern as written in `sandbox.allow_domains`/`deny_domains` or
/// `--allow-domain`/`--deny-domain`, and returns it in its normal form. The message of
/// an error completes "key `sandbox.allow_domains`: …".
pub fn check_pattern(text: &str) -> Result<String, String> {
    pattern::Entry::parse(text).map(|e| e.text())
}

/// The environment that points a command's tools at the proxy at `addr`: the variables
/// curl, Python (urllib, pip, requests), git, cargo, Go, npm, yarn and Node read. Every
/// `no_proxy` form is set empty, so that the agent's own cannot send a host around the
/// proxy (a tool that goes around it anyway meets the kernel's refusal, not the
/// network).
pub fn environment(addr: SocketAddr) -> Vec<(&'static str, String)> {
    let http = format!("http://{addr}");
    let socks = format!("socks5h://{addr}");
    let mut env = Vec::new();
    for name in [
        // curl reads the lower-case http_proxy only; the others read either.
        "http_proxy",
        "HTTP_PROXY",
        "https_proxy",
        "HTTPS_PROXY",
        // npm (and yarn 1, which reads npm's configuration).
        "npm_config_proxy",
        "npm_config_https_proxy",
        // yarn 2 and later ignore the standard variables.
        "YARN_HTTP_PROXY",
        "YARN_HTTPS_PROXY",
        // pip's --proxy, over whatever pip.conf says.
        "PIP_PROXY",
        // cargo's http.proxy, over a git http.proxy it would otherwise take.
        "CARGO_HTTP_PROXY",
    ] {
        env.push((name, http.clone()));
    }
    for name in ["all_proxy", "ALL_PROXY"] {
        env.push((name, socks.clone()));
    }
    for name in ["no_proxy", "NO_PROXY", "npm_config_noproxy"] {
        env.push((name, String::new()));
    }
    // Node's own fetch and http modules (Node 24 and later) use the variables above
    // only when asked to.
    env.push(("NODE_USE_ENV_PROXY", "1".into()));
    env
}

#[cfg(test)]
mod tests;
