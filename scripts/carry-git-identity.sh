#!/usr/bin/env bash
# Gives a workbench's own home folder (scripts/launch.sh's) the person's git identity: user.name and
# user.email of their git configuration, written into HOME_FOLDER/.gitconfig, so what the desk lands
# there is committed as them (a repository's own identity still comes first, as in git). Nothing is
# written for a key the person has not set: the editor asks for it once, when a landing needs it.
#
#   scripts/carry-git-identity.sh HOME_FOLDER
set -euo pipefail
target="${1:?usage: carry-git-identity.sh HOME_FOLDER}"
command -v git >/dev/null || exit 0
mkdir -p "$target"
for key in user.name user.email; do
  value="$(git config --global --get "$key" 2>/dev/null || true)"
  if [ -n "$value" ]; then
    git config --file "$target/.gitconfig" "$key" "$value"
  fi
done
