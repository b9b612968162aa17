package travel

import (
	"context"
	"fmt"
	"os"
	"reflect"
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

			// A stale snapshot is not served when the store cannot be read: the error is.
			clock = clock.Add(time.Minute)
			must(db.Close())
			if got, err = cp.AirportsByCodes(ctx, []string{"AMS"}); err == nil {
				t.Errorf("closed store, stale snapshot: %v and no error", got)
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
