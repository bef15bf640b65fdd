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

/// What the filter is built for.
pub struct Policy<'a> {
    pub network: &'a Network,
    /// `socket(AF_UNIX)` allowed.
    pub unix_sockets: bool,
    /// The command runs as uid 0.
    pub root: bool,
    /// Network by domain, or TCP decided by the supervisor: every `connect()` goes to
    /// the supervisor ([`crate::supervisor`]) as a user notification.
    pub proxied: bool,
    /// The supervisor decides TCP in place of Landlock's TCP rules (before ABI 4):
    /// `bind()` goes to it too, when the command may serve at all.
    pub tcp_decided: bool,
    /// Deny rules at exec: every `execve` and `execveat` goes to the supervisor.
    pub exec_checked: bool,
    /// What the filter does for Landlock features the kernel lacks.
    pub instead: Instead,
}

/// What the filter refuses in place of Landlock features the kernel lacks (see
/// [`super::Feature::without`]); nothing on a kernel with every feature.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Instead {
    /// No truncate control (ABI 3): `truncate(2)`, and opens with `O_TRUNC` that are
    /// not for writing.
    pub truncate: bool,
    /// No device ioctl control (ABI 5): opens with access mode 3.
    pub device_open: bool,
    /// No signal scoping (ABI 6): `kill(-1, …)`.
    pub kill_all: bool,
}

impl Instead {
    /// What to refuse for these missing features.
    pub fn of(residual: &[super::Feature]) -> Instead {
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
    SandboxError(format!(
        "cannot set up the sandbox (seccomp filter): {e}; nothing was run"
    ))
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

// Classic BPF (linux/bpf_common.h, linux/seccomp.h).
const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
const AND_K: u16 = 0x54; // BPF_ALU | BPF_AND | BPF_K
const JA: u16 = 0x05; // BPF_JMP | BPF_JA
const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JGE_K: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const JSET_K: u16 = 0x45; // BPF_JMP | BPF_JSET | BPF_K
const RET_K: u16 = 0x06; // BPF_RET | BPF_K
const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
const SECCOMP_RET_KILL_PROCESS: u32 = 0x8000_0000;
const SECCOMP_RET_USER_NOTIF: u32 = libc::SECCOMP_RET_USER_NOTIF;
const REFUSE: u32 = SECCOMP_RET_ERRNO | libc::EPERM as u32;
const OFFSET_NR: u32 = 0;
const OFFSET_ARCH: u32 = 4;
const X32_SYSCALL_BIT: u32 = 0x4000_0000;
/// The low 32 bits of argument `arg` in `struct seccomp_data`.
fn offset_arg(arg: u8) -> u32 {
    16 + 8 * u32::from(arg) + if cfg!(target_endian = "big") { 4 } else { 0 }
}

/// The high 32 bits of argument `arg` in `struct seccomp_data`.
fn offset_arg_high(arg: u8) -> u32 {
    16 + 8 * u32::from(arg) + if cfg!(target_endian = "big") { 0 } else { 4 }
}

/// The kernel's name for this architecture (linux/audit.h).
fn audit_arch() -> Result<u32, SandboxError> {
    const LE64: u32 = 0x8000_0000 | 0x4000_0000;
    match std::env::consts::ARCH {
        "x86_64" => Ok(62 | LE64),
        "aarch64" => Ok(183 | LE64),
        "riscv64" => Ok(243 | LE64),
        other => Err(error(format!("no seccomp support for {other}"))),
    }
}

fn ins(code: u16, jt: u8, jf: u8, k: u32) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

/// A short forward jump, as BPF's 8-bit offsets allow (the blocks that use them are a
/// few instructions long).
fn short(offset: usize) -> u8 {
    u8::try_from(offset).expect("a rule's jumps are short")
}

/// The instructions of one call's rules, the syscall number no longer needed: refuse
/// when a rule holds, else allow (no rule at all: refuse).
fn compile_rules(rules: &[Rule], out: &mut Vec<sock_filter>) {
    if rules.is_empty() {
        // No rule: every call refused.
        out.push(ins(RET_K, 0, 0, REFUSE));
        return;
    }
    for rule in rules {
        let sizes: Vec<usize> = rule
            .iter()
            .map(|c| match c.test {
                Test::MaskedNe(..) | Test::MaskedEq(..) => 3,
                _ => 2,
            })
            .collect();
        // From the end of a condition's jump to the next rule: the conditions after it
        // and this rule's return.
        let mut after: usize = sizes.iter().sum::<usize>() + 1;
        for (c, size) in rule.iter().zip(&sizes) {
            after -= size;
            let skip = short(after);
            out.push(ins(LD_W_ABS, 0, 0, offset_arg(c.arg)));
            out.push(match c.test {
                Test::Eq(v) => ins(JEQ_K, 0, skip, v),
                Test::Ne(v) => ins(JEQ_K, skip, 0, v),
                Test::AnyBit(mask) => ins(JSET_K, 0, skip, mask),
                Test::MaskedNe(mask, _) | Test::MaskedEq(mask, _) => ins(AND_K, 0, 0, mask),
            });
            match c.test {
                Test::MaskedNe(_, v) => out.push(ins(JEQ_K, skip, 0, v)),
                Test::MaskedEq(_, v) => out.push(ins(JEQ_K, 0, skip, v)),
                _ => {}
            }
        }
        out.push(ins(RET_K, 0, 0, REFUSE));
    }
    out.push(ins(RET_K, 0, 0, SECCOMP_RET_ALLOW));
}

/// Where a long jump goes, resolved once every place is known.
#[derive(Debug, Clone, Copy)]
enum Label {
    /// A node of the search tree, by number.
    Node(usize),
    /// The rules of a call.
    Call(i64),
}

/// Emit the binary search for the syscall number (in the accumulator) over `calls`,
/// sorted: a comparison per level, then at most four tests for equality. Each branch
/// goes to its call's rules by a long jump; a number in no branch is allowed. Long
/// jumps are left as `(instruction, label)` to patch.
fn dispatch(
    calls: &[i64],
    out: &mut Vec<sock_filter>,
    jumps: &mut Vec<(usize, Label)>,
    nodes: &mut Vec<usize>,
) {
    if calls.len() <= 4 {
        for &nr in calls {
            out.push(ins(JEQ_K, 0, 1, nr as u32));
            jumps.push((out.len(), Label::Call(nr)));
            out.push(ins(JA, 0, 0, 0));
        }
        out.push(ins(RET_K, 0, 0, SECCOMP_RET_ALLOW));
        return;
    }
    let (low, high) = calls.split_at(calls.len() / 2);
    let node = nodes.len();
    nodes.push(0);
    // At or above the middle: jump to the upper half, else fall into the lower.
    out.push(ins(JGE_K, 0, 1, high[0] as u32));
    jumps.push((out.len(), Label::Node(node)));
    out.push(ins(JA, 0, 0, 0));
    dispatch(low, out, jumps, nodes);
    nodes[node] = out.len();
    dispatch(high, out, jumps, nodes);
}

/// The whole program: the architecture check, the search, the rules of each call (and
/// for each call in `notify`, the user notification).
fn compile(
    table: &BTreeMap<i64, Vec<Rule>>,
    notify: &[i64],
    own: Option<OwnExec>,
    arch: u32,
    x32: bool,
) -> Vec<sock_filter> {
    let mut out = vec![
        ins(LD_W_ABS, 0, 0, OFFSET_ARCH),
        ins(JEQ_K, 1, 0, arch),
        ins(RET_K, 0, 0, SECCOMP_RET_KILL_PROCESS),
        ins(LD_W_ABS, 0, 0, OFFSET_NR),
    ];
    if x32 {
        // On x86_64, every number with the x32 bit is refused: x32 calls have their own
        // numbers, which the rules below would not match.
        out.push(ins(JGE_K, 0, 1, X32_SYSCALL_BIT));
        out.push(ins(RET_K, 0, 0, REFUSE));
    }
    let mut calls: Vec<i64> = table.keys().chain(notify).copied().collect();
    calls.sort_unstable();
    calls.dedup();
    let mut jumps = Vec::new();
    let mut nodes = Vec::new();
    dispatch(&calls, &mut out, &mut jumps, &mut nodes);
    let mut starts = BTreeMap::new();
    for &nr in notify {
        starts.insert(nr, out.len());
        if let (Some(own), libc::SYS_execve) = (own, nr) {
            let words = own.0.iter().enumerate().flat_map(|(arg, &value)| {
                let arg = arg as u8;
                [
                    (offset_arg(arg), value as u32),
                    (offset_arg_high(arg), (value >> 32) as u32),
                ]
            });
            // Each test that fails jumps past the rest and the allow, to the notification.
            for (i, (offset, value)) in words.enumerate() {
                out.push(ins(LD_W_ABS, 0, 0, offset));
                out.push(ins(JEQ_K, 0, short((5 - i) * 2 + 1), value));
            }
            out.push(ins(RET_K, 0, 0, SECCOMP_RET_ALLOW));
        }
        out.push(ins(RET_K, 0, 0, SECCOMP_RET_USER_NOTIF));
    }
    for (&nr, rules) in table.iter().filter(|(nr, _)| !notify.contains(nr)) {
        starts.insert(nr, out.len());
        compile_rules(rules, &mut out);
    }
    for (at, label) in jumps {
        let target = match label {
            Label::Node(n) => nodes[n],
            Label::Call(nr) => starts[&nr],
        };
        out[at].k = (target - at - 1) as u32;
    }
    out
}

/// gate's own `execve`, by its three pointers (the path, argv and envp), each at an
/// address drawn at random for this one exec ([`crate::exec`]): the filter lets exactly
/// that call through without asking the supervisor, since gate judged it itself. A
/// command cannot make the same call without knowing all three addresses (the filter
/// cannot be read from inside it: `PTRACE_SECCOMP_GET_FILTER` needs CAP_SYS_ADMIN and a
/// caller without a filter of its own); a wrong guess is an ordinary exec, judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwnExec(pub [u64; 3]);

/// The compiled filter, ready to load.
pub struct Filter {
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
    pub fn build(policy: &Policy, available: bool) -> Result<Filter, SandboxError> {
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
    pub fn exec_only(own: Option<OwnExec>) -> Result<Filter, SandboxError> {
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
    pub fn load(self) -> Result<Option<OwnedFd>, SandboxError> {
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
        other => Err(SandboxError(format!(
            "the seccomp filter was loaded but does not act (a refused call answered {}); \
             nothing was run",
            match other {
                Ok(rc) => format!("{rc}"),
                Err(e) => std::io::Error::from_raw_os_error(e).to_string(),
            }
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ARCH_X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;
    const ARCH_I386: u32 = 3 | 0x4000_0000;

    /// A classic BPF interpreter for the instructions the compiler emits: the return
    /// value and how many instructions ran.
    fn run(program: &[sock_filter], nr: u32, arch: u32, args: [u64; 6]) -> (u32, usize) {
        let word = |offset: u32| -> u32 {
            match offset {
                0 => nr,
                4 => arch,
                o if (16..64).contains(&o) && o % 4 == 0 => {
                    let arg = args[((o - 16) / 8) as usize];
                    let high = (o - 16) % 8 == 4;
                    let high = if cfg!(target_endian = "big") {
                        !high
                    } else {
                        high
                    };
                    if high { (arg >> 32) as u32 } else { arg as u32 }
                }
                o => panic!("load of offset {o}"),
            }
        };
        let (mut pc, mut acc, mut steps) = (0usize, 0u32, 0usize);
        loop {
            let i = program[pc];
            steps += 1;
            let (jt, jf) = (usize::from(i.jt), usize::from(i.jf));
            pc += 1;
            match i.code {
                LD_W_ABS => acc = word(i.k),
                AND_K => acc &= i.k,
                JA => pc += i.k as usize,
                JEQ_K => pc += if acc == i.k { jt } else { jf },
                JGE_K => pc += if acc >= i.k { jt } else { jf },
                JSET_K => pc += if acc & i.k != 0 { jt } else { jf },
                RET_K => return (i.k, steps),
                code => panic!("instruction {code:#x}"),
            }
        }
    }

    /// The policy said once more, plainly: whether the filter must refuse this call
    /// (x86_64 numbers).
    fn must_refuse(policy: &Policy, nr: i64, args: [u64; 6]) -> bool {
        let lo = |i: usize| args[i] as u32;
        let Policy {
            network,
            unix_sockets,
            root,
            instead,
            ..
        } = *policy;
        let tcp = matches!(network, Network::Tcp { .. });
        let inet = |family| family == AF_INET || family == AF_INET6;
        match nr {
            n if n == libc::SYS_socket => {
                let (family, kind, protocol) = (lo(0), lo(1) & 0xf, lo(2));
                match network {
                    Network::On => family == AF_UNIX && !unix_sockets,
                    Network::Off => !(family == AF_UNIX && unix_sockets),
                    Network::Tcp { .. } => {
                        if family == AF_UNIX {
                            !unix_sockets
                        } else {
                            !inet(family)
                                || kind != SOCK_STREAM
                                || !(protocol == 0 || protocol == IPPROTO_TCP)
                        }
                    }
                }
            }
            n if n == libc::SYS_socketpair => {
                let (family, kind) = (lo(0), lo(1) & 0xf);
                (family != AF_UNIX && *network != Network::On)
                    || (family == AF_UNIX
                        && !unix_sockets
                        && kind != SOCK_STREAM
                        && kind != SOCK_SEQPACKET)
            }
            n if n == libc::SYS_bind || n == libc::SYS_listen => !may_serve(network, unix_sockets),
            n if n == libc::SYS_sendto || n == libc::SYS_sendmmsg => {
                tcp && lo(3) & MSG_FASTOPEN != 0
            }
            n if n == libc::SYS_sendmsg => tcp && lo(2) & MSG_FASTOPEN != 0,
            n if n == libc::SYS_ioctl => lo(1) == TIOCSTI || lo(1) == TIOCLINUX,
            n if n == libc::SYS_prlimit64 => lo(0) != 0,
            n if n == libc::SYS_setpriority => lo(0) != 0 || lo(1) != 0,
            n if n == libc::SYS_ioprio_set => lo(0) != IOPRIO_WHO_PROCESS || lo(1) != 0,
            n if [
                libc::SYS_sched_setscheduler,
                libc::SYS_sched_setparam,
                libc::SYS_sched_setattr,
            ]
            .contains(&n) =>
            {
                lo(0) != 0
            }
            n if n == libc::SYS_chmod || n == libc::SYS_fchmod => {
                lo(1) & (SETUID | SETGID) != 0 || (root && lo(1) & 0o022 != 0)
            }
            n if n == libc::SYS_fchmodat || n == libc::SYS_fchmodat2 => {
                lo(2) & (SETUID | SETGID) != 0 || (root && lo(2) & 0o022 != 0)
            }
            n if n == libc::SYS_creat || n == libc::SYS_mknod => lo(1) & 0o6000 != 0,
            n if n == libc::SYS_mknodat => lo(2) & 0o6000 != 0,
            n if n == libc::SYS_open || n == libc::SYS_openat => {
                let (flags, mode) = if n == libc::SYS_open {
                    (lo(1), lo(2))
                } else {
                    (lo(2), lo(3))
                };
                let access = flags & 3;
                mode & 0o6000 != 0
                    || (instead.truncate && flags & 0o1000 != 0 && access != 1 && access != 2)
                    || (instead.device_open && access == 3)
            }
            n if n == libc::SYS_truncate => instead.truncate,
            n if n == libc::SYS_kill => instead.kill_all && lo(0) == u32::MAX,
            n if [
                libc::SYS_setxattr,
                libc::SYS_lsetxattr,
                libc::SYS_fsetxattr,
                SYS_SETXATTRAT,
            ]
            .contains(&n) =>
            {
                root
            }
            n => [
                libc::SYS_openat2,
                libc::SYS_io_uring_setup,
                libc::SYS_io_uring_enter,
                libc::SYS_io_uring_register,
                libc::SYS_keyctl,
                libc::SYS_add_key,
                libc::SYS_request_key,
            ]
            .contains(&n),
        }
    }

    /// Every kind of network (by domain: TCP rules, with or without ports of the user's
    /// own), with and without Unix sockets, as root and not.
    fn policies() -> Vec<(Network, bool, bool, bool)> {
        let mut out = Vec::new();
        for (network, proxied) in [
            (Network::Off, false),
            (Network::On, false),
            (
                Network::Tcp {
                    connect: vec![80],
                    bind: vec![],
                },
                false,
            ),
            (
                Network::Tcp {
                    connect: vec![],
                    bind: vec![8080],
                },
                false,
            ),
            (
                Network::Tcp {
                    connect: vec![],
                    bind: vec![],
                },
                true,
            ),
            (
                Network::Tcp {
                    connect: vec![443],
                    bind: vec![8080],
                },
                true,
            ),
        ] {
            for unix_sockets in [false, true] {
                for root in [false, true] {
                    out.push((network.clone(), unix_sockets, root, proxied));
                }
            }
        }
        out
    }

    /// Argument values that the rules tell apart, and some they must not (high bits).
    const VALUES: [u64; 19] = [
        0,
        1,
        2,
        3,
        0o1000,
        0o1001,
        0xffff_ffff,
        5,
        6,
        10,
        262,
        0x8_0002,
        TIOCSTI as u64,
        TIOCLINUX as u64,
        0o4755,
        0o2700,
        0o666,
        MSG_FASTOPEN as u64 | 0x40,
        0x1_0000_0001,
    ];

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_compiled_filter_refuses_exactly_what_the_policy_says() {
        for ((network, unix_sockets, root, proxied), exec_checked, tcp_decided) in policies()
            .into_iter()
            .flat_map(|p| [(p.clone(), false), (p, true)])
            .flat_map(|(p, exec)| {
                // Where the supervisor decides TCP (before Landlock ABI 4): every
                // network with ports or domains, without Unix sockets.
                let decided = matches!(p.0, Network::Tcp { .. }) && !p.1;
                let mut with = vec![(p.clone(), exec, false)];
                if decided {
                    with.push(((p.0, p.1, p.2, true), exec, true));
                }
                with
            })
        {
            // What makes up for missing Landlock features, all of it or none (on
            // with the exec check, to keep the table's size).
            let instead = if exec_checked {
                Instead {
                    truncate: true,
                    device_open: true,
                    kill_all: true,
                }
            } else {
                Instead::default()
            };
            let policy = Policy {
                network: &network,
                unix_sockets,
                root,
                proxied,
                tcp_decided,
                exec_checked,
                instead,
            };
            let program = Filter::build(&policy, true).unwrap().program.unwrap();
            let table = rules(&policy);
            let notify = notified(&policy);
            // With a domain list, the command serves only through the supervisor: a
            // Unix socket, or a port it may bind.
            let serves = unix_sockets
                || matches!(&network, Network::On)
                || matches!(&network, Network::Tcp { bind, .. } if !bind.is_empty());
            let listen_notified = matches!(&network, Network::Tcp { .. }) && serves;
            let bind_notified = tcp_decided && serves;
            assert_eq!(notify.contains(&libc::SYS_connect), proxied);
            assert_eq!(notify.contains(&libc::SYS_listen), listen_notified);
            assert_eq!(notify.contains(&libc::SYS_bind), bind_notified);
            assert_eq!(notify.contains(&libc::SYS_execve), exec_checked);
            assert_eq!(notify.contains(&libc::SYS_execveat), exec_checked);
            let expect = |nr: i64, args| {
                if (proxied && nr == libc::SYS_connect)
                    || (listen_notified && nr == libc::SYS_listen)
                    || (bind_notified && nr == libc::SYS_bind)
                    || (exec_checked && EXEC_CALLS.contains(&nr))
                {
                    SECCOMP_RET_USER_NOTIF
                } else if must_refuse(&policy, nr, args) {
                    REFUSE
                } else {
                    SECCOMP_RET_ALLOW
                }
            };
            // Every call with rules, over every mix of interesting values in the
            // arguments the rules read.
            for &nr in table.keys().chain(&notify) {
                for a in VALUES {
                    for b in VALUES {
                        for c in VALUES {
                            for d in [0, 0o4000, MSG_FASTOPEN as u64, 0o1777] {
                                let args = [a, b, c, d, 0, 0];
                                let (got, _) = run(&program, nr as u32, ARCH_X86_64, args);
                                assert_eq!(
                                    got,
                                    expect(nr, args),
                                    "{network:?} unix {unix_sockets} root {root}: \
                                     call {nr} {args:?}"
                                );
                            }
                        }
                    }
                }
            }
            // Every other number is allowed, whatever its arguments.
            for nr in (0..600).filter(|nr| !table.contains_key(nr) && !notify.contains(nr)) {
                for a in VALUES {
                    let args = [a; 6];
                    let (got, _) = run(&program, nr as u32, ARCH_X86_64, args);
                    assert_eq!(got, SECCOMP_RET_ALLOW, "call {nr}");
                    assert!(!must_refuse(&policy, nr, args), "call {nr}");
                }
            }
            // x32 numbers are refused; another architecture kills the process.
            for nr in [0, 1, 41, 59, 512, 600] {
                let x32 = X32_SYSCALL_BIT | nr;
                assert_eq!(run(&program, x32, ARCH_X86_64, [0; 6]).0, REFUSE);
                assert_eq!(
                    run(&program, nr, ARCH_I386, [0; 6]).0,
                    SECCOMP_RET_KILL_PROCESS
                );
            }
        }
    }

    #[test]
    fn a_call_without_rules_is_allowed_in_a_few_instructions() {
        // The kernel works out, when the filter is loaded, which numbers it allows
        // whatever the arguments, by running it for each: a binary search keeps that
        // pass short (15 instructions at most; seccompiler's test of each call in turn ran up
        // to 90).
        let policy = Policy {
            network: &Network::Off,
            unix_sockets: false,
            root: true,
            proxied: false,
            tcp_decided: false,
            exec_checked: false,
            instead: Instead::default(),
        };
        let program = Filter::build(&policy, true).unwrap().program.unwrap();
        let table = rules(&policy);
        let arch = audit_arch().unwrap();
        let longest = (0..600u32)
            .filter(|nr| !table.contains_key(&i64::from(*nr)))
            .map(|nr| run(&program, nr, arch, [0; 6]).1)
            .max()
            .unwrap();
        assert!(longest <= 20, "{longest} instructions");
        assert!(program.len() < 200, "{} instructions", program.len());
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn outside_the_sandbox_only_the_execs_go_to_the_supervisor() {
        let program = Filter::exec_only(None).unwrap().program.unwrap();
        let arch = audit_arch().unwrap();
        for nr in 0..600u32 {
            let expect = if EXEC_CALLS.contains(&i64::from(nr)) {
                SECCOMP_RET_USER_NOTIF
            } else {
                SECCOMP_RET_ALLOW
            };
            assert_eq!(run(&program, nr, arch, [0; 6]).0, expect, "call {nr}");
        }
        // x32's execve (520) and execveat (545), and every other x32 call, are refused;
        // another architecture is killed.
        for nr in [520, 545, 59 | X32_SYSCALL_BIT] {
            assert_eq!(run(&program, nr | X32_SYSCALL_BIT, arch, [0; 6]).0, REFUSE);
        }
        assert_eq!(
            run(&program, 11, ARCH_I386, [0; 6]).0,
            SECCOMP_RET_KILL_PROCESS
        );
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn gates_own_exec_goes_on_unasked_by_its_three_pointers_only() {
        let own = [
            0x1234_5678_9abc_def0,
            0x0fed_cba9_8765_4321,
            0x7777_0000_1111_2228,
        ];
        let program = Filter::exec_only(Some(OwnExec(own)))
            .unwrap()
            .program
            .unwrap();
        let arch = audit_arch().unwrap();
        let execve = libc::SYS_execve as u32;
        let args = |p: [u64; 3]| [p[0], p[1], p[2], 0, 0, 0];
        assert_eq!(run(&program, execve, arch, args(own)).0, SECCOMP_RET_ALLOW);
        // Any half of any pointer otherwise: the supervisor is asked.
        for i in 0..3 {
            for bit in [0, 31, 32, 63] {
                let mut other = own;
                other[i] ^= 1 << bit;
                assert_eq!(
                    run(&program, execve, arch, args(other)).0,
                    SECCOMP_RET_USER_NOTIF,
                    "pointer {i}, bit {bit}"
                );
            }
        }
        // execveat with the same words is asked, and nothing else changes.
        let execveat = libc::SYS_execveat as u32;
        assert_eq!(
            run(&program, execveat, arch, args(own)).0,
            SECCOMP_RET_USER_NOTIF
        );
        assert_eq!(run(&program, 0, arch, args(own)).0, SECCOMP_RET_ALLOW);
    }

    #[test]
    fn socket_rules_follow_the_network_and_unix_settings() {
        let rules = |n: &Network, u| socket_rules(n, u).map(|r| r.len());
        // Everything allowed.
        assert_eq!(rules(&Network::On, true), None);
        // One rule: AF_UNIX refused.
        assert_eq!(rules(&Network::On, false), Some(1));
        // No condition at all: every socket() refused.
        assert_eq!(rules(&Network::Off, false), Some(0));
        // One rule: anything but AF_UNIX refused.
        assert_eq!(rules(&Network::Off, true), Some(1));
        let tcp = Network::Tcp {
            connect: vec![],
            bind: vec![],
        };
        // One rule for other families, and per inet family one for types, one for
        // protocols.
        assert_eq!(rules(&tcp, false), Some(1 + 2 * 2));
        assert_eq!(rules(&tcp, true), Some(1 + 2 * 2));
    }

    #[test]
    fn only_connected_unix_pairs_are_allowed_while_unix_sockets_are_off() {
        let rules = |n: &Network, u| socketpair_rules(n, u).map(|r| r.len());
        // Other families, then Unix pairs of any type but stream and seqpacket.
        assert_eq!(rules(&Network::Off, false), Some(2));
        assert_eq!(rules(&Network::On, false), Some(1));
        assert_eq!(rules(&Network::Off, true), Some(1));
        assert_eq!(rules(&Network::On, true), None);
    }

    #[test]
    fn the_command_is_a_server_only_if_a_port_or_unix_sockets_are_allowed() {
        let tcp = |bind: Vec<u16>| Network::Tcp {
            connect: vec![443],
            bind,
        };
        assert!(!may_serve(&Network::Off, false));
        assert!(!may_serve(&tcp(vec![]), false));
        assert!(may_serve(&tcp(vec![8080]), false));
        assert!(may_serve(&Network::On, false));
        assert!(may_serve(&Network::Off, true));
        assert!(may_serve(&tcp(vec![]), true));
    }

    #[test]
    fn with_a_domain_list_listen_is_the_supervisors_or_refused() {
        let by_domain = |bind: Vec<u16>| Network::Tcp {
            connect: vec![],
            bind,
        };
        let listen = |network: &Network, unix_sockets: bool, proxied: bool| {
            let policy = Policy {
                network,
                unix_sockets,
                root: false,
                proxied,
                tcp_decided: false,
                exec_checked: false,
                instead: Instead::default(),
            };
            let program = Filter::build(&policy, true).unwrap().program.unwrap();
            run(
                &program,
                libc::SYS_listen as u32,
                audit_arch().unwrap(),
                [3, 1, 0, 0, 0, 0],
            )
            .0
        };
        // The attack of issue 23 (item 4): Unix sockets beside a domain list let
        // listen() through, which opens a TCP port on every address. Now the
        // supervisor decides.
        assert_eq!(
            listen(&by_domain(vec![]), true, true),
            SECCOMP_RET_USER_NOTIF
        );
        assert_eq!(
            listen(&by_domain(vec![8080]), false, true),
            SECCOMP_RET_USER_NOTIF
        );
        assert_eq!(
            listen(&by_domain(vec![8080]), true, true),
            SECCOMP_RET_USER_NOTIF
        );
        // Nothing to serve: refused in the filter.
        assert_eq!(listen(&by_domain(vec![]), false, true), REFUSE);
        // Ports without a domain list: the supervisor decides too (a port to bind,
        // or Unix sockets, would otherwise let an unbound socket listen anywhere).
        assert_eq!(
            listen(&by_domain(vec![]), true, false),
            SECCOMP_RET_USER_NOTIF
        );
        assert_eq!(
            listen(&by_domain(vec![8080]), false, false),
            SECCOMP_RET_USER_NOTIF
        );
        assert_eq!(listen(&by_domain(vec![]), false, false), REFUSE);
        // The network on: nothing to keep.
        assert_eq!(listen(&Network::On, false, false), SECCOMP_RET_ALLOW);
        assert_eq!(listen(&Network::On, true, false), SECCOMP_RET_ALLOW);
        // bind() stays the kernel's: Landlock checks a TCP port, a Unix path is a file.
        let policy = Policy {
            network: &by_domain(vec![]),
            unix_sockets: true,
            root: false,
            proxied: true,
            tcp_decided: false,
            exec_checked: false,
            instead: Instead::default(),
        };
        assert!(!notified(&policy).contains(&libc::SYS_bind));
        assert!(!rules(&policy).contains_key(&libc::SYS_bind));
    }

    #[test]
    fn root_gets_the_write_bit_and_extended_attribute_rules() {
        let table = |root| {
            rules(&Policy {
                network: &Network::Off,
                unix_sockets: false,
                root,
                proxied: false,
                tcp_decided: false,
                exec_checked: false,
                instead: Instead::default(),
            })
        };
        let (user, root) = (table(false), table(true));
        let bits = |t: &BTreeMap<i64, Vec<Rule>>, call| t[&call][0][0].test;
        assert_eq!(bits(&user, libc::SYS_fchmodat), Test::AnyBit(0o6000));
        assert_eq!(bits(&root, libc::SYS_fchmodat), Test::AnyBit(0o6022));
        // Creating a file is confined to the writable roots: only the setuid rules.
        assert_eq!(bits(&root, libc::SYS_openat), Test::AnyBit(0o6000));
        assert!(!user.contains_key(&libc::SYS_fsetxattr));
        assert!(root[&libc::SYS_fsetxattr].is_empty());
        assert!(root[&SYS_SETXATTRAT].is_empty());
    }

    #[test]
    fn fast_open_is_refused_only_under_port_rules() {
        let table = |network: &Network| {
            rules(&Policy {
                network,
                unix_sockets: false,
                root: false,
                proxied: false,
                tcp_decided: false,
                exec_checked: false,
                instead: Instead::default(),
            })
        };
        let tcp = Network::Tcp {
            connect: vec![443],
            bind: vec![],
        };
        assert_eq!(table(&tcp)[&libc::SYS_sendto].len(), 1);
        assert_eq!(table(&tcp)[&libc::SYS_sendmsg].len(), 1);
        assert!(!table(&Network::On).contains_key(&libc::SYS_sendto));
        assert!(!table(&Network::Off).contains_key(&libc::SYS_sendmsg));
    }

    #[test]
    fn only_eperm_from_the_probe_shows_the_filter_acts() {
        assert!(acts(Err(libc::EPERM)).is_ok());
        for answer in [Err(libc::EINVAL), Err(libc::ENOSYS), Ok(3)] {
            let e = acts(answer).unwrap_err();
            assert!(e.0.contains("does not act"), "{e}");
            assert!(e.0.ends_with("nothing was run"), "{e}");
        }
    }

    #[test]
    fn without_the_filter_the_probe_is_not_refused() {
        // This test process has no filter that refuses openat2.
        assert!(acts(probe()).is_err());
    }

    #[test]
    fn without_seccomp_there_is_nothing_to_load() {
        assert!(
            Filter::build(
                &Policy {
                    network: &Network::Off,
                    unix_sockets: false,
                    root: false,
                    proxied: false,
                    tcp_decided: false,
                    exec_checked: false,
                    instead: Instead::default(),
                },
                false
            )
            .unwrap()
            .program
            .is_none()
        );
    }
}
