package access

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// TestRedisLeaseEndsWithItsLife holds that a lease admits no call once its life is over on the
// lease clock, even before its timer has settled it.
func TestRedisLeaseEndsWithItsLife(t *testing.T) {
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
