package tool

import (
	"bytes"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentcontract/tool/internal/strictjson"
)

// BlockKind says what a Block holds.
type BlockKind string

const (
	// BlockText is a block of text.
	BlockText BlockKind = "text"
	// BlockMedia is a block of media: an image, audio, a document.
	BlockMedia BlockKind = "media"
)

// Block is one item of model-visible content: text, or media given either
// inline (Data) or by reference (URI).
//
// A text block has non-empty, valid UTF-8 Text and nothing else. A media
// block has a MediaType (an RFC 6838 type such as "image/png", without
// parameters) and exactly one of Data and URI (an absolute URI). The zero
// Block is invalid. Data is a slice the holder owns: Output.Clone copies it.
type Block struct {
	Kind      BlockKind `json:"kind"`
	Text      string    `json:"text,omitempty"`
	MediaType string    `json:"media_type,omitempty"`
	Data      []byte    `json:"data,omitempty"`
	URI       string    `json:"uri,omitempty"`
}

// NewTextBlock returns a text block. It does not validate: an empty or
// invalid text is caught by Validate.
func NewTextBlock(text string) Block {
	return Block{Kind: BlockText, Text: text}
}

// NewMediaBlock returns a media block with inline data, which it copies.
func NewMediaBlock(mediaType string, data []byte) Block {
	return Block{Kind: BlockMedia, MediaType: mediaType, Data: bytes.Clone(data)}
}

// NewMediaURIBlock returns a media block that refers to its data by URI.
func NewMediaURIBlock(mediaType, uri string) Block {
	return Block{Kind: BlockMedia, MediaType: mediaType, URI: uri}
}

// Validate reports whether b follows the rules above; errors wrap
// ErrInvalidOutput.
func (b Block) Validate() error {
	switch b.Kind {
	case BlockText:
		switch {
		case b.Text == "":
			return errorf("%w: text block with empty text", ErrInvalidOutput)
		case !utf8.ValidString(b.Text):
			return errorf("%w: text block is not valid UTF-8", ErrInvalidOutput)
		case b.MediaType != "" || b.Data != nil || b.URI != "":
			return errorf("%w: text block with media fields", ErrInvalidOutput)
		}
		return nil
	case BlockMedia:
		if b.Text != "" {
			return errorf("%w: media block with text", ErrInvalidOutput)
		}
		if !validMediaType(b.MediaType) {
			return errorf("%w: media block has invalid media type %q", ErrInvalidOutput, b.MediaType)
		}
		switch {
		case len(b.Data) > 0 && b.URI != "":
			return errorf("%w: media block has both data and a URI", ErrInvalidOutput)
		case len(b.Data) == 0 && b.URI == "":
			return errorf("%w: media block has neither data nor a URI", ErrInvalidOutput)
		case b.URI != "":
			u, err := url.Parse(b.URI)
			if err != nil || !u.IsAbs() || strings.ContainsAny(b.URI, " \t\r\n") {
				return errorf("%w: media block URI %q is not an absolute URI", ErrInvalidOutput, b.URI)
			}
		}
		return nil
	}
	return errorf("%w: unknown block kind %q", ErrInvalidOutput, string(b.Kind))
}

// validMediaType checks type "/" subtype, each an RFC 6838 restricted name.
func validMediaType(s string) bool {
	typ, sub, ok := strings.Cut(s, "/")
	return ok && restrictedName(typ) && restrictedName(sub)
}

func restrictedName(s string) bool {
	if len(s) == 0 || len(s) > 127 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if i == 0 && !alnum {
			return false
		}
		if !alnum && !strings.ContainsRune("!#$&-^_.+", rune(c)) {
			return false
		}
	}
	return true
}

// Output is what a completed call returns to the model.
//
// Content is the ordered model-visible text and media. Details is optional
// structured JSON for programs; it is shown to a model only when Content is
// empty. The zero Output is valid and empty. An Output holds slices: use
// Clone for a copy that shares nothing. This package copies Outputs at every
// boundary it controls.
type Output struct {
	Content []Block         `json:"content,omitempty"`
	Details json.RawMessage `json:"details,omitzero"`
}

// NewTextOutput returns an Output with one text block, or the zero Output
// when text is empty.
func NewTextOutput(text string) Output {
	if text == "" {
		return Output{}
	}
	return Output{Content: []Block{NewTextBlock(text)}}
}

// NewJSONOutput returns an Output whose Details are a copy of value, which
// must be one RFC 7493 JSON document of at most MaxInputBytes; its exact
// bytes are kept. Errors wrap ErrInvalidOutput.
func NewJSONOutput(value json.RawMessage) (Output, error) {
	if err := validDetails(value); err != nil {
		return Output{}, err
	}
	return Output{Details: bytes.Clone(value)}, nil
}

func validDetails(value []byte) error {
	_, _, err := parseDetails(value)
	return err
}

// parseDetails checks details and returns their value tree.
func parseDetails(value []byte) (tree any, values int, err error) {
	if len(value) > MaxInputBytes {
		return nil, 0, errorf("%w: details are %d bytes, more than the limit of %d", ErrInvalidOutput, len(value), MaxInputBytes)
	}
	tree, values, err = strictjson.ParseInterning(value, nil)
	if err != nil {
		return nil, 0, errorf("%w: details are not one I-JSON document: %v", ErrInvalidOutput, err)
	}
	return tree, values, nil
}

// Text returns the text a model sees: the concatenated text of Content, or
// the Details JSON when Content is empty. It reports false when Content
// holds media, so that a text-only consumer cannot drop it silently.
func (o Output) Text() (string, bool) {
	if len(o.Content) == 0 {
		return string(o.Details), true
	}
	var b strings.Builder
	for _, block := range o.Content {
		if block.Kind != BlockText {
			return "", false
		}
		b.WriteString(block.Text)
	}
	return b.String(), true
}

// Clone returns a deep copy of o.
func (o Output) Clone() Output {
	var c Output
	if o.Content != nil {
		c.Content = slices.Clone(o.Content)
		for i := range c.Content {
			c.Content[i].Data = bytes.Clone(c.Content[i].Data)
		}
	}
	c.Details = bytes.Clone(o.Details)
	return c
}

// MaxOutputBytes bounds an Output: the bytes of its texts, media types,
// media data, URIs and details together. Validate checks it before
// anything else, and every copy and encoding this package makes of an
// Output comes after Validate, so a tool that returns gigabytes costs a
// sum of lengths, not a copy of them.
const MaxOutputBytes = 8 * MaxInputBytes

// size returns the bytes the bound of MaxOutputBytes counts, or
// MaxOutputBytes+1 once it is exceeded.
func (o Output) size() int {
	total := len(o.Details)
	for _, b := range o.Content {
		total += len(b.Kind) + len(b.Text) + len(b.MediaType) + len(b.Data) + len(b.URI)
		if total > MaxOutputBytes {
			return MaxOutputBytes + 1
		}
	}
	return min(total, MaxOutputBytes+1)
}

// Validate checks the size of o against MaxOutputBytes, every block and,
// when present, that Details is one RFC 7493 document of at most
// MaxInputBytes. Errors wrap ErrInvalidOutput.
func (o Output) Validate() error {
	_, _, err := o.validate()
	return err
}

// validate is Validate that also returns the value tree of the details,
// nil when there are none.
func (o Output) validate() (details any, values int, err error) {
	if err := o.validateContent(); err != nil {
		return nil, 0, err
	}
	if len(o.Details) > 0 {
		return parseDetails(o.Details)
	}
	return nil, 0, nil
}

// validateContent is Validate but for the details: the size of o and its
// content blocks.
func (o Output) validateContent() error {
	if size := o.size(); size > MaxOutputBytes {
		return errorf("%w: the content and details hold more than the limit of %d bytes (MaxOutputBytes)", ErrInvalidOutput, MaxOutputBytes)
	}
	for i, b := range o.Content {
		if err := b.Validate(); err != nil {
			return errorPart("content[%d]: %w", i, err)
		}
	}
	return nil
}

// outputWire is the JSON form of an Output.
type outputWire struct {
	Content []Block        `json:"content,omitempty"`
	Details jsontext.Value `json:"details,omitzero"`
}

// outputModel and blockModel describe the wire forms to schema reflection.
type outputModel struct {
	Content []blockModel `json:"content,omitempty"`
	Details any          `json:"details,omitempty"`
}

type blockModel struct {
	Kind      string `json:"kind" jsonschema:"enum=text,enum=media"`
	Text      string `json:"text,omitempty"`
	MediaType string `json:"media_type,omitempty"`
	Data      []byte `json:"data,omitempty"`
	URI       string `json:"uri,omitempty" jsonschema:"format=uri"`
}

// JSONSchemaModel returns a value whose Go type describes the JSON form of
// an Output, for SchemaFor and typed tools.
func (Output) JSONSchemaModel() any { return outputModel{} }

// JSONSchemaModel returns a value whose Go type describes the JSON form of a
// Block.
func (Block) JSONSchemaModel() any { return blockModel{} }

// MarshalJSON validates o and encodes it; empty members are omitted.
// Details are written compact, with member order, string escapes and
// number text exactly as held. An Output over MaxOutputBytes is refused
// before anything is encoded, and one whose encoding would exceed
// 16×MaxInputBytes, more than UnmarshalJSON reads (text of control
// characters is escaped to six times its size), after. Errors wrap
// ErrInvalidOutput.
func (o Output) MarshalJSON() ([]byte, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	data, err := jsonv2.Marshal(outputWire{Content: o.Content, Details: jsontext.Value(o.Details)}, jsontext.PreserveRawStrings(true))
	if err != nil {
		return nil, errorf("%w: %v", ErrInvalidOutput, err)
	}
	if len(data) > maxEncodedOutput {
		return nil, errorf("%w: the output is %d bytes encoded, more than the limit of %d", ErrInvalidOutput, len(data), maxEncodedOutput)
	}
	return data, nil
}

// maxEncodedOutput bounds the wire form of an Output, media included.
const maxEncodedOutput = 16 * MaxInputBytes

// UnmarshalJSON decodes strictly: unknown or duplicate members, and an
// Output that fails Validate, are errors wrapping ErrInvalidOutput. It
// reads documents of up to 16×MaxInputBytes. On error o is left unchanged.
func (o *Output) UnmarshalJSON(data []byte) error {
	var w outputWire
	if err := strictUnmarshal(data, maxEncodedOutput, &w); err != nil {
		return errorf("%w: %v", ErrInvalidOutput, err)
	}
	decoded := Output{Content: w.Content}
	if len(w.Details) > 0 {
		decoded.Details = json.RawMessage(w.Details)
	}
	if err := decoded.Validate(); err != nil {
		return err
	}
	*o = decoded
	return nil
}

// UnmarshalJSON decodes one block strictly; see Output.UnmarshalJSON.
func (b *Block) UnmarshalJSON(data []byte) error {
	type plain Block // no methods: avoids recursion
	var w plain
	if err := strictUnmarshal(data, maxEncodedOutput, &w); err != nil {
		return errorf("%w: %v", ErrInvalidOutput, err)
	}
	if err := Block(w).Validate(); err != nil {
		return err
	}
	*b = Block(w)
	return nil
}

// MarshalJSON validates b and encodes it.
func (b Block) MarshalJSON() ([]byte, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	type plain Block
	return jsonv2.Marshal(plain(b))
}
