package toolmcp

import (
	"context"
	"strconv"
	"sync"

	"github.com/agentcontract/tool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ProgressRelay carries the progress a remote server reports for a call of
// an imported tool to the call's own [tool.ProgressReporter] (the one
// [tool.WithProgressReporter] or [dispatch.Call].Progress installed). Progress
// notifications arrive at the client, not at the call, so the relay needs
// both ends: set [ProgressRelay.Handle] as the client's
// [mcp.ClientOptions].ProgressNotificationHandler, and the relay as
// [ImportConfig].Progress.
//
// Each call of an imported tool then sends a progress token of its own and
// receives the notifications that carry it while the call runs. A
// notification the SDK delivers after the call returned is dropped, as is
// one whose values [tool.Progress] refuses: progress is observation only and
// never changes an outcome.
//
// The zero ProgressRelay is ready to use; it is safe for concurrent use and
// must not be copied after first use.
type ProgressRelay struct {
	mu    sync.Mutex
	next  uint64
	calls map[string]context.Context
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
	ctx := r.calls[token]
	r.mu.Unlock()
	if ctx == nil {
		return
	}
	_ = tool.ReportProgress(ctx, tool.Progress{Completed: req.Params.Progress, Total: req.Params.Total, Message: req.Params.Message})
}

// register gives the call running with ctx a token; the returned function
// forgets it.
func (r *ProgressRelay) register(ctx context.Context) (string, func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls == nil {
		r.calls = map[string]context.Context{}
	}
	r.next++
	token := "toolmcp-" + strconv.FormatUint(r.next, 10)
	r.calls[token] = ctx
	return token, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.calls, token)
	}
}
