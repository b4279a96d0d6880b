package tooltemporal

import (
	"errors"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	failurepb "go.temporal.io/api/failure/v1"
	"go.temporal.io/sdk/temporal"

	"github.com/agentcontract/tool"
)

// FuzzDecodeResult feeds decodeResult the details of an activity failure
// as they arrive from another worker, in any shape: it must never panic,
// and what it rebuilds must be a valid Failure or InputRejection, or an
// error that settles as unknown.
func FuzzDecodeResult(f *testing.F) {
	f.Add(errTypeFailure, []byte(`{"kind":"failed","output":{"content":[{"kind":"text","text":"no"}]}}`))
	f.Add(errTypeFailure, []byte(`{"kind":"rejected","output":{}}`))
	f.Add(errTypeFailure, []byte(`{"kind":"exploded","output":{"content":[{"kind":"media"}]}}`))
	f.Add(errTypeRejection, []byte(`{"message":"item is out of range"}`))
	f.Add(errTypeRejection, []byte(`{"message":""}`))
	f.Add(errTypeUnknown, []byte(`null`))
	f.Add(errTypeFailure, []byte(`[1,2`))
	f.Fuzz(func(t *testing.T, errType string, details []byte) {
		wire := &failurepb.Failure{
			Message: "from another worker",
			FailureInfo: &failurepb.Failure_ApplicationFailureInfo{ApplicationFailureInfo: &failurepb.ApplicationFailureInfo{
				Type:         errType,
				NonRetryable: true,
				Details: &commonpb.Payloads{Payloads: []*commonpb.Payload{{
					Metadata: map[string][]byte{"encoding": []byte("json/plain")},
					Data:     details,
				}}},
			}},
		}
		err := temporal.GetDefaultFailureConverter().FailureToError(wire)
		result, got := decodeResult(callResult{}, err)
		if got == nil {
			t.Fatalf("an error became a result: %+v", result)
		}
		if failure, ok := tool.ClassifyFailure(got); ok {
			if verr := failure.Validate(); verr != nil {
				t.Fatalf("invalid failure rebuilt: %v", verr)
			}
			if errType != errTypeFailure {
				t.Fatalf("a %q error became a Failure", errType)
			}
		}
		if rejection, ok := tool.ClassifyInputRejection(got); ok {
			if verr := rejection.Validate(); verr != nil {
				t.Fatalf("invalid rejection rebuilt: %v", verr)
			}
			if errType != errTypeRejection {
				t.Fatalf("a %q error became an InputRejection", errType)
			}
		}
		if _, ok := tool.ClassifyFailure(got); !ok && errType == errTypeFailure && !errors.Is(got, ErrInvalidActivityResult) {
			t.Fatalf("undecodable failure details not reported: %v", got)
		}
	})
}
