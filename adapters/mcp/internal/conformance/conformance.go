// Package conformance is the MCP server that the official conformance suite
// drives in this repository's tests. Every tool it serves is made with the
// library alone — [tool.NewFunc], or a [tool.Signature] inside a small
// [tool.Tool] where the call needs its [tool.Continuation] — and served by
// [toolmcp.AddTools]; the package holds no MCP code of its own. The tools
// carry the names and behaviour the suite's scenarios ask for
// (testdata/conformance/baseline.yml lists the scenarios a tool bridge does
// not serve, each with its reason).
package conformance

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentcontract/tool"
	toolmcp "github.com/agentcontract/tool/adapters/mcp"
	"github.com/agentcontract/tool/dispatch"
)

// Handler returns the streamable HTTP handler of a fresh conformance
// server: stateful (the elicitation scenarios need requests from server to
// client), wrapped with [toolmcp.HTTPHandler], with every call's claims in
// memory and a seal key of its own. logger may be nil. Errors are those of
// [New] and [toolmcp.AddTools].
func Handler(logger *slog.Logger) (http.Handler, error) {
	reg, options, err := New()
	if err != nil {
		return nil, err
	}
	store, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
	if err != nil {
		return nil, err
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "toolmcp-conformance", Version: "v0.1.0"}, &mcp.ServerOptions{Logger: logger})
	secret := []byte(rand.Text() + rand.Text())
	err = toolmcp.AddTools(server, toolmcp.Config{
		Dispatch: dispatch.Config{Registry: reg, Store: store, SealKeys: []dispatch.SealKey{{ID: "k1", Secret: secret}}, Logger: logger},
		Tools:    options,
	})
	if err != nil {
		return nil, err
	}
	return toolmcp.HTTPHandler(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Logger: logger})), nil
}

// The media the content scenarios ask for: a PNG of one red pixel and a WAV
// of one silent sample.
var (
	redPixel, _   = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
	silentWAV, _  = base64.StdEncoding.DecodeString("UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQIAAAAAAA==")
	progressPause = 50 * time.Millisecond
)

// none is the input of a tool without arguments.
type none struct{}

// New builds the tools, binds each with [tool.Recover] and registers them.
// It returns the registry and the tools' MCP options (the response schemas
// of the elicitation tools). Errors are the library's, for a tool it
// refuses.
func New() (*tool.Registry, map[string]toolmcp.ToolOptions, error) {
	var tools []tool.Tool
	add := func(t tool.Tool, err error) error {
		if err != nil {
			return err
		}
		tools = append(tools, t)
		return nil
	}
	text := func(name, description, reply string) (tool.Tool, error) {
		return tool.NewFunc(tool.FuncConfig{Name: name, Description: description, Effect: tool.EffectSafe},
			func(context.Context, none) (string, error) { return reply, nil })
	}
	media := func(name, description string, blocks ...tool.Block) (tool.Tool, error) {
		return tool.NewFunc(tool.FuncConfig{Name: name, Description: description, Effect: tool.EffectSafe},
			func(context.Context, none) (tool.Output, error) { return tool.Output{Content: blocks}, nil })
	}
	errs := []error{
		add(text("test_simple_text", "Returns one text block.", "This is a simple text response for testing.")),
		add(media("test_image_content", "Returns an image.", tool.NewMediaBlock("image/png", redPixel))),
		add(media("test_audio_content", "Returns audio.", tool.NewMediaBlock("audio/wav", silentWAV))),
		add(media("test_embedded_resource", "Returns an embedded resource.", tool.NewMediaBlock("text/plain", []byte("This is an embedded resource content.")))),
		add(media("test_multiple_content_types", "Returns text, an image and a resource.",
			tool.NewTextBlock("Multiple content types test:"),
			tool.NewMediaBlock("image/png", redPixel),
			tool.NewMediaBlock("application/json", []byte(`{"test":"data","value":123}`)))),
		add(tool.NewFunc(tool.FuncConfig{Name: "test_error_handling", Description: "Always fails.", Effect: tool.EffectSafe}, failing)),
		add(tool.NewFunc(tool.FuncConfig{Name: "test_tool_with_progress", Description: "Reports progress 0, 50 and 100 of 100.", Effect: tool.EffectSafe}, withProgress)),
		add(newSchemaTool()),
	}
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	options := map[string]toolmcp.ToolOptions{}
	for _, f := range forms {
		t, err := newFormTool(f)
		if err != nil {
			return nil, nil, err
		}
		tools = append(tools, t)
		options[f.name] = toolmcp.ToolOptions{ResponseSchemas: []tool.Schema{t.schema}}
	}
	reg := &tool.Registry{}
	for _, t := range tools {
		b, err := tool.Bind(t, tool.Recover)
		if err != nil {
			return nil, nil, err
		}
		if err := reg.Register(b); err != nil {
			return nil, nil, err
		}
	}
	return reg, options, nil
}

// failing fails with the public text the error scenario expects.
func failing(context.Context, none) (string, error) {
	f, err := tool.NewFailure(tool.FailureConfig{
		Kind:   tool.FailureKindFailed,
		Output: tool.NewTextOutput("This tool intentionally returns an error for testing"),
		Cause:  fmt.Errorf("the conformance tool fails on every call"),
	})
	if err != nil {
		return "", err
	}
	return "", f
}

// withProgress reports 0, 50 and 100 of 100, 50 ms apart.
func withProgress(ctx context.Context, _ none) (string, error) {
	for i, done := range []float64{0, 50, 100} {
		if i > 0 {
			select {
			case <-time.After(progressPause):
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
		if err := tool.ReportProgress(ctx, tool.Progress{Completed: done, Total: 100}); err != nil {
			return "", err
		}
	}
	return "Progress reported: 0, 50 and 100 of 100.", nil
}

// schemaTool declares the JSON Schema 2020-12 input schema of the
// json-schema-2020-12 scenario, which a Go type cannot derive ($schema,
// $defs and a $ref), and decodes its arguments with a Signature.
type schemaTool struct {
	def tool.Definition
	sig tool.Signature[schemaInput, string]
}

type schemaInput struct {
	Name    string         `json:"name"`
	Address map[string]any `json:"address"`
}

const schema2020 = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "$defs": {
    "address": {"type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}
  },
  "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
  "additionalProperties": false
}`

func newSchemaTool() (tool.Tool, error) {
	sig, err := tool.NewSignature[schemaInput, string]()
	if err != nil {
		return nil, err
	}
	return schemaTool{sig: sig, def: tool.Definition{
		Name:        "json_schema_2020_12_tool",
		Description: "Tool with JSON Schema 2020-12 features",
		InputSchema: json.RawMessage(schema2020),
		Effect:      tool.EffectSafe,
	}}, nil
}

func (s schemaTool) Definition() tool.Definition { return s.def.Clone() }

func (s schemaTool) Call(_ context.Context, inv tool.Invocation) (tool.Result, error) {
	in, err := s.sig.Decode(inv)
	if err != nil {
		return tool.Result{}, err
	}
	out, err := s.sig.Encode(fmt.Sprintf("Hello %s.", in.Name))
	return tool.Result{Output: out}, err
}
