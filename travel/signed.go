package travel

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	stdhash "hash"
	"slices"
	"strings"
	"sync"
)

// Offer and cart ids are signed: prefix + base64url(payload) + "." + base64url(the first 16 bytes
// of the payload's HMAC-SHA256 under OfferKey).

// signedID is the id of payload under prefix.
func (s *Service) signedID(prefix string, payload []byte) string {
	enc := base64.RawURLEncoding
	sig := s.sign(payload)
	out := make([]byte, 0, len(prefix)+enc.EncodedLen(len(payload))+1+enc.EncodedLen(len(sig)))
	out = append(out, prefix...)
	out = enc.AppendEncode(out, payload)
	out = append(out, '.')
	return string(enc.AppendEncode(out, sig))
}

// openID is the payload of id, a signedID under prefix of at most maxLen bytes; ok is false when
// id is malformed, altered or signed under another key. An id has one spelling, the one signedID
// writes, so that no altered id passes for the same one: Strict base64 refuses stray padding
// bits, but like every decoder of encoding/base64 it skips CR and LF anywhere in its input, so
// what was decoded must encode back to what was read.
func (s *Service) openID(prefix, id string, maxLen int) (payload string, ok bool) {
	if len(id) > maxLen || !strings.HasPrefix(id, prefix) {
		return "", false
	}
	body, sig, ok := strings.Cut(id[len(prefix):], ".")
	if !ok {
		return "", false
	}
	enc := base64.RawURLEncoding.Strict()
	raw, err1 := enc.DecodeString(body)
	mac, err2 := enc.DecodeString(sig)
	if err1 != nil || err2 != nil || enc.EncodeToString(raw) != body || enc.EncodeToString(mac) != sig || !hmac.Equal(mac, s.sign(raw)) {
		return "", false
	}
	return string(raw), true
}

// sign is the first 16 bytes of payload's HMAC-SHA256 under OfferKey. The keyed hashes are
// pooled: keying one costs two SHA-256 blocks and a few allocations, as much as signing an
// offer id, and a deals call signs one per destination. A pooled hash keeps a copy of its key and
// serves only a service with that key, so that services under different keys (replicas in one
// test, a key rotated) never sign with each other's.
func (s *Service) sign(payload []byte) []byte {
	k, _ := signers.Get().(*keyedHash)
	if k == nil || subtle.ConstantTimeCompare(k.key, s.OfferKey) != 1 {
		if len(s.OfferKey) < 32 {
			panic("travel: Service.OfferKey must hold at least 32 bytes")
		}
		k = &keyedHash{key: slices.Clone(s.OfferKey), h: hmac.New(sha256.New, s.OfferKey)}
	}
	k.h.Write(payload)
	sum := k.h.Sum(make([]byte, 0, sha256.Size))[:16]
	k.h.Reset()
	signers.Put(k)
	return sum
}

// signers pools keyedHashes (sign).
var signers sync.Pool

type keyedHash struct {
	key []byte
	h   stdhash.Hash
}
