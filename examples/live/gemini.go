package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/agentcontract/tool"
	toolgemini "github.com/agentcontract/tool/adapters/gemini"
	"github.com/agentcontract/tool/dispatch"
	"google.golang.org/genai"
)

// geminiProvider plays the conversation with Gemini through its official SDK.
type geminiProvider struct{}

func (geminiProvider) play(ctx context.Context, o options, key string, reg *tool.Registry, d *dispatch.Dispatcher, out io.Writer) error {
	model := o.model
	if model == "" {
		model = "gemini-flash-latest"
	}
	client, err := genai.NewClient(ctx, &genai.ClientConfig{
		APIKey:      key,
		Backend:     genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: o.baseURL},
	})
	if err != nil {
		return err
	}
	tools, err := toolgemini.New(toolgemini.Config{Registry: reg})
	if err != nil {
		return err
	}
	config := &genai.GenerateContentConfig{Tools: tools.Tools()}
	fmt.Fprintf(out, "gemini %s, %d tools\n", model, len(config.Tools[0].FunctionDeclarations))
	notes(out, nil, tools.Relaxed())
	fmt.Fprintf(out, "user: %s\n", o.prompt)

	contents := genai.Text(o.prompt)
	for turnNo := 1; turnNo <= o.turns; turnNo++ {
		resp, err := client.Models.GenerateContent(ctx, model, contents, config)
		if err != nil {
			return err
		}
		turn, err := toolgemini.NewTurn(resp)
		if err != nil {
			return err
		}
		calls := turn.Calls()
		if len(calls) == 0 {
			fmt.Fprintf(out, "model: %s\n", resp.Text())
			return nil
		}
		fmt.Fprintf(out, "turn %d: the model calls %d tool(s)\n", turnNo, len(calls))
		outcomes := d.RunAll(ctx, calls)
		report(out, calls, outcomes)
		if contents, err = turn.Next(contents, outcomes); err != nil {
			return err
		}
	}
	return errors.New("the model did not answer within -turns turns")
}
