// Command refund runs a refund-approval flow as a Temporal workflow: the
// model's calls are admitted in the workflow and run as activities (with
// [tooltemporal.Runtime] and [tooltemporal.Session]), the refund waits for a
// person's approval as workflow state, and the worker is replaced while it
// waits, as in a deploy.
//
// It needs a Temporal server. For a local one, install the Temporal CLI
// and run
//
//	temporal server start-dev
//
// then
//
//	go run ./examples/shop/cmd/refund -address 127.0.0.1:7233
//
// Without a server it says how to start one and exits with status 2.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	tooltemporal "github.com/agentcontract/tool/adapters/temporal"
	"github.com/agentcontract/tool/examples/shop"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// run is the program; it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("refund", flag.ContinueOnError)
	flags.SetOutput(stderr)
	address := flags.String("address", "127.0.0.1:7233", "host:port of the Temporal frontend")
	namespace := flags.String("namespace", "default", "Temporal namespace")
	taskQueue := flags.String("task-queue", "refund-approval", "task queue of the workflow and its activities")
	wait := flags.Duration("dial-timeout", 5*time.Second, "how long to try to reach the server")
	if err := flags.Parse(args); err != nil {
		return 2
	}

	quiet := log.NewStructuredLogger(slog.New(slog.DiscardHandler))
	dialCtx, cancel := context.WithTimeout(ctx, *wait)
	c, err := client.DialContext(dialCtx, client.Options{HostPort: *address, Namespace: *namespace, Logger: quiet})
	cancel()
	if err != nil {
		fmt.Fprintf(stderr, "No Temporal server answered at %s: %v\n\n"+
			"Start a local one with the Temporal CLI (https://docs.temporal.io/cli;\n"+
			"`go install github.com/temporalio/cli/cmd/temporal@v1.5.1` builds it from source):\n\n"+
			"    temporal server start-dev\n\n"+
			"then run this again, or pass -address host:port of a server you have.\n", *address, err)
		return 2
	}
	defer c.Close()
	if err := approve(ctx, c, *taskQueue, stdout); err != nil {
		fmt.Fprintf(stderr, "refund: %v\n", err)
		return 1
	}
	return 0
}

// approve runs the flow: start a worker, start the workflow, wait until
// the refund asks for approval, replace the worker with one built from
// scratch, answer (wrongly, then rightly), and print the transcript.
func approve(ctx context.Context, c client.Client, taskQueue string, out io.Writer) error {
	l := &shop.Ledger{}
	first, err := startWorker(c, taskQueue, l)
	if err != nil {
		return err
	}
	id := fmt.Sprintf("refund-approval-%d", time.Now().UnixNano())
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: taskQueue}, workflowName, script)
	if err != nil {
		first.Stop()
		return err
	}
	fmt.Fprintf(out, "started workflow %s\n", id)

	pending, err := waitForPending(ctx, c, id)
	if err != nil {
		first.Stop()
		return err
	}
	p := pending[0]
	fmt.Fprintf(out, "%s (%s) waits for approval: %s\n", p.Tool, p.CallID, p.Prompt)

	first.Stop()
	fmt.Fprintln(out, "worker stopped; a new worker with a registry built from scratch takes over")
	second, err := startWorker(c, taskQueue, l)
	if err != nil {
		return err
	}
	defer second.Stop()

	// Each answer carries an ID of the sender's choosing: sent again, it
	// gets the same receipt, and the call resumes once.
	_, err = tooltemporal.SendAnswer(ctx, c, id, tooltemporal.Answer{ID: "approval-1", IdempotencyKey: p.IdempotencyKey, Response: []byte(`{"approve":"yes"}`)})
	if err == nil {
		return errors.New("the workflow accepted an answer that breaks its schema")
	}
	fmt.Fprintf(out, "answer {\"approve\":\"yes\"} refused: %v\n", err)
	answer := tooltemporal.Answer{ID: "approval-2", IdempotencyKey: p.IdempotencyKey, Response: []byte(`{"approve":true}`)}
	receipt, err := tooltemporal.SendAnswer(ctx, c, id, answer)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "answer {\"approve\":true} accepted as %s\n", receipt.AnswerID)
	if again, err := tooltemporal.SendAnswer(ctx, c, id, answer); err != nil || again.AnswerID != receipt.AnswerID {
		return fmt.Errorf("the same answer sent again: %+v, %v", again, err)
	}
	fmt.Fprintln(out, "the same answer sent again: the same receipt")

	var transcript []line
	if err := run.Get(ctx, &transcript); err != nil {
		return err
	}
	for _, l := range transcript {
		fmt.Fprintf(out, "%s %s → %s: %s\n", l.CallID, l.Tool, l.Kind, l.Text)
	}
	fmt.Fprintf(out, "refunds in the ledger: %d\n", l.Count())
	return nil
}

// startWorker builds the tools and a worker from scratch and starts it.
func startWorker(c client.Client, taskQueue string, l *shop.Ledger) (worker.Worker, error) {
	rt, err := newRuntime(l)
	if err != nil {
		return nil, err
	}
	w := worker.New(c, taskQueue, worker.Options{})
	rt.Register(w)
	w.RegisterWorkflowWithOptions(refundWorkflow(rt), workflow.RegisterOptions{Name: workflowName})
	return w, w.Start()
}

// waitForPending asks the workflow, twice a second for a minute at most,
// until a call waits for an answer.
func waitForPending(ctx context.Context, c client.Client, id string) ([]tooltemporal.Pending, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		pending, err := tooltemporal.ListPending(ctx, c, id)
		if err == nil && len(pending) > 0 {
			return pending, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no call asked for approval within a minute (last error: %v)", err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}
