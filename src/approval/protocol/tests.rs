use super::*;

fn decide(line: &str) -> Result<Decision, ProtocolError> {
    Decision::decode(line.as_bytes(), "c1")
}

#[test]
fn an_all_digit_id_is_a_short_id_and_anything_else_a_call_id() {
    for short in ["1", "42", "01", "18446744073709551616"] {
        assert!(is_short_id(short), "{short}");
    }
    for call in ["", "9dbaa3f042e96433", "+1", "1a", "c1", " 1"] {
        assert!(!is_short_id(call), "{call:?}");
    }
}

#[test]
fn approve_and_deny_decode() {
    assert_eq!(
        decide(r#"{"type":"decision","call_id":"c1","decision":"approve"}"#).unwrap(),
        Decision::Approve {
            remember: false,
            remember_rule: None,
            always: None,
            kept: false,
            source: None
        }
    );
    assert_eq!(
        decide(
            r#"{"type":"decision","call_id":"c1","decision":"approve","remember":true,"version":1}"#
        )
        .unwrap(),
        Decision::Approve {
            remember: true,
            remember_rule: None,
            always: None,
            kept: false,
            source: None
        }
    );
    assert_eq!(
        decide(r#"{"type":"decision","call_id":"c1","decision":"deny","message":"use make"}"#)
            .unwrap(),
        Decision::Deny {
            message: Some("use make".into()),
            source: None
        }
    );
}

#[test]
fn every_doubt_is_an_error() {
    for bad in [
        r#"{"type":"decision","call_id":"c1","decision":"yes"}"#,
        r#"{"type":"decision","call_id":"c1","decision":"Approve"}"#,
        r#"{"type":"decision","call_id":"c1","decision":"approve "}"#,
        r#"{"type":"decision","call_id":"c1","decision":true}"#,
        r#"{"type":"decision","call_id":"c1","decision":1}"#,
        r#"{"type":"decision","call_id":"c1","decision":null}"#,
        r#"{"type":"decision","call_id":"c1"}"#,
        r#"{"type":"decision","call_id":"c2","decision":"approve"}"#,
        r#"{"type":"decision","decision":"approve"}"#,
        r#"{"type":"answer","call_id":"c1","decision":"approve"}"#,
        r#"{"call_id":"c1","decision":"approve"}"#,
        r#"{"type":"decision","call_id":"c1","decision":"approve","version":2}"#,
        r#"{"type":"decision","call_id":"c1","decision":"approve","version":"1"}"#,
        r#"{"type":"decision","call_id":"c1","decision":"approve","remember":"true"}"#,
        r#"{"type":"decision","call_id":"c1","decision":"approve","remember":1}"#,
        r#"{"type":"decision","call_id":"c1","decision":"approve","remember_rule":"a;b"}"#,
        r#"{"type":"decision","call_id":"c1","decision":"approve","remember_rule":"  "}"#,
        r#"{"type":"decision","call_id":"c1","decision":"approve","remember_rule":"npm test:*"}"#,
        r#"{"type":"decision","call_id":"c1","decision":"approve","remember_rule":"Bash(ls)"}"#,
        r#"{"type":"decision","call_id":"c1","decision":"approve","remember_rule":5}"#,
        r#"{"type":"decision","call_id":"c1","decision":"deny","remember":true}"#,
        r#"{"type":"decision","call_id":"c1","decision":"deny","message":5}"#,
        r#"["decision"]"#,
        r#""approve""#,
        "",
        "not json",
        r#"{"type":"decision","call_id":"c1","decision":"approve""#,
    ] {
        assert!(decide(bad).is_err(), "accepted {bad}");
    }
    assert!(Decision::decode(b"{\"type\":\"decision\",\xff}", "c1").is_err());
    let twice =
        decide(r#"{"type":"decision","call_id":"c1","decision":"deny","decision":"approve"}"#)
            .unwrap_err();
    assert!(twice.0.contains("`decision` appears twice"), "{twice}");
    let long = format!(
        r#"{{"type":"decision","call_id":"c1","decision":"deny","message":"{}"}}"#,
        "x".repeat(MAX_LINE)
    );
    assert!(decide(&long).is_err());
}

#[test]
fn a_lasting_approval_is_the_exact_command_or_a_valid_prefix_and_only_with_approve() {
    let approve = |extra: &str| {
        decide(&format!(
            r#"{{"type":"decision","call_id":"c1","decision":"approve"{extra}}}"#
        ))
    };
    let always = |d: Decision| match d {
        Decision::Approve { always, .. } => always,
        Decision::Deny { .. } => panic!("a deny"),
    };
    assert_eq!(
        always(approve(r#","always":true"#).unwrap()),
        Some(Lasting::Exact)
    );
    assert_eq!(always(approve(r#","always":false"#).unwrap()), None);
    assert_eq!(
        always(approve(r#","always_rule":" npm test ""#).unwrap()),
        Some(Lasting::Prefix("npm test".into()))
    );
    for (extra, needle) in [
        (r#","always":"true""#, "`always` must be true or false"),
        (r#","always":1"#, "`always` must be true or false"),
        (r#","always":null"#, "`always` must be true or false"),
        (r#","always_rule":5"#, "`always_rule` must be a string"),
        (
            r#","always_rule":"a && b""#,
            "always_rule is not a valid allow rule",
        ),
        (
            r#","always_rule":"  ""#,
            "always_rule is not a valid allow rule",
        ),
        (
            r#","always_rule":"Bash(ls)""#,
            "always_rule is not a valid allow rule",
        ),
        (r#","always":true,"always_rule":"ls""#, "cannot go together"),
    ] {
        let e = approve(extra).unwrap_err().to_string();
        assert!(e.contains(needle), "{extra}: {e}");
    }
    for extra in [r#","always":true"#, r#","always_rule":"ls""#] {
        let e = decide(&format!(
            r#"{{"type":"decision","call_id":"c1","decision":"deny"{extra}}}"#
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains("a deny cannot be made lasting"), "{e}");
    }
    // `"always":false` with a deny says nothing and is fine.
    assert!(
        decide(r#"{"type":"decision","call_id":"c1","decision":"deny","always":false}"#).is_ok()
    );
    // It round-trips, and through the broker's `decide`.
    for lasting in [Lasting::Exact, Lasting::Prefix("npm test".into())] {
        let d = Decision::Approve {
            remember: false,
            remember_rule: None,
            always: Some(lasting),
            kept: false,
            source: None,
        };
        assert_eq!(Decision::decode(&d.encode("c1"), "c1").unwrap(), d);
        let m = ApproverMessage::Decide {
            id: "3".into(),
            decision: d,
        };
        assert_eq!(ApproverMessage::decode(&m.encode()).unwrap(), m);
    }
}

#[test]
fn a_request_names_the_always_file_only_when_it_takes_lasting_rules() {
    let mut request = ApprovalRequest {
        call_id: "c1".into(),
        ..ApprovalRequest::example()
    };
    let line = Ask::Approval(request.clone()).encode();
    assert!(!String::from_utf8_lossy(&line).contains("always_file"));
    assert_eq!(Ask::decode(&line).unwrap(), Ask::Approval(request.clone()));
    request.always_file = Some("/home/u/.config/gate/always.toml".into());
    let line = Ask::Approval(request.clone()).encode();
    assert_eq!(Ask::decode(&line).unwrap(), Ask::Approval(request.clone()));
    let pending = PendingRequest {
        id: "1".into(),
        ask: Ask::Approval(request),
        age_seconds: 0,
    };
    assert_eq!(
        PendingRequest::from_json(&pending.to_json()).unwrap(),
        pending
    );
    for bad in [r#""relative/always.toml""#, "5", r#""/a\u0000b""#] {
        let line = format!(
            r#"{{"type":"approval_request","version":1,"call_id":"c1","session_id":"s","command":"ls","work_dir":"/w","level":"ask","timeout_seconds":60,"remember_supported":true,"pid":1,"always_file":{bad}}}"#
        );
        assert!(Ask::decode(line.as_bytes()).is_err(), "{bad}");
    }
}

#[test]
fn a_remembered_rule_is_validated_and_trimmed() {
    match decide(
        r#"{"type":"decision","call_id":"c1","decision":"approve","remember_rule":" npm test "}"#,
    )
    .unwrap()
    {
        Decision::Approve { remember_rule, .. } => {
            assert_eq!(remember_rule.as_deref(), Some("npm test"))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn decisions_round_trip() {
    for d in [
        Decision::Approve {
            remember: true,
            remember_rule: Some("npm test".into()),
            always: None,
            kept: true,
            source: Some("gate approve".into()),
        },
        Decision::Deny {
            message: Some("no \"way\"\n".into()),
            source: None,
        },
    ] {
        assert_eq!(Decision::decode(&d.encode("c1"), "c1").unwrap(), d);
    }
}

#[test]
fn requests_round_trip() {
    let a = Ask::Approval(ApprovalRequest {
        call_id: "abc".into(),
        command: "rm -rf x; echo \u{1b}".into(),
        pid: 42,
        ..ApprovalRequest::example()
    });
    assert_eq!(Ask::decode(&a.encode()).unwrap(), a);
    let q = Ask::Question(QuestionRequest {
        call_id: "abd".into(),
        session_id: "s".into(),
        question: "which?".into(),
        options: vec!["a".into(), "b".into()],
        allow_multiple: true,
        timeout_seconds: 5,
        pid: 1,
    });
    assert_eq!(Ask::decode(&q.encode()).unwrap(), q);
    assert!(Ask::decode(br#"{"type":"approval_request","version":1}"#).is_err());
}

#[test]
fn answers_decode_strictly() {
    let ok = |l: &str| Answer::decode(l.as_bytes(), "c1");
    assert_eq!(
        ok(r#"{"type":"answer","call_id":"c1","answer":"blue"}"#).unwrap(),
        Answer::Text("blue".into())
    );
    assert!(matches!(
        ok(r#"{"type":"answer","call_id":"c1","answer":"  "}"#).unwrap(),
        Answer::Declined { .. }
    ));
    assert!(matches!(
        ok(r#"{"type":"answer","call_id":"c1","declined":true}"#).unwrap(),
        Answer::Declined { message: None }
    ));
    for bad in [
        r#"{"type":"answer","call_id":"c1"}"#,
        r#"{"type":"answer","call_id":"c1","answer":5}"#,
        r#"{"type":"answer","call_id":"c1","declined":"yes"}"#,
        r#"{"type":"answer","call_id":"c1","declined":true,"answer":"x"}"#,
        r#"{"type":"answer","call_id":"c9","answer":"x"}"#,
        r#"{"type":"decision","call_id":"c1","answer":"x"}"#,
    ] {
        assert!(ok(bad).is_err(), "accepted {bad}");
    }
}

#[test]
fn approver_messages_round_trip() {
    for m in [
        ApproverMessage::Hello { token: "t".into() },
        ApproverMessage::List,
        ApproverMessage::Watch,
        ApproverMessage::Decide {
            id: "7".into(),
            decision: Decision::Approve {
                remember: true,
                remember_rule: None,
                always: None,
                kept: false,
                source: None,
            },
        },
        ApproverMessage::Decide {
            id: "8".into(),
            decision: Decision::Deny {
                message: Some("no".into()),
                source: None,
            },
        },
        ApproverMessage::Answer {
            id: "9".into(),
            answer: Answer::Text("x".into()),
        },
    ] {
        assert_eq!(ApproverMessage::decode(&m.encode()).unwrap(), m);
    }
}
