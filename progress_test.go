package tool_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
)

func TestProgressValidate(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name     string
		progress tool.Progress
		wantErr  string // "" when valid
	}{
		{name: "zero", progress: tool.Progress{}},
		{name: "part of a known total", progress: tool.Progress{Completed: 3, Total: 10, Message: "copying"}},
		{name: "all of a known total", progress: tool.Progress{Completed: 10, Total: 10}},
		{name: "fractions", progress: tool.Progress{Completed: 0.25, Total: 1}},
		{name: "unknown total", progress: tool.Progress{Completed: 1e9}},
		{name: "negative zero", progress: tool.Progress{Completed: math.Copysign(0, -1)}},
		{name: "UTF-8 message", progress: tool.Progress{Message: "żółć 😀"}},
		{name: "completed NaN", progress: tool.Progress{Completed: nan}, wantErr: "tool: invalid progress: completed NaN must be finite and not negative"},
		{name: "completed +Inf", progress: tool.Progress{Completed: inf}, wantErr: "tool: invalid progress: completed +Inf must be finite and not negative"},
		{name: "completed -Inf", progress: tool.Progress{Completed: -inf}, wantErr: "tool: invalid progress: completed -Inf must be finite and not negative"},
		{name: "completed negative", progress: tool.Progress{Completed: -1}, wantErr: "tool: invalid progress: completed -1 must be finite and not negative"},
		{name: "total NaN", progress: tool.Progress{Total: nan}, wantErr: "tool: invalid progress: total NaN must be finite and not negative"},
		{name: "total +Inf", progress: tool.Progress{Total: inf}, wantErr: "tool: invalid progress: total +Inf must be finite and not negative"},
		{name: "total -Inf", progress: tool.Progress{Total: -inf}, wantErr: "tool: invalid progress: total -Inf must be finite and not negative"},
		{name: "total negative", progress: tool.Progress{Completed: 0, Total: -0.5}, wantErr: "tool: invalid progress: total -0.5 must be finite and not negative"},
		{name: "completed beyond total", progress: tool.Progress{Completed: 11, Total: 10}, wantErr: "tool: invalid progress: completed 11 exceeds total 10"},
		{name: "invalid UTF-8 message", progress: tool.Progress{Completed: 1, Message: "bad \xff"}, wantErr: "tool: invalid progress: message is not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.progress.Validate()
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tool.ErrInvalidProgress)
			require.EqualError(t, err, tt.wantErr)

			// ReportProgress validates too, with or without a reporter,
			// and an invalid progress never reaches the reporter.
			require.ErrorIs(t, tool.ReportProgress(context.Background(), tt.progress), tool.ErrInvalidProgress)
			reached := false
			ctx := tool.WithProgressReporter(context.Background(), tool.ProgressReporterFunc(func(context.Context, tool.Progress) error {
				reached = true
				return nil
			}))
			require.ErrorIs(t, tool.ReportProgress(ctx, tt.progress), tool.ErrInvalidProgress)
			require.False(t, reached)
		})
	}
}

func TestReportProgressWithoutReporter(t *testing.T) {
	require.NoError(t, tool.ReportProgress(context.Background(), tool.Progress{Completed: 1, Total: 2}))
}

func TestReportProgressReachesReporter(t *testing.T) {
	var got []tool.Progress
	var gotCtx context.Context
	type marker struct{}
	ctx := context.WithValue(context.Background(), marker{}, "call 7")
	ctx = tool.WithProgressReporter(ctx, tool.ProgressReporterFunc(func(ctx context.Context, p tool.Progress) error {
		gotCtx = ctx
		got = append(got, p)
		return nil
	}))
	require.NoError(t, tool.ReportProgress(ctx, tool.Progress{Completed: 1, Total: 3, Message: "one"}))
	require.NoError(t, tool.ReportProgress(ctx, tool.Progress{Completed: 3, Total: 3, Message: "done"}))
	require.Equal(t, []tool.Progress{{Completed: 1, Total: 3, Message: "one"}, {Completed: 3, Total: 3, Message: "done"}}, got)
	require.Equal(t, "call 7", gotCtx.Value(marker{}), "the reporter gets the caller's context")
}

func TestWithProgressReporterNilRemoves(t *testing.T) {
	reached := false
	ctx := tool.WithProgressReporter(context.Background(), tool.ProgressReporterFunc(func(context.Context, tool.Progress) error {
		reached = true
		return errors.New("reached")
	}))
	ctx = tool.WithProgressReporter(ctx, nil)
	require.NoError(t, tool.ReportProgress(ctx, tool.Progress{Completed: 1}))
	require.False(t, reached)
	require.ErrorIs(t, tool.ReportProgress(ctx, tool.Progress{Completed: -1}), tool.ErrInvalidProgress, "still validated")
}

type pointerReporter struct{ n int }

func (r *pointerReporter) ReportProgress(context.Context, tool.Progress) error {
	r.n++
	return nil
}

func TestReportProgressTypedNilReporter(t *testing.T) {
	for name, reporter := range map[string]tool.ProgressReporter{
		"nil func":    tool.ProgressReporterFunc(nil),
		"nil pointer": (*pointerReporter)(nil),
	} {
		t.Run(name, func(t *testing.T) {
			ctx := tool.WithProgressReporter(context.Background(), reporter)
			require.NotPanics(t, func() {
				require.NoError(t, tool.ReportProgress(ctx, tool.Progress{Completed: 1}))
			})
			require.ErrorIs(t, tool.ReportProgress(ctx, tool.Progress{Completed: math.NaN()}), tool.ErrInvalidProgress)
		})
	}
}

// TestReportProgressErrorIsObservationOnly: a reporter's error goes back to
// the tool as it is, and a tool that ignores it completes normally.
func TestReportProgressErrorIsObservationOnly(t *testing.T) {
	errFull := errors.New("progress queue full")
	var fromReport error
	count, err := tool.NewFunc(tool.FuncConfig{Name: "count", Description: "count to n", Effect: tool.EffectSafe},
		func(ctx context.Context, in struct {
			N int `json:"n"`
		}) (int, error) {
			for i := 1; i <= in.N; i++ {
				fromReport = tool.ReportProgress(ctx, tool.Progress{Completed: float64(i), Total: float64(in.N)})
			}
			return in.N, nil
		})
	require.NoError(t, err)
	b := mustBind(t, count)
	inv, err := b.Contract().Prepare(tool.Request{Name: "count", Arguments: `{"n":3}`}, tool.Admission{})
	require.NoError(t, err)

	ctx := tool.WithProgressReporter(context.Background(), tool.ProgressReporterFunc(func(context.Context, tool.Progress) error {
		return errFull
	}))
	result, err := b.Call(ctx, inv)
	require.NoError(t, err)
	text, _ := result.Output.Text()
	require.Equal(t, "3", text)
	require.Same(t, errFull, fromReport, "the reporter's error is returned as it is")

	// The same call without a reporter has the same outcome.
	inv, err = b.Contract().Prepare(tool.Request{Name: "count", Arguments: `{"n":3}`}, tool.Admission{})
	require.NoError(t, err)
	quiet, err := b.Call(context.Background(), inv)
	require.NoError(t, err)
	require.Equal(t, result, quiet)
	require.NoError(t, fromReport)
}

// TestReportProgressConcurrent: one tool reporting from 16 goroutines into a
// mutex-guarded reporter. Run with -race.
func TestReportProgressConcurrent(t *testing.T) {
	const workers, steps = 16, 50
	fanOut, err := tool.NewFunc(tool.FuncConfig{Name: "fan_out", Description: "work in parallel"},
		func(ctx context.Context, _ struct{}) (string, error) {
			var wg sync.WaitGroup
			errs := make(chan error, workers*steps)
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for s := range steps {
						errs <- tool.ReportProgress(ctx, tool.Progress{Completed: float64(s + 1), Total: steps, Message: strings.Repeat("w", w+1)})
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					return "", err
				}
			}
			return "done", nil
		})
	require.NoError(t, err)
	b := mustBind(t, fanOut)
	inv, err := b.Contract().Prepare(tool.Request{Name: "fan_out"}, tool.Admission{})
	require.NoError(t, err)

	var mu sync.Mutex
	perWorker := map[string]int{}
	ctx := tool.WithProgressReporter(context.Background(), tool.ProgressReporterFunc(func(_ context.Context, p tool.Progress) error {
		mu.Lock()
		defer mu.Unlock()
		perWorker[p.Message]++
		return nil
	}))
	result, err := b.Call(ctx, inv)
	require.NoError(t, err)
	text, _ := result.Output.Text()
	require.Equal(t, "done", text)
	require.Len(t, perWorker, workers)
	for message, n := range perWorker {
		require.Equal(t, steps, n, "worker %d", len(message))
	}
}
