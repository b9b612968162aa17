package travel

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/flightgraph/flightgraph"
)

// maxInspirationFlights bounds each of an inspiration's two reads of flights (the origin's
// departures in the month, and the hubs' departures that connect with them): a spoke of the demo
// network reads about 48,000 of the second kind, twice as many as a hub.
const maxInspirationFlights = 100_000

// Inspiration answers where an origin's flights go in a month, in a cabin: every destination
// reached nonstop or with one stop through a hub, with the cheapest offer of the month there for
// one adult, cheapest first (then by code), at most q.Limit of them; under q.MaxPrice, if given,
// and only q.Destination, if given. A destination is a city (the one each airport reached belongs
// to), or the airport or city q.Destination names; its offer is the one a lowest-fare calendar
// (LowestFares, MONTH, the cabin, one adult) from the origin to its code gives for the month, at
// the same instant: both pick from the same flights with the same code (candidates.plan,
// cheapestOf). TestInspirationIsTheCalendar holds them to it.
//
// It reads the month's flights for every destination at once, in four round trips whatever their
// number: the origin's departures, the hubs' departures that connect with them, and the legs of
// each; the reference data comes from the snapshot under serve. Under a FareIndex (Service.Index)
// that read and what is priced over it are kept: the next inspiration from the origin in the
// month reads nothing and prices only the days whose prices moved since. It is heavy work: it
// runs in the request's heavy-work slot (heavy), and stops when the request's time runs out,
// between destinations and days.
//
// Errors: q's validation errors; ECodeOriginUnknown and ECodeDestinationUnknown for codes that are
// neither an airport nor a city; ECodeInvalidParameter for a destination that is the origin, or
// for an origin whose month holds more flights than one inspiration reads (maxInspirationFlights:
// the caller may name a destination); ECodeTripDestination when no destination is found (none
// under the price, the destination not reached that month).
func (s *Service) Inspiration(ctx context.Context, q *flightgraph.InspirationQuery) (_ *flightgraph.Inspiration, err error) {
	ctx, end := s.traced(ctx, "inspiration")
	defer func() { end(err) }()
	now := s.Now().UTC().Truncate(time.Second)
	if err := q.Validate(now); err != nil {
		return nil, err
	}
	origin, err := s.Place(ctx, "origin", q.Origin)
	if err != nil {
		return nil, recode(err, flightgraph.ECodeIATANotFound, flightgraph.ECodeOriginUnknown)
	}
	var dest *flightgraph.Place
	if q.Destination != "" {
		if dest, err = s.Place(ctx, "destination", q.Destination); err != nil {
			return nil, recode(err, flightgraph.ECodeIATANotFound, flightgraph.ECodeDestinationUnknown)
		}
		if overlaps(origin, dest) {
			return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "destination", "the origin and destination are the same place")
		}
	}
	cur, err := s.currency(&flightgraph.OfferSearch{Currency: q.Currency}, flightgraph.PointOfSaleFromContext(ctx))
	if err != nil {
		return nil, err
	}
	maxPrice, capped, err := q.ParsePrice(cur)
	if err != nil {
		return nil, err
	}
	leave, err := s.heavy(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	days := q.Days()
	// For one destination, the calendar's own reads; for all, the same reads without a
	// destination, which the calendar's bounds then cut per destination (candidates.plan).
	limit := maxInspirationFlights
	if dest != nil {
		limit = maxCandidates * len(days)
	}
	e, err := s.shopping(ctx, origin, dest, days, now, limit)
	if err != nil {
		return nil, err
	}
	if e.t.c.full {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "destination",
			"%s has more flights in %s than one inspiration reads (%d): name a destination", origin.Code, q.Month, limit)
	}
	places := []*flightgraph.Place{dest}
	if dest == nil {
		if places, err = e.places(ctx, s, origin); err != nil {
			return nil, err
		}
	}
	pr := pricing{cabins: []flightgraph.CabinClass{q.Cabin}, counts: flightgraph.PassengerCounts{"ADT": 1}, cur: cur}
	sp := pr.over(days)
	type found struct {
		p *flightgraph.Place
		c *cell
	}
	var cheapest []found
	for _, p := range places {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		best, err := e.best(ctx, s, p, sp, now)
		if err != nil {
			return nil, err
		}
		if best != nil && (!capped || best.total <= maxPrice.Minor) {
			cheapest = append(cheapest, found{p, best})
		}
	}
	if len(cheapest) == 0 {
		switch {
		case dest != nil:
			return nil, flightgraph.ParamErrorf(flightgraph.ECodeTripDestination, "destination", "no trip from %s to %s in %s%s", origin.Code, dest.Code, q.Month, under(q, cur))
		case capped:
			return nil, flightgraph.ParamErrorf(flightgraph.ECodeTripDestination, "price", "no trip from %s in %s%s", origin.Code, q.Month, under(q, cur))
		}
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeTripDestination, "origin", "no trip from %s in %s", origin.Code, q.Month)
	}
	slices.SortFunc(cheapest, func(a, b found) int {
		return cmp.Or(cmp.Compare(a.c.total, b.c.total), cmp.Compare(a.p.Code, b.p.Code))
	})
	cheapest = cheapest[:min(len(cheapest), q.Limit)]
	// Only the destinations answered are priced into offers, at now, as their cells hold.
	out := make([]*flightgraph.Destination, len(cheapest))
	for i, f := range cheapest {
		o := e.offer(s, f.c, pr, now)
		if o == nil || o.Price.Total.Minor != f.c.total {
			return nil, fmt.Errorf("travel: the fare index's cheapest to %s no longer prices at %d", f.p.Code, f.c.total)
		}
		out[i] = &flightgraph.Destination{Place: f.p, Offer: o}
	}
	counts := pr.counts
	insp := &flightgraph.Inspiration{Origin: origin, Month: q.Month, Cabin: q.Cabin, Currency: cur.Code, Destinations: out}
	if err := s.label(ctx, insp); err != nil {
		return nil, err
	}
	for _, d := range out {
		d.Offer.ID = s.offerID(d.Offer, counts)
	}
	return insp, nil
}

// reached returns the places the candidates reach, by code: the city of each airport a flight
// lands at, as Place resolves its code, but those that are or hold the origin.
func (s *Service) reached(ctx context.Context, origin *flightgraph.Place, c *candidates) ([]*flightgraph.Place, error) {
	var codes []string
	for _, fs := range [][]*flightgraph.Flight{c.firsts, c.seconds} {
		for _, f := range fs {
			codes = append(codes, f.DestinationCode)
		}
	}
	codes = slices.Compact(slices.Sorted(slices.Values(codes)))
	airports, err := s.Places.AirportsByCodes(ctx, codes)
	if err != nil {
		return nil, err
	}
	var cities []string
	for _, a := range airports {
		if a != nil {
			cities = append(cities, a.CityCode)
		}
	}
	cities = slices.Compact(slices.Sorted(slices.Values(cities)))
	places, err := s.placesOf(ctx, cities)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(places, func(p *flightgraph.Place) bool { return p == nil || overlaps(origin, p) }), nil
}

// label adds the cities and countries of an inspiration's origin and destinations: those of their
// first airports (labelled).
func (s *Service) label(ctx context.Context, insp *flightgraph.Inspiration) error {
	places := []*flightgraph.Place{insp.Origin}
	for _, d := range insp.Destinations {
		places = append(places, d.Place)
	}
	ls, err := s.labelled(ctx, places)
	if err != nil {
		return err
	}
	insp.OriginCity, insp.OriginCountry = ls[0].City, ls[0].Country
	for i, d := range insp.Destinations {
		d.City, d.Country = ls[i+1].City, ls[i+1].Country
	}
	return nil
}

// overlaps reports whether two places share an airport: a trip between them is no trip.
func overlaps(a, b *flightgraph.Place) bool {
	return slices.ContainsFunc(a.Airports, func(x *flightgraph.Airport) bool { return slices.Contains(b.AirportCodes(), x.Code) })
}

// under is " under <price>" when the query has one.
func under(q *flightgraph.InspirationQuery, cur flightgraph.Currency) string {
	if q.MaxPrice == "" {
		return ""
	}
	return " under " + q.MaxPrice + " " + cur.Code
}

// recode gives an error of code from another code, keeping its parameter and message: a place
// unknown as an origin is ECodeOriginUnknown where elsewhere it is ECodeIATANotFound.
func recode(err error, from, to string) error {
	var e *flightgraph.Error
	if !errors.As(err, &e) || e.Code != from {
		return err
	}
	return &flightgraph.Error{Code: to, Message: e.Message, Parameter: e.Parameter}
}
