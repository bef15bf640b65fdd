use super::*;

fn ok(text: &str) -> String {
    Entry::parse(text)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .text()
}
fn bad(text: &str) -> String {
    match Entry::parse(text) {
        Ok(e) => panic!("{text} was accepted as {e:?}"),
        Err(e) => e,
    }
}
fn allows(pattern: &str, host: &str, port: u16) -> bool {
    Pattern::parse(pattern)
        .unwrap()
        .matches(List::Allow, &Host::parse(host).unwrap(), port)
}
fn denies(pattern: &str, host: &str, port: u16) -> bool {
    Pattern::parse(pattern)
        .unwrap()
        .matches(List::Deny, &Host::parse(host).unwrap(), port)
}

#[test]
fn patterns_come_out_in_normal_form() {
    assert_eq!(ok("Example.COM"), "example.com");
    assert_eq!(ok("example.com."), "example.com");
    assert_eq!(ok("  example.com  "), "example.com");
    assert_eq!(ok("*.Example.com."), "*.example.com");
    assert_eq!(ok("example.com:8443"), "example.com:8443");
    assert_eq!(ok("example.com:*"), "example.com:*");
    assert_eq!(ok("*.example.com:*"), "*.example.com:*");
    assert_eq!(ok("8.8.8.8"), "8.8.8.8");
    assert_eq!(ok("8.8.8.8:53"), "8.8.8.8:53");
    assert_eq!(ok("[2606:4700:0::1111]:443"), "[2606:4700::1111]:443");
    assert_eq!(ok("[2606:4700::1111]"), "[2606:4700::1111]");
    assert_eq!(ok("[::ffff:8.8.8.8]"), "8.8.8.8");
    assert_eq!(ok("xn--bcher-kva.example"), "xn--bcher-kva.example");
    assert_eq!(ok("_acme.example.com"), "_acme.example.com");
    assert_eq!(ok("localhost"), "localhost");
    assert_eq!(ok("@NPM"), "@npm");
    assert_eq!(ok("@github"), "@github");
}

#[test]
fn bad_patterns_say_what_is_wrong() {
    assert!(bad("").contains("empty"));
    assert!(bad("exa mple.com").contains("not a domain pattern"));
    assert!(bad("exa\tmple.com").contains("not a domain pattern"));
    assert!(bad("*").contains("--net"));
    assert!(bad("*:443").contains("every domain"));
    assert!(bad("foo.*.com").contains("only stand first"));
    assert!(bad("*foo.com").contains("only stand first"));
    assert!(bad("*.*.com").contains("must be followed by a domain"));
    assert!(bad("*.8.8.8.8").contains("must be followed by a domain"));
    assert!(bad("example.com:0").contains("not a port"));
    assert!(bad("example.com:65536").contains("not a port"));
    assert!(bad("example.com:+443").contains("not a port"));
    assert!(bad("example.com:").contains("not a port"));
    assert!(bad("example.com:http").contains("not a port"));
    assert_eq!(
        bad("bücher.example"),
        "`bücher.example` is not ASCII; write an internationalised name in its punycode form (xn--…)"
    );
    assert_eq!(
        bad("bücher.example:80"),
        "`bücher.example:80`: `bücher.example` is not ASCII; write an internationalised name in its punycode form (xn--…)"
    );
    assert!(bad("-bad.example").contains("begin or end"));
    assert!(bad("bad-.example").contains("begin or end"));
    assert!(bad("a..example").contains("1 to 63"));
    assert!(bad(".example").contains("1 to 63"));
    assert!(bad(&format!("{}.com", "a".repeat(64))).contains("1 to 63"));
    assert!(bad(&format!("{}com", "abcdefghi.".repeat(26))).contains("253"));
    assert!(bad("ex/ample.com").contains("`/`"));
    assert!(bad("user@example.com").contains("`@`"));
    assert!(bad("http://example.com").contains("port"));
    assert!(bad("2001:db8::1").contains("brackets"));
    assert!(bad("[2606:4700::1111").contains("without `]`"));
    assert!(bad("[2606:4700::1111]x").contains("only `:PORT`"));
    assert!(bad("[example.com]").contains("not an IPv6"));
    assert!(bad("2130706433").contains("dotted or bracketed"));
    assert!(bad("127.1").contains("dotted or bracketed"));
    assert!(bad("0x7f.0x1").contains("dotted or bracketed"));
    assert!(bad("@nope").contains("the presets are @npm, @pypi, @crates, @go, @github"));
    assert!(bad("@").contains("not a preset"));
}

#[test]
fn a_pattern_cannot_name_a_private_address() {
    for p in [
        "127.0.0.1",
        "10.1.2.3:8080",
        "192.168.0.1",
        "[::1]",
        "[fd00::1]:443",
        "[::ffff:127.0.0.1]",
        "169.254.169.254",
        "0.0.0.0",
    ] {
        let e = bad(p);
        assert!(e.contains("sandbox.resolve"), "{p}: {e}");
    }
}

#[test]
fn an_exact_host_is_that_host_on_443() {
    assert!(allows("example.com", "example.com", 443));
    assert!(allows("example.com", "EXAMPLE.com.", 443));
    assert!(!allows("example.com", "example.com", 80));
    assert!(!allows("example.com", "example.com", 8443));
    assert!(!allows("example.com", "www.example.com", 443));
    assert!(!allows("example.com", "example.com.evil", 443));
    assert!(!allows("example.com", "evilexample.com", 443));
}

#[test]
fn a_wildcard_is_the_subdomains_without_the_apex() {
    assert!(allows("*.example.com", "a.example.com", 443));
    assert!(allows("*.example.com", "a.b.example.com", 443));
    assert!(!allows("*.example.com", "a.b.example.com", 80));
    assert!(!allows("*.example.com", "example.com", 443));
    assert!(!allows("*.example.com", "evilexample.com", 443));
    assert!(!allows("*.example.com", "a.example.com", 22));
    assert!(allows("*.example.com:22", "a.example.com", 22));
    assert!(!allows("*.example.com:22", "a.example.com", 443));
}

#[test]
fn ports_are_one_or_every() {
    assert!(allows("example.com:80", "example.com", 80));
    assert!(!allows("example.com:80", "example.com", 443));
    assert!(allows("example.com:*", "example.com", 80));
    assert!(allows("example.com:8443", "example.com", 8443));
    assert!(!allows("example.com:8443", "example.com", 443));
    assert!(allows("example.com:*", "example.com", 1));
    assert!(allows("example.com:*", "example.com", 65535));
}

#[test]
fn a_deny_pattern_without_port_denies_every_port() {
    assert!(denies("example.com", "example.com", 22));
    assert!(denies("example.com", "example.com", 443));
    assert!(denies("*.example.com", "x.example.com", 9));
    assert!(!denies("example.com:80", "example.com", 443));
}

#[test]
fn an_address_pattern_matches_only_the_literal() {
    assert!(allows("8.8.8.8", "8.8.8.8", 443));
    assert!(allows("8.8.8.8", "[::ffff:8.8.8.8]", 443));
    assert!(!allows("8.8.8.8", "dns.google", 443));
    assert!(!allows("dns.google", "8.8.8.8", 443));
    assert!(allows("[2606:4700::1111]", "2606:4700::1111", 443));
}

#[test]
fn every_preset_is_well_formed_and_named() {
    let names: Vec<_> = preset_names().collect();
    assert_eq!(names, ["npm", "pypi", "crates", "go", "github"]);
    for name in names {
        let list = preset(name).unwrap();
        assert!(!list.is_empty(), "{name} is empty");
        for p in list {
            let parsed = Pattern::parse(p).unwrap_or_else(|e| panic!("@{name}: {e}"));
            assert_eq!(parsed.to_string(), p, "@{name}: write it in normal form");
        }
    }
    assert!(preset("nope").is_none());
}

#[test]
fn presets_hold_the_registries() {
    let has = |name: &str, host: &str| match Entry::parse(name).unwrap() {
        Entry::Preset(_, ps) => ps
            .iter()
            .any(|p| p.matches(List::Allow, &Host::parse(host).unwrap(), 443)),
        _ => unreachable!(),
    };
    assert!(has("@npm", "registry.npmjs.org"));
    assert!(has("@pypi", "files.pythonhosted.org"));
    assert!(has("@crates", "index.crates.io"));
    assert!(has("@go", "proxy.golang.org"));
    assert!(has("@github", "codeload.github.com"));
    assert!(has("@github", "github.com"));
    assert!(!has("@github", "gist.example.com"));
    // Port 80 of a name a CDN serves reaches any site it fronts: no preset has it.
    for name in preset_names() {
        let Entry::Preset(_, ps) = Entry::parse(&format!("@{name}")).unwrap() else {
            unreachable!()
        };
        for p in ps {
            assert_eq!(p.ports, Ports::Default, "@{name}: {p}");
            let host = match &p.hosts {
                Hosts::Exact(h) => h.clone(),
                Hosts::Below(h) => format!("a.{h}"),
                Hosts::Ip(ip) => ip.to_string(),
            };
            let host = Host::parse(&host).unwrap();
            assert!(
                !p.matches(List::Allow, &host, 80),
                "@{name}: {p} allows port 80"
            );
        }
    }
}

#[test]
fn hosts_parse_as_clients_write_them() {
    assert_eq!(
        Host::parse("Example.com.").unwrap(),
        Host::Name("example.com".into())
    );
    assert_eq!(
        Host::parse("[::1]").unwrap(),
        Host::Ip("::1".parse().unwrap())
    );
    assert_eq!(
        Host::parse("::ffff:10.0.0.1").unwrap(),
        Host::Ip("10.0.0.1".parse().unwrap())
    );
    assert_eq!(
        Host::parse("1.2.3.4").unwrap(),
        Host::Ip("1.2.3.4".parse().unwrap())
    );
    assert!(Host::parse("01.2.3.4").is_err());
    assert!(Host::parse("").is_err());
    assert!(Host::parse("a b").is_err());
    assert_eq!(Host::parse("[::1]").unwrap().to_string(), "[::1]");
}
