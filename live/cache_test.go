package live_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/live"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// settled waits until the hub has given its watchers every event it was told of.
func settled(t *testing.T, h *live.Hub) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !h.Settled(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the hub did not settle in 5 s")
		}
	}
}

var public = flightgraph.CacheStatus

// bound is boundedCache's.
const bound = 64 << 10

// boundedCache is a cache of bound bytes on a settled hub, with a clock the test moves (now).
func boundedCache(t *testing.T) (c *live.Cache, now *atomic.Int64, clock func() time.Time) {
	t.Helper()
	f := newFixture(t, "sqlite")
	now = &atomic.Int64{}
	now.Store(storetest.Now.UnixNano())
	clock = func() time.Time { return time.Unix(0, now.Load()) }
	c = live.NewCache(f.hub, bound, clock)
	settled(t, f.hub)
	return c, now, clock
}

func kept(body string) *live.Kept {
	return &live.Kept{Body: []byte(body), Policy: public, Stored: storetest.Now}
}

// TestCacheEvictsByEvent: an event evicts, at once, the answers tagged with its flight, its
// airports' boards or all flights, and leaves the others; between the write and the hub's read
// of it nothing is served from memory; an answer begun before an event it shows is not kept.
func TestCacheEvictsByEvent(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		f := newFixture(t, dialect)
		c := live.NewCache(f.hub, 1<<20, func() time.Time { return storetest.Now })
		settled(t, f.hub)
		flight := f.flights[0]
		byTag := map[string]string{
			"flight": flightgraph.FlightTag(flight.ID),
			"board":  flightgraph.DeparturesTag("AMS"),
			"all":    flightgraph.AllFlightsTag,
			"other":  flightgraph.FlightTag("20991231+XX+1"),
		}
		for name, tag := range byTag {
			if !c.Put(c.Begin(), live.KeyOf(name), kept(name), []string{tag}) {
				t.Fatalf("%s not kept", name)
			}
			if _, ok := c.Get(live.KeyOf(name)); !ok {
				t.Fatalf("%s: a miss right after Put", name)
			}
		}
		begun := c.Begin()
		f.record(t, 0)
		// Told, not yet read by the hub (or read already): never the answer as it was.
		if k, ok := c.Get(live.KeyOf("flight")); ok {
			t.Fatalf("served %s right after the change was written", k.Body)
		}
		settled(t, f.hub)
		for name := range byTag {
			_, ok := c.Get(live.KeyOf(name))
			if want := name == "other"; ok != want {
				t.Errorf("%s kept after the event: %v, want %v", name, ok, want)
			}
		}
		if c.Put(begun, live.KeyOf("late"), kept("late"), []string{flightgraph.FlightTag(flight.ID)}) {
			t.Error("an answer begun before the event that changed its flight was kept")
		}
		if !c.Put(begun, live.KeyOf("late-other"), kept("late"), []string{flightgraph.FlightTag("20991231+XX+2")}) {
			t.Error("an answer begun before an event that shows nothing of it was refused")
		}
	})
}

// TestCacheBounds: the bytes kept stay within the bound, the least recently used going first; an
// answer over a sixteenth of it, a private one and one of max-age 0 are not kept; a kept answer
// is served until its max-age and not after.
func TestCacheBounds(t *testing.T) {
	c, now, clock := boundedCache(t)
	body := string(make([]byte, 1000))
	for i := range 1000 {
		c.Put(c.Begin(), live.KeyOf(fmt.Sprint(i)), &live.Kept{Body: []byte(body), Policy: public, Stored: clock()},
			[]string{flightgraph.FlightTag(fmt.Sprint(i))})
		if st := c.Stats(); st.Bytes > bound {
			t.Fatalf("after %d answers: %d bytes kept, over the bound of %d", i+1, st.Bytes, bound)
		}
	}
	st := c.Stats()
	if st.Entries < 40 || st.Entries > 64 {
		t.Errorf("%d answers of 1,000 bytes kept in %d bytes", st.Entries, bound)
	}
	if _, ok := c.Get(live.KeyOf("999")); !ok {
		t.Error("the most recent answer was evicted")
	}
	if _, ok := c.Get(live.KeyOf("0")); ok {
		t.Error("the least recently used answer was kept")
	}
	for name, k := range map[string]*live.Kept{
		"large":    {Body: make([]byte, bound/16), Policy: public},
		"private":  {Body: []byte("x"), Policy: public.AsPrivate()},
		"no-store": {Body: []byte("x"), Policy: flightgraph.NoStore},
	} {
		if c.Put(c.Begin(), live.KeyOf(name), k, nil) {
			t.Errorf("%s answer kept", name)
		}
	}
	c.Put(c.Begin(), live.KeyOf("fresh"), &live.Kept{Body: []byte("x"), Policy: public, Stored: clock()}, nil)
	now.Add(int64(time.Duration(public.MaxAge)*time.Second) - 1)
	if _, ok := c.Get(live.KeyOf("fresh")); !ok {
		t.Error("an answer was not served within its max-age")
	}
	now.Add(1)
	if _, ok := c.Get(live.KeyOf("fresh")); ok {
		t.Error("an answer was served past its max-age")
	}
}

// TestCacheBoundsQuotes: quotes (kept for their second, Until) hold at most a quarter of the
// cache: many large ones push out the oldest quotes, never the answers fresh for minutes; a
// quote past its second is dropped at the next quote's Put, not left to hold its bytes; a quote
// finished after its second is not kept.
func TestCacheBoundsQuotes(t *testing.T) {
	c, now, clock := boundedCache(t)
	for i := range 30 {
		c.Put(c.Begin(), live.KeyOf("public", fmt.Sprint(i)), &live.Kept{Body: make([]byte, 1000), Policy: public, Stored: clock()}, nil)
	}
	second := func() time.Time { return clock().Truncate(time.Second).Add(time.Second) }
	for i := range 50 {
		now.Add(int64(time.Millisecond))
		q := &live.Kept{Body: make([]byte, bound/16-512), Policy: public.AsPrivate(), Stored: clock(), Until: second()}
		if !c.Put(c.Begin(), live.KeyOf("quote", fmt.Sprint(i)), q, nil) {
			t.Fatalf("quote %d not kept", i)
		}
		if st := c.Stats(); st.QuoteBytes > bound/4 || st.Bytes > bound {
			t.Fatalf("after %d quotes: %+v, quotes over a quarter of %d", i+1, st, bound)
		}
	}
	for i := range 30 {
		if _, ok := c.Get(live.KeyOf("public", fmt.Sprint(i))); !ok {
			t.Fatalf("public answer %d was pushed out by quotes (%+v)", i, c.Stats())
		}
	}
	if _, ok := c.Get(live.KeyOf("quote", "49")); !ok {
		t.Error("the newest quote is not served in its second")
	}
	if _, ok := c.Get(live.KeyOf("quote", "0")); ok {
		t.Error("the oldest quote is still kept past the quotes' share")
	}
	late := &live.Kept{Body: []byte("x"), Policy: public.AsPrivate(), Stored: clock(), Until: c.QuoteUntil()}
	now.Store(second().UnixNano())
	if c.Put(c.Begin(), live.KeyOf("quote", "late"), late, nil) {
		t.Error("a quote begun in the last second was kept in this one")
	}
	c.Put(c.Begin(), live.KeyOf("quote", "next"), &live.Kept{Body: []byte("x"), Policy: public.AsPrivate(), Stored: clock(), Until: second()}, nil)
	if st := c.Stats(); st.Quotes != 1 {
		t.Errorf("a second later, %d quotes kept (%d bytes), want the new one alone", st.Quotes, st.QuoteBytes)
	}
}

// TestCacheKeepsNothingBegunBeforeTheHubRuns: an answer begun before the hub has read its
// position (a replica starting) is not kept, since the hub will not tell what changed before
// then.
func TestCacheKeepsNothingBegunBeforeTheHubRuns(t *testing.T) {
	f := newFixture(t, "sqlite")
	hub := live.NewHub(f.events, nil) // not started
	c := live.NewCache(hub, 1<<20, func() time.Time { return storetest.Now })
	early := c.Begin()
	hub.Start(t.Context())
	settled(t, hub)
	if c.Put(early, live.KeyOf("early"), kept("early"), []string{flightgraph.FlightTag(f.flights[0].ID)}) {
		t.Fatal("an answer begun before the hub ran was kept")
	}
	if !c.Put(c.Begin(), live.KeyOf("later"), kept("later"), []string{flightgraph.FlightTag(f.flights[0].ID)}) {
		t.Fatal("an answer begun once the hub ran was refused")
	}
}
