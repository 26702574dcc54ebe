#!/usr/bin/env bash
# Installs code-server (VS Code in a browser) from npm into a cache folder shared by every clone
# of this project on this machine, and prints the path of its entry script.
# 4.100.3 (VS Code 1.100.3) is the newest code-server whose engines.node accepts Node 20.
set -euo pipefail

version="${CODE_SERVER_VERSION:-4.100.3}"
cache="${AGENT_DESK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-desk}"
prefix="$cache/code-server-$version"
entry="$prefix/node_modules/code-server/out/node/entry.js"

if [ -f "$entry" ] && [ -f "$prefix/.installed" ]; then
  echo "$entry"
  exit 0
fi

"$(dirname "$0")/ensure-system.sh" >&2
rm -rf "$prefix"
mkdir -p "$prefix"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# @vscode/ripgrep's postinstall downloads ripgrep from GitHub, which is unreachable here; it looks in
# this cache first, so hand it Debian's rg.
mkdir -p "$work/tmp/vscode-ripgrep-cache-1.15.11" "$work/rg"
cp "$(command -v rg)" "$work/rg/rg"
tar -czf "$work/tmp/vscode-ripgrep-cache-1.15.11/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C "$work/rg" rg

echo "agent-desk: installing code-server@$version (about 80 s)" >&2
(
  cd "$prefix"
  echo '{"name":"agent-desk-code-server","private":true}' > package.json
  TMPDIR="$work/tmp" HOME="$work" \
  npm_config_unsafe_perm=true npm_config_yes=true npm_config_nodedir=/usr \
  npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false \
    npm install --no-save --loglevel=error "code-server@$version" >&2
)
[ -f "$entry" ] || { echo "agent-desk: code-server install did not produce $entry" >&2; exit 1; }
touch "$prefix/.installed"
echo "$entry"
