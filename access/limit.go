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
	// Admit decides one call of the subscription that costs calls (at least 1; see
	// flightgraph.Weight) under limits, and counts it when admitted: calls against the day's
	// quota, and as many in the per-second window but never more than the window holds, so that
	// a call heavier than a second's allowance can still be made, alone in its second. A refusal
	// is a Decision with Allowed false, not an error; errors are ECodeCache when the limiter's
	// store fails, or whatever DayUsage returned.
	Admit(ctx context.Context, subscription string, limits flightgraph.Limits, calls int) (Decision, error)
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
	mu    sync.RWMutex
	subs  map[string]*memoryState
	swept int64 // Unix ns of the latest sweep of idle states
	_     [24]byte
}

// memoryState is one subscription's counters; its own mutex keeps calls of different
// subscriptions from waiting on each other.
type memoryState struct {
	mu       sync.Mutex
	window   callWindow
	day      int64 // days since the Unix epoch of dayUsed
	dayKnown bool
	dayUsed  int64
	dropped  bool // swept out of its shard: whoever holds it looks it up again
	// held counts the reservations not yet settled (reserve, settle); freed, when someone
	// waits for one of them (reserveOrWait), is closed when the next is settled.
	held  int
	freed chan struct{}
}

// memorySweepEvery is how often a shard drops the states of the names that made no call in the
// last second. Every name a replica admits is kept (behind a Fallback, every call is recorded
// here, including the uncharged calls of each client address), so without the sweep the map
// would grow with every address that ever called. A dropped day count is read again from
// DayUsage, which holds it.
const memorySweepEvery = time.Minute

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

// Admit decides one call in O(calls) and, once the subscription is known and its window has grown
// to its rate, without allocating.
func (l *MemoryLimiter) Admit(ctx context.Context, subscription string, limits flightgraph.Limits, calls int) (Decision, error) {
	calls, places := callsAndPlaces(calls, limits)
	st := l.locked(subscription)
	defer st.mu.Unlock()

	t := l.windowNow(st)
	day := limitFloorDiv(t, limitNsPerDay)
	if !st.dayKnown || st.day != day {
		used, err := l.dayUsage(ctx, subscription, day)
		if err != nil {
			return Decision{}, err
		}
		st.day, st.dayUsed, st.dayKnown = day, used, true
	}

	d := Decision{
		Limits:   limits,
		DayUsed:  st.dayUsed,
		DayReset: time.Unix(0, (day+1)*limitNsPerDay).UTC(),
		At:       time.Unix(0, t).UTC(),
	}
	n := st.window.n
	switch {
	case st.dayUsed+int64(calls) > int64(limits.PerDay):
		d.Code, d.RetryAfter = flightgraph.ECodePerDayLimit, d.DayReset.Sub(d.At)
	case n+places > limits.PerSecond:
		d.Code, d.RetryAfter = flightgraph.ECodePerSecondLimit, st.window.retryAfter(limits.PerSecond-places+1, t)
	default:
		for range places {
			st.window.push(t)
		}
		st.dayUsed += int64(calls)
		n += places
		d.Allowed, d.DayUsed = true, st.dayUsed
	}
	d.SecondUsed = n
	if n > 0 {
		d.SecondReset = windowLeaves(st.window.at(0), t)
	}
	return d, nil
}

// windowNow returns the time of a decision on st's window, which the caller has locked, and drops
// the calls that have left the window by then. The time is read under the lock so that the
// window's times are in admission order.
func (l *MemoryLimiter) windowNow(st *memoryState) int64 {
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
	st.window.prune(t - int64(time.Second))
	return t
}

// The Fallback keeps its secondary's windows holding every call this replica admitted, through
// either limiter, so that the replica never admits more than the per-second limit in one
// sliding second when it switches between them (see Fallback). These three methods are the
// windows' part of Admit for that; none of them touches the day counts, which the primary keeps.

// record puts a call the primary admitted into the subscription's window, without a decision:
// the primary has decided already.
func (l *MemoryLimiter) record(subscription string, places int) {
	st := l.locked(subscription)
	t := l.windowNow(st)
	for range places {
		st.window.insert(t)
	}
	st.mu.Unlock()
}

// reserve holds a place in the subscription's window for a call that the primary is asked about
// next, when the window has room; otherwise it returns the per-second refusal, whose DayUsed is
// this limiter's count and may lag the primary's.
func (l *MemoryLimiter) reserve(subscription string, limits flightgraph.Limits, places int) (at int64, refusal Decision, ok bool) {
	at, refusal, ok, _ = l.reserveOrWait(subscription, limits, places, false)
	return at, refusal, ok
}

// reserveOrWait is reserve; when the window has no room while some of its places are reserved and
// not yet settled and wait is set, it also returns a channel that is closed once one of them is
// settled, when the window may have room again (see Refusals). It is nil when every place of the
// window is settled: no room will come before the oldest leaves the window.
func (l *MemoryLimiter) reserveOrWait(subscription string, limits flightgraph.Limits, places int, wait bool) (at int64, refusal Decision, ok bool, freed <-chan struct{}) {
	st := l.locked(subscription)
	defer st.mu.Unlock()
	t := l.windowNow(st)
	if n := st.window.n; n+places > limits.PerSecond {
		day := limitFloorDiv(t, limitNsPerDay)
		d := Decision{Code: flightgraph.ECodePerSecondLimit, Limits: limits, SecondUsed: n, DayUsed: st.dayUsed,
			RetryAfter: st.window.retryAfter(limits.PerSecond-places+1, t), DayReset: time.Unix(0, (day+1)*limitNsPerDay).UTC(), At: time.Unix(0, t).UTC()}
		if n > 0 {
			d.SecondReset = windowLeaves(st.window.at(0), t)
		}
		if wait && st.held > 0 {
			if st.freed == nil {
				st.freed = make(chan struct{})
			}
			freed = st.freed
		}
		return 0, d, false, freed
	}
	for range places {
		st.window.push(t)
	}
	st.held++
	return t, Decision{}, true, nil
}

// settle ends a reservation made at at: the place is dropped when the primary did not admit the
// call, and otherwise moved to now, after the primary's answer, so that the window never lets the
// call leave before the primary's does.
func (l *MemoryLimiter) settle(subscription string, at int64, places int, admitted bool) {
	st := l.locked(subscription)
	defer st.mu.Unlock()
	for range places {
		st.window.remove(at)
	}
	if admitted {
		t := l.windowNow(st)
		for range places {
			st.window.insert(t)
		}
	}
	st.held = max(st.held-1, 0)
	if st.freed != nil {
		close(st.freed)
		st.freed = nil
	}
}

// callsAndPlaces returns the calls a call that costs calls is charged (at least 1), and the places
// it takes in the per-second window: as many, but never more than the window holds.
func callsAndPlaces(calls int, limits flightgraph.Limits) (int, int) {
	calls = max(calls, 1)
	return calls, max(min(calls, limits.PerSecond), 1)
}

// waits returns how long a call of the subscription would wait for room in its window under
// limits, without counting one: 0 when there is room. It keeps nothing for a name it does not
// know, which has room.
func (l *MemoryLimiter) waits(subscription string, limits flightgraph.Limits) time.Duration {
	sh := l.shard(subscription)
	sh.mu.RLock()
	st := sh.subs[subscription]
	sh.mu.RUnlock()
	if st == nil {
		return 0
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if t := l.windowNow(st); st.window.n >= limits.PerSecond {
		return st.window.retryAfter(limits.PerSecond, t)
	}
	return 0
}

func (l *MemoryLimiter) shard(subscription string) *memoryShard {
	return &l.shards[maphash.String(l.seed, subscription)%memoryShards]
}

// state returns the subscription's state, creating it on its first call.
func (l *MemoryLimiter) state(subscription string) *memoryState {
	sh := l.shard(subscription)
	sh.mu.RLock()
	st := sh.subs[subscription]
	sh.mu.RUnlock()
	if st != nil {
		return st
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if st = sh.subs[subscription]; st == nil {
		l.sweep(sh)
		st = &memoryState{}
		sh.subs[subscription] = st
	}
	return st
}

// locked returns the subscription's state, locked; never one a sweep dropped meanwhile.
func (l *MemoryLimiter) locked(subscription string) *memoryState {
	for {
		st := l.state(subscription)
		st.mu.Lock()
		if !st.dropped {
			return st
		}
		st.mu.Unlock()
	}
}

// sweep drops, at most every memorySweepEvery, the states of sh whose window is empty and that
// hold no reservation; the caller holds sh's lock (taken before any state's, as everywhere).
func (l *MemoryLimiter) sweep(sh *memoryShard) {
	now := l.now().UnixNano()
	if now-sh.swept < int64(memorySweepEvery) {
		return
	}
	sh.swept = now
	for name, st := range sh.subs {
		st.mu.Lock()
		// A state with a reservation outstanding stays: its settle must find it.
		if st.window.prune(now - int64(time.Second)); st.window.n == 0 && st.held == 0 {
			st.dropped = true
			delete(sh.subs, name)
		}
		st.mu.Unlock()
	}
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

// forget drops every subscription's day counter, so that each starts again from DayUsage. The
// Fallback calls it when it turns to this limiter after a spell without it, during which the day
// counters missed every call the primary admitted. The windows stay: they hold the primary's
// admissions of the last second (record).
func (l *MemoryLimiter) forget() {
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.RLock()
		for _, st := range sh.subs {
			st.mu.Lock()
			st.dayKnown = false
			st.mu.Unlock()
		}
		sh.mu.RUnlock()
	}
}

// callWindow is a ring of the times (Unix nanoseconds) of the calls admitted in the last second,
// oldest first. It holds about PerSecond times at most, since a full window refuses (only the
// primary's admissions that a Fallback records can go past that); it grows by doubling rather
// than to PerSecond at once, so that a generous custom plan costs memory only if its
// subscription really calls that fast.
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

// insert adds t in time order; it is push when t is the newest, as it nearly always is.
func (w *callWindow) insert(t int64) {
	w.push(t)
	for i := w.n - 1; i > 0 && w.at(i-1) > t; i-- {
		w.times[(w.head+i)%len(w.times)] = w.at(i - 1)
		w.times[(w.head+i-1)%len(w.times)] = t
	}
}

// remove drops one time equal to t, if the window holds one, keeping the others in order.
func (w *callWindow) remove(t int64) {
	for i := w.n - 1; i >= 0; i-- {
		if w.at(i) != t {
			continue
		}
		for ; i < w.n-1; i++ {
			w.times[(w.head+i)%len(w.times)] = w.at(i + 1)
		}
		w.n--
		return
	}
}

// retryAfter is the time from now until a window holding perSecond or more calls has room.
func (w *callWindow) retryAfter(perSecond int, now int64) time.Duration {
	if perSecond <= 0 {
		return time.Second
	}
	// The window has room once all but perSecond-1 of its calls have left it.
	return windowLeaves(w.at(w.n-perSecond), now)
}

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

// fallbackStale is how long the secondary may go unused before its day counters are dropped when
// the Fallback turns to it again: they missed the calls the primary admitted meanwhile. (Its
// windows hold those calls: the Fallback records them there.)
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
// The switches both ways keep that bound: no one-second window admits more than replicas × the
// per-second limit. Each replica's secondary (when it is a MemoryLimiter) holds in its windows
// every call the replica admitted in the last second, through either limiter: the primary's
// admissions are recorded there too. So when the primary fails, the secondary goes on from the
// replica's own recent calls rather than from an empty window. When the primary answers again,
// it knows nothing of the calls the secondary admitted; for one second after the secondary's
// latest decision, until those calls have left every window, a call must also have room in the
// secondary's window, which is reserved before the primary is asked and released if the primary
// refuses. A window that holds a call the secondary admitted alone thus holds at most the limit
// of that replica's calls, and the primary's admissions of the replicas that have none; so at
// most replicas × limit. (Adding the secondary's recent calls to the Redis window instead would
// mean moving every subscription's times from this clock to Redis's, and a second of calls
// admitted before the move would still be missed: the reservation needs neither.)
//
// While the primary fails it is retried at most once a second; the other calls go straight to the
// secondary. The switch is logged at most once a minute and counted by Fallbacks (served at
// /metrics as flightgraph_limiter_fallbacks_total).
//
// When the primary is a DayCatchUp (the Redis limiter), the subscriptions and days the secondary
// admitted calls for are caught up once the primary answers again: in the background, the usage
// counts are flushed (when a UsageRecorder is attached), then each of those day counters is
// raised to the durable count (DayUsage), which includes those calls. Raising to a count, never
// adding, cannot count a call twice, however often it is retried.
type Fallback struct {
	failover
	primary, secondary Limiter
	local              localWindows // the secondary's windows, when it has them
	// Now is the clock of the retries and the staleness; time.Now unless set before first use.
	Now func() time.Time
	// flush stores the usage counts before a catch-up; set by UsageRecorder.Attach.
	flush func(ctx context.Context) error

	missedMu                        sync.Mutex
	missed                          map[SubscriptionDay]bool // the days the secondary admitted calls for, to catch up
	pending                         atomic.Bool              // missed is not empty
	catching                        atomic.Bool              // a catch-up runs
	lastCaughtUp, lastCatchUpFailed atomic.Int64             // Unix ns of the latest log lines about catch-ups

	lastSecondary atomic.Int64 // Unix ns of the secondary's latest decision, or later
}

// localWindows is the MemoryLimiter's part that lets a Fallback keep its windows holding every
// call of the replica.
type localWindows interface {
	record(subscription string, places int)
	reserve(subscription string, limits flightgraph.Limits, places int) (int64, Decision, bool)
	settle(subscription string, at int64, places int, admitted bool)
}

// NewFallback returns a Fallback over primary and secondary that logs to log; a nil log discards.
func NewFallback(primary, secondary Limiter, log *slog.Logger) *Fallback {
	local, _ := secondary.(localWindows)
	return &Fallback{primary: primary, secondary: secondary, local: local, Now: time.Now,
		failover: newFailover(log, "access: the primary limiter failed; limits are enforced per replica",
			"access: the primary limiter answers again; limits are shared again")}
}

// Admit decides with the primary and, when it fails or failed less than a second ago, with the
// secondary. An error of the primary is returned only if ctx is done, since then the caller is
// gone and the secondary's answer would not be read either.
func (f *Fallback) Admit(ctx context.Context, subscription string, limits flightgraph.Limits, calls int) (Decision, error) {
	_, places := callsAndPlaces(calls, limits)
	now := f.Now().UnixNano()
	retryAt := f.retryAt.Load()
	// While the primary is failing, one call at a time wins the right to probe it.
	if retryAt == 0 || now >= retryAt && f.retryAt.CompareAndSwap(retryAt, now+int64(fallbackProbe)) {
		// Within a second of the secondary's latest decision its window may hold calls the
		// primary never saw: the call needs room there too.
		var (
			held    int64
			holding bool
		)
		if f.local != nil && now-f.lastSecondary.Load() < int64(time.Second) {
			at, refusal, ok := f.local.reserve(subscription, limits, places)
			if !ok {
				if retryAt != 0 {
					// The probe was not made: let the next call make it.
					f.retryAt.CompareAndSwap(now+int64(fallbackProbe), retryAt)
				}
				return refusal, nil
			}
			held, holding = at, true
		}
		d, err := f.primary.Admit(ctx, subscription, limits, calls)
		switch {
		case holding:
			f.local.settle(subscription, held, places, err == nil && d.Allowed)
		case err == nil && d.Allowed && f.local != nil:
			f.local.record(subscription, places)
		}
		if err == nil {
			if retryAt != 0 && f.retryAt.CompareAndSwap(now+int64(fallbackProbe), 0) {
				f.logOnce(ctx, &f.lastRecover, now, slog.LevelInfo, f.up, "fallbacks", f.fallbacks.Load())
			}
			if f.pending.Load() && f.catching.CompareAndSwap(false, true) {
				go f.catchUp()
			}
			return d, nil
		}
		if ctx.Err() != nil {
			return d, err
		}
		f.retryAt.Store(f.Now().Add(fallbackProbe).UnixNano())
		f.logOnce(ctx, &f.lastWarn, now, slog.LevelWarn, f.down, "err", err, "fallbacks", f.fallbacks.Load())
	}
	f.fallbacks.Add(1)
	if last := f.lastSecondary.Swap(now); now-last > int64(fallbackStale) {
		if s, ok := f.secondary.(interface{ forget() }); ok {
			s.forget()
		}
	}
	d, err := f.secondary.Admit(ctx, subscription, limits, calls)
	if err == nil && d.Allowed {
		// The secondary read its clock after this call's start: the second during which calls
		// need room in its window counts from its decision, later when this goroutine waited.
		for at, last := f.Now().UnixNano(), f.lastSecondary.Load(); at > last && !f.lastSecondary.CompareAndSwap(last, at); last = f.lastSecondary.Load() {
		}
		if _, ok := f.primary.(DayCatchUp); ok {
			f.keep([]SubscriptionDay{{subscription, d.At.UTC().Format(flightgraph.DateLayout)}})
		}
	}
	return d, err
}

// keep adds days to catch up after the next call the primary answers.
func (f *Fallback) keep(days []SubscriptionDay) {
	if len(days) == 0 {
		return
	}
	f.missedMu.Lock()
	f.missed = addDays(f.missed, days)
	f.missedMu.Unlock()
	f.pending.Store(true)
}

// SubscriptionDay names a subscription's day counter: its id and a UTC day ("2026-11-22").
type SubscriptionDay struct{ Subscription, Day string }

// addDays adds days to the set, making it if it is nil.
func addDays(set map[SubscriptionDay]bool, days []SubscriptionDay) map[SubscriptionDay]bool {
	if set == nil && len(days) > 0 {
		set = make(map[SubscriptionDay]bool, len(days))
	}
	for _, d := range days {
		set[d] = true
	}
	return set
}

// DayCatchUp is a limiter whose day counters can be caught up with durable usage after another
// limiter decided in its place, or after calls were counted by other replicas (UsageRecorder).
type DayCatchUp interface {
	// CatchUp raises each day counter it holds to the day's durable usage, and returns the days
	// it could not, with the first error.
	CatchUp(ctx context.Context, days []SubscriptionDay) ([]SubscriptionDay, error)
}

var _ DayCatchUp = (*Fallback)(nil)

// CatchUp implements DayCatchUp by the primary's, at once while the primary answers, and after
// the next call it answers while it fails; the Fallback keeps the days the primary could not
// take and retries them then, so it returns none, only the first error.
func (f *Fallback) CatchUp(ctx context.Context, days []SubscriptionDay) ([]SubscriptionDay, error) {
	p, ok := f.primary.(DayCatchUp)
	if !ok || len(days) == 0 {
		return nil, nil
	}
	if f.retryAt.Load() != 0 {
		f.keep(days)
		return nil, nil
	}
	failed, err := p.CatchUp(ctx, days)
	f.keep(failed)
	return nil, err
}

// fallbackCatchUpTimeout bounds one catch-up.
const fallbackCatchUpTimeout = 30 * time.Second

// catchUp catches the primary's day counters up with the days the secondary admitted calls for;
// what it cannot is kept for the next call the primary answers. The caller set f.catching.
func (f *Fallback) catchUp() {
	defer f.catching.Store(false)
	ctx, cancel := context.WithTimeout(context.Background(), fallbackCatchUpTimeout)
	defer cancel()
	if f.flush != nil {
		// The durable counts then hold this replica's calls of the outage, for the other
		// replicas' catch-ups and seeds too; the flush raises the counters of what it stored.
		if err := f.flush(ctx); err != nil {
			f.log.Warn("access: could not store the usage counts before catching the primary limiter up", "err", err)
		}
	}
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
	f.keep(failed)
}

// CatchingUp reports whether days counted by the secondary still wait to be caught up in the
// primary, or are being caught up.
func (f *Fallback) CatchingUp() bool { return f.pending.Load() || f.catching.Load() }
