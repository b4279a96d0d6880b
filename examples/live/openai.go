package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/agentcontract/tool"
	toolopenai "github.com/agentcontract/tool/adapters/openai"
	"github.com/agentcontract/tool/dispatch"
)

// openaiProvider plays the conversation with OpenAI's Chat Completions API
// through its official SDK, in strict mode.
type openaiProvider struct{}

func (openaiProvider) play(ctx context.Context, o options, key string, reg *tool.Registry, d *dispatch.Dispatcher, out io.Writer) error {
	model := o.model
	if model == "" {
		model = openai.ChatModelGPT5_5
	}
	opts := []option.RequestOption{option.WithAPIKey(key)}
	if o.baseURL != "" {
		opts = append(opts, option.WithBaseURL(o.baseURL))
	}
	client := openai.NewClient(opts...)
	tools, err := toolopenai.New(toolopenai.Config{Registry: reg, Strict: true})
	if err != nil {
		return err
	}
	params := openai.ChatCompletionNewParams{
		Model:    model,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(o.prompt)},
		Tools:    tools.ChatTools(),
	}
	fmt.Fprintf(out, "openai %s, %d tools\n", model, len(params.Tools))
	notes(out, tools.Lints(), tools.Relaxed())
	var msg openai.ChatCompletionMessage
	return converse(ctx, o, d, out, func() ([]dispatch.Call, string, error) {
		completion, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			return nil, "", err
		}
		if len(completion.Choices) == 0 {
			return nil, "", errors.New("the model returned no choice")
		}
		msg = completion.Choices[0].Message
		calls, err := tools.ChatCalls(msg)
		return calls, msg.Content, err
	}, func(outcomes []dispatch.Outcome) error {
		answers, err := toolopenai.ChatResults(outcomes)
		if err != nil {
			return err
		}
		params.Messages = append(params.Messages, msg.ToParam())
		params.Messages = append(params.Messages, answers...)
		return nil
	})
}

// notes writes why a tool is not strict and what strict mode does not
// enforce, for any adapter whose lints render as text.
func notes[L fmt.Stringer](out io.Writer, lints, relaxed []L) {
	for _, l := range lints {
		fmt.Fprintf(out, "  not strict: %s\n", l)
	}
	for _, l := range relaxed {
		fmt.Fprintf(out, "  relaxed: %s\n", l)
	}
}
