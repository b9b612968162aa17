package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store/storetest"
)

type cartView struct {
	ID        string
	ExpiresAt string
	Offers    []productView
	Products  []struct {
		Product  relatedView
		Quantity int
		Total    struct{ Amount, Currency string }
	}
	TotalPrice struct{ Amount, Currency string }
	Links      struct{ Self, RelatedProducts, TicketConditions struct{ Href string } } `json:"_links"`
}

type relatedView struct {
	ID, Code, Name, FlightID string
	UnitPrice                struct{ Amount, Currency string }
	MaxQuantity              int
}

// TestShoppingCarts: a cart on the original's paths and in GraphQL. Its total is its offers'
// plus its products'; its Location reads it back; products are added under a new id; its
// reservation identifier gives its outbound's ticket conditions; GraphQL prices the same cart the
// same; and every refusal has its code on both edges.
func TestShoppingCarts(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServerWith(t, storetest.Seeded(t, dialect, os.Getenv), nil)
		bearer := map[string]string{"Authorization": "Bearer " + s.bearerToken(t, "")}
		v, _ := searchOffers(t, s, bearer, offerSearch("AMS", "LON", "ADT", "CHD"))
		offer := v.Itineraries[0].FlightProducts[0]
		var related struct{ RelatedProducts []relatedView }
		get(t, s, "/opendata/offers/v1/related-products?offerId="+url.QueryEscape(offer.ID), bearer, &related)
		if len(related.RelatedProducts) < 3 {
			t.Fatalf("related products: %+v", related)
		}
		seat, insurance := related.RelatedProducts[0], related.RelatedProducts[len(related.RelatedProducts)-1]
		if seat.FlightID == "" || seat.MaxQuantity != 2 || insurance.Code != "INSURANCE" || insurance.FlightID != "" {
			t.Fatalf("seat %+v, insurance %+v", seat, insurance)
		}

		create := map[string]any{"offerIds": []string{offer.ID}, "products": []map[string]any{{"id": seat.ID, "quantity": 2}}}
		code, h, raw := s.call(t, http.MethodPost, "/opendata/offers/v1/shopping-carts", bearer, jsonOf(create))
		if code != http.StatusCreated {
			t.Fatalf("create: %d %s", code, raw)
		}
		var cart cartView
		if err := json.Unmarshal([]byte(raw), &cart); err != nil {
			t.Fatal(err)
		}
		want := money(t, offer.Price.TotalPrice, offer.Price.Currency).Add(money(t, seat.UnitPrice.Amount, offer.Price.Currency).Times(2))
		if cart.TotalPrice.Amount != want.Decimal() || len(cart.Offers) != 1 || cart.Offers[0].ID != offer.ID || len(cart.Products) != 1 || cart.Products[0].Quantity != 2 {
			t.Fatalf("cart %+v, want a total of %s", cart, want.Decimal())
		}
		if h.Get("Location") != cart.Links.Self.Href {
			t.Errorf("Location %q, self %q", h.Get("Location"), cart.Links.Self.Href)
		}
		var back cartView
		get(t, s, h.Get("Location"), bearer, &back)
		if jsonOf(back) != jsonOf(cart) {
			t.Errorf("read back %+v, created %+v", back, cart)
		}

		code, h, raw = s.call(t, http.MethodPost, "/opendata/offers/v1/related-products/shopping-carts", bearer,
			jsonOf(map[string]any{"cartId": cart.ID, "products": []map[string]any{{"id": insurance.ID, "quantity": 1}}}))
		var added cartView
		if code != http.StatusCreated || json.Unmarshal([]byte(raw), &added) != nil {
			t.Fatalf("add: %d %s", code, raw)
		}
		if added.ID == cart.ID || added.TotalPrice.Amount != want.Add(money(t, insurance.UnitPrice.Amount, offer.Price.Currency)).Decimal() || len(added.Products) != 2 {
			t.Errorf("added %+v", added)
		}
		var byCart struct{ RelatedProducts []relatedView }
		get(t, s, added.Links.RelatedProducts.Href, bearer, &byCart)
		if jsonOf(byCart.RelatedProducts) != jsonOf(related.RelatedProducts) {
			t.Errorf("related products of the cart %+v, of its offer %+v", byCart, related)
		}
		var byReservation, byOffer struct{ FareFamily struct{ Code string } }
		get(t, s, added.Links.TicketConditions.Href, bearer, &byReservation)
		get(t, s, "/opendata/offers/v1/ticket-conditions?offerId="+url.QueryEscape(offer.ID), bearer, &byOffer)
		if byReservation.FareFamily.Code != offer.FareFamily.Code || jsonOf(byReservation) != jsonOf(byOffer) {
			t.Errorf("conditions by reservation %+v, by offer %+v", byReservation, byOffer)
		}

		t.Run("GraphQL prices the same cart", func(t *testing.T) {
			r := s.queryAs(t, bearer, `mutation($o: [ID!]!, $p: [CartProductInput!]) { createShoppingCart(offerIds: $o, products: $p) {
				id total { amount currency } items { product { id code } quantity total { amount } } offers { id segments { flight { id } } } } }`,
				map[string]any{"o": []string{offer.ID}, "p": []map[string]any{{"id": seat.ID, "quantity": 2}}})
			var g struct {
				CreateShoppingCart struct {
					ID     string
					Total  struct{ Amount, Currency string }
					Items  []struct{ Quantity int }
					Offers []struct{ ID string }
				}
			}
			if err := json.Unmarshal(r.Data, &g); err != nil || len(r.Errors) > 0 {
				t.Fatalf("%v %+v", err, r.Errors)
			}
			c := g.CreateShoppingCart
			if c.ID != cart.ID || c.Total.Amount != cart.TotalPrice.Amount || c.Total.Currency != cart.TotalPrice.Currency || len(c.Items) != 1 || c.Offers[0].ID != offer.ID {
				t.Errorf("GraphQL cart %+v, REST %+v", c, cart)
			}
			r = s.queryAs(t, bearer, `query($id: ID!) { shoppingCart(id: $id) { total { amount } }
				_entities(representations: [{__typename: "ShoppingCart", id: $id}]) { ... on ShoppingCart { total { amount } } }
				relatedProducts(cartId: $id) { id unitPrice { amount } }
				ticketConditions(reservationIdentifier: $id) { fareFamily { code } } }`, map[string]any{"id": added.ID})
			var q struct {
				ShoppingCart     struct{ Total struct{ Amount string } }
				Entities         []struct{ Total struct{ Amount string } } `json:"_entities"`
				RelatedProducts  []struct{ ID string }
				TicketConditions struct{ FareFamily struct{ Code string } }
			}
			if err := json.Unmarshal(r.Data, &q); err != nil || len(r.Errors) > 0 {
				t.Fatalf("%v %+v", err, r.Errors)
			}
			if q.ShoppingCart.Total.Amount != added.TotalPrice.Amount || len(q.Entities) != 1 || q.Entities[0].Total.Amount != added.TotalPrice.Amount ||
				len(q.RelatedProducts) != len(related.RelatedProducts) || q.TicketConditions.FareFamily.Code != offer.FareFamily.Code {
				t.Errorf("GraphQL read back %+v, REST %+v", q, added)
			}
			r = s.queryAs(t, bearer, `mutation($c: ID!) { addToShoppingCart(cartId: $c, products: [{id: "INSURANCE", quantity: 1}]) { id total { amount } } }`, map[string]any{"c": cart.ID})
			if len(r.Errors) > 0 || !json.Valid(r.Data) || !contains(string(r.Data), added.TotalPrice.Amount) {
				t.Errorf("addToShoppingCart: %s %+v, want a total of %s", r.Data, r.Errors, added.TotalPrice.Amount)
			}
		})

		t.Run("refusals", func(t *testing.T) {
			for _, c := range []struct {
				name, method, path, body string
				status                   int
				code                     string
			}{
				{"no offer", "POST", "/opendata/offers/v1/shopping-carts", `{"offerIds": []}`, 400, flightgraph.ECodeMissingParameter},
				{"an altered offer", "POST", "/opendata/offers/v1/shopping-carts", jsonOf(map[string]any{"offerIds": []string{offer.ID + "A"}}), 400, flightgraph.ECodeOfferInvalid},
				{"too many seats", "POST", "/opendata/offers/v1/shopping-carts", jsonOf(map[string]any{"offerIds": []string{offer.ID}, "products": []map[string]any{{"id": seat.ID, "quantity": 3}}}), 400, flightgraph.ECodeInvalidParameter},
				{"not JSON", "POST", "/opendata/offers/v1/shopping-carts", `offerIds=1`, 400, flightgraph.ECodeBadBody},
				{"an altered cart", "GET", "/opendata/offers/v1/shopping-carts/" + altered(cart.ID), "", 400, flightgraph.ECodeOfferInvalid},
				{"an offer for a cart", "GET", "/opendata/offers/v1/shopping-carts/" + offer.ID, "", 400, flightgraph.ECodeOfferInvalid},
				{"add nothing", "POST", "/opendata/offers/v1/related-products/shopping-carts", jsonOf(map[string]any{"cartId": cart.ID}), 400, flightgraph.ECodeMissingParameter},
				{"add to no cart", "POST", "/opendata/offers/v1/related-products/shopping-carts", `{"products": [{"id": "INSURANCE", "quantity": 1}]}`, 400, flightgraph.ECodeMissingParameter},
				{"related to nothing", "GET", "/opendata/offers/v1/related-products", "", 400, flightgraph.ECodeMissingParameter},
			} {
				headers := bearer
				if c.method == "POST" {
					headers = map[string]string{"Authorization": bearer["Authorization"], "Content-Type": "application/json"}
				}
				code, _, body := s.call(t, c.method, c.path, headers, c.body)
				if code != c.status || restCode(t, body) != c.code {
					t.Errorf("%s: %d %s, want %d %s", c.name, code, body, c.status, c.code)
				}
			}
			if gqlCode(t, jsonOf(s.queryAs(t, bearer, `mutation { createShoppingCart(offerIds: []) { id } }`, nil))) != flightgraph.ECodeMissingParameter {
				t.Error("GraphQL: a cart without offers was made")
			}
			if gqlCode(t, jsonOf(s.queryAs(t, bearer, `query($id: ID!) { shoppingCart(id: $id) { id } }`, map[string]any{"id": offer.ID}))) != flightgraph.ECodeOfferInvalid {
				t.Error("GraphQL: an offer id read as a cart")
			}
		})
	})
}

func money(t *testing.T, amount, currency string) flightgraph.Money {
	t.Helper()
	m, err := flightgraph.ParseAmount(amount, currency)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func contains(s, sub string) bool { return sub != "" && strings.Contains(s, sub) }

// TestReadBackIsBatched: offers and carts read back by id — entities of another subgraph's
// _entities, aliased shoppingCart fields — are read in one batch (two at worst, when goroutines
// start late), not one per id, and a tampered id among them is refused alone. The loaders wait
// 20 ms, as the other round-trip tests': under the race detector on a loaded CI machine eight
// fields' goroutines outlasted the 1 ms wait and made three batches.
func TestReadBackIsBatched(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServerWith(t, storetest.Seeded(t, dialect, os.Getenv), func(c *serverConfig) {
			c.SnapshotTTL = time.Hour
			c.Server.LoaderWait = 20 * time.Millisecond
		})
		bearer := map[string]string{"Authorization": "Bearer " + s.bearerToken(t, "")}
		v, _ := searchOffers(t, s, bearer, offerSearch("AMS", "LON", "ADT"))
		var offers, carts []string
		for _, it := range v.Itineraries {
			for _, p := range it.FlightProducts {
				if len(offers) == 8 {
					break
				}
				offers = append(offers, p.ID)
				var c cartView
				code, _, raw := s.call(t, http.MethodPost, "/opendata/offers/v1/shopping-carts", bearer, jsonOf(map[string]any{"offerIds": []string{p.ID}}))
				if code != http.StatusCreated || json.Unmarshal([]byte(raw), &c) != nil {
					t.Fatalf("cart of %s: %d %s", p.ID, code, raw)
				}
				carts = append(carts, c.ID)
			}
		}
		if len(offers) < 8 {
			t.Fatalf("%d offers: too few to compare", len(offers))
		}
		entities := func(typ string, ids []string, sel string) (gqlResponse, int64) {
			reps := make([]map[string]any, len(ids))
			for i, id := range ids {
				reps[i] = map[string]any{"__typename": typ, "id": id}
			}
			r := s.queryAs(t, bearer, `query($r: [_Any!]!) { _entities(representations: $r) { ... on `+typ+` { `+sel+` } } }`, map[string]any{"r": reps})
			return r, s.queries.Load()
		}
		for _, c := range []struct {
			typ, sel string
			ids      []string
		}{{"Offer", "id price { total { amount } }", offers}, {"ShoppingCart", "id total { amount } offers { id }", carts}} {
			entities(c.typ, c.ids[:1], c.sel) // warms the reference snapshot
			one, oneTrips := entities(c.typ, c.ids[:1], c.sel)
			many, manyTrips := entities(c.typ, c.ids, c.sel)
			if len(one.Errors) > 0 || len(many.Errors) > 0 || strings.Count(string(many.Data), `"id"`) < len(c.ids) {
				t.Fatalf("%s entities: %+v %+v %.300s", c.typ, one.Errors, many.Errors, many.Data)
			}
			// One batch as a rule; two when the scheduler (the race detector) starts the
			// entities' goroutines after the loader's wait. Without batching, one per id.
			if manyTrips > 2*oneTrips {
				t.Errorf("%d %s entities took %d round trips, one took %d", len(c.ids), c.typ, manyTrips, oneTrips)
			}
			tampered := append([]string{altered(c.ids[0])}, c.ids[1:]...)
			r, _ := entities(c.typ, tampered, c.sel)
			if len(r.Errors) != 1 || r.Errors[0].Extensions["code"] != flightgraph.ECodeOfferInvalid || strings.Count(string(r.Data), `"id"`) < len(c.ids)-1 {
				t.Errorf("%s entities with a tampered id first: %+v %.300s", c.typ, r.Errors, r.Data)
			}
		}
		var fields []string
		for i, id := range carts {
			fields = append(fields, fmt.Sprintf(`c%d: shoppingCart(id: %q) { total { amount } }`, i, id))
		}
		r := s.queryAs(t, bearer, `{ c: shoppingCart(id: "`+carts[0]+`") { total { amount } } }`, nil)
		oneTrips := s.queries.Load()
		r2 := s.queryAs(t, bearer, "{ "+strings.Join(fields, " ")+" }", nil)
		if len(r.Errors) > 0 || len(r2.Errors) > 0 || s.queries.Load() > 2*oneTrips {
			t.Errorf("%d aliased shoppingCart fields took %d round trips, one %d: %+v %+v", len(carts), s.queries.Load(), oneTrips, r.Errors, r2.Errors)
		}
	})
}

// altered is a signed id with another MAC of the same, strict spelling: its last two characters
// (of a 16-byte MAC, the last carries 2 bits) replaced by others.
func altered(id string) string {
	if strings.HasSuffix(id, "AA") {
		return id[:len(id)-2] + "QA"
	}
	return id[:len(id)-2] + "AA"
}
