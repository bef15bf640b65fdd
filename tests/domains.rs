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

#[macro_use]
mod common;

use std::fs;
use std::path::Path;

use common::netproxy::{
    ALLOWED, MAPPED, Origin, REFUSED_NAME, add_git_repo, add_hello, add_npm_package, add_pip_index,
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
