// Package travel is the flight domain's logic over the store interfaces: flights and their
// status, places, the fleet and its amenities, and the network. GraphQL resolvers and REST
// handlers both call it, so both edges answer the same facts and the same error codes.
package travel

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/flightgraph/flightgraph"
)

// Service answers the flight domain's questions.
type Service struct {
	Flights  flightgraph.FlightStore
	Places   flightgraph.PlaceStore
	Aircraft flightgraph.AircraftStore
	Network  flightgraph.NetworkStore
	// Shop is what shopping (offers, calendars, deals, inspiration, availability, carts) reads:
	// the operational flights near the day of departure and, beyond them to the booking horizon,
	// the schedule's flights (dataset.Horizon). Flights by id and by number are read from it
	// too, so that a flight an offer shows answers flight status. Nil means Flights: the window
	// only.
	Shop flightgraph.FlightStore
	// Now is the clock that flight status and offers follow.
	Now func() time.Time
	// OfferKey signs offer ids (at least 32 bytes); replicas share it, so that an offer found on
	// one is priced again on another.
	OfferKey []byte
	// Loyalty, when set, is the loyalty tier a call is answered for, given the request's
	// loyaltyProgram parameter (access.Service.LoyaltyTier: a customer's token wins).
	Loyalty func(ctx context.Context, loyaltyProgram string) (tier string, err error)
	// Searches records mailed searches with their mail (mail-my-search).
	Searches flightgraph.SearchStore
	// RequireHeavySlot, when set (as serve sets it), refuses heavy work (inspirations, deals,
	// calendars) for a request that holds no heavy-work slot (flightgraph.HeavyWork): the
	// edge's access guard takes one before it charges a call its operation declares heavy,
	// and heavy work asked for by an operation declared light must not run unbounded. Unset,
	// as in the engine's own tests, heavy work runs whatever the request holds.
	RequireHeavySlot bool
	// Index, when set, keeps the reads and prices of inspirations and deals between calls
	// (FareIndex); nil reads and prices them in each call.
	Index *FareIndex
	// MailBudget bounds mail-my-search's mail with every other mail of the service
	// (access.MailBudget); MailSearch refuses to work without one.
	MailBudget flightgraph.MailBudget
	// Trace, when set, starts the span of a search engine's work (work names it: offers,
	// availability, inspiration, deals, calendar) and returns the context to do the work in and
	// what to call with its error (package tracing). Unset, nothing is traced.
	Trace func(ctx context.Context, work string) (context.Context, func(error))
}

// traced starts the span of work (Trace), if anything traces.
func (s *Service) traced(ctx context.Context, work string) (context.Context, func(error)) {
	if s.Trace == nil {
		return ctx, untraced
	}
	return s.Trace(ctx, work)
}

// untraced is the end of work that no span watches.
func untraced(error) {}

// shop is the flight store shopping reads (Shop, else Flights).
func (s *Service) shop() flightgraph.FlightStore {
	if s.Shop != nil {
		return s.Shop
	}
	return s.Flights
}

// heavy takes the request's turn at its heavy-work slot, so that the heavy parts of one request
// run one at a time, and returns what gives it back; see RequireHeavySlot.
func (s *Service) heavy(ctx context.Context) (func(), error) {
	w := flightgraph.HeavyWorkFromContext(ctx)
	if !w.Held() {
		if s.RequireHeavySlot {
			return nil, errors.New("travel: heavy work for a request that holds no heavy-work slot (its operation is not declared heavy)")
		}
		return func() {}, nil
	}
	return w.Turn(ctx)
}

// Flight returns one flight by id. It returns ECodeBadFormat for a malformed id and
// ECodeFlightNotFound for an unknown one.
func (s *Service) Flight(ctx context.Context, id string) (*flightgraph.Flight, error) {
	fid, err := flightgraph.ParseFlightID("id", id)
	if err != nil {
		return nil, err
	}
	return s.flight(ctx, fid)
}

// flight is the flight of a parsed id; ECodeFlightNotFound if none.
func (s *Service) flight(ctx context.Context, fid flightgraph.FlightID) (*flightgraph.Flight, error) {
	return one(ctx, s.shop().FlightsByIDs, fid.String(), flightNotFound(fid))
}

// flightNotFound is the error of a flight id that names no flight.
func flightNotFound(fid flightgraph.FlightID) error {
	return flightgraph.ParamErrorf(flightgraph.ECodeFlightNotFound, "id", "flight %s is not found", fid)
}

// one looks key up through a batch lookup; a key it does not find is the error missing.
func one[T any](ctx context.Context, batch func(context.Context, []string) ([]*T, error), key string, missing error) (*T, error) {
	got, err := batch(ctx, []string{key})
	if err != nil {
		return nil, err
	}
	if got[0] == nil {
		return nil, missing
	}
	return got[0], nil
}

// FlightByNumber returns a carrier's flight on a schedule date; ECodeFlightNotFound if none.
func (s *Service) FlightByNumber(ctx context.Context, carrier string, number int, date string) (*flightgraph.Flight, error) {
	carrier = strings.ToUpper(carrier)
	if !flightgraph.IsCarrierCode(carrier) {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeBadFormat, "carrier", "carrier must be a two-character airline code, got %q", carrier)
	}
	if number < 1 || number > 9999 {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "flightNumber", "flight number must be between 1 and 9999, got %d", number)
	}
	if _, err := flightgraph.ParseDate("date", date); err != nil {
		return nil, err
	}
	// By number rather than by id: a flight operating with a suffix (delayed past midnight) has
	// it in its id.
	found, _, err := s.shop().FindFlights(ctx, flightgraph.FlightFilter{Carrier: carrier, FlightNumber: number, Date: date, Page: flightgraph.Page{Limit: 1}})
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeFlightNotFound, "flightNumber", "flight %s%04d of %s is not found", carrier, number, date)
	}
	return found[0], nil
}

// FindFlights returns one page of flights and the number of all matches. It returns the filter's
// validation errors.
func (s *Service) FindFlights(ctx context.Context, f flightgraph.FlightFilter) ([]*flightgraph.Flight, int, error) {
	if err := f.Validate(); err != nil {
		return nil, 0, err
	}
	return s.Flights.FindFlights(ctx, f)
}

// Airport returns one airport; ECodeBadFormat for a malformed code, ECodeIATANotFound for an
// unknown one.
func (s *Service) Airport(ctx context.Context, code string) (*flightgraph.Airport, error) {
	c, err := flightgraph.NormalizeIATACode("code", code)
	if err != nil {
		return nil, err
	}
	return one(ctx, s.Places.AirportsByCodes, c, flightgraph.ParamErrorf(flightgraph.ECodeIATANotFound, "code", "airport %s is not found", c))
}

// BoardAirport checks the airport of a board (a departures or arrivals stream, whose parameter
// is param) and returns its code: ECodeBadFormat for a malformed code, ECodeIATANotFound for an
// unknown one. A board of an airport that does not exist would never hear anything.
func (s *Service) BoardAirport(ctx context.Context, param, code string) (string, error) {
	c, err := flightgraph.NormalizeIATACode(param, code)
	if err != nil {
		return "", err
	}
	a, err := one(ctx, s.Places.AirportsByCodes, c, flightgraph.ParamErrorf(flightgraph.ECodeIATANotFound, param, "airport %s is not found", c))
	if err != nil {
		return "", err
	}
	return a.Code, nil
}

// FindAirports returns one page of airports and the number of all matches.
func (s *Service) FindAirports(ctx context.Context, f flightgraph.AirportFilter) ([]*flightgraph.Airport, int, error) {
	f.Country, f.City = strings.ToUpper(f.Country), strings.ToUpper(f.City)
	if err := f.Validate(); err != nil {
		return nil, 0, err
	}
	return s.Places.FindAirports(ctx, f)
}

// City returns one city; ECodeBadFormat or ECodeIATANotFound.
func (s *Service) City(ctx context.Context, code string) (*flightgraph.City, error) {
	c, err := flightgraph.NormalizeIATACode("code", code)
	if err != nil {
		return nil, err
	}
	return one(ctx, s.Places.CitiesByCodes, c, flightgraph.ParamErrorf(flightgraph.ECodeIATANotFound, "code", "city %s is not found", c))
}

// Country returns one country; ECodeBadFormat for a malformed code, ECodeInvalidParameter for
// one the network does not serve.
func (s *Service) Country(ctx context.Context, code string) (*flightgraph.Country, error) {
	c := strings.ToUpper(strings.TrimSpace(code))
	if !flightgraph.IsCountryCode(c) {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeBadFormat, "code", "country must be a two-letter ISO code, got %q", code)
	}
	return one(ctx, s.Places.CountriesByCodes, c, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "code", "country %s is not served", c))
}

// Cities returns every city.
func (s *Service) Cities(ctx context.Context) ([]*flightgraph.City, error) {
	return s.Places.Cities(ctx)
}

// Countries returns every country.
func (s *Service) Countries(ctx context.Context) ([]*flightgraph.Country, error) {
	return s.Places.Countries(ctx)
}
