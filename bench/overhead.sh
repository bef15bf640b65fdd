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
    cargo --quiet build-static
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
    -n 'exec-only sh -c true (floor)' "$floor /bin/sh -c true" \
    -n 'gate -c true' "$gate --no-config --level ask --allow true -c true" \
    -n 'gate -c true (audit off)' "$gate --no-config --level ask --allow true --audit-log off -c true"

# Peak memory (maximum resident set size) of one run, by GNU time (Debian: time). The
# figure covers the whole process: gate, then the program it execs.
if [ -x /usr/bin/time ]; then
    echo
    for cmd in "/bin/true" "$floor /bin/true" "$gate --no-config --level full -- /bin/true" \
        "$gate --no-config --level ask --allow true -c true"; do
        /usr/bin/time -f "peak RSS %M KiB: $cmd" $cmd
    done
else
    echo "peak RSS: not measured (/usr/bin/time is missing: apt-get install time)"
fi

python3 - "$out/overhead.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
# Medians: on a busy or virtual machine a few slow runs move the mean a lot.
def m(name): return r[name]["median"] * 1e3
print()
print("median ms: " + ", ".join(f"{k} {m(k):.3f}" for k in r))
ratio = lambda a, b: m(a) / m(b)
print(f"gate -- /bin/true vs floor:   {ratio('gate -- /bin/true', 'exec-only /bin/true (floor)'):.3f}x (target <= 1.15)")
print(f"gate -c true vs floor:        {ratio('gate -c true', 'exec-only sh -c true (floor)'):.3f}x (target <= 1.15)")
print(f"gate -c true vs sh -c true:   {ratio('gate -c true', 'sh -c true'):.3f}x (target <= 1.6; "
      f"the floor itself is {ratio('exec-only sh -c true (floor)', 'sh -c true'):.3f}x here)")
PY
