package toolmcp_test

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	toolmcp "github.com/agentcontract/tool/adapters/mcp"
	"github.com/agentcontract/tool/dispatch"
)

var coreName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// A remote server chooses its tool names: whatever it sends maps to a
// name the core accepts, and a name that already fits is kept.
func FuzzLocalName(f *testing.F) {
	for _, s := range []string{"weather.current", "a/b", "", "ünïcode", "x", string(make([]byte, 200)), "ok_name-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, remote string) {
		local := toolmcp.LocalName(remote)
		require.Regexp(t, coreName, local)
		if coreName.MatchString(remote) {
			require.Equal(t, remote, local)
		}
	})
}

// A remote server chooses its results: whatever decodes as a tools/call
// result either converts to a valid Output or is refused, never a panic.
func FuzzRemoteResult(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"hi"}]}`,
		`{"content":[{"type":"text","text":"{\"a\":1}"}],"structuredContent":{"a":1}}`,
		`{"content":[{"type":"image","mimeType":"image/png","data":"AQID"}]}`,
		`{"content":[{"type":"image","mimeType":"not a type","data":"AQID"}]}`,
		`{"content":[{"type":"resource","resource":{"uri":"x:y","blob":"AQ=="}}]}`,
		`{"content":[{"type":"resource_link","uri":"relative","name":"n"}]}`,
		`{"content":[{"type":"text","text":""}],"isError":true}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var res mcp.CallToolResult
		if json.Unmarshal(data, &res) != nil {
			return
		}
		out, err := toolmcp.OutputOf(&res)
		if err == nil {
			require.NoError(t, out.Validate())
		}
	})
}

// A client chooses the request state it sends back: only a state this
// server encrypted opens.
func FuzzRequestState(f *testing.F) {
	keys := []dispatch.SealKey{{ID: "k1", Secret: secret}}
	for _, s := range []string{"", "1..", "1.azE.AAAA", "2.azE.", "1.azE." + string(make([]byte, 40)), "not json"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, state string) {
		_, err := toolmcp.OpenState(keys, state)
		require.ErrorIs(t, err, dispatch.ErrInvalidCheckpoint)
	})
}

// A remote server chooses the schemas and structured content that Import
// sizes before encoding them: the size estimate never exceeds the
// encoding (else a value within the limit could be refused), and the
// bounded encoding refuses exactly the values longer than the limit.
func FuzzJSONSize(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"type":"string","pattern":"<&>"}}}`,
		`[1.5e-7,1e21,1e20,0.000001,-0,123456789012,1e+300,2.5e-300]`,
		`{"":null,"t":true,"f":false,"u":"\u00e9\ud83d\ude00","x":[[],{}]}`,
		`"\u0000\u001f\"\\"`, `0`, `[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		var v any
		if json.Unmarshal(doc, &v) != nil {
			return
		}
		enc, err := json.Marshal(v)
		require.NoError(t, err)
		require.LessOrEqual(t, toolmcp.JSONSize(v, 1<<30), len(enc), "the estimate of %s", enc)
		for _, limit := range []int{len(enc), len(enc) - 1, len(enc) / 2} {
			raw, err := toolmcp.MarshalBounded(v, limit, "the value")
			if len(enc) <= limit {
				require.NoError(t, err)
				require.Equal(t, enc, raw)
			} else {
				require.Error(t, err, "%s within %d bytes", enc, limit)
			}
		}
	})
}
