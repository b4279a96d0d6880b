package sqlstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/stores/sqlstore"
)

// transfer is a tool that moves {"amount"} from {"account"}: it tells
// started when it starts, when started is not nil, and waits for gate,
// when gate is not nil.
type transfer struct {
	started chan<- struct{}
	gate    <-chan struct{}
}

func (transfer) Definition() tool.Definition {
	return tool.Definition{Name: "transfer", Effect: tool.EffectIdempotent, InputSchema: json.RawMessage(
		`{"type":"object","properties":{"account":{"type":"string"},"amount":{"type":"number","minimum":0}},"required":["account","amount"],"additionalProperties":false}`)}
}

func (t transfer) Call(ctx context.Context, _ tool.Invocation) (tool.Result, error) {
	if t.started != nil {
		t.started <- struct{}{}
	}
	if t.gate != nil {
		select {
		case <-t.gate:
		case <-ctx.Done():
			return tool.Result{}, ctx.Err()
		}
	}
	return tool.Result{Output: tool.NewTextOutput("moved")}, nil
}

// perHour is the rule of the issue: at most $5,000 of transfers per hour
// in a scope.
var perHour = dispatch.SumLimit{Name: "transfers-per-hour", Tools: []string{"transfer"}, Member: "/amount", Limit: 5000, Window: time.Hour}

// limitedDispatcher is a replica of the runtime: its own Store, on its
// own *sql.DB of d, deciding perHour.
func limitedDispatcher(t testing.TB, d database, tr transfer) *dispatch.Dispatcher {
	t.Helper()
	binding, err := tool.Bind(tr)
	require.NoError(t, err)
	reg, err := tool.NewRegistry(binding)
	require.NoError(t, err)
	dispatcher, err := dispatch.New(dispatch.Config{Registry: reg, Events: d.store(t, sqlstore.Config{}), Rules: []dispatch.Rule{perHour}})
	require.NoError(t, err)
	return dispatcher
}

func transferCall(scope string, amount float64) dispatch.Call {
	return dispatch.Call{ID: "call", Scope: scope, Request: tool.Request{Name: "transfer", Arguments: fmt.Sprintf(`{"account":"A-1","amount":%v}`, amount)}}
}

// scopeRaceRounds is how many scopes the three transfers race in.
const scopeRaceRounds = 10

// Three concurrent $2,000 transfers under "$5,000 per hour", on two
// replicas of the runtime, each with its own store on its own
// connections to one PostgreSQL database: exactly two run, one is
// refused, round after round. The two that run are still running (they
// wait for the gate) when the third is decided: what they reserved at
// admission counts.
func TestThreeTransfersTwoReplicas(t *testing.T) {
	d := postgresDB(t)
	started, gate := make(chan struct{}, 3), make(chan struct{})
	tr := transfer{started: started, gate: gate}
	replicas := [2]*dispatch.Dispatcher{limitedDispatcher(t, d, tr), limitedDispatcher(t, d, tr)}
	defer close(gate)
	for round := range scopeRaceRounds {
		scope := fmt.Sprintf("conversation-%d", round)
		outcomes := make(chan dispatch.Outcome, 3)
		release := make(chan struct{})
		go func() {
			<-started
			<-started
			close(release)
		}()
		var wg sync.WaitGroup
		begin := make(chan struct{})
		for i := range 3 {
			wg.Go(func() {
				<-begin
				outcomes <- replicas[i%2].Run(context.Background(), transferCall(scope, 2000))
			})
		}
		close(begin)
		refused := <-outcomes // the only one that ends while the others wait
		require.Equal(t, dispatch.KindFailed, refused.Kind, "round %d: %v", round, refused.Err)
		require.Contains(t, refused.Text(), "limited to 5000 per hour")
		<-release // both others started
		for range 2 {
			gate <- struct{}{}
		}
		wg.Wait()
		close(outcomes)
		for o := range outcomes {
			require.Equal(t, dispatch.KindCompleted, o.Kind, "round %d: %v", round, o.Err)
		}
	}
}

// concurrentCalls is how many calls of random amounts race in one scope.
const concurrentCalls = 64

// 64 concurrent transfers of random amounts, on two replicas: the sum of
// those that run never passes the limit, on SQLite and on PostgreSQL,
// and the scope's log holds exactly the ones that ran.
func TestRandomAmountsNeverPassTheLimit(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			d := b.new(t)
			replicas := [2]*dispatch.Dispatcher{limitedDispatcher(t, d, transfer{}), limitedDispatcher(t, d, transfer{})}
			rng := rand.New(rand.NewPCG(7, 11))
			amounts := make([]float64, concurrentCalls)
			for i := range amounts {
				amounts[i] = float64(50 + rng.IntN(600))
			}
			var wg sync.WaitGroup
			begin := make(chan struct{})
			outcomes := make([]dispatch.Outcome, concurrentCalls)
			for i := range concurrentCalls {
				wg.Go(func() {
					<-begin
					outcomes[i] = replicas[i%2].Run(context.Background(), transferCall("conversation-64", amounts[i]))
				})
			}
			close(begin)
			wg.Wait()
			ran, refused := 0.0, 0
			for i, o := range outcomes {
				switch o.Kind {
				case dispatch.KindCompleted:
					ran += amounts[i]
				case dispatch.KindFailed:
					refused++
					require.Contains(t, o.Text(), "limited to 5000", "call %d: %v", i, o.Err)
				default:
					t.Fatalf("call %d: %s %v", i, o.Kind, o.Err)
				}
			}
			require.LessOrEqual(t, ran, 5000.0)
			require.Positive(t, refused, "64 calls of 50 to 650 exceed 5000")
			store := d.store(t, sqlstore.Config{})
			events, err := store.Events(t.Context(), dispatch.EventQuery{Scope: "conversation-64"})
			require.NoError(t, err)
			logged := 0.0
			for _, e := range events {
				require.Equal(t, dispatch.EventKept, e.State)
				n, ok := e.Number("/amount")
				require.True(t, ok)
				logged += n
			}
			require.Equal(t, ran, logged, "the log holds the calls that ran")
			require.Len(t, events, concurrentCalls-refused)
		})
	}
}
