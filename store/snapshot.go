package store

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/flightgraph/flightgraph"
)

// DefaultSnapshotTTL is how long a snapshot of the reference data is trusted by default.
const DefaultSnapshotTTL = time.Minute

// Snapshot serves the reference data (airports, cities, countries, carriers, and the fleet with
// its cabins and amenities) from a snapshot in memory, so that a flight's places and aircraft
// cost no round trip. Reference data changes only when the data set is loaded again, so the
// snapshot is trusted for a TTL and then reloaded in one go (seven queries) in the background,
// while every caller keeps reading the old one. A reload that fails is logged and keeps the old
// snapshot (reference data a little stale beats errors); it is tried again after snapshotRetry.
// No caller ever waits for another's load: before the first snapshot exists, the one caller that
// loads it waits for its own load and the others read the store.
//
// A code the snapshot does not hold is looked up in the store, so a place or configuration added
// since the last load is found at once; an unknown code costs the round trip it always did. The
// lists of a known code (a city's airports, a configuration's cabins) are as fresh as the
// snapshot. Flights and legs, which follow the clock, are never cached here.
//
// The records are shared by every request that reads them: callers must not change them (none
// does: a leg's aircraft, for one, is an Airframe that points at the configuration).
type Snapshot struct {
	places  flightgraph.PlaceStore
	fleet   flightgraph.AircraftStore
	network flightgraph.NetworkStore
	ttl     time.Duration
	now     func() time.Time
	log     *slog.Logger

	snap atomic.Pointer[snapshot]

	// reload is held by whoever is loading a snapshot; it guards retryAt.
	reload  chan struct{}
	retryAt time.Time // no load before this, after a failed one
}

// snapshotRetry is how long a failed load is not tried again; snapshotLoadTimeout bounds a
// background reload.
const (
	snapshotRetry       = 5 * time.Second
	snapshotLoadTimeout = 10 * time.Second
)

// errNoSnapshot tells a caller there is no snapshot to read yet (another caller is loading the
// first one, or it failed a moment ago): read the store.
var errNoSnapshot = errors.New("store: reference snapshot loading")

// NewSnapshot returns a Snapshot over the stores that trusts a snapshot for ttl and logs failed
// loads to log.
func NewSnapshot(places flightgraph.PlaceStore, fleet flightgraph.AircraftStore, network flightgraph.NetworkStore, ttl time.Duration, log *slog.Logger) *Snapshot {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Snapshot{places: places, fleet: fleet, network: network, ttl: ttl, now: time.Now, log: log, reload: make(chan struct{}, 1)}
}

// Places returns the place store that reads the snapshot; searches go to the store.
func (r *Snapshot) Places() flightgraph.PlaceStore { return cachedPlaces{r.places, r} }

// Fleet returns the aircraft store that reads the snapshot.
func (r *Snapshot) Fleet() flightgraph.AircraftStore { return cachedFleet{r.fleet, r} }

// Network returns the network store whose carriers come from the snapshot; routes and schedules
// go to the store.
func (r *Snapshot) Network() flightgraph.NetworkStore { return cachedNetwork{r.network, r} }

type snapshot struct {
	loaded time.Time

	airports, cities, countries, aircraft, carriers map[string]int // code → index in the list
	airportList                                     []*flightgraph.Airport
	cityList                                        []*flightgraph.City
	countryList                                     []*flightgraph.Country
	aircraftList                                    []*flightgraph.Aircraft
	carrierList                                     []*flightgraph.Carrier

	cityPorts map[string][]*flightgraph.Airport // every city, with or without airports
	cabins    map[string][]*flightgraph.Cabin   // every configuration
	amenities map[string][]*flightgraph.Amenity // every cabin product of a configuration
}

// current returns the snapshot to read: a fresh one; else the stale one, while a reload runs in
// the background; else (at start) the first one, loaded by this caller, or errNoSnapshot while
// another caller loads it, or the error of a load that failed less than snapshotRetry ago.
func (r *Snapshot) current(ctx context.Context) (*snapshot, error) {
	s := r.snap.Load()
	if s != nil && r.fresh(s) {
		return s, nil
	}
	select {
	case r.reload <- struct{}{}:
	default:
		if s != nil {
			return s, nil
		}
		return nil, errNoSnapshot
	}
	if r.now().Before(r.retryAt) {
		<-r.reload
		if s != nil {
			return s, nil
		}
		return nil, errNoSnapshot
	}
	if s != nil {
		go func() {
			defer func() { <-r.reload }()
			ctx, cancel := context.WithTimeout(context.Background(), snapshotLoadTimeout)
			defer cancel()
			r.loadLocked(ctx)
		}()
		return s, nil
	}
	defer func() { <-r.reload }()
	return r.loadLocked(ctx)
}

func (r *Snapshot) fresh(s *snapshot) bool { return r.now().Sub(s.loaded) < r.ttl }

// loadLocked loads and keeps a snapshot, unless a fresh one arrived meanwhile; a failure is
// logged and not tried again for snapshotRetry. The caller holds r.reload.
func (r *Snapshot) loadLocked(ctx context.Context) (*snapshot, error) {
	if s := r.snap.Load(); s != nil && r.fresh(s) {
		return s, nil
	}
	s, err := r.load(ctx)
	if err != nil {
		if ctx.Err() == nil { // not the cancellation of the request that loads the first one
			r.retryAt = r.now().Add(snapshotRetry)
			r.log.Warn("reference data: load failed; serving the previous snapshot, if any", "err", err, "retryIn", snapshotRetry)
		}
		return nil, err
	}
	r.snap.Store(s)
	return s, nil
}

func (r *Snapshot) load(ctx context.Context) (*snapshot, error) {
	s := &snapshot{loaded: r.now()}
	var err error
	if s.airportList, err = r.places.Airports(ctx); err != nil {
		return nil, err
	}
	if s.cityList, err = r.places.Cities(ctx); err != nil {
		return nil, err
	}
	if s.countryList, err = r.places.Countries(ctx); err != nil {
		return nil, err
	}
	if s.aircraftList, err = r.fleet.AllAircraft(ctx); err != nil {
		return nil, err
	}
	if s.carrierList, err = r.network.Carriers(ctx); err != nil {
		return nil, err
	}
	configs := keysOf(s.aircraftList, func(a *flightgraph.Aircraft) string { return a.Configuration })
	cabins, err := r.fleet.CabinsByConfigurations(ctx, configs)
	if err != nil {
		return nil, err
	}
	s.cabins = make(map[string][]*flightgraph.Cabin, len(configs))
	var products []string
	for i, c := range configs {
		s.cabins[c] = slices.Clip(cabins[i])
		for _, cabin := range cabins[i] {
			products = append(products, cabin.Product)
		}
	}
	products = slices.Compact(slices.Sorted(slices.Values(products)))
	amenities, err := r.fleet.AmenitiesByProducts(ctx, products)
	if err != nil {
		return nil, err
	}
	s.amenities = make(map[string][]*flightgraph.Amenity, len(products))
	for i, p := range products {
		s.amenities[p] = slices.Clip(amenities[i])
	}
	s.airports = index(s.airportList, func(a *flightgraph.Airport) string { return a.Code })
	s.cities = index(s.cityList, func(c *flightgraph.City) string { return c.Code })
	s.countries = index(s.countryList, func(c *flightgraph.Country) string { return c.Code })
	s.aircraft = index(s.aircraftList, func(a *flightgraph.Aircraft) string { return a.Configuration })
	s.carriers = index(s.carrierList, func(c *flightgraph.Carrier) string { return c.Code })
	s.cityPorts = make(map[string][]*flightgraph.Airport, len(s.cityList))
	for _, c := range s.cityList {
		s.cityPorts[c.Code] = nil
	}
	for _, a := range s.airportList { // ordered by code, as AirportsByCities promises
		if _, ok := s.cityPorts[a.CityCode]; ok {
			s.cityPorts[a.CityCode] = append(s.cityPorts[a.CityCode], a)
		}
	}
	for c, l := range s.cityPorts {
		s.cityPorts[c] = slices.Clip(l)
	}
	return s, nil
}

func keysOf[T any](rows []*T, key func(*T) string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = key(r)
	}
	return out
}

func index[T any](rows []*T, key func(*T) string) map[string]int {
	m := make(map[string]int, len(rows))
	for i, r := range rows {
		m[key(r)] = i
	}
	return m
}

// lookup answers a batch lookup from the snapshot, asking the store for the keys it lacks, or for
// all of them when no snapshot can be loaded.
func lookup[V any](ctx context.Context, r *Snapshot, keys []string, get func(*snapshot, string) (V, bool), store func(context.Context, []string) ([]V, error)) ([]V, error) {
	if len(keys) == 0 {
		return []V{}, nil
	}
	s, err := r.current(ctx)
	if err != nil {
		return store(ctx, keys)
	}
	out := make([]V, len(keys))
	var missing []int
	for i, k := range keys {
		v, ok := get(s, k)
		if !ok {
			missing = append(missing, i)
			continue
		}
		out[i] = v
	}
	if len(missing) == 0 {
		return out, nil
	}
	ask := make([]string, len(missing))
	for j, i := range missing {
		ask[j] = keys[i]
	}
	got, err := store(ctx, ask)
	if err != nil {
		return nil, err
	}
	for j, i := range missing {
		out[i] = got[j]
	}
	return out, nil
}

// whole returns a whole list of the snapshot, or the store's when no snapshot can be loaded.
func whole[T any](ctx context.Context, r *Snapshot, list func(*snapshot) []*T, store func(context.Context) ([]*T, error)) ([]*T, error) {
	s, err := r.current(ctx)
	if err != nil {
		return store(ctx)
	}
	return slices.Clone(list(s)), nil
}

func record[T any](m map[string]int, list []*T, k string) (*T, bool) {
	i, ok := m[k]
	if !ok {
		return nil, false
	}
	return list[i], true
}

type cachedPlaces struct {
	flightgraph.PlaceStore
	r *Snapshot
}

func (p cachedPlaces) AirportsByCodes(ctx context.Context, keys []string) ([]*flightgraph.Airport, error) {
	return lookup(ctx, p.r, keys, func(s *snapshot, k string) (*flightgraph.Airport, bool) {
		return record(s.airports, s.airportList, k)
	}, p.PlaceStore.AirportsByCodes)
}

func (p cachedPlaces) CitiesByCodes(ctx context.Context, keys []string) ([]*flightgraph.City, error) {
	return lookup(ctx, p.r, keys, func(s *snapshot, k string) (*flightgraph.City, bool) {
		return record(s.cities, s.cityList, k)
	}, p.PlaceStore.CitiesByCodes)
}

func (p cachedPlaces) CountriesByCodes(ctx context.Context, keys []string) ([]*flightgraph.Country, error) {
	return lookup(ctx, p.r, keys, func(s *snapshot, k string) (*flightgraph.Country, bool) {
		return record(s.countries, s.countryList, k)
	}, p.PlaceStore.CountriesByCodes)
}

func (p cachedPlaces) AirportsByCities(ctx context.Context, keys []string) ([][]*flightgraph.Airport, error) {
	return lookup(ctx, p.r, keys, func(s *snapshot, k string) ([]*flightgraph.Airport, bool) {
		l, ok := s.cityPorts[k]
		return l, ok
	}, p.PlaceStore.AirportsByCities)
}

func (p cachedPlaces) Airports(ctx context.Context) ([]*flightgraph.Airport, error) {
	return whole(ctx, p.r, func(s *snapshot) []*flightgraph.Airport { return s.airportList }, p.PlaceStore.Airports)
}

func (p cachedPlaces) Cities(ctx context.Context) ([]*flightgraph.City, error) {
	return whole(ctx, p.r, func(s *snapshot) []*flightgraph.City { return s.cityList }, p.PlaceStore.Cities)
}

func (p cachedPlaces) Countries(ctx context.Context) ([]*flightgraph.Country, error) {
	return whole(ctx, p.r, func(s *snapshot) []*flightgraph.Country { return s.countryList }, p.PlaceStore.Countries)
}

type cachedFleet struct {
	flightgraph.AircraftStore
	r *Snapshot
}

func (f cachedFleet) AircraftByConfigurations(ctx context.Context, keys []string) ([]*flightgraph.Aircraft, error) {
	return lookup(ctx, f.r, keys, func(s *snapshot, k string) (*flightgraph.Aircraft, bool) {
		return record(s.aircraft, s.aircraftList, k)
	}, f.AircraftStore.AircraftByConfigurations)
}

func (f cachedFleet) CabinsByConfigurations(ctx context.Context, keys []string) ([][]*flightgraph.Cabin, error) {
	return lookup(ctx, f.r, keys, func(s *snapshot, k string) ([]*flightgraph.Cabin, bool) {
		l, ok := s.cabins[k]
		return l, ok
	}, f.AircraftStore.CabinsByConfigurations)
}

func (f cachedFleet) AmenitiesByProducts(ctx context.Context, keys []string) ([][]*flightgraph.Amenity, error) {
	return lookup(ctx, f.r, keys, func(s *snapshot, k string) ([]*flightgraph.Amenity, bool) {
		l, ok := s.amenities[k]
		return l, ok
	}, f.AircraftStore.AmenitiesByProducts)
}

func (f cachedFleet) AllAircraft(ctx context.Context) ([]*flightgraph.Aircraft, error) {
	return whole(ctx, f.r, func(s *snapshot) []*flightgraph.Aircraft { return s.aircraftList }, f.AircraftStore.AllAircraft)
}

type cachedNetwork struct {
	flightgraph.NetworkStore
	r *Snapshot
}

func (n cachedNetwork) CarriersByCodes(ctx context.Context, keys []string) ([]*flightgraph.Carrier, error) {
	return lookup(ctx, n.r, keys, func(s *snapshot, k string) (*flightgraph.Carrier, bool) {
		return record(s.carriers, s.carrierList, k)
	}, n.NetworkStore.CarriersByCodes)
}

func (n cachedNetwork) Carriers(ctx context.Context) ([]*flightgraph.Carrier, error) {
	return whole(ctx, n.r, func(s *snapshot) []*flightgraph.Carrier { return s.carrierList }, n.NetworkStore.Carriers)
}
