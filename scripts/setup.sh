#!/usr/bin/env bash
# First command of the README: install dependencies, build the extension and the CLI,
# package the .vsix, and run the offline demo (the CLI on examples/greeter).
set -euo pipefail
cd "$(dirname "$0")/.."
npm ci --no-audit --no-fund
npm run package
npm run compile-tests
echo
echo "== Packaged ralph-loop.vsix; install it with: code --install-extension ralph-loop.vsix"
echo "== Running the demo"
bash scripts/demo.sh
