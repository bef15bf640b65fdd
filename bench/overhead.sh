#!/bin/sh
# What gate adds before every command, measured with hyperfine in one run against the
# same commands without gate. See docs/performance.md for the figures and how to read them.
#
#   bench/overhead.sh [GATE_BINARY]     (default: a static release build, `cargo build-static`)
#
# Needs hyperfine (Debian: apt-get install hyperfine). Writes bench/results/overhead.json
# and .md. The floor is `exec-only`: a static Rust program that does nothing but exec its
# argument, i.e. the cost of one more exec, which no wrapper can avoid.
set -eu
cd "$(dirname "$0")/.."

command -v hyperfine >/dev/null || { echo "bench/overhead.sh: hyperfine is not installed (apt-get install hyperfine)" >&2; exit 1; }

if [ $# -ge 1 ]; then
    gate=$1
else
    cargo build-static --quiet
    gate=target/release/gate
fi

out=bench/results
mkdir -p "$out"

# The floor: a minimal static Rust program that only execs its argument.
floor="$out/exec-only"
if [ ! -x "$floor" ] || [ bench/exec-only.rs -nt "$floor" ]; then
    rustc --edition 2021 -O -C target-feature=+crt-static -o "$floor" bench/exec-only.rs
fi

# Isolate gate from the caller's configuration and keep its audit log in a scratch dir,
# as a default install would write it (the audit log is on by default and part of the cost).
state=$(mktemp -d)
trap 'rm -rf "$state"' EXIT
export XDG_STATE_HOME="$state" XDG_CONFIG_HOME="$state/config"
unset GATE_LEVEL GATE_SHELL GATE_CONFIG GATE_AUDIT_LOG GATE_SESSION GATE_SOCKET GATE_TIMEOUT GATE_LOG

hyperfine --warmup 200 --runs "${RUNS:-2000}" -N \
    --export-json "$out/overhead.json" --export-markdown "$out/overhead.md" \
    -n '/bin/true' '/bin/true' \
    -n 'exec-only /bin/true (floor)' "$floor /bin/true" \
    -n 'gate -- /bin/true' "$gate --no-config --level full -- /bin/true" \
    -n 'gate -- /bin/true (audit off)' "$gate --no-config --level full --audit-log off -- /bin/true" \
    -n 'sh -c true' 'sh -c true' \
    -n 'gate -c true' "$gate --no-config --level ask --allow true -c true" \
    -n 'gate -c true (audit off)' "$gate --no-config --level ask --allow true --audit-log off -c true"

# Peak memory of one gate run (maximum resident set size, KiB), measured by GNU time when
# present, else by the kernel's rusage through python3.
rss() {
    python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
}
echo
echo "peak RSS, gate --no-config --level full -- /bin/true: $(rss "$gate" --no-config --level full -- /bin/true) KiB"
echo "peak RSS, gate -c true (via sh):                     $(rss "$gate" --no-config --level ask --allow true -c true) KiB"
echo "peak RSS, /bin/true alone:                           $(rss /bin/true) KiB"

python3 - "$out/overhead.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
def m(name): return r[name]["mean"] * 1e3
print()
print("mean ms: " + ", ".join(f"{k} {m(k):.3f}" for k in r))
print(f"gate -- /bin/true vs floor:   {m('gate -- /bin/true') / m('exec-only /bin/true (floor)'):.3f}x (target <= 1.15)")
print(f"gate -c true vs sh -c true:   {m('gate -c true') / m('sh -c true'):.3f}x (target <= 1.6)")
PY
