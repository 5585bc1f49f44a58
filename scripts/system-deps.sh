#!/usr/bin/env bash
# The Debian packages the test tiers need, in ONE place (`npm test` and .ci/run both call this):
#   git         the loop's commits and every git test
#   chromium    the integration and end-to-end tiers drive VS Code in it
#   bubblewrap  the command sandbox (`bwrap`) and its tests
#   libkrb5-dev headers for VS Code's kerberos module, compiled when code-server is installed
#               (only with --build-headers: needed once, while .tools/ is being installed)
# Installs what is missing with apt-get when it can (root, or sudo without a password);
# otherwise stops, changing nothing, with the one command to run.
set -euo pipefail

RALPH_SYSTEM_PACKAGES=(git chromium bubblewrap)
RALPH_BUILD_PACKAGES=(libkrb5-dev)

# Whether a package's program or headers are present (not whether dpkg knows it: a chromium
# from elsewhere on PATH does as well).
system_package_present() {
  case "$1" in
    git) command -v git >/dev/null 2>&1 ;;
    chromium) [ -x "${RALPH_CHROMIUM:-/usr/bin/chromium}" ] ;;
    bubblewrap) command -v bwrap >/dev/null 2>&1 ;;
    libkrb5-dev) [ -f /usr/include/gssapi/gssapi.h ] ;;
    *) dpkg -s "$1" >/dev/null 2>&1 ;;
  esac
}

# ensure_system_packages PACKAGE...
ensure_system_packages() {
  local wanted=("$@")
  local missing=() pkg
  for pkg in "${wanted[@]}"; do
    system_package_present "$pkg" || missing+=("$pkg")
  done
  if [ "${#missing[@]}" -eq 0 ]; then
    echo "[system] ${wanted[*]} present"
    return 0
  fi
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      sudo="sudo -n"
    else
      sudo="none"
    fi
  fi
  if ! command -v apt-get >/dev/null 2>&1 || [ "$sudo" = "none" ]; then
    echo "[system] missing: ${missing[*]} (needed by the test tiers)." >&2
    if command -v apt-get >/dev/null 2>&1; then
      echo "[system] Install them with this one command, then run npm test again:" >&2
      echo "  sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
    else
      echo "[system] This is not a Debian/Ubuntu system: install the equivalents of ${missing[*]} with your package manager, then run npm test again." >&2
    fi
    return 1
  fi
  echo "[system] apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # the package lists may be stale or absent (fresh containers): update once, then install
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null >/dev/null 2>&1 || {
    $sudo apt-get update -q </dev/null >/dev/null
    $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
  }
  for pkg in "${missing[@]}"; do
    system_package_present "$pkg" || { echo "[system] ERROR: $pkg is still missing after apt-get install" >&2; return 1; }
  done
}

# Executed (not sourced): do it now.
#   system-deps.sh                   the test tiers' packages
#   system-deps.sh --build-headers   and the headers for installing code-server
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  if [ "${1:-}" = "--build-headers" ]; then
    ensure_system_packages "${RALPH_SYSTEM_PACKAGES[@]}" "${RALPH_BUILD_PACKAGES[@]}"
  else
    ensure_system_packages "${RALPH_SYSTEM_PACKAGES[@]}"
  fi
fi
