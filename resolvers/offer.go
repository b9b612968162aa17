package resolvers

import (
	"context"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/graph"
	"github.com/flightgraph/flightgraph/graph/model"
	"github.com/flightgraph/flightgraph/travel"
)

// boundIndex is the requested connection a bound names: 0 outbound, 1 inbound.
func boundIndex(bound *flightgraph.Bound) int {
	if bound != nil && *bound == flightgraph.Inbound {
		return 1
	}
	return 0
}

func (r *Resolver) availableOffers(ctx context.Context, search flightgraph.OfferSearch, bound *flightgraph.Bound, first *int) ([]*model.Offer, error) {
	n, err := firstOf(first)
	if err != nil {
		return nil, err
	}
	offers, err := r.Travel.OffersFor(ctx, &search, boundIndex(bound))
	if err != nil {
		return nil, err
	}
	return graph.For(ctx).Offers(ctx, head(offers, n)), nil
}

func (r *Resolver) offer(ctx context.Context, id string) (*model.Offer, error) {
	o, err := graph.For(ctx).Offer.Load(ctx, id)()
	if err != nil {
		return nil, err
	}
	return graph.For(ctx).Offers(ctx, []*flightgraph.Offer{o})[0], nil
}

func (r *Resolver) lowestFares(ctx context.Context, search flightgraph.OfferSearch, dateInterval *string, by *flightgraph.CalendarType, bound *flightgraph.Bound, first *int) ([]*model.LowestFare, error) {
	n, err := firstOf(first)
	if err != nil {
		return nil, err
	}
	days, err := flightgraph.ParseDateInterval(deref(dateInterval), r.Travel.Now().UTC().Truncate(24*time.Hour))
	if err != nil {
		return nil, err
	}
	typ := flightgraph.CalendarDay
	if by != nil {
		typ = *by
	}
	cal, err := r.Travel.LowestFares(ctx, &search, boundIndex(bound), days, typ)
	if err != nil {
		return nil, err
	}
	cal = head(cal, n)
	var offers []*flightgraph.Offer
	for _, lf := range cal {
		if lf.Offer != nil {
			offers = append(offers, lf.Offer)
		}
	}
	served := graph.For(ctx).Offers(ctx, offers)
	out := make([]*model.LowestFare, len(cal))
	for i, lf := range cal {
		out[i] = &model.LowestFare{Period: lf.Period}
		if lf.Offer != nil {
			out[i].Offer, served = served[0], served[1:]
		}
	}
	return out, nil
}

func (r *Resolver) upsellOffers(ctx context.Context, id string) ([]*model.Offer, error) {
	_, offers, err := r.Travel.Upsell(ctx, "id", id)
	if err != nil {
		return nil, err
	}
	return graph.For(ctx).Offers(ctx, offers), nil
}

func (r *Resolver) ticketConditions(ctx context.Context, q travel.ConditionsQuery) (*model.TicketConditions, error) {
	fam, conds, err := r.Travel.TicketConditions(ctx, q)
	if err != nil {
		return nil, err
	}
	return &model.TicketConditions{FareFamily: fam, Conditions: conds}, nil
}

// cart serves a cart with its offers made by the loaders; it passes the engine's error on.
func (r *Resolver) cart(ctx context.Context, c *flightgraph.ShoppingCart, err error) (*model.ShoppingCart, error) {
	if err != nil {
		return nil, err
	}
	return &model.ShoppingCart{ShoppingCart: c, Offers: graph.For(ctx).Offers(ctx, c.Offers)}, nil
}

func (r *Resolver) relatedProducts(ctx context.Context, offerID, cartID string) ([]*flightgraph.RelatedProduct, error) {
	if cartID != "" {
		c, err := r.Travel.Cart(ctx, "cartId", cartID)
		if err != nil {
			return nil, err
		}
		return travel.RelatedProducts(c.Offers...), nil
	}
	if offerID == "" {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeMissingParameter, "offerId", "give an offerId or a cartId")
	}
	o, err := r.Travel.Offer(ctx, "offerId", offerID)
	if err != nil {
		return nil, err
	}
	return travel.RelatedProducts(o), nil
}

func cartProducts(ps []*flightgraph.CartProduct) []flightgraph.CartProduct {
	out := make([]flightgraph.CartProduct, len(ps))
	for i, p := range ps {
		out[i] = *p
	}
	return out
}
