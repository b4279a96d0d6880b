package main

import (
	"context"
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
	contents := genai.Text(o.prompt)
	var turn toolgemini.Turn
	return converse(ctx, o, d, out, func() ([]dispatch.Call, string, error) {
		resp, err := client.Models.GenerateContent(ctx, model, contents, config)
		if err != nil {
			return nil, "", err
		}
		if turn, err = toolgemini.NewTurn(resp); err != nil {
			return nil, "", err
		}
		calls := turn.Calls()
		if len(calls) > 0 {
			return calls, "", nil
		}
		return nil, resp.Text(), nil
	}, func(outcomes []dispatch.Outcome) (err error) {
		contents, err = turn.Next(contents, outcomes)
		return err
	})
}
