package access

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/flightgraph/flightgraph"
)

// DefaultRefusalsPerSecond is how many refused requests a second a client address may send, per
// replica, before it is refused at once; DefaultCredentialRefusalsPerSecond the same of one
// credential that authenticated.
const (
	DefaultRefusalsPerSecond           = 20
	DefaultCredentialRefusalsPerSecond = 10
)

// Refusals bounds the work a replica does for requests it refuses. A refused request charges no
// API, so no plan limits it, yet it cost work: a credential is a database lookup (an unknown key,
// token, session or OAuth client costs one every time), and a document is read and parsed before
// it is refused. In windows of a second:
//
//   - per client address: a request that names no credential, or one that has not authenticated
//     lately, takes a place before any work, and gives it back when it authenticates, or, without
//     a credential, when it is served (Reserve). A burst sent at once cannot slip past, and a
//     lookup that is abandoned (the client left, the database failed) keeps its place;
//   - per credential: one that authenticated lately skips the address's window (so that a NAT
//     neighbour's garbage never locks it out) and takes its place in its own window instead,
//     before it is looked up (ReserveCredential), given back when its request was not refused.
//     Nobody else's refusals can fill a credential's window: a key, token or session is its
//     holder's alone.
//
// In either window, a request that finds it full of places held by requests still at work waits
// for one of them to end rather than being refused (Reserve): only refusals refuse.
//
// Credentials that authenticated lately are remembered by the hash of their canonical form
// (CredentialHash), issued tokens from their issue; one that is refused is forgotten, and needs a
// place again.
//
// It counts in process: the bound is per replica, which is what the work is. A nil Refusals
// bounds nothing.
type Refusals struct {
	address, credential flightgraph.Limits
	window              *MemoryLimiter
	now                 func() time.Time
	recent              *lru.Cache[string, time.Time] // credential hash → when it authenticated
}

// RecentFor is how long a credential that authenticated is spared the address's window, and
// RecentMax how many are remembered.
const (
	RecentFor = 10 * time.Minute
	RecentMax = 100_000
)

// RefusalLimits are how many refused requests a second a client address, and one credential that
// authenticated lately, may have; zero fields take the defaults.
type RefusalLimits struct {
	PerAddress, PerCredential int
}

// NewRefusals returns Refusals under limits, reading the time from now.
func NewRefusals(limits RefusalLimits, now func() time.Time) *Refusals {
	recent, _ := lru.New[string, time.Time](RecentMax)
	return &Refusals{address: flightgraph.Limits{PerSecond: cmp.Or(limits.PerAddress, DefaultRefusalsPerSecond)},
		credential: flightgraph.Limits{PerSecond: cmp.Or(limits.PerCredential, DefaultCredentialRefusalsPerSecond)},
		window:     NewMemoryLimiter(nil, now), now: now, recent: recent}
}

// Reserve takes a place for a request's work: in the window of its credential (by hash) when that
// authenticated lately, else in its client address's; or refuses the request with
// ECodePerSecondLimit and the wait when the window is full. done ends the work: refused keeps the
// place, otherwise it is given back.
//
// A window full of places still held by requests at work (not yet refused or given back) is no
// refusal yet: the request waits, up to RefusalWait or until ctx is done, for one of them to end
// (see reserve).
func (f *Refusals) Reserve(ctx context.Context, address, hash string) (done func(refused bool), _ *flightgraph.Error) {
	if f == nil {
		return func(bool) {}, nil
	}
	if f.Recent(hash) {
		return f.ReserveCredential(ctx, hash)
	}
	return f.reserve(ctx, "refused:address:"+address, f.address, "from this address")
}

// RefusalWait is how long a request waits for a place in a refusals window that is full of the
// places of requests still at work.
const RefusalWait = time.Second

// reserve takes a place in the window of name. The window holds the places of the requests at
// work as well as those of the refused ones, so that a burst sent at once cannot slip past; but
// only refusals may refuse. A request that finds the window full while some of its places are
// held by requests at work waits until one of them ends: given back, it leaves room; kept (that
// request was refused), the window holds one more refusal. So a client that sends many
// requests at once with one credential (a closed-loop load of 50 clients sharing a key) is not
// refused for its own calls in flight, while a burst of refused ones still does at most the
// window's work a second: the others wait for those to end and are refused then.
func (f *Refusals) reserve(ctx context.Context, name string, limits flightgraph.Limits, of string) (func(bool), *flightgraph.Error) {
	var timeout <-chan time.Time
	for {
		at, d, ok, freed := f.window.reserveOrWait(name, limits, 1, true)
		if ok {
			return func(refused bool) { f.window.settle(name, at, 1, refused) }, nil
		}
		if freed == nil {
			return nil, tooManyRefused(d.RetryAfter, limits.PerSecond, of)
		}
		if timeout == nil {
			t := time.NewTimer(RefusalWait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-freed:
		case <-timeout:
			return nil, tooManyRefused(d.RetryAfter, limits.PerSecond, of)
		case <-ctx.Done():
			return nil, tooManyRefused(d.RetryAfter, limits.PerSecond, of)
		}
	}
}

// CountAddress counts one refused request from address that took no place before its work.
func (f *Refusals) CountAddress(address string) {
	if done, err := f.Reserve(context.Background(), address, ""); err == nil {
		done(true)
	}
}

// Recent reports whether the credential of hash authenticated lately.
func (f *Refusals) Recent(hash string) bool {
	if f == nil || hash == "" {
		return false
	}
	at, ok := f.recent.Get(hash)
	return ok && f.now().Sub(at) < RecentFor
}

// Authenticated remembers that the credential of hash authenticated, or was issued, now.
func (f *Refusals) Authenticated(hash string) {
	if f != nil && hash != "" {
		f.recent.Add(hash, f.now())
	}
}

// Failed forgets a credential that was refused: it needs a place again.
func (f *Refusals) Failed(hash string) {
	if f != nil && hash != "" {
		f.recent.Remove(hash)
	}
}

// ReserveCredential is Reserve in the window of a credential that authenticated, by its hash.
func (f *Refusals) ReserveCredential(ctx context.Context, hash string) (done func(refused bool), _ *flightgraph.Error) {
	if f == nil {
		return func(bool) {}, nil
	}
	return f.reserve(ctx, "refused:credential:"+hash, f.credential, "with this credential")
}

// CredentialHash is the hash a credential is remembered by: of its value, whatever the header's
// spelling (an api-key, a bearer token), or of an OAuth client's id and secret once decoded.
func CredentialHash(parts ...string) string {
	return HashCredential(strings.Join(parts, ":"))
}

func tooManyRefused(wait time.Duration, n int, of string) *flightgraph.Error {
	return &flightgraph.Error{Code: flightgraph.ECodePerSecondLimit, RetryAfter: wait,
		Message: fmt.Sprintf("over %d refused requests in a second %s; retry after %d s", n, of, flightgraph.Seconds(wait))}
}

// refused reports whether a request that was served by next was refused: one marked so
// (Refused), or one that had nothing admitted and answered an error, other than a plan's 429,
// which its limit counted. A session's 429 does count: its calls are all uncharged, and a session
// is looked up on every request.
func refused(pass *Pass, status int) bool {
	pass.mu.Lock()
	marked := pass.refused
	pass.mu.Unlock()
	return marked || !pass.served() && status >= http.StatusBadRequest &&
		(status != http.StatusTooManyRequests || pass.Caller.Kind == flightgraph.CallerSession)
}

// Refused marks the request of ctx as refused whatever its answer's status, for an answer that
// must be a success on the wire yet did no work for the caller: a persisted query the cache does
// not hold answers 200 (Apollo clients resend the document only then), and a client could
// otherwise send such misses without end, neither refused nor charged. It keeps its place in the
// refusals' window of its address or credential, as any refusal does.
func Refused(ctx context.Context) {
	if p := PassFromContext(ctx); p != nil {
		p.mu.Lock()
		p.refused = true
		p.mu.Unlock()
	}
}

// clientAddress names the client of a request by its connection's address (ClientAddress).
func clientAddress(r *http.Request) string { return ClientAddress(r.RemoteAddr) }

// ClientAddress names a client by its connection's remote address (host:port, as net.Conn's
// RemoteAddr and http.Request's RemoteAddr spell it): the host, and for IPv6 its /64, which one
// subscriber commonly holds whole (X-Forwarded-For is not trusted). It is the one rule that every
// per-address bound uses: the guard's and the token endpoint's, and the API listener's cap on
// connections (server.ConnLimits).
func ClientAddress(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	if a, err := netip.ParseAddr(host); err == nil && a.Is6() && !a.Is4In6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return host
}
