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
