package toolmcp

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/internal/errprefix"
)

// IdempotencyMetaKey is the key, in the _meta of a first tools/call
// request, under which a client that wants the call deduplicated sends
// its own key for it: a string of 1 to MaxIdempotencyKeyBytes bytes of
// ASCII letters, digits and "-", "_", ".", ":", "/". It is an extension
// of this server, not of MCP: a client sends it when it knows the
// server is this one.
//
// The call then runs under an idempotency key derived from the request's
// principal (Config.Principal, "" without one) and the client's key
// (IdempotencyKeyFor): the same client key from the same principal is the
// same call, and a client key never meets another principal's. With a
// Dispatch.Store, a client that retries a call under the same key, after
// a dropped connection say, gets the first attempt's recorded outcome and
// the tool does not run again (see "Exactly once" in the dispatch
// package); an attempt whose outcome is unknown is reconciled first.
// Without a key, every tools/call is a new call: a retried first call
// runs the tool again. A retry of a suspended call needs no key: it is
// keyed by its requestState, which is answered once.
//
// A key that is not a string, or breaks these bounds, refuses the request
// with a JSON-RPC error (invalid params) wrapping ErrInvalidKey, before
// anything runs.
const IdempotencyMetaKey = "com.github.agentcontract.tool/idempotency-key"

// MaxIdempotencyKeyBytes bounds the client's key under IdempotencyMetaKey.
const MaxIdempotencyKeyBytes = 128

// idempotencyDomain keeps the keys IdempotencyKeyFor derives apart from
// every other digest of the project.
const idempotencyDomain = "github.com/agentcontract/tool/adapters/mcp idempotency key v1\x00"

// IdempotencyKeyFor returns the idempotency key a call runs under when
// its request's principal is principal and its client sent key under
// IdempotencyMetaKey: "mcp-" and 32 lowercase hex digits of a SHA-256
// over the two, each length-prefixed, after a label of this package. The
// same two always give the same key, and any other two another one. It
// does not check key; an operator uses it to find a call's record
// (dispatch.RunRecordID).
func IdempotencyKeyFor(principal, key string) tool.IdempotencyKey {
	h := sha256.New()
	h.Write([]byte(idempotencyDomain))
	for _, f := range []string{principal, key} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(f)))
		h.Write(n[:])
		h.Write([]byte(f))
	}
	return tool.IdempotencyKey("mcp-" + hex.EncodeToString(h.Sum(nil)[:16]))
}

// clientKey returns the idempotency key of a first tools/call from the
// key its client sent under IdempotencyMetaKey, bound to principal: ""
// when it sent none (the dispatcher draws a fresh one).
func clientKey(meta mcp.Meta, principal string) (tool.IdempotencyKey, error) {
	v, ok := meta[IdempotencyMetaKey]
	if !ok {
		return "", nil
	}
	key, ok := v.(string)
	if !ok {
		return "", errprefix.Errorf("%w: _meta %q is a %T, want a string", ErrInvalidKey, IdempotencyMetaKey, v)
	}
	if err := checkClientKey(key); err != nil {
		return "", err
	}
	return IdempotencyKeyFor(principal, key), nil
}

// checkClientKey checks a client's key against the bounds
// IdempotencyMetaKey documents.
func checkClientKey(key string) error {
	if key == "" || len(key) > MaxIdempotencyKeyBytes {
		return errprefix.Errorf("%w: _meta %q is %d bytes, want 1 to %d", ErrInvalidKey, IdempotencyMetaKey, len(key), MaxIdempotencyKeyBytes)
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; !keyByte(c) {
			return errprefix.Errorf("%w: _meta %q has the byte %#x at offset %d, want ASCII letters, digits and -_.:/", ErrInvalidKey, IdempotencyMetaKey, c, i)
		}
	}
	return nil
}

func keyByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '-', '_', '.', ':', '/':
		return true
	}
	return false
}
