package sqlstore

import (
	"context"
	"strings"

	"github.com/agentcontract/tool/dispatch"
)

// sqlLog is the dispatch.ScopeLog of one scope inside the transaction of
// a ReserveEvent, which holds the scope's lock.
//
// The database selects the events (the index on scope, tool and at:
// those of the query's tools in its window) and counts them; the members
// of their arguments are read here, by dispatch.Event's Number and Text,
// as every store reads them, so that a limit counts the same on each
// dialect and in memory. (No SQL function reads JSON the same way on
// both dialects: PostgreSQL refuses a document that holds \u0000 and
// fails on numbers beyond its range, so a sum read there could differ
// from, or fail on, what the dispatcher admitted.) A query with a member
// costs the transfer of the arguments of the events in its window.
type sqlLog struct {
	s     *Store
	ctx   context.Context
	q     querier
	scope []byte
}

// window returns the conditions and arguments every query of the log
// starts with: the scope, the tools, and the events after since.
func (l *sqlLog) window(tools []string, since int64) (string, []any) {
	args := []any{l.scope}
	for _, t := range tools {
		args = append(args, t)
	}
	args = append(args, since)
	return "scope = ? AND tool IN (?" + strings.Repeat(", ?", len(tools)-1) + ") AND at > ?", args
}

// Totals implements [dispatch.ScopeLog]'s Totals: a count of the events
// of the tools in the window that hold a reservation, or, with a member,
// their arguments, whose numbers are added here.
func (l *sqlLog) Totals(wq dispatch.WindowQuery) (dispatch.Totals, error) {
	if err := wq.Validate(); err != nil {
		return dispatch.Totals{}, err
	}
	where, args := l.window(wq.Tools, clampNanos(wq.Now.Add(-wq.Window)))
	where += " AND state <> 'released'"
	var t dispatch.Totals
	if wq.Member == "" {
		query := l.s.dialect.sql(l.s.prefix, "SELECT count(*) FROM {p}scope_events WHERE "+where)
		if err := l.q.QueryRowContext(l.ctx, query, args...).Scan(&t.Count); err != nil {
			return dispatch.Totals{}, l.s.fail(l.ctx, "counting the events of a scope", err)
		}
		return t, nil
	}
	query := l.s.dialect.sql(l.s.prefix, "SELECT arguments FROM {p}scope_events WHERE "+where)
	err := l.s.each(l.ctx, l.q, "adding up the events of a scope", query, args, func(scan func(...any) error) error {
		var e dispatch.Event
		if err := scan((*[]byte)(&e.Arguments)); err != nil {
			return err
		}
		t.Count++
		if n, ok := e.Number(wq.Member); ok {
			t.Sum += n
		}
		return nil
	})
	if err != nil {
		return dispatch.Totals{}, err
	}
	if t.Count == 0 {
		t.Sum = 0
	}
	return t, nil
}

// errFound ends the reading of the rows of Exists at the first match.
type errFound struct{}

func (errFound) Error() string { return "found" }

// Exists implements [dispatch.ScopeLog]'s Exists: one EXISTS over the
// events of the tools in the window, or, with a member, their
// arguments, newest first, until one matches.
func (l *sqlLog) Exists(mq dispatch.MatchQuery) (bool, error) {
	if err := mq.Validate(); err != nil {
		return false, err
	}
	where, args := l.window(mq.Tools, clampNanos(mq.Now.Add(-mq.Window)))
	if mq.Outcome != "" {
		where += " AND outcome = ?"
		args = append(args, string(mq.Outcome))
	}
	if mq.Member == "" {
		var found bool
		query := l.s.dialect.sql(l.s.prefix, "SELECT EXISTS (SELECT 1 FROM {p}scope_events WHERE "+where+")")
		if err := l.q.QueryRowContext(l.ctx, query, args...).Scan(&found); err != nil {
			return false, l.s.fail(l.ctx, "matching the events of a scope", err)
		}
		return found, nil
	}
	query := l.s.dialect.sql(l.s.prefix, "SELECT arguments FROM {p}scope_events WHERE "+where+" ORDER BY at DESC")
	err := l.s.each(l.ctx, l.q, "matching the events of a scope", query, args, func(scan func(...any) error) error {
		var e dispatch.Event
		if err := scan((*[]byte)(&e.Arguments)); err != nil {
			return err
		}
		if v, ok := e.Text(mq.Member); ok && v == mq.Equals {
			return errFound{}
		}
		return nil
	})
	switch err.(type) {
	case nil:
		return false, nil
	case errFound:
		return true, nil
	}
	return false, err
}
