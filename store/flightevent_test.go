package store_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/live"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// TestFlightEvents: an operation updates the flight and records its event in one transaction, at
// growing positions, with the airports of its legs; the clock's transitions are recorded once
// however many replicas derive them; the sweep keeps the events of the retention window and the
// latest one.
func TestFlightEvents(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		db := storetest.Seeded(t, dialect, os.Getenv)
		ctx := context.Background()
		flights, events := store.NewFlightStore(db), store.NewFlightEventStore(db)
		var told int64
		events.OnRecorded(func(p int64) { told = p })
		fs, _, err := flights.FindFlights(ctx, flightgraph.FlightFilter{Origin: storetest.Place(t, db, "AMS"), Date: storetest.Now.Format(flightgraph.DateLayout), Page: flightgraph.Page{Limit: 2}})
		if err != nil || len(fs) < 2 {
			t.Fatalf("%d flights: %v", len(fs), err)
		}
		now := storetest.Now
		e1, err := events.RecordOperation(ctx, flightgraph.FlightOperation{FlightID: fs[0].ID, Kind: flightgraph.EventDelay, DelayMinutes: 45}, now)
		if err != nil {
			t.Fatal(err)
		}
		e2, err := events.RecordOperation(ctx, flightgraph.FlightOperation{FlightID: fs[1].ID, Kind: flightgraph.EventGate, Gate: "D7"}, now)
		if err != nil {
			t.Fatal(err)
		}
		if e2.Position <= e1.Position || told != e2.Position || !e1.Departs("AMS") || e1.DepartureDelay != 45 || e2.DepartureGate != "D7" {
			t.Fatalf("events %+v, %+v; told %d", e1, e2, told)
		}
		legs, err := flights.LegsByFlightIDs(ctx, []string{fs[0].ID, fs[1].ID})
		if err != nil || legs[0][0].DepartureDelay != 45 || legs[1][0].DepartureGate != "D7" {
			t.Fatalf("the flights were not changed: %v", err)
		}
		if _, err := events.RecordOperation(ctx, flightgraph.FlightOperation{FlightID: "20261122+XX+9999", Kind: flightgraph.EventCancellation}, now); flightgraph.ErrorCode(err) != flightgraph.ECodeFlightNotFound {
			t.Fatalf("unknown flight: %v", err)
		}
		// Two replicas' clocks over the same hour record each transition once.
		clock := &live.Clock{Events: events, Flights: flights}
		n1, err := clock.Tick(ctx, now, now.Add(time.Hour))
		if err != nil || n1 == 0 {
			t.Fatalf("first clock: %d transitions, %v", n1, err)
		}
		if n2, err := clock.Tick(ctx, now, now.Add(time.Hour)); err != nil || n2 != 0 {
			t.Fatalf("second clock recorded %d again: %v", n2, err)
		}
		all, err := events.EventsAfter(ctx, 0, 100000)
		if err != nil || len(all) != n1+2 {
			t.Fatalf("%d events, want %d: %v", len(all), n1+2, err)
		}
		for i := 1; i < len(all); i++ {
			if all[i].Position <= all[i-1].Position {
				t.Fatalf("positions out of order at %d", i)
			}
		}
		// The sweep: everything is older than a minute from a day on, but the latest stays.
		_, latest, _ := events.Positions(ctx)
		if n, err := events.DeleteEventsBefore(ctx, now.Add(48*time.Hour)); err != nil || int(n) != len(all)-1 {
			t.Fatalf("swept %d of %d: %v", n, len(all), err)
		}
		oldest, latest2, err := events.Positions(ctx)
		if err != nil || oldest != latest || latest2 != latest {
			t.Fatalf("after the sweep %d..%d, want %d: %v", oldest, latest2, latest, err)
		}
	})
}
