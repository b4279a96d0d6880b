package sqlstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/stores/sqlstore"
)

// soakRounds is how many approvals TestSoak drops per dialect.
const soakRounds = 1000

// TestSoak drops approvals as hostile clients do, at random moments: each
// round, two submits of one approval (a double click) whose requests end
// after a random delay, then the person's resend on a live request. It
// counts the stranded approvals (the resend cannot complete the call) and
// the double runs. It is a figure, not a check of CI: it runs only with
// TOOL_SOAK=1, and never under -short.
func TestSoak(t *testing.T) {
	if testing.Short() || os.Getenv("TOOL_SOAK") != "1" {
		t.Skip("the soak runs with TOOL_SOAK=1, without -short")
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			var runs atomic.Int32
			d := refunds(t, b.new(t).store(t, sqlstore.Config{}), &runs)
			yes := dispatch.Answer{Response: json.RawMessage(`true`)}
			stranded, doubles, claimErrors := 0, 0, 0
			for round := range soakRounds {
				o := d.Run(t.Context(), dispatch.Call{ID: "c", Request: tool.Request{Name: "refund", Arguments: `{}`}})
				require.Equal(t, dispatch.KindSuspended, o.Kind)
				cp := *o.Checkpoint
				runs.Store(0)
				var wg sync.WaitGroup
				var mu sync.Mutex
				for range 2 {
					wg.Go(func() {
						ctx, cancel := context.WithCancel(context.Background())
						defer cancel()
						stop := time.AfterFunc(time.Duration(rand.IntN(3000))*time.Microsecond, cancel)
						defer stop.Stop()
						if _, err := d.Resume(ctx, cp, yes); err != nil && !isAnswered(err) {
							mu.Lock()
							claimErrors++
							mu.Unlock()
						}
					})
				}
				wg.Wait()
				if _, err := d.Resume(t.Context(), cp, yes); err != nil {
					stranded++
					if stranded <= 3 {
						t.Logf("round %d: the resend could not complete the call: %v", round, err)
					}
				}
				if runs.Load() > 1 {
					doubles++
				}
			}
			t.Logf("%s: %d rounds: %d stranded approvals, %d double runs (%d dropped submits refused)", b.name, soakRounds, stranded, doubles, claimErrors)
		})
	}
}

func isAnswered(err error) bool {
	var answered *dispatch.AnsweredError
	return errors.As(err, &answered)
}
