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
  if [ -f "$target/.installed" ] && [ -e "$target/node_modules/.bin/$bin" ]; then
    echo "[agent-clis] in place: $package@$version"
    continue
  fi
  echo "[agent-clis] installing $package@$version into $target"
  rm -rf "$target.tmp"
  mkdir -p "$target.tmp"
  printf '{ "name": "ralph-agent-cli-%s", "private": true }\n' "$kind" >"$target.tmp/package.json"
  npm install --prefix "$target.tmp" --no-audit --no-fund --loglevel=error "$package@$version" >/dev/null
  [ -e "$target.tmp/node_modules/.bin/$bin" ] || { echo "[agent-clis] $package@$version has no bin $bin" >&2; exit 1; }
  touch "$target.tmp/.installed"
  rm -rf "$target"
  mv "$target.tmp" "$target"
done <"$root/scripts/agent-clis.txt"
