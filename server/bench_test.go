package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph/dataset"
	"github.com/flightgraph/flightgraph/server"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// BenchmarkDepartures runs the Departures query in-process (handler.ServeHTTP, no network) on a
// store holding the standard window of flights, and reports the median latency and the SQL round
// trips per query beside ns/op. first=5 is the baseline measured in the same run. It runs on the
// embedded store and on PostgreSQL (skipped when FLIGHTGRAPH_TEST_DATABASE_URL is unset).
func BenchmarkDepartures(b *testing.B) {
	server.TuneRuntime(os.Getenv) // as flightgraph serve does
	storetest.ForEachDialect(b, benchmarkDepartures)
}

func benchmarkDepartures(b *testing.B, dialect string) {
	db := storetest.SeededWindow(b, dialect, os.Getenv, dataset.DaysBack, dataset.DaysAhead)
	cfg := testConfig(db, io.Discard)
	cfg.SnapshotTTL = store.DefaultSnapshotTTL // as flightgraph serve does
	h, demo := startServer(b, cfg)
	(&testServer{db: db, srv: h, demo: demo}).raiseLimits(b)
	for _, first := range []int{5, 50} {
		body, _ := json.Marshal(map[string]any{"query": departures, "variables": departuresVars(first)})
		b.Run("first="+map[int]string{5: "5", 50: "50"}[first], func(b *testing.B) {
			measure(b, h, func() *http.Request {
				req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("api-key", demo.APIKey)
				return req
			})
		})
	}
}

// measure serves requests in-process (handler.ServeHTTP, no network) for the benchmark's loop,
// each of which must answer 200 without errors, and reports the median and 90th percentile
// latencies and the SQL round trips of a request beside ns/op.
func measure(b *testing.B, h http.Handler, newRequest func() *http.Request) {
	var (
		lat     []time.Duration
		queries int64
	)
	for b.Loop() {
		req := newRequest()
		ctx := store.WithQueryCounter(req.Context())
		rec := httptest.NewRecorder()
		start := time.Now()
		h.ServeHTTP(rec, req.WithContext(ctx))
		lat = append(lat, time.Since(start))
		if rec.Code != http.StatusOK || bytes.Contains(rec.Body.Bytes(), []byte(`"errors"`)) {
			b.Fatalf("status %d: %.300s", rec.Code, rec.Body.String())
		}
		queries = store.QueryCount(ctx)
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds())/1000, "p90-ms")
	b.ReportMetric(float64(queries), "round-trips")
}
