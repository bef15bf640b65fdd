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
//!   address without the `bind()` that Landlock checks.
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
//! - On x86_64, every x32 system call (numbers with bit 30 set): they have their own
//!   numbers, which the rules above would not match. 32-bit (ia32) calls are stopped by
//!   the architecture check, which kills the process.
//!
//! After loading, the filter is tried: one call it refuses (`openat2`, with arguments
//! that open nothing) must fail with EPERM, or the command does not run.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch, sock_filter,
};

use super::{Network, SandboxError};

/// What the filter is built for.
pub struct Policy<'a> {
    pub network: &'a Network,
    /// `socket(AF_UNIX)` allowed.
    pub unix_sockets: bool,
    /// The command runs as uid 0.
    pub root: bool,
}

const TIOCSTI: u64 = 0x5412;
const TIOCLINUX: u64 = 0x541C;
const SOCK_STREAM: u64 = 1;
const SOCK_SEQPACKET: u64 = 5;
const MSG_FASTOPEN: u64 = 0x2000_0000;
const GROUP_WRITE: u64 = 0o020;
const OTHER_WRITE: u64 = 0o002;
/// Linux 6.13; not in the libc crate yet. The same number on x86_64 and aarch64.
const SYS_SETXATTRAT: i64 = 463;
const IPPROTO_TCP: u64 = 6;
const SETUID: u64 = 0o4000;
const SETGID: u64 = 0o2000;

fn error(e: impl std::fmt::Display) -> SandboxError {
    SandboxError(format!(
        "cannot set up the sandbox (seccomp filter): {e}; nothing was run"
    ))
}

fn cond(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, SandboxError> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value).map_err(error)
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, SandboxError> {
    SeccompRule::new(conditions).map_err(error)
}

/// The rules for `socket(domain, type, protocol)`: each rule describes sockets that are
/// refused. `None`: no rule, every socket is allowed.
fn socket_rules(
    network: &Network,
    unix_sockets: bool,
) -> Result<Option<Vec<SeccompRule>>, SandboxError> {
    let unix = libc::AF_UNIX as u64;
    let inet = libc::AF_INET as u64;
    let inet6 = libc::AF_INET6 as u64;
    match (network, unix_sockets) {
        (Network::On, true) => Ok(None),
        (Network::On, false) => Ok(Some(vec![rule(vec![cond(0, SeccompCmpOp::Eq, unix)?])?])),
        // An empty list matches every call: no socket at all.
        (Network::Off, false) => Ok(Some(Vec::new())),
        (Network::Off, true) => Ok(Some(vec![rule(vec![cond(0, SeccompCmpOp::Ne, unix)?])?])),
        (Network::Tcp { .. }, unix_sockets) => {
            let mut other_families = vec![
                cond(0, SeccompCmpOp::Ne, inet)?,
                cond(0, SeccompCmpOp::Ne, inet6)?,
            ];
            if unix_sockets {
                other_families.push(cond(0, SeccompCmpOp::Ne, unix)?);
            }
            let mut rules = vec![rule(other_families)?];
            for family in [inet, inet6] {
                // Any type but a stream (the low 4 bits; the rest are flags).
                for kind in (0..16).filter(|&k| k != SOCK_STREAM) {
                    rules.push(rule(vec![
                        cond(0, SeccompCmpOp::Eq, family)?,
                        cond(1, SeccompCmpOp::MaskedEq(0xf), kind)?,
                    ])?);
                }
                // Any protocol but the default and TCP (MPTCP is 262).
                rules.push(rule(vec![
                    cond(0, SeccompCmpOp::Eq, family)?,
                    cond(2, SeccompCmpOp::Ne, 0)?,
                    cond(2, SeccompCmpOp::Ne, IPPROTO_TCP)?,
                ])?);
            }
            Ok(Some(rules))
        }
    }
}

/// The rules for `socketpair(domain, type, protocol, sv)`: refused pairs. `None`: every
/// pair is allowed.
fn socketpair_rules(
    network: &Network,
    unix_sockets: bool,
) -> Result<Option<Vec<SeccompRule>>, SandboxError> {
    let unix = libc::AF_UNIX as u64;
    let mut rules = Vec::new();
    if *network != Network::On {
        rules.push(rule(vec![cond(0, SeccompCmpOp::Ne, unix)?])?);
    }
    if !unix_sockets {
        // The type is the low 4 bits; the rest are flags. SOCK_RAW is a datagram pair.
        for kind in (0..16).filter(|&k| k != SOCK_STREAM && k != SOCK_SEQPACKET) {
            rules.push(rule(vec![
                cond(0, SeccompCmpOp::Eq, unix)?,
                cond(1, SeccompCmpOp::MaskedEq(0xf), kind)?,
            ])?);
        }
    }
    Ok((!rules.is_empty()).then_some(rules))
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
fn rules(policy: &Policy) -> Result<BTreeMap<i64, Vec<SeccompRule>>, SandboxError> {
    let Policy {
        network,
        unix_sockets,
        root,
    } = *policy;
    let mut map = BTreeMap::new();
    if let Some(socket) = socket_rules(network, unix_sockets)? {
        map.insert(libc::SYS_socket, socket);
    }
    if let Some(pair) = socketpair_rules(network, unix_sockets)? {
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
                vec![rule(vec![cond(
                    flags_arg,
                    SeccompCmpOp::MaskedEq(MSG_FASTOPEN),
                    MSG_FASTOPEN,
                )?])?],
            );
        }
    }
    map.insert(
        libc::SYS_ioctl,
        vec![
            rule(vec![cond(1, SeccompCmpOp::Eq, TIOCSTI)?])?,
            rule(vec![cond(1, SeccompCmpOp::Eq, TIOCLINUX)?])?,
        ],
    );
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
        let mut bits = vec![SETUID, SETGID];
        if root && chmod {
            bits.extend([GROUP_WRITE, OTHER_WRITE]);
        }
        let mut refused = Vec::new();
        for bit in bits {
            refused.push(rule(vec![cond(
                mode_arg,
                SeccompCmpOp::MaskedEq(bit),
                bit,
            )?])?);
        }
        map.insert(call, refused);
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
    Ok(map)
}

/// The compiled filter, ready to load.
pub struct Filter {
    program: Option<BpfProgram>,
}

impl Filter {
    /// Compile the filter for `network`. With `available` false (best effort on a kernel
    /// without seccomp), there is nothing to load.
    pub fn build(policy: &Policy, available: bool) -> Result<Filter, SandboxError> {
        if !available {
            return Ok(Filter { program: None });
        }
        let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(error)?;
        let filter = SeccompFilter::new(
            rules(policy)?,
            SeccompAction::Allow,
            SeccompAction::Errno(libc::EPERM as u32),
            arch,
        )
        .map_err(error)?;
        let mut program: BpfProgram = filter.try_into().map_err(error)?;
        if arch == TargetArch::x86_64 {
            program = with_x32_guard(program);
        }
        Ok(Filter {
            program: Some(program),
        })
    }

    /// Load it into this process (no_new_privs must already be set), then check that it
    /// acts: a load that reports success without refusing anything must not run the
    /// command.
    pub fn load(self) -> Result<(), SandboxError> {
        let Some(program) = self.program else {
            return Ok(());
        };
        seccompiler::apply_filter(&program).map_err(error)?;
        acts(probe())
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

/// Put in front of the program: on x86_64, refuse every system call numbered with the
/// x32 bit (0x4000_0000). The rest of the program starts with its own architecture check,
/// and its jumps are relative, so it is unaffected.
fn with_x32_guard(program: BpfProgram) -> BpfProgram {
    const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
    const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
    const JGE_K: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
    const RET_K: u16 = 0x06; // BPF_RET | BPF_K
    const AUDIT_ARCH_X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;
    const X32_SYSCALL_BIT: u32 = 0x4000_0000;
    const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
    const OFFSET_NR: u32 = 0;
    const OFFSET_ARCH: u32 = 4;
    let ins = |code, jt, jf, k| sock_filter { code, jt, jf, k };
    let mut guarded = vec![
        ins(LD_W_ABS, 0, 0, OFFSET_ARCH),
        // Not x86_64: skip to the main program, whose architecture check kills it.
        ins(JEQ_K, 0, 3, AUDIT_ARCH_X86_64),
        ins(LD_W_ABS, 0, 0, OFFSET_NR),
        ins(JGE_K, 0, 1, X32_SYSCALL_BIT),
        ins(RET_K, 0, 0, SECCOMP_RET_ERRNO | libc::EPERM as u32),
    ];
    guarded.extend(program);
    guarded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_compiles_for_every_network_mode() {
        for network in [
            Network::Off,
            Network::On,
            Network::Tcp {
                connect: vec![80],
                bind: vec![],
            },
        ] {
            for unix_sockets in [false, true] {
                for root in [false, true] {
                    let policy = Policy {
                        network: &network,
                        unix_sockets,
                        root,
                    };
                    let filter = Filter::build(&policy, true).unwrap();
                    let program = filter.program.unwrap();
                    assert!(program.len() < 4096, "{} instructions", program.len());
                }
            }
        }
    }

    #[test]
    fn socket_rules_follow_the_network_and_unix_settings() {
        let rules = |n: &Network, u| socket_rules(n, u).unwrap().map(|r| r.len());
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
        // One rule for other families, and per inet family 15 types and one protocol.
        assert_eq!(rules(&tcp, false), Some(1 + 2 * 16));
        assert_eq!(rules(&tcp, true), Some(1 + 2 * 16));
    }

    #[test]
    fn only_connected_unix_pairs_are_allowed_while_unix_sockets_are_off() {
        let rules = |n: &Network, u| socketpair_rules(n, u).unwrap().map(|r| r.len());
        // Other families, then 14 Unix types (all but stream and seqpacket).
        assert_eq!(rules(&Network::Off, false), Some(1 + 14));
        assert_eq!(rules(&Network::On, false), Some(14));
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
    fn root_gets_the_write_bit_and_extended_attribute_rules() {
        let table = |root| {
            rules(&Policy {
                network: &Network::Off,
                unix_sockets: false,
                root,
            })
            .unwrap()
        };
        let (user, root) = (table(false), table(true));
        assert_eq!(user[&libc::SYS_fchmodat].len(), 2);
        assert_eq!(root[&libc::SYS_fchmodat].len(), 4);
        // Creating a file is confined to the writable roots: only the setuid rules.
        assert_eq!(root[&libc::SYS_openat].len(), 2);
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
            })
            .unwrap()
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
                    root: false
                },
                false
            )
            .unwrap()
            .program
            .is_none()
        );
    }

    #[test]
    fn the_x32_guard_jumps_into_the_program() {
        let program = vec![sock_filter {
            code: 0x06,
            jt: 0,
            jf: 0,
            k: 0,
        }];
        let guarded = with_x32_guard(program);
        assert_eq!(guarded.len(), 6);
        // The not-x86_64 branch lands on the first instruction of the program.
        assert_eq!(1 + 1 + usize::from(guarded[1].jf), 5);
        // The x32 test falls through to the return, or skips it into the program.
        assert_eq!(3 + 1 + usize::from(guarded[3].jf), 5);
    }
}
