package server_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
	"github.com/flightgraph/flightgraph/travel"
)

// BenchmarkInspiration runs destinations inspiration (REST, in-process, default scale and window,
// snapshot on) for next month, whose first 22 days have flights: from a spoke (BCN: every city
// through the two hubs, about 48,000 connecting flights read) and from a hub (AMS), beside one
// destination (BCN to JFK, the month's calendar's reads); all deals from BCN over a week; and a
// flight by id (REST flight status) as the baseline of the same run, which the heavy searches'
// p50 is held to (at most ten times). The fare index keeps what the first call of each reads and
// prices (travel.FareIndex): the p50 is a warm call's, the first call's is in its max.
func BenchmarkInspiration(b *testing.B) {
	s := benchServer(b)
	month := storetest.Now.AddDate(0, 1, 0).Format(flightgraph.MonthLayout)
	bearer := "Bearer " + s.bearerToken(b, "")
	svc := &travel.Service{Flights: store.NewFlightStore(s.db), Places: store.NewPlaceStore(s.db), Network: store.NewNetworkStore(s.db)}
	flights, _, err := svc.FindFlights(context.Background(), flightgraph.FlightFilter{Origin: storetest.Place(b, s.db, "AMS"), Date: storetest.Now.Format(flightgraph.DateLayout), Page: flightgraph.Page{Limit: 1}})
	if err != nil || len(flights) == 0 {
		b.Fatal(err)
	}
	byID := "/opendata/flightstatus/" + url.PathEscape(flights[0].ID)
	week := storetest.Now.AddDate(0, 0, 1).Format(flightgraph.DateLayout) + "/" + storetest.Now.AddDate(0, 0, 7).Format(flightgraph.DateLayout)
	allDeals := jsonOf(map[string]any{"origin": map[string]any{"airport": map[string]any{"code": "BCN"}}, "dateInterval": week, "limit": 200})
	for _, c := range []struct{ name, method, path, body string }{
		{"flight-by-id", http.MethodGet, byID, ""},
		{"BCN-JFK", http.MethodGet, inspirationPath + "?month=" + month + "&origin=BCN&destination=JFK", ""},
		{"BCN", http.MethodGet, inspirationPath + "?month=" + month + "&origin=BCN&limit=200", ""},
		{"AMS", http.MethodGet, inspirationPath + "?month=" + month + "&origin=AMS&limit=200", ""},
		{"all-deals-BCN", http.MethodPost, "/opendata/offers/v1/best-fare-offers/all-deals", allDeals},
	} {
		b.Run(c.name, func(b *testing.B) {
			measure(b, s.srv, func() *http.Request {
				req := httptest.NewRequest(c.method, c.path, bytes.NewReader([]byte(c.body)))
				req.Header.Set("api-key", s.demo.APIKey)
				if c.body != "" {
					req.Header.Del("api-key")
					req.Header.Set("Authorization", bearer)
					req.Header.Set("Content-Type", "application/json")
				}
				return req
			})
		})
	}
}
