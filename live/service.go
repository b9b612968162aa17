package live

import (
	"cmp"
	"context"
	"fmt"
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
	// recheckWorkers is how many credentials a sweep checks at once: a check that reads the
	// store (its cache entry expired) must not hold up the others' past the bound.
	recheckWorkers = 8
)

// Product is the API whose credential opens a subscription.
const Product = "flightstatus"

// Service opens the subscriptions of the edges (GraphQL and REST) over a Hub: it holds each to
// the caps on concurrent subscriptions of its key and its client address, and checks the
// credentials of the open ones again every RecheckEvery, ending those of a credential that no
// longer opens the API with ECodeSubscriptionRevoked within that.
//
// One sweeper does the checks for the whole Service, and the subscriptions of one credential
// (Credential) share one check: the cost of a sweep grows with the credentials that hold
// subscriptions open, not with the subscriptions. It runs only while some are open.
type Service struct {
	Hub *Hub
	// Recheck reports whether the request of ctx may still call the product (access.Guard's
	// StillAdmitted); nil checks nothing.
	Recheck func(ctx context.Context, product string) error
	// Credential names the credential of ctx's request (access.CredentialOf): subscriptions
	// with the same name are checked once for all. nil, or "", checks each on its own.
	Credential   func(ctx context.Context) string
	RecheckEvery time.Duration
	PerAddress   int // DefaultPerAddress when 0
	// PerKey, when set, is the cap of every key instead of its plan's (perKey).
	PerKey int

	mu        sync.Mutex
	byKey     map[string]int
	byAddress map[string]int
	checks    map[string]*check // the open subscriptions by credential, for the sweeper
	sweeping  bool
}

// check is the open subscriptions of one credential.
type check struct {
	subs map[*held]struct{}
}

// held is one open subscription as the sweeper sees it: the context to check its credential
// with, and how to end it (nil until the hub has it).
type held struct {
	ctx context.Context
	cut func(error)
}

// SetPerAddress changes the cap per client address while subscriptions are served (0: the default).
func (s *Service) SetPerAddress(n int) {
	s.mu.Lock()
	s.PerAddress = n
	s.mu.Unlock()
}

// SetPerKey changes the cap per key while subscriptions are served (0: each key's plan's).
func (s *Service) SetPerKey(n int) {
	s.mu.Lock()
	s.PerKey = n
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
	if n := cmp.Or(s.PerKey, perKey(caller)); s.byKey[key] >= n {
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
	if s.Recheck == nil {
		ch, _, err := s.Hub.subscribe(ctx, f, pos, nil, release)
		if err != nil {
			release()
			return nil, err
		}
		return ch, nil
	}
	// Held before the hub opens it, so that a stream that ends at once is let go of after.
	h := &held{ctx: ctx}
	cred := ""
	if s.Credential != nil {
		cred = s.Credential(ctx)
	}
	if cred == "" {
		cred = fmt.Sprintf("sub:%p", h)
	}
	s.hold(cred, h)
	// A stream cut or over is no longer checked, though a reader that does not read may hold it
	// open a while yet (its reason waits for it): its credential is let go of at once, its
	// place among the caps only when the stream is over.
	ch, cut, err := s.Hub.subscribe(ctx, f, pos, func() { s.letGo(cred, h) }, release)
	if err != nil {
		s.letGo(cred, h)
		release()
		return nil, err
	}
	s.mu.Lock()
	h.cut = cut
	s.mu.Unlock()
	return ch, nil
}

// hold adds h to the credential's check, and starts the sweeper if it is not running.
func (s *Service) hold(cred string, h *held) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.checks == nil {
		s.checks = map[string]*check{}
	}
	c := s.checks[cred]
	if c == nil {
		c = &check{subs: map[*held]struct{}{}}
		s.checks[cred] = c
	}
	c.subs[h] = struct{}{}
	if !s.sweeping {
		s.sweeping = true
		go s.sweep()
	}
}

func (s *Service) letGo(cred string, h *held) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.checks[cred]; c != nil {
		delete(c.subs, h)
		if len(c.subs) == 0 {
			delete(s.checks, cred)
		}
	}
}

// Checks is the number of credentials the sweeper checks each round.
func (s *Service) Checks() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.checks)
}

// sweep checks every credential that holds subscriptions open each RecheckEvery, until none does.
func (s *Service) sweep() {
	t := time.NewTicker(cmp.Or(s.RecheckEvery, DefaultRecheckEvery))
	defer t.Stop()
	type round struct {
		ctx  context.Context
		cuts []func(error)
	}
	var rounds []round
	for range t.C {
		s.mu.Lock()
		if len(s.checks) == 0 {
			s.sweeping = false
			s.mu.Unlock()
			return
		}
		rounds = rounds[:0]
		for _, c := range s.checks {
			r := round{}
			for h := range c.subs {
				if h.cut != nil {
					r.ctx = h.ctx
					r.cuts = append(r.cuts, h.cut)
				}
			}
			if r.ctx != nil {
				rounds = append(rounds, r)
			}
		}
		s.mu.Unlock()
		work := make(chan round)
		var wg sync.WaitGroup
		for range min(recheckWorkers, len(rounds)) {
			wg.Go(func() {
				for r := range work {
					if err := s.Recheck(r.ctx, Product); flightgraph.ErrorCode(err) == flightgraph.ECodeSubscriptionRevoked {
						for _, cut := range r.cuts {
							cut(err)
						}
					}
				}
			})
		}
		for _, r := range rounds {
			work <- r
		}
		close(work)
		wg.Wait()
	}
}
