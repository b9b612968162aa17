package access

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/flightgraph/flightgraph"
)

// UsageRecorder counts admitted calls per subscription and day in memory and adds them to the
// store in one transaction every few seconds, so that counting costs a call no database write. A
// crash loses at most one interval's counts; a graceful stop flushes them.
type UsageRecorder struct {
	Store flightgraph.AccessStore
	Log   *slog.Logger

	mu      sync.Mutex
	pending map[string]map[string]int64 // day → subscription → calls not yet stored

	// limiter's day counters are raised after each flush; see Attach.
	limiter  DayCatchUp
	unraised map[SubscriptionDay]bool // stored days whose counters could not be raised yet
}

// Attach ties the recorder to the limiter that reads its DayUsage, when the limiter keeps day
// counters of its own (a DayCatchUp: Redis, or a Fallback over it).
//
// After each flush the limiter's counters of the days flushed are raised to their durable
// counts plus this process's pending ones (DayUsage). That is what makes a day counter exact
// again after Redis lost it: the replica that seeds it from DayUsage sees only the counts stored
// and its own pending ones, not the other replicas' pending ones. Each of those is stored by its
// replica's next flush, and raised to right after. A raise never counts a call twice: it sets
// the counter to a count of distinct admitted calls (the stored ones and this process's pending
// ones are disjoint), and only if that is higher; seeds are such counts too, and an increment
// is one more admitted call, so the counter never exceeds the calls admitted. And once every
// replica has flushed the calls it admitted before some instant, the last raise sets the counter
// to at least the number of those calls. So when the calls stop and each replica has flushed,
// the counter is exact; under traffic it lags by at most the calls of one flush interval.
//
// A Fallback also flushes before it catches up after an outage, so that the calls it admitted
// alone count in the durable usage the other replicas read.
func (u *UsageRecorder) Attach(l Limiter) {
	c, ok := l.(DayCatchUp)
	if !ok {
		return
	}
	u.limiter = c
	if f, ok := l.(*Fallback); ok {
		f.flush = u.Flush
	}
}

// Add counts an admitted call that cost calls.
func (u *UsageRecorder) Add(subscription, day string, calls int) {
	u.mu.Lock()
	u.addLocked(day, subscription, int64(max(calls, 1)))
	u.mu.Unlock()
}

func (u *UsageRecorder) addLocked(day, subscription string, n int64) {
	if u.pending == nil {
		u.pending = map[string]map[string]int64{}
	}
	if u.pending[day] == nil {
		u.pending[day] = map[string]int64{}
	}
	u.pending[day][subscription] += n
}

// Flush adds the pending counts to the store, a day per transaction; the days that fail stay
// pending for the next flush.
func (u *UsageRecorder) Flush(ctx context.Context) error {
	u.mu.Lock()
	batch := u.pending
	u.pending = nil
	u.mu.Unlock()
	var (
		first  error
		stored []SubscriptionDay
	)
	for day, calls := range batch {
		err := u.Store.AddUsage(ctx, day, calls)
		if err == nil {
			for sub := range calls {
				stored = append(stored, SubscriptionDay{sub, day})
			}
			continue
		}
		if first == nil {
			first = err
		}
		u.mu.Lock()
		for sub, n := range calls {
			u.addLocked(day, sub, n)
		}
		u.mu.Unlock()
	}
	if u.limiter != nil {
		u.raise(ctx, stored)
	}
	return first
}

// raise raises the limiter's counters of the days stored, and of those it could not raise
// before, to their durable counts; the ones it cannot raise now wait for the next flush.
func (u *UsageRecorder) raise(ctx context.Context, stored []SubscriptionDay) {
	u.mu.Lock()
	days := stored
	for d := range u.unraised {
		days = append(days, d)
	}
	u.unraised = nil
	u.mu.Unlock()
	if len(days) == 0 {
		return
	}
	failed, err := u.limiter.CatchUp(ctx, days)
	if len(failed) == 0 {
		return
	}
	u.mu.Lock()
	u.unraised = addDays(u.unraised, failed)
	u.mu.Unlock()
	if u.Log != nil {
		u.Log.Warn("the limiter's day counters are not raised to the stored usage yet; will retry", "err", err, "days", len(failed))
	}
}

// Run flushes every interval until ctx is done, then once more.
func (u *UsageRecorder) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			if err := u.Flush(fctx); err != nil && u.Log != nil {
				u.Log.Error("usage counts lost at shutdown", "err", err)
			}
			return
		case <-t.C:
			if err := u.Flush(ctx); err != nil && u.Log != nil {
				u.Log.Warn("usage counts not stored yet; will retry", "err", err)
			}
		}
	}
}

// Today returns each subscription's calls on a day: stored plus pending in this process.
func (u *UsageRecorder) Today(ctx context.Context, subscriptions []string, day string) ([]int64, error) {
	stored, err := u.Store.UsageOn(ctx, subscriptions, day)
	if err != nil {
		return nil, err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	for i, s := range subscriptions {
		stored[i] += u.pending[day][s]
	}
	return stored, nil
}

// History returns each subscription's calls on each of the days UTC days that end on last's,
// oldest first: stored plus pending in this process, 0 on a day without calls. It reads the
// stored ones of every subscription in one query.
func (u *UsageRecorder) History(ctx context.Context, subscriptions []string, last time.Time, days int) ([][]*flightgraph.DailyUsage, error) {
	if days < 1 {
		return nil, fmt.Errorf("access: a usage history of %d days", days)
	}
	last = last.UTC()
	dates := make([]string, days)
	for i := range dates {
		dates[i] = last.AddDate(0, 0, i-days+1).Format(flightgraph.DateLayout)
	}
	stored, err := u.Store.UsageBetween(ctx, subscriptions, dates[0], dates[days-1])
	if err != nil {
		return nil, err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make([][]*flightgraph.DailyUsage, len(subscriptions))
	for i, sub := range subscriptions {
		calls := make(map[string]int64, len(stored[i]))
		for _, row := range stored[i] {
			calls[row.Day] = row.Calls
		}
		h := make([]*flightgraph.DailyUsage, days)
		for j, d := range dates {
			h[j] = &flightgraph.DailyUsage{Day: d, Calls: int(calls[d] + u.pending[d][sub])}
		}
		out[i] = h
	}
	return out, nil
}

// DayUsage is the limiters' source of a day's count after a restart.
func (u *UsageRecorder) DayUsage(ctx context.Context, subscription, day string) (int64, error) {
	n, err := u.Today(ctx, []string{subscription}, day)
	if err != nil {
		return 0, err
	}
	return n[0], nil
}
