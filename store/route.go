package store

import (
	"context"
	"strconv"
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
	var w filter
	w.places(f.Origin, f.Destination)
	if f.Carrier != "" {
		w.add("carrier = ?", f.Carrier)
	}
	type row struct {
		flightgraph.Route
		Total int `db:"total"`
	}
	return findPage(ctx, s.db, func(r *row) (*flightgraph.Route, int) { return &r.Route, r.Total },
		"carrier, origin, destination, distance_km, block_minutes, haul, weekly_flights", "routes", w, "origin, destination, carrier", f.Page)
}

// RoutesByIDs implements flightgraph.NetworkStore. The routes are few (one row per carrier and
// airport pair), so the id is matched as the concatenation of the primary key's columns.
func (s *NetworkStore) RoutesByIDs(ctx context.Context, ids []string) ([]*flightgraph.Route, error) {
	var rows []*flightgraph.Route
	if err := s.db.selectIn(ctx, s.db.db, &rows, `SELECT carrier, origin, destination, distance_km, block_minutes, haul, weekly_flights
		FROM routes WHERE carrier || '-' || origin || '-' || destination IN (?)`, unique(ids)); err != nil {
		return nil, err
	}
	return byKey(ids, rows, func(r *flightgraph.Route) string { return r.ID() }), nil
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
	var w filter
	w.places(f.Origin, f.Destination)
	if f.Carrier != "" {
		w.add("carrier = ?", f.Carrier)
	}
	if f.FlightNumber != 0 {
		w.add("number = ?", f.FlightNumber)
	}
	if f.Date != "" {
		d, _ := time.Parse(flightgraph.DateLayout, f.Date)
		weekday := strconv.Itoa((int(d.Weekday())+6)%7 + 1) // SSIM: 1 is Monday
		w.add("period_from <= ? AND period_to >= ? AND days LIKE ?", f.Date, f.Date, "%"+weekday+"%")
	}
	type row struct {
		flightgraph.ScheduledLeg
		Total int `db:"total"`
	}
	return findPage(ctx, s.db, func(r *row) (*flightgraph.ScheduledLeg, int) { return &r.ScheduledLeg, r.Total }, `carrier, number, seq, period_from, period_to, days, origin,
		destination, departure_local, arrival_local, departure_day_offset, arrival_day_offset, configuration, service_type, distance_km,
		block_minutes`, "schedule_legs", w, "carrier, number, seq", f.Page)
}

// AllRoutes implements flightgraph.NetworkStore.
func (s *NetworkStore) AllRoutes(ctx context.Context) ([]*flightgraph.Route, error) {
	var rows []*flightgraph.Route
	err := s.db.selectIn(ctx, s.db.db, &rows, `SELECT carrier, origin, destination, distance_km, block_minutes, haul, weekly_flights
		FROM routes ORDER BY origin, destination, carrier`)
	return rows, err
}
