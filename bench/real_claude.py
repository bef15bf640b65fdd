#!/usr/bin/env python3
"""Wall time of Claude Code's scripted commands through gate and through plain bash.

    bench/real_claude.py [GATE] [RUNS]

Runs the pinned Claude Code (tests/agents/install.sh claude) with `claude -p` against
the fake model (tests/agents/fake_model.py), once with CLAUDE_CODE_SHELL a `bash` shim
of GATE (default target/release/gate) and the recipe's settings, once with /bin/bash,
RUNS times each (default 5), interleaved, after one warm-up session each. Each session runs N allowed commands
(`echo hello`, N = 0 and 5): the median session time, and the median round trip of one
command (from the model request before it to the one after it, as the fake model's
record file grows). Not a test: timings are recorded in docs/performance.md.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = """level = "ask"
readonly = true
allow = ["echo hello"]
deny = ["git push --force"]

[approval]
tty = false
"""


def main():
    gate = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "target/release/gate"))
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    claude = subprocess.run(
        ["sh", os.path.join(REPO, "tests/agents/install.sh"), "claude"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()
    root = tempfile.mkdtemp(prefix="gate-bench-claude-", dir="/var/tmp")
    home, work, run = (os.path.join(root, d) for d in ("home", "work", "run"))
    for d in (home, work, os.path.join(home, ".config/gate"), os.path.join(home, ".claude"), os.path.join(root, "shims")):
        os.makedirs(d, exist_ok=True)
    os.makedirs(run, mode=0o700)
    with open(os.path.join(home, ".config/gate/config.toml"), "w") as f:
        f.write(CONFIG)
    with open(os.path.join(home, ".claude/settings.json"), "w") as f:
        f.write('{"permissions": {"allow": ["Bash"]}}')
    shim = os.path.join(root, "shims/bash")
    os.symlink(gate, shim)

    def session(shell, commands):
        script = os.path.join(root, "script.json")
        with open(script, "w") as f:
            json.dump({"commands": commands, "final": "done"}, f)
        model = subprocess.Popen(
            [sys.executable, os.path.join(REPO, "tests/agents/fake_model.py"), "--protocol", "anthropic",
             "--script", script, "--record", os.path.join(root, "record.jsonl")],
            stdout=subprocess.PIPE, text=True,
        )
        port = model.stdout.readline().split()[1]
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "XDG_RUNTIME_DIR": run, "TERM": "dumb",
            "LC_ALL": "C", "CLAUDE_CODE_SHELL": shell, "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
            "ANTHROPIC_API_KEY": "sk-ant-bench-dummy", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1",
        }
        record = os.path.join(root, "record.jsonl")
        arrivals = []
        stop = threading.Event()

        def watch():
            # When each model request arrives (polled every millisecond): the gap between
            # the request after command k and the one before it is command k's round trip
            # through Claude Code (tool call parsed, shell started, output read, next
            # request sent).
            seen = 0
            while not stop.is_set():
                try:
                    with open(record) as f:
                        lines = f.read().count("\n")
                except FileNotFoundError:
                    lines = 0
                now = time.monotonic()
                arrivals.extend([now] * (lines - seen))
                seen = max(seen, lines)
                time.sleep(0.001)

        watcher = threading.Thread(target=watch)
        watcher.start()
        started = time.monotonic()
        done = subprocess.run([claude, "-p", "Run the scripted commands."], env=env, cwd=work,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
        elapsed = time.monotonic() - started
        time.sleep(0.01)
        stop.set()
        watcher.join()
        model.kill()
        model.wait()
        os.remove(record)
        if done.returncode != 0 or "done" not in done.stdout:
            sys.exit(f"claude failed with {shell}: {done.stdout} {done.stderr}")
        gaps = [b - a for a, b in zip(arrivals, arrivals[1:])]
        return elapsed, gaps

    shells = (("gate", shim), ("bash", "/bin/bash"))
    for _, shell in shells:  # warm the caches once
        session(shell, ["echo hello"])
    times, gaps = {}, {}
    for i in range(runs):
        order = [(name, shell, n) for n in (0, 5) for name, shell in shells]
        for name, shell, n in order[i % 4:] + order[:i % 4]:
            elapsed, round_trips = session(shell, ["echo hello"] * n)
            times.setdefault((name, n), []).append(elapsed)
            gaps.setdefault(name, []).extend(round_trips)
    shutil.rmtree(root, ignore_errors=True)
    print(f"Claude Code {os.path.basename(os.path.dirname(os.path.dirname(os.path.dirname(claude))))}, {runs} runs each")
    for name in ("bash", "gate"):
        m0 = statistics.median(times[(name, 0)])
        m5 = statistics.median(times[(name, 5)])
        print(f"{name}: session with 0 commands {m0 * 1000:.0f} ms, with 5 {m5 * 1000:.0f} ms; "
              f"one command's round trip, median of {len(gaps[name])}: "
              f"{statistics.median(gaps[name]) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
