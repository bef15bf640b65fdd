#!/bin/sh
# The cost of the safe level, against bubblewrap and the bare exec floor, in one hyperfine
# run per user. See docs/performance.md.
#
#   bench/sandbox.sh [GATE_BINARY]     (default: a static release build, `cargo build-static`)
#
# Needs hyperfine and bubblewrap (Debian: apt-get install hyperfine bubblewrap). When run
# as root it measures twice: as root (gate then also hides root's own secrets, /etc/shadow
# and the rest, which uid 0 could otherwise read, by covering them with mounts in a mount
# namespace of its own), and as an unprivileged user (uid 65534), the usual case for an
# agent. Writes bench/results/sandbox-*.json and .md.
set -eu
cd "$(dirname "$0")/.."

for tool in hyperfine bwrap; do
    command -v "$tool" >/dev/null || { echo "bench/sandbox.sh: $tool is not installed" >&2; exit 1; }
done

if [ $# -ge 1 ]; then
    gate=$1
else
    cargo --quiet build-static
    gate=target/release/gate
fi

out=$(pwd)/bench/results
mkdir -p "$out"
floor_src=bench/exec-only.rs
floor="$out/exec-only"
if [ ! -x "$floor" ] || [ "$floor_src" -nt "$floor" ]; then
    rustc --edition 2021 -O -C target-feature=+crt-static -o "$floor" "$floor_src"
fi

# A scratch world every user can use: the binaries, a home with a .ssh (so the default
# deny-read list is active and walked), a workspace.
scratch=$(mktemp -d /var/tmp/gate-bench-XXXXXX)
trap 'rm -rf "$scratch"' EXIT
chmod 755 "$scratch"
cp "$gate" "$scratch/gate"
cp "$floor" "$scratch/exec-only"
mkdir -p "$scratch/home/.ssh" "$scratch/work" "$scratch/out"
echo key > "$scratch/home/.ssh/id"
chmod 777 "$scratch/home" "$scratch/work" "$scratch/out"

run() {
    label=$1
    shift
    (
        cd "$scratch/work"
        "$@" hyperfine -N --warmup 100 --runs "${RUNS:-1000}" \
            --export-json "$scratch/out/sandbox-$label.json" --export-markdown "$scratch/out/sandbox-$label.md" \
            -n '/bin/true' '/bin/true' \
            -n 'exec-only /bin/true (floor)' "$scratch/exec-only /bin/true" \
            -n 'gate --level safe -- /bin/true' "$scratch/gate --no-config --level safe -- /bin/true" \
            -n 'bwrap ... /bin/true' 'bwrap --ro-bind / / --dev /dev --proc /proc --unshare-net /bin/true'
    )
    cp "$scratch/out/sandbox-$label.json" "$scratch/out/sandbox-$label.md" "$out/"
    python3 - "$out/sandbox-$label.json" "$label" <<'PY'
import json, sys
r = {x["command"]: x["median"] * 1e3 for x in json.load(open(sys.argv[1]))["results"]}
g, f, b = r["gate --level safe -- /bin/true"], r["exec-only /bin/true (floor)"], r["bwrap ... /bin/true"]
print(f"[{sys.argv[2]}] median ms: " + ", ".join(f"{k} {v:.3f}" for k, v in r.items()))
print(f"[{sys.argv[2]}] safe vs floor: {g / f:.3f}x (target <= 1.5); bwrap / safe: {b / g:.2f}x (target >= 3)")
PY
}

env="env HOME=$scratch/home XDG_STATE_HOME=$scratch/home/.local/state XDG_CONFIG_HOME=$scratch/home/.config"
if [ "$(id -u)" = 0 ]; then
    run root $env
    run user setpriv --reuid=65534 --regid=65534 --clear-groups $env
else
    run user $env
fi
