package tool_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/errors.golden from the texts the code produces")

// goldenFile pins the Error() text of every exported sentinel of the
// packages tool and dispatch, and of the error types of package tool in
// the shapes they come in: alone (nil, zero, made by the package) and
// quoted by another error of the project, where "tool: " must appear once.
const goldenFile = "testdata/errors.golden"

// rootSentinels and dispatchSentinels are every exported sentinel of the
// two packages; TestArchEverySentinelIsGolden keeps the lists complete.
var rootSentinels = map[string]error{
	"ErrInvalidTool":           tool.ErrInvalidTool,
	"ErrInvalidInvocation":     tool.ErrInvalidInvocation,
	"ErrDuplicateTool":         tool.ErrDuplicateTool,
	"ErrInvalidRegistry":       tool.ErrInvalidRegistry,
	"ErrInvalidCallError":      tool.ErrInvalidCallError,
	"ErrInvalidDefinition":     tool.ErrInvalidDefinition,
	"ErrInvalidFailure":        tool.ErrInvalidFailure,
	"ErrInvalidInputRejection": tool.ErrInvalidInputRejection,
	"ErrInvalidInputRequest":   tool.ErrInvalidInputRequest,
	"ErrInvalidOutput":         tool.ErrInvalidOutput,
	"ErrInvalidProgress":       tool.ErrInvalidProgress,
	"ErrInvalidRequest":        tool.ErrInvalidRequest,
	"ErrInvalidResult":         tool.ErrInvalidResult,
	"ErrInvalidSchema":         tool.ErrInvalidSchema,
}

var dispatchSentinels = map[string]error{
	"ErrInvalidConfig":     dispatch.ErrInvalidConfig,
	"ErrInvalidCheckpoint": dispatch.ErrInvalidCheckpoint,
	"ErrInvalidAnswer":     dispatch.ErrInvalidAnswer,
	"ErrExpired":           dispatch.ErrExpired,
	"ErrWrongPrincipal":    dispatch.ErrWrongPrincipal,
	"ErrAlreadyAnswered":   dispatch.ErrAlreadyAnswered,
	"ErrStore":             dispatch.ErrStore,
	"ErrNotFound":          dispatch.ErrNotFound,
	"ErrInvalidRecord":     dispatch.ErrInvalidRecord,
	"ErrConflict":          dispatch.ErrConflict,
	"ErrInvalidStream":     dispatch.ErrInvalidStream,
	"ErrInvalidGrant":      dispatch.ErrInvalidGrant,
	"ErrGrantNotLive":      dispatch.ErrGrantNotLive,
	"ErrInvalidReceipt":    dispatch.ErrInvalidReceipt,
	"ErrRule":              dispatch.ErrRule,
}

// goldenErrors returns every error the golden file pins, by name.
func goldenErrors(t *testing.T) map[string]error {
	t.Helper()
	errs := map[string]error{}
	for name, err := range rootSentinels {
		errs["tool."+name] = err
	}
	for name, err := range dispatchSentinels {
		errs["dispatch."+name] = err
	}
	quote := func(err error) error {
		// How the package quotes another error (Contract.ValidateResult,
		// Func.Call): the "tool \"refund\"" shape.
		return errprefix.Errorf("%w: tool %q: %w", tool.ErrInvalidResult, "refund", err)
	}

	// Failure.
	failed := mustFailure(t, tool.FailureConfig{Kind: tool.FailureKindFailed, Output: tool.NewTextOutput("order closed"), Cause: errors.New("row locked")})
	errs["Failure/nil"] = (*tool.Failure)(nil)
	errs["Failure/zero"] = &tool.Failure{}
	errs["Failure/failed, text, cause"] = failed
	errs["Failure/failed, details only, cause"] = mustFailure(t, tool.FailureConfig{Kind: tool.FailureKindFailed, Output: tool.Output{Details: []byte(`{"code":7}`)}, Cause: errors.New("row locked")})
	errs["Failure/failed, cause of the package"] = mustFailure(t, tool.FailureConfig{Kind: tool.FailureKindFailed, Output: tool.NewTextOutput("order closed"), Cause: tool.ErrInvalidOutput})
	errs["Failure/rejected, text, no cause"] = mustFailure(t, tool.FailureConfig{Kind: tool.FailureKindRejected, Output: tool.NewTextOutput("not permitted today")})
	errs["Failure/rejected, no text, no cause"] = mustFailure(t, tool.FailureConfig{Kind: tool.FailureKindRejected})
	errs["Failure/wrapped by fmt.Errorf"] = fmt.Errorf("refund: %w", failed)
	errs["Failure/quoted by an error of the package"] = quote(failed)

	// Recover: the Failure and its PanicError.
	recovered := recoverCall(t, "boom")
	errs["Failure/from Recover"] = recovered
	errs["PanicError/from Recover"] = mustClassify(t, recovered).Cause()
	errs["PanicError/nil"] = (*tool.PanicError)(nil)
	errs["PanicError/zero"] = &tool.PanicError{}
	errs["PanicError/string value"] = &tool.PanicError{Value: "boom"}
	errs["PanicError/error value"] = &tool.PanicError{Value: errors.New("disk full")}
	errs["PanicError/error of the package as value"] = &tool.PanicError{Value: tool.ErrInvalidTool}
	errs["PanicError/quoted by an error of the package"] = quote(&tool.PanicError{Value: "boom"})

	// Guard: a refusal and an AuthorizationError.
	refused, authErr := guardCalls(t)
	errs["Failure/from a Guard's refusal"] = refused
	errs["AuthorizationError/from Guard"] = authErr
	errs["AuthorizationError/nil"] = (*tool.AuthorizationError)(nil)
	errs["AuthorizationError/zero"] = &tool.AuthorizationError{}
	errs["AuthorizationError/zero Guard"] = zeroGuardCall(t)
	errs["AuthorizationError/quoted by an error of the package"] = quote(authErr)

	// InputValidationPanicError, InputValidationError.
	errs["InputValidationPanicError/nil"] = (*tool.InputValidationPanicError)(nil)
	errs["InputValidationPanicError/zero"] = &tool.InputValidationPanicError{}
	errs["InputValidationPanicError/string value"] = &tool.InputValidationPanicError{Value: "boom"}
	errs["InputValidationPanicError/error of the package as value"] = &tool.InputValidationPanicError{Value: tool.ErrInvalidInputRejection}
	errs["InputValidationPanicError/quoted by an error of the package"] = quote(&tool.InputValidationPanicError{Value: "boom"})
	errs["InputValidationPanicError/quoted by AskFunc, as a Failure's cause"] = askDefectCause(t)
	errs["InputValidationError/nil"] = (*tool.InputValidationError)(nil)
	errs["InputValidationError/zero"] = &tool.InputValidationError{}
	errs["InputValidationError/from Bind"] = bindPanicking(t)
	errs["InputValidationError/quoted by an error of the package"] = quote(&tool.InputValidationError{})

	// InputRejection.
	rejection, err := tool.NewInputRejection(tool.InputRejectionConfig{Message: "value at /cents must be at least 1", Cause: errors.New("private")})
	require.NoError(t, err)
	errs["InputRejection/nil"] = (*tool.InputRejection)(nil)
	errs["InputRejection/zero"] = &tool.InputRejection{}
	errs["InputRejection/message"] = rejection
	errs["InputRejection/a member decoder's, wrapped by Decode"] = decodeMemberRejection(t)
	errs["InputRejection/quoted by an error of dispatch"] = errprefix.Errorf("%w: the call is no longer admitted: %w", dispatch.ErrInvalidCheckpoint, rejection)

	// CallError.
	plain := mustCallError(t, errors.New("disk full"))
	ofPackage := mustCallError(t, tool.ErrInvalidOutput)
	errs["CallError/nil"] = (*tool.CallError)(nil)
	errs["CallError/zero"] = &tool.CallError{}
	errs["CallError/plain cause"] = plain
	errs["CallError/cause of the package"] = ofPackage
	errs["CallError/quoted by an error of the package"] = quote(ofPackage)
	return errs
}

func mustFailure(t *testing.T, config tool.FailureConfig) *tool.Failure {
	t.Helper()
	f, err := tool.NewFailure(config)
	require.NoError(t, err)
	return f
}

func mustCallError(t *testing.T, cause error) *tool.CallError {
	t.Helper()
	e, err := tool.NewCallError(tool.CallErrorConfig{Cause: cause})
	require.NoError(t, err)
	return e
}

func mustClassify(t *testing.T, err error) *tool.Failure {
	t.Helper()
	f, ok := tool.ClassifyFailure(err)
	require.True(t, ok, "%v", err)
	return f
}

// goldenTool is a tool named "refund" whose Call runs call.
type goldenTool struct {
	call func() (tool.Result, error)
}

func (goldenTool) Definition() tool.Definition {
	return tool.Definition{Name: "refund", InputSchema: []byte(`{"type":"object"}`)}
}

func (g goldenTool) Call(context.Context, tool.Invocation) (tool.Result, error) { return g.call() }

// callGolden binds a goldenTool with middlewares and calls it once.
func callGolden(t *testing.T, call func() (tool.Result, error), middlewares ...tool.CallMiddleware) error {
	t.Helper()
	b, err := tool.Bind(goldenTool{call: call}, middlewares...)
	require.NoError(t, err)
	inv, err := b.Contract().Prepare(tool.Request{Name: "refund", Arguments: `{}`}, tool.Admission{})
	require.NoError(t, err)
	_, err = b.Call(t.Context(), inv)
	require.Error(t, err)
	return err
}

func recoverCall(t *testing.T, value any) error {
	t.Helper()
	return callGolden(t, func() (tool.Result, error) { panic(value) }, tool.Recover)
}

func guardCalls(t *testing.T) (refused, authErr error) {
	t.Helper()
	no, err := tool.NewGuard(tool.GuardConfig{Authorizer: tool.AuthorizerFunc(func(context.Context, tool.Authorization) (bool, error) {
		return false, nil
	})})
	require.NoError(t, err)
	broken, err := tool.NewGuard(tool.GuardConfig{Authorizer: tool.AuthorizerFunc(func(context.Context, tool.Authorization) (bool, error) {
		return false, errors.New("policy store down")
	})})
	require.NoError(t, err)
	run := func() (tool.Result, error) { return tool.Result{}, nil }
	return callGolden(t, run, no.Call), callGolden(t, run, broken.Call)
}

func zeroGuardCall(t *testing.T) error {
	t.Helper()
	return callGolden(t, func() (tool.Result, error) { return tool.Result{}, nil }, tool.Guard{}.Call)
}

// askDefectCause is the Cause of the Failure an AskFunc returns when its
// answer type's Validate panics: an error of the package that quotes an
// *InputValidationPanicError.
func askDefectCause(t *testing.T) error {
	t.Helper()
	var acted atomic.Int32
	b, call, request := askOnce[askPanics](t, "Confirm?", &acted)
	_, err := resumeAskErr(t, b, call, "", request, `{"approve":true}`)
	return mustClassify(t, err).Cause()
}

func bindPanicking(t *testing.T) error {
	t.Helper()
	_, err := tool.Bind(coreValidatingTool{
		coreTool:  newCoreTool(coreDefinition("weather")),
		validator: func() func([]byte) error { panic("no table") },
	})
	require.Error(t, err)
	return err
}

// goldenCode is a member type whose own decoder refuses every value with
// an *InputRejection it wraps.
type goldenCode string

func (c *goldenCode) UnmarshalJSON([]byte) error {
	r, err := tool.NewInputRejection(tool.InputRejectionConfig{Message: "codes start with c-"})
	if err != nil {
		return err
	}
	return fmt.Errorf("reading the code: %w", r)
}

type goldenCoded struct {
	Code goldenCode `json:"code" jsonschema:"type=string"`
}

// decodeMemberRejection is what Signature.Decode returns when the decoder
// of a member rejects its value.
func decodeMemberRejection(t *testing.T) error {
	t.Helper()
	sig, err := tool.NewSignature[goldenCoded, string]()
	require.NoError(t, err)
	b, err := tool.Bind(handTool{def: tool.Definition{Name: "coded", InputSchema: sig.InputSchema()}})
	require.NoError(t, err)
	inv, err := prepare(b, `{"code":"x"}`)
	require.NoError(t, err)
	_, err = sig.Decode(inv)
	require.Error(t, err)
	return err
}

// Signature.Decode's doc: a member decoder's rejection is wrapped in a new
// InputRejection that names the member; errors.As finds the new one, and
// errors.As on its Cause the decoder's own, with the decoder's wrapping.
func TestDecodeWrapsAMemberDecodersRejection(t *testing.T) {
	err := decodeMemberRejection(t)
	var outer *tool.InputRejection
	require.ErrorAs(t, err, &outer)
	require.Equal(t, "value at /code: codes start with c-", outer.Message())
	require.EqualError(t, outer.Cause(), "reading the code: tool: invalid invocation: codes start with c-")
	var inner *tool.InputRejection
	require.ErrorAs(t, outer.Cause(), &inner)
	require.NotSame(t, outer, inner)
	require.Equal(t, "codes start with c-", inner.Message())
}

// formatGolden writes one line per error, sorted by name: the name, " = ",
// and the quoted text.
func formatGolden(texts map[string]string) []byte {
	names := make([]string, 0, len(texts))
	for name := range texts {
		names = append(names, name)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, name := range names {
		b.WriteString(name + " = " + strconv.Quote(texts[name]) + "\n")
	}
	return []byte(b.String())
}

// TestErrorTextsGolden: the texts of the package's errors are part of
// what a user sees and logs; they change only deliberately (-update).
func TestErrorTextsGolden(t *testing.T) {
	texts := map[string]string{}
	for name, err := range goldenErrors(t) {
		texts[name] = err.Error()
	}
	got := formatGolden(texts)
	if *updateGolden {
		require.NoError(t, os.WriteFile(filepath.FromSlash(goldenFile), got, 0o644))
	}
	want, err := os.ReadFile(filepath.FromSlash(goldenFile))
	require.NoError(t, err)
	require.Equal(t, string(want), string(got))
}

// TestErrorTextsPrefixOnce: no text of the golden file says "tool: "
// again after its start, however deeply errors of the project quote one
// another, and the body of each is its text without the prefix.
func TestErrorTextsPrefixOnce(t *testing.T) {
	for name, err := range goldenErrors(t) {
		text := err.Error()
		if !strings.HasPrefix(text, "tool: ") {
			continue // another origin's text, such as fmt.Errorf's wrapping
		}
		require.NotContains(t, text, ": tool: ", "%s", name)
		require.NotContains(t, text, "tool: tool: ", "%s", name)
		require.Equal(t, "tool: "+errprefix.Body(err), text, "%s: its body is its text without the prefix", name)
	}
}
