//! Asking: the approval channels (a socket, the terminal), the broker that holds
//! requests for people (`gate serve`) and keeps their remembered approvals in its
//! memory, and the approver tools.
//!
//! A gate at `ask` that meets a command no rule allows tries, in order: the socket (if
//! one is configured, or the broker is listening at its default path), the terminal
//! (`/dev/tty`, only when turned on with `approval.tty = true`, and only when it is a
//! person's: [`terminal`]), and then nobody, which is an immediate denial. Whatever goes
//! wrong on the way is a denial with the cause on stderr.

pub mod admin;
pub(crate) mod always;
pub(crate) mod broker;
pub(crate) mod client;
pub(crate) mod paths;
pub(crate) mod peer;
pub mod protocol;
pub(crate) mod question;
pub(crate) mod reach;
pub(crate) mod signals;
pub(crate) mod terminal;
pub mod tty;
pub(crate) mod watch;
pub(crate) mod wire;

use std::ffi::OsString;
use std::path::PathBuf;

use crate::config::Settings;

/// The socket approvals go to: the configured one, else the broker's default path.
pub fn socket_path(settings: &Settings, var: &dyn Fn(&str) -> Option<OsString>) -> PathBuf {
    match &settings.socket {
        Some(path) => path.clone(),
        None => paths::default_socket(var),
    }
}

use std::time::Instant;

use protocol::{Answer, Ask, Decision};

/// Where to look for an approver.
#[derive(Debug, Clone)]
pub struct Channels {
    /// The socket: configured, or the broker's default path.
    pub socket: PathBuf,
    /// Whether the socket was configured (then its absence is worth a mention).
    pub socket_configured: bool,
    /// Whether the terminal may be asked.
    pub tty: bool,
    /// The user the approver on the socket must run as, when not this one.
    pub approver: Option<crate::config::ApproverUser>,
}

impl Channels {
    pub fn of(settings: &Settings, var: &dyn Fn(&str) -> Option<OsString>) -> Channels {
        Channels {
            socket: socket_path(settings, var),
            socket_configured: settings.socket.is_some(),
            tty: settings.tty,
            approver: settings.approver.clone(),
        }
    }
}

/// Who settled a request (the audit log's `decided_by`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    Socket,
    Tty,
    Timeout,
    NoApprover,
    Interrupted,
    Error,
}

impl By {
    pub fn as_str(self) -> &'static str {
        match self {
            By::Socket => "socket",
            By::Tty => "tty",
            By::Timeout => "timeout",
            By::NoApprover => "no-approver",
            By::Interrupted => "interrupted",
            By::Error => "error",
        }
    }
}

/// How a request ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// An approver decided an approval request.
    Decided { decision: Decision, by: By },
    /// An approver answered (or declined) a question.
    Answered { answer: Answer, by: By },
    /// Nobody answered: a denial (or a declined question), and why.
    Unanswered { by: By, cause: String },
}

/// Ask through the channels in order — the socket, the terminal, nobody — and wait for
/// the first answer until `deadline`. SIGINT, SIGTERM, SIGHUP and SIGQUIT end the wait
/// as a denial; the signal mask is restored before this returns.
pub fn seek(ask: &Ask, channels: &Channels, deadline: Instant) -> Outcome {
    let interrupts = match signals::Interrupts::block() {
        Ok(i) => i,
        Err(cause) => {
            return Outcome::Unanswered {
                by: By::Error,
                cause,
            };
        }
    };
    let outcome = seek_with(ask, channels, deadline, &interrupts);
    // A signal that arrived after the answer still counts: nothing runs.
    match (interrupts.take(), &outcome) {
        (Some(signal), Outcome::Decided { .. } | Outcome::Answered { .. }) => Outcome::Unanswered {
            by: By::Interrupted,
            cause: format!("gate was interrupted by {signal} while waiting"),
        },
        _ => outcome,
    }
}

fn seek_with(
    ask: &Ask,
    channels: &Channels,
    deadline: Instant,
    interrupts: &signals::Interrupts,
) -> Outcome {
    let interrupted = |what: &str| Outcome::Unanswered {
        by: By::Interrupted,
        cause: match interrupts.take() {
            Some(signal) => format!("gate was interrupted by {signal} while waiting for {what}"),
            None => format!("the wait for {what} was interrupted"),
        },
    };
    let mut notes: Vec<String> = Vec::new();
    match client::connect(
        &channels.socket,
        channels.approver.as_ref(),
        deadline,
        Some(interrupts.fd()),
    ) {
        Ok(conn) => {
            let shown = channels.socket.display();
            let waiting_on = if paths::is_brokers(&channels.socket) {
                Waiting::Broker {
                    configured: channels
                        .socket_configured
                        .then_some(channels.socket.as_path()),
                }
            } else {
                Waiting::Approver(&channels.socket)
            };
            let mut waiting = || crate::output::say(&waiting_notice(ask, waiting_on));
            return match conn.ask(ask, deadline, Some(interrupts.fd()), &mut waiting) {
                client::Reply::Decision(decision) => Outcome::Decided {
                    decision,
                    by: By::Socket,
                },
                client::Reply::Answer(answer) => Outcome::Answered {
                    answer,
                    by: By::Socket,
                },
                client::Reply::Timeout => Outcome::Unanswered {
                    by: By::Timeout,
                    cause: format!(
                        "the approver on {shown} did not answer within {} s",
                        ask.timeout_seconds()
                    ),
                },
                client::Reply::Interrupted => interrupted(&format!("the approver on {shown}")),
                client::Reply::Fault(why) => Outcome::Unanswered {
                    by: By::Error,
                    cause: format!("the approver on {shown} failed: {why}"),
                },
            };
        }
        Err(client::NotConnected::Untrusted(why)) => {
            return Outcome::Unanswered {
                by: By::Error,
                cause: reach::untrusted(&why),
            };
        }
        Err(client::NotConnected::Timeout) => {
            return Outcome::Unanswered {
                by: By::Timeout,
                cause: format!(
                    "the approver on {} did not answer within {} s: it never accepted the connection",
                    channels.socket.display(),
                    ask.timeout_seconds()
                ),
            };
        }
        Err(client::NotConnected::Interrupted) => {
            return interrupted(&format!("the approver on {}", channels.socket.display()));
        }
        Err(client::NotConnected::Absent(why)) => {
            if channels.socket_configured {
                notes.push(why);
            }
        }
    }
    if channels.tty {
        match terminal::open() {
            Ok(mut tty) => {
                // A person at the agent's screen may not see the prompt on their own
                // terminal; one who runs gate by hand sees it already.
                if !stderr_is_the_terminal() {
                    crate::output::say(&waiting_notice(ask, Waiting::Terminal));
                }
                return match ask {
                    Ask::Approval(request) => {
                        match tty.approve(request, deadline, Some(interrupts.fd())) {
                            tty::TtyVerdict::Once => Outcome::Decided {
                                decision: Decision::Approve {
                                    remember: false,
                                    remember_rule: None,
                                    always: None,
                                    kept: false,
                                    source: None,
                                },
                                by: By::Tty,
                            },
                            tty::TtyVerdict::Deny { reason } => Outcome::Decided {
                                decision: Decision::Deny {
                                    message: reason,
                                    source: None,
                                },
                                by: By::Tty,
                            },
                            tty::TtyVerdict::Timeout => Outcome::Unanswered {
                                by: By::Timeout,
                                cause: format!(
                                    "nobody answered on the terminal within {} s",
                                    ask.timeout_seconds()
                                ),
                            },
                            tty::TtyVerdict::Interrupted => {
                                interrupted("an answer on the terminal")
                            }
                            tty::TtyVerdict::Failed(why) => Outcome::Unanswered {
                                by: By::Error,
                                cause: format!("the terminal prompt failed: {why}"),
                            },
                        }
                    }
                    Ask::Question(question) => {
                        match tty.question(question, deadline, Some(interrupts.fd())) {
                            tty::TtyAnswer::Text(text) => Outcome::Answered {
                                answer: Answer::Text(text),
                                by: By::Tty,
                            },
                            tty::TtyAnswer::Declined => Outcome::Answered {
                                answer: Answer::Declined { message: None },
                                by: By::Tty,
                            },
                            tty::TtyAnswer::Timeout => Outcome::Unanswered {
                                by: By::Timeout,
                                cause: format!(
                                    "nobody answered on the terminal within {} s",
                                    ask.timeout_seconds()
                                ),
                            },
                            tty::TtyAnswer::Interrupted => interrupted("an answer on the terminal"),
                            tty::TtyAnswer::Failed(why) => Outcome::Unanswered {
                                by: By::Error,
                                cause: format!("the terminal prompt failed: {why}"),
                            },
                        }
                    }
                };
            }
            Err(why) => notes.push(why),
        }
    } else {
        notes.push(reach::TTY_OFF.into());
    }
    Outcome::Unanswered {
        by: By::NoApprover,
        cause: reach::nobody(&notes),
    }
}

/// Where a request waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waiting<'a> {
    /// gate's broker, at its default socket or at a configured one.
    Broker {
        configured: Option<&'a std::path::Path>,
    },
    /// A host program's approver on this socket.
    Approver(&'a std::path::Path),
    /// The person's terminal, prompted there.
    Terminal,
}

/// The one stderr line a requester writes when it waits for a person: that it waits, how
/// long at most, and how to answer. The model reads it too, and it is true for the model
/// as well: nothing runs until a person answers.
pub fn waiting_notice(ask: &Ask, waiting: Waiting<'_>) -> String {
    let seconds = ask.timeout_seconds();
    let what = match ask {
        Ask::Approval(_) => "approve this command",
        Ask::Question(_) => "answer this question",
    };
    let head = format!("gate: waiting up to {seconds} s for a person to {what}");
    match waiting {
        Waiting::Broker { configured } => {
            let how = match ask {
                Ask::Approval(_) => {
                    let id = ask.call_id();
                    format!("`gate watch`, or `gate approve {id}` / `gate deny {id}`")
                }
                Ask::Question(_) => "`gate watch`".to_owned(),
            };
            match configured {
                Some(socket) => format!(
                    "{head}: answer with {how} (the broker at {})",
                    socket.display()
                ),
                None => format!("{head}: answer with {how}"),
            }
        }
        Waiting::Approver(socket) => {
            format!("{head} through the approver on {}", socket.display())
        }
        Waiting::Terminal => format!("{head} at the prompt on their terminal"),
    }
}

/// Whether stderr is the controlling terminal, where the prompt goes (gate run by hand):
/// `tcgetsid` answers only for a descriptor of the caller's controlling terminal.
fn stderr_is_the_terminal() -> bool {
    nix::sys::termios::tcgetsid(std::io::stderr()).is_ok()
}

/// What to tell a model when nobody could be asked. Not the terminal: the model's own
/// never qualifies, so the way to approve is always another terminal's.
pub const NO_APPROVER_ADVICE: &str = "To approve commands, run `gate serve` and answer in \
    another terminal with `gate watch` or `gate approve`, or point approval.socket \
    (GATE_SOCKET) at a host program's approver.";

#[cfg(test)]
mod tests;
