use super::*;

fn host(h: &str) -> Host {
    Host::parse(h).unwrap()
}

#[test]
fn an_unlisted_refusal_names_the_domain_and_the_setting() {
    let l = refusal_line(&Verdict::Unlisted, &host("evil.test"), 443).unwrap();
    assert_eq!(
        l,
        "gate refused evil.test:443: not in sandbox.allow_domains; --allow-domain evil.test or sandbox.allow_domains = [\"evil.test\"] would allow it"
    );
    let l = refusal_line(&Verdict::Unlisted, &host("evil.test"), 8443).unwrap();
    assert!(l.contains("--allow-domain evil.test:8443 "), "{l}");
    let l = refusal_line(&Verdict::Unlisted, &host("::1"), 443).unwrap();
    assert!(l.contains("--allow-domain [::1] "), "{l}");
    // Port 80 is allowed only when written.
    let l = refusal_line(&Verdict::Unlisted, &host("cdn.test"), 80).unwrap();
    assert!(l.contains("--allow-domain cdn.test:80 "), "{l}");
}

#[test]
fn a_deny_refusal_names_the_rule() {
    let l = refusal_line(
        &Verdict::Deny("@github (github.com)".into()),
        &host("github.com"),
        443,
    )
    .unwrap();
    assert!(
        l.starts_with(
            "gate refused github.com:443: sandbox.deny_domains has `@github (github.com)`"
        ),
        "{l}"
    );
    assert_eq!(
        refusal_line(&Verdict::Allow("x".into()), &host("x"), 1),
        None
    );
}

#[test]
fn a_private_answer_names_the_address_and_the_mapping() {
    let l = address_line(&host("registry.test"), "127.0.0.1".parse().unwrap(), &[]);
    assert_eq!(
        l,
        "gate refused registry.test: it resolves to 127.0.0.1, a loopback address; if that is meant, map the name yourself with --resolve registry.test=127.0.0.1 or sandbox.resolve = [\"registry.test=127.0.0.1\"]"
    );
}

fn shared(hosts: &str, allow: &[&str], resolve: &[&str]) -> Shared {
    let s = |l: &[&str]| l.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    Shared {
        policy: Policy::new(&s(allow), &[])
            .unwrap()
            .with_resolve(&s(resolve))
            .unwrap(),
        resolver: Resolver::from_files(hosts, "nameserver 127.0.0.1\n"),
        admit: Admit::default(),
        audit: None,
        own: Vec::new(),
        own_unknown: None,
    }
}

#[test]
fn this_machines_own_addresses_are_refused_unless_mapped() {
    // The real interfaces, as the proxy reads them when it starts.
    let own = own_addresses().unwrap();
    assert!(own.contains(&"127.0.0.1".parse().unwrap()), "{own:?}");
    // The addresses of the interfaces that are not loopback, and a public-looking
    // one as if an interface had it (this machine's own are all private ranges).
    let public: IpAddr = "11.22.33.44".parse().unwrap();
    let mut tried: Vec<IpAddr> = own.iter().copied().filter(|ip| !ip.is_loopback()).collect();
    tried.push(public);
    let hosts: String = tried.iter().map(|ip| format!("{ip} own.test\n")).collect();
    let mapped: Vec<String> = tried.iter().map(|ip| format!("mapped.test={ip}")).collect();
    let mapped: Vec<&str> = mapped.iter().map(String::as_str).collect();
    let mut s = shared(&hosts, &[], &mapped);
    s.own = own.clone();
    s.own.push(public);
    let got = addresses(&s, &host("own.test"), 443);
    assert!(
        matches!(&got, Err(Refusal::Address(l)) if l.contains("11.22.33.44, this machine's own address")
                || l.contains("a private") || l.contains("a unique local") || l.contains("a link-local")
                || l.contains("a documentation")),
        "{got:?}"
    );
    let literal = addresses(&s, &Host::Ip(public), 443);
    assert!(
        matches!(&literal, Err(Refusal::Address(l)) if l.contains("this machine's own address")),
        "{literal:?}"
    );
    // The same address without the interface is public: the control.
    s.own.retain(|ip| *ip != public);
    assert_eq!(
        addresses(&s, &Host::Ip(public), 443),
        Ok(vec![SocketAddr::new(public, 443)])
    );
    s.own.push(public);
    // A name the user mapped reaches them all.
    let all: Vec<SocketAddr> = tried.iter().map(|ip| SocketAddr::new(*ip, 443)).collect();
    assert_eq!(addresses(&s, &host("mapped.test"), 443), Ok(all.clone()));
    // Addresses that could not be read refuse every name but a mapped one.
    s.own = Vec::new();
    s.own_unknown = Some("no netlink".into());
    assert!(matches!(
        addresses(&s, &Host::Ip("8.8.8.8".parse().unwrap()), 443),
        Err(Refusal::Address(l)) if l.contains("could not read this machine's addresses (no netlink)")
    ));
    assert_eq!(addresses(&s, &host("mapped.test"), 443), Ok(all));
}

#[test]
fn only_public_addresses_are_used_unless_mapped() {
    let s = shared(
        "127.0.0.1 loop.test\n10.0.0.1 mixed.test\n93.184.216.34 mixed.test\n",
        &[],
        &["mapped.test=127.0.0.1"],
    );
    assert!(matches!(
        addresses(&s, &host("loop.test"), 443),
        Err(Refusal::Address(l)) if l.contains("127.0.0.1, a loopback")
    ));
    assert_eq!(
        addresses(&s, &host("mixed.test"), 443),
        Ok(vec!["93.184.216.34:443".parse().unwrap()])
    );
    assert_eq!(
        addresses(&s, &host("mapped.test"), 80),
        Ok(vec!["127.0.0.1:80".parse().unwrap()])
    );
    assert!(matches!(
        addresses(&s, &host("169.254.169.254"), 80),
        Err(Refusal::Address(l)) if l.contains("link-local")
    ));
}

#[test]
fn a_name_that_does_not_resolve_is_a_502_allowed_by_its_rule() {
    // A UDP port with nobody behind it: the kernel answers "connection refused".
    let closed = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let server = closed.local_addr().unwrap();
    drop(closed);
    let mut s = shared("", &["nowhere.test"], &[]);
    s.resolver =
        Resolver::from_files("", "").with_servers(vec![server], Duration::from_millis(300));
    let mut e = Event::new("connect");
    let r = open(&s, &host("nowhere.test"), 443, &mut e).unwrap_err();
    assert!(
        matches!(&r, Refusal::Resolve(l) if l.starts_with("gate could not resolve nowhere.test: ")),
        "{r:?}"
    );
    assert!(
        String::from_utf8(r.http())
            .unwrap()
            .starts_with("HTTP/1.1 502 Bad Gateway: gate could not resolve")
    );
    assert_eq!(r.socks(), socks::REPLY_HOST_UNREACHABLE);
    assert_eq!((e.decision, e.decided_by), ("allow", "allow_domains"));
    assert_eq!(e.rule.as_deref(), Some("nowhere.test"));
}

#[test]
fn a_mapping_does_not_vouch_for_other_names_with_the_same_address() {
    let s = shared("127.0.0.1 other.test\n", &[], &["mapped.test=127.0.0.1"]);
    assert!(matches!(
        addresses(&s, &host("other.test"), 443),
        Err(Refusal::Address(_))
    ));
}

#[test]
fn admission_is_one_connection_per_registration() {
    let a = Admit::default();
    let addr: SocketAddr = "127.0.0.1:5000".parse().unwrap();
    let none = Duration::ZERO;
    assert!(!a.take(addr, none));
    a.register("[::ffff:127.0.0.1]:5000".parse().unwrap());
    assert!(a.take(addr, none));
    assert!(!a.take(addr, none));
    a.register(addr);
    a.unregister(addr);
    assert!(!a.take(addr, none));
    let b = a.clone();
    let late = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        b.register(addr);
    });
    assert!(a.take(addr, Duration::from_secs(5)));
    late.join().unwrap();
}

#[test]
fn an_audit_record_says_host_port_decision_and_rule() {
    let mut e = Event::new("connect");
    e.host = Some("registry.test".into());
    e.port = Some(443);
    e.decision = "allow";
    e.decided_by = "allow_domains";
    e.rule = Some("@npm (registry.npmjs.org)".into());
    e.address = Some("127.0.0.1:443".parse().unwrap());
    let line = encode(
        &e,
        "127.0.0.1:5000".parse().unwrap(),
        "c1",
        "s1",
        SystemTime::UNIX_EPOCH,
    );
    let v: Value = serde_json::from_slice(&line).unwrap();
    assert_eq!(v["kind"], "connection");
    assert_eq!(v["host"], "registry.test");
    assert_eq!(v["port"], 443);
    assert_eq!(v["decision"], "allow");
    assert_eq!(v["rule"], "@npm (registry.npmjs.org)");
    assert_eq!(v["address"], "127.0.0.1:443");
    assert_eq!(v["call_id"], "c1");
    assert!(line.ends_with(b"\n") && !line[..line.len() - 1].contains(&b'\n'));
}
