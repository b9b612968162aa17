package web

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
)

// A flash carries what a form's answer must show once to the page the browser is sent to next
// (post/redirect/get): the new key and secret of "Request key" and "Rotate secret". The secret is
// not stored on the server (only its hash is), so it travels in a short-lived cookie of its own,
// sealed (AES-GCM) with a key derived from the session token: only a request with the same
// session opens it, on any replica, and none of the server's own keys is needed. The next GET of
// My Account shows it and deletes the cookie, so a reload shows it no more, and a reload of that
// page repeats no request.

// flashTTL is how long a flash waits for the page it was made for: the redirect follows at once.
const flashTTL = 120

// flash is what a flash cookie holds.
type flash struct {
	Secret *newKey `json:"secret,omitempty"`
}

// flashCookie is the flash cookie's name: __Host- behind TLS, as the session's.
func (p *Portal) flashCookie(r *http.Request) string {
	if p.secure(r) {
		return "__Host-flightgraph_flash"
	}
	return "flightgraph_flash"
}

// flashKey is the AES-256 key of the flashes of the session token.
func flashKey(session string) []byte {
	k := sha256.Sum256([]byte("flightgraph portal flash\x00" + session))
	return k[:]
}

// setFlash seals f for the request's session into the flash cookie; without a session there is
// nobody to show it to.
func (p *Portal) setFlash(w http.ResponseWriter, r *http.Request, f flash) {
	session := p.session(r)
	if session == "" {
		return
	}
	plain, err := json.Marshal(f)
	if err != nil {
		return
	}
	block, _ := aes.NewCipher(flashKey(session))
	gcm, _ := cipher.NewGCM(block)
	nonce := make([]byte, gcm.NonceSize())
	rand.Read(nonce)
	sealed := gcm.Seal(nonce, nonce, plain, []byte(p.flashCookie(r)))
	http.SetCookie(w, &http.Cookie{Name: p.flashCookie(r), Value: base64.RawURLEncoding.EncodeToString(sealed), Path: "/",
		MaxAge: flashTTL, HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: p.secure(r)})
}

// takeFlash opens the request's flash and deletes its cookie: it is shown once. A flash of
// another session, one tampered with, or none is the empty flash.
func (p *Portal) takeFlash(w http.ResponseWriter, r *http.Request) flash {
	var f flash
	c, err := r.Cookie(p.flashCookie(r))
	if err != nil {
		return f
	}
	http.SetCookie(w, &http.Cookie{Name: p.flashCookie(r), Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: p.secure(r)})
	session := p.session(r)
	sealed, err := base64.RawURLEncoding.DecodeString(c.Value)
	if session == "" || err != nil {
		return f
	}
	block, _ := aes.NewCipher(flashKey(session))
	gcm, _ := cipher.NewGCM(block)
	if len(sealed) < gcm.NonceSize() {
		return f
	}
	plain, err := gcm.Open(nil, sealed[:gcm.NonceSize()], sealed[gcm.NonceSize():], []byte(p.flashCookie(r)))
	if err != nil || json.Unmarshal(plain, &f) != nil {
		return flash{}
	}
	return f
}
