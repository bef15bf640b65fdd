use super::*;

fn approval() -> PendingRequest {
    PendingRequest {
        id: "12".into(),
        ask: Ask::Approval(ApprovalRequest {
            call_id: "c1".into(),
            kind: "script".into(),
            command: "make \u{1b}[2J; rm x".into(),
            remember_supported: false,
            pid: 9,
            ..ApprovalRequest::example()
        }),
        age_seconds: 3,
    }
}

fn question() -> PendingRequest {
    PendingRequest {
        id: "13".into(),
        ask: Ask::Question(QuestionRequest {
            call_id: "c2".into(),
            session_id: "s".into(),
            question: "which?".into(),
            options: vec!["a".into(), "b".into()],
            allow_multiple: true,
            timeout_seconds: 5,
            pid: 10,
        }),
        age_seconds: 0,
    }
}

#[test]
fn broker_replies_round_trip() {
    for reply in [
        BrokerReply::Welcome,
        BrokerReply::Error {
            message: "bad token".into(),
        },
        BrokerReply::Pending { count: 2 },
        BrokerReply::Request(approval()),
        BrokerReply::Request(question()),
        BrokerReply::Settled {
            id: "4".into(),
            how: "approved".into(),
            by: Some("gate approve".into()),
        },
        BrokerReply::Settled {
            id: "5".into(),
            how: "requester_gone".into(),
            by: None,
        },
        BrokerReply::Result {
            id: "4".into(),
            settle: Settle::AlreadySettled,
        },
    ] {
        let line = reply.encode();
        assert!(line.ends_with(b"\n"));
        assert_eq!(BrokerReply::decode(&line).unwrap(), reply);
    }
}

#[test]
fn broker_replies_decode_strictly() {
    for bad in [
        r#"{"type":"welcome"}"#,
        r#"{"type":"welcome","version":2}"#,
        r#"{"type":"error"}"#,
        r#"{"type":"pending","count":"2"}"#,
        r#"{"type":"pending","count":-1}"#,
        r#"{"type":"result","id":"1","settle":"ok"}"#,
        r#"{"type":"result","id":"1"}"#,
        r#"{"type":"settled","id":"1"}"#,
        r#"{"type":"settled","id":"a b","how":"approved"}"#,
        r#"{"type":"request","id":"1","kind":"thing","call_id":"c","session_id":"s","pid":1,"age_seconds":0,"timeout_seconds":1}"#,
        r#"{"type":"request","id":"1","kind":"approval","call_id":"c","session_id":"s","pid":1,"age_seconds":0,"timeout_seconds":1}"#,
        r#"{"type":"hello"}"#,
        r#"["welcome"]"#,
        "not json",
    ] {
        assert!(
            BrokerReply::decode(bad.as_bytes()).is_err(),
            "accepted {bad}"
        );
    }
}

#[test]
fn the_longest_request_fits_a_broker_line() {
    let mut p = approval();
    if let Ask::Approval(r) = &mut p.ask {
        r.call_id = "c".repeat(128);
        r.session_id = "s".repeat(200);
        r.work_dir = "/".into();
        r.kind = "command".into();
        let rest = r.clone();
        let overhead = Ask::Approval(ApprovalRequest {
            command: String::new(),
            ..rest
        })
        .encode()
        .len();
        r.command = "x".repeat(MAX_LINE - overhead);
    }
    assert_eq!(p.ask.encode().len(), MAX_LINE);
    p.id = u64::MAX.to_string();
    p.age_seconds = u64::MAX;
    p.ask = match p.ask {
        Ask::Approval(mut r) => {
            r.timeout_seconds = u64::MAX;
            r.pid = u64::MAX;
            Ask::Approval(r)
        }
        other => other,
    };
    let line = BrokerReply::Request(p).encode();
    assert!(line.len() <= MAX_BROKER_LINE, "{}", line.len());
}
