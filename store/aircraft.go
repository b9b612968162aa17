package store

import (
	"context"

	"github.com/flightgraph/flightgraph"
)

// AircraftStore implements flightgraph.AircraftStore.
type AircraftStore struct{ db *DB }

var _ flightgraph.AircraftStore = (*AircraftStore)(nil)

// NewAircraftStore returns the aircraft store of db.
func NewAircraftStore(db *DB) *AircraftStore { return &AircraftStore{db: db} }

const aircraftQuery = `SELECT a.code, a.type_code, t.name AS type_name, t.icao, a.carrier, a.name, a.wifi, a.layout
	FROM aircraft a JOIN aircraft_types t ON t.code = a.type_code`

// AircraftByConfigurations implements flightgraph.AircraftStore. The type's name comes with the
// configuration: it is an attribute, not a hop.
func (s *AircraftStore) AircraftByConfigurations(ctx context.Context, codes []string) ([]*flightgraph.Aircraft, error) {
	var rows []*flightgraph.Aircraft
	if err := s.db.selectIn(ctx, s.db.db, &rows, aircraftQuery+` WHERE a.code IN (?)`, unique(codes)); err != nil {
		return nil, err
	}
	return byKey(codes, rows, func(a *flightgraph.Aircraft) string { return a.Configuration }), nil
}

// AllAircraft implements flightgraph.AircraftStore.
func (s *AircraftStore) AllAircraft(ctx context.Context) ([]*flightgraph.Aircraft, error) {
	var rows []*flightgraph.Aircraft
	err := s.db.selectIn(ctx, s.db.db, &rows, aircraftQuery+` ORDER BY a.code`)
	return rows, err
}

// CabinsByConfigurations implements flightgraph.AircraftStore.
func (s *AircraftStore) CabinsByConfigurations(ctx context.Context, codes []string) ([][]*flightgraph.Cabin, error) {
	var rows []*flightgraph.Cabin
	if err := s.db.selectIn(ctx, s.db.db, &rows, `SELECT configuration, class, seats, product FROM cabins
		WHERE configuration IN (?) ORDER BY configuration, position`, unique(codes)); err != nil {
		return nil, err
	}
	return groupByKey(codes, rows, func(c *flightgraph.Cabin) string { return c.Configuration }), nil
}

// AmenitiesByProducts implements flightgraph.AircraftStore.
func (s *AircraftStore) AmenitiesByProducts(ctx context.Context, products []string) ([][]*flightgraph.Amenity, error) {
	var rows []*flightgraph.Amenity
	if err := s.db.selectIn(ctx, s.db.db, &rows, `SELECT a.product, p.class, a.category, a.feature, a.name, a.description, a.weight
		FROM amenities a JOIN cabin_products p ON p.code = a.product
		WHERE a.product IN (?) ORDER BY a.product, a.weight DESC, a.position`, unique(products)); err != nil {
		return nil, err
	}
	return groupByKey(products, rows, func(a *flightgraph.Amenity) string { return a.Product }), nil
}
