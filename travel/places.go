package travel

import (
	"context"
	"sync"
	"time"

	"github.com/flightgraph/flightgraph"
)

// placeIndexTTL is how long the index of airport and city codes is trusted. The places change only
// when the data set is loaded again.
const placeIndexTTL = time.Minute

// placeIndex maps each airport code to itself and each city code to its airports, so that a
// search by place needs no subquery and a check of a code no round trip.
type placeIndex struct {
	mu     sync.Mutex
	loaded time.Time
	byCode map[string][]string
}

// airportsOf returns the airports a code stands for, nil for a code that is neither an airport
// nor a city. A stale index is reloaded under the lock, once a minute at most.
func (s *Service) airportsOf(ctx context.Context, code string) ([]string, error) {
	idx := &s.places
	idx.mu.Lock()
	defer idx.mu.Unlock()
	if idx.byCode == nil || time.Since(idx.loaded) >= placeIndexTTL {
		airports, err := s.Places.Airports(ctx)
		if err != nil {
			return nil, err
		}
		m := make(map[string][]string, 2*len(airports))
		for _, a := range airports {
			m[a.Code] = append(m[a.Code], a.Code)
			if a.CityCode != a.Code {
				m[a.CityCode] = append(m[a.CityCode], a.Code)
			}
		}
		idx.byCode, idx.loaded = m, time.Now()
	}
	return idx.byCode[code], nil
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
