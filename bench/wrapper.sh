#!/bin/sh
# gate in front of Claude Code: the same wrapped command (Claude Code 2.1's bash wrapper
# around `true`) run by bash directly and through gate, which recognises the wrapper,
# checks its files and judges the inner command, in one hyperfine run. Target: gate
# within 1.6x of `bash -c` with the same string. See docs/performance.md.
#
#   bench/wrapper.sh [GATE_BINARY]     (default: a static release build, `cargo build-static`)
set -eu
cd "$(dirname "$0")/.."

command -v hyperfine >/dev/null || { echo "bench/wrapper.sh: hyperfine is not installed (apt-get install hyperfine)" >&2; exit 1; }

if [ $# -ge 1 ]; then
    gate=$(realpath "$1")
else
    cargo --quiet build-static
    gate=$(realpath target/release/gate)
fi
out=bench/results
mkdir -p "$out"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export HOME="$scratch/home" XDG_STATE_HOME="$scratch/state" XDG_CONFIG_HOME="$scratch/config" XDG_RUNTIME_DIR="$scratch/run"
mkdir -p "$HOME" "$XDG_RUNTIME_DIR"
unset GATE_LEVEL GATE_SHELL GATE_CONFIG GATE_AUDIT_LOG GATE_SOCKET GATE_TIMEOUT GATE_LOG
snap="$HOME/.claude/shell-snapshots/snapshot-bash-1779911576803-aniwq6.sh"
cwd_file="/tmp/claude-$(printf '%04x' $$ | tail -c 4)-cwd"

# gate answers the start-up call itself: that writes the snapshot stub.
"$gate" --no-config --audit-log off --level ask --no-tty --shell /bin/bash -c -l "SNAPSHOT_FILE=$snap
      echo \"# Snapshot file\" >| \"\$SNAPSHOT_FILE\"
"
cmd="source $snap 2>/dev/null || true && shopt -u extglob 2>/dev/null || true && eval 'true' < /dev/null && pwd -P >| $cwd_file"

# Prove gate runs it (allowed as the inner command) before timing it.
"$gate" --no-config --audit-log off --level ask --no-tty --allow true --shell /bin/bash -c "$cmd" \
    || { echo "bench/wrapper.sh: gate did not run the wrapped command" >&2; exit 1; }

hyperfine --warmup 100 --runs "${RUNS:-1000}" -N \
    --export-json "$out/wrapper.json" --export-markdown "$out/wrapper.md" \
    -n 'bash -c WRAPPED' "/bin/bash -c '$(printf '%s' "$cmd" | sed "s/'/'\\\\''/g")'" \
    -n 'gate -c WRAPPED' "$gate --no-config --level ask --no-tty --allow true --shell /bin/bash -c '$(printf '%s' "$cmd" | sed "s/'/'\\\\''/g")'"
rm -f "$cwd_file"

python3 - "$out/wrapper.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
a = r["bash -c WRAPPED"]["median"]
b = r["gate -c WRAPPED"]["median"]
print(f"median: bash {a*1e3:.3f} ms, gate {b*1e3:.3f} ms: {b/a:.2f}x")
PY

# Codex with its shell snapshot: the shim as the session shell, the wrapper execs the
# shim again, which judges `true` (the outer gate delegates). Against bash running the
# same wrapper with /bin/bash in the shim's place. Settings from the user file (a shim
# takes no options).
shims="$scratch/gate-bash-shims"
mkdir -p "$shims" "$XDG_CONFIG_HOME/gate" "$HOME/.codex/shell_snapshots"
ln -s "$gate" "$shims/bash"
printf 'level = "ask"\nallow = ["true"]\nshell = "/bin/bash"\n[approval]\ntty = false\n[audit]\nlog = "off"\n' \
    > "$XDG_CONFIG_HOME/gate/config.toml"
csnap="$HOME/.codex/shell_snapshots/0199a213-81c0-7800-8aa1-bbab2a035a53.1764480000123456789.sh"
# gate answers Codex's capture (prints its stub), as Codex would then write the file.
"$shims/bash" -lc "echo '# Snapshot file'" > "$csnap"
codex() { printf "if . '%s' >/dev/null 2>&1; then :; fi\n\nexec '%s' -c 'true'" "$csnap" "$1"; }
[ "$("$shims/bash" -c "$(codex "$shims/bash")"; echo $?)" = 0 ] \
    || { echo "bench/wrapper.sh: gate did not run Codex's wrapped command" >&2; exit 1; }
q() { printf '%s' "$1" | sed "s/'/'\\\\''/g"; }
hyperfine --warmup 100 --runs "${RUNS:-1000}" -N \
    --export-json "$out/wrapper-codex.json" --export-markdown "$out/wrapper-codex.md" \
    -n 'bash -c CODEX' "/bin/bash -c '$(q "$(codex /bin/bash)")'" \
    -n 'shim -c CODEX' "$shims/bash -c '$(q "$(codex "$shims/bash")")'"

python3 - "$out/wrapper-codex.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
a = r["bash -c CODEX"]["median"]
b = r["shim -c CODEX"]["median"]
print(f"Codex median: bash {a*1e3:.3f} ms, gate twice {b*1e3:.3f} ms: {b/a:.2f}x")
PY
