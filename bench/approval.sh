#!/bin/sh
# The cost of asking: a command approved through the broker (gate → gate serve →
# a scripted approver → exec of /bin/true) against the same gate allowing it by a rule,
# measured with hyperfine in one run. See docs/performance.md.
#
#   bench/approval.sh [GATE_BINARY]     (default: a static release build, `cargo build-static`)
#
# Needs hyperfine and python3. Writes bench/results/approval.json and .md.
set -eu
cd "$(dirname "$0")/.."

command -v hyperfine >/dev/null || { echo "bench/approval.sh: hyperfine is not installed (apt-get install hyperfine)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "bench/approval.sh: python3 is not installed" >&2; exit 1; }

if [ $# -ge 1 ]; then
    gate=$(realpath "$1")
else
    cargo --quiet build-static
    gate=$(realpath target/release/gate)
fi

out=bench/results
mkdir -p "$out"

scratch=$(mktemp -d)
broker_pid=
approver_pid=
cleanup() {
    [ -n "$approver_pid" ] && kill "$approver_pid" 2>/dev/null
    [ -n "$broker_pid" ] && kill "$broker_pid" 2>/dev/null
    wait 2>/dev/null
    rm -rf "$scratch"
}
trap cleanup EXIT
mkdir -m 700 "$scratch/run"
export XDG_RUNTIME_DIR="$scratch/run" XDG_STATE_HOME="$scratch/state" XDG_CONFIG_HOME="$scratch/config"
unset GATE_LEVEL GATE_SHELL GATE_CONFIG GATE_AUDIT_LOG GATE_SOCKET GATE_TIMEOUT GATE_LOG
export GATE_SESSION=bench
socket="$XDG_RUNTIME_DIR/gate/broker.sock"

"$gate" --no-config serve 2>"$scratch/broker.log" &
broker_pid=$!
i=0
while [ ! -S "$socket" ] || [ ! -f "$socket.token" ]; do
    i=$((i + 1))
    [ $i -gt 500 ] && { echo "bench/approval.sh: the broker did not start:" >&2; cat "$scratch/broker.log" >&2; exit 1; }
    sleep 0.01
done
python3 bench/auto-approver.py "$socket" &
approver_pid=$!

# One approved run first: proves the chain works before anything is timed.
"$gate" --no-config --level ask --audit-log off -- /bin/true \
    || { echo "bench/approval.sh: the approval chain does not work:" >&2; cat "$scratch/broker.log" >&2; exit 1; }

hyperfine --warmup 50 --runs "${RUNS:-500}" -N \
    --export-json "$out/approval.json" --export-markdown "$out/approval.md" \
    -n 'gate, allowed by a rule' "$gate --no-config --level ask --allow /bin/true --audit-log off -- /bin/true" \
    -n 'gate, approved through the broker' "$gate --no-config --level ask --audit-log off -- /bin/true"

python3 - "$out/approval.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
rule = r["gate, allowed by a rule"]["median"]
asked = r["gate, approved through the broker"]["median"]
print(f"median: rule {rule*1e3:.3f} ms, approved {asked*1e3:.3f} ms, "
      f"round trip adds {(asked-rule)*1e3:.3f} ms ({asked/rule:.2f}x)")
PY
