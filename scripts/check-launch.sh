#!/usr/bin/env bash
# Proves the README's first command on this checkout: starts `scripts/launch.sh --detach` on a scratch
# git repository (its own port and state folder), waits until the printed URL serves the workbench
# page, then stops the code-server it started. .ci/run calls it after the tests.
set -euo pipefail
project="$(cd "$(dirname "$0")/.." && pwd)"
scratch="$(mktemp -d)"
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill -- "-$pid" 2>/dev/null || true; fi
  rm -rf "$scratch"
}
trap cleanup EXIT

folder="$scratch/repo"
mkdir -p "$folder"
git -C "$folder" init -q
git -C "$folder" -c user.name=ci -c user.email=ci@example.invalid commit -q --allow-empty -m 'first commit'
port="$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')"

out="$scratch/launch.out"
if ! XDG_STATE_HOME="$scratch/state" PORT="$port" "$project/scripts/launch.sh" --detach "$folder" >"$out" 2>&1 </dev/null; then
  cat "$out" >&2
  echo "check-launch: scripts/launch.sh --detach failed" >&2
  exit 1
fi
pid="$(sed -n 's/^Stop it with: kill -- -\([0-9][0-9]*\)$/\1/p' "$out")"
url="$(sed -n 's/^  \(http:[^ ]*\)$/\1/p' "$out")"
[ -n "$pid" ] && [ -n "$url" ] || { cat "$out" >&2; echo "check-launch: no URL or stop command printed" >&2; exit 1; }

# The page at the URL is VS Code's workbench (its HTML loads workbench.js), served for the folder.
page="$(node -e 'fetch(process.argv[1]).then(async (r) => { if (!r.ok) { console.error(`HTTP ${r.status}`); process.exit(1); } process.stdout.write(await r.text()); }, (e) => { console.error(String(e)); process.exit(1); })' "$url")"
grep -q 'workbench' <<<"$page" || { echo "check-launch: $url did not serve the workbench" >&2; exit 1; }
echo "launch command: $url served the workbench; stopped"
