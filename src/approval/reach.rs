//! Who would be asked right now: the channels a gate at `ask` tries, in its order (the
//! socket, the terminal, nobody), looked at without asking anyone. For `gate check` and
//! `gate doctor`, so that they say what a run would do instead of guessing.
//!
//! The socket gets the requester's own checks ([`super::client::connect`]: a socket of
//! this user's, closed to others, with a listener running as this user); the connection
//! is closed again without a byte sent, which the broker and the protocol treat as
//! nothing. The terminal is opened and judged as the prompt does it
//! ([`super::terminal::open`]: `/dev/tty`, and only a person's) and closed untouched.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::client::{self, NotConnected};
use super::{By, Channels};

/// How long the look at the socket waits for a listener whose queue is full.
const PROBE_WITHIN: Duration = Duration::from_secs(1);

/// What is at the socket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SocketState {
    /// An approver listens and passed every check: a run asks it.
    Listening,
    /// A listener that did not take the connection in time (its queue is full): a run
    /// waits for it, and is refused if it never does.
    Busy,
    /// Nothing is there, or nothing listens: a run goes on to the terminal. Why.
    Absent(String),
    /// It fails a trust check: a run refuses without trying the terminal. Why.
    Untrusted(String),
}

/// Whether the terminal could be asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TtyState {
    Available,
    /// `--no-tty` / `approval.tty = false`.
    Off,
    /// Why it cannot be asked (no controlling terminal, a background job, a terminal
    /// an agent controls).
    Unavailable(String),
}

/// The channels as they are now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reach {
    pub socket: PathBuf,
    /// Whether the socket was configured (`--socket`, `GATE_SOCKET`,
    /// `approval.socket`) rather than the broker's default.
    pub socket_configured: bool,
    pub socket_state: SocketState,
    pub tty: TtyState,
}

/// Why a terminal that is turned off is not asked, in the words of a refusal.
pub const TTY_OFF: &str = "the terminal is turned off (--no-tty / approval.tty = false)";

/// The cause a run gives when nobody could be asked, from what it noted on the way.
pub fn nobody(notes: &[String]) -> String {
    let mut cause = String::from("there is no approver to ask");
    if !notes.is_empty() {
        cause.push_str(&format!(" ({})", notes.join("; ")));
    }
    cause
}

/// The cause a run gives for a socket that fails a trust check.
pub fn untrusted(why: &str) -> String {
    format!("the approval socket cannot be trusted: {why}")
}

/// Look at both channels.
pub fn look(channels: &Channels) -> Reach {
    let socket_state = match client::connect(
        &channels.socket,
        channels.approver.as_ref(),
        Instant::now() + PROBE_WITHIN,
        None,
    ) {
        // Dropped: closed without sending anything.
        Ok(_connection) => SocketState::Listening,
        Err(NotConnected::Timeout) => SocketState::Busy,
        Err(NotConnected::Absent(why)) => SocketState::Absent(why),
        Err(NotConnected::Untrusted(why)) => SocketState::Untrusted(why),
        Err(NotConnected::Interrupted) => SocketState::Absent("interrupted".into()),
    };
    let tty = if !channels.tty {
        TtyState::Off
    } else {
        match super::terminal::open() {
            Ok(_terminal) => TtyState::Available,
            Err(why) => TtyState::Unavailable(why),
        }
    };
    Reach {
        socket: channels.socket.clone(),
        socket_configured: channels.socket_configured,
        socket_state,
        tty,
    }
}

impl Reach {
    /// Who a run would ask: the socket, the terminal, or nobody (`None`, also when the
    /// socket cannot be trusted).
    pub fn asks(&self) -> Option<By> {
        match (&self.socket_state, &self.tty) {
            (SocketState::Listening | SocketState::Busy, _) => Some(By::Socket),
            (SocketState::Untrusted(_), _) => None,
            (SocketState::Absent(_), TtyState::Available) => Some(By::Tty),
            (SocketState::Absent(_), _) => None,
        }
    }

    /// Why a run would be refused at once, in the run's own words; `None` when someone
    /// would be asked.
    pub fn refusal(&self) -> Option<String> {
        match &self.socket_state {
            SocketState::Untrusted(why) => Some(untrusted(why)),
            SocketState::Listening | SocketState::Busy => None,
            SocketState::Absent(_) if self.tty == TtyState::Available => None,
            SocketState::Absent(why) => {
                let mut notes = Vec::new();
                if self.socket_configured {
                    notes.push(why.clone());
                }
                notes.push(match &self.tty {
                    TtyState::Off => TTY_OFF.to_owned(),
                    TtyState::Unavailable(why) => why.clone(),
                    TtyState::Available => unreachable!("handled above"),
                });
                Some(nobody(&notes))
            }
        }
    }

    /// The socket's state in one word, for JSON.
    pub fn socket_word(&self) -> &'static str {
        match self.socket_state {
            SocketState::Listening => "listening",
            SocketState::Busy => "busy",
            SocketState::Absent(_) => "absent",
            SocketState::Untrusted(_) => "untrusted",
        }
    }

    /// Why the socket is absent or untrusted.
    pub fn socket_note(&self) -> Option<&str> {
        match &self.socket_state {
            SocketState::Absent(why) | SocketState::Untrusted(why) => Some(why),
            SocketState::Listening | SocketState::Busy => None,
        }
    }

    /// The terminal's state in one word, for JSON.
    pub fn tty_word(&self) -> &'static str {
        match self.tty {
            TtyState::Available => "available",
            TtyState::Off => "off",
            TtyState::Unavailable(_) => "unavailable",
        }
    }

    /// Why the terminal cannot be asked.
    pub fn tty_note(&self) -> Option<&str> {
        match &self.tty {
            TtyState::Off => Some(TTY_OFF),
            TtyState::Unavailable(why) => Some(why),
            TtyState::Available => None,
        }
    }

    /// The facts as one JSON object, for `gate check --json` and `gate doctor --json`.
    pub fn to_json(&self) -> serde_json::Map<String, serde_json::Value> {
        let serde_json::Value::Object(map) = serde_json::json!({
            "asks": self.asks().map(By::as_str),
            "socket": self.socket.display().to_string(),
            "socket_configured": self.socket_configured,
            "socket_state": self.socket_word(),
            "socket_note": self.socket_note(),
            "tty": self.tty_word(),
            "tty_note": self.tty_note(),
        }) else {
            unreachable!("json! of an object literal is an object")
        };
        map
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reach(socket_state: SocketState, tty: TtyState, configured: bool) -> Reach {
        Reach {
            socket: PathBuf::from("/run/user/1/gate/broker.sock"),
            socket_configured: configured,
            socket_state,
            tty,
        }
    }

    fn absent() -> SocketState {
        SocketState::Absent("no socket at /run/user/1/gate/broker.sock".into())
    }

    #[test]
    fn the_socket_comes_first_then_the_terminal_then_nobody() {
        let r = reach(SocketState::Listening, TtyState::Available, false);
        assert_eq!((r.asks(), r.refusal()), (Some(By::Socket), None));
        let r = reach(SocketState::Busy, TtyState::Off, false);
        assert_eq!((r.asks(), r.refusal()), (Some(By::Socket), None));
        let r = reach(absent(), TtyState::Available, true);
        assert_eq!((r.asks(), r.refusal()), (Some(By::Tty), None));
        let r = reach(absent(), TtyState::Off, false);
        assert_eq!(r.asks(), None);
        assert_eq!(
            r.refusal().as_deref(),
            Some(
                "there is no approver to ask (the terminal is turned off (--no-tty / approval.tty = false))"
            )
        );
    }

    #[test]
    fn an_untrusted_socket_refuses_even_with_a_terminal() {
        let r = reach(
            SocketState::Untrusted("the socket S is open to other users (mode 0666)".into()),
            TtyState::Available,
            false,
        );
        assert_eq!(r.asks(), None);
        assert_eq!(
            r.refusal().as_deref(),
            Some(
                "the approval socket cannot be trusted: the socket S is open to other users (mode 0666)"
            )
        );
    }

    #[test]
    fn only_a_configured_socket_is_named_when_nobody_can_be_asked() {
        let no_terminal = TtyState::Unavailable("there is no controlling terminal".into());
        let r = reach(absent(), no_terminal.clone(), true);
        assert_eq!(
            r.refusal().as_deref(),
            Some(
                "there is no approver to ask (no socket at /run/user/1/gate/broker.sock; there is no controlling terminal)"
            )
        );
        let r = reach(absent(), no_terminal, false);
        assert_eq!(
            r.refusal().as_deref(),
            Some("there is no approver to ask (there is no controlling terminal)")
        );
    }
}
