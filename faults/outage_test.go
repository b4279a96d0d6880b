package faults

import (
	"bufio"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver: the store behind the proxy
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	toolmcp "github.com/agentcontract/tool/adapters/mcp"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/stores/sqlstore"
)

// The store-outage path needs a PostgreSQL server: TOOL_TEST_POSTGRES
// names it (a URL). Unset or unreachable, the path skips, unless
// TOOL_CI_POSTGRES=1 says one is there: then it fails.
const (
	postgresEnv   = "TOOL_TEST_POSTGRES"
	postgresCIEnv = "TOOL_CI_POSTGRES"
	// outagePrefix is the table prefix of the path's store: its tables
	// are its own on a shared server, and they outlive a run (every case
	// has a key of its own).
	outagePrefix = "faults_outage_"
)

// postgresTarget returns the DSN of TOOL_TEST_POSTGRES and its host:port,
// or skips t (fails it under TOOL_CI_POSTGRES=1) when there is no server.
func postgresTarget(t *testing.T) (*url.URL, string) {
	t.Helper()
	unavailable := func(why string) {
		msg := "store-outage faults: " + why + "; set " + postgresEnv + " to a PostgreSQL URL (postgres://user@127.0.0.1:port/db?sslmode=disable)"
		if os.Getenv(postgresCIEnv) == "1" {
			t.Fatal(msg + " (failing instead of skipping: " + postgresCIEnv + "=1)")
		}
		t.Skip(msg)
	}
	dsn := os.Getenv(postgresEnv)
	if dsn == "" {
		unavailable(postgresEnv + " is not set")
	}
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" || !strings.HasPrefix(u.Scheme, "postgres") {
		unavailable(postgresEnv + " is not a postgres:// URL")
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "5432")
	}
	c, err := net.DialTimeout("tcp", host, 5*time.Second)
	if err != nil {
		unavailable("no server at " + host + ": " + err.Error())
	}
	c.Close()
	return u, host
}

// proxy is a loopback TCP proxy in front of the database that the test
// cuts: every connection through it is closed and new ones are refused
// until it is restored. Armed to lose a commit, it lets the next write
// through, and cuts everything when the database says it committed,
// before the client hears so.
type proxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cuts  int
	down  bool
	lose  bool
	conns []net.Conn
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &proxy{ln: ln, target: target}
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.cut()
	})
	return p
}

// dsn is u through the proxy, without TLS (the proxy reads the
// database's replies).
func (p *proxy) dsn(u *url.URL) string {
	v := *u
	v.Host = p.ln.Addr().String()
	q := v.Query()
	q.Set("sslmode", "disable")
	v.RawQuery = q.Encode()
	return v.String()
}

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.pipe(c)
	}
}

// pipe joins a client's connection to a new one to the database.
func (p *proxy) pipe(c net.Conn) {
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.down {
		p.mu.Unlock()
		c.Close()
		s.Close()
		return
	}
	p.conns = append(p.conns, c, s)
	p.mu.Unlock()
	go func() {
		_, _ = io.Copy(s, c)
		s.Close()
		c.Close()
	}()
	p.replies(c, s)
	s.Close()
	c.Close()
}

// replies copies the database's messages to the client, one by one (a
// type byte and a length that counts itself), watching for a committed
// write when armed to lose one: a command tag of a write, then
// ReadyForQuery outside a transaction.
func (p *proxy) replies(c, s net.Conn) {
	r, w := bufio.NewReader(s), bufio.NewWriter(c)
	wrote := false
	head := make([]byte, 5)
	for {
		if _, err := io.ReadFull(r, head); err != nil {
			return
		}
		n := binary.BigEndian.Uint32(head[1:])
		if n < 4 {
			return
		}
		body := make([]byte, n-4)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		switch head[0] {
		case 'C':
			for _, tag := range []string{"INSERT", "UPDATE", "DELETE", "COMMIT"} {
				wrote = wrote || strings.HasPrefix(string(body), tag)
			}
		case 'Z':
			if wrote && len(body) == 1 && body[0] == 'I' && p.takeLose() {
				p.cut()
				return
			}
			wrote = false
		}
		if _, err := w.Write(head); err != nil {
			return
		}
		if _, err := w.Write(body); err != nil {
			return
		}
		if r.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return
			}
		}
	}
}

func (p *proxy) takeLose() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	was := p.lose
	p.lose = false
	return was
}

// cut closes every connection through the proxy and refuses new ones.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	p.cuts++
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// wasCut says whether the proxy was cut.
func (p *proxy) wasCut() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cuts > 0
}

// loseNextCommit arms the proxy to cut when the next write commits.
func (p *proxy) loseNextCommit() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lose = true
}

// restore lets new connections through again.
func (p *proxy) restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down, p.lose = false, false
}

// outageInjector cuts the proxy at p; at "while the outcome is written"
// it arms the proxy just before the outcome's write, so that the write
// commits and its reply is lost.
func outageInjector(p point, px *proxy) *injector {
	if p == whileOutcome {
		return newInjector(afterToolBeforeOutcome, func(context.Context) { px.loseNextCommit() })
	}
	return newInjector(p, func(context.Context) { px.cut() })
}

// pgStore returns a migrated Store on a new *sql.DB on dsn; idle says how
// many connections its pool keeps (0: a new connection per statement, so
// that none the proxy cut is used again).
func pgStore(t testing.TB, dsn string, idle int) *sqlstore.Store {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	db.SetMaxIdleConns(idle)
	t.Cleanup(func() { db.Close() })
	s, err := sqlstore.New(db, sqlstore.Config{Dialect: sqlstore.PostgreSQL, TablePrefix: outagePrefix})
	require.NoError(t, err)
	require.NoError(t, s.Migrate(context.Background()))
	return s
}

// outageCase runs the refund call of kind k on a PostgreSQL store behind
// the proxy, cut at p, then restores the proxy and retries the call
// under the same key on a new pool through it, later.
func outageCase(t *testing.T, p point, k kind) result {
	u, target := postgresTarget(t)
	px := newProxy(t, target)
	l := &ledger{path: t.TempDir() + "/ledger"}
	key := uniqueKey(t)
	first := pgStore(t, px.dsn(u), 2)
	dispatcher(t, k, l, outageInjector(p, px), first, 0, nil).Run(t.Context(), refundCall(key))
	require.True(t, px.wasCut(), "the store was cut at the fault point")

	px.restore()
	store := pgStore(t, px.dsn(u), 2)
	retry := dispatcher(t, k, l, nil, store, later, nil).Run(t.Context(), refundCall(key))
	r := result{path: "in process: store outage (proxy cut)", at: p, kind: k, effects: l.count(string(key))}
	return check(t, r, retry, recordState(t, store, "", key))
}

// mcpOutageCase serves the refund tool of kind k through the bridge over
// streamable HTTP, its dispatcher on a PostgreSQL store behind the proxy,
// cut at p; the client's call ends with whatever the bridge answers, the
// proxy is restored and the client retries with the same key in _meta,
// its clock past the first attempt's lease.
func mcpOutageCase(t *testing.T, p point, k kind) result {
	u, target := postgresTarget(t)
	px := newProxy(t, target)
	l := &ledger{path: t.TempDir() + "/ledger"}
	store := pgStore(t, px.dsn(u), 0)
	var skew atomic.Int64
	// The tool and the store share one injector: the fault fires once.
	in := outageInjector(p, px)
	b, err := tool.Bind(&refundTool{kind: k, l: l, in: in})
	require.NoError(t, err)
	reg := &tool.Registry{}
	require.NoError(t, reg.Register(b))
	config := toolmcp.Config{Dispatch: dispatch.Config{
		Registry: reg, Store: &hookStore{CallStore: store, in: in},
		SealKeys: []dispatch.SealKey{{ID: "k1", Secret: secret}}, Lease: time.Minute,
		Clock: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) },
	}}
	if k == reconciled {
		config.Dispatch.Reconcilers = map[string]dispatch.Reconciler{"refund": l.reconciler}
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "faults", Version: "v0"}, nil)
	require.NoError(t, toolmcp.AddTools(server, config))
	srv := httptest.NewServer(toolmcp.HTTPHandler(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)))
	t.Cleanup(srv.Close)

	// The whole unique key, hashed: the store outlives the run.
	key := fmt.Sprintf("k-%x", sha256.Sum256([]byte(uniqueKey(t))))
	// The first attempt: the bridge answers once the dispatcher has given
	// up on the store; what it answers is not the point.
	_, _ = callMCP(t.Context(), srv.URL, http.DefaultClient, key)
	require.True(t, px.wasCut(), "the store was cut at the fault point")

	px.restore()
	skew.Store(int64(later))
	res, err := callMCP(t.Context(), srv.URL, http.DefaultClient, key)
	require.NoError(t, err)
	retry := dispatch.Outcome{Kind: dispatch.KindCompleted}
	if res.IsError {
		retry.Kind = dispatch.Kind(fmt.Sprint(res.Meta[toolmcp.OutcomeMetaKey]))
	}
	mk := toolmcp.IdempotencyKeyFor("", key)
	direct := pgStore(t, u.String(), 2)
	r := result{path: "MCP over HTTP: store outage (proxy cut)", at: p, kind: k, effects: l.count(string(mk))}
	return check(t, r, retry, recordState(t, direct, "", mk))
}

func TestStoreOutage(t *testing.T)    { runPath(t, outageCase) }
func TestMCPStoreOutage(t *testing.T) { runPath(t, mcpOutageCase) }
