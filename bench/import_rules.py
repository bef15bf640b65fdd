#!/usr/bin/env python3
"""What a 500-rule imported policy adds to each command, interleaved: the figure of
issue 25's target (at most 0.1 ms more than without it).

    bench/import_rules.py GATE [ROUNDS]          (default 1,000 rounds)

GATE should be a static release build (`cargo build-static` -> target/release/gate).
Three homes share one user file (level ask, one allow rule, one deny rule: any deny
rule brings the exec-stage supervisor, so it is on every side):

- `empty`: the user file alone;
- `imported`: the user file and what `gate import claude --save` writes for a Claude
  Code settings file of 500 shell rules (350 + 50 allow, 50 ask, 50 deny);
- `comments`: the user file and a file of the same size in the same place made only of
  comments (the imported file, each line commented out): what reading those bytes costs
  before any rule is taken from them.

Each round runs `GATE check -c 'echo hi'` (loading and deciding, no exec) and then
`GATE -c 'echo hi'` (a run) for each home, in an order that alternates round by round,
after 200 rounds of warm-up. Medians of wall time (posix_spawn to wait4) and of the
processes' CPU time (from wait4) are compared with the `empty` home's. hyperfine's
blocks of one command at a time drifted here by more than the difference being
measured; interleaving makes a drift of the machine's speed fall on every side alike.
Run one binary per invocation: alternating two binaries in one run moved the `empty`
case by tens of microseconds.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

SIDES = ("empty", "imported", "comments")
MODES = ("check", "run")


def settings_json(path):
    allow = [f"Bash(tool{i} run:*)" for i in range(350)]
    allow += [f"Bash(tool{i} status)" for i in range(50)]
    ask = [f"Bash(tool{i} push:*)" for i in range(50)]
    deny = [f"Bash(tool{i} destroy:*)" for i in range(50)]
    with open(path, "w") as f:
        json.dump({"permissions": {"allow": allow, "ask": ask, "deny": deny}}, f, indent=2)


def environment(home):
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": f"{home}/home",
        "XDG_CONFIG_HOME": f"{home}/config",
        "XDG_STATE_HOME": f"{home}/state",
    }


def set_up(gate, scratch):
    for side in SIDES:
        base = f"{scratch}/{side}"
        for sub in ("config/gate", "state", "home/.claude"):
            os.makedirs(f"{base}/{sub}")
        with open(f"{base}/config/gate/config.toml", "w") as f:
            f.write('level = "ask"\nallow = ["echo hi"]\ndeny = ["never-run-this"]\n')
    imported = f"{scratch}/imported"
    settings_json(f"{imported}/home/.claude/settings.json")
    subprocess.run(
        [gate, "import", "claude", "--save"],
        cwd=imported,
        env=environment(imported),
        stdout=subprocess.DEVNULL,
        check=True,
    )
    written = f"{imported}/config/gate/config.d/import-claude.toml"
    with open(written) as f:
        lines = f.read().splitlines()
    rules = sum(1 for line in lines if "rule = " in line)
    os.makedirs(f"{scratch}/comments/config/gate/config.d")
    with open(f"{scratch}/comments/config/gate/config.d/import-claude.toml", "w") as f:
        f.write("".join(f"# {line}\n" for line in lines))
    return rules, os.path.getsize(written)


def run_once(argv, env):
    start = time.perf_counter_ns()
    pid = os.posix_spawn(
        argv[0], argv, env, file_actions=[(os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0)]
    )
    _, status, usage = os.wait4(pid, 0)
    wall = (time.perf_counter_ns() - start) / 1e3
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"bench/import_rules.py: {argv} exited with {status}")
    return wall, (usage.ru_utime + usage.ru_stime) * 1e6


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    gate = os.path.realpath(sys.argv[1])
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    with tempfile.TemporaryDirectory() as scratch:
        rules, size = set_up(gate, scratch)
        print(f"imported policy: {rules} rules, {size} bytes", file=sys.stderr)
        cases = [
            (mode, side, [gate] + (["check"] if mode == "check" else []) + ["-c", "echo hi"],
             environment(f"{scratch}/{side}"))
            for mode in MODES
            for side in SIDES
        ]
        wall = {(m, s): [] for m, s, _, _ in cases}
        cpu = {(m, s): [] for m, s, _, _ in cases}
        for _ in range(200):
            for _, _, argv, env in cases:
                run_once(argv, env)
        for i in range(rounds):
            for mode, side, argv, env in cases if i % 2 == 0 else cases[::-1]:
                w, c = run_once(argv, env)
                wall[(mode, side)].append(w)
                cpu[(mode, side)].append(c)
    median = statistics.median
    for mode in MODES:
        for side in SIDES:
            print(f"{mode:5} {side:8} wall {median(wall[(mode, side)]):8.1f} us"
                  f"  cpu {median(cpu[(mode, side)]):8.1f} us")
        for side in SIDES[1:]:
            dw = median(wall[(mode, side)]) - median(wall[(mode, "empty")])
            dc = median(cpu[(mode, side)]) - median(cpu[(mode, "empty")])
            print(f"{mode:5} {side} adds {dw:+.1f} us wall, {dc:+.1f} us cpu")


if __name__ == "__main__":
    main()
