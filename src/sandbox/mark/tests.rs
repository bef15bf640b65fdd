use super::*;
use landlock::{ABI, Access};

#[test]
fn a_domain_needs_landlock_abi_2() {
    assert_eq!(Mark::for_abi(0), Mark::NoNewPrivsOnly);
    assert_eq!(Mark::for_abi(1), Mark::NoNewPrivsOnly);
    assert_eq!(Mark::for_abi(2), Mark::Domain);
    assert_eq!(Mark::for_abi(5), Mark::Domain);
    assert_eq!(Mark::for_abi(6), Mark::Scoped);
    assert_eq!(Mark::for_abi(7), Mark::Scoped);
    assert!(Mark::Scoped.has_domain() && Mark::Domain.has_domain());
    assert!(!Mark::NoNewPrivsOnly.has_domain());
    // The right the domain grants came with ABI 2.
    assert!(AccessFs::from_all(ABI::V2).contains(AccessFs::Refer));
    assert!(!AccessFs::from_all(ABI::V1).contains(AccessFs::Refer));
}

#[test]
fn no_new_privs_is_read_from_a_status_text() {
    let status = "Name:\tgate\nSeccomp:\t0\nNoNewPrivs:\t1\nSeccomp_filters:\t0\n";
    assert_eq!(no_new_privs_in_status(status), Some(true));
    assert_eq!(
        no_new_privs_in_status("Name:\tbash\nNoNewPrivs:\t0\n"),
        Some(false)
    );
    assert_eq!(no_new_privs_in_status("Name:\tbash\n"), None);
    assert_eq!(no_new_privs_in_status("NoNewPrivs:\tyes\n"), None);
    // A name cannot pose as the field: it is the first thing on its own line.
    assert_eq!(
        no_new_privs_in_status("Name:\tNoNewPrivs:\t0\nNoNewPrivs:\t1\n"),
        Some(true)
    );
}

#[test]
fn this_test_process_is_not_marked() {
    // The tests are run by a person's shell or CI, not inside gate: if this fails,
    // the approver tests cannot work here either.
    assert!(
        !this_process_marked(),
        "the tests run with no_new_privs (inside a sandbox?): the approver tests need a process without it"
    );
}
