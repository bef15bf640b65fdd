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
//!   credential cache. `socketpair()` stays allowed: its sockets reach nothing outside.
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
//! - On x86_64, every x32 system call (numbers with bit 30 set): they have their own
//!   numbers, which the rules above would not match. 32-bit (ia32) calls are stopped by
//!   the architecture check, which kills the process.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch, sock_filter,
};

use super::{Network, SandboxError};

const TIOCSTI: u64 = 0x5412;
const TIOCLINUX: u64 = 0x541C;
const SOCK_STREAM: u64 = 1;
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

/// The syscall table for the filter.
fn rules(
    network: &Network,
    unix_sockets: bool,
) -> Result<BTreeMap<i64, Vec<SeccompRule>>, SandboxError> {
    let mut map = BTreeMap::new();
    if let Some(socket) = socket_rules(network, unix_sockets)? {
        map.insert(libc::SYS_socket, socket);
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
        let mut refused = Vec::new();
        for bit in [SETUID, SETGID] {
            refused.push(rule(vec![cond(
                mode_arg,
                SeccompCmpOp::MaskedEq(bit),
                bit,
            )?])?);
        }
        map.insert(call, refused);
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
    pub fn build(
        network: &Network,
        unix_sockets: bool,
        available: bool,
    ) -> Result<Filter, SandboxError> {
        if !available {
            return Ok(Filter { program: None });
        }
        let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(error)?;
        let filter = SeccompFilter::new(
            rules(network, unix_sockets)?,
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

    /// Load it into this process (no_new_privs must already be set).
    pub fn load(self) -> Result<(), SandboxError> {
        match self.program {
            Some(program) => seccompiler::apply_filter(&program).map_err(error),
            None => Ok(()),
        }
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
            for unix in [false, true] {
                let filter = Filter::build(&network, unix, true).unwrap();
                let program = filter.program.unwrap();
                assert!(program.len() < 4096, "{} instructions", program.len());
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
    fn without_seccomp_there_is_nothing_to_load() {
        assert!(
            Filter::build(&Network::Off, false, false)
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
