package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/agentcontract/tool/dispatch"
)

// Events runs the conformance tests of a dispatch.EventStore against the
// stores newStore makes: an event reserved when its decision allows it
// and not otherwise, the same ID held once, a released one reserved
// again; the totals and matches a ScopeLog answers (counted or not by
// state, by tool, window, member, outcome and value, with a window that
// moves forward and back), checked against a count of the listed events;
// each settling step, and those refused; concurrent reservations in one
// scope whose decisions read the log (a count and a sum that must not
// pass a limit: no more are reserved than the limit allows, whatever
// their number, and scopes do not share limits); expired events
// deleted; invalid events and queries; and a cancelled context.
func Events(t *testing.T, newStore func(t *testing.T) dispatch.EventStore) {
	t.Helper()
	t.Run("Reserve", func(t *testing.T) { testReserve(t, newStore(t)) })
	t.Run("Totals", func(t *testing.T) { testTotals(t, newStore(t)) })
	t.Run("Exists", func(t *testing.T) { testExists(t, newStore(t)) })
	t.Run("Settle", func(t *testing.T) { testSettleEvents(t, newStore(t)) })
	t.Run("ConcurrentReservations", func(t *testing.T) { testConcurrentReservations(t, newStore(t)) })
	t.Run("Window", func(t *testing.T) { testWindowMoves(t, newStore(t)) })
	t.Run("DeleteExpired", func(t *testing.T) { testDeleteExpiredEvents(t, newStore(t)) })
	t.Run("InvalidRecords", func(t *testing.T) { testInvalidEvents(t, newStore(t)) })
	t.Run("Canceled", func(t *testing.T) { testCanceledEvents(t, newStore(t)) })
}

// event returns a reserved event of scope, id and tool with args, at
// base plus offset, kept for a day.
func event(scope, id, tool, args string, offset time.Duration) dispatch.Event {
	at := base.Add(offset)
	return dispatch.Event{Scope: scope, ID: id, Tool: tool, Arguments: json.RawMessage(args), At: at, KeepUntil: at.Add(24 * time.Hour), State: dispatch.EventReserved}
}

// allow and refuse are decisions that do not read the log.
func allow(dispatch.ScopeLog) (bool, error)  { return true, nil }
func refuse(dispatch.ScopeLog) (bool, error) { return false, nil }

// reserve reserves e, allowed, and fails t when it is not.
func reserve(t *testing.T, s dispatch.EventStore, e dispatch.Event) {
	t.Helper()
	ok, err := s.ReserveEvent(t.Context(), e, allow)
	check(t, err, "reserving event %s", e.ID)
	if !ok {
		t.Fatalf("event %s was allowed and is not reserved", e.ID)
	}
}

// listed returns the events of scope, failing t on an error.
func listed(t *testing.T, s dispatch.EventStore, scope string) []dispatch.Event {
	t.Helper()
	events, err := s.Events(t.Context(), dispatch.EventQuery{Scope: scope})
	check(t, err, "listing scope %s", scope)
	return events
}

func testReserve(t *testing.T, s dispatch.EventStore) {
	ctx := t.Context()
	e := event("conv-1", "key-1", "refund", `{"amount":2000,"order":"A-7"}`, 0)
	ok, err := s.ReserveEvent(ctx, e, allow)
	check(t, err, "reserve")
	if !ok {
		t.Fatal("an allowed event must be reserved")
	}
	got := listed(t, s, "conv-1")
	if len(got) != 1 || !sameEvent(got[0], e) {
		t.Fatalf("the reserved event as listed: got %+v, want %+v", got, e)
	}
	loose := event("conv-2", "key-1", "refund", "{ \"order\": \"A-7\", \"amount\": 2.50, \"note\": \"\\u00e9\\/\" }", 0)
	reserve(t, s, loose)
	if got := listed(t, s, "conv-2"); len(got) != 1 || string(got[0].Arguments) != `{"amount":2.50,"note":"é/","order":"A-7"}` {
		t.Fatalf("arguments are kept as canonical JSON: got %+v", got)
	}

	// The same ID again: the same call, held already; nothing is decided.
	again := event("conv-1", "key-1", "refund", `{"amount":9000,"order":"A-7"}`, time.Minute)
	decided := false
	ok, err = s.ReserveEvent(ctx, again, func(dispatch.ScopeLog) (bool, error) { decided = true; return false, nil })
	check(t, err, "the same ID again")
	if !ok || decided {
		t.Fatalf("an ID that holds a reservation: got (%v, decided %v), want (true, not decided)", ok, decided)
	}
	if got := listed(t, s, "conv-1"); len(got) != 1 || !sameEvent(got[0], e) {
		t.Fatalf("the same ID again changed the log: %+v", got)
	}

	ok, err = s.ReserveEvent(ctx, event("conv-1", "key-2", "refund", `{}`, time.Minute), refuse)
	check(t, err, "a refused event")
	if ok {
		t.Fatal("a refused event must not be reserved")
	}
	boom := errors.New("the decision failed")
	ok, err = s.ReserveEvent(ctx, event("conv-1", "key-3", "refund", `{}`, time.Minute), func(dispatch.ScopeLog) (bool, error) { return true, boom })
	if ok || !errors.Is(err, boom) {
		t.Fatalf("a decision that fails: got (%v, %v), want (false, its error)", ok, err)
	}
	if got := listed(t, s, "conv-1"); len(got) != 1 {
		t.Fatalf("a refused or failed decision appended an event: %+v", got)
	}
	if got := listed(t, s, "conv-unknown"); len(got) != 0 {
		t.Fatalf("a scope without events lists %+v", got)
	}

	// Released, then reserved again: decided anew, as the new event says.
	check(t, s.SettleEvent(ctx, "conv-1", "key-1", dispatch.KindFailed, true), "release")
	ok, err = s.ReserveEvent(ctx, again, func(log dispatch.ScopeLog) (bool, error) {
		decided = true
		tot, err := log.Totals(dispatch.WindowQuery{Tools: []string{"refund"}, Now: again.At, Window: time.Hour})
		return err == nil && tot.Count == 0, err
	})
	check(t, err, "reserving a released ID again")
	if !ok || !decided {
		t.Fatalf("a released ID: got (%v, decided %v), want (true, decided)", ok, decided)
	}
	if got := listed(t, s, "conv-1"); len(got) != 1 || !sameEvent(got[0], again) {
		t.Fatalf("the event reserved again: got %+v, want %+v", got, again)
	}

	// Limit and Since.
	reserve(t, s, event("conv-1", "key-4", "refund", `{}`, 2*time.Minute))
	reserve(t, s, event("conv-1", "key-5", "refund", `{}`, 3*time.Minute))
	page, err := s.Events(ctx, dispatch.EventQuery{Scope: "conv-1", Since: base.Add(2 * time.Minute), Limit: 1})
	check(t, err, "a page of events")
	if len(page) != 1 || page[0].ID != "key-4" {
		t.Fatalf("events since 2m, limit 1: got %+v, want key-4", page)
	}
}

// sameEvent compares events by their JSON, times as instants.
func sameEvent(got, want dispatch.Event) bool {
	got.At, got.KeepUntil = got.At.UTC(), got.KeepUntil.UTC()
	want.At, want.KeepUntil = want.At.UTC(), want.KeepUntil.UTC()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	return string(g) == string(w)
}

// ask runs one decision on scope's log: read is given the log; the
// decision refuses, so that nothing is reserved.
func ask(t *testing.T, s dispatch.EventStore, scope string, read func(dispatch.ScopeLog) error) {
	t.Helper()
	e := event(scope, fmt.Sprintf("ask-%d", nonces.Add(1)), "probe", `{}`, 0)
	_, err := s.ReserveEvent(t.Context(), e, func(log dispatch.ScopeLog) (bool, error) { return false, read(log) })
	check(t, err, "reading scope %s", scope)
}

func totals(t *testing.T, s dispatch.EventStore, scope string, q dispatch.WindowQuery) dispatch.Totals {
	t.Helper()
	var got dispatch.Totals
	ask(t, s, scope, func(log dispatch.ScopeLog) error {
		var err error
		got, err = log.Totals(q)
		return err
	})
	return got
}

func exists(t *testing.T, s dispatch.EventStore, scope string, q dispatch.MatchQuery) bool {
	t.Helper()
	var got bool
	ask(t, s, scope, func(log dispatch.ScopeLog) error {
		var err error
		got, err = log.Exists(q)
		return err
	})
	return got
}

func testTotals(t *testing.T, s dispatch.EventStore) {
	ctx := t.Context()
	for _, e := range []dispatch.Event{
		event("s", "1", "refund", `{"amount":2000,"nested":{"cents":5}}`, -50*time.Minute),
		event("s", "2", "refund", `{"amount":1500.5}`, -30*time.Minute),
		event("s", "3", "refund", `{"amount":"700"}`, -20*time.Minute),   // not a number: counted, adds nothing
		event("s", "4", "refund", `{"amount":400}`, -10*time.Minute),     // released below
		event("s", "5", "transfer", `{"amount":300}`, -5*time.Minute),    // another tool
		event("s", "6", "refund", `{"other":1}`, -90*time.Minute),        // before the window
		event("other", "7", "refund", `{"amount":9999}`, -1*time.Minute), // another scope
		event("s", "8", "payout", `{"amount":1e2}`, -15*time.Minute),
		event("s", "9", "payout", `{"amount":1e400}`, -15*time.Minute), // beyond float64: adds nothing
		event("s", "10", "payout", `{"amount":-5.25}`, -15*time.Minute),
	} {
		reserve(t, s, e)
	}
	check(t, s.SettleEvent(ctx, "s", "1", dispatch.KindCompleted, false), "keep 1")
	check(t, s.SettleEvent(ctx, "s", "4", dispatch.KindFailed, true), "release 4")

	for _, c := range []struct {
		name  string
		q     dispatch.WindowQuery
		count int64
		sum   float64
	}{
		{"refunds of the hour: 1, 2 and 3; 4 released, 6 earlier", dispatch.WindowQuery{Tools: []string{"refund"}, Member: "/amount", Now: base, Window: time.Hour}, 3, 3500.5},
		{"no member: counted, no sum", dispatch.WindowQuery{Tools: []string{"refund"}, Now: base, Window: time.Hour}, 3, 0},
		{"two tools together", dispatch.WindowQuery{Tools: []string{"refund", "transfer"}, Member: "/amount", Now: base, Window: time.Hour}, 4, 3800.5},
		{"a nested member", dispatch.WindowQuery{Tools: []string{"refund"}, Member: "/nested/cents", Now: base, Window: time.Hour}, 3, 5},
		{"two hours: 6 too", dispatch.WindowQuery{Tools: []string{"refund"}, Member: "/amount", Now: base, Window: 2 * time.Hour}, 4, 3500.5},
		{"the last 25 minutes: 3 only", dispatch.WindowQuery{Tools: []string{"refund"}, Member: "/amount", Now: base, Window: 25 * time.Minute}, 1, 0},
		{"an event at the window's start is out", dispatch.WindowQuery{Tools: []string{"refund"}, Member: "/amount", Now: base, Window: 30 * time.Minute}, 1, 0},
		{"numbers as written: 1e2, 1e400 (nothing) and -5.25", dispatch.WindowQuery{Tools: []string{"payout"}, Member: "/amount", Now: base, Window: time.Hour}, 3, 94.75},
		{"a tool without events", dispatch.WindowQuery{Tools: []string{"nothing"}, Member: "/amount", Now: base, Window: time.Hour}, 0, 0},
	} {
		got := totals(t, s, "s", c.q)
		if got.Count != c.count || got.Sum != c.sum {
			t.Errorf("%s: got %+v, want count %d sum %v", c.name, got, c.count, c.sum)
		}
	}
	if got := totals(t, s, "other", dispatch.WindowQuery{Tools: []string{"refund"}, Member: "/amount", Now: base, Window: time.Hour}); got.Count != 1 || got.Sum != 9999 {
		t.Errorf("the other scope: got %+v, want its one event", got)
	}

	var err error
	ask(t, s, "s", func(log dispatch.ScopeLog) error {
		_, err = log.Totals(dispatch.WindowQuery{Tools: []string{"refund"}, Member: "amount", Now: base, Window: time.Hour})
		return nil
	})
	wantIs(t, err, dispatch.ErrInvalidConfig, "a member that is not a JSON pointer")
	ask(t, s, "s", func(log dispatch.ScopeLog) error {
		_, err = log.Totals(dispatch.WindowQuery{Tools: []string{"refund"}, Now: base})
		return nil
	})
	wantIs(t, err, dispatch.ErrInvalidConfig, "a query without a window")
}

func testExists(t *testing.T, s dispatch.EventStore) {
	ctx := t.Context()
	for _, e := range []dispatch.Event{
		event("s", "1", "get_balance", `{"account":"A-1"}`, -40*time.Minute),
		event("s", "2", "get_balance", `{"account":"B-2"}`, -20*time.Minute), // in flight
		event("s", "3", "get_balance", `{"account":"C-3"}`, -10*time.Minute), // released
		event("s", "4", "get_balance", `{"account":42}`, -5*time.Minute),
		event("s", "5", "fetch_page", `{"url":"https://example.com"}`, -3*time.Hour),
		event("s", "6", "get_balance", `{"account":"\u00c4\n\u0000\"x"}`, -5*time.Minute),
	} {
		reserve(t, s, e)
	}
	check(t, s.SettleEvent(ctx, "s", "1", dispatch.KindCompleted, false), "complete 1")
	check(t, s.SettleEvent(ctx, "s", "3", dispatch.KindCompleted, true), "release 3")
	check(t, s.SettleEvent(ctx, "s", "4", dispatch.KindCompleted, false), "complete 4")
	hour := func(q dispatch.MatchQuery) dispatch.MatchQuery {
		q.Tools, q.Now, q.Window = []string{"get_balance"}, base, time.Hour
		return q
	}
	for _, c := range []struct {
		name string
		q    dispatch.MatchQuery
		want bool
	}{
		{"any event of the tool", hour(dispatch.MatchQuery{}), true},
		{"a completed one with the account", hour(dispatch.MatchQuery{Outcome: dispatch.KindCompleted, Member: "/account", Equals: "A-1"}), true},
		{"the one in flight is not completed", hour(dispatch.MatchQuery{Outcome: dispatch.KindCompleted, Member: "/account", Equals: "B-2"}), false},
		{"the one in flight is an event", hour(dispatch.MatchQuery{Member: "/account", Equals: "B-2"}), true},
		{"a released event still matches", hour(dispatch.MatchQuery{Outcome: dispatch.KindCompleted, Member: "/account", Equals: "C-3"}), true},
		{"a number is not the string", hour(dispatch.MatchQuery{Member: "/account", Equals: "42"}), false},
		{"another value", hour(dispatch.MatchQuery{Member: "/account", Equals: "Z-9"}), false},
		{"a value with escapes", hour(dispatch.MatchQuery{Member: "/account", Equals: "Ä\n\x00\"x"}), true},
		{"a prefix of it", hour(dispatch.MatchQuery{Member: "/account", Equals: "Ä\n"}), false},
		{"another outcome", hour(dispatch.MatchQuery{Outcome: dispatch.KindFailed}), false},
		{"before the window", dispatch.MatchQuery{Tools: []string{"fetch_page"}, Now: base, Window: time.Hour}, false},
		{"within a longer one", dispatch.MatchQuery{Tools: []string{"fetch_page"}, Now: base, Window: 4 * time.Hour}, true},
		{"in flight, so not completed", dispatch.MatchQuery{Tools: []string{"fetch_page"}, Now: base, Window: 4 * time.Hour, Outcome: dispatch.KindCompleted}, false},
		{"one of two tools", dispatch.MatchQuery{Tools: []string{"fetch_page", "get_balance"}, Now: base, Window: 4 * time.Hour, Outcome: dispatch.KindCompleted}, true},
		{"A-1 outside a 30-minute window", dispatch.MatchQuery{Tools: []string{"get_balance"}, Now: base, Window: 30 * time.Minute, Member: "/account", Equals: "A-1"}, false},
	} {
		if got := exists(t, s, "s", c.q); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
	if exists(t, s, "another", hour(dispatch.MatchQuery{})) {
		t.Error("another scope matched the events of s")
	}
	var err error
	ask(t, s, "s", func(log dispatch.ScopeLog) error {
		_, err = log.Exists(dispatch.MatchQuery{Tools: []string{"get_balance"}, Now: base, Window: time.Hour, Outcome: "done"})
		return nil
	})
	wantIs(t, err, dispatch.ErrInvalidConfig, "an outcome that is not a Kind")
}

func testSettleEvents(t *testing.T, s dispatch.EventStore) {
	ctx := t.Context()
	for _, id := range []string{"a", "b", "c", "d"} {
		reserve(t, s, event("s", id, "refund", `{}`, 0))
	}
	steps := []struct {
		id      string
		outcome dispatch.Kind
		release bool
		state   dispatch.EventState
		kind    dispatch.Kind
		err     error
	}{
		{"a", dispatch.KindCompleted, false, dispatch.EventKept, dispatch.KindCompleted, nil},
		{"a", dispatch.KindCompleted, false, dispatch.EventKept, dispatch.KindCompleted, nil},
		{"a", dispatch.KindFailed, false, dispatch.EventKept, dispatch.KindCompleted, dispatch.ErrInvalidRecord},
		{"b", dispatch.KindUnknown, false, dispatch.EventKept, dispatch.KindUnknown, nil},
		{"b", "", true, dispatch.EventReleased, dispatch.KindUnknown, nil}, // a reconciler: the effect did not happen
		{"b", "", false, dispatch.EventReleased, dispatch.KindUnknown, nil},
		{"c", "", true, dispatch.EventReleased, "", nil}, // released while in flight
		{"c", dispatch.KindFailed, false, dispatch.EventReleased, dispatch.KindFailed, nil},
		{"d", "", false, dispatch.EventReserved, "", nil},
		{"d", "finished", false, dispatch.EventReserved, "", dispatch.ErrInvalidRecord},
	}
	for i, st := range steps {
		err := s.SettleEvent(ctx, "s", st.id, st.outcome, st.release)
		if st.err != nil {
			wantIs(t, err, st.err, fmt.Sprintf("step %d", i))
		} else {
			check(t, err, "step %d", i)
		}
		var got *dispatch.Event
		for _, e := range listed(t, s, "s") {
			if e.ID == st.id {
				got = &e
			}
		}
		if got == nil || got.State != st.state || got.Outcome != st.kind {
			t.Fatalf("step %d (%s %q release %v): got %+v, want state %s outcome %q", i, st.id, st.outcome, st.release, got, st.state, st.kind)
		}
	}
	wantIs(t, s.SettleEvent(ctx, "s", "zzz", dispatch.KindCompleted, false), dispatch.ErrNotFound, "an ID the scope does not hold")
	wantIs(t, s.SettleEvent(ctx, "nowhere", "a", dispatch.KindCompleted, false), dispatch.ErrNotFound, "a scope without events")
	if got := totals(t, s, "s", dispatch.WindowQuery{Tools: []string{"refund"}, Now: base, Window: time.Hour}); got.Count != 2 {
		t.Fatalf("after the steps a (kept) and d (reserved) count: got %d, want 2", got.Count)
	}
}

// concurrentRacers is how many reservations race in each scope.
const concurrentRacers = 24

func testConcurrentReservations(t *testing.T, s dispatch.EventStore) {
	const countLimit, sumLimit = 7, 5000
	type result struct {
		scope  string
		amount int
		ok     bool
	}
	results := make(chan result, 2*concurrentRacers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for r := range concurrentRacers {
		wg.Go(func() {
			<-start
			e := event("count", fmt.Sprintf("c-%d", r), "send_email", `{}`, time.Duration(r)*time.Millisecond)
			ok, err := s.ReserveEvent(context.Background(), e, func(log dispatch.ScopeLog) (bool, error) {
				tot, err := log.Totals(dispatch.WindowQuery{Tools: []string{"send_email"}, Now: e.At, Window: time.Hour})
				return err == nil && tot.Count < countLimit, err
			})
			if err != nil {
				t.Errorf("racer %d of scope count: %v", r, err)
			}
			results <- result{"count", 0, ok}
		})
		wg.Go(func() {
			<-start
			amount := 100 + rand.IntN(1900)
			e := event("sum", fmt.Sprintf("s-%d", r), "refund", fmt.Sprintf(`{"amount":%d}`, amount), time.Duration(r)*time.Millisecond)
			ok, err := s.ReserveEvent(context.Background(), e, func(log dispatch.ScopeLog) (bool, error) {
				tot, err := log.Totals(dispatch.WindowQuery{Tools: []string{"refund"}, Member: "/amount", Now: e.At, Window: time.Hour})
				return err == nil && tot.Sum+float64(amount) <= sumLimit, err
			})
			if err != nil {
				t.Errorf("racer %d of scope sum: %v", r, err)
			}
			results <- result{"sum", amount, ok}
		})
	}
	close(start)
	wg.Wait()
	close(results)
	counted, summed := 0, 0
	for r := range results {
		switch {
		case r.ok && r.scope == "count":
			counted++
		case r.ok:
			summed += r.amount
		}
	}
	if counted != countLimit {
		t.Fatalf("%d racers reserved under a limit of %d calls; want exactly %d", counted, countLimit, countLimit)
	}
	if summed > sumLimit {
		t.Fatalf("racers reserved amounts summing to %d under a limit of %d", summed, sumLimit)
	}
	if n := len(listed(t, s, "count")); n != countLimit {
		t.Fatalf("the scope lists %d events, want %d", n, countLimit)
	}
}

// testWindowMoves reserves and settles events at random while the
// window's end moves forward and, now and then, back, and compares each
// answer of the log with a count made here of the same events, and the
// log itself with them at the end: a store that keeps running totals
// must agree with one that counts.
func testWindowMoves(t *testing.T, s dispatch.EventStore) {
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(1, 2))
	tools := []string{"refund", "transfer"}
	type kept struct {
		e      dispatch.Event
		amount int
	}
	var model []*kept
	now := base
	const steps = 200
	for i := range steps {
		now = now.Add(time.Duration(rng.IntN(120)-20) * time.Second) // back 20 s at most
		switch rng.IntN(4) {
		case 0, 1:
			at := now.Add(-time.Duration(rng.IntN(30)) * time.Second)
			amount := rng.IntN(100)
			e := event("w", fmt.Sprintf("e-%d", i), tools[rng.IntN(2)], fmt.Sprintf(`{"amount":%d}`, amount), at.Sub(base))
			reserve(t, s, e)
			model = append(model, &kept{e, amount})
		case 2:
			if len(model) > 0 {
				k := model[rng.IntN(len(model))]
				kinds := []dispatch.Kind{dispatch.KindCompleted, dispatch.KindFailed, dispatch.KindUnknown}
				outcome, release := kinds[rng.IntN(3)], rng.IntN(2) == 0
				err := s.SettleEvent(ctx, "w", k.e.ID, outcome, release)
				next, want := k.e.Settle(outcome, release)
				if (err == nil) != (want == nil) || (err != nil && !errors.Is(err, dispatch.ErrInvalidRecord)) {
					t.Fatalf("step %d: settling %s (%s, release %v) from %s %q: got %v, want %v", i, k.e.ID, outcome, release, k.e.State, k.e.Outcome, err, want)
				}
				if err == nil {
					k.e = next
				}
			}
		}
		window := []time.Duration{5 * time.Minute, 20 * time.Minute}[rng.IntN(2)]
		q := dispatch.WindowQuery{Tools: tools[:1+rng.IntN(2)], Member: "/amount", Now: now, Window: window}
		got := totals(t, s, "w", q)
		var want dispatch.Totals
		for _, k := range model {
			if k.e.State == dispatch.EventReleased || !k.e.At.After(now.Add(-window)) || (len(q.Tools) == 1 && k.e.Tool != tools[0]) {
				continue
			}
			want.Count++
			want.Sum += float64(k.amount)
		}
		if got != want {
			t.Fatalf("step %d: %d tools over %s to %s: got %+v, want %+v", i, len(q.Tools), window, now.Sub(base), got, want)
		}
	}
	listedEvents := listed(t, s, "w")
	if len(listedEvents) != len(model) {
		t.Fatalf("the log lists %d events, want %d", len(listedEvents), len(model))
	}
	byID := map[string]dispatch.Event{}
	for _, e := range listedEvents {
		byID[e.ID] = e
	}
	for _, k := range model {
		if !sameEvent(byID[k.e.ID], k.e) {
			t.Fatalf("event %s: listed %+v, want %+v", k.e.ID, byID[k.e.ID], k.e)
		}
	}
}

func testDeleteExpiredEvents(t *testing.T, s dispatch.EventStore) {
	ctx := t.Context()
	old := event("s", "old", "refund", `{"amount":1}`, -3*time.Hour)
	old.KeepUntil = base.Add(-time.Hour)
	edge := event("s", "edge", "refund", `{"amount":2}`, -2*time.Hour)
	edge.KeepUntil = base
	gone := event("gone", "x", "refund", `{"amount":4}`, -3*time.Hour)
	gone.KeepUntil = base.Add(-time.Minute)
	for _, e := range []dispatch.Event{old, edge, gone, event("s", "live", "refund", `{"amount":8}`, 0)} {
		reserve(t, s, e)
	}
	n, err := s.DeleteExpiredEvents(ctx, base)
	check(t, err, "deleting expired events")
	if n != 2 {
		t.Fatalf("deleted %d events, want 2 (those kept until before now)", n)
	}
	var ids []string
	for _, e := range listed(t, s, "s") {
		ids = append(ids, e.ID)
	}
	if fmt.Sprint(ids) != "[edge live]" {
		t.Fatalf("after the deletion scope s lists %v, want [edge live]", ids)
	}
	if got := listed(t, s, "gone"); len(got) != 0 {
		t.Fatalf("after the deletion scope gone lists %+v", got)
	}
	if got := totals(t, s, "s", dispatch.WindowQuery{Tools: []string{"refund"}, Member: "/amount", Now: base, Window: 4 * time.Hour}); got.Count != 2 || got.Sum != 10 {
		t.Fatalf("totals after the deletion: got %+v, want 2 events summing to 10", got)
	}
	reserve(t, s, event("gone", "y", "refund", `{"amount":16}`, 0))
	if got := totals(t, s, "gone", dispatch.WindowQuery{Tools: []string{"refund"}, Member: "/amount", Now: base, Window: 4 * time.Hour}); got.Count != 1 || got.Sum != 16 {
		t.Fatalf("a scope emptied and used again: got %+v, want its new event", got)
	}
}

func testInvalidEvents(t *testing.T, s dispatch.EventStore) {
	ctx := t.Context()
	for name, change := range map[string]func(e *dispatch.Event){
		"no scope":                func(e *dispatch.Event) { e.Scope = "" },
		"no ID":                   func(e *dispatch.Event) { e.ID = "" },
		"a tool name with spaces": func(e *dispatch.Event) { e.Tool = "re fund" },
		"arguments not an object": func(e *dispatch.Event) { e.Arguments = json.RawMessage(`[1]`) },
		"arguments not JSON":      func(e *dispatch.Event) { e.Arguments = json.RawMessage(`{"a":`) },
		"no time":                 func(e *dispatch.Event) { e.At = time.Time{} },
		"kept until before it":    func(e *dispatch.Event) { e.KeepUntil = e.At.Add(-time.Second) },
		"an outcome already":      func(e *dispatch.Event) { e.Outcome = dispatch.KindCompleted },
	} {
		e := event("s", "1", "refund", `{}`, 0)
		change(&e)
		decided := false
		ok, err := s.ReserveEvent(ctx, e, func(dispatch.ScopeLog) (bool, error) { decided = true; return true, nil })
		wantIs(t, err, dispatch.ErrInvalidRecord, name)
		if ok || decided {
			t.Fatalf("%s: the event was decided or reserved", name)
		}
	}
	if got := listed(t, s, "s"); len(got) != 0 {
		t.Fatalf("invalid events were kept: %+v", got)
	}
}

func testCanceledEvents(t *testing.T, s dispatch.EventStore) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := s.ReserveEvent(ctx, event("s", "1", "refund", `{}`, 0), allow)
	wantIs(t, err, dispatch.ErrStore, "ReserveEvent with a cancelled context")
	wantIs(t, err, context.Canceled, "ReserveEvent with a cancelled context")
	wantIs(t, s.SettleEvent(ctx, "s", "1", dispatch.KindCompleted, false), dispatch.ErrStore, "SettleEvent with a cancelled context")
	_, err = s.Events(ctx, dispatch.EventQuery{Scope: "s"})
	wantIs(t, err, dispatch.ErrStore, "Events with a cancelled context")
	_, err = s.DeleteExpiredEvents(ctx, base)
	wantIs(t, err, dispatch.ErrStore, "DeleteExpiredEvents with a cancelled context")
	if got := listed(t, s, "s"); len(got) != 0 {
		t.Fatalf("a cancelled reservation was kept: %+v", got)
	}
}
