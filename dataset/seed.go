package dataset

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/flightgraph/flightgraph"
)

// Stats tell what a load did.
type Stats struct {
	Dates   int // schedule dates materialised
	Flights int
	Legs    int
}

// Window returns the schedule dates of the standard window at now, oldest first.
func Window(now time.Time) []string { return Dates(now, DaysBack, DaysAhead) }

// Dates returns the schedule dates from back days before now's date to ahead days after it.
func Dates(now time.Time, back, ahead int) []string {
	today := now.UTC()
	var out []string
	for d := -back; d <= ahead; d++ {
		out = append(out, today.AddDate(0, 0, d).Format(flightgraph.DateLayout))
	}
	return out
}

// Seed replaces whatever data set the store holds with the one of opts: reference data in one
// transaction, then the flights of the window around now, a few dates per transaction so that a
// large scale does not hold everything in memory. An interrupted load is finished by Roll.
func Seed(ctx context.Context, ds flightgraph.DatasetStore, opts Options, now time.Time, log *slog.Logger) (Stats, error) {
	if err := opts.Validate(); err != nil {
		return Stats{}, err
	}
	ref, err := Generate(opts, now.UTC())
	if err != nil {
		return Stats{}, err
	}
	start := time.Now()
	if err := ds.LoadDataset(ctx, ref, flightgraph.DatasetState{Seed: opts.Seed, Scale: opts.Scale}); err != nil {
		return Stats{}, err
	}
	log.Info("reference data loaded", "airports", len(ref.Airports), "aircraft", len(ref.Aircraft),
		"scheduleLegs", len(ref.Schedule), "routes", len(ref.Routes), "elapsed", time.Since(start).Round(time.Millisecond))
	zones := map[string]string{}
	for _, a := range ref.Airports {
		zones[a.Code] = a.TimeZone
	}
	m, err := NewMaterialiser(opts.Seed, ref.Schedule, zones)
	if err != nil {
		return Stats{}, err
	}
	return materialise(ctx, ds, m, Dates(now, opts.DaysBack, opts.DaysAhead), log)
}

// Ensure loads the data set of opts when the store holds none, and otherwise rolls the window of
// the data set it holds. It reports whether it loaded.
func Ensure(ctx context.Context, ds flightgraph.DatasetStore, opts Options, now time.Time, log *slog.Logger) (bool, Stats, error) {
	st, err := ds.DatasetState(ctx)
	if err != nil {
		return false, Stats{}, err
	}
	if st == nil {
		s, err := Seed(ctx, ds, opts, now, log)
		return true, s, err
	}
	s, err := roll(ctx, ds, st, Window(now), log)
	return false, s, err
}

// Roll materialises the dates of window (ascending, usually Window(now)) that are missing and drops
// the dates before it. It reads the schedule only when a date is missing, so a start on the same
// day costs two small queries: the state and the dates.
func Roll(ctx context.Context, ds flightgraph.DatasetStore, window []string, log *slog.Logger) (Stats, error) {
	st, err := ds.DatasetState(ctx)
	if err != nil || st == nil {
		return Stats{}, err
	}
	return roll(ctx, ds, st, window, log)
}

// roll is Roll on the data set whose state the caller read.
func roll(ctx context.Context, ds flightgraph.DatasetStore, st *flightgraph.DatasetState, window []string, log *slog.Logger) (Stats, error) {
	if len(window) == 0 {
		return Stats{}, nil
	}
	have, err := ds.MaterialisedDates(ctx)
	if err != nil {
		return Stats{}, err
	}
	if len(have) > 0 && have[0] < window[0] {
		if err := ds.DropFlightsBefore(ctx, window[0]); err != nil {
			return Stats{}, err
		}
	}
	got := map[string]bool{}
	for _, d := range have {
		got[d] = true
	}
	var missing []string
	for _, d := range window {
		if !got[d] {
			missing = append(missing, d)
		}
	}
	if len(missing) == 0 {
		return Stats{}, nil
	}
	schedule, err := ds.Schedule(ctx)
	if err != nil {
		return Stats{}, err
	}
	zones, err := ds.AirportZones(ctx)
	if err != nil {
		return Stats{}, err
	}
	m, err := NewMaterialiser(st.Seed, schedule, zones)
	if err != nil {
		return Stats{}, err
	}
	return materialise(ctx, ds, m, missing, log)
}

// datesPerTx bounds the dates loaded in one transaction.
const datesPerTx = 4

func materialise(ctx context.Context, ds flightgraph.DatasetStore, m *Materialiser, dates []string, log *slog.Logger) (Stats, error) {
	var total Stats
	start := time.Now()
	for i := 0; i < len(dates); i += datesPerTx {
		batch := dates[i:min(i+datesPerTx, len(dates))]
		var (
			flights []*flightgraph.Flight
			legs    []*flightgraph.FlightLeg
		)
		for _, d := range batch {
			f, l, err := m.Flights(d)
			if err != nil {
				return total, err
			}
			flights, legs = append(flights, f...), append(legs, l...)
		}
		if err := ds.AddFlights(ctx, batch, flights, legs); err != nil {
			return total, err
		}
		total.Dates += len(batch)
		total.Flights += len(flights)
		total.Legs += len(legs)
		log.Info("flights materialised", "through", batch[len(batch)-1], "dates", total.Dates, "of", len(dates),
			"flights", total.Flights, "elapsed", time.Since(start).Round(time.Millisecond))
	}
	if total.Dates > 0 {
		if err := ds.Analyze(ctx); err != nil {
			return total, fmt.Errorf("dataset: refresh planner statistics: %w", err)
		}
	}
	return total, nil
}
