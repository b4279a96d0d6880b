package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
)

// concurrencyEcho is a tool that answers with its own name and the
// arguments it was called with, and panics when the arguments ask it to.
type concurrencyEcho struct {
	name  string
	calls *atomic.Int64
}

func (e concurrencyEcho) Definition() tool.Definition {
	return tool.Definition{
		Name:        e.name,
		InputSchema: []byte(`{"type":"object","properties":{"id":{"type":"string"},"panic":{"type":"boolean"}},"required":["id"],"additionalProperties":false}`),
		Effect:      tool.EffectSafe,
	}
}

func (e concurrencyEcho) Call(_ context.Context, inv tool.Invocation) (tool.Result, error) {
	e.calls.Add(1)
	var args struct {
		ID    string `json:"id"`
		Panic bool   `json:"panic"`
	}
	if err := json.Unmarshal(inv.Arguments(), &args); err != nil {
		return tool.Result{}, err
	}
	if args.Panic {
		panic("asked to panic: " + args.ID)
	}
	details, err := json.Marshal(map[string]any{"tool": e.name, "arguments": json.RawMessage(inv.Arguments())})
	if err != nil {
		return tool.Result{}, err
	}
	out, err := tool.NewJSONOutput(details)
	return tool.Result{Output: out}, err
}

// TestRegistryUnderConcurrentUse hammers one Registry from 32 goroutines
// at once: each binds and registers tools of its own, races the others to
// register one contested name, resolves its tools and those of the others,
// lists the definitions, and prepares and calls through Recover and a
// Guard, every call with arguments no other call has. Run it with -race.
func TestRegistryUnderConcurrentUse(t *testing.T) {
	const (
		workers         = 32
		toolsPerWorker  = 4
		callsPerWorker  = 48
		panicEveryNth   = 8
		contestedName   = "contested"
		sharedName      = "shared"
		expectedPanics  = workers * (callsPerWorker / panicEveryNth)
		expectedCalls   = workers * callsPerWorker
		expectedResults = expectedCalls - expectedPanics
	)
	var toolCalls, authorizations atomic.Int64
	guard, err := tool.NewGuard(tool.GuardConfig{Authorizer: tool.AuthorizerFunc(func(_ context.Context, a tool.Authorization) (bool, error) {
		authorizations.Add(1)
		return a.Definition().Name != "", nil
	})})
	require.NoError(t, err)
	bind := func(name string) (tool.Binding, error) {
		return tool.Bind(concurrencyEcho{name: name, calls: &toolCalls}, tool.Recover, guard.Call)
	}
	shared, err := bind(sharedName)
	require.NoError(t, err)
	registry, err := tool.NewRegistry(shared)
	require.NoError(t, err)

	var (
		results, failures, contestedWins atomic.Int64
		start                            = make(chan struct{})
		wg                               sync.WaitGroup
		errs                             = make(chan error, workers)
	)
	workerTool := func(w, i int) string { return fmt.Sprintf("w%d_t%d", w, i) }

	work := func(w int) error {
		<-start
		ctx := context.Background()
		mine := make([]string, toolsPerWorker)
		for i := range mine {
			mine[i] = workerTool(w, i)
			b, err := bind(mine[i])
			if err != nil {
				return err
			}
			if err := registry.Register(b); err != nil {
				return fmt.Errorf("registering %s: %w", mine[i], err)
			}
		}
		contested, err := bind(contestedName)
		if err != nil {
			return err
		}
		switch err := registry.Register(contested); {
		case err == nil:
			contestedWins.Add(1)
		case !errors.Is(err, tool.ErrDuplicateTool):
			return fmt.Errorf("registering the contested name: %w", err)
		}

		for c := range callsPerWorker {
			// Alternate between this worker's tools, the shared tool and
			// tools of other workers, which may not be registered yet.
			var name string
			switch c % 3 {
			case 0:
				name = mine[c%toolsPerWorker]
			case 1:
				name = sharedName
			default:
				name = workerTool((w+c)%workers, c%toolsPerWorker)
			}
			binding, ok := registry.Resolve(name)
			if !ok {
				if strings.HasPrefix(name, fmt.Sprintf("w%d_", w)) || name == sharedName {
					return fmt.Errorf("%s is registered but does not resolve", name)
				}
				name = sharedName
				if binding, ok = registry.Resolve(name); !ok {
					return fmt.Errorf("%s does not resolve", name)
				}
			}
			if got := binding.Contract().Name(); got != name {
				return fmt.Errorf("resolving %s found %s", name, got)
			}

			id := fmt.Sprintf("w%d-c%d", w, c)
			wantPanic := c%panicEveryNth == panicEveryNth-1
			args := fmt.Sprintf(`{"id":%q}`, id)
			if wantPanic {
				args = fmt.Sprintf(`{"id":%q,"panic":true}`, id)
			}
			inv, err := binding.Contract().Prepare(tool.Request{Name: name, Arguments: args}, tool.Admission{IdempotencyKey: tool.IdempotencyKey(id)})
			if err != nil {
				return fmt.Errorf("preparing %s: %w", id, err)
			}
			result, err := binding.Call(ctx, inv)
			if wantPanic {
				failure, ok := tool.ClassifyFailure(err)
				if !ok || failure.Kind() != tool.FailureKindFailed {
					return fmt.Errorf("call %s should have failed after a panic, got %v", id, err)
				}
				var p *tool.PanicError
				if !errors.As(failure.Cause(), &p) || p.Value != "asked to panic: "+id {
					return fmt.Errorf("call %s recovered the wrong panic: %v", id, failure.Cause())
				}
				failures.Add(1)
				continue
			}
			if err != nil {
				return fmt.Errorf("calling %s: %w", id, err)
			}
			want := fmt.Sprintf(`{"arguments":%s,"tool":%q}`, args, name)
			if got := string(result.Output.Details); got != want {
				return fmt.Errorf("call %s got %s, want %s", id, got, want)
			}
			results.Add(1)

			if c%6 == 0 {
				defs := registry.Definitions()
				names := make([]string, len(defs))
				for i, d := range defs {
					names[i] = d.Name
				}
				if !slices.IsSorted(names) {
					return fmt.Errorf("definitions are not sorted by name: %v", names)
				}
				for _, n := range append([]string{sharedName}, mine...) {
					if _, found := slices.BinarySearch(names, n); !found {
						return fmt.Errorf("definitions lack %s", n)
					}
				}
			}
		}
		return nil
	}

	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := work(w); err != nil {
				errs <- fmt.Errorf("worker %d: %w", w, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	require.Equal(t, int64(1), contestedWins.Load(), "exactly one worker registers the contested name")
	require.Equal(t, int64(expectedResults), results.Load())
	require.Equal(t, int64(expectedPanics), failures.Load())
	require.Equal(t, int64(expectedCalls), toolCalls.Load(), "every call reached its tool once")
	require.Equal(t, int64(expectedCalls), authorizations.Load(), "the guard decided every call once")

	defs := registry.Definitions()
	require.Len(t, defs, 2+workers*toolsPerWorker)
	for w := range workers {
		for i := range toolsPerWorker {
			_, ok := registry.Resolve(workerTool(w, i))
			require.True(t, ok, workerTool(w, i))
		}
	}
}
