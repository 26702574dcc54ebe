#!/usr/bin/env bash
# Installs what the tests need (Debian packages, npm packages, code-server) and runs every test:
# the type check and lint (ESLint, prettier), then unit, protocol and end-to-end tests (the packaged extension in code-server
# driven by Chromium, and the extension-host suite inside code-server) in one node:test run.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)

bash scripts/ensure-system.sh
# npm ci only when package-lock.json changed since the last install here.
lock_hash="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [ "$(cat node_modules/.agent-desk-lock 2>/dev/null)" != "$lock_hash" ]; then
  npm ci --no-audit --no-fund --loglevel=error
  echo "$lock_hash" > node_modules/.agent-desk-lock
fi
bash scripts/ensure-code-server.sh >/dev/null

echo "== type check and lint"
npx tsc -b
npx eslint --max-warnings 0 .
npx prettier --check . >/dev/null || { npx prettier --list-different .; echo "not formatted: run npm run format"; exit 1; }
echo "== build (tests, then the packaged extension)"
node scripts/build.mjs
npm run --silent package >/dev/null

echo "== tests"
mkdir -p test-output
# Node 20's test runner takes no globs: name the files. Unit, protocol and command-line files run two at
# a time (each is its own process; most wait on git, a server or a child), the end-to-end files one at a
# time (each drives a code-server and a browser). No test may hang CI: one that takes over ten minutes
# fails (the slowest take about two), and a file whose tests are done ends even if something it started
# still holds its event loop.
mapfile -t core < <(find out/test/unit out/test/protocol out/test/cli -name '*.test.js' | sort)
mapfile -t e2e < <(find out/test/e2e -name '*.test.js' | sort)
failed=0
node --test --test-concurrency=2 --test-timeout=600000 --test-force-exit --test-reporter=spec "${core[@]}" || failed=1
node --test --test-concurrency=1 --test-timeout=600000 --test-force-exit --test-reporter=spec "${e2e[@]}" || failed=1
if [ "$failed" -ne 0 ]; then
  echo "tests failed after $(( $(date +%s) - started )) s (the failing tests are listed at the end of each part above)"
  exit 1
fi

echo "all tests passed in $(( $(date +%s) - started )) s (screenshots in test-output/e2e/)"
