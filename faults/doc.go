// Package faults is the fault-injection suite of exactly-once effects: it
// has no API, only tests. It scripts faults at each point of a call's life
// (before its record is written, after it, inside the tool before and
// after its effect, after the tool returns and before its outcome is
// recorded, while the outcome is written), injects them as a worker
// process killed with SIGKILL, an MCP client's dropped HTTP connection
// and a PostgreSQL store's outage (a loopback proxy the test cuts; that
// path needs TOOL_TEST_POSTGRES), retries each
// call under the same key, and counts the real effects in a ledger that
// every process writes. The same run counts the duplicates of a baseline
// with none of this: a plain MCP handler and a naive retry loop.
//
// The full matrix runs with `go test -race ./faults/...`; under -short a
// smoke subset runs. `go test ./faults -update` rewrites the table of
// docs/exactly-once.md from a full run, and
// a full run fails when the committed table differs from its own.
package faults
