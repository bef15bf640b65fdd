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

mod approver;

pub use approver::{ApproverMessage, BrokerReply, MAX_BROKER_LINE, PendingRequest, Settle};

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

#[cfg(test)]
impl ApprovalRequest {
    /// A request for the unit tests: `ls` at `ask`, call `c`, session `s`, in `/w`;
    /// a test names only the fields it is about.
    pub(crate) fn example() -> ApprovalRequest {
        ApprovalRequest {
            call_id: "c".into(),
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
        }
    }
}

/// Whether `id` is short and plain enough to be an id (a call id, a broker's id, a
/// session id): 1 to 128 letters, digits or `._:@+-`. Ids appear in messages, on
/// command lines and in file names, so nothing else is one. A session id from the
/// configuration (`GATE_SESSION`, `--session`: `config::check_session`) follows the
/// same rule, since it goes into every request.
pub fn is_plain_id(id: &str) -> bool {
    (1..=128).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._:@+-".contains(&b))
}

/// Ids are short and plain: they appear in messages and on command lines.
fn check_id(key: &str, id: &str) -> Result<(), ProtocolError> {
    if is_plain_id(id) {
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
mod tests;
