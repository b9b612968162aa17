package travel

import (
	"context"
	"sync"
	"time"

	"github.com/flightgraph/flightgraph"
)

// codeIndexTTL is how long the index of codes is trusted. The codes change only when the data set
// is loaded again. It is short because, under serve, the index is rebuilt from the reference
// snapshot (travel.Reference) at no query's cost, and should not add its own minute to the
// snapshot's; without a snapshot a rebuild costs three queries.
const codeIndexTTL = 10 * time.Second

// codeIndex holds the codes of the reference data: each airport code mapped to itself and each
// city code to its airports, the country codes and the carrier codes. Searches by place then need
// no subquery, and checks of a code (a REST header, a query parameter) no round trip.
type codeIndex struct {
	mu        sync.Mutex
	loaded    time.Time
	places    map[string][]string
	countries map[string]bool
	carriers  map[string]string // code → name
}

// codes returns the index, reloading it under the lock when stale: three queries once a minute
// at most.
func (s *Service) codes(ctx context.Context) (*codeIndex, error) {
	idx := &s.index
	idx.mu.Lock()
	defer idx.mu.Unlock()
	if idx.places != nil && time.Since(idx.loaded) < codeIndexTTL {
		return idx, nil
	}
	airports, err := s.Places.Airports(ctx)
	if err != nil {
		return nil, err
	}
	countries, err := s.Places.Countries(ctx)
	if err != nil {
		return nil, err
	}
	carriers, err := s.Network.Carriers(ctx)
	if err != nil {
		return nil, err
	}
	idx.places = make(map[string][]string, 2*len(airports))
	for _, a := range airports {
		idx.places[a.Code] = append(idx.places[a.Code], a.Code)
		if a.CityCode != a.Code {
			idx.places[a.CityCode] = append(idx.places[a.CityCode], a.Code)
		}
	}
	idx.countries = make(map[string]bool, len(countries))
	for _, c := range countries {
		idx.countries[c.Code] = true
	}
	idx.carriers = make(map[string]string, len(carriers))
	for _, c := range carriers {
		idx.carriers[c.Code] = c.Name
	}
	idx.loaded = time.Now()
	return idx, nil
}

// airportsOf returns the airports a code stands for, nil for a code that is neither an airport
// nor a city.
func (s *Service) airportsOf(ctx context.Context, code string) ([]string, error) {
	idx, err := s.codes(ctx)
	if err != nil {
		return nil, err
	}
	return idx.places[code], nil
}

// CountryServed reports whether code is a country of the network.
func (s *Service) CountryServed(ctx context.Context, code string) (bool, error) {
	idx, err := s.codes(ctx)
	if err != nil {
		return false, err
	}
	return idx.countries[code], nil
}

// CarrierNames maps each carrier code of the network to its name; callers must not change it.
func (s *Service) CarrierNames(ctx context.Context) (map[string]string, error) {
	idx, err := s.codes(ctx)
	if err != nil {
		return nil, err
	}
	return idx.carriers, nil
}

// resolveEnds fills the airports of a filter's origin and destination.
func (s *Service) resolveEnds(ctx context.Context, f *flightgraph.FlightFilter) error {
	var err error
	if f.Origin != "" {
		if f.OriginAirports, err = s.airportsOf(ctx, f.Origin); err != nil {
			return err
		}
	}
	if f.Destination != "" {
		f.DestinationAirports, err = s.airportsOf(ctx, f.Destination)
	}
	return err
}
