#!/bin/sh
# Install one agent at the version the tests pin, into a cache, and print the path of
# its executable. Used by the real-agent tests (tests/real_*.rs); `latest.sh` sets
# GATE_AGENTS_LATEST=1 to install the newest published version instead.
#
#   tests/agents/install.sh claude|codex|gemini|qwen|aider
#
# The cache is $GATE_AGENTS_CACHE (default: target/agents in this checkout), readable by
# every user, so the tests can also run an agent as an unprivileged user. A failed
# install exits non-zero with the installer's own output: the tests then fail, loudly.
set -eu
cd "$(dirname "$0")/../.."

agent=${1:?usage: tests/agents/install.sh AGENT}
case $agent in
    claude) kind=npm package=@anthropic-ai/claude-code version=2.1.332 bin=claude ;;
    codex) kind=npm package=@openai/codex version=0.171.0 bin=codex ;;
    gemini) kind=npm package=@google/gemini-cli version=0.61.0 bin=gemini ;;
    qwen) kind=npm package=@qwen-code/qwen-code version=0.24.4 bin=qwen ;;
    aider) kind=pypi package=aider-chat version=0.86.2 bin=aider ;;
    *) echo "install.sh: unknown agent '$agent' (claude, codex, gemini, qwen, aider)" >&2; exit 2 ;;
esac
if [ "${GATE_AGENTS_LATEST:-}" = 1 ]; then
    # The newest published version, named, so that it is cached like a pinned one.
    case $kind in
        npm) version=$(npm view "$package" version) ;;
        pypi) version=$(/usr/bin/python3 -c 'import json, sys, urllib.request
print(json.load(urllib.request.urlopen("https://pypi.org/pypi/" + sys.argv[1] + "/json"))["info"]["version"])' "$package") ;;
    esac
    [ -n "$version" ] || { echo "install.sh: cannot find the newest version of $package" >&2; exit 1; }
fi

cache=${GATE_AGENTS_CACHE:-$(pwd)/target/agents}
dir=$cache/$agent-$version
case $kind in
    npm) exe=$dir/node_modules/.bin/$bin ;;
    pypi) exe=$dir/bin/$bin ;;
esac
# One install at a time per cache: the tests of one binary run in parallel, and each
# asks for its agent.
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
if [ -f "$dir/.installed" ] && [ -x "$exe" ]; then
    echo "$exe"
    exit 0
fi

rm -rf "$dir"
mkdir -p "$dir"
log=$dir/install.log
case $kind in
    npm)
        command -v node >/dev/null || { echo "install.sh: node is not installed (Node.js 20 or newer is needed)" >&2; exit 1; }
        major=$(node -p 'process.versions.node.split(".")[0]')
        [ "$major" -ge 20 ] || { echo "install.sh: Node.js $major is too old for $package (20 or newer)" >&2; exit 1; }
        if ! npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$package@$version" >"$log" 2>&1; then
            cat "$log" >&2
            echo "install.sh: npm install $package@$version failed" >&2
            exit 1
        fi ;;
    pypi)
        spec=$package==$version
        if ! { /usr/bin/python3 -m venv "$dir" && "$dir/bin/pip" install --quiet --disable-pip-version-check "$spec"; } >"$log" 2>&1; then
            cat "$log" >&2
            echo "install.sh: pip install $spec failed (Debian needs python3-venv)" >&2
            exit 1
        fi ;;
esac
[ -x "$exe" ] || { echo "install.sh: $package installed, but $exe is missing" >&2; exit 1; }
chmod -R a+rX "$cache"
touch "$dir/.installed"
echo "$exe"
