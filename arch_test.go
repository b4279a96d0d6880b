package tool_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
)

const modulePath = "github.com/agentcontract/tool"

// retained is one field, found by reflection, that can hold code or a
// channel: a func, an interface or a chan.
type retained struct {
	path string
	typ  reflect.Type
}

// retainedCode walks t through this module's own struct types (exported
// and unexported fields alike, through pointers, slices, arrays and maps)
// and lists every func, interface and chan it reaches. Types of other
// modules are not entered.
func retainedCode(t reflect.Type) (found []retained, structs []string) {
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type, path string)
	walk = func(t reflect.Type, path string) {
		switch t.Kind() {
		case reflect.Func, reflect.Interface, reflect.Chan:
			found = append(found, retained{path, t})
		case reflect.Pointer, reflect.Slice, reflect.Array:
			walk(t.Elem(), path)
		case reflect.Map:
			walk(t.Key(), path+"[key]")
			walk(t.Elem(), path+"[value]")
		case reflect.Struct:
			if seen[t] || !strings.HasPrefix(t.PkgPath(), modulePath) {
				return
			}
			seen[t] = true
			structs = append(structs, t.String())
			for i := range t.NumField() {
				f := t.Field(i)
				walk(f.Type, path+"."+f.Name)
			}
		}
	}
	walk(t, t.String())
	return found, structs
}

// jsonData are the interfaces an Invocation holds, each of which holds
// data decoded from JSON text, which the walk cannot see through an
// interface: the input a Func decoded at Prepare, kept for its first Call
// (only the decode of a Func sets it, always to a *In), and the const and
// enum values of a compiled schema (trees of maps, slices, strings,
// json.Number, booleans and nil).
var jsonData = []string{".decoded.value", ".constant", ".enum.values"}

// withoutJSONData drops the JSON data from found.
func withoutJSONData(t *testing.T, found []retained) []retained {
	t.Helper()
	var rest []retained
	for _, f := range found {
		if slices.ContainsFunc(jsonData, func(suffix string) bool { return strings.HasSuffix(f.path, suffix) }) {
			require.Equal(t, reflect.Interface, f.typ.Kind(), f.path)
			require.Zero(t, f.typ.NumMethod(), f.path)
			continue
		}
		rest = append(rest, f)
	}
	return rest
}

func TestArchInvocationHoldsDataOnly(t *testing.T) {
	found, structs := retainedCode(reflect.TypeFor[tool.Invocation]())
	require.Empty(t, withoutJSONData(t, found), "an Invocation must not retain code, interfaces or channels")
	require.Contains(t, structs, "tool.Continuation", "the walk goes through pointers")
	require.Contains(t, structs, "tool.Definition", "the walk goes through the frozen contract")
	require.Contains(t, structs, "tool.Schema")
}

// TestArchContractHoldsOnlyItsValidator: the one thing a Contract keeps
// beside its frozen core is its admission, behind one interface: either
// the tool's input validator, which reads the argument bytes and returns
// an error, or the typed admission of a Func, which holds the engine's
// decoder of In (types and offsets: data, no code of the tool's). Either
// admission returns, for a Func, the decoded input to hand to the first
// Call: data only, like an Invocation, which holds it.
func TestArchContractHoldsOnlyItsValidator(t *testing.T) {
	found, _ := retainedCode(reflect.TypeFor[tool.Contract]())
	found = withoutJSONData(t, found)
	require.Len(t, found, 1, "%v", found)
	require.Equal(t, tool.AdmissionType, found[0].typ, found[0].path)

	plain, typed := tool.AdmissionTypes[0], tool.AdmissionTypes[1]
	require.Equal(t, reflect.Func, plain.Kind())
	require.Equal(t, 1, plain.NumIn())
	require.Equal(t, reflect.TypeFor[[]byte](), plain.In(0))
	require.Equal(t, 1, plain.NumOut())
	require.Equal(t, reflect.TypeFor[error](), plain.Out(0))

	held, structs := retainedCode(typed)
	require.Contains(t, structs, "engine.plan", "the walk goes through the decoder")
	for _, h := range held {
		require.Equal(t, reflect.TypeFor[reflect.Type](), h.typ, "the typed admission holds types and offsets only: %s", h.path)
	}

	// Both steps of an admission return the value for Call, or nil: a
	// decoded input.
	require.Equal(t, 2, tool.AdmissionType.NumMethod())
	for i := range tool.AdmissionType.NumMethod() {
		step := tool.AdmissionType.Method(i).Type
		require.Equal(t, reflect.TypeFor[error](), step.Out(step.NumOut()-1))
		handed, _ := retainedCode(step.Out(0))
		require.Len(t, handed, 1, "%v", handed)
		require.Empty(t, withoutJSONData(t, handed), "what the admission hands to Call is data only")
	}
}

func TestArchWalkerFindsCode(t *testing.T) {
	// A Binding holds the tool and middlewares: the walk must see them,
	// or the two tests above prove nothing.
	found, _ := retainedCode(reflect.TypeFor[tool.Binding]())
	var kinds []reflect.Kind
	for _, f := range found {
		kinds = append(kinds, f.typ.Kind())
	}
	require.Contains(t, kinds, reflect.Interface)
	require.Contains(t, kinds, reflect.Func)
}

// methodNames lists the exported methods of t.
func methodNames(t reflect.Type) []string {
	var names []string
	for i := range t.NumMethod() {
		if m := t.Method(i); m.IsExported() {
			names = append(names, m.Name)
		}
	}
	slices.Sort(names)
	return names
}

func TestArchInterfaces(t *testing.T) {
	tests := []struct {
		name    string
		typ     reflect.Type
		methods []string
	}{
		{"Tool", reflect.TypeFor[tool.Tool](), []string{"Call", "Definition"}},
		{"Caller", reflect.TypeFor[tool.Caller](), []string{"Call"}},
		{"InputValidatingTool", reflect.TypeFor[tool.InputValidatingTool](), []string{"InputValidator"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, reflect.Interface, tt.typ.Kind())
			require.Equal(t, tt.methods, methodNames(tt.typ))
		})
	}

	call, ok := reflect.TypeFor[tool.Tool]().MethodByName("Call")
	require.True(t, ok)
	require.Equal(t, reflect.TypeFor[func(context.Context, tool.Invocation) (tool.Result, error)](), call.Type)
	def, ok := reflect.TypeFor[tool.Tool]().MethodByName("Definition")
	require.True(t, ok)
	require.Equal(t, reflect.TypeFor[func() tool.Definition](), def.Type)
	validator, ok := reflect.TypeFor[tool.InputValidatingTool]().MethodByName("InputValidator")
	require.True(t, ok)
	require.Equal(t, reflect.TypeFor[func() func([]byte) error](), validator.Type)

	middleware := reflect.TypeFor[tool.CallMiddleware]()
	require.Equal(t, reflect.Func, middleware.Kind())
	require.True(t, middleware.ConvertibleTo(reflect.TypeFor[func(tool.Caller) tool.Caller]()))
	callerFunc := reflect.TypeFor[tool.CallerFunc]()
	require.True(t, callerFunc.ConvertibleTo(reflect.TypeFor[func(context.Context, tool.Invocation) (tool.Result, error)]()))
	require.True(t, callerFunc.Implements(reflect.TypeFor[tool.Caller]()))
}

func TestArchFuncMethodSet(t *testing.T) {
	want := []string{"Call", "Definition", "InputValidator"}
	require.Equal(t, want, methodNames(reflect.TypeFor[tool.Func[struct{}, string]]()))
	require.Equal(t, want, methodNames(reflect.TypeFor[*tool.Func[struct{}, string]]()), "no pointer-receiver extras")
	require.Implements(t, (*tool.Tool)(nil), tool.Func[struct{}, string]{})
	require.Implements(t, (*tool.InputValidatingTool)(nil), tool.Func[struct{}, string]{})
}

// TestArchOneErrorMechanism keeps every error message of the project's
// packages on one mechanism (internal/errprefix): sentinels made with
// errprefix.New, errors that wrap them made with errprefix.Errorf (errorf
// in this package), pieces of messages with errprefix.Part. A sentinel
// written as errors.New("tool: …"), or fmt.Errorf wrapping an error with
// %w, would bring back messages that print "tool: " twice. The schema
// engine under internal/ makes only pieces of messages, in plain Go.
func TestArchOneErrorMechanism(t *testing.T) {
	sentinel := regexp.MustCompile(`errors\.New\("tool: `)
	wrapping := regexp.MustCompile("fmt\\.Errorf\\((\"[^\"\\n]*%w|`[^`\\n]*%w)")
	var checked int
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "testdata", "node_modules", "benchmarks", "scripts", "examples", ".git":
				return filepath.SkipDir
			}
			if path == "internal" {
				// The schema engine's errors carry no prefix: they are
				// pieces of the core's messages.
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		for _, re := range []*regexp.Regexp{sentinel, wrapping} {
			if loc := re.FindIndex(src); loc != nil {
				line := 1 + strings.Count(string(src[:loc[0]]), "\n")
				t.Errorf("%s:%d: %s: use errprefix.New, errprefix.Errorf or errprefix.Part", path, line, src[loc[0]:loc[1]])
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, checked, 60, "the walk found too few files")
}
