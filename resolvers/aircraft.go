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

// cabinAmenities filters a cabin product's amenities, loaded in a batch, by category.
func (r *Resolver) cabinAmenities(ctx context.Context, c *flightgraph.Cabin, category *flightgraph.AmenityCategory) ([]*flightgraph.Amenity, error) {
	all, err := graph.Load(ctx, graph.For(ctx).Amenities, c.Product)
	if err != nil || category == nil {
		return all, err
	}
	var out []*flightgraph.Amenity
	for _, a := range all {
		if a.Category == *category {
			out = append(out, a)
		}
	}
	return out, nil
}
