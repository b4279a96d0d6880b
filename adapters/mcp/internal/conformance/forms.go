package conformance

import (
	"context"
	"encoding/json"

	"github.com/agentcontract/tool"
)

// form is a tool that asks a person one question through an elicitation
// form and completes with the answer.
type form struct {
	name, description string
	// input is the tool's input schema; prompt makes the question of the
	// call from its arguments.
	input  string
	prompt func(args json.RawMessage) (string, error)
	// schema is the response schema, an elicitation form; reply
	// prefixes the answer in the result.
	schema, reply string
}

var forms = []form{
	{
		name:        "test_elicitation",
		description: "Asks the user for a username and an email address.",
		input:       `{"type":"object","properties":{"message":{"type":"string","description":"The message to show the user"}},"required":["message"],"additionalProperties":false}`,
		prompt: func(args json.RawMessage) (string, error) {
			var in struct {
				Message string `json:"message"`
			}
			return in.Message, json.Unmarshal(args, &in)
		},
		schema: `{"type":"object","properties":{"username":{"type":"string","description":"User's response"},"email":{"type":"string","description":"User's email address"}},"required":["username","email"]}`,
		reply:  "User response: action=accept, content=",
	},
	{
		name:        "test_elicitation_sep1034_defaults",
		description: "Asks a question whose every field has a default.",
		input:       `{"type":"object","additionalProperties":false}`,
		prompt: func(json.RawMessage) (string, error) {
			return "Please review and update the form fields with defaults", nil
		},
		schema: `{"type":"object","properties":{
			"name":{"type":"string","description":"User name","default":"John Doe"},
			"age":{"type":"integer","description":"User age","default":30},
			"score":{"type":"number","description":"User score","default":95.5},
			"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},
			"verified":{"type":"boolean","description":"Verification status","default":true}}}`,
		reply: "Elicitation completed: action=accept, content=",
	},
	{
		name:        "test_elicitation_sep1330_enums",
		description: "Asks a question with every kind of enum.",
		input:       `{"type":"object","additionalProperties":false}`,
		prompt:      func(json.RawMessage) (string, error) { return "Please select options from the enum fields", nil },
		schema: `{"type":"object","properties":{
			"untitledSingle":{"type":"string","description":"Select one option","enum":["option1","option2","option3"]},
			"titledSingle":{"type":"string","description":"Select one option with titles","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},
			"legacyEnum":{"type":"string","description":"Select one option (legacy)","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},
			"untitledMulti":{"type":"array","description":"Select multiple options","minItems":1,"maxItems":3,"items":{"type":"string","enum":["option1","option2","option3"]}},
			"titledMulti":{"type":"array","description":"Select multiple options with titles","minItems":1,"maxItems":3,"items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}}}`,
		reply: "Elicitation completed: action=accept, content=",
	},
}

// formTool is the tool of a form: a new call asks the question; the call
// continued with the answer completes with it.
type formTool struct {
	form
	def    tool.Definition
	schema tool.Schema
}

func newFormTool(f form) (formTool, error) {
	schema, err := tool.ParseSchema([]byte(f.schema))
	if err != nil {
		return formTool{}, err
	}
	return formTool{form: f, schema: schema, def: tool.Definition{
		Name:        f.name,
		Description: f.description,
		InputSchema: json.RawMessage(f.input),
		Effect:      tool.EffectSafe,
	}}, nil
}

func (t formTool) Definition() tool.Definition { return t.def.Clone() }

func (t formTool) Call(_ context.Context, inv tool.Invocation) (tool.Result, error) {
	if c, resumed := inv.Continuation(); resumed {
		return tool.Result{Output: tool.NewTextOutput(t.reply + string(c.Response()))}, nil
	}
	message, err := t.prompt(inv.Arguments())
	if err != nil {
		return tool.Result{}, err
	}
	prompt, err := json.Marshal(message)
	if err != nil {
		return tool.Result{}, err
	}
	ir, err := tool.NewInputRequest(tool.InputRequestConfig{Prompt: prompt, ResponseSchema: t.schema})
	if err != nil {
		return tool.Result{}, err
	}
	return tool.Result{InputRequest: &ir}, nil
}
