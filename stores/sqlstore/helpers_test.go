package sqlstore_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, for the PostgreSQL tests
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // the "sqlite" driver, for the SQLite tests

	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/stores/sqlstore"
)

// database is one empty database of a dialect that tests may open any
// number of *sql.DB handles on: a file for SQLite, a schema of its own
// for PostgreSQL.
type database struct {
	dialect sqlstore.Dialect
	dsn     string
	driver  string
}

// open returns a new *sql.DB on d, closed when t ends.
func (d database) open(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open(d.driver, d.dsn)
	require.NoError(t, err)
	// Keep the connections the racing tests open (database/sql keeps 2
	// idle by default, and opening one costs more than the test's query).
	db.SetMaxIdleConns(20)
	t.Cleanup(func() { db.Close() })
	return db
}

// store returns a migrated Store on a new *sql.DB on d.
func (d database) store(t testing.TB, config sqlstore.Config) *sqlstore.Store {
	t.Helper()
	config.Dialect = d.dialect
	s, err := sqlstore.New(d.open(t), config)
	require.NoError(t, err)
	require.NoError(t, s.Migrate(t.Context()))
	return s
}

// sqliteDSN opens path with a busy timeout, as the Dialect docs ask, and
// WAL, so that readers and a writer do not wait for each other.
func sqliteDSN(path string) string {
	return "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
}

// sqliteDB returns a new SQLite database file in t's temporary directory,
// already in WAL mode. The journal mode is kept in the file, so the
// connections the tests open later find it set: switching it takes a lock
// no other connection may hold, and several connections opening a fresh
// file at once, each switching, could fail with SQLITE_BUSY.
func sqliteDB(t testing.TB) database {
	t.Helper()
	dsn := sqliteDSN(filepath.Join(t.TempDir(), "store.db"))
	db, err := sql.Open("sqlite", dsn)
	require.NoError(t, err)
	defer db.Close()
	var mode string
	require.NoError(t, db.QueryRowContext(context.Background(), "PRAGMA journal_mode=WAL").Scan(&mode))
	require.Equal(t, "wal", mode)
	return database{dialect: sqlstore.SQLite, driver: "sqlite", dsn: dsn}
}

// The PostgreSQL tests need a server: TOOL_TEST_POSTGRES names it. When it
// is unset or unreachable they skip, saying how to start one, unless
// TOOL_CI_POSTGRES=1 says one is there: then they fail.
const (
	postgresEnv   = "TOOL_TEST_POSTGRES"
	postgresCIEnv = "TOOL_CI_POSTGRES"
	postgresStart = `d=$(mktemp -d) && chown postgres "$d" && ` +
		`runuser -u postgres -- /usr/lib/postgresql/15/bin/initdb -D "$d/data" -A trust -U postgres >/dev/null && ` +
		`runuser -u postgres -- /usr/lib/postgresql/15/bin/pg_ctl -D "$d/data" -o "-c listen_addresses=127.0.0.1 -p 55432 -k $d -c fsync=off" -l "$d/log" -w start && ` +
		`export TOOL_TEST_POSTGRES='postgres://postgres@127.0.0.1:55432/postgres?sslmode=disable'`
)

// postgresUnavailable skips t, or fails it under TOOL_CI_POSTGRES=1.
func postgresUnavailable(t testing.TB, why string) {
	t.Helper()
	msg := "PostgreSQL tests: " + why + ". Start a throw-away server (Debian's postgresql package, as root) with:\n" + postgresStart
	if os.Getenv(postgresCIEnv) == "1" {
		t.Fatal(msg + "\n(failing instead of skipping: " + postgresCIEnv + "=1)")
	}
	t.Skip(msg)
}

// postgresDB returns a new schema of the server TOOL_TEST_POSTGRES names,
// dropped when t ends; every connection of the database it returns has
// the schema as its search_path, so tests running at once never meet.
func postgresDB(t testing.TB) database {
	t.Helper()
	dsn := os.Getenv(postgresEnv)
	if dsn == "" {
		postgresUnavailable(t, postgresEnv+" is not set")
	}
	admin, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		admin.Close()
		postgresUnavailable(t, "no server at "+postgresEnv+": "+err.Error())
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	schema := "sqlstore_test_" + hex.EncodeToString(b)
	_, err = admin.ExecContext(ctx, "CREATE SCHEMA "+schema)
	require.NoError(t, err)
	t.Cleanup(func() {
		defer admin.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("dropping the test schema %s: %v", schema, err)
		}
	})
	return database{dialect: sqlstore.PostgreSQL, driver: "pgx", dsn: withSearchPath(t, dsn, schema)}
}

// withSearchPath adds search_path to a URL or keyword/value DSN.
func withSearchPath(t testing.TB, dsn, schema string) string {
	if !strings.Contains(dsn, "://") {
		return dsn + " search_path=" + schema
	}
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// backends are the databases the tests that run on both run on.
var backends = []struct {
	name string
	new  func(testing.TB) database
}{
	{"SQLite", sqliteDB},
	{"PostgreSQL", postgresDB},
}

// roundRobin is one dispatch.Store made of several Stores on one
// database, each on its own *sql.DB: every call goes to the next, as the
// calls of a runtime go to its replicas.
type roundRobin struct {
	stores []*sqlstore.Store
	n      atomic.Uint64
}

func (r *roundRobin) next() *sqlstore.Store {
	return r.stores[int(r.n.Add(1)%uint64(len(r.stores)))]
}

func (r *roundRobin) Claim(ctx context.Context, c dispatch.Claim) (*dispatch.Claim, error) {
	return r.next().Claim(ctx, c)
}

func (r *roundRobin) Finish(ctx context.Context, id string, o dispatch.SavedOutcome) error {
	return r.next().Finish(ctx, id, o)
}

func (r *roundRobin) Advance(ctx context.Context, id string, s dispatch.Step) (dispatch.Claim, error) {
	return r.next().Advance(ctx, id, s)
}

func (r *roundRobin) WaitTurn(ctx context.Context, id string, after int64) (dispatch.Turn, error) {
	return r.next().WaitTurn(ctx, id, after)
}

func (r *roundRobin) Stranded(ctx context.Context, q dispatch.StrandedQuery) ([]dispatch.Claim, error) {
	return r.next().Stranded(ctx, q)
}

func (r *roundRobin) Claimed(ctx context.Context, id string) (dispatch.Claim, error) {
	return r.next().Claimed(ctx, id)
}

func (r *roundRobin) Claims(ctx context.Context, q dispatch.ClaimQuery) ([]dispatch.Claim, error) {
	return r.next().Claims(ctx, q)
}

func (r *roundRobin) SaveTurn(ctx context.Context, t dispatch.Turn) error {
	return r.next().SaveTurn(ctx, t)
}

func (r *roundRobin) Turn(ctx context.Context, id string) (dispatch.Turn, error) {
	return r.next().Turn(ctx, id)
}

func (r *roundRobin) Pending(ctx context.Context, q dispatch.PendingQuery) ([]dispatch.Pending, error) {
	return r.next().Pending(ctx, q)
}

func (r *roundRobin) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	return r.next().DeleteExpired(ctx, now)
}

// replicas returns a roundRobin of n Stores on d.
func replicas(t testing.TB, d database, n int) *roundRobin {
	r := &roundRobin{}
	for range n {
		r.stores = append(r.stores, d.store(t, sqlstore.Config{}))
	}
	return r
}

// claim returns a valid claim of the n-th checkpoint with answer digest
// a, expiring in a day.
func claim(n, a int) dispatch.Claim {
	now := time.Now().UTC().Truncate(time.Second)
	return dispatch.Claim{
		CheckpointID: hexN(n, 32), Nonce: hexN(int(nonces.Add(1)), 32), Tool: "refund", CallID: "call_1", Principal: "user-7",
		AnswerSHA256: hexN(a, 64), ClaimedAt: now, ExpiresAt: now.Add(24 * time.Hour),
	}
}

// nonces numbers the claims of the tests, so that each has a nonce of its
// own.
var nonces atomic.Int64

func hexN(n, width int) string { return fmt.Sprintf("%0*x", width, n) }
