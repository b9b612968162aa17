package live_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/live"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// fixture is a seeded store with its event store and hub, and flights to change.
type fixture struct {
	db      *store.DB
	events  *store.FlightEventStore
	hub     *live.Hub
	flights []*flightgraph.Flight
}

func newFixture(t *testing.T, dialect string) *fixture {
	db := storetest.Seeded(t, dialect, os.Getenv)
	fs, _, err := store.NewFlightStore(db).FindFlights(context.Background(), flightgraph.FlightFilter{Origin: storetest.Place(t, db, "AMS"),
		Date: storetest.Now.Format(flightgraph.DateLayout), Page: flightgraph.Page{Limit: 5}})
	if err != nil || len(fs) < 5 {
		t.Fatalf("%d flights: %v", len(fs), err)
	}
	f := &fixture{db: db, events: store.NewFlightEventStore(db), flights: fs}
	f.hub = live.NewHub(f.events, nil)
	f.hub.PollEvery = 20 * time.Millisecond
	f.events.OnRecorded(f.hub.Notify)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f.hub.Start(ctx)
	return f
}

// record records a delay of i minutes to one of the flights.
func (f *fixture) record(t *testing.T, i int) *flightgraph.FlightEvent {
	e, err := f.events.RecordOperation(context.Background(), flightgraph.FlightOperation{FlightID: f.flights[i%len(f.flights)].ID,
		Kind: flightgraph.EventDelay, DelayMinutes: i % 600}, storetest.Now)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestResumeLosesNothing: a subscriber dropped at random and resumed from the last position it
// received gets every event once, in order, over many changes recorded meanwhile; a position
// older than the retention is STREAM_410.000; a malformed one INSP_400.002.
func TestResumeLosesNothing(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		f := newFixture(t, dialect)
		const changes, drops = 300, 10
		var want []int64
		done := make(chan struct{})
		// The first subscription starts live: it is open before the first change.
		ctx, cancel := context.WithCancel(context.Background())
		first, _, err := f.hub.Subscribe(ctx, live.Filter{}, 0)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			defer close(done)
			for i := range changes {
				want = append(want, f.record(t, i).Position)
				if i%30 == 0 {
					time.Sleep(time.Millisecond)
				}
			}
		}()
		var got []int64
		var after int64
		for drop := 0; ; drop++ {
			ch := first
			if drop > 0 {
				ctx, cancel = context.WithCancel(context.Background())
				if ch, _, err = f.hub.Subscribe(ctx, live.Filter{}, after); err != nil {
					t.Fatal(err)
				}
			}
			n := rand.IntN(changes / drops)
			for e := range ch {
				if e.End != nil {
					t.Fatalf("ended: %v", e.End)
				}
				got = append(got, e.Position)
				after = e.Position
				if n--; n <= 0 && drop < drops {
					break
				}
				if len(got) == changes {
					break
				}
			}
			cancel()
			if len(got) == changes {
				break
			}
		}
		<-done
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("event %d: position %d, want %d (lost or duplicated across %d drops)", i, got[i], want[i], drops)
			}
		}
		if _, _, err := f.hub.Subscribe(context.Background(), live.Filter{}, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := f.events.DeleteEventsBefore(context.Background(), storetest.Now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := f.hub.Subscribe(context.Background(), live.Filter{}, want[10]); flightgraph.ErrorCode(err) != flightgraph.ECodePositionExpired {
			t.Fatalf("a swept position: %v, want %s", err, flightgraph.ECodePositionExpired)
		}
		if _, err := flightgraph.ParsePosition("after", "12x"); flightgraph.ErrorCode(err) != flightgraph.ECodeBadFormat {
			t.Fatalf("a malformed position: %v", err)
		}
	})
}

// TestSlowSubscriberIsCut: a subscriber that reads nothing is ended once its buffer is full, with
// STREAM_409.000 and the last position it received, however late it reads; another subscriber
// hears every event all the same, and the hub never waits.
func TestSlowSubscriberIsCut(t *testing.T) {
	f := newFixture(t, store.SQLite)
	f.hub.Buffer = 4
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	slow, _, err := f.hub.Subscribe(ctx, live.Filter{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.hub.Buffer = 1000
	fast, _, err := f.hub.Subscribe(ctx, live.Filter{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	const n = 40
	for i := range n {
		f.record(t, i)
	}
	for i := range n {
		select {
		case e := <-fast:
			if e.End != nil {
				t.Fatalf("the fast subscriber ended at %d: %v", i, e.End)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("the fast subscriber heard %d of %d events", i, n)
		}
	}
	// A reader slower than a second still hears why it was cut.
	time.Sleep(1500 * time.Millisecond)
	var last *flightgraph.FlightEvent
	for e := range slow {
		last = e
	}
	if last == nil || flightgraph.ErrorCode(last.End) != flightgraph.ECodeResume {
		t.Fatalf("the slow subscriber's last value: %+v, want the end %s", last, flightgraph.ECodeResume)
	}
}

// TestHubFansOutByFilter: subscriptions by flight ids (many ids, most of flights that never
// change), by a departures and an arrivals board, and of all events each hear exactly the events
// their filter selects, in order; once half of them are closed, the hub counts only the others,
// and those still hear theirs.
func TestHubFansOutByFilter(t *testing.T) {
	f := newFixture(t, store.SQLite)
	filters := []live.Filter{{}, {Departing: "AMS"}, {Departing: "JFK"}}
	for i := range f.flights {
		ids := []string{f.flights[i].ID}
		for j := range live.MaxFlightIDs - 1 {
			ids = append(ids, fmt.Sprintf("20261122+ZZ+%04d", j))
		}
		filters = append(filters, live.Filter{FlightIDs: ids}, live.Filter{FlightIDs: []string{f.flights[i].ID, f.flights[(i+1)%len(f.flights)].ID}})
	}
	// An event before the subscriptions, for the airports of its flight; heard by a probe, so
	// that the hub has fanned it out before the others subscribe.
	probeCtx, probeEnd := context.WithCancel(context.Background())
	probe, _, err := f.hub.Subscribe(probeCtx, live.Filter{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	ev := f.record(t, 0)
	if e := <-probe; e.Position != ev.Position {
		t.Fatalf("the probe heard %+v", e)
	}
	probeEnd()
	dests := strings.Fields(ev.Destinations)
	filters = append(filters, live.Filter{Arriving: dests[0]}, live.Filter{Arriving: "XXX"})
	type sub struct {
		filter live.Filter
		ch     <-chan *flightgraph.FlightEvent
		cancel func()
	}
	var subs []sub
	for range 3 {
		for _, fl := range filters {
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel)
			ch, _, err := f.hub.Subscribe(ctx, fl, 0)
			if err != nil {
				t.Fatal(err)
			}
			subs = append(subs, sub{fl, ch, cancel})
		}
	}
	round := func(t *testing.T, subs []sub, from int) {
		t.Helper()
		var evs []*flightgraph.FlightEvent
		for i := from; i < from+15; i++ {
			evs = append(evs, f.record(t, i))
		}
		for _, s := range subs {
			for _, e := range evs {
				if !matches(s.filter, e) {
					continue
				}
				select {
				case got := <-s.ch:
					if got.Position != e.Position {
						t.Fatalf("filter %v: position %d, want %d", s.filter.FlightIDs[:min(2, len(s.filter.FlightIDs))], got.Position, e.Position)
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("filter %+v: no event %d", s.filter.Departing+s.filter.Arriving, e.Position)
				}
			}
			select {
			case got := <-s.ch:
				t.Fatalf("filter %+v heard event %d of flight %s, which it does not select", s.filter.Departing+s.filter.Arriving, got.Position, got.FlightID)
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	round(t, subs, 1)
	for _, s := range subs[len(subs)/2:] {
		s.cancel()
	}
	subs = subs[:len(subs)/2]
	for deadline := time.Now().Add(5 * time.Second); f.hub.Open() != len(subs); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d subscriptions open, want %d", f.hub.Open(), len(subs))
		}
	}
	round(t, subs, 20)
}

// matches is what a filter selects, as the hub's documentation says it.
func matches(f live.Filter, e *flightgraph.FlightEvent) bool {
	switch {
	case len(f.FlightIDs) > 0:
		return slices.Contains(f.FlightIDs, e.FlightID)
	case f.Departing != "":
		return e.Departs(f.Departing)
	case f.Arriving != "":
		return e.Arrives(f.Arriving)
	}
	return true
}
