//! Where the broker listens: the approvers' socket with its token file beside it, and
//! the requests-only socket (`--requests-socket`), each bound under a temporary name,
//! made 0600 and listening before it gets its real name, held by a lock file so that
//! two brokers never race for one path, and removed again when the broker ends (only
//! if it is still the socket bound here). It must not accept or read a connection:
//! the loop in [`super`] does.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};
use nix::sys::socket::{
    AddressFamily, Backlog, SockFlag, SockType, UnixAddr, bind, listen, socket,
};

use super::log;
use crate::approval::paths::{ensure_private_dir, token_path};

/// The longest socket path a Unix address holds (`sun_path` less its NUL).
const MAX_SOCKET_PATH: usize = 107;

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
pub(super) struct Endpoint {
    pub(super) socket: PathBuf,
    pub(super) token_path: PathBuf,
    pub(super) token: String,
    pub(super) listener: UnixListener,
    /// Device and inode of the socket bound here: only that file is removed at the end.
    bound: (u64, u64),
    /// Held while the broker runs, so that two brokers never race for one socket path.
    _lock: Flock<File>,
}

impl Endpoint {
    pub(super) fn open(socket: &Path) -> Result<Endpoint, String> {
        let claim = claim(socket, |dir| {
            ensure_private_dir(dir).map_err(|e| {
                format!(
                    "the socket's directory must be private to you (a directory of yours, mode 0700): {e}"
                )
            })
        })?;
        let token = new_token()?;
        let token_path = token_path(&claim.socket);
        crate::replace::replace(&token_path, format!("{token}\n").as_bytes(), 0o600)
            .map_err(|e| format!("cannot write {}: {e}", token_path.display()))?;
        match claim.bind() {
            Ok((listener, bound)) => Ok(Endpoint {
                socket: claim.socket,
                token_path,
                token,
                listener,
                bound,
                _lock: claim.lock,
            }),
            Err(e) => {
                let _ = fs::remove_file(&token_path);
                Err(e)
            }
        }
    }

    /// Remove the socket (if it is still the one bound here) and the token, so that
    /// nobody can reach this broker any more.
    pub(super) fn remove_files(&self) {
        remove_if_bound(&self.socket, self.bound);
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
pub(super) struct RequestsEndpoint {
    pub(super) socket: PathBuf,
    pub(super) listener: UnixListener,
    bound: (u64, u64),
    _lock: Flock<File>,
}

impl RequestsEndpoint {
    pub(super) fn open(socket: &Path) -> Result<RequestsEndpoint, String> {
        let claim = claim(socket, check_requests_dir)?;
        let (listener, bound) = claim.bind()?;
        // Bound 0600 and listening before it has its name; open it only now.
        if let Err(e) = fs::set_permissions(&claim.socket, fs::Permissions::from_mode(0o666)) {
            let _ = fs::remove_file(&claim.socket);
            return Err(format!("cannot chmod {}: {e}", claim.socket.display()));
        }
        Ok(RequestsEndpoint {
            socket: claim.socket,
            listener,
            bound,
            _lock: claim.lock,
        })
    }
}

impl Drop for RequestsEndpoint {
    fn drop(&mut self) {
        remove_if_bound(&self.socket, self.bound);
    }
}

/// A socket path this broker holds the lock of, its directory checked, and nothing
/// listening there: ready to bind.
struct Claim {
    socket: PathBuf,
    dir: PathBuf,
    name: OsString,
    lock: Flock<File>,
}

/// Claim `socket` (made absolute) once `check_dir` accepts its directory: take its
/// lock, and check that what is at the path already may be replaced.
fn claim(
    socket: &Path,
    check_dir: impl FnOnce(&Path) -> Result<(), String>,
) -> Result<Claim, String> {
    let socket = socket_path(socket)?;
    let (Some(dir), Some(name)) = (socket.parent(), socket.file_name()) else {
        return Err(format!("{} cannot be a socket path", socket.display()));
    };
    let (dir, name) = (dir.to_path_buf(), name.to_owned());
    check_dir(&dir)?;
    let lock = take_lock(&socket)?;
    check_existing(&socket)?;
    Ok(Claim {
        socket,
        dir,
        name,
        lock,
    })
}

impl Claim {
    fn bind(&self) -> Result<(UnixListener, (u64, u64)), String> {
        bind_socket(&self.dir, self.name.as_encoded_bytes(), &self.socket)
    }
}

/// Remove the socket at `socket` if it is still the one bound here (device and inode
/// `bound`): never one another broker put there since.
fn remove_if_bound(socket: &Path, bound: (u64, u64)) {
    if let Ok(meta) = fs::symlink_metadata(socket) {
        if (meta.dev(), meta.ino()) == bound {
            let _ = fs::remove_file(socket);
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
pub(super) fn new_token() -> Result<String, String> {
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
