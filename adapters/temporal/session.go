package tooltemporal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

// Session is the tool calls of one workflow execution: it numbers them,
// admits them, runs them as activities and keeps the calls that wait for a
// person's answer. It lives in workflow code only, and all of its state is
// workflow state: a worker that replays the workflow's history rebuilds it
// exactly, on any machine, with a registry built from scratch.
//
// A Session is made by [Runtime.NewSession], once per workflow execution.
// The zero Session is invalid: its [Session.Run] gives every call an unknown
// outcome whose error wraps [ErrInvalidConfig], and runs nothing.
// Its methods must be called from workflow code of that execution (any of
// its coroutines); it is not safe for use by other goroutines, which
// workflow code does not have.
type Session struct {
	rt *Runtime
	// decide classifies results in workflow code, on workflow time, and
	// names the checkpoints of suspensions with checkpointID: it never
	// runs a tool, never reads the machine's clock or draws a random
	// number, and never chooses a key (workflow state does).
	decide *dispatch.Dispatcher
	// prefix and next make the keys: the workflow ID, the original run
	// ID and the number of the call within the run.
	prefix string
	next   int
	// sealed counts the checkpoints sealed for each key, so that each
	// suspension of a call has an ID of its own.
	sealed map[tool.IdempotencyKey]int
	// waiting holds the suspended calls, in the order they suspended.
	waiting []*suspension
	// receipts are the accepted answers, by answer ID; answered names,
	// for each key, the ID of the last answer accepted for it.
	receipts map[string]*Receipt
	answered map[tool.IdempotencyKey]string
}

// suspension is one call waiting for its answer.
type suspension struct {
	// key is the key the call runs with, which its checkpoint must carry.
	key        tool.IdempotencyKey
	checkpoint dispatch.Checkpoint
	answer     json.RawMessage
	receipt    *Receipt // set when an answer is accepted
}

// Pending is one call waiting for an answer, as [QueryPending] lists it
// ([ListPending], [Session.Pending]).
type Pending struct {
	CallID         string              `json:"call_id,omitempty"`
	Tool           string              `json:"tool"`
	IdempotencyKey tool.IdempotencyKey `json:"idempotency_key"`
	// Prompt is what the tool asks, as it wrote it.
	Prompt json.RawMessage `json:"prompt"`
	// ResponseSchema is the JSON Schema an answer must satisfy.
	ResponseSchema json.RawMessage `json:"response_schema"`
}

// NewSession starts the tool calls of the workflow execution ctx belongs
// to: it installs the [UpdateAnswer] handler, with its validator, and the
// [QueryPending] handler. Call it once per execution, early, before the
// first call and before any answer can arrive. Errors wrap
// [ErrInvalidConfig].
func (r *Runtime) NewSession(ctx workflow.Context) (*Session, error) {
	if r == nil || r.execute == nil {
		return nil, errprefix.Errorf("%w: the zero Runtime", ErrInvalidConfig)
	}
	s := &Session{
		rt:       r,
		prefix:   keyPrefix(workflow.GetInfo(ctx)),
		sealed:   map[tool.IdempotencyKey]int{},
		receipts: map[string]*Receipt{},
		answered: map[tool.IdempotencyKey]string{},
	}
	// The Store is never claimed in: Settle only seals. A call may wait
	// as long as the workflow does, hence the longest TTL.
	decide, err := dispatch.New(dispatch.Config{
		Registry:        r.registry,
		Store:           historyClaims{},
		SealKeys:        r.sealKeys,
		NewKey:          noKey,
		NewCheckpointID: s.checkpointID,
		CheckpointTTL:   dispatch.MaxCheckpointTTL,
		Clock:           func() time.Time { return workflow.Now(ctx) },
	})
	if err != nil {
		return nil, errprefix.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	s.decide = decide
	err = workflow.SetUpdateHandlerWithOptions(ctx, UpdateAnswer, s.accept, workflow.UpdateHandlerOptions{Validator: s.check})
	if err != nil {
		return nil, errprefix.Errorf("%w: installing the %s update: %v", ErrInvalidConfig, UpdateAnswer, err)
	}
	if err := workflow.SetQueryHandler(ctx, QueryPending, s.Pending); err != nil {
		return nil, errprefix.Errorf("%w: installing the %s query: %v", ErrInvalidConfig, QueryPending, err)
	}
	if err := workflow.SetQueryHandler(ctx, QueryReceipt, s.Receipt); err != nil {
		return nil, errprefix.Errorf("%w: installing the %s query: %v", ErrInvalidConfig, QueryReceipt, err)
	}
	return s, nil
}

// keyPrefix is what the keys of an execution's calls begin with: its
// workflow ID and its original run ID, which the history's first event
// records. A reset run replays that event, so it keeps the original run
// ID of the run it was reset from, and its calls keep their keys; a run
// started by continue-as-new has a first event, and an original run ID,
// of its own, so its keys differ from every earlier run's. (The first
// run ID would not do: every run of a continue-as-new chain shares it, so
// their call numbers would collide, and a reset changes it.) The SDK's
// test environment records no original run ID; there the run ID, which
// it never changes, stands in for it.
func keyPrefix(info *workflow.Info) string {
	run := info.OriginalRunID
	if run == "" {
		run = info.WorkflowExecution.RunID
	}
	return info.WorkflowExecution.ID + "/" + run + "/"
}

// Pending lists the calls waiting for an answer, in the order they
// suspended; it is also the [QueryPending] handler. The slices are the
// caller's.
func (s *Session) Pending() ([]Pending, error) {
	if s == nil {
		return []Pending{}, nil
	}
	out := make([]Pending, 0, len(s.waiting))
	for _, w := range s.waiting {
		ir := w.checkpoint.InputRequest()
		out = append(out, Pending{
			CallID:         w.checkpoint.CallID(),
			Tool:           w.checkpoint.Request().Name,
			IdempotencyKey: w.checkpoint.IdempotencyKey(),
			Prompt:         ir.Prompt(),
			ResponseSchema: ir.ResponseSchema().JSON(),
		})
	}
	return out, nil
}

// Run runs the calls of one model turn and returns their outcomes in the
// order of calls, as [dispatch.Dispatcher.RunAll] does, but durably:
//
//   - each call gets its idempotency key from what the history records
//     (the workflow ID, the original run ID and the call's number in the
//     run) unless the Call carries one, so the key is the same on every
//     attempt of its activity, on every replay, on any worker, and after
//     a reset (a run started by continue-as-new numbers its calls anew
//     under its own original run ID; a call that must keep its key
//     across such runs carries it);
//   - each call is admitted here, in workflow code, with
//     [tool.Contract.Prepare], which is deterministic; a call that is not
//     admitted ends rejected without any activity;
//   - an admitted call runs in the activity, with the retry policy its
//     [tool.Effect] allows (see [Config].ActivityOptions), and its outcome
//     is classified here with [dispatch.Dispatcher.Settle];
//   - a call that asks for input waits, as workflow state, until an
//     [UpdateAnswer] brings a valid answer, then resumes with the same key
//     in the activity, as often as the tool asks.
//
// The calls run concurrently, each in a coroutine of the workflow. Run
// returns when every call has an outcome other than suspended, or when ctx is
// cancelled: a call still waiting then has its suspended [dispatch.Outcome],
// whose [dispatch.Checkpoint] can be resumed elsewhere
// ([dispatch.Dispatcher.Resume]). [dispatch.Call].Progress is ignored:
// progress becomes heartbeats of the activity. [dispatch.Call].Principal goes
// to the activity, where it names the call's record and is what a
// [dispatch.Reconciler] is told; the checkpoints of suspended calls are
// sealed for no principal. [dispatch.Outcome].Duration is
// measured in workflow time. calls is not retained.
func (s *Session) Run(ctx workflow.Context, calls []dispatch.Call) []dispatch.Outcome {
	outcomes := make([]dispatch.Outcome, len(calls))
	if s == nil || s.rt == nil {
		for i, c := range calls {
			outcomes[i] = dispatch.Outcome{
				CallID: c.ID, Tool: c.Request.Name, Kind: dispatch.KindUnknown, IsError: true,
				Output: tool.NewTextOutput(fmt.Sprintf(dispatch.UnknownOutcomeText, strconv.Quote(c.Request.Name))),
				Err:    errprefix.Errorf("%w: the zero Session runs nothing", ErrInvalidConfig),
			}
		}
		return outcomes
	}
	// Keys are chosen in call order before any call starts, so that they
	// depend on nothing but the order of calls.
	keys := make([]tool.IdempotencyKey, len(calls))
	for i, c := range calls {
		keys[i] = c.IdempotencyKey
		if keys[i] == "" {
			keys[i] = s.newKey()
		}
	}
	wg := workflow.NewWaitGroup(ctx)
	for i, c := range calls {
		wg.Add(1)
		workflow.Go(ctx, func(ctx workflow.Context) {
			defer wg.Done()
			outcomes[i] = s.runOne(ctx, dispatch.Call{ID: c.ID, Request: c.Request}, keys[i], c.Principal)
		})
	}
	wg.Wait(ctx)
	return outcomes
}

// newKey numbers the next call of the run.
func (s *Session) newKey() tool.IdempotencyKey {
	s.next++
	return tool.IdempotencyKey(s.prefix + strconv.Itoa(s.next))
}

// runOne runs one call until it has an outcome other than suspended, or
// ctx is cancelled while it waits. principal goes to the activity only,
// for its call record and Reconciler: the checkpoints workflow code
// seals name none (see Session.Run).
func (s *Session) runOne(ctx workflow.Context, call dispatch.Call, key tool.IdempotencyKey, principal string) dispatch.Outcome {
	start := workflow.Now(ctx)
	o := s.start(ctx, call, key, principal)
	for o.Kind == dispatch.KindSuspended {
		w := &suspension{key: key, checkpoint: *o.Checkpoint}
		s.waiting = append(s.waiting, w)
		if err := workflow.Await(ctx, func() bool { return w.receipt != nil }); err != nil {
			s.waiting = slices.DeleteFunc(s.waiting, func(x *suspension) bool { return x == w })
			break
		}
		o = s.execute(ctx, call, key, callInput{CallID: call.ID, Request: call.Request, IdempotencyKey: key, Checkpoint: o.Checkpoint, Answer: w.answer})
		w.receipt.Kind = o.Kind
	}
	o.Duration = workflow.Now(ctx).Sub(start)
	return o
}

// start admits a new call and, if admitted, runs it.
func (s *Session) start(ctx workflow.Context, call dispatch.Call, key tool.IdempotencyKey, principal string) dispatch.Outcome {
	binding, ok := s.rt.registry.Resolve(call.Request.Name)
	if !ok {
		return s.unknownTool(call)
	}
	contract := binding.Contract()
	if _, err := contract.Prepare(call.Request, tool.Admission{IdempotencyKey: key}); err != nil {
		o := s.decide.Settle(call, key, contract.Definition().Effect, tool.Result{}, err)
		logRefusal(ctx, "tool call not admitted", o)
		return o
	}
	return s.execute(ctx, call, key, callInput{CallID: call.ID, Request: call.Request, IdempotencyKey: key, Principal: principal})
}

// unknownTool is the outcome of a call to a tool the registry lacks:
// dispatch's Run ([dispatch.Dispatcher.Run]) resolves, finds nothing, lists
// the tools there are, and runs nothing. It reads the clock only for the
// Outcome's Duration, which runOne replaces with workflow time, logs nothing
// (the decide Dispatcher has no logger), and lists the names sorted; hence
// the determinism checker's exemption.
func (s *Session) unknownTool(call dispatch.Call) dispatch.Outcome {
	return s.decide.Run(context.Background(), call) //workflowcheck:ignore
}

// execute runs the call activity with in and settles what it returns.
func (s *Session) execute(ctx workflow.Context, call dispatch.Call, key tool.IdempotencyKey, in callInput) dispatch.Outcome {
	binding, ok := s.rt.registry.Resolve(call.Request.Name)
	if !ok {
		return s.unknownTool(call)
	}
	contract := binding.Contract()
	effect := contract.Definition().Effect
	actx := workflow.WithActivityOptions(ctx, s.rt.activityOptions(call.Request.Name, effect))
	var res callResult
	err := workflow.ExecuteActivity(actx, ActivityName, in).Get(actx, &res)
	result, err := decodeResult(res, err)
	if err == nil {
		if verr := contract.ValidateResult(result); verr != nil {
			err = errprefix.Errorf("%w: %w", ErrInvalidActivityResult, verr)
		}
	}
	o := s.decide.Settle(call, key, effect, result, err)
	if errors.Is(err, ErrInvalidActivityResult) {
		logRefusal(ctx, "tool call result refused", o)
	}
	return o
}

// logRefusal records a call that workflow code refused (its admission, or
// the result its activity returned) with the workflow's logger, which
// writes to the log of the worker that runs the workflow task and is
// silent while a worker replays it. The record has the outcome's error
// and its private cause (an InputRejection's or a Failure's, or the
// defect of an input validator): the one place they go, since neither
// reaches the history (an admission refusal starts no activity, and the
// outcome is the workflow's own value). It is the workflow side's
// counterpart of the activity side's [Config].Logger.
func logRefusal(ctx workflow.Context, msg string, o dispatch.Outcome) {
	keyvals := []any{"tool", o.Tool, "call_id", o.CallID, "idempotency_key", string(o.IdempotencyKey), "kind", string(o.Kind)}
	if o.Err != nil {
		keyvals = append(keyvals, "error", o.Err.Error())
		if cause := privateCause(o.Err); cause != nil {
			keyvals = append(keyvals, "cause", cause.Error())
		}
	}
	workflow.GetLogger(ctx).Warn(msg, keyvals...)
}

// privateCause is the cause err carries that its message leaves out, or
// nil.
func privateCause(err error) error {
	var failure *tool.Failure
	if errors.As(err, &failure) && failure.Cause() != nil {
		return failure.Cause()
	}
	var rejection *tool.InputRejection
	if errors.As(err, &rejection) && rejection.Cause() != nil {
		return rejection.Cause()
	}
	var defect *tool.InputValidationError
	if errors.As(err, &defect) && defect.Cause() != nil {
		return defect.Cause()
	}
	return nil
}

// checkpointID is the decide Dispatcher's NewCheckpointID: it names the
// checkpoint of the next suspension of call, deterministically, from the
// call's key and the number of checkpoints sealed for it before. History,
// not a claim store, makes each answered once, so the ID needs to be
// unique, not secret: a digest of the session's prefix (keys a call
// carries itself may repeat across runs), the key and that number.
func (s *Session) checkpointID(call dispatch.Call) (string, error) {
	n := s.sealed[call.IdempotencyKey]
	s.sealed[call.IdempotencyKey] = n + 1
	sum := sha256.Sum256([]byte(checkpointIDDomain + s.prefix + "\x00" + string(call.IdempotencyKey) + "\x00" + strconv.Itoa(n)))
	return hex.EncodeToString(sum[:16]), nil
}

// checkpointIDDomain keeps the digests of checkpointID apart from any
// other digest of the same text.
const checkpointIDDomain = "github.com/agentcontract/tool/adapters/temporal checkpoint ID\x00"
