//! The wire protocol's decoders: `Decision`, `Answer`, `Ask`, `ApproverMessage` and
//! `BrokerReply`.
//!
//! Input: one line, any bytes. No decoder may panic, and whatever one accepts must
//! encode to a line that decodes to the same value (an approval, above all, must not
//! change meaning on the way through the broker).

use gate::approval::protocol::{Answer, ApproverMessage, Ask, BrokerReply, Decision};

/// The call id the requester-side decoders expect.
pub const CALL_ID: &str = "call-1";

pub fn check(line: &[u8]) {
    if let Ok(decision) = Decision::decode(line, CALL_ID) {
        let again = Decision::decode(&decision.encode(CALL_ID), CALL_ID);
        assert_eq!(
            again.as_ref(),
            Ok(&decision),
            "a decoded decision changed when re-encoded: {:?}",
            String::from_utf8_lossy(line)
        );
    }
    if let Ok(answer) = Answer::decode(line, CALL_ID) {
        let again = Answer::decode(&answer.encode(CALL_ID), CALL_ID);
        assert_eq!(
            again.as_ref(),
            Ok(&answer),
            "a decoded answer changed when re-encoded: {:?}",
            String::from_utf8_lossy(line)
        );
    }
    if let Ok(ask) = Ask::decode(line) {
        let again = Ask::decode(&ask.encode());
        assert_eq!(
            again.as_ref(),
            Ok(&ask),
            "a decoded request changed when re-encoded: {:?}",
            String::from_utf8_lossy(line)
        );
    }
    if let Ok(message) = ApproverMessage::decode(line) {
        let again = ApproverMessage::decode(&message.encode());
        assert_eq!(
            again.as_ref(),
            Ok(&message),
            "a decoded approver message changed when re-encoded: {:?}",
            String::from_utf8_lossy(line)
        );
    }
    if let Ok(reply) = BrokerReply::decode(line) {
        let again = BrokerReply::decode(&reply.encode());
        assert_eq!(
            again.as_ref(),
            Ok(&reply),
            "a decoded broker reply changed when re-encoded: {:?}",
            String::from_utf8_lossy(line)
        );
    }
}
