#!/usr/bin/env python3
"""Median wall time of Gemini CLI (the pinned version, tests/agents/install.sh) running one
scripted command against the fake model, with gate's bash shim first on PATH against a
link to /bin/bash there; then one Gemini CLI 0.61 wrapper around `echo hi` run by the
shim against /bin/bash alone (200 runs, interleaved).

    bench/real_gemini.py GATE_BINARY        (RUNS=N agent runs each, default 7)
"""
import json, os, shutil, statistics, subprocess, sys, tempfile, time
GATE = sys.argv[1]
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GEMINI = subprocess.run(["sh", REPO + "/tests/agents/install.sh", "gemini"], check=True, capture_output=True, text=True).stdout.strip()
root = tempfile.mkdtemp(prefix="gemini-perf-", dir="/var/tmp")
home = os.path.join(root, "home"); work = os.path.join(root, "work")
os.makedirs(os.path.join(home, ".gemini")); os.makedirs(work); os.makedirs(os.path.join(home, ".config/gate"))
open(os.path.join(home, ".gemini/settings.json"), "w").write(json.dumps({
    "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "security": {"auth": {"selectedType": "gemini-api-key"}}}))
open(os.path.join(home, ".config/gate/config.toml"), "w").write('allow = ["echo hi"]\n')
dirs = {}
for name, target in [("gate", GATE), ("bash", "/bin/bash")]:
    d = os.path.join(root, "shim-" + name); os.makedirs(d); os.symlink(target, os.path.join(d, "bash")); dirs[name] = d
script = os.path.join(root, "script.json"); open(script, "w").write(json.dumps({"commands": ["echo hi"], "final": "done"}))
srv = subprocess.Popen([sys.executable, REPO + "/tests/agents/fake_model.py", "--protocol", "gemini", "--script", script, "--record", os.path.join(root, "rec.jsonl")], stdout=subprocess.PIPE, text=True)
port = srv.stdout.readline().split()[1]
def env_for(d):
    return {"HOME": home, "PATH": d + ":/usr/local/bin:/usr/bin:/bin", "GEMINI_API_KEY": "dummy", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:" + port, "GEMINI_CLI_TRUST_WORKSPACE": "true", "TERM": "dumb"}
def agent_run(d):
    t = time.perf_counter()
    out = subprocess.run([GEMINI, "-p", "Run the commands.", "--yolo"], env=env_for(d), cwd=work, capture_output=True, text=True, timeout=120)
    dt = time.perf_counter() - t
    assert out.returncode == 0 and "done" in out.stdout, out
    return dt
res = {"gate": [], "bash": []}
for i in range(int(os.environ.get("RUNS", "7"))):
    for name in ("bash", "gate"):
        res[name].append(agent_run(dirs[name]))
tool = [json.loads(l)["tool_results"] for l in open(os.path.join(root, "rec.jsonl"))]
assert all("gate:" not in r for t in tool if t for r in t), tool
for name in ("bash", "gate"):
    print(f"agent run, one command, {name}: median {statistics.median(res[name]):.3f} s  runs {[round(x,3) for x in res[name]]}")
# one wrapped command, the shell alone
newd = os.path.join("/tmp", "gemini-shell-Perf01"); shutil.rmtree(newd, ignore_errors=True); os.mkdir(newd, 0o700)
text = f"shopt -u promptvars nullglob extglob nocaseglob dotglob; _bgpids_file={newd}/bgpids.tmp\n(\n  trap 'jobs -p > \"$_bgpids_file\"' EXIT\necho hi\n)\n__code=$?\nexit $__code"
one = {"gate": [], "bash": []}
for i in range(200):
    for name in ("bash", "gate"):
        t = time.perf_counter()
        out = subprocess.run([os.path.join(dirs[name], "bash"), "-c", text], env=env_for(dirs[name]), cwd=work, capture_output=True)
        one[name].append(time.perf_counter() - t)
        assert out.stdout == b"hi\n", out
for name in ("bash", "gate"):
    print(f"one wrapped command, {name}: median {statistics.median(one[name])*1000:.2f} ms")
srv.kill(); shutil.rmtree(root); shutil.rmtree(newd, ignore_errors=True)
