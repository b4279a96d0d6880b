package tool

import (
	"fmt"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentcontract/tool/internal/strictjson"
)

// This file holds what the JSON wire forms of [Definition], [Output], [Block] and
// [InputRequest] share: how they are written and how they are read.

// wireOptions format JSON as encoding/json writes it: compact, with <, >,
// &, U+2028 and U+2029 escaped in strings. [Output] in this form passes
// through encoding/json.Marshal unchanged, so the size of an encoded
// request is known before it is written.
var wireOptions = jsonv2.JoinOptions(jsontext.EscapeForHTML(true), jsontext.EscapeForJS(true))

// strictUnmarshal checks data as one I-JSON document of at most limit bytes
// and decodes it into v, refusing unknown members.
func strictUnmarshal(data []byte, limit int, v any) error {
	if len(data) > limit {
		return fmt.Errorf("document is %d bytes, more than the limit of %d", len(data), limit)
	}
	if _, err := strictjson.Parse(data); err != nil {
		return fmt.Errorf("not one I-JSON document: %v", err)
	}
	return jsonv2.Unmarshal(data, v, jsonv2.RejectUnknownMembers(true))
}
