#!/usr/bin/env bash
# Installs the pinned agent CLIs of scripts/agent-clis.txt from the npm registry into
# ${RALPH_AGENT_CLIS_DIR:-~/.cache/ralph-loop/agent-clis}/<kind>-<version>/, once per machine and
# version (a fresh clone, CI's every run, finds them there), under a lock so that two checkouts
# installing at once do not tear each other's install.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${RALPH_AGENT_CLIS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ralph-loop/agent-clis}"
mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9
while read -r kind package version bin; do
  case "$kind" in ''|'#'*) continue ;; esac
  target="$dir/$kind-$version"
  # OpenCode installs its plugin package (npm, ~60 MB) into the config folder of every fresh home
  # on its first start: config-seed/ is that folder installed once, which the tests' fresh homes
  # are seeded from (test/unit/helpers/agentCliRun.ts), as a person's home has it after day one
  seeded() { [ "$kind" != opencode ] || [ -f "$target/config-seed/node_modules/@opencode-ai/plugin/package.json" ]; }
  if [ -f "$target/.installed" ] && [ -e "$target/node_modules/.bin/$bin" ] && seeded; then
    echo "[agent-clis] in place: $package@$version"
    continue
  fi
  echo "[agent-clis] installing $package@$version into $target"
  rm -rf "$target.tmp"
  mkdir -p "$target.tmp"
  printf '{ "name": "ralph-agent-cli-%s", "private": true }\n' "$kind" >"$target.tmp/package.json"
  npm install --prefix "$target.tmp" --no-audit --no-fund --loglevel=error "$package@$version" >/dev/null
  [ -e "$target.tmp/node_modules/.bin/$bin" ] || { echo "[agent-clis] $package@$version has no bin $bin" >&2; exit 1; }
  if [ "$kind" = opencode ]; then
    mkdir -p "$target.tmp/config-seed"
    printf '{\n  "dependencies": {\n    "@opencode-ai/plugin": "%s"\n  }\n}\n' "$version" >"$target.tmp/config-seed/package.json"
    npm install --prefix "$target.tmp/config-seed" --no-audit --no-fund --loglevel=error >/dev/null
  fi
  touch "$target.tmp/.installed"
  rm -rf "$target"
  mv "$target.tmp" "$target"
done <"$root/scripts/agent-clis.txt"
