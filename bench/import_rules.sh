#!/bin/sh
# What a 500-rule imported policy costs per command, against the same gate with only the
# user file: one hyperfine run, both sides allowing the same command at level ask. The
# target (issue 25): at most 0.1 ms more per command. See docs/performance.md.
#
#   bench/import_rules.sh [GATE_BINARY]     (default: a static release build, `cargo build-static`)
#
# Needs hyperfine. Writes bench/results/import-rules.json and .md. Run it on a quiet
# machine: the difference is small beside the noise of a loaded one.
set -eu
cd "$(dirname "$0")/.."

command -v hyperfine >/dev/null || { echo "bench/import_rules.sh: hyperfine is not installed (apt-get install hyperfine)" >&2; exit 1; }

if [ $# -ge 1 ]; then
    gate=$1
else
    cargo --quiet build-static
    gate=target/release/gate
fi
gate=$(realpath "$gate")

out=bench/results
mkdir -p "$out"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
unset GATE_LEVEL GATE_SHELL GATE_CONFIG GATE_AUDIT_LOG GATE_SESSION GATE_SOCKET GATE_TIMEOUT GATE_LOG

# Two homes with the same user file; one also gets the import. Both user files hold one
# deny rule: any deny rule brings the exec-stage supervisor (docs/supervisor.md), a cost
# of its own that an imported policy with deny rules pays whatever their number; with it
# on both sides, the difference is what 500 more rules cost. `gate check` (no exec, no
# supervisor) is measured too, for the loading alone.
for side in empty imported; do
    mkdir -p "$scratch/$side/config/gate" "$scratch/$side/state" "$scratch/$side/home/.claude"
    printf 'level = "ask"\nallow = ["echo hi"]\ndeny = ["never-run-this"]\n' \
        >"$scratch/$side/config/gate/config.toml"
done

# A Claude Code settings file of 500 shell rules, the shapes people write: word prefixes,
# exact commands, asks and denies (350 + 50 + 50 + 50).
python3 - "$scratch/imported/home/.claude/settings.json" <<'PY'
import json, sys
allow = [f"Bash(tool{i} run:*)" for i in range(350)] + [f"Bash(tool{i} status)" for i in range(50)]
ask = [f"Bash(tool{i} push:*)" for i in range(50)]
deny = [f"Bash(tool{i} destroy:*)" for i in range(50)]
json.dump({"permissions": {"allow": allow, "ask": ask, "deny": deny}}, open(sys.argv[1], "w"), indent=2)
PY
(cd "$scratch/imported" && HOME="$scratch/imported/home" XDG_CONFIG_HOME="$scratch/imported/config" \
    XDG_STATE_HOME="$scratch/imported/state" "$gate" import claude --save >/dev/null)
rules=$(grep -c 'rule = ' "$scratch/imported/config/gate/config.d/import-claude.toml")
echo "imported policy: $rules rules" >&2

side() {
    printf 'env HOME=%s/%s/home XDG_CONFIG_HOME=%s/%s/config XDG_STATE_HOME=%s/%s/state %s %s -c "echo hi"' \
        "$scratch" "$1" "$scratch" "$1" "$scratch" "$1" "$gate" "$2"
}
hyperfine --warmup 200 --runs "${RUNS:-2000}" -N \
    --export-json "$out/import-rules.json" --export-markdown "$out/import-rules.md" \
    -n 'run: user file only' "$(side empty '')" \
    -n "run: user file + $rules imported rules" "$(side imported '')" \
    -n 'check: user file only' "$(side empty check)" \
    -n "check: user file + $rules imported rules" "$(side imported check)"
