//! gate's domain proxy (issue 16), in-process: a `Proxy` serves on a thread, a local
//! origin on 127.0.0.1 stands in for the internet (named `registry.test` and
//! `evil.test` through the proxy's resolve mapping), and real clients — curl, Python's
//! urllib, git, pip, npm — are pointed at it with `gate::netproxy::environment`, as the
//! command under `gate --level safe --allow-domain …` is. Each allowed case has its
//! refused twin, and the audit log is read back.
//!
//! Clients reach the proxy through `common::netproxy::front_door`, which does what the
//! supervisor does for the command: it makes each connection to the proxy itself and
//! registers it, since the proxy serves no one else.

use crate::common;

use std::fs;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use common::netproxy::{
    ALLOWED, MAPPED, Origin, REFUSED_NAME, add_git_repo, add_hello, add_npm_package, add_pip_index,
    front_door,
};
use gate::netproxy::dns::Resolver;
use gate::netproxy::{Audit, Policy, Proxy, environment};

struct Net {
    front: SocketAddr,
    proxy: SocketAddr,
    origin: Origin,
    audit: PathBuf,
    home: PathBuf,
    dir: tempfile::TempDir,
}

/// A proxy allowing `allow` and denying `deny` (each `{port}` replaced by the origin's
/// port), with `hosts` as its /etc/hosts and the test names mapped to 127.0.0.1.
fn start(allow: &[&str], deny: &[&str], hosts: &str) -> Net {
    start_logging_to(allow, deny, hosts, None)
}

/// The same, with the audit records going to `log` (opened for appending) instead of
/// the test's own file.
fn start_logging_to(allow: &[&str], deny: &[&str], hosts: &str, log: Option<&Path>) -> Net {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("www");
    let home = dir.path().join("home");
    fs::create_dir_all(&root).unwrap();
    fs::create_dir_all(&home).unwrap();
    let origin = Origin::start(&root);
    let fill = |l: &[&str]| {
        l.iter()
            .map(|p| p.replace("{port}", &origin.port().to_string()))
            .collect::<Vec<_>>()
    };
    let mapped: Vec<String> = MAPPED.iter().map(|m| m.to_string()).collect();
    let policy = Policy::new(&fill(allow), &fill(deny))
        .unwrap()
        .with_resolve(&mapped)
        .unwrap();
    let proxy = Proxy::bind(policy)
        .unwrap()
        .with_resolver(Resolver::from_files(hosts, "nameserver 127.0.0.1\n"));
    let audit = log.map_or_else(|| dir.path().join("audit.jsonl"), Path::to_path_buf);
    let file = fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(&audit)
        .unwrap();
    let addr = proxy.addr().unwrap();
    let front = front_door(proxy.admit(), addr);
    std::thread::spawn(move || {
        proxy.serve(Some(Audit {
            file,
            call_id: "call-1".into(),
            session_id: "session-1".into(),
        }))
    });
    Net {
        front,
        proxy: addr,
        origin,
        audit,
        home,
        dir,
    }
}

impl Net {
    fn root(&self) -> &Path {
        &self.origin.root
    }

    /// `program` with a clean environment: the agent's own NO_PROXY says `*` (go
    /// around every proxy), and gate's proxy environment on top.
    fn client(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("NO_PROXY", "*")
            .env("no_proxy", "*")
            .envs(environment(self.front))
            .current_dir(self.dir.path());
        c
    }

    fn records(&self) -> Vec<serde_json::Value> {
        // A record is written before the first byte is relayed, so it is there once the
        // client has its answer.
        common::audit_records(&self.audit)
    }

    /// The one record about `host`.
    #[track_caller]
    fn record_for(&self, host: &str) -> serde_json::Value {
        let all = self.records();
        let mine: Vec<_> = all.iter().filter(|r| r["host"] == host).collect();
        assert_eq!(mine.len(), 1, "one record for {host}: {all:#?}");
        mine[0].clone()
    }
}

fn run(c: &mut Command) -> Output {
    c.output().unwrap_or_else(|e| panic!("{c:?}: {e}"))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[track_caller]
fn assert_ok(out: &Output) {
    assert!(
        out.status.success(),
        "{:?}\nstdout: {}\nstderr: {}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
}

fn curl(net: &Net) -> Command {
    let mut c = net.client(common::require_program("curl"));
    c.args(["-sS", "--max-time", "20"]);
    c
}

/// The refusal line for `name` on the origin's port.
fn refusal(net: &Net, name: &str) -> String {
    let p = net.origin.port();
    format!(
        "gate refused {name}:{p}: not in sandbox.allow_domains; --allow-domain {name}:{p} or sandbox.allow_domains = [\"{name}:{p}\"] would allow it"
    )
}

#[test]
fn curl_fetches_an_allowed_name_through_the_plain_http_proxy() {
    let net = start(&["registry.test:{port}"], &[], "");
    let hello = add_hello(net.root());
    let out = run(curl(&net)
        .arg("-f")
        .arg(format!("{}/hello.txt", net.origin.url(ALLOWED))));
    assert_ok(&out);
    assert_eq!(text(&out.stdout), hello);
    let seen = net.origin.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].host, format!("registry.test:{}", net.origin.port()));
    assert_eq!(seen[0].path, "/hello.txt");
    let r = net.record_for(ALLOWED);
    assert_eq!(r["kind"], "connection");
    assert_eq!(r["protocol"], "http");
    assert_eq!(r["port"], net.origin.port());
    assert_eq!(r["decision"], "allow");
    assert_eq!(r["decided_by"], "allow_domains");
    assert_eq!(r["rule"], format!("registry.test:{}", net.origin.port()));
    assert_eq!(r["address"], net.origin.addr.to_string());
    assert_eq!(r["call_id"], "call-1");
}

#[test]
fn curl_gets_the_refusal_line_for_a_name_not_allowed() {
    let net = start(&["registry.test:{port}"], &[], "");
    add_hello(net.root());
    let out = run(curl(&net)
        .args(["-w", "%{http_code}"])
        .arg(format!("{}/hello.txt", net.origin.url(REFUSED_NAME))));
    assert_ok(&out);
    assert_eq!(
        text(&out.stdout),
        format!("{}\n403", refusal(&net, REFUSED_NAME))
    );
    assert!(net.origin.seen().is_empty(), "the origin was reached");
    let r = net.record_for(REFUSED_NAME);
    assert_eq!(r["decision"], "deny");
    assert_eq!(r["decided_by"], "unlisted");
    assert_eq!(r["message"], refusal(&net, REFUSED_NAME));
}

#[test]
fn curl_tunnels_with_connect_to_an_allowed_name_and_is_refused_for_another() {
    let net = start(&["registry.test:{port}"], &[], "");
    let hello = add_hello(net.root());
    let out = run(curl(&net)
        .args(["-f", "-p"])
        .arg(format!("{}/hello.txt", net.origin.url(ALLOWED))));
    assert_ok(&out);
    assert_eq!(text(&out.stdout), hello);
    assert_eq!(net.record_for(ALLOWED)["protocol"], "connect");

    let out = run(curl(&net)
        .args(["-p", "-v"])
        .arg(format!("{}/hello.txt", net.origin.url(REFUSED_NAME))));
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!(
            "< HTTP/1.1 403 Forbidden: {}",
            refusal(&net, REFUSED_NAME)
        )),
        "{err}"
    );
    assert_eq!(
        net.origin.seen().len(),
        1,
        "only the allowed request arrived"
    );
    assert_eq!(net.record_for(REFUSED_NAME)["decision"], "deny");
}

#[test]
fn curl_over_socks5h_reaches_an_allowed_name_and_is_refused_by_ruleset_otherwise() {
    let net = start(&["registry.test:{port}"], &[], "");
    let hello = add_hello(net.root());
    let socks = format!("socks5h://{}", net.front);
    let out = run(curl(&net)
        .args(["-f", "-x", &socks])
        .arg(format!("{}/hello.txt", net.origin.url(ALLOWED))));
    assert_ok(&out);
    assert_eq!(text(&out.stdout), hello);
    assert_eq!(net.record_for(ALLOWED)["protocol"], "socks5");

    let out = run(curl(&net)
        .args(["-x", &socks])
        .arg(format!("{}/hello.txt", net.origin.url(REFUSED_NAME))));
    // curl's 97: the SOCKS proxy refused (reply 2, "not allowed by ruleset").
    assert_eq!(out.status.code(), Some(97), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("SOCKS5 connection to evil.test. (2)"),
        "{}",
        text(&out.stderr)
    );
    let r = net.record_for(REFUSED_NAME);
    assert_eq!(r["protocol"], "socks5");
    assert_eq!(r["decision"], "deny");
    assert_eq!(r["message"], refusal(&net, REFUSED_NAME));
}

#[test]
fn a_deny_entry_wins_over_an_allow_and_is_named() {
    let net = start(&["*.test:*"], &["evil.test"], "");
    add_hello(net.root());
    let ok = run(curl(&net)
        .arg("-f")
        .arg(format!("{}/hello.txt", net.origin.url(ALLOWED))));
    assert_ok(&ok);
    let out = run(curl(&net).arg(format!("{}/hello.txt", net.origin.url(REFUSED_NAME))));
    let p = net.origin.port();
    assert_eq!(
        text(&out.stdout),
        format!(
            "gate refused evil.test:{p}: sandbox.deny_domains has `evil.test` (a deny entry wins over --allow-domain and sandbox.allow_domains)\n"
        )
    );
    let r = net.record_for(REFUSED_NAME);
    assert_eq!(r["decided_by"], "deny_domains");
    assert_eq!(r["rule"], "evil.test");
    assert_eq!(net.record_for(ALLOWED)["rule"], "*.test:*");
}

#[test]
fn an_allowed_name_that_resolves_to_loopback_is_refused_naming_the_address() {
    let net = start(&["sneaky.test:*"], &[], "127.0.0.1 sneaky.test\n");
    add_hello(net.root());
    let out = run(curl(&net)
        .args(["-w", "%{http_code}"])
        .arg(format!("{}/hello.txt", net.origin.url("sneaky.test"))));
    assert_eq!(
        text(&out.stdout),
        "gate refused sneaky.test: it resolves to 127.0.0.1, a loopback address; if that is meant, map the name yourself with --resolve sneaky.test=127.0.0.1 or sandbox.resolve = [\"sneaky.test=127.0.0.1\"]\n403"
    );
    assert!(net.origin.seen().is_empty());
    let r = net.record_for("sneaky.test");
    assert_eq!(r["decision"], "deny");
    assert_eq!(r["decided_by"], "address");
    assert_eq!(r["rule"], "sneaky.test:*");
    // An address literal is refused the same way, whatever the lists say.
    let out = run(curl(&net)
        .args(["-p", "-v"])
        .arg(format!("http://127.0.0.1:{}/hello.txt", net.origin.port())));
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("403 Forbidden: gate refused 127.0.0.1"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn python_urllib_reaches_an_allowed_name_and_reads_the_refusal_otherwise() {
    let net = start(&["registry.test:{port}"], &[], "");
    let hello = add_hello(net.root());
    let script = r#"
import sys, urllib.request, urllib.error
try:
    print(urllib.request.urlopen(sys.argv[1], timeout=20).read().decode(), end="")
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode(), end="")
"#;
    let py = |url: String| run(net.client(common::python3()).arg("-c").arg(script).arg(url));
    let out = py(format!("{}/hello.txt", net.origin.url(ALLOWED)));
    assert_ok(&out);
    assert_eq!(text(&out.stdout), hello);
    let out = py(format!("{}/hello.txt", net.origin.url(REFUSED_NAME)));
    assert_ok(&out);
    assert_eq!(
        text(&out.stdout),
        format!("403 {}\n", refusal(&net, REFUSED_NAME))
    );
}

#[test]
fn git_clones_over_dumb_http_from_an_allowed_name_and_not_from_another() {
    let net = start(&["registry.test:{port}"], &[], "");
    let readme = add_git_repo(net.root(), &net.home);
    let git = |url: String, dest: &str| {
        run(net
            .client(common::require_program("git"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            .args(["clone", "-q"])
            .arg(url)
            .arg(dest))
    };
    let out = git(format!("{}/repo.git", net.origin.url(ALLOWED)), "ok");
    assert_ok(&out);
    assert_eq!(
        fs::read_to_string(net.dir.path().join("ok/README")).unwrap(),
        readme
    );
    let out = git(format!("{}/repo.git", net.origin.url(REFUSED_NAME)), "no");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("The requested URL returned error: 403"),
        "{}",
        text(&out.stderr)
    );
    assert!(!net.dir.path().join("no").exists());
    assert!(
        net.records()
            .iter()
            .filter(|r| r["host"] == REFUSED_NAME)
            .all(|r| r["decision"] == "deny")
    );
}

#[test]
fn pip_installs_from_an_allowed_index_and_not_from_another() {
    let net = start(&["registry.test:{port}"], &[], "");
    add_pip_index(net.root(), common::python3());
    let pip = |index: String, target: &str| {
        run(net
            .client(common::python3())
            .env("PIP_CONFIG_FILE", "/dev/null")
            .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
            .env("PIP_NO_CACHE_DIR", "1")
            .env("PIP_RETRIES", "0")
            .args([
                "-m",
                "pip",
                "install",
                "-vvv",
                "--no-deps",
                "--timeout",
                "20",
                "--target",
            ])
            .arg(target)
            .args(["--trusted-host", ALLOWED, "--trusted-host", REFUSED_NAME])
            .arg("--index-url")
            .arg(index)
            .arg("demo-pkg"))
    };
    let out = pip(format!("{}/simple/", net.origin.url(ALLOWED)), "site");
    assert_ok(&out);
    assert!(net.dir.path().join("site/demo_pkg/__init__.py").is_file());
    let out = pip(format!("{}/simple/", net.origin.url(REFUSED_NAME)), "site2");
    assert!(!out.status.success());
    assert!(
        format!("{}{}", text(&out.stdout), text(&out.stderr)).contains(&format!(
            "403 Client Error: Forbidden: {}",
            refusal(&net, REFUSED_NAME)
        )),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(!net.dir.path().join("site2/demo_pkg").exists());
    assert_eq!(net.record_for(REFUSED_NAME)["decision"], "deny");
}

#[test]
fn npm_installs_from_an_allowed_registry_and_not_from_another() {
    let net = start(&["registry.test:{port}"], &[], "");
    add_npm_package(net.root(), &net.origin.url(ALLOWED), common::python3());
    let npm = |registry: String, dir: &str| {
        let project = net.dir.path().join(dir);
        fs::create_dir_all(&project).unwrap();
        fs::write(
            project.join("package.json"),
            "{\"name\":\"t\",\"version\":\"1.0.0\"}\n",
        )
        .unwrap();
        run(net
            .client(common::require_program("npm"))
            .current_dir(&project)
            .env("npm_config_registry", registry)
            .env(
                "npm_config_cache",
                net.dir.path().join(format!("cache-{dir}")),
            )
            .env("npm_config_userconfig", net.dir.path().join("npmrc"))
            .env(
                "npm_config_globalconfig",
                net.dir.path().join("npmrc-global"),
            )
            .env("npm_config_audit", "false")
            .env("npm_config_fund", "false")
            .env("npm_config_update_notifier", "false")
            .env("npm_config_fetch_retries", "0")
            .args(["install", "--no-package-lock", "demo-pkg"]))
    };
    let out = npm(format!("{}/", net.origin.url(ALLOWED)), "ok");
    assert_ok(&out);
    assert!(
        net.dir
            .path()
            .join("ok/node_modules/demo-pkg/index.js")
            .is_file(),
        "{}",
        text(&out.stderr)
    );
    let out = npm(format!("{}/", net.origin.url(REFUSED_NAME)), "no");
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("403"), "{}", text(&out.stderr));
    assert!(!net.dir.path().join("no/node_modules/demo-pkg").exists());
    assert!(
        net.records()
            .iter()
            .filter(|r| r["host"] == REFUSED_NAME)
            .all(|r| r["decision"] == "deny")
    );
}

#[test]
fn a_connection_nobody_registered_is_not_served() {
    let net = start(&["registry.test:{port}"], &[], "");
    add_hello(net.root());
    let mut s = TcpStream::connect(net.proxy).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let request = format!(
        "GET {}/hello.txt HTTP/1.1\r\nHost: x\r\n\r\n",
        net.origin.url(ALLOWED)
    );
    s.write_all(request.as_bytes()).unwrap();
    let mut got = Vec::new();
    let _ = s.read_to_end(&mut got);
    assert!(got.is_empty(), "an unregistered peer got {:?}", text(&got));
    assert!(net.origin.seen().is_empty());
    let all = net.records();
    assert_eq!(all.len(), 1, "{all:#?}");
    assert_eq!(all[0]["decided_by"], "peer");
    assert_eq!(all[0]["decision"], "deny");
}

/// Sends `raw` through the front door and reads until the proxy closes.
fn exchange(net: &Net, raw: &str) -> String {
    let mut s = TcpStream::connect(net.front).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(raw.as_bytes()).unwrap();
    let mut got = Vec::new();
    s.read_to_end(&mut got).unwrap();
    text(&got)
}

#[test]
fn a_second_request_on_the_same_connection_goes_nowhere_unchecked() {
    let net = start(&["registry.test:{port}"], &[], "");
    add_hello(net.root());
    let raw = format!(
        "GET {a}/hello.txt HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\nGET {e}/hello.txt HTTP/1.1\r\nHost: y\r\n\r\n",
        a = net.origin.url(ALLOWED),
        e = net.origin.url(REFUSED_NAME)
    );
    let got = exchange(&net, &raw);
    assert_eq!(got.matches("HTTP/1.1 ").count(), 1, "{got}");
    assert!(got.starts_with("HTTP/1.1 200 OK\r\n"), "{got}");
    assert!(got.contains("\r\nConnection: close\r\n"), "{got}");
    let seen = net.origin.seen();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].host, format!("registry.test:{}", net.origin.port()));
}

#[test]
fn the_host_header_sent_on_is_the_url_s_not_the_client_s() {
    let net = start(&["registry.test:{port}"], &[], "");
    add_hello(net.root());
    let raw = format!(
        "GET {}/hello.txt HTTP/1.1\r\nHost: evil.test\r\nProxy-Authorization: Basic eDp5\r\n\r\n",
        net.origin.url(ALLOWED)
    );
    let got = exchange(&net, &raw);
    assert!(got.starts_with("HTTP/1.1 200 OK\r\n"), "{got}");
    assert_eq!(
        net.origin.seen()[0].host,
        format!("registry.test:{}", net.origin.port())
    );
}

#[test]
fn a_request_that_is_not_for_a_proxy_gets_a_400_line() {
    let net = start(&["registry.test:{port}"], &[], "");
    let got = exchange(
        &net,
        "GET /hello.txt HTTP/1.1\r\nHost: registry.test\r\n\r\n",
    );
    assert!(
        got.starts_with("HTTP/1.1 400 Bad Request: gate's proxy could not read the request: `/hello.txt` is not an absolute http:// URL"),
        "{got}"
    );
    let got = exchange(
        &net,
        "POST http://registry.test/ HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
    );
    assert!(got.starts_with("HTTP/1.1 400 "), "{got}");
    assert!(net.origin.seen().is_empty());
}

#[test]
fn a_request_body_reaches_the_server_whole() {
    let net = start(&["registry.test:{port}"], &[], "");
    add_hello(net.root());
    let upload = net.dir.path().join("upload.bin");
    fs::write(&upload, common::pseudo_random_bytes(300_000, 7)).unwrap();
    let out = run(curl(&net)
        .args(["-f", "-H", "Expect: 100-continue", "--data-binary"])
        .arg(format!("@{}", upload.display()))
        .arg(format!("{}/hello.txt", net.origin.url(ALLOWED))));
    assert_ok(&out);
    let seen = net.origin.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].method, "POST");
    assert_eq!(seen[0].body, 300_000);
}

#[test]
fn a_connection_whose_record_cannot_be_written_is_not_made() {
    // /dev/full takes the open and refuses every write (ENOSPC).
    let net = start_logging_to(
        &["registry.test:{port}"],
        &[],
        "",
        Some(Path::new("/dev/full")),
    );
    add_hello(net.root());
    let out = run(curl(&net)
        .args(["-w", "%{http_code}"])
        .arg(format!("{}/hello.txt", net.origin.url(ALLOWED))));
    assert_eq!(
        text(&out.stdout),
        "gate could not write the audit log, so nothing is relayed\n503"
    );
    let out = run(curl(&net)
        .args(["-p", "-v"])
        .arg(format!("{}/hello.txt", net.origin.url(ALLOWED))));
    assert!(!out.status.success());
    assert!(
        text(&out.stderr)
            .contains("< HTTP/1.1 503 Service Unavailable: gate could not write the audit log"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        net.origin.seen().is_empty(),
        "the origin was reached without a record"
    );
}
