package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// touches counts the reads of each store of flight data: the ground truth of what an execution
// touched, whatever the GraphQL layer believes it admitted.
type touches struct{ flights, places, aircraft, network atomic.Int64 }

func (t *touches) reset() {
	t.flights.Store(0)
	t.places.Store(0)
	t.aircraft.Store(0)
	t.network.Store(0)
}

type touchedFlights struct {
	flightgraph.FlightStore
	t *touches
}

func (s touchedFlights) FlightsByIDs(ctx context.Context, ids []string) ([]*flightgraph.Flight, error) {
	s.t.flights.Add(1)
	return s.FlightStore.FlightsByIDs(ctx, ids)
}

func (s touchedFlights) FindFlights(ctx context.Context, f flightgraph.FlightFilter) ([]*flightgraph.Flight, int, error) {
	s.t.flights.Add(1)
	return s.FlightStore.FindFlights(ctx, f)
}

func (s touchedFlights) LegsByFlightIDs(ctx context.Context, ids []string) ([][]*flightgraph.FlightLeg, error) {
	s.t.flights.Add(1)
	return s.FlightStore.LegsByFlightIDs(ctx, ids)
}

type touchedPlaces struct {
	flightgraph.PlaceStore
	t *touches
}

func (s touchedPlaces) AirportsByCodes(ctx context.Context, codes []string) ([]*flightgraph.Airport, error) {
	s.t.places.Add(1)
	return s.PlaceStore.AirportsByCodes(ctx, codes)
}

func (s touchedPlaces) CitiesByCodes(ctx context.Context, codes []string) ([]*flightgraph.City, error) {
	s.t.places.Add(1)
	return s.PlaceStore.CitiesByCodes(ctx, codes)
}

func (s touchedPlaces) CountriesByCodes(ctx context.Context, codes []string) ([]*flightgraph.Country, error) {
	s.t.places.Add(1)
	return s.PlaceStore.CountriesByCodes(ctx, codes)
}

func (s touchedPlaces) FindAirports(ctx context.Context, f flightgraph.AirportFilter) ([]*flightgraph.Airport, int, error) {
	s.t.places.Add(1)
	return s.PlaceStore.FindAirports(ctx, f)
}

func (s touchedPlaces) AirportsByCities(ctx context.Context, codes []string) ([][]*flightgraph.Airport, error) {
	s.t.places.Add(1)
	return s.PlaceStore.AirportsByCities(ctx, codes)
}

func (s touchedPlaces) Airports(ctx context.Context) ([]*flightgraph.Airport, error) {
	s.t.places.Add(1)
	return s.PlaceStore.Airports(ctx)
}

func (s touchedPlaces) Cities(ctx context.Context) ([]*flightgraph.City, error) {
	s.t.places.Add(1)
	return s.PlaceStore.Cities(ctx)
}

func (s touchedPlaces) Countries(ctx context.Context) ([]*flightgraph.Country, error) {
	s.t.places.Add(1)
	return s.PlaceStore.Countries(ctx)
}

type touchedAircraft struct {
	flightgraph.AircraftStore
	t *touches
}

func (s touchedAircraft) AircraftByConfigurations(ctx context.Context, codes []string) ([]*flightgraph.Aircraft, error) {
	s.t.aircraft.Add(1)
	return s.AircraftStore.AircraftByConfigurations(ctx, codes)
}

func (s touchedAircraft) CabinsByConfigurations(ctx context.Context, codes []string) ([][]*flightgraph.Cabin, error) {
	s.t.aircraft.Add(1)
	return s.AircraftStore.CabinsByConfigurations(ctx, codes)
}

func (s touchedAircraft) AmenitiesByProducts(ctx context.Context, products []string) ([][]*flightgraph.Amenity, error) {
	s.t.aircraft.Add(1)
	return s.AircraftStore.AmenitiesByProducts(ctx, products)
}

func (s touchedAircraft) AllAircraft(ctx context.Context) ([]*flightgraph.Aircraft, error) {
	s.t.aircraft.Add(1)
	return s.AircraftStore.AllAircraft(ctx)
}

type touchedNetwork struct {
	flightgraph.NetworkStore
	t *touches
}

func (s touchedNetwork) FindRoutes(ctx context.Context, f flightgraph.RouteFilter) ([]*flightgraph.Route, int, error) {
	s.t.network.Add(1)
	return s.NetworkStore.FindRoutes(ctx, f)
}

func (s touchedNetwork) CarriersByCodes(ctx context.Context, codes []string) ([]*flightgraph.Carrier, error) {
	s.t.network.Add(1)
	return s.NetworkStore.CarriersByCodes(ctx, codes)
}

func (s touchedNetwork) Carriers(ctx context.Context) ([]*flightgraph.Carrier, error) {
	s.t.network.Add(1)
	return s.NetworkStore.Carriers(ctx)
}

func (s touchedNetwork) FindSchedule(ctx context.Context, f flightgraph.ScheduleFilter) ([]*flightgraph.ScheduledLeg, int, error) {
	s.t.network.Add(1)
	return s.NetworkStore.FindSchedule(ctx, f)
}

func (s touchedNetwork) AllRoutes(ctx context.Context) ([]*flightgraph.Route, error) {
	s.t.network.Add(1)
	return s.NetworkStore.AllRoutes(ctx)
}

// opGen turns fuzz bytes into a GraphQL request, deterministically: every choice reads a byte.
type opGen struct {
	in        []byte
	fragments []string
	depth     int
	aliases   int
}

func (g *opGen) next() byte {
	if len(g.in) == 0 {
		return 0
	}
	b := g.in[0]
	g.in = g.in[1:]
	return b
}

func (g *opGen) pick(options ...string) string { return options[int(g.next())%len(options)] }

// rootFields are the Query fields, each with a selection of its type.
var rootFields = []string{
	`flight(id: "20261122+XX+0001") { id legs { origin { code } aircraft { typeName } } }`,
	`flights(origin: "AMS", date: "2026-11-22", first: 2) { totalCount edges { node { id carrier { name } } } }`,
	`flightStatus(carrier: "XX", flightNumber: 1, date: "2026-11-22") { id status }`,
	`airport(code: "AMS") { name city { name } country { name } }`,
	`airports(first: 2) { edges { node { code name } } }`,
	`city(code: "PAR") { name airports { code } }`,
	`cities { code }`,
	`country(code: "NL") { name }`,
	`countries { code }`,
	`aircraft(configuration: "77W") { typeName cabins { cabinClass } }`,
	`fleet { configuration }`,
	`amenities(configuration: "77W") { name }`,
	`routes(first: 2) { edges { node { distanceKm origin { code } carrier { code } } } }`,
	`carriers { code hub { code } }`,
	`me { account { email } }`,
	`apis { slug }`,
	`__typename`,
	`__schema { queryType { name } }`,
	`__type(name: "Flight") { name }`,
	`_service { sdl }`,
}

// entityTypes are __typenames a representation may carry, real entities and not.
var entityTypes = []string{`"Flight", id: "20261122+XX+0001"`, `"Airport", code: "AMS"`, `"City", code: "PAR"`,
	`"Country", code: "NL"`, `"Aircraft", configuration: "77W"`, `"Aircraft", registration: "PH-HAA"`, `"AircraftConfiguration", configuration: "77W"`,
	`"Carrier", code: "XX"`, `"Route", id: "XX-AMS-JFK"`, `"FlightLeg", id: "20261122+XX+0001/1"`, `"Nope"`, `"flight", id: "x"`,
	`"Airport"`, `"Country", code: null`, `1, code: "NL"`, `"City", code: {a: 1}`}

func (g *opGen) directive() string {
	return g.pick("", "", "", " @skip(if: false)", " @skip(if: true)", " @include(if: true)", " @include(if: false)", " @include(if: $v)", " @skip(if: $v)")
}

func (g *opGen) entities() string {
	var reps []string
	for range 1 + int(g.next()%3) {
		reps = append(reps, "{__typename: "+g.pick(entityTypes...)+"}")
	}
	sel := g.pick(`... on Flight { id }`, `... on Airport { name }`, `__typename`, `... on _Entity { ... on City { name } }`,
		`...E`, `... { ... on Aircraft { typeName } }`)
	if sel == "...E" {
		g.fragments = append(g.fragments, "fragment E on _Entity { ... on Country { name } ... on Flight { designator } }")
	}
	list := "[" + strings.Join(reps, ", ") + "]"
	switch g.next() % 4 {
	case 0:
		list = reps[0] // one object stands for a list of one
	case 1:
		list = `["` + g.pick("x", "Flight") + `"]`
	}
	return "_entities(representations: " + list + ") { " + sel + " }"
}

// selection returns a selection set's content on Query.
func (g *opGen) selection() string {
	g.depth++
	defer func() { g.depth-- }()
	var out []string
	for range 1 + int(g.next()%3) {
		switch k := g.next() % 8; {
		case k < 4 || g.depth > 4:
			f := g.pick(rootFields...)
			if g.next()%5 == 0 {
				f = g.entities()
			}
			if g.next()%3 == 0 {
				g.aliases++
				f = fmt.Sprintf("a%d: %s", g.aliases, f)
			}
			out = append(out, f+g.directive())
		case k < 6:
			out = append(out, g.pick("... on Query", "...")+g.directive()+" { "+g.selection()+" }")
		default:
			name := fmt.Sprintf("F%d", len(g.fragments))
			g.fragments = append(g.fragments, "") // reserve the name: fragments nest
			i := len(g.fragments) - 1
			g.fragments[i] = "fragment " + name + " on Query { " + g.selection() + " }"
			out = append(out, "..."+name+g.directive())
		}
	}
	return strings.Join(out, " ")
}

// request returns the body of a generated operation, or, when get, its URL query.
func (g *opGen) request() (body string, get bool) {
	op := "query($v: Boolean = " + g.pick("true", "false") + ") { " + g.selection() + " }"
	doc := op + " " + strings.Join(g.fragments, " ")
	name := ""
	if g.next()%4 == 0 {
		doc = "query Other { __typename } " + strings.Replace(doc, "query(", "query Main(", 1)
		name = g.pick("Main", "Other", "")
	}
	switch g.next() % 8 {
	case 1:
		return url.Values{"query": {doc}, "operationName": {name}}.Encode(), true
	case 2:
		b, _ := json.Marshal(doc)
		return `{"query":"{ __typename }","QUERY":` + string(b) + `,"operationName":"` + name + `"}`, false
	}
	b, _ := json.Marshal(map[string]any{"query": doc, "operationName": name})
	return string(b), false
}

// FuzzGate generates operations (root fields, aliases, fragments nested and spread, directives
// with literals and variables, entities of every typename, several operations, GET and odd
// bodies) and sends each as callers approved for less than everything. Every product an
// execution touches must have been charged to the caller: an anonymous call reads no flight
// data at all, a key approved for schedule reads no flights and no fleet, one approved for
// opendata no flights, fleet or network. No answer is a 500, and none logs an ERROR line: not a
// defect of the second line, nor a client's fault taken for the server's.
func FuzzGate(f *testing.F) {
	t := &touches{}
	s := newServerWith(f, storetest.Seeded(f, store.SQLite, os.Getenv), func(c *serverConfig) {
		c.Stores.Flights = touchedFlights{c.Stores.Flights, t}
		c.Stores.Places = touchedPlaces{c.Stores.Places, t}
		c.Stores.Aircraft = touchedAircraft{c.Stores.Aircraft, t}
		c.Stores.Network = touchedNetwork{c.Stores.Network, t}
	})
	callers := []struct {
		name    string
		headers map[string]string
		allowed func(t *touches) bool
	}{
		{"anonymous", nil, func(t *touches) bool {
			return t.flights.Load()+t.places.Load()+t.aircraft.Load()+t.network.Load() == 0
		}},
		{"schedule key", map[string]string{"api-key": keyFor(f, s, "schedule")}, func(t *touches) bool {
			return t.flights.Load()+t.aircraft.Load() == 0
		}},
		{"opendata key", map[string]string{"api-key": keyFor(f, s, "opendata")}, func(t *touches) bool {
			return t.flights.Load()+t.aircraft.Load()+t.network.Load() == 0
		}},
	}
	for _, seed := range []string{"", "\x00\x01\x02", "\x05\x05\x05\x05", "\x07\x01\x12\x03\x00\x04", "\x02\x06\x07\x07\x07\x01\x10\x00",
		"\x03\x04\x05\x00\x04\x01\x02\x03", "\xff\xfe\xfd\xfc\xfb\xfa", "\x00\x00\x00\x00\x00\x01\x00\x02\x03", "\x01\x04\x01\x00\x05\x01\x00\x01\x00\x03"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(tt *testing.T, in []byte) {
		g := &opGen{in: in}
		body, get := g.request()
		logged := len(s.log.String())
		for _, c := range callers {
			t.reset()
			var req *http.Request
			if get {
				req = httptest.NewRequest(http.MethodGet, "/graphql?"+body, nil)
			} else {
				req = httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
			}
			for k, v := range c.headers {
				req.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			s.srv.ServeHTTP(w, req)
			if w.Code == http.StatusInternalServerError {
				tt.Fatalf("%s: 500 for %s:\n%s", c.name, body, w.Body)
			}
			if !c.allowed(t) {
				tt.Fatalf("%s touched flights %d, places %d, fleet %d, network %d for %s:\n%d %s", c.name,
					t.flights.Load(), t.places.Load(), t.aircraft.Load(), t.network.Load(), body, w.Code, w.Body)
			}
		}
		if log := s.log.String()[logged:]; strings.Contains(log, "level=ERROR") {
			tt.Fatalf("a client's request logged an error (a defect, or its fault taken for the server's), for %s:\n%s", body, log)
		}
	})
}
