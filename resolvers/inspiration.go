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
	cities := make([]*flightgraph.City, 0, len(insp.Destinations))
	for _, d := range insp.Destinations {
		if d.City != nil {
			cities = append(cities, d.City)
		}
	}
	graph.PrimeAll(ctx, graph.For(ctx).City, cities, cityCode) // their countries and airports, a level at a time
	return insp.Destinations, nil
}
