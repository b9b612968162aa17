package travel_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// TestFlightBundle holds the flight-by-id read (one read of the flight with its legs) to Flight
// and then Bundle, on both stores: the same flight and bundle for every flight of a day (those of
// more than one leg among them) and of a day past the stored window (the plan's), a flight's
// not-found and a malformed id's errors, and no bundle at all when the read fails.
func TestFlightBundle(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		e := newEngine(t, dialect)
		svc := e.Service
		ctx := context.Background()
		if svc.Shop == nil {
			t.Fatal("no schedule past the window (dataset.Horizon) to read flights of")
		}
		var day []*flightgraph.Flight
		for _, date := range []time.Time{storetest.Now, storetest.Now.AddDate(0, 2, 0)} {
			got, _, err := svc.Shop.FindFlights(ctx, flightgraph.FlightFilter{Date: date.Format(flightgraph.DateLayout), Page: flightgraph.Page{Limit: 200}})
			if err != nil || len(got) < 100 {
				t.Fatalf("the flights of %s: %d, %v", date.Format(flightgraph.DateLayout), len(got), err)
			}
			day = append(day, got...)
		}
		// The first read loads the plan and the reference data; the others find them loaded.
		if _, _, err := svc.FlightBundle(ctx, day[0].ID); err != nil {
			t.Fatal(err)
		}
		multi := 0
		for _, want := range day {
			ctx := store.WithQueryCounter(ctx)
			f, b, err := svc.FlightBundle(ctx, want.ID)
			if err != nil {
				t.Fatalf("%s: %v", want.ID, err)
			}
			if n := store.QueryCount(ctx); n > 1 {
				t.Fatalf("%s: %d statements, want 1 at most", want.ID, n)
			}
			wantB, err := svc.Bundle(ctx, []*flightgraph.Flight{want})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(f, want) || !reflect.DeepEqual(b, wantB) {
				t.Fatalf("%s: FlightBundle %+v %+v, Flight and Bundle %+v %+v", want.ID, f, b, want, wantB)
			}
			if len(b.Legs[f.ID]) == 0 || len(b.Airports) < 2 || len(b.Aircraft) == 0 || len(b.Carriers) == 0 {
				t.Fatalf("%s: a bundle short of what the document shows: %+v", f.ID, b)
			}
			if len(b.Legs[f.ID]) > 1 {
				multi++
			}
		}
		if multi == 0 {
			t.Error("no flight of more than one leg: the legs' order is not held")
		}

		gone := day[0].ID[:len(day[0].ID)-4] + "9999" // the same day and carrier, a number not flown
		if _, _, err := svc.FlightBundle(ctx, gone); flightgraph.ErrorCode(err) != flightgraph.ECodeFlightNotFound {
			t.Errorf("an unknown flight %s: %v, want %s", gone, err, flightgraph.ECodeFlightNotFound)
		}
		_, _, err := svc.FlightBundle(ctx, "not-a-flight")
		_, wantErr := svc.Flight(ctx, "not-a-flight")
		if err == nil || flightgraph.ErrorCode(err) != flightgraph.ErrorCode(wantErr) {
			t.Errorf("a malformed id: %v, want Flight's %v", err, wantErr)
		}

		broken := errors.New("the store is gone")
		failing := *svc
		failing.Shop = failingStore{FlightStore: svc.Flights, err: broken}
		if f, b, err := failing.FlightBundle(ctx, day[0].ID); !errors.Is(err, broken) || f != nil || b != nil {
			t.Errorf("the read failing: %v, %v, %v; want its error and nothing else", f, b, err)
		}
	})
}

// failingStore is a flight store whose read of flights with their legs fails.
type failingStore struct {
	flightgraph.FlightStore
	err error
}

func (s failingStore) FlightsWithLegs(context.Context, []string) ([]*flightgraph.Flight, [][]*flightgraph.FlightLeg, error) {
	return nil, nil, s.err
}
