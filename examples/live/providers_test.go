package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// replayAPI answers requests to path, carrying key in header, with the
// recorded responses of file, in order, and keeps what the client sent.
func replayAPI(t *testing.T, file, path, header, key string) (*httptest.Server, func() []json.RawMessage) {
	raw, err := os.ReadFile(file)
	require.NoError(t, err)
	var responses []json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &responses))
	var mu sync.Mutex
	var bodies []json.RawMessage
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		n := len(bodies)
		bodies = append(bodies, body)
		w.Header().Set("Content-Type", "application/json")
		if n >= len(responses) || r.URL.Path != path || r.Header.Get(header) != key {
			t.Logf("request %d to %s with %s=%q", n, r.URL.Path, header, r.Header.Get(header))
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":{"type":"invalid_request_error","message":"unexpected request"}}`))
			return
		}
		_, _ = w.Write(responses[n])
	}))
	t.Cleanup(srv.Close)
	return srv, func() []json.RawMessage {
		mu.Lock()
		defer mu.Unlock()
		return bodies
	}
}

// TestProviderReplay plays the conversation of each provider against its
// replay server: what the program prints is testdata/<provider>_transcript.txt
// (refresh with -update), and the last request answers every call.
func TestProviderReplay(t *testing.T) {
	for _, tc := range []struct {
		provider, path, header, key, keyVar string
		answers                             int
	}{
		{"openai", "/chat/completions", "Authorization", "Bearer test-key", "OPENAI_API_KEY", 11},
		{"anthropic", "/v1/messages", "Authorization", "Bearer test-key", "ANTHROPIC_API_KEY", 7},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			srv, sent := replayAPI(t, "testdata/"+tc.provider+".json", tc.path, tc.header, tc.key)
			playReplay(t, tc.provider, tc.keyVar, srv.URL, "testdata/"+tc.provider+"_transcript.txt")

			bodies := sent()
			require.Len(t, bodies, 4)
			var last struct {
				Messages []json.RawMessage `json:"messages"`
			}
			require.NoError(t, json.Unmarshal(bodies[3], &last))
			require.Len(t, last.Messages, tc.answers)
		})
	}
}
