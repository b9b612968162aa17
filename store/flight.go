package store

import (
	"context"
	"strings"

	"github.com/flightgraph/flightgraph"
)

// FlightStore implements flightgraph.FlightStore.
type FlightStore struct{ db *DB }

var _ flightgraph.FlightStore = (*FlightStore)(nil)

// NewFlightStore returns the flight store of db.
func NewFlightStore(db *DB) *FlightStore { return &FlightStore{db: db} }

const (
	flightCols = `id, schedule_date, carrier, number, suffix, origin, destination, departure_utc, arrival_utc, haul`
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

// FindFlights implements flightgraph.FlightStore. The total comes in the same round trip as the
// page, from an uncorrelated scalar subquery that both dialects evaluate once; a window function
// (COUNT(*) OVER ()) would materialise every match before the LIMIT and cost SQLite three times
// as much on a hub's day.
func (s *FlightStore) FindFlights(ctx context.Context, f flightgraph.FlightFilter) ([]*flightgraph.Flight, int, error) {
	where, args := []string{"1 = 1"}, []any{}
	// A city code matches each of its airports.
	if f.Origin != "" {
		where = append(where, "origin IN (SELECT code FROM airports WHERE code = ? OR city_code = ?)")
		args = append(args, f.Origin, f.Origin)
	}
	if f.Destination != "" {
		where = append(where, "destination IN (SELECT code FROM airports WHERE code = ? OR city_code = ?)")
		args = append(args, f.Destination, f.Destination)
	}
	if f.Date != "" {
		where, args = append(where, "schedule_date = ?"), append(args, f.Date)
	}
	if f.Carrier != "" {
		where, args = append(where, "carrier = ?"), append(args, f.Carrier)
	}
	if f.FlightNumber != 0 {
		where, args = append(where, "number = ?"), append(args, f.FlightNumber)
	}
	if !f.DepartureFrom.IsZero() {
		where, args = append(where, "departure_utc >= ?"), append(args, f.DepartureFrom.UTC())
	}
	if !f.DepartureTo.IsZero() {
		where, args = append(where, "departure_utc < ?"), append(args, f.DepartureTo.UTC())
	}
	if !f.ArrivalFrom.IsZero() {
		where, args = append(where, "arrival_utc >= ?"), append(args, f.ArrivalFrom.UTC())
	}
	if !f.ArrivalTo.IsZero() {
		where, args = append(where, "arrival_utc < ?"), append(args, f.ArrivalTo.UTC())
	}
	cond := strings.Join(where, " AND ")
	var rows []struct {
		flightgraph.Flight
		Total int `db:"total"`
	}
	q := `SELECT ` + flightCols + `, (SELECT COUNT(*) FROM flights WHERE ` + cond + `) AS total
		FROM flights WHERE ` + cond + ` ORDER BY departure_utc, id LIMIT ? OFFSET ?`
	all := append(append(append([]any{}, args...), args...), f.Limit, f.Offset)
	if err := s.db.selectIn(ctx, s.db.db, &rows, q, all...); err != nil {
		return nil, 0, err
	}
	out := make([]*flightgraph.Flight, len(rows))
	total := 0
	for i := range rows {
		out[i], total = &rows[i].Flight, rows[i].Total
	}
	if len(rows) == 0 && f.Offset > 0 {
		// Past the last page the total has no row to ride on.
		err := s.db.get(ctx, s.db.db, &total, `SELECT COUNT(*) FROM flights WHERE `+cond, args...)
		return out, total, err
	}
	return out, total, nil
}
