package access_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/access"
	"github.com/flightgraph/flightgraph/store/storetest"
)

var adaKey = access.SignInKey(access.SignInPortal, "ada@example.com")

func TestMemoryLockout(t *testing.T) {
	t.Parallel()
	clock := newLimitClock(limitBase)
	l := access.NewMemoryLockout(clock.Now)
	testLockoutCounts(t, l)

	// The window starts at the first attempt and is not extended by refusals.
	fill(t, l, adaKey)
	clock.Add(5 * time.Minute)
	if d := mustAttempt(t, l, adaKey); d.Allowed || d.RetryAfter != 10*time.Minute {
		t.Fatalf("5 minutes into the lock: %+v, want refused with 10 minutes to wait", d)
	}
	clock.Add(10*time.Minute - time.Nanosecond)
	if d := mustAttempt(t, l, adaKey); d.Allowed || d.RetryAfter != time.Nanosecond {
		t.Fatalf("a nanosecond before the window ends: %+v, want refused", d)
	}
	clock.Add(time.Nanosecond)
	if d := mustAttempt(t, l, adaKey); !d.Allowed || d.Attempts != 1 {
		t.Fatalf("once the window ended: %+v, want the first attempt of a new window", d)
	}
	// Ten attempts spread over the window lock it as surely as ten at once.
	clock.Add(time.Hour)
	for range access.MaxSignInAttempts {
		mustAttempt(t, l, "spread")
		clock.Add(80 * time.Second)
	}
	if d := mustAttempt(t, l, "spread"); d.Allowed {
		t.Fatalf("10 attempts within the window, then: %+v, want refused", d)
	}
}

func TestRedisLockout(t *testing.T) {
	t.Parallel()
	c, prefix := storetest.RedisClient(t)
	l := access.NewRedisLockout(c, prefix)
	testLockoutCounts(t, l)

	// The key is the identifier's hash under the prefix: no e-mail in Redis. Its lifetime is the
	// window, started by the first attempt.
	fill(t, l, adaKey)
	keys, err := c.Keys(t.Context(), prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys[0] != prefix+adaKey || strings.Contains(keys[0], "ada") {
		t.Fatalf("keys %q, want only %q", keys, prefix+adaKey)
	}
	ttl, err := c.PTTL(t.Context(), keys[0]).Result()
	if err != nil {
		t.Fatal(err)
	}
	if ttl <= access.SignInWindow-time.Minute || ttl > access.SignInWindow {
		t.Fatalf("the counter lives %v, want about the window, %v", ttl, access.SignInWindow)
	}
	// A counter that lost its lifetime (restored from a dump by hand, say) would lock forever;
	// the next attempt starts a window instead.
	if err := c.Persist(t.Context(), keys[0]).Err(); err != nil {
		t.Fatal(err)
	}
	if d := mustAttempt(t, l, adaKey); !d.Allowed || d.Attempts != 1 {
		t.Fatalf("a counter without a lifetime: %+v, want a new window", d)
	}
}

// testLockoutCounts checks what every Lockout does: 10 attempts allowed, the 11th refused for the
// rest of the window, identifiers apart, and a success's Clear starting the count again.
func testLockoutCounts(t *testing.T, l access.Lockout) {
	t.Helper()
	for i := 1; i <= access.MaxSignInAttempts; i++ {
		if d := mustAttempt(t, l, adaKey); !d.Allowed || d.Attempts != i {
			t.Fatalf("attempt %d: %+v, want allowed as attempt %d", i, d, i)
		}
	}
	d := mustAttempt(t, l, adaKey)
	if d.Allowed || d.RetryAfter <= access.SignInWindow-time.Minute || d.RetryAfter > access.SignInWindow {
		t.Fatalf("attempt 11: %+v, want refused for about %v", d, access.SignInWindow)
	}
	other := access.SignInKey(access.SignInCustomer, "ada@example.com")
	if d := mustAttempt(t, l, other); !d.Allowed {
		t.Fatalf("the same name in the other namespace: %+v, want allowed", d)
	}
	if err := l.Clear(t.Context(), adaKey); err != nil {
		t.Fatal(err)
	}
	if d := mustAttempt(t, l, adaKey); !d.Allowed || d.Attempts != 1 {
		t.Fatalf("after Clear: %+v, want attempt 1", d)
	}
	for _, k := range []string{adaKey, other} {
		if err := l.Clear(t.Context(), k); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLockout_Concurrent: of 50 attempts at once on one identifier, exactly 10 are allowed, in
// process and across two replicas' Redis clients.
func TestLockout_Concurrent(t *testing.T) {
	t.Parallel()
	t.Run("memory", func(t *testing.T) {
		t.Parallel()
		l := access.NewMemoryLockout(nil)
		assertConcurrentAttempts(t, []access.Lockout{l})
	})
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		c1, prefix := storetest.RedisClient(t)
		c2 := redis.NewClient(c1.Options())
		t.Cleanup(func() { c2.Close() })
		assertConcurrentAttempts(t, []access.Lockout{access.NewRedisLockout(c1, prefix), access.NewRedisLockout(c2, prefix)})
	})
}

func assertConcurrentAttempts(t *testing.T, ls []access.Lockout) {
	t.Helper()
	var (
		wg      sync.WaitGroup
		allowed atomic.Int32
		start   = make(chan struct{})
	)
	for i := range 50 {
		wg.Go(func() {
			<-start
			d, err := ls[i%len(ls)].Attempt(context.Background(), adaKey)
			if err != nil {
				t.Error(err)
			} else if d.Allowed {
				allowed.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	if n := allowed.Load(); n != access.MaxSignInAttempts {
		t.Fatalf("%d of 50 concurrent attempts allowed, want %d", n, access.MaxSignInAttempts)
	}
}

// TestLockoutFallback_RedisDown: with Redis unreachable the attempts are counted in process, so
// the 11th is still refused, and the outage is logged once.
func TestLockoutFallback_RedisDown(t *testing.T) {
	t.Parallel()
	primary := access.NewRedisLockout(unreachableRedis(t), "test:")
	if _, err := primary.Attempt(t.Context(), adaKey); flightgraph.ErrorCode(err) != flightgraph.ECodeCache {
		t.Fatalf("Attempt with Redis down: err = %v, want code %s", err, flightgraph.ECodeCache)
	}
	var logs limitLogBuffer
	f := access.NewLockoutFallback(primary, access.NewMemoryLockout(nil), slog.New(slog.NewTextHandler(&logs, nil)))
	fill(t, f, adaKey)
	if d := mustAttempt(t, f, adaKey); d.Allowed {
		t.Fatalf("attempt 11 with Redis down: %+v, want refused", d)
	}
	assertFellBack(t, f, access.MaxSignInAttempts+1, &logs)
}

// TestLockoutFallback_ClearsBoth: a success while the primary answers also clears what the
// secondary counted in an earlier outage, so that the next outage does not lock out an account
// that signed in since.
func TestLockoutFallback_ClearsBoth(t *testing.T) {
	t.Parallel()
	clock := newLimitClock(limitBase)
	primary := &flakyLockout{l: access.NewMemoryLockout(clock.Now)}
	f := access.NewLockoutFallback(primary, access.NewMemoryLockout(clock.Now), nil)
	f.Now = clock.Now

	primary.down.Store(true)
	for range access.MaxSignInAttempts - 1 {
		mustAttempt(t, f, adaKey)
	}
	primary.down.Store(false)
	clock.Add(2 * time.Second) // past the retry delay: the primary is asked again
	if d := mustAttempt(t, f, adaKey); !d.Allowed || d.Attempts != 1 {
		t.Fatalf("first attempt with the primary back: %+v, want its attempt 1", d)
	}
	if err := f.Clear(t.Context(), adaKey); err != nil {
		t.Fatal(err)
	}
	primary.down.Store(true)
	for i := 1; i <= access.MaxSignInAttempts; i++ {
		if d := mustAttempt(t, f, adaKey); !d.Allowed {
			t.Fatalf("attempt %d of the second outage: %+v, want allowed: the success cleared the count", i, d)
		}
	}
}

// TestLockoutTake: a Take counts in all its counters or in none; N counts several at once; a
// quota without a Max counts and never refuses; and of 50 Takes at once, across two Redis
// clients, exactly the Max pass.
func TestLockoutTake(t *testing.T) {
	t.Parallel()
	for name, counters := range map[string]func(t *testing.T) []access.Lockout{
		"memory": func(*testing.T) []access.Lockout { l := access.NewMemoryLockout(nil); return []access.Lockout{l, l} },
		"redis": func(t *testing.T) []access.Lockout {
			c1, prefix := storetest.RedisClient(t)
			c2 := redis.NewClient(c1.Options())
			t.Cleanup(func() { c2.Close() })
			return []access.Lockout{access.NewRedisLockout(c1, prefix), access.NewRedisLockout(c2, prefix)}
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ls := counters(t)
			l := ls[0]
			take := func(qs ...access.Quota) access.LockoutDecision {
				t.Helper()
				d, err := l.Take(t.Context(), qs)
				if err != nil {
					t.Fatal(err)
				}
				return d
			}
			wide := access.Quota{Key: "wide", Max: 10, Window: time.Hour}
			narrow := access.Quota{Key: "narrow", Max: 2, Window: time.Minute}
			uncapped := access.Quota{Key: "uncapped", Window: time.Minute}
			for i := 1; i <= 2; i++ {
				if d := take(wide, narrow, uncapped); !d.Allowed || d.Attempts != i {
					t.Fatalf("take %d: %+v", i, d)
				}
			}
			d := take(wide, narrow, uncapped)
			if d.Allowed || d.Full != 1 || d.Attempts != 2 || d.RetryAfter <= 50*time.Second || d.RetryAfter > time.Minute {
				t.Fatalf("the third take with narrow full: %+v, want refused by quota 1 for about a minute", d)
			}
			// The refusal counted nowhere: wide has 8 left, taken as one N of 8.
			if d := take(access.Quota{Key: "wide", Max: 10, Window: time.Hour, N: 8}); !d.Allowed || d.Attempts != 10 {
				t.Fatalf("wide after the refusal: %+v, want 10 counted", d)
			}
			if d := take(access.Quota{Key: "fresh", Max: 3, Window: time.Hour, N: 4}); d.Allowed {
				t.Fatalf("N over Max on a fresh counter: %+v, want refused", d)
			}
			for range 5 {
				if d := take(uncapped); !d.Allowed {
					t.Fatalf("a quota without a Max refused: %+v", d)
				}
			}
			if d := take(access.Quota{Key: "uncapped", Max: 3, Window: time.Minute}); d.Allowed || d.Attempts != 7 {
				t.Fatalf("uncapped's counts: %+v, want 7 counted and a Max of 3 refused", d)
			}

			var (
				wg      sync.WaitGroup
				allowed atomic.Int32
			)
			for i := range 50 {
				wg.Go(func() {
					d, err := ls[i%2].Take(context.Background(), []access.Quota{{Key: "race", Max: 7, Window: time.Minute}, {Key: "race-" + string(rune('a'+i%2)), Max: 100, Window: time.Minute}})
					if err != nil {
						t.Error(err)
					} else if d.Allowed {
						allowed.Add(1)
					}
				})
			}
			wg.Wait()
			if n := allowed.Load(); n != 7 {
				t.Fatalf("%d of 50 takes at once allowed, want 7", n)
			}
		})
	}
}

// flakyLockout is a Lockout that fails while down is set.
type flakyLockout struct {
	down atomic.Bool
	l    access.Lockout
}

func (f *flakyLockout) Attempt(ctx context.Context, key string) (access.LockoutDecision, error) {
	if f.down.Load() {
		return access.LockoutDecision{}, errors.New("the store is down")
	}
	return f.l.Attempt(ctx, key)
}

func (f *flakyLockout) Take(ctx context.Context, quotas []access.Quota) (access.LockoutDecision, error) {
	if f.down.Load() {
		return access.LockoutDecision{}, errors.New("the store is down")
	}
	return f.l.Take(ctx, quotas)
}

func (f *flakyLockout) Clear(ctx context.Context, key string) error {
	if f.down.Load() {
		return errors.New("the store is down")
	}
	return f.l.Clear(ctx, key)
}

// fill makes the MaxSignInAttempts attempts that the next one is refused after.
func fill(t *testing.T, l access.Lockout, key string) {
	t.Helper()
	for range access.MaxSignInAttempts {
		if d := mustAttempt(t, l, key); !d.Allowed {
			t.Fatalf("refused while filling: %+v", d)
		}
	}
}

func mustAttempt(t *testing.T, l access.Lockout, key string) access.LockoutDecision {
	t.Helper()
	d, err := l.Attempt(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestSignInKeyHidesTheIdentifier(t *testing.T) {
	a, b := access.SignInKey(access.SignInPortal, "ada@example.com"), access.SignInKey(access.SignInCustomer, "ada@example.com")
	if a == b || len(a) != 64 || strings.Contains(a, "ada") {
		t.Fatalf("keys %q and %q: want two different SHA-256 hex digests", a, b)
	}
}
