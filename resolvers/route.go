package resolvers

import (
	"context"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/graph"
	"github.com/flightgraph/flightgraph/graph/model"
)

func (r *Resolver) routes(ctx context.Context, origin, destination string, f flightgraph.RouteFilter, first *int, after *string) (*model.RouteConnection, error) {
	p, err := page(first, after)
	if err != nil {
		return nil, err
	}
	f.Page = p
	if f.Origin, f.Destination, err = r.Travel.Ends(ctx, origin, destination); err != nil {
		return nil, err
	}
	list, total, err := r.Travel.FindRoutes(ctx, f)
	if err != nil {
		return nil, err
	}
	graph.For(ctx).PrefetchRoutes(ctx, list)
	return &model.RouteConnection{
		TotalCount: total,
		PageInfo:   pageInfo(p, len(list), total),
		Edges: edges(p, list, func(c string, n *flightgraph.Route) *model.RouteEdge {
			return &model.RouteEdge{Cursor: c, Node: n}
		}),
	}, nil
}
