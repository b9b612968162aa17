package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// dealsView is as much of a REST deals answer (best-fare-offers, all-deals, the feed) as the
// tests read.
type dealsView struct {
	Origin         placeView
	DateInterval   string
	DealType       string
	Currency       string
	BestFareOffers []dealView
	BestOffers     []dealView
}

type dealView struct {
	Destination   placeView
	Zone          struct{ Code, Label string }
	Period        string
	DepartureDate string
	FlightProduct *productView
	Links         *struct{ Offers struct{ Href string } } `json:"_links"`
}

// today and tomorrow are storetest.Seeded's days with flights ahead.
var (
	today    = storetest.Now.Format(flightgraph.DateLayout)
	tomorrow = storetest.Now.AddDate(0, 0, 1).Format(flightgraph.DateLayout)
)

// dealsBody is a deals search from origin to destinations (codes; "PAR" style are cities) over
// today and tomorrow, for one adult and a child.
func dealsBody(origin string, destinations ...string) map[string]any {
	var ds []map[string]any
	for _, d := range destinations {
		ds = append(ds, map[string]any{"city": map[string]any{"code": d}})
	}
	return map[string]any{"origin": map[string]any{"airport": map[string]any{"code": origin}}, "destinations": ds,
		"dateInterval": today + "/" + tomorrow, "passengers": []map[string]any{{"id": 1, "type": "ADT"}, {"id": 2, "type": "CHD"}}}
}

// postDeals posts a deals search and decodes its answer; the test fails unless it is 200.
func postDeals(t *testing.T, s *testServer, path string, headers map[string]string, body map[string]any) (dealsView, int64) {
	t.Helper()
	code, _, raw := s.call(t, http.MethodPost, path, headers, jsonOf(body))
	if code != 200 {
		t.Fatalf("POST %s: %d %s", path, code, raw)
	}
	var v dealsView
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		t.Fatal(err)
	}
	return v, s.queries.Load()
}

// cheapestListed is the first cheapest offer of an offers search's answer, in its order.
func cheapestListed(t *testing.T, v offersView) *productView {
	t.Helper()
	var best *productView
	var bestMinor int64
	for _, it := range v.Itineraries {
		for _, p := range it.FlightProducts {
			m, err := flightgraph.ParseAmount(p.Price.TotalPrice, p.Price.Currency)
			if err != nil {
				t.Fatal(err)
			}
			if best == nil || m.Minor < bestMinor {
				best, bestMinor = &p, m.Minor
			}
		}
	}
	return best
}

// TestBestFareOffers: a deal's offer is the cheapest that the available-offers search of its day
// (its _links.offers) lists, at the same price and with the same id; the subgraph's bestFareOffers
// answers the same offers; the round trips are the same for one destination or five; all deals
// are cheapest first and hold the best-fare deal of each destination; every refusal has its code.
func TestBestFareOffers(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServerWith(t, storetest.Seeded(t, dialect, os.Getenv), func(c *serverConfig) { c.SnapshotTTL = time.Hour })
		bearer := map[string]string{"Authorization": "Bearer " + s.bearerToken(t, "")}
		const path = "/opendata/offers/v1/best-fare-offers"
		postDeals(t, s, path, bearer, dealsBody("AMS", "LON")) // loads the snapshot
		_, one := postDeals(t, s, path, bearer, dealsBody("AMS", "BCN"))
		five := []string{"NYC", "LON", "BCN", "PAR", "CPT"}
		got, many := postDeals(t, s, path, bearer, dealsBody("AMS", five...))
		t.Logf("best-fare-offers: %d round trips for one destination, %d for five", one, many)
		if one != many || one == 0 {
			t.Errorf("one destination took %d round trips, five %d", one, many)
		}
		// Asked again, the same deals come from the fare index: no read.
		if again, trips := postDeals(t, s, path, bearer, dealsBody("AMS", five...)); trips != 0 || jsonOf(again) != jsonOf(got) {
			t.Errorf("the same deals again: %d round trips, the same answer %v", trips, jsonOf(again) == jsonOf(got))
		}
		if len(got.BestFareOffers) != len(five) || got.Origin.Code != "AMS" || got.DealType != "LOWEST_FARE" || got.Currency != "EUR" {
			t.Fatalf("deals: %+v", got)
		}
		priced := 0
		for i, d := range got.BestFareOffers {
			if d.Destination.Code != five[i] || d.Destination.Type != "CITY" || d.Period != today+"/"+tomorrow || d.Zone.Code == "" {
				t.Errorf("deal %d: %+v", i, d)
			}
			if d.FlightProduct == nil {
				continue
			}
			priced++
			var day offersView
			get(t, s, d.Links.Offers.Href, bearer, &day)
			want := cheapestListed(t, day)
			if want == nil || want.ID != d.FlightProduct.ID || want.Price.TotalPrice != d.FlightProduct.Price.TotalPrice || !strings.Contains(d.Links.Offers.Href, d.DepartureDate) {
				t.Errorf("AMS-%s: the deal %+v, its day's cheapest %+v", five[i], d.FlightProduct, want)
			}
		}
		if priced < 4 {
			t.Fatalf("only %d of 5 destinations have a deal", priced)
		}

		// The subgraph's deals are the same offers.
		resp := s.queryAs(t, bearer, `query($s: DealSearchInput!) { bestFareOffers(search: $s) { destination destinationType city { code } zone { code name(language: FR) }
			period departureDate offer { id price { total { amount currency } } segments { flight { id origin { code } } } } } }`,
			map[string]any{"s": map[string]any{"origin": "AMS", "destinations": five, "dateInterval": today + "/" + tomorrow,
				"passengers": []map[string]any{{"id": 1, "type": "ADT"}, {"id": 2, "type": "CHD"}}}})
		var g struct {
			BestFareOffers []struct {
				Destination, DestinationType, Period string
				Zone                                 struct{ Code, Name string }
				Offer                                *gqlOffer
			}
		}
		json.Unmarshal(resp.Data, &g)
		if len(resp.Errors) > 0 || len(g.BestFareOffers) != len(five) {
			t.Fatalf("bestFareOffers: %s %+v", resp.Data, resp.Errors)
		}
		for i, d := range g.BestFareOffers {
			want := got.BestFareOffers[i]
			if d.Destination != five[i] || (d.Offer == nil) != (want.FlightProduct == nil) || d.Offer != nil && (d.Offer.ID != want.FlightProduct.ID || d.Offer.Price.Total.Amount != want.FlightProduct.Price.TotalPrice) {
				t.Errorf("GraphQL's deal to %s: %+v, REST's %+v", five[i], d, want.FlightProduct)
			}
		}

		// The subgraph's round trips do not grow with the destinations either: the offers' flights
		// come through the loaders with the legs the engine read.
		gqlTrips := func(dests []string) int64 {
			resp := s.queryAs(t, bearer, `query($s: DealSearchInput!) { bestFareOffers(search: $s) { destination city { name country { code } }
				offer { id segments { flight { id status origin { code city { code } } destination { code } legs { aircraft { typeName } } } } } } }`,
				map[string]any{"s": map[string]any{"origin": "AMS", "destinations": dests, "dateInterval": today + "/" + tomorrow}})
			if len(resp.Errors) > 0 {
				t.Fatalf("bestFareOffers %v: %+v", dests, resp.Errors)
			}
			return s.queries.Load()
		}
		gqlTrips([]string{"LON"})
		if a, b := gqlTrips([]string{"LON"}), gqlTrips(five); a != b {
			t.Errorf("the subgraph's deals took %d round trips for one destination, %d for five", a, b)
		}

		// All deals from AMS: cheapest first, each destination's best-fare deal.
		body := dealsBody("AMS")
		delete(body, "destinations")
		body["limit"] = 8
		all, allQueries := postDeals(t, s, path+"/all-deals", bearer, body)
		if len(all.BestFareOffers) != 8 {
			t.Fatalf("all deals: %d", len(all.BestFareOffers))
		}
		if allQueries != one {
			t.Errorf("all deals took %d round trips, one destination's deal %d", allQueries, one)
		}
		var last int64
		for i, d := range all.BestFareOffers {
			m, _ := flightgraph.ParseAmount(d.FlightProduct.Price.TotalPrice, "EUR")
			if m.Minor < last {
				t.Errorf("deal %d is cheaper than the one before", i)
			}
			last = m.Minor
			if i%3 == 0 {
				alone, _ := postDeals(t, s, path, bearer, dealsBody("AMS", d.Destination.Code))
				if p := alone.BestFareOffers[0].FlightProduct; p == nil || p.ID != d.FlightProduct.ID {
					t.Errorf("AMS-%s: all deals %s, best fares %+v", d.Destination.Code, d.FlightProduct.ID, p)
				}
			}
		}
		resp = s.queryAs(t, bearer, `query($s: DealSearchInput!) { allDeals(search: $s, limit: 8) { destination offer { id } } }`,
			map[string]any{"s": map[string]any{"origin": "AMS", "dateInterval": today + "/" + tomorrow,
				"passengers": []map[string]any{{"id": 1, "type": "ADT"}, {"id": 2, "type": "CHD"}}}})
		var ga struct {
			AllDeals []struct{ Destination string }
		}
		json.Unmarshal(resp.Data, &ga)
		if len(resp.Errors) > 0 || len(ga.AllDeals) != 8 || ga.AllDeals[0].Destination != all.BestFareOffers[0].Destination.Code {
			t.Errorf("allDeals: %s %+v", resp.Data, resp.Errors)
		}
		// One network-wide search an operation: two or more are refused before any runs.
		resp = s.queryAs(t, bearer, `query($s: DealSearchInput!) { a: allDeals(search: $s, limit: 2) { destination } ...more }
			fragment more on Query { c: bestFareOffers(search: {origin: "AMS", destinations: ["LON"]}) { destination } }`,
			map[string]any{"s": map[string]any{"origin": "AMS", "dateInterval": today + "/" + tomorrow}})
		if string(resp.Data) != "" && string(resp.Data) != "null" || len(resp.Errors) != 1 || resp.Errors[0].Extensions["code"] != flightgraph.ECodeQueryRootFields {
			t.Errorf("two deals searches in one operation: %s %+v", resp.Data, resp.Errors)
		}
		zoned := dealsBody("AMS")
		delete(zoned, "destinations")
		zoned["destinationZoneCode"] = "E"
		inEurope, _ := postDeals(t, s, path+"/all-deals", bearer, zoned)
		for _, d := range inEurope.BestFareOffers {
			if d.Zone.Code != "E" {
				t.Errorf("a deal to %s in zone %s", d.Destination.Code, d.Zone.Code)
			}
		}

		// Refusals, on both edges.
		tooMany := dealsBody("AMS")
		for i := range flightgraph.MaxDealDestinations + 1 {
			tooMany["destinations"] = append(tooMany["destinations"].([]map[string]any), map[string]any{"city": map[string]any{"code": fmt.Sprintf("Q%02d", i)}})
		}
		with := func(body map[string]any, k string, v any) string { return jsonOf(with2(body, k, v)) }
		ok := dealsBody("AMS", "LON")
		for _, c := range []struct {
			name, path, body string
			status           int
			code             string
		}{
			{"no destinations", path, with(ok, "destinations", nil), 400, flightgraph.ECodeMissingParameter},
			{"no origin", path, with(ok, "origin", nil), 400, flightgraph.ECodeMissingParameter},
			{"unknown origin", path, with(ok, "origin", map[string]any{"city": map[string]any{"code": "QQQ"}}), 404, flightgraph.ECodeOriginUnknown},
			{"unknown destination", path, jsonOf(dealsBody("AMS", "QQQ")), 404, flightgraph.ECodeDestinationUnknown},
			{"the origin", path, jsonOf(dealsBody("AMS", "AMS")), 400, flightgraph.ECodeInvalidParameter},
			{"too many destinations", path, jsonOf(tooMany), 400, flightgraph.ECodeInvalidParameter},
			{"a long interval", path, with(ok, "dateInterval", today+"/"+storetest.Now.AddDate(0, 0, 40).Format(flightgraph.DateLayout)), 400, flightgraph.ECodeInvalidParameter},
			{"a past interval", path, with(ok, "dateInterval", "2026-11-01/2026-11-23"), 400, flightgraph.ECodeInvalidParameter},
			{"a malformed interval", path, with(ok, "dateInterval", "tomorrow"), 400, flightgraph.ECodeBadFormat},
			{"an unknown deal type", path, with(ok, "dealType", "BARGAIN"), 400, flightgraph.ECodeInvalidParameter},
			{"a child alone", path, with(ok, "passengers", []map[string]any{{"id": 1, "type": "CHD"}}), 400, flightgraph.ECodeInvalidParameter},
			{"not JSON", path, `{"origin":`, 400, flightgraph.ECodeBadBody},
			{"destinations for all deals", path + "/all-deals", jsonOf(ok), 400, flightgraph.ECodeInconsistentInput},
			{"limit 0", path + "/all-deals", with(with2(ok, "destinations", nil), "limit", 0), 400, flightgraph.ECodeInvalidParameter},
			// Every interval of the deal months has flights since shopping reaches past the
			// operational window (dataset.Horizon); "nothing under the price" in TestInspiration
			// keeps the refusal of a search that finds no trip.
		} {
			if code, _, raw := s.call(t, http.MethodPost, c.path, bearer, c.body); code != c.status || restCode(t, raw) != c.code {
				t.Errorf("%s: %d %s, want %d %s", c.name, code, raw, c.status, c.code)
			}
		}
		if code, _, raw := s.call(t, http.MethodPost, path, map[string]string{"api-key": s.demo.APIKey}, jsonOf(ok)); code != 403 || restCode(t, raw) != flightgraph.ECodeWrongCredential {
			t.Errorf("an api-key on the OAuth API: %d %s", code, raw)
		}
		resp = s.queryAs(t, bearer, `query($s: DealSearchInput!) { bestFareOffers(search: $s) { destination } }`, map[string]any{"s": map[string]any{"origin": "QQQ", "destinations": []string{"LON"}}})
		if len(resp.Errors) == 0 || resp.Errors[0].Extensions["code"] != flightgraph.ECodeOriginUnknown {
			t.Errorf("bestFareOffers from QQQ: %+v", resp.Errors)
		}
		resp = s.queryAs(t, bearer, `{ allDeals(search: {origin: "AMS"}, limit: 0) { destination } }`, nil)
		if len(resp.Errors) == 0 || resp.Errors[0].Extensions["code"] != flightgraph.ECodeInvalidParameter {
			t.Errorf("allDeals limit 0: %+v", resp.Errors)
		}
	})
}

// with2 is a copy of body without (v nil) or with k set to v.
func with2(body map[string]any, k string, v any) map[string]any {
	b := map[string]any{}
	for key, val := range body {
		b[key] = val
	}
	if v == nil {
		delete(b, k)
	} else {
		b[k] = v
	}
	return b
}

// TestBestOffersFeed: the metasearch feed answers a partner's approved key, each day's cheapest
// offer that the day's available-offers lists; a developer's key (which may not see the partner
// API), a bearer token, no credentials and a partner's key still pending are refused, on REST and
// on the subgraph.
func TestBestOffersFeed(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		const path = "/opendata/offers/v1/bestOffers/feed"
		ctx := context.Background()
		if _, err := s.srv.Access.CreateAccount(ctx, flightgraph.SignUpInput{Email: "meta@partner.example", Password: developerPassword, Name: "Meta"}, flightgraph.RolePartner, ""); err != nil {
			t.Fatal(err)
		}
		partner, op := s.signIn(t, "meta@partner.example", developerPassword), s.oaOperator(t)
		// A key requested, not yet approved.
		var reg struct{ RegisterApplication struct{ ID string } }
		partner.do(t, `mutation { registerApplication(input: {name: "Fares feed", description: "d"}) { id } }`, nil, &reg)
		type requested struct {
			RequestKey struct {
				Key struct {
					APIKey        string
					Subscriptions []struct{ ID string }
				}
			}
		}
		var pending, approved requested
		const request = `mutation($a: ID!) { requestKey(input: {applicationId: $a, api: "metasearch", plan: "Partner"}) { key { apiKey subscriptions { id } } } }`
		partner.do(t, request, map[string]any{"a": reg.RegisterApplication.ID}, &pending)
		partner.do(t, request, map[string]any{"a": reg.RegisterApplication.ID}, &approved)
		op.do(t, `mutation($id: ID!) { approveSubscription(id: $id) { status } }`, map[string]any{"id": approved.RequestKey.Key.Subscriptions[0].ID}, nil)
		partnerKey := map[string]string{"api-key": approved.RequestKey.Key.APIKey}
		body := dealsBody("AMS", "LON", "NYC")
		for _, c := range []struct {
			name    string
			headers map[string]string
			status  int
			code    string
		}{
			{"a developer's key", map[string]string{"api-key": s.demo.APIKey}, 404, flightgraph.ECodeUnknownPath},
			{"a developer's token", map[string]string{"Authorization": "Bearer " + s.bearerToken(t, "")}, 404, flightgraph.ECodeUnknownPath},
			{"no credentials", nil, 404, flightgraph.ECodeUnknownPath},
			{"a pending key", map[string]string{"api-key": pending.RequestKey.Key.APIKey}, 403, flightgraph.ECodeNotApproved},
		} {
			if code, _, raw := s.call(t, http.MethodPost, path, c.headers, jsonOf(body)); code != c.status || restCode(t, raw) != c.code {
				t.Errorf("%s: %d %s, want %d %s", c.name, code, raw, c.status, c.code)
			}
		}
		resp := s.queryAs(t, map[string]string{"api-key": s.demo.APIKey}, `query($s: DealSearchInput!) { bestOffersFeed(search: $s) { destination } }`,
			map[string]any{"s": map[string]any{"origin": "AMS", "destinations": []string{"LON"}}})
		if len(resp.Errors) == 0 || resp.Data != nil && string(resp.Data) != "null" {
			t.Errorf("a developer's key reached bestOffersFeed: %s", resp.Data)
		}

		// The partner's approved key.
		code, _, raw := s.call(t, http.MethodPost, path, partnerKey, jsonOf(body))
		if code != 200 {
			t.Fatalf("the partner's feed: %d %s", code, raw)
		}
		var feed dealsView
		json.Unmarshal([]byte(raw), &feed)
		if len(feed.BestOffers) < 3 {
			t.Fatalf("a feed of %d offers: %s", len(feed.BestOffers), raw)
		}
		bearer := map[string]string{"Authorization": "Bearer " + s.bearerToken(t, "")}
		seen := map[string]bool{}
		for _, d := range feed.BestOffers {
			if d.Period != d.DepartureDate || d.FlightProduct == nil || !slices.Contains([]string{today, tomorrow}, d.Period) || seen[d.Destination.Code+d.Period] {
				t.Fatalf("feed item %+v", d)
			}
			seen[d.Destination.Code+d.Period] = true
			var day offersView
			get(t, s, d.Links.Offers.Href, bearer, &day)
			if want := cheapestListed(t, day); want == nil || want.ID != d.FlightProduct.ID || want.Price.TotalPrice != d.FlightProduct.Price.TotalPrice {
				t.Errorf("%s on %s: the feed's %+v, the day's cheapest %+v", d.Destination.Code, d.Period, d.FlightProduct, want)
			}
		}
		resp = s.queryAs(t, partnerKey, `query($s: DealSearchInput!) { bestOffersFeed(search: $s) { destination period offer { id } } }`,
			map[string]any{"s": map[string]any{"origin": "AMS", "destinations": []string{"LON", "NYC"}, "dateInterval": today + "/" + tomorrow,
				"passengers": []map[string]any{{"id": 1, "type": "ADT"}, {"id": 2, "type": "CHD"}}}})
		var g struct {
			BestOffersFeed []struct {
				Destination, Period string
				Offer               struct{ ID string }
			}
		}
		json.Unmarshal(resp.Data, &g)
		if len(resp.Errors) > 0 || len(g.BestOffersFeed) != len(feed.BestOffers) {
			t.Fatalf("the subgraph's feed: %s %+v", resp.Data, resp.Errors)
		}
		for i, d := range g.BestOffersFeed {
			if d.Offer.ID != feed.BestOffers[i].FlightProduct.ID {
				t.Errorf("feed item %d: GraphQL %s, REST %s", i, d.Offer.ID, feed.BestOffers[i].FlightProduct.ID)
			}
		}
		// first answers the first deals of the feed's order; out of 1 to 200 it is refused.
		feedQuery := `query($s: DealSearchInput!, $f: Int) { bestOffersFeed(search: $s, first: $f) { destination period offer { id } } }`
		feedSearch := map[string]any{"origin": "AMS", "destinations": []string{"LON", "NYC"}, "dateInterval": today + "/" + tomorrow,
			"passengers": []map[string]any{{"id": 1, "type": "ADT"}, {"id": 2, "type": "CHD"}}}
		resp = s.queryAs(t, partnerKey, feedQuery, map[string]any{"s": feedSearch, "f": 1})
		var one struct {
			BestOffersFeed []struct{ Offer struct{ ID string } }
		}
		json.Unmarshal(resp.Data, &one)
		if len(resp.Errors) > 0 || len(g.BestOffersFeed) < 2 || len(one.BestOffersFeed) != 1 || one.BestOffersFeed[0].Offer.ID != g.BestOffersFeed[0].Offer.ID {
			t.Errorf("the feed's first 1 of %d: %s %+v", len(g.BestOffersFeed), resp.Data, resp.Errors)
		}
		resp = s.queryAs(t, partnerKey, feedQuery, map[string]any{"s": feedSearch, "f": 201})
		if len(resp.Errors) == 0 || resp.Errors[0].Extensions["code"] != flightgraph.ECodeInvalidParameter || resp.Errors[0].Extensions["parameter"] != "first" {
			t.Errorf("the feed's first 201: %+v", resp.Errors)
		}
		for _, c := range []struct {
			name, body string
			status     int
			code       string
		}{
			{"no destinations", jsonOf(with2(body, "destinations", nil)), 400, flightgraph.ECodeMissingParameter},
			{"unknown destination", jsonOf(dealsBody("AMS", "QQQ")), 404, flightgraph.ECodeDestinationUnknown},
			{"a long interval", jsonOf(with2(body, "dateInterval", today+"/2026-12-31")), 400, flightgraph.ECodeInvalidParameter},
		} {
			if code, _, raw := s.call(t, http.MethodPost, path, partnerKey, c.body); code != c.status || restCode(t, raw) != c.code {
				t.Errorf("%s: %d %s, want %d %s", c.name, code, raw, c.status, c.code)
			}
		}
	})
}

// TestFlightsAvailability: the seats left on each flight of each itinerary are those of the
// offers search's segments, and a cabin is sellable exactly when the search has offers in it, on
// REST and on the subgraph; refusals have their codes.
func TestFlightsAvailability(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		bearer := map[string]string{"Authorization": "Bearer " + s.bearerToken(t, "")}
		const path = "/opendata/offers/v1/flights-availability"
		search := offerSearch("AMS", "NYC", "ADT", "ADT", "CHD")
		code, _, raw := s.call(t, http.MethodPost, path, bearer, jsonOf(search))
		if code != 200 {
			t.Fatalf("flights-availability: %d %s", code, raw)
		}
		var avail struct {
			FlightsAvailability []struct {
				Bound         string
				NumberOfStops int
				Cabins        []struct {
					CommercialCabin string
					SeatsLeft       int
					Sellable        bool
				}
				Segments []struct {
					FlightID string
					Cabins   []struct {
						CommercialCabin string
						SeatsLeft       int
					}
				}
			}
		}
		json.Unmarshal([]byte(raw), &avail)
		offers, _ := searchOffers(t, s, bearer, search)
		if len(avail.FlightsAvailability) != len(offers.Itineraries) {
			t.Fatalf("%d itineraries available, the search has %d", len(avail.FlightsAvailability), len(offers.Itineraries))
		}
		byKey := map[string]productView{}
		seats := map[string][]int{}
		for _, it := range offers.Itineraries {
			key := ""
			var left []int
			for _, seg := range it.Connections[0].Segments {
				key += seg.FlightID + " "
				left = append(left, seg.SeatsLeft)
			}
			for _, p := range it.FlightProducts {
				byKey[key+p.CommercialCabin] = p
			}
			// The connection's seats left are its first offer's cabin's.
			seats[key+it.FlightProducts[0].CommercialCabin] = left
		}
		checked := 0
		for _, a := range avail.FlightsAvailability {
			key := ""
			for _, seg := range a.Segments {
				key += seg.FlightID + " "
			}
			for _, c := range a.Cabins {
				_, offered := byKey[key+c.CommercialCabin]
				if c.Sellable != offered {
					t.Errorf("%s %s: sellable %v, offered %v", key, c.CommercialCabin, c.Sellable, offered)
				}
				if !offered {
					continue
				}
				checked++
				for i, seg := range a.Segments {
					for _, sc := range seg.Cabins {
						if want, ok := seats[key+c.CommercialCabin]; ok && sc.CommercialCabin == c.CommercialCabin && sc.SeatsLeft != want[i] {
							t.Errorf("%s %s segment %d: %d seats left, the offer's segment %d", key, c.CommercialCabin, i, sc.SeatsLeft, want[i])
						}
					}
				}
			}
		}
		if checked == 0 {
			t.Fatal("no offered cabin to compare")
		}
		resp := s.queryAs(t, bearer, `query($s: OfferSearchInput!) { flightsAvailability(search: $s) { bound cabins { cabin seatsLeft sellable } segments { flight { id origin { code } } cabins { cabin seatsLeft } } } }`,
			map[string]any{"s": gqlSearch("AMS", "NYC", "ADT", "ADT", "CHD")})
		var g struct {
			FlightsAvailability []struct {
				Cabins []struct {
					Cabin     string
					SeatsLeft int
					Sellable  bool
				}
				Segments []struct {
					Flight struct{ ID string }
				}
			}
		}
		json.Unmarshal(resp.Data, &g)
		if len(resp.Errors) > 0 || len(g.FlightsAvailability) != len(avail.FlightsAvailability) {
			t.Fatalf("the subgraph's availability: %.300s %+v", resp.Data, resp.Errors)
		}
		for i, a := range g.FlightsAvailability {
			r := avail.FlightsAvailability[i]
			if a.Segments[0].Flight.ID != r.Segments[0].FlightID || len(a.Cabins) != len(r.Cabins) || a.Cabins[0].SeatsLeft != r.Cabins[0].SeatsLeft {
				t.Errorf("itinerary %d: GraphQL %+v, REST %+v", i, a, r)
			}
		}
		noConnections := with2(search, "requestedConnections", nil)
		for _, c := range []struct {
			name, body string
			status     int
			code       string
		}{
			{"no connection", jsonOf(noConnections), 400, flightgraph.ECodeMissingParameter},
			{"unknown airport", jsonOf(offerSearch("AMS", "QQQ")), 404, flightgraph.ECodeIATANotFound},
			{"a child alone", jsonOf(offerSearch("AMS", "NYC", "CHD")), 400, flightgraph.ECodeInvalidParameter},
			{"ten seats", jsonOf(offerSearch("AMS", "NYC", slices.Repeat([]string{"ADT"}, 10)...)), 400, flightgraph.ECodeInvalidParameter},
			{"not JSON", "[", 400, flightgraph.ECodeBadBody},
		} {
			if code, _, raw := s.call(t, http.MethodPost, path, bearer, c.body); code != c.status || restCode(t, raw) != c.code {
				t.Errorf("%s: %d %s, want %d %s", c.name, code, raw, c.status, c.code)
			}
		}
	})
}

// TestOffersReferenceData: the offers reference data is the Open Data one's market and countries
// (one builder) with the cabins, families, the six passenger types and the currencies, in the
// point of sale's currency and language; the deals reference lists the market's origins with
// their zones and the months with flights; the subgraph answers the same.
func TestOffersReferenceData(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		bearer := map[string]string{"Authorization": "Bearer " + s.bearerToken(t, "")}
		var open, offers struct {
			Market, Currency string
			Country          []struct {
				Code, DefaultAirport  string
				Origins, Destinations []string
				PassengerTypes        []struct{ Code, Label string }
			}
			CommercialCabins []struct{ Code, Label string }
			FareFamilies     []struct{ Code, CommercialCabin string }
			PassengerTypes   []struct {
				Code, Label string
				MinAge      int
				Seat        bool
			}
			Currencies []struct {
				Code     string
				Decimals int
			}
		}
		get(t, s, "/opendata/flightoffers/reference-data", map[string]string{"api-key": s.demo.APIKey}, &open)
		get(t, s, "/opendata/offers/v1/reference-data", bearer, &offers)
		if jsonOf(open.Country) != jsonOf(offers.Country) || offers.Market != "NL" || offers.Currency != "EUR" {
			t.Errorf("the offers reference data's countries differ from Open Data's, or market %s %s", offers.Market, offers.Currency)
		}
		var codes []string
		for _, p := range offers.PassengerTypes {
			codes = append(codes, p.Code)
		}
		if !slices.Equal(codes, []string{"ADT", "YTH", "YCD", "C14", "CHD", "INF"}) || len(offers.FareFamilies) != len(flightgraph.FareFamilies) ||
			len(offers.CommercialCabins) != 4 || offers.CommercialCabins[0].Code != "ECONOMY" || len(offers.Currencies) < 50 {
			t.Errorf("reference data: types %v, %d families, cabins %+v, %d currencies", codes, len(offers.FareFamilies), offers.CommercialCabins, len(offers.Currencies))
		}
		get(t, s, "/opendata/offers/v1/reference-data", map[string]string{"Authorization": bearer["Authorization"], "svc-travel-country": "US", "Accept-Language": "fr-FR"}, &offers)
		if offers.Market != "US" || offers.Currency != "USD" || offers.PassengerTypes[0].Label != "Adulte" {
			t.Errorf("the US market in French: %s %s %+v", offers.Market, offers.Currency, offers.PassengerTypes[0])
		}
		resp := s.queryAs(t, bearer, `{ offersReferenceData { market currency countries { code name(language: NL) defaultAirport origins destinations }
			cabins fareFamilies { code } passengerTypes { code name minAge maxAge seat accompanied } currencies { code decimals } maximumNumberOfSeats minimumNumberOfAdults } }`, nil)
		var g struct {
			OffersReferenceData struct {
				Market    string
				Countries []struct {
					Code, DefaultAirport  string
					Origins, Destinations []string
				}
				PassengerTypes       []struct{ Code string }
				MaximumNumberOfSeats int
			}
		}
		json.Unmarshal(resp.Data, &g)
		if len(resp.Errors) > 0 || g.OffersReferenceData.Market != "NL" || len(g.OffersReferenceData.Countries) != len(open.Country) ||
			g.OffersReferenceData.Countries[0].DefaultAirport != open.Country[0].DefaultAirport || g.OffersReferenceData.MaximumNumberOfSeats != 9 {
			t.Errorf("offersReferenceData: %.300s %+v", resp.Data, resp.Errors)
		}

		// The deals reference of the Dutch market.
		var deals struct {
			Market, Currency string
			Origins          []struct {
				Origin               struct{ Code, Type, Label string }
				DestinationZoneCodes []string
				DestinationsByZone   []struct {
					Zone         struct{ Code, Label string }
					Destinations []struct{ Code, Type, Label string }
				}
			}
			Months    []string
			DealTypes []struct{ Code, Label string }
		}
		get(t, s, "/opendata/offers/v1/reference-data/deals", bearer, &deals)
		if deals.Market != "NL" || len(deals.Origins) == 0 || !slices.Equal(deals.Months, dealMonths()) || len(deals.DealTypes) != 3 {
			t.Fatalf("deals reference: %+v", deals)
		}
		var ams bool
		for _, o := range deals.Origins {
			if o.Origin.Code == "AMS" {
				ams = true
				n := 0
				for i, z := range o.DestinationsByZone {
					n += len(z.Destinations)
					if z.Zone.Code != o.DestinationZoneCodes[i] {
						t.Errorf("zone %d: %s, codes %v", i, z.Zone.Code, o.DestinationZoneCodes)
					}
				}
				if n < 100 {
					t.Errorf("AMS reaches %d places", n)
				}
			}
		}
		if !ams {
			t.Errorf("the Dutch market's deals leave from %+v, not AMS", deals.Origins)
		}
		resp = s.queryAs(t, bearer, `{ dealsReferenceData { market months dealTypes { code name(language: FR) } origins { origin { code type name } zones { zone { code name } destinations { code type } } } } }`, nil)
		var gd struct {
			DealsReferenceData struct {
				Market  string
				Months  []string
				Origins []struct{ Origin struct{ Code string } }
			}
		}
		json.Unmarshal(resp.Data, &gd)
		if len(resp.Errors) > 0 || len(gd.DealsReferenceData.Origins) != len(deals.Origins) || !slices.Equal(gd.DealsReferenceData.Months, deals.Months) {
			t.Errorf("dealsReferenceData: %.300s %+v", resp.Data, resp.Errors)
		}
		for _, c := range []struct {
			name    string
			path    string
			headers map[string]string
			status  int
			code    string
		}{
			{"a country the network does not sell in", "/opendata/offers/v1/reference-data", map[string]string{"svc-travel-country": "ZZ"}, 400, flightgraph.ECodeInvalidParameter},
			{"a malformed host", "/opendata/offers/v1/reference-data/deals", map[string]string{"svc-travel-host": "X-"}, 400, flightgraph.ECodeBadFormat},
			{"XML", "/opendata/offers/v1/reference-data/deals", map[string]string{"Accept": "application/xml"}, 406, flightgraph.ECodeNotAcceptable},
			{"an api-key", "/opendata/offers/v1/reference-data", map[string]string{"api-key": s.demo.APIKey, "Authorization": ""}, 403, flightgraph.ECodeWrongCredential},
		} {
			h := map[string]string{"Authorization": bearer["Authorization"]}
			for k, v := range c.headers {
				h[k] = v
			}
			if h["Authorization"] == "" {
				delete(h, "Authorization")
			}
			if code, _, raw := s.call(t, http.MethodGet, c.path, h, ""); code != c.status || restCode(t, raw) != c.code {
				t.Errorf("%s: %d %s, want %d %s", c.name, code, raw, c.status, c.code)
			}
		}
	})
}

// TestSearchContext: a context names the point of sale, the places and the ways between them;
// with a date, its options count the day's itineraries, as many as available-offers lists; its
// refusals have their codes, on REST and on the subgraph.
func TestSearchContext(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServer(t, storetest.Seeded(t, dialect, os.Getenv))
		bearer := map[string]string{"Authorization": "Bearer " + s.bearerToken(t, "")}
		const path = "/opendata/offers/v1/search-context"
		type contextView struct {
			PointOfSale         struct{ Market, Currency, Language string }
			Origin, Destination struct {
				Code, Type string
				Airports   []string
			}
			BookingWindow struct{ FirstDate, LastDate string }
			Connections   []struct {
				NumberOfStops int
				Via           *struct{ Code string }
				Carriers      []string
				Itineraries   *int
			}
			CommercialCabins []struct{ Code string }
			FareFamilies     []struct{ Code string }
			Passengers       struct {
				MaximumNumberOfSeats int
				PassengerTypes       []struct{ Code string }
			}
			OfferValidity string
			Links         struct{ AvailableOffers *struct{ Href string } } `json:"_links"`
		}
		var network contextView
		get(t, s, path+"?origin=BCN&destination=NYC", bearer, &network)
		if network.Origin.Code != "BCN" || network.Destination.Type != "CITY" || len(network.Destination.Airports) < 2 || network.PointOfSale.Currency != "EUR" ||
			network.BookingWindow.FirstDate != today || network.OfferValidity != "PT30M" || len(network.CommercialCabins) != 4 || network.Passengers.MaximumNumberOfSeats != 9 {
			t.Errorf("context BCN-NYC: %+v", network)
		}
		vias := 0
		for _, c := range network.Connections {
			if c.Via != nil {
				vias++
			}
			if c.Itineraries != nil || len(c.Carriers) == 0 {
				t.Errorf("an option without a date: %+v", c)
			}
		}
		if vias == 0 {
			t.Errorf("BCN-NYC has no connection through a hub: %+v", network.Connections)
		}
		var day contextView
		get(t, s, path+"?origin=AMS&destination=NYC&departureDate="+tomorrow, map[string]string{"Authorization": bearer["Authorization"], "svc-travel-country": "US"}, &day)
		offers, _ := searchOffers(t, s, bearer, offerSearch("AMS", "NYC", "ADT"))
		n := 0
		for _, c := range day.Connections {
			n += *c.Itineraries
		}
		if n != len(offers.Itineraries) || day.PointOfSale.Currency != "USD" || day.Links.AvailableOffers == nil || len(day.CommercialCabins) == 0 {
			t.Errorf("AMS-NYC tomorrow: %d itineraries in the options, %d searched; %+v", n, len(offers.Itineraries), day)
		}
		resp := s.queryAs(t, bearer, `query($d: Date) { searchContext(origin: "AMS", destination: "NYC", departureDate: $d) { market currency origin { code type city { code } airports { code } }
			connections { stops via { code } carriers itineraries } cabins fareFamilies { code } passengerTypes { code } offerValidity firstDate lastDate } }`, map[string]any{"d": tomorrow})
		var g struct {
			SearchContext struct {
				Market      string
				Connections []struct{ Itineraries int }
			}
		}
		json.Unmarshal(resp.Data, &g)
		gn := 0
		for _, c := range g.SearchContext.Connections {
			gn += c.Itineraries
		}
		if len(resp.Errors) > 0 || gn != n || g.SearchContext.Market != "NL" {
			t.Errorf("searchContext: %.300s %+v", resp.Data, resp.Errors)
		}
		for _, c := range []struct {
			query  string
			status int
			code   string
		}{
			{"?origin=AMS", 400, flightgraph.ECodeMissingParameter},
			{"?destination=AMS", 400, flightgraph.ECodeMissingParameter},
			{"?origin=AMS&destination=QQQ", 404, flightgraph.ECodeIATANotFound},
			{"?origin=AMS&destination=A1", 400, flightgraph.ECodeBadFormat},
			{"?origin=PAR&destination=CDG", 400, flightgraph.ECodeInvalidParameter},
			{"?origin=AMS&destination=NYC&departureDate=2026-11-01", 400, flightgraph.ECodeInvalidParameter},
			{"?origin=AMS&destination=NYC&departureDate=2028-11-01", 400, flightgraph.ECodeInvalidParameter},
			{"?origin=AMS&destination=NYC&departureDate=23-11-2026", 400, flightgraph.ECodeBadFormat},
		} {
			if code, _, raw := s.call(t, http.MethodGet, path+c.query, bearer, ""); code != c.status || restCode(t, raw) != c.code {
				t.Errorf("%s: %d %s, want %d %s", c.query, code, raw, c.status, c.code)
			}
		}
		resp = s.queryAs(t, bearer, `{ searchContext(origin: "AMS", destination: "QQQ") { market } }`, nil)
		if len(resp.Errors) == 0 || resp.Errors[0].Extensions["code"] != flightgraph.ECodeIATANotFound {
			t.Errorf("searchContext to QQQ: %+v", resp.Errors)
		}
	})
}

// dealMonths are the months the deals reference lists at the test clock: this one and the next
// eleven, every one with flights since shopping reaches past the operational window.
func dealMonths() []string {
	var out []string
	first := time.Date(storetest.Now.Year(), storetest.Now.Month(), 1, 0, 0, 0, 0, time.UTC)
	for i := range flightgraph.DealMonths {
		out = append(out, first.AddDate(0, i, 0).Format(flightgraph.MonthLayout))
	}
	return out
}
