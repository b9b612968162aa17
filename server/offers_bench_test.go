package server_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/flightgraph/flightgraph/dataset"
	"github.com/flightgraph/flightgraph/server"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// BenchmarkAvailableOffers runs a one-way REST available-offers search in-process on the
// embedded store at the default scale and window, as serve has it (reference snapshot on): a
// spoke to a hub's city with nonstop flights and connections (AMS to New York), and a search with
// few candidates (BCN to JFK, connections only) as the baseline of the same run. The round trips
// must be the same for both.
func BenchmarkAvailableOffers(b *testing.B) {
	server.TuneRuntime(os.Getenv)
	db := storetest.SeededWindow(b, store.SQLite, os.Getenv, dataset.DaysBack, dataset.DaysAhead)
	cfg := testConfig(db, io.Discard)
	cfg.SnapshotTTL = store.DefaultSnapshotTTL
	h, demo := startServer(b, cfg)
	s := &testServer{db: db, srv: h, demo: demo}
	s.raiseLimits(b)
	bearer := "Bearer " + s.bearerToken(b, "")
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
