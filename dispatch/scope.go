package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/internal/errprefix"
)

// EventStore keeps the event log of each scope ([Call.Scope]): the calls
// admitted in it, with their arguments, their outcomes, and the calls
// still in flight. A Dispatcher with scope rules ([Config.Rules]) decides
// each scoped call against its scope's log and reserves its place in it
// through ReserveEvent, in one atomic step per scope, and records the
// call's outcome through SettleEvent.
//
// An event that holds a reservation (EventReserved or EventKept) counts
// in the totals of the rules (ScopeLog.Totals); a released one
// (EventReleased) no longer does, but stays in the log. [MemoryStore]
// keeps the logs of one process; the SQL store keeps them for replicas.
// The package storetest holds the conformance tests every EventStore
// passes (storetest.Events).
//
// Errors wrap ErrStore for a failure of the store itself (with ctx's
// error beside it when ctx ended), ErrNotFound for an event it does not
// hold, ErrInvalidRecord for an event it cannot keep or a step the event
// cannot take, and ErrInvalidConfig for a query a ScopeLog cannot
// answer. Implementations must be safe for concurrent use, by goroutines
// and, for a shared store, by processes; they copy what they are given
// and return copies.
type EventStore interface {
	// ReserveEvent decides whether e may join the log of e.Scope, and
	// appends it as EventReserved when it may: decide is called with the
	// scope's log while the store holds the scope's lock, and nothing
	// else joins the scope's log between the decision and the append, in
	// any number of processes. It returns whether e holds a reservation
	// now.
	//
	//   - The scope holds no event of e.ID: decide is called; true
	//     appends e, false appends nothing.
	//   - It holds one that still counts (reserved or kept): the same
	//     call, sent again under its key. decide is not called, nothing
	//     changes, and ReserveEvent returns true.
	//   - It holds a released one: decide is called, and true reserves
	//     the event again, as e says (its time, tool and arguments).
	//
	// An error of decide is returned as it is, and nothing is appended.
	// decide may be called more than once when the store tries again;
	// the last call decides. The ScopeLog is valid only while decide
	// runs. e must be valid (Event.Validate) and EventReserved, without
	// an outcome; ReserveEvent sets its State.
	ReserveEvent(ctx context.Context, e Event, decide func(ScopeLog) (bool, error)) (bool, error)
	// SettleEvent records what became of the call of event id of scope:
	// its outcome (a Kind; empty leaves the recorded one) and, when
	// release is true, that its reservation no longer counts. A reserved
	// event becomes EventKept, or EventReleased with release; a kept one
	// stays kept, or is released with release; a released one stays
	// released. An event's outcome is recorded once: settling it again
	// with another outcome is an error wrapping ErrInvalidRecord, as is
	// a Kind that is not an outcome. An event the scope does not hold is
	// an error wrapping ErrNotFound.
	SettleEvent(ctx context.Context, scope, id string, outcome Kind, release bool) error
	// Events lists the events of one scope, in the order of their times
	// (then of their IDs): see EventQuery.
	Events(ctx context.Context, q EventQuery) ([]Event, error)
	// DeleteExpiredEvents deletes every event whose KeepUntil is before
	// now, and returns how many it deleted. It deletes nothing else. A
	// runtime calls it from time to time, with its own clock.
	DeleteExpiredEvents(ctx context.Context, now time.Time) (int, error)
}

// ScopeLog is what a rule reads of the log of one scope while the store
// holds that scope's lock (see EventStore.ReserveEvent). Its answers
// cover the events of the scope admitted after Now minus Window: a rule
// never reads the whole log, and a store answers from indexes (by tool
// and time) or from running totals, without copying events. It is valid
// only while the decide function it was given to runs, and must not be
// kept.
//
// Errors wrap ErrStore for a failure of the store (the decision is then
// not made, and the call does not run) and ErrInvalidConfig for a query
// that is not valid (see WindowQuery.Validate).
type ScopeLog interface {
	// Totals returns how many events of q.Tools admitted in q's window
	// hold a reservation (reserved or kept: in flight, or with an
	// outcome that did not release it), and, when q.Member is set, the
	// sum of the numbers at that member of their arguments (a member
	// that is missing or not a number adds nothing).
	Totals(q WindowQuery) (Totals, error)
	// Exists reports whether the log holds an event of q.Tools admitted
	// in q's window that matches q, whatever its state: a released
	// event, and one still in flight, are matched too, unless q.Outcome
	// asks for an outcome.
	Exists(q MatchQuery) (bool, error)
}

// WindowQuery selects the events ScopeLog.Totals adds up: those of the
// Tools admitted after Now minus Window.
type WindowQuery struct {
	// Tools are the tools whose events count: 1 to 64 tool names, each
	// once.
	Tools []string
	// Member, when not empty, is the member whose numbers Totals.Sum
	// adds: a path of member names, each 1 to 64 ASCII letters, digits,
	// '_' or '-', written as a JSON pointer ("/amount", "/refund/cents"),
	// at most 8 deep. A number counts as Event.Number reads it; a
	// member that is missing or not such a number adds nothing.
	Member string
	// Now and Window bound the events: those admitted after Now minus
	// Window. Window is positive. A store may keep running totals for
	// each Window it is asked about.
	Now    time.Time
	Window time.Duration
}

// Validate reports whether q is a query a ScopeLog answers. Errors wrap
// ErrInvalidConfig.
func (q WindowQuery) Validate() error {
	if err := checkQuery(q.Tools, q.Now, q.Window); err != nil {
		return err
	}
	if q.Member != "" {
		if _, err := MemberPath(q.Member); err != nil {
			return err
		}
	}
	return nil
}

// Totals is what ScopeLog.Totals returns.
type Totals struct {
	// Count is how many events hold a reservation.
	Count int64
	// Sum is the sum of the numbers at the query's Member among them, as
	// float64: exact for integers up to 2^53, so keep amounts in whole
	// units (cents) when the sum must be exact.
	Sum float64
}

// MatchQuery selects the events ScopeLog.Exists looks for: those of the
// Tools admitted after Now minus Window that match the rest of the
// query.
type MatchQuery struct {
	// Tools, Now and Window are as in WindowQuery.
	Tools  []string
	Now    time.Time
	Window time.Duration
	// Outcome, when not empty, matches only the events whose recorded
	// outcome is of that Kind.
	Outcome Kind
	// Member, when not empty, matches only the events whose arguments
	// hold, at that member (as in WindowQuery), the JSON string Equals
	// (as Event.Text reads it).
	Member string
	Equals string
}

// Validate reports whether q is a query a ScopeLog answers. Errors wrap
// ErrInvalidConfig.
func (q MatchQuery) Validate() error {
	if err := checkQuery(q.Tools, q.Now, q.Window); err != nil {
		return err
	}
	if q.Outcome != "" && !q.Outcome.known() {
		return errprefix.Errorf("%w: a match of outcome %q, which is not an outcome", ErrInvalidConfig, truncate(string(q.Outcome), 80))
	}
	if q.Member != "" {
		if _, err := MemberPath(q.Member); err != nil {
			return err
		}
	}
	if q.Member == "" && q.Equals != "" {
		return errprefix.Errorf("%w: a match with a value to equal and no member", ErrInvalidConfig)
	}
	return nil
}

// maxQueryTools bounds the tools of one query.
const maxQueryTools = 64

// checkQuery checks what every query of a ScopeLog has.
func checkQuery(tools []string, now time.Time, window time.Duration) error {
	switch {
	case len(tools) == 0 || len(tools) > maxQueryTools:
		return errprefix.Errorf("%w: a query of the scope log names %d tools, want 1 to %d", ErrInvalidConfig, len(tools), maxQueryTools)
	case window <= 0:
		return errprefix.Errorf("%w: a query of the scope log has a window of %s, want a positive one", ErrInvalidConfig, window)
	case now.IsZero():
		return errprefix.Errorf("%w: a query of the scope log has no time", ErrInvalidConfig)
	}
	for i, name := range tools {
		if !plainName(name) {
			return errprefix.Errorf("%w: a query of the scope log names the tool %q, which is no tool name", ErrInvalidConfig, truncate(name, 80))
		}
		if slices.Contains(tools[:i], name) {
			return errprefix.Errorf("%w: a query of the scope log names the tool %q twice", ErrInvalidConfig, name)
		}
	}
	return nil
}

// plainName reports whether s is 1 to 64 ASCII letters, digits, '_' or
// '-': the form of a tool's name (tool.Definition) and of each name of a
// member path.
func plainName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// maxMemberDepth bounds the names of a member path.
const maxMemberDepth = 8

// MemberPath returns the member names of member, a JSON pointer of 1 to
// 8 names ("/refund/cents" is refund, cents), each 1 to 64 ASCII
// letters, digits, '_' or '-' (so that it needs no escape in any
// store's query language). Stores use it to read a query's Member; the
// slice is new on each call. Errors wrap ErrInvalidConfig.
func MemberPath(member string) ([]string, error) {
	names := strings.Split(member, "/")
	if len(names) < 2 || names[0] != "" || len(names) > maxMemberDepth+1 {
		return nil, errprefix.Errorf("%w: member %q is not a JSON pointer of 1 to %d member names", ErrInvalidConfig, truncate(member, 80), maxMemberDepth)
	}
	for _, n := range names[1:] {
		if !plainName(n) {
			return nil, errprefix.Errorf("%w: member %q: the name %q is not 1 to 64 ASCII letters, digits, '_' or '-'", ErrInvalidConfig, truncate(member, 80), truncate(n, 80))
		}
	}
	return names[1:], nil
}

// EventState is where an event's reservation stands.
type EventState string

// The states of an event.
const (
	// EventReserved: the call was admitted and its outcome is not
	// recorded yet: it runs, it waits to be recovered, or its process
	// died. Its reservation counts.
	EventReserved EventState = "reserved"
	// EventKept: the call's outcome is recorded (completed, suspended or
	// unknown) and its reservation still counts.
	EventKept EventState = "kept"
	// EventReleased: the call's effect did not happen (a definite failure
	// or rejection, or a recovery that found so): its reservation no
	// longer counts. The event stays in the log.
	EventReleased EventState = "released"
)

// Event is one call in the log of its scope. Stores copy it.
type Event struct {
	// Scope is the call's Call.Scope: 1 to 1024 bytes of UTF-8.
	Scope string `json:"scope"`
	// ID is the call's idempotency key, which names it in its scope: 1
	// to 1024 bytes of UTF-8.
	ID string `json:"id"`
	// Tool is the called tool's name.
	Tool string `json:"tool"`
	// Arguments are the arguments the call was admitted with: a JSON
	// object of at most tool.MaxInputBytes, which a store keeps (and
	// lists) as canonical JSON (compact, members sorted by name, strings
	// escaped the one way RFC 8785 does, numbers as written).
	Arguments json.RawMessage `json:"arguments"`
	// At is when the call was admitted, on the clock of the Dispatcher
	// that admitted it.
	At time.Time `json:"at"`
	// KeepUntil is when the store may delete the event
	// (DeleteExpiredEvents): At plus the Dispatcher's event retention
	// (Config.EventRetention), no earlier than At.
	KeepUntil time.Time `json:"keep_until"`
	// State is where its reservation stands.
	State EventState `json:"state"`
	// Outcome is the kind of the call's outcome once recorded; empty
	// while it is in flight.
	Outcome Kind `json:"outcome,omitempty"`
}

// Validate reports whether e is an event a store can keep: a scope and
// an ID of 1 to 1024 bytes of UTF-8, a tool name, arguments that are one
// JSON object of at most tool.MaxInputBytes, non-zero times with
// KeepUntil not before At, a known State, and an Outcome that is empty
// or a Kind (none while reserved). Errors wrap ErrInvalidRecord.
func (e Event) Validate() error {
	bad := func(format string, args ...any) error {
		return errprefix.Errorf("%w: event %q of scope %q: %s", ErrInvalidRecord, truncate(e.ID, 80), truncate(e.Scope, 80), fmt.Sprintf(format, args...))
	}
	switch {
	case e.Scope == "" || len(e.Scope) > maxRecordText || !utf8.ValidString(e.Scope):
		return bad("the scope is not 1 to %d bytes of UTF-8", maxRecordText)
	case e.ID == "" || len(e.ID) > maxRecordText || !utf8.ValidString(e.ID):
		return bad("the ID is not 1 to %d bytes of UTF-8", maxRecordText)
	case !plainName(e.Tool):
		return bad("%q is no tool name", truncate(e.Tool, 80))
	case len(e.Arguments) > tool.MaxInputBytes:
		return bad("the arguments are %d bytes, more than %d", len(e.Arguments), tool.MaxInputBytes)
	case !jsontext.Value(e.Arguments).IsValid() || jsontext.Value(e.Arguments).Kind() != '{':
		return bad("the arguments are not one JSON object")
	case e.At.IsZero() || e.KeepUntil.IsZero() || e.KeepUntil.Before(e.At):
		return bad("At and KeepUntil are required, and KeepUntil is not before At")
	case e.State != EventReserved && e.State != EventKept && e.State != EventReleased:
		return bad("state %q is not an event state", truncate(string(e.State), 80))
	case e.Outcome != "" && !e.Outcome.known():
		return bad("outcome %q is not an outcome", truncate(string(e.Outcome), 80))
	case e.State == EventReserved && e.Outcome != "":
		return bad("a reserved event has no outcome yet")
	case e.State == EventKept && e.Outcome == "":
		return bad("a kept event has an outcome")
	}
	return nil
}

// Number returns the number at member (a path, as WindowQuery.Member) of
// e's arguments, and whether there is one that a sum counts: a JSON
// number that is 0 or of a magnitude above 1e-300 and below 1e308,
// parsed as float64. It is what ScopeLog.Totals adds: every store reads
// members with it, so that a limit counts the same on each. An invalid
// member gives false.
func (e Event) Number(member string) (float64, bool) {
	path, err := MemberPath(member)
	if err != nil {
		return 0, false
	}
	return memberNumber(e.Arguments, path)
}

// Text returns the string at member (a path, as WindowQuery.Member) of
// e's arguments, and whether there is one: what MatchQuery.Equals is
// compared with. An invalid member gives false.
func (e Event) Text(member string) (string, bool) {
	path, err := MemberPath(member)
	if err != nil {
		return "", false
	}
	return memberString(e.Arguments, path)
}

// EventQuery selects events for EventStore.Events: those of Scope
// admitted at or after Since (the zero time for all), in the order of
// their times (then of their IDs), at most Limit of them (0 or less for
// all).
type EventQuery struct {
	Scope string
	Since time.Time
	Limit int
}

// known reports whether k is one of the kinds of outcome.
func (k Kind) known() bool {
	switch k {
	case KindCompleted, KindSuspended, KindFailed, KindRejected, KindUnknownTool, KindUnknown:
		return true
	}
	return false
}

// Settle returns the event e becomes when SettleEvent records outcome
// (empty: the recorded one stays) and release for it; e itself is not
// changed. A reserved event becomes EventKept once it has an outcome, or
// EventReleased with release; a kept one stays kept, or is released; a
// released one stays released. Stores apply it so that they agree on
// every step. Errors wrap ErrInvalidRecord: an outcome that is not a
// Kind, or another outcome than the one recorded.
func (e Event) Settle(outcome Kind, release bool) (Event, error) {
	switch {
	case outcome != "" && !outcome.known():
		return Event{}, errprefix.Errorf("%w: event %q of scope %q settled with outcome %q, which is not an outcome", ErrInvalidRecord, truncate(e.ID, 80), truncate(e.Scope, 80), truncate(string(outcome), 80))
	case outcome != "" && e.Outcome != "" && outcome != e.Outcome:
		return Event{}, errprefix.Errorf("%w: event %q of scope %q has outcome %s and was settled with outcome %s: an outcome is recorded once", ErrInvalidRecord, truncate(e.ID, 80), truncate(e.Scope, 80), e.Outcome, outcome)
	}
	if outcome != "" {
		e.Outcome = outcome
	}
	switch {
	case e.State == EventReleased || release:
		e.State = EventReleased
	case e.Outcome != "":
		e.State = EventKept
	}
	return e, nil
}
