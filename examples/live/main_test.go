package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/transcript.txt")

// replay answers the Gemini API's generateContent with recorded responses,
// in order, and keeps what the client sent.
func replay(t *testing.T, file string) (*httptest.Server, func() [][]byte) {
	raw, err := os.ReadFile(file)
	require.NoError(t, err)
	var responses []json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &responses))
	var mu sync.Mutex
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		n := len(bodies)
		bodies = append(bodies, body)
		w.Header().Set("Content-Type", "application/json")
		if n >= len(responses) || r.Header.Get("x-goog-api-key") != "test-key" ||
			r.URL.Path != "/v1beta/models/gemini-flash-latest:generateContent" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":{"code":400,"message":"unexpected request","status":"INVALID_ARGUMENT"}}`))
			return
		}
		_, _ = w.Write(responses[n])
	}))
	t.Cleanup(srv.Close)
	return srv, func() [][]byte {
		mu.Lock()
		defer mu.Unlock()
		return bodies
	}
}

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestGeminiReplay(t *testing.T) {
	srv, sent := replay(t, "testdata/gemini.json")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-provider", "gemini", "-base-url", srv.URL},
		env(map[string]string{"GEMINI_API_KEY": "test-key"}), &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	if *update {
		require.NoError(t, os.WriteFile("testdata/transcript.txt", stdout.Bytes(), 0o644))
	}
	want, err := os.ReadFile("testdata/transcript.txt")
	require.NoError(t, err)
	require.Equal(t, string(want), stdout.String())

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
		{"a provider not in this build", []string{"-provider", "openai"},
			"live: provider \"openai\" is not available in this build; use -provider gemini\n"},
		{"a stray argument", []string{"now"},
			"live: usage: live [-provider gemini] [-model name] [-prompt text] [-turns n>0]\n"},
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
