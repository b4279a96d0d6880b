package tool_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
)

func coreBindNamed(t testing.TB, name string) tool.Binding {
	t.Helper()
	return mustBind(t, newCoreTool(coreDefinition(name)))
}

func registeredNames(r *tool.Registry) []string {
	var names []string
	for _, d := range r.Definitions() {
		names = append(names, d.Name)
	}
	return names
}

func TestRegistryZeroValue(t *testing.T) {
	var r tool.Registry
	require.Empty(t, r.Definitions())
	_, ok := r.Resolve("weather")
	require.False(t, ok)
	require.NoError(t, r.Register(coreBindNamed(t, "weather")))
	b, ok := r.Resolve("weather")
	require.True(t, ok)
	require.Equal(t, "weather", b.Contract().Name())
}

func TestNewRegistry(t *testing.T) {
	r, err := tool.NewRegistry()
	require.NoError(t, err)
	require.Empty(t, r.Definitions())

	r, err = tool.NewRegistry(coreBindNamed(t, "b"), coreBindNamed(t, "a"))
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b"}, registeredNames(r))

	r, err = tool.NewRegistry(coreBindNamed(t, "a"), coreBindNamed(t, "a"))
	require.ErrorIs(t, err, tool.ErrDuplicateTool)
	require.Nil(t, r)

	r, err = tool.NewRegistry(tool.Binding{})
	require.ErrorIs(t, err, tool.ErrInvalidTool)
	require.Nil(t, r)
}

func TestRegistryRegisterIsAllOrNothing(t *testing.T) {
	tests := []struct {
		name  string
		batch []tool.Binding
		err   error
		msg   string
	}{
		{"duplicate inside the batch", []tool.Binding{coreBindNamed(t, "c"), coreBindNamed(t, "d"), coreBindNamed(t, "c")}, tool.ErrDuplicateTool, `tool: duplicate tool: "c" appears twice in the batch`},
		{"already registered", []tool.Binding{coreBindNamed(t, "c"), coreBindNamed(t, "a")}, tool.ErrDuplicateTool, `tool: duplicate tool: "a" is already registered`},
		{"the same binding again", nil, tool.ErrDuplicateTool, `tool: duplicate tool: "b" is already registered`},
		{"zero binding", []tool.Binding{coreBindNamed(t, "c"), {}}, tool.ErrInvalidTool, "tool: invalid tool: binding 1 is the zero Binding"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := coreBindNamed(t, "a"), coreBindNamed(t, "b")
			r, err := tool.NewRegistry(a, b)
			require.NoError(t, err)
			batch := tt.batch
			if batch == nil {
				batch = []tool.Binding{coreBindNamed(t, "c"), b}
			}
			err = r.Register(batch...)
			require.ErrorIs(t, err, tt.err)
			require.EqualError(t, err, tt.msg)
			require.Equal(t, []string{"a", "b"}, registeredNames(r), "nothing of the batch was added")
			_, ok := r.Resolve("c")
			require.False(t, ok)
		})
	}
}

func TestRegistryNil(t *testing.T) {
	var r *tool.Registry
	err := r.Register(coreBindNamed(t, "a"))
	require.ErrorIs(t, err, tool.ErrInvalidRegistry)
	require.EqualError(t, err, "tool: invalid registry: nil Registry")
	_, ok := r.Resolve("a")
	require.False(t, ok)
	require.Nil(t, r.Definitions())
}

func TestRegistryResolveRunsTheBinding(t *testing.T) {
	executable := newCoreTool(coreDefinition("weather"))
	r, err := tool.NewRegistry(mustBind(t, executable), coreBindNamed(t, "other"))
	require.NoError(t, err)
	b, ok := r.Resolve("weather")
	require.True(t, ok)
	inv, err := b.Contract().Prepare(tool.Request{Name: "weather", Arguments: `{}`}, tool.Admission{})
	require.NoError(t, err)
	_, err = b.Call(context.Background(), inv)
	require.NoError(t, err)
	require.Equal(t, 1, executable.ran())
	_, ok = r.Resolve("Weather")
	require.False(t, ok, "names are case-sensitive")
}

func TestRegistryDefinitionsSortedAndDetached(t *testing.T) {
	r, err := tool.NewRegistry(coreBindNamed(t, "zeta"), coreBindNamed(t, "Alpha"), coreBindNamed(t, "alpha"), coreBindNamed(t, "_x"), coreBindNamed(t, "9"))
	require.NoError(t, err)
	require.Equal(t, []string{"9", "Alpha", "_x", "alpha", "zeta"}, registeredNames(r), "byte order")

	defs := r.Definitions()
	want := r.Definitions()
	defs[0].Name = "changed"
	defs[0].InputSchema[0] = 'X'
	defs[1].Description = "changed"
	copy(defs[1:], defs[2:])
	require.Equal(t, want, r.Definitions())
	b, ok := r.Resolve("9")
	require.True(t, ok)
	require.Equal(t, byte('{'), b.Contract().Definition().InputSchema[0])
}

func TestRegistryConcurrentUse(t *testing.T) {
	var r tool.Registry
	const n = 16
	bindings := make([]tool.Binding, n)
	for i := range bindings {
		bindings[i] = coreBindNamed(t, fmt.Sprintf("tool_%02d", i))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4*n)
	for i := range n {
		wg.Go(func() { errs <- r.Register(bindings[i]) })
		// Every binding is registered twice, concurrently: one of the two
		// loses the race with ErrDuplicateTool, none is added twice.
		wg.Go(func() { errs <- r.Register(bindings[(i+1)%n]) })
		wg.Go(func() {
			defs := r.Definitions()
			for j := 1; j < len(defs); j++ {
				if defs[j-1].Name >= defs[j].Name {
					errs <- fmt.Errorf("unsorted: %q before %q", defs[j-1].Name, defs[j].Name)
				}
			}
			if b, ok := r.Resolve(fmt.Sprintf("tool_%02d", i)); ok && b.Contract().Name() != fmt.Sprintf("tool_%02d", i) {
				errs <- fmt.Errorf("resolved %q", b.Contract().Name())
			}
		})
	}
	wg.Wait()
	close(errs)
	duplicates := 0
	for err := range errs {
		if err != nil {
			require.ErrorIs(t, err, tool.ErrDuplicateTool, "only a lost race may fail")
			duplicates++
		}
	}
	require.Equal(t, n, duplicates, "each binding was registered exactly once")
	require.Len(t, r.Definitions(), n)
}
