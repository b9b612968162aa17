package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// BenchmarkGuard measures what the access middleware (authenticate + authorize + limit with the
// in-process limiter, and the limit headers) adds to a request: the same bare handler is timed
// without and with it, in one run.
func BenchmarkGuard(b *testing.B) {
	db := storetest.Open(b, store.SQLite, os.Getenv)
	// The limiter's clock moves on a millisecond a call: a thousand calls a second, within the
	// plan's limits however fast the loop runs.
	var calls atomic.Int64
	tick := func() time.Time { return storetest.Now.Add(time.Duration(calls.Add(1)) * time.Millisecond) }
	cfg := testConfig(db, io.Discard)
	cfg.NewLimiter = func(usage access.DayUsage) access.Limiter { return access.NewMemoryLimiter(usage, tick) }
	h, demo := startServer(b, cfg)
	(&testServer{db: db, srv: h, demo: demo}).raiseLimits(b)
	guard := h.Guard
	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	classify := func(*http.Request) (access.Charge, error) { return access.Light("flightstatus"), nil }
	guarded := guard.Middleware(classify, func(w http.ResponseWriter, r *http.Request, err error) {
		b.Fatalf("refused: %v", err)
	})(bare)
	run := func(b *testing.B, h http.Handler) {
		req := httptest.NewRequest(http.MethodGet, "/opendata/flightstatus/v1/ping", nil)
		req.Header.Set("api-key", demo.APIKey)
		b.ReportAllocs()
		for b.Loop() {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != http.StatusNoContent {
				b.Fatalf("status %d", w.Code)
			}
		}
	}
	b.Run("bare", func(b *testing.B) { run(b, bare) })
	b.Run("guarded", func(b *testing.B) { run(b, guarded) })
}
