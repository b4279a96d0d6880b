// Command approval runs one model turn on OpenAI Chat Completions whose
// refund waits for a person, end to end, with no network and no API key:
//
//	go run ./examples/approval
//
// A scripted stand-in for the API (the official client talks to it over
// loopback) asks for a refund; the call waits for a person; the approval
// desk, served on loopback, approves it by itself, as a person would in a
// browser; the runtime, which waited for its turn on a dispatcher of its
// own, sends the tool messages and the model answers. Run it with -wait to
// answer at the desk yourself (it prints the desk's URL).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/agentcontract/tool"
	toolopenai "github.com/agentcontract/tool/adapters/openai"
	"github.com/agentcontract/tool/desk"
	"github.com/agentcontract/tool/dispatch"
)

func main() {
	wait := flag.Bool("wait", false, "wait for a person to answer at the desk instead of approving by itself")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, !*wait); err != nil {
		fmt.Fprintln(os.Stderr, "approval:", err)
		os.Exit(1)
	}
}

// run wires the example together and runs the model's turn; auto has the
// desk approve the refund by itself.
func run(ctx context.Context, out io.Writer, auto bool) error {
	reg, runtime, approvals, err := wire()
	if err != nil {
		return err
	}
	deskURL, stopDesk, err := serve(approvals)
	if err != nil {
		return err
	}
	defer stopDesk()
	tools, err := toolopenai.New(toolopenai.Config{Registry: reg, Strict: true})
	if err != nil {
		return err
	}
	api, stopAPI := scriptedAPI()
	defer stopAPI()
	c := conversation{
		client:  openai.NewClient(option.WithBaseURL(api), option.WithAPIKey("not needed")),
		tools:   tools,
		runtime: runtime,
		deskURL: deskURL,
		auto:    auto,
		out:     out,
	}
	return c.turn(ctx)
}

// wire builds the library's side: the registry, one store for every
// replica, a dispatcher for the runtime and one for the desk, and the desk.
func wire() (*tool.Registry, *dispatch.Dispatcher, *desk.Desk, error) {
	reg, err := tool.NewRegistry(mustBind(refundTool()))
	if err != nil {
		return nil, nil, nil, err
	}
	store, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{}) // replicas share stores/sqlstore
	if err != nil {
		return nil, nil, nil, err
	}
	config := dispatch.Config{Registry: reg, Store: store, SealKeys: []dispatch.SealKey{{ID: "2026-12", Secret: secret}}}
	runtime, err := dispatch.New(config)
	if err != nil {
		return nil, nil, nil, err
	}
	deskSide, err := dispatch.New(config) // the desk's replica
	if err != nil {
		return nil, nil, nil, err
	}
	approvals, err := desk.New(desk.Config{
		Dispatcher: deskSide, Store: store,
		Person: func(*http.Request) (string, error) { return "operator", nil }, // your authentication
		Authorize: func(_ context.Context, person string, p dispatch.Pending) (bool, error) {
			return person == "operator" && p.Tool == "refund", nil
		},
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return reg, runtime, approvals, nil
}

// conversation is the runtime's side of the conversation: the model's API,
// the tools it is offered, the dispatcher that runs its calls, and where
// the desk is.
type conversation struct {
	client  openai.Client
	tools   *toolopenai.Tools
	runtime *dispatch.Dispatcher
	deskURL string
	auto    bool // the desk approves by itself
	out     io.Writer
}

// turn is the model's turn: it asks the model, runs the calls it makes and
// sends their results back, until the model answers in words.
func (c conversation) turn(ctx context.Context) error {
	params := openai.ChatCompletionNewParams{
		Model:    openai.ChatModelGPT5_5,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(userSays)},
		Tools:    c.tools.ChatTools(),
	}
	fmt.Fprintf(c.out, "user: %s\n", userSays)
	for {
		completion, err := c.client.Chat.Completions.New(ctx, params)
		if err != nil {
			return err
		}
		msg := completion.Choices[0].Message
		calls, err := c.tools.ChatCalls(msg)
		if err != nil {
			return err
		}
		if len(calls) == 0 {
			fmt.Fprintf(c.out, "assistant: %s\n", msg.Content)
			return nil
		}
		results, err := c.runCalls(ctx, calls)
		if err != nil {
			return err
		}
		params.Messages = append(append(params.Messages, msg.ToParam()), results...)
	}
}

// runCalls runs the calls of one message of the model and returns their
// tool messages. When a call waits for a person, it waits for the turn to
// end, which another replica (the desk's) brings about.
func (c conversation) runCalls(ctx context.Context, calls []dispatch.Call) ([]openai.ChatCompletionMessageParamUnion, error) {
	for i := range calls {
		calls[i].TurnID = "conversation-1/turn-1" // RunAll saves the turn of a call that waits
		fmt.Fprintf(c.out, "assistant calls %s %s\n", calls[i].Request.Name, calls[i].Request.Arguments)
	}
	outcomes := c.runtime.RunAll(ctx, calls)
	if waiting(outcomes) {
		fmt.Fprintf(c.out, "the refund waits for a person at %s\n", c.deskURL)
		if c.auto {
			go func() {
				if err := approveFirst(ctx, c.deskURL); err != nil {
					fmt.Fprintln(os.Stderr, "approval: the desk could not approve:", err)
				}
			}()
		}
		var err error
		if outcomes, err = c.runtime.WaitTurn(ctx, "conversation-1/turn-1"); err != nil {
			return nil, err
		}
	}
	results, err := toolopenai.ChatResults(outcomes)
	if err != nil {
		return nil, err
	}
	for _, r := range results {
		b, _ := json.Marshal(r)
		fmt.Fprintf(c.out, "tool message: %s\n", b)
	}
	return results, nil
}

// waiting reports whether a call of the turn waits for a person.
func waiting(outcomes []dispatch.Outcome) bool {
	for _, o := range outcomes {
		if o.Kind == dispatch.KindSuspended {
			return true
		}
	}
	return false
}

// serve serves h on a loopback port and returns its URL.
func serve(h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String() + "/", func() { _ = srv.Close() }, nil
}

// secret seals the checkpoints; a real one is 32 random bytes from your
// secret store, the same on every replica.
var secret = []byte("an example secret of 32 bytes!!!")
