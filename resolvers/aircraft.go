package resolvers

import (
	"context"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/graph"
	"github.com/flightgraph/flightgraph/travel"
)

func (r *Resolver) amenities(ctx context.Context, configuration string, class *flightgraph.CabinClass, category *flightgraph.AmenityCategory) ([]*flightgraph.Amenity, error) {
	return r.Travel.Amenities(ctx, travel.AmenityQuery{Configuration: configuration, CabinClass: deref(class), Category: deref(category)})
}

// fleet is every configuration, primed into the request's loader so that their cabins and
// amenities are read a level at a time, as _entities reads them, not in batches that depend on
// timing.
func (r *Resolver) fleet(ctx context.Context) ([]*flightgraph.Aircraft, error) {
	fleet, err := r.Travel.Fleet(ctx)
	if err != nil {
		return nil, err
	}
	graph.PrimeAll(ctx, graph.For(ctx).Aircraft, fleet, func(a *flightgraph.Aircraft) string { return a.Configuration })
	return fleet, nil
}
