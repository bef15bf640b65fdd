//! Network by domain, the kernel side, black-box: with `--allow-domain`, the real gate
//! binary runs commands at `safe` whose every `connect()` goes to a supervisor outside
//! the sandbox. A connect to the proxy's own address reaches the proxy (through a socket
//! the supervisor made); every other way out fails in the kernel. The supervisor holds
//! nothing of the caller's (no terminal, pipe or job), is gone when the command ends,
//! also when it is killed, and changes nothing about the command's pid, status and
//! signals.
//!
//! Every attack has a control: the same program at level `full` or `--net` (with a
//! stand-in "proxy" the test listens on), where it succeeds. The tests do not depend on what the proxy says
//! beyond an HTTP status line: a request for a name no list allows must be refused (403).

use crate::common;

use std::fs;
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::path::PathBuf;
use std::thread;
use std::time::{Duration, Instant};

use common::netproxy::listening_process;
use common::*;

/// The name the tests allow, and one they ask for that nobody allows.
const ALLOWED: &str = "allowed.invalid";
const DENIED: &str = "denied.invalid";

/// A test tree in /var/tmp (as the sandbox tests: a hidden path must not sit in /tmp),
/// its working directory writable by the test's user.
fn tree() -> TestEnv {
    TestEnv::new_in("/var/tmp")
}

/// gate at `safe` with a domain list, as `user`, without configuration or audit log.
fn proxied(t: &TestEnv, user: User) -> Gate {
    t.gate().user(user).args([
        "--no-config",
        "--audit-log",
        "off",
        "--level",
        "safe",
        "--allow-domain",
        ALLOWED,
    ])
}

/// The control: gate at level `full` (no sandbox: raw sockets and io_uring are refused
/// at every `safe`, even with `--net`), with `http_proxy` naming a stand-in the test
/// listens on.
fn control(t: &TestEnv, user: User, stand_in: u16) -> Gate {
    t.gate()
        .user(user)
        .args(["--no-config", "--audit-log", "off", "--level", "full"])
        .env("http_proxy", format!("http://127.0.0.1:{stand_in}"))
}

fn listener(addr: &str) -> TcpListener {
    let l = TcpListener::bind(addr).unwrap_or_else(|e| panic!("cannot listen on {addr}: {e}"));
    l.set_nonblocking(true).unwrap();
    l
}

fn port(l: &TcpListener) -> u16 {
    l.local_addr().unwrap().port()
}

/// How many connections wait on `l`, accepting them all.
fn accepted(l: &TcpListener) -> usize {
    let mut n = 0;
    loop {
        match l.accept() {
            Ok(_) => n += 1,
            Err(e) if e.kind() == ErrorKind::WouldBlock => return n,
            Err(e) => panic!("accept: {e}"),
        }
    }
}

/// Written last by the test: the command's programs wait for it.
fn go(t: &TestEnv) {
    fs::write(t.work.join("go"), "go\n").unwrap();
}

/// Python code run before each program: `P`, the proxy's port (from `http_proxy`), is
/// written to the file `port`, then the program waits for the file `go` (30 s at most:
/// a failed test must leave nothing behind for long). `attempt(name,
/// fn)` prints `name ok` or `name errno=N`.
const PRELUDE: &str = r#"
import ctypes, errno, fcntl, os, socket, sys, time
P = int(os.environ["http_proxy"].rsplit(":", 1)[1])
with open("port.tmp", "w") as f:
    f.write("%d\n" % P)
os.rename("port.tmp", "port")
give_up = time.time() + 30
while not os.path.exists("go") and time.time() < give_up:
    time.sleep(0.005)
_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
def syscall(*args):
    r = _libc.syscall(*args)
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r
def attempt(name, fn):
    try:
        fn()
    except OSError as e:
        print("%s errno=%d" % (name, e.errno), flush=True)
    else:
        print("%s ok" % name, flush=True)
def tcp(host, port, family=socket.AF_INET):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect((host, port))
    return s
"#;

/// The results a program printed, by name.
fn results(out: &Outcome) -> std::collections::BTreeMap<String, String> {
    out.stdout()
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// Run `body` (after [`PRELUDE`]) in python3 through `gate`; once the program has
/// written the proxy's port, `ready(port)` runs in the test, then the program goes on.
fn python(t: &TestEnv, gate: Gate, body: &str, ready: impl FnOnce(u16)) -> Outcome {
    let running = gate
        .arg("--")
        .arg(python3())
        .arg("-c")
        .arg(format!("{PRELUDE}\n{body}"))
        .spawn();
    let port: u16 = wait_for(&t.work.join("port")).parse().unwrap();
    ready(port);
    go(t);
    running.wait()
}

// ---------------------------------------------------------------------------------------
// What reaches the proxy.

for_each_user! {
    /// A connect to the proxy's address, by IPv4, IPv6 loopback or the IPv4-mapped
    /// form, blocking or not, reaches the proxy: it answers a request for a name nobody
    /// allows with 403. A non-blocking socket stays non-blocking. The control shows the
    /// same program without the sandbox reaches only the stand-in.
    fn the_proxys_address_reaches_the_proxy(user) {
        let t = tree();
        let body = format!(r#"
def ask(s):
    s.sendall(b"GET http://{DENIED}/ HTTP/1.1\r\nHost: {DENIED}\r\n\r\n")
    s.settimeout(5)
    line = s.makefile("rb").readline()
    if not line.startswith(b"HTTP/1.1 403") and not line.startswith(b"HTTP/1.0 403"):
        raise OSError(errno.EPROTO, repr(line))
attempt("v4", lambda: ask(tcp("127.0.0.1", P)))
attempt("v6", lambda: ask(tcp("::1", P, socket.AF_INET6)))
attempt("mapped", lambda: ask(tcp("::ffff:127.0.0.1", P, socket.AF_INET6)))
def nonblocking():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM | socket.SOCK_NONBLOCK)
    r = s.connect_ex(("127.0.0.1", P))
    if r not in (0, errno.EINPROGRESS):
        raise OSError(r, "connect")
    if not fcntl.fcntl(s.fileno(), fcntl.F_GETFL) & os.O_NONBLOCK:
        raise OSError(errno.EINVAL, "blocking now")
    s.setblocking(True)
    ask(s)
attempt("nonblocking", nonblocking)
def via_urllib():
    import urllib.error, urllib.request
    try:
        urllib.request.urlopen("http://{DENIED}/", timeout=5)
    except urllib.error.HTTPError as e:
        if e.code != 403:
            raise OSError(errno.EPROTO, "status %d" % e.code)
    else:
        raise OSError(errno.EPROTO, "not refused")
attempt("urllib", via_urllib)
"#);
        let out = python(&t, proxied(&t, user), &body, |_| {});
        out.assert_code(0);
        let r = results(&out);
        for name in ["v4", "v6", "mapped", "nonblocking", "urllib"] {
            assert_eq!(r.get(name).map(String::as_str), Some("ok"), "{name}\n{}", out.report());
        }

        // Control: at --net the same program reaches the stand-in, which says nothing.
        let stand_in = listener("127.0.0.1:0");
        let silent = port(&stand_in);
        let out = python(t_fresh(&t), control(&t, user, silent), "attempt(\"v4\", lambda: tcp(\"127.0.0.1\", P))", |_| {});
        assert_eq!(results(&out).get("v4").map(String::as_str), Some("ok"), "{}", out.report());
        assert_eq!(accepted(&stand_in), 1, "control: the stand-in should have a connection");
    }

    /// curl, pointed at the proxy by the environment gate sets (or by -x), gets the
    /// proxy's 403 for a name nobody allows; `curl --noproxy '*'` to a local web server
    /// fails, where at --net it gets the page.
    fn curl_goes_through_the_proxy_or_nowhere(user) {
        let t = tree();
        let curl = require_program("curl");
        let server = listener("127.0.0.1:0");
        let web = port(&server);
        let served = serve_http(server);
        let script = format!(
            "{curl} -s -o /dev/null -w 'env %{{http_code}}\\n' http://{DENIED}/; \
             {curl} -s -o /dev/null -w 'x %{{http_code}}\\n' -x \"$http_proxy\" http://{DENIED}/; \
             {curl} -s -o /dev/null -w 'direct %{{http_code}}\\n' --max-time 5 --noproxy '*' http://127.0.0.1:{web}/; \
             echo curl-exit $?",
            curl = curl.display()
        );
        let out = proxied(&t, user).args(["--", "sh", "-c", &script]).run();
        let r = results(&out);
        assert_eq!(r.get("env").map(String::as_str), Some("403"), "{}", out.report());
        assert_eq!(r.get("x").map(String::as_str), Some("403"), "{}", out.report());
        assert_eq!(r.get("direct").map(String::as_str), Some("000"), "{}", out.report());
        assert_ne!(r.get("curl-exit").map(String::as_str), Some("0"), "{}", out.report());
        assert_eq!(served.count(), 0, "curl --noproxy reached the web server\n{}", out.report());

        let out = t
            .gate()
            .user(user)
            .args(["--no-config", "--audit-log", "off", "--level", "safe", "--net", "--", "sh", "-c", &script])
            .run();
        assert_eq!(results(&out).get("direct").map(String::as_str), Some("200"), "control\n{}", out.report());
        assert_eq!(served.count(), 1, "control: the web server should have served curl");
    }
}

/// A fresh working directory state for a second run in the same tree: the files the
/// prelude waits for and writes are removed.
fn t_fresh(t: &TestEnv) -> &TestEnv {
    for name in ["port", "go", "port.tmp"] {
        let _ = fs::remove_file(t.work.join(name));
    }
    t
}

/// A web server that answers every request with a page, counting them.
struct Served(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl Served {
    fn count(&self) -> usize {
        self.0.swap(0, std::sync::atomic::Ordering::SeqCst)
    }
}

fn serve_http(l: TcpListener) -> Served {
    let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = count.clone();
    l.set_nonblocking(false).unwrap();
    thread::spawn(move || {
        for stream in l.incoming().flatten() {
            let mut stream: TcpStream = stream;
            let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
        }
    });
    Served(count)
}

// ---------------------------------------------------------------------------------------
// What does not.

/// Every other way out, as python code; `L` is a TCP listener on 127.0.0.1, `L6` one on
/// `::1`, `U` a UDP socket on 127.0.0.1, and the test listens on 127.0.0.2 at the proxy's
/// own port.
const ATTACKS: &str = r#"
L, L6, U = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
attempt("other_port", lambda: tcp("127.0.0.1", L))
attempt("other_address", lambda: tcp("127.0.0.2", P))
attempt("ipv6", lambda: tcp("::1", L6, socket.AF_INET6))
attempt("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", U)))
attempt("raw", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))
attempt("fastopen_sendto", lambda: socket.socket().sendto(b"x", 0x20000000, ("127.0.0.1", L)))
attempt("fastopen_sendmsg", lambda: socket.socket().sendmsg([b"x"], [], 0x20000000, ("127.0.0.1", L)))
def fastopen_connect():
    s = socket.socket()
    s.setsockopt(socket.IPPROTO_TCP, 30, 1)  # TCP_FASTOPEN_CONNECT
    s.connect(("127.0.0.1", L))
    s.send(b"x")
attempt("fastopen_connect", fastopen_connect)
# An address on an unconnected TCP socket, no MSG_FASTOPEN: the kernel ignores it.
attempt("sendto_address", lambda: socket.socket().sendto(b"x", ("127.0.0.1", L)))
params = ctypes.create_string_buffer(120)
attempt("io_uring", lambda: syscall(425, 1, params))
# An address the kernel cannot read, of an IPv4 address's size.
def bad_address():
    s = socket.socket()
    syscall(42, s.fileno(), 8, 16)  # connect(fd, (void *) 8, 16)
attempt("bad_address", bad_address)
"#;

for_each_user! {
    /// Direct connects are refused: to another port with a listener (EACCES, Landlock),
    /// to the proxy's port on another address, over IPv6, UDP and raw sockets (EPERM,
    /// seccomp), TCP Fast Open by sendto and sendmsg (EPERM) or by TCP_FASTOPEN_CONNECT
    /// (the connect is refused), io_uring (EPERM); an address given to sendto on a TCP
    /// socket is ignored (EPIPE). No listener sees a connection. The control runs the
    /// same program at level full, where each of them gets through (raw sockets only as
    /// root: CAP_NET_RAW).
    fn every_other_way_out_is_refused(user) {
        let t = tree();
        let l = listener("127.0.0.1:0");
        let l6 = listener("[::1]:0");
        let u = UdpSocket::bind("127.0.0.1:0").unwrap();
        u.set_nonblocking(true).unwrap();
        let args = [port(&l).to_string(), port(&l6).to_string(), u.local_addr().unwrap().port().to_string()];
        let mut same_port = None;
        let out = run_attacks(&t, proxied(&t, user), &args, |p| {
            same_port = Some(listener(&format!("127.0.0.2:{p}")));
        });
        let r = results(&out);
        let expect = [
            ("other_port", "errno=13"),
            ("other_address", "errno=13"),
            ("ipv6", "errno=13"),
            ("udp", "errno=1"),
            ("raw", "errno=1"),
            ("fastopen_sendto", "errno=1"),
            ("fastopen_sendmsg", "errno=1"),
            ("fastopen_connect", "errno=13"),
            ("sendto_address", "errno=32"),
            ("io_uring", "errno=1"),
            ("bad_address", "errno=14"),
        ];
        for (name, want) in expect {
            assert_eq!(r.get(name).map(String::as_str), Some(want), "{name}\n{}", out.report());
        }
        assert_eq!(accepted(&l), 0, "a connection reached the listener\n{}", out.report());
        assert_eq!(accepted(&l6), 0, "a connection reached the IPv6 listener");
        assert_eq!(accepted(same_port.as_ref().unwrap()), 0, "a connection reached 127.0.0.2 at the proxy's port");
        let mut buf = [0u8; 16];
        assert!(u.recv(&mut buf).is_err(), "a datagram got through");

        // Control: the stand-in "proxy" listens on 127.0.0.1 and on 127.0.0.2 at the
        // same port.
        let stand_in = listener("127.0.0.1:0");
        let other_address = listener(&format!("127.0.0.2:{}", port(&stand_in)));
        let out = run_attacks(t_fresh(&t), control(&t, user, port(&stand_in)), &args, |_| {});
        let r = results(&out);
        let root = uid_of(user) == 0;
        for (name, _) in expect {
            let want = match name {
                "sendto_address" => "errno=32",
                "bad_address" => "errno=14",
                "raw" if !root => "errno=1",
                _ => "ok",
            };
            assert_eq!(r.get(name).map(String::as_str), Some(want), "control: {name}\n{}", out.report());
        }
        // other_port, the two fast opens by send and the one by connect.
        assert_eq!(accepted(&l), 4, "control: the listener's connections\n{}", out.report());
        assert_eq!(accepted(&l6), 1, "control: the IPv6 listener's connection");
        assert_eq!(accepted(&other_address), 1, "control: 127.0.0.2's connection");
        assert!(u.recv(&mut buf).is_ok(), "control: the datagram");
    }
}

fn run_attacks(t: &TestEnv, gate: Gate, args: &[String; 3], ready: impl FnOnce(u16)) -> Outcome {
    let running = gate
        .arg("--")
        .arg(python3())
        .arg("-c")
        .arg(format!("{PRELUDE}\n{ATTACKS}"))
        .args(args)
        .spawn();
    let port: u16 = wait_for(&t.work.join("port")).parse().unwrap();
    ready(port);
    go(t);
    running.wait()
}

// ---------------------------------------------------------------------------------------
// The supervisor's life.

/// Fields of /proc/PID/stat after the command name: state, ppid, pgrp, session.
fn stat(pid: u32) -> Option<(u32, u32, u32)> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &text[text.rfind(')')? + 2..];
    let f: Vec<&str> = after.split(' ').collect();
    if f[0] == "Z" {
        return None;
    }
    Some((f[1].parse().ok()?, f[2].parse().ok()?, f[3].parse().ok()?))
}

/// Wait (within the deadline) until process `pid` is gone.
#[track_caller]
fn gone(pid: u32) {
    let end = Instant::now() + DEADLINE;
    while stat(pid).is_some() {
        assert!(Instant::now() < end, "the supervisor {pid} is still there");
        thread::sleep(Duration::from_millis(5));
    }
}

/// A command that writes its pid and the proxy's port, waits for `go`, then runs
/// `then` (shell code).
fn waiting(then: &str) -> String {
    format!(
        "echo $$ > pid; echo \"${{http_proxy##*:}}\" > port; \
         n=0; while [ ! -e go ] && [ $n -lt 3000 ]; do sleep 0.01; n=$((n+1)); done; {then}"
    )
}

/// Start `gate -- sh -c waiting(then)`, and find the supervisor: (running, pid of the
/// command as it wrote it, the supervisor's pid).
fn started(t: &TestEnv, user: User, then: &str) -> (Running, u32, u32) {
    let running = proxied(t, user)
        .args(["--", "sh", "-c", &waiting(then)])
        .spawn();
    let pid: u32 = wait_for(&t.work.join("pid")).parse().unwrap();
    let port: u16 = wait_for(&t.work.join("port")).parse().unwrap();
    let supervisor = listening_process(port).expect("no process listens on the proxy's port");
    (running, pid, supervisor)
}

for_each_user! {
    /// The command keeps gate's pid and its own exit status; the supervisor is not its
    /// child, leads a session of its own, holds /dev/null on its standard descriptors
    /// and no pipe or terminal, cannot be signalled from inside (Landlock's scopes), and
    /// is gone once the command has ended.
    fn the_supervisor_is_detached_and_ends_with_the_command(user) needs root because "only root may read the non-dumpable supervisor's /proc entries" {
        let t = tree();
        let (running, pid, supervisor) = started(
            &t,
            user,
            "kill -TERM $(cat supervisor) 2>/dev/null; echo $? > killed; \
             n=0; while [ ! -e go2 ] && [ $n -lt 3000 ]; do sleep 0.01; n=$((n+1)); done; exit 7",
        );
        assert_eq!(pid, running.pid, "the command does not have gate's pid");
        let (ppid, pgrp, session) = stat(supervisor).unwrap();
        assert_ne!(ppid, pid, "the supervisor is the command's child");
        assert_eq!(session, supervisor, "the supervisor has no session of its own");
        assert_eq!(pgrp, supervisor);
        for fd in 0..=2 {
            let target = fs::read_link(format!("/proc/{supervisor}/fd/{fd}")).unwrap();
            assert_eq!(target, PathBuf::from("/dev/null"), "fd {fd}");
        }
        // It parses what the command sends: even as root, with no capability at all, and
        // with no_new_privs, so that no exec (of a program with file capabilities, say)
        // could give any back.
        let status = fs::read_to_string(format!("/proc/{supervisor}/status")).unwrap();
        for set in ["CapInh", "CapPrm", "CapEff", "CapAmb"] {
            let line = status.lines().find(|l| l.starts_with(set)).unwrap();
            assert!(
                line.ends_with("0000000000000000"),
                "the supervisor holds capabilities: {line}"
            );
        }
        assert!(
            status.lines().any(|l| l == "NoNewPrivs:\t1"),
            "the supervisor has no no_new_privs\n{status}"
        );
        for fd in fs::read_dir(format!("/proc/{supervisor}/fd")).unwrap().flatten() {
            let target = fs::read_link(fd.path()).unwrap().to_string_lossy().into_owned();
            assert!(
                !target.starts_with("pipe:") && !target.starts_with("/dev/pts") && !target.starts_with("/dev/tty"),
                "the supervisor holds {target}"
            );
        }
        fs::write(t.work.join("supervisor"), format!("{supervisor}\n")).unwrap();
        go(&t);
        assert_ne!(wait_for(&t.work.join("killed")), "0", "the command signalled the supervisor");
        assert!(stat(supervisor).is_some(), "the supervisor died of the command's signal");
        fs::write(t.work.join("go2"), "").unwrap();
        let out = running.wait();
        out.assert_code(7);
        gone(supervisor);
    }

    /// Killed (SIGKILL), the command dies of that signal, and the supervisor goes with
    /// it; a command that signals itself (SIGTERM) dies of its signal too.
    fn a_killed_command_takes_the_supervisor_with_it(user) needs root because "only root may read the non-dumpable supervisor's /proc entries" {
        let t = tree();
        let (running, pid, supervisor) = started(&t, user, "sleep 60");
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), nix::sys::signal::Signal::SIGKILL).unwrap();
        let out = running.wait();
        assert_eq!(out.signal(), Some(libc::SIGKILL), "{}", out.report());
        gone(supervisor);

        let t = tree();
        let (running, _, supervisor) = started(&t, user, "kill -TERM $$");
        go(&t);
        let out = running.wait();
        assert_eq!(out.signal(), Some(libc::SIGTERM), "{}", out.report());
        gone(supervisor);
    }

    /// A process the command leaves behind reaches the proxy while the command runs,
    /// and is ended with the command (tests/left_behind.rs): it never reaches anything
    /// again. (Were it left running, its `connect()` would fail: the supervisor is gone
    /// and the kernel fails the call.)
    fn processes_left_behind_lose_the_network(user) {
        let t = tree();
        let program = r#"
import os, socket, sys, time
P = int(os.environ["http_proxy"].rsplit(":", 1)[1])
def try_once():
    try:
        socket.create_connection(("127.0.0.1", P), timeout=5).close()
        return "ok"
    except OSError as e:
        return "errno=%d" % e.errno
first = try_once()
with open("first.tmp", "w") as f: f.write(first + "\n")
os.rename("first.tmp", "first")
give_up = time.time() + 30
while not os.path.exists("go") and time.time() < give_up:
    time.sleep(0.005)
later = try_once()
with open("later.tmp", "w") as f: f.write(later + "\n")
os.rename("later.tmp", "later")
"#;
        let script = format!(
            "echo \"${{http_proxy##*:}}\" > port; {} -c '{}' </dev/null >/dev/null 2>&1 & \
             n=0; while [ ! -e first ] && [ $n -lt 3000 ]; do sleep 0.01; n=$((n+1)); done",
            python3().display(),
            program.replace('\'', "'\\''")
        );
        let out = proxied(&t, user).args(["--", "sh", "-c", &script]).run();
        out.assert_code(0);
        assert_eq!(wait_for(&t.work.join("first")), "ok", "while the command runs\n{}", out.report());
        let port: u16 = wait_for(&t.work.join("port")).parse().unwrap();
        let end = Instant::now() + DEADLINE;
        while listening_process(port).is_some() {
            assert!(Instant::now() < end, "the supervisor outlived the command");
            thread::sleep(Duration::from_millis(5));
        }
        go(&t);
        thread::sleep(Duration::from_secs(1));
        let later = fs::read_to_string(t.work.join("later")).unwrap_or_default();
        assert!(later.is_empty(), "a process left behind still ran after the command: {later}");
    }

    /// `gate … | cat` ends when the command ends: the supervisor holds no end of the
    /// pipe (nor does it make the shell wait).
    fn a_pipeline_through_cat_ends_with_the_command(user) {
        let t = tree();
        let gate = gate_binary_for(user);
        let script = format!(
            "{} --no-config --audit-log off --level safe --allow-domain {ALLOWED} -- sh -c 'echo piped; sleep 0.1' | cat",
            gate.display()
        );
        let out = t
            .gate()
            .user(user)
            .program(require_program("sh"))
            .args(["-c", &script])
            .run();
        out.assert_code(0);
        out.assert_stdout("piped\n");
    }

    /// A command that already runs under a seccomp supervisor of someone else's cannot
    /// get one of gate's (the kernel allows one listener per filter chain): gate refuses
    /// with one line and status 125, and runs nothing. The control starts the same
    /// way without a domain list, and runs.
    fn a_command_under_another_supervisor_is_refused(user) {
        let t = tree();
        let gate = gate_binary_for(user);
        let program = r#"
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
assert libc.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS
# Notify a call number nothing uses; allow everything else.
code = struct.pack("HBBI", 0x20, 0, 0, 0) + struct.pack("HBBI", 0x15, 0, 1, 0x3fffffff) \
     + struct.pack("HBBI", 0x06, 0, 0, 0x7fc00000) + struct.pack("HBBI", 0x06, 0, 0, 0x7fff0000)
buf = ctypes.create_string_buffer(code)
prog = struct.pack("HxxxxxxQ", 4, ctypes.addressof(buf))
pbuf = ctypes.create_string_buffer(prog)
fd = libc.syscall(317, 1, 8, pbuf)  # seccomp(SET_MODE_FILTER, NEW_LISTENER)
assert fd >= 0, ctypes.get_errno()
# Kept open across exec: the kernel forgets a listener once its last descriptor closes.
os.set_inheritable(fd, True)
os.execv(sys.argv[1], sys.argv[1:])
"#;
        let run = |domains: &[&str]| {
            t_fresh(&t);
            let _ = fs::remove_file(t.work.join("ran"));
            t.gate()
                .user(user)
                .program(python3())
                .args(["-c", program])
                .arg(&gate)
                .args(["--no-config", "--audit-log", "off", "--level", "safe"])
                .args(domains)
                .args(["--", "sh", "-c", "echo ran > ran"])
                .run()
        };
        let out = run(&[]);
        out.assert_code(0);
        assert!(t.work.join("ran").exists(), "control: the command should run\n{}", out.report());

        let out = run(&["--allow-domain", ALLOWED]);
        out.assert_gate_error();
        out.assert_stderr_contains("supervisor");
        assert_eq!(out.stderr().lines().count(), 1, "{}", out.report());
        assert_absent(&t.work.join("ran"), &out);
    }

    /// The audit record of a proxied run says what the sandbox enforces: the network
    /// goes through the proxy, with the domain lists.
    fn the_audit_record_shows_the_proxied_network(user) {
        let t = tree();
        let log = t.root.join("audit.jsonl");
        if running_as_root() {
            fs::write(&log, "").unwrap();
            let id = uid_of(user);
            std::os::unix::fs::chown(&log, Some(id), Some(id)).unwrap();
        }
        let out = t
            .gate()
            .user(user)
            .args(["--no-config", "--level", "safe", "--allow-domain", ALLOWED, "--deny-domain", DENIED])
            .arg("--audit-log")
            .arg(&log)
            .args(["--", "true"])
            .run();
        out.assert_code(0);
        let records = audit_records(&log);
        let network = &records.last().expect("no audit record")["sandbox"]["network"];
        assert_eq!(network["proxied"]["allow_domains"], serde_json::json!([ALLOWED]), "{network}");
        assert_eq!(network["proxied"]["deny_domains"], serde_json::json!([DENIED]), "{network}");
        assert_eq!(network["tcp_connect"], serde_json::json!([]), "{network}");
    }
}

// ---------------------------------------------------------------------------------------
// What gate doctor says.

/// `gate doctor` says whether a domain list can be enforced, from a trial listener: yes
/// on this machine (Linux 6.18), and no inside a command that already runs under gate's
/// own supervisor (the kernel allows one listener per filter chain), which is what a
/// gate started there would meet.
#[test]
fn doctor_says_whether_a_domain_list_can_be_enforced() {
    let t = tree();
    let out = t.gate().args(["--no-config", "doctor"]).run();
    let line = out
        .stdout()
        .lines()
        .find(|l| l.starts_with("domains "))
        .map(str::to_owned)
        .unwrap_or_else(|| panic!("no domains line\n{}", out.report()));
    assert!(line.contains("can be enforced"), "{line}");

    let json = |out: &Outcome| -> serde_json::Value {
        serde_json::from_str(out.stdout().trim())
            .unwrap_or_else(|e| panic!("not JSON ({e})\n{}", out.report()))
    };
    let out = t.gate().args(["--no-config", "doctor", "--json"]).run();
    assert_eq!(
        json(&out)["domains"]["enforceable"],
        true,
        "{}",
        out.report()
    );

    let gate = gate_binary_for(User::Current);
    let out = proxied(&t, User::Current)
        .arg("--")
        .arg(&gate)
        .args(["--no-config", "doctor", "--json"])
        .run();
    let domains = &json(&out)["domains"];
    assert_eq!(domains["enforceable"], false, "{}", out.report());
    assert!(
        domains["text"].as_str().unwrap().contains("EBUSY"),
        "{domains}"
    );
}

/// Python that loads a filter under which `seccomp(SECCOMP_GET_ACTION_AVAIL)` fails
/// with EINVAL, as on a kernel without user notification, then execs its arguments.
const WITHOUT_USER_NOTIFICATION: &str = r#"
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
assert libc.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS
ins = lambda code, jt, jf, k: struct.pack("HBBI", code, jt, jf, k)
code = (ins(0x20, 0, 0, 0) + ins(0x15, 0, 3, 317)      # seccomp(2)?
        + ins(0x20, 0, 0, 16) + ins(0x15, 0, 1, 2)     # op SECCOMP_GET_ACTION_AVAIL?
        + ins(0x06, 0, 0, 0x00050000 | 22)             # EINVAL
        + ins(0x06, 0, 0, 0x7fff0000))
buf = ctypes.create_string_buffer(code)
pbuf = ctypes.create_string_buffer(struct.pack("HxxxxxxQ", 6, ctypes.addressof(buf)))
assert libc.syscall(317, 1, 0, pbuf) == 0, ctypes.get_errno()
os.execv(sys.argv[1], sys.argv[1:])
"#;

for_each_user! {
    /// On a kernel without seccomp user notification (simulated: a filter makes the
    /// kernel deny knowing the action), a domain list runs nothing, even with
    /// --best-effort: one `gate:` line, status 125, and `gate check` says so too. The
    /// control runs the same way without a domain list.
    fn a_kernel_without_user_notification_runs_nothing(user) {
        let t = tree();
        let gate = gate_binary_for(user);
        let run = |args: &[&str]| {
            let _ = fs::remove_file(t.work.join("ran"));
            t.gate()
                .user(user)
                .program(python3())
                .args(["-c", WITHOUT_USER_NOTIFICATION])
                .arg(&gate)
                .args(["--no-config", "--audit-log", "off", "--level", "safe"])
                .args(args)
                .run()
        };
        let out = run(&["--", "sh", "-c", "echo ran > ran"]);
        out.assert_code(0);
        assert!(t.work.join("ran").exists(), "control: the command should run\n{}", out.report());

        for best_effort in [&[][..], &["--best-effort"][..]] {
            let mut args = vec!["--allow-domain", ALLOWED];
            args.extend_from_slice(best_effort);
            args.extend_from_slice(&["--", "sh", "-c", "echo ran > ran"]);
            let out = run(&args);
            out.assert_gate_error();
            out.assert_stderr_contains("user notification");
            assert_eq!(out.stderr().lines().count(), 1, "{}", out.report());
            assert_absent(&t.work.join("ran"), &out);

            let mut args = vec!["--allow-domain", ALLOWED];
            args.extend_from_slice(best_effort);
            args.extend_from_slice(&["check", "--", "true"]);
            let out = run(&args);
            out.assert_stdout_contains("exit 125");
        }
    }
}

/// `gate check` says a command with a domain list would run, with the network by domain.
#[test]
fn check_says_the_network_goes_by_domain() {
    let t = tree();
    let out = t
        .gate()
        .args([
            "--no-config",
            "--level",
            "safe",
            "--allow-domain",
            ALLOWED,
            "check",
            "--json",
            "--",
            "true",
        ])
        .run();
    out.assert_code(0);
    let report: serde_json::Value = serde_json::from_str(out.stdout().trim()).unwrap();
    assert_eq!(report["outcome"], "run", "{report}");
    let out = t
        .gate()
        .args([
            "--no-config",
            "--level",
            "safe",
            "--allow-domain",
            ALLOWED,
            "check",
            "--",
            "true",
        ])
        .run();
    let text = out.stdout();
    assert!(
        text.contains("network by domain through gate's proxy (1 allowed, 0 denied)"),
        "{text}"
    );
}
