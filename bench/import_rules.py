#!/usr/bin/env python3
"""What a 500-rule imported policy adds to each command, interleaved: the figure of
issue 25's target (at most 0.1 ms more than without it).

    bench/import_rules.py GATE [ROUNDS]          (default 1,000 rounds)

GATE should be a static release build (`cargo build-static` -> target/release/gate).
Four homes share one user file (level ask, one allow rule, one deny rule: any deny
rule brings the exec-stage supervisor, so it is on every side):

- `none`: the user file alone;
- `empty`: the user file and what `gate import claude --save` writes for a Claude Code
  settings file with no shell rule: an imported policy of no rules (the drop-in
  directory and one small file to read);
- `imported`: the user file and what `gate import claude --save` writes for a Claude
  Code settings file of 500 shell rules (350 + 50 allow, 50 ask, 50 deny);
- `comments`: the user file and a file of the same size in the same place made only of
  comments (the imported file, each line commented out): what reading those bytes costs
  before any rule is taken from them.

The homes sit in a scratch directory with a short name (`/tmp/gXXXXXXXX/i`), so that
the imported rules' `from` paths (`HOME/.claude/settings.json:LINE`, most of the file's
bytes) are about as long as a real home's (`/home/alice`), not the 30-odd bytes longer
that a default temporary directory made them.

`GATE check -c 'echo hi'` (loading and deciding, no exec) is measured in rounds of its
own, then `GATE -c 'echo hi'` (a run), each after 200 rounds of warm-up; in each round
every home runs once, the order turned by one home each round, so that each home
follows each other equally often. (When checks and runs alternated in one round, the
check right after a run paid for what the run left exiting: the comments file's figure
doubled.) Medians of wall time (posix_spawn to wait4) and of the processes' CPU time
(from wait4) are compared with the `none` home's and with the `empty` one's.
hyperfine's blocks of one command at a time drifted here by more than the difference
being measured; interleaving makes a drift of the machine's speed fall on every side
alike. Run one binary per invocation: alternating two binaries in one run moved the
baseline by tens of microseconds.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

SIDES = ("none", "empty", "imported", "comments")
# The short names the homes have on disk (see above).
DIRS = {"none": "n", "empty": "e", "imported": "i", "comments": "c"}
MODES = ("check", "run")


def settings_json(path, rules=True):
    n = 1 if rules else 0
    allow = [f"Bash(tool{i} run:*)" for i in range(350 * n)]
    allow += [f"Bash(tool{i} status)" for i in range(50 * n)]
    ask = [f"Bash(tool{i} push:*)" for i in range(50 * n)]
    deny = [f"Bash(tool{i} destroy:*)" for i in range(50 * n)]
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
        base = f"{scratch}/{DIRS[side]}"
        for sub in ("config/gate", "state", "home/.claude"):
            os.makedirs(f"{base}/{sub}")
        with open(f"{base}/config/gate/config.toml", "w") as f:
            f.write('level = "ask"\nallow = ["echo hi"]\ndeny = ["never-run-this"]\n')
    for side in ("empty", "imported"):
        home = f"{scratch}/{DIRS[side]}"
        settings_json(f"{home}/home/.claude/settings.json", rules=side == "imported")
        subprocess.run(
            [gate, "import", "claude", "--save"],
            cwd=home,
            env=environment(home),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=True,
        )
    written = f"{scratch}/{DIRS['imported']}/config/gate/config.d/import-claude.toml"
    with open(written) as f:
        lines = f.read().splitlines()
    rules = sum(1 for line in lines if "rule = " in line)
    comments = f"{scratch}/{DIRS['comments']}/config/gate/config.d"
    os.makedirs(comments)
    with open(f"{comments}/import-claude.toml", "w") as f:
        f.write("".join(f"# {line}\n" for line in lines))
    empty = f"{scratch}/{DIRS['empty']}/config/gate/config.d/import-claude.toml"
    if not os.path.exists(empty):
        sys.exit("bench/import_rules.py: gate import wrote nothing for the empty settings")
    return rules, os.path.getsize(written), os.path.getsize(empty)


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
    wall, cpu = {}, {}
    with tempfile.TemporaryDirectory(prefix="g", dir="/tmp") as scratch:
        rules, size, empty_size = set_up(gate, scratch)
        print(f"imported policy: {rules} rules, {size} bytes; with no rule: {empty_size} bytes",
              file=sys.stderr)
        for mode in MODES:
            words = ["check"] if mode == "check" else []
            cases = [
                (side, [gate] + words + ["-c", "echo hi"],
                 environment(f"{scratch}/{DIRS[side]}"))
                for side in SIDES
            ]
            for _ in range(200):
                for _, argv, env in cases:
                    run_once(argv, env)
            for i in range(rounds):
                turn = i % len(cases)
                for side, argv, env in cases[turn:] + cases[:turn]:
                    w, c = run_once(argv, env)
                    wall.setdefault((mode, side), []).append(w)
                    cpu.setdefault((mode, side), []).append(c)
    median = statistics.median
    for mode in MODES:
        for side in SIDES:
            print(f"{mode:5} {side:8} wall {median(wall[(mode, side)]):8.1f} us"
                  f"  cpu {median(cpu[(mode, side)]):8.1f} us")
        for base in ("none", "empty"):
            for side in SIDES[SIDES.index(base) + 1:]:
                dw = median(wall[(mode, side)]) - median(wall[(mode, base)])
                dc = median(cpu[(mode, side)]) - median(cpu[(mode, base)])
                print(f"{mode:5} {side} adds {dw:+.1f} us wall, {dc:+.1f} us cpu"
                      f" to {base}")


if __name__ == "__main__":
    main()
