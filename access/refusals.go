package access

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/flightgraph/flightgraph"
)

// Refusals bounds the work a replica does for requests it then refuses. A refused request charges
// no API, so no plan limits it, yet it was read, authenticated (an unknown key is a database
// lookup) and parsed and validated before it was refused: a caller sending nothing but refused
// requests would otherwise keep the cores busy. Each refusal counts against its caller, the
// portal account behind its credential or else its client address, under the uncharged limits
// per second; a caller with that many refusals in the last second is refused at once, before
// its credential is looked up or its body read, until the oldest leaves the second.
//
// It counts in process: the bound is per replica, which is what the work is. A nil Refusals
// bounds nothing.
type Refusals struct {
	limits UnchargedLimits
	window *MemoryLimiter
}

// NewRefusals returns Refusals under limits (DefaultUncharged's where limits has none), reading
// the time from now.
func NewRefusals(limits UnchargedLimits, now func() time.Time) *Refusals {
	return &Refusals{limits: limits, window: NewMemoryLimiter(nil, now)}
}

// Check refuses, with ECodePerSecondLimit and the wait, a request of a caller whose refusals fill
// their second: the account's when account is not "", else the client address's.
func (f *Refusals) Check(address, account string) *flightgraph.Error {
	if f == nil {
		return nil
	}
	name, limits := f.name(address, account)
	wait := f.window.waits(name, limits)
	if wait <= 0 {
		return nil
	}
	return &flightgraph.Error{Code: flightgraph.ECodePerSecondLimit, RetryAfter: wait,
		Message: fmt.Sprintf("over %d refused requests in a second; retry after %d s", limits.PerSecond, flightgraph.Seconds(wait))}
}

// Count counts one refused request: against the account when there is one, else against the
// client address.
func (f *Refusals) Count(address, account string) {
	if f == nil {
		return
	}
	name, limits := f.name(address, account)
	// A full window refuses without counting, which changes nothing: it is full already.
	f.window.Admit(context.Background(), name, limits)
}

func (f *Refusals) name(address, account string) (string, flightgraph.Limits) {
	if account != "" {
		return AccountUncharged(account, f.limits)
	}
	return AddressUncharged(address, f.limits)
}

// clientAddress is the host of the request's remote address: the name of an anonymous caller.
func clientAddress(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}
