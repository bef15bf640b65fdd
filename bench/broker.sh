#!/bin/sh
# The broker `gate serve` under load: its memory with many requests waiting, and the raw
# approval round trip. See docs/performance.md for the figures and how to read them.
#
#   bench/broker.sh [GATE_BINARY]     (default: a static release build, `cargo build-static`)
#
# 1. Memory: 1,000 requests waiting at once in one broker (target: RSS <= 20 MB), the time
#    to register them, and the raw approval round trip (requester -> broker -> watching
#    approver -> broker -> requester) with nothing else waiting and while they wait.
# 2. The same 1,000 connections held by a thread-per-connection model
#    (bench/broker-threads.rs), for the choice of concurrency model.
#
# The round trip of the real gate (gate -> broker -> scripted approver -> exec of
# /bin/true) is measured by bench/approval.sh.
#
# Needs python3 (standard library only) and rustc. Prints figures; asserts nothing.
set -eu
cd "$(dirname "$0")/.."

COUNT=${COUNT:-1000}

if [ $# -ge 1 ]; then
    gate=$(realpath "$1")
else
    cargo --quiet build-static
    gate=$(pwd)/target/release/gate
fi

client=$(pwd)/bench/broker-client.py

tmp=$(mktemp -d)
pids=""
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'cleanup; exit 1' HUP INT PIPE TERM

mkdir -m 700 "$tmp/run"
export XDG_RUNTIME_DIR="$tmp/run" XDG_STATE_HOME="$tmp/state" XDG_CONFIG_HOME="$tmp/config"
unset GATE_LEVEL GATE_SHELL GATE_CONFIG GATE_AUDIT_LOG GATE_SESSION GATE_SOCKET GATE_TIMEOUT GATE_LOG
socket="$XDG_RUNTIME_DIR/gate/broker.sock"

wait_for_socket() {
    i=0
    while [ ! -S "$1" ]; do
        i=$((i + 1))
        [ $i -lt 1000 ] || { echo "bench/broker.sh: nothing listens on $1" >&2; exit 1; }
        sleep 0.01
    done
}

rss() { awk '/^VmRSS/ {print $2 " " $3}' "/proc/$1/status"; }

echo "== gate serve: $COUNT requests waiting at once"
"$gate" serve 2>"$tmp/serve.log" &
broker=$!
pids="$pids $broker"
wait_for_socket "$socket"
echo "broker VmRSS idle: $(rss $broker)"
python3 "$client" hold "$socket" "$COUNT" "$broker"

echo
echo "== thread per connection (bench/broker-threads.rs): $COUNT connections held"
threads="$tmp/broker-threads"
rustc --edition 2021 -O -o "$threads" bench/broker-threads.rs
"$threads" "$tmp/threads.sock" &
model=$!
pids="$pids $model"
wait_for_socket "$tmp/threads.sock"
echo "model VmRSS idle: $(rss $model)"
python3 "$client" hold "$tmp/threads.sock" "$COUNT" "$model" --threads

