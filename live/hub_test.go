package live_test

import (
	"context"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/live"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// fixture is a seeded store with its event store and hub, and flights to change.
type fixture struct {
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
	f := &fixture{events: store.NewFlightEventStore(db), flights: fs}
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
// STREAM_409.000 and the last position it received; another subscriber hears every event all the
// same, and the hub never waits.
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
	var last *flightgraph.FlightEvent
	for e := range slow {
		last = e
	}
	if last == nil || flightgraph.ErrorCode(last.End) != flightgraph.ECodeResume {
		t.Fatalf("the slow subscriber's last value: %+v, want the end %s", last, flightgraph.ECodeResume)
	}
}
