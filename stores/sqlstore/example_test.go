package sqlstore_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	_ "modernc.org/sqlite" // the program picks the driver; the store imports none

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/stores/sqlstore"
)

// approval is a refund tool that asks a person before it acts.
type approval struct{}

func (approval) Definition() tool.Definition {
	return tool.Definition{Name: "refund", InputSchema: json.RawMessage(`{"type":"object"}`), Effect: tool.EffectIdempotent}
}

func (approval) Call(_ context.Context, inv tool.Invocation) (tool.Result, error) {
	if c, resumed := inv.Continuation(); resumed {
		return tool.Result{Output: tool.NewTextOutput("refunded: " + string(c.Response()))}, nil
	}
	schema, err := tool.ParseSchema([]byte(`{"type":"boolean"}`))
	if err != nil {
		return tool.Result{}, err
	}
	ir, err := tool.NewInputRequest(tool.InputRequestConfig{Prompt: json.RawMessage(`"Refund?"`), ResponseSchema: schema})
	return tool.Result{InputRequest: &ir}, err
}

// A suspended call is answered once, through a claim store on SQLite that
// every process of the runtime opens: the same answer again gets the
// recorded outcome, another answer is refused, and the audit lists who
// answered.
func Example() {
	dir, err := os.MkdirTemp("", "sqlstore-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "claims.db")+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
	if err != nil {
		panic(err)
	}
	defer db.Close()
	ctx := context.Background()

	store, err := sqlstore.New(db, sqlstore.Config{Dialect: sqlstore.SQLite})
	if err != nil {
		panic(err)
	}
	if err := store.Migrate(ctx); err != nil { // at every start; safe on every replica
		panic(err)
	}

	binding, err := tool.Bind(approval{})
	if err != nil {
		panic(err)
	}
	registry, err := tool.NewRegistry(binding)
	if err != nil {
		panic(err)
	}
	d, err := dispatch.New(dispatch.Config{
		Registry: registry,
		Store:    store,
		// In production: 32 bytes from crypto/rand, kept in a secret store.
		SealKeys: []dispatch.SealKey{{ID: "2026-12", Secret: []byte("0123456789abcdef0123456789abcdef")}},
	})
	if err != nil {
		panic(err)
	}

	o := d.Run(ctx, dispatch.Call{ID: "call_1", Request: tool.Request{Name: "refund", Arguments: `{"order":"A-1"}`}})
	fmt.Println(o.Kind)
	cp := *o.Checkpoint

	o, err = d.Resume(ctx, cp, dispatch.Answer{Response: json.RawMessage(`true`), Principal: "user-7"})
	fmt.Println(o.Kind, o.Text(), err)
	o, err = d.Resume(ctx, cp, dispatch.Answer{Response: json.RawMessage(`true`), Principal: "user-7"})
	fmt.Println(o.Kind, "replayed:", o.Replayed, err)
	_, err = d.Resume(ctx, cp, dispatch.Answer{Response: json.RawMessage(`false`), Principal: "user-8"})
	fmt.Println(errors.Is(err, dispatch.ErrAlreadyAnswered))

	claims, err := store.Claims(ctx, dispatch.ClaimQuery{})
	if err != nil {
		panic(err)
	}
	for _, c := range claims {
		if c.AnswerSHA256 == dispatch.RunSHA256 {
			// The record of the run that asked.
			fmt.Println("ran", c.Tool, c.CallID, c.Outcome.Kind)
			continue
		}
		fmt.Println("answered", c.Tool, c.CallID, c.Principal, c.Outcome.Kind)
	}
	// Output:
	// suspended
	// completed refunded: true <nil>
	// completed replayed: true <nil>
	// true
	// ran refund call_1 suspended
	// answered refund call_1 user-7 completed
}

// Migrations shows the SQL that Migrate runs, for review.
func ExampleMigrations() {
	for _, d := range []sqlstore.Dialect{sqlstore.PostgreSQL, sqlstore.SQLite} {
		fmt.Println(d, "schema version", len(sqlstore.Migrations(d)))
	}
	// Output:
	// PostgreSQL schema version 4
	// SQLite schema version 4
}
