package travel_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/app"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
	"github.com/flightgraph/flightgraph/travel"
)

// engine is the travel service on a seeded store whose clock the test moves.
type engine struct {
	*travel.Service
	db  *store.DB
	now time.Time
}

// window is the flights the offers tests search: from yesterday to ten days ahead.
const windowAhead = 10

func newEngine(t testing.TB, dialect string) *engine {
	t.Helper()
	db := storetest.SeededWindow(t, dialect, os.Getenv, 1, windowAhead)
	e := &engine{db: db, now: storetest.Now}
	svc := app.New(app.Config{Stores: app.StoresOf(db), Now: func() time.Time { return e.now }, SnapshotTTL: time.Hour, OfferKey: []byte(strings.Repeat("k", 32))})
	e.Service = svc.Travel
	// The engine's tests call heavy work directly, without the edge's guard that takes a
	// heavy-work slot; TestInspiration turns the requirement back on to test it.
	e.RequireHeavySlot = false
	return e
}

// search is a one-way search from origin to destination days after Now.
func search(origin, destination string, days int, pax ...string) *flightgraph.OfferSearch {
	q := &flightgraph.OfferSearch{Connections: []flightgraph.RequestedConnection{{
		Origin: origin, Destination: destination, DepartureDate: storetest.Now.AddDate(0, 0, days).Format(flightgraph.DateLayout)}}}
	if len(pax) == 0 {
		pax = []string{"ADT"}
	}
	for i, p := range pax {
		q.Passengers = append(q.Passengers, flightgraph.Passenger{ID: i + 1, Type: p})
	}
	return q
}

// checkPrice checks that a price adds up: each type's total is its base and its taxes, and the
// offer's total is each type's total times its count, in one currency.
func checkPrice(t testing.TB, o *flightgraph.Offer) {
	t.Helper()
	sum := flightgraph.Money{Currency: o.Price.Total.Currency}
	for _, p := range o.Price.Passengers {
		taxes := flightgraph.Money{Currency: p.Base.Currency}
		for _, l := range p.Taxes {
			if l.Amount.Currency != o.Price.Total.Currency || l.Amount.Minor < 0 || l.Name == "" || l.Code == "" {
				t.Fatalf("offer %s: tax line %+v", o.ID, l)
			}
			taxes = taxes.Add(l.Amount)
		}
		if taxes != p.TaxTotal || p.Base.Add(p.TaxTotal) != p.Total || p.Base.Minor <= 0 {
			t.Fatalf("offer %s, %s: base %v + taxes %v (lines %v) != total %v", o.ID, p.Type, p.Base, p.TaxTotal, taxes, p.Total)
		}
		sum = sum.Add(p.Total.Times(p.Count))
	}
	if sum != o.Price.Total {
		t.Fatalf("offer %s: passengers add up to %v, total %v", o.ID, sum, o.Price.Total)
	}
}

func TestOffersOneWay(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		e := newEngine(t, dialect)
		ctx := context.Background()
		offers, err := e.OffersFor(ctx, search("AMS", "JFK", 3, "ADT", "CHD", "INF"), 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(offers) == 0 {
			t.Fatal("no offers from AMS to JFK")
		}
		nonstop, connecting := 0, 0
		for _, o := range offers {
			checkPrice(t, o)
			if o.Segments[0].Flight.OriginCode != "AMS" || o.Segments[len(o.Segments)-1].Flight.DestinationCode != "JFK" {
				t.Fatalf("offer %s goes %s to %s", o.ID, o.Segments[0].Flight.OriginCode, o.Segments[len(o.Segments)-1].Flight.DestinationCode)
			}
			switch len(o.Segments) {
			case 1:
				nonstop++
			case 2:
				connecting++
				a, b := o.Segments[0].Flight, o.Segments[1].Flight
				gap := b.DepartureUTC.Sub(a.ArrivalUTC)
				if a.DestinationCode != b.OriginCode || gap < travel.MinConnection || gap > travel.MaxConnection || o.Segments[0].ConnectionMinutes != int(gap/time.Minute) {
					t.Fatalf("offer %s connects %s→%s after %v", o.ID, a.DestinationCode, b.OriginCode, gap)
				}
			}
			if o.SeatsLeft < 2 || o.Price.Total.Currency != "EUR" || !o.ExpiresAt.Equal(o.QuotedAt.Add(flightgraph.OfferValidity)) {
				t.Fatalf("offer %s: %d seats left, %v, quoted %v expires %v", o.ID, o.SeatsLeft, o.Price.Total, o.QuotedAt, o.ExpiresAt)
			}
		}
		if nonstop == 0 || connecting == 0 {
			t.Errorf("%d nonstop and %d connecting offers, want both", nonstop, connecting)
		}
	})
}

// TestOffersReadBack: an offer id read back within its validity gives the same offer at the same
// price; after it, OFFER_410.000; altered, or signed under another key, OFFER_400.000.
func TestOffersReadBack(t *testing.T) {
	e := newEngine(t, store.SQLite)
	ctx := context.Background()
	offers, err := e.OffersFor(ctx, search("CDG", "AMS", 2, "ADT", "YTH"), 0)
	if err != nil || len(offers) == 0 {
		t.Fatalf("%d offers, %v", len(offers), err)
	}
	e.now = e.now.Add(flightgraph.OfferValidity - time.Second)
	for _, o := range offers {
		back, err := e.Offer(ctx, "offerId", o.ID)
		if err != nil {
			t.Fatal(err)
		}
		if back.ID != o.ID || back.Price.Total != o.Price.Total || back.SeatsLeft != o.SeatsLeft || len(back.Segments) != len(o.Segments) || back.Family != o.Family {
			t.Fatalf("read back %+v, searched %+v", back, o)
		}
	}
	id := offers[0].ID
	// Among them, the same id with a line break in its payload or its signature: base64's decoders
	// skip CR and LF, so without openID's check it was a second spelling of the same offer.
	for _, bad := range []string{"", "o1.", id[:len(id)-1], id + "A", strings.Replace(id, ".", "", 1), "o2" + id[2:], flipOne(id, len("o1.")+3), flipOne(id, len(id)-3),
		strings.Repeat("o1.A", 1000), id[:len("o1.")+4] + "\n" + id[len("o1.")+4:], id[:len(id)-2] + "\r" + id[len(id)-2:]} {
		if _, err := e.Offer(ctx, "offerId", bad); flightgraph.ErrorCode(err) != flightgraph.ECodeOfferInvalid {
			t.Errorf("offer id %.40q: %v, want %s", bad, err, flightgraph.ECodeOfferInvalid)
		}
	}
	// Signed with our key but with passengers no search allows: refused, not priced.
	for _, pax := range []string{"ADT0", "INF1", "ADT10", "DOG1"} {
		payload := fmt.Sprintf("%d|OUTBOUND|ECONOMY_LIGHT|%s|EUR|%s", e.now.Unix(), pax, offers[0].Segments[0].Flight.ID)
		m := hmac.New(sha256.New, e.OfferKey)
		m.Write([]byte(payload))
		forged := "o1." + base64.RawURLEncoding.EncodeToString([]byte(payload)) + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
		if _, err := e.Offer(ctx, "offerId", forged); flightgraph.ErrorCode(err) != flightgraph.ECodeOfferInvalid {
			t.Errorf("a signed offer of %s: %v", pax, err)
		}
	}
	other := newEngine(t, store.SQLite)
	other.OfferKey = []byte(strings.Repeat("x", 32))
	if _, err := other.Offer(ctx, "offerId", id); flightgraph.ErrorCode(err) != flightgraph.ECodeOfferInvalid {
		t.Errorf("another key's offer: %v", err)
	}
	e.now = e.now.Add(time.Second)
	if _, err := e.Offer(ctx, "offerId", id); flightgraph.ErrorCode(err) != flightgraph.ECodeOfferExpired {
		t.Errorf("an expired offer: %v", err)
	}
}

func flipOne(s string, i int) string {
	b := []byte(s)
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

// TestOffersAreConsistent searches many generated trips (routes of the network, dates, passenger
// mixes, cabins, currencies) and checks the rules that make prices trustworthy on each: prices add
// up, the same search gives the same offers, a family dearer than another on the same itinerary
// costs more, fewer seats are left closer to departure, and a price in another currency is the
// euro price converted line by line.
func TestOffersAreConsistent(t *testing.T) {
	e := newEngine(t, store.SQLite)
	ctx := context.Background()
	routes, err := e.Network.AllRoutes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	mixes := [][]string{{"ADT"}, {"ADT", "ADT"}, {"ADT", "CHD", "INF"}, {"YTH"}, {"YCD", "C14"}, {"ADT", "INF", "ADT", "CHD"}}
	currencies := []string{"", "USD", "JPY", "BHD", "GBP"}
	searched := 0
	for range 60 {
		rt := routes[r.IntN(len(routes))]
		q := search(rt.OriginCode, rt.DestinationCode, 1+r.IntN(windowAhead-1), mixes[r.IntN(len(mixes))]...)
		q.Currency = currencies[r.IntN(len(currencies))]
		if r.IntN(2) == 0 {
			q.Cabins = []flightgraph.CabinClass{flightgraph.CabinEconomy}
		}
		name := fmt.Sprintf("%s-%s %s %v %s", rt.OriginCode, rt.DestinationCode, q.Connections[0].DepartureDate, q.Passengers, q.Currency)
		offers, err := e.OffersFor(ctx, q, 0)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		searched += len(offers)
		again, err := e.OffersFor(ctx, q, 0)
		if err != nil || len(again) != len(offers) {
			t.Fatalf("%s: again %d offers, %v", name, len(again), err)
		}
		byItinerary := map[string][]*flightgraph.Offer{}
		for i, o := range offers {
			checkPrice(t, o)
			if again[i].ID != o.ID || again[i].Price.Total != o.Price.Total {
				t.Fatalf("%s: the same search gave %s %v, then %s %v", name, o.ID, o.Price.Total, again[i].ID, again[i].Price.Total)
			}
			if q.Cabins != nil && o.Cabin != flightgraph.CabinEconomy {
				t.Fatalf("%s: a %s offer for an Economy search", name, o.Cabin)
			}
			key := string(o.Cabin)
			for _, s := range o.Segments {
				key += " " + s.Flight.ID
			}
			byItinerary[key] = append(byItinerary[key], o)
		}
		for key, fams := range byItinerary {
			slices.SortFunc(fams, func(a, b *flightgraph.Offer) int { return a.Family.Rank - b.Family.Rank })
			for i := 1; i < len(fams); i++ {
				if fams[i].Price.Total.Minor <= fams[i-1].Price.Total.Minor {
					t.Errorf("%s %s: %s costs %v, not more than %s's %v", name, key, fams[i].Family.Code, fams[i].Price.Total, fams[i-1].Family.Code, fams[i-1].Price.Total)
				}
			}
		}
		if q.Currency != "" && len(offers) > 0 {
			inEuros := *q
			inEuros.Currency = "EUR"
			euro, err := e.OffersFor(ctx, &inEuros, 0)
			if err != nil || len(euro) != len(offers) {
				t.Fatalf("%s in euros: %d offers, %v", name, len(euro), err)
			}
			cur, _ := flightgraph.CurrencyOf("currency", q.Currency)
			for i, o := range offers {
				for j, p := range o.Price.Passengers {
					ep := euro[i].Price.Passengers[j]
					if ep.Base.In(cur) != p.Base && len(o.Segments) == 1 {
						t.Fatalf("%s: base %v, in euros %v → %v", name, p.Base, ep.Base, ep.Base.In(cur))
					}
					for k, l := range p.Taxes {
						if ep.Taxes[k].Amount.In(cur) != l.Amount {
							t.Fatalf("%s: %s %v, in euros %v", name, l.Name, l.Amount, ep.Taxes[k].Amount)
						}
					}
				}
			}
		}
	}
	if searched < 500 {
		t.Errorf("only %d offers over 60 searches: the generator finds too few trips", searched)
	}
}

// TestSeatsFallAsDepartureNears: the same flight quoted later has no more seats left, and the
// price of its cheapest family moves only with the rules (lead, load), never below zero.
func TestSeatsFallAsDepartureNears(t *testing.T) {
	e := newEngine(t, store.SQLite)
	ctx := context.Background()
	q := search("AMS", "LHR", windowAhead-1)
	q.Cabins = []flightgraph.CabinClass{flightgraph.CabinEconomy}
	var (
		seats  []int
		flight string
	)
	for _, later := range []int{0, 3, 6} {
		e.now = storetest.Now.AddDate(0, 0, later)
		offers, err := e.OffersFor(ctx, q, 0)
		if err != nil || len(offers) == 0 {
			t.Fatalf("%d offers, %v", len(offers), err)
		}
		if flight == "" {
			flight = offers[0].Segments[0].Flight.ID
		}
		i := slices.IndexFunc(offers, func(o *flightgraph.Offer) bool { return o.Segments[0].Flight.ID == flight })
		seats = append(seats, offers[i].Segments[0].SeatsLeft)
	}
	if seats[0] < seats[1] || seats[1] < seats[2] || seats[0] == seats[2] {
		t.Errorf("seats left as departure nears: %v", seats)
	}
}

func TestOfferSearchIsValidated(t *testing.T) {
	e := newEngine(t, store.SQLite)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		q    *flightgraph.OfferSearch
		code string
	}{
		{"no connection", &flightgraph.OfferSearch{Passengers: []flightgraph.Passenger{{ID: 1, Type: "ADT"}}}, flightgraph.ECodeMissingParameter},
		{"three connections", func() *flightgraph.OfferSearch {
			q := search("AMS", "CDG", 1)
			q.Connections = append(q.Connections, q.Connections[0], q.Connections[0])
			return q
		}(), flightgraph.ECodeInvalidParameter},
		{"no passenger", &flightgraph.OfferSearch{Connections: search("AMS", "CDG", 1).Connections}, flightgraph.ECodeMissingParameter},
		{"ten seats", search("AMS", "CDG", 1, slices.Repeat([]string{"ADT"}, 10)...), flightgraph.ECodeInvalidParameter},
		{"a child alone", search("AMS", "CDG", 1, "CHD"), flightgraph.ECodeInvalidParameter},
		{"two infants, one adult", search("AMS", "CDG", 1, "ADT", "INF", "INF"), flightgraph.ECodeInvalidParameter},
		{"unknown type", search("AMS", "CDG", 1, "ADT", "DOG"), flightgraph.ECodeInvalidParameter},
		{"bad date", func() *flightgraph.OfferSearch {
			q := search("AMS", "CDG", 1)
			q.Connections[0].DepartureDate = "2026-13-01"
			return q
		}(), flightgraph.ECodeBadFormat},
		{"unknown airport", search("AMS", "QQQ", 1), flightgraph.ECodeIATANotFound},
		{"same place", search("PAR", "CDG", 1), flightgraph.ECodeInvalidParameter},
		{"bad cabin", func() *flightgraph.OfferSearch {
			q := search("AMS", "CDG", 1)
			q.Cabins = []flightgraph.CabinClass{"ALL", "ECONOMY"}
			return q
		}(), flightgraph.ECodeInvalidParameter},
		{"unknown currency", func() *flightgraph.OfferSearch { q := search("AMS", "CDG", 1); q.Currency = "XXX"; return q }(), flightgraph.ECodeInvalidParameter},
		{"malformed currency", func() *flightgraph.OfferSearch { q := search("AMS", "CDG", 1); q.Currency = "E1"; return q }(), flightgraph.ECodeBadFormat},
	} {
		if _, err := e.OffersFor(ctx, c.q, 0); flightgraph.ErrorCode(err) != c.code {
			t.Errorf("%s: %v, want %s", c.name, err, c.code)
		}
	}
}

// TestCalendarIsTheSearchesCheapest: a calendar's day is the cheapest offer a search of that day
// gives (the first of the cheapest), over generated routes, passengers and cabins; its months and
// its whole interval are the cheapest of their days.
func TestCalendarIsTheSearchesCheapest(t *testing.T) {
	e := newEngine(t, store.SQLite)
	ctx := context.Background()
	routes, err := e.Network.AllRoutes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	days, err := flightgraph.ParseDateInterval(storetest.Now.Format(flightgraph.DateLayout)+"/"+storetest.Now.AddDate(0, 0, windowAhead).Format(flightgraph.DateLayout), storetest.Now)
	if err != nil {
		t.Fatal(err)
	}
	priced := 0
	for range 12 {
		rt := routes[r.IntN(len(routes))]
		pax := [][]string{{"ADT"}, {"ADT", "CHD", "INF"}, {"YTH", "YTH"}}[r.IntN(3)]
		q := search(rt.OriginCode, rt.DestinationCode, 0, pax...)
		if r.IntN(2) == 0 {
			q.Cabins = []flightgraph.CabinClass{flightgraph.CabinBusiness, flightgraph.CabinEconomy}
		}
		q.Connections[0].DepartureDate = ""
		cal, err := e.LowestFares(ctx, q, 0, days, flightgraph.CalendarDay)
		if err != nil {
			t.Fatal(err)
		}
		if len(cal) != len(days) {
			t.Fatalf("%d days in a calendar of %d", len(cal), len(days))
		}
		var cheapest *flightgraph.Offer
		for i, day := range cal {
			one := *q
			one.Connections = []flightgraph.RequestedConnection{{Origin: rt.OriginCode, Destination: rt.DestinationCode, DepartureDate: days[i]}}
			offers, err := e.OffersFor(ctx, &one, 0)
			if err != nil {
				t.Fatal(err)
			}
			var want *flightgraph.Offer
			for _, o := range offers {
				if want == nil || o.Price.Total.Minor < want.Price.Total.Minor {
					want = o
				}
			}
			switch {
			case want == nil && day.Offer == nil:
			case want == nil || day.Offer == nil || want.ID != day.Offer.ID || want.Price.Total != day.Offer.Price.Total:
				t.Fatalf("%s-%s %s: the calendar says %v, the search's cheapest is %v", rt.OriginCode, rt.DestinationCode, days[i], offerName(day.Offer), offerName(want))
			default:
				priced++
				if cheapest == nil || day.Offer.Price.Total.Minor < cheapest.Price.Total.Minor {
					cheapest = day.Offer
				}
			}
		}
		overall, err := e.LowestFares(ctx, q, 0, days, flightgraph.CalendarOverall)
		if err != nil || len(overall) != 1 {
			t.Fatalf("overall: %v %v", overall, err)
		}
		if offerName(overall[0].Offer) != offerName(cheapest) {
			t.Errorf("overall %v, cheapest day %v", offerName(overall[0].Offer), offerName(cheapest))
		}
		months, err := e.LowestFares(ctx, q, 0, days, flightgraph.CalendarMonth)
		if err != nil || len(months) == 0 || months[0].Period != days[0][:7] {
			t.Fatalf("months: %v %v", months, err)
		}
	}
	if priced < 30 {
		t.Errorf("only %d days had offers", priced)
	}
}

func offerName(o *flightgraph.Offer) string {
	if o == nil {
		return "nothing"
	}
	return o.Price.Total.String() + " " + o.ID
}

// TestUpsellIsTheSearchsOtherFamilies: an offer's upsell offers are the offers the same search
// gave for the same flights in dearer families and cabins: the same ids, the same prices.
func TestUpsellIsTheSearchsOtherFamilies(t *testing.T) {
	e := newEngine(t, store.SQLite)
	ctx := context.Background()
	routes, err := e.Network.AllRoutes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	checked := 0
	for range 15 {
		rt := routes[r.IntN(len(routes))]
		offers, err := e.OffersFor(ctx, search(rt.OriginCode, rt.DestinationCode, 1+r.IntN(windowAhead-1), "ADT", "CHD"), 0)
		if err != nil {
			t.Fatal(err)
		}
		byID := map[string]*flightgraph.Offer{}
		for _, o := range offers {
			byID[o.ID] = o
		}
		for _, o := range offers {
			if o.Family.Rank != 1 || o.Cabin != flightgraph.CabinEconomy {
				continue
			}
			same, ups, err := e.Upsell(ctx, "offerId", o.ID)
			if err != nil {
				t.Fatal(err)
			}
			if same.ID != o.ID || same.Price.Total != o.Price.Total {
				t.Fatalf("upsell read %s %v back as %s %v", o.ID, o.Price.Total, same.ID, same.Price.Total)
			}
			want := 0
			for _, other := range offers {
				if itineraryOf(other) == itineraryOf(o) && other.ID != o.ID {
					want++
				}
			}
			if len(ups) != want {
				t.Fatalf("%s: %d upsell offers, the search has %d other families for its flights", o.ID, len(ups), want)
			}
			for _, u := range ups {
				if s := byID[u.ID]; s == nil || s.Price.Total != u.Price.Total {
					t.Fatalf("upsell %s %v is not the search's offer", u.Family.Code, u.Price.Total)
				}
			}
			checked++
		}
	}
	if checked < 20 {
		t.Errorf("only %d offers were upsold", checked)
	}
}

func itineraryOf(o *flightgraph.Offer) string {
	s := ""
	for _, seg := range o.Segments {
		s += seg.Flight.ID + " "
	}
	return s
}

// TestSearchesPastTheirBoundsAreRefused: a search whose candidate flights pass a bound is refused,
// not answered from the first of them. Without the check, the one-day search would price the
// first few flights of the day, and a day of the calendar would differ from that day's search.
func TestSearchesPastTheirBoundsAreRefused(t *testing.T) {
	e := newEngine(t, store.SQLite)
	ctx := context.Background()
	day := search("AMS", "PAR", 1)
	all, err := e.OffersFor(ctx, day, 0)
	if err != nil || len(all) == 0 {
		t.Fatalf("AMS-PAR tomorrow: %d offers, %v", len(all), err)
	}
	days, err := flightgraph.ParseDateInterval(storetest.Now.Format(flightgraph.DateLayout)+"/"+storetest.Now.AddDate(0, 0, windowAhead).Format(flightgraph.DateLayout), storetest.Now)
	if err != nil {
		t.Fatal(err)
	}

	restore := travel.SetCandidateBounds(3, 1_000_000)
	if offers, err := e.OffersFor(ctx, day, 0); err == nil || flightgraph.ErrorCode(err) != flightgraph.ECodeInternal {
		t.Errorf("a day past its bound: %d offers, %v; want a defect", len(offers), err)
	}
	restore()
	restore = travel.SetCandidateBounds(1_000, 60)
	defer restore()
	_, err = e.LowestFares(ctx, search("AMS", "PAR", 0), 0, days, flightgraph.CalendarDay)
	if flightgraph.ErrorCode(err) != flightgraph.ECodeInvalidParameter || !strings.Contains(err.Error(), "fewer days") {
		t.Errorf("a calendar past its bound: %v", err)
	}
	if again, err := e.OffersFor(ctx, day, 0); err != nil || len(again) != len(all) {
		t.Errorf("one day within the bound: %d offers, %v; want %d", len(again), err, len(all))
	}
}

// TestInboundCalendar: an INBOUND calendar of a return search without dates prices the return's
// days; one starting before its outbound's date is refused, as any return before its outbound.
func TestInboundCalendar(t *testing.T) {
	e := newEngine(t, store.SQLite)
	ctx := context.Background()
	days, err := flightgraph.ParseDateInterval(storetest.Now.AddDate(0, 0, 1).Format(flightgraph.DateLayout)+"/"+storetest.Now.AddDate(0, 0, 3).Format(flightgraph.DateLayout), storetest.Now)
	if err != nil {
		t.Fatal(err)
	}
	trip := func(outbound string) *flightgraph.OfferSearch {
		return &flightgraph.OfferSearch{Passengers: []flightgraph.Passenger{{ID: 1, Type: "ADT"}}, Connections: []flightgraph.RequestedConnection{
			{Origin: "AMS", Destination: "LON", DepartureDate: outbound}, {Origin: "LON", Destination: "AMS"}}}
	}
	cal, err := e.LowestFares(ctx, trip(""), 1, days, flightgraph.CalendarDay)
	if err != nil || len(cal) != 3 {
		t.Fatalf("inbound calendar: %d days, %v", len(cal), err)
	}
	for _, lf := range cal {
		if lf.Offer == nil || lf.Offer.Bound != flightgraph.Inbound || !strings.HasPrefix(lf.Offer.Segments[0].Flight.ID, strings.ReplaceAll(lf.Period, "-", "")) ||
			lf.Offer.Segments[0].OriginCity != "LON" {
			t.Errorf("%s: %+v", lf.Period, lf.Offer)
		}
	}
	if _, err := e.LowestFares(ctx, trip(days[2]), 1, days, flightgraph.CalendarDay); flightgraph.ErrorCode(err) != flightgraph.ECodeInvalidParameter {
		t.Errorf("a return calendar before its outbound: %v", err)
	}
}
