package server_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// cargoQuery is the subgraph's cargo capacity of a flight, with what the REST answer holds.
const cargoQuery = `query($id: ID!) { cargoCapacity(flightId: $id) {
	volumeM3 payloadKg flight { id origin { code } }
	legs { sequence origin { code } destination { code } cancelled configuration aircraftType aircraftTypeName holdVolumeM3 maxPayloadKg
		seats expectedPassengers expectedBags passengerKg baggageKg baggageVolumeM3 volumeM3 payloadKg } } }`

// cargoDoc is what the tests read of a cargo capacity, on either edge.
type cargoDoc struct {
	FlightID  string
	VolumeM3  float64
	PayloadKg int
	Legs      []struct {
		Sequence                                int
		Origin, Destination                     json.RawMessage // a code on REST, an Airport on GraphQL
		Cancelled                               bool
		AircraftType, AircraftTypeName          string
		HoldVolumeM3, BaggageVolumeM3, VolumeM3 float64
		MaxPayloadKg, Seats, ExpectedPassengers int
		ExpectedBags, PassengerKg, BaggageKg    int
		Payload                                 int `json:"payloadKg"`
	}
	Links struct{ Self, Flight struct{ Href string } } `json:"_links"`
}

// TestCargo: the internal Cargo API on both edges. A developer made staff by an operator sees it,
// gets a key for it approved, and its client-credentials token reads a flight's belly capacity on
// REST and on the subgraph, the same figures on both; a malformed id is INSP_400.002, an unknown
// flight FLIGHT_404.001 and a flight whose aircraft is not in the fleet FLIGHT_404.002, on both.
// Developers' keys and tokens are answered as for a path that does not exist (INSP_404.000), on
// both edges; so is staff's once made a developer again, at once, and answered again once staff
// again.
func TestCargo(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		s.insertErrorFixtures(t)
		op := s.oaOperator(t)
		const email = "sam@staff.example"
		sam := s.signUp(t, email, developerPassword, "Sam Staff")
		if slices.Contains(sam.apis(t), "cargo") {
			t.Fatal("a developer sees cargo")
		}
		op.setRole(t, email, "STAFF")
		if apis := sam.apis(t); !slices.Contains(apis, "cargo") || !slices.Contains(apis, "metasearch") {
			t.Fatalf("staff sees %v", apis)
		}
		key := sam.newKey(t, op, "cargo")
		grant := s.oaGrant(t, key.oaClient, url.Values{"grant_type": {"client_credentials"}})
		staff := oaBearer(grant["access_token"].(string))
		if grant["scope"] != nil && !strings.Contains(grant["scope"].(string), "cargo") {
			t.Fatalf("staff's token: %v", grant)
		}

		var flightID string
		if err := s.rawDB(t).QueryRow(rebindFixture(s.db, `SELECT id FROM flights f WHERE schedule_date = ? AND haul = 'LONG'
			AND NOT EXISTS (SELECT 1 FROM flight_legs l WHERE l.flight_id = f.id AND l.cancelled) ORDER BY id LIMIT 1`), "2026-11-22").Scan(&flightID); err != nil {
			t.Fatal(err)
		}
		path := func(id string) string {
			return "/opendata/cargo/v1/flights/" + strings.ReplaceAll(id, "+", "%2B") + "/capacity"
		}

		// REST: the HAL document, which s.call validates against the OpenAPI document.
		code, h, body := s.call(t, http.MethodGet, path(flightID), staff, "")
		if code != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "application/hal+json") {
			t.Fatalf("staff's token on REST: %d %s", code, body)
		}
		var rest cargoDoc
		if err := json.Unmarshal([]byte(body), &rest); err != nil {
			t.Fatal(err)
		}
		if rest.FlightID != flightID || len(rest.Legs) == 0 || rest.PayloadKg <= 0 || rest.VolumeM3 <= 0 ||
			rest.Links.Flight.Href != "/opendata/flightstatus/"+strings.ReplaceAll(flightID, "+", "%2B") || rest.Links.Self.Href != path(flightID) {
			t.Fatalf("REST answer: %s", body)
		}
		for _, l := range rest.Legs {
			if l.HoldVolumeM3 <= l.VolumeM3 || l.MaxPayloadKg <= l.Payload || l.ExpectedPassengers == 0 || l.ExpectedPassengers > l.Seats || l.AircraftType == "" {
				t.Errorf("leg %d: %+v", l.Sequence, l)
			}
		}
		// The flight's own status is where the link says.
		if code, _, body := s.call(t, http.MethodGet, rest.Links.Flight.Href, map[string]string{"api-key": s.demo.APIKey}, ""); code != http.StatusOK {
			t.Errorf("the flight link: %d %s", code, body)
		}

		// GraphQL: the same figures.
		resp := s.queryAs(t, staff, cargoQuery, map[string]any{"id": flightID})
		if len(resp.Errors) > 0 {
			t.Fatalf("staff's token on GraphQL: %+v", resp.Errors)
		}
		var gql struct {
			CargoCapacity struct {
				cargoDoc
				Flight struct {
					ID     string
					Origin struct{ Code string }
				}
			}
		}
		if err := json.Unmarshal(resp.Data, &gql); err != nil {
			t.Fatal(err)
		}
		g := gql.CargoCapacity
		if g.Flight.ID != flightID || g.Flight.Origin.Code == "" || g.VolumeM3 != rest.VolumeM3 || g.PayloadKg != rest.PayloadKg || len(g.Legs) != len(rest.Legs) {
			t.Fatalf("GraphQL %s, REST %s", resp.Data, body)
		}
		for i, l := range g.Legs {
			r := rest.Legs[i]
			var origin struct{ Code string }
			json.Unmarshal(l.Origin, &origin)
			if origin.Code != strings.Trim(string(r.Origin), `"`) || l.VolumeM3 != r.VolumeM3 || l.Payload != r.Payload || l.ExpectedBags != r.ExpectedBags ||
				l.HoldVolumeM3 != r.HoldVolumeM3 || l.AircraftTypeName != r.AircraftTypeName {
				t.Errorf("leg %d: GraphQL %+v, REST %+v", i+1, l, r)
			}
		}

		// Errors, with staff's token, on both edges.
		for _, c := range []struct {
			id     string
			status int
			code   string
		}{
			{"not-a-flight", http.StatusBadRequest, flightgraph.ECodeBadFormat},
			{flightgraph.FlightID{Date: "2026-11-22", Carrier: "XX", Number: unknownFlightNumber}.String(), http.StatusNotFound, flightgraph.ECodeFlightNotFound},
			{flightgraph.FlightID{Date: "2026-11-22", Carrier: "XX", Number: fixtureFlightNumber}.String(), http.StatusNotFound, flightgraph.ECodeFlightConfiguration},
		} {
			s.apiFails(t, path(c.id), staff, c.status, c.code)
			resp := s.queryAs(t, staff, `query($id: ID!) { cargoCapacity(flightId: $id) { payloadKg } }`, map[string]any{"id": c.id})
			if len(resp.Errors) == 0 || resp.Errors[0].Extensions["code"] != c.code || resp.Errors[0].Extensions["parameter"] != "flightId" {
				t.Errorf("GraphQL %s: %+v, want %s naming flightId", c.id, resp.Errors, c.code)
			}
		}

		// Developers: the demo key and a token of it are answered as for a path that does not
		// exist, on both edges.
		devToken := oaBearer(s.bearerToken(t, ""))
		for name, creds := range map[string]map[string]string{"developer's key": {"api-key": s.demo.APIKey}, "developer's token": devToken, "no credentials": nil} {
			s.apiFails(t, path(flightID), creds, http.StatusNotFound, flightgraph.ECodeUnknownPath)
			// Byte for byte what a path that does not exist gets: no other word gives it away.
			_, _, hidden := s.call(t, http.MethodGet, path(flightID), creds, "")
			_, _, unknown := s.call(t, http.MethodGet, path(flightID)+"X", creds, "")
			if hidden != unknown {
				t.Errorf("%s: the hidden route answers %s, a path that does not exist %s", name, hidden, unknown)
			}
			if creds == nil {
				continue
			}
			// GraphQL: a field that does not exist in the caller's schema.
			resp := s.queryAs(t, creds, cargoQuery, map[string]any{"id": flightID})
			if len(resp.Errors) == 0 || resp.Errors[0].Extensions["code"] != "GRAPHQL_VALIDATION_FAILED" || string(resp.Data) != "" && string(resp.Data) != "null" {
				t.Errorf("%s on GraphQL: %s %+v", name, resp.Data, resp.Errors)
			}
		}

		// Staff made a developer: refused at once on both edges; staff again: served again.
		op.setRole(t, email, "DEVELOPER")
		s.apiFails(t, path(flightID), staff, http.StatusNotFound, flightgraph.ECodeUnknownPath)
		if resp := s.queryAs(t, staff, cargoQuery, map[string]any{"id": flightID}); len(resp.Errors) == 0 || resp.Errors[0].Extensions["code"] != "GRAPHQL_VALIDATION_FAILED" {
			t.Errorf("GraphQL after the demotion: %s %+v", resp.Data, resp.Errors)
		}
		op.setRole(t, email, "STAFF")
		if code, _, body := s.call(t, http.MethodGet, path(flightID), staff, ""); code != http.StatusOK {
			t.Errorf("staff again: %d %s", code, body)
		}
	})
}
