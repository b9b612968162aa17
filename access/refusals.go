package access

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/flightgraph/flightgraph"
)

// DefaultRefusalsPerSecond is how many refused requests a second a client address may send, per
// replica, before it is refused at once.
const DefaultRefusalsPerSecond = 20

// Refusals bounds the work a replica does for requests it refuses, per client address. A refused
// request charges no API, so no plan limits it, yet it cost work: a credential that is not in the
// guard's cache is a database lookup (an unknown key, token or OAuth client costs one every time),
// and a document is read and parsed before it is refused. Both count against the client address,
// in a window of a second:
//
//   - a credential lookup takes a place before it starts (Reserve), and gives it back when the
//     credential authenticates, so lookups in flight count too and a burst cannot slip past;
//   - a request without credentials is refused at once when the address's second is full
//     (Check), and counts when it was refused (Count).
//
// A credential the guard has cached costs nothing to check and is never held back, so a valid key
// or token keeps working when others at its address (a NAT, a proxy) send garbage. A request whose
// credential authenticated never counts: its refusals are its plan's business, or the portal's.
//
// It counts in process: the bound is per replica, which is what the work is. A nil Refusals bounds
// nothing.
type Refusals struct {
	limits flightgraph.Limits
	window *MemoryLimiter
}

// NewRefusals returns Refusals of perSecond refused requests a second per client address
// (DefaultRefusalsPerSecond when 0 or less), reading the time from now.
func NewRefusals(perSecond int, now func() time.Time) *Refusals {
	if perSecond <= 0 {
		perSecond = DefaultRefusalsPerSecond
	}
	return &Refusals{limits: flightgraph.Limits{PerSecond: perSecond}, window: NewMemoryLimiter(nil, now)}
}

// Reserve takes a place for a credential lookup from address, or refuses the request with
// ECodePerSecondLimit and the wait when the address's second is full. done ends the lookup:
// refused keeps the place (the lookup found nothing), otherwise it is given back.
func (f *Refusals) Reserve(address string) (done func(refused bool), _ *flightgraph.Error) {
	if f == nil {
		return func(bool) {}, nil
	}
	name := refusalName(address)
	at, d, ok := f.window.reserve(name, f.limits)
	if !ok {
		return nil, f.tooMany(d.RetryAfter)
	}
	return func(refused bool) { f.window.settle(name, at, refused) }, nil
}

// Check refuses, with ECodePerSecondLimit and the wait, a request from an address whose refused
// requests fill their second.
func (f *Refusals) Check(address string) *flightgraph.Error {
	if f == nil {
		return nil
	}
	if wait := f.window.waits(refusalName(address), f.limits); wait > 0 {
		return f.tooMany(wait)
	}
	return nil
}

// Count counts one refused request from address.
func (f *Refusals) Count(address string) {
	if f == nil {
		return
	}
	// A full window refuses without counting, which changes nothing: it is full already.
	if at, _, ok := f.window.reserve(refusalName(address), f.limits); ok {
		f.window.settle(refusalName(address), at, true)
	}
}

func (f *Refusals) tooMany(wait time.Duration) *flightgraph.Error {
	return &flightgraph.Error{Code: flightgraph.ECodePerSecondLimit, RetryAfter: wait,
		Message: fmt.Sprintf("over %d refused requests in a second from this address; retry after %d s", f.limits.PerSecond, flightgraph.Seconds(wait))}
}

func refusalName(address string) string { return "refused:" + address }

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
