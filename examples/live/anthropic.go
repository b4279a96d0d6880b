package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/agentcontract/tool"
	toolanthropic "github.com/agentcontract/tool/adapters/anthropic"
	"github.com/agentcontract/tool/dispatch"
)

// anthropicProvider plays the conversation with Claude through the Messages
// API of its official SDK, in strict mode.
type anthropicProvider struct{}

func (anthropicProvider) play(ctx context.Context, o options, key string, reg *tool.Registry, d *dispatch.Dispatcher, out io.Writer) error {
	model := anthropic.Model(o.model)
	if model == "" {
		model = anthropic.ModelClaudeSonnet5_5
	}
	opts := []option.RequestOption{option.WithAPIKey(key)}
	if o.baseURL != "" {
		opts = append(opts, option.WithBaseURL(o.baseURL))
	}
	client := anthropic.NewClient(opts...)
	tools, err := toolanthropic.New(toolanthropic.Config{Registry: reg, Strict: true})
	if err != nil {
		return err
	}
	params := anthropic.MessageNewParams{
		Model:     model,
		MaxTokens: 2048,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(o.prompt))},
		Tools:     tools.Tools(),
	}
	fmt.Fprintf(out, "anthropic %s, %d tools\n", model, len(params.Tools))
	notes(out, tools.Lints(), tools.Relaxed())
	var message *anthropic.Message
	return converse(ctx, o, d, out, func() ([]dispatch.Call, string, error) {
		message, err = client.Messages.New(ctx, params)
		if err != nil {
			return nil, "", err
		}
		calls, err := tools.Calls(*message)
		if err != nil || len(calls) > 0 {
			return calls, "", err
		}
		var text []string
		for _, b := range message.Content {
			if b.Type == "text" {
				text = append(text, b.Text)
			}
		}
		return nil, strings.Join(text, " "), nil
	}, func(outcomes []dispatch.Outcome) error {
		results, err := toolanthropic.Results(outcomes)
		if err != nil {
			return err
		}
		params.Messages = append(params.Messages, message.ToParam(), results)
		return nil
	})
}
