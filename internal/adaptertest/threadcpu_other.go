//go:build !linux

package adaptertest

import "time"

// threadCPU cannot be read on this platform.
func threadCPU() (time.Duration, bool) { return 0, false }
