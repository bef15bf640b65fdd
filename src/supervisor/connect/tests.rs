use super::*;

fn v4(ip: [u8; 4], port: u16) -> Vec<u8> {
    let mut b = vec![0u8; 16];
    b[..2].copy_from_slice(&(libc::AF_INET as u16).to_ne_bytes());
    b[2..4].copy_from_slice(&port.to_be_bytes());
    b[4..8].copy_from_slice(&ip);
    b
}

fn v6(ip: Ipv6Addr, port: u16) -> Vec<u8> {
    let mut b = vec![0u8; 28];
    b[..2].copy_from_slice(&(libc::AF_INET6 as u16).to_ne_bytes());
    b[2..4].copy_from_slice(&port.to_be_bytes());
    b[8..24].copy_from_slice(&ip.octets());
    b
}

fn by_proxy(b: Vec<u8>, port: u16) -> Verdict {
    let len = b.len() as u64;
    verdict(&Ok(b), len, Some(port), None)
}

#[test]
fn only_the_proxys_own_address_goes_to_the_proxy() {
    let p = 4000;
    let proxy = |b: Vec<u8>| by_proxy(b, p);
    assert_eq!(proxy(v4([127, 0, 0, 1], p)), Verdict::Proxy);
    assert_eq!(proxy(v6(Ipv6Addr::LOCALHOST, p)), Verdict::Proxy);
    assert_eq!(
        proxy(v6(Ipv4Addr::LOCALHOST.to_ipv6_mapped(), p)),
        Verdict::Proxy
    );
    // Another address on the proxy's port, another port, another family.
    assert_eq!(proxy(v4([127, 0, 0, 2], p)), Verdict::Kernel);
    assert_eq!(proxy(v4([10, 0, 0, 1], p)), Verdict::Kernel);
    assert_eq!(proxy(v4([127, 0, 0, 1], p + 1)), Verdict::Kernel);
    assert_eq!(
        proxy(v6("2001:db8::1".parse().unwrap(), p)),
        Verdict::Kernel
    );
    assert_eq!(
        proxy(v6(Ipv4Addr::new(127, 0, 0, 2).to_ipv6_mapped(), p)),
        Verdict::Kernel
    );
    let mut unix = v4([127, 0, 0, 1], p);
    unix[..2].copy_from_slice(&(libc::AF_UNIX as u16).to_ne_bytes());
    assert_eq!(proxy(unix), Verdict::Kernel);
    // Too short for its family.
    assert_eq!(proxy(v4([127, 0, 0, 1], p)[..8].to_vec()), Verdict::Kernel);
    assert_eq!(
        proxy(v6(Ipv6Addr::LOCALHOST, p)[..20].to_vec()),
        Verdict::Kernel
    );
}

#[test]
fn an_address_it_may_not_read_is_judged_by_its_size() {
    let unread = |e, len| verdict(&Err(e), len, Some(1), None);
    assert_eq!(unread(Errno::EPERM, 16), Verdict::Proxy);
    assert_eq!(unread(Errno::EPERM, 28), Verdict::Proxy);
    assert_eq!(unread(Errno::EPERM, 110), Verdict::Kernel);
    assert_eq!(unread(Errno::EPERM, 0), Verdict::Kernel);
    // A bad address is the kernel's to refuse (EFAULT), whatever its size.
    assert_eq!(unread(Errno::EFAULT, 16), Verdict::Kernel);
    assert_eq!(unread(Errno::ESRCH, 16), Verdict::Kernel);
}

/// Where the supervisor decides (no Landlock TCP rules): port 443 allowed.
fn decided(address: Result<Vec<u8>, Errno>, len: u64, proxy: Option<u16>) -> Verdict {
    verdict(&address, len, proxy, Some(&[443]))
}

fn whole(b: Vec<u8>) -> (Result<Vec<u8>, Errno>, u64) {
    let len = b.len() as u64;
    (Ok(b), len)
}

#[test]
fn where_the_supervisor_decides_nothing_goes_on_into_the_kernel() {
    let cases: Vec<(Vec<u8>, Verdict)> = vec![
        // An allowed port, on any address and family: performed on the copy.
        (v4([93, 184, 215, 14], 443), Verdict::Perform),
        (v6("2001:db8::1".parse().unwrap(), 443), Verdict::Perform),
        (v4([127, 0, 0, 1], 443), Verdict::Perform),
        // Any other port: what Landlock answers.
        (v4([93, 184, 215, 14], 80), Verdict::Refuse(Errno::EACCES)),
        (v6(Ipv6Addr::LOCALHOST, 22), Verdict::Refuse(Errno::EACCES)),
        // The proxy's port on another address is just another port.
        (v4([127, 0, 0, 2], 4000), Verdict::Refuse(Errno::EACCES)),
        // Too short for its family; a Unix address; a family of no TCP socket.
        (
            v4([1, 2, 3, 4], 443)[..8].to_vec(),
            Verdict::Refuse(Errno::EACCES),
        ),
        (
            {
                let mut b = v4([1, 2, 3, 4], 443);
                b[..2].copy_from_slice(&(libc::AF_UNIX as u16).to_ne_bytes());
                b
            },
            Verdict::Refuse(Errno::EACCES),
        ),
        (
            {
                let mut b = v4([1, 2, 3, 4], 443);
                b[..2].copy_from_slice(&(libc::AF_PACKET as u16).to_ne_bytes());
                b
            },
            Verdict::Refuse(Errno::EACCES),
        ),
        (vec![2], Verdict::Refuse(Errno::EINVAL)),
        // AF_UNSPEC dissolves an association and reaches nothing.
        (
            (libc::AF_UNSPEC as u16).to_ne_bytes().to_vec(),
            Verdict::Perform,
        ),
    ];
    for (bytes, expected) in cases {
        let (address, len) = whole(bytes.clone());
        assert_eq!(decided(address, len, None), expected, "{bytes:?}");
        let (address, len) = whole(bytes.clone());
        assert_ne!(
            decided(address, len, Some(4000)),
            Verdict::Kernel,
            "{bytes:?}"
        );
    }
    // The proxy's own address still goes to the proxy.
    let (address, len) = whole(v4([127, 0, 0, 1], 4000));
    assert_eq!(decided(address, len, Some(4000)), Verdict::Proxy);
    // Without a proxy, the proxy's address is an ordinary one.
    let (address, len) = whole(v4([127, 0, 0, 1], 4000));
    assert_eq!(decided(address, len, None), Verdict::Refuse(Errno::EACCES));
    // Memory it cannot read: by size to the proxy, or refused; never let through.
    assert_eq!(decided(Err(Errno::EPERM), 16, Some(4000)), Verdict::Proxy);
    assert_eq!(
        decided(Err(Errno::EPERM), 16, None),
        Verdict::Refuse(Errno::EACCES)
    );
    assert_eq!(
        decided(Err(Errno::EFAULT), 16, None),
        Verdict::Refuse(Errno::EFAULT)
    );
    // An address that runs into unmapped memory, or longer than any address.
    let short = v4([1, 2, 3, 4], 443);
    assert_eq!(
        decided(Ok(short.clone()), 20, None),
        Verdict::Refuse(Errno::EFAULT)
    );
    assert_eq!(
        decided(Ok(short), 129, None),
        Verdict::Refuse(Errno::EINVAL)
    );
}

#[test]
fn a_port_binds_only_when_allowed() {
    let bind = |b: Vec<u8>| {
        let len = b.len() as u64;
        bind_verdict(&Ok(b), len, &[8080])
    };
    assert_eq!(bind(v4([127, 0, 0, 1], 8080)), Verdict::Perform);
    assert_eq!(bind(v4([0, 0, 0, 0], 8080)), Verdict::Perform);
    assert_eq!(bind(v6(Ipv6Addr::UNSPECIFIED, 8080)), Verdict::Perform);
    assert_eq!(
        bind(v4([127, 0, 0, 1], 8081)),
        Verdict::Refuse(Errno::EACCES)
    );
    // Port 0 asks the kernel for any free port: only where 0 is allowed.
    assert_eq!(bind(v4([127, 0, 0, 1], 0)), Verdict::Refuse(Errno::EACCES));
    assert_eq!(
        bind_verdict(&Ok(v4([127, 0, 0, 1], 0)), 16, &[0]),
        Verdict::Perform
    );
    let mut unspec = v4([0, 0, 0, 0], 8080);
    unspec[..2].copy_from_slice(&(libc::AF_UNSPEC as u16).to_ne_bytes());
    assert_eq!(bind(unspec), Verdict::Refuse(Errno::EACCES));
    assert_eq!(
        bind_verdict(&Err(Errno::EPERM), 16, &[8080]),
        Verdict::Refuse(Errno::EACCES)
    );
    assert_eq!(
        bind_verdict(&Ok(v4([0, 0, 0, 0], 8080)), 24, &[8080]),
        Verdict::Refuse(Errno::EFAULT)
    );
}

#[test]
fn fdinfo_flags_are_octal() {
    let text = "pos:\t0\nflags:\t02004002\nmnt_id:\t9\nino:\t1234\n";
    let flags = fdinfo_flags(text).unwrap();
    assert_ne!(flags & libc::O_NONBLOCK, 0);
    assert_ne!(flags & libc::O_CLOEXEC, 0);
    assert_eq!(
        fdinfo_flags("pos:\t0\nflags:\t02\n").unwrap() & libc::O_NONBLOCK,
        0
    );
    assert_eq!(fdinfo_flags("pos:\t0\n"), None);
}
