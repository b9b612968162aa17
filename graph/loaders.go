package graph

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/graph-gophers/dataloader/v7"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/graph/model"
)

// DefaultLoaderWait is how long a loader collects keys before it queries. It is short because it
// adds to the latency of every level of a query that is not prefetched (see prefetch.go).
const DefaultLoaderWait = 200 * time.Microsecond

// readBackWait is how long the Offer and Cart loaders collect ids.
const readBackWait = time.Millisecond

// Stores are what the loaders read.
type Stores struct {
	Flights  flightgraph.FlightStore
	Places   flightgraph.PlaceStore
	Aircraft flightgraph.AircraftStore
	Network  flightgraph.NetworkStore
	Access   flightgraph.AccessReader
	// UsageToday counts each subscription's calls of today, stored and not yet stored.
	UsageToday func(ctx context.Context, subscriptions []string) ([]int64, error)
	// UsageHistory returns each subscription's calls on each of the last
	// flightgraph.MaxUsageDays days, and LimitRequests each subscription's limit requests, for
	// whoever may read them (access.Service.UsageHistory, SubscriptionLimitRequests).
	UsageHistory  func(ctx context.Context, subscriptions []string) ([][]*flightgraph.DailyUsage, error)
	LimitRequests func(ctx context.Context, subscriptions []string) ([][]*flightgraph.LimitIncreaseRequest, error)
	// Offers and Carts read signed ids back, each id with its own answer or refusal, in the same
	// reads whatever their number (travel.Service.Offers and Carts).
	Offers func(ctx context.Context, ids []string) ([]*flightgraph.Offer, []error, error)
	Carts  func(ctx context.Context, ids []string) ([]*flightgraph.ShoppingCart, []error, error)
	// Now is the clock that flights' statuses follow (the resolvers' clock); nil: time.Now.
	Now func() time.Time
}

// Loaders batch and cache the parent-to-child lookups of one request. They are created per
// request: a global loader would serve one caller's cached rows to another and never forget.
type Loaders struct {
	Flight    *Loader[*model.Flight]
	Legs      *Loader[[]*flightgraph.FlightLeg]
	Airport   *Loader[*flightgraph.Airport]
	City      *Loader[*flightgraph.City]
	Country   *Loader[*flightgraph.Country]
	CityPorts *Loader[[]*flightgraph.Airport]
	Carrier   *Loader[*flightgraph.Carrier]
	Route     *Loader[*flightgraph.Route] // by Route.ID: the routes of _entities
	Aircraft  *Loader[*flightgraph.Aircraft]
	Cabins    *Loader[[]*flightgraph.Cabin]
	Amenities *Loader[[]*flightgraph.Amenity]
	// Offer and Cart read back the offer and cart ids of a request's fields and entities in one
	// batch (nil without Stores.Offers and Stores.Carts).
	Offer *dataloader.Loader[string, *flightgraph.Offer]
	Cart  *dataloader.Loader[string, *flightgraph.ShoppingCart]

	// The portal's.
	AppKeys *Loader[[]*flightgraph.Key]
	KeySubs *Loader[[]*flightgraph.Subscription]
	Plans   *Loader[*flightgraph.Plan] // the subscriptions' plans: a page of them is one read
	Usage   *Loader[int64]
	// UsageHistory holds each subscription's whole history (flightgraph.MaxUsageDays), whatever
	// days a field asks for, so that fields asking for different days share one batch.
	UsageHistory  *Loader[[]*flightgraph.DailyUsage]
	LimitRequests *Loader[[]*flightgraph.LimitIncreaseRequest]
	// Accounts reads the accounts the operators' desk shows (requests' and applications'
	// owners) in one batch; the access service decides who may read them.
	Accounts *Loader[*flightgraph.Account]

	// now is Stores.Now.
	now func() time.Time
	// fields holds the "Type.field" pairs the operation selects; set before resolvers run.
	fields map[string]bool
	// searches counts the network-wide searches (inspiration, deals) the request has run.
	searches atomic.Int32
	// args are the operation's fields' arguments, made once per field (fieldArgs).
	args keptArgs
	// batches counts the loaders' reads (a batch, a prefetch, a read-back): whoever waited for
	// a value not prefetched waited for one of them (marshalList reads it to stop marshalling a
	// list in line).
	batches atomic.Int64
	// key is fields as one string (fieldsKey), made once.
	keyOnce sync.Once
	key     string
}

// OneSearch admits a request's first network-wide search (a destinations inspiration or a
// deals field: each reads and prices an origin's month, a second of CPU) and refuses the others
// with ECodeQueryRootFields: the operation is charged as one call, so ten aliases of one must not
// buy ten calls' work.
func (l *Loaders) OneSearch(field string) error {
	if l.searches.Add(1) > 1 {
		return flightgraph.Errorf(flightgraph.ECodeQueryRootFields, "%s: an operation runs one inspiration or deals search; send the others as operations of their own", field)
	}
	return nil
}

// NewLoaders returns fresh loaders over st that wait wait for keys.
func NewLoaders(st Stores, wait time.Duration) *Loaders {
	l := &Loaders{now: st.Now}
	if l.now == nil {
		l.now = time.Now
	}
	l.Flight = newLoader(func(ctx context.Context, ids []string) ([]*model.Flight, error) {
		flights, err := st.Flights.FlightsByIDs(ctx, ids)
		if err != nil {
			return nil, err
		}
		return l.Flights(ctx, flights), nil
	}, wait, &l.batches, nil)
	l.Legs = newLoader(st.Flights.LegsByFlightIDs, wait, &l.batches, func(ctx context.Context, lists [][]*flightgraph.FlightLeg) {
		l.prefetchLegs(ctx, flatten(lists))
	})
	l.Airport = newLoader(st.Places.AirportsByCodes, wait, &l.batches, l.PrefetchAirports)
	l.City = newLoader(st.Places.CitiesByCodes, wait, &l.batches, l.prefetchCities)
	l.Country = newLoader(st.Places.CountriesByCodes, wait, &l.batches, nil)
	l.CityPorts = newLoader(st.Places.AirportsByCities, wait, &l.batches, func(ctx context.Context, lists [][]*flightgraph.Airport) {
		l.PrefetchAirports(ctx, flatten(lists))
	})
	l.Carrier = newLoader(st.Network.CarriersByCodes, wait, &l.batches, l.prefetchCarriers)
	l.Route = newLoader(st.Network.RoutesByIDs, wait, &l.batches, func(ctx context.Context, routes []*flightgraph.Route) {
		l.PrefetchRoutes(ctx, nonNil(routes))
	})
	l.Aircraft = newLoader(st.Aircraft.AircraftByConfigurations, wait, &l.batches, l.prefetchAircraft)
	l.Cabins = newLoader(st.Aircraft.CabinsByConfigurations, wait, &l.batches, func(ctx context.Context, lists [][]*flightgraph.Cabin) {
		l.prefetchCabins(ctx, flatten(lists))
	})
	l.Amenities = newLoader(st.Aircraft.AmenitiesByProducts, wait, &l.batches, nil)
	if st.Offers != nil && st.Carts != nil {
		// A read-back costs three round trips and a pricing: worth a longer wait than a row's,
		// so that the goroutines of an _entities list all join one batch.
		l.Offer, l.Cart = newReadBack(st.Offers, max(wait, readBackWait), &l.batches), newReadBack(st.Carts, max(wait, readBackWait), &l.batches)
	}
	if st.Access != nil {
		l.AppKeys = newLoader(st.Access.KeysByApplications, wait, &l.batches, nil)
		l.Accounts = newLoader(st.Access.AccountsByIDs, wait, &l.batches, nil)
		l.KeySubs = newLoader(st.Access.SubscriptionsByKeys, wait, &l.batches, nil)
		l.Plans = newLoader(st.Access.PlansByIDs, wait, &l.batches, nil)
	}
	if st.UsageToday != nil {
		l.Usage = newLoader(st.UsageToday, wait, &l.batches, nil)
	}
	if st.UsageHistory != nil {
		l.UsageHistory = newLoader(st.UsageHistory, wait, &l.batches, nil)
	}
	if st.LimitRequests != nil {
		l.LimitRequests = newLoader(st.LimitRequests, wait, &l.batches, nil)
	}
	return l
}

// Loader is a dataloader over a batch-first store lookup, which returns one value per key in key
// order, with a hook that runs on every batch's values before they are handed out.
type Loader[V any] struct {
	*dataloader.Loader[string, V]
	fetch func(context.Context, []string) ([]V, error)
	then  func(context.Context, []V)

	mu      sync.Mutex
	fetched map[string]bool // keys already prefetched: the schema has cycles (city → airports → city)

	// batches is the request's count of reads (Loaders.batches).
	batches *atomic.Int64

	// detach makes a batch read on a context of its own (the event loaders' shared by many
	// subscribers: eventLoaders), not on the context of the load that started it.
	detach bool

	// primed holds the prefetched values. Load reads them under a read lock, so the hundreds of
	// children of one level do not queue on the dataloader's mutex for values already here.
	primedMu sync.RWMutex
	primed   map[string]V
}

func newLoader[V any](fetch func(context.Context, []string) ([]V, error), wait time.Duration, batches *atomic.Int64, then func(context.Context, []V)) *Loader[V] {
	l := &Loader[V]{fetch: fetch, then: then, batches: batches}
	batch := func(ctx context.Context, keys []string) []*dataloader.Result[V] {
		if l.detach {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), sharedReadTimeout)
			defer cancel()
		}
		out := make([]*dataloader.Result[V], len(keys))
		vals, err := l.get(ctx, keys)
		for i := range keys {
			if err != nil {
				out[i] = &dataloader.Result[V]{Error: err}
			} else {
				out[i] = &dataloader.Result[V]{Data: vals[i]}
			}
		}
		return out
	}
	l.Loader = dataloader.NewBatchedLoader(batch, dataloader.WithWait[string, V](wait))
	return l
}

// newReadBack is a loader of signed ids: unlike newLoader's, each key has its own error (one
// tampered id among many refuses that one), and a failed read fails them all.
func newReadBack[V any](fetch func(context.Context, []string) ([]V, []error, error), wait time.Duration, batches *atomic.Int64) *dataloader.Loader[string, V] {
	return dataloader.NewBatchedLoader(func(ctx context.Context, keys []string) []*dataloader.Result[V] {
		batches.Add(1)
		var (
			vals []V
			errs []error
			err  error
		)
		if ctx.Err() != nil {
			err = stopped(ctx)
		} else if vals, errs, err = fetch(ctx, keys); err == nil && (len(vals) != len(keys) || len(errs) != len(keys)) {
			err = fmt.Errorf("graph: read-back returned %d values and %d errors for %d keys", len(vals), len(errs), len(keys))
		}
		out := make([]*dataloader.Result[V], len(keys))
		for i := range keys {
			switch {
			case err != nil:
				out[i] = &dataloader.Result[V]{Error: err}
			case errs[i] != nil:
				out[i] = &dataloader.Result[V]{Error: errs[i]}
			default:
				out[i] = &dataloader.Result[V]{Data: vals[i]}
			}
		}
		return out
	}, dataloader.WithWait[string, V](wait))
}

// get fetches keys in one round trip and runs the hook; once the request's context is done it
// fetches nothing.
func (l *Loader[V]) get(ctx context.Context, keys []string) ([]V, error) {
	if ctx.Err() != nil {
		return nil, stopped(ctx)
	}
	if l.batches != nil {
		l.batches.Add(1)
	}
	vals, err := l.fetch(ctx, keys)
	if err == nil && len(vals) != len(keys) {
		err = fmt.Errorf("graph: batch returned %d values for %d keys", len(vals), len(keys))
	}
	if err != nil {
		return nil, err
	}
	if l.then != nil {
		l.then(ctx, vals)
	}
	return vals, nil
}

// Prefetch fetches keys now, in one round trip, and keeps their values, so the Load calls and
// attachments that follow need no batch and no wait. A failed fetch keeps nothing: Load and
// values then query through the dataloader and report the error themselves.
func (l *Loader[V]) Prefetch(ctx context.Context, keys []string) {
	keys = l.unfetched(keys)
	if len(keys) == 0 {
		return
	}
	vals, err := l.get(ctx, keys)
	if err != nil {
		return
	}
	l.primedMu.Lock()
	if l.primed == nil {
		l.primed = make(map[string]V, len(keys))
	}
	for i, k := range keys {
		l.primed[k] = vals[i]
	}
	l.primedMu.Unlock()
}

// Prime keeps values the caller read already, for keys not fetched yet, as Prefetch would have
// kept them, and runs what follows a fetch (the next level's prefetch): the loaders then serve
// them without a round trip of their own.
func (l *Loader[V]) Prime(ctx context.Context, keys []string, vals []V) {
	fresh := map[string]bool{}
	for _, k := range l.unfetched(keys) {
		fresh[k] = true
	}
	var primed []V
	l.primedMu.Lock()
	if l.primed == nil {
		l.primed = make(map[string]V, len(fresh))
	}
	for i, k := range keys {
		if fresh[k] {
			l.primed[k] = vals[i]
			primed = append(primed, vals[i])
			delete(fresh, k)
		}
	}
	l.primedMu.Unlock()
	if l.then != nil && len(primed) > 0 {
		l.then(ctx, primed)
	}
}

type loadersKey struct{}

// WithLoaders returns ctx carrying l.
func WithLoaders(ctx context.Context, l *Loaders) context.Context {
	return context.WithValue(ctx, loadersKey{}, l)
}

// For returns the request's loaders (on a subscription's answer, the answer's: ForEvent). It
// panics when the middleware did not run: that is a wiring bug, not a runtime condition.
func For(ctx context.Context) *Loaders {
	if s, ok := ctx.Value(loadersKey{}).(*eventSlot); ok {
		return s.loaders()
	}
	if l := loadersOf(ctx); l != nil {
		return l
	}
	panic("graph: no loaders in the request's context: graph.Middleware did not run")
}

// loadersOf returns the request's loaders (made now if they were not yet), nil when ctx carries
// none or a subscription event's.
func loadersOf(ctx context.Context) *Loaders {
	switch v := ctx.Value(loadersKey{}).(type) {
	case *Loaders:
		return v
	case *lazyLoaders:
		return v.get()
	}
	return nil
}

// lazyLoaders are a request's loaders, made when first asked for: a request the response cache
// answers, or the guard or the Gate refuses, never reads with them, and making them is a sixth of
// such a request's work.
type lazyLoaders struct {
	once sync.Once
	st   Stores
	wait time.Duration
	l    *Loaders
}

func (z *lazyLoaders) get() *Loaders {
	z.once.Do(func() { z.l = NewLoaders(z.st, z.wait) })
	return z.l
}

// detached makes the loader's batches read on a context of their own (Loader.detach).
func (l *Loader[V]) detached() { l.detach = true }

// Middleware gives each request its own loaders.
func Middleware(st Stores, wait time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), loadersKey{}, &lazyLoaders{st: st, wait: wait})))
	})
}

// Load runs one load through a loader: the value of key or the batch's error. A prefetched key
// needs no batch.
func Load[V any](ctx context.Context, l *Loader[V], key string) (V, error) {
	// Once the request's deadline passed or its client left, no resolver gets another value:
	// the rest of the answer, prefetched or not, is not built. The non-blocking receive takes no
	// lock while the context is live.
	select {
	case <-ctx.Done():
		var zero V
		return zero, stopped(ctx)
	default:
	}
	if v, ok := l.prefetched(key); ok {
		return v, nil
	}
	return l.Load(ctx, key)()
}

// LoadAll returns the values of keys, each with its error, as a batch of its own: the keys not
// prefetched yet are fetched now in one round trip, with no batch window to wait for or to miss
// (an _entities call's representations of one type).
func LoadAll[V any](ctx context.Context, l *Loader[V], keys []string) ([]V, []error) {
	if ctx.Err() != nil {
		errs := make([]error, len(keys))
		for i := range errs {
			errs[i] = stopped(ctx)
		}
		return make([]V, len(keys)), errs
	}
	l.Prefetch(ctx, keys)
	return l.values(ctx, keys)
}

// values returns the values of keys, each with its error: the prefetched ones at once, the
// others through the dataloader, in one batch. A key can be missing when another root field's
// prefetch marked it and is still fetching it, or when its prefetch failed; the batch then
// fetches it again, or reports why it cannot.
func (l *Loader[V]) values(ctx context.Context, keys []string) ([]V, []error) {
	vals, errs := make([]V, len(keys)), make([]error, len(keys))
	var pending map[int]dataloader.Thunk[V]
	for i, k := range keys {
		if v, ok := l.prefetched(k); ok {
			vals[i] = v
			continue
		}
		if pending == nil {
			pending = map[int]dataloader.Thunk[V]{}
		}
		pending[i] = l.Loader.Load(ctx, k) // queued now, so the missing keys share one batch
	}
	for i, thunk := range pending {
		vals[i], errs[i] = thunk()
	}
	return vals, errs
}

// prefetched returns the value Prefetch fetched for key, if it did.
func (l *Loader[V]) prefetched(key string) (V, bool) {
	l.primedMu.RLock()
	defer l.primedMu.RUnlock()
	v, ok := l.primed[key]
	return v, ok
}

// unfetched returns the distinct keys not prefetched before, and marks them. Marking first makes
// prefetching along a cycle of the schema stop after one turn.
func (l *Loader[V]) unfetched(keys []string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fetched == nil {
		l.fetched = make(map[string]bool, len(keys))
	}
	out := keys[:0:0]
	for _, k := range keys {
		if !l.fetched[k] {
			l.fetched[k] = true
			out = append(out, k)
		}
	}
	return out
}

func flatten[T any](lists [][]*T) []*T {
	var out []*T
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

func nonNil[T any](vals []*T) []*T {
	out := vals[:0:0]
	for _, v := range vals {
		if v != nil {
			out = append(out, v)
		}
	}
	return out
}
