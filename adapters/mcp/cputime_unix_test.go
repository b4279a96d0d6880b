//go:build unix

package toolmcp_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user and system) this process has used so far:
// on a machine shared with other work, it measures what a benchmark did
// more steadily than the wall clock.
func cpuTime() (time.Duration, bool) {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0, false
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano()), true
}
