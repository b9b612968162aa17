package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// restErrorCase is one error the REST layer must answer: the request, and the code, status and
// parameter of the one error of the answer.
type restErrorCase struct {
	name      string
	path      string
	headers   map[string]string // on top of the demo api-key; "api-key": "" drops it
	code      string
	parameter string // the error's parameter, when it must name one
}

// restError is the REST error body, every field of it.
type restError struct {
	Errors []struct {
		Code        string  `json:"code"`
		Name        string  `json:"name"`
		Description string  `json:"description"`
		Severity    string  `json:"severity"`
		Parameter   *string `json:"parameter"`
	} `json:"errors"`
}

// checkRESTError calls c on s and checks the answer: the catalogue's status for the code, the
// OpenAPI document's shape, exactly one error with the code, the catalogue's name, a description
// and severity ERROR. It returns the answer.
func (s *testServer) checkRESTError(t *testing.T, c restErrorCase) (http.Header, restError) {
	t.Helper()
	headers := map[string]string{"api-key": s.demo.APIKey}
	for k, v := range c.headers {
		headers[k] = v
	}
	if headers["api-key"] == "" {
		delete(headers, "api-key")
	}
	status, h, body := s.call(t, http.MethodGet, c.path, headers, "")
	want := flightgraph.Lookup(c.code)
	if want.Code != c.code {
		t.Fatalf("%s is not in the catalogue", c.code)
	}
	var b restError
	dec := json.NewDecoder(strings.NewReader(body))
	if err := dec.Decode(&b); err != nil {
		t.Fatalf("GET %s: %d, not JSON: %v\n%s", c.path, status, err, body)
	}
	if status != want.Status || len(b.Errors) != 1 || b.Errors[0].Code != c.code {
		t.Fatalf("GET %s: %d %s, want %d with the one error %s", c.path, status, body, want.Status, c.code)
	}
	e := b.Errors[0]
	if e.Name != want.Name || e.Description == "" || e.Severity != "ERROR" {
		t.Errorf("GET %s: error %+v, want name %s, a description and severity ERROR", c.path, e, want.Name)
	}
	if c.parameter != "" && (e.Parameter == nil || *e.Parameter != c.parameter) {
		got := "none"
		if e.Parameter != nil {
			got = *e.Parameter
		}
		t.Errorf("GET %s: parameter %s, want %s", c.path, got, c.parameter)
	}
	if ct := baseMediaType(h.Get("Content-Type")); ct != "application/json" {
		t.Errorf("GET %s: error content type %s, want application/json", c.path, ct)
	}
	return h, b
}

// rebind turns ? placeholders into the dialect's.
func rebindFixture(db *store.DB, q string) string {
	if db.Dialect() != store.Postgres {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// exec runs a statement on the test's database, failing the test on error.
func (s *testServer) execFixture(t *testing.T, q string, args ...any) {
	t.Helper()
	if _, err := s.rawDB(t).Exec(rebindFixture(s.db, q), args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// Fixtures the seeded data set has no example of.
const (
	fixtureFlightNumber  = 9876  // an XX flight of 2026-11-22 flown by configuration ZZZ, which the fleet lacks
	fixtureNoCabins      = "ZC0" // a configuration without cabins
	fixtureNoContent     = "ZP0" // a configuration whose one cabin's product has no amenities
	fixtureEmptyProduct  = "ZZ-EMPTY"
	unknownFlightNumber  = 9998
	unknownConfiguration = "ZZZ"
)

// insertErrorFixtures adds the fixtures, through the database as an outsider would.
func (s *testServer) insertErrorFixtures(t *testing.T) {
	t.Helper()
	var src string
	if err := s.rawDB(t).QueryRow(rebindFixture(s.db, `SELECT id FROM flights WHERE schedule_date = ? AND carrier = ? ORDER BY id LIMIT 1`), "2026-11-22", "XX").Scan(&src); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{fixtureFlightNumber, unknownFlightNumber} {
		var count int
		if err := s.rawDB(t).QueryRow(rebindFixture(s.db, `SELECT COUNT(*) FROM flights WHERE carrier = ? AND number = ?`), "XX", n).Scan(&count); err != nil || count != 0 {
			t.Fatalf("flight number %d of XX is taken (%d, %v): pick another for the fixtures", n, count, err)
		}
	}
	id := flightgraph.FlightID{Date: "2026-11-22", Carrier: "XX", Number: fixtureFlightNumber}.String()
	s.execFixture(t, `INSERT INTO flights (id, schedule_date, carrier, number, suffix, origin, destination, departure_utc, arrival_utc, haul, est_departure_utc, est_arrival_utc)
		SELECT ?, schedule_date, carrier, ?, suffix, origin, destination, departure_utc, arrival_utc, haul, est_departure_utc, est_arrival_utc FROM flights WHERE id = ?`, id, fixtureFlightNumber, src)
	s.execFixture(t, `INSERT INTO flight_legs (flight_id, seq, origin, destination, scheduled_departure, scheduled_arrival, departure_offset,
			arrival_offset, departure_delay, arrival_delay, cancelled, departure_terminal, departure_gate, arrival_terminal, arrival_gate,
			configuration, registration, service_type, distance_km)
		SELECT ?, seq, origin, destination, scheduled_departure, scheduled_arrival, departure_offset,
			arrival_offset, departure_delay, arrival_delay, cancelled, departure_terminal, departure_gate, arrival_terminal, arrival_gate,
			?, registration, service_type, distance_km FROM flight_legs WHERE flight_id = ?`, id, unknownConfiguration, src)
	s.execFixture(t, `INSERT INTO aircraft (code, type_code, carrier, name, wifi, layout) VALUES (?, ?, ?, ?, ?, ?)`,
		fixtureNoCabins, "77W", "XX", "777-300ER awaiting its cabin", false, "")
	s.execFixture(t, `INSERT INTO cabin_products (code, class) VALUES (?, ?)`, fixtureEmptyProduct, "ECONOMY")
	s.execFixture(t, `INSERT INTO aircraft (code, type_code, carrier, name, wifi, layout) VALUES (?, ?, ?, ?, ?, ?)`,
		fixtureNoContent, "E90", "XX", "Embraer 190 without content", false, "Y100")
	s.execFixture(t, `INSERT INTO cabins (configuration, class, position, seats, product) VALUES (?, ?, ?, ?, ?)`,
		fixtureNoContent, "ECONOMY", 1, 100, fixtureEmptyProduct)
}

// TestRESTErrorCodes produces every error code of the REST routes through the real server and
// checks each answer: status, shape and the OpenAPI document.
func TestRESTErrorCodes(t *testing.T) {
	const (
		rng  = "startRange=2026-11-22T06:00:00Z&endRange=2026-11-22T12:00:00Z"
		list = "/opendata/flightstatus?" + rng + "&origin=AMS"
		amen = "/opendata/inspire/v2/amenities"
	)
	cases := []restErrorCase{
		{"missing startRange", "/opendata/flightstatus?endRange=2026-11-22T12:00:00Z&origin=AMS", nil, flightgraph.ECodeMissingParameter, "startRange"},
		{"amenities without configuration or flight", amen + "?cabinClass=ECONOMY", nil, flightgraph.ECodeMissingParameter, "aircraftConfiguration"},

		{"pageSize 1000", list + "&pageSize=1000", nil, flightgraph.ECodeInvalidParameter, "pageSize"},
		{"unknown svc-travel-country", list, map[string]string{"svc-travel-country": "ZZ"}, flightgraph.ECodeInvalidParameter, "svc-travel-country"},
		{"movementType X", list + "&movementType=X", nil, flightgraph.ECodeInvalidParameter, "movementType"},

		{"bad date-time", "/opendata/flightstatus?startRange=yesterday&endRange=2026-11-22T12:00:00Z&origin=AMS", nil, flightgraph.ECodeBadFormat, "startRange"},
		{"malformed svc-travel-country", list, map[string]string{"svc-travel-country": "N1"}, flightgraph.ECodeBadFormat, "svc-travel-country"},
		{"malformed Accept-Language", list, map[string]string{"Accept-Language": "english"}, flightgraph.ECodeBadFormat, "Accept-Language"},
		{"malformed flight id", "/opendata/flightstatus/not-a-flight", nil, flightgraph.ECodeBadFormat, "id"},
		{"pageSize not a number", "/opendata/schedule/v1/routes?pageSize=ten", nil, flightgraph.ECodeBadFormat, "pageSize"},

		{"unknown path", "/opendata/nothing/here/123", nil, flightgraph.ECodeUnknownPath, ""},
		{"unknown version", "/opendata/inspire/v1/ping", nil, flightgraph.ECodeUnknownPath, ""},
		{"partner API with a public key", "/opendata/metasearch/v1/ping", nil, flightgraph.ECodeUnknownPath, ""},
		{"internal API with a public key", "/opendata/cargo/v1/ping", nil, flightgraph.ECodeUnknownPath, ""},

		{"Accept application/xml", list, map[string]string{"Accept": "application/xml"}, flightgraph.ECodeNotAcceptable, ""},

		{"unknown flight id", fmt.Sprintf("/opendata/flightstatus/20261122%%2BXX%%2B%04d", unknownFlightNumber), nil, flightgraph.ECodeFlightNotFound, "id"},
		{"amenities of an unknown flight", fmt.Sprintf(amen+"?carrier=XX&flightNumber=%d&departureDate=2026-11-22", unknownFlightNumber), nil, flightgraph.ECodeFlightNotFound, ""},

		{"amenities of a flight whose configuration is not in the fleet", fmt.Sprintf(amen+"?carrier=XX&flightNumber=%d&departureDate=2026-11-22", fixtureFlightNumber), nil, flightgraph.ECodeFlightConfiguration, "flightNumber"},
		{"amenities of a configuration not in the fleet", amen + "?aircraftConfiguration=" + unknownConfiguration, nil, flightgraph.ECodeFlightConfiguration, ""},

		{"cabinClass STEERAGE", amen + "?aircraftConfiguration=77W&cabinClass=STEERAGE", nil, flightgraph.ECodeCabinClassNotFound, "cabinClass"},
		{"FIRST on E90", amen + "?aircraftConfiguration=E90&cabinClass=FIRST", nil, flightgraph.ECodeCabinClassNotOnBoard, "cabinClass"},
		{"configuration without cabins", amen + "?aircraftConfiguration=" + fixtureNoCabins, nil, flightgraph.ECodeCabinClassUnknown, ""},

		{"origin QQQ", list[:strings.Index(list, "&origin")] + "&origin=QQQ", nil, flightgraph.ECodeIATANotFound, "origin"},
		{"schedule destination QQQ", "/opendata/schedule/v1/routes?destination=QQQ", nil, flightgraph.ECodeIATANotFound, "destination"},

		{"cabins whose product has no content", amen + "?aircraftConfiguration=" + fixtureNoContent, nil, flightgraph.ECodeNoCabinContent, ""},
		{"no connectivity on E90", amen + "?aircraftConfiguration=E90&category=connectivity", nil, flightgraph.ECodeNoCategoryContent, "category"},
		{"no connectivity on the E90's economy", amen + "?aircraftConfiguration=E90&cabinClass=ECONOMY&category=CONNECTIVITY", nil, flightgraph.ECodeNoCategoryContent, "category"},
	}

	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		s.insertErrorFixtures(t)
		seen := map[string]bool{}
		for _, c := range cases {
			t.Run(c.code+" "+c.name, func(t *testing.T) {
				s.checkRESTError(t, c)
				seen[c.code] = true
			})
		}

		// An unexpected failure: the table a route reads is gone. The answer is masked: no SQL,
		// no driver text, and the request id to quote.
		t.Run("INSP_500.000 a table is gone", func(t *testing.T) {
			s.execFixture(t, `DROP TABLE amenities`)
			const rid = "rid-openapi-500"
			h, b := s.checkRESTError(t, restErrorCase{path: amen + "?aircraftConfiguration=77W", headers: map[string]string{"X-Request-Id": rid}, code: flightgraph.ECodeInternal})
			d := b.Errors[0].Description
			if !strings.Contains(d, rid) || h.Get("X-Request-Id") != rid {
				t.Errorf("the description %q (X-Request-Id %q) does not carry the request id %s", d, h.Get("X-Request-Id"), rid)
			}
			for _, leak := range []string{"amenities", "table", "relation", "SELECT", "sql", "SQL", "pq:", "sqlite", "SQLITE", "exist"} {
				if strings.Contains(d, leak) || (b.Errors[0].Parameter != nil && strings.Contains(*b.Errors[0].Parameter, leak)) {
					t.Errorf("the masked error leaks %q: %+v", leak, b.Errors[0])
				}
			}
			if !strings.Contains(s.log.String(), rid) {
				t.Error("the cause is not logged with the request id")
			}
			seen[flightgraph.ECodeInternal] = true
		})

		// The database is gone: the guard still trusts what it cached of the key, the route's
		// reads fail, and the answer is WS_502.000.
		t.Run("WS_502.000 the database is closed", func(t *testing.T) {
			s.db.Close()
			_, b := s.checkRESTError(t, restErrorCase{path: "/opendata/schedule/v1/routes?origin=AMS", code: flightgraph.ECodeDatabase})
			if d := b.Errors[0].Description; strings.Contains(d, "sql") || strings.Contains(d, "closed") {
				t.Errorf("the error leaks the driver's text: %q", d)
			}
			seen[flightgraph.ECodeDatabase] = true
		})

		// The shared limiter store does not answer and there is no fallback: WS_502.001.
		t.Run("WS_502.001 the limiter store is down", func(t *testing.T) {
			rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: time.Second, DialerRetries: 1})
			t.Cleanup(func() { rdb.Close() })
			r := newServerWith(t, storetest.Seeded(t, dialect, os.Getenv), func(c *serverConfig) {
				c.NewLimiter = func(u access.DayUsage) access.Limiter {
					return access.NewRedisLimiter(rdb, "x:", u)
				}
				c.DefaultPlans = true
			})
			_, b := r.checkRESTError(t, restErrorCase{path: "/opendata/flightstatus/v1/ping", code: flightgraph.ECodeCache})
			if d := b.Errors[0].Description; strings.Contains(d, "127.0.0.1") || strings.Contains(d, "dial") || strings.Contains(d, "refused") {
				t.Errorf("the error leaks the Redis client's text: %q", d)
			}
			seen[flightgraph.ECodeCache] = true
		})

		for _, code := range []string{flightgraph.ECodeMissingParameter, flightgraph.ECodeInvalidParameter, flightgraph.ECodeBadFormat,
			flightgraph.ECodeUnknownPath, flightgraph.ECodeNotAcceptable, flightgraph.ECodeFlightNotFound, flightgraph.ECodeFlightConfiguration,
			flightgraph.ECodeCabinClassNotFound, flightgraph.ECodeCabinClassNotOnBoard, flightgraph.ECodeCabinClassUnknown, flightgraph.ECodeIATANotFound,
			flightgraph.ECodeNoCabinContent, flightgraph.ECodeNoCategoryContent, flightgraph.ECodeInternal, flightgraph.ECodeDatabase, flightgraph.ECodeCache} {
			if !seen[code] {
				t.Errorf("%s was not produced", code)
			}
		}
	})
}
