package faults

import (
	"bufio"
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // the "sqlite" driver: the store the worker and the test share

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/stores/sqlstore"
)

// The worker's environment: the test binary re-executed runs one call
// and is killed at its fault point.
const (
	workerEnv    = "FAULTS_WORKER"
	workerDB     = "FAULTS_DB"
	workerLedger = "FAULTS_LEDGER"
	workerKey    = "FAULTS_KEY"
	workerKind   = "FAULTS_KIND"
	workerPoint  = "FAULTS_POINT"
)

// reached is the line a worker writes to its stdout at its fault point.
const reached = "fault point reached"

func sqliteStore(t testing.TB, path string) *sqlstore.Store {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	s, err := sqlstore.New(db, sqlstore.Config{Dialect: sqlstore.SQLite})
	require.NoError(t, err)
	require.NoError(t, s.Migrate(context.Background()))
	return s
}

// TestWorker is the worker process: it runs the refund call and, at its
// fault point, says so on stdout and waits to be killed.
func TestWorker(t *testing.T) {
	if os.Getenv(workerEnv) != "1" {
		t.Skip("the worker process of the process-kill faults")
	}
	k, _ := strconv.Atoi(os.Getenv(workerKind))
	p, _ := strconv.Atoi(os.Getenv(workerPoint))
	l := &ledger{path: os.Getenv(workerLedger)}
	in := newInjector(point(p), func(context.Context) {
		os.Stdout.WriteString(reached + "\n")
		select {}
	})
	d := dispatcher(t, kind(k), l, in, sqliteStore(t, os.Getenv(workerDB)), 0, nil)
	d.Run(context.Background(), refundCall(tool.IdempotencyKey(os.Getenv(workerKey))))
	t.Fatal("the worker returned past its fault point")
}

// killCase runs the refund call of kind k in a worker killed with SIGKILL
// at p, then retries it under the same key in this process, later.
func killCase(t *testing.T, p point, k kind) result {
	dir := t.TempDir()
	dbPath, l := filepath.Join(dir, "store.db"), &ledger{path: filepath.Join(dir, "ledger")}
	store := sqliteStore(t, dbPath)
	key := uniqueKey(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestWorker$", "-test.count=1")
	cmd.Env = append(os.Environ(), workerEnv+"=1", workerDB+"="+dbPath, workerLedger+"="+l.path,
		workerKey+"="+string(key), workerKind+"="+strconv.Itoa(int(k)), workerPoint+"="+strconv.Itoa(int(p)))
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := bufio.NewScanner(out)
	for lines.Scan() && lines.Text() != reached {
	}
	require.Equal(t, reached, lines.Text(), "the worker reached its fault point")
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()

	retry := dispatcher(t, k, l, nil, store, later, nil).Run(context.Background(), refundCall(key))
	r := result{path: "in process: worker killed (SIGKILL)", at: p, kind: k, effects: l.count(string(key))}
	return check(t, r, retry, recordState(t, store, "", key))
}

var _ = time.Second
