package resolvers

import (
	"context"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/graph"
	"github.com/flightgraph/flightgraph/graph/model"
)

// scheduledFlights is one page of the schedule's flight records, read as REST's
// GET /opendata/schedule/v1/flights reads them (travel.Service.FindSchedule), so that both edges
// answer the same records in the same order.
func (r *Resolver) scheduledFlights(ctx context.Context, origin, destination string, f flightgraph.ScheduleFilter, first *int, after *string) (*model.ScheduledLegConnection, error) {
	p, err := page(first, after)
	if err != nil {
		return nil, err
	}
	f.Page = p
	if f.Origin, f.Destination, err = r.Travel.Ends(ctx, origin, destination); err != nil {
		return nil, err
	}
	list, total, err := r.Travel.FindSchedule(ctx, f)
	if err != nil {
		return nil, err
	}
	graph.For(ctx).PrefetchSchedule(ctx, list)
	return &model.ScheduledLegConnection{
		TotalCount: total,
		PageInfo:   pageInfo(p, len(list), total),
		Edges: edges(p, list, func(c string, n *flightgraph.ScheduledLeg) *model.ScheduledLegEdge {
			return &model.ScheduledLegEdge{Cursor: c, Node: n}
		}),
	}, nil
}
