package server_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
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
	svc := &access.Service{Store: store.NewAccessStore(db), Hasher: fastHasher, Now: time.Now}
	if err := svc.SyncCatalogue(context.Background()); err != nil {
		b.Fatal(err)
	}
	demo, err := svc.SeedDemo(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	usage := &access.UsageRecorder{Store: store.NewAccessStore(db)}
	guard := &access.Guard{Store: store.NewAccessStore(db), Limiter: access.NewMemoryLimiter(usage.DayUsage, time.Now), Usage: usage,
		Now: time.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), CacheTTL: time.Hour}
	raiseLimitsDirect(b, db, demo.APIKey, generousQueries)
	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	classify := func(*http.Request) ([]string, error) { return []string{"flightstatus"}, nil }
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
