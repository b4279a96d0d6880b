//go:build !race

package tool_test

// raceEnabled reports whether the race detector is on: it makes code
// several times slower, so wall-clock ceilings grow with it.
const raceEnabled = false
