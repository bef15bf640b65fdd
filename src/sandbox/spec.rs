//! From settings to a [`Spec`]: the defaults, the workspace, and every path made
//! canonical. Paths that do not exist are left out: hiding or protecting nothing costs
//! nothing, and not granting write is the safe side.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use nix::fcntl::OFlag;
use nix::sys::stat::Mode;

use super::listing::{Listed, Listing};
use super::paths::{same, under};
use super::{Domains, Network, SandboxError, Spec};
use crate::config::SandboxSettings;

/// Secrets hidden by default, relative to the home directory.
/// Package-registry and vault tokens are files in directories that also hold
/// ordinary settings (`~/.cargo`), so the file alone is hidden; the walk around it
/// costs one listing of that directory, and nothing when the file does not exist.
pub const DEFAULT_DENY_READ: [&str; 16] = [
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
    ".config/gh",
    ".password-store",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials.toml",
    ".cargo/credentials",
    ".vault-token",
];

/// Files that run later outside the sandbox, relative to the home directory: readable,
/// never writable, even when the workspace contains them.
pub const DEFAULT_DENY_WRITE: [&str; 16] = [
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".config/fish",
    ".config/gate",
    // Codex CLI's settings, rules and instructions: it applies them outside the sandbox
    // (sandbox mode, approval policy, programs it starts), and a command Codex runs can
    // be given that directory as its working directory (`exec_command`'s `workdir`).
    ".codex",
    // The other agents' own settings, which they apply outside gate at their next start:
    // Claude Code's hooks and permissions (`~/.claude/settings.json`), Gemini CLI's and
    // Qwen Code's MCP servers and tool settings (`settings.json`). The agents write
    // there themselves, outside the sandbox; their commands have no reason to.
    ".claude",
    ".gemini",
    ".qwen",
];

/// Root's own secrets, hidden when gate runs as root: files and directories that uid 0
/// owns and nobody else may read, which root without capabilities still reads as their
/// owner. The password hashes and their backups, old passwords, TLS, VPN, Wi-Fi,
/// Kerberos and PPP keys, the database maintenance password Debian keeps for MySQL.
/// Root's home gets the defaults above too, whatever `HOME` is ([`ROOT_HOME`]).
pub const ROOT_DENY_READ: [&str; 19] = [
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/shadow-",
    "/etc/gshadow-",
    "/var/backups/shadow.bak",
    "/var/backups/gshadow.bak",
    "/etc/security/opasswd",
    "/etc/ssl/private",
    "/etc/krb5.keytab",
    "/etc/NetworkManager/system-connections",
    "/etc/wpa_supplicant",
    "/etc/wireguard",
    "/etc/letsencrypt",
    "/etc/ipsec.secrets",
    "/etc/ipsec.d/private",
    "/etc/ppp/chap-secrets",
    "/etc/ppp/pap-secrets",
    "/etc/mysql/debian.cnf",
    "/var/lib/samba/private",
];

/// Root's home directory, where [`DEFAULT_DENY_READ`] is hidden from root even when
/// `HOME` is elsewhere.
pub const ROOT_HOME: &str = "/root";

/// Directories where secrets lie beside ordinary settings: as root, every entry of one
/// that uid 0 owns and others may not read is hidden too (the ssh host keys
/// `ssh_host_*_key`, whatever their type, beside their public halves; PPP and OpenVPN
/// keys under any name). One listing and a `stat` per entry, only where they exist.
pub const ROOT_SCANNED: [&str; 3] = ["/etc/ssh", "/etc/ppp", "/etc/openvpn"];

/// The paths [`ROOT_DENY_READ`] and [`ROOT_SCANNED`] name, as given (they are made
/// canonical with the rest).
fn root_secrets() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = ROOT_DENY_READ.iter().map(PathBuf::from).collect();
    for dir in ROOT_SCANNED {
        out.extend(root_only_entries(Path::new(dir)));
    }
    out
}

/// The entries of `dir` that uid 0 owns and others may not read (symbolic links
/// aside: the entry itself counts, never where it points).
fn root_only_entries(dir: &Path) -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|entry| {
            entry.metadata().is_ok_and(|meta| {
                meta.uid() == 0 && meta.mode() & 0o004 == 0 && !meta.file_type().is_symlink()
            })
        })
        .map(|entry| entry.path())
        .collect()
}

fn error(message: impl Into<String>) -> SandboxError {
    SandboxError(message.into())
}

/// The canonical form of `path`, or `None` when it does not exist. Most default paths
/// do not exist, and one `lstat` says so more cheaply than resolving each component.
fn existing(path: &Path) -> Option<PathBuf> {
    std::fs::symlink_metadata(path).ok()?;
    path.canonicalize().ok()
}

fn absolute_var(env: &dyn Fn(&str) -> Option<OsString>, name: &str) -> Option<PathBuf> {
    env(name).map(PathBuf::from).filter(|p| p.is_absolute())
}

/// What the safe level hides from reading, as given: the secrets in the home directory,
/// the broker's directory, the configured `deny_read`, and root's secrets as root.
fn deny_read_wanted(
    settings: &SandboxSettings,
    cwd: &Path,
    env: &dyn Fn(&str) -> Option<OsString>,
    is_root: bool,
    home: &Path,
) -> Vec<PathBuf> {
    let mut deny_read: Vec<PathBuf> = DEFAULT_DENY_READ
        .iter()
        .map(|p| home.join(p))
        // The broker's socket and token: a command that could reach them could approve
        // its own requests. (Not when the directory is the last-resort one in /tmp: see
        // `approval::paths::private_dir`.)
        .chain(Some(crate::approval::paths::private_dir(env)).filter(|d| !in_temporary(d)))
        .chain(settings.deny_read.iter().map(|p| cwd.join(p)))
        .collect();
    if is_root {
        // uid 0 owns these, so without capabilities it can still read them; and root's
        // own home holds root's keys whatever HOME says.
        deny_read.extend(root_secrets());
        if home != Path::new(ROOT_HOME) {
            deny_read.extend(
                DEFAULT_DENY_READ
                    .iter()
                    .map(|p| Path::new(ROOT_HOME).join(p)),
            );
        }
    }
    deny_read
}

/// A memo that starts with listings of the home directories: some thirty of the names
/// looked up are in HOME (and, as root, in /root), most of them missing, and one listing
/// answers for all (see `Listing`).
fn listed_homes(home: &Path, is_root: bool) -> Resolved {
    let mut resolved = Resolved::new();
    resolved.listings.extend(Listing::of(home));
    if is_root && home != Path::new(ROOT_HOME) {
        resolved.listings.extend(Listing::of(Path::new(ROOT_HOME)));
    }
    resolved
}

/// What the safe level hides from reading for a command in `cwd`, as [`build`] finds
/// it: canonical, existing, and with the other names mounts give the same files. The
/// read-only preset refuses to read the same places (`crate::files`). `None` when
/// `HOME` is not set (or not absolute), so the secrets in it cannot be found.
pub fn hidden(
    settings: &SandboxSettings,
    cwd: &Path,
    env: &dyn Fn(&str) -> Option<OsString>,
    is_root: bool,
) -> Option<Vec<PathBuf>> {
    let home = crate::xdg::home(env)?;
    let wanted = deny_read_wanted(settings, cwd, env, is_root, &home);
    let (mut hidden, _, _) = canonical_split(&wanted, &mut listed_homes(&home, is_root));
    if !hidden.is_empty() && !each_filesystem_mounted_once() {
        let mounts = read_proc("/proc/self/mountinfo")
            .map(|text| parse_mountinfo(&text))
            .unwrap_or_default();
        let more = aliases(&mounts, &hidden);
        extend_new(&mut hidden, more);
    }
    Some(hidden)
}

/// Where proc file systems are mounted, other than /proc: each holds the processes'
/// environments and memory too.
pub fn other_proc_mounts() -> Vec<PathBuf> {
    let Some(text) = read_proc("/proc/self/mountinfo") else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|line| {
            // The fields after " - " start with the file system's type.
            let (mount, fs) = line.split_once(" - ")?;
            let point = unescape(mount.split(' ').nth(4)?);
            (fs.split(' ').next() == Some("proc") && point != Path::new("/proc")).then_some(point)
        })
        .collect()
}

/// Build the spec for a run in `cwd`. `protect`: more files to keep read-only, such as
/// the configuration files gate read and its audit log, wherever they are.
pub fn build(
    settings: &SandboxSettings,
    cwd: &Path,
    env: &dyn Fn(&str) -> Option<OsString>,
    is_root: bool,
    protect: &[PathBuf],
) -> Result<Spec, SandboxError> {
    let home = crate::xdg::home(env).ok_or_else(|| {
        error(
            "HOME is not set (or not absolute), so the safe level cannot find the secrets it \
             hides (~/.ssh, ~/.aws, ...); nothing was run. Set HOME",
        )
    })?;
    let workspace = existing(cwd)
        .ok_or_else(|| error("the working directory no longer exists; nothing was run"))?;
    if workspace == Path::new("/") {
        return Err(error(
            "the safe level makes the working directory writable, and it is /; nothing was \
             run. Run the command from a project directory",
        ));
    }

    let deny_read_wanted = deny_read_wanted(settings, cwd, env, is_root, &home);
    let mut resolved_parents = listed_homes(&home, is_root);
    let (mut deny_read, missing_read, hidden_kinds) =
        canonical_split(&deny_read_wanted, &mut resolved_parents);
    if let Some(secret) = deny_read.iter().find(|d| under(&workspace, d)) {
        return Err(error(format!(
            "the working directory is inside {}, which the safe level hides; nothing was run",
            secret.display()
        )));
    }

    let config_home = crate::xdg::config_home(env).unwrap_or_else(|| home.join(".config"));
    let state_home = crate::xdg::state_home(env).unwrap_or_else(|| home.join(".local/state"));
    let deny_write_wanted: Vec<PathBuf> = DEFAULT_DENY_WRITE
        .iter()
        .map(|p| home.join(p))
        .chain([
            config_home.join("gate"),
            state_home.join("gate"),
            PathBuf::from(crate::config::SYSTEM_CONFIG),
        ])
        .chain(protect.iter().map(|p| cwd.join(p)))
        .collect();
    let (mut deny_write, missing_write, _) =
        canonical_split(&deny_write_wanted, &mut resolved_parents);

    // A second mount of the same tree (a bind mount of HOME elsewhere) is another way to
    // the same files: hide and protect them by every name.
    if (!deny_read.is_empty() || !deny_write.is_empty()) && !each_filesystem_mounted_once() {
        let mounts = read_proc("/proc/self/mountinfo")
            .map(|text| parse_mountinfo(&text))
            .unwrap_or_default();
        let read_aliases = aliases(&mounts, &deny_read);
        let write_aliases = aliases(&mounts, &deny_write);
        extend_new(&mut deny_read, read_aliases);
        extend_new(&mut deny_write, write_aliases);
    }

    // /tmp and /dev/shm must stay fully writable (compilers, package managers and shells
    // create files there), and a protected path inside one would take away the right to
    // create files directly in it. So protection stops at their door; the paths left
    // unprotected are reported. $TMPDIR is writable too, but as an ordinary root: it is
    // only an environment variable, and pointing it at $HOME must not unprotect ~/.bashrc.
    let temporary = canonical_set(&[PathBuf::from("/tmp"), PathBuf::from("/dev/shm")]);
    // Walking around a hidden path inside one would take that right away; covering it
    // (as root) does not, so whether this refuses is decided once the way is chosen.
    let unwalkable = hidden_in_temporary(&deny_read, &temporary)
        .map(|(hidden, temp)| hidden_there(hidden, temp, &home));
    let (unprotected, deny_write): (Vec<PathBuf>, Vec<PathBuf>) = deny_write
        .into_iter()
        .partition(|p| temporary.iter().any(|t| under(p, t)));

    // The workspace and the temporary directories are canonical already; only the rest
    // is resolved (each path costs a system call per component).
    let mut write = vec![workspace];
    extend_new(&mut write, temporary);
    let more: Vec<PathBuf> = absolute_var(env, "TMPDIR")
        .into_iter()
        .chain(settings.write.iter().map(|p| cwd.join(p)))
        .collect();
    extend_new(&mut write, canonical_set(&more));
    if write.iter().any(|w| w == Path::new("/")) {
        return Err(error(
            "a writable path of the safe level ($TMPDIR or --write / sandbox.write) is /, which \
             would make everything writable; nothing was run",
        ));
    }

    // A hidden or protected path that does not exist yet could be made by the command
    // in a writable root (~/.config/gate/config.toml with TMPDIR=$HOME, a first run's
    // audit log, ~/.ssh/authorized_keys). Where it would be, it is kept from being
    // made: the walk then grants the entries of its nearest existing directory one by
    // one, and that directory no right to create entries in it.
    let mut deny_write = deny_write;
    for path in missing_read.iter().chain(&missing_write) {
        let Some(future) = not_yet(path, &mut resolved_parents) else {
            continue;
        };
        if write.iter().any(|w| under(&future, w))
            && !temporary_roots(&write).any(|t| under(&future, t))
            && !deny_write.iter().any(|d| same(d, &future))
        {
            deny_write.push(future);
        }
    }

    // A domain list: TCP through the proxy only, with the user's own ports beside it
    // (Landlock handles TCP even when no port is allowed).
    let proxy = (!settings.allow_domains.is_empty() && !settings.network).then(|| Domains {
        allow: settings.allow_domains.clone(),
        deny: settings.deny_domains.clone(),
        resolve: settings.resolve.clone(),
    });
    let network = if settings.network {
        Network::On
    } else if settings.net_connect.is_empty() && settings.net_bind.is_empty() && proxy.is_none() {
        Network::Off
    } else {
        Network::Tcp {
            connect: settings.net_connect.clone(),
            bind: settings.net_bind.clone(),
        }
    };
    Ok(Spec {
        write,
        deny_read,
        hidden_kinds,
        deny_write,
        unprotected,
        terminals: handed_terminals(),
        network,
        proxy,
        unix_sockets: settings.unix_sockets,
        best_effort: settings.best_effort,
        require: settings.require.clone(),
        unwalkable,
    })
}

/// The terminals gate was handed: those on its standard descriptors and its controlling
/// terminal, by name. Other terminals of the same user (other sessions' /dev/pts/N) are
/// not granted: a command could read what is typed there and write a fake prompt.
fn handed_terminals() -> Vec<PathBuf> {
    use std::io::IsTerminal;
    let handed = [
        std::io::stdin().is_terminal(),
        std::io::stdout().is_terminal(),
        std::io::stderr().is_terminal(),
    ];
    let mut found: Vec<PathBuf> = (0..=2)
        .filter(|&fd| handed[fd])
        .filter_map(|fd| std::fs::read_link(format!("/proc/self/fd/{fd}")).ok())
        .collect();
    let controlling = has_controlling_terminal()
        .then(|| read_proc("/proc/self/stat"))
        .flatten()
        .and_then(|stat| pts_of_tty_nr(&stat));
    if let Some((path, rdev)) = controlling {
        // Only when the name is that device here (another devpts instance numbers its
        // own terminals).
        if std::fs::metadata(&path).is_ok_and(|m| {
            std::os::unix::fs::MetadataExt::rdev(&m) == rdev
                && std::os::unix::fs::FileTypeExt::is_char_device(&m.file_type())
        }) {
            found.push(path);
        }
    }
    let mut out = Vec::new();
    for path in found.into_iter().filter(|p| p.starts_with("/dev")) {
        if let Some(path) = existing(&path).filter(|p| !out.contains(p)) {
            out.push(path);
        }
    }
    out
}

/// Whether this process may have a controlling terminal. Opening `/dev/tty` fails with
/// `ENXIO` exactly when it has none, which is cheaper to learn than reading
/// `/proc/self/stat` (agents start commands without one). Anything else (it opened,
/// or there is no `/dev/tty` to ask) cannot rule one out.
fn has_controlling_terminal() -> bool {
    let flags = OFlag::O_RDONLY | OFlag::O_NOCTTY | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
    !matches!(
        nix::fcntl::open("/dev/tty", flags, Mode::empty()),
        Err(nix::errno::Errno::ENXIO)
    )
}

/// A file of /proc, read in one go: it reports no size, so a plain read would first ask
/// for it and then grow its buffer from 32 bytes, a system call per step.
fn read_proc(path: &str) -> Option<String> {
    use std::io::Read;
    let file = std::fs::File::open(path).ok()?;
    let mut bytes = Vec::with_capacity(16 * 1024);
    // Through `take`, which has no size probe.
    file.take(u64::MAX).read_to_end(&mut bytes).ok()?;
    String::from_utf8(bytes).ok()
}

/// From /proc/self/stat, the controlling terminal when it is a pseudo-terminal: its
/// name in /dev/pts and its device number.
fn pts_of_tty_nr(stat: &str) -> Option<(PathBuf, u64)> {
    // The command name (field 2) may hold spaces and parentheses: count from its end.
    let after = &stat[stat.rfind(')')? + 1..];
    // state, ppid, pgrp, session, tty_nr.
    let tty_nr: u64 = after.split_whitespace().nth(4)?.parse().ok()?;
    let major = (tty_nr >> 8) & 0xfff;
    let minor = (tty_nr & 0xff) | ((tty_nr >> 12) & 0xf_ff00);
    // Unix 98 pseudo-terminal slaves: majors 136 to 143, 256 minors each.
    if !(136..=143).contains(&major) {
        return None;
    }
    let index = (major - 136) * 256 + minor;
    let rdev = libc::makedev(major as u32, minor as u32);
    Some((PathBuf::from(format!("/dev/pts/{index}")), rdev))
}

/// Whether no filesystem is mounted twice in this mount namespace, so that no file has a
/// second name through another mount: asked of the kernel with `listmount` and one
/// `statmount` per mount for its device (Linux 6.8), which costs a fraction of
/// `/proc/self/mountinfo`, whose text the kernel writes out path by path. False when
/// it cannot tell (an older kernel, a refusal): then the mount table is read.
fn each_filesystem_mounted_once() -> bool {
    mount_devices().is_some_and(|mut devices| {
        let count = devices.len();
        devices.sort_unstable();
        devices.dedup();
        devices.len() == count
    })
}

/// `listmount` and `statmount` (linux/mount.h), the same numbers on these architectures.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
const SYS_STATMOUNT: libc::c_long = 457;
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
const SYS_LISTMOUNT: libc::c_long = 458;

/// `struct mnt_id_req`, its first published size (MNT_ID_REQ_SIZE_VER0).
#[repr(C)]
struct MntIdReq {
    size: u32,
    spare: u32,
    mnt_id: u64,
    param: u64,
}

/// `LSMT_ROOT`: list from the root mount of the namespace.
const LSMT_ROOT: u64 = u64::MAX;
/// `STATMOUNT_SB_BASIC`: the superblock's device, magic and flags.
const STATMOUNT_SB_BASIC: u64 = 1;

/// The device (major, minor) of every mount in this mount namespace, or `None` when the
/// kernel cannot say.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn mount_devices() -> Option<Vec<(u32, u32)>> {
    let mut ids: Vec<u64> = Vec::new();
    let mut chunk = [0u64; 256];
    let mut after = 0u64;
    loop {
        let req = MntIdReq {
            size: std::mem::size_of::<MntIdReq>() as u32,
            spare: 0,
            mnt_id: LSMT_ROOT,
            param: after,
        };
        // SAFETY: `req` is a valid mnt_id_req of the size it states; `chunk` has room
        // for the number of ids passed; both live for the whole call.
        let n = unsafe {
            libc::syscall(
                SYS_LISTMOUNT,
                &req as *const MntIdReq,
                chunk.as_mut_ptr(),
                chunk.len(),
                0u32,
            )
        };
        let n = usize::try_from(n).ok()?;
        ids.extend_from_slice(&chunk[..n.min(chunk.len())]);
        if n < chunk.len() {
            break;
        }
        after = chunk[chunk.len() - 1];
    }
    // `struct statmount` is 512 bytes before its strings; none are asked for.
    let mut buf = [0u64; 64];
    let mut devices = Vec::with_capacity(ids.len());
    for id in ids {
        let req = MntIdReq {
            size: std::mem::size_of::<MntIdReq>() as u32,
            spare: 0,
            mnt_id: id,
            param: STATMOUNT_SB_BASIC,
        };
        // SAFETY: `req` is a valid mnt_id_req of the size it states, and `buf` is
        // writable for the size passed; both live for the whole call.
        let rc = unsafe {
            libc::syscall(
                SYS_STATMOUNT,
                &req as *const MntIdReq,
                buf.as_mut_ptr(),
                std::mem::size_of_val(&buf),
                0u32,
            )
        };
        // The mask (bytes 8 to 15) says what was written; the device is bytes 16 to 23.
        if rc != 0 || buf[1] & STATMOUNT_SB_BASIC == 0 {
            return None;
        }
        devices.push(((buf[2] & 0xffff_ffff) as u32, (buf[2] >> 32) as u32));
    }
    Some(devices)
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn mount_devices() -> Option<Vec<(u32, u32)>> {
    None
}

/// One line of /proc/self/mountinfo: the filesystem, the directory of it mounted, and
/// where.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Mount {
    device: String,
    root: PathBuf,
    point: PathBuf,
}

fn parse_mountinfo(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split(' ');
            let device = fields.nth(2)?.to_owned();
            let root = unescape(fields.next()?);
            let point = unescape(fields.next()?);
            Some(Mount {
                device,
                root,
                point,
            })
        })
        .collect()
}

/// A mountinfo path: space, tab, newline and backslash are written as `\ooo`.
fn unescape(field: &str) -> PathBuf {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| bytes[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match octal {
            Some(d) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    PathBuf::from(OsStr::from_bytes(&out))
}

/// The names `path` (canonical) also has in other mounts of its filesystem.
fn alias_candidates(mounts: &[Mount], path: &Path) -> Vec<PathBuf> {
    // The mount `path` is in: the deepest mount point above it, the last one mounted
    // when several are stacked.
    let Some(home) = mounts
        .iter()
        .filter(|m| path.starts_with(&m.point))
        .max_by_key(|m| m.point.components().count())
    else {
        return Vec::new();
    };
    let Ok(below) = path.strip_prefix(&home.point) else {
        return Vec::new();
    };
    let within = home.root.join(below);
    mounts
        .iter()
        .filter(|m| m.device == home.device && m.point != home.point)
        .filter_map(|m| {
            let rest = within.strip_prefix(&m.root).ok()?;
            Some(if rest.as_os_str().is_empty() {
                m.point.clone()
            } else {
                m.point.join(rest)
            })
        })
        .filter(|alias| alias != path)
        .collect()
}

/// The other names of `paths` that really are the same file now (a mount over a
/// candidate, or a different tree at that name, is no alias).
fn aliases(mounts: &[Mount], paths: &[PathBuf]) -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let mut out = Vec::new();
    for path in paths {
        let candidates = alias_candidates(mounts, path);
        if candidates.is_empty() {
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            continue;
        };
        for alias in candidates {
            if std::fs::symlink_metadata(&alias)
                .is_ok_and(|m| m.dev() == meta.dev() && m.ino() == meta.ino())
            {
                out.push(alias);
            }
        }
    }
    out
}

fn extend_new(list: &mut Vec<PathBuf>, more: Vec<PathBuf>) {
    for path in more {
        if !list.iter().any(|p| same(p, &path)) {
            list.push(path);
        }
    }
}

/// A hidden path inside /tmp or /dev/shm (not one of them itself), and which. Hiding it
/// would walk that directory and take away the right to create files directly in it
/// (see [`super::landlock`]), and a hidden secret must stay hidden: the two cannot both
/// hold with Landlock, so such a layout is refused.
fn hidden_in_temporary<'a>(
    deny_read: &'a [PathBuf],
    temporary: &'a [PathBuf],
) -> Option<(&'a Path, &'a Path)> {
    deny_read.iter().find_map(|hidden| {
        temporary
            .iter()
            .find(|t| under(hidden, t) && !same(hidden, t))
            .map(|t| (hidden.as_path(), t.as_path()))
    })
}

fn hidden_there(hidden: &Path, temp: &Path, home: &Path) -> SandboxError {
    let home = existing(home).unwrap_or_else(|| home.to_path_buf());
    let advice = if hidden.starts_with(&home) {
        format!(
            "Set HOME to a directory outside {temp} (such as one in /var/tmp)",
            temp = temp.display()
        )
    } else {
        format!(
            "Move it out of {temp}, or do not hide it (--deny-read, sandbox.deny_read)",
            temp = temp.display()
        )
    };
    error(format!(
        "the safe level hides {hidden}, which is in {temp}, and hiding it there would take \
         away the right to create files directly in {temp}; nothing was run. {advice}",
        hidden = hidden.display(),
        temp = temp.display()
    ))
}

/// The writable roots that are /tmp or /dev/shm (canonical), where protection stops.
fn temporary_roots(write: &[PathBuf]) -> impl Iterator<Item = &PathBuf> {
    write
        .iter()
        .filter(|w| *w == Path::new("/tmp") || *w == Path::new("/dev/shm"))
}

/// Where `path`, which does not exist, would be made: its nearest existing ancestor
/// made canonical, and the missing rest. `None` when the rest is not plain names (a
/// `..` in a path that does not exist cannot be resolved) or nothing exists above it.
/// `memo`: ancestors already made canonical (most such paths are in `HOME`).
fn not_yet(path: &Path, memo: &mut Resolved) -> Option<PathBuf> {
    let mut rest = Vec::new();
    let mut at = path;
    loop {
        let name = at.file_name()?;
        if !matches!(
            at.components().next_back(),
            Some(std::path::Component::Normal(_))
        ) {
            return None;
        }
        rest.push(name);
        let parent = at.parent()?;
        if let Some(mut out) = canonical_dir(parent, memo) {
            out.extend(rest.iter().rev());
            return Some(out);
        }
        at = parent;
    }
}

/// Whether `path` is in /tmp or /dev/shm, which must stay fully writable at `safe`.
pub fn in_temporary(path: &Path) -> bool {
    path.starts_with("/tmp") || path.starts_with("/dev/shm")
}

/// What the spec has learnt of the filesystem while building: directories by the name
/// given and their canonical form (`None`: it does not exist), and listings of the
/// directories that hold many of the names looked up (`HOME`, root's home).
#[derive(Default)]
struct Resolved {
    dirs: Vec<(PathBuf, Option<PathBuf>)>,
    listings: Vec<Listing>,
}

impl Resolved {
    fn new() -> Resolved {
        Resolved::default()
    }
}

/// What `lstat` would say of a path, as far as the spec needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    Missing,
    Link,
    Plain { is_dir: bool },
}

/// What `path` (as given) is, from a listing in `memo` when one can tell, else from
/// `lstat`. A path that cannot be looked at counts as missing, as before.
fn look(path: &Path, memo: &Resolved) -> Seen {
    if let Some(listed) = memo.listings.iter().find_map(|l| l.lookup(path)) {
        return match listed {
            Listed::Missing => Seen::Missing,
            Listed::Entry { is_dir } => Seen::Plain { is_dir },
        };
    }
    match std::fs::symlink_metadata(path) {
        Err(_) => Seen::Missing,
        Ok(meta) if meta.file_type().is_symlink() => Seen::Link,
        Ok(meta) => Seen::Plain {
            is_dir: meta.is_dir(),
        },
    }
}

/// `path` (as given) made canonical, or `None` when it does not exist, remembered in
/// `memo`. A path that is no symbolic link is its directory made canonical (remembered
/// too) and its name: one `lstat` per directory not seen before, where resolving it
/// whole would read every component of it as a link again (`realpath`), for each path.
fn canonical_dir(path: &Path, memo: &mut Resolved) -> Option<PathBuf> {
    if let Some((_, known)) = memo.dirs.iter().find(|(p, _)| same(p, path)) {
        return known.clone();
    }
    let found = match (path.parent(), path.components().next_back()) {
        (None, Some(std::path::Component::RootDir)) => Some(PathBuf::from("/")),
        (Some(parent), Some(std::path::Component::Normal(name))) => match look(path, memo) {
            Seen::Missing => None,
            Seen::Link => path.canonicalize().ok(),
            Seen::Plain { .. } => canonical_dir(parent, memo).map(|dir| dir.join(name)),
        },
        // `..` at the end, or a relative path: resolved whole.
        _ => existing(path),
    };
    memo.dirs.push((path.to_path_buf(), found.clone()));
    found
}

/// As [`canonical_set`], and the paths that do not exist, as given. A path that is no
/// symbolic link is its directory made canonical and its name: `parents` remembers each
/// directory made canonical (most paths share `HOME` or `/etc`), which saves resolving
/// every component of every path again.
/// Also what each canonical path is (true: a directory), where that is known without
/// another look-up (not through a symbolic link).
fn canonical_split(paths: &[PathBuf], parents: &mut Resolved) -> Split {
    let mut out: Vec<PathBuf> = Vec::with_capacity(paths.len());
    let mut missing = Vec::new();
    let mut kinds = Vec::new();
    for path in paths {
        let seen = look(path, parents);
        let canonical = match (seen, path.parent(), path.file_name()) {
            (Seen::Missing, _, _) => {
                missing.push(path.clone());
                continue;
            }
            (Seen::Plain { .. }, Some(parent), Some(name)) => {
                canonical_dir(parent, parents).map(|d| d.join(name))
            }
            _ => path.canonicalize().ok(),
        };
        let Some(canonical) = canonical else {
            continue;
        };
        if !out.iter().any(|p| same(p, &canonical)) {
            if let Seen::Plain { is_dir } = seen {
                kinds.push((canonical.clone(), is_dir));
            }
            out.push(canonical);
        }
    }
    (out, missing, kinds)
}

/// What [`canonical_split`] found: the canonical paths, those that do not exist (as
/// given), and what each of the first is (true: a directory) where that is known.
type Split = (Vec<PathBuf>, Vec<PathBuf>, Vec<(PathBuf, bool)>);

/// Canonical, existing, without duplicates, in the given order.
fn canonical_set(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::with_capacity(paths.len());
    for path in paths.iter().filter_map(|p| existing(p)) {
        if !out.iter().any(|p| same(p, &path)) {
            out.push(path);
        }
    }
    out
}

#[cfg(test)]
mod tests;
