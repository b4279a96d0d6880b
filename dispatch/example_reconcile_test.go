package dispatch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// payments is the service a refund tool calls. It does not deduplicate:
// every request refunds. But it can tell what it refunded under a key,
// and a reply of its can be lost after the refund was made.
type payments struct {
	mu    sync.Mutex
	made  map[tool.IdempotencyKey]string // the reference of each refund, by key
	count int
	lose  int // how many replies to lose
}

func (p *payments) refund(key tool.IdempotencyKey, order string, cents int) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.count++
	ref := fmt.Sprintf("R-%d (%s, %d cents)", p.count, order, cents)
	p.made[key] = ref
	if p.lose > 0 {
		p.lose--
		return "", errors.New("read tcp 10.0.0.9:443: connection reset by peer")
	}
	return ref, nil
}

func (p *payments) find(key tool.IdempotencyKey) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ref, ok := p.made[key]
	return ref, ok
}

// refundTool refunds an order through payments, under the call's key.
type refundTool struct{ p *payments }

func (refundTool) Definition() tool.Definition {
	return tool.Definition{Name: "refund", Description: "refund an order",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"order":{"type":"string"},"cents":{"type":"integer"}},"required":["order","cents"]}`)}
}

func (t refundTool) Call(_ context.Context, inv tool.Invocation) (tool.Result, error) {
	var in struct {
		Order string `json:"order"`
		Cents int    `json:"cents"`
	}
	if err := json.Unmarshal(inv.Arguments(), &in); err != nil {
		return tool.Result{}, err
	}
	ref, err := t.p.refund(inv.IdempotencyKey(), in.Order, in.Cents)
	if err != nil {
		return tool.Result{}, err
	}
	return tool.Result{Output: tool.NewTextOutput("refunded " + ref)}, nil
}

// A refund tool gains reconciliation: the reply of its first attempt is
// lost after the refund was made, so the outcome is unknown; the runtime
// retries under the same key, and the dispatcher asks the tool's
// Reconciler what became of the first attempt before it runs anything.
// The refund is made once.
func Example_reconciliation() {
	p := &payments{made: map[tool.IdempotencyKey]string{}, lose: 1}
	binding, err := tool.Bind(refundTool{p})
	if err != nil {
		panic(err)
	}
	registry, err := tool.NewRegistry(binding)
	if err != nil {
		panic(err)
	}
	store, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
	if err != nil {
		panic(err)
	}

	// The reconciliation of the refund tool: what payments did under the key.
	reconcileRefund := func(_ context.Context, r dispatch.Reconciliation) dispatch.Verdict {
		ref, made := p.find(r.IdempotencyKey)
		if !made {
			return dispatch.NotDone() // safe to run
		}
		return dispatch.Done(tool.NewTextOutput("refunded " + ref))
	}
	d, err := dispatch.New(dispatch.Config{
		Registry:    registry,
		Store:       store,
		SealKeys:    []dispatch.SealKey{{ID: "2026-12", Secret: []byte("0123456789abcdef0123456789abcdef")}},
		Reconcilers: map[string]dispatch.Reconciler{"refund": reconcileRefund},
		Observer: &dispatch.Observer{CallDone: func(_ context.Context, info dispatch.CallInfo, _ dispatch.Outcome) {
			if info.Reconciled != "" {
				fmt.Println("the reconciler said:", info.Reconciled)
			}
		}},
	})
	if err != nil {
		panic(err)
	}

	// The runtime names the call by its own durable ID of it, never by
	// anything the model wrote, so that its retries share the key.
	call := dispatch.Call{ID: "toolu_01", Request: tool.Request{Name: "refund", Arguments: `{"order":"A-7","cents":1250}`},
		IdempotencyKey: "conv-9/turn-3/call-1"}
	first := d.Run(context.Background(), call)
	fmt.Println("first attempt:", first.Kind)
	retry := d.Run(context.Background(), call)
	fmt.Println("retry:", retry.Kind, "replayed:", retry.Replayed, "-", retry.Text())
	fmt.Println("refunds made:", p.count)
	// Output:
	// first attempt: unknown
	// the reconciler said: done
	// retry: completed replayed: true - refunded R-1 (A-7, 1250 cents)
	// refunds made: 1
}
