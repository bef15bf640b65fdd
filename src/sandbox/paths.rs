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
mod tests;
