//! One boot of a kernel under QEMU: the initramfs (a statically linked gate, busybox
//! and the checks), the run in software emulation, and what came back on the serial
//! console.
//!
//! The initramfs's `/init` (a busybox shell script) mounts what gate needs, prints a few
//! facts about the running kernel, then runs each check in order: its setup as root in a
//! fresh workspace, its command as root or as uid 65534 (busybox `su`), its probe as
//! root, and prints each's output as lines starting `@@`. Then it powers the machine
//! off. Anything else on the console (firmware, kernel messages) is ignored; a boot that
//! ends without the end marker, or runs past its deadline, fails with the whole console
//! log.

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use super::cpio::{Entry, archive};

/// How long one boot may take, checks included, before the test fails. A boot with the
/// checks of tests/kernels.rs takes about a minute in software emulation on a busy two-core
/// machine.
pub const BOOT_DEADLINE: Duration = Duration::from_secs(300);

/// Who runs a check's command inside the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Who {
    Root,
    /// uid and gid 65534, home `/home/nobody`.
    Nobody,
}

impl Who {
    pub fn name(self) -> &'static str {
        match self {
            Who::Root => "root",
            Who::Nobody => "nobody",
        }
    }
}

/// One command run inside the machine. Every check gets a fresh workspace,
/// `$HOME/work/ID`, its user's working directory; `$HOME/.ssh/id_ed25519` holds the
/// line `gate-test-secret`, and `$HOME/outside` is a directory the user owns outside the
/// workspace.
pub struct Check {
    pub name: String,
    pub who: Who,
    /// Shell text run as root in the workspace before the command, with the check's
    /// user's `HOME` (its files are then given to that user).
    pub setup: String,
    /// Shell text run as `who` in the workspace, with stdin from /dev/null.
    pub command: String,
    /// Shell text run as root in the workspace after the command, with the check's
    /// user's `HOME`: what the command left behind.
    pub probe: String,
    /// Yama's `ptrace_scope` for this check only (the booted value is restored after).
    pub ptrace_scope: Option<u8>,
}

impl Check {
    pub fn new(name: &str, who: Who, command: &str) -> Check {
        Check {
            name: name.to_owned(),
            who,
            setup: String::new(),
            command: command.to_owned(),
            probe: String::new(),
            ptrace_scope: None,
        }
    }

    pub fn setup(mut self, setup: &str) -> Check {
        self.setup = setup.to_owned();
        self
    }

    pub fn probe(mut self, probe: &str) -> Check {
        self.probe = probe.to_owned();
        self
    }

    pub fn ptrace_scope(mut self, scope: u8) -> Check {
        self.ptrace_scope = Some(scope);
        self
    }
}

/// What one check's command did.
#[derive(Debug, Default, Clone)]
pub struct Outcome {
    pub status: Option<i32>,
    pub setup_status: Option<i32>,
    pub setup_output: String,
    pub stdout: String,
    pub stderr: String,
    pub probe: String,
    /// How long the command took, by the machine's clock (`/proc/uptime`, in
    /// hundredths of a second; emulated time, so only comparable within one boot).
    pub elapsed: Option<Duration>,
}

/// What one boot reported.
pub struct Boot {
    pub kernel: PathBuf,
    /// `release`, `lsm`, `ptrace_scope`: read inside the machine.
    pub facts: BTreeMap<String, String>,
    pub outcomes: BTreeMap<(String, Who), Outcome>,
    /// From starting QEMU to the first line `/init` printed.
    pub to_init: Duration,
    /// From starting QEMU to its exit.
    pub total: Duration,
    /// The whole console log, for failure messages.
    pub serial: String,
}

impl Boot {
    pub fn fact(&self, name: &str) -> &str {
        self.facts.get(name).map(String::as_str).unwrap_or_else(|| {
            panic!(
                "the boot of {} reported no fact `{name}`\n{}",
                self.kernel.display(),
                self.serial
            )
        })
    }

    /// The outcome of the check `name` run as `who`; a check that did not report is
    /// a failure, with the console log.
    pub fn outcome(&self, name: &str, who: Who) -> &Outcome {
        let outcome = self
            .outcomes
            .get(&(name.to_owned(), who))
            .unwrap_or_else(|| {
                panic!(
                    "the check {name} as {} did not report in the boot of {}\n{}",
                    who.name(),
                    self.kernel.display(),
                    self.serial
                )
            });
        assert_eq!(
            outcome.setup_status,
            Some(0),
            "the setup of {name} as {} failed in the boot of {}: {}",
            who.name(),
            self.kernel.display(),
            outcome.setup_output
        );
        outcome
    }

    /// Every fact and outcome, for the test's output (`--nocapture`) and for failures.
    pub fn report(&self) -> String {
        let mut out = format!(
            "kernel {}: /init after {:.1} s, powered off after {:.1} s\n",
            self.kernel.display(),
            self.to_init.as_secs_f64(),
            self.total.as_secs_f64()
        );
        for (name, value) in &self.facts {
            out.push_str(&format!("  {name}: {value}\n"));
        }
        for ((name, who), outcome) in &self.outcomes {
            out.push_str(&format!(
                "--- {name} as {}: status {:?}, {:.2} s\n",
                who.name(),
                outcome.status,
                outcome.elapsed.unwrap_or_default().as_secs_f64()
            ));
            for (stream, text) in [
                ("stdout", &outcome.stdout),
                ("stderr", &outcome.stderr),
                ("probe", &outcome.probe),
            ] {
                for line in text.lines() {
                    out.push_str(&format!("  {stream}| {line}\n"));
                }
            }
        }
        out
    }
}

/// The `/init` of the initramfs. Checks live in `/checks/NN/` (files `user`, `setup`,
/// `command`, `probe`, and `ptrace_scope` when the check sets one).
const INIT: &str = r#"#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin HOME=/root LC_ALL=C
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/shm
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
# Loopback, for the network checks' servers.
ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up
# Only emergencies on the console from here on: the report is read line by line.
echo 1 >/proc/sys/kernel/printk
echo "@@gate-kernels start"
echo "@@fact release $(uname -r)"
echo "@@fact lsm $(cat /sys/kernel/security/lsm 2>/dev/null || echo '(no securityfs)')"
booted_scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo '(no Yama)')
echo "@@fact ptrace_scope $booted_scope"
for check in /checks/*; do
    id=${check##*/}
    if [ "$(cat "$check/user")" = root ]; then
        home=/root owner=0:0
    else
        home=/home/nobody owner=65534:65534
    fi
    ws=$home/work/$id
    mkdir -p "$ws" "$home/.ssh" "$home/outside"
    echo gate-test-secret >"$home/.ssh/id_ed25519"
    chmod 700 "$home/.ssh"
    chmod 600 "$home/.ssh/id_ed25519"
    (cd "$ws" && HOME="$home" sh "$check/setup") </dev/null >/setup.txt 2>&1
    echo "@@setup $id $?"
    sed "s/^/@@setup-output $id |/" /setup.txt
    chown -R "$owner" "$home"
    if [ -f "$check/ptrace_scope" ]; then
        cat "$check/ptrace_scope" >/proc/sys/kernel/yama/ptrace_scope
    fi
    started=$(cut -d ' ' -f 1 /proc/uptime)
    if [ "$owner" = 0:0 ]; then
        (cd "$ws" && sh "$check/command") </dev/null >/out.txt 2>/err.txt
    else
        su -s /bin/sh nobody -c "cd '$ws' && exec sh '$check/command'" </dev/null >/out.txt 2>/err.txt
    fi
    status=$?
    echo "@@time $id $started $(cut -d ' ' -f 1 /proc/uptime)"
    if [ -f "$check/ptrace_scope" ]; then
        echo "$booted_scope" >/proc/sys/kernel/yama/ptrace_scope
    fi
    (cd "$ws" && HOME="$home" sh "$check/probe") </dev/null >/probe.txt 2>&1
    echo "@@check $id $status"
    sed "s/^/@@out $id |/" /out.txt
    sed "s/^/@@err $id |/" /err.txt
    sed "s/^/@@probe $id |/" /probe.txt
done
echo "@@gate-kernels end"
poweroff -f
"#;

/// The initramfs holding `gate`, `busybox`, the attack helper, `/init` and the checks.
fn initramfs(gate: &Path, busybox: &Path, attack: &Path, checks: &[Check]) -> Vec<u8> {
    let dir = |path: &str, mode| Entry::Dir {
        path: path.to_owned(),
        mode,
    };
    let file = |path: &str, mode, data: Vec<u8>| Entry::File {
        path: path.to_owned(),
        mode,
        data,
    };
    let read = |path: &Path| {
        fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
    };
    let mut entries =
        vec![
        dir("bin", 0o755),
        dir("dev", 0o755),
        Entry::CharDevice {
            path: "dev/console".to_owned(),
            mode: 0o600,
            major: 5,
            minor: 1,
        },
        dir("etc", 0o755),
        dir("proc", 0o555),
        dir("sys", 0o555),
        dir("tmp", 0o1777),
        dir("root", 0o700),
        dir("home", 0o755),
        dir("checks", 0o755),
        file("init", 0o755, INIT.as_bytes().to_vec()),
        file("bin/busybox", 0o755, read(busybox)),
        // `rm` is a file of its own, not one more link to busybox: the exec check knows
        // a denied program by its file too, and a link would make every busybox program
        // (`sh` included) `rm`. (`--install` leaves an existing file alone.)
        file("bin/rm", 0o755, read(busybox)),
        file("bin/gate", 0o755, read(gate)),
        file("bin/gate-attack", 0o755, read(attack)),
        file(
            "etc/passwd",
            0o644,
            b"root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home/nobody:/bin/sh\n"
                .to_vec(),
        ),
        file("etc/group", 0o644, b"root:x:0:\nnogroup:x:65534:\n".to_vec()),
    ];
    for (index, check) in checks.iter().enumerate() {
        let at = format!("checks/{index:03}");
        entries.push(dir(&at, 0o755));
        let text = |name: &str, body: &str| file(&format!("{at}/{name}"), 0o644, body.into());
        entries.push(text("user", check.who.name()));
        entries.push(text("setup", &check.setup));
        entries.push(text("command", &check.command));
        entries.push(text("probe", &check.probe));
        if let Some(scope) = check.ptrace_scope {
            entries.push(text("ptrace_scope", &scope.to_string()));
        }
    }
    archive(&entries)
}

/// Boots are one at a time: two emulated machines on a small CI runner would slow
/// each other down and make the boot times meaningless.
static ONE_BOOT_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Boot `kernel` with the checks and return what it reported. Fails (panics) when QEMU
/// cannot start, the kernel does not reach `/init`, or the boot ends without the end
/// marker or runs past [`BOOT_DEADLINE`].
pub fn boot(kernel: &Path, checks: &[Check]) -> Boot {
    boot_with(kernel, checks, "")
}

/// [`boot`], with more kernel parameters (`lsm=…`) on the command line.
pub fn boot_with(kernel: &Path, checks: &[Check], parameters: &str) -> Boot {
    let qemu = crate::common::require_program("qemu-system-x86_64");
    let busybox = static_busybox();
    let gate = static_gate();
    let attack = attack_helper();
    let mut seen = std::collections::BTreeSet::new();
    for check in checks {
        assert!(
            seen.insert((check.name.as_str(), check.who)),
            "two checks named {} as {}",
            check.name,
            check.who.name()
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let initrd = dir.path().join("initramfs.cpio");
    fs::write(&initrd, initramfs(gate, &busybox, attack, checks)).unwrap();

    let _one = ONE_BOOT_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let start = Instant::now();
    let mut child = Command::new(&qemu)
        // `max`: every CPU feature QEMU can emulate. Among them RDRAND, which seeds the
        // kernel's random number generator at boot: without it the first getrandom()
        // waits a second for jitter entropy. Kernels built for x86-64-v2 (RHEL 9's) need
        // more than QEMU's default CPU, too.
        .args(["-accel", "tcg", "-cpu", "max", "-m", "512M", "-smp", "1"])
        // No network card, display or monitor: only the serial console, on stdout.
        .args(["-nodefaults", "-display", "none", "-serial", "stdio"])
        .arg("-no-reboot")
        .arg("-kernel")
        .arg(kernel)
        .arg("-initrd")
        .arg(&initrd)
        // panic=-1: a kernel that panics (no init, say) reboots at once, and
        // -no-reboot turns that into QEMU's exit.
        .arg("-append")
        .arg(format!("console=ttyS0 quiet panic=-1 rdinit=/init {parameters}").trim_end())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", qemu.display()));

    let (lines, arrived) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    let reader = thread::spawn(move || {
        for line in BufReader::new(stdout).split(b'\n') {
            let Ok(line) = line else { break };
            let text = String::from_utf8_lossy(&line)
                .trim_end_matches('\r')
                .to_owned();
            if lines.send((Instant::now(), text)).is_err() {
                break;
            }
        }
    });
    let mut stderr = child.stderr.take().unwrap();
    let errors = thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });

    let mut serial = String::new();
    let mut to_init = None;
    let mut timed_out = false;
    loop {
        let left = BOOT_DEADLINE.saturating_sub(start.elapsed());
        match arrived.recv_timeout(left) {
            Ok((at, line)) => {
                if to_init.is_none() && line.contains("@@gate-kernels start") {
                    to_init = Some(at - start);
                }
                serial.push_str(&line);
                serial.push('\n');
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                timed_out = true;
                let _ = child.kill();
                break;
            }
        }
    }
    let status = child.wait().unwrap();
    let total = start.elapsed();
    let _ = reader.join();
    let qemu_errors = errors.join().unwrap_or_default();
    drop(_one);

    let fail = |why: &str| -> ! {
        panic!(
            "booting {} under QEMU: {why} ({status}, after {:.1} s)\nQEMU's stderr:\n{qemu_errors}\n\
             console:\n{serial}",
            kernel.display(),
            total.as_secs_f64()
        )
    };
    if timed_out {
        fail(&format!(
            "no power-off within {} s",
            BOOT_DEADLINE.as_secs()
        ));
    }
    let Some(to_init) = to_init else {
        fail("the kernel never ran the initramfs's /init");
    };
    if !serial.lines().any(|l| l.ends_with("@@gate-kernels end")) {
        fail("/init stopped before the end of its checks");
    }
    if !status.success() {
        fail("QEMU failed");
    }
    let (facts, outcomes) = parse(&serial, checks);
    Boot {
        kernel: kernel.to_owned(),
        facts,
        outcomes,
        to_init,
        total,
        serial,
    }
}

type Report = (BTreeMap<String, String>, BTreeMap<(String, Who), Outcome>);

/// The `@@` lines of a console log.
fn parse(serial: &str, checks: &[Check]) -> Report {
    let mut facts = BTreeMap::new();
    let mut by_index: BTreeMap<usize, Outcome> = BTreeMap::new();
    for line in serial.lines() {
        // Firmware escape sequences can precede the first line on the same row.
        let Some(at) = line.find("@@") else { continue };
        let line = &line[at + 2..];
        let (kind, rest) = line.split_once(' ').unwrap_or((line, ""));
        if kind == "fact" {
            let (name, value) = rest.split_once(' ').unwrap_or((rest, ""));
            facts.insert(name.to_owned(), value.to_owned());
            continue;
        }
        let Some((id, rest)) = rest.split_once(' ') else {
            continue;
        };
        let Ok(index) = id.parse::<usize>() else {
            continue;
        };
        let outcome = by_index.entry(index).or_default();
        let push = |text: &mut String| {
            text.push_str(rest.strip_prefix('|').unwrap_or(rest));
            text.push('\n');
        };
        match kind {
            "setup" => outcome.setup_status = rest.trim().parse().ok(),
            "setup-output" => push(&mut outcome.setup_output),
            "check" => outcome.status = rest.trim().parse().ok(),
            "time" => outcome.elapsed = uptime_span(rest),
            "out" => push(&mut outcome.stdout),
            "err" => push(&mut outcome.stderr),
            "probe" => push(&mut outcome.probe),
            _ => {}
        }
    }
    let outcomes = by_index
        .into_iter()
        .filter_map(|(index, outcome)| {
            let check = checks.get(index)?;
            Some(((check.name.clone(), check.who), outcome))
        })
        .collect();
    (facts, outcomes)
}

/// The time between two readings of `/proc/uptime` ("START END", in seconds).
fn uptime_span(text: &str) -> Option<Duration> {
    let mut readings = text.split_whitespace().map(|t| t.parse::<f64>().ok());
    let (start, end) = (readings.next()??, readings.next()??);
    (end >= start).then(|| Duration::from_secs_f64(end - start))
}

/// Whether the ELF file at `path` names a program interpreter (a dynamic loader), which
/// an initramfs without a C library cannot provide.
fn is_dynamically_linked(path: &Path) -> bool {
    let elf = fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    assert!(
        elf.len() > 64 && elf.starts_with(b"\x7fELF") && elf[4] == 2,
        "{} is not a 64-bit ELF file",
        path.display()
    );
    let u16_at = |at: usize| u16::from_le_bytes([elf[at], elf[at + 1]]) as usize;
    let phoff = u64::from_le_bytes(elf[0x20..0x28].try_into().unwrap()) as usize;
    let (size, count) = (u16_at(0x36), u16_at(0x38));
    const PT_INTERP: u32 = 3;
    (0..count).any(|i| {
        let at = phoff + i * size;
        u32::from_le_bytes(elf[at..at + 4].try_into().unwrap()) == PT_INTERP
    })
}

/// busybox, statically linked (Debian's `busybox-static`).
fn static_busybox() -> PathBuf {
    let busybox = crate::common::require_program("busybox");
    assert!(
        !is_dynamically_linked(&busybox),
        "{} is linked dynamically, so it cannot run in the test initramfs; install \
         Debian's busybox-static (README.md's package list) instead of busybox",
        busybox.display()
    );
    busybox
}

/// tests/kernels/attack.c, built statically (gcc and libc6-dev, README.md's package
/// list) once per test process: the system calls an attack needs that busybox cannot
/// make.
pub fn attack_helper() -> &'static Path {
    static ATTACK: OnceLock<PathBuf> = OnceLock::new();
    ATTACK.get_or_init(|| {
        let gcc = crate::common::require_program("gcc");
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/attack.c");
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("kernels");
        fs::create_dir_all(&dir).unwrap();
        let helper = dir.join("gate-attack");
        let out = Command::new(&gcc)
            .args(["-static", "-O2", "-Wall", "-Werror", "-o"])
            .arg(&helper)
            .arg(&source)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", gcc.display()));
        assert!(
            out.status.success(),
            "building {} statically failed ({}): {}",
            source.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !is_dynamically_linked(&helper),
            "{} is linked dynamically",
            helper.display()
        );
        helper
    })
}

/// gate built as `cargo build-static` builds it (a release build, glibc linked in), once
/// per test process.
pub fn static_gate() -> &'static Path {
    static GATE: OnceLock<PathBuf> = OnceLock::new();
    GATE.get_or_init(|| {
        // Cargo runs the tests with CARGO set to itself.
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let out = Command::new(cargo)
            .args(["rustc", "--locked", "--release", "--bin", "gate"])
            .args(["--message-format", "json-render-diagnostics"])
            .args(["--", "-C", "target-feature=+crt-static"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stderr(Stdio::inherit())
            .output()
            .expect("cargo runs");
        assert!(
            out.status.success(),
            "the static build of gate (cargo build-static) failed: {}",
            out.status
        );
        let gate = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
            .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "gate")
            .find_map(|m| m["executable"].as_str().map(PathBuf::from))
            .expect("cargo named no gate executable in its messages");
        assert!(
            !is_dynamically_linked(&gate),
            "{} is linked dynamically: the static build did not take",
            gate.display()
        );
        gate
    })
}
