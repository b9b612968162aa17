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
	var w filter
	if f.Country != "" {
		w.add("a.country_code = ?", f.Country)
	}
	if f.City != "" {
		w.add("a.city_code = ?", f.City)
	}
	if f.Search != "" {
		like := containsPattern(strings.ToLower(f.Search))
		w.add("(LOWER(a.code) LIKE ?"+likeEscape+" OR LOWER(a.name) LIKE ?"+likeEscape+" OR LOWER(c.label_en) LIKE ?"+likeEscape+")", like, like, like)
	}
	type row struct {
		flightgraph.Airport
		Total int `db:"total"`
	}
	return findPage(ctx, s.db, func(r *row) (*flightgraph.Airport, int) { return &r.Airport, r.Total },
		"a.code, a.name, a.city_code, a.country_code, a.latitude, a.longitude, a.time_zone, a.hub",
		"airports a JOIN cities c ON c.code = a.city_code", w, "a.code", f.Page)
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
