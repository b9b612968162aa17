package server_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/flightgraph/flightgraph/store/storetest"
)

// searchContextTrips is the most round trips of a search context with its places' and hubs'
// airports, cities and countries: what the context reads itself, and one per hop under it; 12
// when the root does not prime the airports it hands out, whose lists then read them one by one.
const searchContextTrips = 10

// TestListHopsArePrefetched: a root field that hands out a list primes or prefetches what its
// elements' fields load (graph.PrimeAll, PrefetchSchedule), so that the lists, marshalled in
// line (graph/lists.go), wait on nothing: one round trip per hop, whatever the schedule. Were
// the carriers' hubs not prefetched, the first carrier's hub would be read alone, with its city
// and country under it, and then the others': 7 round trips, not 4 (carriers, airports, cities,
// countries); under gqlgen's goroutines the cities' and the schedule's varied with scheduling
// (3–8 and 8–27).
func TestListHopsArePrefetched(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		s.query(t, `{ airport(code: "AMS") { code } }`, nil) // authentication reads the key once, then caches it
		key := map[string]string{"api-key": s.demo.APIKey}
		bearer := map[string]string{"Authorization": "Bearer " + s.bearerToken(t, "")} // the offers API's
		for _, c := range []struct {
			name, q string
			max     int64 // the most round trips after the first run
			oauth   bool
		}{
			{"carriers.hub", `{ carriers { code hub { code city { code country { code } } } } }`, 4, false},
			{"cities.country", `{ cities { code country { code } airports { code } } }`, 3, false},
			// the place AMS, the page and its count, carriers and airports, their hubs and cities
			{"schedule", `{ scheduledFlights(origin: "AMS", first: 50) { edges { node { carrier { code hub { code } } origin { code } destination { code city { code } } } } } }`, 5, false},
			// the places' airports and cities and the hubs' come from the reference snapshot
			{"searchContext", `{ searchContext(origin: "PAR", destination: "NYC") { origin { airports { code city { code country { code } } } } destination { city { code } airports { code } } connections { via { code city { code } } } } }`, searchContextTrips, true},
		} {
			headers := key
			if c.oauth {
				headers = bearer
			}
			var counts []int64
			for i := range 5 {
				// an operation name of its own each time: no answer is kept for a later run
				resp := s.queryAs(t, headers, fmt.Sprintf("query Q%d %s", i, c.q), nil)
				if len(resp.Errors) > 0 {
					t.Fatalf("%s: %+v", c.name, resp.Errors)
				}
				counts = append(counts, s.queries.Load())
			}
			t.Logf("%s: SQL round trips %v", c.name, counts)
			for _, n := range counts[1:] {
				if n > c.max {
					t.Errorf("%s: %d SQL round trips (runs %v), want at most %d: one per hop", c.name, n, counts, c.max)
					break
				}
			}
		}
	})
}
