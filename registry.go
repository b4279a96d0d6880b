package tool

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Registry is a set of Bindings by tool name.
//
// The zero Registry is empty and ready to use. All methods are safe for
// concurrent use. A Registry holds Bindings, which are immutable, and hands
// out copies of their Definitions.
type Registry struct {
	mu       sync.RWMutex
	bindings map[string]Binding
}

// NewRegistry returns a Registry holding initial; see Register for the
// errors.
func NewRegistry(initial ...Binding) (*Registry, error) {
	r := &Registry{}
	if err := r.Register(initial...); err != nil {
		return nil, err
	}
	return r, nil
}

// Register adds bindings, all or none. A zero Binding is an error wrapping
// ErrInvalidTool; a name given twice in the batch or already registered
// wraps ErrDuplicateTool; a nil Registry wraps ErrInvalidRegistry. On error
// nothing is added.
func (r *Registry) Register(bindings ...Binding) error {
	if r == nil {
		return fmt.Errorf("%w: nil Registry", ErrInvalidRegistry)
	}
	batch := make(map[string]struct{}, len(bindings))
	for i, b := range bindings {
		if b.contract.core == nil || b.tool == nil {
			return fmt.Errorf("%w: binding %d is the zero Binding", ErrInvalidTool, i)
		}
		name := b.contract.Name()
		if _, dup := batch[name]; dup {
			return fmt.Errorf("%w: %q appears twice in the batch", ErrDuplicateTool, name)
		}
		batch[name] = struct{}{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for name := range batch {
		if _, dup := r.bindings[name]; dup {
			return fmt.Errorf("%w: %q is already registered", ErrDuplicateTool, name)
		}
	}
	if r.bindings == nil {
		r.bindings = make(map[string]Binding, len(bindings))
	}
	for _, b := range bindings {
		r.bindings[b.contract.Name()] = b
	}
	return nil
}

// Resolve returns the Binding registered under name. A nil Registry holds
// nothing.
func (r *Registry) Resolve(name string) (Binding, bool) {
	if r == nil {
		return Binding{}, false
	}
	r.mu.RLock()
	b, ok := r.bindings[name]
	r.mu.RUnlock()
	return b, ok
}

// Definitions returns copies of the registered definitions, sorted by name:
// the list to advertise to a model. The caller owns the result.
func (r *Registry) Definitions() []Definition {
	if r == nil {
		return nil
	}
	r.mu.RLock()
	defs := make([]Definition, 0, len(r.bindings))
	for _, b := range r.bindings {
		defs = append(defs, b.contract.Definition())
	}
	r.mu.RUnlock()
	slices.SortFunc(defs, func(a, b Definition) int { return strings.Compare(a.Name, b.Name) })
	return defs
}
