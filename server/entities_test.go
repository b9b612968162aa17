package server_test

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// flightHops is what a gateway asks of a Flight reference in TestEntityRoundTrips.
const flightHops = `id designator status carrier { code name } origin { code city { code } } destination { code }
	legs { sequence origin { code } destination { code } aircraft { typeCode registration } }`

// TestEntityRoundTrips: _entities resolves each type's representations in one batch, so the SQL
// round trips of N representations of a type are the same on every run and the same as a root
// list of N with the same selection, for 1, 20, 100 and 200 of them.
func TestEntityRoundTrips(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		date := storetest.Now.Format(flightgraph.DateLayout)
		list := func(n int) (ids []string, trips int64) {
			resp := s.query(t, `query($d: Date!, $n: Int) { flights(carrier: "XX", date: $d, first: $n) { edges { node { `+flightHops+` } } } }`,
				map[string]any{"d": date, "n": n})
			var d struct {
				Flights struct {
					Edges []struct{ Node struct{ ID string } }
				}
			}
			json.Unmarshal(resp.Data, &d)
			if len(resp.Errors) > 0 || len(d.Flights.Edges) != n {
				t.Fatalf("flights(first: %d): %d %+v", n, len(d.Flights.Edges), resp.Errors)
			}
			for _, e := range d.Flights.Edges {
				ids = append(ids, e.Node.ID)
			}
			return ids, s.queries.Load()
		}
		list(1) // authentication reads the key once, then caches it
		for _, n := range []int{1, 20, 100, 200} {
			ids, root := list(n)
			reps := make([]map[string]any, n)
			for i, id := range ids {
				reps[i] = map[string]any{"__typename": "Flight", "id": id}
			}
			seen := map[int64]int{}
			for range 20 {
				resp := s.query(t, `query($r: [_Any!]!) { _entities(representations: $r) { ... on Flight { `+flightHops+` } } }`, map[string]any{"r": reps})
				if len(resp.Errors) > 0 {
					t.Fatalf("%d flights: %+v", n, resp.Errors[0])
				}
				seen[s.queries.Load()]++
			}
			t.Logf("%s: %d Flight representations: root list %d statements; _entities over 20 runs %v", dialect, n, root, fmt.Sprint(seen))
			if len(seen) != 1 || seen[root] != 20 {
				t.Errorf("%d Flight representations: statements per run %v, want %d every run (the root list's)", n, seen, root)
			}
		}
	})
}
