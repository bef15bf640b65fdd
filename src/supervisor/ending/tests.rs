use super::*;

#[test]
fn members_are_found_by_their_namespace_and_nothing_else_is() {
    let ns = std::fs::File::open("/proc/self/ns/user").unwrap();
    let ns = OwnedFd::from(ns);
    // Every process of the test's namespace is a member, this one included.
    assert!(members_alive(ns.as_fd()).contains(&(std::process::id() as i32)));
    let mut members: HashMap<Id, bool> = HashMap::new();
    members.insert((0, 0), true);
    // A namespace that leads to no known member is not one.
    let again = OwnedFd::from(std::fs::File::open("/proc/self/ns/user").unwrap());
    assert!(!is_member(again, &mut members));
}
