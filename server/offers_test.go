package server_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// offersView is as much of an offers answer as the tests read.
type offersView struct {
	Itineraries []struct {
		Connections []struct {
			NumberOfStops int
			Segments      []struct {
				FlightID    string
				Origin      struct{ Code string }
				Destination struct{ Code string }
				SeatsLeft   int
			}
		}
		FlightProducts []productView
	}
	Links struct{ Self struct{ Href string } } `json:"_links"`
}

type productView struct {
	ID              string
	CommercialCabin string
	FareFamily      struct{ Code string }
	Price           struct {
		DisplayPrice, TotalPrice, TotalTaxes, Currency string
		PricePerPassengerTypes                         []struct {
			PassengerType      string
			Count              int
			Fare, Taxes, Total string
		}
	}
	SeatsLeft       int
	IncludedBaggage []struct {
		PassengerType string
		Products      []bagProductView
	}
	Links struct {
		PriceDetails, TaxBreakdown, FlightDetails struct{ Href string }
	} `json:"_links"`
}

// offerSearch is the original's search body for a one-way trip tomorrow.
func offerSearch(origin, destination string, pax ...string) map[string]any {
	var ps []map[string]any
	for i, p := range pax {
		ps = append(ps, map[string]any{"id": i + 1, "type": p})
	}
	return map[string]any{"commercialCabins": []string{"ALL"}, "passengers": ps, "requestedConnections": []map[string]any{{
		"departureDate": storetest.Now.AddDate(0, 0, 1).Format(flightgraph.DateLayout),
		"origin":        map[string]any{"airport": map[string]any{"code": origin}}, "destination": map[string]any{"city": map[string]any{"code": destination}}}}}
}

// searchOffers posts an offers search and reads its answer; the test fails unless it is 200.
func searchOffers(t *testing.T, s *testServer, headers map[string]string, body map[string]any) (offersView, string) {
	t.Helper()
	code, _, raw := s.call(t, http.MethodPost, "/opendata/offers/v1/available-offers", headers, jsonOf(body))
	if code != 200 {
		t.Fatalf("search: %d %s", code, raw)
	}
	var v offersView
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		t.Fatal(err)
	}
	return v, raw
}

func jsonOf(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestRESTOffers: a search on the original's path and body answers offers grouped by itinerary;
// each offer's links read it back at the same price, its taxes line by line summing to its
// taxes; the GET form of the search answers the same offers; and every refusal has its code.
func TestRESTOffers(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		clock := atomic.Pointer[time.Time]{}
		clock.Store(&storetest.Now)
		s := newServerWith(t, storetest.Seeded(t, dialect, os.Getenv), func(c *serverConfig) { c.Now = func() time.Time { return *clock.Load() } })
		bearer := map[string]string{"Authorization": "Bearer " + s.bearerToken(t, "")}
		search := func(t *testing.T, headers map[string]string, body map[string]any) (offersView, string) {
			t.Helper()
			return searchOffers(t, s, headers, body)
		}
		got, _ := search(t, bearer, offerSearch("AMS", "NYC", "ADT", "CHD", "INF"))
		if len(got.Itineraries) == 0 {
			t.Fatal("no offers from AMS to New York tomorrow")
		}
		stops := map[int]int{}
		for _, it := range got.Itineraries {
			c := it.Connections[0]
			stops[c.NumberOfStops]++
			if c.Segments[0].Origin.Code != "AMS" || c.Segments[len(c.Segments)-1].Destination.Code != "JFK" && c.Segments[len(c.Segments)-1].Destination.Code != "EWR" {
				t.Fatalf("an itinerary from %s to %s", c.Segments[0].Origin.Code, c.Segments[len(c.Segments)-1].Destination.Code)
			}
			for _, p := range it.FlightProducts {
				if p.Price.Currency != "EUR" || len(p.Price.PricePerPassengerTypes) != 3 || p.Price.DisplayPrice != p.Price.PricePerPassengerTypes[0].Total {
					t.Fatalf("product %+v", p)
				}
			}
		}
		if stops[0] == 0 || stops[1] == 0 {
			t.Errorf("itineraries by stops: %v, want nonstop and one-stop", stops)
		}

		// Read back: the same price, taxes summing up, the same flights.
		p := got.Itineraries[0].FlightProducts[0]
		var details struct {
			Offer      productView
			Connection struct{ Segments []struct{ FlightID string } }
		}
		get(t, s, p.Links.PriceDetails.Href, bearer, &details)
		if details.Offer.ID != p.ID || details.Offer.Price.TotalPrice != p.Price.TotalPrice || details.Offer.SeatsLeft != p.SeatsLeft {
			t.Errorf("priceDetails %+v, searched %+v", details.Offer, p)
		}
		var taxes struct {
			TotalTaxes string
			Passengers []struct {
				Count int
				Total string
				Taxes []struct{ Code, Name, Amount string }
			}
		}
		get(t, s, p.Links.TaxBreakdown.Href, bearer, &taxes)
		if taxes.TotalTaxes != p.Price.TotalTaxes || len(taxes.Passengers) != 3 {
			t.Errorf("tax-breakdown %+v, offer's taxes %s", taxes, p.Price.TotalTaxes)
		}
		for _, pt := range taxes.Passengers {
			if sum := sumAmounts(t, pt.Taxes); sum != pt.Total {
				t.Errorf("the lines sum to %s, the total is %s", sum, pt.Total)
			}
		}
		var fd struct {
			Connection struct{ Segments []struct{ FlightID string } }
		}
		get(t, s, p.Links.FlightDetails.Href, bearer, &fd)
		if len(fd.Connection.Segments) != len(got.Itineraries[0].Connections[0].Segments) || fd.Connection.Segments[0].FlightID != got.Itineraries[0].Connections[0].Segments[0].FlightID {
			t.Errorf("flightDetails %+v", fd)
		}

		// The GET form, as the self link gives it, answers the same offers.
		var again offersView
		get(t, s, got.Links.Self.Href, bearer, &again)
		if jsonOf(again.Itineraries) != jsonOf(got.Itineraries) {
			t.Errorf("the GET form answers other offers")
		}

		// The point of sale's currency, or the request's.
		us, _ := search(t, map[string]string{"Authorization": bearer["Authorization"], "svc-travel-country": "US"}, offerSearch("AMS", "NYC", "ADT"))
		body := offerSearch("AMS", "NYC", "ADT")
		body["currency"], body["displayPriceContent"] = "JPY", "ALL_PAX_ROUNDED"
		jp, _ := search(t, bearer, body)
		if c := us.Itineraries[0].FlightProducts[0].Price.Currency; c != "USD" {
			t.Errorf("svc-travel-country US prices in %s", c)
		}
		if pr := jp.Itineraries[0].FlightProducts[0].Price; pr.Currency != "JPY" || strings.Contains(pr.TotalPrice, ".") {
			t.Errorf("a JPY price: %+v", pr)
		}

		// Refusals.
		for _, c := range []struct {
			name, method, path, body string
			headers                  map[string]string
			status                   int
			code                     string
		}{
			{"no cabins", "POST", "/opendata/offers/v1/available-offers", strings.Replace(jsonOf(offerSearch("AMS", "NYC", "ADT")), `"commercialCabins":["ALL"],`, "", 1), nil, 400, flightgraph.ECodeMissingParameter},
			{"not JSON", "POST", "/opendata/offers/v1/available-offers", `{"commercialCabins":`, nil, 400, flightgraph.ECodeBadBody},
			{"two objects", "POST", "/opendata/offers/v1/available-offers", jsonOf(offerSearch("AMS", "NYC", "ADT")) + "{}", nil, 400, flightgraph.ECodeBadBody},
			{"form body", "POST", "/opendata/offers/v1/available-offers", "a=b", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415, flightgraph.ECodeBadMediaType},
			{"huge body", "POST", "/opendata/offers/v1/available-offers", `{"currency":"` + strings.Repeat("E", 20<<10) + `"}`, nil, 413, flightgraph.ECodeBodyTooLarge},
			{"unknown airport", "POST", "/opendata/offers/v1/available-offers", jsonOf(offerSearch("AMS", "QQQ", "ADT")), nil, 404, flightgraph.ECodeIATANotFound},
			{"a child alone", "POST", "/opendata/offers/v1/available-offers", jsonOf(offerSearch("AMS", "NYC", "CHD")), nil, 400, flightgraph.ECodeInvalidParameter},
			{"reward fares", "POST", "/opendata/offers/v1/available-offers", strings.Replace(jsonOf(offerSearch("AMS", "NYC", "ADT")), `{`, `{"bookingFlow":"REWARD",`, 1), nil, 400, flightgraph.ECodeInvalidParameter},
			{"no offer id", "GET", "/opendata/offers/v1/priceDetails", "", nil, 400, flightgraph.ECodeMissingParameter},
			{"a forged offer id", "GET", "/opendata/offers/v1/priceDetails?offerId=" + url.QueryEscape(flipOne(p.ID, len(p.ID)-2)), "", nil, 400, flightgraph.ECodeOfferInvalid},
			{"an api-key on an OAuth API", "POST", "/opendata/offers/v1/available-offers", jsonOf(offerSearch("AMS", "NYC", "ADT")), map[string]string{"api-key": s.demo.APIKey}, 403, flightgraph.ECodeWrongCredential},
		} {
			h := c.headers
			if h == nil {
				h = bearer
			} else if _, ok := h["api-key"]; !ok {
				h["Authorization"] = bearer["Authorization"]
			}
			code, _, raw := s.call(t, c.method, c.path, h, c.body)
			if code != c.status || restCode(t, raw) != c.code {
				t.Errorf("%s: %d %s, want %d %s", c.name, code, raw, c.status, c.code)
			}
		}

		// Past its validity, an offer is gone.
		later := storetest.Now.Add(flightgraph.OfferValidity)
		clock.Store(&later)
		bearer = map[string]string{"Authorization": "Bearer " + s.bearerToken(t, "")}
		if code, _, raw := s.call(t, "GET", p.Links.PriceDetails.Href, bearer, ""); code != 410 || restCode(t, raw) != flightgraph.ECodeOfferExpired {
			t.Errorf("an expired offer: %d %s", code, raw)
		}
	})
}

// get calls a REST path that must answer 200 and decodes its body.
func get(t *testing.T, s *testServer, path string, headers map[string]string, into any) {
	t.Helper()
	code, _, raw := s.call(t, http.MethodGet, path, headers, "")
	if code != 200 {
		t.Fatalf("GET %s: %d %s", path, code, raw)
	}
	if err := json.Unmarshal([]byte(raw), into); err != nil {
		t.Fatal(err)
	}
}

// sumAmounts adds decimal amounts exactly, in thousandths.
func sumAmounts(t *testing.T, lines []struct{ Code, Name, Amount string }) string {
	t.Helper()
	var total flightgraph.Money
	for _, l := range lines {
		m, err := flightgraph.ParseAmount(l.Amount, "EUR")
		if err != nil {
			t.Fatal(err)
		}
		total = total.Add(m)
	}
	return total.Decimal()
}

func flipOne(s string, i int) string {
	b := []byte(s)
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

// offersQuery asks for the offers of a search with their flights down to the legs' airports.
const offersQuery = `query($s: OfferSearchInput!) { availableOffers(search: $s) { id cabin fareFamily { code rank } seatsLeft expiresAt
	price { total { amount currency } passengers { type count base { amount } taxTotal { amount } total { amount } taxes { code name amount { amount } } } }
	segments { seatsLeft distanceKm connectionMinutes flight { id legs { origin { code } destination { code } } } } } }`

type gqlOffer struct {
	ID    string
	Price struct {
		Total struct{ Amount, Currency string }
	}
	Segments []struct {
		SeatsLeft int
		Flight    struct{ ID string }
	}
}

// gqlSearch is offerSearch as the subgraph's OfferSearchInput.
func gqlSearch(origin, destination string, pax ...string) map[string]any {
	var ps []map[string]any
	for i, p := range pax {
		ps = append(ps, map[string]any{"id": i + 1, "type": p})
	}
	return map[string]any{"passengers": ps, "requestedConnections": []map[string]any{{
		"departureDate": storetest.Now.AddDate(0, 0, 1).Format(flightgraph.DateLayout), "origin": origin, "destination": destination}}}
}

// TestGraphQLOffers: the subgraph's availableOffers answers the offers REST answers for the same
// search, at the same prices; offer and _entities read one back; the SQL round trips of a search
// do not grow with its offers.
func TestGraphQLOffers(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		// The reference snapshot, as serve has it: a search's round trips are its flights'.
		s := newServerWith(t, storetest.Seeded(t, dialect, os.Getenv), func(c *serverConfig) { c.SnapshotTTL = time.Hour })
		bearer := map[string]string{"Authorization": "Bearer " + s.bearerToken(t, "")}
		search := func(origin, destination string) ([]gqlOffer, int64) {
			resp := s.queryAs(t, bearer, offersQuery, map[string]any{"s": gqlSearch(origin, destination, "ADT", "CHD")})
			if len(resp.Errors) > 0 {
				t.Fatalf("availableOffers %s-%s: %+v", origin, destination, resp.Errors)
			}
			var d struct{ AvailableOffers []gqlOffer }
			json.Unmarshal(resp.Data, &d)
			return d.AvailableOffers, s.queries.Load()
		}
		search("GOT", "JFK") // loads the snapshot
		many, manyQueries := search("AMS", "NYC")
		few, fewQueries := search("GOT", "JFK")
		if len(many) <= 2*len(few) || len(few) == 0 {
			t.Fatalf("%d and %d offers: the searches do not differ enough to compare", len(many), len(few))
		}
		t.Logf("%d offers: %d round trips; %d offers: %d", len(many), manyQueries, len(few), fewQueries)
		if manyQueries != fewQueries {
			t.Errorf("%d offers took %d round trips, %d took %d", len(many), manyQueries, len(few), fewQueries)
		}

		// REST answers the same offers at the same prices.
		code, _, raw := s.call(t, http.MethodPost, "/opendata/offers/v1/available-offers", bearer, jsonOf(offerSearch("AMS", "NYC", "ADT", "CHD")))
		if code != 200 {
			t.Fatalf("REST: %d %s", code, raw)
		}
		// The subgraph serves the flights' legs the engine read: no round trip more than REST.
		if n := s.queries.Load(); n != manyQueries {
			t.Errorf("REST's search took %d round trips, the subgraph's %d", n, manyQueries)
		}
		var rest offersView
		json.Unmarshal([]byte(raw), &rest)
		prices := map[string]string{}
		for _, it := range rest.Itineraries {
			for _, p := range it.FlightProducts {
				prices[p.ID] = p.Price.TotalPrice + " " + p.Price.Currency
			}
		}
		if len(prices) != len(many) {
			t.Errorf("REST answers %d offers, GraphQL %d", len(prices), len(many))
		}
		for _, o := range many {
			if got := o.Price.Total.Amount + " " + o.Price.Total.Currency; prices[o.ID] != got {
				t.Errorf("offer %.40s…: GraphQL %s, REST %q", o.ID, got, prices[o.ID])
			}
		}

		// offer and _entities read an offer back as the search gave it.
		resp := s.queryAs(t, bearer, `query($id: ID!) { offer(id: $id) { id price { total { amount } } }
			_entities(representations: [{__typename: "Offer", id: $id}]) { ... on Offer { id price { total { amount } } } } }`, map[string]any{"id": many[0].ID})
		var back struct {
			Offer    gqlOffer
			Entities []gqlOffer `json:"_entities"`
		}
		json.Unmarshal(resp.Data, &back)
		if len(resp.Errors) > 0 || back.Offer.Price.Total.Amount != many[0].Price.Total.Amount || len(back.Entities) != 1 || back.Entities[0].Price.Total.Amount != many[0].Price.Total.Amount {
			t.Errorf("read back: %s %+v", resp.Data, resp.Errors)
		}
		resp = s.queryAs(t, bearer, `query($id: ID!) { offer(id: $id) { id } }`, map[string]any{"id": flipOne(many[0].ID, 10)})
		if len(resp.Errors) == 0 || resp.Errors[0].Extensions["code"] != flightgraph.ECodeOfferInvalid {
			t.Errorf("a forged id: %+v", resp.Errors)
		}
		resp = s.queryAs(t, bearer, offersQuery, map[string]any{"s": gqlSearch("AMS", "NYC", "CHD")})
		if len(resp.Errors) == 0 || resp.Errors[0].Extensions["code"] != flightgraph.ECodeInvalidParameter {
			t.Errorf("a child alone: %+v", resp.Errors)
		}
	})
}

// TestLowestFares: a calendar on REST and on the subgraph agree, and each day is the cheapest
// offer the day's available-offers gives; a malformed interval has its code.
func TestLowestFares(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		bearer := map[string]string{"Authorization": "Bearer " + s.bearerToken(t, "")}
		today, tomorrow := storetest.Now.Format(flightgraph.DateLayout), storetest.Now.AddDate(0, 0, 1).Format(flightgraph.DateLayout)
		body := offerSearch("AMS", "NYC", "ADT", "CHD")
		body["dateInterval"] = today + "/" + tomorrow
		code, _, raw := s.call(t, http.MethodPost, "/opendata/offers/v1/lowest-fare-offers", bearer, jsonOf(body))
		if code != 200 {
			t.Fatalf("lowest-fare-offers: %d %s", code, raw)
		}
		var cal struct {
			LowestFareOffers []struct {
				Period        string
				FlightProduct *productView
			}
		}
		json.Unmarshal([]byte(raw), &cal)
		if len(cal.LowestFareOffers) != 2 || cal.LowestFareOffers[1].Period != tomorrow || cal.LowestFareOffers[1].FlightProduct == nil {
			t.Fatalf("calendar %s", raw)
		}
		// Tomorrow's is the cheapest of tomorrow's offers.
		offers, _ := func() (offersView, string) {
			_, _, raw := s.call(t, http.MethodPost, "/opendata/offers/v1/available-offers", bearer, jsonOf(offerSearch("AMS", "NYC", "ADT", "CHD")))
			var v offersView
			json.Unmarshal([]byte(raw), &v)
			return v, raw
		}()
		var cheapest *productView
		for _, it := range offers.Itineraries {
			for _, p := range it.FlightProducts {
				a, _ := flightgraph.ParseAmount(p.Price.TotalPrice, "EUR")
				if cheapest == nil {
					cheapest = &p
				} else if b, _ := flightgraph.ParseAmount(cheapest.Price.TotalPrice, "EUR"); a.Minor < b.Minor {
					cheapest = &p
				}
			}
		}
		if got := cal.LowestFareOffers[1].FlightProduct; cheapest == nil || got.Price.TotalPrice != cheapest.Price.TotalPrice {
			t.Errorf("tomorrow's lowest fare %+v, the cheapest offer %+v", got, cheapest)
		}
		// The subgraph's calendar is the same.
		resp := s.queryAs(t, bearer, `query($s: OfferSearchInput!, $d: String) { lowestFares(search: $s, dateInterval: $d) { period offer { id price { total { amount } } } } }`,
			map[string]any{"s": gqlSearch("AMS", "NYC", "ADT", "CHD"), "d": today + "/" + tomorrow})
		var g struct {
			LowestFares []struct {
				Period string
				Offer  *gqlOffer
			}
		}
		json.Unmarshal(resp.Data, &g)
		if len(resp.Errors) > 0 || len(g.LowestFares) != 2 || g.LowestFares[1].Offer == nil || g.LowestFares[1].Offer.ID != cal.LowestFareOffers[1].FlightProduct.ID {
			t.Errorf("the subgraph's calendar: %s %+v", resp.Data, resp.Errors)
		}
		for _, c := range []struct{ interval, code string }{{"2026-11-22", flightgraph.ECodeBadFormat}, {tomorrow + "/" + today, flightgraph.ECodeInvalidParameter},
			{"2026-01-01/2027-12-31", flightgraph.ECodeInvalidParameter}} {
			body["dateInterval"] = c.interval
			if code, _, raw := s.call(t, http.MethodPost, "/opendata/offers/v1/lowest-fare-offers", bearer, jsonOf(body)); code != 400 || restCode(t, raw) != c.code {
				t.Errorf("interval %q: %d %s", c.interval, code, raw)
			}
		}
	})
}

// TestRESTUpsellAndReturn: upsell-offers answers the search's own offers for the same flights in
// dearer families, by GET and POST; available-offers/all answers both bounds of a return.
func TestRESTUpsellAndReturn(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, "sqlite", os.Getenv))
	bearer := map[string]string{"Authorization": "Bearer " + s.bearerToken(t, "")}
	_, _, raw := s.call(t, http.MethodPost, "/opendata/offers/v1/available-offers", bearer, jsonOf(offerSearch("AMS", "NYC", "ADT")))
	var got offersView
	json.Unmarshal([]byte(raw), &got)
	prices := map[string]string{}
	for _, it := range got.Itineraries {
		for _, p := range it.FlightProducts {
			prices[p.ID] = p.Price.TotalPrice
		}
	}
	first := got.Itineraries[0].FlightProducts[0]
	var up struct {
		Offer        productView
		UpsellOffers []productView
	}
	var details struct{ Offer productView }
	get(t, s, first.Links.PriceDetails.Href, bearer, &details)
	readBack := s.queries.Load()
	get(t, s, "/opendata/offers/v1/upsell-offers?offerId="+url.QueryEscape(first.ID), bearer, &up)
	if n := s.queries.Load(); n != readBack {
		t.Errorf("upsell-offers took %d round trips, reading the offer back %d", n, readBack)
	}
	if up.Offer.ID != first.ID || len(up.UpsellOffers) != len(got.Itineraries[0].FlightProducts)-1 {
		t.Fatalf("upsell of %s: %+v", first.FareFamily.Code, up)
	}
	for _, u := range up.UpsellOffers {
		if prices[u.ID] != u.Price.TotalPrice {
			t.Errorf("upsell %s at %s, the search's %q", u.FareFamily.Code, u.Price.TotalPrice, prices[u.ID])
		}
	}
	code, _, raw := s.call(t, http.MethodPost, "/opendata/offers/v1/upsell-offers", bearer, jsonOf(map[string]string{"offerId": first.ID}))
	var upPost struct{ UpsellOffers []productView }
	json.Unmarshal([]byte(raw), &upPost)
	if code != 200 || len(upPost.UpsellOffers) != len(up.UpsellOffers) {
		t.Errorf("POST upsell-offers: %d %s", code, raw)
	}

	trip := offerSearch("AMS", "NYC", "ADT")
	back := map[string]any{"departureDate": storetest.Now.AddDate(0, 0, 1).Format(flightgraph.DateLayout),
		"origin": map[string]any{"city": map[string]any{"code": "NYC"}}, "destination": map[string]any{"airport": map[string]any{"code": "AMS"}}}
	trip["requestedConnections"] = append(trip["requestedConnections"].([]map[string]any), back)
	code, _, raw = s.call(t, http.MethodPost, "/opendata/offers/v1/available-offers/all", bearer, jsonOf(trip))
	var both struct{ Outbound, Inbound offersView }
	json.Unmarshal([]byte(raw), &both)
	if code != 200 || len(both.Outbound.Itineraries) == 0 || len(both.Inbound.Itineraries) == 0 {
		t.Fatalf("available-offers/all: %d %.300s", code, raw)
	}
	if seg := both.Inbound.Itineraries[0].Connections[0].Segments; seg[len(seg)-1].Destination.Code != "AMS" {
		t.Errorf("an inbound itinerary ends at %s", seg[len(seg)-1].Destination.Code)
	}
	if jsonOf(both.Outbound.Itineraries) != jsonOf(got.Itineraries) {
		t.Errorf("the outbound bound differs from the one-way search")
	}
}

// TestTicketConditions: an offer's conditions are its family's with fees in its currency; a
// family on a trip gives the same; bad input has its code.
func TestTicketConditions(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, "sqlite", os.Getenv))
	bearer := map[string]string{"Authorization": "Bearer " + s.bearerToken(t, "")}
	body := offerSearch("AMS", "NYC", "ADT")
	body["currency"] = "USD"
	_, _, raw := s.call(t, http.MethodPost, "/opendata/offers/v1/available-offers", bearer, jsonOf(body))
	var got offersView
	json.Unmarshal([]byte(raw), &got)
	var standard *productView
	for _, p := range got.Itineraries[0].FlightProducts {
		if p.FareFamily.Code == "ECONOMY_STANDARD" {
			standard = &p
		}
	}
	if standard == nil {
		t.Fatal("no Economy Standard offer")
	}
	type conds struct {
		FareFamily struct{ Code string }
		Conditions []struct {
			Type    string
			Allowed bool
			Fee     *struct{ Amount, Currency string }
		}
	}
	var byOffer, byTrip conds
	get(t, s, "/opendata/offers/v1/ticket-conditions?offerId="+url.QueryEscape(standard.ID), bearer, &byOffer)
	get(t, s, "/opendata/offers/v1/ticket-conditions?origin=AMS&destination=NYC&departureDate="+storetest.Now.Format(flightgraph.DateLayout)+"&fareFamily=economy_standard&currency=USD", bearer, &byTrip)
	if byOffer.FareFamily.Code != "ECONOMY_STANDARD" || jsonOf(byOffer) != jsonOf(byTrip) {
		t.Fatalf("by offer %+v, by trip %+v", byOffer, byTrip)
	}
	resp := s.queryAs(t, bearer, `query($id: ID) { ticketConditions(offerId: $id) { fareFamily { code } conditions { type allowed fee { amount currency } } } }`,
		map[string]any{"id": standard.ID})
	var g struct{ TicketConditions conds }
	json.Unmarshal(resp.Data, &g)
	if len(resp.Errors) > 0 || jsonOf(g.TicketConditions.Conditions) != jsonOf(byOffer.Conditions) {
		t.Errorf("the subgraph's conditions: %s %+v", resp.Data, resp.Errors)
	}
	if c := byOffer.Conditions[0]; c.Type != "CHANGE" || !c.Allowed || c.Fee == nil || c.Fee.Currency != "USD" || c.Fee.Amount != "75.60" {
		t.Errorf("Economy Standard's change: %+v", c)
	}
	for _, c := range []struct{ query, code string }{{"", flightgraph.ECodeMissingParameter}, {"?offerId=o1.x.y", flightgraph.ECodeOfferInvalid},
		{"?origin=AMS&destination=QQQ&departureDate=2026-11-23&fareFamily=FIRST", flightgraph.ECodeIATANotFound},
		{"?origin=AMS&destination=JFK&departureDate=2026-11-23&fareFamily=CHEAPEST", flightgraph.ECodeInvalidParameter}} {
		if code, _, raw := s.call(t, "GET", "/opendata/offers/v1/ticket-conditions"+c.query, bearer, ""); restCode(t, raw) != c.code || code >= 500 {
			t.Errorf("%q: %d %s", c.query, code, raw)
		}
	}
}

// pagedOffersQuery is a full offers search with per-passenger taxes, as a booking page asks for it.
const pagedOffersQuery = `query($s: OfferSearchInput!, $first: Int) { availableOffers(search: $s, first: $first) { id
	price { total { amount currency } passengers { type taxes { code amount { amount } } } } } }`

// TestOffersPage: on the Default plan, a full offers search with per-passenger taxes is refused
// for its cost (QUERY_400.000) unless first bounds it; with first: 20 it costs what 20 offers do,
// within the plan's 20,000, and answers the first 20 offers of the engine's order (by departure,
// then fewer flights, then price), as first: 200 gives them; first out of 1 to 200 is
// INSP_400.001 naming first.
func TestOffersPage(t *testing.T) {
	s := newServerWith(t, storetest.Seeded(t, store.SQLite, os.Getenv), func(c *serverConfig) { c.DefaultPlans = true })
	bearer := map[string]string{"Authorization": "Bearer " + s.bearerToken(t, ""), "Content-Type": "application/json"}
	search := gqlSearch("AMS", "NYC", "ADT", "CHD")
	type answer struct {
		Data struct {
			AvailableOffers []struct {
				ID    string
				Price struct {
					Passengers []struct {
						Type  string
						Taxes []struct{ Code string }
					}
				}
			}
		}
		Errors []struct {
			Extensions map[string]any
		}
		Extensions struct {
			Cost struct {
				Requested int
				Bounds    struct{ MaxCost int }
			}
		}
	}
	ask := func(query string, first any) answer {
		t.Helper()
		vars := map[string]any{"s": search}
		if first != nil {
			vars["first"] = first
		}
		_, _, body := s.call(t, http.MethodPost, "/graphql", bearer, jsonBody(query, vars))
		var a answer
		if err := json.Unmarshal([]byte(body), &a); err != nil {
			t.Fatalf("%v: %.300s", err, body)
		}
		return a
	}
	code := func(a answer) any {
		if len(a.Errors) == 0 {
			return nil
		}
		return a.Errors[0].Extensions["code"]
	}

	// The whole search is refused for its cost, before anything runs.
	if a := ask(pagedOffersQuery, nil); code(a) != flightgraph.ECodeQueryCost {
		t.Fatalf("without first: %+v", a.Errors)
	}

	// The first 20 cost what 20 offers do, within the Default plan.
	page := ask(pagedOffersQuery, 20)
	if len(page.Errors) > 0 {
		t.Fatalf("first: 20: %+v", page.Errors)
	}
	if got := len(page.Data.AvailableOffers); got != 20 {
		t.Fatalf("first: 20 answered %d offers", got)
	}
	if c := page.Extensions.Cost; c.Bounds.MaxCost != 20_000 || c.Requested > c.Bounds.MaxCost || c.Requested < 20*100 {
		t.Errorf("first: 20 costs %d of %d", c.Requested, c.Bounds.MaxCost)
	} else {
		t.Logf("first: 20 with per-passenger taxes costs %d of %d", c.Requested, c.Bounds.MaxCost)
	}
	if p := page.Data.AvailableOffers[0].Price.Passengers; len(p) != 2 || len(p[0].Taxes) == 0 {
		t.Errorf("the offers' passengers and taxes: %+v", p)
	}

	// They are the first 20 of the whole order.
	ids := `query($s: OfferSearchInput!, $first: Int) { availableOffers(search: $s, first: $first) { id } }`
	all := ask(ids, 200)
	if len(all.Errors) > 0 || len(all.Data.AvailableOffers) <= 20 {
		t.Fatalf("first: 200: %d offers, %+v", len(all.Data.AvailableOffers), all.Errors)
	}
	for i, o := range page.Data.AvailableOffers {
		if o.ID != all.Data.AvailableOffers[i].ID {
			t.Fatalf("offer %d of the page is not offer %d of the search", i, i)
		}
	}

	// first out of range is refused, naming it. (With the taxes, first: 0 and 201 would cost more
	// than the plan allows: 0 counts as the 400 offers assumed, and is refused for that first.)
	for _, first := range []any{0, 201, -1} {
		a := ask(ids, first)
		if code(a) != flightgraph.ECodeInvalidParameter || a.Errors[0].Extensions["parameter"] != "first" || len(a.Data.AvailableOffers) > 0 {
			t.Errorf("first: %v: %+v", first, a.Errors)
		}
	}
}

// TestListsTakeFirst: lowestFares and flightsAvailability answer, with first, the first items of
// the order they answer without it, and the operation's cost counts first items instead of the
// list's assumed size; first out of 1 to 200 is INSP_400.001 naming first.
func TestListsTakeFirst(t *testing.T) {
	s := newServer(t, storetest.Seeded(t, store.SQLite, os.Getenv))
	bearer := map[string]string{"Authorization": "Bearer " + s.bearerToken(t, ""), "Content-Type": "application/json"}
	today := storetest.Now.Format(flightgraph.DateLayout)
	search := gqlSearch("AMS", "NYC", "ADT", "CHD")
	for _, c := range []struct {
		field, query string
		vars         map[string]any
	}{
		{"lowestFares", `query($s: OfferSearchInput!, $d: String, $f: Int) { lowestFares(search: $s, dateInterval: $d, first: $f) { period offer { id } } }`,
			map[string]any{"s": search, "d": today + "/" + storetest.Now.AddDate(0, 0, 9).Format(flightgraph.DateLayout)}},
		{"flightsAvailability", `query($s: OfferSearchInput!, $f: Int) { flightsAvailability(search: $s, first: $f) { bound segments { flight { id } } } }`,
			map[string]any{"s": search}},
	} {
		t.Run(c.field, func(t *testing.T) {
			ask := func(first any) (items []json.RawMessage, cost int, code, param any) {
				t.Helper()
				vars := maps.Clone(c.vars)
				if first != nil {
					vars["f"] = first
				}
				_, _, body := s.call(t, http.MethodPost, "/graphql", bearer, jsonBody(c.query, vars))
				var a struct {
					Data       map[string][]json.RawMessage
					Errors     []struct{ Extensions map[string]any }
					Extensions struct{ Cost struct{ Requested int } }
				}
				if err := json.Unmarshal([]byte(body), &a); err != nil {
					t.Fatalf("%v: %.300s", err, body)
				}
				if len(a.Errors) > 0 {
					code, param = a.Errors[0].Extensions["code"], a.Errors[0].Extensions["parameter"]
				}
				return a.Data[c.field], a.Extensions.Cost.Requested, code, param
			}
			all, allCost, code, _ := ask(nil)
			if code != nil || len(all) < 3 {
				t.Fatalf("without first: %d items, %v", len(all), code)
			}
			page, cost, code, _ := ask(2)
			if code != nil || len(page) != 2 || string(page[0]) != string(all[0]) || string(page[1]) != string(all[1]) {
				t.Fatalf("first: 2 answered %s (%v), the whole list begins %s %s", page, code, all[0], all[1])
			}
			if cost >= allCost/10 {
				t.Errorf("first: 2 costs %d, the whole list %d", cost, allCost)
			}
			for _, first := range []any{0, 201} {
				if items, _, code, param := ask(first); code != flightgraph.ECodeInvalidParameter || param != "first" || len(items) > 0 {
					t.Errorf("first: %v: %d items, %v %v", first, len(items), code, param)
				}
			}
		})
	}
}
