//! Network by domain (issue 16) end to end, black-box: the real gate binary runs real
//! clients at `safe` with `--allow-domain registry.test:PORT` and `--resolve` mapping the
//! test names to 127.0.0.1, where a local origin (tests/common/netproxy.rs) stands in
//! for the internet. Each allowed case works, each refused one shows the line the model
//! sees; then attacks on the whole (the proxy, the supervisor, the kernel's refusals),
//! each with a control where the same attack gets through; then the run's life and its
//! audit records.
//!
//! The attacks tests/netsuper.rs already covers (direct connect to another port, to
//! 127.0.0.2 at the proxy's port, IPv6, UDP, raw sockets, MSG_FASTOPEN, `curl --noproxy
//! '*'`, a process left behind, SIGKILL, `kill -TERM $$`, `| cat`) are not repeated here.

use crate::common;

use std::fs;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use common::netproxy::{
    ALLOWED, MAPPED, Origin, REFUSED_NAME, add_git_repo, add_hello, add_npm_package, add_pip_index,
    listening_process, processes_in,
};
use common::*;

/// A test tree in /var/tmp (a hidden path must not sit in /tmp), with an origin
/// serving `www/` in it.
struct Net {
    t: TestEnv,
    origin: Origin,
}

fn net() -> Net {
    let t = TestEnv::new_in("/var/tmp");
    let www = t.root.join("www");
    fs::create_dir(&www).unwrap();
    let origin = Origin::start(&www);
    Net { t, origin }
}

impl Net {
    fn www(&self) -> &Path {
        &self.origin.root
    }

    fn port(&self) -> u16 {
        self.origin.port()
    }

    /// The one pattern the runs allow: the origin's name, on its port.
    fn allowed(&self) -> String {
        format!("{ALLOWED}:{}", self.port())
    }

    fn url(&self, name: &str, path: &str) -> String {
        format!("{}{path}", self.origin.url(name))
    }

    /// gate at `safe`, allowing [`Net::allowed`], both test names mapped to 127.0.0.1,
    /// as `user`. The agent's own `NO_PROXY` says `*` (go around every proxy): gate's
    /// environment must win over it.
    fn gate(&self, user: User) -> Gate {
        let mut g = self
            .t
            .gate()
            .user(user)
            .args(["--no-config", "--audit-log", "off", "--level", "safe"])
            .args(["--allow-domain", &self.allowed()]);
        for m in MAPPED {
            g = g.args(["--resolve", m]);
        }
        g.env("NO_PROXY", "*").env("no_proxy", "*")
    }

    /// `gate … -c script`.
    fn sh(&self, user: User, script: &str) -> Outcome {
        self.gate(user).args(["-c", script]).run()
    }

    /// The line the proxy refuses an unlisted `name` on the origin's port with.
    fn refusal(&self, name: &str) -> String {
        let p = self.port();
        format!(
            "gate refused {name}:{p}: not in sandbox.allow_domains; --allow-domain {name}:{p} or sandbox.allow_domains = [\"{name}:{p}\"] would allow it"
        )
    }
}

fn curl() -> String {
    require_program("curl").display().to_string()
}

// ---------------------------------------------------------------------------------------
// Real clients: allowed, and refused with a line the model can act on.

for_each_user! {
    /// curl, plain HTTP and a CONNECT tunnel (`-p`), by the variables gate sets (over
    /// the agent's `NO_PROXY=*`), and over SOCKS5 by `ALL_PROXY`: the allowed name gets
    /// the file, the unlisted one gets the refusal: as the body of a plain request, as
    /// curl's "CONNECT tunnel failed, response 403" (and the status line with -v) for a
    /// tunnel, as curl's 97 for SOCKS5. Nothing reaches the origin for the refused name.
    fn curl_reaches_the_allowed_name_and_reads_the_refusal(user) {
        let n = net();
        let hello = add_hello(n.www());
        let c = curl();
        let out = n.sh(user, &format!("{c} -sSf --max-time 20 {}", n.url(ALLOWED, "/hello.txt")));
        out.assert_code(0).assert_stdout(hello);
        let out = n.sh(user, &format!("{c} -sSf -p --max-time 20 {}", n.url(ALLOWED, "/hello.txt")));
        out.assert_code(0).assert_stdout(hello);
        let out = n.sh(user, &format!("{c} -sSf -x \"$ALL_PROXY\" --max-time 20 {}", n.url(ALLOWED, "/hello.txt")));
        out.assert_code(0).assert_stdout(hello);
        let seen = n.origin.seen();
        assert_eq!(seen.len(), 3, "{seen:?}");
        assert!(seen.iter().all(|s| s.host == n.allowed()), "{seen:?}");

        let out = n.sh(user, &format!("{c} -sS -w '%{{http_code}}' --max-time 20 {}", n.url(REFUSED_NAME, "/hello.txt")));
        out.assert_code(0).assert_stdout(&format!("{}\n403", n.refusal(REFUSED_NAME)));
        let out = n.sh(user, &format!("{c} -sS -p --max-time 20 {}", n.url(REFUSED_NAME, "/hello.txt")));
        assert_eq!(out.code(), Some(56), "{}", out.report());
        out.assert_stderr_contains("CONNECT tunnel failed, response 403");
        let out = n.sh(user, &format!("{c} -sS -v -p --max-time 20 {}", n.url(REFUSED_NAME, "/hello.txt")));
        out.assert_stderr_contains(&format!("< HTTP/1.1 403 Forbidden: {}", n.refusal(REFUSED_NAME)));
        let out = n.sh(user, &format!("{c} -sS -x \"$ALL_PROXY\" --max-time 20 {}", n.url(REFUSED_NAME, "/hello.txt")));
        assert_eq!(out.code(), Some(97), "{}", out.report());
        out.assert_stderr_contains("Can't complete SOCKS5 connection to evil.test. (2)");
        assert_eq!(n.origin.seen().len(), 3, "a refused name reached the origin");
    }

    /// Python's urllib (the variables gate sets): the file from the allowed name, the
    /// status and the refusal line from the unlisted one.
    fn python_urllib_reaches_the_allowed_name_and_reads_the_refusal(user) {
        let n = net();
        let hello = add_hello(n.www());
        let script = r#"
import sys, urllib.request, urllib.error
for url in sys.argv[1:]:
    try:
        print(urllib.request.urlopen(url, timeout=20).read().decode(), end="")
    except urllib.error.HTTPError as e:
        print(e.code, e.reason)
"#;
        let out = n
            .gate(user)
            .arg("--")
            .arg(python3())
            .args(["-c", script])
            .arg(n.url(ALLOWED, "/hello.txt"))
            .arg(n.url(REFUSED_NAME, "/hello.txt"))
            .run();
        out.assert_code(0)
            .assert_stdout(&format!("{hello}403 Forbidden: {}\n", n.refusal(REFUSED_NAME)));
        assert_eq!(n.origin.seen().len(), 1);
    }

    /// `git clone` over (dumb) HTTP from the allowed name; from the unlisted one git
    /// says the URL returned 403, and nothing is cloned.
    fn git_clones_from_the_allowed_name_only(user) {
        let n = net();
        let readme = add_git_repo(n.www(), &n.t.home);
        let git = require_program("git");
        let clone = |url: String, dest: &str| {
            n.gate(user)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_TERMINAL_PROMPT", "0")
                .arg("--")
                .arg(&git)
                .args(["clone", "-q"])
                .arg(url)
                .arg(dest)
                .run()
        };
        clone(n.url(ALLOWED, "/repo.git"), "ok").assert_code(0);
        assert_eq!(fs::read_to_string(n.t.work.join("ok/README")).unwrap(), readme);
        let before = n.origin.seen().len();
        let out = clone(n.url(REFUSED_NAME, "/repo.git"), "no");
        assert_eq!(out.code(), Some(128), "{}", out.report());
        out.assert_stderr_contains(&format!(
            "unable to access '{}/': The requested URL returned error: 403",
            n.url(REFUSED_NAME, "/repo.git")
        ));
        assert!(!n.t.work.join("no").exists());
        assert_eq!(n.origin.seen().len(), before, "the refused clone reached the origin");
    }

    /// `pip install` and `pip download` from the local index at the allowed name. From
    /// the unlisted one, pip says only "from versions: none" by default: it logs a
    /// refused index page at -vv (there the 403 and the refusal line show); a refused
    /// file URL shows the refusal by default. Nothing is installed.
    fn pip_installs_and_downloads_from_the_allowed_index_only(user) {
        let n = net();
        add_pip_index(n.www(), python3());
        let pip = |cmd: &str, extra: &[&str], dir: &str, what: &[String]| {
            n.gate(user)
                .env("PIP_CONFIG_FILE", "/dev/null")
                .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
                .env("PIP_NO_CACHE_DIR", "1")
                .env("PIP_RETRIES", "0")
                .arg("--")
                .arg(python3())
                .args(["-m", "pip", cmd, "--no-deps", "--timeout", "20"])
                .args(extra)
                .arg(if cmd == "install" { "--target" } else { "--dest" })
                .arg(dir)
                .args(["--trusted-host", ALLOWED, "--trusted-host", REFUSED_NAME])
                .args(what)
                .run()
        };
        let index = |name: &str| vec![format!("--index-url={}", n.url(name, "/simple/")), "demo-pkg".to_owned()];
        let wheel = |name: &str| vec![n.url(name, "/files/demo_pkg-1.0-py3-none-any.whl")];
        let out = pip("install", &[], "site", &index(ALLOWED));
        out.assert_code(0);
        assert!(n.t.work.join("site/demo_pkg/__init__.py").is_file(), "{}", out.report());
        let out = pip("download", &[], "dl", &index(ALLOWED));
        out.assert_code(0);
        assert!(n.t.work.join("dl/demo_pkg-1.0-py3-none-any.whl").is_file(), "{}", out.report());
        let before = n.origin.seen().len();
        let refusal = format!("403 Client Error: Forbidden: {}", n.refusal(REFUSED_NAME));
        for cmd in ["install", "download"] {
            let dir = format!("{cmd}-refused");
            // What the model sees by default from a refused index: no reason at all.
            let out = pip(cmd, &[], &dir, &index(REFUSED_NAME));
            assert_eq!(out.code(), Some(1), "{}", out.report());
            out.assert_stderr_contains("No matching distribution found for demo-pkg");
            assert!(
                !out.stderr().contains("gate refused"),
                "pip now shows the refusal by default: update docs/sandbox.md\n{}",
                out.report()
            );
            let out = pip(cmd, &["-vv"], &dir, &index(REFUSED_NAME));
            assert_eq!(out.code(), Some(1), "{}", out.report());
            assert!(out.stdout().contains(&refusal), "pip -vv {cmd}\n{}", out.report());
            let out = pip(cmd, &[], &dir, &wheel(REFUSED_NAME));
            assert_eq!(out.code(), Some(1), "{}", out.report());
            out.assert_stderr_contains(&refusal);
            assert!(!n.t.work.join(&dir).join("demo_pkg").exists());
            assert!(!n.t.work.join(&dir).join("demo_pkg-1.0-py3-none-any.whl").exists());
        }
        assert_eq!(n.origin.seen().len(), before, "a refused pip reached the origin");
    }

    /// `npm install` from the local registry at the allowed name; from the unlisted one
    /// npm fails with E403 and the refusal line, and installs nothing.
    fn npm_installs_from_the_allowed_registry_only(user) {
        let n = net();
        add_npm_package(n.www(), &n.origin.url(ALLOWED), python3());
        let npm = require_program("npm");
        let install = |registry: String, dir: &str| {
            let project = n.t.work.join(dir);
            fs::create_dir(&project).unwrap();
            fs::write(project.join("package.json"), "{\"name\":\"t\",\"version\":\"1.0.0\"}\n").unwrap();
            for path in [project.clone(), project.join("package.json")] {
                std::os::unix::fs::chown(&path, Some(uid_of(user)), Some(uid_of(user))).unwrap();
            }
            n.gate(user)
                .current_dir(&project)
                .env("npm_config_registry", registry)
                .env("npm_config_cache", project.join("cache"))
                .env("npm_config_userconfig", project.join("npmrc"))
                .env("npm_config_globalconfig", project.join("npmrc-global"))
                .env("npm_config_audit", "false")
                .env("npm_config_fund", "false")
                .env("npm_config_update_notifier", "false")
                .env("npm_config_fetch_retries", "0")
                .arg("--")
                .arg(&npm)
                .args(["install", "--no-package-lock", "demo-pkg"])
                .run()
        };
        install(n.url(ALLOWED, "/"), "ok").assert_code(0);
        assert!(n.t.work.join("ok/node_modules/demo-pkg/index.js").is_file());
        let before = n.origin.seen().len();
        let out = install(n.url(REFUSED_NAME, "/"), "no");
        assert_eq!(out.code(), Some(1), "{}", out.report());
        out.assert_stderr_contains("npm error code E403");
        out.assert_stderr_contains(&format!(
            "npm error 403 403 Forbidden: {} - GET {}",
            n.refusal(REFUSED_NAME),
            n.url(REFUSED_NAME, "/demo-pkg")
        ));
        assert!(!n.t.work.join("no/node_modules/demo-pkg").exists());
        assert_eq!(n.origin.seen().len(), before, "the refused install reached the origin");
    }
}

// ---------------------------------------------------------------------------------------
// Attacks on the proxy: a request that names one host and reaches another.

/// Raw requests to the proxy (its port from `http_proxy`), each printed as `name status
/// body`: `body` is `allowed` or `evil` by the file a server answered with, `-` for
/// none. `A` is the allowed origin's port, `B` the port of a second origin (`evil`)
/// nothing allows.
const TRICKS: &str = r#"
import os, socket, sys
P = int(os.environ["http_proxy"].rsplit(":", 1)[1])
A, B = sys.argv[1], sys.argv[2]
def conn():
    return socket.create_connection(("127.0.0.1", P), timeout=10)
def status(f):
    parts = f.readline().split()
    return parts[1].decode() if len(parts) > 1 else "none"
def which(data):
    if b"hello through the proxy" in data:
        return "allowed"
    if b"from the evil origin" in data:
        return "evil"
    return "-"
def plain(target, host="x"):
    s = conn(); f = s.makefile("rb")
    s.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, host)).encode("latin-1"))
    st = status(f)
    return st, which(f.read())
def connect(target, host=None):
    s = conn(); f = s.makefile("rb")
    s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, host or target)).encode("latin-1"))
    st = status(f)
    if st != "200":
        return st, which(f.read())
    while f.readline() not in (b"\r\n", b""):
        pass
    s.sendall(("GET /hello.txt HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (host or target)).encode("latin-1"))
    return st, which(f.read())
def socks(host, port, literal=False, command=1):
    s = conn()
    s.sendall(b"\x05\x01\x00")
    s.recv(2)
    if literal:
        req = bytes([5, command, 0, 1]) + socket.inet_aton(host)
    else:
        req = bytes([5, command, 0, 3, len(host)]) + host.encode()
    s.sendall(req + int(port).to_bytes(2, "big"))
    r = s.recv(10)
    if len(r) < 2 or r[1] != 0:
        return "socks%d" % (r[1] if len(r) > 1 else -1), "-"
    s.sendall(b"GET /hello.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    return "socks0", which(s.makefile("rb").read())
cases = [
    ("plain_userinfo", lambda: plain("http://registry.test:%s@evil.test:%s/hello.txt" % (A, B), "registry.test:" + A)),
    ("plain_userinfo_reversed", lambda: plain("http://evil.test:%s@registry.test:%s/hello.txt" % (B, A))),
    ("plain_backslash", lambda: plain("http://registry.test:%s\\@evil.test:%s/hello.txt" % (A, B))),
    ("plain_fragment", lambda: plain("http://evil.test:%s#@registry.test:%s/hello.txt" % (B, A))),
    ("plain_host_header", lambda: plain("http://registry.test:%s/hello.txt" % A, "evil.test:" + B)),
    ("plain_other_port", lambda: plain("http://registry.test:%s/hello.txt" % B)),
    ("plain_unlisted", lambda: plain("http://evil.test:%s/hello.txt" % B)),
    ("plain_ip", lambda: plain("http://127.0.0.1:%s/hello.txt" % B)),
    ("plain_https_scheme", lambda: plain("https://evil.test:%s/hello.txt" % B)),
    ("plain_percent", lambda: plain("http://evil%%2etest:%s/hello.txt" % B)),
    ("connect_host_header", lambda: connect("registry.test:" + A, "evil.test:" + B)),
    ("connect_other_port", lambda: connect("registry.test:" + B)),
    ("connect_unlisted", lambda: connect("evil.test:" + B)),
    ("connect_trailing_dot", lambda: connect("registry.test.:" + A)),
    ("connect_upper", lambda: connect("REGISTRY.Test:" + A)),
    ("connect_unlisted_dot", lambda: connect("evil.test.:" + B)),
    ("connect_unlisted_upper", lambda: connect("EVIL.TEST:" + B)),
    ("connect_suffix", lambda: connect("registry.test.evil.test:" + B)),
    ("connect_prefix", lambda: connect("evilregistry.test:" + A)),
    ("connect_two_ports", lambda: connect("registry.test:%s:%s" % (A, B))),
    ("connect_nul", lambda: connect("evil.test\x00.registry.test:" + A)),
    ("connect_ip", lambda: connect("127.0.0.1:" + B)),
    ("connect_ipv6", lambda: connect("[::1]:" + B)),
    ("connect_decimal", lambda: connect("2130706433:" + B)),
    ("connect_short", lambda: connect("127.1:" + B)),
    ("connect_hex", lambda: connect("0x7f.0.0.1:" + B)),
    ("connect_url", lambda: connect("http://evil.test:%s/" % B)),
    ("socks_other_port", lambda: socks("registry.test", B)),
    ("socks_unlisted", lambda: socks("evil.test", B)),
    ("socks_ip", lambda: socks("127.0.0.1", B, True)),
    ("socks_bind", lambda: socks("registry.test", A, command=2)),
    ("socks_udp", lambda: socks("registry.test", A, command=3)),
]
for name, case in cases:
    try:
        st, body = case()
    except OSError as e:
        st, body = "errno%d" % e.errno, "-"
    print(name, st, body, flush=True)
"#;

/// The results of [`TRICKS`], by name: (status, body).
fn tricks(out: &Outcome) -> std::collections::BTreeMap<String, (String, String)> {
    out.stdout()
        .lines()
        .filter_map(|l| {
            let mut f = l.split(' ');
            Some((
                f.next()?.to_owned(),
                (f.next()?.to_owned(), f.next()?.to_owned()),
            ))
        })
        .collect()
}

for_each_user! {
    /// No trick in a request reaches a host the lists do not allow: userinfo, a
    /// backslash or a fragment before `@`, a `Host` header naming another host (plain or
    /// in a tunnel), another port of the allowed name, an unlisted name in any case or
    /// with a trailing dot, suffixes and prefixes, two ports, a NUL, address literals in
    /// every form, a URL as a CONNECT target, an https:// URL in a plain request, SOCKS5
    /// by name and by address, SOCKS5 BIND and UDP ASSOCIATE. The allowed
    /// name in upper case or with a trailing dot is the allowed name. The second origin
    /// sees nothing. The control allows `evil.test:B` and `registry.test:B` too: then the
    /// same requests reach it, so the test sees a trick that works.
    fn request_tricks_reach_no_other_host(user) {
        let n = net();
        add_hello(n.www());
        let evil_www = n.t.root.join("evil-www");
        fs::create_dir(&evil_www).unwrap();
        fs::write(evil_www.join("hello.txt"), "from the evil origin\n").unwrap();
        let evil = Origin::start(&evil_www);
        let (a, b) = (n.port().to_string(), evil.port().to_string());
        let program = n.t.write("tricks.py", TRICKS);
        let run = |extra: &[String]| {
            let mut g = n.gate(user);
            for pattern in extra {
                g = g.args(["--allow-domain", pattern]);
            }
            g.arg("--").arg(python3()).arg(&program).args([&a, &b]).run()
        };
        let out = run(&[]);
        out.assert_code(0);
        let r = tricks(&out);
        let refused = |name: &str, statuses: &[&str]| {
            let (status, body) = r.get(name).unwrap_or_else(|| panic!("no {name}\n{}", out.report()));
            assert!(statuses.contains(&status.as_str()) && body != "evil", "{name}: {status} {body}\n{}", out.report());
        };
        let reached = |name: &str| {
            assert_eq!(r.get(name), Some(&("200".to_owned(), "allowed".to_owned())), "{name}\n{}", out.report());
        };
        // The userinfo is not the host: `http://evil.test:B@registry.test:A/` is the
        // allowed origin.
        for name in ["plain_userinfo_reversed", "plain_host_header", "connect_host_header", "connect_trailing_dot", "connect_upper"] {
            reached(name);
        }
        for name in [
            "plain_userinfo", "plain_other_port", "plain_unlisted", "plain_ip", "connect_other_port",
            "connect_unlisted", "connect_unlisted_dot", "connect_unlisted_upper", "connect_suffix",
            "connect_prefix", "connect_ip", "connect_ipv6",
        ] {
            refused(name, &["403"]);
        }
        for name in ["plain_https_scheme", "plain_backslash", "plain_fragment", "plain_percent", "connect_two_ports", "connect_nul", "connect_url", "connect_decimal", "connect_short", "connect_hex"] {
            refused(name, &["400", "403"]);
        }
        for name in ["socks_other_port", "socks_unlisted", "socks_ip"] {
            refused(name, &["socks2"]);
        }
        // BIND and UDP ASSOCIATE, even to the allowed name: "command not supported".
        for name in ["socks_bind", "socks_udp"] {
            refused(name, &["socks7"]);
        }
        assert_eq!(r.len(), 32, "{}", out.report());
        assert!(evil.seen().is_empty(), "the unlisted origin was reached: {:?}\n{}", evil.seen(), out.report());

        // Control: with both of the second origin's names allowed, the tricks that
        // name it reach it.
        let out = run(&[format!("evil.test:{b}"), format!("registry.test:{b}")]);
        out.assert_code(0);
        let r = tricks(&out);
        for name in [
            "plain_userinfo", "plain_other_port", "plain_unlisted", "connect_other_port", "connect_unlisted",
            "connect_unlisted_dot", "connect_unlisted_upper",
        ] {
            assert_eq!(r.get(name), Some(&("200".to_owned(), "evil".to_owned())), "control: {name}\n{}", out.report());
        }
        for name in ["socks_other_port", "socks_unlisted"] {
            assert_eq!(r.get(name), Some(&("socks0".to_owned(), "evil".to_owned())), "control: {name}\n{}", out.report());
        }
        // Address literals stay refused even then: a loopback address is reached only
        // by a name the user mapped.
        for name in ["plain_ip", "connect_ip", "connect_ipv6", "socks_ip"] {
            assert_ne!(r.get(name).map(|v| v.1.as_str()), Some("evil"), "control: {name}\n{}", out.report());
        }
        assert!(!evil.seen().is_empty(), "control: the second origin saw nothing");
    }
}

for_each_user! {
    /// An allowed name that the system's /etc/hosts (which the model cannot write)
    /// points at a loopback address is refused, naming the address and the `--resolve`
    /// that would allow it; the control maps it with `--resolve` and gets the file.
    fn an_allowed_name_with_a_loopback_address_needs_a_mapping(user) {
        let hosts = fs::read_to_string("/etc/hosts").expect("this test needs /etc/hosts");
        assert!(
            hosts.lines().any(|l| l.split_whitespace().next() == Some("127.0.0.1")
                && l.split_whitespace().skip(1).any(|n| n == "localhost")),
            "this test needs `127.0.0.1 localhost` in /etc/hosts"
        );
        let n = net();
        let hello = add_hello(n.www());
        let pattern = format!("localhost:{}", n.port());
        let script = format!("{} -sS -w ' %{{http_code}}' --max-time 20 {}", curl(), n.url("localhost", "/hello.txt"));
        let out = n.gate(user).args(["--allow-domain", &pattern, "-c", &script]).run();
        out.assert_code(0).assert_stdout(
            "gate refused localhost: it resolves to 127.0.0.1, a loopback address; if that is meant, map the name yourself with --resolve localhost=127.0.0.1 or sandbox.resolve = [\"localhost=127.0.0.1\"]\n 403",
        );
        assert!(n.origin.seen().is_empty());
        let out = n
            .gate(user)
            .args(["--allow-domain", &pattern, "--resolve", "localhost=127.0.0.1", "-c", &script])
            .run();
        out.assert_code(0).assert_stdout(&format!("{hello} 200"));
    }

    /// A command that clears its environment (no proxy variables) and connects itself
    /// (curl told the address with --resolve; Python's urllib with the variables
    /// deleted) cannot connect; the control at `--net` reaches the origin both ways.
    fn a_command_without_the_proxy_variables_cannot_connect(user) {
        let n = net();
        let hello = add_hello(n.www());
        let url = n.url(ALLOWED, "/hello.txt");
        let script = format!(
            "env -i PATH=\"$PATH\" {c} -sS --max-time 5 --resolve {ALLOWED}:{p}:127.0.0.1 {url}; echo \" curl=$?\"; \
             {py} -c 'import os, urllib.request\nfor k in list(os.environ):\n    if \"proxy\" in k.lower(): del os.environ[k]\ntry:\n    print(urllib.request.urlopen(\"http://127.0.0.1:{p}/hello.txt\", timeout=5).read().decode(), end=\"\")\nexcept OSError as e:\n    print(\"urllib\", type(e).__name__)'",
            c = curl(),
            p = n.port(),
            py = python3().display(),
        );
        let out = n.sh(user, &script);
        out.assert_code(0).assert_stdout(" curl=7\nurllib URLError\n");
        out.assert_stderr_contains("Couldn't connect to server");
        assert!(n.origin.seen().is_empty(), "{:?}", n.origin.seen());

        let out = n
            .t
            .gate()
            .user(user)
            .args(["--no-config", "--audit-log", "off", "--level", "safe", "--net", "-c", &script])
            .run();
        out.assert_code(0).assert_stdout(&format!("{hello} curl=0\n{hello}"));
        assert_eq!(n.origin.seen().len(), 2, "control");
    }
}

/// Shell code: write `$$` to `pid` and the proxy's port to `port`, wait (30 s at most)
/// for the file `go`, then run `then`.
fn waiting(then: &str) -> String {
    format!(
        "echo $$ > pid; echo \"${{http_proxy##*:}}\" > port; \
         n=0; while [ ! -e go ] && [ $n -lt 3000 ]; do sleep 0.01; n=$((n+1)); done; {then}"
    )
}

/// What a process outside the sandbox gets from the proxy for `request`: the bytes
/// until the proxy closes (or 10 s pass).
fn from_outside(port: u16, request: &str) -> Vec<u8> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect to the proxy");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut got = Vec::new();
    let _ = s.read_to_end(&mut got);
    got
}

for_each_user! {
    /// A process outside the sandbox that connects to the proxy's port itself is not
    /// served (the proxy serves only connections the supervisor made and registered):
    /// not the test process (root, or the current user), not uid 65534. The control is
    /// the same request from inside, which gets the file.
    fn outsiders_are_not_served_by_the_proxy(user) {
        let n = net();
        let hello = add_hello(n.www());
        let url = n.url(ALLOWED, "/hello.txt");
        let running = n
            .gate(user)
            .args(["-c", &waiting(&format!("{} -sS --max-time 20 {url}", curl()))])
            .spawn();
        let port: u16 = wait_for(&n.t.work.join("port")).parse().unwrap();
        let request = format!("GET {url} HTTP/1.1\r\nHost: {ALLOWED}\r\n\r\n");
        let got = from_outside(port, &request);
        assert!(got.is_empty(), "the test process was served: {:?}", String::from_utf8_lossy(&got));
        if running_as_root() {
            let program = "import socket, sys\ns = socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=10)\ns.sendall(sys.argv[2].encode())\ns.settimeout(10)\ndata = b''\nwhile True:\n    try:\n        b = s.recv(4096)\n    except OSError:\n        break\n    if not b: break\n    data += b\nprint(len(data), data[:40])";
            let out = command_as(User::Unprivileged, python3())
                .args(["-c", program, &port.to_string(), &request])
                .output()
                .unwrap();
            assert_eq!(String::from_utf8_lossy(&out.stdout), "0 b''\n", "uid 65534 was served: {out:?}");
        }
        assert!(n.origin.seen().is_empty(), "an outsider reached the origin");
        fs::write(n.t.work.join("go"), "").unwrap();
        let out = running.wait();
        out.assert_code(0).assert_stdout(hello);
        assert_eq!(n.origin.seen().len(), 1);
    }
}

/// Python run in the sandbox against the process whose pid is in the file `target`:
/// every way to stop, trace or change it. Prints `name ok` or `name errno=N`.
const TOUCH: &str = r#"
import ctypes, os, signal, sys, time
pid = int(open("target").read())
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
def attempt(name, fn):
    try:
        fn()
    except OSError as e:
        print("%s errno=%d" % (name, e.errno), flush=True)
    else:
        print("%s ok" % name, flush=True)
def check(r):
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
def address():
    try:
        for line in open("/proc/%d/maps" % pid):
            if line.split()[1].startswith("rw"):
                return int(line.split("-")[0], 16)
    except OSError:
        pass
    return 0x400000
buf = ctypes.create_string_buffer(8)
def vm(number):
    local = iovec(ctypes.addressof(buf), 8)
    remote = iovec(address(), 8)
    L = ctypes.c_long
    check(libc.syscall(L(number), L(pid), ctypes.byref(local), L(1), ctypes.byref(remote), L(1), L(0)))
attempt("vm_read", lambda: vm(310))
attempt("vm_write", lambda: vm(311))  # writes back the bytes just read
attempt("mem_open", lambda: os.close(os.open("/proc/%d/mem" % pid, os.O_RDWR)))
attempt("environ", lambda: open("/proc/%d/environ" % pid, "rb").read())
def trace():
    check(libc.ptrace(16, pid, None, None))  # PTRACE_ATTACH
    os.waitpid(pid, 0x40000000)  # __WALL
    check(libc.ptrace(17, pid, None, None))  # PTRACE_DETACH
attempt("ptrace_attach", trace)
def stop():
    os.kill(pid, signal.SIGSTOP)
    os.kill(pid, signal.SIGCONT)
attempt("sigstop", stop)
attempt("killpg", lambda: os.killpg(os.getpgid(pid), signal.SIGCONT))
def pidfd_kill():
    L = ctypes.c_long
    fd = check(libc.syscall(L(434), L(pid), L(0)))  # pidfd_open
    check(libc.syscall(L(424), L(fd), L(signal.SIGKILL), None, L(0)))  # pidfd_send_signal
attempt("pidfd_kill", pidfd_kill)
attempt("kill", lambda: os.kill(pid, signal.SIGKILL))
"#;

const TOUCHES: [&str; 9] = [
    "vm_read",
    "vm_write",
    "mem_open",
    "environ",
    "ptrace_attach",
    "sigstop",
    "killpg",
    "pidfd_kill",
    "kill",
];

fn results(out: &Outcome) -> std::collections::BTreeMap<String, String> {
    out.stdout()
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

for_each_user! {
    /// The command finds the supervisor (the test writes its pid where the command
    /// reads it; /proc would tell it too) and tries to read or write its memory, trace
    /// it, stop it, signal its group, kill it by pidfd and by pid: all fail, and the
    /// proxy still serves afterwards. The control runs the same program as the same
    /// user without gate (at every level gate marks the command with a Landlock domain,
    /// which alone stops tracing a process outside it) against a `sleep` of that user,
    /// where each one works.
    fn the_command_cannot_touch_the_supervisor(user) needs root because "only root may read the non-dumpable supervisor's /proc entries" {
        let n = net();
        let hello = add_hello(n.www());
        let program = n.t.write("touch.py", TOUCH);
        let then = format!(
            "{} {}; {} -sS --max-time 20 {}",
            python3().display(),
            program.display(),
            curl(),
            n.url(ALLOWED, "/hello.txt")
        );
        let running = n.gate(user).args(["-c", &waiting(&then)]).spawn();
        let port: u16 = wait_for(&n.t.work.join("port")).parse().unwrap();
        let supervisor = listening_process(port).expect("nobody listens on the proxy's port");
        fs::write(n.t.work.join("target"), supervisor.to_string()).unwrap();
        fs::write(n.t.work.join("go"), "").unwrap();
        let out = running.wait();
        out.assert_code(0);
        let r = results(&out);
        for name in TOUCHES {
            let got = r.get(name).map(String::as_str).unwrap_or("missing");
            assert!(got.starts_with("errno="), "{name} on the supervisor: {got}\n{}", out.report());
        }
        assert!(out.stdout().ends_with(hello), "the proxy no longer serves\n{}", out.report());

        // Control: the same program without gate, against a sleeper of the same user.
        let mut sleeper = command_as(user, require_program("sleep"));
        let mut sleeper = std::os::unix::process::CommandExt::process_group(sleeper.arg("60"), 0)
            .spawn()
            .unwrap();
        fs::write(n.t.work.join("target"), sleeper.id().to_string()).unwrap();
        let control = command_as(user, python3())
            .arg(&program)
            .current_dir(&n.t.work)
            .output()
            .unwrap();
        let _ = sleeper.kill();
        let status = sleeper.wait().unwrap();
        let out = Outcome {
            status: control.status,
            stdout: control.stdout,
            stderr: control.stderr,
            pid: 0,
            elapsed: Duration::ZERO,
            description: "the control, without gate".to_owned(),
        };
        let r = results(&out);
        for name in TOUCHES {
            assert_eq!(r.get(name).map(String::as_str), Some("ok"), "control: {name}\n{}", out.report());
        }
        assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(libc::SIGKILL));
    }
}

for_each_user! {
    /// gate started inside a command that has a domain list, with a domain list of its
    /// own, fails closed: status 125, one `gate:` line about network by domain, nothing
    /// run. (What stops it first is the sandbox's refusal to listen: the inner proxy
    /// cannot bind its port; were it bound, the kernel would refuse a second listener,
    /// EBUSY.) The outer proxy still serves the command afterwards. The control: the
    /// same inner gate without a domain list runs its command.
    fn a_nested_gate_with_a_domain_list_fails_closed(user) {
        let n = net();
        let hello = add_hello(n.www());
        let inner = gate_binary_for(user);
        let script = |domains: &str| {
            format!(
                "{} --no-config --audit-log off --level safe {domains} -- sh -c 'echo ran > ran'; echo \"inner=$?\"; \
                 {} -sS --max-time 20 {}",
                inner.display(),
                curl(),
                n.url(ALLOWED, "/hello.txt")
            )
        };
        let out = n.sh(user, &script(&format!("--allow-domain {}", n.allowed())));
        out.assert_code(0).assert_stdout(&format!("inner=125\n{hello}"));
        let stderr = out.stderr();
        assert_eq!(stderr.lines().count(), 1, "{}", out.report());
        assert!(stderr.starts_with("gate: cannot set up network by domain"), "{}", out.report());
        assert!(stderr.ends_with("nothing was run\n"), "{}", out.report());
        assert_absent(&n.t.work.join("ran"), &out);

        let out = n.sh(user, &script(""));
        out.assert_code(0).assert_stdout(&format!("inner=0\n{hello}"));
        assert!(n.t.work.join("ran").exists(), "control: the inner command should run\n{}", out.report());
    }
}

// ---------------------------------------------------------------------------------------
// The run's life (tests/netsuper.rs has SIGKILL, `kill -TERM $$`, `| cat`, a process
// left behind and the supervisor's detachment; these add what it lacks).

/// The parent of process `pid`.
fn parent(pid: u32) -> Option<u32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 2..].split(' ').nth(1)?.parse().ok()
}

/// Wait (within the deadline) until nothing runs in `dir` any more.
#[track_caller]
fn nothing_left_in(dir: &Path, what: &str) {
    let end = Instant::now() + DEADLINE;
    loop {
        let left = processes_in(dir);
        if left.is_empty() {
            return;
        }
        assert!(
            Instant::now() < end,
            "{what}: processes {left:?} are still there"
        );
        thread::sleep(Duration::from_millis(5));
    }
}

for_each_user! {
    /// While the command runs, two processes of the run exist: the command (gate's pid)
    /// and the supervisor, which serves the proxy's port. Once it ends, with any exit
    /// status, or dies of SIGINT or SIGHUP, nothing of the run is left, and the status
    /// or signal is the command's own.
    fn the_run_leaves_nothing_behind_and_keeps_the_commands_status(user) needs root because "only root may read the non-dumpable supervisor's /proc entries" {
        let n = net();
        let running = n.gate(user).args(["-c", &waiting("exit 3")]).spawn();
        let pid: u32 = wait_for(&n.t.work.join("pid")).parse().unwrap();
        let port: u16 = wait_for(&n.t.work.join("port")).parse().unwrap();
        assert_eq!(pid, running.pid, "the command does not have gate's pid");
        let supervisor = listening_process(port).expect("nobody serves the proxy's port");
        // The waiting loop's own `sleep` children aside, and any that ended between
        // the listing and the look at its parent (it was such a child: under load the
        // test once counted one).
        let mut during: Vec<u32> = processes_in(&n.t.work)
            .into_iter()
            .filter(|&p| parent(p).is_some_and(|up| up != pid))
            .collect();
        during.sort_unstable();
        let mut want = vec![pid, supervisor];
        want.sort_unstable();
        assert_eq!(during, want, "the run's processes");
        fs::write(n.t.work.join("go"), "").unwrap();
        running.wait().assert_code(3);
        nothing_left_in(&n.t.work, "after exit 3");

        for code in [0, 1, 255] {
            n.sh(user, &format!("exit {code}")).assert_code(code);
            nothing_left_in(&n.t.work, &format!("after exit {code}"));
        }
        for (name, signal) in [("INT", libc::SIGINT), ("HUP", libc::SIGHUP)] {
            let out = n.sh(user, &format!("kill -{name} $$"));
            assert_eq!(out.signal(), Some(signal), "{}", out.report());
            nothing_left_in(&n.t.work, &format!("after SIG{name}"));
        }
    }

    /// When gate does not run the command (it is not found: 127; the level refuses it:
    /// 126), no supervisor is left either.
    fn a_command_that_never_runs_leaves_no_supervisor(user) {
        let n = net();
        let out = n.gate(user).arg("--").arg(n.t.root.join("no-such-program")).run();
        out.assert_code(127).assert_stderr_contains("command not found");
        nothing_left_in(&n.t.work, "after a command that was not found");
        let out = n
            .t
            .gate()
            .user(user)
            .args(["--no-config", "--audit-log", "off", "--level", "deny"])
            .args(["--allow-domain", &n.allowed(), "--", "true"])
            .run();
        out.assert_refused();
        nothing_left_in(&n.t.work, "after a refused command");
    }

    /// The command's standard input is its own: a megabyte through `cat` comes out
    /// whole (the supervisor took /dev/null, not the caller's input).
    fn standard_input_reaches_the_command_whole(user) {
        let n = net();
        let data = pseudo_random_bytes(1 << 20, 16);
        let out = n.gate(user).stdin(data.clone()).args(["-c", "cat"]).run();
        out.assert_code(0);
        assert!(out.stdout == data, "stdout differs from stdin ({} bytes of {})", out.stdout.len(), data.len());
    }
}

// ---------------------------------------------------------------------------------------
// The audit log.

for_each_user! {
    /// Each connection through the proxy is one record in the run's audit log (the
    /// file `--audit-log` names), with the command's call id: an allowed plain request,
    /// a refused one, an allowed tunnel and a refused one give four records, each with
    /// its host, port, protocol and decision.
    ///
    /// Failed before the supervisor handed the proxy the run's audit log (a78ffe8).
    fn each_connection_is_one_record_in_the_runs_audit_log(user) {
        let n = net();
        add_hello(n.www());
        let log = n.t.root.join("audit.jsonl");
        fs::write(&log, "").unwrap();
        let id = uid_of(user);
        std::os::unix::fs::chown(&log, Some(id), Some(id)).unwrap();
        let c = curl();
        let script = format!(
            "{c} -s -o /dev/null {a}; {c} -s -o /dev/null {e}; {c} -s -o /dev/null -p {a}; {c} -s -o /dev/null -p {e}; true",
            a = n.url(ALLOWED, "/hello.txt"),
            e = n.url(REFUSED_NAME, "/hello.txt"),
        );
        let mut g = n.t.gate().user(user).args(["--no-config", "--level", "safe", "--allow-domain", &n.allowed()]);
        for m in MAPPED {
            g = g.args(["--resolve", m]);
        }
        let out = g.arg("--audit-log").arg(&log).args(["-c", &script]).run();
        out.assert_code(0);
        assert_eq!(n.origin.seen().len(), 2, "{}", out.report());
        let records = audit_records(&log);
        let command: Vec<_> = records.iter().filter(|r| r["kind"] != "connection").collect();
        assert_eq!(command.len(), 1, "one record of the command: {records:#?}");
        let call_id = &command[0]["call_id"];
        let connections: Vec<_> = records.iter().filter(|r| r["kind"] == "connection").collect();
        let summary: Vec<(String, String, String)> = connections
            .iter()
            .map(|r| {
                assert_eq!(&r["call_id"], call_id, "{r}");
                assert_eq!(r["port"], n.port(), "{r}");
                (
                    r["host"].as_str().unwrap_or("?").to_owned(),
                    r["protocol"].as_str().unwrap_or("?").to_owned(),
                    r["decision"].as_str().unwrap_or("?").to_owned(),
                )
            })
            .collect();
        let want = [
            (ALLOWED, "http", "allow"),
            (REFUSED_NAME, "http", "deny"),
            (ALLOWED, "connect", "allow"),
            (REFUSED_NAME, "connect", "deny"),
        ]
        .map(|(h, p, d)| (h.to_owned(), p.to_owned(), d.to_owned()));
        assert_eq!(summary, want, "the connection records: {records:#?}");
        let refused = connections.iter().find(|r| r["decision"] == "deny").unwrap();
        assert_eq!(refused["decided_by"], "unlisted", "{refused}");
        assert_eq!(refused["message"], n.refusal(REFUSED_NAME), "{refused}");
    }
}

/// Python: ways out tests/netsuper.rs does not try. `L` is the port of a listener on
/// 127.0.0.1, `P` the proxy's. Prints `name ok` or `name errno=N`.
const MORE_WAYS_OUT: &str = r#"
import ctypes, os, socket, sys
L = int(sys.argv[1])
P = int(os.environ.get("http_proxy", "http://127.0.0.1:1").rsplit(":", 1)[1])
libc = ctypes.CDLL(None, use_errno=True)
def attempt(name, fn):
    try:
        fn()
    except OSError as e:
        print("%s errno=%d" % (name, e.errno), flush=True)
    else:
        print("%s ok" % name, flush=True)
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
class msghdr(ctypes.Structure):
    _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint32), ("iov", ctypes.POINTER(iovec)),
                ("iovlen", ctypes.c_size_t), ("control", ctypes.c_void_p), ("controllen", ctypes.c_size_t),
                ("flags", ctypes.c_int)]
class mmsghdr(ctypes.Structure):
    _fields_ = [("hdr", msghdr), ("len", ctypes.c_uint)]
def sendmmsg_fastopen():
    s = socket.socket()
    addr = ctypes.create_string_buffer(b"\x02\x00" + L.to_bytes(2, "big") + socket.inet_aton("127.0.0.1") + b"\0" * 8, 16)
    data = ctypes.create_string_buffer(b"x")
    iov = iovec(ctypes.addressof(data), 1)
    m = mmsghdr(msghdr(ctypes.addressof(addr), 16, ctypes.pointer(iov), 1, None, 0, 0), 0)
    r = libc.sendmmsg(s.fileno(), ctypes.byref(m), 1, 0x20000000)  # MSG_FASTOPEN
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
attempt("sendmmsg_fastopen", sendmmsg_fastopen)
# 0.0.0.0 is this host to connect(): at the listener's port, and at the proxy's.
attempt("any_address", lambda: socket.create_connection(("0.0.0.0", L), timeout=5))
attempt("any_address_proxy_port", lambda: socket.create_connection(("0.0.0.0", P), timeout=5))
"#;

for_each_user! {
    /// `sendmmsg` with `MSG_FASTOPEN` fails with EPERM, and a connect to 0.0.0.0 (which
    /// Linux takes for this host) fails with EACCES at the listener's port and at the
    /// proxy's; the listener sees nothing. The control, at level full, reaches the
    /// listener each way.
    fn sendmmsg_fastopen_and_the_any_address_are_refused(user) {
        let n = net();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let l = listener.local_addr().unwrap().port().to_string();
        let program = n.t.write("more.py", MORE_WAYS_OUT);
        let accepted = || std::iter::from_fn(|| listener.accept().ok()).count();
        let out = n.gate(user).arg("--").arg(python3()).arg(&program).arg(&l).run();
        out.assert_code(0).assert_stdout(
            "sendmmsg_fastopen errno=1\nany_address errno=13\nany_address_proxy_port errno=13\n",
        );
        assert_eq!(accepted(), 0, "a connection reached the listener");

        let out = n
            .t
            .gate()
            .user(user)
            .args(["--no-config", "--audit-log", "off", "--level", "full", "--"])
            .arg(python3())
            .arg(&program)
            .arg(&l)
            .run();
        let r = results(&out);
        assert_eq!(r.get("sendmmsg_fastopen").map(String::as_str), Some("ok"), "control\n{}", out.report());
        assert_eq!(r.get("any_address").map(String::as_str), Some("ok"), "control\n{}", out.report());
        // The two connections are the listener's once the kernel has queued them: wait
        // for that, within the deadline.
        let end = Instant::now() + DEADLINE;
        let mut count = accepted();
        while count < 2 && Instant::now() < end {
            thread::sleep(Duration::from_millis(5));
            count += accepted();
        }
        assert_eq!(count, 2, "control: the listener's connections\n{}", out.report());
    }
}

for_each_user! {
    /// A command that made itself non-dumpable (`prctl(PR_SET_DUMPABLE, 0)`, as
    /// ssh-agent and gpg-agent do; a program exec'd from a binary it cannot read is so
    /// too) still reaches the proxy. Non-dumpable, its memory and its /proc/PID/fdinfo
    /// are closed to an unprivileged supervisor; the memory is not needed (the address
    /// is judged by its length then), and its descriptor's flags must not be either.
    ///
    /// Failed as uid 65534 before the fix (a78ffe8): `connect()` to the proxy gave
    /// EBADF, a refused read of /proc/PID/fdinfo/FD taken for a bad descriptor. The
    /// control: the same program, dumpable.
    fn a_non_dumpable_command_reaches_the_proxy(user) {
        let n = net();
        let hello = add_hello(n.www());
        let program = format!(
            "import ctypes, sys, urllib.request\n\
             if sys.argv[1] == 'undumpable':\n    assert ctypes.CDLL(None).prctl(4, 0, 0, 0, 0) == 0\n\
             try:\n    print(urllib.request.urlopen('{}', timeout=20).read().decode(), end='')\n\
             except OSError as e:\n    print(e)",
            n.url(ALLOWED, "/hello.txt")
        );
        for mode in ["dumpable", "undumpable"] {
            let out = n.gate(user).arg("--").arg(python3()).args(["-c", &program, mode]).run();
            out.assert_code(0);
            assert_eq!(out.stdout(), hello, "{mode}\n{}", out.report());
        }
    }
}

/// Python, in the sandbox: set the resource limits of the process whose pid is in the
/// file `target` (to the values it has: a write that changes nothing), and renice it
/// (to the nice value it has). Prints `name ok` or `name errno=N`.
const LIMITS: &str = r#"
import os, resource
pid = int(open("target").read())
def attempt(name, fn):
    try:
        fn()
    except OSError as e:
        print("%s errno=%d" % (name, e.errno), flush=True)
    else:
        print("%s ok" % name, flush=True)
for name, res in [("nofile", resource.RLIMIT_NOFILE), ("cpu", resource.RLIMIT_CPU), ("fsize", resource.RLIMIT_FSIZE)]:
    attempt("prlimit_" + name, lambda: resource.prlimit(pid, res, resource.prlimit(pid, res)))
attempt("setpriority", lambda: os.setpriority(os.PRIO_PROCESS, pid, os.getpriority(os.PRIO_PROCESS, pid)))
attempt("sched_setscheduler", lambda: os.sched_setscheduler(pid, os.sched_getscheduler(pid), os.sched_getparam(pid)))
attempt("sched_setparam", lambda: os.sched_setparam(pid, os.sched_getparam(pid)))
import ctypes, errno, platform
libc = ctypes.CDLL(None, use_errno=True)
ioprio_set = {"x86_64": 251, "aarch64": 30}[platform.machine()]
def ioprio(who_kind):
    # IOPRIO_WHO_PROCESS 1 (the target), IOPRIO_WHO_USER 3 (every process of the uid);
    # the best-effort class at its default level, which any process may set for its own
    # user's processes.
    who = pid if who_kind == 1 else os.getuid()
    if libc.syscall(ioprio_set, who_kind, who, (2 << 13) | 4) < 0:
        raise OSError(ctypes.get_errno(), "ioprio")
attempt("ioprio_process", lambda: ioprio(1))
attempt("ioprio_user", lambda: ioprio(3))
"#;

for_each_user! {
    /// The command cannot change the supervisor's resource limits or priority
    /// (`prlimit(2)`, `setpriority(2)`): `RLIMIT_CPU` of 1 s would kill it,
    /// `RLIMIT_NOFILE` or `RLIMIT_FSIZE` of 0 would stop it making sockets or writing
    /// its audit records. Nor its I/O priority (`ioprio_set(2)`, by process or for
    /// every process of the user: the idle class starves it of the disk) or its
    /// scheduling policy (`sched_setscheduler(2)`, `sched_setparam(2)`: SCHED_IDLE
    /// starves it of the CPU). Each fails closed (the command loses the network), so
    /// this is a denial of service, not a way out; the control (level full) changes
    /// the same of a `sleep` of the same user. Each change but the I/O priority's (the
    /// best-effort class at its default level) writes the value it reads.
    ///
    /// Failed before the seccomp filter refused `prlimit64` with a pid other than 0 and
    /// `setpriority` aimed at anything but the caller (a78ffe8): neither Landlock nor
    /// the filter covered them, so a command at `safe` could do this to every process of
    /// its user outside the sandbox, the agent's own too.
    fn the_command_cannot_change_the_supervisors_limits(user) needs root because "only root may read the non-dumpable supervisor's /proc entries" {
        let n = net();
        let program = n.t.write("limits.py", LIMITS);
        let then = format!("{} {}", python3().display(), program.display());
        let running = n.gate(user).args(["-c", &waiting(&then)]).spawn();
        let port: u16 = wait_for(&n.t.work.join("port")).parse().unwrap();
        let supervisor = listening_process(port).expect("nobody listens on the proxy's port");
        fs::write(n.t.work.join("target"), supervisor.to_string()).unwrap();
        fs::write(n.t.work.join("go"), "").unwrap();
        let out = running.wait();
        out.assert_code(0);
        let names = [
            "prlimit_nofile",
            "prlimit_cpu",
            "prlimit_fsize",
            "setpriority",
            "sched_setscheduler",
            "sched_setparam",
            "ioprio_process",
            "ioprio_user",
        ];
        let r = results(&out);
        for &name in &names {
            let got = r.get(name).map(String::as_str).unwrap_or("missing");
            assert!(got.starts_with("errno="), "{name} on the supervisor: {got}\n{}", out.report());
        }

        let mut sleeper = command_as(user, require_program("sleep"));
        let mut sleeper = std::os::unix::process::CommandExt::process_group(sleeper.arg("60"), 0)
            .spawn()
            .unwrap();
        fs::write(n.t.work.join("target"), sleeper.id().to_string()).unwrap();
        let out = n
            .t
            .gate()
            .user(user)
            .args(["--no-config", "--audit-log", "off", "--level", "full", "--"])
            .arg(python3())
            .arg(&program)
            .run();
        let _ = sleeper.kill();
        let _ = sleeper.wait();
        let r = results(&out);
        for name in names {
            assert_eq!(r.get(name).map(String::as_str), Some("ok"), "control: {name}\n{}", out.report());
        }
    }
}
