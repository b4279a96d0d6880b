// Command desk runs a scripted agent whose refund waits for a person, and
// serves the approval desk on 127.0.0.1 where the person answers it:
//
//	go run ./examples/desk
//
// prints the desk's URL; approving (or declining, or correcting the
// amount) in the browser completes the agent's turn, and the program
// prints the transcript and exits. With -auto it answers by itself, over
// HTTP, as a person approving would (for tests).
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/desk"
	"github.com/agentcontract/tool/dispatch"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "desk:", err)
		os.Exit(1)
	}
}

// refundArgs are the refund tool's arguments, as the model writes them.
type refundArgs struct {
	Order string `json:"order" jsonschema:"minLength=1,description=The order number"`
	Cents int    `json:"cents" jsonschema:"minimum=1,description=The amount to refund in cents"`
}

// refundAnswer is what the person answers.
type refundAnswer struct {
	Approve bool `json:"approve" jsonschema:"description=Send the money back?"`
	Cents   int  `json:"cents,omitempty" jsonschema:"minimum=1,maximum=100000,description=Cents to refund if not the amount asked; at most 100000"`
}

// person is who answers at this desk: the one local operator.
const person = "operator"

// app is the agent's runtime: the refund tool, the store, the dispatcher
// and the desk.
type app struct {
	d     *dispatch.Dispatcher
	store *dispatch.MemoryStore
	desk  http.Handler
	// asked counts the refund tool's questions, paid the refunds it made.
	asked, paid atomic.Int32
}

func newApp() (*app, error) { return newAppOn(nil) }

// newAppOn is newApp on store, or on a store of its own when store is
// nil. Each app draws its own seal key: an app on another's store is a
// runtime whose key was rotated, which cannot open the other's calls.
func newAppOn(store *dispatch.MemoryStore) (*app, error) {
	a := &app{store: store}
	refund, err := tool.NewAskFunc(tool.FuncConfig{Name: "refund", Description: "refund an order to the customer's card"},
		func(_ context.Context, in refundArgs) (tool.Question, error) {
			a.asked.Add(1)
			return tool.Question{Prompt: fmt.Sprintf("Refund %s on order %s?", money(in.Cents), in.Order)}, nil
		},
		func(_ context.Context, in refundArgs, answer refundAnswer) (string, error) {
			if !answer.Approve {
				return fmt.Sprintf("Order %s was not refunded.", in.Order), nil
			}
			cents := in.Cents
			if answer.Cents > 0 {
				cents = answer.Cents
			}
			a.paid.Add(1)
			return fmt.Sprintf("Refunded %s on order %s.", money(cents), in.Order), nil
		})
	if err != nil {
		return nil, err
	}
	b, err := tool.Bind(refund)
	if err != nil {
		return nil, err
	}
	reg := &tool.Registry{}
	if err := reg.Register(b); err != nil {
		return nil, err
	}
	if a.store == nil {
		if a.store, err = dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{}); err != nil {
			return nil, err
		}
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	// The store keeps grants too: the desk offers to approve a refund's
	// like in advance.
	if a.d, err = dispatch.New(dispatch.Config{Registry: reg, Store: a.store, Grants: a.store, SealKeys: []dispatch.SealKey{{ID: fmt.Sprintf("example-%x", secret[:4]), Secret: secret}}}); err != nil {
		return nil, err
	}
	a.desk, err = desk.New(desk.Config{
		Dispatcher: a.d,
		Store:      a.store,
		Title:      "Refund desk",
		// The desk listens on the loopback interface only: whoever can
		// reach it is the local operator. A real desk authenticates.
		Person: func(*http.Request) (string, error) { return person, nil },
		Authorize: func(_ context.Context, who string, p dispatch.Pending) (bool, error) {
			return who == person && p.Tool == "refund", nil
		},
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

func money(cents int) string { return fmt.Sprintf("$%d.%02d", cents/100, cents%100) }

// suspend runs the model's call in a new turn and saves the turn.
func (a *app) suspend(ctx context.Context, turn string, call dispatch.Call) (dispatch.Outcome, error) {
	o := a.d.Run(ctx, call)
	if err := a.d.SaveTurn(ctx, turn, []dispatch.Outcome{o}); err != nil {
		return o, err
	}
	return o, nil
}

// wait returns the outcomes of turn once none waits for a person.
func (a *app) wait(ctx context.Context, turn string) ([]dispatch.Outcome, error) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		outcomes, err := a.d.Turn(ctx, turn)
		if err != nil {
			return nil, err
		}
		done := true
		for _, o := range outcomes {
			done = done && o.Kind != dispatch.KindSuspended
		}
		if done {
			return outcomes, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}

// The script: what the user says, and the call the model makes.
const (
	userSays  = "Order A-7 arrived broken. Please refund the $12.50."
	modelCall = `{"order":"A-7","cents":1250}`
)

func run(ctx context.Context, args []string, out io.Writer) error {
	flags := flag.NewFlagSet("desk", flag.ContinueOnError)
	addr := flags.String("addr", "127.0.0.1:0", "the address to serve the desk on (keep it on loopback)")
	auto := flags.Bool("auto", false, "answer by itself, approving, instead of waiting for a person")
	if err := flags.Parse(args); err != nil {
		return err
	}
	a, err := newApp()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: a.desk, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	deskURL := "http://" + ln.Addr().String() + "/"

	fmt.Fprintf(out, "user: %s\n", userSays)
	fmt.Fprintf(out, "assistant calls refund %s\n", modelCall)
	// The call is the operator's: sealed for them, so that only they may
	// answer it, and a standing approval of theirs may.
	o, err := a.suspend(ctx, "turn-1", dispatch.Call{ID: "call_1", Principal: person, Request: tool.Request{Name: "refund", Arguments: modelCall}})
	if err != nil {
		return err
	}
	if o.Kind != dispatch.KindSuspended {
		return fmt.Errorf("the refund did not ask: %s", o.Text())
	}
	fmt.Fprintf(out, "refund waits for a person: open %s\n", deskURL)
	if *auto {
		if err := approve(ctx, deskURL); err != nil {
			return err
		}
		fmt.Fprintln(out, "(approved automatically)")
	}
	outcomes, err := a.wait(ctx, "turn-1")
	if err != nil {
		return err
	}
	for _, o := range outcomes {
		fmt.Fprintf(out, "tool refund (%s): %s\n", o.Kind, o.Text())
	}
	fmt.Fprintf(out, "assistant: %s\n", reply(outcomes[0]))
	return nil
}

// reply is the scripted model's answer to the user, given the outcome.
func reply(o dispatch.Outcome) string {
	switch {
	case o.Kind == dispatch.KindCompleted && strings.HasPrefix(o.Text(), "Refunded"):
		return "Done. " + o.Text() + " It reaches your card in a few days."
	case o.Kind == dispatch.KindCompleted:
		return "I could not refund it this time: " + o.Text()
	default:
		return "The refund was not made (" + o.Text() + "). A colleague will contact you."
	}
}

var (
	callLink = regexp.MustCompile(`href="(call\?[^"]+)"`)
	hidden   = regexp.MustCompile(`name="(csrf|turn|i|cp)" value="([^"]*)"`)
)

// approve answers the first pending call at the desk with an approval, as
// a person's browser would: it opens the list and the call, and posts the
// form.
func approve(ctx context.Context, deskURL string) error {
	get := func(u string) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return "", err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	list, err := get(deskURL)
	if err != nil {
		return err
	}
	m := callLink.FindStringSubmatch(list)
	if m == nil {
		return errors.New("the desk lists no call")
	}
	page, err := get(deskURL + html.UnescapeString(m[1]))
	if err != nil {
		return err
	}
	form := url.Values{"action": {"answer"}, "m.approve": {"true"}}
	for _, h := range hidden.FindAllStringSubmatch(page, 4) {
		form.Set(h[1], html.UnescapeString(h[2]))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, deskURL+"call", strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the desk answered %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return nil
}
