//! The approver tools: `gate pending`, `gate approve`, `gate deny`, and [`Client`], the
//! connection to the broker that they and `gate watch` use.
//!
//! A client checks the broker before it trusts it: the socket must be this user's and
//! closed to others, and the process listening on it must run as this user, without
//! no_new_privs. Only then does it read the token file beside the socket and say hello
//! with it. A process that cannot read the token (another user, a command in the
//! safe-level sandbox) cannot approve anything; nor can one with no_new_privs (every
//! command gate runs, at every level): the tools refuse to start with it, and the broker
//! refuses it whatever token it sends.

use std::collections::VecDeque;
use std::io::{self, Read};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::socket::{MsgFlags, getsockopt, send, sockopt};

use super::paths::{check_private, token_path};
use super::protocol::{
    Answer, ApproverMessage, Ask, BrokerReply, Decision, MAX_BROKER_LINE, Settle,
};
use super::wire::{Waited, wait_readable};
use crate::output::{GATE_ERROR, print_out, say};

pub use super::protocol::PendingRequest;

/// How long the broker may take to reply before the client gives up.
const REPLY_WITHIN: Duration = Duration::from_secs(30);

/// Exit status of `gate approve` / `gate deny` when the request was already settled.
pub const ALREADY_SETTLED: i32 = 3;
/// Exit status of `gate approve` / `gate deny` when no such request was ever opened.
pub const NOT_FOUND: i32 = 4;

/// What a watching client hears from the broker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchEvent {
    /// A request is open (sent for every open request when watching starts, and for
    /// each new one after that).
    Request(PendingRequest),
    /// A request closed. `how`: approved, denied, answered, declined, requester_gone,
    /// protocol_error or broker_stopped.
    Settled { id: String, how: String },
    /// The broker closed the connection (it stopped).
    Closed,
}

/// An authenticated connection to the broker.
pub struct Client {
    stream: UnixStream,
    /// Bytes received and not yet read as lines.
    input: Vec<u8>,
    /// Events that arrived while waiting for a reply.
    events: VecDeque<WatchEvent>,
    watching: bool,
    closed: bool,
}

/// What waiting for one line from the broker came to.
enum Incoming {
    Line(Vec<u8>),
    Eof,
    Timeout,
    Interrupted,
}

impl Client {
    /// Connect to the broker on `socket`, check that it is this user's, and say hello
    /// with the token from the token file beside it.
    pub fn connect(socket: &Path) -> Result<Client, String> {
        let shown = socket.display();
        let meta = match std::fs::symlink_metadata(socket) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(format!(
                    "no broker is listening on {shown}: start one with `gate serve` (or name its socket with --socket or GATE_SOCKET)"
                ));
            }
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                return Err(format!(
                    "cannot reach the broker's socket {shown}: {e}; only the broker's user, outside the sandbox, can approve"
                ));
            }
            Err(e) => return Err(format!("cannot inspect {shown}: {e}")),
        };
        if !meta.file_type().is_socket() {
            return Err(format!(
                "{shown} is not a socket, so no broker listens there"
            ));
        }
        check_private(socket, false).map_err(|e| format!("not trusting the socket: {e}"))?;
        let stream = match UnixStream::connect(socket) {
            Ok(s) => s,
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
                return Err(format!(
                    "no broker is listening on {shown} (the socket was left by one that stopped): start one with `gate serve`"
                ));
            }
            Err(e) => return Err(format!("cannot connect to the broker on {shown}: {e}")),
        };
        let uid = nix::unistd::geteuid().as_raw();
        let peer = getsockopt(&stream, sockopt::PeerCredentials)
            .map_err(|e| format!("cannot identify the process listening on {shown}: {e}"))?;
        if peer.uid() != uid {
            return Err(format!(
                "the process listening on {shown} runs as uid {}, not as you (uid {uid}); not sending it the token",
                peer.uid()
            ));
        }
        check_broker(&stream, socket)?;
        let token = read_token(socket)?;
        stream
            .set_nonblocking(true)
            .map_err(|e| format!("cannot use the connection to the broker: {e}"))?;
        let mut client = Client {
            stream,
            input: Vec::new(),
            events: VecDeque::new(),
            watching: false,
            closed: false,
        };
        client.send(&ApproverMessage::Hello { token }.encode())?;
        match client.reply()? {
            BrokerReply::Welcome => Ok(client),
            BrokerReply::Error { message } => {
                Err(format!("the broker refused this approver: {message}"))
            }
            other => Err(unexpected(&other)),
        }
    }

    /// The requests waiting now, oldest first.
    pub fn list(&mut self) -> Result<Vec<PendingRequest>, String> {
        self.send(&ApproverMessage::List.encode())?;
        let count = match self.reply()? {
            BrokerReply::Pending { count } => count,
            BrokerReply::Error { message } => return Err(format!("the broker: {message}")),
            other => return Err(unexpected(&other)),
        };
        let mut list = Vec::new();
        for _ in 0..count {
            match self.raw_reply()? {
                BrokerReply::Request(p) => list.push(p),
                other => return Err(unexpected(&other)),
            }
        }
        Ok(list)
    }

    /// Answer the approval request `id`. An `Err` is a refusal from the broker (the
    /// request is a question, the rule is not valid) or a broken connection.
    pub fn decide(&mut self, id: &str, decision: Decision) -> Result<Settle, String> {
        self.send(
            &ApproverMessage::Decide {
                id: id.to_owned(),
                decision,
            }
            .encode(),
        )?;
        self.result(id)
    }

    /// Answer the question `id`.
    pub fn answer(&mut self, id: &str, answer: Answer) -> Result<Settle, String> {
        self.send(
            &ApproverMessage::Answer {
                id: id.to_owned(),
                answer,
            }
            .encode(),
        )?;
        self.result(id)
    }

    /// Start watching: from now on [`Client::next_event`] yields every open request,
    /// then each new one, and each request that closes.
    pub fn watch(&mut self) -> Result<(), String> {
        self.send(&ApproverMessage::Watch.encode())?;
        self.watching = true;
        Ok(())
    }

    /// The next event, waiting until `deadline` (none: for ever) or until `interrupt`
    /// is readable; `None` when either comes first.
    pub fn next_event(
        &mut self,
        deadline: Option<Instant>,
        interrupt: Option<BorrowedFd<'_>>,
    ) -> Result<Option<WatchEvent>, String> {
        if let Some(event) = self.events.pop_front() {
            return Ok(Some(event));
        }
        if self.closed {
            return Ok(Some(WatchEvent::Closed));
        }
        match self.read_line(deadline, interrupt)? {
            Incoming::Timeout | Incoming::Interrupted => Ok(None),
            Incoming::Eof => {
                self.closed = true;
                Ok(Some(WatchEvent::Closed))
            }
            Incoming::Line(line) => {
                let reply = BrokerReply::decode(&line)
                    .map_err(|e| format!("protocol error from the broker: {e}"))?;
                match sort(reply) {
                    Sorted::Event(event) => Ok(Some(event)),
                    Sorted::Reply(other) => Err(unexpected(&other)),
                }
            }
        }
    }

    /// Whether the broker closed the connection.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Whether [`Client::next_event`] has something without waiting: poll [`Client::fd`]
    /// only when this is false.
    pub fn has_buffered_event(&self) -> bool {
        !self.events.is_empty() || self.closed || self.input.contains(&b'\n')
    }

    /// The connection, to wait on together with other descriptors.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.stream.as_fd()
    }

    // -----------------------------------------------------------------------------------

    fn result(&mut self, id: &str) -> Result<Settle, String> {
        match self.reply()? {
            BrokerReply::Result { id: got, settle } if got == id => Ok(settle),
            BrokerReply::Error { message } => Err(message),
            other => Err(unexpected(&other)),
        }
    }

    /// The next reply that is not an event; events are kept for `next_event`.
    fn reply(&mut self) -> Result<BrokerReply, String> {
        loop {
            let reply = self.raw_reply()?;
            match sort(reply) {
                Sorted::Event(event) if self.watching => self.events.push_back(event),
                Sorted::Event(_) => {
                    return Err("protocol error: the broker sent an event unasked".into());
                }
                Sorted::Reply(reply) => return Ok(reply),
            }
        }
    }

    /// The next line from the broker, decoded, within [`REPLY_WITHIN`].
    fn raw_reply(&mut self) -> Result<BrokerReply, String> {
        let deadline = Instant::now() + REPLY_WITHIN;
        match self.read_line(Some(deadline), None)? {
            Incoming::Line(line) => BrokerReply::decode(&line)
                .map_err(|e| format!("protocol error from the broker: {e}")),
            Incoming::Eof => {
                self.closed = true;
                Err("the broker closed the connection (it may have stopped)".into())
            }
            Incoming::Timeout => Err(format!(
                "the broker did not reply within {}s",
                REPLY_WITHIN.as_secs()
            )),
            Incoming::Interrupted => Err("interrupted".into()),
        }
    }

    fn read_line(
        &mut self,
        deadline: Option<Instant>,
        interrupt: Option<BorrowedFd<'_>>,
    ) -> Result<Incoming, String> {
        loop {
            if let Some(end) = self.input.iter().position(|&b| b == b'\n') {
                if end + 1 > MAX_BROKER_LINE {
                    return Err(too_long());
                }
                let mut line: Vec<u8> = self.input.drain(..=end).collect();
                line.pop();
                return Ok(Incoming::Line(line));
            }
            if self.input.len() >= MAX_BROKER_LINE {
                return Err(too_long());
            }
            if self.closed {
                return Ok(Incoming::Eof);
            }
            match wait_readable(self.stream.as_fd(), deadline, interrupt) {
                Ok(Waited::Ready) => {}
                Ok(Waited::Timeout) => return Ok(Incoming::Timeout),
                Ok(Waited::Interrupted) => return Ok(Incoming::Interrupted),
                Err(e) => return Err(format!("cannot wait for the broker: {e}")),
            }
            if !self.receive()? {
                self.closed = true;
            }
        }
    }

    /// Read what has arrived into the input buffer; false at end of stream.
    fn receive(&mut self) -> Result<bool, String> {
        let mut chunk = [0u8; 16 * 1024];
        loop {
            match (&self.stream).read(&mut chunk) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    self.input.extend_from_slice(&chunk[..n]);
                    return Ok(true);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(true),
                Err(e) if e.kind() == io::ErrorKind::ConnectionReset => return Ok(false),
                Err(e) => return Err(format!("cannot read from the broker: {e}")),
            }
        }
    }

    /// Send a whole message. While the socket is full, whatever the broker sends is
    /// read and kept, so that neither side waits for the other for ever.
    fn send(&mut self, bytes: &[u8]) -> Result<(), String> {
        let deadline = Instant::now() + REPLY_WITHIN;
        let mut sent = 0;
        while sent < bytes.len() {
            match send(
                self.stream.as_raw_fd(),
                &bytes[sent..],
                MsgFlags::MSG_NOSIGNAL | MsgFlags::MSG_DONTWAIT,
            ) {
                Ok(n) => sent += n,
                Err(Errno::EINTR) => {}
                Err(Errno::EAGAIN) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err("the broker stopped reading".into());
                    }
                    let ms = (left.as_millis() + 1).min(60_000) as u64;
                    let mut fds = [PollFd::new(
                        self.stream.as_fd(),
                        PollFlags::POLLOUT | PollFlags::POLLIN,
                    )];
                    match poll(
                        &mut fds,
                        PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX),
                    ) {
                        Ok(_) | Err(Errno::EINTR) => {}
                        Err(e) => return Err(format!("cannot wait for the broker: {e}")),
                    }
                    let readable = fds[0]
                        .revents()
                        .is_some_and(|r| r.contains(PollFlags::POLLIN));
                    if readable && !self.closed && !self.receive()? {
                        self.closed = true;
                    }
                }
                Err(Errno::EPIPE | Errno::ECONNRESET) => {
                    return Err("the broker closed the connection (it may have stopped)".into());
                }
                Err(e) => return Err(format!("cannot write to the broker: {e}")),
            }
        }
        Ok(())
    }
}

fn too_long() -> String {
    format!("protocol error: the broker sent a line longer than {MAX_BROKER_LINE} bytes")
}

/// A line from the broker: an event, or a reply to what the client sent.
enum Sorted {
    Event(WatchEvent),
    Reply(BrokerReply),
}

fn sort(reply: BrokerReply) -> Sorted {
    match reply {
        BrokerReply::Request(p) => Sorted::Event(WatchEvent::Request(p)),
        BrokerReply::Settled { id, how, .. } => Sorted::Event(WatchEvent::Settled { id, how }),
        other => Sorted::Reply(other),
    }
}

fn unexpected(reply: &BrokerReply) -> String {
    let what = match reply {
        BrokerReply::Welcome => "welcome",
        BrokerReply::Error { .. } => "error",
        BrokerReply::Pending { .. } => "pending",
        BrokerReply::Request(_) => "request",
        BrokerReply::Settled { .. } => "settled",
        BrokerReply::Result { .. } => "result",
    };
    format!("protocol error: the broker sent an unexpected `{what}` message")
}

/// The process listening on the socket must not carry the mark of a command gate ran
/// ([`super::peer`]): that is not the broker a person started, and it must not be sent the
/// token.
fn check_broker(stream: &UnixStream, socket: &Path) -> Result<(), String> {
    let shown = socket.display();
    match super::peer::identify(stream.as_fd()) {
        Ok(super::peer::Peer::Unmarked { .. }) => Ok(()),
        Ok(super::peer::Peer::Marked { pid }) => Err(format!(
            "the process listening on {shown} (pid {pid}) runs with no_new_privs (a command \
             gate ran, or a sandbox, started it): it is not a broker to trust; not sending it \
             the token"
        )),
        Err(why) => Err(format!(
            "the process listening on {shown} cannot be checked ({why}); not sending it the token"
        )),
    }
}

/// The broker's token, from the file beside its socket. It must be this user's and
/// private.
fn read_token(socket: &Path) -> Result<String, String> {
    let path = token_path(socket);
    let cannot = |why: String| {
        format!(
            "cannot read the broker's token {}: {why}; only the broker's user, outside the sandbox, can approve",
            path.display()
        )
    };
    let meta = std::fs::symlink_metadata(&path).map_err(|e| cannot(e.to_string()))?;
    if !meta.file_type().is_file() {
        return Err(cannot("it is not a regular file".into()));
    }
    check_private(&path, false).map_err(cannot)?;
    let text = std::fs::read_to_string(&path).map_err(|e| cannot(e.to_string()))?;
    let token = text.strip_suffix('\n').unwrap_or(&text);
    if token.len() != 64 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!(
            "the broker's token {} is malformed; restart `gate serve`",
            path.display()
        ));
    }
    Ok(token.to_owned())
}

// ---------------------------------------------------------------------------------------
// gate pending / approve / deny

/// The broker's client for the approver tool `tool`: refused first when this process
/// descends from a command gate ran ([`super::peer::refuse_if_marked`]), then connected;
/// `Err` is the exit status, the reason already said.
fn approver_client(tool: &str, socket: &Path) -> Result<Client, i32> {
    if let Some(code) = super::peer::refuse_if_marked(tool) {
        return Err(code);
    }
    connect_or_say(socket)
}

fn connect_or_say(socket: &Path) -> Result<Client, i32> {
    Client::connect(socket).map_err(|e| {
        say(&format!("gate: {e}"));
        GATE_ERROR
    })
}

/// `gate pending [--json]`: the requests waiting in the broker.
pub fn pending(socket: &Path, json: bool) -> i32 {
    let mut client = match approver_client("pending", socket) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let list = match client.list() {
        Ok(list) => list,
        Err(e) => {
            say(&format!("gate: {e}"));
            return GATE_ERROR;
        }
    };
    let text = if json {
        let items: Vec<serde_json::Value> = list
            .iter()
            .map(|p| serde_json::Value::Object(p.to_json()))
            .collect();
        format!("{}\n", serde_json::Value::Array(items))
    } else {
        table(&list)
    };
    print_out(&text)
}

/// The readable listing: one row per request, every field escaped.
fn table(list: &[PendingRequest]) -> String {
    if list.is_empty() {
        return "no requests are waiting\n".into();
    }
    let rows: Vec<[String; 5]> = list
        .iter()
        .map(|p| {
            let (dir, what) = match &p.ask {
                Ask::Approval(r) if r.leaves_sandbox => (
                    tail(&escape(&r.work_dir), 40),
                    format!("(outside the sandbox) {}", escape(&r.command)),
                ),
                Ask::Approval(r) => (tail(&escape(&r.work_dir), 40), escape(&r.command)),
                Ask::Question(q) => {
                    let mut what = format!("question: {}", escape(&q.question));
                    if !q.options.is_empty() {
                        let options: Vec<String> = q.options.iter().map(|o| escape(o)).collect();
                        what.push_str(&format!(
                            " [{}{}]",
                            options.join(" | "),
                            if q.allow_multiple { "; several" } else { "" }
                        ));
                    }
                    ("-".to_owned(), what)
                }
            };
            [
                p.id.clone(),
                age(p.age_seconds),
                tail(&escape(p.ask.session_id()), 24),
                dir,
                what,
            ]
        })
        .collect();
    let header = ["ID", "AGE", "SESSION", "DIRECTORY", "COMMAND/QUESTION"];
    let mut widths = header.map(|h| h.chars().count());
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut push = |cells: [&str; 5]| {
        let mut line = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i == 4 {
                line.push_str(cell);
            } else {
                let pad = widths[i] - cell.chars().count();
                line.push_str(cell);
                line.push_str(&" ".repeat(pad + 2));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    };
    push(header);
    for row in &rows {
        push([&row[0], &row[1], &row[2], &row[3], &row[4]]);
    }
    out
}

/// Text safe for a terminal, escaped exactly as `gate watch` and the terminal prompt show
/// it (control characters, bidi controls, zero-width characters), so that a listed
/// command cannot read differently from what will run; long text cut.
fn escape(text: &str) -> String {
    super::tty::one_row(text, SHOWN_CHARS)
}

/// The most characters one field of the listing shows.
const SHOWN_CHARS: usize = 200;

/// The end of `text` in at most `max` characters, `…` marking a cut.
fn tail(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    let kept: String = text.chars().skip(count - (max - 1)).collect();
    format!("…{kept}")
}

fn age(seconds: u64) -> String {
    match seconds {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m{:02}s", s / 60, s % 60),
        s => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// Print what an answer came to, and exit 0, 3 or 4.
fn report(settle: Settle) -> i32 {
    let (word, status) = match settle {
        Settle::Answered => ("answered", 0),
        Settle::AlreadySettled => ("already settled", ALREADY_SETTLED),
        Settle::NotFound => ("not found", NOT_FOUND),
    };
    match print_out(&format!("{word}\n")) {
        0 => status,
        code => code,
    }
}

fn settled_or_say(result: Result<Settle, String>) -> i32 {
    match result {
        Ok(settle) => report(settle),
        Err(e) => {
            say(&format!("gate: {e}"));
            GATE_ERROR
        }
    }
}

/// What `gate approve` asks for beyond this one run.
#[derive(Debug, Clone, Copy, Default)]
pub struct Keep<'a> {
    /// `--remember`: the same command for the rest of the session.
    pub remember: bool,
    /// `--remember-rule RULE`: an allow rule for the rest of the session.
    pub remember_rule: Option<&'a str>,
    /// `--always`: a lasting exact rule for the command.
    pub always: bool,
    /// `--always-rule RULE`: a lasting prefix rule.
    pub always_rule: Option<&'a str>,
}

/// `gate approve ID [--remember] [--remember-rule RULE] [--always | --always-rule RULE]`:
/// ID is the request's short id (`gate pending`) or its call id (`gate pending --json`,
/// the protocol).
pub fn approve(socket: &Path, id: &str, keep: Keep<'_>) -> i32 {
    if let Some(code) = super::peer::refuse_if_marked("approve") {
        return code;
    }
    let valid =
        |option: &str, rule: Option<&str>| match rule.map(crate::policy::validate_rule).transpose()
        {
            Ok(rule) => Ok(rule.map(str::to_owned)),
            Err(e) => {
                say(&format!(
                    "gate: {option}: not a valid allow rule: {e}; nothing was approved"
                ));
                Err(GATE_ERROR)
            }
        };
    let rule = match valid("--remember-rule", keep.remember_rule) {
        Ok(rule) => rule,
        Err(code) => return code,
    };
    let always = match (keep.always, valid("--always-rule", keep.always_rule)) {
        (_, Err(code)) => return code,
        (true, Ok(Some(_))) => {
            say(
                "gate: --always and --always-rule cannot go together: the lasting rule is the \
                 exact command, or the prefix you name; nothing was approved",
            );
            return GATE_ERROR;
        }
        (true, Ok(None)) => Some(super::protocol::Lasting::Exact),
        (false, Ok(Some(prefix))) => Some(super::protocol::Lasting::Prefix(prefix)),
        (false, Ok(None)) => None,
    };
    let remember = keep.remember;
    let mut client = match connect_or_say(socket) {
        Ok(c) => c,
        Err(code) => return code,
    };
    settled_or_say(client.decide(
        id,
        Decision::Approve {
            remember,
            remember_rule: rule,
            always,
            kept: false,
            source: Some("gate approve".into()),
        },
    ))
}

/// Whether `id`, as an approver tool was given it, names `request`: its short id when
/// `id` is all digits, else its call id (the broker's rule).
fn names(request: &PendingRequest, id: &str) -> bool {
    if super::protocol::is_short_id(id) {
        request.id == id
    } else {
        request.ask.call_id() == id
    }
}

/// `gate deny ID [--message TEXT]`: ID is the short id or the call id. A question is
/// declined, with the message.
pub fn deny(socket: &Path, id: &str, message: Option<&str>) -> i32 {
    let mut client = match approver_client("deny", socket) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let is_question = match client.list() {
        Ok(list) => list
            .iter()
            .any(|p| names(p, id) && matches!(p.ask, Ask::Question(_))),
        Err(e) => {
            say(&format!("gate: {e}"));
            return GATE_ERROR;
        }
    };
    let message = message.map(str::to_owned);
    let result = if is_question {
        client.answer(id, Answer::Declined { message })
    } else {
        client.decide(
            id,
            Decision::Deny {
                message,
                source: Some("gate deny".into()),
            },
        )
    };
    settled_or_say(result)
}

#[cfg(test)]
mod tests;
