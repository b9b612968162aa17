package travel

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/flightgraph/flightgraph"
)

// Deals are the cheapest offers from an origin to destinations over days: what the lowest-fare
// calendar of each destination gives (the same reads, plan and pricing: candidates.plan,
// cheapestOf), for several destinations in the reads of one. Inspirations, best-fare offers, all
// deals and the metasearch feed are all answered from one read of tripsOf and the cheapest trip
// of each day over it (indexEntry.cheapest), kept in the FareIndex when the service has one.

// unionCode is the code of a place that stands for several destinations (unionOf): candidatesOf
// keeps the hubs among their airports as hubs.
const unionCode = "*"

// unionOf is one place with the airports of places, each once.
func unionOf(places []*flightgraph.Place) *flightgraph.Place {
	u := &flightgraph.Place{Code: unionCode}
	for _, p := range places {
		for _, a := range p.Airports {
			if !slices.Contains(u.AirportCodes(), a.Code) {
				u.Airports = append(u.Airports, a)
			}
		}
	}
	return u
}

// trips are the flights a deals search read, with their legs and the reference data that prices
// them.
type trips struct {
	c    *candidates
	legs map[string][]*flightgraph.FlightLeg
	refs *refs
}

// tripsOf reads the trips from origin on days (ascending and every one of an interval, as
// candidatesOf reads them) to dest: one place, a union of several (unionOf), or anywhere (nil).
// It reads in four round trips whatever the number of destinations: the origin's departures, the
// hubs' departures that connect with them, and the legs of each; the reference data comes from
// the snapshot under serve. When a read fills limit, it stops there and reports it (c.full): the
// caller refuses the search, whose answer would be some destinations' only.
func (s *Service) tripsOf(ctx context.Context, origin, dest *flightgraph.Place, days []string, now time.Time, limit int, cur flightgraph.Currency) (*trips, error) {
	c, err := s.candidatesOf(ctx, origin, dest, days, now, limit)
	if err != nil || c.full {
		return &trips{c: c}, err
	}
	t := &trips{c: c, legs: map[string][]*flightgraph.FlightLeg{}}
	var all []*flightgraph.FlightLeg
	for _, f := range c.filters {
		found, err := s.shop().FindLegs(ctx, f)
		if err != nil {
			return nil, err
		}
		for _, l := range found {
			if ls := t.legs[l.FlightID]; len(ls) == 0 || ls[len(ls)-1].Sequence < l.Sequence { // the two reads may share a flight
				t.legs[l.FlightID] = append(ls, l)
				all = append(all, l)
			}
		}
	}
	if t.refs, err = s.refsOfLegs(ctx, all, cur); err != nil {
		return nil, err
	}
	return t, nil
}

// cabinsUp are the cabins of a search from Economy up, the order cheapestOf takes them in.
func cabinsUp(cabins []flightgraph.CabinClass) []flightgraph.CabinClass {
	up := slices.Clone(cabins)
	slices.SortFunc(up, func(a, b flightgraph.CabinClass) int { return cmp.Compare(cabinPerMille[a], cabinPerMille[b]) })
	return up
}

// dealSearch is a validated deals query with its places resolved and what pricing needs.
type dealSearch struct {
	q      *flightgraph.DealQuery
	origin *flightgraph.Place
	dests  []*flightgraph.Place
	cur    flightgraph.Currency
	counts flightgraph.PassengerCounts
	cabins []flightgraph.CabinClass
	now    time.Time
}

// dealSearchOf validates q and resolves its places: ECodeOriginUnknown and
// ECodeDestinationUnknown for codes that are neither an airport nor a city, ECodeInvalidParameter
// for a destination that is the origin.
func (s *Service) dealSearchOf(ctx context.Context, q *flightgraph.DealQuery) (*dealSearch, error) {
	now := s.Now().UTC().Truncate(time.Second)
	if err := q.Validate(now.Truncate(24 * time.Hour)); err != nil {
		return nil, err
	}
	d := &dealSearch{q: q, now: now}
	var err error
	if d.origin, err = s.Place(ctx, "origin", q.Origin); err != nil {
		return nil, recode(err, flightgraph.ECodeIATANotFound, flightgraph.ECodeOriginUnknown)
	}
	for _, code := range q.Destinations {
		p, err := s.Place(ctx, "destinations", code)
		if err != nil {
			return nil, recode(err, flightgraph.ECodeIATANotFound, flightgraph.ECodeDestinationUnknown)
		}
		if overlaps(d.origin, p) {
			return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "destinations", "%s is the origin", p.Code)
		}
		d.dests = append(d.dests, p)
	}
	if d.cur, err = s.currency(&flightgraph.OfferSearch{Currency: q.Currency}, flightgraph.PointOfSaleFromContext(ctx)); err != nil {
		return nil, err
	}
	search := flightgraph.OfferSearch{Cabins: q.Cabins, Passengers: q.Passengers}
	d.counts, _ = search.Counts()
	d.cabins = cabinsUp(search.CabinsOrAll())
	return d, nil
}

// read reads the trips of a deals search: to its destinations (one, or a union of several, in a
// lone calendar's bound per day) or anywhere (in an inspiration's bound). A read past its bound is
// ECodeInvalidParameter: on dateInterval for named destinations, which fewer days fit, on origin
// for anywhere.
func (s *Service) read(ctx context.Context, d *dealSearch) (*indexEntry, error) {
	interval := d.q.Interval()
	var dest *flightgraph.Place
	limit := maxInspirationFlights
	switch len(d.dests) {
	case 0:
	case 1:
		dest, limit = d.dests[0], min(maxCandidates*len(interval), maxCandidateRows)
	default:
		dest = unionOf(d.dests)
	}
	e, err := s.shopping(ctx, d.origin, dest, interval, d.now, limit)
	switch {
	case err != nil:
	case e.t.c.full && dest != nil:
		err = flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "dateInterval", "%d days hold more flights than one deals search reads (%d): ask for fewer days or destinations", len(interval), limit)
	case e.t.c.full:
		err = flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "origin", "%s has more flights in %s than one deals search reads (%d): name destinations", d.origin.Code, d.q.DateInterval, limit)
	}
	if err != nil {
		return nil, err
	}
	return e, nil
}

// BestFares answers best-fare offers: of each destination q names (1 to MaxDealDestinations), in
// the order named, the cheapest offer of the days q keeps, nil when none: the offer the
// lowest-fare calendar (OVERALL) of the same search over those days gives, and so the cheapest
// offer an offers search of its day lists, at the same price (TestDealsAreTheSearchesCheapest).
// The reads are one calendar's, however many destinations (tripsOf).
//
// Errors: q's validation errors; ECodeMissingParameter without destinations; ECodeInconsistentInput
// with a zone (all deals take one); ECodeOriginUnknown, ECodeDestinationUnknown;
// ECodeInvalidParameter for a destination that is the origin or for more flights than a search
// reads; ECodeTimeout when the request's time runs out.
func (s *Service) BestFares(ctx context.Context, q *flightgraph.DealQuery) (*flightgraph.DealList, error) {
	if len(q.Destinations) == 0 {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeMissingParameter, "destinations", "give 1 to %d destinations", flightgraph.MaxDealDestinations)
	}
	return s.deals(ctx, q, false)
}

// AllDeals answers all deals: every destination the origin's flights reach over the days q keeps
// (in q.Zone, when given), each with its cheapest offer of those days, as BestFares would give
// it; cheapest first, then by code, at most q.Limit. It reads the days' flights for every
// destination at once, as an inspiration does (and with the same slots and bound). No
// destination found is ECodeTripDestination; q naming destinations is ECodeInconsistentInput
// (BestFares takes them).
func (s *Service) AllDeals(ctx context.Context, q *flightgraph.DealQuery) (*flightgraph.DealList, error) {
	if len(q.Destinations) > 0 {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeInconsistentInput, "destinations", "all deals find their destinations: ask best-fare offers for named ones")
	}
	list, err := s.deals(ctx, q, false)
	if err != nil {
		return nil, err
	}
	if len(list.Deals) == 0 {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeTripDestination, "origin", "no deal from %s over %s", q.Origin, q.DateInterval)
	}
	return list, nil
}

// BestOffersFeed answers the metasearch feed: of each destination q names (1 to
// MaxDealDestinations) and each day q keeps, the cheapest offer of the day, by destination as
// named, then by day; days without an offer are left out. Each is what BestFares gives for that
// day alone. Its errors are BestFares'.
func (s *Service) BestOffersFeed(ctx context.Context, q *flightgraph.DealQuery) (*flightgraph.DealList, error) {
	if len(q.Destinations) == 0 {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeMissingParameter, "destinations", "give 1 to %d destinations", flightgraph.MaxDealDestinations)
	}
	return s.deals(ctx, q, true)
}

// deals answers a deals search, its deals by destination over the days (byDay false) or by
// destination and day (true).
func (s *Service) deals(ctx context.Context, q *flightgraph.DealQuery, byDay bool) (_ *flightgraph.DealList, err error) {
	ctx, end := s.traced(ctx, "deals")
	defer func() { end(err) }()
	d, err := s.dealSearchOf(ctx, q)
	if err != nil {
		return nil, err
	}
	if q.Zone != "" && len(d.dests) > 0 {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeInconsistentInput, "destinationZoneCode", "destinationZoneCode narrows all deals; the destinations named are the answer's")
	}
	leave, err := s.heavy(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	e, err := s.read(ctx, d)
	if err != nil {
		return nil, err
	}
	places := d.dests
	if len(places) == 0 {
		if places, err = e.places(ctx, s, d.origin); err != nil {
			return nil, err
		}
	}
	labelled, err := s.labelled(ctx, append([]*flightgraph.Place{d.origin}, places...))
	if err != nil {
		return nil, err
	}
	list := &flightgraph.DealList{Origin: labelled[0], DateInterval: q.DateInterval, Type: q.Type, Currency: d.cur.Code}
	days := q.Days()
	pr := pricing{cabins: d.cabins, counts: d.counts, cur: d.cur}
	sp := pr.over(days)
	for _, p := range labelled[1:] {
		zone := flightgraph.ZoneOf(p.Country.AreaCode)
		if q.Zone != "" && zone.Code != q.Zone {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if byDay {
			cells, err := e.cheapest(ctx, s, p.Place, days, pr, d.now)
			if err != nil {
				return nil, err
			}
			for _, day := range days {
				if c := cells[day]; c.trip != nil {
					list.Deals = append(list.Deals, &flightgraph.Deal{Destination: p, Zone: zone, Period: day, Offer: e.offer(s, c, pr, d.now)})
				}
			}
			continue
		}
		best, err := e.best(ctx, s, p.Place, sp, d.now)
		if err != nil {
			return nil, err
		}
		o := e.offer(s, best, pr, d.now)
		if o == nil && len(d.dests) == 0 {
			continue // all deals list the destinations that have one
		}
		list.Deals = append(list.Deals, &flightgraph.Deal{Destination: p, Zone: zone, Period: q.DateInterval, Offer: o})
	}
	if len(d.dests) == 0 {
		slices.SortFunc(list.Deals, func(a, b *flightgraph.Deal) int {
			return cmp.Or(cmp.Compare(a.Offer.Price.Total.Minor, b.Offer.Price.Total.Minor), cmp.Compare(a.Destination.Code, b.Destination.Code))
		})
		list.Deals = list.Deals[:min(len(list.Deals), q.Limit)]
	}
	for _, dl := range list.Deals {
		if dl.Offer != nil {
			dl.Offer.ID = s.offerID(dl.Offer, d.counts)
		}
	}
	return list, nil
}

// labelled labels places with the city of each one's first airport and that city's country, in
// two lookups (none under serve: the snapshot has them). An airport whose city is not listed is
// its own city.
func (s *Service) labelled(ctx context.Context, places []*flightgraph.Place) ([]*flightgraph.LabelledPlace, error) {
	codes := make([]string, len(places))
	for i, p := range places {
		codes[i] = p.Airports[0].CityCode
	}
	cities, err := s.Places.CitiesByCodes(ctx, codes)
	if err != nil {
		return nil, err
	}
	countries := make([]string, len(codes))
	for i, c := range cities {
		if c == nil {
			a := places[i].Airports[0]
			cities[i] = &flightgraph.City{Code: a.CityCode, Name: a.Name, CountryCode: a.CountryCode, Labels: flightgraph.Labels{LabelEN: a.Name, LabelFR: a.Name, LabelNL: a.Name}}
		}
		countries[i] = cities[i].CountryCode
	}
	cs, err := s.Places.CountriesByCodes(ctx, countries)
	if err != nil {
		return nil, err
	}
	out := make([]*flightgraph.LabelledPlace, len(places))
	for i, p := range places {
		out[i] = &flightgraph.LabelledPlace{Place: p, City: cities[i], Country: cs[i]}
		if out[i].Country == nil {
			out[i].Country = &flightgraph.Country{Code: cities[i].CountryCode, Name: cities[i].CountryCode}
		}
	}
	return out, nil
}
