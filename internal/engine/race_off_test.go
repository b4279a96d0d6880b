//go:build !race

package engine_test

// raceEnabled reports whether the race detector is on: it makes sync.Pool
// drop some of what it is given, so pooled code allocates now and then.
const raceEnabled = false
