#!/usr/bin/env bash
# Builds this checkout's image into the realk8s kit's node, as ../shared/realk8s/image.sh does, for a
# Dockerfile whose final stage is FROM scratch. The kit's image.sh refuses it ("the Dockerfile's base is
# 'node:… scratch'; image.sh makes only node:<version>-bookworm-slim"): it takes every FROM that is not
# an earlier stage for a base to make. This runs a copy of the kit in a temporary folder with that one
# test also skipping `scratch`, and changes nothing else. Usage: scripts/real-image.sh [kit dir]
set -euo pipefail
checkout=$(cd "$(dirname "$0")/.." && pwd)
kit=$(cd "${1:-$checkout/../shared/realk8s}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$kit"/*.sh "$tmp"/
old='if (!(tolower(ref) in stage)) print ref'
new='if (!(tolower(ref) in stage) \&\& tolower(ref) != "scratch") print ref'
if grep -qF "$old" "$tmp/image.sh"; then
  sed -i "s/if (!(tolower(ref) in stage)) print ref/$new/" "$tmp/image.sh"
  grep -qF 'tolower(ref) != "scratch"' "$tmp/image.sh" || { echo "real-image: could not adapt image.sh" >&2; exit 1; }
fi
bash "$tmp/image.sh" "$checkout"
