package store_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// TestSnapshot runs the snapshot against the real stores: it answers what the stores answer,
// with no round trip once loaded, asks the store for the codes it lacks, and reloads after its TTL.
func TestSnapshot(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		db := storetest.Seeded(t, dialect, os.Getenv)
		places, fleet, network := store.NewPlaceStore(db), store.NewAircraftStore(db), store.NewNetworkStore(db)
		var logs syncBuffer
		ref := store.NewSnapshot(places, fleet, network, time.Minute, slog.New(slog.NewTextHandler(&logs, nil)))
		clock := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
		ref.SetClock(func() time.Time { return clock })
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
		_, err = storetest.SQL(t, db).ExecContext(ctx, `INSERT INTO airports (code, name, city_code, country_code, latitude, longitude, time_zone, hub)
				VALUES ('ZZZ', 'New Field', 'AMS', 'NL', 52.3, 4.7, 'Europe/Amsterdam', false)`)
		must(err)
		if got, err = cp.AirportsByCodes(ctx, []string{"ZZZ"}); err != nil || got[0] == nil || got[0].Name != "New Field" {
			t.Errorf("airport added after the load: %v, %v", got, err)
		}
		// Stale from here: the next read gets the stale snapshot at once and starts a reload
		// in the background; once it is done, the new airport is in the snapshot.
		clock = clock.Add(time.Minute)
		if n := roundTrips(func(ctx context.Context) { got, err = cp.AirportsByCodes(ctx, []string{"ZZZ", "AMS"}); must(err) }); n != 1 || got[0] == nil || got[1] == nil {
			t.Errorf("after the TTL: %d round trips, %v; want 1 (ZZZ read through) and both airports", n, got)
		}
		waitForReload(t, ref)
		if loaded := ref.LoadedAt(); !loaded.Equal(clock) {
			t.Errorf("snapshot loaded at %v, want the reload at %v", loaded, clock)
		}
		if n := roundTrips(func(ctx context.Context) { _, err = cp.AirportsByCodes(ctx, []string{"ZZZ"}); must(err) }); n != 0 {
			t.Errorf("ZZZ after the reload: %d round trips, want 0", n)
		}

		// When the store cannot be read, the stale snapshot is still served, the failed
		// reload is logged and not tried again for store.SnapshotRetry, and codes the snapshot
		// lacks report the store's error.
		clock = clock.Add(time.Minute)
		must(db.Close())
		if got, err = cp.AirportsByCodes(ctx, []string{"AMS"}); err != nil || got[0] == nil {
			t.Errorf("closed store, stale snapshot: %v, %v; want the stale AMS", got, err)
		}
		waitForReload(t, ref)
		if !strings.Contains(logs.String(), "reference data: load failed") {
			t.Errorf("the failed reload is not logged: %q", logs.String())
		}
		if retry := ref.RetryAt().Sub(clock); retry != store.SnapshotRetry {
			t.Errorf("next try in %v, want %v", retry, store.SnapshotRetry)
		}
		if got, err = cp.AirportsByCodes(ctx, []string{"QQQ"}); err == nil {
			t.Errorf("a code the snapshot lacks, closed store: %v and no error", got)
		}
		if got, err = cp.AirportsByCodes(ctx, nil); err != nil || len(got) != 0 {
			t.Errorf("no codes: %v, %v", got, err)
		}
	})
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

// within fails the test when fn does not return within a few seconds: it was waiting for a load.
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s waited for a load held elsewhere", what)
	}
}

// waitForReload returns once no load is under way.
func waitForReload(t *testing.T, r *store.Snapshot) {
	t.Helper()
	if !r.WaitForReload(10 * time.Second) {
		t.Fatal("the reload did not finish")
	}
}

// TestSnapshotLoadsDoNotBlockReaders: while the first snapshot is being loaded, other callers
// read the store; while a stale one is reloaded, every caller reads the stale one.
func TestSnapshotLoadsDoNotBlockReaders(t *testing.T) {
	db := storetest.Seeded(t, store.SQLite, os.Getenv)
	places := gatedPlaces{store.NewPlaceStore(db), make(chan struct{}, 1), make(chan struct{})}
	ref := store.NewSnapshot(places, store.NewAircraftStore(db), store.NewNetworkStore(db), time.Minute, nil)
	var (
		mu    sync.Mutex
		clock = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	ref.SetClock(now)
	ctx := context.Background()
	lookup := func(code string) {
		t.Helper()
		got, err := ref.Places().AirportsByCodes(ctx, []string{code})
		if err != nil || got[0] == nil || got[0].Code != code {
			t.Errorf("%s: %v, %v", code, got, err)
		}
	}

	first := make(chan struct{})
	go func() { defer close(first); lookup("AMS") }() // loads the first snapshot, and is held
	<-places.entered
	within(t, "a reader during the first load", func() { lookup("CDG") })
	close(places.gate)
	<-first

	places.gate = make(chan struct{})
	ref.SetPlaces(places)
	mu.Lock()
	clock = clock.Add(2 * time.Minute)
	mu.Unlock()
	within(t, "the reader that finds the snapshot stale", func() { lookup("AMS") })
	<-places.entered // the reload runs, and is held
	within(t, "a reader during the reload", func() { lookup("CDG") })
	close(places.gate)
	waitForReload(t, ref)
	if loaded := ref.LoadedAt(); !loaded.Equal(now()) {
		t.Errorf("snapshot loaded at %v, want the reload's %v", loaded, now())
	}
}

// syncBuffer is a bytes.Buffer for a logger written from a background reload.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }
