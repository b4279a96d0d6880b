package engine

import (
	"maps"
	"slices"
	"strconv"
)

// multiset counts how many times each subschema applies to one location.
type multiset = map[*node]int

// locationWalk counts [Analysis.Located]. It follows the value down, one
// location at a time, with the multiset of subschemas entering that
// location, until no new multiset appears or the nesting bound is
// reached. It is used by one goroutine, once.
type locationWalk struct {
	limit     int // counts saturate at limit+1
	saturated int
	anchors   map[string][]*node
	work      int // steps taken, against MaxWork

	onPath map[*node]bool    // subschemas on the current path of apply
	static map[*node][]*node // memo of staticSameLocation
	ids    map[*node]int     // first-seen order, for stable keys
	seen   map[string]bool   // keys of the multisets already queued
}

// walkLocation is one location of a value: the multiset of subschemas
// entering it, and the depth of the value there (the root value is at 1).
type walkLocation struct {
	entering multiset
	depth    int
}

func newLocationWalk(anchors map[string][]*node, limit int) *locationWalk {
	return &locationWalk{
		limit:     limit,
		saturated: limit + 1,
		anchors:   anchors,
		onPath:    map[*node]bool{},
		static:    map[*node][]*node{},
		ids:       map[*node]int{},
		seen:      map[string]bool{},
	}
}

// run returns the largest number of subschemas applied to one location of
// a value validated against root, and false when counting it would take
// more than MaxWork steps.
func (w *locationWalk) run(root *node, maxDepth int) (visits int, bounded bool) {
	applied := multiset{} // reused: cleared for every location
	queue := []walkLocation{{entering: multiset{root: 1}, depth: 1}}
	w.seen[w.key(queue[0].entering)] = true
	for len(queue) > 0 {
		loc := queue[0]
		queue = queue[1:]

		clear(applied)
		total := w.applyAll(loc.entering, applied)
		visits = max(visits, total)
		if total > w.limit {
			return visits, true
		}
		if w.work > MaxWork {
			return visits, false
		}
		if loc.depth > maxDepth {
			continue // a value this deep holds no arrays or objects
		}
		queue = w.enqueueChildren(queue, applied, loc.depth+1)
	}
	return visits, true
}

// applyAll fills applied with everything applied at a location the
// subschemas of entering enter, with multiplicity, and returns how many
// applications there are. It stops once the count exceeds the limit.
func (w *locationWalk) applyAll(entering, applied multiset) int {
	total := 0
	for _, s := range w.sorted(entering) {
		clear(w.onPath)
		total = min(total+w.apply(s, entering[s], applied), w.saturated)
		if total > w.limit {
			break
		}
	}
	return total
}

// enqueueChildren appends to queue, at depth, every location below one
// where applied apply whose multiset was not seen before.
func (w *locationWalk) enqueueChildren(queue []walkLocation, applied multiset, depth int) []walkLocation {
	for _, child := range childMultisets(applied, w.saturated) {
		w.work += len(child)
		k := w.key(child)
		if !w.seen[k] {
			w.seen[k] = true
			queue = append(queue, walkLocation{entering: child, depth: depth})
		}
	}
	return queue
}

// apply adds to applied the subschemas that n applications of s apply to
// the same location, s included, and returns how many there are. A
// subschema already on the path is counted and not followed, as the
// validator stops the cycle there. It gives up past the limit.
func (w *locationWalk) apply(s *node, n int, applied multiset) int {
	w.work++
	if w.onPath[s] {
		return n
	}
	applied[s] = min(applied[s]+n, w.saturated)
	total := n
	w.onPath[s] = true
	defer func() { w.onPath[s] = false }()
	subs, ok := w.static[s]
	if !ok {
		subs = staticSameLocation(s)
		w.static[s] = subs
	}
	for _, sub := range subs {
		total = min(total+w.apply(sub, n, applied), w.saturated)
		if total > w.limit {
			return total
		}
	}
	if targets := dynamicTargets(s, w.anchors); len(targets) > 0 {
		total = min(total+w.applyDynamic(targets, n, applied), w.saturated)
	}
	return total
}

// applyDynamic applies n applications of the targets of one dynamic
// reference. Only one of them applies, so they are merged by taking the
// larger count of each subschema, not the sum, and the largest total is
// returned.
func (w *locationWalk) applyDynamic(targets []*node, n int, applied multiset) int {
	merged := multiset{}
	largest := 0
	for _, target := range targets {
		one := multiset{}
		largest = max(largest, w.apply(target, n, one))
		for x, k := range one {
			merged[x] = max(merged[x], k)
		}
	}
	for x, k := range merged {
		applied[x] = min(applied[x]+k, w.saturated)
	}
	return largest
}

// key renders m as a string that two multisets share exactly when they
// are equal.
func (w *locationWalk) key(m multiset) string {
	for s := range m {
		if _, ok := w.ids[s]; !ok {
			w.ids[s] = len(w.ids)
		}
	}
	var b []byte
	for _, s := range w.sorted(m) {
		b = strconv.AppendInt(b, int64(w.ids[s]), 10)
		b = append(b, '*')
		b = strconv.AppendInt(b, int64(m[s]), 10)
		b = append(b, ',')
	}
	return string(b)
}

// sorted returns the subschemas of m in the order of their ids.
func (w *locationWalk) sorted(m multiset) []*node {
	out := slices.AppendSeq(make([]*node, 0, len(m)), maps.Keys(m))
	slices.SortFunc(out, func(a, b *node) int { return w.ids[a] - w.ids[b] })
	return out
}
