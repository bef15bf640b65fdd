use super::*;

#[test]
fn the_thread_group_comes_from_the_status_file() {
    assert_eq!(
        tgid_of("Name:\tx\nUmask:\t0022\nState:\tS\nTgid:\t4242\nPid:\t4250\n"),
        Some(4242)
    );
    assert_eq!(tgid_of("Name:\tx\n"), None);
    assert_eq!(thread_group(std::process::id()), Some(std::process::id()));
}

#[test]
fn a_thread_that_leads_no_process_has_a_pidfd() {
    let (tx, rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let thread = std::thread::spawn(move || {
        // SAFETY: gettid takes no arguments.
        tx.send(unsafe { libc::gettid() } as u32).unwrap();
        done_rx.recv().unwrap();
    });
    let tid = rx.recv().unwrap();
    assert_ne!(tid, std::process::id());
    assert!(pidfd_of(tid).is_ok());
    done_tx.send(()).unwrap();
    thread.join().unwrap();
}
