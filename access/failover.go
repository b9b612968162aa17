package access

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"
)

// fallbackProbe is how long a failover sends every call to its in-process stand-in after the
// shared store failed before it tries the store again, so that an outage in which each try waits
// for a dial timeout does not add that wait to every call.
const fallbackProbe = time.Second

// fallbackLogEvery spaces a failover's log lines, so that an outage logs once a minute rather
// than once a call.
const fallbackLogEvery = time.Minute

// failover is what the Fallback limiter and the LockoutFallback share: the decision whether to ask
// the shared store (Redis) or, while it fails, the in-process stand-in. A failed store is retried
// at most once a second, by one call at a time; its failure and its recovery are logged at most
// once a minute each, with the messages down and up; the calls the stand-in served are counted.
type failover struct {
	log      *slog.Logger
	down, up string

	fallbacks   atomic.Int64
	retryAt     atomic.Int64 // Unix ns before which the store is not tried; 0 while it is healthy
	lastWarn    atomic.Int64 // Unix ns of the latest log line about the store failing
	lastRecover atomic.Int64 // Unix ns of the latest log line about the store recovering
}

func newFailover(log *slog.Logger, down, up string) failover {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return failover{log: log, down: down, up: up}
}

// withPrimary asks the shared store through primary unless it failed less than fallbackProbe ago
// (by the clock now) and this call did not win the right to probe it. It reports whether the
// store answered; when it did not, the caller asks the stand-in, which is counted here. The
// store's error is returned only when ctx is done, since then the caller is gone and the
// stand-in's answer would not be read either.
func withPrimary[T any](ctx context.Context, f *failover, now func() time.Time, primary func() (T, error)) (T, bool, error) {
	t := now().UnixNano()
	retryAt := f.retryAt.Load()
	if retryAt == 0 || t >= retryAt && f.retryAt.CompareAndSwap(retryAt, t+int64(fallbackProbe)) {
		v, err := primary()
		if err == nil {
			if retryAt != 0 && f.retryAt.CompareAndSwap(t+int64(fallbackProbe), 0) {
				f.logOnce(ctx, &f.lastRecover, t, slog.LevelInfo, f.up, "fallbacks", f.fallbacks.Load())
			}
			return v, true, nil
		}
		if ctx.Err() != nil {
			return v, false, err
		}
		f.retryAt.Store(now().Add(fallbackProbe).UnixNano())
		f.logOnce(ctx, &f.lastWarn, t, slog.LevelWarn, f.down, "err", err, "fallbacks", f.fallbacks.Load())
	}
	f.fallbacks.Add(1)
	var zero T
	return zero, false, nil
}

// healthy reports whether the store is not known to be failing.
func (f *failover) healthy() bool { return f.retryAt.Load() == 0 }

// Fallbacks returns how many calls the stand-in served.
func (f *failover) Fallbacks() int64 { return f.fallbacks.Load() }

// logOnce logs msg unless last says it was logged less than fallbackLogEvery ago.
func (f *failover) logOnce(ctx context.Context, last *atomic.Int64, now int64, level slog.Level, msg string, args ...any) {
	prev := last.Load()
	if prev != 0 && now-prev < int64(fallbackLogEvery) || !last.CompareAndSwap(prev, now) {
		return
	}
	f.log.Log(ctx, level, msg, args...)
}
