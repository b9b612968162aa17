package travel

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flightgraph/flightgraph"
)

// Offers are not stored: an offer id is a signed token that carries what prices the offer (its
// flights, cabin, family, passengers, currency and the instant it was quoted at). Reading one back
// checks the signature and the validity, then prices the same flights at the same instant with the
// same rules, so it costs what the search said. A search writes nothing, so it stays a read on any
// replica; replicas share the signing key (Service.OfferKey).

// maxCandidates bounds the flights a search reads per query and day, and maxCandidateRows per
// query whatever the days; maxConnections bounds the one-stop itineraries of a day it prices. A
// search whose flights pass a bound is refused rather than answered from some of them: a day's
// offers are the same in every search or none. (Variables so that a test can lower them.)
var (
	maxCandidates    = 1_000
	maxCandidateRows = 40_000
)

const maxConnections = 30

// itinerary is one bound's flights, in order, with their legs.
type itinerary struct {
	flights []*flightgraph.Flight
	legs    [][]*flightgraph.FlightLeg
}

// OffersFor returns the offers of one requested connection of a search (bound 0 outbound, 1
// inbound), quoted now: every nonstop flight and every one-stop connection through a hub of the
// network, in each cabin asked for that has the seats, in each of the cabin's fare families;
// ordered by departure, then price. It reads the flights in three round trips however many there
// are: the nonstop and first flights together, the second flights, and their legs.
func (s *Service) OffersFor(ctx context.Context, q *flightgraph.OfferSearch, bound int) (_ []*flightgraph.Offer, err error) {
	ctx, end := s.traced(ctx, "offers")
	defer func() { end(err) }()
	if err := s.resolve(ctx, q); err != nil {
		return nil, err
	}
	if bound < 0 || bound >= len(q.Connections) {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "bound", "the search has %d requested connection(s): no bound %d", len(q.Connections), bound+1)
	}
	pos := flightgraph.PointOfSaleFromContext(ctx)
	cur, err := s.currency(q, pos)
	if err != nil {
		return nil, err
	}
	counts, _ := q.Counts()
	now := s.Now().UTC().Truncate(time.Second)
	its, refs, err := s.day(ctx, q.Connections[bound], now, cur)
	if err != nil {
		return nil, err
	}
	var offers []*flightgraph.Offer
	for _, it := range its {
		for _, cabin := range q.CabinsOrAll() {
			for _, fam := range flightgraph.FamiliesOf(cabin) {
				if o := s.price(refs, it, fam, counts, now, boundOf(bound)); o != nil {
					o.ID = s.offerID(o, counts)
					offers = append(offers, o)
				}
			}
		}
	}
	slices.SortStableFunc(offers, func(a, b *flightgraph.Offer) int {
		return cmp.Or(a.Departure().Compare(b.Departure()), len(a.Segments)-len(b.Segments), cmp.Compare(a.Price.Total.Minor, b.Price.Total.Minor))
	})
	return offers, nil
}

// day reads a requested connection's itineraries on its date, as a search at now finds them, and
// the reference data that prices them in cur.
func (s *Service) day(ctx context.Context, c flightgraph.RequestedConnection, now time.Time, cur flightgraph.Currency) ([]itinerary, *refs, error) {
	byDate, err := s.itineraries(ctx, c, []string{c.DepartureDate}, now)
	if err != nil {
		return nil, nil, err
	}
	its := byDate[c.DepartureDate]
	r, err := s.refsOf(ctx, its, cur)
	if err != nil {
		return nil, nil, err
	}
	return its, r, nil
}

func boundOf(i int) flightgraph.Bound {
	if i == 1 {
		return flightgraph.Inbound
	}
	return flightgraph.Outbound
}

// resolve validates the search and resolves its places once; ECodeIATANotFound for an unknown
// code.
func (s *Service) resolve(ctx context.Context, q *flightgraph.OfferSearch) error {
	if err := q.Validate(); err != nil {
		return err
	}
	for i := range q.Connections {
		c := &q.Connections[i]
		if c.OriginPlace != nil {
			continue
		}
		o, d, err := s.Ends(ctx, c.Origin, c.Destination)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(o.Airports, func(a *flightgraph.Airport) bool { return slices.Contains(d.AirportCodes(), a.Code) }) {
			return flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "destination", "the origin and destination are the same place")
		}
		c.OriginPlace, c.DestinationPlace = o, d
	}
	return nil
}

// currency is the search's currency, else the point of sale's, else euros.
func (s *Service) currency(q *flightgraph.OfferSearch, pos flightgraph.PointOfSale) (flightgraph.Currency, error) {
	code := cmp.Or(q.Currency, pos.Currency, flightgraph.PricingCurrency)
	return flightgraph.CurrencyOf("currency", code)
}

// itineraries finds a connection's nonstop flights and one-stop connections through the
// network's hubs on each of dates (ascending local dates of departure), sellable at now, by date.
// A day's itineraries are the same whether it is asked alone or in a range, and the range costs
// the same three round trips as one day: the nonstop and first flights, the second flights, the
// legs.
func (s *Service) itineraries(ctx context.Context, c flightgraph.RequestedConnection, dates []string, now time.Time) (map[string][]itinerary, error) {
	limit := min(maxCandidates*len(dates), maxCandidateRows)
	cands, err := s.candidatesOf(ctx, c.OriginPlace, c.DestinationPlace, dates, now, limit)
	if err != nil {
		return nil, err
	}
	if cands.full {
		// More than a read holds: ECodeInvalidParameter on dateInterval (ask for fewer days), or
		// for one day a defect (no airport of the network has a thousand departures a day).
		if len(dates) == 1 {
			return nil, fmt.Errorf("travel: candidate flights from %s on one day fill the %d a search reads", c.Origin, limit)
		}
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "dateInterval",
			"%d days hold more flights than one search reads (%d): ask for fewer days", len(dates), limit)
	}
	trips, err := cands.plan(ctx, c.DestinationPlace, time.Time{}, nil)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, d := range dates {
		for _, t := range trips[d] {
			for _, f := range t {
				ids = append(ids, f.ID)
			}
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	legs, err := s.legsOf(ctx, ids)
	if err != nil {
		return nil, err
	}
	its := map[string][]itinerary{}
	for _, d := range dates {
		for _, t := range trips[d] {
			its[d] = append(its[d], itineraryOf(t, legs))
		}
	}
	return its, nil
}

// itineraryOf is a trip's flights with their legs.
func itineraryOf(trip []*flightgraph.Flight, legs map[string][]*flightgraph.FlightLeg) itinerary {
	it := itinerary{flights: trip, legs: make([][]*flightgraph.FlightLeg, len(trip))}
	for i, f := range trip {
		it.legs[i] = legs[f.ID]
	}
	return it
}

// candidates are the flights a search from an origin reads for its dates, each list in the
// store's order (by departure, then id): firsts leave the origin on the dates for the destination
// and the hubs (for anywhere, when read without a destination), seconds leave the hubs the firsts
// reach, in time to connect with one of them, for the destination (for anywhere). filters are the
// two reads, whose legs FindLegs reads again.
type candidates struct {
	dates []string
	// hubs are the network's hubs but the origin's airports (and the destination's, when read
	// for one).
	hubs            []*flightgraph.Airport
	firsts, seconds []*flightgraph.Flight
	filters         []flightgraph.FlightFilter
	// full reports that a read returned as many flights as its limit: it may have left some out.
	full bool
	// firstsTo indexes firsts by destination, secondsFromTo seconds by origin and destination,
	// each index ascending; made by plan, once.
	firstsTo      map[string][]int
	secondsFromTo map[[2]string][]int
}

// candidatesOf reads the candidates of a search from origin to dest on dates, sellable at now, in
// two round trips, each read at most limit flights; a nil dest reads them for anywhere, as an
// inspiration does. A union dest stands for several destinations at once (unionOf): its airports
// that are hubs stay hubs, through which the others are reached, as they are for anywhere.
func (s *Service) candidatesOf(ctx context.Context, origin, dest *flightgraph.Place, dates []string, now time.Time, limit int) (*candidates, error) {
	carriers, err := s.Network.Carriers(ctx)
	if err != nil {
		return nil, err
	}
	var hubCodes []string
	notHub := dest.AirportCodes()
	if dest != nil && dest.Code == unionCode {
		notHub = nil
	}
	for _, ca := range carriers {
		if !slices.Contains(origin.AirportCodes(), ca.HubCode) && !slices.Contains(notHub, ca.HubCode) && !slices.Contains(hubCodes, ca.HubCode) {
			hubCodes = append(hubCodes, ca.HubCode)
		}
	}
	hubs, err := s.Places.AirportsByCodes(ctx, hubCodes)
	if err != nil {
		return nil, err
	}
	c := &candidates{dates: dates, hubs: slices.DeleteFunc(hubs, func(a *flightgraph.Airport) bool { return a == nil })}
	// The nonstop flights and the first flights of connections, in one query.
	var onward *flightgraph.Place
	if dest != nil {
		onward = &flightgraph.Place{Code: dest.Code, Airports: slices.Clone(dest.Airports)}
		for _, h := range c.hubs {
			if !slices.Contains(dest.AirportCodes(), h.Code) { // a union's hub is in it already
				onward.Airports = append(onward.Airports, h)
			}
		}
	}
	first := flightgraph.FlightFilter{Origin: origin, Destination: onward, Date: dates[0], LastDate: dates[len(dates)-1],
		DepartureFrom: now.Add(MinBookingLead), Page: flightgraph.Page{Limit: limit, Uncounted: true}}
	if c.firsts, _, err = s.shop().FindFlights(ctx, first); err != nil {
		return nil, err
	}
	c.filters, c.full = append(c.filters, first), len(c.firsts) >= limit
	// The second flights leave the hubs the first flights reach, within a connection of them.
	hubCodes = make([]string, len(c.hubs))
	for i, h := range c.hubs {
		hubCodes[i] = h.Code
	}
	// The hubs are none of a lone destination's airports: a first flight to one is nonstop.
	var via []string
	var from, to time.Time
	for _, f := range c.firsts {
		if !slices.Contains(dates, f.ScheduleDate) || !slices.Contains(hubCodes, f.DestinationCode) {
			continue
		}
		if len(via) == 0 {
			from, to = f.ArrivalUTC, f.ArrivalUTC
		}
		from, to = minTime(from, f.ArrivalUTC), maxTime(to, f.ArrivalUTC)
		if !slices.Contains(via, f.DestinationCode) {
			via = append(via, f.DestinationCode)
		}
	}
	if len(via) == 0 {
		return c, nil
	}
	hubPlace := &flightgraph.Place{Code: "hubs"}
	for _, code := range via {
		hubPlace.Airports = append(hubPlace.Airports, &flightgraph.Airport{Code: code})
	}
	second := flightgraph.FlightFilter{Origin: hubPlace, Destination: dest,
		DepartureFrom: from.Add(MinConnection), DepartureTo: to.Add(MaxConnection + time.Second), Page: flightgraph.Page{Limit: limit, Uncounted: true}}
	if c.seconds, _, err = s.shop().FindFlights(ctx, second); err != nil {
		return nil, err
	}
	c.filters, c.full = append(c.filters, second), c.full || len(c.seconds) >= limit
	return c, nil
}

// plan picks from the candidates what a search to dest alone keeps on each date, by date: its
// nonstop flights in order of departure, then its one-stop connections through the hubs but
// dest's (50 minutes to 24 hours on the ground), the quickest first, then the earliest, at most
// maxConnections. The candidates may hold more than that search reads (every destination's, when
// read for anywhere): plan takes only what it would, in the same order and up to the same bounds
// (maxCandidates flights a date, each read), so a destination's trips are the same whether it is
// searched alone or among all.
//
// Candidates read before at are planned as a read at at would find them: without the first
// flights that leave within MinBookingLead of it (none when at is zero). only, when given, are the
// dates planned (the others are left out), as they would be among all.
func (c *candidates) plan(ctx context.Context, dest *flightgraph.Place, at time.Time, only []string) (map[string][][]*flightgraph.Flight, error) {
	dates := c.dates
	if only != nil {
		dates = only
	}
	if c.firstsTo == nil {
		c.firstsTo, c.secondsFromTo = map[string][]int{}, map[[2]string][]int{}
		for i, f := range c.firsts {
			c.firstsTo[f.DestinationCode] = append(c.firstsTo[f.DestinationCode], i)
		}
		for i, f := range c.seconds {
			k := [2]string{f.OriginCode, f.DestinationCode}
			c.secondsFromTo[k] = append(c.secondsFromTo[k], i)
		}
	}
	limit := maxCandidates * len(c.dates)
	dests := dest.AirportCodes()
	var firsts []int
	for _, code := range dests {
		firsts = append(firsts, c.firstsTo[code]...)
	}
	for _, h := range c.hubs {
		if !slices.Contains(dests, h.Code) {
			firsts = append(firsts, c.firstsTo[h.Code]...)
		}
	}
	slices.Sort(firsts)
	nonstop, toHub := map[string][]*flightgraph.Flight{}, map[string][]*flightgraph.Flight{}
	var via []string
	var from, to time.Time
	for _, i := range firsts[:min(len(firsts), limit)] {
		f := c.firsts[i]
		switch {
		case !slices.Contains(dates, f.ScheduleDate):
		case !at.IsZero() && f.DepartureUTC.Before(at.Add(MinBookingLead)):
		case slices.Contains(dests, f.DestinationCode):
			nonstop[f.ScheduleDate] = append(nonstop[f.ScheduleDate], f)
		default:
			if len(via) == 0 {
				from, to = f.ArrivalUTC, f.ArrivalUTC
			}
			from, to = minTime(from, f.ArrivalUTC), maxTime(to, f.ArrivalUTC)
			if !slices.Contains(via, f.DestinationCode) {
				via = append(via, f.DestinationCode)
			}
			toHub[f.ScheduleDate] = append(toHub[f.ScheduleDate], f)
		}
	}
	// The second flights by hub, in order of departure: a first flight's connections are one
	// window of its hub's, found by binary search, so that a year's calendar pairs in
	// n log n rather than n² (115 million steps for London to Paris).
	fromHub := map[string][]*flightgraph.Flight{}
	var seconds []int
	for _, h := range via {
		for _, code := range dests {
			seconds = append(seconds, c.secondsFromTo[[2]string{h, code}]...)
		}
	}
	slices.Sort(seconds)
	n := 0
	for _, i := range seconds {
		f := c.seconds[i]
		if f.DepartureUTC.Before(from.Add(MinConnection)) || !f.DepartureUTC.Before(to.Add(MaxConnection+time.Second)) {
			continue
		}
		if n++; n > limit {
			break
		}
		fromHub[f.OriginCode] = append(fromHub[f.OriginCode], f)
	}
	trips := map[string][][]*flightgraph.Flight{}
	for _, d := range dates {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// A connection's journey and departure, in nanoseconds, so that sorting compares numbers.
		type pair struct {
			journey, departure int64
			f1, f2             *flightgraph.Flight
		}
		var pairs []pair
		for _, f1 := range toHub[d] {
			next := fromHub[f1.DestinationCode]
			i, _ := slices.BinarySearchFunc(next, f1.ArrivalUTC.Add(MinConnection), func(f *flightgraph.Flight, t time.Time) int { return f.DepartureUTC.Compare(t) })
			for _, f2 := range next[i:] {
				if f2.DepartureUTC.Sub(f1.ArrivalUTC) > MaxConnection {
					break
				}
				pairs = append(pairs, pair{int64(f2.ArrivalUTC.Sub(f1.DepartureUTC)), f1.DepartureUTC.UnixNano(), f1, f2})
			}
		}
		// The quickest connections, then the earliest.
		slices.SortStableFunc(pairs, func(a, b pair) int {
			return cmp.Or(cmp.Compare(a.journey, b.journey), cmp.Compare(a.departure, b.departure))
		})
		for _, f := range nonstop[d] {
			trips[d] = append(trips[d], []*flightgraph.Flight{f})
		}
		for _, p := range pairs[:min(len(pairs), maxConnections)] {
			trips[d] = append(trips[d], []*flightgraph.Flight{p.f1, p.f2})
		}
	}
	return trips, nil
}

// legsOf reads the legs of flights in one round trip, by flight id.
func (s *Service) legsOf(ctx context.Context, ids []string) (map[string][]*flightgraph.FlightLeg, error) {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	lists, err := s.shop().LegsByFlightIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]*flightgraph.FlightLeg, len(ids))
	for i, id := range ids {
		out[id] = lists[i]
	}
	return out, nil
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// refs are the reference data an itinerary's pricing reads: airports and their countries, and
// the cabins of the aircraft configurations, read once per search (from the reference snapshot
// under serve; three queries without it).
type refs struct {
	airports  map[string]*flightgraph.Airport
	countries map[string]*flightgraph.Country
	cabins    map[string][]*flightgraph.Cabin
	// cur is the search's currency, and lines the charges of a departure in it, by chargeKey:
	// worked out once per search, shared read-only by its offers.
	cur   flightgraph.Currency
	lines map[chargeKey][]*flightgraph.PriceLine
}

// chargeKey is what a departure's charges depend on.
type chargeKey struct {
	airport, haul string
	near          bool // see Near
	cabin         flightgraph.CabinClass
	seat          bool
}

// charges are the charges of a departure from airport to destination for a passenger of type
// pt, in the search's currency, line by line.
func (r *refs) charges(airport, destination, haul string, cabin flightgraph.CabinClass, pt *flightgraph.PassengerType) []*flightgraph.PriceLine {
	a, country := r.airports[airport], r.countries[r.airports[airport].CountryCode]
	k := chargeKey{airport, haul, Near(country, r.countries[r.airports[destination].CountryCode]), cabin, pt.Seat}
	lines, ok := r.lines[k]
	if !ok {
		lines = charges(a, country, k.near, haul, cabin, pt)
		for _, l := range lines {
			l.Amount = l.Amount.In(r.cur)
		}
		r.lines[k] = lines
	}
	return lines
}

func (s *Service) refsOf(ctx context.Context, its []itinerary, cur flightgraph.Currency) (*refs, error) {
	var legs []*flightgraph.FlightLeg
	for _, it := range its {
		for _, ls := range it.legs {
			legs = append(legs, ls...)
		}
	}
	return s.refsOfLegs(ctx, legs, cur)
}

// refsOfLegs reads the reference data that pricing legs reads.
func (s *Service) refsOfLegs(ctx context.Context, legs []*flightgraph.FlightLeg, cur flightgraph.Currency) (*refs, error) {
	var codes, configs []string
	for _, l := range legs {
		codes = append(codes, l.OriginCode, l.DestinationCode)
		configs = append(configs, l.ConfigurationCode)
	}
	codes, configs = slices.Compact(slices.Sorted(slices.Values(codes))), slices.Compact(slices.Sorted(slices.Values(configs)))
	r := &refs{airports: map[string]*flightgraph.Airport{}, countries: map[string]*flightgraph.Country{}, cabins: map[string][]*flightgraph.Cabin{},
		cur: cur, lines: map[chargeKey][]*flightgraph.PriceLine{}}
	airports, err := s.Places.AirportsByCodes(ctx, codes)
	if err != nil {
		return nil, err
	}
	var countries []string
	for i, a := range airports {
		if a != nil {
			r.airports[codes[i]] = a
			countries = append(countries, a.CountryCode)
		}
	}
	countries = slices.Compact(slices.Sorted(slices.Values(countries)))
	cs, err := s.Places.CountriesByCodes(ctx, countries)
	if err != nil {
		return nil, err
	}
	for i, c := range cs {
		r.countries[countries[i]] = c
	}
	cabins, err := s.Aircraft.CabinsByConfigurations(ctx, configs)
	if err != nil {
		return nil, err
	}
	for i, c := range cabins {
		r.cabins[configs[i]] = c
	}
	return r, nil
}

// seats is the number of seats of a cabin in a configuration, 0 when it has none.
func (r *refs) seats(configuration string, cabin flightgraph.CabinClass) int {
	for _, c := range r.cabins[configuration] {
		if c.CabinClass == cabin {
			return c.Seats
		}
	}
	return 0
}

// segmentSeats is the rule of a flight's seats left in a cabin at an instant: the fewest unsold
// of its legs' (0 when one is cancelled), with the highest of their loads, which prices it.
// onBoard is false when a leg lacks the cabin, or its airports are not in the reference data: no
// offer then, and no availability in the cabin.
func (r *refs) segmentSeats(f *flightgraph.Flight, legs []*flightgraph.FlightLeg, cabin flightgraph.CabinClass, at time.Time) (left int, load int64, onBoard bool) {
	left = math.MaxInt
	for _, l := range legs {
		seats := r.seats(l.ConfigurationCode, cabin)
		if seats == 0 || r.airports[l.OriginCode] == nil || r.airports[l.DestinationCode] == nil {
			return 0, 0, false
		}
		ld := cabinLoad(f.ID, cabin, l.ScheduledDep.Sub(at))
		load = max(load, ld)
		left = min(left, seatsLeft(seats, ld))
		if l.Cancelled {
			left = 0
		}
	}
	return left, load, len(legs) > 0
}

// price prices an itinerary in a family for the passengers at an instant, in the search's
// currency: nil when a leg is cancelled, leaves too soon, lacks the cabin or has too few seats
// left in it, or when its reference data is missing. The offer has no ID yet: the caller signs
// the ones it returns (offerID).
func (s *Service) price(r *refs, it itinerary, fam *flightgraph.FareFamily, counts flightgraph.PassengerCounts, at time.Time, bound flightgraph.Bound) *flightgraph.Offer {
	cur := r.cur
	o := &flightgraph.Offer{Bound: bound, Cabin: fam.Cabin, Family: fam, QuotedAt: at, ExpiresAt: at.Add(flightgraph.OfferValidity), SeatsLeft: flightgraph.MaxSeatsPerBooking,
		Price: &flightgraph.Price{Total: flightgraph.Money{Currency: cur.Code}}}
	perType := map[string]*flightgraph.PassengerPrice{}
	for _, t := range flightgraph.PassengerTypes {
		if counts[t.Code] > 0 {
			p := &flightgraph.PassengerPrice{Type: t.Code, Count: counts[t.Code], Base: flightgraph.Money{Currency: cur.Code}, TaxTotal: flightgraph.Money{Currency: cur.Code}}
			perType[t.Code] = p
			o.Price.Passengers = append(o.Price.Passengers, p)
		}
	}
	for i, f := range it.flights {
		legs := it.legs[i]
		if len(legs) == 0 || !f.DepartureUTC.After(at.Add(MinBookingLead-time.Second)) {
			return nil
		}
		seg := &flightgraph.OfferSegment{Flight: f, Legs: legs}
		if i+1 < len(it.flights) {
			seg.ConnectionMinutes = int(it.flights[i+1].DepartureUTC.Sub(f.ArrivalUTC) / time.Minute)
		}
		left, load, onBoard := r.segmentSeats(f, legs, fam.Cabin, at)
		if !onBoard || left < counts.Seats() {
			return nil
		}
		seg.SeatsLeft = left
		for _, l := range legs {
			seg.DistanceKm += l.DistanceKm
		}
		o.SeatsLeft = min(o.SeatsLeft, seg.SeatsLeft)
		seg.OriginCity, seg.DestinationCity = r.airports[legs[0].OriginCode].CityCode, r.airports[legs[len(legs)-1].DestinationCode].CityCode
		o.Segments = append(o.Segments, seg)
		first := legs[0]
		weekday := first.ScheduledDep.Add(time.Duration(first.DepartureOffset) * time.Minute).Weekday()
		for _, t := range flightgraph.PassengerTypes {
			p := perType[t.Code]
			if p == nil {
				continue
			}
			p.Base = p.Base.Add(flightgraph.Euros(baseFareCents(seg.DistanceKm, fam, t, f.DepartureUTC.Sub(at), weekday, load)).In(cur))
			for _, l := range legs {
				for _, line := range r.charges(l.OriginCode, l.DestinationCode, f.Haul, fam.Cabin, t) {
					p.Taxes = append(p.Taxes, line)
					p.TaxTotal = p.TaxTotal.Add(line.Amount)
				}
			}
		}
	}
	for _, p := range o.Price.Passengers {
		p.Total = p.Base.Add(p.TaxTotal)
		o.Price.Total = o.Price.Total.Add(p.Total.Times(p.Count))
	}
	return o
}

// An offer id is signed (signedID) under "o1."; its payload is
// quoted-at|bound|family|passengers|currency|flight ids, passengers as ADT2+CHD1.

const offerIDPrefix = "o1."

func (s *Service) offerID(o *flightgraph.Offer, counts flightgraph.PassengerCounts) string {
	p := make([]byte, 0, 128)
	p = strconv.AppendInt(p, o.QuotedAt.Unix(), 10)
	p = append(append(p, '|'), o.Bound...)
	p = append(append(p, '|'), o.Family.Code...)
	p = append(p, '|')
	sep := false
	for _, t := range flightgraph.PassengerTypes {
		if n := counts[t.Code]; n > 0 {
			if sep {
				p = append(p, '+')
			}
			p = strconv.AppendInt(append(p, t.Code...), int64(n), 10)
			sep = true
		}
	}
	p = append(append(p, '|'), o.Price.Total.Currency...)
	p = append(p, '|')
	for i, seg := range o.Segments {
		if i > 0 {
			p = append(p, ',')
		}
		p = append(p, seg.Flight.ID...)
	}
	return s.signedID(offerIDPrefix, p)
}

// maxOfferIDLength bounds an offer id before it is decoded: two connections of two flights and
// nine passengers fit in a fraction of it.
const maxOfferIDLength = 512

// Offer reads an offer id back and prices it again at the instant it was quoted: the same price
// as the search gave. An id that is malformed, altered or signed under another key is
// ECodeOfferInvalid (naming param); one past its validity, or whose flights are no longer sold
// (cancelled, departed), ECodeOfferExpired.
func (s *Service) Offer(ctx context.Context, param, id string) (*flightgraph.Offer, error) {
	offers, errs, err := s.Offers(ctx, param, []string{id})
	if err != nil {
		return nil, err
	}
	return offers[0], errs[0]
}

// Upsell returns the offers an offer id can be upgraded to, read back as Offer does: the same
// flights, passengers and currency at the same instant, in the dearer families of its cabin and
// in every family of the cabins ahead of it that have the seats; cabin by cabin from the back,
// cheapest family first. They cost what a search at that instant would have shown for them. It
// returns the offer too, read back as Offer reads it.
func (s *Service) Upsell(ctx context.Context, param, id string) (*flightgraph.Offer, []*flightgraph.Offer, error) {
	q, err := s.readOffer(ctx, param, id)
	if err != nil {
		return nil, nil, err
	}
	o := s.price(q.refs, q.it, q.family, q.counts, q.at, q.bound)
	if o == nil {
		return nil, nil, flightgraph.ParamErrorf(flightgraph.ECodeOfferExpired, param, "the offer's flights are no longer sold: search again")
	}
	o.ID = s.offerID(o, q.counts)
	var out []*flightgraph.Offer
	for _, f := range flightgraph.FareFamilies {
		dearer := cabinPerMille[f.Cabin] > cabinPerMille[q.family.Cabin] || f.Cabin == q.family.Cabin && f.Rank > q.family.Rank
		if !dearer {
			continue
		}
		if o := s.price(q.refs, q.it, f, q.counts, q.at, q.bound); o != nil {
			o.ID = s.offerID(o, q.counts)
			out = append(out, o)
		}
	}
	slices.SortStableFunc(out, func(a, b *flightgraph.Offer) int {
		return cmp.Or(cmp.Compare(cabinPerMille[a.Cabin], cabinPerMille[b.Cabin]), a.Family.Rank-b.Family.Rank)
	})
	return o, out, nil
}

// quoted is an offer id read back: what prices its offer.
type quoted struct {
	it     itinerary
	family *flightgraph.FareFamily
	counts flightgraph.PassengerCounts
	refs   *refs
	at     time.Time
	bound  flightgraph.Bound
}

// offerRef is what an offer id says, checked, before its flights are read.
type offerRef struct {
	ids    []string
	family *flightgraph.FareFamily
	counts flightgraph.PassengerCounts
	cur    flightgraph.Currency
	at     time.Time
	bound  flightgraph.Bound
}

// parseOffer checks an offer id, without reading anything; its errors are Offer's.
func (s *Service) parseOffer(param, id string) (*offerRef, error) {
	invalid := flightgraph.ParamErrorf(flightgraph.ECodeOfferInvalid, param, "%s is not an offer id of this service", param)
	raw, ok := s.openID(offerIDPrefix, id, maxOfferIDLength)
	if !ok {
		return nil, invalid
	}
	// Signed by us: the payload is well formed unless the code that wrote it changed.
	f := strings.Split(raw, "|")
	if len(f) != 6 {
		return nil, invalid
	}
	unix, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return nil, invalid
	}
	at := time.Unix(unix, 0).UTC()
	if !s.Now().Before(at.Add(flightgraph.OfferValidity)) {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeOfferExpired, param, "the offer expired at %s: search again", at.Add(flightgraph.OfferValidity).Format(time.RFC3339))
	}
	fam, err := flightgraph.FareFamilyOf(param, f[2])
	if err != nil {
		return nil, invalid
	}
	counts := flightgraph.PassengerCounts{}
	for _, p := range strings.Split(f[3], "+") {
		if len(p) < 4 {
			return nil, invalid
		}
		n, err := strconv.Atoi(p[3:])
		if _, known := flightgraph.PassengerTypeOf(param, p[:3]); err != nil || known != nil || n < 1 || n > flightgraph.MaxSeatsPerBooking {
			return nil, invalid
		}
		counts[p[:3]] = n
	}
	if counts.Seats() == 0 {
		return nil, invalid // signed by a version that priced what this one would refuse to search
	}
	cur, err := flightgraph.CurrencyOf(param, f[4])
	if err != nil {
		return nil, invalid
	}
	return &offerRef{ids: strings.Split(f[5], ","), family: fam, counts: counts, cur: cur, at: at, bound: flightgraph.Bound(f[1])}, nil
}

// quote reads back what prices each of offers: one read of all their flights, one of their legs
// and one of the reference data, whatever their number. errs[i] is offers[i]'s own refusal (its
// flights are no longer sold); err a failure of the reads.
func (s *Service) quote(ctx context.Context, param string, offers []*offerRef) (qs []*quoted, errs []error, err error) {
	var ids []string
	for _, r := range offers {
		ids = append(ids, r.ids...)
	}
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	flights, err := s.shop().FlightsByIDs(ctx, ids)
	if err != nil {
		return nil, nil, err
	}
	legs, err := s.legsOf(ctx, ids)
	if err != nil {
		return nil, nil, err
	}
	byID := make(map[string]*flightgraph.Flight, len(ids))
	for i, fl := range flights {
		if fl != nil {
			byID[ids[i]] = fl
		}
	}
	qs, errs = make([]*quoted, len(offers)), make([]error, len(offers))
	var all []*flightgraph.FlightLeg
	for i, r := range offers {
		it := itinerary{}
		for _, id := range r.ids {
			fl := byID[id]
			if fl == nil {
				errs[i] = flightgraph.ParamErrorf(flightgraph.ECodeOfferExpired, param, "the offer's flights are no longer sold: search again")
				break
			}
			it.flights, it.legs = append(it.flights, fl), append(it.legs, legs[fl.ID])
			all = append(all, legs[fl.ID]...)
		}
		if errs[i] == nil {
			qs[i] = &quoted{it: it, family: r.family, counts: r.counts, at: r.at, bound: r.bound}
		}
	}
	if len(all) == 0 {
		return qs, errs, nil
	}
	// One read of the reference data; the charges are converted per currency.
	base, err := s.refsOfLegs(ctx, all, offers[0].cur)
	if err != nil {
		return nil, nil, err
	}
	inCur := map[string]*refs{offers[0].cur.Code: base}
	for i, q := range qs {
		if q == nil {
			continue
		}
		cur := offers[i].cur
		if inCur[cur.Code] == nil {
			inCur[cur.Code] = &refs{airports: base.airports, countries: base.countries, cabins: base.cabins, cur: cur, lines: map[chargeKey][]*flightgraph.PriceLine{}}
		}
		q.refs = inCur[cur.Code]
	}
	return qs, errs, nil
}

// readOffer checks an offer id and reads back what prices it; its errors are Offer's.
func (s *Service) readOffer(ctx context.Context, param, id string) (*quoted, error) {
	ref, err := s.parseOffer(param, id)
	if err != nil {
		return nil, err
	}
	qs, errs, err := s.quote(ctx, param, []*offerRef{ref})
	if err != nil {
		return nil, err
	}
	return qs[0], errs[0]
}

// Offers reads offer ids back as Offer does, in the same few reads whatever their number:
// offers[i] is ids[i]'s offer, or errs[i] its refusal (Offer's errors); err is a failure of
// the reads.
func (s *Service) Offers(ctx context.Context, param string, ids []string) (offers []*flightgraph.Offer, errs []error, err error) {
	offers, errs = make([]*flightgraph.Offer, len(ids)), make([]error, len(ids))
	var refs []*offerRef
	var at []int
	for i, id := range ids {
		r, err := s.parseOffer(param, id)
		if err != nil {
			errs[i] = err
			continue
		}
		refs, at = append(refs, r), append(at, i)
	}
	if len(refs) == 0 {
		return offers, errs, nil
	}
	qs, qerrs, err := s.quote(ctx, param, refs)
	if err != nil {
		return nil, nil, err
	}
	for j, q := range qs {
		i := at[j]
		if errs[i] = qerrs[j]; q == nil {
			continue
		}
		if o := s.price(q.refs, q.it, q.family, q.counts, q.at, q.bound); o == nil {
			errs[i] = flightgraph.ParamErrorf(flightgraph.ECodeOfferExpired, param, "the offer's flights are no longer sold: search again")
		} else {
			o.ID = s.offerID(o, q.counts)
			offers[i] = o
		}
	}
	return offers, errs, nil
}
