// Package access is the access core shared by the GraphQL and REST edges: credentials, portal
// accounts and sessions, applications, keys and subscriptions with their approval workflow, the
// OAuth 2.0 token service, plans and limits, usage, audit and the mail outbox. It exposes one
// HTTP middleware that authenticates every call and puts the Caller in its context.
package access

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"math/big"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"

	"golang.org/x/crypto/argon2"

	"github.com/flightgraph/flightgraph"
)

// Credential kinds, told apart by the prefix of their value.
const (
	KindAPIKey       = "fgk_"  // an application key: the api-key header and the OAuth client_id
	KindSecret       = "fgs_"  // a key's secret: the OAuth client_secret
	KindAccessToken  = "fgat_" // an OAuth 2.0 access token
	KindRefreshToken = "fgrt_" // an OAuth 2.0 refresh token
	KindSession      = "fgps_" // a portal session
	KindSignUp       = "fgsu_" // the token of a sign-up mail, for verifyEmail
	// KindTrialKey and KindTrialSecret are a trial key's halves (Service.TrialKey): short-lived
	// stand-ins for a key's, minted by a portal session for Try it, used exactly as the key's
	// (the api-key header and the OAuth client_id; the client_secret).
	KindTrialKey    = "fgtk_"
	KindTrialSecret = "fgts_"
)

// kinds are the credential kinds CredentialKind knows.
var kinds = []string{KindAPIKey, KindSecret, KindAccessToken, KindRefreshToken, KindSession, KindSignUp, KindTrialKey, KindTrialSecret}

const (
	credentialBytes = 32 // of randomness, from crypto/rand
	bodyLen         = 43 // base62 digits that hold 32 bytes
	checksumLen     = 6  // base62 digits that hold a CRC-32
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewCredential returns a fresh credential of a kind: its prefix, 32 random bytes in base62 and a
// CRC-32 checksum of both, so that a typo or garbage is refused without a database query.
func NewCredential(kind string) string {
	var b [credentialBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("access: crypto/rand failed: %v", err)) // the platform is broken; nothing is safe
	}
	body := encode62(new(big.Int).SetBytes(b[:]), bodyLen)
	sum := checksum(kind, body)
	return kind + body + string(sum[:])
}

// CredentialKind returns the kind of a well-formed credential, or "" for anything else.
func CredentialKind(s string) string {
	for _, kind := range kinds {
		if !strings.HasPrefix(s, kind) {
			continue
		}
		rest := s[len(kind):]
		if len(rest) != bodyLen+checksumLen || strings.Trim(rest, base62) != "" {
			return ""
		}
		if sum := checksum(kind, rest[:bodyLen]); subtle.ConstantTimeCompare(sum[:], []byte(rest[bodyLen:])) != 1 {
			return ""
		}
		return kind
	}
	return ""
}

// HashCredential is what is stored of a credential: the hex SHA-256 of its value. Credentials
// carry 256 bits of randomness, so an unsalted fast hash is safe and allows lookup by hash.
func HashCredential(s string) string {
	h := sha256.Sum256([]byte(s))
	var out [2 * sha256.Size]byte
	hex.Encode(out[:], h[:])
	return string(out[:])
}

// SameHash compares two stored hashes in constant time.
func SameHash(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// Hint is the harmless part of a credential shown in lists: its prefix, first and last four
// characters.
func Hint(s string) string {
	if len(s) < 16 {
		return "…"
	}
	i := strings.Index(s, "_") + 1
	return s[:i+4] + "…" + s[len(s)-4:]
}

// checksum is a credential's last digits: the CRC-32 of its kind and body in base62, six digits
// (62^6 > 2^32). It is computed on every call that carries a credential, so with one allocation
// (the bytes crc32 reads escape to the heap) and no big.Int.
func checksum(kind, body string) [checksumLen]byte {
	n := crc32.ChecksumIEEE(append(append(make([]byte, 0, len(kind)+len(body)), kind...), body...))
	var out [checksumLen]byte
	for i := checksumLen - 1; i >= 0; i-- {
		out[i] = base62[n%62]
		n /= 62
	}
	return out
}

func encode62(n *big.Int, width int) string {
	out := make([]byte, width)
	base, mod := big.NewInt(62), new(big.Int)
	for i := width - 1; i >= 0; i-- {
		n.DivMod(n, base, mod)
		out[i] = base62[mod.Int64()]
	}
	return string(out)
}

// idLen and idAlphabet describe the random part of an id: 10 bytes in lower-case base32.
const (
	idLen      = 16
	idAlphabet = "abcdefghijklmnopqrstuvwxyz234567"
)

// NewID returns a random, URL-safe identifier with a prefix naming what it identifies.
func NewID(prefix string) string {
	var b [idLen * 5 / 8]byte
	rand.Read(b[:])
	return prefix + "_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

// PasswordHasher hashes passwords with argon2id.
type PasswordHasher struct {
	Time    uint32 // iterations
	Memory  uint32 // KiB
	Threads uint8
}

// DefaultPasswordHasher follows OWASP's argon2id baseline (19 MiB, 2 iterations, 1 thread).
var DefaultPasswordHasher = PasswordHasher{Time: 2, Memory: 19 * 1024, Threads: 1}

// Hash returns the PHC string of the password: $argon2id$v=19$m=…,t=…,p=…$salt$hash.
func (h PasswordHasher) Hash(password string) string {
	salt := make([]byte, 16)
	rand.Read(salt)
	return h.encode(salt, argon2.IDKey([]byte(password), salt, h.Time, h.Memory, h.Threads, 32))
}

// encode writes a salt and sum in the PHC string of h's parameters.
func (h PasswordHasher) encode(salt, sum []byte) string {
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, h.Memory, h.Time, h.Threads, b64.EncodeToString(salt), b64.EncodeToString(sum))
}

// decoy returns a password hash with h's parameters for HashGate.Matches to verify against when
// there is no account. It is built, not computed, so that it costs no hash of its own; its salt
// and sum are zeros, and its answer is ignored anyway.
func (h PasswordHasher) decoy() string { return h.encode(make([]byte, 16), make([]byte, 32)) }

var errBadHash = errors.New("access: malformed password hash")

// Verify checks a password against a PHC string, in constant time, with the parameters the
// string records.
func (PasswordHasher) Verify(password, encoded string) (bool, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, errBadHash
	}
	var (
		m, t uint32
		p    uint8
	)
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil {
		return false, errBadHash
	}
	b64 := base64.RawStdEncoding
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return false, errBadHash
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil {
		return false, errBadHash
	}
	got := argon2.IDKey([]byte(password), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// DefaultHashConcurrency is how many password hashes a server computes at once unless told
// otherwise: two of DefaultPasswordHasher's hold 38 MiB, and on a small machine two cores' worth
// of argon2id is all the CPU that sign-ins should take from the API.
const DefaultHashConcurrency = 2

// HashGate bounds how many password hashes are computed at once, and the memory they leave behind.
//
// Each argon2id computation allocates its whole memory parameter (19 MiB for
// DefaultPasswordHasher) and holds it until it ends, so without a bound the memory of a server
// grows with the number of concurrent sign-ins: 50 of them took 1 GB. With one gate shared by
// every service that hashes, at most n hashes hold their memory at once, however many attempts
// arrive; the others wait their turn, for as long as their request's context allows.
//
// That alone is not flat enough: each finished hash leaves its 19 MiB as garbage, and the
// collector, paced by GOGC (400 in serve, for latency), lets garbage pile up to five times the
// live heap, which the hashes in flight inflate: 50 sign-ins through two slots still peaked at
// 253 MB. So once the hashes finished since the collector last ran add up to another n hashes'
// memory, the hash that got there runs a collection before it gives its slot back, unless the
// collector ran meanwhile of its own accord; no new hash allocates until the old ones' memory can
// be reused, and the peak stays near 3n times the memory parameter over the live heap (about 100
// MB for the default). A collection of a small heap costs little next to one argon2id hash.
//
// A nil *HashGate bounds nothing: tools that hash one password at a time use it.
type HashGate struct {
	slots    chan struct{}
	computed atomic.Int64
	waiting  atomic.Int64

	garbage    atomic.Int64  // bytes the hashes finished since the collector last ran left behind
	cycles     atomic.Uint64 // the collector's cycle count when garbage was last reset
	collecting atomic.Bool
}

// NewHashGate returns a gate that lets n hashes be computed at once; n < 1 counts as 1.
func NewHashGate(n int) *HashGate {
	return &HashGate{slots: make(chan struct{}, max(n, 1))}
}

// Hash is h.Hash(password) once the gate lets it through. It returns ECodeTimeout when ctx ends
// first.
func (g *HashGate) Hash(ctx context.Context, h PasswordHasher, password string) (string, error) {
	if err := g.enter(ctx); err != nil {
		return "", err
	}
	defer g.leave(h)
	return h.Hash(password), nil
}

// Verify is h.Verify(password, encoded) once the gate lets it through. It returns ECodeTimeout
// when ctx ends first.
func (g *HashGate) Verify(ctx context.Context, h PasswordHasher, password, encoded string) (bool, error) {
	if err := g.enter(ctx); err != nil {
		return false, err
	}
	// The memory of the hash is encoded's; it is h's too unless the parameters changed since.
	defer g.leave(h)
	return h.Verify(password, encoded)
}

// Matches verifies password against stored, a password hash, once the gate lets it through. With
// stored "" (there is no account) it verifies against h's decoy instead and reports false, so that
// an unknown name costs the same one argon2id computation as a known one with a wrong password.
func (g *HashGate) Matches(ctx context.Context, h PasswordHasher, password, stored string) (bool, error) {
	if stored == "" {
		_, err := g.Verify(ctx, h, password, h.decoy())
		return false, err
	}
	return g.Verify(ctx, h, password, stored)
}

// Computed returns how many hashes the gate let through: each one argon2id computation.
func (g *HashGate) Computed() int64 { return g.computed.Load() }

// Waiting returns how many hashes wait for the gate now.
func (g *HashGate) Waiting() int64 { return g.waiting.Load() }

func (g *HashGate) enter(ctx context.Context) error {
	if g == nil {
		return nil
	}
	if ctx.Err() != nil {
		return g.timeout(ctx)
	}
	select {
	case g.slots <- struct{}{}:
	default:
		g.waiting.Add(1)
		defer g.waiting.Add(-1)
		select {
		case g.slots <- struct{}{}:
		case <-ctx.Done():
			return g.timeout(ctx)
		}
	}
	g.computed.Add(1)
	return nil
}

func (g *HashGate) timeout(ctx context.Context) error {
	return &flightgraph.Error{Code: flightgraph.ECodeTimeout, Message: "The request ran out of time waiting to check the password.", Err: ctx.Err()}
}

// leave frees the slot of a hash by h. When the garbage of the hashes reaches another n hashes'
// memory, it first collects it, holding the slot meanwhile, so that no new hash allocates before
// the old ones' memory can be reused.
func (g *HashGate) leave(h PasswordHasher) {
	if g == nil {
		return
	}
	defer func() { <-g.slots }()
	perHash := int64(h.Memory) << 10
	if g.garbage.Add(perHash) < int64(cap(g.slots))*perHash || !g.collecting.CompareAndSwap(false, true) {
		return
	}
	defer g.collecting.Store(false)
	g.garbage.Store(0)
	if gcCycles() == g.cycles.Load() {
		runtime.GC()
	}
	g.cycles.Store(gcCycles())
}

// gcCycles returns how many collections the runtime completed.
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
