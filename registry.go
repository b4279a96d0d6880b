package tool

import (
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Registry is a set of [Binding]s by tool name.
//
// The zero Registry is empty and ready to use. All methods are safe for
// concurrent use. A Registry holds Bindings, which are immutable, and hands
// out copies of their Definitions. Resolve and Definitions read a snapshot
// and write nothing shared, so lookups on many cores do not contend;
// Register copies the set, so it costs time in proportion to the tools
// already registered (register a batch at once rather than one by one).
type Registry struct {
	mu       sync.Mutex                         // serializes Register
	bindings atomic.Pointer[map[string]Binding] // never modified once stored
}

// NewRegistry returns a [Registry] holding initial; see Register for the
// errors.
func NewRegistry(initial ...Binding) (*Registry, error) {
	r := &Registry{}
	if err := r.Register(initial...); err != nil {
		return nil, err
	}
	return r, nil
}

// Register adds bindings, all or none. A zero [Binding] is an error wrapping
// [ErrInvalidTool]; a name given twice in the batch or already registered
// wraps [ErrDuplicateTool]; a nil [Registry] wraps [ErrInvalidRegistry]. On error
// nothing is added.
func (r *Registry) Register(bindings ...Binding) error {
	if r == nil {
		return errorf("%w: nil Registry", ErrInvalidRegistry)
	}
	batch := make(map[string]struct{}, len(bindings))
	for i, b := range bindings {
		if b.contract.core == nil || b.tool == nil {
			return errorf("%w: binding %d is the zero Binding", ErrInvalidTool, i)
		}
		name := b.contract.Name()
		if _, dup := batch[name]; dup {
			return errorf("%w: %q appears twice in the batch", ErrDuplicateTool, name)
		}
		batch[name] = struct{}{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	current := r.snapshot()
	for name := range batch {
		if _, dup := current[name]; dup {
			return errorf("%w: %q is already registered", ErrDuplicateTool, name)
		}
	}
	next := make(map[string]Binding, len(current)+len(bindings))
	maps.Copy(next, current)
	for _, b := range bindings {
		next[b.contract.Name()] = b
	}
	r.bindings.Store(&next)
	return nil
}

// snapshot returns the current set, which nobody modifies; nil when empty.
func (r *Registry) snapshot() map[string]Binding {
	if m := r.bindings.Load(); m != nil {
		return *m
	}
	return nil
}

// Resolve returns the [Binding] registered under name. A nil [Registry] holds
// nothing.
func (r *Registry) Resolve(name string) (Binding, bool) {
	if r == nil {
		return Binding{}, false
	}
	b, ok := r.snapshot()[name]
	return b, ok
}

// Definitions returns copies of the registered definitions, sorted by name:
// the list to advertise to a model. The caller owns the result.
func (r *Registry) Definitions() []Definition {
	if r == nil {
		return nil
	}
	current := r.snapshot()
	defs := make([]Definition, 0, len(current))
	for _, b := range current {
		defs = append(defs, b.contract.Definition())
	}
	slices.SortFunc(defs, func(a, b Definition) int { return strings.Compare(a.Name, b.Name) })
	return defs
}
