package resolvers

import (
	"context"
	"fmt"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/graph"
	"github.com/flightgraph/flightgraph/graph/model"
)

func (r *Resolver) flights(ctx context.Context, origin, destination string, f flightgraph.FlightFilter, first *int, after *string) (*model.FlightConnection, error) {
	p, err := page(first, after)
	if err != nil {
		return nil, err
	}
	f.Page = p
	if f.Origin, f.Destination, err = r.Travel.Ends(ctx, origin, destination); err != nil {
		return nil, err
	}
	flights, total, err := r.Travel.FindFlights(ctx, f)
	if err != nil {
		return nil, err
	}
	return &model.FlightConnection{
		TotalCount: total,
		PageInfo:   pageInfo(p, len(flights), total),
		Edges: edges(p, graph.For(ctx).Flights(ctx, flights), func(c string, n *model.Flight) *model.FlightEdge {
			return &model.FlightEdge{Cursor: c, Node: n}
		}),
	}, nil
}

// served hands a root field's flight to GraphQL through the loaders, as every flight must go:
// they fetch the hops the operation selects (graph.Loaders.Flights).
func (r *Resolver) served(ctx context.Context) func(*flightgraph.Flight, error) (*model.Flight, error) {
	return func(f *flightgraph.Flight, err error) (*model.Flight, error) {
		if err != nil || f == nil {
			return nil, err
		}
		return graph.For(ctx).Flights(ctx, []*flightgraph.Flight{f})[0], nil
	}
}

// airport loads an airport that a row refers to; a dangling reference is an internal error.
func (r *Resolver) airport(ctx context.Context, code string) (*flightgraph.Airport, error) {
	a, err := graph.Load(ctx, graph.For(ctx).Airport, code)
	if err == nil && a == nil {
		err = fmt.Errorf("resolvers: airport %q is referenced but missing", code)
	}
	return a, err
}

func (r *Resolver) carrier(ctx context.Context, code string) (*flightgraph.Carrier, error) {
	c, err := graph.Load(ctx, graph.For(ctx).Carrier, code)
	if err == nil && c == nil {
		err = fmt.Errorf("resolvers: carrier %q is referenced but missing", code)
	}
	return c, err
}
