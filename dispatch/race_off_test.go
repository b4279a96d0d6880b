//go:build !race

package dispatch_test

// raceEnabled reports whether the race detector is on: it makes code
// several times slower and makes sync.Pool drop a share of what it is
// given, so allocation counts grow with it.
const raceEnabled = false
