package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/dataset"
	"github.com/flightgraph/flightgraph/live"
	"github.com/flightgraph/flightgraph/server"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// BenchmarkFlightStatusByID times GET /opendata/flightstatus/{id} in-process through the whole
// middleware on the embedded store, and in the same iterations the two parts that are not the
// REST edge: the travel service's work (the flight and its documents' data) and the access guard
// alone. The REST edge's share is what is left of the whole: decoding, negotiation, rendering.
// It runs with the flight cache off (every call reads the store) and on (flightgraph serve's
// default: the flight is read from memory).
func BenchmarkFlightStatusByID(b *testing.B) {
	server.TuneRuntime(os.Getenv)
	for _, cache := range []string{"store", "flight-cache"} {
		b.Run(cache, func(b *testing.B) {
			db := storetest.SeededWindow(b, store.SQLite, os.Getenv, dataset.DaysBack, dataset.DaysAhead)
			// The loop's two calls run past the 10,000 a second a key may be granted: the
			// limiter decides as ever but under limits no run meets (unlimited).
			cfg := testConfig(db, io.Discard)
			cfg.NewLimiter = unlimitedMemory
			cfg.SnapshotTTL = store.DefaultSnapshotTTL // as flightgraph serve does
			if cache == "flight-cache" {
				cfg.FlightCacheBytes = live.DefaultFlightCacheBytes
			}
			h, demo := startServer(b, cfg)
			if cfg.FlightCacheBytes > 0 {
				settle(b, h)
			}
			flightStatusByID(b, db, h, demo)
		})
	}
}

func flightStatusByID(b *testing.B, db *store.DB, h *server.Server, demo *access.DemoCredentials) {
	ctx := context.Background()
	svc := h.Services.Travel // the server's own, over its reference snapshot
	page, _, err := svc.FindFlights(ctx, flightgraph.FlightFilter{Origin: storetest.Place(b, db, "AMS"), Date: "2026-11-22", Page: flightgraph.Page{Limit: 1}})
	if err != nil || len(page) == 0 {
		b.Fatal(err)
	}
	id := page[0].ID
	path := "/opendata/flightstatus/" + url.PathEscape(id)
	ping := "/opendata/flightstatus/v1/ping"
	request := func(p string) *http.Request {
		req := httptest.NewRequest(http.MethodGet, p, nil)
		req.Header.Set("api-key", demo.APIKey)
		req.Header.Set("Accept", "application/hal+json;charset=utf8")
		req.Header.Set("Accept-Language", "en-GB")
		return req
	}
	var full, work, guard []time.Duration
	for b.Loop() {
		start := time.Now()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, request(path))
		full = append(full, time.Since(start))
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}

		// The same work with a request's deadline, as the server gives every request: the
		// driver watches a cancellable context at some cost per query, which is not the edge's.
		start = time.Now()
		rctx, cancel := context.WithTimeout(ctx, server.DefaultRequestTimeout)
		_, _, err := svc.FlightBundle(rctx, id) // as the handler reads it
		cancel()
		work = append(work, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}

		// The ping route is the guard plus a handler that does next to nothing.
		start = time.Now()
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, request(ping))
		guard = append(guard, time.Since(start))
	}
	p50 := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	f, w, g := p50(full), p50(work), p50(guard)
	b.ReportMetric(f, "p50-ms")
	b.ReportMetric(w, "travel-p50-ms")
	b.ReportMetric(g, "guard+ping-p50-ms")
	b.ReportMetric(100*(f-w-g)/f, "rest-edge-%")
}
