//! The approver tools' side of the broker's protocol: what a tool sends after its
//! `hello` ([`ApproverMessage`]), how a request ends ([`Settle`]), and what the broker
//! sends back ([`BrokerReply`], with each waiting request as a [`PendingRequest`]).
//! Pure, and as strict as the requester's side: a line that does not decode closes the
//! connection. The requester never sees these lines.

use serde_json::{Map, Value, json};

use super::{
    Answer, ApprovalRequest, Ask, Decision, MAX_LINE, ProtocolError, QuestionRequest, VERSION,
    always_file, boolean, check_id, check_version, line, line_of, object, optional_bool,
    optional_string, short, string, uint,
};

/// What an approver tool sends the broker after its `hello`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApproverMessage {
    /// `{"type":"hello","version":1,"role":"approver","token":"…"}`: the first line.
    Hello { token: String },
    /// `{"type":"list"}`: reply `pending`.
    List,
    /// `{"type":"watch"}`: send every open request now and each new one as it comes,
    /// and `settled` when one closes.
    Watch,
    /// `{"type":"decide","id":"…","decision":…}`: answer an approval request. `id` is
    /// the broker's short id, or the request's `call_id` (see [`super::is_short_id`]).
    Decide { id: String, decision: Decision },
    /// `{"type":"answer","id":"…","answer":"…"}` or `"declined":true`: answer a question.
    Answer { id: String, answer: Answer },
}

impl ApproverMessage {
    pub fn encode(&self) -> Vec<u8> {
        let value = match self {
            ApproverMessage::Hello { token } => {
                json!({"type": "hello", "version": VERSION, "role": "approver", "token": token})
            }
            ApproverMessage::List => json!({"type": "list"}),
            ApproverMessage::Watch => json!({"type": "watch"}),
            ApproverMessage::Decide { id, decision } => {
                let mut v: Value = serde_json::from_slice(&decision.encode(id))
                    .expect("a decision encodes as an object");
                let obj = v.as_object_mut().expect("an object");
                obj.remove("call_id");
                obj.insert("type".into(), "decide".into());
                obj.insert("id".into(), id.as_str().into());
                v
            }
            ApproverMessage::Answer { id, answer } => {
                let mut v: Value = serde_json::from_slice(&answer.encode(id))
                    .expect("an answer encodes as an object");
                let obj = v.as_object_mut().expect("an object");
                obj.remove("call_id");
                obj.insert("id".into(), id.as_str().into());
                v
            }
        };
        line(&value)
    }

    pub fn decode(line: &[u8]) -> Result<ApproverMessage, ProtocolError> {
        let mut obj = object(line)?;
        let ty = string(&obj, "type")?;
        match ty.as_str() {
            "hello" => {
                check_version(&obj, true)?;
                if string(&obj, "role")? != "approver" {
                    return Err(ProtocolError("hello: role must be \"approver\"".into()));
                }
                Ok(ApproverMessage::Hello {
                    token: string(&obj, "token")?,
                })
            }
            "list" => Ok(ApproverMessage::List),
            "watch" => Ok(ApproverMessage::Watch),
            "decide" => {
                let id = string(&obj, "id")?;
                obj.insert("type".into(), "decision".into());
                obj.insert("call_id".into(), id.as_str().into());
                let decision = Decision::from_object(&obj, &id)?;
                Ok(ApproverMessage::Decide { id, decision })
            }
            "answer" => {
                let id = string(&obj, "id")?;
                obj.insert("call_id".into(), id.as_str().into());
                let answer = Answer::decode(&line_of(&obj), &id)?;
                Ok(ApproverMessage::Answer { id, answer })
            }
            other => Err(ProtocolError(format!(
                "unknown message type `{}`",
                short(other)
            ))),
        }
    }
}

/// The outcome of an answer sent to the broker, as the seeds name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settle {
    /// The request was open and this answer settled it.
    Answered,
    /// The request was answered before, or its requester went away. Nothing changed.
    AlreadySettled,
    /// No request with this id was ever opened here. Nothing changed.
    NotFound,
}

impl Settle {
    pub fn as_str(self) -> &'static str {
        match self {
            Settle::Answered => "answered",
            Settle::AlreadySettled => "already_settled",
            Settle::NotFound => "not_found",
        }
    }

    pub fn parse(text: &str) -> Option<Settle> {
        match text {
            "answered" => Some(Settle::Answered),
            "already_settled" => Some(Settle::AlreadySettled),
            "not_found" => Some(Settle::NotFound),
            _ => None,
        }
    }
}

// ---------------------------------------------------------------------------------------
// The broker's replies to the approver tools.
//
// After `hello` the broker answers `welcome` (or `error`, and closes). `list` is answered
// by a `pending` line that gives a count, followed by exactly that many `request` lines,
// written together so that nothing comes between them. `decide` and `answer` are
// answered by a `result` line, or an `error` line when the request cannot take that
// answer (the connection stays open; a line that does not decode closes it). After
// `watch` the broker sends a `request` line for every open request, then one for each
// new request, and a `settled` line whenever one closes.
//
// A `request` line carries one request with its broker id, so it can be longer than the
// request line that came in (which is at most MAX_LINE): approver tools accept lines up
// to MAX_BROKER_LINE.

/// The longest line the broker sends an approver tool, newline included: a request of
/// [`MAX_LINE`] bytes plus the members the broker adds.
pub const MAX_BROKER_LINE: usize = MAX_LINE + 4096;

/// A request waiting in the broker, as approver tools see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingRequest {
    /// The broker's short id (`1`, `2`, …), which `gate approve` and `gate deny` take.
    pub id: String,
    pub ask: Ask,
    /// How long it has been waiting, when the line was sent.
    pub age_seconds: u64,
}

impl PendingRequest {
    /// The request as a flat JSON object: what `gate pending --json` prints, and the
    /// body of a `request` line.
    ///
    /// `kind` is `approval` or `question`; an approval's own kind (command, script,
    /// program, session) is `command_kind`.
    pub fn to_json(&self) -> Map<String, Value> {
        let mut obj = Map::new();
        obj.insert("id".into(), self.id.as_str().into());
        match &self.ask {
            Ask::Approval(r) => {
                obj.insert("kind".into(), "approval".into());
                obj.insert("command".into(), r.command.as_str().into());
                obj.insert("command_kind".into(), r.kind.as_str().into());
                obj.insert("work_dir".into(), r.work_dir.as_str().into());
                obj.insert("level".into(), r.level.as_str().into());
                obj.insert("remember_supported".into(), r.remember_supported.into());
                obj.insert("leaves_sandbox".into(), r.leaves_sandbox.into());
                if let Some(file) = &r.always_file {
                    obj.insert("always_file".into(), file.as_str().into());
                }
            }
            Ask::Question(q) => {
                obj.insert("kind".into(), "question".into());
                obj.insert("question".into(), q.question.as_str().into());
                obj.insert("options".into(), q.options.clone().into());
                obj.insert("allow_multiple".into(), q.allow_multiple.into());
            }
        }
        obj.insert("call_id".into(), self.ask.call_id().into());
        obj.insert("session_id".into(), self.ask.session_id().into());
        let pid = match &self.ask {
            Ask::Approval(r) => r.pid,
            Ask::Question(q) => q.pid,
        };
        obj.insert("pid".into(), pid.into());
        obj.insert("age_seconds".into(), self.age_seconds.into());
        obj.insert("timeout_seconds".into(), self.ask.timeout_seconds().into());
        obj
    }

    /// Read the flat object [`PendingRequest::to_json`] makes. Strict, like every decoder
    /// here.
    pub fn from_json(obj: &Map<String, Value>) -> Result<PendingRequest, ProtocolError> {
        let id = string(obj, "id")?;
        check_id("id", &id)?;
        let call_id = string(obj, "call_id")?;
        check_id("call_id", &call_id)?;
        let session_id = string(obj, "session_id")?;
        let pid = uint(obj, "pid")?;
        let timeout_seconds = uint(obj, "timeout_seconds")?;
        let age_seconds = uint(obj, "age_seconds")?;
        let ask = match string(obj, "kind")?.as_str() {
            "approval" => Ask::Approval(ApprovalRequest {
                call_id,
                session_id,
                kind: string(obj, "command_kind")?,
                command: string(obj, "command")?,
                work_dir: string(obj, "work_dir")?,
                level: string(obj, "level")?,
                timeout_seconds,
                remember_supported: boolean(obj, "remember_supported")?,
                always_file: always_file(obj)?,
                pid,
                leaves_sandbox: optional_bool(obj, "leaves_sandbox")?.unwrap_or(false),
            }),
            "question" => Ask::Question(QuestionRequest {
                call_id,
                session_id,
                question: string(obj, "question")?,
                options: strings(obj, "options")?,
                allow_multiple: boolean(obj, "allow_multiple")?,
                timeout_seconds,
                pid,
            }),
            other => {
                return Err(ProtocolError(format!(
                    "a pending request's kind must be \"approval\" or \"question\", not `{}`",
                    short(other)
                )));
            }
        };
        Ok(PendingRequest {
            id,
            ask,
            age_seconds,
        })
    }
}

/// What the broker sends an approver tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BrokerReply {
    /// `{"type":"welcome","version":1}`: the token was right.
    Welcome,
    /// `{"type":"error","message":"…"}`: the last message was refused.
    Error { message: String },
    /// `{"type":"pending","count":N}`: the answer to `list`; N `request` lines follow.
    Pending { count: u64 },
    /// `{"type":"request", …the request's members…}`: one open request.
    Request(PendingRequest),
    /// `{"type":"settled","id":"…","how":"…","by":"…"}`: a request closed. `how` is
    /// approved, denied, answered, declined, requester_gone, protocol_error or
    /// broker_stopped; `by`, when present, names who answered.
    Settled {
        id: String,
        how: String,
        by: Option<String>,
    },
    /// `{"type":"result","id":"…","settle":"answered"}`: what an answer came to.
    Result { id: String, settle: Settle },
}

impl BrokerReply {
    /// The reply as one line, newline included.
    pub fn encode(&self) -> Vec<u8> {
        let value = match self {
            BrokerReply::Welcome => json!({"type": "welcome", "version": VERSION}),
            BrokerReply::Error { message } => json!({"type": "error", "message": message}),
            BrokerReply::Pending { count } => json!({"type": "pending", "count": count}),
            BrokerReply::Request(pending) => {
                let mut obj = pending.to_json();
                obj.insert("type".into(), "request".into());
                Value::Object(obj)
            }
            BrokerReply::Settled { id, how, by } => {
                let mut obj = Map::new();
                obj.insert("type".into(), "settled".into());
                obj.insert("id".into(), id.as_str().into());
                obj.insert("how".into(), how.as_str().into());
                if let Some(by) = by {
                    obj.insert("by".into(), by.as_str().into());
                }
                Value::Object(obj)
            }
            BrokerReply::Result { id, settle } => {
                json!({"type": "result", "id": id, "settle": settle.as_str()})
            }
        };
        line(&value)
    }

    /// Read one line from the broker (at most [`MAX_BROKER_LINE`] bytes).
    pub fn decode(line: &[u8]) -> Result<BrokerReply, ProtocolError> {
        if line.len() > MAX_BROKER_LINE {
            return Err(ProtocolError(format!(
                "a line from the broker is longer than {MAX_BROKER_LINE} bytes"
            )));
        }
        let text = std::str::from_utf8(line)
            .map_err(|_| ProtocolError("the line is not valid UTF-8".into()))?;
        let obj = match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(obj)) => obj,
            Ok(_) => return Err(ProtocolError("the line is not a JSON object".into())),
            Err(e) => return Err(ProtocolError(format!("the line is not valid JSON ({e})"))),
        };
        let ty = string(&obj, "type")?;
        match ty.as_str() {
            "welcome" => {
                check_version(&obj, true)?;
                Ok(BrokerReply::Welcome)
            }
            "error" => Ok(BrokerReply::Error {
                message: string(&obj, "message")?,
            }),
            "pending" => Ok(BrokerReply::Pending {
                count: uint(&obj, "count")?,
            }),
            "request" => Ok(BrokerReply::Request(PendingRequest::from_json(&obj)?)),
            "settled" => {
                let id = string(&obj, "id")?;
                check_id("id", &id)?;
                Ok(BrokerReply::Settled {
                    id,
                    how: string(&obj, "how")?,
                    by: optional_string(&obj, "by")?,
                })
            }
            "result" => {
                let id = string(&obj, "id")?;
                let settle = string(&obj, "settle")?;
                let settle = Settle::parse(&settle).ok_or_else(|| {
                    ProtocolError(format!(
                        "settle must be answered, already_settled or not_found, not `{}`",
                        short(&settle)
                    ))
                })?;
                Ok(BrokerReply::Result { id, settle })
            }
            other => Err(ProtocolError(format!(
                "unknown message type `{}` from the broker",
                short(other)
            ))),
        }
    }
}

fn strings(obj: &Map<String, Value>, key: &str) -> Result<Vec<String>, ProtocolError> {
    match obj.get(key) {
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| match v {
                Value::String(s) => Ok(s.clone()),
                _ => Err(ProtocolError::wrong_type(key, "strings")),
            })
            .collect(),
        Some(_) => Err(ProtocolError::wrong_type(key, "an array")),
        None => Err(ProtocolError::missing(key)),
    }
}

#[cfg(test)]
mod tests;
