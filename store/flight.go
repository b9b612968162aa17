package store

import (
	"context"
	"strings"
	"time"

	"github.com/flightgraph/flightgraph"
)

// FlightStore implements flightgraph.FlightStore.
type FlightStore struct{ db *DB }

var _ flightgraph.FlightStore = (*FlightStore)(nil)

// NewFlightStore returns the flight store of db.
func NewFlightStore(db *DB) *FlightStore { return &FlightStore{db: db} }

const (
	flightCols = `id, schedule_date, carrier, number, suffix, origin, destination, departure_utc, arrival_utc, haul, codeshares, onward_flight_id, previous_flight_id`
	legCols    = `flight_id, seq, origin, destination, scheduled_departure, scheduled_arrival, departure_offset,
		arrival_offset, departure_delay, arrival_delay, cancelled, departure_terminal, departure_gate,
		arrival_terminal, arrival_gate, configuration, registration, service_type, distance_km`
)

// FlightsByIDs implements flightgraph.FlightStore.
func (s *FlightStore) FlightsByIDs(ctx context.Context, ids []string) ([]*flightgraph.Flight, error) {
	var rows []*flightgraph.Flight
	if err := s.db.selectIn(ctx, s.db.db, &rows, `SELECT `+flightCols+` FROM flights WHERE id IN (?)`, unique(ids)); err != nil {
		return nil, err
	}
	return byKey(ids, rows, func(f *flightgraph.Flight) string { return f.ID }), nil
}

// LegsByFlightIDs implements flightgraph.FlightStore.
func (s *FlightStore) LegsByFlightIDs(ctx context.Context, ids []string) ([][]*flightgraph.FlightLeg, error) {
	var rows []*flightgraph.FlightLeg
	if err := s.db.selectIn(ctx, s.db.db, &rows, `SELECT `+legCols+` FROM flight_legs WHERE flight_id IN (?) ORDER BY flight_id, seq`, unique(ids)); err != nil {
		return nil, err
	}
	return groupByKey(ids, rows, func(l *flightgraph.FlightLeg) string { return l.FlightID }), nil
}

// FlightsWithLegs implements flightgraph.FlightStore: one statement, a join of each flight's row
// with its legs', where reading them apart costs two (a flight by id: 2 → 1 statements, see
// BenchmarkFlightByID). A flight without legs, which the join leaves out, is read on its own.
func (s *FlightStore) FlightsWithLegs(ctx context.Context, ids []string) ([]*flightgraph.Flight, [][]*flightgraph.FlightLeg, error) {
	type row struct {
		flightgraph.Flight
		Leg flightgraph.FlightLeg `db:"l"`
	}
	var rows []*row
	if err := s.db.selectIn(ctx, s.db.db, &rows, flightsWithLegsQuery, unique(ids)); err != nil {
		return nil, nil, err
	}
	flights, legs := make([]*flightgraph.Flight, len(rows)), make([]*flightgraph.FlightLeg, len(rows))
	for i, r := range rows {
		flights[i], legs[i] = &r.Flight, &r.Leg
	}
	outF := byKey(ids, flights, func(f *flightgraph.Flight) string { return f.ID })
	var alone []string
	for i, f := range outF {
		if f == nil {
			alone = append(alone, ids[i])
		}
	}
	if len(alone) > 0 {
		got, err := s.FlightsByIDs(ctx, alone)
		if err != nil {
			return nil, nil, err
		}
		for i := range outF {
			if outF[i] == nil { // alone holds them in this order
				outF[i], got = got[0], got[1:]
			}
		}
	}
	return outF, groupByKey(ids, legs, func(l *flightgraph.FlightLeg) string { return l.FlightID }), nil
}

// flightsWithLegsQuery selects flights (IN (?)) joined with their legs in order, the flight's
// columns by their names and the leg's as "l.<name>".
var flightsWithLegsQuery = `SELECT ` + qualified("f", flightCols, "") + `, ` + qualified("l", legCols, "l.") +
	` FROM flights f JOIN flight_legs l ON l.flight_id = f.id WHERE f.id IN (?) ORDER BY f.id, l.seq`

// qualified is a column list of table alias's, each named as prefix and its name.
func qualified(alias, cols, prefix string) string {
	var b strings.Builder
	for i, c := range strings.Split(cols, ",") {
		c = strings.TrimSpace(c)
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(alias + "." + c)
		if prefix != "" {
			b.WriteString(` AS "` + prefix + c + `"`)
		}
	}
	return b.String()
}

// FindFlights implements flightgraph.FlightStore.
func (s *FlightStore) FindFlights(ctx context.Context, f flightgraph.FlightFilter) ([]*flightgraph.Flight, int, error) {
	w, table := s.where(f)
	type row struct {
		flightgraph.Flight
		Total int `db:"total"`
	}
	return findPage(ctx, s.db, func(r *row) (*flightgraph.Flight, int) { return &r.Flight, r.Total }, flightCols, table, w, "departure_utc, id", f.Page)
}

// FindLegs implements flightgraph.FlightStore: one query, whatever the number of flights, where
// LegsByFlightIDs would need their ids as as many parameters.
func (s *FlightStore) FindLegs(ctx context.Context, f flightgraph.FlightFilter) ([]*flightgraph.FlightLeg, error) {
	w, table := s.where(f)
	var rows []*flightgraph.FlightLeg
	q := `SELECT ` + legCols + ` FROM flight_legs WHERE flight_id IN (SELECT id FROM ` + table + ` WHERE ` + w.where() + `) ORDER BY flight_id, seq`
	if err := s.db.selectIn(ctx, s.db.db, &rows, q, w.args...); err != nil {
		return nil, err
	}
	return rows, nil
}

// where is the condition of a flight filter, and the table (with its index hint) to read it from.
func (s *FlightStore) where(f flightgraph.FlightFilter) (filter, string) {
	var w filter
	w.places(f.Origin, f.Destination)
	switch {
	case f.Date != "" && f.LastDate != "":
		w.add("schedule_date >= ?", f.Date)
		w.add("schedule_date <= ?", f.LastDate)
	case f.Date != "":
		w.add("schedule_date = ?", f.Date)
	}
	if f.Carrier != "" {
		w.add("carrier = ?", f.Carrier)
	}
	if f.FlightNumber != 0 {
		w.add("number = ?", f.FlightNumber)
	}
	dep, arr := "departure_utc", "arrival_utc"
	if f.Estimated {
		dep, arr = "est_departure_utc", "est_arrival_utc"
	}
	if !f.DepartureFrom.IsZero() {
		w.add(dep+" >= ?", f.DepartureFrom.UTC())
	}
	if !f.DepartureTo.IsZero() {
		w.add(dep+" < ?", f.DepartureTo.UTC())
	}
	if f.Date == "" {
		// The same bounds on the schedule date (the local date of the scheduled departure, a day
		// at most from the UTC one; two with an estimate, delays included), so that the indexes
		// by place and date serve a range instead of every date of a hub.
		margin := 24 * time.Hour
		if f.Estimated {
			margin *= 2
		}
		if !f.DepartureFrom.IsZero() {
			w.add("schedule_date >= ?", f.DepartureFrom.UTC().Add(-margin).Format(flightgraph.DateLayout))
		}
		if !f.DepartureTo.IsZero() {
			w.add("schedule_date <= ?", f.DepartureTo.UTC().Add(margin).Format(flightgraph.DateLayout))
		}
	}
	if !f.ArrivalFrom.IsZero() {
		w.add(arr+" >= ?", f.ArrivalFrom.UTC())
	}
	if !f.ArrivalTo.IsZero() {
		w.add(arr+" < ?", f.ArrivalTo.UTC())
	}
	table := "flights"
	if f.Origin != nil && f.Destination != nil && s.db.dialect == SQLite {
		// Between two places, the route's index reads only the route's flights. SQLite keeps no
		// statistics, and chose the index by origin for a hub's departures over a month (9,000
		// rows for the 660 of a calendar to New York, 30 ms instead of 3); PostgreSQL's planner
		// knows better from its own.
		table = "flights INDEXED BY flights_route"
	}
	return w, table
}
