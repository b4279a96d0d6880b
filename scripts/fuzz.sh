#!/usr/bin/env bash
# Runs every fuzz target of the module for a given duration each.
#   scripts/fuzz.sh [duration]     (default 2m; any value go test -fuzztime accepts)
# A crasher is written under the package's testdata/fuzz/<Target>/; commit it
# as a regression seed.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-2m}
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  targets=$(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u || true)
  for target in $targets; do
    echo "== $pkg $target ($duration)"
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$duration" "$pkg"
  done
done
