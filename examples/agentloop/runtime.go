package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agentcontract/tool"
)

// agentRuntime plays a script against a registry: the part of an agent
// runtime that sits between a model and its tools.
type agentRuntime struct {
	out      *transcript
	ledger   *ledger
	registry *tool.Registry
	// dir holds checkpoints of suspended calls.
	dir string
	// approved is the approver's answer to every input request.
	approved bool
	// turn is the turn being played, for the policy's log lines.
	turn int
}

func newRuntime(out *transcript, dir string, approved bool) (*agentRuntime, error) {
	rt := &agentRuntime{out: out, ledger: newLedger(), dir: dir, approved: approved}
	registry, err := newRegistry(rt.ledger, rt.notePolicy)
	if err != nil {
		return nil, err
	}
	rt.registry = registry
	return rt, nil
}

// notePolicy logs a decision of the refund policy.
func (rt *agentRuntime) notePolicy(reason string) {
	rt.out.emit(event{Turn: rt.turn, Kind: evPolicy, Tool: "refund_order", Text: reason})
}

// play advertises the tools, runs every turn of the script and reports the
// state of the ledger.
func (rt *agentRuntime) play(ctx context.Context, script []turn) error {
	var names []string
	for _, d := range rt.registry.Definitions() {
		names = append(names, d.Name)
	}
	rt.out.emit(event{Kind: evTools, Tools: names})

	for i, t := range script {
		if err := ctx.Err(); err != nil {
			return err
		}
		rt.turn = i + 1
		if err := rt.playTurn(ctx, rt.turn, tool.Request{Name: t.Name, Arguments: t.Arguments}); err != nil {
			return fmt.Errorf("turn %d: %w", rt.turn, err)
		}
	}

	entries := rt.ledger.entries()
	summary := "no refunds recorded"
	if len(entries) > 0 {
		var parts []string
		for _, e := range entries {
			parts = append(parts, fmt.Sprintf("%s %s on order %s", e.Reference, euros(e.Cents), e.OrderID))
		}
		summary = fmt.Sprintf("%s recorded: %s", plural(len(entries), "refund"), strings.Join(parts, "; "))
	}
	rt.out.emit(event{Kind: evLedger, Text: summary})
	rt.out.emit(event{Kind: evDone, Text: "script complete: " + plural(len(script), "turn")})
	return nil
}

// playTurn handles one proposal: resolve, Prepare, Call, classify, and
// tell the model what happened. Whatever the tool or the model did, the
// turn ends with exactly one to_model event; only a defect of the runtime
// itself is an error.
func (rt *agentRuntime) playTurn(ctx context.Context, n int, request tool.Request) error {
	arguments := request.Arguments
	rt.out.emit(event{Turn: n, Kind: evProposed, Tool: request.Name, Arguments: &arguments})

	binding, ok := rt.registry.Resolve(request.Name)
	if !ok {
		rt.out.emit(event{Turn: n, Kind: evUnknownTool, Tool: request.Name})
		rt.toModel(n, fmt.Sprintf("There is no tool named %q. Available tools: %s.", request.Name, strings.Join(rt.toolNames(), ", ")))
		return nil
	}

	// The runtime, never the model, chooses the idempotency key: one per
	// logical call, kept across the call's suspension and resumption.
	key := idempotencyKey(n)
	invocation, err := binding.Contract().Prepare(request, tool.Admission{IdempotencyKey: key})
	if rejection, ok := tool.ClassifyInputRejection(err); ok {
		rt.out.emit(event{Turn: n, Kind: evRejected, Tool: request.Name, Text: rejection.Message()})
		rt.toModel(n, rejection.Message())
		return nil
	}
	if err != nil {
		// A defect of the tool's validator or of the request envelope:
		// nothing the model can act on, so it gets no details.
		rt.out.emit(event{Turn: n, Kind: evNotAdmitted, Tool: request.Name, Text: err.Error()})
		rt.toModel(n, fmt.Sprintf("The call to %s could not be admitted.", request.Name))
		return nil
	}
	rt.out.emit(event{Turn: n, Kind: evAdmitted, Tool: request.Name, IdempotencyKey: key})

	result, err := rt.call(ctx, n, binding, invocation)
	if err == nil && result.InputRequest != nil {
		return rt.suspend(ctx, n, request, key, *result.InputRequest)
	}
	rt.settle(n, binding, result, err)
	return nil
}

// call runs an admitted invocation with a progress reporter that prints a
// progress line for every report.
func (rt *agentRuntime) call(ctx context.Context, n int, binding tool.Binding, invocation tool.Invocation) (tool.Result, error) {
	name := binding.Contract().Name()
	reporter := tool.ProgressReporterFunc(func(_ context.Context, p tool.Progress) error {
		rt.out.emit(event{Turn: n, Kind: evProgress, Tool: name, Progress: &p})
		return nil
	})
	return binding.Call(tool.WithProgressReporter(ctx, reporter), invocation)
}

// settle classifies the outcome of a call that did not suspend and tells
// the model what it may know.
func (rt *agentRuntime) settle(n int, binding tool.Binding, result tool.Result, err error) {
	name := binding.Contract().Name()
	if err == nil {
		rt.out.emit(event{Turn: n, Kind: evCompleted, Tool: name})
		rt.toModel(n, render(result.Output))
		return
	}
	if failure, ok := tool.ClassifyFailure(err); ok {
		rt.out.emit(event{Turn: n, Kind: evFailure, Tool: name, FailureKind: failure.Kind(), Text: render(failure.Output())})
		if cause := failure.Cause(); cause != nil {
			rt.out.emit(event{Turn: n, Kind: evPrivate, Tool: name, Text: cause.Error()})
		}
		rt.toModel(n, render(failure.Output()))
		return
	}
	// Nothing definite is known: the call may or may not have had effects.
	// A real runtime would retry a replayable tool with the same key, or
	// ask a person; the model is told only that the outcome is unknown.
	effect := binding.Contract().Definition().Effect
	rt.out.emit(event{Turn: n, Kind: evError, Tool: name, Text: fmt.Sprintf("%v (effect %q, replayable: %t)", err, effect, effect.Replayable())})
	rt.toModel(n, fmt.Sprintf("The call to %s did not complete and its outcome is unknown.", name))
}

// checkpoint is what the runtime persists for a suspended call: everything
// it needs to prepare the same call again in another process.
type checkpoint struct {
	Turn           int                 `json:"turn"`
	Request        tool.Request        `json:"request"`
	IdempotencyKey tool.IdempotencyKey `json:"idempotency_key"`
	InputRequest   tool.InputRequest   `json:"input_request"`
}

// suspend persists a suspended call, drops the registry, and resumes the
// call from disk with a freshly built registry and the approver's answer,
// as a runtime would after a restart.
func (rt *agentRuntime) suspend(ctx context.Context, n int, request tool.Request, key tool.IdempotencyKey, inputRequest tool.InputRequest) error {
	rt.out.emit(event{Turn: n, Kind: evSuspended, Tool: request.Name, Prompt: inputRequest.Prompt()})

	data, err := json.Marshal(checkpoint{Turn: n, Request: request, IdempotencyKey: key, InputRequest: inputRequest})
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	file := filepath.Join(rt.dir, fmt.Sprintf("turn-%02d-%s.json", n, request.Name))
	if err := os.WriteFile(file, data, 0o600); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	rt.out.emit(event{Turn: n, Kind: evCheckpoint, Tool: request.Name, File: filepath.Base(file), Bytes: len(data)})

	// Everything that held the call in memory goes away.
	rt.registry = nil
	rt.out.emit(event{Turn: n, Kind: evRestart, Text: "restart: registry dropped, rebuilt from scratch"})
	registry, err := newRegistry(rt.ledger, rt.notePolicy)
	if err != nil {
		return err
	}
	rt.registry = registry

	data, err = os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	var saved checkpoint
	if err := json.Unmarshal(data, &saved); err != nil {
		return fmt.Errorf("checkpoint %s: %w", filepath.Base(file), err)
	}
	rt.out.emit(event{Turn: n, Kind: evCheckpointRead, Tool: saved.Request.Name, File: filepath.Base(file), IdempotencyKey: saved.IdempotencyKey})

	answer := json.RawMessage(strconv.FormatBool(rt.approved))
	rt.out.emit(event{Turn: n, Kind: evAnswered, Tool: saved.Request.Name, Answer: answer, Text: "-approve=" + map[bool]string{true: "yes", false: "no"}[rt.approved]})
	continuation, err := saved.InputRequest.Continuation(answer)
	if err != nil {
		return fmt.Errorf("answer: %w", err)
	}

	binding, ok := rt.registry.Resolve(saved.Request.Name)
	if !ok {
		return fmt.Errorf("resume: no tool named %q after the restart", saved.Request.Name)
	}
	invocation, err := binding.Contract().Prepare(saved.Request, tool.Admission{IdempotencyKey: saved.IdempotencyKey, Continuation: &continuation})
	if err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	rt.out.emit(event{Turn: n, Kind: evResumed, Tool: saved.Request.Name, IdempotencyKey: saved.IdempotencyKey})

	result, err := rt.call(ctx, n, binding, invocation)
	if err == nil && result.InputRequest != nil {
		return errors.New("resume: the call asked for input again; this runtime answers once")
	}
	rt.settle(n, binding, result, err)
	return nil
}

// plural returns "1 turn", "2 turns".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// toModel records what the model is sent as the result of its call.
func (rt *agentRuntime) toModel(n int, text string) {
	rt.out.emit(event{Turn: n, Kind: evToModel, Text: text})
}

func (rt *agentRuntime) toolNames() []string {
	var names []string
	for _, d := range rt.registry.Definitions() {
		names = append(names, d.Name)
	}
	return names
}

// idempotencyKey names the call of turn n. It is opaque, as a key passed to
// third parties should be, and deterministic, so the transcript is too.
func idempotencyKey(n int) tool.IdempotencyKey {
	sum := sha256.Sum256([]byte("agentloop call " + strconv.Itoa(n)))
	return tool.IdempotencyKey("call-" + hex.EncodeToString(sum[:6]))
}

// render is the model-visible text of an Output. Output.Text covers text
// and structured Details; media is described by a note, because this
// transcript, like many model APIs, carries text only.
func render(o tool.Output) string {
	if text, ok := o.Text(); ok {
		if text == "" {
			return "(empty result)"
		}
		return text
	}
	var parts []string
	for _, b := range o.Content {
		switch b.Kind {
		case tool.BlockText:
			parts = append(parts, b.Text)
		case tool.BlockMedia:
			if b.URI != "" {
				parts = append(parts, fmt.Sprintf("[attachment %s at %s]", b.MediaType, b.URI))
			} else {
				parts = append(parts, fmt.Sprintf("[attachment %s, %d bytes]", b.MediaType, len(b.Data)))
			}
		}
	}
	return strings.Join(parts, " ")
}
