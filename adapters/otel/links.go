package toolotel

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/agentcontract/tool/dispatch"
)

// Links keeps, for each suspended call, the span context its resumption
// links to, under the checkpoint's ID, until the checkpoint expires.
// Implementations must be safe for concurrent use; a runtime that
// resumes in another process than the one that suspended shares one
// Links between them (a table beside the dispatch.Store, say).
//
// Neither method returns an error: a link that cannot be saved or loaded
// is a trace without that link, never a failed call. An implementation
// reports its own failures (a log line, a metric).
type Links interface {
	// Save keeps sc for checkpointID until expiresAt.
	Save(ctx context.Context, checkpointID string, sc trace.SpanContext, expiresAt time.Time)
	// Load returns what Save kept for checkpointID, and whether it did.
	Load(ctx context.Context, checkpointID string) (trace.SpanContext, bool)
}

// DefaultMemoryLinks is how many links the default MemoryLinks keeps.
const DefaultMemoryLinks = 10000

// MemoryLinks is a Links for one process: at most a fixed number of
// links, in memory. When it is full, Save drops the links whose
// checkpoint expired (by more than dispatch.MaxClockSkew, on this
// machine's clock), then the oldest. Safe for concurrent use.
type MemoryLinks struct {
	mu    sync.Mutex
	max   int
	now   func() time.Time
	links map[string]memoryLink
	order []string // IDs in the order saved; may name dropped links
}

type memoryLink struct {
	sc      trace.SpanContext
	expires time.Time
}

// NewMemoryLinks returns an empty MemoryLinks that keeps at most max
// links (DefaultMemoryLinks when max is 0 or less).
func NewMemoryLinks(max int) *MemoryLinks {
	if max <= 0 {
		max = DefaultMemoryLinks
	}
	return &MemoryLinks{max: max, now: time.Now, links: make(map[string]memoryLink)}
}

// Save keeps sc for checkpointID until expiresAt; see Links.
func (m *MemoryLinks) Save(_ context.Context, checkpointID string, sc trace.SpanContext, expiresAt time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.links[checkpointID]; !ok && len(m.links) >= m.max {
		m.makeRoom()
	}
	m.links[checkpointID] = memoryLink{sc: sc, expires: expiresAt}
	m.order = append(m.order, checkpointID)
	if len(m.order) > 2*m.max {
		m.compact()
	}
}

// makeRoom drops the expired links, or else the oldest.
func (m *MemoryLinks) makeRoom() {
	now := m.now().Add(-dispatch.MaxClockSkew)
	for id, l := range m.links {
		if now.After(l.expires) {
			delete(m.links, id)
		}
	}
	for len(m.links) >= m.max && len(m.order) > 0 {
		delete(m.links, m.order[0])
		m.order = m.order[1:]
	}
}

// compact keeps order from growing without bound: it drops the names of
// links no longer kept, and repeated names.
func (m *MemoryLinks) compact() {
	{
		kept := make([]string, 0, len(m.links))
		seen := make(map[string]bool, len(m.links))
		for i := len(m.order) - 1; i >= 0; i-- {
			id := m.order[i]
			if _, ok := m.links[id]; ok && !seen[id] {
				seen[id] = true
				kept = append(kept, id)
			}
		}
		for i, j := 0, len(kept)-1; i < j; i, j = i+1, j-1 {
			kept[i], kept[j] = kept[j], kept[i]
		}
		m.order = kept
	}
}

// Load returns the link kept for checkpointID. An expired link is
// returned while it is kept, so that the refusal of a late answer is
// linked to its suspension too: the Dispatcher, not Links, judges expiry.
func (m *MemoryLinks) Load(_ context.Context, checkpointID string) (trace.SpanContext, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.links[checkpointID]
	return l.sc, ok
}

// Len returns how many links m keeps, expired ones included until they
// are dropped.
func (m *MemoryLinks) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.links)
}
