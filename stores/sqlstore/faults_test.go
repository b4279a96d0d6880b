package sqlstore_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/stores/sqlstore"
)

// step names a point of a claim's write (its insert, or the update of a
// step of its record: Advance, Finish) where a fault is injected.
type step string

const (
	// beforeStatement: the write is never sent.
	beforeStatement step = "before the statement"
	// duringStatement: the write ran and its reply is lost. On
	// PostgreSQL it ran inside its transaction, which then rolls back; on
	// SQLite, which commits each statement, it stands.
	duringStatement step = "during the statement"
	// commitFails: the COMMIT is never sent (PostgreSQL: the write runs
	// in a transaction of its own).
	commitFails step = "when the commit is sent"
	// afterCommit: the COMMIT ran and its reply is lost (PostgreSQL).
	afterCommit step = "after the commit, before the reply"
	// finishStatement: the UPDATE that records a claim's outcome (a step
	// of its record that sets one) is never sent.
	finishStatement step = "before the outcome's statement"
)

// fault is what the driver does at a step: fail with an error (a broken
// connection, a bad connection database/sql retries), or end the
// caller's context there, and fail as a driver does when its context
// ends.
type fault struct {
	name string
	err  error // nil: end the caller's context instead
}

var faults = []fault{
	{"connection reset", errors.New("read tcp 127.0.0.1:5432: connection reset by peer")},
	{"bad connection", driver.ErrBadConn},
	{"context ends", nil},
}

// injector arms one fault at one step of the next claim write, and
// counts it when it fires.
type injector struct {
	mu     sync.Mutex
	step   step
	fault  fault
	cancel context.CancelFunc // the caller's, for a fault that ends it
	armed  bool
	fired  int
	// onInsert, when set, is called as a claim insert is about to be
	// sent.
	onInsert func()
	// then, when set, is called once a fault has fired, before the
	// driver returns: another process's work at that moment.
	then func()
}

func (in *injector) arm(at step, f fault, cancel context.CancelFunc) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.step, in.fault, in.cancel, in.armed = at, f, cancel, true
}

// take fires the armed fault if it is armed at step at. ctx is the one
// the driver was given: a fault that ends the caller's context reports
// its error only if the driver's ctx ended with it, as a driver does.
func (in *injector) take(ctx context.Context, at step) error {
	in.mu.Lock()
	if !in.armed || in.step != at {
		in.mu.Unlock()
		return nil
	}
	in.armed = false
	in.fired++
	f, cancel, then := in.fault, in.cancel, in.then
	in.mu.Unlock()
	if then != nil {
		then()
	}
	if f.err != nil {
		return f.err
	}
	cancel()
	return ctx.Err()
}

func (in *injector) firedCount() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.fired
}

// faultyDB opens d through a driver that wraps d's and injects in's
// faults into claim writes.
func faultyDB(t testing.TB, d database, in *injector) *sql.DB {
	t.Helper()
	probe, err := sql.Open(d.driver, d.dsn)
	require.NoError(t, err)
	base := probe.Driver()
	require.NoError(t, probe.Close())
	db := sql.OpenDB(connector{base: base, dsn: d.dsn, in: in})
	t.Cleanup(func() { db.Close() })
	return db
}

type connector struct {
	base driver.Driver
	dsn  string
	in   *injector
}

func (c connector) Connect(context.Context) (driver.Conn, error) {
	conn, err := c.base.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	return &faultyConn{Conn: conn, in: c.in}, nil
}

func (c connector) Driver() driver.Driver { return c.base }

// faultyConn passes everything to the driver's connection, injecting
// faults around claim writes.
type faultyConn struct {
	driver.Conn
	in          *injector
	inTx        bool
	claimedInTx bool // a claim write ran in the transaction
}

func isClaimInsert(query string) bool {
	return strings.HasPrefix(query, "INSERT INTO") && strings.Contains(query, "claims (")
}

// isClaimStep reports whether query is the update of a step of a claim's
// record (Advance, Finish).
func isClaimStep(query string) bool {
	return strings.HasPrefix(query, "UPDATE") && strings.Contains(query, "claims SET outcome")
}

func (c *faultyConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	execer, ok := c.Conn.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	if isClaimStep(query) && len(args) > 0 && !isNull(args[0].Value) {
		if err := c.in.take(ctx, finishStatement); err != nil {
			return nil, err
		}
	}
	if !isClaimInsert(query) && !isClaimStep(query) {
		return execer.ExecContext(ctx, query, args)
	}
	if c.in.onInsert != nil && isClaimInsert(query) {
		c.in.onInsert()
	}
	if err := c.in.take(ctx, beforeStatement); err != nil {
		return nil, err
	}
	res, err := execer.ExecContext(ctx, query, args)
	if err != nil {
		return nil, err
	}
	if c.inTx {
		c.claimedInTx = true
	}
	if err := c.in.take(ctx, duringStatement); err != nil {
		return nil, err
	}
	return res, nil
}

// isNull reports whether a statement's argument is SQL NULL: nil, or a
// driver.Valuer of nil (a driver may take sql.NullString as it is).
func isNull(v any) bool {
	if valuer, ok := v.(driver.Valuer); ok {
		v, _ = valuer.Value()
	}
	return v == nil
}

func (c *faultyConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if q, ok := c.Conn.(driver.QueryerContext); ok {
		return q.QueryContext(ctx, query, args)
	}
	return nil, driver.ErrSkip
}

func (c *faultyConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if p, ok := c.Conn.(driver.ConnPrepareContext); ok {
		return p.PrepareContext(ctx, query)
	}
	return c.Conn.Prepare(query)
}

func (c *faultyConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	b, ok := c.Conn.(driver.ConnBeginTx)
	if !ok {
		return nil, errors.New("the wrapped driver has no BeginTx")
	}
	tx, err := b.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	c.inTx, c.claimedInTx = true, false
	return &faultyTx{Tx: tx, conn: c, ctx: ctx}, nil
}

func (c *faultyConn) CheckNamedValue(v *driver.NamedValue) error {
	if n, ok := c.Conn.(driver.NamedValueChecker); ok {
		return n.CheckNamedValue(v)
	}
	return driver.ErrSkip
}

func (c *faultyConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *faultyConn) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

func (c *faultyConn) Ping(ctx context.Context) error {
	if p, ok := c.Conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

type faultyTx struct {
	driver.Tx
	conn *faultyConn
	ctx  context.Context
}

func (tx *faultyTx) Commit() error {
	c := tx.conn
	defer func() { c.inTx, c.claimedInTx = false, false }()
	if !c.claimedInTx {
		return tx.Tx.Commit()
	}
	if err := c.in.take(tx.ctx, commitFails); err != nil {
		_ = tx.Tx.Rollback()
		return err
	}
	if err := tx.Tx.Commit(); err != nil {
		return err
	}
	return c.in.take(tx.ctx, afterCommit)
}

func (tx *faultyTx) Rollback() error {
	defer func() { tx.conn.inTx, tx.conn.claimedInTx = false, false }()
	return tx.Tx.Rollback()
}

// stepsOf lists the steps of a claim's write (insert or update) on a
// dialect.
func stepsOf(d sqlstore.Dialect) []step {
	if d == sqlstore.PostgreSQL {
		return []step{beforeStatement, duringStatement, commitFails, afterCommit}
	}
	return []step{beforeStatement, duringStatement}
}

// A claim whose write meets a fault at any step — a lost reply, a failed
// commit, a bad connection, the caller's context ending — returns what
// the database holds: an error only when nothing was recorded, a win only
// for the caller's own claim.
func TestClaimFaults(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			d := b.new(t)
			in := &injector{}
			s := faultyStore(t, d, in)
			n := 0
			for _, at := range stepsOf(d.dialect) {
				for _, f := range faults {
					t.Run(fmt.Sprintf("%s/%s", at, f.name), func(t *testing.T) {
						n++
						c := claim(n, 1)
						ctx, cancel := context.WithCancel(t.Context())
						defer cancel()
						fired := in.firedCount()
						in.arm(at, f, cancel)
						prior, err := s.Claim(ctx, c)
						require.Equal(t, fired+1, in.firedCount(), "the fault fired")
						got, gerr := s.Claimed(t.Context(), c.CheckpointID)
						if err != nil {
							require.ErrorIs(t, err, dispatch.ErrStore)
							require.ErrorIs(t, gerr, dispatch.ErrNotFound, "a claim that returned %v recorded nothing", err)
							return
						}
						require.Nil(t, prior)
						require.NoError(t, gerr, "a claim that won is recorded")
						require.Equal(t, c.Nonce, got.Nonce, "the claim recorded is the caller's")
					})
				}
			}
		})
	}
}

// stubborn is a refund that asks a person, and counts its approved runs.
type stubborn struct{ runs *atomic.Int32 }

func (stubborn) Definition() tool.Definition {
	return tool.Definition{Name: "refund", InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (s stubborn) Call(_ context.Context, inv tool.Invocation) (tool.Result, error) {
	if _, resumed := inv.Continuation(); resumed {
		s.runs.Add(1)
		return tool.Result{Output: tool.NewTextOutput("refunded")}, nil
	}
	schema, err := tool.ParseSchema([]byte(`{"type":"boolean"}`))
	if err != nil {
		return tool.Result{}, err
	}
	ir, err := tool.NewInputRequest(tool.InputRequestConfig{Prompt: json.RawMessage(`"Refund?"`), ResponseSchema: schema})
	return tool.Result{InputRequest: &ir}, err
}

// faultyStore returns a migrated Store on d through a driver that injects
// in's faults.
func faultyStore(t *testing.T, d database, in *injector) *sqlstore.Store {
	t.Helper()
	s, err := sqlstore.New(faultyDB(t, d, in), sqlstore.Config{Dialect: d.dialect})
	require.NoError(t, err)
	require.NoError(t, s.Migrate(t.Context()))
	return s
}

// refunds returns a Dispatcher on store whose registry holds a stubborn
// refund counting its runs in runs.
func refunds(t testing.TB, store dispatch.Store, runs *atomic.Int32) *dispatch.Dispatcher {
	t.Helper()
	binding, err := tool.Bind(stubborn{runs})
	require.NoError(t, err)
	registry, err := tool.NewRegistry(binding)
	require.NoError(t, err)
	d, err := dispatch.New(dispatch.Config{Registry: registry, Store: store, SealKeys: []dispatch.SealKey{{ID: "k", Secret: []byte("0123456789abcdef0123456789abcdef")}}})
	require.NoError(t, err)
	return d
}

// An approval whose request ends, or whose claim's reply is lost, at any
// step of the claim's write is never stranded: either the resume was
// refused and nothing was claimed (the same answer then runs the call),
// or the call ran once and its outcome was recorded; a resend gets it.
func TestResumeThroughFaults(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			d := b.new(t)
			in := &injector{}
			var runs atomic.Int32
			dispatcher := refunds(t, faultyStore(t, d, in), &runs)
			yes := dispatch.Answer{Response: json.RawMessage(`true`)}
			for _, at := range stepsOf(d.dialect) {
				for _, f := range faults {
					t.Run(fmt.Sprintf("%s/%s", at, f.name), func(t *testing.T) {
						runs.Store(0)
						o := dispatcher.Run(t.Context(), dispatch.Call{ID: "c", Request: tool.Request{Name: "refund", Arguments: `{}`}})
						require.Equal(t, dispatch.KindSuspended, o.Kind)
						cp := *o.Checkpoint
						ctx, cancel := context.WithCancel(t.Context())
						defer cancel()
						fired := in.firedCount()
						in.arm(at, f, cancel)
						_, err := dispatcher.Resume(ctx, cp, yes)
						require.Equal(t, fired+1, in.firedCount(), "the fault fired")
						if err != nil {
							require.ErrorIs(t, err, dispatch.ErrStore)
							require.Zero(t, runs.Load(), "a refused resume ran nothing")
						} else {
							require.Equal(t, int32(1), runs.Load())
						}
						// The person (or the client) sends the answer again.
						o, err = dispatcher.Resume(t.Context(), cp, yes)
						require.NoError(t, err, "the approval is never stranded")
						require.Equal(t, dispatch.KindCompleted, o.Kind)
						require.Equal(t, int32(1), runs.Load(), "the call ran once")
					})
				}
			}
		})
	}
}

// An outcome the database did not record is not a stranded call: the
// process that ran the call records it when the answer is sent again,
// and another process neither runs the call (its tool promises nothing)
// nor reports it completed.
func TestLostOutcomeThroughFaults(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			d := b.new(t)
			in := &injector{}
			var runs atomic.Int32
			ran := refunds(t, faultyStore(t, d, in), &runs)
			other := refunds(t, d.store(t, sqlstore.Config{}), &runs)
			yes := dispatch.Answer{Response: json.RawMessage(`true`)}

			o := ran.Run(t.Context(), dispatch.Call{ID: "c", Request: tool.Request{Name: "refund", Arguments: `{}`}})
			require.Equal(t, dispatch.KindSuspended, o.Kind)
			cp := *o.Checkpoint
			in.arm(finishStatement, faults[0], nil)
			o, err := ran.Resume(t.Context(), cp, yes)
			require.ErrorIs(t, err, dispatch.ErrStore)
			require.Equal(t, dispatch.KindCompleted, o.Kind, "the call ran")
			require.Equal(t, 1, in.firedCount())

			_, err = other.Resume(t.Context(), cp, yes)
			var answered *dispatch.AnsweredError
			require.ErrorAs(t, err, &answered)
			_, recorded := answered.Outcome()
			require.False(t, recorded, "another process reports no outcome: none is recorded")
			require.Equal(t, int32(1), runs.Load(), "another process does not run the call")

			o, err = ran.Resume(t.Context(), cp, yes)
			require.NoError(t, err)
			require.True(t, o.Replayed)
			o, err = other.Resume(t.Context(), cp, yes)
			require.NoError(t, err, "recorded late, seen by every process")
			require.Equal(t, dispatch.KindCompleted, o.Kind)
			require.Equal(t, int32(1), runs.Load())
		})
	}
}
