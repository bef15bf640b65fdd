#!/usr/bin/env python3
"""An A/B of two gate binaries against the exec-only floor, interleaved.

    bench/ab.py OLD_GATE NEW_GATE [ROUNDS]        (default 3,000 rounds)
    bench/ab.py --safe OLD_GATE NEW_GATE [ROUNDS] (the safe level, and bwrap)

hyperfine runs one command's runs, then the next command's, so on a virtual machine
whose speed drifts over a minute a later command can look slower or faster than it
is. This script runs every command once per round, in an order that alternates each
round, and compares medians, so a drift affects all of them alike; it also reports
each command's median CPU time (user + system, from wait4). It spawns each run
with posix_spawn and waits for it, as hyperfine -N does; the floor pays the same.

Both binaries should be static release builds (`cargo build-static`), the floor is
bench/exec-only.rs built as bench/overhead.sh builds it. gate runs isolated from the
caller's configuration, with its audit log on in a scratch directory.

With --safe, both run `--level safe -- /bin/true` as bench/sandbox.sh does (a scratch
home with a .ssh in /var/tmp, so the default deny-read list is active, and a scratch
workspace there as the working directory), against the floor and
`bwrap --ro-bind / / --dev /dev --proc /proc --unshare-net /bin/true` when bwrap is
installed. Run it under `setpriv --reuid=65534 --regid=65534 --clear-groups` for the
unprivileged case. It also runs the new gate with a domain list (`--allow-domain
example.org`: the supervisor and its proxy, issue 16) and prints what that adds to the
same gate without one, in milliseconds (the target is 1.5 ms).
"""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def floor_binary():
    out = os.path.join(HERE, "results", "exec-only")
    source = os.path.join(HERE, "exec-only.rs")
    if not os.path.exists(out) or os.path.getmtime(source) > os.path.getmtime(out):
        os.makedirs(os.path.dirname(out), exist_ok=True)
        subprocess.run(
            ["rustc", "--edition", "2021", "-O", "-C", "target-feature=+crt-static",
             "-o", out, source],
            check=True,
        )
    return out


def main():
    args = sys.argv[1:]
    safe = args[:1] == ["--safe"]
    if safe:
        args = args[1:]
    if len(args) not in (2, 3):
        sys.exit(__doc__.strip().splitlines()[2].strip())
    old, new = args[0], args[1]
    rounds = int(args[2]) if len(args) == 3 else 3000
    floor = floor_binary()
    if safe:
        scratch = tempfile.mkdtemp(prefix="gate-ab-", dir="/var/tmp")
        home = os.path.join(scratch, "home")
        os.makedirs(os.path.join(home, ".ssh"))
        with open(os.path.join(home, ".ssh", "id"), "w") as key:
            key.write("key\n")
        work = os.path.join(scratch, "work")
        os.makedirs(work)
        os.chdir(work)
        level = ["--no-config", "--level", "safe", "--", "/bin/true"]
        domains = ["--no-config", "--level", "safe", "--allow-domain", "example.org",
                   "--", "/bin/true"]
        commands = {
            "floor: exec-only /bin/true": [floor, "/bin/true"],
            "old gate safe -- /bin/true": [old] + level,
            "new gate safe -- /bin/true": [new] + level,
            "new gate safe --allow-domain": [new] + domains,
        }
        bwrap = shutil.which("bwrap")
        if bwrap:
            commands["bwrap /bin/true"] = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev",
                                           "--proc", "/proc", "--unshare-net", "/bin/true"]
        pairs = [
            ("old gate safe -- /bin/true", "floor: exec-only /bin/true"),
            ("new gate safe -- /bin/true", "floor: exec-only /bin/true"),
            ("new gate safe -- /bin/true", "old gate safe -- /bin/true"),
            ("new gate safe --allow-domain", "new gate safe -- /bin/true"),
        ]
        if bwrap:
            pairs += [
                ("bwrap /bin/true", "old gate safe -- /bin/true"),
                ("bwrap /bin/true", "new gate safe -- /bin/true"),
            ]
    else:
        home = None
        full = ["--no-config", "--level", "full", "--", "/bin/true"]
        ask = ["--no-config", "--level", "ask", "--allow", "true", "-c", "true"]
        commands = {
            "floor: exec-only /bin/true": [floor, "/bin/true"],
            "old gate -- /bin/true": [old] + full,
            "new gate -- /bin/true": [new] + full,
            "floor: exec-only sh -c true": [floor, "/bin/sh", "-c", "true"],
            "old gate -c true": [old] + ask,
            "new gate -c true": [new] + ask,
        }
        pairs = [
            ("old gate -- /bin/true", "floor: exec-only /bin/true"),
            ("new gate -- /bin/true", "floor: exec-only /bin/true"),
            ("old gate -c true", "floor: exec-only sh -c true"),
            ("new gate -c true", "floor: exec-only sh -c true"),
            ("new gate -- /bin/true", "old gate -- /bin/true"),
            ("new gate -c true", "old gate -c true"),
        ]
    state = tempfile.mkdtemp()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GATE_")}
    env.update(XDG_STATE_HOME=state, XDG_CONFIG_HOME=os.path.join(state, "config"))
    if home:
        env.update(HOME=home, XDG_STATE_HOME=os.path.join(home, ".local", "state"),
                   XDG_CONFIG_HOME=os.path.join(home, ".config"))
    devnull = os.open(os.devnull, os.O_RDWR)
    names = list(commands)
    times = {name: [] for name in names}
    # User + system time of the whole run (the process and what it execs), which the
    # other processes of a busy machine disturb less than wall time.
    cpu = {name: [] for name in names}
    warmup = 100
    for round_ in range(warmup + rounds):
        for name in names if round_ % 2 == 0 else reversed(names):
            argv = commands[name]
            start = time.perf_counter_ns()
            pid = os.posix_spawn(argv[0], argv, env,
                                 file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1)])
            _, status, usage = os.wait4(pid, 0)
            took = time.perf_counter_ns() - start
            if status != 0:
                sys.exit(f"{name} failed with wait status {status}")
            if round_ >= warmup:
                times[name].append(took)
                cpu[name].append(usage.ru_utime + usage.ru_stime)
    median = {name: statistics.median(times[name]) / 1e6 for name in names}
    for name in names:
        print(f"{name:32} median {median[name]:.3f} ms, "
              f"CPU time {statistics.median(cpu[name]) * 1e3:.3f} ms")
    print()
    for a, b in pairs:
        print(f"{a} / {b}: {median[a] / median[b]:.3f}x")
    if "new gate safe --allow-domain" in median:
        added = median["new gate safe --allow-domain"] - median["new gate safe -- /bin/true"]
        print(f"a domain list adds {added:.3f} ms (median; target: within 1.5 ms)")
    if home:
        os.chdir("/")
        shutil.rmtree(os.path.dirname(home))
    shutil.rmtree(state)


if __name__ == "__main__":
    main()
