//go:build unix

package sqlstore_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/stores/sqlstore"
)

// The environment that makes this test binary the helper process of
// TestProcessDeath: what it opens, and what it claims.
const (
	helperEnv           = "SQLSTORE_TEST_HELPER"
	helperDriverEnv     = "SQLSTORE_TEST_HELPER_DRIVER"
	helperDSNEnv        = "SQLSTORE_TEST_HELPER_DSN"
	helperDialectEnv    = "SQLSTORE_TEST_HELPER_DIALECT"
	helperCheckpointEnv = "SQLSTORE_TEST_HELPER_CHECKPOINT"
	helperLeaseEnv      = "SQLSTORE_TEST_HELPER_LEASE"
)

// TestHelperProcess is not a test: run by TestProcessDeath as a process
// of its own, it opens the database, claims a checkpoint, starts its
// call (running, with a lease), says so on stdout, and blocks until it
// is killed (or its stdin closes). Run as a test, it does nothing.
func TestHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "claim-and-hold" {
		return
	}
	fail := func(what string, err error) {
		fmt.Fprintf(os.Stderr, "helper: %s: %v\n", what, err)
		os.Exit(2)
	}
	ctx := context.Background()
	db, err := sql.Open(os.Getenv(helperDriverEnv), os.Getenv(helperDSNEnv))
	if err != nil {
		fail("opening the database", err)
	}
	dialect, err := strconv.Atoi(os.Getenv(helperDialectEnv))
	if err != nil {
		fail("reading the dialect", err)
	}
	s, err := sqlstore.New(db, sqlstore.Config{Dialect: sqlstore.Dialect(dialect)})
	if err != nil {
		fail("making the store", err)
	}
	lease, err := time.Parse(time.RFC3339Nano, os.Getenv(helperLeaseEnv))
	if err != nil {
		fail("reading the lease", err)
	}
	c := claim(1, 1)
	c.CheckpointID = os.Getenv(helperCheckpointEnv)
	if _, err := s.Claim(ctx, c); err != nil {
		fail("claiming", err)
	}
	owner := fmt.Sprintf("helper-%d", os.Getpid())
	if _, err := s.Advance(ctx, c.CheckpointID, dispatch.Step{Version: 1, State: dispatch.StateRunning, Attempt: 1, LeaseOwner: owner, LeaseExpires: lease}); err != nil {
		fail("starting the call", err)
	}
	fmt.Println("running", owner)
	// The call runs until the process dies.
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	os.Exit(3)
}

// A process that claimed a checkpoint and started its call dies (SIGKILL:
// no deferred function, no rollback, no goodbye to the database). Its
// record stays running under the lease it held: not stranded while the
// lease lasts, stranded once it has ended, and then taken over by another
// process, which runs the call again and finishes it.
func TestProcessDeath(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			d := b.new(t)
			s := d.store(t, sqlstore.Config{})
			id := hexN(77, 32)
			lease := time.Now().UTC().Add(time.Minute).Truncate(time.Millisecond)

			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
			cmd.Env = append(os.Environ(),
				helperEnv+"=claim-and-hold", helperDriverEnv+"="+d.driver, helperDSNEnv+"="+d.dsn,
				helperDialectEnv+"="+strconv.Itoa(int(d.dialect)), helperCheckpointEnv+"="+id,
				helperLeaseEnv+"="+lease.Format(time.RFC3339Nano))
			stdin, err := cmd.StdinPipe()
			require.NoError(t, err)
			defer stdin.Close()
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			var stderr lockedBuffer
			cmd.Stderr = &stderr
			require.NoError(t, cmd.Start())
			killed := false
			defer func() {
				if !killed {
					_ = cmd.Process.Kill()
					_ = cmd.Wait()
				}
			}()
			var owner string
			_, err = fmt.Fscanf(bufio.NewReader(stdout), "running %s\n", &owner)
			require.NoError(t, err, "the helper process did not start its call: %s", stderr.String())

			// It holds the call: not stranded while its lease lasts.
			stranded, err := s.Stranded(ctx, dispatch.StrandedQuery{Now: lease.Add(-time.Second)})
			require.NoError(t, err)
			require.Empty(t, stranded, "a call held by a live lease")

			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
			err = cmd.Wait()
			killed = true
			require.Error(t, err)
			status, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
			require.True(t, ok && status.Signaled() && status.Signal() == syscall.SIGKILL, "the helper died of SIGKILL: %v", err)

			got, err := s.Claimed(ctx, id)
			require.NoError(t, err)
			require.Equal(t, dispatch.StateRunning, got.State)
			require.Equal(t, owner, got.LeaseOwner)
			require.True(t, lease.Equal(got.LeaseExpires))
			stranded, err = s.Stranded(ctx, dispatch.StrandedQuery{Now: lease})
			require.NoError(t, err)
			require.Empty(t, stranded, "a lease that ends at Now has not ended before it")
			stranded, err = s.Stranded(ctx, dispatch.StrandedQuery{Now: lease.Add(time.Nanosecond)})
			require.NoError(t, err)
			require.Len(t, stranded, 1, "the dead process's call, once its lease ended")
			require.Equal(t, encode(t, got), encode(t, stranded[0]))

			// Another process recovers it.
			again, err := s.Advance(ctx, id, dispatch.Step{Version: got.Version, State: dispatch.StateRunning, Attempt: 2, LeaseOwner: "recovery", LeaseExpires: lease.Add(time.Hour)})
			require.NoError(t, err)
			require.Equal(t, 2, again.Attempt)
			stranded, err = s.Stranded(ctx, dispatch.StrandedQuery{Now: lease.Add(time.Nanosecond)})
			require.NoError(t, err)
			require.Empty(t, stranded, "a call taken over")
		})
	}
}

// lockedBuffer is a buffer that the goroutine copying a process's output
// writes while the test may read it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
