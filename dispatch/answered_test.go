package dispatch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// Two Observers on one dispatcher both see every call, and each the
// answer of a call a person answered, with the turn it belongs to.
func TestObserversAndAnswered(t *testing.T) {
	type seen struct {
		mu              sync.Mutex
		starts, dones   []string
		answered, turns []string
	}
	observe := func(s *seen) *dispatch.Observer {
		return &dispatch.Observer{
			CallStart: func(ctx context.Context, info dispatch.CallInfo) context.Context {
				s.mu.Lock()
				defer s.mu.Unlock()
				s.starts = append(s.starts, string(info.Op))
				return ctx
			},
			CallDone: func(_ context.Context, info dispatch.CallInfo, o dispatch.Outcome) {
				s.mu.Lock()
				defer s.mu.Unlock()
				s.dones = append(s.dones, string(info.Op)+" "+string(o.Kind))
			},
			Answered: func(_ context.Context, info dispatch.CallInfo, o dispatch.Outcome) {
				s.mu.Lock()
				defer s.mu.Unlock()
				s.answered = append(s.answered, info.AnsweredBy+" "+string(o.Kind))
				s.turns = append(s.turns, info.TurnID)
			},
		}
	}
	var tracer, app seen
	g := &gated{name: "refund", effect: tool.EffectIdempotent}
	d := gatedDispatcher(t, memoryStore(t), g, func(c *dispatch.Config) {
		c.Observer = dispatch.Observers(observe(&tracer), nil, observe(&app))
	})
	outcomes := d.RunAll(t.Context(), []dispatch.Call{{ID: "c", Request: tool.Request{Name: "refund", Arguments: `{}`}, TurnID: "conv-1/turn-1"}})
	require.Equal(t, dispatch.KindSuspended, outcomes[0].Kind)
	require.NoError(t, outcomes[0].Err)
	_, err := d.Resume(t.Context(), *outcomes[0].Checkpoint, yes("ann"))
	require.NoError(t, err)
	_, err = d.Resume(t.Context(), *outcomes[0].Checkpoint, yes("ann"))
	require.NoError(t, err, "a replay")
	for _, s := range []*seen{&tracer, &app} {
		require.Equal(t, []string{"run", "resume", "resume"}, s.starts)
		require.Equal(t, []string{"run suspended", "resume completed", "resume completed"}, s.dones)
		require.Equal(t, []string{"ann completed"}, s.answered, "once per answer, not on its replay")
		require.Equal(t, []string{"conv-1/turn-1"}, s.turns)
	}
	require.Nil(t, dispatch.Observers(nil, nil))
}

// A runtime waits for its turn on one dispatcher while a person answers
// on another that shares its store: RunAll saved the turn (the calls
// carry its ID), and WaitTurn returns once no call of it waits, with no
// loop in the runtime.
func TestWaitTurnAcrossDispatchers(t *testing.T) {
	store := memoryStore(t)
	g := &gated{name: "refund", effect: tool.EffectIdempotent}
	runtime := gatedDispatcher(t, store, g)
	desk := gatedDispatcher(t, store, g)
	outcomes := runtime.RunAll(t.Context(), []dispatch.Call{
		{ID: "a", Request: tool.Request{Name: "refund", Arguments: `{}`}, TurnID: "t1"},
		{ID: "b", Request: tool.Request{Name: "refund", Arguments: `{}`}, TurnID: "t1"},
	})
	pending, err := store.Pending(t.Context(), dispatch.PendingQuery{TurnID: "t1"})
	require.NoError(t, err)
	require.Len(t, pending, 2, "the turn was saved by RunAll")

	done := make(chan []dispatch.Outcome, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		finished, err := runtime.WaitTurn(ctx, "t1")
		require.NoError(t, err)
		done <- finished
	}()
	_, err = desk.Resume(t.Context(), *outcomes[0].Checkpoint, yes("ann"))
	require.NoError(t, err)
	select {
	case <-done:
		t.Fatal("the turn finished with a call still waiting")
	case <-time.After(50 * time.Millisecond):
	}
	_, err = desk.Decline(t.Context(), *outcomes[1].Checkpoint, dispatch.Answer{Principal: "ann"})
	require.NoError(t, err)
	finished := <-done
	require.Equal(t, dispatch.KindCompleted, finished[0].Kind)
	require.Equal(t, dispatch.KindFailed, finished[1].Kind)
	require.Equal(t, `The person declined the call to "refund".`, finished[1].Text())
}

// Calls of one RunAll that do not carry one TurnID save no turn, and say
// so on their suspended outcomes.
func TestRunAllTurnIDsDiffer(t *testing.T) {
	g := &gated{name: "refund"}
	d := gatedDispatcher(t, memoryStore(t), g)
	outcomes := d.RunAll(t.Context(), []dispatch.Call{
		{ID: "a", Request: tool.Request{Name: "refund", Arguments: `{}`}, TurnID: "t1"},
		{ID: "b", Request: tool.Request{Name: "refund", Arguments: `{}`}},
	})
	for _, o := range outcomes {
		require.Equal(t, dispatch.KindSuspended, o.Kind)
		require.ErrorIs(t, o.Err, dispatch.ErrInvalidConfig)
	}
	_, err := d.Turn(t.Context(), "t1")
	require.ErrorIs(t, err, dispatch.ErrNotFound)
}

// An edited call's outcome tells the model that the person changed the
// arguments, and to what.
func TestEditedOutcomeSaysSo(t *testing.T) {
	type refund struct {
		Cents int `json:"cents"`
	}
	ask, err := tool.NewAskFunc(tool.FuncConfig{Name: "refund", Description: "refund"},
		func(_ context.Context, in refund) (tool.Question, error) {
			return tool.Question{Prompt: fmt.Sprintf("Refund %d?", in.Cents)}, nil
		},
		func(_ context.Context, in refund, ok bool) (string, error) {
			return fmt.Sprintf("refunded %d", in.Cents), nil
		})
	require.NoError(t, err)
	reg := registryOf(t, ask)
	d := newDispatcher(t, reg)
	outcomes := d.RunAll(t.Context(), []dispatch.Call{{ID: "c", Request: tool.Request{Name: "refund", Arguments: `{"cents":4250}`}, TurnID: "t"}})
	o := outcomes[0]
	require.Equal(t, dispatch.KindSuspended, o.Kind)
	edited, err := d.Supersede(t.Context(), *o.Checkpoint, dispatch.Edit{Arguments: `{"cents":2000}`})
	require.NoError(t, err)
	const note = `The person changed the arguments of this call before it ran. You proposed: {"cents":4250}. It ran with: {"cents":2000}.`
	require.Equal(t, dispatch.KindSuspended, edited.Kind, "the edited call asks again")
	require.Equal(t, note+"\n", edited.Text(), "its suspended outcome holds the note")
	done, err := d.Resume(t.Context(), *edited.Checkpoint, dispatch.Answer{Response: json.RawMessage(`true`)})
	require.NoError(t, err)
	require.Equal(t, "refunded 2000", done.Text(), "the resumed call's own outcome")
	turn, err := d.Turn(t.Context(), "t")
	require.NoError(t, err)
	require.Equal(t, note+"\nrefunded 2000", turn[0].Text(), "what the model reads begins with the note")
}
