//! The wire protocol between a gate that waits for an answer and whatever answers it
//! (a host program, the broker `gate serve`), and between the broker and the approver
//! tools (`gate pending`, `approve`, `deny`, `watch`). Pure: bytes in, values out.
//!
//! One JSON object per line, UTF-8, at most [`MAX_LINE`] bytes including the newline.
//! docs/protocol.md is the reference for people writing an approver; this module is the
//! reference for gate. Decoding is strict where a mistake could approve something: an
//! answer is exactly `"approve"` or `"deny"`, every known member has exactly its type,
//! and anything doubtful is a [`ProtocolError`], which the requester treats as a denial.
//! Unknown members are ignored so that later versions can add some.

use serde_json::{Map, Value, json};

use crate::policy::validate_rule;

/// The protocol version this gate speaks.
pub const VERSION: u64 = 1;

/// The longest line either side may send, newline included.
pub const MAX_LINE: usize = 64 * 1024;

/// What a requester asks: one command to run, or a question for the person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ask {
    Approval(ApprovalRequest),
    Question(QuestionRequest),
}

impl Ask {
    pub fn call_id(&self) -> &str {
        match self {
            Ask::Approval(r) => &r.call_id,
            Ask::Question(q) => &q.call_id,
        }
    }

    pub fn session_id(&self) -> &str {
        match self {
            Ask::Approval(r) => &r.session_id,
            Ask::Question(q) => &q.session_id,
        }
    }

    pub fn timeout_seconds(&self) -> u64 {
        match self {
            Ask::Approval(r) => r.timeout_seconds,
            Ask::Question(q) => q.timeout_seconds,
        }
    }

    /// The request as one line, newline included.
    pub fn encode(&self) -> Vec<u8> {
        let mut value = match self {
            Ask::Approval(r) => {
                let mut value = json!({
                    "type": "approval_request",
                    "version": VERSION,
                    "call_id": r.call_id,
                    "session_id": r.session_id,
                    "kind": r.kind,
                    "command": r.command,
                    "work_dir": r.work_dir,
                    "level": r.level,
                    "timeout_seconds": r.timeout_seconds,
                    "remember_supported": r.remember_supported,
                    "always_file": r.always_file,
                    "pid": r.pid,
                });
                if r.leaves_sandbox {
                    value["leaves_sandbox"] = true.into();
                }
                value
            }
            Ask::Question(q) => json!({
                "type": "question_request",
                "version": VERSION,
                "call_id": q.call_id,
                "session_id": q.session_id,
                "question": q.question,
                "options": q.options,
                "allow_multiple": q.allow_multiple,
                "timeout_seconds": q.timeout_seconds,
                "pid": q.pid,
            }),
        };
        // Absent rather than null: no lasting rule can be taken.
        if let Some(obj) = value.as_object_mut() {
            if obj.get("always_file").is_some_and(Value::is_null) {
                obj.remove("always_file");
            }
        }
        line(&value)
    }

    /// Read a request line (the broker's side). Strict like every decoder here.
    pub fn decode(line: &[u8]) -> Result<Ask, ProtocolError> {
        let obj = object(line)?;
        check_version(&obj, true)?;
        let ty = string(&obj, "type")?;
        let call_id = string(&obj, "call_id")?;
        check_id("call_id", &call_id)?;
        let session_id = string(&obj, "session_id")?;
        let timeout_seconds = uint(&obj, "timeout_seconds")?;
        let pid = uint(&obj, "pid")?;
        match ty.as_str() {
            "approval_request" => Ok(Ask::Approval(ApprovalRequest {
                call_id,
                session_id,
                kind: optional_string(&obj, "kind")?.unwrap_or_else(|| "command".into()),
                command: string(&obj, "command")?,
                work_dir: string(&obj, "work_dir")?,
                level: string(&obj, "level")?,
                timeout_seconds,
                remember_supported: boolean(&obj, "remember_supported")?,
                always_file: always_file(&obj)?,
                pid,
                leaves_sandbox: optional_bool(&obj, "leaves_sandbox")?.unwrap_or(false),
            })),
            "question_request" => {
                let options = match obj.get("options") {
                    None => Vec::new(),
                    Some(Value::Array(items)) => items
                        .iter()
                        .map(|v| match v {
                            Value::String(s) => Ok(s.clone()),
                            _ => Err(ProtocolError::wrong_type("options", "strings")),
                        })
                        .collect::<Result<_, _>>()?,
                    Some(_) => return Err(ProtocolError::wrong_type("options", "an array")),
                };
                Ok(Ask::Question(QuestionRequest {
                    call_id,
                    session_id,
                    question: string(&obj, "question")?,
                    options,
                    allow_multiple: optional_bool(&obj, "allow_multiple")?.unwrap_or(false),
                    timeout_seconds,
                    pid,
                }))
            }
            other => Err(ProtocolError(format!(
                "expected an approval_request or question_request, got type `{}`",
                short(other)
            ))),
        }
    }
}

/// `approval_request`: may this command run?
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRequest {
    pub call_id: String,
    pub session_id: String,
    /// command / script / program / session
    pub kind: String,
    pub command: String,
    pub work_dir: String,
    pub level: String,
    pub timeout_seconds: u64,
    pub remember_supported: bool,
    /// The file of lasting allow rules ("always allow") the requester reads, when it
    /// would take a new one there: only in requests to gate's broker, and never under a
    /// lock, for text that is not exact, or for a gate that reads no user file. The
    /// broker compares it with its own file; it never writes where a request says.
    pub always_file: Option<String>,
    pub pid: u64,
    /// At `safe`, a yes runs the command outside the sandbox (an unsandboxed rule). Sent
    /// only to gate's broker, and only when true; absent means false.
    pub leaves_sandbox: bool,
}

/// `question_request`: the agent asks the person something (`gate ask`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuestionRequest {
    pub call_id: String,
    pub session_id: String,
    pub question: String,
    pub options: Vec<String>,
    pub allow_multiple: bool,
    pub timeout_seconds: u64,
    pub pid: u64,
}

/// The answer to an approval request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Approve {
        /// Approve the same command (trimmed) for the rest of the session.
        remember: bool,
        /// Approve commands matching this allow rule for the rest of the session.
        remember_rule: Option<String>,
        /// Add a lasting allow rule ("always allow"): the command's exact text, or a
        /// prefix the person chose. Only the broker acts on it, by writing its user's
        /// always-allow file; a requester stores nothing.
        always: Option<Lasting>,
        /// The approver keeps the remembered approval itself (the broker does); the
        /// requester need not store it.
        kept: bool,
        /// Who or what answered, free text for the audit log (the broker says
        /// `remembered` when it answered from a remembered approval).
        source: Option<String>,
    },
    Deny {
        /// For the model: why, or what to do instead.
        message: Option<String>,
        source: Option<String>,
    },
}

/// What a lasting approval ("always allow") adds to the approver's always-allow file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lasting {
    /// `always: true`: the command's exact text (trimmed), and nothing longer.
    Exact,
    /// `always_rule`: a prefix allow rule the person chose, validated like any allow rule.
    Prefix(String),
}

impl Decision {
    /// The decision as one line for the requester, newline included.
    pub fn encode(&self, call_id: &str) -> Vec<u8> {
        let mut obj = Map::new();
        obj.insert("type".into(), "decision".into());
        obj.insert("call_id".into(), call_id.into());
        match self {
            Decision::Approve {
                remember,
                remember_rule,
                always,
                kept,
                source,
            } => {
                obj.insert("decision".into(), "approve".into());
                obj.insert("remember".into(), (*remember).into());
                if let Some(rule) = remember_rule {
                    obj.insert("remember_rule".into(), rule.as_str().into());
                }
                match always {
                    None => {}
                    Some(Lasting::Exact) => {
                        obj.insert("always".into(), true.into());
                    }
                    Some(Lasting::Prefix(rule)) => {
                        obj.insert("always_rule".into(), rule.as_str().into());
                    }
                }
                if *kept {
                    obj.insert("kept".into(), true.into());
                }
                if let Some(source) = source {
                    obj.insert("source".into(), source.as_str().into());
                }
            }
            Decision::Deny { message, source } => {
                obj.insert("decision".into(), "deny".into());
                if let Some(message) = message {
                    obj.insert("message".into(), message.as_str().into());
                }
                if let Some(source) = source {
                    obj.insert("source".into(), source.as_str().into());
                }
            }
        }
        line(&Value::Object(obj))
    }

    /// Decode the approver's answer to the request `call_id`. Every doubt is an error.
    pub fn decode(line: &[u8], call_id: &str) -> Result<Decision, ProtocolError> {
        let obj = object(line)?;
        Self::from_object(&obj, call_id)
    }

    fn from_object(obj: &Map<String, Value>, call_id: &str) -> Result<Decision, ProtocolError> {
        check_version(obj, false)?;
        let ty = string(obj, "type")?;
        if ty != "decision" {
            return Err(ProtocolError(format!(
                "expected a message of type `decision`, got `{}`",
                short(&ty)
            )));
        }
        let id = string(obj, "call_id")?;
        if id != call_id {
            return Err(ProtocolError(format!(
                "the decision is for call `{}`, not this call `{call_id}`",
                short(&id)
            )));
        }
        let source = optional_string(obj, "source")?;
        let message = optional_string(obj, "message")?;
        let remember = optional_bool(obj, "remember")?;
        let remember_rule = optional_string(obj, "remember_rule")?;
        let kept = optional_bool(obj, "kept")?.unwrap_or(false);
        let always = optional_bool(obj, "always")?;
        let always_rule = optional_string(obj, "always_rule")?;
        match obj.get("decision") {
            Some(Value::String(d)) if d == "approve" => {
                let always = match (always, always_rule) {
                    (Some(true), Some(_)) => {
                        return Err(ProtocolError(
                            "`always` and `always_rule` cannot go together: a lasting rule \
                             is the exact command or a prefix, not both"
                                .into(),
                        ));
                    }
                    (Some(true), None) => Some(Lasting::Exact),
                    (_, Some(rule)) => Some(Lasting::Prefix(
                        validate_rule(&rule)
                            .map_err(|e| {
                                ProtocolError(format!("always_rule is not a valid allow rule: {e}"))
                            })?
                            .to_owned(),
                    )),
                    (Some(false) | None, None) => None,
                };
                let remember_rule = match remember_rule {
                    None => None,
                    Some(rule) => Some(
                        validate_rule(&rule)
                            .map_err(|e| {
                                ProtocolError(format!(
                                    "remember_rule is not a valid allow rule: {e}"
                                ))
                            })?
                            .to_owned(),
                    ),
                };
                Ok(Decision::Approve {
                    remember: remember.unwrap_or(false),
                    remember_rule,
                    always,
                    kept,
                    source,
                })
            }
            Some(Value::String(d)) if d == "deny" => {
                if remember == Some(true) || remember_rule.is_some() {
                    return Err(ProtocolError(
                        "a deny cannot be remembered (remember / remember_rule go with approve)"
                            .into(),
                    ));
                }
                if always == Some(true) || always_rule.is_some() {
                    return Err(ProtocolError(
                        "a deny cannot be made lasting (always / always_rule go with approve)"
                            .into(),
                    ));
                }
                Ok(Decision::Deny { message, source })
            }
            Some(Value::String(d)) => Err(ProtocolError(format!(
                "decision must be exactly \"approve\" or \"deny\", not {}",
                short(&Value::String(d.clone()).to_string())
            ))),
            Some(other) => Err(ProtocolError(format!(
                "decision must be the string \"approve\" or \"deny\", not {}",
                short(&other.to_string())
            ))),
            None => Err(ProtocolError::missing("decision")),
        }
    }
}

/// The answer to a question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The answer text, for the model. Never blank.
    Text(String),
    /// The person would not answer; the message, if any, says why.
    Declined { message: Option<String> },
}

impl Answer {
    pub fn encode(&self, call_id: &str) -> Vec<u8> {
        let value = match self {
            Answer::Text(text) => json!({"type": "answer", "call_id": call_id, "answer": text}),
            Answer::Declined { message: None } => {
                json!({"type": "answer", "call_id": call_id, "declined": true})
            }
            Answer::Declined {
                message: Some(message),
            } => {
                json!({"type": "answer", "call_id": call_id, "declined": true, "message": message})
            }
        };
        line(&value)
    }

    /// Decode the answer to the question `call_id`. A blank answer is not an answer:
    /// it is read as declined, like the seeds' blank string.
    pub fn decode(line: &[u8], call_id: &str) -> Result<Answer, ProtocolError> {
        let obj = object(line)?;
        check_version(&obj, false)?;
        let ty = string(&obj, "type")?;
        if ty != "answer" {
            return Err(ProtocolError(format!(
                "expected a message of type `answer`, got `{}`",
                short(&ty)
            )));
        }
        let id = string(&obj, "call_id")?;
        if id != call_id {
            return Err(ProtocolError(format!(
                "the answer is for call `{}`, not this call `{call_id}`",
                short(&id)
            )));
        }
        let declined = optional_bool(&obj, "declined")?.unwrap_or(false);
        let answer = optional_string(&obj, "answer")?;
        let message = optional_string(&obj, "message")?;
        match (declined, answer) {
            (true, Some(_)) => Err(ProtocolError(
                "an answer cannot be both declined and given".into(),
            )),
            (true, None) => Ok(Answer::Declined { message }),
            (false, Some(text)) if text.trim().is_empty() => Ok(Answer::Declined {
                message: Some("the answer was blank".into()),
            }),
            (false, Some(text)) => Ok(Answer::Text(text)),
            (false, None) => Err(ProtocolError(
                "an answer needs either `answer` (text) or `declined`: true".into(),
            )),
        }
    }
}

// ---------------------------------------------------------------------------------------
// The approver tools' side of the broker.

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
    /// the broker's short id, or the request's `call_id` (see [`is_short_id`]).
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
// Helpers

/// A protocol fault: the request is denied and stderr names this.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolError(pub String);

impl ProtocolError {
    fn missing(key: &str) -> Self {
        ProtocolError(format!("the message has no `{key}`"))
    }

    fn wrong_type(key: &str, expected: &str) -> Self {
        ProtocolError(format!("`{key}` must be {expected}"))
    }
}

impl std::fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ProtocolError {}

fn line(value: &Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(value).expect("JSON values always encode");
    bytes.push(b'\n');
    bytes
}

fn line_of(obj: &Map<String, Value>) -> Vec<u8> {
    line(&Value::Object(obj.clone()))
}

/// Parse one line (with or without its newline) as a JSON object.
pub fn object(line: &[u8]) -> Result<Map<String, Value>, ProtocolError> {
    if line.len() > MAX_LINE {
        return Err(ProtocolError(format!(
            "a line is longer than {MAX_LINE} bytes"
        )));
    }
    let text = std::str::from_utf8(line)
        .map_err(|_| ProtocolError("the line is not valid UTF-8".into()))?;
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(_)) => {}
        Ok(_) => return Err(ProtocolError("the line is not a JSON object".into())),
        Err(e) => return Err(ProtocolError(format!("the line is not valid JSON ({e})"))),
    }
    // Parsed again, refusing a member given twice: serde_json would keep the last copy,
    // so `"decision":"deny", …, "decision":"approve"` (an approver pasting the model's
    // text into its message) would approve.
    serde_json::from_str::<UniqueObject>(text)
        .map(|o| o.0)
        .map_err(|e| ProtocolError(format!("{e}")))
}

/// A JSON object whose members each appear once.
struct UniqueObject(Map<String, Value>);

impl<'de> serde::Deserialize<'de> for UniqueObject {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> serde::de::Visitor<'de> for Members {
            type Value = UniqueObject;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut access: A,
            ) -> Result<UniqueObject, A::Error> {
                let mut map = Map::new();
                while let Some(key) = access.next_key::<String>()? {
                    if map.contains_key(&key) {
                        return Err(serde::de::Error::custom(format!(
                            "the member `{}` appears twice",
                            short(&key)
                        )));
                    }
                    let value: Value = access.next_value()?;
                    map.insert(key, value);
                }
                Ok(UniqueObject(map))
            }
        }
        d.deserialize_map(Members)
    }
}

/// `version`, when present (or when `required`), must be exactly 1.
fn check_version(obj: &Map<String, Value>, required: bool) -> Result<(), ProtocolError> {
    match obj.get("version") {
        None if !required => Ok(()),
        None => Err(ProtocolError::missing("version")),
        Some(Value::Number(n)) if n.as_u64() == Some(VERSION) => Ok(()),
        Some(other) => Err(ProtocolError(format!(
            "unsupported protocol version {} (this gate speaks version {VERSION})",
            short(&other.to_string())
        ))),
    }
}

fn string(obj: &Map<String, Value>, key: &str) -> Result<String, ProtocolError> {
    optional_string(obj, key)?.ok_or_else(|| ProtocolError::missing(key))
}

fn optional_string(obj: &Map<String, Value>, key: &str) -> Result<Option<String>, ProtocolError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(ProtocolError::wrong_type(key, "a string")),
    }
}

/// `always_file`: absent (or null), or an absolute path. It is only ever compared with
/// the broker's own file, never opened.
fn always_file(obj: &Map<String, Value>) -> Result<Option<String>, ProtocolError> {
    let file = optional_string(obj, "always_file")?;
    match &file {
        Some(path) if !path.starts_with('/') || path.contains('\0') => Err(ProtocolError(
            "`always_file` must be an absolute path".into(),
        )),
        _ => Ok(file),
    }
}

fn boolean(obj: &Map<String, Value>, key: &str) -> Result<bool, ProtocolError> {
    optional_bool(obj, key)?.ok_or_else(|| ProtocolError::missing(key))
}

/// A boolean must be `true` or `false`: never a string, a number or null.
fn optional_bool(obj: &Map<String, Value>, key: &str) -> Result<Option<bool>, ProtocolError> {
    match obj.get(key) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(ProtocolError(format!(
            "`{key}` must be true or false, not {}",
            short(&other.to_string())
        ))),
    }
}

fn uint(obj: &Map<String, Value>, key: &str) -> Result<u64, ProtocolError> {
    match obj.get(key) {
        Some(Value::Number(n)) => n
            .as_u64()
            .ok_or_else(|| ProtocolError::wrong_type(key, "a whole number")),
        None => Err(ProtocolError::missing(key)),
        Some(_) => Err(ProtocolError::wrong_type(key, "a whole number")),
    }
}

/// Whether an id an approver names is one of the broker's short ids (`1`, `2`, …) rather
/// than a request's `call_id`: it is when it is all ASCII digits. A call id that is all
/// digits can therefore only be answered by its short id.
pub fn is_short_id(id: &str) -> bool {
    !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit())
}

/// Ids are short and plain: they appear in messages and on command lines.
fn check_id(key: &str, id: &str) -> Result<(), ProtocolError> {
    let ok = !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._:@+-".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(ProtocolError(format!(
            "`{key}` must be 1 to 128 letters, digits or ._:@+-"
        )))
    }
}

/// Quote at most 60 characters of something the peer sent, for a message.
fn short(text: &str) -> String {
    let mut out: String = text
        .chars()
        .take(60)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if text.chars().count() > 60 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
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
            decide(r#"{"type":"decision","call_id":"c1","decision":"deny","always":false}"#)
                .is_ok()
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
            session_id: "s".into(),
            kind: "command".into(),
            command: "ls".into(),
            work_dir: "/w".into(),
            level: "ask".into(),
            timeout_seconds: 60,
            remember_supported: true,
            always_file: None,
            pid: 1,
            leaves_sandbox: false,
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
            session_id: "s".into(),
            kind: "command".into(),
            command: "rm -rf x; echo \u{1b}".into(),
            work_dir: "/w".into(),
            level: "ask".into(),
            timeout_seconds: 60,
            remember_supported: true,
            always_file: None,
            pid: 42,
            leaves_sandbox: false,
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
mod broker_reply_tests {
    use super::*;

    fn approval() -> PendingRequest {
        PendingRequest {
            id: "12".into(),
            ask: Ask::Approval(ApprovalRequest {
                call_id: "c1".into(),
                session_id: "s".into(),
                kind: "script".into(),
                command: "make \u{1b}[2J; rm x".into(),
                work_dir: "/w".into(),
                level: "ask".into(),
                timeout_seconds: 60,
                remember_supported: false,
                always_file: None,
                pid: 9,
                leaves_sandbox: false,
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
}
