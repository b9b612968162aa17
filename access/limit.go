package access

import (
	"context"
	"fmt"
	"hash/maphash"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flightgraph/flightgraph"
)

// Decision is a limiter's answer for one call.
type Decision struct {
	Allowed bool
	// Code is flightgraph.ECodePerSecondLimit or flightgraph.ECodePerDayLimit when the call is
	// refused, and empty when it is admitted.
	Code   string
	Limits flightgraph.Limits
	// SecondUsed is how many calls were admitted in the sliding second ending now, this one
	// included when it is admitted.
	SecondUsed int
	// DayUsed is how many calls were admitted on the current UTC day, this one included when it
	// is admitted.
	DayUsed int64
	// RetryAfter is, for a refused call, the time until a call would be admitted: until the
	// window has room for per-second refusals, until the next UTC midnight for per-day ones.
	RetryAfter time.Duration
	// SecondReset is the time until the oldest call in the window leaves it, 0 when the window
	// is empty.
	SecondReset time.Duration
	// DayReset is the next UTC midnight, when the day counter starts again.
	DayReset time.Time
	// At is the instant of the decision: the injected clock's for the memory limiter, the Redis
	// server's for the Redis limiter, so that all replicas agree on it.
	At time.Time
}

// DayUsage returns how many calls a subscription made on a UTC day ("2026-11-22") according to
// durable storage. Limiters call it when they hold no counter for that day (the first call after
// a restart, or after Redis lost its data), so that a restart never resets the daily quota.
type DayUsage func(ctx context.Context, subscription, day string) (int64, error)

// Limiter decides whether a subscription's call stays within its plan's limits. A call is
// admitted only if fewer than PerSecond calls were admitted in the sliding second ending now and
// fewer than PerDay on the current UTC day; a limit of 0 or less admits nothing. Only admitted
// calls count.
type Limiter interface {
	// Admit decides one call of the subscription under limits and counts it when admitted. A
	// refusal is a Decision with Allowed false, not an error; errors are ECodeCache when the
	// limiter's store fails, or whatever DayUsage returned.
	Admit(ctx context.Context, subscription string, limits flightgraph.Limits) (Decision, error)
}

var (
	_ Limiter = (*MemoryLimiter)(nil)
	_ Limiter = (*RedisLimiter)(nil)
	_ Limiter = (*Fallback)(nil)
)

const limitNsPerDay = int64(24 * time.Hour)

// memoryShards spreads subscriptions over enough locks that lookups from many cores rarely meet.
const memoryShards = 64

// MemoryLimiter is an in-process Limiter. Each replica counts only the calls it admitted itself,
// so it enforces the limits exactly for one replica only; it serves alone in development and as
// the Fallback's secondary when the shared store is down.
type MemoryLimiter struct {
	usage  DayUsage
	now    func() time.Time
	seed   maphash.Seed
	shards [memoryShards]memoryShard
}

// memoryShard holds the states of the subscriptions that hash to it. The padding keeps two
// shards' locks off one cache line, since different cores take them at once.
type memoryShard struct {
	mu   sync.RWMutex
	subs map[string]*memoryState
	_    [32]byte
}

// memoryState is one subscription's counters; its own mutex keeps calls of different
// subscriptions from waiting on each other.
type memoryState struct {
	mu       sync.Mutex
	window   callWindow
	day      int64 // days since the Unix epoch of dayUsed
	dayKnown bool
	dayUsed  int64
}

// NewMemoryLimiter returns a MemoryLimiter that reads the time from now and the usage of a day it
// has no counter for from usage. A nil usage starts every day from 0, which only tests and
// development should want.
func NewMemoryLimiter(usage DayUsage, now func() time.Time) *MemoryLimiter {
	if now == nil {
		now = time.Now
	}
	l := &MemoryLimiter{usage: usage, now: now, seed: maphash.MakeSeed()}
	for i := range l.shards {
		l.shards[i].subs = make(map[string]*memoryState)
	}
	return l
}

// Admit decides one call in O(1) and, once the subscription is known and its window has grown to
// its rate, without allocating.
func (l *MemoryLimiter) Admit(ctx context.Context, subscription string, limits flightgraph.Limits) (Decision, error) {
	st := l.state(subscription)
	st.mu.Lock()
	defer st.mu.Unlock()

	// The time is read under the lock so that the window's times are in admission order.
	t := l.now().UnixNano()
	if newest, ok := st.window.newest(); ok && t < newest {
		if newest-t > int64(time.Second) {
			// The clock stepped back further than the window: the old times would hold the
			// window shut until the clock caught up with them.
			st.window.reset()
		} else {
			t = newest
		}
	}
	day := limitFloorDiv(t, limitNsPerDay)
	if !st.dayKnown || st.day != day {
		used, err := l.dayUsage(ctx, subscription, day)
		if err != nil {
			return Decision{}, err
		}
		st.day, st.dayUsed, st.dayKnown = day, used, true
	}
	st.window.prune(t - int64(time.Second))

	d := Decision{
		Limits:   limits,
		DayUsed:  st.dayUsed,
		DayReset: time.Unix(0, (day+1)*limitNsPerDay).UTC(),
		At:       time.Unix(0, t).UTC(),
	}
	n := st.window.n
	switch {
	case st.dayUsed >= int64(limits.PerDay):
		d.Code, d.RetryAfter = flightgraph.ECodePerDayLimit, d.DayReset.Sub(d.At)
	case n >= limits.PerSecond:
		d.Code, d.RetryAfter = flightgraph.ECodePerSecondLimit, time.Second
		if limits.PerSecond > 0 {
			// The window has room once all but PerSecond-1 of its calls have left it.
			d.RetryAfter = windowLeaves(st.window.at(n-limits.PerSecond), t)
		}
	default:
		st.window.push(t)
		st.dayUsed++
		n++
		d.Allowed, d.DayUsed = true, st.dayUsed
	}
	d.SecondUsed = n
	if n > 0 {
		d.SecondReset = windowLeaves(st.window.at(0), t)
	}
	return d, nil
}

// state returns the subscription's state, creating it on its first call.
func (l *MemoryLimiter) state(subscription string) *memoryState {
	sh := &l.shards[maphash.String(l.seed, subscription)%memoryShards]
	sh.mu.RLock()
	st := sh.subs[subscription]
	sh.mu.RUnlock()
	if st != nil {
		return st
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if st = sh.subs[subscription]; st == nil {
		st = &memoryState{}
		sh.subs[subscription] = st
	}
	return st
}

func (l *MemoryLimiter) dayUsage(ctx context.Context, subscription string, day int64) (int64, error) {
	if l.usage == nil {
		return 0, nil
	}
	name := time.Unix(0, day*limitNsPerDay).UTC().Format(flightgraph.DateLayout)
	used, err := l.usage(ctx, subscription, name)
	if err != nil {
		return 0, fmt.Errorf("access: usage of subscription %s on %s: %w", subscription, name, err)
	}
	return used, nil
}

// forget drops every subscription's counters, so that each starts again from DayUsage. The
// Fallback calls it when it turns to this limiter after a spell without it, during which the
// counters missed every call the primary admitted.
func (l *MemoryLimiter) forget() {
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		clear(sh.subs)
		sh.mu.Unlock()
	}
}

// callWindow is a ring of the times (Unix nanoseconds) of the calls admitted in the last second,
// oldest first. It never holds more than PerSecond times, since a full window refuses; it grows
// by doubling rather than to PerSecond at once, so that a generous custom plan costs memory only
// if its subscription really calls that fast.
type callWindow struct {
	times   []int64
	head, n int
}

func (w *callWindow) at(i int) int64 { return w.times[(w.head+i)%len(w.times)] }

func (w *callWindow) newest() (int64, bool) {
	if w.n == 0 {
		return 0, false
	}
	return w.at(w.n - 1), true
}

// prune drops the times at or before cutoff: a call exactly one second old has left the window.
func (w *callWindow) prune(cutoff int64) {
	for w.n > 0 && w.times[w.head] <= cutoff {
		w.head = (w.head + 1) % len(w.times)
		w.n--
	}
}

func (w *callWindow) push(t int64) {
	if w.n == len(w.times) {
		grown := make([]int64, max(8, 2*len(w.times)))
		for i := 0; i < w.n; i++ {
			grown[i] = w.at(i)
		}
		w.times, w.head = grown, 0
	}
	w.times[(w.head+w.n)%len(w.times)] = t
	w.n++
}

func (w *callWindow) reset() { w.head, w.n = 0, 0 }

// windowLeaves returns the time from now until a call admitted at t leaves the window, both in Unix
// nanoseconds.
func windowLeaves(t, now int64) time.Duration {
	return min(max(time.Duration(t+int64(time.Second)-now), 0), time.Second)
}

// limitFloorDiv divides rounding toward minus infinity, so that an instant before 1970 falls on
// its own day rather than on the next.
func limitFloorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// fallbackStale is how long the secondary may go unused before its counters are dropped when the
// Fallback turns to it again: they missed the calls the primary admitted meanwhile, and the
// sliding window is stale after one second anyway.
const fallbackStale = 2 * time.Second

// Fallback is a Limiter that decides with a primary limiter and, while the primary fails,
// with a secondary one.
//
// It exists for the Redis outage. Of the three things a service can do when its shared limiter
// store is down, failing every call turns a cache outage into a full API outage, and admitting
// every call lets one client flood the backends exactly when the platform is already degraded.
// Keeping the limits per replica with an in-process MemoryLimiter stays available and still
// bounds every subscription: at worst it admits the plan's rate once per replica, and each
// replica's daily count starts from durable storage (DayUsage) rather than from 0, so the daily
// quota is overrun at most by what the other replicas admit during the outage, and only until
// the primary answers again (see DayCatchUp).
//
// While the primary fails it is retried at most once a second; the other calls go straight to the
// secondary. The switch is logged at most once a minute and counted by Fallbacks (served at
// /metrics as flightgraph_limiter_fallbacks_total).
//
// When the primary is a DayCatchUp (the Redis limiter), the subscriptions and days the secondary
// admitted calls for are caught up once the primary answers again: in the background, each of
// their day counters is raised to the durable count (DayUsage), which includes those calls.
// Raising to a count, never adding, cannot count a call twice, however often it is retried.
type Fallback struct {
	failover
	primary, secondary Limiter
	// Now is the clock of the retries and the staleness; time.Now unless set before first use.
	Now func() time.Time

	missedMu                        sync.Mutex
	missed                          map[SubscriptionDay]bool // the days the secondary admitted calls for, to catch up
	pending                         atomic.Bool              // missed is not empty
	catching                        atomic.Bool              // a catch-up runs
	lastCaughtUp, lastCatchUpFailed atomic.Int64             // Unix ns of the latest log lines about catch-ups

	lastSecondary atomic.Int64 // Unix ns of the secondary's latest decision
}

// NewFallback returns a Fallback over primary and secondary that logs to log; a nil log discards.
func NewFallback(primary, secondary Limiter, log *slog.Logger) *Fallback {
	return &Fallback{primary: primary, secondary: secondary, Now: time.Now,
		failover: newFailover(log, "access: the primary limiter failed; limits are enforced per replica",
			"access: the primary limiter answers again; limits are shared again")}
}

// Admit decides with the primary and, when it fails or failed less than a second ago, with the
// secondary. An error of the primary is returned only if ctx is done, since then the caller is
// gone and the secondary's answer would not be read either.
func (f *Fallback) Admit(ctx context.Context, subscription string, limits flightgraph.Limits) (Decision, error) {
	d, ok, err := withPrimary(ctx, &f.failover, f.Now, func() (Decision, error) { return f.primary.Admit(ctx, subscription, limits) })
	if ok {
		if f.pending.Load() && f.catching.CompareAndSwap(false, true) {
			go f.catchUp()
		}
		return d, nil
	} else if err != nil {
		return d, err
	}
	now := f.Now().UnixNano()
	if last := f.lastSecondary.Swap(now); now-last > int64(fallbackStale) {
		if s, ok := f.secondary.(interface{ forget() }); ok {
			s.forget()
		}
	}
	d, err = f.secondary.Admit(ctx, subscription, limits)
	if err == nil && d.Allowed {
		if _, ok := f.primary.(DayCatchUp); ok {
			f.missedMu.Lock()
			if f.missed == nil {
				f.missed = map[SubscriptionDay]bool{}
			}
			f.missed[SubscriptionDay{subscription, d.At.UTC().Format(flightgraph.DateLayout)}] = true
			f.missedMu.Unlock()
			f.pending.Store(true)
		}
	}
	return d, err
}

// SubscriptionDay names a subscription's day counter: its id and a UTC day ("2026-11-22").
type SubscriptionDay struct{ Subscription, Day string }

// DayCatchUp is a limiter whose day counters can be caught up with durable usage after another
// limiter decided in its place.
type DayCatchUp interface {
	// CatchUp raises each day counter it holds to the day's durable usage, and returns the days
	// it could not, with the first error.
	CatchUp(ctx context.Context, days []SubscriptionDay) ([]SubscriptionDay, error)
}

// fallbackCatchUpTimeout bounds one catch-up.
const fallbackCatchUpTimeout = 30 * time.Second

// catchUp catches the primary's day counters up with the days the secondary admitted calls for;
// what it cannot is kept for the next call the primary answers. The caller set f.catching.
func (f *Fallback) catchUp() {
	defer f.catching.Store(false)
	ctx, cancel := context.WithTimeout(context.Background(), fallbackCatchUpTimeout)
	defer cancel()
	f.missedMu.Lock()
	days := make([]SubscriptionDay, 0, len(f.missed))
	for d := range f.missed {
		days = append(days, d)
	}
	f.missed = nil
	f.pending.Store(false)
	f.missedMu.Unlock()

	failed, err := f.primary.(DayCatchUp).CatchUp(ctx, days)
	now := f.Now().UnixNano()
	if len(failed) == 0 {
		f.logOnce(ctx, &f.lastCaughtUp, now, slog.LevelInfo, "access: the primary limiter's day counters are caught up with the outage", "days", len(days))
		return
	}
	f.logOnce(ctx, &f.lastCatchUpFailed, now, slog.LevelWarn, "access: could not catch the primary limiter's day counters up with the outage; will retry",
		"err", err, "days", len(failed))
	f.missedMu.Lock()
	if f.missed == nil {
		f.missed = map[SubscriptionDay]bool{}
	}
	for _, d := range failed {
		f.missed[d] = true
	}
	f.missedMu.Unlock()
	f.pending.Store(true)
}

// CatchingUp reports whether days counted by the secondary still wait to be caught up in the
// primary, or are being caught up.
func (f *Fallback) CatchingUp() bool { return f.pending.Load() || f.catching.Load() }
