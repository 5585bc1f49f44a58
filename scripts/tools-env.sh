#!/usr/bin/env bash
# Where the extension-host test tools live (sourced by install-tools.sh and test-all.sh; printed
# for test/runner/codeServerHost.ts when run directly): Node 24 and code-server, installed once per
# machine and version into the user's cache, outside any checkout, so that a fresh clone (CI's
# every run) does not install them again. RALPH_TOOLS_DIR points elsewhere.
RALPH_NODE_VERSION="${RALPH_NODE_VERSION:-24}"
RALPH_CODE_SERVER_VERSION="${RALPH_CODE_SERVER_VERSION:-4.139.1}"
RALPH_TOOLS_DIR="${RALPH_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ralph-loop/tools/node${RALPH_NODE_VERSION}-code-server-${RALPH_CODE_SERVER_VERSION}}"
export RALPH_NODE_VERSION RALPH_CODE_SERVER_VERSION RALPH_TOOLS_DIR
if [ "${BASH_SOURCE[0]}" = "$0" ]; then echo "$RALPH_TOOLS_DIR"; fi
