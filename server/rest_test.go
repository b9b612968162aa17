package server_test

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// TestRESTAndGraphQLAgree reads the same flights over REST and over GraphQL and compares the
// facts both carry.
func TestRESTAndGraphQLAgree(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		key := map[string]string{"api-key": s.demo.APIKey, "Accept": "application/hal+json;charset=utf8", "Accept-Language": "nl-NL"}
		code, _, body := s.call(t, "GET", "/opendata/flightstatus?startRange=2026-11-22T05:00:00Z&endRange=2026-11-22T12:00:00Z&origin=CDG&pageSize=20", key, "")
		if code != 200 {
			t.Fatalf("REST list: %d %s", code, body)
		}
		var list struct {
			OperationalFlights []struct{ ID string }
			Page               struct{ PageSize, FullCount, PageCount, TotalPages int }
		}
		json.Unmarshal([]byte(body), &list)
		if len(list.OperationalFlights) != 20 || list.Page.FullCount < 20 || list.Page.TotalPages < 2 {
			t.Fatalf("REST list page %+v with %d flights", list.Page, len(list.OperationalFlights))
		}
		for _, f := range list.OperationalFlights[:5] {
			code, _, body := s.call(t, "GET", "/opendata/flightstatus/"+url.PathEscape(f.ID), key, "")
			if code != 200 {
				t.Fatalf("REST %s: %d %s", f.ID, code, body)
			}
			var rest struct {
				ID                 string
				FlightNumber       int
				FlightStatusPublic string
				Airline            struct{ Code string }
				FlightLegs         []struct {
					DepartureInformation, ArrivalInformation struct {
						Airport struct {
							Code   string
							City   struct{ NameLangTranl string }
							Places struct {
								GateNumber   []string
								TerminalCode string
							}
						}
						Times struct {
							Scheduled string
							Estimated struct{ Value string }
						}
					}
					Aircraft struct{ TypeCode, TypeName, SubFleetCodeID string }
				}
			}
			json.Unmarshal([]byte(body), &rest)
			resp := s.query(t, `query($id: ID!) { flight(id: $id) { id flightNumber status carrier { code }
				legs { origin { code city { name(language: NL) } } destination { code }
					departure { scheduled estimated terminal gate } arrival { scheduled estimated }
					aircraft { typeCode typeName configuration } } } }`, map[string]any{"id": f.ID})
			var g struct {
				Flight struct {
					ID           string
					FlightNumber int
					Status       string
					Carrier      struct{ Code string }
					Legs         []struct {
						Origin struct {
							Code string
							City struct{ Name string }
						}
						Destination struct{ Code string }
						Departure   struct{ Scheduled, Estimated, Terminal, Gate string }
						Arrival     struct{ Scheduled, Estimated string }
						Aircraft    struct{ TypeCode, TypeName, Configuration string }
					}
				}
			}
			json.Unmarshal(resp.Data, &g)
			gf := g.Flight
			want := rest.FlightStatusPublic // one status on both edges (TestOneFlightOneStatus)
			if rest.ID != gf.ID || rest.FlightNumber != gf.FlightNumber || rest.Airline.Code != gf.Carrier.Code || want != gf.Status || len(rest.FlightLegs) != len(gf.Legs) {
				t.Fatalf("%s: REST %+v vs GraphQL %+v", f.ID, rest, gf)
			}
			for i, rl := range rest.FlightLegs {
				gl := gf.Legs[i]
				same := func(what, a, b string) {
					if a != b {
						t.Errorf("%s leg %d %s: REST %q, GraphQL %q", f.ID, i, what, a, b)
					}
				}
				same("origin", rl.DepartureInformation.Airport.Code, gl.Origin.Code)
				same("destination", rl.ArrivalInformation.Airport.Code, gl.Destination.Code)
				same("city label", rl.DepartureInformation.Airport.City.NameLangTranl, gl.Origin.City.Name)
				same("terminal", rl.DepartureInformation.Airport.Places.TerminalCode, gl.Departure.Terminal)
				same("gate", rl.DepartureInformation.Airport.Places.GateNumber[0], gl.Departure.Gate)
				same("aircraft type", rl.Aircraft.TypeCode, gl.Aircraft.TypeCode)
				same("configuration", rl.Aircraft.SubFleetCodeID, gl.Aircraft.Configuration)
				sameInstant(t, f.ID+" scheduled departure", rl.DepartureInformation.Times.Scheduled, gl.Departure.Scheduled)
				sameInstant(t, f.ID+" estimated departure", rl.DepartureInformation.Times.Estimated.Value, gl.Departure.Estimated)
				sameInstant(t, f.ID+" scheduled arrival", rl.ArrivalInformation.Times.Scheduled, gl.Arrival.Scheduled)
				sameInstant(t, f.ID+" estimated arrival", rl.ArrivalInformation.Times.Estimated.Value, gl.Arrival.Estimated)
			}
		}
	})
}

// sameInstant compares two ISO 8601 times with offsets as instants and as local renderings.
func sameInstant(t *testing.T, what, rest, gql string) {
	t.Helper()
	a, err1 := parseAny(rest)
	b, err2 := parseAny(gql)
	if err1 != nil || err2 != nil || !a.Equal(b) || a.Format("-07:00") != b.Format("-07:00") {
		t.Errorf("%s: REST %s, GraphQL %s", what, rest, gql)
	}
}

func parseAny(s string) (t time.Time, err error) {
	return time.Parse(time.RFC3339Nano, s)
}

// TestRESTRoundTrips: a flight by id costs one query for the flight with its legs and one per
// kind of thing its document shows, plus one per header to check; as serve runs, with the
// reference snapshot, only the flight with its legs, however many headers the legacy client sends.
func TestRESTRoundTrips(t *testing.T) {
	for _, c := range []struct {
		ttl  time.Duration
		want int64
		why  string
	}{
		{0, 8, "the flight with its legs, airports, cities, countries, aircraft, carriers, and the country and host checks"},
		{store.DefaultSnapshotTTL, 1, "the flight with its legs (one statement)"},
	} {
		s := newServerWith(t, storetest.Seeded(t, store.SQLite, os.Getenv), func(cfg *serverConfig) { cfg.SnapshotTTL = c.ttl })
		h := map[string]string{"api-key": s.demo.APIKey, "svc-travel-country": "NL", "svc-travel-host": "XX", "Accept-Language": "nl-NL"}
		path := "/opendata/flightstatus/" + url.PathEscape("20261122+XX+0001")
		s.call(t, "GET", path, h, "") // warm the key cache and the snapshot
		if code, _, body := s.call(t, "GET", path, h, ""); code != 200 {
			t.Fatalf("%d %s", code, body)
		}
		if n := s.queries.Load(); n != c.want {
			t.Errorf("reference TTL %v: %d round trips for a flight by id, want %d: %s", c.ttl, n, c.want, c.why)
		}
	}
}

// TestRESTCitySearches: a city code stands for its airports in a flight search, on every page,
// and local times (timeType L) are the city's.
func TestRESTCitySearches(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	key := map[string]string{"api-key": s.demo.APIKey}
	total := func(query string) int {
		t.Helper()
		code, _, body := s.call(t, "GET", "/opendata/flightstatus?"+query, key, "")
		if code != 200 {
			t.Fatalf("%s: %d %s", query, code, body)
		}
		var doc struct {
			Page struct{ FullCount int } `json:"page"`
		}
		if err := json.Unmarshal([]byte(body), &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Page.FullCount
	}
	// Paris is Charles de Gaulle and Orly; a page past the end still counts them.
	const day = "startRange=2026-11-22T00:00:00Z&endRange=2026-11-23T00:00:00Z"
	cdg, paris := total(day+"&origin=CDG"), total(day+"&origin=PAR")
	if cdg == 0 || paris <= cdg {
		t.Fatalf("departures of the day: CDG %d, PAR %d; want PAR to add Orly's", cdg, paris)
	}
	if past := total(day + "&origin=PAR&pageSize=10&pageNumber=500"); past != paris {
		t.Errorf("a page past the end counts %d, want %d", past, paris)
	}
	// The same local morning at CDG and in Paris: CDG's flights are a part of Paris's.
	const morning = "startRange=2026-11-22T06:00&endRange=2026-11-22T10:00&timeType=L"
	cdgLocal, parisLocal := total(morning+"&origin=CDG"), total(morning+"&origin=PAR")
	if cdgLocal == 0 || parisLocal < cdgLocal || cdgLocal == total("startRange=2026-11-22T06:00:00Z&endRange=2026-11-22T10:00:00Z&origin=CDG") {
		t.Errorf("local morning: CDG %d, PAR %d; want CDG > 0, PAR >= CDG, and a window other than UTC's", cdgLocal, parisLocal)
	}
}

// TestEdgesAgreeOnPlaces: a place code is resolved once, the same way, for both edges: an
// unknown one is IATA_404.000 naming its parameter on REST and on GraphQL alike (GraphQL used to
// answer an empty list), a malformed one INSP_400.002; a city stands for its airports on both.
func TestEdgesAgreeOnPlaces(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	key := map[string]string{"api-key": s.demo.APIKey}
	const window = "startRange=2026-11-22T00:00:00Z&endRange=2026-11-23T00:00:00Z"
	for _, c := range []struct{ code, want string }{{"ZZZ", flightgraph.ECodeIATANotFound}, {"A1", flightgraph.ECodeBadFormat}} {
		_, _, body := s.call(t, "GET", "/opendata/flightstatus?"+window+"&origin="+c.code, key, "")
		if got := restCode(t, body); got != c.want {
			t.Errorf("REST origin %s: %s, want %s", c.code, got, c.want)
		}
		for _, q := range []string{`{ flights(origin: "` + c.code + `", date: "2026-11-22") { totalCount } }`, `{ routes(destination: "` + c.code + `") { totalCount } }`} {
			r := s.query(t, q, nil)
			if len(r.Errors) == 0 || r.Errors[0].Extensions["code"] != c.want || r.Errors[0].Extensions["parameter"] == nil {
				t.Errorf("%s: %s %+v, want %s naming its parameter", q, r.Data, r.Errors, c.want)
			}
		}
	}
	var d struct {
		Flights struct {
			Edges []struct {
				Node struct {
					Legs []struct{ Destination struct{ Code string } }
				}
			}
		}
	}
	r := s.query(t, `{ flights(destination: "PAR", date: "2026-11-22", first: 200) { edges { node { legs { destination { code } } } } } }`, nil)
	json.Unmarshal(r.Data, &d)
	seen := map[string]bool{}
	for _, e := range d.Flights.Edges {
		legs := e.Node.Legs
		seen[legs[len(legs)-1].Destination.Code] = true
	}
	if len(r.Errors) > 0 || !seen["CDG"] || !seen["ORY"] || len(seen) != 2 {
		t.Errorf("flights to PAR end at %v (%+v), want CDG and ORY", seen, r.Errors)
	}
}

// TestTimeOriginType: the range of a flight status search bounds the scheduled times (S, the
// default) or the latest estimates (M, I, P): a flight scheduled before the window but expected
// within it is found by the latter only.
func TestTimeOriginType(t *testing.T) {
	db := storetest.Seeded(t, store.SQLite, os.Getenv)
	s := newServer(t, db)
	flights, _, err := store.NewFlightStore(db).FindFlights(context.Background(), flightgraph.FlightFilter{
		Origin: storetest.Place(t, db, "AMS"), Date: "2026-11-22", Page: flightgraph.Page{Limit: 200}})
	if err != nil {
		t.Fatal(err)
	}
	var late *flightgraph.Flight
	var expected time.Time
	legs, err := store.NewFlightStore(db).LegsByFlightIDs(context.Background(), ids(flights))
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range flights {
		if first := legs[i][0]; first.DepartureDelay >= 30 {
			late, expected = f, first.EstimatedDeparture()
			break
		}
	}
	if late == nil {
		t.Fatal("no flight from AMS leaves 30 minutes late: the data set has no delays")
	}
	window := "startRange=" + late.DepartureUTC.Add(time.Minute).Format(time.RFC3339) + "&endRange=" + expected.Add(time.Minute).Format(time.RFC3339)
	key := map[string]string{"api-key": s.demo.APIKey}
	for typ, want := range map[string]bool{"": false, "S": false, "M": true, "I": true, "p": true} {
		var list struct{ OperationalFlights []struct{ ID string } }
		s.apiOK(t, "/opendata/flightstatus?origin=AMS&pageSize=100&"+window+"&timeOriginType="+typ, key, &list)
		found := false
		for _, f := range list.OperationalFlights {
			found = found || f.ID == late.ID
		}
		if found != want {
			t.Errorf("timeOriginType %q: %s scheduled at %v, expected at %v, found %v; want %v", typ, late.ID, late.DepartureUTC, expected, found, want)
		}
	}
}

func ids(flights []*flightgraph.Flight) []string {
	out := make([]string, len(flights))
	for i, f := range flights {
		out[i] = f.ID
	}
	return out
}

// TestFlightOperations: the data set has what legacy clients read of a flight's operation, and
// the flight status shows it: codeshares with their carriers' names, the onward flight of the
// aircraft (whose previous flight is this one), and the suffix D of a flight delayed past its
// date's midnight, which is part of its id and does not hide it from a search by number.
func TestFlightOperations(t *testing.T) {
	db := storetest.Seeded(t, store.SQLite, os.Getenv)
	s := newServer(t, db)
	key := map[string]string{"api-key": s.demo.APIKey}
	one := func(where string) string {
		t.Helper()
		var id string
		if err := storetest.SQL(t, db).QueryRow(`SELECT id FROM flights WHERE schedule_date = '2026-11-22' AND ` + where + ` ORDER BY id LIMIT 1`).Scan(&id); err != nil {
			t.Fatalf("no flight of 2026-11-22 with %s: %v", where, err)
		}
		return id
	}
	type doc struct {
		ID                 string
		FlightNumber       int
		OperationalSuffix  string
		Airline            struct{ Code string }
		CodeShareRelations []struct {
			MarketingFlightNumber int
			Code, Type            string
			Airline               struct{ Code, Name string }
		}
		FlightRelations struct {
			OnwardFlightData   *struct{ ID, FlightScheduleDate, AirlineCode, FlightNumber string }
			PreviousFlightData *struct{ ID string }
		}
	}
	get := func(id string) doc {
		t.Helper()
		var d doc
		s.apiOK(t, "/opendata/flightstatus/"+url.PathEscape(id), key, &d)
		return d
	}

	shared := get(one(`codeshares <> ''`))
	if len(shared.CodeShareRelations) == 0 {
		t.Fatalf("%s: no codeShareRelations", shared.ID)
	}
	for _, cs := range shared.CodeShareRelations {
		if cs.Airline.Code == shared.Airline.Code || cs.Airline.Name == "" || cs.MarketingFlightNumber != 5000+shared.FlightNumber || cs.Type != "PASSENGER" {
			t.Errorf("%s: codeshare %+v", shared.ID, cs)
		}
	}

	first := get(one(`onward_flight_id <> ''`))
	onward := first.FlightRelations.OnwardFlightData
	if onward == nil || onward.FlightScheduleDate != "2026-11-22" || onward.AirlineCode == "" || len(onward.FlightNumber) != 4 {
		t.Fatalf("%s: onward flight %+v", first.ID, onward)
	}
	if next := get(onward.ID); next.FlightRelations.PreviousFlightData == nil || next.FlightRelations.PreviousFlightData.ID != first.ID {
		t.Errorf("%s, the onward flight of %s, has previous flight %+v", onward.ID, first.ID, next.FlightRelations.PreviousFlightData)
	}

	delayed := get(one(`suffix = 'D'`))
	if delayed.OperationalSuffix != "D" || !strings.HasSuffix(delayed.ID, "D") {
		t.Fatalf("%s: suffix %q", delayed.ID, delayed.OperationalSuffix)
	}
	r := s.query(t, `query($c: String!, $n: Int!) { flightStatus(carrier: $c, flightNumber: $n, date: "2026-11-22") { id } }`,
		map[string]any{"c": delayed.Airline.Code, "n": delayed.FlightNumber})
	if len(r.Errors) > 0 || !strings.Contains(string(r.Data), delayed.ID) {
		t.Errorf("flightStatus by number of %s: %s %+v", delayed.ID, r.Data, r.Errors)
	}
}
