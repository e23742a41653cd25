#!/usr/bin/env bash
# The whole test suite, from a fresh Debian machine: installs what is missing (idempotent), builds,
# then runs every test with node's own runner. Services that later parts of the suite need (Docker
# Engine, PostgreSQL) are installed and started by scripts/services.sh when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x node_modules/.bin/tsc ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "== installing dependencies (npm ci)"
  npm ci --no-audit --no-fund
else
  echo "== dependencies up to date"
  npm run --silent build
fi

bash scripts/services.sh

# The MCP conformance suite needs Node 22; npx provides it without touching the system Node.
# Fetch it once here, so that the tests do not time out on the first download.
echo "== preparing the MCP conformance suite (Node 22 via npx)"
npx -y -p node@22 -p @modelcontextprotocol/conformance@0.1.16 conformance --version >/dev/null

shopt -s globstar nullglob
files=(test/**/*.test.ts)
echo "== running ${#files[@]} test files"
exec node --import tsx --test --test-concurrency=2 --test-timeout=600000 "${files[@]}"
