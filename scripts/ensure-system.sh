#!/usr/bin/env bash
# Installs the Debian packages the tests and the launcher need, when any is missing.
# Needs root (or sudo) and Debian's package mirror; does nothing when all are present.
set -euo pipefail

# bubblewrap: the sandbox runs execute in (a run without it says it was not isolated).
packages=(git chromium ripgrep libkrb5-dev build-essential python3 pkg-config bubblewrap)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "agent-desk: installing Debian packages: ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
