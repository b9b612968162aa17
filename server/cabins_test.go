package server_test

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// TestCabinsServedInLine: an airframe's cabins and a cabin's amenities are attached by the
// loaders (graph.Loaders.Airframes) and read in line, not by resolvers; reached from a leg, from
// an _entities Aircraft and from an AircraftConfiguration, a cabin's amenities(category:) are its
// product's amenities of that category, in their order, and all of them without the argument.
func TestCabinsServedInLine(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	type cabin struct {
		CabinClass string
		All        []struct{ Category, Name string }
		Meal       []struct{ Category, Name string }
	}
	const cabins = `cabins { cabinClass all: amenities { category name } meal: amenities(category: MEAL) { category name } }`
	check := func(where string, cs []cabin) {
		t.Helper()
		if len(cs) == 0 {
			t.Fatalf("%s: no cabins", where)
		}
		for _, c := range cs {
			var want []struct{ Category, Name string }
			for _, a := range c.All {
				if a.Category == "MEAL" {
					want = append(want, a)
				}
			}
			if len(c.All) == 0 || len(want) == 0 || !slices.Equal(c.Meal, want) {
				t.Errorf("%s: %s cabin: amenities(category: MEAL) %v, want %v of %v", where, c.CabinClass, c.Meal, want, c.All)
			}
		}
	}

	resp := s.query(t, `query($date: Date!) { flights(origin: "AMS", date: $date, first: 3) { edges { node { legs {
		aircraft { registration `+cabins+` } aircraftConfiguration { configuration `+cabins+` } } } } } }`, departuresVars(3))
	var board struct {
		Flights struct {
			Edges []struct {
				Node struct {
					Legs []struct {
						Aircraft struct {
							Registration string
							Cabins       []cabin
						}
						AircraftConfiguration struct {
							Configuration string
							Cabins        []cabin
						}
					}
				}
			}
		}
	}
	if err := json.Unmarshal(resp.Data, &board); err != nil || len(resp.Errors) > 0 || len(board.Flights.Edges) != 3 {
		t.Fatalf("board: %v %+v %s", err, resp.Errors, resp.Data)
	}
	var regs []string
	for _, e := range board.Flights.Edges {
		for _, l := range e.Node.Legs {
			check("FlightLeg.aircraft "+l.Aircraft.Registration, l.Aircraft.Cabins)
			check("FlightLeg.aircraftConfiguration "+l.AircraftConfiguration.Configuration, l.AircraftConfiguration.Cabins)
			regs = append(regs, l.Aircraft.Registration)
		}
	}

	reps := []map[string]any{}
	for _, r := range regs {
		reps = append(reps, map[string]any{"__typename": "Aircraft", "registration": r})
	}
	resp = s.query(t, `query($r: [_Any!]!) { _entities(representations: $r) { ... on Aircraft { registration `+cabins+` } } }`, map[string]any{"r": reps})
	var ents struct {
		Entities []struct {
			Registration string
			Cabins       []cabin
		} `json:"_entities"`
	}
	if err := json.Unmarshal(resp.Data, &ents); err != nil || len(resp.Errors) > 0 || len(ents.Entities) != len(regs) {
		t.Fatalf("_entities: %v %+v %s", err, resp.Errors, resp.Data)
	}
	for _, a := range ents.Entities {
		check("_entities Aircraft "+a.Registration, a.Cabins)
	}
}
