package travel_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// day is the date days after Now.
func day(days int) string { return storetest.Now.AddDate(0, 0, days).Format(flightgraph.DateLayout) }

// searchesCheapest is the first cheapest offer the offers searches of q's kept days to
// destination list, day by day in order: what a deal to destination must be.
func searchesCheapest(t *testing.T, e *engine, q *flightgraph.DealQuery, destination string, days []string) *flightgraph.Offer {
	t.Helper()
	var want *flightgraph.Offer
	for _, d := range days {
		offers, err := e.OffersFor(context.Background(), q.Search(destination, d), 0)
		if err != nil {
			t.Fatalf("search %s-%s %s: %v", q.Origin, destination, d, err)
		}
		for _, o := range offers {
			if want == nil || o.Price.Total.Minor < want.Price.Total.Minor {
				want = o
			}
		}
	}
	return want
}

// TestDealsAreTheSearchesCheapest: over generated deals searches (origins, one to four
// destinations among airports, cities and hubs, passengers, cabins, currencies, deal types and
// intervals), each best-fare deal is the cheapest offer the offers searches of its days give, the
// same offer at the same price (the same id), whether its destination is asked alone or among
// others, and the lowest-fare calendar's over the same days; each feed item is its day's cheapest.
func TestDealsAreTheSearchesCheapest(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		e := newEngine(t, dialect)
		ctx := context.Background()
		routes, err := e.Network.AllRoutes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(7, 8))
		mixes := [][]string{{"ADT"}, {"ADT", "CHD", "INF"}, {"YTH", "YTH"}, {"YCD", "C14"}}
		currencies := []string{"", "USD", "JPY"}
		types := []flightgraph.DealType{flightgraph.DealLowestFare, flightgraph.DealWeekend, flightgraph.DealLastMinute}
		extra := []string{"AMS", "CDG", "PAR", "NYC", "LON", "JFK"}
		cases, priced := 12, 0
		if dialect == store.Postgres {
			cases = 5
		}
		for range cases {
			rt := routes[r.IntN(len(routes))]
			q := &flightgraph.DealQuery{Origin: rt.OriginCode, Currency: currencies[r.IntN(len(currencies))], Type: types[r.IntN(len(types))], Limit: 50}
			for _, p := range mixes[r.IntN(len(mixes))] {
				q.Passengers = append(q.Passengers, flightgraph.Passenger{ID: len(q.Passengers) + 1, Type: p})
			}
			if r.IntN(2) == 0 {
				q.Cabins = []flightgraph.CabinClass{flightgraph.CabinBusiness, flightgraph.CabinEconomy}
			}
			from := r.IntN(4)
			q.DateInterval = day(from) + "/" + day(from+2+r.IntN(windowAhead-from-2))
			dests := []string{rt.DestinationCode}
			for range r.IntN(4) {
				var d string
				if r.IntN(2) == 0 {
					d = extra[r.IntN(len(extra))]
				} else {
					d = routes[r.IntN(len(routes))].DestinationCode
				}
				if d != rt.OriginCode && !slices.Contains(dests, d) {
					dests = append(dests, d)
				}
			}
			q.Destinations = dests
			name := fmt.Sprintf("%s→%v %s %s %v %s", q.Origin, q.Destinations, q.DateInterval, q.Type, q.Passengers, q.Currency)
			all, err := e.BestFares(ctx, q)
			if flightgraph.ErrorCode(err) == flightgraph.ECodeInvalidParameter && q.Type != flightgraph.DealLowestFare {
				continue // an interval without a Friday or Saturday, or past the last minute
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			days := q.Days()
			if len(all.Deals) != len(dests) || all.Origin.Code != q.Origin || all.Currency == "" {
				t.Fatalf("%s: %d deals for %d destinations", name, len(all.Deals), len(dests))
			}
			for i, dl := range all.Deals {
				if dl.Destination.Code != dests[i] || dl.Period != q.DateInterval {
					t.Fatalf("%s: deal %d is to %s over %s", name, i, dl.Destination.Code, dl.Period)
				}
				want := searchesCheapest(t, e, q, dests[i], days)
				if offerName(want) != offerName(dl.Offer) {
					t.Fatalf("%s to %s: the deal is %v, the searches' cheapest %v", name, dests[i], offerName(dl.Offer), offerName(want))
				}
				if dl.Offer == nil {
					continue
				}
				priced++
				checkPrice(t, dl.Offer)
				if d := *dl.DepartureDate(); !slices.Contains(days, d) || dl.Offer.Price.Total.Currency != all.Currency {
					t.Fatalf("%s to %s: a deal leaving %s in %s", name, dests[i], d, dl.Offer.Price.Total.Currency)
				}
				// Alone, the destination's deal is the same.
				alone := *q
				alone.Destinations = []string{dests[i]}
				one, err := e.BestFares(ctx, &alone)
				if err != nil || offerName(one.Deals[0].Offer) != offerName(dl.Offer) {
					t.Fatalf("%s to %s alone: %v, %v; among others %v", name, dests[i], offerName(one.Deals[0].Offer), err, offerName(dl.Offer))
				}
				// The calendar over the interval, when every day is kept, gives it too.
				if q.Type == flightgraph.DealLowestFare {
					cal := q.Search(dests[i], "")
					cal.Connections[0].DepartureDate = ""
					lf, err := e.LowestFares(ctx, cal, 0, days, flightgraph.CalendarOverall)
					if err != nil || offerName(lf[0].Offer) != offerName(dl.Offer) {
						t.Fatalf("%s to %s: the calendar says %v (%v), the deal %v", name, dests[i], offerName(lf[0].Offer), err, offerName(dl.Offer))
					}
				}
			}
			// The feed: each destination's cheapest of each day.
			feed, err := e.BestOffersFeed(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for _, item := range feed.Deals {
				want := searchesCheapest(t, e, q, item.Destination.Code, []string{item.Period})
				if offerName(want) != offerName(item.Offer) {
					t.Fatalf("%s: the feed's %s on %s is %v, the search's cheapest %v", name, item.Destination.Code, item.Period, offerName(item.Offer), offerName(want))
				}
			}
		}
		t.Logf("%d deals with offers over %d searches", priced, cases)
		if priced < 8 {
			t.Errorf("only %d deals had offers", priced)
		}
	})
}

// TestAllDeals: all deals from an origin are the best-fare deals of the destinations they list
// (a third of them checked), cheapest first, at most limit, in a zone when asked; a destination
// all deals leave out has no best-fare deal.
func TestAllDeals(t *testing.T) {
	e := newEngine(t, store.SQLite)
	ctx := context.Background()
	base := flightgraph.DealQuery{Origin: "BCN", DateInterval: day(1) + "/" + day(7), Limit: flightgraph.MaxDestinations,
		Cabins: []flightgraph.CabinClass{flightgraph.CabinEconomy}}
	q := base
	all, err := e.AllDeals(ctx, &q)
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Deals) < 20 {
		t.Fatalf("%d deals from BCN", len(all.Deals))
	}
	if !slices.IsSortedFunc(all.Deals, func(a, b *flightgraph.Deal) int { return int(a.Offer.Price.Total.Minor - b.Offer.Price.Total.Minor) }) {
		t.Error("not cheapest first")
	}
	zones := map[string]int{}
	found := map[string]bool{}
	for i, dl := range all.Deals {
		zones[dl.Zone.Code]++
		found[dl.Destination.Code] = true
		if dl.Zone.Code != dl.Destination.Country.AreaCode || dl.Destination.City == nil {
			t.Errorf("%s: zone %s, country %+v", dl.Destination.Code, dl.Zone.Code, dl.Destination.Country)
		}
		if i%3 != 0 {
			continue
		}
		one := base
		one.Destinations = []string{dl.Destination.Code}
		best, err := e.BestFares(ctx, &one)
		if err != nil || offerName(best.Deals[0].Offer) != offerName(dl.Offer) {
			t.Fatalf("BCN-%s: all deals say %v, best fares %v (%v)", dl.Destination.Code, offerName(dl.Offer), offerName(best.Deals[0].Offer), err)
		}
	}
	// A few cities all deals leave out have nothing.
	cities, err := e.Cities(ctx)
	if err != nil {
		t.Fatal(err)
	}
	left := 0
	for _, c := range cities {
		if found[c.Code] || c.Code == "BCN" || left == 5 {
			continue
		}
		one := base
		one.Destinations = []string{c.Code}
		best, err := e.BestFares(ctx, &one)
		if err != nil {
			continue // a city of no airport of the network
		}
		if best.Deals[0].Offer != nil {
			t.Errorf("BCN-%s: best fares %v, all deals nothing", c.Code, offerName(best.Deals[0].Offer))
		}
		left++
	}
	// A zone and a limit narrow the same answer.
	var zone string
	for z, n := range zones {
		if n > 2 && z != "N" {
			zone = z
		}
	}
	q = base
	q.Zone, q.Limit = zone, 2
	some, err := e.AllDeals(ctx, &q)
	if err != nil || len(some.Deals) != 2 {
		t.Fatalf("zone %s, limit 2: %v %v", zone, some, err)
	}
	var inZone []*flightgraph.Deal
	for _, dl := range all.Deals {
		if dl.Zone.Code == zone {
			inZone = append(inZone, dl)
		}
	}
	for i, dl := range some.Deals {
		if dl.Offer.ID != inZone[i].Offer.ID {
			t.Errorf("zone %s deal %d: %v, want %v", zone, i, offerName(dl.Offer), offerName(inZone[i].Offer))
		}
	}
}

// TestDealQueryIsValidated: each refusal has its code and names its parameter.
func TestDealQueryIsValidated(t *testing.T) {
	e := newEngine(t, store.SQLite)
	ctx := context.Background()
	ok := func() flightgraph.DealQuery {
		return flightgraph.DealQuery{Origin: "AMS", Destinations: []string{"LON"}, Limit: 10}
	}
	for _, c := range []struct {
		name  string
		tweak func(q *flightgraph.DealQuery)
		code  string
		param string
	}{
		{"no origin", func(q *flightgraph.DealQuery) { q.Origin = " " }, flightgraph.ECodeMissingParameter, "origin"},
		{"malformed origin", func(q *flightgraph.DealQuery) { q.Origin = "A1" }, flightgraph.ECodeBadFormat, "origin"},
		{"unknown origin", func(q *flightgraph.DealQuery) { q.Origin = "QQQ" }, flightgraph.ECodeOriginUnknown, "origin"},
		{"unknown destination", func(q *flightgraph.DealQuery) { q.Destinations = []string{"QQQ"} }, flightgraph.ECodeDestinationUnknown, "destinations"},
		{"no destination", func(q *flightgraph.DealQuery) { q.Destinations = nil }, flightgraph.ECodeMissingParameter, "destinations"},
		{"the origin", func(q *flightgraph.DealQuery) { q.Destinations = []string{"AMS"} }, flightgraph.ECodeInvalidParameter, "destinations"},
		{"twice", func(q *flightgraph.DealQuery) { q.Destinations = []string{"LON", "lon"} }, flightgraph.ECodeInvalidParameter, "destinations"},
		{"too many", func(q *flightgraph.DealQuery) {
			q.Destinations = nil
			for i := range flightgraph.MaxDealDestinations + 1 {
				q.Destinations = append(q.Destinations, fmt.Sprintf("Q%02d", i))
			}
		}, flightgraph.ECodeInvalidParameter, "destinations"},
		{"long interval", func(q *flightgraph.DealQuery) { q.DateInterval = day(0) + "/" + day(flightgraph.MaxDealDays) }, flightgraph.ECodeInvalidParameter, "dateInterval"},
		{"past interval", func(q *flightgraph.DealQuery) { q.DateInterval = day(-2) + "/" + day(2) }, flightgraph.ECodeInvalidParameter, "dateInterval"},
		{"far interval", func(q *flightgraph.DealQuery) { q.DateInterval = day(400) + "/" + day(401) }, flightgraph.ECodeInvalidParameter, "dateInterval"},
		{"malformed interval", func(q *flightgraph.DealQuery) { q.DateInterval = day(1) }, flightgraph.ECodeBadFormat, "dateInterval"},
		{"no weekend", func(q *flightgraph.DealQuery) {
			q.Type, q.DateInterval = flightgraph.DealWeekend, "2026-11-23/2026-11-26"
		}, flightgraph.ECodeInvalidParameter, "dateInterval"},
		{"late last minute", func(q *flightgraph.DealQuery) { q.Type, q.DateInterval = flightgraph.DealLastMinute, day(8)+"/"+day(9) }, flightgraph.ECodeInvalidParameter, "dateInterval"},
		{"unknown type", func(q *flightgraph.DealQuery) { q.Type = "CHEAP" }, flightgraph.ECodeInvalidParameter, "dealType"},
		{"unknown zone", func(q *flightgraph.DealQuery) { q.Zone = "X" }, flightgraph.ECodeInvalidParameter, "destinationZoneCode"},
		{"a child alone", func(q *flightgraph.DealQuery) { q.Passengers = []flightgraph.Passenger{{ID: 1, Type: "CHD"}} }, flightgraph.ECodeInvalidParameter, "passengers"},
		{"bad cabin", func(q *flightgraph.DealQuery) { q.Cabins = []flightgraph.CabinClass{"LOUNGE"} }, flightgraph.ECodeInvalidParameter, "commercialCabins"},
		{"bad currency", func(q *flightgraph.DealQuery) { q.Currency = "XXX" }, flightgraph.ECodeInvalidParameter, "currency"},
		{"no limit", func(q *flightgraph.DealQuery) { q.Limit = 0 }, flightgraph.ECodeInvalidParameter, "limit"},
	} {
		q := ok()
		c.tweak(&q)
		_, err := e.BestFares(ctx, &q)
		var fe *flightgraph.Error
		if flightgraph.ErrorCode(err) != c.code || !errors.As(err, &fe) || fe.Parameter != c.param {
			t.Errorf("%s: %v, want %s on %s", c.name, err, c.code, c.param)
		}
	}
	q := ok()
	if _, err := e.AllDeals(ctx, &q); flightgraph.ErrorCode(err) != flightgraph.ECodeInconsistentInput {
		t.Errorf("all deals to named destinations: %v", err)
	}
	q = ok()
	q.Zone = "E"
	if _, err := e.BestFares(ctx, &q); flightgraph.ErrorCode(err) != flightgraph.ECodeInconsistentInput {
		t.Errorf("best fares to named destinations in a zone: %v", err)
	}
	q = ok()
	q.Destinations = nil
	if _, err := e.BestOffersFeed(ctx, &q); flightgraph.ErrorCode(err) != flightgraph.ECodeMissingParameter {
		t.Errorf("a feed without destinations: %v", err)
	}
}

// TestAvailabilityIsTheOffers: over generated searches, the seats left an availability answers
// for each flight and cabin are those of the offers search's segments, and a cabin of an
// itinerary is sellable exactly when the search has offers in it.
func TestAvailabilityIsTheOffers(t *testing.T) {
	e := newEngine(t, store.SQLite)
	ctx := context.Background()
	routes, err := e.Network.AllRoutes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(9, 10))
	checked := 0
	for range 25 {
		rt := routes[r.IntN(len(routes))]
		pax := slices.Repeat([]string{"ADT"}, 1+r.IntN(flightgraph.MaxSeatsPerBooking))
		q := search(rt.OriginCode, rt.DestinationCode, r.IntN(windowAhead), pax...)
		avail, err := e.FlightsAvailability(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		offers, err := e.OffersFor(ctx, q, 0)
		if err != nil {
			t.Fatal(err)
		}
		withOffers := map[string]*flightgraph.Offer{}
		for _, o := range offers {
			withOffers[itineraryOf(o)+string(o.Cabin)] = o
		}
		for _, a := range avail {
			key := ""
			for _, s := range a.Segments {
				key += s.Flight.ID + " "
			}
			for _, c := range a.Cabins {
				o := withOffers[key+string(c.Cabin)]
				if c.Sellable != (o != nil) {
					t.Fatalf("%s %s: sellable %v, an offer %v", key, c.Cabin, c.Sellable, o != nil)
				}
				if o == nil {
					continue
				}
				checked++
				for i, s := range a.Segments {
					seats := -1
					for _, sc := range s.Cabins {
						if sc.Cabin == c.Cabin {
							seats = sc.SeatsLeft
						}
					}
					if seats != o.Segments[i].SeatsLeft || c.SeatsLeft > seats {
						t.Fatalf("%s %s segment %d: %d seats left, the offer's %d", key, c.Cabin, i, seats, o.Segments[i].SeatsLeft)
					}
				}
				delete(withOffers, key+string(c.Cabin))
			}
		}
		if len(withOffers) > 0 {
			t.Fatalf("%s-%s: %d offers of no available itinerary", rt.OriginCode, rt.DestinationCode, len(withOffers))
		}
	}
	t.Logf("%d itinerary cabins checked", checked)
	if checked < 100 {
		t.Errorf("only %d itinerary cabins were checked", checked)
	}
}

// TestDealsHonourTheDeadline: past the request's deadline, deals, availability, contexts and the
// deals reference stop; deals wait for an inspiration's slot only as long as their time lasts, and
// give it back.
func TestDealsHonourTheDeadline(t *testing.T) {
	e := newEngine(t, store.SQLite)
	ctx := context.Background()
	expired, cancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancel()
	q := func() *flightgraph.DealQuery {
		return &flightgraph.DealQuery{Origin: "BCN", Destinations: []string{"AMS", "NYC"}, Limit: 10}
	}
	all := q()
	all.Destinations = nil
	for name, call := range map[string]func(context.Context) error{
		"best fares": func(c context.Context) error { _, err := e.BestFares(c, q()); return err },
		"all deals":  func(c context.Context) error { _, err := e.AllDeals(c, all); return err },
		"feed":       func(c context.Context) error { _, err := e.BestOffersFeed(c, q()); return err },
		"availability": func(c context.Context) error {
			_, err := e.FlightsAvailability(c, search("BCN", "NYC", 1))
			return err
		},
		"search context":  func(c context.Context) error { _, err := e.SearchContext(c, "BCN", "NYC", day(1)); return err },
		"deals reference": func(c context.Context) error { _, err := e.DealsReference(c); return err },
	} {
		if err := call(expired); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s past the deadline: %v", name, err)
		}
	}
	// The heavy parts of one request take turns at its one heavy-work slot: while one part holds
	// the turn, another waits for it as long as its time lasts; another request's does not.
	w := flightgraph.NewHeavyWork()
	w.Hold(true)
	held := flightgraph.WithHeavyWork(ctx, w)
	leave, err := w.Turn(held)
	if err != nil {
		t.Fatal(err)
	}
	short, cancelShort := context.WithTimeout(held, 500*time.Millisecond) // time for the reads before the turn, even under -race
	defer cancelShort()
	if _, err := e.BestFares(short, q()); flightgraph.ErrorCode(err) != flightgraph.ECodeTimeout {
		t.Errorf("a second part of a request while its first runs: %v, want it to wait its turn", err)
	}
	other := flightgraph.NewHeavyWork()
	other.Hold(true)
	if _, err := e.BestFares(flightgraph.WithHeavyWork(ctx, other), q()); err != nil {
		t.Errorf("another request's search while the first's runs: %v", err)
	}
	leave()
	if _, err := e.BestFares(held, q()); err != nil {
		t.Errorf("the request's search once its first part is done: %v", err)
	}
	bad := q()
	bad.Destinations = []string{"QQQ"}
	if _, err := e.BestFares(held, bad); err == nil {
		t.Errorf("a refused search: %v", err)
	}
	if leave, err := w.Turn(ctx); err != nil {
		t.Errorf("a refused search kept the request's turn: %v", err)
	} else {
		leave()
	}
}
