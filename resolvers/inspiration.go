package resolvers

import (
	"context"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/graph"
)

func (r *Resolver) destinations(ctx context.Context, origin, price, currency, month string, cabin *flightgraph.CabinClass, destination string, limit *int) ([]*flightgraph.Destination, error) {
	if err := graph.For(ctx).OneSearch("destinations"); err != nil {
		return nil, err
	}
	insp, err := r.Travel.Inspiration(ctx, &flightgraph.InspirationQuery{Origin: origin, MaxPrice: price, Currency: currency, Month: month,
		Cabin: deref(cabin), Destination: destination, Limit: deref(limit)})
	if err != nil {
		return nil, err
	}
	primeCities(ctx, insp.Destinations, func(d *flightgraph.Destination) *flightgraph.City { return d.City })
	return insp.Destinations, nil
}
