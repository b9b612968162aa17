package resolvers

import (
	"context"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/graph"
	"github.com/flightgraph/flightgraph/graph/model"
	"github.com/flightgraph/flightgraph/live"
)

// subscribe opens a subscription for the caller; a flight id is normalised as flight(id) does.
func (r *Resolver) subscribe(ctx context.Context, f live.Filter, after *string) (<-chan *flightgraph.FlightEvent, error) {
	if r.Live == nil {
		return nil, flightgraph.Errorf(flightgraph.ECodeUnknownPath, "subscriptions are not served here")
	}
	// As the REST stream's flightIds: the hub matches every event against each subscription's
	// ids under its lock, so a list the size of the body bound (some 13,000 ids) would make one
	// subscription cost every other subscriber of the replica that much per event.
	if len(f.FlightIDs) > live.MaxFlightIDs {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "ids", "at most %d flights a subscription, got %d", live.MaxFlightIDs, len(f.FlightIDs))
	}
	for i, id := range f.FlightIDs {
		fid, err := flightgraph.ParseFlightID("ids", id)
		if err != nil {
			return nil, err
		}
		f.FlightIDs[i] = fid.String()
	}
	for _, code := range []*string{&f.Departing, &f.Arriving} {
		if *code == "" {
			continue
		}
		c, err := r.Travel.BoardAirport(ctx, "airport", *code)
		if err != nil {
			return nil, err
		}
		*code = c
	}
	return r.Live.Subscribe(ctx, f, deref(after))
}

// eventPosition is the event's position; on the last value of an ended stream, the reason it
// ended, which the client reads as the error's code.
func (r *Resolver) eventPosition(e *flightgraph.FlightEvent) (string, error) {
	if e.End != nil {
		return "", e.End
	}
	return e.Cursor(), nil
}

// eventFlight reads the flight as it is once the event is made, with the loaders of this event,
// which the replica's subscribers of the event share (graph.ForEvent).
func (r *Resolver) eventFlight(ctx context.Context, e *flightgraph.FlightEvent) (*model.Flight, error) {
	if e.End != nil {
		return nil, nil
	}
	return graph.Load(ctx, graph.ForEvent(ctx, e.Position).Flight, e.FlightID)
}

// recordOperation records an operations control write.
func (r *Resolver) recordOperation(ctx context.Context, op flightgraph.FlightOperation) (*flightgraph.FlightEvent, error) {
	if r.Events == nil {
		return nil, flightgraph.Errorf(flightgraph.ECodeUnknownPath, "operations are not recorded here")
	}
	return r.Events.RecordOperation(ctx, op, r.Now())
}
