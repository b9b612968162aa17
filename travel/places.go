package travel

import (
	"context"
	"slices"

	"github.com/flightgraph/flightgraph"
)

// The checks of a code below read the place, fleet and network stores. Under serve those are the
// reference snapshot (reference.go), so a check costs no round trip; without it, one query each.

// Place returns a normalised place code, an airport or a city, and its airports: the airport
// itself, and a city's airports. It returns ECodeBadFormat for a malformed code and
// ECodeIATANotFound for one that is neither, naming param.
func (s *Service) Place(ctx context.Context, param, code string) (string, []*flightgraph.Airport, error) {
	c, err := flightgraph.NormalizeIATACode(param, code)
	if err != nil {
		return "", nil, err
	}
	all, err := s.airportsOf(ctx, c)
	if err != nil {
		return "", nil, err
	}
	if len(all) == 0 {
		return "", nil, flightgraph.ParamErrorf(flightgraph.ECodeIATANotFound, param, "%s is neither an airport nor a city of the network", c)
	}
	return c, all, nil
}

// airportsOf returns the airports a code stands for: the airport itself, and a city's airports;
// none for a code that is neither.
func (s *Service) airportsOf(ctx context.Context, code string) ([]*flightgraph.Airport, error) {
	airports, err := s.Places.AirportsByCodes(ctx, []string{code})
	if err != nil {
		return nil, err
	}
	ofCity, err := s.Places.AirportsByCities(ctx, []string{code})
	if err != nil {
		return nil, err
	}
	all := slices.Clone(ofCity[0])
	if a := airports[0]; a != nil && !slices.ContainsFunc(all, func(b *flightgraph.Airport) bool { return b.Code == a.Code }) {
		all = append([]*flightgraph.Airport{a}, all...)
	}
	return all, nil
}

// airportCodes is airportsOf's codes, nil for a code that is neither an airport nor a city.
func (s *Service) airportCodes(ctx context.Context, code string) ([]string, error) {
	all, err := s.airportsOf(ctx, code)
	if err != nil || len(all) == 0 {
		return nil, err
	}
	codes := make([]string, len(all))
	for i, a := range all {
		codes[i] = a.Code
	}
	return codes, nil
}

// MarketCountry implements flightgraph.Markets: the country of code, nil when the network does
// not sell there.
func (s *Service) MarketCountry(ctx context.Context, code string) (*flightgraph.Country, error) {
	cs, err := s.Places.CountriesByCodes(ctx, []string{code})
	if err != nil {
		return nil, err
	}
	return cs[0], nil
}

// IsHost implements flightgraph.Markets: whether code is a carrier of the network.
func (s *Service) IsHost(ctx context.Context, code string) (bool, error) {
	names, err := s.CarrierNames(ctx)
	if err != nil {
		return false, err
	}
	_, ok := names[code]
	return ok, nil
}

// CarrierNames maps each carrier code of the network to its name.
func (s *Service) CarrierNames(ctx context.Context) (map[string]string, error) {
	carriers, err := s.Network.Carriers(ctx)
	if err != nil {
		return nil, err
	}
	names := make(map[string]string, len(carriers))
	for _, c := range carriers {
		names[c.Code] = c.Name
	}
	return names, nil
}
