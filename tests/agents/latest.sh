#!/bin/sh
# The real-agent tests against the newest published version of every agent, not the
# pinned ones: run it by hand (not in CI) to find the day an agent's new release changes
# how it calls its shell. Installs into a cache of its own, so the pinned ones stay.
set -eu
cd "$(dirname "$0")/../.."
export GATE_AGENTS_LATEST=1
export GATE_AGENTS_CACHE="${GATE_AGENTS_CACHE:-$(pwd)/target/agents-latest}"
for agent in claude codex gemini qwen aider; do
    echo "== $agent: $(sh tests/agents/install.sh "$agent")"
done
# The real_agents tier. --no-fail-fast: one agent that changed must not hide what the
# others did.
exec cargo test --no-fail-fast --test real_agents "$@"
