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

# The type check, ESLint, prettier and the build (tests, then the packaged extension) run side by side,
# each with its own log: they read the same sources, and only the type check (out/types/) and the
# build (dist/, the rest of out/) write.
echo "== type check, lint and build"
mkdir -p test-output
checks="test-output/checks"
rm -rf "$checks" && mkdir -p "$checks"
check() {
  local name="$1" status=0
  shift
  "$@" > "$checks/$name.log" 2>&1 || status=$?
  echo "$status" > "$checks/$name.status"
}
check "type check" npx tsc -b &
check eslint npx eslint --max-warnings 0 . &
check prettier npx prettier --list-different . &
check build bash -c 'node scripts/build.mjs && npm run --silent package >/dev/null' &
wait
failed=0
for name in "type check" eslint prettier build; do
  if [ "$(cat "$checks/$name.status")" -ne 0 ]; then
    echo "== $name failed:"
    cat "$checks/$name.log"
    [ "$name" = prettier ] && echo "not formatted: run npm run format"
    failed=1
  fi
done
[ "$failed" -eq 0 ] || exit 1

echo "== tests"
# Node 20's test runner takes no globs: name the files. The unit, protocol and command-line files run
# two at a time (each its own process, busy with git, a server or a child); beside them the end-to-end
# files one at a time (each drives a code-server and a browser). When the first part ends, a second
# end-to-end worker takes files from the same queue, so that neither core idles while end-to-end files
# remain; the longest ones are queued first. Each part's report goes to its log, printed whole at the
# end. No test may hang CI: one that takes over ten minutes fails (the slowest take about two), and a
# file whose tests are done ends even if something it started still holds its event loop.
mapfile -t core < <(find out/test/unit out/test/protocol out/test/cli -name '*.test.js' | sort)
longest_first=(lineage runs realSizeRepo attachments runGate extensionHost endings deskTools hostileText launchCard)
e2e=()
for name in "${longest_first[@]}"; do
  [ -f "out/test/e2e/$name.test.js" ] && e2e+=("out/test/e2e/$name.test.js")
done
while IFS= read -r file; do
  [[ " ${e2e[*]} " == *" $file "* ]] || e2e+=("$file")
done < <(find out/test/e2e -name '*.test.js' | sort)
node_test() {
  node --test --test-timeout=600000 --test-force-exit --test-reporter=spec "$@"
}
run_part() {
  local name="$1" concurrency="$2"
  shift 2
  local began=$(date +%s) status=0
  node_test --test-concurrency="$concurrency" "$@" > "test-output/$name.log" 2>&1 || status=$?
  echo "$status $(( $(date +%s) - began ))" > "test-output/$name.status"
}
claims="test-output/e2e-claims"
rm -rf "$claims" && mkdir -p "$claims"
# An end-to-end worker: each file of the queue that no other worker took (mkdir is the atomic claim).
e2e_worker() {
  local name="$1" began=$(date +%s) status=0 file
  : > "test-output/$name.log"
  for file in "${e2e[@]}"; do
    mkdir "$claims/$(basename "$file")" 2>/dev/null || continue
    node_test --test-concurrency=1 "$file" >> "test-output/$name.log" 2>&1 || status=1
  done
  echo "$status $(( $(date +%s) - began ))" > "test-output/$name.status"
}
( run_part core 2 "${core[@]}"; e2e_worker e2e-2 ) &
core_pid=$!
e2e_worker e2e-1 &
e2e_pid=$!
wait "$core_pid" "$e2e_pid"
failed=0
for part in core e2e-1 e2e-2; do
  read -r status seconds < "test-output/$part.status"
  echo "== $part tests ($seconds s): test-output/$part.log"
  cat "test-output/$part.log"
  [ "$status" -eq 0 ] || failed=1
done
if [ "$failed" -ne 0 ]; then
  echo "tests failed after $(( $(date +%s) - started )) s (the failing tests are listed at the end of each part above)"
  exit 1
fi

echo "all tests passed in $(( $(date +%s) - started )) s (screenshots in test-output/e2e/)"
