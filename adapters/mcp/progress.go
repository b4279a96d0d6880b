package toolmcp

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/agentcontract/tool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultProgressLinger is how long a call of an imported tool waits, after
// its result, for progress notifications the server sent before it (see
// [ProgressRelay].Linger).
const DefaultProgressLinger = 25 * time.Millisecond

// ProgressRelay carries the progress a remote server reports for a call of
// an imported tool to the call's own [tool.ProgressReporter] (the one
// [tool.WithProgressReporter] or [dispatch.Call].Progress installed). Progress
// notifications arrive at the client, not at the call, so the relay needs
// both ends: set [ProgressRelay.Handle] as the client's
// [mcp.ClientOptions].ProgressNotificationHandler, and the relay as
// [ImportConfig].Progress.
//
// Each call of an imported tool then sends a progress token of its own and
// receives the notifications that carry it while the call runs. The SDK
// hands notifications to their handler apart from results, so a
// notification the server sent just before its result (the last step, say)
// can reach the handler after the result has reached the call: the call
// therefore returns only once no notification of its own has arrived for
// Linger after its result (and at most ten times Linger after it), or at
// once when its ctx has ended. A notification handed over later than that
// is dropped, as is one whose values [tool.Progress] refuses: progress is
// observation only and never changes an outcome.
//
// The zero ProgressRelay is ready to use; it is safe for concurrent use and
// must not be copied after first use.
type ProgressRelay struct {
	// Linger is how long a call waits after its result for a notification
	// that is still on its way; 0 means DefaultProgressLinger, and a
	// negative value does not wait.
	Linger time.Duration

	mu    sync.Mutex
	next  uint64
	calls map[string]*relayedCall
}

// relayedCall is a call the relay delivers to: its ctx, and when it last
// received a notification.
type relayedCall struct {
	ctx  context.Context
	last time.Time
}

// Handle is an [mcp.ClientOptions].ProgressNotificationHandler: it reports
// the notification's progress to the call that sent its token
// ([tool.ReportProgress]).
func (r *ProgressRelay) Handle(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	token, ok := req.Params.ProgressToken.(string)
	if !ok {
		return
	}
	r.mu.Lock()
	c := r.calls[token]
	if c != nil {
		c.last = time.Now()
	}
	r.mu.Unlock()
	if c == nil {
		return
	}
	_ = tool.ReportProgress(c.ctx, tool.Progress{Completed: req.Params.Progress, Total: req.Params.Total, Message: req.Params.Message})
}

// register gives the call running with ctx a token; the returned function,
// called once the call has its result, waits for the notifications still
// on their way (see Linger) and forgets the token.
func (r *ProgressRelay) register(ctx context.Context) (string, func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls == nil {
		r.calls = map[string]*relayedCall{}
	}
	r.next++
	token := "toolmcp-" + strconv.FormatUint(r.next, 10)
	c := &relayedCall{ctx: ctx}
	r.calls[token] = c
	return token, func() {
		r.linger(c)
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.calls, token)
	}
}

// linger waits until c has received no notification for Linger, at most
// ten times Linger, or until its ctx ends.
func (r *ProgressRelay) linger(c *relayedCall) {
	quiet := r.Linger
	if quiet == 0 {
		quiet = DefaultProgressLinger
	}
	if quiet < 0 {
		return
	}
	start := time.Now()
	deadline := start.Add(10 * quiet)
	for {
		r.mu.Lock()
		last := c.last
		r.mu.Unlock()
		if last.Before(start) {
			last = start
		}
		wait := min(time.Until(last.Add(quiet)), time.Until(deadline))
		if wait <= 0 {
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-c.ctx.Done():
			t.Stop()
			return
		}
	}
}
