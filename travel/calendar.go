package travel

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/flightgraph/flightgraph"
)

// LowestFares returns a calendar of one bound of a search over days (ascending, from
// flightgraph.ParseDateInterval): for each day, month or the whole interval, the cheapest offer
// the search would give on its days, quoted now. It reads the flights of all the days in the same
// three round trips as one day's search.
//
// A day's cheapest offer is, of each of its itineraries, the first fare family of the first cabin
// that has the seats, cabins taken from Economy up: a cabin's families differ only by their share
// of the base fare, which grows with their rank, and share its seats and its taxes; and a cabin's
// fare is at least 1.7 times the one behind it (cabinPerMille) where the loads can make it at most
// 1.625 times cheaper (loadPerMille, 800‰ to 1300‰), with taxes no lower. TestCalendarIsTheSearchesCheapest holds this to
// OffersFor over generated searches.
func (s *Service) LowestFares(ctx context.Context, q *flightgraph.OfferSearch, bound int, days []string, by flightgraph.CalendarType) (_ []*flightgraph.LowestFare, err error) {
	ctx, end := s.traced(ctx, "calendar")
	defer func() { end(err) }()
	if len(days) == 0 {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeMissingParameter, "dateInterval", "a calendar needs at least one day")
	}
	// The calendar's bound leaves on its interval's days, from the first; another bound without a
	// date leaves then too, and one with a date keeps it, so that an INBOUND calendar starting
	// before its outbound's date is refused as any return before its outbound is.
	for i := range q.Connections {
		if i == bound || q.Connections[i].DepartureDate == "" {
			q.Connections[i].DepartureDate = days[0]
		}
	}
	if err := s.resolve(ctx, q); err != nil {
		return nil, err
	}
	if bound < 0 || bound >= len(q.Connections) {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "bound", "the search has %d requested connection(s): no bound %d", len(q.Connections), bound+1)
	}
	switch by {
	case flightgraph.CalendarDay, flightgraph.CalendarMonth, flightgraph.CalendarOverall:
	default:
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "type", "a calendar's type is DAY, MONTH or OVERALL")
	}
	cur, err := s.currency(q, flightgraph.PointOfSaleFromContext(ctx))
	if err != nil {
		return nil, err
	}
	// A calendar reads and prices up to a year of days: heavy work, in the request's slot.
	leave, err := s.heavy(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	counts, _ := q.Counts()
	now := s.Now().UTC().Truncate(time.Second)
	byDate, err := s.itineraries(ctx, q.Connections[bound], days, now)
	if err != nil {
		return nil, err
	}
	var all []itinerary
	for _, its := range byDate {
		all = append(all, its...)
	}
	refs, err := s.refsOf(ctx, all, cur)
	if err != nil {
		return nil, err
	}
	cabins := slices.Clone(q.CabinsOrAll())
	slices.SortFunc(cabins, func(a, b flightgraph.CabinClass) int { return cmp.Compare(cabinPerMille[a], cabinPerMille[b]) })
	var out []*flightgraph.LowestFare
	for _, d := range days {
		period := d
		switch by {
		case flightgraph.CalendarMonth:
			period = d[:7]
		case flightgraph.CalendarOverall:
			period = days[0] + "/" + days[len(days)-1]
		}
		if len(out) == 0 || out[len(out)-1].Period != period {
			out = append(out, &flightgraph.LowestFare{Period: period})
		}
		lf := out[len(out)-1]
		for _, it := range byDate[d] {
			if o := s.cheapestOf(refs, it, cabins, counts, now, boundOf(bound)); o != nil && (lf.Offer == nil || before(o, lf.Offer)) {
				lf.Offer = o
			}
		}
	}
	for _, lf := range out {
		if lf.Offer != nil {
			lf.Offer.ID = s.offerID(lf.Offer, counts)
		}
	}
	return out, nil
}

// cheapestOf is an itinerary's cheapest offer in cabins (ordered from Economy up), as a calendar
// finds it: the first fare family of the first cabin that has the seats (LowestFares says why);
// nil when none has.
func (s *Service) cheapestOf(r *refs, it itinerary, cabins []flightgraph.CabinClass, counts flightgraph.PassengerCounts, at time.Time, bound flightgraph.Bound) *flightgraph.Offer {
	for _, cabin := range cabins {
		if o := s.price(r, it, flightgraph.FamiliesOf(cabin)[0], counts, at, bound); o != nil {
			return o
		}
	}
	return nil // sold out, or not on board, in every cabin
}

// before reports whether a comes before b among a search's offers of the same price or less:
// cheaper, or as cheap and listed first (by departure, then fewer segments).
func before(a, b *flightgraph.Offer) bool {
	if a.Price.Total.Minor != b.Price.Total.Minor {
		return a.Price.Total.Minor < b.Price.Total.Minor
	}
	if c := a.Departure().Compare(b.Departure()); c != 0 {
		return c < 0
	}
	return len(a.Segments) < len(b.Segments)
}
