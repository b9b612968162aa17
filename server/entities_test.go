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
		_, _ = list(200)
		// The airframes that fly today's flights, as many times over as N needs: a gateway may
		// send one reference more than once.
		resp := s.query(t, `query($d: Date!) { a: flights(carrier: "XX", date: $d, first: 200) { edges { node { legs { aircraft { registration } } } } }
			b: flights(carrier: "YY", date: $d, first: 200) { edges { node { legs { aircraft { registration } } } } } }`, map[string]any{"d": date})
		var fl struct {
			A, B struct {
				Edges []struct {
					Node struct{ Legs []struct{ Aircraft *struct{ Registration string } } }
				}
			}
		}
		json.Unmarshal(resp.Data, &fl)
		seenReg := map[string]bool{}
		var regs []string
		for _, e := range append(fl.A.Edges, fl.B.Edges...) {
			for _, g := range e.Node.Legs {
				if g.Aircraft != nil && !seenReg[g.Aircraft.Registration] {
					seenReg[g.Aircraft.Registration] = true
					regs = append(regs, g.Aircraft.Registration)
				}
			}
		}
		if len(resp.Errors) > 0 || len(regs) < 50 {
			t.Fatalf("%d registrations: %+v", len(regs), resp.Errors)
		}
		const aircraftHops = `configuration typeName wifi cabins { cabinClass seats amenities { feature } }`
		s.query(t, `{ fleet { `+aircraftHops+` } }`, nil) // the first call of an API reads its plan
		s.query(t, `{ fleet { `+aircraftHops+` } }`, nil)
		fleet := s.queries.Load()
		for _, n := range []int{1, 20, 100, 200} {
			reps := make([]map[string]any, n)
			for i := range reps {
				reps[i] = map[string]any{"__typename": "Aircraft", "registration": regs[i%len(regs)]}
			}
			seen := map[int64]int{}
			for range 20 {
				resp := s.query(t, `query($r: [_Any!]!) { _entities(representations: $r) { ... on Aircraft { registration `+aircraftHops+` } } }`, map[string]any{"r": reps})
				var got struct {
					Entities []struct{ Registration, Configuration string } `json:"_entities"`
				}
				json.Unmarshal(resp.Data, &got)
				if len(resp.Errors) > 0 || len(got.Entities) != n || got.Entities[n-1].Registration != regs[(n-1)%len(regs)] || got.Entities[n-1].Configuration == "" {
					t.Fatalf("%d aircraft: %+v %.300s", n, resp.Errors, resp.Data)
				}
				seen[s.queries.Load()]++
			}
			t.Logf("%s: %d Aircraft representations (%d airframes): the fleet's root list %d statements; _entities over 20 runs %v", dialect, n, min(n, len(regs)), fleet, fmt.Sprint(seen))
			if len(seen) != 1 || seen[fleet] != 20 {
				t.Errorf("%d Aircraft representations: statements per run %v, want %d every run (the fleet's)", n, seen, fleet)
			}
		}
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
