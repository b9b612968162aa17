package travel_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// inspirationMonth is the month the engine tests ask for: Now's, whose days from Now on have
// flights in the tests' window.
var inspirationMonth = storetest.Now.Format(flightgraph.MonthLayout)

// monthCalendar is the lowest-fare calendar (MONTH) of a month from origin to destination for one
// adult in a cabin and currency: the cheapest offer of the month, nil when none.
func monthCalendar(t *testing.T, e *engine, origin, destination string, cabin flightgraph.CabinClass, currency string, days []string) *flightgraph.Offer {
	t.Helper()
	q := search(origin, destination, 0)
	q.Connections[0].DepartureDate = ""
	q.Cabins, q.Currency = []flightgraph.CabinClass{cabin}, currency
	cal, err := e.LowestFares(context.Background(), q, 0, days, flightgraph.CalendarMonth)
	if err != nil {
		t.Fatalf("calendar %s-%s: %v", origin, destination, err)
	}
	if len(cal) != 1 {
		t.Fatalf("calendar %s-%s: %d months", origin, destination, len(cal))
	}
	return cal[0].Offer
}

// TestInspirationIsTheCalendar: each destination's offer is the one the month's lowest-fare
// calendar from the origin to it gives (the same flights, family and price: the same offer id),
// from a spoke (every destination), a hub, a city of two airports and a long-haul city (a third of
// theirs), in three cabins and currencies; from the spoke, every city the inspiration leaves out
// has no offer that month; the answer is cheapest first.
func TestInspirationIsTheCalendar(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		e := newEngine(t, dialect)
		ctx := context.Background()
		for _, c := range []struct {
			origin   string
			cabin    flightgraph.CabinClass
			currency string
		}{{"BCN", flightgraph.CabinEconomy, ""}, {"AMS", flightgraph.CabinEconomy, ""}, {"PAR", flightgraph.CabinBusiness, "JPY"}, {"NYC", flightgraph.CabinPremium, "USD"}} {
			q := &flightgraph.InspirationQuery{Origin: c.origin, Month: inspirationMonth, Cabin: c.cabin, Currency: c.currency, Limit: flightgraph.MaxDestinations}
			insp, err := e.Inspiration(ctx, q)
			if err != nil {
				t.Fatalf("%s: %v", c.origin, err)
			}
			if len(insp.Destinations) == 0 || c.cabin == flightgraph.CabinEconomy && len(insp.Destinations) < 20 {
				t.Fatalf("%s: %d destinations", c.origin, len(insp.Destinations))
			}
			if !slices.IsSortedFunc(insp.Destinations, func(a, b *flightgraph.Destination) int { return int(a.LowestPrice().Minor - b.LowestPrice().Minor) }) {
				t.Errorf("%s: not cheapest first", c.origin)
			}
			days := q.Days()
			found := map[string]bool{}
			for i, d := range insp.Destinations {
				found[d.Code()] = true
				if c.origin != "BCN" && i%3 != 0 {
					continue // every destination of the spoke, a third of the others': a calendar each
				}
				want := monthCalendar(t, e, c.origin, d.Code(), c.cabin, c.currency, days)
				if want == nil || want.ID != d.Offer.ID || want.Price.Total != d.LowestPrice() {
					t.Fatalf("%s-%s: the inspiration says %v, the calendar %v", c.origin, d.Code(), offerName(d.Offer), offerName(want))
				}
				if d.Offer.Cabin != c.cabin || d.LowestPrice().Currency != insp.Currency || d.City == nil || d.Country == nil || d.City.Code != d.Code() {
					t.Errorf("%s-%s: %+v", c.origin, d.Code(), d)
				}
			}
			if c.origin != "BCN" {
				continue
			}
			cities, err := e.Cities(ctx)
			if err != nil {
				t.Fatal(err)
			}
			left := 0
			for _, city := range cities {
				if found[city.Code] || city.Code == "BCN" {
					continue
				}
				if o := monthCalendar(t, e, c.origin, city.Code, c.cabin, c.currency, days); o != nil {
					t.Errorf("BCN-%s: the calendar has %v, the inspiration nothing", city.Code, offerName(o))
				}
				left++
			}
			t.Logf("from BCN: %d destinations, %d cities without an offer", len(insp.Destinations), left)
		}
	})
}

// TestInspirationQuery: a price, a destination and a limit narrow the answer the same engine
// gives; each refusal has its code and names its parameter.
func TestInspirationQuery(t *testing.T) {
	e := newEngine(t, store.SQLite)
	ctx := context.Background()
	all, err := e.Inspiration(ctx, &flightgraph.InspirationQuery{Origin: "bcn", Month: inspirationMonth, Limit: flightgraph.MaxDestinations})
	if err != nil {
		t.Fatal(err)
	}
	mid := all.Destinations[len(all.Destinations)/2]
	under, err := e.Inspiration(ctx, &flightgraph.InspirationQuery{Origin: "BCN", Month: inspirationMonth, MaxPrice: mid.LowestPrice().Decimal(), Limit: flightgraph.MaxDestinations})
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range under.Destinations {
		if d.Offer.ID != all.Destinations[i].Offer.ID {
			t.Fatalf("under %s, #%d is %s, of all %s", mid.LowestPrice(), i, d.Code(), all.Destinations[i].Code())
		}
	}
	if n := len(under.Destinations); n <= len(all.Destinations)/2 || under.Destinations[n-1].LowestPrice().Minor > mid.LowestPrice().Minor || n < len(all.Destinations) && all.Destinations[n].LowestPrice().Minor <= mid.LowestPrice().Minor {
		t.Errorf("under %s: %d of %d destinations", mid.LowestPrice(), n, len(all.Destinations))
	}
	one, err := e.Inspiration(ctx, &flightgraph.InspirationQuery{Origin: "BCN", Month: inspirationMonth, Destination: mid.Code(), Limit: 10})
	if err != nil || len(one.Destinations) != 1 || one.Destinations[0].Offer.ID != mid.Offer.ID {
		t.Fatalf("to %s: %+v %v", mid.Code(), one, err)
	}
	airport, err := e.Inspiration(ctx, &flightgraph.InspirationQuery{Origin: "BCN", Month: inspirationMonth, Destination: "JFK", Limit: 10})
	if err != nil || airport.Destinations[0].Code() != "JFK" || airport.Destinations[0].City.Code != "NYC" {
		t.Fatalf("to JFK: %+v %v", airport, err)
	}
	if want := monthCalendar(t, e, "BCN", "JFK", flightgraph.CabinEconomy, "", (&flightgraph.InspirationQuery{Month: inspirationMonth, Limit: 10}).Days()); want == nil || want.ID != airport.Destinations[0].Offer.ID {
		t.Errorf("to JFK: the inspiration says %v, the calendar %v", offerName(airport.Destinations[0].Offer), offerName(want))
	}
	top, err := e.Inspiration(ctx, &flightgraph.InspirationQuery{Origin: "BCN", Month: inspirationMonth, Limit: 3})
	if err != nil || len(top.Destinations) != 3 || top.Destinations[2].Offer.ID != all.Destinations[2].Offer.ID {
		t.Fatalf("the first 3: %+v %v", top, err)
	}

	// The request's deadline stops the work.
	expired, cancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancel()
	if _, err := e.Inspiration(expired, &flightgraph.InspirationQuery{Origin: "BCN", Month: inspirationMonth, Limit: 10}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("past the deadline: %v", err)
	}

	// Heavy work runs only in a heavy-work slot that the request holds (the edge takes it):
	// without one it is refused, not run unbounded; with one it runs, and gives its turn back.
	e.RequireHeavySlot = true
	q := &flightgraph.InspirationQuery{Origin: "BCN", Month: inspirationMonth, Limit: 10}
	var fe *flightgraph.Error
	if _, err := e.Inspiration(ctx, q); err == nil || errors.As(err, &fe) {
		t.Errorf("an inspiration without a heavy-work slot: %v, want it refused as the defect it is (masked as internal)", err)
	}
	w := flightgraph.NewHeavyWork()
	w.Hold(true)
	held := flightgraph.WithHeavyWork(ctx, w)
	if _, err := e.Inspiration(held, q); err != nil {
		t.Errorf("with a heavy-work slot: %v", err)
	}
	if leave, err := w.Turn(ctx); err != nil {
		t.Errorf("the request's turn was not given back: %v", err)
	} else {
		leave()
	}
	e.RequireHeavySlot = false

	next := storetest.Now.AddDate(0, 1, 0).Format(flightgraph.MonthLayout)
	for _, c := range []struct {
		name  string
		q     flightgraph.InspirationQuery
		code  string
		param string
	}{
		{"a price without an origin", flightgraph.InspirationQuery{MaxPrice: "100", Limit: 10}, flightgraph.ECodeInconsistentInput, "price"},
		{"no origin", flightgraph.InspirationQuery{Limit: 10}, flightgraph.ECodeMissingParameter, "origin"},
		{"a malformed origin", flightgraph.InspirationQuery{Origin: "AMST", Limit: 10}, flightgraph.ECodeBadFormat, "origin"},
		{"an unknown origin", flightgraph.InspirationQuery{Origin: "QQQ", Limit: 10}, flightgraph.ECodeOriginUnknown, "origin"},
		{"an unknown destination", flightgraph.InspirationQuery{Origin: "AMS", Destination: "QQQ", Limit: 10}, flightgraph.ECodeDestinationUnknown, "destination"},
		{"the origin as destination", flightgraph.InspirationQuery{Origin: "PAR", Destination: "ORY", Limit: 10}, flightgraph.ECodeInvalidParameter, "destination"},
		{"nothing under the price", flightgraph.InspirationQuery{Origin: "BCN", Month: inspirationMonth, MaxPrice: "1", Limit: 10}, flightgraph.ECodeTripDestination, "price"},
		{"a past month", flightgraph.InspirationQuery{Origin: "AMS", Month: storetest.Now.AddDate(0, -1, 0).Format(flightgraph.MonthLayout), Limit: 10}, flightgraph.ECodeInvalidParameter, "month"},
		{"a month past a year", flightgraph.InspirationQuery{Origin: "AMS", Month: storetest.Now.AddDate(0, flightgraph.InspirationMonths, 0).Format(flightgraph.MonthLayout), Limit: 10}, flightgraph.ECodeInvalidParameter, "month"},
		{"a day for a month", flightgraph.InspirationQuery{Origin: "AMS", Month: next + "-01", Limit: 10}, flightgraph.ECodeBadFormat, "month"},
		{"month 13", flightgraph.InspirationQuery{Origin: "AMS", Month: "2026-13", Limit: 10}, flightgraph.ECodeBadFormat, "month"},
		{"a negative price", flightgraph.InspirationQuery{Origin: "AMS", MaxPrice: "-5", Limit: 10}, flightgraph.ECodeInvalidParameter, "price"},
		{"a zero price", flightgraph.InspirationQuery{Origin: "AMS", MaxPrice: "0.00", Limit: 10}, flightgraph.ECodeInvalidParameter, "price"},
		{"a price in words", flightgraph.InspirationQuery{Origin: "AMS", MaxPrice: "cheap", Limit: 10}, flightgraph.ECodeBadFormat, "price"},
		{"a price past int64", flightgraph.InspirationQuery{Origin: "AMS", MaxPrice: "99999999999999999999", Limit: 10}, flightgraph.ECodeBadFormat, "price"},
		{"cents of yen", flightgraph.InspirationQuery{Origin: "AMS", MaxPrice: "100.5", Currency: "JPY", Limit: 10}, flightgraph.ECodeBadFormat, "price"},
		{"an unknown currency", flightgraph.InspirationQuery{Origin: "AMS", Currency: "XXX", Limit: 10}, flightgraph.ECodeInvalidParameter, "currency"},
		{"an unknown cabin", flightgraph.InspirationQuery{Origin: "AMS", Cabin: "COACH", Limit: 10}, flightgraph.ECodeCabinClassNotFound, "cabin"},
		{"too many", flightgraph.InspirationQuery{Origin: "AMS", Limit: flightgraph.MaxDestinations + 1}, flightgraph.ECodeInvalidParameter, "limit"},
		{"too few", flightgraph.InspirationQuery{Origin: "AMS", Limit: -1}, flightgraph.ECodeInvalidParameter, "limit"},
		{"none", flightgraph.InspirationQuery{Origin: "AMS"}, flightgraph.ECodeInvalidParameter, "limit"},
	} {
		_, err := e.Inspiration(ctx, &c.q)
		var fe *flightgraph.Error
		if flightgraph.ErrorCode(err) != c.code || !errors.As(err, &fe) || fe.Parameter != c.param {
			t.Errorf("%s: %v, want %s naming %s", c.name, err, c.code, c.param)
		}
	}
}
