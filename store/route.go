package store

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/flightgraph/flightgraph"
)

// NetworkStore implements flightgraph.NetworkStore.
type NetworkStore struct{ db *DB }

var _ flightgraph.NetworkStore = (*NetworkStore)(nil)

// NewNetworkStore returns the network store of db.
func NewNetworkStore(db *DB) *NetworkStore { return &NetworkStore{db: db} }

// FindRoutes implements flightgraph.NetworkStore.
func (s *NetworkStore) FindRoutes(ctx context.Context, f flightgraph.RouteFilter) ([]*flightgraph.Route, int, error) {
	where, args := []string{"1 = 1"}, []any{}
	if f.Origin != "" {
		where = append(where, "origin IN (SELECT code FROM airports WHERE code = ? OR city_code = ?)")
		args = append(args, f.Origin, f.Origin)
	}
	if f.Destination != "" {
		where = append(where, "destination IN (SELECT code FROM airports WHERE code = ? OR city_code = ?)")
		args = append(args, f.Destination, f.Destination)
	}
	if f.Carrier != "" {
		where, args = append(where, "carrier = ?"), append(args, f.Carrier)
	}
	var rows []struct {
		flightgraph.Route
		Total int `db:"total"`
	}
	q := `SELECT carrier, origin, destination, distance_km, block_minutes, haul, weekly_flights, COUNT(*) OVER () AS total
		FROM routes WHERE ` + strings.Join(where, " AND ") + ` ORDER BY origin, destination, carrier LIMIT ? OFFSET ?`
	if err := s.db.selectIn(ctx, s.db.db, &rows, q, append(args, f.Limit, f.Offset)...); err != nil {
		return nil, 0, err
	}
	out := make([]*flightgraph.Route, len(rows))
	total := 0
	for i := range rows {
		out[i], total = &rows[i].Route, rows[i].Total
	}
	if len(rows) == 0 && f.Offset > 0 {
		err := s.db.get(ctx, s.db.db, &total, `SELECT COUNT(*) FROM routes WHERE `+strings.Join(where, " AND "), args...)
		return out, total, err
	}
	return out, total, nil
}

// CarriersByCodes implements flightgraph.NetworkStore.
func (s *NetworkStore) CarriersByCodes(ctx context.Context, codes []string) ([]*flightgraph.Carrier, error) {
	var rows []*flightgraph.Carrier
	if err := s.db.selectIn(ctx, s.db.db, &rows, `SELECT code, name, hub FROM carriers WHERE code IN (?)`, unique(codes)); err != nil {
		return nil, err
	}
	return byKey(codes, rows, func(c *flightgraph.Carrier) string { return c.Code }), nil
}

// Carriers implements flightgraph.NetworkStore.
func (s *NetworkStore) Carriers(ctx context.Context) ([]*flightgraph.Carrier, error) {
	var rows []*flightgraph.Carrier
	err := s.db.selectIn(ctx, s.db.db, &rows, `SELECT code, name, hub FROM carriers ORDER BY code`)
	return rows, err
}

// FindSchedule implements flightgraph.NetworkStore.
func (s *NetworkStore) FindSchedule(ctx context.Context, f flightgraph.ScheduleFilter) ([]*flightgraph.ScheduledLeg, int, error) {
	where, args := []string{"1 = 1"}, []any{}
	if f.Origin != "" {
		where = append(where, "origin IN (SELECT code FROM airports WHERE code = ? OR city_code = ?)")
		args = append(args, f.Origin, f.Origin)
	}
	if f.Destination != "" {
		where = append(where, "destination IN (SELECT code FROM airports WHERE code = ? OR city_code = ?)")
		args = append(args, f.Destination, f.Destination)
	}
	if f.Carrier != "" {
		where, args = append(where, "carrier = ?"), append(args, f.Carrier)
	}
	if f.FlightNumber != 0 {
		where, args = append(where, "number = ?"), append(args, f.FlightNumber)
	}
	if f.Date != "" {
		d, _ := time.Parse(flightgraph.DateLayout, f.Date)
		weekday := strconv.Itoa((int(d.Weekday())+6)%7 + 1)
		where = append(where, "period_from <= ? AND period_to >= ? AND days LIKE ?")
		args = append(args, f.Date, f.Date, "%"+weekday+"%")
	}
	cond := strings.Join(where, " AND ")
	var rows []struct {
		flightgraph.ScheduledLeg
		Total int `db:"total"`
	}
	q := `SELECT carrier, number, seq, period_from, period_to, days, origin, destination, departure_local, arrival_local,
		departure_day_offset, arrival_day_offset, configuration, service_type, distance_km, block_minutes,
		(SELECT COUNT(*) FROM schedule_legs WHERE ` + cond + `) AS total
		FROM schedule_legs WHERE ` + cond + ` ORDER BY carrier, number, seq LIMIT ? OFFSET ?`
	all := append(append(append([]any{}, args...), args...), f.Limit, f.Offset)
	if err := s.db.selectIn(ctx, s.db.db, &rows, q, all...); err != nil {
		return nil, 0, err
	}
	out := make([]*flightgraph.ScheduledLeg, len(rows))
	total := 0
	for i := range rows {
		out[i], total = &rows[i].ScheduledLeg, rows[i].Total
	}
	if len(rows) == 0 && f.Offset > 0 {
		err := s.db.get(ctx, s.db.db, &total, `SELECT COUNT(*) FROM schedule_legs WHERE `+cond, args...)
		return out, total, err
	}
	return out, total, nil
}

// AllRoutes implements flightgraph.NetworkStore.
func (s *NetworkStore) AllRoutes(ctx context.Context) ([]*flightgraph.Route, error) {
	var rows []*flightgraph.Route
	err := s.db.selectIn(ctx, s.db.db, &rows, `SELECT carrier, origin, destination, distance_km, block_minutes, haul, weekly_flights
		FROM routes ORDER BY origin, destination, carrier`)
	return rows, err
}
