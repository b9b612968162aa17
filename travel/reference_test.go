package travel

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// TestReference runs the snapshot against the real stores: it answers what the stores answer,
// with no round trip once loaded, asks the store for the codes it lacks, and reloads after its TTL.
func TestReference(t *testing.T) {
	for _, dialect := range storetest.Dialects(os.Getenv) {
		t.Run(dialect, func(t *testing.T) {
			db := storetest.Seeded(t, dialect, os.Getenv)
			places, fleet, network := store.NewPlaceStore(db), store.NewAircraftStore(db), store.NewNetworkStore(db)
			ref := NewReference(places, fleet, network, time.Minute)
			clock := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
			ref.now = func() time.Time { return clock }
			cp, cf, cn := ref.Places(), ref.Fleet(), ref.Network()

			roundTrips := func(fn func(ctx context.Context)) int64 {
				ctx := store.WithQueryCounter(context.Background())
				fn(ctx)
				return store.QueryCount(ctx)
			}
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}

			if n := roundTrips(func(ctx context.Context) { _, err := cp.Airports(ctx); must(err) }); n != 7 {
				t.Errorf("first read: %d round trips, want the 7 queries of one load", n)
			}

			// Every lookup answers what the store answers, in key order, duplicates and unknown
			// codes included; known codes cost nothing.
			ctx := context.Background()
			airports := []string{"CDG", "AMS", "CDG", "JFK", "LHR"}
			cities := []string{"PAR", "AMS", "NYC", "LON"}
			countries := []string{"FR", "NL", "US"}
			allAircraft, err := fleet.AllAircraft(ctx)
			must(err)
			configs := []string{allAircraft[0].Configuration, allAircraft[len(allAircraft)-1].Configuration, allAircraft[0].Configuration}
			cabins, err := fleet.CabinsByConfigurations(ctx, configs)
			must(err)
			var products []string
			for _, l := range cabins {
				for _, c := range l {
					products = append(products, c.Product)
				}
			}
			carriers, err := network.Carriers(ctx)
			must(err)
			carrierCodes := []string{carriers[len(carriers)-1].Code, carriers[0].Code}

			checks := []struct {
				name          string
				cached, store func(context.Context) (any, error)
			}{
				{"AirportsByCodes", wrap(cp.AirportsByCodes, airports), wrap(places.AirportsByCodes, airports)},
				{"CitiesByCodes", wrap(cp.CitiesByCodes, cities), wrap(places.CitiesByCodes, cities)},
				{"CountriesByCodes", wrap(cp.CountriesByCodes, countries), wrap(places.CountriesByCodes, countries)},
				{"AirportsByCities", wrap(cp.AirportsByCities, cities), wrap(places.AirportsByCities, cities)},
				{"AircraftByConfigurations", wrap(cf.AircraftByConfigurations, configs), wrap(fleet.AircraftByConfigurations, configs)},
				{"CabinsByConfigurations", wrap(cf.CabinsByConfigurations, configs), wrap(fleet.CabinsByConfigurations, configs)},
				{"AmenitiesByProducts", wrap(cf.AmenitiesByProducts, products), wrap(fleet.AmenitiesByProducts, products)},
				{"CarriersByCodes", wrap(cn.CarriersByCodes, carrierCodes), wrap(network.CarriersByCodes, carrierCodes)},
				{"Airports", whole0(cp.Airports), whole0(places.Airports)},
				{"Cities", whole0(cp.Cities), whole0(places.Cities)},
				{"Countries", whole0(cp.Countries), whole0(places.Countries)},
				{"AllAircraft", whole0(cf.AllAircraft), whole0(fleet.AllAircraft)},
				{"Carriers", whole0(cn.Carriers), whole0(network.Carriers)},
			}
			for _, c := range checks {
				var got any
				if n := roundTrips(func(ctx context.Context) { got, err = c.cached(ctx); must(err) }); n != 0 {
					t.Errorf("%s: %d round trips from a fresh snapshot", c.name, n)
				}
				want, err := c.store(ctx)
				must(err)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: snapshot answers\n%s\nstore answers\n%s", c.name, dump(got), dump(want))
				}
			}

			// A code the snapshot lacks is the store's to answer: unknown, or new since the load.
			var got []*flightgraph.Airport
			if n := roundTrips(func(ctx context.Context) { got, err = cp.AirportsByCodes(ctx, []string{"AMS", "ZZZ"}); must(err) }); n != 1 || got[0] == nil || got[1] != nil {
				t.Errorf("AMS and unknown ZZZ: %d round trips, %v; want 1 and [AMS <nil>]", n, got)
			}
			_, err = store.Raw(db).ExecContext(ctx, `INSERT INTO airports (code, name, city_code, country_code, latitude, longitude, time_zone, hub)
				VALUES ('ZZZ', 'New Field', 'AMS', 'NL', 52.3, 4.7, 'Europe/Amsterdam', false)`)
			must(err)
			if got, err = cp.AirportsByCodes(ctx, []string{"ZZZ"}); err != nil || got[0] == nil || got[0].Name != "New Field" {
				t.Errorf("airport added after the load: %v, %v", got, err)
			}
			// Stale from here: the next read loads again, and sees the new airport itself.
			clock = clock.Add(time.Minute)
			if n := roundTrips(func(ctx context.Context) { got, err = cp.AirportsByCodes(ctx, []string{"ZZZ"}); must(err) }); n != 7 || got[0] == nil {
				t.Errorf("after the TTL: %d round trips, %v; want 7 and ZZZ", n, got)
			}
			if n := roundTrips(func(ctx context.Context) { _, err = cp.AirportsByCodes(ctx, []string{"ZZZ"}); must(err) }); n != 0 {
				t.Errorf("ZZZ after the reload: %d round trips, want 0", n)
			}

			// When the store cannot be read, a stale snapshot is still served, a failed reload is
			// not tried again for a second, and codes the snapshot lacks report the store's error.
			clock = clock.Add(time.Minute)
			must(db.Close())
			if n := roundTrips(func(ctx context.Context) { got, err = cp.AirportsByCodes(ctx, []string{"AMS"}) }); err != nil || got[0] == nil || n == 0 {
				t.Errorf("closed store, stale snapshot: %v, %v after %d round trips; want the stale AMS after a failed reload", got, err, n)
			}
			if n := roundTrips(func(ctx context.Context) { got, err = cp.AirportsByCodes(ctx, []string{"AMS"}) }); err != nil || n != 0 {
				t.Errorf("right after a failed reload: %d round trips, %v; want none", n, err)
			}
			if got, err = cp.AirportsByCodes(ctx, []string{"QQQ"}); err == nil {
				t.Errorf("a code the snapshot lacks, closed store: %v and no error", got)
			}
			if got, err = cp.AirportsByCodes(ctx, nil); err != nil || len(got) != 0 {
				t.Errorf("no codes: %v, %v", got, err)
			}
		})
	}
}

func wrap[V any](fn func(context.Context, []string) ([]V, error), keys []string) func(context.Context) (any, error) {
	return func(ctx context.Context) (any, error) { return fn(ctx, keys) }
}

func whole0[V any](fn func(context.Context) ([]V, error)) func(context.Context) (any, error) {
	return func(ctx context.Context) (any, error) { return fn(ctx) }
}

// dump prints the first entries of a slice of records or of lists of records.
func dump(v any) string {
	rv := reflect.ValueOf(v)
	out := ""
	for i := 0; i < rv.Len() && i < 8; i++ {
		e := rv.Index(i)
		if e.Kind() == reflect.Pointer && !e.IsNil() {
			e = e.Elem()
		}
		out += fmt.Sprintf("  %+v\n", e.Interface())
	}
	return out
}

// gatedPlaces holds every Airports call (the first query of a load) until the gate opens.
type gatedPlaces struct {
	flightgraph.PlaceStore
	entered chan struct{}
	gate    chan struct{}
}

func (g gatedPlaces) Airports(ctx context.Context) ([]*flightgraph.Airport, error) {
	g.entered <- struct{}{}
	<-g.gate
	return g.PlaceStore.Airports(ctx)
}

// TestReferenceReloadDoesNotBlockReaders: while one caller reloads a stale snapshot, the others
// read the stale one rather than wait.
func TestReferenceReloadDoesNotBlockReaders(t *testing.T) {
	db := storetest.Seeded(t, store.SQLite, os.Getenv)
	places := gatedPlaces{store.NewPlaceStore(db), make(chan struct{}, 1), make(chan struct{})}
	ref := NewReference(places, store.NewAircraftStore(db), store.NewNetworkStore(db), time.Minute)
	clock := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	ref.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	ctx := context.Background()

	close(places.gate) // the first load goes through
	if _, err := ref.Places().AirportsByCodes(ctx, []string{"AMS"}); err != nil {
		t.Fatal(err)
	}
	<-places.entered
	places.gate = make(chan struct{})
	ref.places = places

	mu.Lock()
	clock = clock.Add(2 * time.Minute)
	mu.Unlock()
	reloaded := make(chan error)
	go func() {
		_, err := ref.Places().AirportsByCodes(ctx, []string{"AMS"})
		reloaded <- err
	}()
	<-places.entered // the reload is under way, and held
	got, err := ref.Places().AirportsByCodes(ctx, []string{"CDG"})
	if err != nil || got[0] == nil || got[0].Code != "CDG" {
		t.Fatalf("during a reload: %v, %v; want the stale CDG", got, err)
	}
	close(places.gate)
	if err := <-reloaded; err != nil {
		t.Fatal(err)
	}
	if s := ref.snap.Load(); !s.loaded.Equal(clock) {
		t.Errorf("snapshot loaded at %v, want the reload's %v", s.loaded, clock)
	}
}
