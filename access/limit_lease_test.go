package access_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// limitLeaseKey is a subscription's lease hash (see RedisLimiter).
func limitLeaseKey(prefix, sub string) string {
	return prefix + "{" + sub + "}:lease"
}

// TestRedisLimiter_Leases holds what leasing places to a replica must keep (see RedisLimiter):
// the limit across replicas, a dead replica's lease counted, leases that end with the limits
// they were taken under, the day's count back to the calls made, and Redis spared the calls a
// lease admits.
func TestRedisLimiter_Leases(t *testing.T) {
	t.Parallel()
	url := storetest.RedisURL(t)
	c := mustLimitRedis(t, url)
	prefix := storetest.RedisPrefix(t, c)
	ctx := t.Context()

	// Two replicas hammer one subscription for less than a second: between them they admit no
	// more than the limit, and no fewer than the limit less the places two leases can hold.
	t.Run("TwoReplicasShareTheLimit", func(t *testing.T) {
		t.Parallel()
		limits := flightgraph.Limits{PerSecond: 512, PerDay: 1_000_000}
		replicas := []access.Limiter{
			access.NewRedisLimiter(mustLimitRedis(t, url), prefix, fixedDayUsage(0, nil)),
			access.NewRedisLimiter(mustLimitRedis(t, url), prefix, fixedDayUsage(0, nil)),
		}
		var admitted, refused atomic.Int64
		start := time.Now()
		stop := start.Add(400 * time.Millisecond)
		var wg sync.WaitGroup
		for i := range 32 {
			wg.Go(func() {
				for time.Now().Before(stop) {
					d, err := replicas[i%2].Admit(ctx, "shared", limits, 1)
					switch {
					case err != nil:
						t.Error(err)
						return
					case d.Allowed:
						admitted.Add(1)
					case d.Code != flightgraph.ECodePerSecondLimit || d.RetryAfter <= 0:
						t.Errorf("refused with %q, retry after %v; want %s", d.Code, d.RetryAfter, flightgraph.ECodePerSecondLimit)
						return
					default:
						refused.Add(1)
					}
				}
			})
		}
		wg.Wait()
		n, took := admitted.Load(), time.Since(start)
		if took >= time.Second {
			// A machine too slow to keep the calls within one second: two seconds hold twice
			// the limit at most.
			t.Logf("the calls took %v", took)
			if n > 2*512 {
				t.Fatalf("two replicas admitted %d calls within %v under a limit of 512 a second", n, took)
			}
		} else if n > 512 || n < 512-2*512/32 {
			t.Fatalf("two replicas admitted %d calls within %v under a limit of 512 a second, want 480 to 512", n, took)
		}
		if refused.Load() == 0 {
			t.Fatalf("no call refused: the load did not reach the limit")
		}
		t.Logf("admitted %d, refused %d", n, refused.Load())
	})

	// A replica takes a lease and dies before settling it: its places count for the others
	// until the lease expires, so they admit the limit less its call and its lease.
	t.Run("ADeadReplicasLeaseCounts", func(t *testing.T) {
		t.Parallel()
		limits := flightgraph.Limits{PerSecond: 256, PerDay: 1_000_000}
		dying := mustLimitRedis(t, url)
		mustLimiterAdmit(t, access.NewRedisLimiter(dying, prefix, fixedDayUsage(0, nil)), "dead", limits)
		if n, err := c.HLen(ctx, limitLeaseKey(prefix, "dead")).Result(); err != nil || n != 1 {
			t.Fatalf("leases after the first call: %d, %v; want 1", n, err)
		}
		dying.Close()
		l := access.NewRedisLimiter(c, prefix, fixedDayUsage(0, nil))
		var n int
		for ; n < 1000; n++ {
			d := mustLimiterAdmit(t, l, "dead", limits)
			if !d.Allowed {
				assertLimitRefused(t, d, flightgraph.ECodePerSecondLimit)
				break
			}
		}
		// The first replica's call and its lease of 8 (256/32) hold 9 of the 256 places.
		if n != 256-9 {
			t.Fatalf("the live replica admitted %d calls, want %d", n, 256-9)
		}
	})

	// A lease is taken under the limits of the call that asked for it: a call under other
	// limits is decided by Redis, where the lease's calls count.
	t.Run("NewLimitsEndTheLease", func(t *testing.T) {
		t.Parallel()
		high := flightgraph.Limits{PerSecond: 1024, PerDay: 1_000_000}
		for _, tc := range []struct {
			sub  string
			to   flightgraph.Limits
			code string
		}{
			{"fewer-a-day", flightgraph.Limits{PerSecond: 1024, PerDay: 5}, flightgraph.ECodePerDayLimit},
			{"fewer-a-second", flightgraph.Limits{PerSecond: 5, PerDay: 1_000_000}, flightgraph.ECodePerSecondLimit},
		} {
			l := access.NewRedisLimiter(c, prefix, fixedDayUsage(0, nil))
			for range 7 {
				if d := mustLimiterAdmit(t, l, tc.sub, high); !d.Allowed {
					t.Fatalf("refused under %v: %+v", high, d)
				}
			}
			// 7 calls made, 6 of them the lease's, which holds 2 more until it is settled.
			assertLimitRefused(t, mustLimiterAdmit(t, l, tc.sub, tc.to), tc.code)
		}
	})

	// The calls a lease took from the day and did not use are given back when it is settled,
	// at the end of its life at the latest; and Redis decides a few of a replica's calls, not
	// each.
	t.Run("TheDayCountsTheCallsMade", func(t *testing.T) {
		t.Parallel()
		limits := flightgraph.Limits{PerSecond: 1024, PerDay: 1_000_000}
		rc := mustLimitRedis(t, url)
		runs := &scriptRuns{}
		rc.AddHook(runs)
		l := access.NewRedisLimiter(rc, prefix, fixedDayUsage(0, nil))
		const calls = 100
		for range calls {
			if d := mustLimiterAdmit(t, l, "day", limits); !d.Allowed {
				t.Fatalf("refused: %+v", d)
			}
		}
		// Leases of 8, 16, then 32 (1024/32), each asked for with a call: the 100th call leaves
		// the last lease places unused, unless a lease's life ended first.
		if n := runs.n.Load(); n >= calls/4 {
			t.Fatalf("%d script runs for %d calls in a row, want leases to admit most", n, calls)
		}
		access.WaitNoLeases(t, c, limitLeaseKey(prefix, "day"))
		got, err := c.Get(ctx, limitDayKey(prefix, "day", time.Now())).Result()
		if err != nil {
			t.Fatal(err)
		}
		if got != strconv.Itoa(calls) {
			t.Fatalf("the day's count is %s after %d calls, want %d", got, calls, calls)
		}
	})

	// The Default plan's 5 a second is decided call by call: no lease.
	t.Run("LowLimitsAreNotLeased", func(t *testing.T) {
		t.Parallel()
		l := access.NewRedisLimiter(c, prefix, fixedDayUsage(0, nil))
		mustLimiterAdmit(t, l, "default", flightgraph.DefaultLimits)
		if n, err := c.Exists(context.Background(), limitLeaseKey(prefix, "default")).Result(); err != nil || n != 0 {
			t.Fatalf("lease hash exists: %d, %v; want none", n, err)
		}
	})
}
