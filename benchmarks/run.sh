#!/usr/bin/env bash
# Runs every benchmark of this module, then summarises the results with
# benchstat and with cmd/ratios (medians and ratios to BenchmarkFloor at the
# same payload size).
#
# Environment:
#   COUNT      runs of each benchmark (default 10)
#   BENCH      -bench regexp (default .)
#   BENCHTIME  -benchtime (default: go test's, 1s)
#   CPU        -cpu list, such as 1,2 (default: go test's, GOMAXPROCS)
#   OUT        file to write the raw results to (default: a new temp dir)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"

COUNT="${COUNT:-10}"
BENCH="${BENCH:-.}"
BENCHSTAT="golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da"

if [[ -z "${OUT:-}" ]]; then
	OUT="$(mktemp -d "${TMPDIR:-/tmp}/agentcontract-bench.XXXXXX")/bench.txt"
fi

args=(-run '^$' -bench "$BENCH" -count "$COUNT" -benchmem)
if [[ -n "${BENCHTIME:-}" ]]; then
	args+=(-benchtime "$BENCHTIME")
fi
if [[ -n "${CPU:-}" ]]; then
	args+=(-cpu "$CPU")
fi

echo "go test ${args[*]} ./...  > $OUT" >&2
go test "${args[@]}" ./... | tee "$OUT"

echo
echo "== benchstat =="
go run "$BENCHSTAT" "$OUT"

echo
echo "== medians and ratios to Floor at the same size =="
go run ./cmd/ratios "$OUT"

echo
echo "raw results: $OUT" >&2
