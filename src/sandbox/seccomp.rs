//! The seccomp filter: what Landlock cannot refuse.
//!
//! Each refused system call fails with EPERM (the program sees an ordinary error and can
//! say what it could not do); everything else is allowed. What is refused, and why:
//! - `socket()` for any family but `AF_UNIX`, unless the network is allowed: Landlock's
//!   network rules cover TCP bind and connect only, so UDP, raw, packet and MPTCP
//!   sockets (MPTCP also slips past the TCP rules) would otherwise reach the network.
//!   With TCP ports allowed, only stream sockets of `AF_INET`/`AF_INET6` with protocol 0
//!   or TCP are added.
//! - `socket(AF_UNIX)` too, unless Unix sockets are allowed: before Landlock ABI 9 nothing
//!   stops a connect to a Unix socket by path, and the sockets a user can reach are
//!   doors out of any sandbox: the D-Bus session bus (`systemd-run --user` runs a command
//!   outside), the Docker socket (a root container), ssh-agent (the user's keys), a
//!   credential cache.
//! - `socketpair()` of any kind but a Unix stream or seqpacket pair, unless Unix sockets
//!   are allowed (other families too, unless the network is on): a datagram pair's end
//!   can still `connect()` or `sendto()` any Unix socket by path (journald, `/dev/log`,
//!   `$NOTIFY_SOCKET`) and pass descriptors out with it, where a connected stream or
//!   seqpacket end cannot be re-targeted (`EISCONN`, or its address is ignored).
//! - `bind()` and `listen()`, when no port may be bound and Unix sockets are off: the
//!   command is no server then. `bind()` would squat a path or an abstract name with a
//!   socketpair end, and `listen()` on an unbound TCP socket picks a free port on every
//!   address without the `bind()` that Landlock checks. With a domain list and Unix
//!   sockets or a port to bind, `listen()` goes to the supervisor instead, which
//!   performs it on a copy of the caller's socket only when that is a Unix socket or a
//!   TCP socket already bound (through Landlock's check): a domain list never makes
//!   the command a server on a port nobody allowed, and the filter, which cannot see
//!   what a descriptor is, could not tell the two apart.
//! - With port rules, `MSG_FASTOPEN` in `sendto`, `sendmsg` and `sendmmsg`: TCP Fast
//!   Open connects from inside the send call, which Landlock's connect rule never sees.
//! - `ioctl(TIOCSTI)` and `ioctl(TIOCLINUX)`: they push keystrokes into the terminal's
//!   input, which the unsandboxed shell that started the agent would then read and run.
//! - `io_uring_setup`, `io_uring_enter`, `io_uring_register`: io_uring can open sockets
//!   and files through its own queue, past the `socket()` check above.
//! - `keyctl`, `add_key`, `request_key`: the kernel keyring can hold credentials
//!   (Kerberos tickets, encryption keys) of the user's session, outside any file.
//! - Setting the setuid or setgid bit, by `chmod` and its relatives or when creating a
//!   file (`open`, `creat`, `mknod`): Landlock does not mediate permission changes, and
//!   root without capabilities still owns most of the system, so `chmod u+s /bin/bash`
//!   (or a new setuid-root file in /tmp) would hand root to every user outside the
//!   sandbox. `openat2` is refused outright: its mode sits in a struct the filter cannot
//!   read. Other permission changes to files the user owns remain possible (see
//!   docs/sandbox.md).
//! - As root, the group and other write bits in `chmod` and its relatives, and every
//!   `*setxattr` call (a POSIX ACL is an extended attribute): root still owns
//!   `/etc/passwd` and most of the system, and `chmod 0666` or a write ACL on it would
//!   hand root to every user once the command ends. The filter sees the new mode, not
//!   the file, so this holds inside the writable roots too.
//! - Another process's resource limits, priority, I/O priority and scheduling policy
//!   (`prlimit64`, `setpriority`, `ioprio_set`, `sched_setscheduler`, `sched_setparam`,
//!   `sched_setattr` with a pid other than the caller's 0): every process of the user
//!   outside the sandbox (the agent, gate's supervisor) could be starved or killed.
//! - On a kernel that lacks a Landlock feature, what makes up for it
//!   ([`Instead`], docs/sandbox.md's kernel table): without truncate control (ABI 3),
//!   `truncate(2)` and every `open`/`openat` with `O_TRUNC` but not for writing (Landlock
//!   checks a write open before it truncates; a read-only one, or access mode 3, it lets
//!   truncate any file the user may write by its mode, even a hidden one); without
//!   device ioctl control (ABI 5), every open with access mode 3 (neither read nor
//!   write: Landlock checks no right for it, so it opens any device file, whose ioctls
//!   then go unchecked); without signal scoping (ABI 6), `kill(-1, …)`, a signal to
//!   every process the user may signal. On a kernel with every feature, none of these.
//! - On x86_64, every x32 system call (numbers with bit 30 set): they have their own
//!   numbers, which the rules above would not match. 32-bit (ia32) calls are stopped by
//!   the architecture check, which kills the process.
//!
//! After loading, the filter is tried: one call it refuses (`openat2`, with arguments
//! that open nothing) must fail with EPERM, or the command does not run.

use std::collections::BTreeMap;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

use libc::sock_filter;

use super::{Network, SandboxError};

mod bpf;

use bpf::{audit_arch, compile};

/// What the filter is built for.
pub(crate) struct Policy<'a> {
    pub(crate) network: &'a Network,
    /// `socket(AF_UNIX)` allowed.
    pub(crate) unix_sockets: bool,
    /// The command runs as uid 0.
    pub(crate) root: bool,
    /// Network by domain, or TCP decided by the supervisor: every `connect()` goes to
    /// the supervisor ([`crate::supervisor`]) as a user notification.
    pub(crate) proxied: bool,
    /// The supervisor decides TCP in place of Landlock's TCP rules (before ABI 4):
    /// `bind()` goes to it too, when the command may serve at all.
    pub(crate) tcp_decided: bool,
    /// Deny rules at exec: every `execve` and `execveat` goes to the supervisor.
    pub(crate) exec_checked: bool,
    /// What the filter does for Landlock features the kernel lacks.
    pub(crate) instead: Instead,
}

/// What the filter refuses in place of Landlock features the kernel lacks (see
/// [`super::Feature::without`]); nothing on a kernel with every feature.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Instead {
    /// No truncate control (ABI 3): `truncate(2)`, and opens with `O_TRUNC` that are
    /// not for writing.
    pub(crate) truncate: bool,
    /// No device ioctl control (ABI 5): opens with access mode 3.
    pub(crate) device_open: bool,
    /// No signal scoping (ABI 6): `kill(-1, …)`.
    pub(crate) kill_all: bool,
}

impl Instead {
    /// What to refuse for these missing features.
    pub(crate) fn of(residual: &[super::Feature]) -> Instead {
        use super::Feature;
        Instead {
            truncate: residual.contains(&Feature::Truncate),
            device_open: residual.contains(&Feature::DeviceIoctl),
            kill_all: residual.contains(&Feature::Scopes),
        }
    }
}

/// `setpriority`'s `which` for one process (linux/resource.h).
const PRIO_PROCESS: u32 = 0;
/// `ioprio_set`'s `which` for one process (linux/ioprio.h).
const IOPRIO_WHO_PROCESS: u32 = 1;
const TIOCSTI: u32 = 0x5412;
const TIOCLINUX: u32 = 0x541C;
const SOCK_STREAM: u32 = 1;
const SOCK_SEQPACKET: u32 = 5;
const MSG_FASTOPEN: u32 = 0x2000_0000;
const GROUP_WRITE: u32 = 0o020;
const OTHER_WRITE: u32 = 0o002;
/// Linux 6.13; not in the libc crate yet. The same number on x86_64 and aarch64.
const SYS_SETXATTRAT: i64 = 463;
const IPPROTO_TCP: u32 = 6;
const O_ACCMODE: u32 = libc::O_ACCMODE as u32;
const O_WRONLY: u32 = libc::O_WRONLY as u32;
const O_RDWR: u32 = libc::O_RDWR as u32;
const O_TRUNC: u32 = libc::O_TRUNC as u32;
/// `kill`'s pid for every process the caller may signal, as the filter sees its low
/// 32 bits.
const EVERY_PROCESS: u32 = u32::MAX;
const SETUID: u32 = 0o4000;
const SETGID: u32 = 0o2000;
/// The socket type is the low 4 bits of `type`; the rest are flags.
const TYPE_MASK: u32 = 0xf;
const AF_UNIX: u32 = libc::AF_UNIX as u32;
const AF_INET: u32 = libc::AF_INET as u32;
const AF_INET6: u32 = libc::AF_INET6 as u32;

fn error(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Setup(format!("cannot set up the sandbox (seccomp filter): {e}"))
}

/// A test of one argument's low 32 bits (every argument checked here is an `int`, a
/// mode or a flags word; the kernel ignores the high half of each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Test {
    Eq(u32),
    Ne(u32),
    /// `arg & mask != value`.
    MaskedNe(u32, u32),
    /// `arg & mask == value`.
    MaskedEq(u32, u32),
    /// `arg & mask != 0`: any of these bits.
    AnyBit(u32),
}

/// A condition on argument `arg` (0 to 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cond {
    arg: u8,
    test: Test,
}

fn cond(arg: u8, test: Test) -> Cond {
    Cond { arg, test }
}

/// A call is refused when every condition of one of its rules holds. An empty rule
/// holds always; an empty list of rules refuses every call.
type Rule = Vec<Cond>;

/// The rules for `socket(domain, type, protocol)`: each rule describes sockets that are
/// refused. `None`: no rule, every socket is allowed.
fn socket_rules(network: &Network, unix_sockets: bool) -> Option<Vec<Rule>> {
    match (network, unix_sockets) {
        (Network::On, true) => None,
        (Network::On, false) => Some(vec![vec![cond(0, Test::Eq(AF_UNIX))]]),
        // No rule at all: no socket at all.
        (Network::Off, false) => Some(Vec::new()),
        (Network::Off, true) => Some(vec![vec![cond(0, Test::Ne(AF_UNIX))]]),
        (Network::Tcp { .. }, unix_sockets) => {
            let mut other_families = vec![cond(0, Test::Ne(AF_INET)), cond(0, Test::Ne(AF_INET6))];
            if unix_sockets {
                other_families.push(cond(0, Test::Ne(AF_UNIX)));
            }
            let mut rules = vec![other_families];
            for family in [AF_INET, AF_INET6] {
                // Any type but a stream.
                rules.push(vec![
                    cond(0, Test::Eq(family)),
                    cond(1, Test::MaskedNe(TYPE_MASK, SOCK_STREAM)),
                ]);
                // Any protocol but the default and TCP (MPTCP is 262).
                rules.push(vec![
                    cond(0, Test::Eq(family)),
                    cond(2, Test::Ne(0)),
                    cond(2, Test::Ne(IPPROTO_TCP)),
                ]);
            }
            Some(rules)
        }
    }
}

/// The rules for `socketpair(domain, type, protocol, sv)`: refused pairs. `None`: every
/// pair is allowed.
fn socketpair_rules(network: &Network, unix_sockets: bool) -> Option<Vec<Rule>> {
    let mut rules = Vec::new();
    if *network != Network::On {
        rules.push(vec![cond(0, Test::Ne(AF_UNIX))]);
    }
    if !unix_sockets {
        // A Unix pair of any type but stream and seqpacket (SOCK_RAW is a datagram pair).
        rules.push(vec![
            cond(0, Test::Eq(AF_UNIX)),
            cond(1, Test::MaskedNe(TYPE_MASK, SOCK_STREAM)),
            cond(1, Test::MaskedNe(TYPE_MASK, SOCK_SEQPACKET)),
        ]);
    }
    (!rules.is_empty()).then_some(rules)
}

/// Whether the command may be a server: a port may be bound, or Unix sockets (which
/// seccomp cannot tell from TCP ones) are allowed.
fn may_serve(network: &Network, unix_sockets: bool) -> bool {
    unix_sockets
        || match network {
            Network::Off => false,
            Network::On => true,
            Network::Tcp { bind, .. } => !bind.is_empty(),
        }
}

/// The syscall table for the filter.
fn rules(policy: &Policy) -> BTreeMap<i64, Vec<Rule>> {
    let Policy {
        network,
        unix_sockets,
        root,
        ..
    } = *policy;
    let mut map = BTreeMap::new();
    if let Some(socket) = socket_rules(network, unix_sockets) {
        map.insert(libc::SYS_socket, socket);
    }
    if let Some(pair) = socketpair_rules(network, unix_sockets) {
        map.insert(libc::SYS_socketpair, pair);
    }
    if !may_serve(network, unix_sockets) {
        map.insert(libc::SYS_bind, Vec::new());
        map.insert(libc::SYS_listen, Vec::new());
    }
    if matches!(network, Network::Tcp { .. }) {
        // The flags argument of each send call that takes one with an address.
        for (call, flags_arg) in [
            (libc::SYS_sendto, 3),
            (libc::SYS_sendmsg, 2),
            (libc::SYS_sendmmsg, 3),
        ] {
            map.insert(
                call,
                vec![vec![cond(flags_arg, Test::AnyBit(MSG_FASTOPEN))]],
            );
        }
    }
    map.insert(
        libc::SYS_ioctl,
        vec![
            vec![cond(1, Test::Eq(TIOCSTI))],
            vec![cond(1, Test::Eq(TIOCLINUX))],
        ],
    );
    // Another process's resource limits and priority: every process of the user's
    // outside the sandbox (the agent, the supervisor of network by domain) could be
    // given RLIMIT_CPU = 1 s, no descriptors, or the lowest priority. The process's
    // own (pid 0, as glibc's setrlimit and nice pass it) stays allowed.
    map.insert(libc::SYS_prlimit64, vec![vec![cond(0, Test::Ne(0))]]);
    map.insert(
        libc::SYS_setpriority,
        vec![
            vec![cond(0, Test::Ne(PRIO_PROCESS))],
            vec![cond(1, Test::Ne(0))],
        ],
    );
    // Another process's I/O priority (the idle class starves it of the disk), and its
    // scheduling policy (SCHED_IDLE starves it of the CPU): the caller's own only. CPU
    // affinity stays allowed: pinning is a nuisance, not a way out, and thread pools pin
    // their own threads by thread id (see docs/sandbox.md).
    map.insert(
        libc::SYS_ioprio_set,
        vec![
            vec![cond(0, Test::Ne(IOPRIO_WHO_PROCESS))],
            vec![cond(1, Test::Ne(0))],
        ],
    );
    for call in [
        libc::SYS_sched_setscheduler,
        libc::SYS_sched_setparam,
        libc::SYS_sched_setattr,
    ] {
        map.insert(call, vec![vec![cond(0, Test::Ne(0))]]);
    }
    // The mode argument of each call that sets or creates permissions.
    for (call, mode_arg) in [
        (libc::SYS_chmod, 1),
        (libc::SYS_fchmod, 1),
        (libc::SYS_fchmodat, 2),
        (libc::SYS_fchmodat2, 2),
        (libc::SYS_open, 2),
        (libc::SYS_openat, 3),
        (libc::SYS_creat, 1),
        (libc::SYS_mknod, 1),
        (libc::SYS_mknodat, 2),
    ] {
        let chmod = matches!(
            call,
            libc::SYS_chmod | libc::SYS_fchmod | libc::SYS_fchmodat | libc::SYS_fchmodat2
        );
        let mut bits = SETUID | SETGID;
        if root && chmod {
            bits |= GROUP_WRITE | OTHER_WRITE;
        }
        map.insert(call, vec![vec![cond(mode_arg, Test::AnyBit(bits))]]);
    }
    let Instead {
        truncate,
        device_open,
        kill_all,
    } = policy.instead;
    // The flags argument of each open call (`openat2`, whose flags the filter cannot
    // read, is refused below anyway).
    for (call, flags_arg) in [(libc::SYS_open, 1), (libc::SYS_openat, 2)] {
        let rules = map.entry(call).or_insert_with(Vec::new);
        if truncate {
            // O_TRUNC with access mode read-only or 3: Landlock before ABI 3 checks
            // only the read right (or none), and the open truncates.
            rules.push(vec![
                cond(flags_arg, Test::AnyBit(O_TRUNC)),
                cond(flags_arg, Test::MaskedNe(O_ACCMODE, O_WRONLY)),
                cond(flags_arg, Test::MaskedNe(O_ACCMODE, O_RDWR)),
            ]);
        }
        if device_open {
            // Access mode 3: no right is checked, so any device file opens, and
            // before ABI 5 its ioctls are unchecked too.
            rules.push(vec![cond(flags_arg, Test::MaskedEq(O_ACCMODE, O_ACCMODE))]);
        }
    }
    if truncate {
        // By path: before ABI 3 Landlock does not see it at all.
        map.insert(libc::SYS_truncate, Vec::new());
    }
    if kill_all {
        map.insert(libc::SYS_kill, vec![vec![cond(0, Test::Eq(EVERY_PROCESS))]]);
    }
    if root {
        for call in [
            libc::SYS_setxattr,
            libc::SYS_lsetxattr,
            libc::SYS_fsetxattr,
            SYS_SETXATTRAT,
        ] {
            map.insert(call, Vec::new());
        }
    }
    // An empty rule list matches every call.
    for call in [
        libc::SYS_openat2,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
    ] {
        map.insert(call, Vec::new());
    }
    map
}

/// Whether `listen()` goes to the supervisor: wherever the network is limited to TCP
/// ports or domains and the command may serve at all (a port to bind, or Unix
/// sockets). Then `listen()` must work for an allowed socket, and on a socket never
/// bound it would pick a port nobody allowed, on every address: Landlock checks
/// `bind()`, never `listen()`, and the filter cannot see whether a socket is bound.
pub(crate) fn listen_notified(network: &Network, unix_sockets: bool) -> bool {
    matches!(network, Network::Tcp { .. }) && may_serve(network, unix_sockets)
}

/// The calls handed to the supervisor as user notifications, whatever their arguments:
/// `connect()` when the network is by domain (the supervisor reads the address and
/// either connects the caller to the proxy or lets the kernel, and so Landlock, decide),
/// and `listen()` with ports or domains when the command may serve at all
/// ([`listen_notified`]: the supervisor listens on a copy of a Unix socket or of a
/// bound TCP socket, and refuses an unbound one).
/// `sendto`/`sendmsg` need no notification: on a TCP socket the kernel ignores their
/// address unless `MSG_FASTOPEN` (refused above) asks it to connect.
/// Where the supervisor decides TCP in place of Landlock (before ABI 4), `connect()`
/// always and `bind()` when the command may serve: it performs the allowed ones itself.
/// With deny rules, `execve` and `execveat`: the supervisor reads what would run.
fn notified(policy: &Policy) -> Vec<i64> {
    let mut calls = Vec::new();
    if policy.proxied {
        calls.push(libc::SYS_connect);
    }
    if listen_notified(policy.network, policy.unix_sockets) {
        if policy.tcp_decided {
            calls.push(libc::SYS_bind);
        }
        calls.push(libc::SYS_listen);
    }
    if policy.exec_checked {
        calls.extend([libc::SYS_execve, libc::SYS_execveat]);
    }
    calls
}

/// The calls a filter outside the sandbox hands to the supervisor: only the execs.
const EXEC_CALLS: [i64; 2] = [libc::SYS_execve, libc::SYS_execveat];

/// gate's own `execve`, by its three pointers (the path, argv and envp), each at an
/// address drawn at random for this one exec ([`crate::exec`]): the filter lets exactly
/// that call through without asking the supervisor, since gate judged it itself. A
/// command cannot make the same call without knowing all three addresses (the filter
/// cannot be read from inside it: `PTRACE_SECCOMP_GET_FILTER` needs CAP_SYS_ADMIN and a
/// caller without a filter of its own); a wrong guess is an ordinary exec, judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OwnExec(pub [u64; 3]);

/// The compiled filter, ready to load.
pub(crate) struct Filter {
    program: Option<Vec<sock_filter>>,
    /// Loaded with a listener for its user notifications.
    listener: bool,
    /// Tried after loading by a call it refuses (the sandbox's filter; the exec-only
    /// filter refuses nothing, and its listener is the proof it is in force).
    probed: bool,
}

impl Filter {
    /// Compile the filter for `network`. With `available` false (best effort on a kernel
    /// without seccomp), there is nothing to load.
    ///
    /// The program is laid out for the kernel's own pass over it when it is loaded (which
    /// works out, for every system call number, whether the filter allows it whatever the
    /// arguments, and then skips the filter for those): a binary search over the ~30
    /// calls with rules instead of a test of each in turn, and each call's rules as few
    /// instructions as they can be (one bit test for all the mode bits, one masked
    /// comparison per socket type allowed).
    pub(crate) fn build(policy: &Policy, available: bool) -> Result<Filter, SandboxError> {
        let listener = !notified(policy).is_empty();
        if !available {
            return Ok(Filter {
                program: None,
                listener,
                probed: true,
            });
        }
        let x32 = std::env::consts::ARCH == "x86_64";
        let program = compile(&rules(policy), &notified(policy), None, audit_arch()?, x32);
        if program.len() >= 4096 {
            return Err(error(format!("{} instructions, too many", program.len())));
        }
        Ok(Filter {
            program: Some(program),
            listener,
            probed: true,
        })
    }

    /// The filter of a command outside the sandbox with deny rules: the architecture
    /// check, x32 refused, `execve` and `execveat` to the supervisor, everything else
    /// allowed; with `own`, the one `execve` whose three pointers are those goes on
    /// unasked (gate's own, judged already).
    pub(crate) fn exec_only(own: Option<OwnExec>) -> Result<Filter, SandboxError> {
        let x32 = std::env::consts::ARCH == "x86_64";
        let program = compile(&BTreeMap::new(), &EXEC_CALLS, own, audit_arch()?, x32);
        Ok(Filter {
            program: Some(program),
            listener: true,
            probed: false,
        })
    }

    /// Load it into this process (no_new_privs is already set, by Landlock's restriction
    /// before it: without it, or CAP_SYS_ADMIN, the kernel refuses the load), then check
    /// that it acts: a load that reports success without refusing anything must not run
    /// the command. With user notifications, the listener comes back (a kernel that
    /// cannot make one, or a process that has one already, is an error).
    pub(crate) fn load(self) -> Result<Option<OwnedFd>, SandboxError> {
        let Some(program) = self.program else {
            if self.listener {
                return Err(error(
                    "this kernel has no seccomp, which network by domain needs",
                ));
            }
            return Ok(None);
        };
        let flags = if self.listener {
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER as libc::c_uint
        } else {
            0
        };
        let prog = libc::sock_fprog {
            len: program.len() as libc::c_ushort,
            filter: program.as_ptr() as *mut sock_filter,
        };
        // SAFETY: the kernel copies `prog.len` instructions from `prog.filter`, which
        // points into `program`, alive and unchanged for the call; the only flag is
        // NEW_LISTENER, which makes it return a new descriptor instead of 0.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                flags,
                &prog as *const libc::sock_fprog,
            )
        };
        if rc < 0 {
            let e = std::io::Error::last_os_error();
            return Err(if self.listener && e.raw_os_error() == Some(libc::EBUSY) {
                error(
                    "this process already runs under a seccomp supervisor (another gate's with \
                     deny rules or a domain list, or another sandbox that answers system \
                     calls), and gate's deny rules and network by domain need their own",
                )
            } else {
                error(e)
            });
        }
        let listener = if self.listener {
            // SAFETY: with NEW_LISTENER, a successful load returns a new descriptor
            // that nothing else owns.
            Some(unsafe { OwnedFd::from_raw_fd(rc as RawFd) })
        } else {
            None
        };
        if self.probed {
            acts(probe())?;
        }
        Ok(listener)
    }
}

/// What `openat2` with a size too small for its struct answers: the filter refuses
/// every `openat2`, so EPERM when it acts; without it the kernel says EINVAL (or ENOSYS
/// before Linux 5.6) and opens nothing. Not `keyctl` or io_uring: container runtimes
/// refuse those with EPERM themselves, which would hide a filter that does not act.
fn probe() -> Result<libc::c_long, i32> {
    // SAFETY: with a size of 0 the kernel returns EINVAL before it reads the path or
    // the struct (both null here); nothing in this process is touched.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            std::ptr::null::<libc::c_char>(),
            std::ptr::null::<libc::c_void>(),
            0usize,
        )
    };
    if rc < 0 {
        Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
    } else {
        Ok(rc)
    }
}

/// Whether the probe's answer shows the filter in force.
fn acts(answer: Result<libc::c_long, i32>) -> Result<(), SandboxError> {
    match answer {
        Err(libc::EPERM) => Ok(()),
        other => Err(SandboxError::NotActing(format!(
            "the seccomp filter was loaded but does not act (a refused call answered {})",
            match other {
                Ok(rc) => format!("{rc}"),
                Err(e) => std::io::Error::from_raw_os_error(e).to_string(),
            }
        ))),
    }
}

#[cfg(test)]
mod tests;
