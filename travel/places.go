package travel

import (
	"context"

	"github.com/flightgraph/flightgraph"
)

// The checks of a code below read the place, fleet and network stores. Under serve those are the
// reference snapshot (store/snapshot.go), so a check costs no round trip; without it, one query
// each.

// Place resolves the code a caller names as param: an airport, or a city with its airports. It
// returns ECodeBadFormat for a malformed code and ECodeIATANotFound for one that is neither,
// naming param. Under serve the place store is the reference snapshot, so this costs no round
// trip.
func (s *Service) Place(ctx context.Context, param, code string) (*flightgraph.Place, error) {
	c, err := flightgraph.NormalizeIATACode(param, code)
	if err != nil {
		return nil, err
	}
	places, err := s.placesOf(ctx, []string{c})
	if err != nil {
		return nil, err
	}
	if places[0] == nil {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeIATANotFound, param, "%s is neither an airport nor a city of the network", c)
	}
	return places[0], nil
}

// placesOf resolves distinct normalised codes as Place does, one place per code, nil for a code
// that is neither an airport nor a city. It reads the list of airports once (no round trip under
// serve: the snapshot has it), where lookups by code would ask the store for every code the
// snapshot lacks, and an airport's code is no city's, nor a city's an airport's, as a rule.
func (s *Service) placesOf(ctx context.Context, codes []string) ([]*flightgraph.Place, error) {
	airports, err := s.Places.Airports(ctx) // ordered by code
	if err != nil {
		return nil, err
	}
	at := make(map[string]int, len(codes))
	for i, c := range codes {
		at[c] = i
	}
	places := make([]*flightgraph.Place, len(codes))
	add := func(i int, a *flightgraph.Airport) {
		if places[i] == nil {
			places[i] = &flightgraph.Place{Code: codes[i]}
		}
		places[i].Airports = append(places[i].Airports, a)
	}
	for _, a := range airports {
		if i, ok := at[a.CityCode]; ok {
			add(i, a)
		}
	}
	// The airport of a code comes first, when the code is also a city's that it is not in.
	for _, a := range airports {
		if i, ok := at[a.Code]; ok && a.CityCode != a.Code {
			places[i] = &flightgraph.Place{Code: codes[i], Airports: append([]*flightgraph.Airport{a}, placeAirports(places[i])...)}
		}
	}
	return places, nil
}

func placeAirports(p *flightgraph.Place) []*flightgraph.Airport {
	if p == nil {
		return nil
	}
	return p.Airports
}

// Ends resolves the optional origin and destination codes of a search ("" for none), as
// Place does.
func (s *Service) Ends(ctx context.Context, origin, destination string) (o, d *flightgraph.Place, err error) {
	if origin != "" {
		if o, err = s.Place(ctx, "origin", origin); err != nil {
			return nil, nil, err
		}
	}
	if destination != "" {
		if d, err = s.Place(ctx, "destination", destination); err != nil {
			return nil, nil, err
		}
	}
	return o, d, nil
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
