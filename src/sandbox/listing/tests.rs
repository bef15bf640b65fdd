use super::*;

#[test]
fn a_listing_answers_for_its_entries_and_what_lies_below_missing_ones() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("sub")).unwrap();
    std::fs::write(d.join("file"), "").unwrap();
    std::fs::write(d.join("sub/inner"), "").unwrap();
    std::os::unix::fs::symlink("file", d.join("link")).unwrap();
    let listing = Listing::of(d).unwrap();
    let file = Listed::Entry { is_dir: false };
    let sub = Listed::Entry { is_dir: true };
    for (path, expected) in [
        (d.join("file"), Some(file)),
        (d.join("sub"), Some(sub)),
        (d.join("sub/"), Some(sub)),
        (d.join("missing"), Some(Listed::Missing)),
        (d.join("missing/deeper"), Some(Listed::Missing)),
        (d.join("sub/inner"), None),
        (d.join("link"), None),
        (d.join("."), None),
        (d.join("../x"), None),
        (PathBuf::from("/elsewhere"), None),
        (PathBuf::from(format!("{}x/file", d.display())), None),
    ] {
        assert_eq!(listing.lookup(&path), expected, "{}", path.display());
    }
    // A directory named with a trailing slash matches the paths built from it.
    let slashed = Listing::of(Path::new(&format!("{}/", d.display()))).unwrap();
    assert_eq!(
        slashed.lookup(Path::new(&format!("{}/file", d.display()))),
        Some(file)
    );
}

#[test]
fn a_directory_with_too_many_entries_is_not_listed() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..Listing::MAX_ENTRIES {
        std::fs::write(dir.path().join(format!("f{i}")), "").unwrap();
    }
    // With . and .., more than the limit.
    assert!(Listing::of(dir.path()).is_none());
    std::fs::remove_file(dir.path().join("f0")).unwrap();
    std::fs::remove_file(dir.path().join("f1")).unwrap();
    std::fs::remove_file(dir.path().join("f2")).unwrap();
    assert!(Listing::of(dir.path()).is_some());
}
