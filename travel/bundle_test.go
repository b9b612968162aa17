package travel_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// TestFlightBundle holds the flight-by-id read to Flight and then Bundle, on both stores, with
// its reads one after the other and at once (OverlapReads): the same flight and bundle for every
// flight of a day (those of more than one leg among them), a flight's not-found and a malformed
// id's errors, no bundle at all when either read fails, and a panic of the legs read raised on
// the caller's goroutine.
func TestFlightBundle(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		e := newEngine(t, dialect)
		ctx := context.Background()
		day, _, err := e.FindFlights(ctx, flightgraph.FlightFilter{Date: storetest.Now.Format(flightgraph.DateLayout), Page: flightgraph.Page{Limit: 200}})
		if err != nil || len(day) < 100 {
			t.Fatalf("the day's flights: %d, %v", len(day), err)
		}
		for _, overlap := range []bool{false, true} {
			t.Run(fmt.Sprint("overlap=", overlap), func(t *testing.T) {
				svc := *e.Service
				svc.OverlapReads = overlap
				multi := 0
				for _, want := range day {
					f, b, err := svc.FlightBundle(ctx, want.ID)
					if err != nil {
						t.Fatalf("%s: %v", want.ID, err)
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
					t.Error("no flight of more than one leg on the day: the legs' order is not held")
				}

				gone := day[0].ID[:len(day[0].ID)-4] + "9999" // the same day and carrier, a number not flown
				if _, _, err := svc.FlightBundle(ctx, gone); flightgraph.ErrorCode(err) != flightgraph.ECodeFlightNotFound {
					t.Errorf("an unknown flight %s: %v, want %s", gone, err, flightgraph.ECodeFlightNotFound)
				}
				_, _, err = svc.FlightBundle(ctx, "not-a-flight")
				_, wantErr := svc.Flight(ctx, "not-a-flight")
				if err == nil || flightgraph.ErrorCode(err) != flightgraph.ErrorCode(wantErr) {
					t.Errorf("a malformed id: %v, want Flight's %v", err, wantErr)
				}

				broken := errors.New("the store is gone")
				for _, failing := range []string{"flights", "legs"} {
					svc := svc
					svc.Shop = failingStore{FlightStore: svc.Flights, failing: failing, err: broken}
					if f, b, err := svc.FlightBundle(ctx, day[0].ID); !errors.Is(err, broken) || f != nil || b != nil {
						t.Errorf("the %s read failing: %v, %v, %v; want its error and nothing else", failing, f, b, err)
					}
				}
				// A legs read that panics panics the caller, whose server recovers it, and not a
				// goroutine of its own, whose panic would end the process.
				svc.Shop = failingStore{FlightStore: svc.Flights, failing: "legs", panics: true}
				func() {
					defer func() {
						if p := recover(); p != errLegsPanic {
							t.Errorf("a legs read panicking: the caller recovered %v, want %v", p, errLegsPanic)
						}
					}()
					svc.FlightBundle(ctx, day[0].ID)
				}()
			})
		}
	})
}

var errLegsPanic = errors.New("the legs read panicked")

// failingStore is a flight store whose flights or legs reads fail.
type failingStore struct {
	flightgraph.FlightStore
	failing string
	err     error
	panics  bool // the legs read panics with errLegsPanic
}

func (s failingStore) FlightsByIDs(ctx context.Context, ids []string) ([]*flightgraph.Flight, error) {
	if s.failing == "flights" {
		return nil, s.err
	}
	return s.FlightStore.FlightsByIDs(ctx, ids)
}

func (s failingStore) LegsByFlightIDs(ctx context.Context, ids []string) ([][]*flightgraph.FlightLeg, error) {
	if s.panics {
		panic(errLegsPanic)
	}
	if s.failing == "legs" {
		return nil, s.err
	}
	return s.FlightStore.LegsByFlightIDs(ctx, ids)
}
