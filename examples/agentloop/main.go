// Command agentloop is a small agent runtime driven by a scripted model. It
// shows the package tool at work on every path a real runtime meets: a
// valid call, malformed arguments, a schema violation and its correction,
// an unknown tool, a refusal by a policy, a call suspended for a person's
// approval and resumed from a checkpoint after a restart, progress from a
// long tool, and a tool that fails.
//
// Usage:
//
//	go run ./examples/agentloop [-approve=yes|no] [-json] [-trace] [-script file]
//
// With -trace, the run is traced with OpenTelemetry (the module
// adapters/otel, into an exporter in memory) and the span tree is printed
// after the transcript: one execute_tool span per call, the suspended
// call's span linked from its resumption's.
//
// The model is script.json, embedded in the program: a list of proposed
// calls, each a tool name and argument text. There is no network and no
// API key.
package main

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/agentcontract/tool/dispatch"
)

//go:embed script.json
var defaultScript []byte

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "agentloop:", err)
		os.Exit(1)
	}
}

// turn is one proposal of the scripted model: what a provider's tool call
// carries once its transport envelope is removed.
type turn struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// run parses args, plays the script and writes the transcript to stdout.
// It returns an error when the flags or the script are unusable, when the
// program itself breaks, or when stdout cannot be written; a tool call that
// is refused or fails is part of the transcript, not an error.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	flags := flag.NewFlagSet("agentloop", flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	approve := flags.String("approve", "yes", "the approver's answer to a refund request: yes or no")
	jsonMode := flags.Bool("json", false, "print the transcript as JSON lines")
	scriptPath := flags.String("script", "", "play this script file instead of the embedded script.json")
	traceMode := flags.Bool("trace", false, "trace the run with OpenTelemetry and print the span tree after the transcript")
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			flags.SetOutput(stdout)
			flags.Usage()
			return nil
		}
		return fmt.Errorf("%w (run with -h for usage)", err)
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %q", flags.Args())
	}
	if *traceMode && *jsonMode {
		return errors.New("-trace prints a text tree: use it without -json")
	}
	var approved bool
	switch *approve {
	case "yes":
		approved = true
	case "no":
		approved = false
	default:
		return fmt.Errorf("-approve must be yes or no, not %q", *approve)
	}

	source := defaultScript
	if *scriptPath != "" {
		b, err := os.ReadFile(*scriptPath)
		if err != nil {
			return err
		}
		source = b
	}
	script, err := parseScript(source)
	if err != nil {
		return err
	}

	dir, err := os.MkdirTemp("", "agentloop-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	out := &transcript{w: stdout, jsonMode: *jsonMode}
	var tr *tracing
	var observer *dispatch.Observer
	if *traceMode {
		if tr, err = newTracing(); err != nil {
			return err
		}
		observer = tr.tel.Observer()
	}
	rt, err := newRuntime(out, dir, approved, observer)
	if err != nil {
		return err
	}
	if tr == nil {
		if err := rt.play(ctx, script); err != nil {
			return err
		}
		return out.err()
	}
	traced, root := tr.start(ctx)
	err = rt.play(traced, script)
	root.End()
	if err != nil {
		return err
	}
	if err := out.err(); err != nil {
		return err
	}
	return tr.print(stdout)
}

// parseScript decodes the scripted model: a JSON array of turns, strictly.
func parseScript(data []byte) ([]turn, error) {
	decoder := json.NewDecoder(bytes.NewReader(data))
	decoder.DisallowUnknownFields()
	var script []turn
	if err := decoder.Decode(&script); err != nil {
		return nil, fmt.Errorf("script: %w", err)
	}
	if decoder.More() {
		return nil, errors.New("script: trailing data after the list of turns")
	}
	if len(script) == 0 {
		return nil, errors.New("script: no turns")
	}
	return script, nil
}
