package graph

import (
	"context"
	"fmt"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/graph/model"
)

// Prefetching makes batching independent of goroutine scheduling. gqlgen resolves the children
// of each parent in goroutines of their own, so the keys of one level reach a loader over a spread
// of time that, on a busy machine, outlasts any short wait, and the level splits into several
// queries. Instead, whoever holds a whole level (a connection resolver, or a loader whose batch
// just came back) fetches the next level in one round trip through that level's loader and primes
// its cache; the children's Load calls then find their values at once, with no wait. Only the hops
// the operation selects are prefetched: a query that does not ask for airports costs no airport
// query. Round trips per query therefore depend on its shape, not on its page size.

// PlanPrefetch returns a gqlgen operation middleware over schema: it records which fields the
// operation selects on which types, for the prefetch steps to consult, and collects the fields of
// each selection set ahead of execution (see collect.go).
func PlanPrefetch(schema *ast.Schema) graphql.OperationMiddleware {
	return func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		if answerKept(ctx) {
			return next(ctx) // answered from the response cache: nothing executes (Answers)
		}
		if oc := graphql.GetOperationContext(ctx); oc != nil && oc.Operation != nil {
			if l := loadersOf(ctx); l != nil {
				l.fields = map[string]bool{}
				collectFields(oc.Operation.SelectionSet, l.fields, 0)
			}
			warmFieldCollection(schema, oc)
		}
		return next(ctx)
	}
}

func collectFields(set ast.SelectionSet, into map[string]bool, depth int) {
	if depth > 64 {
		return // validation bounds real documents far below this
	}
	for _, s := range set {
		switch s := s.(type) {
		case *ast.Field:
			if s.ObjectDefinition != nil {
				into[s.ObjectDefinition.Name+"."+s.Name] = true
			}
			collectFields(s.SelectionSet, into, depth+1)
		case *ast.InlineFragment:
			collectFields(s.SelectionSet, into, depth+1)
		case *ast.FragmentSpread:
			if s.Definition != nil {
				collectFields(s.Definition.SelectionSet, into, depth+1)
			}
		}
	}
}

// wants reports whether the operation selects any of the fields. Without a plan (PlanPrefetch
// not installed) it assumes so: fetching a hop nobody reads wastes a query, while a hop not
// fetched is an error for the fields that read attached values.
func (l *Loaders) wants(fields ...string) bool {
	if l.fields == nil {
		return true
	}
	for _, f := range fields {
		if l.fields[f] {
			return true
		}
	}
	return false
}

// Flights hands flights to GraphQL: it fetches what the operation asks of them, a level at a time
// for all of them, and returns each with its legs and their airports (nil where a flight is nil).
// Every flight reaches GraphQL this way, through a root field or the Flight loader.
func (l *Loaders) Flights(ctx context.Context, flights []*flightgraph.Flight) []*model.Flight {
	var ids, airports, carriers []string
	for _, f := range flights {
		if f != nil {
			ids = append(ids, f.ID)
			airports = append(airports, f.OriginCode, f.DestinationCode)
			carriers = append(carriers, f.CarrierCode)
		}
	}
	if l.wants("Flight.origin", "Flight.destination") {
		l.Airport.Prefetch(ctx, airports)
	}
	if l.wants("Flight.carrier") {
		l.Carrier.Prefetch(ctx, carriers)
	}
	var legs map[string][]*model.FlightLeg
	var legsErr map[string]error
	var status map[string]flightgraph.FlightStatus
	if l.wants("Flight.legs", "Flight.status") {
		l.Legs.Prefetch(ctx, ids)
		lists, errs := l.Legs.values(ctx, ids)
		legs, legsErr = l.servedLegs(ctx, ids, lists, errs)
		if l.wants("Flight.status") {
			// The status follows the clock, read once for the flights served together.
			now := l.now()
			status = make(map[string]flightgraph.FlightStatus, len(ids))
			for i, id := range ids {
				if errs[i] == nil {
					status[id] = flightgraph.FlightStatusAt(lists[i], now)
				}
			}
		}
	}
	out := make([]*model.Flight, len(flights))
	for i, f := range flights {
		if f == nil {
			continue
		}
		if legs == nil {
			out[i] = &model.Flight{Flight: f} // its legs were not asked for
			continue
		}
		out[i] = model.NewFlight(f, legs[f.ID], legsErr[f.ID])
		if status != nil {
			out[i].SetStatus(status[f.ID], legsErr[f.ID])
		}
	}
	return out
}

// Offers serves offers with their segments' flights, made by segmentFlights for all the offers
// at once: the round trips do not grow with the number of offers.
func (l *Loaders) Offers(ctx context.Context, offers []*flightgraph.Offer) []*model.Offer {
	var segs []*flightgraph.OfferSegment
	for _, o := range offers {
		segs = append(segs, o.Segments...)
	}
	served := segmentFlights(ctx, l, segs, func(s *flightgraph.OfferSegment) (*flightgraph.Flight, []*flightgraph.FlightLeg) {
		return s.Flight, s.Legs
	})
	out := make([]*model.Offer, len(offers))
	for i, o := range offers {
		out[i] = &model.Offer{Offer: o, Segments: make([]*model.OfferSegment, len(o.Segments))}
		for j, s := range o.Segments {
			out[i].Segments[j] = &model.OfferSegment{OfferSegment: s, Flight: served[0]}
			served = served[1:]
		}
	}
	return out
}

// Availability serves availabilities with their flights, as Offers does.
func (l *Loaders) Availability(ctx context.Context, avail []*flightgraph.FlightAvailability) []*model.FlightAvailability {
	var segs []*flightgraph.SegmentAvailability
	for _, a := range avail {
		segs = append(segs, a.Segments...)
	}
	served := segmentFlights(ctx, l, segs, func(s *flightgraph.SegmentAvailability) (*flightgraph.Flight, []*flightgraph.FlightLeg) {
		return s.Flight, s.Legs
	})
	out := make([]*model.FlightAvailability, len(avail))
	for i, a := range avail {
		out[i] = &model.FlightAvailability{FlightAvailability: a, Segments: make([]*model.SegmentAvailability, len(a.Segments))}
		for j, s := range a.Segments {
			out[i].Segments[j] = &model.SegmentAvailability{SegmentAvailability: s, Flight: served[0]}
			served = served[1:]
		}
	}
	return out
}

// segmentFlights serves the flights of segments the engine made, in their order, made by Flights
// for all at once; the legs the engine read for them prime the legs loader, so that they are not
// read again.
func segmentFlights[S any](ctx context.Context, l *Loaders, segs []S, of func(S) (*flightgraph.Flight, []*flightgraph.FlightLeg)) []*model.Flight {
	flights, ids, legs := make([]*flightgraph.Flight, len(segs)), make([]string, len(segs)), make([][]*flightgraph.FlightLeg, len(segs))
	for i, s := range segs {
		flights[i], legs[i] = of(s)
		ids[i] = flights[i].ID
	}
	if l.wants("Flight.legs", "Flight.status") {
		l.Legs.Prime(ctx, ids, legs)
	}
	return l.Flights(ctx, flights)
}

// Deals serves deals with their offers, made by Offers for all of them at once.
func (l *Loaders) Deals(ctx context.Context, deals []*flightgraph.Deal) []*model.Deal {
	var offers []*flightgraph.Offer
	for _, d := range deals {
		if d.Offer != nil {
			offers = append(offers, d.Offer)
		}
	}
	served := l.Offers(ctx, offers)
	out := make([]*model.Deal, len(deals))
	for i, d := range deals {
		out[i] = &model.Deal{Deal: d}
		if d.Offer != nil {
			out[i].Offer, served = served[0], served[1:]
		}
	}
	return out
}

// FlightLegs returns the legs of each flight, served as Flights serves them, each flight's with
// its error: the flights' legs are read in one round trip (an _entities call's FlightLegs).
func (l *Loaders) FlightLegs(ctx context.Context, flightIDs []string) ([][]*model.FlightLeg, []error) {
	lists, errs := LoadAll(ctx, l.Legs, flightIDs)
	served, servedErr := l.servedLegs(ctx, flightIDs, lists, errs)
	out, outErr := make([][]*model.FlightLeg, len(flightIDs)), make([]error, len(flightIDs))
	for i, id := range flightIDs {
		out[i], outErr[i] = served[id], servedErr[id]
	}
	return out, outErr
}

// servedLegs pairs the legs of each flight (lists, or the error of each, by the flights' ids)
// with the airports and the aircraft the operation asks of them, which prefetchLegs fetched when
// the legs came: GraphQL then reads them in line, as plain methods rather than resolvers.
func (l *Loaders) servedLegs(ctx context.Context, ids []string, lists [][]*flightgraph.FlightLeg, errs []error) (map[string][]*model.FlightLeg, map[string]error) {
	wantsAirports := l.wants("FlightLeg.origin", "FlightLeg.destination")
	wantsAircraft := l.wants("FlightLeg.aircraft", "FlightLeg.aircraftConfiguration")
	var all []*flightgraph.FlightLeg
	var codes, configs []string
	for _, ls := range lists {
		for _, g := range ls {
			all = append(all, g)
			if wantsAirports {
				codes = append(codes, g.OriginCode, g.DestinationCode)
			}
			if wantsAircraft {
				configs = append(configs, g.ConfigurationCode)
			}
		}
	}
	var (
		vals            []*flightgraph.Airport
		configurations  []*flightgraph.Aircraft
		airErrs, acErrs []error
	)
	if wantsAirports {
		vals, airErrs = l.Airport.values(ctx, codes)
	}
	var airframes []*model.Airframe
	if wantsAircraft {
		configurations, acErrs = l.Aircraft.values(ctx, configs)
		frames := make([]*flightgraph.Airframe, len(all))
		for i, g := range all {
			if acErrs[i] == nil && configurations[i] != nil && g.Registration != "" {
				frames[i] = &flightgraph.Airframe{Registration: g.Registration, Aircraft: configurations[i]}
			}
		}
		airframes = l.Airframes(ctx, frames)
	}
	served := make(map[*flightgraph.FlightLeg]*model.FlightLeg, len(all))
	for i, g := range all {
		leg := &model.FlightLeg{FlightLeg: g}
		if wantsAirports {
			o, oErr := referenced(vals[2*i], airErrs[2*i], codes[2*i])
			d, dErr := referenced(vals[2*i+1], airErrs[2*i+1], codes[2*i+1])
			leg = model.NewFlightLeg(g, o, d, oErr, dErr)
		}
		if wantsAircraft {
			leg.SetAircraft(configurations[i], airframes[i], acErrs[i])
		}
		served[g] = leg
	}
	legs, legsErr := make(map[string][]*model.FlightLeg, len(ids)), make(map[string]error, len(ids))
	for i, id := range ids {
		if errs[i] != nil {
			legsErr[id] = errs[i]
			continue
		}
		ls := make([]*model.FlightLeg, len(lists[i]))
		for j, g := range lists[i] {
			ls[j] = served[g]
		}
		legs[id] = ls
	}
	return legs, legsErr
}

// Airframes hands airframes to GraphQL (nil where a frame is nil), each with its configuration's
// cabins and their amenities as far as the operation asks for them, fetched a level at a time for
// all of them (by the Aircraft loader's prefetch): the type Aircraft and its cabins are read in
// line, as plain methods rather than resolvers.
func (l *Loaders) Airframes(ctx context.Context, frames []*flightgraph.Airframe) []*model.Airframe {
	var cabins map[string][]*model.Cabin
	var cabinsErr map[string]error
	if l.wants("Aircraft.cabins") {
		var configs []string
		for _, f := range frames {
			if f != nil {
				configs = append(configs, f.Configuration)
			}
		}
		cabins, cabinsErr = l.servedCabins(ctx, configs)
	}
	out := make([]*model.Airframe, len(frames))
	for i, f := range frames {
		switch {
		case f == nil:
		case cabins == nil:
			out[i] = &model.Airframe{Airframe: f} // its cabins were not asked for
		default:
			out[i] = model.NewAirframe(f, cabins[f.Configuration], cabinsErr[f.Configuration])
		}
	}
	return out
}

// ServedCabins returns the cabins of a configuration as Airframes serves them, or the error of loading
// them (AircraftConfiguration.cabins). Once the request's context is done it returns no value.
func (l *Loaders) ServedCabins(ctx context.Context, configuration string) ([]*model.Cabin, error) {
	if ctx.Err() != nil {
		return nil, stopped(ctx)
	}
	cabins, errs := l.servedCabins(ctx, []string{configuration})
	return cabins[configuration], errs[configuration]
}

// servedCabins returns the cabins of each configuration, by its code, with the amenities the
// operation asks of them, or the error of loading them. The configurations' cabins are shared by
// the airframes that fly them.
func (l *Loaders) servedCabins(ctx context.Context, configs []string) (map[string][]*model.Cabin, map[string]error) {
	seen := make(map[string]bool, len(configs))
	distinct := configs[:0:0]
	for _, c := range configs {
		if !seen[c] {
			seen[c] = true
			distinct = append(distinct, c)
		}
	}
	lists, errs := l.Cabins.values(ctx, distinct)
	wantsAmenities := l.wants("Cabin.amenities")
	var (
		products    []string
		amenities   [][]*flightgraph.Amenity
		amenityErrs []error
	)
	if wantsAmenities {
		for _, cabins := range lists {
			for _, c := range cabins {
				products = append(products, c.Product)
			}
		}
		amenities, amenityErrs = l.Amenities.values(ctx, products)
	}
	out, outErr := make(map[string][]*model.Cabin, len(distinct)), make(map[string]error)
	k := 0
	for i, code := range distinct {
		served := make([]*model.Cabin, len(lists[i]))
		for j, c := range lists[i] {
			if wantsAmenities {
				served[j] = model.NewCabin(c, amenities[k], amenityErrs[k])
				k++
			} else {
				served[j] = &model.Cabin{Cabin: c}
			}
		}
		if errs[i] != nil {
			outErr[code] = errs[i]
			continue
		}
		out[code] = served
	}
	return out, outErr
}

// prefetchLegs loads what the operation asks of these legs.
func (l *Loaders) prefetchLegs(ctx context.Context, legs []*flightgraph.FlightLeg) {
	var airports, configs []string
	for _, g := range legs {
		airports = append(airports, g.OriginCode, g.DestinationCode)
		configs = append(configs, g.ConfigurationCode)
	}
	// The places and the fleet are independent branches: fetch them side by side.
	var wg sync.WaitGroup
	if l.wants("FlightLeg.origin", "FlightLeg.destination") {
		wg.Go(func() { l.Airport.Prefetch(ctx, airports) })
	}
	if l.wants("FlightLeg.aircraft", "FlightLeg.aircraftConfiguration") {
		l.Aircraft.Prefetch(ctx, configs)
	}
	wg.Wait()
}

// referenced is an airport that a row refers to; a dangling reference is an internal error.
func referenced(a *flightgraph.Airport, err error, code string) (*flightgraph.Airport, error) {
	if err == nil && a == nil {
		err = fmt.Errorf("graph: airport %q is referenced but missing", code)
	}
	return a, err
}

// PrefetchAirports loads what the operation asks of these airports.
func (l *Loaders) PrefetchAirports(ctx context.Context, airports []*flightgraph.Airport) {
	var cities, countries []string
	for _, a := range airports {
		if a != nil {
			cities, countries = append(cities, a.CityCode), append(countries, a.CountryCode)
		}
	}
	if l.wants("Airport.city") {
		l.City.Prefetch(ctx, cities)
	}
	if l.wants("Airport.country") {
		l.Country.Prefetch(ctx, countries)
	}
}

func (l *Loaders) prefetchCities(ctx context.Context, cities []*flightgraph.City) {
	var codes, countries []string
	for _, c := range cities {
		if c != nil {
			codes, countries = append(codes, c.Code), append(countries, c.CountryCode)
		}
	}
	if l.wants("City.country") {
		l.Country.Prefetch(ctx, countries)
	}
	if l.wants("City.airports") {
		l.CityPorts.Prefetch(ctx, codes)
	}
}

func (l *Loaders) prefetchCarriers(ctx context.Context, carriers []*flightgraph.Carrier) {
	var hubs []string
	for _, c := range carriers {
		if c != nil {
			hubs = append(hubs, c.HubCode)
		}
	}
	if l.wants("Carrier.hub") {
		l.Airport.Prefetch(ctx, hubs)
	}
}

// prefetchAircraft loads what the operation asks of these configurations.
func (l *Loaders) prefetchAircraft(ctx context.Context, aircraft []*flightgraph.Aircraft) {
	var codes []string
	for _, a := range aircraft {
		if a != nil {
			codes = append(codes, a.Configuration)
		}
	}
	if l.wants("Aircraft.cabins", "AircraftConfiguration.cabins") {
		l.Cabins.Prefetch(ctx, codes)
	}
}

func (l *Loaders) prefetchCabins(ctx context.Context, cabins []*flightgraph.Cabin) {
	var products []string
	for _, c := range cabins {
		products = append(products, c.Product)
	}
	if l.wants("Cabin.amenities") {
		l.Amenities.Prefetch(ctx, products)
	}
}

// PrefetchRoutes loads what the operation asks of these routes.
func (l *Loaders) PrefetchRoutes(ctx context.Context, routes []*flightgraph.Route) {
	l.prefetchEnds(ctx, "Route", len(routes), func(i int) (string, string, string) {
		return routes[i].OriginCode, routes[i].DestinationCode, routes[i].CarrierCode
	})
}

// prefetchEnds loads what the operation asks of the origin, destination and carrier fields of
// n values of the GraphQL type typ, each's codes given by ends.
func (l *Loaders) prefetchEnds(ctx context.Context, typ string, n int, ends func(i int) (origin, destination, carrier string)) {
	airports, carriers := make([]string, 0, 2*n), make([]string, 0, n)
	for i := range n {
		o, d, c := ends(i)
		airports, carriers = append(airports, o, d), append(carriers, c)
	}
	if l.wants(typ+".origin", typ+".destination") {
		l.Airport.Prefetch(ctx, airports)
	}
	if l.wants(typ + ".carrier") {
		l.Carrier.Prefetch(ctx, carriers)
	}
}

// PrimeAll keeps values a root field read itself in the request's loader l, under key of each,
// and prefetches what the operation asks of them (the loader's hook), as a batch of l would
// have: the fields of a list's elements then read them without waiting (marshalList).
func PrimeAll[V any](ctx context.Context, l *Loader[V], vals []V, key func(V) string) {
	keys := make([]string, len(vals))
	for i, v := range vals {
		keys[i] = key(v)
	}
	l.Prime(ctx, keys, vals)
}

// PrefetchSchedule loads what the operation asks of these schedule records.
func (l *Loaders) PrefetchSchedule(ctx context.Context, legs []*flightgraph.ScheduledLeg) {
	l.prefetchEnds(ctx, "ScheduledLeg", len(legs), func(i int) (string, string, string) {
		return legs[i].OriginCode, legs[i].DestinationCode, legs[i].CarrierCode
	})
}

// PrefetchCargo loads what the operation asks of a flight's cargo legs.
func (l *Loaders) PrefetchCargo(ctx context.Context, c *flightgraph.CargoCapacity) {
	if c == nil || !l.wants("CargoLeg.origin", "CargoLeg.destination") {
		return
	}
	var airports []string
	for _, leg := range c.Legs {
		airports = append(airports, leg.OriginCode, leg.DestinationCode)
	}
	l.Airport.Prefetch(ctx, airports)
}
