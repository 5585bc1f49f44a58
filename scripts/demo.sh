#!/usr/bin/env bash
# The demo: the `ralph` CLI on a copy of examples/greeter, against a recorded model
# conversation served by the scripted OpenAI-compatible server. Offline, no API key.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
[ -f dist/cli.js ] || npm run build
[ -f out/test/fixtures/scriptedServer.js ] || npm run compile-tests

work="$(mktemp -d "${TMPDIR:-/tmp}/ralph-demo-XXXXXX")"
cp -r examples/greeter/. "$work/"
server_log="$work.server.log"
: >"$server_log" # made before the server starts: the loop below may read it first
node out/test/fixtures/scriptedServer.js --script examples/greeter.replay.json >"$server_log" 2>&1 &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  url="$(sed -n 's/^SCRIPTED_SERVER_URL=//p' "$server_log")"
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "${url:-}" ] || { echo "demo: the scripted model server did not start"; cat "$server_log"; exit 1; }

ralph() { node "$root/dist/cli.js" --workspace "$work" "$@"; }
(cd "$work" && git init -q && git add -A && git -c user.name=demo -c user.email=demo@localhost commit -qm "greeter: initial")
ralph init
cat >"$work/.ralph/config.json" <<JSON
{
  "llm": { "baseUrl": "$url", "apiKeyEnv": "RALPH_DEMO_KEY", "models": ["gpt-4.1-mini"] },
  "loop": { "maxIterations": 5, "taskTimeoutMinutes": 5 },
  "gates": [{ "name": "tests", "command": "npm test --silent", "kind": "tests", "required": true }]
}
JSON
(cd "$work" && git add -A && git -c user.name=demo -c user.email=demo@localhost commit -qm "ralph init")
ralph task add "Add a greet function" \
  --prompt "Add greet(name) to greet.js returning 'Hello, <name>!', with a node:test test, and document it in the README." \
  --promise "npm test passes with a test for greet, and the README shows how to use greet."
RALPH_DEMO_KEY=demo ralph run
ralph task list
echo
echo "Commits made by the loop in $work:"
git -C "$work" log --format='  %h %s' -n 5
echo
echo "Final report ($work/.ralph/reports/T-001/final.md):"
sed -n '1,/## Task/p' "$work/.ralph/reports/T-001/final.md" | head -n -1
