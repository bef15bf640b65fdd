use super::*;
use protocol::QuestionRequest;
use std::path::Path;

#[test]
fn the_waiting_line_says_how_long_and_who_answers_how() {
    let approval = Ask::Approval(protocol::ApprovalRequest {
        call_id: "c0ffee".into(),
        command: "make deploy".into(),
        ..protocol::ApprovalRequest::example()
    });
    let question = Ask::Question(QuestionRequest {
        call_id: "c0ffee".into(),
        session_id: "s".into(),
        question: "which?".into(),
        options: Vec::new(),
        allow_multiple: false,
        timeout_seconds: 30,
        pid: 1,
    });
    let broker = Waiting::Broker { configured: None };
    let at = Path::new("/run/x.sock");
    for (ask, waiting, line) in [
        (
            &approval,
            broker,
            "gate: waiting up to 60 s for a person to approve this command: answer with \
             `gate watch`, or `gate approve c0ffee` / `gate deny c0ffee`",
        ),
        (
            &approval,
            Waiting::Broker {
                configured: Some(at),
            },
            "gate: waiting up to 60 s for a person to approve this command: answer with \
             `gate watch`, or `gate approve c0ffee` / `gate deny c0ffee` (the broker at \
             /run/x.sock)",
        ),
        (
            &question,
            broker,
            "gate: waiting up to 30 s for a person to answer this question: answer with \
             `gate watch`",
        ),
        (
            &approval,
            Waiting::Approver(at),
            "gate: waiting up to 60 s for a person to approve this command through the \
             approver on /run/x.sock",
        ),
        (
            &question,
            Waiting::Terminal,
            "gate: waiting up to 30 s for a person to answer this question at the prompt \
             on their terminal",
        ),
    ] {
        assert_eq!(waiting_notice(ask, waiting), line);
    }
}
