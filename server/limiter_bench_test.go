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

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// unlimited decides with its Limiter under limits no load run meets, so that a benchmark measures
// what a decision costs, not a refusal.
type unlimited struct{ access.Limiter }

func (u unlimited) Admit(ctx context.Context, sub string, _ flightgraph.Limits, calls int) (access.Decision, error) {
	return u.Limiter.Admit(ctx, sub, flightgraph.Limits{PerSecond: 1 << 30, PerDay: 1 << 50}, calls)
}

// unlimitedMemory is the in-process limiter, unlimited: for a server config's NewLimiter in
// benchmarks whose calls run past the 10,000 a second a key may be granted.
func unlimitedMemory(u access.DayUsage) access.Limiter {
	return unlimited{access.NewMemoryLimiter(u, time.Now)}
}

// BenchmarkPingLimiters is issue 22's "limits that cost little": the throughput of ping through
// the whole handler (request id, metrics, the access log at INFO as a JSON line to a file, the
// access middleware) with the in-process limiter and with the Redis limiter behind its fallback,
// as cmd/flightgraph wires them, and of a bare handler that writes the same bytes; 25 callers per
// core (50 on 2 cores, the closed-loop load of the issue), in process. Compare ns/op: redis ÷ memory is the bar (≥ 0.80 of the throughput).
//
//	go test ./server -run '^$' -bench PingLimiters -benchtime 3s -count 5
func BenchmarkPingLimiters(b *testing.B) {
	db := storetest.Open(b, store.SQLite, os.Getenv)
	logs, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { logs.Close() })
	rdb, prefix := storetest.RedisClient(b)
	_, demo := startServer(b, testConfig(db, io.Discard))
	key := demo.APIKey
	serve := func(b *testing.B, newLimiter func(access.DayUsage) access.Limiter) http.Handler {
		cfg := testConfig(db, io.Discard)
		cfg.Log = slog.New(slog.NewJSONHandler(logs, nil))
		cfg.Now = time.Now
		cfg.NewLimiter = func(usage access.DayUsage) access.Limiter { return unlimited{newLimiter(usage)} }
		return cfg.build()
	}
	const path = "/opendata/flightstatus/v1/ping"
	run := func(b *testing.B, h http.Handler, want int) {
		b.SetParallelism(25)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			req := httptest.NewRequest(http.MethodGet, path, nil)
			req.Header.Set("api-key", key)
			req.RemoteAddr = "192.0.2.1:1234"
			for pb.Next() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != want {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
		})
	}
	memory := serve(b, func(u access.DayUsage) access.Limiter { return access.NewMemoryLimiter(u, time.Now) })
	redisLimited := serve(b, func(u access.DayUsage) access.Limiter {
		return access.NewFallback(access.NewRedisLimiter(rdb, prefix, u), access.NewMemoryLimiter(u, time.Now), nil)
	})
	// The bare handler writes the bytes and headers a guarded ping answers with.
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("api-key", key)
	memory.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("ping: %d %s", rec.Code, rec.Body)
	}
	body, header := rec.Body.Bytes(), rec.Header().Clone()
	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header()[k] = v
		}
		w.Write(body)
	})
	b.Run("bare", func(b *testing.B) { run(b, bare, http.StatusOK) })
	b.Run("memory", func(b *testing.B) { run(b, memory, http.StatusOK) })
	b.Run("redis", func(b *testing.B) { run(b, redisLimited, http.StatusOK) })
}
