#!/usr/bin/env python3
"""What the system journal adds to a command: gate with `audit.journal = "on"` against
the same gate with the JSONL log alone, interleaved.

    bench/journal.py [--pin] GATE [ROUNDS]          (default 2,000 rounds; run as root)

GATE should be a static release build (`cargo build-static` -> target/release/gate).
Each round runs, in an order that alternates, `GATE --no-config --level full --
/bin/true` three ways: the audit log off and no journal; the JSONL log alone (the
default); the JSONL log and the journal. Medians of wall time (posix_spawn to wait4)
are compared, so a drift of the machine's speed affects all three alike; so are the
medians of the process's own CPU time (from wait4), which leave out journald's.

journald is the real one: the script starts /lib/systemd/systemd-journald itself, as
tests/journal.rs does, in a mount namespace of its own with empty /run/systemd and
/run/log (it re-executes itself under `unshare --mount`), so the machine's own journal,
if any, is neither used nor filled. Root is needed for that.

With `--pin`, journald runs on CPU 1 and the gates on CPU 0, as on a machine where
journald finds a CPU of its own (here the kernel otherwise wakes it on gate's: a unix
socket's reader is woken as a synchronous wakeup).
"""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

JOURNALD = "/lib/systemd/systemd-journald"
SOCKET = "/run/systemd/journal/socket"


def inside():
    """In the private mount namespace: empty file systems, then journald."""
    for target in ("/run/systemd", "/run/log"):
        subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=0755", "tmpfs", target], check=True)
    if os.path.isdir("/var/log/journal"):
        subprocess.run(["mount", "-t", "tmpfs", "tmpfs", "/var/log/journal"], check=True)
    journald = subprocess.Popen([JOURNALD], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while not os.path.exists(SOCKET):
        if journald.poll() is not None or time.monotonic() > deadline:
            sys.exit("bench/journal.py: systemd-journald did not start")
        time.sleep(0.01)
    return journald


def run(argv, env):
    """Wall time and the process's own CPU time (user + system), in microseconds."""
    start = time.perf_counter_ns()
    pid = os.posix_spawn(argv[0], argv, env)
    _, status, usage = os.wait4(pid, 0)
    elapsed = time.perf_counter_ns() - start
    if status != 0:
        sys.exit(f"bench/journal.py: {argv} failed ({status})")
    return elapsed / 1000.0, (usage.ru_utime + usage.ru_stime) * 1e6


def main():
    args = sys.argv[1:]
    pin = "--pin" in args
    args = [a for a in args if a != "--pin"]
    if args[:1] != ["--inside"]:
        if os.geteuid() != 0:
            sys.exit("bench/journal.py: run it as root (it starts its own journald)")
        if len(args) not in (1, 2):
            sys.exit(__doc__.strip().splitlines()[3].strip())
        unshare = shutil.which("unshare") or sys.exit("bench/journal.py: needs unshare")
        os.execv(unshare, [unshare, "--mount", "--propagation", "private", "--",
                           sys.executable, os.path.abspath(__file__), "--inside"]
                 + (["--pin"] if pin else []) + args)
    gate = os.path.abspath(args[1])
    rounds = int(args[2]) if len(args) == 3 else 2000
    journald = inside()
    if pin:
        os.sched_setaffinity(journald.pid, {1})
        os.sched_setaffinity(0, {0})
    state = tempfile.mkdtemp(prefix="gate-bench-journal-")
    try:
        base = {"PATH": "/usr/bin:/bin", "XDG_STATE_HOME": state,
                "XDG_CONFIG_HOME": os.path.join(state, "config"), "HOME": state}
        argv = [gate, "--no-config", "--level", "full", "--", "/bin/true"]
        cases = [
            ("no audit", dict(base, GATE_AUDIT_LOG="off")),
            ("JSONL alone", base),
            ("JSONL + journal", dict(base, GATE_AUDIT_JOURNAL="on")),
        ]
        times = {name: [] for name, _ in cases}
        cpu = {name: [] for name, _ in cases}
        for _ in range(min(200, rounds)):  # warm-up
            for _, env in cases:
                run(argv, env)
        for i in range(rounds):
            order = cases if i % 2 == 0 else list(reversed(cases))
            for name, env in order:
                wall, used = run(argv, env)
                times[name].append(wall)
                cpu[name].append(used)
        med = {name: statistics.median(t) for name, t in times.items()}
        print(f"{rounds} rounds, gate -- /bin/true, medians of wall time (and of gate's")
        print("own CPU time, user + system: journald's work is not in it)")
        for name, _ in cases:
            print(f"  {name:16} {med[name]:9.1f} us   (CPU {statistics.median(cpu[name]):7.1f} us)")
        jsonl, both = med["JSONL alone"], med["JSONL + journal"]
        print(f"  journal adds    {both - jsonl:+9.1f} us ({both / jsonl:.3f}x of JSONL alone)")
        print(f"  JSONL adds      {jsonl - med['no audit']:+9.1f} us over no audit")
    finally:
        shutil.rmtree(state, ignore_errors=True)
        journald.terminate()
        journald.wait()


if __name__ == "__main__":
    main()
