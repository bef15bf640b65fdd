//! The requesters' side of the broker: the first line a connection sends (a request, a
//! question, or an approver's hello), opening a request and telling the watchers,
//! answering from a remembered approval, settling a request once, and finding one by
//! the id an approver names. It must not judge an approver's answer (see `answers`).

use std::time::Instant;

use super::answers::same_token;
use super::{Broker, Open, State, WATCH_BACKLOG_LIMIT, log, shown};
use crate::approval::protocol::{
    self, ApproverMessage, Ask, BrokerReply, Decision, PendingRequest,
};
use crate::policy::CommandText;

/// How many settled call ids the broker remembers: older ones are `not_found`. At most
/// 128 bytes each, so a few hundred kilobytes at worst.
pub(super) const SETTLED_CALLS_KEPT: usize = 4096;

/// The call ids of the last [`SETTLED_CALLS_KEPT`] settled requests.
#[derive(Default)]
pub(super) struct RecentCalls {
    pub(super) order: std::collections::VecDeque<String>,
    pub(super) set: std::collections::HashSet<String>,
}

impl RecentCalls {
    pub(super) fn insert(&mut self, call_id: &str) {
        if self.set.contains(call_id) {
            return;
        }
        if self.order.len() == SETTLED_CALLS_KEPT {
            if let Some(oldest) = self.order.pop_front() {
                self.set.remove(&oldest);
            }
        }
        self.order.push_back(call_id.to_owned());
        self.set.insert(call_id.to_owned());
    }

    pub(super) fn contains(&self, call_id: &str) -> bool {
        self.set.contains(call_id)
    }
}

/// What an id an approver names comes to.
pub(super) enum Lookup {
    Open(u64),
    Settled,
    NotFound,
}

impl Broker {
    /// The first line says who is there: a requester or an approver tool.
    pub(super) fn first_line(&mut self, key: u64, line: &[u8]) {
        let pid = match self.conns.get_mut(&key) {
            Some(conn) => {
                if let Some(at) = conn.first_line_by.take() {
                    self.newcomers.remove(&(at, key));
                }
                conn.pid
            }
            None => return,
        };
        let ty = protocol::object(line)
            .ok()
            .and_then(|obj| obj.get("type").and_then(|t| t.as_str().map(str::to_owned)));
        match ty.as_deref() {
            Some("approval_request" | "question_request") => match Ask::decode(line) {
                Ok(ask) => self.open_request(key, ask),
                Err(e) => {
                    log(&format!(
                        "pid {pid}: protocol error in a request: {e}; closed"
                    ));
                    if let Some(conn) = self.conns.get_mut(&key) {
                        conn.dead = true;
                    }
                }
            },
            Some("hello") if self.conns.get(&key).is_some_and(|c| c.requests_only) => {
                log(&format!(
                    "pid {pid}: an approver on the requests socket, which takes requests only; refused"
                ));
                self.refuse(
                    key,
                    "this socket takes requests only: approvers use the broker's own socket, as its user, on its machine",
                );
            }
            Some("hello") => match ApproverMessage::decode(line) {
                Ok(ApproverMessage::Hello { token }) => {
                    if self.refuse_a_marked_approver(key) {
                        return;
                    }
                    if same_token(token.as_bytes(), self.endpoint.token.as_bytes()) {
                        if let Some(conn) = self.conns.get_mut(&key) {
                            conn.state = State::Approver;
                        }
                        self.queue(key, &BrokerReply::Welcome.encode());
                    } else {
                        log(&format!(
                            "pid {pid}: an approver with the wrong token; closed"
                        ));
                        self.refuse(
                            key,
                            &format!(
                                "wrong token: approvers must send the token from {}",
                                self.endpoint.token_path.display()
                            ),
                        );
                    }
                }
                Ok(_) => self.refuse(key, "protocol error: expected a hello"),
                Err(e) => {
                    log(&format!(
                        "pid {pid}: protocol error in a hello: {e}; closed"
                    ));
                    self.refuse(key, &format!("protocol error: {e}"));
                }
            },
            _ => {
                log(&format!(
                    "pid {pid}: the first line is neither a request nor a hello; closed"
                ));
                self.refuse(
                    key,
                    "protocol error: the first line must be an approval_request, a question_request or a hello",
                );
            }
        }
    }

    fn open_request(&mut self, key: u64, mut ask: Ask) {
        let pid = self.conns.get(&key).map_or(0, |c| c.pid);
        // Nothing is remembered for, or answered from memory to, a request on the
        // requests socket: its sender says what session it is, and any user (or, through
        // an ssh -R, any runner) may send one, so one session's memory must not be
        // filled or used by another's.
        if self.conns.get(&key).is_some_and(|c| c.requests_only) {
            if let Ask::Approval(r) = &mut ask {
                r.remember_supported = false;
            }
        }
        // Leaving the sandbox is asked every time: never answered from memory, never kept.
        if let Ask::Approval(r) = &mut ask {
            if r.leaves_sandbox {
                r.remember_supported = false;
            }
        }
        if self.by_call.contains_key(ask.call_id()) {
            log(&format!(
                "pid {pid}: protocol error: call id {} is already waiting here; closed",
                shown(ask.call_id())
            ));
            if let Some(conn) = self.conns.get_mut(&key) {
                conn.dead = true;
            }
            return;
        }
        if let Some(decision) = self.remembered_answer(&ask) {
            if let Ask::Approval(r) = &ask {
                log(&format!(
                    "pid {}, session {}: `{}` approved from a remembered approval",
                    r.pid,
                    shown(&r.session_id),
                    shown(&r.command)
                ));
            }
            self.queue(key, &decision.encode(ask.call_id()));
            if let Some(conn) = self.conns.get_mut(&key) {
                conn.state = State::Closing;
            }
            return;
        }
        let id = self.next_id;
        self.next_id += 1;
        let user = match self.conns.get(&key).and_then(|c| c.other_uid) {
            Some(uid) => format!("uid {uid}, "),
            None => String::new(),
        };
        match &ask {
            Ask::Approval(r) => log(&format!(
                "request {id}: {user}pid {}, session {}, in {}: `{}`",
                r.pid,
                shown(&r.session_id),
                shown(&r.work_dir),
                shown(&r.command)
            )),
            Ask::Question(q) => log(&format!(
                "request {id}: {user}pid {}, session {}, asks: {}",
                q.pid,
                shown(&q.session_id),
                shown(&q.question)
            )),
        }
        if let Some(conn) = self.conns.get_mut(&key) {
            conn.state = State::Requester { id };
        }
        self.by_call.insert(ask.call_id().to_owned(), id);
        let event = BrokerReply::Request(PendingRequest {
            id: id.to_string(),
            ask: ask.clone(),
            age_seconds: 0,
        })
        .encode();
        self.open.insert(
            id,
            Open {
                ask,
                conn: key,
                since: Instant::now(),
            },
        );
        self.tell_watchers(&event);
    }

    /// The broker's own answer when an approval remembered for the session covers it.
    pub(super) fn remembered_answer(&self, ask: &Ask) -> Option<Decision> {
        let Ask::Approval(r) = ask else {
            return None;
        };
        // A request that cannot be remembered (its text is not exact) is never answered
        // from a remembered approval either.
        if !r.remember_supported {
            return None;
        }
        let remembered = self.remembered.get(&r.session_id)?;
        remembered.allows(&CommandText::new(r.command.as_str()))?;
        Some(Decision::Approve {
            remember: false,
            remember_rule: None,
            always: None,
            kept: true,
            source: Some("remembered".into()),
        })
    }

    /// Send a line to every watching approver tool; one that lets too much pile up is
    /// dropped.
    fn tell_watchers(&mut self, line: &[u8]) {
        for key in &self.watchers {
            let Some(conn) = self.conns.get_mut(key) else {
                continue;
            };
            if conn.dead || conn.state == State::Closing {
                continue;
            }
            if conn.unsent() + line.len() > WATCH_BACKLOG_LIMIT {
                log(&format!(
                    "pid {}: a watching approver stopped reading; disconnected",
                    conn.pid
                ));
                conn.dead = true;
                self.check.push(*key);
                continue;
            }
            conn.output.extend_from_slice(line);
            conn.flush();
            if conn.dead {
                self.check.push(*key);
            }
        }
    }

    /// Close request `id`: send `reply` (if any) to its requester, and tell the watchers.
    pub(super) fn settle(&mut self, id: u64, how: &str, by: Option<&str>, reply: Option<Vec<u8>>) {
        let Some(open) = self.open.remove(&id) else {
            return;
        };
        self.by_call.remove(open.ask.call_id());
        self.settled_calls.insert(open.ask.call_id());
        self.check.push(open.conn);
        if let Some(conn) = self.conns.get_mut(&open.conn) {
            conn.state = State::Closing;
            match reply {
                Some(line) => {
                    conn.output.extend_from_slice(&line);
                    conn.flush();
                }
                None => conn.dead = true,
            }
        }
        let event = BrokerReply::Settled {
            id: id.to_string(),
            how: how.to_owned(),
            by: by.map(str::to_owned),
        }
        .encode();
        self.tell_watchers(&event);
    }

    /// The request an approver names: by its short id when `id` is all digits, else by
    /// its call id, exactly.
    pub(super) fn lookup(&self, id: &str) -> Lookup {
        if !protocol::is_short_id(id) {
            return match self.by_call.get(id) {
                Some(n) => Lookup::Open(*n),
                None if self.settled_calls.contains(id) => Lookup::Settled,
                None => Lookup::NotFound,
            };
        }
        let canonical = id.len() <= 20 && !id.starts_with('0');
        match id.parse::<u64>() {
            Ok(n) if canonical && n < self.next_id => {
                if self.open.contains_key(&n) {
                    Lookup::Open(n)
                } else {
                    Lookup::Settled
                }
            }
            _ => Lookup::NotFound,
        }
    }
}

/// A `request` line for open request `id`.
pub(super) fn request_line(id: u64, open: &Open) -> Vec<u8> {
    BrokerReply::Request(PendingRequest {
        id: id.to_string(),
        ask: open.ask.clone(),
        age_seconds: open.since.elapsed().as_secs(),
    })
    .encode()
}
