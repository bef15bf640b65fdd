use super::*;

#[test]
fn a_listing_names_every_entry_with_its_type() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("file"), "").unwrap();
    std::fs::create_dir(d.join("dir")).unwrap();
    std::os::unix::fs::symlink("/nowhere", d.join("link")).unwrap();
    // Enough long names that the kernel needs more than one read of 32 KiB.
    let long = "n".repeat(200);
    for i in 0..300 {
        std::fs::write(d.join(format!("{long}{i}")), "").unwrap();
    }
    let fd = nix::fcntl::open(
        d,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .unwrap();
    let mut seen = Vec::new();
    for_each_entry(fd.as_fd(), |name, kind| {
        seen.push((name.to_str().unwrap().to_owned(), kind));
        true
    })
    .unwrap();
    seen.sort();
    assert_eq!(seen.len(), 305, "{seen:?}");
    let kind = |name: &str| seen.iter().find(|(n, _)| n == name).map(|(_, k)| *k);
    assert_eq!(kind("."), Some(libc::DT_DIR));
    assert_eq!(kind(".."), Some(libc::DT_DIR));
    assert_eq!(kind("dir"), Some(libc::DT_DIR));
    assert_eq!(kind("file"), Some(libc::DT_REG));
    assert_eq!(kind("link"), Some(libc::DT_LNK));
    assert_eq!(kind(&format!("{long}299")), Some(libc::DT_REG));
}
