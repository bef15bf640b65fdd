use super::*;
use crate::approval::protocol::{ApprovalRequest, QuestionRequest};

#[test]
fn ages_read_easily() {
    assert_eq!(age(0), "0s");
    assert_eq!(age(59), "59s");
    assert_eq!(age(61), "1m01s");
    assert_eq!(age(3725), "1h02m");
}

#[test]
fn the_table_escapes_what_requesters_sent() {
    let list = vec![
        PendingRequest {
            id: "1".into(),
            ask: Ask::Approval(ApprovalRequest {
                session_id: "s\u{1b}]0;x\u{7}".into(),
                command: "echo \u{1b}[2J\nrm -rf ~".into(),
                work_dir: "/w\r".into(),
                ..ApprovalRequest::example()
            }),
            age_seconds: 5,
        },
        PendingRequest {
            id: "2".into(),
            ask: Ask::Question(QuestionRequest {
                call_id: "d".into(),
                session_id: "s".into(),
                question: "which\u{1b}?".into(),
                options: vec!["a".into(), "b".into()],
                allow_multiple: false,
                timeout_seconds: 60,
                pid: 2,
            }),
            age_seconds: 70,
        },
    ];
    let text = table(&list);
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "{text:?}"
    );
    assert_eq!(text.lines().count(), 3, "{text}");
    assert!(text.contains("echo \\x1b[2J\\nrm -rf ~"), "{text}");
    assert!(text.contains("question: which\\x1b? [a | b]"), "{text}");
    assert!(text.starts_with("ID  AGE"), "{text}");
}

#[test]
fn the_table_escapes_as_the_prompt_does() {
    let command = "ls \u{202e}gpj.exe\u{200b}\u{2066}x\u{feff}";
    let list = vec![PendingRequest {
        id: "1".into(),
        ask: Ask::Approval(ApprovalRequest {
            command: command.into(),
            ..ApprovalRequest::example()
        }),
        age_seconds: 0,
    }];
    let text = table(&list);
    let row = text.lines().nth(1).unwrap();
    assert!(
        row.ends_with(&super::super::tty::escape(command).0),
        "{row}"
    );
    assert!(
        row.ends_with("ls \\u{202e}gpj.exe\\u{200b}\\u{2066}x\\u{feff}"),
        "{row}"
    );
}

#[test]
fn an_empty_list_says_so() {
    assert_eq!(table(&[]), "no requests are waiting\n");
}

#[test]
fn long_paths_keep_their_end() {
    assert_eq!(tail("abcdef", 4), "…def");
    assert_eq!(tail("abc", 4), "abc");
}
