package toolmcp

import (
	"net/http"

	"github.com/agentcontract/tool/dispatch"
)

// CheckElicitationForm exposes the elicitation-form check to the tests.
var CheckElicitationForm = checkElicitation

// OpenState decrypts a request state into the checkpoint's JSON, and
// SealState encrypts checkpoint JSON as the server does, so that a test
// can forge a state that decrypts but whose seal does not verify.
func OpenState(keys []dispatch.SealKey, state string) ([]byte, error) {
	box, err := newStateBox(keys)
	if err != nil {
		return nil, err
	}
	cp, err := box.open(state)
	if err != nil {
		return nil, err
	}
	return cp.MarshalJSON()
}

func SealState(keys []dispatch.SealKey, checkpoint []byte) (string, error) {
	box, err := newStateBox(keys)
	if err != nil {
		return "", err
	}
	return box.seal(checkpoint), nil
}

// LocalName and OutputOf expose Import's name mapping and result
// conversion to the fuzz targets.
var (
	LocalName = localName
	OutputOf  = outputOf
)

// MarshalBounded and JSONSize expose the bounded encoding of decoded
// values, and LimitClient the bounded HTTP client, to the tests.
var (
	MarshalBounded = marshalBounded
	JSONSize       = jsonSize
	LimitClient    = func(c *http.Client, limit int) *http.Client { return limitClient(c, transportLimits{message: limit}) }
)
