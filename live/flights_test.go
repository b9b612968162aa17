package live_test

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/live"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// countedFlights is the store's flights, counting the reads by id that reach it; during, when
// set, runs inside each such read after the store answered and before the answer is returned.
type countedFlights struct {
	flightgraph.FlightStore
	reads  atomic.Int64
	during func()
	fail   error
}

func (s *countedFlights) FlightsWithLegs(ctx context.Context, ids []string) ([]*flightgraph.Flight, [][]*flightgraph.FlightLeg, error) {
	s.reads.Add(1)
	if s.fail != nil {
		return nil, nil, s.fail
	}
	fs, ls, err := s.FlightStore.FlightsWithLegs(ctx, ids)
	if s.during != nil {
		s.during()
	}
	return fs, ls, err
}

// flightCacheOn is a flight cache of maxBytes over f's store, which counts its reads (counted),
// on f's settled hub, with a clock the test moves (now, from storetest.Now).
func flightCacheOn(t *testing.T, f *fixture, maxBytes int) (flights flightgraph.FlightStore, counted *countedFlights, c *live.Cache, now *atomic.Int64) {
	t.Helper()
	now = &atomic.Int64{}
	now.Store(storetest.Now.UnixNano())
	counted = &countedFlights{FlightStore: store.NewFlightStore(f.db)}
	c = live.NewCache(f.hub, maxBytes, func() time.Time { return time.Unix(0, now.Load()) })
	settled(t, f.hub)
	return live.CacheFlights(counted, c), counted, c, now
}

// delayOf is the departure delay of a flight's first leg as read through flights.
func delayOf(t *testing.T, flights flightgraph.FlightStore, id string) int {
	t.Helper()
	fs, ls, err := flights.FlightsWithLegs(context.Background(), []string{id})
	if err != nil || fs[0] == nil || len(ls[0]) == 0 {
		t.Fatalf("%s: %v %v", id, fs, err)
	}
	return ls[0][0].DepartureDelay
}

// TestFlightCache: a flight read by id is read from the store once and then from memory, by every
// method that reads by id, as a copy of its own; an event of the flight evicts it at once (the
// next read shows the change), and leaves the other flights kept; a flight read while an event of
// it was being applied is not kept; a flight the store does not hold and a failed read are not
// kept; and nothing is served while the hub has an event to apply.
func TestFlightCache(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		f := newFixture(t, dialect)
		flights, counted, _, _ := flightCacheOn(t, f, 1<<20)
		reads := &counted.reads
		a, b := f.flights[0].ID, f.flights[1].ID
		ctx := context.Background()

		fs, ls, err := flights.FlightsWithLegs(ctx, []string{a, "20991231+XX+1", b})
		if err != nil || fs[0] == nil || fs[0].ID != a || fs[1] != nil || fs[2] == nil || fs[2].ID != b || len(ls[0]) == 0 || ls[1] != nil {
			t.Fatalf("first read: %v %v %v", fs, ls, err)
		}
		if reads.Load() != 1 {
			t.Fatalf("%d reads of the store for one call", reads.Load())
		}
		// Kept: every read by id of a and b is answered from memory, the same as the store's.
		want := *fs[0]
		byID, err := flights.FlightsByIDs(ctx, []string{b, a})
		legs, err2 := flights.LegsByFlightIDs(ctx, []string{a})
		if err != nil || err2 != nil || byID[1] == nil || *byID[1] != want || byID[0].ID != b || len(legs[0]) != len(ls[0]) || *legs[0][0] != *ls[0][0] {
			t.Fatalf("from memory: %v %v %v %v", byID, legs, err, err2)
		}
		if reads.Load() != 1 {
			t.Fatalf("%d reads of the store: kept flights were read again", reads.Load())
		}
		// A copy of its own: what a caller does to it reaches nobody else.
		byID[1].OriginCode, legs[0][0].DepartureGate = "XXX", "Z99"
		again, againLegs, _ := flights.FlightsWithLegs(ctx, []string{a})
		if *again[0] != want || againLegs[0][0].DepartureGate != ls[0][0].DepartureGate {
			t.Fatalf("a caller's change reached the kept flight: %+v %+v", again[0], againLegs[0][0])
		}
		// Not kept: the flight the store does not hold is asked for again.
		flights.FlightsByIDs(ctx, []string{"20991231+XX+1"})
		if reads.Load() != 2 {
			t.Fatalf("%d reads: a flight the store does not hold was kept", reads.Load())
		}

		// An event of a evicts it, not b: the next read of a shows the change.
		before := delayOf(t, flights, a)
		_, err = f.events.RecordOperation(ctx, flightgraph.FlightOperation{FlightID: a, Kind: flightgraph.EventDelay, DelayMinutes: before + 41}, storetest.Now)
		if err != nil {
			t.Fatal(err)
		}
		if got := delayOf(t, flights, a); got != before+41 {
			t.Fatalf("delay %d after the change, want %d", got, before+41)
		}
		// Once the hub has applied the event, a is kept again after one more read (none if the
		// read above came after the hub applied it), and b was kept throughout.
		settled(t, f.hub)
		delayOf(t, flights, a)
		n := reads.Load()
		delayOf(t, flights, a)
		delayOf(t, flights, b)
		if reads.Load() != n {
			t.Fatalf("%d reads after the event was applied, want 0 (a kept again once read, b kept throughout)", reads.Load()-n)
		}

		// Told of an event, not yet applied: nothing from memory.
		f.hub.Notify(1 << 40)
		n = reads.Load()
		delayOf(t, flights, b)
		if reads.Load() != n+1 {
			t.Fatal("a kept flight was served while the hub had an event to apply")
		}
	})
}

// TestFlightCacheKeepsNoReadRacingAnEvent: a read that the store answered before an event of
// the flight was written, and that returns after the hub applied it, is not kept; the next read
// asks the store and shows the change.
func TestFlightCacheKeepsNoReadRacingAnEvent(t *testing.T) {
	f := newFixture(t, "sqlite")
	id := f.flights[2].ID
	flights, counted, _, _ := flightCacheOn(t, f, 1<<20)
	counted.during = func() {
		counted.during = nil
		if _, err := f.events.RecordOperation(context.Background(), flightgraph.FlightOperation{FlightID: id, Kind: flightgraph.EventDelay, DelayMinutes: 123}, storetest.Now); err != nil {
			t.Error(err)
		}
		settled(t, f.hub)
	}
	if got := delayOf(t, flights, id); got == 123 {
		t.Fatal("the racing read shows the change it raced")
	}
	if got := delayOf(t, flights, id); got != 123 {
		t.Fatalf("delay %d after the race: the flight as it was before the event was kept", got)
	}
	if counted.reads.Load() != 2 {
		t.Fatalf("%d reads, want 2", counted.reads.Load())
	}
}

// TestFlightCacheKeepsNoFailure: a failed read is the caller's error and keeps nothing.
func TestFlightCacheKeepsNoFailure(t *testing.T) {
	f := newFixture(t, "sqlite")
	flights, counted, c, _ := flightCacheOn(t, f, 1<<20)
	boom := errors.New("boom")
	counted.fail = boom
	if _, err := flights.FlightsByIDs(context.Background(), []string{f.flights[0].ID}); !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	counted.fail = nil
	delayOf(t, flights, f.flights[0].ID)
	if st := c.Stats(); counted.reads.Load() != 2 || st.Entries != 1 {
		t.Fatalf("%d reads, %+v", counted.reads.Load(), st)
	}
}

// TestFlightCacheBounds: the kept flights stay within the cache's bytes however many are read,
// each counted at what it holds, and expire with flightgraph.CacheStatus's max-age.
func TestFlightCacheBounds(t *testing.T) {
	f := newFixture(t, "sqlite")
	flights, counted, c, now := flightCacheOn(t, f, bound)
	reads := &counted.reads
	all, _, err := store.NewFlightStore(f.db).FindFlights(context.Background(), flightgraph.FlightFilter{Page: flightgraph.Page{Limit: 500}})
	if err != nil || len(all) < 200 {
		t.Fatalf("%d flights: %v", len(all), err)
	}
	for _, fl := range all {
		delayOf(t, flights, fl.ID)
	}
	st := c.Stats()
	perFlight := st.Bytes / max(st.Entries, 1)
	t.Logf("%d flights read, %d kept in %d bytes (%d each)", len(all), st.Entries, st.Bytes, perFlight)
	if st.Bytes > st.MaxBytes || st.Entries >= len(all) || perFlight < 600 {
		t.Fatalf("stats %+v over %d flights", st, len(all))
	}
	last := all[len(all)-1].ID
	n := reads.Load()
	delayOf(t, flights, last)
	if reads.Load() != n {
		t.Fatal("the last flight read is not kept")
	}
	now.Add(int64(flightgraph.CacheStatus.MaxAge) * int64(time.Second))
	delayOf(t, flights, last)
	if reads.Load() != n+1 {
		t.Fatal("a flight was served past its max-age")
	}
}

// TestHubIsNotSettledWhileWatchersApply: an event the hub finds by reading (another replica's,
// whose notification has not come) makes the hub unsettled while its watchers apply it, so that
// neither cache serves, nor keeps what is begun, between the flight cache's eviction and the
// response cache's.
func TestHubIsNotSettledWhileWatchersApply(t *testing.T) {
	f := newFixture(t, "sqlite")
	other := live.NewHub(f.events, nil) // not told of f's events: it reads them every PollEvery
	other.PollEvery = 10 * time.Millisecond
	var during []bool
	seen := make(chan struct{}, 1)
	other.Watch(func([]*flightgraph.FlightEvent) {
		during = append(during, other.Settled())
		select {
		case seen <- struct{}{}:
		default:
		}
	})
	other.Start(t.Context())
	settled(t, other)
	f.record(t, 7)
	select {
	case <-seen:
	case <-time.After(5 * time.Second):
		t.Fatal("the event was not read in 5 s")
	}
	settled(t, other)
	if len(during) == 0 || during[0] {
		t.Fatalf("settled while the watchers applied a polled event: %v", during)
	}
}

// TestFlightCacheCountsWhatItHolds: what the flight cache counts against its bound is at least
// what its kept flights hold on the heap (measured after a collection), within a tenth.
func TestFlightCacheCountsWhatItHolds(t *testing.T) {
	f := newFixture(t, "sqlite")
	all, _, err := store.NewFlightStore(f.db).FindFlights(context.Background(), flightgraph.FlightFilter{Page: flightgraph.Page{Limit: 3000}})
	if err != nil || len(all) < 3000 {
		t.Fatalf("%d flights: %v", len(all), err)
	}
	ids := make([]string, len(all))
	for i, fl := range all {
		ids[i] = fl.ID
	}
	all = nil
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	flights, _, c, _ := flightCacheOn(t, f, 64<<20)
	before := heap()
	for _, id := range ids {
		if _, err := flights.FlightsByIDs(context.Background(), []string{id}); err != nil {
			t.Fatal(err)
		}
	}
	after := heap()
	runtime.KeepAlive(flights)
	st := c.Stats()
	held := int(after) - int(before)
	t.Logf("%d flights kept: counted %d bytes (%d each), the heap grew by %d (%d each)", st.Entries, st.Bytes, st.Bytes/st.Entries, held, held/st.Entries)
	if st.Entries != len(ids) || float64(st.Bytes) < 0.9*float64(held) {
		t.Fatalf("counted %d bytes of %d entries, while they hold %d", st.Bytes, st.Entries, held)
	}
}
