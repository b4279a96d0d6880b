package dispatch

import (
	"slices"
	"time"
)

// The indexes of a scope's log in a MemoryStore, which answer a rule's
// question without reading the log: all of them belong to one memScope
// and are guarded by its mutex.
//
// For each tool, its events in the order of their times, and:
//
//   - for each (member, window) asked about, a running total: the
//     events after the window's start time (its since), counted and
//     added up. When since moves on, the events it passes leave the
//     total; when it moves back (a clock that went back), they come in
//     again; a new event comes in when it is after since, a released one
//     leaves when it was in. A decision moves since by what the clock
//     moved since the last one: nothing is read twice.
//   - the latest time of an event of each outcome ("" for any event),
//     and, for each member asked about, of each string value of that
//     member and each outcome: Exists looks up one time and compares it
//     with its since.
//
// Deleting events (expiry, an event reserved again) drops a tool's
// indexes; the next question builds them again from its events.

// toolLog is the events of one tool in a scope, with their indexes.
type toolLog struct {
	list    []*memEvent // in the order of At, then of insertion
	windows map[windowKey]*runningTotal
	latest  map[Kind]time.Time
	byValue map[string]map[string]map[Kind]time.Time // member, value, outcome
}

// windowKey names a running total.
type windowKey struct {
	member string
	window time.Duration
}

// runningTotal is the count and sum of the held events of list[front:],
// which are those after since.
type runningTotal struct {
	member string
	path   []string
	since  time.Time
	front  int
	count  int64
	sum    float64
}

// add counts ev in t, or takes it out when sign is -1.
func (t *runningTotal) add(ev *memEvent, sign int64) {
	if !ev.held() {
		return
	}
	t.count += sign
	if t.member != "" {
		if v, ok := ev.number(t.member, t.path); ok {
			t.sum += float64(sign) * v
		}
	}
	if t.count == 0 {
		t.sum = 0 // no drift of a float64 sum of nothing
	}
}

// moveTo moves t's start to since.
func (t *runningTotal) moveTo(list []*memEvent, since time.Time) {
	for t.front < len(list) && !list[t.front].At.After(since) {
		t.add(list[t.front], -1)
		t.front++
	}
	for t.front > 0 && list[t.front-1].At.After(since) {
		t.front--
		t.add(list[t.front], 1)
	}
	t.since = since
}

func (sc *memScope) tool(name string) *toolLog {
	tl := sc.tools[name]
	if tl == nil {
		tl = &toolLog{}
		sc.tools[name] = tl
	}
	return tl
}

// insert adds ev, reserved, to the scope's log and its indexes.
func (sc *memScope) insert(ev *memEvent) {
	sc.events[ev.ID] = ev
	tl := sc.tool(ev.Tool)
	p := len(tl.list)
	for p > 0 && tl.list[p-1].At.After(ev.At) {
		p--
	}
	tl.list = append(tl.list, nil)
	copy(tl.list[p+1:], tl.list[p:])
	tl.list[p] = ev
	for _, t := range tl.windows {
		if ev.At.After(t.since) {
			t.add(ev, 1)
		} else {
			t.front++
		}
	}
	tl.seen(ev, "")
}

// seen records ev's time in the latest-time indexes of tl under outcome.
func (tl *toolLog) seen(ev *memEvent, outcome Kind) {
	if tl.latest != nil {
		later(tl.latest, outcome, ev.At)
	}
	for member, values := range tl.byValue {
		path, _ := MemberPath(member)
		if v, ok := memberString(ev.Arguments, path); ok {
			byKind := values[v]
			if byKind == nil {
				byKind = map[Kind]time.Time{}
				values[v] = byKind
			}
			later(byKind, outcome, ev.At)
		}
	}
}

// later sets m[k] to at when at is later.
func later(m map[Kind]time.Time, k Kind, at time.Time) {
	if at.After(m[k]) {
		m[k] = at
	}
}

// settle moves ev to state with outcome, and its indexes with it.
func (sc *memScope) settle(ev *memEvent, state EventState, outcome Kind) {
	tl := sc.tool(ev.Tool)
	if ev.held() && state == EventReleased {
		for _, t := range tl.windows {
			if ev.At.After(t.since) {
				t.add(ev, -1)
			}
		}
	}
	recorded := ev.Outcome
	ev.State, ev.Outcome = state, outcome
	if recorded == "" && outcome != "" {
		tl.seen(ev, outcome)
	}
}

// remove takes ev out of the scope's log and drops its tool's indexes.
func (sc *memScope) remove(ev *memEvent) {
	delete(sc.events, ev.ID)
	tl := sc.tool(ev.Tool)
	for i, other := range tl.list {
		if other == ev {
			tl.list = slices.Delete(tl.list, i, i+1)
			break
		}
	}
	tl.drop()
}

// prune takes the events no longer in sc.events out of the tools' lists,
// and drops the indexes of the tools that lost some.
func (sc *memScope) prune() {
	for name, tl := range sc.tools {
		kept := tl.list[:0]
		for _, ev := range tl.list {
			if sc.events[ev.ID] == ev {
				kept = append(kept, ev)
			}
		}
		if len(kept) == len(tl.list) {
			continue
		}
		clear(tl.list[len(kept):])
		tl.list = kept
		tl.drop()
		if len(kept) == 0 {
			delete(sc.tools, name)
		}
	}
}

// drop forgets tl's indexes, to be built again when asked for.
func (tl *toolLog) drop() {
	tl.windows, tl.latest, tl.byValue = nil, nil, nil
}

// memLog is the ScopeLog of a locked memScope.
type memLog struct {
	scope *memScope
}

// Totals implements ScopeLog.Totals from the running totals of each tool.
func (l *memLog) Totals(q WindowQuery) (Totals, error) {
	if err := q.Validate(); err != nil {
		return Totals{}, err
	}
	var path []string
	if q.Member != "" {
		path, _ = MemberPath(q.Member)
	}
	since := q.Now.Add(-q.Window)
	var out Totals
	for _, name := range q.Tools {
		tl := l.scope.tools[name]
		if tl == nil {
			continue
		}
		key := windowKey{member: q.Member, window: q.Window}
		t := tl.windows[key]
		if t == nil {
			if tl.windows == nil {
				tl.windows = map[windowKey]*runningTotal{}
			}
			t = &runningTotal{member: q.Member, path: path, since: since, front: len(tl.list)}
			tl.windows[key] = t
		}
		t.moveTo(tl.list, since)
		out.Count += t.count
		out.Sum += t.sum
	}
	return out, nil
}

// Exists implements ScopeLog.Exists from the latest time of each
// outcome, or of each value of the member asked about.
func (l *memLog) Exists(q MatchQuery) (bool, error) {
	if err := q.Validate(); err != nil {
		return false, err
	}
	since := q.Now.Add(-q.Window)
	for _, name := range q.Tools {
		tl := l.scope.tools[name]
		if tl == nil {
			continue
		}
		var byKind map[Kind]time.Time
		if q.Member == "" {
			byKind = tl.latestTimes()
		} else {
			byKind = tl.valueTimes(q.Member)[q.Equals]
		}
		if byKind[q.Outcome].After(since) {
			return true, nil
		}
	}
	return false, nil
}

// latestTimes returns tl's latest time of each outcome, built from its
// events when it was dropped.
func (tl *toolLog) latestTimes() map[Kind]time.Time {
	if tl.latest == nil {
		tl.latest = map[Kind]time.Time{}
		for _, ev := range tl.list {
			later(tl.latest, "", ev.At)
			if ev.Outcome != "" {
				later(tl.latest, ev.Outcome, ev.At)
			}
		}
	}
	return tl.latest
}

// valueTimes returns the latest time of each outcome of each string value
// of member among tl's events, built from them when first asked for.
func (tl *toolLog) valueTimes(member string) map[string]map[Kind]time.Time {
	if values, ok := tl.byValue[member]; ok {
		return values
	}
	path, _ := MemberPath(member)
	values := map[string]map[Kind]time.Time{}
	for _, ev := range tl.list {
		v, ok := memberString(ev.Arguments, path)
		if !ok {
			continue
		}
		byKind := values[v]
		if byKind == nil {
			byKind = map[Kind]time.Time{}
			values[v] = byKind
		}
		later(byKind, "", ev.At)
		if ev.Outcome != "" {
			later(byKind, ev.Outcome, ev.At)
		}
	}
	if tl.byValue == nil {
		tl.byValue = map[string]map[string]map[Kind]time.Time{}
	}
	tl.byValue[member] = values
	return values
}
