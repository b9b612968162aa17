package travel_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
	"github.com/flightgraph/flightgraph/travel"
)

// TestCartsAddUp: over generated return trips, a cart's total is its offers' totals plus its
// products' unit prices times their quantities; its id reads the same cart back; adding products
// adds up; an extra bag costs what the baggage API's extra-baggage costs online on that flight.
func TestCartsAddUp(t *testing.T) {
	e := newEngine(t, store.SQLite)
	ctx := context.Background()
	routes, err := e.Network.AllRoutes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	mixes := [][]string{{"ADT"}, {"ADT", "CHD", "INF"}, {"YTH", "YTH"}, {"ADT", "INF"}}
	carts := 0
	for range 25 {
		rt := routes[r.IntN(len(routes))]
		q := search(rt.OriginCode, rt.DestinationCode, 1+r.IntN(3), mixes[r.IntN(len(mixes))]...)
		back := q.Connections[0]
		back.Origin, back.Destination = back.Destination, back.Origin
		back.DepartureDate = storetest.Now.AddDate(0, 0, 5+r.IntN(3)).Format(flightgraph.DateLayout)
		q.Connections = append(q.Connections, back)
		q.Currency = []string{"", "USD", "JPY", "BHD"}[r.IntN(4)]
		out, err := e.OffersFor(ctx, q, 0)
		if err != nil {
			t.Fatal(err)
		}
		in, err := e.OffersFor(ctx, q, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) == 0 || len(in) == 0 {
			continue
		}
		name := fmt.Sprintf("%s-%s %v %s", rt.OriginCode, rt.DestinationCode, q.Passengers, q.Currency)
		o1, o2 := out[r.IntN(len(out))], in[r.IntN(len(in))]
		related := travel.RelatedProducts(o1, o2)
		var want []flightgraph.CartProduct
		for _, p := range related {
			if p.MaxQuantity > 0 && r.IntN(3) == 0 {
				want = append(want, flightgraph.CartProduct{ID: p.ID, Quantity: 1 + r.IntN(p.MaxQuantity)})
			}
		}
		c, err := e.NewCart(ctx, []string{o1.ID, o2.ID}, want)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		total := o1.Price.Total.Add(o2.Price.Total)
		for i, it := range c.Items {
			if it.Product.ID != want[i].ID || it.Quantity != want[i].Quantity || it.Total != it.Product.UnitPrice.Times(it.Quantity) ||
				it.Product.UnitPrice.Currency != o1.Price.Total.Currency {
				t.Fatalf("%s: item %d %+v, asked %+v", name, i, it, want[i])
			}
			total = total.Add(it.Total)
			if it.Product.Code == flightgraph.ProductExtraBag {
				checkExtraBag(t, e, it.Product, o1, o2)
			}
		}
		if c.Total != total || !c.ExpiresAt.Equal(minTime(o1.ExpiresAt, o2.ExpiresAt)) {
			t.Fatalf("%s: cart total %s, its parts %s", name, c.Total.Decimal(), total.Decimal())
		}
		again, err := e.Cart(ctx, "cartId", c.ID)
		if err != nil || again.ID != c.ID || again.Total != c.Total || len(again.Items) != len(c.Items) {
			t.Fatalf("%s: read back %+v, %v", name, again, err)
		}
		added, err := e.AddToCart(ctx, "cartId", c.ID, []flightgraph.CartProduct{{ID: flightgraph.ProductInsurance, Quantity: 1}})
		if err != nil {
			if flightgraph.ErrorCode(err) != flightgraph.ECodeInvalidParameter { // insurance for everyone already
				t.Fatalf("%s: add: %v", name, err)
			}
		} else if added.Total != c.Total.Add(related[len(related)-1].UnitPrice) || added.ID == c.ID {
			t.Fatalf("%s: adding insurance made %s of %s", name, added.Total.Decimal(), c.Total.Decimal())
		}
		carts++
	}
	if carts < 10 {
		t.Fatalf("only %d carts priced", carts)
	}
}

// checkExtraBag holds an extra bag's price to the baggage API's extra-baggage online on the
// product's flight.
func checkExtraBag(t *testing.T, e *engine, p *flightgraph.RelatedProduct, offers ...*flightgraph.Offer) {
	t.Helper()
	for _, o := range offers {
		for _, s := range o.Segments {
			if s.Flight.ID != p.FlightID {
				continue
			}
			e.Loyalty = nil
			a, err := e.BaggageAllowances(context.Background(), flightgraph.BaggageQuery{Origin: s.Flight.OriginCode, Destination: s.Flight.DestinationCode,
				TravelClass: o.Cabin, Type: flightgraph.BaggagePaid, DepartureDate: s.Flight.ScheduleDate})
			if err != nil {
				t.Fatal(err)
			}
			for _, seg := range a.Passengers[0].Paid {
				if seg.FlightNumber != s.Flight.Designator() {
					continue
				}
				online := seg.Products[0].Online.In(mustCurrency(t, p.UnitPrice.Currency))
				if seg.Products[0].Identifier != "extra-baggage" || online != p.UnitPrice {
					t.Errorf("%s: an extra bag costs %s in a cart, the baggage API says %s", p.ID, p.UnitPrice.Decimal(), online.Decimal())
				}
				return
			}
		}
	}
}

func mustCurrency(t *testing.T, code string) flightgraph.Currency {
	c, err := flightgraph.CurrencyOf("currency", code)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// TestCartsRefuse: what a cart refuses, with its code, and ids that are not its own.
func TestCartsRefuse(t *testing.T) {
	e := newEngine(t, store.SQLite)
	ctx := context.Background()
	q := search("AMS", "LON", 1, "ADT", "INF")
	back := q.Connections[0]
	back.Origin, back.Destination, back.DepartureDate = "LON", "AMS", storetest.Now.AddDate(0, 0, 4).Format(flightgraph.DateLayout)
	q.Connections = append(q.Connections, back)
	out, err := e.OffersFor(ctx, q, 0)
	if err != nil || len(out) == 0 {
		t.Fatal(err)
	}
	in, err := e.OffersFor(ctx, q, 1)
	if err != nil || len(in) == 0 {
		t.Fatal(err)
	}
	other, err := e.OffersFor(ctx, search("AMS", "LON", 1, "ADT", "ADT"), 0)
	if err != nil || len(other) == 0 {
		t.Fatal(err)
	}
	// The way back of another trip: NYC to AMS, after an AMS to LON outbound.
	q2 := search("AMS", "NYC", 1, "ADT", "INF")
	back2 := q2.Connections[0]
	back2.Origin, back2.Destination, back2.DepartureDate = "NYC", "AMS", storetest.Now.AddDate(0, 0, 4).Format(flightgraph.DateLayout)
	q2.Connections = append(q2.Connections, back2)
	otherTrip, err := e.OffersFor(ctx, q2, 1)
	if err != nil || len(otherTrip) == 0 {
		t.Fatal(err)
	}
	seat := travel.RelatedProducts(out[0])[0]
	const huge = int(^uint(0) >> 1) // two of them wrap a sum of quantities below zero
	many := make([]flightgraph.CartProduct, flightgraph.MaxCartItems+1)
	for i := range many {
		many[i] = flightgraph.CartProduct{ID: flightgraph.ProductInsurance, Quantity: 1}
	}
	for _, c := range []struct {
		name     string
		offers   []string
		products []flightgraph.CartProduct
		code     string
	}{
		{"no offer", nil, nil, flightgraph.ECodeMissingParameter},
		{"three offers", []string{out[0].ID, in[0].ID, in[1].ID}, nil, flightgraph.ECodeInvalidParameter},
		{"inbound first", []string{in[0].ID, out[0].ID}, nil, flightgraph.ECodeInvalidParameter},
		{"two outbounds", []string{out[0].ID, out[1].ID}, nil, flightgraph.ECodeInvalidParameter},
		{"other passengers", []string{other[0].ID, in[0].ID}, nil, flightgraph.ECodeInvalidParameter},
		{"the way back of another trip", []string{out[0].ID, otherTrip[0].ID}, nil, flightgraph.ECodeInvalidParameter},
		{"a lone inbound", []string{in[0].ID}, nil, flightgraph.ECodeInvalidParameter},
		{"quantities that wrap", []string{out[0].ID}, []flightgraph.CartProduct{{ID: seat.ID, Quantity: 1}, {ID: seat.ID, Quantity: huge}, {ID: seat.ID, Quantity: huge - 4}}, flightgraph.ECodeInvalidParameter},
		{"unknown product", []string{out[0].ID}, []flightgraph.CartProduct{{ID: "CHAMPAGNE", Quantity: 1}}, flightgraph.ECodeInvalidParameter},
		{"a product of another flight", []string{out[0].ID}, []flightgraph.CartProduct{{ID: "SEAT_XL:20261123+XX+9999", Quantity: 1}}, flightgraph.ECodeInvalidParameter},
		{"no quantity", []string{out[0].ID}, []flightgraph.CartProduct{{ID: seat.ID}}, flightgraph.ECodeInvalidParameter},
		{"a seat for the infant too", []string{out[0].ID}, []flightgraph.CartProduct{{ID: seat.ID, Quantity: 2}}, flightgraph.ECodeInvalidParameter},
		{"one and one more than seats", []string{out[0].ID}, []flightgraph.CartProduct{{ID: seat.ID, Quantity: 1}, {ID: seat.ID, Quantity: 1}}, flightgraph.ECodeInvalidParameter},
		{"too many products", []string{out[0].ID}, many, flightgraph.ECodeInvalidParameter},
		{"an altered offer", []string{out[0].ID + "x"}, nil, flightgraph.ECodeOfferInvalid},
	} {
		if _, err := e.NewCart(ctx, c.offers, c.products); flightgraph.ErrorCode(err) != c.code {
			t.Errorf("%s: %v, want %s", c.name, err, c.code)
		}
	}

	c, err := e.NewCart(ctx, []string{out[0].ID, in[0].ID}, []flightgraph.CartProduct{{ID: seat.ID, Quantity: 1}})
	if err != nil {
		t.Fatal(err)
	}
	body, sig, _ := strings.Cut(strings.TrimPrefix(c.ID, "c1."), ".")
	for name, id := range map[string]string{
		"an offer id":     out[0].ID,
		"altered":         "c1." + flipOne(body, 5) + "." + sig,
		"unsigned":        "c1." + body + ".",
		"too long":        c.ID + strings.Repeat("A", 5000),
		"another version": "c2." + body + "." + sig,
	} {
		if _, err := e.Cart(ctx, "cartId", id); flightgraph.ErrorCode(err) != flightgraph.ECodeOfferInvalid {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Another replica's key: the same cart is foreign.
	foreign := *e.Service
	foreign.OfferKey = []byte(strings.Repeat("f", 32))
	if _, err := foreign.Cart(ctx, "cartId", c.ID); flightgraph.ErrorCode(err) != flightgraph.ECodeOfferInvalid {
		t.Errorf("a foreign cart: %v", err)
	}
	e.now = c.ExpiresAt
	if _, err := e.Cart(ctx, "cartId", c.ID); flightgraph.ErrorCode(err) != flightgraph.ECodeOfferExpired {
		t.Errorf("an expired cart: %v", err)
	}
}
