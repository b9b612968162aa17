package access

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/flightgraph/flightgraph"
)

// DefaultRefusalsPerSecond is how many refused requests a second a client address may send, per
// replica, before it is refused at once; DefaultAccountRefusalsPerSecond the same of an account.
const (
	DefaultRefusalsPerSecond        = 20
	DefaultAccountRefusalsPerSecond = 10
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
//   - per account: a caller whose credential authenticated lately skips the address's window
//     (so that a NAT neighbour's garbage never locks it out), and its refusals count against its
//     account instead (CountAccount); an account over them is refused before its credential is
//     looked up or its request read (CheckAccount).
//
// Credentials that authenticated lately are remembered by hash, with their account, for
// RecentFor; one that fails is forgotten, and needs a place again.
//
// It counts in process: the bound is per replica, which is what the work is. A nil Refusals
// bounds nothing.
type Refusals struct {
	address, account flightgraph.Limits
	window           *MemoryLimiter
	recent           *expirable.LRU[string, string] // credential hash → account id
}

// RecentFor is how long a credential that authenticated is spared the address's window, and
// RecentMax how many are remembered.
const (
	RecentFor = 10 * time.Minute
	RecentMax = 100_000
)

// NewRefusals returns Refusals of perSecond refused requests a second per client address
// (DefaultRefusalsPerSecond when 0 or less) and DefaultAccountRefusalsPerSecond per account,
// reading the time from now.
func NewRefusals(perSecond int, now func() time.Time) *Refusals {
	if perSecond <= 0 {
		perSecond = DefaultRefusalsPerSecond
	}
	account := min(DefaultAccountRefusalsPerSecond, perSecond)
	if perSecond > DefaultRefusalsPerSecond {
		account = perSecond // a test's generous bound is generous for accounts too
	}
	return &Refusals{address: flightgraph.Limits{PerSecond: perSecond}, account: flightgraph.Limits{PerSecond: account},
		window: NewMemoryLimiter(nil, now), recent: expirable.NewLRU[string, string](RecentMax, nil, RecentFor)}
}

// Reserve takes a place in the client address's second for a request's work, or refuses it with
// ECodePerSecondLimit and the wait when the second is full. done ends the work: refused keeps the
// place, otherwise it is given back.
func (f *Refusals) Reserve(address string) (done func(refused bool), _ *flightgraph.Error) {
	if f == nil {
		return func(bool) {}, nil
	}
	name := "refused:address:" + address
	at, d, ok := f.window.reserve(name, f.address)
	if !ok {
		return nil, tooManyRefused(d.RetryAfter, f.address.PerSecond, "from this address")
	}
	return func(refused bool) { f.window.settle(name, at, refused) }, nil
}

// Recent returns the account of a credential, by its hash, that authenticated lately.
func (f *Refusals) Recent(hash string) (account string, ok bool) {
	if f == nil || hash == "" {
		return "", false
	}
	return f.recent.Get(hash)
}

// Authenticated remembers that the credential of hash authenticated, for account; failed forgets
// it.
func (f *Refusals) Authenticated(hash, account string) {
	if f != nil && hash != "" {
		f.recent.Add(hash, account)
	}
}

// Failed forgets a credential that did not authenticate: it needs a place again.
func (f *Refusals) Failed(hash string) {
	if f != nil && hash != "" {
		f.recent.Remove(hash)
	}
}

// CheckAccount refuses, with ECodePerSecondLimit and the wait, a request of an account whose
// refusals fill their second.
func (f *Refusals) CheckAccount(account string) *flightgraph.Error {
	if f == nil || account == "" {
		return nil
	}
	if wait := f.window.waits("refused:account:"+account, f.account); wait > 0 {
		return tooManyRefused(wait, f.account.PerSecond, "for this account")
	}
	return nil
}

// CountAccount counts one refused request of an account.
func (f *Refusals) CountAccount(account string) {
	if f == nil || account == "" {
		return
	}
	name := "refused:account:" + account
	// A full window refuses without counting, which changes nothing: it is full already.
	if at, _, ok := f.window.reserve(name, f.account); ok {
		f.window.settle(name, at, true)
	}
}

func tooManyRefused(wait time.Duration, n int, of string) *flightgraph.Error {
	return &flightgraph.Error{Code: flightgraph.ECodePerSecondLimit, RetryAfter: wait,
		Message: fmt.Sprintf("over %d refused requests in a second %s; retry after %d s", n, of, flightgraph.Seconds(wait))}
}

// refused reports whether a request that was served by next was refused: nothing was admitted
// and the answer is an error, other than a limit's 429 (which its limit counted). An answer of
// 200 with errors (a persisted query the cache does not hold) asks the client to go on.
func refused(pass *Pass, status int) bool {
	return !pass.served() && status >= http.StatusBadRequest && status != http.StatusTooManyRequests
}

// clientAddress names the client of a request by its connection's address: the host, and for
// IPv6 its /64, which one subscriber commonly holds whole (X-Forwarded-For is not trusted).
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if a, err := netip.ParseAddr(host); err == nil && a.Is6() && !a.Is4In6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return host
}
