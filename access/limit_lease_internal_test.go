package access

import (
	"context"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// TestRedisLimiter_NoLeasesForARollingDeploy: a replica of the version before leases (its script,
// from a87c2f8^, is testdata/admit_before_a87c2f8.lua) counts the window and not the leases, so with a new
// replica holding a lease the two admitted 264 calls within a second under a limit of 256 (the
// review). With NoLeases, as serve's --limiter-leases=false sets for such a deploy, they keep to
// the limit.
func TestRedisLimiter_NoLeasesForARollingDeploy(t *testing.T) {
	c, prefix := storetest.RedisClient(t)
	src, err := os.ReadFile("testdata/admit_before_a87c2f8.lua")
	if err != nil {
		t.Fatal(err)
	}
	old := redis.NewScript(string(src))
	limits := flightgraph.Limits{PerSecond: 256, PerDay: 1_000_000}
	r := NewRedisLimiter(c, prefix, nil).NoLeases()
	start := time.Now()
	admitted := 0
	if d, err := r.Admit(t.Context(), "deploy", limits, 1); err != nil || !d.Allowed {
		t.Fatalf("%+v %v", d, err)
	}
	admitted++
	// The old replica: one call of 255 (255 places), as its RedisLimiter.run would send it.
	res, err := old.Run(t.Context(), c, []string{r.windowKey("deploy"), r.dayKey("deploy")},
		2000, 42, 1, 256, 1_000_000, 255, 255).Slice()
	if err != nil {
		t.Fatal(err)
	}
	if res[3].(int64) == 1 {
		admitted += 255
	}
	for range 8 {
		if d, err := r.Admit(t.Context(), "deploy", limits, 1); err == nil && d.Allowed {
			admitted++
		}
	}
	if took := time.Since(start); took >= time.Second {
		t.Fatalf("the calls took %v, more than the second they are to share", took)
	}
	if admitted > limits.PerSecond {
		t.Fatalf("%d calls admitted within %v under a limit of %d a second", admitted, time.Since(start), limits.PerSecond)
	}
}

// TestRedisLimiter_LeaseStateIsForgotten: a subscription that asked for a lease and got none
// leaves nothing behind in the replica (the review found an entry kept for each, forever).
func TestRedisLimiter_LeaseStateIsForgotten(t *testing.T) {
	c, prefix := storetest.RedisClient(t)
	r := NewRedisLimiter(c, prefix, nil)
	limits := flightgraph.Limits{PerSecond: 1024, PerDay: 5} // no lease: 8 × 8 > what the day has left
	for i := range 200 {
		if _, err := r.Admit(t.Context(), "sub-"+strconv.Itoa(i), limits, 1); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(200 * time.Millisecond)
	r.mu.Lock()
	n := len(r.leases)
	r.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d subscriptions' lease state kept with no lease held", n)
	}
}

// TestRedisLimiter_LeaseEndsWithItsLife holds that a lease admits no call once its life is over on the
// lease clock, even before its timer has settled it.
func TestRedisLimiter_LeaseEndsWithItsLife(t *testing.T) {
	c, prefix := storetest.RedisClient(t)
	r := NewRedisLimiter(c, prefix, nil)
	start := time.Now()
	var elapsed atomic.Int64
	r.now = func() time.Time { return start.Add(time.Duration(elapsed.Load())) }
	limits := flightgraph.Limits{PerSecond: 1024, PerDay: 1_000_000}
	admit := func() {
		t.Helper()
		d, err := r.Admit(t.Context(), "life", limits, 1)
		if err != nil || !d.Allowed {
			t.Fatalf("Admit: %+v, %v", d, err)
		}
	}
	admit()
	r.mu.Lock()
	l := r.leases["life"].current
	r.mu.Unlock()
	if l == nil {
		t.Fatal("no lease after the first call")
	}
	admit()
	elapsed.Store(int64(redisLeaseLife))
	admit()
	r.mu.Lock()
	defer r.mu.Unlock()
	if want := l.size - 1; l.places != want {
		t.Fatalf("the lease has %d places left after a call past its life, want %d: the call was admitted from it", l.places, want)
	}
}

// TestRedisLimiter_LeaseSettledWithoutDayCounter: a lease is settled in a batch that finds its
// subscription's day counter missing, as the first one after UTC midnight does (the second review
// found the settling dropped, and the lease's places held until its expiry).
func TestRedisLimiter_LeaseSettledWithoutDayCounter(t *testing.T) {
	c, prefix := storetest.RedisClient(t)
	r := NewRedisLimiter(c, prefix, nil)
	d, err := r.Admit(t.Context(), "midnight", flightgraph.Limits{PerSecond: 1024, PerDay: 1_000_000}, 1)
	if err != nil || !d.Allowed {
		t.Fatalf("Admit: %+v, %v", d, err)
	}
	if err := c.Del(t.Context(), r.dayKey("midnight")+d.At.UTC().Format("2006-01-02")).Err(); err != nil {
		t.Fatal(err)
	}
	// The lease's timer settles it at the end of its life.
	WaitNoLeases(t, c, r.leaseKey("midnight"))
}

// TestRedisLimiter_LeaseSizeKeptWhileBusy: a lease that lives out its life half used or more is
// followed by one of its size, not the first size again (the second review found every lease
// that lived out its life forgotten, so a steady caller went 8, 16, 32… every 50 ms).
func TestRedisLimiter_LeaseSizeKeptWhileBusy(t *testing.T) {
	c, prefix := storetest.RedisClient(t)
	r := NewRedisLimiter(c, prefix, nil)
	start := time.Now()
	var elapsed atomic.Int64
	r.now = func() time.Time { return start.Add(time.Duration(elapsed.Load())) }
	limits := flightgraph.Limits{PerSecond: 4096, PerDay: 1_000_000}
	current := func() *redisLease {
		r.mu.Lock()
		defer r.mu.Unlock()
		if st := r.leases["busy"]; st != nil {
			return st.current
		}
		return nil
	}
	admit := func() {
		t.Helper()
		if d, err := r.Admit(t.Context(), "busy", limits, 1); err != nil || !d.Allowed {
			t.Fatalf("Admit: %+v, %v", d, err)
		}
	}
	// Leases of 8, 16, 32, then 64, each used up.
	for l := current(); l == nil || l.size < 64; l = current() {
		admit()
	}
	l := current()
	for range l.size / 2 {
		admit()
	}
	// Its life ends (on the lease clock) with half its places used; the next call asks again.
	elapsed.Add(int64(redisLeaseLife))
	admit()
	next := current()
	if next == nil || next == l {
		t.Fatal("no new lease after the first one's life")
	}
	if next.size < l.size {
		t.Fatalf("after a lease of %d that lived out its life half used, the next is %d", l.size, next.size)
	}
}

// TestRedisLimiter_CatchUpKeepsTheLeasesPlaces: a day's count raised to durable usage while a
// lease of that day is held is not undercut when the lease is settled. Usage holds none of the
// lease's places, which its settling gives back unused; the second review found a raise to 20
// after one call and a lease of 8 left 12 once the lease was settled.
func TestRedisLimiter_CatchUpKeepsTheLeasesPlaces(t *testing.T) {
	c, prefix := storetest.RedisClient(t)
	var durable atomic.Int64
	r := NewRedisLimiter(c, prefix, func(context.Context, string, string) (int64, error) { return durable.Load(), nil })
	d, err := r.Admit(t.Context(), "caught", flightgraph.Limits{PerSecond: 1024, PerDay: 1_000_000}, 1)
	if err != nil || !d.Allowed {
		t.Fatalf("Admit: %+v, %v", d, err)
	}
	if n, err := c.HLen(t.Context(), r.leaseKey("caught")).Result(); err != nil || n != 1 {
		t.Fatalf("%d leases held after the first call (%v), want 1", n, err)
	}
	day := d.At.UTC().Format(flightgraph.DateLayout)
	durable.Store(20) // calls Redis did not count, as when it lost them
	if failed, err := r.CatchUp(t.Context(), []SubscriptionDay{{"caught", day}}); err != nil || len(failed) > 0 {
		t.Fatalf("CatchUp: %v, %v", failed, err)
	}
	// The lease lives out its life unused; its timer settles it.
	WaitNoLeases(t, c, r.leaseKey("caught"))
	if got, err := c.Get(t.Context(), r.dayKey("caught")+day).Int64(); err != nil || got < 20 {
		t.Fatalf("the day's count after the raise to 20 and the lease's settling is %d (%v), want 20 or more", got, err)
	}
}

// TestRedisLimiter_RetryAfterWaitsForEveryLease: a call refused for the window and the leases is
// told to come back when enough of them have gone, not when the first lease expires (the second
// review: with two leases to go, that was too early). Two dead replicas' leases are written as
// the script writes them.
func TestRedisLimiter_RetryAfterWaitsForEveryLease(t *testing.T) {
	c, prefix := storetest.RedisClient(t)
	r := NewRedisLimiter(c, prefix, nil)
	limits := flightgraph.Limits{PerSecond: 256, PerDay: 1_000_000}
	d, err := r.Admit(t.Context(), "held", limits, 230) // too full a window for a lease
	if err != nil || !d.Allowed {
		t.Fatalf("Admit: %+v, %v", d, err)
	}
	day, us := d.At.UTC().Format(flightgraph.DateLayout), redisMicros(t, c)
	first, second := us+300_000, us+600_000
	putLease(t, r, "held", "1:1:"+day, 8, first)
	putLease(t, r, "held", "2:1:"+day, 8, second)
	// 230 + 16 + 20 is over 256, and so is 230 + 8 + 20 once the first lease has gone; 230 + 20 is
	// not, once both have, 0.6 s from now, before the window's 230 leave it (1 s).
	d, err = r.Admit(t.Context(), "held", limits, 20)
	if err != nil || d.Allowed {
		t.Fatalf("Admit: %+v, %v: want a refusal", d, err)
	}
	if got := d.At.Add(d.RetryAfter).UnixMicro(); got != second {
		t.Fatalf("retry at %d µs, want the second lease's expiry %d (the first's is %d, the window's 1 s is %d)", got, second, first, d.At.UnixMicro()+1_000_000)
	}
}

// TestRedisLimiter_RetryAfterPastALeaseTooBigToWaitBeside: a call that a lease's places with its
// own exceed the limit on their own (a lease granted under a higher plan, a costly call) is told
// to retry when the lease has expired, not when the window has emptied, which is sooner and gives
// no room (the third review: a call of 10 under 256 a second, beside a dead replica's lease of
// 250, was told 1 s, and refused again then). The lease is written as the script writes it.
func TestRedisLimiter_RetryAfterPastALeaseTooBigToWaitBeside(t *testing.T) {
	c, prefix := storetest.RedisClient(t)
	r := NewRedisLimiter(c, prefix, nil).NoLeases()
	limits := flightgraph.Limits{PerSecond: 256, PerDay: 1_000_000}
	d, err := r.Admit(t.Context(), "big", limits, 1)
	if err != nil || !d.Allowed {
		t.Fatalf("Admit: %+v, %v", d, err)
	}
	expiry := redisMicros(t, c) + 1_040_000 // granted 10 ms ago
	putLease(t, r, "big", "7:1:"+d.At.UTC().Format(flightgraph.DateLayout), 250, expiry)
	d, err = r.Admit(t.Context(), "big", limits, 10)
	if err != nil || d.Allowed {
		t.Fatalf("Admit: %+v, %v: want a refusal", d, err)
	}
	if got := d.At.Add(d.RetryAfter).UnixMicro(); got != expiry {
		t.Fatalf("retry at %d µs, want the lease's expiry %d (the window empties at %d)", got, expiry, d.At.UnixMicro()+1_000_000)
	}
	// At that time on Redis's clock, the call is admitted.
	waitRedisClock(t, c, expiry)
	if d, err := r.Admit(t.Context(), "big", limits, 10); err != nil || !d.Allowed {
		t.Fatalf("retried at the time given and refused again: %+v, %v", d, err)
	}
}

// TestRedisLimiter_RetryAfterPerLimitInABatch: two refused calls of one subscription in one
// script run, of the same size under two limits (a plan change between them), are each told their
// own retry: the run keeps a refusal's answer for the calls after it, and must not hand the one
// under 256 a second to the one under 240.
func TestRedisLimiter_RetryAfterPerLimitInABatch(t *testing.T) {
	c, prefix := storetest.RedisClient(t)
	r := NewRedisLimiter(c, prefix, nil).NoLeases()
	d, err := r.Admit(t.Context(), "plan", flightgraph.Limits{PerSecond: 256, PerDay: 1_000_000}, 230)
	if err != nil || !d.Allowed {
		t.Fatalf("Admit: %+v, %v", d, err)
	}
	putLease(t, r, "plan", "1:1:"+d.At.UTC().Format(flightgraph.DateLayout), 8, redisMicros(t, c)+300_000)
	// Under 256: 230 + 8 + 20 is over, 230 + 20 is not once the lease has gone (0.3 s). Under 240:
	// 230 + 20 is over too, until the window's 230 have left (1 s).
	args := []any{2000, 1, redisLeaseLife.Microseconds(), 0,
		1, 256, 1_000_000, 20, 20, 0,
		1, 240, 1_000_000, 20, 20, 0}
	res, err := r.script.Run(t.Context(), c, []string{r.windowKey("plan"), r.dayKey("plan"), r.leaseKey("plan")}, args...).Slice()
	if err != nil || len(res) != 3+6*2 {
		t.Fatalf("%v, %v", res, err)
	}
	first, second := res[3+3].(int64), res[3+6+3].(int64)
	if res[3] != int64(redisRefusedSecond) || res[3+6] != int64(redisRefusedSecond) {
		t.Fatalf("statuses %v and %v, want both refused per second", res[3], res[3+6])
	}
	if first > 310_000 || second < 900_000 {
		t.Fatalf("retry after %d µs under 256 and %d µs under 240, want about 0.3 s and about 1 s", first, second)
	}
}

// WaitNoLeases (for this package's tests, inside and out) waits for a subscription's lease hash to be empty, as the leases' timers settle
// them at the end of their life, and fails the test if 5 s are not enough.
func WaitNoLeases(t *testing.T, c *redis.Client, key string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, err := c.HLen(t.Context(), key).Result()
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d leases still held 5 s after their life", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRedisLimiter_DayRefusalForNowOnlyForTodaysLeases: a lease of yesterday, live just after
// midnight, took its places from yesterday's count and gives nothing back to today; a call today's
// full count refuses is refused until midnight, not "for now" (the fourth review).
func TestRedisLimiter_DayRefusalForNowOnlyForTodaysLeases(t *testing.T) {
	c, prefix := storetest.RedisClient(t)
	r := NewRedisLimiter(c, prefix, nil).NoLeases()
	limits := flightgraph.Limits{PerSecond: 256, PerDay: 100}
	d, err := r.Admit(t.Context(), "midnight", limits, 1)
	if err != nil || !d.Allowed {
		t.Fatalf("Admit: %+v, %v", d, err)
	}
	day := d.At.UTC().Format(flightgraph.DateLayout)
	yesterday := d.At.UTC().AddDate(0, 0, -1).Format(flightgraph.DateLayout)
	if err := c.Set(t.Context(), r.dayKey("midnight")+day, 100, time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	putLease(t, r, "midnight", "1:1:"+yesterday, 8, redisMicros(t, c)+900_000)
	d, err = r.Admit(t.Context(), "midnight", limits, 1)
	if err != nil || d.Allowed || d.Code != flightgraph.ECodePerDayLimit {
		t.Fatalf("Admit: %+v, %v: want a refusal per day", d, err)
	}
	if d.RetryAfter != d.DayReset.Sub(d.At) {
		t.Fatalf("refused with RetryAfter %v, want until midnight (%v): yesterday's lease gives nothing back to today", d.RetryAfter, d.DayReset.Sub(d.At))
	}
}

// TestRedisLimiter_RetryAfterWindowAhead: after Redis's clock steps back, a window's time may be
// up to a second ahead of it, and a call of that time leaves the window up to 2 s from now: a
// refusal's retry says so, rather than 1 s, when the call is refused again (the fourth review).
func TestRedisLimiter_RetryAfterWindowAhead(t *testing.T) {
	c, prefix := storetest.RedisClient(t)
	r := NewRedisLimiter(c, prefix, nil).NoLeases()
	limits := flightgraph.Limits{PerSecond: 256, PerDay: 1_000_000}
	// One member of 256 places, 0.6 s ahead of Redis's clock, as the script writes one.
	ahead := redisMicros(t, c) + 600_000
	at := strconv.FormatInt(ahead, 10)
	if err := c.ZAdd(t.Context(), r.windowKey("ahead"), redis.Z{Score: float64(ahead), Member: "t" + at + ":9:1:" + at + ":256:256"}).Err(); err != nil {
		t.Fatal(err)
	}
	d, err := r.Admit(t.Context(), "ahead", limits, 1)
	if err != nil || d.Allowed {
		t.Fatalf("Admit: %+v, %v: want a refusal", d, err)
	}
	waitRedisClock(t, c, d.At.Add(d.RetryAfter).UnixMicro())
	if d2, err := r.Admit(t.Context(), "ahead", limits, 1); err != nil || !d2.Allowed {
		t.Fatalf("retried after %v, the time given, and refused again: %+v, %v", d.RetryAfter, d2, err)
	}
}

// redisMicros is Redis's clock, in µs, as the scripts read it.
func redisMicros(t *testing.T, c *redis.Client) int64 {
	t.Helper()
	now, err := c.Time(t.Context()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return now.UnixMicro()
}

// waitRedisClock waits for Redis's clock to reach at (µs).
func waitRedisClock(t *testing.T, c *redis.Client, at int64) {
	t.Helper()
	for redisMicros(t, c) < at {
		time.Sleep(time.Millisecond)
	}
}

// putLease writes a lease into sub's hash as the script writes one (see leaseLua): a dead
// replica's, which no one settles.
func putLease(t *testing.T, r *RedisLimiter, sub, field string, places, expiry int64) {
	t.Helper()
	if err := r.client.HSet(t.Context(), r.leaseKey(sub), field, strconv.FormatInt(places, 10)+":"+strconv.FormatInt(expiry, 10)).Err(); err != nil {
		t.Fatal(err)
	}
}
