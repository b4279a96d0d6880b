// Command consumer is what a user outside the repository writes: it
// requires the core, every adapter and the SQL store at their release
// versions and uses each of them (the store without a driver, which a
// user brings). The release check builds it against modules packed into a
// local proxy, with no workspace, and runs it.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.temporal.io/sdk/workflow"

	"github.com/agentcontract/tool"
	toolanthropic "github.com/agentcontract/tool/adapters/anthropic"
	toolgemini "github.com/agentcontract/tool/adapters/gemini"
	toolmcp "github.com/agentcontract/tool/adapters/mcp"
	toolopenai "github.com/agentcontract/tool/adapters/openai"
	toolotel "github.com/agentcontract/tool/adapters/otel"
	tooltemporal "github.com/agentcontract/tool/adapters/temporal"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/stores/sqlstore"
)

type input struct {
	A int `json:"a"`
	B int `json:"b"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "consumer:", err)
		os.Exit(1)
	}
}

func run() error {
	add, err := tool.NewFunc(tool.FuncConfig{Name: "add", Description: "add two integers", Effect: tool.EffectSafe},
		func(_ context.Context, in input) (int, error) { return in.A + in.B, nil })
	if err != nil {
		return err
	}
	binding, err := tool.Bind(add, tool.Recover)
	if err != nil {
		return err
	}
	registry, err := tool.NewRegistry(binding)
	if err != nil {
		return err
	}
	keys := []dispatch.SealKey{{ID: "k1", Secret: []byte("0123456789abcdef0123456789abcdef")}}
	store, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
	if err != nil {
		return err
	}
	d, err := dispatch.New(dispatch.Config{Registry: registry, Store: store, SealKeys: keys})
	if err != nil {
		return err
	}
	o := d.Run(context.Background(), dispatch.Call{ID: "call_1", Request: tool.Request{Name: "add", Arguments: `{"a":2,"b":3}`}})
	fmt.Println("dispatch:", o.Kind, o.Text())

	openaiTools, err := toolopenai.New(toolopenai.Config{Registry: registry, Strict: true})
	if err != nil {
		return err
	}
	fmt.Println("openai:", len(openaiTools.ChatTools()), "chat tool(s), strict:", openaiTools.Strict("add"))

	anthropicTools, err := toolanthropic.New(toolanthropic.Config{Registry: registry, Strict: true})
	if err != nil {
		return err
	}
	fmt.Println("anthropic:", len(anthropicTools.Tools()), "tool param(s)")

	geminiTools, err := toolgemini.New(toolgemini.Config{Registry: registry})
	if err != nil {
		return err
	}
	fmt.Println("gemini:", len(geminiTools.Tools()[0].FunctionDeclarations), "function declaration(s)")

	telemetry, err := toolotel.New(toolotel.Config{Registry: registry})
	if err != nil {
		return err
	}
	traced, err := dispatch.New(dispatch.Config{Registry: registry, Store: store, SealKeys: keys, Observer: telemetry.Observer()})
	if err != nil {
		return err
	}
	o = traced.Run(context.Background(), dispatch.Call{ID: "call_2", Request: tool.Request{Name: "add", Arguments: `{"a":1,"b":1}`}})
	fmt.Println("otel: observed", o.Kind, "call, error.type", fmt.Sprintf("%q", toolotel.ErrorType(o)))

	server := mcp.NewServer(&mcp.Implementation{Name: "consumer", Version: "v0.0.1"}, nil)
	if err := toolmcp.AddTools(server, toolmcp.Config{
		Dispatch:     dispatch.Config{Registry: registry, Store: store, SealKeys: keys, Observer: telemetry.Observer()},
		TraceContext: toolmcp.TraceContext{Extract: telemetry.ExtractMeta},
	}); err != nil {
		return err
	}
	fmt.Println("mcp: tools added to a server")

	_, err = tooltemporal.New(tooltemporal.Config{
		Registry:        registry,
		SealKeys:        keys,
		ActivityOptions: workflow.ActivityOptions{StartToCloseTimeout: time.Minute},
	})
	if err != nil {
		return err
	}
	fmt.Println("temporal: runtime built")

	for _, dialect := range []sqlstore.Dialect{sqlstore.PostgreSQL, sqlstore.SQLite} {
		fmt.Println("sqlstore:", dialect, "schema version", len(sqlstore.Migrations(dialect)), "of", sqlstore.SchemaVersion)
	}
	return nil
}
