package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcontract/tool"
	"github.com/stretchr/testify/require"
)

// runScript runs the program with args and returns its stdout.
func runScript(t *testing.T, args ...string) string {
	t.Helper()
	var stdout bytes.Buffer
	require.NoError(t, run(context.Background(), args, &stdout))
	return stdout.String()
}

// lines returns the transcript's lines with their indentation removed.
func lines(transcript string) []string {
	var out []string
	for _, l := range strings.Split(transcript, "\n") {
		out = append(out, strings.TrimSpace(l))
	}
	return out
}

// requireSequence asserts that want appears in the transcript as
// consecutive lines, so that a message is shown where it belongs and not
// just somewhere.
func requireSequence(t *testing.T, transcript string, want ...string) {
	t.Helper()
	got := lines(transcript)
	for i := 0; i+len(want) <= len(got); i++ {
		match := true
		for j, w := range want {
			if !strings.HasPrefix(got[i+j], w) {
				match = false
				break
			}
		}
		if match {
			return
		}
	}
	require.Failf(t, "lines not found in order", "want consecutive lines starting with:\n%s\n\ntranscript:\n%s", strings.Join(want, "\n"), transcript)
}

func TestRunText(t *testing.T) {
	out := runScript(t)

	cases := []struct {
		name string
		want []string
	}{
		{"a valid call and its text result", []string{
			`turn 1: model proposes get_weather {"city": "Lisbon"}`,
			"ran get_weather with idempotency key call-",
			"model sees: Lisbon: 21°C, clear sky, wind 12 km/h.",
		}},
		{"malformed JSON is rejected and the message sent back", []string{
			"rejected: InputRejection",
			`model sees: arguments of "search_orders" are not valid JSON at the root (byte 43): unexpected end of input`,
		}},
		{"a schema violation is rejected and the message sent back", []string{
			`turn 3: model proposes search_orders {"customer": "ana@example.com", "limit": 50}`,
			"rejected: InputRejection",
			`model sees: arguments of "search_orders" do not match its input schema at /limit: maximum: got 50, want 20`,
		}},
		{"the corrected call is admitted and returns structured details", []string{
			`turn 4: model proposes search_orders {"customer": "ana@example.com", "limit": 20}`,
			"ran search_orders with idempotency key call-",
			`model sees: {"customer":"ana@example.com","orders":[{"id":"A-1001","status":"open","total_eur":42.5,"item":"kettle"},`,
		}},
		{"an unknown tool is named back to the model", []string{
			`unknown tool "cancel_subscription": nothing ran`,
			`model sees: There is no tool named "cancel_subscription". Available tools: export_report, flaky_lookup, get_weather, refund_order, search_orders.`,
		}},
		{"the guard refuses a refund over the limit", []string{
			"policy refuses: 950.00 EUR is over the 500.00 EUR limit",
			`ran refund_order with idempotency key call-c1abef74aad8: Failure of kind "rejected"`,
			`model sees: the call to "refund_order" is not permitted`,
		}},
		{"a refund under the limit is suspended, checkpointed and resumed", []string{
			"policy permits: 42.50 EUR is within the 500.00 EUR limit",
			`ran refund_order with idempotency key call-d9347eb7dc37: suspended, asks for input: {"question":"Approve a refund of 42.50 EUR on order A-1001?","reason":"kettle arrived dented"}`,
			"checkpoint written: turn-07-refund_order.json (",
			"restart: registry and dispatcher dropped, rebuilt from scratch",
			"checkpoint loaded: turn-07-refund_order.json, seal verified, call to refund_order with key call-",
			"approver answers true (-approve=yes)",
			"policy permits: 42.50 EUR is within the 500.00 EUR limit",
			"ran refund_order with idempotency key call-",
			"model sees: Refunded 42.50 EUR on order A-1001, reference RF-",
			"checkpoint turn-07-refund_order.json sent again with answer false: refused (already answered, outcome completed), nothing ran",
		}},
		{"a long export reports progress and returns a media block", []string{
			"progress [#####...............]  25% querying orders",
			"progress [##########..........]  50% aggregating totals",
			"progress [###############.....]  75% rendering CSV",
			"progress [####################] 100% done",
			"ran export_report with idempotency key call-",
			"model sees: Sales report for 2025-05: 3 orders, 1012.40 EUR gross, 19.90 EUR refunded. The CSV is attached.",
			"[attachment text/csv, 88 bytes]",
		}},
		{"a safe tool's error becomes a Failure with a private cause", []string{
			`ran flaky_lookup with idempotency key call-5e17d16a53ea: Failure of kind "failed"`,
			"log only, never sent to the model: warehouse API: dial tcp 10.0.3.7:443: connection refused",
			`model sees: the tool "flaky_lookup" failed`,
		}},
		{"the refund reached the ledger once", []string{
			"ledger: 1 refund recorded: RF-",
			"script complete: 9 turns",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			requireSequence(t, out, c.want...)
		})
	}

	t.Run("the private cause never reaches the model", func(t *testing.T) {
		for _, l := range lines(out) {
			if strings.HasPrefix(l, "model sees:") {
				require.NotContains(t, l, "10.0.3.7")
			}
		}
	})
	t.Run("no temporary path is printed", func(t *testing.T) {
		require.NotContains(t, out, os.TempDir())
		require.NotContains(t, out, "agentloop-")
	})
	t.Run("the transcript is deterministic", func(t *testing.T) {
		require.Equal(t, out, runScript(t))
	})
}

func TestRunDeclined(t *testing.T) {
	out := runScript(t, "-approve=no")
	requireSequence(t, out,
		"approver answers false (-approve=no)",
		"policy permits: 42.50 EUR is within the 500.00 EUR limit",
		`ran refund_order with idempotency key call-d9347eb7dc37: Failure of kind "rejected"`,
		"model sees: The approver declined the refund of 42.50 EUR on order A-1001. Nothing was refunded.",
	)
	requireSequence(t, out, "ledger: no refunds recorded", "script complete: 9 turns")
}

// TestRunJSON checks that -json prints the same events as JSON lines, one
// object a line, with the messages intact.
func TestRunJSON(t *testing.T) {
	out := runScript(t, "-json")

	var events []event
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var e event
		decoder := json.NewDecoder(strings.NewReader(l))
		decoder.DisallowUnknownFields()
		require.NoError(t, decoder.Decode(&e), "line %q", l)
		events = append(events, e)
	}
	require.Equal(t, evTools, events[0].Kind)
	require.Equal(t, []string{"export_report", "flaky_lookup", "get_weather", "refund_order", "search_orders"}, events[0].Tools)
	require.Equal(t, evDone, events[len(events)-1].Kind)

	byTurn := map[int][]event{}
	for _, e := range events {
		byTurn[e.Turn] = append(byTurn[e.Turn], e)
	}
	kinds := func(turn int) []string {
		var k []string
		for _, e := range byTurn[turn] {
			k = append(k, e.Kind)
		}
		return k
	}

	schemaMessage := `arguments of "search_orders" do not match its input schema at /limit: maximum: got 50, want 20`
	require.Equal(t, []string{evProposed, evRejected, evToModel}, kinds(3))
	require.Equal(t, schemaMessage, byTurn[3][1].Text)
	require.Equal(t, schemaMessage, byTurn[3][2].Text)

	require.Equal(t, []string{evProposed, evUnknownTool, evToModel}, kinds(5))
	require.Equal(t, "cancel_subscription", byTurn[5][1].Tool)

	require.Equal(t, []string{evProposed, evPolicy, evFailure, evToModel}, kinds(6))
	require.Equal(t, tool.FailureKindRejected, byTurn[6][2].FailureKind)

	require.Equal(t, []string{
		evProposed, evPolicy, evSuspended, evCheckpoint, evRestart,
		evCheckpointRead, evAnswered, evPolicy, evCompleted, evToModel, evReplayRefused,
	}, kinds(7))
	turn7 := byTurn[7]
	require.Equal(t, "turn-07-refund_order.json", turn7[3].File)
	require.Positive(t, turn7[3].Bytes)
	require.NotEmpty(t, turn7[2].IdempotencyKey)
	require.Equal(t, turn7[2].IdempotencyKey, turn7[5].IdempotencyKey, "the checkpoint keeps the key the call ran with")
	require.Equal(t, turn7[2].IdempotencyKey, turn7[8].IdempotencyKey, "the call resumes with the key it was admitted with")
	require.JSONEq(t, "true", string(turn7[6].Answer))
	require.True(t, strings.HasPrefix(turn7[9].Text, "Refunded 42.50 EUR on order A-1001, reference RF-"), turn7[9].Text)

	var progress []tool.Progress
	for _, e := range byTurn[8] {
		if e.Kind == evProgress {
			progress = append(progress, *e.Progress)
		}
	}
	require.Equal(t, []tool.Progress{
		{Completed: 1, Total: 4, Message: "querying orders"},
		{Completed: 2, Total: 4, Message: "aggregating totals"},
		{Completed: 3, Total: 4, Message: "rendering CSV"},
		{Completed: 4, Total: 4, Message: "done"},
	}, progress)

	require.Equal(t, []string{evProposed, evFailure, evPrivate, evToModel}, kinds(9))
	require.Equal(t, tool.FailureKindFailed, byTurn[9][1].FailureKind)
	require.Equal(t, `the tool "flaky_lookup" failed`, byTurn[9][3].Text)
}

// TestRunJSONDeclined checks the approver's "no" in the JSON form.
func TestRunJSONDeclined(t *testing.T) {
	out := runScript(t, "-json", "-approve=no")
	require.Contains(t, out, `{"turn":7,"event":"answered","tool":"refund_order","text":"-approve=no","answer":false}`)
	require.Contains(t, out, `{"turn":7,"event":"to_model","text":"The approver declined the refund of 42.50 EUR on order A-1001. Nothing was refunded."}`)
	require.Contains(t, out, `{"event":"ledger","text":"no refunds recorded"}`)
}

// TestRunRemovesCheckpoints checks that the checkpoint directory does not
// outlive the program.
func TestRunRemovesCheckpoints(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	runScript(t)
	entries, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Empty(t, entries)
}

func TestRunArguments(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"an answer that is neither yes nor no", []string{"-approve=maybe"}, `-approve must be yes or no, not "maybe"`},
		{"an unknown flag", []string{"-verbose"}, "flag provided but not defined: -verbose"},
		{"a stray argument", []string{"extra"}, `unexpected arguments: ["extra"]`},
		{"a missing script file", []string{"-script", filepath.Join(t.TempDir(), "absent.json")}, "no such file"},
		{"a trace in JSON mode", []string{"-trace", "-json"}, "-trace prints a text tree: use it without -json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout bytes.Buffer
			err := run(context.Background(), c.args, &stdout)
			require.ErrorContains(t, err, c.wantErr)
			require.Empty(t, stdout.String(), "nothing is played")
		})
	}

	t.Run("help prints the flags", func(t *testing.T) {
		out := runScript(t, "-h")
		require.Contains(t, out, "-approve")
		require.Contains(t, out, "-json")
	})
	t.Run("a cancelled context stops the script", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var stdout bytes.Buffer
		require.ErrorIs(t, run(ctx, nil, &stdout), context.Canceled)
	})
}

// -trace prints the span tree after the transcript: one execute_tool span
// per call under the run's span, the suspended call's span numbered and
// linked from its resumption and from the refused replay.
func TestRunTrace(t *testing.T) {
	out := runScript(t, "-trace")
	requireSequence(t, out, "script complete: 9 turns", "", "trace: 12 spans")
	_, tree, ok := strings.Cut(out, "trace: 12 spans\n")
	require.True(t, ok)
	require.Equal(t, `agentloop run
├─ execute_tool get_weather [completed]
├─ execute_tool search_orders [rejected, error.type=invalid_arguments]
├─ execute_tool search_orders [rejected, error.type=invalid_arguments]
├─ execute_tool search_orders [completed]
├─ execute_tool _OTHER [unknown_tool, error.type=unknown_tool]
├─ execute_tool refund_order [failed, error.type=denied]
├─ execute_tool refund_order [suspended, checkpoint sealed] (#1)
├─ execute_tool refund_order [completed] ↪ resumes #1
├─ resume_refused [refusal=already_answered] ↪ resumes #1
├─ execute_tool export_report [completed]
└─ execute_tool flaky_lookup [failed, error.type=failed]
`, tree)
	require.NotContains(t, tree, "10.0.3.7", "no private error in the trace")

	declined := runScript(t, "-trace", "-approve=no")
	require.Contains(t, declined, "├─ execute_tool refund_order [suspended, checkpoint sealed] (#1)\n├─ execute_tool refund_order [failed, error.type=denied] ↪ resumes #1\n")
}

func TestRunScriptFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "script.json")
	require.NoError(t, os.WriteFile(path, []byte(`[{"name":"get_weather","arguments":"{\"city\":\"Oslo\",\"unit\":\"fahrenheit\"}"}]`), 0o600))
	out := runScript(t, "-script", path)
	requireSequence(t, out,
		`turn 1: model proposes get_weather {"city":"Oslo","unit":"fahrenheit"}`,
		"ran get_weather with idempotency key call-",
		"model sees: Oslo: 39°F, light snow, wind 20 km/h.",
	)
	requireSequence(t, out, "ledger: no refunds recorded", "script complete: 1 turn")
}

func TestParseScript(t *testing.T) {
	cases := []struct {
		name    string
		script  string
		wantErr string
	}{
		{"the embedded script", string(defaultScript), ""},
		{"an unknown member", `[{"name":"get_weather","arguments":"{}","id":"x"}]`, `unknown field "id"`},
		{"not a list", `{"name":"get_weather"}`, "cannot unmarshal object"},
		{"no turns", `[]`, "script: no turns"},
		{"trailing data", `[{"name":"a","arguments":"{}"}] []`, "trailing data"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			script, err := parseScript([]byte(c.script))
			if c.wantErr != "" {
				require.ErrorContains(t, err, c.wantErr)
				return
			}
			require.NoError(t, err)
			require.NotEmpty(t, script)
		})
	}
}

// TestRender checks the model-visible text of each kind of Output.
func TestRender(t *testing.T) {
	details, err := tool.NewJSONOutput(json.RawMessage(`{"n":1}`))
	require.NoError(t, err)
	cases := []struct {
		name   string
		output tool.Output
		want   string
	}{
		{"empty", tool.Output{}, "(empty result)"},
		{"text", tool.NewTextOutput("hello"), "hello"},
		{"details", details, `{"n":1}`},
		{"inline media", tool.Output{Content: []tool.Block{tool.NewTextBlock("see"), tool.NewMediaBlock("image/png", []byte{1, 2, 3})}}, "see\n[attachment image/png, 3 bytes]"},
		{"media by reference", tool.Output{Content: []tool.Block{tool.NewMediaURIBlock("text/csv", "https://files.example/r.csv")}}, "[attachment text/csv at https://files.example/r.csv]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, render(c.output))
		})
	}
}
