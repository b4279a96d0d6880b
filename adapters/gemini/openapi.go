package toolgemini

import (
	"encoding/json"

	"google.golang.org/genai"
)

func (l *lowering) lowerOpenAPIDoc(raw json.RawMessage, params bool) *genai.Schema {
	l.refuse("", "not yet")
	return nil
}
