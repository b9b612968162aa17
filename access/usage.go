package access

import (
	"context"
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
}

// Add counts one admitted call.
func (u *UsageRecorder) Add(subscription, day string) {
	u.mu.Lock()
	u.addLocked(day, subscription, 1)
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
	var first error
	for day, calls := range batch {
		err := u.Store.AddUsage(ctx, day, calls)
		if err == nil {
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
	return first
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

// DayUsage is the limiters' source of a day's count after a restart.
func (u *UsageRecorder) DayUsage(ctx context.Context, subscription, day string) (int64, error) {
	n, err := u.Today(ctx, []string{subscription}, day)
	if err != nil {
		return 0, err
	}
	return n[0], nil
}
