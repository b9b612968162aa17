package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/graph"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// departures is the front-end team's query from the foundation issue.
const departures = `query Departures($date: Date!, $first: Int!) {
  flights(origin: "AMS", date: $date, first: $first) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { node {
      id
      flightNumber
      status
      legs {
        origin { code name city { code name country { code name } } }
        destination { code name timeZone }
        departure { scheduled estimated terminal gate }
        arrival { scheduled estimated }
        aircraft { typeCode typeName configuration
          cabins { cabinClass seats amenities { category name description } } }
      }
    } }
  }
}`

func departuresVars(first int) map[string]any {
	return map[string]any{"date": storetest.Now.Format(flightgraph.DateLayout), "first": first}
}

// filled reports the first null, empty string or empty list under v, with its path.
func filled(path string, v any) error {
	switch x := v.(type) {
	case nil:
		return fmt.Errorf("%s is null", path)
	case string:
		if x == "" {
			return fmt.Errorf("%s is empty", path)
		}
	case []any:
		if len(x) == 0 {
			return fmt.Errorf("%s is an empty list", path)
		}
		for i, e := range x {
			if err := filled(fmt.Sprintf("%s[%d]", path, i), e); err != nil {
				return err
			}
		}
	case map[string]any:
		for k, e := range x {
			if err := filled(path+"."+k, e); err != nil {
				return err
			}
		}
	}
	return nil
}

func TestDepartures(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		resp := s.query(t, departures, departuresVars(50))
		if len(resp.Errors) > 0 {
			t.Fatalf("errors: %+v", resp.Errors)
		}
		var data struct {
			Flights struct {
				TotalCount int
				PageInfo   struct{ HasNextPage bool }
				Edges      []map[string]any
			}
		}
		if err := json.Unmarshal(resp.Data, &data); err != nil {
			t.Fatal(err)
		}
		if len(data.Flights.Edges) != 50 || data.Flights.TotalCount < 300 || !data.Flights.PageInfo.HasNextPage {
			t.Fatalf("%d flights of %d (next page %v), want 50 of at least 300", len(data.Flights.Edges), data.Flights.TotalCount, data.Flights.PageInfo.HasNextPage)
		}
		var raw any
		json.Unmarshal(resp.Data, &raw)
		if err := filled("data", raw); err != nil {
			t.Fatal(err)
		}
		prefix := strings.ReplaceAll(storetest.Now.Format(flightgraph.DateLayout), "-", "") + "+"
		for _, e := range data.Flights.Edges {
			node := e["node"].(map[string]any)
			if id := node["id"].(string); !strings.HasPrefix(id, prefix) {
				t.Errorf("flight id %s does not start with %s", id, prefix)
			}
			leg := node["legs"].([]any)[0].(map[string]any)
			if leg["origin"].(map[string]any)["code"] != "AMS" {
				t.Errorf("flight %s leaves from %v", node["id"], leg["origin"])
			}
			// The status follows the clock: a flight whose estimated departure is past has left.
			dep, _ := time.Parse(time.RFC3339, leg["departure"].(map[string]any)["estimated"].(string))
			arr, _ := time.Parse(time.RFC3339, leg["arrival"].(map[string]any)["estimated"].(string))
			want := map[bool]string{true: "ARRIVED", false: "DEPARTED"}[!storetest.Now.Before(arr)]
			if status := node["status"].(string); storetest.Now.After(dep) && status != want && status != "CANCELLED" {
				t.Errorf("flight %s left %v, arrives %v, is %s at %v; want %s", node["id"], dep, arr, status, storetest.Now, want)
			} else if storetest.Now.Before(dep) && (status == "ARRIVED" || status == "DEPARTED") {
				t.Errorf("flight %s leaves %v but is %s at %v", node["id"], dep, status, storetest.Now)
			}
		}
	})
}

func TestDeparturesRoundTrips(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		counts := map[int]int64{}
		s.query(t, departures, departuresVars(1)) // authentication reads the key once, then caches it
		for _, first := range []int{5, 50, 200} {
			if resp := s.query(t, departures, departuresVars(first)); len(resp.Errors) > 0 {
				t.Fatalf("errors: %+v", resp.Errors)
			}
			counts[first] = s.queries.Load()
		}
		t.Logf("SQL round trips: first 5 → %d, first 50 → %d, first 200 → %d", counts[5], counts[50], counts[200])
		// Straight from the store: the two lookups of what AMS stands for (an airport, a city),
		// the flights, their legs, and one per kind of place and fleet record.
		if counts[5] != counts[50] || counts[50] != counts[200] || counts[50] > 10 {
			t.Fatalf("round trips: %v; want equal and at most 10", counts)
		}

		// As flightgraph serve runs it, places and the fleet come from the reference snapshot:
		// only the flights and their legs are read, within the bar of 8.
		s = newServerWith(t, storetest.Seeded(t, dialect, os.Getenv), func(c *serverConfig) { c.SnapshotTTL = store.DefaultSnapshotTTL })
		s.query(t, departures, departuresVars(1)) // loads the snapshot
		for _, first := range []int{5, 50, 200} {
			if resp := s.query(t, departures, departuresVars(first)); len(resp.Errors) > 0 {
				t.Fatalf("errors: %+v", resp.Errors)
			}
			if n := s.queries.Load(); n != 2 {
				t.Errorf("first %d with the reference snapshot: %d round trips, want 2 (flights, legs)", first, n)
			}
		}
	})
}

func TestErrorCodes(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	date := storetest.Now.Format(flightgraph.DateLayout)
	for _, c := range []struct {
		name, query, code string
	}{
		{"unknown flight", `{ flight(id: "20261122+XX+9998") { id } }`, flightgraph.ECodeFlightNotFound},
		{"malformed flight id", `{ flight(id: "AMS-CDG") { id } }`, flightgraph.ECodeBadFormat},
		{"unknown flight number", `{ flightStatus(carrier: "XX", flightNumber: 9997, date: "` + date + `") { id } }`, flightgraph.ECodeFlightNotFound},
		{"unknown airport", `{ airport(code: "ZZZ") { name } }`, flightgraph.ECodeIATANotFound},
		{"malformed airport", `{ airport(code: "A1") { name } }`, flightgraph.ECodeBadFormat},
		{"unknown city", `{ city(code: "QQQ") { code } }`, flightgraph.ECodeIATANotFound},
		{"unknown country", `{ country(code: "QQ") { code } }`, flightgraph.ECodeInvalidParameter},
		{"no filter", `{ flights { totalCount } }`, flightgraph.ECodeMissingParameter},
		{"page too large", `{ flights(origin: "AMS", first: 5000) { totalCount } }`, flightgraph.ECodeInvalidParameter},
		{"bad date", `{ flights(origin: "AMS", date: "2026-13-45") { totalCount } }`, flightgraph.ECodeBadFormat},
		{"foreign cursor", `{ flights(origin: "AMS", after: "bm9wZQ") { totalCount } }`, flightgraph.ECodeBadFormat},
		{"unknown configuration", `{ aircraft(configuration: "ZZZ") { name } }`, flightgraph.ECodeFlightConfiguration},
		{"class not on board", `{ amenities(configuration: "E90", cabinClass: FIRST) { name } }`, flightgraph.ECodeCabinClassNotOnBoard},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := s.query(t, c.query, nil)
			if len(resp.Errors) != 1 {
				t.Fatalf("errors %+v, want one", resp.Errors)
			}
			e := resp.Errors[0]
			if e.Extensions["code"] != c.code {
				t.Fatalf("code %v (%s), want %s", e.Extensions["code"], e.Message, c.code)
			}
			if int(e.Extensions["status"].(float64)) != flightgraph.Lookup(c.code).Status {
				t.Errorf("status %v, want %d", e.Extensions["status"], flightgraph.Lookup(c.code).Status)
			}
			if e.Message == "" {
				t.Error("empty message")
			}
		})
	}
}

func TestDatabaseFailureIsMasked(t *testing.T) {
	db := storetest.Seeded(t, store.SQLite, os.Getenv)
	s := newServer(t, db)
	db.Close()
	resp := s.query(t, `{ airport(code: "AMS") { name } }`, nil)
	if len(resp.Errors) != 1 || resp.Errors[0].Extensions["code"] != flightgraph.ECodeDatabase {
		t.Fatalf("errors %+v, want one %s", resp.Errors, flightgraph.ECodeDatabase)
	}
	if msg := resp.Errors[0].Message; strings.Contains(msg, "sql") || strings.Contains(msg, "closed") {
		t.Errorf("driver detail leaked to the client: %q", msg)
	}
	if !strings.Contains(s.log.String(), "database is closed") {
		t.Errorf("the cause was not logged: %s", s.log.String())
	}
}

func TestFlightByIDMatchesConnection(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	resp := s.query(t, `query($d: Date!) { flights(origin: "CDG", destination: "AMS", date: $d, first: 1) { edges { node { id designator legs { departure { scheduled } } } } } }`,
		map[string]any{"d": storetest.Now.Format(flightgraph.DateLayout)})
	var list struct {
		Flights struct {
			Edges []struct{ Node map[string]any }
		}
	}
	json.Unmarshal(resp.Data, &list)
	if len(list.Flights.Edges) != 1 {
		t.Fatalf("no CDG-AMS flight: %s %+v", resp.Data, resp.Errors)
	}
	node := list.Flights.Edges[0].Node
	one := s.query(t, `query($id: ID!) { flight(id: $id) { id designator legs { departure { scheduled } } } }`, map[string]any{"id": node["id"]})
	var got struct{ Flight map[string]any }
	json.Unmarshal(one.Data, &got)
	a, _ := json.Marshal(node)
	b, _ := json.Marshal(got.Flight)
	if string(a) != string(b) {
		t.Fatalf("flight by id %s differs from the list's %s", b, a)
	}
	if !strings.HasPrefix(node["designator"].(string), "YY") {
		t.Errorf("CDG-AMS flown by %v, want the CDG carrier YY first", node["designator"])
	}
}

func TestFederation(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	sdl := s.subgraphSDL(t)
	for _, want := range []string{`@key(fields: "id")`, `@key(fields: "code")`, "federation/v2"} {
		if !strings.Contains(sdl, want) {
			t.Errorf("subgraph SDL lacks %s", want)
		}
	}
	// A router's batch: each type costs one query, however many entities of it are asked for.
	reps := []map[string]any{{"__typename": "Airport", "code": "CDG"}, {"__typename": "AircraftConfiguration", "configuration": "77W"},
		{"__typename": "Airport", "code": "AMS"}, {"__typename": "Airport", "code": "JFK"}, {"__typename": "AircraftConfiguration", "configuration": "e90"}}
	entities := `query($r: [_Any!]!) { _entities(representations: $r) { ... on Airport { code name } ... on AircraftConfiguration { configuration typeName } } }`
	s.query(t, entities, map[string]any{"r": reps[:1]}) // authentication reads the key once, then caches it
	resp := s.query(t, entities, map[string]any{"r": reps})
	if len(resp.Errors) > 0 {
		t.Fatalf("errors: %+v", resp.Errors)
	}
	var ent struct {
		Entities []map[string]any `json:"_entities"`
	}
	json.Unmarshal(resp.Data, &ent)
	if len(ent.Entities) != 5 || ent.Entities[0]["name"] != "Paris Charles de Gaulle Airport" || ent.Entities[1]["typeName"] == nil ||
		ent.Entities[3]["code"] != "JFK" || ent.Entities[4]["configuration"] != "E90" {
		t.Fatalf("entities %+v", ent.Entities)
	}
	if n := s.queries.Load(); n >= 5 {
		t.Errorf("%d round trips for 5 entities of 2 types: entities are not batched", n)
	}
	resp = s.query(t, entities, map[string]any{"r": []map[string]any{{"__typename": "Airport", "code": "ZZZ"}}})
	if len(resp.Errors) != 1 || resp.Errors[0].Extensions["code"] != flightgraph.ECodeIATANotFound {
		t.Fatalf("unknown airport entity: %+v", resp.Errors)
	}
}

func TestLabelsAndNetwork(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	resp := s.query(t, `{ city(code: "LON") { en: name fr: name(language: FR) nl: name(language: NL) airports { code } country { code } }
		routes(origin: "AMS", destination: "JFK") { totalCount edges { node { carrier { code } distanceKm blockMinutes weeklyFlights haul } } }
		amenities(configuration: "77W", cabinClass: BUSINESS, category: SEAT) { category name } }`, nil)
	if len(resp.Errors) > 0 {
		t.Fatalf("errors: %+v", resp.Errors)
	}
	var d struct {
		City struct {
			EN, FR, NL string
			Airports   []struct{ Code string }
		}
		Routes struct {
			TotalCount int
			Edges      []struct {
				Node struct {
					DistanceKm, BlockMinutes, WeeklyFlights int
					Haul                                    string
				}
			}
		}
		Amenities []struct{ Category string }
	}
	json.Unmarshal(resp.Data, &d)
	if d.City.EN != "London" || d.City.FR != "Londres" || d.City.NL != "Londen" || len(d.City.Airports) < 2 {
		t.Errorf("London: %+v", d.City)
	}
	if d.Routes.TotalCount == 0 {
		t.Fatal("no AMS-JFK route")
	}
	r := d.Routes.Edges[0].Node
	if r.DistanceKm < 5800 || r.DistanceKm > 5900 || r.Haul != "LONG" || r.BlockMinutes < 420 || r.BlockMinutes > 540 || r.WeeklyFlights < 3 {
		t.Errorf("AMS-JFK route %+v is not realistic", r)
	}
	if len(d.Amenities) == 0 {
		t.Fatal("no business seat amenity on the 77W")
	}
	for _, a := range d.Amenities {
		if a.Category != "SEAT" {
			t.Errorf("category filter let %s through", a.Category)
		}
	}
}

func TestCyclicQueryTerminates(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	resp := s.query(t, `{ airports(city: "PAR") { edges { node { code city { airports { city { airports { code city { code } } } } } } } } }`, nil)
	if len(resp.Errors) > 0 {
		t.Fatalf("errors: %+v", resp.Errors)
	}
	if !strings.Contains(string(resp.Data), `"ORY"`) {
		t.Fatalf("PAR lacks ORY: %s", resp.Data)
	}
	if n := s.queries.Load(); n > 6 {
		t.Errorf("%d round trips for a cyclic query of depth 5; prefetching should fetch each key once", n)
	}
}

// TestRequestsThatFailBeforeExecution: a malformed request answers 400; parse and validation
// errors, with gqlgen's codes, answer 200 as application/json (GraphQL over HTTP asks it of a
// well-formed request in that media type; TestGraphQLStatusesByMediaType has the other type).
func TestRequestsThatFailBeforeExecution(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	for _, c := range []struct {
		name, body string
		status     int
		code       string
	}{
		{"malformed JSON", `{"query": `, 400, ""},
		{"parse error", `{"query": "{ flights("}`, 200, "GRAPHQL_PARSE_FAILED"},
		{"validation error", `{"query": "{ nope }"}`, 200, "GRAPHQL_VALIDATION_FAILED"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, h, body := s.call(t, "POST", "/graphql", map[string]string{"api-key": s.demo.APIKey}, c.body)
			if code != c.status || !strings.HasPrefix(h.Get("Content-Type"), "application/json") || !strings.Contains(body, `"errors"`) {
				t.Fatalf("%d %s %s", code, h.Get("Content-Type"), body)
			}
			if c.code != "" && !strings.Contains(body, c.code) {
				t.Fatalf("body lacks %s: %s", c.code, body)
			}
		})
	}
}

// TestActualTimesFollowTheClock: a leg that has left has an actual departure, one still to leave
// has none; the clock is the server's.
func TestActualTimesFollowTheClock(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	resp := s.query(t, `query($d: Date!) { flights(origin: "AMS", date: $d, first: 200) { edges { node { status legs {
		departure { estimated actual } arrival { estimated actual } } } } } }`, map[string]any{"d": storetest.Now.Format(flightgraph.DateLayout)})
	if len(resp.Errors) > 0 {
		t.Fatalf("errors: %+v", resp.Errors)
	}
	var d struct {
		Flights struct {
			Edges []struct {
				Node struct {
					Status string
					Legs   []struct {
						Departure, Arrival struct {
							Estimated string
							Actual    *string
						}
					}
				}
			}
		}
	}
	json.Unmarshal(resp.Data, &d)
	gone, coming := 0, 0
	for _, e := range d.Flights.Edges {
		leg := e.Node.Legs[0]
		est, _ := time.Parse(time.RFC3339, leg.Departure.Estimated)
		switch {
		case e.Node.Status == "CANCELLED":
			if leg.Departure.Actual != nil {
				t.Errorf("a cancelled flight has an actual departure")
			}
		case est.After(storetest.Now):
			coming++
			if leg.Departure.Actual != nil {
				t.Errorf("a flight leaving at %v has left at %v", est, *leg.Departure.Actual)
			}
		default:
			gone++
			if leg.Departure.Actual == nil || *leg.Departure.Actual != leg.Departure.Estimated {
				t.Errorf("a flight that left at %v has actual %v", est, leg.Departure.Actual)
			}
		}
	}
	if gone == 0 || coming == 0 {
		t.Fatalf("%d flights gone and %d coming: the test needs both", gone, coming)
	}
}

// TestEveryFlightPathAttachesHops asks for a flight's legs and their airports, which the loaders
// attach rather than resolve (graph/prefetch.go), through every root that hands out flights.
func TestEveryFlightPathAttachesHops(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	date := storetest.Now.Format(flightgraph.DateLayout)
	const hops = `id status legs { origin { code city { code } } destination { code } aircraft { typeCode } }`
	resp := s.query(t, `query($d: Date!) { flights(origin: "AMS", date: $d, first: 3) { edges { node { `+hops+` } } } }`, map[string]any{"d": date})
	var list struct {
		Flights struct {
			Edges []struct{ Node map[string]any }
		}
	}
	json.Unmarshal(resp.Data, &list)
	if len(resp.Errors) > 0 || len(list.Flights.Edges) != 3 {
		t.Fatalf("flights: %+v %s", resp.Errors, resp.Data)
	}
	first := list.Flights.Edges[0].Node
	id := first["id"].(string)
	fid, err := flightgraph.ParseFlightID("id", id)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		query string
		vars  map[string]any
		field string
	}{
		"flight": {`query($id: ID!) { flight(id: $id) { ` + hops + ` } }`, map[string]any{"id": id}, "flight"},
		"flightStatus": {`query($c: String!, $n: Int!, $d: Date!) { flightStatus(carrier: $c, flightNumber: $n, date: $d) { ` + hops + ` } }`,
			map[string]any{"c": fid.Carrier, "n": fid.Number, "d": fid.Date}, "flightStatus"},
		"_entities": {`query($r: [_Any!]!) { _entities(representations: $r) { ... on Flight { ` + hops + ` } } }`,
			map[string]any{"r": []map[string]any{{"__typename": "Flight", "id": id}}}, "_entities"},
	} {
		resp := s.query(t, c.query, c.vars)
		if len(resp.Errors) > 0 {
			t.Errorf("%s: %+v", name, resp.Errors)
			continue
		}
		var got map[string]any
		json.Unmarshal(resp.Data, &got)
		flight := got[c.field]
		if l, ok := flight.([]any); ok && len(l) == 1 {
			flight = l[0]
		}
		if !reflect.DeepEqual(flight, first) {
			t.Errorf("%s: %v, want the list's %v", name, flight, first)
		}
	}
}

// lagging adds latency to the real stores' legs and airport lookups, so that two root fields of
// one operation overlap their prefetches of the same keys; fail makes the first legs lookup fail
// (a transient error), and dangle gives every leg an unknown destination.
type lagging struct {
	flightgraph.FlightStore
	places       flightgraph.PlaceStore
	lag          time.Duration
	failed       atomic.Bool
	fail, dangle bool
}

func (l *lagging) LegsByFlightIDs(ctx context.Context, ids []string) ([][]*flightgraph.FlightLeg, error) {
	time.Sleep(l.lag)
	if l.fail && !l.failed.Swap(true) {
		return nil, errors.New("transient failure")
	}
	out, err := l.FlightStore.LegsByFlightIDs(ctx, ids)
	for _, legs := range out {
		for _, g := range legs {
			if l.dangle {
				g.DestinationCode = "ZZZ"
			}
		}
	}
	return out, err
}

type laggingPlaces struct {
	flightgraph.PlaceStore
	lag time.Duration
}

func (p laggingPlaces) AirportsByCodes(ctx context.Context, codes []string) ([]*flightgraph.Airport, error) {
	time.Sleep(p.lag)
	return p.PlaceStore.AirportsByCodes(ctx, codes)
}

// TestAttachedHopsWhenPrefetchesOverlapOrFail: two roots of one operation share keys (a flight,
// the hub airport), so one's prefetch finds the keys the other is still fetching; a prefetch that
// fails leaves the hop to the dataloader; a dangling code fails only the hop that names it.
func TestAttachedHopsWhenPrefetchesOverlapOrFail(t *testing.T) {
	const lag = 20 * time.Millisecond
	vars := map[string]any{"d": storetest.Now.Format(flightgraph.DateLayout)}
	const legs = `edges { node { id legs { origin { code } destination { code } } } }`
	boards := `query($d: Date!) { dep: flights(origin: "AMS", date: $d, first: 20) { ` + legs + ` }
		arr: flights(destination: "AMS", date: $d, first: 20) { ` + legs + ` } }`
	newLagging := func(t *testing.T, st *lagging) *testServer {
		return newServerWith(t, storetest.Seeded(t, store.SQLite, os.Getenv), func(c *serverConfig) {
			st.FlightStore = c.Stores.Flights
			c.Stores.Flights = st
			c.Stores.Places = laggingPlaces{c.Stores.Places, st.lag}
		})
	}

	t.Run("overlapping roots", func(t *testing.T) {
		s := newLagging(t, &lagging{lag: lag})
		for range 3 {
			resp := s.query(t, boards, vars)
			if len(resp.Errors) > 0 || strings.Count(string(resp.Data), `"origin":{"code":`) < 2*20 {
				t.Fatalf("departures and arrivals of AMS, 20 each: %+v %.300s", resp.Errors, resp.Data)
			}
		}
		resp := s.query(t, `query($d: Date!) { flights(origin: "AMS", date: $d, first: 1) { edges { node { id } } } }`, vars)
		var list struct {
			Flights struct {
				Edges []struct{ Node struct{ ID string } }
			}
		}
		if err := json.Unmarshal(resp.Data, &list); err != nil || len(list.Flights.Edges) != 1 {
			t.Fatalf("a flight from AMS: %v %s", err, resp.Data)
		}
		twice := `query($id: ID!) { a: flight(id: $id) { legs { sequence origin { code } } } b: flight(id: $id) { legs { sequence origin { code } } } }`
		for range 3 {
			resp := s.query(t, twice, map[string]any{"id": list.Flights.Edges[0].Node.ID})
			if len(resp.Errors) > 0 || strings.Count(string(resp.Data), `"origin":{"code":"AMS"}`) != 2 {
				t.Fatalf("one flight through two roots: %+v %s", resp.Errors, resp.Data)
			}
		}
	})

	t.Run("failed prefetch", func(t *testing.T) {
		s := newLagging(t, &lagging{fail: true})
		resp := s.query(t, `query($d: Date!) { flights(origin: "AMS", date: $d, first: 2) { `+legs+` } }`, vars)
		if len(resp.Errors) > 0 || !strings.Contains(string(resp.Data), `"origin":{"code":"AMS"}`) {
			t.Fatalf("legs whose prefetch failed once: %+v %.300s", resp.Errors, resp.Data)
		}
	})

	t.Run("dangling code", func(t *testing.T) {
		s := newLagging(t, &lagging{dangle: true})
		resp := s.query(t, `query($d: Date!) { flights(origin: "AMS", date: $d, first: 2) { edges { node { legs { origin { code } } } } } }`, vars)
		if len(resp.Errors) > 0 || !strings.Contains(string(resp.Data), `"origin":{"code":"AMS"}`) {
			t.Fatalf("origin of legs with a dangling destination: %+v %.300s", resp.Errors, resp.Data)
		}
		resp = s.query(t, `query($d: Date!) { flights(origin: "AMS", date: $d, first: 2) { `+legs+` } }`, vars)
		if len(resp.Errors) == 0 || resp.Errors[0].Extensions["code"] != string(flightgraph.ECodeInternal) {
			t.Fatalf("dangling destination: %+v, want an internal error", resp.Errors)
		}
		if !strings.Contains(s.log.String(), `airport \"ZZZ\" is referenced but missing`) {
			t.Errorf("the log does not say which reference dangles:\n%s", s.log)
		}
	})
}

// TestPortalIsNotInTheSubgraph: the flight subgraph's SDL, which a company's supergraph composes,
// holds nothing of the portal, and /graphql refuses the portal's operations as unknown; the
// portal answers them at /portal/graphql, behind the same guard, and knows no flight field.
func TestPortalIsNotInTheSubgraph(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	if found := portalInSubgraph(t, s.subgraphSDL(t)); len(found) > 0 {
		t.Errorf("the subgraph's SDL holds the portal's %q", found)
	}
	if found := portalInSubgraph(t, "type Query { flight: Int me: Int }\ntype Key { id: ID }"); len(found) != 2 {
		t.Errorf("the check finds %q in an SDL holding Query.me and type Key", found)
	}
	dev := s.signIn(t, s.demo.DeveloperEmail, s.demo.DeveloperPassword)
	session := map[string]string{"Authorization": "Bearer " + dev.token}
	if r := s.queryAs(t, session, `{ me { account { email } } }`, nil); len(r.Errors) == 0 || r.Errors[0].Extensions["code"] != "GRAPHQL_VALIDATION_FAILED" {
		t.Errorf("me on /graphql: %s %+v, want a validation error", r.Data, r.Errors)
	}
	var me struct {
		Me struct{ Account struct{ Email string } }
	}
	dev.do(t, `{ me { account { email } } }`, nil, &me)
	if me.Me.Account.Email != s.demo.DeveloperEmail {
		t.Errorf("me on /portal/graphql: %+v", me)
	}
	if r := s.portalAs(t, map[string]string{"api-key": s.demo.APIKey}, `{ airport(code: "AMS") { name } }`, nil); len(r.Errors) == 0 || r.Errors[0].Extensions["code"] != "GRAPHQL_VALIDATION_FAILED" {
		t.Errorf("a flight field on /portal/graphql: %s %+v, want a validation error", r.Data, r.Errors)
	}
	if r := s.portalAs(t, nil, `{ me { account { email } } }`, nil); len(r.Errors) == 0 || r.Errors[0].Extensions["code"] != flightgraph.ECodeNotSignedIn {
		t.Errorf("me without a session: %s %+v, want %s", r.Data, r.Errors, flightgraph.ECodeNotSignedIn)
	}
}

// TestGraphQLReadsThePointOfSale: the flight subgraph reads the point of sale from the headers
// REST reads it from, with REST's codes for bad ones, naming the header.
func TestGraphQLReadsThePointOfSale(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	for _, c := range []struct {
		headers map[string]string
		code    string
	}{
		{map[string]string{"svc-travel-country": "NL", "svc-travel-host": "XX", "Accept-Language": "fr-FR"}, ""},
		{map[string]string{"svc-travel-country": "NLD"}, flightgraph.ECodeBadFormat},
		{map[string]string{"svc-travel-country": "ZZ"}, flightgraph.ECodeInvalidParameter},
		{map[string]string{"svc-travel-host": "Q9"}, flightgraph.ECodeInvalidParameter},
		{map[string]string{"Accept-Language": "de-DE,de;q=0.9"}, ""}, // browsers' languages: English
		{map[string]string{"Accept-Language": "en;q=NaN"}, flightgraph.ECodeBadFormat},
	} {
		c.headers["api-key"] = s.demo.APIKey
		r := s.queryAs(t, c.headers, `{ airport(code: "AMS") { code } }`, nil)
		switch {
		case c.code == "" && len(r.Errors) > 0:
			t.Errorf("%v: %+v", c.headers, r.Errors)
		case c.code != "" && (len(r.Errors) == 0 || r.Errors[0].Extensions["code"] != c.code || r.Errors[0].Extensions["parameter"] == nil):
			t.Errorf("%v: %s %+v, want %s naming its header", c.headers, r.Data, r.Errors, c.code)
		}
	}
}

// subgraphSDL is the flight subgraph's SDL as /graphql serves it to a router (_service).
func (s *testServer) subgraphSDL(t testing.TB) string {
	t.Helper()
	resp := s.query(t, `{ _service { sdl } }`, nil)
	var svc struct {
		Service struct{ SDL string } `json:"_service"`
	}
	json.Unmarshal(resp.Data, &svc)
	if svc.Service.SDL == "" {
		t.Fatalf("no SDL: %+v", resp.Errors)
	}
	return svc.Service.SDL
}

// portalInSubgraph lists what of portal.graphql the subgraph's SDL also defines: the portal's own
// types, directives and root fields. The flight subgraph has root types of its own (its Mutation
// creates shopping carts), so the check is by name, read from the portal's schema file itself,
// and a portal field or type added later is covered without touching this test.
func portalInSubgraph(t *testing.T, sdl string) []string {
	t.Helper()
	src, err := os.ReadFile("../portal.graphql")
	if err != nil {
		t.Fatal(err)
	}
	portal, gerr := parser.ParseSchema(&ast.Source{Name: "portal.graphql", Input: string(src)})
	if gerr != nil {
		t.Fatal(gerr)
	}
	sub, gerr := parser.ParseSchema(&ast.Source{Name: "subgraph", Input: sdl})
	if gerr != nil {
		t.Fatal(gerr)
	}
	shared := map[string]bool{"Date": true, "DateTime": true, "listSize": true, "cacheControl": true, "CacheControlScope": true} // what both schemas use
	defined := map[string]map[string]bool{}
	for _, d := range append(sub.Definitions, sub.Extensions...) {
		if defined[d.Name] == nil {
			defined[d.Name] = map[string]bool{}
		}
		for _, f := range d.Fields {
			defined[d.Name][f.Name] = true
		}
	}
	var found []string
	for _, d := range portal.Definitions {
		switch fields := defined[d.Name]; {
		case d.Name == "Query" || d.Name == "Mutation":
			for _, f := range d.Fields {
				if fields[f.Name] {
					found = append(found, d.Name+"."+f.Name)
				}
			}
		case fields != nil && !shared[d.Name]:
			found = append(found, "type "+d.Name)
		}
	}
	for _, d := range portal.Directives {
		if sub.Directives.ForName(d.Name) != nil && !shared[d.Name] {
			found = append(found, "@"+d.Name)
		}
	}
	return found
}

// TestNetworkSearchesAreQueryFields: the fields an operation may select one of are the schema's
// (a renamed field would slip out of the bound unseen).
func TestNetworkSearchesAreQueryFields(t *testing.T) {
	src, err := os.ReadFile("../schema.graphql")
	if err != nil {
		t.Fatal(err)
	}
	doc, gerr := parser.ParseSchema(&ast.Source{Name: "schema.graphql", Input: string(src)})
	if gerr != nil {
		t.Fatal(gerr)
	}
	query := doc.Definitions.ForName("Query")
	for name := range graph.NetworkSearches {
		if query == nil || query.Fields.ForName(name) == nil {
			t.Errorf("graph.NetworkSearches names %s, which is no Query field", name)
		}
	}
}
