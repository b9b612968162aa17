package server_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// TestBookingHorizon: shopping reaches the booking horizon on both edges, past the operational
// window the store holds (here 15 days): offers Amsterdam to New York and to London at +7 (in
// the window), +90, +200 and +330 days, in no more SQL round trips than a search in the window;
// a lowest-fare calendar by month from today to the horizon with an offer in every month; an
// inspiration six months ahead with destinations; and search-context's departure dates are the
// ones that can be searched.
func TestBookingHorizon(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServerWith(t, storetest.SeededWindow(t, dialect, os.Getenv, 0, 15), func(c *serverConfig) { c.SnapshotTTL = time.Hour })
		bearer := map[string]string{"Authorization": "Bearer " + s.bearerToken(t, "")}
		body := func(origin, destination, date string) map[string]any {
			return map[string]any{"commercialCabins": []string{"ALL"}, "passengers": []map[string]any{{"id": 1, "type": "ADT"}},
				"requestedConnections": []map[string]any{{"departureDate": date,
					"origin": map[string]any{"airport": map[string]any{"code": origin}}, "destination": map[string]any{"airport": map[string]any{"code": destination}}}}}
		}
		searchOffers(t, s, bearer, body("AMS", "JFK", storetest.Now.AddDate(0, 0, 7).Format(flightgraph.DateLayout))) // loads the snapshot and the schedule
		trips := map[string]int64{}
		for _, dest := range []string{"JFK", "LHR"} {
			for _, days := range []int{7, 90, 200, 330} {
				date := storetest.Now.AddDate(0, 0, days).Format(flightgraph.DateLayout)
				v, _ := searchOffers(t, s, bearer, body("AMS", dest, date))
				n := s.queries.Load()
				offers := 0
				for _, it := range v.Itineraries {
					offers += len(it.FlightProducts)
				}
				resp := s.queryAs(t, bearer, offersQuery, map[string]any{"s": map[string]any{"passengers": []map[string]any{{"id": 1, "type": "ADT"}},
					"requestedConnections": []map[string]any{{"departureDate": date, "origin": "AMS", "destination": dest}}}})
				var g struct{ AvailableOffers []gqlOffer }
				json.Unmarshal(resp.Data, &g)
				t.Logf("AMS-%s +%d days (%s): REST %d itineraries, %d offers, %d round trips; GraphQL %d offers", dest, days, date, len(v.Itineraries), offers, n, len(g.AvailableOffers))
				if offers == 0 || len(resp.Errors) > 0 || len(g.AvailableOffers) != offers {
					t.Errorf("AMS-%s +%d: REST %d offers, GraphQL %d %+v", dest, days, offers, len(g.AvailableOffers), resp.Errors)
				}
				trips[dest+"+"+date] = n
				if n > trips[dest+"+"+storetest.Now.AddDate(0, 0, 7).Format(flightgraph.DateLayout)] {
					t.Errorf("AMS-%s +%d took %d round trips, more than a search in the window", dest, days, n)
				}
			}
		}

		// A calendar by month from today to the booking horizon: an offer in every month.
		interval := storetest.Now.Format(flightgraph.DateLayout) + "/" + storetest.Now.AddDate(0, 0, 360).Format(flightgraph.DateLayout)
		cal := body("AMS", "JFK", storetest.Now.Format(flightgraph.DateLayout))
		cal["dateInterval"], cal["type"] = interval, "MONTH"
		code, _, raw := s.call(t, http.MethodPost, "/opendata/offers/v1/lowest-fare-offers", bearer, jsonOf(cal))
		var months struct {
			LowestFareOffers []struct {
				Period        string
				FlightProduct *productView
			}
		}
		json.Unmarshal([]byte(raw), &months)
		if code != 200 || len(months.LowestFareOffers) != 13 {
			t.Fatalf("lowest fares by month: %d %.500s", code, raw)
		}
		for _, m := range months.LowestFareOffers {
			if m.FlightProduct == nil {
				t.Errorf("no offer in %s", m.Period)
			}
		}
		resp := s.queryAs(t, bearer, `query($s: OfferSearchInput!, $d: String) { lowestFares(search: $s, dateInterval: $d, type: MONTH) { period offer { id } } }`,
			map[string]any{"s": map[string]any{"passengers": []map[string]any{{"id": 1, "type": "ADT"}},
				"requestedConnections": []map[string]any{{"origin": "AMS", "destination": "JFK"}}}, "d": interval})
		var g struct {
			LowestFares []struct {
				Period string
				Offer  *struct{ ID string }
			}
		}
		json.Unmarshal(resp.Data, &g)
		if len(resp.Errors) > 0 || len(g.LowestFares) != len(months.LowestFareOffers) {
			t.Fatalf("lowestFares by month: %.300s %+v", resp.Data, resp.Errors)
		}
		for i, m := range g.LowestFares {
			if m.Offer == nil || m.Offer.ID != months.LowestFareOffers[i].FlightProduct.ID {
				t.Errorf("%s: GraphQL %+v, REST %+v", m.Period, m.Offer, months.LowestFareOffers[i].FlightProduct)
			}
		}
		t.Logf("AMS-JFK by month %s: %d months, every one with an offer", interval, len(g.LowestFares))

		// Inspiration six months ahead.
		month := storetest.Now.AddDate(0, 6, 0).Format(flightgraph.MonthLayout)
		code, raw, _, gql := inspire(t, s, map[string]string{"api-key": s.demo.APIKey}, url.Values{"origin": {"AMS"}, "month": {month}})
		var insp struct{ Destinations []json.RawMessage }
		json.Unmarshal([]byte(raw), &insp)
		var gi struct{ Destinations []json.RawMessage }
		json.Unmarshal(gql.Data, &gi)
		t.Logf("inspiration from AMS in %s: REST %d destinations, GraphQL %d", month, len(insp.Destinations), len(gi.Destinations))
		if code != 200 || len(insp.Destinations) < 50 || len(gi.Destinations) != len(insp.Destinations) {
			t.Errorf("inspiration from AMS in %s: %d %.300s; GraphQL %.300s %+v", month, code, raw, gql.Data, gql.Errors)
		}

		// An offer beyond the window reads back at its price.
		v, _ := searchOffers(t, s, bearer, body("AMS", "LHR", storetest.Now.AddDate(0, 0, 200).Format(flightgraph.DateLayout)))
		p := v.Itineraries[0].FlightProducts[0]
		var back struct{ Offer productView }
		get(t, s, p.Links.PriceDetails.Href, bearer, &back)
		if back.Offer.ID != p.ID || back.Offer.Price.TotalPrice != p.Price.TotalPrice {
			t.Errorf("offer read back %+v, searched %+v", back.Offer, p)
		}

		// The flights such an offer shows answer by id on both edges and as entities: status
		// SCHEDULED, the legs the offer flies.
		date := storetest.Now.AddDate(0, 0, 200).Format(flightgraph.DateLayout)
		found := s.queryAs(t, bearer, offersQuery, map[string]any{"s": map[string]any{"passengers": []map[string]any{{"id": 1, "type": "ADT"}},
			"requestedConnections": []map[string]any{{"departureDate": date, "origin": "AMS", "destination": "LHR"}}}})
		var offers struct{ AvailableOffers []gqlOffer }
		json.Unmarshal(found.Data, &offers)
		if len(offers.AvailableOffers) == 0 {
			t.Fatalf("no offers AMS-LHR on %s: %+v", date, found.Errors)
		}
		id := offers.AvailableOffers[0].Segments[0].Flight.ID
		byID := s.query(t, `query($id: ID!, $r: [_Any!]!) { flight(id: $id) { id status legs { origin { code } destination { code } } }
			_entities(representations: $r) { ... on Flight { id status } } }`, map[string]any{"id": id, "r": []map[string]any{{"__typename": "Flight", "id": id}}})
		var f struct {
			Flight *struct {
				ID, Status string
				Legs       []struct{ Origin, Destination struct{ Code string } }
			}
			Entities []struct{ ID, Status string } `json:"_entities"`
		}
		json.Unmarshal(byID.Data, &f)
		if len(byID.Errors) > 0 || f.Flight == nil || f.Flight.ID != id || f.Flight.Status != "SCHEDULED" || len(f.Flight.Legs) == 0 ||
			f.Flight.Legs[0].Origin.Code != "AMS" || len(f.Entities) != 1 || f.Entities[0].ID != id || f.Entities[0].Status != "SCHEDULED" {
			t.Errorf("flight %s of an offer at +200 days by id: %s %+v", id, byID.Data, byID.Errors)
		}
		var rest struct{ ID string }
		get(t, s, "/opendata/flightstatus/"+id, map[string]string{"api-key": s.demo.APIKey}, &rest)
		if rest.ID != id {
			t.Errorf("REST flight status of %s: %+v", id, rest)
		}
	})
}
