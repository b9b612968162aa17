package store_test

import (
	"context"
	"os"
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
