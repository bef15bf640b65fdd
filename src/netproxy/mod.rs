//! Network by domain at the safe level: the policy (which host names a command may
//! reach) and the proxy that applies it, run outside the sandbox for the life of the
//! command.
//!
//! INTERFACE STUB (session 6, lead): the names below are the contract between the
//! proxy (this module) and the supervisor that hands the command's connections to it
//! (`crate::sandbox`). The bodies are placeholders to be replaced; nothing reaches
//! them yet, because the sandbox refuses a domain list until the supervisor exists.

use std::io::{self, Write};
use std::net::{SocketAddr, TcpListener};

/// Checks one domain pattern as written in `sandbox.allow_domains`/`deny_domains` or
/// `--allow-domain`/`--deny-domain`, and returns it in its normal form. The message of
/// an error completes "key `sandbox.allow_domains`: …".
pub fn check_pattern(text: &str) -> Result<String, String> {
    let t = text.trim();
    if t.is_empty() || t.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("`{}` is not a domain pattern", text.escape_debug()));
    }
    Ok(t.to_ascii_lowercase())
}

/// Which host names (and ports) the proxy lets a command reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    pub allow: Vec<String>,
    pub deny: Vec<String>,
}

impl Policy {
    /// From the settings' lists (already checked by [`check_pattern`]).
    pub fn new(allow: &[String], deny: &[String]) -> Result<Policy, String> {
        Ok(Policy {
            allow: allow.to_vec(),
            deny: deny.to_vec(),
        })
    }
}

/// The environment that points a command's tools at the proxy at `addr`.
pub fn environment(addr: SocketAddr) -> Vec<(&'static str, String)> {
    let url = format!("http://{addr}");
    vec![
        ("http_proxy", url.clone()),
        ("HTTP_PROXY", url.clone()),
        ("https_proxy", url.clone()),
        ("HTTPS_PROXY", url),
    ]
}

/// The proxy: a listener on a loopback port of its own, in the supervisor's process.
pub struct Proxy {
    listener: TcpListener,
    #[allow(dead_code)]
    policy: Policy,
}

impl Proxy {
    /// Binds 127.0.0.1 on a port the kernel picks. Called before the sandbox applies.
    pub fn bind(policy: Policy) -> io::Result<Proxy> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        Ok(Proxy { listener, policy })
    }

    /// Where the proxy listens: the only address the command's connections may go to.
    pub fn addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The peers the proxy serves. NO-OP PLACEHOLDER (supervisor helper, session 6): the
    /// proxy helper makes the proxy admit only the registered local addresses.
    pub fn admit(&self) -> Admission {
        Admission
    }

    /// Serves connections until the process ends (placeholder: refuses every one).
    pub fn serve(self) {
        for stream in self.listener.incoming().flatten() {
            let mut stream = stream;
            let _ = stream.write_all(
                b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    }
}

/// The local addresses of the connections the supervisor made to the proxy: the proxy
/// serves those and no other peer. NO-OP PLACEHOLDER (supervisor helper, session 6).
///
/// How the supervisor (`crate::sandbox::supervisor`) uses the proxy: `Proxy::bind` runs
/// in gate before the supervisor is forked, so it must start no thread (the descriptors
/// it opens are the supervisor's); `addr` must be on 127.0.0.1; `admit` is called once,
/// before `serve` moves the proxy onto its own thread, and `register` from the
/// supervisor's main thread before each connection it makes.
#[derive(Debug, Clone, Default)]
pub struct Admission;

impl Admission {
    /// Admit a connection from `peer` (call before connecting from it).
    pub fn register(&self, peer: SocketAddr) {
        let _ = peer;
    }
}
