package travel

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/flightgraph/flightgraph"
)

// Shopping carts and related products. A cart is stateless, as offers are: its id is signed
// "c1." + base64url(offer ids | items) + "." + the MAC, and reading it back reads its offers back
// and prices its products again by the same rules, so it costs the same until its first offer
// expires. A cart's total is its offers' totals plus its items'.

// The related products' prices, in euro cents for one passenger, by haul.
var (
	seatCents      = map[string]int64{"SHORT": 1_000, "MEDIUM": 1_500, "LONG": 3_000}
	legroomCents   = map[string]int64{"SHORT": 2_500, "MEDIUM": 4_500, "LONG": 9_000}
	loungeCents    = map[string]int64{"SHORT": 3_500, "MEDIUM": 3_500, "LONG": 5_000}
	insuranceCents = map[string]int64{"SHORT": 900, "MEDIUM": 1_500, "LONG": 2_900}
)

// RelatedProducts are what can be added to offers (one a bound): per flight a seat where the
// family does not include seat choice, extra legroom in Economy, an extra bag (the baggage API's
// extra-baggage price online) and the lounge where the family does not include it; per trip,
// insurance priced by its longest haul. Prices are in the offers' currency.
func RelatedProducts(offers ...*flightgraph.Offer) []*flightgraph.RelatedProduct {
	if len(offers) == 0 {
		return nil
	}
	cur, err := flightgraph.CurrencyOf("currency", offers[0].Price.Total.Currency)
	if err != nil {
		panic("travel: an offer priced in an unknown currency: " + err.Error())
	}
	seats, all := 0, 0
	for _, p := range offers[0].Price.Passengers {
		all += p.Count
		if !onLap(p.Type) {
			seats += p.Count
		}
	}
	var out []*flightgraph.RelatedProduct
	haul := "SHORT"
	for _, o := range offers {
		for _, s := range o.Segments {
			f := s.Flight
			if hauls := []string{"SHORT", "MEDIUM", "LONG"}; slices.Index(hauls, f.Haul) > slices.Index(hauls, haul) {
				haul = f.Haul
			}
			add := func(code, name string, cents int64) {
				out = append(out, &flightgraph.RelatedProduct{ID: code + ":" + f.ID, Code: code, Name: name, FlightID: f.ID,
					Origin: f.OriginCode, Destination: f.DestinationCode, UnitPrice: flightgraph.Euros(cents).In(cur), MaxQuantity: seats})
			}
			if !o.Family.SeatChoice {
				add(flightgraph.ProductSeat, "Seat of your choice", seatCents[f.Haul])
			}
			if o.Cabin == flightgraph.CabinEconomy {
				add(flightgraph.ProductLegroom, "Seat with extra legroom", legroomCents[f.Haul])
			}
			add(flightgraph.ProductExtraBag, "Extra checked bag (23 kg)", extraBagCents(f.Haul))
			if !o.Family.LoungeAccess {
				add(flightgraph.ProductLounge, "Lounge at "+f.OriginCode, loungeCents[f.Haul])
			}
		}
	}
	out = append(out, &flightgraph.RelatedProduct{ID: flightgraph.ProductInsurance, Code: flightgraph.ProductInsurance, Name: "Travel insurance",
		UnitPrice: flightgraph.Euros(insuranceCents[haul]).In(cur), MaxQuantity: all})
	return out
}

// extraBagCents is the baggage API's online price of an extra bag without a tier.
func extraBagCents(haul string) int64 {
	for _, o := range paidOptions {
		if o.id == "extra-baggage" {
			return o.cents[haul]
		}
	}
	panic("travel: no extra-baggage option")
}

// NewCart prices offers (one a bound, read back as Offer reads them) with products from their
// related products. ECodeMissingParameter without offers; ECodeInvalidParameter for more than one
// offer a bound, offers whose passengers or currencies differ, a return leaving before its
// outbound arrives, an unknown product, a quantity past what the passengers can use, or more than
// MaxCartItems products; the offers' errors are Offer's.
func (s *Service) NewCart(ctx context.Context, offerIDs []string, products []flightgraph.CartProduct) (*flightgraph.ShoppingCart, error) {
	return s.cart(ctx, "offerIds", offerIDs, products)
}

func (s *Service) cart(ctx context.Context, param string, offerIDs []string, products []flightgraph.CartProduct) (*flightgraph.ShoppingCart, error) {
	if len(offerIDs) == 0 {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeMissingParameter, param, "a cart needs an offer: the id of an offer a search returned")
	}
	if len(offerIDs) > flightgraph.MaxCartOffers {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, param, "a cart holds one offer a bound: at most %d", flightgraph.MaxCartOffers)
	}
	if len(products) > flightgraph.MaxCartItems {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "products", "a cart holds at most %d products", flightgraph.MaxCartItems)
	}
	offers, errs, err := s.Offers(ctx, param, offerIDs)
	if err != nil {
		return nil, err
	}
	if k := slices.IndexFunc(errs, func(err error) bool { return err != nil }); k >= 0 {
		return nil, errs[k]
	}
	return s.assemble(param, offers, products)
}

// assemble makes the cart of offers read back and products: cart's checks and prices, without a
// read.
func (s *Service) assemble(param string, offers []*flightgraph.Offer, products []flightgraph.CartProduct) (*flightgraph.ShoppingCart, error) {
	if offers[0].Bound != flightgraph.Outbound {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, param, "a cart starts with an OUTBOUND offer: an INBOUND one goes after it")
	}
	if len(offers) == 2 {
		out, in := offers[0], offers[1]
		switch {
		case in.Bound != flightgraph.Inbound:
			return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, param, "a return cart is an OUTBOUND offer, then an INBOUND one")
		case paxOf(out) != paxOf(in) || out.Price.Total.Currency != in.Price.Total.Currency:
			return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, param, "the two offers are for other passengers or in other currencies: take both from one search")
		case in.Segments[0].OriginCity != out.Segments[len(out.Segments)-1].DestinationCity ||
			in.Segments[len(in.Segments)-1].DestinationCity != out.Segments[0].OriginCity:
			return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, param, "the INBOUND offer does not come back from where the OUTBOUND one goes: take both from one search")
		case in.Departure().Before(out.Arrival()):
			return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, param, "the return leaves before the outbound arrives")
		}
	}
	related := map[string]*flightgraph.RelatedProduct{}
	for _, p := range RelatedProducts(offers...) {
		related[p.ID] = p
	}
	cart := &flightgraph.ShoppingCart{Offers: offers, Total: flightgraph.Money{Currency: offers[0].Price.Total.Currency}, ExpiresAt: offers[0].ExpiresAt}
	at := map[string]*flightgraph.CartItem{}
	for _, want := range products {
		p, ok := related[want.ID]
		if !ok {
			return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "products", "%q is not a related product of the cart's offers (related-products lists them)", flightgraph.Clip(want.ID))
		}
		it := at[p.ID]
		if it == nil {
			it = &flightgraph.CartItem{Product: p}
			at[p.ID] = it
			cart.Items = append(cart.Items, it)
		}
		// Checked before it adds: a sum of huge quantities would wrap below the bound.
		if want.Quantity < 1 || want.Quantity > p.MaxQuantity-it.Quantity {
			return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "products", "%s: quantity is 1 to %d, one per passenger who can use it", p.ID, p.MaxQuantity)
		}
		it.Quantity += want.Quantity
	}
	for _, o := range offers {
		cart.Total = cart.Total.Add(o.Price.Total)
		cart.ExpiresAt = minTime(cart.ExpiresAt, o.ExpiresAt)
	}
	for _, it := range cart.Items {
		it.Total = it.Product.UnitPrice.Times(it.Quantity)
		cart.Total = cart.Total.Add(it.Total)
	}
	cart.ID = s.cartID(cart)
	return cart, nil
}

// paxOf is an offer's passengers, as ADT2+CHD1.
func paxOf(o *flightgraph.Offer) string {
	var b strings.Builder
	for _, p := range o.Price.Passengers {
		b.WriteString(p.Type + strconv.Itoa(p.Count) + "+")
	}
	return b.String()
}

const (
	cartIDPrefix = "c1."
	// maxCartIDLength bounds a cart id before it is decoded: two offer ids and twenty products.
	maxCartIDLength = 4096
)

func (s *Service) cartID(c *flightgraph.ShoppingCart) string {
	ids := make([]string, len(c.Offers))
	for i, o := range c.Offers {
		ids[i] = o.ID
	}
	items := make([]string, len(c.Items))
	for i, it := range c.Items {
		items[i] = it.Product.ID + "*" + strconv.Itoa(it.Quantity)
	}
	payload := "cart|" + strings.Join(ids, " ") + "|" + strings.Join(items, " ")
	return s.signedID(cartIDPrefix, []byte(payload))
}

// Cart reads a cart id back: its offers read back and its products priced again, the same cart
// at the same price. A malformed, altered or foreign id is ECodeOfferInvalid (naming param); one
// whose offers expired, ECodeOfferExpired.
func (s *Service) Cart(ctx context.Context, param, id string) (*flightgraph.ShoppingCart, error) {
	carts, errs, err := s.Carts(ctx, param, []string{id})
	if err != nil {
		return nil, err
	}
	return carts[0], errs[0]
}

// AddToCart returns the cart with products added (quantities of a product already in it add up),
// under a new id; the old id still reads the old cart.
func (s *Service) AddToCart(ctx context.Context, param, id string, products []flightgraph.CartProduct) (*flightgraph.ShoppingCart, error) {
	if len(products) == 0 {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeMissingParameter, "products", "products to add are required")
	}
	offerIDs, had, err := s.readCart(param, id)
	if err != nil {
		return nil, err
	}
	return s.cart(ctx, param, offerIDs, append(had, products...))
}

// Carts reads cart ids back as Cart does, with one read of all their offers whatever their
// number: carts[i] is ids[i]'s cart, or errs[i] its refusal (Cart's errors); err is a failure of
// the reads.
func (s *Service) Carts(ctx context.Context, param string, ids []string) (carts []*flightgraph.ShoppingCart, errs []error, err error) {
	carts, errs = make([]*flightgraph.ShoppingCart, len(ids)), make([]error, len(ids))
	type read struct {
		i        int
		offers   []string
		products []flightgraph.CartProduct
	}
	var reads []read
	var offerIDs []string
	for i, id := range ids {
		o, p, err := s.readCart(param, id)
		if err != nil {
			errs[i] = err
			continue
		}
		reads, offerIDs = append(reads, read{i, o, p}), append(offerIDs, o...)
	}
	if len(offerIDs) == 0 {
		return carts, errs, nil
	}
	offers, offerErrs, err := s.Offers(ctx, param, offerIDs)
	if err != nil {
		return nil, nil, err
	}
	next := 0
	for _, r := range reads {
		mine, mineErrs := offers[next:next+len(r.offers)], offerErrs[next:next+len(r.offers)]
		next += len(r.offers)
		if k := slices.IndexFunc(mineErrs, func(err error) bool { return err != nil }); k >= 0 {
			errs[r.i] = mineErrs[k]
			continue
		}
		carts[r.i], errs[r.i] = s.assemble(param, mine, r.products)
	}
	return carts, errs, nil
}

func (s *Service) readCart(param, id string) (offerIDs []string, products []flightgraph.CartProduct, err error) {
	invalid := flightgraph.ParamErrorf(flightgraph.ECodeOfferInvalid, param, "%s is not a shopping cart id of this service", param)
	raw, ok := s.openID(cartIDPrefix, id, maxCartIDLength)
	if !ok {
		return nil, nil, invalid
	}
	f := strings.Split(raw, "|")
	if len(f) != 3 || f[0] != "cart" {
		return nil, nil, invalid // an offer's payload, signed by the same key, is not a cart
	}
	for _, item := range strings.Fields(f[2]) {
		pid, n, _ := strings.Cut(item, "*")
		q, err := strconv.Atoi(n)
		if err != nil || q < 1 {
			return nil, nil, invalid
		}
		products = append(products, flightgraph.CartProduct{ID: pid, Quantity: q})
	}
	offerIDs = strings.Fields(f[1])
	if len(offerIDs) == 0 || len(offerIDs) > flightgraph.MaxCartOffers {
		return nil, nil, invalid // signed by a version that made carts this one would refuse
	}
	return offerIDs, products, nil
}
