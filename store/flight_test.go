package store_test

import (
	"context"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// TestFindLegsAndUncounted: FindLegs reads, in one query, the legs LegsByFlightIDs reads for the
// flights FindFlights finds, whatever the page; an Uncounted page is the same page without its
// total.
func TestFindLegsAndUncounted(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		db := storetest.Seeded(t, dialect, os.Getenv)
		ctx := context.Background()
		flights := store.NewFlightStore(db)
		f := flightgraph.FlightFilter{Origin: storetest.Place(t, db, "PAR"), Date: storetest.Now.Format(flightgraph.DateLayout), Page: flightgraph.Page{Limit: flightgraph.MaxPageSize}}
		counted, total, err := flights.FindFlights(ctx, f)
		if err != nil || total <= len(counted) {
			t.Fatalf("%d flights of %d: %v", len(counted), total, err)
		}
		f.Uncounted = true
		uncounted, none, err := flights.FindFlights(ctx, f)
		if err != nil || none != 0 || len(uncounted) != len(counted) {
			t.Fatalf("uncounted: %d flights, total %d: %v", len(uncounted), none, err)
		}
		for i := range counted {
			if *counted[i] != *uncounted[i] {
				t.Fatalf("flight %d: %+v counted, %+v not", i, counted[i], uncounted[i])
			}
		}
		legs, err := flights.FindLegs(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, l := range legs {
			if len(ids) == 0 || ids[len(ids)-1] != l.FlightID {
				ids = append(ids, l.FlightID)
			}
		}
		if len(ids) != total || len(slices.Compact(slices.Sorted(slices.Values(ids)))) != total {
			t.Fatalf("the legs of %d flights, want %d, each flight's together", len(ids), total)
		}
		byID, err := flights.LegsByFlightIDs(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		var want []*flightgraph.FlightLeg
		for _, ls := range byID {
			want = append(want, ls...)
		}
		if len(want) != len(legs) {
			t.Fatalf("%d legs, LegsByFlightIDs %d", len(legs), len(want))
		}
		for i := range want {
			if *want[i] != *legs[i] {
				t.Fatalf("leg %d: %+v, LegsByFlightIDs %+v", i, legs[i], want[i])
			}
		}
	})
}

// TestFlightsWithLegs: FlightsWithLegs reads, in one statement, what FlightsByIDs and
// LegsByFlightIDs read: flights of one leg and of more, an id asked twice, an id that names no
// flight, and a flight whose legs are gone (which the join leaves out, and which is read on its
// own).
func TestFlightsWithLegs(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		db := storetest.Seeded(t, dialect, os.Getenv)
		ctx := context.Background()
		flights := store.NewFlightStore(db)
		day, _, err := flights.FindFlights(ctx, flightgraph.FlightFilter{Date: storetest.Now.Format(flightgraph.DateLayout), Page: flightgraph.Page{Limit: 200}})
		if err != nil || len(day) < 100 {
			t.Fatalf("the day's flights: %d, %v", len(day), err)
		}
		ids := []string{day[0].ID, day[0].ID[:len(day[0].ID)-4] + "9999", day[0].ID}
		for _, f := range day[1:] {
			ids = append(ids, f.ID)
		}
		// A flight without legs: none is seeded so, so one loses its own.
		legless := day[len(day)-1].ID
		if _, err := storetest.SQL(t, db).ExecContext(ctx, `DELETE FROM flight_legs WHERE flight_id = '`+legless+`'`); err != nil {
			t.Fatal(err)
		}
		ctx = store.WithQueryCounter(ctx)
		gotF, gotL, err := flights.FlightsWithLegs(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		if n := store.QueryCount(ctx); n != 2 {
			t.Errorf("%d statements with a legless flight among the ids, want 2", n)
		}
		wantF, err := flights.FlightsByIDs(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		wantL, err := flights.LegsByFlightIDs(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		multi := 0
		for i, id := range ids {
			if !reflect.DeepEqual(gotF[i], wantF[i]) || !reflect.DeepEqual(gotL[i], wantL[i]) {
				t.Fatalf("%s: FlightsWithLegs %+v %+v, FlightsByIDs and LegsByFlightIDs %+v %+v", id, gotF[i], gotL[i], wantF[i], wantL[i])
			}
			if len(gotL[i]) > 1 {
				multi++
			}
		}
		if gotF[1] != nil || gotF[len(gotF)-1] == nil || len(gotL[len(gotL)-1]) != 0 || multi == 0 {
			t.Fatalf("the unknown id %v, the legless flight %v with %d legs, %d flights of more than one leg", gotF[1], gotF[len(gotF)-1], len(gotL[len(gotL)-1]), multi)
		}
		ctx = store.WithQueryCounter(context.Background())
		if _, _, err := flights.FlightsWithLegs(ctx, ids[:1]); err != nil || store.QueryCount(ctx) != 1 {
			t.Errorf("a flight and its legs: %d statements (%v), want 1", store.QueryCount(ctx), err)
		}
	})
}
