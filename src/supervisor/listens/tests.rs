use super::*;
use std::os::fd::FromRawFd;

fn socket(family: i32) -> OwnedFd {
    // SAFETY: socket takes integers and returns a new descriptor.
    let fd = unsafe { libc::socket(family, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    assert!(fd >= 0);
    // SAFETY: new and ours.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

#[test]
fn only_unix_sockets_and_bound_tcp_sockets_may_listen() {
    assert_eq!(kind(&socket(libc::AF_UNIX)).unwrap(), Socket::Unix);
    assert_eq!(kind(&socket(libc::AF_INET)).unwrap(), Socket::Unbound);
    assert_eq!(kind(&socket(libc::AF_INET6)).unwrap(), Socket::Unbound);
    let bound = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let bound = OwnedFd::from(bound);
    assert_eq!(kind(&bound).unwrap(), Socket::Bound);
    let file = OwnedFd::from(std::fs::File::open("/dev/null").unwrap());
    assert_eq!(kind(&file), Err(Errno::ENOTSOCK));
    assert!(may_listen(Socket::Unix));
    assert!(may_listen(Socket::Bound));
    assert!(!may_listen(Socket::Unbound));
    assert!(!may_listen(Socket::Other));
}
