package travel

import (
	"context"

	"github.com/flightgraph/flightgraph"
)

// FlightBundle is a page of flights with everything their documents show, loaded in one batch
// per kind: legs, airports, cities, countries, aircraft and carriers.
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
	b := &FlightBundle{Flights: flights, Legs: map[string][]*flightgraph.FlightLeg{}, Airports: map[string]*flightgraph.Airport{},
		Cities: map[string]*flightgraph.City{}, Countries: map[string]*flightgraph.Country{}, Aircraft: map[string]*flightgraph.Aircraft{},
		Carriers: map[string]*flightgraph.Carrier{}}
	if len(flights) == 0 {
		return b, nil
	}
	ids, carriers := make([]string, len(flights)), make([]string, len(flights))
	for i, f := range flights {
		ids[i], carriers[i] = f.ID, f.CarrierCode
	}
	legs, err := s.Flights.LegsByFlightIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	var airports, configs []string
	for i, ls := range legs {
		b.Legs[ids[i]] = ls
		for _, l := range ls {
			airports = append(airports, l.OriginCode, l.DestinationCode)
			configs = append(configs, l.ConfigurationCode)
		}
	}
	as, err := s.Places.AirportsByCodes(ctx, airports)
	if err != nil {
		return nil, err
	}
	var cities, countries []string
	for _, a := range as {
		if a != nil {
			b.Airports[a.Code] = a
			cities, countries = append(cities, a.CityCode), append(countries, a.CountryCode)
		}
	}
	cs, err := s.Places.CitiesByCodes(ctx, cities)
	if err != nil {
		return nil, err
	}
	for _, c := range cs {
		if c != nil {
			b.Cities[c.Code] = c
		}
	}
	ns, err := s.Places.CountriesByCodes(ctx, countries)
	if err != nil {
		return nil, err
	}
	for _, n := range ns {
		if n != nil {
			b.Countries[n.Code] = n
		}
	}
	ac, err := s.Aircraft.AircraftByConfigurations(ctx, configs)
	if err != nil {
		return nil, err
	}
	for _, a := range ac {
		if a != nil {
			b.Aircraft[a.Configuration] = a
		}
	}
	cr, err := s.Network.CarriersByCodes(ctx, carriers)
	if err != nil {
		return nil, err
	}
	for _, c := range cr {
		if c != nil {
			b.Carriers[c.Code] = c
		}
	}
	return b, nil
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
	legs, err := s.Flights.LegsByFlightIDs(ctx, []string{f.ID})
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
