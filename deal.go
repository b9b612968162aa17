package flightgraph

import (
	"slices"
	"strings"
	"time"
)

// Deals bounds: a deals search spans at most MaxDealDays days (a month, which an all-deals search
// reads for every destination, as an inspiration does), names at most MaxDealDestinations
// destinations, and starts within DealMonths months of today (its reference lists those months).
// Last-minute deals leave within LastMinuteDays days of today.
const (
	MaxDealDays         = 31
	MaxDealDestinations = 20
	DealMonths          = InspirationMonths
	LastMinuteDays      = 7
)

// DealType picks the days of a deals search's interval that deals may leave on.
type DealType string

const (
	// DealLowestFare is every day of the interval.
	DealLowestFare DealType = "LOWEST_FARE"
	// DealWeekend is the interval's Fridays and Saturdays (local dates of departure).
	DealWeekend DealType = "WEEKEND"
	// DealLastMinute is the interval's days within LastMinuteDays of today.
	DealLastMinute DealType = "LAST_MINUTE"
)

// DealKind describes a deal type for reference data.
type DealKind struct {
	Code DealType
	Labels
}

// DealKinds are the deal types, as reference data lists them.
var DealKinds = []*DealKind{
	{DealLowestFare, Labels{"Lowest fare", "Meilleur prix", "Laagste prijs"}},
	{DealWeekend, Labels{"Weekend getaway", "Escapade week-end", "Weekendje weg"}},
	{DealLastMinute, Labels{"Last minute", "Dernière minute", "Last minute"}},
}

// keeps reports whether a deal of the type may leave on day (YYYY-MM-DD), today being today.
func (t DealType) keeps(day string, today time.Time) bool {
	d, err := time.Parse(DateLayout, day)
	if err != nil {
		return false
	}
	switch t {
	case DealWeekend:
		return d.Weekday() == time.Friday || d.Weekday() == time.Saturday
	case DealLastMinute:
		return d.Before(today.AddDate(0, 0, LastMinuteDays))
	}
	return true
}

// DealQuery asks for deals: from Origin, the cheapest offer to each destination over the days of
// DateInterval that Type keeps, in Cabins, for Passengers, priced in Currency. Best-fare offers and
// feeds name their Destinations; all deals find every destination reached (in Zone, when given),
// cheapest first, at most Limit.
type DealQuery struct {
	// Origin is an airport or city code.
	Origin string
	// Destinations are airport or city codes; none for every destination reached.
	Destinations []string
	// Zone keeps the destinations in one zone (Zones), "" for all.
	Zone string
	// DateInterval is YYYY-MM-DD/YYYY-MM-DD (both included, at most MaxDealDays days), "" for
	// today and the MaxDealDays-1 days after it.
	DateInterval string
	Type         DealType
	// Cabins are the cabins priced, none for all; the deal is the cheapest of any.
	Cabins     []CabinClass
	Passengers []Passenger
	// Currency overrides the point of sale's currency; "" keeps it (euros when it has none).
	Currency string
	// Limit bounds all deals' answer: 1 to MaxDestinations.
	Limit int

	days []string
}

// Validate checks the query's shape against today (UTC) and normalises it. No origin is
// ECodeMissingParameter; a malformed code, interval or currency ECodeBadFormat; more than
// MaxDealDestinations destinations, one named twice, an unknown zone or type, an interval longer
// than MaxDealDays or starting before today or more than DealMonths-1 months ahead, or one
// without a day the type keeps, a limit outside 1 to MaxDestinations, and the passengers and
// cabins a search refuses, ECodeInvalidParameter. Each names its parameter. Passengers default to
// one adult.
func (q *DealQuery) Validate(today time.Time) error {
	var err error
	if q.Origin = strings.TrimSpace(q.Origin); q.Origin == "" {
		return ParamErrorf(ECodeMissingParameter, "origin", "origin is required: an airport or city code")
	}
	if q.Origin, err = NormalizeIATACode("origin", q.Origin); err != nil {
		return err
	}
	if len(q.Destinations) > MaxDealDestinations {
		return ParamErrorf(ECodeInvalidParameter, "destinations", "at most %d destinations, got %d", MaxDealDestinations, len(q.Destinations))
	}
	seen := map[string]bool{}
	for i, d := range q.Destinations {
		if q.Destinations[i], err = NormalizeIATACode("destinations", d); err != nil {
			return err
		}
		if seen[q.Destinations[i]] {
			return ParamErrorf(ECodeInvalidParameter, "destinations", "%s is given twice", q.Destinations[i])
		}
		seen[q.Destinations[i]] = true
	}
	if q.Zone != "" {
		q.Zone = strings.ToUpper(strings.TrimSpace(q.Zone))
		if !slices.ContainsFunc(Zones, func(z *Zone) bool { return z.Code == q.Zone }) {
			return ParamErrorf(ECodeInvalidParameter, "destinationZoneCode", "destinationZoneCode is one of N, E, A, F, M, S or P, got %q", Clip(q.Zone))
		}
	}
	switch q.Type = DealType(strings.ToUpper(strings.TrimSpace(string(q.Type)))); q.Type {
	case "":
		q.Type = DealLowestFare
	case DealLowestFare, DealWeekend, DealLastMinute:
	default:
		return ParamErrorf(ECodeInvalidParameter, "dealType", "dealType is LOWEST_FARE, WEEKEND or LAST_MINUTE, got %q", Clip(string(q.Type)))
	}
	if q.DateInterval == "" {
		last := today.AddDate(0, 0, MaxDealDays-1)
		if q.Type == DealLastMinute {
			last = today.AddDate(0, 0, LastMinuteDays-1)
		}
		q.DateInterval = today.Format(DateLayout) + "/" + last.Format(DateLayout)
	}
	days, err := ParseDateInterval(q.DateInterval, today)
	if err != nil {
		return err
	}
	switch first := days[0]; {
	case len(days) > MaxDealDays:
		return ParamErrorf(ECodeInvalidParameter, "dateInterval", "a deals search covers 1 to %d days", MaxDealDays)
	case first < today.Format(DateLayout):
		return ParamErrorf(ECodeInvalidParameter, "dateInterval", "dateInterval starts before today (%s)", today.Format(DateLayout))
	case first[:7] > today.AddDate(0, DealMonths-1, 0).Format(MonthLayout):
		return ParamErrorf(ECodeInvalidParameter, "dateInterval", "deals leave from %s to the end of %s", today.Format(DateLayout), today.AddDate(0, DealMonths-1, 0).Format(MonthLayout))
	}
	q.days = nil
	for _, d := range days {
		if q.Type.keeps(d, today) {
			q.days = append(q.days, d)
		}
	}
	if len(q.days) == 0 {
		return ParamErrorf(ECodeInvalidParameter, "dateInterval", "dateInterval has no day a %s deal leaves on", q.Type)
	}
	if len(q.Passengers) == 0 {
		q.Passengers = []Passenger{{ID: 1, Type: "ADT"}}
	}
	party := OfferSearch{Cabins: q.Cabins, Passengers: q.Passengers, Currency: q.Currency}
	if err := party.validateParty(); err != nil {
		return err
	}
	q.Cabins, q.Currency = party.Cabins, party.Currency
	if q.Limit < 1 || q.Limit > MaxDestinations {
		return ParamErrorf(ECodeInvalidParameter, "limit", "limit is from 1 to %d destinations", MaxDestinations)
	}
	return nil
}

// Interval is the query's whole interval, every day of it: the days reads cover.
func (q *DealQuery) Interval() []string {
	days, _ := ParseDateInterval(q.DateInterval, time.Time{})
	return days
}

// Days are the days of a validated query's interval its type keeps, ascending.
func (q *DealQuery) Days() []string { return q.days }

// Search is the query as the offers search of one day to one destination: what a deal of that
// day to that place is the cheapest offer of.
func (q *DealQuery) Search(destination, day string) *OfferSearch {
	return &OfferSearch{Cabins: q.Cabins, Passengers: q.Passengers, Currency: q.Currency,
		Connections: []RequestedConnection{{DepartureDate: day, Origin: q.Origin, Destination: destination}}}
}

// DealList is the answer of a deals search: from an origin, over days, in a currency.
type DealList struct {
	Origin *LabelledPlace
	// DateInterval is the query's, normalised; Type the deal type.
	DateInterval string
	Type         DealType
	Currency     string
	Deals        []*Deal
}

// Deal is the cheapest offer to a destination over a period: what the day's (or the days')
// offers search to that destination gives, priced the same (travel.Service.BestFares).
type Deal struct {
	Destination *LabelledPlace
	Zone        *Zone
	// Period is the day of a feed's deal, or the query's interval.
	Period string
	// Offer is the cheapest offer, nil when none is sold in the period.
	Offer *Offer
}

// DepartureDate is the local date the deal's offer leaves on, nil without an offer.
func (d *Deal) DepartureDate() *string {
	if d.Offer == nil {
		return nil
	}
	return &d.Offer.Segments[0].Flight.ScheduleDate
}

// DealsReference is what a deals page needs of a market: the market's origins with the places
// they reach (nonstop or through a hub) by zone, the months deals can leave in, and the deal
// types.
type DealsReference struct {
	Market   string
	Currency string
	Origins  []*DealOrigin
	// Months are the months, from this one to DealMonths-1 ahead, that have flights from the
	// market's origins.
	Months []string
	Types  []*DealKind
}

// DealOrigin is an origin of a market's deals with the destinations it reaches, by zone.
type DealOrigin struct {
	Origin *LabelledPlace
	Zones  []*DealZone
}

// DealZone is a zone and the destinations of an origin in it, by code.
type DealZone struct {
	Zone         *Zone
	Destinations []*LabelledPlace
}
