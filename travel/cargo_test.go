package travel_test

import (
	"context"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
	"github.com/flightgraph/flightgraph/travel"
)

// TestCargoHoldsCoverTheFleet: every aircraft type the data set flies has cargo figures, so that
// no flight of the network answers FLIGHT_404.002 for want of them.
func TestCargoHoldsCoverTheFleet(t *testing.T) {
	e := newEngine(t, store.SQLite)
	fleet, err := e.Fleet(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range fleet {
		if litres, kg, ok := travel.CargoHold(a.TypeCode); !ok || litres <= 0 || kg <= 0 {
			t.Errorf("aircraft type %s (%s, configuration %s) has no cargo figures", a.TypeCode, a.TypeName, a.Configuration)
		}
	}
}

// TestCargoCapacity holds every flight of a day to the cargo rule: each leg's figures add up
// (what is left is the hold less the bags, and of the payload also the passengers), passengers
// fill at most the seats at a plausible load with about one bag each, the flight's figures are the
// least of its legs', and the answer is the same when asked again. Long-haul widebodies take more
// than short-haul narrowbodies. Errors: a malformed id, an unknown flight.
func TestCargoCapacity(t *testing.T) {
	e := newEngine(t, store.SQLite)
	ctx := context.Background()
	var flights []*flightgraph.Flight
	for offset := 0; ; offset += 200 {
		page, total, err := e.FindFlights(ctx, flightgraph.FlightFilter{Date: storetest.Now.Format(flightgraph.DateLayout), Page: flightgraph.Page{Limit: 200, Offset: offset}})
		if err != nil {
			t.Fatal(err)
		}
		flights = append(flights, page...)
		if offset+200 >= total {
			break
		}
	}
	if len(flights) < 50 {
		t.Fatalf("only %d flights on the day", len(flights))
	}
	best := map[string]int{} // haul → the most payload a flight of it offers
	for _, f := range flights {
		c, err := e.CargoCapacity(ctx, f.ID)
		if err != nil {
			t.Fatalf("%s: %v", f.ID, err)
		}
		again, err := e.CargoCapacity(ctx, f.ID)
		if err != nil || again.VolumeLitres != c.VolumeLitres || again.PayloadKg != c.PayloadKg || len(again.Legs) != len(c.Legs) {
			t.Fatalf("%s asked again: %+v %v, first %+v", f.ID, again, err, c)
		}
		if c.Flight.ID != f.ID || len(c.Legs) == 0 {
			t.Fatalf("%s: %+v", f.ID, c)
		}
		vol, kg := c.Legs[0].VolumeLitres, c.Legs[0].PayloadKg
		for i, l := range c.Legs {
			if l.Sequence != i+1 || l.OriginCode == "" || l.DestinationCode == "" || l.AircraftTypeCode == "" || l.ConfigurationCode == "" {
				t.Errorf("%s leg %d: %+v", f.ID, i, l)
			}
			litres, payload, _ := travel.CargoHold(l.AircraftTypeCode)
			if l.HoldVolumeLitres != litres || l.MaxPayloadKg != payload {
				t.Errorf("%s leg %d: hold %d l %d kg, the type's %d l %d kg", f.ID, l.Sequence, l.HoldVolumeLitres, l.MaxPayloadKg, litres, payload)
			}
			vol, kg = min(vol, l.VolumeLitres), min(kg, l.PayloadKg)
			if l.Cancelled {
				if l.VolumeLitres != 0 || l.PayloadKg != 0 || l.ExpectedPassengers != 0 {
					t.Errorf("%s leg %d is cancelled yet carries: %+v", f.ID, l.Sequence, l)
				}
				continue
			}
			if l.ExpectedPassengers > l.Seats || l.ExpectedPassengers*100 < l.Seats*50 {
				t.Errorf("%s leg %d: %d passengers on %d seats", f.ID, l.Sequence, l.ExpectedPassengers, l.Seats)
			}
			if l.ExpectedBags*10 < l.ExpectedPassengers*5 || l.ExpectedBags*10 > l.ExpectedPassengers*17 {
				t.Errorf("%s leg %d: %d bags for %d passengers", f.ID, l.Sequence, l.ExpectedBags, l.ExpectedPassengers)
			}
			if l.PassengerKg != 84*l.ExpectedPassengers || l.BaggageVolumeLitres != 112*l.ExpectedBags ||
				l.BaggageKg < 23*l.ExpectedBags || l.BaggageKg > 32*l.ExpectedBags {
				t.Errorf("%s leg %d: passengers %d kg, bags %d kg %d l: %+v", f.ID, l.Sequence, l.PassengerKg, l.BaggageKg, l.BaggageVolumeLitres, l)
			}
			if l.VolumeLitres != max(l.HoldVolumeLitres-l.BaggageVolumeLitres, 0) || l.PayloadKg != max(l.MaxPayloadKg-l.PassengerKg-l.BaggageKg, 0) {
				t.Errorf("%s leg %d does not add up: %+v", f.ID, l.Sequence, l)
			}
		}
		if c.VolumeLitres != vol || c.PayloadKg != kg {
			t.Errorf("%s: %d l %d kg, the least of its legs' is %d l %d kg", f.ID, c.VolumeLitres, c.PayloadKg, vol, kg)
		}
		best[f.Haul] = max(best[f.Haul], c.PayloadKg)
	}
	if best["LONG"] <= best["SHORT"] || best["LONG"] < 10_000 {
		t.Errorf("the most payload a flight offers, by haul: %v", best)
	}

	for _, c := range []struct{ id, code string }{
		{"not-a-flight", flightgraph.ECodeBadFormat},
		{"20261122+XX+9998", flightgraph.ECodeFlightNotFound},
	} {
		if _, err := e.CargoCapacity(ctx, c.id); flightgraph.ErrorCode(err) != c.code {
			t.Errorf("%s: %v, want %s", c.id, err, c.code)
		}
	}
}
