package tooltemporal_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	failurepb "go.temporal.io/api/failure/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/agentcontract/tool"
	tooltemporal "github.com/agentcontract/tool/adapters/temporal"
	"github.com/agentcontract/tool/dispatch"
)

// xorCodec stands for an encrypting codec: it flips the bits of every
// payload, so no text of a payload it encoded can be read in the bytes
// stored.
type xorCodec struct{}

const xorEncoding = "binary/test-xor"

func xor(data []byte) []byte {
	out := make([]byte, len(data))
	for i, b := range data {
		out[i] = b ^ 0xff
	}
	return out
}

func (xorCodec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		data, err := proto.Marshal(p)
		if err != nil {
			return nil, err
		}
		out[i] = &commonpb.Payload{Metadata: map[string][]byte{converter.MetadataEncoding: []byte(xorEncoding)}, Data: xor(data)}
	}
	return out, nil
}

func (xorCodec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.Metadata[converter.MetadataEncoding]) != xorEncoding {
			out[i] = p
			continue
		}
		out[i] = &commonpb.Payload{}
		if err := proto.Unmarshal(xor(p.Data), out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// storedFailures is a failure converter that keeps a copy of every
// failure it makes of an error: what a worker sends the server, and the
// server writes to the history.
type storedFailures struct {
	converter.FailureConverter
	mu     sync.Mutex
	stored []*failurepb.Failure
}

func (s *storedFailures) ErrorToFailure(err error) *failurepb.Failure {
	f := s.FailureConverter.ErrorToFailure(err)
	if f != nil {
		s.mu.Lock()
		s.stored = append(s.stored, proto.Clone(f).(*failurepb.Failure))
		s.mu.Unlock()
	}
	return f
}

// With a payload codec, the details of the call activity's errors (a
// Failure's public Output, an InputRejection's message) reach the history
// encoded only when the failure converter has the codec too:
// NewFailureConverter gives it. The default failure converter writes
// them in plain text, which is why it exists. Either way the workflow
// reads the outcomes intact.
func TestFailureDetailsAreEncodedWithTheCodec(t *testing.T) {
	dc := converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), xorCodec{})
	for _, tt := range []struct {
		name      string
		failures  converter.FailureConverter
		wantPlain bool
	}{
		{"only a payload codec: the details are plain", nil, true},
		{"NewFailureConverter: the details are encoded", tooltemporal.NewFailureConverter(dc), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t, newRuntime(t, newRegistry(t, newBackend())))
			env.SetDataConverter(dc)
			stored := &storedFailures{FailureConverter: tt.failures}
			if stored.FailureConverter == nil {
				stored.FailureConverter = defaultFailureConverter()
			}
			env.SetFailureConverter(stored)
			got := runTurns(t, env, []dispatch.Call{
				call("c1", "cancel", `{"item":"A-1"}`),
				call("c2", "picky", `{"item":"A-1"}`),
			})[0]
			require.Equal(t, dispatch.KindFailed, got[0].Kind)
			require.Equal(t, cancelOutput, got[0].Output, "the details cross intact")
			require.Equal(t, dispatch.KindRejected, got[1].Kind)
			require.Equal(t, tool.NewTextOutput("item is out of range"), got[1].Output)

			stored.mu.Lock()
			defer stored.mu.Unlock()
			require.NotEmpty(t, stored.stored)
			var text string
			for _, f := range stored.stored {
				data, err := protojson.Marshal(f)
				require.NoError(t, err)
				text += string(data) + "\n"
				// protojson writes payload data as base64: read it too.
				for _, p := range payloadsOf(f) {
					text += string(p.Data) + "\n"
				}
			}
			for _, public := range []string{"The order could not be cancelled.", "receipt.png", "item is out of range"} {
				if tt.wantPlain {
					require.Contains(t, text, public)
				} else {
					require.NotContains(t, text, public, "stored failures hold the public output only encoded")
				}
			}
			require.NotContains(t, text, planted)
		})
	}
}

// payloadsOf returns every payload a failure and its causes hold.
func payloadsOf(f *failurepb.Failure) []*commonpb.Payload {
	var out []*commonpb.Payload
	for ; f != nil; f = f.GetCause() {
		if f.GetEncodedAttributes() != nil {
			out = append(out, f.GetEncodedAttributes())
		}
		out = append(out, f.GetApplicationFailureInfo().GetDetails().GetPayloads()...)
	}
	return out
}

func defaultFailureConverter() converter.FailureConverter {
	return temporal.GetDefaultFailureConverter()
}
