#!/usr/bin/env bash
# Digest of the result files that refactors must leave byte-identical: every quick
# reproduction's claims.json and tables/*.csv, and `roam sim --format json` of every shipped
# scenario (with its event count). Usage: scripts/results-digest.sh OUT.txt [ROAM_BINARY]
# Compare two runs with `diff`. Builds target/ci/roam unless a binary is given.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:?usage: scripts/results-digest.sh OUT.txt [ROAM_BINARY]}"
roam="${2:-}"
if [ -z "$roam" ]; then
  cargo build -q --profile ci -p roam
  roam=target/ci/roam
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
: > "$tmp/digest"
for paper in probing last-link atl rcp r2cp ptcp; do
  "$roam" reproduce "$paper" --quick --out "$tmp/$paper" >/dev/null 2>&1
  (cd "$tmp/$paper" && sha256sum claims.json tables/*.csv | sed "s|  |  $paper/|") >> "$tmp/digest"
done
find scenarios experiments -name '*.toml' | sort | while read -r s; do
  if "$roam" sim "$s" --format json --out "$tmp/sim" > "$tmp/one.json" 2>/dev/null; then
    echo "$(sha256sum < "$tmp/one.json" | cut -d' ' -f1)  sim:$s" >> "$tmp/digest"
  fi
done
cp "$tmp/digest" "$out"
wc -l < "$out"
