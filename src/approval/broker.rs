//! The broker, `gate serve`: it holds approval requests and questions for people, and
//! lets the approver tools (`gate pending`, `approve`, `deny`, `watch`) answer them.
//!
//! One thread serves every peer with `poll` over nonblocking sockets. Requesters (gates
//! at `ask`, `gate ask`) connect, send one request line and wait for one answer line;
//! approver tools connect, say `hello` with the token from the token file beside the
//! socket, and then list, watch and answer. Only this user's processes may connect at
//! all (`SO_PEERCRED`), and only those that can read the token file may answer: the
//! safe-level sandbox cannot, so a sandboxed command can ask but never approve. Nor can
//! any process with no_new_privs, whatever token it holds: every command gate runs
//! carries it, at every level ([`super::peer`]), so commands can ask but never answer.
//!
//! Each request gets a short id (`1`, `2`, …) that is never reused while the broker
//! runs; an approver names a request by it, or by the request's own `call_id` (any id
//! that is not all digits). The first answer settles it; a later one is told `already_settled`, and so is
//! an answer to a request whose requester went away. Approvals remembered for a session
//! live here, in memory and nowhere else (gate keeps no file of them: a command could
//! write it), and the broker answers the session's later matching requests itself. A
//! remembered approval settles only waiting copies of the text answered; other waiting
//! requests wait for an answer of their own. When it
//! is stopped (SIGTERM, SIGINT, SIGHUP, SIGQUIT) it denies everything still open
//! ("broker stopped") before it exits.
//!
//! Why one thread and `poll`: measured with bench/broker.sh, a broker with 1,000
//! requests waiting has an RSS of 3.0 MB, against 16 MB for a bare thread-per-connection
//! model that does nothing but hold them (bench/broker-threads.rs); and with every
//! request and answer handled in one place, "the first answer wins" needs no lock. The
//! price is a `poll` over every connection on each wake-up (about 0.1 ms at 1,000), so
//! a round trip takes 0.2 ms with nothing else waiting and 0.7 ms with 1,000 waiting.
//!
//! This file owns the loop: the connections, reading and writing them, the deadlines,
//! and stopping. Beside it, one concern each: `endpoint` (the sockets, the token, the
//! lock), `requests` (what a connection asks, and settling a request once), `answers`
//! (what an approver may say, and what an approval does) and `gone` (a requester that
//! went away unanswered: why, and its audit record). None of them blocks: everything
//! runs on the loop's one thread.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{self, Read};
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{SigSet, Signal};
use nix::sys::socket::{MsgFlags, getsockopt, send, sockopt};

use super::protocol::{Answer, ApprovalRequest, Ask, BrokerReply, Decision, MAX_LINE};
use super::signals::Interrupts;
use crate::config::Settings;
use crate::output::{GATE_ERROR, say};
use crate::policy::Remembered;

mod answers;
mod endpoint;
mod gone;
mod requests;

use endpoint::{Endpoint, RequestsEndpoint};
use gone::{GONE_GRACE, gone_why};
use requests::{Lookup, RecentCalls};

/// The most connections the broker keeps open at once; more are closed as they come.
pub const MAX_CONNECTIONS: usize = 4096;

/// How long a new connection has to send its first line.
const FIRST_LINE_WITHIN: Duration = Duration::from_secs(10);

/// How long a stopping broker tries to deliver its last answers.
const FLUSH_WITHIN: Duration = Duration::from_secs(3);

/// An approver's next message is read only when less than this much of the replies to
/// its earlier ones is still waiting to be sent.
const READ_PAUSE_AT: usize = 1 << 20;

/// A watching approver that lets this much of the broker's news pile up unread is
/// disconnected.
const WATCH_BACKLOG_LIMIT: usize = 64 << 20;

/// Who answered, when an approver tool does not say.
const DEFAULT_SOURCE: &str = "approver";

/// Who answered a waiting copy of a command just always allowed.
pub const ALWAYS_SOURCE: &str = "always-allow";

/// Run the broker on `socket` until a signal stops it. 0 after a signal, 125 when it
/// cannot start (the reason on stderr).
pub fn serve(socket: &Path, requests_socket: Option<&Path>, settings: &Settings) -> i32 {
    if let Some(code) = super::peer::refuse_if_marked("serve") {
        return code;
    }
    // A peer that closes its end must not kill the broker: with SIGPIPE blocked a write
    // to it fails with EPIPE instead (sockets are written with MSG_NOSIGNAL anyway; this
    // covers stderr).
    let _ = SigSet::from(Signal::SIGPIPE).thread_block();
    let interrupts = match Interrupts::block() {
        Ok(i) => i,
        Err(e) => return fail(&e),
    };
    let max_conns = raise_descriptor_limit();
    let endpoint = match Endpoint::open(socket) {
        Ok(e) => e,
        Err(e) => return fail(&e),
    };
    let requests = match requests_socket.map(RequestsEndpoint::open).transpose() {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    log(&format!(
        "listening on {} (pid {}); approvers read the token in {}; stop with Ctrl-C or SIGTERM",
        endpoint.socket.display(),
        std::process::id(),
        endpoint.token_path.display()
    ));
    if let Some(r) = &requests {
        log(&format!(
            "taking requests (never answers) from every user on {}",
            r.socket.display()
        ));
    }
    let broker = Broker {
        uid: nix::unistd::geteuid().as_raw(),
        endpoint,
        requests,
        interrupts,
        conns: HashMap::new(),
        next_conn: 0,
        open: BTreeMap::new(),
        by_call: HashMap::new(),
        settled_calls: RecentCalls::default(),
        next_id: 1,
        remembered: HashMap::new(),
        always_file: settings.always_file.clone(),
        locked_by: settings.locked_by.clone(),
        max_conns,
        newcomers: BTreeSet::new(),
        watchers: BTreeSet::new(),
        check: Vec::new(),
        accept_paused_until: None,
        last_refusal_log: None,
        scratch: vec![0; 64 * 1024],
        audit_log: crate::audit::resolve_path(&settings.audit_log, &|n| std::env::var_os(n))
            .ok()
            .flatten(),
        gone: Vec::new(),
    };
    broker.run()
}

fn fail(message: &str) -> i32 {
    say(&format!("gate: serve: {message}"));
    GATE_ERROR
}

/// One line on stderr about what happened.
fn log(line: &str) {
    say(&format!("gate serve: {line}"));
}

/// Text a peer sent, safe to print: escaped as `gate watch` and `gate pending` show it
/// (controls, bidi controls, zero-width characters), long text cut.
fn shown(text: &str) -> String {
    super::tty::one_row(text, SHOWN_CHARS)
}

/// The most characters of a peer's text one log line shows.
const SHOWN_CHARS: usize = 200;

/// Raise the soft limit on open descriptors so that [`MAX_CONNECTIONS`] fit (the usual
/// soft limit, 1024, would stop at about a thousand waiting requests), and return how
/// many connections the limit allows.
fn raise_descriptor_limit() -> usize {
    // Descriptors besides connections: stdio, listener, signalfd, lock, and slack.
    const OTHERS: u64 = 64;
    let want = MAX_CONNECTIONS as u64 + OTHERS;
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let Ok((mut soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        return 1024 - OTHERS as usize;
    };
    if soft < want && hard > soft {
        // Raising the soft limit up to the hard one needs no privilege.
        let raised = want.min(hard);
        if setrlimit(Resource::RLIMIT_NOFILE, raised, hard).is_ok() {
            soft = raised;
        }
    }
    let usable = soft.saturating_sub(OTHERS).max(16);
    usize::try_from(usable)
        .unwrap_or(MAX_CONNECTIONS)
        .min(MAX_CONNECTIONS)
}

// ---------------------------------------------------------------------------------------
// The loop.

/// One connection and what it is for.
struct Conn {
    stream: UnixStream,
    pid: i32,
    /// Its user, when not the broker's (only on the requests socket).
    other_uid: Option<u32>,
    /// It came through the requests socket: it may send a request, never a hello.
    requests_only: bool,
    state: State,
    /// Bytes received and not yet handled (at most one line).
    input: Vec<u8>,
    /// Bytes to send; `output[sent..]` is what is left.
    output: Vec<u8>,
    sent: usize,
    /// A new connection must send its first line by then.
    first_line_by: Option<Instant>,
    /// Close it now, whatever is left to send.
    dead: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Connected; its first line says what it is.
    New,
    /// A requester whose request `id` is open.
    Requester { id: u64 },
    /// An approver tool that said hello with the right token (watching when its key
    /// is in `Broker::watchers`).
    Approver,
    /// Finished: close once the output is sent.
    Closing,
}

impl Conn {
    fn unsent(&self) -> usize {
        self.output.len() - self.sent
    }

    fn interest(&self) -> PollFlags {
        let mut flags = PollFlags::empty();
        match self.state {
            State::New | State::Requester { .. } => flags |= PollFlags::POLLIN,
            State::Approver if self.unsent() < READ_PAUSE_AT => flags |= PollFlags::POLLIN,
            State::Approver | State::Closing => {}
        }
        if self.unsent() > 0 {
            flags |= PollFlags::POLLOUT;
        }
        flags
    }

    /// Send what the socket takes now. A failed send means the peer is gone.
    fn flush(&mut self) {
        while self.sent < self.output.len() {
            match send(
                self.stream.as_raw_fd(),
                &self.output[self.sent..],
                MsgFlags::MSG_NOSIGNAL | MsgFlags::MSG_DONTWAIT,
            ) {
                Ok(n) => self.sent += n,
                Err(Errno::EINTR) => {}
                Err(Errno::EAGAIN) => return,
                Err(_) => {
                    self.dead = true;
                    self.output = Vec::new();
                    self.sent = 0;
                    return;
                }
            }
        }
        if self.output.capacity() > 64 * 1024 {
            self.output = Vec::new();
        } else {
            self.output.clear();
        }
        self.sent = 0;
    }

    /// Whether it can be closed now.
    fn finished(&self) -> bool {
        self.dead || (self.state == State::Closing && self.unsent() == 0)
    }
}

/// An open request.
struct Open {
    ask: Ask,
    conn: u64,
    since: Instant,
}

struct Broker {
    uid: u32,
    endpoint: Endpoint,
    requests: Option<RequestsEndpoint>,
    interrupts: Interrupts,
    conns: HashMap<u64, Conn>,
    next_conn: u64,
    /// Open requests by id.
    open: BTreeMap<u64, Open>,
    /// The ids of open requests by call id.
    by_call: HashMap<String, u64>,
    /// The call ids of the requests settled last, so that an answer naming one by its
    /// call id hears `already_settled`, as one naming its short id does.
    settled_calls: RecentCalls,
    /// The next request id; every smaller one was given out.
    next_id: u64,
    /// Remembered approvals by session id.
    remembered: HashMap<String, Remembered>,
    /// The always-allow file this broker adds lasting approvals to: its user's, beside
    /// the user file it read (`None`: it read another user file, or none).
    always_file: Option<PathBuf>,
    /// The file that locks this broker's configuration, which forbids lasting rules.
    locked_by: Option<std::sync::Arc<Path>>,
    max_conns: usize,
    /// Connections that have not sent their first line, by the time they must.
    newcomers: BTreeSet<(Instant, u64)>,
    /// Approver connections that watch.
    watchers: BTreeSet<u64>,
    /// Connections that may be finished: looked at by `reap`, so that the loop never
    /// scans them all.
    check: Vec<u64>,
    /// Out of descriptors: accept again after this.
    accept_paused_until: Option<Instant>,
    /// Refused connections are logged at most once a second.
    last_refusal_log: Option<Instant>,
    scratch: Vec<u8>,
    /// The audit log the requesters write to (the same settings), for the record of a
    /// requester that went away before its answer.
    audit_log: Option<PathBuf>,
    /// Requests whose requester went away unanswered, and when to look whether it
    /// recorded that itself (see [`Broker::record_gone`]).
    gone: Vec<(Instant, ApprovalRequest)>,
}

impl Broker {
    fn run(mut self) -> i32 {
        loop {
            let now = Instant::now();
            self.expire_first_lines(now);
            self.reap();
            self.record_gone(now);
            let accepting = self.accept_paused_until.is_none_or(|t| now >= t);
            if accepting {
                self.accept_paused_until = None;
            }
            let wake = self
                .newcomers
                .first()
                .map(|(at, _)| *at)
                .into_iter()
                .chain(self.accept_paused_until)
                .chain(self.gone.iter().map(|(at, _)| *at))
                .min();
            let timeout = match wake {
                None => PollTimeout::NONE,
                Some(at) => {
                    let ms = at.saturating_duration_since(now).as_millis() + 1;
                    PollTimeout::try_from(ms.min(60_000) as u64).unwrap_or(PollTimeout::MAX)
                }
            };
            let polled = {
                let mut fds = Vec::with_capacity(self.conns.len() + 2);
                let mut keys = Vec::with_capacity(self.conns.len());
                fds.push(PollFd::new(self.interrupts.fd(), PollFlags::POLLIN));
                if accepting {
                    fds.push(PollFd::new(
                        self.endpoint.listener.as_fd(),
                        PollFlags::POLLIN,
                    ));
                    if let Some(r) = &self.requests {
                        fds.push(PollFd::new(r.listener.as_fd(), PollFlags::POLLIN));
                    }
                }
                for (key, conn) in &self.conns {
                    fds.push(PollFd::new(conn.stream.as_fd(), conn.interest()));
                    keys.push(*key);
                }
                match poll(&mut fds, timeout) {
                    Err(e) => Err(e),
                    Ok(_) => {
                        let fired = |p: &PollFd<'_>| p.revents().unwrap_or(PollFlags::empty());
                        let listeners = if !accepting {
                            0
                        } else if self.requests.is_some() {
                            2
                        } else {
                            1
                        };
                        let first_conn = 1 + listeners;
                        let ready: Vec<(u64, PollFlags)> = fds[first_conn..]
                            .iter()
                            .zip(&keys)
                            .filter_map(|(p, key)| {
                                let r = fired(p);
                                (!r.is_empty()).then_some((*key, r))
                            })
                            .collect();
                        Ok((
                            !fired(&fds[0]).is_empty(),
                            listeners >= 1 && !fired(&fds[1]).is_empty(),
                            listeners == 2 && !fired(&fds[2]).is_empty(),
                            ready,
                        ))
                    }
                }
            };
            let (signalled, listener_ready, requests_ready, ready) = match polled {
                Ok(p) => p,
                Err(Errno::EINTR) => continue,
                Err(e) => {
                    log(&format!("cannot wait for connections: {e}; stopping"));
                    return self.stop("an error", GATE_ERROR);
                }
            };
            if signalled {
                if let Some(signal) = self.interrupts.take() {
                    return self.stop(signal.as_str(), 0);
                }
            }
            for (key, revents) in ready {
                self.service(key, revents);
            }
            if listener_ready {
                self.accept(false);
            }
            if requests_ready {
                self.accept(true);
            }
        }
    }

    /// Close connections that are done.
    fn reap(&mut self) {
        // Closing one can finish others (a request settled tells the watchers).
        while !self.check.is_empty() {
            for key in std::mem::take(&mut self.check) {
                if self.conns.get(&key).is_some_and(Conn::finished) {
                    self.close(key);
                }
            }
        }
    }

    /// Close a connection now; an open request it made is settled.
    fn close(&mut self, key: u64) {
        let Some(conn) = self.conns.remove(&key) else {
            return;
        };
        if let Some(at) = conn.first_line_by {
            self.newcomers.remove(&(at, key));
        }
        self.watchers.remove(&key);
        if let State::Requester { id } = conn.state {
            let waited = self.open.get(&id).map(|open| {
                (
                    open.since.elapsed(),
                    Duration::from_secs(open.ask.timeout_seconds()),
                )
            });
            log(&format!("request {id}: {}", gone_why(waited)));
            if let Some(Open {
                ask: Ask::Approval(request),
                ..
            }) = self.open.get(&id)
            {
                self.gone
                    .push((Instant::now() + GONE_GRACE, request.clone()));
            }
            self.settle(id, "requester_gone", None, None);
        }
    }

    fn expire_first_lines(&mut self, now: Instant) {
        while let Some(&(at, key)) = self.newcomers.first() {
            if at > now {
                return;
            }
            self.newcomers.pop_first();
            if let Some(conn) = self.conns.get_mut(&key) {
                log(&format!(
                    "pid {} sent nothing within {}s of connecting; closed",
                    conn.pid,
                    FIRST_LINE_WITHIN.as_secs()
                ));
                conn.first_line_by = None;
                conn.dead = true;
                self.check.push(key);
            }
        }
    }

    /// Accept on the broker's socket, or (`requests_only`) on the requests socket.
    fn accept(&mut self, requests_only: bool) {
        // A batch at a time, so that a flood of connections cannot starve the others.
        for _ in 0..64 {
            let listener = match (&self.requests, requests_only) {
                (Some(r), true) => &r.listener,
                _ => &self.endpoint.listener,
            };
            let stream = match listener.accept() {
                Ok((stream, _)) => stream,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::ConnectionAborted => continue,
                Err(e) => {
                    // Out of descriptors or memory: leave the rest in the backlog a while.
                    self.refusal(&format!("cannot accept a connection: {e}"));
                    self.accept_paused_until = Some(Instant::now() + Duration::from_millis(100));
                    return;
                }
            };
            let creds = match getsockopt(&stream, sockopt::PeerCredentials) {
                Ok(c) => c,
                Err(e) => {
                    self.refusal(&format!("cannot identify a peer ({e}); closed"));
                    continue;
                }
            };
            if creds.uid() != self.uid && !requests_only {
                self.refusal(&format!(
                    "refused a connection from uid {} (pid {}): only uid {} may use this broker",
                    creds.uid(),
                    creds.pid(),
                    self.uid
                ));
                continue;
            }
            if self.conns.len() >= self.max_conns {
                self.refusal(&format!(
                    "refused a connection from pid {}: {} connections are open, the most this broker keeps",
                    creds.pid(),
                    self.conns.len()
                ));
                continue;
            }
            if let Err(e) = stream.set_nonblocking(true) {
                self.refusal(&format!("cannot use a connection ({e}); closed"));
                continue;
            }
            let key = self.next_conn;
            self.next_conn += 1;
            let first_line_by = Instant::now() + FIRST_LINE_WITHIN;
            self.newcomers.insert((first_line_by, key));
            self.conns.insert(
                key,
                Conn {
                    stream,
                    pid: creds.pid(),
                    other_uid: (creds.uid() != self.uid).then_some(creds.uid()),
                    requests_only,
                    state: State::New,
                    input: Vec::new(),
                    output: Vec::new(),
                    sent: 0,
                    first_line_by: Some(first_line_by),
                    dead: false,
                },
            );
            // A requester writes its line right after connecting: read it now rather
            // than on the next round of the loop (each round polls every connection).
            self.check.push(key);
            self.read(key);
        }
    }

    /// Log a refused connection, at most once a second.
    fn refusal(&mut self, line: &str) {
        let now = Instant::now();
        if self
            .last_refusal_log
            .is_none_or(|t| now.duration_since(t) >= Duration::from_secs(1))
        {
            self.last_refusal_log = Some(now);
            log(line);
        }
    }

    fn service(&mut self, key: u64, revents: PollFlags) {
        self.check.push(key);
        let Some(conn) = self.conns.get_mut(&key) else {
            return;
        };
        if revents.contains(PollFlags::POLLOUT) {
            conn.flush();
        }
        let readable =
            PollFlags::POLLIN | PollFlags::POLLHUP | PollFlags::POLLERR | PollFlags::POLLNVAL;
        if revents.intersects(readable) && !conn.dead {
            self.read(key);
        }
    }

    fn read(&mut self, key: u64) {
        let Some(conn) = self.conns.get_mut(&key) else {
            return;
        };
        let n = match (&conn.stream).read(&mut self.scratch) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return,
            Err(_) => 0,
        };
        let state = conn.state;
        if n == 0 {
            // The peer closed its end (or the connection broke).
            match state {
                State::Requester { .. } | State::Approver => {}
                State::New if !conn.input.is_empty() => log(&format!(
                    "pid {} closed the connection in the middle of its first line",
                    conn.pid
                )),
                State::New | State::Closing => {}
            }
            conn.dead = true;
            return;
        }
        match state {
            State::Closing => {}
            State::Requester { id } => {
                log(&format!(
                    "request {id}: protocol error: the requester sent more after its request; closed"
                ));
                conn.dead = true;
                conn.state = State::Closing;
                self.settle(id, "protocol_error", None, None);
            }
            State::New | State::Approver => {
                conn.input.extend_from_slice(&self.scratch[..n]);
                self.handle_input(key);
            }
        }
    }

    /// Handle every complete line a connection has sent.
    fn handle_input(&mut self, key: u64) {
        loop {
            let Some(conn) = self.conns.get_mut(&key) else {
                return;
            };
            if conn.dead || conn.state == State::Closing {
                conn.input = Vec::new();
                return;
            }
            if let State::Requester { id } = conn.state {
                // Sent together with its request: nothing may follow a request.
                if !conn.input.is_empty() {
                    log(&format!(
                        "request {id}: protocol error: the requester sent more after its request; closed"
                    ));
                    conn.input = Vec::new();
                    conn.dead = true;
                    self.settle(id, "protocol_error", None, None);
                }
                return;
            }
            let Some(end) = conn.input.iter().position(|&b| b == b'\n') else {
                if conn.input.len() >= MAX_LINE {
                    self.line_too_long(key);
                }
                return;
            };
            if end + 1 > MAX_LINE {
                self.line_too_long(key);
                return;
            }
            let mut line: Vec<u8> = conn.input.drain(..=end).collect();
            line.pop();
            if conn.input.is_empty() {
                conn.input = Vec::new();
            }
            let state = conn.state;
            match state {
                State::New => self.first_line(key, &line),
                State::Approver => self.approver_line(key, &line),
                State::Requester { .. } | State::Closing => return,
            }
        }
    }

    fn line_too_long(&mut self, key: u64) {
        let Some(conn) = self.conns.get_mut(&key) else {
            return;
        };
        log(&format!(
            "pid {} sent a line longer than {MAX_LINE} bytes; closed",
            conn.pid
        ));
        conn.input = Vec::new();
        if let State::Approver = conn.state {
            self.refuse(key, &format!("a line is longer than {MAX_LINE} bytes"));
        } else {
            conn.dead = true;
        }
    }

    /// Reply an error to an approver tool and close its connection.
    fn refuse(&mut self, key: u64, message: &str) {
        self.queue(
            key,
            &BrokerReply::Error {
                message: message.to_owned(),
            }
            .encode(),
        );
        if let Some(conn) = self.conns.get_mut(&key) {
            conn.state = State::Closing;
        }
    }

    /// Add bytes to a connection's output and send what the socket takes now.
    fn queue(&mut self, key: u64, bytes: &[u8]) {
        self.check.push(key);
        if let Some(conn) = self.conns.get_mut(&key) {
            if conn.dead {
                return;
            }
            conn.output.extend_from_slice(bytes);
            conn.flush();
        }
    }

    /// Deny everything open, deliver what can be delivered, and exit 0.
    fn stop(mut self, why: &str, status: i32) -> i32 {
        // Nobody new can connect from here on.
        self.endpoint.remove_files();
        let ids: Vec<u64> = self.open.keys().copied().collect();
        log(&format!(
            "stopping on {why}: {} open request{} answered \"broker stopped\"",
            ids.len(),
            if ids.len() == 1 { "" } else { "s" }
        ));
        let stopped = Some("broker stopped".to_owned());
        for id in ids {
            let Some(open) = self.open.get(&id) else {
                continue;
            };
            let line = match &open.ask {
                Ask::Approval(r) => Decision::Deny {
                    message: stopped.clone(),
                    source: Some("gate serve".into()),
                }
                .encode(&r.call_id),
                Ask::Question(q) => Answer::Declined {
                    message: stopped.clone(),
                }
                .encode(&q.call_id),
            };
            self.settle(id, "broker_stopped", Some("gate serve"), Some(line));
        }
        for conn in self.conns.values_mut() {
            conn.state = State::Closing;
        }
        let deadline = Instant::now() + FLUSH_WITHIN;
        loop {
            self.conns.retain(|_, c| !c.finished());
            if self.conns.is_empty() {
                break;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                log(&format!(
                    "{} connection{} did not take the last answers in time",
                    self.conns.len(),
                    if self.conns.len() == 1 { "" } else { "s" }
                ));
                break;
            }
            let (keys, mut fds): (Vec<u64>, Vec<PollFd<'_>>) = self
                .conns
                .iter()
                .map(|(k, c)| (*k, PollFd::new(c.stream.as_fd(), PollFlags::POLLOUT)))
                .unzip();
            let ms = (left.as_millis() + 1).min(60_000) as u64;
            match poll(
                &mut fds,
                PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX),
            ) {
                Ok(_) | Err(Errno::EINTR) => {}
                Err(_) => break,
            }
            let fired: Vec<bool> = fds
                .iter()
                .map(|p| p.revents().is_some_and(|r| !r.is_empty()))
                .collect();
            drop(fds);
            for (key, fired) in keys.iter().zip(fired) {
                if let Some(conn) = self.conns.get_mut(key) {
                    if fired {
                        conn.flush();
                        if conn.unsent() > 0 && !conn.dead {
                            // POLLHUP/POLLERR without progress: give up on it.
                            let mut probe = [0u8; 1];
                            if matches!((&conn.stream).read(&mut probe), Ok(0)) {
                                conn.dead = true;
                            }
                        }
                    }
                }
            }
        }
        status
    }
}

#[cfg(test)]
mod tests;
