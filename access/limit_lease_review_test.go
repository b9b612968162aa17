package access_test

import (
	"context"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// TestRedisLimiter_LeasesLeaveTheDayUnderSevenEighths: three replicas call once each under a plan of
// 256 a second and 100 a day, with leases of 8 (256/32) to ask for. A call of 82 (85 made in all,
// under 7/8 of 100) must not be refused for the leases' unused calls: live leases take at most an
// eighth of what the day has left (the first review of the leases found it refused, with a
// RetryAfter until midnight).
func TestRedisLimiter_LeasesLeaveTheDayUnderSevenEighths(t *testing.T) {
	t.Parallel()
	url := storetest.RedisURL(t)
	c := mustLimitRedis(t, url)
	prefix := storetest.RedisPrefix(t, c)
	limits := flightgraph.Limits{PerSecond: 256, PerDay: 100}
	var rs []access.Limiter
	for range 3 {
		rs = append(rs, access.NewRedisLimiter(mustLimitRedis(t, url), prefix, fixedDayUsage(0, nil)))
	}
	start := time.Now()
	for _, r := range rs {
		if d := mustLimiterAdmit(t, r, "day", limits); !d.Allowed {
			t.Fatalf("refused: %+v", d)
		}
	}
	n, _ := c.HLen(context.Background(), limitLeaseKey(prefix, "day")).Result()
	d, err := rs[0].Admit(context.Background(), "day", limits, 82)
	if took := time.Since(start); took > 40*time.Millisecond {
		// The leases' life may have ended, and the test with it: it holds on a quicker machine.
		t.Logf("the calls took %v, past the leases' life", took)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("leases %d; decision %+v", n, d)
	if !d.Allowed {
		t.Fatalf("85 calls of a 100-a-day plan (under 7/8) refused with %s, RetryAfter %v", d.Code, d.RetryAfter)
	}
}

// TestRedisLimiter_LeaseLostWithRedisData: a lease of 8 is granted (the day's count 1 + 8); Redis
// then loses its data (restart, failover) and the count is seeded again from durable usage: 1
// call. Settling the lease must not give its 8 unused calls back to the new count (the review
// found it at -7, and 18 calls then admitted under 10 a day).
func TestRedisLimiter_LeaseLostWithRedisData(t *testing.T) {
	t.Parallel()
	url := storetest.RedisURL(t)
	c := mustLimitRedis(t, url)
	prefix := storetest.RedisPrefix(t, c)
	ctx := context.Background()
	limits := flightgraph.Limits{PerSecond: 1024, PerDay: 1000}
	l := access.NewRedisLimiter(mustLimitRedis(t, url), prefix, fixedDayUsage(0, nil))
	mustLimiterAdmit(t, l, "lost", limits)
	key := limitDayKey(prefix, "lost", time.Now())
	if v, _ := c.Get(ctx, key).Result(); v != "9" {
		t.Fatalf("the day's count is %s after a call with a lease, want 9", v)
	}
	// Redis loses its data; the next seed reads the durable count: 1 call.
	c.Del(ctx, key, limitLeaseKey(prefix, "lost"))
	c.SetNX(ctx, key, 1, time.Hour)
	time.Sleep(300 * time.Millisecond) // the lease's life ends; it is settled
	v, _ := c.Get(ctx, key).Int64()
	admitted := 1
	l2 := access.NewRedisLimiter(mustLimitRedis(t, url), prefix, fixedDayUsage(1, nil))
	for range 30 {
		if d := mustLimiterAdmit(t, l2, "lost", flightgraph.Limits{PerSecond: 100, PerDay: 10}); d.Allowed {
			admitted++
		}
	}
	if v < 1 || admitted > 10 {
		t.Fatalf("the day counter is %d after 1 call made; then %d calls admitted in all under 10 a day", v, admitted)
	}
}

// TestRedisLimiter_LeaseSettledOnce: go-redis retries a script run whose reply timed out
// (MaxRetries defaults to 3); a proxy of the test's own holds the replies past the client's read
// timeout. A settling sent four times must give the lease's unused calls back once (the review
// found the day's count at -23 after one call).
func TestRedisLimiter_LeaseSettledOnce(t *testing.T) {
	t.Parallel()
	url := storetest.RedisURL(t)
	c := mustLimitRedis(t, url)
	prefix := storetest.RedisPrefix(t, c)
	ctx := context.Background()
	opt, _ := redis.ParseURL(url)
	var slow atomic.Bool
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var wg sync.WaitGroup
	defer wg.Wait()
	go func() {
		for {
			cl, err := ln.Accept()
			if err != nil {
				return
			}
			sv, err := net.Dial("tcp", opt.Addr)
			if err != nil {
				cl.Close()
				continue
			}
			wg.Add(2)
			go func() { defer wg.Done(); io.Copy(sv, cl); sv.Close() }()
			go func() {
				defer wg.Done()
				defer cl.Close()
				buf := make([]byte, 64<<10)
				for {
					n, err := sv.Read(buf)
					if n > 0 {
						if slow.Load() && buf[0] == '*' { // a script's reply, not a handshake's
							time.Sleep(300 * time.Millisecond)
						}
						if _, err := cl.Write(buf[:n]); err != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	popt := *opt
	popt.Addr = ln.Addr().String()
	popt.ReadTimeout = 100 * time.Millisecond
	pc := redis.NewClient(&popt)
	defer pc.Close()
	l := access.NewRedisLimiter(pc, prefix, fixedDayUsage(0, nil))
	limits := flightgraph.Limits{PerSecond: 1024, PerDay: 1_000_000}
	mustLimiterAdmit(t, l, "retried", limits) // 1 call and a lease of 8: 9
	slow.Store(true)
	time.Sleep(2 * time.Second) // the lease is settled: its script run times out and is retried
	slow.Store(false)
	v, _ := c.Get(ctx, limitDayKey(prefix, "retried", time.Now())).Int64()
	if v != 1 {
		t.Fatalf("the day counter is %d after 1 call made, want 1", v)
	}
}

// TestRedisLimiter_RetryAfterPastTheLeases: a refusal that leases make must not say to retry
// before their calls can have left the window, a second after they are settled (the review found
// 50 ms, and the retry refused again).
func TestRedisLimiter_RetryAfterPastTheLeases(t *testing.T) {
	t.Parallel()
	url := storetest.RedisURL(t)
	c := mustLimitRedis(t, url)
	prefix := storetest.RedisPrefix(t, c)
	limits := flightgraph.Limits{PerSecond: 256, PerDay: 1_000_000}
	a := access.NewRedisLimiter(mustLimitRedis(t, url), prefix, fixedDayUsage(0, nil))
	b := access.NewRedisLimiter(mustLimitRedis(t, url), prefix, fixedDayUsage(0, nil))
	for range 9 { // 1 call by Redis with a lease of 8, then the lease's 8
		if d := mustLimiterAdmit(t, a, "retry", limits); !d.Allowed {
			t.Fatalf("refused: %+v", d)
		}
	}
	d, err := b.Admit(context.Background(), "retry", limits, 248)
	if err != nil || d.Allowed {
		t.Fatalf("%+v %v", d, err)
	}
	time.Sleep(d.RetryAfter + 20*time.Millisecond)
	d2, err := b.Admit(context.Background(), "retry", limits, 248)
	if err != nil || !d2.Allowed {
		t.Fatalf("refused with RetryAfter %v; retried then: refused again (%+v)", d.RetryAfter, d2)
	}
}

// TestRedisLimiter_LeaseDayRefusalIsForNow: a call the day would hold but for the calls a live
// lease took from it is refused per day until the lease is settled, not until midnight; once it
// is, the call is admitted.
func TestRedisLimiter_LeaseDayRefusalIsForNow(t *testing.T) {
	t.Parallel()
	url := storetest.RedisURL(t)
	c := mustLimitRedis(t, url)
	prefix := storetest.RedisPrefix(t, c)
	limits := flightgraph.Limits{PerSecond: 256, PerDay: 100}
	a := access.NewRedisLimiter(mustLimitRedis(t, url), prefix, fixedDayUsage(0, nil))
	b := access.NewRedisLimiter(mustLimitRedis(t, url), prefix, fixedDayUsage(0, nil))
	mustLimiterAdmit(t, a, "for-now", limits) // 1 call, and a lease of 8 taken from the day: 9
	if n, err := c.HLen(t.Context(), limitLeaseKey(prefix, "for-now")).Result(); err != nil || n != 1 {
		t.Fatalf("leases after the first call: %d, %v; want 1", n, err)
	}
	// 92 more: 101 with the lease's 8, 93 without.
	d, err := b.Admit(t.Context(), "for-now", limits, 92)
	if err != nil {
		t.Fatal(err)
	}
	if d.Allowed {
		// The lease was settled first (a slow machine): the call is the one to admit.
		t.Logf("admitted at once: the lease had been settled")
		return
	}
	assertLimitRefused(t, d, flightgraph.ECodePerDayLimit)
	if d.RetryAfter > 50*time.Millisecond {
		t.Fatalf("refused for the lease's calls with RetryAfter %v, want its life at most", d.RetryAfter)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		d, err := b.Admit(t.Context(), "for-now", limits, 92)
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still refused 5 s after: %+v", d)
		}
		time.Sleep(d.RetryAfter)
	}
}
