package tool

import (
	"context"
	"math"
	"unicode/utf8"
)

// Progress reports how far a call has come. Total is zero when the tool
// cannot bound its work. The zero Progress is valid: nothing completed of
// an unknown total, without a message. A Progress is a plain value; it is
// copied when passed and holds no reference to the call.
type Progress struct {
	Completed float64 `json:"completed"`
	Total     float64 `json:"total,omitzero"`
	Message   string  `json:"message,omitzero"`
}

// Validate checks that Completed and Total are finite and non-negative,
// that Completed does not exceed a known Total, and that Message is valid
// UTF-8. Errors wrap [ErrInvalidProgress].
func (p Progress) Validate() error {
	switch {
	case math.IsNaN(p.Completed) || math.IsInf(p.Completed, 0) || p.Completed < 0:
		return errorf("%w: completed %v must be finite and not negative", ErrInvalidProgress, p.Completed)
	case math.IsNaN(p.Total) || math.IsInf(p.Total, 0) || p.Total < 0:
		return errorf("%w: total %v must be finite and not negative", ErrInvalidProgress, p.Total)
	case p.Total > 0 && p.Completed > p.Total:
		return errorf("%w: completed %v exceeds total %v", ErrInvalidProgress, p.Completed, p.Total)
	case !utf8.ValidString(p.Message):
		return errorf("%w: message is not valid UTF-8", ErrInvalidProgress)
	}
	return nil
}

// ProgressReporter receives the progress of calls made with a context from
// [WithProgressReporter]. [Progress] is observation only: whatever the reporter
// returns, the call's outcome is the tool's. A reporter may be called from
// several goroutines of one call at once and must be safe for that.
type ProgressReporter interface {
	ReportProgress(ctx context.Context, progress Progress) error
}

// ProgressReporterFunc adapts a function to [ProgressReporter].
type ProgressReporterFunc func(context.Context, Progress) error

// ReportProgress calls f(ctx, progress).
func (f ProgressReporterFunc) ReportProgress(ctx context.Context, progress Progress) error {
	return f(ctx, progress)
}

type progressKey struct{}

// WithProgressReporter returns a context that carries reporter to the tools
// called with it. [Progress] travels in the context, like a trace span, so
// that an [Invocation] stays plain data. A nil reporter removes any reporter
// ctx carried.
func WithProgressReporter(ctx context.Context, reporter ProgressReporter) context.Context {
	return context.WithValue(ctx, progressKey{}, reporter)
}

// ReportProgress validates progress and hands it to the reporter ctx
// carries. It is a no-op without one, so tools report unconditionally.
// Invalid progress is an error wrapping [ErrInvalidProgress], reporter or not;
// a reporter's own error is returned as it is. Neither changes the call's
// outcome unless the tool decides so.
func ReportProgress(ctx context.Context, progress Progress) error {
	if err := progress.Validate(); err != nil {
		return err
	}
	reporter, _ := ctx.Value(progressKey{}).(ProgressReporter)
	if reporter == nil || isTypedNil(reporter) {
		return nil
	}
	return reporter.ReportProgress(ctx, progress)
}
