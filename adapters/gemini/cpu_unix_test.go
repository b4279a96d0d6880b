//go:build unix

package toolgemini_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has used: on a machine shared with
// other work it measures the cost of a benchmark better than the wall clock.
func cpuTime() time.Duration {
	var r syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &r); err != nil {
		return 0
	}
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}
