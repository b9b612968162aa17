package travel_test

import (
	"context"
	"encoding/json"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
	"github.com/flightgraph/flightgraph/travel"
)

// TestIndexIsTheSearchAtEveryInstant: with the fare index, all deals from a hub (today and the
// next two days: flights leave the booking lead as the clock moves), the metasearch feed and a
// month's inspiration to one destination are, at every instant of a day the clock walks through,
// the answers of the same service without the index at that instant (which reads and prices
// everything again): the index's cells are priced again when their prices move, and today's trips
// planned again when their first flights stop being sold. The second call at an instant reads
// nothing.
func TestIndexIsTheSearchAtEveryInstant(t *testing.T) {
	e := newEngine(t, store.SQLite)
	if e.Index == nil {
		t.Fatal("the engine has no fare index")
	}
	plain := *e.Service
	plain.Index = nil
	ctx := context.Background()
	interval := day(0) + "/" + day(2)
	calls := []struct {
		name string
		call func(s *travel.Service, ctx context.Context) (any, error)
	}{
		{"all deals from AMS", func(s *travel.Service, ctx context.Context) (any, error) {
			return s.AllDeals(ctx, &flightgraph.DealQuery{Origin: "AMS", DateInterval: interval, Limit: flightgraph.MaxDestinations})
		}},
		{"the feed from BCN", func(s *travel.Service, ctx context.Context) (any, error) {
			return s.BestOffersFeed(ctx, &flightgraph.DealQuery{Origin: "BCN", Destinations: []string{"PAR", "NYC", "LON"}, DateInterval: interval, Currency: "USD", Limit: 1,
				Passengers: []flightgraph.Passenger{{ID: 1, Type: "ADT"}, {ID: 2, Type: "CHD"}}})
		}},
		{"BCN to NYC this month", func(s *travel.Service, ctx context.Context) (any, error) {
			return s.Inspiration(ctx, &flightgraph.InspirationQuery{Origin: "BCN", Destination: "NYC", Month: inspirationMonth, Cabin: flightgraph.CabinEconomy, Limit: 1})
		}},
	}
	for _, step := range []time.Duration{0, time.Minute, 11 * time.Minute, 47 * time.Minute, 2*time.Hour + 3*time.Minute, 3*time.Hour + 31*time.Minute, 6 * time.Hour, 9*time.Hour + 59*time.Minute, 13 * time.Hour} {
		e.now = storetest.Now.Add(step)
		for _, c := range calls {
			want, err := c.call(&plain, ctx)
			if err != nil {
				t.Fatalf("%s at +%s, without the index: %v", c.name, step, err)
			}
			for i := range 2 {
				counted := store.WithQueryCounter(ctx)
				got, err := c.call(e.Service, counted)
				if err != nil {
					t.Fatalf("%s at +%s: %v", c.name, step, err)
				}
				if g, w := jsonString(t, got), jsonString(t, want); g != w {
					t.Fatalf("%s at +%s (call %d): the index answers\n%.600s\nthe search\n%.600s", c.name, step, i+1, g, w)
				}
				if n := store.QueryCount(counted); i == 1 && n != 0 {
					t.Errorf("%s at +%s: the second call read %d times", c.name, step, n)
				}
			}
		}
	}
	if entries, flights := e.Index.Held(); entries != 3 || flights == 0 {
		t.Errorf("the index holds %d entries, %d flights; want the 3 reads", entries, flights)
	}
}

func jsonString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// BenchmarkFareIndexMemory reports what the fare index holds for the inspirations of next month
// from a spoke (BCN) and a hub (AMS), and the p50 of a warm call: the heap the index keeps after a
// collection (MiB), its candidate flights, and the bytes per flight.
func BenchmarkFareIndexMemory(b *testing.B) {
	e := newEngine(b, store.SQLite)
	ctx := context.Background()
	month := storetest.Now.AddDate(0, 1, 0).Format(flightgraph.MonthLayout)
	ask := func(origin string) {
		if _, err := e.Inspiration(ctx, &flightgraph.InspirationQuery{Origin: origin, Month: month, Cabin: flightgraph.CabinEconomy, Limit: flightgraph.MaxDestinations}); err != nil {
			b.Fatal(err)
		}
	}
	ask("PAR") // the snapshot and the horizon's schedule, which the index does not hold
	e.Index = &travel.FareIndex{}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ask("BCN")
	ask("AMS")
	runtime.GC()
	runtime.ReadMemStats(&after)
	_, flights := e.Index.Held()
	held := float64(after.HeapAlloc) - float64(before.HeapAlloc)
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		ask("BCN")
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(held/(1<<20), "held-MiB")
	b.ReportMetric(float64(flights), "flights")
	b.ReportMetric(held/float64(flights), "B/flight")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "warm-p50-ms")
}
