//! The proxy's SOCKS5 reader: `netproxy::socks::{greeting, request}`.
//!
//! Input: any bytes, read as a greeting and as a request. Neither may panic. A greeting
//! read is `VER NMETHODS METHODS`, exactly that long, and picks "no authentication"
//! exactly when the client offers it. A request read names its length within the input;
//! a shorter input is not complete yet, so nothing is decided from half a request; a
//! CONNECT it accepts is version 5, command 1, a port other than 0, and a host in
//! normal form (it reads back as itself).

use gate::netproxy::pattern::Host;
use gate::netproxy::socks::{self, Request};

fn check_greeting(data: &[u8]) {
    let Some((method, used)) = socks::greeting(data) else {
        if let Some(&n) = data.get(1) {
            assert!(
                data.len() < 2 + usize::from(n),
                "a complete greeting was not read"
            );
        }
        return;
    };
    assert_eq!(used, 2 + usize::from(data[1]), "the greeting's length");
    assert!(used <= data.len());
    let offered = data[2..used].contains(&0);
    assert_eq!(method, if offered { 0 } else { 0xff }, "the method picked");
}

fn check_request(data: &[u8]) {
    let Some((request, used)) = socks::request(data) else {
        return;
    };
    assert!(used <= data.len(), "a request longer than its input");
    // The same bytes alone give the same request.
    assert_eq!(socks::request(&data[..used]), Some((request.clone(), used)));
    // An address type the proxy does not know is refused at once; for the others,
    // every shorter input is incomplete.
    if matches!(data[3], 1 | 3 | 4) {
        for k in 0..used {
            assert_eq!(
                socks::request(&data[..k]),
                None,
                "half a request decided ({k} of {used} bytes)"
            );
        }
    }
    if let Request::Connect(host, port) = request {
        assert_eq!(
            (data[0], data[1]),
            (socks::VERSION, 1),
            "a CONNECT of another version or command"
        );
        assert_ne!(port, 0);
        assert_eq!(u16::from_be_bytes([data[used - 2], data[used - 1]]), port);
        assert_eq!(
            Host::parse(&host.to_string()),
            Ok(host.clone()),
            "a host not in normal form"
        );
        if let Host::Name(name) = &host {
            assert_eq!(data[3], 3, "a name from an address type");
            let written = std::str::from_utf8(&data[5..used - 2]).expect("a name read is text");
            assert_eq!(
                written.to_ascii_lowercase().trim_end_matches('.'),
                name,
                "the name is not the one the client wrote"
            );
        }
    }
}

pub fn check(data: &[u8]) {
    check_greeting(data);
    check_request(data);
}
