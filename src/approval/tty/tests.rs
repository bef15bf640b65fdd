use super::input::ESC_TIMEOUT;
use super::text::MAX_ROWS;
use super::*;
use nix::pty::openpty;

/// A prompt on the slave side of a new pseudo-terminal (not a controlling
/// terminal, so the foreground check is skipped); the master side to type on.
fn pty() -> (Tty, File) {
    let pty = openpty(None, None).unwrap();
    let tty = Tty {
        file: File::from(pty.slave),
        saved: None,
        shown: None,
    };
    (tty, File::from(pty.master))
}

#[test]
fn the_terminal_is_restored_when_a_panic_unwinds() {
    let (tty, _master) = pty();
    let probe = tty.file.try_clone().unwrap();
    let inside = tty.file.try_clone().unwrap();
    let before = tcgetattr(&probe).unwrap();
    assert!(
        before
            .local_flags
            .contains(LocalFlags::ICANON | LocalFlags::ECHO | LocalFlags::ISIG)
    );
    let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        let mut tty = tty;
        tty.set_raw().unwrap();
        let raw = tcgetattr(&inside).unwrap();
        assert!(
            !raw.local_flags
                .intersects(LocalFlags::ICANON | LocalFlags::ECHO)
        );
        assert!(!raw.local_flags.contains(LocalFlags::ISIG));
        panic!("a bug while prompting");
    }));
    assert!(unwound.is_err());
    let after = tcgetattr(&probe).unwrap();
    assert_eq!(after.local_flags, before.local_flags);
    assert_eq!(after.input_flags, before.input_flags);
    assert_eq!(after.control_chars, before.control_chars);
}

/// Type `keys` on the master side (after `delay`), draining what the prompt writes.
fn typist(master: File, keys: Vec<(Duration, Vec<u8>)>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let reader = master.try_clone().unwrap();
        let drained = std::thread::spawn(move || {
            let mut out = Vec::new();
            let mut buf = [0u8; 4096];
            // Ends when the slave side is closed (EIO).
            while let Ok(n) = (&reader).read(&mut buf) {
                if n == 0 {
                    break;
                }
                out.extend_from_slice(&buf[..n]);
            }
            out
        });
        for (delay, bytes) in keys {
            std::thread::sleep(delay);
            (&master).write_all(&bytes).unwrap();
        }
        drained.join().unwrap()
    })
}

#[test]
fn a_prompt_on_a_pseudo_terminal_reads_its_keys() {
    let (mut tty, master) = pty();
    tty.set_raw().unwrap();
    let ms = Duration::from_millis;
    // An arrow key and a stray key first, then n, a reason with a typo, Enter.
    let typed = typist(
        master,
        vec![
            (ms(50), b"\x1b[Ax".to_vec()),
            (ms(50), b"nno\x7f\x7fnot now\r".to_vec()),
        ],
    );
    let mut prompt = ApprovalPrompt::new(true);
    let step = tty.drive(
        &mut prompt,
        Some(Instant::now() + Duration::from_secs(20)),
        &[],
    );
    assert_eq!(step, Step::Done(Choice::Deny(Some("not now".into()))));
    drop(tty);
    let screen = String::from_utf8_lossy(&typed.join().unwrap()).into_owned();
    assert!(screen.contains("run it? [y/a/n] "), "{screen:?}");
    assert!(
        screen.contains("\x07"),
        "no bell for the stray key: {screen:?}"
    );
    assert!(screen.contains("reason: not now"), "{screen:?}");
    assert!(
        !screen.contains("\x1b"),
        "an escape sequence was echoed: {screen:?}"
    );
}

#[test]
fn a_deadline_ends_the_prompt_and_a_wake_descriptor_interrupts_it() {
    let (mut tty, master) = pty();
    tty.set_raw().unwrap();
    let _typed = typist(master.try_clone().unwrap(), vec![]);
    let mut prompt = ApprovalPrompt::new(false);
    let start = Instant::now();
    let step = tty.drive(&mut prompt, Some(start + Duration::from_millis(300)), &[]);
    assert_eq!(step, Step::Timeout);
    assert!(start.elapsed() >= Duration::from_millis(300));
    let (mut a, b) = std::os::unix::net::UnixStream::pair().unwrap();
    a.write_all(b"!").unwrap();
    let step = tty.drive(
        &mut prompt,
        Some(Instant::now() + Duration::from_secs(20)),
        &[b.as_fd()],
    );
    assert_eq!(step, Step::Woken(0));
}

#[test]
fn type_ahead_is_discarded() {
    let (mut tty, master) = pty();
    tty.set_raw().unwrap();
    (&master).write_all(b"y").unwrap();
    // Wait until the byte is readable on the slave side, then flush it.
    let mut fds = [PollFd::new(tty.file.as_fd(), PollFlags::POLLIN)];
    assert_eq!(poll(&mut fds, PollTimeout::from(5000u16)).unwrap(), 1);
    tty.flush_input().unwrap();
    let _typed = typist(master, vec![(Duration::from_millis(50), b"\r".to_vec())]);
    let mut prompt = ApprovalPrompt::new(true);
    let step = tty.drive(
        &mut prompt,
        Some(Instant::now() + Duration::from_secs(20)),
        &[],
    );
    assert_eq!(step, Step::Done(Choice::Deny(None)));
}

fn feed_all<P: Prompt>(p: &mut P, bytes: &[u8]) -> Option<P::Out> {
    p.feed(bytes, Instant::now())
}

#[test]
fn keys_map_to_choices() {
    for (b, k) in [
        (b'y', Some(Key::Once)),
        (b'Y', Some(Key::Once)),
        (b'a', Some(Key::Session)),
        (b'A', Some(Key::Session)),
        (b'n', Some(Key::Deny)),
        (b'N', Some(Key::Deny)),
        (b'\r', Some(Key::DenyNow)),
        (b'\n', Some(Key::DenyNow)),
        (0x03, Some(Key::Cancel)),
        (0x1c, Some(Key::Cancel)),
        (b'x', None),
        (b' ', None),
        (0x1a, None),
        (0x04, None),
        (0x1b, None),
    ] {
        assert_eq!(key(b, true), k, "byte {b:#x}");
    }
    assert_eq!(key(b'a', false), None);
    assert_eq!(key(b'A', false), None);
    assert_eq!(key(b'y', false), Some(Key::Once));
}

#[test]
fn the_approval_prompt_answers() {
    let mut p = ApprovalPrompt::new(true);
    assert_eq!(feed_all(&mut p, b"xzq"), None);
    assert!(p.take_effects().bell);
    assert_eq!(feed_all(&mut p, b"y"), Some(Choice::Once));
    assert_eq!(p.last_line().as_deref(), Some("run it? [y/a/n] y"));

    let mut p = ApprovalPrompt::new(true);
    assert_eq!(feed_all(&mut p, b"A"), Some(Choice::Session));

    // `l` only where always is offered.
    let mut p = ApprovalPrompt::new(true);
    assert_eq!(feed_all(&mut p, b"l"), None);
    assert!(p.take_effects().bell);
    let mut p = ApprovalPrompt::new(true).offering_always(true);
    assert_eq!(feed_all(&mut p, b"l"), Some(Choice::Always));
    assert_eq!(p.last_line().as_deref(), Some("run it? [y/a/l/n] l"));

    let mut p = ApprovalPrompt::new(false);
    assert_eq!(feed_all(&mut p, b"a"), None);
    assert_eq!(feed_all(&mut p, b"\r"), Some(Choice::Deny(None)));

    let mut p = ApprovalPrompt::new(true);
    assert_eq!(feed_all(&mut p, b"\x03"), Some(Choice::Cancelled));
}

#[test]
fn n_reads_a_reason() {
    let mut p = ApprovalPrompt::new(true);
    assert_eq!(feed_all(&mut p, b"n"), None);
    assert!(p.denying());
    let fx = p.take_effects();
    assert_eq!(fx.commit.as_deref(), Some("run it? [y/a/n] n"));
    // y and a are text now, not answers.
    assert_eq!(feed_all(&mut p, b"yay\x7f\x7f\x7fuse make clean"), None);
    assert_eq!(
        feed_all(&mut p, b"\r"),
        Some(Choice::Deny(Some("use make clean".into())))
    );

    let mut p = ApprovalPrompt::new(true);
    assert_eq!(
        feed_all(&mut p, b"n  \r"),
        Some(Choice::Deny(None)),
        "a blank reason is none"
    );
    let mut p = ApprovalPrompt::new(true);
    assert_eq!(
        feed_all(&mut p, b"nnot this\x03"),
        Some(Choice::Deny(None)),
        "Ctrl-C while typing the reason denies without it"
    );
}

#[test]
fn arrow_keys_never_answer() {
    // Up arrow (ESC [ A, ESC O A), F5 (ESC [ 1 5 ~), Alt+y, an OSC reply: all dropped.
    let mut p = ApprovalPrompt::new(true);
    assert_eq!(
        feed_all(&mut p, b"\x1b[A\x1bOA\x1b[15~\x1by\x1b]11;rgb:0/0/0\x07"),
        None
    );
    assert_eq!(feed_all(&mut p, b"y"), Some(Choice::Once));
}

#[test]
fn a_lone_escape_expires() {
    let mut f = EscFilter::default();
    let t0 = Instant::now();
    assert_eq!(f.pass(0x1b, t0), None);
    // The next byte a moment later is typed, not part of a sequence.
    let later = t0 + ESC_TIMEOUT;
    f.expire(later);
    assert_eq!(f.pass(b'y', later), Some(b'y'));
    // Within the same burst it is Alt+y.
    assert_eq!(f.pass(0x1b, later), None);
    f.expire(later);
    assert_eq!(f.pass(b'y', later), None);
    assert_eq!(f.pass(b'y', later), Some(b'y'));
    // Ctrl-C ends any sequence.
    assert_eq!(f.pass(0x1b, later), None);
    assert_eq!(f.pass(b'[', later), None);
    assert_eq!(f.pass(0x03, later), Some(0x03));
}

#[test]
fn the_line_editor_edits() {
    let mut e = LineEditor::new(10);
    for &b in b"hello wor" {
        e.feed(b);
    }
    assert_eq!(e.text(), "hello wor");
    assert_eq!(e.feed(0x17), Edit::Changed);
    assert_eq!(e.text(), "hello ");
    assert_eq!(e.feed(0x7f), Edit::Changed);
    assert_eq!(e.text(), "hello");
    assert_eq!(e.feed(0x08), Edit::Changed);
    assert_eq!(e.text(), "hell");
    // Control bytes are dropped; tabs too.
    for &b in b"\x01\x02\t\x1a\x00" {
        assert_eq!(e.feed(b), Edit::Nothing);
    }
    assert_eq!(e.text(), "hell");
    assert_eq!(e.feed(0x15), Edit::Changed);
    assert_eq!(e.text(), "");
    assert_eq!(e.feed(0x7f), Edit::Bell);
    // The cap.
    for &b in b"0123456789" {
        assert_eq!(e.feed(b), Edit::Changed);
    }
    assert_eq!(e.feed(b'x'), Edit::Bell);
    assert_eq!(e.text(), "0123456789");
    assert_eq!(e.feed(b'\r'), Edit::Enter);
    assert_eq!(e.feed(0x03), Edit::Cancel);
}

#[test]
fn the_line_editor_takes_utf8_and_drops_the_invisible() {
    let mut e = LineEditor::new(50);
    for &b in "héllo ✓ ".as_bytes() {
        e.feed(b);
    }
    // A right-to-left override, a zero-width space, a C1 control, broken UTF-8.
    for &b in "\u{202e}\u{200b}\u{85}".as_bytes() {
        e.feed(b);
    }
    for &b in b"\xff\xc3x\xe2\x9c" {
        e.feed(b);
    }
    assert_eq!(e.text(), "héllo ✓ x");
    assert_eq!(e.feed(0x7f), Edit::Changed);
    assert_eq!(e.text(), "héllo ✓ ");
}

#[test]
fn a_long_line_scrolls() {
    let mut e = LineEditor::new(200);
    for _ in 0..100 {
        e.feed(b'x');
    }
    e.feed(b'E');
    let shown = e.render("reason: ", WIDTH);
    assert_eq!(shown.chars().count(), WIDTH);
    assert!(shown.starts_with("reason: …"));
    assert!(shown.ends_with("xE"));
}

#[test]
fn options_are_selected_by_number() {
    let options: Vec<String> = ["red", "green", "blue"].map(String::from).to_vec();
    assert_eq!(select("2", &options, false), Ok(Some("green".into())));
    assert_eq!(select(" 3 ", &options, false), Ok(Some("blue".into())));
    assert_eq!(select("1,3", &options, true), Ok(Some("red, blue".into())));
    assert_eq!(
        select("3, 1 ,3", &options, true),
        Ok(Some("blue, red".into()))
    );
    assert_eq!(select("1 2", &options, true), Ok(Some("red, green".into())));
    assert!(select("1,3", &options, false).is_err());
    assert!(select("4", &options, false).is_err());
    assert!(select("0", &options, true).is_err());
    assert!(select("1,9", &options, true).is_err());
    assert_eq!(
        select("purple please", &options, false),
        Ok(Some("purple please".into()))
    );
    assert_eq!(select("2 cats", &options, false), Ok(Some("2 cats".into())));
    assert_eq!(select("   ", &options, false), Ok(None));
    assert_eq!(select("", &[], false), Ok(None));
    assert_eq!(select("42", &[], false), Ok(Some("42".into())));
}

#[test]
fn the_question_prompt_answers_and_retries() {
    let q = QuestionRequest {
        call_id: "c".into(),
        session_id: "s".into(),
        question: "which?".into(),
        options: vec!["red".into(), "green".into()],
        allow_multiple: false,
        timeout_seconds: 10,
        pid: 1,
    };
    let mut p = QuestionPrompt::new(&q);
    assert_eq!(feed_all(&mut p, b"7\r"), None);
    let fx = p.take_effects();
    assert_eq!(fx.notes.len(), 1, "{fx:?}");
    assert_eq!(
        feed_all(&mut p, b"\x7f2\r"),
        Some(Reply::Text("green".into()))
    );
    let mut p = QuestionPrompt::new(&q);
    assert_eq!(feed_all(&mut p, b"  \r"), Some(Reply::Declined));
    let mut p = QuestionPrompt::new(&q);
    assert_eq!(feed_all(&mut p, b"ab\x03"), Some(Reply::Cancelled));
}

#[test]
fn text_is_escaped_for_the_screen() {
    assert_eq!(escape("ls -l"), ("ls -l".into(), false));
    assert_eq!(
        escape("a\x1b[2Jb\tc\r\u{7f}"),
        ("a\\x1b[2Jb\\tc\\r\\x7f".into(), true)
    );
    assert_eq!(
        escape("rm \u{202e}fdp.exe"),
        ("rm \\u{202e}fdp.exe".into(), true)
    );
    assert_eq!(escape("\u{9b}31m"), ("\\x9b31m".into(), true));
    assert_eq!(escape("héllo ✓"), ("héllo ✓".into(), false));
}

#[test]
fn blocks_wrap_number_and_cut() {
    let (rows, any) = block("echo hi", 20);
    assert_eq!(rows, vec!["echo hi"]);
    assert!(!any);
    let (rows, _) = block(&"x".repeat(25), 10);
    assert_eq!(rows, vec!["xxxxxxxxxx", "xxxxxxxxxx", "xxxxx"]);
    let (rows, _) = block("for f in *; do\n  echo $f\ndone", 40);
    assert_eq!(rows, vec!["1  for f in *; do", "2    echo $f", "3  done"]);
    let long: Vec<String> = (1..=100).map(|i| format!("line {i}")).collect();
    let (rows, _) = block(&long.join("\n"), 40);
    assert_eq!(rows.len(), MAX_ROWS);
    assert!(
        rows[MAX_ROWS - 6].starts_with("… 81 rows left out ("),
        "{rows:?}"
    );
    assert!(rows.last().unwrap().ends_with("line 100"));
    assert!(rows.iter().all(|r| r.chars().count() <= 40));
    assert_eq!(one_row("a\nb", 10), "a\\nb");
    assert_eq!(
        prose("Which database should the migration target?", 20),
        vec!["Which database", "should the migration", "target?"]
    );
    assert_eq!(
        prose(&"y".repeat(25), 10),
        vec!["yyyyyyyyyy", "yyyyyyyyyy", "yyyyy"]
    );
    assert_eq!(prose("two\nlines", 20), vec!["two", "lines"]);
    assert_eq!(one_row("abcdefghijkl", 5), "abcd…");
}

#[test]
fn countdowns() {
    assert_eq!(countdown(9), "9s");
    assert_eq!(countdown(65), "65s");
    assert_eq!(countdown(125), "2m05s");
    assert_eq!(countdown(7500), "2h05m");
    assert_eq!(ceil_seconds(Duration::from_millis(1)), 1);
    assert_eq!(ceil_seconds(Duration::from_millis(1000)), 1);
    assert_eq!(ceil_seconds(Duration::from_millis(1001)), 2);
}

#[test]
fn prompt_lines_fit() {
    let mut p = ApprovalPrompt::new(true);
    assert_eq!(p.line(Some(57)), "(57s) run it? [y/a/n] ");
    feed_all(&mut p, b"n");
    feed_all(&mut p, "é".repeat(500).as_bytes());
    assert!(p.line(Some(7500)).chars().count() <= WIDTH);
}
