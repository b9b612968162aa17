package access_test

import (
	"context"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// outageReplica is one replica's limiting as server.New wires it: a Fallback from its own Redis
// client to an in-process limiter, both reading the usage recorder it is attached to.
type outageReplica struct {
	limiter *access.Fallback
	usage   *access.UsageRecorder
}

// TestFallback_RedisOutageAcrossReplicas: two replicas call one subscription (5 calls/s) 100
// times a second each, through a Redis outage in which Redis loses its data (a private
// redis-server, killed and started again empty). No one-second window admits more than
// replicas × limit = 10 calls, not at the outage's start nor at its end; and once the replicas
// have flushed their usage, Redis's day counter holds exactly the calls admitted, although the
// replica that seeded it after the restart did not know the other's unflushed calls.
func TestFallback_RedisOutageAcrossReplicas(t *testing.T) {
	storetest.ClearOfMidnight(t, time.Now())
	rds := storetest.StartRedis(t)
	db := storetest.Open(t, store.SQLite, os.Getenv)
	ctx := context.Background()
	sub := demoSubscription(t, db, "flightstatus")
	limits := flightgraph.Limits{PerSecond: 5, PerDay: 5000}
	const prefix = "fg:"

	opts, err := redis.ParseURL(rds.URL())
	if err != nil {
		t.Fatal(err)
	}
	// Clients that notice the outage at once: with go-redis's default retries the first call
	// after the kill takes a second or more to fail, and Redis's admissions of the second before
	// are gone from every window by the time the in-process limiters take over.
	opts.MaxRetries, opts.DialerRetries = -1, 1
	var replicas []outageReplica
	for range 2 {
		c := redis.NewClient(opts)
		t.Cleanup(func() { c.Close() })
		u := &access.UsageRecorder{Store: store.NewAccessStore(db)}
		f := access.NewFallback(access.NewRedisLimiter(c, prefix, u.DayUsage), access.NewMemoryLimiter(u.DayUsage, time.Now), nil)
		u.Attach(f)
		replicas = append(replicas, outageReplica{limiter: f, usage: u})
	}

	var (
		mu       sync.Mutex
		admitted []time.Time
	)
	// traffic makes each replica start a call every 10 ms for d, each in its own goroutine as
	// requests are, and records the calls admitted as the guard does.
	traffic := func(d time.Duration) {
		var wg sync.WaitGroup
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for end := time.Now().Add(d); time.Now().Before(end); <-tick.C {
			for _, r := range replicas {
				wg.Go(func() {
					dec, err := r.limiter.Admit(ctx, sub, limits, 1)
					if err != nil {
						t.Errorf("Admit: %v", err)
						return
					}
					if dec.Allowed {
						r.usage.Add(sub, dec.At.UTC().Format(flightgraph.DateLayout), 1)
						mu.Lock()
						admitted = append(admitted, dec.At)
						mu.Unlock()
					}
				})
			}
		}
		wg.Wait()
	}
	var phases []int
	// The outage starts and ends half a second after the latest burst of admissions, which come
	// once a second under this traffic: the windows around both switches hold a full second's
	// calls of the limiter switched from.
	for i, phase := range []func(){func() {}, rds.Kill, rds.Start} {
		phase()
		traffic([]time.Duration{1500 * time.Millisecond, 2500 * time.Millisecond, 2 * time.Second}[i])
		phases = append(phases, len(admitted))
	}
	if t.Failed() {
		return
	}

	most, from := busiestSecond(admitted)
	t.Logf("calls admitted before, in and after the outage: %d, %d, %d", phases[0], phases[1]-phases[0], phases[2]-phases[1])
	t.Logf("%d calls admitted; the busiest one-second window, from %s, admitted %d", len(admitted), from.Format(time.RFC3339Nano), most)
	if most > 2*limits.PerSecond {
		t.Errorf("a one-second window admitted %d calls, more than 2 replicas × %d", most, limits.PerSecond)
	}

	for deadline := time.Now().Add(10 * time.Second); replicas[0].limiter.CatchingUp() || replicas[1].limiter.CatchingUp(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the catch-ups did not finish")
		}
	}
	today := time.Now().UTC().Format(flightgraph.DateLayout)
	// Each replica stored its usage before catching up, so that the others' catch-ups and seeds
	// count its calls of the outage.
	stored, err := store.NewAccessStore(db).UsageOn(ctx, []string{sub}, today)
	if err != nil {
		t.Fatal(err)
	}
	if stored[0] < int64(phases[1]) {
		t.Errorf("after the catch-ups the store holds %d calls, want at least the %d admitted before Redis came back", stored[0], phases[1])
	}
	for _, r := range replicas {
		if err := r.usage.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	c := redis.NewClient(opts)
	defer c.Close()
	counted, err := c.Get(ctx, limitDayKey(prefix, sub, time.Now())).Int64()
	if err != nil {
		t.Fatal(err)
	}
	if stored, err = store.NewAccessStore(db).UsageOn(ctx, []string{sub}, today); err != nil {
		t.Fatal(err)
	}
	t.Logf("Redis's day counter: %d; calls admitted: %d; stored: %d", counted, len(admitted), stored[0])
	if counted != int64(len(admitted)) || stored[0] != int64(len(admitted)) {
		t.Errorf("after the restart and the flushes Redis counts %d calls and the store %d, want the %d admitted", counted, stored[0], len(admitted))
	}
}

// busiestSecond returns the most instants in any one-second window, and where it starts.
func busiestSecond(times []time.Time) (int, time.Time) {
	times = slices.SortedFunc(slices.Values(times), time.Time.Compare)
	most, from := 0, time.Time{}
	for i, j := 0, 0; i < len(times); i++ {
		for times[i].Sub(times[j]) >= time.Second {
			j++
		}
		if i-j+1 > most {
			most, from = i-j+1, times[j]
		}
	}
	return most, from
}
