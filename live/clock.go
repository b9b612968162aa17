package live

import (
	"cmp"
	"context"
	"log/slog"
	"time"

	"github.com/flightgraph/flightgraph"
)

// DefaultClockEvery is how often the status clock looks for transitions.
const DefaultClockEvery = 5 * time.Second

// Clock records the status transitions that time brings (a flight boards, departs, arrives; its
// operation starts being followed): each tick it reads the flights whose estimated times cross a
// boundary since its last tick, derives their status, and records the transitions. Every replica
// runs one; the store records a transition once whichever replica derives it first (a unique key
// of flight, status and delays), so the ticks stay cheap (one indexed read of the flights whose
// boundaries fall in the tick, one insert each) and nothing is recorded twice.
//
// The clock sees the boundaries of a flight's first departure and last arrival (the times the
// flights table keeps); the transitions between two legs of a multi-leg flight are not recorded.
type Clock struct {
	Events  flightgraph.FlightEventStore
	Flights flightgraph.FlightStore
	Now     func() time.Time
	Every   time.Duration // DefaultClockEvery when 0
	// Retention is how long events are kept (flightgraph.DefaultEventRetention when 0); the
	// clock sweeps older ones every 100 ticks.
	Retention time.Duration
	Log       *slog.Logger
}

// Tick records the transitions of (from, to] and returns how many it recorded.
func (c *Clock) Tick(ctx context.Context, from, to time.Time) (int, error) {
	fs, err := c.Events.FlightsChangingBetween(ctx, from, to)
	if err != nil || len(fs) == 0 {
		return 0, err
	}
	ids := make([]string, len(fs))
	for i, f := range fs {
		ids[i] = f.ID
	}
	legs, err := c.Flights.LegsByFlightIDs(ctx, ids)
	if err != nil {
		return 0, err
	}
	var ts []flightgraph.StatusTransition
	for i, f := range fs {
		if len(legs[i]) == 0 {
			continue
		}
		before, after := flightgraph.FlightStatusAt(legs[i], from), flightgraph.FlightStatusAt(legs[i], to)
		if before != after {
			ts = append(ts, flightgraph.StatusTransition{Flight: f, Legs: legs[i], Status: after})
		}
	}
	evs, err := c.Events.RecordTransitions(ctx, ts, to)
	return len(evs), err
}

// Sweep deletes the events past the retention.
func (c *Clock) Sweep(ctx context.Context) (int64, error) {
	return c.Events.DeleteEventsBefore(ctx, c.now().Add(-cmp.Or(c.Retention, flightgraph.DefaultEventRetention)))
}

func (c *Clock) now() time.Time {
	if c.Now == nil {
		return time.Now()
	}
	return c.Now()
}

// Run ticks until ctx is done. It starts one tick back, so a replica that starts records what the
// last tick of a stopped one may have left (others record it otherwise).
func (c *Clock) Run(ctx context.Context) {
	every := cmp.Or(c.Every, DefaultClockEvery)
	log := c.Log
	if log == nil {
		log = slog.Default()
	}
	last := c.now().Add(-every)
	t := time.NewTicker(every)
	defer t.Stop()
	for n := 0; ; n++ {
		now := c.now()
		if now.After(last) {
			if _, err := c.Tick(ctx, last, now); err != nil {
				if ctx.Err() != nil {
					return
				}
				log.WarnContext(ctx, "live: the status clock's tick failed; the next one tries again", "err", err)
			} else {
				last = now
			}
		}
		if n%100 == 0 {
			if k, err := c.Sweep(ctx); err != nil && ctx.Err() == nil {
				log.WarnContext(ctx, "live: sweep the flight status events", "err", err)
			} else if k > 0 {
				log.InfoContext(ctx, "live: swept the flight status events", "events", k)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
