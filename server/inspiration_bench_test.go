package server_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// BenchmarkInspiration runs destinations inspiration (REST, in-process, default scale and window,
// snapshot on) for next month, whose first 22 days have flights: from a spoke (BCN: every city
// through the two hubs, about 48,000 connecting flights read) and from a hub (AMS), beside one
// destination (BCN to JFK, the month's calendar's reads) as the baseline of the same run. The
// round trips are the same for all three.
func BenchmarkInspiration(b *testing.B) {
	s := benchServer(b)
	month := storetest.Now.AddDate(0, 1, 0).Format(flightgraph.MonthLayout)
	for _, c := range []struct{ name, query string }{
		{"BCN-JFK", "origin=BCN&destination=JFK"},
		{"BCN", "origin=BCN&limit=200"},
		{"AMS", "origin=AMS&limit=200"},
	} {
		b.Run(c.name, func(b *testing.B) {
			measure(b, s.srv, func() *http.Request {
				req := httptest.NewRequest(http.MethodGet, inspirationPath+"?month="+month+"&"+c.query, nil)
				req.Header.Set("api-key", s.demo.APIKey)
				return req
			})
		})
	}
}
