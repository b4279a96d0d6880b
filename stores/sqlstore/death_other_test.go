//go:build !unix

package sqlstore_test

import "testing"

// TestProcessDeath kills a helper process with SIGKILL, which this
// system does not have; see death_test.go.
func TestProcessDeath(t *testing.T) {
	t.Skip("the process death test kills a process with SIGKILL, which only unix systems have")
}
