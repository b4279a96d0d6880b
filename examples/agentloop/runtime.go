package main

import (
	"context"
	"crypto/rand"
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
	"github.com/agentcontract/tool/dispatch"
)

// agentRuntime plays a script against a registry: the part of an agent
// runtime that sits between a model and its tools.
type agentRuntime struct {
	out        *transcript
	ledger     *ledger
	registry   *tool.Registry
	dispatcher *dispatch.Dispatcher
	// sealKey seals checkpoints. A real runtime keeps it in a secret
	// store, shared by every process that may resume a call; this one
	// makes one per run, which every "restart" of the run keeps.
	sealKey dispatch.SealKey
	// store holds the claims that make a checkpoint answerable once. A
	// real runtime keeps them in a database every process shares (the
	// SQL store); this one keeps one in memory for the run, which, like
	// a database, survives every "restart" of the run.
	store dispatch.Store
	// dir holds checkpoints of suspended calls.
	dir string
	// approved is the approver's answer to every input request.
	approved bool
	// turn is the turn being played, for the policy's log lines.
	turn int
	// observer, when not nil, traces every call (-trace). Like the
	// store, it outlives a restart: the links from a resumption to its
	// suspension are kept there.
	observer *dispatch.Observer
}

func newRuntime(out *transcript, dir string, approved bool, observer *dispatch.Observer) (*agentRuntime, error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	store, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
	if err != nil {
		return nil, err
	}
	rt := &agentRuntime{out: out, ledger: newLedger(), dir: dir, approved: approved, sealKey: dispatch.SealKey{ID: "agentloop-1", Secret: secret}, store: store, observer: observer}
	if err := rt.start(); err != nil {
		return nil, err
	}
	return rt, nil
}

// start builds the registry and the dispatcher from scratch, as a process
// does when it starts.
func (rt *agentRuntime) start() error {
	registry, err := newRegistry(rt.ledger, rt.notePolicy)
	if err != nil {
		return err
	}
	rt.registry = registry
	rt.dispatcher, err = dispatch.New(dispatch.Config{Registry: registry, Store: rt.store, SealKeys: []dispatch.SealKey{rt.sealKey}, Observer: rt.observer})
	return err
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

// playTurn runs one proposal through the dispatcher and tells the model
// what happened. Whatever the tool or the model did, the turn ends with
// exactly one to_model event; only a defect of the runtime itself is an
// error.
func (rt *agentRuntime) playTurn(ctx context.Context, n int, request tool.Request) error {
	arguments := request.Arguments
	rt.out.emit(event{Turn: n, Kind: evProposed, Tool: request.Name, Arguments: &arguments})

	// The runtime, never the model, chooses the idempotency key: one per
	// logical call, kept across the call's suspension and resumption.
	o := rt.dispatcher.Run(ctx, dispatch.Call{
		ID:             fmt.Sprintf("turn-%d", n),
		Request:        request,
		IdempotencyKey: idempotencyKey(n),
		Progress:       rt.progress(n, request.Name),
	})
	if o.Kind == dispatch.KindSuspended {
		return rt.suspend(ctx, n, o)
	}
	rt.settle(n, o)
	return nil
}

// progress prints a progress line for every report of the call.
func (rt *agentRuntime) progress(n int, name string) tool.ProgressReporter {
	return tool.ProgressReporterFunc(func(_ context.Context, p tool.Progress) error {
		rt.out.emit(event{Turn: n, Kind: evProgress, Tool: name, Progress: &p})
		return nil
	})
}

// settle reports an outcome that is not a suspension and tells the model
// what it may know.
func (rt *agentRuntime) settle(n int, o dispatch.Outcome) {
	switch o.Kind {
	case dispatch.KindCompleted:
		rt.out.emit(event{Turn: n, Kind: evCompleted, Tool: o.Tool, IdempotencyKey: o.IdempotencyKey})
	case dispatch.KindRejected:
		rt.out.emit(event{Turn: n, Kind: evRejected, Tool: o.Tool, Text: o.Text()})
	case dispatch.KindUnknownTool:
		rt.out.emit(event{Turn: n, Kind: evUnknownTool, Tool: o.Tool})
	case dispatch.KindFailed:
		failure, _ := tool.ClassifyFailure(o.Err)
		rt.out.emit(event{Turn: n, Kind: evFailure, Tool: o.Tool, IdempotencyKey: o.IdempotencyKey, FailureKind: failure.Kind(), Text: o.Text()})
		if cause := failure.Cause(); cause != nil {
			rt.out.emit(event{Turn: n, Kind: evPrivate, Tool: o.Tool, Text: cause.Error()})
		}
	default:
		// Nothing definite is known: the call may or may not have had
		// effects. A real runtime would retry when o.Retryable, with the
		// same key, or ask a person; the model is told only that the
		// outcome is unknown.
		rt.out.emit(event{Turn: n, Kind: evError, Tool: o.Tool, Text: fmt.Sprintf("%v (effect %q, retryable: %t)", o.Err, o.Effect, o.Retryable)})
	}
	rt.toModel(n, o)
}

// suspend persists a suspended call, restarts, and resumes the call from
// disk with a freshly built registry and dispatcher and the approver's
// answer, as a runtime would after a restart.
func (rt *agentRuntime) suspend(ctx context.Context, n int, o dispatch.Outcome) error {
	rt.out.emit(event{Turn: n, Kind: evSuspended, Tool: o.Tool, IdempotencyKey: o.IdempotencyKey, Prompt: o.Checkpoint.InputRequest().Prompt()})

	data, err := json.Marshal(o.Checkpoint)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	file := filepath.Join(rt.dir, fmt.Sprintf("turn-%02d-%s.json", n, o.Tool))
	if err := os.WriteFile(file, data, 0o600); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	rt.out.emit(event{Turn: n, Kind: evCheckpoint, Tool: o.Tool, File: filepath.Base(file), Bytes: len(data)})

	// Everything that held the call in memory goes away; only the seal
	// key, which lives in a secret store, and the claim store, a database
	// in a real runtime, survive.
	rt.registry, rt.dispatcher = nil, nil
	rt.out.emit(event{Turn: n, Kind: evRestart, Text: "restart: registry and dispatcher dropped, rebuilt from scratch"})
	if err := rt.start(); err != nil {
		return err
	}

	data, err = os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	var cp dispatch.Checkpoint
	if err := json.Unmarshal(data, &cp); err != nil {
		return fmt.Errorf("checkpoint %s: %w", filepath.Base(file), err)
	}
	if err := rt.dispatcher.Open(cp); err != nil {
		return fmt.Errorf("checkpoint %s: %w", filepath.Base(file), err)
	}
	rt.out.emit(event{Turn: n, Kind: evCheckpointRead, Tool: cp.Request().Name, File: filepath.Base(file), IdempotencyKey: cp.IdempotencyKey()})

	answer := json.RawMessage(strconv.FormatBool(rt.approved))
	rt.out.emit(event{Turn: n, Kind: evAnswered, Tool: cp.Request().Name, Answer: answer, Text: "-approve=" + map[bool]string{true: "yes", false: "no"}[rt.approved]})
	resumed, err := rt.dispatcher.Resume(ctx, cp, dispatch.Answer{Response: answer, Progress: rt.progress(n, cp.Request().Name)})
	if err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	if resumed.Kind == dispatch.KindSuspended {
		return errors.New("resume: the call asked for input again; this runtime answers once")
	}
	rt.settle(n, resumed)
	return rt.replay(ctx, n, file)
}

// replay plays someone who kept a copy of the checkpoint file and sends it
// again with the other answer: the checkpoint was claimed, so nothing
// runs.
func (rt *agentRuntime) replay(ctx context.Context, n int, file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	var cp dispatch.Checkpoint
	if err := json.Unmarshal(data, &cp); err != nil {
		return fmt.Errorf("checkpoint %s: %w", filepath.Base(file), err)
	}
	other := json.RawMessage(strconv.FormatBool(!rt.approved))
	_, err = rt.dispatcher.Resume(ctx, cp, dispatch.Answer{Response: other})
	var answered *dispatch.AnsweredError
	if !errors.As(err, &answered) {
		return fmt.Errorf("replay: the claimed checkpoint was not refused: %v", err)
	}
	rt.out.emit(event{Turn: n, Kind: evReplayRefused, Tool: cp.Request().Name, File: filepath.Base(file), Answer: other,
		Text: fmt.Sprintf("already answered, outcome %s", answered.Claim.Outcome.Kind)})
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
func (rt *agentRuntime) toModel(n int, o dispatch.Outcome) {
	rt.out.emit(event{Turn: n, Kind: evToModel, Text: render(o.Output)})
}

// idempotencyKey names the call of turn n. It is opaque, as a key passed to
// third parties should be, and deterministic, so the transcript is too.
func idempotencyKey(n int) tool.IdempotencyKey {
	sum := sha256.Sum256([]byte("agentloop call " + strconv.Itoa(n)))
	return tool.IdempotencyKey("call-" + hex.EncodeToString(sum[:6]))
}

// render is the model-visible text of an Output: dispatch.Text, which
// replaces media by a note because this transcript, like many model APIs,
// carries text only.
func render(o tool.Output) string {
	if text := dispatch.Text(o); text != "" {
		return text
	}
	return "(empty result)"
}
