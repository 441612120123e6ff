#!/usr/bin/env bash
# Installs the real coding agents that speak ACP, from npm, for e2e/real_agents_test.go, which runs
# them without credentials (see docs/real-agents.md):
#   codex-acp         @zed-industries/codex-acp 0.16.0 (a Node wrapper around a native binary,
#                     which npm takes from its optional dependency for this platform)
#   claude-agent-acp  @zed-industries/claude-agent-acp 0.23.1
#   gemini            @google/gemini-cli 0.61.0, run as `gemini --acp` (--experimental-acp is its
#                     deprecated spelling); needs Node 20 or newer
# all under PREFIX/node_modules, pinned exactly. Install scripts are not run (--ignore-scripts):
# only gemini-cli's optional keytar and node-pty have one, and the agents start without them.
# Node and npm are the ones on the PATH (as ../shared/tools/install-test-peers.sh leaves them);
# without npm, Debian's nodejs and npm are installed.
# About 10 seconds and 410 MB.
#
# Usage:   eval "$(bash tools/install-real-agents.sh)"     # from the project's root
# Prints:  export REAL_AGENTS=PREFIX/node_modules/.bin on stdout; progress goes to stderr.
#          PREFIX is $REAL_AGENTS_PREFIX, else ${XDG_CACHE_HOME:-$HOME/.cache}/acp-lsp-bridge-agents.
# Idempotent: a second run finds the pinned versions in place and takes well under a second.
set -euo pipefail
PREFIX=${REAL_AGENTS_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/acp-lsp-bridge-agents}
pins=(@zed-industries/codex-acp@0.16.0 @zed-industries/claude-agent-acp@0.23.1 @google/gemini-cli@0.61.0)
bins=(codex-acp claude-agent-acp gemini)
say() { echo "install-real-agents: $*" >&2; }

# installed: every pinned package is in place at its version, and every command is there.
installed() {
  [ -f "$PREFIX/.pins" ] && [ "$(cat "$PREFIX/.pins")" = "${pins[*]}" ] || return 1
  local p name version
  for p in "${pins[@]}"; do
    name=${p%@*} version=${p##*@}
    grep -q "\"version\": *\"$version\"" "$PREFIX/node_modules/$name/package.json" 2>/dev/null || return 1
  done
  for b in "${bins[@]}"; do [ -x "$PREFIX/node_modules/.bin/$b" ] || return 1; done
}

if ! installed; then
  if ! command -v npm >/dev/null; then
    say "apt-get install nodejs npm"
    export DEBIAN_FRONTEND=noninteractive
    apt-get -qq update >&2
    apt-get -y -qq install --no-install-recommends nodejs npm >&2
  fi
  major=$(node -p 'process.versions.node.split(".")[0]')
  if [ "$major" -lt 20 ]; then
    say "Node $(node --version) is too old: @google/gemini-cli 0.61.0 needs Node 20 or newer"
    exit 1
  fi
  mkdir -p "$PREFIX"
  rm -f "$PREFIX/.pins"
  [ -f "$PREFIX/package.json" ] || echo '{"name":"real-agents","private":true}' >"$PREFIX/package.json"
  say "npm install ${pins[*]}"
  (cd "$PREFIX" && npm install --no-audit --no-fund --ignore-scripts --save-exact "${pins[@]}" >&2)
  echo "${pins[*]}" >"$PREFIX/.pins"
  installed || { say "the packages are not all in place under $PREFIX/node_modules after npm install"; exit 1; }
  say "installed in $PREFIX ($(du -sh "$PREFIX/node_modules" | cut -f1))"
fi
echo "export REAL_AGENTS=$PREFIX/node_modules/.bin"
