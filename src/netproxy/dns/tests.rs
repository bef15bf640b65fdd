use super::*;

/// An answer to `query` with these records, each (owner, type, rdata).
fn answer(query: &[u8], flags: u16, records: &[(&str, u16, Vec<u8>)]) -> Vec<u8> {
    let mut m = query.to_vec();
    m[2..4].copy_from_slice(&flags.to_be_bytes());
    m[6..8].copy_from_slice(&u16::try_from(records.len()).unwrap().to_be_bytes());
    for (owner, rtype, rdata) in records {
        if *owner == "@" {
            m.extend_from_slice(&[0xc0, 12]); // pointer to the question's name
        } else {
            for l in owner.split('.') {
                m.push(u8::try_from(l.len()).unwrap());
                m.extend_from_slice(l.as_bytes());
            }
            m.push(0);
        }
        m.extend_from_slice(&rtype.to_be_bytes());
        m.extend_from_slice(&[0, 1, 0, 0, 0, 60]);
        m.extend_from_slice(&u16::try_from(rdata.len()).unwrap().to_be_bytes());
        m.extend_from_slice(rdata);
    }
    m
}
fn encoded(name: &str) -> Vec<u8> {
    let mut v = Vec::new();
    for l in name.split('.') {
        v.push(u8::try_from(l.len()).unwrap());
        v.extend_from_slice(l.as_bytes());
    }
    v.push(0);
    v
}

#[test]
fn answers_are_read_through_cname_chains() {
    let q = build_query(7, "www.example.com", TYPE_A).unwrap();
    let a = answer(
        &q,
        0x8180,
        &[
            ("@", TYPE_CNAME, encoded("edge.example.net")),
            ("other.example", TYPE_A, vec![10, 0, 0, 1]),
            ("edge.example.net", TYPE_A, vec![93, 184, 216, 34]),
        ],
    );
    assert_eq!(
        parse_answer(&a, 7, "www.example.com", TYPE_A),
        Ok(Answer::Addresses(vec!["93.184.216.34".parse().unwrap()]))
    );
}

#[test]
fn records_of_another_type_are_ignored() {
    let q = build_query(7, "a.example", TYPE_A).unwrap();
    let a = answer(&q, 0x8180, &[("@", TYPE_AAAA, vec![0x20; 16])]);
    assert_eq!(
        parse_answer(&a, 7, "a.example", TYPE_A),
        Ok(Answer::Addresses(vec![]))
    );
    let q = build_query(7, "a.example", TYPE_AAAA).unwrap();
    let a = answer(&q, 0x8180, &[("@", TYPE_A, vec![1, 2, 3, 4])]);
    assert_eq!(
        parse_answer(&a, 7, "a.example", TYPE_AAAA),
        Ok(Answer::Addresses(vec![]))
    );
}

#[test]
fn records_about_other_names_are_ignored() {
    let q = build_query(7, "a.example", TYPE_A).unwrap();
    let a = answer(&q, 0x8180, &[("b.example", TYPE_A, vec![1, 2, 3, 4])]);
    assert_eq!(
        parse_answer(&a, 7, "a.example", TYPE_A),
        Ok(Answer::Addresses(vec![]))
    );
}

#[test]
fn aaaa_answers_and_mapped_forms_are_read() {
    let q = build_query(9, "a.example", TYPE_AAAA).unwrap();
    let mut mapped = vec![0u8; 16];
    mapped[10] = 0xff;
    mapped[11] = 0xff;
    mapped[12..].copy_from_slice(&[127, 0, 0, 1]);
    let a = answer(&q, 0x8180, &[("@", TYPE_AAAA, mapped)]);
    assert_eq!(
        parse_answer(&a, 9, "a.example", TYPE_AAAA),
        Ok(Answer::Addresses(vec!["127.0.0.1".parse().unwrap()]))
    );
}

#[test]
fn foreign_or_broken_answers_are_not_taken() {
    let q = build_query(7, "a.example", TYPE_A).unwrap();
    let a = answer(&q, 0x8180, &[("@", TYPE_A, vec![1, 2, 3, 4])]);
    assert_eq!(
        parse_answer(&a, 8, "a.example", TYPE_A),
        Err(Malformed::NotOurs)
    );
    assert_eq!(
        parse_answer(&a, 7, "b.example", TYPE_A),
        Err(Malformed::NotOurs)
    );
    assert_eq!(
        parse_answer(&q, 7, "a.example", TYPE_A),
        Err(Malformed::NotOurs)
    );
    assert!(matches!(
        parse_answer(&a[..a.len() - 2], 7, "a.example", TYPE_A),
        Err(Malformed::Bad(_))
    ));
    let nx = answer(&q, 0x8183, &[]);
    assert_eq!(
        parse_answer(&nx, 7, "a.example", TYPE_A),
        Ok(Answer::Addresses(vec![]))
    );
    let fail = answer(&q, 0x8182, &[]);
    assert!(matches!(
        parse_answer(&fail, 7, "a.example", TYPE_A),
        Err(Malformed::Bad(_))
    ));
    let tc = answer(&q, 0x8380, &[]);
    assert_eq!(
        parse_answer(&tc, 7, "a.example", TYPE_A),
        Ok(Answer::Truncated)
    );
    let mut looped = q.clone();
    looped[2] = 0x81;
    looped[6..8].copy_from_slice(&[0, 1]);
    looped.extend_from_slice(&[0xc0, u8::try_from(q.len()).unwrap()]);
    assert!(parse_answer(&looped, 7, "a.example", TYPE_A).is_err());
}

#[test]
fn hosts_and_resolv_conf_are_read() {
    let r = Resolver::from_files(
        "# comment\n127.0.0.1 localhost\n10.1.2.3  Build.Local. alias # x\n::1 ip6-localhost\nbad line\n",
        "search corp.example\nnameserver 192.0.2.53\nnameserver fe80::1%eth0\noptions ndots:5\n",
    );
    assert_eq!(
        r.lookup("build.local").unwrap(),
        ["10.1.2.3".parse::<IpAddr>().unwrap()]
    );
    assert_eq!(
        r.lookup("alias").unwrap(),
        ["10.1.2.3".parse::<IpAddr>().unwrap()]
    );
    assert_eq!(
        r.servers,
        [
            "192.0.2.53:53".parse::<SocketAddr>().unwrap(),
            "[fe80::1]:53".parse().unwrap()
        ]
    );
    assert_eq!(
        Resolver::from_files("", "").servers,
        ["127.0.0.1:53".parse::<SocketAddr>().unwrap()]
    );
}

/// A name server on a loopback UDP port answering every question with `reply`.
fn server(reply: impl Fn(&[u8]) -> Vec<u8> + Send + 'static) -> SocketAddr {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = s.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut buf = [0u8; 512];
        while let Ok((n, from)) = s.recv_from(&mut buf) {
            let _ = s.send_to(&reply(&buf[..n]), from);
        }
    });
    addr
}

#[test]
fn a_name_server_is_asked_over_udp() {
    let addr = server(|q| {
        let qtype = u16::from_be_bytes([q[q.len() - 4], q[q.len() - 3]]);
        if qtype == TYPE_A {
            answer(q, 0x8180, &[("@", TYPE_A, vec![93, 184, 216, 34])])
        } else {
            answer(q, 0x8180, &[])
        }
    });
    let r = Resolver::from_files("", "").with_servers(vec![addr], Duration::from_secs(5));
    assert_eq!(
        r.lookup("pkgs.example").unwrap(),
        ["93.184.216.34".parse::<IpAddr>().unwrap()]
    );
}

#[test]
fn a_forged_datagram_first_does_not_win() {
    // This server only sends answers with the wrong id: the lookup must time out,
    // never return 10.0.0.1.
    let addr = server(|q| {
        let mut forged = answer(q, 0x8180, &[("@", TYPE_A, vec![10, 0, 0, 1])]);
        forged[0] ^= 0xff;
        forged
    });
    let r = Resolver::from_files("", "").with_servers(vec![addr], Duration::from_millis(100));
    let got = r.lookup("pkgs.example");
    assert!(got.is_err(), "{got:?}");
}
