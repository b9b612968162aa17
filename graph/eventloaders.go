package graph

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// eventLoadersTTL is how long the loaders of one event are kept for the subscribers that resolve
// it: they all do within milliseconds of each other; one that comes later (a slow client, a
// replay) reads the flight again, as it is then.
const eventLoadersTTL = 5 * time.Second

// sharedReadTimeout bounds a read of the shared loaders, which no one subscriber's context
// cancels.
const sharedReadTimeout = 10 * time.Second

// eventLoaders share the reads of a subscription event's answer among the subscribers of this
// replica that resolve it: the first subscriber of an event reads its flight (and what its
// selection asks of it), the others find it read. The loaders of one event are keyed by its
// position and by the fields the operation selects (the prefetch plan), so that a subscriber is
// served the hops its own selection needs, read after the event was recorded: the flight as
// it is once the event is made.
//
// Only the flight's own data is shared: the flights, legs, places, carriers and the fleet,
// which are the same for every caller. What a caller may see of them is decided as each
// subscriber's answer executes, by its own view of the schema and the directives, as for any
// request; no store that reads per caller (the portal's, offers, carts) is given to them.
type eventLoaders struct {
	st   Stores // the stores read the same for every caller: the shared loaders'
	all  Stores // every store: an answer's own loaders'
	wait time.Duration

	mu        sync.Mutex
	m         map[eventKey]*eventEntry
	lastSweep time.Time
}

type eventKey struct {
	position int64
	fields   string
}

type eventEntry struct {
	l  *Loaders
	at time.Time
}

func newEventLoaders(st Stores, wait time.Duration) *eventLoaders {
	return &eventLoaders{st: Stores{Flights: st.Flights, Places: st.Places, Aircraft: st.Aircraft, Network: st.Network, Now: st.Now}, all: st, wait: wait,
		m: map[eventKey]*eventEntry{}}
}

// get returns the loaders of the event at position for the operations selecting fields (their
// key fieldsKey), made by the first that asks.
func (e *eventLoaders) get(position int64, fieldsKey string, fields map[string]bool) *Loaders {
	now := time.Now()
	k := eventKey{position, fieldsKey}
	e.mu.Lock()
	defer e.mu.Unlock()
	if now.Sub(e.lastSweep) > eventLoadersTTL/2 {
		for k, v := range e.m {
			if now.Sub(v.at) > eventLoadersTTL {
				delete(e.m, k)
			}
		}
		e.lastSweep = now
	}
	if v := e.m[k]; v != nil && now.Sub(v.at) <= eventLoadersTTL {
		return v.l
	}
	l := NewLoaders(e.st, e.wait)
	l.fields = fields
	// A batch reads for every subscriber of the event: the one whose load started it may leave
	// meanwhile, and its leaving must not fail the others' (nor be kept as the event's answer).
	for _, d := range []interface{ detached() }{l.Flight, l.Legs, l.Airport, l.City, l.Country, l.CityPorts, l.Carrier, l.Route, l.Aircraft, l.Cabins, l.Amenities} {
		d.detached()
	}
	e.m[k] = &eventEntry{l: l, at: now}
	return l
}

// eventSlot stands for the loaders in the context of one answer of a subscription: the event's
// shared loaders once the event's resolver named it (ForEvent), loaders of the answer's own
// before.
type eventSlot struct {
	shared *eventLoaders
	fields map[string]bool
	key    string
	cur    atomic.Pointer[Loaders]
}

func (s *eventSlot) loaders() *Loaders {
	if l := s.cur.Load(); l != nil {
		return l
	}
	l := NewLoaders(s.shared.all, s.shared.wait)
	l.fields = s.fields
	if s.cur.CompareAndSwap(nil, l) {
		return l
	}
	return s.cur.Load()
}

// withEventSlot returns the context of one answer of a subscription whose operation runs with
// the request's loaders req.
func withEventSlot(ctx context.Context, shared *eventLoaders, req *Loaders) context.Context {
	return context.WithValue(ctx, loadersKey{}, &eventSlot{shared: shared, fields: req.fields, key: req.fieldsKey()})
}

// ForEvent returns the loaders the answer of ctx reads the event at position with: on a
// subscription's answer, those shared by every subscriber of this replica that resolves the
// event with the same selection; elsewhere the request's (For).
func ForEvent(ctx context.Context, position int64) *Loaders {
	s, ok := ctx.Value(loadersKey{}).(*eventSlot)
	if !ok {
		return For(ctx)
	}
	l := s.shared.get(position, s.key, s.fields)
	s.cur.Store(l)
	return l
}

// fieldsKey is the operation's selected fields as one string, the same for the same selection.
func (l *Loaders) fieldsKey() string {
	l.keyOnce.Do(func() {
		if l.fields == nil {
			l.key = "*"
			return
		}
		fs := make([]string, 0, len(l.fields))
		for f := range l.fields {
			fs = append(fs, f)
		}
		slices.Sort(fs)
		l.key = strings.Join(fs, " ")
	})
	return l.key
}
