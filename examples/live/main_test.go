package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the transcripts in testdata")

// replay answers the Gemini API's generateContent with recorded responses,
// in order, and keeps what the client sent.
func replay(t *testing.T, file string) (*httptest.Server, func() []json.RawMessage) {
	return replayAPI(t, file, "/v1beta/models/gemini-flash-latest:generateContent", "x-goog-api-key", "test-key")
}

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// playReplay runs the program with provider against the replay server at
// baseURL, with "test-key" in keyVar, and compares what it prints with
// golden (rewritten with -update).
func playReplay(t *testing.T, provider, keyVar, baseURL, golden string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-provider", provider, "-base-url", baseURL},
		env(map[string]string{keyVar: "test-key"}), &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	if *update {
		require.NoError(t, os.WriteFile(golden, stdout.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, string(want), stdout.String())
}

func TestGeminiReplay(t *testing.T) {
	srv, sent := replay(t, "testdata/gemini.json")
	playReplay(t, "gemini", "GEMINI_API_KEY", srv.URL, "testdata/transcript.txt")

	// The last request replays every model turn and answers every call:
	// 1 prompt + 3 model turns + 3 replies.
	bodies := sent()
	require.Len(t, bodies, 4)
	var last struct {
		Contents []json.RawMessage `json:"contents"`
	}
	require.NoError(t, json.Unmarshal(bodies[3], &last))
	require.Len(t, last.Contents, 7)
	require.Contains(t, string(last.Contents[5]), `"thoughtSignature":"dGhvdWdodC0z"`)
	require.Contains(t, string(last.Contents[6]), `"inlineData":{"data":"iVBORw0KGgo`)
}

func TestWithoutKey(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"gemini without a key", []string{"-provider", "gemini"},
			"live: no API key: set GEMINI_API_KEY (create a key at https://aistudio.google.com/apikey), then run again:\n  GEMINI_API_KEY=… go run ./examples/live -provider gemini\n"},
		{"openai without a key", []string{"-provider", "openai"},
			"live: no API key: set OPENAI_API_KEY (create a key at https://platform.openai.com/api-keys), then run again:\n  OPENAI_API_KEY=… go run ./examples/live -provider openai\n"},
		{"anthropic without a key", []string{"-provider", "anthropic"},
			"live: no API key: set ANTHROPIC_API_KEY (create a key at https://console.anthropic.com/settings/keys), then run again:\n  ANTHROPIC_API_KEY=… go run ./examples/live -provider anthropic\n"},
		{"an unknown provider", []string{"-provider", "mistral"},
			"live: provider \"mistral\" is not available; use -provider gemini, openai or anthropic\n"},
		{"a stray argument", []string{"now"},
			"live: usage: live [-provider gemini|openai|anthropic] [-model name] [-prompt text] [-turns n>0]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tc.args, env(nil), &stdout, &stderr)
			require.Equal(t, 2, code)
			require.Equal(t, tc.want, stderr.String())
			require.Empty(t, stdout.String())
		})
	}
}

func TestTurnLimit(t *testing.T) {
	srv, _ := replay(t, "testdata/gemini.json")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-base-url", srv.URL, "-turns", "1"},
		env(map[string]string{"GEMINI_API_KEY": "test-key"}), &stdout, &stderr)
	require.Equal(t, 1, code)
	require.Equal(t, "live: the model did not answer within -turns turns\n", stderr.String())
	require.True(t, strings.HasPrefix(stdout.String(), "gemini gemini-flash-latest, 4 tools\n"))
}
