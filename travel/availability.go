package travel

import (
	"cmp"
	"context"
	"math"
	"slices"
	"time"

	"github.com/flightgraph/flightgraph"
)

// FlightsAvailability answers, for each requested connection of q (one or two), the seats left in
// each cabin asked for on each flight of each itinerary an offers search of that bound finds at
// this instant, by the rule that prices it (refs.segmentSeats): an offer in a cabin exists exactly
// when each flight's cabin is Sellable for q's passengers, and its segments' seats left are these
// (TestAvailabilityIsTheOffers). Itineraries come by departure, then fewer flights. It reads the
// flights of each bound in three round trips, however many there are.
//
// Errors: those of an offers search (OffersFor) of q.
func (s *Service) FlightsAvailability(ctx context.Context, q *flightgraph.OfferSearch) (_ []*flightgraph.FlightAvailability, err error) {
	ctx, end := s.traced(ctx, "availability")
	defer func() { end(err) }()
	if err := s.resolve(ctx, q); err != nil {
		return nil, err
	}
	counts, _ := q.Counts()
	now := s.Now().UTC().Truncate(time.Second)
	cabins := cabinsUp(q.CabinsOrAll())
	cur, _ := flightgraph.CurrencyOf("currency", flightgraph.PricingCurrency)
	var out []*flightgraph.FlightAvailability
	for i, c := range q.Connections {
		its, refs, err := s.day(ctx, c, now, cur)
		if err != nil {
			return nil, err
		}
		var bound []*flightgraph.FlightAvailability
		for _, it := range its {
			a := availabilityOf(refs, it, cabins, counts.Seats(), now)
			a.Bound = boundOf(i)
			bound = append(bound, a)
		}
		slices.SortStableFunc(bound, func(a, b *flightgraph.FlightAvailability) int {
			return cmp.Or(a.Segments[0].Flight.DepartureUTC.Compare(b.Segments[0].Flight.DepartureUTC), len(a.Segments)-len(b.Segments))
		})
		out = append(out, bound...)
	}
	return out, nil
}

// availabilityOf is an itinerary's seats left in cabins (from Economy up) at an instant, each
// cabin Sellable for seats passengers with a seat: on board of each of its flights with as many
// seats left, none cancelled, all leaving at least MinBookingLead after at, as price requires.
func availabilityOf(r *refs, it itinerary, cabins []flightgraph.CabinClass, seats int, at time.Time) *flightgraph.FlightAvailability {
	a := &flightgraph.FlightAvailability{}
	onAll := map[flightgraph.CabinClass]*flightgraph.CabinSeats{}
	for _, c := range cabins {
		onAll[c] = &flightgraph.CabinSeats{Cabin: c, SeatsLeft: math.MaxInt, Sellable: true}
	}
	for i, f := range it.flights {
		legs := it.legs[i]
		seg := &flightgraph.SegmentAvailability{Flight: f, Legs: legs}
		if len(legs) > 0 && r.airports[legs[0].OriginCode] != nil && r.airports[legs[len(legs)-1].DestinationCode] != nil {
			seg.OriginCity, seg.DestinationCity = r.airports[legs[0].OriginCode].CityCode, r.airports[legs[len(legs)-1].DestinationCode].CityCode
		}
		soon := !f.DepartureUTC.After(at.Add(MinBookingLead - time.Second))
		for _, c := range cabins {
			left, _, onBoard := r.segmentSeats(f, legs, c, at)
			if !onBoard {
				delete(onAll, c)
				continue
			}
			cs := &flightgraph.CabinSeats{Cabin: c, SeatsLeft: left, Sellable: left >= seats && !soon}
			seg.Cabins = append(seg.Cabins, cs)
			if all := onAll[c]; all != nil {
				all.SeatsLeft, all.Sellable = min(all.SeatsLeft, left), all.Sellable && cs.Sellable
			}
		}
		a.Segments = append(a.Segments, seg)
	}
	for _, c := range cabins {
		if all := onAll[c]; all != nil && len(a.Segments) > 0 {
			a.Cabins = append(a.Cabins, all)
		}
	}
	return a
}
