package benchmarks

// Baseline benchmarks for admitting JSON tool arguments into SearchInput.
//
// Every benchmark that depends on the payload has one sub-benchmark per
// payload, named after it (/small, /medium, /large); cmd/ratios relies on the
// last element of a benchmark name being the payload size and on
// BenchmarkFloor being the reference at each size.
//
// What each benchmark measures (per iteration):
//
//   - Floor: one strict typed parse: go-json-experiment/json Unmarshal with
//     RejectUnknownMembers(true) into a fresh SearchInput. No schema checks
//     (enum, minimum, maximum, required are not enforced).
//   - IsValid: jsontext.Value(data).IsValid(): syntax check only, no decode.
//   - Naive: the naive strict pipeline: IsValid + santhosh UnmarshalJSON to
//     `any` + schema Validate + strict typed decode (the input validator's) +
//     strict typed decode again (the call's).
//   - MCPSDK/dispatch: the official MCP Go SDK's server-side dispatch of a
//     tools/call request that has already been JSON-RPC-decoded, through the
//     typed AddTool handler wrapper; see BenchmarkMCPSDK for what is included.
//   - MCPSDK/inmemory: a full CallTool round trip between an SDK client and
//     server connected with in-memory transports.
//   - OneTimeCompile: invopop reflection of SearchInput + santhosh compile:
//     the one-time set-up cost of the Naive pipeline (no payload).

import (
	"bytes"
	"context"
	stdjson "encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	invopop "github.com/invopop/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	santhosh "github.com/santhosh-tekuri/jsonschema/v6"
)

// strict is the option set of every strict typed decode in this file.
var strict = json.RejectUnknownMembers(true)

// searchSchemaURL is the location under which the reflected schema is added
// to the santhosh compiler.
const searchSchemaURL = "mem://search-input.schema.json"

// reflectSchemaJSON derives a self-contained JSON Schema (draft 2020-12) for
// SearchInput with invopop/jsonschema: the root is the object itself
// (ExpandedStruct), nested structs are inlined (DoNotReference), no $id is
// emitted (Anonymous); invopop's defaults make every non-omitempty field
// required and set additionalProperties to false at every object level.
func reflectSchemaJSON() ([]byte, error) {
	r := invopop.Reflector{
		ExpandedStruct: true,
		DoNotReference: true,
		Anonymous:      true,
	}
	return stdjson.Marshal(r.Reflect(&SearchInput{}))
}

// compileSchema compiles a schema document with santhosh-tekuri/jsonschema,
// draft 2020-12, asserting formats.
func compileSchema(schemaJSON []byte) (*santhosh.Schema, error) {
	doc, err := santhosh.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, fmt.Errorf("parsing schema: %w", err)
	}
	c := santhosh.NewCompiler()
	c.DefaultDraft(santhosh.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(searchSchemaURL, doc); err != nil {
		return nil, fmt.Errorf("adding schema: %w", err)
	}
	return c.Compile(searchSchemaURL)
}

// reflectAndCompile is the one-time cost of the naive pipeline.
func reflectAndCompile() ([]byte, *santhosh.Schema, error) {
	schemaJSON, err := reflectSchemaJSON()
	if err != nil {
		return nil, nil, err
	}
	sch, err := compileSchema(schemaJSON)
	return schemaJSON, sch, err
}

func mustReflectAndCompile(tb testing.TB) ([]byte, *santhosh.Schema) {
	tb.Helper()
	schemaJSON, sch, err := reflectAndCompile()
	if err != nil {
		tb.Fatal(err)
	}
	return schemaJSON, sch
}

// naive is the naive strict admission pipeline measured by BenchmarkNaive.
func naive(sch *santhosh.Schema, data []byte) (SearchInput, error) {
	var v SearchInput
	if !jsontext.Value(data).IsValid() {
		return v, fmt.Errorf("invalid JSON")
	}
	doc, err := santhosh.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return v, err
	}
	if err := sch.Validate(doc); err != nil {
		return v, err
	}
	// The input validator's strict decode (e.g. to run Go-side checks).
	var probe SearchInput
	if err := json.Unmarshal(data, &probe, strict); err != nil {
		return v, err
	}
	// The call's own strict decode.
	err = json.Unmarshal(data, &v, strict)
	return v, err
}

// forEachPayload runs f as one sub-benchmark per payload.
func forEachPayload(b *testing.B, f func(b *testing.B, data []byte)) {
	for _, p := range Payloads {
		b.Run(p.Name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(p.Data)))
			f(b, p.Data)
		})
	}
}

func BenchmarkFloor(b *testing.B) {
	forEachPayload(b, func(b *testing.B, data []byte) {
		for b.Loop() {
			var v SearchInput // a fresh value per call, as a handler gets
			if err := json.Unmarshal(data, &v, strict); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkFloorParallel is BenchmarkFloor's medium iteration on every
// goroutine of b.RunParallel: the control for BenchmarkToolParallel. Its
// scaling from -cpu 1 to -cpu 2 is what this machine gives a bare strict
// decode, the most the library's own scaling can be compared with.
func BenchmarkFloorParallel(b *testing.B) {
	b.SetBytes(int64(len(MediumJSON)))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			var v SearchInput
			if err := json.Unmarshal(MediumJSON, &v, strict); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkIsValid(b *testing.B) {
	forEachPayload(b, func(b *testing.B, data []byte) {
		for b.Loop() {
			if !jsontext.Value(data).IsValid() {
				b.Fatal("invalid JSON")
			}
		}
	})
}

func BenchmarkNaive(b *testing.B) {
	_, sch := mustReflectAndCompile(b)
	forEachPayload(b, func(b *testing.B, data []byte) {
		for b.Loop() {
			if _, err := naive(sch, data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkOneTimeCompile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := reflectAndCompile(); err != nil {
			b.Fatal(err)
		}
	}
}

// ---- MCP Go SDK --------------------------------------------------------

const mcpToolName = "search"

// searchHandler is the typed tool handler registered with mcp.AddTool. It does
// no work beyond building the tiny SearchOutput from the input.
func searchHandler(_ context.Context, _ *mcp.CallToolRequest, in SearchInput) (*mcp.CallToolResult, SearchOutput, error) {
	return nil, SearchOutput{Hits: len(in.Tags) + len(in.Nested)}, nil
}

// mcpHarness is an SDK server with the search tool, connected to an SDK
// client through in-memory transports.
type mcpHarness struct {
	ss *mcp.ServerSession
	cs *mcp.ClientSession
	// dispatch is the server's receiving method handler chain below the
	// outermost (capturing) middleware: the SDK's multi-round-trip middleware
	// and the default method dispatcher, which routes tools/call to
	// Server.callTool and so to the typed handler wrapper built by AddTool.
	dispatch mcp.MethodHandler
}

func newMCPHarness(tb testing.TB) *mcpHarness {
	tb.Helper()
	schemaJSON, _ := mustReflectAndCompile(tb)
	ctx := context.Background()
	server := mcp.NewServer(&mcp.Implementation{Name: "bench-server", Version: "v0.0.0"}, nil)
	// The SDK's own schema inference (google/jsonschema-go) reads the
	// `jsonschema` tag as a description and rejects "WORD=..." tags, so the
	// tool is given the same invopop-derived schema as the Naive pipeline:
	// same enum, minimum, maximum, required and additionalProperties:false.
	mcp.AddTool(server, &mcp.Tool{
		Name:        mcpToolName,
		Description: "Search documents.",
		InputSchema: stdjson.RawMessage(schemaJSON),
	}, searchHandler)

	h := &mcpHarness{}
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		h.dispatch = next
		return next // adds no wrapper, so the in-memory path is unaffected
	})

	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		tb.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "bench-client", Version: "v0.0.0"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	h.ss, h.cs = ss, cs
	return h
}

// callDispatch hands an already-decoded tools/call request to the server's
// method dispatch, as ServerSession does after JSON-RPC decoding.
func (h *mcpHarness) callDispatch(ctx context.Context, data []byte) (*mcp.CallToolResult, error) {
	req := &mcp.CallToolRequest{
		Session: h.ss,
		Params:  &mcp.CallToolParamsRaw{Name: mcpToolName, Arguments: data},
	}
	res, err := h.dispatch(ctx, "tools/call", req)
	if err != nil {
		return nil, err
	}
	return res.(*mcp.CallToolResult), nil
}

// callInMemory performs a full client CallTool round trip.
func (h *mcpHarness) callInMemory(ctx context.Context, data []byte) (*mcp.CallToolResult, error) {
	return h.cs.CallTool(ctx, &mcp.CallToolParams{
		Name:      mcpToolName,
		Arguments: stdjson.RawMessage(data),
	})
}

func toolError(res *mcp.CallToolResult, err error) error {
	if err != nil {
		return err
	}
	if res.IsError {
		var msg strings.Builder
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				msg.WriteString(t.Text)
			}
		}
		return fmt.Errorf("tool error: %s", msg.String())
	}
	return nil
}

// BenchmarkMCPSDK measures the official MCP Go SDK's typed tool path
// (mcp.AddTool with a ToolHandlerFor[SearchInput, SearchOutput]).
//
// /dispatch/<size> calls the server's receiving method handler, captured with
// Server.AddReceivingMiddleware, with a *mcp.CallToolRequest whose
// Params.Arguments is the payload: no transport, no JSON-RPC framing, no
// decoding of the request envelope and no encoding of the response. Included:
// the SDK's multi-round-trip middleware, method dispatch, the tool lookup in
// Server.callTool, and the AddTool wrapper, which (1) unmarshals the arguments
// into map[string]any (segmentio/encoding, after a nesting-depth scan),
// (2) applies schema defaults, (3) validates the map against the resolved
// input schema (google/jsonschema-go), (4) re-marshals the map with
// encoding/json (done whenever the arguments are an object), (5) unmarshals
// that into SearchInput (segmentio/encoding), then calls the handler, and
// (6) marshals SearchOutput with encoding/json, (7) unmarshals, applies
// defaults to and validates it against the output schema and re-marshals it,
// (8) stores it in StructuredContent and a TextContent copy.
//
// /inmemory/<size> is everything above plus a full client-side CallTool over
// mcp.NewInMemoryTransports(): client request encoding, JSON-RPC framing
// both ways through an in-memory pipe, the server's request decoding
// (including the arguments as json.RawMessage), response encoding, client
// response decoding, and the goroutine hand-offs of the jsonrpc2 connection.
func BenchmarkMCPSDK(b *testing.B) {
	h := newMCPHarness(b)
	ctx := context.Background()
	b.Run("dispatch", func(b *testing.B) {
		forEachPayload(b, func(b *testing.B, data []byte) {
			if err := toolError(h.callDispatch(ctx, data)); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := h.callDispatch(ctx, data); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	b.Run("inmemory", func(b *testing.B) {
		forEachPayload(b, func(b *testing.B, data []byte) {
			if err := toolError(h.callInMemory(ctx, data)); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := h.callInMemory(ctx, data); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

// ---- checks that the benchmarks measure the success path ----------------

func TestPayloadSizes(t *testing.T) {
	want := map[string][2]int{
		"small":  {100, 200},
		"medium": {350, 450},
		"large":  {18_000, 22_000},
	}
	for _, p := range Payloads {
		r := want[p.Name]
		if n := len(p.Data); n < r[0] || n > r[1] {
			t.Errorf("%s payload is %d bytes, want %d..%d", p.Name, n, r[0], r[1])
		}
	}
}

func TestPayloadsAdmitted(t *testing.T) {
	_, sch := mustReflectAndCompile(t)
	h := newMCPHarness(t)
	mg := newMCPGoServer(t)
	ctx := context.Background()
	for _, p := range Payloads {
		t.Run(p.Name, func(t *testing.T) {
			var floor SearchInput
			if err := json.Unmarshal(p.Data, &floor, strict); err != nil {
				t.Fatalf("strict decode: %v", err)
			}
			if got := mustMarshal(floor); !bytes.Equal(got, p.Data) {
				t.Errorf("round trip differs:\n got %s\nwant %s", got, p.Data)
			}
			v, err := naive(sch, p.Data)
			if err != nil {
				t.Fatalf("naive: %v", err)
			}
			if !bytes.Equal(mustMarshal(v), p.Data) {
				t.Errorf("naive result differs from payload")
			}
			wantHits := len(floor.Tags) + len(floor.Nested)
			mgRes, err := callMCPGo(ctx, mg, mcpGoMessage(p.Data))
			if err != nil {
				t.Fatalf("mcp-go: %v", err)
			}
			var mgOut SearchOutput
			if err := stdjson.Unmarshal(mustMarshal(mgRes.StructuredContent), &mgOut); err != nil {
				t.Fatalf("mcp-go: structured content: %v", err)
			}
			if mgOut.Hits != wantHits {
				t.Errorf("mcp-go: hits = %d, want %d", mgOut.Hits, wantHits)
			}
			for name, call := range map[string]func(context.Context, []byte) (*mcp.CallToolResult, error){
				"dispatch": h.callDispatch,
				"inmemory": h.callInMemory,
			} {
				res, err := call(ctx, p.Data)
				if err := toolError(res, err); err != nil {
					t.Fatalf("MCP %s: %v", name, err)
				}
				var out SearchOutput
				if err := stdjson.Unmarshal(mustMarshal(res.StructuredContent), &out); err != nil {
					t.Fatalf("MCP %s: structured content: %v", name, err)
				}
				if out.Hits != wantHits {
					t.Errorf("MCP %s: hits = %d, want %d", name, out.Hits, wantHits)
				}
			}
		})
	}
}

// TestStrictness checks that the schema-validating baselines reject what the
// schema forbids, so that they do comparable work to a strict library.
func TestStrictness(t *testing.T) {
	_, sch := mustReflectAndCompile(t)
	h := newMCPHarness(t)
	mg := newMCPGoServer(t)
	ctx := context.Background()
	bad := map[string]string{
		"unknown member":        `"extra":1,"query"`,
		"enum violation":        `"mode":"fast"->"mode":"slow"`,
		"maximum violation":     `"limit":1->"limit":101`,
		"nested unknown member": `"weight":0->"weight":0,"extra":true`,
	}
	for name, edit := range bad {
		t.Run(name, func(t *testing.T) {
			var data string
			if from, to, ok := strings.Cut(edit, "->"); ok {
				data = strings.Replace(string(SmallJSON), from, to, 1)
			} else {
				data = strings.Replace(string(SmallJSON), `"query"`, edit, 1)
			}
			if data == string(SmallJSON) {
				t.Fatalf("edit %q did not apply", edit)
			}
			if _, err := naive(sch, []byte(data)); err == nil {
				t.Errorf("naive admitted %s", data)
			}
			if err := toolError(h.callDispatch(ctx, []byte(data))); err == nil {
				t.Errorf("MCP dispatch admitted %s", data)
			}
			if err := toolError(h.callInMemory(ctx, []byte(data))); err == nil {
				t.Errorf("MCP inmemory admitted %s", data)
			}
			if _, err := callMCPGo(ctx, mg, mcpGoMessage([]byte(data))); err == nil {
				t.Errorf("mcp-go admitted %s", data)
			}
		})
	}
}
