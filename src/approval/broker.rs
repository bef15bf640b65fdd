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

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{SigSet, Signal};
use nix::sys::socket::{
    AddressFamily, Backlog, MsgFlags, SockFlag, SockType, UnixAddr, bind, getsockopt, listen, send,
    socket, sockopt,
};

use super::paths::{ensure_private_dir, token_path};
use super::protocol::{
    self, Answer, ApprovalRequest, ApproverMessage, Ask, BrokerReply, Decision, MAX_LINE,
    PendingRequest, Settle,
};
use super::signals::Interrupts;
use crate::config::Settings;
use crate::output::{GATE_ERROR, say};
use crate::policy::{CommandText, Remembered};

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

/// The longest socket path a Unix address holds (`sun_path` less its NUL).
const MAX_SOCKET_PATH: usize = 107;

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
// The socket, the token and the lock.

/// `socket` made absolute (from the working directory), if a Unix socket can have it as
/// its path.
fn socket_path(socket: &Path) -> Result<PathBuf, String> {
    let socket = if socket.is_absolute() {
        socket.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|e| format!("cannot find the working directory: {e}"))?
            .join(socket)
    };
    if socket.as_os_str().len() > MAX_SOCKET_PATH {
        return Err(format!(
            "the socket path {} is {} bytes long; a Unix socket path holds at most {MAX_SOCKET_PATH}",
            socket.display(),
            socket.as_os_str().len()
        ));
    }
    Ok(socket)
}

/// The listening socket and the files beside it, removed again when dropped.
struct Endpoint {
    socket: PathBuf,
    token_path: PathBuf,
    token: String,
    listener: UnixListener,
    /// Device and inode of the socket bound here: only that file is removed at the end.
    bound: (u64, u64),
    /// Held while the broker runs, so that two brokers never race for one socket path.
    _lock: Flock<File>,
}

impl Endpoint {
    fn open(socket: &Path) -> Result<Endpoint, String> {
        let socket = socket_path(socket)?;
        let (Some(dir), Some(name)) = (socket.parent(), socket.file_name()) else {
            return Err(format!("{} cannot be a socket path", socket.display()));
        };
        ensure_private_dir(dir).map_err(|e| {
            format!(
                "the socket's directory must be private to you (a directory of yours, mode 0700): {e}"
            )
        })?;
        let lock = take_lock(&socket)?;
        check_existing(&socket)?;
        let token = new_token()?;
        let token_path = token_path(&socket);
        crate::replace::replace(&token_path, format!("{token}\n").as_bytes(), 0o600)
            .map_err(|e| format!("cannot write {}: {e}", token_path.display()))?;
        match bind_socket(dir, name.as_encoded_bytes(), &socket) {
            Ok((listener, bound)) => Ok(Endpoint {
                socket,
                token_path,
                token,
                listener,
                bound,
                _lock: lock,
            }),
            Err(e) => {
                let _ = fs::remove_file(&token_path);
                Err(e)
            }
        }
    }

    /// Remove the socket (if it is still the one bound here) and the token, so that
    /// nobody can reach this broker any more.
    fn remove_files(&self) {
        if let Ok(meta) = fs::symlink_metadata(&self.socket) {
            if (meta.dev(), meta.ino()) == self.bound {
                let _ = fs::remove_file(&self.socket);
            }
        }
        let _ = fs::remove_file(&self.token_path);
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.remove_files();
    }
}

/// The socket `--requests-socket` names: it takes requests from every user that can
/// reach it (mode 0666) and never an approver, whatever token one sends. It is for
/// requesters that are not the broker's user (`approval.approver` names the broker's
/// user for them) and for the far end of `ssh -R`, where every connection comes from
/// the broker's own user's ssh client and the broker could not tell a person's
/// approver tool from a model's.
struct RequestsEndpoint {
    socket: PathBuf,
    listener: UnixListener,
    bound: (u64, u64),
    _lock: Flock<File>,
}

impl RequestsEndpoint {
    fn open(socket: &Path) -> Result<RequestsEndpoint, String> {
        let socket = socket_path(socket)?;
        let (Some(dir), Some(name)) = (socket.parent(), socket.file_name()) else {
            return Err(format!("{} cannot be a socket path", socket.display()));
        };
        check_requests_dir(dir)?;
        let lock = take_lock(&socket)?;
        check_existing(&socket)?;
        let (listener, bound) = bind_socket(dir, name.as_encoded_bytes(), &socket)?;
        // Bound 0600 and listening before it has its name; open it only now.
        if let Err(e) = fs::set_permissions(&socket, fs::Permissions::from_mode(0o666)) {
            let _ = fs::remove_file(&socket);
            return Err(format!("cannot chmod {}: {e}", socket.display()));
        }
        Ok(RequestsEndpoint {
            socket,
            listener,
            bound,
            _lock: lock,
        })
    }
}

impl Drop for RequestsEndpoint {
    fn drop(&mut self) {
        if let Ok(meta) = fs::symlink_metadata(&self.socket) {
            if (meta.dev(), meta.ino()) == self.bound {
                let _ = fs::remove_file(&self.socket);
            }
        }
    }
}

/// The requests socket's directory must be this user's (or root's) and writable by
/// nobody else, so that nobody else can put another socket in its place; it need not
/// be private, since other users must reach the socket.
fn check_requests_dir(dir: &Path) -> Result<(), String> {
    let shown = dir.display();
    let meta = fs::symlink_metadata(dir)
        .map_err(|e| format!("cannot use {shown} for the requests socket: {e}; create it first"))?;
    let uid = nix::unistd::geteuid().as_raw();
    if !meta.file_type().is_dir() {
        return Err(format!("{shown} is not a directory"));
    }
    if meta.uid() != uid && meta.uid() != 0 {
        return Err(format!(
            "the requests socket's directory {shown} belongs to uid {}, not to you (uid {uid}) or root",
            meta.uid()
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(format!(
            "the requests socket's directory {shown} is writable by others (mode {:04o}), who could replace the socket; run chmod go-w {shown}",
            meta.mode() & 0o7777
        ));
    }
    Ok(())
}

/// Lock `SOCKET.lock` (created 0600 beside the socket) for the broker's lifetime.
fn take_lock(socket: &Path) -> Result<Flock<File>, String> {
    let mut name = socket.as_os_str().to_owned();
    name.push(".lock");
    let path = PathBuf::from(name);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&path)
        .map_err(|e| format!("cannot open the lock file {}: {e}", path.display()))?;
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot inspect {}: {e}", path.display()))?;
    if !meta.is_file() || meta.uid() != nix::unistd::geteuid().as_raw() {
        return Err(format!(
            "{} is not a file of yours; remove it and start again",
            path.display()
        ));
    }
    Flock::lock(file, FlockArg::LockExclusiveNonblock).map_err(|(_, e)| match e {
        Errno::EWOULDBLOCK => format!(
            "a broker is already listening on {} (another `gate serve` holds {})",
            socket.display(),
            path.display()
        ),
        e => format!("cannot lock {}: {e}", path.display()),
    })
}

/// What is at the socket path already may be replaced only when it is a socket of this
/// user's that nothing listens on.
fn check_existing(socket: &Path) -> Result<(), String> {
    let shown = socket.display();
    let meta = match fs::symlink_metadata(socket) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!("cannot inspect {shown}: {e}")),
    };
    if !meta.file_type().is_socket() {
        return Err(format!(
            "{shown} exists and is not a socket; remove it or choose another path with --socket"
        ));
    }
    let uid = nix::unistd::geteuid().as_raw();
    if meta.uid() != uid {
        return Err(format!(
            "the socket {shown} belongs to uid {}, not to you (uid {uid}); choose another path with --socket",
            meta.uid()
        ));
    }
    match UnixStream::connect(socket) {
        Ok(_) => Err(format!("a broker is already listening on {shown}")),
        Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
            log(&format!("replacing the stale socket {shown}"));
            Ok(())
        }
        Err(e) => Err(format!(
            "cannot tell whether a broker listens on {shown}: {e}"
        )),
    }
}

/// 32 random bytes from the kernel (getrandom(2)), as hex.
fn new_token() -> Result<String, String> {
    crate::random::hex(32).map_err(|e| format!("cannot make the token: getrandom failed: {e}"))
}

/// Bind a socket under a temporary name in `dir`, make it 0600, listen, and rename it to
/// `socket`: the socket never exists at its real path with a looser mode, or before it
/// listens.
fn bind_socket(
    dir: &Path,
    name: &[u8],
    socket: &Path,
) -> Result<(UnixListener, (u64, u64)), String> {
    // Short, so that it fits wherever the real name fits.
    let mut temp_name = format!(".s{}", std::process::id());
    if temp_name.len() > name.len() {
        temp_name.truncate(name.len().max(2));
    }
    let temp = dir.join(&temp_name);
    let _ = fs::remove_file(&temp);
    let result = (|| {
        let fd = socket_fd().map_err(|e| format!("cannot create a socket: {e}"))?;
        let addr = UnixAddr::new(&temp)
            .map_err(|e| format!("cannot use {} as a socket path: {e}", temp.display()))?;
        bind(fd.as_raw_fd(), &addr).map_err(|e| format!("cannot bind {}: {e}", temp.display()))?;
        fs::set_permissions(&temp, fs::Permissions::from_mode(0o600))
            .map_err(|e| format!("cannot chmod {}: {e}", temp.display()))?;
        listen(&fd, Backlog::MAXCONN)
            .map_err(|e| format!("cannot listen on {}: {e}", temp.display()))?;
        let meta = fs::symlink_metadata(&temp)
            .map_err(|e| format!("cannot inspect {}: {e}", temp.display()))?;
        fs::rename(&temp, socket)
            .map_err(|e| format!("cannot move the socket to {}: {e}", socket.display()))?;
        Ok((UnixListener::from(fd), (meta.dev(), meta.ino())))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

fn socket_fd() -> nix::Result<std::os::fd::OwnedFd> {
    socket(
        AddressFamily::Unix,
        SockType::Stream,
        SockFlag::SOCK_CLOEXEC | SockFlag::SOCK_NONBLOCK,
        None,
    )
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

/// The end of the audit log, where a record written in the last seconds is.
fn log_tail(path: &Path) -> io::Result<Vec<u8>> {
    use std::io::{Seek, SeekFrom};
    const TAIL: u64 = 4 << 20;
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(TAIL)))?;
    let mut tail = Vec::new();
    file.read_to_end(&mut tail)?;
    Ok(tail)
}

/// How early before its timeout a requester that closes still counts as timed out: it
/// counts its timeout from before it connected, the broker from when the request came.
const TIMEOUT_SLACK: Duration = Duration::from_millis(500);

/// Why a requester closed with its request open, for the log, from how long the request
/// waited and its timeout (`None`: it was no longer open): at its timeout the requester
/// gave up, which is a denial; before it, it was killed or interrupted.
fn gone_why(waited: Option<(Duration, Duration)>) -> String {
    match waited {
        Some((waited, timeout)) if waited + TIMEOUT_SLACK.min(timeout / 2) >= timeout => {
            format!(
                "timed out: nobody answered within {} s, so the requester denied it",
                timeout.as_secs()
            )
        }
        Some((waited, _)) => format!(
            "the requester went away after {:.1} s, before its timeout (killed or \
             interrupted); nothing was run",
            waited.as_secs_f64()
        ),
        None => "the requester went away".to_owned(),
    }
}

/// How long a requester that went away has to write its own record (a gate that gave
/// up at its timeout does, at once) before the broker writes one for it.
const GONE_GRACE: Duration = Duration::from_secs(2);

/// How many settled call ids the broker remembers: older ones are `not_found`. At most
/// 128 bytes each, so a few hundred kilobytes at worst.
const SETTLED_CALLS_KEPT: usize = 4096;

/// The call ids of the last [`SETTLED_CALLS_KEPT`] settled requests.
#[derive(Default)]
struct RecentCalls {
    order: std::collections::VecDeque<String>,
    set: std::collections::HashSet<String>,
}

impl RecentCalls {
    fn insert(&mut self, call_id: &str) {
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

    fn contains(&self, call_id: &str) -> bool {
        self.set.contains(call_id)
    }
}

/// What an id an approver names comes to.
enum Lookup {
    Open(u64),
    Settled,
    NotFound,
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

    /// A requester killed while it waited (Codex kills its command's process group)
    /// leaves no record of its own: once its grace is over, write one for it unless the
    /// log has one with its call id. Nothing of the command ran: gate runs a command
    /// only after its answer.
    fn record_gone(&mut self, now: Instant) {
        let (due, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut self.gone)
            .into_iter()
            .partition(|(at, _)| *at <= now);
        self.gone = waiting;
        let Some(path) = self.audit_log.clone() else {
            return;
        };
        for (_, request) in due {
            let needle = format!("\"call_id\":{}", serde_json::json!(request.call_id));
            let recorded = log_tail(&path)
                .map(|log| log.windows(needle.len()).any(|w| w == needle.as_bytes()))
                .unwrap_or(false);
            if recorded {
                continue;
            }
            let record = crate::audit::Record {
                call_id: &request.call_id,
                session_id: &request.session_id,
                level: &request.level,
                kind: &request.kind,
                command: Some(&request.command),
                decision: "deny",
                decided_by: "requester-gone",
                rule: None,
                rule_origin: None,
                message: Some(
                    "recorded by the broker: the requester went away before an answer \
                     (killed or interrupted) and left no record; nothing was run",
                ),
                sandbox: None,
                wrapper: None,
                looks_like: None,
                script_sha256: None,
            };
            let line = crate::audit::encode_for(
                &record,
                std::time::SystemTime::now(),
                request.pid,
                Some(&request.work_dir),
            );
            if let Err(e) = crate::audit::append(&path, &|n| std::env::var_os(n), &line) {
                log(&format!(
                    "cannot record request {} in {}: {e}",
                    request.call_id,
                    path.display()
                ));
            }
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

    /// The first line says who is there: a requester or an approver tool.
    fn first_line(&mut self, key: u64, line: &[u8]) {
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
    fn remembered_answer(&self, ask: &Ask) -> Option<Decision> {
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
    fn settle(&mut self, id: u64, how: &str, by: Option<&str>, reply: Option<Vec<u8>>) {
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
    fn lookup(&self, id: &str) -> Lookup {
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

    fn approver_line(&mut self, key: u64, line: &[u8]) {
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

    fn decide(&mut self, key: u64, id: &str, decision: Decision) {
        let n = match self.lookup(id) {
            Lookup::NotFound => return self.result(key, id, Settle::NotFound),
            Lookup::Settled => return self.result(key, id, Settle::AlreadySettled),
            Lookup::Open(n) => n,
        };
        let Some(open) = self.open.get(&n) else {
            return self.result(key, id, Settle::AlreadySettled);
        };
        let Ask::Approval(request) = &open.ask else {
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
                                match super::always::add(&file, &rule, exact, &note) {
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
        let n = match self.lookup(id) {
            Lookup::NotFound => return self.result(key, id, Settle::NotFound),
            Lookup::Settled => return self.result(key, id, Settle::AlreadySettled),
            Lookup::Open(n) => n,
        };
        let Some(open) = self.open.get(&n) else {
            return self.result(key, id, Settle::AlreadySettled);
        };
        let Ask::Question(question) = &open.ask else {
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

/// A `request` line for open request `id`.
fn request_line(id: u64, open: &Open) -> Vec<u8> {
    BrokerReply::Request(PendingRequest {
        id: id.to_string(),
        ask: open.ask.clone(),
        age_seconds: open.since.elapsed().as_secs(),
    })
    .encode()
}

impl Broker {
    /// An approver tool that runs with no_new_privs descends from a command gate ran (or
    /// another sandbox): whatever token it has, it may not list or answer anything
    /// ([`super::peer`]). True when it was refused.
    fn refuse_a_marked_approver(&mut self, key: u64) -> bool {
        let Some(conn) = self.conns.get(&key) else {
            return true;
        };
        let why = match super::peer::identify(conn.stream.as_fd()) {
            Ok(super::peer::Peer::Unmarked { .. }) => return false,
            Ok(super::peer::Peer::Marked { pid }) => {
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
fn same_token(given: &[u8], expected: &[u8]) -> bool {
    if given.len() != expected.len() {
        return false;
    }
    let difference = given
        .iter()
        .zip(expected)
        .fold(0u8, |acc, (a, b)| acc | (a ^ b));
    std::hint::black_box(difference) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_requester_gone_at_its_timeout_timed_out_and_one_gone_before_went_away() {
        let s = Duration::from_secs;
        let ms = Duration::from_millis;
        for (waited, timeout, timed_out) in [
            (s(60), s(60), true),
            (s(61), s(60), true),
            // It counted from before it connected.
            (ms(59_600), s(60), true),
            (s(59), s(60), false),
            (s(1), s(60), false),
            (ms(800), s(1), true),
            (ms(400), s(1), false),
        ] {
            let why = gone_why(Some((waited, timeout)));
            assert_eq!(
                why.starts_with("timed out: nobody answered within"),
                timed_out,
                "{waited:?} of {timeout:?}: {why}"
            );
            assert_eq!(why.contains("went away"), !timed_out, "{why}");
        }
    }

    #[test]
    fn settled_call_ids_are_kept_up_to_the_bound_oldest_first_out() {
        let mut recent = RecentCalls::default();
        recent.insert("first");
        recent.insert("first");
        for n in 1..SETTLED_CALLS_KEPT {
            recent.insert(&format!("c{n}"));
        }
        assert!(recent.contains("first") && recent.contains("c1"));
        assert_eq!(recent.order.len(), SETTLED_CALLS_KEPT);
        recent.insert("one more");
        assert!(!recent.contains("first"), "the oldest goes first");
        assert!(recent.contains("c1") && recent.contains("one more"));
        assert_eq!(recent.set.len(), SETTLED_CALLS_KEPT);
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(same_token(b"abcd", b"abcd"));
        assert!(!same_token(b"abcd", b"abce"));
        assert!(!same_token(b"abc", b"abcd"));
        assert!(!same_token(b"", b"a"));
    }

    #[test]
    fn a_token_is_64_hex_digits_and_fresh() {
        let a = new_token().unwrap();
        let b = new_token().unwrap();
        assert_eq!(a.len(), 64);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
