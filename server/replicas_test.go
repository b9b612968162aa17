package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/app"
	"github.com/flightgraph/flightgraph/server"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// admissions collects the instants, by the Redis server's clock, of the calls admitted by the
// limiters of all replicas.
type admissions struct {
	mu    sync.Mutex
	times map[string][]time.Time // by subscription
}

// recording wraps a replica's real Redis limiter to observe its decisions; it decides nothing.
type recording struct {
	access.Limiter
	into *admissions
}

func (r *recording) Admit(ctx context.Context, sub string, l flightgraph.Limits, calls int) (access.Decision, error) {
	d, err := r.Limiter.Admit(ctx, sub, l, calls)
	if err == nil && d.Allowed {
		r.into.mu.Lock()
		r.into.times[sub] = append(r.into.times[sub], d.At)
		r.into.mu.Unlock()
	}
	return d, err
}

// TestReplicasShareLimits runs two server instances on one database and one Redis, as two
// replicas behind a load balancer would: 1,000 concurrent calls with one key admit no more than
// 5 in any one-second window, and with 4,990 calls used today exactly 10 more are admitted.
func TestReplicasShareLimits(t *testing.T) {
	opts, err := redis.ParseURL(storetest.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db := storetest.Open(t, store.SQLite, os.Getenv)
	prefix := "fgtest:" + access.NewID("r") + ":"
	seen := &admissions{times: map[string][]time.Time{}}
	var replicas []*httptest.Server
	var svc *access.Service
	for i := 0; i < 2; i++ {
		rdb := redis.NewClient(opts) // each replica has its own client, as separate processes would
		t.Cleanup(func() { rdb.Close() })
		pingCtx, cancel := context.WithTimeout(ctx, 3*time.Second)
		err := rdb.Ping(pingCtx).Err()
		cancel()
		if err != nil {
			t.Fatalf("Redis at FLIGHTGRAPH_TEST_REDIS_URL does not answer: %v", err)
		}
		srv := server.New(server.Config{Registry: prometheus.NewRegistry(), DB: db, Version: "test"}, app.New(app.Config{
			Stores: app.StoresOf(db), Hasher: fastHasher, Now: time.Now,
			NewLimiter: func(usage access.DayUsage) access.Limiter {
				return &recording{Limiter: access.NewRedisLimiter(rdb, prefix, usage), into: seen}
			},
		}))
		svc = srv.Access
		ts := httptest.NewServer(srv)
		t.Cleanup(ts.Close)
		replicas = append(replicas, ts)
	}
	// Days are counted on the Redis clock (this machine's): a run that would cross a UTC midnight
	// waits for it to pass instead.
	storetest.ClearOfMidnight(t, time.Now())
	t.Cleanup(func() {
		rdb := redis.NewClient(opts)
		defer rdb.Close()
		if keys, _ := rdb.Keys(ctx, prefix+"*").Result(); len(keys) > 0 {
			rdb.Del(ctx, keys...)
		}
	})
	if err := svc.SyncCatalogue(ctx); err != nil {
		t.Fatal(err)
	}
	demo, err := svc.SeedDemo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ka, err := store.NewAccessStore(db).KeyAccess(ctx, access.HashCredential(demo.APIKey))
	if err != nil {
		t.Fatal(err)
	}

	// fire makes n calls to path spread evenly over span, alternating between the replicas, all
	// in flight at once; it returns the count of each status and error code.
	fire := func(path string, n int, span time.Duration) map[string]int {
		var (
			wg     sync.WaitGroup
			mu     sync.Mutex
			counts = map[string]int{}
			start  = time.Now()
			failed atomic.Int32
		)
		for i := 0; i < n; i++ {
			wg.Go(func() {
				time.Sleep(time.Until(start.Add(span * time.Duration(i) / time.Duration(n))))
				req, _ := http.NewRequest(http.MethodGet, replicas[i%2].URL+path, nil)
				req.Header.Set("api-key", demo.APIKey)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					failed.Add(1)
					return
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				k := http.StatusText(resp.StatusCode)
				if resp.StatusCode != http.StatusOK {
					k = "unparsed " + k
					var e struct{ Errors []struct{ Code string } }
					if json.Unmarshal(body, &e) == nil && len(e.Errors) == 1 {
						k = e.Errors[0].Code
					}
				}
				mu.Lock()
				counts[k]++
				mu.Unlock()
			})
		}
		wg.Wait()
		if failed.Load() > 0 {
			t.Fatalf("%d calls failed to connect", failed.Load())
		}
		return counts
	}

	// 1,000 calls over 2.5 s: at most 5 in any one-second window.
	flight := ka.Products["flightstatus"].SubscriptionID
	counts := fire("/opendata/flightstatus/v1/ping", 1000, 2500*time.Millisecond)
	times := seen.times[flight]
	t.Logf("1,000 calls: %v; admitted at %d instants", counts, len(times))
	if at, ok := windowsOK(times, 5); !ok {
		t.Fatalf("more than 5 calls admitted in the second from %v", at)
	}
	// 400 calls a second for 2.5 s fill at least two whole seconds; at most 5 fit in each second
	// the admissions actually spanned (a loaded machine can stretch the burst).
	if len(times) == 0 {
		t.Fatalf("no call admitted: %v", counts)
	}
	span := slices.MaxFunc(times, time.Time.Compare).Sub(slices.MinFunc(times, time.Time.Compare))
	most := 5 * (int(span/time.Second) + 1)
	if counts["OK"] != len(times) || counts["OK"] < 10 || counts["OK"] > most || counts[flightgraph.ECodePerSecondLimit] != 1000-counts["OK"] {
		t.Fatalf("counts %v do not fit 5 per second over 2.5 s (at most %d over the admissions' span)", counts, most)
	}

	// 4,990 calls used today on another subscription: exactly 10 more are admitted.
	sched := ka.Products["schedule"].SubscriptionID
	if err := store.NewAccessStore(db).AddUsage(ctx, time.Now().UTC().Format(flightgraph.DateLayout), map[string]int64{sched: 4990}); err != nil {
		t.Fatal(err)
	}
	counts = fire("/opendata/schedule/v1/ping", 600, 3*time.Second)
	t.Logf("600 calls at 4,990 used: %v", counts)
	if counts["OK"] != 10 || counts[flightgraph.ECodePerDayLimit] == 0 {
		t.Fatalf("admitted %d calls after 4,990 (want exactly 10), counts %v", counts["OK"], counts)
	}
	if at, ok := windowsOK(seen.times[sched], 5); !ok {
		t.Fatalf("more than 5 calls admitted in the second from %v", at)
	}
}

// windowsOK reports the start of the first one-second window holding more than n admissions.
func windowsOK(times []time.Time, n int) (time.Time, bool) {
	times = slices.Clone(times)
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	for i := 0; i+n < len(times); i++ {
		if times[i+n].Sub(times[i]) < time.Second {
			return times[i], false
		}
	}
	return time.Time{}, true
}
