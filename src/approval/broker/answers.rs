//! The approvers' side of the broker: a line from an approver tool (list, watch,
//! approve, deny, answer), who may send one at all (no_new_privs marks a command gate
//! ran, the token must match), and what an approval does besides settling its request:
//! remembered for the session, or written to the always-allow file as a lasting rule,
//! with the waiting copies of the same command answered too.

use std::os::fd::AsFd;

use crate::approval::{always, peer};

use std::path::{Path, PathBuf};

use super::requests::request_line;
use super::{ALWAYS_SOURCE, Broker, DEFAULT_SOURCE, Lookup, Open, log, shown};
use crate::approval::protocol::{
    self, Answer, ApprovalRequest, ApproverMessage, Ask, BrokerReply, Decision, Settle,
};

impl Broker {
    pub(super) fn approver_line(&mut self, key: u64, line: &[u8]) {
        let pid = self.conns.get(&key).map_or(0, |c| c.pid);
        let message = match ApproverMessage::decode(line) {
            Ok(m) => m,
            Err(e) => {
                log(&format!(
                    "pid {pid}: protocol error from an approver: {e}; closed"
                ));
                self.refuse(key, &format!("protocol error: {e}"));
                return;
            }
        };
        match message {
            ApproverMessage::Hello { .. } => {
                self.refuse(key, "protocol error: hello was already said");
            }
            ApproverMessage::List => {
                let mut out = BrokerReply::Pending {
                    count: self.open.len() as u64,
                }
                .encode();
                for (id, open) in &self.open {
                    out.extend_from_slice(&request_line(*id, open));
                }
                self.queue(key, &out);
            }
            ApproverMessage::Watch => {
                self.watchers.insert(key);
                let mut out = Vec::new();
                for (id, open) in &self.open {
                    out.extend_from_slice(&request_line(*id, open));
                }
                self.queue(key, &out);
            }
            ApproverMessage::Decide { id, decision } => self.decide(key, &id, decision),
            ApproverMessage::Answer { id, answer } => self.answer(key, &id, answer),
        }
    }

    fn result(&mut self, key: u64, id: &str, settle: Settle) {
        let line = BrokerReply::Result {
            id: id.to_owned(),
            settle,
        }
        .encode();
        self.queue(key, &line);
    }

    /// An error reply that leaves the connection open.
    fn error(&mut self, key: u64, message: String) {
        self.queue(key, &BrokerReply::Error { message }.encode());
    }

    /// The number of the open request `id` names; `None` when there is none, and the
    /// approver has been told it was not found or is already settled.
    fn open_named(&mut self, key: u64, id: &str) -> Option<u64> {
        let settle = match self.lookup(id) {
            Lookup::NotFound => Settle::NotFound,
            Lookup::Settled => Settle::AlreadySettled,
            Lookup::Open(n) if self.open.contains_key(&n) => return Some(n),
            Lookup::Open(_) => Settle::AlreadySettled,
        };
        self.result(key, id, settle);
        None
    }

    fn decide(&mut self, key: u64, id: &str, decision: Decision) {
        let Some(n) = self.open_named(key, id) else {
            return;
        };
        let Some(
            open @ Open {
                ask: Ask::Approval(request),
                ..
            },
        ) = self.open.get(&n)
        else {
            return self.error(
                key,
                format!("request {id} is a question, not a command: answer it in `gate watch`"),
            );
        };
        let call_id = request.call_id.clone();
        match decision {
            Decision::Approve {
                remember,
                remember_rule,
                always,
                source,
                ..
            } => {
                let by = source.unwrap_or_else(|| DEFAULT_SOURCE.into());
                // A lasting rule first: when it cannot be added, nothing is approved and
                // the request stays open for another answer.
                let lasting = match &always {
                    None => None,
                    Some(asked) => {
                        let through_requests_socket =
                            self.conns.get(&open.conn).is_some_and(|c| c.requests_only);
                        let added = self
                            .lasting_rule(id, request, asked, through_requests_socket)
                            .and_then(|(rule, exact, file)| {
                                let note = format!(
                                    "approved by {} with gate serve, {}",
                                    by,
                                    crate::audit::rfc3339(std::time::SystemTime::now())
                                );
                                match always::add(&file, &rule, exact, &note) {
                                    Ok(added) => Ok((rule, exact, file, added)),
                                    Err(e) => Err(format!(
                                        "cannot add the rule to {}: {e}",
                                        file.display()
                                    )),
                                }
                            });
                        match added {
                            Ok(added) => Some(added),
                            Err(why) => {
                                log(&format!("request {n}: not always allowed: {}", shown(&why)));
                                return self.error(key, why);
                            }
                        }
                    }
                };
                let Some(Open {
                    ask: Ask::Approval(request),
                    ..
                }) = self.open.get(&n)
                else {
                    return self.result(key, id, Settle::AlreadySettled);
                };
                let wants = remember || remember_rule.is_some();
                let keep = wants && request.remember_supported;
                let session = request.session_id.clone();
                let command = request.command.clone();
                if keep {
                    let mut updated = self.remembered.get(&session).cloned().unwrap_or_default();
                    if let Some(rule) = &remember_rule {
                        if let Err(e) = updated.remember_prefix(rule) {
                            return self.error(
                                key,
                                format!("remember_rule is not a valid allow rule: {e}"),
                            );
                        }
                    }
                    if remember {
                        updated.remember_command(&command);
                    }
                    self.remembered.insert(session.clone(), updated);
                }
                let mut what = String::from("approved");
                if keep {
                    what.push_str(" for the session");
                    if let Some(rule) = &remember_rule {
                        what.push_str(&format!(" (commands starting `{}`)", shown(rule)));
                    }
                } else if wants {
                    what.push_str(" once (this request cannot be remembered)");
                }
                if let Some((rule, exact, file, added)) = &lasting {
                    what.push_str(&format!(
                        "; always allowed from now on: {} `{}` {} {}:{}",
                        if *exact {
                            "the command"
                        } else {
                            "commands starting"
                        },
                        shown(rule),
                        if added.already {
                            "was already in"
                        } else {
                            "added to"
                        },
                        file.display(),
                        added.line
                    ));
                }
                log(&format!("request {n}: {what} by {}", shown(&by)));
                let line = Decision::Approve {
                    remember: keep && remember,
                    remember_rule: if keep { remember_rule } else { None },
                    always: if lasting.is_some() { always } else { None },
                    kept: keep || lasting.is_some(),
                    source: Some(by.clone()),
                }
                .encode(&call_id);
                self.result(key, id, Settle::Answered);
                self.settle(n, "approved", Some(&by), Some(line));
                if keep {
                    self.answer_copies(&session, &command);
                }
                if let Some((_, _, file, _)) = &lasting {
                    self.answer_always_copies(file, &command);
                }
            }
            Decision::Deny { message, source } => {
                let by = source.unwrap_or_else(|| DEFAULT_SOURCE.into());
                match &message {
                    Some(m) => log(&format!(
                        "request {n}: denied by {}: {}",
                        shown(&by),
                        shown(m)
                    )),
                    None => log(&format!("request {n}: denied by {}", shown(&by))),
                }
                let line = Decision::Deny {
                    message,
                    source: Some(by.clone()),
                }
                .encode(&call_id);
                self.result(key, id, Settle::Answered);
                self.settle(n, "denied", Some(&by), Some(line));
            }
        }
    }

    /// The lasting rule an approver asked for, checked: the rule, whether it is exact, and
    /// the file it goes to; or why it cannot be added (said to the approver, and the
    /// request stays open).
    fn lasting_rule(
        &self,
        id: &str,
        request: &ApprovalRequest,
        asked: &protocol::Lasting,
        through_requests_socket: bool,
    ) -> Result<(String, bool, PathBuf), String> {
        let once = "approve it once, or for the session";
        if through_requests_socket {
            return Err(format!(
                "request {id} came through the requests socket, from another user or machine, \
                 whose gate does not read your always-allow file; approve it once, or have the \
                 rule added to that gate's configuration"
            ));
        }
        if let Some(lock) = &self.locked_by {
            return Err(format!(
                "{} locks the configuration (lock = true), so no allow rule can be added, \
                 lasting ones included; approve it once, or ask whoever administers it to add \
                 the rule there",
                lock.display()
            ));
        }
        if request.kind == "session" {
            return Err(format!(
                "request {id} is a shell session, which has no command text a rule could \
                 match; approve it once"
            ));
        }
        if request.leaves_sandbox {
            return Err(format!(
                "request {id} would run outside the sandbox: leaving it is asked every time, \
                 and an allow rule never grants it; approve it once"
            ));
        }
        if !request.remember_supported {
            return Err(format!(
                "request {id} cannot be always allowed: its text is not exact (it was not \
                 valid UTF-8), or an ask rule asks about it every time; approve it once"
            ));
        }
        let Some(ours) = &self.always_file else {
            return Err(format!(
                "this broker reads no always-allow file (it was started with --config, \
                 GATE_CONFIG or --no-config), so it has nowhere to keep the rule; {once}"
            ));
        };
        let Some(theirs) = &request.always_file else {
            return Err(format!(
                "the gate that asks takes no lasting rules: its configuration is locked, or \
                 it reads no user file (--config, GATE_CONFIG, --no-config); {once}"
            ));
        };
        if Path::new(theirs) != ours.as_path() {
            return Err(format!(
                "the gate that asks reads lasting rules from {}, and this broker keeps them \
                 in {}; {once}, or start the broker with the agent's XDG_CONFIG_HOME",
                shown(theirs),
                ours.display()
            ));
        }
        let command = crate::policy::trim_blanks(&request.command);
        if let Some(c) = crate::policy::first_unmatchable_char(command) {
            let what = if crate::policy::SHELL_CHARS.contains(&c) {
                format!("the shell character {}", crate::policy::describe_char(c))
            } else {
                format!("the {}", crate::policy::describe_char(c))
            };
            return Err(format!(
                "`{}` contains {what}: no allow rule matches a command with shell syntax, and \
                 gate never splits one into its parts, so it cannot be always allowed, \
                 exactly or by a prefix; {once}",
                shown(command),
            ));
        }
        let (rule, exact) = match asked {
            protocol::Lasting::Exact => {
                let rule = crate::policy::validate_rule(command).map_err(|e| {
                    format!("`{}` cannot be an allow rule: {e}; {once}", shown(command))
                })?;
                (rule.to_owned(), true)
            }
            protocol::Lasting::Prefix(rule) => {
                if !crate::policy::allow_rule_matches(rule, command) {
                    return Err(format!(
                        "the rule `{}` does not match the command `{}`: a lasting rule must \
                         cover the command it approves",
                        shown(rule),
                        shown(command)
                    ));
                }
                (rule.clone(), false)
            }
        };
        Ok((rule, exact, ours.clone()))
    }

    /// After a lasting rule was added to `file`, answer the open requests, of any
    /// session, for the same text (trimmed) whose gates read that file: the text the
    /// person saw, which their gates would now run unasked.
    fn answer_always_copies(&mut self, file: &Path, command: &str) {
        let text = crate::policy::trim_blanks(command);
        let covered: Vec<(u64, String)> = self
            .open
            .iter()
            .filter_map(|(id, open)| match &open.ask {
                Ask::Approval(r)
                    if r.remember_supported
                        && r.always_file.as_deref().map(Path::new) == Some(file)
                        && crate::policy::trim_blanks(&r.command) == text =>
                {
                    Some((*id, r.call_id.clone()))
                }
                _ => None,
            })
            .collect();
        for (id, call_id) in covered {
            log(&format!(
                "request {id}: approved with the same command just always allowed"
            ));
            let decision = Decision::Approve {
                remember: false,
                remember_rule: None,
                always: None,
                kept: true,
                source: Some(ALWAYS_SOURCE.into()),
            };
            self.settle(
                id,
                "approved",
                Some(ALWAYS_SOURCE),
                Some(decision.encode(&call_id)),
            );
        }
    }

    /// After an approval of `command` was remembered for `session`, answer the session's
    /// open requests for the same text (trimmed) that it covers: the text the person
    /// saw. Every other open request, even one a rule just remembered covers, stays open
    /// for the person to answer: it was waiting when the rule was made, and the person
    /// may not have seen it. (Requests that arrive later are answered from memory.)
    fn answer_copies(&mut self, session: &str, command: &str) {
        let text = crate::policy::trim_blanks(command);
        let covered: Vec<(u64, Decision, String)> = self
            .open
            .iter()
            .filter(|(_, open)| match &open.ask {
                Ask::Approval(r) => {
                    r.session_id == session && crate::policy::trim_blanks(&r.command) == text
                }
                Ask::Question(_) => false,
            })
            .filter_map(|(id, open)| {
                self.remembered_answer(&open.ask)
                    .map(|d| (*id, d, open.ask.call_id().to_owned()))
            })
            .collect();
        for (id, decision, call_id) in covered {
            log(&format!(
                "request {id}: approved with the same command just approved for the session"
            ));
            self.settle(
                id,
                "approved",
                Some("remembered"),
                Some(decision.encode(&call_id)),
            );
        }
    }

    fn answer(&mut self, key: u64, id: &str, answer: Answer) {
        let Some(n) = self.open_named(key, id) else {
            return;
        };
        let Some(Open {
            ask: Ask::Question(question),
            ..
        }) = self.open.get(&n)
        else {
            return self.error(
                key,
                format!("request {id} is a command, not a question: approve or deny it"),
            );
        };
        let line = answer.encode(&question.call_id);
        let how = match &answer {
            Answer::Text(text) => {
                log(&format!("request {n}: answered: {}", shown(text)));
                "answered"
            }
            Answer::Declined { message } => {
                match message {
                    Some(m) => log(&format!("request {n}: declined: {}", shown(m))),
                    None => log(&format!("request {n}: declined")),
                }
                "declined"
            }
        };
        self.result(key, id, Settle::Answered);
        self.settle(n, how, None, Some(line));
    }

    /// An approver tool that runs with no_new_privs descends from a command gate ran (or
    /// another sandbox): whatever token it has, it may not list or answer anything
    /// ([`peer`]). True when it was refused.
    pub(super) fn refuse_a_marked_approver(&mut self, key: u64) -> bool {
        let Some(conn) = self.conns.get(&key) else {
            return true;
        };
        let why = match peer::identify(conn.stream.as_fd()) {
            Ok(peer::Peer::Unmarked { .. }) => return false,
            Ok(peer::Peer::Marked { pid }) => {
                log(&format!(
                    "pid {pid}: an approver with no_new_privs (started by a command gate ran, \
                     or by a sandbox); refused"
                ));
                format!(
                    "this approver (pid {pid}) runs with no_new_privs: it descends from a \
                     command gate ran (or another sandbox) and cannot answer requests; answer \
                     from a terminal of your own"
                )
            }
            Err(why) => {
                log(&format!(
                    "pid {}: an approver that cannot be checked ({why}); refused",
                    conn.pid
                ));
                format!("this approver cannot be checked: {why}")
            }
        };
        self.refuse(key, &why);
        true
    }
}

/// Compare two tokens in time that depends only on their lengths.
pub(super) fn same_token(given: &[u8], expected: &[u8]) -> bool {
    if given.len() != expected.len() {
        return false;
    }
    let difference = given
        .iter()
        .zip(expected)
        .fold(0u8, |acc, (a, b)| acc | (a ^ b));
    std::hint::black_box(difference) == 0
}
