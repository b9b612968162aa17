package travel_test

import (
	"context"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store"
)

// FuzzSignedIDs feeds offer and cart ids, real ones and whatever the fuzzer makes of them, to the
// operations that read them back. An id is hostile input that reaches the engine on every
// read-back: whatever it holds, the answer is the offer or cart it names, or the catalogue's
// invalid or expired refusal, never a panic, an internal error or a second spelling of a valid id.
//
//	go test ./travel -run '^$' -fuzz FuzzSignedIDs -fuzztime 60s
func FuzzSignedIDs(f *testing.F) {
	e := newEngine(f, store.SQLite)
	ctx := context.Background()
	q := search("AMS", "CDG", 2, "ADT", "CHD")
	offers, err := e.OffersFor(ctx, q, 0)
	if err != nil || len(offers) == 0 {
		f.Fatalf("no offers to seed the corpus: %d, %v", len(offers), err)
	}
	cart, err := e.NewCart(ctx, []string{offers[0].ID}, []flightgraph.CartProduct{{ID: flightgraph.ProductInsurance, Quantity: 1}})
	if err != nil {
		f.Fatal(err)
	}
	for _, id := range []string{offers[0].ID, offers[len(offers)-1].ID, cart.ID, "o1.", "c1..", "o1.fA.AA", ""} {
		f.Add(id)
	}
	f.Fuzz(func(t *testing.T, id string) {
		refused := func(what string, err error) {
			switch code := flightgraph.ErrorCode(err); code {
			case flightgraph.ECodeOfferInvalid, flightgraph.ECodeOfferExpired:
			default:
				t.Fatalf("%s %q: %v (code %q), want the offer invalid or expired refusal", what, id, err, code)
			}
		}
		if o, err := e.Offer(ctx, "offerId", id); err != nil {
			refused("offer", err)
		} else if o.ID != id {
			t.Fatalf("offer id %q read back as %q: two spellings of one offer", id, o.ID)
		}
		if c, err := e.Cart(ctx, "cartId", id); err != nil {
			refused("cart", err)
		} else if c.ID != id {
			t.Fatalf("cart id %q read back as %q: two spellings of one cart", id, c.ID)
		}
	})
}
