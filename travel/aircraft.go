package travel

import (
	"context"
	"slices"
	"strings"

	"github.com/flightgraph/flightgraph"
)

// AircraftConfiguration returns one configuration by its ACV; ECodeFlightConfiguration if unknown.
func (s *Service) AircraftConfiguration(ctx context.Context, code string) (*flightgraph.Aircraft, error) {
	c := strings.ToUpper(strings.TrimSpace(code))
	if len(c) != 3 {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeBadFormat, "configuration", "an aircraft configuration is three characters, e.g. 77W, got %q", code)
	}
	return one(ctx, s.Aircraft.AircraftByConfigurations, c,
		flightgraph.ParamErrorf(flightgraph.ECodeFlightConfiguration, "configuration", "aircraft configuration %s is not found", c))
}

// Fleet returns every configuration.
func (s *Service) Fleet(ctx context.Context) ([]*flightgraph.Aircraft, error) {
	return s.Aircraft.AllAircraft(ctx)
}

// AmenityQuery asks for the amenities of a configuration.
type AmenityQuery struct {
	Configuration string
	CabinClass    flightgraph.CabinClass      // optional
	Category      flightgraph.AmenityCategory // optional
	Limit         int                         // optional
}

// Amenities returns the amenities of a configuration's cabins by business weight. It returns
// ECodeFlightConfiguration for an unknown configuration, ECodeCabinClassNotOnBoard when the class
// is not installed, ECodeNoCabinContent when the cabins have no content and ECodeNoCategoryContent
// when none is of the category.
func (s *Service) Amenities(ctx context.Context, q AmenityQuery) ([]*flightgraph.Amenity, error) {
	a, err := s.AircraftConfiguration(ctx, q.Configuration)
	if err != nil {
		return nil, err
	}
	cabins, err := s.Aircraft.CabinsByConfigurations(ctx, []string{a.Configuration})
	if err != nil {
		return nil, err
	}
	if len(cabins[0]) == 0 {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeCabinClassUnknown, "configuration", "the cabins of %s cannot be determined", a.Configuration)
	}
	var products []string
	for _, c := range cabins[0] {
		if q.CabinClass == "" || c.CabinClass == q.CabinClass {
			products = append(products, c.Product)
		}
	}
	if len(products) == 0 {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeCabinClassNotOnBoard, "cabinClass", "cabin class %s is not available on %s", q.CabinClass, a.Configuration)
	}
	lists, err := s.Aircraft.AmenitiesByProducts(ctx, products)
	if err != nil {
		return nil, err
	}
	var all, out []*flightgraph.Amenity
	for _, l := range lists {
		all = append(all, l...)
	}
	if len(all) == 0 {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeNoCabinContent, "cabinClass", "no rich content for the cabins of %s", a.Configuration)
	}
	for _, am := range all {
		if q.Category == "" || am.Category == q.Category {
			out = append(out, am)
		}
	}
	if len(out) == 0 {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeNoCategoryContent, "category", "no rich content of category %s", q.Category)
	}
	// Stable, so equal weights keep the cabins' order from the front of the aircraft.
	slices.SortStableFunc(out, func(a, b *flightgraph.Amenity) int { return b.Weight - a.Weight })
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

// FindRoutes returns one page of routes and the number of all matches.
func (s *Service) FindRoutes(ctx context.Context, f flightgraph.RouteFilter) ([]*flightgraph.Route, int, error) {
	if err := f.Validate(); err != nil {
		return nil, 0, err
	}
	return s.Network.FindRoutes(ctx, f)
}

// Carriers returns every carrier.
func (s *Service) Carriers(ctx context.Context) ([]*flightgraph.Carrier, error) {
	return s.Network.Carriers(ctx)
}

// FindSchedule returns one page of the schedule and the number of all matches.
func (s *Service) FindSchedule(ctx context.Context, f flightgraph.ScheduleFilter) ([]*flightgraph.ScheduledLeg, int, error) {
	if err := f.Validate(); err != nil {
		return nil, 0, err
	}
	return s.Network.FindSchedule(ctx, f)
}
