// Command live plays a few tools against a real model provider, so that a
// user with an API key can watch the package at work with a real model:
// the tools are offered in the provider's format, the model's calls are
// admitted by Prepare, run through a dispatch.Dispatcher, and the outcomes
// sent back, until the model answers in text.
//
// Usage:
//
//	GEMINI_API_KEY=… go run ./examples/live [-provider gemini] [-model name] [-prompt text] [-turns n]
//	OPENAI_API_KEY=… go run ./examples/live -provider openai
//	ANTHROPIC_API_KEY=… go run ./examples/live -provider anthropic
//
// Without a key it says where to get one and exits with status 2. OpenAI is
// played through Chat Completions and Anthropic through the Messages API,
// both with the tools in strict mode.
//
// The tools are the demo's kind: a weather lookup, an order search, a refund
// behind a policy that refuses refunds over 100 EUR (and that fails on an
// order refunded already), and a chart returned as a PNG image.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

const defaultPrompt = "I am customer c-42. What is the weather in Lisbon? " +
	"Then list my orders, refund 150 EUR on order o-9 and 20 EUR on order o-7, " +
	"and show me the delivery chart of o-7."

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// options are the parsed flags.
type options struct {
	provider, model, prompt, baseURL string
	turns                            int
}

// provider is one model provider's tool-use loop.
type provider interface {
	// play runs the conversation, writing the transcript to out.
	play(ctx context.Context, o options, key string, reg *tool.Registry, d *dispatch.Dispatcher, out io.Writer) error
}

// providers by flag value, with the variable that holds the key and where
// to get one.
var providers = map[string]struct {
	p       provider
	keyVar  string
	keyHelp string
}{
	"gemini":    {geminiProvider{}, "GEMINI_API_KEY", "create a key at https://aistudio.google.com/apikey"},
	"openai":    {openaiProvider{}, "OPENAI_API_KEY", "create a key at https://platform.openai.com/api-keys"},
	"anthropic": {anthropicProvider{}, "ANTHROPIC_API_KEY", "create a key at https://console.anthropic.com/settings/keys"},
}

// run is the program: it returns the exit status, 0 when the model
// answered, 1 when the conversation broke, 2 for bad usage or a missing key.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("live", flag.ContinueOnError)
	flags.SetOutput(stderr)
	var o options
	flags.StringVar(&o.provider, "provider", "gemini", "model provider: gemini, openai or anthropic")
	flags.StringVar(&o.model, "model", "", "model name; the provider's default when empty")
	flags.StringVar(&o.prompt, "prompt", defaultPrompt, "what the user asks")
	flags.IntVar(&o.turns, "turns", 8, "at most this many model turns")
	flags.StringVar(&o.baseURL, "base-url", "", "the provider's API address, for a proxy or a replay server; the SDK's default when empty")
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if flags.NArg() > 0 || o.turns < 1 {
		fmt.Fprintln(stderr, "live: usage: live [-provider gemini|openai|anthropic] [-model name] [-prompt text] [-turns n>0]")
		return 2
	}
	chosen, ok := providers[o.provider]
	if !ok {
		fmt.Fprintf(stderr, "live: provider %q is not available; use -provider gemini, openai or anthropic\n", o.provider)
		return 2
	}
	key := getenv(chosen.keyVar)
	if key == "" {
		fmt.Fprintf(stderr, "live: no API key: set %s (%s), then run again:\n  %s=… go run ./examples/live -provider %s\n",
			chosen.keyVar, chosen.keyHelp, chosen.keyVar, o.provider)
		return 2
	}

	reg, err := newRegistry(&ledger{refunded: map[string]bool{}})
	if err != nil {
		fmt.Fprintln(stderr, "live:", err)
		return 1
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		fmt.Fprintln(stderr, "live:", err)
		return 1
	}
	// One process: claims of suspended calls in memory.
	store, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
	if err != nil {
		fmt.Fprintln(stderr, "live:", err)
		return 1
	}
	d, err := dispatch.New(dispatch.Config{Registry: reg, Store: store, SealKeys: []dispatch.SealKey{{ID: "live", Secret: secret}}, MaxConcurrency: 4})
	if err != nil {
		fmt.Fprintln(stderr, "live:", err)
		return 1
	}
	if err := chosen.p.play(ctx, o, key, reg, d, stdout); err != nil {
		fmt.Fprintln(stderr, "live:", err)
		return 1
	}
	return 0
}

// report writes what became of each call of a turn.
// converse plays at most o.turns turns, after writing the user's prompt
// to out. next asks the model for its reply and returns the reply's calls,
// or, when it has none, its text, which is written to out and ends the
// conversation; the calls run on d and are reported on out, and answer
// adds their outcomes to the next request. A model that still calls tools
// after o.turns turns is an error.
func converse(ctx context.Context, o options, d *dispatch.Dispatcher, out io.Writer, next func() ([]dispatch.Call, string, error), answer func([]dispatch.Outcome) error) error {
	fmt.Fprintf(out, "user: %s\n", o.prompt)
	for turnNo := 1; turnNo <= o.turns; turnNo++ {
		calls, text, err := next()
		if err != nil {
			return err
		}
		if len(calls) == 0 {
			fmt.Fprintf(out, "model: %s\n", text)
			return nil
		}
		fmt.Fprintf(out, "turn %d: the model calls %d tool(s)\n", turnNo, len(calls))
		outcomes := d.RunAll(ctx, calls)
		report(out, calls, outcomes)
		if err := answer(outcomes); err != nil {
			return err
		}
	}
	return errors.New("the model did not answer within -turns turns")
}

func report(out io.Writer, calls []dispatch.Call, outcomes []dispatch.Outcome) {
	for i, o := range outcomes {
		fmt.Fprintf(out, "  call %s %s\n", o.Tool, calls[i].Request.Arguments)
		fmt.Fprintf(out, "    %s: %s\n", o.Kind, oneLine(o.Text()))
	}
}

func oneLine(s string) string {
	out := []rune{}
	for _, r := range s {
		if r == '\n' {
			r = ' '
		}
		out = append(out, r)
	}
	if len(out) > 160 {
		out = append(out[:157], '…')
	}
	return string(out)
}
