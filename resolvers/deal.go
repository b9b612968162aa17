package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/graph"
	"github.com/flightgraph/flightgraph/graph/model"
)

// deals serves a deals search's deals, their offers made by the loaders for all at once.
func (r *Resolver) deals(ctx context.Context, search func(context.Context, *flightgraph.DealQuery) (*flightgraph.DealList, error),
	q flightgraph.DealQuery, limit, first *int) ([]*model.Deal, error) {
	if err := graph.For(ctx).OneSearch(graphql.GetFieldContext(ctx).Field.Name); err != nil {
		return nil, err
	}
	n, err := firstOf(first)
	if err != nil {
		return nil, err
	}
	q.Limit = flightgraph.DefaultDestinations
	if limit != nil {
		q.Limit = *limit
	}
	list, err := search(ctx, &q)
	if err != nil {
		return nil, err
	}
	deals := head(list.Deals, n)
	primeCities(ctx, deals, func(d *flightgraph.Deal) *flightgraph.City {
		if d.Destination == nil {
			return nil
		}
		return d.Destination.City
	})
	return graph.For(ctx).Deals(ctx, deals), nil
}

func (r *Resolver) flightsAvailability(ctx context.Context, search flightgraph.OfferSearch, first *int) ([]*model.FlightAvailability, error) {
	n, err := firstOf(first)
	if err != nil {
		return nil, err
	}
	avail, err := r.Travel.FlightsAvailability(ctx, &search)
	if err != nil {
		return nil, err
	}
	return graph.For(ctx).Availability(ctx, head(avail, n)), nil
}
