//! gate on real kernels: Debian's own cloud kernels booted under QEMU in software
//! emulation (no KVM needed), with an initramfs that holds the static gate
//! (`cargo build-static`), busybox and the checks below. docs/kernels.md describes the
//! harness and how to point it at another kernel.
//!
//! Each boot runs the same checks, as root and as uid 65534: `gate doctor`; `safe`
//! without and with `--best-effort`, where the core of the sandbox must hold (the
//! secret in `~/.ssh` unreadable, no write outside the workspace, a write inside it
//! allowed), each with its control at `full`; and a deny rule, refused in the command's
//! text and at exec (a script that runs `rm`), also under Yama's `ptrace_scope` 1, with
//! a control without the rule. The host's own kernel, the newest, is covered by the
//! other test files.
//!
//! The kernels come from the Debian archive and are cached in the target directory
//! (tests/kernels/debian.rs); a failed download or boot fails the test. The boots run
//! one at a time; `cargo test --test kernels -- --nocapture` prints every result and
//! the boot times.

mod common;
#[path = "kernels/cpio.rs"]
mod cpio;
#[path = "kernels/debian.rs"]
mod debian;
#[path = "kernels/vm.rs"]
mod vm;

use std::path::Path;

use vm::{Boot, Check, Outcome, Who};

const SECRET: &str = "gate-test-secret";
const BOTH: [Who; 2] = [Who::Root, Who::Nobody];

/// Every check, for both users.
fn checks() -> Vec<Check> {
    // The script names rm by its path: busybox's shell runs a program it has built in
    // (`rm victim`) without an exec, and the check is of the exec.
    let victim = "echo victim >victim; echo '/bin/rm victim' >x.sh";
    let victim_left = "if [ -e victim ]; then echo victim kept; else echo victim gone; fi";
    let mut checks = Vec::new();
    for who in BOTH {
        checks.extend([
            Check::new("doctor", who, "gate doctor"),
            Check::new("safe", who, "gate --level safe -c 'echo ran'"),
            // The secret: hidden at safe, readable at full (the control).
            Check::new(
                "safe reads the secret",
                who,
                "gate --level safe -c 'cat ~/.ssh/id_ed25519'",
            ),
            Check::new(
                "best effort reads the secret",
                who,
                "gate --level safe --best-effort -c 'cat ~/.ssh/id_ed25519'",
            ),
            Check::new(
                "full reads the secret",
                who,
                "gate --level full -c 'cat ~/.ssh/id_ed25519'",
            ),
            // Writes outside the workspace: refused at safe, done at full (the control);
            // inside it, done at safe too.
            Check::new(
                "safe writes outside",
                who,
                "gate --level safe -c 'echo written >~/outside/safe'",
            )
            .probe("cat ~/outside/safe 2>/dev/null || echo absent"),
            Check::new(
                "best effort writes outside",
                who,
                "gate --level safe --best-effort -c 'echo written >~/outside/best-effort'",
            )
            .probe("cat ~/outside/best-effort 2>/dev/null || echo absent"),
            Check::new(
                "full writes outside",
                who,
                "gate --level full -c 'echo written >~/outside/full'",
            )
            .probe("cat ~/outside/full 2>/dev/null || echo absent"),
            Check::new(
                "best effort writes inside",
                who,
                "gate --level safe --best-effort -c 'echo written >inside'",
            )
            .probe("cat inside 2>/dev/null || echo absent"),
            // A deny rule: in the text, at exec (the text names no rm), and the control.
            Check::new(
                "deny rule in the text",
                who,
                "gate --level full --deny rm -- sh -c 'rm victim'",
            )
            .setup(victim)
            .probe(victim_left),
            Check::new(
                "deny rule at exec",
                who,
                "gate --level full --deny rm -- sh x.sh",
            )
            .setup(victim)
            .probe(victim_left),
            Check::new(
                "deny rule at exec under ptrace_scope 1",
                who,
                "gate --level full --deny rm -- sh x.sh",
            )
            .setup(victim)
            .probe(victim_left)
            .ptrace_scope(1),
            Check::new("no deny rule", who, "gate --level full -- sh x.sh")
                .setup(victim)
                .probe(victim_left),
        ]);
        checks.extend(graded_checks(who));
        checks.extend(network_checks(who));
    }
    checks
}

/// The ports of the network checks: a server outside gate that counts the connections
/// it accepts, a port the command may connect to (nothing listens there), a web server
/// outside gate, and two ports to bind.
const SERVED: u16 = 8081;
const ALLOWED: u16 = 8082;
const WEB: u16 = 8080;
const BINDS: u16 = 8083;
const OTHER_BIND: u16 = 8084;

/// `attack` with a server on `SERVED` outside gate; the command's status is the
/// attack's.
fn with_server(attack: &str) -> String {
    format!(
        "gate-attack tcp-serve {SERVED} >served & sleep 1; {attack}; s=$?; sleep 1; \
         kill $! 2>/dev/null; exit $s"
    )
}

/// `fetch` with busybox's web server on 127.0.0.1:`WEB` outside gate, serving `page`.
fn with_web(fetch: &str) -> String {
    format!(
        "httpd -f -p 127.0.0.1:{WEB} -h \"$PWD/www\" & sleep 1; {fetch}; s=$?; \
         kill $! 2>/dev/null; exit $s"
    )
}

/// The network at `safe` with ports and with a domain list: TCP where it is allowed and
/// nowhere else (by Landlock's TCP rules from ABI 4, by gate's supervisor below), each
/// attack with its control at `full`.
fn network_checks(who: Who) -> Vec<Check> {
    let accepted = "grep -c 'accept: done' served";
    let by_domain = format!(
        "gate --level safe --allow-domain allowed.test:{WEB} --resolve allowed.test=127.0.0.1"
    );
    let web = "mkdir -p www && echo page >www/index.html";
    let mut checks = vec![
        Check::new(
            "full connects to a port",
            who,
            &with_server(&format!(
                "gate --level full -- gate-attack tcp-connect {SERVED}"
            )),
        )
        .probe(accepted),
        Check::new(
            "safe connects to its port",
            who,
            &with_server(&format!(
                "gate --level safe --net-connect {SERVED} -- gate-attack tcp-connect {SERVED}"
            )),
        )
        .probe(accepted),
        Check::new(
            "safe connects to another port",
            who,
            &with_server(&format!(
                "gate --level safe --net-connect {ALLOWED} -- gate-attack tcp-connect {SERVED}"
            )),
        )
        .probe(accepted),
        Check::new(
            "full races the port",
            who,
            &with_server(&format!(
                "gate --level full -- gate-attack tcp-race {ALLOWED},{SERVED}"
            )),
        )
        .probe(accepted),
        Check::new(
            "safe races the port",
            who,
            &with_server(&format!(
                "gate --level safe --net-connect {ALLOWED} -- gate-attack tcp-race \
                 {ALLOWED},{SERVED}"
            )),
        )
        .probe(accepted),
        Check::new(
            "safe by domain connects directly",
            who,
            &with_server(&format!("{by_domain} -- gate-attack tcp-connect {SERVED}")),
        )
        .probe(accepted),
        Check::new(
            "safe by domain races the port",
            who,
            &with_server(&format!(
                "{by_domain} -- gate-attack tcp-race {ALLOWED},{SERVED}"
            )),
        )
        .probe(accepted),
        Check::new(
            "full fetches directly",
            who,
            &with_web(&format!("wget -q -Y off -O - http://127.0.0.1:{WEB}/")),
        )
        .setup(web),
        Check::new(
            "safe by domain fetches through the proxy",
            who,
            &with_web(&format!(
                "{by_domain} -- wget -q -O - http://allowed.test:{WEB}/"
            )),
        )
        .setup(web),
        Check::new(
            "safe by domain fetches directly",
            who,
            &with_web(&format!(
                "{by_domain} -- wget -q -Y off -O - http://127.0.0.1:{WEB}/"
            )),
        )
        .setup(web),
        Check::new(
            "safe by domain with Unix sockets",
            who,
            &format!("{by_domain} --unix-sockets -c 'echo ran'"),
        ),
    ];
    for (level, net) in [
        ("full", String::new()),
        ("safe", format!(" --net-connect {ALLOWED}")),
    ] {
        checks.push(Check::new(
            &format!("{level} times connects"),
            who,
            &format!("gate --level {level}{net} -- gate-attack tcp-time {ALLOWED}"),
        ));
    }
    for (level, net) in [
        ("full", String::new()),
        ("safe", format!(" --net-bind {BINDS}")),
    ] {
        let gate = format!("gate --level {level}{net}");
        checks.extend([
            Check::new(
                &format!("{level} binds its port"),
                who,
                &format!("{gate} -- gate-attack tcp-bind {BINDS}"),
            ),
            Check::new(
                &format!("{level} binds another port"),
                who,
                &format!("{gate} -- gate-attack tcp-bind {OTHER_BIND}"),
            ),
            Check::new(
                &format!("{level} listens unbound"),
                who,
                &format!("{gate} -- gate-attack tcp-listen -"),
            ),
        ]);
    }
    checks
}

/// The attacks on what Landlock before ABI 6 lacks, each at `safe` and at `full` (the
/// control), with the attack helper (tests/kernels/attack.c) where busybox cannot make
/// the system call; and `safe` under `sandbox.require`.
fn graded_checks(who: Who) -> Vec<Check> {
    let victim = "echo kept >~/outside/victim";
    let victim_left = "echo \"[$(cat ~/outside/victim)]\"";
    let device = "rm -f /dev/gate-serial; mknod /dev/gate-serial c 4 64; \
                  chmod 666 /dev/gate-serial; stty -F /dev/ttyS0 rows 1 cols 1";
    let size = "stty -F /dev/ttyS0 size";
    // A process of the same user outside gate that notes SIGURG (ignored by default,
    // so a signal to every process harms nothing else), then the attack, then the
    // victim ended.
    let signalled = |attack: &str| {
        format!(
            "sh -c 'trap \"echo signalled >got; exit\" URG; while :; do sleep 1; done' & \
             sleep 1; {attack}; sleep 2; kill $!"
        )
    };
    let got = "cat got 2>/dev/null || echo not signalled";
    // A server on the abstract socket @gate-test outside gate, then the attack.
    let served = |attack: &str| {
        format!(
            "gate-attack abstract-serve gate-test >served & sleep 1; {attack}; sleep 1; \
             kill $! 2>/dev/null"
        )
    };
    let accepted = "grep -c 'accept: done' served";
    let mut checks = Vec::new();
    for level in ["safe", "full"] {
        let gate = format!("gate --level {level}");
        checks.extend([
            Check::new(
                &format!("{level} truncates by path"),
                who,
                &format!("{gate} -- gate-attack truncate ~/outside/victim"),
            )
            .setup(victim)
            .probe(victim_left),
            Check::new(
                &format!("{level} truncates opening to read"),
                who,
                &format!("{gate} -- gate-attack open-trunc ~/outside/victim"),
            )
            .setup(victim)
            .probe(victim_left),
            Check::new(
                &format!("{level} truncates the secret"),
                who,
                &format!("{gate} -- gate-attack truncate ~/.ssh/id_ed25519"),
            )
            .probe("cat ~/.ssh/id_ed25519"),
            Check::new(
                &format!("{level} ioctls a device opened with mode 3"),
                who,
                &format!("{gate} -- gate-attack mode3-ioctl /dev/gate-serial"),
            )
            .setup(device)
            .probe(size),
            Check::new(
                &format!("{level} signals every process"),
                who,
                &signalled(&format!("{gate} -- gate-attack kill-all 23")),
            )
            .probe(got),
            Check::new(
                &format!("{level} signals one process"),
                who,
                &signalled(&format!("{gate} -c \"kill -URG $!\"")),
            )
            .probe(got),
            Check::new(
                &format!("{level} runs"),
                who,
                &format!("{gate} -c 'echo ran'"),
            ),
        ]);
    }
    checks.extend([
        Check::new(
            "safe reaches an abstract socket",
            who,
            &served("gate --level safe -- gate-attack abstract-connect gate-test"),
        )
        .probe(accepted),
        // The control runs without gate: at every level gate's mark scopes abstract
        // sockets where the kernel can (docs/sandbox.md).
        Check::new(
            "no gate reaches an abstract socket",
            who,
            &served("gate-attack abstract-connect gate-test"),
        )
        .probe(accepted),
        Check::new(
            "safe with Unix sockets reaches an abstract socket",
            who,
            &served("gate --level safe --unix-sockets -- gate-attack abstract-connect gate-test"),
        )
        .probe(accepted),
        Check::new("check", who, "gate check --level safe -c 'echo ran'"),
        Check::new(
            "safe under sandbox.require",
            who,
            "gate --config require.toml --level safe -c 'echo ran'",
        )
        .setup("printf '[sandbox]\\nrequire = [\"scopes\"]\\n' >require.toml"),
    ]);
    checks
}

/// The Landlock ABI `gate doctor` reported, from its `landlock` line.
fn landlock_abi(boot: &Boot, who: Who) -> u32 {
    let doctor = boot.outcome("doctor", who);
    doctor
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("landlock"))
        .and_then(|rest| rest.trim().strip_prefix("ABI "))
        .and_then(|rest| rest.split(':').next()?.parse().ok())
        .unwrap_or_else(|| panic!("gate doctor named no Landlock ABI\n{}", boot.report()))
}

fn assert_that(boot: &Boot, holds: bool, what: &str, name: &str, who: Who, outcome: &Outcome) {
    assert!(
        holds,
        "{}: {what} ({name} as {}: {outcome:#?})\n\nThe whole boot:\n{}",
        boot.kernel.display(),
        who.name(),
        boot.report()
    );
}

/// What must hold on every kernel gate supports: with best effort, the secret stays
/// unreadable and nothing is written outside the workspace while the workspace stays
/// writable; a deny rule stops `rm` in the text and at exec (or, where Yama forbids the
/// supervisor to read the command's memory, gate refuses to run at all). Each with its
/// control.
fn assert_the_core_holds(boot: &Boot) {
    for who in BOTH {
        let check = |name: &str, holds: &dyn Fn(&Outcome) -> bool, what: &str| {
            let outcome = boot.outcome(name, who);
            assert_that(boot, holds(outcome), what, name, who, outcome);
        };
        check(
            "full reads the secret",
            &|o| o.status == Some(0) && o.stdout.trim() == SECRET,
            "control: the secret is readable at full",
        );
        check(
            "best effort reads the secret",
            &|o| o.status != Some(0) && !o.stdout.contains(SECRET),
            "the secret is unreadable at safe with best effort",
        );
        check(
            "full writes outside",
            &|o| o.status == Some(0) && o.probe.trim() == "written",
            "control: a file outside the workspace is written at full",
        );
        check(
            "best effort writes outside",
            &|o| o.status != Some(0) && o.probe.trim() == "absent",
            "nothing is written outside the workspace at safe with best effort",
        );
        check(
            "best effort writes inside",
            &|o| o.status == Some(0) && o.probe.trim() == "written",
            "the workspace is writable at safe with best effort",
        );
        check(
            "no deny rule",
            &|o| o.status == Some(0) && o.probe.trim() == "victim gone",
            "control: without a deny rule, the script's rm removes the victim",
        );
        check(
            "deny rule in the text",
            &|o| {
                o.status == Some(common::REFUSED)
                    && o.probe.trim() == "victim kept"
                    && o.stderr
                        .starts_with("gate: refused `sh -c 'rm victim'`: the deny rule `rm`")
            },
            "the deny rule refuses `sh -c 'rm victim'` before anything runs",
        );
        let booted = boot.fact("ptrace_scope").parse::<u8>().ok();
        for (name, scope) in [
            ("deny rule at exec", booted),
            ("deny rule at exec under ptrace_scope 1", Some(1)),
        ] {
            // Yama 1 and 2 let the supervisor read the command's memory with root's
            // CAP_SYS_PTRACE (kept at full) or, for another user, as the owner of the
            // user namespace gate then runs the command in (Debian's kernels allow
            // unprivileged ones); 3 lets nobody, and gate refuses to start the command.
            let supervised = match scope {
                None | Some(0..=2) => true,
                Some(_) => false,
            };
            if supervised {
                check(
                    name,
                    &|o| {
                        o.probe.trim() == "victim kept"
                            && o.status != Some(0)
                            && o.stderr
                                .lines()
                                .any(|l| l.starts_with("gate: refused to run ") && l.contains("rm"))
                    },
                    "the exec check refuses the script's rm",
                );
            } else {
                check(
                    name,
                    &|o| {
                        o.probe.trim() == "victim kept"
                            && o.status == Some(common::GATE_ERROR)
                            && o.stderr.starts_with("gate: Yama's ptrace_scope is ")
                    },
                    "under Yama, gate refuses a command whose deny rules it could not check \
                     at exec",
                );
            }
        }
    }
}

/// The residual lines `gate doctor` prints below Landlock ABI 6, by the ABI that
/// brought each feature (docs/sandbox.md's kernel table says the same).
const RESIDUAL: [(u32, &str); 3] = [
    (
        3,
        "residual    without Landlock truncate control (ABI 3): seccomp refuses truncate(2) by \
         path and every open with O_TRUNC that is not for writing, which Landlock checks; \
         nothing stays open",
    ),
    (
        5,
        "residual    without Landlock device ioctl control (ABI 5): seccomp refuses opens with \
         access mode 3 (neither read nor write, which Landlock does not check), so no device \
         file in /dev but the granted ones can be opened; a device file outside /dev that the \
         command may read takes any ioctl",
    ),
    (
        6,
        "residual    without Landlock signal and abstract socket scoping (ABI 6): Unix sockets \
         are off, so no abstract socket can be reached, and seccomp refuses kill(-1), a signal \
         to every process the user may signal; the command can signal your other processes \
         (the agent, an editor) one by one",
    ),
];

/// `safe` as this kernel can run it: from Landlock ABI 1 on the core holds and `safe`
/// runs, without best effort; below ABI 6 `gate doctor` names each residual in one
/// line, and `sandbox.require` refuses to run without what it names. Every attack on
/// what a newer ABI adds is stopped (by Landlock there, by seccomp below it), each
/// with its control at `full`; what stays open below ABI 6 (a signal to one process,
/// an abstract socket with `--unix-sockets`) is shown to stay open.
fn assert_safe_as_the_abi_allows(boot: &Boot, abi: u32) {
    for who in BOTH {
        let check = |name: &str, holds: &dyn Fn(&Outcome) -> bool, what: &str| {
            let outcome = boot.outcome(name, who);
            assert_that(boot, holds(outcome), what, name, who, outcome);
        };
        let residual: Vec<&str> = RESIDUAL
            .iter()
            .filter(|(since, _)| abi < *since)
            .map(|(_, line)| *line)
            .collect();
        check(
            "doctor",
            &|o| {
                let lines: Vec<&str> = o
                    .stdout
                    .lines()
                    .filter(|l| l.starts_with("residual"))
                    .collect();
                o.status == Some(0) && lines == residual && o.stdout.contains(if abi >= 6 {
                    "safe level  can be fully enforced"
                } else {
                    "safe level  can be enforced, graded: the core holds, and this kernel lacks "
                })
            },
            "gate doctor says safe runs here, and names each residual in one line",
        );
        for name in ["safe", "safe runs"] {
            check(
                name,
                &|o| o.status == Some(0) && o.stdout == "ran\n" && o.stderr.is_empty(),
                "safe runs, without a word on stderr",
            );
        }
        check(
            "full runs",
            &|o| o.status == Some(0) && o.stdout == "ran\n",
            "full runs",
        );
        check(
            "safe reads the secret",
            &|o| o.status != Some(0) && !o.stdout.contains(SECRET),
            "the secret is unreadable at safe",
        );
        check(
            "safe writes outside",
            &|o| o.status != Some(0) && o.probe.trim() == "absent",
            "nothing is written outside the workspace at safe",
        );
        check(
            "best effort reads the secret",
            &|o| !o.stderr.contains("gate: warning"),
            "best effort warns about nothing where the core is enforced",
        );
        check(
            "check",
            &|o| {
                let outcome = o
                    .stdout
                    .lines()
                    .find_map(|l| l.strip_prefix("outcome:  "))
                    .unwrap_or_default();
                o.status == Some(0)
                    && outcome.starts_with("gate would run it inside the sandbox")
                    && residual.iter().all(|line| {
                        outcome.contains(&format!("; {}", line.trim_start_matches("residual    ")))
                    })
                    && (abi < 6 || outcome == "gate would run it inside the sandbox")
            },
            "gate check says safe runs here, with the residual sentences of gate doctor",
        );
        if abi >= 6 {
            check(
                "safe under sandbox.require",
                &|o| o.status == Some(0) && o.stdout == "ran\n",
                "sandbox.require is met",
            );
        } else {
            check(
                "safe under sandbox.require",
                &|o| {
                    o.status == Some(common::GATE_ERROR)
                        && o.stdout.is_empty()
                        && o.stderr.starts_with(&format!(
                            "gate: the safe level needs Landlock signal and abstract socket \
                             scoping (ABI 6), which this kernel (Landlock ABI {abi}) lacks and \
                             sandbox.require asks for; nothing was run."
                        ))
                        && o.stderr.lines().count() == 1
                },
                "sandbox.require refuses below what it names, in one line naming the feature \
                 and the key",
            );
        }

        // Truncation: by path, by an open for reading, of the secret.
        for (attack, intact) in [
            ("truncates by path", "[kept]"),
            ("truncates opening to read", "[kept]"),
            ("truncates the secret", SECRET),
        ] {
            check(
                &format!("full {attack}"),
                &|o| o.status == Some(0) && o.probe.trim() != intact,
                "control: the file is truncated at full",
            );
            check(
                &format!("safe {attack}"),
                &|o| {
                    o.status != Some(0)
                        && o.probe.trim() == intact
                        && o.stdout.contains(if abi >= 3 {
                            // Landlock's EACCES, or for root's covered secret EROFS.
                            ": refused: "
                        } else {
                            ": refused: Operation not permitted"
                        })
                },
                "the file is left whole at safe (by Landlock from ABI 3, by seccomp below)",
            );
        }
        // A device file in /dev that the user may open by its mode, but the rules do not
        // grant: opened with access mode 3, its ioctls reach the terminal.
        check(
            "full ioctls a device opened with mode 3",
            &|o| o.status == Some(0) && o.probe.trim() == "12 34",
            "control: the terminal's size is changed at full",
        );
        check(
            "safe ioctls a device opened with mode 3",
            &|o| {
                o.status != Some(0)
                    && o.probe.trim() != "12 34"
                    && o.stdout.contains(if abi >= 5 {
                        "TIOCSWINSZ: refused: Permission denied"
                    } else {
                        "open with access mode 3: refused: Operation not permitted"
                    })
            },
            "the device is not reached at safe (its ioctl refused by Landlock from ABI 5, \
             its open by seccomp below)",
        );
        // Signals: to every process, and to one.
        check(
            "full signals every process",
            &|o| o.probe.trim() == "signalled",
            "control: kill(-1) reaches the process outside at full",
        );
        check(
            "safe signals every process",
            &|o| o.probe.trim() == "not signalled",
            "kill(-1) reaches nothing outside at safe (Landlock's scope from ABI 6, seccomp \
             below)",
        );
        check(
            "full signals one process",
            &|o| o.probe.trim() == "signalled",
            "control: kill reaches the process outside at full",
        );
        check(
            "safe signals one process",
            &|o| {
                o.probe.trim()
                    == if abi >= 6 {
                        "not signalled"
                    } else {
                        "signalled"
                    }
            },
            "a signal to one process outside is refused from ABI 6, and below it reaches \
             the process, as gate doctor's residual line says",
        );
        // Abstract Unix sockets bound outside.
        check(
            "no gate reaches an abstract socket",
            &|o| o.probe.trim() == "1",
            "control: the abstract socket is reached without gate",
        );
        check(
            "safe reaches an abstract socket",
            &|o| {
                o.probe.trim() == "0"
                    && o.stdout
                        .contains("socket: refused: Operation not permitted")
            },
            "without --unix-sockets no Unix socket can be made at safe, on every kernel",
        );
        check(
            "safe with Unix sockets reaches an abstract socket",
            &|o| o.probe.trim() == if abi >= 6 { "0" } else { "1" },
            "with --unix-sockets, an abstract socket outside is refused from ABI 6, and below \
             it is reached, as the residual says",
        );
    }
}

/// The network at `safe` as this kernel can enforce it: from Landlock ABI 4 by its TCP
/// rules, below it by gate's supervisor, which decides every `connect()` and `bind()`;
/// the same outcome on both, each attack with its control at `full`. Below ABI 4, a
/// domain list with Unix sockets is refused in one line (the supervisor could not tell
/// a Unix socket's connect from a TCP one's without racing the command).
fn assert_the_network_holds(boot: &Boot, abi: u32) {
    for who in BOTH {
        let check = |name: &str, holds: &dyn Fn(&Outcome) -> bool, what: &str| {
            let outcome = boot.outcome(name, who);
            assert_that(boot, holds(outcome), what, name, who, outcome);
        };
        check(
            "doctor",
            &|o| {
                o.stdout
                    .contains("network by domain (--allow-domain) can be enforced: ")
                    && o.stdout
                        .contains("gate's supervisor decides every connect()")
                        == (abi < 4)
            },
            "gate doctor says a domain list can be enforced, and how",
        );
        let accepted = |o: &Outcome| o.probe.trim().parse::<u32>().unwrap_or(u32::MAX);
        check(
            "full connects to a port",
            &|o| o.status == Some(0) && accepted(o) == 1,
            "control: the server outside accepts a connection from full",
        );
        check(
            "safe connects to its port",
            &|o| o.status == Some(0) && accepted(o) == 1 && o.stderr.is_empty(),
            "--net-connect PORT: the connection to that port is made at safe",
        );
        check(
            "safe connects to another port",
            &|o| {
                o.status == Some(1)
                    && accepted(o) == 0
                    && o.stdout.contains("tcp-connect: refused: Permission denied")
            },
            "--net-connect PORT: a connection to another port is refused (EACCES) at safe",
        );
        check(
            "full races the port",
            &|o| o.status == Some(0) && accepted(o) > 0,
            "control: the racing connects reach the server outside at full",
        );
        for name in ["safe races the port", "safe by domain races the port"] {
            check(
                name,
                &|o| {
                    o.status == Some(0)
                        && accepted(o) == 0
                        && o.stdout.contains("tcp-race: 0 connected")
                },
                "no connect reaches the forbidden port however another thread switches the \
                 address and the descriptor under it",
            );
        }
        check(
            "safe by domain connects directly",
            &|o| {
                o.status == Some(1)
                    && accepted(o) == 0
                    && o.stdout.contains("tcp-connect: refused: Permission denied")
            },
            "a domain list: a direct connection is refused (EACCES) at safe",
        );
        check(
            "full fetches directly",
            &|o| o.status == Some(0) && o.stdout == "page\n",
            "control: the web server outside answers at full",
        );
        check(
            "safe by domain fetches through the proxy",
            &|o| o.status == Some(0) && o.stdout == "page\n",
            "a domain list: the allowed name is fetched through gate's proxy at safe",
        );
        check(
            "safe by domain fetches directly",
            &|o| o.status != Some(0) && !o.stdout.contains("page"),
            "a domain list: the web server is not reached directly at safe",
        );
        if abi >= 4 {
            check(
                "safe by domain with Unix sockets",
                &|o| o.status == Some(0) && o.stdout == "ran\n",
                "a domain list with Unix sockets runs where Landlock has TCP rules",
            );
        } else {
            check(
                "safe by domain with Unix sockets",
                &|o| {
                    o.status == Some(common::GATE_ERROR)
                        && o.stdout.is_empty()
                        && o.stderr.starts_with(
                            "gate: a domain list (--allow-domain, sandbox.allow_domains) with \
                             Unix sockets allowed (--unix-sockets) needs Landlock TCP port \
                             rules (ABI 4), which this kernel cannot do; nothing was run.",
                        )
                        && o.stderr.lines().count() == 1
                },
                "below ABI 4, a domain list with Unix sockets is refused in one line",
            );
        }
        check(
            "full binds its port",
            &|o| o.status == Some(0),
            "control: the port is bound at full",
        );
        check(
            "full binds another port",
            &|o| o.status == Some(0),
            "control: the other port is bound at full",
        );
        check(
            "full listens unbound",
            &|o| o.status == Some(0),
            "control: a socket never bound listens at full",
        );
        check(
            "safe binds its port",
            &|o| o.status == Some(0) && o.stdout.contains("listen: done"),
            "--net-bind PORT: that port is bound, and listens, at safe",
        );
        check(
            "safe binds another port",
            &|o| o.status == Some(1) && o.stdout.contains("bind: refused: Permission denied"),
            "--net-bind PORT: another port is refused (EACCES) at safe",
        );
        check(
            "safe listens unbound",
            &|o| {
                o.status == Some(1)
                    && o.stdout
                        .contains("tcp-listen: refused: Operation not permitted")
            },
            "--net-bind PORT: a socket never bound does not listen (on a port nobody \
             allowed) at safe",
        );
    }
}

/// `safe` against `full` for the same command in the same boot: the checks' times by
/// the machine's clock (emulated time: only the ratio means anything).
fn print_safe_against_full(boot: &Boot) {
    for who in BOTH {
        let time = |name: &str| boot.outcome(name, who).elapsed.unwrap_or_default();
        let (safe, full) = (time("safe runs"), time("full runs"));
        println!(
            "{}: `echo ran` as {}: safe {:.2} s, full {:.2} s, ratio {:.1}",
            boot.kernel.display(),
            who.name(),
            safe.as_secs_f64(),
            full.as_secs_f64(),
            safe.as_secs_f64() / full.as_secs_f64().max(0.01)
        );
    }
}

/// One connect at `safe` against one at `full` in the same boot (the kernel's clock,
/// emulated: only the ratio means anything), to a port where nothing listens: below
/// ABI 4 each goes through gate's supervisor, which performs it. Every one must have
/// been refused by the kernel (ECONNREFUSED), at both levels.
fn print_connects_safe_against_full(boot: &Boot) {
    for who in BOTH {
        let per = |name: &str| -> f64 {
            let outcome = boot.outcome(name, who);
            let us = outcome
                .stdout
                .lines()
                .find_map(|l| l.strip_prefix("tcp-time: "))
                .and_then(|l| l.strip_suffix(" us per connect"))
                .and_then(|n| n.parse::<f64>().ok());
            let Some(us) = us else {
                panic!("{name} as {}: no time\n{}", who.name(), boot.report())
            };
            us
        };
        let (safe, full) = (per("safe times connects"), per("full times connects"));
        println!(
            "{}: one connect as {}: safe {safe:.0} us, full {full:.0} us, ratio {:.1}",
            boot.kernel.display(),
            who.name(),
            safe / full.max(1.0)
        );
    }
}

/// Boot `kernel` with every check; print the report (seen with --nocapture).
fn boot_with_checks(kernel: &Path) -> Boot {
    let boot = vm::boot(kernel, &checks());
    println!("{}", boot.report());
    boot
}

/// What Debian built into the kernel: Landlock and Yama on, both in the default list
/// of security modules.
fn assert_debian_config(kernel: &debian::Kernel) {
    for option in ["SECURITY_LANDLOCK", "SECURITY_YAMA", "SECCOMP_FILTER"] {
        assert_eq!(
            kernel.config_value(option).as_deref(),
            Some("y"),
            "{}: CONFIG_{option}",
            kernel.package
        );
    }
    let lsm = kernel.config_value("LSM").unwrap_or_default();
    println!("{}: CONFIG_LSM={lsm}", kernel.package);
    for module in ["landlock", "yama"] {
        assert!(
            lsm.contains(module),
            "{}: CONFIG_LSM={lsm} lacks {module}",
            kernel.package
        );
    }
}

/// What the booted Debian kernel says: Landlock and Yama active, and Yama's
/// `ptrace_scope` 0 (Debian turns Yama's restriction off by default; upstream's
/// default is 1), which docs/supervisor.md states.
fn assert_debian_boot(boot: &Boot, release: &str) {
    assert!(
        boot.fact("release").starts_with(release),
        "booted {} instead of {release}",
        boot.fact("release")
    );
    let lsm = boot.fact("lsm");
    assert!(
        lsm.split(',').any(|m| m == "landlock") && lsm.split(',').any(|m| m == "yama"),
        "active security modules: {lsm}"
    );
    assert_eq!(boot.fact("ptrace_scope"), "0", "{}", boot.report());
}

/// docs/kernels.md shows what gate printed in this boot, word for word: the line of
/// `check` (as `who`) that starts with `start`, on stdout or stderr.
fn assert_the_docs_show(boot: &Boot, lines: &[(&str, Who, &str)]) {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/kernels.md"))
            .unwrap();
    for (check, who, start) in lines {
        let outcome = boot.outcome(check, *who);
        let line = outcome
            .stdout
            .lines()
            .chain(outcome.stderr.lines())
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| {
                panic!(
                    "{check} as {} printed no line starting {start:?}\n{}",
                    who.name(),
                    boot.report()
                )
            });
        assert!(
            doc.contains(line),
            "docs/kernels.md does not show what {check} as {} printed:\n{line}",
            who.name()
        );
    }
}

#[test]
fn debian_12_cloud_kernel_6_1() {
    let kernel = debian::cloud_kernel(&debian::BOOKWORM);
    assert_debian_config(&kernel);
    let boot = boot_with_checks(&kernel.vmlinuz);
    assert_debian_boot(&boot, "6.1.");
    for who in BOTH {
        assert_eq!(landlock_abi(&boot, who), 2, "{}", boot.report());
    }
    assert_the_core_holds(&boot);
    assert_safe_as_the_abi_allows(&boot, 2);
    assert_the_network_holds(&boot, 2);
    print_safe_against_full(&boot);
    print_connects_safe_against_full(&boot);
    assert_the_docs_show(
        &boot,
        &[
            ("doctor", Who::Nobody, "safe level"),
            ("doctor", Who::Nobody, "residual"),
            ("safe under sandbox.require", Who::Nobody, "gate: "),
            (
                "deny rule at exec under ptrace_scope 1",
                Who::Nobody,
                "gate: refused to run ",
            ),
        ],
    );
}

#[test]
fn debian_13_cloud_kernel_6_12() {
    let kernel = debian::cloud_kernel(&debian::TRIXIE);
    assert_debian_config(&kernel);
    let boot = boot_with_checks(&kernel.vmlinuz);
    assert_debian_boot(&boot, "6.12.");
    for who in BOTH {
        assert_eq!(landlock_abi(&boot, who), 6, "{}", boot.report());
    }
    assert_the_core_holds(&boot);
    assert_safe_as_the_abi_allows(&boot, 6);
    assert_the_network_holds(&boot, 6);
    print_safe_against_full(&boot);
    print_connects_safe_against_full(&boot);
}

/// Issue 24: Landlock built in but left out at boot (`lsm=` without it) is neither a
/// kernel without Landlock nor a container's profile, and `gate doctor` says so, with
/// the boot parameter to change; `safe` refuses, naming the core it lacks. The
/// control is the Debian 12 boot above, where the same kernel has Landlock.
#[test]
fn debian_12_with_landlock_left_out_at_boot() {
    let kernel = debian::cloud_kernel(&debian::BOOKWORM);
    let who = Who::Nobody;
    let checks = [
        Check::new("doctor", who, "gate doctor"),
        Check::new("safe", who, "gate --level safe -- echo ran"),
    ];
    let boot = vm::boot_with(&kernel.vmlinuz, &checks, "lsm=capability,yama");
    println!("{}", boot.report());
    // Lockdown is always first: the kernel starts it before the list.
    assert_eq!(
        boot.fact("lsm"),
        "lockdown,capability,yama",
        "{}",
        boot.report()
    );
    let doctor = boot.outcome("doctor", who);
    let landlock = doctor
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("landlock    "))
        .unwrap_or_default();
    assert!(
        doctor.status == Some(1)
            && landlock.starts_with(
                "built into this kernel but turned off at boot (EOPNOTSUPP): the boot \
                 parameter lsm=capability,yama leaves it out (active now: lockdown,capability,yama); \
                 add landlock to the boot parameter lsm="
            ),
        "{}",
        boot.report()
    );
    assert!(
        doctor.stdout.contains(
            "domains     network by domain (--allow-domain) cannot be enforced: it runs \
             inside the sandbox, which needs Landlock filesystem rules (ABI 1)"
        ),
        "{}",
        boot.report()
    );
    let safe = boot.outcome("safe", who);
    assert!(
        safe.status == Some(common::GATE_ERROR)
            && safe.stdout.is_empty()
            && safe.stderr.starts_with(
                "gate: the safe level needs Landlock filesystem rules (ABI 1), which this \
                 kernel (Landlock ABI 0) cannot enforce; nothing was run."
            ),
        "{}",
        boot.report()
    );
    assert_the_docs_show(&boot, &[("doctor", who, "landlock")]);
}

/// The harness itself fails loudly: a file that is not a kernel is no passing boot.
#[test]
fn a_file_that_is_not_a_kernel_fails_the_boot() {
    let dir = tempfile::tempdir().unwrap();
    let not_a_kernel = dir.path().join("vmlinuz");
    std::fs::write(&not_a_kernel, "not a kernel\n").unwrap();
    let failed = std::panic::catch_unwind(|| vm::boot(&not_a_kernel, &checks()));
    let Err(message) = failed else {
        panic!("a boot of a text file passed");
    };
    let message = message
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        message.starts_with(&format!("booting {} under QEMU: ", not_a_kernel.display())),
        "{message}"
    );
}

/// Your own kernel: `TEST_KERNEL=/boot/vmlinuz-… cargo test --test kernels
/// a_kernel_you_name -- --ignored --nocapture` boots it with the same checks and prints every result; it
/// fails when the core of the sandbox or the deny rules do not hold there (see
/// docs/kernels.md). Ignored in the suite, which has no kernel of yours to boot.
#[test]
#[ignore = "boots the kernel TEST_KERNEL names; run with --ignored"]
fn a_kernel_you_name() {
    let kernel = std::env::var_os("TEST_KERNEL").expect(
        "set TEST_KERNEL to the kernel to boot (a vmlinuz or bzImage file, e.g. \
         /boot/vmlinuz-$(uname -r))",
    );
    let boot = boot_with_checks(Path::new(&kernel));
    let abi = landlock_abi(&boot, Who::Root);
    println!(
        "Landlock ABI {abi}, Yama ptrace_scope {}",
        boot.fact("ptrace_scope")
    );
    assert_the_core_holds(&boot);
}

/// A kernel the archive does not have fails the fetch, with apt's words; nothing is
/// cached, so the next run asks again.
#[test]
fn a_release_the_archive_lacks_fails_the_fetch() {
    const NO_SUCH: debian::Release = debian::Release {
        name: "gate-no-such-release",
        suites: &[("http://deb.debian.org/debian", "gate-no-such-release")],
    };
    let failed = std::panic::catch_unwind(|| debian::cloud_kernel(&NO_SUCH));
    let Err(message) = failed else {
        panic!("a release the archive lacks gave a kernel");
    };
    let message = message
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        message.starts_with("fetching a Debian kernel: `")
            && message.contains("gate-no-such-release"),
        "{message}"
    );
    assert!(
        !debian::cache_dir(&NO_SUCH).exists(),
        "a failed fetch left a cache"
    );
}
