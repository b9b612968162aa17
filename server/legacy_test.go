package server_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// TestLegacyEdges: what legacy clients of the original meet at the edges. An unknown language
// falls back to English, saying so in Content-Language, on REST and GraphQL alike; a JSON body
// of the wrong shape names the field, never Go's types; the pings answer at the original's API
// names and at the slugs as before; a route's path under another method is 405 with Allow (and
// a hidden API's path stays 404); the baggage API's six operations answer under the spec's
// names as the original path does with their type.
func TestLegacyEdges(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		key := map[string]string{"api-key": s.demo.APIKey}
		bearer := map[string]string{"Authorization": "Bearer " + s.bearerToken(t, "")}
		with := func(base map[string]string, kv ...string) map[string]string {
			h := map[string]string{}
			for k, v := range base {
				h[k] = v
			}
			for i := 0; i < len(kv); i += 2 {
				h[kv[i]] = kv[i+1]
			}
			return h
		}

		t.Run("unknown languages fall back to English", func(t *testing.T) {
			for _, c := range []struct {
				acceptLanguage, language string
			}{{"de-DE", "en"}, {"de-DE, de;q=0.9", "en"}, {"de-DE, fr;q=0.5", "fr"}, {"nl-NL", "nl"}} {
				code, h, body := s.call(t, http.MethodGet, "/opendata/flightstatus/v1/ping", with(key, "Accept-Language", c.acceptLanguage), "")
				var p struct{ Language string }
				json.Unmarshal([]byte(body), &p)
				if code != 200 || p.Language != c.language || h.Get("Content-Language") != c.language {
					t.Errorf("REST, Accept-Language %q: %d language %q Content-Language %q, want 200 %s: %s", c.acceptLanguage, code, p.Language, h.Get("Content-Language"), c.language, body)
				}
				code, h, body = s.call(t, http.MethodPost, "/graphql", with(bearer, "Accept-Language", c.acceptLanguage),
					jsonBody(`{ searchContext(origin: "AMS", destination: "LHR") { language } }`, nil))
				var g struct {
					Data struct{ SearchContext struct{ Language string } }
				}
				json.Unmarshal([]byte(body), &g)
				if code != 200 || g.Data.SearchContext.Language != c.language || h.Get("Content-Language") != c.language {
					t.Errorf("GraphQL, Accept-Language %q: %d language %q Content-Language %q, want 200 %s: %s", c.acceptLanguage, code, g.Data.SearchContext.Language, h.Get("Content-Language"), c.language, body)
				}
			}
			// A malformed list is still refused, in English.
			code, h, body := s.call(t, http.MethodGet, "/opendata/flightstatus/v1/ping", with(key, "Accept-Language", "fr-FR, english"), "")
			if code != 400 || restCode(t, body) != flightgraph.ECodeBadFormat || h.Get("Content-Language") != "en" {
				t.Errorf("REST, a malformed Accept-Language: %d %s, Content-Language %q", code, body, h.Get("Content-Language"))
			}
			if r := s.queryAs(t, with(key, "Accept-Language", "en;q=NaN"), `{ airport(code: "AMS") { code } }`, nil); len(r.Errors) == 0 || r.Errors[0].Extensions["code"] != flightgraph.ECodeBadFormat {
				t.Errorf("GraphQL, a malformed Accept-Language: %+v", r.Errors)
			}
		})

		t.Run("a body of the wrong shape names the field", func(t *testing.T) {
			from := storetest.Now.AddDate(0, 0, 7).Format(flightgraph.DateLayout)
			to := storetest.Now.AddDate(0, 0, 9).Format(flightgraph.DateLayout)
			for _, c := range []struct {
				path, body, param, says string
			}{
				{"/opendata/offers/v1/best-fare-offers", `{"origin":"AMS","destinations":["LON"],"commercialCabins":["ECONOMY"],"passengers":[{"id":1,"type":"ADT"}],"dateInterval":"` + from + "/" + to + `"}`,
					"origin", "origin must be an object, not a string"},
				{"/opendata/offers/v1/best-fare-offers", `{"origin":{"city":{"code":"AMS"}},"destinations":[{"city":{"code":"LON"}},"PAR"],"commercialCabins":["ECONOMY"],"dateInterval":"` + from + "/" + to + `"}`,
					"destinations[1]", "destinations[1] must be an object, not a string"},
				{"/opendata/offers/v1/available-offers", `{"commercialCabins":"ECONOMY","passengers":[{"id":1,"type":"ADT"}]}`,
					"commercialCabins", "commercialCabins must be a list, not a string"},
			} {
				code, _, body := s.call(t, http.MethodPost, c.path, bearer, c.body)
				var e struct {
					Errors []struct{ Code, Description, Parameter string }
				}
				json.Unmarshal([]byte(body), &e)
				if code != 400 || len(e.Errors) != 1 || e.Errors[0].Code != flightgraph.ECodeBadFormat || e.Errors[0].Parameter != c.param || !strings.Contains(e.Errors[0].Description, c.says) {
					t.Errorf("POST %s %s: %d %s, want 400 %s naming %s and saying %q", c.path, c.body, code, body, flightgraph.ECodeBadFormat, c.param, c.says)
				}
				if strings.Contains(body, "Go ") || strings.Contains(body, "rest.") || strings.Contains(body, "struct") {
					t.Errorf("POST %s: the answer speaks Go: %s", c.path, body)
				}
			}
		})

		t.Run("pings at the original's API names and the slugs", func(t *testing.T) {
			for _, c := range []struct {
				path    string
				headers map[string]string
			}{
				{"/opendata/flightoffers/v1/ping", key}, {"/opendata/opendata/v1/ping", key},
				{"/opendata/baggages/v1/ping", bearer}, {"/opendata/baggage/v1/ping", bearer},
			} {
				if code, _, body := s.call(t, http.MethodGet, c.path, c.headers, ""); code != 200 {
					t.Errorf("GET %s: %d %s", c.path, code, body)
				}
			}
			if code, _, body := s.call(t, http.MethodGet, "/opendata/flightoffers/v1/ping", bearer, ""); code != 403 || restCode(t, body) != flightgraph.ECodeWrongCredential {
				t.Errorf("a token on Open Data's ping: %d %s, want 403 %s", code, body, flightgraph.ECodeWrongCredential)
			}
		})

		t.Run("the wrong method is 405 with Allow", func(t *testing.T) {
			for _, c := range []struct {
				method, path string
				headers      map[string]string
				status       int
				allow        string
			}{
				{"POST", "/opendata/flightstatus?startRange=2026-11-22T06:00:00Z&endRange=2026-11-22T12:00:00Z&origin=AMS", key, 405, "GET, HEAD"},
				{"DELETE", "/opendata/flightoffers/reference-data", key, 405, "GET, HEAD"},
				{"GET", "/opendata/offers/v1/best-fare-offers", bearer, 405, "POST"},
				{"PUT", "/opendata/offers/v1/available-offers", bearer, 405, "GET, HEAD, POST"},
				{"POST", "/opendata/inspire/v2/ping", key, 405, "GET, HEAD"},
				{"POST", "/opendata/flightoffers/v1/ping", key, 405, "GET, HEAD"},
				// Paths a GET would answer INSP_404.000 stay 404: a version the API does not
				// have, an API that does not exist, a partner's or an internal API's.
				{"POST", "/opendata/inspire/v1/ping", key, 404, ""},
				{"POST", "/opendata/nothing/v1/ping", key, 404, ""},
				{"GET", "/opendata/offers/v1/bestOffers/feed", key, 404, ""},
				{"POST", "/opendata/cargo/v1/ping", bearer, 404, ""},
				{"POST", "/opendata/cargo/v1/flights/20261122%2BXX%2B1234/capacity", bearer, 404, ""},
			} {
				code, h, body := s.call(t, c.method, c.path, c.headers, "")
				want := flightgraph.ECodeMethodNotAllowed
				if c.status == 404 {
					want = flightgraph.ECodeUnknownPath
				}
				if code != c.status || restCode(t, body) != want || h.Get("Allow") != c.allow {
					t.Errorf("%s %s: %d %s Allow %q, want %d %s Allow %q", c.method, c.path, code, body, h.Get("Allow"), c.status, want, c.allow)
				}
			}
		})

		t.Run("the six baggage operations by the spec's names", func(t *testing.T) {
			var doc struct {
				Paths map[string]map[string]struct{ OperationID, Summary string }
			}
			_, _, raw := s.call(t, http.MethodGet, "/openapi.json", nil, "")
			if err := json.Unmarshal([]byte(raw), &doc); err != nil {
				t.Fatal(err)
			}
			q := url.Values{"origin": {"AMS"}, "destination": {"CDG"}, "travelClass": {"ECONOMY"}, "loyaltyProgram": {"FGMILES_GOLD"}, "passengerType": {"ADT,INF"}}
			for _, c := range []struct{ path, typ, operationID, summary string }{
				{"all-allowances-without-loyalty", "all", "getAllAllowancesWithoutLoyalty", "All Allowances without Loyalty"},
				{"base-allowances", "base", "getBaseAllowances", "Base Allowances"},
				{"loyalty-allowances", "loyalty", "getLoyaltyAllowances", "Loyalty Allowances"},
				{"paid-options-with-loyalty", "paid-loyalty", "getPaidOptionsWithLoyalty", "Paid Options with Loyalty"},
				{"paid-options-without-loyalty", "paid", "getPaidOptionsWithoutLoyalty", "Paid Options without Loyalty"},
				{"all-allowances-with-loyalty", "all-loyalty", "getAllAllowancesWithLoyalty", "All Allowances with Loyalty"},
			} {
				path := "/opendata/baggages/v1/" + c.path
				if op := doc.Paths[path]["get"]; op.OperationID != c.operationID || op.Summary != c.summary {
					t.Errorf("OpenAPI %s: %+v, want %s %q", path, op, c.operationID, c.summary)
				}
				var named, typed map[string]any
				get(t, s, path+"?"+q.Encode(), bearer, &named)
				tq := url.Values{"type": {c.typ}}
				for k, v := range q {
					tq[k] = v
				}
				get(t, s, "/opendata/baggages/allowances?"+tq.Encode(), bearer, &typed)
				delete(named, "_links")
				delete(typed, "_links")
				if a, b := fmt.Sprint(named), fmt.Sprint(typed); a != b {
					t.Errorf("%s answers\n%s\nwhere type=%s answers\n%s", path, a, c.typ, b)
				}
			}
		})
	})
}

// TestScheduleOnGraphQL: GraphQL's scheduledFlights answers the schedule's flight records that
// REST's GET /opendata/schedule/v1/flights does, the same records in the same order page by
// page, with the same filters and the same refusals; its cost counts first.
func TestScheduleOnGraphQL(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		key := map[string]string{"api-key": s.demo.APIKey}
		date := storetest.Now.Format(flightgraph.DateLayout)
		type record struct {
			Carrier, Number, Seq, Origin, Destination, Departure, Arrival, DepOffset, ArrOffset, Days, From, To, Configuration, Service, Km, Block string
		}
		rest := func(t *testing.T, query string) (out []record, total int) {
			var v struct {
				Flights []struct {
					Airline                                                                                    struct{ Code string }
					FlightNumber, LegSequence, DepartureDayOffset, ArrivalDayOffset                            int
					Origin, Destination                                                                        struct{ Code string }
					DepartureTime, ArrivalTime, DaysOfOperation, AircraftConfiguration, ServiceType, BlockTime string
					PeriodOfOperation                                                                          struct{ From, To string }
					Distance                                                                                   struct{ Value int }
				}
				Page struct{ FullCount int }
			}
			get(t, s, "/opendata/schedule/v1/flights?"+query, key, &v)
			for _, f := range v.Flights {
				out = append(out, record{f.Airline.Code, fmt.Sprint(f.FlightNumber), fmt.Sprint(f.LegSequence), f.Origin.Code, f.Destination.Code, f.DepartureTime, f.ArrivalTime,
					fmt.Sprint(f.DepartureDayOffset), fmt.Sprint(f.ArrivalDayOffset), f.DaysOfOperation, f.PeriodOfOperation.From, f.PeriodOfOperation.To,
					f.AircraftConfiguration, f.ServiceType, fmt.Sprint(f.Distance.Value), f.BlockTime})
			}
			return out, v.Page.FullCount
		}
		graphQL := func(t *testing.T, args string) (out []record, total int) {
			r := s.queryAs(t, key, `{ scheduledFlights(`+args+`) { totalCount edges { node { carrier { code } flightNumber legSequence origin { code } destination { code }
				departureTime arrivalTime departureDayOffset arrivalDayOffset daysOfOperation periodFrom periodTo aircraftConfiguration serviceType distanceKm blockMinutes } } } }`, nil)
			if len(r.Errors) > 0 {
				t.Fatalf("scheduledFlights(%s): %+v", args, r.Errors)
			}
			var v struct {
				ScheduledFlights struct {
					TotalCount int
					Edges      []struct {
						Node struct {
							Carrier, Origin, Destination                                                                          struct{ Code string }
							FlightNumber, LegSequence, DepartureDayOffset, ArrivalDayOffset, DistanceKm, BlockMinutes             int
							DepartureTime, ArrivalTime, DaysOfOperation, PeriodFrom, PeriodTo, AircraftConfiguration, ServiceType string
						}
					}
				}
			}
			if err := json.Unmarshal(r.Data, &v); err != nil {
				t.Fatal(err)
			}
			for _, e := range v.ScheduledFlights.Edges {
				n := e.Node
				out = append(out, record{n.Carrier.Code, fmt.Sprint(n.FlightNumber), fmt.Sprint(n.LegSequence), n.Origin.Code, n.Destination.Code, n.DepartureTime, n.ArrivalTime,
					fmt.Sprint(n.DepartureDayOffset), fmt.Sprint(n.ArrivalDayOffset), n.DaysOfOperation, n.PeriodFrom, n.PeriodTo, n.AircraftConfiguration, n.ServiceType,
					fmt.Sprint(n.DistanceKm), flightgraph.ISODuration(time.Duration(n.BlockMinutes) * time.Minute)})
			}
			return out, v.ScheduledFlights.TotalCount
		}
		for _, c := range []struct{ name, rest, graphQL string }{
			{"from AMS on a day", "origin=AMS&date=" + date + "&pageSize=30", `origin: "AMS", date: "` + date + `", first: 30`},
			{"from AMS on a day, the second page", "origin=AMS&date=" + date + "&pageSize=30&pageNumber=1", `origin: "AMS", date: "` + date + `", first: 30, after: "` + cursorAt(29) + `"`},
			{"a city to a city", "origin=PAR&destination=AMS&pageSize=50", `origin: "PAR", destination: "AMS", first: 50`},
			{"a carrier", "carrier=YY&pageSize=20", `carrier: "YY", first: 20`},
		} {
			t.Run(c.name, func(t *testing.T) {
				want, wantTotal := rest(t, c.rest)
				got, total := graphQL(t, c.graphQL)
				if len(want) == 0 {
					t.Fatalf("REST answered no records for %s: the comparison would prove nothing", c.rest)
				}
				if total != wantTotal || fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("GraphQL (%d of %d):\n%v\nREST (%d of %d):\n%v", len(got), total, got, len(want), wantTotal, want)
				}
			})
		}
		// One flight number: REST's first record, found again by its number on both edges.
		first, _ := rest(t, "origin=AMS&date="+date+"&pageSize=1")
		want, _ := rest(t, "carrier="+first[0].Carrier+"&flightNumber="+first[0].Number)
		if got, _ := graphQL(t, `carrier: "`+first[0].Carrier+`", flightNumber: `+first[0].Number); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("flight %s%s: GraphQL %v, REST %v", first[0].Carrier, first[0].Number, got, want)
		}
		// The same refusals as REST's.
		for args, code := range map[string]string{`origin: "QQQ"`: flightgraph.ECodeIATANotFound, `first: 0`: flightgraph.ECodeInvalidParameter,
			`flightNumber: 10000`: flightgraph.ECodeInvalidParameter, `date: "22-11-2026"`: flightgraph.ECodeBadFormat} {
			if r := s.queryAs(t, key, `{ scheduledFlights(`+args+`) { totalCount } }`, nil); len(r.Errors) == 0 || r.Errors[0].Extensions["code"] != code {
				t.Errorf("scheduledFlights(%s): %+v, want %s", args, r.Errors, code)
			}
		}
	})
}

// cursorAt is the cursor of the item at offset of a GraphQL list, as the resolvers make it: a
// page after it starts at offset+1, as REST's pageNumber pages do.
func cursorAt(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("offset:" + strconv.Itoa(offset)))
}
