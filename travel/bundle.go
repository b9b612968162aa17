package travel

import (
	"context"

	"github.com/flightgraph/flightgraph"
)

// FlightBundle is a page of flights with everything their documents show, loaded in one batch
// per kind: legs, airports, cities, countries, aircraft and carriers (operating and marketing).
type FlightBundle struct {
	Flights   []*flightgraph.Flight
	Legs      map[string][]*flightgraph.FlightLeg
	Airports  map[string]*flightgraph.Airport
	Cities    map[string]*flightgraph.City
	Countries map[string]*flightgraph.Country
	Aircraft  map[string]*flightgraph.Aircraft
	Carriers  map[string]*flightgraph.Carrier
}

// Bundle loads what the flights' documents need, six queries however many flights.
func (s *Service) Bundle(ctx context.Context, flights []*flightgraph.Flight) (*FlightBundle, error) {
	b, ids, carriers := newBundle(flights)
	if len(flights) == 0 {
		return b, nil
	}
	legs, err := s.shop().LegsByFlightIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	if err := s.fill(ctx, b, ids, carriers, legs); err != nil {
		return nil, err
	}
	return b, nil
}

// FlightBundle is Flight and then Bundle of it, with the flight and its legs in one read
// (FlightStore.FlightsWithLegs).
func (s *Service) FlightBundle(ctx context.Context, id string) (*flightgraph.Flight, *FlightBundle, error) {
	fid, err := flightgraph.ParseFlightID("id", id)
	if err != nil {
		return nil, nil, err
	}
	flights, legs, err := s.shop().FlightsWithLegs(ctx, []string{fid.String()})
	if err != nil {
		return nil, nil, err
	}
	if flights[0] == nil {
		return nil, nil, flightNotFound(fid)
	}
	b, ids, carriers := newBundle(flights)
	if err := s.fill(ctx, b, ids, carriers, legs); err != nil {
		return nil, nil, err
	}
	return flights[0], b, nil
}

// newBundle is an empty bundle of flights, with their ids and the carriers they name.
func newBundle(flights []*flightgraph.Flight) (b *FlightBundle, ids, carriers []string) {
	b = &FlightBundle{Flights: flights, Legs: map[string][]*flightgraph.FlightLeg{}, Airports: map[string]*flightgraph.Airport{},
		Cities: map[string]*flightgraph.City{}, Countries: map[string]*flightgraph.Country{}, Aircraft: map[string]*flightgraph.Aircraft{},
		Carriers: map[string]*flightgraph.Carrier{}}
	ids, carriers = make([]string, len(flights)), make([]string, len(flights))
	for i, f := range flights {
		ids[i], carriers[i] = f.ID, f.CarrierCode
		for _, c := range f.MarketedAs() {
			carriers = append(carriers, c.Carrier)
		}
	}
	return b, ids, carriers
}

// fill fills b with its flights' legs (legs[i] are those of ids[i], its flights' ids) and the
// reference data the legs and the carriers name.
func (s *Service) fill(ctx context.Context, b *FlightBundle, ids, carriers []string, legs [][]*flightgraph.FlightLeg) error {
	var airports, configs []string
	for i, ls := range legs {
		b.Legs[ids[i]] = ls
		for _, l := range ls {
			airports = append(airports, l.OriginCode, l.DestinationCode)
			configs = append(configs, l.ConfigurationCode)
		}
	}
	if err := fetchInto(ctx, b.Airports, s.Places.AirportsByCodes, airports, func(a *flightgraph.Airport) string { return a.Code }); err != nil {
		return err
	}
	var cities, countries []string
	for _, a := range b.Airports {
		cities, countries = append(cities, a.CityCode), append(countries, a.CountryCode)
	}
	if err := fetchInto(ctx, b.Cities, s.Places.CitiesByCodes, cities, func(c *flightgraph.City) string { return c.Code }); err != nil {
		return err
	}
	if err := fetchInto(ctx, b.Countries, s.Places.CountriesByCodes, countries, func(c *flightgraph.Country) string { return c.Code }); err != nil {
		return err
	}
	if err := fetchInto(ctx, b.Aircraft, s.Aircraft.AircraftByConfigurations, configs, func(a *flightgraph.Aircraft) string { return a.Configuration }); err != nil {
		return err
	}
	if err := fetchInto(ctx, b.Carriers, s.Network.CarriersByCodes, carriers, func(c *flightgraph.Carrier) string { return c.Code }); err != nil {
		return err
	}
	return nil
}

// fetchInto looks keys up through a batch lookup and files what it finds in m under its code.
func fetchInto[T any](ctx context.Context, m map[string]*T, batch func(context.Context, []string) ([]*T, error), keys []string, code func(*T) string) error {
	got, err := batch(ctx, keys)
	if err != nil {
		return err
	}
	for _, v := range got {
		if v != nil {
			m[code(v)] = v
		}
	}
	return nil
}

// FlightAmenityQuery asks for the amenities of the aircraft that flies a flight.
type FlightAmenityQuery struct {
	Carrier      string
	FlightNumber int
	Date         string
	CabinClass   flightgraph.CabinClass
	Category     flightgraph.AmenityCategory
	Limit        int
}

// FlightAmenities returns the amenities of the configuration flying a flight's first leg. It
// returns ECodeFlightNotFound for an unknown flight and ECodeFlightConfiguration when its
// configuration is unknown, then Amenities' errors.
func (s *Service) FlightAmenities(ctx context.Context, q FlightAmenityQuery) (string, []*flightgraph.Amenity, error) {
	f, err := s.FlightByNumber(ctx, q.Carrier, q.FlightNumber, q.Date)
	if flightgraph.ErrorCode(err) == flightgraph.ECodeFlightNotFound {
		return "", nil, flightgraph.ParamErrorf(flightgraph.ECodeFlightNotFound, "flightNumber", "flight %s%04d of %s is not found", q.Carrier, q.FlightNumber, q.Date)
	} else if err != nil {
		return "", nil, err
	}
	legs, err := s.shop().LegsByFlightIDs(ctx, []string{f.ID})
	if err != nil {
		return "", nil, err
	}
	if len(legs[0]) == 0 || legs[0][0].ConfigurationCode == "" {
		return "", nil, flightgraph.ParamErrorf(flightgraph.ECodeFlightConfiguration, "flightNumber", "the configuration of flight %s is not known", f.ID)
	}
	acv := legs[0][0].ConfigurationCode
	ams, err := s.Amenities(ctx, AmenityQuery{Configuration: acv, CabinClass: q.CabinClass, Category: q.Category, Limit: q.Limit})
	if flightgraph.ErrorCode(err) == flightgraph.ECodeFlightConfiguration {
		err = flightgraph.ParamErrorf(flightgraph.ECodeFlightConfiguration, "flightNumber", "the configuration %s of flight %s is not known", acv, f.ID)
	}
	return acv, ams, err
}
