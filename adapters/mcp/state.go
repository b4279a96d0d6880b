package toolmcp

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"

	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

// The requestState of a suspended call is the sealed dispatch.Checkpoint,
// encrypted: MCP asks servers to encrypt, sign and verify the state they
// hand to clients, and a checkpoint holds what the client should not read —
// the tool's continuation state and the idempotency key. The seal (an
// HMAC, checked by Dispatcher.Resume) proves the checkpoint is genuine;
// the encryption (AES-256-GCM) hides it and refuses any edited byte first.
//
// Wire form: "1.<key ID>.<nonce and ciphertext>", both parts base64url
// without padding. The AES key of each seal key is derived from its secret
// with HKDF-SHA-256 under an info string of its own, so it never equals the
// HMAC key dispatch uses, and rotates with it: the first seal key encrypts,
// every seal key decrypts.
const stateVersion = "1"

const stateKeyInfo = "github.com/agentcontract/tool/adapters/mcp request state v1"

// stateBox encrypts and decrypts request states. Immutable after
// newStateBox; safe for concurrent use.
type stateBox struct {
	sealID string
	aeads  map[string]cipher.AEAD
}

func newStateBox(keys []dispatch.SealKey) (*stateBox, error) {
	box := &stateBox{aeads: make(map[string]cipher.AEAD, len(keys))}
	for i, k := range keys {
		key, err := hkdf.Key(sha256.New, k.Secret, nil, stateKeyInfo, 32)
		if err != nil {
			return nil, err
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			box.sealID = k.ID
		}
		box.aeads[k.ID] = aead
	}
	return box, nil
}

// seal encrypts a checkpoint's JSON into a request state.
func (b *stateBox) seal(checkpoint []byte) string {
	aead := b.aeads[b.sealID]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(checkpoint)+aead.Overhead())
	_, _ = rand.Read(nonce) // crypto/rand.Read never fails
	id := base64.RawURLEncoding.EncodeToString([]byte(b.sealID))
	sealed := aead.Seal(nonce, nonce, checkpoint, []byte(id))
	return stateVersion + "." + id + "." + base64.RawURLEncoding.EncodeToString(sealed)
}

// open decrypts a request state into a checkpoint. Errors wrap
// dispatch.ErrInvalidCheckpoint and say nothing about the keys.
func (b *stateBox) open(state string) (dispatch.Checkpoint, error) {
	var cp dispatch.Checkpoint
	version, rest, ok1 := strings.Cut(state, ".")
	id, body, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || version != stateVersion {
		return cp, errprefix.Errorf("%w: the request state is not one this server issued", dispatch.ErrInvalidCheckpoint)
	}
	rawID, err1 := base64.RawURLEncoding.DecodeString(id)
	sealed, err2 := base64.RawURLEncoding.DecodeString(body)
	aead := b.aeads[string(rawID)]
	if err1 != nil || err2 != nil || aead == nil || len(sealed) < aead.NonceSize() {
		return cp, errprefix.Errorf("%w: the request state is not one this server issued", dispatch.ErrInvalidCheckpoint)
	}
	plain, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], []byte(id))
	if err != nil {
		return cp, errprefix.Errorf("%w: the request state was altered or not issued with this server's keys", dispatch.ErrInvalidCheckpoint)
	}
	if err := cp.UnmarshalJSON(plain); err != nil {
		return cp, err
	}
	return cp, nil
}
