package resolvers

import (
	"context"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/graph"
	"github.com/flightgraph/flightgraph/graph/model"
)

func (r *Resolver) availableOffers(ctx context.Context, search flightgraph.OfferSearch, bound *flightgraph.Bound) ([]*model.Offer, error) {
	i := 0
	if bound != nil && *bound == flightgraph.Inbound {
		i = 1
	}
	offers, err := r.Travel.OffersFor(ctx, &search, i)
	if err != nil {
		return nil, err
	}
	return graph.For(ctx).Offers(ctx, offers), nil
}

func (r *Resolver) offer(ctx context.Context, id string) (*model.Offer, error) {
	o, err := r.Travel.Offer(ctx, "id", id)
	if err != nil {
		return nil, err
	}
	return graph.For(ctx).Offers(ctx, []*flightgraph.Offer{o})[0], nil
}
