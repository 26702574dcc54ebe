#!/usr/bin/env bash
# Launches Agent Desk in a real VS Code workbench (code-server, in your browser) on a folder,
# installing whatever it needs first, and prints the URL.
#
#   scripts/launch.sh [FOLDER]        FOLDER defaults to the current directory
#   PORT=8123 scripts/launch.sh ...   another port (default 8080)
#   scripts/launch.sh --detach ...    start in the background and return; stop with the printed command
#
# code-server's settings, extensions and the desk's library persist between launches in
# ${XDG_STATE_HOME:-~/.local/state}/agent-desk/workbench.
set -euo pipefail
detach=0
if [ "${1:-}" = "--detach" ]; then detach=1; shift; fi
folder="$(realpath "${1:-$PWD}")"
[ -d "$folder" ] || { echo "agent-desk: $folder is not a folder" >&2; exit 64; }
project="$(cd "$(dirname "$0")/.." && pwd)"
port="${PORT:-8080}"

bash "$project/scripts/ensure-system.sh"
lock_hash="$(sha256sum "$project/package-lock.json" | cut -d' ' -f1)"
if [ "$(cat "$project/node_modules/.agent-desk-lock" 2>/dev/null)" != "$lock_hash" ]; then
  (cd "$project" && npm ci --no-audit --no-fund --loglevel=error && echo "$lock_hash" > node_modules/.agent-desk-lock)
fi
entry="$(bash "$project/scripts/ensure-code-server.sh")"
(cd "$project" && npm run --silent package >/dev/null)

state="${XDG_STATE_HOME:-$HOME/.local/state}/agent-desk/workbench"
mkdir -p "$state/user-data/User" "$state/extensions" "$state/home" "$state/tmp"
[ -f "$state/config.yaml" ] || printf 'auth: none\ncert: false\n' > "$state/config.yaml"
[ -f "$state/user-data/User/settings.json" ] || printf '{\n  "workbench.startupEditor": "none",\n  "telemetry.telemetryLevel": "off"\n}\n' > "$state/user-data/User/settings.json"

bash "$project/scripts/carry-git-identity.sh" "$state/home"
export HOME="$state/home" XDG_CONFIG_HOME="$state/home/.config" XDG_DATA_HOME="$state/home/.local/share" TMPDIR="$state/tmp"
common=(--user-data-dir "$state/user-data" --extensions-dir "$state/extensions")
node "$entry" "${common[@]}" --force --install-extension "$project/out/agent-desk.vsix" >/dev/null

args=("$entry" --config "$state/config.yaml" "${common[@]}" --auth none --bind-addr "127.0.0.1:$port"
      --disable-telemetry --disable-update-check --disable-getting-started-override "$folder")
url="http://127.0.0.1:$port/?folder=$(node -e 'process.stdout.write(encodeURIComponent(process.argv[1]))' "$folder")"

wait_ready() {
  for _ in $(seq 1 150); do
    if node -e 'fetch(process.argv[1]).then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))' "http://127.0.0.1:$port/healthz"; then return 0; fi
    sleep 0.2
  done
  echo "agent-desk: code-server did not answer on port $port (is the port taken? try PORT=...)" >&2
  return 1
}

if [ "$detach" = 1 ]; then
  setsid node "${args[@]}" >"$state/code-server.log" 2>&1 < /dev/null &
  pid=$!
  echo "$pid" > "$state/code-server.pid"
  wait_ready || { tail -20 "$state/code-server.log" >&2; exit 1; }
  echo "Agent Desk is running in VS Code (code-server) on $folder:"
  echo "  $url"
  echo "Stop it with: kill -- -$pid"
else
  node "${args[@]}" >"$state/code-server.log" 2>&1 &
  pid=$!
  trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null' INT TERM EXIT
  wait_ready || { tail -20 "$state/code-server.log" >&2; exit 1; }
  echo "Agent Desk is running in VS Code (code-server) on $folder:"
  echo "  $url"
  echo "Press Ctrl+C to stop. (log: $state/code-server.log)"
  wait "$pid"
fi
