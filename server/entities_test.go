package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/graph"
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
					Node struct {
						Legs []struct {
							Aircraft *struct{ Registration string }
						}
					}
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
		// The body bound holds a gateway's largest batch of Flights: 5,000 representations.
		ids, _ := list(200)
		reps := make([]map[string]any, 5_000)
		for i := range reps {
			reps[i] = map[string]any{"__typename": "Flight", "id": ids[i%len(ids)]}
		}
		big := jsonBody(`query($r: [_Any!]!) { _entities(representations: $r) { ... on Flight { id } } }`, map[string]any{"r": reps})
		if code, _, body := s.call(t, http.MethodPost, "/graphql", map[string]string{"api-key": s.demo.APIKey}, big); code != 200 || strings.Contains(body, `"errors"`) {
			t.Fatalf("5,000 Flight representations in %d bytes: %d %.300s", len(big), code, body)
		}
		t.Logf("5,000 Flight representations: %d bytes of %d", len(big), graph.MaxBodyBytes)
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

// TestEntityErrorsNameTheRepresentation: in a gateway's batch of several types, each
// representation that fails has its own error at ["_entities", i] with extensions.representation
// i and the catalogue's code, and the others resolve; Carrier, Route, FlightLeg, Aircraft (by
// registration) and AircraftConfiguration resolve through _entities.
func TestEntityErrorsNameTheRepresentation(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		date := storetest.Now.Format(flightgraph.DateLayout)
		resp := s.query(t, `query($d: Date!) { flights(carrier: "XX", date: $d, first: 1) { edges { node { id legs { id aircraft { registration configuration } } } } }
			routes(origin: "AMS", destination: "JFK") { edges { node { id } } } }`, map[string]any{"d": date})
		var d struct {
			Flights struct {
				Edges []struct {
					Node struct {
						ID   string
						Legs []struct {
							ID       string
							Aircraft struct{ Registration, Configuration string }
						}
					}
				}
			}
			Routes struct {
				Edges []struct{ Node struct{ ID string } }
			}
		}
		json.Unmarshal(resp.Data, &d)
		if len(resp.Errors) > 0 || len(d.Flights.Edges) != 1 || len(d.Routes.Edges) == 0 {
			t.Fatalf("%+v %s", resp.Errors, resp.Data)
		}
		f, leg := d.Flights.Edges[0].Node, d.Flights.Edges[0].Node.Legs[0]
		reps := []map[string]any{
			{"__typename": "Flight", "id": f.ID},                                           // 0
			{"__typename": "Flight", "id": "nonsense"},                                     // 1: bad format
			{"__typename": "Aircraft", "registration": leg.Aircraft.Registration},          // 2
			{"__typename": "Flight", "id": strings.ReplaceAll(date, "-", "") + "+XX+9999"}, // 3: no such flight
			{"__typename": "Aircraft", "registration": "PH-ZZZ"},                           // 4: not in the fleet
			{"__typename": "FlightLeg", "id": leg.ID},                                      // 5
			{"__typename": "Carrier", "code": "yy"},                                        // 6
			{"__typename": "Route", "id": d.Routes.Edges[0].Node.ID},                       // 7
			{"__typename": "AircraftConfiguration", "configuration": "77W"},                // 8
			{"__typename": "FlightLeg", "id": f.ID + "/9"},                                 // 9: no such leg
			{"__typename": "Route", "id": "XX-AMS-AMS"},                                    // 10: not flown
			{"__typename": "AircraftConfiguration", "configuration": "ZZZ"},                // 11: no such configuration
		}
		resp = s.query(t, `query($r: [_Any!]!) { _entities(representations: $r) { __typename
			... on Flight { id } ... on Aircraft { registration configuration aircraftConfiguration { configuration } }
			... on FlightLeg { id sequence } ... on Carrier { code name } ... on Route { id carrier { code } }
			... on AircraftConfiguration { configuration typeName } } }`, map[string]any{"r": reps})
		var got struct {
			Entities []map[string]any `json:"_entities"`
		}
		json.Unmarshal(resp.Data, &got)
		want := map[int]string{1: flightgraph.ECodeBadFormat, 3: flightgraph.ECodeFlightNotFound, 4: flightgraph.ECodeFlightConfiguration,
			9: flightgraph.ECodeFlightNotFound, 10: flightgraph.ECodeInvalidParameter, 11: flightgraph.ECodeFlightConfiguration}
		if len(got.Entities) != len(reps) || len(resp.Errors) != len(want) {
			t.Fatalf("%d entities, errors %+v", len(got.Entities), resp.Errors)
		}
		for _, e := range resp.Errors {
			i, _ := e.Extensions["representation"].(float64)
			if len(e.Path) != 2 || e.Path[0] != "_entities" || e.Path[1] != i || want[int(i)] == "" || e.Extensions["code"] != want[int(i)] {
				t.Errorf("error %+v: want one at [_entities, i] for each of %v", e, want)
			}
			delete(want, int(i))
		}
		for i, e := range got.Entities {
			if (e == nil) != (map[int]bool{1: true, 3: true, 4: true, 9: true, 10: true, 11: true}[i]) {
				t.Errorf("entity %d: %v", i, e)
			}
		}
		if a := got.Entities[2]; a["registration"] != leg.Aircraft.Registration || a["configuration"] != leg.Aircraft.Configuration ||
			a["aircraftConfiguration"].(map[string]any)["configuration"] != leg.Aircraft.Configuration {
			t.Errorf("aircraft %v, want %+v", a, leg.Aircraft)
		}
		if got.Entities[5]["id"] != leg.ID || got.Entities[6]["code"] != "YY" || got.Entities[7]["id"] != d.Routes.Edges[0].Node.ID || got.Entities[8]["typeName"] == nil {
			t.Errorf("entities %v", got.Entities)
		}
	})
}
