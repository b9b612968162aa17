package travel

import (
	"strings"
	"testing"
)

// TestSignedIDsKeepToTheirKey: services under different keys, signing in turn, share the pool of
// keyed hashes (sign) but never a hash: each opens its own ids and refuses the other's, and an id
// is the same whichever pooled hash signed it.
func TestSignedIDsKeepToTheirKey(t *testing.T) {
	a, b := &Service{OfferKey: []byte(strings.Repeat("a", 32))}, &Service{OfferKey: []byte(strings.Repeat("b", 32))}
	payload := []byte("1764300000|OUTBOUND|ECONOMY_LIGHT|ADT1|EUR|XX0001-2026-11-28")
	first := a.signedID(offerIDPrefix, payload)
	for i := range 200 {
		s, other := a, b
		if i%2 == 1 {
			s, other = b, a
		}
		id := s.signedID(offerIDPrefix, payload)
		if got, ok := s.openID(offerIDPrefix, id, maxOfferIDLength); !ok || got != string(payload) {
			t.Fatalf("round %d: own id not opened (%q, %v)", i, got, ok)
		}
		if _, ok := other.openID(offerIDPrefix, id, maxOfferIDLength); ok {
			t.Fatalf("round %d: another key's id was opened", i)
		}
		if s == a && id != first {
			t.Fatalf("round %d: the id changed: %s, first %s", i, id, first)
		}
	}
	if _, ok := a.openID(cartIDPrefix, first, maxCartIDLength); ok {
		t.Error("an offer id opened as a cart id")
	}
	// One spelling: base64's decoders skip CR and LF, which must not make a second id of one payload.
	body := len(offerIDPrefix) + 4
	for _, other := range []string{first[:body] + "\n" + first[body:], first[:body] + "\r\n" + first[body:], first[:len(first)-2] + "\n" + first[len(first)-2:], first + "\n"} {
		if _, ok := a.openID(offerIDPrefix, other, maxOfferIDLength); ok {
			t.Errorf("%q opened: a second spelling of %q", other, first)
		}
	}
}
