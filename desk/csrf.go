package desk

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"net/http"
	"net/url"
	"time"
)

// csrfLifetime is how long a form's token is accepted: a person may leave
// a page open for a working day.
const csrfLifetime = 12 * time.Hour

// csrfToken returns the token of a form shown to person at now: the time
// and an HMAC of it with the person, so that it is worth nothing to anyone
// else and nothing after csrfLifetime. A page of another site cannot read
// it, so it cannot post a form the desk accepts.
func (d *Desk) csrfToken(person string, now time.Time) string {
	var b [8 + sha256.Size]byte
	binary.BigEndian.PutUint64(b[:8], uint64(now.Unix()))
	copy(b[8:], d.csrfMAC(person, b[:8]))
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func (d *Desk) csrfMAC(person string, stamp []byte) []byte {
	h := hmac.New(sha256.New, d.csrfKey)
	h.Write([]byte("github.com/agentcontract/tool/desk csrf\x00"))
	h.Write(stamp)
	h.Write([]byte(person))
	return h.Sum(nil)
}

// checkCSRF reports whether r is a form post of the desk's own page to
// person: its token is valid and recent, and the browser, when it says
// where the request comes from, says it comes from this origin.
func (d *Desk) checkCSRF(r *http.Request, person string, now time.Time) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return false
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		u, err := url.Parse(origin)
		if err != nil || u.Host != r.Host {
			return false
		}
	}
	b, err := base64.RawURLEncoding.DecodeString(r.PostForm.Get("csrf"))
	if err != nil || len(b) != 8+sha256.Size {
		return false
	}
	if !hmac.Equal(b[8:], d.csrfMAC(person, b[:8])) {
		return false
	}
	issued := time.Unix(int64(binary.BigEndian.Uint64(b[:8])), 0)
	return !issued.After(now.Add(time.Minute)) && now.Sub(issued) <= csrfLifetime
}
