package server_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/dataset"
	"github.com/flightgraph/flightgraph/server"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// benchServer is a server as serve runs it (reference snapshot on) on the embedded store at the
// default scale and window, with the demo key's plans raised, served in-process.
func benchServer(b *testing.B) *testServer {
	server.TuneRuntime(os.Getenv)
	db := storetest.SeededWindow(b, store.SQLite, os.Getenv, dataset.DaysBack, dataset.DaysAhead)
	cfg := testConfig(db, io.Discard)
	cfg.SnapshotTTL = store.DefaultSnapshotTTL
	// A flight by id in process runs past the 10,000 calls a second a key may be granted: the
	// limiter decides as ever but under limits no run meets.
	cfg.NewLimiter = unlimitedMemory
	h, demo := startServer(b, cfg)
	s := &testServer{db: db, srv: h, demo: demo}
	s.raiseLimits(b)
	return s
}

// offersBenchServer is benchServer with a bearer token of the demo key.
func offersBenchServer(b *testing.B) (http.Handler, string) {
	s := benchServer(b)
	return s.srv, "Bearer " + s.bearerToken(b, "")
}

// BenchmarkLowestFares runs a 30-day lowest-fare calendar (REST, in-process, default scale and
// window, snapshot on) from AMS to New York, beside a 1-day one as the baseline of the same run:
// the round trips are the same for both.
func BenchmarkLowestFares(b *testing.B) {
	h, bearer := offersBenchServer(b)
	for _, days := range []int{1, 30} {
		body := offerSearch("AMS", "NYC", "ADT", "ADT", "CHD")
		body["dateInterval"] = storetest.Now.AddDate(0, 0, 1).Format(flightgraph.DateLayout) + "/" + storetest.Now.AddDate(0, 0, days).Format(flightgraph.DateLayout)
		raw := jsonOf(body)
		b.Run(fmt.Sprintf("days=%d", days), func(b *testing.B) {
			measure(b, h, func() *http.Request {
				req := httptest.NewRequest(http.MethodPost, "/opendata/offers/v1/lowest-fare-offers", bytes.NewReader([]byte(raw)))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", bearer)
				return req
			})
		})
	}
}

// BenchmarkAvailableOffers runs a one-way REST available-offers search in-process on the
// embedded store at the default scale and window, as serve has it (reference snapshot on): a
// spoke to a hub's city with nonstop flights and connections (AMS to New York), and a search with
// few candidates (BCN to JFK, connections only) as the baseline of the same run. The round trips
// must be the same for both.
func BenchmarkAvailableOffers(b *testing.B) {
	h, bearer := offersBenchServer(b)
	for _, c := range []struct{ name, origin, destination string }{{"AMS-NYC", "AMS", "NYC"}, {"BCN-JFK", "BCN", "JFK"}} {
		body := jsonOf(offerSearch(c.origin, c.destination, "ADT", "ADT", "CHD"))
		b.Run(c.name, func(b *testing.B) {
			measure(b, h, func() *http.Request {
				req := httptest.NewRequest(http.MethodPost, "/opendata/offers/v1/available-offers", bytes.NewReader([]byte(body)))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", bearer)
				return req
			})
		})
	}
}
