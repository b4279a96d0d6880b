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
#   ROUNDS     when set, interleave instead: build the test binary once and
#              run every matching benchmark once per round, ROUNDS rounds,
#              so that a machine whose load drifts during the run slows all
#              benchmarks alike (COUNT is then ignored)
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

if [[ -z "${ROUNDS:-}" ]]; then
	echo "go test ${args[*]} ./...  > $OUT" >&2
	go test "${args[@]}" ./... | tee "$OUT"
else
	bin="$(dirname "$OUT")/benchmarks.test"
	go test -c -o "$bin" .
	mapfile -t names < <("$bin" -test.list "$BENCH" | grep '^Benchmark')
	flags=(-test.run '^$' -test.count 1 -test.benchmem)
	if [[ -n "${BENCHTIME:-}" ]]; then flags+=(-test.benchtime "$BENCHTIME"); fi
	if [[ -n "${CPU:-}" ]]; then flags+=(-test.cpu "$CPU"); fi
	echo "$ROUNDS rounds of ${names[*]} > $OUT" >&2
	: >"$OUT"
	for ((round = 1; round <= ROUNDS; round++)); do
		for name in "${names[@]}"; do
			"$bin" "${flags[@]}" -test.bench "^${name}\$" | grep -E '^(Benchmark|goos|goarch|pkg|cpu)' | tee -a "$OUT"
		done
	done
fi

echo
echo "== benchstat =="
go run "$BENCHSTAT" "$OUT"

echo
echo "== medians and ratios to Floor at the same size =="
go run ./cmd/ratios "$OUT"

echo
echo "raw results: $OUT" >&2
