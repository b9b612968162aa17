package store

import (
	"context"
	"strings"

	"github.com/flightgraph/flightgraph"
)

// PlaceStore implements flightgraph.PlaceStore.
type PlaceStore struct{ db *DB }

var _ flightgraph.PlaceStore = (*PlaceStore)(nil)

// NewPlaceStore returns the place store of db.
func NewPlaceStore(db *DB) *PlaceStore { return &PlaceStore{db: db} }

const (
	airportCols = `code, name, city_code, country_code, latitude, longitude, time_zone, hub`
	cityCols    = `code, name, country_code, label_en, label_fr, label_nl`
	countryCols = `code, name, area_code, currency, euro, eu, schengen, label_en, label_fr, label_nl`
)

// AirportsByCodes implements flightgraph.PlaceStore.
func (s *PlaceStore) AirportsByCodes(ctx context.Context, codes []string) ([]*flightgraph.Airport, error) {
	var rows []*flightgraph.Airport
	if err := s.db.selectIn(ctx, s.db.db, &rows, `SELECT `+airportCols+` FROM airports WHERE code IN (?)`, unique(codes)); err != nil {
		return nil, err
	}
	return byKey(codes, rows, func(a *flightgraph.Airport) string { return a.Code }), nil
}

// CitiesByCodes implements flightgraph.PlaceStore.
func (s *PlaceStore) CitiesByCodes(ctx context.Context, codes []string) ([]*flightgraph.City, error) {
	var rows []*flightgraph.City
	if err := s.db.selectIn(ctx, s.db.db, &rows, `SELECT `+cityCols+` FROM cities WHERE code IN (?)`, unique(codes)); err != nil {
		return nil, err
	}
	return byKey(codes, rows, func(c *flightgraph.City) string { return c.Code }), nil
}

// CountriesByCodes implements flightgraph.PlaceStore.
func (s *PlaceStore) CountriesByCodes(ctx context.Context, codes []string) ([]*flightgraph.Country, error) {
	var rows []*flightgraph.Country
	if err := s.db.selectIn(ctx, s.db.db, &rows, `SELECT `+countryCols+` FROM countries WHERE code IN (?)`, unique(codes)); err != nil {
		return nil, err
	}
	return byKey(codes, rows, func(c *flightgraph.Country) string { return c.Code }), nil
}

// AirportsByCities implements flightgraph.PlaceStore.
func (s *PlaceStore) AirportsByCities(ctx context.Context, cityCodes []string) ([][]*flightgraph.Airport, error) {
	var rows []*flightgraph.Airport
	if err := s.db.selectIn(ctx, s.db.db, &rows, `SELECT `+airportCols+` FROM airports WHERE city_code IN (?) ORDER BY code`, unique(cityCodes)); err != nil {
		return nil, err
	}
	return groupByKey(cityCodes, rows, func(a *flightgraph.Airport) string { return a.CityCode }), nil
}

// FindAirports implements flightgraph.PlaceStore.
func (s *PlaceStore) FindAirports(ctx context.Context, f flightgraph.AirportFilter) ([]*flightgraph.Airport, int, error) {
	where, args := []string{"1 = 1"}, []any{}
	if f.Country != "" {
		where, args = append(where, "a.country_code = ?"), append(args, f.Country)
	}
	if f.City != "" {
		where, args = append(where, "a.city_code = ?"), append(args, f.City)
	}
	if f.Search != "" {
		like := "%" + strings.ToLower(f.Search) + "%"
		where = append(where, "(LOWER(a.code) LIKE ? OR LOWER(a.name) LIKE ? OR LOWER(c.label_en) LIKE ?)")
		args = append(args, like, like, like)
	}
	var rows []struct {
		flightgraph.Airport
		Total int `db:"total"`
	}
	q := `SELECT a.code, a.name, a.city_code, a.country_code, a.latitude, a.longitude, a.time_zone, a.hub, COUNT(*) OVER () AS total
		FROM airports a JOIN cities c ON c.code = a.city_code
		WHERE ` + strings.Join(where, " AND ") + ` ORDER BY a.code LIMIT ? OFFSET ?`
	if err := s.db.selectIn(ctx, s.db.db, &rows, q, append(args, f.Limit, f.Offset)...); err != nil {
		return nil, 0, err
	}
	out := make([]*flightgraph.Airport, len(rows))
	total := 0
	for i := range rows {
		out[i], total = &rows[i].Airport, rows[i].Total
	}
	if len(rows) == 0 && f.Offset > 0 {
		err := s.db.get(ctx, s.db.db, &total, `SELECT COUNT(*) FROM airports a JOIN cities c ON c.code = a.city_code WHERE `+strings.Join(where, " AND "), args...)
		return out, total, err
	}
	return out, total, nil
}

// Cities implements flightgraph.PlaceStore.
func (s *PlaceStore) Cities(ctx context.Context) ([]*flightgraph.City, error) {
	var rows []*flightgraph.City
	err := s.db.selectIn(ctx, s.db.db, &rows, `SELECT `+cityCols+` FROM cities ORDER BY code`)
	return rows, err
}

// Countries implements flightgraph.PlaceStore.
func (s *PlaceStore) Countries(ctx context.Context) ([]*flightgraph.Country, error) {
	var rows []*flightgraph.Country
	err := s.db.selectIn(ctx, s.db.db, &rows, `SELECT `+countryCols+` FROM countries ORDER BY code`)
	return rows, err
}

// Airports implements flightgraph.PlaceStore.
func (s *PlaceStore) Airports(ctx context.Context) ([]*flightgraph.Airport, error) {
	var rows []*flightgraph.Airport
	err := s.db.selectIn(ctx, s.db.db, &rows, `SELECT `+airportCols+` FROM airports ORDER BY code`)
	return rows, err
}
