//! The differential deny-rule oracle (issues 15 and 22): run a command text under the
//! real shells with an exec tracer, in a throw-away sandbox, and compare every program
//! they actually executed with gate's verdict for the same text; then run the text
//! through gate itself, under the same tracer, and look at what got to run.
//!
//! The promises checked, one per stage:
//! - text stage: every executed program whose argv matches a deny rule must have been
//!   refused by gate before anything ran (otherwise a *miss*). A refusal where nothing
//!   denied ran is an *over-refusal*: allowed, but counted.
//! - exec stage: through gate (`gate --level full --deny … -c TEXT`), no exec of a
//!   program a deny rule matches succeeds, whatever the text scanner said (otherwise an
//!   *exec miss*). gate either refuses the text before anything runs, or its supervisor
//!   fails each such exec (strace shows `= -1 EACCES`).
//!
//! - [`Sandbox`]: `unshare` (mount, pid, net, ipc, uts namespaces) around a fresh tmpfs
//!   root with read-only binds of `/usr` and `/etc`, `pivot_root` into it (the host tree
//!   is detached, so a generated `rm -rf /` meets read-only mounts and an empty tmpfs),
//!   capabilities cut down to what the wrappers need (no `CAP_SYS_ADMIN`: no mount), and
//!   `strace -f -xx -y -e trace=execve,execveat` around each shell, or around gate (bound
//!   read-only at `/gate`) starting it. strace follows gate's supervisor too (gate
//!   forks it); it execs nothing, so every exec in the trace is the command's.
//! - [`rule_matches`]: the rule semantics of docs/rules.md ("Matching" under "Deny
//!   rules"), written here on its own, never by calling gate's matcher.
//! - [`Generator`]: shell text from a small grammar, driven by any [`Choices`] (a seeded
//!   PRNG here, the fuzzer's bytes in `fuzz/`).

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// The shells the oracle runs, by absolute path (gate is told the same with `--shell`).
pub const SHELLS: &[&str] = &["/usr/bin/bash", "/usr/bin/dash", "/usr/bin/zsh"];

/// The deny rules every case is checked against. One-word and multi-word rules, so
/// both halves of the matching rule are exercised; every program is harmless inside the
/// sandbox.
pub const DENY_RULES: &[&str] = &["rm", "mkdir -p", "ln -s"];

/// The address-space limit for every gate process: a scanner that would need more is a
/// failure of the test, not of the machine.
pub const GATE_MEMORY_LIMIT: u64 = 1 << 30;

// ---------------------------------------------------------------------------------------
// Rule semantics, independent of gate.

/// A deny rule as words: split on blanks, leading `NAME=value` assignments dropped
/// (docs/rules.md, "Writing them"). The oracle's rules hold no quotes.
pub fn rule_words(rule: &str) -> Vec<String> {
    let mut words: Vec<String> = rule
        .split([' ', '\t'])
        .filter(|w| !w.is_empty())
        .map(String::from)
        .collect();
    while words.first().is_some_and(|w| is_assignment(w)) {
        words.remove(0);
    }
    words
}

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric())
        }
        None => false,
    }
}

/// Whether an executed program matches a rule: the program's name (the last component
/// of the path the shell executed, or that exact path when the rule's first word has a
/// slash) is the rule's first word, and the arguments start with the rule's other words,
/// compared exactly.
pub fn rule_matches(rule: &[String], exec: &Exec) -> bool {
    let Some((program, rest)) = rule.split_first() else {
        return false;
    };
    let name_matches = if program.contains('/') {
        exec.path == *program
    } else {
        exec.path.rsplit('/').next() == Some(program.as_str())
    };
    // An exec without argv (argc 0) has no arguments either.
    let args = exec.argv.get(1..).unwrap_or_default();
    name_matches && args.len() >= rest.len() && rest.iter().zip(args).all(|(r, a)| r == a)
}

// ---------------------------------------------------------------------------------------
// The trace.

/// One successful `execve`: the path the shell passed, and the new argv.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exec {
    pub path: String,
    pub argv: Vec<String>,
}

impl Exec {
    pub fn shown(&self) -> String {
        let argv: Vec<String> = self.argv.iter().map(|a| format!("{a:?}")).collect();
        format!("{} [{}]", self.path, argv.join(", "))
    }
}

/// An `execve` that failed: the call, and the error strace names (`EACCES`, `ENOENT`…).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failed {
    pub exec: Exec,
    pub errno: String,
}

/// What one run of a text executed (the run's own first exec by strace left out).
#[derive(Debug, Clone, Default)]
pub struct ShellRun {
    /// The execs that succeeded, in order.
    pub execs: Vec<Exec>,
    /// The execs that failed: a `PATH` search's misses, and what gate refused.
    pub failed: Vec<Failed>,
    /// The sandbox ran into its time limit (the trace up to then is kept).
    pub timed_out: bool,
    /// The exit status of the run's first program, when it ended in time.
    pub status: Option<i32>,
    /// The first 20 lines on standard error of a run through gate that did not end in a
    /// refusal of the text (126): why gate failed, if it did.
    pub messages: Vec<String>,
}

/// Parse the output of `strace -f -qq -xx -y -e trace=execve,execveat -e signal=none`: each run's
/// execs in order, split into runs at the driver's `@@ NAME` marker lines, with the
/// driver's notes on a run (`@@! NAME` it timed out, `@@= STATUS`, `@@# LINE`).
pub fn parse_trace(text: &str) -> BTreeMap<String, ShellRun> {
    let mut runs: BTreeMap<String, ShellRun> = BTreeMap::new();
    let mut current: Option<String> = None;
    let mut pending: BTreeMap<String, Exec> = BTreeMap::new();
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("@@! ") {
            runs.entry(name.to_owned()).or_default().timed_out = true;
            continue;
        }
        if let Some(name) = line.strip_prefix("@@ ") {
            current = Some(name.to_owned());
            runs.entry(name.to_owned()).or_default();
            pending.clear();
            continue;
        }
        let Some(run) = current.as_ref().and_then(|c| runs.get_mut(c)) else {
            continue;
        };
        if let Some(status) = line.strip_prefix("@@= ") {
            run.status = status.trim().parse().ok();
            continue;
        }
        if let Some(message) = line.strip_prefix("@@# ") {
            run.messages.push(message.to_owned());
            continue;
        }
        let line = line.trim_start();
        let Some((pid, rest)) = line.split_once(' ') else {
            continue;
        };
        let rest = rest.trim_start();
        let call = if let Some(call) = rest.strip_prefix("execve(") {
            parse_call(call)
        } else if let Some(call) = rest.strip_prefix("execveat(") {
            parse_execveat(call)
        } else {
            let resumed = rest
                .strip_prefix("<... execve resumed>")
                .or_else(|| rest.strip_prefix("<... execveat resumed>"));
            if let Some(tail) = resumed {
                if let Some(exec) = pending.remove(pid) {
                    record(run, exec, tail);
                }
            }
            continue;
        };
        let Some((exec, tail)) = call else {
            continue;
        };
        if tail.ends_with("<unfinished ...>") {
            pending.insert(pid.to_owned(), exec);
        } else {
            record(run, exec, tail);
        }
    }
    runs
}

/// File a finished call by its result (` = 0`, or ` = -1 ERRNO (text)`).
fn record(run: &mut ShellRun, exec: Exec, tail: &str) {
    if succeeded(tail) {
        run.execs.push(exec);
    } else if let Some((_, result)) = tail.rsplit_once(" = ") {
        // `-1 EACCES (…)`, `? ERESTARTSYS (…)` (interrupted, to be restarted), or `?`
        // alone: the process ended inside the call.
        let errno = result.split_whitespace().nth(1).unwrap_or("?").to_owned();
        run.failed.push(Failed { exec, errno });
    }
}

fn succeeded(tail: &str) -> bool {
    tail.rsplit_once(" = ")
        .is_some_and(|(_, result)| result.trim_start().starts_with('0'))
}

/// `"PATH", ["ARG", ...], ...` (or `"PATH", NULL, ...`) with every string in `\xHH`
/// form.
fn parse_call(call: &str) -> Option<(Exec, &str)> {
    let (path, rest) = parse_string(call)?;
    let mut argv = Vec::new();
    // No argv at all (argc 0).
    if let Some(rest) = rest.strip_prefix(", NULL") {
        return Some((Exec { path, argv }, rest));
    }
    let mut rest = rest.strip_prefix(", [")?;
    loop {
        if let Some(after) = rest.strip_prefix(']') {
            rest = after;
            break;
        }
        let (arg, after) = parse_string(rest)?;
        argv.push(arg);
        rest = after.strip_prefix(", ").unwrap_or(after);
        if rest.starts_with("...") {
            // strace abbreviated the array: never with -s this large, but say so.
            argv.push("…".to_owned());
            rest = rest.trim_start_matches('.');
        }
    }
    Some((Exec { path, argv }, rest))
}

/// `DIRFD, "PATH", ["ARG", ...], ...`, the descriptor shown by `-y` as `N<DIR>`: the
/// program is PATH taken from DIR (DIR itself for an empty PATH: `AT_EMPTY_PATH`, as
/// `fexecve` does). `AT_FDCWD` leaves a relative PATH as it is.
fn parse_execveat(call: &str) -> Option<(Exec, &str)> {
    let (dirfd, rest) = call.split_once(", ")?;
    let dir = match dirfd.split_once('<') {
        Some((_, dir)) => Some(decode_hex(dir.strip_suffix('>')?)?),
        None => None,
    };
    let (mut exec, tail) = parse_call(rest)?;
    if let Some(dir) = dir.filter(|_| !exec.path.starts_with('/')) {
        exec.path = if exec.path.is_empty() {
            dir
        } else {
            format!("{dir}/{}", exec.path)
        };
    }
    Some((exec, tail))
}

fn parse_string(text: &str) -> Option<(String, &str)> {
    let body = text.strip_prefix('"')?;
    let end = body.find('"')?;
    Some((decode_hex(&body[..end])?, &body[end + 1..]))
}

/// `\xHH\xHH…` as text.
fn decode_hex(hex: &str) -> Option<String> {
    let mut bytes = Vec::new();
    for chunk in hex.split("\\x").skip(1) {
        bytes.push(u8::from_str_radix(chunk.get(..2)?, 16).ok()?);
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

// ---------------------------------------------------------------------------------------
// The sandbox.

/// Where the sandbox holds the gate binary (a read-only bind of the host's).
pub const GATE_IN_SANDBOX: &str = "/gate";

/// The per-case driver, run as root by `unshare` in new namespaces. `$1` is an empty
/// host directory to mount the sandbox root on, `$2` the text, `$3` 1 to run the text
/// under each shell on its own, `$4` the host's gate binary to run it through as well
/// (or empty), then the shells, `--`, and gate's options.
const DRIVER: &str = r#"set -e
exec 3>&2
R=$1; text=$2; plain=$3; G=$4; shift 4
shells=
while [ "$1" != -- ]; do shells="$shells $1"; shift; done
shift
mount --make-rprivate /
mount -t tmpfs -o size=16m,nr_inodes=4096,mode=755 oracle-root "$R"
cd "$R"
mkdir usr etc dev proc tmp work
if [ -n "$G" ]; then : > gate; mount --bind "$G" gate; mount -o remount,bind,ro gate; fi
for l in bin sbin lib lib64; do
    if [ -L "/$l" ]; then ln -s "$(readlink "/$l")" "$l"; fi
done
mount --rbind /usr usr; mount -o remount,bind,ro usr
mount --rbind /etc etc; mount -o remount,bind,ro etc
for n in null zero full random urandom; do : > "dev/$n"; mount --bind "/dev/$n" "dev/$n"; done
ln -s /proc/self/fd dev/fd
mount -t tmpfs -o size=32m,nr_inodes=4096,mode=1777 oracle-tmp tmp
mount -t tmpfs -o size=32m,nr_inodes=4096,mode=755 oracle-work work
mount -t proc -o nosuid,nodev,noexec proc proc
mkdir old
pivot_root . old
umount -l /old
rmdir /old
mount -o remount,bind,ro /
set +e
# traced NAME PROGRAM ARGS...: one run in a fresh /work/run, its trace marked NAME.
traced() {
    name=$1; shift
    rm -rf /work/run 2>/dev/null
    mkdir -p /work/run/build /work/run/d && cd /work/run && : > victim && : > x
    echo "@@ $name" >&3
    setpriv --bounding-set=-all,+chown,+dac_override,+dac_read_search,+fowner,+fsetid,+kill,+setgid,+setuid,+sys_chroot,+audit_write \
        timeout -s TERM -k 1 "$SHELL_TIME" env -i PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin HOME=/work/run LANG=C.UTF-8 TERM=dumb \
        strace -f -qq -xx -y -s 1000000 -e trace=execve,execveat -e signal=none -o /dev/fd/3 \
        "$@" 2>/work/stderr </dev/null >/dev/null
    status=$?
    echo "@@= $status" >&3
    if [ "$status" = 124 ] || [ "$status" = 137 ]; then echo "@@! $name" >&3; fi
}
for sh in $shells; do
    if [ "$plain" = 1 ]; then traced "$sh" "$sh" -c "$text"; fi
    if [ -n "$G" ]; then
        traced "gate $sh" /gate --shell "$sh" "$@" -c "$text"
        if [ "$status" != 126 ]; then sed -n '1,20s/^/@@# /p' /work/stderr >&3; fi
    fi
done
echo "@@ end" >&3
"#;

/// Which runs the sandbox makes of a text, under each shell.
#[derive(Debug, Clone, Copy)]
pub struct Stages {
    /// The text stage: the shell on its own (what the text really runs), to compare
    /// with `gate check`.
    pub text: bool,
    /// The exec stage: the shell started by gate with the deny rules
    /// ([`gate_options`]), under the same tracer. Needs [`Sandbox::gate`].
    pub exec: bool,
}

/// gate's options for the exec stage (`--shell` and `-c TEXT` follow): the deny rules
/// at level `full`, and nothing read from the machine's configuration.
pub fn gate_options() -> Vec<String> {
    let mut options: Vec<String> = ["--no-config", "--audit-log", "off", "--level", "full"]
        .map(String::from)
        .to_vec();
    for rule in DENY_RULES {
        options.extend(["--deny".to_owned(), (*rule).to_owned()]);
    }
    options
}

/// A text's runs: under each shell on its own, and through gate, by shell path.
#[derive(Debug, Default)]
pub struct Runs {
    pub shell: BTreeMap<String, ShellRun>,
    pub gate: BTreeMap<String, ShellRun>,
}

/// Runs texts under the real shells, one fresh sandbox per text.
pub struct Sandbox {
    /// An empty directory of the host's, that the sandbox's root is mounted on.
    mount_point: PathBuf,
    /// How long the sandbox may take for one text, per run of each shell (a text with
    /// both stages gets twice as long).
    pub deadline: Duration,
    /// How long each shell may run (then strace is stopped and the next shell starts).
    pub shell_time: Duration,
    /// The gate binary the exec stage runs (bound read-only into the sandbox).
    pub gate: Option<PathBuf>,
    /// gate's options there ([`gate_options`]; a test's control changes them).
    pub gate_options: Vec<String>,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        use std::os::unix::fs::MetadataExt;
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let uid = std::fs::metadata("/proc/self").map(|m| m.uid());
        assert!(
            matches!(uid, Ok(0)),
            "the deny oracle builds its sandbox with mount namespaces and pivot_root, which needs root (CI runs as root)"
        );
        // A name already taken is skipped, not an error: this module is compiled twice
        // into one test binary (by tests/deny_oracle.rs and, through fuzz/checks, by
        // tests/fuzz_regressions.rs), and each copy counts on its own.
        let mount_point = loop {
            let candidate = std::env::temp_dir().join(format!(
                "gate-oracle-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            match std::fs::create_dir(&candidate) {
                Ok(()) => break candidate,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => panic!(
                    "cannot create the sandbox's mount point {}: {e}",
                    candidate.display()
                ),
            }
        };
        Sandbox {
            mount_point,
            deadline: Duration::from_secs(30),
            shell_time: Duration::from_secs(3),
            gate: None,
            gate_options: gate_options(),
        }
    }

    /// Run `text` under each shell; the execs of each, by shell path.
    pub fn run(&self, text: &str, shells: &[&str]) -> BTreeMap<String, ShellRun> {
        let stages = Stages {
            text: true,
            exec: false,
        };
        self.run_stages(text, shells, stages).shell
    }

    /// Run `text` under each shell on its own, through gate, or both.
    pub fn run_stages(&self, text: &str, shells: &[&str], stages: Stages) -> Runs {
        let gate = match (stages.exec, &self.gate) {
            (false, _) => PathBuf::new(),
            (true, Some(gate)) => gate.clone(),
            (true, None) => panic!("the oracle's exec stage needs Sandbox::gate"),
        };
        let mut child = Command::new("unshare")
            .args([
                "--mount",
                "--pid",
                "--net",
                "--ipc",
                "--uts",
                "--fork",
                "--kill-child",
                "--",
                "sh",
                "-c",
                DRIVER,
                "sh",
            ])
            .arg(&self.mount_point)
            .arg(text)
            .arg(if stages.text { "1" } else { "0" })
            .arg(&gate)
            .args(shells)
            .arg("--")
            .args(&self.gate_options)
            .env_clear()
            .env("PATH", "/usr/bin:/bin:/usr/sbin:/sbin")
            .env("SHELL_TIME", self.shell_time.as_secs().to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("cannot start unshare for the oracle's sandbox");
        let mut stderr = child.stderr.take().unwrap();
        let reader = thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = stderr.read_to_end(&mut buf);
            buf
        });
        let end =
            Instant::now() + self.deadline * (u32::from(stages.text) + u32::from(stages.exec));
        let mut timed_out = false;
        let status = loop {
            if let Some(status) = child.try_wait().expect("cannot wait for the sandbox") {
                break status;
            }
            if Instant::now() >= end {
                timed_out = true;
                // --kill-child: the namespace's first process, and with it every
                // process in the namespace, dies with unshare.
                let _ = child.kill();
                break child.wait().expect("cannot wait for the sandbox");
            }
            thread::sleep(Duration::from_millis(2));
        };
        let out = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
        assert!(
            timed_out || (status.success() && out.contains("@@ end")),
            "the oracle's sandbox failed ({status}) for {text:?}:\n{out}"
        );
        let mut traced = parse_trace(&out);
        let mut runs = Runs::default();
        for shell in shells {
            // Each run's first exec is strace starting the shell, or gate.
            let mut first = |name: String, program: &str| {
                let mut run = traced.remove(&name).unwrap_or_default();
                run.timed_out |= timed_out;
                if run.execs.first().is_some_and(|e| e.path == program) {
                    run.execs.remove(0);
                } else if !run.timed_out {
                    panic!(
                        "the trace of {name} for {} does not start with {program}:\n{out}",
                        shorten(text)
                    );
                }
                run
            };
            if stages.text {
                let run = first((*shell).to_owned(), shell);
                runs.shell.insert((*shell).to_owned(), run);
            }
            if stages.exec {
                let run = first(format!("gate {shell}"), GATE_IN_SANDBOX);
                runs.gate.insert((*shell).to_owned(), run);
            }
        }
        runs
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        // Only ever mounted on inside the sandbox's own mount namespace: empty here.
        let _ = std::fs::remove_dir(&self.mount_point);
    }
}

// ---------------------------------------------------------------------------------------
// gate's verdict.

/// gate's decision, as `gate check --json` gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub decision: String,
    pub reason: String,
}

impl Verdict {
    pub fn refused(&self) -> bool {
        self.decision == "deny"
    }
}

/// A text as messages show it: quoted, and cut after 300 bytes.
pub fn shorten(text: &str) -> String {
    if text.len() <= 300 {
        return format!("{text:?}");
    }
    let mut end = 300;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{:?}… ({} bytes)", &text[..end], text.len())
}

// ---------------------------------------------------------------------------------------
// Comparing.

/// A denied program ran although gate did not refuse the text.
#[derive(Debug, Clone)]
pub struct Miss {
    pub text: String,
    pub shell: String,
    pub options: Vec<String>,
    pub exec: Exec,
    pub rule: String,
    pub verdict: Verdict,
}

impl std::fmt::Display for Miss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:?} under {}: ran {} (deny rule `{}`), gate said {} ({}) with {}",
            self.text,
            self.shell,
            self.exec.shown(),
            self.rule,
            self.verdict.decision,
            self.verdict.reason,
            self.options.join(" ")
        )
    }
}

/// A denied program that ran although the text went through gate: its supervisor let
/// the exec succeed.
#[derive(Debug, Clone)]
pub struct ExecMiss {
    pub text: String,
    pub shell: String,
    pub exec: Exec,
    pub rule: String,
    /// What strace saw it return: `0`, or `?` (no result: the process ended inside the
    /// call, in a run that did not time out, so it may have run).
    pub result: String,
    /// gate's options in that run.
    pub options: Vec<String>,
}

impl std::fmt::Display for ExecMiss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:?} through gate with {}: {} returned {} (deny rule `{}`), gate's options {}",
            self.text,
            self.shell,
            self.exec.shown(),
            self.result,
            self.rule,
            self.options.join(" ")
        )
    }
}

/// Tallies over many cases.
#[derive(Debug, Default)]
pub struct Tally {
    /// Texts tried.
    pub texts: u64,
    /// (text, shell, options) comparisons.
    pub comparisons: u64,
    /// Comparisons in which a denied program ran.
    pub denied_ran: u64,
    pub misses: Vec<Miss>,
    pub over_refusals: u64,
    pub over_refusal_examples: Vec<String>,
    pub timeouts: u64,
    /// Texts that ran no denied program in any shell.
    pub idle: Vec<String>,
    /// Exec stage: (text, shell) runs through gate.
    pub gate_runs: u64,
    /// Those in which gate's text scanner let the shell start.
    pub gate_ran_shell: u64,
    /// Execs of a denied program in them that reached the kernel's check of the file
    /// (a `PATH` search's ENOENT is not one).
    pub denied_attempts: u64,
    /// How those that failed failed, by errno (EACCES: gate refused).
    pub refusals: BTreeMap<String, u64>,
    /// Denied programs that ran through gate.
    pub exec_misses: Vec<ExecMiss>,
    /// Texts whose runs through gate tried no denied program in any shell.
    pub exec_idle: Vec<String>,
}

impl Tally {
    pub fn add(&mut self, other: Tally) {
        self.texts += other.texts;
        self.comparisons += other.comparisons;
        self.denied_ran += other.denied_ran;
        self.misses.extend(other.misses);
        self.over_refusals += other.over_refusals;
        self.over_refusal_examples
            .extend(other.over_refusal_examples);
        self.timeouts += other.timeouts;
        self.idle.extend(other.idle);
        self.gate_runs += other.gate_runs;
        self.gate_ran_shell += other.gate_ran_shell;
        self.denied_attempts += other.denied_attempts;
        for (errno, n) in other.refusals {
            *self.refusals.entry(errno).or_default() += n;
        }
        self.exec_misses.extend(other.exec_misses);
        self.exec_idle.extend(other.exec_idle);
    }

    pub fn per_10k_over_refusals(&self) -> f64 {
        if self.comparisons == 0 {
            return 0.0;
        }
        self.over_refusals as f64 * 10_000.0 / self.comparisons as f64
    }

    pub fn summary(&self) -> String {
        let mut text = format!(
            "{} texts, {} comparisons (text × shell × rule set), {} ran a denied program, {} misses, {} over-refusals ({:.1} per 10,000 comparisons), {} sandbox time-outs",
            self.texts,
            self.comparisons,
            self.denied_ran,
            self.misses.len(),
            self.over_refusals,
            self.per_10k_over_refusals(),
            self.timeouts
        );
        if self.gate_runs > 0 {
            let refusals: Vec<String> = self
                .refusals
                .iter()
                .map(|(errno, n)| format!("{n} {errno}"))
                .collect();
            text.push_str(&format!(
                "; exec stage: {} runs through gate ({} started the shell), {} denied-program execs attempted (failed: {}), {} exec misses",
                self.gate_runs,
                self.gate_ran_shell,
                self.denied_attempts,
                if refusals.is_empty() {
                    "none".to_owned()
                } else {
                    refusals.join(", ")
                },
                self.exec_misses.len()
            ));
        }
        text
    }
}

/// The rule sets a text is judged with: the deny rules at level `full`, and, when the
/// text starts with a plain word, the same at level `ask` with that word allowed (an
/// allow rule must never admit a command in which a deny rule finds its program).
pub fn option_sets(text: &str) -> Vec<(Vec<String>, Vec<Vec<String>>)> {
    let deny: Vec<String> = DENY_RULES
        .iter()
        .flat_map(|r| ["--deny".to_owned(), (*r).to_owned()])
        .collect();
    let rules: Vec<Vec<String>> = DENY_RULES.iter().map(|r| rule_words(r)).collect();
    let mut sets = vec![(
        [vec!["--level".to_owned(), "full".to_owned()], deny.clone()].concat(),
        rules.clone(),
    )];
    let first = text
        .trim_start_matches([' ', '\t'])
        .split([' ', '\t'])
        .next()
        .unwrap_or("");
    if !first.is_empty()
        && first
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
    {
        sets.push((
            [
                vec![
                    "--level".to_owned(),
                    "ask".to_owned(),
                    "--no-tty".to_owned(),
                    "--allow".to_owned(),
                    first.to_owned(),
                ],
                deny,
            ]
            .concat(),
            rules,
        ));
    }
    sets
}

/// Run one text in the sandbox and check each stage asked for: under every shell on its
/// own, compared with `gate check` ([`check_text_stage`]), and through gate
/// ([`check_exec_stage`]).
pub fn check_text(
    sandbox: &Sandbox,
    verdict: &mut dyn FnMut(&[String], &str, &str) -> Verdict,
    text: &str,
    stages: Stages,
    tally: &mut Tally,
) {
    tally.texts += 1;
    let runs = sandbox.run_stages(text, SHELLS, stages);
    if stages.text {
        check_text_stage(&runs.shell, verdict, text, tally);
    }
    if stages.exec {
        check_exec_stage(&runs.gate, &sandbox.gate_options, text, tally);
    }
}

/// The text stage: every denied program a shell ran must have been refused by gate's
/// verdict on the text.
fn check_text_stage(
    runs: &BTreeMap<String, ShellRun>,
    verdict: &mut dyn FnMut(&[String], &str, &str) -> Verdict,
    text: &str,
    tally: &mut Tally,
) {
    let denied_before = tally.denied_ran;
    for (shell, run) in runs {
        if run.timed_out {
            tally.timeouts += 1;
        }
        for (options, rules) in option_sets(text) {
            tally.comparisons += 1;
            let denied = run
                .execs
                .iter()
                .find_map(|e| rules.iter().find(|r| rule_matches(r, e)).map(|r| (e, r)));
            let verdict = verdict(&options, shell, text);
            match denied {
                Some((exec, rule)) => {
                    tally.denied_ran += 1;
                    if !verdict.refused() {
                        tally.misses.push(Miss {
                            text: text.to_owned(),
                            shell: shell.clone(),
                            options: options.clone(),
                            exec: exec.clone(),
                            rule: rule.join(" "),
                            verdict,
                        });
                    }
                }
                None if verdict.refused() => {
                    tally.over_refusals += 1;
                    if tally.over_refusal_examples.len() < 20 {
                        tally
                            .over_refusal_examples
                            .push(format!("{text:?} under {shell}: {}", verdict.reason));
                    }
                }
                None => {}
            }
        }
    }
    if tally.denied_ran == denied_before {
        tally.idle.push(text.to_owned());
    }
}

/// The exec stage: through gate, no exec of a denied program may succeed, whatever the
/// text scanner said. gate either refuses the text before running anything (exit 126,
/// and the trace holds gate alone) or starts the shell; then every exec in the tree
/// that a deny rule matches must fail.
fn check_exec_stage(
    runs: &BTreeMap<String, ShellRun>,
    options: &[String],
    text: &str,
    tally: &mut Tally,
) {
    let rules: Vec<Vec<String>> = DENY_RULES.iter().map(|r| rule_words(r)).collect();
    let matching = |exec: &Exec| rules.iter().find(|r| rule_matches(r, exec));
    let attempts_before = tally.denied_attempts;
    for (shell, run) in runs {
        tally.gate_runs += 1;
        if run.timed_out {
            tally.timeouts += 1;
        }
        // gate's own exec of the shell is the first exec it lets through.
        if run.execs.first().is_some_and(|e| e.path == *shell) {
            tally.gate_ran_shell += 1;
        } else {
            assert!(
                run.timed_out || run.status == Some(126),
                "through gate with {shell}, {} neither ran the shell nor was refused (exit {:?}):\n{}",
                shorten(text),
                run.status,
                run.messages.join("\n")
            );
        }
        for exec in &run.execs {
            if let Some(rule) = matching(exec) {
                tally.denied_attempts += 1;
                tally.exec_misses.push(ExecMiss {
                    text: text.to_owned(),
                    shell: shell.clone(),
                    exec: exec.clone(),
                    rule: rule.join(" "),
                    result: "0".to_owned(),
                    options: options.to_vec(),
                });
            }
        }
        for failed in &run.failed {
            // Not there: a shell's `PATH` search tries directories without the program.
            if matches!(failed.errno.as_str(), "ENOENT" | "ENOTDIR") {
                continue;
            }
            if let Some(rule) = matching(&failed.exec) {
                tally.denied_attempts += 1;
                if failed.errno == "?" && !run.timed_out {
                    tally.exec_misses.push(ExecMiss {
                        text: text.to_owned(),
                        shell: shell.clone(),
                        exec: failed.exec.clone(),
                        rule: rule.join(" "),
                        result: "?".to_owned(),
                        options: options.to_vec(),
                    });
                } else {
                    *tally.refusals.entry(failed.errno.clone()).or_default() += 1;
                }
            }
        }
    }
    if tally.denied_attempts == attempts_before {
        tally.exec_idle.push(text.to_owned());
    }
}

// ---------------------------------------------------------------------------------------
// The adversarial corpus (issue 15), each a text that removes `victim` (or another
// denied effect) in at least one of the shells.

pub const CORPUS: &[&str] = &[
    // Redirections gate misread, and named descriptors.
    ">- rm victim",
    "<&- rm victim",
    "2>&- rm victim",
    ">&- rm victim",
    "{fd}>/dev/null rm victim",
    "{fd}</dev/null rm victim",
    "rm >- victim",
    // Array-element assignments.
    "a[0]=x rm victim",
    "a[1+1]=x b=2 rm victim",
    // Brace sequences and globs in the program name.
    "{r..r}m victim",
    "r{m..m} victim",
    "/usr/bin/r[m] victim",
    "/usr/bin/r? victim",
    "/usr/*/rm victim",
    "r{m,} victim",
    // Nested backticks.
    "echo `echo \\`rm victim\\``",
    "x=`echo \\`rm victim\\``",
    // A here-document with an apostrophe, then the command on a later line.
    "cat > notes.txt <<EOF\ndon't forget\nEOF\nrm -rf build",
    "cat <<'EOF' > f\nit's here\nEOF\nrm victim",
    "cat <<-EOF >/dev/null\n\tdon't\n\tEOF\nrm victim",
    // ANSI-C quoting reduced to 8 bits.
    "$'\\562\\555' victim",
    "$'\\x72'$'\\x6d' victim",
    // Options with values before -c, eval --.
    "bash --rcfile /dev/null -c 'rm victim'",
    "bash --init-file /dev/null -c 'rm victim'",
    "bash --norc --noprofile -c 'rm victim'",
    "bash -o errexit -c 'rm victim'",
    "sh -e -c 'rm victim'",
    "eval -- 'rm victim'",
    "eval -- rm victim",
    // Shells and option sections read from gate's one table of shells.
    "rbash -c 'rm victim'",
    "bash -c - 'rm victim'",
    "zsh -O -c 'rm victim'",
    "zsh -oerrexit -c 'rm victim'",
    "O=-c; bash $O 'rm victim'",
    "zsh -c '=rm victim'",
    "=rm victim",
    // env -S with \_ and friends.
    "env -S 'rm\\_victim'",
    "env -S'rm victim'",
    "env --split-string='rm victim'",
    // getopt_long abbreviations.
    "env --chd=/work/run rm victim",
    "env --chd /work/run rm victim",
    "env --split='rm victim'",
    "env --unset=X rm victim",
    "env --uns X rm victim",
    "env --ignore-env rm victim",
    "nice --adj 5 rm victim",
    "nice --adj=5 rm victim",
    "nice --adjustment 5 rm victim",
    "timeout --sig KILL 5 rm victim",
    "timeout --signal KILL 5 rm victim",
    "timeout --kill 1 5 rm victim",
    "timeout --k=1 5 rm victim",
    "sudo --us root rm victim",
    "sudo --user root rm victim",
    "sudo -u root rm victim",
    "xargs --arg /dev/null rm victim",
    "xargs --arg-file=/dev/null rm victim",
    "xargs -a /dev/null rm victim",
    "stdbuf --out 0 rm victim",
    "stdbuf --output=0 rm victim",
    "stdbuf -o 0 rm victim",
    "flock --time 1 /tmp/lk rm victim",
    "flock --timeout=1 /tmp/lk rm victim",
    "flock -w 1 /tmp/lk rm victim",
    "chroot --user root / rm victim",
    "chroot --userspec=0:0 / rm victim",
    "setsid -w rm victim",
    "ionice -c 3 rm victim",
    "taskset 1 rm victim",
    "taskset -c 0 rm victim",
    // Programs that run their argument through a shell.
    "watch -n 1 'rm victim'",
    "watch -n1 -t 'rm victim'",
    "flock /tmp/lk -c 'rm victim'",
    "su -c 'rm victim' root",
    "runuser -u root -- rm victim",
    "find . -maxdepth 0 -exec rm victim \\;",
    "find victim -exec rm {} +",
    // Found by the long run: a `case` pattern's `)` inside `$(…)`.
    "echo \"$(case a in a) rm victim;; esac)\"",
    "x=$(case a in a) rm victim;; esac)",
    // An allow rule for the wrapper must not admit the denied program (ask case).
    "timeout --sig KILL 5 rm victim",
    "nice -n 1 rm victim",
    // Two-word rules.
    "mkdir -p d/e",
    "mkdir '-p' d/e",
    "ln -s victim link",
    "env ln -s victim link",
];

/// Texts whose denied program the text stage does not see (docs/rules.md, "Known gaps"
/// and the text stage's limits): the exec stage alone must stop it. Each runs a denied
/// program through gate under at least one shell (a program that is not there, such as
/// `source` in dash, fails before any exec).
pub const GAPS: &[&str] = &[
    // Text handed to a shell on standard input.
    "printf 'rm victim' | bash",
    "echo rm victim | sh",
    "printf 'rm victim\\n' | dash",
    "printf 'rm victim' | zsh",
    "bash <<< 'rm victim'",
    "exec 3<<<'rm victim'; bash <&3",
    "env -S 'sh -s' <<< 'rm victim'",
    "timeout 5 sh <<< 'rm victim'",
    "printf 'mkdir -p d/e' | bash",
    "printf 'ln -s victim l' | sh",
    // Commands stored for later, or read from a file.
    "trap 'rm victim' EXIT",
    "echo 'rm victim' > s; sh s",
    "echo 'rm victim' > s; . ./s",
    "echo 'rm victim' > s; chmod +x s; ./s",
    "echo 'ln -s victim l; mkdir -p a/b' > s; sh s",
    "echo 'rm victim' > s; BASH_ENV=s bash -c true",
    "source <(echo rm victim)",
    // A shell under a name gate does not know, and zsh's own expansion.
    "cp /usr/bin/bash mysh; ./mysh -c 'rm victim'",
    "x=\"\\$(rm victim)\"; echo ${(e)x}",
    // The shell's own tables of names.
    "hash -p /usr/bin/rm r; r victim",
    "alias r=rm\nr victim",
    // Programs that run programs.
    "python3 -c 'import os; os.system(\"rm victim\")'",
    "python3 -c 'import subprocess; subprocess.run([\"rm\", \"victim\"])'",
    // The exec calls themselves: fexecve (execveat of a descriptor), an argv[0] that is
    // not the program's name, and no argv at all (the kernel then runs the program with
    // an empty argv[0]).
    "python3 -c 'import os; os.execve(os.open(\"/usr/bin/rm\", os.O_RDONLY), [\"rm\", \"victim\"], {})'",
    "python3 -c 'import os; os.execve(os.open(\"/usr/bin/rm\", os.O_PATH), [\"x\", \"victim\"], {})'",
    "python3 -c 'import os; os.execv(\"/usr/bin/rm\", [\"ls\", \"victim\"])'",
    "python3 -c 'import ctypes; ctypes.CDLL(None).execv(b\"/usr/bin/rm\", None)'",
    // What the command leaves running after its shell has exited.
    "(sleep 1; printf 'rm victim' | bash) & exit 0",
    "printf 'sleep 1; rm victim' | setsid -f bash",
    "perl -e 'system(\"rm\", \"victim\")'",
    "perl -e 'exec \"rm\", \"victim\"'",
    "echo | sed 'e rm victim'",
    "printf 'all:\\n\\trm victim\\n' > mk; make -f mk",
];

/// Texts the tracer cannot watch: strace under strace fails (a process has one
/// tracer). strace runs its operand, so each of these runs `rm victim`.
pub const UNTRACEABLE: &[&str] = &[
    "strace --trace execve rm victim",
    "strace --trace=execve -o /dev/null rm victim",
    "strace -e trace=execve -o /dev/null rm victim",
    "strace -o /dev/null rm victim",
    "strace -f -- rm victim",
    "strace --output /dev/null rm victim",
    "strace --out=/dev/null rm victim",
    "ltrace -o /dev/null rm victim",
];

/// The brace expansion that took gate 1.5 GB (issue 15), with a denied program first.
pub fn brace_bomb(copies: usize, denied: bool) -> String {
    let prefix = if denied { "{rm,x} " } else { "echo " };
    format!("{prefix}{}", "{a,b}".repeat(copies))
}

// ---------------------------------------------------------------------------------------
// The generator.

/// A source of choices: a seeded PRNG for CI and long runs, the fuzzer's bytes in fuzz/.
pub trait Choices {
    /// A number in `0..n` (`n > 0`).
    fn pick(&mut self, n: usize) -> usize;
}

/// SplitMix64: small, fixed and good enough to drive a grammar.
pub struct Seeded(pub u64);

impl Choices for Seeded {
    fn pick(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z % n as u64) as usize
    }
}

/// Bytes as choices; when they run out, always the first alternative.
pub struct Bytes<'a>(pub &'a [u8]);

impl Choices for Bytes<'_> {
    fn pick(&mut self, n: usize) -> usize {
        match self.0.split_first() {
            Some((b, rest)) => {
                self.0 = rest;
                *b as usize % n
            }
            None => 0,
        }
    }
}

fn one<'a>(c: &mut dyn Choices, items: &[&'a str]) -> &'a str {
    items[c.pick(items.len())]
}

/// Shell text from a grammar of the forms deny rules must see through: quoting,
/// expansions, redirections, here-documents, assignments, wrappers with their options
/// (abbreviated as getopt_long allows), nested shells and substitutions. Every program it
/// names is harmless inside the sandbox, and nothing loops.
pub struct Generator<'a> {
    c: &'a mut dyn Choices,
}

impl<'a> Generator<'a> {
    pub fn new(c: &'a mut dyn Choices) -> Self {
        Generator { c }
    }

    /// A whole text.
    pub fn text(&mut self) -> String {
        let mut text = String::new();
        let n = 1 + self.c.pick(3);
        for i in 0..n {
            if i > 0 {
                text.push_str(one(self.c, &["; ", " && ", " || ", " | ", "\n", " & "]));
            }
            text.push_str(&self.statement(3));
        }
        // Not the first alternative: a fuzzer's input that runs out picks 0.
        if self.c.pick(5) == 4 {
            text = format!("{}{text}", self.heredoc_prefix());
        }
        text
    }

    fn heredoc_prefix(&mut self) -> String {
        let body = one(
            self.c,
            &[
                "don't",
                "it's \"quoted\"",
                "a 'b",
                "$(echo x)",
                "`x`",
                "rm victim",
            ],
        );
        let (op, end) = one_pair(
            self.c,
            &[
                ("<<EOF", "EOF"),
                ("<<'EOF'", "EOF"),
                ("<<-EOF", "\tEOF"),
                ("<< \"E\"", "E"),
            ],
        );
        let target = one(self.c, &["cat >/dev/null ", ": ", "cat > notes.txt "]);
        format!("{target}{op}\n{body}\n{end}\n")
    }

    fn statement(&mut self, depth: u32) -> String {
        if depth == 0 {
            return self.simple();
        }
        match self.c.pick(14) {
            0 => format!("( {} )", self.statement(depth - 1)),
            1 => format!("{{ {}; }}", self.statement(depth - 1)),
            2 => format!("echo \"$({})\"", self.statement(depth - 1)),
            3 => format!("x=$({})", self.statement(depth - 1)),
            4 => {
                let inner = self.simple();
                if self.c.pick(2) == 0 {
                    format!("echo `{inner}`")
                } else {
                    format!("echo `echo \\`{inner}\\``")
                }
            }
            5 => format!("if true; then {}; fi", self.statement(depth - 1)),
            6 => format!("for i in 1; do {}; done", self.statement(depth - 1)),
            7 => format!("case a in a) {};; esac", self.statement(depth - 1)),
            8 => format!("f() {{ {}; }}; f", self.statement(depth - 1)),
            9 => self.nested(depth),
            10 => format!("! {}", self.statement(depth - 1)),
            _ => self.simple(),
        }
    }

    /// A command string handed to another shell, `eval`, `env -S`, `watch` or `find`.
    fn nested(&mut self, depth: u32) -> String {
        let inner = self.statement(depth - 1);
        let quoted = if self.c.pick(2) == 0 {
            single_quote(&inner)
        } else {
            double_quote(&inner)
        };
        let runner = one(
            self.c,
            &[
                "bash -c",
                "sh -c",
                "dash -c",
                "zsh -c",
                "bash --rcfile /dev/null -c",
                "bash --init-file /dev/null -c",
                "bash --norc -c",
                "sh -ec",
                "bash -e -c",
                "eval",
                "eval --",
                "flock /tmp/lk -c",
                "su root -c",
            ],
        );
        match self.c.pick(8) {
            0 if !inner.contains('\n') => format!("env -S {quoted}"),
            1 if !inner.contains('\n') => format!("env --split={quoted}"),
            _ => format!("{runner} {quoted}"),
        }
    }

    fn simple(&mut self) -> String {
        let mut out = String::new();
        for _ in 0..self.c.pick(3) {
            out.push_str(one(
                self.c,
                &["A=1 ", "a[0]=x ", "B='y z' ", "R=rm ", "C=$(echo x) "],
            ));
        }
        if self.c.pick(3) == 0 {
            out.push_str(self.redirection());
            out.push(' ');
        }
        let mut wrappers = self.c.pick(4);
        while wrappers > 0 {
            out.push_str(&self.wrapper());
            out.push(' ');
            wrappers -= 1;
        }
        out.push_str(&self.core());
        if self.c.pick(4) == 0 {
            out.push(' ');
            out.push_str(self.redirection());
        }
        out
    }

    fn redirection(&mut self) -> &'static str {
        one(
            self.c,
            &[
                ">/dev/null",
                "2>&1",
                ">-",
                "<&-",
                "2>&-",
                ">&-",
                "{fd}>/dev/null",
                "</dev/null",
                "2>/dev/null",
                ">>/tmp/log",
                "<<<x",
                "3>/tmp/three",
                "&>/dev/null",
            ],
        )
    }

    fn wrapper(&mut self) -> String {
        one(
            self.c,
            &[
                "env",
                "env -i",
                "env -u X",
                "env --unset=X",
                "env --uns=X",
                "env -C /work/run",
                "env --chdir=/work/run",
                "env --chd=/work/run",
                "env --chd /work/run",
                "env A=1",
                "env --ignore-env",
                "env --",
                "nice",
                "nice -n 5",
                "nice -5",
                "nice --adjustment=5",
                "nice --adj 5",
                "nice --adj=5",
                "timeout 5",
                "timeout -s KILL 5",
                "timeout --signal=KILL 5",
                "timeout --sig KILL 5",
                "timeout -k 1 5",
                "timeout --kill-after=1 5",
                "timeout --kill 1 5",
                "timeout --preserve-status 5",
                "timeout --fore 5",
                "nohup",
                "stdbuf -o0",
                "stdbuf --output=0",
                "stdbuf --out 0",
                "stdbuf -oL -eL",
                "stdbuf --err=0",
                "setsid",
                "setsid -w",
                "flock /tmp/lk",
                "flock -w 1 /tmp/lk",
                "flock --timeout 1 /tmp/lk",
                "flock --time 1 /tmp/lk",
                "flock -n /tmp/lk",
                "chroot /",
                "chroot --userspec=0:0 /",
                "chroot --user root /",
                "sudo",
                "sudo -u root",
                "sudo --user=root",
                "sudo --us root",
                "sudo -E",
                "sudo -n",
                "sudo --",
                "command",
                "command -p",
                "exec",
                "exec -a foo",
                "time",
                "time -p",
                "xargs -a /dev/null",
                "xargs --arg /dev/null",
                "xargs --arg-file=/dev/null",
                "ionice -c 3",
                "taskset 1",
                "taskset -c 0",
                "runuser -u root --",
            ],
        )
        .to_owned()
    }

    fn core(&mut self) -> String {
        match self.c.pick(12) {
            0..=5 => {
                let program = self.rm_spelling();
                let args = one(
                    self.c,
                    &[
                        "victim",
                        "-f x",
                        "-rf build",
                        "-r -f build",
                        "-- victim",
                        "'victim'",
                        "\"x\"",
                    ],
                );
                format!("{program} {args}")
            }
            6 => format!(
                "mkdir {} d/e",
                one(self.c, &["-p", "'-p'", "\"-p\"", "-\\p", "-v", "-pv"])
            ),
            7 => format!(
                "ln {} victim l{}",
                one(self.c, &["-s", "'-s'", "-sf", "-f", ""]),
                self.c.pick(9)
            ),
            8 => "echo victim | xargs rm".to_owned(),
            9 => "find . -maxdepth 0 -exec rm victim \\;".to_owned(),
            _ => one(
                self.c,
                &[
                    "true",
                    "ls",
                    "cat victim",
                    "echo rm victim",
                    "printf '%s\\n' 'rm victim'",
                    ": rm",
                    "touch t",
                ],
            )
            .to_owned(),
        }
    }

    fn rm_spelling(&mut self) -> &'static str {
        one(
            self.c,
            &[
                "rm",
                "rm",
                "/usr/bin/rm",
                "/bin/rm",
                "\"rm\"",
                "r'm'",
                "\\rm",
                "r\\m",
                "$'\\x72m'",
                "$'\\162\\155'",
                "$'\\562\\555'",
                "{r..r}m",
                "/usr/bin/r[m]",
                "r\"m\"",
                "$(printf rm)",
                "`echo rm`",
                "$R",
                "${R:-rm}",
                "rm$''",
                "r{m,}",
                "\"${R:-rm}\"",
                "/usr/bin/r?",
                "${R:=rm}",
                "$(echo r)m",
            ],
        )
    }
}

fn one_pair<'a>(c: &mut dyn Choices, items: &[(&'a str, &'a str)]) -> (&'a str, &'a str) {
    items[c.pick(items.len())]
}

/// `'…'` with `'\''` for each apostrophe.
pub fn single_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// `"…"` with `\` before `"`, `$`, `` ` `` and `\`.
pub fn double_quote(text: &str) -> String {
    let mut out = String::from("\"");
    for ch in text.chars() {
        if matches!(ch, '"' | '$' | '`' | '\\') {
            out.push('\\');
        }
        out.push(ch);
    }
    out.push('"');
    out
}

/// The generated batch of texts hidden from the text stage, for a seed: each a
/// generated text handed to a shell in a way the text scanner does not read (on
/// standard input, in a script, in a trap, through an interpreter), so that only the
/// exec stage stands between it and what it runs.
pub fn hidden(seed: u64, count: usize) -> Vec<String> {
    let mut rng = Seeded(seed);
    (0..count)
        .map(|_| {
            let text = Generator::new(&mut rng).text();
            let quoted = single_quote(&text);
            let shell = one(&mut rng, &["bash", "sh", "dash", "zsh"]);
            match rng.pick(6) {
                0 => format!("printf '%s\\n' {quoted} | {shell}"),
                1 => format!("{shell} <<< {quoted}"),
                2 => format!("printf '%s\\n' {quoted} > s; {shell} s"),
                3 => format!("trap {quoted} EXIT"),
                // Unset first: every bash the text starts would read it again.
                4 => format!("printf 'unset BASH_ENV\\n%s\\n' {quoted} > s; BASH_ENV=s bash -c :"),
                _ => format!(
                    "python3 -c 'import subprocess, sys; subprocess.run([\"{shell}\", \"-c\", sys.argv[1]])' {quoted}"
                ),
            }
        })
        .collect()
}

/// The generated batch for a seed.
pub fn generated(seed: u64, count: usize) -> Vec<String> {
    let mut rng = Seeded(seed);
    (0..count)
        .map(|_| Generator::new(&mut rng).text())
        .collect()
}

/// Where the oracle writes the report of the batch `name`, if asked: the generated
/// batch's in the file `DENY_ORACLE_REPORT` names, another's beside it (`FILE.NAME`),
/// so batches run together do not write over each other.
pub fn report_path(name: &str) -> Option<PathBuf> {
    let path = PathBuf::from(std::env::var_os("DENY_ORACLE_REPORT")?);
    Some(if name == "generated" {
        path
    } else {
        beside(&path, name)
    })
}

/// `path` with `.suffix` added to its file name.
pub fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(format!(".{suffix}"));
    path.with_file_name(name)
}

pub fn write_report(path: &Path, tally: &Tally) {
    let mut text = format!("{}\n", tally.summary());
    let mut texts: Vec<&str> = tally.misses.iter().map(|m| m.text.as_str()).collect();
    texts.dedup();
    text.push_str(&format!("{} texts with a miss\n", texts.len()));
    for m in &tally.misses {
        text.push_str(&format!("MISS {m}\n"));
    }
    for m in &tally.exec_misses {
        text.push_str(&format!("EXEC MISS {m}\n"));
    }
    for o in &tally.over_refusal_examples {
        text.push_str(&format!("OVER {o}\n"));
    }
    std::fs::write(path, text).expect("cannot write the oracle's report");
}
