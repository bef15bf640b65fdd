//! gate's domain proxy (issue 16): what it adds to a request and to a download.
//!
//! Targets: a proxied HTTP request to a local server within 1 ms (median) of a direct
//! one; a 100 MB download through the proxy at ≥ 80 % of the direct throughput.
//! The client's side is the supervisor's: each connection to the proxy is made with
//! `netproxy::connect_registered`, as the command's would be. Run with
//! `cargo bench --bench netproxy`; with `NETPROXY_REPORT=1` it instead
//! measures the three ways in turn (interleaved, which a loaded machine needs) and prints
//! medians and the throughput ratio.

use std::hint::black_box;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use gate::netproxy::{Admit, Policy, Proxy, connect_registered};

#[allow(dead_code)]
#[path = "../tests/common/netproxy.rs"]
mod local;

const BIG: u64 = 100 * 1000 * 1000;

struct Setup {
    origin: local::Origin,
    proxy: SocketAddr,
    admit: Admit,
    _dir: tempfile::TempDir,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    local::add_hello(dir.path());
    let origin = local::Origin::start(dir.path());
    let policy = Policy::new(&["registry.test:*".into()], &[])
        .unwrap()
        .with_resolve(&["registry.test=127.0.0.1".into()])
        .unwrap();
    let proxy = Proxy::bind(policy).unwrap();
    let (addr, admit) = (proxy.addr().unwrap(), proxy.admit());
    std::thread::spawn(move || proxy.serve(None));
    Setup {
        origin,
        proxy: addr,
        admit,
        _dir: dir,
    }
}

/// Sends `request` on `s` and reads the whole answer; returns its length.
fn exchange(mut s: TcpStream, request: &[u8], buf: &mut [u8]) -> usize {
    s.set_nodelay(true).unwrap();
    s.write_all(request).unwrap();
    let mut total = 0;
    loop {
        match s.read(buf).unwrap() {
            0 => return total,
            n => total += n,
        }
    }
}

/// A CONNECT tunnel through the proxy, with the proxy's answer read.
fn tunnel(set: &Setup) -> TcpStream {
    let mut s = connect_registered(&set.admit, set.proxy).unwrap();
    s.set_nodelay(true).unwrap();
    write!(
        s,
        "CONNECT registry.test:{} HTTP/1.1\r\n\r\n",
        set.origin.port()
    )
    .unwrap();
    let mut head = [0u8; 39];
    s.read_exact(&mut head).unwrap();
    assert_eq!(&head[..], b"HTTP/1.1 200 Connection established\r\n\r\n");
    s
}

/// The three ways of making one request, measured in turn so that the machine's load
/// weighs on each alike.
struct Ways {
    direct: Vec<u8>,
    absolute: Vec<u8>,
}

impl Ways {
    fn new(set: &Setup, path: &str) -> Ways {
        let port = set.origin.port();
        Ways {
            direct: format!("GET {path} HTTP/1.1\r\nHost: registry.test\r\n\r\n").into_bytes(),
            absolute: format!(
                "GET http://registry.test:{port}{path} HTTP/1.1\r\nHost: registry.test\r\n\r\n"
            )
            .into_bytes(),
        }
    }

    /// Runs way `i` (0 direct, 1 plain HTTP through the proxy, 2 CONNECT) once.
    fn run(&self, set: &Setup, i: usize, buf: &mut [u8]) -> usize {
        match i {
            0 => exchange(
                TcpStream::connect(set.origin.addr).unwrap(),
                &self.direct,
                buf,
            ),
            1 => exchange(
                connect_registered(&set.admit, set.proxy).unwrap(),
                &self.absolute,
                buf,
            ),
            _ => exchange(tunnel(set), &self.direct, buf),
        }
    }
}

const NAMES: [&str; 3] = ["direct", "proxied_http", "proxied_connect"];

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// Interleaved medians: `rounds` of each way, in turn.
fn interleaved(set: &Setup, ways: &Ways, rounds: usize, buf: &mut [u8]) -> [Vec<f64>; 3] {
    let mut times: [Vec<f64>; 3] = Default::default();
    for _ in 0..rounds {
        for (i, t) in times.iter_mut().enumerate() {
            let start = Instant::now();
            black_box(ways.run(set, i, buf));
            t.push(start.elapsed().as_secs_f64());
        }
    }
    times
}

fn report() {
    let set = setup();
    let mut buf = vec![0u8; 256 * 1024];
    let small = Ways::new(&set, "/hello.txt");
    interleaved(&set, &small, 200, &mut buf); // warm up
    let mut times = interleaved(&set, &small, 2000, &mut buf);
    let direct = median(&mut times[0]);
    println!("request (interleaved, 2000 each), median:");
    for (i, t) in times.iter_mut().enumerate() {
        let m = median(t);
        println!(
            "  {:16} {:8.1} µs  (+{:.1} µs)",
            NAMES[i],
            m * 1e6,
            (m - direct) * 1e6
        );
    }
    let big = Ways::new(&set, &format!("/bytes/{BIG}"));
    let mut times = interleaved(&set, &big, 9, &mut buf);
    let direct = median(&mut times[0]);
    println!("100 MB download (interleaved, 9 each), median:");
    for (i, t) in times.iter_mut().enumerate() {
        let m = median(t);
        println!(
            "  {:16} {:8.0} MB/s  ({:.0} % of direct)",
            NAMES[i],
            BIG as f64 / m / 1e6,
            direct / m * 100.0
        );
    }
}

fn requests(c: &mut Criterion) {
    if std::env::var_os("NETPROXY_REPORT").is_some() {
        report();
        return;
    }

    let set = setup();
    let port = set.origin.port();
    let origin_form = b"GET /hello.txt HTTP/1.1\r\nHost: registry.test\r\n\r\n".to_vec();
    let absolute = format!(
        "GET http://registry.test:{port}/hello.txt HTTP/1.1\r\nHost: registry.test\r\n\r\n"
    )
    .into_bytes();
    let mut buf = vec![0u8; 64 * 1024];
    let mut g = c.benchmark_group("netproxy_request");
    g.measurement_time(Duration::from_secs(5));
    g.bench_function("direct", |b| {
        b.iter(|| {
            exchange(
                TcpStream::connect(set.origin.addr).unwrap(),
                &origin_form,
                &mut buf,
            )
        })
    });
    g.bench_function("proxied_http", |b| {
        b.iter(|| {
            exchange(
                connect_registered(&set.admit, set.proxy).unwrap(),
                &absolute,
                &mut buf,
            )
        })
    });
    g.bench_function("proxied_connect", |b| {
        b.iter(|| exchange(tunnel(&set), &origin_form, &mut buf))
    });
    g.finish();
}

fn downloads(c: &mut Criterion) {
    if std::env::var_os("NETPROXY_REPORT").is_some() {
        return;
    }
    let set = setup();
    let port = set.origin.port();
    let origin_form =
        format!("GET /bytes/{BIG} HTTP/1.1\r\nHost: registry.test\r\n\r\n").into_bytes();
    let absolute = format!(
        "GET http://registry.test:{port}/bytes/{BIG} HTTP/1.1\r\nHost: registry.test\r\n\r\n"
    )
    .into_bytes();
    let mut buf = vec![0u8; 256 * 1024];
    let mut g = c.benchmark_group("netproxy_100MB");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));
    g.throughput(Throughput::Bytes(BIG));
    g.bench_function("direct", |b| {
        b.iter(|| {
            exchange(
                TcpStream::connect(set.origin.addr).unwrap(),
                &origin_form,
                &mut buf,
            )
        })
    });
    g.bench_function("proxied_http", |b| {
        b.iter(|| {
            exchange(
                connect_registered(&set.admit, set.proxy).unwrap(),
                &absolute,
                &mut buf,
            )
        })
    });
    g.bench_function("proxied_connect", |b| {
        b.iter(|| exchange(tunnel(&set), &origin_form, &mut buf))
    });
    g.finish();
}

criterion_group!(benches, requests, downloads);
criterion_main!(benches);
