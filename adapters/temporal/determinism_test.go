package tooltemporal_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/contrib/tools/workflowcheck/determinism"
	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"
)

// What this package runs in workflow code, besides the SDK: each must stay
// free of clocks, randomness, I/O, goroutines and channels, or a replay
// on another worker could take another path.
var workflowSide = []string{
	"(github.com/agentcontract/tool.Contract).Prepare",        // admission
	"(github.com/agentcontract/tool.Contract).ValidateResult", // checking what the activity returned
	"(github.com/agentcontract/tool.InputRequest).Continuation",
	"(*github.com/agentcontract/tool/dispatch.Dispatcher).Settle",
	"github.com/agentcontract/tool/dispatch.New", // a Session builds its Dispatcher
	// and this package's own workflow code
	"(*github.com/agentcontract/tool/adapters/temporal.Runtime).NewSession",
	"(*github.com/agentcontract/tool/adapters/temporal.Session).Run",
	"(*github.com/agentcontract/tool/adapters/temporal.Session).check",
	"(*github.com/agentcontract/tool/adapters/temporal.Session).accept",
	"(*github.com/agentcontract/tool/adapters/temporal.Session).Pending",
	"(*github.com/agentcontract/tool/adapters/temporal.Session).Receipt",
}

// mapRangeReviewed are the functions on those paths that range over a map,
// each read and found to give the same result in any iteration order. A
// new one fails the test until someone has read it too.
var mapRangeReviewed = map[string]string{
	// A conjunction of checks on every member: the answer does not
	// depend on the order the members are visited in.
	"(*github.com/agentcontract/tool/internal/engine.run).equal": "every member compared; true only if all equal",
	"(*github.com/agentcontract/tool/internal/engine.run).object": "deciding (not explaining): true only if every member passes; " +
		"the budget is charged per member, so a value whose check exceeds the budget is refused in any order",
	"(*github.com/agentcontract/tool/internal/engine.run).names": "sorted whenever the names are used to explain",
	"maps.Keys": "called by the engine's unknownMembers as slices.Sorted(maps.Keys(…))",
	"(*github.com/agentcontract/tool/internal/engine.Schema).fullValidatorWork":    "a saturating sum over the members",
	"(*github.com/agentcontract/tool/internal/engine.Schema).rehearseBacktracking": "a conjunction over every string; the budget runs out on the total",
	// The validator behind Schema.Validate. Its verdict is the same in any
	// order; which violations it collects first may differ, and
	// tool.Schema's message sorts them (see the core's
	// TestSchemaValidateMessageIsDeterministic).
	"(*github.com/santhosh-tekuri/jsonschema/v6.validator).objValidate":    "verdict is a conjunction; errors are sorted by the caller",
	"(*github.com/santhosh-tekuri/jsonschema/v6.validator).unevalValidate": "one error per distinct location; errors are sorted by the caller",
	"github.com/santhosh-tekuri/jsonschema/v6.unevalFrom":                  "builds sets of evaluated names and indexes",
	"github.com/santhosh-tekuri/jsonschema/v6.equals":                      "every member compared",
	"github.com/santhosh-tekuri/jsonschema/v6.writeHash":                   "collects the names, sorts them, then hashes",
	"(*github.com/santhosh-tekuri/jsonschema/v6.dialect).activeVocabs":     "builds the set of active vocabularies",
	"(*github.com/santhosh-tekuri/jsonschema/v6.uneval).merge":             "set intersection",
	// Settle seals a checkpoint over the JSON of the input request, whose
	// wire form has no Go map: the map encoder is reachable, not reached;
	// the struct-field cache is built from a map and then sorted. From Go
	// 1.27 on, go-json-experiment/json forwards to the standard library's
	// encoding/json/v2, where the same functions live: a key names every
	// place one reviewed function may be found, separated by "|".
	"github.com/go-json-experiment/json.marshalObjectAny|encoding/json/v2.marshalObjectAny": "encodes map[string]any, which an InputRequest does not hold",
	"github.com/go-json-experiment/json.makeStructFields|encoding/json/v2.makeStructFields": "field indexes collected from a map, then sorted",
}

// reviewedAs maps each name a reviewed function may have to its key in
// mapRangeReviewed.
func reviewedAs() map[string]string {
	names := map[string]string{}
	for key := range mapRangeReviewed {
		for name := range strings.SplitSeq(key, "|") {
			names[name] = key
		}
	}
	return names
}

// acceptedBelow are functions below which the walk stops, with the reason
// their non-determinism is accepted. Each is documented in the package
// documentation.
var acceptedBelow = map[string]string{
	// A pattern only the backtracking engine compiles (lookaround,
	// backreferences) is charged a static bound of the pattern and the
	// string's length before it runs, so the verdict does not depend on
	// time; the engine's clock remains as a safety stop far above any
	// match the bound admits, and its firing is an error of its own, never
	// "does not match". Patterns RE2 compiles match without a clock.
	"(*github.com/agentcontract/tool/internal/regex.Regexp).Match": "ECMAScript-only patterns: a clock as a safety stop only, reported as its own error",
}

// TestWorkflowSideIsDeterministic runs Temporal's own determinism checker
// (workflowcheck) over the core and dispatch, and walks the reasons it
// gives for each function of workflowSide down to their sources. A clock,
// randomness, I/O, a goroutine or a channel anywhere below fails; so does
// a map range in a function nobody reviewed.
func TestWorkflowSideIsDeterministic(t *testing.T) {
	pkgs, err := packages.Load(&packages.Config{Mode: packages.LoadAllSyntax},
		"github.com/agentcontract/tool", "github.com/agentcontract/tool/dispatch", "github.com/agentcontract/tool/adapters/temporal")
	require.NoError(t, err)
	require.Zero(t, packages.PrintErrors(pkgs))
	// The runtime may start the garbage collector's workers on any
	// allocation; that is invisible to the program's results.
	// Likewise the cleanup workers it may start when a value with a
	// cleanup is made (net/netip interns zones through package unique).
	refs := determinism.DefaultIdentRefs.Clone().SetAll(determinism.IdentRefs{
		"runtime.gcBgMarkStartWorkers":     false,
		"(*runtime.cleanupQueue).createGs": false,
	})
	analyzer := determinism.NewChecker(determinism.Config{IdentRefs: refs, EnableObjectFacts: true}).NewAnalyzer()
	graph, err := checker.Analyze([]*analysis.Analyzer{analyzer}, pkgs, nil)
	require.NoError(t, err)

	// Every package's findings, by function name.
	found := map[string]determinism.NonDeterminisms{}
	for act := range graph.All() {
		require.NoError(t, act.Err, act.String())
		for _, fact := range act.AllPackageFacts() {
			if pnd, ok := fact.Fact.(*determinism.PackageNonDeterminisms); ok {
				for name, reasons := range *pnd {
					found[name] = reasons
				}
			}
		}
	}
	used := map[string]bool{}
	reviewed := reviewedAs()
	for _, root := range workflowSide {
		var problems, ranges []string
		seen := map[string]bool{}
		var walk func(fn string, path []string)
		walk = func(fn string, path []string) {
			if seen[fn] {
				return
			}
			seen[fn] = true
			if _, ok := acceptedBelow[fn]; ok {
				used[fn] = true
				return
			}
			for _, reason := range found[fn] {
				switch r := reason.(type) {
				case *determinism.ReasonFuncCall:
					walk(r.FuncName, append(path, r.FuncName))
				case *determinism.ReasonMapRange:
					key, ok := reviewed[fn]
					if !ok {
						problems = append(problems, strings.Join(path, " → ")+": ranges over a map at "+r.Pos().String())
						continue
					}
					ranges = append(ranges, key)
				default:
					problems = append(problems, strings.Join(path, " → ")+": "+reason.String()+" at "+reason.Pos().String())
				}
			}
		}
		walk(root, []string{root})
		require.Empty(t, problems, "%s must stay deterministic", root)
		t.Logf("%s: %d flagged functions below it, each for a reviewed map range only", root, len(ranges))
		for _, fn := range ranges {
			used[fn] = true
		}
	}
	for fn := range mapRangeReviewed {
		require.True(t, used[fn], "%s is reviewed but no longer flagged: drop it from the list", fn)
	}
	for fn := range acceptedBelow {
		require.True(t, used[fn], "%s is accepted but no longer reached: drop it from the list", fn)
	}
}
