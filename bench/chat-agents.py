#!/usr/bin/env python3
"""Wall time of one scripted command through gate against plain bash, for Qwen Code and
Aider (docs/performance.md, "Real agents: Qwen Code and Aider").

    bench/chat-agents.py [RUNS [qwen|aider]...]   # default 5, both; needs target/release/gate (cargo build --release) or GATE=PATH

Qwen Code: its own node-pty spawning `bash -c CMD`, bash from PATH, as it runs each
command (add `pty` to the arguments to measure only this); and the whole headless run `qwen --yolo PROMPT` against the fake model
(tests/agents/fake_model.py) running one allowed command, with a directory first on
PATH whose `bash` is the gate shim, or the real bash. Aider: its own `run_cmd_pexpect`
(aider/run_cmd.py, imported from the installed Aider) running one allowed command on
a terminal, `SHELL` the shim or the real bash. Runs alternate; medians are printed.
The agents come from $GATE_AGENTS_CACHE (default /var/cache/gate-agents).
"""

import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GATE = os.environ.get("GATE", os.path.join(REPO, "target/release/gate"))
CACHE = os.environ.get("GATE_AGENTS_CACHE", "/var/cache/gate-agents")
QWEN = os.path.join(CACHE, "qwen-0.15.10/node_modules/.bin/qwen")
AIDER_PY = os.path.join(CACHE, "aider-0.86.2/bin/python")
COMMAND = "echo bench"

SETTINGS = {
    "security": {"auth": {"selectedType": "openai"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
}


def machine(root):
    dirs = {n: os.path.join(root, n) for n in ("home", "work", "config", "state", "run", "gate", "plain")}
    for d in dirs.values():
        os.makedirs(d)
    os.chmod(dirs["run"], 0o700)
    os.symlink(GATE, os.path.join(dirs["gate"], "bash"))
    os.symlink("/usr/bin/bash", os.path.join(dirs["plain"], "bash"))
    os.makedirs(os.path.join(dirs["config"], "gate"))
    with open(os.path.join(dirs["config"], "gate/config.toml"), "w") as f:
        f.write(f'level = "ask"\nallow = ["{COMMAND}"]\n')
    os.makedirs(os.path.join(dirs["home"], ".qwen"))
    with open(os.path.join(dirs["home"], ".qwen/settings.json"), "w") as f:
        json.dump(SETTINGS, f)
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": dirs["home"],
        "XDG_CONFIG_HOME": dirs["config"],
        "XDG_STATE_HOME": dirs["state"],
        "XDG_RUNTIME_DIR": dirs["run"],
        "LC_ALL": "C.UTF-8",
        "TERM": "xterm",
    }
    return dirs, env


def fake_model(root, n):
    script = os.path.join(root, f"script-{n}.json")
    with open(script, "w") as f:
        json.dump({"commands": [COMMAND], "final": "BENCH-DONE"}, f)
    proc = subprocess.Popen(
        [sys.executable, os.path.join(REPO, "tests/agents/fake_model.py"), "--protocol",
         "openai_chat", "--script", script, "--record", os.path.join(root, f"rec-{n}.jsonl")],
        stdout=subprocess.PIPE, text=True)
    port = int(proc.stdout.readline().split()[1])
    return proc, port


def qwen_once(root, dirs, env, shims, n):
    model, port = fake_model(root, n)
    try:
        run_env = dict(env, PATH=f"{dirs[shims]}:{env['PATH']}",
                       OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1",
                       OPENAI_API_KEY="fake", OPENAI_MODEL="fake-model")
        start = time.monotonic()
        out = subprocess.run([QWEN, "--yolo", "Run the command."], env=run_env, cwd=dirs["work"],
                             stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)
        elapsed = time.monotonic() - start
        assert "BENCH-DONE" in out.stdout, out.stdout + out.stderr
        return elapsed
    finally:
        model.kill()
        model.wait()


PTY_TIMER = r"""
import { createRequire } from "module";
const require = createRequire(process.argv[2] + "/");
const pty = require("@lydell/node-pty");
const times = [];
function once() {
  return new Promise((resolve) => {
    const start = process.hrtime.bigint();
    const p = pty.spawn("bash", ["-c", process.argv[4]], { cwd: process.cwd(), env: process.env, cols: 80, rows: 30 });
    p.onData(() => {});
    p.onExit(({ exitCode }) => resolve([Number(process.hrtime.bigint() - start) / 1e6, exitCode]));
  });
}
for (let i = 0; i < Number(process.argv[3]); i++) {
  const [ms, code] = await once();
  if (code !== 0) throw new Error("exit " + code);
  times.push(ms / 1000);
}
console.log("TIMES " + JSON.stringify(times));
"""


def qwen_pty_times(root, dirs, env, shims, runs):
    """Qwen Code's own node-pty (from its install) spawning `bash -c CMD` as its
    ShellExecutionService does, bash from PATH."""
    timer = os.path.join(root, "pty-timer.mjs")
    with open(timer, "w") as f:
        f.write(PTY_TIMER)
    package = os.path.join(os.path.dirname(os.path.dirname(QWEN)), "@qwen-code/qwen-code")
    out = subprocess.run(["node", timer, package, str(runs), COMMAND],
                         env=dict(env, PATH=f"{dirs[shims]}:{env['PATH']}"), cwd=dirs["work"],
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    at = out.stdout.rfind("TIMES [")
    assert at >= 0, out.stdout + out.stderr
    return json.loads(out.stdout[at + len("TIMES "):].splitlines()[0])


AIDER_TIMER = r"""
import json, os, sys, time
from aider.run_cmd import run_cmd_pexpect
times = []
for _ in range(int(sys.argv[1])):
    start = time.monotonic()
    status, output = run_cmd_pexpect(sys.argv[2])
    times.append(time.monotonic() - start)
    assert status == 0, (status, output)
print("TIMES " + json.dumps(times))
"""


def aider_times(root, dirs, env, shims, runs):
    shell = os.path.join(dirs[shims], "bash")
    timer = os.path.join(root, "aider-timer.py")
    with open(timer, "w") as f:
        f.write(AIDER_TIMER)
    inner = " ".join([AIDER_PY, timer, str(runs), shlex.quote(COMMAND)])
    out = subprocess.run(["script", "-qec", f"SHELL={shell} {inner}", "/dev/null"],
                         env=env, cwd=dirs["work"], stdin=subprocess.DEVNULL,
                         capture_output=True, text=True, timeout=300)
    at = out.stdout.rfind("TIMES [")
    assert at >= 0, out.stdout + out.stderr
    return json.loads(out.stdout[at + len("TIMES "):].splitlines()[0])


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    agents = sys.argv[2:] or ["qwen", "aider"]
    root = tempfile.mkdtemp(prefix="gate-bench-chat-", dir="/var/tmp")
    dirs, env = machine(root)
    qwen = {"gate": [], "plain": []}
    for i in range(runs if "qwen" in agents and "pty" not in agents else 0):
        # Alternate which goes first, so that an order effect shows in neither.
        for shims in ("plain", "gate") if i % 2 == 0 else ("gate", "plain"):
            qwen[shims].append(qwen_once(root, dirs, env, shims, f"{shims}-{i}"))
    qwen_pty = {"gate": [], "plain": []}
    for _ in range(runs if "qwen" in agents else 0):
        for shims in ("plain", "gate"):
            qwen_pty[shims] += qwen_pty_times(root, dirs, env, shims, 20)
    aider = {"gate": [], "plain": []}
    for _ in range(runs if "aider" in agents else 0):
        for shims in ("plain", "gate"):
            aider[shims] += aider_times(root, dirs, env, shims, 10)
    for name, data in (("Qwen Code, whole run", qwen), ("Qwen Code's node-pty, one command", qwen_pty),
                       ("Aider run_cmd_pexpect", aider)):
        if not data["plain"]:
            continue
        plain = statistics.median(data["plain"])
        gated = statistics.median(data["gate"])
        spread = lambda xs: f"{min(xs) * 1000:.1f}..{max(xs) * 1000:.1f}"
        print(f"{name}: plain bash {plain * 1000:.1f} ms ({spread(data['plain'])}), "
              f"gate {gated * 1000:.1f} ms ({spread(data['gate'])}), "
              f"{gated / plain:.3f}x ({len(data['plain'])} runs each)")


if __name__ == "__main__":
    main()
