//go:build !unix

package adaptertest

import "time"

// cpuTime cannot be read on this platform.
func cpuTime() (time.Duration, bool) { return 0, false }
