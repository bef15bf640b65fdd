use super::bpf::{
    AND_K, JA, JEQ_K, JGE_K, JSET_K, LD_W_ABS, REFUSE, RET_K, SECCOMP_RET_ALLOW,
    SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_USER_NOTIF, X32_SYSCALL_BIT,
};
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
        n if n == libc::SYS_sendto || n == libc::SYS_sendmmsg => tcp && lo(3) & MSG_FASTOPEN != 0,
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
        assert!(e.to_string().contains("does not act"), "{e}");
        assert!(matches!(e, SandboxError::NotActing(_)), "{e}");
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
