use super::*;
use proptest::prelude::*;

#[test]
fn under_is_path_starts_with_for_canonical_paths() {
    for (path, dir, expected) in [
        ("/", "/", true),
        ("/etc", "/", true),
        ("/etc", "/etc", true),
        ("/etc/ssh", "/etc", true),
        ("/etcetera", "/etc", false),
        ("/et", "/etc", false),
        ("/home/a/.ssh", "/home/a", true),
        ("/home/ab", "/home/a", false),
        ("/", "/etc", false),
    ] {
        assert_eq!(
            under(Path::new(path), Path::new(dir)),
            expected,
            "{path} in {dir}"
        );
        assert_eq!(
            Path::new(path).starts_with(dir),
            expected,
            "{path} in {dir}"
        );
    }
}

fn canonical() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec!["a", "ab", "b", ".x", "a.b"]),
        0..5,
    )
    .prop_map(|parts| format!("/{}", parts.join("/")))
}

proptest! {
    #[test]
    fn under_and_same_agree_with_path(a in canonical(), b in canonical()) {
        let (a, b) = (Path::new(&a), Path::new(&b));
        prop_assert_eq!(under(a, b), a.starts_with(b));
        prop_assert_eq!(same(a, b), a == b);
    }
}
