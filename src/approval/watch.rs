//! `gate watch`: an interactive approver on this terminal. It connects to the broker,
//! watches it, and asks the person about each request as it arrives, with the same
//! prompts a requester shows on its own terminal; the requests that arrive meanwhile
//! wait in a queue, oldest first.
//!
//! While a prompt waits for a key, the broker's connection is watched too: a new request
//! is queued (and announced) without disturbing what the person is typing, and a request
//! settled elsewhere (another approver, its requester gone) ends its prompt with a note.
//!
//! Ctrl-C, SIGINT, SIGTERM, SIGHUP or SIGQUIT ends it (status 0), the terminal restored;
//! the requests still open stay open for other approvers. The broker going away ends
//! it with status 1; no terminal, or no broker to connect to, with status 125.

use std::collections::VecDeque;
use std::os::fd::BorrowedFd;
use std::path::Path;
use std::time::{Duration, Instant};

use super::admin::{Client, PendingRequest, WatchEvent};
use super::protocol::{Answer, Ask, Decision, Settle};
use super::signals::Interrupts;
use super::tty::{ApprovalPrompt, Choice, IdlePrompt, QuestionPrompt, Reply, Step, Tty, one_row};
use crate::config::Settings;
use crate::output::{GATE_ERROR, say};

/// Exit status when the broker went away.
pub const BROKER_GONE: i32 = 1;

/// Who the decisions come from, for the audit log.
const SOURCE: &str = "gate watch";

/// How long to wait for the rest of a line the broker has begun to send.
const LINE_WITHIN: Duration = Duration::from_millis(500);

pub fn run(socket: &Path, settings: &Settings) -> i32 {
    if let Some(code) = super::peer::refuse_if_marked("watch") {
        return code;
    }
    // Signals first, so that none can kill gate with the terminal raw.
    let interrupts = match Interrupts::block() {
        Ok(i) => i,
        Err(e) => {
            say(&format!("gate: watch: {e}"));
            return GATE_ERROR;
        }
    };
    let mut tty = match Tty::open() {
        Ok(tty) => tty,
        Err(e) => {
            say(&format!(
                "gate: watch needs a terminal to prompt on, and {e}; answer with `gate pending`, `gate approve` and `gate deny` instead"
            ));
            return GATE_ERROR;
        }
    };
    let mut client = match Client::connect(socket) {
        Ok(c) => c,
        Err(e) => {
            say(&format!("gate: watch: {e}"));
            return GATE_ERROR;
        }
    };
    if let Err(e) = client.watch() {
        say(&format!("gate: watch: {e}"));
        return BROKER_GONE;
    }
    if let Err(e) = tty.enter_raw() {
        say(&format!("gate: watch: {e}"));
        return GATE_ERROR;
    }
    let mut watch = Watch {
        tty,
        client,
        interrupts: &interrupts,
        queue: VecDeque::new(),
        current: None,
        alerts: Alerts::default(),
        always_file: settings.always_file.clone(),
    };
    let end = watch.run(socket);
    let Watch {
        mut tty, alerts, ..
    } = watch;
    let _ = tty.clear_line();
    if alerts.titled {
        let _ = tty.title_stack(false);
    }
    let (code, message) = match end {
        End::Quit(how) => {
            let _ = tty.say(&format!("gate watch: stopped ({how})"));
            (0, None)
        }
        End::BrokerGone(why) => {
            let _ = tty.say("gate watch: the broker went away");
            (BROKER_GONE, Some(format!("gate: watch: {why}")))
        }
        End::Failed(why) => (GATE_ERROR, Some(format!("gate: watch: {why}"))),
    };
    tty.leave_raw();
    drop(tty);
    if let Some(message) = message {
        say(&message);
    }
    // A second signal, still pending, would kill gate when the mask is put back.
    while interrupts.take().is_some() {}
    code
}

/// Why watching ended.
enum End {
    /// Ctrl-C or a signal (named).
    Quit(String),
    /// The broker closed the connection or broke the protocol.
    BrokerGone(String),
    /// The terminal failed.
    Failed(String),
}

/// A request waiting for the person.
struct Entry {
    request: PendingRequest,
    /// When it came.
    received: Instant,
    /// When the requester stops waiting, as far as the broker's figures tell.
    deadline: Instant,
}

impl Entry {
    /// How long it has been waiting, in seconds.
    fn age(&self) -> u64 {
        self.request.age_seconds + self.received.elapsed().as_secs()
    }
}

/// The request being prompted for.
struct Current {
    id: String,
    /// Set when it was settled elsewhere meanwhile: how.
    settled: Option<String>,
}

struct Watch<'a> {
    tty: Tty,
    client: Client,
    interrupts: &'a Interrupts,
    /// Requests not yet prompted for, oldest first.
    queue: VecDeque<Entry>,
    current: Option<Current>,
    alerts: Alerts,
    /// This person's always-allow file, where `l` adds a lasting rule (`None`: the
    /// configuration is locked, or reads no user file).
    always_file: Option<std::path::PathBuf>,
}

/// What gate watch did to call the person: the window title it set, the notifications
/// it started.
#[derive(Default)]
struct Alerts {
    /// The window title was set (the one before it is saved on the title stack).
    titled: bool,
    /// The title says that no request waits.
    idle: bool,
    /// `notify-send` processes not yet reaped.
    notifiers: Vec<std::process::Child>,
}

/// At most this many `notify-send` at once: one that hangs (no notification service)
/// must not be followed by one per request.
const MAX_NOTIFIERS: usize = 4;

/// `notify-send` from PATH, if root installed it: the program (links resolved) is
/// called `notify-send`, and it and every directory above it are root's and writable by
/// nobody else (a directory with the sticky bit, such as /tmp, keeps others from
/// replacing what root put in it). A `notify-send` this user could write, the model
/// could write too (with its agent's edit tools, into a `~/.local/bin` on PATH), and
/// gate watch would then run the model's program outside any sandbox and unmarked,
/// able to answer requests.
fn notify_send() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute())
        .find_map(|dir| root_installed(&dir.join("notify-send")))
}

/// The program `file` names, if root installed it (see [`notify_send`]).
fn root_installed(file: &Path) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let real = std::fs::canonicalize(file).ok()?;
    if real.file_name() != Some(std::ffi::OsStr::new("notify-send")) {
        return None;
    }
    let meta = std::fs::metadata(&real).ok()?;
    if !meta.is_file() || meta.uid() != 0 || meta.mode() & 0o022 != 0 || meta.mode() & 0o111 == 0 {
        return None;
    }
    for dir in real.ancestors().skip(1) {
        let meta = std::fs::metadata(dir).ok()?;
        let sticky = meta.mode() & 0o1000 != 0;
        if meta.uid() != 0 || (meta.mode() & 0o022 != 0 && !sticky) {
            return None;
        }
    }
    Some(real)
}

/// Text for a notification body, which notification servers may read as markup.
fn plain_markup(text: &str) -> String {
    one_row(text, 200)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// What the notification for a request says: its summary and body.
fn notification(request: &PendingRequest) -> (String, String) {
    let id = one_row(&request.id, 20);
    match &request.ask {
        Ask::Approval(r) => (
            "gate: a command waits for approval".to_owned(),
            plain_markup(&format!("request {id}: {}", r.command)),
        ),
        Ask::Question(q) => (
            "gate: a question waits for an answer".to_owned(),
            plain_markup(&format!("question {id}: {}", q.question)),
        ),
    }
}

/// What a wait on the terminal, the broker and the signals came to.
enum Woke<T> {
    Done(T),
    Timeout,
    /// Something came from the broker; the prompt can be resumed.
    Broker,
}

impl Watch<'_> {
    fn run(&mut self, socket: &Path) -> End {
        let intro = format!(
            "gate watch: answering the requests of the broker at {}",
            socket.display()
        );
        if let Err(e) = self.tty.say(&intro) {
            return End::Failed(e);
        }
        loop {
            if let Err(end) = self.take_buffered() {
                return end;
            }
            let Some(entry) = self.queue.pop_front() else {
                if let Err(end) = self.idle_title() {
                    return end;
                }
                let mut idle = IdlePrompt::new("waiting for requests (Ctrl-C quits)");
                match self.wait(&mut idle, None) {
                    Ok(Woke::Done(())) => return End::Quit("Ctrl-C".into()),
                    Ok(Woke::Broker) | Ok(Woke::Timeout) => continue,
                    Err(end) => return end,
                }
            };
            if let Err(end) = self.prompt(entry) {
                return end;
            }
        }
    }

    /// Ask about one request, until it is answered, settled elsewhere or out of time.
    fn prompt(&mut self, entry: Entry) -> Result<(), End> {
        let id = entry.request.id.clone();
        self.current = Some(Current {
            id: id.clone(),
            settled: None,
        });
        let result = self.prompt_current(&entry);
        self.current = None;
        result
    }

    fn prompt_current(&mut self, entry: &Entry) -> Result<(), End> {
        let id = entry.request.id.as_str();
        let waiting = match self.queue.len() {
            0 => String::new(),
            n => format!("; {n} more waiting"),
        };
        let ctrl_c = "quit gate watch (the request stays open)";
        match &entry.request.ask {
            Ask::Approval(request) => {
                let title = format!(
                    "gate watch: request {} from pid {}, waiting {}s{waiting}",
                    one_row(id, 20),
                    request.pid,
                    entry.age()
                );
                let mut always = self.always_offered(request);
                // A lasting rule the broker refuses leaves the request open: prompt again,
                // without `l`.
                loop {
                    self.tty
                        .show_approval_offering(&title, request, ctrl_c, always.as_deref())
                        .and_then(|()| self.tty.flush_input())
                        .map_err(End::Failed)?;
                    let mut prompt = ApprovalPrompt::new(request.remember_supported)
                        .offering_always(always.is_some());
                    let choice = loop {
                        match self.wait(&mut prompt, Some(entry.deadline))? {
                            Woke::Done(choice) => break choice,
                            Woke::Timeout => return self.out_of_time(id),
                            Woke::Broker => {
                                if self.settled_elsewhere(id)? {
                                    return Ok(());
                                }
                            }
                        }
                    };
                    let (decision, said) = match choice {
                        Choice::Once => (approve(false), "approved once".to_owned()),
                        Choice::Session => (approve(true), "approved for the session".to_owned()),
                        Choice::Always => (
                            Decision::Approve {
                                remember: false,
                                remember_rule: None,
                                always: Some(super::protocol::Lasting::Exact),
                                kept: false,
                                source: Some(SOURCE.into()),
                            },
                            "always allowed from now on".to_owned(),
                        ),
                        Choice::Deny(message) => {
                            let said = match &message {
                                Some(_) => "denied, with the reason given",
                                None => "denied",
                            };
                            (
                                Decision::Deny {
                                    message,
                                    source: Some(SOURCE.into()),
                                },
                                said.to_owned(),
                            )
                        }
                        Choice::Cancelled => return Err(End::Quit("Ctrl-C".into())),
                    };
                    let lasting = matches!(
                        decision,
                        Decision::Approve {
                            always: Some(_),
                            ..
                        }
                    );
                    let result = self.client.decide(id, decision);
                    match result {
                        Err(e) if lasting && !self.client.is_closed() => {
                            self.tty
                                .say_wrapped(&format!(
                                    "gate watch: request {}: not always allowed: {e}",
                                    one_row(id, 20)
                                ))
                                .map_err(End::Failed)?;
                            always = None;
                        }
                        result => return self.report(id, &said, result),
                    }
                }
            }
            Ask::Question(question) => {
                let title = format!(
                    "gate watch: question {} from pid {}, waiting {}s{waiting}",
                    one_row(id, 20),
                    question.pid,
                    entry.age()
                );
                self.tty
                    .show_question(&title, question, ctrl_c)
                    .and_then(|()| self.tty.flush_input())
                    .map_err(End::Failed)?;
                let mut prompt = QuestionPrompt::new(question);
                let reply = loop {
                    match self.wait(&mut prompt, Some(entry.deadline))? {
                        Woke::Done(reply) => break reply,
                        Woke::Timeout => return self.out_of_time(id),
                        Woke::Broker => {
                            if self.settled_elsewhere(id)? {
                                return Ok(());
                            }
                        }
                    }
                };
                let (answer, said) = match reply {
                    Reply::Text(text) => (Answer::Text(text), "answered"),
                    Reply::Declined => (Answer::Declined { message: None }, "declined"),
                    Reply::Cancelled => return Err(End::Quit("Ctrl-C".into())),
                };
                let result = self.client.answer(id, answer);
                self.report(id, said, result)
            }
        }
    }

    /// Whether the request being prompted for was settled elsewhere; if so, say so.
    fn settled_elsewhere(&mut self, id: &str) -> Result<bool, End> {
        let how = self.current.as_ref().and_then(|c| c.settled.clone());
        match how {
            Some(how) => {
                let note = format!(
                    "gate watch: request {} settled elsewhere ({})",
                    one_row(id, 20),
                    settled_how(&how)
                );
                self.tty
                    .clear_line()
                    .and_then(|()| self.tty.say(&note))
                    .map_err(End::Failed)?;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn out_of_time(&mut self, id: &str) -> Result<(), End> {
        let note = format!(
            "gate watch: request {} ran out of time: its requester denies it",
            one_row(id, 20)
        );
        self.tty
            .clear_line()
            .and_then(|()| self.tty.say(&note))
            .map_err(End::Failed)
    }

    /// Say what an answer came to.
    /// The file `l` would add a lasting rule to, when it is offered for `request`: a
    /// request whose gate reads this person's always-allow file, for a command an allow
    /// rule can match (no shell syntax: gate never splits a command into its parts). The
    /// broker checks all of it again.
    fn always_offered(
        &self,
        request: &super::protocol::ApprovalRequest,
    ) -> Option<std::path::PathBuf> {
        let ours = self.always_file.as_ref()?;
        let text = crate::policy::trim_blanks(&request.command);
        let offered = request.remember_supported
            && request.always_file.as_deref().map(Path::new) == Some(ours.as_path())
            && crate::policy::validate_rule(text).is_ok();
        offered.then(|| ours.clone())
    }

    fn report(&mut self, id: &str, said: &str, result: Result<Settle, String>) -> Result<(), End> {
        let id = one_row(id, 20);
        let line = match result {
            Ok(Settle::Answered) => format!("gate watch: request {id} {said}: answered"),
            Ok(Settle::AlreadySettled) => {
                format!("gate watch: request {id}: already settled, your answer was not used")
            }
            Ok(Settle::NotFound) => format!("gate watch: request {id}: not found"),
            Err(e) => format!("gate watch: request {id}: the answer was not taken: {e}"),
        };
        self.tty.say(&line).map_err(End::Failed)
    }

    /// Drive `prompt` on the terminal while watching the broker and the signals.
    fn wait<P: super::tty::Prompt>(
        &mut self,
        prompt: &mut P,
        deadline: Option<Instant>,
    ) -> Result<Woke<P::Out>, End> {
        // Events already read (while waiting for a reply) would never wake a poll.
        self.take_buffered()?;
        if self.current.as_ref().is_some_and(|c| c.settled.is_some()) {
            return Ok(Woke::Broker);
        }
        let wake: [BorrowedFd<'_>; 2] = [self.client.fd(), self.interrupts.fd()];
        match self.tty.drive(prompt, deadline, &wake) {
            Step::Done(out) => Ok(Woke::Done(out)),
            Step::Timeout => Ok(Woke::Timeout),
            Step::Woken(0) => {
                self.take_events()?;
                Ok(Woke::Broker)
            }
            Step::Woken(_) => {
                let name = match self.interrupts.take() {
                    Some(signal) => signal.as_str().to_owned(),
                    None => "a signal".to_owned(),
                };
                Err(End::Quit(name))
            }
            Step::Failed(e) => Err(End::Failed(format!("the terminal failed: {e}"))),
        }
    }

    /// The broker's connection is readable: take what it sent.
    fn take_events(&mut self) -> Result<(), End> {
        let within = Some(Instant::now() + LINE_WITHIN);
        match self.client.next_event(within, None) {
            Ok(Some(event)) => self.handle(event)?,
            Ok(None) => {}
            Err(e) => return Err(End::BrokerGone(e)),
        }
        self.take_buffered()
    }

    /// Take the events already received.
    fn take_buffered(&mut self) -> Result<(), End> {
        while self.client.has_buffered_event() {
            let within = Some(Instant::now() + LINE_WITHIN);
            match self.client.next_event(within, None) {
                Ok(Some(event)) => self.handle(event)?,
                Ok(None) => break,
                Err(e) => return Err(End::BrokerGone(e)),
            }
        }
        Ok(())
    }

    fn handle(&mut self, event: WatchEvent) -> Result<(), End> {
        match event {
            WatchEvent::Closed => Err(End::BrokerGone(
                "the broker closed the connection (it stopped)".into(),
            )),
            WatchEvent::Request(request) => {
                let known = self.current.as_ref().is_some_and(|c| c.id == request.id)
                    || self.queue.iter().any(|e| e.request.id == request.id);
                if known {
                    return Ok(());
                }
                let left = request
                    .ask
                    .timeout_seconds()
                    .saturating_sub(request.age_seconds);
                let id = request.id.clone();
                self.alert(&request)?;
                let now = Instant::now();
                self.queue.push_back(Entry {
                    request,
                    received: now,
                    deadline: now + Duration::from_secs(left),
                });
                if self.current.is_some() {
                    let n = self.queue.len();
                    let note = format!(
                        "gate watch: request {} arrived; {n} waiting after this one",
                        one_row(&id, 20)
                    );
                    self.tty.note(&note).map_err(End::Failed)?;
                }
                Ok(())
            }
            WatchEvent::Settled { id, how } => {
                if let Some(current) = self.current.as_mut().filter(|c| c.id == id) {
                    current.settled.get_or_insert(how);
                    return Ok(());
                }
                let before = self.queue.len();
                self.queue.retain(|e| e.request.id != id);
                if self.queue.len() < before {
                    let note = format!(
                        "gate watch: waiting request {} settled elsewhere ({})",
                        one_row(&id, 20),
                        settled_how(&how)
                    );
                    self.tty.note(&note).map_err(End::Failed)?;
                }
                Ok(())
            }
        }
    }
}

impl Watch<'_> {
    /// A new request: ring the bell, say in the window title how many wait, and start
    /// `notify-send` where it is on PATH (without waiting for it; its failure is no
    /// concern of the approver's).
    fn alert(&mut self, request: &PendingRequest) -> Result<(), End> {
        if !self.alerts.titled {
            self.tty.title_stack(true).map_err(End::Failed)?;
            self.alerts.titled = true;
        }
        let waiting = self.queue.len() + 1 + usize::from(self.current.is_some());
        let title = match waiting {
            1 => "gate watch: 1 request waits".to_owned(),
            n => format!("gate watch: {n} requests wait"),
        };
        self.tty.alert(&title).map_err(End::Failed)?;
        self.alerts.idle = false;
        self.alerts
            .notifiers
            .retain_mut(|child| child.try_wait().ok().flatten().is_none());
        if self.alerts.notifiers.len() >= MAX_NOTIFIERS {
            return Ok(());
        }
        if let Some(program) = notify_send() {
            let (summary, body) = notification(request);
            let started = std::process::Command::new(program)
                .args(["--app-name=gate", "--", &summary, &body])
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn();
            if let Ok(child) = started {
                self.alerts.notifiers.push(child);
            }
        }
        Ok(())
    }

    /// Nothing waits any more: say so in the title (when gate watch set it).
    fn idle_title(&mut self) -> Result<(), End> {
        if self.alerts.titled && !self.alerts.idle {
            self.tty
                .set_title("gate watch: no request waits")
                .map_err(End::Failed)?;
            self.alerts.idle = true;
        }
        Ok(())
    }
}

fn approve(remember: bool) -> Decision {
    Decision::Approve {
        remember,
        remember_rule: None,
        always: None,
        kept: false,
        source: Some(SOURCE.into()),
    }
}

/// The broker's word for how a request closed, for people.
fn settled_how(how: &str) -> String {
    match how {
        "requester_gone" => "its requester went away".into(),
        "broker_stopped" => "the broker stopped".into(),
        "protocol_error" => "a protocol error".into(),
        other => one_row(&other.replace('_', " "), 30),
    }
}
