use super::process::ranges;
use super::*;

#[test]
fn the_open_descriptors_are_listed_without_the_listings_own() {
    let fds = open_fds();
    assert!(fds.contains(&0) || fds.contains(&1) || fds.contains(&2));
    let file = std::fs::File::open("/dev/null").unwrap();
    let fd = file.as_raw_fd();
    assert!(open_fds().contains(&fd));
}

#[test]
fn descriptors_are_closed_by_runs() {
    assert_eq!(
        ranges([3, 4, 5, 9, 11, 12].into_iter()),
        vec![(3, 5), (9, 9), (11, 12)]
    );
    assert_eq!(ranges(std::iter::empty()), vec![]);
}

#[test]
fn this_kernel_can_supervise() {
    // Linux 6.18 on the development and CI machines: user notification and ADDFD.
    kernel_supports().unwrap();
}

#[test]
fn a_supervisor_error_says_what_failed_and_the_run_says_nothing_ran() {
    let e = SupervisorError::Start("pidfd_open: ESRCH".to_owned());
    assert_eq!(
        e.to_string(),
        "cannot start gate's supervisor: pidfd_open: ESRCH"
    );
    assert_eq!(
        crate::explain::not_run(&e, None),
        "cannot start gate's supervisor: pidfd_open: ESRCH; nothing was run"
    );
    let e = SupervisorError::Proxy("cannot start the proxy: EADDRINUSE".to_owned());
    assert_eq!(
        crate::explain::not_run(&e, None),
        "cannot set up network by domain (the supervisor): cannot start the proxy: \
         EADDRINUSE; nothing was run"
    );
}
