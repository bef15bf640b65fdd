use super::*;

#[test]
fn greetings_pick_no_authentication() {
    assert_eq!(greeting(&[5, 1, 0]), Some((0, 3)));
    assert_eq!(greeting(&[5, 2, 2, 0]), Some((0, 4)));
    assert_eq!(greeting(&[5, 1, 2]), Some((0xff, 3)));
    assert_eq!(greeting(&[5, 2, 0]), None);
    assert_eq!(greeting(&[5]), None);
}

#[test]
fn requests_name_a_host_or_address() {
    let mut r = vec![5, 1, 0, 3, 13];
    r.extend_from_slice(b"Registry.Test");
    r.extend_from_slice(&443u16.to_be_bytes());
    assert_eq!(
        request(&r),
        Some((
            Request::Connect(Host::Name("registry.test".into()), 443),
            r.len()
        ))
    );
    assert_eq!(request(&r[..r.len() - 1]), None);
    let v4 = [5, 1, 0, 1, 1, 2, 3, 4, 0, 80];
    assert_eq!(
        request(&v4),
        Some((
            Request::Connect(Host::Ip("1.2.3.4".parse().unwrap()), 80),
            10
        ))
    );
    let mut v6 = vec![5, 1, 0, 4];
    v6.extend_from_slice(&"::ffff:10.0.0.1".parse::<Ipv6Addr>().unwrap().octets());
    v6.extend_from_slice(&[0, 22]);
    assert_eq!(
        request(&v6),
        Some((
            Request::Connect(Host::Ip("10.0.0.1".parse().unwrap()), 22),
            22
        ))
    );
}

#[test]
fn other_requests_are_refused_with_their_code() {
    let bind = [5, 2, 0, 1, 1, 2, 3, 4, 0, 80];
    assert_eq!(request(&bind).unwrap().0, Request::Refuse(REPLY_COMMAND));
    let udp = [5, 3, 0, 1, 1, 2, 3, 4, 0, 80];
    assert_eq!(request(&udp).unwrap().0, Request::Refuse(REPLY_COMMAND));
    let atyp = [5, 1, 0, 9, 0, 0];
    assert_eq!(
        request(&atyp).unwrap().0,
        Request::Refuse(REPLY_ADDRESS_TYPE)
    );
    let mut bad_name = vec![5, 1, 0, 3, 5];
    bad_name.extend_from_slice(b"a b.c");
    bad_name.extend_from_slice(&[0, 80]);
    assert_eq!(
        request(&bad_name).unwrap().0,
        Request::Refuse(REPLY_HOST_UNREACHABLE)
    );
    let port0 = [5, 1, 0, 1, 1, 2, 3, 4, 0, 0];
    assert_eq!(
        request(&port0).unwrap().0,
        Request::Refuse(REPLY_HOST_UNREACHABLE)
    );
    assert_eq!(reply(2), [5, 2, 0, 1, 0, 0, 0, 0, 0, 0]);
}
