//! Comparisons of canonical paths by their bytes. `Path`'s own `==` and `starts_with`
//! walk both paths component by component (from the end, for paths of different
//! lengths), which made them a quarter of the instructions gate spent building the
//! spec: every path here is absolute and canonical (no `.`, `..`, repeated or trailing
//! slashes), where the bytes say the same at a fraction of the cost.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Whether `a` and `b` are the same path, byte for byte.
pub(crate) fn same(a: &Path, b: &Path) -> bool {
    a.as_os_str().as_bytes() == b.as_os_str().as_bytes()
}

/// Whether `path` is `dir` or inside it, for canonical absolute paths: what
/// `Path::starts_with` says of them.
pub(crate) fn under(path: &Path, dir: &Path) -> bool {
    let (path, dir) = (path.as_os_str().as_bytes(), dir.as_os_str().as_bytes());
    match path.strip_prefix(dir) {
        None => false,
        Some(rest) => rest.is_empty() || rest[0] == b'/' || dir.last() == Some(&b'/'),
    }
}

#[cfg(test)]
mod tests {
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
}
