package server_test

import (
	"encoding/json"
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

// inspirationPath is destinations inspiration's REST path.
const inspirationPath = "/opendata/inspire/v2/destinations/inspiration"

// inspirationMonth has flights in storetest.Seeded's window: Now's month.
var inspirationMonth = storetest.Now.Format(flightgraph.MonthLayout)

// inspirationView is as much of a REST inspiration as the tests read.
type inspirationView struct {
	Origin                       placeView
	Month, TravelClass, Currency string
	Destinations                 []struct {
		Destination   placeView
		LowestPrice   struct{ Amount, Currency string }
		DepartureDate string
		NumberOfStops int
		Links         struct{ Offers, LowestFareOffers struct{ Href string } } `json:"_links"`
	}
	Links struct{ Self struct{ Href string } } `json:"_links"`
}

type placeView struct {
	Code, Type, Label string
	City              struct{ Code string }
	Country           struct{ Code, Label string }
}

// gqlDestination is one destination as the subgraph answers it.
type gqlDestination struct {
	Code string
	City struct {
		Code, Name string
		Country    struct{ Code string }
	}
	LowestPrice   struct{ Amount, Currency string }
	DepartureDate string
	Stops         int
}

const destinationsQuery = `query($origin: String, $price: String, $currency: String, $month: String, $cabin: CabinClass, $destination: String, $limit: Int) {
	destinations(origin: $origin, price: $price, currency: $currency, month: $month, cabin: $cabin, destination: $destination, limit: $limit) {
		code city { code name country { code } } lowestPrice { amount currency } departureDate stops } }`

// inspire asks both edges the same inspiration: REST with params (travelClass, limit as given),
// GraphQL with the same values (cabin for travelClass). It returns REST's status, body and round
// trips, and GraphQL's answer.
func inspire(t *testing.T, s *testServer, headers map[string]string, params url.Values) (int, string, int64, gqlResponse) {
	t.Helper()
	code, _, raw := s.call(t, http.MethodGet, inspirationPath+"?"+params.Encode(), headers, "")
	trips := s.queries.Load()
	vars := map[string]any{}
	for k, name := range map[string]string{"origin": "origin", "price": "price", "currency": "currency", "month": "month", "travelClass": "cabin", "destination": "destination", "limit": "limit"} {
		if !params.Has(k) {
			continue
		}
		vars[name] = params.Get(k)
		if k == "limit" {
			n, err := strconv.Atoi(params.Get(k))
			if err != nil {
				t.Fatal(err)
			}
			vars[name] = n
		}
	}
	return code, raw, trips, s.queryAs(t, headers, destinationsQuery, vars)
}

// TestInspiration: destinations inspiration answers the same destinations, prices, dates and
// stops on REST and on the subgraph, in the SQL round trips of one destination however many it
// finds; each destination's price is the month's lowest-fare calendar to it, and the cheapest
// offer of the search its link leads to; the point of sale's currency or the request's; each
// error code on both edges; and only a key approved for inspire may ask.
func TestInspiration(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		// The reference snapshot, as serve has it: the round trips are the flights'.
		s := newServerWith(t, storetest.Seeded(t, dialect, os.Getenv), func(c *serverConfig) { c.SnapshotTTL = time.Hour })
		key := map[string]string{"api-key": keyFor(t, s, "inspire")}
		bearer := map[string]string{"Authorization": "Bearer " + s.bearerToken(t, "")}

		inspiration := func(origin string, more ...string) (inspirationView, int64) {
			t.Helper()
			params := url.Values{"origin": {origin}, "month": {inspirationMonth}, "limit": {"200"}}
			for i := 0; i+1 < len(more); i += 2 {
				params.Set(more[i], more[i+1])
			}
			code, raw, trips, gql := inspire(t, s, key, params)
			if code != 200 {
				t.Fatalf("%s: %d %s", params.Encode(), code, raw)
			}
			var rest inspirationView
			if err := json.Unmarshal([]byte(raw), &rest); err != nil {
				t.Fatal(err)
			}
			var g struct{ Destinations []gqlDestination }
			if err := json.Unmarshal(gql.Data, &g); err != nil || len(gql.Errors) > 0 {
				t.Fatalf("%s on the subgraph: %s %+v", params.Encode(), gql.Data, gql.Errors)
			}
			// The same answer on both edges.
			if len(g.Destinations) != len(rest.Destinations) {
				t.Fatalf("%s: REST answers %d destinations, GraphQL %d", params.Encode(), len(rest.Destinations), len(g.Destinations))
			}
			for i, d := range rest.Destinations {
				gd := g.Destinations[i]
				if gd.Code != d.Destination.Code || gd.City.Code != d.Destination.City.Code || gd.City.Country.Code != d.Destination.Country.Code ||
					gd.LowestPrice != d.LowestPrice || gd.DepartureDate != d.DepartureDate || gd.Stops != d.NumberOfStops {
					t.Fatalf("%s #%d: REST %+v, GraphQL %+v", params.Encode(), i, d, gd)
				}
			}
			return rest, trips
		}

		inspiration("BCN", "limit", "1") // loads the snapshot
		spoke, spokeTrips := inspiration("BCN")
		hub, hubTrips := inspiration("AMS")
		one, oneTrips := inspiration("BCN", "destination", "JFK")
		t.Logf("round trips: BCN %d destinations %d, AMS %d destinations %d, BCN to JFK %d", len(spoke.Destinations), spokeTrips, len(hub.Destinations), hubTrips, oneTrips)
		if len(spoke.Destinations) < 100 || len(hub.Destinations) < 100 || len(one.Destinations) != 1 {
			t.Fatalf("%d destinations from BCN, %d from AMS, %d to JFK", len(spoke.Destinations), len(hub.Destinations), len(one.Destinations))
		}
		// A month's first inspiration from an origin reads what one destination's does; the
		// next ones (BCN's, after the one of limit 1) read nothing: the fare index has it.
		if spokeTrips != 0 || hubTrips != oneTrips || oneTrips == 0 {
			t.Errorf("round trips: %d for %d destinations (read before), %d for %d, %d for one", spokeTrips, len(spoke.Destinations), hubTrips, len(hub.Destinations), oneTrips)
		}
		if o := spoke.Origin; o.Code != "BCN" || o.Type != "CITY" || o.Label == "" || o.Country.Code != "ES" || o.Country.Label == "" ||
			spoke.Month != inspirationMonth || spoke.TravelClass != "ECONOMY" || spoke.Currency != "EUR" {
			t.Errorf("the inspiration from BCN: %+v", spoke)
		}
		if d := one.Destinations[0].Destination; d.Code != "JFK" || d.Type != "AIRPORT" || d.City.Code != "NYC" {
			t.Errorf("to JFK: %+v", d)
		}

		// Each price is the month's calendar to the destination (its link), and the cheapest
		// offer of its departure date's search (its other link).
		for _, insp := range []inspirationView{spoke, hub, one} {
			stops := map[int]int{}
			for i, d := range insp.Destinations {
				stops[d.NumberOfStops]++
				if insp.Origin.Code == "AMS" && i%3 != 0 {
					continue // the spoke's every destination, a third of the hub's: a calendar each
				}
				var cal struct {
					LowestFareOffers []struct {
						Period        string
						FlightProduct *productView
					}
				}
				get(t, s, d.Links.LowestFareOffers.Href, bearer, &cal)
				if len(cal.LowestFareOffers) != 1 || cal.LowestFareOffers[0].Period != inspirationMonth || cal.LowestFareOffers[0].FlightProduct == nil {
					t.Fatalf("%s-%s: the calendar %+v", insp.Origin.Code, d.Destination.Code, cal)
				}
				if p := cal.LowestFareOffers[0].FlightProduct.Price; p.TotalPrice != d.LowestPrice.Amount || p.Currency != d.LowestPrice.Currency {
					t.Errorf("%s-%s: the inspiration says %+v, the calendar %s %s", insp.Origin.Code, d.Destination.Code, d.LowestPrice, p.TotalPrice, p.Currency)
				}
				if i%20 != 0 {
					continue
				}
				var offers offersView
				get(t, s, d.Links.Offers.Href, bearer, &offers)
				var cheapest *flightgraph.Money
				for _, it := range offers.Itineraries {
					for _, p := range it.FlightProducts {
						if m, err := flightgraph.ParseAmount(p.Price.TotalPrice, p.Price.Currency); err == nil && (cheapest == nil || m.Minor < cheapest.Minor) {
							cheapest = &m
						}
					}
				}
				if cheapest == nil || cheapest.Decimal() != d.LowestPrice.Amount {
					t.Errorf("%s-%s on %s: the cheapest offer is %v, the inspiration says %+v", insp.Origin.Code, d.Destination.Code, d.DepartureDate, cheapest, d.LowestPrice)
				}
			}
			if insp.Origin.Code == "BCN" && len(insp.Destinations) > 1 && (stops[0] == 0 || stops[1] == 0) {
				t.Errorf("from BCN, by stops: %v", stops)
			}
		}

		// A price keeps the destinations at most that price: the first ones of all.
		limit := spoke.Destinations[len(spoke.Destinations)/3].LowestPrice.Amount
		under, _ := inspiration("BCN", "price", limit)
		if n := len(under.Destinations); n < len(spoke.Destinations)/3 || n == len(spoke.Destinations) || jsonOf(under.Destinations) != jsonOf(spoke.Destinations[:n]) {
			t.Errorf("under %s: %d destinations", limit, n)
		}
		// The point of sale's currency, or the request's.
		us, _ := inspiration("BCN", "limit", "3")
		code, _, raw := s.call(t, http.MethodGet, inspirationPath+"?origin=BCN&limit=3&month="+inspirationMonth, map[string]string{"api-key": key["api-key"], "svc-travel-country": "US", "Accept-Language": "fr-FR"}, "")
		json.Unmarshal([]byte(raw), &us)
		if code != 200 || us.Currency != "USD" || us.Destinations[0].LowestPrice.Currency != "USD" || us.Origin.Label != "Barcelone" {
			t.Errorf("svc-travel-country US, in French: %d %.300s", code, raw)
		}
		jp, _ := inspiration("BCN", "limit", "3", "currency", "jpy", "travelClass", "business")
		if jp.Currency != "JPY" || jp.TravelClass != "BUSINESS" || strings.Contains(jp.Destinations[0].LowestPrice.Amount, ".") {
			t.Errorf("in JPY, business: %+v", jp)
		}

		// Refusals, the same on both edges.
		for _, c := range []struct {
			name   string
			params url.Values
			status int
			code   string
		}{
			{"a price without an origin", url.Values{"price": {"100"}}, 400, flightgraph.ECodeInconsistentInput},
			{"no origin", url.Values{"month": {inspirationMonth}}, 400, flightgraph.ECodeMissingParameter},
			{"a malformed origin", url.Values{"origin": {"AMST"}}, 400, flightgraph.ECodeBadFormat},
			{"an unknown origin", url.Values{"origin": {"QQQ"}}, 404, flightgraph.ECodeOriginUnknown},
			{"an unknown destination", url.Values{"origin": {"AMS"}, "destination": {"QQQ"}}, 404, flightgraph.ECodeDestinationUnknown},
			{"nothing under the price", url.Values{"origin": {"BCN"}, "month": {inspirationMonth}, "price": {"10"}}, 404, flightgraph.ECodeTripDestination},
			{"a month past", url.Values{"origin": {"AMS"}, "month": {"2026-10"}}, 400, flightgraph.ECodeInvalidParameter},
			{"a month past a year", url.Values{"origin": {"AMS"}, "month": {"2027-11"}}, 400, flightgraph.ECodeInvalidParameter},
			{"a malformed month", url.Values{"origin": {"AMS"}, "month": {"12/2026"}}, 400, flightgraph.ECodeBadFormat},
			{"a malformed price", url.Values{"origin": {"AMS"}, "price": {"1e9"}}, 400, flightgraph.ECodeBadFormat},
			{"a negative price", url.Values{"origin": {"AMS"}, "price": {"-1"}}, 400, flightgraph.ECodeInvalidParameter},
			{"an unknown currency", url.Values{"origin": {"AMS"}, "currency": {"ZZZ"}}, 400, flightgraph.ECodeInvalidParameter},
			{"no destinations", url.Values{"origin": {"AMS"}, "limit": {"0"}}, 400, flightgraph.ECodeInvalidParameter},
			{"too many destinations", url.Values{"origin": {"AMS"}, "limit": {"201"}}, 400, flightgraph.ECodeInvalidParameter},
		} {
			code, raw, _, gql := inspire(t, s, key, c.params)
			if code != c.status || restCode(t, raw) != c.code {
				t.Errorf("%s: REST %d %s, want %d %s", c.name, code, raw, c.status, c.code)
			}
			if len(gql.Errors) == 0 || gql.Errors[0].Extensions["code"] != c.code || gql.Errors[0].Extensions["status"] != float64(c.status) {
				t.Errorf("%s: GraphQL %s %+v, want %s", c.name, gql.Data, gql.Errors, c.code)
			}
		}
		// Next month by default, with flights: shopping reaches past the operational window.
		if code, raw, _, _ := inspire(t, s, key, url.Values{"origin": {"BCN"}}); code != 200 || !strings.Contains(raw, `"month":"`+storetest.Now.AddDate(0, 1, 0).Format(flightgraph.MonthLayout)+`"`) {
			t.Errorf("next month by default: %d %s", code, raw)
		}
		if code, _, raw := s.call(t, http.MethodGet, inspirationPath+"?origin=AMS&travelClass=COACH", key, ""); code != 404 || restCode(t, raw) != flightgraph.ECodeCabinClassNotFound {
			t.Errorf("an unknown travel class: %d %s", code, raw)
		}
		if code, _, raw := s.call(t, http.MethodGet, inspirationPath+"?origin=AMS&limit=ten", key, ""); code != 400 || restCode(t, raw) != flightgraph.ECodeBadFormat {
			t.Errorf("a limit in words: %d %s", code, raw)
		}

		// The inspire API's, not another's: a key for Open Data only is refused on both edges.
		other := map[string]string{"api-key": keyFor(t, s, "opendata")}
		code, raw, _, gql := inspire(t, s, other, url.Values{"origin": {"BCN"}, "month": {inspirationMonth}})
		if code != 403 || restCode(t, raw) != flightgraph.ECodeNotApproved || len(gql.Errors) == 0 || gql.Errors[0].Extensions["code"] != flightgraph.ECodeNotApproved || string(gql.Data) != "null" && string(gql.Data) != "" {
			t.Errorf("a key without inspire: REST %d %s, GraphQL %s %+v", code, raw, gql.Data, gql.Errors)
		}
	})
}
