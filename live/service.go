package live

import (
	"cmp"
	"context"
	"sync"
	"time"

	"github.com/flightgraph/flightgraph"
)

// Defaults of a Service's bounds.
const (
	DefaultPerAddress   = 100
	DefaultRecheckEvery = 250 * time.Millisecond
	// PerKeyPerSecond is how many subscriptions a key may hold open for each call a second its
	// plan allows (the Default plan's 5/s: 10), from MinPerKey to MaxPerKey.
	PerKeyPerSecond = 2
	MinPerKey       = 10
	MaxPerKey       = 1000
	// MaxFlightIDs is how many flights one subscription by ids may follow (GraphQL's
	// flightStatusChanged and REST's flightIds alike).
	MaxFlightIDs = 100
)

// Product is the API whose credential opens a subscription.
const Product = "flightstatus"

// Service opens the subscriptions of the edges (GraphQL and REST) over a Hub: it holds each to
// the caps on concurrent subscriptions of its key and its client address, and checks its
// credential again every RecheckEvery, ending it with ECodeSubscriptionRevoked within that
// when the credential no longer opens the API.
type Service struct {
	Hub *Hub
	// Recheck reports whether the request of ctx may still call the product (access.Guard's
	// StillAdmitted); nil checks nothing.
	Recheck      func(ctx context.Context, product string) error
	RecheckEvery time.Duration
	PerAddress   int // DefaultPerAddress when 0

	mu        sync.Mutex
	byKey     map[string]int
	byAddress map[string]int
}

// SetPerAddress changes the cap per client address while subscriptions are served (0: the default).
func (s *Service) SetPerAddress(n int) {
	s.mu.Lock()
	s.PerAddress = n
	s.mu.Unlock()
}

// perKey is the cap of a caller's key, from its plan's calls a second.
func perKey(c *flightgraph.Caller) int {
	if e := c.Products[Product]; e != nil && e.Plan != nil {
		return min(max(int(e.Plan.PerSecond)*PerKeyPerSecond, MinPerKey), MaxPerKey)
	}
	return MinPerKey
}

// take holds a place for a subscription of the caller of ctx, or refuses it with ECodeTooManyStreams.
func (s *Service) take(ctx context.Context) (func(), error) {
	caller := flightgraph.CallerFromContext(ctx)
	key := caller.KeyID
	if key == "" {
		key = "app:" + caller.ApplicationID
	}
	addr := flightgraph.ClientAddressFromContext(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byKey == nil {
		s.byKey, s.byAddress = map[string]int{}, map[string]int{}
	}
	if n := perKey(caller); s.byKey[key] >= n {
		return nil, flightgraph.Errorf(flightgraph.ECodeTooManyStreams, "the key has %d subscriptions open on this replica, as many as its plan allows", n)
	}
	if n := cmp.Or(s.PerAddress, DefaultPerAddress); s.byAddress[addr] >= n {
		return nil, flightgraph.Errorf(flightgraph.ECodeTooManyStreams, "the client address has %d subscriptions open on this replica, as many as it may", n)
	}
	s.byKey[key]++
	s.byAddress[addr]++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.byKey[key]--; s.byKey[key] <= 0 {
				delete(s.byKey, key)
			}
			if s.byAddress[addr]--; s.byAddress[addr] <= 0 {
				delete(s.byAddress, addr)
			}
		})
	}, nil
}

// Subscribe opens a subscription of f after the position after ("" for the live stream only) for
// the caller of ctx; see Hub.Subscribe. It returns ECodeBadFormat for a malformed position,
// ECodePositionExpired, ECodeTooManyStreams.
func (s *Service) Subscribe(ctx context.Context, f Filter, after string) (<-chan *flightgraph.FlightEvent, error) {
	pos, err := flightgraph.ParsePosition("after", after)
	if err != nil {
		return nil, err
	}
	release, err := s.take(ctx)
	if err != nil {
		return nil, err
	}
	ch, cut, err := s.Hub.Subscribe(ctx, f, pos)
	if err != nil {
		release()
		return nil, err
	}
	out := make(chan *flightgraph.FlightEvent)
	go func() {
		defer close(out)
		defer release()
		var tick <-chan time.Time
		if s.Recheck != nil {
			t := time.NewTicker(cmp.Or(s.RecheckEvery, DefaultRecheckEvery))
			defer t.Stop()
			tick = t.C
		}
		for {
			select {
			case e, ok := <-ch:
				if !ok {
					return
				}
				select {
				case out <- e:
				case <-ctx.Done():
					return
				}
			case <-tick:
				if err := s.Recheck(ctx, Product); flightgraph.ErrorCode(err) == flightgraph.ECodeSubscriptionRevoked {
					cut(err)
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}
