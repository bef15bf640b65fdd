#!/usr/bin/env python3
"""What deny rules at exec cost (issue 22): the same gate with and without a deny rule,
interleaved, as same-run ratios.

    bench/exec-deny.py GATE [ROUNDS]     (default 600 rounds for the start)

GATE should be the static release build (`cargo build-static`, target/release/gate).
Three measures, each an A/B of `--level full` with and without `--deny rm`:

1. the start: `gate -- /bin/true` (the supervisor's fork and gate's own exec through
   it); target ratio <= 1.3;
2. one exec inside: a shell loop running /bin/true 1,000 times; the difference of the
   medians over 1,000 is the cost of one checked exec; target <= 30 us;
3. a build that execs a lot: `make -j2 -B` of 36 small C files (cc, cc1, as, collect2,
   ld for each); target ratio <= 1.05.

Each round runs every command once, alternating the order, and medians are compared, so
a drift of the machine's speed affects both sides alike. Run it under
`setpriv --reuid=65534 --regid=65534 --clear-groups` for the unprivileged case (the
scratch directory is in /var/tmp, open to that user).
"""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

C_FILES = 36


def make_project(root):
    src = os.path.join(root, "build")
    os.makedirs(src)
    for i in range(C_FILES):
        with open(os.path.join(src, f"f{i}.c"), "w") as f:
            f.write(f"int f{i}(int x) {{ return x * {i} + 1; }}\n")
    with open(os.path.join(src, "main.c"), "w") as f:
        f.write("int main(void) { return 0; }\n")
    objs = " ".join(f"f{i}.o" for i in range(C_FILES))
    with open(os.path.join(src, "Makefile"), "w") as f:
        f.write(f"prog: main.o {objs}\n\tcc -o $@ $^\n%.o: %.c\n\tcc -O0 -c -o $@ $<\n")
    return src


def measure(commands, rounds, env, cwd):
    devnull = os.open(os.devnull, os.O_RDWR)
    names = list(commands)
    times = {name: [] for name in names}
    warmup = max(rounds // 20, 3)
    for round_ in range(warmup + rounds):
        for name in names if round_ % 2 == 0 else reversed(names):
            argv = commands[name]
            start = time.perf_counter_ns()
            pid = os.posix_spawn(argv[0], argv, env,
                                 file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1)])
            _, status, _ = os.wait4(pid, 0)
            took = time.perf_counter_ns() - start
            if status != 0:
                sys.exit(f"{name} failed with wait status {status} (in {cwd})")
            if round_ >= warmup:
                times[name].append(took)
    return {name: statistics.median(times[name]) / 1e6 for name in names}


def main():
    args = sys.argv[1:]
    if len(args) not in (1, 2):
        sys.exit(__doc__.strip().splitlines()[2].strip())
    gate = os.path.abspath(args[0])
    rounds = int(args[1]) if len(args) == 2 else 600
    scratch = tempfile.mkdtemp(prefix="gate-exec-deny-", dir="/var/tmp")
    os.chmod(scratch, 0o777)
    state = os.path.join(scratch, "state")
    os.makedirs(state)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GATE_")}
    env.update(XDG_STATE_HOME=state, XDG_CONFIG_HOME=os.path.join(state, "config"),
               PATH="/usr/local/bin:/usr/bin:/bin")
    base = [gate, "--no-config", "--level", "full"]
    deny = base + ["--deny", "rm"]
    os.chdir(scratch)
    print(f"gate: {gate}; uid {os.getuid()}")

    start = measure({
        "without deny rules": base + ["--", "/bin/true"],
        "with --deny rm": deny + ["--", "/bin/true"],
    }, rounds, env, scratch)
    for name, ms in start.items():
        print(f"start, {name:20} median {ms:.3f} ms")
    print(f"start: with / without = {start['with --deny rm'] / start['without deny rules']:.3f}x"
          " (target <= 1.3)")

    loop = "i=0; while [ $i -lt 1000 ]; do /bin/true; i=$((i+1)); done"
    execs = measure({
        "without deny rules": base + ["--", "/bin/sh", "-c", loop],
        "with --deny rm": deny + ["--", "/bin/sh", "-c", loop],
    }, max(rounds // 20, 15), env, scratch)
    for name, ms in execs.items():
        print(f"1,000 execs, {name:20} median {ms:.1f} ms")
    per = (execs["with --deny rm"] - execs["without deny rules"]) * 1000 / 1000
    print(f"one exec: +{per:.1f} us (target <= 30)")

    if shutil.which("make") and shutil.which("cc"):
        project = make_project(scratch)
        os.chdir(project)
        build = measure({
            "without deny rules": base + ["--", "/usr/bin/make", "-s", "-j2", "-B"],
            "with --deny rm": deny + ["--", "/usr/bin/make", "-s", "-j2", "-B"],
        }, max(rounds // 60, 9), env, project)
        for name, ms in build.items():
            print(f"make -j2 of {C_FILES + 1} files, {name:20} median {ms:.1f} ms")
        print(f"make: with / without = "
              f"{build['with --deny rm'] / build['without deny rules']:.3f}x (target <= 1.05)")
    else:
        sys.exit("make and cc are needed for the build measure")
    os.chdir("/")
    shutil.rmtree(scratch)


if __name__ == "__main__":
    main()
