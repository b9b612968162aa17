package flightgraph

import (
	"strings"
	"time"
)

// MaxSeatsPerBooking is the most passengers with a seat one search may ask for.
const MaxSeatsPerBooking = 9

// OfferValidity is how long an offer keeps its price: read back within it, an offer id gives the
// same price; after it, ECodeOfferExpired.
const OfferValidity = 30 * time.Minute

// Bound is a direction of a trip.
type Bound string

const (
	Outbound Bound = "OUTBOUND"
	Inbound  Bound = "INBOUND"
)

// OfferSearch asks for the offers of a one-way trip or of a return trip's two bounds.
type OfferSearch struct {
	// Cabins are the commercial cabins asked for; empty means all.
	Cabins     []CabinClass
	Passengers []Passenger
	// Connections are one (one-way) or two (return) requested connections.
	Connections []RequestedConnection
	// Currency overrides the point of sale's currency; "" keeps it (euros when it has none).
	Currency string
}

// Passenger is one traveller of a search.
type Passenger struct {
	ID   int    `json:"id"`
	Type string `json:"type"`
}

// RequestedConnection is one bound of a search: from where to where on which local date.
type RequestedConnection struct {
	DepartureDate string
	Origin        string // airport or city code
	Destination   string
	// OriginPlace and DestinationPlace are the codes resolved (travel.Service.Place).
	OriginPlace, DestinationPlace *Place `json:"-"`
}

// PassengerCounts counts a search's passengers by type, in PassengerTypes' order.
type PassengerCounts map[string]int

// Validate checks a search's shape before anything is looked up: one or two connections with
// dates and codes, 1 to MaxSeatsPerBooking passengers with a seat, at least one adult (ADT, YTH
// or YCD) when children or infants travel, no more infants than adults. It normalises the codes
// and returns ECodeMissingParameter, ECodeBadFormat or ECodeInvalidParameter naming the field.
func (s *OfferSearch) Validate() error {
	switch len(s.Connections) {
	case 0:
		return ParamErrorf(ECodeMissingParameter, "requestedConnections", "give one requested connection (one-way) or two (return)")
	case 1, 2:
	default:
		return ParamErrorf(ECodeInvalidParameter, "requestedConnections", "give one requested connection (one-way) or two (return), not %d", len(s.Connections))
	}
	for i := range s.Connections {
		c := &s.Connections[i]
		if c.DepartureDate == "" {
			return ParamErrorf(ECodeMissingParameter, "departureDate", "each requested connection needs a departureDate")
		}
		if _, err := ParseDate("departureDate", c.DepartureDate); err != nil {
			return err
		}
		if c.Origin == "" {
			return ParamErrorf(ECodeMissingParameter, "origin", "each requested connection needs an origin")
		}
		if c.Destination == "" {
			return ParamErrorf(ECodeMissingParameter, "destination", "each requested connection needs a destination")
		}
	}
	if len(s.Connections) == 2 && s.Connections[1].DepartureDate < s.Connections[0].DepartureDate {
		return ParamErrorf(ECodeInvalidParameter, "departureDate", "the return leaves on %s, before the outbound's %s", s.Connections[1].DepartureDate, s.Connections[0].DepartureDate)
	}
	return s.validateParty()
}

// validateParty checks and normalises who travels, in which cabins, paying in which currency:
// the part of a search that deals and feeds share (DealQuery.Validate).
func (s *OfferSearch) validateParty() error {
	seen := map[CabinClass]bool{}
	for i, c := range s.Cabins {
		c = CabinClass(strings.ToUpper(string(c)))
		if c == "ALL" && len(s.Cabins) == 1 {
			s.Cabins = nil
			break
		}
		k, err := ParseCabinClass("commercialCabins", string(c))
		if err != nil {
			return ParamErrorf(ECodeInvalidParameter, "commercialCabins", "commercialCabins takes ECONOMY, PREMIUM, BUSINESS, FIRST, or ALL alone; got %q", Clip(string(c)))
		}
		if seen[k] {
			return ParamErrorf(ECodeInvalidParameter, "commercialCabins", "%s is given twice", k)
		}
		seen[k], s.Cabins[i] = true, k
	}
	if len(s.Passengers) == 0 {
		return ParamErrorf(ECodeMissingParameter, "passengers", "give at least one passenger")
	}
	counts, err := s.Counts()
	if err != nil {
		return err
	}
	seats, adults := 0, counts["ADT"]+counts["YTH"]+counts["YCD"]
	for _, t := range PassengerTypes {
		if t.Seat {
			seats += counts[t.Code]
		}
	}
	switch {
	case seats == 0:
		return ParamErrorf(ECodeInvalidParameter, "passengers", "an infant travels on an adult's lap: give an adult too")
	case seats > MaxSeatsPerBooking:
		return ParamErrorf(ECodeInvalidParameter, "passengers", "at most %d passengers with a seat, got %d", MaxSeatsPerBooking, seats)
	case adults == 0:
		return ParamErrorf(ECodeInvalidParameter, "passengers", "children and infants travel with an adult (ADT, YTH or YCD)")
	case counts["INF"] > adults:
		return ParamErrorf(ECodeInvalidParameter, "passengers", "each infant travels on an adult's lap: %d infants, %d adults", counts["INF"], adults)
	}
	if s.Currency != "" {
		c, err := CurrencyOf("currency", s.Currency)
		if err != nil {
			return err
		}
		s.Currency = c.Code
	}
	return nil
}

// Counts counts the search's passengers by type; ECodeInvalidParameter for an unknown type or a
// repeated id.
func (s *OfferSearch) Counts() (PassengerCounts, error) {
	counts, ids := PassengerCounts{}, map[int]bool{}
	for _, p := range s.Passengers {
		t, err := PassengerTypeOf("passengers.type", p.Type)
		if err != nil {
			return nil, err
		}
		if ids[p.ID] {
			return nil, ParamErrorf(ECodeInvalidParameter, "passengers.id", "passenger id %d is given twice", p.ID)
		}
		ids[p.ID] = true
		counts[t.Code]++
	}
	return counts, nil
}

// Seats is the number of seats the passengers need.
func (c PassengerCounts) Seats() int {
	n := 0
	for _, t := range PassengerTypes {
		if t.Seat {
			n += c[t.Code]
		}
	}
	return n
}

// CabinsOrAll returns the cabins asked for, every cabin when none is.
func (s *OfferSearch) CabinsOrAll() []CabinClass {
	if len(s.Cabins) == 0 {
		return []CabinClass{CabinEconomy, CabinPremium, CabinBusiness, CabinFirst}
	}
	return s.Cabins
}

// Offer is a priced, bookable itinerary of one bound in one cabin and fare family, valid until
// ExpiresAt. Its ID carries everything needed to price it again (travel.Service.Offer).
type Offer struct {
	ID       string
	Bound    Bound
	Cabin    CabinClass
	Family   *FareFamily
	Segments []*OfferSegment
	Price    *Price
	// SeatsLeft is the fewest seats left in the cabin on any segment, at most 9.
	SeatsLeft int
	QuotedAt  time.Time
	ExpiresAt time.Time
}

// Departure is the scheduled departure of the offer's first segment.
func (o *Offer) Departure() time.Time { return o.Segments[0].Flight.DepartureUTC }

// Arrival is the scheduled arrival of the offer's last segment.
func (o *Offer) Arrival() time.Time { return o.Segments[len(o.Segments)-1].Flight.ArrivalUTC }

// Duration is the whole journey, connections included, in ISO 8601.
func (o *Offer) Duration() string { return ISODuration(o.Arrival().Sub(o.Departure())) }

// DisplayPrice is the price displayPriceContent asks for: "ALL_PAX" all passengers' (Total),
// "ALL_PAX_ROUNDED" that rounded up to a whole unit of the currency, and "" one adult's (the
// first passenger type's when no ADT travels).
func (o *Offer) DisplayPrice(content string) Money {
	switch content {
	case "ALL_PAX":
		return o.Price.Total
	case "ALL_PAX_ROUNDED":
		unit := int64(1)
		for range currencies[o.Price.Total.Currency].Digits {
			unit *= 10
		}
		t := o.Price.Total
		t.Minor = (t.Minor + unit - 1) / unit * unit
		return t
	}
	for _, p := range o.Price.Passengers {
		if p.Type == "ADT" {
			return p.Total
		}
	}
	return o.Price.Passengers[0].Total
}

// OfferSegment is one flight of an offer, in the offer's cabin.
type OfferSegment struct {
	Flight *Flight
	// OriginCity and DestinationCity are the city codes of the flight's ends.
	OriginCity, DestinationCity string
	Legs                        []*FlightLeg
	DistanceKm                  int
	// SeatsLeft is the fewest seats left in the cabin on any of the flight's legs.
	SeatsLeft int
	// ConnectionMinutes is the time on the ground before the next segment; 0 for the last.
	ConnectionMinutes int
}

// Price is an offer's price for all its passengers: Total is the sum, over Passengers, of each
// type's Total times its Count, and each type's Total is its Base plus its Taxes.
type Price struct {
	Total      Money
	Passengers []*PassengerPrice
}

// PassengerPrice is the price of one passenger of a type, and how many of them travel.
type PassengerPrice struct {
	Type  string
	Count int
	Base  Money
	Taxes []*PriceLine
	// TaxTotal is the sum of Taxes; Total is Base plus TaxTotal.
	TaxTotal Money
	Total    Money
}

// PriceLine is one named tax, charge or surcharge.
type PriceLine struct {
	Code   string // e.g. "FR" (a country's tax), "PSC" (passenger service charge), "YQ"
	Name   string
	Amount Money
}

// CalendarType is how a lowest-fare calendar groups its days.
type CalendarType string

const (
	CalendarDay     CalendarType = "DAY"
	CalendarMonth   CalendarType = "MONTH"
	CalendarOverall CalendarType = "OVERALL"
)

// MaxCalendarDays bounds a calendar's interval: the original's default is a year ahead.
const MaxCalendarDays = 366

// LowestFare is the cheapest offer of a day, a month or a whole interval of a calendar.
type LowestFare struct {
	// Period is the day (2026-11-23), the month (2026-11) or the interval (2026-11-23/2026-12-22).
	Period string
	// Offer is the cheapest offer of the period, the first in the order of a search among
	// equals; nil when nothing is sold then.
	Offer *Offer
}

// ParseDateInterval reads "YYYY-MM-DD/YYYY-MM-DD" (both days included) into its days; "" is
// today to today + 360. An interval that ends before it starts, or is longer than
// MaxCalendarDays, is ECodeInvalidParameter; a malformed one ECodeBadFormat.
func ParseDateInterval(s string, today time.Time) ([]string, error) {
	from, to := today, today.AddDate(0, 0, 360)
	if s != "" {
		a, b, ok := strings.Cut(s, "/")
		if !ok {
			return nil, ParamErrorf(ECodeBadFormat, "dateInterval", "dateInterval is YYYY-MM-DD/YYYY-MM-DD, got %q", Clip(s))
		}
		var err error
		if from, err = ParseDate("dateInterval", a); err != nil {
			return nil, err
		}
		if to, err = ParseDate("dateInterval", b); err != nil {
			return nil, err
		}
	}
	n := int(to.Sub(from).Hours()/24) + 1
	if n < 1 || n > MaxCalendarDays {
		return nil, ParamErrorf(ECodeInvalidParameter, "dateInterval", "dateInterval covers 1 to %d days, from its first to its last", MaxCalendarDays)
	}
	days := make([]string, n)
	for i := range days {
		days[i] = from.AddDate(0, 0, i).Format(DateLayout)
	}
	return days, nil
}
